//! `mollier simulate MODEL --duration T [--dt DT] [--excitations FILE] [--integrator I] --out DIR`:
//! a passive mechanism by explicit RK4, or a model with Hill muscles by the Rosenbrock step.

use std::time::Instant;

use mollier::{Excitations, ForwardFrame, ForwardRun};
use mollier_study::forward_plots::ForwardSeries;

use super::prelude::*;

/// The integrators of `mollier simulate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Integrator {
    /// Classical fourth-order Runge-Kutta, explicit: passive mechanisms without muscles.
    Rk4,
    /// The linearly implicit (Rosenbrock) step of Chadwick et al. (2014), first order, for stiff
    /// musculoskeletal models with Hill muscles.
    Rosenbrock,
}

/// The column of an input (`rate`: of its rate), named as the input, with its unit.
fn input_column(i: &mollier::InputInfo, rate: bool) -> Column {
    let (unit, what) = match (i.quantity, rate) {
        (Quantity::Length, false) => ("m", "generalized coordinate"),
        (Quantity::Length, true) => ("m/s", "its rate"),
        (_, false) => ("rad", "generalized coordinate"),
        (_, true) => ("rad/s", "its rate"),
    };
    Column { name: i.name.clone(), unit, meaning: what.to_string() }
}

/// A forward simulation with muscles, in chunks of steps; the last frame is the final state.
struct ForwardFrames<'a> {
    compiled: &'a Compiled,
    run: ForwardRun<'a>,
    steps: usize,
    chunk: usize,
    /// Seconds spent integrating (not writing).
    busy: f64,
    defect: [f64; 2],
    /// The lowest level of a soft contact (most negative: deepest inside).
    deepest: f64,
    /// The largest stability index of the joint force.
    worst_stability: f64,
    /// What the plots show, every `every`-th row.
    series: ForwardSeries,
    every: usize,
    seen: usize,
}

