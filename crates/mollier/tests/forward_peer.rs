//! The Rosenbrock step against an independent reference: `models/forward/elbow.toml` (one hinge,
//! two Hill muscles of Chadwick et al. 2014, App. A) integrated by SciPy from equations written
//! out by hand in `tools/peer_forward_elbow.py` (no Mollier code), committed with its provenance
//! as `tests/fixtures/elbow_forward_reference.csv`. An error in Mollier's equations would be
//! shared by every step size and survive a convergence check against its own residual; against
//! the peer's trajectory it does not cancel.

use std::path::Path;

use mollier_sim::{Musculoskeletal, State};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

/// The excitations of the peer script (`excitations(t)` there), biceps then triceps.
fn excitations(t: f64, u: &mut [f64]) {
    let pi = std::f64::consts::PI;
    u[0] = 0.05 + 0.75 * (pi * t / 0.6).sin().powi(2);
    u[1] = 0.05 + 0.25 * (pi * (t - 0.2).max(0.0) / 0.4).sin().powi(2);
}

/// The reference's rows: `[t, q, v, s_biceps, s_triceps, a_biceps, a_triceps]`.
fn reference() -> Vec<Vec<f64>> {
    let path = root().join("crates/mollier/tests/fixtures/elbow_forward_reference.csv");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("t,q,v,s:biceps,s:triceps,a:biceps,a:triceps"));
    lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect()
}

/// The elbow angle (rad) and the biceps' contraction state (m) at the reference's rows after the
/// first, of a Rosenbrock run at step `h` (s) from `start`.
fn trajectory(sys: &Musculoskeletal, start: &State, h: f64, rows: &[Vec<f64>]) -> Vec<[f64; 2]> {
    let mut ws = sys.workspace();
    let every = rows[1][0] - rows[0][0];
    let stride = (every / h).round() as usize;
    let mut state = start.clone();
    let mut out = Vec::new();
    for (r, row) in rows.iter().enumerate().skip(1) {
        for k in 0..stride {
            let (mut next, _) = sys.rosenbrock_step(&mut ws, &state, h, &excitations).expect("a step");
            // the time as the count of steps, not a sum of them
            next.t = ((r - 1) * stride + k + 1) as f64 * h;
            state = next;
        }
        assert!((state.t - row[0]).abs() < 1e-12);
        out.push([state.x[0], state.x[2]]);
    }
    out
}

/// The largest differences of `run` from the reference's rows after the first, per column.
fn errors(run: &[[f64; 2]], rows: &[Vec<f64>]) -> [f64; 2] {
    let mut worst = [0.0f64; 2];
    for (x, row) in run.iter().zip(&rows[1..]) {
        worst[0] = worst[0].max((x[0] - row[1]).abs());
        worst[1] = worst[1].max((x[1] - row[3]).abs());
    }
    worst
}

#[test]
fn the_rosenbrock_elbow_converges_to_an_independent_scipy_reference() {
    let c = mollier::load(&root().join("models/forward/elbow.toml"), &mollier::registry())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let names: Vec<&str> = c.muscles.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["biceps", "triceps"]);
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let rows = reference();
    assert_eq!(rows.len(), 61);
    // the same start, found by each side itself: rest at q = 0, fibres in isometric equilibrium
    let mut u0 = [0.0; 2];
    excitations(0.0, &mut u0);
    let mut ws = sys.workspace();
    let start = sys.rest_state(&mut ws, &[0.0], 0.0, &u0).expect("a rest state");
    for (i, (ours, theirs)) in start.x.iter().zip(&rows[0][1..]).enumerate() {
        assert!((ours - theirs).abs() < 1e-12, "start, {}: {ours} vs {theirs}", sys.state_name(i));
    }
    let hs = [0.002, 0.001, 0.0005];
    let runs: Vec<Vec<[f64; 2]>> = hs.iter().map(|&h| trajectory(&sys, &start, h, &rows)).collect();
    let e: Vec<[f64; 2]> = runs.iter().map(|r| errors(r, &rows)).collect();
    // Richardson's extrapolation of the two finest runs cancels the first-order term: what is
    // left is second order, or an error in the equations that no step size removes
    let extrapolated: Vec<[f64; 2]> =
        runs[1].iter().zip(&runs[2]).map(|(a, b)| [2.0 * b[0] - a[0], 2.0 * b[1] - a[1]]).collect();
    let x = errors(&extrapolated, &rows);
    eprintln!(
        "elbow, Rosenbrock against SciPy (0.6 s): largest angle error at 2, 1, 0.5 ms: {:.3e}, {:.3e}, {:.3e} rad; \
         biceps contraction state: {:.3e}, {:.3e}, {:.3e} m",
        e[0][0], e[1][0], e[2][0], e[0][1], e[1][1], e[2][1]
    );
    eprintln!("extrapolated from 1 and 0.5 ms: {:.3e} rad, {:.3e} m", x[0], x[1]);
    // first order: halving the step halves the error (the ratio 2 within 15 %), for the motion and
    // the muscle alike; an error in the equations would leave a floor the ratios cannot pass
    for j in 0..2 {
        for k in 0..2 {
            let ratio = e[k][j] / e[k + 1][j];
            assert!(
                (ratio - 2.0).abs() < 0.3,
                "column {j}: {} against {}: ratio {ratio}, not first order",
                e[k][j],
                e[k + 1][j]
            );
        }
    }
    // and no floor: the extrapolation is 50 times closer to the peer than the finest run
    for j in 0..2 {
        assert!(x[j] < 0.02 * e[2][j], "column {j}: extrapolated {} against {} at 0.5 ms", x[j], e[2][j]);
    }
}
