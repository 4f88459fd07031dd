//! The element: the bending and torsion of the moving member's joint frame relative to the fixed
//! member's (report §2.1.3).
//!
//! With `R_ab = n_a^i · n_b^j` (`mollier_joint_common::frames`), `u = (R_xz, R_yz, R_zz)` is the
//! moving z axis in the fixed joint frame:
//! - the bending angle `α` is the angle between `z_i` and `z_j`, the directional angle `γ` the
//!   azimuth of `z_j` about `z_i` (from `x_i`); the modes use `p = α cos γ`, `q = α sin γ`
//!   (`mollier_joint_common::swing`), smooth through `α = 0`, where `γ` is not;
//! - the torsion angle `β` is the angle from `s'` — `x_i` carried along by the bending rotation,
//!   about `z_i × z_j` by `α` — to `x_j`, about `z_j`. Then `R = R_bend Rz(β)`, and
//!   ```text
//!   β = atan2(R_yx − R_xy, R_xx + R_yy)
//!   ```
//!   (with the quaternion `(w, v)` of `R`, `R_yx − R_xy = 4 w v_z` and `R_xx + R_yy = 2 (w² − v_z²)`,
//!   and a bending about an axis ⟂ `z_i` leaves `v_z/w = tan(β/2)`). It is `x_i` to `x_j` when
//!   `α = 0`, as the report defines.
//!
//! All three are undefined only at `α = π`. The modes are `(p − p0, q − q0, β − β0)`, the
//! reference taken in the initial configuration; the torsion mode is `atan2` of the rotated sine
//! and cosine, continuous at rest.

use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Vec3, cross, dot};
use mollier_core::scalar::{Real, c};
use mollier_core::{Law, NodeId};
use mollier_joint_common::swing::{swing, swing_twist_generic};
use mollier_joint_common::{FrameSpec, JointFrames, Term, check_len};

use crate::law::{FlexionTorsionLaw, JointMoment};

/// Names of the three modes, in order (rad).
pub const MODES: [&str; 3] = ["bending_p", "bending_q", "torsion"];

/// The MADYMO flexion-torsion joint between two orientation nodes.
#[derive(Clone, Debug)]
pub struct FlexionTorsionJoint {
    layout: Layout,
    spec: FrameSpec,
    frames: JointFrames,
    /// `(cos β0, sin β0)`.
    torsion0: (f64, f64),
    law: FlexionTorsionLaw,
}

/// The torque (N m, global components) the joint exerts on the moving member, by part.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointTorque {
    /// The bending torque `−(M_f(α) C(γ) + damping) û`, `û = z_i × z_j / |z_i × z_j|`.
    pub bending: Vec3,
    /// The torsion torque `−(M_t(β) + damping) z_j`.
    pub torsion: Vec3,
    /// The moment of the law at this posture.
    pub moment: JointMoment,
}

impl FlexionTorsionJoint {
    /// The joint between the fixed member's orientation node `fixed` (element i) and the moving
    /// member's `moving` (element j), with its joint frames and its law.
    pub fn new(fixed: NodeId, moving: NodeId, spec: FrameSpec, law: FlexionTorsionLaw) -> Self {
        Self {
            layout: Layout::new(
                vec![(fixed, NodeKind::Orientation), (moving, NodeKind::Orientation)],
                vec![ModeInfo::angle(MODES[0]), ModeInfo::angle(MODES[1]), ModeInfo::rotation(MODES[2])],
            ),
            spec,
            frames: JointFrames::default(),
            torsion0: (1.0, 0.0),
            law,
        }
    }

    /// The element's law (with its reference once initialized).
    pub fn flexion_torsion_law(&self) -> &FlexionTorsionLaw {
        &self.law
    }

    /// The joint angles `(p, q, β)` (rad; `p = α cos γ`, `q = α sin γ`, `β ∈ (−π, π]`) at local
    /// coordinates `x` (8).
    pub fn joint_angles(&self, x: &[f64]) -> Result<[f64; 3], ElementError> {
        let mut e = [0.0; 3];
        self.angles_generic(x, &mut e, (1.0, 0.0))?;
        Ok(e)
    }

