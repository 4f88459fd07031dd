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

/// Two postures 0.25° of elevation apart, as consecutive frames of a 721-frame abduction: a
/// twentieth of the way from frame 18 (elevation 90°) towards frame 19 of the study's rhythm.
fn neighbours(s: &Study) -> [Vec<f64>; 2] {
    let (a, b) = (&s.motion.frames[18].q, &s.motion.frames[19].q);
    [a.clone(), a.iter().zip(b).map(|(x, y)| x + (y - x) / 20.0).collect()]
}

/// What `mollier kinematics` does per frame on the shoulder (`KinematicsRun::solve`): positions
/// by Newton-Raphson from the previous frame, the first-order transfer functions of every mode
/// (the muscles' moment arms), and the frame's output rows. Alternates between two neighbouring
/// postures, so every iteration solves.
#[divan::bench]
fn posture_positions_and_moment_arms(bencher: Bencher) {
    let s = study();
    let qs = neighbours(&s);
    let mut run = mollier::KinematicsRun::new(&s.compiled);
    run.solve(&qs[0]).expect("solves");
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        run.solve(&qs[k % 2]).expect("solves")
    });
}

/// What `mollier inverse --criterion b --static` does per frame on the shoulder
/// (`LoadSharing::frame`): positions from the previous frame, kinetostatics and the maps of the
/// muscle forces, the conic program of criterion (b) with the glenoid cone imposed and the
/// surface contacts' sign rows, and the independent check. Alternates between two neighbouring
/// postures with the study's load, so every iteration solves.
#[divan::bench]
fn inverse_frame_b_glenoid(bencher: Bencher) {
    let s = study();
    let qs = neighbours(&s);
    let sharing =
        mollier_optim::LoadSharing::new(&s.compiled.model, s.optim_study(&Variant::new(Criterion::Stresses, true)))
            .expect("the variant sets up");
    let template = s.frames().swap_remove(18);
    let frames = qs.map(|q| mollier_optim::Frame { q, ..template.clone() });
    let mut ws = sharing.workspace();
    let mut data = mollier_core::Data::new(&s.compiled.model);
    assert!(sharing.frame(&mut ws, &mut data, &frames[0]).status.is_success(), "the first frame solves");
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        sharing.frame(&mut ws, &mut data, &frames[k % 2])
    });
}
