//! `soft-contact`: a point and an ellipsoid on a body, with the soft contact of DAS3
//! (Chadwick et al. 2014, App. B): the scapula's TS and AI on the thorax.
//!
//! The mode is the ellipsoid's implicit function at the point (eq. 17), dimensionless,
//! ```text
//! e = F(p) = Σ_i (p_i / a_i)² − 1          (p: the point in the ellipsoid's frame)
//! ```
//! negative inside, 0 on the surface, positive outside — the function itself, not its change
//! from the initial configuration, because the contact's potential is defined on it. The element
//! carries its law: the potential `V = ¼ k (Σ a_i²) F²` (eq. 18) attenuated outside (eqs.
//! 22-25), whose force is `−σ ∇F` with the stress conjugate to `F`
//! ```text
//! σ = ½ k (Σ a_i²) F⁻(F),     F⁻(F) = ½ (F − √(F² + ε²))
//! ```
//! so that, with `∇F = 2 p_i / a_i²`, the force on the point is eqs. 22-24's
//! `−k (p_i) (Σ a²)/a_i² F⁻`. `k` is a stiffness (N/m: 20 kN/m in DAS3), `ε` sets the width of
//! the transition from linear stiffness inside to none outside (0.01 in DAS3).
//!
//! Derivatives are exact: `F` is quadratic in the point's local coordinates, and the chain rule
//! to the point's and the body's coordinates is SURFACE's (`mollier_surface::frame::chain`).
//! Local coordinates, in this order: the point (3), the body origin (3), the body orientation (4).

use mollier_core::NodeId;
use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Vec3, quat_at};
use mollier_core::law::Law;
use mollier_core::registry::{ElementRole, ElementType, Frame, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, c};
use mollier_surface::frame::{self, ShapeFrame};

/// DAS3's transition width `ε`.
pub const DEFAULT_EPSILON: f64 = 0.01;

/// The contact's law: `σ = ½ k S F⁻(F)`, `S = Σ a_i²` (m²).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactLaw {
    /// `k` (N/m).
    pub stiffness: f64,
    /// `S = Σ a_i²` (m²).
    pub axes_squared: f64,
    /// `ε` (dimensionless).
    pub epsilon: f64,
}

impl ContactLaw {
    /// `(σ, ∂σ/∂F)` at level `f`.
    pub fn eval(&self, f: f64) -> (f64, f64) {
        let r = f.hypot(self.epsilon);
        let g = 0.5 * self.stiffness * self.axes_squared;
        (g * 0.5 * (f - r), g * 0.5 * (1.0 - f / r))
    }
}

impl Law for ContactLaw {
    fn stress(&self, e: &[f64], _ed: &[f64], sigma: &mut [f64]) {
        sigma[0] = self.eval(e[0]).0;
    }

    fn energy(&self, e: &[f64]) -> Option<f64> {
        // ∫₀^F σ = (k S / 8)(F² − F√(F² + ε²) − ε² asinh(F/ε))
        let (f, eps) = (e[0], self.epsilon);
        Some(self.stiffness * self.axes_squared / 8.0 * (f * f - f * f.hypot(eps) - eps * eps * (f / eps).asinh()))
    }

    fn tangent(&self, e: &[f64], _ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
        ds_de[0] = self.eval(e[0]).1;
        ds_ded[0] = 0.0;
    }

    /// `∂²σ/∂F² = −¼ k S ε²/(F² + ε²)^{3/2}` (N/m · m²), no rate terms.
    fn curvature(&self, e: &[f64], _ed: &[f64], out: &mut [f64]) -> bool {
        let r = e[0].hypot(self.epsilon);
        out[..3].copy_from_slice(&[
            -0.25 * self.stiffness * self.axes_squared * self.epsilon * self.epsilon / (r * r * r),
            0.0,
            0.0,
        ]);
        true
    }
}

/// A soft contact element.
#[derive(Clone, Debug)]
pub struct SoftContact {
    layout: Layout,
    frame: ShapeFrame,
    axes: Vec3,
    law: ContactLaw,
}

