//! `mollier optimize`'s optima against OpenSim Moco 4.6's on the same problems
//! (`models/optimal-control/`; the references written once by `tools/peer_moco_ocp.py` into
//! `tests/data/moco/`): a sliding mass (whose optimum is also known in closed form, 48 N² s), a
//! pendulum swung up and a double pendulum swung up (its exact Hessian at the hinges' ±90°). The
//! first two are solved by Hermite-Simpson on 50 intervals as Moco was; the
//! objectives agree within 1e-6 (relative), the states and controls at the 101 grid points within
//! the stated tolerances. The elbow with two DAS3 Hill muscles, which Moco's muscle models cannot
//! express, is held against an independent CasADi transcription of the same problem
//! (`tools/peer_casadi_elbow.py`, `tests/data/casadi/`); the elbow with two
//! `DeGrooteFregly2016Muscle` (an `.osim` both read) against Moco. Needs IPOPT (`tools/install-ipopt`): without it the tests say SKIPPED,
//! under CI=true they fail.

use std::path::Path;

use mollier::optimize::OptimizeRun;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

/// The double pendulum swung up (`models/optimal-control/double-pendulum-swing-up.toml`, 40
/// intervals) with the exact Hessian of its chain (fourth-order transfer functions), both hinges
/// held at ±π/2 at its ends (where num-dual's `atan2` divided by zero and IPOPT stopped at
/// `Invalid_Number_Detected`), against Moco's optimum (`double_pendulum.csv`: time, q1, q2, v1,
/// v2, u1, u2; Moco started from this problem's optimum, so that it checks this local optimum of
/// several, by its own derivatives).
#[test]
fn the_double_pendulum_swing_up_reaches_mocos_optimum_with_the_exact_hessian() {
    if !ipopt_here("optimize_moco double pendulum") {
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/optimal-control/double-pendulum-swing-up.toml");
    let run = OptimizeRun::read(Path::new(path), &mollier::registry()).expect("problem reads");
    let solved = run.solve().expect("solves");
    let summary = solved.summary();
    println!("{path}: {} iterations, {}", summary["iterations"], summary["hessian"]);
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    assert!(summary["hessian"].as_str().is_some_and(|h| h.starts_with("exact")), "{}", summary["hessian"]);
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/moco/");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}double_pendulum.json")).unwrap()).unwrap();
    assert_eq!(info["success"], true);
    let objective = info["objective"].as_f64().unwrap();
    let csv = std::fs::read_to_string(format!("{dir}double_pendulum.csv")).unwrap();
    let rows: Vec<Vec<f64>> = csv.lines().skip(1).map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    let points = &solved.solved.points;
    assert_eq!(points.len(), rows.len());
    let obj = (solved.solved.ipopt.objective - objective).abs() / objective;
    let [mut q, mut v, mut u] = [0.0f64; 3];
    for (p, r) in points.iter().zip(&rows) {
        assert!((p.time - r[0]).abs() < 1e-12);
        for k in 0..2 {
            q = q.max((p.x[k] - r[1 + k]).abs());
            v = v.max((p.x[2 + k] - r[3 + k]).abs());
            u = u.max((p.controls[k] - r[5 + k]).abs());
        }
    }
    println!("objective {obj:.1e} relative, q {q:.1e} rad, v {v:.1e} rad/s, u {u:.1e} N m");
    assert!(obj < 1e-6, "objective off Moco's by {obj:.2e}");
    // the peak torques are 2.9 and 3.5 N m
    assert!(q < 1e-4 && v < 1e-3 && u < 1e-3, "q {q:.2e} rad, v {v:.2e} rad/s, u {u:.2e} N m");
}

/// Moco's grid: time, q, v, u per row; and its objective.
fn moco(name: &str) -> (Vec<[f64; 4]>, f64) {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/moco/");
    let csv = std::fs::read_to_string(format!("{dir}{name}.csv")).unwrap();
    let rows = csv
        .lines()
        .skip(1)
        .map(|l| {
            let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            [v[0], v[1], v[2], v[3]]
        })
        .collect();
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}{name}.json")).unwrap()).unwrap();
    assert_eq!(info["success"], true);
    (rows, info["objective"].as_f64().unwrap())
}

