use super::*;
use mollier_core::NodeId;
use mollier_core::conformance::{Options, check_generic, evaluate};
use mollier_core::element::{Drawing, ElementState, Order};
use mollier_core::geometry::{Quat, dot, norm, quat_at, quat_from_axis_angle, sub, vec3_at};
use mollier_surface::frame::body_fixed_xyz;

const BODY: Frame = Frame { position: NodeId::new(2), orientation: NodeId::new(3) };

/// p, q and one body (origin, orientation); the shape frame is rotated and offset in the body.
pub(crate) fn single(shape: Shape, p_loc: Vec3, q_loc: Vec3) -> (CurvedTruss, Vec<f64>, ShapeFrame) {
    let fr = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.3, -0.2, 0.9]), [0.01, -0.02, 0.005]);
    let lam = quat_from_axis_angle(&[0.4, -0.3, 0.8], 0.7);
    let o = [0.1, 0.2, -0.1];
    let (p, q) = (fr.global(&lam, &o, &p_loc), fr.global(&lam, &o, &q_loc));
    let mut x0: Vec<f64> = p.iter().chain(&q).chain(&o).copied().collect();
    x0.extend_from_slice(&lam);
    let ob = Obstacle { shape, frame: fr, body: BODY, segment: 0 };
    let mut el = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob]).unwrap();
    el.initialize(&x0).unwrap();
    (el, x0, fr)
}

fn conform(el: &CurvedTruss, x0: &[f64], amplitude: f64) {
    conform_n(el, x0, amplitude, Options::default().samples);
}

fn conform_n(el: &CurvedTruss, x0: &[f64], amplitude: f64, samples: usize) {
    let opts = Options { amplitude, samples, ..Options::default() };
    let r = check_generic(el, x0, &opts).unwrap_or_else(|f| panic!("{f}"));
    assert!(r.dual.unwrap() < 1e-9 && r.gradient < 1e-6 && r.hessian < 1e-5, "{r:?}");
}

#[test]
fn conformance_sphere_cylinder_ellipsoid() {
    let sphere = Shape::Sphere { radius: 0.03 };
    // wrapped, and clear of the sphere
    conform(
        &single(sphere, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]).0,
        &single(sphere, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]).1,
        0.05,
    );
    let (el, x0, _) = single(sphere, [0.08, 0.05, 0.0], [-0.07, 0.06, 0.01]);
    assert!(el.path(&x0).unwrap().0.len() == 1);
    conform(&el, &x0, 0.05);
    for side in [Side::Either, Side::Toward([0.0, 1.0]), Side::Toward([0.0, -1.0])] {
        let (el, x0, _) =
            single(Shape::Cylinder { radius: 0.02, side, length: None }, [0.06, 0.01, -0.03], [-0.05, 0.015, 0.04]);
        conform(&el, &x0, 0.05);
    }
    let thorax = Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] };
    let (el, x0, _) = single(thorax, [0.16, 0.1, 0.05], [-0.1, 0.12, 0.1]);
    assert!(matches!(el.path(&x0).unwrap().0[1], Piece::Surface { .. }));
    conform(&el, &x0, 0.03);
}

