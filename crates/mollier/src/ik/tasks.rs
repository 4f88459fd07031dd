//! Which markers inverse kinematics uses, with what weight, and which coordinates it holds near a
//! value: a small TOML file, or the `IKTaskSet` of OpenSim's IK setup (`.xml`).
//!
//! ```toml
//! [markers]            # only the markers listed are used; weight 0 leaves one out
//! "R.ASIS" = 10
//! Sternum = 1
//!
//! [coordinates]        # held near a value by a weighted penalty (weight per rad² or m²)
//! subtalar_angle_r = { weight = 1000 }             # near its default
//! mtp_angle_r = { weight = 1000, value = 0.0 }     # near 0 (rad or m)
//! ```
//!
//! In OpenSim's setup, `IKMarkerTask` and `IKCoordinateTask` (`apply`, `weight`; `value_type`
//! `default_value` or `manual_value` with its `value`, in rad or m as OpenSim reads it).

use std::path::Path;

use mollier_format::{Diagnostic, Diagnostics, Spans};

/// A marker to fit.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerTask {
    /// The marker's name, as in the `.trc` file.
    pub name: String,
    /// Its weight (> 0).
    pub weight: f64,
    /// Where the task is written, for problems found later.
    pub at: Diagnostic,
}

/// A coordinate held near a value.
#[derive(Clone, Debug, PartialEq)]
pub struct CoordinateTask {
    /// The unknown's name: a model input, or an OpenSim coordinate of an imported model.
    pub name: String,
    /// Its weight (per rad² or m²).
    pub weight: f64,
    /// The value (rad or m); `None` for the unknown's value in the model's initial configuration.
    pub value: Option<f64>,
    /// Where the task is written.
    pub at: Diagnostic,
}

/// The tasks of an inverse kinematics run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tasks {
    /// Markers, in file order.
    pub markers: Vec<MarkerTask>,
    /// Coordinates, in file order.
    pub coordinates: Vec<CoordinateTask>,
}

/// Read a tasks file: OpenSim's IK setup for `.xml`, else TOML.
pub fn read_tasks(path: &Path) -> Result<Tasks, Diagnostics> {
    let text = mollier_format::read_text(path, "tasks file")?;
    parse_tasks(&path.display().to_string(), &text)
}

/// Parse a tasks file's text (`.xml` names are OpenSim setups).
pub fn parse_tasks(file: &str, text: &str) -> Result<Tasks, Diagnostics> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let xml = Path::new(file).extension().is_some_and(|e| e.eq_ignore_ascii_case("xml"));
    if xml { opensim(file, text) } else { toml_tasks(file, text) }
}

pub(crate) fn located(
    file: &str,
    text: &str,
    span: std::ops::Range<usize>,
    path: &str,
    message: impl Into<String>,
) -> Diagnostic {
    let span = if span.is_empty() { span.start..span.start + 1 } else { span };
    Diagnostic::new(file, path, message).at_span(text, span)
}

fn toml_tasks(file: &str, text: &str) -> Result<Tasks, Diagnostics> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        Diagnostics::one(
            located(file, text, span, "", format!("not a valid TOML file: {}", e.message()))
                .with_hint("see docs/inverse-kinematics.md for the tasks file"),
        )
    })?;
    let spans = Spans::toml(text);
    let at = |path: &str| spans.value(path).unwrap_or(0..0);
    let mut problems = Vec::new();
    let mut tasks = Tasks::default();
    for (key, value) in &table {
        match (key.as_str(), value) {
            ("markers" | "coordinates", toml::Value::Table(_)) => {}
            _ => problems.push(
                located(file, text, spans.key(key).unwrap_or(0..0), key, format!("unknown section `{key}`"))
                    .with_hint("a tasks file has [markers] (name = weight) and [coordinates]"),
            ),
        }
    }
    let weight_of = |path: &str, v: &toml::Value, problems: &mut Vec<Diagnostic>| -> Option<f64> {
        let w = v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
        match w {
            Some(w) if (0.0..=mollier_format::MAX_MAGNITUDE).contains(&w) => Some(w),
            _ => {
                problems.push(
                    located(file, text, at(path), path, "a weight is a number >= 0")
                        .with_hint("e.g. 1, or 10 for a marker trusted more; 0 leaves it out"),
                );
                None
            }
        }
    };
    if let Some(toml::Value::Table(m)) = table.get("markers") {
        for (name, v) in m {
            let path = format!("markers.{name}");
            if let Some(w) = weight_of(&path, v, &mut problems).filter(|w| *w > 0.0) {
                tasks.markers.push(MarkerTask {
                    name: name.clone(),
                    weight: w,
                    at: located(file, text, at(&path), &path, ""),
                });
            }
        }
    }
    if let Some(toml::Value::Table(c)) = table.get("coordinates") {
        for (name, v) in c {
            let path = format!("coordinates.{name}");
            let Some(t) = v.as_table() else {
                problems.push(
                    located(file, text, at(&path), &path, "a coordinate task is a table")
                        .with_hint("write `{ weight = 1000 }` or `{ weight = 1000, value = 0.0 }`"),
                );
                continue;
            };
            if let Some(k) = t.keys().find(|k| *k != "weight" && *k != "value") {
                let p = format!("{path}.{k}");
                problems.push(located(file, text, spans.key(&p).unwrap_or(0..0), &p, format!("unknown field `{k}`")));
                continue;
            }
            let Some(wv) = t.get("weight") else {
                problems.push(located(file, text, at(&path), &path, "no `weight`").with_hint("add `weight = 1000`"));
                continue;
            };
            let Some(w) = weight_of(&format!("{path}.weight"), wv, &mut problems) else { continue };
            let value = match t.get("value") {
                None => None,
                Some(v) => match v.as_float().or_else(|| v.as_integer().map(|i| i as f64)) {
                    Some(x) if x.is_finite() && x.abs() <= mollier_format::MAX_MAGNITUDE => Some(x),
                    _ => {
                        let p = format!("{path}.value");
                        problems.push(located(file, text, at(&p), &p, "a value is a finite number (rad or m)"));
                        continue;
                    }
                },
            };
            if w > 0.0 {
                let at = located(file, text, at(&path), &path, "");
                tasks.coordinates.push(CoordinateTask { name: name.clone(), weight: w, value, at });
            }
        }
    }
    if problems.is_empty() { Ok(tasks) } else { Err(Diagnostics(problems)) }
}

