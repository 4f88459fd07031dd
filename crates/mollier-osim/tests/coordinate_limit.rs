//! OpenSim's `CoordinateLimitForce` imported as the `coordinate_limit` law, against OpenSim 4.6's
//! own forces and energies (tools/peer_opensim_limit.py, `tests/data/limit/`): a pin whose
//! coordinate's default is 10° (the law's limits are the mode's values, the coordinate less its
//! default; OpenSim's degrees become radians) and a slider (metres), at values inside the range,
//! within and beyond each transition, at three rates. OpenSim's generalized force is `−σ`.

use std::path::PathBuf;

use serde_json::Value;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/limit")
}

#[test]
fn imported_limit_forces_are_opensims() {
    let text = std::fs::read_to_string(data().join("coordinate_limit.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let imp =
        mollier_osim::import_path(&data().join("coordinate_limit.osim")).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(
        !imp.report.entries.iter().any(|e| e.kind == "CoordinateLimitForce"),
        "the limits are imported: {:?}",
        imp.report.entries
    );
    let doc = mollier_format::parse("coordinate_limit.toml", &imp.toml).expect("the import checks its file");
    let compiled = mollier::compile(&doc, &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = &compiled.model;
    let mut compared = 0;
    for c in reference["coordinates"].as_array().unwrap() {
        let name = c["name"].as_str().unwrap();
        let default = c["default"].as_f64().unwrap();
        let el = model.element_by_name(name).unwrap_or_else(|| panic!("element `{name}`"));
        let law = model.law(el).unwrap_or_else(|| panic!("`{name}` has no law"));
        // the hinge's rotation (the beam's elongation) is the element's first mode
        let n = model.element(el).layout().n_modes();
        let (mut sigma, mut e, mut ed) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        let samples = c["samples"].as_array().unwrap();
        let scale = samples.iter().fold(0.0f64, |a, s| a.max(s["force"].as_f64().unwrap().abs()));
        for s in samples {
            let [q, qd, force, energy] = ["q", "qd", "force", "energy"].map(|k| s[k].as_f64().unwrap());
            e[0] = q - default;
            ed[0] = qd;
            law.stress(&e, &ed, &mut sigma);
            assert!(
                (-sigma[0] - force).abs() < 1e-9 * scale,
                "{name} at q = {q}, q' = {qd}: {} against OpenSim's {force}",
                -sigma[0]
            );
            let w = law.energy(&e).expect("the law has an energy");
            assert!((w - energy).abs() < 1e-9 * (1.0 + energy.abs()), "{name} at q = {q}: energy {w} against {energy}");
            compared += 1;
        }
    }
    assert_eq!(compared, 66);
}
