//! Mechanisms with closed-form solutions: positions, first and second derivatives.

use mollier_core::geometry::{mat_mul, quat_from_axis_angle, rotation};
use mollier_core::{Data, solve_positions, transfer};
use mollier_tests::{FourBar, Rssr, SliderCrank, spherical_joint};
use num_dual::second_derivative;

/// θ = atan2(y, x) of (C − D) with its gradient and Hessian in (x, y).
pub(crate) fn angle_and_derivatives(x: f64, y: f64) -> (f64, [f64; 2], [[f64; 2]; 2]) {
    let r2 = x * x + y * y;
    let r4 = r2 * r2;
    (
        y.atan2(x),
        [-y / r2, x / r2],
        [[2.0 * x * y / r4, (y * y - x * x) / r4], [(y * y - x * x) / r4, -2.0 * x * y / r4]],
    )
}

/// `a` plus the whole turns that bring it nearest `reference`.
pub(crate) fn unwrap_to(a: f64, reference: f64) -> f64 {
    a + std::f64::consts::TAU * ((reference - a) / std::f64::consts::TAU).round()
}

#[test]
fn four_bar_follows_freudenstein_over_a_full_crank_turn() {
    let fb = FourBar::crank_rocker();
    let (model, c, d) = fb.model();
    let mut data = Data::new(&model);
    let (cx, cy) = (model.coord_id(c, 0).index(), model.coord_id(c, 1).index());
    let dpos = data.position(&model, d);
    let mut worst = [0.0f64; 3];
    for k in 0..=72 {
        let q = k as f64 * std::f64::consts::TAU / 72.0;
        solve_positions(&model, &mut data, &[q]).unwrap();
        transfer::second_order(&model, &mut data).unwrap();
        let t2 = fb.theta0 + q;
        let (t4, dt4, ddt4) = fb.theta4_derivatives(t2);
        let p = data.position(&model, c);
        let (a, g, h) = angle_and_derivatives(p[0] - dpos[0], p[1] - dpos[1]);
        // first and second derivatives of C from the transfer functions
        let dc = [data.df_x()[(cx, 0)], data.df_x()[(cy, 0)]];
        let ddc = [data.d2f_x()[(cx, 0)], data.d2f_x()[(cy, 0)]];
        let d1 = g[0] * dc[0] + g[1] * dc[1];
        let d2 = g[0] * ddc[0]
            + g[1] * ddc[1]
            + (0..2).map(|i| (0..2).map(|j| dc[i] * h[i][j] * dc[j]).sum::<f64>()).sum::<f64>();
        worst[0] = worst[0].max((unwrap_to(a, t4) - t4).abs());
        worst[1] = worst[1].max((d1 - dt4).abs());
        worst[2] = worst[2].max((d2 - ddt4).abs());
    }
    assert!(worst.iter().all(|w| *w < 1e-10), "angle, first, second derivative errors: {worst:?}");
}

#[test]
fn slider_crank_position_velocity_acceleration() {
    let sc = SliderCrank { r: 0.15, l: 0.5, theta0: 0.0 };
    let (model, slider) = sc.model(false);
    let mut data = Data::new(&model);
    let sx = model.coord_id(slider, 0).index();
    for k in 0..=36 {
        let theta = k as f64 * std::f64::consts::TAU / 36.0;
        let (omega, alpha) = (2.5, -1.3);
        solve_positions(&model, &mut data, &[theta]).unwrap();
        transfer::accelerations(&model, &mut data, &[omega], &[alpha]).unwrap();
        let (x, dx, ddx) = second_derivative(|t| sc.x(t), theta);
        assert!((data.x()[sx] - x).abs() < 1e-12, "position at {theta}");
        assert!((data.xd()[sx] - dx * omega).abs() < 1e-11, "velocity at {theta}");
        let want = ddx * omega * omega + dx * alpha;
        assert!((data.xdd()[sx] - want).abs() < 1e-10, "acceleration at {theta}: {} vs {want}", data.xdd()[sx]);
    }
}

