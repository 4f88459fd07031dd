//! The value types with hand-written (de)serialization: ordered tables of unique names, element
//! parameters of any shape, points given as coordinates or by name, and inertia tensors.
//!
//! Hand-written so that a wrong value says what was expected (an untagged enum would only say
//! "data did not match any variant"), and so that JSON objects with a repeated key are rejected.

use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};

/// Pattern of a name of a node, body, point or element.
pub const NAME_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_-]*$";

/// Marker key under which the TOML deserializer hands over a date-time.
const TOML_DATETIME: &str = "$__toml_private_datetime";

/// A table of named entries, in file order; names are unique.
#[derive(Clone, Debug, PartialEq)]
pub struct Named<T>(pub Vec<(String, T)>);

thread_local! {
    /// Entries compared by name lookups on this thread ([`Named::examined`]).
    static EXAMINED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

impl<T> Default for Named<T> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<T> Named<T> {
    /// Entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &T)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
    /// The entry called `name` (a scan: see [`Named::examined`]).
    pub fn get(&self, name: &str) -> Option<&T> {
        self.position(name).map(|i| &self.0[i].1)
    }
    /// Index of the entry called `name` (a scan: see [`Named::examined`]).
    pub fn position(&self, name: &str) -> Option<usize> {
        let found = self.0.iter().position(|(k, _)| k == name);
        EXAMINED.with(|e| e.set(e.get() + found.map_or(self.0.len(), |i| i + 1)));
        found
    }
    /// How many entries [`Named::get`] and [`Named::position`] have compared on this thread:
    /// a count, not a time, for tests that a step looking names up stays linear in their
    /// number (one scan per name of a large table is quadratic; index the names instead).
    pub fn examined() -> usize {
        EXAMINED.with(std::cell::Cell::get)
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Named<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Named<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of named entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, T)> = Vec::new();
                // a set, not a scan of `out`: 100,000 points would take a quadratic time
                let mut seen = std::collections::HashSet::new();
                while let Some(key) = map.next_key::<String>()? {
                    if !seen.insert(key.clone()) {
                        return Err(de::Error::custom(format!("duplicate name `{key}`")));
                    }
                    let v = map.next_value::<T>()?;
                    out.push((key, v));
                }
                Ok(Named(out))
            }
        }
        d.deserialize_map(V(PhantomData))
    }
}

impl<T: Serialize> Serialize for Named<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl<T: JsonSchema> JsonSchema for Named<T> {
    fn schema_name() -> Cow<'static, str> {
        format!("Named_{}", T::schema_name()).into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(g: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "object",
            "propertyNames": { "pattern": NAME_PATTERN },
            "additionalProperties": g.subschema_for::<T>(),
        })
    }
}

/// An element parameter, of any shape; the element type reads it (through the registry).
#[derive(Clone, Debug, PartialEq)]
pub enum ParamValue {
    /// `true` / `false`.
    Bool(bool),
    /// A number (integers are read as numbers too).
    Number(f64),
    /// A string, e.g. a node or body name.
    String(String),
    /// An array.
    Array(Vec<ParamValue>),
    /// A table, keys in file order.
    Table(Vec<(String, ParamValue)>),
}

struct ParamVisitor;

