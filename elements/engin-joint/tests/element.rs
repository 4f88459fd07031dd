//! The element's kinematics (conformance, exact joint angles) and its law's moment: conjugate to
//! the modes, perpendicular to the long axis with Engin's magnitude, restoring everywhere outside
//! the sinus, zero inside and continuous across it.

mod common;

use std::f64::consts::PI;

use common::{Setup, shoulder_law};
use mollier_core::conformance::{Options, check_generic, evaluate};
use mollier_core::element::{Element, Order};
use mollier_core::geometry::{Quat, Vec3, cross, dot, quat_conjugate, quat_from_axis_angle, quat_mul, rotate};
use mollier_engin_joint::Interpolation;

fn joint(setup: &Setup, x: &[f64]) -> [f64; 3] {
    let (e, _, _) = evaluate(&setup.element, x, Order::Value).unwrap();
    let r = setup.element.resistance().reference();
    [e[0] + r[0], e[1] + r[1], e[2] + r[2]]
}

#[test]
fn conformance_at_rest_postures_inside_and_outside_the_sinus_and_at_the_pole() {
    // (θ0, φ0, ψ0) of the initial configuration: the pole (series branch), ordinary, far out
    for &(theta, phi, psi) in &[(0.0, 0.0, 0.0), (0.2, 1.0, -0.4), (1.2, 2.5, 2.9), (2.6, -1.9, 0.7)] {
        let s = Setup::oblique(theta, phi, psi, shoulder_law(Interpolation::MonotoneCubic));
        let opts = Options { amplitude: 0.5, samples: 10, ..Options::default() };
        let r = check_generic(&s.element, &s.x0, &opts).unwrap_or_else(|f| panic!("({theta}, {phi}, {psi}): {f}"));
        assert!(r.dual.unwrap() < 1e-9 && r.rest < 1e-12, "{r:?}");
    }
}

#[test]
fn joint_angles_are_recovered_exactly() {
    let s = Setup::oblique(0.9, 0.4, 0.3, shoulder_law(Interpolation::MonotoneCubic));
    let r = s.element.resistance().reference();
    assert!((r[0] - 0.9 * 0.4f64.cos()).abs() < 1e-14 && (r[1] - 0.9 * 0.4f64.sin()).abs() < 1e-14);
    assert!((r[2] - 0.3).abs() < 1e-14);
    let lf = quat_from_axis_angle(&[0.5, -0.2, 0.4], 2.2);
    for &theta in &[0.0, 1e-7, 0.3, 1.4, 2.5, 3.1] {
        for &phi in &[-3.0, -0.8, 0.0, 1.1, 2.8] {
            for &psi in &[-2.9, -0.5, 0.0, 1.7] {
                let x = s.config(lf, theta, phi, psi);
                let want = [theta * phi.cos(), theta * phi.sin(), psi];
                // through the modes and the reference, and directly; ψ is periodic and loses
                // digits towards θ = π as 1/cos²(θ/2)
                for j in [joint(&s, &x), s.element.joint_angles(&x).unwrap()] {
                    let twist = (j[2] - psi + PI).rem_euclid(2.0 * PI) - PI;
                    let ok = (j[0] - want[0]).abs() < 2e-14 * (1.0 + theta)
                        && (j[1] - want[1]).abs() < 2e-14 * (1.0 + theta)
                        && twist.abs() < 2e-14 + 1e-15 / (0.5 * theta).cos().powi(2);
                    assert!(ok, "({theta}, {phi}, {psi}): {j:?} vs {want:?}");
                }
            }
        }
    }
    // the antipode has no swing direction: an error, not a panic
    let x = s.config(lf, PI, 0.3, 0.0);
    assert!(evaluate(&s.element, &x, Order::Hessian).is_err());
}

/// Euler-parameter rates for a spatial angular velocity `ω`: `λ̇ = ½ (0, ω) ⊗ λ`.
fn rate(l: &Quat, w: &Vec3) -> Quat {
    quat_mul(&[0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]], l)
}

/// `σ · ė` for angular velocities `wf`, `wm` of the two nodes.
fn internal_power(s: &Setup, x: &[f64], wf: &Vec3, wm: &Vec3) -> f64 {
    let (e, de, _) = evaluate(&s.element, x, Order::Gradient).unwrap();
    let mut sigma = [0.0; 3];
    s.element.law().unwrap().stress(&e, &[0.0; 3], &mut sigma);
    let lf = [x[0], x[1], x[2], x[3]];
    let lm = [x[4], x[5], x[6], x[7]];
    let xd: Vec<f64> = rate(&lf, wf).iter().chain(&rate(&lm, wm)).copied().collect();
    (0..3).map(|k| sigma[k] * (0..8).map(|j| de[k * 8 + j] * xd[j]).sum::<f64>()).sum()
}

