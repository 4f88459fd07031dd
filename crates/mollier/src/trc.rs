//! Marker trials: the `.trc` files of motion capture (as OpenSim and most capture systems write
//! them), marker positions in the laboratory frame over time.
//!
//! The layout, tab-separated:
//!
//! ```text
//! PathFileType  4  (X/Y/Z)  walk.trc
//! DataRate  CameraRate  NumFrames  NumMarkers  Units  OrigDataRate  ...
//! 60.00     60.00       151        41          mm     60.00         ...
//! Frame#  Time  R.ASIS        L.ASIS        ...
//!               X1  Y1  Z1    X2  Y2  Z2    ...
//!
//! 1       0.000 617.2 1055.3 170.8  639.6 1044.3 -88.9 ...
//! ```
//!
//! The unit (`mm`, `cm` or `m`) is the header's `Units`; positions are converted to m. A marker
//! that is missing in a frame (an empty cell, `NaN`, or a row that stops early) is `NaN` in
//! [`MarkerTrial::positions`]. Frame numbers must count up by one and times increase: a gap is
//! reported as missing frames, rather than silently stretched over. Every problem is located
//! (`file:line:col`).

use std::path::Path;

use mollier_format::{Diagnostic, Diagnostics, Location, human};

use crate::motion::{Rows, at};

/// A marker trial read from a `.trc` file, in SI.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerTrial {
    /// The file, as named.
    pub file: String,
    /// The markers' names, in file order.
    pub names: Vec<String>,
    /// Where each name is written in the file (for problems found later, such as a marker the
    /// model does not have).
    pub name_at: Vec<Location>,
    /// The header's `DataRate` (Hz).
    pub rate: f64,
    /// The header's `Units`, as written (`mm`, `cm` or `m`).
    pub units: String,
    /// Each frame's number (the `Frame#` column).
    pub frame_numbers: Vec<i64>,
    /// Each frame's time (s), increasing.
    pub times: Vec<f64>,
    /// Line of each frame in the file (from 1).
    pub lines: Vec<usize>,
    /// Positions (frames x 3 n_markers, m): marker `k` in columns `3k..3k+3`, `NaN` where it is
    /// missing.
    pub positions: Rows,
}

impl MarkerTrial {
    /// Number of frames.
    pub fn len(&self) -> usize {
        self.times.len()
    }
    /// `true` without frames.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
    /// Marker `k`'s position in frame `i` (m), `None` where it is missing.
    pub fn marker(&self, i: usize, k: usize) -> Option<[f64; 3]> {
        let p = &self.positions[i][3 * k..3 * k + 3];
        p.iter().all(|v| v.is_finite()).then(|| [p[0], p[1], p[2]])
    }
    /// A problem with frame `i`, placed at its line.
    pub fn frame_problem(&self, i: usize, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(&self.file, format!("frame {}", self.frame_numbers[i]), message).with_hint(hint);
        d.location = Some(Location { line: self.lines[i], column: 1 });
        d
    }
    /// A problem with marker `k`, placed at its name in the header.
    pub fn marker_problem(&self, k: usize, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::new(&self.file, format!("markers.{}", self.names[k]), message).with_hint(hint);
        d.location = Some(self.name_at[k]);
        d
    }
}

/// Metres per unit of a `.trc` header's `Units`.
fn metres_per(unit: &str) -> Option<f64> {
    match unit {
        "m" => Some(1.0),
        "cm" => Some(1e-2),
        "mm" => Some(1e-3),
        _ => None,
    }
}

/// Read a `.trc` file.
pub fn read_trc(path: &Path) -> Result<MarkerTrial, Diagnostics> {
    let file = path.display().to_string();
    let text = mollier_format::read_text(path, "marker file")?;
    parse_trc(&file, &text)
}

/// One line of the file: where it starts, its number (from 1) and its text without the break.
struct Line<'a> {
    start: usize,
    number: usize,
    text: &'a str,
}

/// The cells of a line: split at tabs (empty cells kept: a missing marker), or at runs of blanks
/// in a file without tabs. Each cell with its byte offset in the line.
fn cells(line: &str) -> Vec<(usize, &str)> {
    if line.contains('\t') {
        let mut out = Vec::new();
        let mut start = 0;
        for c in line.split('\t') {
            let lead = c.len() - c.trim_start().len();
            out.push((start + lead, c.trim()));
            start += c.len() + 1;
        }
        out
    } else {
        let mut out = Vec::new();
        let mut from = 0;
        for c in line.split_whitespace() {
            let i = from + line[from..].find(c).unwrap_or(0);
            out.push((i, c));
            from = i + c.len();
        }
        out
    }
}

/// Parse a `.trc` file's text.
pub fn parse_trc(file: &str, text: &str) -> Result<MarkerTrial, Diagnostics> {
    parse(file, text.strip_prefix('\u{feff}').unwrap_or(text)).map_err(|d| Diagnostics::one(*d))
}

