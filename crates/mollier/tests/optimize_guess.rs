//! `guess = { file = "states.csv" }`: a trajectory read (with `muscles.csv`'s excitations when it
//! lies beside it), bad files refused at `file:line:col` with the column, a solve warm-started
//! from its own optimum converging sooner, and a run continued from its tables (its iterate and
//! multipliers) starting where it stopped. The solves need IPOPT (`tools/install-ipopt`):
//! without it they say SKIPPED, under CI=true they fail.

use std::path::{Path, PathBuf};

use mollier::optimize::OptimizeRun;

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

/// A fresh directory with a copy of `model` (under `models/`) and `files` written into it.
fn dir_with(name: &str, model: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mollier-optimize-guess-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models").join(model);
    std::fs::copy(&src, dir.join(src.file_name().unwrap())).unwrap();
    for (f, text) in files {
        std::fs::write(dir.join(f), text).unwrap();
    }
    dir
}

const PENDULUM: &str = "model = \"pendulum.toml\"\nduration = 1.0\nintervals = 10\nguess = { file = \"states.csv\" }\n\n[actuators.motor]\ncoordinate = \"swing.rotation\"\n";

#[test]
fn a_guess_file_gives_the_states_it_has() {
    let d = dir_with(
        "good",
        "mechanisms/pendulum.toml",
        &[("problem.toml", PENDULUM), ("states.csv", "time,swing.rotation\n0,0\n0.5,1\n1,3\n")],
    );
    let run = OptimizeRun::read(&d.join("problem.toml"), &mollier::registry()).expect("reads");
    std::fs::remove_dir_all(&d).unwrap();
    let g = run.guess.expect("a trajectory");
    assert_eq!(g.time, [0.0, 0.5, 1.0]);
    assert_eq!(g.states[0].as_deref(), Some(&[0.0, 1.0, 3.0][..]));
    assert_eq!(g.states[1], None, "the velocity is not in the file");
    assert!(g.excitations.is_empty());
}

#[test]
fn bad_guess_files_are_refused_at_the_cell_with_the_column() {
    for (name, csv, line, path, says) in [
        ("column", "time,swing.rotaton\n0,0\n", 1, "swing.rotaton", "not a state"),
        ("number", "time,swing.rotation\n0,0\n0.5,x\n", 3, "swing.rotation", "not a finite number"),
        ("nan", "time,swing.rotation\n0,0\n0.5,NaN\n", 3, "swing.rotation", "not a finite number"),
        ("order", "time,swing.rotation\n0,0\n0,1\n", 3, "time", "do not increase"),
        ("short", "time,swing.rotation\n0,0\n0.5\n", 3, "", "1 fields"),
        ("empty", "time,swing.rotation\n", 1, "", "no rows"),
        ("time", "t,swing.rotation\n0,0\n", 1, "", "no `time` column"),
    ] {
        let d = dir_with(name, "mechanisms/pendulum.toml", &[("problem.toml", PENDULUM), ("states.csv", csv)]);
        let err = OptimizeRun::read(&d.join("problem.toml"), &mollier::registry()).err().expect("refused").0;
        std::fs::remove_dir_all(&d).unwrap();
        let e = &err[0];
        assert!(e.file.ends_with("states.csv"), "{name}: {e:?}");
        assert_eq!(e.location.as_ref().map(|l| l.line), Some(line), "{name}: {e:?}");
        assert_eq!(e.path, path, "{name}: {e:?}");
        assert!(e.message.contains(says), "{name}: {e:?}");
    }
    // a missing file is named, not a panic
    let d = dir_with("missing", "mechanisms/pendulum.toml", &[("problem.toml", PENDULUM)]);
    let err = OptimizeRun::read(&d.join("problem.toml"), &mollier::registry()).err().expect("refused").0;
    std::fs::remove_dir_all(&d).unwrap();
    assert!(err[0].file.ends_with("states.csv"), "{err:?}");
}

#[test]
fn muscles_csv_beside_it_gives_the_excitations_on_the_same_times() {
    let problem = "model = \"elbow.toml\"\nduration = 0.5\nintervals = 5\nguess = { file = \"states.csv\" }\n\n[objective]\nexcitation = 1.0\n";
    let states = "time,elbow.rotation\n0,0\n0.5,0.5\n";
    let good = "time,biceps.excitation,biceps.force\n0,0.1,5\n0.5,0.3,7\n";
    let d = dir_with(
        "muscles",
        "forward/elbow.toml",
        &[("problem.toml", problem), ("states.csv", states), ("muscles.csv", good)],
    );
    let run = OptimizeRun::read(&d.join("problem.toml"), &mollier::registry()).expect("reads");
    let g = run.guess.expect("a trajectory");
    let names: Vec<&str> = run.compiled.muscles.iter().map(|m| m.name.as_str()).collect();
    let biceps = names.iter().position(|n| *n == "biceps").expect("a biceps");
    assert_eq!(g.excitations[biceps].as_deref(), Some(&[0.1, 0.3][..]));
    assert!(g.excitations.iter().enumerate().all(|(k, e)| k == biceps || e.is_none()));
    // other times than states.csv's are refused
    std::fs::write(d.join("muscles.csv"), "time,biceps.excitation\n0,0.1\n0.4,0.3\n").unwrap();
    let err = OptimizeRun::read(&d.join("problem.toml"), &mollier::registry()).err().expect("refused").0;
    std::fs::remove_dir_all(&d).unwrap();
    assert!(err[0].file.ends_with("muscles.csv") && err[0].message.contains("differ"), "{err:?}");
    assert_eq!(err[0].location.as_ref().map(|l| l.line), Some(3), "{err:?}");
}