#[test]
fn via_points_and_several_obstacles() {
    // p → sphere → via → cylinder, ellipsoid → q, each obstacle on its own body
    let bodies = [(4, 5), (6, 7), (8, 9)];
    let lams = [
        quat_from_axis_angle(&[0.4, -0.3, 0.8], 0.7),
        quat_from_axis_angle(&[-0.1, 0.9, 0.2], -0.4),
        quat_from_axis_angle(&[0.7, 0.2, -0.5], 1.1),
    ];
    let origins = [[0.0, 0.0, 0.0], [0.3, 0.0, 0.0], [0.6, 0.0, 0.0]];
    let frames = [
        ShapeFrame::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.0; 3]),
        ShapeFrame::from_matrix(&body_fixed_xyz(&[0.2, 0.3, -0.1]), [0.0; 3]),
        ShapeFrame::from_matrix(&body_fixed_xyz(&[-0.2, 0.1, 0.4]), [0.0; 3]),
    ];
    // build the global geometry in a common frame, then express the shapes in their bodies
    let shapes = [
        Shape::Sphere { radius: 0.04 },
        Shape::Cylinder { radius: 0.03, side: Side::Either, length: None },
        Shape::Ellipsoid { semi_axes: [0.05, 0.04, 0.06] },
    ];
    let mut x0 = Vec::new();
    let pts = [[-0.1, 0.01, 0.0], [0.15, 0.005, 0.01], [0.75, 0.01, -0.01]];
    for p in &pts {
        x0.extend_from_slice(p);
    }
    let mut obs = Vec::new();
    for k in 0..3 {
        x0.extend_from_slice(&origins[k]);
        x0.extend_from_slice(&lams[k]);
        obs.push(Obstacle {
            shape: shapes[k],
            frame: frames[k],
            body: Frame { position: NodeId::new(bodies[k].0), orientation: NodeId::new(bodies[k].1) },
            segment: if k == 0 { 0 } else { 1 },
        });
    }
    // points: p (0), q (1), via (3: node index 2 is q? use explicit ids)
    let ids = [NodeId::new(0), NodeId::new(3), NodeId::new(1)];
    // layout order is p, via, q: reorder x0 accordingly
    let mut xs = Vec::new();
    xs.extend_from_slice(&pts[0]);
    xs.extend_from_slice(&pts[1]);
    xs.extend_from_slice(&pts[2]);
    xs.extend_from_slice(&x0[9..]);
    let mut el = CurvedTruss::new(&ids, &obs).unwrap();
    el.initialize(&xs).unwrap();
    let (pieces, _) = el.path(&xs).unwrap();
    let surfaces = pieces.iter().filter(|p| matches!(p, Piece::Surface { .. })).count();
    assert_eq!(surfaces, 3, "{pieces:?}");
    // 30 local coordinates: few samples keep the dual-number check quick
    conform_n(&el, &xs, 0.02, 2);
}

#[test]
fn two_spheres_in_one_segment_match_the_planar_construction() {
    // two equal spheres of radius r at (0, 0, 0) and (D, 0, 0) on one body; p and q in the
    // plane z = 0 slightly above the centres: the path goes over both tops, along the common
    // tangent y = r
    let (r, dd) = (0.03, 0.1);
    let body = Frame { position: NodeId::new(2), orientation: NodeId::new(3) };
    let obs = [
        Obstacle { shape: Shape::Sphere { radius: r }, frame: ShapeFrame::default(), body, segment: 0 },
        Obstacle {
            shape: Shape::Sphere { radius: r },
            frame: ShapeFrame::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [dd, 0.0, 0.0]),
            body,
            segment: 0,
        },
    ];
    let p = [-0.08, 0.02, 0.0];
    let q = [dd + 0.09, 0.01, 0.0];
    let mut x0: Vec<f64> = p.iter().chain(&q).copied().collect();
    x0.extend_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
    let mut el = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &obs).unwrap();
    el.initialize(&x0).unwrap();
    // planar construction: a point at polar angle β and distance ρ from a circle's centre
    // has tangent points at β ± acos(r/ρ); the upper ones lead to the tops (angle π/2)
    let polar = |pt: &[f64; 3], cx: f64| {
        let (dx, dy) = (pt[0] - cx, pt[1]);
        let rho = dx.hypot(dy);
        (dy.atan2(dx), (r / rho).acos(), (rho * rho - r * r).sqrt())
    };
    let half_pi = std::f64::consts::FRAC_PI_2;
    let (b1, a1, h1) = polar(&p, 0.0);
    let (b2, a2, h2) = polar(&q, dd);
    let arc1 = (b1 - a1) - half_pi;
    let arc2 = half_pi - (b2 + a2);
    assert!(arc1 > 0.0 && arc2 > 0.0);
    let want = h1 + r * arc1 + dd + r * arc2 + h2;
    let (pieces, len) = el.path(&x0).unwrap();
    assert!((len - want).abs() < 1e-12, "{len} vs {want}: {pieces:?}");
    conform(&el, &x0, 0.02);
}

