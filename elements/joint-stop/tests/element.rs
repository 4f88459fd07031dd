//! The Calspan joint stop with Engin's sinus against `ball-socket-resistance` and the report's
//! definitions (§2.2.2): zero inside, switching on at the same boundary on Table H.2's rays,
//! continuous across it, perpendicular to `r` and to the contour, the conformance harness and the
//! power balance.

// the report's angles as printed (3.142 is the table's φ, not π)
#![allow(clippy::approx_constant)]

use std::f64::consts::PI;

use mollier_core::conformance::{Options, Rng, check_generic, evaluate};
use mollier_core::geometry::{Quat, Vec3, cross, dot, quat_from_axis_angle, quat_mul, rotate};
use mollier_core::{Element, ElementError, ElementInfo, NodeId, Order};
use mollier_engin_joint::shoulder::{SINUS, swing_resistance, torsion};
use mollier_engin_joint::{BallSocketResistance, Interpolation, ResistanceLaw};
use mollier_joint_common::TorqueFunction;
use mollier_joint_stop::{JointStop, StopFrame, StopLaw, contour};

const X: Vec3 = [1.0, 0.0, 0.0];
const Z: Vec3 = [0.0, 0.0, 1.0];
const ID: Quat = [1.0, 0.0, 0.0, 0.0];

fn coords(li: &Quat, lj: &Quat) -> Vec<f64> {
    li.iter().chain(lj).copied().collect()
}

/// Engin's contour with `K(δ) = 60 δ + 200 δ³` and a damping of 2 N m s/rad.
fn stop() -> JointStop {
    let law = StopLaw::new(
        contour(SINUS).unwrap(),
        TorqueFunction::Polynomial(vec![60.0, 0.0, 200.0]),
        Some(TorqueFunction::linear(2.0)),
    );
    let mut s = JointStop::new(NodeId::new(0), NodeId::new(1), StopFrame { pole: Z, azimuth: X, r: Z }, law);
    s.initialize(&coords(&ID, &ID)).unwrap();
    s
}

fn engin() -> BallSocketResistance {
    let frames = mollier_engin_joint::JointFrames { fixed_z: Z, fixed_x: X, moving_z: Z, moving_x: X };
    let law = ResistanceLaw::new(swing_resistance(), torsion(Interpolation::MonotoneCubic));
    let mut e = BallSocketResistance::new(NodeId::new(0), NodeId::new(1), frames, law);
    e.initialize(&coords(&ID, &ID)).unwrap();
    e
}

/// Segment j turned so that `r` (initially the pole) points at `(θ, φ)`, then twisted about `r`
/// by `twist`; segment i turned by `li`.
fn posture(li: &Quat, theta: f64, phi: f64, twist: f64) -> Vec<f64> {
    let swing = quat_from_axis_angle(&[-phi.sin(), phi.cos(), 0.0], theta);
    coords(li, &quat_mul(li, &quat_mul(&swing, &quat_from_axis_angle(&Z, twist))))
}

/// Report eq. 3.1, written out.
fn sinus(phi: f64) -> f64 {
    let (s, c) = phi.sin_cos();
    (0..5).map(|n| c.powi(n as i32) * (SINUS[2 * n] + SINUS[2 * n + 1] * s)).sum()
}

/// The smallest θ on the ray φ where `on` holds, by bisection (it holds beyond it).
fn switch_on(on: &dyn Fn(f64) -> bool, phi: f64) -> f64 {
    let (mut lo, mut hi) = (0.3, 2.8);
    assert!(!on(lo) && on(hi), "φ = {phi}");
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if on(mid) { hi = mid } else { lo = mid }
    }
    hi
}

/// Table H.2's lines of constant φ, with the program's inside/outside verdicts (`true`: outside).
const TABLE_H2: [(f64, &[(f64, bool)]); 8] = [
    (
        0.0,
        &[(1.250, false), (1.344, false), (1.563, true), (1.450, false), (1.475, true), (1.460, false), (1.470, true)],
    ),
    (0.785, &[(1.250, false), (1.350, false), (1.450, true), (1.400, true), (1.380, false)]),
    (1.571, &[(1.300, false), (1.350, false), (1.450, true), (1.410, true), (1.400, false)]),
    (2.347, &[(1.600, false), (1.700, false), (1.750, true), (1.710, true)]),
    (3.142, &[(1.040, false), (1.050, true), (1.045, false)]),
    (3.927, &[(1.250, false), (1.280, false), (1.300, true), (1.290, false)]),
    (4.712, &[(1.550, false), (1.580, false), (1.600, true), (1.590, false)]),
    (5.498, &[(1.530, false), (1.540, false), (1.550, false), (1.560, true), (1.555, false)]),
];

