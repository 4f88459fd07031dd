//! SURFACE: a point and an ellipsoid fixed to a body, with one deformation mode, the signed
//! distance from the point to the ellipsoid along the surface normal (m, positive outside):
//! ```text
//! e = d(p) − d0,     p = shape coordinates of the point (see [`frame`])
//! ```
//! Fixed, the point glides on the ellipsoid (van der Helm 1994: the scapula on the thorax), and
//! the mode's stress is the normal contact force (N; negative = compression, pushing the point
//! out). Free, it measures a clearance.
//!
//! The reference `d0` is the initial distance (`reference = "initial"`, the default, so that the
//! initial configuration is undeformed like every other element) or zero
//! (`reference = "surface"`, so that `e` is the distance itself and fixing it puts the point on
//! the ellipsoid even when the model file places it slightly off).
//!
//! Derivatives are exact: the gradient is the unit normal carried to the point's and the
//! body's coordinates, the Hessian is the derivative of the normal (finite on the surface, the
//! curvature form; see [`distance::Projection::hessian`]). Local coordinates, in this order:
//! the point (3), the body origin (3), the body orientation (4).

pub mod distance;
pub mod frame;

use mollier_core::NodeId;
use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::Vec3;
use mollier_core::registry::{ElementRole, ElementType, Frame, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, c};

pub use distance::{Projection, project, signed_distance};
pub use frame::ShapeFrame;

/// What the deformation is measured from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Reference {
    /// `d0` = the distance in the initial configuration: the initial configuration is undeformed.
    #[default]
    Initial,
    /// `d0 = 0`: the mode is the signed distance itself.
    Surface,
}

/// A SURFACE element.
#[derive(Clone, Debug)]
pub struct Surface {
    layout: Layout,
    frame: ShapeFrame,
    axes: Vec3,
    reference: Reference,
    d0: f64,
}

impl Surface {
    /// The point `point` and an ellipsoid with semi-axes `semi_axes` (m, along the local x, y, z
    /// axes of `frame`) on the body `body`.
    pub fn new(point: NodeId, body: Frame, frame: ShapeFrame, semi_axes: Vec3, reference: Reference) -> Self {
        Self {
            layout: frame::point_on_body(point, body, ModeInfo::length("distance")),
            frame,
            axes: semi_axes,
            reference,
            d0: 0.0,
        }
    }

    /// The reference distance `d0` (m).
    pub fn reference_distance(&self) -> f64 {
        self.d0
    }

    /// The semi-axes (m).
    pub fn semi_axes(&self) -> &Vec3 {
        &self.axes
    }

    /// The ellipsoid's frame in its body.
    pub fn shape_frame(&self) -> &ShapeFrame {
        &self.frame
    }

    /// The point's coordinates in the ellipsoid frame and its projection on the ellipsoid, at
    /// local coordinates `x` (10).
    pub fn projection(&self, x: &[f64]) -> Result<(Vec3, Projection), ElementError> {
        let p = self.frame.point_local(x);
        Ok((p, project(&self.axes, &p)?))
    }
}

impl ElementInfo for Surface {
    fn type_name(&self) -> &str {
        "surface"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        distance::check_axes(&self.axes)?;
        let (_, pr) = self.projection(x0)?;
        self.d0 = match self.reference {
            Reference::Initial => pr.distance,
            Reference::Surface => 0.0,
        };
        Ok(())
    }
    fn mode_reference(&self, _k: usize) -> Option<f64> {
        Some(self.d0)
    }
    fn drawing(&self, x: &[f64]) -> Drawing {
        self.frame.ellipsoid_drawing(x, &self.axes)
    }
}

