//! SURFACE used rigid, through the kernel: a point whose x and y are inputs glides on an
//! ellipsoid fixed to a body turned by a hinge (input: the turn). Its solved z, the transfer
//! functions `∂z/∂x`, `∂z/∂y`, `∂z/∂θ` and `∂²z/∂x²` are compared with the ellipsoid's explicit
//! equation.

use mollier_core::geometry::quat_from_axis_angle;
use mollier_core::registry::Frame;
use mollier_core::transfer::second_order;
use mollier_core::{Data, ModelBuilder, pair_index, solve_positions};
use mollier_hinge::Hinge;
use mollier_surface::frame::ShapeFrame;
use mollier_surface::{Reference, Surface};
use num_dual::HyperDual64;

/// Height of the upper sheet of the ellipsoid with semi-axes `a`, centre `c`, turned by `th` about
/// the global x axis through the origin, above the global point `(x, y)`: solve
/// `|D⁻¹ (Rx(−θ)(x, y, z) − c)| = 1` for `z` by Newton (generic, so dual numbers differentiate it).
fn height<T: mollier_core::Real>(a: [f64; 3], c: [f64; 3], x: T, y: T, th: T, z0: f64) -> T {
    let mut z = T::from(z0);
    for _ in 0..60 {
        let (s, co) = (th.sin(), th.cos());
        // body coordinates of (x, y, z): rotate by −θ about x
        let bx = x - c[0];
        let by = y * co + z * s - c[1];
        let bz = -(y * s) + z * co - c[2];
        let f = bx * bx / (a[0] * a[0]) + by * by / (a[1] * a[1]) + bz * bz / (a[2] * a[2]) - 1.0;
        let df = by * s * 2.0 / (a[1] * a[1]) + bz * co * 2.0 / (a[2] * a[2]);
        z -= f / df;
    }
    z
}

#[test]
fn a_point_glides_on_a_turning_ellipsoid() {
    let (a, c) = ([0.15, 0.2, 0.1], [0.0, 0.02, -0.01]);
    let theta0 = 0.2;
    let (x0, y0) = (0.05, -0.04);
    let z0 = height(a, c, x0, y0, theta0, 0.2);
    let mut b = ModelBuilder::new();
    let o = b.position_node("O", [0.0; 3]).unwrap();
    let g = b.orientation_node("G", [1.0, 0.0, 0.0, 0.0]).unwrap();
    let l = b.orientation_node("thorax", quat_from_axis_angle(&[1.0, 0.0, 0.0], theta0)).unwrap();
    let p = b.position_node("TS", [x0, y0, z0]).unwrap();
    b.fix_node(o);
    b.fix_node(g);
    let h = b.add_element("turn", Box::new(Hinge::new(g, l, [1.0, 0.0, 0.0], None))).unwrap();
    b.input_mode(h, "rotation");
    b.input_coordinate(p, 0);
    b.input_coordinate(p, 1);
    let frame = ShapeFrame::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], c);
    let sf = Surface::new(p, Frame { position: o, orientation: l }, frame, a, Reference::Surface);
    let el = b.add_element("contact", Box::new(sf)).unwrap();
    let model = b.build().unwrap();
    let mut data = Data::new(&model);
    let mode = model.mode_by_name(el, "distance").unwrap();
    let zc = model.coord_id(p, 2).index();
    for (dth, x, y) in [(0.0, x0, y0), (0.3, 0.07, -0.02), (-0.25, -0.03, 0.06)] {
        let q = [dth, x, y];
        solve_positions(&model, &mut data, &q).unwrap();
        second_order(&model, &mut data).unwrap();
        assert!(data.e()[mode.index()].abs() < 1e-14);
        let th = theta0 + dth;
        let z = data.x()[zc];
        assert!((z - height(a, c, x, y, th, z)).abs() < 1e-14, "{z}");
        // first and second derivatives of the explicit height by hyper-dual numbers
        let d = |i: usize, j: usize| {
            let mut v = [HyperDual64::from(th), HyperDual64::from(x), HyperDual64::from(y)];
            v[i].eps1 = 1.0;
            v[j].eps2 = 1.0;
            height(a, c, v[1], v[2], v[0], z)
        };
        for i in 0..3 {
            let want = d(i, i);
            let got = data.df_x()[(zc, i)];
            assert!((got - want.eps1).abs() < 1e-12, "∂z/∂q{i}: {got} vs {}", want.eps1);
            for j in i..3 {
                let w2 = d(i, j).eps1eps2;
                let g2 = data.d2f_x()[(zc, pair_index(i, j, 3))];
                assert!((g2 - w2).abs() < 1e-9 * (1.0 + w2.abs()), "∂²z/∂q{i}∂q{j}: {g2} vs {w2}");
            }
        }
    }
}
