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
//! Derivatives: by the envelope theorem, the gradient of `L` is that of its straight segments
//! with the contact points held fixed on their bodies. The Hessian is exact: analytic for spheres
//! and cylinders, through the implicit function theorem for ellipsoids and for the free points
//! (a Schur complement). Lift-off and touch-down keep `L` and its gradient continuous.
//!
//! Local coordinates: the path's points in order (`p`, the via points, `q`; 3 each), then each
//! obstacle body's origin (3) and orientation (4); every node once, in order of first use.

mod draw;
pub mod ellipsoid;
pub mod geodesic;
pub mod ode;
pub mod span;

use mollier_core::NodeId;
use mollier_core::element::{
    Deformations, Derivs, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Quat, Vec3, cross, dot, lift, norm, quat_at, rotate, sub, vec3_at};
use mollier_core::registry::{ElementType, Frame, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, c};
use mollier_surface::frame::{self, BodySlots, ShapeFrame};

pub use geodesic::Ellipsoid;
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
    l0: f64,
}

/// Per-evaluation warm starts: the ellipsoid solutions and the free points.
#[derive(Clone, Debug, Default)]
struct PathState {
    warm: Vec<ellipsoid::Warm>,
    knots: Vec<Option<Vec<Vec3>>>,
}

/// What the `f64` evaluation chose, for the dual-number version.
#[derive(Clone, Debug)]
enum Hint {
    Straight,
    Wrapped(bool),
    Ellipsoid(Option<ellipsoid::Solved>),
}

#[derive(Clone, Debug, Default)]
struct SegmentHint {
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

fn add_point(nodes: &mut Vec<(NodeId, NodeKind)>, id: NodeId, kind: NodeKind) -> usize {
    if let Some(i) = nodes.iter().position(|&(n, k)| n == id && k == kind) {
        return i;
    }
    nodes.push((id, kind));
    nodes.len() - 1
}

impl CurvedTruss {
    /// A path through the position nodes `points` (`p`, via points…, `q`; at least two) over
    /// `obstacles`, which act in the order given within each segment.
    pub fn new(points: &[NodeId], obstacles: &[Obstacle]) -> Result<Self, ElementError> {
        if points.len() < 2 {
            return Err(ElementError::Degenerate("a path needs at least two points".into()));
        }
        let mut nodes = Vec::new();
        let point_slots: Vec<usize> = points.iter().map(|&n| add_point(&mut nodes, n, NodeKind::Position)).collect();
        let mut body_slots = Vec::new();
        for ob in obstacles {
            let o = add_point(&mut nodes, ob.body.position, NodeKind::Position);
            let l = add_point(&mut nodes, ob.body.orientation, NodeKind::Orientation);
            body_slots.push((o, l));
        }
        let layout = Layout::new(nodes, vec![ModeInfo::length("elongation")]);
        let nseg = points.len() - 1;
        let mut segments = vec![Vec::new(); nseg];
        let mut placed = Vec::new();
        for (k, ob) in obstacles.iter().enumerate() {
            if ob.segment >= nseg {
                return Err(ElementError::Degenerate(format!(
                    "obstacle {k} is on segment {}, but the path has {nseg} segment(s)",
                    ob.segment
                )));
            }
            let geo = match ob.shape {
                Shape::Sphere { radius } | Shape::Cylinder { radius, .. } => {
                    if !(radius > 0.0 && radius.is_finite()) {
                        return Err(ElementError::Degenerate(format!("obstacle {k}: radius must be positive")));
                    }
                    None
                }
                Shape::Ellipsoid { semi_axes } => {
                    mollier_surface::distance::check_axes(&semi_axes)?;
                    Some(Ellipsoid::new(semi_axes))
                }
            };
            if let Shape::Cylinder { side: Side::Toward(d), .. } = ob.shape {
                if !((d[0].hypot(d[1]) - 1.0).abs() < 1e-9) {
                    return Err(ElementError::Degenerate(format!(
                        "obstacle {k}: the side direction must be a unit vector"
                    )));
                }
            }
            segments[ob.segment].push(k);
            let (o, l) = body_slots[k];
            placed.push(Placed {
                obstacle: *ob,
                slots: BodySlots { origin: layout.offset(o), orientation: layout.offset(l) },
                geo,
            });
        }
        let points = point_slots.iter().map(|&i| layout.offset(i)).collect();
        Ok(Self { layout, points, segments, obstacles: placed, l0: 0.0 })
    }

    /// Reference length (m).
    pub fn reference_length(&self) -> f64 {
        self.l0
    }

    /// The path at local coordinates `x`: its pieces in order (global coordinates) and its
    /// length (m). Starts cold (no warm start).
    pub fn path(&self, x: &[f64]) -> Result<(Vec<Piece>, f64), ElementError> {
        self.path_from(x, PathState::default())
    }

