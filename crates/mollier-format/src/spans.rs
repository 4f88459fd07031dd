//! Where each field of a model file is: field path → byte range, for TOML and JSON.
//!
//! Paths are written as in error messages: keys joined by `.`, array items as `[i]`
//! (`bodies.crank.points.B[1]`). Only files that already parsed are indexed.

use std::collections::HashMap;
use std::ops::Range;

use toml::de::{DeTable, DeValue};

/// Field path → byte range of its value (and of its key, for table entries).
#[derive(Clone, Debug, Default)]
pub struct Spans {
    values: HashMap<String, Range<usize>>,
    keys: HashMap<String, Range<usize>>,
}

impl Spans {
    /// The range of the value at `path`, or of its nearest indexed ancestor.
    pub fn value(&self, path: &str) -> Option<Range<usize>> {
        let mut p = path;
        loop {
            if let Some(r) = self.values.get(p) {
                return Some(r.clone());
            }
            p = parent(p)?;
        }
    }

    /// The range of the value at `path` itself, if it is indexed (no ancestor).
    pub fn exact(&self, path: &str) -> Option<Range<usize>> {
        self.values.get(path).cloned()
    }

    /// The range of the key of the entry at `path` (exact), else that of its value or ancestor.
    pub fn key(&self, path: &str) -> Option<Range<usize>> {
        self.keys.get(path).cloned().or_else(|| self.value(path))
    }

    /// Index a TOML document.
    pub fn toml(text: &str) -> Self {
        let mut s = Self::default();
        if let Ok(root) = DeTable::parse(text) {
            s.toml_table("", root.get_ref());
        }
        s
    }

    fn toml_table(&mut self, path: &str, table: &DeTable<'_>) {
        for (k, v) in table.iter() {
            let p = join(path, k.get_ref());
            self.keys.insert(p.clone(), k.span());
            self.toml_value(p, v.get_ref(), v.span());
        }
    }

    fn toml_value(&mut self, path: String, value: &DeValue<'_>, span: Range<usize>) {
        match value {
            DeValue::Table(t) => self.toml_table(&path, t),
            DeValue::Array(a) => {
                for (i, item) in a.iter().enumerate() {
                    self.toml_value(format!("{path}[{i}]"), item.get_ref(), item.span());
                }
            }
            _ => {}
        }
        if !span.is_empty() {
            self.values.insert(path, span);
        }
    }

    /// Index a JSON document (one that `serde_json` accepted).
    pub fn json(text: &str) -> Self {
        let mut s = Self::default();
        let mut j = JsonScanner { b: text.as_bytes(), i: 0, text };
        j.value(&mut s, String::new());
        s
    }
}

/// The path without its last segment (`a.b[2]` → `a.b`, `a.b` → `a`, `a` → ``).
pub(crate) fn parent(path: &str) -> Option<&str> {
    if path.is_empty() {
        return None;
    }
    if path.ends_with(']') {
        if let Some(i) = path.rfind('[') {
            return Some(&path[..i]);
        }
    }
    Some(path.rfind('.').map_or("", |i| &path[..i]))
}

/// `path.key`, or `key` at the root.
pub(crate) fn join(path: &str, key: &str) -> String {
    if path.is_empty() { key.to_string() } else { format!("{path}.{key}") }
}

struct JsonScanner<'a> {
    b: &'a [u8],
    i: usize,
    text: &'a str,
}

impl JsonScanner<'_> {
    fn ws(&mut self) {
        while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
            self.i += 1;
        }
    }

    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// Skip a string starting at `"`, returning its raw range (with quotes).
    fn string(&mut self) -> Range<usize> {
        let start = self.i;
        self.i += 1;
        while self.i < self.b.len() {
            match self.b[self.i] {
                b'\\' => self.i += 2,
                b'"' => {
                    self.i += 1;
                    break;
                }
                _ => self.i += 1,
            }
        }
        start..self.i.min(self.b.len())
    }

    fn value(&mut self, spans: &mut Spans, path: String) {
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(b'{') => {
                self.i += 1;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b'"') => {
                            let kr = self.string();
                            let key: String = serde_json::from_str(&self.text[kr.clone()]).unwrap_or_default();
                            let p = join(&path, &key);
                            spans.keys.insert(p.clone(), kr);
                            self.ws();
                            if self.peek() == Some(b':') {
                                self.i += 1;
                            }
                            self.value(spans, p);
                            self.ws();
                            if self.peek() == Some(b',') {
                                self.i += 1;
                            }
                        }
                        Some(b'}') => {
                            self.i += 1;
                            break;
                        }
                        _ => break,
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut k = 0;
                loop {
                    self.ws();
                    match self.peek() {
                        Some(b']') => {
                            self.i += 1;
                            break;
                        }
                        None => break,
                        _ => {
                            let before = self.i;
                            self.value(spans, format!("{path}[{k}]"));
                            k += 1;
                            self.ws();
                            if self.peek() == Some(b',') {
                                self.i += 1;
                            } else if self.i == before {
                                break;
                            }
                        }
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while self.i < self.b.len()
                    && !matches!(self.b[self.i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                {
                    self.i += 1;
                }
            }
            None => return,
        }
        spans.values.insert(path, start..self.i);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_paths_point_at_values_and_headers() {
        let text = "a = 1\n[bodies.crank]\norigin = [0, 2.5, 0]\npoints = { B = [1, 0, 0] }\n";
        let s = Spans::toml(text);
        assert_eq!(&text[s.value("a").unwrap()], "1");
        assert_eq!(&text[s.value("bodies.crank.origin[1]").unwrap()], "2.5");
        assert_eq!(&text[s.value("bodies.crank.points.B").unwrap()], "[1, 0, 0]");
        // a table opened by a header is placed at the header
        assert_eq!(&text[s.value("bodies.crank").unwrap()], "[bodies.crank]");
        // unknown paths fall back to the nearest ancestor
        assert_eq!(&text[s.value("bodies.crank.origin[7]").unwrap()], "[0, 2.5, 0]");
        assert_eq!(s.value("nothing"), None);
    }

    #[test]
    fn json_paths_point_at_values_and_keys() {
        let text = r#"{"a": 1, "nodes": {"A\u0042": {"position": [0, -1e-3, 2]}}, "x": [[1], "s"]}"#;
        let s = Spans::json(text);
        assert_eq!(&text[s.value("a").unwrap()], "1");
        assert_eq!(&text[s.value("nodes.AB.position[1]").unwrap()], "-1e-3");
        assert_eq!(&text[s.key("nodes.AB").unwrap()], r#""A\u0042""#);
        assert_eq!(&text[s.value("x[0][0]").unwrap()], "1");
        assert_eq!(&text[s.value("x[1]").unwrap()], "\"s\"");
    }

    #[test]
    fn parents() {
        assert_eq!(parent("a.b[2]"), Some("a.b"));
        assert_eq!(parent("a.b"), Some("a"));
        assert_eq!(parent("a"), Some(""));
        assert_eq!(parent(""), None);
    }
}
