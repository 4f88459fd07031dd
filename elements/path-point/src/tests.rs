use mollier_core::NodeId;
use mollier_core::conformance::{Options, check_element};
use mollier_core::element::{Element, ElementError, ElementInfo, ElementState, Evaluation, Order};
use mollier_core::geometry::{quat_from_axis_angle, rotate};
use mollier_core::registry::Frame;
use mollier_hinge::Hinge;

use crate::function::{Function, Spline};
use crate::{Coordinate, Location, PathPoint};

fn id(i: usize) -> NodeId {
    NodeId::new(i)
}

/// A point on a body (origin node 1, orientation node 2) following the rotation of a hinge from
/// node 3 to the body's orientation, at `at` in the initial configuration; and that
/// configuration: point, origin, body orientation, the hinge's other orientation, neighbours.
fn point(location: Location, at: f64, conditional: Option<[f64; 2]>) -> (PathPoint, Vec<f64>) {
    let hinge = Hinge::new(id(3), id(2), [0.3, -0.2, 0.9], None);
    let coordinate = Coordinate { element: Box::new(hinge), mode: 0, at, scale: -1.3 };
    let body = Frame { position: id(1), orientation: id(2) };
    let pp = PathPoint::new(id(0), body, location, coordinate, conditional.map(|r| (r, [id(4), id(5)])));
    let origin = [0.1, -0.4, 0.25];
    let lam = quat_from_axis_angle(&[0.2, 0.9, -0.4], 0.7);
    let other = quat_from_axis_angle(&[-0.5, 0.1, 0.3], 1.1);
    let (a, b) = ([0.3, 0.1, -0.2], [-0.2, 0.5, 0.4]);
    let active = conditional.is_none_or(|[lo, hi]| lo <= at && at <= hi);
    let place = if active {
        let t = match &pp_location(&pp) {
            Location::Fixed(v) => *v,
            Location::Moving(fs) => [0, 1, 2].map(|k| fs[k].value(at)),
        };
        let r = rotate(&lam, &t);
        [0, 1, 2].map(|i| origin[i] + r[i])
    } else {
        [0, 1, 2].map(|i| 0.5 * (a[i] + b[i]))
    };
    let mut x = place.to_vec();
    x.extend(origin);
    x.extend(lam);
    x.extend(other);
    x.extend(lam);
    if conditional.is_some() {
        x.extend(a);
        x.extend(b);
    }
    (pp, x)
}

fn pp_location(pp: &PathPoint) -> Location {
    pp.location_for_tests()
}

fn moving() -> Location {
    let s = Spline::fmm(vec![-2.0, -1.0, -0.2, 0.3, 1.5], vec![0.02, 0.035, 0.03, 0.01, -0.02]);
    Location::Moving(Box::new([
        Function::Spline(s),
        Function::Polynomial(vec![0.003, -0.004, 0.01, -0.02, 0.05]),
        Function::Linear { slope: 0.004, intercept: -0.01 },
    ]))
}

#[test]
fn moving_point_passes_the_conformance_harness() {
    let (mut pp, x0) = point(moving(), 0.2, None);
    pp.initialize(&x0).unwrap();
    // the hinge's bendings are not held here, so the perturbations turn its axis too
    let r = check_element(&pp, &x0, &Options::default()).unwrap();
    assert!(r.gradient < 1.0 && r.hessian < 1.0, "{r:?}");
}

#[test]
fn conditional_point_passes_the_harness_on_either_side_of_its_range() {
    // active at 0.2 inside [-0.5, 0.6], inactive at 0.2 outside [0.4, 0.9]: perturbations of up
    // to 0.05 rad of the hinge stay on one side
    for range in [[-0.5, 0.6], [0.4, 0.9]] {
        let (mut pp, x0) = point(Location::Fixed([0.01, 0.02, -0.03]), 0.2, Some(range));
        pp.initialize(&x0).unwrap();
        let opts = Options { amplitude: 0.05, ..Options::default() };
        let r = check_element(&pp, &x0, &opts).unwrap();
        assert!(r.gradient < 1.0 && r.hessian < 1.0, "{range:?}: {r:?}");
    }
}

#[test]
fn a_conditional_point_switches_where_opensim_does() {
    let (mut pp, x0) = point(Location::Fixed([0.01, 0.02, -0.03]), 0.2, Some([0.2, 0.9]));
    pp.initialize(&x0).unwrap();
    assert!(pp.is_active(0.2) && pp.is_active(0.9) && !pp.is_active(0.9 + 1e-12) && !pp.is_active(0.2 - 1e-12));
}

#[test]
fn a_point_off_its_place_is_refused_with_where_it_belongs() {
    let (mut pp, mut x0) = point(moving(), 0.2, None);
    x0[1] += 1e-6;
    let Err(ElementError::Degenerate(m)) = pp.initialize(&x0) else { panic!("accepted a misplaced point") };
    assert!(m.contains("1.000e-6 m from where") && m.contains("place it at"), "{m}");
}

#[test]
fn the_modes_are_the_offset_along_the_body_axes() {
    let (mut pp, x0) = point(moving(), 0.2, None);
    pp.initialize(&x0).unwrap();
    let mut x = x0.clone();
    let axis_y = rotate(&[x0[6], x0[7], x0[8], x0[9]], &[0.0, 1.0, 0.0]);
    for i in 0..3 {
        x[i] += 0.003 * axis_y[i];
    }
    let mut e = [0.0; 3];
    let mut st = ElementState::default();
    pp.evaluate(&x, &mut Evaluation::new(Order::Value, x.len(), &mut e, &mut [], &mut [], &mut st)).unwrap();
    assert!(e[0].abs() < 1e-15 && (e[1] - 0.003).abs() < 1e-15 && e[2].abs() < 1e-15, "{e:?}");
}

