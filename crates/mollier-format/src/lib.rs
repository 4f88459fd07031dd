//! # mollier-format
//!
//! Mollier's model files: TOML for people, JSON for programs, both read into one set of serde
//! structs ([`ModelSpec`]) with a `format_version`. A typed AST with no dependency on the kernel
//! (like rapier's `mjcf-rs`): it never lists element kinds — an element's parameters stay a
//! generic [`ParamTable`] that the element type reads through the registry when the facade crate
//! `mollier` compiles the model.
//!
//! Every problem is a [`Diagnostic`] with `file:line:col`, the field path and a hint:
//! [`parse`] reports syntax, unknown fields, wrong types, the format version, invalid or
//! duplicate names, non-finite numbers, malformed orientations and inertias, and laws, loads and
//! gravity that cannot be right (a negative stiffness, a gravity in mm/s²); a
//! [`Document`] places the compile step's later problems by field path ([`Document::error`]).
//!
//! ```
//! let doc = mollier_format::parse("pendulum.toml", r#"
//! format_version = 1
//! fixed = ["ground"]
//! inputs = ["swing.rotation"]
//!
//! [bodies.ground]
//! origin = [0, 0, 0]
//!
//! [bodies.arm]
//! origin = "ground"
//! points = { tip = [0, -0.5, 0] }
//!
//! [elements.swing]
//! type = "hinge"
//! p = "ground"
//! q = "arm"
//! axis = [0, 0, 1]
//! "#).unwrap();
//! assert_eq!(doc.spec().bodies.len(), 2);
//! ```

mod diag;
mod field;
mod migrate;
mod read;
mod sharing;
mod spans;
mod spec;
mod validate;
mod values;

use std::path::Path;

pub use diag::{
    Diagnostic, Diagnostics, EXCERPT_CHARS, Location, MESSAGE_CHARS, Snippet, excerpt, human, is_unprintable,
    printable, printable_lines,
};
pub use field::{FieldError, MAX_MAGNITUDE};
pub use read::{DEFAULT_MAX_FILE_BYTES, MAX_FILE_BYTES_VAR, max_file_bytes, read_text};
pub use sharing::{
    AXES_TOLERANCE, DEFAULT_SPECIFIC_TENSION, DEFAULT_WIDTH, JointConeSpec, LoadSharingSpec, MuscleSpec, ReserveSpec,
    SocketAxis, nearest_rotation, orthonormality_error,
};
pub use spans::Spans;
pub use spec::{
    AngleUnit, AxesSpec, Axis, BodySpec, CoordinateLimitSpec, ElementSpec, FORMAT_VERSION, HillMuscleSpec, LengthUnit,
    LoadSpec, MassUnit, MeshSpec, ModeLawSpec, ModelSpec, MuscleCurves, NodeSpec, ORIENTATION_TOLERANCE,
    OrientationSpec, TendonKind, UnitsSpec,
};
pub use validate::{AXIS_NAMES, is_valid_name};
pub use values::{InertiaSpec, NAME_PATTERN, Named, ParamTable, ParamValue, PointSpec};

/// The model file `spec` as TOML, through the same serde structs the reader fills: what a
/// program that changes a model (`mollier scale`) writes. Numbers round-trip exactly.
pub fn to_toml(spec: &ModelSpec) -> Result<String, toml::ser::Error> {
    toml::to_string(spec)
}

/// The syntax of a model file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// TOML, for files written by people.
    Toml,
    /// JSON, for files written by programs.
    Json,
}

impl Format {
    /// JSON for a `.json` file name, TOML otherwise.
    pub fn from_file_name(name: &str) -> Self {
        if Path::new(name).extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            Format::Json
        } else {
            Format::Toml
        }
    }
}

/// A parsed and checked model file, with what is needed to place later problems in it.
#[derive(Clone, Debug)]
pub struct Document {
    file: String,
    text: String,
    format: Format,
    spec: ModelSpec,
    spans: Spans,
}

