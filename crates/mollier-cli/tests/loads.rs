//! `--loads`: time-varying external loads in `inverse-dynamics` and `inverse`, as a user runs
//! them. The elbow of `models/mechanisms/elbow-muscles.toml` has a constant cable load in its
//! `[loads]`; the same model without it and the same cable as a `--loads` table must give the
//! same numbers (the load's moments themselves are checked against `r × F` in the facade's
//! tests, `crates/mollier/src/loads/tests.rs`).

use std::path::{Path, PathBuf};

mod support;
use support::{mollier, path_str as s, root, scratch, text};

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

#[test]
fn simulate_takes_the_same_load_as_the_model_s_own() {
    // the elbow's cable as the model's `[loads]` and as `--loads`: the same forward run (the
    // Rosenbrock-W pair with error control, 0.3 s), to the integrator's round-off
    let dir = scratch("simulate");
    let (bare, loads) = elbow_without_cable(&dir);
    let model = "models/mechanisms/elbow-muscles.toml";
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    let run = |model: &str, loads: Option<&Path>, out: &Path| {
        let mut args =
            vec!["simulate", model, "--duration", "0.3", "--integrator", "rosenbrock", "--out", s(out), "-q"];
        if let Some(l) = loads {
            args.extend(["--loads", s(l)]);
        }
        let o = mollier(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    };
    run(model, None, &a);
    run(s(&bare), Some(&loads), &b);
    run(s(&bare), None, &c);
    same(&numbers(&a.join("states.csv")), &numbers(&b.join("states.csv")), "states.csv");
    assert_ne!(numbers(&a.join("states.csv")), numbers(&c.join("states.csv")), "the cable is felt");
    let summary = std::fs::read_to_string(b.join("summary.json")).expect("summary");
    assert!(summary.contains("cable.csv"), "{summary}");
}

#[test]
fn simulate_refuses_bad_loads_and_writes_nothing() {
    let dir = scratch("simulate-bad");
    let (bare, _) = elbow_without_cable(&dir);
    let file = dir.join("l.csv");
    let head = "time,forearm.hand.fx,forearm.hand.fy,forearm.hand.fz";
    for (table, extra, says) in [
        (
            format!("{head},radius.mx,radius.my,radius.mz\n0,1,2,3,4,5,6\n"),
            None,
            "l.csv:1:1: error: `radius` is not a body",
        ),
        (format!("{head}\n0,1,2,3\n0.5,1,NaN,3\n"), None, "l.csv:3:"),
        (
            format!("{head}\n0,1,2,3\n0.2,1,2,3\n"),
            None,
            "the loads are given from 0 s to 0.2 s, the run goes from 0 s to 0.5 s",
        ),
        (format!("{head}\n0,1,2,3\n"), Some("rk4"), "needs `--integrator rosenbrock`"),
    ] {
        std::fs::write(&file, &table).expect("write");
        let out_dir = dir.join("out");
        let mut args = vec!["simulate", s(&bare), "--duration", "0.5", "--loads", s(&file), "--out", s(&out_dir)];
        if let Some(i) = extra {
            args.extend(["--integrator", i]);
        }
        let out = mollier(&args);
        assert_eq!(out.status.code(), Some(2), "{table}: {}", text(&out.stderr));
        assert!(text(&out.stderr).contains(says), "{table}: {}", text(&out.stderr));
        assert!(!out_dir.exists(), "{table}: wrote {}", out_dir.display());
    }
}

/// The generalized forces of OpenSim's gait2354 walking example (the scaled subject, its IK
/// result, both force plates), by `tools/peer_opensim_gait.py`: Mollier given the coordinates,
/// rates and accelerations OpenSim's InverseDynamicsTool used (the IK motion low-passed at 6 Hz
/// and splined, as the tool does; committed in the reference) and the example's own
/// `subject01_walk1_grf.xml`. Each Mollier input is a function of one coordinate (the knee's
/// translations are splines of its angle), so the coordinate's generalized force is the sum of
/// its inputs' driving forces times the functions' slopes.
#[test]
fn the_gait2354_walk_with_its_force_plates_matches_opensim_s_inverse_dynamics() {
    let models = mollier_core::shared_data::opensim_models().join("Gait2354_Simbody");
    let (osim, xml) = (models.join("subject01_simbody.osim"), models.join("subject01_walk1_grf.xml"));
    if !osim.exists() || !xml.exists() || !models.join("subject01_walk1_grf.mot").exists() {
        mollier_core::shared_data::skip(
            "the_gait2354_walk_with_its_force_plates_matches_opensim_s_inverse_dynamics",
            &format!("no {} (run tools/fetch-opensim-models)", xml.display()),
        );
        return;
    }
    let reference: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("crates/mollier-cli/tests/data/gait2354_id.json")).expect("reference"),
    )
    .expect("JSON");
    let rows = |key: &str| -> Vec<Vec<f64>> {
        reference[key]
            .as_array()
            .expect(key)
            .iter()
            .map(|r| r.as_array().expect("row").iter().map(|v| v.as_f64().expect("number")).collect())
            .collect()
    };
    let (q, qd, qdd, tau) = (rows("q"), rows("qd"), rows("qdd"), rows("tau"));
    let times: Vec<f64> = reference["time"].as_array().expect("time").iter().filter_map(|v| v.as_f64()).collect();
    let names: Vec<&str> =
        reference["coordinates"].as_array().expect("names").iter().filter_map(|v| v.as_str()).collect();
    let import = mollier_osim::import_path(&osim).expect("imports");
    let index: Vec<usize> = names.iter().map(|n| import.coordinate(n).expect("a coordinate of the model")).collect();
    // each input's value, rate and acceleration from its coordinate's (central differences of
    // the axis function: exact for the linear ones, about 1e-8 for the knee's splines)
    let h = 1e-4;
    let slope = |d: &mollier_osim::InputDef, x: f64| (d.function.value(x + h) - d.function.value(x - h)) / (2.0 * h);
    let curve = |d: &mollier_osim::InputDef, x: f64| {
        (d.function.value(x + h) - 2.0 * d.function.value(x) + d.function.value(x - h)) / (h * h)
    };
    let dir = scratch("gait");
    let mut csv = String::from("time");
    for d in &import.inputs {
        csv.push_str(&format!(",{0},{0}.vel,{0}.acc", d.name));
    }
    csv.push('\n');
    let of = |k: usize, c: usize, v: &[Vec<f64>]| {
        v[k][names.iter().position(|&n| import.coordinate(n) == Some(c)).expect("given")]
    };
    for k in 0..times.len() {
        csv.push_str(&format!("{}", times[k]));
        for d in &import.inputs {
            let (x, v, a) = (of(k, d.coordinate, &q), of(k, d.coordinate, &qd), of(k, d.coordinate, &qdd));
            let value = d.function.value(x) - d.offset;
            csv.push_str(&format!(",{value},{},{}", slope(d, x) * v, curve(d, x) * v * v + slope(d, x) * a));
        }
        csv.push('\n');
    }
    let motion = dir.join("walk.csv");
    std::fs::write(&motion, csv).expect("write");
    let out_dir = dir.join("id");
    let out = mollier(&[
        "inverse-dynamics",
        s(&osim),
        "--motion",
        s(&motion),
        "--loads",
        s(&xml),
        "--out",
        s(&out_dir),
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let driving = std::fs::read_to_string(out_dir.join("driving.csv")).expect("driving.csv");
    let mut lines = driving.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let largest = tau.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst = (0.0f64, String::new());
    for (k, line) in lines.enumerate() {
        let row: Vec<f64> = line.split(',').map(|v| v.parse().expect("number")).collect();
        assert!((row[0] - times[k]).abs() < 1e-9);
        for (j, &c) in index.iter().enumerate() {
            let mut generalized = 0.0;
            for d in import.inputs.iter().filter(|d| d.coordinate == c) {
                let col = header.iter().position(|&h| h == d.name).expect("a driving column per input");
                generalized += row[col] * slope(d, q[k][j]);
            }
            let diff = (generalized - tau[k][j]).abs();
            if diff > worst.0 {
                worst = (diff, format!("{} at {} s: {generalized} vs OpenSim {}", names[j], times[k], tau[k][j]));
            }
        }
    }
    println!("gait2354: largest difference {:.3e} (of {largest:.1}): {}", worst.0, worst.1);
    // the issue asks for 1 % of the largest; the same inputs give agreement to rounding (3e-6)
    assert!(worst.0 <= 1e-4 * largest, "{} > 1e-4 of {largest}: {}", worst.0, worst.1);
}

/// The shoulder's hand load: a study with `--loads` (20 N down at the hand, one row: constant)
/// gives the forces of the same study with its own `[load]` of 20 N at the hand.
#[test]
fn a_weight_in_the_hand_as_loads_is_the_study_s_own_load() {
    let dir = scratch("study");
    let shoulder = root().join("models/shoulder");
    let study = std::fs::read_to_string(shoulder.join("abduction.toml")).expect("study");
    let model = format!("model = {:?}", shoulder.join("shoulder.toml").display().to_string());
    let small = study
        .replace("model = \"shoulder.toml\"", &model)
        .replace("frames = 37", "frames = 3")
        .replace("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = [\"b\"]");
    assert!(!small.contains("[load]"), "the study has a load of its own: update this test");
    let (plain, loaded) = (dir.join("plain.toml"), dir.join("loaded.toml"));
    std::fs::write(&plain, &small).expect("write");
    std::fs::write(&loaded, format!("{small}\n[load]\npoint = \"humerus.hand\"\nforce = [0, -20, 0]\n"))
        .expect("write");
    let hand = dir.join("hand.csv");
    std::fs::write(&hand, "time,humerus.hand.fx,humerus.hand.fy,humerus.hand.fz\n0,0,-20,0\n").expect("write");
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    for (study, out, loads) in [(&loaded, &a, None), (&plain, &b, Some(&hand)), (&plain, &c, None)] {
        let mut args = vec!["study", s(study), "--out", s(out), "-q"];
        if let Some(l) = loads {
            args.extend(["--loads", s(l)]);
        }
        let run = mollier(&args);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    }
    let forces = |d: &Path| numbers(&d.join("b-glenoid/forces.csv"));
    same(&forces(&a), &forces(&b), "forces.csv");
    assert_ne!(forces(&a), forces(&c), "the load changes the forces");
    // a load on a body the shoulder does not have: exit 2, nothing written
    std::fs::write(&hand, "time,hand.fx,hand.fy,hand.fz\n0,0,-20,0\n").expect("write");
    let out = dir.join("d");
    let run = mollier(&["study", s(&plain), "--out", s(&out), "--loads", s(&hand)]);
    assert_eq!(run.status.code(), Some(2), "{}", text(&run.stderr));
    assert!(text(&run.stderr).contains(":1:1: error: `hand` is not a body"), "{}", text(&run.stderr));
    assert!(!out.exists());
}
