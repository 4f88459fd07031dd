//! `mollier scale`: a two-body OpenSim model scaled from a static trial and by given factors,
//! its masses to the subject's; bad setups, trials and masses refused at their line and column
//! with exit code 2 and nothing written. (OpenSim's own gait2354 example is the reference of
//! the scaling itself: crates/mollier/tests/model_scaling.rs.)

use std::path::{Path, PathBuf};
use std::process::Output;

mod support;
use support::{mollier, path_str, scratch, text};

const MODEL: &str = "crates/mollier-osim/tests/data/osim/pin.osim";

/// Two markers on body b2, 0.3 m apart in the model.
const MARKER_SET: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenSimDocument Version="40000"><MarkerSet name="pair"><objects>
  <Marker name="b2_a"><socket_parent_frame>/bodyset/b2</socket_parent_frame><location>0 0 0</location></Marker>
  <Marker name="b2_b"><body>b2</body><location>0 0.3 0</location></Marker>
</objects></MarkerSet></OpenSimDocument>
"#;

/// The setup: b2 by the distance of its markers, b1 by hand (0.9), 4.6 kg (twice the model's).
fn setup(trial: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<OpenSimDocument Version="40000"><ScaleTool name="s">
  <mass>4.6</mass>
  <GenericModelMaker><marker_set_file>markers.xml</marker_set_file></GenericModelMaker>
  <ModelScaler>
    <scaling_order>measurements manualScale</scaling_order>
    <MeasurementSet><objects>
      <Measurement name="shank"><MarkerPairSet><objects><MarkerPair><markers>b2_a b2_b</markers></MarkerPair></objects></MarkerPairSet>
        <BodyScaleSet><objects><BodyScale name="b2"><axes>X Y Z</axes></BodyScale></objects></BodyScaleSet></Measurement>
    </objects></MeasurementSet>
    <ScaleSet><objects><Scale><scales>0.9 0.9 0.9</scales><segment>b1</segment><apply>true</apply></Scale></objects></ScaleSet>
    <marker_file>{trial}</marker_file>
    <time_range>0 0.02</time_range>
    <preserve_mass_distribution>true</preserve_mass_distribution>
  </ModelScaler>
</ScaleTool></OpenSimDocument>
"#
    )
}

/// A static trial in mm: b2_a and b2_b 360 mm apart (frames at 100 Hz), `edit` may change a row.
fn trial(edit: impl Fn(usize, String) -> String) -> String {
    let mut t =
        "PathFileType\t4\t(X/Y/Z)\ts.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n100\t100\t5\t2\tmm\n\
                 Frame#\tTime\tb2_a\t\t\tb2_b\t\t\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\n\n"
            .to_string();
    for i in 0..5 {
        // the pair turns from frame to frame; its length stays 360 mm
        let a = 0.1 * i as f64;
        let row = format!(
            "{}\t{}\t10\t20\t30\t{}\t{}\t30",
            i + 1,
            i as f64 / 100.0,
            10.0 + 360.0 * a.sin(),
            20.0 + 360.0 * a.cos()
        );
        t += &edit(i, row);
        t += "\n";
    }
    t
}

fn run(dir: &Path, setup_name: &str, setup_text: &str, trial_text: &str, extra: &[&str]) -> (Output, PathBuf) {
    std::fs::write(dir.join("markers.xml"), MARKER_SET).unwrap();
    std::fs::write(dir.join("static.trc"), trial_text).unwrap();
    let setup = dir.join(setup_name);
    std::fs::write(&setup, setup_text).unwrap();
    let out = dir.join("out");
    let mut args = vec!["scale", MODEL, "--setup", path_str(&setup), "--out", path_str(&out)];
    args.extend_from_slice(extra);
    (mollier(&args), out)
}

/// The rows of a CSV table Mollier wrote, header left out.
fn rows(path: &Path) -> Vec<Vec<String>> {
    let t = std::fs::read_to_string(path).unwrap();
    t.lines().skip(1).map(|l| l.split(',').map(str::to_string).collect()).collect()
}

/// The three numbers of `key = [x, y, z]` in the TOML section `[section]` of the model file.
fn vector(model: &str, section: &str, key: &str) -> [f64; 3] {
    let start = model.find(&format!("[{section}]")).unwrap_or_else(|| panic!("no [{section}]"));
    let line = model[start..].lines().find(|l| l.starts_with(&format!("{key} = ["))).expect(key);
    let inner = line.split('[').nth(1).unwrap().split(']').next().unwrap();
    let v: Vec<f64> = inner.split(',').map(|x| x.trim().parse().unwrap()).collect();
    [v[0], v[1], v[2]]
}

fn number(model: &str, section: &str, key: &str) -> f64 {
    let start = model.find(&format!("[{section}]")).unwrap_or_else(|| panic!("no [{section}]"));
    let line = model[start..].lines().find(|l| l.starts_with(&format!("{key} = "))).expect(key);
    line.split('=').nth(1).unwrap().split('#').next().unwrap().trim().parse().unwrap()
}