/// Kinetostatics takes the coordinates' accelerations without the modes' (no free element's
/// Hessian): they must be those of the full accelerations, bit for bit, moving and at rest.
#[test]
fn coordinate_accelerations_are_those_of_the_full_accelerations() {
    let sc = SliderCrank { r: 0.15, l: 0.5, theta0: 0.0 };
    let (model, _) = sc.model(false);
    let (mut a, mut b) = (Data::new(&model), Data::new(&model));
    for (theta, omega, alpha) in [(0.3, 2.5, -1.3), (2.0, -0.7, 4.0), (1.0, 0.0, 3.0), (4.0, 0.0, 0.0)] {
        solve_positions(&model, &mut a, &[theta]).unwrap();
        solve_positions(&model, &mut b, &[theta]).unwrap();
        transfer::accelerations(&model, &mut a, &[omega], &[alpha]).unwrap();
        transfer::coordinate_accelerations(&model, &mut b, &[omega], &[alpha]).unwrap();
        assert_eq!(a.xd(), b.xd(), "velocities at {theta}");
        assert_eq!(a.ed(), b.ed(), "mode rates at {theta}");
        assert_eq!(a.xdd(), b.xdd(), "accelerations at {theta}, {omega}, {alpha}");
        assert_eq!(b.qdd(), &[alpha]);
    }
}

/// On a tree, the rates of a free element on attached points (a muscle between two links) come
/// from its gradient on its own coordinates and those points' rates: the length's rate along
/// `q + t q̇` by central differences, and the general path's (solves of `D_cc`, gradients
/// carried through the attachments).
#[test]
fn a_free_elements_rate_on_attached_points_is_its_lengths_rate() {
    use mollier_core::ModelBuilder;
    use mollier_hinge::Hinge;
    use mollier_tests::IDENTITY;
    use mollier_truss::Truss;
    let mut b = ModelBuilder::new();
    let (mut p, mut l) = (b.position_node("P0", [0.0; 3]).unwrap(), b.orientation_node("L0", IDENTITY).unwrap());
    b.fix_node(p);
    b.fix_node(l);
    let mut points = Vec::new();
    for (i, axis) in [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]].into_iter().enumerate() {
        let li = b.orientation_node(format!("L{}", i + 1), IDENTITY).unwrap();
        let h = b.add_element(format!("joint{i}"), Box::new(Hinge::new(l, li, axis, None))).unwrap();
        b.input_mode(h, "rotation");
        let pi = b.position_node(format!("P{}", i + 1), [0.3 * (i + 1) as f64, 0.05 * i as f64, 0.0]).unwrap();
        b.attach(pi, p, li);
        points.push(pi);
        (p, l) = (pi, li);
    }
    let muscle = b.add_element("muscle", Box::new(Truss::new(points[0], points[2]))).unwrap();
    b.free_element(muscle);
    let model = b.build().unwrap();
    let m = model.mode_by_name(muscle, "elongation").unwrap().index();
    let length = |q: &[f64]| {
        let mut d = Data::new(&model);
        solve_positions(&model, &mut d, q).unwrap();
        d.e()[m]
    };
    let (mut tree, mut general) = (Data::new(&model), Data::new(&model));
    general.set_tree_path(false);
    for (q, qd) in [([0.3, -0.4, 0.8], [1.5, -0.7, 2.0]), ([-1.1, 0.9, 0.2], [0.4, 2.5, -1.2])] {
        for d in [&mut tree, &mut general] {
            solve_positions(&model, d, &q).unwrap();
            transfer::coordinate_accelerations(&model, d, &qd, &[0.0; 3]).unwrap();
        }
        let h = 1e-5;
        let along = |t: f64| -> Vec<f64> { q.iter().zip(&qd).map(|(a, b)| a + t * b).collect() };
        let want = (length(&along(h)) - length(&along(-h))) / (2.0 * h);
        assert!((tree.ed()[m] - want).abs() < 1e-8, "{q:?}: {} against {want}", tree.ed()[m]);
        assert!((tree.ed()[m] - general.ed()[m]).abs() < 1e-13, "{q:?}: {} against {}", tree.ed()[m], general.ed()[m]);
    }
}

