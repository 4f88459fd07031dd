//! DAS3 imported from its `.osim` against OpenSim 4.6's muscle lengths and moment arms at 24
//! postures (tools/peer_opensim.py; the reference is committed, DAS3 itself is external data and
//! the test is skipped, saying so, where it is absent). Moment arms are compared with `-dL/dq` by
//! central differences of OpenSim's lengths: what Mollier's transfer functions are.
//!
//! The 35 muscles without wrap objects agree to 1e-9 m in length and moment arm. Of the 103 that
//! wrap, 76 agree within 0.5 mm (1 mm over an ellipsoid); the others are listed in [`KNOWN`] with
//! the reason and their present differences as bounds (docs/opensim-import.md).

use std::path::PathBuf;

use serde_json::Value;

/// Why a muscle's path differs from OpenSim's.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Why {
    /// A cylinder with a quadrant: OpenSim's one-sided wrapping and CURVED-TRUSS's `side` disagree
    /// on when and which way the path goes round (OpenSim goes round the far side, tens of
    /// millimetres longer, at a posture or two, or for pronator teres 1 at every posture).
    Quadrant,
    /// Ellipsoid: Mollier's path is a geodesic, OpenSim's ellipsoid algorithm is not: lengths
    /// agree within 0.2 mm, moment arms (`-dL/dq`) within 2 mm.
    Ellipsoid,
}
use Why::*;

/// Muscles whose differences from OpenSim exceed 0.5 mm (1 mm over an ellipsoid): the largest
/// length and moment-arm differences allowed (mm; the present ones plus 5 %), and why.
const KNOWN: &[(&str, f64, f64, Why)] = &[
    ("ter_min_3", 114.8, 42.0, Quadrant),
    ("infra_6", 114.2, 37.5, Quadrant),
    ("pron_quad_2", 45.9, 13.3, Quadrant),
    ("pron_quad_3", 45.6, 12.7, Quadrant),
    ("pron_teres_1", 32.9, 13.7, Quadrant),
    ("serr_ant_5", 0.2, 2.0, Ellipsoid),
    ("serr_ant_6", 0.2, 1.5, Ellipsoid),
    ("serr_ant_2", 0.2, 1.3, Ellipsoid),
    ("serr_ant_4", 0.2, 1.2, Ellipsoid),
    ("serr_ant_3", 0.2, 1.1, Ellipsoid),
];

fn das3_path() -> Option<PathBuf> {
    let p = mollier_core::shared_data::dir().join("das3/das3.osim");
    p.exists().then_some(p)
}

/// One muscle's largest differences (m) over the postures.
struct Row {
    name: String,
    length: f64,
    arm: f64,
    wraps: bool,
    ellipsoid: bool,
}

