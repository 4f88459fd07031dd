//! The tables of a forward simulation, as `mollier simulate` writes them and the Python
//! package returns them: which tables a run produces, their columns (names, units, meanings),
//! a row per step and the figures of its summary. One implementation for every front end, so
//! that the command's files and Python's tables hold the same numbers.
//!
//! A run goes in chunks of steps (a front end reports progress per chunk):
//! - a model with `[muscles]` (or given excitations): [`ForwardRun`], error-controlled (rows on
//!   the output grid by the method's dense output) or at a fixed Rosenbrock step (rows every
//!   whole number of steps, each step's muscle equilibrium defect checked); tables `states.csv`
//!   (coordinates, rates, muscle states), `muscles.csv`, and `contacts.csv` and `stability.csv`
//!   when the model has soft contacts and a joint cone; the last chunk is the final state alone;
//! - a passive mechanism: RK4 ([`Simulation`]); tables `motion.csv`, `velocities.csv` and
//!   `energy.csv` (when every law defines an energy); the first chunk is the initial state alone.

use std::time::Instant;

use mollier_core::element::Quantity;
use serde_json::{Map, Value, json};

use crate::{
    Column, Compiled, Excitations, ExternalLoads, ForwardFrame, ForwardOptions, ForwardRun, FrameError, InputInfo,
    Integration, Simulation, Table,
};

/// The integrators of a simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integrator {
    /// Classical fourth-order Runge-Kutta, explicit: passive mechanisms without muscles.
    Rk4,
    /// The linearly implicit (Rosenbrock) step of Chadwick et al. (2014), first order, for stiff
    /// musculoskeletal models with Hill muscles.
    Rosenbrock,
}

impl Integrator {
    /// Its name: `rk4` or `rosenbrock`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Rk4 => "rk4",
            Self::Rosenbrock => "rosenbrock",
        }
    }
}

impl std::str::FromStr for Integrator {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "rk4" => Ok(Self::Rk4),
            "rosenbrock" => Ok(Self::Rosenbrock),
            other => Err(format!("the integrator is \"rk4\" or \"rosenbrock\", not {other:?}")),
        }
    }
}

/// Why a simulation cannot start. Front ends word the first two in their own terms (a command
/// line option, a keyword argument).
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SimulateError {
    /// The duration, the step or the output step is not positive and finite, the output step is
    /// longer than the duration, or the run would be more than 1e9 steps or rows.
    #[error(
        "the duration, the step and the output step must be positive, the output step at most the duration, and the run at most 1e9 steps long (got {duration} s, {dt} s and {output_dt} s)"
    )]
    Span {
        /// The duration asked for (s).
        duration: f64,
        /// The step asked for (s; NaN: none, error-controlled).
        dt: f64,
        /// The output step (s).
        output_dt: f64,
    },
    /// The rigid-tendon ratio is not greater than 0.
    #[error("the rigid-tendon ratio must be greater than 0 (or inf; got {0})")]
    RigidTendons(f64),
    /// The output step of a fixed-step run is not a whole number of steps.
    #[error("the output step {output_dt} s is not a whole number of steps of {dt} s")]
    Grid {
        /// The output step (s).
        output_dt: f64,
        /// The step (s).
        dt: f64,
    },
    /// A tolerance is not positive and finite.
    #[error("the tolerance {name} must be positive and finite (got {value})")]
    Tolerance {
        /// Which (`rtol`, `atol`, `atol_activation`, `defect_tolerance`, `max_step`).
        name: &'static str,
        /// Its value.
        value: f64,
    },
    /// The whole Jacobian asked for every 0 steps.
    #[error("the whole Jacobian's interval must be at least one step (got 0)")]
    JacobianInterval,
    /// RK4 asked for a model with muscles, or with excitations or external loads.
    #[error(
        "RK4 simulates passive mechanisms; a model with muscles, excitations or external loads needs the Rosenbrock integrator"
    )]
    Rk4WithMuscles,
    /// The external loads do not cover the run's times.
    #[error("{file}: {error}")]
    LoadTimes {
        /// The load file.
        file: String,
        /// How the times differ.
        error: String,
    },
    /// The initial state cannot be found (the muscles' isometric equilibrium, or the initial
    /// configuration of a passive mechanism).
    #[error("the initial {what}: {error}")]
    Start {
        /// `state` or `configuration`.
        what: &'static str,
        /// Why.
        error: String,
    },
}

/// The fixed step of RK4 when none is given (s).
pub const DEFAULT_DT: f64 = 0.004;

/// The output step of an error-controlled run when none is given (s): 100 rows a second.
pub const DEFAULT_OUTPUT_DT: f64 = 0.01;

