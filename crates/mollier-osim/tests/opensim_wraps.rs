//! OpenSim's wrapping rules in the import (a wrap object's stretch chosen at each posture, an
//! anchor inside a wrap object giving the straight line): arm26 and Rajagopal2016 (OpenSim's
//! model collection, `tools/fetch-opensim-models`) and DAS3 (the shared data), imported, at 12
//! postures each over the whole coordinate ranges (`tools/peer_opensim_wraps.py`, OpenSim 4.6):
//! every muscle's length and moment arm (`−dL/dq` about every free coordinate) agree with
//! OpenSim's within 0.1 mm, or the muscle is in `KNOWN` with OpenSim's rule that Mollier does not
//! follow and its present difference as a bound. Each posture is solved from the default pose.

use std::io::Write;
use std::path::PathBuf;

use serde_json::Value;

/// 0.1 mm, in length (m) and in moment arm (m per rad, or per m of a translation).
const LIMIT: f64 = 1e-4;

/// Why a muscle differs from OpenSim by more than [`LIMIT`].
#[derive(Clone, Copy, Debug)]
enum Why {
    /// Several wrap objects act on one stretch: OpenSim wraps them one after the other, each from
    /// the tangent points of the ones before (not a shortest path), Mollier takes the shortest
    /// path over all (arm26's TRIlong: the likely cause, not established). Rajagopal's gastrocnemii (two cylinders): the free point between them is
    /// not found at 5 of 12 postures, and the path found is wrong by metres at others.
    Several,
    /// OpenSim's ellipsoid algorithm is not a shortest path; Mollier's is a geodesic.
    Ellipsoid,
    /// A cylinder with a quadrant: OpenSim's one-sided wrapping and Mollier's `side` disagree on
    /// when, and which way, the path goes round.
    Quadrant,
    /// A cylinder without quadrant: 0.1 to 1.2 mm, cause not established.
    Cylinder,
}
use Why::*;

