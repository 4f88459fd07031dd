//! The shoulder's flexion solved by direct collocation (docs/optimal-control.md, "The shoulder's
//! flexion"). The committed solutions (`tests/data/flexion-{track,predict}`: the last stage of
//! `models/optimal-control/tools/solve_flexion.sh track|predict`, IPOPT's `Solve_Succeeded` at
//! the problem file's tolerances after solves of 17 and 49 minutes) are evaluated where IPOPT
//! starts from them with the problem files as committed: the objective is the committed one and
//! the residuals are within the file's `constr_viol_tol`. The predicted flexion's excitations
//! held to flexion EMG fail (the least-effort optimum does not show its pattern: docs), so that
//! test is ignored; `--ignored` runs it. Needs IPOPT (`tools/install-ipopt`): without it the tests
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
/// the defects there (N, N m and the states' units), and the excitations (`muscles.csv`).
fn evaluate_optimum(kind: &str) -> ([f64; 2], Excitations) {
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
    let text = std::fs::read_to_string(out.join("muscles.csv")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let header: Vec<&str> = text.lines().next().expect("a header").split(',').collect();
    let rows = table_rows(&text);
    let muscles = header
        .iter()
        .enumerate()
        .filter_map(|(j, h)| {
            h.strip_suffix(".excitation").map(|m| (m.to_string(), rows.iter().map(|r| r[j]).collect()))
        })
        .collect();
    let time = rows.iter().map(|r| r[0]).collect();
    ([convergence[0][1], residual[0].max(residual[1])], Excitations { time, muscles })
}

/// The rows of a CSV table of numbers (its header passed over).
fn table_rows(text: &str) -> Vec<Vec<f64>> {
    text.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect()).collect()
}

/// The excitations of a `muscles.csv`: times (s), and per muscle its name and values.
struct Excitations {
    time: Vec<f64>,
    muscles: Vec<(String, Vec<f64>)>,
}

/// The mean excitation of the muscles named `prefix*` over the points in `[from, to)`.
fn mean(e: &Excitations, prefix: &str, from: f64, to: f64) -> f64 {
    let v: Vec<f64> = e
        .muscles
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .flat_map(|(_, u)| e.time.iter().zip(u).filter(|(t, _)| (from..to).contains(*t)).map(|(_, u)| *u))
        .collect();
    assert!(!v.is_empty(), "no points of {prefix} in [{from}, {to})");
    v.iter().sum::<f64>() / v.len() as f64
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
/// residuals within `constr_viol_tol` (1e-3 N or N m); its excitations.
fn checked_optimum(kind: &str) -> Excitations {
    let (status, objective) = committed(kind);
    let ([f, inf_pr], e) = evaluate_optimum(kind);
    eprintln!("the {kind} flexion: {status}, objective {objective}; IPOPT there: {f}, largest residual {inf_pr}");
    assert_eq!(status, "Solve_Succeeded");
    assert!((f - objective).abs() <= 1e-9 * objective, "{f} against {objective}");
    assert!(inf_pr <= 1e-3, "largest residual {inf_pr}");
    e
}

#[test]
fn the_predicted_flexion_is_feasible_at_its_objective() {
    if !ipopt_here("the predicted flexion") {
        return;
    }
    checked_optimum("predict");
}

/// Flexion EMG (Wattanaprakornkul et al. 2011, Clin Anat 24:619-626, 15 subjects, sagittal
/// flexion: anterior deltoid, serratus anterior, the trapezius and the cuff "activated at similar
/// moderate levels"): over the elevation the predicted optimum's serratus anterior and anterior
/// deltoid (`deltoideus_clavicular_*`) each at a mean excitation of 0.1 or more, within a factor
/// of 2 of each other (the criterion of `tests/flexion.rs` for the committed forward pattern).
/// Measured on the committed optimum: serratus anterior 0.020, 0.010, 0.018 and the anterior
/// deltoid 0.020, 0.043, 0.136 over the three windows — it fails.
#[test]
#[ignore = "the least-effort optimum does not show flexion EMG's pattern (docs/optimal-control.md)"]
fn the_predicted_flexion_looks_like_flexion_emg() {
    if !ipopt_here("the predicted flexion's EMG") {
        return;
    }
    let e = checked_optimum("predict");
    // the target passes 7°, 34° and 66° of elevation at 0.3, 0.6 and 0.9 s
    for (from, to) in [(0.3, 0.6), (0.6, 0.9), (0.9, 1.31)] {
        let deltoid = mean(&e, "deltoideus_clavicular_", from, to);
        let serratus = mean(&e, "serratus_anterior_", from, to);
        eprintln!("{from}-{to} s: anterior deltoid {deltoid:.3}, serratus anterior {serratus:.3}");
        assert!(deltoid >= 0.1 && serratus >= 0.1, "{from}-{to} s: deltoid {deltoid}, serratus {serratus}");
        assert!(
            (0.5..=2.0).contains(&(serratus / deltoid)),
            "{from}-{to} s: not at similar levels: serratus {serratus}, deltoid {deltoid}"
        );
    }
}