fn parse(file: &str, text: &str) -> Result<MarkerTrial, Box<Diagnostic>> {
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').enumerate().map(|(i, l)| {
        let start = offset;
        offset += l.len();
        Line { start, number: i + 1, text: l.trim_end_matches(['\n', '\r']) }
    });
    let header = header(file, text, &mut lines)?;
    let frames = frames(file, text, &header, lines)?;
    let Header { names, name_at, rate, units, .. } = header;
    let Frames { frame_numbers, times, lines: line_numbers, positions } = frames;
    Ok(MarkerTrial {
        file: file.to_string(),
        names,
        name_at,
        rate,
        units: units.to_string(),
        frame_numbers,
        times,
        lines: line_numbers,
        positions,
    })
}

/// What the five header lines give.
struct Header<'a> {
    names: Vec<String>,
    name_at: Vec<Location>,
    rate: f64,
    units: &'a str,
    /// Metres per unit of the file.
    scale: f64,
    n_frames: usize,
    /// Where `NumFrames`'s value is (byte offset).
    n_frames_at: usize,
}

/// The frames' rows: numbers, times (s), the lines they are on, and the markers' positions (m).
struct Frames {
    frame_numbers: Vec<i64>,
    times: Vec<f64>,
    lines: Vec<usize>,
    positions: Rows,
}

const LAYOUT: &str = "a .trc file starts with 5 header lines: PathFileType, the keys (DataRate ... Units ...), \
                      their values, Frame# Time and the marker names, and X1 Y1 Z1 ...";

/// The header's five lines, checked: units, rate, counts, marker names.
fn header<'a>(
    file: &str,
    text: &'a str,
    lines: &mut impl Iterator<Item = Line<'a>>,
) -> Result<Header<'a>, Box<Diagnostic>> {
    let err = |offset: usize, path: &str, message: String, hint: &str| at(file, text, offset, path, message, hint);
    let mut next_header = |what: &str| {
        lines.next().ok_or_else(|| err(text.len(), "", format!("the file ends before the header's {what}"), LAYOUT))
    };
    let first = next_header("first line")?;
    if !first.text.trim_start().starts_with("PathFileType") {
        return Err(err(first.start, "", "not a .trc file: the first line is not `PathFileType ...`".into(), LAYOUT));
    }
    let keys = next_header("keys")?;
    let values = next_header("values")?;
    let names_line = next_header("marker names")?;
    let axes = next_header("coordinate labels")?;
    let keys_at = keys.start;
    let keys: Vec<(usize, &str)> = cells(keys.text);
    let vals: Vec<(usize, &str)> = cells(values.text);
    let value = |key: &str| -> Result<(usize, &str), Box<Diagnostic>> {
        let k = keys
            .iter()
            .position(|(_, k)| k.eq_ignore_ascii_case(key))
            .ok_or_else(|| err(keys_at, "", format!("no `{key}` in the header's keys"), LAYOUT))?;
        vals.get(k).copied().filter(|(_, v)| !v.is_empty()).map(|(o, v)| (values.start + o, v)).ok_or_else(|| {
            err(values.start, key, format!("no value for `{key}` under the header's keys"), "give one value per key")
        })
    };
    let (units_at, units) = value("Units")?;
    let Some(scale) = metres_per(units) else {
        return Err(err(
            units_at,
            "Units",
            format!("unknown unit `{units}`"),
            "the header's Units is mm, cm or m (case matters: M is not m)",
        ));
    };
    let (rate_at, rate_text) = value("DataRate")?;
    let rate = match rate_text.parse::<f64>() {
        Ok(r) if r.is_finite() && r > 0.0 => r,
        _ => {
            return Err(err(
                rate_at,
                "DataRate",
                format!("not a rate: `{rate_text}`"),
                "the frames per second, e.g. 60",
            ));
        }
    };
    let count = |key: &str| -> Result<(usize, usize), Box<Diagnostic>> {
        let (o, v) = value(key)?;
        v.parse::<usize>().map(|n| (o, n)).map_err(|_| err(o, key, format!("not a count: `{v}`"), "a whole number"))
    };
    let (n_frames_at, n_frames) = count("NumFrames")?;
    let (n_markers_at, n_markers) = count("NumMarkers")?;

    let name_cells = cells(names_line.text);
    if name_cells.len() < 2 || !name_cells[0].1.starts_with("Frame") || !name_cells[1].1.eq_ignore_ascii_case("time") {
        return Err(err(names_line.start, "", "the fourth line is not `Frame#  Time  <marker> ...`".into(), LAYOUT));
    }
    let mut names = Vec::new();
    let mut name_at = Vec::new();
    for &(o, n) in name_cells[2..].iter().filter(|(_, n)| !n.is_empty()) {
        if names.iter().any(|m: &String| m == n) {
            return Err(err(names_line.start + o, "", format!("marker `{n}` appears twice"), "rename or delete one"));
        }
        names.push(n.to_string());
        name_at.push(Location { line: names_line.number, column: names_line.text[..o].chars().count() + 1 });
    }
    if names.len() != n_markers {
        return Err(err(
            n_markers_at,
            "NumMarkers",
            format!("NumMarkers is {n_markers} but the header names {} markers", names.len()),
            "make NumMarkers the number of marker names on the fourth line",
        ));
    }
    if !cells(axes.text).iter().any(|(_, c)| c.starts_with('X')) {
        return Err(err(axes.start, "", "the fifth line is not the coordinate labels `X1 Y1 Z1 ...`".into(), LAYOUT));
    }

    Ok(Header { names, name_at, rate, units, scale, n_frames, n_frames_at })
}

