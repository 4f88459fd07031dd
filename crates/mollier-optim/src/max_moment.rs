//! Maximum isometric moments (Chadwick et al. 2014, section II-F): in a posture, the largest moment the
//! muscles can exert on a device that holds the mechanism, in a direction of the model's own.
//!
//! A *direction* is an input of the model (a generalized coordinate, e.g. the humerus's
//! elevation hinge or the elbow's flexion hinge), with a name for each sense. The device holds
//! the direction's input and any other inputs it is told to hold (`free` inputs: Chadwick et al. (2014)'s
//! other external moments, whose values the optimization chooses); every other input (the
//! girdle's) gets no driving force: it is in equilibrium by the muscles alone. Per posture and
//! sense, a conic program (clarabel) over the muscle forces `0 <= F <= Fmax(l)`:
//!
//! - maximise the moment `M = −s r_t` on the device (N m, or N for a length input), where
//!   `r_t = τ_t(F)` is the driving force the input needs and `s = +1` for the direction's
//!   positive sense (towards increasing input), `−1` for its negative sense;
//! - `τ_j(F) = 0` for every input the device does not hold, `τ_j(F) = r_j` (free) for those it
//!   does;
//! - the study's sign constraints (the scapula pressed on the thorax) and joint cone (the
//!   glenohumeral force in the glenoid), as in load sharing.
//!
//! The muscles' forces at the maximum are not unique (a linear program); a second stage takes
//! the least `Σ (F/PCSA)²` (criterion (b)) among the forces that reach the maximum less `10⁻⁶`
//! of the input's scale. Every solution is checked by kinetostatics again, as load sharing's.
//! The model's own loads (gravity) act: `M` is what the device feels, the arm's weight included.

use std::time::Instant;

use mollier_core::{Data, Load, Model};

use crate::program::Values;
use crate::qp::{Outcome, Program};
use crate::result::{FrameResult, Status};
use crate::sharing::LoadSharing;
use crate::study::{Criterion, Reserve, SetupError, Study};

/// Relative shortfall of the second stage's moment from the maximum, of the input's scale.
pub const MOMENT_SLACK: f64 = 1e-6;

/// A direction of maximal moment: one input and the names of its two senses.
#[derive(Clone, Debug, PartialEq)]
pub struct Direction {
    /// Index of the input (generalized coordinate) in `q`.
    pub input: usize,
    /// Name of the sense that increases the input (e.g. `flexion`).
    pub positive: String,
    /// Name of the sense that decreases it (e.g. `extension`).
    pub negative: String,
}

/// The maximum in one direction and sense.
#[derive(Clone, Debug, PartialEq)]
pub struct MomentResult {
    /// The largest moment (N m, or N for a length input) in the sense; NaN when the frame failed.
    /// It may be negative where the muscles cannot even hold the load in that sense.
    pub moment: f64,
    /// The muscle forces (second stage), the device's driving forces on the inputs it holds
    /// (`reserves`, in the order of [`MaxMoment::held_inputs`]), reactions, joint force and the
    /// independent check's status.
    pub frame: FrameResult,
}

/// The moments of one posture: per direction, the positive and the negative sense.
pub type PostureMoments = Vec<[MomentResult; 2]>;

/// Per-thread state: one program, reused from solve to solve.
pub struct MomentWorkspace {
    program: Program,
    values: Values,
}

impl std::fmt::Debug for MomentWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MomentWorkspace").finish_non_exhaustive()
    }
}

/// Maximum isometric moments set up on a model.
#[derive(Debug)]
pub struct MaxMoment<'m> {
    sharing: LoadSharing<'m>,
    directions: Vec<Direction>,
}

impl<'m> MaxMoment<'m> {
    /// Set up on `model` with the muscles, sign constraints and joint cone of `study` (its
    /// criterion and reserves are not used), the `directions`, and `free`: other inputs the device
    /// holds with whatever driving force the maximum needs.
    pub fn new(model: &'m Model, study: Study, directions: Vec<Direction>, free: &[usize]) -> Result<Self, SetupError> {
        if directions.is_empty() {
            return Err(SetupError::Parameter("no direction of maximal moment".into()));
        }
        let mut study = study;
        study.criterion = Criterion::Stresses;
        // the device: a "reserve" on each input it holds, directions first (weights unused)
        study.reserves = directions
            .iter()
            .map(|d| d.input)
            .chain(free.iter().copied())
            .map(|input| Reserve { input, weight: 1.0 })
            .collect();
        let sharing = LoadSharing::new(model, study).map_err(|e| match e {
            SetupError::Reserve { index, message } => SetupError::Parameter(format!(
                "{} #{}: {message}",
                if index < directions.len() { "direction" } else { "free input" },
                if index < directions.len() { index } else { index - directions.len() }
            )),
            other => other,
        })?;
        Ok(Self { sharing, directions })
    }

