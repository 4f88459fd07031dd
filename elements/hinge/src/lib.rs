//! HINGE: a joint between two orientation nodes with three deformation modes (van der Helm 1994):
//! - `rotation`: the angle about the hinge axis (rad, periodic; the kernel keeps it continuous);
//! - `bending_y`, `bending_z`: misalignment of q's axis from p's, as the components about p's
//!   local y and z axes of `n_x^p × n_x^q` (to first order the rotation-vector components), zero
//!   for any rotation about the axis.
//!
//! With `n_i^p = R(λ_p) R0_p e_i` and `n_i^q = R(λ_q) R0_q e_i` the element triads (`x` = hinge
//! axis), both equal in the reference configuration:
//! ```text
//! rotation  = atan2(n_z^p·n_y^q − n_y^p·n_z^q,  n_y^p·n_y^q + n_z^p·n_z^q)
//! bending_y = −n_z^p · n_x^q
//! bending_z =  n_y^p · n_x^q
//! ```
//! The bendings measure q's axis in p's frame, so their derivatives do not depend on the
//! rotation angle: the joint is well posed at every angle. (The symmetric form
//! `(Rrel_xz − Rrel_zx)/2` loses its bending stiffness at a rotation of π; see
//! `docs/theory/kernel.md`.) The bendings vanish also when the axes are opposite, a spurious
//! branch: a configuration with `n_x^p · n_x^q <= 0` (misalignment of 90° or more) is outside the
//! element's domain and reported as such. An ideal hinge fixes the two bendings; the rotation is
//! an input, free, or fixed.
//!
//! Each mode is a weighted sum of products of a rotated p-triad vector and a rotated q-triad
//! vector; its gradient and Hessian are built in closed form on the stack (`closed`).

use mollier_core::NodeId;
use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, ElementState, Evaluation, Layout, ModeInfo, NodeKind,
    Rates,
};
use mollier_core::geometry::{
    Quat, Vec3, add, body_triad, cross, dot, mat_vec, quat_at, quat_conjugate, quat_mul, rotate, rotate_fixed,
    rotation, sub, triad, turned_rates,
};
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, atan2};

mod closed;
use closed::{Turned, add_gradient, add_hessian, moving_range, value};

/// A HINGE element.
#[derive(Clone, Debug)]
pub struct Hinge {
    layout: Layout,
    axis: Vec3,
    y_hint: Option<Vec3>,
    /// Element triad in the body frame of node p (columns x, y, z).
    tp: [Vec3; 3],
    /// Element triad in the body frame of node q.
    tq: [Vec3; 3],
    /// The triads as rotations (Euler parameters of the matrices whose columns they are): with
    /// the bendings 0, `λ_q = λ_p ⊗ τ_p ⊗ ρ_x(rotation) ⊗ τ_q⁻¹` ([`Element::place`]).
    tau: [Quat; 2],
}

impl Hinge {
    /// A hinge between orientation nodes `p` and `q` about `axis` (global frame, reference
    /// configuration); `y_hint` orients the local y axis (default: any perpendicular).
    pub fn new(p: NodeId, q: NodeId, axis: Vec3, y_hint: Option<Vec3>) -> Self {
        Self {
            layout: Layout::new(
                vec![(p, NodeKind::Orientation), (q, NodeKind::Orientation)],
                vec![ModeInfo::rotation("rotation"), ModeInfo::angle("bending_y"), ModeInfo::angle("bending_z")],
            ),
            axis,
            y_hint,
            tp: [[0.0; 3]; 3],
            tq: [[0.0; 3]; 3],
            tau: [[1.0, 0.0, 0.0, 0.0]; 2],
        }
    }
}

/// Slots of the layout: p's and q's orientation.
const SLOT_P: u64 = 1;
const SLOT_Q: u64 = 2;
/// All three modes held or inputs: the rotation and both bendings.
const ALL_MODES: u64 = 0b111;

