//! The example `models/joints/flexion-torsion-shoulder.toml` builds through the registry, and bad parameters
//! are reported at their key.

use mollier_core::registry::Units;
use mollier_flexion_torsion_joint::TYPE;
use mollier_joint_common::example::{ExampleElement, Table, parse, with};

fn ex() -> ExampleElement {
    ExampleElement::new(
        include_str!("../../../models/joints/flexion-torsion-shoulder.toml"),
        "shoulder",
        ["thorax", "humerus"],
        TYPE,
    )
}

#[test]
fn the_example_builds_and_its_law_follows_its_tables() {
    let mut el = ex().build(&ex().table(), Units::default()).unwrap();
    assert_eq!(el.type_name(), "flexion-torsion-joint");
    let id = [1.0, 0.0, 0.0, 0.0];
    el.initialize(&[id, id].concat()).unwrap();
    let mut s = [0.0; 3];
    // bent by 1.4 rad towards γ = 0 (flexion, C = 1.3), twisted by 0.5 rad, at rest
    el.law().unwrap().stress(&[1.4, 0.0, 0.5], &[0.0; 3], &mut s);
    let t = 1.5 * 0.5 + 4.0 * 0.125;
    let want = [8.0 * 1.3, -t * (1.0 - 1.4f64.cos()) / 1.4, t];
    assert!((0..3).all(|k| (s[k] - want[k]).abs() < 1e-12), "{s:?} vs {want:?}");
}

#[test]
fn bad_parameters_are_located() {
    let cases: Vec<(Table, &str, &str)> = vec![
        (
            with(ex().table(), "torsion", Some(parse("{ angles = [-1.0, 1.0], moments = [-1.0, 2.0] }"))),
            "elements.shoulder.torsion",
            "zero at the angle 0",
        ),
        (
            with(ex().table(), "bending", Some(parse("{ exponential = [1.0, 2.0], linear = 1.0 }"))),
            "elements.shoulder.bending",
            "more than one form",
        ),
        (
            with(ex().table(), "direction_factor", Some(parse("{ angles = [-3.0, 3.2], factors = [1.0, 1.0] }"))),
            "elements.shoulder.direction_factor.angles",
            "span",
        ),
        (
            with(ex().table(), "direction_factor", Some(parse("{ angles = [-4.0, 4.0], factor = [1.0, 1.0] }"))),
            "elements.shoulder.direction_factor.factors",
            "missing",
        ),
        (
            with(
                ex().table(),
                "direction_factor",
                Some(parse("{ angles = [-4.0, 0.0, 4.0], factors = [1.0, 2.0, 1.0], extra = 1 }")),
            ),
            "elements.shoulder.direction_factor.extra",
            "unknown parameter",
        ),
        (with(ex().table(), "bending", None), "elements.shoulder.direction_factor", "needs a `bending` function"),
        (with(ex().table(), "moving_z", Some(parse("[0.0, 0.0, 1.0]"))), "elements.shoulder.moving_x", "missing"),
        (
            ["bending", "direction_factor", "torsion", "damping_bending", "damping_torsion"]
                .iter()
                .fold(ex().table(), |t, k| with(t, k, None)),
            "elements.shoulder.bending",
            "no torque function",
        ),
    ];
    for (t, path, message) in cases {
        let e = ex().error(&t);
        assert!(e.path == path && e.message.contains(message), "{path}: {e:?}");
    }
}
