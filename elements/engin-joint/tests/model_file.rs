//! The example `models/joints/engin-shoulder.toml` builds through the registry into the element
//! with the report's data, and bad parameters are reported at their key.

use std::f64::consts::PI;

use mollier_core::registry::{ParamError, Units, Value};
use mollier_engin_joint::{TYPE, shoulder};
use mollier_joint_common::example::{ExampleElement, Table};

/// The element `shoulder_resistance` of the example model.
fn ex() -> ExampleElement {
    ExampleElement::new(
        include_str!("../../../models/joints/engin-shoulder.toml"),
        "shoulder_resistance",
        ["thorax", "humerus"],
        TYPE,
    )
}

/// The element's parameter table from the example, without `type`.
fn example_table() -> Table {
    ex().table()
}

fn build(table: &[(String, Value)], units: Units) -> Result<Box<dyn mollier_core::Element>, ParamError> {
    ex().build(table, units)
}

fn numbers(table: &[(String, Value)], key: &str) -> Vec<f64> {
    let Some((_, Value::Array(items))) = table.iter().find(|(k, _)| k == key) else { panic!("{key}") };
    items.iter().map(|v| if let Value::Number(x) = v { *x } else { panic!("{key}") }).collect()
}

fn set(table: &mut Table, key: &str, v: Value) {
    match table.iter_mut().find(|(k, _)| k == key) {
        Some(slot) => slot.1 = v,
        None => table.push((key.to_string(), v)),
    }
}

fn array(v: &[f64]) -> Value {
    Value::Array(v.iter().map(|x| Value::Number(*x)).collect())
}

#[test]
fn the_example_holds_the_reports_data_and_builds() {
    let t = example_table();
    assert_eq!(numbers(&t, "sinus"), shoulder::SINUS);
    assert_eq!(numbers(&t, "moment"), shoulder::MOMENT);
    assert_eq!(numbers(&t, "torsion_angles"), shoulder::TORSION_ANGLES);
    assert_eq!(numbers(&t, "torsion_moments"), shoulder::TORSION_MOMENTS);
    // the fixed frame is Rz(φn) Ry(θn) of Table 3.2's mean joint axis (App. C), to 7 digits
    let (pn, tn) = (shoulder::MEAN_JOINT_AXIS_DEG.0.to_radians(), shoulder::MEAN_JOINT_AXIS_DEG.1.to_radians());
    let z = [tn.sin() * pn.cos(), tn.sin() * pn.sin(), tn.cos()];
    let x = [tn.cos() * pn.cos(), tn.cos() * pn.sin(), -tn.sin()];
    for (key, want) in [("fixed_z", z), ("fixed_x", x)] {
        let got = numbers(&t, key);
        assert!((0..3).all(|i| (got[i] - want[i]).abs() < 1e-7), "{key}: {got:?} vs {want:?}");
    }

    let mut el = build(&t, Units::default()).unwrap();
    assert_eq!(el.type_name(), "ball-socket-resistance");
    let modes: Vec<&str> = el.layout().modes().iter().map(|m| m.name.as_ref()).collect();
    assert_eq!(modes, ["swing_p", "swing_q", "torsion"]);
    // thorax and humerus at their body axes: the humerus along +x in Engin's torsion posture
    let x0 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    el.initialize(&x0).unwrap();
    let mut sigma = [0.0; 3];
    el.law().unwrap().stress(&[0.0; 3], &[0.0; 3], &mut sigma);
    // inside the sinus (θ = 1.0455 rad at φ = 4.8244 rad, boundary 1.59 rad): only the table's
    // 2.7 N m at ψ = 0 about the humeral axis, σ_ψ = −2.7 N m; a moment about the long axis also
    // works on the swing, σ_(p,q) = T (1 − cos θ)/θ (−sin φ, cos φ)
    let y = [-pn.sin(), pn.cos(), 0.0];
    let m = [1.0, 0.0, 0.0];
    let dot = |a: &[f64; 3]| a[0] * m[0] + a[1] * m[1] + a[2] * m[2];
    let (theta, phi) = (dot(&z).acos(), dot(&y).atan2(dot(&x)));
    assert!((theta - 1.0455).abs() < 1e-4 && (phi.rem_euclid(2.0 * PI) - 4.8244).abs() < 1e-4);
    let coupling = 2.7 * (1.0 - theta.cos()) / theta;
    let want = [-coupling * phi.sin(), coupling * phi.cos(), -2.7];
    assert!((0..3).all(|k| (sigma[k] - want[k]).abs() < 1e-6), "{sigma:?} vs {want:?}");
}

