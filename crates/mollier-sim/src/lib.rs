//! Forward dynamics of musculoskeletal models (Chadwick et al. 2014): a mechanism's
//! equations of motion and the Hill muscles on its paths as one implicit system
//! `f(x, ẋ, u) = 0`, integrated by the linearly implicit (Rosenbrock) step of eq. 8 with exact
//! partials assembled from the kernel's transfer functions (`DF`, `D²F`).
//!
//! - [`hill`]: the DAS3 muscle (activation, force-length, force-velocity, pennation, elastic
//!   elements) in implicit form with its partials.
//! - [`system`]: the mechanism and its muscles, the residual and its partials, and the step's
//!   linear solve (the muscles' states eliminated, one dense `n x n` system left).
//! - [`integrate`]: the Rosenbrock step, the rest state, the error-controlled Rosenbrock-W pair
//!   ROS2(3) with dense output ([`integrate::adaptive`]), and the explicit variable-step
//!   reference (Dormand-Prince 5(4)).
//!
//! A muscle reads only its path's length and transfer functions (any element with an
//! elongation: `truss`, `curved-truss`); a new muscle model would replace [`hill::HillMuscle`]
//! behind the same residual and partials. Theory: `docs/forward-dynamics.md`.

pub mod hill;
pub mod integrate;
pub mod system;

pub use hill::{Contraction, ContractionHessian, Curves, DeGrooteFregly, HillMuscle, HillParams, MuscleState, Tendon};
pub use integrate::adaptive::{Adaptive, Controller, Method, StepStats, Tolerances};
pub use integrate::{Excitation, State, contraction_rate};
pub use system::{
    ExternalForcing, Layout, Linearization, Muscle, Musculoskeletal, SimError, StateKind, StateMatrix, Workspace,
};
