//! The condensed Newton system of the interior point and of the polish.

use mollier_core::dense::{lu_in_place, lu_solve};

use super::vector::{axpy, dot};

/// Static regularisation of the Schur complement, removed by iterative refinement.
const REG: f64 = 1e-13;
/// Iterative refinement: at most this many steps, until the residual is this small (relative).
const REFINE: usize = 3;
const REFINE_TOL: f64 = 1e-13;

/// The condensed KKT system `[D B; Bᵀ C]` with `D` diagonal (k) and `C` dense (m x m), solved
/// through the Schur complement `S = C − Bᵀ D⁻¹ B` with iterative refinement.
#[derive(Clone, Debug, Default)]
pub(super) struct Kkt {
    pub(super) k: usize,
    pub(super) m: usize,
    pub(super) d: Vec<f64>,
    pub(super) dinv: Vec<f64>,
    pub(super) droot: Vec<f64>,
    /// Column-major, `m` columns of `k`.
    pub(super) b: Vec<f64>,
    /// `D^(−1/2) B`.
    pub(super) bs: Vec<f64>,
    pub(super) acc: Vec<f64>,
    /// Row-major m x m.
    pub(super) c: Vec<f64>,
    /// +1 for a primal unknown of the small block, −1 for a multiplier (the regularisation's sign).
    pub(super) kind: Vec<f64>,
    pub(super) lu: Vec<f64>,
    /// The LU's row permutation, and a right-hand side permuted by it.
    pub(super) piv: Vec<usize>,
    pub(super) permuted: Vec<f64>,
    pub(super) scratch: Vec<f64>,
    pub(super) res: Vec<f64>,
    pub(super) corr: Vec<f64>,
}

impl Kkt {
    pub(super) fn resize(&mut self, k: usize, m: usize) {
        self.k = k;
        self.m = m;
        self.d.resize(k, 0.0);
        self.dinv.resize(k, 0.0);
        self.droot.resize(k, 0.0);
        self.acc.resize(k, 0.0);
        self.b.resize(k * m, 0.0);
        self.bs.resize(k * m, 0.0);
        self.c.resize(m * m, 0.0);
        self.kind.resize(m, 1.0);
        self.lu.resize(m * m, 0.0);
        self.piv.resize(m, 0);
        self.permuted.resize(m, 0.0);
        self.scratch.resize(k.max(m), 0.0);
        self.res.resize(k + m, 0.0);
        self.corr.resize(k + m, 0.0);
    }

    /// Form and factorise the regularised Schur complement; false when singular.
    pub(super) fn factor(&mut self) -> bool {
        let (k, m) = (self.k, self.m);
        if self.d.iter().any(|&d| !(d > 0.0 && d.is_finite())) {
            return false;
        }
        for i in 0..k {
            self.dinv[i] = 1.0 / self.d[i];
            self.droot[i] = self.dinv[i].sqrt();
        }
        // S = C − B̃ᵀB̃ with B̃ = D^(−1/2) B: contiguous dot products
        for a in 0..m {
            for i in 0..k {
                self.bs[a * k + i] = self.b[a * k + i] * self.droot[i];
            }
        }
        for a in 0..m {
            let ca = &self.bs[a * k..(a + 1) * k];
            for bb in a..m {
                let s = dot(ca, &self.bs[bb * k..(bb + 1) * k]);
                self.lu[a * m + bb] = self.c[a * m + bb] - s;
                self.lu[bb * m + a] = self.c[bb * m + a] - s;
            }
        }
        // per row: the cone's W² spans 1/μ to μ near the end, the equalities' rows stay O(1)
        for a in 0..m {
            let d = &mut self.lu[a * m + a];
            *d += self.kind[a] * REG * d.abs().max(1.0);
        }
        lu_in_place(&mut self.lu, m, &mut self.piv) && self.lu.iter().all(|v| v.is_finite())
    }

    /// `out = K x` (unregularised).
    pub(super) fn apply(&self, x: &[f64], out: &mut [f64]) {
        let (k, m) = (self.k, self.m);
        let (xu, xs) = x.split_at(k);
        for i in 0..k {
            out[i] = self.d[i] * xu[i];
        }
        for a in 0..m {
            let col = &self.b[a * k..(a + 1) * k];
            axpy(xs[a], col, &mut out[..k]);
            out[k + a] = dot(col, xu) + dot(&self.c[a * m..(a + 1) * m], xs);
        }
    }

    /// One solve with the factorisation: `x` holds the right-hand side on entry.
    pub(super) fn solve_once(&mut self, x: &mut [f64]) {
        let (k, m) = (self.k, self.m);
        let (xu, xs) = x.split_at_mut(k);
        for i in 0..k {
            xu[i] *= self.dinv[i];
        }
        for a in 0..m {
            xs[a] -= dot(&self.b[a * k..(a + 1) * k], xu);
        }
        for (t, &p) in self.permuted.iter_mut().zip(&self.piv) {
            *t = xs[p];
        }
        lu_solve(&self.lu, m, &mut self.permuted);
        xs.copy_from_slice(&self.permuted);
        let acc = &mut self.acc[..k];
        acc.fill(0.0);
        for a in 0..m {
            axpy(xs[a], &self.b[a * k..(a + 1) * k], acc);
        }
        for i in 0..k {
            xu[i] -= acc[i] * self.dinv[i];
        }
    }

    /// Solve `K x = rhs` in place, refining against the unregularised `K`.
    pub(super) fn solve(&mut self, x: &mut [f64]) {
        let n = self.k + self.m;
        let mut rhs = std::mem::take(&mut self.scratch);
        rhs.resize(n, 0.0);
        rhs.copy_from_slice(x);
        // residuals measured with the u-rows scaled by 1/√D: an active bound's D is 1e14, and
        // its row's size must not hide the error of the equalities' rows
        let k = self.k;
        let size = |r: &[f64], d: &[f64]| {
            (0..n).fold(0.0f64, |a, i| a.max(if i < k { r[i].abs() / d[i].sqrt() } else { r[i].abs() }))
        };
        let norm = size(&rhs, &self.d).max(f64::MIN_POSITIVE);
        self.solve_once(x);
        let mut last = f64::INFINITY;
        for _ in 0..REFINE {
            let mut res = std::mem::take(&mut self.res);
            self.apply(x, &mut res);
            for i in 0..n {
                res[i] = rhs[i] - res[i];
            }
            let worst = size(&res, &self.d);
            if worst <= REFINE_TOL * norm || worst >= 0.5 * last {
                self.res = res;
                break;
            }
            last = worst;
            self.solve_once(&mut res);
            for i in 0..n {
                x[i] += res[i];
            }
            self.res = res;
        }
        self.scratch = rhs;
    }
}
