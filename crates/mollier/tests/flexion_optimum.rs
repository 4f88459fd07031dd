//! The shoulder's flexion solved by direct collocation (docs/optimal-control.md, "The shoulder's
//! flexion"). The committed solutions (`tests/data/flexion-{track,predict}`: the last stage of
//! `models/optimal-control/tools/solve_flexion.sh track|predict`, IPOPT's `Solve_Succeeded` at
//! the problem file's tolerances after solves of 17 and 8 minutes) are evaluated where IPOPT
//! starts from them with the problem files as committed: the objective is the committed one, the
//! residuals are within the file's `constr_viol_tol`, and IPOPT's iteration 0 is the committed
//! run's last (its primal and scaled dual infeasibility and barrier parameter, from
//! `convergence.csv`) with the complementarity and unscaled dual infeasibility that run printed:
//! the solutions are stationary to the problem files' tolerances. The predicted optimum's
//! excitations there are held to flexion EMG's pattern, the criterion of `tests/flexion.rs`
//! (docs/optimal-control.md, "The EMG pattern"). Needs IPOPT (`tools/install-ipopt`): without it
//! the tests say SKIPPED, under CI=true they fail.

use std::path::{Path, PathBuf};

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().expect("the repository")
}

/// IPOPT at a committed optimum: the objective, `inf_pr`, `inf_du` (scaled) and `lg(μ)` of its
/// iteration 0, the largest residual of the dynamics and the defects there (N, N m and the
/// states' units), and the scaled and unscaled dual infeasibility and complementarity of its
/// output file's last table.
#[derive(Debug)]
struct AtOptimum {
    row: [f64; 4],
    residual: f64,
    dual: [f64; 2],
    complementarity: [f64; 2],
}

/// Evaluate the committed optimum of `shoulder-flexion-KIND.toml` where IPOPT starts from it
/// (its variables and multipliers, `max_iterations = 0`, IPOPT's output file at print level 5,
/// the problem file as committed otherwise), and its `muscles.csv` there.
fn evaluate_optimum(kind: &str) -> (AtOptimum, String) {
    let root = root();
    let problem = root.join(format!("models/optimal-control/shoulder-flexion-{kind}.toml"));
    let data = root.join(format!("crates/mollier/tests/data/flexion-{kind}/states.csv"));
    let model = root.join("models/shoulder/shoulder-forward.toml");
    // one directory per evaluation: the tests run in parallel
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("mollier-flexion-optimum-{}-{kind}-{run}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let report = dir.join("ipopt.out");
    let text = std::fs::read_to_string(&problem).unwrap();
    let text: Vec<String> = text
        .lines()
        .filter(|l| !l.starts_with("guess = "))
        .map(|l| match l {
            l if l.starts_with("model = ") => format!("model = \"{}\"", model.display()),
            l if l.starts_with("max_iterations = ") => "max_iterations = 0".to_string(),
            "[solver.ipopt]" => format!("{l}\noutput_file = \"{}\"\nfile_print_level = 5", report.display()),
            l => l.to_string(),
        })
        .collect();
    let guess = format!("guess = {{ file = \"{}\", warm_start = true }}", data.display());
    std::fs::write(dir.join("problem.toml"), format!("{guess}\n{}\n", text.join("\n"))).unwrap();
    let out = dir.join("out");
    mollier::optimize::run(&dir.join("problem.toml"), &mollier::registry(), || mollier::OutputDir::create(&out))
        .unwrap_or_else(|e| panic!("{kind}: {e}"));
    let convergence = table_rows(&std::fs::read_to_string(out.join("convergence.csv")).unwrap());
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let residual = ["max_dynamics_residual", "max_defect"].map(|k| summary[k].as_f64().expect("a residual"));
    let report = std::fs::read_to_string(&report).unwrap();
    let muscles = std::fs::read_to_string(out.join("muscles.csv")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let r = &convergence[0];
    let at = AtOptimum {
        row: [r[1], r[2], r[3], r[4]],
        residual: residual[0].max(residual[1]),
        dual: scaled_unscaled(&report, "Dual infeasibility"),
        complementarity: scaled_unscaled(&report, "Complementarity"),
    };
    (at, muscles)
}

/// The scaled and unscaled figures of the line of IPOPT's final table that starts with `name`
/// (`Dual infeasibility......:   9.8e-04    6.5e-01`).
fn scaled_unscaled(report: &str, name: &str) -> [f64; 2] {
    let line = report.lines().rev().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("no `{name}` in {report}"));
    let v: Vec<f64> = line.split(':').nth(1).expect("a colon").split_whitespace().map(|x| x.parse().unwrap()).collect();
    [v[0], v[1]]
}

/// The rows of a CSV table of numbers (its header passed over).
fn table_rows(text: &str) -> Vec<Vec<f64>> {
    text.lines().skip(1).map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect()).collect()
}

/// The committed run's summary (its status and objective) and the last row of its
/// convergence table (`inf_pr`, `inf_du` scaled, `lg(μ)`).
fn committed(kind: &str) -> (String, f64, [f64; 3]) {
    let data = root().join(format!("crates/mollier/tests/data/flexion-{kind}"));
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("summary.json")).unwrap()).unwrap();
    let rows = table_rows(&std::fs::read_to_string(data.join("convergence.csv")).unwrap());
    let last = rows.last().expect("a row");
    let status = v["status"].as_str().expect("a status").to_string();
    (status, v["objective"].as_f64().expect("an objective"), [last[2], last[3], last[4]])
}

