//! The element: three deformation modes that measure the orientation of the moving member's joint
//! frame relative to the fixed member's, by swing and twist.
//!
//! With `n_i^f`, `n_j^m` the joint frames' axes (fixed and moving) carried by the two orientation
//! nodes, `R_ij = n_i^f · n_j^m` is the relative rotation in the fixed joint frame and
//! `u = (R_xz, R_yz, R_zz)` the moving long axis there, at polar angle `θ` from the pole and
//! azimuth `φ`. The joint angles are
//! ```text
//! p = θ cos φ,  q = θ sin φ        (swing: the azimuthal equidistant map of u, joint-common's `swing`)
//! ψ = atan2(R_yx − R_xy, R_xx + R_yy)   (twist: R = R_swing Rz(ψ), R_swing about an axis ⟂ z)
//! ```
//! All three are smooth through `θ = 0` and undefined only at `θ = π`. The modes are the joint
//! angles less their values in the initial configuration, `(p0, q0, ψ0)`, so that they are zero
//! at rest as the kernel requires; the law adds the reference back. The twist mode is computed as
//! `atan2(sin(ψ − ψ0), cos(ψ − ψ0))` directly, so it is continuous at rest.

use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Quat, Vec3, dot, q_matrix, q_times, quat_at, rotate, rotate_jacobian};
use mollier_core::scalar::{Real, c};
use mollier_core::{Law, NodeId, Order};

use crate::law::{JointMoment, ResistanceLaw};
use mollier_joint_common::swing::{swing_derivatives, swing_twist_generic};
use mollier_joint_common::{FrameSpec, JointFrames as Carried, N, check_len};

/// Names of the three modes, in order (rad).
pub const MODES: [&str; 3] = ["swing_p", "swing_q", "torsion"];

/// Local offsets of the two orientation nodes.
const F: usize = 0;
const M: usize = 4;

/// The joint frames, in the global frame of the initial configuration (unitless directions), as
/// the other joints give them. Here `fixed_z` is the pole of the joint sinus (`θ = 0`),
/// `fixed_x` the azimuth `φ = 0` (its part perpendicular to `fixed_z`), `moving_z` the moving
/// member's long axis, pointing away from the joint, and `moving_x` (its part perpendicular to
/// `moving_z`) is at `ψ = 0` where it coincides with the fixed x axis carried along by the swing.
pub type JointFrames = FrameSpec;

/// The passive resistance of a ball-and-socket joint between two orientation nodes.
#[derive(Clone, Debug)]
pub struct BallSocketResistance {
    layout: Layout,
    frames: JointFrames,
    /// The joint frames' axes in the two nodes' body frames, once initialized.
    carried: Carried,
    /// `(cos ψ0, sin ψ0)`.
    twist0: (f64, f64),
    law: ResistanceLaw,
}

/// A scalar of the eight local coordinates with its gradient and (row-major) Hessian.
struct Term {
    v: f64,
    g: [f64; N],
    h: [f64; N * N],
}

impl Term {
    fn zero() -> Self {
        Self { v: 0.0, g: [0.0; N], h: [0.0; N * N] }
    }

    /// `(R(λ_f) a) · (R(λ_m) b)` for body vectors `a` (fixed node) and `b` (moving node).
    fn product(x: &[f64], a: &Vec3, b: &Vec3, order: Order) -> Self {
        let (lf, lm): (Quat, Quat) = (quat_at(x, F), quat_at(x, M));
        let (ra, rb) = (rotate(&lf, a), rotate(&lm, b));
        let mut t = Self { v: dot(&ra, &rb), ..Self::zero() };
        if order >= Order::Gradient {
            // (R(λ) a)·d = λᵀ Q(a, d) λ
            let (qa, qb) = (q_matrix(a, &rb), q_matrix(b, &ra));
            let (ga, gb) = (q_times(&qa, &lf), q_times(&qb, &lm));
            for i in 0..4 {
                t.g[F + i] = 2.0 * ga[i];
                t.g[M + i] = 2.0 * gb[i];
            }
            if order >= Order::Hessian {
                let (ja, jb) = (rotate_jacobian(&lf, a), rotate_jacobian(&lm, b));
                for i in 0..4 {
                    for j in 0..4 {
                        t.h[(F + i) * N + F + j] = 2.0 * qa[i][j];
                        t.h[(M + i) * N + M + j] = 2.0 * qb[i][j];
                        let cross_term: f64 = (0..3).map(|k| ja[k][i] * jb[k][j]).sum();
                        t.h[(F + i) * N + M + j] = cross_term;
                        t.h[(M + j) * N + F + i] = cross_term;
                    }
                }
            }
        }
        t
    }

