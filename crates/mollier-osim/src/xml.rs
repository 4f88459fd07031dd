//! Reading values out of the XML tree, every problem placed at `file:line:col` with the path of
//! the element (`Model/JointSet/CustomJoint[knee_r]/SpatialTransform/...`).

use mollier_format::{Diagnostic, Location};
use roxmltree::{Document, Node};

/// The document being read and its file name, for located problems.
pub(crate) struct Src<'a> {
    pub file: &'a str,
    pub doc: &'a Document<'a>,
}

impl<'a> Src<'a> {
    /// A problem at `node`.
    pub fn error(&self, node: Node, message: impl Into<String>, hint: impl Into<String>) -> Box<Diagnostic> {
        let pos = self.doc.text_pos_at(node.range().start);
        let mut d = Diagnostic::new(self.file, path_of(node), message).with_hint(hint);
        d.location = Some(Location { line: pos.row as usize, column: pos.col as usize });
        Box::new(d)
    }

    /// `file:line:col` of a node, for the import report and comments.
    pub fn place(&self, node: Node) -> String {
        let pos = self.doc.text_pos_at(node.range().start);
        format!("{}:{}:{}", self.file, pos.row, pos.col)
    }

    /// The text of child `tag`, trimmed; `None` when there is no such child.
    pub fn opt_text<'n>(&self, node: Node<'n, 'n>, tag: &str) -> Option<&'n str> {
        child(node, tag).map(|c| c.text().unwrap_or("").trim())
    }

    /// The text of child `tag`, which must be there.
    pub fn text<'n>(&self, node: Node<'n, 'n>, tag: &str) -> Result<&'n str, Box<Diagnostic>> {
        self.opt_text(node, tag).ok_or_else(|| {
            self.error(node, format!("`<{}>` has no `<{tag}>`", node.tag_name().name()), format!("add `<{tag}>`"))
        })
    }

    /// Numbers in child `tag` (whitespace separated), exactly `n` of them unless `n` is 0.
    pub fn numbers(&self, node: Node, tag: &str, n: usize) -> Result<Vec<f64>, Box<Diagnostic>> {
        let c = child(node, tag).ok_or_else(|| {
            self.error(node, format!("`<{}>` has no `<{tag}>`", node.tag_name().name()), format!("add `<{tag}>`"))
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
                format!("`<{}>` needs {n} numbers, it has {}", node.tag_name().name(), out.len()),
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
                format!("{}[{name}]", n.tag_name().name())
            }
            _ => n.tag_name().name().to_string(),
        })
        .collect();
    parts.reverse();
    parts.join("/")
}
