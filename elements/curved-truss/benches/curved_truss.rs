//! One evaluation of a CURVED-TRUSS (length, gradient and Hessian over its 13 local
//! coordinates) wrapping one obstacle on a turned body: a humeral-head sphere, a cylinder, the
//! DAS3 thorax ellipsoid. For the ellipsoid also the costs around it: after a small motion
//! (a Newton step of the kernel, or the next frame), with the Hessian or with the gradient only
//! (what the kernel's positions and transfer functions ask), back and forth or along a motion
//! that goes on; and cold (no warm start: the first evaluation, or right after touch-down).

use mollier_core::NodeId;
use mollier_core::element::{Element, ElementInfo, ElementState, Evaluation, Order};
use mollier_core::geometry::{Vec3, quat_from_axis_angle};
use mollier_core::registry::Frame;
use mollier_curved_truss::{CurvedTruss, Obstacle, Shape, Side};
use mollier_surface::frame::{ShapeFrame, body_fixed_xyz};

fn main() {
    divan::main();
}

const N: usize = 13;

fn setup(kind: &str, shift: f64) -> (CurvedTruss, Vec<f64>) {
    setup_at(kind, [shift, 0.0, 0.0])
}

/// The benchmark's element with its origin `p` moved by `shift` (m, obstacle frame).
fn setup_at(kind: &str, shift: Vec3) -> (CurvedTruss, Vec<f64>) {
    let lam = quat_from_axis_angle(&[0.4, -0.3, 0.8], 0.7);
    let o = [0.1, 0.2, -0.1];
    let fr = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.3, -0.2, 0.9]), [0.01, -0.02, 0.005]);
    let (shape, p, q): (Shape, Vec3, Vec3) = match kind {
        "sphere" => (Shape::Sphere { radius: 0.0272 }, [0.06, 0.012, 0.005], [-0.05, 0.02, 0.012]),
        "cylinder" => (
            Shape::Cylinder { radius: 0.014, side: Side::Toward([-1.0, 0.0]), length: None },
            [0.0, 0.03, -0.04],
            [0.005, -0.03, 0.05],
        ),
        _ => (Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] }, [-0.06, 0.12, -0.11], [0.1, -0.1, 0.09]),
    };
    let p = [p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]];
    let mut x: Vec<f64> = fr.global(&lam, &o, &p).iter().chain(&fr.global(&lam, &o, &q)).copied().collect();
    x.extend_from_slice(&o);
    x.extend_from_slice(&lam);
    let ob = Obstacle {
        shape,
        frame: fr,
        body: Frame { position: NodeId::new(2), orientation: NodeId::new(3) },
        segment: 0,
    };
    let mut el = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob]).unwrap();
    el.initialize(&x).unwrap();
    assert!(el.path(&x).unwrap().0.len() == 3, "{kind}: the benchmark path must wrap");
    (el, x)
}

fn run(el: &CurvedTruss, x: &[f64], state: &mut ElementState) -> f64 {
    run_to(el, x, state, Order::Hessian)
}

fn run_to(el: &CurvedTruss, x: &[f64], state: &mut ElementState, order: Order) -> f64 {
    let mut e = [0.0];
    let mut de = [0.0; N];
    let mut d2e = [0.0; N * N];
    let d2: &mut [f64] = if order == Order::Hessian { &mut d2e } else { &mut [] };
    let mut out = Evaluation::new(order, N, &mut e, &mut de, d2, state);
    el.evaluate(divan::black_box(x), &mut out).unwrap();
    e[0] + de[N - 1] + d2e[N * N - 1]
}

fn order_of(name: &str) -> Order {
    if name == "hessian" { Order::Hessian } else { Order::Gradient }
}

/// Repeated at one configuration (the warm start is the solution).
#[divan::bench(args = ["sphere", "cylinder", "ellipsoid"])]
fn length_gradient_hessian(bencher: divan::Bencher, kind: &str) {
    let (el, x) = setup(kind, 0.0);
    let mut state = ElementState::default();
    bencher.bench_local(|| divan::black_box(run(&el, &x, &mut state)));
}

/// Alternating between two configurations 0.5 mm apart.
#[divan::bench]
fn ellipsoid_after_a_small_motion(bencher: divan::Bencher) {
    alternating(bencher, Order::Hessian);
}

/// The same, asking for the length and gradient only.
#[divan::bench]
fn ellipsoid_after_a_small_motion_gradient(bencher: divan::Bencher) {
    alternating(bencher, Order::Gradient);
}