    /// [`Self::path`] from a copy of an evaluation's warm start.
    fn path_from(&self, x: &[f64], mut st: PathState) -> Result<(Vec<Piece>, f64), ElementError> {
        let mut pieces = Vec::new();
        let n = x.len();
        let l = self.compute(x, &mut st, &mut Derivs::new(n, &mut [], &mut []), None, Some(&mut pieces))?;
        Ok((pieces, l))
    }

    fn state_for(&self, st: &mut PathState) {
        if st.warm.len() != self.obstacles.len() {
            st.warm = vec![ellipsoid::Warm::default(); self.obstacles.len()];
        }
        if st.knots.len() != self.segments.len() {
            st.knots = vec![None; self.segments.len()];
        }
    }

    /// One obstacle's span between global points `xa`, `xb`.
    fn span(
        &self,
        k: usize,
        x: &[f64],
        xa: &Vec3,
        xb: &Vec3,
        st: &mut PathState,
        want_hess: bool,
    ) -> Result<(span::SpanEval, Hint), ElementError> {
        let pl = &self.obstacles[k];
        let lam: Quat = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let (pa, pb) = (pl.obstacle.frame.local(&lam, &o, xa), pl.obstacle.frame.local(&lam, &o, xb));
        let tag = |e: ElementError| match e {
            ElementError::Domain(m) => ElementError::Domain(format!("obstacle {k}: {m}")),
            ElementError::NoConvergence(m) => ElementError::NoConvergence(format!("obstacle {k}: {m}")),
            other => other,
        };
        match (pl.obstacle.shape, &pl.geo) {
            (Shape::Sphere { radius }, _) => {
                let ev = span::sphere(radius, &pa, &pb, want_hess).map_err(tag)?;
                let w = ev.wrap.is_some();
                Ok((ev, Hint::Wrapped(w)))
            }
            (Shape::Cylinder { radius, side, length }, _) => {
                let ev = span::cylinder(radius, &side, length, &pa, &pb, want_hess).map_err(tag)?;
                let w = ev.wrap.is_some();
                Ok((ev, Hint::Wrapped(w)))
            }
            (Shape::Ellipsoid { .. }, Some(geo)) => {
                let (ev, sol) = ellipsoid::span(geo, &pa, &pb, &mut st.warm[k], want_hess).map_err(tag)?;
                Ok((ev, Hint::Ellipsoid(sol)))
            }
            (Shape::Ellipsoid { .. }, None) => unreachable!("ellipsoid geometry is made in new()"),
        }
    }

    /// The path length at `x`; adds its gradient and Hessian (as `d` wants) to `d`.
    fn compute(
        &self,
        x: &[f64],
        st: &mut PathState,
        d: &mut Derivs<'_>,
        mut hints: Option<&mut Vec<SegmentHint>>,
        mut pieces: Option<&mut Vec<Piece>>,
    ) -> Result<f64, ElementError> {
        self.state_for(st);
        let want_hess = d.has_hess();
        let mut total = 0.0;
        for (si, obs) in self.segments.iter().enumerate() {
            let (a, b) = (self.points[si], self.points[si + 1]);
            let (xa, xb) = (vec3_at(x, a), vec3_at(x, b));
            let mut hint = SegmentHint::default();
            let record = hints.is_some();
            match obs.len() {
                0 => {
                    let ev = span::straight(&xa, &xb, want_hess)?;
                    add_straight(d, a, b, &ev);
                    total += ev.length;
                    if record {
                        hint.spans.push(Hint::Straight);
                    }
                    if let Some(p) = pieces.as_deref_mut() {
                        p.push(Piece::Straight { from: xa, to: xb });
                    }
                }
                1 => {
                    let k = obs[0];
                    let (ev, h) = self.span(k, x, &xa, &xb, st, want_hess)?;
                    let pl = &self.obstacles[k];
                    frame::chain(&pl.obstacle.frame, pl.slots, &[a, b], x, &ev.grad, &ev.hess, d, 1.0);
                    total += ev.length;
                    if record {
                        hint.spans.push(h);
                    }
                    if let Some(p) = pieces.as_deref_mut() {
                        self.report(k, x, &xa, &xb, &ev, p);
                    }
                }
                _ => {
                    total += self.multi(si, x, st, d, &mut hint, pieces.as_deref_mut())?;
                }
            }
            if let Some(h) = hints.as_deref_mut() {
                h.push(hint);
            }
        }
        Ok(total)
    }

