//! The path constraints on the positions alone: the directions held about planes
//! (`direction.rs`) and the modes held within bounds (`mode.rs`). Each gives one row a grid
//! point, dense in that point's `q`, read where the linearization has just placed the point;
//! at every point the directions' rows come first, then the modes'.

use crate::Transcription;

/// One row at one point: its value, `∂g/∂q` (n) and, where the Hessian is wanted,
/// `∂²g/∂q_j∂q_k` for `j ≤ k` (n(n+1)/2, by [`mollier_core::pair_index`], as `D²F` keeps them).
#[derive(Clone, Debug, Default)]
pub(crate) struct PositionRow {
    pub g: f64,
    pub grad: Vec<f64>,
    pub hess: Vec<f64>,
}

impl Transcription<'_, '_, '_> {
    /// Read point `i`'s rows where the linearization has just placed it (the kernel's data
    /// holds its `q` and first-order transfer functions); the second order is formed here where
    /// the exact Hessian is given and the markers have not formed it.
    pub(crate) fn read_position_rows(&mut self, i: usize) -> Result<(), mollier_sim::SimError> {
        if self.position_constraints() == 0 {
            return Ok(());
        }
        let model = self.p.system.model;
        let second = self.hessian.is_ok();
        let formed = self.markers.curvature && !self.p.objective.markers.is_empty();
        if second && !formed {
            mollier_core::transfer::second_order(model, &mut self.ws.data)?;
        }
        for d in &self.p.directions {
            let row = d.row(model, &self.ws.data, self.layout.n, second).ok_or_else(|| {
                mollier_sim::SimError::NonFinite(format!(
                    "direction `{}` at t = {} s: its ends coincide",
                    d.name,
                    self.time(i)
                ))
            })?;
            self.position_rows.push(row);
        }
        for c in &self.p.modes {
            self.position_rows.push(c.row(&self.ws.data, self.layout.n, second));
        }
        Ok(())
    }

    /// The constraints on the positions: directions, then modes.
    fn position_constraints(&self) -> usize {
        self.p.directions.len() + self.p.modes.len()
    }

    /// The rows on the positions: one per constraint and point, after the cone's.
    pub(crate) fn position_m(&self) -> usize {
        self.position_constraints() * self.points
    }

    /// The first row on the positions.
    fn position_base(&self) -> usize {
        self.points * self.nx() + self.p.intervals * self.defect_rows() + self.cone_m()
    }

    /// Each row's `[lo, hi]` (an infinite bound as IPOPT's).
    pub(crate) fn position_bounds(&self, g_l: &mut [f64], g_u: &mut [f64]) {
        let (base, nc) = (self.position_base(), self.position_constraints());
        let bounds: Vec<[f64; 2]> =
            self.p.directions.iter().map(|d| d.bounds).chain(self.p.modes.iter().map(|m| m.bounds)).collect();
        for i in 0..self.points {
            for (c, [lo, hi]) in bounds.iter().enumerate() {
                (g_l[base + i * nc + c], g_u[base + i * nc + c]) = (lo.max(-2e19), hi.min(2e19));
            }
        }
    }

    /// The rows' values at the linearized points.
    pub(crate) fn position_values(&self, g: &mut [f64]) {
        let base = self.position_base();
        for (k, r) in self.position_rows.iter().enumerate() {
            g[base + k] = r.g;
        }
    }

    /// The rows' Jacobian pattern: each row dense in its point's `q`.
    pub(crate) fn position_structure(&self) -> Vec<(usize, usize)> {
        let (base, nc, n) = (self.position_base(), self.position_constraints(), self.layout.n);
        (0..self.points)
            .flat_map(|i| (0..nc).flat_map(move |c| (0..n).map(move |j| (base + i * nc + c, i * self.nz + j))))
            .collect()
    }

    /// The rows' Jacobian values, in [`Self::position_structure`]'s order.
    pub(crate) fn position_jacobian(&self, values: &mut [f64]) {
        let n = self.layout.n;
        for (k, r) in self.position_rows.iter().enumerate() {
            values[k * n..(k + 1) * n].copy_from_slice(&r.grad);
        }
    }

    /// Add `Σ λ_r ∇²g_r` of the rows to `out` (the `(q, q)` blocks of the points' slots).
    pub(crate) fn add_position_hessian(&self, lambda: &[f64], slots: &crate::hessian::Slots, out: &mut [f64]) {
        let (base, nc, n) = (self.position_base(), self.position_constraints(), self.layout.n);
        for (k, r) in self.position_rows.iter().enumerate() {
            let (i, l) = (k / nc, lambda[base + k]);
            for j in 0..n {
                for m in 0..=j {
                    out[slots.at(i, j, m)] += l * r.hess[mollier_core::pair_index(m, j, n)];
                }
            }
        }
    }
}