/// Muscles that differ by more than [`LIMIT`]: model, muscle, bounds on the largest difference in
/// length and in moment arm over the postures (mm, 10 % over the present ones), and why.
const KNOWN: &[(&str, &str, f64, f64, Why)] = &[
    ("arm26.osim", "TRIlong", 8.31, 11.26, Several),
    ("Rajagopal2016.osim", "addbrev_r", 0.15, 0.32, Cylinder),
    ("Rajagopal2016.osim", "addlong_r", 0.28, 0.47, Cylinder),
    ("Rajagopal2016.osim", "addmagDist_r", 0.2, 0.46, Cylinder),
    ("Rajagopal2016.osim", "addmagIsch_r", 0.39, 0.36, Cylinder),
    ("Rajagopal2016.osim", "addmagMid_r", 0.26, 0.45, Cylinder),
    ("Rajagopal2016.osim", "addmagProx_r", 0.06, 0.18, Cylinder),
    ("Rajagopal2016.osim", "bfsh_r", 0.07, 0.13, Quadrant),
    ("Rajagopal2016.osim", "gaslat_r", 1733.92, 1834.4, Several),
    ("Rajagopal2016.osim", "gasmed_r", 1692.36, 1684.52, Several),
    ("Rajagopal2016.osim", "glmax1_r", 0.04, 0.18, Quadrant),
    ("Rajagopal2016.osim", "addbrev_l", 0.22, 0.4, Cylinder),
    ("Rajagopal2016.osim", "addlong_l", 0.42, 0.56, Cylinder),
    ("Rajagopal2016.osim", "addmagDist_l", 0.15, 0.3, Cylinder),
    ("Rajagopal2016.osim", "addmagIsch_l", 0.35, 0.39, Cylinder),
    ("Rajagopal2016.osim", "addmagMid_l", 0.23, 0.41, Cylinder),
    ("Rajagopal2016.osim", "addmagProx_l", 0.15, 0.27, Cylinder),
    ("Rajagopal2016.osim", "bfsh_l", 0.05, 0.14, Cylinder),
    ("Rajagopal2016.osim", "gaslat_l", 1785.9, 2086.83, Several),
    ("Rajagopal2016.osim", "gasmed_l", 2243.27, 2010.92, Several),
    ("das3.osim", "serr_ant_1", 0.04, 0.43, Ellipsoid),
    ("das3.osim", "serr_ant_2", 0.04, 0.3, Ellipsoid),
    ("das3.osim", "serr_ant_3", 0.04, 0.19, Ellipsoid),
    ("das3.osim", "serr_ant_4", 0.04, 0.79, Ellipsoid),
    ("das3.osim", "serr_ant_5", 0.12, 2.06, Ellipsoid),
    ("das3.osim", "serr_ant_6", 0.13, 1.85, Ellipsoid),
    ("das3.osim", "serr_ant_7", 0.09, 0.95, Ellipsoid),
    ("das3.osim", "serr_ant_8", 0.03, 0.24, Ellipsoid),
    ("das3.osim", "serr_ant_9", 0.03, 0.17, Ellipsoid),
    ("das3.osim", "serr_ant11", 0.04, 0.15, Ellipsoid),
    ("das3.osim", "serr_ant12", 6.13, 5.59, Ellipsoid),
    ("das3.osim", "infra_1", 0.05, 0.19, Quadrant),
    ("das3.osim", "infra_2", 0.42, 1.28, Quadrant),
    ("das3.osim", "infra_3", 0.3, 1.01, Quadrant),
    ("das3.osim", "infra_4", 0.16, 0.76, Quadrant),
    ("das3.osim", "infra_5", 0.1, 0.41, Quadrant),
    ("das3.osim", "infra_6", 0.06, 0.3, Quadrant),
    ("das3.osim", "ter_min_1", 0.1, 0.36, Quadrant),
    ("das3.osim", "ter_min_2", 0.11, 0.4, Quadrant),
    ("das3.osim", "ter_maj_2", 0.07, 0.24, Cylinder),
    ("das3.osim", "ter_maj_3", 0.09, 0.22, Cylinder),
    ("das3.osim", "bic_l", 0.03, 0.14, Several),
    ("das3.osim", "bic_b_1", 0.11, 0.37, Quadrant),
    ("das3.osim", "bic_b_2", 0.11, 0.37, Quadrant),
    ("das3.osim", "tric_long_3", 0.16, 0.44, Quadrant),
    ("das3.osim", "tric_long_4", 0.25, 0.75, Quadrant),
    ("das3.osim", "lat_dorsi_1", 0.18, 0.78, Cylinder),
    ("das3.osim", "lat_dorsi_2", 0.08, 0.58, Cylinder),
    ("das3.osim", "lat_dorsi_3", 0.03, 0.35, Cylinder),
    ("das3.osim", "lat_dorsi_6", 0.03, 0.18, Cylinder),
    ("das3.osim", "pect_maj_t_1", 0.04, 0.27, Cylinder),
    ("das3.osim", "pect_maj_t_2", 0.06, 0.24, Cylinder),
    ("das3.osim", "pect_maj_t_3", 0.09, 0.27, Cylinder),
    ("das3.osim", "pect_maj_t_4", 0.09, 0.27, Cylinder),
    ("das3.osim", "pect_maj_t_5", 0.14, 0.49, Cylinder),
    ("das3.osim", "pect_maj_t_6", 0.17, 0.66, Cylinder),
    ("das3.osim", "pect_maj_c_1", 0.28, 1.21, Cylinder),
    ("das3.osim", "pect_maj_c_2", 0.12, 0.62, Cylinder),
    ("das3.osim", "tric_med_3", 0.14, 0.22, Quadrant),
    ("das3.osim", "pron_teres_1", 34.47, 14.28, Quadrant),
    ("das3.osim", "pron_teres_2", 0.23, 0.66, Quadrant),
    ("das3.osim", "supinator_1", 0.08, 0.13, Quadrant),
    ("das3.osim", "supinator_2", 0.1, 0.17, Quadrant),
    ("das3.osim", "supinator_3", 0.23, 0.67, Quadrant),
    ("das3.osim", "supinator_4", 0.64, 1.03, Quadrant),
    ("das3.osim", "supinator_5", 1.33, 0.64, Quadrant),
    ("das3.osim", "pron_quad_1", 26.37, 14.18, Quadrant),
    ("das3.osim", "pron_quad_2", 72.55, 13.59, Quadrant),
    ("das3.osim", "pron_quad_3", 72.25, 12.96, Quadrant),
];

fn collection() -> PathBuf {
    std::env::var_os("MOLLIER_OPENSIM_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.cache/opensim-models"))
}

fn model_path(file: &str) -> PathBuf {
    if file == "das3.osim" { mollier_core::shared_data::dir().join("das3/das3.osim") } else { collection().join(file) }
}

/// The largest differences (m) of each muscle of one model over its postures, `None` for a muscle
/// left out; and the postures that do not solve.
/// A muscle's name and its largest differences in length and moment arm (m), `None` when left out.
type Row = (String, Option<(f64, f64)>);

