//! The active-set polish after the interior point.
//!
//! Stages: the active set is guessed from the interior point's `(s, z)`
//! ([`Dense::guess_active_set`]); the equality-constrained QP of that set is solved
//! ([`Dense::solve_active_set`], Newton on the cone's surface); the duals are recovered from
//! stationarity ([`Dense::recover_duals`]) and the optimality conditions checked
//! ([`Dense::check_optimality`]); a failed check corrects the set ([`Dense::correct_active_set`])
//! and the pass repeats.

use super::*;

#[derive(Clone, Copy, PartialEq, Debug)]
enum ConeState {
    Off,
    Surface,
    Apex,
}

/// The rows imposed as equations, and the cone's linearisation point.
struct ActiveSet {
    /// Per muscle: the bound or stress row that fixes it, and the value it fixes.
    fixed: Vec<Option<(usize, f64)>>,
    /// Active sign rows.
    signs: Vec<usize>,
    cone: ConeState,
    /// The cone's multiplier and slack where its surface is linearised.
    mu_k: f64,
    s_k: [f64; 3],
}

impl ActiveSet {
    fn n_cone(&self) -> usize {
        match self.cone {
            ConeState::Off => 0,
            ConeState::Surface => 1,
            ConeState::Apex => 3,
        }
    }
}

/// The optimality conditions of a polished point (the program's rows are O(1)).
struct Checks {
    dual_ok: bool,
    station_ok: bool,
    eq_ok: bool,
    ineq_ok: bool,
    /// `G x` (m) and the primal scale of the tolerances.
    gx: Vec<f64>,
    pscale: f64,
}

impl Dense {
    /// Active-set polish at the interior point's `(x, s, z)`: on success `x` holds the exact
    /// solution of the equality-constrained QP of the active set.
    pub(super) fn polish(&mut self, v: &Values) -> bool {
        let (k, nr) = (self.k, self.nr);
        // (d)'s first stage has no curvature in u: nothing to polish with
        if self.has_t || (0..k).any(|i| !(v.p_diag[i] > 0.0)) || (0..nr).any(|r| !(v.p_diag[k + r] > 0.0)) {
            return false;
        }
        let mut act = self.guess_active_set(v);
        // a constraint that is weakly active (slack and dual both small) may be misjudged before
        // the gap is tiny: a pass adds the rows the polished point violates and frees those
        // whose multiplier came out negative (a primal-dual active-set step), up to three times
        for _pass in 0..3 {
            let Some((mut x, mult)) = self.solve_active_set(v, &mut act) else { return false };
            let (y, z, g) = self.recover_duals(v, &act, &x, &mult);
            let c = self.check_optimality(v, &x, &y, &z, &g);
            if c.dual_ok && c.station_ok && c.eq_ok && c.ineq_ok {
                // exact zeros as +0: a bound's 0 / −1 and a zero right-hand side's negation are
                // −0, which front ends print as "-0"
                x.iter_mut().for_each(|v| *v += 0.0);
                self.x = x;
                self.y = y;
                self.z = z;
                return true;
            }
            if !(c.station_ok && c.eq_ok) {
                return false;
            }
            self.correct_active_set(v, &mut act, &z, &c.gx, TOL_ACCEPT * c.pscale);
        }
        false
    }

    /// The active set of the interior point: a variable is fixed by its most active bound or
    /// stress row, a row is active where its slack is below its dual, and the cone is off, on
    /// its surface or at its apex by the distances of `s` and `z` to its boundary.
    fn guess_active_set(&self, v: &Values) -> ActiveSet {
        let (k, ns) = (self.k, self.ns);
        let rt = 2 * k + ns;
        let fixed: Vec<Option<(usize, f64)>> = (0..k)
            .map(|i| {
                let mut rows = vec![(i, 1.0, 1.0), (k + i, -1.0, 0.0)];
                if self.nst > 0 {
                    rows.push((rt + i, v.stress[i], v.stress_rhs));
                }
                rows.into_iter()
                    .filter(|&(r, _, _)| self.s[r] < self.z[r])
                    .max_by(|a, b| self.z[a.0].total_cmp(&self.z[b.0]))
                    .map(|(r, c, h)| (r, h / c))
            })
            .collect();
        let signs: Vec<usize> = (0..ns).filter(|&s| self.s[2 * k + s] < self.z[2 * k + s]).collect();
        let rc = self.m_nn;
        let cone = if !self.cone {
            ConeState::Off
        } else {
            let s = &self.s[rc..rc + 3];
            let z = &self.z[rc..rc + 3];
            let sl = s[1].hypot(s[2]);
            // distances to the boundary: on the surface both vanish, s along a ray, z normal to it
            let (s_in, z_in) = (s[0] - sl, z[0] - z[1].hypot(z[2]));
            if z[0] <= s_in {
                ConeState::Off
            } else if s[0] <= z_in {
                ConeState::Apex
            } else {
                ConeState::Surface
            }
        };
        let mu_k = if self.cone { self.z[rc] } else { 0.0 };
        let s_k = if self.cone { [self.s[rc], self.s[rc + 1], self.s[rc + 2]] } else { [0.0; 3] };
        ActiveSet { fixed, signs, cone, mu_k, s_k }
    }

