//! `mollier optimize PROBLEM.toml --out DIR`: an optimal control problem file read and checked
//! (each problem placed at `file:line:col` with its field path), its model compiled, the direct
//! collocation problem of [`mollier_ocp`] solved by IPOPT, and the tables written as
//! `mollier simulate` writes them (`states.csv`, `muscles.csv`), with the actuators' controls
//! (`controls.csv`) and IPOPT's iteration table (`convergence.csv`). Docs: `docs/optimal-control.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

use mollier_format::{Diagnostic, Diagnostics, Spans};
use mollier_ipopt::Value as IpoptValue;
use mollier_ocp::{
    Actuator, Guess, HessianChoice, Motion, Objective, Problem, ScalingChoice, Scheme, Solved, Tracking,
};
use mollier_sim::Musculoskeletal;
use serde::Deserialize;
use serde_json::{Value, json};

use mollier_core::registry::Registry;

use crate::Column;
use crate::compile::{Compiled, load};
use crate::forward_tables::muscle_columns;
use crate::output::{OutputDir, OutputError, Table};

const HINT: &str = "docs/optimal-control.md describes every field of a problem file";

/// The transcription's scheme, as written.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum SchemeSpec {
    /// Trapezoidal.
    Trapezoidal,
    /// Hermite-Simpson (separated).
    #[default]
    HermiteSimpson,
}

/// The initial guess, as written: a name, or `{ file = "states.csv" }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum GuessField {
    /// `linear`, `rest` or `reference`.
    Named(GuessSpec),
    /// A trajectory to start from ([`crate::optimize_guess`]).
    File(GuessFile),
}

impl Default for GuessField {
    fn default() -> Self {
        Self::Named(GuessSpec::default())
    }
}

/// `guess = { file = "..." }`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct GuessFile {
    /// A `states.csv`, relative to the problem file.
    pub file: String,
    /// Continue the `optimize` run that wrote it: its iterate and multipliers verbatim (IPOPT's
    /// warm start), on the same problem's grid ([`crate::optimize_guess::read_warm_start`]).
    #[serde(default)]
    pub warm_start: bool,
}

/// How IPOPT scales the problem, as written (unset: `physical` for a model with muscles, `ipopt`
/// for one without).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum ScalingSpec {
    /// Each variable and row by its physical size (`mollier_ocp`'s scaling).
    Physical,
    /// IPOPT's own gradient-based scaling.
    Ipopt,
}

/// A named initial guess.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum GuessSpec {
    /// States linear from the initial values to the final ones.
    #[default]
    Linear,
    /// The rest state at every point.
    Rest,
    /// As `linear`, the tracked states on their references (their rates the slopes).
    Reference,
}

/// An ideal actuator on a coordinate.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ActuatorSpec {
    /// The model's input it drives.
    pub coordinate: String,
    /// N or N m per unit control.
    #[serde(default = "one")]
    pub optimal_force: f64,
    /// Bounds of the control (default free).
    pub bounds: Option<[f64; 2]>,
}

/// A tracked state.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TrackingSpec {
    /// Weight.
    #[serde(default = "one")]
    pub weight: f64,
    /// `[t, value]` pairs (s, SI units), times increasing.
    pub reference: Vec<[f64; 2]>,
}

/// A final-state target.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    /// Target value (SI units).
    pub value: f64,
    /// Weight.
    #[serde(default = "one")]
    pub weight: f64,
}

/// The objective's terms.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ObjectiveSpec {
    /// Weight of `∫ Σ c_k e_k² dt`.
    #[serde(default)]
    pub excitation: f64,
    /// Muscles' factors `c_k` by name (the others 1).
    #[serde(default)]
    pub excitation_weights: BTreeMap<String, f64>,
    /// Weight of `∫ Σ a³ dt`.
    #[serde(default)]
    pub activation_cubed: f64,
    /// Weight of `∫ Σ τ² dt`.
    #[serde(default)]
    pub actuator: f64,
    /// Weight of `∫ Σ (ṡ / L_CEopt)² dt` (muscles' contraction rates).
    #[serde(default)]
    pub contraction_rate: f64,
    /// Weight of `∫ Σ v̇² dt` (the coordinates' accelerations).
    #[serde(default)]
    pub acceleration: f64,
    /// Tracked states by name.
    #[serde(default)]
    pub tracking: BTreeMap<String, TrackingSpec>,
    /// Final-state targets by name.
    #[serde(default)]
    pub final_targets: BTreeMap<String, TargetSpec>,
    /// Weight of the duration (per second; needs `duration_bounds`).
    #[serde(default)]
    pub time: f64,
    /// Model points tracked along the markers of a `.trc` file.
    pub markers: Option<crate::optimize_markers::MarkersSpec>,
}