#[test]
fn a_model_is_scaled_from_a_static_trial_and_by_hand_and_its_file_is_a_model() {
    let dir = scratch("fit");
    let (o, out) = run(&dir, "setup.xml", &setup("static.trc"), &trial(|_, r| r), &[]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let factors = rows(&out.join("scale_factors.csv"));
    let f = |body: &str| -> (f64, String) {
        let r = factors.iter().find(|r| r[0] == body).unwrap();
        (r[1].parse().unwrap(), r[4].clone())
    };
    // 360 mm in the trial over 0.3 m in the model
    let (b2, src) = f("b2");
    assert!((b2 - 1.2).abs() < 1e-12 && src == "measurement shank", "{b2} {src}");
    assert_eq!(f("b1"), (0.9, "manual".to_string()));
    // the masses doubled to 4.6 kg, their ratio kept; the inertia of b1 by 2 x 0.9²
    let model = std::fs::read_to_string(out.join("model.toml")).unwrap();
    assert!((number(&model, "bodies.b1", "mass") - 3.0).abs() < 1e-12);
    assert!((number(&model, "bodies.b2", "mass") - 1.6).abs() < 1e-12);
    let i = vector(&model, "bodies.b1", "com");
    assert!((i[1] - 0.09).abs() < 1e-12, "{i:?}");
    // the markers in their bodies: b2_b 0.36 m from b2_a, b1_m by 0.9
    let b = vector(&model, "bodies.b2.points", "b2_b");
    assert!((b[1] - 0.36).abs() < 1e-12, "{b:?}");
    let m = vector(&model, "bodies.b1.points", "b1_m");
    assert!((m[2] - 0.27).abs() < 1e-12, "{m:?}");
    // the file is a model Mollier reads and finds well posed
    let c = mollier(&["check", path_str(&out.join("model.toml"))]);
    assert!(c.status.success(), "{}{}", text(&c.stdout), text(&c.stderr));
    // given factors only (a TOML file), and the subject's mass on the command line
    let (o, out) = run(&dir, "f.toml", "[bodies]\nb1 = [1.0, 2.0, 1.0]\n", &trial(|_, r| r), &["--mass", "23"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let model = std::fs::read_to_string(out.join("model.toml")).unwrap();
    let total = number(&model, "bodies.b1", "mass") + number(&model, "bodies.b2", "mass");
    assert!((total - 23.0).abs() < 1e-12, "{total}");
    assert!((vector(&model, "bodies.b1", "com")[1] - 0.2).abs() < 1e-12);
}

#[test]
fn bad_setups_trials_and_masses_are_refused_where_they_are_and_nothing_is_written() {
    let dir = scratch("bad");
    let good = trial(|_, r| r);
    let cases: Vec<(&str, String, String, Vec<&str>, &str)> = vec![
        (
            "f.toml",
            "[bodies]\nfemur = 1.1\n".into(),
            good.clone(),
            vec![],
            "f.toml:2:9: error: bodies.femur: the model has no body `femur`",
        ),
        (
            "f.toml",
            "[bodies]\nb1 = 0\n".into(),
            good.clone(),
            vec![],
            "f.toml:2:6: error: bodies.b1: a body's factor is a number > 0",
        ),
        (
            "f.toml",
            "[bodies]\nb1 = 1.1\n".into(),
            good.clone(),
            vec!["--mass=-3"],
            "the subject's mass is a number > 0",
        ),
        (
            "setup.xml",
            setup("static.trc"),
            good.replace("b2_b", "b2_c"),
            vec![],
            "setup.xml:8:7: error: ScaleTool/ModelScaler/MeasurementSet/Measurement[shank]: marker `b2_b` of measurement `shank` is not in the trial",
        ),
        (
            "setup.xml",
            setup("static.trc"),
            trial(|i, r| if i == 1 { r.replace("\t30\t", "\tNaN\t") } else { r }),
            vec![],
            "static.trc:8:1: error: frame 2: marker `b2_a` of a measurement is missing in this frame of the time range",
        ),
        ("setup.xml", setup("none.trc"), good.clone(), vec![], "none.trc"),
        (
            "setup.xml",
            setup("static.trc").replace("<time_range>0 0.02", "<time_range>0 x"),
            good.clone(),
            vec![],
            "setup.xml:13:5: error: ScaleTool/ModelScaler/time_range",
        ),
    ];
    for (name, setup_text, trial_text, extra, expected) in cases {
        let (o, out) = run(&dir, name, &setup_text, &trial_text, &extra);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{expected}: {err}");
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
        assert!(!out.exists(), "{expected}: something was written");
    }
    // a Mollier model file is not an OpenSim model
    let o =
        mollier(&["scale", "models/mechanisms/pendulum.toml", "--setup", "x.toml", "--out", path_str(&dir.join("o"))]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("scales an OpenSim model (.osim)"), "{}", text(&o.stderr));
}
