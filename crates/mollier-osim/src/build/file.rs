//! The model file as a whole: the header that says where it comes from, the top-level keys, the
//! nodes, the bodies with their points, the elements and load sharing, in that order.

use nalgebra::{Matrix3, SymmetricEigen};
use toml_edit::{DocumentMut, Item, Table, Value};

use super::doc::{self, float, num, text, vec3};
use super::{Ctx, Out, SPECIFIC_TENSION};
use crate::model::Body;
use crate::report::Entry;

/// The document's text.
pub(super) fn document(ctx: &Ctx, out: &mut Out) -> String {
    let m = ctx.m;
    let mut d = DocumentMut::new();
    d.decor_mut().set_prefix(header(ctx, out));
    let root = d.as_table_mut();
    root.insert("format_version", Item::Value(Value::from(1i64)));
    root.insert("name", Item::Value(text(&m.name)));
    root.insert("description", Item::Value(text(&format!("Imported from {} by mollier import", ctx.file))));
    root.insert("fixed", Item::Value(Value::Array([text(&out.body_names[0])].into_iter().collect())));
    root.insert("inputs", Item::Value(doc::list(&out.inputs.iter().map(|d| d.name.clone()).collect::<Vec<_>>())));
    root.insert("free", Item::Value(doc::list(&out.free)));
    root.insert("gravity", Item::Value(vec3(&m.gravity)));
    let mut position = 0;
    let mut section = |name: &str, tables: Vec<(String, Table)>, heading: &str, root: &mut Table| {
        if tables.is_empty() {
            return;
        }
        let mut all = Table::new();
        all.set_implicit(true);
        for (k, (key, mut t)) in tables.into_iter().enumerate() {
            if k == 0 && !heading.is_empty() {
                let before = t.decor().prefix().and_then(|p| p.as_str()).unwrap_or("\n").to_string();
                t.decor_mut().set_prefix(format!("{}{}", doc::lines_before(&[heading.to_string()]), &before[1..]));
            }
            position += 1;
            t.set_position(Some(position));
            all.insert(&key, Item::Table(t));
        }
        root.insert(name, Item::Table(all));
    };
    section("nodes", std::mem::take(&mut out.nodes), "---- massless nodes of the joints", root);
    let bodies = bodies(ctx, out);
    section("bodies", bodies, "---- bodies, at their poses in the initial configuration", root);
    section("elements", std::mem::take(&mut out.elements), "", root);
    section(
        "muscles",
        std::mem::take(&mut out.hill),
        "---- muscles with contraction dynamics: OpenSim's DeGrooteFregly2016Muscle, every property",
        root,
    );
    if !out.sharing.is_empty() {
        let mut muscles = Table::new();
        for (name, v, note) in std::mem::take(&mut out.sharing) {
            muscles.insert(&name, Item::Value(doc::noted(v, &note)));
        }
        let mut ls = doc::table(
            &[
                "---- muscles for load sharing: PCSA = Fmax / specific tension; optimal length = tendon slack".into(),
                "length + optimal fibre length x cos(pennation)".into(),
            ],
            None,
            vec![("specific_tension", doc::noted(float(SPECIFIC_TENSION), "N/cm^2"))],
        );
        ls.insert("muscles", Item::Table(muscles));
        root.insert("load_sharing", Item::Table(ls));
    }
    d.to_string()
}

/// The comment at the top: the source, the units, the initial configuration and each
/// coordinate's input.
fn header(ctx: &Ctx, out: &Out) -> String {
    let m = ctx.m;
    let mut lines = vec![
        format!("Mollier model imported from the OpenSim model `{}` ({}) by `mollier import`.", m.name, ctx.file),
        "Units: m, rad, kg (SI). The initial configuration is OpenSim's default pose (every coordinate at its".into(),
        "default value). An input is the change of its axis from there: for an input named after a coordinate,".into(),
        "the coordinate minus its default value. The import report lists what is not imported exactly.".into(),
        String::new(),
        "Coordinates (OpenSim): name, range, default, locked, clamped -> input".into(),
    ];
    for (i, c) in m.coordinates.iter().enumerate() {
        let ins: Vec<&str> = out.inputs.iter().filter(|d| d.coordinate == i).map(|d| d.name.as_str()).collect();
        lines.push(format!(
            "  {}: [{}, {}], default {}{}{} -> {}",
            c.name,
            num(c.range[0]),
            num(c.range[1]),
            num(c.default),
            if c.locked { ", locked" } else { "" },
            if c.clamped { ", clamped" } else { "" },
            if ins.is_empty() { "held".into() } else { ins.join(", ") }
        ));
    }
    let mut s = doc::lines_before(&lines)[1..].to_string();
    s.push('\n');
    s
}

