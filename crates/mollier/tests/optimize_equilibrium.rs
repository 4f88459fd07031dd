//! `initial_equilibrium`, `final_equilibrium`, the `acceleration` term and the excitations'
//! weights of `mollier optimize` problem files, solved on the elbow's flexion
//! (`models/optimal-control/elbow-flexion.toml`: two Hill muscles, the exact Hessian) with the
//! muscles' initial states free.
//!
//! Needs IPOPT (`tools/install-ipopt`): without it the tests say SKIPPED, under CI=true they fail.

use std::path::PathBuf;

use mollier::optimize::OptimizeRun;
use mollier_ocp::Point;
use mollier_sim::Musculoskeletal;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

/// The elbow's flexion on 10 intervals, the muscles free at the start, changed by `edit`; its
/// grid points and objective.
fn solve(edit: impl FnOnce(&mut OptimizeRun)) -> (Vec<Point>, f64, OptimizeRun) {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control/elbow-flexion.toml");
    let mut run = OptimizeRun::read(&path, &mollier::registry()).expect("problem reads");
    run.spec.intervals = 10;
    run.spec.free_initial_muscles = true;
    edit(&mut run);
    let solved = run.solve().expect("solves");
    let ip = &solved.solved.ipopt;
    assert!(ip.converged(), "{}", ip.status_name());
    let points = solved.solved.points.clone();
    let objective = ip.objective;
    (points, objective, run)
}

/// Simpson's weights of the Hermite-Simpson grid (`h` the interval).
fn simpson(points: usize, h: f64) -> Vec<f64> {
    let mut w = vec![0.0; points];
    for k in 0..(points - 1) / 2 {
        w[2 * k] += h / 6.0;
        w[2 * k + 1] += 4.0 * h / 6.0;
        w[2 * k + 2] += h / 6.0;
    }
    w
}

/// With `initial_equilibrium` and `final_equilibrium` the first and last points' rates of `v`,
/// `s`, `a` are 0, so their activations are their excitations, and the system evaluated there at
/// rest (all rates 0, an independent evaluation of the dynamics) is in equilibrium: the muscles
/// hold the forearm. Without them the optimum's first activations are free of their excitations.
#[test]
fn the_start_held_in_equilibrium_is_an_equilibrium_the_muscles_hold() {
    if !ipopt_here("optimize with the start in equilibrium") {
        return;
    }
    let (free, _, _) = solve(|_| {});
    let (held, _, run) = solve(|r| {
        r.spec.initial_equilibrium = true;
        r.spec.final_equilibrium = true;
    });
    let c = &run.compiled;
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let gap = |p: &Point| (0..l.m).map(|k| (p.x[l.a() + k] - p.excitations[k]).abs()).fold(0.0, f64::max);
    println!("the first point's |a − e|: {:.3e} free, {:.3e} held", gap(&free[0]), gap(&held[0]));
    let mut ws = system.workspace();
    let rest = vec![0.0; l.len()];
    let mut out_of_balance = |p: &Point| {
        let lin = system.linearize(&mut ws, &p.x, &rest, &p.excitations).expect("evaluates");
        lin.f.iter().fold(0.0f64, |m, v| m.max(v.abs()))
    };
    let (free_first, free_last) = (&free[0], &free[free.len() - 1]);
    println!(
        "free: the first point at rest out of equilibrium by {:.3e}, the last by {:.3e} (N m, N, 1/s)",
        out_of_balance(free_first),
        out_of_balance(free_last)
    );
    for (end, p) in [("start", &held[0]), ("end", &held[held.len() - 1])] {
        for (j, r) in p.xd.iter().enumerate().skip(l.n) {
            assert!(r.abs() < 1e-12, "rate #{j} at the {end}: {r}");
        }
        assert!(gap(p) < 1e-6, "{end}: activations off their excitations by {:.2e}", gap(p));
        let b = out_of_balance(p);
        println!("held: the {end} at rest out of equilibrium by {b:.3e}");
        // within IPOPT's constraint tolerance (its default `constr_viol_tol` 1e-4)
        assert!(b < 1e-5, "the {end} at rest is out of equilibrium by {b:.2e}");
    }
}

/// `acceleration = w` adds `w ∫ Σ v̇² dt`, and `[objective.excitation_weights]` a factor per
/// muscle by name: the optimum's objective is `∫ Σ c_k e_k² dt + w ∫ Σ v̇² dt` recomputed from
/// its points (Simpson's rule, the biceps' factor 2.5), and the accelerations' integral falls
/// from the effort-only optimum's.
#[test]
fn the_acceleration_term_is_the_integral_of_the_squared_accelerations() {
    if !ipopt_here("optimize with the accelerations' term") {
        return;
    }
    let w = 1e-3;
    let (plain, _, _) = solve(|_| {});
    let (smooth, objective, run) = solve(|r| {
        r.spec.objective.acceleration = w;
        r.spec.objective.excitation_weights.insert("biceps".into(), 2.5);
    });
    let factor: Vec<f64> = run.compiled.muscles.iter().map(|m| if m.name == "biceps" { 2.5 } else { 1.0 }).collect();
    let n = run.compiled.inputs.len();
    let h = run.spec.duration / run.spec.intervals as f64;
    let weights = simpson(smooth.len(), h);
    let integral = |pts: &[Point], f: &dyn Fn(&Point) -> f64| pts.iter().zip(&weights).map(|(p, q)| q * f(p)).sum();
    let accel = |p: &Point| p.xd[n..2 * n].iter().map(|v| v * v).sum::<f64>();
    let effort = |p: &Point| p.excitations.iter().zip(&factor).map(|(e, c)| c * e * e).sum::<f64>();
    let recomputed: f64 = integral(&smooth, &effort) + w * integral(&smooth, &accel);
    println!("objective {objective:.12}, recomputed {recomputed:.12}");
    assert!((objective - recomputed).abs() < 1e-12 * objective.max(1.0), "{objective} against {recomputed}");
    let (a0, a1): (f64, f64) = (integral(&plain, &accel), integral(&smooth, &accel));
    println!("∫ Σ v̇² dt: {a0:.6} without the term, {a1:.6} with it");
    assert!(a1 < a0, "the accelerations did not fall: {a0} → {a1}");
}
