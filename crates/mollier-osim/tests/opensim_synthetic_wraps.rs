//! One muscle over one or two wrap objects, against OpenSim 4.6 itself: the models of
//! `tests/data/osim/wraps/` (built and written by OpenSim, `tools/peer_opensim_synthetic_wraps.py`)
//! swept over their coordinate through contact and release. Mollier's imported length and
//! `−dL/dq` agree with OpenSim's within [`LENGTH`] and [`ARM`] at every sample — or the import
//! reports the muscle as approximated, and then it agrees wherever OpenSim's path does not touch a
//! wrap object (no model is approximated now). Ellipsoids take OpenSim's own path (`method =
//! "opensim"`, their quadrants included); two objects on one stretch are wrapped as OpenSim does,
//! one after the other (`wrapping = "opensim"`), and agree like the others.

use std::path::PathBuf;

use serde_json::Value;

mod support;

/// 1e-12 m in length (the reference's rounding: its 17 digits of lengths near 0.4 m).
const LENGTH: f64 = 1e-12;
/// 1e-8 m/rad in moment arm: the rounding of OpenSim's central differences (h = 1e-7 rad, lengths
/// to 1e-16 m) is about 1e-9.
const ARM: f64 = 1e-8;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The models whose muscle the import reports as not exact.
const APPROXIMATED: &[&str] = &[];

/// Whether the import report says the muscle `muscle` is approximated.
fn approximated(file: &str, osim: &str) -> bool {
    let imp = mollier_osim::import(file, osim).unwrap_or_else(|d| panic!("{}", d.render()));
    imp.report
        .entries
        .iter()
        .any(|e| e.action.starts_with("approximated") && (e.object == "muscle" || e.action.contains("path(s): muscle")))
}

#[test]
fn one_muscle_over_each_wrap_object_agrees_with_opensim() {
    let text = std::fs::read_to_string(data().join("opensim_synthetic_wraps.json")).unwrap();
    let reference: Value = serde_json::from_str(&text).unwrap();
    let mut problems = Vec::new();
    for model in reference["models"].as_array().unwrap() {
        let file = model["file"].as_str().unwrap();
        let osim = std::fs::read_to_string(data().join("osim/wraps").join(file)).unwrap();
        let (rows, unsolved, each) = support::compare(file, &osim, model);
        problems.extend(unsolved);
        let reported = approximated(file, &osim);
        let postures = model["postures"].as_array().unwrap();
        for &(p, _, dl, da) in &each {
            let wraps = postures[p]["path"].as_str().unwrap().contains('w');
            if (dl > LENGTH || da > ARM) && !(reported && wraps) || std::env::var_os("MOLLIER_SHOW").is_some() {
                problems.push(format!(
                    "{file} theta {:+.3} ({}): {:.3e} m in length, {:.3e} m in moment arm",
                    postures[p]["q"][0].as_f64().unwrap(),
                    postures[p]["path"].as_str().unwrap(),
                    dl,
                    da
                ));
            }
        }
        let (l, a) = rows[0].1.unwrap_or_else(|| panic!("{file}: the muscle was left out"));
        eprintln!(
            "{file}: largest {l:.2e} m in length, {a:.2e} m in moment arm{}",
            if reported { " (reported)" } else { "" }
        );
        if APPROXIMATED.contains(&file) != reported {
            problems.push(format!("{file}: reported as approximated: {reported}, expected {}", !reported));
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}

/// OpenSim's path is a cylinder's or an ellipsoid's: `method = "opensim"` on a sphere is refused
/// at its field.
#[test]
fn opensim_method_on_a_sphere_is_refused_at_its_field() {
    let osim = std::fs::read_to_string(data().join("osim/wraps/sphere.osim")).unwrap();
    let imp = mollier_osim::import("sphere.osim", &osim).unwrap_or_else(|d| panic!("{}", d.render()));
    let registry = mollier::registry();
    for (method, ok) in [("shortest", true), ("opensim", false), ("opensim-several", false), ("other", false)] {
        let toml = imp.toml.replacen("type = \"sphere\"", &format!("type = \"sphere\", method = \"{method}\""), 1);
        assert_ne!(toml, imp.toml);
        let compiled = mollier_format::parse("sphere.toml", &toml).and_then(|doc| mollier::compile(&doc, &registry));
        match compiled {
            Ok(_) => assert!(ok, "{method}: accepted on a sphere"),
            Err(d) => {
                assert!(!ok, "{method}: {}", d.render());
                assert!(d.iter().any(|x| x.path.ends_with(".method")), "{method}: {}", d.render());
            }
        }
    }
}

/// OpenSim's wrapping one object after the other takes spheres, and OpenSim's cylinders and
/// ellipsoids: `wrapping = "opensim"` over a geodesic ellipsoid, or an unknown wrapping, is
/// refused at its field.
#[test]
fn opensim_wrapping_over_a_geodesic_ellipsoid_is_refused_at_its_field() {
    let registry = mollier::registry();
    for (file, geodesic, wrapping, ok) in [
        ("ellipsoid.osim", false, "opensim", true),
        ("ellipsoid.osim", true, "opensim", false),
        ("ellipsoid.osim", true, "shortest", true),
        ("sphere.osim", false, "opensim", true),
        ("sphere.osim", false, "other", false),
    ] {
        let osim = std::fs::read_to_string(data().join("osim/wraps").join(file)).unwrap();
        let imp = mollier_osim::import(file, &osim).unwrap_or_else(|d| panic!("{}", d.render()));
        let toml = if geodesic { imp.toml.replacen(", method = \"opensim\"", "", 1) } else { imp.toml.clone() };
        assert!(!geodesic || toml != imp.toml, "{file}: no OpenSim method to take out");
        let toml =
            toml.replacen("type = \"curved-truss\"", &format!("type = \"curved-truss\"\nwrapping = \"{wrapping}\""), 1);
        assert_ne!(toml, imp.toml, "{file}");
        let compiled = mollier_format::parse(file, &toml).and_then(|doc| mollier::compile(&doc, &registry));
        match compiled {
            Ok(_) => assert!(ok, "{file} {wrapping}: accepted"),
            Err(d) => {
                assert!(!ok, "{file} {wrapping}: {}", d.render());
                assert!(d.iter().any(|x| x.path.ends_with(".wrapping")), "{file} {wrapping}: {}", d.render());
            }
        }
    }
}