impl ForwardFrames<'_> {
    fn row(&mut self, f: &ForwardFrame) -> Row {
        self.defect = [self.defect[0].max(f.defect[0]), self.defect[1].max(f.defect[1])];
        if self.seen % self.every == 0 || f.time >= self.run.state().t {
            self.sample(f);
        }
        self.seen += 1;
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
    fn chunks(&self) -> usize {
        self.steps.div_ceil(self.chunk)
    }
    /// Add a frame to the plots' series.
    fn sample(&mut self, f: &ForwardFrame) {
        let s = &mut self.series;
        if s.time.is_empty() {
            s.coordinates = self
                .compiled
                .inputs
                .iter()
                .map(|i| (i.name.clone(), if i.quantity == Quantity::Length { "m" } else { "deg" }, Vec::new()))
                .collect();
            s.contacts = self.run.contact_names().map(|n| (n.to_string(), Vec::new())).collect();
        }
        s.time.push(f.time);
        for (k, (_, unit, v)) in s.coordinates.iter_mut().enumerate() {
            v.push(if *unit == "deg" { f.x[k].to_degrees() } else { f.x[k] });
        }
        for ((_, v), c) in s.contacts.iter_mut().zip(&f.contacts) {
            v.push((c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt());
        }
        if let (Some(st), Some(half)) = (f.stability, self.run.cone_half_angles()) {
            let entry = s.stability.get_or_insert_with(|| (Vec::new(), half.map(f64::to_degrees)));
            entry.0.push((st[3].to_degrees(), st[4].to_degrees()));
        }
    }
}

impl FrameRun for ForwardFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        let sys = self.run.system();
        let inputs = &self.compiled.inputs;
        let mut states: Vec<Column> = inputs.iter().map(|i| input_column(i, false)).collect();
        states.extend(inputs.iter().map(|i| {
            let c = input_column(i, true);
            Column { name: format!("{}.vel", c.name), ..c }
        }));
        for m in &sys.muscles {
            states.push(Column {
                name: format!("{}.contraction", m.name),
                unit: "m",
                meaning: "contraction state s = fibre length × cos(pennation)".into(),
            });
        }
        for m in &sys.muscles {
            states.push(Column { name: format!("{}.activation", m.name), unit: "1", meaning: "active state".into() });
        }
        let mut muscles = Vec::new();
        for m in &sys.muscles {
            let n = &m.name;
            muscles.extend([
                Column { name: format!("{n}.excitation"), unit: "1", meaning: "neural excitation (input)".into() },
                Column { name: format!("{n}.activation"), unit: "1", meaning: "active state".into() },
                Column {
                    name: format!("{n}.force"),
                    unit: "N",
                    meaning: "tendon force, pulling along the path".into(),
                },
                Column { name: format!("{n}.fibre_length"), unit: "m", meaning: "contractile element length".into() },
                Column {
                    name: format!("{n}.fibre_velocity"),
                    unit: "m/s",
                    meaning: "contractile element velocity, lengthening positive".into(),
                },
                Column { name: format!("{n}.length"), unit: "m", meaning: "muscle-tendon (path) length".into() },
            ]);
        }
        let mut contacts = Vec::new();
        for n in self.run.contact_names() {
            for (axis, c) in ["x", "y", "z"].iter().zip(["force_x", "force_y", "force_z"]) {
                contacts.push(Column {
                    name: format!("{n}.{c}"),
                    unit: "N",
                    meaning: format!("contact force on the point, global {axis}"),
                });
            }
            contacts.push(Column {
                name: format!("{n}.level"),
                unit: "1",
                meaning: "the ellipsoid's implicit function at the point: negative inside".into(),
            });
        }
        let mut t = vec![
            Table { file: "states.csv".into(), columns: states },
            Table { file: "muscles.csv".into(), columns: muscles },
        ];
        if !contacts.is_empty() {
            t.push(Table { file: "contacts.csv".into(), columns: contacts });
        }
        if self.run.has_cone() {
            let col = |name: &str, unit: &'static str, meaning: &str| Column {
                name: name.into(),
                unit,
                meaning: meaning.into(),
            };
            t.push(Table {
                file: "stability.csv".into(),
                columns: vec![
                    col("force_x", "N", "joint force in the cone frame, along its axis (into the socket)"),
                    col("force_y", "N", "joint force in the cone frame, y"),
                    col("force_z", "N", "joint force in the cone frame, z"),
                    col("theta", "rad", "deviation angle of the force towards the cone's y axis"),
                    col("phi", "rad", "deviation angle of the force towards the cone's z axis"),
                    col("stability_index", "1", "(theta/theta_a)^2 + (phi/phi_a)^2 - 1: at most 0 inside the cone"),
                ],
            });
        }
        t
    }
    fn frames(&self) -> usize {
        self.chunks() + 1
    }
    fn rows_in(&self, i: usize) -> usize {
        if i == self.chunks() { 1 } else { self.chunk.min(self.steps - i * self.chunk) }
    }
    fn time(&self, _: usize) -> f64 {
        self.run.state().t
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        let start = Instant::now();
        let frames: Result<Vec<ForwardFrame>, _> = if i == self.chunks() {
            self.run.current().map(|f| vec![f])
        } else {
            (0..self.rows_in(i)).map(|_| self.run.advance()).collect()
        };
        self.busy += start.elapsed().as_secs_f64();
        Ok(frames?.iter().map(|f| self.row(f)).collect())
    }
    fn finish(&mut self, dir: &mut mollier::OutputDir) -> Result<(), mollier::OutputError> {
        mollier_study::forward_plots::write(&self.series, dir)
    }
    fn summary(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        let simulated = self.run.state().t;
        m.insert("integrator".into(), json!("rosenbrock"));
        m.insert("end_time_s".into(), json!(simulated));
        m.insert("integration_wall_s".into(), json!(self.busy));
        m.insert("real_time_factor".into(), json!(if self.busy > 0.0 { simulated / self.busy } else { 0.0 }));
        m.insert("us_per_step".into(), json!(self.busy * 1e6 / self.steps.max(1) as f64));
        m.insert("max_motion_defect".into(), json!(self.defect[0]));
        m.insert("max_muscle_defect_N".into(), json!(self.defect[1]));
        m.insert("muscles".into(), json!(self.run.system().muscles.len()));
        m.insert("muscles_without_excitation".into(), json!(self.run.excitations().missing));
        if self.run.contact_names().next().is_some() {
            m.insert("lowest_contact_level".into(), json!(self.deepest));
        }
        if self.run.has_cone() {
            m.insert("largest_stability_index".into(), json!(self.worst_stability));
        }
        m
    }
}

