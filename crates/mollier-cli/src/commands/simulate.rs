//! `mollier simulate MODEL --duration T [--dt DT] [--output-dt DT] [--rtol R] [--atol A]
//! [--atol-activation A] [--controller C] [--method M] [--jacobian-every K] [--steps-across-knots]
//! [--excitations FILE]
//! [--loads FILE] [--integrator I] --out DIR`: a passive mechanism by explicit RK4, or a
//! model with Hill muscles by the error-controlled Rosenbrock-W pair (or a fixed Rosenbrock
//! step with `--dt`). The
//! run, its tables and summary are the facade's ([`mollier::forward_tables`]); this file adds the
//! plots, the messages and the exit codes.

use std::path::PathBuf;

use mollier::forward_tables::{Integrator as Method, SimulateError, SimulateOptions, SimulateRun};
use mollier::{Excitations, ForwardFrame};
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

/// The step-size controllers of the error control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StepController {
    /// `h e^(-1/k)` with a safety factor (`k` the estimate's order: 3, the Euler step's 2).
    Elementary,
    /// Gustafsson's PI controller after an accepted step (Hairer & Wanner IV.8).
    Gustafsson,
}

/// The methods of the error control.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum StepMethod {
    /// The Rosenbrock-W pair ROS2(3) of Shampine & Reichelt (1997): second order, two
    /// evaluations a step.
    Ros23,
    /// The Rosenbrock-W pair ROS34PW2 of Rang & Angermann (2005): third order, four evaluations
    /// a step.
    Ros34pw2,
    /// The linearly implicit Euler step with the activations integrated apart: first order, one
    /// evaluation a step; at rtol 7e-3 the fixed step's accuracy on the shoulder's flexion at twice
    /// the default's speed.
    Euler,
    /// The linearly implicit BDF2 with the activations integrated apart: second order, one
    /// evaluation a step; at rtol 3e-2 better than the fixed step's accuracy on the shoulder's
    /// flexion in 0.69 of the Euler step's evaluations.
    Bdf2,
}

/// A simulation in chunks of steps (one progress tick per chunk), and the plots' series.
struct SimulateFrames<'a> {
    compiled: &'a Compiled,
    run: SimulateRun<'a>,
    /// What the plots show, every `every`-th frame (runs with muscles).
    series: ForwardSeries,
    every: usize,
    seen: usize,
    /// The excitation file computed muscle control made, written beside the tables.
    tracked: Option<String>,
}

/// Add a frame to the plots' series.
fn sample(s: &mut ForwardSeries, compiled: &Compiled, run: &mollier::ForwardRun<'_>, f: &ForwardFrame) {
    if s.time.is_empty() {
        s.coordinates = compiled
            .inputs
            .iter()
            .map(|i| (i.name.clone(), if i.quantity == Quantity::Length { "m" } else { "deg" }, Vec::new()))
            .collect();
        s.contacts = run.contact_names().map(|n| (n.to_string(), Vec::new())).collect();
    }
    s.time.push(f.time);
    for (k, (_, unit, v)) in s.coordinates.iter_mut().enumerate() {
        v.push(if *unit == "deg" { f.x[k].to_degrees() } else { f.x[k] });
    }
    for ((_, v), c) in s.contacts.iter_mut().zip(&f.contacts) {
        v.push((c[0] * c[0] + c[1] * c[1] + c[2] * c[2]).sqrt());
    }
    if let (Some(st), Some(half)) = (f.stability, run.cone_half_angles()) {
        let entry = s.stability.get_or_insert_with(|| (Vec::new(), half.map(f64::to_degrees)));
        entry.0.push((st[3].to_degrees(), st[4].to_degrees()));
    }
}

