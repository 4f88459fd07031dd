//! Motion files: the generalized coordinates over time.
//!
//! - CSV (`.csv`, or any other extension): a header `time,<input>,<input>,...` naming the model's
//!   inputs as written in its `inputs` list, in any order; values in SI (m, rad).
//! - OpenSim storage (`.mot`, `.sto`): a header block ending in a line `endheader`, then a line of
//!   column labels and rows of numbers separated by tabs (or spaces). With `inDegrees=yes` in the
//!   header, inputs that are angles (modes whose quantity is an angle) are converted from degrees
//!   to radians; lengths are read as m.
//!
//! Columns that are not inputs are ignored (and listed in [`Motion::ignored`]). Every value must be
//! a finite number and time must increase.
//!
//! [`Motion::differentiate`] gives the velocities and accelerations that dynamics needs, from a
//! cubic spline per input (see [`crate::spline`]).

use std::path::Path;

use mollier_core::element::Quantity;
use mollier_format::{Diagnostic, Diagnostics, human};

use crate::compile::InputInfo;

/// The generalized coordinates over time, in SI and in the model's input order.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    /// The file, as named.
    pub file: String,
    /// Time of each frame (s), increasing.
    pub times: Vec<f64>,
    /// Generalized coordinates of each frame (frames x n_q), SI (m, rad).
    pub q: Vec<Vec<f64>>,
    /// Columns that name no input.
    pub ignored: Vec<String>,
    /// `true` when angles were converted from degrees (`inDegrees=yes`).
    pub in_degrees: bool,
    /// Things the reader noticed, for the user's eyes (front ends may hide them when asked to
    /// be quiet).
    pub notes: Vec<String>,
    /// Things that are probably mistakes, such as an angle column whose values look like
    /// degrees: shown even when quiet, since the results would be wrong.
    pub warnings: Vec<String>,
}

/// A column header `name` or `name [unit]`: the name and the unit, if any.
fn split_unit(header: &str) -> (&str, Option<&str>) {
    match header.strip_suffix(']').and_then(|h| h.rsplit_once('[')) {
        Some((name, unit)) => (name.trim(), Some(unit.trim())),
        None => (header, None),
    }
}

/// SI per unit of `unit` for a column of this quantity; `None` if the unit does not fit.
fn unit_factor(unit: &str, quantity: Quantity) -> Option<f64> {
    match (quantity, unit) {
        (Quantity::Angle, "rad") | (Quantity::Length, "m") => Some(1.0),
        (Quantity::Angle, "deg") => Some(std::f64::consts::PI / 180.0),
        (Quantity::Length, "mm") => Some(1e-3),
        (Quantity::Length, "cm") => Some(1e-2),
        _ => None,
    }
}

/// The largest time in a motion (s), about 30 years: beyond it the spline's powers of the time
/// steps, and times printed for people, stop making sense.
const MAX_TIME: f64 = 1e9;

/// An angle column without a unit whose values exceed this (rad) is probably in degrees.
const LOOKS_LIKE_DEGREES: f64 = 1.5 * std::f64::consts::TAU;

/// Read a motion file for a model with these inputs.
pub fn read_motion(path: &Path, inputs: &[InputInfo]) -> Result<Motion, Diagnostics> {
    let file = path.display().to_string();
    let text = mollier_format::read_text(path, "motion file")?;
    parse_motion(&file, &text, inputs)
}

/// Parse a motion file's text; `.mot` and `.sto` names are OpenSim storage, others CSV.
pub fn parse_motion(file: &str, text: &str, inputs: &[InputInfo]) -> Result<Motion, Diagnostics> {
    let ext = Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table = if ext == "mot" || ext == "sto" { storage(file, text)? } else { csv_table(file, text)? };
    assemble(file, text, table, inputs).map_err(|d| Diagnostics::one(*d))
}

