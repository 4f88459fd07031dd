//! Output directories written as a unit, shared by every front end (the `mollier` command now,
//! language bindings and viewers later).
//!
//! The contract (docs/model-format.md, "Output directories"):
//! - a run writes into a temporary sibling of its directory, `.NAME.partial-PID`, and renames it
//!   into place when everything is written ([`OutputDir::commit`]); the old directory is replaced
//!   whole, so no file of an earlier run survives;
//! - `summary.json` is written last and carries `"complete": true` and the list of `files`;
//!   `timing.json` holds every wall-clock figure, so that all other files are byte-identical
//!   across reruns and thread counts;
//! - tables are streamed: rows go to the temporary files as they are solved (memory does not
//!   grow with the motion);
//! - a run that fails, or is killed, before the rename leaves the previous complete output (or
//!   nothing); a writer dropped before [`OutputDir::commit`] removes its temporary directory.
//!
//! A killed run can leave its temporary directory behind; the next run into the same directory
//! removes it (Linux: when its process is gone). A run killed between the two renames of the
//! swap leaves the old output as `.NAME.old-PID`, which the next run puts back first.
//!
//! An existing directory is replaced only if it is empty or carries [`MARKER`], the file a commit
//! writes with [`MARKER_TAG`] in it: a run never deletes a directory of other files given by
//! mistake as `--out`, whatever they are called (a `summary.json` of one's own is no marker).
//! Directories written before the marker existed (a `summary.json` with `"complete": true`, no
//! marker) are refused too: telling them from a folder that happens to hold such a file is not
//! possible, and refusing loses nothing.
//!
//! Single files ([`write_file`]: a page of `mollier view`, an imported model) are written only
//! over regular files: a symbolic link, a directory, a FIFO, a socket or a device at the path is
//! refused ([`OutputError::NotAFile`]), a link replaced (itself, never what it points to) only
//! with [`Replace::Links`].

use std::fs;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};

use crate::Column;

/// The file written last, with `"complete": true`.
pub const SUMMARY: &str = "summary.json";
/// Wall-clock figures of the run (never in any other file).
pub const TIMING: &str = "timing.json";
/// The marker of an output directory of Mollier, written at commit: the only thing that lets a
/// later run replace the directory.
pub const MARKER: &str = ".mollier-output";
/// The marker's text: the format tag and its version (one line).
pub const MARKER_TAG: &str = "mollier-output 1";

/// Why an output directory cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    /// A file or directory operation failed.
    #[error("cannot write `{}`: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// The target exists and is not an earlier output: it is not replaced.
    #[error(
        "`{}` exists and is not an output directory of Mollier (it is not empty and has no .mollier-output marker{}): nothing in it was changed; remove it yourself or choose another directory",
        path.display(),
        if *old_summary { "; its summary.json may be an output of a Mollier from before the marker, which is not replaced" } else { "" }
    )]
    NotAnOutput {
        /// The target directory.
        path: PathBuf,
        /// It holds a `summary.json`, as an output written before the marker does.
        old_summary: bool,
    },
    /// A file output's path holds something other than a regular file: it is not replaced.
    #[error("`{}` exists and is {kind}: Mollier writes only regular files and left it as it is; choose another path{}", path.display(),
        if kind == &LINK { " (or allow replacing the link itself, `--force`)" } else { "" })]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there: `a symbolic link`, `a directory`, `a FIFO`, `a device`, ...
        kind: &'static str,
    },
    /// The target has no name of its own (`.`, `..`, `/`).
    #[error("`{}` cannot be replaced as a whole: name a directory (e.g. `results`)", path.display())]
    NoName {
        /// The target as given.
        path: PathBuf,
    },
    /// A table or file name that would leave the directory, or is written twice.
    #[error("`{name}` is not a new file name inside the output directory")]
    BadName {
        /// The name.
        name: String,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> OutputError + '_ {
    move |source| OutputError::Io { path: path.to_path_buf(), source }
}

/// What [`write_file`] may replace besides a regular file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Replace {
    /// Nothing: an existing path must be a regular file (the default).
    #[default]
    Files,
    /// Also a symbolic link: the link itself is replaced by the new file; what it points to is
    /// left as it was. A directory, FIFO, socket or device is still refused.
    Links,
}

const LINK: &str = "a symbolic link";

