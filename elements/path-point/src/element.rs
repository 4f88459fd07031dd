//! The PATH-POINT element: layout, initialization, evaluation with exact derivatives.

use mollier_core::element::{
    Drawing, Element, ElementError, ElementInfo, ElementState, Evaluation, Layout, ModeInfo, NodeKind, Order, Rates,
};
use mollier_core::geometry::{Vec3, quat_at, quat_conjugate, quat_mul, rotate, rotate_rates, vec3_at};
use mollier_core::registry::Frame;
use mollier_core::scalar::{Real, c};
use mollier_core::{HyperHyperDual64, Jet4, NodeId};

use crate::function::Function;

/// Where the point is on its body (m, body frame).
#[derive(Clone, Debug, PartialEq)]
pub enum Location {
    /// A fixed offset.
    Fixed(Vec3),
    /// Each component a function of the coordinate (m of the coordinate's SI value).
    Moving(Box<[Function; 3]>),
}

/// The coordinate a path point follows: a mode of a joint element, measured by a copy of it.
#[derive(Debug)]
pub struct Coordinate {
    /// The copy of the joint element, built from the joint's own parameters.
    pub element: Box<dyn Element>,
    /// Its mode that is the coordinate's change.
    pub mode: usize,
    /// The coordinate's value in the initial configuration (SI).
    pub at: f64,
    /// Coordinate per unit of the mode: `q = at + scale · mode`.
    pub scale: f64,
}

/// A PATH-POINT element: holds a position node at a location on a body that depends on a joint's
/// coordinate (OpenSim's `MovingPathPoint`), and, with an active range, only while the coordinate
/// is in it (OpenSim's `ConditionalPathPoint`); outside it, midway between its neighbours on the
/// path, where it leaves the path's length that of the path without it.
#[derive(Debug)]
pub struct PathPoint {
    layout: Layout,
    location: Location,
    coordinate: Coordinate,
    active: Option<[f64; 2]>,
    /// Offset and length of the joint's coordinates in the local vector.
    joint: (usize, usize),
}

/// The local coordinates' offsets: the point, the body's origin and orientation.
const POINT: usize = 0;
const ORIGIN: usize = 3;
const LAMBDA: usize = 6;

impl PathPoint {
    /// A path point `point` on `body` at `location`, following `coordinate`; with `active`
    /// (`[min, max]` of the coordinate, SI) and `between` (the path's points before and after it),
    /// conditional.
    pub fn new(
        point: NodeId,
        body: Frame,
        location: Location,
        coordinate: Coordinate,
        conditional: Option<([f64; 2], [NodeId; 2])>,
    ) -> Self {
        let mut nodes = vec![
            (point, NodeKind::Position),
            (body.position, NodeKind::Position),
            (body.orientation, NodeKind::Orientation),
        ];
        let joint_nodes = coordinate.element.layout().nodes().to_vec();
        let start = 10;
        let n: usize = joint_nodes.iter().map(|(_, k)| k.dim()).sum();
        nodes.extend(joint_nodes);
        if let Some((_, between)) = conditional {
            nodes.extend(between.map(|b| (b, NodeKind::Position)));
        }
        let modes = vec![ModeInfo::length("x"), ModeInfo::length("y"), ModeInfo::length("z")];
        Self {
            layout: Layout::new(nodes, modes),
            location,
            coordinate,
            active: conditional.map(|(r, _)| r),
            joint: (start, n),
        }
    }

    /// The coordinate's value at local coordinates `x`, with its gradient and Hessian over the
    /// joint's coordinates (as `order` asks).
    fn coordinate(&self, x: &[f64], order: Order) -> Result<(f64, Vec<f64>, Vec<f64>), ElementError> {
        let c = &self.coordinate;
        let (o, n) = self.joint;
        let m = c.element.layout().n_modes();
        let mut e = vec![0.0; m];
        let mut de = vec![0.0; if order >= Order::Gradient { m * n } else { 0 }];
        let mut d2e = vec![0.0; if order >= Order::Hessian { m * n * n } else { 0 }];
        let mut state = ElementState::default();
        c.element.evaluate(&x[o..o + n], &mut Evaluation::new(order, n, &mut e, &mut de, &mut d2e, &mut state))?;
        let k = c.mode;
        let g = de.get(k * n..(k + 1) * n).map_or(Vec::new(), |g| g.iter().map(|v| c.scale * v).collect());
        let h = d2e.get(k * n * n..(k + 1) * n * n).map_or(Vec::new(), |h| h.iter().map(|v| c.scale * v).collect());
        Ok((c.at + c.scale * e[k], g, h))
    }

