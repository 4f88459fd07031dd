//! `mollier types [--markdown]`: the element types, their modes and parameters.

use super::prelude::*;

fn param_lines(s: &mut String, params: &[ParamDoc], indent: usize) {
    let width = params.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in params {
        let req = if p.required { "required" } else { "optional" };
        s.push_str(&format!(
            "{:indent$}{:width$}  {}, {req}: {}{}\n",
            "",
            p.name,
            mollier::schema::describe_kind(p.kind),
            p.doc,
            mollier::schema::unit_note(p.kind)
        ));
        if let ParamKind::Table(sub) | ParamKind::Tables(sub) = p.kind {
            param_lines(s, sub, indent + 4);
        }
    }
}

pub fn text(registry: &Registry) -> String {
    let mut s = String::new();
    for t in registry.types() {
        s.push_str(&format!("{}: {}\n  modes: {}\n  parameters:\n", t.name, t.summary, t.modes.join(", ")));
        param_lines(&mut s, t.params, 4);
        s.push('\n');
    }
    s
}
