//! `mollier check MODEL [--json]`: nodes, elements, inputs, degrees of freedom and well-posedness.

use mollier::output::number;
use mollier_format::human;

use super::prelude::*;

pub fn run(path: &Path, json: bool, registry: &Registry) -> ExitCode {
    let compiled = match mollier::load(path, registry) {
        Ok(c) => c,
        Err(d) => {
            if json {
                let v = json!({
                    "model": path.display().to_string(),
                    "dof": null,
                    "inputs": [],
                    "nodes": [],
                    "elements": [],
                    "well_posed": false,
                    "diagnostics": [],
                    "errors": d.iter().map(error_json).collect::<Vec<_>>(),
                });
                outln!("{}", json_text(&v));
            } else {
                report(&d);
            }
            return ExitCode::from(INVALID);
        }
    };
    let report_ = mollier::check(&compiled, registry);
    if json {
        outln!("{}", json_text(&check_json(path, &compiled, &report_)));
    } else {
        out!("{}", check_text(path, &compiled, &report_));
        if !report_.problems.is_empty() {
            report(&Diagnostics(report_.problems.clone()));
        }
    }
    ExitCode::from(report_.exit_code())
}

fn error_json(d: &Diagnostic) -> Value {
    json!({
        "file": d.file,
        "line": d.location.map(|l| l.line),
        "column": d.location.map(|l| l.column),
        "path": d.path,
        "message": d.message,
        "hint": d.hint,
    })
}

/// Names of a node's coordinates that have `role`.
fn coords_with(c: &Compiled, node: usize, role: CoordRole) -> Vec<&'static str> {
    let info = &c.model.nodes()[node];
    let id = mollier_core::NodeId::new(node);
    (0..info.kind.dim())
        .filter(|&a| c.model.coord_role(c.model.coord_id(id, a)) == role)
        .map(|a| info.kind.axis_names()[a])
        .collect()
}

/// Other names of node `i` (body origins and points that share it).
fn aliases(c: &Compiled, i: usize) -> Vec<&str> {
    let own = &c.model.nodes()[i].name;
    c.points.iter().filter(|p| p.node.index() == i && p.name != *own).map(|p| p.name.as_str()).collect()
}

fn role_text(role: &NodeRole) -> String {
    match role {
        NodeRole::Node => "node".into(),
        NodeRole::Origin { body } => format!("origin of body {body}"),
        NodeRole::Orientation { body } => format!("orientation of body {body}"),
        NodeRole::Point { body, point } => format!("point {point} of body {body}"),
        NodeRole::CentreOfMass { body } => format!("centre of mass of body {body}"),
    }
}

fn mode_role_text(role: ModeRole) -> &'static str {
    match role {
        ModeRole::Fixed(_) => "rigid",
        ModeRole::Input => "input",
        ModeRole::Dependent => "free",
    }
}

fn check_json(path: &Path, c: &Compiled, r: &CheckReport) -> Value {
    let m = &c.model;
    let nodes: Vec<Value> = m
        .nodes()
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({
                "name": n.name,
                "kind": n.kind.to_string(),
                "role": role_text(&c.nodes[i]),
                "aliases": aliases(c, i),
                "fixed": coords_with(c, i, CoordRole::Fixed),
                "inputs": coords_with(c, i, CoordRole::Input),
            })
        })
        .collect();
    let elements: Vec<Value> = c
        .elements
        .iter()
        .map(|e| {
            let n = m.element(e.id).layout().n_modes();
            let modes: Vec<Value> = (0..n)
                .map(|k| {
                    let id = m.mode_id(e.id, k);
                    json!({ "name": m.mode_info(id).name, "role": mode_role_text(m.mode_role(id)) })
                })
                .collect();
            json!({ "name": e.name, "type": e.kind, "modes": modes })
        })
        .collect();
    let mut diagnostics = r.diagnostics.clone();
    diagnostics.extend(r.problems.iter().map(|d| d.headline()));
    json!({
        "model": path.display().to_string(),
        "name": c.document.spec().name,
        "dof": r.dof,
        "inputs": c.inputs.iter().map(|i| i.name.clone()).collect::<Vec<_>>(),
        "nodes": nodes,
        "elements": elements,
        "generated_elements": m.n_elements() - c.elements.len(),
        "equations": r.analysis.equations,
        "unknowns": r.analysis.unknowns,
        "rank": r.analysis.rank,
        "redundant": r.redundant,
        "dynamics": dynamics_json(c),
        "load_sharing": load_sharing_json(c),
        "well_posed": r.is_well_posed(),
        "diagnostics": diagnostics,
        "errors": r.problems.iter().map(error_json).collect::<Vec<_>>(),
    })
}