#[test]
fn stresses_are_conjugate_to_the_torque_on_the_moving_member() {
    let s = Setup::oblique(0.5, -0.7, 0.2, shoulder_law(Interpolation::MonotoneCubic));
    let lf = quat_from_axis_angle(&[0.1, 0.3, -0.9], -0.6);
    let mut rng = mollier_core::conformance::Rng::new(7);
    let mut outside = 0;
    for _ in 0..300 {
        let (theta, phi, psi) = (3.0 * rng.uniform(), PI * rng.symmetric(), 2.4 * rng.symmetric());
        let x = s.config(lf, theta, phi, psi);
        let (m, torque) = s.element.moment(&x).unwrap();
        outside += usize::from(m.swing > 0.0);
        let wf = rng.unit_vector().map(|v| 0.3 * v);
        let wm = rng.unit_vector();
        // the joint's power on the two members, τ·ω_m − τ·ω_f, is what the element absorbs, negated
        let joint_power = dot(&torque, &wm) - dot(&torque, &wf);
        let p = internal_power(&s, &x, &wf, &wm);
        let scale = 1.0 + m.swing.abs() + m.torsion.abs();
        assert!((p + joint_power).abs() < 1e-9 * scale, "({theta}, {phi}, {psi}): {p} vs {}", -joint_power);
    }
    assert!(outside > 100, "{outside}");
}

/// The long axis `u` and the spherical unit vectors `(ê_θ, ê_φ)` in the fixed joint frame.
fn spherical(theta: f64, phi: f64) -> (Vec3, Vec3, Vec3) {
    let (st, ct) = theta.sin_cos();
    let (sp, cp) = phi.sin_cos();
    ([st * cp, st * sp, ct], [ct * cp, ct * sp, -st], [-sp, cp, 0.0])
}

#[test]
fn swing_moment_is_perpendicular_to_the_long_axis_with_engins_magnitude() {
    let law = shoulder_law(Interpolation::MonotoneCubic);
    let mut beyond = 0;
    for k in 0..48 {
        let phi = 2.0 * PI * k as f64 / 48.0;
        let ramp = law.swing().ramp(phi);
        for &theta in &[0.4, 1.3, 1.6, 1.9, 2.4, 3.0] {
            for &psi in &[-1.0, 0.156, 0.9] {
                let (p, q) = (theta * phi.cos(), theta * phi.sin());
                let m = law.moment_at(p, q, psi);
                let (u, _, _) = spherical(theta, phi);
                // torsion about the long axis, swing moment perpendicular to it, of magnitude M
                let axial = dot(&m.torque, &u);
                assert!((axial - m.torsion).abs() < 1e-12 * (1.0 + axial.abs()));
                let swing: Vec3 = std::array::from_fn(|i| m.torque[i] - axial * u[i]);
                let swing = dot(&swing, &swing).sqrt();
                assert!((swing - m.swing).abs() < 1e-12 * (1.0 + m.swing));
                // beyond the ramp, M is Engin's expansion itself (eq. 3.3 by hand)
                if theta > ramp.sinus + ramp.width {
                    let engin = common::engin_pq(p, q);
                    assert!((swing - engin).abs() < 1e-12 * engin, "({phi}, {theta}): {swing} vs {engin}");
                    beyond += 1;
                }
            }
        }
    }
    assert!(beyond > 48 * 3 * 2, "{beyond}");
}

