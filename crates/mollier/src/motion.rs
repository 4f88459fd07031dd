//! Motion files: the generalized coordinates over time.
//!
//! - CSV (`.csv`, or any other extension): a header `time,<input>,<input>,...` naming the model's
//!   inputs as written in its `inputs` list, in any order; values in SI (m, rad).
//! - OpenSim storage (`.mot`, `.sto`): a header block ending in a line `endheader`, then a line of
//!   column labels and rows of numbers separated by tabs (or spaces). With `inDegrees=yes` in the
//!   header, inputs that are angles (modes whose quantity is an angle) are converted from degrees
//!   to radians; lengths are read as m.
//!
//! An input's velocity and acceleration may be given too, in columns `<input>.vel` and
//! `<input>.acc` (in storage files also `<input>_u` or `<input>_speed` for the velocity, as
//! OpenSim names speeds), in SI per second (or per second squared), or in the unit the column
//! names (`elbow.rotation.vel [deg/s]`, `AC.y.acc [mm/s^2]`), or in degrees with `inDegrees=yes`.
//!
//! Columns that are neither are ignored (and listed in [`Motion::ignored`]). Every value must be
//! a finite number and time must increase.
//!
//! [`Motion::differentiate`] gives the velocities and accelerations that dynamics needs: those
//! of the file where it has them, the others from a cubic spline per input (see
//! [`crate::spline`]), and says which ([`MotionDerivatives::sources`]).

use std::path::Path;

use mollier_core::element::Quantity;
use mollier_format::{Diagnostic, Diagnostics, human};

use crate::compile::parts::InputInfo;
use crate::spline::{Ends, Fit, Knots, SplineError, smoothing_parameter};

/// Rows of equal width stored in one array (rows x width, row-major): `rows[i]` is row `i`. A long
/// motion costs its numbers and nothing per frame (a vector per frame cost 60-80 bytes more).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rows {
    width: usize,
    rows: usize,
    data: Vec<f64>,
}

impl Rows {
    /// No rows, each of `width` values.
    pub fn new(width: usize) -> Self {
        Self { width, rows: 0, data: Vec::new() }
    }
    /// `rows` rows of `width` zeros.
    pub fn zeros(rows: usize, width: usize) -> Self {
        Self { width, rows, data: vec![0.0; rows * width] }
    }
    /// Append a row (its length must be the width).
    pub fn push(&mut self, row: &[f64]) {
        assert_eq!(row.len(), self.width, "a row of the wrong width");
        self.data.extend_from_slice(row);
        self.rows += 1;
    }
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows
    }
    /// `true` without rows.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
    /// Values per row.
    pub fn width(&self) -> usize {
        self.width
    }
    /// The rows in order.
    pub fn iter(&self) -> RowsIter<'_> {
        RowsIter { rows: self, next: 0 }
    }
}

/// The rows of [`Rows`] in order.
#[derive(Clone, Debug)]
pub struct RowsIter<'a> {
    rows: &'a Rows,
    next: usize,
}

impl<'a> Iterator for RowsIter<'a> {
    type Item = &'a [f64];
    fn next(&mut self) -> Option<&'a [f64]> {
        let rows: &'a Rows = self.rows;
        (self.next < rows.rows).then(|| {
            self.next += 1;
            &rows[self.next - 1]
        })
    }
}

impl<'a> IntoIterator for &'a Rows {
    type Item = &'a [f64];
    type IntoIter = RowsIter<'a>;
    fn into_iter(self) -> RowsIter<'a> {
        self.iter()
    }
}

impl std::ops::Index<usize> for Rows {
    type Output = [f64];
    fn index(&self, i: usize) -> &[f64] {
        assert!(i < self.rows, "row {i} of {}", self.rows);
        &self.data[i * self.width..(i + 1) * self.width]
    }
}

impl std::ops::IndexMut<usize> for Rows {
    fn index_mut(&mut self, i: usize) -> &mut [f64] {
        assert!(i < self.rows, "row {i} of {}", self.rows);
        &mut self.data[i * self.width..(i + 1) * self.width]
    }
}