#[test]
fn element_sphere_length_matches_the_span_and_is_frame_invariant() {
    let r = 0.03;
    let (el, x0, fr) = single(Shape::Sphere { radius: r }, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]);
    // the closed form of a path over a sphere, in the plane of p, q and the centre: two
    // tangents √(|p|² − r²), √(|q|² − r²) and the arc r (γ − acos(r/|p|) − acos(r/|q|)),
    // γ the angle between p and q seen from the centre
    let (p, q): (Vec3, Vec3) = ([0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]);
    let (np, nq) = (norm(&p), norm(&q));
    let gamma = (dot(&p, &q) / (np * nq)).acos();
    let (ap, aq) = ((r / np).acos(), (r / nq).acos());
    assert!(gamma > ap + aq, "the path wraps");
    let want = (np * np - r * r).sqrt() + (nq * nq - r * r).sqrt() + r * (gamma - ap - aq);
    assert!((el.reference_length() - want).abs() < 1e-15, "{} vs {want}", el.reference_length());
    // tangency in global coordinates: the straight pieces are normal to the radius at the contacts
    let (pieces, len) = el.path(&x0).unwrap();
    assert!((len - want).abs() < 1e-15);
    let lam: Quat = quat_at(&x0, 9);
    let centre = fr.global(&lam, &vec3_at(&x0, 6), &[0.0; 3]);
    if let [Piece::Straight { from: p, to: t1 }, Piece::Surface { from, to, .. }, Piece::Straight { from: t2, to: q }] =
        pieces.as_slice()
    {
        assert_eq!(t1, from);
        assert_eq!(t2, to);
        assert!(dot(&sub(t1, &centre), &sub(p, t1)).abs() < 1e-17);
        assert!(dot(&sub(t2, &centre), &sub(q, t2)).abs() < 1e-17);
        assert!((norm(&sub(t1, &centre)) - r).abs() < 1e-16);
    } else {
        panic!("{pieces:?}");
    }
    let (e, _, _) = evaluate(&el, &x0, Order::Value).unwrap();
    assert!(e[0] == 0.0);
}

#[test]
fn bad_geometry_is_an_error_not_nan() {
    let (el, mut x, _) = single(Shape::Sphere { radius: 0.03 }, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]);
    // move p to the sphere's centre
    let c = {
        let lam: Quat = quat_at(&x, 9);
        ShapeFrame::from_matrix(&body_fixed_xyz(&[0.3, -0.2, 0.9]), [0.01, -0.02, 0.005]).global(
            &lam,
            &vec3_at(&x, 6),
            &[0.0; 3],
        )
    };
    x[..3].copy_from_slice(&c);
    assert!(matches!(evaluate(&el, &x, Order::Hessian), Err(m) if m.contains("inside")));
    // coincident points of a straight path
    let mut el2 = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[]).unwrap();
    assert!(el2.initialize(&[0.0; 6]).is_err());
    // an obstacle on a segment that does not exist
    let ob = Obstacle { shape: Shape::Sphere { radius: 1.0 }, frame: ShapeFrame::default(), body: BODY, segment: 1 };
    assert!(CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob]).is_err());
}

/// The drawn path is the solved path: its ends are `p` and `q`, its length is the element's
/// (to the chord error of the samples), and its surface samples lie on the obstacle.
#[test]
fn drawing_follows_the_geodesic() {
    let cases = [
        (Shape::Sphere { radius: 0.03 }, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01]),
        (Shape::Cylinder { radius: 0.02, side: Side::Either, length: None }, [0.06, 0.01, -0.03], [-0.05, 0.015, 0.04]),
        (
            Shape::Cylinder { radius: 0.02, side: Side::Toward([0.0, -1.0]), length: None },
            [0.06, 0.01, -0.03],
            [-0.05, 0.015, 0.04],
        ),
        (
            Shape::Cylinder { radius: 0.02, side: Side::Either, length: Some(0.2) },
            [0.06, 0.01, -0.03],
            [-0.05, 0.015, 0.04],
        ),
        (Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] }, [0.16, 0.1, 0.05], [-0.1, 0.12, 0.1]),
    ];
    for (shape, p, q) in cases {
        let (el, x0, fr) = single(shape, p, q);
        let d = el.drawing(&x0);
        assert_eq!((d.lines.len(), d.shapes.len()), (1, 1));
        if let Shape::Cylinder { length: Some(l), .. } = shape {
            assert!((norm(&d.shapes[0].axes[2]) - 0.5 * l).abs() < 1e-15, "a finite cylinder drawn at its length");
        }
        let line = &d.lines[0];
        assert!(line.len() >= 5, "{shape:?}: only {} points", line.len());
        assert!(
            norm(&sub(&line[0], &vec3_at(&x0, 0))) < 1e-12
                && norm(&sub(&line[line.len() - 1], &vec3_at(&x0, 3))) < 1e-12
        );
        let drawn: f64 = line.windows(2).map(|w| norm(&sub(&w[1], &w[0]))).sum();
        let (_, l) = el.path(&x0).unwrap();
        assert!((drawn - l).abs() < 2e-3 * l && drawn <= l + 1e-9, "{shape:?}: drawn {drawn} m, path {l} m");
        let lam = quat_at(&x0, 9);
        let o = vec3_at(&x0, 6);
        for pt in &line[2..line.len() - 2] {
            let s = fr.local(&lam, &o, pt);
            let level = match shape {
                Shape::Sphere { radius } => norm(&s) / radius - 1.0,
                Shape::Cylinder { radius, .. } => s[0].hypot(s[1]) / radius - 1.0,
                Shape::Ellipsoid { semi_axes: a } => {
                    ((s[0] / a[0]).powi(2) + (s[1] / a[1]).powi(2) + (s[2] / a[2]).powi(2)).sqrt() - 1.0
                }
            };
            // straight samples lie outside, surface samples on it
            assert!(level > -1e-6, "{shape:?}: a drawn point inside the obstacle ({level})");
        }
        let on = line.iter().filter(|pt| {
            let s = fr.local(&lam, &o, pt);
            match shape {
                Shape::Sphere { radius } => (norm(&s) - radius).abs() < 1e-6,
                Shape::Cylinder { radius, .. } => (s[0].hypot(s[1]) - radius).abs() < 1e-6,
                Shape::Ellipsoid { semi_axes: a } => {
                    (((s[0] / a[0]).powi(2) + (s[1] / a[1]).powi(2) + (s[2] / a[2]).powi(2)).sqrt() - 1.0).abs() < 1e-6
                }
            }
        });
        assert!(on.count() >= 3, "{shape:?}: the surface part is not sampled on the surface");
    }
}

