//! The example `models/joints/cardan-hip.toml` builds through the registry, and bad parameters
//! are reported at their key.

use mollier_cardan_joint::TYPE;
use mollier_core::registry::Units;
use mollier_joint_common::example::{ExampleElement, Table, parse, with};

fn ex() -> ExampleElement {
    ExampleElement::new(include_str!("../../../models/joints/cardan-hip.toml"), "hip", ["pelvis", "femur"], TYPE)
}

#[test]
fn the_example_builds_and_its_law_follows_its_tables() {
    let mut el = ex().build(&ex().table(), Units::default()).unwrap();
    assert_eq!(el.type_name(), "cardan-joint");
    let id = [1.0, 0.0, 0.0, 0.0];
    el.initialize(&[id, id].concat()).unwrap();
    let mut s = [0.0; 3];
    el.law().unwrap().stress(&[1.0, 0.2, -0.5], &[0.0, 1.0, 2.0], &mut s);
    // table node 4 N m at 1 rad; 5 θ + 60 θ³ + 0.5 θ̇; 3 ψ + 0.2 ψ̇
    let want = [4.0, 5.0 * 0.2 + 60.0 * 0.008 + 0.5, -1.5 + 0.4];
    assert!((0..3).all(|k| (s[k] - want[k]).abs() < 1e-12), "{s:?} vs {want:?}");
}

#[test]
fn table_angles_follow_the_files_unit_and_closed_forms_stay_in_rad() {
    let deg = Units { angle: std::f64::consts::PI / 180.0, ..Units::default() };
    let t = with(
        ex().table(),
        "torque_phi",
        Some(parse("{ angles = [-30.0, 0.0, 60.0], moments = [-10.0, 0.0, 20.0], interpolation = \"linear\" }")),
    );
    let mut el = ex().build(&t, deg).unwrap();
    let id = [1.0, 0.0, 0.0, 0.0];
    el.initialize(&[id, id].concat()).unwrap();
    let mut s = [0.0; 3];
    el.law().unwrap().stress(&[30f64.to_radians(), 0.2, 0.0], &[0.0; 3], &mut s);
    assert!((s[0] - 10.0).abs() < 1e-12 && (s[1] - (1.0 + 0.48)).abs() < 1e-12, "{s:?}");
}

#[test]
fn bad_parameters_are_located() {
    let cases: Vec<(Table, &str, &str)> = vec![
        (
            with(ex().table(), "torque_psi", Some(parse("{ linear = 3.0, polynomial = [1.0] }"))),
            "elements.hip.torque_psi",
            "more than one form",
        ),
        (with(ex().table(), "torque_psi", Some(parse("{ }"))), "elements.hip.torque_psi", "no torque function"),
        (
            with(ex().table(), "torque_psi", Some(parse("{ linear = 3.0, moments = [1.0, 2.0] }"))),
            "elements.hip.torque_psi.moments",
            "belongs to a table",
        ),
        (
            with(ex().table(), "torque_psi", Some(parse("{ linear = 3.0, stifness = 2.0 }"))),
            "elements.hip.torque_psi.stifness",
            "unknown parameter",
        ),
        (
            with(ex().table(), "torque_phi", Some(parse("{ angles = [0.0, 0.0], moments = [1.0, 2.0] }"))),
            "elements.hip.torque_phi.angles",
            "increase strictly",
        ),
        (
            with(
                ex().table(),
                "torque_phi",
                Some(parse("{ angles = [0.0, 1.0], moments = [1.0, 2.0], interpolation = \"spline\" }")),
            ),
            "elements.hip.torque_phi.interpolation",
            "unknown interpolation",
        ),
        (
            with(ex().table(), "damping_phi", Some(parse("{ angles = [0.0, 1.0], moments = [0.0, 2.0] }"))),
            "elements.hip.damping_phi",
            "no torque function",
        ),
        (with(ex().table(), "moving_x", Some(parse("[1.0, 0.0, 0.0]"))), "elements.hip.moving_z", "missing"),
        (with(ex().table(), "fixed_x", Some(parse("[0.0, 0.0, 2.0]"))), "elements.hip.fixed_x", "parallel"),
        (with(ex().table(), "torque_phi", Some(parse("3.0"))), "elements.hip.torque_phi", "expected a table"),
        (
            ["torque_phi", "torque_theta", "torque_psi", "damping_phi", "damping_theta", "damping_psi"]
                .iter()
                .fold(ex().table(), |t, k| with(t, k, None)),
            "elements.hip.torque_phi",
            "no torque function",
        ),
    ];
    for (t, path, message) in cases {
        let e = ex().error(&t);
        assert!(e.path == path && e.message.contains(message), "{path}: {e:?}");
    }
}
