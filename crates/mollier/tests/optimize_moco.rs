//! `mollier optimize`'s optima against OpenSim Moco 4.6's on the same problems
//! (`models/optimal-control/`; the references written once by `tools/peer_moco_ocp.py` into
//! `tests/data/moco/`): a sliding mass (whose optimum is also known in closed form, 48 N² s) and a
//! pendulum swung up. Both are solved by Hermite-Simpson on 50 intervals as Moco was; the
//! objectives agree within 1e-6 (relative), the states and controls at the 101 grid points within
//! the stated tolerances. Needs IPOPT (`tools/install-ipopt`): without it the tests say SKIPPED,
//! under CI=true they fail.

use std::path::Path;

use mollier::optimize::OptimizeRun;

fn ipopt_here(test: &str) -> bool {
    match mollier_ipopt::available() {
        Ok(()) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("{test}: {e}"),
        Err(e) => {
            println!("SKIPPED: {test}: {e}");
            false
        }
    }
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
    let points = &solved.solved.points;
    assert_eq!(points.len(), rows.len());
    let mut d = [(solved.solved.ipopt.objective - objective).abs() / objective, 0.0, 0.0, 0.0];
    for (p, r) in points.iter().zip(&rows) {
        assert!((p.time - r[0]).abs() < 1e-12);
        d[1] = d[1].max((p.x[0] - r[1]).abs());
        d[2] = d[2].max((p.x[1] - r[2]).abs());
        d[3] = d[3].max((p.controls[0] - r[3]).abs());
    }
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