    /// The torque on the moving member at local coordinates `x` (8) and
    /// mode rates `rates` (3, rad/s).
    pub fn torque(&self, x: &[f64], rates: &[f64; 3]) -> Result<JointTorque, ElementError> {
        let [p, q, beta] = self.joint_angles(x)?;
        let moment = self.law.moment_at(p, q, beta, rates);
        let fixed = self.frames.fixed_axes(x)?;
        let zi = fixed[2];
        let r = self.frames.relative(x)?;
        // z_j from its components in the fixed frame, scaled back to unit length (R scales with
        // the Euler parameters' norms)
        let zj: Vec3 = std::array::from_fn(|k| (0..3).map(|a| r[a][2] * fixed[a][k]).sum());
        let zj = zj.map(|v| v / dot(&zj, &zj).sqrt());
        let n = cross(&zi, &zj);
        let s = dot(&n, &n).sqrt();
        let bending = if s > 0.0 { n.map(|v| -moment.bending * v / s) } else { [0.0; 3] };
        Ok(JointTorque { bending, torsion: zj.map(|v| -moment.torsion * v), moment })
    }

    fn angles_generic<T: Real>(&self, x: &[T], e: &mut [T], torsion0: (f64, f64)) -> Result<(), ElementError> {
        if e.len() < 3 {
            return Err(ElementError::Other("expected room for 3 modes".into()));
        }
        let r = self.frames.relative(x)?;
        let undefined = "the torsion angle is undefined at a bending of π";
        e[..3].copy_from_slice(&swing_twist_generic(&r, torsion0, undefined)?);
        Ok(())
    }
}

impl ElementInfo for FlexionTorsionJoint {
    fn type_name(&self) -> &str {
        crate::TYPE.name
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The two z axes, `z_i` and `z_j`, whose angle is the bending and about the second of
    /// which the torsion turns (unit segments about the origin, placed by the viewer).
    fn drawing(&self, x: &[f64]) -> Drawing {
        self.frames.z_axes_drawing(x)
    }

    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        self.frames = JointFrames::new(&self.spec, x0)?;
        let [p0, q0, b0] = self
            .joint_angles(x0)
            .map_err(|e| ElementError::Degenerate(format!("the initial configuration has no joint angles: {e}")))?;
        self.torsion0 = (b0.cos(), b0.sin());
        self.law.set_reference([p0, q0, b0]);
        Ok(())
    }
}

impl Element for FlexionTorsionJoint {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        check_len(x.len())?;
        let o = out.order();
        let r = |a: usize, b: usize| self.frames.entry(x, a, b, o);
        let u = [r(0, 2), r(1, 2), r(2, 2)];
        let [mut p, mut q] = swing([&u[0], &u[1], &u[2]], o)?;
        let reference = self.law.reference();
        p.v -= reference[0];
        q.v -= reference[1];
        p.store(out, 0);
        q.store(out, 1);
        // torsion less β0: sin(β − β0) ∝ S c0 − C s0, cos(β − β0) ∝ C c0 + S s0, with
        // S = R_yx − R_xy, C = R_xx + R_yy
        let (rxx, ryy, ryx, rxy) = (r(0, 0), r(1, 1), r(1, 0), r(0, 1));
        let (c0, s0) = self.torsion0;
        let sin = Term::combine(&[(c0, &ryx), (-c0, &rxy), (-s0, &rxx), (-s0, &ryy)]);
        let cos = Term::combine(&[(c0, &rxx), (c0, &ryy), (s0, &ryx), (-s0, &rxy)]);
        let r2 = sin.v * sin.v + cos.v * cos.v;
        if !(r2 > 0.0) || !r2.is_finite() {
            return Err(ElementError::Domain("the torsion angle is undefined at a bending of π".into()));
        }
        Term::atan2(&sin, &cos, o).store(out, 2);
        Ok(())
    }

    fn law(&self) -> Option<&dyn Law> {
        Some(&self.law)
    }
}

impl Deformations for FlexionTorsionJoint {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        self.angles_generic(x, e, self.torsion0)?;
        let reference = self.law.reference();
        e[0] -= c::<T>(reference[0]);
        e[1] -= c::<T>(reference[1]);
        Ok(())
    }
}
