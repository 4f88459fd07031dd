//! The flexion-torsion joint against constructions from the report's definitions (§2.1.3): the
//! bending, direction and torsion angles; the conformance harness; the torque's directions and
//! its power balance; the moment of a rotationally symmetric joint.

use std::f64::consts::PI;

use mollier_core::conformance::{Options, Rng, check_generic, evaluate};
use mollier_core::geometry::{Quat, Vec3, cross, dot, quat_from_axis_angle, quat_mul, rotate};
use mollier_core::{Element, ElementError, ElementInfo, NodeId, Order};
use mollier_flexion_torsion_joint::{DirectionFactor, FlexionTorsionJoint, FlexionTorsionLaw};
use mollier_joint_common::torque::Table;
use mollier_joint_common::{FrameSpec, Interpolation, TorqueFunction};

const X: Vec3 = [1.0, 0.0, 0.0];
const Z: Vec3 = [0.0, 0.0, 1.0];
const ID: Quat = [1.0, 0.0, 0.0, 0.0];

fn coords(li: &Quat, lj: &Quat) -> Vec<f64> {
    li.iter().chain(lj).copied().collect()
}

fn law(direction: Option<DirectionFactor>) -> FlexionTorsionLaw {
    FlexionTorsionLaw::new(
        Some(TorqueFunction::Polynomial(vec![8.0, 0.0, 3.0])),
        direction,
        Some(TorqueFunction::Polynomial(vec![2.0, 0.0, 1.0])),
        Some(TorqueFunction::linear(0.7)),
        Some(TorqueFunction::linear(0.3)),
    )
}

/// A joint whose frames are the body frames at rest (two identity rotations).
fn body_frame_joint(law: FlexionTorsionLaw) -> FlexionTorsionJoint {
    let mut j = FlexionTorsionJoint::new(NodeId::new(0), NodeId::new(1), FrameSpec::coincident(Z, X), law);
    j.initialize(&coords(&ID, &ID)).unwrap();
    j
}

/// Rodrigues: `v` turned about the unit `axis` by `angle`.
fn turn(v: &Vec3, axis: &Vec3, angle: f64) -> Vec3 {
    let (s, c) = angle.sin_cos();
    let kxv = cross(axis, v);
    let kv = dot(axis, v);
    std::array::from_fn(|i| v[i] * c + kxv[i] * s + axis[i] * kv * (1.0 - c))
}

/// `(α, γ, β)` from the report's definitions, for the moving frame `(x_j, z_j)` in the fixed
/// frame's components.
fn report_angles(xj: &Vec3, zj: &Vec3) -> [f64; 3] {
    let alpha = dot(&Z, zj).clamp(-1.0, 1.0).acos();
    let gamma = zj[1].atan2(zj[0]);
    let n = cross(&Z, zj);
    let s_prime = if alpha > 0.0 { turn(&X, &n.map(|v| v / dot(&n, &n).sqrt()), alpha) } else { X };
    let beta = dot(&cross(&s_prime, xj), zj).atan2(dot(&s_prime, xj));
    [alpha, gamma, beta]
}

#[test]
fn bending_direction_and_torsion_are_the_reports_angles() {
    let j = body_frame_joint(law(None));
    let mut rng = Rng::new(19);
    let mut worst: f64 = 0.0;
    for k in 0..600 {
        let rel = rng.rotation(if k < 300 { 2.9 } else { 0.05 });
        let li = rng.rotation(PI);
        let x = coords(&li, &quat_mul(&li, &rel));
        let [p, q, beta] = j.joint_angles(&x).unwrap();
        let want = report_angles(&rotate(&rel, &X), &rotate(&rel, &Z));
        let got = [p.hypot(q), q.atan2(p), beta];
        let wrap = |d: f64| (d + PI).rem_euclid(2.0 * PI) - PI;
        // γ is meaningless when straight
        let checked = if want[0] > 1e-6 { 3 } else { 1 };
        for i in [0, 2].into_iter().chain((checked == 3).then_some(1)) {
            let d = wrap(got[i] - want[i]).abs();
            worst = worst.max(d);
            assert!(d < 1e-7, "{k}, angle {i}: {got:?} vs {want:?}");
        }
    }
    eprintln!("flexion-torsion angles against the report's construction: max error {worst:.1e} rad");
    // straight: the torsion is the angle from x_i to x_j
    let x = coords(&ID, &quat_from_axis_angle(&Z, 0.8));
    let [p, q, beta] = j.joint_angles(&x).unwrap();
    assert!(p.abs() < 1e-15 && q.abs() < 1e-15 && (beta - 0.8).abs() < 1e-15);
}

