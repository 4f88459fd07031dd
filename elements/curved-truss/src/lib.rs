//! CURVED-TRUSS: a muscle's line of action from an origin `p` through optional via points to an
//! insertion `q`, wrapping over obstacles (spheres, cylinders, ellipsoids) fixed to bodies. One
//! deformation mode, `elongation = L − l0` (m): the path length minus its length in the initial
//! configuration. Its stress is the muscle force (N, tension positive), and its first-order
//! transfer function gives the moment arms.
//!
//! The path is a chain of *segments* between consecutive fixed points (`p`, the via points, `q`).
//! A segment without obstacles is a straight line (a TRUSS). A segment with one obstacle is the
//! shortest path around it ([`span`], [`ellipsoid`]): straight while the line clears the obstacle,
//! else tangent segment – surface path – tangent segment. A segment with several obstacles (in
//! the order the path meets them) has a free point between consecutive obstacles, placed where the
//! total length is stationary; at that point the path is straight, so it adds nothing but makes
//! the chain of obstacles a sequence of one-obstacle spans.
//!
//! An obstacle with `method = "opensim"` takes OpenSim 4.6's own path over a cylinder or an
//! ellipsoid ([`opensim`], [`opensim::ellipsoid`]) instead of the shortest one. With
//! `wrapping = "opensim"` (imported muscles with several wrap objects) the obstacles are
//! instead applied as OpenSim 4.6 applies them, one after the other on the path the others leave,
//! for up to 8 rounds (`sequence`): not a shortest path, so its derivatives come from automatic
//! differentiation of that procedure.
//!
//! Derivatives: by the envelope theorem, the gradient of `L` is that of its straight segments
//! with the contact points held fixed on their bodies. The Hessian is exact: analytic for spheres
//! and cylinders, through the implicit function theorem for ellipsoids and for the free points
//! (a Schur complement). Lift-off and touch-down keep `L` and its gradient continuous.
//!
//! Local coordinates: the path's points in order (`p`, the via points, `q`; 3 each), then each
//! obstacle body's origin (3) and orientation (4); every node once, in order of first use.
//!
//! Where things are: the element and its types here; the path's evaluation (spans, free points,
//! length with gradient and Hessian) in `path`; one span over a sphere or cylinder in [`span`],
//! over an ellipsoid in [`ellipsoid`] on [`geodesic`] and [`ode`]; the same length in dual numbers
//! for the conformance checks in `generic`; the model file's parameters in `params`; the viewer's
//! drawing in `draw`.

mod draw;
pub mod ellipsoid;
mod generic;
pub mod geodesic;
pub mod ode;
pub mod opensim;
mod params;
mod path;
mod rules;
mod sequence;
pub mod span;
mod warn;

use mollier_core::element::{Element, ElementError, ElementInfo, Evaluation, Layout};
use mollier_core::geometry::Vec3;
use mollier_core::registry::Frame;
use mollier_surface::frame::{BodySlots, ShapeFrame};

pub use geodesic::Ellipsoid;
pub use rules::{CylinderPath, Rules};
pub use span::Side;

/// The shape of an obstacle, in its own frame (see [`Obstacle`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Shape {
    /// A sphere of this radius (m) centred at the frame's origin.
    Sphere {
        /// Radius (m).
        radius: f64,
    },
    /// A cylinder of this radius (m) along the frame's z axis, centred on the frame's origin:
    /// infinitely long, or `length` long as OpenSim's `WrapCylinder` (see [`span::cylinder`]).
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Which way the path goes around.
        side: Side,
        /// Length along the axis (m); `None`: infinite.
        length: Option<f64>,
    },
    /// An ellipsoid with these semi-axes (m) along the frame's x, y, z axes.
    Ellipsoid {
        /// Semi-axes (m).
        semi_axes: Vec3,
    },
}

/// An obstacle on a body: its shape, where it sits on the body, and which segment of the path
/// it acts on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Obstacle {
    /// The shape.
    pub shape: Shape,
    /// The shape's frame in the body frame.
    pub frame: ShapeFrame,
    /// The body (its origin and orientation nodes).
    pub body: Frame,
    /// The segment: 0 from `p` to the first via point (or to `q`), `k` from via point `k`.
    pub segment: usize,
}