fn alternating(bencher: divan::Bencher, order: Order) {
    let (el, xa) = setup("ellipsoid", 0.0);
    let (_, xb) = setup("ellipsoid", 0.0005);
    let mut state = ElementState::default();
    let mut flip = false;
    bencher.bench_local(|| {
        flip = !flip;
        divan::black_box(run_to(&el, if flip { &xa } else { &xb }, &mut state, order))
    });
}

/// Along a motion that goes on: the origin round a circle of radius 8 cm in 1000 steps of
/// 0.5 mm (a configuration comes back only after 1000 evaluations).
#[divan::bench(args = ["gradient", "hessian"])]
fn ellipsoid_along_a_motion(bencher: divan::Bencher, order: &str) {
    let xs: Vec<Vec<f64>> = (0..1000)
        .map(|k| {
            let a = std::f64::consts::TAU * k as f64 / 1000.0;
            setup_at("ellipsoid", [0.08 * (a.cos() - 1.0), 0.08 * a.sin(), 0.0]).1
        })
        .collect();
    let (el, _) = setup("ellipsoid", 0.0);
    let order = order_of(order);
    let mut state = ElementState::default();
    let mut k = 0;
    bencher.bench_local(|| {
        k = (k + 1) % xs.len();
        divan::black_box(run_to(&el, &xs[k], &mut state, order))
    });
}

/// Without a warm start.
#[divan::bench]
fn ellipsoid_cold(bencher: divan::Bencher) {
    let (el, x) = setup("ellipsoid", 0.0);
    bencher.bench_local(|| divan::black_box(run(&el, &x, &mut ElementState::default())));
}

/// One geodesic shot with its Jacobi fields over the thorax, 1 to 6 macro steps (profiling aid).
#[divan::bench(args = [1, 4, 6])]
fn geodesic_shot(bencher: divan::Bencher, steps: usize) {
    let e = mollier_curved_truss::Ellipsoid::new([0.147, 0.2079, 0.0944]);
    let d = [0.2f64, 0.9, 0.3];
    let f = e.level(&d).sqrt();
    let x0 = d.map(|v| v / f);
    let n = e.normal(&x0);
    let a = [1.0, 0.1, -0.5];
    let t = {
        let p = [0, 1, 2].map(|i| a[i] - (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) * n[i]);
        let l = (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]).sqrt();
        p.map(|v| v / l)
    };
    bencher.bench_local(|| divan::black_box(e.shoot_in(&x0, &t, divan::black_box(0.15), steps)));
}

/// The length over third-order hyper-dual numbers ([`Element::third_order`]) and over
/// [`mollier_core::Jet4`] ([`Element::fourth_order`]) in fixed directions, beside the `f64`
/// length, gradient and Hessian at the same configuration (`length_gradient_hessian`): each jet
/// evaluation solves the path in `f64` from cold and replays it.
#[divan::bench(args = ["sphere", "cylinder", "ellipsoid"])]
fn third_order(bencher: divan::Bencher, kind: &str) {
    use mollier_core::HyperHyperDual64;
    let (el, x) = setup(kind, 0.0);
    let xs: Vec<HyperHyperDual64> = (0..N)
        .map(|i| {
            let d = |k: usize| ((i * 7 + k * 3) % 5) as f64 * 0.01;
            HyperHyperDual64::new(x[i], d(1), d(2), d(3), 0.0, 0.0, 0.0, 0.0)
        })
        .collect();
    let mut e = [HyperHyperDual64::from(0.0)];
    bencher.bench_local(|| {
        el.third_order(divan::black_box(&xs), &mut e).unwrap();
        divan::black_box(e[0].eps1eps2eps3)
    });
}

/// The same over [`mollier_core::Jet4`].
#[divan::bench(args = ["sphere", "cylinder", "ellipsoid"])]
fn fourth_order(bencher: divan::Bencher, kind: &str) {
    use mollier_core::Jet4;
    use num_dual::Dual64;
    let (el, x) = setup(kind, 0.0);
    let xs: Vec<Jet4> = (0..N)
        .map(|i| {
            let d = |k: usize| ((i * 7 + k * 3) % 5) as f64 * 0.01;
            let z = Dual64::from(0.0);
            Jet4::new(Dual64::new(x[i], d(4)), d(1).into(), d(2).into(), d(3).into(), z, z, z, z)
        })
        .collect();
    let mut e = [Jet4::from(0.0)];
    bencher.bench_local(|| {
        el.fourth_order(divan::black_box(&xs), &mut e).unwrap();
        divan::black_box(e[0].eps1eps2eps3.eps)
    });
}
