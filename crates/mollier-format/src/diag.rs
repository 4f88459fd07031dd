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
    ///
    /// What a file holds is echoed only in excerpts: a quoted part (`` `...` ``) of the message
    /// longer than [`EXCERPT_CHARS`] is cut to that, and so is the path and the message as a
    /// whole beyond [`MESSAGE_CHARS`] (a 5 MB name in a model gives a short message).
    pub fn new(file: impl Into<String>, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            location: None,
            path: excerpt(&path.into()).into_owned(),
            message: shorten(&message.into()),
            hint: None,
            snippet: None,
        }
    }

    /// Add a hint (shortened as the message is).
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(shorten(&hint.into()));
        self
    }

    /// Place the problem at byte range `span` of `text`.
    pub fn at_span(mut self, text: &str, span: std::ops::Range<usize>) -> Self {
        let (location, snippet) = locate(text, span);
        self.location = Some(location);
        self.snippet = Some(snippet);
        self
    }

    /// This problem with nothing of its file's contents: no source line, no field path (a key
    /// of the file), every quoted part of the message and hint shown as `` `…` ``; the file's
    /// name, the line and column and why the file cannot be used stay. For a file that another
    /// file names (a study's motion, a model's muscle table, a study's model), which may be any
    /// readable file: its lines are shown only when a user names it themselves. `named_by` is the
    /// file that names it.
    pub fn without_contents(mut self, named_by: &str) -> Self {
        let hidden = |t: &str| {
            t.split('`').enumerate().map(|(i, p)| if i % 2 == 1 { "…" } else { p }).collect::<Vec<_>>().join("`")
        };
        self.snippet = None;
        self.path.clear();
        self.message = hidden(&self.message);
        let note = format!(
            "{} names this file; its contents are not shown here (`mollier check` on it, or an editor, shows them)",
            excerpt(named_by)
        );
        self.hint = Some(match self.hint.take() {
            Some(h) => format!("{}; {note}", hidden(&h)),
            None => note,
        });
        self
    }

    /// `file:line:col: error: path: message` — the line editors and people grep for. Control
    /// characters of the file's name and the path are shown escaped ([`printable`]), and of the
    /// message but its line breaks ([`printable_lines`]).
    pub fn headline(&self) -> String {
        let mut s = printable(&self.file).into_owned();
        if let Some(l) = self.location {
            s.push_str(&format!(":{}:{}", l.line, l.column));
        }
        s.push_str(": error: ");
        if !self.path.is_empty() {
            s.push_str(&printable(&self.path));
            s.push_str(": ");
        }
        // a message may hold another file's rendered problem, lines and all
        s.push_str(&printable_lines(&self.message));
        s
    }

    /// The headline, the source line with the problem underlined, and the hint; every part from
    /// the file shown [`printable`], the underline under the escaped text.
    pub fn render(&self) -> String {
        let mut out = self.headline();
        if let (Some(loc), Some(snip)) = (self.location, &self.snippet) {
            let num = loc.line.to_string();
            let pad = " ".repeat(num.len());
            let before: String = snip.text.chars().take(snip.start).collect();
            let under: String = snip.text.chars().skip(snip.start).take(snip.len.max(1)).collect();
            let width = |t: &str| printable(t).chars().count();
            out.push_str(&format!(
                "\n{pad} |\n{num} | {}\n{pad} | {}{}",
                printable(&snip.text),
                " ".repeat(width(&before)),
                "^".repeat(width(&under).max(1))
            ));
        }
        if let Some(h) = &self.hint {
            out.push_str(&format!("\n  = hint: {}", printable_lines(h)));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.headline())?;
        if let Some(h) = &self.hint {
            write!(f, "\n  = hint: {}", printable_lines(h))?;
        }
        Ok(())
    }
}

/// Whether `c` must not reach a terminal raw: a control character (C0 but the line break, DEL,
/// C1), which can move the cursor, ring, rewrite a line (`\r`) or start an escape sequence, or a
/// bidirectional formatting character, which can reorder what is shown (U+061C, U+200E-U+200F,
/// U+202A-U+202E, U+2066-U+2069).
pub fn is_unprintable(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c, '\u{061C}' | '\u{200E}' | '\u{200F}' | '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// A name, value or line from an input as it may be printed: every [`is_unprintable`] character
/// and the line break written as an escape (`\n`, `\r`, `\t`, `\u{1b}`, `\u{202e}`), so that
/// what a file holds can neither drive the terminal nor start a line of its own. The one
/// function every message from an input is shown through (diagnostics here, the `mollier`
/// command's messages).
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    escape(s, false)
}