/// IPOPT's settings.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SolverSpec {
    /// Convergence tolerance (IPOPT's `tol`).
    #[serde(default = "tol")]
    pub tolerance: f64,
    /// Iteration limit.
    #[serde(default = "max_iter")]
    pub max_iterations: i32,
    /// Pairs the limited-memory Hessian keeps (IPOPT's `limited_memory_max_history`).
    #[serde(default = "history")]
    pub hessian_history: i32,
    /// Unwritten: exact where the system allows it, else the approximation; `exact`: exact, and
    /// refused where it would not be; `limited-memory`: the approximation.
    #[serde(default)]
    pub hessian: Option<HessianSpec>,
    /// Further IPOPT options by their names (IPOPT refuses the unknown ones).
    #[serde(default)]
    pub ipopt: BTreeMap<String, OptionSpec>,
}

/// The Hessian of the Lagrangian, as written.
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub enum HessianSpec {
    /// Exact where the system allows it.
    #[default]
    Exact,
    /// IPOPT's L-BFGS approximation.
    LimitedMemory,
}

/// An IPOPT option's value as written: an integer, a number or a string.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(untagged)]
pub enum OptionSpec {
    /// An integer option.
    Int(i64),
    /// A numeric option.
    Num(f64),
    /// A string option.
    Str(String),
}

impl Default for SolverSpec {
    fn default() -> Self {
        Self {
            tolerance: tol(),
            max_iterations: max_iter(),
            hessian_history: history(),
            hessian: None,
            ipopt: BTreeMap::new(),
        }
    }
}

fn one() -> f64 {
    1.0
}
fn tol() -> f64 {
    1e-8
}
fn max_iter() -> i32 {
    3000
}
fn history() -> i32 {
    6
}

/// A problem file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProblemSpec {
    /// The model file, relative to the problem file.
    pub model: String,
    /// Duration (s): fixed, or the guess of a free one.
    pub duration: f64,
    /// `[lower, upper]` (s): the duration free within these bounds.
    pub duration_bounds: Option<[f64; 2]>,
    /// Mesh intervals.
    pub intervals: usize,
    /// The scheme.
    #[serde(default)]
    pub scheme: SchemeSpec,
    /// The initial guess.
    #[serde(default)]
    pub guess: GuessField,
    /// How IPOPT scales the problem (unset: by whether the model has muscles).
    pub scaling: Option<ScalingSpec>,
    /// Ideal actuators by name.
    #[serde(default)]
    pub actuators: BTreeMap<String, ActuatorSpec>,
    /// The objective.
    #[serde(default)]
    pub objective: ObjectiveSpec,
    /// States fixed at the start (the others start at the model's rest state).
    #[serde(default)]
    pub initial: BTreeMap<String, f64>,
    /// The muscles' states at the start: `false` (default) fixed at the rest state, `true` free
    /// (within their bounds), so that the start can hold the posture.
    #[serde(default)]
    pub free_initial_muscles: bool,
    /// `true`: the rates of the velocities and the muscles' states are 0 at the start (`v̇ = 0`,
    /// `ṡ = 0`, `ȧ = 0`): an equilibrium the muscles hold, activations equal to excitations.
    #[serde(default)]
    pub initial_equilibrium: bool,
    /// `true`: the same rates are 0 at the end: the final posture held.
    #[serde(default)]
    pub final_equilibrium: bool,
    /// States fixed at the end.
    #[serde(default, rename = "final")]
    pub final_state: BTreeMap<String, f64>,
    /// Bound each input at the free range its law gives it (`limits.range`, a
    /// `coordinate_limit`'s lower and upper limits; both: their intersection); `bounds` overrides.
    #[serde(default)]
    pub joint_ranges: bool,
    /// Bounds of states over the whole motion.
    #[serde(default)]
    pub bounds: BTreeMap<String, [f64; 2]>,
    /// Bounds of the muscles' excitations (default `[0, 1]`).
    pub excitation_bounds: Option<[f64; 2]>,
    /// IPOPT's settings.
    #[serde(default)]
    pub solver: SolverSpec,
    /// Path constraints (`[constraints.cone]`: the model's joint cone; `[constraints.direction]`:
    /// directions between model points within bands about planes; `[constraints.modes]`: free
    /// modes within bounds).
    #[serde(default)]
    pub constraints: crate::optimize_cone::ConstraintsSpec,
}