impl ElementInfo for Hinge {
    fn type_name(&self) -> &str {
        "hinge"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let e = triad(&self.axis, self.y_hint.as_ref())
            .ok_or_else(|| ElementError::Degenerate("the axis is zero, or the y direction is parallel to it".into()))?;
        let (tp, tau_p) = body_triad(&quat_at(x0, 0), &e);
        let (tq, tau_q) = body_triad(&quat_at(x0, 4), &e);
        (self.tp, self.tq, self.tau) = (tp, tq, [tau_p, tau_q]);
        Ok(())
    }
    /// The axis as q carries it, `R(λ_q) n_x^q`, as a segment of unit length centred on the
    /// global origin: the element has no position, so the viewer moves the segment to the
    /// joint and scales it (docs/viewer.md).
    fn drawing(&self, x: &[f64]) -> Drawing {
        let l = quat_at(x, 4);
        // R(λ)/|λ|² is the rotation whatever the norm the solve left
        let s: f64 = l.iter().map(|v| v * v).sum();
        let half = rotate(&l, &self.tq[0]).map(|v| 0.5 * v / s);
        Drawing { lines: vec![vec![half.map(|v| -v), half]], shapes: Vec::new() }
    }
}

const FLIPPED: &str = "the hinge axes are misaligned by 90° or more";

