//! The verdict on a model's position problem ([`WellPosedness`]) and how it reads: the types the
//! diagnostics fill and the errors carry.

use std::fmt;

use crate::model::Model;

/// A mode or coordinate involved in a defect, with its share (0..1] of the null space.
#[derive(Clone, Debug, PartialEq)]
pub struct Involved {
    /// `element.mode` or `node.axis`.
    pub name: String,
    /// Participation in the null space, summed over its basis vectors.
    pub weight: f64,
}

/// The verdict on a model's position problem at one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct WellPosedness {
    /// Generalized coordinates (inputs): `n_xm + n_em`.
    pub dof: usize,
    /// Constraint equations `n_eo + n_em` (rows of `D_cc`).
    pub equations: usize,
    /// Dependent coordinates `n_xc` (columns of `D_cc`).
    pub unknowns: usize,
    /// Numerical rank of `D_cc` (when it was computed).
    pub rank: Option<usize>,
    /// Redundant equations.
    pub over: usize,
    /// Free motions.
    pub under: usize,
    /// Fixed or input modes whose release would remove a redundancy, largest share first.
    pub redundant: Vec<Involved>,
    /// Coordinates that move in a free motion, largest share first.
    pub free: Vec<Involved>,
    /// Names of the nodes of each part not tied to the ground.
    pub floating_parts: Vec<Vec<String>>,
    /// Why the SVD was not done, if it was not.
    pub note: Option<String>,
}

impl WellPosedness {
    /// `true` when `D_cc` is square and of full rank.
    pub fn is_well_posed(&self) -> bool {
        self.over == 0 && self.under == 0 && self.equations == self.unknowns && self.note.is_none()
    }

    /// One line per finding, for people.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        let list = |v: &[Involved]| {
            let mut s: Vec<String> = v.iter().take(16).map(|i| format!("{} ({:.2})", i.name, i.weight)).collect();
            if v.len() > 16 {
                s.push(format!("and {} more", v.len() - 16));
            }
            s.join(", ")
        };
        if self.equations != self.unknowns {
            out.push(format!(
                "{} constraint equations (fixed + input modes) for {} dependent coordinates: {}",
                self.equations,
                self.unknowns,
                if self.equations > self.unknowns { "too many constraints" } else { "too few constraints or inputs" }
            ));
        }
        if self.over > 0 {
            let singular = self.equations == self.unknowns;
            out.push(format!(
                "over-constrained by {}{}: {}: {}",
                self.over,
                if singular { " (dependent constraints at this configuration)" } else { "" },
                release_advice(self.over),
                list(&self.redundant)
            ));
        }
        if self.under > 0 {
            out.push(format!(
                "under-constrained by {}: {} free motion{} not fixed by any input or constraint, moving: {}",
                self.under,
                self.under,
                if self.under == 1 { "" } else { "s" },
                list(&self.free)
            ));
        }
        for p in &self.floating_parts {
            out.push(format!("part not connected to the ground: {}", p.join(", ")));
        }
        if let Some(n) = &self.note {
            out.push(n.clone());
        }
        out
    }
}

/// How many of the listed modes to release: with one redundancy any of them restores the
/// rank; with more, a set restores it only if it removes every redundancy.
pub fn release_advice(over: usize) -> String {
    if over == 1 {
        "release any one of these modes".into()
    } else {
        format!(
            "release {over} of these modes, one per redundancy (not every set of {over} does it: a set that removes \
             the same redundancy twice leaves another, and the check says so)"
        )
    }
}

impl WellPosedness {
    /// The analysis with only the modes a user can release in its list of redundant ones: the
    /// modes of generated elements (the rigid beams that join a body's points, the Euler
    /// parameters' norms) cannot be, so they are left out, and a note says when only they take
    /// part.
    pub fn releasable(&self, model: &Model) -> WellPosedness {
        let generated: std::collections::HashSet<&str> = (0..model.n_elements())
            .map(crate::ids::ElementId::new)
            .filter(|&e| model.is_internal(e))
            .map(|e| model.element_name(e))
            .collect();
        let mut shown = self.clone();
        shown.redundant.retain(|i| i.name.rsplit_once('.').is_none_or(|(el, _)| !generated.contains(el)));
        if shown.over > 0 && shown.redundant.is_empty() && !self.redundant.is_empty() {
            shown.note = Some(
                "only the rigid joins of bodies' points take part in the redundancy: a point is joined to two \
                 bodies, or two bodies are joined rigidly twice; join each point to one body"
                    .into(),
            );
        }
        shown
    }
}

impl fmt::Display for WellPosedness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_well_posed() {
            write!(f, "well posed: {} degrees of freedom", self.dof)
        } else {
            write!(f, "not well posed: {}", self.messages().join("; "))
        }
    }
}

/// Why `D_cc` could not be factored. The rank check may pass where the factorization failed
/// (its tolerance is looser): then the configuration is singular — never "well posed" as a
/// reason for a failure.
pub(crate) fn singular_message(w: &WellPosedness) -> String {
    if w.is_well_posed() {
        "the constraint matrix D_cc is numerically singular at this configuration: the inputs reach a dead point \
         or a position the mechanism cannot take"
            .into()
    } else {
        w.to_string()
    }
}

pub(crate) fn dead_point_modes(w: &WellPosedness) -> String {
    let names: Vec<&str> = w.redundant.iter().take(4).map(|i| i.name.as_str()).collect();
    if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
}