    /// `Σ w_k t_k`.
    fn combine(parts: &[(f64, &Term)]) -> Self {
        let mut r = Self::zero();
        for (w, t) in parts {
            r.v += w * t.v;
            r.g.iter_mut().zip(&t.g).for_each(|(a, b)| *a += w * b);
            r.h.iter_mut().zip(&t.h).for_each(|(a, b)| *a += w * b);
        }
        r
    }
}

/// Write a mode's gradient and Hessian, as far as they are wanted.
fn store(out: &mut Evaluation<'_>, k: usize, g: &[f64; N], h: &[f64; N * N]) {
    let d = out.mode(k);
    if d.has_grad() {
        d.grad.copy_from_slice(g);
    }
    if d.has_hess() {
        d.hess.copy_from_slice(h);
    }
}

impl BallSocketResistance {
    /// The element between the fixed member's orientation node `fixed` and the moving member's
    /// `moving`, with its joint frames and its law.
    pub fn new(fixed: NodeId, moving: NodeId, frames: JointFrames, law: ResistanceLaw) -> Self {
        Self {
            layout: Layout::new(
                vec![(fixed, NodeKind::Orientation), (moving, NodeKind::Orientation)],
                vec![ModeInfo::angle(MODES[0]), ModeInfo::angle(MODES[1]), ModeInfo::rotation(MODES[2])],
            ),
            frames,
            carried: Carried::default(),
            twist0: (1.0, 0.0),
            law,
        }
    }

    /// The joint frames as given.
    pub fn frames(&self) -> &JointFrames {
        &self.frames
    }

    /// The element's law (with the reference joint angles once initialized).
    pub fn resistance(&self) -> &ResistanceLaw {
        &self.law
    }

    /// The joint angles `(p, q, ψ)` (rad, `ψ ∈ (−π, π]`) at local coordinates `x` (8).
    pub fn joint_angles(&self, x: &[f64]) -> Result<[f64; 3], ElementError> {
        let mut e = [0.0; 3];
        self.angles_generic(x, &mut e, (1.0, 0.0))?;
        Ok([e[0], e[1], e[2]])
    }

    /// The passive moment at local coordinates `x` (8), with the torque on the moving member
    /// also in global components (N m).
    pub fn moment(&self, x: &[f64]) -> Result<(JointMoment, Vec3), ElementError> {
        let [p, q, psi] = self.joint_angles(x)?;
        let m = self.law.moment_at(p, q, psi);
        let axes = self.carried.fixed_axes(x)?;
        let global = std::array::from_fn(|k| (0..3).map(|i| m.torque[i] * axes[i][k]).sum());
        Ok((m, global))
    }

    /// Joint angles less the reference twist `twist0 = (cos ψ0, sin ψ0)` (the swing offsets are
    /// subtracted by the caller).
    fn angles_generic<T: Real>(&self, x: &[T], e: &mut [T], twist0: (f64, f64)) -> Result<(), ElementError> {
        if x.len() != N || e.len() < 3 {
            return Err(ElementError::Other(format!("expected {N} local coordinates, found {}", x.len())));
        }
        let r = self.carried.relative(x)?;
        e[..3].copy_from_slice(&swing_twist_generic(&r, twist0, "the twist is undefined at θ = π")?);
        Ok(())
    }
}

impl ElementInfo for BallSocketResistance {
    fn type_name(&self) -> &str {
        crate::TYPE.name
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The sinus' pole (the fixed joint frame's z axis) and the moving member's long axis (unit
    /// segments about the origin, placed by the viewer).
    fn drawing(&self, x: &[f64]) -> Drawing {
        self.carried.z_axes_drawing(x)
    }

    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        self.carried = Carried::new(&self.frames, x0)?;
        let [p0, q0, psi0] = self
            .joint_angles(x0)
            .map_err(|e| ElementError::Degenerate(format!("the initial configuration has no joint angles: {e}")))?;
        self.twist0 = (psi0.cos(), psi0.sin());
        self.law.set_reference([p0, q0, psi0]);
        Ok(())
    }
}