#[test]
fn the_stop_switches_on_where_ball_socket_resistance_does_on_table_h2s_rays() {
    let (s, e) = (&stop(), &engin());
    let li = quat_from_axis_angle(&[0.4, -0.1, 0.7], 0.8);
    let stop_on =
        |phi: f64| move |theta: f64| s.torque(&posture(&li, theta, phi, 0.3), &[0.0; 2]).unwrap().0.magnitude > 0.0;
    let engin_on = |phi: f64| move |theta: f64| e.moment(&posture(&li, theta, phi, 0.3)).unwrap().0.swing > 0.0;
    let mut worst: f64 = 0.0;
    for (phi, tried) in TABLE_H2 {
        let (a, b) = (switch_on(&stop_on(phi), phi), switch_on(&engin_on(phi), phi));
        worst = worst.max((a - b).abs()).max((a - sinus(phi)).abs());
        assert!(
            (a - b).abs() < 1e-5 && (a - sinus(phi)).abs() < 1e-5,
            "φ = {phi}: stop {a}, engin {b}, eq. 3.1 {}",
            sinus(phi)
        );
        // the report program's 36 verdicts
        for &(theta, outside) in tried {
            assert_eq!(stop_on(phi)(theta), outside, "φ = {phi}, θ = {theta}");
        }
    }
    eprintln!("joint stop against ball-socket-resistance and eq. 3.1 on Table H.2's rays: max {worst:.1e} rad");
    // negative control: a contour 2e-5 rad wider switches on measurably later
    let mut wider = SINUS;
    wider[0] += 2e-5;
    let law = StopLaw::new(contour(wider).unwrap(), TorqueFunction::linear(1.0), None);
    let mut w = JointStop::new(NodeId::new(0), NodeId::new(1), StopFrame { pole: Z, azimuth: X, r: Z }, law);
    w.initialize(&coords(&ID, &ID)).unwrap();
    let w_on = |theta: f64| w.torque(&posture(&li, theta, 0.785, 0.3), &[0.0; 2]).unwrap().0.magnitude > 0.0;
    assert!((switch_on(&w_on, 0.785) - switch_on(&engin_on(0.785), 0.785)).abs() > 1e-5);
}

#[test]
fn zero_inside_continuous_across_and_perpendicular_to_r_and_the_contour() {
    let s = stop();
    let law = s.stop_law();
    for k in 0..360 {
        let phi = 2.0 * PI * k as f64 / 360.0;
        let tb = sinus(phi);
        // inside: exactly nothing, whatever the rates
        for f in [0.0, 0.3, 0.9, 1.0 - 1e-12] {
            let t = law.torque_at(f * tb * phi.cos(), f * tb * phi.sin(), &[0.4, -0.7]);
            assert!(t.magnitude == 0.0 && t.stress == [0.0; 2] && t.torque == [0.0; 3], "{phi} {f}");
        }
        // just outside: K(ε) → 0, so the torque is continuous across the contour
        for eps in [1e-6, 1e-9] {
            let th = tb + eps;
            let t = law.torque_at(th * phi.cos(), th * phi.sin(), &[0.0; 2]);
            // δ carries the rounding of θ (~1e-16 rad)
            assert!(
                (t.magnitude - 60.0 * eps).abs() < 1e-13
                    && t.stress.iter().all(|v| v.abs() <= 61.0 * eps * (1.0 + 1.0 / th))
            );
        }
        // outside: ⟂ r, of the magnitude K(δ), and along the contour's normal on the sphere
        let th = tb + 0.2;
        let t = law.torque_at(th * phi.cos(), th * phi.sin(), &[0.0; 2]);
        let (st, ct) = th.sin_cos();
        let r = [st * phi.cos(), st * phi.sin(), ct];
        let m = dot(&t.torque, &t.torque).sqrt();
        assert!(dot(&t.torque, &r).abs() < 1e-12 * m && (m - (60.0 * 0.2 + 200.0 * 0.008)).abs() < 1e-12, "{t:?}");
        // the force at the tip of r, r × T direction… its tangent-plane direction −ê is ⟂ to
        // the contour's tangent (θ_b', sin θ) in (ê_θ, ê_φ) — at the contour's own φ
        let h = 1e-7;
        let slope = (sinus(phi + h) - sinus(phi - h)) / (2.0 * h);
        let e_theta = [ct * phi.cos(), ct * phi.sin(), -st];
        let e_phi = [-phi.sin(), phi.cos(), 0.0];
        let push = cross(&t.torque, &r); // ∝ the force at the tip (T = r × F, F ⟂ r)
        let tangent: Vec3 = std::array::from_fn(|i| slope * e_theta[i] + st * e_phi[i]);
        assert!(dot(&push, &tangent).abs() < 1e-6 * m, "{phi}: {}", dot(&push, &tangent));
        // and inward: the force points to smaller θ
        assert!(dot(&push, &e_theta) < 0.0);
    }
}