#[derive(Clone, Debug)]
struct Placed {
    obstacle: Obstacle,
    slots: BodySlots,
    geo: Option<Ellipsoid>,
    rules: Rules,
}

/// A CURVED-TRUSS element.
#[derive(Clone, Debug)]
pub struct CurvedTruss {
    layout: Layout,
    /// Offsets of the fixed path points `p`, via points, `q`, in path order.
    points: Vec<usize>,
    /// Obstacles of each segment, in path order (indices into `obstacles`).
    segments: Vec<Vec<usize>>,
    obstacles: Vec<Placed>,
    /// OpenSim's wrapping: the obstacles one after the other ([`sequence`]).
    sequence: bool,
    l0: f64,
}

/// Per-evaluation warm starts: the ellipsoid solutions and the free points.
#[derive(Debug, Default)]
struct PathState {
    warm: Vec<ellipsoid::Warm>,
    knots: Vec<Option<Vec<Vec3>>>,
}

impl Clone for PathState {
    fn clone(&self) -> Self {
        Self { warm: self.warm.clone(), knots: self.knots.clone() }
    }

    /// Field by field, reusing the vectors: the kernel copies the state over its saved one at
    /// every position solve.
    fn clone_from(&mut self, from: &Self) {
        self.warm.clone_from(&from.warm);
        self.knots.clone_from(&from.knots);
    }
}

/// What the `f64` evaluation chose, for the dual-number version.
#[derive(Clone, Debug)]
enum Hint {
    Straight,
    Wrapped(bool),
    /// OpenSim's path over a cylinder ([`opensim`]), alone on its segment.
    OpenSim,
    Ellipsoid(Option<ellipsoid::Solved>),
}

#[derive(Clone, Debug, Default)]
struct SegmentHint {
    /// The segment's obstacles at this posture (see [`Rules`]).
    obs: Vec<usize>,
    spans: Vec<Hint>,
    /// Free points, their plane bases (2 per point) and the inverse reduced Hessian.
    knots: Vec<Vec3>,
    bases: Vec<[Vec3; 2]>,
    hinv: Vec<f64>,
}

/// One piece of the path in global coordinates, for output and plots.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Piece {
    /// A straight line.
    Straight {
        /// Start (m).
        from: Vec3,
        /// End (m).
        to: Vec3,
    },
    /// A path on an obstacle's surface between two contact points.
    Surface {
        /// Index of the obstacle (in the order given).
        obstacle: usize,
        /// Where the path meets the surface (m).
        from: Vec3,
        /// Where it leaves (m).
        to: Vec3,
        /// Its length on the surface (m).
        length: f64,
    },
}

impl ElementInfo for CurvedTruss {
    fn type_name(&self) -> &str {
        "curved-truss"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let l = self.path(x0).map_err(|e| ElementError::Degenerate(format!("in the initial configuration: {e}")))?.1;
        if !(l > 1e-12) {
            return Err(ElementError::Degenerate(format!("zero length ({l:e} m) in the initial configuration")));
        }
        self.l0 = l;
        Ok(())
    }
    fn mode_reference(&self, _k: usize) -> Option<f64> {
        Some(self.l0)
    }
    fn drawing(&self, x: &[f64]) -> mollier_core::element::Drawing {
        self.draw(x)
    }
    fn drawing_with(&self, x: &[f64], state: &mollier_core::element::ElementState) -> mollier_core::element::Drawing {
        self.draw_from(x, state.get::<PathState>().cloned().unwrap_or_default())
    }
    fn warning(&self, x: &[f64]) -> Option<String> {
        self.anchors_inside(x)
    }
}