/// What a model has for dynamics, in the file's names.
struct DynamicsSummary<'a> {
    /// Bodies with a mass.
    bodies: Vec<&'a str>,
    /// Their total mass (kg).
    mass: f64,
    gravity: Option<[f64; 3]>,
    loads: Vec<&'a str>,
    /// Elements with a law.
    laws: Vec<&'a str>,
}

fn dynamics_summary(c: &Compiled) -> DynamicsSummary<'_> {
    let spec = c.document.spec();
    DynamicsSummary {
        bodies: c.bodies.iter().filter(|b| b.mass.is_some()).map(|b| b.name.as_str()).collect(),
        mass: c.bodies.iter().filter_map(|b| b.mass).sum(),
        gravity: spec.gravity,
        loads: spec.loads.iter().map(|(k, _)| k).collect(),
        laws: spec.elements.iter().filter(|(_, e)| e.law.is_some()).map(|(k, _)| k).collect(),
    }
}

fn dynamics_json(c: &Compiled) -> Value {
    let d = dynamics_summary(c);
    json!({ "mass": d.mass, "bodies_with_mass": d.bodies, "gravity": d.gravity, "loads": d.loads, "laws": d.laws })
}

fn load_sharing_json(c: &Compiled) -> Value {
    let Some(l) = &c.load_sharing else { return Value::Null };
    json!({
        "muscles": l.muscle_names(),
        "compression": l.signs.iter().filter(|s| s.constraint.sign == mollier_optim::Sign::Compression).map(|s| &s.name).collect::<Vec<_>>(),
        "tension": l.signs.iter().filter(|s| s.constraint.sign == mollier_optim::Sign::Tension).map(|s| &s.name).collect::<Vec<_>>(),
        "joint_cone": l.cone.as_ref().map(|k| json!({ "joint": k.joint, "half_angles_deg": k.half_angles.map(f64::to_degrees) })),
        "reserves": l.reserve_names(),
    })
}

/// `3 muscles (biceps, ...); compression: ...; joint cone at ...; reserves on ...`.
fn load_sharing_text(c: &Compiled) -> Option<String> {
    let l = c.load_sharing.as_ref()?;
    let names = l.muscle_names();
    let shown = if names.len() <= 6 { names.join(", ") } else { format!("{}, ...", names[..3].join(", ")) };
    let mut parts =
        vec![format!("{} muscle element{} ({shown})", names.len(), if names.len() == 1 { "" } else { "s" })];
    for (sign, what) in
        [(mollier_optim::Sign::Compression, "compression only"), (mollier_optim::Sign::Tension, "tension only")]
    {
        let v: Vec<&str> = l.signs.iter().filter(|s| s.constraint.sign == sign).map(|s| s.name.as_str()).collect();
        if !v.is_empty() {
            parts.push(format!("{what}: {}", v.join(", ")));
        }
    }
    if let Some(k) = &l.cone {
        let [a, b] = k.half_angles.map(f64::to_degrees);
        parts.push(format!("joint cone at {} ({} by {} deg)", k.joint, human(a), human(b)));
    }
    if !l.reserves.is_empty() {
        parts.push(format!("reserves on {}", l.reserve_names().join(", ")));
    }
    Some(parts.join("; "))
}

