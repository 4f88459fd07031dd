//! Inverse kinematics: OpenSim's own IK on its gait2354 example as the reference, and a known
//! shoulder motion recovered from noisy markers with the scapula held on the thorax.

use std::path::Path;

use mollier::ik::{IkOptions, IkRun, Unknowns, load_model, read_tasks};
use mollier::{parse_trc, read_trc};
use mollier_core::kinematics::solve_positions;
use mollier_core::{Data, ModeId};

#[path = "support/opensim_gait.rs"]
mod opensim_gait;
#[path = "support/shoulder_markers.rs"]
mod shoulder_markers;
use shoulder_markers::{MARKERS, Noise, SEED, trial, with_markers};

const DEG: f64 = std::f64::consts::PI / 180.0;

/// OpenSim 4.6's IK of the first 30 frames (tools/peer_opensim_ik.py): the coordinates within
/// 0.5° or 1 mm and the marker RMS within 1 mm (the tolerances).
#[test]
fn gait2354_walk_agrees_with_opensim_ik() {
    let Some(dir) = opensim_gait::models_or_skip("gait2354_walk_agrees_with_opensim_ik") else { return };
    let registry = mollier::registry();
    let (compiled, unknowns) = load_model(&dir.join("Gait2354_Simbody/subject01_simbody.osim"), &registry).unwrap();
    let gait = dir.join("Gait2354_Simbody");
    let trial = read_trc(&gait.join("subject01_walk1.trc")).unwrap();
    let tasks = read_tasks(&gait.join("subject01_Setup_IK.xml")).unwrap();
    assert_eq!((tasks.markers.len(), tasks.coordinates.len()), (31, 4));
    let mut run = IkRun::new(&compiled, &registry, unknowns, &trial, Some(&tasks)).unwrap();
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/opensim_ik_gait2354.csv"))
            .unwrap();
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<f64>> = lines.map(|l| l.split(',').map(|v| v.parse().unwrap()).collect()).collect();
    assert_eq!(rows.len(), 30);
    let names = run.unknown_names().to_vec();
    let angle = run.unknown_is_angle().to_vec();
    let (mut worst_deg, mut worst_mm, mut worst_rms) = (0.0f64, 0.0f64, 0.0f64);
    for (i, row) in rows.iter().enumerate() {
        assert!((row[0] - trial.times[i]).abs() < 1e-9);
        let f = run.solve(i).unwrap();
        for (j, name) in names.iter().enumerate() {
            let c = header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name} not in the reference"));
            let d = (f.p[j] - row[c]).abs();
            if angle[j] { worst_deg = worst_deg.max(d / DEG) } else { worst_mm = worst_mm.max(d * 1e3) }
        }
        let rms = row[header.iter().position(|h| *h == "marker_error_rms").unwrap()];
        worst_rms = worst_rms.max((f.rms - rms).abs() * 1e3);
    }
    eprintln!("against OpenSim: {worst_deg:.4} deg, {worst_mm:.4} mm, marker RMS {worst_rms:.4} mm");
    assert!(worst_deg < 0.5 && worst_mm < 1.0 && worst_rms < 1.0, "{worst_deg} deg, {worst_mm} mm, {worst_rms} mm");
}

/// The walk's 30 frames at OpenSim's accuracy (`--tolerance 1e-5`, the benchmark's) against the
/// same frames converged (1e-10): every unknown within 2e-5 (rad or m) of the converged one, and
/// the steps a frame counted (the benchmark's cost is one position solve and one `DF` a step).
#[test]
fn gait2354_walk_at_opensim_s_accuracy_is_the_converged_fit_within_it() {
    let Some(dir) = opensim_gait::models_or_skip("gait2354_walk_at_opensim_s_accuracy_is_the_converged_fit_within_it")
    else {
        return;
    };
    let registry = mollier::registry();
    let gait = dir.join("Gait2354_Simbody");
    let (compiled, unknowns) = load_model(&gait.join("subject01_simbody.osim"), &registry).unwrap();
    let trial = read_trc(&gait.join("subject01_walk1.trc")).unwrap();
    let tasks = read_tasks(&gait.join("subject01_Setup_IK.xml")).unwrap();
    let fit = |tolerance: f64| {
        let options = IkOptions::default().with_tolerance(tolerance).unwrap();
        let mut run =
            IkRun::new(&compiled, &registry, unknowns.clone(), &trial, Some(&tasks)).unwrap().with_options(options);
        (0..30).map(|i| run.solve(i).unwrap()).collect::<Vec<_>>()
    };
    let (coarse, converged) = (fit(1e-5), fit(1e-10));
    let worst = coarse
        .iter()
        .zip(&converged)
        .flat_map(|(a, b)| a.p.iter().zip(&b.p).map(|(x, y)| (x - y).abs()))
        .fold(0.0, f64::max);
    let steps = |f: &[mollier::ik::IkFrame]| f.iter().map(|f| f.iterations).sum::<usize>() as f64 / 30.0;
    eprintln!(
        "at 1e-5: {worst:.1e} rad or m from the converged fit; steps a frame {:.2} (converged: {:.2})",
        steps(&coarse),
        steps(&converged)
    );
    assert!(worst < 2e-5, "{worst:e}");
}

