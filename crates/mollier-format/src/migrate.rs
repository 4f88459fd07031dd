//! Format versions. Every change to the format that would change the meaning of an existing file
//! bumps [`FORMAT_VERSION`] and adds its migration here, and only here: a function from the
//! previous version's document tree to the next one's, run before the typed parse. Version 1 is
//! the first, so there is nothing to migrate yet.

use crate::Format;
use crate::diag::{Diagnostic, Diagnostics};
use crate::spans::Spans;
use crate::spec::FORMAT_VERSION;

/// Read `format_version` before the typed parse, so that a file from a newer Mollier is told so
/// instead of failing on the first unknown field. Syntax errors are found here too.
pub(crate) fn check_version(file: &str, text: &str, format: Format) -> Result<u32, Diagnostics> {
    check(file, text, format).map_err(|d| Diagnostics::one(*d))
}

fn check(file: &str, text: &str, format: Format) -> Result<u32, Box<Diagnostic>> {
    let found = match format {
        Format::Toml => match toml::de::DeTable::parse(text) {
            Ok(root) => root.get_ref().get("format_version").map(|v| match v.get_ref() {
                toml::de::DeValue::Integer(i) => i.as_str().parse::<i64>().ok(),
                _ => None,
            }),
            Err(e) => {
                let d = Diagnostic::new(file, "", e.message().trim_end().to_string())
                    .with_hint("this is not valid TOML here: check quotes, brackets and `=` signs");
                return Err(Box::new(match e.span() {
                    Some(s) => d.at_span(text, s),
                    None => d,
                }));
            }
        },
        Format::Json => match serde_json::from_str::<serde_json::Value>(text) {
            Ok(v) => v.get("format_version").map(|v| v.as_i64()),
            Err(e) => {
                let msg = e.to_string();
                let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]).to_string();
                let off = crate::diag::offset_of(text, e.line(), e.column().max(1));
                return Err(Box::new(
                    Diagnostic::new(file, "", msg)
                        .with_hint("this is not valid JSON here: check quotes, commas and brackets")
                        .at_span(text, off..off + 1),
                ));
            }
        },
    };
    let spans = match format {
        Format::Toml => Spans::toml(text),
        Format::Json => Spans::json(text),
    };
    let at = |d: Diagnostic| {
        Box::new(match spans.value("format_version") {
            Some(s) => d.at_span(text, s),
            None => d.at_span(text, 0..0),
        })
    };
    match found {
        None => Err(at(Diagnostic::new(file, "format_version", "missing `format_version`").with_hint(format!(
            "start the file with `format_version = {FORMAT_VERSION}` (TOML) or \"format_version\": {FORMAT_VERSION} (JSON)"
        )))),
        Some(None) => Err(at(Diagnostic::new(file, "format_version", "`format_version` must be a whole number")
            .with_hint(format!("write `format_version = {FORMAT_VERSION}`")))),
        Some(Some(v)) if v > FORMAT_VERSION as i64 => Err(at(Diagnostic::new(
            file,
            "format_version",
            format!("the file is written in format version {v}; this Mollier reads versions up to {FORMAT_VERSION}"),
        )
        .with_hint("update Mollier"))),
        Some(Some(v)) if v < 1 => Err(at(Diagnostic::new(
            file,
            "format_version",
            format!("there is no format version {v}"),
        )
        .with_hint(format!("the first version is 1; this Mollier writes {FORMAT_VERSION}")))),
        Some(Some(v)) => Ok(v as u32),
    }
}
