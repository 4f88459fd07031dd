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

fn located(file: &str, line: usize, message: String, hint: &str) -> Diagnostics {
    let mut d = Diagnostic::new(file, "", message).with_hint(hint);
    d.location = Some(Location { line, column: 1 });
    Diagnostics::one(d)
}

/// The coordinate a column label names: `SC_y`, or OpenSim 4's `/jointset/sc1/SC_y/value`;
/// `None` for other columns (speeds, forces, ...).
fn coordinate_of<'a>(label: &'a str, names: &[&str]) -> Option<&'a str> {
    let l = label.trim();
    let l = l.strip_suffix("/value").unwrap_or(l);
    let last = l.rsplit('/').next().unwrap_or(l);
    names.contains(&last).then_some(last)
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
        let degrees = lines[..end].iter().any(|l| l.replace(' ', "").eq_ignore_ascii_case("inDegrees=yes"));
        let labels_at = (end + 1..lines.len()).find(|&i| !lines[i].trim().is_empty()).ok_or_else(|| {
            located(
                file,
                end + 1,
                "no column labels after `endheader`".into(),
                "the line after `endheader` names the columns: time, then the coordinates",
            )
        })?;
        let labels: Vec<&str> = lines[labels_at].split('\t').flat_map(|c| c.split_whitespace()).collect();
        if !labels.first().is_some_and(|l| l.eq_ignore_ascii_case("time")) {
            return Err(located(
                file,
                labels_at + 1,
                "the first column is not `time`".into(),
                "OpenSim motions start with a time column",
            ));
        }
        let names: Vec<&str> = self.model.coordinates.iter().map(|c| c.name.as_str()).collect();
        // the column of each coordinate, if any
        let mut column = vec![None; names.len()];
        for (k, l) in labels.iter().enumerate().skip(1) {
            if let Some(n) = coordinate_of(l, &names) {
                let c = names.iter().position(|x| *x == n).expect("found above");
                column[c].get_or_insert(k);
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
