//! OpenSim's wrap objects one after the other (`GeometryPath::applyWrapObjects` of OpenSim 4.6),
//! for imported muscles with several wrap objects (`wrapping = "opensim"`).
//!
//! OpenSim does not look for one path over all its wrap objects. It starts from the fixed points
//! and, for each wrap object in turn, removes that object's two tangent points from the path,
//! tries the stretches of its range in the path as it now stands (tangent points of the other
//! objects included, the surface stretch of another object excepted), and inserts the tangent
//! points of the first stretch it must wrap (the line passes through it) or of the one it
//! lengthens least. With two or more objects it repeats this up to 8 rounds and stops as soon as
//! the length changes by less than 0.5 mm from the round before; after the first round, when the
//! first object did not wrap and the second's last stretch had an anchor inside it, the two
//! swap places. OpenSim measures the straight lines from where each tangent point was the first
//! time it was measured at this posture (a cache of OpenSim 4.6, see [`Seen`]), which this
//! reproduces too. The length is therefore not stationary in the tangent points: a fixed point of
//! this procedure is not the shortest path (Rajagopal 2016's gastrocnemii differ from the
//! shortest path over both cylinders by metres at some postures, where the shortest path's free
//! point is not found at all).
//!
//! The same code runs in `f64` (the length and the path drawn) and in dual numbers: every branch
//! and the number of rounds are decided on real parts, so the gradient and Hessian are those of
//! this procedure's length, by automatic differentiation (forward mode; the Hessian row by row).

use mollier_core::element::{Derivs, ElementError};
use mollier_core::geometry::{Quat, Vec3, norm, quat_at, rotate, sub, vec3_at};
use mollier_core::scalar::{Real, c};
use nalgebra::{Const, U1};
use num_dual::{Derivative, DualSVec64, HyperDualSVec64};

use crate::opensim::{Code, Wrapped};
use crate::*;

/// OpenSim's rounds over the wrap objects when there are two or more.
const ROUNDS: usize = 8;
/// OpenSim stops the rounds when the length changes by less than this (m).
const SETTLED: f64 = 0.0005;

/// Where OpenSim 4.6 has each object's two tangent points in ground. A `PathWrapPoint` caches
/// its location in ground (`Point::getLocationInGround`) the first time it is asked within a
/// posture, and moving the point in a later round does not renew that cache: the straight lines
/// of the length (and of the length change that chooses a stretch) then start or end where the
/// tangent point was when first measured, while the wrap itself starts from where it is now, and
/// the surface length is the new one. Reproduced here, because OpenSim's lengths are those.
type Seen<T> = Vec<[Option<Vec3<T>>; 2]>;

/// A point of the path during the rounds.
#[derive(Clone, Copy, Debug)]
enum At<T> {
    /// A fixed point of the element (index into `points`).
    Fixed(usize),
    /// A tangent point of obstacle `k` (its frame); `surface`: the second one, with the length
    /// on the surface from the first.
    Tangent { k: usize, r: Vec3<T>, surface: Option<T> },
}

impl<T> At<T> {
    fn object(&self) -> Option<usize> {
        match self {
            At::Fixed(_) => None,
            At::Tangent { k, .. } => Some(*k),
        }
    }
}

/// Whether obstacle `k` can be wrapped by OpenSim's procedure here: a sphere, or a cylinder with
/// a length or an ellipsoid with OpenSim's path.
fn supported(pl: &Placed) -> bool {
    matches!(pl.obstacle.shape, Shape::Sphere { .. }) || pl.opensim().is_some()
}

impl CurvedTruss {
    /// Wrap the obstacles as OpenSim 4.6's `GeometryPath` does: each in turn on the path the
    /// others leave, for up to 8 rounds (the `wrapping = "opensim"` parameter). Every obstacle
    /// must be a sphere or a cylinder with a length and OpenSim's path ([`Rules::cylinder`]).
    pub fn with_opensim_sequence(mut self) -> Result<Self, ElementError> {
        if let Some(k) = self.obstacles.iter().position(|pl| !supported(pl)) {
            return Err(ElementError::Degenerate(format!(
                "obstacle {k}: OpenSim's wrapping one object after the other is for spheres, and for ellipsoids and cylinders with a length with OpenSim's path"
            )));
        }
        self.sequence = true;
        Ok(self)
    }