fn compare(model: &Value) -> (Vec<Row>, Vec<String>) {
    let file = model["file"].as_str().unwrap();
    let text = std::fs::read_to_string(model_path(file)).unwrap();
    let registry = mollier::registry();
    let (imp, compiled) = mollier::import_osim(file, &text, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let strs = |k: &str| -> Vec<String> {
        model[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
    };
    let (coords, free, muscles) = (strs("coordinates"), strs("free"), strs("muscles"));
    let names: Vec<&str> = imp.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(coords, names, "{file}: the coordinates in another order");
    let free: Vec<usize> = free.iter().map(|f| coords.iter().position(|c| c == f).unwrap()).collect();
    let probe = mollier::KinematicsRun::new(&compiled);
    let (deformation, transfer) = (probe.deformation_header(), probe.transfer_header());
    let n_in = compiled.inputs.len();
    // per muscle: its reference length and columns, or None when left out
    let columns: Vec<Option<(f64, usize, usize)>> = muscles
        .iter()
        .enumerate()
        .map(|(k, m)| {
            assert_eq!(&imp.model.muscles[k].name, m);
            let el = imp.muscle_names[k].as_ref()?;
            let id = compiled.elements.iter().find(|e| &e.name == el).unwrap().id;
            let mode = compiled.model.mode_by_name(id, "elongation").unwrap();
            let l0 = compiled.model.mode_reference(mode).unwrap_or(0.0);
            let d = deformation.iter().position(|h| h == &format!("{el}.elongation")).unwrap();
            let t = transfer.iter().position(|h| h == &format!("{el}.elongation/{}", compiled.inputs[0].name)).unwrap();
            Some((l0, d, t))
        })
        .collect();
    let mut worst: Vec<Row> = muscles.iter().zip(&columns).map(|(m, c)| (m.clone(), c.map(|_| (0.0, 0.0)))).collect();
    let mut unsolved = Vec::new();
    for (p, posture) in model["postures"].as_array().unwrap().iter().enumerate() {
        let q: Vec<f64> = posture["q"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let mut run = mollier::KinematicsRun::new(&compiled);
        let out = match run.solve(&imp.inputs_from_coordinates(&q)) {
            Ok(o) => o,
            Err(e) => {
                unsolved.push(format!("{file} posture {p}: {e}"));
                continue;
            }
        };
        // d inputs / d coordinate (couplers and axis functions), by central differences
        let h = 1e-6;
        let du: Vec<Vec<f64>> = free
            .iter()
            .map(|&c| {
                let (mut up, mut down) = (q.clone(), q.clone());
                up[c] += h;
                down[c] -= h;
                let (a, b) = (imp.inputs_from_coordinates(&up), imp.inputs_from_coordinates(&down));
                (0..n_in).map(|i| (a[i] - b[i]) / (2.0 * h)).collect()
            })
            .collect();
        for (k, col) in columns.iter().enumerate() {
            let Some((l0, d, t)) = col else { continue };
            let want = posture["lengths"][k].as_f64().unwrap();
            let w = worst[k].1.as_mut().unwrap();
            w.0 = w.0.max((l0 + out.deformations[*d] - want).abs());
            for (j, &c) in free.iter().enumerate() {
                let arm: f64 = -(0..n_in).map(|i| out.transfer[t + i] * du[j][i]).sum::<f64>();
                let want = posture["minus_dl_dq"][k][c].as_f64().unwrap();
                w.1 = w.1.max((arm - want).abs());
            }
        }
    }
    (worst, unsolved)
}

#[test]
fn muscles_agree_with_opensim_at_random_postures() {
    let text = std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/opensim_wraps.json"))
        .unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    let mut checked = 0;
    for model in reference["models"].as_array().unwrap() {
        let file = model["file"].as_str().unwrap();
        assert!(model["postures"].as_array().unwrap().len() >= 10);
        if !model_path(file).is_file() {
            let _ = writeln!(
                std::io::stderr().lock(),
                "SKIPPED: {file}: {} is absent (tools/fetch-opensim-models; the shared data for DAS3)",
                model_path(file).display()
            );
            continue;
        }
        checked += 1;
        let (rows, unsolved) = compare(model);
        // a posture that fails for a muscle of KNOWN (its element named) is that muscle's
        let named = |u: &String| KNOWN.iter().any(|k| k.0 == file && u.contains(&format!("element `{}`", k.1)));
        problems.extend(unsolved.iter().filter(|u| !named(u)).cloned());
        let failed = unsolved.len();
        let (mut within, mut worst) = (0, 0.0f64);
        for (name, diff) in &rows {
            let known = KNOWN.iter().find(|k| k.0 == file && k.1 == name);
            match (diff, known) {
                (None, None) => problems.push(format!("{file} {name}: left out")),
                (None, Some(_)) => {}
                (Some((l, a)), None) if l.max(*a) <= LIMIT => {
                    within += 1;
                    worst = worst.max(l.max(*a));
                }
                (Some((l, a)), None) => problems.push(format!(
                    "{file} {name}: {:.3} mm in length, {:.3} mm in moment arm",
                    l * 1e3,
                    a * 1e3
                )),
                (Some((l, a)), Some(k)) => {
                    if l.max(*a) <= LIMIT {
                        problems.push(format!("{file} {name} agrees now: take it out of KNOWN"));
                    } else if *l > k.2 * 1e-3 || *a > k.3 * 1e-3 {
                        problems.push(format!(
                            "{file} {name}: {:.3} mm in length, {:.3} mm in moment arm, over its bounds ({:?})",
                            l * 1e3,
                            a * 1e3,
                            k.4
                        ));
                    }
                }
            }
        }
        eprintln!(
            "{file}: {within} of {} muscles within 0.1 mm (largest {:.2e} m); {failed} postures fail",
            rows.len(),
            worst
        );
    }
    if checked == 0 {
        return;
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