/// A known motion of the shoulder (the arm elevated from 20° to 80° in a plane turning from 20°
/// to 60°, turned about its axis, the clavicle and scapula moving with it), its markers with
/// normal noise of 2 mm RMS per marker ([`shoulder_markers::SIGMA_MM`] per coordinate), and IK
/// from them: every angle within 1°, every length input within 2.5 mm (1° of the 150 mm
/// clavicle), and TS and AI on the thorax to 1e-9 m in every frame.
#[test]
fn a_known_shoulder_motion_is_recovered_from_noisy_markers() {
    let registry = mollier::registry();
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder/shoulder.toml");
    let text = with_markers(&std::fs::read_to_string(&path).unwrap());
    let compiled = mollier::load_text(&path.display().to_string(), &text, &registry).unwrap();
    let model = &compiled.model;
    // AC.y, AC.z and TS.x (m), then the humerus's three angles: the order that
    // mollier-study's shoulder_model.rs holds the model to
    assert!(compiled.inputs.iter().take(3).all(|i| !i.name.ends_with(".rotation")), "the girdle's inputs first");
    assert!(compiled.inputs.iter().skip(3).all(|i| i.name.ends_with(".rotation")), "the humerus's angles last");
    let q0 = model.q0();
    let frames = 25;
    let truth: Vec<Vec<f64>> = (0..frames)
        .map(|i| {
            let s = i as f64 / (frames - 1) as f64;
            let mut q = q0.clone();
            q[0] += 0.012 * s;
            q[1] += 0.006 * s;
            q[2] += 0.008 * s;
            // the arm away from hanging, where pole and axial rotation are one turn (a gimbal)
            q[3] += (20.0 + 40.0 * s) * DEG;
            q[4] += (20.0 + 60.0 * s) * DEG;
            q[5] += 25.0 * DEG * (std::f64::consts::PI * s).sin();
            q
        })
        .collect();
    let trc = trial(&compiled, &truth, "shoulder.trc", 50.0, &mut Noise(SEED));
    let trial = parse_trc("shoulder.trc", &trc).unwrap();
    let mut run = IkRun::new(&compiled, &registry, Unknowns::Inputs, &trial, None).unwrap();
    assert_eq!(run.markers().len(), MARKERS.len());
    // the frames are solved on the model without its muscles: its modes are those to read
    let solved = run.solved_model();
    assert!(solved.model.n_elements() < model.n_elements(), "IK solves the model without its muscles");
    let contact: Vec<ModeId> = ["TS_thorax", "AI_thorax"]
        .iter()
        .map(|n| solved.model.mode_id(solved.elements.iter().find(|e| e.name == *n).unwrap().id, 0))
        .collect();
    let (mut worst_deg, mut worst_mm, mut off_thorax) = (0.0f64, 0.0f64, 0.0f64);
    for (i, q) in truth.iter().enumerate() {
        let f = run.solve(i).unwrap();
        for j in 0..3 {
            worst_mm = worst_mm.max((f.q[j] - q[j]).abs() * 1e3);
        }
        for j in 3..6 {
            worst_deg = worst_deg.max((f.q[j] - q[j]).abs() / DEG);
        }
        for m in &contact {
            off_thorax = off_thorax.max(run.data().mode_value(*m).abs());
        }
    }
    eprintln!("recovered: {worst_deg:.3} deg, {worst_mm:.3} mm; TS/AI off the thorax {off_thorax:e} m");
    assert!(worst_deg < 1.0 && worst_mm < 2.5 && off_thorax < 1e-9, "{worst_deg} deg {worst_mm} mm {off_thorax} m");
}