#[test]
fn three_orthogonal_hinges_compose_as_a_spherical_joint() {
    let (model, body) = spherical_joint();
    let mut data = Data::new(&model);
    let mut rng = mollier_core::conformance::Rng::new(7);
    for _ in 0..20 {
        let q = [3.0 * rng.symmetric(), 1.4 * rng.symmetric(), 3.0 * rng.symmetric()];
        solve_positions(&model, &mut data, &q).unwrap();
        let r = rotation(&data.orientation(&model, body));
        let rz = rotation(&quat_from_axis_angle(&[0.0, 0.0, 1.0], q[0]));
        let ry = rotation(&quat_from_axis_angle(&[0.0, 1.0, 0.0], q[1]));
        let rx = rotation(&quat_from_axis_angle(&[1.0, 0.0, 0.0], q[2]));
        let want = mat_mul(&mat_mul(&rz, &ry), &rx);
        for i in 0..3 {
            for j in 0..3 {
                assert!((r[i][j] - want[i][j]).abs() < 1e-12, "{q:?}: R[{i}][{j}] = {} vs {}", r[i][j], want[i][j]);
            }
        }
    }
}

#[test]
fn spatial_rssr_loop_closes_with_the_closed_form_output() {
    let m = Rssr::example();
    let (model, c, hinge) = m.model();
    let mut data = Data::new(&model);
    let rot = model.mode_by_name(hinge, "rotation").unwrap();
    let phi0 = m.phi(m.theta0);
    let dpos = m.dpos;
    for k in 0..=72 {
        let q = k as f64 * std::f64::consts::TAU / 72.0;
        solve_positions(&model, &mut data, &[q]).unwrap();
        transfer::first_order(&model, &mut data).unwrap();
        let (phi, dphi, _) = second_derivative(|t| m.phi(t), m.theta0 + q);
        let p = data.position(&model, c);
        let got = (p[2] - dpos[2]).atan2(p[1] - dpos[1]);
        assert!((unwrap_to(got, phi) - phi).abs() < 1e-10, "output angle at q = {q}");
        // the free rocker hinge measures φ − φ0, and its transfer function is dφ/dθ
        assert!((data.mode_value(rot) - unwrap_to(phi - phi0, data.mode_value(rot))).abs() < 1e-10);
        assert!((data.df_e()[(rot.index(), 0)] - dphi).abs() < 1e-10, "dφ/dθ at q = {q}");
    }
}

#[test]
fn a_cloned_workspace_solves_on_from_its_configuration() {
    let fb = FourBar::crank_rocker();
    let (model, c, _) = fb.model();
    let mut data = Data::new(&model);
    solve_positions(&model, &mut data, &[2.0]).unwrap();
    let mut copy = data.clone();
    assert_eq!(copy.q(), data.q());
    assert_eq!(copy.x(), data.x());
    // the copy solves on from where the original was, to the same configuration
    solve_positions(&model, &mut copy, &[2.1]).unwrap();
    solve_positions(&model, &mut data, &[2.1]).unwrap();
    let (a, b) = (copy.position(&model, c), data.position(&model, c));
    assert!((0..3).all(|i| (a[i] - b[i]).abs() < 1e-14), "{a:?} vs {b:?}");
    // and its reference lengths are the initial ones
    let coupler = model.element_by_name("coupler").unwrap();
    let m = model.mode_by_name(coupler, "elongation").unwrap();
    let l0 = model.mode_reference(m).unwrap();
    assert!((l0 - fb.b).abs() < 1e-12, "{l0} vs {}", fb.b);
}