#[test]
fn the_elbow_started_from_its_own_optimum_starts_at_it() {
    if !ipopt_here("elbow warm start") {
        return;
    }
    let (problem, text) = elbow_problem();
    let d = dir_with("warm", "forward/elbow.toml", &[]);
    let first = optimize(&problem, &d.join("first"));
    assert!(first.converged);
    // the same problem from the tables it wrote (states.csv, muscles.csv's excitations)
    let text = format!("guess = {{ file = \"first/states.csv\" }}\n{text}");
    std::fs::write(d.join("warm.toml"), text).unwrap();
    let warm = optimize(&d.join("warm.toml"), &d.join("second"));
    // the objective at IPOPT's iteration 0, from each run's convergence table
    let start = |run: &str| convergence(&d.join(run))[0][1];
    let (cold_start, warm_start) = (start("first"), start("second"));
    std::fs::remove_dir_all(&d).unwrap();
    let (a, b) = (first.summary["objective"].as_f64().unwrap(), warm.summary["objective"].as_f64().unwrap());
    assert!(warm.converged && (a - b).abs() < 1e-6 * a, "objective {a} then {b}");
    // measured: the linear guess starts at 0.0025, the file at 0.05986 (the optimum 0.05994)
    assert!((warm_start - a).abs() < 0.01 * a, "the file's start {warm_start}, the optimum {a}");
    assert!((cold_start - a).abs() > 0.5 * a, "the linear guess's start {cold_start}, the optimum {a}");
}

/// `models/optimal-control/elbow-flexion.toml` and its text with the model beside it
/// (`elbow.toml`, as `dir_with` places it).
fn elbow_problem() -> (PathBuf, String) {
    let problem = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control/elbow-flexion.toml");
    let text = std::fs::read_to_string(&problem).unwrap().replace("../forward/elbow.toml", "elbow.toml");
    (problem, text)
}

/// `mollier optimize` of `problem`, its tables written to `out`.
fn optimize(problem: &Path, out: &Path) -> mollier::optimize::Outcome {
    mollier::optimize::run(problem, &mollier::registry(), || mollier::OutputDir::create(out)).expect("runs")
}

/// A run's `convergence.csv` by row (`iter`, `objective`, `inf_pr`, `inf_du`, `lg_mu`, ...).
fn convergence(dir: &Path) -> Vec<Vec<f64>> {
    let table = std::fs::read_to_string(dir.join("convergence.csv")).unwrap();
    table.lines().skip(1).map(|row| row.split(',').map(|c| c.parse().unwrap()).collect()).collect()
}

/// Row `k` (from the end when negative) of a run's `convergence.csv`: its objective, `inf_pr`
/// and `inf_du`.
fn convergence_row(dir: &Path, k: isize) -> [f64; 3] {
    let rows = convergence(dir);
    let v = &rows[if k < 0 { rows.len() - k.unsigned_abs() } else { k as usize }];
    [v[1], v[2], v[3]]
}