impl Document {
    /// The file name, as given.
    pub fn file(&self) -> &str {
        &self.file
    }
    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// TOML or JSON.
    pub fn format(&self) -> Format {
        self.format
    }
    /// The model as written.
    pub fn spec(&self) -> &ModelSpec {
        &self.spec
    }

    /// `true` when the file writes field `path` (as opposed to leaving it to its default).
    pub fn has(&self, path: &str) -> bool {
        self.spans.exact(path).is_some()
    }

    /// A problem with the value at field `path` (placed at it, or at its nearest ancestor).
    pub fn error(&self, path: &str, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        self.place(Diagnostic::new(&self.file, path, message).with_hint(hint), self.spans.value(path))
    }

    /// A problem with the name of the entry at `path` (placed at its key).
    pub fn error_at_key(&self, path: &str, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        self.place(Diagnostic::new(&self.file, path, message).with_hint(hint), self.spans.key(path))
    }

    fn place(&self, d: Diagnostic, span: Option<std::ops::Range<usize>>) -> Diagnostic {
        match span {
            Some(s) => d.at_span(&self.text, s),
            None => d.at_span(&self.text, self.top_level_end()),
        }
    }

    /// Where a missing top-level field would go: in TOML, the first `[table]` header (keys
    /// after it belong to the table), else the end of the text; in JSON, the opening brace.
    fn top_level_end(&self) -> std::ops::Range<usize> {
        if self.format == Format::Json {
            let at = self.text.find('{').unwrap_or(0);
            return at..at + 1;
        }
        let mut offset = 0;
        for line in self.text.split_inclusive('\n') {
            if line.trim_start().starts_with('[') {
                let at = offset + (line.len() - line.trim_start().len());
                return at..offset + line.trim_end().len();
            }
            offset += line.len();
        }
        self.text.len()..self.text.len()
    }
}

/// Parse and check a model file's text; `file` names it in messages and picks the syntax (`.json`
/// is JSON, anything else TOML).
pub fn parse(file: &str, text: &str) -> Result<Document, Diagnostics> {
    parse_as(file, text, Format::from_file_name(file))
}

/// [`parse`] with the syntax given.
pub fn parse_as(file: &str, text: &str, format: Format) -> Result<Document, Diagnostics> {
    migrate::check_version(file, text, format)?;
    let (spec, spans) = match format {
        Format::Toml => {
            let spans = Spans::toml(text);
            let de = toml::de::Deserializer::parse(text).map_err(|e| {
                let d = Diagnostic::new(file, "", e.message().trim_end().to_string())
                    .with_hint("this is not valid TOML here: check quotes, brackets and `=` signs");
                Diagnostics::one(match e.span() {
                    Some(s) => d.at_span(text, s),
                    None => d,
                })
            })?;
            let spec = serde_path_to_error::deserialize::<_, ModelSpec>(de).map_err(|e| {
                let path = path_string(e.path());
                let inner = e.into_inner();
                Diagnostics::one(serde_problem(file, text, &spans, path, inner.message().trim_end(), inner.span()))
            })?;
            (spec, spans)
        }
        Format::Json => {
            let spans = Spans::json(text);
            let mut de = serde_json::Deserializer::from_str(text);
            let json_problem = |path: String, e: serde_json::Error| {
                let msg = e.to_string();
                let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
                let span = (e.line() > 0).then(|| {
                    let off = diag::offset_of(text, e.line(), e.column().max(1));
                    off.saturating_sub(1)..off
                });
                Diagnostics::one(serde_problem(file, text, &spans, path, msg, span))
            };
            let spec = serde_path_to_error::deserialize::<_, ModelSpec>(&mut de)
                .map_err(|e| json_problem(path_string(e.path()), e.into_inner()))?;
            de.end().map_err(|e| json_problem(String::new(), e))?;
            (spec, spans)
        }
    };
    let doc = Document { file: file.to_string(), text: text.to_string(), format, spec, spans };
    let problems = validate::validate(&doc);
    if problems.is_empty() { Ok(doc) } else { Err(Diagnostics(problems)) }
}

