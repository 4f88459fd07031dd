use super::*;
use mollier_core::conformance::{Options, check_generic, evaluate};
use mollier_core::element::Order;
use mollier_core::geometry::quat_from_axis_angle;

const AXES: Vec3 = [0.147, 0.2079, 0.0944];
const CENTRE: Vec3 = [0.0, -0.1486, 0.0591];

/// DAS3's thorax ellipsoid on a rotated, translated body, and a point at `factor` times a surface
/// point from the centre.
fn element(factor: f64) -> (SoftContact, Vec<f64>) {
    let lam = quat_from_axis_angle(&[0.3, 1.0, -0.2], 0.8);
    let origin = [0.05, 0.3, -0.1];
    let shape = ShapeFrame::from_matrix(&frame::body_fixed_xyz(&[0.2, -0.4, 0.3]), CENTRE);
    let dir = [0.6f64, -0.5, 0.62];
    let f: f64 = (0..3).map(|i| (dir[i] / AXES[i]).powi(2)).sum();
    let local = dir.map(|v| v / f.sqrt() * factor);
    let xp = shape.global(&lam, &origin, &local);
    let mut x0 = xp.to_vec();
    x0.extend_from_slice(&origin);
    x0.extend_from_slice(&lam);
    let body = Frame { position: NodeId::new(1), orientation: NodeId::new(2) };
    let mut s = SoftContact::new(NodeId::new(0), body, shape, AXES, 2.0e4, DEFAULT_EPSILON);
    s.initialize(&x0).unwrap();
    (s, x0)
}

#[test]
fn conformance() {
    // the level is zero on the surface (the harness's rest configuration); its perturbations
    // reach inside and outside
    for amplitude in [0.05, 0.2] {
        let (s, x0) = element(1.0);
        let opts = Options { amplitude, samples: 16, ..Options::default() };
        let r = check_generic(&s, &x0, &opts).unwrap_or_else(|f| panic!("amplitude {amplitude}: {f}"));
        assert!(r.dual.unwrap() < 1e-9, "{r:?}");
    }
}

#[test]
fn the_force_is_the_papers() {
    // eqs. 22-25 written out in the ellipsoid's frame: F_i = −k (p_i)(Σ a²)/a_i² F⁻
    let k = 2.0e4;
    let s2: f64 = AXES.iter().map(|a| a * a).sum();
    for factor in [0.9, 0.99, 1.0, 1.01, 1.2] {
        let (s, x) = element(factor);
        let p = s.local_point(&x);
        let f: f64 = (0..3).map(|i| (p[i] / AXES[i]).powi(2)).sum::<f64>() - 1.0;
        let fm = 0.5 * (f - (f * f + 1e-4).sqrt());
        let want_local = [0, 1, 2].map(|i| -k * p[i] * s2 / (AXES[i] * AXES[i]) * fm);
        let want = s.frame.global_vector(&quat_at(&x, frame::POINT_BODY.orientation), &want_local);
        let got = s.force(&x);
        // the generalized force on the point from the mode: −σ ∂e/∂x_p
        let (e, g, _) = evaluate(&s, &x, Order::Gradient).unwrap();
        let sigma = s.law.eval(e[0]).0;
        for i in 0..3 {
            assert!((got[i] - want[i]).abs() < 1e-9 * (1.0 + want[i].abs()), "{factor}: {got:?} vs {want:?}");
            assert!((-sigma * g[i] - want[i]).abs() < 1e-9 * (1.0 + want[i].abs()));
        }
        // it pushes out: along the outward normal inside, almost nothing outside
        let outward: f64 = (0..3).map(|i| got[i] * g[i]).sum();
        if factor < 1.0 {
            assert!(outward > 0.0);
        }
        if factor > 1.1 {
            assert!(got.iter().map(|v| v * v).sum::<f64>().sqrt() < 1.0, "{got:?}");
        }
    }
}

#[test]
fn the_law_is_the_potentials_derivative() {
    let law = ContactLaw { stiffness: 2.0e4, axes_squared: 0.07, epsilon: 0.01 };
    for f in [-0.3, -0.02, 0.0, 0.005, 0.4] {
        let h = 1e-6;
        let e = |v: f64| law.energy(&[v]).unwrap();
        let num = (e(f + h) - e(f - h)) / (2.0 * h);
        let (sigma, ds) = law.eval(f);
        assert!((num - sigma).abs() < 1e-6 * (1.0 + sigma.abs()), "{f}: {num} vs {sigma}");
        let num = (law.eval(f + h).0 - law.eval(f - h).0) / (2.0 * h);
        assert!((num - ds).abs() < 1e-6 * (1.0 + ds.abs()));
    }
    assert_eq!(law.energy(&[0.0]), Some(0.0));
}

/// The law's curvature against central differences of its tangent, inside, across and outside
/// the transition.
#[test]
fn the_laws_curvature_is_its_tangents_derivative() {
    let law = ContactLaw { stiffness: 2.0e4, axes_squared: 0.07, epsilon: 0.01 };
    for f in [-0.3, -0.02, -0.004, 0.0, 0.005, 0.4] {
        let err = mollier_core::law::stress_hessian_error(&law, &[f], &[0.3], &[-1.7], 1e-6);
        assert!(err.is_some_and(|e| e < 1e-6), "at F = {f}: off by {err:?}");
    }
}