impl FrameRun for SimulateFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        self.run.tables()
    }
    fn frames(&self) -> usize {
        self.run.chunks()
    }
    fn rows_in(&self, i: usize) -> usize {
        self.run.rows_in(i)
    }
    fn time(&self, _: usize) -> f64 {
        self.run.time()
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        // the frames to plot: every `every`-th, and the final state (the last chunk's one)
        let last = i + 1 == self.run.chunks() && self.run.forward().is_some();
        let mut frames = Vec::new();
        let (every, seen) = (self.every, &mut self.seen);
        let rows = self.run.solve(i, &mut |f| {
            if *seen % every == 0 || last {
                frames.push(f.clone());
            }
            *seen += 1;
        })?;
        if let Some(run) = self.run.forward() {
            for f in &frames {
                sample(&mut self.series, self.compiled, run, f);
            }
        }
        Ok(rows.into_iter().map(|r| Row { time: r.time, values: r.values, warnings: r.warnings }).collect())
    }
    fn finish(&mut self, dir: &mut mollier::OutputDir) -> Result<(), mollier::OutputError> {
        if let Some(text) = &self.tracked {
            let path = dir.file("excitations.csv")?;
            std::fs::write(&path, text).map_err(|source| mollier::OutputError::Io { path, source })?;
        }
        if self.run.forward().is_some() { mollier_study::forward_plots::write(&self.series, dir) } else { Ok(()) }
    }
    fn summary(&self) -> serde_json::Map<String, Value> {
        self.run.summary()
    }
}

/// What `mollier simulate` is asked for: its command line, read by clap.
#[derive(clap::Args, Debug)]
pub(crate) struct Args {
    /// The model file.
    model: PathBuf,
    /// How long to simulate (s), rounded up to a whole number of output steps.
    #[arg(long, value_parser = positive_number)]
    duration: f64,
    /// A fixed time step (s). Default: RK4 at 0.004; with muscles error control (no fixed step).
    #[arg(long, visible_alias = "step", value_parser = positive_number)]
    dt: Option<f64>,
    /// The rows' time step (s). Default: --dt, or 0.01 with error control; a whole number of
    /// steps at a fixed step.
    #[arg(long, value_parser = positive_number)]
    output_dt: Option<f64>,
    /// Error control: the relative tolerance.
    #[arg(long, value_parser = positive_number, default_value = "1e-3")]
    rtol: f64,
    /// Error control: the absolute tolerance, in each state's unit (rad or m, rad/s or m/s, m, 1).
    #[arg(long, value_parser = positive_number, default_value = "1e-5")]
    atol: f64,
    /// Error control: the activations' absolute tolerance (1). Default: --atol.
    #[arg(long, value_parser = positive_number)]
    atol_activation: Option<f64>,
    /// Error control: the step-size controller.
    #[arg(long, value_enum, default_value = "elementary")]
    controller: StepController,
    /// Error control: the method (docs/forward-dynamics.md, "Integrators").
    #[arg(long, value_enum, default_value = "ros23")]
    method: StepMethod,
    /// Error control: form the whole Jacobian every K accepted steps, its kernel blocks kept in
    /// between (updated along each step by the Euler step and BDF2; docs/forward-dynamics.md,
    /// "The kept blocks follow the steps").
    #[arg(long, value_name = "K", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..))]
    jacobian_every: u32,
    /// Error control: let the steps straddle the excitations' knots instead of ending on them
    /// (faster where the steps are longer than half the knots' spacing, as with rigid tendons).
    #[arg(long)]
    steps_across_knots: bool,
    /// At a fixed step with muscles: the muscle equilibrium defect warned about, as a fraction
    /// of the muscle's maximum force.
    #[arg(long, value_parser = positive_number, default_value = "0.01")]
    defect_tolerance: f64,
    /// Muscle excitations: CSV or OpenSim .sto/.mot with a `time` column and one column per
    /// muscle of `[muscles]` (0 to 1, interpolated linearly); muscles without a column get 0.
    #[arg(long)]
    excitations: Option<PathBuf>,
    /// Track a target motion of the model (a motion file, as for `inverse`) by computed muscle
    /// control: the excitations every 20 ms from the model's `[load_sharing]` (criterion (b),
    /// its joint cone), written to DIR/excitations.csv, and the run they make.
    #[arg(long, value_name = "TARGET", conflicts_with = "excitations")]
    track: Option<PathBuf>,
    /// External loads that vary in time (docs/loads.md): a table of forces, moments and points
    /// of application, or OpenSim's ExternalLoads XML; they must cover the run's times. They
    /// ask for the Rosenbrock integrator.
    #[arg(long, conflicts_with = "track")]
    loads: Option<PathBuf>,
    /// Rigid tendons for every muscle whose tendon slack length is below R times its optimal
    /// fibre length (`inf`: every muscle), beside those the model makes rigid: no contraction
    /// state for them, the usual approximation where a tendon's stretch is a fraction of a
    /// millimetre (docs/forward-dynamics.md, "Rigid tendons"). Not with --track, whose
    /// computed muscle control runs the model's own tendons.
    #[arg(long, value_name = "R", value_parser = positive_ratio, conflicts_with = "track")]
    rigid_tendons: Option<f64>,
    /// The integrator: `rosenbrock` (default for models with muscles) or `rk4` (default for
    /// passive mechanisms).
    #[arg(long, value_enum)]
    integrator: Option<Integrator>,
    /// Threads for the work per muscle path (1, the default: the serial code; 0: the cores
    /// available, or RAYON_NUM_THREADS; at most 1024). At a fixed step the results do not depend
    /// on it; with error control a long run's may (docs/forward-dynamics.md, "Threads").
    #[arg(long, default_value_t = 1, value_parser = thread_count)]
    threads: usize,
    /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
    /// "Output directories").
    #[arg(long)]
    out: PathBuf,
    /// No progress bar and no summary.
    #[arg(long, short)]
    quiet: bool,
}