/// Read ([`read_text`]: a regular file within the size limit, UTF-8), parse and check a model file.
pub fn load(path: &Path) -> Result<Document, Diagnostics> {
    let file = path.display().to_string();
    let text = read_text(path, "model file")?;
    parse(&file, &text)
}

/// The JSON Schema of the model format (elements as open tables; the facade adds the element
/// types' parameters).
pub fn schema() -> serde_json::Value {
    let mut v = serde_json::to_value(schemars::schema_for!(ModelSpec)).unwrap_or(serde_json::Value::Null);
    unwrap_descriptions(&mut v);
    v
}

/// Doc comments are wrapped at 120 columns; editors wrap descriptions themselves.
fn unwrap_descriptions(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                match x {
                    serde_json::Value::String(s) if k == "description" => {
                        *s = s.split("\n\n").map(|p| p.replace('\n', " ")).collect::<Vec<_>>().join("\n\n");
                    }
                    _ => unwrap_descriptions(x),
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(unwrap_descriptions),
        _ => {}
    }
}

/// The hint for a key `field` found in `table` that is a top-level field of model files: TOML
/// puts every key after a `[table]` header into that table, so it was probably written below one.
pub fn misplaced_top_level(table: &str, field: &str) -> Option<String> {
    (!table.is_empty() && top_level_fields().iter().any(|f| f == field)).then(|| {
        format!(
            "`{field}` is a top-level field, but in TOML every key after a `[table]` header belongs to that table \
             (here `{table}`): move `{field} = ...` above the first `[...]` header"
        )
    })
}

/// The fields of the top-level table of a model file.
fn top_level_fields() -> Vec<String> {
    let schema = serde_json::to_value(schemars::schema_for!(ModelSpec)).unwrap_or_default();
    schema["properties"].as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default()
}

/// `a.b[0].c` from a serde path (unknown segments dropped).
fn path_string(path: &serde_path_to_error::Path) -> String {
    let mut s = String::new();
    for seg in path.iter() {
        match seg {
            serde_path_to_error::Segment::Seq { index } => s.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => s = spans::join(&s, key),
            serde_path_to_error::Segment::Enum { variant } => s = spans::join(&s, variant),
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    s
}

/// A problem found by serde: extend the path to an unknown field, place it, and add a hint.
fn serde_problem(
    file: &str,
    text: &str,
    spans: &Spans,
    mut path: String,
    message: &str,
    span: Option<std::ops::Range<usize>>,
) -> Diagnostic {
    let quoted = |prefix: &str| message.strip_prefix(prefix).and_then(|r| r.split('`').next()).map(str::to_string);
    let hint = if let Some(field) = quoted("unknown field `") {
        let table = path.clone();
        if path.rsplit('.').next() != Some(field.as_str()) {
            path = spans::join(&path, &field);
        }
        misplaced_top_level(&table, &field).unwrap_or_else(|| {
            "fields are case-sensitive; `mollier schema` and docs/model-format.md list the fields of each table"
                .to_string()
        })
    } else if let Some(field) = quoted("missing field `") {
        format!("add `{field}`; docs/model-format.md describes it")
    } else if message.starts_with("unknown variant") {
        "use one of the values listed".to_string()
    } else if message.starts_with("duplicate") {
        "every name must be unique: rename or delete one".to_string()
    } else if !path.is_empty() {
        let last = path.rsplit('.').next().unwrap_or("");
        let last = last.split('[').next().unwrap_or(last);
        format!("see docs/model-format.md for the form of `{last}`")
    } else {
        "see docs/model-format.md".to_string()
    };
    let d = Diagnostic::new(file, path.clone(), message).with_hint(hint);
    match span.or_else(|| spans.key(&path)) {
        Some(s) => d.at_span(text, s),
        None => d.at_span(text, 0..0),
    }
}
