//! What the commands share: exit codes, loading a model and a motion, progress bars.

use crate::commands::prelude::*;

pub(crate) const INVALID: u8 = 2;

/// `--format`: how result tables are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum Format {
    /// Comma-separated values.
    Csv,
    /// OpenSim storage files (`.sto`).
    Sto,
}

static TABLE_FORMAT: std::sync::OnceLock<mollier::output::TableFormat> = std::sync::OnceLock::new();

/// Set once from the command line, before any command runs.
pub(crate) fn set_table_format(f: Format) {
    let _ = TABLE_FORMAT.set(match f {
        Format::Csv => mollier::output::TableFormat::Csv,
        Format::Sto => mollier::output::TableFormat::Sto,
    });
}

/// The table format the command line asked for.
pub(crate) fn table_format() -> mollier::output::TableFormat {
    TABLE_FORMAT.get().copied().unwrap_or_default()
}

/// A command's output directory, its tables in the format the command line asked for.
pub(crate) fn output_dir(out: &Path) -> Result<mollier::OutputDir, mollier::OutputError> {
    mollier::OutputDir::create(out).map(|d| d.with_format(table_format()))
}
pub(crate) const FAILED: u8 = 1;

/// What `--force` lets a file output replace: a symbolic link (the link itself), never a
/// directory, FIFO, socket or device.
fn replace(force: bool) -> mollier::output::Replace {
    if force { mollier::output::Replace::Links } else { mollier::output::Replace::Files }
}

/// Check a command's file outputs before any work: each may be written (see
/// [`mollier::output::check_file_target`]) and none is named twice; exit code 2 if not.
pub(crate) fn check_outputs(paths: &[&Path], force: bool) -> Result<(), ExitCode> {
    for (i, p) in paths.iter().enumerate() {
        if paths[..i].contains(p) {
            errln!("error: {} is named for two outputs: give each its own path", printable(&p.display().to_string()));
            return Err(ExitCode::from(INVALID));
        }
        if let Err(e) = mollier::output::check_file_target(p, replace(force)) {
            errln!("error: {}", printable(&e.to_string()));
            return Err(ExitCode::from(INVALID));
        }
    }
    Ok(())
}

/// Write a file output as a unit (`mollier::output::write_file`); exit code 2 if it cannot be.
pub(crate) fn write_output(path: &Path, bytes: &[u8], force: bool) -> Result<(), ExitCode> {
    mollier::output::write_file(path, bytes, replace(force)).map_err(|e| {
        errln!("error: {}", printable(&e.to_string()));
        ExitCode::from(INVALID)
    })
}

