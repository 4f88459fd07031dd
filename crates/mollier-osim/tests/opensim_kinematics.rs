//! Imported synthetic models against OpenSim 4.6's own body positions (tools/peer_opensim.py):
//! one model per joint type and per function type, and a coordinate coupler. Every body origin and
//! marker agrees to 1e-9 m at every posture.

use std::path::PathBuf;

use serde_json::Value;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The largest distance (m) between Mollier's and OpenSim's points of one model over its postures.
fn worst_error(name: &str, reference: &Value) -> f64 {
    let path = data().join(format!("osim/{name}.osim"));
    let imp = mollier_osim::import_path(&path).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
    let registry = mollier::registry();
    let doc = mollier_format::parse(&format!("{name}.toml"), &imp.toml).expect("the import checks its file");
    let compiled = mollier::compile(&doc, &registry).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
    assert!(mollier::check(&compiled, &registry).is_well_posed(), "{name} is not well posed");
    let mut run = mollier::KinematicsRun::new(&compiled);
    let header = run.position_header();
    let column = |point: &str| {
        header.iter().position(|h| h == &format!("{point}.x")).unwrap_or_else(|| panic!("{name}: no point {point}"))
    };
    let coords: Vec<String> =
        reference["coordinates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
    let names: Vec<&str> = imp.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(coords, names, "{name}: coordinates");
    let mut worst: f64 = 0.0;
    for posture in reference["postures"].as_array().unwrap() {
        let q: Vec<f64> = posture["q"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let out = run.solve(&imp.inputs_from_coordinates(&q)).unwrap_or_else(|e| panic!("{name} at {q:?}: {e}"));
        let mut compare = |point: String, want: &Value| {
            let k = column(&point);
            let d: f64 = (0..3).map(|i| (out.positions[k + i] - want[i].as_f64().unwrap()).powi(2)).sum::<f64>().sqrt();
            worst = worst.max(d);
        };
        for (body, want) in posture["bodies"].as_object().unwrap() {
            let b = imp.model.bodies.iter().position(|x| &x.name == body).unwrap();
            compare(imp.body_names[b].clone(), want);
        }
        for (marker, want) in posture["markers"].as_object().unwrap() {
            let mk = imp.model.markers.iter().find(|x| &x.name == marker).unwrap();
            compare(format!("{}.{marker}", imp.body_names[mk.body]), want);
        }
    }
    worst
}

#[test]
fn every_joint_and_function_type_agrees_with_opensim_to_1e_9_m() {
    let text = std::fs::read_to_string(data().join("opensim_kinematics.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let models = reference["models"].as_object().unwrap();
    assert!(models.len() >= 14, "one model per joint and function type");
    let mut failed = Vec::new();
    for (name, r) in models {
        let e = worst_error(name, r);
        println!("{name:24} {} postures, largest error {e:.2e} m", r["postures"].as_array().unwrap().len());
        if !(e < 1e-9) {
            failed.push(format!("{name}: {e:.3e} m"));
        }
    }
    assert!(failed.is_empty(), "differ from OpenSim by more than 1e-9 m: {failed:?}");
}