    /// Obstacle `k`'s frame at `x`: orientation and origin.
    fn frame_at<T: Real>(&self, k: usize, x: &[T]) -> (Quat<T>, Vec3<T>) {
        let pl = &self.obstacles[k];
        (quat_at(x, pl.slots.orientation), vec3_at(x, pl.slots.origin))
    }

    /// The global position of a path point.
    fn global_at<T: Real>(&self, x: &[T], p: &At<T>) -> Vec3<T> {
        match p {
            At::Fixed(i) => vec3_at(x, self.points[*i]),
            At::Tangent { k, r, .. } => {
                let (lam, o) = self.frame_at(*k, x);
                let f = &self.obstacles[*k].obstacle.frame;
                let u = f.axes();
                let (cn, sigma) = (f.centre(), lam[0] * lam[0] + lam[1] * lam[1] + lam[2] * lam[2] + lam[3] * lam[3]);
                let v: Vec3<T> = [0, 1, 2].map(|i| r[0] * u[0][i] + r[1] * u[1][i] + r[2] * u[2][i] + cn[i]);
                let w = rotate(&lam, &v);
                [0, 1, 2].map(|i| w[i] / sigma + o[i])
            }
        }
    }

    /// OpenSim's wrap of obstacle `k` over the stretch between global points `a`, `b`: its code
    /// and the wrap (obstacle frame).
    fn wrap_line<T: Real>(&self, k: usize, x: &[T], a: &Vec3<T>, b: &Vec3<T>) -> (Code, Option<Wrapped<T>>) {
        let pl = &self.obstacles[k];
        let (lam, o) = self.frame_at(k, x);
        let (pa, pb) = (pl.obstacle.frame.local(&lam, &o, a), pl.obstacle.frame.local(&lam, &o, b));
        match (pl.obstacle.shape, pl.opensim()) {
            (Shape::Sphere { radius }, _) => crate::opensim::sphere(radius, &pa, &pb),
            (_, Some(obj)) => obj.wrap(&pa, &pb),
            _ => unreachable!("checked by `supported` when the element is built"),
        }
    }

    /// Where OpenSim takes a path point to be in ground: a fixed point where it is; a tangent
    /// point where it was the first time OpenSim asked (see [`Seen`]).
    fn ground<T: Real>(&self, x: &[T], p: &At<T>, seen: &mut Seen<T>) -> Vec3<T> {
        match p {
            At::Fixed(_) => self.global_at(x, p),
            At::Tangent { k, surface, .. } => {
                let slot = &mut seen[*k][usize::from(surface.is_some())];
                *slot.get_or_insert_with(|| self.global_at(x, p))
            }
        }
    }

    /// The length of a path as OpenSim sums it: straight lines between the points (in ground as
    /// OpenSim has them, [`Self::ground`]), and the surface length between the two tangent points
    /// of one object.
    fn length_of<T: Real>(&self, x: &[T], path: &[At<T>], seen: &mut Seen<T>) -> T {
        let mut total = c::<T>(0.0);
        for w in path.windows(2) {
            match (&w[0], &w[1]) {
                (At::Tangent { k: a, .. }, At::Tangent { k: b, surface: Some(s), .. }) if a == b => total += *s,
                (p, q) => {
                    let (gp, gq) = (self.ground(x, p, seen), self.ground(x, q, seen));
                    total += crate::opensim::ellipsoid::chord(&sub(&gq, &gp));
                }
            }
        }
        total
    }

