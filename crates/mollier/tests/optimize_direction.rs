//! `[constraints.direction]`: a direction between two model points within a band about a plane
//! (`g = n · d / |d| ∈ [lo, hi]` at every grid point, [`DirectionConstraint`]).
//! - Its rows against closed form (the pendulum: `d` from the hinge to the tip, `n = (0, 1, 0)`:
//!   `g = sin q`) and their Jacobian and their part of the exact Hessian of the Lagrangian
//!   against central differences at random points: the pendulum (one rotation), the two-joint
//!   arm (a chain) and the shoulder (nine rotations in a chain; the humerus from the
//!   glenohumeral centre to the elbow, the plane of the flexion's target).
//! - A solve with a known optimum: the pendulum following a reference angle `r(t)` with a free
//!   motor, its rod held below `sin q ≤ sin 0.5`: the optimum is `min(r, 0.5)` at every point.
//!   Needs IPOPT: without it SKIPPED, under CI=true a failure.
//! - Problem files: bad fields refused at `file:line:col` with their paths.
//!
//! `[constraints.modes]`: a free mode within bounds at every grid point ([`ModeConstraint`]),
//! whose rows share the directions' place in the transcription.
//! - Its rows against closed form (the pendulum with a truss from 0.8 m below the hinge to the
//!   tip: `e = 0.8 √(2 (1 + sin q)) − 0.8 √2`), and their derivatives against central
//!   differences there, on the two-joint arm (a muscle's elongation) and on the shoulder (the
//!   scapula's soft contacts and the anterior deltoid's elongation), beside a direction.
//! - The pendulum's solve above with the truss's elongation bounded instead of the direction:
//!   the same optimum `min(r, 0.5)`.
//! - Problem files: a mode that is not there, an input, bounds reversed, each at its place.

use mollier_ipopt::Nlp;
use mollier_ocp::{
    Actuator, DirectionConstraint, Guess, MarkerTracking, ModeConstraint, Objective, Problem, Scheme, Tracking,
    Transcription,
};
use mollier_sim::Musculoskeletal;

#[path = "fixtures/problem.rs"]
mod problem;
use problem::{model, open};

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

fn direction(c: &mollier::Compiled, from: &str, to: &str, normal: [f64; 3], bounds: [f64; 2]) -> DirectionConstraint {
    let node = |name: &str| c.points.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no point {name}")).node;
    DirectionConstraint { name: format!("{from}-{to}"), from: node(from), to: node(to), normal, bounds }
}

/// The constraint on mode `element.mode` of `c` within `bounds`.
fn mode(c: &mollier::Compiled, name: &str, bounds: [f64; 2]) -> ModeConstraint {
    let (element, m) = name.rsplit_once('.').expect("element.mode");
    let el = c.model.element_by_name(element).unwrap_or_else(|| panic!("no element {element}"));
    ModeConstraint { name: name.into(), mode: c.model.mode_by_name(el, m).expect("the mode"), bounds }
}

/// The truss's elongation at the pendulum's angle `q` (`fixtures/pendulum-reach.toml`).
fn reach(q: f64) -> f64 {
    0.8 * (2.0 * (1.0 + q.sin())).sqrt() - 0.8 * 2f64.sqrt()
}

