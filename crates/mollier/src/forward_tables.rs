//! The tables of a forward simulation, as `mollier simulate` writes them and the Python
//! package returns them: which tables a run produces, their columns (names, units, meanings),
//! a row per step and the figures of its summary. One implementation for every front end, so
//! that the command's files and Python's tables hold the same numbers.
//!
//! A run goes in chunks of steps (a front end reports progress per chunk):
//! - a model with `[muscles]` (or given excitations): the Rosenbrock step of [`ForwardRun`];
//!   tables `states.csv` (coordinates, rates, muscle states), `muscles.csv`, and `contacts.csv`
//!   and `stability.csv` when the model has soft contacts and a joint cone; the last chunk is
//!   the final state alone;
//! - a passive mechanism: RK4 ([`Simulation`]); tables `motion.csv`, `velocities.csv` and
//!   `energy.csv` (when every law defines an energy); the first chunk is the initial state alone.

use std::time::Instant;

use mollier_core::element::Quantity;
use serde_json::{Map, Value, json};

use crate::{Column, Compiled, Excitations, ForwardFrame, ForwardRun, FrameError, InputInfo, Simulation, Table};

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
    /// The duration or the step is not positive and finite, the step is longer than the
    /// duration, or the run would be more than 1e9 steps.
    #[error(
        "the duration and the step must be positive, the step at most the duration, and the run at most 1e9 steps long (got {duration} s and {dt} s)"
    )]
    Span {
        /// The duration asked for (s).
        duration: f64,
        /// The step asked for (s).
        dt: f64,
    },
    /// RK4 asked for a model with muscles, or with excitations.
    #[error("RK4 simulates passive mechanisms; a model with muscles or excitations needs the Rosenbrock integrator")]
    Rk4WithMuscles,
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

/// What a simulation is asked for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SimulateOptions {
    /// How long to simulate (s), rounded up to a whole number of steps.
    pub duration: f64,
    /// The time step (s).
    pub dt: f64,
    /// The integrator; `None`: Rosenbrock for a model with muscles, RK4 otherwise.
    pub integrator: Option<Integrator>,
}