impl Element for Hinge {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let (lp, lq) = (quat_at(x, 0), quat_at(x, 4));
        let [xp, yp, zp] = &self.tp;
        let [xq, yq, zq] = &self.tq;
        let (grad, hess) = {
            let d = out.mode(0);
            (d.has_grad(), d.has_hess())
        };
        // a node the kernel holds fixed (the ground's) needs no Hessian rows
        let moves = [0, 4].map(|o| !(o..o + 4).all(|i| out.fixed(i)));
        let range = moving_range(moves);
        // each rotated triad vector once, with its Jacobian when derivatives are asked for
        let jac = grad || hess;
        let (yp, zp) = (Turned::new(&lp, yp, jac), Turned::new(&lp, zp, jac));
        let (xq, yq, zq) = (Turned::new(&lq, xq, jac), Turned::new(&lq, yq, jac), Turned::new(&lq, zq, jac));
        if dot(&rotate(&lp, xp), &xq.r) <= 0.0 {
            return Err(ElementError::Domain(FLIPPED.into()));
        }
        // rotation = atan2(s, c)
        let s_terms = [(&zp, &yq, 1.0), (&yp, &zq, -1.0)];
        let c_terms = [(&yp, &yq, 1.0), (&zp, &zq, 1.0)];
        let (s, c) = (value(&s_terms), value(&c_terms));
        let bendings = [[(&zp, &xq, -1.0)], [(&yp, &xq, 1.0)]];
        out.e[0] = s.atan2(c);
        out.e[1] = value(&bendings[0]);
        out.e[2] = value(&bendings[1]);
        if !jac {
            return Ok(());
        }
        let r2 = s * s + c * c;
        let (mut ds, mut dc) = ([0.0; 8], [0.0; 8]);
        add_gradient(&s_terms, &mut ds);
        add_gradient(&c_terms, &mut dc);
        let d = out.mode(0);
        for i in 0..8 {
            d.grad[i] += (c * ds[i] - s * dc[i]) / r2;
        }
        if hess {
            // ∇²θ = (c ∇²s − s ∇²c)/r² − (a (∇c ∇sᵀ + ∇s ∇cᵀ) − b (∇c ∇cᵀ − ∇s ∇sᵀ))/r⁴, with
            // a = c² − s², b = 2 c s; the first part is the Hessian of the terms so weighted
            let (ws, wc) = (c / r2, -s / r2);
            let mut h = [0.0; 64];
            add_hessian(&[(&zp, &yq, ws), (&yp, &zq, -ws), (&yp, &yq, wc), (&zp, &zq, wc)], &mut h, moves);
            // a (∇c ∇sᵀ + ∇s ∇cᵀ) − b (∇c ∇cᵀ − ∇s ∇sᵀ) = ∇c pᵀ + ∇s qᵀ with p = a ∇s − b ∇c and
            // q = a ∇c + b ∇s: two products an entry and the divisions by r⁴ once a column
            let (a, b, r4) = (c * c - s * s, 2.0 * c * s, r2 * r2);
            let (mut p, mut q) = ([0.0; 8], [0.0; 8]);
            for j in range.clone() {
                p[j] = (a * ds[j] - b * dc[j]) / r4;
                q[j] = (a * dc[j] + b * ds[j]) / r4;
            }
            for i in range.clone() {
                for j in range.clone() {
                    d.hess[i * 8 + j] += h[i * 8 + j] - (dc[i] * p[j] + ds[i] * q[j]);
                }
            }
        }
        for (k, terms) in bendings.iter().enumerate() {
            let d = out.mode(k + 1);
            let mut g = [0.0; 8];
            add_gradient(terms, &mut g);
            for (v, gi) in d.grad.iter_mut().zip(g) {
                *v += gi;
            }
            if hess {
                add_hessian(terms, (&mut d.hess[..64]).try_into().expect("an 8 x 8 Hessian"), moves);
            }
        }
        Ok(())
    }

    /// Each term `(R_p a)·(R_q b)` of a mode changes by `ω_p·(r_a × r_b) − ω_q·(r_a × r_b)` for
    /// the triads' angular velocities `ω = 2 G(λ) λ̇ / |λ|²` and grows as `|λ|²` on each side,
    /// so its gradient is `2 (λ_p t + G_pᵀ m) / |λ_p|²` and `2 (λ_q t − G_qᵀ m) / |λ_q|²` with
    /// `t` its value and `m = r_a × r_b`: no Jacobian of a rotated vector (the rotation's `t`
    /// parts cancel, it does not grow).
    fn evaluate_gradient(
        &self,
        x: &[f64],
        e: &mut [f64],
        de: &mut [f64],
        _state: &mut ElementState,
    ) -> Result<(), ElementError> {
        let (lp, lq) = (quat_at(x, 0), quat_at(x, 4));
        let (rp, rq) = (rotation(&lp), rotation(&lq));
        let [xp, yp, zp] = self.tp.map(|u| mat_vec(&rp, &u));
        let [xq, yq, zq] = self.tq.map(|u| mat_vec(&rq, &u));
        if dot(&xp, &xq) <= 0.0 {
            return Err(ElementError::Domain(FLIPPED.into()));
        }
        let (s, c) = (dot(&zp, &yq) - dot(&yp, &zq), dot(&yp, &yq) + dot(&zp, &zq));
        let r2 = s * s + c * c;
        let (ms, mc) = (sub(&cross(&zp, &yq), &cross(&yp, &zq)), add(&cross(&yp, &yq), &cross(&zp, &zq)));
        // θ = atan2(s, c): ∇θ = (c ∇s − s ∇c) / r²
        let m_theta = [0, 1, 2].map(|i| (c * ms[i] - s * mc[i]) / r2);
        let (by, bz) = (-dot(&zp, &xq), dot(&yp, &xq));
        e.copy_from_slice(&[s.atan2(c), by, bz]);
        let modes = [(0.0, m_theta), (by, cross(&xq, &zp)), (bz, cross(&yp, &xq))];
        let (wp, wq) = (2.0 / dot4(&lp, &lp), 2.0 / dot4(&lq, &lq));
        for (k, (t, m)) in modes.iter().enumerate() {
            let (gp, gq) = (g_t_times(&lp, m), g_t_times(&lq, m));
            let row = &mut de[k * 8..(k + 1) * 8];
            for i in 0..4 {
                row[i] = wp * (lp[i] * t + gp[i]);
                row[4 + i] = wq * (lq[i] * t - gq[i]);
            }
        }
        Ok(())
    }

    /// With the bendings held, one node from the other: the hinge turns q's triad from p's
    /// about their common axis by the rotation, `R_q T_q = R_p T_p R_x(θ)`.
    fn placement(&self, known: u64, given: u64) -> u64 {
        if given & ALL_MODES != ALL_MODES {
            return 0;
        }
        match known & (SLOT_P | SLOT_Q) {
            SLOT_P => SLOT_Q,
            SLOT_Q => SLOT_P,
            _ => 0,
        }
    }

    fn place(&self, x: &mut [f64], known: u64, e: &[f64]) -> Result<bool, ElementError> {
        if e[1] != 0.0 || e[2] != 0.0 {
            return Ok(false);
        }
        let (s, c) = (0.5 * e[0]).sin_cos();
        let [tau_p, tau_q] = &self.tau;
        if known & SLOT_P != 0 {
            let turn = quat_mul(&quat_mul(tau_p, &[c, s, 0.0, 0.0]), &quat_conjugate(tau_q));
            let l = quat_mul(&quat_at(x, 0), &turn);
            x[4..8].copy_from_slice(&l);
        } else {
            let turn = quat_mul(&quat_mul(tau_q, &[c, -s, 0.0, 0.0]), &quat_conjugate(tau_p));
            let l = quat_mul(&quat_at(x, 4), &turn);
            x[0..4].copy_from_slice(&l);
        }
        Ok(true)
    }

    /// The placed node turns with the known one and about the axis
    /// ([`mollier_core::geometry::turned_rates`]; the axis in q's frame placing q, in p's
    /// placing p, turning p the other way).
    fn place_rates(&self, x: &[f64], known: u64, e: &[f64], r: Rates<'_>) -> Result<bool, ElementError> {
        if e[1] != 0.0 || e[2] != 0.0 {
            return Ok(false);
        }
        let (k, p, s, u) = if known & SLOT_P != 0 { (0, 4, 0.5, self.tq[0]) } else { (4, 0, -0.5, self.tp[0]) };
        let (lk, vk, ak) = (quat_at(x, k), quat_at(r.v, k), quat_at(r.a, k));
        let [vp, ap] = turned_rates([&lk, &vk, &ak], &quat_at(x, p), &u, [s * r.ev[0], s * r.ea[0]]);
        r.v[p..p + 4].copy_from_slice(&vp);
        r.a[p..p + 4].copy_from_slice(&ap);
        Ok(true)
    }
}

