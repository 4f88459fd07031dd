//! A dense primal-dual interior-point solver for the load-sharing programs without power cones,
//! built for their structure (see `docs/theory/optimization.md`, "The interior-point solver").
//!
//! The program is that of [`crate::program`], `min ½ zᵀPz + qᵀz` s.t. `Ez = b` (the inputs'
//! equalities) and `Gz + s = h`, `s ∈ K`, with `K` the non-negative orthant (bounds, sign rows,
//! stress rows) times at most one 3-dimensional second-order cone (the joint cone). Mehrotra's
//! predictor-corrector with Nesterov-Todd scaling (the `coneqp` method of CVXOPT, without the
//! homogeneous embedding: an infeasible or stalling program is handed to clarabel).
//!
//! Every Newton system is condensed: the bound and stress rows of a muscle touch its variable
//! `u_i` alone (and the epigraph variable `t`), so they fold into a diagonal `D` (k); what remains
//! couples `u` with few unknowns — the reserves, `t`, the equalities' multipliers, the sign rows'
//! and the cone's duals — `m ≈ 10-20` of them, through a dense `k x m` block `B`. The Schur
//! complement `C − Bᵀ D⁻¹ B` (m x m) is factorised by LU with partial pivoting: `O(k m²)` per
//! iteration, no sparse factorisation.
//!
//! After the interior point, an active-set polish: the bounds, sign rows and cone found active
//! are imposed as equations (the cone by its tangent plane at the solution, refined twice), the
//! others dropped, and the equality-constrained QP solved exactly; accepted when primal and dual
//! feasible to 1e-12, so that the last digits do not depend on the interior point's path.

use crate::program::{Layout, Values};

mod kkt;
mod polish;
mod soc;
#[cfg(test)]
mod tests;
mod vector;

use kkt::Kkt;
use soc::{M3, jordan, jordan_div, m3v, mat3_mul, soc_scaling, soc_step};
use vector::{axpy, dot, inf_norm};

/// Stopping tolerance (relative feasibility and gap), clarabel's settings of `qp`.
const TOL: f64 = 1e-12;
/// The polish is first tried at this feasibility and gap of the interior point.
const TOL_POLISH: f64 = 1e-6;
const POLISH_GAP: f64 = 1e-1;
/// Feasibility tolerance of a polished solution (the program's rows are O(1)).
const TOL_ACCEPT: f64 = 1e-12;
const MAX_ITER: u32 = 60;
/// Fraction of the step to the boundary of the cone.
const STEP: f64 = 0.99;

/// The iterate's relative primal and dual residuals, its gap `sᵀz` and relative gap.
struct Residuals {
    pres: f64,
    dres: f64,
    rgap: f64,
    gap: f64,
}

/// What the solver found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DenseStatus {
    /// Optimal to the tolerances (polished or not).
    Solved { polished: bool },
    /// No solution found: the program may be infeasible, or stalled; clarabel decides.
    Failed,
}

/// The dense solver of one [`Layout`], with its workspace (allocated once).
#[derive(Clone, Debug, Default)]
pub(crate) struct Dense {
    k: usize,
    nr: usize,
    has_t: bool,
    neq: usize,
    ns: usize,
    nst: usize,
    cone: bool,
    n: usize,
    /// Non-negative rows, then the cone's 3.
    m_nn: usize,
    m: usize,
    reserves: Vec<usize>,
    // iterate
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    s: Vec<f64>,
    // residuals and directions
    rx: Vec<f64>,
    ry: Vec<f64>,
    rz: Vec<f64>,
    h: Vec<f64>,
    dx: Vec<f64>,
    dy: Vec<f64>,
    dz: Vec<f64>,
    ds: Vec<f64>,
    dxa: Vec<f64>,
    dza: Vec<f64>,
    dsa: Vec<f64>,
    /// Scaled point `λ` (m), `W²` of the non-negative rows, the cone's `W`, `W⁻¹`.
    lam: Vec<f64>,
    w2: Vec<f64>,
    wc: M3,
    wci: M3,
    rhs: Vec<f64>,
    tmp: Vec<f64>,
    kkt: Kkt,
    /// Iterations of the last solve.
    pub iterations: u32,
}

