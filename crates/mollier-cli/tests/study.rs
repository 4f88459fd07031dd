//! `mollier study`: the shoulder abduction study on three frames writes its tables, summaries
//! and plots and exits 0; an invalid study exits 2.

use std::path::{Path, PathBuf};
use std::process::Command;

fn shoulder() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder")
}

fn temp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mollier-cli-study-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The abduction study with three frames and two criteria, its paths made absolute.
fn small_study(dir: &Path) -> PathBuf {
    let text = std::fs::read_to_string(shoulder().join("abduction.toml")).unwrap();
    let text = text
        .replace(
            "model = \"shoulder.toml\"",
            &format!("model = {:?}", shoulder().join("shoulder.toml").display().to_string()),
        )
        .replace("frames = 37", "frames = 3")
        .replace("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = [\"b\", \"c\"]");
    let p = dir.join("study.toml");
    std::fs::write(&p, text).unwrap();
    p
}

/// Run the small study in a fresh directory: the results' directory and the run.
fn run_small_study(name: &str) -> (PathBuf, std::process::Output) {
    let dir = temp(name);
    let out = dir.join("results");
    let run = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .arg("study")
        .arg(small_study(&dir))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    (out, run)
}

#[test]
fn study_writes_its_results() {
    let (out, run) = run_small_study("ok");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    assert!(stdout.contains("b-glenoid") && stdout.contains("3/3 solved"), "{stdout}");
    for f in [
        "summary.json",
        "kinematics.csv",
        "lengths.csv",
        "moment_arms.csv",
        "b-glenoid/forces.csv",
        "c-free/stability.csv",
        "plots/glenoid.svg",
        "plots/landmarks.svg",
        "plots/forces_b-free.svg",
        "view.html",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    // the page is listed with the outputs and carries the shown variant's forces
    let summary = std::fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"view.html\""), "{summary}");
    let page = std::fs::read_to_string(out.join("view.html")).unwrap();
    assert!(page.contains("forces of b-glenoid") && !page.contains("\"forces\":null"));
}

#[test]
fn an_invalid_study_exits_2() {
    let dir = temp("bad");
    let p = small_study(&dir);
    let text = std::fs::read_to_string(&p).unwrap().replace("criteria = [\"b\", \"c\"]", "criteria = [\"x\"]");
    std::fs::write(&p, text).unwrap();
    let run = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .arg("study")
        .arg(&p)
        .arg("--out")
        .arg(dir.join("r"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("criterion"));
    let run = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .arg("study")
        .arg(dir.join("none.toml"))
        .arg("--out")
        .arg(dir.join("r"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
}

#[test]
fn the_studys_motion_file_reproduces_a_variant_through_mollier_inverse() {
    // the same load sharing by two routes: the study's variant, and `mollier inverse` on the
    // model with the motion the study wrote
    let (out, run) = run_small_study("inverse");
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let inv = out.with_file_name("inverse");
    let run = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .arg("inverse")
        .arg(shoulder().join("shoulder.toml"))
        .args(["--motion", out.join("motion.csv").to_str().unwrap()])
        .args(["--criterion", "c", "--static", "--no-cone", "--out", inv.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let table = |p: PathBuf| -> Vec<std::collections::HashMap<String, String>> {
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let mut lines = text.lines();
        let header: Vec<String> = lines.next().unwrap().split(',').map(str::to_string).collect();
        lines.map(|l| header.iter().cloned().zip(l.split(',').map(str::to_string)).collect()).collect()
    };
    let (study, inverse) = (table(out.join("c-free/forces.csv")), table(inv.join("forces.csv")));
    assert_eq!((study.len(), inverse.len()), (3, 3));
    let mut compared = 0;
    for (a, b) in study.iter().zip(&inverse) {
        for (name, v) in b.iter().filter(|(k, _)| *k != "time") {
            let (x, y): (f64, f64) = (a[name].parse().unwrap(), v.parse().unwrap());
            assert!((x - y).abs() <= 1e-6 * x.abs().max(1.0), "{name}: study {x} N, inverse {y} N");
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * 95);
}
