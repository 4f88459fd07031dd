//! Marker tracking: model points followed over time, `w ∫ |x_p(q) − r(t)|² dt` per point `p`
//! (`x_p` its position in m, `r` a measured or prescribed path), integrated with the scheme's
//! quadrature as the other running terms.
//!
//! Positions and their partials come from the kernel at each grid point's `q`: `x_p` from the
//! position solve, `∂x_p/∂q` from the first-order transfer functions (`DF_x`'s rows of the
//! point), so the gradient is exact. The Hessian's part is
//! `2 w (DF_pᵀ DF_p + Σ_a (x_a − r_a) D²F_{p,a})`, from the second-order transfer functions; it
//! is given where the Hessian is exact, one input ([`crate::exact_hessian`]), where this
//! `n × n` block is its `q` entry.

use mollier_core::kinematics::solve_positions;
use mollier_core::transfer::{first_order, second_order};
use mollier_core::{Data, KinematicsError, NodeId, pair_index};

use crate::Transcription;

/// A model point followed over time: `weight ∫ |x(q) − r(t)|² dt`, `r` piecewise linear.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerTracking {
    /// Name, for messages.
    pub name: String,
    /// The model's position node.
    pub node: NodeId,
    /// Weight (per m² and second).
    pub weight: f64,
    /// The reference `(t, position)` (s, m), times increasing; held beyond its ends.
    pub reference: Vec<(f64, [f64; 3])>,
}

/// The markers at one grid point: per marker its position (m) and `∂x/∂q` (3 rows of n, row-major).
#[derive(Clone, Debug, Default)]
pub(crate) struct MarkerPoint {
    position: Vec<[f64; 3]>,
    jacobian: Vec<f64>,
}

/// The kernel's data for the markers and the evaluations at the last `z`'s coordinates.
pub(crate) struct MarkerCache {
    data: Data,
    at: Option<(Vec<f64>, Vec<MarkerPoint>)>,
}

impl MarkerCache {
    pub(crate) fn new(model: &mollier_core::Model) -> Self {
        Self { data: Data::new(model), at: None }
    }
}

/// `r(t)` of a piecewise linear path, constant beyond its ends.
pub(crate) fn interpolate3(r: &[(f64, [f64; 3])], t: f64) -> [f64; 3] {
    std::array::from_fn(|a| {
        let axis: Vec<(f64, f64)> = r.iter().map(|&(ti, p)| (ti, p[a])).collect();
        crate::interpolate(&axis, t)
    })
}

impl Transcription<'_, '_, '_> {
    /// The coordinates of every point of `z`, concatenated.
    fn all_q(&self, z: &[f64]) -> Vec<f64> {
        let n = self.layout.n;
        (0..self.points).flat_map(|i| z[i * self.nz..i * self.nz + n].iter().copied()).collect()
    }

    /// Evaluate the markers at every point of `z` (cached for the same coordinates).
    fn place_markers(&mut self, z: &[f64]) -> Result<(), KinematicsError> {
        let q_all = self.all_q(z);
        let model = self.p.system.model;
        let (n, markers) = (self.layout.n, &self.p.objective.markers);
        let cache = &mut self.markers;
        if cache.at.as_ref().is_some_and(|(q, _)| *q == q_all) {
            return Ok(());
        }
        cache.at = None;
        let mut out = Vec::with_capacity(self.points);
        for q in q_all.chunks_exact(n.max(1)).take(self.points) {
            solve_positions(model, &mut cache.data, q)?;
            first_order(model, &mut cache.data)?;
            let df = cache.data.df_x();
            let mut p = MarkerPoint::default();
            for mk in markers {
                let o = model.nodes()[mk.node.index()].offset;
                p.position.push(cache.data.position(model, mk.node));
                p.jacobian.extend((0..3).flat_map(|a| (0..n).map(move |j| (a, j))).map(|(a, j)| df[(o + a, j)]));
            }
            out.push(p);
        }
        cache.at = Some((q_all, out));
        Ok(())
    }

    /// `Σ_i w_i Σ_p weight_p |x_p − r_p(t_i)|²` at `z` and, if asked, its gradient added to
    /// `grad` (the NLP's); `None` where the kernel cannot place the points.
    pub(crate) fn marker_cost(&mut self, z: &[f64], grad: Option<&mut [f64]>) -> Option<f64> {
        if self.p.objective.markers.is_empty() {
            return Some(0.0);
        }
        self.place_markers(z).ok()?;
        let (n, nz) = (self.layout.n, self.nz);
        let points = &self.markers.at.as_ref().expect("placed").1;
        let mut cost = 0.0;
        let mut grad = grad;
        for (i, p) in points.iter().enumerate() {
            let wi = self.weight(i, z);
            for (k, mk) in self.p.objective.markers.iter().enumerate() {
                let r = self.marker_refs[k][i];
                let d: [f64; 3] = std::array::from_fn(|a| p.position[k][a] - r[a]);
                cost += wi * mk.weight * d.iter().map(|v| v * v).sum::<f64>();
                if let Some(g) = grad.as_deref_mut() {
                    let jac = &p.jacobian[3 * k * n..3 * (k + 1) * n];
                    for j in 0..n {
                        let dj: f64 = (0..3).map(|a| d[a] * jac[a * n + j]).sum();
                        g[i * nz + j] += 2.0 * wi * mk.weight * dj;
                    }
                }
            }
        }
        Some(cost)
    }

    /// Add `σ ∇²` of the markers' cost to `out`, whose entry for point `i`'s `q_j` is
    /// `i · per + j` (the Hessian's diagonal blocks): the diagonal `∂²/∂q_j²` only, the whole
    /// block for one input (where the exact Hessian is given). `false` where the kernel cannot
    /// place the points.
    pub(crate) fn add_marker_hessian(&mut self, z: &[f64], sigma: f64, per: usize, out: &mut [f64]) -> bool {
        if self.p.objective.markers.is_empty() {
            return true;
        }
        let model = self.p.system.model;
        let n = self.layout.n;
        for i in 0..self.points {
            let q = &z[i * self.nz..i * self.nz + n];
            let wi = sigma * self.weight(i, z);
            let data = &mut self.markers.data;
            if solve_positions(model, data, q).is_err() || first_order(model, data).is_err() {
                return false;
            }
            if second_order(model, data).is_err() {
                return false;
            }
            let (df, d2f) = (data.df_x(), data.d2f_x());
            for (k, mk) in self.p.objective.markers.iter().enumerate() {
                let o = model.nodes()[mk.node.index()].offset;
                let x = data.position(model, mk.node);
                let r = self.marker_refs[k][i];
                for j in 0..n {
                    let pair = pair_index(j, j, n);
                    let h: f64 = (0..3).map(|a| df[(o + a, j)].powi(2) + (x[a] - r[a]) * d2f[(o + a, pair)]).sum();
                    out[i * per + j] += wi * 2.0 * mk.weight * h;
                }
            }
        }
        true
    }
}
