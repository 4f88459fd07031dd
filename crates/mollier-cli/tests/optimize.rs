//! `mollier optimize`: the sliding mass's files and its closed-form optimum (F = m (6 − 12 t),
//! 48 N² s), and a wrong problem file refused with exit code 2 at `file:line:col`. Without IPOPT
//! the solve test says SKIPPED (under CI=true it fails).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mollier-cli-optimize-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn mollier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mollier")).args(args).output().unwrap()
}

fn problems() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control")
}

#[test]
fn the_sliding_mass_writes_its_tables_and_the_closed_form_optimum() {
    let dir = temp("sliding");
    let out = dir.join("results");
    let problem = problems().join("sliding-mass-effort.toml");
    let o = mollier(&["optimize", problem.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if stderr.contains("IPOPT is not available") {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{stderr}");
        println!("SKIPPED: optimize sliding mass: {stderr}");
        return;
    }
    assert!(o.status.success(), "{stderr}");
    for f in ["states.csv", "controls.csv", "convergence.csv", "units.csv", "summary.json", "timing.json"] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["status"], "Solve_Succeeded");
    assert!((summary["objective"].as_f64().unwrap() - 48.0).abs() < 1e-6, "{summary}");
    let controls = std::fs::read_to_string(out.join("controls.csv")).unwrap();
    let mut lines = controls.lines();
    assert_eq!(lines.next(), Some("time,force.control,force.force"));
    let mut rows = 0;
    for l in lines {
        let v: Vec<f64> = l.split(',').map(|x| x.parse().unwrap()).collect();
        assert!((v[2] - 2.0 * (6.0 - 12.0 * v[0])).abs() < 1e-4, "{l}");
        rows += 1;
    }
    assert_eq!(rows, 101);
    let convergence = std::fs::read_to_string(out.join("convergence.csv")).unwrap();
    assert!(convergence.starts_with("iter,objective,inf_pr,inf_du,"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_wrong_problem_file_is_refused_at_its_place() {
    let dir = temp("wrong");
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control/sliding-mass.toml");
    std::fs::copy(model, dir.join("sliding-mass.toml")).unwrap();
    let problem = dir.join("problem.toml");
    std::fs::write(
        &problem,
        "model = \"sliding-mass.toml\"\nduration = 1.0\nintervals = 4\n\n[final]\n\"block.y\" = 1\n",
    )
    .unwrap();
    let out = dir.join("results");
    let o = mollier(&["optimize", problem.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("problem.toml:6:") && stderr.contains("final.block.y"), "{stderr}");
    assert!(!out.exists(), "nothing is written for a refused file");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn without_ipopt_the_command_says_how_to_install_it() {
    let dir = temp("no-ipopt");
    let out = dir.join("results");
    let problem = problems().join("sliding-mass-effort.toml");
    let o = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .args(["optimize", problem.to_str().unwrap(), "--out", out.to_str().unwrap()])
        .env("MOLLIER_IPOPT", dir.join("no-such-libipopt.so"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("IPOPT is not available") && stderr.contains("tools/install-ipopt"), "{stderr}");
    assert!(!out.exists(), "nothing is written without a solve");
    std::fs::remove_dir_all(&dir).unwrap();
}
