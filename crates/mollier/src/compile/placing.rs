//! Step 1 of the compile: place every body and point in the global frame. A body's origin may
//! name another body's point, which may name another node, and so on; each is placed once, in
//! the order the names lead to, and a cycle of names is reported where it closes.

use mollier_format::{Diagnostic, Document, ModelSpec, PointSpec, UnitsSpec};

use super::names::{Lookup, Ref, Why, unknown_node};
use super::parts::IDENTITY;

#[derive(Clone, Copy, Debug)]
pub(super) struct BodyFrame {
    pub(super) origin: [f64; 3],
    pub(super) euler: [f64; 4],
}

pub(super) enum State<T> {
    Todo,
    Busy,
    Done(Option<T>),
}

/// Phase 1: where every body and point is, following names between bodies.
pub(super) struct Placer<'a> {
    pub(super) doc: &'a Document,
    pub(super) spec: &'a ModelSpec,
    pub(super) lookup: Lookup<'a>,
    pub(super) units: UnitsSpec,
    pub(super) ang: f64,
    pub(super) frames: Vec<State<BodyFrame>>,
    pub(super) points: Vec<Vec<State<[f64; 3]>>>,
    pub(super) visiting: Vec<String>,
    pub(super) errors: Vec<Diagnostic>,
}

impl Placer<'_> {
    pub(super) fn frame(&mut self, b: usize) -> Result<Option<BodyFrame>, Why> {
        match self.frames[b] {
            State::Done(f) => return Ok(f),
            State::Busy => {
                let name = &self.spec.bodies.0[b].0;
                return Err((
                    format!("the origin of `{name}` is placed relative to `{name}` itself"),
                    "give one body on this chain its origin as coordinates".to_string(),
                ));
            }
            State::Todo => {}
        }
        self.frames[b] = State::Busy;
        let (name, body) = &self.spec.bodies.0[b];
        let origin = match &body.origin {
            PointSpec::Coordinates(c) => Some(c.map(|v| self.units.length_to_si(v))),
            PointSpec::Name(n) => self.position_at(n, &format!("bodies.{name}.origin")),
        };
        // checked when the file was parsed
        let euler = match &body.orientation {
            Some(o) => o.euler_parameters(self.ang).ok(),
            None => Some(IDENTITY),
        };
        let f = origin.zip(euler).map(|(origin, euler)| BodyFrame { origin, euler });
        self.frames[b] = State::Done(f);
        Ok(f)
    }

    /// The position of `name`, referred to from field `path`, where a problem is reported.
    fn position_at(&mut self, name: &str, path: &str) -> Option<[f64; 3]> {
        match self.position_of(name) {
            Ok(p) => p,
            Err((message, hint)) => {
                self.errors.push(self.doc.error(path, message, hint));
                None
            }
        }
    }

    /// `Ok(None)`: it could not be placed, and that was reported where the cause is.
    fn position_of(&mut self, name: &str) -> Result<Option<[f64; 3]>, Why> {
        if self.visiting.iter().any(|v| v == name) {
            return Err((
                format!("`{name}` is placed relative to itself ({} → {name})", self.visiting.join(" → ")),
                "give one point on this chain coordinates instead of a name".to_string(),
            ));
        }
        self.visiting.push(name.to_string());
        let r = match self.lookup.get(name) {
            None => Err(unknown_node(self.spec, name)),
            Some(Ref::Node(i)) => match self.spec.nodes.0[i].1.position {
                Some(p) => Ok(Some(p.map(|v| self.units.length_to_si(v)))),
                None => Err((
                    format!("`{name}` is an orientation node, not a point"),
                    "name a point: a position node, a body (its origin) or `body.point`".to_string(),
                )),
            },
            Some(Ref::Body(b)) => self.frame(b).map(|f| f.map(|f| f.origin)),
            Some(Ref::Point(b, p)) => self.point(b, p),
        };
        self.visiting.pop();
        r
    }

    pub(super) fn point(&mut self, b: usize, p: usize) -> Result<Option<[f64; 3]>, Why> {
        match self.points[b][p] {
            State::Done(x) => return Ok(x),
            State::Busy => return Ok(None),
            State::Todo => {}
        }
        self.points[b][p] = State::Busy;
        let (bname, body) = &self.spec.bodies.0[b];
        let (pname, spec) = &body.points.0[p];
        let r = match spec {
            PointSpec::Coordinates(c) => match self.frame(b) {
                Ok(f) => Ok(f.map(|f| add(&f.origin, &rotate(&f.euler, &c.map(|v| self.units.length_to_si(v)))))),
                Err(e) => Err(e),
            },
            PointSpec::Name(n) => Ok(self.position_at(n, &format!("bodies.{bname}.points.{pname}"))),
        };
        self.points[b][p] = State::Done(r.clone().ok().flatten());
        r
    }
}

/// Every body's frame, every body's points (global, m), the problems.
pub(super) type Placed = (Vec<Option<BodyFrame>>, Vec<Vec<Option<[f64; 3]>>>, Vec<Diagnostic>);

/// Step 1: every body's frame and every point in the global frame (`None` where it could not be
/// placed), and the problems found, each at its field.
pub(super) fn place(doc: &Document, ang: f64) -> Placed {
    let spec = doc.spec();
    let units = &spec.units;
    let mut placer = Placer {
        doc,
        spec,
        lookup: Lookup::new(spec),
        units: *units,
        ang,
        frames: spec.bodies.iter().map(|_| State::Todo).collect(),
        points: spec.bodies.iter().map(|(_, b)| b.points.iter().map(|_| State::Todo).collect()).collect(),
        visiting: Vec::new(),
        errors: Vec::new(),
    };
    let mut frames = Vec::with_capacity(spec.bodies.len());
    let mut globals: Vec<Vec<Option<[f64; 3]>>> = Vec::with_capacity(spec.bodies.len());
    for (b, (name, body)) in spec.bodies.iter().enumerate() {
        let f = match placer.frame(b) {
            Ok(f) => f,
            Err((m, h)) => {
                placer.errors.push(doc.error(&format!("bodies.{name}.origin"), m, h));
                None
            }
        };
        frames.push(f);
        let mut g = Vec::with_capacity(body.points.len());
        for p in 0..body.points.len() {
            g.push(match placer.point(b, p) {
                Ok(x) => x,
                Err((m, h)) => {
                    placer.errors.push(doc.error(&format!("bodies.{name}.points.{}", body.points.0[p].0), m, h));
                    None
                }
            });
        }
        globals.push(g);
    }
    (frames, globals, std::mem::take(&mut placer.errors))
}

/// The first three coordinates of a position node.
pub(super) fn position(c: &[f64]) -> [f64; 3] {
    match c {
        [x, y, z, ..] => [*x, *y, *z],
        _ => [f64::NAN; 3],
    }
}

pub(super) fn add(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

pub(super) fn sub(a: &[f64; 3], b: &[f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

pub(super) fn norm(a: &[f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// `R(λ) u`.
pub(super) fn rotate(l: &[f64; 4], u: &[f64; 3]) -> [f64; 3] {
    mollier_core::geometry::rotate(l, u)
}

/// `R(λ)ᵀ u`.
pub(super) fn rotate_back(l: &[f64; 4], u: &[f64; 3]) -> [f64; 3] {
    rotate(&mollier_core::geometry::quat_conjugate(l), u)
}
