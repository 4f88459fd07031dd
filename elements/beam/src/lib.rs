//! BEAM: a spatial beam between two position nodes, with an orientation node at each end, and
//! six deformation modes (SPACAR; Jonker 1989), all lengths (m):
//! ```text
//! elongation  e1 = l − l0
//! torsion     e2 = (l0/2) (n_z^p · n_y^q − n_y^p · n_z^q)
//! bending_y_p e3 = −n_z^p · d        bending_y_q e4 =  n_z^q · d
//! bending_z_p e5 =  n_y^p · d        bending_z_q e6 = −n_y^q · d
//! ```
//! with `d = x_q − x_p`, `l = |d|`, and `n_i^p = R(λ_p) R0_p e_i` the element triad at node p
//! (local x along the beam in the reference configuration). A rigid bone is a BEAM with all six
//! modes fixed. The two ends may share one orientation node (a point rigidly attached to a body);
//! then only `elongation`, `bending_y_p` and `bending_z_p` are independent, and the other three
//! must be released.

use mollier_core::NodeId;
use mollier_core::element::{
    Deformations, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind, Rates,
};
use mollier_core::geometry::{
    Quat, Vec3, body_triad, dot, norm, quat_at, quat_conjugate, quat_mul, rotate, rotate_fixed, rotate_rates, sub,
    triad, turned_rates, vec3_at,
};
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, c};
use mollier_core::terms::{distance, dot_rd, dot_rr};

/// Local offsets: position p, orientation p, position q, orientation q.
const P: usize = 0;
const LP: usize = 3;
const Q: usize = 7;
const LQ: usize = 10;

/// Names of the six modes, in order.
pub const MODES: [&str; 6] = ["elongation", "torsion", "bending_y_p", "bending_y_q", "bending_z_p", "bending_z_q"];

/// A BEAM element.
#[derive(Clone, Debug)]
pub struct Beam {
    layout: Layout,
    y_hint: Option<Vec3>,
    l0: f64,
    /// Element triad (x, y, z) in the body frame of node p's orientation.
    tp: [Vec3; 3],
    /// Element triad in the body frame of node q's orientation.
    tq: [Vec3; 3],
    /// `elongation` measured along p's axis (`n_x^p · d − l0`) instead of as `|d| − l0`.
    along_p: bool,
    /// The triads as rotations (Euler parameters of the matrices whose columns they are), p's
    /// and q's: what [`Element::place`] turns q's orientation by.
    tau: [Quat; 2],
}

impl Beam {
    /// A beam from position `p` (orientation `lp`) to position `q` (orientation `lq`);
    /// `y_hint` orients the cross-section's y axis (default: the global axis least aligned with
    /// the beam).
    pub fn new(p: NodeId, lp: NodeId, q: NodeId, lq: NodeId, y_hint: Option<Vec3>) -> Self {
        Self {
            layout: Layout::new(
                vec![
                    (p, NodeKind::Position),
                    (lp, NodeKind::Orientation),
                    (q, NodeKind::Position),
                    (lq, NodeKind::Orientation),
                ],
                MODES.iter().map(|m| ModeInfo::length(*m)).collect(),
            ),
            y_hint,
            l0: 0.0,
            tp: [[0.0; 3]; 3],
            tq: [[0.0; 3]; 3],
            along_p: false,
            tau: [[1.0, 0.0, 0.0, 0.0]; 2],
        }
    }

    /// The same beam with its `elongation` measured along its axis at p, `n_x^p · d − l0`: signed,
    /// so that with the bendings at p held it is an exact prismatic joint whose translation may
    /// take any value, through and beyond `q` meeting `p` (where `|d| − l0` turns back).
    pub fn along_p(mut self) -> Self {
        self.along_p = true;
        self
    }

    /// Reference length (m).
    pub fn reference_length(&self) -> f64 {
        self.l0
    }
}