#[test]
fn passes_the_conformance_harness_straight_bent_and_far_bent() {
    let mut rng = Rng::new(23);
    let mut worst = [0.0f64; 4];
    let spec = FrameSpec {
        fixed_z: [0.1, 0.9, -0.3],
        fixed_x: [1.0, 0.0, 0.2],
        moving_z: [-0.4, 0.2, 0.9],
        moving_x: [0.0, 1.0, 0.5],
    };
    for (i, amplitude) in [(0, 0.5), (1, 0.5), (2, 0.3), (3, 0.5)] {
        let rel = [
            ID,
            quat_from_axis_angle(&[0.3, 1.0, 0.0], 1.1),
            quat_from_axis_angle(&[1.0, -0.2, 0.0], 2.6),
            quat_from_axis_angle(&[0.3, 0.4, 1.0], 0.02),
        ][i];
        let li = rng.rotation(PI);
        let x0 = coords(&li, &quat_mul(&li, &rel));
        for s in [FrameSpec::coincident(Z, X), spec] {
            let mut j = FlexionTorsionJoint::new(NodeId::new(0), NodeId::new(1), s, law(None));
            j.initialize(&x0).unwrap();
            let o = Options { amplitude, samples: 12, ..Options::default() };
            let r = check_generic(&j, &x0, &o).unwrap_or_else(|f| panic!("reference {i}: {f}"));
            for (w, v) in worst.iter_mut().zip([r.rest, r.invariance, r.gradient, r.hessian]) {
                *w = w.max(v);
            }
        }
    }
    eprintln!(
        "flexion-torsion conformance: rest {:.1e}, invariance {:.1e}, gradient {:.1e}, Hessian {:.1e}",
        worst[0], worst[1], worst[2], worst[3]
    );
}

fn cosine_factor() -> DirectionFactor {
    // C(γ) = 1 + 0.5 cos γ, tabulated every 15°
    let g: Vec<f64> = (0..=24).map(|k| -PI + PI * k as f64 / 12.0).collect();
    let c: Vec<f64> = g.iter().map(|g| 1.0 + 0.5 * g.cos()).collect();
    DirectionFactor::new(Table::new(g, c, Interpolation::MonotoneCubic).unwrap()).unwrap()
}

/// Mode rates `ė` (3) and the law's stresses with them, for the moving member turning at `w`
/// (global) relative to the fixed one.
fn rates_and_stress(j: &FlexionTorsionJoint, x: &[f64], w: &Vec3) -> ([f64; 3], [f64; 3]) {
    let lj = [x[4], x[5], x[6], x[7]];
    let ld = quat_mul(&[0.0, w[0], w[1], w[2]], &lj).map(|v| 0.5 * v);
    let (e, de, _) = evaluate(j, x, Order::Gradient).unwrap();
    let ed: [f64; 3] = std::array::from_fn(|k| (0..4).map(|i| de[k * 8 + 4 + i] * ld[i]).sum());
    let mut s = [0.0; 3];
    j.law().unwrap().stress(&e, &ed, &mut s);
    (ed, s)
}

#[test]
fn the_torques_are_perpendicular_to_both_z_axes_and_about_z_j_and_balance_the_power() {
    for factor in [None, Some(cosine_factor())] {
        let j = body_frame_joint(law(factor));
        let mut rng = Rng::new(29);
        let mut worst: f64 = 0.0;
        for k in 0..200 {
            let li = rng.rotation(PI);
            let rel = rng.rotation(if k % 4 == 0 { 0.01 } else { 2.8 });
            let x = coords(&li, &quat_mul(&li, &rel));
            let w = rng.unit_vector().map(|v| 3.0 * v);
            let (ed, sigma) = rates_and_stress(&j, &x, &w);
            let t = j.torque(&x, &ed).unwrap();
            let (zi, zj) = (rotate(&li, &Z), rotate(&quat_mul(&li, &rel), &Z));
            assert!(dot(&t.bending, &zi).abs() < 1e-12 && dot(&t.bending, &zj).abs() < 1e-12, "{t:?}");
            let along = dot(&t.torsion, &zj);
            assert!(cross(&t.torsion, &zj).iter().all(|v| v.abs() < 1e-12) && (along + t.moment.torsion).abs() < 1e-12);
            let internal: f64 = (0..3).map(|k| sigma[k] * ed[k]).sum();
            let external = -(dot(&t.bending, &w) + dot(&t.torsion, &w));
            let d = (internal - external).abs() / (1.0 + internal.abs());
            worst = worst.max(d);
            assert!(d < 1e-10, "{k}: {internal} vs {external}");
        }
        eprintln!("flexion-torsion power balance σ·ė = −T·ω: max relative error {worst:.1e}");
    }
}

