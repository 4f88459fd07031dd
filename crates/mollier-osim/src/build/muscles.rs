//! Muscles: their path points (body points), their wrap objects (obstacles of a curved truss),
//! their load-sharing parameters, and what the report says of path points and wrap objects.

use nalgebra::{Matrix3, Vector3};
use toml_edit::Value;

use super::doc::{self, float, num, text, vec3};
use super::{Ctx, Out, SPECIFIC_TENSION};
use crate::model::{DeGrooteFregly, Muscle, PathPoint, PathWrap, Shape, Wrap};
use crate::pose::xyz;
use crate::report::Entry;

/// A path point kept: its index in the `.osim` path (0-based), the point, where it is on its
/// body.
type Kept<'a> = (usize, &'a PathPoint, [f64; 3]);

/// One muscle: its path points as body points, its element (truss or curved truss), its
/// load-sharing entry. A muscle with fewer than two points ever in its path is left out.
pub(super) fn muscle(ctx: &Ctx, mu: &Muscle, out: &mut Out) {
    let name = out.top.claim_reported(&mu.name, &mu.place, &mu.kind, &mut out.entries);
    if let Some((_, why)) = ctx.leave_out.iter().find(|(n, _)| *n == mu.name) {
        out.entries.push(Entry::new(&mu.place, &mu.name, &mu.kind, format!("left out: {why}")));
        out.muscle_names.push(None);
        return;
    }
    let mut notes = Vec::new();
    let placed = super::path_points::path_points(ctx, mu, &mut notes, out);
    let refs: Vec<String> = placed.iter().map(|k| k.3.clone()).collect();
    let kept: Vec<Kept> = placed.into_iter().map(|(i, p, loc, _)| (i, p, loc)).collect();
    if kept.len() < 2 {
        out.entries.push(Entry::new(
            &mu.place,
            &mu.name,
            &mu.kind,
            "left out: fewer than two of its path points are ever active",
        ));
        out.muscle_names.push(None);
        return;
    }
    out.muscle_names.push(Some(name.clone()));
    let obstacles: Vec<(Value, String)> = mu.wraps.iter().filter_map(|w| obstacle(ctx, mu, w, &kept, out)).collect();
    // OpenSim wraps its objects one after the other (`wrapping = "opensim"`), which Mollier
    // reproduces; over an ellipsoid by another method than "hybrid", the shortest path instead
    let geodesic = mu.wraps.iter().any(|w| geodesic(ctx, w));
    let sequence = obstacles.len() > 1 && !geodesic;
    let ranges: Vec<(usize, usize)> = mu.wraps.iter().filter_map(|w| stretches(w, &kept)).collect();
    let shared = (0..ranges.len()).any(|i| (0..i).any(|j| ranges[i].0 <= ranges[j].1 && ranges[j].0 <= ranges[i].1));
    if obstacles.len() > 1 && shared && !sequence {
        out.entries.push(Entry::new(
            &mu.place,
            &mu.name,
            &mu.kind,
            "approximated: where an ellipsoid wrapped by another method than \"hybrid\" and other wrap objects act on one stretch, Mollier's path over them is the shortest; OpenSim wraps them one after the other (each from the tangent points of the ones before, up to 8 rounds)",
        ));
    }
    let mut heading = format!("{} `{}` ({})", mu.kind, mu.name, mu.place);
    if !notes.is_empty() {
        heading = format!("{heading}; {}", notes.join("; "));
    }
    out.heading.push(heading);
    let mut entries: Vec<(&str, Value)> = Vec::new();
    if obstacles.is_empty() && refs.len() == 2 {
        entries.extend([("type", text("truss")), ("p", text(&refs[0])), ("q", text(&refs[1]))]);
    } else {
        entries.extend([("type", text("curved-truss")), ("p", text(&refs[0])), ("q", text(&refs[refs.len() - 1]))]);
        if refs.len() > 2 {
            entries.push(("via", Value::Array(refs[1..refs.len() - 1].iter().map(|r| text(r)).collect())));
        }
        if !obstacles.is_empty() {
            entries.push(("obstacles", doc::noted_list(obstacles)));
        }
        if sequence {
            entries.push(("wrapping", text("opensim")));
        }
    }
    out.element(name.clone(), None, entries);
    out.free.push(name.clone());
    let lopt = mu.tendon_slack_length + mu.optimal_fiber_length * mu.pennation.cos();
    let note = format!(
        "Fmax {} N, fibre {} m, tendon slack {} m, pennation {:.2}°",
        num(mu.max_force),
        num(mu.optimal_fiber_length),
        num(mu.tendon_slack_length),
        mu.pennation.to_degrees()
    );
    let value = doc::inline(vec![("pcsa", float(mu.max_force / SPECIFIC_TENSION)), ("optimal_length", float(lopt))]);
    if let Some(d) = &mu.dynamics {
        hill(mu, d, &name, out);
    }
    out.sharing.push((name, value, note));
}