/// The element over the thorax ellipsoid keeps its per-`Data` state right when the kernel
/// evaluates other configurations in between (central differences, a Newton step, another
/// order): at an unchanged configuration no geodesic shot and the same numbers; after a move of
/// 0.5 mm and back, one shot for the length and gradient, two with the Hessian; every result
/// equals a fresh (cold) evaluation's to the rounding floor.
#[test]
fn ellipsoid_state_across_other_configurations() {
    let thorax = Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] };
    let (el, x0, fr) = single(thorax, [-0.06, 0.12, -0.11], [0.1, -0.1, 0.09]);
    let lam = quat_at(&x0, 9);
    let o = vec3_at(&x0, 6);
    let moved = |dx: f64| {
        let mut x = x0.clone();
        x[..3].copy_from_slice(&fr.global(&lam, &o, &[-0.06 + dx, 0.12, -0.11]));
        x
    };
    let n = x0.len();
    let mut state = ElementState::default();
    let mut eval = |x: &[f64], order: Order| {
        let (mut e, mut de, mut d2e) = ([0.0], vec![0.0; n], vec![0.0; n * n]);
        let d2: &mut [f64] = if order == Order::Hessian { &mut d2e } else { &mut [] };
        let before = crate::geodesic::shots_on_this_thread();
        el.evaluate(x, &mut Evaluation::new(order, n, &mut e, &mut de, d2, &mut state)).unwrap();
        let used = crate::geodesic::shots_on_this_thread() - before;
        // a fresh evaluation, no warm start
        let (fe, fde, fd2e) = evaluate(&el, x, order).unwrap();
        let scale = d2e.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        assert!((e[0] - fe[0]).abs() < 1e-13 * el.reference_length(), "{} vs {}", e[0], fe[0]);
        assert!(de.iter().zip(&fde).all(|(a, b)| (a - b).abs() < 1e-12), "{de:?} vs {fde:?}");
        if order == Order::Hessian {
            assert!(d2e.iter().zip(&fd2e).all(|(a, b)| (a - b).abs() < 1e-10 * scale));
        }
        (used, e[0], de, d2e)
    };
    let (_, e0, de0, h0) = eval(&x0, Order::Hessian);
    let (used, e, de, h) = eval(&x0, Order::Hessian);
    assert!(used == 0 && e == e0 && de == de0 && h == h0, "unchanged: {used} shots");
    // central differences of every coordinate in between, then the same configuration again
    for j in 0..n {
        for sg in [1.0, -1.0] {
            let mut y = x0.clone();
            y[j] += sg * 1e-6;
            eval(&y, Order::Gradient);
        }
    }
    let (used, e, de, _) = eval(&x0, Order::Gradient);
    assert!(
        used <= 1
            && (e - e0).abs() < 1e-13 * el.reference_length()
            && de.iter().zip(&de0).all(|(a, b)| (a - b).abs() < 1e-12)
    );
    let (used, ..) = eval(&x0, Order::Gradient);
    assert_eq!(used, 0, "unchanged after a gradient");
    // moves of 0.5 mm back and forth, as the benchmark
    let xb = moved(0.0005);
    eval(&xb, Order::Gradient);
    for k in 0..4 {
        let x = if k % 2 == 0 { &x0 } else { &xb };
        let (used, ..) = eval(x, Order::Gradient);
        assert_eq!(used, 1, "move {k}, gradient");
        let (used, ..) = eval(x, Order::Hessian);
        assert!(used <= 1, "move {k}: the Hessian after the gradient at the same configuration, {used} shots");
    }
    for k in 0..4 {
        let x = if k % 2 == 0 { &x0 } else { &xb };
        let (used, ..) = eval(x, Order::Hessian);
        assert!(used <= 2, "move {k}, Hessian: {used} shots");
    }
}

