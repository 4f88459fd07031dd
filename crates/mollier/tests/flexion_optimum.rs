//! The shoulder's flexion solved by direct collocation (docs/optimal-control.md, "The shoulder's
//! flexion"). The committed solutions (`tests/data/flexion-{track,predict}`: the last stage of
//! `models/optimal-control/tools/solve_flexion.sh track|predict`, IPOPT's `Solve_Succeeded` at
//! the problem file's tolerances after solves of 17 and 49 minutes) are evaluated where IPOPT
//! starts from them with the problem files as committed: the objective is the committed one and
//! the residuals are within the file's `constr_viol_tol`. The predicted optimum's excitations do
//! not show flexion EMG's pattern (docs/optimal-control.md), so no test holds them to it. Needs
//! IPOPT (`tools/install-ipopt`): without it the tests
//! say SKIPPED, under CI=true they fail.

use std::path::{Path, PathBuf};

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

/// Evaluate the committed optimum of `shoulder-flexion-KIND.toml` where IPOPT starts from it
/// (its variables and multipliers, `max_iterations = 0`, the problem file as committed
/// otherwise): the objective at IPOPT's iteration 0, the largest residual of the dynamics and
/// the defects there (N, N m and the states' units).
fn evaluate_optimum(kind: &str) -> [f64; 2] {
    let root = root();
    let problem = root.join(format!("models/optimal-control/shoulder-flexion-{kind}.toml"));
    let data = root.join(format!("crates/mollier/tests/data/flexion-{kind}/states.csv"));
    let model = root.join("models/shoulder/shoulder-forward.toml");
    let text = std::fs::read_to_string(&problem).unwrap();
    let text: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with("guess = "))
        .map(|l| match l {
            l if l.starts_with("model = ") => format!("model = \"{}\"", model.display()),
            l if l.starts_with("max_iterations = ") => "max_iterations = 0".to_string(),
            l => l.to_string(),
        })
        .collect();
    // one directory per evaluation: the tests run in parallel
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mollier-flexion-optimum-{}-{kind}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let guess = format!("guess = {{ file = \"{}\", warm_start = true }}", data.display());
    std::fs::write(dir.join("problem.toml"), format!("{guess}\n{}\n", text.join("\n"))).unwrap();
    let out = dir.join("out");
    mollier::optimize::run(&dir.join("problem.toml"), &mollier::registry(), || mollier::OutputDir::create(&out))
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    let convergence = table_rows(&std::fs::read_to_string(out.join("convergence.csv")).unwrap());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let residual = ["max_dynamics_residual", "max_defect"].map(|k| summary[k].as_f64().expect("a residual"));
    std::fs::remove_dir_all(&dir).unwrap();
    [convergence[0][1], residual[0].max(residual[1])]
}

/// The rows of a CSV table of numbers (its header passed over).
fn table_rows(text: &str) -> Vec<Vec<f64>> {
    text.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect()).collect()
}

/// The committed run's summary: its status and objective.
fn committed(kind: &str) -> (String, f64) {
    let path = root().join(format!("crates/mollier/tests/data/flexion-{kind}/summary.json"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    (v["status"].as_str().expect("a status").to_string(), v["objective"].as_f64().expect("an objective"))
}

#[test]
fn the_tracked_flexion_is_feasible_at_its_objective() {
    if !ipopt_here("the tracked flexion") {
        return;
    }
    checked_optimum("track");
}

/// The committed solution of `KIND`, evaluated: `Solve_Succeeded`, the committed objective, the
/// residuals within `constr_viol_tol` (1e-3 N or N m).
fn checked_optimum(kind: &str) {
    let (status, objective) = committed(kind);
    let [f, inf_pr] = evaluate_optimum(kind);
    eprintln!("the {kind} flexion: {status}, objective {objective}; IPOPT there: {f}, largest residual {inf_pr}");
    assert_eq!(status, "Solve_Succeeded");
    assert!((f - objective).abs() <= 1e-9 * objective, "{f} against {objective}");
    assert!(inf_pr <= 1e-3, "largest residual {inf_pr}");
}

#[test]
fn the_predicted_flexion_is_feasible_at_its_objective() {
    if !ipopt_here("the predicted flexion") {
        return;
    }
    checked_optimum("predict");
}