fn compare(path: &std::path::Path, reference: &Value) -> Vec<Row> {
    let imp = mollier_osim::import_path(path).unwrap_or_else(|d| panic!("{}", d.render()));
    let registry = mollier::registry();
    let doc = mollier_format::parse("das3.toml", &imp.toml).unwrap();
    let compiled = mollier::compile(&doc, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(mollier::check(&compiled, &registry).is_well_posed());
    let coords: Vec<&str> = reference["coordinates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let names: Vec<&str> = imp.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(coords, names);
    // every input is one coordinate minus its default: moment arms are minus the transfer functions
    assert!(imp.inputs.iter().all(|d| d.exact_name));
    let input_of: Vec<usize> =
        (0..names.len()).map(|c| imp.inputs.iter().position(|d| d.coordinate == c).unwrap()).collect();
    let muscles: Vec<&str> = reference["muscles"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let model = &compiled.model;
    let probe = mollier::KinematicsRun::new(&compiled);
    let (deformation, transfer) = (probe.deformation_header(), probe.transfer_header());
    let mut rows = Vec::new();
    let mut columns = Vec::new();
    for (k, m) in muscles.iter().enumerate() {
        let osim = &imp.model.muscles[k];
        assert_eq!(&osim.name, m);
        let el = imp.muscle_names[k].as_ref().expect("imported");
        let id = compiled.elements.iter().find(|e| &e.name == el).unwrap().id;
        let reference_length = model.mode_reference(model.mode_by_name(id, "elongation").unwrap()).unwrap_or(0.0);
        let d = deformation.iter().position(|h| h == &format!("{el}.elongation")).unwrap();
        let t = transfer.iter().position(|h| h == &format!("{el}.elongation/{}", compiled.inputs[0].name)).unwrap();
        columns.push((reference_length, d, t));
        let shapes: Vec<_> = osim.wraps.iter().map(|w| &imp.model.bodies[w.wrap.0].wraps[w.wrap.1].shape).collect();
        let ellipsoid = shapes.iter().any(|s| matches!(s, mollier_osim::model::Shape::Ellipsoid(_)));
        rows.push(Row { name: m.to_string(), length: 0.0, arm: 0.0, wraps: !shapes.is_empty(), ellipsoid });
    }
    for posture in reference["postures"].as_array().unwrap() {
        let q: Vec<f64> = posture["q"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        // each posture from the initial configuration (the default pose): solved from the previous
        // posture, the continuation may pass through configurations with an anchor inside an
        // obstacle, which the curved truss refuses
        let mut run = mollier::KinematicsRun::new(&compiled);
        let out = run.solve(&imp.inputs_from_coordinates(&q)).unwrap_or_else(|e| panic!("posture {q:?}: {e}"));
        for (k, row) in rows.iter_mut().enumerate() {
            let (l0, d, t) = columns[k];
            let length = l0 + out.deformations[d];
            row.length = row.length.max((length - posture["lengths"][k].as_f64().unwrap()).abs());
            for c in 0..names.len() {
                let arm = -out.transfer[t + input_of[c]];
                row.arm = row.arm.max((arm - posture["minus_dl_dq"][k][c].as_f64().unwrap()).abs());
            }
        }
    }
    rows
}

#[test]
fn das3_muscle_lengths_and_moment_arms_agree_with_opensim() {
    let Some(path) = das3_path() else {
        mollier_core::shared_data::skip(
            "das3_muscle_lengths_and_moment_arms_agree_with_opensim",
            "../shared/data/das3/das3.osim is absent: the reference data is not checked out",
        );
        return;
    };
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/das3_opensim.json"))
        .unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    assert!(reference["postures"].as_array().unwrap().len() >= 20);
    let rows = compare(&path, &reference);
    assert_eq!(rows.len(), 138);
    let mut problems = Vec::new();
    let (mut straight, mut within, mut worst_plain, mut worst_all) = (0, 0, 0.0f64, 0.0f64);
    for r in &rows {
        let worst = r.length.max(r.arm);
        if !r.wraps {
            // no wrap object: the same straight lines through the same points
            straight += 1;
            if !(r.length < 1e-9 && r.arm < 1e-8) {
                problems.push(format!("{}: {:.3e} m in length, {:.3e} m in moment arm", r.name, r.length, r.arm));
            }
            continue;
        }
        let limit = if r.ellipsoid { 1e-3 } else { 5e-4 };
        match KNOWN.iter().find(|k| k.0 == r.name) {
            None if worst <= limit => {
                within += 1;
                if r.ellipsoid { worst_all = worst_all.max(worst) } else { worst_plain = worst_plain.max(worst) }
            }
            None => problems.push(format!(
                "{}: {:.3} mm in length, {:.3} mm in moment arm",
                r.name,
                r.length * 1e3,
                r.arm * 1e3
            )),
            Some((_, l, a, why)) => {
                println!(
                    "{:14} {:7.3} mm in length, {:7.3} mm in moment arm: {why:?}",
                    r.name,
                    r.length * 1e3,
                    r.arm * 1e3
                );
                if worst <= limit {
                    problems.push(format!("{}: now within the limits: take it off KNOWN", r.name));
                }
                if r.length * 1e3 > *l || r.arm * 1e3 > *a {
                    problems.push(format!(
                        "{}: {:.3} mm, {:.3} mm: worse than before ({l} mm, {a} mm)",
                        r.name,
                        r.length * 1e3,
                        r.arm * 1e3
                    ));
                }
            }
        }
    }
    println!(
        "{straight} muscles without wrapping agree to 1e-9 m; {within} wrapping ones within the limits (largest {:.3} mm without ellipsoids, {:.3} mm over the ellipsoid); {} listed",
        worst_plain * 1e3,
        worst_all * 1e3,
        KNOWN.len()
    );
    assert_eq!(straight + within + KNOWN.len(), rows.len(), "every muscle is compared");
    assert!(problems.is_empty(), "differ from OpenSim: {problems:#?}");
}
