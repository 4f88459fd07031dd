//! Marker tracking: model points followed over time, `w ∫ |x_p(q) − r(t)|² dt` per point `p`
//! (`x_p` its position in m, `r` a measured or prescribed path), integrated with the scheme's
//! quadrature as the other running terms.
//!
//! Positions and their partials are read from the kernel's data where the transcription's
//! linearization has just placed each grid point (no solve of their own): `x_p` from the
//! position solve, `∂x_p/∂q` from the first-order transfer functions (`DF_x`'s rows of the
//! point), so the gradient is exact. The Hessian's part is
//! `2 w (DF_pᵀ DF_p + Σ_a (x_a − r_a) D²F_{p,a})`, from the second-order transfer functions,
//! formed at the same placement where a Hessian is asked for; it is given where the Hessian is
//! exact, one input ([`crate::exact_hessian`]), where this `n × n` block is its `q` entry.

use mollier_core::transfer::second_order;
use mollier_core::{Data, KinematicsError, Model, NodeId, pair_index};

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

/// The markers at one grid point, as the linearization placed it: per marker its position (m),
/// `∂x/∂q` and the diagonal `∂²x/∂q_j²` (each 3 rows of n, row-major; the last empty unless the
/// Hessian is wanted).
#[derive(Clone, Debug, Default)]
struct MarkerPoint {
    position: Vec<[f64; 3]>,
    jacobian: Vec<f64>,
    curvature: Vec<f64>,
}

/// The markers at every grid point of the transcription's last linearization.
#[derive(Default)]
pub(crate) struct MarkerCache {
    /// Whether the diagonal `D²F` is read as well (an exact Hessian, or a check of the
    /// objective's).
    pub(crate) curvature: bool,
    points: Vec<MarkerPoint>,
}

impl MarkerCache {
    pub(crate) fn new(curvature: bool) -> Self {
        Self { curvature, points: Vec::new() }
    }

    /// Forget the points (a new linearization begins).
    pub(crate) fn clear(&mut self) {
        self.points.clear();
    }

    /// Read the next grid point's `markers` from `data`, placed at its `q` with its first-order
    /// transfer functions formed (`n` inputs); the second order is formed here if wanted.
    pub(crate) fn read(
        &mut self,
        model: &Model,
        data: &mut Data,
        markers: &[MarkerTracking],
        n: usize,
    ) -> Result<(), KinematicsError> {
        if markers.is_empty() {
            return Ok(());
        }
        if self.curvature {
            second_order(model, data)?;
        }
        let mut p = MarkerPoint::default();
        let df = data.df_x();
        for mk in markers {
            let o = model.nodes()[mk.node.index()].offset;
            p.position.push(data.position(model, mk.node));
            p.jacobian.extend((0..3).flat_map(|a| (0..n).map(move |j| df[(o + a, j)])));
        }
        if self.curvature {
            let d2f = data.d2f_x();
            for mk in markers {
                let o = model.nodes()[mk.node.index()].offset;
                p.curvature.extend((0..3).flat_map(|a| (0..n).map(move |j| d2f[(o + a, pair_index(j, j, n))])));
            }
        }
        self.points.push(p);
        Ok(())
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
    /// `Σ_i w_i Σ_p weight_p |x_p − r_p(t_i)|²` at `z` and, if asked, its gradient added to
    /// `grad` (the NLP's); `None` where the system cannot be linearized at `z`.
    pub(crate) fn marker_cost(&mut self, z: &[f64], grad: Option<&mut [f64]>) -> Option<f64> {
        if self.p.objective.markers.is_empty() {
            return Some(0.0);
        }
        self.linearize(z).ok()?;
        let (n, nz) = (self.layout.n, self.nz);
        let mut cost = 0.0;
        let mut grad = grad;
        for (i, p) in self.markers.points.iter().enumerate() {
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
    /// block for one input (where the exact Hessian is given). `false` where the system cannot
    /// be linearized at `z`.
    pub(crate) fn add_marker_hessian(&mut self, z: &[f64], sigma: f64, per: usize, out: &mut [f64]) -> bool {
        if self.p.objective.markers.is_empty() {
            return true;
        }
        if !self.markers.curvature {
            // a check of the objective's Hessian where IPOPT is given none: read D²F from now on
            self.markers.curvature = true;
            self.cache = None;
        }
        if self.linearize(z).is_err() {
            return false;
        }
        let n = self.layout.n;
        for (i, p) in self.markers.points.iter().enumerate() {
            let wi = sigma * self.weight(i, z);
            for (k, mk) in self.p.objective.markers.iter().enumerate() {
                let r = self.marker_refs[k][i];
                let (jac, curv) = (&p.jacobian[3 * k * n..], &p.curvature[3 * k * n..]);
                for j in 0..n {
                    let h: f64 =
                        (0..3).map(|a| jac[a * n + j].powi(2) + (p.position[k][a] - r[a]) * curv[a * n + j]).sum();
                    out[i * per + j] += wi * 2.0 * mk.weight * h;
                }
            }
        }
        true
    }
}