/// The generalized coordinates over time, in SI and in the model's input order.
#[derive(Clone, Debug, PartialEq)]
pub struct Motion {
    /// The file, as named.
    pub file: String,
    /// Time of each frame (s), increasing.
    pub times: Vec<f64>,
    /// Generalized coordinates of each frame (frames x n_q), SI (m, rad).
    pub q: Rows,
    /// The inputs' names, in the model's input order.
    pub names: Vec<String>,
    /// Velocities read from the file, per input in input order: `None` for an input without a
    /// velocity column, else one per frame (m/s, rad/s).
    pub velocities: Vec<Option<Vec<f64>>>,
    /// Accelerations read from the file, likewise (m/s², rad/s²).
    pub accelerations: Vec<Option<Vec<f64>>>,
    /// Columns that name no input, velocity or acceleration.
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
pub(crate) fn split_unit(header: &str) -> (&str, Option<&str>) {
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

/// SI per unit of `unit` for the `order`-th time derivative (1 or 2) of a quantity: the unit of
/// the quantity per s or per s² (`deg/s`, `mm/s^2`, `m/s²`); `None` if it does not fit.
fn rate_factor(unit: &str, quantity: Quantity, order: usize) -> Option<f64> {
    let base = match order {
        1 => unit.strip_suffix("/s"),
        _ => ["/s^2", "/s²", "/s2"].iter().find_map(|s| unit.strip_suffix(s)),
    };
    base.and_then(|b| unit_factor(b.trim(), quantity))
}

/// The column names that may hold the `order`-th derivative (1 or 2) of input `name`.
fn derivative_names(name: &str, order: usize, storage: bool) -> Vec<String> {
    match (order, storage) {
        (1, true) => vec![format!("{name}.vel"), format!("{name}_u"), format!("{name}_speed")],
        (1, false) => vec![format!("{name}.vel")],
        _ => vec![format!("{name}.acc")],
    }
}

fn is_storage(file: &str) -> bool {
    let ext = Path::new(file).extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    ext == "mot" || ext == "sto"
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
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let table = any_table(file, text)?;
    assemble(file, text, table, inputs).map_err(|d| Diagnostics::one(*d))
}

/// The cells of one row as read: their text in one string, and where each ends — two
/// allocations a row rather than one a cell, so that a long motion's table stays small.
pub(crate) struct Row {
    text: Box<str>,
    ends: Box<[u32]>,
}

impl Row {
    fn new<'a>(cells: impl Iterator<Item = &'a str>) -> Self {
        let (mut text, mut ends) = (String::new(), Vec::new());
        for c in cells {
            text.push_str(c);
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        Self { text: text.into_boxed_str(), ends: ends.into_boxed_slice() }
    }
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }
}

impl std::ops::Index<usize> for Row {
    type Output = str;
    fn index(&self, c: usize) -> &str {
        let start = if c == 0 { 0 } else { self.ends[c - 1] as usize };
        &self.text[start..self.ends[c] as usize]
    }
}

/// A table of numbers as read, with where each row starts.
pub(crate) struct Table {
    pub(crate) header: Vec<String>,
    pub(crate) header_at: usize,
    pub(crate) rows: Vec<(usize, Row)>,
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

/// The table of a CSV file, or of an OpenSim storage file (`.sto`, `.mot`) by its name.
pub(crate) fn any_table(file: &str, text: &str) -> Result<Table, Diagnostics> {
    if is_storage(file) { storage(file, text) } else { csv_table(file, text) }
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
        rows.push((offset, Row::new(rec.iter())));
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
    let rows: Vec<(usize, Row)> = rest
        .map(|(o, l)| {
            let row =
                if l.contains('\t') { Row::new(l.split('\t').map(str::trim)) } else { Row::new(l.split_whitespace()) };
            (o, row)
        })
        .collect();
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
    let (cols, factors) = input_columns(file, text, &t, &names, inputs)?;
    let rates = rate_columns(file, text, &t, &names, inputs)?;
    let used = |i: usize| i == time_col || cols.contains(&i) || rates.iter().flatten().flatten().any(|(c, _)| *c == i);
    let ignored: Vec<String> = t.header.iter().enumerate().filter(|(i, _)| !used(*i)).map(|(_, h)| h.clone()).collect();
    let mut given: [Vec<Option<Vec<f64>>>; 2] =
        rates.each_ref().map(|r| r.iter().map(|c| c.map(|_| Vec::with_capacity(t.rows.len()))).collect());
    let mut times = Vec::with_capacity(t.rows.len());
    let mut q = Rows::new(cols.len());
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
                Err(_) => {
                    Err(cell_err(c, format!("not a number: `{}`", &row[c]), "write numbers like 0.25 or -1.5e-3"))
                }
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
        for (found, values) in rates.iter().zip(&mut given) {
            for (col, v) in found.iter().zip(values.iter_mut()) {
                if let (Some((c, factor)), Some(v)) = (col, v) {
                    v.push(value(*c, mollier_format::MAX_MAGNITUDE)? * factor);
                }
            }
        }
        times.push(time);
        q.push(&frame);
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
    let [velocities, accelerations] = given;
    let names = inputs.iter().map(|i| i.name.clone()).collect();
    Ok(Motion {
        file: file.to_string(),
        times,
        q,
        names,
        velocities,
        accelerations,
        ignored,
        in_degrees: t.in_degrees,
        notes: Vec::new(),
        warnings,
    })
}

/// The column of each input in a motion's header `names` (units stripped), and the factor to SI
/// of each; an error naming the inputs without a column.
fn input_columns(
    file: &str,
    text: &str,
    t: &Table,
    names: &[&str],
    inputs: &[InputInfo],
) -> Result<(Vec<usize>, Vec<f64>), Box<Diagnostic>> {
    let hdr = |message: String, hint: String| at(file, text, t.header_at, "", message, hint);
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
    Ok((cols, factors))
}

/// Per order (velocity, acceleration), per input, the rate column given and its factor to SI.
type RateColumns = [Vec<Option<(usize, f64)>>; 2];

/// Rate columns: per order (velocity, acceleration), per input, the column given and its
/// factor to SI, if any.
fn rate_columns(
    file: &str,
    text: &str,
    t: &Table,
    names: &[&str],
    inputs: &[InputInfo],
) -> Result<RateColumns, Box<Diagnostic>> {
    let hdr = |message: String, hint: String| at(file, text, t.header_at, "", message, hint);
    let mut rates: [Vec<Option<(usize, f64)>>; 2] = [Vec::new(), Vec::new()];
    for (order, found) in [1, 2].into_iter().zip(&mut rates) {
        for inp in inputs {
            let candidates = derivative_names(&inp.name, order, is_storage(file));
            let present: Vec<usize> = candidates.iter().filter_map(|c| names.iter().position(|h| h == c)).collect();
            if present.len() > 1 {
                let given: Vec<&str> = present.iter().map(|&c| names[c]).collect();
                return Err(hdr(
                    format!(
                        "the {} of `{}` is given twice: {}",
                        ["velocity", "acceleration"][order - 1],
                        inp.name,
                        quote_list(&given)
                    ),
                    "keep one of these columns".into(),
                ));
            }
            let Some(&c) = present.first() else {
                found.push(None);
                continue;
            };
            let factor = match split_unit(&t.header[c]).1 {
                Some(u) => rate_factor(u, inp.quantity, order).ok_or_else(|| {
                    let units = match (inp.quantity, order) {
                        (Quantity::Angle, 1) => "`rad/s` or `deg/s`",
                        (Quantity::Angle, _) => "`rad/s^2` or `deg/s^2`",
                        (Quantity::Length, 1) => "`m/s`, `cm/s` or `mm/s`",
                        (Quantity::Length, _) => "`m/s^2`, `cm/s^2` or `mm/s^2`",
                        (Quantity::Dimensionless, _) => "none: leave the unit out",
                    };
                    hdr(
                        format!("column `{}`: unit `{u}` does not fit it", names[c]),
                        format!("units for this column: {units}"),
                    )
                })?,
                None if t.in_degrees && inp.quantity == Quantity::Angle => std::f64::consts::PI / 180.0,
                None => 1.0,
            };
            found.push(Some((c, factor)));
        }
    }
    Ok(rates)
}

/// How to differentiate a motion.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Smoothing {
    /// Interpolate the samples by a cubic spline with quintic ends ([`Ends::Quintic`]): exact for
    /// motions cubic in time, the end frames about as accurate as the others.
    #[default]
    Interpolate,
    /// Interpolate by a cubic spline with not-a-knot ends ([`Ends::NotAKnot`]), as before quintic
    /// ends were the default: exact for cubic motions, the end frames the least accurate.
    NotAKnot,
    /// Smooth with a cubic smoothing spline that halves the amplitude of a sine of this frequency
    /// (Hz): like a second-order Butterworth low-pass filter run forward and backward. The
    /// positions are smoothed too.
    Cutoff(f64),
}

/// How a derivative was computed from samples.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// The interpolating cubic spline with these ends.
    Spline(Ends),
    /// The cubic smoothing spline with this cutoff (Hz).
    Smoothing(f64),
}

