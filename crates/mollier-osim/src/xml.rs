//! Reading values out of the XML tree, every problem placed at `file:line:col` with the path of
//! the element (`Model/JointSet/CustomJoint[knee_r]/SpatialTransform/...`).

use std::borrow::Cow;
use std::cell::Cell;

use mollier_format::{Diagnostic, Location};
use roxmltree::{Document, Node};

/// The document being read and its file name, for located problems.
pub(crate) struct Src<'a> {
    pub file: &'a str,
    pub doc: &'a Document<'a>,
    lines: Lines<'a>,
}

impl<'a> Src<'a> {
    /// The source of `doc`, parsed from `text` after [`prepare`] (which keeps every byte offset).
    pub fn new(file: &'a str, text: &'a str, doc: &'a Document<'a>) -> Self {
        Src { file, doc, lines: Lines::new(text) }
    }

    /// A problem at `node`.
    pub fn error(&self, node: Node, message: impl Into<String>, hint: impl Into<String>) -> Box<Diagnostic> {
        let (line, column) = self.lines.at(node.range().start);
        let mut d = Diagnostic::new(self.file, path_of(node), message).with_hint(hint);
        d.location = Some(Location { line, column });
        Box::new(d)
    }

    /// `file:line:col` of a node, for the import report and comments.
    pub fn place(&self, node: Node) -> String {
        let (line, column) = self.lines.at(node.range().start);
        format!("{}:{line}:{column}", self.file)
    }

    /// The text of child `tag`, trimmed; `None` when there is no such child.
    pub fn opt_text<'n>(&self, node: Node<'n, 'n>, tag: &str) -> Option<&'n str> {
        child(node, tag).map(|c| c.text().unwrap_or("").trim())
    }

    /// The text of child `tag`, which must be there.
    pub fn text<'n>(&self, node: Node<'n, 'n>, tag: &str) -> Result<&'n str, Box<Diagnostic>> {
        self.opt_text(node, tag).ok_or_else(|| {
            self.error(node, format!("`<{}>` has no `<{tag}>`", self::tag(node)), format!("add `<{tag}>`"))
        })
    }

    /// Numbers in child `tag` (whitespace separated), exactly `n` of them unless `n` is 0.
    pub fn numbers(&self, node: Node, tag: &str, n: usize) -> Result<Vec<f64>, Box<Diagnostic>> {
        let c = child(node, tag).ok_or_else(|| {
            self.error(node, format!("`<{}>` has no `<{tag}>`", self::tag(node)), format!("add `<{tag}>`"))
        })?;
        self.numbers_of(c, n)
    }

    /// Numbers in `node`'s own text.
    pub fn numbers_of(&self, node: Node, n: usize) -> Result<Vec<f64>, Box<Diagnostic>> {
        let text = node.text().unwrap_or("");
        let mut out = Vec::new();
        for w in text.split_whitespace() {
            let v = parse_number(w).ok_or_else(|| {
                self.error(node, format!("`{w}` is not a number"), "write a decimal number such as 0.25 or 1e-3")
            })?;
            if !v.is_finite() {
                return Err(self.error(node, format!("`{w}` is not finite"), "write a finite number"));
            }
            out.push(v);
        }
        if n > 0 && out.len() != n {
            return Err(self.error(
                node,
                format!("`<{}>` needs {n} numbers, it has {}", self::tag(node), out.len()),
                format!("write {n} numbers separated by spaces"),
            ));
        }
        Ok(out)
    }

    /// A three-vector in child `tag`, or `default` when the child is absent.
    pub fn vec3_or(&self, node: Node, tag: &str, default: [f64; 3]) -> Result<[f64; 3], Box<Diagnostic>> {
        if child(node, tag).is_none() {
            return Ok(default);
        }
        let v = self.numbers(node, tag, 3)?;
        Ok([v[0], v[1], v[2]])
    }

    /// One number in child `tag`, or `default` when absent.
    pub fn number_or(&self, node: Node, tag: &str, default: f64) -> Result<f64, Box<Diagnostic>> {
        if child(node, tag).is_none() {
            return Ok(default);
        }
        Ok(self.numbers(node, tag, 1)?[0])
    }

    /// `true`/`false` in child `tag`, or `default` when absent.
    pub fn bool_or(&self, node: Node, tag: &str, default: bool) -> Result<bool, Box<Diagnostic>> {
        match self.opt_text(node, tag) {
            None => Ok(default),
            Some("true") | Some("1") => Ok(true),
            Some("false") | Some("0") => Ok(false),
            Some(w) => Err(self.error(
                child(node, tag).unwrap_or(node),
                format!("`{w}` is not true or false"),
                "write true or false",
            )),
        }
    }
}