impl<'de> Visitor<'de> for ParamVisitor {
    type Value = ParamValue;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number, string, boolean, array or table")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<ParamValue, E> {
        Ok(ParamValue::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ParamValue, E> {
        Ok(ParamValue::Number(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ParamValue, E> {
        Ok(ParamValue::Number(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<ParamValue, E> {
        Ok(ParamValue::Number(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<ParamValue, E> {
        Ok(ParamValue::String(v.to_string()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ParamValue, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(ParamSeed)? {
            out.push(v);
        }
        Ok(ParamValue::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ParamValue, A::Error> {
        Ok(ParamValue::Table(read_table(map)?))
    }
}

struct ParamSeed;

impl<'de> de::DeserializeSeed<'de> for ParamSeed {
    type Value = ParamValue;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<ParamValue, D::Error> {
        d.deserialize_any(ParamVisitor)
    }
}

fn read_table<'de, A: MapAccess<'de>>(mut map: A) -> Result<Vec<(String, ParamValue)>, A::Error> {
    let mut out: Vec<(String, ParamValue)> = Vec::new();
    while let Some(key) = map.next_key::<String>()? {
        if key == TOML_DATETIME {
            return Err(de::Error::custom("a date-time is not a model value"));
        }
        if out.iter().any(|(k, _)| *k == key) {
            return Err(de::Error::custom(format!("duplicate key `{key}`")));
        }
        let v = map.next_value_seed(ParamSeed)?;
        out.push((key, v));
    }
    Ok(out)
}

impl<'de> Deserialize<'de> for ParamValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ParamVisitor)
    }
}

impl Serialize for ParamValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            ParamValue::Bool(b) => s.serialize_bool(*b),
            ParamValue::Number(x) => s.serialize_f64(*x),
            ParamValue::String(v) => s.serialize_str(v),
            ParamValue::Array(items) => {
                let mut q = s.serialize_seq(Some(items.len()))?;
                for i in items {
                    q.serialize_element(i)?;
                }
                q.end()
            }
            ParamValue::Table(t) => {
                let mut m = s.serialize_map(Some(t.len()))?;
                for (k, v) in t {
                    m.serialize_entry(k, v)?;
                }
                m.end()
            }
        }
    }
}

/// An element's parameters: every key of its table except `type`, in file order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ParamTable(pub Vec<(String, ParamValue)>);

impl<'de> Deserialize<'de> for ParamTable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ParamTable;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a table of element parameters")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<ParamTable, A::Error> {
                Ok(ParamTable(read_table(map)?))
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for ParamTable {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

impl JsonSchema for ParamTable {
    fn schema_name() -> Cow<'static, str> {
        "ParamTable".into()
    }
    fn inline_schema() -> bool {
        true
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({ "type": "object", "additionalProperties": true })
    }
}

/// A point: coordinates `[x, y, z]` (file length unit), or the name of an existing node or point.
#[derive(Clone, Debug, PartialEq)]
pub enum PointSpec {
    /// Coordinates, in the frame the field names.
    Coordinates([f64; 3]),
    /// A name.
    Name(String),
}

fn read_numbers<'de, A: SeqAccess<'de>, const N: usize>(mut seq: A, what: &str) -> Result<[f64; N], A::Error> {
    let mut out = [0.0; N];
    let mut n = 0;
    while let Some(v) = seq.next_element::<f64>()? {
        if n < N {
            out[n] = v;
        }
        n += 1;
    }
    if n != N {
        return Err(de::Error::custom(format!("expected {N} numbers ({what}), found {n}")));
    }
    Ok(out)
}

impl<'de> Deserialize<'de> for PointSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = PointSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a point [x, y, z] or the name of a node or point")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PointSpec, E> {
                Ok(PointSpec::Name(v.to_string()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<PointSpec, A::Error> {
                read_numbers::<A, 3>(seq, "[x, y, z]").map(PointSpec::Coordinates)
            }
        }
        d.deserialize_any(V)
    }
}

impl Serialize for PointSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            PointSpec::Coordinates(c) => c.serialize(s),
            PointSpec::Name(n) => s.serialize_str(n),
        }
    }
}

impl JsonSchema for PointSpec {
    fn schema_name() -> Cow<'static, str> {
        "Point".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "Coordinates [x, y, z] in the file's length unit, or the name of a node or point.",
            "oneOf": [
                { "type": "array", "items": { "type": "number" }, "minItems": 3, "maxItems": 3 },
                { "type": "string" }
            ]
        })
    }
}

/// An inertia tensor (file's mass unit × length unit²): a 3x3 matrix, or its six independent
/// entries `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` (tensor entries, as in OpenSim).
#[derive(Clone, Debug, PartialEq)]
pub enum InertiaSpec {
    /// The full matrix, rows first.
    Matrix([[f64; 3]; 3]),
    /// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`.
    Moments([f64; 6]),
}

impl InertiaSpec {
    /// The tensor as a matrix.
    pub fn matrix(&self) -> [[f64; 3]; 3] {
        match *self {
            InertiaSpec::Matrix(m) => m,
            InertiaSpec::Moments([xx, yy, zz, xy, xz, yz]) => [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]],
        }
    }
}

/// One entry of an inertia array: a number, or a row of three.
enum InertiaItem {
    Number(f64),
    Row([f64; 3]),
}

impl<'de> Deserialize<'de> for InertiaItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = InertiaItem;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or a row of 3 numbers")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<InertiaItem, E> {
                Ok(InertiaItem::Number(v as f64))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<InertiaItem, E> {
                Ok(InertiaItem::Number(v as f64))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<InertiaItem, E> {
                Ok(InertiaItem::Number(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<InertiaItem, A::Error> {
                read_numbers::<A, 3>(seq, "a matrix row").map(InertiaItem::Row)
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for InertiaSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = InertiaSpec;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a 3x3 matrix or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<InertiaSpec, A::Error> {
                let mut items = Vec::new();
                while let Some(it) = seq.next_element::<InertiaItem>()? {
                    items.push(it);
                }
                let numbers: Vec<f64> =
                    items.iter().filter_map(|i| if let InertiaItem::Number(x) = i { Some(*x) } else { None }).collect();
                let rows: Vec<[f64; 3]> =
                    items.iter().filter_map(|i| if let InertiaItem::Row(r) = i { Some(*r) } else { None }).collect();
                match (numbers.len(), rows.len()) {
                    (6, 0) => {
                        let mut m = [0.0; 6];
                        m.copy_from_slice(&numbers);
                        Ok(InertiaSpec::Moments(m))
                    }
                    (0, 3) => Ok(InertiaSpec::Matrix([rows[0], rows[1], rows[2]])),
                    _ => Err(de::Error::custom(
                        "expected a 3x3 matrix [[Ixx, Ixy, Ixz], [Ixy, Iyy, Iyz], [Ixz, Iyz, Izz]] or six \
                         numbers [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]",
                    )),
                }
            }
        }
        d.deserialize_seq(V)
    }
}

impl Serialize for InertiaSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            InertiaSpec::Matrix(m) => m.serialize(s),
            InertiaSpec::Moments(m) => m.serialize(s),
        }
    }
}

impl JsonSchema for InertiaSpec {
    fn schema_name() -> Cow<'static, str> {
        "Inertia".into()
    }
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let row = json_schema!({ "type": "array", "items": { "type": "number" }, "minItems": 3, "maxItems": 3 });
        json_schema!({
            "description": "Inertia tensor about the centre of mass in body axes (mass unit x length unit^2): a 3x3 matrix or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz].",
            "oneOf": [
                { "type": "array", "items": row, "minItems": 3, "maxItems": 3 },
                { "type": "array", "items": { "type": "number" }, "minItems": 6, "maxItems": 6 }
            ]
        })
    }
}