    /// The equality-constrained QP of the active set: the primal point `x` (n) and the
    /// multipliers of the small block (reserves, equalities, signs, cone), or `None` when its
    /// system is singular or the point not finite. On the cone's surface, Newton steps on the
    /// curved surface (up to 8), moving the set's linearisation point.
    fn solve_active_set(&mut self, v: &Values, act: &mut ActiveSet) -> Option<(Vec<f64>, Vec<f64>)> {
        let (k, nr, neq) = (self.k, self.nr, self.neq);
        // on the surface, one more unknown carries the surface's curvature (Newton, not a
        // fixed tangent plane, which converges at best linearly)
        let curved = act.cone == ConeState::Surface;
        let ms = nr + neq + act.signs.len() + act.n_cone() + usize::from(curved);
        let mut x = self.x.clone();
        for (i, f) in act.fixed.iter().enumerate() {
            if let Some((_, val)) = f {
                x[i] = *val;
            }
        }
        // tangent direction of the cone's surface, refined from the polished point
        let mut normal = [0.0; 3];
        if act.cone == ConeState::Surface {
            let sl = act.s_k[1].hypot(act.s_k[2]);
            normal = [1.0, -act.s_k[1] / sl, -act.s_k[2] / sl];
        }
        let rounds = if curved { 8 } else { 1 };
        let mut mult = vec![0.0; ms];
        for _ in 0..rounds {
            let mut rhs = self.assemble_active_kkt(v, act, &x, &normal, ms);
            if !self.kkt.factor() {
                return None;
            }
            self.kkt.solve(&mut rhs);
            for i in 0..k {
                if act.fixed[i].is_none() {
                    x[i] = rhs[i];
                }
            }
            x[k..k + nr].copy_from_slice(&rhs[k..k + nr]);
            mult.copy_from_slice(&rhs[k..]);
            if act.cone == ConeState::Surface {
                let mut sc = [0.0; 3];
                for r in 0..3 {
                    sc[r] = v.cone_rhs[r] - dot(&v.cone[r * k..(r + 1) * k], &x[..k]);
                }
                let sl = sc[1].hypot(sc[2]);
                if !(sl > 0.0) {
                    return None;
                }
                if (sc[0] - sl).abs() <= 1e-15 * sc[0].abs().max(1.0) {
                    break;
                }
                normal = [1.0, -sc[1] / sl, -sc[2] / sl];
                act.s_k = sc;
                act.mu_k = mult[nr + neq + act.signs.len()];
            }
        }
        if !x.iter().all(|v| v.is_finite()) {
            return None;
        }
        Some((x, mult))
    }