/// A table of numbers as read, with where each row starts.
pub(crate) struct Table {
    pub(crate) header: Vec<String>,
    pub(crate) header_at: usize,
    pub(crate) rows: Vec<(usize, Vec<String>)>,
    pub(crate) in_degrees: bool,
    /// What separates the cells of a row: `,` (CSV, quotes respected), a tab, or, for `None`,
    /// runs of whitespace.
    pub(crate) separator: Option<char>,
}

impl Table {
    /// Byte offset in `text` of cell `c` of the row starting at `row` (its first non-blank
    /// character), so that a problem with a cell is shown at the cell; the row's start if the
    /// row has fewer cells.
    pub(crate) fn cell_offset(&self, text: &str, row: usize, c: usize) -> usize {
        let line = text[row..].split('\n').next().unwrap_or("");
        let mut starts = vec![0];
        let mut quoted = false;
        let mut prev_blank = true;
        for (i, ch) in line.char_indices() {
            match self.separator {
                Some(',') if ch == '"' => quoted = !quoted,
                Some(sep) if ch == sep && !quoted => starts.push(i + 1),
                None => {
                    let blank = ch.is_whitespace();
                    if prev_blank && !blank && i > 0 {
                        starts.push(i);
                    }
                    prev_blank = blank;
                }
                _ => {}
            }
        }
        if self.separator.is_none() {
            // the first token may start after leading blanks
            starts[0] = line.len() - line.trim_start().len();
            starts.dedup();
        }
        let Some(&start) = starts.get(c) else { return row };
        let cell = &line[start..];
        row + start + (cell.len() - cell.trim_start_matches([' ', '\t']).len())
    }
}

pub(crate) fn at(
    file: &str,
    text: &str,
    offset: usize,
    path: &str,
    message: impl Into<String>,
    hint: impl Into<String>,
) -> Box<Diagnostic> {
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    Box::new(Diagnostic::new(file, path, message).with_hint(hint).at_span(text, offset..end.max(offset + 1)))
}

pub(crate) fn csv_table(file: &str, text: &str) -> Result<Table, Diagnostics> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).comment(Some(b'#')).from_reader(text.as_bytes());
    let fail = |e: csv::Error| {
        let offset = e.position().map_or(0, |p| p.byte() as usize).min(text.len());
        Diagnostics::one(*at(
            file,
            text,
            offset,
            "",
            format!("not a valid CSV table: {e}"),
            "every row needs one value per column, separated by commas",
        ))
    };
    let header: Vec<String> = reader.headers().map_err(fail)?.iter().map(str::to_string).collect();
    // the header is the first line that is not a comment or blank (the reader skips those)
    let mut header_at = 0;
    for line in text.split_inclusive('\n') {
        if !(line.starts_with('#') || line.trim().is_empty()) {
            break;
        }
        header_at += line.len();
    }
    let mut rows = Vec::new();
    for rec in reader.records() {
        let rec = rec.map_err(fail)?;
        let offset = rec.position().map_or(0, |p| p.byte() as usize).min(text.len());
        rows.push((offset, rec.iter().map(str::to_string).collect()));
    }
    Ok(Table { header, header_at, rows, in_degrees: false, separator: Some(',') })
}