/// What a simulation is asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulateOptions {
    /// How long to simulate (s), rounded up to a whole number of output steps.
    pub duration: f64,
    /// The fixed step (s). `None`: with muscles the error-controlled Rosenbrock-W pair
    /// (tolerances `rtol`, `atol`), for RK4 [`DEFAULT_DT`].
    pub dt: Option<f64>,
    /// The output grid's step (s): rows at its multiples. `None`: the fixed step, or
    /// [`DEFAULT_OUTPUT_DT`] when error-controlled. At a fixed step, a whole number of steps.
    pub output_dt: Option<f64>,
    /// The error control's tolerances (relative; absolute in each state's unit: rad or m, rad/s
    /// or m/s, m, 1) and its longest step; `first_step` the first step tried.
    pub tolerances: mollier_sim::Tolerances,
    /// At a fixed step with muscles: the muscle equilibrium defect that is warned about, as a
    /// fraction of the muscle's `F_max`.
    pub defect_tolerance: f64,
    /// The integrator; `None`: Rosenbrock for a model with muscles, RK4 otherwise.
    pub integrator: Option<Integrator>,
    /// Rigid tendons where the slack length is below this ratio to the optimal fibre length
    /// ([`crate::forward::rigid_tendons`]); `None`: the model's tendons.
    pub rigid_tendons: Option<f64>,
}

/// How a run's rows are laid out in time: rows at `0, output_dt, …, outputs × output_dt`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// The output step (s).
    pub output_dt: f64,
    /// The number of output steps (rows: one more).
    pub outputs: usize,
    /// At a fixed step: the step (s) and the steps per output row; `None`: error-controlled.
    pub fixed: Option<(f64, usize)>,
}

impl SimulateOptions {
    /// The defaults for a run of `duration` s: error-controlled with muscles (rtol 1e-3, atol
    /// 1e-5, output every 10 ms), RK4 at 4 ms otherwise; the defect tolerance 1 % of `F_max`.
    pub fn new(duration: f64) -> Self {
        Self {
            duration,
            dt: None,
            output_dt: None,
            tolerances: mollier_sim::Tolerances::default(),
            defect_tolerance: crate::DEFAULT_DEFECT_TOLERANCE,
            integrator: None,
            rigid_tendons: None,
        }
    }

    /// The rows in time for a run with muscles (`muscles`: the Rosenbrock integrator) or RK4: the
    /// number of output steps is `duration / output_dt` rounded up (a duration that is a whole
    /// number of them up to rounding is not one more), at least one; refused when the output step
    /// is longer than the duration, a fixed step does not divide it, or the run is longer than
    /// 1e9 steps or rows.
    pub fn plan(&self, muscles: bool) -> Result<Plan, SimulateError> {
        let Self { duration, tolerances: tol, defect_tolerance, .. } = *self;
        for (name, value) in
            [("rtol", tol.rtol), ("atol", tol.atol), ("defect_tolerance", defect_tolerance), ("max_step", tol.max_step)]
        {
            if !(value > 0.0 && value.is_finite()) {
                return Err(SimulateError::Tolerance { name, value });
            }
        }
        if let Some(value) = tol.atol_activation.filter(|a| !(*a > 0.0 && a.is_finite())) {
            return Err(SimulateError::Tolerance { name: "atol_activation", value });
        }
        if let Some(ratio) = self.rigid_tendons.filter(|r| !(*r > 0.0)) {
            return Err(SimulateError::RigidTendons(ratio));
        }
        if tol.jacobian_every == Some(0) {
            return Err(SimulateError::JacobianInterval);
        }
        let dt = match (self.dt, muscles) {
            (Some(dt), _) => Some(dt),
            (None, true) => None,
            (None, false) => Some(DEFAULT_DT),
        };
        let output_dt = self.output_dt.or(dt).unwrap_or(DEFAULT_OUTPUT_DT);
        let span = SimulateError::Span { duration, dt: dt.unwrap_or(f64::NAN), output_dt };
        let outputs = duration / output_dt;
        // an output step longer than the duration ran one step to t = dt (1e300 s, say)
        if !(output_dt > 0.0 && output_dt <= duration && duration.is_finite() && outputs.is_finite() && outputs <= 1e9)
        {
            return Err(span);
        }
        let outputs = (outputs - 1e-9).ceil().max(1.0) as usize;
        let fixed = match dt {
            None => None,
            Some(dt) => {
                let per = (output_dt / dt).round();
                if !(dt > 0.0 && dt.is_finite()) || per * outputs as f64 > 1e9 {
                    return Err(span);
                }
                if per < 1.0 || (per * dt - output_dt).abs() > 1e-9 * output_dt {
                    return Err(SimulateError::Grid { output_dt, dt });
                }
                Some((dt, per as usize))
            }
        };
        Ok(Plan { output_dt, outputs, fixed })
    }

    /// The integrator for a model, given excitations or not (a front end asks before it reads
    /// them): the one asked for, else Rosenbrock for a model with muscles and RK4 otherwise;
    /// RK4 only for a passive mechanism.
    pub fn integrator_for(&self, compiled: &Compiled, excitations: bool) -> Result<Integrator, SimulateError> {
        let muscles = !compiled.muscles.is_empty();
        let integrator = self.integrator.unwrap_or(if muscles { Integrator::Rosenbrock } else { Integrator::Rk4 });
        if integrator == Integrator::Rk4 && (muscles || excitations) {
            return Err(SimulateError::Rk4WithMuscles);
        }
        Ok(integrator)
    }
}