/// Why `mollier optimize` failed.
#[derive(Debug, thiserror::Error)]
pub enum OptimizeError {
    /// The problem or model file.
    #[error(transparent)]
    File(#[from] Diagnostics),
    /// Setting up or solving.
    #[error(transparent)]
    Solve(#[from] mollier_ocp::OcpError),
    /// The output directory could not be opened (before the solve).
    #[error("{0}")]
    Open(OutputError),
    /// Writing the output.
    #[error(transparent)]
    Output(#[from] OutputError),
}

/// What [`run`] wrote.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The output directory.
    pub dir: PathBuf,
    /// `summary.json`'s fields (status, objective, iterations, residuals).
    pub summary: Value,
    /// Whether IPOPT converged (else the tables hold its last iterate).
    pub converged: bool,
    /// Wall time of set-up and solve (s).
    pub seconds: f64,
}

/// `mollier optimize`'s pipeline, shared by the command and Python's `mollier.optimize`: read the
/// problem file, open the output (`open`, once the file is read and before the solve), solve
/// and write the tables as a unit. A solve IPOPT did not converge is written as well.
pub fn run(
    problem: &Path,
    registry: &Registry,
    open: impl FnOnce() -> Result<OutputDir, OutputError>,
) -> Result<Outcome, OptimizeError> {
    let run = OptimizeRun::read(problem, registry)?;
    let dir = open().map_err(OptimizeError::Open)?;
    let solved = run.solve()?;
    let dir = solved.write(dir)?;
    Ok(Outcome { dir, summary: solved.summary(), converged: solved.solved.ipopt.converged(), seconds: solved.seconds })
}

/// A problem file read, its model compiled.
pub struct OptimizeRun {
    /// The problem file.
    pub file: PathBuf,
    /// Its contents.
    pub spec: ProblemSpec,
    /// The model.
    pub compiled: Compiled,
    /// The trajectory of `guess = { file }`, read.
    pub guess: Option<mollier_ocp::Trajectory>,
    /// The iterate and multipliers of `guess = { file, warm_start = true }`, read.
    pub warm: Option<crate::optimize_guess::WarmStart>,
    /// The marker file of `[objective.markers]`, read.
    pub markers: Option<crate::trc::MarkerTrial>,
}

/// The names of the state vector's entries, as `states.csv` names its columns.
pub fn state_names(compiled: &Compiled) -> Vec<String> {
    let mut names: Vec<String> = compiled.inputs.iter().map(|i| i.name.clone()).collect();
    names.extend(compiled.inputs.iter().map(|i| format!("{}.vel", i.name)));
    names.extend(compiled.muscles.iter().map(|m| format!("{}.contraction", m.name)));
    names.extend(compiled.muscles.iter().map(|m| format!("{}.activation", m.name)));
    names
}

/// The free range (SI: rad or m) the law of an input's mode gives it: its `limits.range` and its
/// `coordinate_limit`'s `[lower_limit, upper_limit]`, intersected when both are given; `None` for
/// an input that is not a mode or whose law has neither.
pub fn joint_range(compiled: &Compiled, input: usize) -> Option<[f64; 2]> {
    let info = compiled.inputs.get(input)?;
    let (element, mode) = info.name.rsplit_once('.')?;
    let spec = compiled.document.spec();
    let law = spec.elements.get(element)?.law.as_ref()?.get(mode)?;
    let si = |v: f64| match info.quantity {
        mollier_core::element::Quantity::Angle => v * spec.units.angle_factor(),
        mollier_core::element::Quantity::Length => spec.units.length_to_si(v),
        mollier_core::element::Quantity::Dimensionless => v,
    };
    let ranges =
        law.limits.map(|l| l.range).into_iter().chain(law.coordinate_limit.map(|c| [c.lower_limit, c.upper_limit]));
    ranges.map(|[a, b]| [si(a), si(b)]).reduce(|r, s| [r[0].max(s[0]), r[1].min(s[1])])
}

impl OptimizeRun {
    /// Read a problem file and compile its model.
    pub fn read(path: &Path, registry: &Registry) -> Result<Self, Diagnostics> {
        let text = mollier_format::read_text(path, "problem file")?;
        let file = path.display().to_string();
        let spec: ProblemSpec = toml::from_str(&text).map_err(|e| {
            Diagnostics::one(
                Diagnostic::new(&file, "", e.message().trim_end())
                    .with_hint(HINT)
                    .at_span(&text, e.span().unwrap_or(0..0)),
            )
        })?;
        let model = path.parent().unwrap_or(Path::new("")).join(&spec.model);
        let compiled = load(&model, registry)?;
        let (guess, warm) = match &spec.guess {
            GuessField::File(g) => {
                let f = path.parent().unwrap_or(Path::new("")).join(&g.file);
                let warm = g.warm_start.then(|| crate::optimize_guess::read_warm_start(&f)).transpose()?;
                (Some(crate::optimize_guess::read_guess(&f, &compiled)?), warm)
            }
            GuessField::Named(_) => (None, None),
        };
        let markers =
            spec.objective.markers.as_ref().map(|m| crate::optimize_markers::read_markers(path, m)).transpose()?;
        let run = Self { file: path.to_path_buf(), spec, compiled, guess, warm, markers };
        let problems = run.problems();
        if !problems.is_empty() {
            let spans = Spans::toml(&text);
            return Err(Diagnostics(
                problems
                    .into_iter()
                    .map(|(p, m)| {
                        let span = spans.value(&p).unwrap_or(0..0);
                        Diagnostic::new(&file, p, m).with_hint(HINT).at_span(&text, span)
                    })
                    .collect(),
            ));
        }
        Ok(run)
    }

    /// Every problem of the file against its model: (field path, message).
    fn problems(&self) -> Vec<(String, String)> {
        let s = &self.spec;
        let names = state_names(&self.compiled);
        let mut out = Vec::new();
        let finite_pos = |v: f64| v.is_finite() && v > 0.0;
        if !finite_pos(s.duration) {
            out.push(("duration".into(), format!("the duration must be positive and finite, not {}", s.duration)));
        }
        if let Some([lo, hi]) = s.duration_bounds {
            if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
                out.push(("duration_bounds".into(), "give [lower, upper] with 0 < lower ≤ upper, finite".into()));
            } else if !(lo..=hi).contains(&s.duration) {
                out.push(("duration".into(), format!("the guess {} s is outside duration_bounds", s.duration)));
            }
            if !s.objective.tracking.is_empty() || s.objective.markers.is_some() {
                out.push(("duration_bounds".into(), "tracking needs a fixed duration (its references' times)".into()));
            }
        } else if s.objective.time != 0.0 {
            out.push((
                "objective.time".into(),
                "a weight on the duration needs duration_bounds (a free duration)".into(),
            ));
        }
        if s.intervals == 0 || s.intervals > 100_000 {
            out.push(("intervals".into(), format!("{} intervals: give 1 to 100000", s.intervals)));
        }
        if !(s.solver.tolerance > 0.0) || s.solver.max_iterations < 0 || s.solver.hessian_history < 1 {
            out.push((
                "solver".into(),
                "the tolerance and the Hessian's history must be positive, the iteration limit not negative".into(),
            ));
        }
        let system = Musculoskeletal::new(&self.compiled.model, self.compiled.muscles.clone());
        if let Some(why) = mollier_ocp::unsupported_muscles(&system) {
            out.push(("model".into(), why));
        }
        if s.solver.hessian == Some(HessianSpec::Exact) {
            if let Err(why) = mollier_ocp::exact_hessian(&system) {
                out.push((
                    "solver.hessian".into(),
                    format!("the exact Hessian is not available for this model ({why}): write `limited-memory`, or leave the field out to let IPOPT approximate it where it is not"),
                ));
            }
        }
        let exact = s.solver.hessian == Some(HessianSpec::Exact);
        out.extend(crate::optimize_cone::problems(s.constraints.cone.as_ref(), exact, &self.compiled));
        out.extend(crate::optimize_cone::direction_problems(&s.constraints.direction, &self.compiled));
        out.extend(crate::optimize_cone::mode_problems(&s.constraints.modes, &self.compiled));
        let state = |table: &str, name: &str, out: &mut Vec<(String, String)>| {
            if !names.iter().any(|n| n == name) {
                out.push((
                    format!("{table}.{name}"),
                    format!("`{name}` is not a state of the model (its states: {})", names.join(", ")),
                ));
            }
        };
        let bounds_ok = |b: &[f64; 2]| !b[0].is_nan() && !b[1].is_nan() && b[0] <= b[1];
        for (table, map) in [("initial", &s.initial), ("final", &s.final_state)] {
            for (k, v) in map {
                state(table, k, &mut out);
                if !v.is_finite() {
                    out.push((format!("{table}.{k}"), "a fixed value must be finite".into()));
                }
            }
        }
        for (k, b) in &s.bounds {
            state("bounds", k, &mut out);
            if !bounds_ok(b) {
                out.push((format!("bounds.{k}"), "bounds are [lower, upper] with lower ≤ upper".into()));
            }
        }
        for (k, t) in &s.objective.tracking {
            state("objective.tracking", k, &mut out);
            let increasing = t.reference.windows(2).all(|w| w[1][0] > w[0][0]);
            if t.reference.is_empty() || !increasing || t.reference.iter().flatten().any(|v| !v.is_finite()) {
                out.push((
                    format!("objective.tracking.{k}.reference"),
                    "the reference is [[t, value], ...] with finite numbers and increasing times".into(),
                ));
            }
        }
        match (&s.objective.markers, &self.markers) {
            (Some(m), Some(trial)) => out.extend(crate::optimize_markers::marker_problems(m, &self.compiled, trial)),
            (Some(_), None) => out.push(("objective.markers.file".into(), "the marker file was not read".into())),
            _ => {}
        }
        for (k, t) in &s.objective.final_targets {
            state("objective.final_targets", k, &mut out);
            if !t.value.is_finite() || !t.weight.is_finite() {
                out.push((format!("objective.final_targets.{k}"), "value and weight must be finite".into()));
            }
        }
        let o = &s.objective;
        for (k, w) in &o.excitation_weights {
            if !self.compiled.muscles.iter().any(|m| &m.name == k) {
                out.push((format!("objective.excitation_weights.{k}"), format!("`{k}` is not a muscle of the model")));
            } else if !(*w >= 0.0) || !w.is_finite() {
                out.push((
                    format!("objective.excitation_weights.{k}"),
                    format!("a weight is finite and not negative, not {w}"),
                ));
            }
        }
        let weights = [
            ("excitation", o.excitation),
            ("activation_cubed", o.activation_cubed),
            ("actuator", o.actuator),
            ("contraction_rate", o.contraction_rate),
            ("acceleration", o.acceleration),
            ("time", o.time),
        ];
        for (k, w) in weights {
            if !(w >= 0.0) || !w.is_finite() {
                out.push((format!("objective.{k}"), format!("a weight is finite and not negative, not {w}")));
            }
        }
        for (k, a) in &s.actuators {
            if !self.compiled.inputs.iter().any(|i| i.name == a.coordinate) {
                let inputs: Vec<&str> = self.compiled.inputs.iter().map(|i| i.name.as_str()).collect();
                out.push((
                    format!("actuators.{k}.coordinate"),
                    format!("`{}` is not an input of the model (its inputs: {})", a.coordinate, inputs.join(", ")),
                ));
            }
            if !a.optimal_force.is_finite() || a.optimal_force == 0.0 {
                out.push((format!("actuators.{k}.optimal_force"), "the optimal force is finite and not 0".into()));
            }
            if a.bounds.is_some_and(|b| !bounds_ok(&b)) {
                out.push((format!("actuators.{k}.bounds"), "bounds are [lower, upper] with lower ≤ upper".into()));
            }
        }
        for (k, v) in &s.solver.ipopt {
            if matches!(v, OptionSpec::Int(i) if i32::try_from(*i).is_err()) {
                out.push((format!("solver.ipopt.{k}"), "an integer option is within 32 bits".into()));
            }
        }
        if s.excitation_bounds.is_some_and(|b| !bounds_ok(&b)) {
            out.push(("excitation_bounds".into(), "bounds are [lower, upper] with lower ≤ upper".into()));
        }
        out
    }

    /// The bounds of every state (`state_names`' order) over the motion: activations within
    /// [0, 1], contraction states ≥ 0, the inputs at their joint ranges when `joint_ranges` is
    /// set, then `[bounds]`; ±2e19 (IPOPT's infinity) where free.
    pub fn state_bounds(&self) -> Vec<[f64; 2]> {
        let c = &self.compiled;
        let names = state_names(c);
        let (n, m) = (c.inputs.len(), c.muscles.len());
        let mut b = vec![[-2e19, 2e19]; names.len()];
        for k in 0..m {
            b[2 * n + k] = [0.0, 2e19];
            b[2 * n + m + k] = [0.0, 1.0];
        }
        if self.spec.joint_ranges {
            for (i, bi) in b.iter_mut().enumerate().take(n) {
                if let Some(r) = joint_range(c, i) {
                    *bi = r;
                }
            }
        }
        for (k, v) in &self.spec.bounds {
            if let Some(i) = names.iter().position(|n| n == k) {
                b[i] = *v;
            }
        }
        b
    }

    /// IPOPT's options: the `[solver]` fields, a warm start's settings, then `[solver.ipopt]`.
    fn ipopt_options(&self) -> Vec<(&str, IpoptValue)> {
        let s = &self.spec;
        let mut options = vec![
            ("tol", IpoptValue::Num(s.solver.tolerance)),
            ("max_iter", IpoptValue::Int(s.solver.max_iterations)),
            ("limited_memory_max_history", IpoptValue::Int(s.solver.hessian_history)),
        ];
        if let Some(w) = &self.warm {
            // the iterate as it was: pushed off the bounds by 1e-20 only (IPOPT wants more than
            // 0; at 1e-9 the bounds' multipliers raised to it moved the elbow's start from its
            // last dual infeasibility 8.1e-11 to 8.8e-10), the barrier where it stopped (the
            // problem file's options come after and may change these)
            options.push(("warm_start_bound_push", IpoptValue::Num(1e-20)));
            options.push(("warm_start_mult_bound_push", IpoptValue::Num(1e-20)));
            options.push(("warm_start_slack_bound_push", IpoptValue::Num(1e-20)));
            if let Some(mu) = w.mu {
                options.push(("mu_init", IpoptValue::Num(mu)));
            }
        }
        options.extend(s.solver.ipopt.iter().map(|(k, v)| {
            let v = match v {
                // within i32: checked by `problems`
                OptionSpec::Int(i) => IpoptValue::Int(*i as i32),
                OptionSpec::Num(x) => IpoptValue::Num(*x),
                OptionSpec::Str(t) => IpoptValue::Str(t.clone()),
            };
            (k.as_str(), v)
        }));
        options
    }

    /// Set up and solve.
    pub fn solve(&self) -> Result<Optimized<'_>, OptimizeError> {
        let start = Instant::now();
        // a run built by hand skips `read`'s checks, which the lookups below rely on
        let problems = self.problems();
        if !problems.is_empty() {
            let file = self.file.display().to_string();
            let diagnostics = problems.into_iter().map(|(p, m)| Diagnostic::new(&file, p, m).with_hint(HINT));
            return Err(Diagnostics(diagnostics.collect()).into());
        }
        let s = &self.spec;
        let c = &self.compiled;
        let names = state_names(c);
        let index = |name: &str| names.iter().position(|n| n == name).expect("checked by `problems`");
        let system = Musculoskeletal::new(&c.model, c.muscles.clone());
        let excitation_bounds = s.excitation_bounds.unwrap_or([0.0, 1.0]);
        // the rest state: the model's initial configuration, at rest, muscles in isometric
        // equilibrium at the lowest excitation
        let mut ws = system.workspace();
        let u0 = vec![excitation_bounds[0].max(0.0); c.muscles.len()];
        let rest = system.rest_state(&mut ws, &c.model.q0(), 0.0, &u0).map_err(mollier_ocp::OcpError::from)?;
        let nx = names.len();
        let layout = system.layout();
        let state_bounds = self.state_bounds();
        let mut initial: Vec<Option<f64>> = rest.x.iter().map(|&v| Some(v)).collect();
        if s.free_initial_muscles {
            initial[layout.s()..].fill(None);
        }
        for (k, v) in &s.initial {
            initial[index(k)] = Some(*v);
        }
        let mut final_state = vec![None; nx];
        for (k, v) in &s.final_state {
            final_state[index(k)] = Some(*v);
        }
        let actuators = s
            .actuators
            .iter()
            .map(|(name, a)| Actuator {
                name: name.clone(),
                coordinate: c.inputs.iter().position(|i| i.name == a.coordinate).expect("checked"),
                optimal_force: a.optimal_force,
                bounds: a.bounds.unwrap_or([-2e19, 2e19]),
            })
            .collect();
        let o = &s.objective;
        let objective = Objective {
            excitation: o.excitation,
            excitation_weights: if o.excitation_weights.is_empty() {
                Vec::new()
            } else {
                c.muscles.iter().map(|m| o.excitation_weights.get(&m.name).copied().unwrap_or(1.0)).collect()
            },
            activation_cubed: o.activation_cubed,
            actuator: o.actuator,
            contraction_rate: o.contraction_rate,
            acceleration: o.acceleration,
            tracking: o
                .tracking
                .iter()
                .map(|(k, t)| Tracking {
                    state: index(k),
                    weight: t.weight,
                    reference: t.reference.iter().map(|p| (p[0], p[1])).collect(),
                })
                .collect(),
            final_targets: o.final_targets.iter().map(|(k, t)| (index(k), t.value, t.weight)).collect(),
            time: o.time,
            markers: match (&o.markers, &self.markers) {
                (Some(m), Some(trial)) => crate::optimize_markers::marker_terms(m, c, trial),
                _ => Vec::new(),
            },
        };
        let problem = Problem {
            system: &system,
            actuators,
            duration: s.duration,
            duration_bounds: s.duration_bounds,
            intervals: s.intervals,
            scheme: match s.scheme {
                SchemeSpec::Trapezoidal => Scheme::Trapezoidal,
                SchemeSpec::HermiteSimpson => Scheme::HermiteSimpson,
            },
            objective,
            state_bounds,
            initial,
            initial_equilibrium: s.initial_equilibrium,
            final_equilibrium: s.final_equilibrium,
            final_state,
            excitation_bounds,
            hessian: match s.solver.hessian {
                None | Some(HessianSpec::Exact) => HessianChoice::Exact,
                Some(HessianSpec::LimitedMemory) => HessianChoice::LimitedMemory,
            },
            cone: crate::optimize_cone::constraint(s.constraints.cone.as_ref(), c),
            directions: crate::optimize_cone::directions(&s.constraints.direction, c),
            modes: crate::optimize_cone::modes(&s.constraints.modes, c),
        };
        let options = self.ipopt_options();
        let guess = match (&s.guess, &self.guess, &self.warm) {
            (_, _, Some(w)) => Guess::Variables(w.variables.clone()),
            (_, Some(tr), None) => Guess::Trajectory(tr.clone()),
            (GuessField::Named(GuessSpec::Rest), None, None) => Guess::Rest,
            (GuessField::Named(GuessSpec::Reference), None, None) => Guess::Reference,
            _ => Guess::Linear,
        };
        let scaling = match s.scaling {
            Some(ScalingSpec::Physical) => ScalingChoice::Physical,
            Some(ScalingSpec::Ipopt) => ScalingChoice::Ipopt,
            None => ScalingChoice::by_muscles(c.muscles.len()),
        };
        let warm = self.warm.as_ref().map(|w| w.start.clone());
        let solved = problem.solve_warm(guess, warm.as_ref(), &rest.x, &options, scaling)?;
        // the muscles at each point, for muscles.csv
        let mut muscles = Vec::with_capacity(solved.points.len());
        for p in &solved.points {
            // a last iterate the kernel cannot evaluate (IPOPT stopped there): its rows are empty
            let Ok(lin) = system.linearize(&mut ws, &p.x, &p.xd, &p.excitations) else {
                muscles.push(vec![[f64::NAN; 6]; layout.m]);
                continue;
            };
            muscles.push(
                system
                    .muscles
                    .iter()
                    .enumerate()
                    .map(|(k, mu)| {
                        let (fibre_length, cos, _, _) = mu.hill.fibre(p.x[layout.s() + k]);
                        [
                            p.excitations[k],
                            p.x[layout.a() + k],
                            lin.contraction[k].force,
                            fibre_length,
                            p.xd[layout.s() + k] * cos,
                            lin.length[k],
                        ]
                    })
                    .collect(),
            );
        }
        let actuator_names = problem.actuators.iter().map(|a| (a.name.clone(), a.optimal_force)).collect();
        Ok(Optimized { run: self, solved, muscles, actuators: actuator_names, seconds: start.elapsed().as_secs_f64() })
    }
}

