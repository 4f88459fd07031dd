//! A study whose motion is a marker trial (`type = "markers"`): markers generated from a known
//! shoulder motion (the rhythm's frames, the scapula on the thorax) with 2 mm of seeded noise,
//! fitted by the facade's inverse kinematics, give back the study's inputs and its results.

mod common;
#[path = "../../mollier/tests/support/shoulder_markers.rs"]
mod shoulder_markers;

use common::*;
use mollier::Compiled;
use mollier_study::Study;
use mollier_study::spec::StudySpec;
use shoulder_markers::{Noise, SEED, trial, with_markers};

const DEG: f64 = std::f64::consts::PI / 180.0;

/// The shoulder model with the humerus's markers.
fn marked_shoulder() -> Compiled {
    let path = shoulder_dir().join("shoulder.toml");
    let text = with_markers(&std::fs::read_to_string(&path).unwrap());
    mollier::load_text(&path.display().to_string(), &text, &mollier::registry())
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

fn spec(edit: impl FnOnce(&mut StudySpec)) -> StudySpec {
    let mut s = abduction_spec();
    s.optimisation.criteria = vec!["b".into()];
    s.optimisation.margins = Some(vec![1.0]);
    edit(&mut s);
    s
}

/// The rhythm from 20° to 120° of abduction in 6 frames (inside the rhythm's data), its markers
/// with noise, and the study of those markers: each angle input within 1° and each length
/// input within 2.5 mm (1° of the 150 mm clavicle) of the rhythm's, and criterion (b)'s muscle
/// forces within 3 % of the largest force of the frame: the forces follow the posture's error
/// through the moment arms and the arm's weight (1° of elevation moves the weight's moment by
/// up to 1.7 %, sin 1°/tan of the elevation near the horizontal), so a 1° fit bounds them near
/// there, with room for the optimum shifting load among synergists (0.57 % measured); the study
/// of the rhythm 10° higher is far outside it (19.6 %).
#[test]
fn a_study_on_noisy_markers_of_a_known_motion_gives_its_inputs_and_forces() {
    let dir = temp_dir("markers");
    let known = Study::with_model(
        &abduction_file(),
        spec(|s| {
            s.motion.frames = 6;
            s.motion.elevation = Some([20.0, 120.0]);
        }),
        marked_shoulder(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let qs: Vec<Vec<f64>> = known.motion.frames.iter().map(|f| f.q.clone()).collect();
    let file = dir.join("trial.trc");
    std::fs::write(&file, trial(&known.compiled, &qs, "trial.trc", 1.0, &mut Noise(SEED))).unwrap();
    let from_markers = |file: &std::path::Path| {
        let s = spec(|s| {
            s.motion.kind = "markers".into();
            s.motion.file = Some(file.display().to_string());
            s.motion.frames = 0;
            s.motion.elevation = None;
        });
        Study::with_model(&abduction_file(), s, marked_shoulder()).unwrap_or_else(|e| panic!("{e}"))
    };
    let fitted = from_markers(&file);
    assert_eq!(fitted.motion.frames.len(), qs.len());
    let angle: Vec<bool> = fitted.compiled.inputs.iter().map(|i| i.name.ends_with(".rotation")).collect();
    let (mut worst_deg, mut worst_mm) = (0.0f64, 0.0f64);
    for (f, q) in fitted.motion.frames.iter().zip(&qs) {
        for j in 0..q.len() {
            let d = (f.q[j] - q[j]).abs();
            if angle[j] { worst_deg = worst_deg.max(d / DEG) } else { worst_mm = worst_mm.max(d * 1e3) }
        }
    }
    eprintln!("inputs from the markers: {worst_deg:.3} deg, {worst_mm:.3} mm");
    assert!(worst_deg < 1.0 && worst_mm < 2.5, "{worst_deg} deg, {worst_mm} mm");
    let forces_off = |a: &Study, b: &Study| {
        let (ra, rb) = (a.run(), b.run());
        let mut worst = 0.0f64;
        for (fa, fb) in ra.variants[0].frames.iter().zip(&rb.variants[0].frames) {
            assert!(fa.status.is_success() && fb.status.is_success());
            let largest = fa.forces.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let d = fa.forces.iter().zip(&fb.forces).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            worst = worst.max(d / largest);
        }
        worst
    };
    let off = forces_off(&known, &fitted);
    eprintln!("forces from the markers: {:.2} % of the frame's largest", 100.0 * off);
    assert!(off < 0.03, "{off}");
    // markers of another motion give other forces: the comparison can fail
    let other = Study::with_model(
        &abduction_file(),
        spec(|s| {
            s.motion.frames = 6;
            s.motion.elevation = Some([30.0, 130.0]);
        }),
        marked_shoulder(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let off_other = forces_off(&other, &fitted);
    eprintln!("against the rhythm 10 deg higher: {:.2} %", 100.0 * off_other);
    assert!(off_other > 0.03, "{off_other}");
}

#[test]
fn a_bad_marker_motion_is_located() {
    let dir = temp_dir("markers-bad");
    let c = marked_shoulder();
    let q0 = c.model.q0();
    let good = trial(&c, &[q0.clone(), q0], "trial.trc", 1.0, &mut Noise(7));
    let run = |text: &str, tasks: Option<&str>| {
        let file = dir.join("t.trc");
        std::fs::write(&file, text).unwrap();
        let s = spec(|s| {
            s.motion.kind = "markers".into();
            s.motion.file = Some(file.display().to_string());
            s.motion.frames = 0;
            s.motion.elevation = None;
            s.motion.tasks = tasks.map(|t| {
                let p = dir.join("tasks.toml");
                std::fs::write(&p, t).unwrap();
                p.display().to_string()
            });
        });
        Study::with_model(&abduction_file(), s, marked_shoulder()).err().map(|e| e.to_string()).unwrap_or_default()
    };
    // a unit the .trc header does not know
    let e = run(&good.replacen("\tmm\n", "\tinch\n", 1), None);
    assert!(e.contains("motion.file") && e.contains("t.trc:3:"), "{e}");
    // a task naming a marker the trial does not have
    let e = run(&good, Some("[markers]\n\"scapula.XX\" = 1\n"));
    // (the study names the file: its contents, the marker's name, are not shown)
    assert!(e.contains("tasks.toml:2:") && e.contains("is not in the trial") && !e.contains("XX"), "{e}");
    // tasks for a motion that is not a marker trial
    let s = spec(|s| s.motion.tasks = Some("tasks.toml".into()));
    let e = Study::with_model(&abduction_file(), s, marked_shoulder()).err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("motion.tasks"), "{e}");
}