#[test]
fn the_tracked_flexion_is_a_stationary_point_at_its_objective() {
    if !ipopt_here("the tracked flexion") {
        return;
    }
    // the committed run's IPOPT output: dual infeasibility 9.8e-4 scaled, 0.65 unscaled,
    // complementarity 3.3e-5 (docs/optimal-control.md, "The shoulder's flexion")
    checked_optimum("track", 0.65, 3.3e-5);
}

/// The committed solution of `KIND`, evaluated: `Solve_Succeeded`, the committed objective, the
/// residuals within `constr_viol_tol` (1e-3 N or N m), and IPOPT's start where the committed
/// run stopped: `inf_pr`, `inf_du` and `μ` its last row's, the unscaled dual infeasibility
/// `dual` and the complementarity `complementarity` (both as that run printed them, 2 digits)
/// within 5 %. Each is within the tolerances of IPOPT's test (`tol` 1e-3 on the scaled figures,
/// `constr_viol_tol` 1e-3, IPOPT's defaults `dual_inf_tol` 1 on the unscaled dual
/// infeasibility and `compl_inf_tol` 1e-4), so the point is stationary to them. Returns its
/// `muscles.csv` there.
fn checked_optimum(kind: &str, dual: f64, complementarity: f64) -> String {
    let (status, objective, last) = committed(kind);
    let (at, muscles) = evaluate_optimum(kind);
    eprintln!("the {kind} flexion: {status}, objective {objective}, last row {last:?}; IPOPT there: {at:?}");
    assert_eq!(status, "Solve_Succeeded");
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.abs().max(b.abs());
    assert!(close(at.row[0], objective, 1e-9), "{} against {objective}", at.row[0]);
    assert!(at.residual <= 1e-3, "largest residual {}", at.residual);
    for (k, name) in ["inf_pr", "inf_du", "lg(mu)"].iter().enumerate() {
        assert!(close(at.row[k + 1], last[k], 1e-5), "{name} {} against the last row's {}", at.row[k + 1], last[k]);
    }
    assert!(close(at.dual[0], last[1], 1e-2), "scaled dual infeasibility {:?}", at.dual);
    assert!(close(at.dual[1], dual, 0.05), "unscaled dual infeasibility {:?} against {dual}", at.dual);
    assert!(close(at.complementarity[1], complementarity, 0.05), "complementarity {:?}", at.complementarity);
    assert!(at.dual[0] <= 1e-3 && at.dual[1] <= 1.0 && at.complementarity[1] <= 1e-4, "{at:?}");
    muscles
}

#[test]
fn the_predicted_flexion_is_stationary_and_shows_flexion_emg() {
    if !ipopt_here("the predicted flexion") {
        return;
    }
    // the committed run's IPOPT output: dual infeasibility 9.3e-4 scaled, 0.70 unscaled,
    // complementarity 1.4e-6 (docs/optimal-control.md, "The shoulder's flexion")
    let muscles = checked_optimum("predict", 0.70, 1.4e-6);
    // flexion EMG's pattern (tests/flexion.rs): serratus anterior and the anterior deltoid each
    // at a mean excitation of 0.1 or more and within a factor of 2 of each other; the grid's
    // times carry rounding, so a window holds the points in [from, to) less 1e-9 s
    for (from, to) in [(0.3, 0.6), (0.6, 0.9), (0.9, 1.31)] {
        let serratus = window_mean(&muscles, "serratus_anterior_", from, to);
        let deltoid = window_mean(&muscles, "deltoideus_clavicular_", from, to);
        eprintln!("{from}-{to} s: serratus anterior {serratus:.3}, anterior deltoid {deltoid:.3}");
        assert!(serratus >= 0.1 && deltoid >= 0.1, "{from}-{to} s: serratus {serratus}, deltoid {deltoid}");
        assert!((0.5..=2.0).contains(&(serratus / deltoid)), "{from}-{to} s: serratus {serratus}, deltoid {deltoid}");
    }
}

/// The mean excitation in `muscles.csv` of the muscles whose names start with `prefix` over the
/// rows in `[from, to)` less 1e-9 s.
fn window_mean(muscles: &str, prefix: &str, from: f64, to: f64) -> f64 {
    let mut lines = muscles.lines();
    let header: Vec<&str> = lines.next().expect("a header").split(',').collect();
    let cols: Vec<usize> = (0..header.len())
        .filter(|&k| header[k].strip_suffix(".excitation").is_some_and(|m| m.starts_with(prefix)))
        .collect();
    let (mut sum, mut count) = (0.0, 0usize);
    for l in lines {
        let v: Vec<f64> = l.split(',').map(|x| x.parse().expect("a number")).collect();
        if from - 1e-9 <= v[0] && v[0] < to - 1e-9 {
            sum += cols.iter().map(|&k| v[k]).sum::<f64>();
            count += cols.len();
        }
    }
    assert!(count > 0, "no excitations of {prefix} in [{from}, {to})");
    sum / count as f64
}