#[test]
fn the_moment_restores_everywhere_outside_the_sinus() {
    let law = shoulder_law(Interpolation::MonotoneCubic);
    let swing = law.swing();
    let (mut raising, mut near) = (0, 0);
    for k in 0..180 {
        let phi = 2.0 * PI * k as f64 / 180.0;
        let g = swing.ramp(phi);
        let dtb = swing.sinus().theta_and_slope(phi).1;
        let on_ramp = [0.001, 0.01, 0.03, 0.05].map(|t| g.sinus + t * g.width);
        let beyond = (1..=40).map(|j| g.sinus + (3.1 - g.sinus) * (j as f64 / 40.0).powi(2));
        for theta in on_ramp.into_iter().chain(beyond) {
            let m = law.moment_at(theta * phi.cos(), theta * phi.sin(), 0.156);
            let mg = swing.magnitude(phi, theta);
            assert!(m.swing > 0.0 && mg.d_theta > 0.0, "φ = {phi}, θ = {theta}");
            let (u, et, ep) = spherical(theta, phi);
            let grad = (mg.d_theta, mg.d_phi / theta.sin());
            let grad_norm = grad.0.hypot(grad.1);
            // the outward normal of the sinus curve θ = θ_b(φ) on the sphere
            let normal = unit_tangent(1.0, -dtb / theta.sin(), &et, &ep);
            let t = (theta - g.sinus) / g.width;
            let swing_torque: Vec3 = std::array::from_fn(|c| m.torque[c] - m.torsion * u[c]);
            for i in 0..72 {
                // turn the arm towards the tangent d, without twist: ω = u × d
                let a = 2.0 * PI * i as f64 / 72.0;
                let d = unit_tangent(a.cos(), a.sin(), &et, &ep);
                let work = dot(&swing_torque, &cross(&u, &d));
                // the work rate is −M dM/ds / |∇M|: negative exactly when the motion raises M
                let rise = grad.0 * a.cos() + grad.1 * a.sin();
                assert!((work + m.swing * rise / grad_norm).abs() < 1e-11 * (1.0 + m.swing), "φ = {phi}, θ = {theta}");
                if rise > 0.0 {
                    assert!(work < 0.0);
                    raising += 1;
                }
                // straight out along the ray, and (near the sinus) away from it within 80° of its
                // normal, the moment resists
                if i == 0 {
                    assert!(work < 0.0, "radial, φ = {phi}, θ = {theta}");
                }
                if t <= 0.05 && dot(&d, &normal) >= 80f64.to_radians().cos() {
                    assert!(work < 0.0, "near the sinus, φ = {phi}, θ = {theta}, direction {a}");
                    near += 1;
                }
            }
        }
    }
    assert!(raising > 250_000 && near > 20_000, "{raising} {near}");
}

fn unit_tangent(a: f64, b: f64, et: &Vec3, ep: &Vec3) -> Vec3 {
    let n = a.hypot(b);
    std::array::from_fn(|c| (a * et[c] + b * ep[c]) / n)
}

#[test]
fn zero_inside_the_sinus_and_continuous_across_it() {
    let law = shoulder_law(Interpolation::MonotoneCubic);
    let swing = law.swing();
    let f = swing.expansion();
    for k in 0..360 {
        let phi = 2.0 * PI * k as f64 / 360.0;
        let tb = swing.sinus().theta(phi);
        for j in 0..20 {
            let theta = tb * j as f64 / 20.0;
            let m = law.moment_at(theta * phi.cos(), theta * phi.sin(), 0.156);
            // T(0.156) = 0: no moment at all inside the sinus
            assert_eq!(m.torque, [0.0; 3], "φ = {phi}, θ = {theta}");
            assert_eq!(m.stress, [0.0; 3]);
        }
        // approaching the boundary from outside, the moment vanishes like the square of the
        // distance: M = F S(t) ≤ 3 F t², t = d / W
        let g = swing.ramp(phi);
        let mut previous = f64::INFINITY;
        for n in 2..9 {
            let d = 10f64.powi(-n);
            let m = law.moment_at((tb + d) * phi.cos(), (tb + d) * phi.sin(), 0.156);
            let bound = 3.0 * f.value(phi, tb + d) * (d / g.width).powi(2);
            assert!(m.swing > 0.0 && m.swing < previous && m.swing <= bound, "φ = {phi}, d = {d}: {}", m.swing);
            let norm = m.torque.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!((norm - m.swing).abs() < 1e-12);
            previous = m.swing;
        }
        // and the magnitude is continuous with a continuous gradient through the end of the ramp
        let end = g.sinus + g.width;
        let (a, b) = (swing.magnitude(phi, end - 1e-9), swing.magnitude(phi, end + 1e-9));
        assert!((a.value - b.value).abs() < 1e-6 && (a.d_theta - b.d_theta).abs() < 1e-4 * b.d_theta);
    }
}

#[test]
fn torsion_restores_about_its_rest_angle() {
    let law = shoulder_law(Interpolation::MonotoneCubic);
    // T vanishes at ψ = 0.156 (App. G): twisting away from there meets a moment against the twist
    assert_eq!(law.moment_at(0.0, 0.0, 0.156).torsion, 0.0);
    for k in 0..200 {
        let psi = -2.4 + 0.018 * k as f64;
        let t = law.moment_at(0.0, 0.0, psi).torsion;
        let away = psi - 0.156;
        // inside the table's flat 2.7 N m stretch the moment still points back to the rest angle
        assert!(t * away <= 0.0, "ψ = {psi}: {t}");
        if away.abs() > 0.01 {
            assert!(t * away < 0.0);
        }
    }
}

