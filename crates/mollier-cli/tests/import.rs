//! `mollier import` as a user runs it: files written, exit codes, located errors.

use std::path::Path;

mod support;
use support::{mollier, root, scratch};

#[test]
fn import_writes_a_model_that_check_accepts_and_a_report() {
    let dir = scratch("ok");
    let out = dir.join("gimbal.toml");
    let o = mollier(&["import", "crates/mollier-osim/tests/data/osim/gimbal.osim", "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("6 inputs"), "{stderr}");
    let report = std::fs::read_to_string(dir.join("gimbal.import.md")).expect("report beside the model");
    assert!(report.contains("Imported: 2 bodies, 2 joints, 6 coordinates"), "{report}");
    let c = mollier(&["check", out.to_str().unwrap()]);
    assert_eq!(c.status.code(), Some(0), "{}", String::from_utf8_lossy(&c.stderr));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_osim_file_exits_2_with_its_place() {
    let dir = scratch("bad");
    let bad = dir.join("bad.osim");
    std::fs::write(&bad, "<OpenSimDocument Version=\"40000\">\n<Model name=\"m\">\n<JointSet><objects>\n<PinJoint name=\"j\"><socket_parent_frame>/ground</socket_parent_frame><socket_child_frame>/bodyset/thigh</socket_child_frame></PinJoint>\n</objects></JointSet></Model></OpenSimDocument>\n").unwrap();
    let out = dir.join("bad.toml");
    let o = mollier(&["import", bad.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("bad.osim:4:")
            && stderr.contains("`/bodyset/thigh` is neither a frame of this joint nor a body"),
        "{stderr}"
    );
    assert!(!out.exists(), "nothing written for a bad file");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_other_commands_take_an_osim_file() {
    let o = mollier(&["check", "crates/mollier-osim/tests/data/osim/universal.osim"]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}{}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("inputs (4): p1.rotation, p2.rotation, q1.rotation, q2.rotation"), "{stdout}");
    let bad = mollier(&["check", "crates/mollier-osim/tests/data/osim/missing.osim"]);
    assert_eq!(bad.status.code(), Some(2));
}

fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<f64>>) {
    let text = std::fs::read_to_string(path).expect("table");
    let mut lines = text.lines();
    let header = lines.next().expect("header").split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|v| v.parse().expect("number")).collect()).collect();
    (header, rows)
}

/// `lengths.csv` against the distance between the muscles' end points in `positions.csv`, and
/// `moment_arms.csv` against central differences of those lengths over the motion's frames.
#[test]
fn kinematics_writes_muscle_lengths_and_moment_arms() {
    let dir = scratch("lengths");
    let out = dir.join("k");
    let o = mollier(&[
        "kinematics",
        "models/mechanisms/elbow-muscles.toml",
        "--motion",
        "models/mechanisms/elbow-muscles-motion.csv",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let (ph, pos) = read_csv(&out.join("positions.csv"));
    let (lh, len) = read_csv(&out.join("lengths.csv"));
    let (ah, arm) = read_csv(&out.join("moment_arms.csv"));
    assert_eq!(lh, ["time", "biceps", "brachialis", "brachioradialis", "triceps"]);
    assert_eq!(ah[1], "biceps/elbow.rotation");
    let at = |row: &[f64], p: &str| -> [f64; 3] {
        let k = ph.iter().position(|h| h == &format!("{p}.x")).expect("point");
        [row[k], row[k + 1], row[k + 2]]
    };
    for (m, muscle) in lh.iter().enumerate().skip(1) {
        for (f, row) in pos.iter().enumerate() {
            let (a, b) =
                (at(row, &format!("humerus.{muscle}_origin")), at(row, &format!("forearm.{muscle}_insertion")));
            let d = ((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt();
            assert!((len[f][m] - d).abs() < 1e-12, "{muscle} frame {f}: {} vs {d}", len[f][m]);
        }
        // 5 degrees between frames: central differences of the lengths are good to ~1e-4 m/rad here
        let h = 5f64.to_radians();
        for f in 1..len.len() - 1 {
            let fd = -(len[f + 1][m] - len[f - 1][m]) / (2.0 * h);
            assert!(
                (arm[f][m] - fd).abs() < 2e-4 * fd.abs().max(0.01) / 0.01,
                "{muscle} frame {f}: {} vs {fd}",
                arm[f][m]
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// An OpenSim motion of the coordinates, converted by `mollier import --motion`, drives the
/// imported model through OpenSim's own body positions (tools/peer_opensim.py): a coupler, and
/// coordinates that drive several axes through functions.
#[test]
fn an_opensim_motion_drives_the_imported_model_as_opensim_does() {
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/mollier-osim/tests/data/opensim_kinematics.json")).unwrap(),
    )
    .unwrap();
    for (name, degrees) in [("coupler", true), ("custom_multiplier", false)] {
        let dir = scratch(&format!("motion-{name}"));
        let r = &reference["models"][name];
        let coords: Vec<&str> = r["coordinates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let postures = r["postures"].as_array().unwrap();
        // OpenSim 4's column labels, and degrees where the header says so
        let mut mot = format!(
            "{name}\nversion=1\nnRows={}\nnColumns={}\ninDegrees={}\nendheader\ntime",
            postures.len(),
            coords.len() + 1,
            if degrees { "yes" } else { "no" }
        );
        for c in &coords {
            mot.push_str(&format!("\t/jointset/j/{c}/value"));
        }
        mot.push('\n');
        for (k, p) in postures.iter().enumerate() {
            mot.push_str(&format!("{}", k as f64 * 0.1));
            for v in p["q"].as_array().unwrap() {
                let v = v.as_f64().unwrap();
                mot.push_str(&format!("\t{:?}", if degrees { v.to_degrees() } else { v }));
            }
            mot.push('\n');
        }
        std::fs::write(dir.join("q.mot"), mot).unwrap();
        let osim = format!("crates/mollier-osim/tests/data/osim/{name}.osim");
        let (model, csv, out) = (dir.join("m.toml"), dir.join("m.csv"), dir.join("k"));
        let s = |p: &Path| p.to_str().unwrap().to_string();
        let o = mollier(&[
            "import",
            &osim,
            "--out",
            &s(&model),
            "--motion",
            &s(&dir.join("q.mot")),
            "--motion-out",
            &s(&csv),
            "-q",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let o = mollier(&["kinematics", &s(&model), "--motion", &s(&csv), "--out", &s(&out), "-q"]);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        let (h, rows) = read_csv(&out.join("positions.csv"));
        let mut worst: f64 = 0.0;
        for (row, p) in rows.iter().zip(postures) {
            for (body, want) in p["bodies"].as_object().unwrap() {
                let k = h.iter().position(|x| x == &format!("{body}.x")).unwrap();
                for i in 0..3 {
                    worst = worst.max((row[k + i] - want[i].as_f64().unwrap()).abs());
                }
            }
        }
        assert_eq!(rows.len(), postures.len());
        assert!(worst < 1e-9, "{name}: {worst:e} m from OpenSim");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
