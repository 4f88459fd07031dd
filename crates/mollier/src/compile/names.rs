//! Names in the file and what they stand for: a name looked up among the file's nodes, bodies
//! and points, the resolver the element types call, and the "did you mean" hint of a problem.

use std::collections::HashMap;

use mollier_core::element::NodeKind;
use mollier_core::registry::{Frame, Resolver};
use mollier_core::{ElementId, ModeId, Model, NodeId};
use mollier_format::ModelSpec;

/// What went wrong, and a hint.
pub(crate) type Why = (String, String);

/// Separates a resolver's message from its hint inside a registry `ParamError` message.
pub(super) const HINT_MARK: &str = "\u{1f}";

/// A resolver's error split into its message and hint.
pub(super) fn split_hint(e: &str) -> (String, String) {
    match e.split_once(HINT_MARK) {
        Some((m, h)) => (m.to_string(), h.to_string()),
        None => (e.to_string(), "check the name".to_string()),
    }
}

/// A reference to something declared in the file, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ref {
    Node(usize),
    Body(usize),
    Point(usize, usize),
}

/// The file's names of nodes, bodies and `body.point`s, indexed once so that each lookup takes
/// constant time (a model may have 100,000 points: a scan per name would be quadratic).
pub(super) struct Lookup<'a> {
    nodes: HashMap<&'a str, usize>,
    bodies: HashMap<&'a str, usize>,
    /// Per body, its points.
    points: Vec<HashMap<&'a str, usize>>,
}

impl<'a> Lookup<'a> {
    /// Index the names of `spec` (the first of equal names wins, as a scan in file order would).
    pub(super) fn new(spec: &'a ModelSpec) -> Self {
        fn index<'a, T>(entries: impl Iterator<Item = (&'a str, T)>) -> HashMap<&'a str, usize> {
            let mut m = HashMap::new();
            for (i, (name, _)) in entries.enumerate() {
                m.entry(name).or_insert(i);
            }
            m
        }
        Self {
            nodes: index(spec.nodes.iter()),
            bodies: index(spec.bodies.iter()),
            points: spec.bodies.iter().map(|(_, b)| index(b.points.iter())).collect(),
        }
    }

    /// What `name` stands for: a node, else a body, else `body.point`.
    pub(super) fn get(&self, name: &str) -> Option<Ref> {
        if let Some(&i) = self.nodes.get(name) {
            return Some(Ref::Node(i));
        }
        if let Some(&b) = self.bodies.get(name) {
            return Some(Ref::Body(b));
        }
        let (body, point) = name.split_once('.')?;
        let b = *self.bodies.get(body)?;
        self.points[b].get(point).map(|&p| Ref::Point(b, p))
    }
}

/// Names that can stand for a node, for "did you mean".
pub(super) fn node_names(spec: &ModelSpec) -> Vec<String> {
    let mut v: Vec<String> = spec.nodes.iter().map(|(k, _)| k.to_string()).collect();
    for (b, body) in spec.bodies.iter() {
        v.push(b.to_string());
        v.extend(body.points.iter().map(|(p, _)| format!("{b}.{p}")));
    }
    v
}

/// Names longer than this (bytes) get no "did you mean": a typo is found in names people type.
const SUGGEST_MAX_NAME: usize = 64;

/// At most this many candidates are compared, so that the hint's cost is bounded.
const SUGGEST_MAX_CANDIDATES: usize = 10_000;

/// The closest candidate to `name` (same letters in another case, or at most 2 edits away).
///
/// Bounded cost: no suggestion for a name over [`SUGGEST_MAX_NAME`] bytes, candidates too long
/// to be close are skipped, and at most [`SUGGEST_MAX_CANDIDATES`] are compared.
pub(crate) fn suggest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    if name.len() > SUGGEST_MAX_NAME {
        return None;
    }
    let lower = name.to_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates.into_iter().take(SUGGEST_MAX_CANDIDATES) {
        // a prefix match needs the candidate at most this long to stay cheap; edits change the
        // length by at most the limit
        if c.len() > 2 * SUGGEST_MAX_NAME {
            continue;
        }
        let cl = c.to_lowercase();
        // a prefix of a longer name (a shortened point name) counts as one edit
        let d = if cl == lower {
            0
        } else if lower.len() >= 4 && cl.starts_with(&lower) {
            1
        } else {
            edit_distance(&lower, &cl)
        };
        let limit = match name.len() {
            0..=3 => 1,
            4..=12 => 2,
            n => n / 6,
        };
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for j in 0..b.len() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != b[j])).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

pub(super) fn unknown_node(spec: &ModelSpec, name: &str) -> (String, String) {
    let names = node_names(spec);
    let hint = match suggest(name, names.iter().map(String::as_str)) {
        Some(s) => format!("did you mean `{s}`?"),
        None => "declare it under [nodes], or as a point of a body and write `body.point`".to_string(),
    };
    (format!("no node, body or point called `{name}`"), hint)
}

