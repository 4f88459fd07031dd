//! The error-controlled forward integration (Rosenbrock-W ROS2(3), issue 37): the elbow against
//! the Dormand-Prince reference, its order, its dense output, and the fixed step's defect check.

use std::path::Path;

use mollier::forward_tables::{SimulateOptions, SimulateRun};
use mollier::{Compiled, Excitations, ForwardRun, Tolerances};
use mollier_sim::Musculoskeletal;

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn load(file: &str) -> Compiled {
    mollier::load(&root().join("models").join(file), &mollier::registry()).expect("the model compiles")
}

fn excitations(c: &Compiled, file: &str) -> Excitations {
    Excitations::read(&root().join("models").join(file), c).expect("the excitations read")
}

/// The Dormand-Prince reference (rtol 1e-10) of the elbow's excitations every 10 ms to `t_end`.
fn elbow_reference(c: &Compiled, ex: &Excitations, t_end: f64) -> Vec<Vec<f64>> {
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut ws = sys.workspace();
    let mut u = vec![0.0; sys.layout().m];
    ex.at(0.0, &mut u);
    let start = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &u).unwrap();
    let mut out = Vec::new();
    // a little past the end: the outputs' times are sums of 10 ms
    sys.reference(&mut ws, &start, t_end + 0.005, 1e-10, 1e-12, 0.01, &|t, u| ex.at(t, u), &mut |_, x| {
        out.push(x.to_vec())
    })
    .unwrap();
    out.truncate((t_end / 0.01).round() as usize + 1);
    out
}

/// The adaptive run's states every 10 ms to `t_end`, and its accepted steps.
fn elbow_adaptive(c: &Compiled, ex: &Excitations, rtol: f64, t_end: f64) -> (Vec<Vec<f64>>, usize) {
    let tol = Tolerances { rtol, atol: rtol * 1e-2, ..Tolerances::default() };
    let mut run = ForwardRun::adaptive(c, ex.clone(), tol).unwrap();
    let n = (t_end / 0.01).round() as usize;
    let states = (0..=n).map(|k| run.output(k as f64 * 0.01).unwrap().x).collect();
    (states, run.step_stats().unwrap().accepted)
}

fn rms_angle_deg(a: &[Vec<f64>], b: &[Vec<f64>]) -> f64 {
    assert_eq!(a.len(), b.len());
    (a.iter().zip(b).map(|(x, y)| (x[0] - y[0]).powi(2)).sum::<f64>() / a.len() as f64).sqrt().to_degrees()
}

#[test]
fn the_elbows_adaptive_run_agrees_with_the_dormand_prince_reference() {
    let c = load("forward/elbow.toml");
    let ex = excitations(&c, "forward/elbow-excitations.csv");
    let t_end = 0.6;
    let reference = elbow_reference(&c, &ex, t_end);
    let mut errors = Vec::new();
    for rtol in [1e-3, 1e-4, 1e-5] {
        let (states, steps) = elbow_adaptive(&c, &ex, rtol, t_end);
        let e = rms_angle_deg(&states, &reference);
        eprintln!("rtol {rtol:e}: {steps} steps, RMS elbow-angle error {e:.5}°");
        errors.push((e, steps));
    }
    // the error follows the tolerance, and is below the 4 ms fixed step's (0.455°) at the default
    assert!(errors[0].0 < 0.05, "{errors:?}");
    assert!(errors[1].0 < errors[0].0 && errors[2].0 < errors[1].0, "{errors:?}");
    assert!(errors[2].0 < 0.002, "{errors:?}");
}
