//! The muscle table of a study and the muscles' lengths in the model.
//!
//! The table is a CSV file with the columns `element` (a TRUSS or CURVED-TRUSS of the model,
//! released), `muscle` (the muscle it belongs to, e.g. a row of van der Helm 1994, Table 2),
//! `pcsa_cm2` (the PCSA attributed to the element) and `optimal_length_mm` (its optimal
//! length, for criterion (c)); other columns are kept as notes.

use std::path::Path;

use mollier::{Compiled, NodeRole};
use mollier_core::conformance::evaluate;
use mollier_core::element::Order;
use mollier_core::geometry::{Vec3, norm, sub, vec3_at};
use mollier_core::{ElementId, ModeId, ModeRole, NodeId};
use mollier_format::ParamValue;

/// One row of the muscle table, resolved in the model.
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleElement {
    /// The element's name.
    pub name: String,
    /// The muscle it belongs to.
    pub muscle: String,
    /// PCSA (m²).
    pub pcsa: f64,
    /// Optimal length (m).
    pub optimal_length: f64,
    /// The element.
    pub element: ElementId,
    /// Its `elongation` mode.
    pub mode: ModeId,
    /// Its length at the model's initial configuration (m): length = this + elongation.
    pub reference_length: f64,
}

/// A muscle: consecutive rows with the same `muscle` name.
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleGroup {
    /// Its name.
    pub name: String,
    /// Indices of its elements in the table.
    pub elements: Vec<usize>,
}

/// Read the table and resolve each row in the compiled model.
pub fn read_table(path: &Path, compiled: &Compiled) -> Result<Vec<MuscleElement>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_table(&path.display().to_string(), &text, compiled)
}

/// Parse the table's text (`file` names it in messages).
pub fn parse_table(file: &str, text: &str, compiled: &Compiled) -> Result<Vec<MuscleElement>, String> {
    let mut rdr = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    let headers = rdr.headers().map_err(|e| format!("{file}: {e}"))?.clone();
    let col =
        |name: &str| headers.iter().position(|h| h.trim() == name).ok_or_else(|| format!("{file}: no column `{name}`"));
    let (c_el, c_mu, c_pcsa, c_lopt) = (col("element")?, col("muscle")?, col("pcsa_cm2")?, col("optimal_length_mm")?);
    let model = &compiled.model;
    let mut out: Vec<MuscleElement> = Vec::new();
    for (i, rec) in rdr.records().enumerate() {
        let line = i + 2;
        let rec = rec.map_err(|e| format!("{file}:{line}: {e}"))?;
        let field = |c: usize| rec.get(c).map(str::trim).unwrap_or("");
        let name = field(c_el).to_string();
        let number = |c: usize, what: &str| -> Result<f64, String> {
            let v: f64 =
                field(c).parse().map_err(|_| format!("{file}:{line}: {what} `{}` is not a number", field(c)))?;
            if v.is_finite() && v > 0.0 {
                Ok(v)
            } else {
                Err(format!("{file}:{line}: {what} must be positive, got {v}"))
            }
        };
        let pcsa = number(c_pcsa, "pcsa_cm2")? * 1e-4;
        let optimal_length = number(c_lopt, "optimal_length_mm")? * 1e-3;
        let ue = compiled
            .elements
            .iter()
            .find(|e| e.name == name)
            .ok_or_else(|| format!("{file}:{line}: the model has no element `{name}`"))?;
        if ue.kind != "truss" && ue.kind != "curved-truss" {
            return Err(format!("{file}:{line}: `{name}` is a {}, not a truss or curved-truss", ue.kind));
        }
        let mode = model
            .mode_by_name(ue.id, "elongation")
            .ok_or_else(|| format!("{file}:{line}: `{name}` has no elongation mode"))?;
        if model.mode_role(mode) != ModeRole::Dependent {
            return Err(format!("{file}:{line}: `{name}` must be free (listed in the model's `free`)"));
        }
        if out.iter().any(|m| m.name == name) {
            return Err(format!("{file}:{line}: `{name}` is listed twice"));
        }
        let reference_length =
            reference_length(compiled, ue.id, &name).map_err(|e| format!("{file}:{line}: `{name}`: {e}"))?;
        out.push(MuscleElement {
            name,
            muscle: field(c_mu).to_string(),
            pcsa,
            optimal_length,
            element: ue.id,
            mode,
            reference_length,
        });
    }
    if out.is_empty() {
        return Err(format!("{file}: no muscles"));
    }
    Ok(out)
}