    fn report(&self, k: usize, x: &[f64], xa: &Vec3, xb: &Vec3, ev: &span::SpanEval, out: &mut Vec<Piece>) {
        match ev.wrap {
            None => out.push(Piece::Straight { from: *xa, to: *xb }),
            Some(cn) => {
                let pl = &self.obstacles[k];
                let lam: Quat = quat_at(x, pl.slots.orientation);
                let o = vec3_at(x, pl.slots.origin);
                let (ti, to) =
                    (pl.obstacle.frame.global(&lam, &o, &cn.t_in), pl.obstacle.frame.global(&lam, &o, &cn.t_out));
                out.push(Piece::Straight { from: *xa, to: ti });
                out.push(Piece::Surface { obstacle: k, from: ti, to, length: cn.surface_length });
                out.push(Piece::Straight { from: to, to: *xb });
            }
        }
    }

    /// A segment with several obstacles: free points between them, solved by Newton on the
    /// points' components normal to the path, then eliminated from the Hessian.
    fn multi(
        &self,
        si: usize,
        x: &[f64],
        st: &mut PathState,
        d: &mut Derivs<'_>,
        hint: &mut SegmentHint,
        pieces: Option<&mut Vec<Piece>>,
    ) -> Result<f64, ElementError> {
        let obs = &self.segments[si];
        let (a, b) = (self.points[si], self.points[si + 1]);
        let m = obs.len();
        let nk = m - 1;
        let n = x.len();
        let ne = n + 3 * nk;
        let mut xe = x.to_vec();
        let start = match &st.knots[si] {
            Some(k) if k.len() == nk => k.clone(),
            _ => self.knot_guess(si, x),
        };
        for k in &start {
            xe.extend_from_slice(k);
        }
        let off = |j: usize| if j == 0 { a } else { n + 3 * (j - 1) };
        let end = |j: usize| if j == m - 1 { b } else { n + 3 * j };
        // length, gradient and Hessian over the extended coordinates
        let eval = |xe: &[f64], st: &mut PathState| -> Result<Extended, ElementError> {
            let mut r =
                Extended { len: 0.0, g: vec![0.0; ne], h: vec![0.0; ne * ne], hints: Vec::new(), evs: Vec::new() };
            let mut de = Derivs::new(ne, &mut r.g, &mut r.h);
            for (j, &k) in obs.iter().enumerate() {
                let (xa, xb) = (vec3_at(xe, off(j)), vec3_at(xe, end(j)));
                let (ev, hh) = self.span(k, xe, &xa, &xb, st, true)?;
                let pl = &self.obstacles[k];
                frame::chain(&pl.obstacle.frame, pl.slots, &[off(j), end(j)], xe, &ev.grad, &ev.hess, &mut de, 1.0);
                r.len += ev.length;
                r.hints.push(hh);
                r.evs.push(ev);
            }
            Ok(r)
        };
        // at each free point, a basis of the plane normal to the path there (the straight line
        // from the previous obstacle's last contact, or the previous point when it does not wrap)
        let bases_at = |xe: &[f64], evs: &[span::SpanEval]| -> Vec<[Vec3; 2]> {
            (0..nk)
                .map(|j| {
                    let here = vec3_at(xe, n + 3 * j);
                    let prev = match evs[j].wrap {
                        Some(cn) => {
                            let pl = &self.obstacles[obs[j]];
                            let lam: Quat = quat_at(xe, pl.slots.orientation);
                            pl.obstacle.frame.global(&lam, &vec3_at(xe, pl.slots.origin), &cn.t_out)
                        }
                        None => vec3_at(xe, off(j)),
                    };
                    let dir = sub(&here, &prev);
                    let l = norm(&dir);
                    let u = if l > 0.0 { dir.map(|v| v / l) } else { [1.0, 0.0, 0.0] };
                    let e1 = mollier_core::geometry::perpendicular(&u);
                    [e1, cross(&u, &e1)]
                })
                .collect()
        };
        let reduce = |g: &[f64], h: &[f64], bases: &[[Vec3; 2]]| {
            let nz = 2 * nk;
            let mut gz = vec![0.0; nz];
            let mut hz = vec![0.0; nz * nz];
            for j in 0..nk {
                for (r, e) in bases[j].iter().enumerate() {
                    gz[2 * j + r] = (0..3).map(|i| e[i] * g[n + 3 * j + i]).sum();
                    for jj in 0..nk {
                        for (rr, ee) in bases[jj].iter().enumerate() {
                            let mut s = 0.0;
                            for i in 0..3 {
                                for k in 0..3 {
                                    s += e[i] * h[(n + 3 * j + i) * ne + n + 3 * jj + k] * ee[k];
                                }
                            }
                            hz[(2 * j + r) * nz + 2 * jj + rr] = s;
                        }
                    }
                }
            }
            (gz, hz)
        };
        // Newton on the free points, damped on the length (a minimum); where the reduced Hessian
        // is not positive definite (far from the solution), Levenberg-regularised
        let mut cur = eval(&xe, st)?;
        let mut converged = false;
        let nz = 2 * nk;
        let mut last = f64::INFINITY;
        for _ in 0..100 {
            let bases = bases_at(&xe, &cur.evs);
            let (gz, hz) = reduce(&cur.g, &cur.h, &bases);
            let gmax = gz.iter().fold(0.0f64, |acc, v| acc.max(v.abs()));
            // converged, or stalled at the noise floor of the spans' gradients
            if gmax <= 1e-12 || (gmax <= 1e-9 && gmax > 0.5 * last) {
                converged = true;
                break;
            }
            last = gmax;
            let diag = (0..nz).map(|i| hz[i * nz + i].abs()).fold(0.0, f64::max).max(1e-300);
            let mut nu = 0.0;
            let step = loop {
                let mut hr = hz.clone();
                for i in 0..nz {
                    hr[i * nz + i] += nu;
                }
                if let Some(s) = solve_spd(&hr, &gz, nz) {
                    break s.iter().map(|v| -v).collect::<Vec<f64>>();
                }
                nu = if nu == 0.0 { 1e-6 * diag } else { nu * 10.0 };
            };
            let slope: f64 = gz.iter().zip(&step).map(|(p, q)| p * q).sum();
            let mut lam = 1.0;
            let mut accepted = false;
            while lam > 1e-10 {
                let mut trial = xe.clone();
                for j in 0..nk {
                    for i in 0..3 {
                        trial[n + 3 * j + i] += lam * (step[2 * j] * bases[j][0][i] + step[2 * j + 1] * bases[j][1][i]);
                    }
                }
                // a rejected trial must not leave its ellipsoid solutions as warm starts
                let saved = st.warm.clone();
                if let Ok(next) = eval(&trial, st) {
                    // sufficient decrease; once the predicted decrease is below the rounding of
                    // the length, a pure Newton step (quadratic convergence)
                    if next.len <= cur.len + 1e-4 * lam * slope || -slope <= 1e-14 * cur.len {
                        xe = trial;
                        cur = next;
                        accepted = true;
                        break;
                    }
                }
                st.warm = saved;
                lam *= 0.5;
            }
            if !accepted {
                converged = gmax <= 1e-8;
                break;
            }
        }
        if !converged {
            st.knots[si] = None;
            return Err(ElementError::NoConvergence(format!(
                "the path between the obstacles of segment {si} was not found"
            )));
        }
        let knots: Vec<Vec3> = (0..nk).map(|j| vec3_at(&xe, n + 3 * j)).collect();
        st.knots[si] = Some(knots.clone());
        let Extended { len, g, h, hints: hs, evs } = eval(&xe, st)?;
        let bases = bases_at(&xe, &evs);
        let (_, hz) = reduce(&g, &h, &bases);
        let hinv = invert_spd(&hz, nz).ok_or_else(|| {
            ElementError::Domain(format!("the path between the obstacles of segment {si} is not a strict minimum"))
        })?;
        d.add_grad(0, &g[..n], 1.0);
        if d.has_hess() {
            // Schur complement: H_xx − H_xz H_zz⁻¹ H_zx, with H_xz = H_xX U
            let mut hxz = vec![0.0; n * nz];
            for r in 0..n {
                for j in 0..nk {
                    for (q, e) in bases[j].iter().enumerate() {
                        hxz[r * nz + 2 * j + q] = (0..3).map(|i| h[r * ne + n + 3 * j + i] * e[i]).sum();
                    }
                }
            }
            let mut t = vec![0.0; n * nz];
            for r in 0..n {
                for q in 0..nz {
                    t[r * nz + q] = (0..nz).map(|k| hxz[r * nz + k] * hinv[k * nz + q]).sum();
                }
            }
            for r in 0..n {
                for cc in 0..n {
                    let schur: f64 = (0..nz).map(|q| t[r * nz + q] * hxz[cc * nz + q]).sum();
                    d.hess[r * n + cc] += h[r * ne + cc] - schur;
                }
            }
        }
        if let Some(p) = pieces {
            for (j, &k) in obs.iter().enumerate() {
                let (xa, xb) = (vec3_at(&xe, off(j)), vec3_at(&xe, end(j)));
                self.report(k, &xe, &xa, &xb, &evs[j], p);
            }
        }
        hint.spans = hs;
        hint.knots = knots;
        hint.bases = bases;
        hint.hinv = hinv;
        Ok(len)
    }

