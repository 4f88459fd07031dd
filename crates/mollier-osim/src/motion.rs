//! OpenSim coordinate motions (`.mot`, `.sto`: a header ending in `endheader`, a line of column
//! labels, rows of numbers) turned into motions of the imported model's inputs (CSV, SI), so that
//! an OpenSim motion drives the imported model: each input is its axis's function of the
//! coordinate minus its value in the default pose, couplers applied.

use std::fmt::Write as _;

use mollier_format::{Diagnostic, Diagnostics, Location};

use crate::Import;
use crate::model::AxisValue;

/// Coordinates over time, one column per coordinate of the model (rad or m).
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinateMotion {
    /// Times (s).
    pub times: Vec<f64>,
    /// Per frame, one value per coordinate of the model, in its order (SI).
    pub q: Vec<Vec<f64>>,
    /// Coordinates the file has no column for: held at their default value.
    pub missing: Vec<String>,
}

fn located(file: &str, line: usize, column: usize, message: String, hint: &str) -> Diagnostics {
    let mut d = Diagnostic::new(file, "", message).with_hint(hint);
    d.location = Some(Location { line, column });
    Diagnostics::one(d)
}

/// What a column label names.
#[derive(Debug, PartialEq)]
enum Column<'a> {
    /// A coordinate's value: `SC_y`, or OpenSim 4's `/jointset/sc1/SC_y/value`.
    Value(&'a str),
    /// Another state of the model that a motion may carry and the inputs do not need: a
    /// coordinate's speed (`/jointset/J/C/speed`) or a muscle's state (`/forceset/M/activation`).
    Ignored,
    /// Nothing of the model.
    Unknown,
}

/// What `label` names, given the model's coordinate and muscle names.
fn column_of<'a>(label: &'a str, coordinates: &[&str], muscles: &[&str]) -> Column<'a> {
    let l = label.trim();
    let parts: Vec<&str> = l.split('/').collect();
    let last = parts.last().copied().unwrap_or(l);
    if coordinates.contains(&last) {
        return Column::Value(last);
    }
    if let [.., c, what] = parts.as_slice() {
        if coordinates.contains(c) {
            return match *what {
                "value" => Column::Value(c),
                "speed" | "acceleration" => Column::Ignored,
                _ => Column::Unknown,
            };
        }
    }
    if let ["", "forceset", m, _] = parts.as_slice() {
        if muscles.contains(m) {
            return Column::Ignored;
        }
    }
    Column::Unknown
}

/// The header's `inDegrees`: `Ok(None)` when it is not given; its line (1-based) when its value
/// is neither `yes` nor `no`.
fn in_degrees(header: &[&str]) -> Result<Option<bool>, (usize, String)> {
    let mut out = None;
    for (i, l) in header.iter().enumerate() {
        let compact: String = l.chars().filter(|c| !c.is_whitespace()).collect();
        let Some((key, value)) = compact.split_once('=') else { continue };
        if !key.eq_ignore_ascii_case("inDegrees") {
            continue;
        }
        out = Some(match value.to_ascii_lowercase().as_str() {
            "yes" => true,
            "no" => false,
            _ => return Err((i + 1, value.to_string())),
        });
    }
    Ok(out)
}

/// The labels of a line (split at tabs and spaces) with their 1-based columns (characters).
fn labels_with_columns(line: &str) -> Vec<(&str, usize)> {
    let mut out = Vec::new();
    let mut start: Option<(usize, usize)> = None; // byte, column
    for (col, (b, ch)) in line.char_indices().enumerate() {
        match (ch.is_whitespace(), start) {
            (true, Some((s, c))) => {
                out.push((&line[s..b], c));
                start = None;
            }
            (false, None) => start = Some((b, col + 1)),
            _ => {}
        }
    }
    if let Some((s, c)) = start {
        out.push((&line[s..], c));
    }
    out
}

impl Import {
    /// Whether coordinate `c` turns a rotation axis (its values are angles).
    fn rotational(&self, c: usize) -> bool {
        self.model.joints.iter().flat_map(|j| &j.rotations).any(|a| matches!(a.value, AxisValue::Coord(k, _) if k == c))
    }