#[test]
fn angles_follow_the_files_unit_and_moment_coefficients_do_not() {
    let mut t = example_table();
    let deg = |key: &str, t: &Table| numbers(t, key).iter().map(|v| v.to_degrees()).collect::<Vec<_>>();
    let (sinus, angles) = (deg("sinus", &t), deg("torsion_angles", &t));
    set(&mut t, "sinus", array(&sinus));
    set(&mut t, "torsion_angles", array(&angles));
    set(&mut t, "min_ramp_width", Value::Number(DEG_WIDTH));
    let units = Units { angle: PI / 180.0, ..Units::default() };
    let (mut a, mut b) = (build(&example_table(), Units::default()).unwrap(), build(&t, units).unwrap());
    let x0 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];
    a.initialize(&x0).unwrap();
    b.initialize(&x0).unwrap();
    for e in [[0.0, 0.0, 0.0], [0.9, -0.3, 0.8], [-1.2, 0.7, -1.5], [0.2, 1.4, 0.1]] {
        let (mut sa, mut sb) = ([0.0; 3], [0.0; 3]);
        a.law().unwrap().stress(&e, &[0.0; 3], &mut sa);
        b.law().unwrap().stress(&e, &[0.0; 3], &mut sb);
        assert!((0..3).all(|k| (sa[k] - sb[k]).abs() < 1e-9 * (1.0 + sa[k].abs())), "{e:?}: {sa:?} {sb:?}");
    }
}

/// The default minimum ramp width, 0.05 rad, in degrees.
const DEG_WIDTH: f64 = 0.05 * 180.0 / PI;

#[test]
fn bad_parameters_are_reported_at_their_key() {
    let fails_at = |edit: &dyn Fn(&mut Table), key: &str| {
        let mut t = example_table();
        edit(&mut t);
        let err = build(&t, Units::default()).err().unwrap_or_else(|| panic!("{key}: no error"));
        assert_eq!(err.path, format!("elements.shoulder_resistance.{key}"), "{err}");
    };
    fails_at(&|t| t.retain(|(k, _)| k != "sinus"), "sinus");
    fails_at(&|t| set(t, "sinus", array(&[1.5; 9])), "sinus");
    fails_at(&|t| set(t, "moment", Value::String("engin".into())), "moment");
    fails_at(&|t| set(t, "fixed_x", array(&[1.0028914, 1.6883902, 0.3788764])), "fixed_x");
    fails_at(&|t| set(t, "moving_z", array(&[0.0, 0.0, 0.0])), "moving_z");
    fails_at(&|t| set(t, "moving", Value::String("humerus.elbow".into())), "moving");
    fails_at(&|t| set(t, "lowest_contour", Value::Number(-6.0)), "lowest_contour");
    fails_at(&|t| set(t, "torsion_interpolation", Value::String("spline".into())), "torsion_interpolation");
    fails_at(&|t| set(t, "torsion_moments", array(&shoulder::TORSION_MOMENTS[..37])), "torsion_moments");
    fails_at(
        &|t| {
            let mut a = shoulder::TORSION_ANGLES;
            a.swap(3, 4);
            set(t, "torsion_angles", array(&a));
        },
        "torsion_angles",
    );
    fails_at(
        &|t| {
            let mut m = shoulder::TORSION_MOMENTS;
            m[30] = 1.0;
            set(t, "torsion_moments", array(&m));
        },
        "torsion_moments",
    );
    // a sinus through the pole, and a moment that would push the arm outward near φ = 0
    fails_at(&|t| set(t, "sinus", array(&[-0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])), "sinus");
    fails_at(&|t| set(t, "moment", array(&[10.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0])), "moment");
    // a misspelt key
    fails_at(&|t| set(t, "theta_mx", Value::Number(3.0)), "theta_mx");
}
