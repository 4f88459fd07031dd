//! The model IK solves: the user's model without its muscles, keeping of the bodies' points
//! only the markers and what the rest of the model names.
//!
//! A muscle's path element (a line of action, [`ElementRole::LineOfAction`], whose modes are all
//! free) holds nothing in place: its elongation follows from the nodes. A body's point that no
//! element, no list and no other point names places nothing either, yet each adds its rows to
//! every `DF`. IK needs only the skeleton and the markers: with the paths (and their wrapping)
//! and the muscles' attachment points gone, every position solve and every `DF` of a
//! Gauss-Newton step has the joints and the markers alone. Masses play no part in IK and are
//! left out too. The configuration of the bodies, and so of the markers and the inputs, is the
//! same on both models.

use std::collections::HashSet;

use mollier_core::registry::Registry;
use mollier_core::{ElementRole, ModeRole};
use mollier_format::{Format, Named, ParamValue, PointSpec};

use crate::compile::{Compiled, UserElement, compile};

/// Whether `el` is a muscle's path: a line of action none of whose modes is held or driven.
fn is_muscle_path(compiled: &Compiled, el: &UserElement) -> bool {
    let model = &compiled.model;
    let n = model.element(el.id).layout().n_modes();
    el.role == ElementRole::LineOfAction
        && (0..n).all(|k| model.mode_role(model.mode_id(el.id, k)) == ModeRole::Dependent)
}

/// Every string of a parameter's value (node and body names among them), into `out`.
fn strings<'s>(v: &'s ParamValue, out: &mut HashSet<&'s str>) {
    match v {
        ParamValue::String(s) => _ = out.insert(s.as_str()),
        ParamValue::Array(a) => a.iter().for_each(|v| strings(v, out)),
        ParamValue::Table(t) => t.iter().for_each(|(_, v)| strings(v, out)),
        ParamValue::Bool(_) | ParamValue::Number(_) => {}
    }
}

/// The elements left in `spec` that only place nodes of their own, and those nodes: an element
/// naming `[nodes]` positions that nothing else names (no other element, list, point or marker
/// of `markers`), all of whose modes are held, as many as those nodes' coordinates (a muscle's
/// moving path point, once the muscle is gone). The model's equations are then block
/// triangular in them: the rest places the bodies alone, so both go without changing it.
fn placing_only(
    compiled: &Compiled,
    spec: &mollier_format::ModelSpec,
    markers: &[&str],
) -> (HashSet<String>, HashSet<String>) {
    let mut others: HashSet<&str> = markers.iter().copied().collect();
    let lists = spec.fixed.iter().chain(&spec.inputs).chain(&spec.free);
    others.extend(lists.flat_map(|f| [f.as_str(), f.rsplit_once('.').map_or(f.as_str(), |(p, _)| p)]));
    for (_, body) in spec.bodies.0.iter() {
        let given = std::iter::once(&body.origin).chain(body.points.0.iter().map(|(_, p)| p)).chain(&body.com);
        others.extend(given.filter_map(|p| if let PointSpec::Name(n) = p { Some(n.as_str()) } else { None }));
    }
    let names: Vec<HashSet<&str>> = spec
        .elements
        .0
        .iter()
        .map(|(_, el)| {
            let mut set = HashSet::new();
            el.params.0.iter().for_each(|(_, v)| strings(v, &mut set));
            set
        })
        .collect();
    let (mut placers, mut private) = (HashSet::new(), HashSet::new());
    for (k, (name, _)) in spec.elements.0.iter().enumerate() {
        let own: Vec<&str> = names[k]
            .iter()
            .copied()
            .filter(|n| spec.nodes.get(n).is_some_and(|node| node.position.is_some()))
            .filter(|n| !others.contains(n) && names.iter().enumerate().all(|(j, set)| j == k || !set.contains(n)))
            .collect();
        let Some(el) = compiled.elements.iter().find(|e| e.name == *name) else { continue };
        let model = &compiled.model;
        let modes = model.element(el.id).layout().n_modes();
        let held = (0..modes).all(|m| matches!(model.mode_role(model.mode_id(el.id, m)), ModeRole::Fixed(_)));
        if !own.is_empty() && held && modes == 3 * own.len() {
            placers.insert(name.clone());
            private.extend(own.into_iter().map(str::to_string));
        }
    }
    (placers, private)
}

/// `compiled` without its muscles' path elements (and without what names them: the free
/// modes, load sharing, Hill muscles, loads and masses, which IK does not read) and without the
/// bodies' points that nothing names but `markers` (`body.point` names), compiled with
/// `registry`; `None` when nothing is left out, or when the model without it would not have
/// the same inputs or would not be well posed — then IK solves the model as it is.
pub(crate) fn without_muscles(compiled: &Compiled, registry: &Registry, markers: &[&str]) -> Option<Compiled> {
    let removed: HashSet<&str> =
        compiled.elements.iter().filter(|e| is_muscle_path(compiled, e)).map(|e| e.name.as_str()).collect();
    let mut spec = compiled.document.spec().clone();
    spec.elements.0.retain(|(name, _)| !removed.contains(name.as_str()));
    spec.free.retain(|f| !removed.contains(f.split_once('.').map_or(f.as_str(), |(el, _)| el)));
    (spec.muscles, spec.load_sharing, spec.loads, spec.gravity) = (Named::default(), None, Named::default(), None);
    let (placers, private) = placing_only(compiled, &spec, markers);
    spec.elements.0.retain(|(name, _)| !placers.contains(name));
    spec.nodes.0.retain(|(name, _)| !private.contains(name));
    // what names a point: the elements left, the lists (`body.point.x` as `body.point`), the
    // points and origins given as names, and the markers
    let mut named: HashSet<&str> = markers.iter().copied().collect();
    let lists = spec.fixed.iter().chain(&spec.inputs).chain(&spec.free);
    named.extend(lists.flat_map(|f| [f.as_str(), f.rsplit_once('.').map_or(f.as_str(), |(p, _)| p)]));
    spec.elements.0.iter().for_each(|(_, el)| el.params.0.iter().for_each(|(_, v)| strings(v, &mut named)));
    for (_, body) in spec.bodies.0.iter() {
        let given = std::iter::once(&body.origin).chain(body.points.0.iter().map(|(_, p)| p));
        named.extend(given.filter_map(|p| if let PointSpec::Name(n) = p { Some(n.as_str()) } else { None }));
    }
    let named: HashSet<String> = named.into_iter().map(str::to_string).collect();
    let mut dropped = removed.len() + placers.len();
    for (body_name, body) in spec.bodies.0.iter_mut() {
        let before = body.points.0.len();
        body.points.0.retain(|(p, at)| {
            matches!(at, PointSpec::Name(_)) || named.contains(p) || named.contains(&format!("{body_name}.{p}"))
        });
        dropped += before - body.points.0.len();
        (body.mass, body.com, body.inertia, body.geometry) = (None, None, None, Vec::new());
    }
    if dropped == 0 {
        return None;
    }
    let text = serde_json::to_string(&spec).ok()?;
    let file = format!("{} (without its muscles)", compiled.document.file());
    let doc = mollier_format::parse_as(&file, &text, Format::Json).ok()?;
    let skeleton = compile(&doc, registry).ok()?;
    let same_inputs = skeleton.inputs.len() == compiled.inputs.len()
        && skeleton.inputs.iter().zip(&compiled.inputs).all(|(a, b)| a.name == b.name);
    (same_inputs && skeleton.model.is_square()).then_some(skeleton)
}