    /// The load-sharing setup underneath (names of muscles, reactions).
    pub fn sharing(&self) -> &LoadSharing<'m> {
        &self.sharing
    }

    /// The directions.
    pub fn directions(&self) -> &[Direction] {
        &self.directions
    }

    /// The inputs the device holds: the directions' inputs, then the free ones.
    pub fn held_inputs(&self) -> Vec<usize> {
        self.sharing.study().reserves.iter().map(|r| r.input).collect()
    }

    /// A fresh per-thread workspace.
    pub fn workspace(&self) -> MomentWorkspace {
        let layout = self.sharing.layouts()[0].clone();
        MomentWorkspace { values: Values::new(&layout), program: Program::new(layout) }
    }

    /// Every direction in both senses at the posture `q`; positions are solved from the
    /// configuration in `data` (which keeps the solved one). Never panics.
    pub fn posture(&self, ws: &mut MomentWorkspace, data: &mut Data, q: &[f64], loads: &[Load]) -> PostureMoments {
        let start = Instant::now();
        let solved = mollier_core::kinematics::solve_positions_explained(self.sharing.model(), data, q);
        (0..self.directions.len())
            .map(|d| {
                [true, false].map(|positive| match &solved {
                    Ok(_) => self.solve(ws, data, d, positive, loads),
                    Err(e) => MomentResult {
                        moment: f64::NAN,
                        frame: self.sharing.failed(Status::Kinematics(e.to_string()), start),
                    },
                })
            })
            .collect()
    }

    /// The maximum in direction `direction` (index), sense `positive`, at the configuration
    /// solved in `data`, at rest, with extra `loads`. Never panics.
    pub fn solve(
        &self,
        ws: &mut MomentWorkspace,
        data: &mut Data,
        direction: usize,
        positive: bool,
        loads: &[Load],
    ) -> MomentResult {
        let start = Instant::now();
        let sh = &self.sharing;
        let zero = vec![0.0; sh.model().n_q()];
        let maps = match sh.maps(data, &zero, &zero, loads) {
            Ok(m) => m,
            Err(e) => return MomentResult { moment: f64::NAN, frame: sh.failed(Status::Kinematics(e), start) },
        };
        let omega = sh.input_scales(&maps);
        let held = self.held_inputs();
        // device variable v_r = r/ρ_r with ρ_r = ω of its input: O(1)
        let rho: Vec<f64> = held.iter().map(|&j| omega[j]).collect();
        let layout = sh.layouts()[0].clone();
        let k = layout.k;
        let t = k + direction;
        let input = self.directions[direction].input;
        let sense = if positive { 1.0 } else { -1.0 };
        // stage 1: max −s r_t = min s v_t (a linear objective), every device torque free
        sh.fill(&mut ws.values, &layout, &maps, &omega, &rho, None);
        ws.values.p_diag.fill(0.0);
        ws.values.q.fill(0.0);
        ws.values.q[t] = sense;
        let out1 = ws.program.solve(&ws.values);
        let mut iterations = out1.iterations;
        if !out1.solved() {
            let frame = sh.report(data, &zero, &zero, loads, &maps, &out1, &rho, iterations, start);
            return MomentResult { moment: f64::NAN, frame };
        }
        let moment = -sense * rho[direction] * out1.x[t];
        // stage 2: least Σ (F/PCSA)² with the device's torque on the input held a hair below
        // the maximum (an interior remains), the other device torques free (no cost)
        let r_fix = -sense * (moment - MOMENT_SLACK * omega[input]);
        sh.fill(&mut ws.values, &layout, &maps, &omega, &rho, None);
        for r in 0..held.len() {
            ws.values.p_diag[k + r] = 0.0;
        }
        ws.values.reserve_coef[direction] = 0.0;
        ws.values.eq_rhs[input] += r_fix / omega[input];
        // v_t no longer appears in a row: a unit cost keeps it at 0
        ws.values.p_diag[t] = 2.0;
        let out2 = ws.program.solve(&ws.values);
        iterations += out2.iterations;
        let out = if out2.solved() {
            let mut x = out2.x;
            x[t] = r_fix / rho[direction];
            Outcome { status: out2.status, error: None, x, iterations, dense: out2.dense }
        } else {
            // the first stage's forces reach the maximum too
            Outcome { iterations, ..out1 }
        };
        let frame = sh.report(data, &zero, &zero, loads, &maps, &out, &rho, iterations, start);
        let moment = if frame.status.is_success() { moment } else { f64::NAN };
        MomentResult { moment, frame }
    }
}
