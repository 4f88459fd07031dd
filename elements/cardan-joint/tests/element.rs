//! The cardan joint against constructions from the report's definitions (§2.1.2): its angles
//! against the Bryant decomposition of the relative rotation, the conformance harness, its
//! torques against a HINGE with the same law, and the power balance of its torque.

use std::f64::consts::{FRAC_PI_2, PI};

use mollier_cardan_joint::{CardanJoint, CardanLaw};
use mollier_core::conformance::{Options, Rng, check_generic, evaluate};
use mollier_core::geometry::{Quat, Vec3, quat_from_axis_angle, quat_mul, rotate, rotation};
use mollier_core::{Element, ElementError, ElementInfo, Law, NodeId, Order};
use mollier_hinge::Hinge;
use mollier_joint_common::{FrameSpec, TorqueFunction};

const X: Vec3 = [1.0, 0.0, 0.0];
const Y: Vec3 = [0.0, 1.0, 0.0];
const Z: Vec3 = [0.0, 0.0, 1.0];

fn law(k: [f64; 3]) -> CardanLaw {
    let f = |k: f64| (k != 0.0).then(|| TorqueFunction::Polynomial(vec![k, 0.0, 0.3 * k]));
    CardanLaw::new([f(k[0]), f(k[1]), f(k[2])], [None, None, None])
}

fn coords(li: &Quat, lj: &Quat) -> Vec<f64> {
    li.iter().chain(lj).copied().collect()
}

/// A joint whose frames are both the body frames at rest (`x0` = two identity rotations).
fn body_frame_joint(law: CardanLaw) -> CardanJoint {
    let mut j = CardanJoint::new(NodeId::new(0), NodeId::new(1), FrameSpec::coincident(Z, X), law);
    j.initialize(&coords(&[1.0, 0.0, 0.0, 0.0], &[1.0, 0.0, 0.0, 0.0])).unwrap();
    j
}

/// `λ_i` and `λ_j = λ_i Rx(φ) Ry(θ) Rz(ψ)`: the moving frame turned by the cardan angles.
fn posed(li: &Quat, a: [f64; 3]) -> Vec<f64> {
    let r = quat_mul(
        &quat_mul(&quat_from_axis_angle(&X, a[0]), &quat_from_axis_angle(&Y, a[1])),
        &quat_from_axis_angle(&Z, a[2]),
    );
    coords(li, &quat_mul(li, &r))
}

#[test]
fn angles_are_the_bryant_decomposition_of_the_relative_rotation() {
    let j = body_frame_joint(law([1.0, 0.0, 0.0]));
    let mut rng = Rng::new(7);
    let mut worst: f64 = 0.0;
    for _ in 0..500 {
        let a = [PI * rng.symmetric(), 1.5 * rng.symmetric(), PI * rng.symmetric()];
        let li = rng.rotation(PI);
        let mut x = posed(&li, a);
        // non-unit Euler parameters (as during Newton iterations) change nothing
        x[..4].iter_mut().for_each(|v| *v *= 1.3);
        x[4..].iter_mut().for_each(|v| *v *= 0.8);
        let got = j.angles(&x).unwrap();
        // an independent decomposition of Rᵢᵀ Rⱼ: θ = asin R13, φ from R23/R33, ψ from R12/R11
        let (ri, rj) = (rotation(&li), rotation(&quat_at(&x, 4).map(|v| v / 0.8)));
        let r: [[f64; 3]; 3] =
            std::array::from_fn(|p| std::array::from_fn(|q| (0..3).map(|k| ri[k][p] * rj[k][q]).sum()));
        let theta = r[0][2].asin();
        let phi = (-r[1][2] / theta.cos()).atan2(r[2][2] / theta.cos());
        let psi = (-r[0][1] / theta.cos()).atan2(r[0][0] / theta.cos());
        for (k, want) in [a, [phi, theta, psi]].iter().enumerate() {
            for m in 0..3 {
                let d = (got[m] - want[m] + PI).rem_euclid(2.0 * PI) - PI;
                worst = worst.max(d.abs());
                assert!(d.abs() < 1e-9, "reference {k}, angle {m}: {got:?} vs {want:?}");
            }
        }
    }
    assert!(worst < 1e-9, "{worst}");
    eprintln!("cardan angles against the construction and asin/atan2 decomposition: max error {worst:.1e} rad");
}