/// IK solves the model without its muscles' paths: none is left (a line of action whose modes
/// are all free), no element that moves is taken away, the marker is kept, and at
/// configurations away from the initial one every point left is where the whole model puts it
/// (to 1e-12 m).
#[test]
fn ik_solves_the_skeleton_and_it_places_every_point_alike() {
    use mollier_core::{ElementRole, ModeRole};
    let registry = mollier::registry();
    let mut models = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder/shoulder.toml")];
    if let Some(dir) = opensim_gait::models_or_skip("ik_solves_the_skeleton: gait2354") {
        models.push(dir.join("Gait2354_Simbody/subject01_simbody.osim"));
    }
    let paths = |c: &mollier::Compiled| -> Vec<String> {
        let m = &c.model;
        c.elements
            .iter()
            .filter(|e| e.role == ElementRole::LineOfAction)
            .filter(|e| {
                (0..m.element(e.id).layout().n_modes()).all(|k| m.mode_role(m.mode_id(e.id, k)) == ModeRole::Dependent)
            })
            .map(|e| e.name.clone())
            .collect()
    };
    for path in models {
        let (compiled, unknowns) = load_model(&path, &registry).unwrap();
        let first = &compiled.points[0].name;
        let trc = format!(
            "PathFileType\t4\t(X/Y/Z)\tt.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n\
             50\t50\t1\t1\tm\nFrame#\tTime\t{first}\n\t\tX1\tY1\tZ1\n\n1\t0\t0\t0\t0\n"
        );
        let trial = parse_trc("t.trc", &trc).unwrap();
        let run = IkRun::new(&compiled, &registry, unknowns, &trial, None).unwrap();
        let solved = run.solved_model();
        let removed = paths(&compiled);
        assert!(!removed.is_empty() && paths(solved).is_empty(), "{}: paths left {:?}", path.display(), paths(solved));
        // besides the paths, only elements all of whose modes are held (a moving path point
        // placing a node of its own) may go
        let m = &compiled.model;
        let gone: Vec<&str> = compiled
            .elements
            .iter()
            .filter(|e| !solved.elements.iter().any(|s| s.name == e.name) && !removed.contains(&e.name))
            .filter(|e| {
                let held = |k| matches!(m.mode_role(m.mode_id(e.id, k)), ModeRole::Fixed(_));
                !(0..m.element(e.id).layout().n_modes()).all(held)
            })
            .map(|e| e.name.as_str())
            .collect();
        assert!(gone.is_empty(), "{}: taken away but neither a path nor held: {gone:?}", path.display());
        assert!(solved.points.iter().any(|p| p.name == *first), "{}: the marker {first} is kept", path.display());
        assert!(solved.points.len() < compiled.points.len(), "{}: the muscles' points are taken away", path.display());
        let (mut whole, mut skeleton) = (Data::new(&compiled.model), Data::new(&solved.model));
        let mut noise = Noise(0xB0D1E5);
        let mut worst = 0.0f64;
        for _ in 0..5 {
            // each input 0.05 (rad or m/10) at most from the initial configuration
            let q: Vec<f64> = compiled
                .model
                .q0()
                .iter()
                .zip(&compiled.inputs)
                .map(|(v, i)| {
                    let s = if i.quantity == mollier_core::element::Quantity::Angle { 0.05 } else { 0.005 };
                    v + s * (2.0 * noise.uniform() - 1.0)
                })
                .collect();
            solve_positions(&compiled.model, &mut whole, &q).unwrap();
            solve_positions(&solved.model, &mut skeleton, &q).unwrap();
            for s in &solved.points {
                let p = compiled.points.iter().find(|p| p.name == s.name).unwrap();
                let (a, b) = (whole.position(&compiled.model, p.node), skeleton.position(&solved.model, s.node));
                worst = worst.max((0..3).map(|k| (a[k] - b[k]).abs()).fold(0.0, f64::max));
            }
        }
        let (elements, points) =
            (compiled.elements.len() - solved.elements.len(), compiled.points.len() - solved.points.len());
        eprintln!(
            "{}: {elements} elements ({} paths) and {points} points taken away, points alike to {worst:e} m",
            path.display(),
            removed.len()
        );
        assert!(worst < 1e-12, "{}: {worst} m", path.display());
    }
}
