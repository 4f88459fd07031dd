//! The element type registry: how a model file's `type = "truss"` becomes an element.
//!
//! Each element crate describes its type once — name, parameters, and a function that builds the
//! element from a [`Params`] table — and registers it (one line in the application that collects
//! the element crates). The kernel and the file format never list element kinds.
//!
//! Parameters arrive as a format-neutral [`Value`] tree with node and body names already
//! resolvable; [`Params`] reads them with units applied and reports problems with the field's
//! path, which the model-file compiler turns into `file:line:col`.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;

use crate::element::{Element, NodeKind};
use crate::ids::NodeId;

/// A parameter value, as read from a model file.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Number(f64),
    /// A string (names of nodes and bodies are strings).
    String(String),
    /// An array.
    Array(Vec<Value>),
    /// A table, keys in file order.
    Table(Vec<(String, Value)>),
}

impl Value {
    fn kind(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Table(_) => "a table",
        }
    }
}

/// Unit factors to SI that the model file declared.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Units {
    /// Metres per length unit (1 for m, 0.001 for mm).
    pub length: f64,
    /// Radians per angle unit (1 for rad, π/180 for deg).
    pub angle: f64,
    /// Kilograms per mass unit.
    pub mass: f64,
}

impl Default for Units {
    fn default() -> Self {
        Self { length: 1.0, angle: 1.0, mass: 1.0 }
    }
}

/// A body's frame: the position node at its origin and its orientation node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Origin of the body frame.
    pub position: NodeId,
    /// Orientation of the body frame.
    pub orientation: NodeId,
}

/// Resolves names in parameters to the model's nodes and bodies.
pub trait Resolver {
    /// The node called `name` of the given kind. A body's name stands for its origin (position)
    /// or its orientation node, whichever is asked for; a body's point is `body.point`.
    /// `Err` says why not (no such name, or a node of the other kind).
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String>;
    /// A body's frame by the body's name.
    fn frame(&self, name: &str) -> Option<Frame>;
    /// Initial coordinates of a node (3 or 4 numbers).
    fn initial(&self, node: NodeId) -> Option<Vec<f64>>;
    /// A copy of the element that `reference` (`element.mode`) names, built from that element's
    /// own parameters, and the index of the mode: an element that measures another's mode (a
    /// path point following a joint's coordinate). The copy is not part of the model. `Err`
    /// says why not; the default names no element.
    fn element(&self, reference: &str) -> Result<(Box<dyn Element>, usize), String> {
        Err(format!("`{reference}`: no element can be named here"))
    }
}

/// A problem with one parameter; `path` is relative to the element's parameter table.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ParamError {
    /// Field path, e.g. `axis` or `obstacles[1].radius`.
    pub path: String,
    /// What is wrong.
    pub message: String,
    /// How to fix it, when there is an obvious way.
    pub hint: Option<String>,
}

impl ParamError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into(), hint: None }
    }
    /// Add a hint.
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Reads an element's parameter table.
pub struct Params<'a> {
    table: &'a [(String, Value)],
    prefix: String,
    resolver: &'a dyn Resolver,
    units: Units,
    used: RefCell<Vec<bool>>,
}

impl fmt::Debug for Params<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Params").field("prefix", &self.prefix).field("table", &self.table).finish()
    }
}

impl<'a> Params<'a> {
    /// A reader over `table` (field paths start at `prefix`, usually empty).
    pub fn new(
        table: &'a [(String, Value)],
        prefix: impl Into<String>,
        resolver: &'a dyn Resolver,
        units: Units,
    ) -> Self {
        Self { table, prefix: prefix.into(), resolver, units, used: RefCell::new(vec![false; table.len()]) }
    }

    /// The path of `key` in this table.
    pub fn path(&self, key: &str) -> String {
        if self.prefix.is_empty() { key.to_string() } else { format!("{}.{key}", self.prefix) }
    }

