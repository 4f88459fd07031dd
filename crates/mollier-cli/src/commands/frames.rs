//! The frame loop of the analyses that run frame by frame (kinematics, inverse dynamics,
//! simulation): progress, the error policy and the exit code; the rows go to the shared output
//! writer ([`mollier::output`]) as they are solved.

use std::time::Instant;

use mollier::output::{Table, TableId};
use serde_json::Map;

use super::prelude::*;

/// At most this many failed frames are listed on standard error (and in the frame loop's
/// `summary.json`; `mollier inverse`'s `stability.csv` has every frame).
pub(crate) const LISTED: usize = 10;

/// One row of every table, at one time.
pub(crate) struct Row {
    pub(crate) time: f64,
    pub(crate) values: Vec<Vec<f64>>,
    /// The elements' warnings at this row's configuration (`element: warning`), written to
    /// `warnings.csv` and counted in `summary.json`: the row is solved all the same.
    pub(crate) warnings: Vec<String>,
}

/// An analysis run frame by frame: kinematics, inverse dynamics, simulation.
pub(crate) trait FrameRun {
    /// The tables it writes.
    fn tables(&self) -> Vec<Table>;
    /// Whether it writes `units.csv` for its tables.
    fn units(&self) -> bool {
        true
    }
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
    /// Fields of `summary.json` known once every frame is solved.
    fn summary(&self) -> Map<String, Value> {
        Map::new()
    }
    /// Files written once every frame is solved (plots), before the directory is committed.
    fn finish(&mut self, _dir: &mut mollier::OutputDir) -> Result<(), mollier::OutputError> {
        Ok(())
    }
}

/// What the frame loop calls its rows, how it names a failed frame, whether a failed frame may
/// be skipped, and what the summary says of the run.
pub(crate) struct LoopKind {
    /// `frame`, or `step`.
    pub(crate) noun: &'static str,
    /// The failed frame starting at a time, for messages.
    pub(crate) failed: fn(f64) -> String,
    pub(crate) on_error: OnError,
    /// The first fields of `summary.json`: command, model, motion.
    pub(crate) summary: Map<String, Value>,
}

pub(crate) fn frame_at(t: f64) -> String {
    format!("frame at time {} s", mollier_format::human(t))
}

pub(crate) fn steps_from(t: f64) -> String {
    format!("the steps from time {} s", mollier_format::human(t))
}

/// The fields every summary starts with: the command and its files.
pub(crate) fn summary_head(command: &str, model: &Path, motion: Option<&str>) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("command".into(), json!(command));
    m.insert("model".into(), json!(model.display().to_string()));
    if let Some(f) = motion {
        m.insert("motion".into(), json!(f));
    }
    m
}

