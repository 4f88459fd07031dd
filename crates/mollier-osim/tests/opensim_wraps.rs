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

mod support;

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
}
use Why::*;

/// Muscles that differ by more than [`LIMIT`]: model, muscle, bounds on the largest difference in
/// length and in moment arm over the postures (mm, 10 % over the present ones), and why.
const KNOWN: &[(&str, &str, f64, f64, Why)] = &[
    ("arm26.osim", "TRIlong", 8.31, 11.26, Several),
    ("Rajagopal2016.osim", "gaslat_r", 1733.92, 1834.4, Several),
    ("Rajagopal2016.osim", "gasmed_r", 1692.36, 1684.52, Several),
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
    ("das3.osim", "pron_teres_1", 34.47, 14.28, Quadrant),
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
        let text = std::fs::read_to_string(model_path(file)).unwrap();
        let (rows, unsolved, _) = support::compare(file, &text, model);
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
