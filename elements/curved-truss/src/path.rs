//! The path's evaluation in `f64`: construction from the points and obstacles, the spans over
//! each obstacle, the free points between obstacles of one segment, and the length with its
//! gradient and Hessian.

use mollier_core::NodeId;
use mollier_core::element::{Derivs, ElementError, Layout, ModeInfo, NodeKind};
use mollier_core::geometry::{Quat, Vec3, cross, dot, norm, quat_at, sub, vec3_at};
use mollier_surface::frame::{self, BodySlots};

use crate::*;

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
                rules: Rules::default(),
            });
        }
        let points = point_slots.iter().map(|&i| layout.offset(i)).collect();
        Ok(Self { layout, points, segments, obstacles: placed, sequence: false, l0: 0.0 })
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
    pub(crate) fn path_from(&self, x: &[f64], mut st: PathState) -> Result<(Vec<Piece>, f64), ElementError> {
        let mut pieces = Vec::new();
        let n = x.len();
        let l = self.compute(x, &mut st, &mut Derivs::new(n, &mut [], &mut []), None, Some(&mut pieces))?;
        Ok((pieces, l))
    }

    pub(crate) fn state_for(&self, st: &mut PathState) {
        if st.warm.len() != self.obstacles.len() {
            st.warm = vec![ellipsoid::Warm::default(); self.obstacles.len()];
        }
        if st.knots.len() != self.segments.len() {
            st.knots = vec![None; self.segments.len()];
        }
    }

    /// One obstacle's span between global points `xa`, `xb`, into `ev` (the caller's: a
    /// `SpanEval` is 50 numbers, copied once instead of on every return); `alone`: the only
    /// obstacle of its segment (OpenSim's cylinder path applies only then).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn span(
        &self,
        k: usize,
        x: &[f64],
        xa: &Vec3,
        xb: &Vec3,
        st: &mut PathState,
        want_hess: bool,
        alone: bool,
        ev: &mut span::SpanEval,
    ) -> Result<Hint, ElementError> {
        let pl = &self.obstacles[k];
        let lam: Quat = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let (pa, pb) = (pl.obstacle.frame.local(&lam, &o, xa), pl.obstacle.frame.local(&lam, &o, xb));
        let tag = |e: ElementError| match e {
            ElementError::Domain(m) => ElementError::Domain(format!("obstacle {k}: {m}")),
            ElementError::NoConvergence(m) => ElementError::NoConvergence(format!("obstacle {k}: {m}")),
            other => other,
        };
        let opensim = pl.opensim().filter(|_| alone);
        if let Some(obj @ crate::opensim::Object::Ellipsoid { .. }) = opensim {
            // OpenSim's own test of an anchor inside (1e-4 of the scaled surface equation)
            let code;
            (*ev, code) = crate::opensim::span_of(&obj, &pa, &pb, want_hess).map_err(tag)?;
            if code == crate::opensim::Code::Inside && !pl.rules.straight_inside {
                return Err(tag(ElementError::Domain("an anchor of the path is inside the ellipsoid".into())));
            }
            return Ok(if ev.wrap.is_some() { Hint::OpenSim } else { Hint::Straight });
        }
        if pl.rules.straight_inside
            && (rules::inside(&pl.obstacle.shape, &pa) || rules::inside(&pl.obstacle.shape, &pb))
        {
            *ev = span::straight(&pa, &pb, want_hess)?;
            return Ok(Hint::Straight);
        }
        match (pl.obstacle.shape, &pl.geo) {
            (Shape::Cylinder { .. }, _) if opensim.is_some() => {
                let obj = opensim.expect("checked");
                *ev = crate::opensim::span_of(&obj, &pa, &pb, want_hess).map_err(tag)?.0;
                Ok(if ev.wrap.is_some() { Hint::OpenSim } else { Hint::Straight })
            }
            (Shape::Sphere { radius }, _) => {
                *ev = span::sphere(radius, &pa, &pb, want_hess).map_err(tag)?;
                Ok(Hint::Wrapped(ev.wrap.is_some()))
            }
            (Shape::Cylinder { radius, side, length }, _) => {
                *ev = span::cylinder(radius, &side, length, &pa, &pb, want_hess).map_err(tag)?;
                Ok(Hint::Wrapped(ev.wrap.is_some()))
            }
            (Shape::Ellipsoid { .. }, Some(geo)) => {
                let sol;
                (*ev, sol) = ellipsoid::span(geo, &pa, &pb, &mut st.warm[k], want_hess).map_err(tag)?;
                Ok(Hint::Ellipsoid(sol))
            }
            (Shape::Ellipsoid { .. }, None) => unreachable!("ellipsoid geometry is made in new()"),
        }
    }

    /// The path length at `x`; adds its gradient and Hessian (as `d` wants) to `d`.
    pub(crate) fn compute(
        &self,
        x: &[f64],
        st: &mut PathState,
        d: &mut Derivs<'_>,
        mut hints: Option<&mut Vec<SegmentHint>>,
        mut pieces: Option<&mut Vec<Piece>>,
    ) -> Result<f64, ElementError> {
        if self.sequence {
            return self.sequence_derivs(x, d, pieces);
        }
        self.state_for(st);
        let want_hess = d.has_hess();
        let mut total = 0.0;
        let assigned = self.assign(x)?;
        for (si, obs) in assigned.iter().enumerate() {
            let (a, b) = (self.points[si], self.points[si + 1]);
            let (xa, xb) = (vec3_at(x, a), vec3_at(x, b));
            let record = hints.is_some();
            let mut hint = SegmentHint::default();
            if record {
                hint.obs.clone_from(obs);
            }
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
                    let mut ev = span::SpanEval::default();
                    let h = self.span(k, x, &xa, &xb, st, want_hess, true, &mut ev)?;
                    if ev.wrap.is_some() {
                        let pl = &self.obstacles[k];
                        frame::chain(&pl.obstacle.frame, pl.slots, &[a, b], x, &ev.grad, &ev.hess, d, 1.0);
                        total += ev.length;
                    } else {
                        // a span that clears its obstacle is the chord, which does not depend on
                        // the obstacle's frame (shape coordinates are a rigid motion of the global
                        // ones for any λ): its body derivatives vanish exactly, so take the chord
                        // in global coordinates instead of carrying zeros through the frame
                        let chord = span::straight(&xa, &xb, want_hess)?;
                        add_straight(d, a, b, &chord);
                        total += chord.length;
                    }
                    if record {
                        hint.spans.push(h);
                    }
                    if let Some(p) = pieces.as_deref_mut() {
                        self.report(k, x, &xa, &xb, &ev, p);
                    }
                }
                _ => {
                    total += self.multi(si, obs, x, st, d, &mut hint, pieces.as_deref_mut())?;
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
    #[allow(clippy::too_many_arguments)]
    fn multi(
        &self,
        si: usize,
        obs: &[usize],
        x: &[f64],
        st: &mut PathState,
        d: &mut Derivs<'_>,
        hint: &mut SegmentHint,
        pieces: Option<&mut Vec<Piece>>,
    ) -> Result<f64, ElementError> {
        let (a, b) = (self.points[si], self.points[si + 1]);
        let m = obs.len();
        let nk = m - 1;
        let n = x.len();
        let ne = n + 3 * nk;
        let mut xe = x.to_vec();
        let start = match &st.knots[si] {
            Some(k) if k.len() == nk => k.clone(),
            _ => self.knot_guess(si, obs, x),
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
                let mut ev = span::SpanEval::default();
                let hh = self.span(k, xe, &xa, &xb, st, true, false, &mut ev)?;
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
        let reduce = |g: &[f64], h: &[f64], bases: &[[Vec3; 2]]| reduce(g, h, bases, n, nk);
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
        add_eliminated(d, &g, &h, &bases, &hinv, n, nk);
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
    fn knot_guess(&self, si: usize, obs: &[usize], x: &[f64]) -> Vec<Vec3> {
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

/// The gradient and Hessian over the extended coordinates (`n` local ones, then `nk` free points)
/// reduced to the free points' components in the planes `bases` (2 per point).
fn reduce(g: &[f64], h: &[f64], bases: &[[Vec3; 2]], n: usize, nk: usize) -> (Vec<f64>, Vec<f64>) {
    let ne = n + 3 * nk;
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
}

/// Add to `d` the gradient and Hessian of the length over the local coordinates with the free
/// points eliminated: `g`, `h` over the extended coordinates, `hinv` the inverse reduced Hessian
/// (a Schur complement).
fn add_eliminated(d: &mut Derivs<'_>, g: &[f64], h: &[f64], bases: &[[Vec3; 2]], hinv: &[f64], n: usize, nk: usize) {
    let (ne, nz) = (n + 3 * nk, 2 * nk);
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