/// What is at `path` when it is not a regular file (`None`: nothing, or a regular file).
fn not_a_file(path: &Path) -> Result<Option<&'static str>, OutputError> {
    let t = match fs::symlink_metadata(path) {
        Ok(m) => m.file_type(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(OutputError::Io { path: path.to_path_buf(), source: e }),
    };
    Ok(if t.is_file() {
        None
    } else if t.is_symlink() {
        Some(LINK)
    } else if t.is_dir() {
        Some(DIRECTORY)
    } else {
        Some(special_kind(&t))
    })
}

const DIRECTORY: &str = "a directory";

#[cfg(unix)]
fn special_kind(t: &fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &fs::FileType) -> &'static str {
    "not a regular file"
}

/// Check, before anything is written, that [`write_file`] may write `path`: it is absent or a
/// regular file (or, with [`Replace::Links`], a symbolic link), and has a name.
pub fn check_file_target(path: &Path, replace: Replace) -> Result<(), OutputError> {
    if path.file_name().is_none() {
        return Err(OutputError::NoName { path: path.to_path_buf() });
    }
    match not_a_file(path)? {
        None => Ok(()),
        Some(LINK) if replace == Replace::Links => Ok(()),
        Some(kind) => Err(OutputError::NotAFile { path: path.to_path_buf(), kind }),
    }
}

/// Write one file as a unit (a page of `mollier view`, say): into a new temporary sibling
/// `.NAME.partial-PID`, renamed into place when it is complete, so that `path` holds the whole
/// new file, or what it held before. Only a regular file is replaced (see [`Replace`]), and the
/// temporary file is created new (a link planted at its name is removed, never followed).
pub fn write_file(path: &Path, bytes: &[u8], replace: Replace) -> Result<(), OutputError> {
    check_file_target(path, replace)?;
    let name = path.file_name().ok_or_else(|| OutputError::NoName { path: path.to_path_buf() })?;
    let temp = path.with_file_name(format!(".{}.partial-{}", name.to_string_lossy(), std::process::id()));
    if not_a_file(&temp)?.is_some_and(|k| k != LINK) {
        return Err(OutputError::NotAFile { path: temp, kind: "in the way of the temporary file" });
    }
    let _ = fs::remove_file(&temp);
    let result = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        // what is at the path may have changed while the file was written
        .and_then(|()| check_file_target(path, replace).map_err(io::Error::other))
        .and_then(|()| fs::rename(&temp, path));
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.map_err(io_err(path))
}

/// A number in a table: the shortest text that reads back to the same `f64`, exponent notation
/// far from 1, `0` for either zero, and an empty cell for NaN or an infinity (never a silent NaN).
pub fn number(v: f64) -> String {
    let mut text = Vec::new();
    write_number(v, &mut text);
    String::from_utf8(text).expect("a number's text is ASCII")
}

/// [`number`] appended to `out`: laid out as `{}` for magnitudes in [1e-5, 1e15) and as `{:e}`
/// outside, from ryu's shortest round-trip digits, without an allocation per cell (a kinematic
/// frame of the shoulder writes 2200 numbers). The digits are the standard library's but for a
/// value exactly halfway between two shortest texts, where ryu takes the even last digit.
pub fn write_number(v: f64, out: &mut Vec<u8>) {
    if !v.is_finite() {
        return;
    }
    if v == 0.0 {
        out.push(b'0');
        return;
    }
    let mut buffer = ryu::Buffer::new();
    let text = buffer.format_finite(v).as_bytes();
    let a = v.abs();
    if !(1e15..1e16).contains(&a) {
        // ryu lays out [1e-5, 1e16) as `{}` does but for a trailing `.0` on whole numbers, and
        // the rest as `{:e}` does
        out.extend_from_slice(text.strip_suffix(b".0").unwrap_or(text));
        return;
    }
    // [1e15, 1e16): ryu writes the 16 integer digits out ("1690060720831323.2",
    // "1500000000000000.0"), `{:e}` the significant ones as d.ddd…e15
    let (mut digits, mut n) = ([0u8; 24], 0);
    for &c in text.iter().filter(|c| c.is_ascii_digit()) {
        digits[n] = c;
        n += 1;
    }
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    if v < 0.0 {
        out.push(b'-');
    }
    out.push(digits[0]);
    if n > 1 {
        out.push(b'.');
        out.extend_from_slice(&digits[1..n]);
    }
    out.extend_from_slice(b"e15");
}