/// Solve a problem of `models/optimal-control/` and compare with Moco's `name`: the largest
/// differences of objective (relative), q, v and u.
fn compare(problem: &str, name: &str) -> [f64; 4] {
    let path = format!("{}/../../models/optimal-control/{problem}", env!("CARGO_MANIFEST_DIR"));
    let run = OptimizeRun::read(Path::new(&path), &mollier::registry()).expect("problem reads");
    let solved = run.solve().expect("solves");
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    let (rows, objective) = moco(name);
    let summary = solved.summary();
    println!("{problem}: {} iterations, {}", summary["iterations"], summary["hessian"]);
    let points = &solved.solved.points;
    assert_eq!(points.len(), rows.len());
    let mut d = [(solved.solved.ipopt.objective - objective).abs() / objective, 0.0, 0.0, 0.0];
    for (p, r) in points.iter().zip(&rows) {
        assert!((p.time - r[0]).abs() < 1e-12);
        d[1] = d[1].max((p.x[0] - r[1]).abs());
        d[2] = d[2].max((p.x[1] - r[2]).abs());
        d[3] = d[3].max((p.controls[0] - r[3]).abs());
    }
    println!("{problem}: objective {:.1e} relative, q {:.1e}, v {:.1e}, u {:.1e}", d[0], d[1], d[2], d[3]);
    d
}

#[test]
fn the_sliding_mass_reaches_mocos_optimum_and_the_closed_form() {
    if !ipopt_here("optimize_moco sliding mass") {
        return;
    }
    let [obj, q, v, u] = compare("sliding-mass-effort.toml", "sliding_mass");
    // closed form: F = m (6 − 12 t), ∫ F² dt = 48 (Hermite-Simpson integrates the cubic exactly)
    assert!(obj < 1e-6, "objective off Moco's by {obj:.2e}");
    assert!(q < 1e-6 && v < 1e-6 && u < 1e-4, "q {q:.2e} m, v {v:.2e} m/s, u {u:.2e} N");
}

#[test]
fn the_pendulum_swing_up_reaches_mocos_optimum() {
    if !ipopt_here("optimize_moco pendulum") {
        return;
    }
    let [obj, q, v, u] = compare("pendulum-swing-up.toml", "pendulum");
    assert!(obj < 1e-6, "objective off Moco's by {obj:.2e}");
    // Moco's peak torque is 6.28 N m
    assert!(q < 1e-4 && v < 1e-4 && u < 1e-3, "q {q:.2e} rad, v {v:.2e} rad/s, u {u:.2e} N m");
}

/// The CasADi peer's grid (`t, q, v, s_biceps, s_triceps, a_biceps, a_triceps, e_biceps,
/// e_triceps` per row) and its objective, from `tests/data/casadi/elbow_flexion.csv`.
fn casadi_elbow() -> (Vec<Vec<f64>>, f64) {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/casadi/elbow_flexion.csv");
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let objective = text
        .lines()
        .find_map(|l| l.strip_prefix("# objective: "))
        .and_then(|v| v.trim().parse().ok())
        .expect("the reference's objective line");
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    assert_eq!(lines.next(), Some("t,q,v,s:biceps,s:triceps,a:biceps,a:triceps,e:biceps,e:triceps"));
    (lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect(), objective)
}

// The elbow's tolerances at the 51 grid points: q (rad), v (rad/s), s (m), a and e (0..1); the
// objective's, relative: 1e-6. Measured: 1.7e-9; 1.8e-6 rad, 3.3e-5 rad/s, 7.8e-8 m, 4.7e-6, 2.5e-5.
// The forearm's mass 1 % heavier in the model moves the objective by 5.5e-3 and q by 3.5e-4 rad.
const TOL_Q: f64 = 1e-4;
const TOL_V: f64 = 1e-3;
const TOL_S: f64 = 1e-6;
const TOL_A: f64 = 1e-4;
const TOL_E: f64 = 1e-3;

