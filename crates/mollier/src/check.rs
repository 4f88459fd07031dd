//! Is the model well posed, and if not, why — in the file's terms.
//!
//! The kernel's check ([`mollier_core::well_posedness`]) looks at `D_cc` with the inputs held.
//! When it fails, the same file is compiled once more with the inputs released, which gives the
//! mechanism's own mobility at the initial configuration (`under`) and its redundant constraints
//! (`over`). If the mobility differs from the number of inputs, the inputs are wrong, and that is
//! reported at `inputs` in the file; otherwise the constraints are (redundancy, or inputs that do
//! not drive the free motions), and the kernel's messages name the modes involved — only those
//! a user can release (not the generated joins of bodies' points), and for up to three
//! redundancies, which sets of them restore the rank (each set tried).

use mollier_core::registry::Registry;

use mollier_core::{Data, WellPosedness, well_posedness};
use mollier_format::Diagnostic;

use crate::compile::{Compiled, compile_with};

/// The verdict of [`check`].
#[derive(Clone, Debug)]
pub struct CheckReport {
    /// The kernel's analysis of the model with its inputs, at the initial configuration.
    pub analysis: WellPosedness,
    /// Degrees of freedom of the mechanism at its initial configuration: the number of inputs
    /// it needs.
    pub dof: usize,
    /// Redundant constraints of the mechanism without its inputs (when it was analysed so).
    pub redundant: usize,
    /// Problems with the file itself: inputs that do not match the degrees of freedom.
    pub problems: Vec<Diagnostic>,
    /// Findings for people, naming element modes and coordinates.
    pub diagnostics: Vec<String>,
}

impl CheckReport {
    /// `true` when positions can be solved: as many independent constraints as unknowns.
    pub fn is_well_posed(&self) -> bool {
        self.analysis.is_well_posed() && self.problems.is_empty()
    }

    /// The exit code of a front end for this verdict: 0 well posed, 1 not well posed — too many
    /// constraints, too few, or inputs that do not match the degrees of freedom alike (2 is for
    /// files that cannot be read or compiled, before there is a verdict).
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.is_well_posed())
    }
}

