//! One evaluation of the exact Hessian of the Lagrangian on the shoulder's predicted flexion
//! (`models/optimal-control/shoulder-flexion-predict.toml`'s transcription: 13 trapezoidal
//! intervals, 14 points, nine rotations and 95 muscles), beside one evaluation of the constraints
//! and of their Jacobian at the same point: the cost of an IPOPT iteration's derivatives.
//!
//! ```sh
//! cargo bench -p mollier --bench optimize_hessian
//! ```
//! The point follows the flexion's target (`models/shoulder/flexion-target.csv`: the rotations
//! and their rates at each point's time), each muscle in isometric equilibrium at excitation 0.2,
//! activations and excitations 0.2; the multipliers are 1 and the objective's factor 1.

use std::path::PathBuf;

use mollier_ipopt::Nlp;
use mollier_ocp::{Objective, Scheme, Transcription};
use mollier_sim::Musculoskeletal;

#[path = "../tests/fixtures/problem.rs"]
mod problem;
use problem::{model, open};

fn main() {
    divan::main();
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The flexion target's rows (time, nine rotations, rates, accelerations).
fn target() -> Vec<Vec<f64>> {
    let text = std::fs::read_to_string(root().join("models/shoulder/flexion-target.csv")).expect("the target reads");
    text.lines()
        .filter(|r| !r.starts_with('#') && !r.starts_with("time"))
        .map(|r| r.split(',').map(|v| v.parse().expect("a number")).collect())
        .collect()
}

/// The shoulder's transcription and the point described at the top, `f` run on them.
fn with_shoulder(f: impl FnOnce(&mut Transcription<'_, '_, '_>, &[f64])) {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let nx = l.len();
    let intervals = 13;
    let p = open(&system, 1.3, intervals, Scheme::Trapezoidal, Objective { excitation: 1.0, ..Objective::default() });
    let mut t = Transcription::new(&p).expect("the problem transcribes");
    let rows = target();
    let mut ws = system.workspace();
    let per = t.n() / t.points();
    let mut z = vec![0.0; t.n()];
    for i in 0..t.points() {
        // the target's rows are 0.01 s apart, the points 0.1 s
        let row = &rows[10 * i];
        let rest = system.rest_state(&mut ws, &row[1..10], 0.0, &vec![0.2; l.m]).expect("a rest state");
        let zi = &mut z[i * per..(i + 1) * per];
        zi[..nx].copy_from_slice(&rest.x);
        zi[l.n..2 * l.n].copy_from_slice(&row[10..19]);
        zi[nx..nx + l.n].copy_from_slice(&row[10..19]);
        zi[nx + l.n..nx + 2 * l.n].copy_from_slice(&row[19..28]);
        zi[2 * nx..].fill(0.2);
    }
    f(&mut t, &z);
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn hessian(bencher: divan::Bencher) {
    with_shoulder(|t, z| {
        let lambda = vec![1.0; t.m()];
        let mut values = vec![0.0; t.hessian_structure().expect("an exact Hessian").len()];
        bencher.bench_local(|| assert!(t.hessian(z, 1.0, &lambda, &mut values)));
    });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn jacobian(bencher: divan::Bencher) {
    with_shoulder(|t, z| {
        let mut values = vec![0.0; t.jacobian_structure().len()];
        bencher.bench_local(|| assert!(t.jacobian(z, &mut values)));
    });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn constraints(bencher: divan::Bencher) {
    with_shoulder(|t, z| {
        let mut g = vec![0.0; t.m()];
        bencher.bench_local(|| assert!(t.constraints(z, &mut g)));
    });
}

/// The shoulder linearized at the flexion target's state at 0.65 s (its muscles in isometric
/// equilibrium at excitation 0.2), `f` run on its model, the workspace's solved data, the rates,
/// accelerations, unit multipliers and the modes of the muscles' paths and of the laws'
/// elements (in `add_chain_hessian`'s order).
fn at_one_point(
    f: impl FnOnce(&mollier_core::Model, &mut mollier_core::Data, &[f64], &[f64], &[f64], &[mollier_core::ModeId], usize),
) {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let row = &target()[65];
    let mut ws = system.workspace();
    let mut x = system.rest_state(&mut ws, &row[1..10], 0.0, &vec![0.2; l.m]).expect("a rest state").x;
    x[l.n..2 * l.n].copy_from_slice(&row[10..19]);
    let mut xd = vec![0.0; l.len()];
    xd[..l.n].copy_from_slice(&row[10..19]);
    xd[l.n..2 * l.n].copy_from_slice(&row[19..28]);
    system.linearize(&mut ws, &x, &xd, &vec![0.2; l.m]).expect("linearizes");
    let model = &c.model;
    let mut modes: Vec<_> = c.muscles.iter().map(|m| m.mode).collect();
    let n_muscles = modes.len();
    for el in (0..model.n_elements()).map(mollier_core::ElementId::new) {
        if model.law(el).is_some() {
            modes.extend((0..model.element(el).layout().n_modes()).map(|k| model.mode_id(el, k)));
        }
    }
    f(model, &mut ws.data, &row[10..19], &row[19..28], &vec![1.0; l.n], &modes, n_muscles);
}

/// At one point: the second partials of the equations of motion's multibody part.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn point_multibody(bencher: divan::Bencher) {
    at_one_point(|model, data, v, vd, mu, _, _| {
        let mut h = faer::Mat::new();
        bencher.bench_local(|| mollier_core::transfer4::equations_of_motion_hessian(model, data, v, vd, mu, &mut h));
    });
}

/// At one point: the muscles' paths' and the laws' modes along every pair of inputs.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn point_paths(bencher: divan::Bencher) {
    at_one_point(|model, data, v, _, mu, modes, n_muscles| {
        let mut parts = Vec::new();
        bencher.bench_local(|| {
            mollier_core::transfer4::mode_parts_with_rates(model, data, mu, v, modes, n_muscles, &mut parts)
        });
    });
}