    #[cfg(test)]
    pub(crate) fn location_for_tests(&self) -> Location {
        self.location.clone()
    }

    pub(crate) fn is_active(&self, q: f64) -> bool {
        // OpenSim's ConditionalPathPoint::isActive: min <= q <= max
        self.active.is_none_or(|[lo, hi]| lo <= q && q <= hi)
    }

    /// The point the offset is measured from: the body's origin, or midway between the
    /// neighbours while inactive; with the weights of the nodes it is made of.
    fn base(&self, x: &[f64], active: bool) -> (Vec3, Vec<(usize, f64)>) {
        if active {
            return (vec3_at(x, ORIGIN), vec![(ORIGIN, 1.0)]);
        }
        let a = self.joint.0 + self.joint.1;
        let (p, q) = (vec3_at(x, a), vec3_at(x, a + 3));
        ([0, 1, 2].map(|i| 0.5 * (p[i] + q[i])), vec![(a, 0.5), (a + 3, 0.5)])
    }

    /// The location on the body at coordinate `q` with its first and second derivatives, per
    /// component.
    fn location(&self, q: f64, active: bool) -> [[f64; 3]; 3] {
        match (&self.location, active) {
            (_, false) => [[0.0; 3]; 3],
            (Location::Fixed(v), true) => v.map(|c| [c, 0.0, 0.0]),
            (Location::Moving(fs), true) => [0, 1, 2].map(|k| fs[k].derivatives(q)),
        }
    }

    /// The coordinate over a jet scalar from the joint element's jets (`order`: its
    /// `third_order` or `fourth_order`); `None` where the joint gives none.
    fn coordinate_jet<T: Real>(
        &self,
        x: &[T],
        order: impl Fn(&dyn Element, &[T], &mut [T]) -> Result<bool, ElementError>,
    ) -> Result<Option<T>, ElementError> {
        let co = &self.coordinate;
        let (jo, jn) = self.joint;
        let mut ej = vec![c::<T>(0.0); co.element.layout().n_modes()];
        if !order(co.element.as_ref(), &x[jo..jo + jn], &mut ej)? {
            return Ok(None);
        }
        Ok(Some(ej[co.mode] * co.scale + co.at))
    }

    /// The modes `e_k = λᵀ Q_k(p − b) λ − t_k(q)` (m) over a jet scalar at local coordinates `x`
    /// (`n_local`) and the coordinate's jet `q`; the branches (active or not, a spline's piece)
    /// taken on real parts, so that every derivative is exact.
    fn offsets<T: Real>(&self, x: &[T], q: T, e: &mut [T]) {
        let active = self.is_active(q.re());
        let re: Vec<f64> = x.iter().map(|v| v.re()).collect();
        let (_, weights) = self.base(&re, active);
        let b = [0, 1, 2].map(|i| weights.iter().fold(c::<T>(0.0), |s, &(o, w)| s + x[o + i] * w));
        let d = [0, 1, 2].map(|i| x[POINT + i] - b[i]);
        for (k, ek) in e.iter_mut().enumerate().take(3) {
            let mut s = c::<T>(0.0);
            for (j, dj) in d.iter().enumerate() {
                let qk = quad(k, &[0, 1, 2].map(|i| if i == j { 1.0 } else { 0.0 }));
                for a in 0..4 {
                    for bb in 0..4 {
                        if qk[a][bb] != 0.0 {
                            s += *dj * x[LAMBDA + a] * x[LAMBDA + bb] * qk[a][bb];
                        }
                    }
                }
            }
            let t = match (&self.location, active) {
                (_, false) => c::<T>(0.0),
                (Location::Fixed(v), true) => c::<T>(v[k]),
                (Location::Moving(fs), true) => fs[k].at(q),
            };
            *ek = s - t;
        }
    }

