//! Forward simulation of conservative mechanisms: energy is conserved.

use mollier_core::Data;
use mollier_core::dynamics::simulate;
use mollier_tests::{Link, serial_chain, spatial_links};

#[test]
fn double_pendulum_conserves_energy() {
    let diag = |a: f64| [[a, 0.0, 0.0], [0.0, a, 0.0], [0.0, 0.0, a]];
    let links = [
        Link { axis: [0.0, 0.0, 1.0], joint: [0.0; 3], com: [0.0, -0.5, 0.0], mass: 1.0, inertia: diag(0.02) },
        Link { axis: [0.0, 0.0, 1.0], joint: [0.0, -0.5, 0.0], com: [0.0, -1.0, 0.0], mass: 1.0, inertia: diag(0.02) },
    ];
    let (model, _) = serial_chain(&links, [0.0, -9.81, 0.0]);
    let mut data = Data::new(&model);
    // released from rest at large angles: a chaotic motion
    let traj = simulate(&model, &mut data, &[1.6, -0.4], &[0.0, 0.0], 1e-3, 1000, &|_, _, _| vec![0.0; 2]).unwrap();
    let e0 = traj.energy[0];
    let drift = traj.energy_drift().unwrap();
    assert!(drift < 1e-7 * e0.abs().max(1.0), "energy drift {drift} J of {e0} J over 1 s");
    // the motion really happened
    assert!(traj.q.last().unwrap()[0] < 1.0);
}

#[test]
fn spatial_chain_conserves_energy() {
    let links = spatial_links(3);
    let (model, _) = serial_chain(&links, [0.0, -9.81, 0.0]);
    let mut data = Data::new(&model);
    let traj =
        simulate(&model, &mut data, &[0.3, -0.5, 0.8], &[1.0, 0.5, -2.0], 1e-3, 500, &|_, _, _| vec![0.0; 3]).unwrap();
    let drift = traj.energy_drift().unwrap();
    assert!(drift < 1e-7 * traj.energy[0].abs().max(1.0), "energy drift {drift} J");
}
