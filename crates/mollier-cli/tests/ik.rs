//! `mollier ik`: a trial fitted and its motion fed to `inverse-dynamics` unchanged; bad trials
//! and tasks refused at their line and column with exit code 2 and nothing written.

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::{mollier, scratch};

/// The pendulum's tip (0.8 m from the hinge) swinging through `angle(t)` (rad), in `units`,
/// over `n` frames at 100 Hz; `edit` may change a row's text.
fn pendulum_trial(units: &str, n: usize, edit: impl Fn(usize, String) -> String) -> String {
    let scale = match units {
        "mm" => 1e3,
        _ => 1.0,
    };
    let mut t = format!(
        "PathFileType\t4\t(X/Y/Z)\tp.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n100\t100\t{n}\t2\t{units}\n\
         Frame#\tTime\ttip\t\t\tstray\t\t\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n"
    );
    for i in 0..n {
        let a = 0.3 * (i as f64 * 0.05).sin() - 0.5;
        let row = format!(
            "{}\t{}\t{}\t{}\t0\t1\t1\t1",
            i + 1,
            i as f64 / 100.0,
            0.8 * a.cos() * scale,
            0.8 * a.sin() * scale
        );
        t += &edit(i, row);
        t += "\n";
    }
    t
}

fn run_ik(dir: &Path, trc: &str, tasks: Option<&str>) -> (Output, PathBuf) {
    let trial = dir.join("p.trc");
    std::fs::write(&trial, trc).unwrap();
    let out = dir.join("out");
    let mut args = vec![
        "ik".to_string(),
        "models/mechanisms/pendulum.toml".into(),
        "--markers".into(),
        trial.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    if let Some(t) = tasks {
        let p = dir.join("tasks.toml");
        std::fs::write(&p, t).unwrap();
        args.extend(["--tasks".into(), p.display().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    (mollier(&args), out)
}

#[test]
fn a_trial_is_fitted_and_its_motion_feeds_inverse_dynamics() {
    let dir = scratch("fit");
    let (o, out) = run_ik(&dir, &pendulum_trial("mm", 40, |_, r| r), None);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    // the stray marker is not the model's: reported, not fitted
    assert!(stderr.contains("not fitted: stray"), "{stderr}");
    let motion = std::fs::read_to_string(out.join("motion.csv")).unwrap();
    let mut lines = motion.lines();
    assert_eq!(lines.next(), Some("time,swing.rotation"));
    for (i, l) in lines.enumerate() {
        let q: f64 = l.split(',').nth(1).unwrap().parse().unwrap();
        let want = 0.3 * (i as f64 * 0.05).sin() - 0.5;
        assert!((q - want).abs() < 1e-9, "frame {i}: {q} for {want}");
    }
    let errors = std::fs::read_to_string(out.join("marker_errors.csv")).unwrap();
    assert!(errors.starts_with("time,tip,rms,max\n"), "{errors}");
    let id = mollier(&[
        "inverse-dynamics",
        "models/mechanisms/pendulum.toml",
        "--motion",
        out.join("motion.csv").to_str().unwrap(),
        "--out",
        dir.join("id").to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(id.status.code(), Some(0), "{}", String::from_utf8_lossy(&id.stderr));
}

/// A bad trial or tasks file: exit code 2, the message at `file:line:col`, no output directory.
fn refused(name: &str, trc: String, tasks: Option<&str>, wants: &[&str]) {
    let dir = scratch(name);
    let (o, out) = run_ik(&dir, &trc, tasks);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{name}: {stderr}");
    for w in wants {
        assert!(stderr.contains(w), "{name}: no `{w}` in {stderr}");
    }
    assert!(!out.exists(), "{name}: something was written");
    assert!(std::fs::read_dir(&dir).unwrap().count() <= 2, "{name}: a temporary was left");
}

#[test]
fn bad_trials_are_refused_where_they_are_wrong() {
    refused("units", pendulum_trial("inches", 5, |_, r| r), None, &["p.trc:3:", "unknown unit `inches`"]);
    refused(
        "nan-time",
        pendulum_trial("mm", 5, |i, r| if i == 2 { r.replacen("\t0.02\t", "\tNaN\t", 1) } else { r }),
        None,
        &["p.trc:9:", "not a time: `NaN`"],
    );
    refused(
        "gap",
        pendulum_trial("mm", 5, |i, r| if i == 3 { r.replacen("4\t", "5\t", 1) } else { r }),
        None,
        &["p.trc:10:1", "frames missing: 5 follows 3"],
    );
    // a frame without any marker the model has: located at its row
    refused(
        "empty-frame",
        pendulum_trial("mm", 5, |i, r| {
            if i == 1 {
                let c: Vec<&str> = r.split('\t').collect();
                format!("{}\t{}\tNaN\tNaN\tNaN\t1\t1\t1", c[0], c[1])
            } else {
                r
            }
        }),
        None,
        &["p.trc:8:1", "no marker used by IK is present"],
    );
}

#[test]
fn tasks_naming_unknown_markers_or_coordinates_are_refused() {
    let trc = pendulum_trial("mm", 5, |_, r| r);
    refused(
        "task-marker",
        trc.clone(),
        Some("[markers]\ntip = 1\nelbow = 2\n"),
        &["tasks.toml:3:", "`elbow` is not in the trial"],
    );
    refused(
        "model-marker",
        trc.clone(),
        Some("[markers]\nstray = 1\n"),
        &["tasks.toml:2:", "the model has no marker `stray`"],
    );
    refused(
        "task-coordinate",
        trc.clone(),
        Some("[markers]\ntip = 1\n[coordinates]\nknee = { weight = 10 }\n"),
        &["tasks.toml:4:", "`knee` is not one of the unknowns"],
    );
    refused("task-weight", trc, Some("[markers]\ntip = -1\n"), &["tasks.toml:2:", "a weight is a number >= 0"]);
}

/// `--tolerance` ends a frame at a looser step, as OpenSim's IK stops at its `accuracy`: fewer
/// Gauss-Newton steps, the fit still within the tolerance; a tolerance that is not a number in
/// (0, 1] is refused.
#[test]
fn a_looser_tolerance_takes_fewer_steps() {
    let dir = scratch("tolerance");
    let trial = dir.join("p.trc");
    std::fs::write(&trial, pendulum_trial("mm", 40, |_, r| r)).unwrap();
    let fit = |out: &str, tolerance: &str| -> (Output, PathBuf) {
        let out = dir.join(out);
        let o = mollier(&[
            "ik",
            "models/mechanisms/pendulum.toml",
            "--markers",
            trial.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            &format!("--tolerance={tolerance}"),
            "-q",
        ]);
        (o, out)
    };
    let steps = |out: &Path| -> f64 {
        let s: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        s["iterations_per_frame"].as_f64().unwrap()
    };
    let (tight, tight_out) = fit("tight", "1e-10");
    let (loose, loose_out) = fit("loose", "1e-2");
    assert!(tight.status.success() && loose.status.success(), "{}", String::from_utf8_lossy(&loose.stderr));
    let (n_tight, n_loose) = (steps(&tight_out), steps(&loose_out));
    assert!(n_loose < n_tight, "steps per frame: {n_loose} with 1e-2, {n_tight} with 1e-10");
    let motion = std::fs::read_to_string(loose_out.join("motion.csv")).unwrap();
    for (i, l) in motion.lines().skip(1).enumerate() {
        let q: f64 = l.split(',').nth(1).unwrap().parse().unwrap();
        let want = 0.3 * (i as f64 * 0.05).sin() - 0.5;
        assert!((q - want).abs() < 1e-2, "frame {i}: {q} for {want}");
    }
    for bad in ["0", "-1e-5", "NaN", "2"] {
        let (o, out) = fit("bad", bad);
        assert_eq!(o.status.code(), Some(2), "{bad}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--tolerance"), "{bad}");
        assert!(!out.exists());
    }
}