impl Element for Surface {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let (p, pr) = self.projection(x)?;
        out.e[0] = pr.distance - self.d0;
        if out.wants_gradient() {
            let mut h = [0.0; 9];
            if out.wants_hessian() {
                let hm = pr.hessian(&p).ok_or_else(|| {
                    ElementError::Domain(
                        "the point is on the ridge inside the ellipsoid: two closest points, no second derivative"
                            .into(),
                    )
                })?;
                for i in 0..3 {
                    h[i * 3..i * 3 + 3].copy_from_slice(&hm[i]);
                }
            }
            frame::chain(&self.frame, frame::POINT_BODY, &[frame::POINT], x, &pr.normal, &h, &mut out.mode(0), 1.0);
        }
        Ok(())
    }
}

impl Deformations for Surface {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let p = self.frame.point_local(x);
        e[0] = signed_distance(&self.axes, &p)? - c::<T>(self.d0);
        Ok(())
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (point, body, axes, shape) = frame::point_and_ellipsoid(p)?;
    let reference = match p.opt_string("reference")? {
        None | Some("initial") => Reference::Initial,
        Some("surface") => Reference::Surface,
        Some(other) => {
            return Err(ParamError::new(p.path("reference"), format!("unknown reference `{other}`"))
                .with_hint("one of: initial, surface"));
        }
    };
    Ok(Box::new(Surface::new(point, body, shape, axes, reference)))
}

/// The `surface` element type.
pub const TYPE: ElementType = ElementType {
    name: "surface",
    summary: "a point and an ellipsoid on a body; mode: distance (m), the signed distance along the surface normal, positive outside. Fixed, the point glides on the ellipsoid (scapulothoracic contact)",
    role: ElementRole::Contact,
    modes: &["distance"],
    params: &PARAMS,
    build,
};

const PARAMS: [ParamDoc; 8] = frame::docs::point_and_ellipsoid(
    ParamDoc {
        name: "point",
        kind: ParamKind::Node(NodeKind::Position),
        required: true,
        doc: "the point that glides on (or keeps its distance from) the ellipsoid",
    },
    [ParamDoc {
        name: "reference",
        kind: ParamKind::Choice(&["initial", "surface"]),
        required: false,
        doc: "what the mode is measured from: `initial` (default) subtracts the distance in the initial configuration, so the model starts undeformed; `surface` makes the mode the distance itself (0 = on the ellipsoid)",
    }],
);