/// A `DeGrooteFregly2016Muscle`'s `[muscles]` entry: De Groote et al.'s curves with every
/// property, a rigid tendon for `ignore_tendon_compliance`; none without activation dynamics,
/// which Mollier's states cannot hold.
fn hill(mu: &Muscle, d: &DeGrooteFregly, name: &str, out: &mut Out) {
    if d.ignore_activation_dynamics {
        let action = "contraction dynamics not imported: Mollier's muscle always has activation \
                      dynamics (`ignore_activation_dynamics`)";
        out.entries.push(Entry::new(&mu.place, &mu.name, &mu.kind, action.to_string()));
        return;
    }
    let mut entries = vec![
        ("max_force", float(mu.max_force)),
        ("optimal_fibre_length", float(mu.optimal_fiber_length)),
        ("tendon_slack_length", float(mu.tendon_slack_length)),
        ("pennation", float(mu.pennation)),
        ("activation_time", float(d.activation_time_constant)),
        ("deactivation_time", float(d.deactivation_time_constant)),
        ("curves", text("de-groote-fregly-2016")),
        ("max_contraction_velocity", float(d.max_contraction_velocity)),
        ("tendon_strain_at_one_norm_force", float(d.tendon_strain_at_one_norm_force)),
        ("active_force_width_scale", float(d.active_force_width_scale)),
        ("fiber_damping", float(d.fiber_damping)),
        ("passive_fiber_strain_at_one_norm_force", float(d.passive_fiber_strain_at_one_norm_force)),
        ("activation_dynamics_smoothing", float(d.activation_dynamics_smoothing)),
        ("ignore_passive_fiber_force", Value::from(d.ignore_passive_fiber_force)),
    ];
    if d.ignore_tendon_compliance {
        entries.push(("tendon", text("rigid")));
    }
    out.hill.push((name.to_string(), doc::table(&[], Some(&format!("{} `{}`", mu.kind, mu.name)), entries)));
}

/// The obstacle of wrap `w` on the muscle's path (an inline table and the wrap's name for its
/// comment), on the stretch OpenSim wraps in the default pose; `None` when it is left out.
fn obstacle(ctx: &Ctx, mu: &Muscle, w: &PathWrap, kept: &[Kept], out: &mut Out) -> Option<(Value, String)> {
    let (wb, wk) = w.wrap;
    let wrap = &ctx.m.bodies[wb].wraps[wk];
    let leave_out = |why: String, out: &mut Out| out.entries.push(Entry::new(&mu.place, &mu.name, &mu.kind, why));
    if !wrap.active {
        leave_out(format!("wrap object `{}` is inactive in the model: left out", wrap.name), out);
        return None;
    }
    if let Shape::Other(t) = &wrap.shape {
        leave_out(format!("wrap object `{}` ({t}) left out: the path goes straight past it", wrap.name), out);
        return None;
    }
    // the stretches of its range, chosen at each posture as OpenSim does (`last_segment`)
    let Some((first, last)) = stretches(w, kept) else {
        leave_out(format!("wrap object `{}` left out: no stretch of the path lies in its range", wrap.name), out);
        return None;
    };
    let mut t: Vec<(&str, Value)> = Vec::new();
    match &wrap.shape {
        Shape::Sphere(r) => t.extend([("type", text("sphere")), ("radius", float(*r))]),
        // OpenSim's own path over the cylinder, not the shortest one
        Shape::Cylinder(r, l) => t.extend([
            ("type", text("cylinder")),
            ("radius", float(*r)),
            ("length", float(*l)),
            // OpenSim adjusts the tangent points when the muscle has several wrap objects
            ("method", text(if mu.wraps.len() > 1 { "opensim-several" } else { "opensim" })),
        ]),
        Shape::Ellipsoid(d) => {
            t.extend([("type", text("ellipsoid")), ("semi_axes", vec3(d))]);
            if geodesic(ctx, w) {
                leave_out(
                    format!(
                        "approximated: over wrap object `{}` by OpenSim's method `{}`, Mollier wraps a geodesic (OpenSim's \"hybrid\" method is reproduced, not this one)",
                        wrap.name, w.method
                    ),
                    out,
                );
            } else {
                // OpenSim's own path over the ellipsoid, its quadrant included
                t.push(("method", text("opensim")));
            }
        }
        Shape::Other(_) => return None,
    }
    t.insert(1, ("body", text(&out.body_names[wb])));
    t.push(("centre", vec3(&wrap.translation)));
    if wrap.rotation.iter().any(|v| *v != 0.0) {
        t.push(("rotation", vec3(&wrap.rotation)));
    }
    if let Some(side) = side(wrap, &xyz(&wrap.rotation)).filter(|_| !geodesic(ctx, w)) {
        t.push(("side", vec3(side.as_slice())));
    }
    if first > 0 {
        t.push(("segment", Value::from(first as i64)));
    }
    if last > first {
        t.push(("last_segment", Value::from(last as i64)));
    }
    // an anchor inside the object: OpenSim draws the stretch straight
    t.push(("inside", text("straight")));
    out.wrap_users.entry(w.wrap).or_default().push(mu.name.clone());
    Some((doc::inline(t), format!("`{}`", wrap.name)))
}

