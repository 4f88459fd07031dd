//! Located problems: `file:line:col`, the field path, what is wrong and how to fix it.

use std::fmt;

/// A position in a model file (both 1-based; the column counts characters, not bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// Line, from 1.
    pub line: usize,
    /// Column, from 1, in characters.
    pub column: usize,
}

/// The source line of a problem, with the part to underline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snippet {
    /// The whole line, without its line break.
    pub text: String,
    /// Characters before the underlined part.
    pub start: usize,
    /// Underlined characters (at least 1).
    pub len: usize,
}

/// One problem with a model file (or a file that goes with it, such as a motion file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// The file, as the user named it.
    pub file: String,
    /// Where in the file, when known.
    pub location: Option<Location>,
    /// Field path, e.g. `elements.coupler.p` or `inputs[0]`; empty for the file as a whole.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it.
    pub hint: Option<String>,
    /// The offending line, for display.
    pub snippet: Option<Snippet>,
}

impl Diagnostic {
    /// A problem with no known position in the file.
    pub fn new(file: impl Into<String>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            location: None,
            path: path.into(),
            message: message.into(),
            hint: None,
            snippet: None,
        }
    }

    /// Add a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Place the problem at byte range `span` of `text`.
    pub fn at_span(mut self, text: &str, span: std::ops::Range<usize>) -> Self {
        let (location, snippet) = locate(text, span);
        self.location = Some(location);
        self.snippet = Some(snippet);
        self
    }

    /// `file:line:col: error: path: message` — the line editors and people grep for.
    pub fn headline(&self) -> String {
        let mut s = self.file.clone();
        if let Some(l) = self.location {
            s.push_str(&format!(":{}:{}", l.line, l.column));
        }
        s.push_str(": error: ");
        if !self.path.is_empty() {
            s.push_str(&self.path);
            s.push_str(": ");
        }
        s.push_str(&self.message);
        s
    }

    /// The headline, the source line with the problem underlined, and the hint.
    pub fn render(&self) -> String {
        let mut out = self.headline();
        if let (Some(loc), Some(snip)) = (self.location, &self.snippet) {
            let num = loc.line.to_string();
            let pad = " ".repeat(num.len());
            out.push_str(&format!(
                "\n{pad} |\n{num} | {}\n{pad} | {}{}",
                snip.text,
                " ".repeat(snip.start),
                "^".repeat(snip.len.max(1))
            ));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("\n  = hint: {h}"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())?;
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {h}")?;
        }
        Ok(())
    }
}

/// Every problem found in a file (at least one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    /// One problem.
    pub fn one(d: Diagnostic) -> Self {
        Self(vec![d])
    }
    /// The problems.
    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }
    /// All of them rendered with their source lines, separated by blank lines.
    pub fn render(&self) -> String {
        self.0.iter().map(Diagnostic::render).collect::<Vec<_>>().join("\n\n")
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

/// Line, column and the snippet of byte range `span` in `text` (clamped to the text).
pub(crate) fn locate(text: &str, span: std::ops::Range<usize>) -> (Location, Snippet) {
    let start = floor_char_boundary(text, span.start.min(text.len()));
    let end = floor_char_boundary(text, span.end.clamp(start, text.len()));
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[..start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let line_text = text[line_start..line_end].trim_end_matches('\r');
    let under_end = end.min(line_start + line_text.len()).max(start);
    let len = text[start..under_end].chars().count().max(1);
    (Location { line, column }, Snippet { text: line_text.replace('\t', " "), start: column - 1, len })
}

/// Byte offset of `line:column` (1-based, column in characters), clamped to the text.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let mut off = 0;
    for _ in 1..line {
        match text[off..].find('\n') {
            Some(i) => off += i + 1,
            None => return text.len(),
        }
    }
    let rest = &text[off..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    off + rest[..line_len].char_indices().nth(column.saturating_sub(1)).map_or(line_len, |(i, _)| i)
}

fn floor_char_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_lines_and_columns_in_characters() {
        let text = "a = 1\nµ = [1, 2]\n";
        let (loc, snip) = locate(text, 11..17);
        assert_eq!(loc, Location { line: 2, column: 5 });
        assert_eq!(snip.text, "µ = [1, 2]");
        assert_eq!((snip.start, snip.len), (4, 6));
        assert_eq!(offset_of(text, 2, 5), 11);
        assert_eq!(offset_of(text, 9, 1), text.len());
    }

    #[test]
    fn renders_headline_snippet_and_hint() {
        let d = Diagnostic::new("m.toml", "nodes.A.position", "expected 3 numbers")
            .with_hint("write [x, y, z]")
            .at_span("[nodes.A]\nposition = [1, 2]\n", 21..27);
        assert_eq!(d.headline(), "m.toml:2:12: error: nodes.A.position: expected 3 numbers");
        assert_eq!(
            d.render(),
            "m.toml:2:12: error: nodes.A.position: expected 3 numbers\n  |\n2 | position = [1, 2]\n  |            ^^^^^^\n  = hint: write [x, y, z]"
        );
    }
}