/// How tables are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TableFormat {
    /// CSV, `name.csv`: a header line, then comma-separated rows.
    #[default]
    Csv,
    /// OpenSim storage, `name.sto`: a header (the table's name, `version=1`, `nRows`, `nColumns`,
    /// `inDegrees=no`, `endheader`), then the column labels and the rows, tab-separated — what
    /// OpenSim's GUI and scripts load. Angles stay in rad.
    Sto,
}

/// Digits of the `nRows` field of an STO header, written when the table is closed.
const ROWS_DIGITS: usize = 12;

/// A table being written: handle from [`OutputDir::table`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableId(usize);

struct OpenTable {
    path: PathBuf,
    file: BufWriter<fs::File>,
    /// Lays out a text record (the header, a row of names) with the table's quoting, into
    /// `scratch`, whose bytes then go to `file`; rows of numbers, which never need quoting, go
    /// straight.
    text: csv::WriterBuilder,
    scratch: Vec<u8>,
    /// Fields of every record: the header's.
    fields: usize,
    delimiter: u8,
    /// Rows written.
    rows: usize,
    /// Byte offset of the `nRows` digits of an STO header.
    rows_at: Option<u64>,
}

/// An output directory being written; see the module's documentation for the contract.
pub struct OutputDir {
    target: PathBuf,
    staging: PathBuf,
    files: Vec<String>,
    tables: Vec<OpenTable>,
    format: TableFormat,
    committed: bool,
    /// A row of numbers' text, kept from row to row.
    cells: Vec<u8>,
}

impl OutputDir {
    /// Start writing the output directory `target`: checks that it may be replaced (absent,
    /// empty, or an earlier output) and creates the temporary sibling the run writes into.
    pub fn create(target: &Path) -> Result<Self, OutputError> {
        let name = target
            .file_name()
            .filter(|n| *n != "." && *n != "..")
            .ok_or_else(|| OutputError::NoName { path: target.to_path_buf() })?
            .to_string_lossy()
            .into_owned();
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(io_err(&parent))?;
        recover(&parent, &name, target);
        match not_a_file(target)? {
            None if target.exists() => {
                return Err(OutputError::NotAFile { path: target.to_path_buf(), kind: "a file, not a directory" });
            }
            None => {}
            Some(DIRECTORY) => {
                let empty = fs::read_dir(target).map_err(io_err(target))?.next().is_none();
                if !empty && !is_marked(target) {
                    let old_summary = target.join(SUMMARY).is_file();
                    return Err(OutputError::NotAnOutput { path: target.to_path_buf(), old_summary });
                }
            }
            Some(kind) => return Err(OutputError::NotAFile { path: target.to_path_buf(), kind }),
        }
        let staging = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if staging.exists() {
            fs::remove_dir_all(&staging).map_err(io_err(&staging))?;
        }
        fs::create_dir(&staging).map_err(io_err(&staging))?;
        Ok(Self {
            target: target.to_path_buf(),
            staging,
            files: Vec::new(),
            tables: Vec::new(),
            format: TableFormat::Csv,
            committed: false,
            cells: Vec::new(),
        })
    }

    /// Write the tables opened from now on in `format` (CSV by default).
    pub fn with_format(mut self, format: TableFormat) -> Self {
        self.format = format;
        self
    }

    /// The file a table called `name` (`forces.csv`) is written to in this directory's format:
    /// `forces.sto` for [`TableFormat::Sto`].
    pub fn table_file(&self, name: &str) -> String {
        match (self.format, name.strip_suffix(".csv")) {
            (TableFormat::Sto, Some(stem)) => format!("{stem}.sto"),
            _ => name.to_string(),
        }
    }

    /// The directory the results go to once committed.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The temporary directory being written.
    pub fn staging(&self) -> &Path {
        &self.staging
    }

