//! Forward dynamics with Hill muscles: one Rosenbrock step (Chadwick et al. 2014, eq. 8) — the kernel's
//! positions and first- and second-order transfer functions, the muscles' residuals and partials,
//! and the step's linear solve. Each iteration alternates between two consecutive states of a
//! simulation, so that positions are really solved. Run with
//! `cargo bench -p mollier --bench forward`.

use std::path::PathBuf;

use divan::Bencher;
use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun};
use mollier_sim::{Musculoskeletal, State};

fn main() {
    divan::main();
}

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

fn load(path: &str) -> Compiled {
    mollier::load(&models().join(path), &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()))
}

/// Bench a 4 ms step from the states after `warm` to `warm + 20` steps, walking forth and back
/// over them (alternating between two would let the kernel's third-order predictor, which fits
/// the solution before the last, land on the stored one). `threads`: for the work per muscle
/// path (`Data::set_threads`; 1 the default, the serial code).
fn bench_step(bencher: Bencher, c: &Compiled, ex: Excitations, warm: usize, threads: usize) {
    let mut run = ForwardRun::new(c, ex.clone(), ForwardOptions::fixed(0.004)).expect("a rest state");
    for _ in 0..warm {
        run.advance().expect("a step");
    }
    let mut states: Vec<State> = vec![run.state().clone()];
    for _ in 0..20 {
        run.advance().expect("a step");
        states.push(run.state().clone());
    }
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    // the fixed step's Jacobian, as `ForwardRun` forms it (without the velocity forces' third order)
    let mut ws = sys.forward_workspace();
    ws.data.set_threads(threads);
    let u = |t: f64, u: &mut [f64]| ex.at(t, u);
    let n = states.len();
    let mut k = 0usize;
    bencher.bench_local(|| {
        k += 1;
        let i = k % (2 * (n - 1));
        let s = &states[if i < n { i } else { 2 * (n - 1) - i }];
        sys.rosenbrock_step(&mut ws, s, 0.004, &u).expect("a step")
    });
}

/// The elbow (1 coordinate, 2 muscles), 0.2 s into its motion: the biceps active, the elbow moving.
#[divan::bench]
fn elbow_step(bencher: Bencher) {
    let c = load("forward/elbow.toml");
    let ex = Excitations::read(&models().join("forward/elbow-excitations.csv"), &c).expect("excitations");
    bench_step(bencher, &c, ex, 50, 1);
}

/// The shoulder (9 coordinates, 95 muscles on wrapping paths, soft scapulothoracic contact),
/// 0.1 s after release from rest with the muscles inactive: the girdle settling under gravity.
/// On one thread (the default, the serial code): the figure to set against single-threaded peers.
#[divan::bench]
fn shoulder_step(bencher: Bencher) {
    let c = load("shoulder/shoulder-forward.toml");
    let ex = Excitations::zero(&c);
    bench_step(bencher, &c, ex, 25, 1);
}

/// [`shoulder_step`] with the work per muscle path on two threads (`--threads 2`).
#[divan::bench]
fn shoulder_two_threads_step(bencher: Bencher) {
    let c = load("shoulder/shoulder-forward.toml");
    let ex = Excitations::zero(&c);
    bench_step(bencher, &c, ex, 25, 2);
}