    /// Where the point belongs at local coordinates `x` (m, global): for messages.
    fn target(&self, x: &[f64]) -> Result<Vec3, ElementError> {
        let q = self.coordinate(x, Order::Value)?.0;
        let active = self.is_active(q);
        let (b, _) = self.base(x, active);
        let t = self.location(q, active).map(|c| c[0]);
        let l = quat_at(x, LAMBDA);
        let s: f64 = l.iter().map(|v| v * v).sum();
        let r = rotate(&l, &t);
        Ok([0, 1, 2].map(|i| b[i] + r[i] / s))
    }
}

/// `Q_k(d)`: the symmetric 4 x 4 matrix with `λᵀ Q_k(d) λ = (R(λ)ᵀ d)_k`, linear in `d`.
fn quad(k: usize, d: &Vec3) -> [[f64; 4]; 4] {
    let mut q = [[0.0; 4]; 4];
    q[0][0] = d[k];
    for i in 1..4 {
        q[i][i] -= d[k];
    }
    for j in 0..3 {
        q[k + 1][j + 1] += d[j];
        q[j + 1][k + 1] += d[j];
    }
    // 2 λ0 v·(e_k × d)
    let mut ek = [0.0; 3];
    ek[k] = 1.0;
    let w = [ek[1] * d[2] - ek[2] * d[1], ek[2] * d[0] - ek[0] * d[2], ek[0] * d[1] - ek[1] * d[0]];
    for i in 0..3 {
        q[0][i + 1] += w[i];
        q[i + 1][0] += w[i];
    }
    q
}

fn times(q: &[[f64; 4]; 4], l: &[f64; 4]) -> [f64; 4] {
    [0, 1, 2, 3].map(|i| (0..4).map(|j| q[i][j] * l[j]).sum())
}

impl ElementInfo for PathPoint {
    fn type_name(&self) -> &str {
        "path-point"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let (o, n) = self.joint;
        self.coordinate.element.initialize(&x0[o..o + n])?;
        let want = self.target(x0)?;
        let at = vec3_at(x0, POINT);
        let off = (0..3).map(|i| (at[i] - want[i]).powi(2)).sum::<f64>().sqrt();
        // the file's numbers and the body's pose carry about 1e-15 m of rounding
        if !(off <= 1e-9) {
            return Err(ElementError::Degenerate(format!(
                "the point is {off:.3e} m from where its location puts it in the initial configuration: place it at [{}, {}, {}] m (global)",
                want[0], want[1], want[2]
            )));
        }
        Ok(())
    }
    /// Nothing: the point is drawn as part of the paths through it.
    fn drawing(&self, _x: &[f64]) -> Drawing {
        Drawing::default()
    }
}

