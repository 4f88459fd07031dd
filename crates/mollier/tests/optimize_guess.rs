//! `guess = { file = "states.csv" }`: a trajectory read (with `muscles.csv`'s excitations when it
//! lies beside it), bad files refused at `file:line:col` with the column, and a solve warm-started
//! from its own optimum converging sooner. The solves need IPOPT (`tools/install-ipopt`):
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
    let problem = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control/elbow-flexion.toml");
    let d = dir_with("warm", "forward/elbow.toml", &[]);
    let out = d.join("first");
    let first =
        mollier::optimize::run(&problem, &mollier::registry(), || mollier::OutputDir::create(&out)).expect("solves");
    assert!(first.converged);
    // the same problem from the tables it wrote (states.csv, muscles.csv's excitations)
    let text = std::fs::read_to_string(&problem).unwrap().replace("../forward/elbow.toml", "elbow.toml");
    let text = format!("guess = {{ file = \"first/states.csv\" }}\n{text}");
    std::fs::write(d.join("warm.toml"), text).unwrap();
    let warm = mollier::optimize::run(&d.join("warm.toml"), &mollier::registry(), || {
        mollier::OutputDir::create(&d.join("second"))
    })
    .expect("solves");
    // the objective at IPOPT's iteration 0, from each run's convergence table
    let start = |run: &str| -> f64 {
        let table = std::fs::read_to_string(d.join(run).join("convergence.csv")).unwrap();
        table.lines().nth(1).and_then(|row| row.split(',').nth(1)).and_then(|v| v.parse().ok()).expect("iteration 0")
    };
    let (cold_start, warm_start) = (start("first"), start("second"));
    std::fs::remove_dir_all(&d).unwrap();
    let (a, b) = (first.summary["objective"].as_f64().unwrap(), warm.summary["objective"].as_f64().unwrap());
    assert!(warm.converged && (a - b).abs() < 1e-6 * a, "objective {a} then {b}");
    // measured: the linear guess starts at 0.0025, the file at 0.05986 (the optimum 0.05994; the
    // implicit rates are not in the file, so the dynamics rows start off; with the file's exact
    // Hessian 15 iterations against 90 from the linear guess)
    assert!((warm_start - a).abs() < 0.01 * a, "the file's start {warm_start}, the optimum {a}");
    assert!((cold_start - a).abs() > 0.5 * a, "the linear guess's start {cold_start}, the optimum {a}");
}
