//! Step 5 of the compile: the partition in the user's words. `fixed` holds node coordinates,
//! `inputs` names the generalized coordinates (node coordinates or element modes), `free`
//! releases modes; each name is resolved once, and a coordinate or mode claimed twice is
//! reported where the second claim is.

use std::collections::HashMap;

use mollier_core::element::{NodeKind, Quantity};
use mollier_core::{ElementId, ModelBuilder, NodeId};
use mollier_format::{Diagnostic, Document, ModelSpec};

use super::names::{Names, Ref, Why, node_names, suggest};
use super::parts::Built;

/// An input as the partition names it, before the model is built and its ids exist.
pub(super) enum PendingInput {
    /// Coordinate `axis` of a node.
    Coordinate(NodeId, usize),
    /// Mode `k` of an element.
    Mode(ElementId, usize),
}

/// What an entry of `fixed`, `inputs` or `free` names.
pub(super) enum Target {
    /// Every coordinate of these nodes.
    Nodes(Vec<NodeId>),
    /// One coordinate.
    Coordinate(NodeId, usize, Quantity),
    /// Every mode of an element.
    Element(usize),
    /// One mode (element index in the file, mode index).
    Mode(usize, usize),
    /// Something that failed earlier (already reported).
    Failed,
}

/// Coordinates claimed by `fixed` or `inputs`: the role (`"fixed"`, `"an input"`) and the field
/// that claims it.
pub(super) type CoordRoles<'a> = HashMap<(NodeId, usize), (&'a str, String)>;

/// Step 5: the partition in the user's words — `fixed` coordinates, `inputs` and `free` modes —
/// set on `builder`; problems into `errors`. Returns the inputs as written, in order (only when
/// `with_inputs`), and the coordinates that are fixed or inputs.
pub(super) fn partition<'a>(
    doc: &'a Document,
    names: &Names<'_>,
    built: &[Option<Built>],
    builder: &mut ModelBuilder,
    errors: &mut Vec<Diagnostic>,
    with_inputs: bool,
) -> (Vec<(String, PendingInput, Quantity)>, CoordRoles<'a>) {
    let spec = doc.spec();
    let target = |text: &str| target(spec, names, built, text);
    let mut coord_role: HashMap<(NodeId, usize), (&str, String)> = HashMap::new();
    let mut mode_role: HashMap<(usize, usize), (&str, String)> = HashMap::new();
    let mut claim_coord =
        |errors: &mut Vec<Diagnostic>, key: (NodeId, usize), role: &'static str, path: &str, text: &str| {
            match coord_role.get(&key) {
                Some((r, p)) if *r != role => {
                    errors.push(doc.error(
                        path,
                        format!("`{text}` makes a coordinate {role} that `{p}` already makes {r}"),
                        "a coordinate is either fixed or an input: remove one of the two",
                    ));
                    false
                }
                _ => {
                    coord_role.insert(key, (role, path.to_string()));
                    true
                }
            }
        };
    for (i, text) in spec.fixed.iter().enumerate() {
        let path = format!("fixed[{i}]");
        match target(text) {
            Ok(Target::Nodes(ids)) => {
                for id in ids {
                    for a in 0..names.kinds[id.index()].dim() {
                        claim_coord(errors, (id, a), "fixed", &path, text);
                    }
                    builder.fix_node(id);
                }
            }
            Ok(Target::Coordinate(id, a, _)) => {
                claim_coord(errors, (id, a), "fixed", &path, text);
                builder.fix_coordinate(id, a);
            }
            Ok(Target::Element(_) | Target::Mode(..)) => errors.push(doc.error(
                &path,
                format!("`{text}` is an element or mode: `fixed` holds node coordinates"),
                "modes are rigid unless listed in `free` or `inputs`: remove it from `fixed`",
            )),
            Ok(Target::Failed) => {}
            Err((m, h)) => errors.push(doc.error(&path, m, h)),
        }
    }
    let mut inputs: Vec<(String, PendingInput, Quantity)> = Vec::new();
    for (i, text) in spec.inputs.iter().enumerate() {
        let path = format!("inputs[{i}]");
        match target(text) {
            Ok(Target::Coordinate(id, a, quantity)) => {
                if claim_coord(errors, (id, a), "an input", &path, text) && with_inputs {
                    builder.input_coordinate(id, a);
                    inputs.push((text.clone(), PendingInput::Coordinate(id, a), quantity));
                }
            }
            Ok(Target::Mode(e, k)) => {
                mode_role.insert((e, k), ("an input", path.clone()));
                if let Some(b) = &built[e] {
                    if with_inputs {
                        builder.input_mode(b.id, &b.modes[k].0);
                        inputs.push((text.clone(), PendingInput::Mode(b.id, k), b.modes[k].1));
                    } else {
                        builder.free_mode(b.id, &b.modes[k].0);
                    }
                }
            }
            Ok(Target::Nodes(_)) => errors.push(doc.error(
                &path,
                format!("`{text}` is a node, body or point: an input is one coordinate or one mode"),
                format!("write e.g. `{text}.x`, or an element mode such as `joint.rotation`"),
            )),
            Ok(Target::Element(e)) => {
                let modes: Vec<String> = built[e]
                    .as_ref()
                    .map(|b| b.modes.iter().map(|(m, _)| format!("{text}.{m}")).collect())
                    .unwrap_or_default();
                errors.push(doc.error(
                    &path,
                    format!("`{text}` is an element: an input is one of its modes"),
                    format!("write one of: {}", modes.join(", ")),
                ));
            }
            Ok(Target::Failed) => {}
            Err((m, h)) => errors.push(doc.error(&path, m, h)),
        }
    }
    for (i, text) in spec.free.iter().enumerate() {
        let path = format!("free[{i}]");
        let conflict =
            |errors: &mut Vec<Diagnostic>, e: usize, k: usize, mode_role: &HashMap<(usize, usize), (&str, String)>| {
                if let Some((_, p)) = mode_role.get(&(e, k)) {
                    let mode = built[e].as_ref().map_or(String::new(), |b| b.modes[k].0.clone());
                    errors.push(doc.error(
                        &path,
                        format!("mode `{}.{mode}` is released here but is an input at `{p}`", spec.elements.0[e].0),
                        "an input is driven, a free mode follows the motion: remove one of the two",
                    ));
                    true
                } else {
                    false
                }
            };
        match target(text) {
            Ok(Target::Element(e)) => {
                let n = built[e].as_ref().map_or(0, |b| b.modes.len());
                let clash = (0..n).any(|k| conflict(errors, e, k, &mode_role));
                if let (Some(b), false) = (&built[e], clash) {
                    builder.free_element(b.id);
                }
            }
            Ok(Target::Mode(e, k)) => {
                if !conflict(errors, e, k, &mode_role) {
                    if let Some(b) = &built[e] {
                        builder.free_mode(b.id, &b.modes[k].0);
                    }
                }
            }
            Ok(Target::Nodes(_) | Target::Coordinate(..)) => errors.push(doc.error(
                &path,
                format!("`{text}` is a node or coordinate: `free` releases element modes"),
                "nodes move unless they are fixed: remove it here (list it under `fixed` to hold it)",
            )),
            Ok(Target::Failed) => {}
            Err((m, h)) => errors.push(doc.error(&path, m, h)),
        }
    }
    (inputs, coord_role)
}