    /// Read an OpenSim coordinate motion; `inDegrees=yes` converts the coordinates that turn a
    /// rotation axis from degrees. Problems are placed at their line.
    pub fn read_coordinate_motion(&self, file: &str, text: &str) -> Result<CoordinateMotion, Diagnostics> {
        let lines: Vec<&str> = text.lines().collect();
        let end = lines.iter().position(|l| l.trim().eq_ignore_ascii_case("endheader")).ok_or_else(|| {
            Diagnostics::one(
                Diagnostic::new(file, "", "no `endheader` line")
                    .with_hint("an OpenSim .mot or .sto file has a header ending in a line `endheader`"),
            )
        })?;
        let degrees = match in_degrees(&lines[..end]) {
            Ok(d) => d.unwrap_or(false),
            Err((line, value)) => {
                return Err(located(
                    file,
                    line,
                    1,
                    format!("`inDegrees={value}`: neither yes nor no"),
                    "write inDegrees=yes (angles in degrees) or inDegrees=no (radians)",
                ));
            }
        };
        let labels_at = (end + 1..lines.len()).find(|&i| !lines[i].trim().is_empty()).ok_or_else(|| {
            located(
                file,
                end + 1,
                1,
                "no column labels after `endheader`".into(),
                "the line after `endheader` names the columns: time, then the coordinates",
            )
        })?;
        let placed = labels_with_columns(lines[labels_at]);
        let labels: Vec<&str> = placed.iter().map(|(l, _)| *l).collect();
        if !labels.first().is_some_and(|l| l.eq_ignore_ascii_case("time")) {
            return Err(located(
                file,
                labels_at + 1,
                1,
                "the first column is not `time`".into(),
                "OpenSim motions start with a time column",
            ));
        }
        let names: Vec<&str> = self.model.coordinates.iter().map(|c| c.name.as_str()).collect();
        let muscles: Vec<&str> = self.model.muscles.iter().map(|m| m.name.as_str()).collect();
        // the column of each coordinate, if any
        let mut column: Vec<Option<usize>> = vec![None; names.len()];
        for (k, (l, col)) in placed.iter().enumerate().skip(1) {
            match column_of(l, &names, &muscles) {
                Column::Value(n) => {
                    let c = names.iter().position(|x| *x == n).expect("found above");
                    if let Some(first) = column[c] {
                        return Err(located(
                            file,
                            labels_at + 1,
                            *col,
                            format!("column `{l}` is coordinate `{n}` again (column {} is too)", first + 1),
                            "give each coordinate one column",
                        ));
                    }
                    column[c] = Some(k);
                }
                Column::Ignored => {}
                Column::Unknown => {
                    return Err(located(
                        file,
                        labels_at + 1,
                        *col,
                        format!("column `{l}` is not a coordinate of the model"),
                        "name a coordinate (`knee_angle_r` or `/jointset/knee_r/knee_angle_r/value`), or remove the column",
                    ));
                }
            }
        }
        let missing: Vec<String> =
            (0..names.len()).filter(|c| column[*c].is_none()).map(|c| names[c].to_string()).collect();
        let mut times = Vec::new();
        let mut q = Vec::new();
        for (i, line) in lines.iter().enumerate().skip(labels_at + 1) {
            if line.trim().is_empty() {
                continue;
            }
            let cells: Vec<&str> = line.split_whitespace().collect();
            if cells.len() != labels.len() {
                return Err(located(
                    file,
                    i + 1,
                    1,
                    format!("{} values for {} columns", cells.len(), labels.len()),
                    "give one value per column",
                ));
            }
            let mut row = Vec::with_capacity(cells.len());
            for (k, cell) in cells.iter().enumerate() {
                match cell.parse::<f64>() {
                    Ok(v) if v.is_finite() && v.abs() <= 1e15 => row.push(v),
                    _ => {
                        return Err(located(
                            file,
                            i + 1,
                            1,
                            format!("column `{}`: `{cell}` is not a finite number", labels[k]),
                            "write numbers",
                        ));
                    }
                }
            }
            times.push(row[0]);
            q.push(
                (0..names.len())
                    .map(|c| match column[c] {
                        Some(k) if degrees && self.rotational(c) => row[k].to_radians(),
                        Some(k) => row[k],
                        None => self.model.coordinates[c].default,
                    })
                    .collect(),
            );
        }
        if times.is_empty() {
            return Err(located(
                file,
                labels_at + 1,
                1,
                "no rows after the column labels".into(),
                "give at least one frame",
            ));
        }
        Ok(CoordinateMotion { times, q, missing })
    }

    /// The motion of the model's inputs as a Mollier motion file (CSV, SI; `source` is named in a
    /// comment).
    pub fn motion_csv(&self, motion: &CoordinateMotion, source: &str) -> String {
        let mut s = format!("# inputs of the model imported by `mollier import`, from the OpenSim motion {source}\n");
        if !motion.missing.is_empty() {
            let _ = writeln!(s, "# held at their default values (no column): {}", motion.missing.join(", "));
        }
        s.push_str("time");
        for d in &self.inputs {
            let _ = write!(s, ",{}", d.name);
        }
        s.push('\n');
        for (t, q) in motion.times.iter().zip(&motion.q) {
            let _ = write!(s, "{t}");
            for v in self.inputs_from_coordinates(q) {
                let _ = write!(s, ",{v}");
            }
            s.push('\n');
        }
        s
    }
}
