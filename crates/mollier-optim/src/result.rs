//! What load sharing takes and gives per frame: a frame of a motion ([`Frame`]), how a run goes
//! through the frames ([`RunOptions`]), a frame's result and status ([`FrameResult`],
//! [`Status`]) and a run's counts ([`Summary`]).

use std::fmt;

use mollier_core::Load;

use crate::study::Study;

/// What became of a frame.
#[derive(Clone, Debug, PartialEq)]
pub enum Status {
    /// Solved (clarabel `Solved`) and every check passed.
    Solved,
    /// Solved to reduced accuracy (clarabel `AlmostSolved`) and every check passed.
    AlmostSolved,
    /// clarabel did not solve: its status (`PrimalInfeasible`, `MaxIterations`, ...) or why no
    /// solve could be made. The forces are not a solution.
    Solver(String),
    /// clarabel reported a solution but the independent check failed: what failed.
    Check(String),
    /// Positions, rates or kinetostatics failed: the kernel's message. Forces are NaN.
    Kinematics(String),
}

impl Status {
    /// `true` for a solved and checked frame.
    pub fn is_success(&self) -> bool {
        matches!(self, Status::Solved | Status::AlmostSolved)
    }
    /// A one-word label: `solved`, `almost_solved`, `solver_failed`, `check_failed`,
    /// `kinematics_failed`.
    pub fn label(&self) -> &'static str {
        match self {
            Status::Solved => "solved",
            Status::AlmostSolved => "almost_solved",
            Status::Solver(_) => "solver_failed",
            Status::Check(_) => "check_failed",
            Status::Kinematics(_) => "kinematics_failed",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Status::Solved | Status::AlmostSolved => f.write_str(self.label()),
            Status::Solver(s) | Status::Check(s) | Status::Kinematics(s) => write!(f, "{}: {s}", self.label()),
        }
    }
}

/// The result of one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameResult {
    /// Outcome.
    pub status: Status,
    /// Active muscle forces (N), one per muscle of the study, within `[0, Fmax(l)]`. A law on a
    /// muscle's element adds its passive stress to the element's tension on top of this. NaN
    /// when the frame failed before the optimization; not a solution unless `status` is a success.
    pub forces: Vec<f64>,
    /// `Fmax(l)` of each muscle at this frame (N).
    pub max_forces: Vec<f64>,
    /// Current length of each muscle (m).
    pub lengths: Vec<f64>,
    /// Driving force of each reserve actuator (N m or N), in the order of `Study::reserves`.
    pub reserves: Vec<f64>,
    /// Share of each reserve in its input's driving force, `|r| / (|r| + Σ_i |∂τ/∂F_i| F_i)`
    /// (dimensionless, 0 to 1): 1 when the muscles do nothing on the input, 0 without reserve
    /// use. In the order of `Study::reserves`; NaN when the frame failed before the optimization.
    pub reserve_shares: Vec<f64>,
    /// Reaction of each sign-constrained mode (N or N m), in the order of `Study::signs`.
    pub reactions: Vec<f64>,
    /// The force the joint node exerts on the cone's elements, in the cone frame (N); `None`
    /// without a cone or before kinetostatics.
    pub cone_force: Option<[f64; 3]>,
    /// Stability index of Chadwick et al. (2014) eq. 9 of `cone_force` (<= 0 inside); `None` without a cone or
    /// for a zero force.
    pub stability_index: Option<f64>,
    /// Value of the criterion, in its own units, with the reserves' cost.
    pub objective: Option<f64>,
    /// Largest equilibrium residual `|τ_j(F) − r_j|` over the inputs (N m or N), recomputed by
    /// kinetostatics from the returned forces.
    pub residual: Option<f64>,
    /// Interior-point iterations (both stages for criterion (d)).
    pub iterations: u32,
    /// Wall time of the frame (ms).
    pub time_ms: f64,
    /// What the muscles' elements say of the frame's configuration without failing it
    /// ([`mollier_core::ElementInfo::warning`]: a path's anchor inside a wrap object), each as
    /// `element: warning`; filled by [`crate::LoadSharing::run_streaming`] for a solved frame,
    /// empty otherwise.
    pub warnings: Vec<String>,
}

/// One frame of a motion: inputs and external loads.
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// Time (s), for outputs.
    pub time: f64,
    /// Generalized coordinates (n_q).
    pub q: Vec<f64>,
    /// Their rates (n_q).
    pub qd: Vec<f64>,
    /// Their accelerations (n_q).
    pub qdd: Vec<f64>,
    /// External loads besides the model's own.
    pub loads: Vec<Load>,
}

impl Frame {
    /// A static frame: zero rates and accelerations, no extra loads.
    pub fn at_rest(time: f64, q: Vec<f64>) -> Self {
        let n = q.len();
        Self { time, q, qd: vec![0.0; n], qdd: vec![0.0; n], loads: Vec::new() }
    }
}

/// How [`LoadSharing::run`](crate::LoadSharing::run) goes through the frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunOptions {
    /// Solve chunks of frames on rayon's threads.
    pub parallel: bool,
    /// Frames per chunk. Each chunk starts with a fresh workspace and goes through its frames in
    /// order, in either mode: the results do not depend on `parallel` or on the number of threads.
    pub chunk: usize,
    /// Start each chunk where a sequential run would be at its first frame — the positions of
    /// the frames before it solved in one sequential pass — so that every chunk follows the
    /// motion from nearby; else at the model's initial configuration. Costs one position solve
    /// per frame before the last chunk; without it a chunk far along a motion may start Newton
    /// on another assembly branch.
    pub follow: bool,
}

impl Default for RunOptions {
    fn default() -> Self {
        Self { parallel: true, chunk: 32, follow: true }
    }
}

/// Counts over a run, for a summary file.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Frames.
    pub frames: usize,
    /// Solved and checked frames.
    pub solved: usize,
    /// Other frames.
    pub failed: usize,
    /// The criterion's letter.
    pub criterion: String,
    /// Mean wall time per frame (ms).
    pub ms_per_frame: f64,
}

impl Summary {
    /// The summary of `results` of a study.
    pub fn of(study: &Study, results: &[FrameResult]) -> Self {
        let solved = results.iter().filter(|r| r.status.is_success()).count();
        let total: f64 = results.iter().map(|r| r.time_ms).sum();
        Self {
            frames: results.len(),
            solved,
            failed: results.len() - solved,
            criterion: study.criterion.letter().to_string(),
            ms_per_frame: if results.is_empty() { 0.0 } else { total / results.len() as f64 },
        }
    }
}
