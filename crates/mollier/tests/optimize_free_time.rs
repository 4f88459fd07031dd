//! A free final time (`duration_bounds`, the objective's `time` term) against closed forms on the
//! 2 kg sliding mass moved 1 m from rest to rest (`models/optimal-control/`):
//! - `sliding-mass-time.toml`, `144 T + ∫ F² dt`: for a given `T` the least `∫ F² dt` is
//!   `48/T³`, so the optimum is `T = 1 s`, objective 192, `F = 12 − 24 t` N, `x = 3t² − 2t³` m
//!   (smooth: Hermite-Simpson integrates it exactly, so the grid's optimum is the closed form's);
//! - `sliding-mass-min-time.toml`, least `T` with `|F| ≤ 10 N`: bang-bang, `T = 2 √(m d/F_max)
//!   = 0.894427 s` (a switch inside an interval: the grid's optimum is near it, not at it).
//!
//! Both take the exact Hessian (one translation): IPOPT converges in 9 and 15 iterations, and in
//! at most 40 or the Hessian's `T` row is off (with its defects' part scaled by `N`: 399 and 145).
//!
//! Needs IPOPT (`tools/install-ipopt`): without it the tests say SKIPPED, under CI=true they fail.

use std::path::Path;

use mollier::optimize::OptimizeRun;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

fn solve(problem: &str) -> mollier_ocp::Solved {
    let path = format!("{}/../../models/optimal-control/{problem}", env!("CARGO_MANIFEST_DIR"));
    let run = OptimizeRun::read(Path::new(&path), &mollier::registry()).expect("problem reads");
    let solved = run.solve().expect("solves");
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    let s = solved.summary();
    println!("{problem}: {} iterations, {}, duration {}", s["iterations"], s["hessian"], s["duration_s"]);
    let iterations = solved.solved.ipopt.iterations.len();
    assert!(iterations <= 40, "{problem}: {iterations} iterations, not the exact Hessian's few");
    solved.solved
}

#[test]
fn the_free_duration_balances_time_and_effort_as_the_closed_form() {
    if !ipopt_here("optimize free time, time and effort") {
        return;
    }
    let solved = solve("sliding-mass-time.toml");
    let t = solved.points.last().unwrap().time;
    let (mut dx, mut du) = (0.0f64, 0.0f64);
    for p in &solved.points {
        let s = p.time / t;
        // the closed form for the duration found (x = d (3s² − 2s³), F = m d (6 − 12 s)/T²)
        dx = dx.max((p.x[0] - (3.0 * s * s - 2.0 * s * s * s)).abs());
        du = du.max((p.controls[0] - 2.0 * (6.0 - 12.0 * s) / (t * t)).abs());
    }
    println!("T {t:.10} s, objective {:.10}, x {dx:.1e} m, F {du:.1e} N", solved.ipopt.objective);
    assert!((t - 1.0).abs() < 1e-6, "duration {t} s, the closed form's 1 s");
    assert!((solved.ipopt.objective - 192.0).abs() < 1e-6 * 192.0, "objective {}", solved.ipopt.objective);
    assert!(dx < 1e-6 && du < 1e-4, "x {dx:.2e} m, F {du:.2e} N off the closed form");
}

#[test]
fn the_least_time_is_the_bang_bang_closed_forms() {
    if !ipopt_here("optimize free time, least time") {
        return;
    }
    let solved = solve("sliding-mass-min-time.toml");
    let t = solved.points.last().unwrap().time;
    let exact = 2.0 * 0.2f64.sqrt();
    println!("T {t:.10} s, bang-bang {exact:.10} s, relative {:.2e}", (t - exact).abs() / exact);
    assert!((t - exact).abs() < 1e-3 * exact, "least duration {t} s, the closed form's {exact} s");
    // at full force forwards, then backwards, away from the switch
    for p in solved.points.iter().filter(|p| (p.time - t / 2.0).abs() > 0.1 * t) {
        let expected = if p.time < t / 2.0 { 10.0 } else { -10.0 };
        assert!((p.controls[0] - expected).abs() < 1e-3, "F {} N at {} s", p.controls[0], p.time);
    }
}