/// [`printable`] for a text of several lines made of parts already shown through it: line
/// breaks are kept, every other [`is_unprintable`] character is escaped.
pub fn printable_lines(s: &str) -> std::borrow::Cow<'_, str> {
    escape(s, true)
}

fn escape(s: &str, keep_lines: bool) -> std::borrow::Cow<'_, str> {
    let bad = |c: char| is_unprintable(c) || (c == '\n' && !keep_lines);
    if !s.chars().any(bad) {
        return s.into();
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' if bad(c) => out.extend(c.escape_default()),
            c if bad(c) => out.extend(c.escape_unicode()),
            c => out.push(c),
        }
    }
    out.into()
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
    /// Every problem [`Diagnostic::without_contents`]: for a file that `named_by` names.
    pub fn without_contents(self, named_by: &str) -> Self {
        Self(self.0.into_iter().map(|d| d.without_contents(named_by)).collect())
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

/// A number for people: 12 significant digits, shortest form (`4.05`, not `4.050000000000001`;
/// `30`, not `29.999999999999996`), exponent form beyond `1e-4..1e15` (`1e308`, not 309 digits).
pub fn human(x: f64) -> String {
    if x == 0.0 {
        return "0".into();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    let r: f64 = format!("{x:.11e}").parse().unwrap_or(x);
    if (1e-4..1e15).contains(&r.abs()) { r.to_string() } else { format!("{r:e}") }
}

/// The longest excerpt of a file's content echoed in a message or snippet (characters).
pub const EXCERPT_CHARS: usize = 80;

/// The longest message or hint (characters); longer ones are cut (a list of many names).
pub const MESSAGE_CHARS: usize = 1000;

/// `s` if it has at most [`EXCERPT_CHARS`] characters, else its start and `…`.
pub fn excerpt(s: &str) -> std::borrow::Cow<'_, str> {
    cut(s, EXCERPT_CHARS)
}

/// `s` cut to `max` characters, the last of them `…`.
fn cut(s: &str, max: usize) -> std::borrow::Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => s.into(),
        Some(_) => {
            let end = s.char_indices().nth(max - 1).map_or(s.len(), |(i, _)| i);
            format!("{}…", &s[..end]).into()
        }
    }
}

/// A message with every quoted part cut to an excerpt, and the whole to [`MESSAGE_CHARS`].
fn shorten(message: &str) -> String {
    let mut out = String::with_capacity(message.len().min(4 * MESSAGE_CHARS));
    for (i, part) in message.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        // odd parts are between backquotes
        out.push_str(if i % 2 == 1 { excerpt(part) } else { part.into() }.as_ref());
        if out.len() > 4 * MESSAGE_CHARS {
            break;
        }
    }
    cut(&out, MESSAGE_CHARS).into_owned()
}

