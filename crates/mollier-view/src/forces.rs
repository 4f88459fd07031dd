//! Results tables of a results directory (`forces.csv` of `mollier inverse` or of a study's
//! variant: a `time` column, then one column per muscle, N; `reactions.csv` likewise), an empty
//! cell where a frame has no value.

use std::path::Path;

use crate::ViewError;

/// Forces read from a results table.
#[derive(Clone, Debug, PartialEq)]
pub struct Forces {
    /// The file, as named.
    pub file: String,
    /// The muscles' names (the columns after `time`).
    pub names: Vec<String>,
    /// Time of each row (s).
    pub times: Vec<f64>,
    /// Per row, per muscle (N); NaN for an empty cell.
    pub values: Vec<Vec<f64>>,
}

impl Forces {
    /// The row of time `t` (s, within 1e-9 s): results are matched to frames by time.
    pub fn row_at(&self, t: f64) -> Option<usize> {
        self.times.iter().position(|s| (s - t).abs() <= 1e-9)
    }

    /// The column named `name`.
    pub fn column(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
}

/// Read `forces.csv` (lines starting with `#` are comments). Every problem names the file and
/// the line.
pub fn read_forces(path: &Path) -> Result<Forces, ViewError> {
    let file = path.display().to_string();
    let text = mollier_format::read_text(path, "forces table").map_err(|d| ViewError::Results(d.to_string()))?;
    let mut reader = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
    let bad = |line: u64, what: String| ViewError::Results(format!("{file}:{line}: {what}"));
    let header = reader.headers().map_err(|e| bad(1, e.to_string()))?.clone();
    if header.get(0) != Some("time") {
        return Err(bad(1, "the first column must be `time` (a forces.csv of mollier inverse or a study)".into()));
    }
    let names: Vec<String> = header.iter().skip(1).map(str::to_string).collect();
    let (mut times, mut values) = (Vec::new(), Vec::new());
    for rec in reader.records() {
        let rec = rec.map_err(|e| bad(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = rec.position().map_or(0, |p| p.line());
        let number = |k: usize, cell: &str| -> Result<f64, ViewError> {
            if cell.trim().is_empty() {
                return Ok(f64::NAN);
            }
            match cell.trim().parse::<f64>() {
                Ok(v) if v.is_finite() => Ok(v),
                _ => Err(bad(
                    line,
                    format!("column `{}`: `{}` is not a finite number", header.get(k).unwrap_or("?"), cell),
                )),
            }
        };
        let t = number(0, rec.get(0).unwrap_or(""))?;
        if t.is_nan() {
            return Err(bad(line, "the time is empty".into()));
        }
        times.push(t);
        values.push((1..=names.len()).map(|k| number(k, rec.get(k).unwrap_or(""))).collect::<Result<Vec<_>, _>>()?);
    }
    Ok(Forces { file, names, times, values })
}