#[test]
fn the_elbow_stopped_and_continued_from_its_tables_goes_on_from_its_iterate() {
    if !ipopt_here("elbow continued") {
        return;
    }
    let (problem, text) = elbow_problem();
    let d = dir_with("continued", "forward/elbow.toml", &[]);
    let write = |name: &str, guess: &str, limit: &str| {
        let t = format!("{guess}\n{}", text.replace("[solver]\n", &format!("[solver]\n{limit}\n")));
        std::fs::write(d.join(name), t).unwrap();
    };
    let run = |name: &str, out: &str| optimize(&d.join(name), &d.join(out));
    // stopped after 30 iterations, far from the optimum
    write("first.toml", "", "max_iterations = 30");
    let first = run("first.toml", "first");
    assert!(!first.converged);
    let last = convergence_row(&d.join("first"), -1);
    // continued with its variables and multipliers: IPOPT's iteration 0 is the first run's last
    write("warm.toml", "guess = { file = \"first/states.csv\", warm_start = true }", "");
    let warm = run("warm.toml", "warm");
    let start = convergence_row(&d.join("warm"), 0);
    // from the states, rates and excitations of the tables (no multipliers; IPOPT pushes the
    // start into the bounds' interior), and from the states and excitations only (the rates
    // the centred differences over the grid)
    write("trajectory.toml", "guess = { file = \"first/states.csv\" }", "");
    run("trajectory.toml", "trajectory");
    let from_rates = convergence_row(&d.join("trajectory"), 0);
    std::fs::remove_file(d.join("first/rates.csv")).unwrap();
    run("trajectory.toml", "no-rates");
    let without_rates = convergence_row(&d.join("no-rates"), 0);
    let full = run_full(&problem, &d);
    std::fs::remove_dir_all(&d).unwrap();
    eprintln!("last {last:?}, warm start {start:?}, from the rates {from_rates:?}, without {without_rates:?}");
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.abs().max(b.abs());
    assert!(close(start[0], last[0], 1e-9) && close(start[1], last[1], 1e-6), "{start:?} against {last:?}");
    assert!(close(start[2], last[2], 1e-6), "inf_du {} against {}", start[2], last[2]);
    assert!(warm.converged, "the continuation converges");
    let (a, b) = (full.summary["objective"].as_f64().unwrap(), warm.summary["objective"].as_f64().unwrap());
    assert!(close(a, b, 1e-6), "the continuation's optimum {b}, the full run's {a}");
    // measured: the rates' start at the first run's last residual (4.938), the centred
    // differences' elsewhere (2.798): the dynamics rows see other rates
    assert!(close(from_rates[1], last[1], 1e-3), "from the rates {from_rates:?}, the last {last:?}");
    assert!(!close(without_rates[1], last[1], 1e-2), "without the rates {without_rates:?}, the last {last:?}");
}

/// The elbow's problem solved in one run (its output under `d`).
fn run_full(problem: &Path, d: &Path) -> mollier::optimize::Outcome {
    let full = optimize(problem, &d.join("full"));
    assert!(full.converged);
    full
}

/// A run's whole convergence table: `inf_pr`, `inf_du` and `lg(μ)` by row.
fn convergence_table(dir: &Path) -> Vec<[f64; 3]> {
    convergence(dir).iter().map(|v| [v[2], v[3], v[4]]).collect()
}

/// The elbow converged under the physical scaling (its variables' factors 1e-2 to 1e2) and
/// continued from its tables with their multipliers: IPOPT's iteration 0 is the run's last
/// (its primal and scaled dual infeasibility and barrier parameter), and it stops at once.
#[test]
fn a_converged_run_continued_from_its_tables_starts_where_it_stopped() {
    if !ipopt_here("elbow converged and continued") {
        return;
    }
    let (_, text) = elbow_problem();
    // IPOPT's monotone barrier update: the adaptive one starts at μ = 1 whatever `mu_init` says
    let text = text.replace("scaling = \"ipopt\"", "scaling = \"physical\"").replace("mu_strategy = \"adaptive\"", "");
    let d = dir_with("stationary", "forward/elbow.toml", &[]);
    std::fs::write(d.join("first.toml"), &text).unwrap();
    let run = |name: &str, out: &str| optimize(&d.join(name), &d.join(out));
    let first = run("first.toml", "first");
    assert!(first.converged);
    std::fs::write(
        d.join("warm.toml"),
        format!("guess = {{ file = \"first/states.csv\", warm_start = true }}\n{text}"),
    )
    .unwrap();
    let warm = run("warm.toml", "warm");
    let (before, after) = (convergence_table(&d.join("first")), convergence_table(&d.join("warm")));
    std::fs::remove_dir_all(&d).unwrap();
    let (last, start) = (before[before.len() - 1], after[0]);
    eprintln!("{} rows, the last {last:?}; continued: {} rows, from {start:?}", before.len(), after.len());
    assert!(warm.converged);
    let close = |a: f64, b: f64, tol: f64| (a - b).abs() <= tol * a.abs().max(b.abs());
    // measured: inf_pr 9.8e-9 and inf_du 8.1e-11 to every digit, IPOPT stopping at iteration 0;
    // before the bounds' multipliers were given to IPOPT as it scales them, inf_du 8.8e-10 and
    // 3 rows; μ to 6 digits (IPOPT keeps a number option as `%g` text)
    assert!(close(start[0], last[0], 1e-3), "inf_pr {} against {}", start[0], last[0]);
    assert!(close(start[1], last[1], 1e-3), "inf_du {} against {}", start[1], last[1]);
    assert!(close(10f64.powf(start[2]), 10f64.powf(last[2]), 1e-5), "lg(mu) {} against {}", start[2], last[2]);
    assert!(after.len() <= 2, "{} rows", after.len());
}