fn quat_at(x: &[f64], o: usize) -> Quat {
    [x[o], x[o + 1], x[o + 2], x[o + 3]]
}

#[test]
fn passes_the_conformance_harness_at_rest_in_general_postures_and_near_its_limits() {
    let opts = Options { amplitude: 0.5, samples: 12, ..Options::default() };
    let mut rng = Rng::new(11);
    let mut worst = [0.0f64; 4];
    // frames apart from the body frames, and initial postures away from the neutral one
    let spec = FrameSpec {
        fixed_z: [0.2, -0.3, 0.9],
        fixed_x: [1.0, 0.4, 0.0],
        moving_z: [-0.5, 0.1, 0.8],
        moving_x: [0.3, 1.0, 0.2],
    };
    let postures: [[f64; 3]; 5] = [[0.0; 3], [0.4, -0.7, 1.1], [3.0, 0.2, -3.0], [-1.0, 1.3, 0.5], [2.0, -1.25, -2.5]];
    for (i, a) in postures.iter().enumerate() {
        let li = rng.rotation(PI);
        let x0 = posed(&li, *a);
        for s in [FrameSpec::coincident(Z, X), spec] {
            let mut j = CardanJoint::new(NodeId::new(0), NodeId::new(1), s, law([1.0, 2.0, 3.0]));
            j.initialize(&x0).unwrap();
            // keep clear of gimbal lock: smaller perturbations near θ = ±π/2
            let o = if a[1].abs() > 1.2 { Options { amplitude: 0.2, ..opts } } else { opts };
            let r = check_generic(&j, &x0, &o).unwrap_or_else(|f| panic!("posture {i}: {f}"));
            for (w, v) in worst.iter_mut().zip([r.rest, r.invariance, r.gradient, r.hessian]) {
                *w = w.max(v);
            }
            assert!(r.dual.unwrap() < 1e-9);
        }
    }
    eprintln!(
        "cardan conformance: rest {:.1e}, invariance {:.1e}, gradient {:.1e}, Hessian {:.1e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

/// `σ ∇e` (8): the generalized forces of an element's stresses on its Euler parameters.
fn generalized(el: &dyn Element, x: &[f64], sigma: &[f64]) -> Vec<f64> {
    let (_, de, _) = evaluate(el, x, Order::Gradient).unwrap();
    (0..8).map(|i| (0..sigma.len()).map(|k| sigma[k] * de[k * 8 + i]).sum()).collect()
}

#[test]
fn with_one_torque_function_it_is_a_hinge_with_that_law() {
    // M(a) = k a + 0.3 k a³ about one axis; the hinge about the same axis with σ = M(rotation)
    let mut worst: f64 = 0.0;
    let mut rng = Rng::new(3);
    for (axis_index, axis) in [X, Y, Z].iter().enumerate() {
        let mut k = [0.0; 3];
        k[axis_index] = 7.0;
        let j = body_frame_joint(law(k));
        let mut h = Hinge::new(NodeId::new(0), NodeId::new(1), *axis, None);
        h.initialize(&coords(&[1.0, 0.0, 0.0, 0.0], &[1.0, 0.0, 0.0, 0.0])).unwrap();
        let limit = if axis_index == 1 { 1.5 } else { 3.1 };
        for step in -20..=20 {
            let angle = limit * step as f64 / 20.0;
            let li = rng.rotation(PI);
            let x = coords(&li, &quat_mul(&li, &quat_from_axis_angle(axis, angle)));
            let (e, _, _) = evaluate(&j, &x, Order::Value).unwrap();
            let (eh, _, _) = evaluate(&h, &x, Order::Value).unwrap();
            assert!((e[axis_index] - angle).abs() < 1e-12 && (eh[0] - angle).abs() < 1e-12);
            let mut sigma = [0.0; 3];
            j.law().unwrap().stress(&e, &[0.0; 3], &mut sigma);
            let m = 7.0 * angle + 2.1 * angle.powi(3);
            assert!((sigma[axis_index] - m).abs() < 1e-12 * (1.0 + m.abs()), "{sigma:?} vs {m}");
            let gj = generalized(&j, &x, &sigma);
            let gh = generalized(&h, &x, &[m, 0.0, 0.0]);
            for i in 0..8 {
                let d = (gj[i] - gh[i]).abs() / (1.0 + m.abs());
                worst = worst.max(d);
                assert!(d < 1e-12, "axis {axis_index}, angle {angle}: {gj:?} vs {gh:?}");
            }
        }
    }
    eprintln!("cardan with one torque function against the hinge: max generalized-force error {worst:.1e} (relative)");
}

#[test]
fn its_torque_takes_each_function_about_its_own_axis_and_balances_the_power() {
    let j = body_frame_joint(law([3.0, 5.0, 2.0]));
    let mut rng = Rng::new(5);
    for _ in 0..50 {
        let a = [2.5 * rng.symmetric(), 1.3 * rng.symmetric(), 2.5 * rng.symmetric()];
        let li = rng.rotation(PI);
        let x = posed(&li, a);
        let sigma = CardanLaw::torques_at(j.cardan_law(), &a, &[0.0; 3]);
        let tau = j.torque(&x, &sigma).unwrap();
        let axes = j.axes(&x).unwrap();
        for k in 0..3 {
            let c: f64 = (0..3).map(|m| tau[m] * axes[k][m]).sum();
            assert!((c + sigma[k]).abs() < 1e-12 * (1.0 + sigma[k].abs()), "axis {k}: {c} vs {}", -sigma[k]);
        }
        // power: σ·ė = −τ·ω for the moving member turning at ω (global), λ̇ = ½ (0, ω) λ
        let w = rng.unit_vector();
        let lj = quat_at(&x, 4);
        let ld = quat_mul(&[0.0, w[0], w[1], w[2]], &lj).map(|v| 0.5 * v);
        let (_, de, _) = evaluate(&j, &x, Order::Gradient).unwrap();
        let edot: Vec<f64> = (0..3).map(|k| (0..4).map(|i| de[k * 8 + 4 + i] * ld[i]).sum()).collect();
        let internal: f64 = (0..3).map(|k| sigma[k] * edot[k]).sum();
        let external: f64 = -(0..3).map(|m| tau[m] * w[m]).sum::<f64>();
        assert!((internal - external).abs() < 1e-11 * (1.0 + internal.abs()), "{internal} vs {external}");
        // the rates of the modes are the cardan angle rates: rotating about the floating y' only
        // changes θ
        let yd = rotate(&li, &[0.0, a[0].cos(), a[0].sin()]);
        let ld = quat_mul(&[0.0, yd[0], yd[1], yd[2]], &lj).map(|v| 0.5 * v);
        let edot: Vec<f64> = (0..3).map(|k| (0..4).map(|i| de[k * 8 + 4 + i] * ld[i]).sum()).collect();
        assert!(edot[0].abs() < 1e-12 && (edot[1] - 1.0).abs() < 1e-12 && edot[2].abs() < 1e-12, "{edot:?}");
    }
}

#[test]
fn gimbal_lock_and_bad_coordinates_are_errors_not_panics() {
    let j = body_frame_joint(law([1.0, 0.0, 0.0]));
    // (θ beyond π/2 is another Bryant triple with |θ| < π/2: only the lock itself is singular)
    for theta in [FRAC_PI_2, -FRAC_PI_2, FRAC_PI_2 + 1e-8, -FRAC_PI_2 + 5e-7] {
        let x = posed(&[1.0, 0.0, 0.0, 0.0], [0.3, theta, 0.2]);
        assert!(matches!(j.angles(&x), Err(ElementError::Domain(_))), "{theta}");
        assert!(evaluate(&j, &x, Order::Hessian).is_err());
    }
    // just inside the limit it is still defined
    let x = posed(&[1.0, 0.0, 0.0, 0.0], [0.3, FRAC_PI_2 - 1e-4, 0.2]);
    assert!((j.angles(&x).unwrap()[1] - (FRAC_PI_2 - 1e-4)).abs() < 1e-9);
    assert!(j.angles(&[0.0; 8]).is_err());
    assert!(j.angles(&[f64::NAN; 8]).is_err());
    assert!(j.angles(&[1.0; 7]).is_err());
    // a reference at gimbal lock is degenerate
    // (a reference at gimbal lock: the moving frame Ry(π/2) of the fixed one initially)
    let spec = FrameSpec { fixed_z: Z, fixed_x: X, moving_z: X, moving_x: [0.0, 0.0, -1.0] };
    let mut k = CardanJoint::new(NodeId::new(0), NodeId::new(1), spec, law([1.0, 0.0, 0.0]));
    let id = [1.0, 0.0, 0.0, 0.0];
    assert!(matches!(k.initialize(&coords(&id, &id)), Err(ElementError::Degenerate(_))));
}

#[test]
fn modes_are_measured_from_the_initial_posture_and_the_law_adds_it_back() {
    // both bodies at the identity initially, the moving joint frame turned by the cardan angles a0
    let a0 = [0.5, -0.3, 2.9];
    let r0 = quat_mul(
        &quat_mul(&quat_from_axis_angle(&X, a0[0]), &quat_from_axis_angle(&Y, a0[1])),
        &quat_from_axis_angle(&Z, a0[2]),
    );
    let spec = FrameSpec { fixed_z: Z, fixed_x: X, moving_z: rotate(&r0, &Z), moving_x: rotate(&r0, &X) };
    let mut k = CardanJoint::new(NodeId::new(0), NodeId::new(1), spec, law([2.0, 3.0, 4.0]));
    let id = [1.0, 0.0, 0.0, 0.0];
    k.initialize(&coords(&id, &id)).unwrap();
    let r = k.cardan_law().reference();
    assert!((0..3).all(|i| (r[i] - a0[i]).abs() < 1e-14), "{r:?}");
    let li = quat_from_axis_angle(&[0.3, 0.2, -0.5], 0.9);
    let (e0, _, _) = evaluate(&k, &coords(&li, &li), Order::Value).unwrap();
    assert!(e0.iter().all(|v| v.abs() < 1e-14), "{e0:?}");
    // ψ turned by 0.5 rad about z'', across ±π: the mode stays continuous
    let inv = [r0[0], -r0[1], -r0[2], -r0[3]];
    let q = quat_mul(&quat_mul(&r0, &quat_from_axis_angle(&Z, 0.5)), &inv);
    let (e, _, _) = evaluate(&k, &coords(&li, &quat_mul(&li, &q)), Order::Value).unwrap();
    assert!(e[0].abs() < 1e-12 && e[1].abs() < 1e-12 && (e[2] - 0.5).abs() < 1e-12, "{e:?}");
    let mut s = [0.0; 3];
    k.law().unwrap().stress(&e, &[0.1, 0.0, -0.2], &mut s);
    let m = |k: f64, a: f64| k * a + 0.3 * k * a.powi(3);
    let want = [m(2.0, 0.5), m(3.0, -0.3), m(4.0, 3.4)];
    assert!((0..3).all(|i| (s[i] - want[i]).abs() < 1e-11), "{s:?} vs {want:?}");
}

#[test]
fn the_stored_energy_is_the_potential_of_the_stresses() {
    let table = TorqueFunction::Table(
        mollier_joint_common::torque::Table::new(
            vec![-0.6, -0.3, 0.0, 1.0, 1.5, 2.0],
            vec![-60.0, -8.0, 0.0, 4.0, 25.0, 90.0],
            mollier_joint_common::Interpolation::MonotoneCubic,
        )
        .unwrap(),
    );
    let mut l = CardanLaw::new(
        [Some(table), Some(TorqueFunction::Exponential { a: 0.4, b: 5.0 }), Some(TorqueFunction::linear(3.0))],
        [Some(TorqueFunction::linear(0.5)), None, None],
    );
    l.set_reference([0.2, -0.1, 0.7]);
    assert_eq!(l.energy(&[0.0; 3]), Some(0.0));
    let h = 1e-6;
    for e in [[0.3, 0.2, -0.4], [-0.9, 0.05, 1.0], [1.7, -0.3, 0.0]] {
        let mut s = [0.0; 3];
        l.stress(&e, &[0.0; 3], &mut s);
        for k in 0..3 {
            let (mut p, mut m) = (e, e);
            p[k] += h;
            m[k] -= h;
            let fd = (l.energy(&p).unwrap() - l.energy(&m).unwrap()) / (2.0 * h);
            assert!((fd - s[k]).abs() < 1e-6 * (1.0 + s[k].abs()), "{e:?} {k}: {fd} vs {}", s[k]);
        }
        // the damping acts only through the rates
        let mut d = [0.0; 3];
        l.stress(&e, &[2.0, 0.0, 0.0], &mut d);
        assert!((d[0] - s[0] - 1.0).abs() < 1e-12 && d[1] == s[1] && d[2] == s[2]);
    }
}