impl SoftContact {
    /// The point `point` and an ellipsoid with semi-axes `semi_axes` (m) in `frame` on `body`,
    /// with contact stiffness `stiffness` (N/m) and transition width `epsilon`.
    pub fn new(point: NodeId, body: Frame, frame: ShapeFrame, semi_axes: Vec3, stiffness: f64, epsilon: f64) -> Self {
        Self {
            layout: frame::point_on_body(point, body, ModeInfo::dimensionless("level")),
            frame,
            axes: semi_axes,
            law: ContactLaw { stiffness, axes_squared: semi_axes.iter().map(|a| a * a).sum(), epsilon },
        }
    }

    /// The point in the ellipsoid's frame (m) at local coordinates `x` (10).
    pub fn local_point(&self, x: &[f64]) -> Vec3 {
        self.frame.point_local(x)
    }

    /// The contact force on the point (N, global frame) at local coordinates `x`: `−σ ∇F`.
    pub fn force(&self, x: &[f64]) -> Vec3 {
        let p = self.local_point(x);
        let f: f64 = (0..3).map(|i| (p[i] / self.axes[i]).powi(2)).sum::<f64>() - 1.0;
        let sigma = self.law.eval(f).0;
        let g_local = [0, 1, 2].map(|i| 2.0 * p[i] / (self.axes[i] * self.axes[i]));
        self.frame.global_vector(&quat_at(x, frame::POINT_BODY.orientation), &g_local).map(|v| -sigma * v)
    }
}

impl ElementInfo for SoftContact {
    fn type_name(&self) -> &str {
        "soft-contact"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, _x0: &[f64]) -> Result<(), ElementError> {
        if !self.axes.iter().all(|a| a.is_finite() && *a > 0.0) {
            return Err(ElementError::Degenerate(format!("semi-axes must be positive, found {:?}", self.axes)));
        }
        Ok(())
    }
    fn drawing(&self, x: &[f64]) -> Drawing {
        self.frame.ellipsoid_drawing(x, &self.axes)
    }
}

impl Element for SoftContact {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let p = self.local_point(x);
        let a2 = self.axes.map(|a| a * a);
        out.e[0] = (0..3).map(|i| p[i] * p[i] / a2[i]).sum::<f64>() - 1.0;
        if out.wants_gradient() {
            let w = [0, 1, 2].map(|i| 2.0 * p[i] / a2[i]);
            let mut h = [0.0; 9];
            for i in 0..3 {
                h[i * 4] = 2.0 / a2[i];
            }
            frame::chain(&self.frame, frame::POINT_BODY, &[frame::POINT], x, &w, &h, &mut out.mode(0), 1.0);
        }
        Ok(())
    }

    fn law(&self) -> Option<&dyn Law> {
        Some(&self.law)
    }
}

impl Deformations for SoftContact {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let p = self.frame.point_local(x);
        let mut f = c::<T>(-1.0);
        for i in 0..3 {
            let q = p[i] / c::<T>(self.axes[i]);
            f += q * q;
        }
        e[0] = f;
        Ok(())
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (point, body, axes, shape) = frame::point_and_ellipsoid(p)?;
    let stiffness = p.positive("stiffness")?;
    let epsilon = if p.get("epsilon").is_some() { p.positive("epsilon")? } else { DEFAULT_EPSILON };
    Ok(Box::new(SoftContact::new(point, body, shape, axes, stiffness, epsilon)))
}

/// The `soft-contact` element type.
pub const TYPE: ElementType = ElementType {
    name: "soft-contact",
    summary: "a point pushed out of an ellipsoid on a body by DAS3's soft contact (Chadwick et al. 2014, App. B); mode: level, the ellipsoid's implicit function at the point (negative inside); carries its law. List it in `free`",
    role: ElementRole::Contact,
    modes: &["level"],
    params: &PARAMS,
    build,
};

const PARAMS: [ParamDoc; 9] = frame::docs::point_and_ellipsoid(
    ParamDoc {
        name: "point",
        kind: ParamKind::Node(NodeKind::Position),
        required: true,
        doc: "the point kept out of the ellipsoid (TS, AI)",
    },
    [
        ParamDoc {
            name: "stiffness",
            kind: ParamKind::Number,
            required: true,
            doc: "the contact stiffness k of the potential ¼ k (Σ a²) F², in N/m whatever the file's length unit (DAS3: 20000)",
        },
        ParamDoc {
            name: "epsilon",
            kind: ParamKind::Number,
            required: false,
            doc: "width ε of the transition from stiff inside to free outside, in units of the level F (default 0.01, DAS3's)",
        },
    ],
);

/// Register the `soft-contact` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests;