    /// The units in force.
    pub fn units(&self) -> Units {
        self.units
    }

    /// The resolver (for elements that need initial coordinates).
    pub fn resolver(&self) -> &dyn Resolver {
        self.resolver
    }

    /// The raw value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&'a Value> {
        let i = self.table.iter().position(|(k, _)| k == key)?;
        self.used.borrow_mut()[i] = true;
        Some(&self.table[i].1)
    }

    fn require(&self, key: &str) -> Result<&'a Value, ParamError> {
        self.get(key).ok_or_else(|| ParamError::new(self.path(key), "missing required parameter"))
    }

    fn expect_number(&self, path: &str, v: &Value) -> Result<f64, ParamError> {
        match v {
            Value::Number(x) if x.is_finite() => Ok(*x),
            Value::Number(x) => Err(ParamError::new(path, format!("must be finite, found {x}"))),
            other => Err(ParamError::new(path, format!("expected a number, found {}", other.kind()))),
        }
    }

    fn expect_numbers(&self, path: &str, v: &Value, count: Option<usize>) -> Result<Vec<f64>, ParamError> {
        let Value::Array(items) = v else {
            return Err(ParamError::new(path, format!("expected an array of numbers, found {}", v.kind())));
        };
        if let Some(n) = count {
            if items.len() != n {
                return Err(ParamError::new(path, format!("expected {n} numbers, found {}", items.len())));
            }
        }
        items.iter().enumerate().map(|(i, x)| self.expect_number(&format!("{path}[{i}]"), x)).collect()
    }

    /// A plain number.
    pub fn number(&self, key: &str) -> Result<f64, ParamError> {
        let v = self.require(key)?;
        self.expect_number(&self.path(key), v)
    }

    /// A plain number, or `default` when absent.
    pub fn number_or(&self, key: &str, default: f64) -> Result<f64, ParamError> {
        match self.get(key) {
            Some(v) => self.expect_number(&self.path(key), v),
            None => Ok(default),
        }
    }

    /// A number that must be positive.
    pub fn positive(&self, key: &str) -> Result<f64, ParamError> {
        let x = self.number(key)?;
        if x > 0.0 { Ok(x) } else { Err(ParamError::new(self.path(key), format!("must be positive, found {x}"))) }
    }

    /// A length, converted to m.
    pub fn length(&self, key: &str) -> Result<f64, ParamError> {
        Ok(self.number(key)? * self.units.length)
    }

    /// An angle, converted to rad.
    pub fn angle(&self, key: &str) -> Result<f64, ParamError> {
        Ok(self.number(key)? * self.units.angle)
    }

    /// An array of exactly `n` numbers (no units), or any length when `n` is `None`.
    pub fn numbers(&self, key: &str, n: Option<usize>) -> Result<Vec<f64>, ParamError> {
        let v = self.require(key)?;
        self.expect_numbers(&self.path(key), v, n)
    }

    /// A direction or other unitless 3-vector.
    pub fn vector(&self, key: &str) -> Result<[f64; 3], ParamError> {
        let v = self.numbers(key, Some(3))?;
        Ok([v[0], v[1], v[2]])
    }

    /// An optional unitless 3-vector.
    pub fn opt_vector(&self, key: &str) -> Result<Option<[f64; 3]>, ParamError> {
        if self.get(key).is_none() {
            return Ok(None);
        }
        self.vector(key).map(Some)
    }

    /// A point or offset, converted to m.
    pub fn point(&self, key: &str) -> Result<[f64; 3], ParamError> {
        let v = self.vector(key)?;
        Ok(v.map(|a| a * self.units.length))
    }

    /// A string.
    pub fn string(&self, key: &str) -> Result<&'a str, ParamError> {
        match self.require(key)? {
            Value::String(s) => Ok(s),
            other => Err(ParamError::new(self.path(key), format!("expected a string, found {}", other.kind()))),
        }
    }

    /// An optional string.
    pub fn opt_string(&self, key: &str) -> Result<Option<&'a str>, ParamError> {
        if self.get(key).is_none() {
            return Ok(None);
        }
        self.string(key).map(Some)
    }

    /// A boolean, or `default` when absent.
    pub fn bool_or(&self, key: &str, default: bool) -> Result<bool, ParamError> {
        match self.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(ParamError::new(self.path(key), format!("expected true or false, found {}", other.kind())))
            }
        }
    }

    fn resolve_node(&self, path: &str, name: &str, kind: NodeKind) -> Result<NodeId, ParamError> {
        self.resolver.node(name, kind).map_err(|m| ParamError::new(path, m))
    }

    /// A node of the given kind, by name.
    pub fn node(&self, key: &str, kind: NodeKind) -> Result<NodeId, ParamError> {
        let name = self.string(key)?;
        self.resolve_node(&self.path(key), name, kind)
    }

    /// An array of node names of one kind.
    pub fn nodes(&self, key: &str, kind: NodeKind) -> Result<Vec<NodeId>, ParamError> {
        let path = self.path(key);
        match self.require(key)? {
            Value::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => self.resolve_node(&format!("{path}[{i}]"), s, kind),
                    other => Err(ParamError::new(
                        format!("{path}[{i}]"),
                        format!("expected a node name, found {}", other.kind()),
                    )),
                })
                .collect(),
            other => Err(ParamError::new(path, format!("expected an array of node names, found {}", other.kind()))),
        }
    }

    /// A body's frame, by the body's name.
    pub fn frame(&self, key: &str) -> Result<Frame, ParamError> {
        let name = self.string(key)?;
        self.resolver.frame(name).ok_or_else(|| {
            ParamError::new(self.path(key), format!("no body called `{name}`")).with_hint("declare it under [bodies]")
        })
    }

    /// A nested table.
    pub fn table(&self, key: &str) -> Result<Params<'a>, ParamError> {
        match self.require(key)? {
            Value::Table(t) => Ok(Params::new(t, self.path(key), self.resolver, self.units)),
            other => Err(ParamError::new(self.path(key), format!("expected a table, found {}", other.kind()))),
        }
    }

    /// An array of tables (empty when absent).
    pub fn tables(&self, key: &str) -> Result<Vec<Params<'a>>, ParamError> {
        let path = self.path(key);
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::Table(t) => Ok(Params::new(t, format!("{path}[{i}]"), self.resolver, self.units)),
                    other => Err(ParamError::new(
                        format!("{path}[{i}]"),
                        format!("expected a table, found {}", other.kind()),
                    )),
                })
                .collect(),
            Some(other) => Err(ParamError::new(path, format!("expected an array of tables, found {}", other.kind()))),
        }
    }

    /// Fail on any key that was never read (a misspelt parameter).
    pub fn finish(&self, known: &[&str]) -> Result<(), ParamError> {
        let used = self.used.borrow();
        for (i, (k, _)) in self.table.iter().enumerate() {
            if !used[i] {
                let mut e = ParamError::new(self.path(k), "unknown parameter");
                if !known.is_empty() {
                    e = e.with_hint(format!("known parameters: {}", known.join(", ")));
                }
                return Err(e);
            }
        }
        Ok(())
    }
}