impl ElementInfo for Beam {
    fn type_name(&self) -> &str {
        "beam"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let d = sub(&vec3_at(x0, Q), &vec3_at(x0, P));
        let l = norm(&d);
        if !(l > 1e-12) {
            return Err(ElementError::Degenerate(format!("zero length ({l:e} m) in the reference configuration")));
        }
        let e = triad(&d, self.y_hint.as_ref())
            .ok_or_else(|| ElementError::Degenerate("the y direction is parallel to the beam".into()))?;
        self.l0 = l;
        let (tp, tau_p) = body_triad(&quat_at(x0, LP), &e);
        let (tq, tau_q) = body_triad(&quat_at(x0, LQ), &e);
        (self.tp, self.tq, self.tau) = (tp, tq, [tau_p, tau_q]);
        Ok(())
    }
    fn mode_reference(&self, k: usize) -> Option<f64> {
        (k == 0).then_some(self.l0)
    }
}

impl Element for Beam {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let [xp, yp, zp] = &self.tp;
        let [_, yq, zq] = &self.tq;
        let h = 0.5 * self.l0;
        let e1 = if self.along_p {
            dot_rd(&mut out.mode(0), x, LP, xp, P, Q, 1.0) - self.l0
        } else {
            distance(&mut out.mode(0), x, P, Q, 1.0)? - self.l0
        };
        let e2 = {
            let mut d = out.mode(1);
            dot_rr(&mut d, x, LP, zp, LQ, yq, h) + dot_rr(&mut d, x, LP, yp, LQ, zq, -h)
        };
        let e3 = dot_rd(&mut out.mode(2), x, LP, zp, P, Q, -1.0);
        let e4 = dot_rd(&mut out.mode(3), x, LQ, zq, P, Q, 1.0);
        let e5 = dot_rd(&mut out.mode(4), x, LP, yp, P, Q, 1.0);
        let e6 = dot_rd(&mut out.mode(5), x, LQ, yq, P, Q, -1.0);
        out.e.copy_from_slice(&[e1, e2, e3, e4, e5, e6]);
        Ok(())
    }

    /// q from p: with the bendings at p held at 0, `d` lies along p's axis, `l0 + elongation`
    /// long; q's orientation too, when it is a node of its own, from the torsion with q's
    /// bendings held at 0. Or p from q, both orientations known (a body hanging from a held
    /// point).
    fn placement(&self, known: u64, given: u64) -> u64 {
        let (p, lp, q, lq) = (1u64 << 0, 1u64 << 1, 1u64 << 2, 1u64 << 3);
        let at_p = 1 << 0 | 1 << 2 | 1 << 4;
        let at_q = 1 << 1 | 1 << 3 | 1 << 5;
        if given & at_p != at_p || known & lp == 0 {
            return 0;
        }
        match (known & p != 0, known & q != 0, known & lq != 0, given & at_q == at_q) {
            (true, false, true, _) => q,
            (true, false, false, true) => q | lq,
            (false, true, true, _) => p,
            _ => 0,
        }
    }

    fn place(&self, x: &mut [f64], known: u64, e: &[f64]) -> Result<bool, ElementError> {
        let length = self.l0 + e[0];
        if e[2] != 0.0 || e[4] != 0.0 || (!self.along_p && length < 0.0) {
            return Ok(false);
        }
        let lp = quat_at(x, LP);
        let axis = rotate(&lp, &self.tp[0]);
        if known & 1 << 0 == 0 {
            for i in 0..3 {
                x[P + i] = x[Q + i] - length * axis[i];
            }
            return Ok(true);
        }
        for i in 0..3 {
            x[Q + i] = x[P + i] + length * axis[i];
        }
        if known & 1 << 3 == 0 {
            // torsion = l0 sin φ for q's triad turned by φ about the axis from p's
            let sin = e[1] / self.l0;
            if e[3] != 0.0 || e[5] != 0.0 || sin.abs() >= 1.0 {
                return Ok(false);
            }
            let half = 0.5 * sin.asin();
            let turn =
                quat_mul(&quat_mul(&self.tau[0], &[half.cos(), half.sin(), 0.0, 0.0]), &quat_conjugate(&self.tau[1]));
            x[LQ..LQ + 4].copy_from_slice(&quat_mul(&lp, &turn));
        }
        Ok(true)
    }

    /// The rates of [`Element::place`]'s placement: the far end moves with the near one, the
    /// length and p's axis turning ([`rotate_rates`]); q's orientation turns with p's by the
    /// torsion's angle `φ = asin(e_torsion / l0)` ([`turned_rates`]).
    fn place_rates(&self, x: &[f64], known: u64, e: &[f64], r: Rates<'_>) -> Result<bool, ElementError> {
        let length = self.l0 + e[0];
        if e[2] != 0.0 || e[4] != 0.0 || (!self.along_p && length < 0.0) {
            return Ok(false);
        }
        let (lp, vp, ap) = (quat_at(x, LP), quat_at(r.v, LP), quat_at(r.a, LP));
        let axis = rotate(&lp, &self.tp[0]);
        let [axis_d, axis_dd] = rotate_rates([&lp, &vp, &ap], &self.tp[0]);
        // the placed end from the known one: q = p + L n, or p = q − L n
        let (from, to, sign) = if known & 1 << 0 == 0 { (Q, P, -1.0) } else { (P, Q, 1.0) };
        for i in 0..3 {
            let v = r.ev[0] * axis[i] + length * axis_d[i];
            let a = r.ea[0] * axis[i] + 2.0 * r.ev[0] * axis_d[i] + length * axis_dd[i];
            r.v[to + i] = r.v[from + i] + sign * v;
            r.a[to + i] = r.a[from + i] + sign * a;
        }
        if known & 1 << 0 == 0 || known & 1 << 3 != 0 {
            return Ok(true);
        }
        let sin = e[1] / self.l0;
        if e[3] != 0.0 || e[5] != 0.0 || sin.abs() >= 1.0 {
            return Ok(false);
        }
        // sin φ = e/l0: cos φ φ̇ = ė/l0, cos φ φ̈ − sin φ φ̇² = ë/l0
        let cos = (1.0 - sin * sin).sqrt();
        let phi_d = r.ev[1] / (self.l0 * cos);
        let phi_dd = (r.ea[1] / self.l0 + sin * phi_d * phi_d) / cos;
        let [vq, aq] = turned_rates([&lp, &vp, &ap], &quat_at(x, LQ), &self.tq[0], [0.5 * phi_d, 0.5 * phi_dd]);
        r.v[LQ..LQ + 4].copy_from_slice(&vq);
        r.a[LQ..LQ + 4].copy_from_slice(&aq);
        Ok(true)
    }
}