/// A simulation, in chunks of steps (one progress tick per chunk).
struct SimulationFrames<'a> {
    sim: Simulation<'a>,
    steps: usize,
    chunk: usize,
    e0: Option<f64>,
    drift: f64,
}

impl SimulationFrames<'_> {
    fn row(&mut self, s: &SimulationState) -> Row {
        let mut values = vec![s.q.clone(), s.qd.clone()];
        if let (Some(e0), Some(e)) = (self.e0, s.energy) {
            self.drift = self.drift.max((e - e0).abs());
            values.push(vec![e, e - e0]);
        }
        Row { time: s.time, values }
    }
}

impl FrameRun for SimulationFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        let inputs = &self.sim.compiled().inputs;
        let mut t = vec![
            Table { file: "motion.csv".into(), columns: inputs.iter().map(|i| input_column(i, false)).collect() },
            Table { file: "velocities.csv".into(), columns: inputs.iter().map(|i| input_column(i, true)).collect() },
        ];
        if self.e0.is_some() {
            t.push(Table {
                file: "energy.csv".into(),
                columns: vec![
                    Column {
                        name: "energy".into(),
                        unit: "J",
                        meaning: "kinetic plus potential energy (gravity, springs of the laws)".into(),
                    },
                    Column { name: "drift".into(), unit: "J", meaning: "energy minus its initial value".into() },
                ],
            });
        }
        t
    }
    fn frames(&self) -> usize {
        // frame 0 is the initial state
        1 + self.steps.div_ceil(self.chunk)
    }
    fn summary(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("end_time_s".into(), json!(self.sim.state().time));
        // absent when a law defines no energy (no energy.csv then)
        m.insert("max_energy_drift_J".into(), json!(self.e0.map(|_| self.drift)));
        m
    }
    fn rows_in(&self, i: usize) -> usize {
        if i == 0 { 1 } else { self.chunk.min(self.steps - (i - 1) * self.chunk) }
    }
    fn time(&self, _: usize) -> f64 {
        self.sim.state().time
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        if i == 0 {
            let s = self.sim.state().clone();
            return Ok(vec![self.row(&s)]);
        }
        let n = self.rows_in(i);
        let states = self.sim.advance(n)?;
        Ok(states.iter().map(|s| self.row(s)).collect())
    }
}

/// What `mollier simulate` was asked for.
pub(crate) struct Request<'a> {
    pub(crate) model: &'a Path,
    pub(crate) duration: f64,
    pub(crate) dt: f64,
    pub(crate) excitations: Option<&'a Path>,
    pub(crate) integrator: Option<Integrator>,
    pub(crate) out: &'a Path,
    pub(crate) quiet: bool,
}

pub(crate) fn run(req: Request<'_>, registry: &Registry) -> ExitCode {
    let Request { model, duration, dt, out, quiet, .. } = req;
    let steps = duration / dt;
    if !(dt > 0.0 && duration > 0.0 && steps.is_finite() && steps <= 1e9) {
        errln!("error: --duration and --dt must be positive, and at most 1e9 steps long (got {duration} s and {dt} s)");
        return ExitCode::from(INVALID);
    }
    // a duration that is a whole number of steps up to rounding is not one step more
    let steps = (steps - 1e-9).ceil().max(1.0) as usize;
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let muscles = !compiled.muscles.is_empty();
    let integrator = req.integrator.unwrap_or(if muscles { Integrator::Rosenbrock } else { Integrator::Rk4 });
    if integrator == Integrator::Rk4 && (muscles || req.excitations.is_some()) {
        errln!(
            "error: RK4 simulates passive mechanisms; a model with muscles or excitations needs `--integrator rosenbrock`"
        );
        return ExitCode::from(INVALID);
    }
    note_if_weightless(&compiled, quiet);
    match integrator {
        Integrator::Rosenbrock => forward(&compiled, req, steps),
        Integrator::Rk4 => passive(&compiled, model, duration, dt, out, quiet, steps),
    }
}

