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
    assert!(message(setup(|s| s.optimisation.joint_cone.clear())).contains("joint_cone is empty"));
    assert!(message(setup(|s| s.motion.model.inputs[0] = "AC.x".into())).contains("no input `AC.x`"));
    assert!(message(setup(|s| s.motion.model.inputs[1] = "AC.y".into())).contains("twice"));
    assert!(message(setup(|s| s.motion.frames = 1)).contains("frames"));
    assert!(message(setup(|s| s.motion.kind = "spline".into())).contains("rhythm"));
    assert!(message(setup(|s| s.motion.elevation[1] = f64::NAN)).contains("finite"));
    assert!(message(setup(|s| s.motion.model.rest_angles = [0.0, 10.0, 0.0])).contains("rest angles"));
    assert!(message(setup(|s| s.motion.model.scapula = "blade".into())).contains("no body `blade`"));
    assert!(message(setup(|s| s.landmarks.push("AC.z".into()))).contains("AC.z"));
    assert!(message(setup(|s| s.format_version = 3)).contains("format_version"));
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
