//! The exact Hessian on a closed loop, end to end: the weighted four-bar turned from rest to rest
//! (`fixtures/four-bar-turn.toml`) solved with the fourth-order transfer functions' Hessian and
//! with IPOPT's L-BFGS approximation reaches the same optimum, the exact one in Newton's few iterations.
//! The Hessian's entries are checked against central differences in
//! `optimize_derivatives.rs::the_hessian_of_the_lagrangian_is_exact_for_chains`.

use std::path::Path;

use mollier::optimize::HessianSpec;
use mollier_ocp::Motion;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

#[path = "support/solve_file.rs"]
mod solve_file;
use solve_file::solve_file;

fn solve(hessian: HessianSpec, tolerance: f64) -> (f64, usize, Result<Motion, String>) {
    let path = format!("{}/tests/fixtures/four-bar-turn.toml", env!("CARGO_MANIFEST_DIR"));
    solve_file(Path::new(&path), hessian, tolerance)
}

#[test]
fn a_closed_loops_exact_hessian_reaches_the_approximations_optimum() {
    if !ipopt_here("a_closed_loops_exact_hessian_reaches_the_approximations_optimum") {
        return;
    }
    let (exact, exact_iterations, case) = solve(HessianSpec::Exact, 1e-10);
    assert_eq!(case, Ok(Motion::Chain), "the four-bar takes the fourth-order Hessian");
    let (approx, approx_iterations, case) = solve(HessianSpec::LimitedMemory, 1e-10);
    assert!(case.is_err(), "asked for the approximation");
    let relative = (exact - approx).abs() / approx.abs();
    println!("exact {exact_iterations} iterations, L-BFGS {approx_iterations}; objectives differ by {relative:.2e}");
    assert!(relative < 1e-6, "exact Hessian's optimum {exact}, L-BFGS's {approx}");
    // Newton's few: measured 9 (L-BFGS 43); with the dynamics' Hessian left out 16, with the
    // closing truss's third- and fourth-order parts left out 11
    assert!(exact_iterations <= 10, "{exact_iterations} iterations, not the exact Hessian's few");
}