/// What a parameter holds, for documentation and the JSON schema.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// A number without unit.
    Number,
    /// A length (file's length unit).
    Length,
    /// An angle (file's angle unit).
    Angle,
    /// A unitless 3-vector (a direction).
    Vector,
    /// A 3-vector of lengths (a point or offset).
    Point,
    /// An array of numbers.
    Numbers,
    /// A node name.
    Node(NodeKind),
    /// An array of node names.
    Nodes(NodeKind),
    /// A body name.
    Body,
    /// A string from a fixed set.
    Choice(&'static [&'static str]),
    /// A boolean.
    Bool,
    /// A table with its own parameters.
    Table(&'static [ParamDoc]),
    /// An array of tables with these parameters.
    Tables(&'static [ParamDoc]),
}

/// Documentation of one parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParamDoc {
    /// Key in the element's table.
    pub name: &'static str,
    /// What it holds.
    pub kind: ParamKind,
    /// Whether it must be given.
    pub required: bool,
    /// One sentence: meaning, frame, default.
    pub doc: &'static str,
}

/// Builds an element from its parameters.
pub type BuildFn = fn(&Params<'_>) -> Result<Box<dyn Element>, ParamError>;

/// What an element type stands for in a musculoskeletal model, declared by the type itself
/// ([`ElementType::role`]) so that front ends ask the role, never the type's name: a new muscle
/// path element is found among the muscles without an edit outside its crate. The kernel's
/// solves never read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ElementRole {
    /// Part of a body's structure: a member between two of its points (`beam`).
    Body,
    /// A joint between two orientations, or a passive moment or a stop on one (`hinge`,
    /// `cardan-joint`, `ball-socket-resistance`, `joint-stop`). It has no place of its own: the
    /// viewer puts it where the bodies it joins meet.
    Joint,
    /// A line of action whose `elongation` is a length a muscle, ligament or bar spans (`truss`,
    /// `curved-truss`). With that elongation free, the element is taken for a muscle.
    LineOfAction,
    /// A point against an ellipsoid on a body (`surface`, held on it; `soft-contact`, pushed out
    /// by its own law). The ellipsoid is drawn as a contact surface.
    Contact,
}