fn storage(file: &str, text: &str) -> Result<Table, Diagnostics> {
    let mut offset = 0;
    let mut in_degrees = false;
    let mut lines = text.split_inclusive('\n').map(|l| {
        let start = offset;
        offset += l.len();
        (start, l.trim_end_matches(['\n', '\r']))
    });
    let mut ended = false;
    for (_, line) in lines.by_ref() {
        let l = line.trim();
        if l.eq_ignore_ascii_case("endheader") {
            ended = true;
            break;
        }
        if let Some((k, v)) = l.split_once('=') {
            if k.trim().eq_ignore_ascii_case("indegrees") {
                in_degrees = v.trim().eq_ignore_ascii_case("yes");
            }
        }
    }
    if !ended {
        return Err(Diagnostics::one(*at(
            file,
            text,
            0,
            "",
            "no `endheader` line",
            "an OpenSim storage file has a header ending in a line `endheader`, then the column labels",
        )));
    }
    let split = |l: &str| -> Vec<String> {
        if l.contains('\t') {
            l.split('\t').map(|s| s.trim().to_string()).collect()
        } else {
            l.split_whitespace().map(str::to_string).collect()
        }
    };
    let mut rest = lines.filter(|(_, l)| !l.trim().is_empty());
    let Some((header_at, labels)) = rest.next() else {
        return Err(Diagnostics::one(*at(
            file,
            text,
            text.len(),
            "",
            "no column labels after `endheader`",
            "add a line `time<TAB><input>...`",
        )));
    };
    let header = split(labels);
    let rows: Vec<(usize, Vec<String>)> = rest.map(|(o, l)| (o, split(l))).collect();
    let tabs = rows.first().map_or(labels, |(o, _)| &text[*o..]).split('\n').next().is_some_and(|l| l.contains('\t'));
    Ok(Table { header, header_at, rows, in_degrees, separator: tabs.then_some('\t') })
}

fn assemble(file: &str, text: &str, t: Table, inputs: &[InputInfo]) -> Result<Motion, Box<Diagnostic>> {
    let hdr = |message: String, hint: String| at(file, text, t.header_at, "", message, hint);
    let names: Vec<&str> = t.header.iter().map(|h| split_unit(h).0).collect();
    for (i, h) in names.iter().enumerate() {
        if names[..i].contains(h) {
            return Err(hdr(format!("column `{h}` appears twice"), "delete one of them".into()));
        }
    }
    let Some(time_col) = names.iter().position(|h| h.eq_ignore_ascii_case("time")) else {
        return Err(hdr("no `time` column".into(), "the header names the columns: time,<input>,<input>,...".into()));
    };
    if let Some(u) = split_unit(&t.header[time_col]).1.filter(|u| *u != "s") {
        return Err(hdr(format!("time in `{u}`"), "times are in seconds: write `time` or `time [s]`".into()));
    }
    let mut cols = Vec::with_capacity(inputs.len());
    // SI per file unit of each input's column: 1, or a converting factor for a column unit
    let mut factors = Vec::with_capacity(inputs.len());
    let mut missing = Vec::new();
    for inp in inputs {
        match names.iter().position(|h| *h == inp.name) {
            Some(c) => {
                cols.push(c);
                let factor = match split_unit(&t.header[c]).1 {
                    Some(u) => unit_factor(u, inp.quantity).ok_or_else(|| {
                        let (what, units) = match inp.quantity {
                            Quantity::Angle => ("an angle", "`rad` or `deg`"),
                            Quantity::Length => ("a length", "`m`, `cm` or `mm`"),
                            Quantity::Dimensionless => ("a dimensionless", "none: leave the unit out"),
                        };
                        hdr(
                            format!("column `{}`: unit `{u}` does not fit {what} input", inp.name),
                            format!("units for this input: {units}"),
                        )
                    })?,
                    None if t.in_degrees && inp.quantity == Quantity::Angle => std::f64::consts::PI / 180.0,
                    None => 1.0,
                };
                factors.push(factor);
            }
            None => missing.push(inp.name.as_str()),
        }
    }
    if !missing.is_empty() {
        let names: Vec<&str> = inputs.iter().map(|i| i.name.as_str()).collect();
        return Err(hdr(
            format!("no column for input{} {}", if missing.len() == 1 { "" } else { "s" }, quote_list(&missing)),
            format!("give one column per input of the model, named as in its `inputs` list: time,{}", names.join(",")),
        ));
    }
    let ignored: Vec<String> = t
        .header
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != time_col && !cols.contains(i))
        .map(|(_, h)| h.clone())
        .collect();
    let mut times = Vec::with_capacity(t.rows.len());
    let mut q = Vec::with_capacity(t.rows.len());
    for (offset, row) in &t.rows {
        let row_err = |path: &str, message: String, hint: &str| at(file, text, *offset, path, message, hint);
        let cell_err = |c: usize, message: String, hint: &str| {
            at(file, text, t.cell_offset(text, *offset, c), &t.header[c], message, hint)
        };
        if row.len() != t.header.len() {
            return Err(row_err(
                "",
                format!("{} values for {} columns", row.len(), t.header.len()),
                "give one value per column",
            ));
        }
        let value = |c: usize, largest: f64| -> Result<f64, Box<Diagnostic>> {
            match row[c].parse::<f64>() {
                Ok(v) if v.is_finite() && v.abs() <= largest => Ok(v),
                Ok(v) if v.is_finite() => Err(cell_err(
                    c,
                    format!("{} is too large: at most {largest:e} here", human(v)),
                    if c == time_col { "times are in seconds" } else { "check the column's unit" },
                )),
                Ok(v) => Err(cell_err(c, format!("not a finite number: {v}"), "replace it with a finite number")),
                Err(_) => Err(cell_err(c, format!("not a number: `{}`", row[c]), "write numbers like 0.25 or -1.5e-3")),
            }
        };
        let time = value(time_col, MAX_TIME)?;
        if let Some(&prev) = times.last() {
            if !(time > prev) {
                return Err(cell_err(
                    time_col,
                    format!("time does not increase ({} after {})", human(time), human(prev)),
                    "each row is one instant: sort the rows and remove repeated times",
                ));
            }
        }
        let mut frame = Vec::with_capacity(cols.len());
        for (&c, factor) in cols.iter().zip(&factors) {
            frame.push(value(c, mollier_format::MAX_MAGNITUDE)? * factor);
        }
        times.push(time);
        q.push(frame);
    }
    if times.is_empty() {
        return Err(hdr("the motion has no rows".into(), "add one row of values per instant after the header".into()));
    }
    let mut warnings = Vec::new();
    for (j, (&c, inp)) in cols.iter().zip(inputs).enumerate() {
        let largest = q.iter().fold(0.0f64, |m, f| m.max(f[j].abs()));
        if inp.quantity == Quantity::Angle && factors[j] == 1.0 && largest > LOOKS_LIKE_DEGREES {
            warnings.push(format!(
                "column `{}` reaches {} rad ({:.1} turns): if it is in degrees, name the column `{} [deg]`",
                t.header[c],
                human(largest),
                largest / std::f64::consts::TAU,
                inp.name
            ));
        }
    }
    Ok(Motion { file: file.to_string(), times, q, ignored, in_degrees: t.in_degrees, notes: Vec::new(), warnings })
}