impl Deformations for Beam {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let (lp, lq) = (quat_at(x, LP), quat_at(x, LQ));
        let d = sub(&vec3_at(x, Q), &vec3_at(x, P));
        // the triads turned by `f64` body vectors (`rotate_fixed`: over the third-order dual
        // numbers of `transfer3` most of the beam's cost)
        let [nxp, nyp, nzp] = rotate_fixed(&lp, &self.tp);
        let [nyq, nzq] = rotate_fixed(&lq, &[self.tq[1], self.tq[2]]);
        e[0] = if self.along_p { dot(&nxp, &d) } else { norm(&d) } - c::<T>(self.l0);
        e[1] = c::<T>(0.5 * self.l0) * (dot(&nzp, &nyq) - dot(&nyp, &nzq));
        e[2] = -dot(&nzp, &d);
        e[3] = dot(&nzq, &d);
        e[4] = dot(&nyp, &d);
        e[5] = -dot(&nyq, &d);
        Ok(())
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let a = p.node("p", NodeKind::Position)?;
    let la = p.node("orientation_p", NodeKind::Orientation)?;
    let b = p.node("q", NodeKind::Position)?;
    let lb = p.node("orientation_q", NodeKind::Orientation)?;
    let y = p.opt_vector("y_axis")?;
    let beam = Beam::new(a, la, b, lb, y);
    Ok(Box::new(match p.get("elongation") {
        None => beam,
        Some(_) => match p.string("elongation")? {
            "length" => beam,
            "along_p" => beam.along_p(),
            other => {
                return Err(ParamError::new(p.path("elongation"), format!("unknown measure `{other}`"))
                    .with_hint("one of: length, along_p"));
            }
        },
    }))
}