#[test]
fn passes_the_conformance_harness_and_ignores_the_twist_about_r() {
    let mut rng = Rng::new(31);
    let mut worst = [0.0f64; 4];
    for (theta, phi) in [(0.0, 0.0), (0.8, 2.0), (1.6, -0.5), (2.6, 4.0)] {
        let li = rng.rotation(PI);
        let x0 = posture(&li, theta, phi, 0.7);
        let frame = StopFrame { pole: [0.3, -0.2, 0.9], azimuth: [1.0, 0.5, 0.0], r: [0.1, 0.7, 0.6] };
        let mut s = JointStop::new(
            NodeId::new(0),
            NodeId::new(1),
            frame,
            StopLaw::new(contour(SINUS).unwrap(), TorqueFunction::linear(1.0), None),
        );
        s.initialize(&x0).unwrap();
        let r = check_generic(&s, &x0, &Options { amplitude: 0.4, samples: 12, ..Options::default() }).unwrap();
        for (w, v) in worst.iter_mut().zip([r.rest, r.invariance, r.gradient, r.hessian]) {
            *w = w.max(v);
        }
    }
    eprintln!(
        "joint stop conformance: rest {:.1e}, invariance {:.1e}, gradient {:.1e}, Hessian {:.1e}",
        worst[0], worst[1], worst[2], worst[3]
    );
    let s = stop();
    let (a, _, _) = evaluate(&s, &posture(&ID, 1.7, 0.4, 0.0), Order::Value).unwrap();
    let (b, _, _) = evaluate(&s, &posture(&ID, 1.7, 0.4, 2.5), Order::Value).unwrap();
    assert!((a[0] - b[0]).abs() < 1e-14 && (a[1] - b[1]).abs() < 1e-14);
}

#[test]
fn the_stop_torque_and_its_damping_balance_the_power() {
    let s = stop();
    let mut rng = Rng::new(37);
    let mut worst: f64 = 0.0;
    let mut outside = 0;
    for _ in 0..300 {
        let li = rng.rotation(PI);
        let x = posture(&li, 0.3 + 2.5 * rng.uniform(), 2.0 * PI * rng.uniform(), rng.symmetric());
        let w = rng.unit_vector().map(|v| 2.0 * v);
        let lj = [x[4], x[5], x[6], x[7]];
        let ld = quat_mul(&[0.0, w[0], w[1], w[2]], &lj).map(|v| 0.5 * v);
        let (e, de, _) = evaluate(&s, &x, Order::Gradient).unwrap();
        let ed: [f64; 2] = std::array::from_fn(|k| (0..4).map(|i| de[k * 8 + 4 + i] * ld[i]).sum());
        let mut sigma = [0.0; 2];
        s.law().unwrap().stress(&e, &ed, &mut sigma);
        let (t, global) = s.torque(&x, &ed).unwrap();
        outside += usize::from(t.penetration > 0.0);
        let internal = sigma[0] * ed[0] + sigma[1] * ed[1];
        let external = -dot(&global, &w);
        let d = (internal - external).abs() / (1.0 + internal.abs());
        worst = worst.max(d);
        assert!(d < 1e-10, "{internal} vs {external} ({t:?})");
    }
    assert!(outside > 50, "{outside}");
    eprintln!("joint stop power balance σ·ė = −T·ω: max relative error {worst:.1e}");
    // rotated with segment i, the global torque turns along: it is the same in segment i's frame
    let (t, g) = s.torque(&posture(&ID, 2.0, 1.0, 0.0), &[0.0; 2]).unwrap();
    let li = quat_from_axis_angle(&[0.0, 1.0, 1.0], 1.1);
    let (_, g2) = s.torque(&posture(&li, 2.0, 1.0, 0.0), &[0.0; 2]).unwrap();
    let want = rotate(&li, &g);
    assert!((0..3).all(|k| (g2[k] - want[k]).abs() < 1e-12) && (0..3).all(|k| (g[k] - t.torque[k]).abs() < 1e-12));
}

#[test]
fn bad_contours_and_the_antipode_are_errors_not_panics() {
    let mut through_pole = SINUS;
    through_pole[0] -= 1.6;
    assert!(contour(through_pole).is_err());
    let mut past = SINUS;
    past[0] += 2.0;
    assert!(contour(past).is_err());
    let s = stop();
    let x = posture(&ID, PI, 0.3, 0.0);
    assert!(matches!(s.swing(&x), Err(ElementError::Domain(_))));
    assert!(evaluate(&s, &x, Order::Hessian).is_err());
    assert!(s.swing(&[0.0; 8]).is_err() && s.swing(&[f64::NAN; 8]).is_err());
}