    /// OpenSim's path at `x`: its points in order and its length (m).
    fn sequence<T: Real>(&self, x: &[T]) -> (Vec<At<T>>, T, Seen<T>) {
        let m = self.obstacles.len();
        let mut seen: Seen<T> = vec![[None, None]; m];
        let mut path: Vec<At<T>> = (0..self.points.len()).map(At::Fixed).collect();
        let mut order: Vec<usize> = (0..m).collect();
        let mut result = vec![Code::NoWrap; m];
        let rounds = if m < 2 { 1 } else { ROUNDS };
        let mut last = f64::INFINITY;
        let mut length = c::<T>(0.0);
        for round in 0..rounds {
            for i in 0..m {
                let k = order[i];
                result[i] = Code::NoWrap;
                path.retain(|p| p.object() != Some(k));
                let pl = &self.obstacles[k];
                let (first, end) = (pl.obstacle.segment, pl.rules.last_segment.unwrap_or(pl.obstacle.segment) + 1);
                let find = |f: usize| path.iter().position(|p| matches!(p, At::Fixed(j) if *j == f));
                let (Some(start), Some(end)) = (find(first), find(end)) else { continue };
                let mut best: Option<(usize, Wrapped<T>)> = None;
                let mut least = f64::INFINITY;
                for pt1 in start..end {
                    if path[pt1].object().is_some() && path[pt1].object() == path[pt1 + 1].object() {
                        continue;
                    }
                    let (a, b) = (self.global_at(x, &path[pt1]), self.global_at(x, &path[pt1 + 1]));
                    let (code, w) = self.wrap_line(k, x, &a, &b);
                    result[i] = code;
                    match (code, w) {
                        (Code::Mandatory, Some(w)) => {
                            best = Some((pt1 + 1, w));
                            break;
                        }
                        (Code::Wrapped, Some(w)) => {
                            // OpenSim's `calcPathLengthChange`, from the anchors where it has them
                            let (ca, cb) =
                                (self.ground(x, &path[pt1], &mut seen), self.ground(x, &path[pt1 + 1], &mut seen));
                            let r1 = self.global_at(x, &At::Tangent { k, r: w.r1, surface: None });
                            let r2 = self.global_at(x, &At::Tangent { k, r: w.r2, surface: None });
                            let change =
                                (norm(&sub(&r1, &ca)) + w.surface + norm(&sub(&cb, &r2)) - norm(&sub(&cb, &ca))).re();
                            if change < least {
                                least = change;
                                best = Some((pt1 + 1, w));
                            }
                        }
                        _ => {}
                    }
                }
                if let Some((at, w)) = best {
                    path.insert(at, At::Tangent { k, r: w.r1, surface: None });
                    path.insert(at + 1, At::Tangent { k, r: w.r2, surface: Some(w.surface) });
                }
            }
            length = self.length_of(x, &path, &mut seen);
            if (length.re() - last).abs() < SETTLED {
                break;
            }
            last = length.re();
            if round == 0 && m > 1 && result[0] == Code::NoWrap && result[1] == Code::Inside {
                // OpenSim sets the order to (1, 0) and removes object 0's tangent points
                order[0] = 1;
                order[1] = 0;
                path.retain(|p| p.object() != Some(0));
            }
        }
        (path, length, seen)
    }

    /// The length for a generic scalar (dual numbers).
    pub(crate) fn sequence_length<T: Real>(&self, x: &[T]) -> T {
        self.sequence(x).1
    }

    /// The length at `x` with its gradient and Hessian added to `d` (as it wants them), and the
    /// path's pieces.
    pub(crate) fn sequence_derivs(
        &self,
        x: &[f64],
        d: &mut Derivs<'_>,
        pieces: Option<&mut Vec<Piece>>,
    ) -> Result<f64, ElementError> {
        let (path, length, mut seen) = self.sequence(x);
        if !length.is_finite() {
            return Err(ElementError::Domain("OpenSim's path over the wrap objects is not defined here".into()));
        }
        if let Some(out) = pieces {
            for w in path.windows(2) {
                let (a, b) = (self.ground(x, &w[0], &mut seen), self.ground(x, &w[1], &mut seen));
                out.push(match (&w[0], &w[1]) {
                    (At::Tangent { k, .. }, At::Tangent { k: j, surface: Some(s), .. }) if k == j => {
                        Piece::Surface { obstacle: *k, from: a, to: b, length: *s }
                    }
                    _ => Piece::Straight { from: a, to: b },
                });
            }
        }
        if d.has_grad() || d.has_hess() {
            match x.len() {
                0..=16 => self.derivs::<16>(x, d),
                17..=32 => self.derivs::<32>(x, d),
                33..=64 => self.derivs::<64>(x, d),
                n => {
                    return Err(ElementError::Degenerate(format!(
                        "OpenSim's wrapping over several objects takes at most 64 local coordinates, not {n}"
                    )));
                }
            }
        }
        Ok(length)
    }