#[test]
fn the_elbow_flexion_reaches_the_casadi_peers_optimum() {
    if !ipopt_here("optimize elbow against CasADi") {
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/optimal-control/elbow-flexion.toml");
    // the problem file's L-BFGS Hessian, then the exact one (a rotation with its muscles and law)
    // for the comparison printed: it stops at a neighbouring stationary point (docs)
    let mut exact = OptimizeRun::read(Path::new(path), &mollier::registry()).expect("problem reads");
    exact.spec.solver.hessian = Some(mollier::optimize::HessianSpec::Exact);
    let runs = [OptimizeRun::read(Path::new(path), &mollier::registry()).expect("problem reads"), exact];
    let mut solved = None;
    for run in &runs {
        let t0 = std::time::Instant::now();
        let s = run.solve().expect("solves");
        let summary = s.summary();
        eprintln!(
            "{} iterations, {:.2} s, objective {:.9}, {}",
            summary["iterations"],
            t0.elapsed().as_secs_f64(),
            s.solved.ipopt.objective,
            summary["hessian"]
        );
        solved.get_or_insert(s);
    }
    let solved = solved.expect("solved");
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    let (rows, objective) = casadi_elbow();
    let points = &solved.solved.points;
    assert_eq!(points.len(), rows.len());
    let off = (solved.solved.ipopt.objective - objective).abs() / objective;
    // the largest differences: q (rad), v (rad/s), s (m), a, e
    let mut d = [0.0f64; 5];
    for (p, r) in points.iter().zip(&rows) {
        assert!((p.time - r[0]).abs() < 1e-12);
        let column = [0, 1, 2, 2, 3, 3];
        for (j, x) in p.x.iter().enumerate() {
            d[column[j]] = d[column[j]].max((x - r[1 + j]).abs());
        }
        for (k, e) in p.excitations.iter().enumerate() {
            d[4] = d[4].max((e - r[7 + k]).abs());
        }
    }
    eprintln!(
        "objective {:.6e} relative, q {:.1e} rad, v {:.1e} rad/s, s {:.1e} m, a {:.1e}, e {:.1e}",
        off, d[0], d[1], d[2], d[3], d[4]
    );
    assert!(off < 1e-6, "objective {} against the peer's {objective}", solved.solved.ipopt.objective);
    assert!(d[0] < TOL_Q && d[1] < TOL_V && d[2] < TOL_S && d[3] < TOL_A && d[4] < TOL_E, "{d:?}");
}

/// The elbow of `elbow-dgf.osim` (two `DeGrooteFregly2016Muscle`, imported with their own curves)
/// flexed 30° in 0.5 s with the least `∫ Σ e² dt` (`models/optimal-control/elbow-dgf.toml`)
/// against Moco's optimum of the same problem on the same 25 Hermite-Simpson intervals
/// (`elbow_dgf.csv`: time, q, v, the activations, the normalized tendon forces, the excitations).
/// Mollier's states are `s = L_CE cos φ`, Moco's the normalized tendon force: the same
/// continuous problem, discretized apart. Measured (IPOPT's tolerance 1e-11, as the problem file
/// sets it): objective 5.9e-7 relative; q 3.5e-6 rad, v 1.0e-4 rad/s, a 1.2e-5, e 4.6e-5 (of a
/// peak 0.166), normalized tendon force 4.0e-5 (both start with the tendons in equilibrium at rest:
/// Moco through `MocoInitialVelocityEquilibriumDGFGoal`).
#[test]
fn the_elbow_with_de_groote_fregly_muscles_reaches_mocos_optimum() {
    if !ipopt_here("optimize_moco elbow with DeGrooteFregly2016Muscle") {
        return;
    }
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/optimal-control/elbow-dgf.toml");
    let run = OptimizeRun::read(Path::new(path), &mollier::registry()).expect("problem reads");
    let solved = run.solve().expect("solves");
    assert!(solved.solved.ipopt.converged(), "{}", solved.solved.ipopt.status_name());
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/moco/");
    let info: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{dir}elbow_dgf.json")).unwrap()).unwrap();
    assert_eq!(info["success"], true);
    let objective = info["objective"].as_f64().unwrap();
    let csv = std::fs::read_to_string(format!("{dir}elbow_dgf.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "time,q,v,biceps.activation,triceps.activation,biceps.normalized_tendon_force,\
             triceps.normalized_tendon_force,biceps.excitation,triceps.excitation"
        )
    );
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|x| x.parse().unwrap()).collect()).collect();
    let points = &solved.solved.points;
    assert_eq!(points.len(), rows.len());
    let max_force: Vec<f64> = run.compiled.muscles.iter().map(|m| m.hill.params.max_force).collect();
    // the largest differences: q (rad), v (rad/s), a, normalized tendon force, e
    let mut d = [0.0f64; 5];
    for ((p, r), muscles) in points.iter().zip(&rows).zip(&solved.muscles) {
        assert!((p.time - r[0]).abs() < 1e-12);
        d[0] = d[0].max((p.x[0] - r[1]).abs());
        d[1] = d[1].max((p.x[1] - r[2]).abs());
        for k in 0..2 {
            d[2] = d[2].max((p.x[4 + k] - r[3 + k]).abs());
            d[3] = d[3].max((muscles[k][2] / max_force[k] - r[5 + k]).abs());
            d[4] = d[4].max((p.excitations[k] - r[7 + k]).abs());
        }
    }
    let off = (solved.solved.ipopt.objective - objective).abs() / objective;
    println!(
        "objective {off:.1e} relative, q {:.1e} rad, v {:.1e} rad/s, a {:.1e}, F_T {:.1e}, e {:.1e}",
        d[0], d[1], d[2], d[3], d[4]
    );
    // the issue asks for 1 %
    assert!(off < 1e-5, "objective {} against Moco's {objective}", solved.solved.ipopt.objective);
    assert!(d[0] < 1e-4 && d[1] < 1e-3 && d[2] < 2e-4 && d[3] < 2e-4 && d[4] < 5e-4, "{d:?}");
}