impl Element for PathPoint {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let (q, gq, hq) = self.coordinate(x, out.order())?;
        let active = self.is_active(q);
        let (b, weights) = self.base(x, active);
        let t = self.location(q, active);
        let p = vec3_at(x, POINT);
        let d = [0, 1, 2].map(|i| p[i] - b[i]);
        let l = quat_at(x, LAMBDA);
        let (jo, jn) = self.joint;
        for k in 0..3 {
            let qk = quad(k, &d);
            let ql = times(&qk, &l);
            out.e[k] = (0..4).map(|i| l[i] * ql[i]).sum::<f64>() - t[k][0];
            let mut dk = out.mode(k);
            if !dk.has_grad() {
                continue;
            }
            // ∂/∂p: the body's axis k, λᵀ Q_k(e_j) λ; the base takes it with minus its weights
            let u = rotate(&l, &[0, 1, 2].map(|j| if j == k { 1.0 } else { 0.0 }));
            let u = [u[0], u[1], u[2]];
            // the k-th column of R(λ) is the k-th row of R(λ)ᵀ: (R e_k)_j = λᵀ Q_k(e_j) λ
            dk.add_grad(POINT, &u, 1.0);
            for (o, w) in &weights {
                dk.add_grad(*o, &u, -w);
            }
            dk.add_grad(LAMBDA, &ql, 2.0);
            dk.add_grad(jo, &gq, -t[k][1]);
            if !dk.has_hess() {
                continue;
            }
            let q2 = [0, 1, 2, 3].map(|i| [0, 1, 2, 3].map(|j| 2.0 * qk[i][j]));
            dk.add_hess_diag(LAMBDA, 4, q2.as_flattened(), 1.0);
            // ∂²/∂λ∂d_j = 2 Q_k(e_j) λ
            let mut cross = [0.0; 12];
            for j in 0..3 {
                let mut e = [0.0; 3];
                e[j] = 1.0;
                let c = times(&quad(k, &e), &l);
                for i in 0..4 {
                    cross[i * 3 + j] = 2.0 * c[i];
                }
            }
            dk.add_hess_cross(LAMBDA, 4, POINT, 3, &cross, 1.0);
            for (o, w) in &weights {
                dk.add_hess_cross(LAMBDA, 4, *o, 3, &cross, -w);
            }
            // − (t″ ∇q ∇qᵀ + t′ ∇²q) over the joint's coordinates
            let mut h = vec![0.0; jn * jn];
            for i in 0..jn {
                for j in 0..jn {
                    h[i * jn + j] = t[k][2] * gq[i] * gq[j] + t[k][1] * hq[i * jn + j];
                }
            }
            dk.add_hess_diag(jo, jn, &h, -1.0);
        }
        Ok(())
    }

    /// The modes `λᵀ Q_k(p − b) λ − t_k(q)` over hyper-hyper-dual numbers, `q` from the joint's
    /// own third order.
    fn third_order(&self, x: &[HyperHyperDual64], e: &mut [HyperHyperDual64]) -> Result<bool, ElementError> {
        let Some(q) = self.coordinate_jet(x, |el, xj, ej| el.third_order(xj, ej))? else { return Ok(false) };
        self.offsets(x, q, e);
        Ok(true)
    }

    /// The same over [`Jet4`], `q` from the joint's own fourth order.
    fn fourth_order(&self, x: &[Jet4], e: &mut [Jet4]) -> Result<bool, ElementError> {
        let Some(q) = self.coordinate_jet(x, |el, xj, ej| el.fourth_order(xj, ej))? else { return Ok(false) };
        self.offsets(x, q, e);
        Ok(true)
    }

    /// The point from its body and its joint with its offsets held, `x_P = b + R(λ) (e + t(q))`;
    /// a conditional point off the path from its neighbours, where they are known.
    fn placement(&self, known: u64, given: u64) -> u64 {
        // the point, its body's origin and orientation, the joint's nodes; the neighbours after
        let own = (1u64 << (self.layout.nodes().len() - 2 * usize::from(self.active.is_some())).min(64)) - 2;
        (known & 1 == 0 && known & own == own && given & 0b111 == 0b111) as u64
    }

    fn place(&self, x: &mut [f64], known: u64, e: &[f64]) -> Result<bool, ElementError> {
        let q = self.coordinate(x, Order::Value)?.0;
        let active = self.is_active(q);
        let n = self.layout.nodes().len();
        if !active && (known >> (n - 2)) & 0b11 != 0b11 {
            return Ok(false);
        }
        let (b, _) = self.base(x, active);
        let t = self.location(q, active);
        let l = quat_at(x, LAMBDA);
        // R(λ)ᵀ d = e + t, R(λ) = |λ|² times a rotation
        let s: f64 = l.iter().map(|v| v * v).sum();
        let r = rotate(&l, &[0, 1, 2].map(|k| e[k] + t[k][0]));
        for i in 0..3 {
            x[POINT + i] = b[i] + r[i] / (s * s);
        }
        Ok(true)
    }

    /// The rates of [`Element::place`]'s point, `x_P = b + R(λ) u / |λ|⁴` with `u = e + t(q)`:
    /// the base's, the body's turning ([`rotate_rates`]) and the location's along the
    /// coordinate, whose rates are the joint mode's `∇q ẋ` and `∇q ẍ + ẋᵀ ∇²q ẋ` (`|λ|` is
    /// constant on the motion: the norm is held).
    fn place_rates(&self, x: &[f64], known: u64, e: &[f64], r: Rates<'_>) -> Result<bool, ElementError> {
        let moving = matches!(self.location, Location::Moving(_));
        let (q, g, h) = self.coordinate(x, if moving { Order::Hessian } else { Order::Value })?;
        let active = self.is_active(q);
        let n = self.layout.nodes().len();
        if !active && (known >> (n - 2)) & 0b11 != 0b11 {
            return Ok(false);
        }
        let (_, weights) = self.base(x, active);
        let (mut vb, mut ab) = ([0.0; 3], [0.0; 3]);
        for &(o, w) in &weights {
            for i in 0..3 {
                vb[i] += w * r.v[o + i];
                ab[i] += w * r.a[o + i];
            }
        }
        // the coordinate's rates over the joint's coordinates
        let (o, nj) = self.joint;
        let (mut qd, mut qdd) = (0.0, 0.0);
        if moving {
            let (v, a) = (&r.v[o..o + nj], &r.a[o..o + nj]);
            for i in 0..nj {
                qd += g[i] * v[i];
                qdd += g[i] * a[i] + v[i] * (0..nj).map(|j| h[i * nj + j] * v[j]).sum::<f64>();
            }
        }
        let t = self.location(q, active);
        let u = [0, 1, 2].map(|k| e[k] + t[k][0]);
        let ud = [0, 1, 2].map(|k| r.ev[k] + t[k][1] * qd);
        let udd = [0, 1, 2].map(|k| r.ea[k] + t[k][2] * qd * qd + t[k][1] * qdd);
        let l = quat_at(x, LAMBDA);
        let (vl, al) = (quat_at(r.v, LAMBDA), quat_at(r.a, LAMBDA));
        let [ru_d, ru_dd] = rotate_rates([&l, &vl, &al], &u);
        let [rud_d, _] = rotate_rates([&l, &vl, &al], &ud);
        let (r_ud, r_udd) = (rotate(&l, &ud), rotate(&l, &udd));
        let s: f64 = l.iter().map(|v| v * v).sum();
        let w = 1.0 / (s * s);
        for i in 0..3 {
            r.v[POINT + i] = vb[i] + w * (ru_d[i] + r_ud[i]);
            r.a[POINT + i] = ab[i] + w * (ru_dd[i] + 2.0 * rud_d[i] + r_udd[i]);
        }
        Ok(true)
    }

    /// [`Element::place_rates`]' first derivatives for `k` columns: the coordinate's gradient
    /// over the joint's coordinates once (no Hessian), then per column the base's rate, the
    /// body's turning of `u` and the location's along the coordinate, `t′(q) ∇q · v`.
    fn place_jacobian(
        &self,
        x: &[f64],
        known: u64,
        e: &[f64],
        v: &mut [f64],
        ev: &[f64],
    ) -> Result<Option<bool>, ElementError> {
        let moving = matches!(self.location, Location::Moving(_));
        let (q, g, _) = self.coordinate(x, if moving { Order::Gradient } else { Order::Value })?;
        let active = self.is_active(q);
        let n = self.layout.nodes().len();
        if !active && (known >> (n - 2)) & 0b11 != 0b11 {
            return Ok(Some(false));
        }
        let (_, weights) = self.base(x, active);
        let t = self.location(q, active);
        let u = [0.0, e[0] + t[0][0], e[1] + t[1][0], e[2] + t[2][0]];
        let l = quat_at(x, LAMBDA);
        let conj = quat_conjugate(&l);
        let s: f64 = l.iter().map(|v| v * v).sum();
        let w = 1.0 / (s * s);
        let (o, nj) = self.joint;
        let nl = x.len();
        for (col, evc) in v.chunks_exact_mut(nl).zip(ev.chunks_exact(3)) {
            let qd: f64 = if moving { g.iter().zip(&col[o..o + nj]).map(|(a, b)| a * b).sum() } else { 0.0 };
            let mut vb = [0.0; 3];
            for &(b, wb) in &weights {
                (0..3).for_each(|i| vb[i] += wb * col[b + i]);
            }
            // d(R(λ) u)/dt = 2 vec(λ̇ ⊗ u ⊗ λ*) and R(λ) u̇
            let ru_d = quat_mul(&quat_mul(&quat_at(col, LAMBDA), &u), &conj);
            let ud = [0, 1, 2].map(|k| evc[k] + t[k][1] * qd);
            let r_ud = rotate(&l, &ud);
            for i in 0..3 {
                col[POINT + i] = vb[i] + w * (2.0 * ru_d[i + 1] + r_ud[i]);
            }
        }
        Ok(Some(true))
    }
}