/// A JSON value as text for standard output: what `serde_json` leaves raw in strings and
/// [`mollier_format::is_unprintable`] refuses (DEL, C1 controls, bidi controls) written as
/// `\uXXXX` escapes, which read back the same (they occur in strings only, and are all in the
/// Basic Multilingual Plane).
pub(crate) fn json_text(v: &Value) -> String {
    let text = serde_json::to_string_pretty(v).unwrap_or_default();
    if !text.chars().any(mollier_format::is_unprintable) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if mollier_format::is_unprintable(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

pub(crate) fn report(d: &Diagnostics) {
    errln!("{}", d.render());
}

/// Load a model and make sure it can be analysed: exit code 2 for an invalid file, 1 for a model
/// that is not well posed.
pub(crate) fn load_well_posed(model: &Path, registry: &Registry) -> Result<Compiled, ExitCode> {
    match mollier::load(model, registry) {
        Ok(c) => well_posed(c, model, registry),
        Err(d) => {
            report(&d);
            Err(ExitCode::from(INVALID))
        }
    }
}

/// A compiled model (of the file `model`) that can be analysed: exit code 2 for problems of
/// the file, 1 for a model that is not well posed.
pub(crate) fn well_posed(compiled: Compiled, model: &Path, registry: &Registry) -> Result<Compiled, ExitCode> {
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
/// What the frame-by-frame analyses of a motion (kinematics, inverse dynamics) are given.
pub(crate) struct MotionRun<'a> {
    pub(crate) model: &'a Path,
    pub(crate) motion: &'a Path,
    pub(crate) out: &'a Path,
    pub(crate) on_error: OnError,
    pub(crate) quiet: bool,
    /// Time-varying external loads (`--loads`), for the dynamic analyses.
    pub(crate) loads: Option<&'a Path>,
}

pub(crate) fn load_with_motion(
    model: &Path,
    motion: &Path,
    quiet: bool,
    registry: &Registry,
) -> Result<(Compiled, Motion), ExitCode> {
    let compiled = load_well_posed(model, registry)?;
    let motion = load_motion(motion, &compiled, quiet)?;
    Ok((compiled, motion))
}

pub(crate) fn load_motion(path: &Path, compiled: &Compiled, quiet: bool) -> Result<Motion, ExitCode> {
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

/// Read `--loads` for a model and a run from `first` to `last` (s): exit code 2 when the file
/// is invalid, names what the model does not have, or leaves the run's times.
pub(crate) fn load_loads(
    path: Option<&Path>,
    compiled: &Compiled,
    first: f64,
    last: f64,
) -> Result<Option<mollier::ExternalLoads>, ExitCode> {
    let Some(path) = path else { return Ok(None) };
    let loads = mollier::ExternalLoads::read(path, compiled).map_err(|d| {
        report(&d);
        ExitCode::from(INVALID)
    })?;
    loads.check_times(first, last).map_err(|e| {
        errln!("error: {}: {e}", path.display());
        ExitCode::from(INVALID)
    })?;
    Ok(Some(loads))
}

/// A progress bar on standard error for `total` items (hidden unless stderr is a terminal and
/// not `quiet`).
pub(crate) fn progress_bar(total: usize, template: &str, quiet: bool) -> ProgressBar {
    if !std::io::stderr().is_terminal() || quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(total as u64);
    if let Ok(style) = ProgressStyle::with_template(template) {
        b.set_style(style);
    }
    b
}

/// Say so when a model has nothing that makes a force: every result would be zero.
pub(crate) fn note_if_weightless(compiled: &Compiled, quiet: bool) {
    let d = compiled.model.dynamics();
    let any_law = compiled.elements.iter().any(|e| compiled.model.law(e.id).is_some());
    if d.masses.iter().all(|(_, m)| *m == 0.0) && d.loads.is_empty() && !any_law && !quiet {
        errln!(
            "note: the model has no mass, load or law: every force is zero (give bodies a `mass`, see docs/model-format.md)"
        );
    }
}

/// How a motion was differentiated, for the summaries.
pub(crate) fn derivatives_text(derivatives: Option<&MotionDerivatives>, inputs: &[InputInfo]) -> String {
    match derivatives {
        None => "static: rates and accelerations zero".to_string(),
        Some(d) => d.summary(inputs),
    }
}

/// The model's `[load_sharing]` section, or exit code 2 with what to add.
pub(crate) fn load_sharing_section<'c>(
    compiled: &'c Compiled,
    model: &Path,
    what: &str,
) -> Result<&'c mollier::LoadSharingSetup, ExitCode> {
    compiled.load_sharing.as_ref().ok_or_else(|| {
        errln!(
            "error: {} has no [load_sharing] section: name the muscles (and any {what}) there; see docs/model-format.md",
            model.display()
        );
        ExitCode::from(INVALID)
    })
}

/// A positive, finite number (clap value parser).
pub(crate) fn positive_number(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() => Ok(v),
        Ok(v) => Err(format!("must be a positive number, got {v}")),
        Err(e) => Err(e.to_string()),
    }
}

/// The most threads `--threads` asks for: more is a typo, and each thread costs a stack.
const MAX_THREADS: usize = 1024;

/// A number of threads, 0 to [`MAX_THREADS`] (clap value parser).
pub(crate) fn thread_count(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if n <= MAX_THREADS => Ok(n),
        Ok(n) => Err(format!("must be at most {MAX_THREADS} (0: the cores available), got {n}")),
        Err(e) => Err(e.to_string()),
    }
}
