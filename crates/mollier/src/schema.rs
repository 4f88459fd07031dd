//! The JSON Schema of model files for this build: the format's schema with each registered
//! element type's parameters filled in, for completion in editors (taplo for TOML, `$schema` in
//! JSON).

use mollier_core::element::NodeKind;
use mollier_core::registry::{ElementType, ParamDoc, ParamKind, Registry};
use serde_json::{Map, Value, json};

/// The schema of model files with the element types of `registry`.
pub fn schema(registry: &Registry) -> Value {
    let mut root = mollier_format::schema();
    let names: Vec<&str> = registry.types().map(|t| t.name).collect();
    let law = root.pointer("/$defs/ElementSpec/properties/law").cloned();
    let cases: Vec<Value> = registry.types().map(|t| element_case(t, law.as_ref())).collect();
    if let Some(el) = root.pointer_mut("/$defs/ElementSpec").and_then(Value::as_object_mut) {
        if let Some(t) = el.get_mut("properties").and_then(|p| p.get_mut("type")).and_then(Value::as_object_mut) {
            t.insert("enum".into(), json!(names));
        }
        el.insert("allOf".into(), Value::Array(cases));
    }
    root
}

/// `if type == name then <its parameters>`; its `law` names the type's modes.
fn element_case(t: &ElementType, law: Option<&Value>) -> Value {
    let mut props = Map::new();
    props.insert("type".into(), json!({ "const": t.name }));
    if let Some(mut law) = law.cloned() {
        if let Some(o) = law.as_object_mut() {
            o.insert("propertyNames".into(), json!({ "enum": t.modes }));
        }
        props.insert("law".into(), law);
    }
    let (p, required) = params(t.params);
    props.extend(p);
    json!({
        "if": { "properties": { "type": { "const": t.name } }, "required": ["type"] },
        "then": {
            "description": t.summary,
            "properties": props,
            "required": required,
            "additionalProperties": false
        }
    })
}

fn params(docs: &[ParamDoc]) -> (Map<String, Value>, Vec<&'static str>) {
    let mut props = Map::new();
    let mut required = Vec::new();
    for d in docs {
        let mut s = kind_schema(d.kind);
        if let Some(o) = s.as_object_mut() {
            o.insert("description".into(), json!(format!("{}{}", d.doc, unit_note(d.kind))));
        }
        props.insert(d.name.into(), s);
        if d.required {
            required.push(d.name);
        }
    }
    (props, required)
}

/// How the file's units apply to a parameter of this kind (text to append to its description).
pub fn unit_note(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Length | ParamKind::Point => " (file length unit)",
        ParamKind::Angle => " (file angle unit)",
        _ => "",
    }
}

fn kind_schema(kind: ParamKind) -> Value {
    let three = json!({ "type": "array", "items": { "type": "number" }, "minItems": 3, "maxItems": 3 });
    match kind {
        ParamKind::Number | ParamKind::Length | ParamKind::Angle => json!({ "type": "number" }),
        ParamKind::Vector | ParamKind::Point => three,
        ParamKind::Numbers => json!({ "type": "array", "items": { "type": "number" } }),
        ParamKind::Node(_) | ParamKind::Body => json!({ "type": "string" }),
        // no fixed set: a name (a path point's `element.mode`)
        ParamKind::Choice([]) => json!({ "type": "string" }),
        ParamKind::Nodes(_) => json!({ "type": "array", "items": { "type": "string" } }),
        ParamKind::Choice(c) => json!({ "enum": c }),
        ParamKind::Bool => json!({ "type": "boolean" }),
        ParamKind::Table(d) => {
            let (p, r) = params(d);
            json!({ "type": "object", "properties": p, "required": r, "additionalProperties": false })
        }
        ParamKind::Tables(d) => {
            let (p, r) = params(d);
            json!({ "type": "array", "items": { "type": "object", "properties": p, "required": r, "additionalProperties": false } })
        }
    }
}

/// A short description of what a parameter of this kind holds, for `mollier types`.
pub fn describe_kind(kind: ParamKind) -> String {
    let node = |k: NodeKind| match k {
        NodeKind::Position => "point (node, body or body.point)",
        NodeKind::Orientation => "orientation (node or body)",
    };
    match kind {
        ParamKind::Number => "number".into(),
        ParamKind::Length => "length".into(),
        ParamKind::Angle => "angle".into(),
        ParamKind::Vector => "[x, y, z] direction".into(),
        ParamKind::Point => "[x, y, z] point".into(),
        ParamKind::Numbers => "array of numbers".into(),
        ParamKind::Node(k) => node(k).into(),
        ParamKind::Nodes(k) => format!("array of {}", node(k)),
        ParamKind::Body => "body".into(),
        ParamKind::Choice([]) => "name".into(),
        ParamKind::Choice(c) => format!("one of {}", c.join(", ")),
        ParamKind::Bool => "true or false".into(),
        ParamKind::Table(_) => "table".into(),
        ParamKind::Tables(_) => "array of tables".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn element_types_are_in_the_schema() {
        let s = schema(&crate::registry());
        let el = s.pointer("/$defs/ElementSpec").expect("ElementSpec is a definition");
        // every registered type, and one case per type
        let names: Vec<Value> = crate::registry().types().map(|t| json!(t.name)).collect();
        assert_eq!(el.pointer("/properties/type/enum"), Some(&Value::Array(names.clone())));
        for t in ["beam", "hinge", "truss"] {
            assert!(names.contains(&json!(t)), "{t}");
        }
        let cases = el["allOf"].as_array().expect("cases");
        assert_eq!(cases.len(), names.len());
        let hinge = cases.iter().find(|c| c.pointer("/if/properties/type/const") == Some(&json!("hinge"))).unwrap();
        assert_eq!(hinge.pointer("/then/required"), Some(&json!(["p", "q", "axis"])));
        assert_eq!(hinge.pointer("/then/properties/axis/maxItems"), Some(&json!(3)));
        // a law names the type's modes
        assert_eq!(
            hinge.pointer("/then/properties/law/propertyNames/enum"),
            Some(&json!(["rotation", "bending_y", "bending_z"]))
        );
        assert_eq!(
            hinge.pointer("/then/properties/law/additionalProperties/$ref"),
            Some(&json!("#/$defs/ModeLawSpec"))
        );
        assert_eq!(s.pointer("/$defs/ModeLawSpec/properties/stiffness/minimum"), Some(&json!(0.0)));
    }
}
