//! A deformation mode held within bounds, as a path constraint: at every grid point
//! ```text
//! g = e_m(q)  ∈  [lo, hi]
//! ```
//! for one free mode `m` of the model (in its unit: m, rad, or the mode's own, such as a soft
//! contact's level). A contact's level held at or below 0 keeps its point on the surface: DAS3's
//! scapula, whose soft contact only pushes, then cannot lift its medial border off the thorax.
//!
//! The value and its partials come from the kernel's data where the transcription's
//! linearization has just placed each grid point: `∂e_m/∂q` is a row of the first-order transfer
//! functions, `∂²e_m/∂q_j∂q_k` a row of the second order, so the Jacobian and the Hessian of the
//! Lagrangian are exact. The row depends on `q` alone, as a direction's (`direction.rs`);
//! the transcription's part is shared with it (`position_rows.rs`).

use mollier_core::{Data, ModeId, ModeRole, Model, n_pairs};

use crate::position_rows::PositionRow;

/// A free deformation mode kept within bounds at every grid point.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeConstraint {
    /// Name, for messages.
    pub name: String,
    /// The mode: a free mode of the model.
    pub mode: ModeId,
    /// `[lo, hi]` of its value, in the mode's unit; either may be infinite.
    pub bounds: [f64; 2],
}

impl ModeConstraint {
    /// Why the constraint cannot be imposed on `model`, if it cannot.
    pub fn check(&self, model: &Model) -> Result<(), String> {
        if self.mode.index() >= model.n_e() {
            return Err(format!("mode `{}`: not a mode of the model", self.name));
        }
        if model.mode_role(self.mode) != ModeRole::Dependent {
            return Err(format!(
                "mode `{}`: a free mode (listed in `free`), whose value the positions give",
                self.name
            ));
        }
        let [lo, hi] = self.bounds;
        if !(lo <= hi && lo < f64::INFINITY && hi > f64::NEG_INFINITY) {
            return Err(format!("mode `{}`: bounds [{lo}, {hi}]: give lower ≤ upper", self.name));
        }
        Ok(())
    }

    /// The row at the placement `data` holds (first-order transfer functions formed; the second
    /// order as well if `second`), `n` inputs.
    pub(crate) fn row(&self, data: &Data, n: usize, second: bool) -> PositionRow {
        let m = self.mode.index();
        let df = data.df_e();
        let grad = (0..n).map(|j| df[(m, j)]).collect();
        // D²F_e's row is already packed by pairs, as the row keeps it
        let hess = if second { (0..n_pairs(n)).map(|p| data.d2f_e()[(m, p)]).collect() } else { Vec::new() };
        PositionRow { g: data.e()[m], grad, hess }
    }
}