impl Dense {
    /// The solver for programs of `layout`; `None` for power cones (clarabel's).
    pub fn new(layout: &Layout) -> Option<Self> {
        if layout.cubes {
            return None;
        }
        let k = layout.k;
        let nst = if layout.stress.is_some() { k } else { 0 };
        let m_nn = 2 * k + layout.n_sign + nst;
        let m = m_nn + if layout.cone { 3 } else { 0 };
        let n = layout.n_var();
        let v = |len: usize| vec![0.0; len];
        Some(Self {
            k,
            nr: layout.reserves.len(),
            has_t: layout.stress == Some(true),
            neq: layout.n_eq,
            ns: layout.n_sign,
            nst,
            cone: layout.cone,
            n,
            m_nn,
            m,
            reserves: layout.reserves.clone(),
            x: v(n),
            y: v(layout.n_eq),
            z: v(m),
            s: v(m),
            rx: v(n),
            ry: v(layout.n_eq),
            rz: v(m),
            h: v(m),
            dx: v(n),
            dy: v(layout.n_eq),
            dz: v(m),
            ds: v(m),
            dxa: v(n),
            dza: v(m),
            dsa: v(m),
            lam: v(m),
            w2: v(m),
            wc: [[0.0; 3]; 3],
            wci: [[0.0; 3]; 3],
            rhs: Vec::new(),
            tmp: v(m.max(n)),
            kkt: Kkt::default(),
            iterations: 0,
        })
    }

    fn t(&self) -> usize {
        self.k + self.nr
    }
    fn row_sign(&self) -> usize {
        2 * self.k
    }
    fn row_stress(&self) -> usize {
        2 * self.k + self.ns
    }
    fn row_cone(&self) -> usize {
        self.m_nn
    }

    /// `out = G x` (m).
    fn g_mul(&self, v: &Values, x: &[f64], out: &mut [f64]) {
        let k = self.k;
        for i in 0..k {
            out[i] = x[i];
            out[k + i] = -x[i];
        }
        let rs = self.row_sign();
        for s in 0..self.ns {
            out[rs + s] = dot(&v.sign[s * k..(s + 1) * k], &x[..k]);
        }
        let rt = self.row_stress();
        let xt = if self.has_t { x[self.t()] } else { 0.0 };
        for i in 0..self.nst {
            out[rt + i] = v.stress[i] * x[i] - xt;
        }
        if self.cone {
            let rc = self.row_cone();
            for r in 0..3 {
                out[rc + r] = dot(&v.cone[r * k..(r + 1) * k], &x[..k]);
            }
        }
    }

    /// `out += Gᵀ z` (n).
    fn gt_add(&self, v: &Values, z: &[f64], out: &mut [f64]) {
        let k = self.k;
        for i in 0..k {
            out[i] += z[i] - z[k + i];
        }
        let rs = self.row_sign();
        for s in 0..self.ns {
            axpy(z[rs + s], &v.sign[s * k..(s + 1) * k], &mut out[..k]);
        }
        let rt = self.row_stress();
        for i in 0..self.nst {
            out[i] += v.stress[i] * z[rt + i];
            if self.has_t {
                out[self.k + self.nr] -= z[rt + i];
            }
        }
        if self.cone {
            let rc = self.row_cone();
            for r in 0..3 {
                axpy(z[rc + r], &v.cone[r * k..(r + 1) * k], &mut out[..k]);
            }
        }
    }

    /// `out = E x` (n_eq).
    fn e_mul(&self, v: &Values, x: &[f64], out: &mut [f64]) {
        let k = self.k;
        for j in 0..self.neq {
            out[j] = dot(&v.eq[j * k..(j + 1) * k], &x[..k]);
        }
        for (r, &j) in self.reserves.iter().enumerate() {
            out[j] += v.reserve_coef[r] * x[k + r];
        }
    }