/// `G(λ)ᵀ m`, `G = [−v | λ0 I + ṽ]` ([`mollier_core::geometry::g_matrix`]): `(−v·m, λ0 m + m × v)`.
#[inline]
fn g_t_times(l: &Quat, m: &Vec3) -> Quat {
    let v = [l[1], l[2], l[3]];
    let mv = cross(m, &v);
    [-dot(&v, m), l[0] * m[0] + mv[0], l[0] * m[1] + mv[1], l[0] * m[2] + mv[2]]
}

/// `a·b` of four entries.
#[inline]
fn dot4(a: &Quat, b: &Quat) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

impl Deformations for Hinge {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        // each triad vector turned once (the seven products read six), by `f64` body vectors:
        // over the third-order dual numbers of `transfer3` this is most of the hinge's cost
        let [xp, yp, zp] = rotate_fixed(&quat_at(x, 0), &self.tp);
        let [xq, yq, zq] = rotate_fixed(&quat_at(x, 4), &self.tq);
        if dot(&xp, &xq).re() <= 0.0 {
            return Err(ElementError::Domain(FLIPPED.into()));
        }
        e[0] = atan2(dot(&zp, &yq) - dot(&yp, &zq), dot(&yp, &yq) + dot(&zp, &zq));
        e[1] = -dot(&zp, &xq);
        e[2] = dot(&yp, &xq);
        Ok(())
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let a = p.node("p", NodeKind::Orientation)?;
    let b = p.node("q", NodeKind::Orientation)?;
    let axis = p.vector("axis")?;
    if axis.iter().all(|v| *v == 0.0) {
        return Err(ParamError::new(p.path("axis"), "the axis must not be zero"));
    }
    let y = p.opt_vector("y_axis")?;
    Ok(Box::new(Hinge::new(a, b, axis, y)))
}

/// The `hinge` element type.
pub const TYPE: ElementType = ElementType {
    name: "hinge",
    summary: "joint between two orientations; modes: rotation about the axis, bending_y, bending_z (rad)",
    role: ElementRole::Joint,
    modes: &["rotation", "bending_y", "bending_z"],
    params: &[
        ParamDoc {
            name: "p",
            kind: ParamKind::Node(NodeKind::Orientation),
            required: true,
            doc: "orientation node (or body) on one side",
        },
        ParamDoc {
            name: "q",
            kind: ParamKind::Node(NodeKind::Orientation),
            required: true,
            doc: "orientation node (or body) on the other side",
        },
        ParamDoc {
            name: "axis",
            kind: ParamKind::Vector,
            required: true,
            doc: "hinge axis in the global frame of the initial configuration",
        },
        ParamDoc {
            name: "y_axis",
            kind: ParamKind::Vector,
            required: false,
            doc: "direction of the local y axis (made perpendicular to the axis); default: the global axis least aligned with the hinge axis",
        },
    ],
    build,
};

