//! For tests of joint element types: an element's parameter table read from an example model
//! file and built through the registry as the facade would, with its two bodies resolved to
//! orientation nodes 0 and 1 (feature `example`).

use mollier_core::element::NodeKind;
use mollier_core::registry::{ElementType, Frame, ParamError, Params, Registry, Resolver, Units, Value};
use mollier_core::{Element, NodeId};

/// A parameter table: keys and values.
pub type Table = Vec<(String, Value)>;

/// An element of an example model file.
pub struct ExampleElement {
    text: &'static str,
    element: &'static str,
    bodies: [&'static str; 2],
    ty: ElementType,
}

struct Bodies([&'static str; 2]);

impl Resolver for Bodies {
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String> {
        match self.0.iter().position(|b| *b == name) {
            Some(i) if kind == NodeKind::Orientation => Ok(NodeId::new(i)),
            _ => Err(format!("no orientation node called `{name}`")),
        }
    }
    fn frame(&self, _name: &str) -> Option<Frame> {
        None
    }
    fn initial(&self, _node: NodeId) -> Option<Vec<f64>> {
        None
    }
}

/// A TOML value as a registry value.
pub fn value(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s.clone()),
        toml::Value::Integer(i) => Value::Number(*i as f64),
        toml::Value::Float(x) => Value::Number(*x),
        toml::Value::Boolean(b) => Value::Bool(*b),
        toml::Value::Array(a) => Value::Array(a.iter().map(value).collect()),
        toml::Value::Table(t) => Value::Table(t.iter().map(|(k, v)| (k.clone(), value(v))).collect()),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
    }
}

/// A TOML value written inline, e.g. `{ linear = 3.0 }`.
pub fn parse(s: &str) -> Value {
    value(&toml::from_str::<toml::Value>(&format!("v = {s}")).expect("a TOML value")["v"])
}

/// `t` with `key` replaced by `v` (or removed for `None`).
pub fn with(mut t: Table, key: &str, v: Option<Value>) -> Table {
    t.retain(|(k, _)| k != key);
    if let Some(v) = v {
        t.push((key.to_string(), v));
    }
    t
}

impl ExampleElement {
    /// Element `element` of type `ty` in the model file `text`, joining `bodies`.
    pub fn new(text: &'static str, element: &'static str, bodies: [&'static str; 2], ty: ElementType) -> Self {
        Self { text, element, bodies, ty }
    }

    /// The element's parameters as the file gives them (without `type`).
    pub fn table(&self) -> Table {
        let doc: toml::Table = toml::from_str(self.text).expect("the example parses");
        let el = doc["elements"][self.element].as_table().expect("the element is a table");
        assert_eq!(el["type"].as_str(), Some(self.ty.name));
        el.iter().filter(|(k, _)| *k != "type").map(|(k, v)| (k.clone(), value(v))).collect()
    }

    /// Build parameters `t` in `units` through a registry holding the type.
    pub fn build(&self, t: &[(String, Value)], units: Units) -> Result<Box<dyn Element>, ParamError> {
        let mut r = Registry::new();
        r.register(self.ty).expect("registers");
        let path = format!("elements.{}", self.element);
        r.build(self.ty.name, &Params::new(t, &path, &Bodies(self.bodies), units))
    }

    /// The error building `t` gives (panics if it builds).
    pub fn error(&self, t: &[(String, Value)]) -> ParamError {
        self.build(t, Units::default()).map(|_| ()).expect_err("a bad table")
    }
}