    /// `out += Eᵀ y` (n).
    fn et_add(&self, v: &Values, y: &[f64], out: &mut [f64]) {
        let k = self.k;
        for j in 0..self.neq {
            axpy(y[j], &v.eq[j * k..(j + 1) * k], &mut out[..k]);
        }
        for (r, &j) in self.reserves.iter().enumerate() {
            out[k + r] += v.reserve_coef[r] * y[j];
        }
    }

    fn fill_h(&mut self, v: &Values) {
        let k = self.k;
        self.h[..k].fill(1.0);
        self.h[k..2 * k].fill(0.0);
        let rs = self.row_sign();
        self.h[rs..rs + self.ns].copy_from_slice(&v.sign_rhs);
        let rt = self.row_stress();
        self.h[rt..rt + self.nst].fill(v.stress_rhs);
        if self.cone {
            let rc = self.row_cone();
            self.h[rc..rc + 3].copy_from_slice(&v.cone_rhs);
        }
    }

    /// Small unknowns: reserves, t, the equalities' multipliers, the sign rows', the cone's.
    fn n_small(&self) -> usize {
        self.nr + usize::from(self.has_t) + self.neq + self.ns + if self.cone { 3 } else { 0 }
    }

    /// Set up the condensed KKT matrix for the scaling `w2` (non-negative rows), `W` (cone).
    fn build_kkt(&mut self, v: &Values) -> bool {
        let (k, nr, neq, ns) = (self.k, self.nr, self.neq, self.ns);
        let ms = self.n_small();
        self.kkt.resize(k, ms);
        let kkt = &mut self.kkt;
        kkt.c.fill(0.0);
        let rt = 2 * k + ns;
        for i in 0..k {
            let mut d = v.p_diag[i] + 1.0 / self.w2[i] + 1.0 / self.w2[k + i];
            if self.nst > 0 {
                d += v.stress[i] * v.stress[i] / self.w2[rt + i];
            }
            kkt.d[i] = d;
        }
        let mut col = 0;
        for r in 0..nr {
            kkt.b[col * k..(col + 1) * k].fill(0.0);
            kkt.c[col * ms + col] = v.p_diag[k + r];
            kkt.c[col * ms + nr + usize::from(self.has_t) + self.reserves[r]] = v.reserve_coef[r];
            kkt.c[(nr + usize::from(self.has_t) + self.reserves[r]) * ms + col] = v.reserve_coef[r];
            kkt.kind[col] = 1.0;
            col += 1;
        }
        if self.has_t {
            let mut ctt = v.p_diag[k + nr];
            for i in 0..k {
                kkt.b[col * k + i] = -v.stress[i] / self.w2[rt + i];
                ctt += 1.0 / self.w2[rt + i];
            }
            kkt.c[col * ms + col] = ctt;
            kkt.kind[col] = 1.0;
            col += 1;
        }
        for j in 0..neq {
            kkt.b[col * k..(col + 1) * k].copy_from_slice(&v.eq[j * k..(j + 1) * k]);
            kkt.kind[col] = -1.0;
            col += 1;
        }
        let rs = 2 * k;
        for s in 0..ns {
            kkt.b[col * k..(col + 1) * k].copy_from_slice(&v.sign[s * k..(s + 1) * k]);
            kkt.c[col * ms + col] = -self.w2[rs + s];
            kkt.kind[col] = -1.0;
            col += 1;
        }
        if self.cone {
            let w2 = mat3_mul(&self.wc, &self.wc);
            for r in 0..3 {
                kkt.b[(col + r) * k..(col + r + 1) * k].copy_from_slice(&v.cone[r * k..(r + 1) * k]);
                for c in 0..3 {
                    kkt.c[(col + r) * ms + col + c] = -w2[r][c];
                }
                kkt.kind[col + r] = -1.0;
            }
        }
        kkt.factor()
    }

