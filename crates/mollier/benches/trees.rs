//! The kernel on trees: a posture of Huston's 17-member body (`models/body/huston17.toml`, 54
//! inputs, 204 unknowns) and of OpenSim's gait2392 (imported from `gait2392_thelen2003muscle.osim`
//! of OpenSim's model collection, `$MOLLIER_OPENSIM_MODELS` or else `.cache/opensim-models`, which
//! `tools/fetch-opensim-models` fills; skipped, saying so, when absent): positions by Newton-Raphson
//! from the previous posture, then `DF` of every mode (`transfer::first_order`: each muscle's
//! length and its moment arms about every input) — what `mollier kinematics` does per frame.
//! `tree = true` takes the model's tree path (`Model::tree_path`), `false` the general solve.
//! The iterations alternate between two postures 0.01 apart (rad, or m for translations), off
//! the model's initial one, as `tests/examples/chain_timing.rs` does for Pinocchio's
//! comparison. And one inverse-dynamics frame of Huston's body (positions, kinetostatics,
//! driving torques) by both paths. Run with `cargo bench -p mollier --bench trees`.
//! `MOLLIER_TREES_PATH=tree` (or `general`) runs one path alone (divan cannot filter by its
//! arguments), so that a callgrind count is the one path's.

use std::path::{Path, PathBuf};

use divan::Bencher;
use mollier_core::dynamics::{Kinetostatics, driving_into, kinetostatics_into, law_stresses_into};
use mollier_core::transfer::first_order;
use mollier_core::{Data, solve_positions};

fn main() {
    divan::main();
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Whether `MOLLIER_TREES_PATH` (`tree` or `general`) leaves out the path `tree` names.
fn skipped(tree: bool) -> bool {
    std::env::var("MOLLIER_TREES_PATH").is_ok_and(|p| p != if tree { "tree" } else { "general" })
}

/// Positions and `DF` of the model in `file`, alternating between two postures.
fn posture(bencher: Bencher, file: &Path, tree: bool) {
    if skipped(tree) {
        return;
    }
    if !file.is_file() {
        eprintln!("SKIPPED: {} is absent (run tools/fetch-opensim-models)", file.display());
        return;
    }
    let registry = mollier::registry();
    let c = mollier::load(file, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = &c.model;
    let q0 = model.q0();
    // 0.1 rad (or m) at most off the initial posture, every input differently
    let q: Vec<f64> = q0.iter().enumerate().map(|(j, v)| v + 0.1 * (0.7 * j as f64 + 0.3).sin()).collect();
    let qs = [q.clone(), q.iter().map(|v| v + 0.01).collect::<Vec<f64>>()];
    let mut data = Data::new(model);
    data.set_tree_path(tree);
    for k in 1..=10 {
        let qk: Vec<f64> = q0.iter().zip(&q).map(|(a, b)| a + (b - a) * k as f64 / 10.0).collect();
        solve_positions(model, &mut data, &qk).expect("the posture solves");
    }
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        solve_positions(model, &mut data, &qs[k % 2]).expect("the posture solves");
        first_order(model, &mut data).expect("DF");
    });
}

/// One inverse-dynamics frame of the model in `file` (positions, then kinetostatics: on the tree
/// path velocities and accelerations outward by the recursion and the forces inward over
/// `D_cc`'s blocks, no factorization; on the general path the solves with its factors), as
/// `tests/examples/chain_timing.rs` times it beside Pinocchio's `rnea`.
fn frame(bencher: Bencher, file: &Path, tree: bool) {
    if skipped(tree) {
        return;
    }
    let registry = mollier::registry();
    let c = mollier::load(file, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = &c.model;
    let n = model.n_q();
    let wave = |a: f64, w: f64, p: f64| (0..n).map(|j| a * (w * j as f64 + p).sin()).collect::<Vec<f64>>();
    let (qd, qdd) = (wave(1.5, 0.61, 1.1), wave(3.0, 1.27, -0.4));
    let q: Vec<f64> = model.q0().iter().zip(wave(0.4, 0.83, 0.3)).map(|(a, b)| a + b).collect();
    let qs = [q.clone(), q.iter().map(|v| v + 0.01).collect::<Vec<f64>>()];
    let mut data = Data::new(model);
    data.set_tree_path(tree);
    for k in 1..=10 {
        let qk: Vec<f64> = model.q0().iter().zip(&q).map(|(a, b)| a + (b - a) * k as f64 / 10.0).collect();
        solve_positions(model, &mut data, &qk).expect("the posture solves");
    }
    let mut out = Kinetostatics::default();
    let (mut law, mut tau) = (Vec::new(), Vec::new());
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        solve_positions(model, &mut data, &qs[k % 2]).expect("the posture solves");
        kinetostatics_into(model, &mut data, &qd, &qdd, None, &[], &mut out).expect("kinetostatics");
        law_stresses_into(model, &data, &mut law);
        tau.clear();
        driving_into(model, &out, &law, &mut tau);
    });
}

#[divan::bench(args = [true, false])]
fn huston17_inverse_dynamics_frame(bencher: Bencher, tree: bool) {
    frame(bencher, &root().join("models/body/huston17.toml"), tree);
}

#[divan::bench(args = [true, false])]
fn huston17_positions_and_df(bencher: Bencher, tree: bool) {
    posture(bencher, &root().join("models/body/huston17.toml"), tree);
}

#[divan::bench(args = [true, false])]
fn gait2392_lengths_and_moment_arms(bencher: Bencher, tree: bool) {
    posture(bencher, &mollier_core::shared_data::opensim_models().join("gait2392_thelen2003muscle.osim"), tree);
}
