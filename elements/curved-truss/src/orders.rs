//! The third and fourth orders ([`Element::third_order`], [`Element::fourth_order`]) against
//! central differences of the analytic Hessian and of the third order (conformance check 8), on
//! random configurations of every shape: one sphere, cylinder or ellipsoid; free points between
//! obstacles of one segment; via points; OpenSim's paths (`opensim` and `sequence` test modules).

use super::*;
use mollier_core::conformance::{Options, Orders, Rng, check_orders, perturb};

/// Check 8 at `x0` and at `samples` random configurations `amplitude` from it (positions
/// relative to the element's size, orientations in rad), `directions` random direction sets at
/// each, central differences with steps from `step` down to a hundredth of it (relative to the
/// element's size); the largest errors. The tolerance, 1e-8, is 30 times the largest measured.
pub(crate) fn orders_near(el: &CurvedTruss, x0: &[f64], amplitude: f64, samples: usize, step: f64) -> Orders {
    let mut rng = Rng::new(0x0de7);
    let opts = Options { step, hessian_rtol: 1e-8, ..Options::default() };
    let mut worst = Orders { third: Some(0.0), fourth: Some(0.0) };
    for s in 0..=samples {
        let x = if s == 0 { x0.to_vec() } else { perturb(el.layout(), x0, amplitude, &mut rng) };
        let o = check_orders(el, &x, 2, &Options { seed: s as u64, ..opts }).unwrap_or_else(|f| panic!("{f}"));
        worst.third = Some(worst.third.unwrap().max(o.third.expect("third order")));
        worst.fourth = Some(worst.fourth.unwrap().max(o.fourth.expect("fourth order")));
    }
    worst
}

/// One obstacle of each shape, wrapped: a sphere, a cylinder either way and on a side, a
/// triaxial ellipsoid (the thorax's semi-axes).
#[test]
fn one_obstacle_of_each_shape_has_exact_third_and_fourth_orders() {
    let cases = [
        (Shape::Sphere { radius: 0.03 }, [0.08, 0.01, 0.0], [-0.07, 0.02, 0.01], 0.05),
        (
            Shape::Cylinder { radius: 0.02, side: Side::Either, length: None },
            [0.06, 0.01, -0.03],
            [-0.05, 0.015, 0.04],
            0.05,
        ),
        (
            Shape::Cylinder { radius: 0.02, side: Side::Toward([0.0, -1.0]), length: None },
            [0.06, 0.01, -0.03],
            [-0.05, 0.015, 0.04],
            0.05,
        ),
        (Shape::Ellipsoid { semi_axes: [0.147, 0.2079, 0.0944] }, [0.16, 0.1, 0.05], [-0.1, 0.12, 0.1], 0.03),
    ];
    for (shape, p, q, amplitude) in cases {
        let (el, x0, _) = crate::tests::single(shape, p, q);
        assert!(el.path(&x0).unwrap().0.iter().any(|p| matches!(p, Piece::Surface { .. })), "{shape:?}");
        let o = orders_near(&el, &x0, amplitude, 3, 1e-4);
        println!("{shape:?}: {o:?}");
    }
}
