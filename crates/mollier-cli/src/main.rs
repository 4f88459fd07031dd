//! `mollier`: check models, run kinematic and dynamic analyses, print the model-file schema.
//!
//! Exit codes: 0 success; 1 the analysis failed (the model is not well posed, or frames or
//! simulation steps could not be solved); 2 a file is unreadable or invalid (model, motion), the
//! results cannot be written, or the command line is wrong.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use mollier::{
    CheckReport, Column, Compiled, FrameError, InverseDynamicsRun, KinematicsRun, Motion, MotionDerivatives, NodeRole,
    Simulation, SimulationState, Smoothing,
};
use mollier_core::element::{NodeKind, Quantity};
use mollier_core::registry::{ParamDoc, ParamKind, Registry};
use mollier_core::{CoordRole, ModeRole};
use mollier_format::{Diagnostic, Diagnostics, human};
use serde_json::{Value, json};

mod study;

/// `println!` that does not panic when stdout is closed (piped into `head`, say).
macro_rules! outln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), $($t)*);
    }};
}

/// `print!` that does not panic when stdout is closed.
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout().lock(), $($t)*);
    }};
}

/// `eprintln!` that does not panic when stderr is closed.
macro_rules! errln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($t)*);
    }};
}

mod inverse;

/// Mollier: finite-element multibody kinematics and dynamics for musculoskeletal models.
#[derive(Parser, Debug)]
#[command(name = "mollier", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check a model: its nodes, elements, inputs, degrees of freedom and well-posedness.
    ///
    /// Exit code 0 when the model is well posed, 1 when it is not, 2 when the file is invalid.
    Check {
        /// The model file (.toml, or .json).
        model: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Solve the positions for a motion and write positions, deformations and transfer functions.
    ///
    /// Writes DIR/positions.csv, DIR/deformations.csv and DIR/transfer.csv, one row per solved
    /// frame. A frame that cannot be solved is reported with its time; see --on-error.
    Kinematics {
        /// The model file.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The directory for the results (created if needed; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        /// What to do when a frame cannot be solved: stop there (default), or skip it and go on.
        /// Either way the exit code is 1 and no row is written for a failed frame.
        #[arg(long, value_enum, default_value_t = OnError::Stop)]
        on_error: OnError,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Inverse dynamics of a motion: the driving forces of the inputs and the reactions.
    ///
    /// Differentiates the motion with a cubic spline per input (exact for motions cubic in time;
    /// see --smooth for measured data), then solves positions and kinetostatics frame by frame.
    /// Writes DIR/driving.csv (one column per input: N m for an angle, N for a length),
    /// DIR/reactions.csv (the stress of every rigid mode of the model's elements, then the support
    /// reactions at the fixed coordinates), DIR/passive.csv (the stresses the elements' laws give)
    /// and DIR/units.csv (unit and meaning of every column). SI units, global frame.
    InverseDynamics {
        /// The model file.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The directory for the results (created if needed; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        /// Smooth the motion before differentiating it: a cubic smoothing spline that halves a
        /// sine of this frequency (Hz), like a second-order Butterworth low-pass filter run forward
        /// and backward. The positions are smoothed too.
        #[arg(long, value_name = "HZ", value_parser = positive_number)]
        smooth: Option<f64>,
        /// What to do when a frame cannot be solved: stop there (default), or skip it and go on.
        /// Either way the exit code is 1 and no row is written for a failed frame.
        #[arg(long, value_enum, default_value_t = OnError::Stop)]
        on_error: OnError,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Load sharing: the driving forces of a motion shared among the model's muscles by a
    /// criterion, under its sign constraints and joint cone (the model's `[load_sharing]` section).
    ///
    /// Differentiates the motion like inverse-dynamics (or, with --static, takes every frame as a
    /// static posture), then solves every frame's convex program (frames in parallel; the results
    /// do not depend on the number of threads). Writes DIR/forces.csv (one column per muscle
    /// element, N), DIR/reactions.csv (the sign-constrained reactions, the joint force in the cone
    /// frame, the reserves), DIR/stability.csv (status, stability index, equilibrium residual,
    /// objective, ms per frame) and DIR/summary.json. A frame that cannot be solved (infeasible,
    /// say) is written as such, with empty cells, and the run goes on; the exit code is then 1.
    Inverse {
        /// The model file, with a `[load_sharing]` section.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The criterion: a = min Σ F², b = min Σ (F/PCSA)², c = min Σ (F/Fmax(l))²,
        /// d = min max F/PCSA.
        #[arg(long, value_parser = criterion)]
        criterion: mollier_optim::Criterion,
        /// The directory for the results (created if needed; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        /// Report the joint cone's stability index but do not impose the cone.
        #[arg(long)]
        no_cone: bool,
        /// Take every frame as a static posture: rates and accelerations zero (a quasi-static
        /// analysis; time only orders the frames).
        #[arg(long = "static", conflicts_with = "smooth")]
        quasi_static: bool,
        /// Smooth the motion before differentiating it (Hz), as for inverse-dynamics.
        #[arg(long, value_name = "HZ", value_parser = positive_number)]
        smooth: Option<f64>,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Forward dynamics of a passive mechanism (no driving forces) from rest in its initial
    /// configuration.
    ///
    /// Integrates with the fourth-order Runge-Kutta method, positions solved on the constraint
    /// manifold. Writes DIR/motion.csv (the inputs over time: a motion file for `kinematics` and
    /// `inverse-dynamics`), DIR/velocities.csv, DIR/energy.csv (kinetic plus potential energy and
    /// its drift from the start, J) and DIR/units.csv, and reports the energy drift.
    Simulate {
        /// The model file.
        model: PathBuf,
        /// How long to simulate (s), rounded up to a whole number of steps.
        #[arg(long, value_parser = positive_number)]
        duration: f64,
        /// The time step (s).
        #[arg(long, value_parser = positive_number)]
        dt: f64,
        /// The directory for the results (created if needed; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Run a study: a motion through a model and load sharing over it for several criteria,
    /// with and without a joint stability constraint (e.g. models/shoulder/abduction.toml).
    ///
    /// Writes DIR/summary.json, DIR/motion.csv (the inputs per frame: a motion file of the model),
    /// DIR/kinematics.csv, DIR/lengths.csv, DIR/moment_arms.csv, per variant
    /// `DIR/<criterion>-<glenoid|free>/{forces,reactions,stability}.csv` and `summary.json`, and
    /// SVG plots in DIR/plots. See docs/shoulder.md.
    Study {
        /// The study file (.toml).
        study: PathBuf,
        /// The directory for the results (created if needed; files in it are replaced).
        #[arg(long)]
        out: PathBuf,
        /// No summary on standard output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the JSON Schema of model files, for completion in editors.
    Schema,
    /// List the element types, their modes and parameters.
    Types {
        /// Print the Markdown reference (`docs/element-types.md`) instead.
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OnError {
    /// Stop at the first frame that fails; the results hold the frames before it.
    Stop,
    /// Leave out frames that fail and go on from the last solved frame.
    Skip,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let registry = mollier::registry();
    match cli.command {
        Command::Check { model, json } => check(&model, json, &registry),
        Command::Kinematics { model, motion, out, on_error, quiet } => {
            kinematics(&model, &motion, &out, on_error, quiet, &registry)
        }
        Command::InverseDynamics { model, motion, out, smooth, on_error, quiet } => {
            inverse_dynamics(&model, &motion, &out, smooth, on_error, quiet, &registry)
        }
        Command::Inverse { model, motion, criterion, out, no_cone, quasi_static, smooth, quiet } => {
            let options = inverse::Options { criterion, impose_cone: !no_cone, quasi_static, smooth, quiet };
            inverse::run(&model, &motion, &out, &options, &registry)
        }
        Command::Simulate { model, duration, dt, out, quiet } => simulate(&model, duration, dt, &out, quiet, &registry),
        Command::Study { study, out, quiet } => study::run(&study, &out, quiet),
        Command::Schema => {
            let s = serde_json::to_string_pretty(&mollier::schema(&registry)).unwrap_or_default();
            outln!("{s}");
            ExitCode::SUCCESS
        }
        Command::Types { markdown } => {
            if markdown {
                out!("{}", mollier::element_reference(&registry));
            } else {
                out!("{}", types(&registry));
            }
            ExitCode::SUCCESS
        }
    }
}

/// A positive, finite number (clap value parser).
fn positive_number(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        Ok(v) => Err(format!("must be a positive number, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

/// A load-sharing criterion (clap value parser): `a`, `b`, `c` or `d`.
fn criterion(s: &str) -> Result<mollier_optim::Criterion, String> {
    s.parse()
}

const INVALID: u8 = 2;
const FAILED: u8 = 1;

fn report(d: &Diagnostics) {
    errln!("{}", d.render());
}

fn check(path: &Path, json: bool, registry: &Registry) -> ExitCode {
    let compiled = match mollier::load(path, registry) {
        Ok(c) => c,
        Err(d) => {
            if json {
                let v = json!({
                    "model": path.display().to_string(),
                    "dof": null,
                    "inputs": [],
                    "nodes": [],
                    "elements": [],
                    "well_posed": false,
                    "diagnostics": [],
                    "errors": d.iter().map(error_json).collect::<Vec<_>>(),
                });
                outln!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
            } else {
                report(&d);
            }
            return ExitCode::from(INVALID);
        }
    };
    let report_ = mollier::check(&compiled, registry);
    if json {
        outln!("{}", serde_json::to_string_pretty(&check_json(path, &compiled, &report_)).unwrap_or_default());
    } else {
        out!("{}", check_text(path, &compiled, &report_));
        if !report_.problems.is_empty() {
            report(&Diagnostics(report_.problems.clone()));
        }
    }
    ExitCode::from(report_.exit_code())
}

fn error_json(d: &Diagnostic) -> Value {
    json!({
        "file": d.file,
        "line": d.location.map(|l| l.line),
        "column": d.location.map(|l| l.column),
        "path": d.path,
        "message": d.message,
        "hint": d.hint,
    })
}

/// Names of a node's coordinates that have `role`.
fn coords_with(c: &Compiled, node: usize, role: CoordRole) -> Vec<&'static str> {
    let info = &c.model.nodes()[node];
    let id = mollier_core::NodeId::new(node);
    (0..info.kind.dim())
        .filter(|&a| c.model.coord_role(c.model.coord_id(id, a)) == role)
        .map(|a| info.kind.axis_names()[a])
        .collect()
}

/// Other names of node `i` (body origins and points that share it).
fn aliases(c: &Compiled, i: usize) -> Vec<&str> {
    let own = &c.model.nodes()[i].name;
    c.points.iter().filter(|p| p.node.index() == i && p.name != *own).map(|p| p.name.as_str()).collect()
}

fn role_text(role: &NodeRole) -> String {
    match role {
        NodeRole::Node => "node".into(),
        NodeRole::Origin { body } => format!("origin of body {body}"),
        NodeRole::Orientation { body } => format!("orientation of body {body}"),
        NodeRole::Point { body, point } => format!("point {point} of body {body}"),
        NodeRole::CentreOfMass { body } => format!("centre of mass of body {body}"),
    }
}

fn mode_role_text(role: ModeRole) -> &'static str {
    match role {
        ModeRole::Fixed(_) => "rigid",
        ModeRole::Input => "input",
        ModeRole::Dependent => "free",
    }
}

fn check_json(path: &Path, c: &Compiled, r: &CheckReport) -> Value {
    let m = &c.model;
    let nodes: Vec<Value> = m
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({
                "name": n.name,
                "kind": n.kind.to_string(),
                "role": role_text(&c.nodes[i]),
                "aliases": aliases(c, i),
                "fixed": coords_with(c, i, CoordRole::Fixed),
                "inputs": coords_with(c, i, CoordRole::Input),
            })
        })
        .collect();
    let elements: Vec<Value> = c
        .elements
        .iter()
        .map(|e| {
            let n = m.element(e.id).layout().n_modes();
            let modes: Vec<Value> = (0..n)
                .map(|k| {
                    let id = m.mode_id(e.id, k);
                    json!({ "name": m.mode_info(id).name, "role": mode_role_text(m.mode_role(id)) })
                })
                .collect();
            json!({ "name": e.name, "type": e.kind, "modes": modes })
        })
        .collect();
    let mut diagnostics = r.diagnostics.clone();
    diagnostics.extend(r.problems.iter().map(|d| d.headline()));
    json!({
        "model": path.display().to_string(),
        "name": c.document.spec().name,
        "dof": r.dof,
        "inputs": c.inputs.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        "nodes": nodes,
        "elements": elements,
        "generated_elements": m.n_elements() - c.elements.len(),
        "equations": r.analysis.equations,
        "unknowns": r.analysis.unknowns,
        "rank": r.analysis.rank,
        "redundant": r.redundant,
        "dynamics": dynamics_json(c),
        "load_sharing": load_sharing_json(c),
        "well_posed": r.is_well_posed(),
        "diagnostics": diagnostics,
        "errors": r.problems.iter().map(error_json).collect::<Vec<_>>(),
    })
}

/// What a model has for dynamics, in the file's names.
struct DynamicsSummary<'a> {
    /// Bodies with a mass.
    bodies: Vec<&'a str>,
    /// Their total mass (kg).
    mass: f64,
    gravity: Option<[f64; 3]>,
    loads: Vec<&'a str>,
    /// Elements with a law.
    laws: Vec<&'a str>,
}

fn dynamics_summary(c: &Compiled) -> DynamicsSummary<'_> {
    let spec = c.document.spec();
    DynamicsSummary {
        bodies: c.bodies.iter().filter(|b| b.mass.is_some()).map(|b| b.name.as_str()).collect(),
        mass: c.bodies.iter().filter_map(|b| b.mass).sum(),
        gravity: spec.gravity,
        loads: spec.loads.iter().map(|(k, _)| k).collect(),
        laws: spec.elements.iter().filter(|(_, e)| e.law.is_some()).map(|(k, _)| k).collect(),
    }
}

fn dynamics_json(c: &Compiled) -> Value {
    let d = dynamics_summary(c);
    json!({ "mass": d.mass, "bodies_with_mass": d.bodies, "gravity": d.gravity, "loads": d.loads, "laws": d.laws })
}

fn load_sharing_json(c: &Compiled) -> Value {
    let Some(l) = &c.load_sharing else { return Value::Null };
    json!({
        "muscles": l.muscle_names(),
        "compression": l.signs.iter().filter(|s| s.constraint.sign == mollier_optim::Sign::Compression).map(|s| &s.name).collect::<Vec<_>>(),
        "tension": l.signs.iter().filter(|s| s.constraint.sign == mollier_optim::Sign::Tension).map(|s| &s.name).collect::<Vec<_>>(),
        "joint_cone": l.cone.as_ref().map(|k| json!({ "joint": k.joint, "half_angles_deg": k.half_angles.map(f64::to_degrees) })),
        "reserves": l.reserve_names(),
    })
}

/// `3 muscles (biceps, ...); compression: ...; joint cone at ...; reserves on ...`.
fn load_sharing_text(c: &Compiled) -> Option<String> {
    let l = c.load_sharing.as_ref()?;
    let names = l.muscle_names();
    let shown = if names.len() <= 6 { names.join(", ") } else { format!("{}, ...", names[..3].join(", ")) };
    let mut parts =
        vec![format!("{} muscle element{} ({shown})", names.len(), if names.len() == 1 { "" } else { "s" })];
    for (sign, what) in
        [(mollier_optim::Sign::Compression, "compression only"), (mollier_optim::Sign::Tension, "tension only")]
    {
        let v: Vec<&str> = l.signs.iter().filter(|s| s.constraint.sign == sign).map(|s| s.name.as_str()).collect();
        if !v.is_empty() {
            parts.push(format!("{what}: {}", v.join(", ")));
        }
    }
    if let Some(k) = &l.cone {
        let [a, b] = k.half_angles.map(f64::to_degrees);
        parts.push(format!("joint cone at {} ({} by {} deg)", k.joint, human(a), human(b)));
    }
    if !l.reserves.is_empty() {
        parts.push(format!("reserves on {}", l.reserve_names().join(", ")));
    }
    Some(parts.join("; "))
}

fn dynamics_text(c: &Compiled) -> Option<String> {
    let d = dynamics_summary(c);
    let mut parts = Vec::new();
    if !d.bodies.is_empty() {
        let s = if d.bodies.len() == 1 { "y" } else { "ies" };
        parts.push(format!("mass {} kg in {} bod{s} ({})", human(d.mass), d.bodies.len(), d.bodies.join(", ")));
    }
    if let Some(g) = d.gravity {
        parts.push(format!("gravity [{}] m/s²", g.map(number).join(", ")));
    }
    if !d.loads.is_empty() {
        parts.push(format!("loads {}", d.loads.join(", ")));
    }
    if !d.laws.is_empty() {
        parts.push(format!("laws on {}", d.laws.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

fn check_text(path: &Path, c: &Compiled, r: &CheckReport) -> String {
    let m = &c.model;
    let mut s = String::new();
    let title = c.document.spec().name.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
    s.push_str(&format!("{}{title}\n", path.display()));
    let width = m.nodes().iter().map(|n| n.name.len()).max().unwrap_or(0);
    s.push_str(&format!("nodes ({}):\n", m.nodes().len()));
    for (i, n) in m.nodes().iter().enumerate() {
        let mut roles = Vec::new();
        let fixed = coords_with(c, i, CoordRole::Fixed);
        if fixed.len() == n.kind.dim() {
            roles.push("fixed".to_string());
        } else if !fixed.is_empty() {
            roles.push(format!("fixed {}", fixed.join(", ")));
        }
        let inputs = coords_with(c, i, CoordRole::Input);
        if !inputs.is_empty() {
            roles.push(format!("input {}", inputs.join(", ")));
        }
        let kind = if n.kind == NodeKind::Position { "position   " } else { "orientation" };
        let roles = if roles.is_empty() { String::new() } else { format!(" [{}]", roles.join("; ")) };
        let also = aliases(c, i);
        let also = if also.is_empty() { String::new() } else { format!(" (also {})", also.join(", ")) };
        s.push_str(&format!("  {:width$}  {kind}  {}{also}{roles}\n", n.name, role_text(&c.nodes[i])));
    }
    let generated = m.n_elements() - c.elements.len();
    s.push_str(&format!("elements ({}, and {generated} generated):\n", c.elements.len()));
    let width = c.elements.iter().map(|e| e.name.len()).max().unwrap_or(0);
    let twidth = c.elements.iter().map(|e| e.kind.len()).max().unwrap_or(0);
    for e in &c.elements {
        let n = m.element(e.id).layout().n_modes();
        let modes: Vec<String> = (0..n)
            .map(|k| {
                let id = m.mode_id(e.id, k);
                let name = &m.mode_info(id).name;
                match m.mode_role(id) {
                    ModeRole::Fixed(_) => name.to_string(),
                    role => format!("{name} ({})", mode_role_text(role)),
                }
            })
            .collect();
        s.push_str(&format!("  {:width$}  {:twidth$}  {}\n", e.name, e.kind, modes.join(", ")));
    }
    let names: Vec<&str> = c.inputs.iter().map(|i| i.name.as_str()).collect();
    if names.is_empty() {
        s.push_str("inputs: none\n");
    } else {
        s.push_str(&format!("inputs ({}): {}\n", names.len(), names.join(", ")));
    }
    if let Some(d) = dynamics_text(c) {
        s.push_str(&format!("dynamics: {d}\n"));
    }
    if let Some(l) = load_sharing_text(c) {
        s.push_str(&format!("load sharing: {l}\n"));
    }
    s.push_str(&format!("degrees of freedom: {}\n", r.dof));
    let a = &r.analysis;
    if r.is_well_posed() {
        s.push_str(&format!("well posed: yes ({} equations in {} unknowns, full rank)\n", a.equations, a.unknowns));
    } else {
        s.push_str(&format!("well posed: no ({} equations in {} unknowns", a.equations, a.unknowns));
        if let Some(rank) = a.rank {
            s.push_str(&format!(", rank {rank}"));
        }
        s.push_str(")\n");
        for d in &r.diagnostics {
            s.push_str(&format!("  - {d}\n"));
        }
    }
    s
}

/// Shortest text that reads back to the same number; exponent notation far from 1.
fn number(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        // a sign on zero is noise in a table
        "0".to_string()
    } else if (1e-5..1e15).contains(&a) {
        v.to_string()
    } else {
        format!("{v:e}")
    }
}

fn fmt_row(time: f64, values: &[f64]) -> Vec<String> {
    std::iter::once(time).chain(values.iter().copied()).map(number).collect()
}

/// A CSV file that an analysis writes, one row per solved frame: its name in the output
/// directory and its columns after `time`, each with its unit and meaning (for `units.csv`).
struct Table {
    file: &'static str,
    columns: Vec<Column>,
}

impl Table {
    /// Columns without units (kinematics writes no `units.csv`).
    fn plain(file: &'static str, names: Vec<String>) -> Self {
        Self {
            file,
            columns: names.into_iter().map(|name| Column { name, unit: "", meaning: String::new() }).collect(),
        }
    }
}

/// One row of every table, at one time.
struct Row {
    time: f64,
    values: Vec<Vec<f64>>,
}

/// An analysis run frame by frame: kinematics, inverse dynamics, simulation.
trait FrameRun {
    /// The tables it writes.
    fn tables(&self) -> Vec<Table>;
    /// Number of frames.
    fn frames(&self) -> usize;
    /// The time at which frame `i` starts (for messages).
    fn time(&self, i: usize) -> f64;
    /// Number of rows frame `i` gives (one for a motion's frame, several for a chunk of
    /// simulation steps).
    fn rows_in(&self, _i: usize) -> usize {
        1
    }
    /// Solve frame `i`: the rows to write.
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError>;
}

/// What the frame loop calls its rows, how it names a failed frame, and whether a failed frame
/// may be skipped.
struct LoopKind {
    /// `frame`, or `step`.
    noun: &'static str,
    /// The failed frame starting at a time, for messages.
    failed: fn(f64) -> String,
    on_error: OnError,
}

fn frame_at(t: f64) -> String {
    format!("frame at time {t} s")
}

fn steps_from(t: f64) -> String {
    format!("the steps from time {t} s")
}

struct Outputs {
    writers: Vec<(PathBuf, csv::Writer<File>)>,
}

impl Outputs {
    fn create(dir: &Path, tables: &[Table]) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        let mut writers = Vec::with_capacity(tables.len());
        for t in tables {
            let p = dir.join(t.file);
            let mut w = csv::Writer::from_path(&p).map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
            w.write_record(std::iter::once("time").chain(t.columns.iter().map(|c| c.name.as_str())))
                .map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
            writers.push((p, w));
        }
        Ok(Self { writers })
    }

    fn write(&mut self, row: &Row) -> Result<(), String> {
        for ((_, w), v) in self.writers.iter_mut().zip(&row.values) {
            w.write_record(fmt_row(row.time, v)).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), String> {
        for (_, w) in &mut self.writers {
            w.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn paths(&self) -> String {
        self.writers.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// `DIR/units.csv`: the unit and meaning of every column the analysis writes.
fn write_units(dir: &Path, tables: &[Table]) -> Result<(), String> {
    let p = dir.join("units.csv");
    let fail = |e: csv::Error| format!("cannot write `{}`: {e}", p.display());
    let mut w = csv::Writer::from_path(&p).map_err(fail)?;
    w.write_record(["file", "column", "unit", "meaning"]).map_err(fail)?;
    for t in tables {
        w.write_record([t.file, "time", "s", "time"]).map_err(fail)?;
        for c in &t.columns {
            w.write_record([t.file, c.name.as_str(), c.unit, c.meaning.as_str()]).map_err(fail)?;
        }
    }
    w.flush().map_err(|e| format!("cannot write `{}`: {e}", p.display()))
}

/// Load a model and make sure it can be analysed: exit code 2 for an invalid file, 1 for a model
/// that is not well posed.
fn load_well_posed(model: &Path, registry: &Registry) -> Result<Compiled, ExitCode> {
    let compiled = match mollier::load(model, registry) {
        Ok(c) => c,
        Err(d) => {
            report(&d);
            return Err(ExitCode::from(INVALID));
        }
    };
    let verdict = mollier::check(&compiled, registry);
    if !verdict.problems.is_empty() {
        let code = verdict.exit_code();
        report(&Diagnostics(verdict.problems));
        return Err(ExitCode::from(code));
    }
    if !verdict.is_well_posed() {
        errln!("error: {} is not well posed; `mollier check` explains:", model.display());
        for d in &verdict.diagnostics {
            errln!("  - {d}");
        }
        return Err(ExitCode::from(FAILED));
    }
    Ok(compiled)
}

/// Read a motion for a model: exit code 2 when it is invalid.
/// A well-posed model and a motion for it; the exit code when either cannot be read.
fn load_with_motion(
    model: &Path,
    motion: &Path,
    quiet: bool,
    registry: &Registry,
) -> Result<(Compiled, Motion), ExitCode> {
    let compiled = load_well_posed(model, registry)?;
    let motion = load_motion(motion, &compiled, quiet)?;
    Ok((compiled, motion))
}

fn load_motion(path: &Path, compiled: &Compiled, quiet: bool) -> Result<Motion, ExitCode> {
    match mollier::read_motion(path, &compiled.inputs) {
        Ok(m) => {
            if !m.ignored.is_empty() && !quiet {
                errln!("note: {}: ignoring columns that are not inputs: {}", m.file, m.ignored.join(", "));
            }
            for n in m.notes.iter().filter(|_| !quiet) {
                errln!("note: {}: {n}", m.file);
            }
            // probable mistakes are shown even with -q: the results would be wrong
            for w in &m.warnings {
                errln!("warning: {}: {w}", m.file);
            }
            Ok(m)
        }
        Err(d) => {
            report(&d);
            Err(ExitCode::from(INVALID))
        }
    }
}

/// A progress bar on standard error for `total` items (hidden unless stderr is a terminal and
/// not `quiet`).
fn progress_bar(total: usize, template: &str, quiet: bool) -> ProgressBar {
    if !std::io::stderr().is_terminal() || quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template(template) {
        b.set_style(style);
    }
    b
}

/// The frame loop every analysis shares: output files, progress bar, the error policy, the
/// summary and the exit code (0 all frames solved, 1 some failed, 2 the results cannot be
/// written).
fn run_frames(run: &mut dyn FrameRun, out: &Path, kind: LoopKind, quiet: bool) -> ExitCode {
    let interactive = std::io::stderr().is_terminal() && !quiet;
    let tables = run.tables();
    let mut outputs = match Outputs::create(out, &tables) {
        Ok(o) => o,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(INVALID);
        }
    };
    let frames = run.frames();
    let total: usize = (0..frames).map(|i| run.rows_in(i)).sum();
    let template = format!("{{bar:40}} {{pos}}/{{len}} {}s  t = {{msg}} s  ({{eta}} left)", kind.noun);
    let bar = progress_bar(total, &template, quiet);
    let (mut failed, mut solved) = (0usize, 0usize);
    for i in 0..frames {
        let time = run.time(i);
        bar.set_message(time.to_string());
        match run.solve(i) {
            Ok(rows) => {
                for row in &rows {
                    if let Err(e) = outputs.write(row) {
                        bar.abandon();
                        errln!("error: cannot write the results in `{}`: {e}", out.display());
                        return ExitCode::from(INVALID);
                    }
                }
                solved += rows.len();
            }
            Err(e) => {
                failed += run.rows_in(i);
                bar.suspend(|| errln!("error: {}: {e}", (kind.failed)(time)));
                if kind.on_error == OnError::Stop {
                    break;
                }
            }
        }
        bar.inc(run.rows_in(i) as u64);
    }
    bar.finish_and_clear();
    if let Err(e) = outputs.flush() {
        errln!("error: cannot write the results in `{}`: {e}", out.display());
        return ExitCode::from(INVALID);
    }
    if failed > 0 {
        let what = match kind.on_error {
            OnError::Stop => format!("stopped: {solved} of {total} {}s solved", kind.noun),
            OnError::Skip => format!("{failed} of {total} {}s could not be solved and are left out", kind.noun),
        };
        errln!("error: {what}; results in {}", out.display());
        return ExitCode::from(FAILED);
    }
    if interactive {
        errln!("solved {total} {}s; wrote {}", kind.noun, outputs.paths());
    }
    ExitCode::SUCCESS
}

/// Kinematics over a motion's frames.
struct KinematicsFrames<'a> {
    run: KinematicsRun<'a>,
    motion: Motion,
}

impl FrameRun for KinematicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        vec![
            Table::plain("positions.csv", self.run.position_header()),
            Table::plain("deformations.csv", self.run.deformation_header()),
            Table::plain("transfer.csv", self.run.transfer_header()),
        ]
    }
    fn frames(&self) -> usize {
        self.motion.times.len()
    }
    fn time(&self, i: usize) -> f64 {
        self.motion.times[i]
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        let f = self.run.solve(&self.motion.q[i])?;
        Ok(vec![Row { time: self.motion.times[i], values: vec![f.positions, f.deformations, f.transfer] }])
    }
}

fn kinematics(
    model: &Path,
    motion: &Path,
    out: &Path,
    on_error: OnError,
    quiet: bool,
    registry: &Registry,
) -> ExitCode {
    let (compiled, motion) = match load_with_motion(model, motion, quiet, registry) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let mut frames = KinematicsFrames { run: KinematicsRun::new(&compiled), motion };
    run_frames(&mut frames, out, LoopKind { noun: "frame", failed: frame_at, on_error }, quiet)
}

/// Inverse dynamics over a motion's frames, with its derivatives.
struct InverseDynamicsFrames<'a> {
    run: InverseDynamicsRun<'a>,
    times: Vec<f64>,
    motion: MotionDerivatives,
}

impl FrameRun for InverseDynamicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        vec![
            Table { file: "driving.csv", columns: self.run.driving_columns().to_vec() },
            Table { file: "reactions.csv", columns: self.run.reaction_columns().to_vec() },
            Table { file: "passive.csv", columns: self.run.passive_columns().to_vec() },
        ]
    }
    fn frames(&self) -> usize {
        self.times.len()
    }
    fn time(&self, i: usize) -> f64 {
        self.times[i]
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        let m = &self.motion;
        let f = self.run.solve(&m.q[i], &m.qd[i], &m.qdd[i])?;
        Ok(vec![Row { time: self.times[i], values: vec![f.driving, f.reactions, f.passive] }])
    }
}

/// Say so when a model has nothing that makes a force: every result would be zero.
fn note_if_weightless(compiled: &Compiled, quiet: bool) {
    let d = compiled.model.dynamics();
    let any_law = compiled.elements.iter().any(|e| compiled.model.law(e.id).is_some());
    if d.masses.iter().all(|(_, m)| *m == 0.0) && d.loads.is_empty() && !any_law && !quiet {
        errln!(
            "note: the model has no mass, load or law: every force is zero (give bodies a `mass`, see docs/model-format.md)"
        );
    }
}

fn inverse_dynamics(
    model: &Path,
    motion: &Path,
    out: &Path,
    smooth: Option<f64>,
    on_error: OnError,
    quiet: bool,
    registry: &Registry,
) -> ExitCode {
    let (compiled, motion) = match load_with_motion(model, motion, quiet, registry) {
        Ok(v) => v,
        Err(code) => return code,
    };
    note_if_weightless(&compiled, quiet);
    let smoothing = smooth.map_or(Smoothing::Interpolate, Smoothing::Cutoff);
    let derivatives = match motion.differentiate(smoothing) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {}: cannot differentiate the motion: {e}", motion.file);
            return ExitCode::from(INVALID);
        }
    };
    let mut frames =
        InverseDynamicsFrames { run: InverseDynamicsRun::new(&compiled), times: motion.times, motion: derivatives };
    if let Err(e) =
        std::fs::create_dir_all(out).map_err(|e| e.to_string()).and_then(|_| write_units(out, &frames.tables()))
    {
        errln!("error: cannot write the results in `{}`: {e}", out.display());
        return ExitCode::from(INVALID);
    }
    run_frames(&mut frames, out, LoopKind { noun: "frame", failed: frame_at, on_error }, quiet)
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
        let column = |i: &mollier::InputInfo, rate: bool| {
            let (unit, what) = match (i.quantity, rate) {
                (Quantity::Length, false) => ("m", "generalized coordinate"),
                (Quantity::Length, true) => ("m/s", "its rate"),
                (_, false) => ("rad", "generalized coordinate"),
                (_, true) => ("rad/s", "its rate"),
            };
            Column { name: i.name.clone(), unit, meaning: what.to_string() }
        };
        let mut t = vec![
            Table { file: "motion.csv", columns: inputs.iter().map(|i| column(i, false)).collect() },
            Table { file: "velocities.csv", columns: inputs.iter().map(|i| column(i, true)).collect() },
        ];
        if self.e0.is_some() {
            t.push(Table {
                file: "energy.csv",
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

fn simulate(model: &Path, duration: f64, dt: f64, out: &Path, quiet: bool, registry: &Registry) -> ExitCode {
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
    note_if_weightless(&compiled, quiet);
    let sim = match Simulation::new(&compiled, dt) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: the initial configuration: {e}");
            return ExitCode::from(FAILED);
        }
    };
    let e0 = sim.state().energy;
    let conservative = sim.is_conservative();
    let mut frames = SimulationFrames { sim, steps, chunk: steps.div_ceil(200).max(1), e0, drift: 0.0 };
    if let Err(e) =
        std::fs::create_dir_all(out).map_err(|e| e.to_string()).and_then(|_| write_units(out, &frames.tables()))
    {
        errln!("error: cannot write the results in `{}`: {e}", out.display());
        return ExitCode::from(INVALID);
    }
    let code =
        run_frames(&mut frames, out, LoopKind { noun: "step", failed: steps_from, on_error: OnError::Stop }, quiet);
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

fn param_lines(s: &mut String, params: &[ParamDoc], indent: usize) {
    let width = params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in params {
        let req = if p.required { "required" } else { "optional" };
        s.push_str(&format!(
            "{:indent$}{:width$}  {}, {req}: {}{}\n",
            "",
            p.name,
            mollier::schema::describe_kind(p.kind),
            p.doc,
            mollier::schema::unit_note(p.kind)
        ));
        if let ParamKind::Table(sub) | ParamKind::Tables(sub) = p.kind {
            param_lines(s, sub, indent + 4);
        }
    }
}

fn types(registry: &Registry) -> String {
    let mut s = String::new();
    for t in registry.types() {
        s.push_str(&format!("{}: {}\n  modes: {}\n  parameters:\n", t.name, t.summary, t.modes.join(", ")));
        param_lines(&mut s, t.params, 4);
        s.push('\n');
    }
    s
}
