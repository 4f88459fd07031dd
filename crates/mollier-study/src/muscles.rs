//! The muscle table of a study and the muscles' lengths in the model.
//!
//! The table is a CSV file with the columns `element` (a TRUSS or CURVED-TRUSS of the model,
//! released), `muscle` (the muscle it belongs to, e.g. a row of van der Helm 1994, Table 2),
//! `pcsa_cm2` (the PCSA attributed to the element) and `optimal_length_mm` (its optimal
//! length, for criterion (c)); other columns are kept as notes.

use std::path::Path;

use mollier::Compiled;
use mollier_core::{ElementId, ModeId, ModeRole};

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

/// The length (m) of a TRUSS or CURVED-TRUSS at the model's initial configuration, where its
/// elongation is zero by definition: the element's own reference value of its mode.
pub fn reference_length(compiled: &Compiled, el: ElementId, name: &str) -> Result<f64, String> {
    let model = &compiled.model;
    let mode = model.mode_by_name(el, "elongation").ok_or_else(|| format!("`{name}` has no elongation mode"))?;
    match model.mode_reference(mode) {
        Some(l0) if l0.is_finite() && l0 > 0.0 => Ok(l0),
        Some(l0) => Err(format!("its reference length is {l0}")),
        None => Err(format!("`{name}` does not report a reference length")),
    }
}