    /// The path in the temporary directory for a file that another writer fills (a plot, say),
    /// its parent directories created; `name` is relative (`plots/forces.svg`) and is listed in
    /// the summary's `files`.
    pub fn file(&mut self, name: &str) -> Result<PathBuf, OutputError> {
        let relative = Path::new(name);
        let inside = relative.components().all(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || name.is_empty() || self.files.iter().any(|f| f == name) || name == SUMMARY || name == TIMING {
            return Err(OutputError::BadName { name: name.to_string() });
        }
        let path = self.staging.join(relative);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        self.files.push(name.to_string());
        Ok(path)
    }

    /// Open a table `name` (`*.csv`; `*.sto` in [`TableFormat::Sto`], see [`Self::table_file`])
    /// with its header (and, before it, a `# comment` line when `comment` is given: motion files
    /// skip such lines); rows follow with [`Self::row`].
    pub fn table<S: AsRef<str>>(
        &mut self,
        name: &str,
        comment: Option<&str>,
        header: impl IntoIterator<Item = S>,
    ) -> Result<TableId, OutputError> {
        self.open_table(name, comment, header, self.format)
    }

    /// Open a table of text `name` (always CSV, as `# comment` lines and text cells are not
    /// OpenSim storage) with its header; rows follow with [`Self::row`].
    pub fn text_table<S: AsRef<str>>(
        &mut self,
        name: &str,
        header: impl IntoIterator<Item = S>,
    ) -> Result<TableId, OutputError> {
        self.open_table(name, None, header, TableFormat::Csv)
    }

    fn open_table<S: AsRef<str>>(
        &mut self,
        name: &str,
        comment: Option<&str>,
        header: impl IntoIterator<Item = S>,
        format: TableFormat,
    ) -> Result<TableId, OutputError> {
        let name = if format == TableFormat::Csv { name.to_string() } else { self.table_file(name) };
        let path = self.file(&name)?;
        let mut file = BufWriter::new(fs::File::create(&path).map_err(io_err(&path))?);
        let header: Vec<String> = header.into_iter().map(|h| h.as_ref().to_string()).collect();
        let mut rows_at = None;
        let mut builder = csv::WriterBuilder::new();
        let mut delimiter = b',';
        match format {
            TableFormat::Csv => {
                if let Some(c) = comment {
                    writeln!(file, "# {c}").map_err(io_err(&path))?;
                }
            }
            TableFormat::Sto => {
                let stem = name.strip_suffix(".sto").unwrap_or(&name);
                let mut head = format!("{stem}\nversion=1\n");
                // the row count is known when the table is closed: a fixed-width field to fill then
                rows_at = Some((head.len() + "nRows=".len()) as u64);
                head += &format!("nRows={}\nnColumns={}\ninDegrees=no\n", "0".repeat(ROWS_DIGITS), header.len());
                if let Some(c) = comment {
                    head += &format!("# {c}\n");
                }
                head += "endheader\n";
                file.write_all(head.as_bytes()).map_err(io_err(&path))?;
                delimiter = b'\t';
                builder.delimiter(delimiter).quote_style(csv::QuoteStyle::Never);
            }
        }
        let mut t = OpenTable {
            path,
            file,
            text: builder,
            scratch: Vec::new(),
            fields: header.len(),
            delimiter,
            rows: 0,
            rows_at,
        };
        t.text_record(&header)?;
        self.tables.push(t);
        Ok(TableId(self.tables.len() - 1))
    }

    /// Append a row of cells to a table (as many as its header has).
    pub fn row<S: AsRef<[u8]>>(
        &mut self,
        table: TableId,
        cells: impl IntoIterator<Item = S>,
    ) -> Result<(), OutputError> {
        let t = &mut self.tables[table.0];
        t.text_record(cells)?;
        t.rows += 1;
        Ok(())
    }

    /// Append a row of numbers ([`number`]) to a table.
    pub fn numbers(&mut self, table: TableId, values: impl IntoIterator<Item = f64>) -> Result<(), OutputError> {
        let (cells, t) = (&mut self.cells, &mut self.tables[table.0]);
        cells.clear();
        // a number's text has no delimiter, quote or line break and is never empty: the csv
        // writer would write it as it is
        let mut n = 0;
        for v in values {
            if n > 0 {
                cells.push(t.delimiter);
            }
            write_number(v, cells);
            n += 1;
        }
        cells.push(b'\n');
        if n != t.fields {
            return Err(unequal(&t.path, n, t.fields));
        }
        t.file.write_all(cells).map_err(io_err(&t.path))?;
        t.rows += 1;
        Ok(())
    }

    /// Write a JSON file (pretty, with a final newline).
    pub fn json(&mut self, name: &str, value: &Value) -> Result<(), OutputError> {
        let path = self.file(name)?;
        write_json(&path, value)
    }

    /// `units.csv` (CSV in any format: it holds text): the unit and meaning of every column of
    /// `tables` (after each one's `time`), by the files they are written to.
    pub fn units(&mut self, tables: &[Table]) -> Result<(), OutputError> {
        let id = self.open_table("units.csv", None, ["file", "column", "unit", "meaning"], TableFormat::Csv)?;
        for t in tables {
            let file = self.table_file(&t.file);
            self.row(id, [file.as_str(), "time", "s", "time"])?;
            for c in &t.columns {
                self.row(id, [file.as_str(), c.name.as_str(), c.unit, c.meaning.as_str()])?;
            }
        }
        Ok(())
    }

    /// The files written so far, relative to the directory, in order.
    pub fn files(&self) -> &[String] {
        &self.files
    }

    /// Finish the run: close the tables, write `timing.json`, then `summary.json` (the object
    /// `summary` with `"complete": true` and `files` first), and rename the directory into place,
    /// replacing the old one whole. Returns the directory.
    pub fn commit(mut self, summary: Value, timing: Value) -> Result<PathBuf, OutputError> {
        for t in std::mem::take(&mut self.tables) {
            let OpenTable { path, file, rows, rows_at, .. } = t;
            let mut file =
                file.into_inner().map_err(|e| OutputError::Io { path: path.clone(), source: e.into_error() })?;
            if let Some(at) = rows_at {
                let digits = format!("{rows:0width$}", width = ROWS_DIGITS);
                file.seek(SeekFrom::Start(at))
                    .and_then(|_| file.write_all(digits.as_bytes()))
                    .map_err(io_err(&path))?;
            }
            file.sync_all().map_err(io_err(&path))?;
            finished(&path);
        }
        write_json(&self.staging.join(TIMING), &timing)?;
        let mut files: Vec<String> = self.files.clone();
        files.push(TIMING.to_string());
        let mut m = Map::new();
        m.insert("complete".into(), json!(true));
        m.insert("files".into(), json!(files));
        match summary {
            Value::Object(s) => m.extend(s),
            Value::Null => {}
            other => {
                m.insert("summary".into(), other);
            }
        }
        // the marker, before the summary: a directory that has its summary has its marker
        let marker = self.staging.join(MARKER);
        fs::write(&marker, format!("{MARKER_TAG}\n")).map_err(io_err(&marker))?;
        finished(&marker);
        let summary_path = self.staging.join(SUMMARY);
        write_json(&summary_path, &Value::Object(m))?;
        fs::File::open(&summary_path).and_then(|f| f.sync_all()).map_err(io_err(&summary_path))?;
        self.swap()?;
        self.committed = true;
        Ok(self.target.clone())
    }

    /// Rename the temporary directory into place; the old output is moved aside first and
    /// removed after.
    fn swap(&self) -> Result<(), OutputError> {
        let aside = aside_path(&self.target, std::process::id());
        let had_old = match fs::rename(&self.target, &aside) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(OutputError::Io { path: self.target.clone(), source: e }),
        };
        if let Err(e) = fs::rename(&self.staging, &self.target) {
            if had_old {
                let _ = fs::rename(&aside, &self.target);
            }
            return Err(OutputError::Io { path: self.target.clone(), source: e });
        }
        if had_old {
            // the new output is in place: failing to delete the old one loses nothing
            let _ = fs::remove_dir_all(&aside);
        }
        Ok(())
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            self.tables.clear();
            let _ = fs::remove_dir_all(&self.staging);
        }
    }
}