    /// A starting guess for the free points of a segment: the point of the straight line between
    /// the segment's ends nearest to the midpoint of consecutive obstacles' centres, pushed out of
    /// both (radially, so on the side the straight line passes).
    fn knot_guess(&self, si: usize, x: &[f64]) -> Vec<Vec3> {
        let obs = &self.segments[si];
        let (a, b) = (vec3_at(x, self.points[si]), vec3_at(x, self.points[si + 1]));
        let ab = sub(&b, &a);
        let l2 = dot(&ab, &ab).max(1e-300);
        let centre = |k: usize| {
            let pl = &self.obstacles[k];
            let lam: Quat = quat_at(x, pl.slots.orientation);
            pl.obstacle.frame.global(&lam, &vec3_at(x, pl.slots.origin), &[0.0; 3])
        };
        (0..obs.len() - 1)
            .map(|j| {
                let (c1, c2) = (centre(obs[j]), centre(obs[j + 1]));
                let mid = [0, 1, 2].map(|i| 0.5 * (c1[i] + c2[i]));
                let t = (dot(&sub(&mid, &a), &ab) / l2).clamp(0.0, 1.0);
                let mut g = [0, 1, 2].map(|i| a[i] + t * ab[i]);
                for _ in 0..3 {
                    for &k in &obs[j..j + 2] {
                        g = self.push_out(k, x, &g);
                    }
                }
                g
            })
            .collect()
    }