impl SimulateOptions {
    /// The number of steps: `duration / dt` rounded up (a duration that is a whole number of
    /// steps up to rounding is not one step more), at least one; refused when the step is longer
    /// than the duration.
    pub fn steps(&self) -> Result<usize, SimulateError> {
        let Self { duration, dt, .. } = *self;
        let steps = duration / dt;
        // a step longer than the duration ran one step to t = dt (1e300 s, say)
        if !(dt > 0.0 && dt <= duration && duration.is_finite() && steps.is_finite() && steps <= 1e9) {
            return Err(SimulateError::Span { duration, dt });
        }
        Ok((steps - 1e-9).ceil().max(1.0) as usize)
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
}

/// The most steps a chunk runs: the rows a front end holds at once, so that a run's memory does
/// not grow with its duration.
pub const MAX_CHUNK_ROWS: usize = 256;

/// A forward simulation in chunks of steps, with its tables and summary.
pub struct SimulateRun<'a> {
    compiled: &'a Compiled,
    duration: f64,
    dt: f64,
    steps: usize,
    chunk: usize,
    kind: Kind<'a>,
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
const STABILITY: [(&str, &str, &str); 6] = [
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
        let steps = options.steps()?;
        let integrator = options.integrator_for(compiled, excitations.is_some())?;
        let start = |what, e: &dyn std::fmt::Display| SimulateError::Start { what, error: e.to_string() };
        let kind = match integrator {
            Integrator::Rosenbrock => {
                let excitations = excitations.unwrap_or_else(|| Excitations::zero(compiled));
                let run = ForwardRun::new(compiled, excitations, options.dt).map_err(|e| start("state", &e))?;
                Kind::Forward(Box::new(Forward {
                    run,
                    busy: 0.0,
                    defect: [0.0; 2],
                    deepest: f64::INFINITY,
                    worst_stability: f64::NEG_INFINITY,
                }))
            }
            Integrator::Rk4 => {
                let sim = Simulation::new(compiled, options.dt).map_err(|e| start("configuration", &e))?;
                let (e0, conservative) = (sim.state().energy, sim.is_conservative());
                Kind::Passive(Box::new(Passive { sim, e0, drift: 0.0, conservative }))
            }
        };
        // about 200 chunks: a progress tick each
        Ok(Self {
            compiled,
            duration: options.duration,
            dt: options.dt,
            steps,
            chunk: steps.div_ceil(200).clamp(1, MAX_CHUNK_ROWS),
            kind,
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

    /// The number of steps.
    pub fn steps(&self) -> usize {
        self.steps
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
        let mut muscles = Vec::new();
        for m in &sys.muscles {
            let n = &m.name;
            muscles.extend([
                col(format!("{n}.excitation"), "1", "neural excitation (input)"),
                col(format!("{n}.activation"), "1", "active state"),
                col(format!("{n}.force"), "N", "tendon force, pulling along the path"),
                col(format!("{n}.fibre_length"), "m", "contractile element length"),
                col(format!("{n}.fibre_velocity"), "m/s", "contractile element velocity, lengthening positive"),
                col(format!("{n}.length"), "m", "muscle-tendon (path) length"),
            ]);
        }
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
                let frames: Result<Vec<ForwardFrame>, _> =
                    if last { f.run.current().map(|fr| vec![fr]) } else { (0..n).map(|_| f.run.advance()).collect() };
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
                let states = if i == 0 { vec![p.sim.state().clone()] } else { p.sim.advance(n)? };
                Ok(states
                    .iter()
                    .map(|s| {
                        let mut values = vec![s.q.clone(), s.qd.clone()];
                        if let (Some(e0), Some(e)) = (p.e0, s.energy) {
                            p.drift = p.drift.max((e - e0).abs());
                            values.push(vec![e, e - e0]);
                        }
                        Row { time: s.time, values }
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
        m.insert("dt_s".into(), json!(self.dt));
        match &self.kind {
            Kind::Passive(p) => {
                m.insert("conservative".into(), json!(p.conservative));
                m.insert("max_energy_drift_J".into(), json!(p.e0.map(|_| p.drift)));
            }
            Kind::Forward(f) => {
                let simulated = f.run.state().t;
                m.insert("integration_wall_s".into(), json!(f.busy));
                m.insert("real_time_factor".into(), json!(if f.busy > 0.0 { simulated / f.busy } else { 0.0 }));
                m.insert("us_per_step".into(), json!(f.busy * 1e6 / self.steps.max(1) as f64));
                m.insert("max_motion_defect".into(), json!(f.defect[0]));
                m.insert("max_muscle_defect_N".into(), json!(f.defect[1]));
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
        Row { time: f.time, values }
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
        let o = |duration, dt| SimulateOptions { duration, dt, integrator: None };
        assert_eq!(o(0.6, 0.004).steps(), Ok(150));
        assert_eq!(o(0.601, 0.004).steps(), Ok(151));
        assert_eq!(o(0.004, 0.004).steps(), Ok(1));
        // a step longer than the duration (issue 33: `--dt 1e300` ran to t = 1e300 s)
        for (d, dt) in [(1e-6, 0.004), (1.0, 1e300), (1.0, 1.0 + 1e-12)] {
            assert!(matches!(o(d, dt).steps(), Err(SimulateError::Span { .. })), "{d} {dt}");
        }
        for (d, dt) in [(0.0, 0.1), (1.0, 0.0), (-1.0, 0.1), (f64::NAN, 0.1), (1e10, 1.0), (1.0, f64::INFINITY)] {
            assert!(matches!(o(d, dt).steps(), Err(SimulateError::Span { .. })), "{d} {dt}");
        }
    }

    #[test]
    fn a_long_run_holds_a_bounded_chunk_of_rows_at_a_time() {
        // 1e9 steps: a chunk of steps/200 would hold five million rows at once
        let c = model("mechanisms/pendulum.toml");
        let options = SimulateOptions { duration: 1e6, dt: 0.001, integrator: None };
        let run = SimulateRun::new(&c, &options, None).expect("it starts");
        assert_eq!(run.steps(), 1_000_000_000);
        assert!((0..run.chunks()).all(|i| run.rows_in(i) <= MAX_CHUNK_ROWS));
        assert_eq!(run.rows(), 1_000_000_001, "every step's row and the initial state");
    }

    #[test]
    fn a_passive_run_has_a_row_per_step_and_the_initial_state() {
        let c = model("mechanisms/pendulum.toml");
        let options = SimulateOptions { duration: 0.5, dt: 0.001, integrator: None };
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
        let rk4 = SimulateOptions { duration: 0.1, dt: 0.004, integrator: Some(Integrator::Rk4) };
        assert_eq!(SimulateRun::new(&c, &rk4, None).err(), Some(SimulateError::Rk4WithMuscles));
        let pendulum = model("mechanisms/pendulum.toml");
        assert_eq!(rk4.integrator_for(&pendulum, true), Err(SimulateError::Rk4WithMuscles));
        let options = SimulateOptions { duration: 0.1, dt: 0.004, integrator: None };
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
        let options = SimulateOptions { duration: 0.04, dt: 0.004, integrator: None };
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