/// One row of every table of a run, at one time: `values[k]` the columns of table `k` of
/// [`SimulateRun::tables`] (after `time`).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Time (s).
    pub time: f64,
    /// Per table, its columns.
    pub values: Vec<Vec<f64>>,
    /// The paths' warnings at this row's configuration (`element: warning`,
    /// [`crate::element_warnings`]); none for a passive run.
    pub warnings: Vec<String>,
}

/// The most steps a chunk runs: the rows a front end holds at once, so that a run's memory does
/// not grow with its duration.
pub const MAX_CHUNK_ROWS: usize = 256;

/// A forward simulation in chunks of steps, with its tables and summary.
pub struct SimulateRun<'a> {
    compiled: &'a Compiled,
    duration: f64,
    plan: Plan,
    tolerances: mollier_sim::Tolerances,
    /// Output steps (rows but the single state's).
    steps: usize,
    chunk: usize,
    kind: Kind<'a>,
    /// The external loads' file, if any.
    loads: Option<String>,
    /// [`SimulateOptions::rigid_tendons`].
    rigid_tendons: Option<f64>,
}

enum Kind<'a> {
    Forward(Box<Forward<'a>>),
    Passive(Box<Passive<'a>>),
}

struct Forward<'a> {
    run: ForwardRun<'a>,
    /// Seconds spent integrating and computing the frames' outputs (not writing).
    busy: f64,
    /// The largest residuals of the equations of motion and of the muscles' force balance.
    defect: [f64; 2],
    /// The lowest level of a soft contact (most negative: deepest inside).
    deepest: f64,
    /// The largest stability index of the joint force.
    worst_stability: f64,
}

struct Passive<'a> {
    sim: Simulation<'a>,
    e0: Option<f64>,
    drift: f64,
    conservative: bool,
}

/// The column of an input (`rate`: of its rate), named as the input, with its unit.
fn input_column(i: &InputInfo, rate: bool) -> Column {
    let (unit, what) = match (i.quantity, rate) {
        (Quantity::Length, false) => ("m", "generalized coordinate"),
        (Quantity::Length, true) => ("m/s", "its rate"),
        (_, false) => ("rad", "generalized coordinate"),
        (_, true) => ("rad/s", "its rate"),
    };
    Column { name: i.name.clone(), unit, meaning: what.to_string() }
}

fn table(file: &str, columns: Vec<Column>) -> Table {
    Table { file: file.into(), columns }
}

/// The columns of `energy.csv`: name, unit, meaning.
const ENERGY: [(&str, &str, &str); 2] = [
    ("energy", "J", "kinetic plus potential energy (gravity, springs of the laws)"),
    ("drift", "J", "energy minus its initial value"),
];

/// The columns of `stability.csv`: name, unit, meaning.
pub(crate) const STABILITY: [(&str, &str, &str); 6] = [
    ("force_x", "N", "joint force in the cone frame, along its axis (into the socket)"),
    ("force_y", "N", "joint force in the cone frame, y"),
    ("force_z", "N", "joint force in the cone frame, z"),
    ("theta", "rad", "deviation angle of the force towards the cone's y axis"),
    ("phi", "rad", "deviation angle of the force towards the cone's z axis"),
    ("stability_index", "1", "(theta/theta_a)^2 + (phi/phi_a)^2 - 1: at most 0 inside the cone"),
];