impl Element for BallSocketResistance {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        check_len(x.len())?;
        let order = out.order();
        let [xf, yf, zf] = &self.carried.fixed;
        let [xm, ym, zm] = &self.carried.moving;
        let u = [Term::product(x, xf, zm, order), Term::product(x, yf, zm, order), Term::product(x, zf, zm, order)];
        let sw = swing_derivatives([u[0].v, u[1].v, u[2].v])?;
        let reference = self.law.reference();
        for k in 0..2 {
            out.e[k] = sw.value[k] - reference[k];
            if order >= Order::Gradient {
                // chain rule through u: ∇e = Σ_a e_a ∇u_a, ∇²e = Σ_a e_a ∇²u_a + Σ_ab e_ab ∇u_a ∇u_bᵀ
                let mut g = [0.0; N];
                let mut h = [0.0; N * N];
                for a in 0..3 {
                    let w = sw.grad[k][a];
                    g.iter_mut().zip(&u[a].g).for_each(|(gi, ui)| *gi += w * ui);
                    if order >= Order::Hessian {
                        h.iter_mut().zip(&u[a].h).for_each(|(hi, ui)| *hi += w * ui);
                        for b in 0..3 {
                            let wab = sw.hess[k][a][b];
                            for i in 0..N {
                                let s = wab * u[a].g[i];
                                for j in 0..N {
                                    h[i * N + j] += s * u[b].g[j];
                                }
                            }
                        }
                    }
                }
                store(out, k, &g, &h);
            }
        }
        // twist relative to the reference: atan2(y, x) with y, x linear in four products
        let (rxx, ryy) = (Term::product(x, xf, xm, order), Term::product(x, yf, ym, order));
        let (ryx, rxy) = (Term::product(x, yf, xm, order), Term::product(x, xf, ym, order));
        let (c0, s0) = self.twist0;
        // sin(ψ − ψ0) ∝ S c0 − C s0, cos(ψ − ψ0) ∝ C c0 + S s0, with S = R_yx − R_xy, C = R_xx + R_yy
        let ty = Term::combine(&[(c0, &ryx), (-c0, &rxy), (-s0, &rxx), (-s0, &ryy)]);
        let tx = Term::combine(&[(c0, &rxx), (c0, &ryy), (s0, &ryx), (-s0, &rxy)]);
        let r2 = tx.v * tx.v + ty.v * ty.v;
        if !(r2 > 0.0) || !r2.is_finite() {
            return Err(ElementError::Domain("the twist is undefined at θ = π".into()));
        }
        out.e[2] = ty.v.atan2(tx.v);
        if order >= Order::Gradient {
            // ψ = Im log(x + i y): ∇ψ = (x∇y − y∇x)/r², ∇²ψ = Im(∇²z/z − ∇z∇zᵀ/z²)
            let (xv, yv) = (tx.v, ty.v);
            let mut g = [0.0; N];
            let mut h = [0.0; N * N];
            for i in 0..N {
                g[i] = (xv * ty.g[i] - yv * tx.g[i]) / r2;
            }
            if order >= Order::Hessian {
                let (a, b) = (xv * xv - yv * yv, 2.0 * xv * yv);
                let r4 = r2 * r2;
                for i in 0..N {
                    for j in 0..N {
                        let k = i * N + j;
                        let first = (xv * ty.h[k] - yv * tx.h[k]) / r2;
                        let im_zz = tx.g[i] * ty.g[j] + ty.g[i] * tx.g[j];
                        let re_zz = tx.g[i] * tx.g[j] - ty.g[i] * ty.g[j];
                        h[k] = first - (a * im_zz - b * re_zz) / r4;
                    }
                }
            }
            store(out, 2, &g, &h);
        }
        Ok(())
    }

    fn law(&self) -> Option<&dyn Law> {
        Some(&self.law)
    }
}

impl Deformations for BallSocketResistance {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        self.angles_generic(x, e, self.twist0)?;
        let reference = self.law.reference();
        e[0] -= c::<T>(reference[0]);
        e[1] -= c::<T>(reference[1]);
        Ok(())
    }
}