/// Line and column (1-based; columns in characters, as roxmltree counts them) of byte offsets,
/// in time linear in the text over a pass in increasing order (roxmltree's `text_pos_at` scans
/// from the start each time: a file of n objects took time n²).
struct Lines<'a> {
    text: &'a str,
    /// The byte offset of each line's start.
    starts: Vec<usize>,
    /// The last offset asked for, its line and column: the next column counts on from there.
    last: Cell<(usize, usize, usize)>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        Lines { text, starts, last: Cell::new((0, 1, 1)) }
    }

    fn at(&self, pos: usize) -> (usize, usize) {
        let mut pos = pos.min(self.text.len());
        while !self.text.is_char_boundary(pos) {
            pos -= 1;
        }
        let line = self.starts.partition_point(|s| *s <= pos);
        let start = self.starts[line - 1];
        let (lpos, lline, lcol) = self.last.get();
        let column = if lline == line && lpos <= pos {
            lcol + self.text[lpos..pos].chars().count()
        } else {
            1 + self.text[start..pos].chars().count()
        };
        self.last.set((pos, line, column));
        (line, column)
    }
}

/// Most attributes one element may have. OpenSim writes one or two (`name`, `Version`); the XML
/// reader checks each attribute against the element's others, so 100,000 took 29 s.
pub(crate) const MAX_ATTRIBUTES: usize = 256;

/// The text as the XML reader can take it, every byte offset kept: element names with `::`
/// (OpenSim 4 writes `<HuntCrossleyForce::ContactParametersSet>`, which an XML namespace reader
/// takes for an undeclared prefix) get `\u{b7}` (`·`, two bytes as `::` is) in its place. An element
/// with more than [`MAX_ATTRIBUTES`] attributes is refused at its byte offset. Linear time; what
/// is not well-formed is left for the XML reader to place.
///
/// The swap is exact: roxmltree cannot turn namespaces off, and `·` is an XML name character
/// (not a name's first: `::` first in a name is refused by the reader, as a prefix would be),
/// so the reader sees the same elements; byte offsets, hence lines and columns ([`Src`], and
/// the reader's own errors through [`offset_of`]), are those of the file; [`tag`] gives the name back for every message and path.
/// A file whose element names hold both `::` and `·` would be ambiguous and is refused at the
/// `·`.
pub(crate) fn prepare(text: &str) -> Result<Cow<'_, str>, (usize, String)> {
    let b = text.as_bytes();
    let mut names: Vec<usize> = Vec::new(); // offsets of `::` in element names
    let mut dot: Option<usize> = None; // the first `·` (U+00B7) in an element name
    let find = |from: usize, pat: &[u8]| -> Option<usize> {
        b.get(from..)?.windows(pat.len()).position(|w| w == pat).map(|k| from + k + pat.len())
    };
    let mut i = 0;
    while let Some(k) = b.get(i..).and_then(|r| r.iter().position(|c| *c == b'<')) {
        let at = i + k;
        let rest = &b[at..];
        let skip_to = |pat: &[u8]| find(at, pat).unwrap_or(b.len());
        if rest.starts_with(b"<!--") {
            i = skip_to(b"-->");
            continue;
        } else if rest.starts_with(b"<![CDATA[") {
            i = skip_to(b"]]>");
            continue;
        } else if rest.starts_with(b"<?") {
            i = skip_to(b"?>");
            continue;
        } else if rest.starts_with(b"<!") {
            i = skip_to(b">");
            continue;
        }
        // an element's start or end tag: its name, then (start tags) its attributes
        let mut j = at + if rest.starts_with(b"</") { 2 } else { 1 };
        while j < b.len() && !b[j].is_ascii_whitespace() && !matches!(b[j], b'/' | b'>') {
            if b[j] == b':' && b.get(j + 1) == Some(&b':') {
                names.push(j);
                j += 2;
            } else if b[j] == 0xC2 && b.get(j + 1) == Some(&0xB7) {
                dot = dot.or(Some(j));
                j += 2;
            } else {
                j += 1;
            }
        }
        let mut attributes = 0;
        loop {
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            match b.get(j) {
                None | Some(b'>') | Some(b'<') => break,
                Some(b'/') => {
                    j += 1;
                    continue;
                }
                _ => {}
            }
            // an attribute: name, `=`, a quoted value
            while j < b.len() && !matches!(b[j], b'=' | b'>' | b'<') {
                j += 1;
            }
            if b.get(j) != Some(&b'=') {
                break;
            }
            attributes += 1;
            if attributes > MAX_ATTRIBUTES {
                return Err((at, format!("an element with more than {MAX_ATTRIBUTES} attributes")));
            }
            j += 1;
            while j < b.len() && b[j].is_ascii_whitespace() {
                j += 1;
            }
            match b.get(j) {
                Some(q @ (b'"' | b'\'')) => j = find(j + 1, &[*q]).unwrap_or(b.len()),
                _ => break,
            }
        }
        i = j.max(at + 1);
    }
    if names.is_empty() {
        return Ok(Cow::Borrowed(text));
    }
    if let Some(at) = dot {
        return Err((at, "an element name with `·` in a file whose element names also hold `::`".to_string()));
    }
    let mut out = text.as_bytes().to_vec();
    for k in names {
        out[k] = 0xC2;
        out[k + 1] = 0xB7;
    }
    // `::` (ASCII) became one two-byte character: still UTF-8
    Ok(Cow::Owned(String::from_utf8(out).unwrap_or_else(|_| text.to_string())))
}