/// Register the `surface` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::{Options, Rng, check_generic, evaluate, rigid_motion};
    use mollier_core::element::Order;
    use mollier_core::geometry::{norm, quat_at, quat_from_axis_angle, rotate, sub, vec3_at};

    /// A thorax-like ellipsoid (DAS3's) on a rotated, translated body, and a point near it.
    fn element(point_factor: f64, reference: Reference) -> (Surface, Vec<f64>) {
        let lam = quat_from_axis_angle(&[0.3, 1.0, -0.2], 0.8);
        let origin = [0.05, 0.3, -0.1];
        let shape = ShapeFrame::from_matrix(&frame::body_fixed_xyz(&[0.2, -0.4, 0.3]), [0.0, -0.1486, 0.0591]);
        let axes = [0.147, 0.2079, 0.0944];
        // a point on the ellipsoid scaled by point_factor about the centre
        let dir = [0.6f64, -0.5, 0.62];
        let f: f64 = (0..3).map(|i| (dir[i] / axes[i]).powi(2)).sum();
        let local = dir.map(|v| v / f.sqrt() * point_factor);
        let xp = shape.global(&lam, &origin, &local);
        let mut x0 = xp.to_vec();
        x0.extend_from_slice(&origin);
        x0.extend_from_slice(&lam);
        let body = Frame { position: NodeId::new(1), orientation: NodeId::new(2) };
        let mut s = Surface::new(NodeId::new(0), body, shape, axes, reference);
        s.initialize(&x0).unwrap();
        (s, x0)
    }

    #[test]
    fn conformance() {
        // on the surface, with both references; off the surface with the initial reference
        for (factor, reference) in
            [(1.0, Reference::Surface), (1.0, Reference::Initial), (1.3, Reference::Initial), (0.9, Reference::Initial)]
        {
            let (s, x0) = element(factor, reference);
            let opts = Options { amplitude: 0.1, ..Options::default() };
            let r = check_generic(&s, &x0, &opts).unwrap_or_else(|f| panic!("factor {factor}: {f}"));
            assert!(r.dual.unwrap() < 1e-9, "{r:?}");
        }
    }

    #[test]
    fn value_is_the_distance_in_the_body_frame() {
        let (s, x0) = element(1.0, Reference::Surface);
        assert!(s.reference_distance() == 0.0);
        let (e, g, _) = evaluate(&s, &x0, Order::Gradient).unwrap();
        assert!(e[0].abs() < 1e-15, "{e:?}");
        // moving the point along the global normal by h changes the distance by h exactly
        let n: Vec3 = [g[0], g[1], g[2]];
        assert!((norm(&n) - 1.0).abs() < 1e-14);
        let mut x = x0.clone();
        for i in 0..3 {
            x[i] += 0.02 * n[i];
        }
        let (e, _, _) = evaluate(&s, &x, Order::Value).unwrap();
        assert!((e[0] - 0.02).abs() < 1e-15, "{e:?}");
        // the body gradient is minus the point gradient (translation invariance)
        for i in 0..3 {
            assert!((g[3 + i] + g[i]).abs() < 1e-15);
        }
        // a rigid motion of everything leaves it unchanged
        let mut rng = Rng::new(9);
        let y = rigid_motion(s.layout(), &x, &rng.rotation(3.0), &[0.4, -1.0, 2.0]);
        let (ey, _, _) = evaluate(&s, &y, Order::Value).unwrap();
        assert!((ey[0] - 0.02).abs() < 1e-15);
        // the initial reference subtracts the initial distance
        let (s2, x2) = element(1.5, Reference::Initial);
        let (_, pr) = s2.projection(&x2).unwrap();
        assert!(pr.distance > 0.0 && (s2.reference_distance() - pr.distance).abs() < 1e-16);
        let (e, _, _) = evaluate(&s2, &x2, Order::Value).unwrap();
        assert!(e[0] == 0.0);
    }

    #[test]
    fn global_gradient_is_the_rotated_normal() {
        let (s, x0) = element(1.2, Reference::Initial);
        let (p, pr) = s.projection(&x0).unwrap();
        let (_, g, _) = evaluate(&s, &x0, Order::Gradient).unwrap();
        let lam = quat_at(&x0, frame::POINT_BODY.orientation);
        let n = s.frame.global_vector(&lam, &pr.normal);
        for i in 0..3 {
            assert!((g[i] - n[i]).abs() < 1e-15);
        }
        // the closest point in global coordinates is the point minus d n
        let y = s.frame.global(&lam, &vec3_at(&x0, frame::POINT_BODY.origin), &pr.closest);
        let back = sub(&vec3_at(&x0, frame::POINT), &n.map(|v| v * pr.distance));
        assert!(norm(&sub(&y, &back)) < 1e-15);
        let _ = (p, rotate(&lam, &n));
    }

    #[test]
    fn ridge_point_has_no_hessian_but_never_nan() {
        // a point at the ellipsoid centre
        let lam = [1.0, 0.0, 0.0, 0.0];
        let body = Frame { position: NodeId::new(1), orientation: NodeId::new(2) };
        let mut s = Surface::new(NodeId::new(0), body, ShapeFrame::default(), [3.0, 2.0, 1.0], Reference::Surface);
        let mut x0 = vec![0.0; 6];
        x0.extend_from_slice(&lam);
        s.initialize(&x0).unwrap();
        let (e, g, _) = evaluate(&s, &x0, Order::Gradient).unwrap();
        assert!((e[0] + 1.0).abs() < 1e-15 && g.iter().all(|v| v.is_finite()));
        assert!(evaluate(&s, &x0, Order::Hessian).is_err());
        // invalid semi-axes are rejected when the model is built
        let mut bad = Surface::new(NodeId::new(0), body, ShapeFrame::default(), [3.0, 0.0, 1.0], Reference::Surface);
        assert!(matches!(bad.initialize(&x0), Err(ElementError::Degenerate(_))));
    }
}