    /// The condensed system of the active set into `self.kkt` (`ms` small unknowns), about the
    /// point `x` (its fixed variables set) and the cone's surface `normal`; returns its
    /// right-hand side (k + ms).
    fn assemble_active_kkt(
        &mut self,
        v: &Values,
        act: &ActiveSet,
        x: &[f64],
        normal: &[f64; 3],
        ms: usize,
    ) -> Vec<f64> {
        let (k, nr, neq) = (self.k, self.nr, self.neq);
        let fixed = &act.fixed;
        let kkt = &mut self.kkt;
        kkt.resize(k, ms);
        kkt.c.fill(0.0);
        let mut rhs = vec![0.0; k + ms];
        for i in 0..k {
            let free = fixed[i].is_none();
            kkt.d[i] = if free { v.p_diag[i] } else { 1.0 };
            rhs[i] = if free { -v.q[i] } else { 0.0 };
        }
        let mut col = 0;
        for r in 0..nr {
            kkt.b[col * k..(col + 1) * k].fill(0.0);
            kkt.c[col * ms + col] = v.p_diag[k + r];
            kkt.c[col * ms + nr + self.reserves[r]] = v.reserve_coef[r];
            kkt.c[(nr + self.reserves[r]) * ms + col] = v.reserve_coef[r];
            kkt.kind[col] = 1.0;
            rhs[k + col] = -v.q[k + r];
            col += 1;
        }
        // an equation row `a·u = β` on the free variables, the fixed ones moved right
        let put = |kkt: &mut Kkt, col: usize, a: &[f64], beta: f64, rhs: &mut [f64]| {
            let mut b = beta;
            for i in 0..k {
                if fixed[i].is_some() {
                    b -= a[i] * x[i];
                    kkt.b[col * k + i] = 0.0;
                } else {
                    kkt.b[col * k + i] = a[i];
                }
            }
            kkt.kind[col] = -1.0;
            rhs[k + col] = b;
        };
        for j in 0..neq {
            put(kkt, col, &v.eq[j * k..(j + 1) * k], v.eq_rhs[j], &mut rhs);
            col += 1;
        }
        for &s in &act.signs {
            put(kkt, col, &v.sign[s * k..(s + 1) * k], v.sign_rhs[s], &mut rhs);
            col += 1;
        }
        match act.cone {
            ConeState::Off => {}
            ConeState::Surface => {
                let a: Vec<f64> = (0..k).map(|i| (0..3).map(|r| normal[r] * v.cone[r * k + i]).sum()).collect();
                let beta = (0..3).map(|r| normal[r] * v.cone_rhs[r]).sum();
                put(kkt, col, &a, beta, &mut rhs);
                // ψ(s) = s₀ − |s₁| has the Hessian −t tᵀ/|s₁| (t ⟂ s₁): the Lagrangian's
                // term μ ψ adds κ (aᵀ(x − x_k))² with a = G_cᵀ t, κ = μ/|s₁|, through the
                // unknown ω = κ aᵀ(x − x_k)
                let s_k = act.s_k;
                let sl = s_k[1].hypot(s_k[2]);
                let kappa = act.mu_k / sl;
                let t = [-s_k[2] / sl, s_k[1] / sl];
                let ok = kappa > 0.0 && kappa.is_finite();
                let a: Vec<f64> =
                    (0..k).map(|i| if ok { t[0] * v.cone[k + i] + t[1] * v.cone[2 * k + i] } else { 0.0 }).collect();
                put(kkt, col + 1, &a, dot(&a, &x[..k]), &mut rhs);
                kkt.c[(col + 1) * ms + col + 1] = if ok { -1.0 / kappa } else { -1.0 };
            }
            ConeState::Apex => {
                for r in 0..3 {
                    put(kkt, col + r, &v.cone[r * k..(r + 1) * k], v.cone_rhs[r], &mut rhs);
                }
            }
        }
        rhs
    }

