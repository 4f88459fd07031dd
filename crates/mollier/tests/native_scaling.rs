//! `mollier scale` on Mollier's own model files: a uniformly scaled model against its closed
//! form (every length times the factor, the masses to the subject's, each muscle's moment arm
//! times the factor), and an OpenSim model scaled as `.osim` and as its imported `.toml` with
//! the same unequal factors, which must give the same model.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mollier::scale::{ScaleRequest, Scaling, scale_any};
use mollier::{Compiled, KinematicsRun, MuscleColumns};
use mollier_core::{Data, solve_positions};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mollier-native-scaling-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every point's global position (m) in the initial configuration, by name.
fn points(c: &Compiled) -> HashMap<String, [f64; 3]> {
    let mut data = Data::new(&c.model);
    solve_positions(&c.model, &mut data, &c.model.q0()).unwrap();
    c.points
        .iter()
        .map(|p| {
            let x = data.position(&c.model, p.node);
            (p.name.clone(), [x[0], x[1], x[2]])
        })
        .collect()
}

/// The muscles' lengths (m) and moment arms (m/rad, one per input) at the inputs `q`.
fn muscles_at(c: &Compiled, q: &[f64]) -> HashMap<String, (f64, Vec<f64>)> {
    let mut run = KinematicsRun::new(c);
    let columns = MuscleColumns::of(c, &run);
    let frame = run.solve(q).unwrap();
    let (lengths, arms) = columns.values(&frame);
    let n = c.inputs.len();
    columns
        .names()
        .iter()
        .enumerate()
        .map(|(k, m)| (m.clone(), (lengths[k], arms[k * n..(k + 1) * n].to_vec())))
        .collect()
}

/// The muscles' lengths and moment arms in the initial configuration.
fn muscles(c: &Compiled) -> HashMap<String, (f64, Vec<f64>)> {
    muscles_at(c, &c.model.q0())
}

fn scale(model: &Path, setup: &Path) -> Scaling {
    let request = ScaleRequest { model, setup, markers: None, mass: None };
    scale_any(&request, &mollier::registry()).unwrap_or_else(|e| panic!("{e}")).1
}

/// The wrapping example with a mass on the arm, a load-sharing muscle and a Hill muscle.
const EXTRA_BODY: &str = "mass = 2\ncom = [150, 10, 0]\ninertia = [2000, 30000, 31000, 100, 0, 0]\n";
const EXTRA_MUSCLES: &str = "\n[load_sharing.muscles.over_cylinder]\npcsa = 2\noptimal_length = 300\n\
                             tendon_slack = 100\n\n[muscles.over_sphere]\nmax_force = 500\n\
                             optimal_fibre_length = 120\ntendon_slack_length = 200\n";