/// Whether Mollier wraps a geodesic over wrap `w` where OpenSim wraps its own path: an ellipsoid
/// by another method than "hybrid" (the one reproduced).
fn geodesic(ctx: &Ctx, w: &PathWrap) -> bool {
    let wr = &ctx.m.bodies[w.wrap.0].wraps[w.wrap.1];
    wr.active && matches!(wr.shape, Shape::Ellipsoid(_)) && w.method.trim() != "hybrid"
}

/// A one-sided cylinder's or ellipsoid's side (`+x`, `-y`, ... of its axes; `z` too for an
/// ellipsoid) as a direction in its body.
fn side(wrap: &Wrap, rr: &Matrix3<f64>) -> Option<Vector3<f64>> {
    let z = match wrap.shape {
        Shape::Cylinder(..) => false,
        Shape::Ellipsoid(_) => true,
        _ => return None,
    };
    let q = wrap.quadrant.trim();
    let sign = if q.starts_with('-') { -1.0 } else { 1.0 };
    match q.trim_start_matches(['+', '-']).to_ascii_lowercase().as_str() {
        _ if q.eq_ignore_ascii_case("all") => None,
        "x" => Some(rr.column(0) * sign),
        "y" => Some(rr.column(1) * sign),
        "z" if z => Some(rr.column(2) * sign),
        _ => None,
    }
}

/// The first and last stretch (between kept points `s` and `s + 1`) of wrap `w`'s range, where
/// OpenSim looks for the stretch to wrap at each posture; `None` when the range holds none.
fn stretches(w: &PathWrap, kept: &[Kept]) -> Option<(usize, usize)> {
    let (lo, hi) = (
        if w.range[0] >= 1 { (w.range[0] - 1) as usize } else { 0 },
        if w.range[1] >= 1 { (w.range[1] - 1) as usize } else { usize::MAX },
    );
    let mut s = (0..kept.len() - 1).filter(|s| kept[*s].0 >= lo && kept[*s + 1].0 <= hi);
    let first = s.next()?;
    Some((first, s.next_back().unwrap_or(first)))
}

/// One report entry per wrap object that Mollier does not reproduce exactly, naming its muscles.
pub(super) fn wrap_entries(ctx: &Ctx, out: &mut Out) {
    let mut used: Vec<_> = std::mem::take(&mut out.wrap_users).into_iter().collect();
    used.sort();
    for ((b, k), users) in used {
        let w = &ctx.m.bodies[b].wraps[k];
        let who = format!("{} path(s): {}", users.len(), users.join(", "));
        let action = match &w.shape {
            // OpenSim's own cylinder path, its quadrant included (`method = "opensim"`)
            Shape::Cylinder(..) => match w.quadrant.trim().to_ascii_lowercase().trim_start_matches(['+', '-']) {
                "all" | "x" | "y" => None,
                q => Some(format!("approximated: quadrant `{q}` ignored; {who}")),
            },
            // OpenSim's own ellipsoid path, its quadrant included (`method = "opensim"`)
            Shape::Ellipsoid(_) => match w.quadrant.trim().to_ascii_lowercase().trim_start_matches(['+', '-']) {
                "all" | "x" | "y" | "z" => None,
                _ => Some(format!("approximated: quadrant `{}` ignored; {who}", w.quadrant)),
            },
            Shape::Sphere(_) if w.quadrant.trim() != "all" => Some(format!(
                "approximated: quadrant `{}` ignored (Mollier's spheres wrap the shorter way round); {who}",
                w.quadrant
            )),
            _ => None,
        };
        if let Some(a) = action {
            out.entries.push(Entry::new(&w.place, &w.name, wrap_tag(&w.shape), a));
        }
    }
}

/// OpenSim's tag of a wrap object's shape.
fn wrap_tag(shape: &Shape) -> &str {
    match shape {
        Shape::Sphere(_) => "WrapSphere",
        Shape::Cylinder(..) => "WrapCylinder",
        Shape::Ellipsoid(_) => "WrapEllipsoid",
        Shape::Other(t) => t,
    }
}