    /// Solve `P dx + Eᵀ dy + Gᵀ dz = bx, E dx = by, G dx − W² dz = bz` (the right-hand sides in
    /// `dx`, `dy`, `dz` on entry, the solution on exit).
    fn solve_kkt(&mut self, v: &Values) {
        let (k, nr, neq, ns) = (self.k, self.nr, self.neq, self.ns);
        let ms = self.n_small();
        let mut rhs = std::mem::take(&mut self.rhs);
        rhs.resize(k + ms, 0.0);
        let rt = 2 * k + ns;
        for i in 0..k {
            let mut r = self.dx[i] + self.dz[i] / self.w2[i] - self.dz[k + i] / self.w2[k + i];
            if self.nst > 0 {
                r += v.stress[i] * self.dz[rt + i] / self.w2[rt + i];
            }
            rhs[i] = r;
        }
        let mut col = k;
        for r in 0..nr {
            rhs[col] = self.dx[k + r];
            col += 1;
        }
        if self.has_t {
            let mut r = self.dx[k + nr];
            for i in 0..k {
                r -= self.dz[rt + i] / self.w2[rt + i];
            }
            rhs[col] = r;
            col += 1;
        }
        rhs[col..col + neq].copy_from_slice(&self.dy);
        col += neq;
        let rs = 2 * k;
        rhs[col..col + ns].copy_from_slice(&self.dz[rs..rs + ns]);
        col += ns;
        let rc = self.m_nn;
        if self.cone {
            rhs[col..col + 3].copy_from_slice(&self.dz[rc..rc + 3]);
        }
        self.kkt.solve(&mut rhs);
        // back to the unknowns: dz of the folded rows from dx
        let xt = if self.has_t { rhs[k + nr] } else { 0.0 };
        for i in 0..k {
            let dxi = rhs[i];
            self.dz[i] = (dxi - self.dz[i]) / self.w2[i];
            self.dz[k + i] = (-dxi - self.dz[k + i]) / self.w2[k + i];
            if self.nst > 0 {
                self.dz[rt + i] = (v.stress[i] * dxi - xt - self.dz[rt + i]) / self.w2[rt + i];
            }
            self.dx[i] = dxi;
        }
        let mut col = k;
        for r in 0..nr {
            self.dx[k + r] = rhs[col];
            col += 1;
        }
        if self.has_t {
            self.dx[k + nr] = rhs[col];
            col += 1;
        }
        self.dy.copy_from_slice(&rhs[col..col + neq]);
        col += neq;
        self.dz[rs..rs + ns].copy_from_slice(&rhs[col..col + ns]);
        col += ns;
        if self.cone {
            self.dz[rc..rc + 3].copy_from_slice(&rhs[col..col + 3]);
        }
        self.rhs = rhs;
    }

    /// NT scaling at the current `s`, `z`: `w2`, the cone's `W`, and `λ`.
    fn scale(&mut self) -> bool {
        for r in 0..self.m_nn {
            self.w2[r] = self.s[r] / self.z[r];
            self.lam[r] = (self.s[r] * self.z[r]).sqrt();
        }
        if self.cone {
            let rc = self.m_nn;
            let Some((w, wi, lam)) = soc_scaling(&self.s[rc..rc + 3], &self.z[rc..rc + 3]) else { return false };
            self.wc = w;
            self.wci = wi;
            self.lam[rc..rc + 3].copy_from_slice(&lam);
        }
        self.w2.iter().take(self.m_nn).all(|w| *w > 0.0 && w.is_finite())
    }

    /// `out = W a` over all rows (the non-negative ones `√w2`).
    fn w_mul(&self, a: &[f64], out: &mut [f64]) {
        for r in 0..self.m_nn {
            out[r] = self.w2[r].sqrt() * a[r];
        }
        if self.cone {
            let rc = self.m_nn;
            out[rc..rc + 3].copy_from_slice(&m3v(&self.wc, &a[rc..rc + 3]));
        }
    }

