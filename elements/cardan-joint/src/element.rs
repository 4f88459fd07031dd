//! The element: the Bryant (cardan) angles of the moving member's joint frame relative to the
//! fixed member's, less their values in the initial configuration.
//!
//! With `R_ab = n_a^i · n_b^j` (see `mollier_joint_common::frames`) and
//! `R = Rx(φ) Ry(θ) Rz(ψ)` (report §2.1.2: φ about the fixed `x_i`, θ about the floating `y'`,
//! ψ about the moving `z''`):
//! ```text
//! R_13 = sin θ,  R_23 = −sin φ cos θ,  R_33 = cos φ cos θ,  R_12 = −cos θ sin ψ,  R_11 = cos θ cos ψ
//! φ = atan2(−R_23, R_33),   θ = atan2(R_13, √(R_11² + R_12²)),   ψ = atan2(−R_12, R_11)
//! ```
//! defined for `|θ| < π/2` (the report limits θ to that range against gimbal lock). The modes are
//! `φ − φ0` and `ψ − ψ0` (as `atan2` of the rotated sine and cosine, continuous at rest) and
//! `θ − θ0`; the law adds the reference back.

use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Vec3, cross, dot};
use mollier_core::scalar::{Real, c};
use mollier_core::{Law, NodeId};
use mollier_joint_common::{FrameSpec, JointFrames, Term, axes_drawing, check_len};

use crate::law::CardanLaw;

/// Names of the three modes, in order (rad).
pub const MODES: [&str; 3] = ["phi", "theta", "psi"];

/// `cos θ` (relative to the frames' scale) at or below which the angles count as gimbal-locked:
/// `|θ|` within 1e-6 rad of π/2.
const GIMBAL_LOCK: f64 = 1e-6;

fn locked(cos_theta: f64, sin_theta: f64) -> Result<(), ElementError> {
    let r = cos_theta.hypot(sin_theta);
    if !(r > 0.0) || !r.is_finite() || !(cos_theta > GIMBAL_LOCK * r) {
        return Err(ElementError::Domain(format!(
            "gimbal lock: the second cardan angle θ is ±π/2 or beyond (cos θ = {:.3e}); the cardan joint holds |θ| < π/2",
            cos_theta / r
        )));
    }
    Ok(())
}

/// The MADYMO cardan joint between two orientation nodes.
#[derive(Clone, Debug)]
pub struct CardanJoint {
    layout: Layout,
    spec: FrameSpec,
    frames: JointFrames,
    /// `(cos, sin)` of the reference φ0 and ψ0.
    phi0: (f64, f64),
    psi0: (f64, f64),
    law: CardanLaw,
}

impl CardanJoint {
    /// The joint between the fixed member's orientation node `fixed` (element i) and the moving
    /// member's `moving` (element j), with its joint frames and its law.
    pub fn new(fixed: NodeId, moving: NodeId, spec: FrameSpec, law: CardanLaw) -> Self {
        Self {
            layout: Layout::new(
                vec![(fixed, NodeKind::Orientation), (moving, NodeKind::Orientation)],
                vec![ModeInfo::rotation(MODES[0]), ModeInfo::angle(MODES[1]), ModeInfo::rotation(MODES[2])],
            ),
            spec,
            frames: JointFrames::default(),
            phi0: (1.0, 0.0),
            psi0: (1.0, 0.0),
            law,
        }
    }

    /// The element's law (with the reference angles once initialized).
    pub fn cardan_law(&self) -> &CardanLaw {
        &self.law
    }

    /// The joint frames in the nodes' body frames (after initialization).
    pub fn frames(&self) -> &JointFrames {
        &self.frames
    }

    /// The cardan angles `(φ, θ, ψ)` (rad; φ, ψ in `(−π, π]`, `|θ| < π/2`) at local coordinates
    /// `x` (8).
    pub fn angles(&self, x: &[f64]) -> Result<[f64; 3], ElementError> {
        let mut e = [0.0; 3];
        self.angles_generic(x, &mut e, (1.0, 0.0), (1.0, 0.0))?;
        Ok(e)
    }

    /// The rotation axes at local coordinates `x` (8, unit Euler parameters), global
    /// components: the fixed `x_i`, the floating `y'` and the moving `z''`.
    pub fn axes(&self, x: &[f64]) -> Result<[Vec3; 3], ElementError> {
        let [phi, theta, _] = self.angles(x)?;
        let [xi, yi, zi] = self.frames.fixed_axes(x)?;
        let ((sp, cp), (st, ct)) = (phi.sin_cos(), theta.sin_cos());
        // y' = Rx(φ) y_i; z'' = Rx(φ) Ry(θ) z_i = sin θ x_i + cos θ Rx(φ) z_i (Rz(ψ) keeps it)
        let y1: Vec3 = std::array::from_fn(|k| cp * yi[k] + sp * zi[k]);
        let z2: Vec3 = std::array::from_fn(|k| st * xi[k] + ct * (cp * zi[k] - sp * yi[k]));
        Ok([xi, y1, z2])
    }