/// Register the `hinge` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::{Options, check_generic, evaluate};
    use mollier_core::element::Order;
    use mollier_core::geometry::{quat_from_axis_angle, quat_mul};

    fn hinge_at(l0: [f64; 4], l1: [f64; 4], axis: Vec3) -> (Hinge, Vec<f64>) {
        let x0: Vec<f64> = l0.iter().chain(&l1).copied().collect();
        let mut h = Hinge::new(NodeId::new(0), NodeId::new(1), axis, None);
        h.initialize(&x0).unwrap();
        (h, x0)
    }

    #[test]
    fn the_axis_is_drawn_as_q_carries_it() {
        // the drawn axis is R·axis, a unit segment about the origin
        let axis = [0.0, 0.6, 0.8];
        let turn = quat_from_axis_angle(&[1.0, 0.0, 0.0], 0.5 * std::f64::consts::PI);
        let (h, x0) = hinge_at([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], axis);
        let close = |d: Drawing, want: [[f64; 3]; 2]| {
            assert_eq!(d.lines.len(), 1);
            for (got, want) in d.lines[0].iter().zip(&want) {
                assert!((0..3).all(|a| (got[a] - want[a]).abs() < 1e-15), "{got:?} vs {want:?}");
            }
        };
        close(h.drawing(&x0), [[0.0, -0.3, -0.4], [0.0, 0.3, 0.4]]);
        // both turned a quarter turn about x (Euler parameters scaled by 2, as a solve may leave
        // them): the axis (0, 0.6, 0.8) becomes (0, -0.8, 0.6)
        let x: Vec<f64> = turn.iter().chain(&turn).map(|v| 2.0 * v).collect();
        close(h.drawing(&x), [[0.0, 0.4, -0.3], [0.0, -0.4, 0.3]]);
    }

    #[test]
    fn conformance() {
        let l0 = quat_from_axis_angle(&[0.3, 0.5, -0.2], 0.7);
        let l1 = quat_from_axis_angle(&[-0.6, 0.1, 0.4], 1.1);
        let (h, x0) = hinge_at(l0, l1, [0.2, -0.4, 0.9]);
        let opts = Options { amplitude: 0.6, ..Options::default() };
        let r = check_generic(&h, &x0, &opts).unwrap();
        assert!(r.dual.unwrap() < 1e-9, "{r:?}");
    }

    #[test]
    fn bending_is_well_posed_at_every_rotation() {
        // the bendings' gradients w.r.t. q's orientation keep full rank for any rotation angle
        let axis = [0.0, 0.0, 1.0];
        let (h, x0) = hinge_at([1.0, 0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], axis);
        for &angle in &[0.0, 1.0, 2.0, std::f64::consts::PI, 4.0] {
            let lq = quat_from_axis_angle(&axis, angle);
            let x: Vec<f64> = x0[..4].iter().chain(&lq).copied().collect();
            let (_, de, _) = evaluate(&h, &x, Order::Gradient).unwrap();
            // tilting q about the local y and z axes (global x and y here, the axis being z):
            // λ̇ = ½ (0, ω) ⊗ λ
            for (k, w) in [(1, [1.0, 0.0, 0.0]), (2, [0.0, 1.0, 0.0])] {
                let dl = quat_mul(&[0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]], &lq);
                let rate: f64 = (0..4).map(|i| de[k * 8 + 4 + i] * dl[i]).sum();
                assert!((rate - 1.0).abs() < 1e-12, "angle {angle}, mode {k}: {rate}");
            }
        }
    }

    /// The first-order evaluation against the whole one's gradient, with Euler parameters off
    /// unit norm (as a Newton iterate leaves them) and the bendings off 0, where the terms'
    /// growth with `|λ|²` enters.
    #[test]
    fn the_first_order_evaluation_is_the_whole_ones() {
        let l0 = quat_from_axis_angle(&[0.3, 0.5, -0.2], 0.7);
        let l1 = quat_from_axis_angle(&[-0.6, 0.1, 0.4], 1.1);
        let (h, _) = hinge_at(l0, l1, [0.2, -0.4, 0.9]);
        let tilt = quat_from_axis_angle(&[0.4, -0.7, 0.2], 0.3);
        for (sp, sq, turn) in [(1.0, 1.0, 0.0), (1.3, 0.8, 1.9), (0.7, 1.1, -2.6)] {
            // q turned about the (global) axis, then tilted off it
            let lq = quat_mul(&tilt, &quat_mul(&quat_from_axis_angle(&[0.2, -0.4, 0.9], turn), &l1));
            let x: Vec<f64> = l0.iter().map(|v| sp * v).chain(lq.iter().map(|v| sq * v)).collect();
            let (e, de, _) = evaluate(&h, &x, Order::Gradient).unwrap();
            let (mut e1, mut de1) = ([0.0; 3], [f64::NAN; 24]);
            h.evaluate_gradient(&x, &mut e1, &mut de1, &mut ElementState::default()).unwrap();
            assert!(e.iter().zip(&e1).all(|(a, b)| (a - b).abs() < 1e-15), "{e:?} vs {e1:?}");
            assert!(e1[1].abs() > 0.01 && e1[2].abs() > 0.01, "the bendings are off 0: {e1:?}");
            let worst = de.iter().zip(&de1).fold(0.0f64, |w, (a, b)| w.max((a - b).abs()));
            assert!(worst < 1e-14, "{sp} {sq} {turn}: {worst:e}");
        }
    }

    #[test]
    fn placed_nodes_take_the_given_rotation_exactly() {
        let l0 = quat_from_axis_angle(&[0.3, 0.5, -0.2], 0.7);
        let l1 = quat_from_axis_angle(&[-0.6, 0.1, 0.4], 1.1);
        let (h, x0) = hinge_at(l0, l1, [0.2, -0.4, 0.9]);
        assert_eq!(h.placement(SLOT_P, ALL_MODES), SLOT_Q);
        assert_eq!(h.placement(SLOT_Q, ALL_MODES), SLOT_P);
        // a free bending, or both nodes known: nothing to place
        assert_eq!(h.placement(SLOT_P, 0b101), 0);
        assert_eq!(h.placement(SLOT_P | SLOT_Q, ALL_MODES), 0);
        // the known node somewhere else, the other placed from it: the modes are the given ones
        let moved = quat_from_axis_angle(&[0.8, -0.1, 0.3], 2.3);
        for &angle in &[-3.0, -1.2, 0.0, 0.4, 2.9] {
            for known in [SLOT_P, SLOT_Q] {
                let mut x = x0.clone();
                let o = if known == SLOT_P { 0 } else { 4 };
                x[o..o + 4].copy_from_slice(&moved);
                assert!(h.place(&mut x, known, &[angle, 0.0, 0.0]).unwrap());
                let norm: f64 = x[4 - o..8 - o].iter().map(|v| v * v).sum();
                assert!((norm - 1.0).abs() < 1e-15, "{norm}");
                let (e, _, _) = evaluate(&h, &x, Order::Value).unwrap();
                assert!((e[0] - angle).abs() < 1e-14, "{angle}: {e:?}");
                assert!(e[1].abs() < 1e-15 && e[2].abs() < 1e-15, "{e:?}");
            }
        }
        // a bending held off 0 has no closed form here
        assert!(!h.place(&mut x0.clone(), SLOT_P, &[0.1, 0.01, 0.0]).unwrap());
    }

    #[test]
    fn rotation_about_the_axis_is_measured_exactly() {
        let axis = [0.0, 0.6, 0.8];
        let l0 = quat_from_axis_angle(&[1.0, 0.0, 0.0], 0.3);
        let (h, x0) = hinge_at(l0, l0, axis);
        for &angle in &[-3.0, -1.2, 0.0, 0.4, 2.9] {
            // turn node q about the hinge axis
            let lq = quat_mul(&quat_from_axis_angle(&axis, angle), &l0);
            let x: Vec<f64> = x0[..4].iter().chain(&lq).copied().collect();
            let (e, _, _) = evaluate(&h, &x, Order::Value).unwrap();
            assert!((e[0] - angle).abs() < 1e-14, "{e:?}");
            assert!(e[1].abs() < 1e-15 && e[2].abs() < 1e-15);
        }
        // a small turn about the local y axis shows as bending_y ≈ sin(angle)
        let y = mollier_core::geometry::perpendicular(&[0.0, 0.6, 0.8]);
        let lq = quat_mul(&quat_from_axis_angle(&y, 0.01), &l0);
        let x: Vec<f64> = x0[..4].iter().chain(&lq).copied().collect();
        let (e, _, _) = evaluate(&h, &x, Order::Value).unwrap();
        assert!((e[1] - 0.01f64.sin()).abs() < 1e-12 && e[0].abs() < 1e-12 && e[2].abs() < 1e-12, "{e:?}");
    }
}
