//! One inverse-dynamics frame for each mechanism in `models/mechanisms/` and for Huston's
//! 17-member body (`models/body/`, its seated lift): positions by
//! Newton-Raphson from the previous frame, then kinetostatics (driving forces, reactions, law
//! stresses) — what `mollier inverse-dynamics` does per frame. A kinematics frame (positions and
//! first-order transfer functions, as `mollier kinematics` does) is timed alongside for scale.
//!
//! The iterations walk forth and back over frames 10 to 30 of the mechanism's own motion file,
//! each from its neighbour, so every iteration really solves. Run with
//! `cargo bench -p mollier --bench inverse_dynamics`.

use std::path::{Path, PathBuf};

use divan::Bencher;
use mollier::{Compiled, InverseDynamicsRun, KinematicsRun, MotionDerivatives, Smoothing};

fn main() {
    divan::main();
}

const MECHANISMS: [&str; 6] = ["four-bar", "slider-crank", "spherical-joint", "rssr", "pendulum", "double-pendulum"];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms")
}

/// The compiled mechanism and its motion, differentiated.
fn load(name: &str) -> (Compiled, MotionDerivatives) {
    let motion = ["csv", "mot"]
        .iter()
        .map(|ext| dir().join(format!("{name}-motion.{ext}")))
        .find(|p| p.exists())
        .unwrap_or_else(|| panic!("no motion file for {name}"));
    load_files(&dir().join(format!("{name}.toml")), &motion)
}

/// A compiled model file and a motion file for it, differentiated.
fn load_files(model: &Path, motion: &Path) -> (Compiled, MotionDerivatives) {
    let registry = mollier::registry();
    let c = mollier::load(model, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let m = mollier::read_motion(motion, &c.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
    let d = m.differentiate(Smoothing::Interpolate).expect("differentiable");
    (c, d)
}

/// The frames the iterations walk over, forth and back (alternating between two frames would let
/// the third-order predictor, which fits the solution before the last, land on the stored one).
const FRAMES: std::ops::RangeInclusive<usize> = 10..=30;

/// The `k`-th frame of the walk over [`FRAMES`].
fn frame(k: usize) -> usize {
    let n = FRAMES.end() - FRAMES.start() + 1;
    let i = k % (2 * (n - 1));
    FRAMES.start() + if i < n { i } else { 2 * (n - 1) - i }
}

#[divan::bench(args = MECHANISMS)]
fn inverse_dynamics_frame(bencher: Bencher, name: &str) {
    let (c, m) = load(name);
    inverse_dynamics_frames(bencher, &c, &m);
}

/// Huston's 17-member body holding 10 kg (`models/body/huston17-lift.toml`, 54 inputs): a frame
/// of its seated lift. `tools/peer_pinocchio.py --body` times Pinocchio's RNEA on the same tree.
#[divan::bench]
fn body_inverse_dynamics_frame(bencher: Bencher) {
    let body = dir().join("../body");
    let (c, m) = load_files(&body.join("huston17-lift.toml"), &body.join("seated-lift-motion.csv"));
    inverse_dynamics_frames(bencher, &c, &m);
}

/// Walk forth and back over frames of the motion, solving each.
fn inverse_dynamics_frames(bencher: Bencher, c: &Compiled, m: &MotionDerivatives) {
    let mut run = InverseDynamicsRun::new(c);
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        let i = frame(k);
        run.solve(&m.q[i], &m.qd[i], &m.qdd[i]).expect("solves").driving[0]
    });
}

#[divan::bench(args = MECHANISMS)]
fn kinematics_frame(bencher: Bencher, name: &str) {
    let (c, m) = load(name);
    let mut run = KinematicsRun::new(&c);
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        run.solve(&m.q[frame(k)]).expect("solves")
    });
}
