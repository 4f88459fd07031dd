//! `mollier scale`: a two-body OpenSim model, and the same as a Mollier model file, scaled from
//! a static trial and by given factors, its masses to the subject's; bad setups, trials and masses refused at their line and column
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
}

/// The two-body model as a Mollier model file: b2's points `b2_a` and `b2_b` 0.3 m apart (the
/// trial's markers), 2.3 kg in all.
const NATIVE: &str = r#"format_version = 1
fixed = ["ground"]
inputs = ["j1.rotation", "j2.rotation"]

[bodies.ground]
origin = [0, 0, 0]

[bodies.b1]
origin = "ground"
points = { end = [0, -0.5, 0] }
mass = 1.3
com = [0, -0.25, 0]
inertia = [0.03, 0.002, 0.03, 0, 0, 0]

[bodies.b2]
origin = "b1.end"
points = { b2_a = [0, 0, 0], b2_b = [0, 0.3, 0] }
mass = 1.0
com = [0, 0.1, 0]
inertia = [0.02, 0.001, 0.02, 0, 0, 0]

[elements.j1]
type = "hinge"
p = "ground"
q = "b1"
axis = [0, 0, 1]

[elements.j2]
type = "hinge"
p = "b1"
q = "b2"
axis = [0, 0, 1]
"#;

/// [`setup`] for a Mollier model: its markers are its points, it takes no marker set.
fn native_setup(trial: &str) -> String {
    setup(trial).replace("<GenericModelMaker><marker_set_file>markers.xml</marker_set_file></GenericModelMaker>", "")
}

fn run_native(dir: &Path, setup_name: &str, setup_text: &str, trial_text: &str, out: &Path) -> Output {
    std::fs::write(dir.join("static.trc"), trial_text).unwrap();
    let (model, setup) = (dir.join("two.toml"), dir.join(setup_name));
    std::fs::write(&model, NATIVE).unwrap();
    std::fs::write(&setup, setup_text).unwrap();
    mollier(&["scale", path_str(&model), "--setup", path_str(&setup), "--out", path_str(out)])
}

/// The two-body model as a Mollier model file, by the same setup as the `.osim`: b2 by 1.2 from
/// the trial (360 mm / 0.3 m), b1 by 0.9, 4.6 kg. Its points, centres of mass, masses and
/// inertias as the closed form gives them, in a model file `mollier check` reads.
#[test]
fn a_mollier_model_is_scaled_by_the_same_setup() {
    let dir = scratch("native");
    let out = dir.join("out");
    let o = run_native(&dir, "setup.xml", &native_setup("static.trc"), &trial(|_, r| r), &out);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let written = out.join("model.toml");
    let model = std::fs::read_to_string(&written).unwrap();
    let doc = mollier_format::parse("model.toml", &model).unwrap_or_else(|d| panic!("{}", d.render()));
    let body = |n: &str| doc.spec().bodies.get(n).unwrap().clone();
    let point = |b: &str, p: &str| match body(b).points.get(p).unwrap() {
        mollier_format::PointSpec::Coordinates(c) => *c,
        other => panic!("{other:?}"),
    };
    let close = |a: [f64; 3], b: [f64; 3]| (0..3).all(|k| (a[k] - b[k]).abs() < 1e-12);
    assert!(close(point("b1", "end"), [0.0, -0.45, 0.0]), "{:?}", point("b1", "end"));
    assert!(close(point("b2", "b2_b"), [0.0, 0.36, 0.0]), "{:?}", point("b2", "b2_b"));
    let (b1, b2) = (body("b1"), body("b2"));
    // 2.3 kg to 4.6 kg: every mass twice; inertias by the factor squared, then twice
    assert!((b1.mass.unwrap() - 2.6).abs() < 1e-12 && (b2.mass.unwrap() - 2.0).abs() < 1e-12);
    let i2 = b2.inertia.unwrap().matrix();
    assert!((i2[0][0] - 0.02 * 1.44 * 2.0).abs() < 1e-12 && (i2[1][1] - 0.001 * 1.44 * 2.0).abs() < 1e-12, "{i2:?}");
    match b2.com.unwrap() {
        mollier_format::PointSpec::Coordinates(c) => assert!(close(c, [0.0, 0.12, 0.0]), "{c:?}"),
        other => panic!("{other:?}"),
    }
    let factors = rows(&out.join("scale_factors.csv"));
    assert_eq!(factors[2][0], "b2");
    assert!((factors[2][1].parse::<f64>().unwrap() - 1.2).abs() < 1e-12, "{factors:?}");
    assert_eq!(factors[2][4], "measurement shank");
    let c = mollier(&["check", path_str(&written)]);
    assert!(c.status.success(), "{}", text(&c.stderr));
}

/// A Mollier model's bad setups and trials: located, exit code 2, nothing written; an output
/// path that Mollier did not write is left alone.
#[test]
fn a_mollier_model_s_bad_setups_are_refused_and_nothing_is_written() {
    let dir = scratch("native-bad");
    let good = trial(|_, r| r);
    let cases: Vec<(&str, String, String, &str)> = vec![
        (
            "f.toml",
            "[bodies]\nfemur = 1.1\n".into(),
            good.clone(),
            "f.toml:2:9: error: bodies.femur: the model has no body `femur`",
        ),
        (
            "f.toml",
            "[bodies]\nb1 = -1.1\n".into(),
            good.clone(),
            "f.toml:2:6: error: bodies.b1: a body's factor is a number > 0",
        ),
        (
            "setup.xml",
            native_setup("static.trc"),
            good.replace("b2_b", "b2_c"),
            "setup.xml:8:7: error: ScaleTool/ModelScaler/MeasurementSet/Measurement[shank]: marker `b2_b` of measurement `shank` is not in the trial",
        ),
        (
            "setup.xml",
            setup("static.trc"),
            good.clone(),
            "setup.xml:4:22: error: ScaleTool/GenericModelMaker/marker_set_file: a marker set adds markers to an OpenSim model",
        ),
    ];
    for (name, setup_text, trial_text, expected) in cases {
        let out = dir.join("out");
        let o = run_native(&dir, name, &setup_text, &trial_text, &out);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{expected}: {err}");
        assert!(err.contains(expected), "expected `{expected}` in:\n{err}");
        assert!(!out.exists(), "{expected}: something was written");
    }
    let mine = dir.join("notes.txt");
    std::fs::write(&mine, "not Mollier's").unwrap();
    let o = run_native(&dir, "f.toml", "[bodies]\nb1 = 1.1\n", &good, &mine);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), "not Mollier's");
}
