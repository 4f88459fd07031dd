//! Bad study files and muscle tables are reported, never a panic.

mod common;

use std::path::Path;

use common::*;
use mollier_study::{Study, StudyError};

fn setup(edit: impl FnOnce(&mut mollier_study::spec::StudySpec), table: Option<&str>) -> Result<Study, StudyError> {
    let dir = temp_dir("errors");
    let mut spec = abduction_spec();
    spec.motion.frames = 2;
    spec.muscles = shoulder_dir().join("muscles.csv").display().to_string();
    if let Some(t) = table {
        std::fs::write(dir.join("table.csv"), t).unwrap();
        spec.muscles = "table.csv".into();
    }
    edit(&mut spec);
    let compiled = mollier::load(&shoulder_dir().join("shoulder.toml"), &mollier::registry()).unwrap();
    Study::with_model(&dir.join("study.toml"), spec, compiled)
}

fn message(r: Result<Study, StudyError>) -> String {
    match r {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_studies_are_reported() {
    assert!(setup(|_| {}, None).is_ok());
    assert!(message(setup(|s| s.optimisation.criteria = vec!["e".into()], None)).contains("criterion"));
    assert!(message(setup(|s| s.optimisation.criteria.clear(), None)).contains("empty"));
    assert!(message(setup(|s| s.motion.model.inputs[0] = "AC.x".into(), None)).contains("no input `AC.x`"));
    assert!(message(setup(|s| s.motion.model.inputs[1] = "AC.y".into(), None)).contains("twice"));
    assert!(message(setup(|s| s.motion.frames = 1, None)).contains("frames"));
    assert!(message(setup(|s| s.motion.kind = "spline".into(), None)).contains("rhythm"));
    assert!(message(setup(|s| s.motion.elevation[1] = f64::NAN, None)).contains("finite"));
    assert!(message(setup(|s| s.motion.model.rest_angles = [0.0, 10.0, 0.0], None)).contains("rest angles"));
    assert!(message(setup(|s| s.motion.model.scapula = "blade".into(), None)).contains("no body `blade`"));
    assert!(
        message(setup(|s| s.optimisation.compression.push("biceps_longum.elongation".into()), None)).contains("rigid")
    );
    assert!(message(setup(|s| s.optimisation.tension.push("conoid.twist".into()), None)).contains("no mode"));
    assert!(message(setup(|s| s.optimisation.specific_tension = -1.0, None)).contains("specific_tension"));
    assert!(message(setup(|s| s.optimisation.reserve_weight = Some(0.0), None)).contains("reserve_weight"));
    let glenoid =
        |f: &dyn Fn(&mut mollier_study::spec::GlenoidSpec)| message(setup(|s| f(s.glenoid.as_mut().unwrap()), None));
    assert!(glenoid(&|g| g.to_glenoid[0][0] = 2.0).contains("not a rotation"));
    assert!(glenoid(&|g| g.into_socket = "w".into()).contains("into_socket"));
    assert!(glenoid(&|g| g.half_angles = [95.0, 30.0]).contains("half_angles"));
    assert!(glenoid(&|g| g.variants = vec!["maybe".into()]).contains("maybe"));
    assert!(glenoid(&|g| g.joint = "scapula.XX".into()).contains("scapula.XX"));
    assert!(glenoid(&|g| g.elements = vec!["nothing".into()]).contains("nothing"));
    assert!(message(setup(|s| s.landmarks.push("AC.z".into()), None)).contains("AC.z"));
    assert!(message(setup(|s| s.format_version = 2, None)).contains("format_version"));
}

#[test]
fn bad_muscle_tables_are_reported() {
    let head = "element,muscle,pcsa_cm2,optimal_length_mm\n";
    let ok = format!("{head}infraspinatus_1,m. infraspinatus,1.36,101.3\n");
    assert_eq!(setup(|_| {}, Some(&ok)).unwrap().muscles.len(), 1);
    for (table, want) in [
        (format!("{head}infraspinatus_9,x,1,100\n"), "no element `infraspinatus_9`"),
        (format!("{head}infraspinatus_1,x,-1,100\n"), "positive"),
        (format!("{head}infraspinatus_1,x,one,100\n"), "not a number"),
        (format!("{head}conoid,x,1,100\n"), "free"),
        (format!("{head}gh_x,x,1,100\n"), "not a truss"),
        (format!("{head}infraspinatus_1,x,1,100\ninfraspinatus_1,x,1,100\n"), "twice"),
        ("element,muscle,pcsa\n".to_string(), "no column"),
        (head.to_string(), "no muscles"),
    ] {
        let m = message(setup(|_| {}, Some(&table)));
        assert!(m.contains(want), "{m}");
    }
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