fn columns(list: &[(&str, &'static str, &str)]) -> Vec<Column> {
    list.iter().map(|&(name, unit, meaning)| col(name, unit, meaning)).collect()
}

/// The columns of `muscles.csv` (after `time`): per muscle its excitation (`excitation` says what
/// it is), activation, force, fibre length and velocity, path length; `simulate`'s and
/// `optimize`'s.
pub(crate) fn muscle_columns(muscles: &[mollier_sim::Muscle], excitation: &str) -> Vec<Column> {
    let mut out = Vec::with_capacity(6 * muscles.len());
    for m in muscles {
        let n = &m.name;
        out.extend([
            col(format!("{n}.excitation"), "1", excitation),
            col(format!("{n}.activation"), "1", "active state"),
            col(format!("{n}.force"), "N", "tendon force, pulling along the path"),
            col(format!("{n}.fibre_length"), "m", "contractile element length"),
            col(format!("{n}.fibre_velocity"), "m/s", "contractile element velocity, lengthening positive"),
            col(format!("{n}.length"), "m", "muscle-tendon (path) length"),
        ]);
    }
    out
}

fn col(name: impl Into<String>, unit: &'static str, meaning: impl Into<String>) -> Column {
    Column { name: name.into(), unit, meaning: meaning.into() }
}

impl<'a> SimulateRun<'a> {
    /// Start a simulation of a well-posed model from rest in its initial configuration.
    /// `excitations`: the muscles' (`None`: zero for every muscle); giving them asks for the
    /// Rosenbrock integrator.
    pub fn new(
        compiled: &'a Compiled,
        options: &SimulateOptions,
        excitations: Option<Excitations>,
    ) -> Result<Self, SimulateError> {
        Self::loaded(compiled, options, excitations, None)
    }

    /// [`Self::new`] with external loads that vary in time (read for `compiled`): they ask for
    /// the Rosenbrock integrator (the default with them; RK4 is refused), and must cover the
    /// run's times (from 0 to the last row's).
    pub fn loaded(
        compiled: &'a Compiled,
        options: &SimulateOptions,
        excitations: Option<Excitations>,
        loads: Option<&ExternalLoads>,
    ) -> Result<Self, SimulateError> {
        let mut options = *options;
        if loads.is_some() {
            // the loads are in the Rosenbrock integrator's equations only: its default with them
            options.integrator.get_or_insert(Integrator::Rosenbrock);
        }
        let integrator = options.integrator_for(compiled, excitations.is_some() || loads.is_some())?;
        let plan = options.plan(integrator == Integrator::Rosenbrock)?;
        let steps = plan.outputs;
        if let Some(l) = loads {
            l.check_times(0.0, steps as f64 * plan.output_dt)
                .map_err(|error| SimulateError::LoadTimes { file: l.file.clone(), error })?;
        }
        let start = |what, e: &dyn std::fmt::Display| SimulateError::Start { what, error: e.to_string() };
        let kind = match integrator {
            Integrator::Rosenbrock => {
                let excitations = excitations.unwrap_or_else(|| Excitations::zero(compiled));
                let integration = match plan.fixed {
                    Some((dt, _)) => Integration::Fixed(dt),
                    None => Integration::Adaptive(options.tolerances),
                };
                let mut run = ForwardRun::new(
                    compiled,
                    excitations,
                    ForwardOptions { integration, loads, rigid_tendons: options.rigid_tendons },
                )
                .map_err(|e| start("state", &e))?;
                run.set_defect_tolerance(options.defect_tolerance);
                Kind::Forward(Box::new(Forward {
                    run,
                    busy: 0.0,
                    defect: [0.0; 2],
                    deepest: f64::INFINITY,
                    worst_stability: f64::NEG_INFINITY,
                }))
            }
            Integrator::Rk4 => {
                let dt = plan.fixed.map_or(DEFAULT_DT, |(dt, _)| dt);
                let sim = Simulation::new(compiled, dt).map_err(|e| start("configuration", &e))?;
                let (e0, conservative) = (sim.state().energy, sim.is_conservative());
                Kind::Passive(Box::new(Passive { sim, e0, drift: 0.0, conservative }))
            }
        };
        // about 200 chunks: a progress tick each
        Ok(Self {
            compiled,
            duration: options.duration,
            plan,
            tolerances: options.tolerances,
            steps,
            chunk: steps.div_ceil(200).clamp(1, MAX_CHUNK_ROWS),
            kind,
            loads: loads.map(|l| l.file.clone()),
            rigid_tendons: options.rigid_tendons,
        })
    }

    /// Use up to `threads` threads for a forward run's work per muscle path (1: the serial
    /// code, the default; 0: the cores available); the results are
    /// the same bits for every count. No effect on a passive mechanism.
    pub fn set_threads(&mut self, threads: usize) {
        if let Kind::Forward(f) = &mut self.kind {
            f.run.set_threads(threads);
        }
    }

    /// The integrator the run uses.
    pub fn integrator(&self) -> Integrator {
        match self.kind {
            Kind::Forward(_) => Integrator::Rosenbrock,
            Kind::Passive(_) => Integrator::Rk4,
        }
    }

    /// The number of output steps (the rows but one).
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The rows' layout in time and the stepping.
    pub fn plan(&self) -> Plan {
        self.plan
    }

    /// What a front end warns about when the run has ended: a fixed step's muscle equilibrium
    /// defects above the tolerance.
    pub fn warnings(&self) -> Vec<String> {
        let Kind::Forward(f) = &self.kind else { return Vec::new() };
        let d = f.run.defects();
        let mut out = Vec::new();
        if d.over > 0 {
            let (who, when) =
                d.worst.map_or((String::new(), 0.0), |(k, t)| (f.run.system().muscles[k].name.clone(), t));
            out.push(format!(
                "the muscle equilibrium defect exceeded {} of F_max at {} steps from {} s on; the largest, {:.4} × F_max, in `{who}` at {when} s (the step leaves the muscle's force out of balance: forces and fibre velocities there are not the model's; a shorter step, or error control without a fixed step, removes it)",
                d.tolerance,
                d.over,
                d.first_over.unwrap_or(0.0),
                d.largest[1],
            ));
        }
        out
    }

    /// The forward run with muscles (`None` for a passive mechanism): its system, contacts,
    /// cone and state.
    pub fn forward(&self) -> Option<&ForwardRun<'a>> {
        match &self.kind {
            Kind::Forward(f) => Some(&f.run),
            Kind::Passive(_) => None,
        }
    }

    /// Seconds spent integrating with muscles so far (0 for a passive mechanism).
    pub fn busy(&self) -> f64 {
        match &self.kind {
            Kind::Forward(f) => f.busy,
            Kind::Passive(_) => 0.0,
        }
    }

    /// The time reached (s).
    pub fn time(&self) -> f64 {
        match &self.kind {
            Kind::Forward(f) => f.run.state().t,
            Kind::Passive(p) => p.sim.state().time,
        }
    }

    /// The largest change of energy from the start so far (J), and whether the model is
    /// conservative (no loads, no damping): a passive mechanism whose laws all define an energy.
    pub fn energy_drift(&self) -> Option<(f64, bool)> {
        match &self.kind {
            Kind::Passive(p) => p.e0.map(|_| (p.drift, p.conservative)),
            Kind::Forward(_) => None,
        }
    }

    /// The tables: file names and columns after `time`, with units and meanings.
    pub fn tables(&self) -> Vec<Table> {
        let inputs = &self.compiled.inputs;
        let f = match &self.kind {
            Kind::Passive(p) => {
                let mut t = vec![
                    table("motion.csv", inputs.iter().map(|i| input_column(i, false)).collect()),
                    table("velocities.csv", inputs.iter().map(|i| input_column(i, true)).collect()),
                ];
                if p.e0.is_some() {
                    t.push(table("energy.csv", columns(&ENERGY)));
                }
                return t;
            }
            Kind::Forward(f) => f,
        };
        let sys = f.run.system();
        let mut states: Vec<Column> = inputs.iter().map(|i| input_column(i, false)).collect();
        states.extend(inputs.iter().map(|i| Column { name: format!("{}.vel", i.name), ..input_column(i, true) }));
        for m in &sys.muscles {
            states.push(col(
                format!("{}.contraction", m.name),
                "m",
                "contraction state s = fibre length × cos(pennation)",
            ));
        }
        for m in &sys.muscles {
            states.push(col(format!("{}.activation", m.name), "1", "active state"));
        }
        let muscles = muscle_columns(&sys.muscles, "neural excitation (input)");
        let mut contacts = Vec::new();
        for n in f.run.contact_names() {
            for (axis, c) in ["x", "y", "z"].iter().zip(["force_x", "force_y", "force_z"]) {
                contacts.push(col(format!("{n}.{c}"), "N", format!("contact force on the point, global {axis}")));
            }
            contacts.push(col(
                format!("{n}.level"),
                "1",
                "the ellipsoid's implicit function at the point: negative inside",
            ));
        }
        let mut t = vec![table("states.csv", states), table("muscles.csv", muscles)];
        if !contacts.is_empty() {
            t.push(table("contacts.csv", contacts));
        }
        if f.run.has_cone() {
            t.push(table("stability.csv", columns(&STABILITY)));
        }
        t
    }

    fn step_chunks(&self) -> usize {
        self.steps.div_ceil(self.chunk)
    }

    /// The number of chunks: the chunks of steps and the one of a single state (the final one
    /// with muscles, the initial one of a passive mechanism).
    pub fn chunks(&self) -> usize {
        self.step_chunks() + 1
    }

    /// The number of rows chunk `i` gives.
    pub fn rows_in(&self, i: usize) -> usize {
        // the index among the chunks of steps, or None for the single state
        let k = match self.kind {
            Kind::Forward(_) => Some(i).filter(|&i| i < self.step_chunks()),
            Kind::Passive(_) => i.checked_sub(1),
        };
        k.map_or(1, |k| self.chunk.min(self.steps - k * self.chunk))
    }

    /// The number of rows of the whole run.
    pub fn rows(&self) -> usize {
        (0..self.chunks()).map(|i| self.rows_in(i)).sum()
    }

    /// Run chunk `i` (in order): its rows. `each` sees every frame of a run with muscles (a
    /// front end's plots sample them). After an error the run stays at its last state.
    pub fn solve(&mut self, i: usize, each: &mut dyn FnMut(&ForwardFrame)) -> Result<Vec<Row>, FrameError> {
        let n = self.rows_in(i);
        let last = i == self.step_chunks();
        match &mut self.kind {
            Kind::Forward(f) => {
                let start = Instant::now();
                let first = i * self.chunk;
                let frames: Result<Vec<ForwardFrame>, _> = match self.plan.fixed {
                    None if last => f.run.output(self.steps as f64 * self.plan.output_dt).map(|fr| vec![fr]),
                    None => (first..first + n).map(|g| f.run.output(g as f64 * self.plan.output_dt)).collect(),
                    Some(_) if last => f.run.current().map(|fr| vec![fr]),
                    Some((_, per)) => (0..n)
                        .map(|_| {
                            let frame = f.run.advance()?;
                            (1..per).try_for_each(|_| f.run.step_once())?;
                            Ok(frame)
                        })
                        .collect(),
                };
                f.busy += start.elapsed().as_secs_f64();
                Ok(frames?
                    .iter()
                    .map(|fr| {
                        each(fr);
                        f.row(fr)
                    })
                    .collect())
            }
            Kind::Passive(p) => {
                let per = self.plan.fixed.map_or(1, |(_, per)| per);
                let states = if i == 0 {
                    vec![p.sim.state().clone()]
                } else if per == 1 {
                    p.sim.advance(n)?
                } else {
                    // every per-th state: one row's steps at a time
                    let mut rows = Vec::with_capacity(n);
                    for _ in 0..n {
                        rows.extend(p.sim.advance(per)?.pop());
                    }
                    rows
                };
                Ok(states
                    .iter()
                    .map(|s| {
                        let mut values = vec![s.q.clone(), s.qd.clone()];
                        if let (Some(e0), Some(e)) = (p.e0, s.energy) {
                            p.drift = p.drift.max((e - e0).abs());
                            values.push(vec![e, e - e0]);
                        }
                        Row { time: s.time, values, warnings: Vec::new() }
                    })
                    .collect())
            }
        }
    }

    /// The run's figures for `summary.json` (after the steps run): the integrator, the time
    /// reached (`end_time_s`); with muscles the wall time of integration (`integration_wall_s`),
    /// `real_time_factor`, `us_per_step`, the largest residuals the linearly implicit step left
    /// (`max_motion_defect`, `max_muscle_defect_N`), the muscles and those without excitation,
    /// `lowest_contact_level` and `largest_stability_index` when there are contacts and a cone;
    /// for a passive mechanism `conservative` and `max_energy_drift_J` (null when a law defines
    /// no energy). Also `duration_s` and `dt_s`.
    pub fn summary(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("integrator".into(), json!(self.integrator().name()));
        m.insert("end_time_s".into(), json!(self.time()));
        m.insert("duration_s".into(), json!(self.duration));
        m.insert("dt_s".into(), json!(self.plan.fixed.map(|(dt, _)| dt)));
        m.insert("output_dt_s".into(), json!(self.plan.output_dt));
        if let Some(file) = &self.loads {
            m.insert("loads".into(), json!(file));
        }
        match &self.kind {
            Kind::Passive(p) => {
                m.insert("conservative".into(), json!(p.conservative));
                m.insert("max_energy_drift_J".into(), json!(p.e0.map(|_| p.drift)));
            }
            Kind::Forward(f) => {
                let simulated = f.run.state().t;
                m.insert("integration_wall_s".into(), json!(f.busy));
                m.insert("real_time_factor".into(), json!(if f.busy > 0.0 { simulated / f.busy } else { 0.0 }));
                let steps = match (self.plan.fixed, f.run.step_stats()) {
                    (Some((_, per)), _) => self.steps * per,
                    (None, Some(st)) => st.accepted,
                    (None, None) => 0,
                };
                m.insert("us_per_step".into(), json!(f.busy * 1e6 / steps.max(1) as f64));
                m.insert("max_motion_defect".into(), json!(f.defect[0]));
                let rigid: Vec<&str> =
                    f.run.system().muscles.iter().filter(|mu| mu.hill.is_rigid()).map(|mu| mu.name.as_str()).collect();
                m.insert("rigid_tendon_ratio".into(), json!(self.rigid_tendons));
                m.insert("rigid_tendons".into(), json!(rigid));
                let d = f.run.defects();
                match f.run.step_stats() {
                    Some(st) => {
                        // the outputs' rates are made consistent: the defects are round-off
                        m.insert("max_muscle_defect_N".into(), json!(f.defect[1]));
                        let tol = self.tolerances;
                        m.insert("stepping".into(), json!("adaptive"));
                        m.insert("method".into(), json!(tol.method.name()));
                        m.insert("rtol".into(), json!(tol.rtol));
                        m.insert("atol".into(), json!(tol.atol));
                        m.insert("atol_activation".into(), json!(tol.atol_activation.unwrap_or(tol.atol)));
                        let controller = match tol.controller {
                            mollier_sim::Controller::Elementary => "elementary",
                            mollier_sim::Controller::Gustafsson => "gustafsson",
                        };
                        m.insert("controller".into(), json!(controller));
                        m.insert("jacobian_every".into(), json!(tol.jacobian_every));
                        m.insert("steps_end_on_knots".into(), json!(tol.land_on_breaks));
                        m.insert("max_step_s".into(), json!(tol.max_step));
                        m.insert("accepted_steps".into(), json!(st.accepted));
                        m.insert("rejected_steps".into(), json!(st.rejected));
                        m.insert("shortest_step_s".into(), json!((st.accepted > 0).then_some(st.shortest)));
                        m.insert("longest_step_s".into(), json!((st.accepted > 0).then_some(st.longest)));
                        m.insert("kernel_evaluations".into(), json!(st.evaluations));
                        m.insert("jacobian_evaluations".into(), json!(st.jacobians));
                        let by = |counts: [usize; 4]| {
                            mollier_sim::StateKind::ALL
                                .iter()
                                .zip(counts)
                                .map(|(k, c)| (k.name().to_string(), json!(c)))
                                .collect::<Map<_, _>>()
                        };
                        m.insert("steps_limited_by".into(), json!(by(st.limited_by)));
                        m.insert("rejections_by".into(), json!(by(st.rejected_by)));
                    }
                    None => {
                        m.insert("stepping".into(), json!("fixed"));
                        m.insert("max_muscle_defect_N".into(), json!(d.largest[0].max(f.defect[1])));
                        m.insert("max_muscle_defect_relative".into(), json!(d.largest[1]));
                        let worst =
                            d.worst.map(|(k, t)| json!({"muscle": f.run.system().muscles[k].name, "time_s": t}));
                        m.insert("max_muscle_defect_at".into(), json!(worst));
                        m.insert("defect_tolerance".into(), json!(d.tolerance));
                        m.insert("steps_over_defect_tolerance".into(), json!(d.over));
                        m.insert("first_over_defect_tolerance_s".into(), json!(d.first_over));
                    }
                }
                m.insert("muscles".into(), json!(f.run.system().muscles.len()));
                m.insert("muscles_without_excitation".into(), json!(f.run.excitations().missing));
                if f.run.contact_names().next().is_some() {
                    m.insert("lowest_contact_level".into(), json!(f.deepest));
                }
                if f.run.has_cone() {
                    m.insert("largest_stability_index".into(), json!(f.worst_stability));
                }
            }
        }
        m
    }
}

impl Forward<'_> {
    fn row(&mut self, f: &ForwardFrame) -> Row {
        self.defect = [self.defect[0].max(f.defect[0]), self.defect[1].max(f.defect[1])];
        let muscles: Vec<f64> = f.muscles.iter().flat_map(|m| m.iter().copied()).collect();
        let mut values = vec![f.x.clone(), muscles];
        if !f.contacts.is_empty() {
            for c in &f.contacts {
                self.deepest = self.deepest.min(c[3]);
            }
            values.push(f.contacts.iter().flat_map(|c| c.iter().copied()).collect());
        }
        if let Some(st) = f.stability {
            self.worst_stability = self.worst_stability.max(st[5]);
            values.push(st.to_vec());
        }
        Row { time: f.time, values, warnings: f.warnings.clone() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(file: &str) -> Compiled {
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models")).join(file);
        crate::load(&path, &crate::registry()).expect("the model compiles")
    }

    /// Every chunk's rows, in order.
    fn all_rows(run: &mut SimulateRun<'_>) -> Vec<Row> {
        (0..run.chunks()).flat_map(|i| run.solve(i, &mut |_| {}).expect("the steps")).collect()
    }

    #[test]
    fn a_duration_of_whole_steps_is_not_a_step_more_and_bad_spans_are_refused() {
        let o = |duration, dt| SimulateOptions { dt: Some(dt), ..SimulateOptions::new(duration) };
        let steps = |o: SimulateOptions| o.plan(true).map(|p| p.outputs);
        assert_eq!(steps(o(0.6, 0.004)), Ok(150));
        assert_eq!(steps(o(0.601, 0.004)), Ok(151));
        assert_eq!(steps(o(0.004, 0.004)), Ok(1));
        // a step longer than the duration (issue 33: `--dt 1e300` ran to t = 1e300 s)
        for (d, dt) in [(1e-6, 0.004), (1.0, 1e300), (1.0, 1.0 + 1e-12)] {
            assert!(matches!(steps(o(d, dt)), Err(SimulateError::Span { .. })), "{d} {dt}");
        }
        for (d, dt) in [(0.0, 0.1), (1.0, 0.0), (-1.0, 0.1), (f64::NAN, 0.1), (1e10, 1.0), (1.0, f64::INFINITY)] {
            assert!(matches!(steps(o(d, dt)), Err(SimulateError::Span { .. })), "{d} {dt}");
        }
        // the output grid: a whole number of fixed steps; error-controlled, any
        let grid =
            |dt: Option<f64>, out: f64| SimulateOptions { dt, output_dt: Some(out), ..SimulateOptions::new(1.0) };
        assert_eq!(grid(Some(0.001), 0.01).plan(true).map(|p| (p.outputs, p.fixed)), Ok((100, Some((0.001, 10)))));
        assert!(matches!(grid(Some(0.003), 0.01).plan(true), Err(SimulateError::Grid { .. })));
        assert!(matches!(grid(Some(0.02), 0.01).plan(true), Err(SimulateError::Grid { .. })));
        assert_eq!(grid(None, 0.03).plan(true).map(|p| (p.outputs, p.fixed)), Ok((34, None)));
        // without a step: error-controlled with muscles (10 ms rows), RK4's 4 ms otherwise
        assert_eq!(SimulateOptions::new(1.0).plan(true).map(|p| p.outputs), Ok(100));
        assert_eq!(SimulateOptions::new(1.0).plan(false).map(|p| p.fixed), Ok(Some((DEFAULT_DT, 1))));
        let bad = SimulateOptions { defect_tolerance: 0.0, ..SimulateOptions::new(1.0) };
        assert!(matches!(bad.plan(true), Err(SimulateError::Tolerance { name: "defect_tolerance", .. })));
        let mut bad = SimulateOptions::new(1.0);
        bad.tolerances.rtol = f64::NAN;
        assert!(matches!(bad.plan(true), Err(SimulateError::Tolerance { name: "rtol", .. })));
        for value in [0.0, -1e-3, f64::NAN, f64::INFINITY] {
            let mut bad = SimulateOptions::new(1.0);
            bad.tolerances.atol_activation = Some(value);
            assert!(matches!(bad.plan(true), Err(SimulateError::Tolerance { name: "atol_activation", .. })));
        }
        for ratio in [0.0, -1.0, f64::NAN] {
            let bad = SimulateOptions { rigid_tendons: Some(ratio), ..SimulateOptions::new(1.0) };
            assert!(matches!(bad.plan(true), Err(SimulateError::RigidTendons(_))), "{ratio}");
        }
        let every = SimulateOptions { rigid_tendons: Some(f64::INFINITY), ..SimulateOptions::new(1.0) };
        assert!(every.plan(true).is_ok());
        let mut never = SimulateOptions::new(1.0);
        never.tolerances.jacobian_every = Some(0);
        assert!(matches!(never.plan(true), Err(SimulateError::JacobianInterval)));
    }

    #[test]
    fn a_long_run_holds_a_bounded_chunk_of_rows_at_a_time() {
        // 1e9 steps: a chunk of steps/200 would hold five million rows at once
        let c = model("mechanisms/pendulum.toml");
        let options = SimulateOptions { dt: Some(0.001), ..SimulateOptions::new(1e6) };
        let run = SimulateRun::new(&c, &options, None).expect("it starts");
        assert_eq!(run.steps(), 1_000_000_000);
        assert!((0..run.chunks()).all(|i| run.rows_in(i) <= MAX_CHUNK_ROWS));
        assert_eq!(run.rows(), 1_000_000_001, "every step's row and the initial state");
    }

    #[test]
    fn a_passive_run_has_a_row_per_step_and_the_initial_state() {
        let c = model("mechanisms/pendulum.toml");
        let options = SimulateOptions { dt: Some(0.001), ..SimulateOptions::new(0.5) };
        let mut run = SimulateRun::new(&c, &options, None).expect("it starts");
        assert_eq!(run.integrator(), Integrator::Rk4);
        let names: Vec<String> = run.tables().into_iter().map(|t| t.file).collect();
        assert_eq!(names, ["motion.csv", "velocities.csv", "energy.csv"]);
        assert!(run.chunks() > 100, "progress in many chunks");
        assert_eq!(run.rows(), 501);
        let rows = all_rows(&mut run);
        assert_eq!(rows.len(), 501);
        for (k, r) in rows.iter().enumerate() {
            assert_eq!(r.time, k as f64 * 0.001);
            assert_eq!(r.values.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 2]);
        }
        // drift: energy minus its first value, the summary's figure its largest magnitude
        let e0 = rows[0].values[2][0];
        let worst = rows.iter().map(|r| (r.values[2][0] - e0).abs()).fold(0.0, f64::max);
        assert_eq!(rows[0].values[2][1], 0.0);
        assert_eq!(run.summary()["max_energy_drift_J"], json!(worst));
        assert_eq!(run.energy_drift(), Some((worst, true)));
    }

    #[test]
    fn a_run_with_muscles_ends_with_its_final_state_and_rk4_is_refused_for_it() {
        let c = model("forward/elbow.toml");
        let rk4 = SimulateOptions { dt: Some(0.004), integrator: Some(Integrator::Rk4), ..SimulateOptions::new(0.1) };
        assert_eq!(SimulateRun::new(&c, &rk4, None).err(), Some(SimulateError::Rk4WithMuscles));
        let pendulum = model("mechanisms/pendulum.toml");
        assert_eq!(rk4.integrator_for(&pendulum, true), Err(SimulateError::Rk4WithMuscles));
        let options = SimulateOptions { dt: Some(0.004), ..SimulateOptions::new(0.1) };
        let mut run = SimulateRun::new(&c, &options, None).expect("it starts");
        assert_eq!(run.integrator(), Integrator::Rosenbrock);
        let tables = run.tables();
        let widths: Vec<usize> = tables.iter().map(|t| t.columns.len()).collect();
        // states: q, its rate, two contractions, two activations; six numbers a muscle; the cone
        assert_eq!(widths, [6, 12, 6]);
        let rows = all_rows(&mut run);
        assert_eq!(rows.len(), 26);
        assert!((rows[25].time - 0.1).abs() < 1e-15);
        for r in &rows {
            assert_eq!(r.values.iter().map(Vec::len).collect::<Vec<_>>(), widths);
        }
        // the summary's largest stability index is the largest of the rows'
        let worst = rows.iter().map(|r| r.values[2][5]).fold(f64::NEG_INFINITY, f64::max);
        assert_eq!(run.summary()["largest_stability_index"], json!(worst));
        assert_eq!(run.summary()["muscles_without_excitation"], json!(["biceps", "triceps"]));
    }

    #[test]
    fn the_shoulder_runs_to_the_same_bits_on_one_two_and_three_threads() {
        let c = model("shoulder/shoulder-forward.toml");
        let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models"))
            .join("shoulder/flexion-excitations.csv");
        let excitations = Excitations::read(&path, &c).expect("the excitations");
        let options = SimulateOptions { dt: Some(0.004), ..SimulateOptions::new(0.04) };
        let rows = |threads: usize| {
            let mut run = SimulateRun::new(&c, &options, Some(excitations.clone())).expect("it starts");
            run.set_threads(threads);
            let rows = all_rows(&mut run);
            let bits = |r: &Row| r.values.iter().flatten().map(|v| v.to_bits()).collect::<Vec<_>>();
            rows.iter().map(bits).collect::<Vec<_>>()
        };
        let one = rows(1);
        assert_eq!(one.len(), 11);
        // the muscles moved the arm: the steps did work the threads could share
        assert_ne!(one[0], one[10]);
        assert_eq!(rows(2), one, "2 threads");
        assert_eq!(rows(3), one, "3 threads");
    }
}
