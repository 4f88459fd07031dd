//! The committed shoulder model (models/shoulder/shoulder.toml, generated from DAS3): it
//! compiles, is well posed with the seed's six degrees of freedom, has the 20 muscles and 95
//! elements of van der Helm (1994) Table 2 with its PCSA, starts on the thorax, and every frame
//! of the abduction study's kinematics converges. Needs nothing outside the repository.

mod common;

use common::*;
use mollier_study::rhythm::{RestAngles, posture};

/// Table 2 of van der Helm (1994): muscle, PCSA (cm²), elements.
const TABLE2: [(&str, f64, usize); 20] = [
    ("m. trapezius, scapular part", 14.34, 6),
    ("m. trapezius, clavicular part", 3.12, 6),
    ("m. levator scapulae", 3.44, 3),
    ("m. pectoralis minor", 3.43, 4),
    ("m. rhomboideus", 7.57, 3),
    ("m. serratus anterior", 11.43, 6),
    ("m. deltoideus, scapular part", 16.58, 6),
    ("m. deltoideus, clavicular part", 8.07, 6),
    ("m. coracobrachialis", 3.20, 6),
    ("m. infraspinatus", 8.17, 6),
    ("m. teres minor", 3.10, 6),
    ("m. teres major", 12.56, 6),
    ("m. supraspinatus", 4.69, 6),
    ("m. subscapularis", 14.99, 6),
    ("m. biceps, caput longum", 1.72, 1),
    ("m. biceps, caput breve", 1.78, 1),
    ("m. triceps, caput longum", 6.24, 2),
    ("m. latissimus dorsi", 8.52, 5),
    ("m. pectoralis major, thoracic part", 8.68, 5),
    ("m. pectoralis major, clavicular part", 3.55, 5),
];

#[test]
fn the_model_is_well_posed_with_six_degrees_of_freedom() {
    let registry = mollier::registry();
    let compiled =
        mollier::load(&shoulder_dir().join("shoulder.toml"), &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let report = mollier::check(&compiled, &registry);
    assert!(report.is_well_posed(), "{:?}", report.diagnostics);
    assert_eq!(report.dof, 6);
    let names: Vec<&str> = compiled.inputs.iter().map(|i| i.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "AC.y",
            "AC.z",
            "scapula.TS.x",
            "humerus_pole.rotation",
            "humerus_elevation.rotation",
            "humerus_axial.rotation"
        ]
    );
    // four bones; SC, AC, GH as three free hinges each, three input hinges
    let bodies: Vec<&str> = compiled.bodies.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(bodies, ["thorax", "clavicle", "scapula", "humerus"]);
    let kinds = |k: &str| compiled.elements.iter().filter(|e| e.kind == k).count();
    assert_eq!(kinds("hinge"), 12);
    assert_eq!(kinds("surface"), 2);
    assert_eq!(kinds("truss") + kinds("curved-truss"), 95 + 3);
}

#[test]
fn the_muscles_are_table_2() {
    let study = abduction_with(|s| s.motion.frames = 2);
    assert_eq!(study.groups.len(), 20);
    assert_eq!(study.muscles().len(), 95);
    for (g, (name, pcsa, n)) in study.groups.iter().zip(TABLE2) {
        assert_eq!(g.name, name);
        assert_eq!(g.elements.len(), n, "{name}");
        let total: f64 = g.elements.iter().map(|&i| study.muscles()[i].pcsa * 1e4).sum();
        // Table 2 gives the PCSA per element to two decimals
        assert!((total - pcsa).abs() <= 0.005 * n as f64 + 1e-9, "{name}: {total} vs {pcsa}");
    }
    for m in study.muscles() {
        // optimal lengths (DAS3: optimal fibre + tendon slack) and reference lengths are lengths
        // of a shoulder muscle
        assert!((0.05..0.5).contains(&m.optimal_length), "{}: {}", m.name, m.optimal_length);
        assert!((0.02..0.6).contains(&m.reference_length), "{}: {}", m.name, m.reference_length);
    }
}

#[test]
fn the_initial_configuration_is_the_rhythms_rest_posture_on_the_thorax() {
    let study = abduction_with(|s| s.motion.frames = 2);
    let model = &study.compiled.model;
    let data = mollier_core::Data::new(model);
    // TS and AI on the ellipsoid (the generator placed them), to the file's 0.1 µm
    for el in ["TS_thorax", "AI_thorax"] {
        let id = model.element_by_name(el).unwrap();
        let local: Vec<f64> = model.element_coords(id).iter().map(|&c| data.x()[c]).collect();
        let (e, _, _) =
            mollier_core::conformance::evaluate(model.element(id), &local, mollier_core::Order::Value).unwrap();
        assert!(e[0].abs() < 1e-6, "{el}: {} m from the thorax", e[0]);
    }
    // the Rust rhythm at rest gives the generator's (Python) AC.y, AC.z and TS.x: two
    // implementations of DAS3's estimate_shoulder_angles agree
    let p = posture(&RestAngles::default(), 0.0, 0.0, 0.0);
    let q = study.motion.landmarks.coordinates(&p);
    let q0 = model.q0();
    for k in 0..3 {
        assert!((q[k] - q0[k]).abs() < 2e-7, "input {k}: rhythm {} vs model {}", q[k], q0[k]);
    }
}

#[test]
fn every_frame_of_the_abduction_converges() {
    let study = abduction_with(|_| {});
    assert!(study.motion.frames.len() >= 37);
    let k = study.kinematics();
    for (f, frame) in k.frames.iter().zip(&study.motion.frames) {
        let f = f.as_ref().unwrap_or_else(|e| panic!("elevation {}: {e}", frame.elevation));
        assert!(f.lengths.iter().all(|l| l.is_finite() && *l > 0.0));
    }
    // the scapula rotates laterally: AI moves laterally and cranially from the first frame to
    // the last (van der Helm 1994, Fig. 5); AC rises
    let ai = study.landmarks.iter().position(|(n, _)| n == "scapula.AI").unwrap();
    let ac = study.landmarks.iter().position(|(n, _)| n == "AC").unwrap();
    let first = k.frames[0].as_ref().unwrap();
    let last = k.frames[k.frames.len() - 1].as_ref().unwrap();
    assert!(last.landmarks[ai][0] > first.landmarks[ai][0] + 0.02);
    assert!(last.landmarks[ai][1] > first.landmarks[ai][1] + 0.02);
    assert!(last.landmarks[ac][1] > first.landmarks[ac][1] + 0.02);
}
