//! `--loads`: time-varying external loads in `inverse-dynamics` and `inverse`, as a user runs
//! them. The elbow of `models/mechanisms/elbow-muscles.toml` has a constant cable load in its
//! `[loads]`; the same model without it and the same cable as a `--loads` table must give the
//! same numbers (the load's moments themselves are checked against `r × F` in the facade's
//! tests, `crates/mollier/src/loads/tests.rs`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn mollier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mollier")).args(args).current_dir(root()).output().expect("runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mollier-cli-loads-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// The elbow without its cable, and the cable as a load table (two rows, constant).
fn elbow_without_cable(dir: &Path) -> (PathBuf, PathBuf) {
    let model = std::fs::read_to_string(root().join("models/mechanisms/elbow-muscles.toml")).expect("model");
    let cable = "[loads.cable]\nat = \"forearm.hand\"\nforce = [-20, 0, 0]\n";
    assert!(model.contains(cable), "the model's cable moved: update this test");
    let bare = dir.join("elbow-bare.toml");
    std::fs::write(&bare, model.replace(cable, "")).expect("write");
    let loads = dir.join("cable.csv");
    std::fs::write(&loads, "time,forearm.hand.fx,forearm.hand.fy,forearm.hand.fz\n0,-20,0,0\n200,-20,0,0\n")
        .expect("write");
    (bare, loads)
}

/// Every number of a CSV file but its header.
fn numbers(path: &Path) -> Vec<f64> {
    let t = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    t.lines().skip(1).flat_map(|l| l.split(',').map(|v| v.parse::<f64>().expect("a number"))).collect()
}

fn same(a: &[f64], b: &[f64], what: &str) {
    assert_eq!(a.len(), b.len(), "{what}");
    let scale = a.iter().fold(1.0f64, |m, v| m.max(v.abs()));
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= 1e-9 * scale, "{what}: {x} vs {y}");
    }
}

const MOTION: &str = "models/mechanisms/elbow-muscles-motion.csv";

#[test]
fn a_load_table_acts_as_the_model_s_own_load() {
    let dir = scratch("same");
    let (bare, loads) = elbow_without_cable(&dir);
    let model = "models/mechanisms/elbow-muscles.toml";
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    let out = mollier(&["inverse-dynamics", model, "--motion", MOTION, "--out", s(&a), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = mollier(&["inverse-dynamics", s(&bare), "--motion", MOTION, "--loads", s(&loads), "--out", s(&b), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = mollier(&["inverse-dynamics", s(&bare), "--motion", MOTION, "--out", s(&c), "-q"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    same(&numbers(&a.join("driving.csv")), &numbers(&b.join("driving.csv")), "driving.csv");
    same(&numbers(&a.join("reactions.csv")), &numbers(&b.join("reactions.csv")), "reactions.csv");
    // without the cable the numbers differ: the comparison can fail
    assert_ne!(numbers(&a.join("driving.csv")), numbers(&c.join("driving.csv")));
    let summary = std::fs::read_to_string(b.join("summary.json")).expect("summary");
    assert!(summary.contains("cable.csv"), "{summary}");

    for dir in [&a, &b] {
        let out = if dir == &a {
            mollier(&["inverse", model, "--motion", MOTION, "--criterion", "b", "--out", s(dir), "-q"])
        } else {
            let l = s(&loads);
            mollier(&["inverse", s(&bare), "--motion", MOTION, "--criterion", "b", "--loads", l, "--out", s(dir), "-q"])
        };
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    same(&numbers(&a.join("forces.csv")), &numbers(&b.join("forces.csv")), "forces.csv");
}

#[test]
fn a_load_on_a_body_that_does_not_exist_is_refused_and_nothing_is_written() {
    let dir = scratch("bad");
    let (bare, _) = elbow_without_cable(&dir);
    let loads = dir.join("bad.csv");
    std::fs::write(
        &loads,
        "time,forearm.hand.fx,forearm.hand.fy,forearm.hand.fz,radius.mx,radius.my,radius.mz\n0,1,2,3,4,5,6\n",
    )
    .expect("write");
    let xml = dir.join("bad.xml");
    std::fs::write(
        &xml,
        "<OpenSimDocument>\n<ExternalLoads>\n<objects>\n<ExternalForce name=\"r\">\n\
         <applied_to_body>calcn_r</applied_to_body>\n<force_identifier>f</force_identifier>\n\
         </ExternalForce>\n</objects>\n<datafile>bad.csv</datafile>\n</ExternalLoads>\n</OpenSimDocument>\n",
    )
    .expect("write");
    for (file, says) in [
        (&loads, ":1:1: error: `radius` is not a body"),
        (&xml, ":5:1: error: ExternalLoads/ExternalForce[r]/applied_to_body: `calcn_r` is not a body"),
    ] {
        for command in ["inverse-dynamics", "inverse"] {
            let out_dir = dir.join(format!("out-{command}"));
            let mut args = vec![command, s(&bare), "--motion", MOTION, "--loads", s(file), "--out", s(&out_dir)];
            if command == "inverse" {
                args.extend(["--criterion", "b"]);
            }
            let out = mollier(&args);
            assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
            assert!(text(&out.stderr).contains(says), "{command}: {}", text(&out.stderr));
            assert!(!out_dir.exists(), "{command} wrote {}", out_dir.display());
        }
    }
    // a motion longer than the loads
    std::fs::write(&loads, "time,forearm.hand.fx,forearm.hand.fy,forearm.hand.fz\n0,1,2,3\n1,1,2,3\n").expect("write");
    let out_dir = dir.join("out-times");
    let out = mollier(&["inverse-dynamics", s(&bare), "--motion", MOTION, "--loads", s(&loads), "--out", s(&out_dir)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("the loads are given from 0 s to 1 s"), "{}", text(&out.stderr));
    assert!(!out_dir.exists());
}