/// Where an input's velocity or acceleration came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Source {
    /// A column of the motion file.
    File,
    /// Differentiating the positions.
    Positions(Method),
    /// Differentiating the velocities of the file (accelerations only).
    Velocities(Method),
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (of, method) = match self {
            Source::File => return f.write_str("from the file"),
            Source::Positions(m) => ("the positions", m),
            Source::Velocities(m) => ("the file's velocities", m),
        };
        match method {
            Method::Spline(Ends::Quintic) => write!(f, "by a cubic spline of {of} (quintic ends)"),
            Method::Spline(Ends::NotAKnot) => write!(f, "by a cubic spline of {of} (not-a-knot ends)"),
            Method::Smoothing(hz) => write!(f, "by a smoothing spline of {of} ({hz} Hz)"),
        }
    }
}

/// Generalized coordinates with their rates and accelerations at every frame of a motion.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionDerivatives {
    /// `q` (frames x n_q), as read or smoothed.
    pub q: Rows,
    /// `q̇` (m/s, rad/s).
    pub qd: Rows,
    /// `q̈` (m/s², rad/s²).
    pub qdd: Rows,
    /// Per input: where its velocity and its acceleration came from.
    pub sources: Vec<[Source; 2]>,
}

impl MotionDerivatives {
    /// One line saying which derivatives were used, for a run's summary: one phrase when every
    /// input's came from the same place, else one per input (`inputs` name them).
    pub fn summary(&self, inputs: &[InputInfo]) -> String {
        let say = |s: &[Source; 2]| format!("velocities {}, accelerations {}", s[0], s[1]);
        match self.sources.first() {
            Some(first) if self.sources.iter().all(|s| s == first) => say(first),
            None => "no inputs".into(),
            _ => self
                .sources
                .iter()
                .zip(inputs)
                .map(|(s, i)| format!("{}: {}", i.name, say(s)))
                .collect::<Vec<_>>()
                .join("; "),
        }
    }
}

