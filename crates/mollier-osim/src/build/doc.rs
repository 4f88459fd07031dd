//! The pieces of the model file as `toml_edit` values: every string and key is escaped by the
//! serializer, so a name from the `.osim` file is data whatever its characters. Comments are the
//! one place text is written raw; [`comment`] shows control characters escaped, so a newline in
//! a name cannot end the comment and start a line of TOML.

use nalgebra::Matrix3;
use toml_edit::{Array, InlineTable, Item, Table, Value};

/// A number as it reads in comments: the shortest text that reads back to the same value (`1`,
/// `0.25`; an exponent only for the very small and very large).
pub(crate) fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:?}")
    }
}

/// `[x, y, z]` as it reads in comments.
pub(crate) fn triple(v: &[f64]) -> String {
    format!("[{}, {}, {}]", num(v[0]), num(v[1]), num(v[2]))
}

/// Text for a TOML comment: control characters (newline, carriage return, escape, ...) written
/// as Rust escapes (`\n`, `\u{1b}`), so the comment stays one line of comment.
pub(crate) fn comment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if c.is_control() {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

/// A number (`-0` written as `0`).
pub(crate) fn float(x: f64) -> Value {
    Value::from(if x == 0.0 { 0.0 } else { x })
}

/// `[x, y, z]`.
pub(crate) fn vec3(v: &[f64]) -> Value {
    Value::Array(v[..3].iter().map(|x| float(*x)).collect::<Array>())
}

/// A rotation matrix as `{ matrix = [[row 1], [row 2], [row 3]] }`.
pub(crate) fn orientation(r: &Matrix3<f64>) -> Value {
    let rows: Array = (0..3).map(|i| vec3(&[r[(i, 0)], r[(i, 1)], r[(i, 2)]])).collect();
    let mut t = InlineTable::new();
    t.insert("matrix", Value::Array(rows));
    Value::InlineTable(t)
}

/// A string value.
pub(crate) fn text(s: &str) -> Value {
    Value::from(s)
}

/// `v` with `# note` after it on its line.
pub(crate) fn noted(mut v: Value, note: &str) -> Value {
    v.decor_mut().set_suffix(format!("  # {}", comment(note)));
    v
}

/// Comment lines (each `# line`), preceded by a blank line: the prefix of a table.
pub(crate) fn lines_before(lines: &[String]) -> String {
    let mut s = String::from("\n");
    for l in lines {
        if l.is_empty() {
            s.push_str("#\n");
        } else {
            s.push_str("# ");
            s.push_str(&comment(l));
            s.push('\n');
        }
    }
    s
}

/// A table of `entries`, with `note` after its header and `before` as comment lines above it.
pub(crate) fn table(before: &[String], note: Option<&str>, entries: Vec<(&str, Value)>) -> Table {
    let mut t = Table::new();
    t.decor_mut().set_prefix(lines_before(before));
    if let Some(n) = note {
        t.decor_mut().set_suffix(format!("  # {}", comment(n)));
    }
    for (k, v) in entries {
        t.insert(k, Item::Value(v));
    }
    t
}

/// A list of strings, four to a line.
pub(crate) fn list(items: &[String]) -> Value {
    let mut a = Array::new();
    for (i, s) in items.iter().enumerate() {
        let mut v = text(s);
        v.decor_mut().set_prefix(if i % 4 == 0 { "\n    " } else { " " });
        a.push_formatted(v);
    }
    if !items.is_empty() {
        a.set_trailing_comma(true);
        a.set_trailing("\n");
    }
    Value::Array(a)
}

/// A list of values, one to a line, each with its comment after it.
pub(crate) fn noted_list(items: Vec<(Value, String)>) -> Value {
    let mut a = Array::new();
    let mut prev_note: Option<String> = None;
    for (mut v, note) in items {
        let before = prev_note.take().map(|n| format!("  # {}", comment(&n))).unwrap_or_default();
        v.decor_mut().set_prefix(format!("{before}\n    "));
        v.decor_mut().set_suffix("");
        a.push_formatted(v);
        prev_note = Some(note);
    }
    a.set_trailing_comma(true);
    a.set_trailing(format!("{}\n", prev_note.map(|n| format!("  # {}", comment(&n))).unwrap_or_default()));
    Value::Array(a)
}

/// An inline table of `entries`.
pub(crate) fn inline(entries: Vec<(&str, Value)>) -> Value {
    let mut t = InlineTable::new();
    for (k, v) in entries {
        t.insert(k, v);
    }
    Value::InlineTable(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_back_exactly() {
        for x in [1.0, -0.5, 0.1 + 0.2, 1e-7, 3.2e-5, 123456.789, 1e20, -2.5e-300, std::f64::consts::PI] {
            let text = num(x);
            assert_eq!(text.parse::<f64>().unwrap(), x, "{text}");
            let written = float(x).to_string();
            assert_eq!(written.trim().parse::<f64>().unwrap(), x, "{written}");
        }
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.0), "0");
        assert_eq!(float(-0.0).to_string().trim(), "0.0");
    }

    #[test]
    fn a_comment_stays_one_line() {
        assert_eq!(comment("a\nb\r\u{1b}[31m\u{7}\tc"), "a\\nb\\r\\u{1b}[31m\\u{7}\\tc");
        assert_eq!(comment("R.ASIS \"x\" ]#="), "R.ASIS \"x\" ]#=");
    }
}