    /// Automatic differentiation of [`Self::sequence`]: forward mode for the gradient, one
    /// hyper-dual pass per row for the Hessian (`N ≥ x.len()`, the derivative vectors' size).
    fn derivs<const N: usize>(&self, x: &[f64], d: &mut Derivs<'_>) {
        let n = x.len();
        if d.has_hess() {
            for j in 0..n {
                let xs: Vec<HyperDualSVec64<1, N>> = (0..n)
                    .map(|i| {
                        let mut v = HyperDualSVec64::<1, N>::from_re(x[i]);
                        v.eps2 = Derivative::derivative_generic(U1, Const::<N>, i);
                        if i == j {
                            v.eps1 = Derivative::derivative_generic(Const::<1>, U1, 0);
                        }
                        v
                    })
                    .collect();
                let l = self.sequence_length(&xs);
                let (g, h) = (l.eps2.unwrap_generic(U1, Const::<N>), l.eps1eps2.unwrap_generic(Const::<1>, Const::<N>));
                if j == 0 && d.has_grad() {
                    for i in 0..n {
                        d.grad[i] += g[i];
                    }
                }
                for i in 0..n {
                    d.hess[j * n + i] += h[i];
                }
            }
        } else {
            let xs: Vec<DualSVec64<N>> = (0..n)
                .map(|i| {
                    let mut v = DualSVec64::<N>::from_re(x[i]);
                    v.eps = Derivative::derivative_generic(Const::<N>, U1, i);
                    v
                })
                .collect();
            let g = self.sequence_length(&xs).eps.unwrap_generic(Const::<N>, U1);
            for i in 0..n {
                d.grad[i] += g[i];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::NodeId;
    use mollier_core::conformance::{Options, check_element};
    use mollier_core::element::ElementInfo;
    use mollier_core::geometry::quat_from_axis_angle;
    use mollier_core::registry::Frame;
    use mollier_surface::frame::{ShapeFrame, body_fixed_xyz};

    /// p, q and two finite cylinders (OpenSim's path) on two bodies, both on the one stretch, in
    /// OpenSim's sequence; the local coordinates.
    fn two_cylinders(several: bool) -> (CurvedTruss, Vec<f64>) {
        let cyl = Shape::Cylinder { radius: 0.02, side: Side::Either, length: Some(0.5) };
        let body = |i: usize| Frame { position: NodeId::new(2 * i + 2), orientation: NodeId::new(2 * i + 3) };
        let obs = [
            Obstacle {
                shape: cyl,
                frame: ShapeFrame::from_matrix(&body_fixed_xyz(&[0.1, -0.2, 0.0]), [-0.08, 0.03, 0.0]),
                body: body(0),
                segment: 0,
            },
            Obstacle {
                shape: cyl,
                frame: ShapeFrame::from_matrix(&body_fixed_xyz(&[-0.1, 0.15, 0.0]), [0.08, 0.02, 0.0]),
                body: body(1),
                segment: 0,
            },
        ];
        let el = in_opensim_sequence(&obs, several, None);
        // the path dips between the cylinders: p and q above, the cylinders' tops below the line
        let mut x: Vec<f64> = vec![-0.2, 0.03, 0.02, 0.18, 0.0, -0.04];
        x.extend_from_slice(&[0.0, -0.015, 0.0]);
        x.extend_from_slice(&quat_from_axis_angle(&[0.0, 0.0, 1.0], 0.05));
        x.extend_from_slice(&[0.0, 0.01, 0.0]);
        x.extend_from_slice(&quat_from_axis_angle(&[0.2, 0.1, 1.0], -0.3));
        (el, x)
    }

    /// p to q over the two obstacles `obs` with OpenSim's rules for cylinders (`several`: as many
    /// wraps as the path needs), the second's quadrant `quadrant`, in OpenSim's sequence.
    fn in_opensim_sequence(obs: &[Obstacle], several: bool, quadrant: Option<crate::opensim::Quadrant>) -> CurvedTruss {
        let rules = Rules {
            last_segment: None,
            straight_inside: true,
            cylinder: CylinderPath::OpenSim { several },
            quadrant: None,
        };
        CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], obs)
            .and_then(|e| e.with_rules(0, rules))
            .and_then(|e| e.with_rules(1, Rules { quadrant, ..rules }))
            .and_then(|e| e.with_opensim_sequence())
            .unwrap()
    }

    /// The obstacles the path at `x` wraps, in order, and its pieces.
    fn surfaces(el: &CurvedTruss, x: &[f64]) -> (Vec<usize>, Vec<Piece>) {
        let (pieces, _) = el.path(x).unwrap();
        let on = pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Surface { obstacle, .. } => Some(*obstacle),
                _ => None,
            })
            .collect();
        (on, pieces)
    }

    /// Both cylinders wrap, and the gradient and Hessian of OpenSim's length are its own
    /// (central differences), with and without the tangent points' adjustment.
    #[test]
    fn two_cylinders_wrap_in_turn_with_exact_derivatives() {
        for several in [false, true] {
            let (mut el, x) = two_cylinders(several);
            el.initialize(&x).unwrap();
            let (surfaces, pieces) = surfaces(&el, &x);
            assert_eq!(surfaces, [0, 1], "{pieces:?}");
            let opts = Options { amplitude: 0.005, samples: 3, ..Options::default() };
            check_element(&el, &x, &opts).unwrap_or_else(|e| panic!("several {several}: {e}"));
            assert_eq!(el.type_name(), "curved-truss");
        }
    }

    /// A cylinder and an ellipsoid (OpenSim's path, with and without a quadrant) on one stretch:
    /// both wrap, and the gradient and Hessian of OpenSim's length are its own.
    #[test]
    fn a_cylinder_and_an_ellipsoid_wrap_in_turn_with_exact_derivatives() {
        for quadrant in [None, Some((1, 1.0))] {
            let (el, mut x) = two_cylinders(true);
            let mut obs: Vec<Obstacle> = el.obstacles.iter().map(|pl| pl.obstacle).collect();
            obs[1].shape = Shape::Ellipsoid { semi_axes: [0.025, 0.02, 0.03] };
            let mut el = in_opensim_sequence(&obs, true, quadrant);
            x[2] += 0.005;
            el.initialize(&x).unwrap();
            let (surfaces, pieces) = surfaces(&el, &x);
            assert_eq!(surfaces, [0, 1], "{quadrant:?}: {pieces:?}");
            let opts = Options { amplitude: 0.002, samples: 3, ..Options::default() };
            check_element(&el, &x, &opts).unwrap_or_else(|e| panic!("{quadrant:?}: {e}"));
        }
    }

    /// OpenSim's paths give exact third and fourth orders as they stand (every branch and
    /// iteration count decided on real parts: the derivatives of the procedure where its counts
    /// hold): a cylinder and an ellipsoid with OpenSim's path
    /// alone on the path, and two cylinders in OpenSim's sequence, with and without the tangent
    /// points' adjustment.
    #[test]
    fn opensim_paths_have_exact_third_and_fourth_orders() {
        for several in [false, true] {
            let (mut el, x) = two_cylinders(several);
            el.initialize(&x).unwrap();
            let o = crate::orders::orders_near(&el, &x, 0.005, 2, 1e-4);
            println!("sequence, several {several}: {o:?}");
        }
        let (el, x) = two_cylinders(true);
        let rules = Rules {
            last_segment: None,
            straight_inside: true,
            cylinder: CylinderPath::OpenSim { several: false },
            quadrant: None,
        };
        for shape in [el.obstacles[0].obstacle.shape, Shape::Ellipsoid { semi_axes: [0.025, 0.02, 0.03] }] {
            let ob = Obstacle { shape, ..el.obstacles[0].obstacle };
            let mut one = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob])
                .and_then(|e| e.with_rules(0, rules))
                .unwrap();
            let x1 = x[..13].to_vec();
            one.initialize(&x1).unwrap();
            assert!(surfaces(&one, &x1).0 == [0], "{shape:?}");
            // OpenSim's ellipsoid stops its iterations on tolerances: its length is smooth only
            // between changes of their counts, which steps of 1e-4 can cross (the harness's
            // smaller steps do not)
            let o = crate::orders::orders_near(&one, &x1, 0.005, 2, 1e-4);
            println!("{shape:?} alone: {o:?}");
        }
    }

    /// An ellipsoid is refused without OpenSim's path (Mollier's geodesic is not OpenSim's).
    #[test]
    fn an_ellipsoid_is_refused() {
        let ob = Obstacle {
            shape: Shape::Ellipsoid { semi_axes: [0.03, 0.02, 0.04] },
            frame: ShapeFrame::default(),
            body: Frame { position: NodeId::new(2), orientation: NodeId::new(3) },
            segment: 0,
        };
        let el = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob]).unwrap();
        assert!(el.with_opensim_sequence().is_err());
    }

    /// OpenSim's own length where its path changes between rounds (`two_cylinders.osim` of
    /// `tools/peer_opensim_synthetic_wraps.py` at theta = −0.815: the cylinders' frames and the
    /// anchors in ground as OpenSim 4.6 has them). In the first round both cylinders wrap; in the
    /// second the first no longer does and the second wraps from the origin again, but OpenSim
    /// measures its straight lines from where the tangent points were in the first round. Without
    /// that cache the length is 0.4057375 m, 0.46 mm longer.
    #[test]
    fn tangent_points_are_measured_where_opensim_first_saw_them() {
        let cyl = Shape::Cylinder { radius: 0.02, side: Side::Either, length: Some(0.5) };
        let body = |i: usize| Frame { position: NodeId::new(2 * i + 2), orientation: NodeId::new(2 * i + 3) };
        let r0 = [
            [0.9800665778412416, 0.0, -0.19866933079506122],
            [-0.019833838076209875, 0.9950041652780258, -0.09784339500725571],
            [0.19767681165408388, 0.09983341664682815, 0.975170327201816],
        ];
        let r1 = [
            [0.6714697621006857, 0.7267587389917439, 0.14474147257637998],
            [-0.722446657684175, 0.6854908600648925, -0.09040524082407288],
            [-0.1649217553429899, -0.043863607542295985, 0.9853308066573189],
        ];
        let obs = [
            Obstacle { shape: cyl, frame: ShapeFrame::from_matrix(&r0, [-0.08, 0.03, 0.0]), body: body(0), segment: 0 },
            Obstacle {
                shape: cyl,
                frame: ShapeFrame::from_matrix(&r1, [0.07624834275723777, -0.05182758624222189, 0.009697458961728245]),
                body: body(1),
                segment: 0,
            },
        ];
        let el = in_opensim_sequence(&obs, true, None);
        let mut x: Vec<f64> = vec![-0.2, 0.06, 0.02, 0.16782608474724767, -0.10209614611345591, -0.030134551538412727];
        x.extend_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        let (pieces, l) = el.path(&x).unwrap();
        assert!((l - 0.4052767263828867).abs() < 1e-15, "{l}");
        // drawn as OpenSim has it: origin, the second cylinder, insertion
        assert_eq!(pieces.len(), 3, "{pieces:?}");
        assert!(matches!(pieces[1], Piece::Surface { obstacle: 1, .. }), "{pieces:?}");
    }
}
