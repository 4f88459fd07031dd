//! `mollier`: check models, run kinematic analyses, print the model-file schema.
//!
//! Exit codes: 0 success; 1 the analysis failed (the model is not well posed, or frames could not
//! be solved); 2 a file is unreadable or invalid (model, motion), or the command line is wrong.

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use mollier::{CheckReport, Compiled, KinematicsRun, NodeRole};
use mollier_core::element::NodeKind;
use mollier_core::registry::{ParamDoc, ParamKind};
use mollier_core::{CoordRole, ModeRole};
use mollier_format::{Diagnostic, Diagnostics};
use serde_json::{Value, json};

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

/// Mollier: finite-element multibody kinematics for musculoskeletal models.
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
    /// Print the JSON Schema of model files, for completion in editors.
    Schema,
    /// List the element types, their modes and parameters.
    Types,
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
        Command::Schema => {
            let s = serde_json::to_string_pretty(&mollier::schema(&registry)).unwrap_or_default();
            outln!("{s}");
            ExitCode::SUCCESS
        }
        Command::Types => {
            out!("{}", types(&registry));
            ExitCode::SUCCESS
        }
    }
}

const INVALID: u8 = 2;
const FAILED: u8 = 1;

fn report(d: &Diagnostics) {
    errln!("{}", d.render());
}

fn check(path: &Path, json: bool, registry: &mollier_core::registry::Registry) -> ExitCode {
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
    if !report_.problems.is_empty() {
        ExitCode::from(INVALID)
    } else if !report_.is_well_posed() {
        ExitCode::from(FAILED)
    } else {
        ExitCode::SUCCESS
    }
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
        "well_posed": r.is_well_posed(),
        "diagnostics": diagnostics,
        "errors": r.problems.iter().map(error_json).collect::<Vec<_>>(),
    })
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

struct Outputs {
    positions: csv::Writer<File>,
    deformations: csv::Writer<File>,
    transfer: csv::Writer<File>,
}

impl Outputs {
    fn create(dir: &Path, run: &KinematicsRun<'_>) -> Result<Self, String> {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create `{}`: {e}", dir.display()))?;
        let open = |name: &str, header: Vec<String>| -> Result<csv::Writer<File>, String> {
            let p = dir.join(name);
            let mut w = csv::Writer::from_path(&p).map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
            w.write_record(std::iter::once("time".to_string()).chain(header))
                .map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
            Ok(w)
        };
        Ok(Self {
            positions: open("positions.csv", run.position_header())?,
            deformations: open("deformations.csv", run.deformation_header())?,
            transfer: open("transfer.csv", run.transfer_header())?,
        })
    }

    fn write(&mut self, time: f64, f: &mollier::FrameOutput) -> Result<(), String> {
        let w = |w: &mut csv::Writer<File>, v: &[f64]| w.write_record(fmt_row(time, v)).map_err(|e| e.to_string());
        w(&mut self.positions, &f.positions)?;
        w(&mut self.deformations, &f.deformations)?;
        w(&mut self.transfer, &f.transfer)
    }

    fn flush(&mut self) -> Result<(), String> {
        for w in [&mut self.positions, &mut self.deformations, &mut self.transfer] {
            w.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }
}

fn kinematics(
    model: &Path,
    motion: &Path,
    out: &Path,
    on_error: OnError,
    quiet: bool,
    registry: &mollier_core::registry::Registry,
) -> ExitCode {
    let compiled = match mollier::load(model, registry) {
        Ok(c) => c,
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    let verdict = mollier::check(&compiled, registry);
    if !verdict.problems.is_empty() {
        report(&Diagnostics(verdict.problems));
        return ExitCode::from(INVALID);
    }
    if !verdict.is_well_posed() {
        errln!("error: {} is not well posed; `mollier check` explains:", model.display());
        for d in &verdict.diagnostics {
            errln!("  - {d}");
        }
        return ExitCode::from(FAILED);
    }
    let motion = match mollier::read_motion(motion, &compiled.inputs) {
        Ok(m) => m,
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    let interactive = std::io::stderr().is_terminal() && !quiet;
    if !motion.ignored.is_empty() && !quiet {
        errln!("note: {}: ignoring columns that are not inputs: {}", motion.file, motion.ignored.join(", "));
    }
    let mut run = KinematicsRun::new(&compiled);
    let mut outputs = match Outputs::create(out, &run) {
        Ok(o) => o,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(INVALID);
        }
    };
    let bar = if interactive {
        let b = ProgressBar::new(motion.times.len() as u64);
        if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} frames  t = {msg} s  ({eta} left)") {
            b.set_style(style);
        }
        b
    } else {
        ProgressBar::hidden()
    };
    let mut failed = 0usize;
    let mut solved = 0usize;
    for (time, q) in motion.times.iter().zip(&motion.q) {
        bar.set_message(time.to_string());
        match run.solve(q) {
            Ok(f) => {
                if let Err(e) = outputs.write(*time, &f) {
                    bar.abandon();
                    errln!("error: cannot write the results in `{}`: {e}", out.display());
                    return ExitCode::from(INVALID);
                }
                solved += 1;
            }
            Err(e) => {
                failed += 1;
                bar.suspend(|| errln!("error: frame at time {time} s: {e}"));
                if on_error == OnError::Stop {
                    break;
                }
            }
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    if let Err(e) = outputs.flush() {
        errln!("error: cannot write the results in `{}`: {e}", out.display());
        return ExitCode::from(INVALID);
    }
    let total = motion.times.len();
    if failed > 0 {
        let what = match on_error {
            OnError::Stop => format!("stopped: {solved} of {total} frames solved"),
            OnError::Skip => format!("{failed} of {total} frames could not be solved and are left out"),
        };
        errln!("error: {what}; results in {}", out.display());
        return ExitCode::from(FAILED);
    }
    if interactive {
        errln!(
            "solved {total} frames; wrote {}",
            ["positions.csv", "deformations.csv", "transfer.csv"].map(|f| out.join(f).display().to_string()).join(", ")
        );
    }
    ExitCode::SUCCESS
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

fn types(registry: &mollier_core::registry::Registry) -> String {
    let mut s = String::new();
    for t in registry.types() {
        s.push_str(&format!("{}: {}\n  modes: {}\n  parameters:\n", t.name, t.summary, t.modes.join(", ")));
        param_lines(&mut s, t.params, 4);
        s.push('\n');
    }
    s
}
