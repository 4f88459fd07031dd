//! The example `models/joints/calspan-shoulder.toml` builds through the registry, and bad parameters
//! are reported at their key.

use mollier_core::registry::{Units, Value};
use mollier_joint_common::example::{ExampleElement, Table, parse, with};
use mollier_joint_stop::TYPE;

fn ex() -> ExampleElement {
    ExampleElement::new(
        include_str!("../../../models/joints/calspan-shoulder.toml"),
        "shoulder_stop",
        ["thorax", "humerus"],
        TYPE,
    )
}

#[test]
fn the_example_builds_with_engins_sinus_and_its_law_follows_its_tables() {
    let t = ex().table();
    let Some((_, Value::Array(c))) = t.iter().find(|(k, _)| k == "sinus") else { panic!("sinus") };
    let c: Vec<f64> = c.iter().map(|v| if let Value::Number(x) = v { *x } else { panic!() }).collect();
    assert_eq!(c, mollier_engin_joint::shoulder::SINUS);
    let mut el = ex().build(&t, Units::default()).unwrap();
    assert_eq!(el.type_name(), "joint-stop");
    let id = [1.0, 0.0, 0.0, 0.0];
    el.initialize(&[id, id].concat()).unwrap();
    // r = +x initially lies inside the sinus: nothing at rest; 0.8 rad further from the pole
    // along its meridian it is outside
    let law = el.law().unwrap();
    let mut s = [0.0; 2];
    law.stress(&[0.0; 2], &[0.0; 2], &mut s);
    assert_eq!(s, [0.0; 2]);
    let a3: [f64; 3] = [0.5014457, 0.8441951, 0.1894382];
    let a1: [f64; 3] = [0.0967448, 0.1628720, -0.9818926];
    let a2 = [a3[1] * a1[2] - a3[2] * a1[1], a3[2] * a1[0] - a3[0] * a1[2], a3[0] * a1[1] - a3[1] * a1[0]];
    let phi0 = a2[0].atan2(a1[0]);
    law.stress(&[0.8 * phi0.cos(), 0.8 * phi0.sin()], &[0.0; 2], &mut s);
    assert!(s[0].hypot(s[1]) > 1.0, "{s:?}");
}

#[test]
fn bad_parameters_are_located() {
    let cases: Vec<(Table, &str, &str)> = vec![
        (
            with(ex().table(), "stop_torque", Some(parse("{ angles = [0.0, 1.0], moments = [1.0, 5.0] }"))),
            "elements.shoulder_stop.stop_torque",
            "zero at the contour",
        ),
        (
            with(ex().table(), "stop_torque", Some(parse("{ polynomial = [10.0, -20.0] }"))),
            "elements.shoulder_stop.stop_torque",
            "must not decrease",
        ),
        (with(ex().table(), "stop_torque", None), "elements.shoulder_stop.stop_torque", "missing"),
        (
            with(ex().table(), "sinus", Some(parse("[3.5, 0, 0, 0, 0, 0, 0, 0, 0, 0]"))),
            "elements.shoulder_stop.sinus",
            "outside (0, π)",
        ),
        (
            with(ex().table(), "sinus", Some(parse("[1.5, 0, 0]"))),
            "elements.shoulder_stop.sinus",
            "expected 10 numbers",
        ),
        (with(ex().table(), "moving_z", None), "elements.shoulder_stop.moving_z", "missing"),
        (
            with(ex().table(), "fixed_x", Some(parse("[1.0028914, 1.6883902, 0.3788764]"))),
            "elements.shoulder_stop.fixed_x",
            "parallel",
        ),
        (
            with(ex().table(), "damping", Some(parse("{ rates = [0.0], moments = [0.0] }"))),
            "elements.shoulder_stop.damping.rates",
            "at least two points",
        ),
    ];
    for (t, path, message) in cases {
        let e = ex().error(&t);
        assert!(e.path == path && e.message.contains(message), "{path}: {e:?}");
    }
}