/// A CSV file of an analysis: its name in the output directory and its columns after `time`,
/// each with its unit and meaning (for `units.csv`).
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    /// File name, e.g. `driving.csv`.
    pub file: String,
    /// The columns after `time`.
    pub columns: Vec<Column>,
}

impl Table {
    /// Columns without units or meanings.
    pub fn plain(file: &str, names: Vec<String>) -> Self {
        Self {
            file: file.to_string(),
            columns: names.into_iter().map(|name| Column { name, unit: "", meaning: String::new() }).collect(),
        }
    }

    /// The header: `time`, then the columns.
    pub fn header(&self) -> impl Iterator<Item = &str> {
        std::iter::once("time").chain(self.columns.iter().map(|c| c.name.as_str()))
    }
}

impl OpenTable {
    /// Write a record of text cells, laid out by the csv writer (quoted where needed).
    fn text_record<S: AsRef<[u8]>>(&mut self, cells: impl IntoIterator<Item = S>) -> Result<(), OutputError> {
        let cells: Vec<S> = cells.into_iter().collect();
        if cells.len() != self.fields {
            return Err(unequal(&self.path, cells.len(), self.fields));
        }
        self.scratch.clear();
        let mut w = self.text.from_writer(&mut self.scratch);
        w.write_record(&cells).and_then(|()| w.flush().map_err(Into::into)).map_err(|e| csv_err(&self.path, e))?;
        drop(w);
        self.file.write_all(&self.scratch).map_err(io_err(&self.path))
    }
}