    /// `g` moved radially out of obstacle `k` (to 1.2 times its size) when it is inside.
    fn push_out(&self, k: usize, x: &[f64], g: &Vec3) -> Vec3 {
        let pl = &self.obstacles[k];
        let lam: Quat = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let p = pl.obstacle.frame.local(&lam, &o, g);
        let q = match pl.obstacle.shape {
            Shape::Sphere { radius } => {
                let r = norm(&p);
                if r >= 1.2 * radius {
                    p
                } else if r > 0.0 {
                    p.map(|v| v * 1.2 * radius / r)
                } else {
                    [1.2 * radius, 0.0, 0.0]
                }
            }
            Shape::Cylinder { radius, .. } => {
                let r = p[0].hypot(p[1]);
                if r >= 1.2 * radius {
                    p
                } else if r > 0.0 {
                    [p[0] * 1.2 * radius / r, p[1] * 1.2 * radius / r, p[2]]
                } else {
                    [1.2 * radius, 0.0, p[2]]
                }
            }
            Shape::Ellipsoid { semi_axes: ax } => {
                let lev = (0..3).map(|i| (p[i] / ax[i]).powi(2)).sum::<f64>().sqrt();
                if lev >= 1.2 {
                    p
                } else if lev > 0.0 {
                    p.map(|v| v * 1.2 / lev)
                } else {
                    [1.2 * ax[0], 0.0, 0.0]
                }
            }
        };
        pl.obstacle.frame.global(&lam, &o, &q)
    }
}

/// A segment with free points, evaluated over the extended coordinates (local coordinates, then
/// the free points'): length, gradient, Hessian, and each span's hint and evaluation.
struct Extended {
    len: f64,
    g: Vec<f64>,
    h: Vec<f64>,
    hints: Vec<Hint>,
    evs: Vec<span::SpanEval>,
}

/// `|x_b − x_a|` between two coordinate offsets, from a straight span's derivatives.
fn add_straight(d: &mut Derivs<'_>, a: usize, b: usize, ev: &span::SpanEval) {
    d.add_grad(a, &ev.grad[..3], 1.0);
    d.add_grad(b, &ev.grad[3..], 1.0);
    if d.has_hess() {
        let blk = |r: usize, cc: usize| {
            let mut m = [0.0; 9];
            for i in 0..3 {
                for j in 0..3 {
                    m[i * 3 + j] = ev.hess[(r + i) * 6 + cc + j];
                }
            }
            m
        };
        d.add_hess_diag(a, 3, &blk(0, 0), 1.0);
        d.add_hess_diag(b, 3, &blk(3, 3), 1.0);
        d.add_hess_cross(a, 3, b, 3, &blk(0, 3), 1.0);
    }
}

/// Cholesky solve of a small symmetric positive definite system; `None` when not positive
/// definite.
fn solve_spd(a: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let s = a[i * n + j] - (0..j).map(|k| l[i * n + k] * l[j * n + k]).sum::<f64>();
            if i == j {
                if !(s > 0.0) {
                    return None;
                }
                l[i * n + i] = s.sqrt();
            } else {
                l[i * n + j] = s / l[j * n + j];
            }
        }
    }
    let mut y = vec![0.0; n];
    for i in 0..n {
        y[i] = (b[i] - (0..i).map(|k| l[i * n + k] * y[k]).sum::<f64>()) / l[i * n + i];
    }
    let mut z = vec![0.0; n];
    for i in (0..n).rev() {
        z[i] = (y[i] - (i + 1..n).map(|k| l[k * n + i] * z[k]).sum::<f64>()) / l[i * n + i];
    }
    Some(z)
}

