//! Conformance of `mollier import` over OpenSim's model collection: the fourteen models of
//! `tests/opensim_models.rs`, imported and solved at 12 postures each (the default, then every
//! free coordinate uniform over its whole range; `tools/peer_opensim_collection.py`, OpenSim 4.6,
//! reference committed in `tests/data/opensim_collection.json` with its provenance). Every body
//! origin and marker agrees with OpenSim's within 1e-9 m; every muscle's length and `−dL/dq`
//! about every free coordinate (zero about those it does not span) within 0.1 mm, or the muscle
//! is in [`KNOWN`] with the reason; every posture solves. Each posture is solved from the default
//! pose. The models are fetched by `tools/fetch-opensim-models`; without them the test says so
//! and passes (under `CI=true` it fails).

use std::path::PathBuf;

use mollier_core::shared_data::opensim_models;

use serde_json::{Value, json};

mod support;

/// 0.1 mm, in length (m) and in moment arm (m per rad, or per m of a translation).
const LIMIT: f64 = 1e-4;

/// Muscles over [`LIMIT`], by model file, and OpenSim's own discontinuity that prevents the
/// limit there. None at present: arm26's TRIlong (a cylinder and OpenSim's ellipsoid on one
/// stretch), the last one, agrees since the curved truss wraps ellipsoids by OpenSim's algorithm.
struct Known {
    file: &'static str,
    muscle: &'static str,
    why: &'static str,
}

const KNOWN: &[Known] = &[];

/// Bodies and markers: 1e-9 m (OpenSim's positions to 12 digits).
const POINTS: f64 = 1e-9;

/// The largest distance (m) of the imported model's body origins and markers from OpenSim's
/// over the postures of `model` (those that solve: `support::compare` reports the others).
fn points(file: &str, text: &str, model: &Value) -> f64 {
    let registry = mollier::registry();
    let (imp, compiled) = mollier::import_osim(file, text, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let strs = |k: &str| -> Vec<&str> { model[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect() };
    // a marker's point, by the name the report gives it when it had to change
    let renamed = |name: &str| {
        imp.report
            .entries
            .iter()
            .find(|e| e.kind == "Marker" && e.object == name)
            .and_then(|e| e.action.strip_prefix("renamed `").and_then(|r| r.split('`').next()).map(str::to_string))
    };
    let mut names: Vec<String> = strs("bodies")
        .iter()
        .map(|b| imp.body_names[imp.model.bodies.iter().position(|x| x.name == *b).unwrap()].clone())
        .collect();
    for m in strs("markers") {
        let mk = imp.model.markers.iter().find(|x| x.name == m).unwrap();
        names.push(renamed(m).unwrap_or_else(|| format!("{}.{m}", imp.body_names[mk.body])));
    }
    let probe = mollier::KinematicsRun::new(&compiled);
    let header = probe.position_header();
    let columns: Vec<usize> = names
        .iter()
        .map(|n| header.iter().position(|h| h == &format!("{n}.x")).unwrap_or_else(|| panic!("{file}: no point {n}")))
        .collect();
    let mut worst = 0.0f64;
    for posture in model["postures"].as_array().unwrap() {
        let q: Vec<f64> = posture["q"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let Ok(out) = mollier::KinematicsRun::new(&compiled).solve(&imp.inputs_from_coordinates(&q)) else { continue };
        let want = posture["points"].as_array().unwrap();
        for (k, &c) in columns.iter().enumerate() {
            let d = (0..3).map(|i| (out.positions[c + i] - want[3 * k + i].as_f64().unwrap()).powi(2)).sum::<f64>();
            worst = worst.max(d.sqrt());
        }
    }
    worst
}

/// The reference of one model in the layout of `support::compare`: each muscle's `−dL/dq` about
/// every coordinate, zero about the free coordinates it does not span.
fn dense(model: &Value) -> Value {
    let strs = |k: &str| -> Vec<&str> { model[k].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect() };
    let (coords, free) = (strs("coordinates"), strs("free"));
    let at: Vec<usize> = free.iter().map(|f| coords.iter().position(|c| c == f).unwrap()).collect();
    let spans = model["spans"].as_array().unwrap();
    let mut out = model.clone();
    for p in out["postures"].as_array_mut().unwrap() {
        let rows: Vec<Value> = spans
            .iter()
            .zip(p["minus_dl_dq"].as_array().unwrap())
            .map(|(span, values)| {
                let mut row = vec![0.0; coords.len()];
                for (i, v) in span.as_array().unwrap().iter().zip(values.as_array().unwrap()) {
                    row[at[i.as_u64().unwrap() as usize]] = v.as_f64().unwrap();
                }
                json!(row)
            })
            .collect();
        p["minus_dl_dq"] = json!(rows);
    }
    out
}

#[test]
fn every_muscle_of_the_collection_agrees_with_opensim() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/opensim_collection.json");
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let models = reference["models"].as_array().unwrap();
    assert_eq!(models.len(), 14, "the fourteen models of the collection");
    let mut problems = Vec::new();
    let mut table = Vec::new();
    for model in models {
        let file = model["file"].as_str().unwrap();
        assert!(model["postures"].as_array().unwrap().len() >= 11, "{file}: the default and ≥ 10 random postures");
        let p = opensim_models().join(file);
        if !p.is_file() {
            mollier_core::shared_data::skip(
                &format!("every_muscle_of_the_collection_agrees_with_opensim {file}"),
                &format!("{} is absent (tools/fetch-opensim-models brings it)", p.display()),
            );
            continue;
        }
        let text = std::fs::read_to_string(&p).unwrap();
        let (rows, unsolved, _) = support::compare(file, &text, &dense(model));
        problems.extend(unsolved);
        let far = points(file, &text, model);
        if !(far <= POINTS) {
            problems.push(format!("{file}: a body origin or marker {far:.3e} m from OpenSim's"));
        }
        let (mut within, mut worst, mut named) = (0, 0.0f64, Vec::new());
        for (name, diff) in &rows {
            let known = KNOWN.iter().find(|k| k.file == file && k.muscle == name);
            let Some((l, a)) = *diff else {
                problems.push(format!("{file} {name}: left out by the import"));
                continue;
            };
            let over = l.max(a) > LIMIT;
            match known {
                Some(k) if over => named.push(format!("{name} ({:.3} mm, {:.3} mm: {})", l * 1e3, a * 1e3, k.why)),
                Some(_) => problems.push(format!("{file} {name}: within 0.1 mm, take it out of KNOWN")),
                None if over => problems.push(format!(
                    "{file} {name}: {:.4} mm in length, {:.4} mm in moment arm",
                    l * 1e3,
                    a * 1e3
                )),
                None => {}
            }
            if !over {
                within += 1;
                worst = worst.max(l.max(a));
            }
        }
        table.push(format!(
            "{file}: bodies and markers within {far:.1e} m; {within} of {} muscles within 0.1 mm (largest {worst:.2e} m); named: {}",
            rows.len(),
            if named.is_empty() { "none".to_string() } else { named.join(", ") }
        ));
    }
    eprintln!("{}", table.join("\n"));
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