/// The rows on the positions (the last `k` of the constraints) at `z`: their Jacobian against central
/// differences in every point's `q` (relative to 1; no other column), and `Σ λ_r ∇²g_r` (the
/// Hessian with `σ = 0` and multipliers on these rows alone) against central differences of
/// `Σ λ_r ∇g_r` (every other entry 0). Returns the two largest errors.
fn derivative_errors(t: &mut Transcription<'_, '_, '_>, z: &[f64], k: usize, n: usize, rng: &mut Rng) -> (f64, f64) {
    let (nv, m) = (t.n(), t.m());
    let per = nv / t.points();
    let first = m - k;
    let pattern = t.jacobian_structure();
    let mut values = vec![0.0; pattern.len()];
    assert!(t.jacobian(z, &mut values));
    let mut jac = vec![0.0; k * nv];
    for (&(r, c), v) in pattern.iter().zip(&values) {
        if r >= first {
            assert!(c % per < n, "row {r} has column {c} outside q");
            jac[(r - first) * nv + c] += v;
        }
    }
    let mut lambda = vec![0.0; m];
    lambda[first..].iter_mut().for_each(|l| *l = 20.0 * rng.next() - 10.0);
    let hp = t.hessian_structure().expect("an exact Hessian");
    let mut hv = vec![0.0; hp.len()];
    assert!(t.hessian(z, 0.0, &lambda, &mut hv));
    let mut hess = vec![0.0; nv * nv];
    for (&(a, b), v) in hp.iter().zip(&hv) {
        hess[a * nv + b] += v;
        if a != b {
            hess[b * nv + a] += v;
        }
    }
    let lagrangian_grad = |t: &mut Transcription<'_, '_, '_>, z: &[f64]| {
        let mut values = vec![0.0; pattern.len()];
        assert!(t.jacobian(z, &mut values));
        let mut g = vec![0.0; nv];
        for (&(r, c), v) in pattern.iter().zip(&values) {
            g[c] += lambda[r] * v;
        }
        g
    };
    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
    let (mut jac_err, mut hess_err) = (0.0f64, 0.0f64);
    let mut zp = z.to_vec();
    let mut fd_hess = vec![0.0; nv * nv];
    for i in 0..t.points() {
        for j in 0..n {
            let col = i * per + j;
            let h = 1e-6;
            zp[col] = z[col] + h;
            assert!(t.constraints(&zp, &mut gp));
            let lp = lagrangian_grad(t, &zp);
            zp[col] = z[col] - h;
            assert!(t.constraints(&zp, &mut gm));
            let lm = lagrangian_grad(t, &zp);
            zp[col] = z[col];
            for r in 0..k {
                let fd = (gp[first + r] - gm[first + r]) / (2.0 * h);
                jac_err = jac_err.max((fd - jac[r * nv + col]).abs());
            }
            for a in 0..nv {
                fd_hess[a * nv + col] = (lp[a] - lm[a]) / (2.0 * h);
            }
        }
    }
    for a in 0..nv {
        for b in 0..nv {
            // a non-finite difference is the worst one
            let e = (fd_hess[a * nv + b] - hess[a * nv + b]).abs();
            if !(e <= hess_err) {
                hess_err = e;
            }
        }
    }
    (jac_err, hess_err)
}

#[test]
fn the_rows_and_their_derivatives_are_exact() {
    let mut rng = Rng(0xd1ec_7104_0000_0051);
    // the pendulum: g = sin q; with a marker term as well, whose reading forms the second order
    let c = model("models/mechanisms/pendulum.toml");
    let system = Musculoskeletal::new(&c.model, Vec::new());
    let tip = c.points.iter().find(|p| p.name == "rod.tip").expect("the tip").node;
    let marker = MarkerTracking { name: "tip".into(), node: tip, weight: 2.0, reference: vec![(0.0, [0.3, 0.5, 0.0])] };
    for markers in [Vec::new(), vec![marker]] {
        let problem = Problem {
            directions: vec![direction(&c, "ground", "rod.tip", [0.0, 1.0, 0.0], [-1.0, 0.5])],
            ..open(&system, 1.0, 2, Scheme::HermiteSimpson, Objective { markers, ..Objective::default() })
        };
        pendulum_rows(&problem, &mut rng);
    }
}