fn dynamics_text(c: &Compiled) -> Option<String> {
    let d = dynamics_summary(c);
    let mut parts = Vec::new();
    if !d.bodies.is_empty() {
        let s = if d.bodies.len() == 1 { "y" } else { "ies" };
        parts.push(format!("mass {} kg in {} bod{s} ({})", human(d.mass), d.bodies.len(), d.bodies.join(", ")));
    }
    if let Some(g) = d.gravity {
        parts.push(format!("gravity [{}] m/s²", g.map(number).join(", ")));
    }
    if !d.loads.is_empty() {
        parts.push(format!("loads {}", d.loads.join(", ")));
    }
    if !d.laws.is_empty() {
        parts.push(format!("laws on {}", d.laws.join(", ")));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// The widest column of names the text aligns (characters): the longest name's, up to
/// [`MAX_COLUMN`]; a longer name runs past the column.
fn column_width<'a>(names: impl Iterator<Item = &'a str>) -> usize {
    names.map(|n| n.chars().count()).max().unwrap_or(0).min(MAX_COLUMN)
}

/// Names are aligned up to this width (characters). The padding is written out rather than
/// asked of `format!`, whose width must fit in 16 bits (a name of 65,536 characters panicked).
const MAX_COLUMN: usize = 40;

/// `name` padded with spaces to `width` characters.
fn padded(name: &str, width: usize) -> String {
    let n = name.chars().count();
    format!("{name}{}", " ".repeat(width.saturating_sub(n)))
}

fn check_text(path: &Path, c: &Compiled, r: &CheckReport) -> String {
    let m = &c.model;
    let mut s = String::new();
    let title = c.document.spec().name.as_deref().map(|n| format!(" — {n}")).unwrap_or_default();
    s.push_str(&format!("{}{title}\n", path.display()));
    let width = column_width(m.nodes().iter().map(|n| n.name.as_str()));
    s.push_str(&format!("nodes ({}):\n", m.nodes().len()));
    for (i, n) in m.nodes().iter().enumerate() {
        let mut roles = Vec::new();
        let fixed = coords_with(c, i, CoordRole::Fixed);
        if fixed.len() == n.kind.dim() {
            roles.push("fixed".to_string());
        } else if !fixed.is_empty() {
            roles.push(format!("fixed {}", fixed.join(", ")));
        }
        let inputs = coords_with(c, i, CoordRole::Input);
        if !inputs.is_empty() {
            roles.push(format!("input {}", inputs.join(", ")));
        }
        let kind = if n.kind == NodeKind::Position { "position   " } else { "orientation" };
        let roles = if roles.is_empty() { String::new() } else { format!(" [{}]", roles.join("; ")) };
        let also = aliases(c, i);
        let also = if also.is_empty() { String::new() } else { format!(" (also {})", also.join(", ")) };
        s.push_str(&format!("  {}  {kind}  {}{also}{roles}\n", padded(&n.name, width), role_text(&c.nodes[i])));
    }
    let generated = m.n_elements() - c.elements.len();
    s.push_str(&format!("elements ({}, and {generated} generated):\n", c.elements.len()));
    let width = column_width(c.elements.iter().map(|e| e.name.as_str()));
    let twidth = column_width(c.elements.iter().map(|e| e.kind.as_str()));
    for e in &c.elements {
        let n = m.element(e.id).layout().n_modes();
        let modes: Vec<String> = (0..n)
            .map(|k| {
                let id = m.mode_id(e.id, k);
                let name = &m.mode_info(id).name;
                match m.mode_role(id) {
                    ModeRole::Fixed(_) => name.to_string(),
                    role => format!("{name} ({})", mode_role_text(role)),
                }
            })
            .collect();
        s.push_str(&format!("  {}  {}  {}\n", padded(&e.name, width), padded(&e.kind, twidth), modes.join(", ")));
    }
    let names: Vec<&str> = c.inputs.iter().map(|i| i.name.as_str()).collect();
    if names.is_empty() {
        s.push_str("inputs: none\n");
    } else {
        s.push_str(&format!("inputs ({}): {}\n", names.len(), names.join(", ")));
    }
    if let Some(d) = dynamics_text(c) {
        s.push_str(&format!("dynamics: {d}\n"));
    }
    if let Some(l) = load_sharing_text(c) {
        s.push_str(&format!("load sharing: {l}\n"));
    }
    s.push_str(&format!("degrees of freedom: {}\n", r.dof));
    let a = &r.analysis;
    if r.is_well_posed() {
        s.push_str(&format!("well posed: yes ({} equations in {} unknowns, full rank)\n", a.equations, a.unknowns));
    } else {
        s.push_str(&format!("well posed: no ({} equations in {} unknowns", a.equations, a.unknowns));
        if let Some(rank) = a.rank {
            s.push_str(&format!(", rank {rank}"));
        }
        s.push_str(")\n");
        for d in &r.diagnostics {
            s.push_str(&format!("  - {d}\n"));
        }
    }
    s
}
