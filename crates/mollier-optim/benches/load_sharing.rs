//! One full load-sharing frame (positions by Newton-Raphson, kinetostatics and its influence,
//! the conic program, the independent check) on a synthetic model: a 5-DOF chain of bodies with
//! masses and inertia under gravity, 48 attachment points and 100 muscle trusses crossing one or
//! two joints, a reserve per input, and a joint cone; also the maximum isometric moment. Run with
//! `cargo bench -p mollier-optim --bench load_sharing`.

use divan::Bencher;
use mollier_optim::{Criterion, LoadSharing, RunOptions};

#[path = "../tests/load_sharing/synthetic.rs"]
mod synthetic;
use synthetic::{frames, study, synthetic};

fn main() {
    divan::main();
}

/// One frame at a time on one core, stepping through a motion.
fn bench_frames(bencher: Bencher, criterion: Criterion, enforce: bool) {
    let s = synthetic();
    let sharing = LoadSharing::new(&s.model, study(&s, criterion, enforce)).unwrap();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut ws = sharing.workspace();
    let mut k = 0;
    bencher.bench_local(|| {
        let r = sharing.frame(&mut ws, &mut data, &motion[k % motion.len()]);
        assert!(r.status.is_success(), "{}", r.status);
        k += 1;
    });
}

/// Criterion (c), cone reported.
#[divan::bench]
fn frame_activations(bencher: Bencher) {
    bench_frames(bencher, Criterion::Activations, false);
}

/// Criterion (c), cone imposed (one second-order cone more).
#[divan::bench]
fn frame_activations_cone(bencher: Bencher) {
    bench_frames(bencher, Criterion::Activations, true);
}

/// Criterion (d): two programs per frame.
#[divan::bench]
fn frame_max_stress(bencher: Bencher) {
    bench_frames(bencher, Criterion::MaxStress, false);
}

/// Criterion (cb), Σ (F/PCSA)³: one power cone per muscle.
#[divan::bench]
fn frame_cubed_stresses(bencher: Bencher) {
    bench_frames(bencher, Criterion::CubedStresses, false);
}

/// One maximum isometric moment (both stages) about the first joint, the other joints
/// balanced, cone imposed, at the motion's postures (with the positions, as a frame above).
#[divan::bench]
fn max_moment(bencher: Bencher) {
    let s = synthetic();
    let mut st = study(&s, Criterion::Stresses, true);
    st.reserves.clear();
    let dirs = vec![mollier_optim::Direction { input: 0, positive: "up".into(), negative: "down".into() }];
    let mm = mollier_optim::MaxMoment::new(&s.model, st, dirs, &[]).unwrap();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut ws = mm.workspace();
    let mut k = 0;
    bencher.bench_local(|| {
        mollier_core::solve_positions(&s.model, &mut data, &motion[k % motion.len()].q).unwrap();
        let r = mm.solve(&mut ws, &mut data, 0, k % 2 == 0, &[]);
        assert!(r.frame.status.is_success(), "{}", r.frame.status);
        k += 1;
    });
}

/// Positions only, for reference: the kinematics part of a frame.
#[divan::bench]
fn positions_only(bencher: Bencher) {
    let s = synthetic();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut k = 0;
    bencher.bench_local(|| {
        mollier_core::solve_positions(&s.model, &mut data, &motion[k % motion.len()].q).unwrap();
        k += 1;
    });
}

/// 200 frames through `run` on all cores (2 here), per call; each chunk from the initial
/// configuration (`follow` would add a sequential pass of the positions).
#[divan::bench(sample_count = 10)]
fn run_200_frames_parallel(bencher: Bencher) {
    let s = synthetic();
    let sharing = LoadSharing::new(&s.model, study(&s, Criterion::Activations, true)).unwrap();
    let motion = frames(s.model.n_q(), 200);
    bencher.bench_local(|| sharing.run(&motion, RunOptions { follow: false, ..RunOptions::default() }));
}