#[test]
fn a_modes_rows_and_their_derivatives_are_exact() {
    let mut rng = Rng(0xd1ec_7104_0000_0053);
    let c = model("crates/mollier/tests/fixtures/pendulum-reach.toml");
    let system = Musculoskeletal::new(&c.model, Vec::new());
    let problem = Problem {
        modes: vec![mode(&c, "reach.elongation", [-2.0, 0.1])],
        ..open(&system, 1.0, 2, Scheme::HermiteSimpson, Objective::default())
    };
    let mut t = Transcription::new(&problem).unwrap();
    for _ in 0..3 {
        let z: Vec<f64> = (0..t.n()).map(|_| 1.2 * rng.sym()).collect();
        let mut g = vec![0.0; t.m()];
        assert!(t.constraints(&z, &mut g));
        let (per, k) = (t.n() / t.points(), t.points());
        for i in 0..k {
            let exact = reach(z[i * per]);
            assert!((g[t.m() - k + i] - exact).abs() < 1e-12, "g {} against the closed form {exact}", g[t.m() - k + i]);
        }
        let (jac, hess) = derivative_errors(&mut t, &z, k, 1, &mut rng);
        println!("pendulum's reach: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
        assert!(jac < 1e-8 && hess < 1e-6, "pendulum's reach: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
    }
}

/// The pendulum's rows against `sin q` and their derivatives at three random points.
fn pendulum_rows(problem: &Problem<'_, '_>, rng: &mut Rng) {
    let mut t = Transcription::new(problem).unwrap();
    for _ in 0..3 {
        let z: Vec<f64> = (0..t.n()).map(|_| 1.2 * rng.sym()).collect();
        let mut g = vec![0.0; t.m()];
        assert!(t.constraints(&z, &mut g));
        let per = t.n() / t.points();
        let k = t.points();
        for i in 0..k {
            let exact = z[i * per].sin();
            assert!((g[t.m() - k + i] - exact).abs() < 1e-12, "g {} against sin q {exact}", g[t.m() - k + i]);
        }
        let (jac, hess) = derivative_errors(&mut t, &z, k, 1, rng);
        println!("pendulum: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
        assert!(jac < 1e-8 && hess < 1e-6, "pendulum: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
    }
}

#[test]
fn the_rows_and_their_derivatives_are_exact_on_chains() {
    let mut rng = Rng(0xd1ec_7104_0000_0052);
    // the two-joint arm (a chain of two hinges) with its muscles about a random posture, and the
    // shoulder about the flexion target's posture at 0.65 s (the humerus elevated about 50°)
    let target = flexion_target_at_065();
    // each with the direction alone, then with modes beside it
    for (file, from, to, normal, modes, q_mid, q_spread) in [
        (
            "crates/mollier/tests/fixtures/two-joint-arm.toml",
            "thorax",
            "forearm.hand",
            [0.6, 0.8, 0.0],
            &["biceps.elongation"][..],
            &[0.0; 2][..],
            0.8,
        ),
        (
            "models/shoulder/shoulder-forward.toml",
            "scapula.GH",
            "humerus.elbow",
            [0.7487, 0.0, 0.6629],
            &["TS_thorax.level", "AI_thorax.level", "deltoideus_clavicular_1.elongation"][..],
            &target[1..10],
            0.05,
        ),
    ]
    .into_iter()
    .flat_map(|(f, a, b, n, m, q, s)| [(f, a, b, n, &[][..], q, s), (f, a, b, n, m, q, s)])
    {
        let c = model(file);
        let system = Musculoskeletal::new(&c.model, c.muscles.clone());
        let l = system.layout();
        let len = normal.iter().map(|v: &f64| v * v).sum::<f64>().sqrt();
        let problem = Problem {
            directions: vec![direction(&c, from, to, normal.map(|v| v / len), [-0.06, 0.06])],
            modes: modes.iter().map(|m| mode(&c, m, [-1.0, 1.0])).collect(),
            ..open(&system, 0.1, 1, Scheme::Trapezoidal, Objective { excitation: 1.0, ..Objective::default() })
        };
        let mut t = Transcription::new(&problem).unwrap();
        let mut ws = system.workspace();
        for _ in 0..2 {
            let q: Vec<f64> = q_mid.iter().map(|q| q + q_spread * rng.sym()).collect();
            let rest = system.rest_state(&mut ws, &q, 0.0, &vec![0.2; l.m]).unwrap();
            let mut spread = vec![0.05; l.n];
            spread.resize(l.len(), 0.0);
            let z = hessian_point(&t, &mut rng, &rest.x, &spread);
            let k = t.points() * (1 + modes.len());
            let (jac, hess) = derivative_errors(&mut t, &z, k, l.n, &mut rng);
            println!("{file} {modes:?}: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
            assert!(jac < 1e-8 && hess < 1e-6, "{file} {modes:?}: Jacobian off by {jac:.2e}, Hessian by {hess:.2e}");
        }
    }
}

/// The shoulder's flexion target at 0.65 s (`models/shoulder/flexion-target.csv`): time, then
/// the nine rotations (rad), their rates and accelerations.
fn flexion_target_at_065() -> Vec<f64> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/shoulder/flexion-target.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let row = text.lines().find(|r| r.starts_with("0.65,")).expect("the target has a row at 0.65 s");
    row.split(',').map(|v| v.parse().unwrap()).collect()
}

/// Every point's state `x_mid` ± `spread`, rates and controls in [−1, 1] and [0, 1].
fn hessian_point(t: &Transcription<'_, '_, '_>, rng: &mut Rng, x_mid: &[f64], spread: &[f64]) -> Vec<f64> {
    let per = t.n() / t.points();
    let nx = x_mid.len();
    let mut z = vec![0.0; t.n()];
    for i in 0..t.points() {
        let zi = &mut z[i * per..(i + 1) * per];
        for j in 0..nx {
            zi[j] = x_mid[j] + spread[j] * rng.sym();
            zi[nx + j] = rng.sym();
        }
        zi[2 * nx..].iter_mut().for_each(|v| *v = rng.next());
    }
    z
}

/// The reference angle: from −1 to 1.2 rad and back to 0 over 1 s.
fn reference(t: f64) -> f64 {
    -1.0 + 2.2 * (std::f64::consts::PI * t).sin() + t
}

#[test]
fn a_band_holds_the_pendulum_where_its_reference_leaves_it() {
    if !ipopt_here("optimize direction") {
        return;
    }
    let limit = 0.5f64;
    let c = model("models/mechanisms/pendulum.toml");
    let band = direction(&c, "ground", "rod.tip", [0.0, 1.0, 0.0], [-1.0, limit.sin()]);
    held_below(
        "the direction",
        Problem { directions: vec![band], ..tracking(&Musculoskeletal::new(&c.model, Vec::new())) },
        limit,
    );
    // the truss's elongation grows with sin q: bounded at its value at 0.5 it holds the same
    let c = model("crates/mollier/tests/fixtures/pendulum-reach.toml");
    let bound = mode(&c, "reach.elongation", [-2.0, reach(limit)]);
    held_below(
        "the reach",
        Problem { modes: vec![bound], ..tracking(&Musculoskeletal::new(&c.model, Vec::new())) },
        limit,
    );
}

/// The pendulum following [`reference`] with a free motor over 1 s on 20 intervals.
fn tracking<'s, 'm>(system: &'s Musculoskeletal<'m>) -> Problem<'s, 'm> {
    let samples = (0..=100).map(|k| k as f64 / 100.0).map(|t| (t, reference(t))).collect();
    let objective =
        Objective { tracking: vec![Tracking { state: 0, weight: 10.0, reference: samples }], ..Objective::default() };
    Problem {
        actuators: vec![Actuator { name: "motor".into(), coordinate: 0, optimal_force: 1.0, bounds: [-1e4, 1e4] }],
        state_bounds: vec![[-1.5, 1.5], [-1e3, 1e3]],
        ..open(system, 1.0, 20, Scheme::Trapezoidal, objective)
    }
}

/// `p` solved: its angle is `min(r, limit)` at every point, held at the limit at five or more.
fn held_below(label: &str, p: Problem<'_, '_>, limit: f64) {
    let solved = p.solve(Guess::Rest, &[0.0, 0.0], &[("tol", mollier_ipopt::Value::Num(1e-10))]).expect("solves");
    assert!(solved.ipopt.converged(), "{label}: {}", solved.ipopt.status_name());
    // the reference's samples are 0.01 s apart and the grid's 0.05 s: each point's reference is exact
    let worst = solved.points.iter().map(|pt| (pt.x[0] - reference(pt.time).min(limit)).abs()).fold(0.0f64, f64::max);
    let held = solved.points.iter().filter(|pt| reference(pt.time) > limit).count();
    println!(
        "{label}: {} iterations, {held} points held at the bound, q off min(r, {limit}) by {worst:.2e} rad",
        solved.ipopt.iterations.len()
    );
    assert!(held >= 5, "the bound binds at {held} points only");
    assert!(worst < 1e-6, "the angle is {worst:.2e} rad off min(r, {limit})");
}

/// Write `text` as a problem file beside a copy of the pendulum and read it.
fn read(name: &str, text: &str) -> Result<mollier::optimize::OptimizeRun, mollier_format::Diagnostics> {
    let dir = std::env::temp_dir().join(format!("mollier-optimize-direction-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let from = format!("{}/../../models/mechanisms/pendulum.toml", env!("CARGO_MANIFEST_DIR"));
    std::fs::copy(from, dir.join("pendulum.toml")).unwrap();
    let path = dir.join("problem.toml");
    std::fs::write(&path, text).unwrap();
    let r = mollier::optimize::OptimizeRun::read(&path, &mollier::registry());
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

#[test]
fn bad_fields_are_refused_at_their_place() {
    let head = "model = \"pendulum.toml\"\nduration = 1.0\nintervals = 10\n\n[constraints.direction.rod]\n";
    let good = format!("{head}from = \"ground\"\nto = \"rod.tip\"\nnormal = [0, 2, 0]\nbounds = [-1, 0.5]\n");
    let run = read("good", &good).expect("reads");
    assert_eq!(run.spec.constraints.direction["rod"].normal, [0.0, 2.0, 0.0]);
    let bad = format!("{head}from = \"ground\"\nto = \"rod.tipp\"\nnormal = [0, 0, 0]\nbounds = [0.5, -1]\n");
    let d = read("bad", &bad).err().expect("refused").0;
    refused_at(
        &d,
        &[
            ("constraints.direction.rod.to", (7, 6), "rod.tip"),
            ("constraints.direction.rod.normal", (8, 10), "nonzero"),
            ("constraints.direction.rod.bounds", (9, 10), "lower ≤ upper"),
        ],
    );
    let d = read("field", &format!("{good}weight = 1.0\n")).err().expect("refused").0;
    assert!(d[0].message.contains("weight"), "{d:?}");
}

#[test]
fn bad_modes_are_refused_at_their_place() {
    let head = "model = \"pendulum.toml\"\nduration = 1.0\nintervals = 10\n\n[constraints.modes]\n";
    let d = read("modes", &format!("{head}\"swing.rotation\" = [-1, 1]\n\"swung.rotation\" = [-1, 1]\n")).err();
    let d = d.expect("refused").0;
    refused_at(
        &d,
        &[
            ("constraints.modes.swing.rotation", (6, 20), "an input"),
            ("constraints.modes.swung.rotation", (7, 20), "did you mean `swing`"),
        ],
    );
    let d = read("reversed", &format!("{head}swing = [1, -inf]\n")).err().expect("refused").0;
    assert!(d.iter().any(|x| x.message.contains("lower ≤ upper")), "{d:?}");
}

/// Each `(path, (line, column), says)`: a problem at that field path, placed at its value, whose
/// message says `says`.
fn refused_at(d: &[mollier_format::Diagnostic], cases: &[(&str, (usize, usize), &str)]) {
    for &(path, at, says) in cases {
        let p = d.iter().find(|x| x.path == path).unwrap_or_else(|| panic!("no problem at {path}: {d:?}"));
        assert_eq!(p.location.as_ref().map(|l| (l.line, l.column)), Some(at), "{path}: {p:?}");
        assert!(p.message.contains(says), "{path}: {p:?}");
    }
}
