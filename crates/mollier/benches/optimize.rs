//! The optimal control problems checked against OpenSim Moco (the sliding mass, the pendulum's
//! swing-up, the elbow with two De Groote-Fregly muscles) and the elbow with two DAS3 muscles
//! (checked against CasADi), solved by `mollier
//! optimize`'s pipeline and timed, in alternation with the peers' own solves when their Pythons
//! are given: the speed figures of `docs/performance.md`.
//!
//! ```sh
//! cargo bench -p mollier --bench optimize -- [--rounds N] [--hessian exact|limited-memory]
//!     [--tolerance T] [--moco OPENSIM_PYTHON] [--casadi CASADI_PYTHON]
//! ```
//! Each round solves each problem once (reading the problem file and compiling the model
//! included, writing the tables not) and prints its wall time, iterations, objective and Hessian
//! (`--hessian` overrides the files' choice); with `--moco PYTHON` it then runs
//! `tools/peer_moco_ocp.py` (and again with `--elbow`) into a temporary directory and reads
//! Moco's `solve_wall_s` (`MocoStudy.solve()` alone) for those three; with `--casadi PYTHON`,
//! `tools/peer_casadi_elbow.py --time` at the elbow's tolerance, its `solve_wall_s` (the solver's
//! call alone, without building the NLP). The last lines give per problem the fastest round of
//! each and their ratio.

use std::path::{Path, PathBuf};
use std::time::Instant;

use mollier::optimize::{HessianSpec, OptimizeRun};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The value after `flag` on the command line.
fn arg(args: &[String], flag: &str) -> Option<String> {
    let i = args.iter().position(|a| a == flag)?;
    Some(args.get(i + 1).unwrap_or_else(|| panic!("{flag} needs a value")).clone())
}

/// One solve: wall time (s), iterations, objective, the Hessian used.
fn solve(file: &Path, hessian: Option<HessianSpec>, tolerance: Option<f64>) -> (f64, i64, f64, String) {
    let t0 = Instant::now();
    let mut run = OptimizeRun::read(file, &mollier::registry()).expect("the problem file reads");
    if hessian.is_some() {
        run.spec.solver.hessian = hessian;
    }
    if let Some(tol) = tolerance {
        run.spec.solver.tolerance = tol;
    }
    let solved = run.solve().expect("the problem solves");
    let wall = t0.elapsed().as_secs_f64();
    let s = solved.summary();
    assert!(solved.solved.ipopt.converged(), "{}: {}", file.display(), s["status"]);
    (wall, s["iterations"].as_i64().unwrap_or(-1), solved.solved.ipopt.objective, s["hessian"].to_string())
}

/// Moco's solve times (s) and iterations of the sliding mass, the pendulum and the elbow with
/// De Groote-Fregly muscles.
fn moco(python: &str) -> [(f64, i64); 3] {
    let dir = std::env::temp_dir().join(format!("mollier-bench-moco-{}", std::process::id()));
    for extra in [None, Some("--elbow")] {
        let out = std::process::Command::new(python)
            .arg(root().join("tools/peer_moco_ocp.py"))
            .arg(&dir)
            .args(extra)
            .output()
            .expect("the Moco peer runs");
        assert!(out.status.success(), "tools/peer_moco_ocp.py failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    let read = |name: &str| {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("the peer wrote its summary");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        (v["solve_wall_s"].as_f64().expect("solve_wall_s"), v["iterations"].as_i64().unwrap_or(-1))
    };
    let r = [read("sliding_mass"), read("pendulum"), read("elbow_dgf")];
    let _ = std::fs::remove_dir_all(&dir);
    r
}

/// CasADi's solve time (s), iterations and objective of the elbow at IPOPT's `tol`.
fn casadi(python: &str, tol: f64) -> (f64, i64, f64) {
    let dir = std::env::temp_dir().join(format!("mollier-bench-casadi-{}", std::process::id()));
    let out = std::process::Command::new(python)
        .arg(root().join("tools/peer_casadi_elbow.py"))
        .args(["--time".as_ref(), dir.as_os_str(), "--tol".as_ref(), tol.to_string().as_ref()])
        .output()
        .expect("the CasADi peer runs");
    assert!(out.status.success(), "tools/peer_casadi_elbow.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(dir.join("elbow.json")).expect("the peer wrote its summary");
    let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let _ = std::fs::remove_dir_all(&dir);
    let number = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k} in {text}"));
    (number("solve_wall_s"), v["iterations"].as_i64().unwrap_or(-1), number("objective"))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds").map_or(3, |v| v.parse().expect("--rounds N"));
    let hessian = match arg(&args, "--hessian").as_deref() {
        None => None,
        Some("exact") => Some(HessianSpec::Exact),
        Some("limited-memory") => Some(HessianSpec::LimitedMemory),
        Some(other) => panic!("--hessian exact|limited-memory, not `{other}`"),
    };
    let tolerance = arg(&args, "--tolerance").map(|v| v.parse().expect("--tolerance T"));
    let python = arg(&args, "--moco");
    let casadi_python = arg(&args, "--casadi");
    let problems = [
        ("sliding mass", root().join("models/optimal-control/sliding-mass-effort.toml")),
        ("pendulum swing-up", root().join("models/optimal-control/pendulum-swing-up.toml")),
        ("elbow, De Groote-Fregly muscles", root().join("models/optimal-control/elbow-dgf.toml")),
        // DAS3's muscles, which Moco cannot express: CasADi's peer (`--casadi`)
        ("elbow flexion", root().join("models/optimal-control/elbow-flexion.toml")),
    ];
    // the problems' indices Moco's three summaries belong to, and the CasADi one's
    let (moco_problems, casadi_problem) = ([0, 1, 2], 3);
    let mut best = [[f64::INFINITY; 2]; 4];
    for round in 1..=rounds {
        for (k, (name, file)) in problems.iter().enumerate() {
            let (wall, iterations, objective, h) = solve(file, hessian, tolerance);
            println!(
                "round {round}: {name}: Mollier {wall:.4} s, {iterations} iterations, objective {objective:.9}, {h}"
            );
            best[k][0] = best[k][0].min(wall);
        }
        if let Some(py) = &python {
            for (k, (wall, iterations)) in moco_problems.into_iter().zip(moco(py)) {
                println!("round {round}: {}: Moco {wall:.4} s, {iterations} iterations", problems[k].0);
                best[k][1] = best[k][1].min(wall);
            }
        }
        if let Some(py) = &casadi_python {
            // the elbow's own tolerance (its file's, or --tolerance) on both sides
            let tol = tolerance.unwrap_or(
                OptimizeRun::read(&problems[casadi_problem].1, &mollier::registry())
                    .expect("reads")
                    .spec
                    .solver
                    .tolerance,
            );
            let (wall, iterations, objective) = casadi(py, tol);
            println!(
                "round {round}: {}: CasADi {wall:.4} s, {iterations} iterations, objective {objective:.9}",
                problems[casadi_problem].0
            );
            best[casadi_problem][1] = best[casadi_problem][1].min(wall);
        }
    }
    for (k, (name, _)) in problems.iter().enumerate() {
        let [m, o] = best[k];
        let peer = if k == casadi_problem {
            casadi_python.as_ref().map(|_| "CasADi")
        } else {
            python.as_ref().map(|_| "Moco")
        };
        if let (Some(peer), true) = (peer, o.is_finite()) {
            println!("fastest: {name}: Mollier {m:.4} s, {peer} {o:.4} s, ratio {:.1}", o / m);
        } else {
            println!("fastest: {name}: Mollier {m:.4} s");
        }
    }
}
