//! The second-order transfer functions a kinematic run writes (`mollier kinematics
//! --second-order`), against central differences of the first-order ones, for every mechanism
//! with free modes, at frames of its motion file.

use std::path::PathBuf;

use mollier::KinematicsRun;

fn mechanism(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms").join(name)
}

const CASES: [(&str, &str); 6] = [
    ("four-bar.toml", "four-bar-motion.csv"),
    ("slider-crank.toml", "slider-crank-motion.csv"),
    ("spherical-joint.toml", "spherical-joint-motion.mot"),
    ("rssr.toml", "rssr-motion.csv"),
    ("double-pendulum.toml", "double-pendulum-motion.mot"),
    ("wrapping.toml", "wrapping-motion.csv"),
];

#[test]
fn second_order_transfer_functions_are_the_derivatives_of_the_first_order_ones() {
    let registry = mollier::registry();
    let (mut checked, mut mixed) = (0, 0);
    for (model, motion) in CASES {
        let c = mollier::load(&mechanism(model), &registry).unwrap_or_else(|d| panic!("{}", d.render()));
        let m = mollier::read_motion(&mechanism(motion), &c.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
        let n_q = c.inputs.len();
        let mut run = KinematicsRun::new(&c).with_second_order();
        let header = run.second_order_header();
        let n_modes = run.transfer_header().len() / n_q;
        assert_eq!(header.len(), n_modes * n_q * (n_q + 1) / 2, "{model}");
        // a run without the option writes no such columns
        assert!(KinematicsRun::new(&c).second_order_header().is_empty());
        for q in m.q.iter().step_by((m.q.len() / 3).max(1)) {
            let f = run.solve(q).unwrap_or_else(|e| panic!("{model}: {e}"));
            assert_eq!(f.second_order.len(), header.len());
            for j in 0..n_q {
                // DF at q ± h e_j, from the same frame's configuration (a fresh run each side)
                let h = 1e-5;
                let side = |s: f64| {
                    let mut qs = q.to_vec();
                    qs[j] += s * h;
                    let mut r = KinematicsRun::new(&c);
                    r.solve(q).expect("the frame");
                    r.solve(&qs).expect("the frame moved by h").transfer
                };
                let (plus, minus) = (side(1.0), side(-1.0));
                for mode in 0..n_modes {
                    for i in 0..n_q {
                        let fd = (plus[mode * n_q + i] - minus[mode * n_q + i]) / (2.0 * h);
                        let p = mollier_core::pair_index(i, j, n_q);
                        let column = mode * n_q * (n_q + 1) / 2 + p;
                        let d2 = f.second_order[column];
                        assert!(
                            (d2 - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                            "{model}: {}: {d2} against central differences {fd}",
                            header[column]
                        );
                        let (a, b) = (&c.inputs[i.min(j)].name, &c.inputs[i.max(j)].name);
                        assert!(header[column].ends_with(&format!("/{a}/{b}")), "{}", header[column]);
                        checked += 1;
                        mixed += usize::from(i != j && fd.abs() > 1e-3);
                    }
                }
            }
        }
    }
    assert!(checked >= 50, "{checked} entries checked");
    assert!(mixed >= 1, "no nonzero mixed derivative checked");
}