pub(crate) fn run(req: &Args, registry: &Registry) -> ExitCode {
    let Args { model, duration, dt, out, quiet, .. } = req;
    let (duration, dt, quiet) = (*duration, *dt, *quiet);
    let integrator = req.integrator.map(|i| match i {
        Integrator::Rk4 => Method::Rk4,
        Integrator::Rosenbrock => Method::Rosenbrock,
    });
    // external loads are in the Rosenbrock integrator's equations only: its default with them
    let integrator = integrator.or(req.loads.as_ref().map(|_| Method::Rosenbrock));
    let mut options = SimulateOptions { dt, output_dt: req.output_dt, integrator, ..SimulateOptions::new(duration) };
    options.tolerances.rtol = req.rtol;
    options.tolerances.atol = req.atol;
    options.tolerances.atol_activation = req.atol_activation;
    options.tolerances.controller = match req.controller {
        StepController::Elementary => mollier::Controller::Elementary,
        StepController::Gustafsson => mollier::Controller::Gustafsson,
    };
    options.tolerances.method = match req.method {
        StepMethod::Ros23 => mollier::StepMethod::Ros23,
        StepMethod::Ros34pw2 => mollier::StepMethod::Ros34pw2,
        StepMethod::Euler => mollier::StepMethod::Euler,
        StepMethod::Bdf2 => mollier::StepMethod::Bdf2,
    };
    options.tolerances.land_on_breaks = !req.steps_across_knots;
    options.tolerances.jacobian_every = Some(req.jacobian_every as usize);
    options.defect_tolerance = req.defect_tolerance;
    options.rigid_tendons = req.rigid_tendons;
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let steps = match options
        .integrator_for(&compiled, req.excitations.is_some() || req.track.is_some() || req.loads.is_some())
        .and_then(|i| options.plan(i == Method::Rosenbrock))
    {
        Ok(plan) => plan.outputs,
        Err(e) => return refused(&e),
    };
    let excitations = match req.excitations.as_deref() {
        Some(path) => match Excitations::read(path, &compiled) {
            Ok(e) => Some(e),
            Err(d) => {
                report(&d);
                return ExitCode::from(INVALID);
            }
        },
        None => None,
    };
    let (excitations, tracked) = match req.track.as_deref() {
        None => (excitations, None),
        Some(path) => match tracked_excitations(&compiled, path, &options, quiet) {
            Ok(e) => {
                let text = e.to_csv(&compiled);
                (Some(e), Some(text))
            }
            Err(code) => return code,
        },
    };
    if let Some(note) = excitations.as_ref().and_then(|e| e.missing_note(&compiled)).filter(|_| !quiet) {
        errln!("note: {note}");
    }
    let loads = match req.loads.as_deref().map(|p| mollier::ExternalLoads::read(p, &compiled)).transpose() {
        Ok(l) => l,
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    if loads.is_none() {
        note_if_weightless(&compiled, quiet);
    }
    let mut run = match SimulateRun::loaded(&compiled, &options, excitations, loads.as_ref()) {
        Ok(r) => r,
        Err(e) => return refused(&e),
    };
    run.set_threads(req.threads);
    let mut summary = summary_head("simulate", model, None);
    if run.forward().is_some() {
        summary.insert("excitations".into(), json!(req.excitations.as_ref().map(|p| p.display().to_string())));
    }
    let mut frames = SimulateFrames {
        compiled: &compiled,
        run,
        series: ForwardSeries::default(),
        // at most about 2000 points a line
        every: steps.div_ceil(2000).max(1),
        seen: 0,
        tracked,
    };
    let kind = LoopKind { noun: "step", failed: steps_from, on_error: OnError::Stop, summary };
    let code = run_frames(&mut frames, out, kind, quiet);
    if quiet {
        return code;
    }
    let (t, busy) = (frames.run.time(), frames.run.busy());
    if let Some(forward) = frames.run.forward() {
        for w in frames.run.warnings() {
            errln!("warning: {w}");
        }
        let (steps, how) = match (forward.step_stats(), frames.run.plan().fixed) {
            (Some(st), _) => (st.accepted, format!(" ({} rejected)", st.rejected)),
            (None, Some((_, per))) => (steps * per, String::new()),
            (None, None) => (steps, String::new()),
        };
        if busy > 0.0 {
            errln!(
                "simulated {} s in {busy:.3} s of computing: {:.1}× real time, {steps} steps{how}, {:.1} µs per step",
                mollier_format::human(t),
                t / busy,
                busy * 1e6 / steps.max(1) as f64
            );
        }
        return code;
    }
    match frames.run.energy_drift() {
        Some((drift, true)) => {
            errln!("energy drift over {} s: max |E − E(0)| = {drift:.3e} J", mollier_format::human(t))
        }
        Some((drift, false)) => errln!(
            "energy change over {} s: max |E − E(0)| = {drift:.3e} J (the model has damping or loads: energy is not conserved)",
            mollier_format::human(t)
        ),
        None => errln!("note: a law of the model defines no energy: energy.csv is not written"),
    }
    code
}

/// The excitations of computed muscle control along the motion file `path` for the run's
/// duration and tolerances ([`mollier::cmc`]), its progress on standard error.
fn tracked_excitations(
    compiled: &Compiled,
    path: &Path,
    options: &SimulateOptions,
    quiet: bool,
) -> Result<Excitations, ExitCode> {
    let motion = mollier::read_motion(path, &compiled.inputs).map_err(|d| {
        report(&d);
        ExitCode::from(INVALID)
    })?;
    let (ex, worst) =
        mollier::cmc::track_motion(compiled, &motion, options.duration, options.tolerances).map_err(|e| {
            if let mollier::CmcError::Target(_) = e {
                errln!("error: {}: {e}", path.display());
                return ExitCode::from(INVALID);
            }
            errln!("error: tracking {}: {e}", path.display());
            ExitCode::from(FAILED)
        })?;
    if !quiet {
        errln!(
            "tracked {} by computed muscle control: {} excitation rows, largest coordinate error at an interval's start {:.3}",
            path.display(),
            ex.time.len(),
            worst
        );
    }
    Ok(ex)
}

/// A simulation that cannot start: the problem in the command line's terms, and its exit code.
fn refused(e: &SimulateError) -> ExitCode {
    match e {
        SimulateError::Span { duration, dt, output_dt } => {
            errln!(
                "error: --duration, --dt and --output-dt must be positive, the output step (--output-dt, else --dt) at most --duration, and the run at most 1e9 steps long (got {duration} s, {dt} s and {output_dt} s)"
            );
            ExitCode::from(INVALID)
        }
        SimulateError::Grid { output_dt, dt } => {
            errln!("error: --output-dt {output_dt} is not a whole number of steps of --dt {dt}");
            ExitCode::from(INVALID)
        }
        SimulateError::Tolerance { .. }
        | SimulateError::RigidTendons(_)
        | SimulateError::JacobianInterval
        | SimulateError::LoadTimes { .. } => {
            errln!("error: {e}");
            ExitCode::from(INVALID)
        }
        SimulateError::Rk4WithMuscles => {
            errln!(
                "error: RK4 simulates passive mechanisms; a model with muscles, excitations or loads needs `--integrator rosenbrock`"
            );
            ExitCode::from(INVALID)
        }
        SimulateError::Start { .. } => {
            errln!("error: {e}");
            ExitCode::from(FAILED)
        }
    }
}

/// A ratio greater than 0, `inf` allowed.
fn positive_ratio(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 => Ok(v),
        Ok(v) => Err(format!("must be a number greater than 0 (or inf), got {v}")),
        Err(e) => Err(e.to_string()),
    }
}