    /// Largest step to the cone's boundary for `s + α ds`, `z + α dz` (capped at 1).
    fn max_step(&self, ds: &[f64], dz: &[f64]) -> f64 {
        let mut a = 1.0f64;
        for r in 0..self.m_nn {
            if ds[r] < 0.0 {
                a = a.min(-self.s[r] / ds[r]);
            }
            if dz[r] < 0.0 {
                a = a.min(-self.z[r] / dz[r]);
            }
        }
        if self.cone {
            let rc = self.m_nn;
            a = soc_step(&self.s[rc..rc + 3], &ds[rc..rc + 3], a);
            a = soc_step(&self.z[rc..rc + 3], &dz[rc..rc + 3], a);
        }
        a
    }

    fn degree(&self) -> f64 {
        (self.m_nn + usize::from(self.cone)) as f64
    }

    /// Shift `v` into the interior of `K`: `v + (1 + α) e` when not already inside.
    fn shift_into_cone(&self, v: &mut [f64]) {
        let mut alpha = f64::NEG_INFINITY;
        for r in 0..self.m_nn {
            alpha = alpha.max(-v[r]);
        }
        if self.cone {
            let rc = self.m_nn;
            alpha = alpha.max(v[rc + 1].hypot(v[rc + 2]) - v[rc]);
        }
        if alpha >= -1e-8 {
            let a = 1.0 + alpha.max(0.0);
            for r in 0..self.m_nn {
                v[r] += a;
            }
            if self.cone {
                v[self.m_nn] += a;
            }
        }
    }

    /// Solve the program with the numbers `v`; the solution in `x()` when solved.
    pub fn solve(&mut self, v: &Values) -> DenseStatus {
        self.iterations = 0;
        if !self.applies(v) || !self.start(v) {
            return DenseStatus::Failed;
        }
        let bnorm = inf_norm(&v.eq_rhs).max(inf_norm(&self.h));
        let qnorm = inf_norm(&v.q);
        // the polish is tried from a gap of 1e-3 on, again each time the gap fell tenfold
        let mut polish_gap = POLISH_GAP * 10.0;
        loop {
            let Residuals { pres, dres, rgap, gap } = self.residuals(v, bnorm, qnorm);
            if !(pres.is_finite() && dres.is_finite() && gap.is_finite()) {
                return DenseStatus::Failed;
            }
            let tol_met = |t: f64| pres <= t && dres <= t && rgap <= t;
            if pres <= TOL_POLISH && dres <= TOL_POLISH && rgap <= polish_gap / 10.0 {
                polish_gap = rgap.max(f64::MIN_POSITIVE);
                if self.polish(v) {
                    return DenseStatus::Solved { polished: true };
                }
            }
            if tol_met(TOL) {
                return DenseStatus::Solved { polished: self.polish(v) };
            }
            // an infeasible program (no homogeneous embedding here): the primal residual stays
            // while the gap runs away; clarabel finds out and says so
            if self.iterations >= MAX_ITER || (self.iterations >= 25 && pres > 1e-6) || gap > 1e12 {
                return DenseStatus::Failed;
            }
            self.iterations += 1;
            if !self.scale() || !self.build_kkt(v) {
                return DenseStatus::Failed;
            }
            let mu = gap / self.degree();
            let (sigma, wdz) = self.predictor(v, gap);
            self.corrector(v, sigma, mu, wdz);
            if !self.take_step() {
                return DenseStatus::Failed;
            }
        }
    }

    /// The starting point: the KKT system with `W = I` (CVXOPT's), then shifted into the cone;
    /// false when that system is singular.
    fn start(&mut self, v: &Values) -> bool {
        let (n, m) = (self.n, self.m);
        self.fill_h(v);
        self.w2.fill(1.0);
        self.wc = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        if !self.build_kkt(v) {
            return false;
        }
        for i in 0..n {
            self.dx[i] = -v.q[i];
        }
        self.dy.copy_from_slice(&v.eq_rhs);
        self.dz.copy_from_slice(&self.h);
        self.solve_kkt(v);
        self.x.copy_from_slice(&self.dx);
        self.y.copy_from_slice(&self.dy);
        // G x − z = h: s = h − G x = −z
        let mut tmp = std::mem::take(&mut self.tmp);
        self.g_mul(v, &self.x, &mut tmp);
        for r in 0..m {
            self.s[r] = self.h[r] - tmp[r];
        }
        let mut s = std::mem::take(&mut self.s);
        self.shift_into_cone(&mut s);
        self.s = s;
        let mut z = std::mem::take(&mut self.dz);
        self.shift_into_cone(&mut z);
        self.z.copy_from_slice(&z);
        self.dz = z;
        self.tmp = tmp;
        true
    }