    /// The dual of a polished point: `y` (n_eq), `z` (m: the active rows' multipliers, the
    /// fixed variables' from stationarity) and the stationarity residual `g` (n).
    fn recover_duals(&self, v: &Values, act: &ActiveSet, x: &[f64], mult: &[f64]) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (k, nr, neq) = (self.k, self.nr, self.neq);
        let rc = self.m_nn;
        let mut y = vec![0.0; neq];
        y.copy_from_slice(&mult[nr..nr + neq]);
        let mut z = vec![0.0; self.m];
        for (a, &s) in act.signs.iter().enumerate() {
            z[2 * k + s] = mult[nr + neq + a];
        }
        match act.cone {
            ConeState::Off => {}
            ConeState::Surface => {
                // the normal at the polished point (the last solve's differs by the step, O(Δ))
                let sc: Vec<f64> = (0..3).map(|r| v.cone_rhs[r] - dot(&v.cone[r * k..(r + 1) * k], &x[..k])).collect();
                let sl = sc[1].hypot(sc[2]);
                let mu = mult[nr + neq + act.signs.len()];
                z[rc..rc + 3].copy_from_slice(&[mu, -mu * sc[1] / sl, -mu * sc[2] / sl]);
            }
            ConeState::Apex => z[rc..rc + 3].copy_from_slice(&mult[nr + neq + act.signs.len()..]),
        }
        let mut g = vec![0.0; self.n];
        for i in 0..self.n {
            g[i] = v.p_diag[i] * x[i] + v.q[i];
        }
        self.et_add(v, &y, &mut g);
        self.gt_add(v, &z, &mut g);
        for i in 0..k {
            if let Some((r, _)) = act.fixed[i] {
                let c = if r == i {
                    1.0
                } else if r == k + i {
                    -1.0
                } else {
                    v.stress[i]
                };
                z[r] = -g[i] / c;
                g[i] = 0.0;
            }
        }
        (y, z, g)
    }

    /// Dual feasibility, stationarity and primal feasibility of `(x, y, z)` to [`TOL_ACCEPT`].
    fn check_optimality(&self, v: &Values, x: &[f64], y: &[f64], z: &[f64], g: &[f64]) -> Checks {
        let (neq, rc) = (self.neq, self.m_nn);
        let dual_ok = (0..self.m_nn).all(|r| z[r] >= -TOL_ACCEPT)
            && (!self.cone || z[rc] + TOL_ACCEPT >= z[rc + 1].hypot(z[rc + 2]));
        let scale = 1.0 + inf_norm(&v.q).max(inf_norm(z)).max(inf_norm(y));
        let station_ok = inf_norm(g) <= TOL_ACCEPT * scale;
        let mut gx = vec![0.0; self.m];
        self.g_mul(v, x, &mut gx);
        let mut ex = vec![0.0; neq];
        self.e_mul(v, x, &mut ex);
        let pscale = 1.0 + inf_norm(&v.eq_rhs).max(inf_norm(&self.h)).max(inf_norm(x));
        let eq_ok = (0..neq).all(|j| (ex[j] - v.eq_rhs[j]).abs() <= TOL_ACCEPT * pscale);
        let ineq_ok = (0..self.m_nn).all(|r| self.h[r] - gx[r] >= -TOL_ACCEPT * pscale)
            && (!self.cone || {
                let sc = [self.h[rc] - gx[rc], self.h[rc + 1] - gx[rc + 1], self.h[rc + 2] - gx[rc + 2]];
                sc[0] + TOL_ACCEPT * pscale >= sc[1].hypot(sc[2])
            });
        Checks { dual_ok, station_ok, eq_ok, ineq_ok, gx, pscale }
    }

    /// A primal-dual active-set step: rows the point violates by more than `tol` join the set,
    /// rows whose multiplier came out negative leave it.
    fn correct_active_set(&self, v: &Values, act: &mut ActiveSet, z: &[f64], gx: &[f64], tol: f64) {
        let (k, ns) = (self.k, self.ns);
        let rt = 2 * k + ns;
        let rc = self.m_nn;
        for i in 0..k {
            match act.fixed[i] {
                Some((r, _)) if z[r] < -TOL_ACCEPT => act.fixed[i] = None,
                Some(_) => {}
                None => {
                    let mut rows = vec![(i, 1.0), (k + i, 0.0)];
                    if self.nst > 0 {
                        rows.push((rt + i, v.stress_rhs / v.stress[i]));
                    }
                    act.fixed[i] = rows.into_iter().find(|&(r, _)| self.h[r] - gx[r] < -tol);
                }
            }
        }
        act.signs.retain(|&sg| z[2 * k + sg] >= -TOL_ACCEPT);
        for sg in 0..ns {
            if self.h[2 * k + sg] - gx[2 * k + sg] < -tol && !act.signs.contains(&sg) {
                act.signs.push(sg);
            }
        }
        if self.cone {
            let sc = [self.h[rc] - gx[rc], self.h[rc + 1] - gx[rc + 1], self.h[rc + 2] - gx[rc + 2]];
            match act.cone {
                ConeState::Off if sc[0] + tol < sc[1].hypot(sc[2]) => {
                    act.cone = ConeState::Surface;
                    act.s_k = sc;
                    act.mu_k = 0.0;
                }
                ConeState::Surface if z[rc] < -TOL_ACCEPT => act.cone = ConeState::Off,
                _ => {}
            }
        }
    }
}