    /// The torque (N m, global components) the joint exerts on the moving member for stresses
    /// `σ` (3, N m): `τ = −Σ σ_k a^k` with `a^k` the basis dual to the rotation axes `a_k`, so
    /// that `τ · a_k = −σ_k` (each pin of the three takes its own torque about its own axis).
    pub fn torque(&self, x: &[f64], sigma: &[f64; 3]) -> Result<Vec3, ElementError> {
        let a = self.axes(x)?;
        let det = dot(&a[0], &cross(&a[1], &a[2]));
        let dual = [cross(&a[1], &a[2]), cross(&a[2], &a[0]), cross(&a[0], &a[1])];
        Ok(std::array::from_fn(|k| -(0..3).map(|m| sigma[m] * dual[m][k]).sum::<f64>() / det))
    }

    fn angles_generic<T: Real>(
        &self,
        x: &[T],
        e: &mut [T],
        phi0: (f64, f64),
        psi0: (f64, f64),
    ) -> Result<(), ElementError> {
        if e.len() < 3 {
            return Err(ElementError::Other("expected room for 3 modes".into()));
        }
        let r = self.frames.relative(x)?;
        let ct = (r[0][0] * r[0][0] + r[0][1] * r[0][1]).sqrt();
        locked(ct.re(), r[0][2].re())?;
        let rotated = |s: T, cc: T, (c0, s0): (f64, f64)| {
            let (c0, s0) = (c::<T>(c0), c::<T>(s0));
            (s * c0 - cc * s0).atan2(cc * c0 + s * s0)
        };
        e[0] = rotated(-r[1][2], r[2][2], phi0);
        e[1] = r[0][2].atan2(ct);
        e[2] = rotated(-r[0][1], r[0][0], psi0);
        Ok(())
    }
}

impl ElementInfo for CardanJoint {
    fn type_name(&self) -> &str {
        crate::TYPE.name
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Its three rotation axes ([`Self::axes`]): the fixed `x_i`, the floating `y'`, the moving
    /// `z''` (unit segments about the origin, placed by the viewer).
    fn drawing(&self, x: &[f64]) -> Drawing {
        axes_drawing(self.axes(x))
    }

    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        self.frames = JointFrames::new(&self.spec, x0)?;
        let [phi0, theta0, psi0] = self
            .angles(x0)
            .map_err(|e| ElementError::Degenerate(format!("the initial configuration has no cardan angles: {e}")))?;
        self.phi0 = (phi0.cos(), phi0.sin());
        self.psi0 = (psi0.cos(), psi0.sin());
        self.law.set_reference([phi0, theta0, psi0]);
        Ok(())
    }
}

impl Element for CardanJoint {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        check_len(x.len())?;
        let o = out.order();
        let r = |a: usize, b: usize| self.frames.entry(x, a, b, o);
        let (r11, r12, r13, r23, r33) = (r(0, 0), r(0, 1), r(0, 2), r(1, 2), r(2, 2));
        let ct = Term::hypot(&r11, &r12, o);
        locked(ct.v, r13.v)?;
        // atan2 of (s, c) rotated back by the reference angle: sin(a − a0) ∝ s c0 − c s0
        let rotated = |s: (f64, &Term), cc: (f64, &Term), (c0, s0): (f64, f64)| {
            let sin = Term::combine(&[(s.0 * c0, s.1), (-cc.0 * s0, cc.1)]);
            let cos = Term::combine(&[(cc.0 * c0, cc.1), (s.0 * s0, s.1)]);
            Term::atan2(&sin, &cos, o)
        };
        rotated((-1.0, &r23), (1.0, &r33), self.phi0).store(out, 0);
        let mut theta = Term::atan2(&r13, &ct, o);
        theta.v -= self.law.reference()[1];
        theta.store(out, 1);
        rotated((-1.0, &r12), (1.0, &r11), self.psi0).store(out, 2);
        Ok(())
    }

    fn law(&self) -> Option<&dyn Law> {
        Some(&self.law)
    }
}

impl Deformations for CardanJoint {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        self.angles_generic(x, e, self.phi0, self.psi0)?;
        e[1] -= c::<T>(self.law.reference()[1]);
        Ok(())
    }
}
