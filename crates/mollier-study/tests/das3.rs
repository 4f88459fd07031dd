//! The shoulder model against its source, DAS3 (`../shared/data/das3/das3.osim`, Chadwick et
//! al. 2014; dasproject/DAS3 d6f2ff0): joint centres, contact points, conoid, thorax ellipsoid,
//! masses and optimal lengths as read from the .osim file by an independent (Rust) reader; and
//! the committed model file as the generator writes it. Skips, saying so, when the data or
//! python3 are absent (`SKIPPED: ...` on standard error, see `mollier_core::shared_data`).

mod common;

use std::ffi::OsStr;
use std::path::PathBuf;

use common::*;
use mollier_format::ParamValue;

/// DAS3's model file and its text, or `None` (the test named `test` said it is skipped).
fn osim(test: &str) -> Option<(PathBuf, String)> {
    mollier_core::shared_data::read("das3/das3.osim")
        .map_err(|reason| mollier_core::shared_data::skip(test, &reason))
        .ok()
}

fn numbers(s: &str) -> Vec<f64> {
    s.split_whitespace().map(|t| t.parse().unwrap()).collect()
}

/// The text of `<tag>` inside the element `<kind name="name">`.
fn field(text: &str, kind: &str, name: &str, tag: &str) -> String {
    let start = text.find(&format!("<{kind} name=\"{name}\">")).unwrap_or_else(|| panic!("no {kind} {name}"));
    let end = text[start..].find(&format!("</{kind}>")).unwrap() + start;
    let block = &text[start..end];
    let a = block.find(&format!("<{tag}>")).unwrap_or_else(|| panic!("{name}: no {tag}")) + tag.len() + 2;
    let b = block[a..].find(&format!("</{tag}>")).unwrap() + a;
    block[a..b].trim().to_string()
}

/// The translation of a joint's parent frame (the first PhysicalOffsetFrame of the joint).
fn joint_location(text: &str, joint: &str) -> Vec<f64> {
    numbers(&field(text, "CustomJoint", joint, "translation"))
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

fn param_numbers(study: &mollier_study::Study, element: &str, key: &str) -> Vec<f64> {
    let spec = study.compiled.document.spec().elements.get(element).unwrap();
    match spec.params.0.iter().find(|(k, _)| k == key).map(|(_, v)| v) {
        Some(ParamValue::Array(a)) => {
            a.iter().map(|v| if let ParamValue::Number(x) = v { *x } else { panic!() }).collect()
        }
        other => panic!("{element}.{key}: {other:?}"),
    }
}

#[test]
fn the_model_carries_das3s_geometry_and_inertia() {
    let Some((_, text)) = osim("the_model_carries_das3s_geometry_and_inertia") else { return };
    let study = abduction_with(|s| s.motion.frames = 2);
    let model = &study.compiled.model;
    let data = mollier_core::Data::new(model);
    let point = |n: &str| data.position(model, study.compiled.points.iter().find(|p| p.name == n).unwrap().node);
    let in_body = |body: &str, p: &str| {
        let b = study.compiled.bodies.iter().find(|b| b.name == body).unwrap().frame;
        let r = mollier_study::motion::orientation(&study.compiled, &data, b.orientation);
        let o = data.position(model, b.position);
        let d = mollier_core::geometry::sub(&point(p), &o);
        mollier_core::geometry::mat_t_vec(&r, &d).to_vec()
    };
    // joint centres: SC in the thorax, AC in the clavicle, GH in the scapula (m)
    assert!(close(&point("thorax.SC"), &joint_location(&text, "sc1"), 1e-9));
    assert!(close(&study.motion.landmarks.ac, &joint_location(&text, "ac1"), 1e-7));
    assert!(close(&in_body("scapula", "scapula.GH"), &joint_location(&text, "gh1"), 1e-7));
    // the README's published constants (das3_readosim.m)
    assert!(close(&in_body("scapula", "scapula.TS"), &[-0.1274, -0.0228, -0.0346], 1e-7));
    assert!(close(&in_body("scapula", "scapula.AI"), &[-0.1257, -0.1223, -0.0275], 1e-7));
    assert!(close(&in_body("clavicle", "clavicle.conoid"), &[0.1365, 0.0206, 0.0136], 1e-7));
    assert!(close(&in_body("scapula", "scapula.conoid"), &[-0.0536, -0.0009, -0.0266], 1e-7));
    // the thorax ellipsoid of both SURFACE elements is DAS3's wrap ellipsoid (mm in the file)
    let centre = numbers(&field(&text, "WrapEllipsoid", "serr_ant", "translation"));
    let axes = numbers(&field(&text, "WrapEllipsoid", "serr_ant", "dimensions"));
    for el in ["TS_thorax", "AI_thorax"] {
        assert!(close(
            &param_numbers(&study, el, "centre"),
            &centre.iter().map(|v| 1000.0 * v).collect::<Vec<_>>(),
            1e-6
        ));
        assert!(close(
            &param_numbers(&study, el, "semi_axes"),
            &axes.iter().map(|v| 1000.0 * v).collect::<Vec<_>>(),
            1e-6
        ));
    }
    // masses: the arm is humerus, ulna, radius and hand
    let mass = |b: &str| field(&text, "Body", b, "mass").parse::<f64>().unwrap();
    let got = |b: &str| study.compiled.bodies.iter().find(|x| x.name == b).unwrap().mass.unwrap();
    assert!((got("clavicle") - mass("clavicle_r")).abs() < 1e-12);
    assert!((got("scapula") - mass("scapula_r")).abs() < 1e-12);
    let arm = mass("humerus_r") + mass("ulna_r") + mass("radius_r") + mass("hand_r");
    assert!((got("humerus") - arm).abs() < 1e-6, "{} vs {arm}", got("humerus"));
    // elements taken one to one: the optimal fibre length and the tendon slack length (criterion
    // (c)'s force-length relation takes the fibre length)
    for (ours, das3) in [
        ("infraspinatus_3", "infra_3"),
        ("pectoralis_minor_2", "pect_min_2"),
        ("serratus_anterior_1", "serr_ant_1"),
        ("biceps_longum", "bic_l"),
    ] {
        let l = field(&text, "Schutte1993Muscle_Deprecated", das3, "optimal_fiber_length").parse::<f64>().unwrap();
        let s = field(&text, "Schutte1993Muscle_Deprecated", das3, "tendon_slack_length").parse::<f64>().unwrap();
        let m = study.muscles().iter().find(|m| m.name == ours).unwrap();
        assert!((m.optimal_length - l).abs() < 1e-6, "{ours}: {} vs {l}", m.optimal_length);
        assert!((m.tendon_slack - s).abs() < 1e-6, "{ours}: {} vs {s}", m.tendon_slack);
    }
}

#[test]
fn the_committed_model_is_what_the_generator_writes() {
    let Some((osim, _)) = osim("the_committed_model_is_what_the_generator_writes") else { return };
    let script = shoulder_dir().join("tools/make_shoulder.py");
    let test = "the_committed_model_is_what_the_generator_writes";
    let args = [script.as_os_str(), OsStr::new("--osim"), osim.as_os_str(), OsStr::new("--check")];
    let Some(out) = mollier_core::shared_data::python3(test, &args) else { return };
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}