fn invert_spd(a: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut inv = vec![0.0; n * n];
    for j in 0..n {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        let col = solve_spd(a, &e, n)?;
        for i in 0..n {
            inv[i * n + j] = col[i];
        }
    }
    Some(inv)
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
}

impl Element for CurvedTruss {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let mut st = std::mem::take(out.state::<PathState>());
        let res = self.compute(x, &mut st, &mut out.mode(0), None, None);
        *out.state::<PathState>() = st;
        out.e[0] = res? - self.l0;
        Ok(())
    }
}

/// A span's length and gradient (obstacle frame) for a generic scalar, on the `f64` branch.
fn span_generic<T: Real>(pl: &Placed, pa: &Vec3<T>, pb: &Vec3<T>, hint: &Hint) -> (T, [T; 6]) {
    match (pl.obstacle.shape, hint) {
        (Shape::Sphere { radius }, Hint::Wrapped(w)) => span::sphere_generic(radius, pa, pb, *w),
        (Shape::Cylinder { radius, side, .. }, Hint::Wrapped(w)) => span::cylinder_generic(radius, &side, pa, pb, *w),
        (Shape::Ellipsoid { .. }, Hint::Ellipsoid(sol)) => {
            ellipsoid::span_generic(pl.geo.as_ref().expect("ellipsoid geometry"), pa, pb, sol.as_ref())
        }
        _ => span::straight_generic(pa, pb),
    }
}

impl CurvedTruss {
    /// One obstacle span for a generic scalar between global points; returns the length and the
    /// gradient with respect to the two points (global frame).
    fn span_t<T: Real>(&self, k: usize, x: &[T], xa: &Vec3<T>, xb: &Vec3<T>, hint: &Hint) -> (T, [Vec3<T>; 2]) {
        let pl = &self.obstacles[k];
        let lam: Quat<T> = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let f = &pl.obstacle.frame;
        let (pa, pb) = (f.local(&lam, &o, xa), f.local(&lam, &o, xb));
        let (l, g) = span_generic(pl, &pa, &pb, hint);
        let sigma = lam[0] * lam[0] + lam[1] * lam[1] + lam[2] * lam[2] + lam[3] * lam[3];
        let to_global = |w: [T; 3]| {
            let u = f.axes();
            let v: Vec3<T> = [0, 1, 2].map(|i| w[0] * u[0][i] + w[1] * u[1][i] + w[2] * u[2][i]);
            rotate(&lam, &v).map(|c| c / sigma)
        };
        (l, [to_global([g[0], g[1], g[2]]), to_global([g[3], g[4], g[5]])])
    }
}

