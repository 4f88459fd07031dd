//! One evaluation of the SURFACE element (distance, gradient and Hessian), for a point outside,
//! on and inside a thorax-sized ellipsoid.

use mollier_core::NodeId;
use mollier_core::element::{Element, ElementInfo, ElementState, Evaluation, Order};
use mollier_core::geometry::quat_from_axis_angle;
use mollier_core::registry::Frame;
use mollier_surface::frame::{ShapeFrame, body_fixed_xyz};
use mollier_surface::{Reference, Surface};

fn main() {
    divan::main();
}

fn setup(factor: f64) -> (Surface, Vec<f64>) {
    let lam = quat_from_axis_angle(&[0.3, 1.0, -0.2], 0.8);
    let origin = [0.05, 0.3, -0.1];
    let shape = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.2, -0.4, 0.3]), [0.0, -0.1486, 0.0591]);
    let axes = [0.147, 0.2079, 0.0944];
    let dir = [0.6f64, -0.5, 0.62];
    let f: f64 = (0..3).map(|i| (dir[i] / axes[i]).powi(2)).sum();
    let local = dir.map(|v| v / f.sqrt() * factor);
    let mut x = shape.global(&lam, &origin, &local).to_vec();
    x.extend_from_slice(&origin);
    x.extend_from_slice(&lam);
    let body = Frame { position: NodeId::new(1), orientation: NodeId::new(2) };
    let mut s = Surface::new(NodeId::new(0), body, shape, axes, Reference::Initial);
    s.initialize(&x).unwrap();
    (s, x)
}

#[divan::bench(args = [0.8, 1.0, 1.5])]
fn distance_gradient_hessian(bencher: divan::Bencher, factor: f64) {
    let (s, x) = setup(factor);
    let mut e = [0.0];
    let mut de = [0.0; 10];
    let mut d2e = [0.0; 100];
    let mut state = ElementState::default();
    bencher.bench_local(|| {
        de.fill(0.0);
        d2e.fill(0.0);
        let mut out = Evaluation::new(Order::Hessian, 10, &mut e, &mut de, &mut d2e, &mut state);
        s.evaluate(divan::black_box(&x), &mut out).unwrap();
        divan::black_box(e[0])
    });
}