/// The bodies' tables (ground first, then in joint order), each with its points.
fn bodies(ctx: &Ctx, out: &mut Out) -> Vec<(String, Table)> {
    let m = ctx.m;
    let mut order = vec![0];
    order.extend(ctx.order.iter().map(|k| m.joints[*k].child.body));
    let mut tables = Vec::new();
    for b in order {
        let body = &m.bodies[b];
        let p = &ctx.pose[b];
        let note = format!("{} `{}` ({})", if b == 0 { "Ground" } else { "Body" }, body.name, body.place);
        let origin = match out.child_origin.remove(&b) {
            Some((o, n)) => doc::noted(o, &n),
            None => vec3(p.o.as_slice()),
        };
        let mut entries = vec![("origin", origin)];
        if b != 0 && p.r != Matrix3::identity() {
            entries.push(("orientation", doc::orientation(&p.r)));
        }
        entries.extend(mass(body, &mut out.entries));
        let mut t = doc::table(&[], Some(&note), entries);
        // the joint centre's points are named last: after the body's other points
        let mut pts = Vec::new();
        for (n, v) in out.child_points.remove(&b).into_iter().flatten() {
            pts.push((out.points[b].names.claim(&n), v, "joint centre, shared with the parent".to_string()));
        }
        pts.append(&mut out.points[b].list);
        if !pts.is_empty() {
            let mut points = Table::new();
            for (n, v, c) in pts {
                points.insert(&n, Item::Value(doc::noted(v, &c)));
            }
            t.insert("points", Item::Table(points));
        }
        tables.push((out.body_names[b].clone(), t));
    }
    tables
}

/// Whether an inertia tensor is one a rigid body can have (principal moments not negative and
/// obeying the triangle inequality).
fn physical(i: &[f64; 6]) -> bool {
    let t = Matrix3::new(i[0], i[3], i[4], i[3], i[1], i[5], i[4], i[5], i[2]);
    let mut e: Vec<f64> = SymmetricEigen::new(t).eigenvalues.iter().copied().collect();
    e.sort_by(f64::total_cmp);
    let tol = 1e-12 * e[2].abs().max(1e-300);
    e[0] >= -tol && e[2] <= e[0] + e[1] + tol
}

/// A body's mass, centre of mass and inertia (kg, m, kg m²); what is left out is reported.
fn mass(body: &Body, entries: &mut Vec<Entry>) -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    if body.mass > 0.0 {
        out.push(("mass", float(body.mass)));
        if body.com.iter().any(|v| *v != 0.0) {
            out.push(("com", vec3(&body.com)));
        }
        if body.inertia.iter().any(|v| *v != 0.0) {
            if physical(&body.inertia) {
                out.push(("inertia", Value::Array(body.inertia.iter().map(|v| float(*v)).collect())));
            } else {
                let note = format!("inertia {:?} left out: not a rigid body's (see the import report)", body.inertia);
                out[0].1 = doc::noted(float(body.mass), &note);
                entries.push(Entry::new(
                    &body.place,
                    &body.name,
                    "Body",
                    "inertia left out: its principal moments are negative or break the triangle inequality (a file that lists products of inertia where OpenSim expects tensor elements has this); kinematics does not need it",
                ));
            }
        }
    } else if body.mass < 0.0 || body.inertia.iter().any(|v| *v != 0.0) {
        entries.push(Entry::new(
            &body.place,
            &body.name,
            "Body",
            format!("mass {} is not positive: mass, centre of mass and inertia left out", num(body.mass)),
        ));
    }
    out
}