impl Deformations for CurvedTruss {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let xr: Vec<f64> = x.iter().map(|v| v.re()).collect();
        let mut st = PathState::default();
        let mut hints = Vec::new();
        let n = xr.len();
        self.compute(&xr, &mut st, &mut Derivs::new(n, &mut [], &mut []), Some(&mut hints), None)?;
        let mut total = c::<T>(0.0);
        for (si, obs) in self.segments.iter().enumerate() {
            let (a, b) = (self.points[si], self.points[si + 1]);
            let (xa, xb): (Vec3<T>, Vec3<T>) = (vec3_at(x, a), vec3_at(x, b));
            let hint = &hints[si];
            match obs.len() {
                0 => total += norm(&sub(&xb, &xa)),
                1 => total += self.span_t(obs[0], x, &xa, &xb, &hint.spans[0]).0,
                m => {
                    // free points: chord-Newton steps in T from the f64 solution, in the planes
                    let nk = m - 1;
                    let nz = 2 * nk;
                    let mut z = vec![c::<T>(0.0); nz];
                    let knots_at = |z: &[T]| -> Vec<Vec3<T>> {
                        (0..nk)
                            .map(|j| {
                                let [e1, e2] = &hint.bases[j];
                                let k: Vec3<T> = lift(&hint.knots[j]);
                                [0, 1, 2].map(|i| k[i] + z[2 * j] * e1[i] + z[2 * j + 1] * e2[i])
                            })
                            .collect()
                    };
                    let run = |z: &[T]| -> (T, Vec<T>) {
                        let ks = knots_at(z);
                        let mut len = c::<T>(0.0);
                        let mut gk = vec![c::<T>(0.0); 3 * nk];
                        for (j, &k) in obs.iter().enumerate() {
                            let p0 = if j == 0 { xa } else { ks[j - 1] };
                            let p1 = if j == m - 1 { xb } else { ks[j] };
                            let (l, [ga, gb]) = self.span_t(k, x, &p0, &p1, &hint.spans[j]);
                            len += l;
                            for i in 0..3 {
                                if j > 0 {
                                    gk[3 * (j - 1) + i] += ga[i];
                                }
                                if j < m - 1 {
                                    gk[3 * j + i] += gb[i];
                                }
                            }
                        }
                        let gz: Vec<T> = (0..nz)
                            .map(|q| {
                                let e = &hint.bases[q / 2][q % 2];
                                gk[3 * (q / 2)] * e[0] + gk[3 * (q / 2) + 1] * e[1] + gk[3 * (q / 2) + 2] * e[2]
                            })
                            .collect();
                        (len, gz)
                    };
                    for _ in 0..3 {
                        let (_, gz) = run(&z);
                        for q in 0..nz {
                            for r in 0..nz {
                                z[q] -= gz[r] * hint.hinv[q * nz + r];
                            }
                        }
                    }
                    total += run(&z).0;
                }
            }
        }
        e[0] = total - c::<T>(self.l0);
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// parameters

fn shape_of(t: &Params<'_>, fr: &ShapeFrame) -> Result<Shape, ParamError> {
    let kind = t.string("type")?;
    let no = |key: &str, why: &str| -> Result<(), ParamError> {
        if t.get(key).is_some() { Err(ParamError::new(t.path(key), why.to_string())) } else { Ok(()) }
    };
    match kind {
        "sphere" => {
            no("semi_axes", "a sphere has a `radius`, not semi-axes")?;
            no("side", "`side` is for cylinders")?;
            no("length", "`length` is for cylinders")?;
            Ok(Shape::Sphere { radius: positive_length(t, "radius")? })
        }
        "cylinder" => {
            no("semi_axes", "a cylinder has a `radius`, not semi-axes")?;
            let radius = positive_length(t, "radius")?;
            let side = match t.opt_vector("side")? {
                None => Side::Either,
                Some(v) => {
                    // body frame → cylinder frame, projected on the plane normal to the axis
                    let u = fr.axes();
                    let (sx, sy) = (dot(&u[0], &v), dot(&u[1], &v));
                    let l = sx.hypot(sy);
                    if !(l > 1e-9 * norm(&v)) || !(l > 0.0) {
                        return Err(ParamError::new(
                            t.path("side"),
                            "must not be zero or parallel to the cylinder's axis",
                        ));
                    }
                    Side::Toward([sx / l, sy / l])
                }
            };
            let length = match t.get("length") {
                None => None,
                Some(_) => Some(positive_length(t, "length")?),
            };
            Ok(Shape::Cylinder { radius, side, length })
        }
        "ellipsoid" => {
            no("radius", "an ellipsoid has `semi_axes`, not a radius")?;
            no("side", "`side` is for cylinders")?;
            no("length", "`length` is for cylinders")?;
            let semi_axes = t.point("semi_axes")?;
            if !semi_axes.iter().all(|v| *v > 0.0) {
                return Err(ParamError::new(t.path("semi_axes"), format!("must be positive, found {semi_axes:?}")));
            }
            Ok(Shape::Ellipsoid { semi_axes })
        }
        other => Err(ParamError::new(t.path("type"), format!("unknown obstacle type `{other}`"))
            .with_hint("one of: sphere, cylinder, ellipsoid")),
    }
}

fn positive_length(t: &Params<'_>, key: &str) -> Result<f64, ParamError> {
    let v = t.length(key)?;
    if v > 0.0 { Ok(v) } else { Err(ParamError::new(t.path(key), format!("must be positive, found {v}"))) }
}

/// The cylinder frame from `axis` (its z axis) when given, else the common frame parameters.
fn frame_of(t: &Params<'_>) -> Result<ShapeFrame, ParamError> {
    match t.opt_vector("axis")? {
        None => frame::from_params(t),
        Some(z) => {
            for key in ["x_axis", "y_axis", "rotation"] {
                if t.get(key).is_some() {
                    return Err(ParamError::new(
                        t.path(key),
                        "give either `axis` or the frame's axes/rotation, not both",
                    ));
                }
            }
            let centre = if t.get("centre").is_some() { t.point("centre")? } else { [0.0; 3] };
            let zl = norm(&z);
            if !(zl > 0.0) {
                return Err(ParamError::new(t.path("axis"), "must not be zero"));
            }
            let zu = z.map(|v| v / zl);
            let xu = mollier_core::geometry::perpendicular(&zu);
            let yu = cross(&zu, &xu);
            Ok(ShapeFrame::new([xu, yu, zu], centre))
        }
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let first = p.node("p", NodeKind::Position)?;
    let last = p.node("q", NodeKind::Position)?;
    let via = if p.get("via").is_some() { p.nodes("via", NodeKind::Position)? } else { Vec::new() };
    let mut points = vec![first];
    points.extend(&via);
    points.push(last);
    let mut obstacles = Vec::new();
    for t in p.tables("obstacles")? {
        let fr = frame_of(&t)?;
        let shape = shape_of(&t, &fr)?;
        if !matches!(shape, Shape::Cylinder { .. }) && t.get("axis").is_some() {
            return Err(ParamError::new(t.path("axis"), "`axis` is for cylinders"));
        }
        let body = t.frame("body")?;
        let seg = t.number_or("segment", 0.0)?;
        if !(seg >= 0.0 && seg.fract() == 0.0 && seg <= via.len() as f64) {
            return Err(ParamError::new(
                t.path("segment"),
                format!("must be a whole number from 0 to {} (the number of via points)", via.len()),
            ));
        }
        obstacles.push(Obstacle { shape, frame: fr, body, segment: seg as usize });
        t.finish(&OBSTACLE_PARAMS.iter().map(|d| d.name).collect::<Vec<_>>())?;
    }
    CurvedTruss::new(&points, &obstacles)
        .map(|e| Box::new(e) as Box<dyn Element>)
        .map_err(|e| ParamError::new("obstacles", e.to_string()))
}

/// Parameters of one entry of `obstacles`.
pub const OBSTACLE_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "type",
        kind: ParamKind::Choice(&["sphere", "cylinder", "ellipsoid"]),
        required: true,
        doc: "the obstacle's shape",
    },
    ParamDoc {
        name: "body",
        kind: ParamKind::Body,
        required: true,
        doc: "the body the obstacle is fixed to (it moves with the body's origin and orientation nodes)",
    },
    ParamDoc {
        name: "radius",
        kind: ParamKind::Length,
        required: false,
        doc: "radius of a sphere or cylinder (length unit, positive); required for those, not allowed for an ellipsoid",
    },
    ParamDoc {
        name: "semi_axes",
        kind: ParamKind::Point,
        required: false,
        doc: "the ellipsoid's three semi-axes along its local x, y and z axes (length unit, positive); required for an ellipsoid only",
    },
    frame::docs::CENTRE,
    frame::docs::X_AXIS,
    frame::docs::Y_AXIS,
    frame::docs::ROTATION,
    ParamDoc {
        name: "axis",
        kind: ParamKind::Vector,
        required: false,
        doc: "cylinders only: direction of the cylinder's axis in the body frame, instead of x_axis/y_axis/rotation (whose local z axis is the cylinder's axis otherwise). The cylinder is infinitely long unless `length` is given",
    },
    ParamDoc {
        name: "length",
        kind: ParamKind::Length,
        required: false,
        doc: "cylinders only: the cylinder's length along its axis (length unit, positive), centred on `centre`, as OpenSim's WrapCylinder: the path goes straight when both contact points would lie beyond the ends, or an anchor within the radius lies beyond them (the length then jumps, as OpenSim's). Default: infinitely long",
    },
    ParamDoc {
        name: "side",
        kind: ParamKind::Vector,
        required: false,
        doc: "cylinders only: a direction in the body frame (its part normal to the axis is used) pointing at the face the path must go over; the path then wraps round that face even when the straight line passes behind the cylinder (OpenSim's quadrant \"-x\" is side = −(local x axis)). Default: the shorter way round, which flips sides when the line crosses the axis",
    },
    ParamDoc {
        name: "segment",
        kind: ParamKind::Number,
        required: false,
        doc: "which stretch of the path the obstacle acts on: 0 (default) from p to the first via point (or to q), k from via point k to the next point. Several obstacles on one stretch are met in the order listed",
    },
];

/// The `curved-truss` element type.
pub const TYPE: ElementType = ElementType {
    name: "curved-truss",
    summary: "a muscle's line of action from p through via points to q, wrapping over spheres, cylinders and ellipsoids fixed to bodies; mode: elongation (m), path length minus its initial length",
    modes: &["elongation"],
    params: &[
        ParamDoc {
            name: "p",
            kind: ParamKind::Node(NodeKind::Position),
            required: true,
            doc: "first point of the path (origin)",
        },
        ParamDoc {
            name: "q",
            kind: ParamKind::Node(NodeKind::Position),
            required: true,
            doc: "last point of the path (insertion)",
        },
        ParamDoc {
            name: "via",
            kind: ParamKind::Nodes(NodeKind::Position),
            required: false,
            doc: "points the path passes through, in order from p to q (typically points of bodies); default none",
        },
        ParamDoc {
            name: "obstacles",
            kind: ParamKind::Tables(OBSTACLE_PARAMS),
            required: false,
            doc: "the obstacles the path wraps over; the path touches one only where the straight line would pass through it (or, for a cylinder with `side`, behind it). Default none: a straight line through the via points",
        },
    ],
    build,
};

/// Register the `curved-truss` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod pairs {
    use super::*;
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
