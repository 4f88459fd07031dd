//! Why an analysis failed.

use crate::algorithm::well_posed::{WellPosedness, dead_point_modes, singular_message};
use crate::element::ElementError;
use crate::model::Model;

/// Why a kinematic analysis failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum KinematicsError {
    /// `q` has the wrong length.
    #[error("expected {expected} generalized coordinates, got {got}")]
    InputLength {
        /// `n_q`.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// A generalized coordinate is NaN or infinite.
    #[error("generalized coordinate `{name}` is not finite ({value})")]
    NonFiniteInput {
        /// Its name.
        name: String,
        /// Its value.
        value: f64,
    },
    /// The model is not well posed: `D_cc` is not square or is singular.
    #[error("{}", singular_message(.0))]
    NotWellPosed(Box<WellPosedness>),
    /// An element failed to evaluate.
    #[error("element `{element}`: {error}")]
    Element {
        /// The element.
        element: String,
        /// Its reason.
        error: ElementError,
    },
    /// An element produced NaN or infinity.
    #[error("element `{element}` produced a non-finite {what} for mode `{mode}`")]
    NonFinite {
        /// The element.
        element: String,
        /// The mode.
        mode: String,
        /// `value`, `gradient` or `Hessian`.
        what: &'static str,
    },
    /// Newton-Raphson did not converge.
    #[error(
        "Newton-Raphson did not converge in {iterations} iterations: residual {residual:.3e} \
         (tolerance {tolerance:.1e}), worst equation `{worst}`"
    )]
    NoConvergence {
        /// Iterations made.
        iterations: usize,
        /// Largest residual (in the unit of its mode).
        residual: f64,
        /// The tolerance it was held to.
        tolerance: f64,
        /// The mode (`element.mode`) with the largest scaled residual.
        worst: String,
    },
    /// The reduced mass matrix is singular (a degree of freedom without inertia).
    #[error("the reduced mass matrix is singular: some degree of freedom moves no mass")]
    SingularMass,
    /// The configuration cannot be reached, and these inputs cannot be reached even when moved
    /// alone from the last solved configuration ([`crate::kinematics::solve_positions_explained`]).
    #[error(
        "this configuration cannot be reached: moved alone from the last solved one, {} cannot \
         reach {} value here either ({cause})",
        inputs.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "),
        if inputs.len() == 1 { "its" } else { "their" }
    )]
    Unreachable {
        /// The inputs' names.
        inputs: Vec<String>,
        /// What the solve reported.
        cause: Box<KinematicsError>,
    },
    /// Transfer functions were asked for before positions were solved.
    #[error("the configuration is not solved: call solve_positions first")]
    NotSolved,
    /// Kinetostatics from a linearization was asked for where none stands.
    #[error("the motion is not linearized at this configuration: call linearize_motion_with first")]
    NotLinearized,
    /// `D_cc` turned singular on the way to a configuration, in a model that was solved before:
    /// a dead point, where the constraints become dependent (the edge of the inputs' reach).
    #[error(
        "the mechanism reaches a dead point on the way: its constraints turn dependent there{}",
        dead_point_modes(.0)
    )]
    DeadPoint(Box<WellPosedness>),
    /// An input moves farther in one solve than the continuation follows (`MAX_SUBSTEPS` steps
    /// of the step limit): a motion that jumps, or a simulation that diverges.
    #[error(
        "input `{name}` moves by {change:.6e} in one solve, more than {MAX_SUBSTEPS} continuation steps \
         of {limit} can follow: does the motion jump, or does a simulation diverge (a time step too large)?"
    )]
    StepTooLarge {
        /// The input's name.
        name: String,
        /// Its change (m or rad).
        change: f64,
        /// The largest change of one continuation step (m or rad).
        limit: f64,
    },
}

pub(crate) fn non_finite(model: &Model, m: usize, what: &'static str) -> KinematicsError {
    let (el, _) = model.mode_element[m];
    KinematicsError::NonFinite {
        element: model.elements[el.index()].name.clone(),
        mode: model.mode_info[m].name.to_string(),
        what,
    }
}

/// The most continuation steps one solve takes ([`KinematicsError::StepTooLarge`] beyond).
pub const MAX_SUBSTEPS: usize = 1 << 16;
