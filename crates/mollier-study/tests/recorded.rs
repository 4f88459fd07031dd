//! Studies on recorded kinematics: thorax-relative angles (`angles`) and the model's inputs
//! (`inputs`) read from motion files give the same inputs as the rhythm they were written from.

mod common;

use common::*;
use mollier_study::Study;
use mollier_study::motion::{ANGLE_COLUMNS, girdle_angles};
use mollier_study::rotation::to_yzy;

/// Tolerance on the inputs (m, rad): the files carry 17 significant digits; the angles' round
/// trip through YZX/YZY decompositions loses a few ulps.
const SAME: f64 = 1e-10;

fn rhythm() -> Study {
    abduction_with(|s| {
        s.motion.frames = 5;
        s.motion.elevation = Some([10.0, 150.0]);
        s.optimisation.criteria = vec!["b".into()];
        s.optimisation.margins = Some(vec![1.0]);
    })
}

fn recorded(kind: &str, file: &std::path::Path) -> Study {
    abduction_with(|s| {
        s.motion.kind = kind.into();
        s.motion.file = Some(file.display().to_string());
        s.motion.frames = 0;
        s.motion.elevation = None;
        s.optimisation.criteria = vec!["b".into()];
        s.optimisation.margins = Some(vec![1.0]);
    })
}

fn assert_same_inputs(a: &Study, b: &Study) {
    assert_eq!(a.motion.frames.len(), b.motion.frames.len());
    for (fa, fb) in a.motion.frames.iter().zip(&b.motion.frames) {
        for (x, y) in fa.q.iter().zip(&fb.q) {
            assert!((x - y).abs() < SAME, "frame {}: {:?} vs {:?}", fa.time, fa.q, fb.q);
        }
        assert!((fa.elevation - fb.elevation).abs() < 1e-8, "{} vs {}", fa.elevation, fb.elevation);
    }
}

#[test]
fn recorded_angles_give_the_rhythms_inputs() {
    let reference = rhythm();
    let dir = temp_dir("recorded-angles");
    let mut text = format!("time,{}\n", ANGLE_COLUMNS.map(|c| format!("{c} [deg]")).join(","));
    for f in &reference.motion.frames {
        let g = girdle_angles(&f.posture.clavicle, &f.posture.scapula);
        let h = to_yzy(&f.posture.humerus).expect("away from gimbal lock");
        let row: Vec<String> = g.iter().chain(&h).map(|a| format!("{:.17e}", a.to_degrees())).collect();
        text.push_str(&format!("{},{}\n", f.time, row.join(",")));
    }
    let file = dir.join("angles.csv");
    std::fs::write(&file, text).unwrap();
    let study = recorded("angles", &file);
    assert_same_inputs(&reference, &study);
    // a recorded motion runs as a study, and is not the rhythm: no extrapolation warning
    assert!(study.warnings().is_empty());
    let r = study.run();
    assert!(r.variants.iter().all(|v| v.frames.iter().all(|f| f.status.is_success())));
}

#[test]
fn a_motion_file_of_the_inputs_runs_as_a_study() {
    let reference = rhythm();
    let dir = temp_dir("recorded-inputs");
    let names: Vec<&str> = reference.compiled.inputs.iter().map(|i| i.name.as_str()).collect();
    let mut text = format!("time,{}\n", names.join(","));
    for f in &reference.motion.frames {
        let row: Vec<String> = f.q.iter().map(|v| format!("{v:.17e}")).collect();
        text.push_str(&format!("{},{}\n", f.time, row.join(",")));
    }
    let file = dir.join("motion.csv");
    std::fs::write(&file, text).unwrap();
    let study = recorded("inputs", &file);
    assert_same_inputs(&reference, &study);
    let (a, b) = (reference.run(), study.run());
    // the same inputs, the same forces
    for (va, vb) in a.variants.iter().zip(&b.variants) {
        for (fa, fb) in va.frames.iter().zip(&vb.frames) {
            assert!(fa.status.is_success() && fb.status.is_success());
            let d = fa.forces.iter().zip(&fb.forces).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(d < 1e-6, "{}: forces differ by {d} N", va.variant.name());
        }
    }
}

#[test]
fn the_rhythm_warns_past_its_data() {
    let inside = abduction_with(|s| {
        s.motion.frames = 2;
        s.motion.elevation = Some([10.0, 120.0]);
    });
    assert!(inside.warnings().is_empty());
    let past = abduction_with(|s| {
        s.motion.frames = 3;
        s.motion.elevation = Some([10.0, 150.0]);
    });
    let w = past.warnings();
    assert!(w.len() == 1 && w[0].contains("extrapolated") && w[0].contains("1 of 3 frames"), "{w:?}");
}