impl Motion {
    /// Velocities and accelerations at the frames: those the file gives, the others from a
    /// cubic spline through (or, smoothing, near) each input's samples — an acceleration from
    /// the file's velocities where it has them. A one-frame motion is at rest.
    pub fn differentiate(&self, smoothing: Smoothing) -> Result<MotionDerivatives, SplineError> {
        let knots = Knots::new(&self.times)?;
        let (frames, nq) = (self.times.len(), self.q.width());
        let (method, lambda) = match smoothing {
            Smoothing::Interpolate => (Method::Spline(Ends::Quintic), 0.0),
            Smoothing::NotAKnot => (Method::Spline(Ends::NotAKnot), 0.0),
            Smoothing::Cutoff(hz) => {
                let lambda = if frames < 3 { 0.0 } else { smoothing_parameter(knots.mean_interval(), hz) };
                if !(hz > 0.0) || !hz.is_finite() || !lambda.is_finite() {
                    return Err(SplineError::Cutoff(hz));
                }
                let nyquist = 0.5 / knots.mean_interval();
                if frames >= 3 && hz > nyquist {
                    return Err(SplineError::AboveNyquist(hz, nyquist));
                }
                (Method::Smoothing(hz), lambda)
            }
        };
        let fit = |y: &[f64]| -> Result<Fit, SplineError> {
            match method {
                Method::Spline(ends) => knots.interpolate_with(y, ends),
                Method::Smoothing(_) => knots.smooth(y, lambda),
            }
        };
        let mut out = MotionDerivatives {
            q: Rows::zeros(frames, nq),
            qd: Rows::zeros(frames, nq),
            qdd: Rows::zeros(frames, nq),
            sources: Vec::with_capacity(nq),
        };
        for j in 0..nq {
            let y: Vec<f64> = self.q.iter().map(|f| f.get(j).copied().unwrap_or(f64::NAN)).collect();
            let positions = fit(&y)?;
            // a column of the file, one value per frame
            let given_v = self.velocities.get(j).and_then(Option::as_ref).filter(|v| v.len() == frames);
            let given_a = self.accelerations.get(j).and_then(Option::as_ref).filter(|v| v.len() == frames);
            let (qd, v_source) = match given_v {
                Some(v) => (v.clone(), Source::File),
                None => (positions.d1.clone(), Source::Positions(method)),
            };
            let (qdd, a_source) = match (given_a, given_v) {
                (Some(a), _) => (a.clone(), Source::File),
                (None, Some(v)) => (fit(v)?.d1, Source::Velocities(method)),
                (None, None) => (positions.d2.clone(), Source::Positions(method)),
            };
            // finite samples can still overflow a difference (1e308 next to −1e308)
            if let Some(i) =
                (0..frames).find(|&i| !(positions.value[i].is_finite() && qd[i].is_finite() && qdd[i].is_finite()))
            {
                let name = self.names.get(j).map_or_else(|| format!("input {}", j + 1), |n| format!("`{n}`"));
                return Err(SplineError::Values(format!(
                    "{name} at time {}: its velocity or acceleration is not finite; check the values and their units",
                    self.times[i]
                )));
            }
            for i in 0..frames {
                out.q[i][j] = positions.value[i];
                out.qd[i][j] = qd[i];
                out.qdd[i][j] = qdd[i];
            }
            out.sources.push([v_source, a_source]);
        }
        Ok(out)
    }
}

fn quote_list(v: &[&str]) -> String {
    v.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests;
