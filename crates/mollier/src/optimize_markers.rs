//! `[objective.markers]` of an optimal control problem: model points tracked along the markers
//! of a `.trc` file ([`crate::trc`]), `w ∫ |x_p(q) − r(t)|² dt` per point
//! ([`mollier_ocp::MarkerTracking`]). The file's times are the problem's (s from its start); a
//! marker missing in some frames is interpolated over them (linearly, as every reference).
//! Problems are located in the problem file (`file:line:col`, field path) or in the `.trc`.

use std::collections::BTreeMap;
use std::path::Path;

use mollier_format::Diagnostics;
use mollier_ocp::MarkerTracking;
use serde::Deserialize;

use crate::compile::Compiled;
use crate::trc::{MarkerTrial, read_trc};

/// `[objective.markers]`: the marker file and the model points that follow its markers.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MarkersSpec {
    /// A `.trc` file, relative to the problem file.
    pub file: String,
    /// The model's points (`body.point`, `body` or a node) by name.
    pub points: BTreeMap<String, MarkerPointSpec>,
}

/// One tracked point.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MarkerPointSpec {
    /// The file's marker it follows (default: the point's name).
    pub marker: Option<String>,
    /// Weight (per m² and second).
    #[serde(default = "one")]
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

/// Read the marker file of `spec`, relative to the problem file `problem`.
pub fn read_markers(problem: &Path, spec: &MarkersSpec) -> Result<MarkerTrial, Diagnostics> {
    read_trc(&problem.parent().unwrap_or(Path::new("")).join(&spec.file))
}

/// The file's marker a point follows, and the field that names it.
fn marker_of<'a>(name: &'a str, p: &'a MarkerPointSpec) -> (&'a str, String) {
    match &p.marker {
        Some(m) => (m, format!("objective.markers.points.{name}.marker")),
        None => (name, format!("objective.markers.points.{name}")),
    }
}

/// Every problem of `spec` against the model and the trial: (field path, message).
pub fn marker_problems(spec: &MarkersSpec, compiled: &Compiled, trial: &MarkerTrial) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if spec.points.is_empty() {
        out.push(("objective.markers.points".into(), "name at least one model point to track".into()));
    }
    for (name, p) in &spec.points {
        let path = format!("objective.markers.points.{name}");
        if !compiled.points.iter().any(|q| q.name == *name) {
            let hint = crate::compile::suggest(name, compiled.points.iter().map(|q| q.name.as_str()))
                .map_or(String::new(), |s| format!(" (did you mean `{s}`?)"));
            out.push((path.clone(), format!("`{name}` is not a point of the model{hint}")));
        }
        if !(p.weight >= 0.0 && p.weight.is_finite()) {
            out.push((format!("{path}.weight"), format!("a weight is finite and not negative, not {}", p.weight)));
        }
        let (marker, field) = marker_of(name, p);
        match trial.names.iter().position(|n| n == marker) {
            None => out.push((
                field,
                format!("`{}` has no marker `{marker}` (its markers: {})", trial.file, trial.names.join(", ")),
            )),
            Some(k) if (0..trial.len()).all(|i| trial.marker(i, k).is_none()) => {
                out.push((field, format!("marker `{marker}` is missing in every frame of `{}`", trial.file)));
            }
            Some(_) => {}
        }
    }
    out
}

/// The objective's marker terms (`spec` checked by [`marker_problems`]): each point's reference
/// the frames where its marker is present.
pub fn marker_terms(spec: &MarkersSpec, compiled: &Compiled, trial: &MarkerTrial) -> Vec<MarkerTracking> {
    spec.points
        .iter()
        .map(|(name, p)| {
            let node = compiled.points.iter().find(|q| q.name == *name).expect("checked").node;
            let k = trial.names.iter().position(|n| n == marker_of(name, p).0).expect("checked");
            let reference = (0..trial.len()).filter_map(|i| Some((trial.times[i], trial.marker(i, k)?))).collect();
            MarkerTracking { name: name.clone(), node, weight: p.weight, reference }
        })
        .collect()
}
