//! A warm frame of `InverseDynamicsRun` (what `mollier inverse-dynamics` and the Python API call
//! per frame) allocates nothing: positions, kinetostatics, driving forces, reactions and law
//! stresses into the run's own storage.

use std::path::PathBuf;

use mollier::{InverseDynamicsRun, Smoothing};
use mollier_tests::counting::allocations;

fn mechanism(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../models/mechanisms/{name}"))
}

#[test]
fn a_warm_inverse_dynamics_frame_allocates_nothing() {
    assert_eq!(allocations(|| drop(std::hint::black_box(vec![1.0f64; 3]))), 1, "the counter counts");
    for name in ["pendulum", "four-bar", "slider-crank"] {
        let registry = mollier::registry();
        let c =
            mollier::load(&mechanism(&format!("{name}.toml")), &registry).unwrap_or_else(|d| panic!("{}", d.render()));
        let m = mollier::read_motion(&mechanism(&format!("{name}-motion.csv")), &c.inputs)
            .unwrap_or_else(|d| panic!("{}", d.render()));
        let d = m.differentiate(Smoothing::Interpolate).expect("differentiable");
        let mut run = InverseDynamicsRun::new(&c);
        for i in 10..13 {
            run.solve(&d.q[i], &d.qd[i], &d.qdd[i]).expect("solves");
        }
        let mut driving = f64::NAN;
        let n = allocations(|| driving = run.solve(&d.q[13], &d.qd[13], &d.qdd[13]).expect("solves").driving[0]);
        assert_eq!(n, 0, "{name}: allocations in a warm frame");
        assert!(driving.is_finite() && (name != "pendulum" || driving != 0.0), "{name}: {driving}");
    }
}