/// What an entry of `fixed`, `inputs` or `free` names, or why it names nothing.
fn target(spec: &ModelSpec, names: &Names<'_>, built: &[Option<Built>], text: &str) -> Result<Target, Why> {
    if let Some(r) = names.lookup.get(text) {
        let ids = match r {
            Ref::Node(i) => vec![names.plain[i]],
            Ref::Body(b) => vec![names.origin[b], names.orientation[b]],
            Ref::Point(b, p) => vec![names.points[b][p]],
        };
        return Ok(match ids.into_iter().collect::<Option<Vec<_>>>() {
            Some(v) => Target::Nodes(v),
            None => Target::Failed,
        });
    }
    if let Some(e) = spec.elements.position(text) {
        return Ok(if built[e].is_some() { Target::Element(e) } else { Target::Failed });
    }
    let Some((prefix, suffix)) = text.rsplit_once('.') else {
        let mut cands = node_names(spec);
        cands.extend(spec.elements.iter().map(|(k, _)| k.to_string()));
        let hint = match suggest(text, cands.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "name a node, body, `body.point`, element, `node.x` or `element.mode`".to_string(),
        };
        return Err((format!("no node, body, point or element called `{text}`"), hint));
    };
    if let Some(e) = spec.elements.position(prefix) {
        let Some(b) = &built[e] else { return Ok(Target::Failed) };
        return match b.modes.iter().position(|(m, _)| m == suffix) {
            Some(k) => Ok(Target::Mode(e, k)),
            None => {
                let modes: Vec<&str> = b.modes.iter().map(|(m, _)| m.as_str()).collect();
                let hint = match suggest(suffix, modes.iter().copied()) {
                    Some(s) => format!("did you mean `{prefix}.{s}`? its modes: {}", modes.join(", ")),
                    None => format!("its modes: {}", modes.join(", ")),
                };
                Err((format!("element `{prefix}` ({}) has no mode `{suffix}`", spec.elements.0[e].1.kind), hint))
            }
        };
    }
    let Some(r) = names.lookup.get(prefix) else {
        let mut cands = node_names(spec);
        cands.extend(spec.elements.iter().map(|(k, _)| k.to_string()));
        let hint = match suggest(prefix, cands.iter().map(String::as_str)) {
            Some(s) => format!("did you mean `{s}.{suffix}`?"),
            None => "name a node, body, `body.point` or element before the `.`".to_string(),
        };
        return Err((format!("no node, body, point or element called `{prefix}`"), hint));
    };
    // a body's orientation node, named as `check` lists it
    if let (Ref::Body(b), "orientation") = (r, suffix) {
        return Ok(names.orientation[b].map_or(Target::Failed, |id| Target::Nodes(vec![id])));
    }
    let axis = ["x", "y", "z"]
        .iter()
        .position(|a| *a == suffix)
        .map(|a| (a, NodeKind::Position))
        .or_else(|| ["l0", "l1", "l2", "l3"].iter().position(|a| *a == suffix).map(|a| (a, NodeKind::Orientation)));
    let Some((a, kind)) = axis else {
        let hint = match r {
            Ref::Body(_) => {
                "a body's coordinates are `x`, `y`, `z` (origin) and `l0`..`l3` (orientation); its points are `body.point`"
            }
            _ => "coordinates are `x`, `y`, `z` for points and `l0`..`l3` for orientations",
        };
        return Err((format!("`{suffix}` is not a coordinate of `{prefix}`"), hint.to_string()));
    };
    Ok(match names.resolve(prefix, kind)? {
        Some(id) => {
            let q = if kind == NodeKind::Position { Quantity::Length } else { Quantity::Dimensionless };
            Target::Coordinate(id, a, q)
        }
        None => Target::Failed,
    })
}