    /// The residuals `rx`, `ry`, `rz` of the iterate (kept for the step) and their relative
    /// sizes; `bnorm`, `qnorm` are the data's infinity norms.
    fn residuals(&mut self, v: &Values, bnorm: f64, qnorm: f64) -> Residuals {
        let (n, m, neq) = (self.n, self.m, self.neq);
        self.rx.copy_from_slice(&v.q);
        for i in 0..n {
            self.rx[i] += v.p_diag[i] * self.x[i];
        }
        let (mut rx, mut ry, mut rz) =
            (std::mem::take(&mut self.rx), std::mem::take(&mut self.ry), std::mem::take(&mut self.rz));
        self.et_add(v, &self.y, &mut rx);
        self.gt_add(v, &self.z, &mut rx);
        self.e_mul(v, &self.x, &mut ry);
        for j in 0..neq {
            ry[j] -= v.eq_rhs[j];
        }
        self.g_mul(v, &self.x, &mut rz);
        for r in 0..m {
            rz[r] += self.s[r] - self.h[r];
        }
        let gap = dot(&self.s, &self.z);
        let pobj: f64 = (0..n).map(|i| 0.5 * v.p_diag[i] * self.x[i] * self.x[i] + v.q[i] * self.x[i]).sum();
        let xnorm = inf_norm(&self.x);
        let pres = inf_norm(&ry).max(inf_norm(&rz)) / (1.0 + bnorm.max(xnorm));
        let px = (0..n).fold(0.0f64, |a, i| a.max((v.p_diag[i] * self.x[i]).abs()));
        let dres = inf_norm(&rx) / (1.0 + qnorm.max(px));
        let rgap = gap / (1.0 + pobj.abs());
        (self.rx, self.ry, self.rz) = (rx, ry, rz);
        Residuals { pres, dres, rgap, gap }
    }

    /// Mehrotra's predictor: the affine direction, `λ∘(W dz + W⁻¹ ds) = −λ∘λ`, so
    /// `ds = −s − W² dz` and the z-rhs `−rz + s`. Leaves `W dz_a` in `tmp`, `ds_a`, `dz_a` in
    /// `dsa`, `dza`; returns the centring `σ` and the cone's rows of `W dz_a`.
    fn predictor(&mut self, v: &Values, gap: f64) -> (f64, [f64; 3]) {
        let (n, m, neq) = (self.n, self.m, self.neq);
        for i in 0..n {
            self.dx[i] = -self.rx[i];
        }
        for j in 0..neq {
            self.dy[j] = -self.ry[j];
        }
        for r in 0..m {
            self.dz[r] = -self.rz[r] + self.s[r];
        }
        self.solve_kkt(v);
        let mut tmp = std::mem::take(&mut self.tmp);
        self.w_mul(&self.dz, &mut tmp);
        let mut wdz = [0.0; 3];
        for r in 0..self.m_nn {
            self.dsa[r] = -self.s[r] - self.w2[r] * self.dz[r];
        }
        if self.cone {
            let rc = self.m_nn;
            wdz.copy_from_slice(&tmp[rc..rc + 3]);
            let w2dz = m3v(&self.wc, &wdz);
            for r in 0..3 {
                self.dsa[rc + r] = -self.s[rc + r] - w2dz[r];
            }
        }
        self.tmp = tmp;
        self.dxa.copy_from_slice(&self.dx);
        self.dza.copy_from_slice(&self.dz);
        let alpha = self.max_step(&self.dsa, &self.dza);
        let mut gap_a = 0.0;
        for r in 0..m {
            gap_a += (self.s[r] + alpha * self.dsa[r]) * (self.z[r] + alpha * self.dza[r]);
        }
        let sigma = (gap_a / gap).clamp(0.0, 1.0).powi(3);
        (sigma, wdz)
    }

