//! The shoulder abduction study (models/shoulder/abduction.toml): its kinematics pass over the
//! 37 frames (positions, transfer functions and the finite differences of the independent
//! checks), one load-sharing variant over the motion (criterion b with the glenoid cone), and
//! the whole study (kinematics and the 8 variants at margin 1, on rayon's threads: the figures
//! of docs/performance.md were taken before the study swept margins). Run with
//! `cargo bench -p mollier-study --bench abduction`; figures in docs/performance.md.

use std::path::Path;

use divan::Bencher;
use mollier_optim::Criterion;
use mollier_study::{Study, Variant};

fn main() {
    divan::main();
}

fn study() -> Study {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder/abduction.toml");
    let s = Study::load(&path).expect("the abduction study loads");
    // the 8 variants of the measurements: criteria a-d with the cone at margin 1 and without
    let mut spec = s.spec;
    spec.optimisation.margins = Some(vec![1.0]);
    Study::with_model(&path, spec, s.compiled).expect("the abduction study at margin 1")
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn kinematics_37_frames(bencher: Bencher) {
    let s = study();
    bencher.bench(|| s.kinematics());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn variant_b_glenoid_37_frames(bencher: Bencher) {
    let s = study();
    let v = Variant::new(Criterion::Stresses, true);
    bencher.bench(|| s.run_variant(&v));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn whole_study(bencher: Bencher) {
    let s = study();
    bencher.bench(|| s.run());
}

/// Twenty-one postures 0.25° of elevation apart, consecutive frames of a 721-frame abduction:
/// frame 18 of the study's rhythm (elevation 90°) to frame 19 in twentieths.
fn postures(s: &Study) -> Vec<Vec<f64>> {
    let (a, b) = (&s.motion.frames[18].q, &s.motion.frames[19].q);
    (0..=20).map(|j| a.iter().zip(b).map(|(x, y)| x + (y - x) * j as f64 / 20.0).collect()).collect()
}

/// The `k`-th frame of a walk forth and back over `n` postures: every iteration moves on by one
/// step as a recorded motion does (alternating between two postures would let the kernel's
/// third-order predictor, which fits the solution before the last, land on the stored one).
fn walk(k: usize, n: usize) -> usize {
    let i = k % (2 * (n - 1));
    if i < n { i } else { 2 * (n - 1) - i }
}

/// What `mollier kinematics` does per frame on the shoulder (`KinematicsRun::solve`): positions
/// by Newton-Raphson from the previous frame, the first-order transfer functions of every mode
/// (the muscles' moment arms), and the frame's output rows. Walks forth and back over
/// neighbouring postures, so every iteration solves.
#[divan::bench]
fn posture_positions_and_moment_arms(bencher: Bencher) {
    let s = study();
    let qs = postures(&s);
    let mut run = mollier::KinematicsRun::new(&s.compiled);
    run.solve(&qs[0]).expect("solves");
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        run.solve(&qs[walk(k, qs.len())]).expect("solves")
    });
}

/// What `mollier inverse --criterion b --static` does per frame on the shoulder
/// (`LoadSharing::frame`): positions from the previous frame, kinetostatics and the maps of the
/// muscle forces, the conic program of criterion (b) with the glenoid cone imposed and the
/// surface contacts' sign rows, and the independent check. Walks forth and back over neighbouring
/// postures with the study's load, so every iteration solves.
#[divan::bench]
fn inverse_frame_b_glenoid(bencher: Bencher) {
    let s = study();
    let qs = postures(&s);
    let sharing =
        mollier_optim::LoadSharing::new(&s.compiled.model, s.optim_study(&Variant::new(Criterion::Stresses, true)))
            .expect("the variant sets up");
    let template = s.frames().swap_remove(18);
    let frames: Vec<_> = qs.into_iter().map(|q| mollier_optim::Frame { q, ..template.clone() }).collect();
    let mut ws = sharing.workspace();
    let mut data = mollier_core::Data::new(&s.compiled.model);
    assert!(sharing.frame(&mut ws, &mut data, &frames[0]).status.is_success(), "the first frame solves");
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        sharing.frame(&mut ws, &mut data, &frames[walk(k, frames.len())])
    });
}
