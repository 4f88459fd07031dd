//! Joints: massless nodes, the hinges and beams of their axes, the inputs they make, and what the
//! report says of coordinates.

use nalgebra::Vector3;
use toml_edit::{InlineTable, Item, Value};

use super::doc::{self, num, text, vec3};
use super::{Ctx, InputDef, Out};
use crate::function::Function;
use crate::model::{Axis, AxisValue, Joint};
use crate::pose::{Pose, axis_value, frame_pose, rot, xyz};
use crate::report::Entry;

/// Joint `k` of the model: its centre, its translations (beams) and rotations (hinges), and the
/// child body's origin.
pub(super) fn joint(ctx: &Ctx, k: usize, out: &mut Out) {
    let m = ctx.m;
    let j = &m.joints[k];
    let (pb, cb) = (j.parent.body, j.child.body);
    let f = frame_pose(&ctx.pose[pb], &j.parent);
    out.heading =
        vec![format!("---- {} `{}` ({}): {} -> {}", j.kind, j.name, j.place, m.bodies[pb].name, m.bodies[cb].name)];
    let centre = translations(ctx, j, &f, out);
    rotations(ctx, j, &f, out);
    // the child body: its origin, or the joint centre as one of its points
    if j.child.translation.iter().all(|v| *v == 0.0) {
        out.child_origin.insert(cb, (text(&centre), format!("at joint `{}`'s centre", j.name)));
    } else {
        out.child_origin
            .insert(cb, (vec3(ctx.pose[cb].o.as_slice()), format!("joint `{}`'s centre is its point below", j.name)));
        out.child_points.entry(cb).or_default().push((j.name.clone(), text(&centre)));
    }
}

/// The element of an axis (named after its coordinate when the input is the coordinate itself)
/// and whether it is so named.
fn axis_element(ctx: &Ctx, j: &Joint, label: &str, c: usize, fun: &Function, out: &mut Out) -> (String, bool) {
    if ctx.uses[c] == 1 && fun.is_shift() && !ctx.coupled.contains_key(&c) {
        let coord = &ctx.m.coordinates[c];
        (out.top.claim_reported(&coord.name, &coord.place, "Coordinate", &mut out.entries), true)
    } else {
        (out.top.claim(&format!("{}_{}", j.name, label)), false)
    }
}

/// The input of an axis's element (`el.mode`), or none for a locked coordinate; the element's
/// note says which.
fn driven(ctx: &Ctx, el: &str, mode: &str, c: usize, fun: &Function, exact: bool, out: &mut Out) -> String {
    let coord = &ctx.m.coordinates[c];
    if coord.locked {
        return format!("locked at {}: held", num(coord.default));
    }
    let at0 = fun.value(ctx.q0[c]);
    out.inputs.push(InputDef {
        name: format!("{el}.{mode}"),
        coordinate: c,
        function: fun.clone(),
        offset: at0,
        exact_name: exact,
    });
    if exact {
        format!("input: coordinate `{}` minus its default {}", coord.name, num(coord.default))
    } else {
        format!(
            "input: {} of coordinate `{}`, minus its value {} at the initial configuration",
            fun.describe(),
            coord.name,
            num(at0)
        )
    }
}

