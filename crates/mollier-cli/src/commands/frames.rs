//! The frame loop of the analyses that run frame by frame (kinematics, inverse dynamics,
//! simulation): output tables, progress, the error policy and the exit code.

use super::prelude::*;

pub(crate) fn fmt_row(time: f64, values: &[f64]) -> Vec<String> {
    std::iter::once(time).chain(values.iter().copied()).map(number).collect()
}

/// A CSV file that an analysis writes, one row per solved frame: its name in the output
/// directory and its columns after `time`, each with its unit and meaning (for `units.csv`).
pub(crate) struct Table {
    pub(crate) file: &'static str,
    pub(crate) columns: Vec<Column>,
}

impl Table {
    /// Columns without units (kinematics writes no `units.csv`).
    pub(crate) fn plain(file: &'static str, names: Vec<String>) -> Self {
        Self {
            file,
            columns: names.into_iter().map(|name| Column { name, unit: "", meaning: String::new() }).collect(),
        }
    }
}

/// One row of every table, at one time.
pub(crate) struct Row {
    pub(crate) time: f64,
    pub(crate) values: Vec<Vec<f64>>,
}

/// An analysis run frame by frame: kinematics, inverse dynamics, simulation.
pub(crate) trait FrameRun {
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
pub(crate) struct LoopKind {
    /// `frame`, or `step`.
    pub(crate) noun: &'static str,
    /// The failed frame starting at a time, for messages.
    pub(crate) failed: fn(f64) -> String,
    pub(crate) on_error: OnError,
}

pub(crate) fn frame_at(t: f64) -> String {
    format!("frame at time {t} s")
}

pub(crate) fn steps_from(t: f64) -> String {
    format!("the steps from time {t} s")
}

pub(crate) struct Outputs {
    writers: Vec<(PathBuf, csv::Writer<File>)>,
}

impl Outputs {
    pub(crate) fn create(dir: &Path, tables: &[Table]) -> Result<Self, String> {
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

    pub(crate) fn write(&mut self, row: &Row) -> Result<(), String> {
        for ((_, w), v) in self.writers.iter_mut().zip(&row.values) {
            w.write_record(fmt_row(row.time, v)).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self) -> Result<(), String> {
        for (_, w) in &mut self.writers {
            w.flush().map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    pub(crate) fn paths(&self) -> String {
        self.writers.iter().map(|(p, _)| p.display().to_string()).collect::<Vec<_>>().join(", ")
    }
}

/// `DIR/units.csv`: the unit and meaning of every column the analysis writes.
pub(crate) fn write_units(dir: &Path, tables: &[Table]) -> Result<(), String> {
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

/// The frame loop every analysis shares: output files, progress bar, the error policy, the
/// summary and the exit code (0 all frames solved, 1 some failed, 2 the results cannot be
/// written).
pub(crate) fn run_frames(run: &mut dyn FrameRun, out: &Path, kind: LoopKind, quiet: bool) -> ExitCode {
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