/// How to differentiate a motion.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Smoothing {
    /// Interpolate the samples (not-a-knot cubic spline): exact for motions cubic in time.
    #[default]
    Interpolate,
    /// Smooth with a cubic smoothing spline that halves the amplitude of a sine of this frequency
    /// (Hz): like a second-order Butterworth low-pass filter run forward and backward. The
    /// positions are smoothed too.
    Cutoff(f64),
}

/// Generalized coordinates with their rates and accelerations at every frame of a motion.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionDerivatives {
    /// `q` (frames x n_q), as read or smoothed.
    pub q: Vec<Vec<f64>>,
    /// `q̇` (m/s, rad/s).
    pub qd: Vec<Vec<f64>>,
    /// `q̈` (m/s², rad/s²).
    pub qdd: Vec<Vec<f64>>,
}

impl Motion {
    /// Velocities and accelerations at the frames, from a cubic spline through (or, smoothing,
    /// near) each input's samples. A one-frame motion is at rest.
    pub fn differentiate(&self, smoothing: Smoothing) -> Result<MotionDerivatives, crate::spline::SplineError> {
        let knots = crate::spline::Knots::new(&self.times)?;
        let (frames, nq) = (self.times.len(), self.q.first().map_or(0, Vec::len));
        let mut out = MotionDerivatives {
            q: vec![vec![0.0; nq]; frames],
            qd: vec![vec![0.0; nq]; frames],
            qdd: vec![vec![0.0; nq]; frames],
        };
        for j in 0..nq {
            let y: Vec<f64> = self.q.iter().map(|f| f.get(j).copied().unwrap_or(f64::NAN)).collect();
            let fit = match smoothing {
                Smoothing::Interpolate => knots.interpolate(&y)?,
                Smoothing::Cutoff(hz) => {
                    if !(hz > 0.0) || !hz.is_finite() {
                        return Err(crate::spline::SplineError::Cutoff(hz));
                    }
                    let lambda =
                        if frames < 3 { 0.0 } else { crate::spline::smoothing_parameter(knots.mean_interval(), hz) };
                    if !lambda.is_finite() {
                        return Err(crate::spline::SplineError::Cutoff(hz));
                    }
                    knots.smooth(&y, lambda)?
                }
            };
            for i in 0..frames {
                out.q[i][j] = fit.value[i];
                out.qd[i][j] = fit.d1[i];
                out.qdd[i][j] = fit.d2[i];
            }
        }
        Ok(out)
    }
}