/// The `beam` element type.
pub const TYPE: ElementType = ElementType {
    name: "beam",
    summary: "spatial beam between two points with an orientation at each end; modes: elongation, torsion and two bendings at each end (m)",
    role: ElementRole::Body,
    modes: &MODES,
    params: &[
        ParamDoc { name: "p", kind: ParamKind::Node(NodeKind::Position), required: true, doc: "first end point" },
        ParamDoc {
            name: "orientation_p",
            kind: ParamKind::Node(NodeKind::Orientation),
            required: true,
            doc: "orientation node (or body) at the first end",
        },
        ParamDoc { name: "q", kind: ParamKind::Node(NodeKind::Position), required: true, doc: "second end point" },
        ParamDoc {
            name: "orientation_q",
            kind: ParamKind::Node(NodeKind::Orientation),
            required: true,
            doc: "orientation node (or body) at the second end",
        },
        ParamDoc {
            name: "y_axis",
            kind: ParamKind::Vector,
            required: false,
            doc: "direction of the cross-section's y axis (made perpendicular to the beam); default: the global axis least aligned with the beam",
        },
        ParamDoc {
            name: "elongation",
            kind: ParamKind::Choice(&["length", "along_p"]),
            required: false,
            doc: "how `elongation` is measured: \"length\" (default), the distance from p to q minus its initial value; \"along_p\", the component of q − p along the beam's axis at p minus its initial value, signed: with the bendings at p held, an exact prismatic joint (a translation of any size, through q meeting p)",
        },
    ],
    build,
};