/// Along a motion that goes on (the benchmark's: the origin round a circle of radius 8 cm in
/// steps of 0.5 mm), after the first two steps every step takes one geodesic shot for the length
/// and gradient, two with the Hessian.
#[test]
fn ellipsoid_along_a_motion_one_shot_per_step() {
    let thorax = Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] };
    let p0 = [-0.06, 0.12, -0.11];
    let (el, x0, fr) = single(thorax, p0, [0.1, -0.1, 0.09]);
    let (lam, o) = (quat_at(&x0, 9), vec3_at(&x0, 6));
    let n = x0.len();
    for (order, most) in [(Order::Gradient, 1), (Order::Hessian, 2)] {
        let mut state = ElementState::default();
        let mut counts = Vec::new();
        for k in 0..40 {
            let a = std::f64::consts::TAU * k as f64 / 1000.0;
            let mut x = x0.clone();
            let p = [p0[0] + 0.08 * (a.cos() - 1.0), p0[1] + 0.08 * a.sin(), p0[2]];
            x[..3].copy_from_slice(&fr.global(&lam, &o, &p));
            let (mut e, mut de, mut d2e) = ([0.0], vec![0.0; n], vec![0.0; n * n]);
            let d2: &mut [f64] = if order == Order::Hessian { &mut d2e } else { &mut [] };
            let before = crate::geodesic::shots_on_this_thread();
            el.evaluate(&x, &mut Evaluation::new(order, n, &mut e, &mut de, d2, &mut state)).unwrap();
            counts.push(crate::geodesic::shots_on_this_thread() - before);
        }
        println!("{order:?}: shots per step {counts:?}");
        assert!(counts[3..].iter().all(|&c| c == most), "{order:?}: {counts:?}");
    }
}

/// A viewer draws a solved frame from the evaluation's kept state: the ellipsoid path is drawn
/// without a geodesic shot to find it again (one per surface piece remains, to sample it), equal
/// to the cold drawing, and the state is not changed by drawing.
#[test]
fn drawing_from_the_kept_state_does_not_solve_again() {
    let thorax = Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] };
    let (el, x0, _) = single(thorax, [0.16, 0.1, 0.05], [-0.1, 0.12, 0.1]);
    let n = x0.len();
    let mut state = ElementState::default();
    let (mut e, mut de) = ([0.0], vec![0.0; n]);
    el.evaluate(&x0, &mut Evaluation::new(Order::Gradient, n, &mut e, &mut de, &mut [], &mut state)).unwrap();
    let shots = |f: &dyn Fn() -> Drawing| {
        let before = crate::geodesic::shots_on_this_thread();
        let d = f();
        (d, crate::geodesic::shots_on_this_thread() - before)
    };
    let (cold, cold_shots) = shots(&|| el.drawing(&x0));
    let (warm, warm_shots) = shots(&|| el.drawing_with(&x0, &state));
    let (again, _) = shots(&|| el.drawing_with(&x0, &state));
    assert!(warm_shots < cold_shots, "drawn from the kept state: {warm_shots} shots, cold {cold_shots}");
    assert_eq!(warm, again, "drawing leaves the state as it was");
    assert_eq!(cold.lines[0].len(), warm.lines[0].len());
    for (a, b) in cold.lines[0].iter().zip(&warm.lines[0]) {
        assert!(norm(&sub(a, b)) < 1e-10, "{a:?} vs {b:?}");
    }
    // without a kept state the drawing is the cold one
    assert_eq!(el.drawing_with(&x0, &ElementState::default()), cold);
}