impl ElementRole {
    /// Every role, in declaration order.
    pub const ALL: [ElementRole; 4] =
        [ElementRole::Body, ElementRole::Joint, ElementRole::LineOfAction, ElementRole::Contact];

    /// Its name as `mollier types` and the docs print it, e.g. `line-of-action`.
    pub fn name(self) -> &'static str {
        match self {
            ElementRole::Body => "body",
            ElementRole::Joint => "joint",
            ElementRole::LineOfAction => "line-of-action",
            ElementRole::Contact => "contact",
        }
    }
}

impl fmt::Display for ElementRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A registered element type.
#[derive(Clone, Copy, Debug)]
pub struct ElementType {
    /// The type name used in model files, e.g. `truss`.
    pub name: &'static str,
    /// One line on what it represents.
    pub summary: &'static str,
    /// What it stands for: the role front ends select elements by.
    pub role: ElementRole,
    /// Its deformation modes, in order.
    pub modes: &'static [&'static str],
    /// Its parameters.
    pub params: &'static [ParamDoc],
    /// The builder.
    pub build: BuildFn,
}

impl ElementType {
    /// Names of the parameters (for [`Params::finish`]).
    pub fn param_names(&self) -> Vec<&'static str> {
        self.params.iter().map(|p| p.name).collect()
    }
}

/// Element types by name.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    types: BTreeMap<&'static str, ElementType>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }
    /// Register a type; fails if the name is taken.
    pub fn register(&mut self, t: ElementType) -> Result<(), String> {
        if self.types.contains_key(t.name) {
            return Err(format!("element type `{}` is registered twice", t.name));
        }
        self.types.insert(t.name, t);
        Ok(())
    }
    /// The type called `name`.
    pub fn get(&self, name: &str) -> Option<&ElementType> {
        self.types.get(name)
    }
    /// All types, by name.
    pub fn types(&self) -> impl Iterator<Item = &ElementType> {
        self.types.values()
    }
    /// Build an element of type `name` from its parameters; unknown parameters are errors.
    pub fn build(&self, name: &str, params: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
        let t = self.get(name).ok_or_else(|| {
            let known: Vec<&str> = self.types.keys().copied().collect();
            ParamError::new("type", format!("unknown element type `{name}`"))
                .with_hint(format!("known types: {}", known.join(", ")))
        })?;
        let el = (t.build)(params)?;
        params.finish(&t.param_names())?;
        Ok(el)
    }
}
