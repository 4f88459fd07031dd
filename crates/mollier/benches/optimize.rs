//! The optimal control problems checked against OpenSim Moco (the sliding mass, the pendulum's
//! swing-up) and the elbow with two muscles (checked against CasADi; Mollier alone), solved by `mollier optimize`'s pipeline and timed, in alternation with Moco's own
//! solve when its Python is given: the speed figures of `docs/performance.md`.
//!
//! ```sh
//! cargo bench -p mollier --bench optimize -- [--rounds N] [--hessian exact|limited-memory]
//!     [--tolerance T] [--moco /work/notes/venv/bin/python]
//! ```
//! Each round solves each problem once (reading the problem file and compiling the model
//! included, writing the tables not) and prints its wall time, iterations, objective and Hessian;
//! with `--moco PYTHON` it then runs `tools/peer_moco_ocp.py` into a temporary directory and
//! reads Moco's `solve_wall_s` (`MocoStudy.solve()` alone) for both. The last lines give per
//! problem the fastest round of each and their ratio.

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
fn solve(file: &Path, hessian: HessianSpec, tolerance: Option<f64>) -> (f64, i64, f64, String) {
    let t0 = Instant::now();
    let mut run = OptimizeRun::read(file, &mollier::registry()).expect("the problem file reads");
    run.spec.solver.hessian = Some(hessian);
    if let Some(tol) = tolerance {
        run.spec.solver.tolerance = tol;
    }
    let solved = run.solve().expect("the problem solves");
    let wall = t0.elapsed().as_secs_f64();
    let s = solved.summary();
    assert!(solved.solved.ipopt.converged(), "{}: {}", file.display(), s["status"]);
    (wall, s["iterations"].as_i64().unwrap_or(-1), solved.solved.ipopt.objective, s["hessian"].to_string())
}

/// Moco's solve times (s) and iterations of the sliding mass and the pendulum.
fn moco(python: &str) -> [(f64, i64); 2] {
    let dir = std::env::temp_dir().join(format!("mollier-bench-moco-{}", std::process::id()));
    let out = std::process::Command::new(python)
        .arg(root().join("tools/peer_moco_ocp.py"))
        .arg(&dir)
        .output()
        .expect("the Moco peer runs");
    assert!(out.status.success(), "tools/peer_moco_ocp.py failed: {}", String::from_utf8_lossy(&out.stderr));
    let read = |name: &str| {
        let text = std::fs::read_to_string(dir.join(format!("{name}.json"))).expect("the peer wrote its summary");
        let v: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        (v["solve_wall_s"].as_f64().expect("solve_wall_s"), v["iterations"].as_i64().unwrap_or(-1))
    };
    let r = [read("sliding_mass"), read("pendulum")];
    let _ = std::fs::remove_dir_all(&dir);
    r
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds").map_or(3, |v| v.parse().expect("--rounds N"));
    let hessian = match arg(&args, "--hessian").as_deref() {
        None | Some("exact") => HessianSpec::Exact,
        Some("limited-memory") => HessianSpec::LimitedMemory,
        Some(other) => panic!("--hessian exact|limited-memory, not `{other}`"),
    };
    let tolerance = arg(&args, "--tolerance").map(|v| v.parse().expect("--tolerance T"));
    let python = arg(&args, "--moco");
    let problems = [
        ("sliding mass", root().join("models/optimal-control/sliding-mass-effort.toml")),
        ("pendulum swing-up", root().join("models/optimal-control/pendulum-swing-up.toml")),
        // no Moco peer in the script: Mollier alone
        ("elbow flexion", root().join("models/optimal-control/elbow-flexion.toml")),
    ];
    let mut best = [[f64::INFINITY; 2]; 3];
    for round in 1..=rounds {
        for (k, (name, file)) in problems.iter().enumerate() {
            let (wall, iterations, objective, h) = solve(file, hessian, tolerance);
            println!(
                "round {round}: {name}: Mollier {wall:.4} s, {iterations} iterations, objective {objective:.9}, {h}"
            );
            best[k][0] = best[k][0].min(wall);
        }
        if let Some(py) = &python {
            for (k, (wall, iterations)) in moco(py).into_iter().enumerate() {
                println!("round {round}: {}: Moco {wall:.4} s, {iterations} iterations", problems[k].0);
                best[k][1] = best[k][1].min(wall);
            }
        }
    }
    for (k, (name, _)) in problems.iter().enumerate() {
        let [m, o] = best[k];
        if python.is_some() && o.is_finite() {
            println!("fastest: {name}: Mollier {m:.4} s, Moco {o:.4} s, ratio {:.1}", o / m);
        } else {
            println!("fastest: {name}: Mollier {m:.4} s");
        }
    }
}
