//! Bad study files and muscle tables are reported, never a panic.

mod common;

use std::path::Path;

use common::*;
use mollier_study::{Study, StudyError};

fn setup(edit: impl FnOnce(&mut mollier_study::spec::StudySpec)) -> Result<Study, StudyError> {
    let dir = temp_dir("errors");
    let mut spec = abduction_spec();
    spec.motion.frames = 2;
    edit(&mut spec);
    Study::with_model(&dir.join("study.toml"), spec, shoulder_model())
}

fn message(r: Result<Study, StudyError>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_studies_are_reported() {
    assert!(setup(|_| {}).is_ok());
    assert!(message(setup(|s| s.optimisation.criteria = vec!["e".into()])).contains("criterion"));
    assert!(message(setup(|s| s.optimisation.criteria.clear())).contains("empty"));
    assert!(message(setup(|s| s.optimisation.joint_cone = vec!["maybe".into()])).contains("maybe"));
    assert!(message(setup(|s| s.optimisation.joint_cone.clear())).contains("joint_cone: the list is empty"));
    assert!(message(setup(|s| s.motion.model.inputs[0] = "AC.x".into())).contains("no input `AC.x`"));
    assert!(message(setup(|s| s.motion.model.inputs[1] = "AC.y".into())).contains("twice"));
    assert!(message(setup(|s| s.motion.frames = 1)).contains("frames"));
    assert!(message(setup(|s| s.motion.kind = "spline".into())).contains("rhythm"));
    assert!(message(setup(|s| s.motion.elevation = Some([1.0, f64::NAN]))).contains("finite"));
    assert!(message(setup(|s| s.motion.model.rest_angles = [0.0, 10.0, 0.0])).contains("rest angles"));
    assert!(message(setup(|s| s.motion.model.scapula = "blade".into())).contains("no body `blade`"));
    assert!(message(setup(|s| s.landmarks.push("AC.z".into()))).contains("AC.z"));
    assert!(message(setup(|s| s.format_version = 3)).contains("format_version"));
    assert!(
        message(setup(|s| s.optimisation.margins = Some(vec![1.0, 0.0])))
            .contains("margins[1]: 0 is not in [0.001, 1]")
    );
    // a specification made in code is checked as a file is
    assert!(message(setup(|s| s.optimisation.criteria = vec!["c".into(), "so".into()])).contains("criteria[1]"));
    assert!(message(setup(|s| s.optimisation.margins = Some(vec![0.5, 0.5]))).contains("margins[1]"));
    assert!(message(setup(|s| s.optimisation.margins = Some(vec![]))).contains("margins: the list is empty"));
    assert!(message(setup(|s| s.cuff = vec!["m. rotator".into()])).contains("no muscle `m. rotator`"));
    assert!(message(setup(|s| s.motion.kind = "angles".into())).contains("motion.file"));
    let missing = message(setup(|s| {
        s.motion.kind = "inputs".into();
        s.motion.file = Some("no-such.csv".into());
    }));
    assert!(missing.contains("motion.file") && missing.contains("no-such.csv"), "{missing}");
    assert!(message(setup(|s| s.motion.file = Some("x.csv".into()))).contains("a rhythm reads no file"));
    let load = |mass: Option<f64>, force: Option<[f64; 3]>, point: &str| {
        Some(mollier_study::spec::LoadSpec { point: point.into(), mass, force })
    };
    assert!(message(setup(|s| s.load = load(Some(1.0), None, "humerus.palm"))).contains("no point `humerus.palm`"));
    assert!(message(setup(|s| s.load = load(None, None, "humerus.hand"))).contains("either `mass`"));
    assert!(message(setup(|s| s.load = load(Some(-1.0), None, "humerus.hand"))).contains(">= 0"));
}

#[test]
fn a_model_without_load_sharing_is_reported() {
    let dir = temp_dir("no-sharing");
    let mut compiled = shoulder_model();
    compiled.load_sharing = None;
    let m = message(Study::with_model(&dir.join("study.toml"), abduction_spec(), compiled));
    assert!(m.contains("[load_sharing]"), "{m}");
}

#[test]
fn a_study_of_format_1_says_what_moved() {
    let dir = temp_dir("format-1");
    let text = std::fs::read_to_string(abduction_file()).unwrap().replace("format_version = 2", "format_version = 1");
    std::fs::write(dir.join("old.toml"), text).unwrap();
    let m = message(Study::load(&dir.join("old.toml")));
    assert!(m.contains("[load_sharing]") && m.contains("format_version = 2"), "{m}");
}

#[test]
fn unreadable_files_are_reported() {
    let dir = temp_dir("unreadable");
    assert!(matches!(Study::load(&dir.join("none.toml")), Err(StudyError::Read { .. })));
    std::fs::write(dir.join("typo.toml"), "format_version = 1\nmodle = \"x\"\n").unwrap();
    assert!(matches!(Study::load(&dir.join("typo.toml")), Err(StudyError::Read { .. })));
    let mut text = std::fs::read_to_string(abduction_file()).unwrap();
    text = text
        .replace("model = \"shoulder.toml\"", &format!("model = {:?}", dir.join("missing.toml").display().to_string()));
    std::fs::write(dir.join("missing-model.toml"), text).unwrap();
    assert!(matches!(Study::load(&dir.join("missing-model.toml")), Err(StudyError::Model(_))));
    assert!(Path::new(&abduction_file()).exists());
}

#[test]
fn study_file_problems_are_placed_at_line_and_column() {
    let dir = temp_dir("placed");
    let file = dir.join("study.toml");
    let name = file.display().to_string();
    let model = abduction_file().with_file_name("shoulder.toml").display().to_string();
    let text = std::fs::read_to_string(abduction_file())
        .unwrap()
        .replace("model = \"shoulder.toml\"", &format!("model = {model:?}"));
    let line_of = |t: &str, s: &str| t.lines().position(|l| l.starts_with(s)).expect("line") + 1;
    // a semantic problem: at the value of motion.frames
    let bad = text.replace("frames = 37", "frames = 1");
    std::fs::write(&file, &bad).unwrap();
    let m = message(Study::load(&file));
    let want =
        format!("{name}:{}:10: error: motion.frames: motion.frames must be from 2 to 100000", line_of(&bad, "frames"));
    assert!(m.starts_with(&want), "{m}");
    // an empty list: at the list
    let bad = text.replace("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = []");
    std::fs::write(&file, &bad).unwrap();
    let m = message(Study::load(&file));
    let want = format!("{name}:{}:12: error: optimisation.criteria: the list is empty", line_of(&bad, "criteria"));
    assert!(m.starts_with(&want), "{m}");
    // a syntax problem: in the same form as model files, not "TOML parse error at line N"
    let bad = text.replace("frames = 37", "frames = = 37");
    std::fs::write(&file, &bad).unwrap();
    let m = message(Study::load(&file));
    assert!(m.starts_with(&format!("{name}:{}:", line_of(&bad, "frames"))) && !m.contains("TOML parse error"), "{m}");
    // a study file that is not a regular file is refused before it is opened
    #[cfg(unix)]
    assert!(message(Study::load(Path::new("/dev/zero"))).contains("not a regular file"));
}

/// Settings that used to be accepted, computed for minutes, then failed when written (issue 33)
/// are refused when the study file is read — before its model is loaded — at the value.
#[test]
fn study_settings_are_refused_when_read_at_the_value() {
    let dir = temp_dir("settings");
    let file = dir.join("study.toml");
    let name = file.display().to_string();
    let text = std::fs::read_to_string(abduction_file())
        .unwrap()
        .replace("model = \"shoulder.toml\"", "model = \"none.toml\"");
    let line_of = |t: &str, s: &str| t.lines().position(|l| l.starts_with(s)).expect("line") + 1;
    for (from, to, column, says) in [
        (
            "criteria = [\"a\", \"b\", \"c\", \"d\"]",
            "criteria = [\"a\", \"a\"]",
            18,
            "criteria[1]: `a` is criterion a again",
        ),
        (
            "criteria = [\"a\", \"b\", \"c\", \"d\"]",
            "criteria = [\"c\", \"so\"]",
            18,
            "criteria[1]: `so` is criterion c again",
        ),
        ("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = [\"a\", \"e\"]", 18, "criteria[1]: unknown criterion"),
        ("margins = [1, 0.6, 0.4]", "margins = [1, 1]", 15, "margins[1]: 1 is margin 0 again"),
        ("margins = [1, 0.6, 0.4]", "margins = [0.6, 0.60]", 17, "margins[1]: 0.6 is margin 0 again"),
        ("margins = [1, 0.6, 0.4]", "margins = [1e-300]", 12, "margins[0]: 0.000"),
        ("margins = [1, 0.6, 0.4]", "margins = [1, nan]", 15, "margins[1]: NaN is not in [0.001, 1]"),
        (
            "joint_cone = [\"with\", \"without\"]",
            "joint_cone = [\"with\", \"with\"]",
            23,
            "joint_cone[1]: `with` is listed twice",
        ),
    ] {
        let bad = text.replace(from, to);
        assert_ne!(bad, text, "{from}");
        std::fs::write(&file, &bad).unwrap();
        let e = Study::load(&file).expect_err("refused");
        // read, not set up: the model (which does not exist) is never loaded
        assert!(matches!(e, StudyError::Read { .. }), "{to}: {e}");
        let m = e.to_string();
        let key = to.split(' ').next().unwrap();
        let want = format!("{name}:{}:{column}: error: optimisation.{says}", line_of(&bad, key));
        assert!(m.starts_with(&want), "{to}:\n{m}\nwant {want}");
    }
}

/// A file a study names — its model, its motion — may be any readable file: a problem with it
/// says which file and why, never a line of it (issue 33: a planted `FAKE_PASSWORD=` was echoed).
#[test]
fn files_a_study_names_are_not_echoed() {
    let dir = temp_dir("secret");
    let secret = dir.join("secrets.env");
    // its first line is where reading it as a model (TOML) or a motion (CSV header) fails
    std::fs::write(&secret, "FAKE_PASSWORD=hunter2-do-not-print\nAPI_TOKEN=abc123\n").unwrap();
    let secret_name = secret.display().to_string();
    let text = std::fs::read_to_string(abduction_file()).unwrap();
    let model = abduction_file().with_file_name("shoulder.toml").display().to_string();
    let as_model = text.replace("model = \"shoulder.toml\"", &format!("model = {secret_name:?}"));
    let as_motion = text
        .replace("model = \"shoulder.toml\"", &format!("model = {model:?}"))
        .replace("type = \"rhythm\"", &format!("type = \"inputs\"\nfile = {secret_name:?}"))
        .replace("frames = 37\n", "");
    for (what, study) in [("model", as_model), ("motion", as_motion)] {
        let file = dir.join(format!("{what}.toml"));
        std::fs::write(&file, study).unwrap();
        let m = message(Study::load(&file));
        assert!(m.contains("secrets.env"), "{what}: the file is named: {m}");
        assert!(!m.contains("hunter2") && !m.contains("FAKE_PASSWORD") && !m.contains("API_TOKEN"), "{what}: {m}");
    }
}