impl Element for CurvedTruss {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let mut st = std::mem::take(out.state::<PathState>());
        let res = self.compute(x, &mut st, &mut out.mode(0), None, None);
        *out.state::<PathState>() = st;
        out.e[0] = res? - self.l0;
        Ok(())
    }
    // the `f64` path's choices replayed over the jets, exact to their order (`generic`)
    mollier_core::third_order_by_deformations!();
    // one `f64` solve for the jets at one configuration, each jet a replay
    fn third_order_jets(
        &self,
        x: &[mollier_core::HyperHyperDual64],
        e: &mut [mollier_core::HyperHyperDual64],
    ) -> Result<bool, ElementError> {
        self.jets(x, e).map(|()| true)
    }
}

pub use params::{OBSTACLE_PARAMS, TYPE, register};

#[cfg(test)]
mod orders;
#[cfg(test)]
mod tests;

#[cfg(test)]
mod pairs {
    use super::*;
    use mollier_core::NodeId;
    use mollier_core::conformance::{Options, check_element, check_generic};
    use mollier_core::geometry::quat_from_axis_angle;
    use mollier_surface::frame::body_fixed_xyz;

    fn pair(a: Shape, b: Shape) -> (CurvedTruss, Vec<f64>) {
        let lam1 = quat_from_axis_angle(&[-0.1, 0.9, 0.2], -0.4);
        let lam2 = quat_from_axis_angle(&[0.7, 0.2, -0.5], 1.1);
        let f1 = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.2, 0.3, -0.1]), [0.0; 3]);
        let obs = [
            Obstacle {
                shape: a,
                frame: f1,
                body: Frame { position: NodeId::new(2), orientation: NodeId::new(3) },
                segment: 0,
            },
            Obstacle {
                shape: b,
                frame: ShapeFrame::default(),
                body: Frame { position: NodeId::new(4), orientation: NodeId::new(5) },
                segment: 0,
            },
        ];
        let mut x: Vec<f64> = [-0.1, 0.025, 0.0, 0.35, 0.02, -0.01].to_vec();
        x.extend_from_slice(&[0.0, 0.0, 0.0]);
        x.extend_from_slice(&lam1);
        x.extend_from_slice(&[0.2, 0.0, 0.0]);
        x.extend_from_slice(&lam2);
        let mut el = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &obs).unwrap();
        el.initialize(&x).unwrap();
        let np = el.path(&x).unwrap().0.iter().filter(|p| matches!(p, Piece::Surface { .. })).count();
        assert!(np >= 1, "no wrap");
        (el, x)
    }

    const SHAPES: [Shape; 3] = [
        Shape::Sphere { radius: 0.03 },
        Shape::Cylinder { radius: 0.03, side: Side::Either, length: None },
        Shape::Ellipsoid { semi_axes: [0.05, 0.04, 0.06] },
    ];

    /// Every pair of obstacle types in one segment: the free point between them gives exact
    /// derivatives (central differences).
    #[test]
    fn every_pair_in_one_segment_conforms() {
        for a in 0..3 {
            for b in 0..3 {
                let (el, x) = pair(SHAPES[a], SHAPES[b]);
                let opts = Options { amplitude: 0.02, samples: 3, ..Options::default() };
                check_element(&el, &x, &opts).unwrap_or_else(|e| panic!("pair {a} {b}: {e}"));
            }
        }
    }

    /// … and give exact third and fourth orders (the free point's chord steps: one for the
    /// third order, two for the fourth), every pair in one segment.
    #[test]
    fn every_pair_in_one_segment_has_exact_third_and_fourth_orders() {
        for a in 0..3 {
            for b in 0..3 {
                let (el, x) = pair(SHAPES[a], SHAPES[b]);
                let o = crate::orders::orders_near(&el, &x, 0.02, 2, 1e-4);
                println!("pair {a} {b}: {o:?}");
            }
        }
    }

    /// … and agree with dual numbers through the generic version (chord-Newton on the free point).
    #[test]
    fn free_point_hessian_matches_dual_numbers() {
        for (a, b) in [(0, 1), (2, 0)] {
            let (el, x) = pair(SHAPES[a], SHAPES[b]);
            let opts = Options { amplitude: 0.02, samples: 1, ..Options::default() };
            let r = check_generic(&el, &x, &opts).unwrap_or_else(|e| panic!("pair {a} {b}: {e}"));
            assert!(r.dual.unwrap() < 1e-9, "{r:?}");
        }
    }
}