    /// The corrector: `r_c = −λ∘λ − (W⁻¹ ds_a)∘(W dz_a) + σ μ e`, `u = λ \ r_c`, the z-rhs
    /// `−rz − W u`; the direction in `dx`, `dy`, `dz`, `ds`.
    fn corrector(&mut self, v: &Values, sigma: f64, mu: f64, wdz: [f64; 3]) {
        let (n, m, neq) = (self.n, self.m, self.neq);
        // W dz_a in tmp (from the predictor), W⁻¹ ds_a below
        let mut tmp = std::mem::take(&mut self.tmp);
        let mut u = std::mem::take(&mut self.ds);
        for r in 0..self.m_nn {
            let wi = self.w2[r].sqrt();
            let rc = -self.lam[r] * self.lam[r] - (self.dsa[r] / wi) * tmp[r] + sigma * mu;
            u[r] = rc / self.lam[r];
        }
        if self.cone {
            let rc0 = self.m_nn;
            let l = [self.lam[rc0], self.lam[rc0 + 1], self.lam[rc0 + 2]];
            let a = m3v(&self.wci, &self.dsa[rc0..rc0 + 3]);
            let b = wdz;
            let ll = jordan(&l, &l);
            let ab = jordan(&a, &b);
            let r = [-ll[0] - ab[0] + sigma * mu, -ll[1] - ab[1], -ll[2] - ab[2]];
            let q = jordan_div(&l, &r);
            u[rc0..rc0 + 3].copy_from_slice(&q);
        }
        // z-rhs: −rz − W u; ds = W (u − W dz)
        self.w_mul(&u, &mut tmp);
        for i in 0..n {
            self.dx[i] = -self.rx[i];
        }
        for j in 0..neq {
            self.dy[j] = -self.ry[j];
        }
        for r in 0..m {
            self.dz[r] = -self.rz[r] - tmp[r];
        }
        self.solve_kkt(v);
        // ds from the rows, G dx + ds = −rz, rather than from W (u − W dz): the same in
        // exact arithmetic, but the primal residual then shrinks by 1 − α to round-off
        // where an active bound's W² is 1e-14
        self.g_mul(v, &self.dx, &mut u);
        for r in 0..m {
            u[r] = -self.rz[r] - u[r];
        }
        self.ds = u;
        self.tmp = tmp;
    }

    /// The step along the direction, a fraction [`STEP`] of the way to the cone's boundary;
    /// false when it is too short to progress.
    fn take_step(&mut self) -> bool {
        let alpha = (STEP * self.max_step(&self.ds, &self.dz)).min(1.0);
        if !(alpha > 1e-10) {
            return false;
        }
        for i in 0..self.n {
            self.x[i] += alpha * self.dx[i];
        }
        for j in 0..self.neq {
            self.y[j] += alpha * self.dy[j];
        }
        for r in 0..self.m {
            self.s[r] += alpha * self.ds[r];
            self.z[r] += alpha * self.dz[r];
        }
        true
    }

    /// Whether the program has curvature in every muscle (`P_ii > 0`): (a)-(c), (d)'s second
    /// stage, a maximum moment's second stage. Without it — (d)'s first stage, a maximum
    /// moment's first, linear programs with many optimal forces — `D` of the condensed system
    /// falls to the bounds' barrier terms alone, its inverse grows with `1/μ`, and the
    /// equalities' residual with it: those stay clarabel's.
    pub fn applies(&self, v: &Values) -> bool {
        !self.has_t && v.p_diag[..self.k].iter().all(|&p| p > 0.0)
    }

    /// The primal solution (n_var).
    pub fn x(&self) -> &[f64] {
        &self.x
    }

    /// The multipliers of the equalities (n_eq) and the duals of the rows of `G` (bounds
    /// upper then lower, sign rows, stress rows, cone).
    #[cfg(test)]
    pub fn duals(&self) -> (&[f64], &[f64]) {
        (&self.y, &self.z)
    }
}