#[test]
fn a_placed_point_takes_its_offsets_exactly() {
    for conditional in [None, Some([-0.5, 0.6]), Some([0.4, 0.9])] {
        let (mut pp, x0) = point(moving(), 0.2, conditional);
        pp.initialize(&x0).unwrap();
        let n = pp.layout().nodes().len();
        let others = (1u64 << n) - 2;
        assert_eq!(pp.placement(others, 0b111), 1);
        if conditional.is_some() {
            // without its neighbours: placed while on the path, else left to Newton-Raphson
            let without = others & !(0b11 << (n - 2));
            assert_eq!(pp.placement(without, 0b111), 1);
            let mut x = x0.clone();
            let on = pp.is_active(0.2);
            assert_eq!(pp.place(&mut x, without, &[0.0; 3]).unwrap(), on);
        }
        // the point known, an offset free or a node of its joint unknown: nothing to place
        assert_eq!(pp.placement(others | 1, 0b111), 0);
        assert_eq!(pp.placement(others, 0b011), 0);
        assert_eq!(pp.placement(others & !(1 << 3), 0b111), 0);
        // the body and the joint turned, the point placed: its modes are the given offsets
        let mut x = x0.clone();
        x[6..10].copy_from_slice(&quat_from_axis_angle(&[0.4, -0.3, 0.8], 0.9));
        x[3..6].copy_from_slice(&[0.2, 0.1, -0.3]);
        x[0..3].fill(7.0);
        let want = [0.002, -0.001, 0.0005];
        assert!(pp.place(&mut x, others, &want).unwrap());
        let (m, mut state) = (pp.layout().n_modes(), ElementState::default());
        let mut e = vec![0.0; m];
        pp.evaluate(&x, &mut Evaluation::new(Order::Value, x.len(), &mut e, &mut [], &mut [], &mut state)).unwrap();
        for k in 0..3 {
            assert!((e[k] - want[k]).abs() < 1e-15, "{conditional:?}: {e:?}");
        }
    }
}

#[test]
fn the_jacobian_of_a_placed_point_is_its_rates_at_first_order() {
    use mollier_core::element::Rates;
    use mollier_core::geometry::quat_mul;
    // on a moving point, and on a conditional one on and off the path
    for (location, conditional) in [(moving(), None), (moving(), Some([-0.5, 0.6])), (moving(), Some([0.4, 0.9]))] {
        let (mut pp, x0) = point(location, 0.2, conditional);
        pp.initialize(&x0).unwrap();
        let (n, nl) = (pp.layout().nodes().len(), x0.len());
        let others = (1u64 << n) - 2;
        let e = [0.002, -0.001, 0.0005];
        // three columns of the known slots' rates (each orientation turning at some ω) and of
        // the offsets' rates
        let mut v = vec![0.0; 3 * nl];
        let mut ev = vec![0.0; 9];
        for (c, col) in v.chunks_exact_mut(nl).enumerate() {
            for (i, value) in col.iter_mut().enumerate().skip(3) {
                *value = (0.37 * (i + 7 * c) as f64).sin();
            }
            for o in [6, 14] {
                let w = [0.0, 0.9 - 0.4 * c as f64, 0.3 * c as f64, -0.7];
                let l = [x0[o], x0[o + 1], x0[o + 2], x0[o + 3]];
                col[o..o + 4].copy_from_slice(&quat_mul(&w, &l).map(|d| 0.5 * d));
            }
            ev[3 * c + c] = 1.0;
        }
        let mut want = v.clone();
        let mut a = vec![0.0; nl];
        for (c, col) in want.chunks_exact_mut(nl).enumerate() {
            let rates = Rates { v: col, a: &mut a, ev: &ev[3 * c..3 * c + 3], ea: &[0.0; 3] };
            assert!(pp.place_rates(&x0, others, &e, rates).unwrap());
        }
        assert_eq!(pp.place_jacobian(&x0, others, &e, &mut v, &ev).unwrap(), Some(true));
        for (got, want) in v.iter().zip(&want) {
            assert!((got - want).abs() <= 1e-15 * want.abs().max(1.0), "{conditional:?}: {got} against {want}");
        }
        // the location moves along the coordinate: some column's point rate is not the body's
        assert!(v.chunks_exact(nl).any(|col| col[..3].iter().any(|r| r.abs() > 1e-3)));
    }
}

/// The third and fourth orders against central differences of the Hessian and of the third
/// (conformance check 8): a moving point (a spline, a polynomial and a line of its hinge's
/// coordinate) and a fixed conditional one on either side of its range, at the reference and
/// at random configurations.
#[test]
fn the_third_and_fourth_orders_are_exact() {
    use mollier_core::conformance::{Rng, check_orders, perturb};
    let cases = [
        (moving(), None),
        (Location::Fixed([0.01, 0.02, -0.03]), Some([-0.5, 0.6])),
        (Location::Fixed([0.01, 0.02, -0.03]), Some([0.4, 0.9])),
    ];
    let mut rng = Rng::new(7);
    for (location, range) in cases {
        let (mut pp, x0) = point(location, 0.2, range);
        pp.initialize(&x0).unwrap();
        for s in 0..4 {
            let x = if s == 0 { x0.clone() } else { perturb(pp.layout(), &x0, 0.05, &mut rng) };
            let opts = Options { step: 1e-4, hessian_rtol: 1e-9, seed: s, ..Options::default() };
            let o = check_orders(&pp, &x, 4, &opts).unwrap_or_else(|f| panic!("{range:?}: {f}"));
            assert!(o.third.is_some() && o.fourth.is_some(), "{o:?}");
        }
    }
}
