//! Laws on modes the inputs move through the mechanism: the sprung four-bar
//! (`fixtures/sprung-four-bar.toml`: range stops and a coordinate limit on the rocker's hinge, a
//! one-sided damped spring, a soft contact, all on dependent modes), the NLP's Jacobian against
//! central differences of its constraints.

use std::path::Path;

use mollier::compile::load;
use mollier_ipopt::Nlp;
use mollier_ocp::{Actuator, Objective, Problem, Scheme, Tracking, Transcription};
use mollier_sim::Musculoskeletal;

#[path = "fixtures/problem.rs"]
mod problem;
use problem::open;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

#[path = "support/hessian_check.rs"]
mod hessian_check;
use hessian_check::random_point;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// An actuator on the crank, effort, a tracking of the crank and final targets.
fn problem<'s, 'm>(system: &'s Musculoskeletal<'m>, scheme: Scheme) -> Problem<'s, 'm> {
    let objective = Objective {
        actuator: 1.3,
        tracking: vec![Tracking { state: 0, weight: 2.0, reference: vec![(0.0, 0.1), (0.9, 0.4)] }],
        final_targets: vec![(0, -0.2, 4.0), (1, 0.3, 5.0)],
        ..Objective::default()
    };
    Problem {
        actuators: vec![Actuator { name: "motor".into(), coordinate: 0, optimal_force: 3.0, bounds: [-9.0, 9.0] }],
        ..open(system, 0.9, 2, scheme, objective)
    }
}

/// The NLP's Jacobian on the sprung four-bar at random points (rates too: the damping of the
/// rocker's hinge, a constraint element, through `D²F_e(v, e_k)`) against central differences of
/// the constraints, relative to the larger of the row's largest entry and 1: 1e-6.
#[test]
fn the_jacobian_is_exact_with_damped_laws_on_dependent_modes() {
    let c = load(Path::new(&format!("{FIXTURES}/sprung-four-bar.toml")), &mollier::registry()).expect("loads");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut rng = Rng(0x1a2b_5eed_4f0b_0012);
    let p = problem(&system, Scheme::Trapezoidal);
    let mut t = Transcription::new(&p).unwrap();
    let (n, m) = (t.n(), t.m());
    for _ in 0..4 {
        let z = random_point(&t, &mut rng, &[0.0, 0.0], &[0.3, 1.0]);
        let pattern = t.jacobian_structure();
        let mut values = vec![0.0; pattern.len()];
        assert!(t.jacobian(&z, &mut values));
        let mut dense = vec![0.0; n * m];
        let mut scale = vec![1.0f64; m];
        for (&(i, j), v) in pattern.iter().zip(&values) {
            dense[i * n + j] += v;
            scale[i] = scale[i].max(v.abs());
        }
        let (mut gp, mut gm, mut zp) = (vec![0.0; m], vec![0.0; m], z.clone());
        let mut worst = (0.0f64, (0, 0));
        for j in 0..n {
            let h = 1e-6 * z[j].abs().max(1.0);
            zp[j] = z[j] + h;
            assert!(t.constraints(&zp, &mut gp));
            zp[j] = z[j] - h;
            assert!(t.constraints(&zp, &mut gm));
            zp[j] = z[j];
            for i in 0..m {
                let e = ((gp[i] - gm[i]) / (2.0 * h) - dense[i * n + j]).abs() / scale[i];
                if !(e <= worst.0) {
                    worst = (e, (i, j));
                }
            }
        }
        println!("Jacobian off by {:.2e} at {:?}", worst.0, worst.1);
        assert!(worst.0 < 1e-6, "Jacobian off by {:.2e} (relative) at {:?}", worst.0, worst.1);
    }
}
