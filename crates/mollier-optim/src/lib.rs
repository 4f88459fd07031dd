//! # mollier-optim
//!
//! Inverse-dynamic optimization (van der Helm 1994, eq. 17-19, "Constraints", App. C): the driving forces
//! of a prescribed motion are shared among the muscles. Per frame, with positions solved and
//! the inputs' rates and accelerations given, the muscle forces `F` (N) are the unknowns of a
//! convex program, solved by a dense interior point of this crate with an active-set polish, or
//! by clarabel where that does not apply (power cones, whose answer is then polished to its
//! optimality conditions; programs without curvature in the muscles) or does not solve (see
//! `docs/theory/optimization.md`, "The interior-point solver"):
//!
//! - equalities: every input's driving force vanishes, `τ_j(F) = r_j` (the motion is made by
//!   muscles, or by an optional, expensive reserve actuator `r_j`); `τ` is affine in `F` through
//!   kinetostatics ([`mollier_core::dynamics::kinetostatic_influence`]);
//! - bounds `0 <= F_i <= Fmax_i(l) = PCSA_i · specific tension · g(l_i)` (Chadwick et al. 2014, eq. 13);
//! - sign constraints on reactions of fixed modes (SURFACE: compression; ligaments: tension);
//! - the joint's elliptic stability cone, one exact second-order cone ([`cone`]);
//! - criteria (a) `Σ F²`, (b) `Σ (F/PCSA)²`, (c) `Σ (F/Fmax(l))²`, (d) `max F/PCSA` made unique
//!   and continuous by a second stage (least `Σ (F/PCSA)²` within 1 % of the least maximum), or
//!   weighted ([`Criterion`]); `Σ (F/PCSA)³` (Crowninshield & Brand 1981) through one power
//!   cone per muscle.
//!
//! The same program, with a linear objective, gives the maximum isometric moments of Chadwick et al. (2014)
//! (section II-F): [`MaxMoment`].
//!
//! Every solution is checked independently (kinetostatics again from the forces: equilibrium,
//! signs, cone; bounds), and a failed frame says why ([`Status`]). The problem structure is
//! built once per thread and updated for every frame; frames run in parallel chunks with results
//! independent of the threading ([`LoadSharing::run`]). See `docs/theory/optimization.md`.
//!
//! ```no_run
//! # use mollier_core::{Model, ModeId};
//! # use mollier_optim::*;
//! # fn demo(model: &Model, biceps: ModeId, frames: &[Frame]) -> Result<(), SetupError> {
//! let study = Study::new(vec![Muscle::new(biceps, 4.0e-4, 0.3)], Criterion::Stresses);
//! let sharing = LoadSharing::new(model, study)?;
//! let results = sharing.run(frames, RunOptions::default());
//! let summary = Summary::of(sharing.study(), &results);
//! # Ok(()) }
//! ```

pub mod cone;
mod ipm;
pub mod max_moment;
mod program;
mod qp;
mod result;
mod sharing;
pub mod study;

pub use cone::{cone_violation, deviation_angles, stability_index};
pub use max_moment::{Direction, MaxMoment, MomentResult, MomentWorkspace, PostureMoments};
pub use result::{Frame, FrameResult, RunOptions, Status, Summary};
pub use sharing::{LoadSharing, Workspace};
pub use study::{
    Criterion, DEFAULT_MAX_STRESS_SLACK, DEFAULT_SPECIFIC_TENSION, DEFAULT_TOLERANCE, DEFAULT_WIDTH, JointCone, Muscle,
    RESERVE_WARNING_SHARE, RESERVE_WEIGHT, Reserve, SetupError, Sign, SignConstraint, Study,
};