/// The joint's translations: its centre (the child frame's origin) as a point of the parent, or
/// beams from a base point on the parent along the driven axes. Returns the reference to the
/// centre.
fn translations(ctx: &Ctx, j: &Joint, f: &Pose, out: &mut Out) -> String {
    let (pb, pn) = (j.parent.body, out.body_names[j.parent.body].clone());
    let consts: Vector3<f64> = j
        .translations
        .iter()
        .filter(|a| matches!(a.value, AxisValue::Const(_)))
        .map(|a| Vector3::from(a.dir) * axis_value(&a.value, &ctx.q0))
        .sum();
    let var: Vec<&Axis> = j.translations.iter().filter(|a| matches!(a.value, AxisValue::Coord(..))).collect();
    if var.is_empty() {
        let local = Vector3::from(j.parent.translation) + xyz(&j.parent.orientation) * consts;
        if local.iter().all(|v| *v == 0.0) {
            return pn;
        }
        let p = out.points[pb].add(&j.name, vec3(local.as_slice()), format!("joint `{}`: its centre", j.name));
        return format!("{pn}.{p}");
    }
    // beams from a base point on the parent, each along its axis, 1 + |value| long here; their
    // elongation, signed along the axis, takes a translation of any size
    let lens: Vec<f64> = var.iter().map(|a| 1.0 + axis_value(&a.value, &ctx.q0).abs()).collect();
    let mut base = consts;
    for (a, l) in var.iter().zip(&lens) {
        base -= Vector3::from(a.dir) * *l;
    }
    let local = Vector3::from(j.parent.translation) + xyz(&j.parent.orientation) * base;
    let bp = out.points[pb].add(
        &format!("{}_base", j.name),
        vec3(local.as_slice()),
        format!("joint `{}`: base of its translations", j.name),
    );
    let mut prev = format!("{pn}.{bp}");
    // the base in global coordinates: F's origin plus the base offset in F
    let mut at = f.o + f.r * base;
    for (i, (a, l)) in var.iter().zip(&lens).enumerate() {
        let AxisValue::Coord(c, fun) = &a.value else { continue };
        at += f.r * Vector3::from(a.dir) * (l + fun.value(ctx.q0[*c]));
        let last = i + 1 == var.len();
        let node =
            out.top.claim(&if last { format!("{}_centre", j.name) } else { format!("{}_after_{}", j.name, a.label) });
        let what = if last {
            "the joint centre (child frame's origin)".to_string()
        } else {
            format!("after translation {}", a.label)
        };
        let note = format!("joint `{}`: {what}", j.name);
        out.nodes.push((node.clone(), doc::table(&[], Some(&note), vec![("position", vec3(at.as_slice()))])));
        let (el, exact) = axis_element(ctx, j, &a.label, *c, fun, out);
        let role = driven(ctx, &el, "elongation", *c, fun, exact, out);
        let note = format!("`{}` {} along {} of the parent frame; {role}", j.name, a.label, doc::triple(&a.dir));
        let entries: Vec<(&str, Value)> = vec![
            ("type", text("beam")),
            ("p", text(&prev)),
            ("orientation_p", text(&pn)),
            ("q", text(&node)),
            ("orientation_q", text(&pn)),
            // signed along the axis: a translation of any size, through the base and beyond
            ("elongation", text("along_p")),
        ];
        out.element(el.clone(), Some(&note), entries);
        for mode in ["torsion", "bending_y_q", "bending_z_q"] {
            out.free.push(format!("{el}.{mode}"));
        }
        prev = node;
    }
    prev
}

/// The joint's rotations: hinges from the parent's orientation to the child's through massless
/// orientation nodes; one rigid hinge when no coordinate turns it.
fn rotations(ctx: &Ctx, j: &Joint, f: &Pose, out: &mut Out) {
    let pn = out.body_names[j.parent.body].clone();
    let cn = out.body_names[j.child.body].clone();
    let n_var = j.rotations.iter().filter(|a| matches!(a.value, AxisValue::Coord(..))).count();
    let mut o = f.r;
    let mut p_orient = pn.clone();
    let mut n_done = 0;
    for a in &j.rotations {
        let v = axis_value(&a.value, &ctx.q0);
        let axis = o * Vector3::from(a.dir);
        o *= rot(&a.dir, v);
        let AxisValue::Coord(c, fun) = &a.value else { continue };
        n_done += 1;
        let q_orient = if n_done == n_var {
            cn.clone()
        } else {
            let node = out.top.claim(&format!("{}_after_{}", j.name, a.label));
            let note = format!("joint `{}`: after {} (massless)", j.name, a.label);
            out.nodes.push((node.clone(), doc::table(&[], Some(&note), vec![("orientation", doc::orientation(&o))])));
            node
        };
        let (el, exact) = axis_element(ctx, j, &a.label, *c, fun, out);
        let role = driven(ctx, &el, "rotation", *c, fun, exact, out);
        let note = format!("`{}` {} about {}; {role}", j.name, a.label, doc::triple(&a.dir));
        let entries: Vec<(&str, Value)> = vec![
            ("type", text("hinge")),
            ("p", text(&p_orient)),
            ("q", text(&q_orient)),
            ("axis", vec3(axis.as_slice())),
        ];
        out.element(el, Some(&note), entries);
        p_orient = q_orient;
    }
    if n_var == 0 {
        let el = out.top.claim(&j.name);
        let note = format!("`{}`: no rotation, the child's orientation held to the parent's", j.name);
        let entries: Vec<(&str, Value)> =
            vec![("type", text("hinge")), ("p", text(&pn)), ("q", text(&cn)), ("axis", vec3(&[0.0, 0.0, 1.0]))];
        out.element(el, Some(&note), entries);
    }
}