fn quote_list(v: &[&str]) -> String {
    v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::{CoordId, Input, ModeId};

    fn inputs() -> Vec<InputInfo> {
        vec![
            InputInfo { name: "knee.rotation".into(), input: Input::Mode(ModeId::new(0)), quantity: Quantity::Angle },
            InputInfo {
                name: "pelvis.y".into(),
                input: Input::Coordinate(CoordId::new(1)),
                quantity: Quantity::Length,
            },
        ]
    }

    #[test]
    fn csv_columns_in_any_order() {
        let m = parse_motion("m.csv", "pelvis.y, time ,knee.rotation,extra\n0.9,0,0.1,7\n0.95,0.01,0.2,7\n", &inputs())
            .unwrap();
        assert_eq!(m.times, [0.0, 0.01]);
        assert_eq!(m.q, [[0.1, 0.9], [0.2, 0.95]]);
        assert_eq!(m.ignored, ["extra"]);
    }

    #[test]
    fn opensim_storage_in_degrees_converts_only_angles() {
        let text = "Coordinates\nversion=1\nnRows=2\ninDegrees=yes\nendheader\ntime\tknee.rotation\tpelvis.y\n0\t90\t0.9\n0.5\t-45\t1.0\n";
        let m = parse_motion("walk.mot", text, &inputs()).unwrap();
        assert!(m.in_degrees);
        assert!((m.q[0][0] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && m.q[0][1] == 0.9);
        assert!((m.q[1][0] + std::f64::consts::FRAC_PI_4).abs() < 1e-15 && m.q[1][1] == 1.0);
    }

    #[test]
    fn a_motion_is_differentiated_per_input() {
        // knee: a cubic in degrees; pelvis: a line; both differentiated exactly
        let mut text = String::from("x\ninDegrees=yes\nendheader\ntime\tknee.rotation\tpelvis.y\n");
        for i in 0..6 {
            let t = 0.1 * i as f64;
            text.push_str(&format!("{t}\t{}\t{}\n", 30.0 * t * t * t, 0.9 + 0.5 * t));
        }
        let m = parse_motion("m.mot", &text, &inputs()).unwrap();
        let d = m.differentiate(Smoothing::Interpolate).unwrap();
        let deg = std::f64::consts::PI / 180.0;
        for (i, t) in m.times.iter().enumerate() {
            assert!((d.qd[i][0] - 90.0 * t * t * deg).abs() < 1e-12, "{:?}", d.qd[i]);
            assert!((d.qdd[i][0] - 180.0 * t * deg).abs() < 1e-10, "{:?}", d.qdd[i]);
            assert!((d.qd[i][1] - 0.5).abs() < 1e-12 && d.qdd[i][1].abs() < 1e-10, "{:?}", d.qd[i]);
            assert_eq!(d.q[i], m.q[i]);
        }
        for hz in [0.0, -1.0, f64::NAN, 1e-300] {
            assert!(
                matches!(m.differentiate(Smoothing::Cutoff(hz)), Err(crate::spline::SplineError::Cutoff(_))),
                "{hz}"
            );
        }
    }

    #[test]
    fn column_units_convert_and_must_fit_the_input() {
        let m = parse_motion("m.csv", "time [s],knee.rotation [deg],pelvis.y [mm]\n0,90,900\n0.1,-45,950\n", &inputs())
            .unwrap();
        assert!((m.q[0][0] - std::f64::consts::FRAC_PI_2).abs() < 1e-15 && (m.q[0][1] - 0.9).abs() < 1e-15);
        assert!((m.q[1][0] + std::f64::consts::FRAC_PI_4).abs() < 1e-15 && (m.q[1][1] - 0.95).abs() < 1e-15);
        assert!(m.notes.is_empty() && m.warnings.is_empty() && m.ignored.is_empty());
        let e = parse_motion("m.csv", "time,knee.rotation [mm],pelvis.y\n0,1,1\n", &inputs()).unwrap_err();
        assert_eq!(
            e.0[0].headline(),
            "m.csv:1:1: error: column `knee.rotation`: unit `mm` does not fit an angle input"
        );
        let e = parse_motion("m.csv", "time [ms],knee.rotation,pelvis.y\n0,1,1\n", &inputs()).unwrap_err();
        assert!(e.0[0].message.contains("time in `ms`"), "{e}");
        // degrees written as radians are noticed, not refused
        let m = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,90,1\n", &inputs()).unwrap();
        assert_eq!(m.q[1][0], 90.0);
        assert!(m.warnings[0].contains("name the column `knee.rotation [deg]`"), "{:?}", m.warnings);
    }

    #[test]
    fn problems_are_located() {
        let e = parse_motion("m.csv", "time,knee.rotation\n0,0\n", &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.csv:1:1: error: no column for input `pelvis.y`");
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,nan,1\n", &inputs()).unwrap_err();
        // at the cell, not at the row
        assert_eq!(e.0[0].headline(), "m.csv:3:5: error: knee.rotation: not a finite number: NaN");
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1, x,1\n", &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.csv:3:6: error: knee.rotation: not a number: `x`");
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n0.1,\"0\",y\n", &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.csv:3:9: error: pelvis.y: not a number: `y`");
        let sto = "endheader\ntime\tknee.rotation\tpelvis.y\n0\t0\t1\n0.1\t0\tz\n";
        let e = parse_motion("m.sto", sto, &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.sto:4:7: error: pelvis.y: not a number: `z`");
        let e = parse_motion("m.mot", "endheader\ntime knee.rotation pelvis.y\n0  0 1\n 0.1 0  w\n", &inputs())
            .unwrap_err();
        assert_eq!(e.0[0].headline(), "m.mot:4:9: error: pelvis.y: not a number: `w`");
        // finite but absurd values are refused at their cell, printed short: no NaN later
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n1e300,0,1\n", &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.csv:3:1: error: time: 1e300 is too large: at most 1e9 here");
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0,0,1\n1,0,-2e200\n", &inputs()).unwrap_err();
        assert_eq!(e.0[0].headline(), "m.csv:3:5: error: pelvis.y: -2e200 is too large: at most 1e15 here");
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n0.2,0,1\n0.1,0,1\n", &inputs()).unwrap_err();
        assert!(e.0[0].message.contains("time does not increase"), "{e}");
        let e = parse_motion("m.mot", "time\tknee.rotation\n", &inputs()).unwrap_err();
        assert!(e.0[0].message.contains("endheader"));
        let e = parse_motion("m.csv", "time,knee.rotation,pelvis.y\n", &inputs()).unwrap_err();
        assert!(e.0[0].message.contains("no rows"));
    }
}