/// The wrapping example (a sphere, a cylinder and an ellipsoid wrapped by three muscles, in mm)
/// scaled by 1.2 along every axis of both bodies, to a subject of 3 kg (the model's 2 kg): every
/// point 1.2 times as far from the ground's origin, the mass 3 kg, the inertia × 1.2² × 1.5,
/// every muscle's length and moment arm × 1.2 at every angle of the arm (a similar figure: the
/// obstacles' sizes scale too), the fibre and tendon slack lengths × 1.2.
#[test]
fn a_uniformly_scaled_model_is_its_closed_form() {
    let dir = scratch("uniform");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms/wrapping.toml");
    let text = std::fs::read_to_string(&root)
        .unwrap()
        .replace("[bodies.arm]\norigin = \"ground\"\n", &format!("[bodies.arm]\norigin = \"ground\"\n{EXTRA_BODY}"))
        + EXTRA_MUSCLES;
    let model = dir.join("wrapping.toml");
    std::fs::write(&model, &text).unwrap();
    let setup = dir.join("factors.toml");
    std::fs::write(&setup, "mass = 3\n[bodies]\nground = 1.2\narm = [1.2, 1.2, 1.2]\n").unwrap();
    let before = mollier::load(&model, &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let Scaling::Native(s) = scale(&model, &setup) else { panic!("a Mollier model is scaled as one") };
    let k = 1.2;
    let (p0, p1) = (points(&before), points(&s.compiled));
    assert_eq!(p0.len(), p1.len());
    let mut worst = 0.0f64;
    for (name, x) in &p0 {
        let y = p1[name];
        worst = worst.max((0..3).map(|i| (y[i] - k * x[i]).abs()).fold(0.0, f64::max));
    }
    eprintln!("points: {worst:.1e} m from 1.2 times their place");
    assert!(worst < 1e-12, "{worst}");
    let arm = |c: &Compiled| c.bodies.iter().find(|b| b.name == "arm").unwrap().clone();
    let (a0, a1) = (arm(&before), arm(&s.compiled));
    assert!((a1.mass.unwrap() - 3.0).abs() < 1e-12, "{:?}", a1.mass);
    let (i0, i1) = (a0.inertia.unwrap(), a1.inertia.unwrap());
    for r in 0..3 {
        assert!((a1.com.unwrap()[r] - k * a0.com.unwrap()[r]).abs() < 1e-15);
        for c in 0..3 {
            assert!((i1[r][c] - i0[r][c] * k * k * 1.5).abs() <= 1e-12 * i0[r][c].abs(), "{i1:?} {i0:?}");
        }
    }
    // the arm turned from -20° to 85° in steps of 15° (the example's motion): each path on its
    // obstacle at some
    let mut worst = 0.0f64;
    for step in 0..8 {
        let q = vec![(-20.0 + 15.0 * step as f64).to_radians()];
        let (m0, m1) = (muscles_at(&before, &q), muscles_at(&s.compiled, &q));
        assert_eq!(m0.len(), 3);
        for (name, (l0, arms0)) in &m0 {
            let (l1, arms1) = &m1[name];
            worst = worst.max((l1 / (k * l0) - 1.0).abs());
            for (a, b) in arms0.iter().zip(arms1) {
                worst = worst.max((b - k * a).abs() / (k * a.abs()).max(1e-3));
            }
        }
    }
    eprintln!("muscle lengths and moment arms: {worst:.1e} from 1.2 times (relative)");
    assert!(worst < 1e-9, "{worst}");
    let spec = s.compiled.document.spec();
    let shared = spec.load_sharing.as_ref().unwrap().muscles.get("over_cylinder").unwrap();
    assert!(
        (shared.optimal_length.unwrap() - 360.0).abs() < 1e-9 && (shared.tendon_slack.unwrap() - 120.0).abs() < 1e-9
    );
    let hill = spec.muscles.get("over_sphere").unwrap();
    assert!((hill.optimal_fibre_length - 144.0).abs() < 1e-9 && (hill.tendon_slack_length - 240.0).abs() < 1e-9);
    assert_eq!(s.report.muscles.len(), 2, "the report has the muscles with fibre lengths");
    assert_eq!(s.report.masses, vec![(0.0, 0.0), (2.0, 3.0)]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn arm26() -> Option<PathBuf> {
    let path = mollier_core::shared_data::opensim_models().join("arm26.osim");
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing: run tools/fetch-opensim-models",
        path.display()
    );
    eprintln!("skipped: {} is missing (tools/fetch-opensim-models)", path.display());
    None
}

/// OpenSim's arm26 scaled by unequal factors per axis and to 40 kg, once as `.osim` (OpenSim's
/// rules on the OpenSim model, then imported; checked against OpenSim 4.6's ScaleTool in
/// `model_scaling.rs`) and once as the `.toml` `mollier import` writes for it: the same
/// points, masses, centres of mass, inertias (the cylinder rule of unequal factors), muscle
/// lengths with their wraps, and optimal lengths.
#[test]
fn an_opensim_model_scaled_as_osim_and_as_its_mollier_file_is_one_model() {
    let Some(osim) = arm26() else { return };
    let dir = scratch("arm26");
    let registry = mollier::registry();
    let text = std::fs::read_to_string(&osim).unwrap();
    let (import, _) = mollier::import_osim(&osim.display().to_string(), &text, &registry).unwrap();
    let toml = dir.join("arm26.toml");
    std::fs::write(&toml, &import.toml).unwrap();
    let setup = dir.join("factors.toml");
    std::fs::write(
        &setup,
        "mass = 40\n[bodies]\nr_humerus = [1.1, 1.25, 0.95]\nr_ulna_radius_hand = [1.05, 1.15, 0.9]\n",
    )
    .unwrap();
    let Scaling::OpenSim(a) = scale(&osim, &setup) else { panic!("an OpenSim model is scaled as one") };
    let Scaling::Native(b) = scale(&toml, &setup) else { panic!("a Mollier model is scaled as one") };
    let rel = |x: f64, y: f64| (x - y).abs() / x.abs().max(y.abs()).max(1e-3);
    let (pa, pb) = (points(&a.compiled), points(&b.compiled));
    assert_eq!(pa.len(), pb.len());
    let worst_point =
        pa.iter().map(|(n, x)| (0..3).map(|i| (x[i] - pb[n][i]).abs()).fold(0.0, f64::max)).fold(0.0, f64::max);
    let mut worst_body = 0.0f64;
    for (x, y) in a.compiled.bodies.iter().zip(&b.compiled.bodies) {
        assert_eq!(x.name, y.name);
        let (Some(mx), Some(my)) = (x.mass, y.mass) else { continue };
        worst_body = worst_body.max(rel(mx, my));
        let (ix, iy) = (x.inertia.unwrap(), y.inertia.unwrap());
        for r in 0..3 {
            worst_body = worst_body.max((x.com.unwrap()[r] - y.com.unwrap()[r]).abs());
            (0..3).for_each(|c| worst_body = worst_body.max(rel(ix[r][c], iy[r][c])));
        }
    }
    let (ma, mb) = (muscles(&a.compiled), muscles(&b.compiled));
    assert_eq!(ma.len(), 6);
    let worst_length = ma.iter().map(|(n, (l, _))| rel(*l, mb[n].0)).fold(0.0, f64::max);
    let optimal = |c: &Compiled| -> Vec<f64> {
        let sharing = c.document.spec().load_sharing.clone().unwrap();
        sharing.muscles.iter().map(|(_, m)| m.optimal_length.unwrap()).collect()
    };
    let (oa, ob) = (optimal(&a.compiled), optimal(&b.compiled));
    assert_eq!(oa.len(), 6);
    let worst_optimal = oa.iter().zip(&ob).map(|(x, y)| rel(*x, *y)).fold(0.0, f64::max);
    eprintln!(
        "arm26 as .osim and as .toml: points {worst_point:.1e} m, bodies {worst_body:.1e}, muscle lengths \
         {worst_length:.1e}, optimal lengths {worst_optimal:.1e} (relative)"
    );
    assert!(worst_point < 1e-12 && worst_body < 1e-12 && worst_length < 1e-9 && worst_optimal < 1e-9);
    let total: f64 = b.report.masses.iter().map(|(_, m)| m).sum();
    assert!((total - 40.0).abs() < 1e-12, "{total}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// arm26's three markers measured 6-12 mm off the model's places, at the shoulder elevated by
/// 0.4 rad and the elbow flexed by 0.9, over three frames of a static trial (`.trc`, mm).
fn arm26_static_trial(c: &Compiled) -> String {
    let names = ["r_acromion", "r_humerus_epicondyle", "r_radius_styloid"];
    let off = [[0.006, -0.004, 0.003], [-0.008, 0.005, 0.007], [0.004, 0.009, -0.006]];
    let mut data = Data::new(&c.model);
    let q: Vec<f64> = c.model.q0().iter().zip([0.4, 0.9]).map(|(q, d)| q + d).collect();
    solve_positions(&c.model, &mut data, &q).unwrap();
    let mut trc = format!(
        "PathFileType\t4\t(X/Y/Z)\tstatic.trc\nDataRate\tCameraRate\tNumFrames\tNumMarkers\tUnits\n\
         100\t100\t3\t3\tmm\nFrame#\tTime\t{}\n\t\tX1\tY1\tZ1\tX2\tY2\tZ2\tX3\tY3\tZ3\n\n",
        names.join("\t\t\t")
    );
    for i in 0..3 {
        trc += &format!("{}\t{}", i + 1, i as f64 / 100.0);
        for (m, d) in names.iter().zip(off) {
            let p = c.points.iter().find(|p| p.name.ends_with(&format!(".{m}"))).unwrap();
            let x = data.position(&c.model, p.node);
            // a frame's sway of 0.1 mm about the mean
            let sway = 1e-4 * (i as f64 - 1.0);
            (0..3).for_each(|a| trc += &format!("\t{:.6}", 1e3 * (x[a] + d[a] + sway)));
        }
        trc += "\n";
    }
    trc
}

/// OpenSim's marker placement on a Mollier model file: arm26 as `.osim` and as the `.toml`
/// `mollier import` writes for it, its markers placed on one static trial by one setup (no
/// scaling, the `MarkerPlacer` on). The same static pose and the same places in the bodies
/// either way; and the placed model's points, at the static pose, on the trial's mean.
#[test]
fn markers_are_placed_on_a_mollier_model_as_on_its_opensim_model() {
    let Some(osim) = arm26() else { return };
    let dir = scratch("arm26-placer");
    let registry = mollier::registry();
    let text = std::fs::read_to_string(&osim).unwrap();
    let (import, compiled) = mollier::import_osim(&osim.display().to_string(), &text, &registry).unwrap();
    let toml = dir.join("arm26.toml");
    std::fs::write(&toml, &import.toml).unwrap();
    std::fs::write(dir.join("static.trc"), arm26_static_trial(&compiled)).unwrap();
    let setup = dir.join("setup.xml");
    std::fs::write(
        &setup,
        "<OpenSimDocument Version=\"40000\"><ScaleTool name=\"arm\"><mass>-1</mass>\
         <ModelScaler><apply>false</apply></ModelScaler><MarkerPlacer><apply>true</apply>\
         <marker_file>static.trc</marker_file><time_range>0 0.02</time_range></MarkerPlacer>\
         </ScaleTool></OpenSimDocument>",
    )
    .unwrap();
    let Scaling::OpenSim(a) = scale(&osim, &setup) else { panic!("an OpenSim model is placed as one") };
    let Scaling::Native(b) = scale(&toml, &setup) else { panic!("a Mollier model is placed as one") };
    let (pa, pb) = (a.report.placement.as_ref().unwrap(), b.report.placement.as_ref().unwrap());
    assert_eq!(pa.moved.len(), 3);
    assert_eq!(pb.moved.len(), 3, "kept: {:?}", pb.kept);
    let pose = pa.coordinates.iter().zip(&pb.coordinates).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert_eq!(pa.coordinates.len(), pb.coordinates.len());
    let mut places = 0.0f64;
    let mut moved = 0.0f64;
    for m in &pa.moved {
        let n = pb.moved.iter().find(|n| n.name == m.name).unwrap_or_else(|| panic!("{} not moved", m.name));
        assert_eq!(a.report.bodies[m.body], b.report.bodies[n.body]);
        (0..3)
            .for_each(|k| places = places.max((m.after[k] - n.after[k]).abs().max((m.before[k] - n.before[k]).abs())));
        moved = moved.max((0..3).map(|k| (n.after[k] - n.before[k]).powi(2)).sum::<f64>().sqrt());
    }
    // the placed Mollier model at the static pose: its points on the trial's mean (m)
    let trial = mollier::read_trc(&dir.join("static.trc")).unwrap();
    let c = &b.compiled;
    let mut data = Data::new(&c.model);
    solve_positions(&c.model, &mut data, &pb.coordinates).unwrap();
    let mut on_trial = 0.0f64;
    for (k, name) in trial.names.iter().enumerate() {
        let p = c.points.iter().find(|p| p.name.ends_with(&format!(".{name}"))).unwrap();
        let x = data.position(&c.model, p.node);
        let mean: Vec<f64> =
            (0..3).map(|a| (0..3).map(|i| trial.marker(i, k).unwrap()[a]).sum::<f64>() / 3.0).collect();
        on_trial = on_trial.max((0..3).map(|a| (x[a] - mean[a]).abs()).fold(0.0, f64::max));
    }
    eprintln!(
        "arm26 placed as .osim and as .toml: static pose {pose:.1e} rad, places {places:.1e} m; the placed \
         points on the trial {on_trial:.1e} m; markers moved up to {moved:.4} m, RMS before {:.4} m",
        pb.rms
    );
    assert!(pose < 1e-9 && places < 1e-9, "{pose:e} {places:e}");
    assert!(on_trial < 1e-12, "{on_trial:e}");
    assert!(moved > 3e-3, "the markers moved: {moved}");
    let _ = std::fs::remove_dir_all(&dir);
}