/// Report entries for coordinates the kernel cannot treat as OpenSim does: clamped, coupled,
/// driving axes through functions, or with a default value outside their range.
pub(super) fn coordinate_entries(ctx: &Ctx, out: &mut Out) {
    let m = ctx.m;
    for (i, c) in m.coordinates.iter().enumerate() {
        let [lo, hi] = c.range;
        // a default value outside the range (beyond rounding): OpenSim starts there all the same
        let slack = 1e-9 * (hi - lo).abs().clamp(1.0, 1e3);
        if c.default < lo - slack || c.default > hi + slack {
            out.entries.push(Entry::new(
                &c.place,
                &c.name,
                "Coordinate",
                format!(
                    "default value {} is outside its range [{}, {}]: the initial configuration takes it as OpenSim does; check the model",
                    num(c.default),
                    num(lo),
                    num(hi)
                ),
            ));
        }
        if c.clamped && !c.locked {
            out.entries.push(Entry::new(
                &c.place,
                &c.name,
                "Coordinate",
                format!("clamped to [{}, {}] in OpenSim: Mollier does not enforce the range", num(lo), num(hi)),
            ));
        }
        if let Some(k) = ctx.coupled.get(&i) {
            let cp = &m.couplers[*k];
            out.entries.push(Entry::new(
                &c.place,
                &c.name,
                "CoordinateCouplerConstraint",
                format!(
                    "`{}` sets it from `{}`: Mollier has no coupling between inputs, so its axes are inputs of their own; give them the coupled values (Import::inputs_from_coordinates)",
                    cp.name, m.coordinates[cp.independent].name
                ),
            ));
        } else if ctx.uses[i] > 1 || out.inputs.iter().any(|d| d.coordinate == i && !d.exact_name) {
            out.entries.push(Entry::new(
                &c.place,
                &c.name,
                "Coordinate",
                format!("drives {} axis(es) through functions: each axis is an input (the function's value minus its initial value); Mollier's kernel holds no function between them", ctx.uses[i]),
            ));
        }
    }
}

/// OpenSim's coordinate limit forces as `coordinate_limit` laws of their coordinates' modes, in
/// SI (a rotational coordinate's degrees to radians) and shifted by the default value (the mode
/// is the coordinate minus its default). A coordinate that is not one input of its own (locked,
/// coupled, through a function) keeps no law, and the report says so.
pub(super) fn limit_laws(ctx: &Ctx, out: &mut Out) {
    for f in &ctx.m.limit_forces {
        let coord = &ctx.m.coordinates[f.coordinate];
        let left_out = |out: &mut Out, why: &str| {
            let action = format!("left out: coordinate `{}` {why}", coord.name);
            out.entries.push(Entry::new(&f.place, &f.name, "CoordinateLimitForce", action));
        };
        let input = out.inputs.iter().find(|d| d.coordinate == f.coordinate && d.exact_name).map(|d| d.name.clone());
        let Some((el, mode)) = input.as_deref().and_then(|n| n.rsplit_once('.')) else {
            left_out(
                out,
                if coord.locked { "is locked" } else { "is not one input of its own (coupled, or through a function)" },
            );
            continue;
        };
        // OpenSim's unit scaling `_w`: degrees for a rotational coordinate
        let w = if mode == "rotation" { std::f64::consts::PI / 180.0 } else { 1.0 };
        let mut limit = InlineTable::new();
        for (key, v) in [
            ("upper_limit", w * f.upper_limit - coord.default),
            ("upper_stiffness", f.upper_stiffness / w),
            ("lower_limit", w * f.lower_limit - coord.default),
            ("lower_stiffness", f.lower_stiffness / w),
            ("damping", f.damping / w),
            ("transition", w * f.transition),
        ] {
            limit.insert(key, doc::float(v));
        }
        let mut law = InlineTable::new();
        law.insert("coordinate_limit", Value::InlineTable(limit));
        let mut modes = InlineTable::new();
        modes.insert(mode, Value::InlineTable(law));
        let Some((_, table)) = out.elements.iter_mut().find(|(n, _)| n == el) else { continue };
        if table.contains_key("law") {
            left_out(out, "has a limit force already");
            continue;
        }
        let note = format!("OpenSim `{}` ({}): limits less the default {}", f.name, f.place, num(coord.default));
        table.insert("law", Item::Value(doc::noted(Value::InlineTable(modes), &note)));
    }
}