/// The byte offset of 1-based `line` and `column` (in characters) in `text`; the end of the text
/// when it has no such place.
pub(crate) fn offset_of(text: &str, line: usize, column: usize) -> usize {
    let start = if line <= 1 {
        0
    } else {
        match text.match_indices('\n').nth(line - 2) {
            Some((k, _)) => k + 1,
            None => return text.len(),
        }
    };
    text[start..].char_indices().nth(column.saturating_sub(1)).map_or(text.len(), |(k, _)| start + k)
}

/// OpenSim writes plain decimals; `inf`/`nan` are refused by the caller.
fn parse_number(w: &str) -> Option<f64> {
    w.parse::<f64>().ok()
}

/// The first child element called `tag`.
pub(crate) fn child<'a, 'i>(node: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
    node.children().find(|c| c.is_element() && c.tag_name().name() == tag)
}

/// The child elements of `node`'s `<tag><objects>` list (OpenSim's Set), or none.
pub(crate) fn set_objects<'a, 'i>(node: Node<'a, 'i>, tag: &str) -> Vec<Node<'a, 'i>> {
    child(node, tag)
        .and_then(|s| child(s, "objects"))
        .map(|o| o.children().filter(|c| c.is_element()).collect())
        .unwrap_or_default()
}

/// An element's `name` attribute, or "" when it has none.
pub(crate) fn name_of<'a>(node: Node<'a, '_>) -> &'a str {
    node.attribute("name").unwrap_or("")
}

/// An element's tag as written in the file (`::` given back, see [`prepare`]).
pub(crate) fn tag(node: Node) -> String {
    node.tag_name().name().replace('\u{b7}', "::")
}

/// `JointSet/CustomJoint[knee_r]/SpatialTransform/...`: tags below the model, with the names of
/// objects, leaving out the `objects` level and the names of OpenSim's sets (short enough to be
/// shown whole).
pub(crate) fn path_of(node: Node) -> String {
    let mut parts: Vec<String> = node
        .ancestors()
        .filter(|n| n.is_element())
        .take_while(|n| !matches!(n.tag_name().name(), "Model" | "OpenSimDocument"))
        .filter(|n| n.tag_name().name() != "objects")
        .map(|n| match n.attribute("name") {
            Some(name) if !name.is_empty() && !n.tag_name().name().ends_with("Set") => {
                format!("{}[{name}]", tag(n))
            }
            _ => tag(n),
        })
        .collect();
    parts.reverse();
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::{Lines, MAX_ATTRIBUTES, prepare};

    #[test]
    fn positions_are_those_of_the_xml_reader() {
        let text = "<a>\n  <b x='1'>é<c/></b>\n<d/><e/>\n\n  <f/></a>";
        let doc = roxmltree::Document::parse(text).unwrap();
        let lines = Lines::new(text);
        let nodes: Vec<_> = doc.descendants().collect();
        // in order and out of order
        for n in nodes.iter().chain(nodes.iter().rev()).chain(nodes.iter()) {
            let p = doc.text_pos_at(n.range().start);
            assert_eq!(lines.at(n.range().start), (p.row as usize, p.col as usize), "{n:?}");
        }
    }

    #[test]
    fn double_colons_in_element_names_keep_every_offset() {
        let text = "<a x='p::q'><!-- <b::c> --><H::C name='n'>t::u</H::C><![CDATA[<x::y>]]></a>";
        let got = prepare(text).unwrap();
        assert_eq!(got.len(), text.len());
        assert_eq!(got, "<a x='p::q'><!-- <b::c> --><H\u{b7}C name='n'>t::u</H\u{b7}C><![CDATA[<x::y>]]></a>");
        let doc = roxmltree::Document::parse(&got).unwrap();
        assert_eq!(doc.root_element().first_element_child().map(|n| super::tag(n)), Some("H::C".to_string()));
        // nothing to change: the text itself
        assert!(matches!(prepare("<a b='1'/>"), Ok(std::borrow::Cow::Borrowed(_))));
    }

    #[test]
    fn many_attributes_are_refused_in_linear_time() {
        let attrs = |n: usize| (0..n).map(|k| format!(" a{k}='v>'")).collect::<String>();
        let ok = format!("<a{}/>", attrs(MAX_ATTRIBUTES));
        assert!(prepare(&ok).is_ok());
        assert!(roxmltree::Document::parse(&ok).is_ok());
        let text = format!("<r>\n<a{}/></r>", attrs(MAX_ATTRIBUTES + 1));
        let (at, message) = prepare(&text).unwrap_err();
        assert_eq!(at, 4);
        assert!(message.contains("more than 256 attributes"), "{message}");
        // broken markup is left to the XML reader, without a panic
        for t in ["<", "<a", "<a b", "<a b=", "<a b='", "<!--", "<![CDATA[", "<?", "<!", "<a::", "a::b<c::"] {
            let _ = prepare(t);
        }
    }
}
