//! The `mollier` command as a user runs it: outputs, files and exit codes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mechanism(name: &str) -> PathBuf {
    root().join("models/mechanisms").join(name)
}

fn mollier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mollier")).args(args).current_dir(root()).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A fresh scratch directory for one test.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mollier-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn check_reports_a_well_posed_mechanism() {
    let out = mollier(&["check", "models/mechanisms/four-bar.toml"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("inputs (1): crank_joint.rotation"), "{stdout}");
    assert!(stdout.contains("degrees of freedom: 1"), "{stdout}");
    assert!(stdout.contains("well posed: yes"), "{stdout}");
    assert!(stdout.contains("rocker_joint  hinge  rotation (free), bending_y, bending_z"), "{stdout}");
}

#[test]
fn check_json_gives_one_object_per_model() {
    for (file, dof) in [("four-bar.toml", 1), ("slider-crank.toml", 1), ("spherical-joint.toml", 3), ("rssr.toml", 1)] {
        let out = mollier(&["check", path_str(&mechanism(file)), "--json"]);
        assert_eq!(out.status.code(), Some(0), "{file}: {}", text(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(v["dof"].as_u64(), Some(dof), "{file}");
        assert_eq!(v["well_posed"], serde_json::json!(true), "{file}");
        assert_eq!(v["diagnostics"], serde_json::json!([]), "{file}");
        assert!(v["nodes"].as_array().is_some_and(|n| !n.is_empty()), "{file}");
        assert!(v["elements"].as_array().is_some_and(|n| !n.is_empty()), "{file}");
        assert_eq!(v["inputs"].as_array().map(Vec::len), Some(dof as usize), "{file}");
    }
}

const HINGED_FOUR_BAR: &str = r#"format_version = 1
fixed = ["ground"]
inputs = ["crank_joint.rotation"]
free = ["rocker_joint.rotation", "coupler_joint.rotation", "pin_joint.rotation"]

[bodies.ground]
origin = [0, 0, 0]
points = { D = [1, 0, 0] }

[bodies.crank]
origin = "ground"
points = { B = [0, 0.4, 0] }

[bodies.coupler]
origin = "crank.B"
points = { C = [1.3, 0.4, 0] }

[bodies.rocker]
origin = "ground.D"
points = { C = "coupler.C" }

[elements.crank_joint]
type = "hinge"
p = "ground"
q = "crank"
axis = [0, 0, 1]

[elements.coupler_joint]
type = "hinge"
p = "crank"
q = "coupler"
axis = [0, 0, 1]

[elements.pin_joint]
type = "hinge"
p = "coupler"
q = "rocker"
axis = [0, 0, 1]

[elements.rocker_joint]
type = "hinge"
p = "ground"
q = "rocker"
axis = [0, 0, 1]
"#;

#[test]
fn check_exits_1_for_a_model_that_is_not_well_posed() {
    let dir = scratch("not-well-posed");
    let model = dir.join("hinged.toml");
    std::fs::write(&model, HINGED_FOUR_BAR).expect("write");
    let out = mollier(&["check", path_str(&model), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(
        (v["well_posed"].as_bool(), v["dof"].as_u64(), v["redundant"].as_u64()),
        (Some(false), Some(1), Some(3))
    );
    let diags: Vec<&str> = v["diagnostics"].as_array().expect("array").iter().filter_map(|d| d.as_str()).collect();
    assert!(diags.iter().any(|d| d.contains("over-constrained by 3") && d.contains(".bending_")), "{diags:?}");
    // and kinematics refuses it, saying why
    let out = mollier(&[
        "kinematics",
        path_str(&model),
        "--motion",
        "models/mechanisms/four-bar-motion.csv",
        "--out",
        path_str(&dir.join("out")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("not well posed"), "{}", text(&out.stderr));
}

#[test]
fn check_exits_2_with_located_errors_for_an_invalid_file() {
    let dir = scratch("invalid");
    let model = dir.join("typo.toml");
    let src = std::fs::read_to_string(mechanism("four-bar.toml"))
        .expect("model")
        .replace("q = \"rocker.C\"", "q = \"rocker.c\"");
    std::fs::write(&model, src).expect("write");
    let out = mollier(&["check", path_str(&model)]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    let want = format!("{}:49:5: error: elements.coupler.q: no node, body or point called `rocker.c`", model.display());
    assert!(stderr.starts_with(&want), "{stderr}");
    assert!(stderr.contains("49 | q = \"rocker.c\"\n   |     ^^^^^^^^^^"), "{stderr}");
    assert!(stderr.contains("= hint: did you mean `rocker.C`?"), "{stderr}");
    let out = mollier(&["check", path_str(&model), "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["errors"][0]["line"].as_u64(), Some(49));
    assert_eq!(v["errors"][0]["path"].as_str(), Some("elements.coupler.q"));
    assert_eq!(v["well_posed"], serde_json::json!(false));
    // a missing file, and inputs that do not match the degrees of freedom
    assert_eq!(mollier(&["check", "no/such/model.toml"]).status.code(), Some(2));
    let src = std::fs::read_to_string(mechanism("four-bar.toml"))
        .expect("model")
        .replace("inputs = [\"crank_joint.rotation\"]", "inputs = [\"crank_joint.rotation\", \"crank.B.z\"]");
    std::fs::write(&model, src).expect("write");
    let out = mollier(&["check", path_str(&model)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(":15:10: error: inputs: the mechanism has 1 degree of freedom"),
        "{}",
        text(&out.stderr)
    );
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = t.lines();
    let header = lines.next().expect("header").split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|v| v.parse().expect("number")).collect()).collect();
    (header, rows)
}

#[test]
fn kinematics_writes_positions_deformations_and_transfer_functions() {
    let dir = scratch("four-bar");
    let out = mollier(&[
        "kinematics",
        "models/mechanisms/four-bar.toml",
        "--motion",
        "models/mechanisms/four-bar-motion.csv",
        "--out",
        path_str(&dir),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stderr), "", "quiet when not on a terminal");
    let (h, rows) = read_csv(&dir.join("positions.csv"));
    let names: Vec<String> = ["ground", "ground.A", "ground.D", "crank", "crank.B", "rocker", "rocker.C"]
        .iter()
        .flat_map(|n| ["x", "y", "z"].map(|a| format!("{n}.{a}")))
        .collect();
    assert_eq!(h[0], "time");
    assert_eq!(h[1..], names[..]);
    assert_eq!(rows.len(), 73);
    // the first frame is the initial configuration, in metres
    let at = |name: &str| h.iter().position(|c| c == name).expect("column");
    assert_eq!((rows[0][at("crank.B.y")], rows[0][at("rocker.C.x")], rows[0][at("rocker.C.y")]), (0.4, 1.3, 0.8));
    let (h, rows) = read_csv(&dir.join("deformations.csv"));
    assert_eq!(
        h,
        [
            "time",
            "crank_joint.rotation",
            "crank_joint.bending_y",
            "crank_joint.bending_z",
            "rocker_joint.rotation",
            "rocker_joint.bending_y",
            "rocker_joint.bending_z",
            "coupler.elongation"
        ]
    );
    assert_eq!(rows[72][1], std::f64::consts::TAU);
    let (h, rows) = read_csv(&dir.join("transfer.csv"));
    assert_eq!(h, ["time", "rocker_joint.rotation/crank_joint.rotation"]);
    // initial velocity ratio a sin(θ2 − θ3) / (c sin(θ4 − θ3)) = 0.4·1.3/0.92 (from the file's geometry)
    let (t2, t3, t4) = (std::f64::consts::FRAC_PI_2, 0.4f64.atan2(1.3), 0.8f64.atan2(0.3));
    let ratio = 0.4 * (t2 - t3).sin() / (0.3f64.hypot(0.8) * (t4 - t3).sin());
    assert!((rows[0][1] - ratio).abs() < 1e-12, "{} vs {ratio}", rows[0][1]);
}

#[test]
fn a_frame_that_cannot_be_solved_is_reported_with_its_time() {
    let dir = scratch("unreachable");
    let model = dir.join("slider-driven.toml");
    let src = std::fs::read_to_string(mechanism("slider-crank.toml"))
        .expect("model")
        .replace(r#"inputs = ["crank_joint.rotation"]"#, r#"inputs = ["slider.x"]"#)
        .replace(r#"free = ["travel"]"#, r#"free = ["travel", "crank_joint.rotation"]"#);
    std::fs::write(&model, src).expect("write");
    // the slider cannot go beyond r + l = 0.8 m
    let motion = dir.join("motion.csv");
    std::fs::write(&motion, "time,slider.x\n0,0.4\n0.1,0.6\n0.2,0.95\n0.3,0.7\n").expect("write");
    let args = |on_error: &str, out: &Path| {
        mollier(&[
            "kinematics",
            path_str(&model),
            "--motion",
            path_str(&motion),
            "--out",
            path_str(out),
            "--on-error",
            on_error,
        ])
    };
    let out = args("stop", &dir.join("stop"));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("error: frame at time 0.2 s: "), "{stderr}");
    assert!(stderr.contains("stopped: 2 of 4 frames solved"), "{stderr}");
    assert_eq!(read_csv(&dir.join("stop/positions.csv")).1.len(), 2);
    let out = args("skip", &dir.join("skip"));
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("1 of 4 frames could not be solved"), "{}", text(&out.stderr));
    let (_, rows) = read_csv(&dir.join("skip/deformations.csv"));
    assert_eq!(rows.iter().map(|r| r[0]).collect::<Vec<_>>(), [0.0, 0.1, 0.3]);
    assert!(rows.iter().flatten().all(|v| v.is_finite()));
}

#[test]
fn a_motion_without_a_column_for_an_input_is_an_invalid_file() {
    let dir = scratch("bad-motion");
    let motion = dir.join("motion.csv");
    std::fs::write(&motion, "time,crank.rotation\n0,0\n").expect("write");
    let out = mollier(&[
        "kinematics",
        "models/mechanisms/four-bar.toml",
        "--motion",
        path_str(&motion),
        "--out",
        path_str(&dir),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains(":1:1: error: no column for input `crank_joint.rotation`"), "{stderr}");
    assert!(stderr.contains("hint: give one column per input"), "{stderr}");
}

#[test]
fn schema_and_types_describe_the_format() {
    let out = mollier(&["schema"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON schema");
    assert_eq!(v["title"], "Mollier model");
    assert!(v.pointer("/$defs/BodySpec/properties/points").is_some());
    assert!(v.pointer("/$defs/ElementSpec/allOf/0/then/properties").is_some());
    let out = mollier(&["types"]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout.contains("hinge: joint between two orientations"), "{stdout}");
    assert!(stdout.contains("  modes: rotation, bending_y, bending_z"), "{stdout}");
    assert!(stdout.contains("    axis    [x, y, z] direction, required: hinge axis"), "{stdout}");
}