/// Consecutive rows with the same muscle name, in table order.
pub fn groups(muscles: &[MuscleElement]) -> Vec<MuscleGroup> {
    let mut out: Vec<MuscleGroup> = Vec::new();
    for (i, m) in muscles.iter().enumerate() {
        match out.last_mut() {
            Some(g) if g.name == m.muscle => g.elements.push(i),
            _ => out.push(MuscleGroup { name: m.muscle.clone(), elements: vec![i] }),
        }
    }
    out
}

fn node_of(compiled: &Compiled, name: &str) -> Result<NodeId, String> {
    compiled.points.iter().find(|p| p.name == name).map(|p| p.node).ok_or_else(|| format!("no point `{name}`"))
}

fn string(v: Option<&ParamValue>, what: &str) -> Result<String, String> {
    match v {
        Some(ParamValue::String(s)) => Ok(s.clone()),
        _ => Err(format!("`{what}` is not a name")),
    }
}

/// The length (m) of a TRUSS or CURVED-TRUSS at the model's initial configuration, where its
/// elongation is zero by definition.
///
/// The kernel's elements do not report their reference values, so this asks the element
/// itself: it evaluates the elongation `e = L − l0` at a configuration in which every
/// obstacle's body is moved 100 m away (the path is then the straight line through `p`, the via
/// points and `q`, whose length `L_far` is known) and returns `l0 = L_far − e`. Errors if an
/// anchor of the path is an obstacle body's origin (it would move too).
pub fn reference_length(compiled: &Compiled, el: ElementId, name: &str) -> Result<f64, String> {
    let model = &compiled.model;
    let spec = compiled.document.spec().elements.get(name).ok_or_else(|| format!("no element `{name}` in the file"))?;
    let params: Vec<(String, ParamValue)> = spec.params.0.clone();
    let get = |k: &str| params.iter().find(|(key, _)| key == k).map(|(_, v)| v);
    let mut anchors = vec![string(get("p"), "p")?];
    if let Some(ParamValue::Array(via)) = get("via") {
        for v in via {
            anchors.push(string(Some(v), "via")?);
        }
    }
    anchors.push(string(get("q"), "q")?);
    let anchors: Vec<NodeId> = anchors.iter().map(|a| node_of(compiled, a)).collect::<Result<_, _>>()?;
    let mut origins = Vec::new();
    if let Some(ParamValue::Array(obs)) = get("obstacles") {
        for o in obs {
            let ParamValue::Table(t) = o else { return Err("an obstacle is not a table".into()) };
            let body = string(t.iter().find(|(k, _)| k == "body").map(|(_, v)| v), "body")?;
            let info = compiled.bodies.iter().find(|b| b.name == body).ok_or_else(|| format!("no body `{body}`"))?;
            origins.push(info.frame.position);
        }
    }
    if let Some(a) = anchors.iter().find(|a| origins.contains(a)) {
        return Err(format!("the path's anchor `{}` is an obstacle body's origin", model.nodes()[a.index()].name));
    }
    for a in &anchors {
        if !matches!(compiled.nodes[a.index()], NodeRole::Point { .. } | NodeRole::Node | NodeRole::Origin { .. }) {
            return Err("an anchor is not a position".into());
        }
    }
    // the global configuration with the obstacle bodies far away
    let mut x = model.x0().to_vec();
    for o in &origins {
        let off = model.nodes()[o.index()].offset;
        x[off] += 100.0;
        x[off + 1] += 100.0;
    }
    let local: Vec<f64> = model.element_coords(el).iter().map(|&c| x[c]).collect();
    let (e, _, _) = evaluate(model.element(el), &local, Order::Value)?;
    let pos = |n: &NodeId| -> Vec3 { vec3_at(&x, model.nodes()[n.index()].offset) };
    let far: f64 = anchors.windows(2).map(|w| norm(&sub(&pos(&w[1]), &pos(&w[0])))).sum();
    let l0 = far - e[0];
    if !(l0.is_finite() && l0 > 0.0) {
        return Err(format!("its reference length came out as {l0}"));
    }
    Ok(l0)
}
