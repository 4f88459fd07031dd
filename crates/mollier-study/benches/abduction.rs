//! The shoulder abduction study (models/shoulder/abduction.toml): its kinematics pass over the
//! 37 frames (positions, transfer functions and the finite differences of the independent
//! checks), one load-sharing variant over the motion (criterion b with the glenoid cone), and
//! the whole study (kinematics and the 8 variants, on rayon's threads). Run with
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
    Study::load(&path).expect("the abduction study loads")
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn kinematics_37_frames(bencher: Bencher) {
    let s = study();
    bencher.bench(|| s.kinematics());
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn variant_b_glenoid_37_frames(bencher: Bencher) {
    let s = study();
    let v = Variant { criterion: Criterion::Stresses, glenoid: true };
    bencher.bench(|| s.run_variant(&v));
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn whole_study(bencher: Bencher) {
    let s = study();
    bencher.bench(|| s.run());
}
