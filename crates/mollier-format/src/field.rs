//! A field's value judged alone: the error of one field ([`FieldError`]) and the range of a
//! model number ([`MAX_MAGNITUDE`]), below the specs and their validation.

use crate::diag::human;

/// A problem with one field of a structure, relative to the structure.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldError {
    /// The field, e.g. `euler` or `inertia`.
    pub field: &'static str,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: String,
}

impl FieldError {
    pub(crate) fn new(field: &'static str, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self { field, message: message.into(), hint: hint.into() }
    }
}

/// The largest magnitude of a number in a model file, in its own units.
///
/// No quantity of a musculoskeletal model comes near it in any unit the format offers, and
/// below it products of a handful of numbers (mass × gravity × length, the inertia's
/// invariants) stay finite, so a typo such as `1e308` is refused here rather than surfacing as
/// a non-finite result later.
pub const MAX_MAGNITUDE: f64 = 1e15;

/// Why `x` cannot be a model number (not finite, or beyond [`MAX_MAGNITUDE`]).
pub(crate) fn number_problem(x: f64) -> Option<String> {
    if !x.is_finite() {
        Some(format!("numbers must be finite, found {x}"))
    } else if x.abs() > MAX_MAGNITUDE {
        Some(format!("{} is too large: numbers in a model file are at most 1e15 in magnitude", human(x)))
    } else {
        None
    }
}