#[test]
fn a_model_drives_the_joint_through_its_modes_and_carries_the_law() {
    use mollier_core::{Data, ModelBuilder, solve_positions};
    let s = Setup::oblique(0.3, 0.8, 0.0, shoulder_law(Interpolation::MonotoneCubic));
    let mut b = ModelBuilder::new();
    let f = b.orientation_node("thorax", s.lf0).unwrap();
    let m = b.orientation_node("humerus", s.lm0).unwrap();
    b.fix_node(f);
    let element = mollier_engin_joint::BallSocketResistance::new(f, m, s.frames, shoulder_law(Interpolation::Linear));
    let el = b.add_element("shoulder", Box::new(element)).unwrap();
    for mode in mollier_engin_joint::MODES {
        b.input_mode(el, mode);
    }
    let model = b.build().unwrap();
    let mut data = Data::new(&model);
    let reference = s.element.resistance().reference();
    // swing the arm 1.2 rad further out and twist it 3.6 rad, through the twist's ±π
    let steps = 12;
    for i in 1..=steps {
        let a = i as f64 / steps as f64;
        let q = [0.9 * a, 0.8 * a, 3.6 * a];
        solve_positions(&model, &mut data, &q).unwrap();
        let local: Vec<f64> = model.element_coords(el).iter().map(|&c| data.x()[c]).collect();
        let j = s.element.joint_angles(&local).unwrap();
        let want = [reference[0] + q[0], reference[1] + q[1], reference[2] + q[2]];
        let twist = (j[2] - want[2] + PI).rem_euclid(2.0 * PI) - PI;
        assert!((j[0] - want[0]).abs() < 1e-10 && (j[1] - want[1]).abs() < 1e-10 && twist.abs() < 1e-10, "step {i}");
    }
    // the kernel applies the element's own law, measured from the element's reference: check
    // the torque its stresses exert against one built independently of the law's code, from
    // Engin's expansion (report eq. 3.3, in p = θ cos φ, q = θ sin φ) beyond the ramp and the
    // torsion table (App. G) by linear interpolation, at a posture far out with a small twist
    let law = model.law(el).unwrap();
    let far = [1.6, 1.3, 0.5];
    let mut data = Data::new(&model);
    for i in 1..=steps {
        let a = i as f64 / steps as f64;
        solve_positions(&model, &mut data, &far.map(|v| v * a)).unwrap();
    }
    let local: Vec<f64> = model.element_coords(el).iter().map(|&c| data.x()[c]).collect();
    let [p, q, psi] = s.element.joint_angles(&local).unwrap();
    let (theta, phi) = (p.hypot(q), q.atan2(p));
    let ramp = shoulder_law(Interpolation::Linear).swing().ramp(phi);
    assert!(theta > ramp.sinus + ramp.width, "beyond the ramp: θ = {theta}, {ramp:?}");
    let engin = common::engin_pq(p, q);
    let (a, m) = (mollier_engin_joint::shoulder::TORSION_ANGLES, mollier_engin_joint::shoulder::TORSION_MOMENTS);
    let k = a.iter().rposition(|&x| x <= psi).unwrap();
    let torsion = m[k] + (m[k + 1] - m[k]) * (psi - a[k]) / (a[k + 1] - a[k]);
    // the torque on the moving member from the stresses: τ·ω = −σ·(De ẋ) for ω about each axis
    let mut sigma = [0.0; 3];
    law.stress(&far, &[0.0; 3], &mut sigma);
    let (_, de, _) = evaluate(model.element(el), &local, Order::Gradient).unwrap();
    let lm = [local[4], local[5], local[6], local[7]];
    let torque: Vec3 = std::array::from_fn(|axis| {
        let mut w = [0.0; 3];
        w[axis] = 1.0;
        let xd: Vec<f64> = [0.0; 4].iter().chain(&rate(&lm, &w)).copied().collect();
        -(0..3).map(|k| sigma[k] * (0..8).map(|j| de[k * 8 + j] * xd[j]).sum::<f64>()).sum::<f64>()
    });
    // the long axis: given in the global frame of the initial configuration, carried along
    let z = s.frames.moving_z;
    let z_member = rotate(&quat_conjugate(&s.lm0), &z.map(|v| v / dot(&z, &z).sqrt()));
    let u = rotate(&lm, &z_member);
    let axial = dot(&torque, &u);
    let swing: Vec3 = std::array::from_fn(|i| torque[i] - axial * u[i]);
    let swing = dot(&swing, &swing).sqrt();
    assert!((swing - engin).abs() < 1e-9 * engin, "swing {swing} N m vs Engin's {engin}");
    assert!((axial - torsion).abs() < 1e-9 * (1.0 + torsion.abs()), "torsion {axial} N m vs the table's {torsion}");
}