/// Phase 3: names → kernel nodes, for the element types' parameters and the partition.
pub(super) struct Names<'a> {
    pub(super) spec: &'a ModelSpec,
    pub(super) lookup: Lookup<'a>,
    pub(super) plain: Vec<Option<NodeId>>,
    pub(super) origin: Vec<Option<NodeId>>,
    pub(super) orientation: Vec<Option<NodeId>>,
    pub(super) points: Vec<Vec<Option<NodeId>>>,
    pub(super) coords: Vec<Vec<f64>>,
    pub(super) kinds: Vec<NodeKind>,
}

impl Names<'_> {
    /// The node `name` of the given kind: `Ok(None)` when it could not be made (already reported).
    pub(super) fn resolve(&self, name: &str, kind: NodeKind) -> Result<Option<NodeId>, Why> {
        let Some(r) = self.lookup.get(name) else {
            return Err(unknown_node(self.spec, name));
        };
        let wrong = |what: &str| {
            let hint = match kind {
                NodeKind::Position => "name a point: a position node, a body (its origin) or `body.point`",
                NodeKind::Orientation => "name an orientation: an orientation node or a body",
            };
            Err((format!("`{name}` is {what}, but {} is needed here", article(kind)), hint.to_string()))
        };
        match (r, kind) {
            (Ref::Node(i), _) => match self.plain[i] {
                Some(id) if self.kinds[id.index()] != kind => {
                    wrong(&format!("{} node", article(self.kinds[id.index()])))
                }
                id => Ok(id),
            },
            (Ref::Body(b), NodeKind::Position) => Ok(self.origin[b]),
            (Ref::Body(b), NodeKind::Orientation) => Ok(self.orientation[b]),
            (Ref::Point(b, p), NodeKind::Position) => Ok(self.points[b][p]),
            (Ref::Point(..), NodeKind::Orientation) => wrong("a point of a body"),
        }
    }
}

fn article(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Position => "a position",
        NodeKind::Orientation => "an orientation",
    }
}

impl Resolver for Names<'_> {
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String> {
        match self.resolve(name, kind) {
            Ok(Some(id)) => Ok(id),
            Ok(None) => Err(format!("`{name}` could not be placed (see the problem reported there)")),
            // the compile step splits the hint off again (the registry carries one message)
            Err((m, h)) => Err(format!("{m}{HINT_MARK}{h}")),
        }
    }
    fn frame(&self, name: &str) -> Option<Frame> {
        let b = self.spec.bodies.position(name)?;
        Some(Frame { position: self.origin[b]?, orientation: self.orientation[b]? })
    }
    fn initial(&self, node: NodeId) -> Option<Vec<f64>> {
        self.coords.get(node.index()).cloned()
    }
}

/// The mode `element.mode` (or the one mode of `element`), whatever its role.
pub(crate) fn mode_named(model: &Model, text: &str) -> Result<ModeId, Why> {
    let element_names = || (0..model.n_elements()).map(|i| model.element_name(ElementId::new(i)));
    Ok(match model.element_by_name(text) {
        Some(el) => {
            let n = model.element(el).layout().n_modes();
            if n != 1 {
                let modes: Vec<String> = (0..n).map(|k| model.mode_name(model.mode_id(el, k))).collect();
                return Err((
                    format!("`{text}` has {n} modes: name one"),
                    format!("write one of: {}", modes.join(", ")),
                ));
            }
            model.mode_id(el, 0)
        }
        None => {
            let Some((name, mode)) = text.rsplit_once('.') else {
                let hint = match suggest(text, element_names()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "write `element.mode`, e.g. `conoid.elongation`".into(),
                };
                return Err((format!("no element called `{text}`"), hint));
            };
            let Some(el) = model.element_by_name(name) else {
                let hint = match suggest(name, element_names()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => "write `element.mode`, e.g. `conoid.elongation`".into(),
                };
                return Err((format!("no element called `{name}`"), hint));
            };
            let Some(m) = model.mode_by_name(el, mode) else {
                let n = model.element(el).layout().n_modes();
                let modes: Vec<String> =
                    (0..n).map(|k| model.mode_info(model.mode_id(el, k)).name.to_string()).collect();
                return Err((format!("`{name}` has no mode `{mode}`"), format!("its modes: {}", modes.join(", "))));
            };
            m
        }
    })
}

#[cfg(test)]
mod tests {
    use super::suggest;

    #[test]
    fn suggestions_are_bounded_in_cost() {
        let huge = "b".repeat(5_000_000);
        // a huge name gets no suggestion; a huge candidate is skipped, not compared
        assert_eq!(suggest(&huge, ["b", "bb"]), None);
        assert_eq!(suggest("rocker.c", [huge.as_str(), "rocker.C", "crank.B"]), Some("rocker.C"));
        // only the first 10,000 candidates are looked at
        let mut many: Vec<String> = (0..9_999).map(|i| format!("filler{i}")).collect();
        many.push("rocker.C".into());
        assert_eq!(suggest("rocker.c", many.iter().map(String::as_str)), Some("rocker.C"));
        many.insert(0, "filler".into());
        assert_eq!(suggest("rocker.c", many.iter().map(String::as_str)), None);
    }
}