/// The rows after the header, checked: frame numbers counting up by one, increasing times,
/// finite coordinates (a marker missing where a cell is empty or NaN).
fn frames<'a>(
    file: &str,
    text: &str,
    header: &Header<'_>,
    lines: impl Iterator<Item = Line<'a>>,
) -> Result<Frames, Box<Diagnostic>> {
    let err = |offset: usize, path: &str, message: String, hint: &str| at(file, text, offset, path, message, hint);
    let Header { names, scale, n_frames, n_frames_at, .. } = header;
    let (scale, n_frames, n_frames_at) = (*scale, *n_frames, *n_frames_at);
    let width = 3 * names.len();
    let mut positions = Rows::new(width);
    let (mut frame_numbers, mut times, mut line_numbers) = (Vec::new(), Vec::new(), Vec::new());
    let mut row = vec![f64::NAN; width];
    for line in lines.filter(|l| !l.text.trim().is_empty()) {
        let cs = cells(line.text);
        let cell_err = |c: usize, path: &str, message: String, hint: &str| {
            err(line.start + cs.get(c).map_or(0, |x| x.0), path, message, hint)
        };
        if cs.len() < 2 || cs[1].1.is_empty() {
            return Err(err(
                line.start,
                "",
                "a row without its frame number and time".into(),
                "rows start `Frame# Time`",
            ));
        }
        let number = match cs[0].1.parse::<i64>() {
            Ok(n) => n,
            Err(_) => {
                return Err(cell_err(0, "Frame#", format!("not a frame number: `{}`", cs[0].1), "a whole number"));
            }
        };
        let time = match cs[1].1.parse::<f64>() {
            Ok(t) if t.is_finite() && t.abs() <= 1e9 => t,
            _ => {
                return Err(cell_err(
                    1,
                    "Time",
                    format!("not a time: `{}`", cs[1].1),
                    "the time in s, a finite number",
                ));
            }
        };
        if let (Some(&prev_n), Some(&prev_t)) = (frame_numbers.last(), times.last()) {
            if number != prev_n + 1 {
                let message = if number > prev_n + 1 {
                    format!("frames missing: {} follows {prev_n}", number)
                } else {
                    format!("frame {number} follows {prev_n}")
                };
                return Err(cell_err(
                    0,
                    "Frame#",
                    message,
                    "the frames count up by one; give every frame, with its missing markers left empty",
                ));
            }
            if !(time > prev_t) {
                return Err(cell_err(
                    1,
                    "Time",
                    format!("time does not increase ({} after {})", human(time), human(prev_t)),
                    "each row is one instant, in order",
                ));
            }
        }
        if cs.len() > 2 + width && cs[2 + width..].iter().any(|(_, c)| !c.is_empty()) {
            return Err(cell_err(
                2 + width,
                "",
                format!("{} values for {} markers", cs.len() - 2, names.len()),
                "three coordinates per marker named in the header",
            ));
        }
        row.fill(f64::NAN);
        for (j, &(_, c)) in cs.iter().enumerate().skip(2).take(width) {
            let k = (j - 2) / 3;
            let path = format!("{}.{}", names[k], ["X", "Y", "Z"][(j - 2) % 3]);
            if c.is_empty() || c.eq_ignore_ascii_case("nan") {
                continue;
            }
            match c.parse::<f64>() {
                Ok(v) if v.is_finite() && (v * scale).abs() <= mollier_format::MAX_MAGNITUDE => row[j - 2] = v * scale,
                _ => {
                    return Err(cell_err(
                        j,
                        &path,
                        format!("not a coordinate: `{c}`"),
                        "a finite number, or an empty cell or NaN where the marker is missing",
                    ));
                }
            }
        }
        // a marker is there whole or not at all
        for k in 0..names.len() {
            if row[3 * k..3 * k + 3].iter().any(|v| v.is_nan()) {
                row[3 * k..3 * k + 3].fill(f64::NAN);
            }
        }
        positions.push(&row);
        frame_numbers.push(number);
        times.push(time);
        line_numbers.push(line.number);
    }
    if times.is_empty() {
        return Err(err(text.len(), "", "no frames after the header".into(), "add rows `Frame# Time X1 Y1 Z1 ...`"));
    }
    if times.len() != n_frames {
        return Err(err(
            n_frames_at,
            "NumFrames",
            format!("NumFrames is {n_frames} but the file has {} frames", times.len()),
            "frames are missing, or NumFrames is wrong",
        ));
    }
    Ok(Frames { frame_numbers, times, lines: line_numbers, positions })
}
