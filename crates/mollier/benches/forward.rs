//! Forward dynamics with Hill muscles: one Rosenbrock step (seed 002, eq. 8) of the models in
//! `models/forward/`, from a state inside their excitation file's motion — the kernel's positions
//! and first- and second-order transfer functions, the muscles' residuals and partials, and the
//! step's linear solve. Run with `cargo bench -p mollier --bench forward`.

use std::path::PathBuf;

use divan::Bencher;
use mollier::{Excitations, ForwardRun};

fn main() {
    divan::main();
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/forward")
}

/// One 4 ms step of the elbow (1 coordinate, 2 muscles), 0.2 s into its motion, where the
/// biceps is active and the elbow moving.
#[divan::bench]
fn elbow_step(bencher: Bencher) {
    let c = mollier::load(&dir().join("elbow.toml"), &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let ex = Excitations::read(&dir().join("elbow-excitations.csv"), &c).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = ForwardRun::new(&c, ex, 0.004).expect("a rest state");
    for _ in 0..50 {
        run.advance().expect("a step");
    }
    bencher.bench_local(|| run.advance().expect("a step"));
}
