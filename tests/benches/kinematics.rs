//! Kinematic analysis benchmarks: a serial chain of N rigid bodies and closed loops.
//!
//! Each iteration moves the inputs one step along a line (forth and back) and solves positions by
//! Newton-Raphson (with the default, third-order predictor), then computes what the benchmark names. Run with
//! `cargo bench -p mollier-tests --bench kinematics`.

use divan::Bencher;
use mollier_core::{Data, Model, solve_positions, transfer};
use mollier_tests::{FourBar, Points, Rssr, chain_by};

fn main() {
    divan::main();
}

/// Eleven input vectors a small step apart along a line, so every iteration really solves.
fn inputs(model: &Model, step: f64) -> Vec<Vec<f64>> {
    let q0: Vec<f64> = (0..model.n_q()).map(|j| 0.05 * ((j % 5) as f64 - 2.0)).collect();
    (0..=10).map(|s| q0.iter().map(|v| v + step * s as f64).collect()).collect()
}

/// The `k`-th input of a walk forth and back over `n` inputs: every iteration moves on by one
/// step as a motion does (alternating between two inputs would let the third-order predictor,
/// which fits the solution before the last, land on the stored one).
fn walk(k: usize, n: usize) -> usize {
    let i = k % (2 * (n - 1));
    if i < n { i } else { 2 * (n - 1) - i }
}

fn run(bencher: Bencher, model: &Model, step: f64, work: fn(&Model, &mut Data)) {
    let qs = inputs(model, step);
    let mut data = Data::new(model);
    solve_positions(model, &mut data, &qs[0]).expect("solves");
    let mut k = 0;
    bencher.bench_local(|| {
        k += 1;
        solve_positions(model, &mut data, &qs[walk(k, qs.len())]).expect("solves");
        work(model, &mut data);
    });
}

fn velocities_accelerations(m: &Model, d: &mut Data) {
    let qd = vec![0.3; m.n_q()];
    let qdd = vec![-0.2; m.n_q()];
    transfer::accelerations(m, d, &qd, &qdd).expect("accelerations");
}

/// Positions, then velocities and accelerations for given input rates (directional: one solve
/// each). Linear in N. Each body's far end is attached to its frame (no unknowns of its own).
#[divan::bench(args = [10, 100, 1000, 5000])]
fn chain_positions_velocities_accelerations(bencher: Bencher, n: usize) {
    let model = chain_by(n, 0.1, Points::Attached);
    run(bencher, &model, 0.01, velocities_accelerations);
}

/// The same with the inputs moved by `0.1/N` rad each, so that the chain's tip turns by about as
/// much whatever N (with 0.01 rad per joint a 1000-body chain's tip turns by 10 rad, and Newton-
/// Raphson needs more iterations): the cost of one frame of comparable work, for the growth.
#[divan::bench(args = [10, 100, 1000, 5000])]
fn chain_positions_velocities_accelerations_same_tip_motion(bencher: Bencher, n: usize) {
    let model = chain_by(n, 0.1, Points::Attached);
    run(bencher, &model, 0.1 / n as f64, velocities_accelerations);
}

/// The same with each far end a node held by a rigid BEAM (SPACAR's way: three unknowns and
/// three equations more per body), for the ratio.
#[divan::bench(args = [10, 100])]
fn chain_beams_positions_velocities_accelerations(bencher: Bencher, n: usize) {
    let model = chain_by(n, 0.1, Points::Beams);
    run(bencher, &model, 0.01, velocities_accelerations);
}

/// Positions and the full first- and second-order transfer functions (NR + DF + D²F).
#[divan::bench(args = [10, 30, 100])]
fn chain_full_transfer_functions(bencher: Bencher, n: usize) {
    let model = chain_by(n, 0.1, Points::Attached);
    run(bencher, &model, 0.01, |m, d| transfer::second_order(m, d).expect("D²F"));
}

/// Positions and DF only.
#[divan::bench(args = [10, 100, 1000])]
fn chain_first_order(bencher: Bencher, n: usize) {
    let model = chain_by(n, 0.1, Points::Attached);
    run(bencher, &model, 0.01, |m, d| transfer::first_order(m, d).expect("DF"));
}

/// The planar four-bar: NR + DF + D²F.
#[divan::bench]
fn four_bar_full(bencher: Bencher) {
    let (model, _, _) = FourBar::crank_rocker().model();
    run(bencher, &model, 0.05, |m, d| transfer::second_order(m, d).expect("D²F"));
}

/// The spatial RSSR loop: NR + DF + D²F.
#[divan::bench]
fn rssr_full(bencher: Bencher) {
    let (model, _, _) = Rssr::example().model();
    run(bencher, &model, 0.05, |m, d| transfer::second_order(m, d).expect("D²F"));
}