/// Line, column and the snippet of byte range `span` in `text` (clamped to the text).
///
/// The snippet is at most [`EXCERPT_CHARS`] characters of the line, around the span's start.
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
    let location = Location { line, column };
    let chars = line_text.chars().count();
    if chars <= EXCERPT_CHARS {
        return (location, Snippet { text: line_text.replace('\t', " "), start: column - 1, len });
    }
    // a window of the line: a few characters before the span, `…` where it is cut
    let first = (column - 1).saturating_sub(EXCERPT_CHARS / 4).min(chars - EXCERPT_CHARS);
    let mut window: String = line_text.chars().skip(first).take(EXCERPT_CHARS).collect();
    let mut start_in = column - 1 - first;
    if first > 0 {
        window = format!("…{}", window.chars().skip(1).collect::<String>());
    }
    if first + EXCERPT_CHARS < chars {
        window = format!("{}…", window.chars().take(EXCERPT_CHARS - 1).collect::<String>());
    }
    start_in = start_in.min(EXCERPT_CHARS - 1);
    let len = len.min(EXCERPT_CHARS - start_in);
    (location, Snippet { text: window.replace('\t', " "), start: start_in, len })
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

    /// ESC, BEL, CR, DEL, a C1 control and a bidi override from a file never reach the terminal
    /// raw, in any part of a rendered problem; the underline stays under the escaped name.
    #[test]
    fn control_characters_from_a_file_are_shown_escaped() {
        let name = "a\u{1b}[2Jb\u{7}c\rd\u{7f}e\u{9b}f\u{202e}g\u{2066}h\ni";
        let text = format!("inputs = [\"{name}\"]\n");
        let d = Diagnostic::new("m\u{1b}.toml", format!("inputs.{name}"), format!("no mode `{name}`"))
            .with_hint(format!("did you mean `{name}`?"))
            .at_span(&text, 11..11 + name.len());
        for shown in [d.render(), d.to_string(), d.headline()] {
            assert!(!shown.chars().any(is_unprintable), "{shown:?}");
            // in the path on one line; in the message its line break is kept
            assert!(
                shown.contains("inputs.a\\u{1b}[2Jb\\u{7}c\\rd\\u{7f}e\\u{9b}f\\u{202e}g\\u{2066}h\\ni: "),
                "{shown}"
            );
            assert!(
                shown.contains("no mode `a\\u{1b}[2Jb\\u{7}c\\rd\\u{7f}e\\u{9b}f\\u{202e}g\\u{2066}h\ni`"),
                "{shown}"
            );
        }
        let r = d.render();
        let lines: Vec<&str> = r.lines().collect();
        let k = lines.iter().position(|l| l.starts_with("1 | ")).unwrap();
        let at = lines[k].find("a\\u{1b}").unwrap();
        let caret = lines[k + 1].find('^').unwrap();
        assert_eq!(lines[k][..at].chars().count(), lines[k + 1][..caret].chars().count(), "{r}");
        // the source line ends at the name's line break
        let on_line = name.split('\n').next().unwrap();
        assert_eq!(lines[k + 1].matches('^').count(), printable(on_line).chars().count(), "{r}");
        assert_eq!(printable("plain name é"), "plain name é");
        assert_eq!(printable_lines("a\nb\u{7}"), "a\nb\\u{7}");
    }

    /// A problem in a file that another file names keeps its place and its reason, and drops
    /// the line, the key and every quoted value (a planted secret is not echoed).
    #[test]
    fn a_named_files_problem_shows_none_of_its_contents() {
        let text = "time,x\nFAKE_PASSWORD=hunter2,1\n";
        let d = Diagnostic::new("secret.csv", "FAKE_PASSWORD=hunter2", "`FAKE_PASSWORD=hunter2` is not a number")
            .with_hint("write `FAKE_PASSWORD=hunter2` as a number")
            .at_span(text, 7..28);
        assert!(d.render().contains("hunter2"), "the fault is planted");
        let hidden = Diagnostics::one(d).without_contents("study.toml");
        let r = hidden.render();
        assert!(!r.contains("hunter2") && !r.contains("FAKE_PASSWORD"), "{r}");
        assert!(r.starts_with("secret.csv:2:1: error: `…` is not a number"), "{r}");
        assert!(r.contains("study.toml names this file"), "{r}");
    }

    #[test]
    fn numbers_for_people_are_short() {
        assert_eq!(human(4.05 + 1e-15), "4.05");
        assert_eq!(human(29.999999999999996), "30");
        assert_eq!(human(1e308), "1e308");
        assert_eq!(human(-2.5e-7), "-2.5e-7");
        assert_eq!(human(9810.0), "9810");
        assert_eq!(human(0.1 + 0.2), "0.3");
        assert_eq!(human(-0.0), "0");
        assert_eq!(human(f64::NAN), "NaN");
        assert_eq!(human(123456789012345.0), "123456789012000");
    }

    #[test]
    fn long_lines_and_quoted_names_are_echoed_as_excerpts() {
        let name = "x".repeat(5_000_000);
        let text = format!("inputs = [\"{name}\"]\n");
        let d = Diagnostic::new("m.toml", format!("elements.{name}"), format!("no mode `{name}`"))
            .with_hint(format!("did you mean `{name}`? or one of {}", "a, ".repeat(10_000)))
            .at_span(&text, 11..11 + name.len());
        let r = d.render();
        assert!(r.len() < 2 * MESSAGE_CHARS + 4 * EXCERPT_CHARS, "{} bytes", r.len());
        assert_eq!(d.message, format!("no mode `{}…`", "x".repeat(EXCERPT_CHARS - 1)));
        assert_eq!(d.location, Some(Location { line: 1, column: 12 }));
        let snip = d.snippet.expect("snippet");
        assert_eq!(snip.text.chars().count(), EXCERPT_CHARS);
        assert!(snip.text.starts_with("inputs = [\"x") && snip.text.ends_with("x…"), "{}", snip.text);
        assert_eq!((snip.start, snip.len), (11, EXCERPT_CHARS - 11));
        // far into a long line, the window starts there
        let long = format!("{}µ = 1\n", "a".repeat(500));
        let (loc, snip) = locate(&long, 500..502);
        assert_eq!(loc.column, 501);
        assert!(snip.text.starts_with('…') && snip.text.chars().nth(snip.start) == Some('µ'), "{snip:?}");
        assert!(snip.text.chars().count() <= EXCERPT_CHARS);
        // short ones are untouched
        assert_eq!(shorten("no node `crank.B`"), "no node `crank.B`");
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