/// The first child `tag` of `n`, with its text trimmed.
fn child_text<'a, 'i>(n: roxmltree::Node<'a, 'i>, tag: &str) -> Option<(roxmltree::Node<'a, 'i>, String)> {
    n.children().find(|c| c.has_tag_name(tag)).map(|c| (c, c.text().unwrap_or("").trim().to_string()))
}

fn opensim(file: &str, text: &str) -> Result<Tasks, Diagnostics> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let p = e.pos();
        let mut d = Diagnostic::new(file, "", format!("not a valid XML file: {e}"));
        d.location = Some(mollier_format::Location { line: p.row as usize, column: p.col as usize });
        Diagnostics::one(d)
    })?;
    if !has_tasks(doc.root_element()) {
        return Err(Diagnostics::one(
            located(file, text, 0..0, "", "no IKMarkerTask or IKCoordinateTask in the file")
                .with_hint("give OpenSim's IK setup (with its IKTaskSet), or a TOML tasks file"),
        ));
    }
    tasks_under(file, text, doc.root_element())
}

/// Whether `root` holds any `IKMarkerTask` or `IKCoordinateTask`, applied or not.
pub(crate) fn has_tasks(root: roxmltree::Node) -> bool {
    root.descendants().any(|n| n.has_tag_name("IKMarkerTask") || n.has_tag_name("IKCoordinateTask"))
}

/// The tasks applied among `root`'s descendants (an IK setup's, or a scale setup's
/// `MarkerPlacer`), each problem located in `file` (whose text is `text`).
pub(crate) fn tasks_under(file: &str, text: &str, root: roxmltree::Node) -> Result<Tasks, Diagnostics> {
    let mut problems = Vec::new();
    let mut tasks = Tasks::default();
    let place = |n: roxmltree::Node, path: &str, message: String| located(file, text, n.range(), path, message);
    for n in root.descendants().filter(|n| n.has_tag_name("IKMarkerTask") || n.has_tag_name("IKCoordinateTask")) {
        let name = n.attribute("name").unwrap_or("").to_string();
        let kind = n.tag_name().name();
        let path = format!("IKTaskSet/{kind}[{name}]");
        if name.is_empty() {
            problems.push(place(n, &path, format!("an {kind} without a name")));
            continue;
        }
        let apply = child_text(n, "apply").is_none_or(|(_, a)| a.eq_ignore_ascii_case("true"));
        let weight = match child_text(n, "weight") {
            Some((w, t)) => match t.parse::<f64>() {
                Ok(x) if (0.0..=mollier_format::MAX_MAGNITUDE).contains(&x) => x,
                _ => {
                    problems.push(place(w, &format!("{path}/weight"), format!("not a weight: `{t}`")));
                    continue;
                }
            },
            None => {
                problems.push(place(n, &path, "no <weight>".into()));
                continue;
            }
        };
        if !apply || weight == 0.0 {
            continue;
        }
        let at = place(n, &path, String::new());
        if kind == "IKMarkerTask" {
            tasks.markers.push(MarkerTask { name, weight, at });
            continue;
        }
        let value_type = child_text(n, "value_type").map_or("default_value".to_string(), |(_, v)| v);
        let value = match value_type.as_str() {
            "default_value" => None,
            "manual_value" => match child_text(n, "value").map(|(v, t)| (v, t.parse::<f64>())) {
                Some((_, Ok(x))) if x.is_finite() => Some(x),
                Some((v, _)) => {
                    problems.push(place(v, &format!("{path}/value"), "not a finite number".into()));
                    continue;
                }
                None => Some(0.0),
            },
            other => {
                let node = child_text(n, "value_type").map_or(n, |(v, _)| v);
                problems.push(
                    place(node, &format!("{path}/value_type"), format!("value_type `{other}` is not supported"))
                        .with_hint("use default_value or manual_value; from a coordinates file is not read"),
                );
                continue;
            }
        };
        tasks.coordinates.push(CoordinateTask { name, weight, value, at });
    }
    if problems.is_empty() { Ok(tasks) } else { Err(Diagnostics(problems)) }
}