#[test]
fn a_symmetric_joint_has_a_moment_that_depends_on_the_bending_angle_only() {
    let symmetric = body_frame_joint(law(None));
    let directional = body_frame_joint(law(Some(cosine_factor())));
    for alpha in [0.2f64, 0.9, 1.7, 2.6] {
        let want = 8.0 * alpha + 3.0 * alpha.powi(3);
        let (mut lo, mut hi) = (f64::MAX, f64::MIN);
        for k in 0..36 {
            let gamma = -PI + 2.0 * PI * (k as f64 + 0.5) / 36.0;
            let beta = 0.3 * (k as f64 - 17.0) / 17.0;
            // bend about the axis ⟂ z at azimuth γ + π/2, then twist about the new z
            let rel = quat_mul(
                &quat_from_axis_angle(&[-gamma.sin(), gamma.cos(), 0.0], alpha),
                &quat_from_axis_angle(&Z, beta),
            );
            let li = quat_from_axis_angle(&[0.2, -0.5, 0.4], 1.3);
            let x = coords(&li, &quat_mul(&li, &rel));
            let t = symmetric.torque(&x, &[0.0; 3]).unwrap();
            let m = dot(&t.bending, &t.bending).sqrt();
            assert!(
                (m - want).abs() < 1e-12 * want && (t.moment.angles[1] - gamma).abs() < 1e-9,
                "{alpha} {gamma}: {m} vs {want}"
            );
            let c = directional.torque(&x, &[0.0; 3]).unwrap();
            let mc = dot(&c.bending, &c.bending).sqrt();
            assert!((mc - want * (1.0 + 0.5 * gamma.cos())).abs() < 1e-3 * want, "{gamma}: {mc}");
            lo = lo.min(mc);
            hi = hi.max(mc);
        }
        // negative control: with C(γ) = 1 + cos(γ)/2 the moment varies threefold round the circle
        assert!(hi / lo > 2.9, "{lo} {hi}");
    }
}

#[test]
fn the_damping_follows_the_bending_rate_and_the_spin_about_z_j() {
    let j = body_frame_joint(FlexionTorsionLaw::new(
        None,
        None,
        None,
        Some(TorqueFunction::linear(0.7)),
        Some(TorqueFunction::linear(0.3)),
    ));
    let rel = quat_mul(&quat_from_axis_angle(&[0.0, 1.0, 0.0], 0.8), &quat_from_axis_angle(&Z, 0.4));
    let x = coords(&ID, &rel);
    let zj = rotate(&rel, &Z);
    // spinning about z_j: no bending rate, torsion damping 0.3 × 2
    let (ed, _) = rates_and_stress(&j, &x, &zj.map(|v| 2.0 * v));
    let t = j.torque(&x, &ed).unwrap();
    assert!(t.moment.bending.abs() < 1e-12 && (t.moment.torsion - 0.6).abs() < 1e-12, "{:?}", t.moment);
    // turning about û = z_i × z_j: bending rate only, damping 0.7 × 1.5
    let u = cross(&Z, &zj);
    let u = u.map(|v| v / dot(&u, &u).sqrt());
    let (ed, _) = rates_and_stress(&j, &x, &u.map(|v| 1.5 * v));
    let t = j.torque(&x, &ed).unwrap();
    assert!((t.moment.bending - 1.05).abs() < 1e-12 && t.moment.torsion.abs() < 1e-12, "{:?}", t.moment);
}

#[test]
fn the_antipode_is_a_domain_error_and_bad_factors_are_rejected() {
    let j = body_frame_joint(law(None));
    let x = coords(&ID, &quat_from_axis_angle(&X, PI));
    assert!(matches!(j.joint_angles(&x), Err(ElementError::Domain(_))));
    assert!(evaluate(&j, &x, Order::Hessian).is_err());
    assert!(j.joint_angles(&[0.0; 8]).is_err() && j.joint_angles(&[f64::NAN; 8]).is_err());
    let spec = FrameSpec { fixed_z: Z, fixed_x: X, moving_z: [0.0, 0.0, -1.0], moving_x: X };
    let mut k = FlexionTorsionJoint::new(NodeId::new(0), NodeId::new(1), spec, law(None));
    assert!(matches!(k.initialize(&coords(&ID, &ID)), Err(ElementError::Degenerate(_))));
    let t = |g: Vec<f64>, c: Vec<f64>| DirectionFactor::new(Table::new(g, c, Interpolation::Linear).unwrap());
    assert!(t(vec![-3.0, PI], vec![1.0, 1.0]).is_err(), "must reach −π");
    assert!(t(vec![-PI, 0.0, PI], vec![1.0, -0.1, 1.0]).is_err(), "negative");
    assert!(t(vec![-PI, PI], vec![1.0, 2.0]).is_err(), "discontinuous at ±π");
    assert!(t(vec![-PI, 0.0, PI], vec![1.0, 2.0, 1.0]).is_ok());
}