/// A row of `n` cells in a table of `fields` columns.
fn unequal(path: &Path, n: usize, fields: usize) -> OutputError {
    let message = format!("a row of {n} cells in a table of {fields} columns");
    OutputError::Io { path: path.to_path_buf(), source: io::Error::other(message) }
}

fn csv_err(path: &Path, e: csv::Error) -> OutputError {
    let source = match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("{other:?}")),
    };
    OutputError::Io { path: path.to_path_buf(), source }
}

fn write_json(path: &Path, v: &Value) -> Result<(), OutputError> {
    let text = serde_json::to_string_pretty(v).map_err(|e| OutputError::Io { path: path.into(), source: e.into() })?;
    fs::write(path, text + "\n").map_err(io_err(path))?;
    finished(path);
    Ok(())
}

#[cfg(test)]
thread_local! {
    /// The files this thread's writers finished, in order: the tests read the order the writer
    /// kept, where file times would be equal within the clock's tick.
    static FINISHED: std::cell::RefCell<Vec<PathBuf>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Note that the file at `path` is complete (the tests' record of the write order).
fn finished(_path: &Path) {
    #[cfg(test)]
    FINISHED.with(|f| f.borrow_mut().push(_path.to_path_buf()));
}

/// Whether `dir` carries [`MARKER`]: a regular file (not a link) whose first line is the tag of
/// this or an earlier version of the output format.
fn is_marked(dir: &Path) -> bool {
    use std::io::Read;
    let path = dir.join(MARKER);
    if !fs::symlink_metadata(&path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 64];
    let n = fs::File::open(&path).and_then(|f| f.take(64).read(&mut head)).unwrap_or(0);
    let line = std::str::from_utf8(&head[..n]).unwrap_or("").lines().next().unwrap_or("");
    let (tag, version) = MARKER_TAG.rsplit_once(' ').expect("the tag has a version");
    let current: u32 = version.parse().expect("the tag's version is a number");
    line.strip_prefix(tag)
        .and_then(|v| v.strip_prefix(' '))
        .and_then(|v| v.parse::<u32>().ok())
        .is_some_and(|v| (1..=current).contains(&v))
}

fn aside_path(target: &Path, pid: u32) -> PathBuf {
    let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    target.with_file_name(format!(".{name}.old-{pid}"))
}

/// Clean up after killed runs into `parent/name`: put back an old output moved aside by a swap
/// that did not finish, remove temporary directories of processes that are gone.
fn recover(parent: &Path, name: &str, target: &Path) {
    let Ok(entries) = fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else { continue };
        let (kind, pid) = match rest.split_once('-') {
            Some((k, p)) => (k, p.parse::<u32>().ok()),
            None => continue,
        };
        if !pid.is_some_and(|p| p != std::process::id() && !alive(p)) {
            continue;
        }
        let path = entry.path();
        match kind {
            "old" if !target.exists() => {
                let _ = fs::rename(&path, target);
            }
            "old" | "partial" => {
                let _ = fs::remove_dir_all(&path);
            }
            _ => {}
        }
    }
}

/// Whether process `pid` runs (Linux: `/proc/PID`); elsewhere assume so and leave its files.
fn alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") { Path::new(&format!("/proc/{pid}")).exists() } else { true }
}

#[cfg(test)]
mod tests;