/// Check a compiled model at its initial configuration.
pub fn check(compiled: &Compiled, registry: &Registry) -> CheckReport {
    let model = &compiled.model;
    let mut data = Data::new(model);
    let analysis = well_posedness(model, &mut data);
    let n_inputs = compiled.inputs.len();
    if analysis.is_well_posed() {
        return CheckReport { dof: n_inputs, redundant: 0, problems: Vec::new(), diagnostics: Vec::new(), analysis };
    }
    let shown = analysis.releasable(model);
    let mut diagnostics = shown.messages();
    if let Some((good, bad)) = restoring_sets(compiled, registry, &shown) {
        let k = shown.over;
        let list = |sets: &[Vec<String>]| {
            let mut v: Vec<String> = sets.iter().take(6).map(|s| format!("[{}]", s.join(", "))).collect();
            if sets.len() > 6 {
                v.push(format!("and {} more", sets.len() - 6));
            }
            v.join("; ")
        };
        let tried = good.len() + bad.len();
        diagnostics.push(if good.is_empty() {
            format!("no set of {k} of the listed modes makes the model well posed by itself ({tried} tried)")
        } else if bad.is_empty() {
            format!("releasing any {k} of the listed modes makes the model well posed ({tried} sets tried)")
        } else if good.len() >= bad.len() {
            format!(
                "releasing {k} of the listed modes makes the model well posed ({} of {tried} sets), except: {}",
                good.len(),
                list(&bad)
            )
        } else {
            format!(
                "releasing one of these sets of {k} makes the model well posed ({} of {tried} sets): {}",
                good.len(),
                list(&good)
            )
        });
    }
    let mut problems = Vec::new();
    // the mechanism without its inputs: its own mobility and redundancy
    let compile_free = compile_with(&compiled.document, registry, false).ok();
    let free = compile_free.as_ref().map(|c| {
        let mut d = Data::new(&c.model);
        well_posedness(&c.model, &mut d)
    });
    let (dof, redundant) = match &free {
        Some(w) if w.note.is_none() => (w.under, w.over),
        _ => (n_inputs, analysis.over),
    };
    if let Some(w) = free.as_ref().filter(|w| w.note.is_none() && w.under != n_inputs) {
        let doc = &compiled.document;
        let s = |n: usize| if n == 1 { "" } else { "s" };
        let message = format!(
            "the mechanism has {} degree{} of freedom at its initial configuration, but {} input{} {} declared",
            w.under,
            s(w.under),
            n_inputs,
            s(n_inputs),
            if n_inputs == 1 { "is" } else { "are" }
        );
        let moving: Vec<&str> = w.free.iter().take(8).map(|i| i.name.as_str()).collect();
        let hint = if !doc.has("inputs") {
            format!(
                "declare `inputs = [...]` with {} name{} (a joint mode such as `joint.rotation`, or a coordinate) among \
                 the top-level fields, before the first `[table]`; free to move now: {}",
                w.under,
                s(w.under),
                moving.join(", ")
            )
        } else if w.under > n_inputs {
            format!(
                "declare {} more input{} (a joint mode such as `joint.rotation`, or a coordinate), or fix what should not move; free to move now: {}",
                w.under - n_inputs,
                s(w.under - n_inputs),
                moving.join(", ")
            )
        } else {
            format!(
                "remove {} input{}, or release constraints (`free`) so that the inputs can move",
                n_inputs - w.under,
                s(n_inputs - w.under)
            )
        };
        problems.push(doc.error("inputs", message, hint));
        if w.over > 0 {
            let shown = free.as_ref().zip(compile_free.as_ref()).map(|(w, c)| w.releasable(&c.model));
            let names: Vec<&str> = shown.iter().flat_map(|w| &w.redundant).take(12).map(|i| i.name.as_str()).collect();
            diagnostics.push(format!(
                "without its inputs the mechanism has {} redundant constraint{}: {}: {}",
                w.over,
                s(w.over),
                mollier_core::diagnostics::release_advice(w.over),
                names.join(", ")
            ));
        }
    }
    CheckReport { analysis, dof, redundant, problems, diagnostics }
}

/// Sets of listed modes, as names.
type Sets = Vec<Vec<String>>;

/// The sets of `over` listed modes whose release makes the model well posed, and those whose
/// release does not, found by trying each (a compile and a rank check per set), for small
/// cases only: at most 3 redundancies and 10 listed modes (120 tries). `None` when not tried.
fn restoring_sets(compiled: &Compiled, registry: &Registry, w: &WellPosedness) -> Option<(Sets, Sets)> {
    const MAX_OVER: usize = 3;
    const MAX_LISTED: usize = 10;
    let names: Vec<&str> = w.redundant.iter().map(|i| i.name.as_str()).collect();
    let k = w.over;
    if k == 0 || k > MAX_OVER || names.len() > MAX_LISTED || names.len() < k || w.under > 0 {
        return None;
    }
    let spec = compiled.document.spec();
    let (mut found, mut failed) = (Vec::new(), Vec::new());
    let mut combo: Vec<usize> = (0..k).collect();
    loop {
        let mut trial = spec.clone();
        trial.free.extend(combo.iter().map(|&i| names[i].to_string()));
        let json = serde_json::to_string(&trial).ok()?;
        let restored = mollier_format::parse_as("trial.json", &json, mollier_format::Format::Json)
            .ok()
            .and_then(|doc| compile_with(&doc, registry, true).ok())
            .is_some_and(|c| well_posedness(&c.model, &mut Data::new(&c.model)).is_well_posed());
        let set = combo.iter().map(|&i| names[i].to_string()).collect();
        if restored {
            found.push(set)
        } else {
            failed.push(set)
        }
        // the next k-combination of 0..n in lexicographic order
        let n = names.len();
        let Some(i) = (0..k).rev().find(|&i| combo[i] < n - k + i) else { break };
        combo[i] += 1;
        for j in i + 1..k {
            combo[j] = combo[j - 1] + 1;
        }
    }
    Some((found, failed))
}