/// The frame loop every analysis shares: output directory, progress bar, the error policy, the
/// summary and the exit code (0 all frames solved, 1 some failed, 2 the results cannot be
/// written). The directory is replaced only when the loop is done; frames that failed are in
/// its `summary.json`.
pub(crate) fn run_frames(run: &mut dyn FrameRun, out: &Path, kind: LoopKind, quiet: bool) -> ExitCode {
    let start = Instant::now();
    let interactive = std::io::stderr().is_terminal() && !quiet;
    let cannot_write = |e: mollier::OutputError| {
        errln!("error: {e}");
        ExitCode::from(INVALID)
    };
    let tables = run.tables();
    let mut dir = match output_dir(out) {
        Ok(d) => d,
        Err(e) => return cannot_write(e),
    };
    let opened: Result<Vec<TableId>, _> = tables.iter().map(|t| dir.table(&t.file, None, t.header())).collect();
    let ids = match opened.and_then(|ids| if run.units() { dir.units(&tables).map(|_| ids) } else { Ok(ids) }) {
        Ok(ids) => ids,
        Err(e) => return cannot_write(e),
    };
    let frames = run.frames();
    let total: usize = (0..frames).map(|i| run.rows_in(i)).sum();
    let template = format!("{{bar:40}} {{pos}}/{{len}} {}s  t = {{msg}} s  ({{eta}} left)", kind.noun);
    let bar = progress_bar(total, &template, quiet);
    let (mut failed, mut solved) = (0usize, 0usize);
    let mut failures: Vec<Value> = Vec::new();
    let mut warned = Warned::default();
    for i in 0..frames {
        let time = run.time(i);
        bar.set_message(time.to_string());
        match run.solve(i) {
            Ok(rows) => {
                for row in &rows {
                    let written = ids
                        .iter()
                        .zip(&row.values)
                        .try_for_each(|(id, v)| dir.numbers(*id, std::iter::once(row.time).chain(v.iter().copied())))
                        .and_then(|()| warned.write(&mut dir, row.time, &row.warnings));
                    if let Err(e) = written {
                        bar.abandon();
                        return cannot_write(e);
                    }
                }
                solved += rows.len();
            }
            Err(e) => {
                failed += run.rows_in(i);
                if failures.len() < LISTED {
                    failures.push(json!({ "time": time, "error": e.to_string() }));
                }
                bar.suspend(|| errln!("error: {}: {e}", (kind.failed)(time)));
                if kind.on_error == OnError::Stop {
                    break;
                }
            }
        }
        bar.inc(run.rows_in(i) as u64);
    }
    bar.finish_and_clear();
    let stopped = failed > 0 && kind.on_error == OnError::Stop;
    let mut summary = kind.summary;
    summary.insert(format!("{}s", kind.noun), json!(total));
    summary.insert("solved".into(), json!(solved));
    summary.insert("failed".into(), json!(if stopped { total - solved } else { failed }));
    summary.insert("stopped".into(), json!(stopped));
    summary.insert("failures".into(), json!(failures));
    warned.summarize(&mut summary);
    summary.extend(run.summary());
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let timing = json!({ "wall_ms": wall_ms, format!("ms_per_{}", kind.noun): wall_ms / solved.max(1) as f64 });
    if let Err(e) = run.finish(&mut dir) {
        return cannot_write(e);
    }
    let files = dir.files().join(", ");
    if let Err(e) = dir.commit(Value::Object(summary), timing) {
        return cannot_write(e);
    }
    warned.report(total, kind.noun);
    if failed > 0 {
        let what = match kind.on_error {
            OnError::Stop => format!("stopped: {solved} of {total} {}s solved", kind.noun),
            OnError::Skip => format!("{failed} of {total} {}s could not be solved and are left out", kind.noun),
        };
        errln!("error: {what}; results in {}", out.display());
        return ExitCode::from(FAILED);
    }
    if interactive {
        errln!("solved {total} {}s; wrote {files} in {}", kind.noun, out.display());
    }
    ExitCode::SUCCESS
}

/// The elements' warnings of the rows written so far: `warnings.csv` (time, element, warning;
/// opened at the first) and the counts for `summary.json`.
#[derive(Default)]
pub(crate) struct Warned {
    table: Option<TableId>,
    count: usize,
    rows: usize,
    first: String,
}

impl Warned {
    /// Write the warnings (`element: warning`) of the row at `time` (s).
    pub(crate) fn write(
        &mut self,
        dir: &mut mollier::OutputDir,
        time: f64,
        warnings: &[String],
    ) -> Result<(), mollier::OutputError> {
        if warnings.is_empty() {
            return Ok(());
        }
        let table = match self.table {
            Some(t) => t,
            None => {
                self.first = format!("t = {} s, {}", mollier_format::human(time), warnings[0]);
                *self.table.insert(dir.text_table("warnings.csv", ["time", "element", "warning"])?)
            }
        };
        let text = mollier::output::number(time);
        for w in warnings {
            let (element, what) = w.split_once(": ").unwrap_or(("", w));
            dir.row(table, [text.as_str(), element, what])?;
        }
        self.count += warnings.len();
        self.rows += 1;
        Ok(())
    }

    /// `warnings` (how many) and `warned_rows` (in how many rows) for `summary.json`.
    pub(crate) fn summarize(&self, summary: &mut Map<String, Value>) {
        summary.insert("warnings".into(), json!(self.count));
        summary.insert("warned_rows".into(), json!(self.rows));
    }

    /// One line on standard error when there was a warning: how many of `total` rows (`noun`s).
    pub(crate) fn report(&self, total: usize, noun: &str) {
        if self.count > 0 {
            errln!(
                "warning: element warnings at {} of {total} {noun}s, solved all the same (warnings.csv); the first: {}",
                self.rows,
                self.first
            );
        }
    }
}