/// A solved problem and what its tables need.
pub struct Optimized<'a> {
    /// The run.
    pub run: &'a OptimizeRun,
    /// The solution.
    pub solved: Solved,
    /// Per point, per muscle: excitation, activation, force (N), fibre length (m), fibre
    /// velocity (m/s), path length (m) (the columns of `simulate`'s `muscles.csv`).
    pub muscles: Vec<Vec<[f64; 6]>>,
    /// Actuators: name and optimal force.
    pub actuators: Vec<(String, f64)>,
    /// Wall time of set-up and solve (s).
    pub seconds: f64,
}

fn col(name: String, unit: &'static str, meaning: impl Into<String>) -> Column {
    Column { name, unit, meaning: meaning.into() }
}

/// IPOPT's iteration table's columns (its own names; `regularization` is its `lg(rg)` unlogged).
const CONVERGENCE: [&str; 10] =
    ["iter", "objective", "inf_pr", "inf_du", "lg_mu", "d_norm", "regularization", "alpha_du", "alpha_pr", "ls"];

impl Optimized<'_> {
    /// The tables: `states.csv`, `muscles.csv` (with muscles), `controls.csv` (with actuators).
    pub fn tables(&self) -> Vec<Table> {
        let c = &self.run.compiled;
        let n = c.inputs.len();
        let mut states = Vec::new();
        for (k, name) in state_names(c).into_iter().enumerate() {
            let length = k < 2 * n && c.inputs[k % n.max(1)].quantity == mollier_core::element::Quantity::Length;
            let (unit, meaning) = match (k < n, k < 2 * n, length) {
                (true, _, true) => ("m", "coordinate"),
                (true, _, false) => ("rad", "coordinate"),
                (false, true, true) => ("m/s", "coordinate's rate"),
                (false, true, false) => ("rad/s", "coordinate's rate"),
                _ if k < 2 * n + c.muscles.len() => ("m", "contraction state s = fibre length × cos(pennation)"),
                _ => ("1", "active state"),
            };
            states.push(col(name, unit, meaning));
        }
        let rates = states
            .iter()
            .map(|c| {
                let unit = match c.unit {
                    "m" => "m/s",
                    "rad" => "rad/s",
                    "m/s" => "m/s²",
                    "rad/s" => "rad/s²",
                    _ => "1/s",
                };
                col(format!("{}.rate", c.name), unit, format!("rate of the {}", c.meaning))
            })
            .collect();
        let mut t = vec![
            Table { file: "states.csv".into(), columns: states },
            Table { file: "rates.csv".into(), columns: rates },
        ];
        if !c.muscles.is_empty() {
            let m = muscle_columns(&c.muscles, "neural excitation (optimized)");
            t.push(Table { file: "muscles.csv".into(), columns: m });
        }
        if !self.actuators.is_empty() {
            let mut a = Vec::new();
            for (name, _) in &self.actuators {
                a.push(col(format!("{name}.control"), "1", "actuator control"));
                a.push(col(format!("{name}.force"), "", "generalized force: control × optimal force (N or N m)"));
            }
            t.push(Table { file: "controls.csv".into(), columns: a });
        }
        if !self.solved.cone.is_empty() {
            t.push(Table { file: "stability.csv".into(), columns: crate::optimize_cone::columns() });
        }
        t
    }

    /// Point `i`'s row of `stability.csv` after `time` (with a cone constraint).
    fn stability_row(&self, i: usize) -> Vec<f64> {
        let c = &self.run.compiled;
        let cone = crate::optimize_cone::constraint(self.run.spec.constraints.cone.as_ref(), c);
        let model = c.load_sharing.as_ref().and_then(|l| l.cone.as_ref()).map(|k| k.half_angles);
        match (cone, model) {
            (Some(cone), Some(model)) => crate::optimize_cone::row(&self.solved.cone[i], model, &cone),
            _ => vec![f64::NAN; 7],
        }
    }

    /// The summary's fields.
    pub fn summary(&self) -> Value {
        let s = &self.run.spec;
        let ip = &self.solved.ipopt;
        json!({
            "command": "optimize",
            "problem": self.run.file.display().to_string(),
            "model": s.model,
            "scheme": match s.scheme { SchemeSpec::Trapezoidal => "trapezoidal", SchemeSpec::HermiteSimpson => "hermite-simpson" },
            "intervals": s.intervals,
            "points": self.solved.points.len(),
            "duration_s": self.solved.points.last().map_or(s.duration, |p| p.time),
            "status": ip.status_name(),
            "converged": ip.converged(),
            "objective": ip.objective,
            "iterations": ip.iterations.last().map_or(0, |i| i.iter),
            "max_dynamics_residual": self.solved.max_residual[0],
            "max_defect": self.solved.max_residual[1],
            "hessian": match &self.solved.hessian {
                Ok(Motion::Rotation) => "exact (one rotation about a fixed axis)".to_string(),
                Ok(Motion::Translation) => "exact (one translation)".to_string(),
                Ok(Motion::Chain) => "exact (fourth-order transfer functions)".to_string(),
                Err(why) => format!("limited-memory (IPOPT's L-BFGS): {why}"),
            },
        })
    }

    /// Write the tables into `dir` and commit it as a unit (`summary.json` last).
    pub fn write(&self, mut dir: OutputDir) -> Result<PathBuf, OutputError> {
        let tables = self.tables();
        for t in &tables {
            let id = dir.table(&t.file, None, t.header())?;
            for (i, p) in self.solved.points.iter().enumerate() {
                let row: Vec<f64> = match t.file.as_str() {
                    "states.csv" => std::iter::once(p.time).chain(p.x.iter().copied()).collect(),
                    "rates.csv" => std::iter::once(p.time).chain(p.xd.iter().copied()).collect(),
                    "muscles.csv" => std::iter::once(p.time).chain(self.muscles[i].iter().flatten().copied()).collect(),
                    "stability.csv" => std::iter::once(p.time).chain(self.stability_row(i)).collect(),
                    _ => std::iter::once(p.time)
                        .chain(p.controls.iter().zip(&self.actuators).flat_map(|(u, (_, f))| [*u, u * f]))
                        .collect(),
                };
                dir.numbers(id, row)?;
            }
        }
        let id = dir.table("convergence.csv", None, CONVERGENCE)?;
        for it in &self.solved.ipopt.iterations {
            dir.numbers(
                id,
                [
                    it.iter as f64,
                    it.objective,
                    it.inf_pr,
                    it.inf_du,
                    it.mu.log10(),
                    it.d_norm,
                    it.regularization,
                    it.alpha_du,
                    it.alpha_pr,
                    it.ls_trials as f64,
                ],
            )?;
        }
        // the NLP's last iterate (IPOPT's, not projected onto the bounds as the states are) and
        // multipliers, for a warm start (`guess = { file, warm_start }`)
        // and the factors of the scaling IPOPT was given (1 where it scaled on its own)
        let ip = &self.solved.ipopt;
        let sc = self.solved.scaling.as_ref();
        let factor = |v: Option<&Vec<f64>>, k: usize| v.map_or(1.0, |v| v[k]);
        let id =
            dir.table("variables.csv", None, ["index", "value", "lower_multiplier", "upper_multiplier", "scale"])?;
        for (k, x) in ip.iterate.iter().enumerate() {
            dir.numbers(id, [k as f64, *x, ip.z_l[k], ip.z_u[k], factor(sc.map(|s| &s.x), k)])?;
        }
        let id = dir.table("constraints.csv", None, ["index", "value", "multiplier", "scale"])?;
        for (k, g) in ip.g.iter().enumerate() {
            dir.numbers(id, [k as f64, *g, ip.lambda[k], factor(sc.map(|s| &s.g), k)])?;
        }
        // units.csv lists the tables by time; convergence.csv, variables.csv and constraints.csv
        // are by iteration or index (docs/optimal-control.md)
        dir.units(&tables)?;
        dir.commit(self.summary(), json!({ "optimize_s": self.seconds }))
    }
}
