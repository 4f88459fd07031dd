//! A body-fixed direction held within a band about a plane, as a path constraint: at every grid
//! point the direction `d = x_to(q) − x_from(q)` between two model points makes
//! ```text
//! g = n · d / |d|  ∈  [lo, hi]
//! ```
//! with `n` a unit normal of a plane through the origin: `g` is the sine of the angle between
//! `d` and the plane. A plane through the thorax's vertical and a band `|g| ≤ b` hold the
//! humerus's plane of elevation: with elevation `θ` and the plane `φ` from the target's,
//! `g = sin θ sin φ`, so the band holds `φ` within `asin(b / sin θ)` and frees it where the arm
//! hangs (`sin θ ≤ b`), where the plane of elevation is not defined.
//!
//! Positions and their partials come from the kernel's data where the transcription's
//! linearization has just placed each grid point (as the markers' terms, `markers.rs`): `∂d/∂q`
//! from the first-order transfer functions, `∂²d/∂q_j∂q_k` from the second order, so the
//! Jacobian and the Hessian of the Lagrangian are exact. The row depends on `q` alone; the
//! transcription's part is shared with the modes' bounds (`position_rows.rs`).

use mollier_core::{Data, Model, NodeId, n_pairs, pair_index};

use crate::position_rows::PositionRow;

/// A direction between two model points kept within a band about a plane at every grid point.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionConstraint {
    /// Name, for messages.
    pub name: String,
    /// The direction's tail: a position node.
    pub from: NodeId,
    /// Its head: a position node.
    pub to: NodeId,
    /// The plane's unit normal (global frame).
    pub normal: [f64; 3],
    /// `[lo, hi]` of `n · d / |d|` (the sine of the angle to the plane), `-1 ≤ lo ≤ hi ≤ 1`.
    pub bounds: [f64; 2],
}

impl DirectionConstraint {
    /// Why the constraint cannot be imposed on `model`, if it cannot.
    pub fn check(&self, model: &Model) -> Result<(), String> {
        let position = |node: NodeId| {
            model.nodes().get(node.index()).is_some_and(|i| i.kind == mollier_core::element::NodeKind::Position)
        };
        if !(position(self.from) && position(self.to)) {
            return Err(format!("direction `{}`: its ends are position nodes of the model", self.name));
        }
        if self.from == self.to {
            return Err(format!("direction `{}`: its ends are one point", self.name));
        }
        let len = self.normal.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !((len - 1.0).abs() < 1e-9) {
            return Err(format!("direction `{}`: the normal is a unit vector, not of length {len}", self.name));
        }
        let [lo, hi] = self.bounds;
        if !(-1.0 <= lo && lo <= hi && hi <= 1.0) {
            return Err(format!("direction `{}`: bounds [{lo}, {hi}]: give -1 ≤ lower ≤ upper ≤ 1", self.name));
        }
        Ok(())
    }

    /// The row at the placement `data` holds (first-order transfer functions formed; the second
    /// order as well if `second`), `n` inputs; `None` where the two points coincide.
    pub(crate) fn row(&self, model: &Model, data: &Data, n: usize, second: bool) -> Option<PositionRow> {
        let (a, b) = (model.nodes()[self.from.index()].offset, model.nodes()[self.to.index()].offset);
        let (xa, xb) = (data.position(model, self.from), data.position(model, self.to));
        let d: [f64; 3] = std::array::from_fn(|k| xb[k] - xa[k]);
        let nn = &self.normal;
        let dot = |u: &[f64; 3], v: &[f64; 3]| u[0] * v[0] + u[1] * v[1] + u[2] * v[2];
        let r = dot(&d, &d).sqrt();
        if !(r > 0.0 && r.is_finite()) {
            return None;
        }
        let num = dot(nn, &d);
        let df = data.df_x();
        let dj: Vec<[f64; 3]> = (0..n).map(|j| std::array::from_fn(|k| df[(b + k, j)] - df[(a + k, j)])).collect();
        // g = N / r with N = n·d, r = |d|
        let nj: Vec<f64> = dj.iter().map(|v| dot(nn, v)).collect();
        let rj: Vec<f64> = dj.iter().map(|v| dot(&d, v) / r).collect();
        let grad = (0..n).map(|j| nj[j] / r - num * rj[j] / (r * r)).collect();
        let mut hess = Vec::new();
        if second {
            let d2 = data.d2f_x();
            hess = vec![0.0; n_pairs(n)];
            for j in 0..n {
                for k in 0..=j {
                    let p = pair_index(j, k, n);
                    let djk: [f64; 3] = std::array::from_fn(|c| d2[(b + c, p)] - d2[(a + c, p)]);
                    let n_jk = dot(nn, &djk);
                    let r_jk = (dot(&dj[j], &dj[k]) + dot(&d, &djk)) / r - rj[j] * rj[k] / r;
                    let h = n_jk / r - (nj[j] * rj[k] + nj[k] * rj[j]) / (r * r) - num * r_jk / (r * r)
                        + 2.0 * num * rj[j] * rj[k] / (r * r * r);
                    hess[p] = h;
                }
            }
        }
        Some(PositionRow { g: num / r, grad, hess })
    }
}
