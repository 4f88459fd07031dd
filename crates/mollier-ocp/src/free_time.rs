//! A free final time: the duration `T` one more NLP variable (the last, after every point's
//! `z_i`), within [`crate::Problem::duration_bounds`], `Problem::duration` its guess.
//!
//! The grid scales with it (`t_i = i T/(P − 1)`, `h = T/N`), so `T` enters
//! - the defects, each linear in `T` through `h` (`x_{k+1} − x_k − T/(2N) (ẋ_k + ẋ_{k+1})`, and
//!   Hermite-Simpson's alike): one column `∂g/∂T = −(coefficient/N) · (rates)`, and second partials
//!   `∂²g/∂T∂ẋ` that are the coefficients themselves;
//! - the quadrature: every weight is proportional to `T`, so the running cost `Σ w_i L_i` is
//!   `T Σ ŵ_i L_i`: `∂/∂T = Σ ŵ_i L_i`, `∂²/∂T∂z_i = ŵ_i ∂L_i/∂z_i`, `∂²/∂T² = 0`;
//! - the objective's `time` term `c T` (linear).
//!
//! The dynamics `f(x, ẋ, u)` do not depend on time. References sampled at the points would
//! (their times move with `T`), so tracking with a free final time is refused.

use crate::{Scheme, Transcription};

impl Transcription<'_, '_, '_> {
    /// Whether the final time is a variable.
    pub fn free_time(&self) -> bool {
        self.p.duration_bounds.is_some()
    }

    /// The index of `T` in the NLP's variables (when free).
    pub(crate) fn time_index(&self) -> usize {
        self.points * self.nz
    }

    /// The duration at `z` (s): its last variable when free, else the problem's.
    pub fn duration_of(&self, z: &[f64]) -> f64 {
        if self.free_time() { z[self.time_index()] } else { self.p.duration }
    }

    /// The quadrature weight of point `i` at `z` (s): the scheme's weight for the duration at `z`.
    pub(crate) fn weight(&self, i: usize, z: &[f64]) -> f64 {
        self.weights[i] * self.duration_of(z) / self.p.duration
    }

    /// The defects' coefficients of the rates per interval, divided by `h`: per defect row of one
    /// interval and state `j`, `(point offset in the interval, coefficient)` pairs, so that the
    /// row is `… + h Σ coefficient · ẋ_j(point)`.
    fn rate_coefficients(&self) -> Vec<(usize, Vec<(usize, f64)>)> {
        let nx = self.nx();
        match self.p.scheme {
            Scheme::Trapezoidal => (0..nx).map(|j| (j, vec![(0, -0.5), (1, -0.5)])).collect(),
            Scheme::HermiteSimpson => (0..nx)
                .map(|j| (j, vec![(0, -1.0 / 8.0), (2, 1.0 / 8.0)]))
                .chain((0..nx).map(|j| (nx + j, vec![(0, -1.0 / 6.0), (1, -4.0 / 6.0), (2, -1.0 / 6.0)])))
                .collect(),
        }
    }

    /// Grid points per interval's step (1 trapezoidal, 2 Hermite-Simpson).
    fn stride(&self) -> usize {
        match self.p.scheme {
            Scheme::Trapezoidal => 1,
            Scheme::HermiteSimpson => 2,
        }
    }

    /// The Jacobian's `T` column (row, column): every defect row with rates, after the rest.
    pub(crate) fn time_jacobian_structure(&self) -> Vec<(usize, usize)> {
        if !self.free_time() {
            return Vec::new();
        }
        let base = self.points * self.nx();
        let rows = self.rate_coefficients();
        (0..self.p.intervals)
            .flat_map(|k| rows.iter().map(move |(r, _)| (base + k * self.defect_rows() + r, self.time_index())))
            .collect()
    }

    /// Its values at `z`: `∂g/∂T = (1/N) Σ coefficient · ẋ`.
    pub(crate) fn time_jacobian_values(&self, z: &[f64], out: &mut [f64]) {
        if !self.free_time() {
            return;
        }
        let (nz, xd0) = (self.nz, self.nx());
        let n = self.p.intervals as f64;
        let rows = self.rate_coefficients();
        let mut v = 0;
        for k in 0..self.p.intervals {
            let first = k * self.stride();
            for (r, terms) in &rows {
                let j = r % xd0;
                out[v] = terms.iter().map(|&(p, c)| c * z[(first + p) * nz + xd0 + j]).sum::<f64>() / n;
                v += 1;
            }
        }
    }

    /// `∂J/∂T` at `z`: the running cost per unit duration, plus the `time` weight.
    pub(crate) fn time_gradient(&self, z: &[f64]) -> f64 {
        let t = self.duration_of(z);
        let running: f64 = (0..self.points)
            .map(|i| self.weight(i, z) / t * self.running(i, &z[i * self.nz..(i + 1) * self.nz], None))
            .sum();
        running + self.p.objective.time
    }

    /// The Hessian's `T` row (lower triangle: `T` is the last variable): every variable of every
    /// point, then `(T, T)`.
    pub(crate) fn time_hessian_pattern(&self) -> Vec<(usize, usize)> {
        if !self.free_time() {
            return Vec::new();
        }
        let t = self.time_index();
        (0..=t).map(|c| (t, c)).collect()
    }

    /// Add the `T` row's values at `z` to `out` (the order of [`Self::time_hessian_pattern`]):
    /// `σ ŵ_i ∂L_i/∂z_i` and `Σ_r λ_r ∂²g_r/∂T∂ẋ` (`lambda` empty: the objective's part alone);
    /// `(T, T)` is 0.
    pub(crate) fn add_time_hessian(&self, z: &[f64], sigma: f64, lambda: &[f64], out: &mut [f64]) {
        if !self.free_time() {
            return;
        }
        let (nz, nx) = (self.nz, self.nx());
        let t = self.duration_of(z);
        let mut g = vec![0.0; nz];
        for i in 0..self.points {
            g.fill(0.0);
            self.running(i, &z[i * nz..(i + 1) * nz], Some(&mut g));
            let w = sigma * self.weight(i, z) / t;
            for (o, v) in out[i * nz..(i + 1) * nz].iter_mut().zip(&g) {
                *o += w * v;
            }
        }
        if lambda.is_empty() {
            // the objective's part alone
            return;
        }
        let base = self.points * nx;
        let n = self.p.intervals as f64;
        for k in 0..self.p.intervals {
            let first = k * self.stride();
            for (r, terms) in self.rate_coefficients() {
                let l = lambda[base + k * self.defect_rows() + r];
                for (p, c) in terms {
                    out[(first + p) * nz + nx + r % nx] += l * c / n;
                }
            }
        }
    }

    /// The NLP's variables: the points', and `T` when free.
    pub(crate) fn variables(&self) -> usize {
        self.time_index() + usize::from(self.free_time())
    }
}