/// Register the `beam` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::{Options, check_generic, evaluate};
    use mollier_core::element::Order;
    use mollier_core::geometry::{quat_from_axis_angle, quat_mul};

    fn beam(lp: [f64; 4], lq: [f64; 4], shared: bool) -> (Beam, Vec<f64>) {
        let p = [0.1, 0.2, -0.1];
        let q = [0.9, 0.5, 0.3];
        let x0: Vec<f64> = p.iter().chain(&lp).chain(&q).chain(if shared { &lp } else { &lq }).copied().collect();
        let lqn = if shared { NodeId::new(1) } else { NodeId::new(3) };
        let mut b = Beam::new(NodeId::new(0), NodeId::new(1), NodeId::new(2), lqn, Some([0.0, 0.0, 1.0]));
        b.initialize(&x0).unwrap();
        (b, x0)
    }

    #[test]
    fn conformance() {
        let (b, x0) =
            beam(quat_from_axis_angle(&[0.2, 0.9, 0.1], 0.5), quat_from_axis_angle(&[0.7, -0.1, 0.4], -0.8), false);
        let r = check_generic(&b, &x0, &Options::default()).unwrap();
        assert!(r.dual.unwrap() < 1e-9, "{r:?}");
        let (b, x0) = beam(quat_from_axis_angle(&[0.2, 0.9, 0.1], 0.5), [1.0, 0.0, 0.0, 0.0], true);
        check_generic(&b, &x0, &Options::default()).unwrap();
    }

    #[test]
    fn placed_nodes_take_the_given_modes_exactly() {
        let lp = quat_from_axis_angle(&[0.2, 0.9, 0.1], 0.5);
        let lq = quat_from_axis_angle(&[0.7, -0.1, 0.4], -0.8);
        let moved = quat_from_axis_angle(&[-0.3, 0.4, 0.8], 1.9);
        let given = 0b11_1111;
        for (shared, along) in [(true, true), (true, false), (false, false)] {
            let (b, x0) = beam(lp, lq, shared);
            let b = if along { b.along_p() } else { b };
            let known = if shared { 0b1011 } else { 0b0011 };
            assert_eq!(b.placement(known, given), if shared { 0b0100 } else { 0b1100 });
            // both ends known, or a bending at p free: nothing to place
            assert_eq!(b.placement(known | 0b0100, given), 0);
            assert_eq!(b.placement(known, given & !0b100), 0);
            // p from q where both orientations are known
            assert_eq!(b.placement(0b1110, given), 0b0001);
            // neither end known: nothing
            assert_eq!(b.placement(0b1010, given), 0);
            let mut back = x0.clone();
            back[..3].copy_from_slice(&[5.0, 5.0, 5.0]);
            assert!(b.place(&mut back, 0b1110, &[0.0; 6]).unwrap());
            assert!(back.iter().zip(&x0).all(|(a, b)| (a - b).abs() < 1e-15), "{back:?}");
            let mut x = x0.clone();
            x[..3].copy_from_slice(&[-0.4, 0.3, 0.2]);
            x[3..7].copy_from_slice(&moved);
            if shared {
                x[10..14].copy_from_slice(&moved);
            }
            // the torsion's closed form only where q's orientation is placed
            let want = [0.13, if shared { 0.0 } else { 0.05 }, 0.0, 0.0, 0.0, 0.0];
            assert!(b.place(&mut x, known, &want).unwrap());
            let (e, _, _) = evaluate(&b, &x, Order::Value).unwrap();
            for k in [0, 2, 4] {
                assert!((e[k] - want[k]).abs() < 1e-15, "{shared} {along}: {e:?}");
            }
            if !shared {
                for k in [1, 3, 5] {
                    assert!((e[k] - want[k]).abs() < 1e-15, "{e:?}");
                }
            }
            // a bending at p held off 0: no closed form
            assert!(!b.place(&mut x, known, &[0.1, 0.0, 0.01, 0.0, 0.0, 0.0]).unwrap());
        }
    }

    #[test]
    fn along_p_conforms_and_is_signed() {
        let lp = quat_from_axis_angle(&[0.2, 0.9, 0.1], 0.5);
        let (b, x0) = beam(lp, quat_from_axis_angle(&[0.7, -0.1, 0.4], -0.8), false);
        let b = b.along_p();
        let r = check_generic(&b, &x0, &Options::default()).unwrap();
        assert!(r.dual.unwrap() < 1e-9, "{r:?}");
        // q moved along p's axis through p and beyond: the elongation is the signed move
        let axis: Vec3 = {
            let d = sub(&vec3_at(&x0, Q), &vec3_at(&x0, P));
            let n = norm(&d);
            d.map(|v| v / n)
        };
        let l = b.reference_length();
        for s in [-0.5, -1.0, -1.5, -3.0 * l, 0.25] {
            let mut x = x0.clone();
            for i in 0..3 {
                x[Q + i] += s * axis[i];
            }
            let (e, _, _) = evaluate(&b, &x, Order::Value).unwrap();
            assert!((e[0] - s).abs() < 1e-14 && e[2].abs() < 1e-14 && e[4].abs() < 1e-14, "{s}: {e:?}");
        }
    }

    #[test]
    fn twist_and_symmetric_bending() {
        let l0 = [1.0, 0.0, 0.0, 0.0];
        let (b, x0) = beam(l0, l0, false);
        let ex: Vec3 = {
            let d = sub(&vec3_at(&x0, Q), &vec3_at(&x0, P));
            let n = norm(&d);
            d.map(|v| v / n)
        };
        let l = b.reference_length();
        // a pure twist of the q end by ψ gives torsion = l0 sin ψ
        let psi = 0.3;
        let mut x = x0.clone();
        x[LQ..LQ + 4].copy_from_slice(&quat_from_axis_angle(&ex, psi));
        let (e, _, _) = evaluate(&b, &x, Order::Value).unwrap();
        assert!((e[1] - l * psi.sin()).abs() < 1e-14, "{e:?}");
        assert!(
            e[0].abs() < 1e-15 && e[2].abs() < 1e-15 && e[3].abs() < 1e-15 && e[4].abs() < 1e-15 && e[5].abs() < 1e-15
        );
        // bending in a circular arc (equal and opposite end rotations about the local y axis,
        // which the y hint puts near the global z) gives equal bending_y at both ends
        let ey = [0.0, 0.0, 1.0];
        let ey = {
            let p = sub(&ey, &ex.map(|v| v * dot(&ey, &ex)));
            let n = norm(&p);
            p.map(|v| v / n)
        };
        let th = 0.02;
        let mut x = x0.clone();
        x[LP..LP + 4].copy_from_slice(&quat_mul(&quat_from_axis_angle(&ey, th), &l0));
        x[LQ..LQ + 4].copy_from_slice(&quat_mul(&quat_from_axis_angle(&ey, -th), &l0));
        let (e, _, _) = evaluate(&b, &x, Order::Value).unwrap();
        assert!((e[2] - e[3]).abs() < 1e-15 && (e[2] + l * th.sin()).abs() < 1e-14, "{e:?}");
        assert!(e[4].abs() < 1e-15 && e[5].abs() < 1e-15 && e[1].abs() < 1e-15, "{e:?}");
    }
}