fn forward(compiled: &Compiled, req: Request<'_>, steps: usize) -> ExitCode {
    let excitations = match req.excitations {
        Some(path) => match Excitations::read(path, compiled) {
            Ok(e) => e,
            Err(d) => {
                report(&d);
                return ExitCode::from(INVALID);
            }
        },
        None => Excitations::zero(compiled),
    };
    if !req.quiet && !excitations.missing.is_empty() && req.excitations.is_some() {
        errln!("note: no excitation column for {}: their excitation is 0", excitations.missing.join(", "));
    }
    let run = match ForwardRun::new(compiled, excitations, req.dt) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: the initial state: {e}");
            return ExitCode::from(FAILED);
        }
    };
    let mut frames = ForwardFrames {
        compiled,
        run,
        steps,
        chunk: steps.div_ceil(200).max(1),
        busy: 0.0,
        defect: [0.0; 2],
        deepest: f64::INFINITY,
        worst_stability: f64::NEG_INFINITY,
        series: ForwardSeries::default(),
        // at most about 2000 points a line
        every: steps.div_ceil(2000).max(1),
        seen: 0,
    };
    let mut summary = summary_head("simulate", req.model, None);
    summary.insert("excitations".into(), json!(req.excitations.map(|p| p.display().to_string())));
    summary.insert("duration_s".into(), json!(req.duration));
    summary.insert("dt_s".into(), json!(req.dt));
    let kind = LoopKind { noun: "step", failed: steps_from, on_error: OnError::Stop, summary };
    let code = run_frames(&mut frames, req.out, kind, req.quiet);
    if !req.quiet && frames.busy > 0.0 {
        let t = frames.run.state().t;
        errln!(
            "simulated {t} s in {:.3} s of computing: {:.1}× real time, {:.1} µs per step",
            frames.busy,
            t / frames.busy,
            frames.busy * 1e6 / steps as f64
        );
    }
    code
}

fn passive(
    compiled: &Compiled,
    model: &Path,
    duration: f64,
    dt: f64,
    out: &Path,
    quiet: bool,
    steps: usize,
) -> ExitCode {
    let sim = match Simulation::new(compiled, dt) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: the initial configuration: {e}");
            return ExitCode::from(FAILED);
        }
    };
    let e0 = sim.state().energy;
    let conservative = sim.is_conservative();
    let mut frames = SimulationFrames { sim, steps, chunk: steps.div_ceil(200).max(1), e0, drift: 0.0 };
    let mut summary = summary_head("simulate", model, None);
    summary.insert("duration_s".into(), json!(duration));
    summary.insert("dt_s".into(), json!(dt));
    summary.insert("integrator".into(), json!("rk4"));
    summary.insert("conservative".into(), json!(conservative));
    let kind = LoopKind { noun: "step", failed: steps_from, on_error: OnError::Stop, summary };
    let code = run_frames(&mut frames, out, kind, quiet);
    if !quiet {
        let t = frames.sim.state().time;
        match e0 {
            Some(_) if conservative => {
                errln!("energy drift over {t} s: max |E − E(0)| = {:.3e} J", frames.drift)
            }
            Some(_) => errln!(
                "energy change over {t} s: max |E − E(0)| = {:.3e} J (the model has damping or loads: energy is not conserved)",
                frames.drift
            ),
            None => errln!("note: a law of the model defines no energy: energy.csv is not written"),
        }
    }
    code
}
