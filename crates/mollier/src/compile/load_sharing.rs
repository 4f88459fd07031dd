//! The model file's `[load_sharing]` section compiled into the terms of [`mollier_optim`]:
//! muscles with PCSA, optimal and reference lengths, sign constraints on reactions, the joint
//! cone, reserve actuators.
//!
//! The muscle table (`muscle_table`, CSV) is read relative to the model file, with problems
//! located in it (`file:line:col`); names are resolved to ids once, here.

use std::path::Path;

use mollier_core::element::{NodeKind, Quantity};
use mollier_core::geometry::Mat3;
use mollier_core::{ElementId, ModeId, ModeRole, Model, NodeId};
use mollier_format::{Diagnostic, LoadSharingSpec};
use mollier_optim::{Criterion, JointCone, LoadSharing, Muscle, Reserve, Sign, SignConstraint, Study};

use super::names::{mode_named, split_hint, suggest};
use super::parts::Context;
use crate::motion::{at, csv_table};

/// N/m² per N/cm².
const PER_CM2: f64 = 1.0e4;

/// A muscle element, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleInfo {
    /// The element's name: the column of `forces.csv`.
    pub name: String,
    /// The muscle it belongs to (the element's name unless the file says otherwise).
    pub muscle: String,
    /// PCSA (m²).
    pub pcsa: f64,
    /// Optimal length of the force-length relation (m): as given, or the reference length; with
    /// a tendon slack length, the fibres' optimal length.
    pub optimal_length: f64,
    /// Tendon slack length (m; 0 when not given): the force-length relation takes the fibre
    /// length, the element's length minus this.
    pub tendon_slack: f64,
    /// The element.
    pub element: ElementId,
    /// Its `elongation` mode (free).
    pub mode: ModeId,
    /// Its length in the initial configuration (m): length = this + elongation.
    pub reference_length: f64,
}

/// A sign-constrained reaction.
#[derive(Clone, Debug, PartialEq)]
pub struct SignInfo {
    /// `element.mode`: the column of `reactions.csv`.
    pub name: String,
    /// The constraint.
    pub constraint: SignConstraint,
}

/// A joint's stability cone, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ConeInfo {
    /// The joint centre as the file names it.
    pub joint: String,
    /// Its node.
    pub node: NodeId,
    /// The socket's elements at the joint.
    pub elements: Vec<ElementId>,
    /// The socket body's orientation node.
    pub body: NodeId,
    /// The cone frame in the body frame (columns: cone axes; x into the socket).
    pub rotation: Mat3,
    /// Half-angles (rad) towards the cone's y and z axes: the socket's rim.
    pub half_angles: [f64; 2],
    /// Stability margin `k` in (0, 1]: the cone imposed has half-angles `k · half_angles`.
    pub margin: f64,
}

/// A reserve actuator, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ReserveInfo {
    /// The input as written in `inputs`.
    pub name: String,
    /// Its index in `q`.
    pub input: usize,
    /// Cost weight.
    pub weight: f64,
}

/// A model's load-sharing setup, in SI, every name resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadSharingSetup {
    /// The muscles: the table's rows, then the inline entries.
    pub muscles: Vec<MuscleInfo>,
    /// Specific tension (N/m²).
    pub specific_tension: f64,
    /// Width of the force-length relation (`inf`: none).
    pub width: f64,
    /// Sign constraints: the compressive ones, then the tensile ones.
    pub signs: Vec<SignInfo>,
    /// The joint's stability cone.
    pub cone: Option<ConeInfo>,
    /// Reserve actuators.
    pub reserves: Vec<ReserveInfo>,
}

impl LoadSharingSetup {
    /// The load-sharing problem for a criterion, with the joint cone (at the model's margin)
    /// imposed or only reported.
    pub fn study(&self, criterion: Criterion, impose_cone: bool) -> Study {
        let margin = self.cone.as_ref().map_or(1.0, |c| c.margin);
        self.study_with_margin(criterion, impose_cone, margin)
    }

    /// [`Self::study`] with the cone's half-angles scaled by `margin` (in (0, 1]) instead of the
    /// model's: the cone imposed, and the one the stability index of the results refers to.
    pub fn study_with_margin(&self, criterion: Criterion, impose_cone: bool, margin: f64) -> Study {
        let muscles = self
            .muscles
            .iter()
            .map(|m| {
                Muscle::new(m.mode, m.pcsa, m.reference_length)
                    .with_optimal_length(m.optimal_length)
                    .with_tendon_slack(m.tendon_slack)
            })
            .collect();
        let mut s = Study::new(muscles, criterion);
        s.specific_tension = self.specific_tension;
        s.width = self.width;
        s.signs = self.signs.iter().map(|s| s.constraint).collect();
        s.cone = self.cone.as_ref().map(|c| JointCone {
            node: c.node,
            elements: c.elements.clone(),
            body: c.body,
            rotation: c.rotation,
            half_angle_y: margin * c.half_angles[0],
            half_angle_z: margin * c.half_angles[1],
            enforce: impose_cone,
        });
        s.reserves = self.reserves.iter().map(|r| Reserve { input: r.input, weight: r.weight }).collect();
        s
    }

    /// The muscles' names (elements), in output order.
    pub fn muscle_names(&self) -> Vec<String> {
        self.muscles.iter().map(|m| m.name.clone()).collect()
    }

    /// The sign-constrained reactions' names (`element.mode`), in output order.
    pub fn reaction_names(&self) -> Vec<String> {
        self.signs.iter().map(|s| s.name.clone()).collect()
    }

    /// The reserves' inputs, in output order.
    pub fn reserve_names(&self) -> Vec<String> {
        self.reserves.iter().map(|r| r.name.clone()).collect()
    }
}

/// Compile the `[load_sharing]` section, if any; every problem found.
pub(crate) fn compile(cx: &Context<'_>) -> Result<Option<LoadSharingSetup>, Vec<Diagnostic>> {
    let Some(ls) = &cx.doc.spec().load_sharing else { return Ok(None) };
    let mut errors = Vec::new();
    let units = &cx.doc.spec().units;
    let base = "load_sharing";
    let mut muscles: Vec<MuscleInfo> = Vec::new();
    if let Some(table) = &ls.muscle_table {
        match muscle_table(cx, table) {
            Ok(m) => muscles = m,
            // the table may be any readable file: its problems say where and why, never what
            // it holds (those placed in the model, a table that cannot be read, stay as they are)
            Err(e) => errors.extend(
                e.into_iter().map(|d| if d.file == cx.doc.file() { d } else { d.without_contents(cx.doc.file()) }),
            ),
        }
    }
    for (name, m) in ls.muscles.iter() {
        let path = format!("{base}.muscles.{name}");
        if muscles.iter().any(|x| x.name == name) {
            errors.push(cx.doc.error_at_key(
                &path,
                format!("`{name}` is a muscle of `muscle_table` already"),
                "give each element once: in the table or here",
            ));
            continue;
        }
        let optimal = m.optimal_length.map(|l| units.length_to_si(l));
        let slack = m.tendon_slack.map_or(0.0, |l| units.length_to_si(l));
        match muscle(cx, name, m.pcsa * 1e-4, (optimal, slack), m.muscle.as_deref()) {
            Ok(info) => muscles.push(info),
            Err((msg, hint)) => errors.push(cx.doc.error_at_key(&path, msg, hint)),
        }
    }
    let mut signs = Vec::new();
    for (list, items, sign) in
        [("compression", &ls.compression, Sign::Compression), ("tension", &ls.tension, Sign::Tension)]
    {
        for (i, text) in items.iter().enumerate() {
            match rigid_mode(cx.model, text) {
                Ok(mode) => {
                    signs.push(SignInfo { name: cx.model.mode_name(mode), constraint: SignConstraint { mode, sign } })
                }
                Err((msg, hint)) => errors.push(cx.doc.error(&format!("{base}.{list}[{i}]"), msg, hint)),
            }
        }
    }
    let cone = match &ls.joint_cone {
        None => None,
        Some(_) => match cone(cx, ls) {
            Ok(c) => Some(c),
            Err(e) => {
                errors.extend(e);
                None
            }
        },
    };
    let mut reserves = Vec::new();
    for (i, r) in ls.reserves.iter().enumerate() {
        match cx.inputs.iter().position(|inp| inp.name == r.input) {
            Some(input) => reserves.push(ReserveInfo { name: r.input.clone(), input, weight: r.weight }),
            None => {
                let names: Vec<&str> = cx.inputs.iter().map(|i| i.name.as_str()).collect();
                let hint = match suggest(&r.input, names.iter().copied()) {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("the model's inputs: {}", names.join(", ")),
                };
                errors.push(cx.doc.error(
                    &format!("{base}.reserves[{i}].input"),
                    format!("`{}` is not an input of the model", r.input),
                    hint,
                ));
            }
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let setup = LoadSharingSetup {
        muscles,
        specific_tension: ls.specific_tension.unwrap_or(mollier_format::DEFAULT_SPECIFIC_TENSION) * PER_CM2,
        width: ls.width.unwrap_or(mollier_format::DEFAULT_WIDTH),
        signs,
        cone,
        reserves,
    };
    // the optimisation's own checks, which the above should have made redundant
    LoadSharing::new(cx.model, setup.study(Criterion::Stresses, true)).map_err(|e| {
        vec![cx.doc.error(base, e.to_string(), "this is a problem Mollier did not expect here: please report it")]
    })?;
    Ok(Some(setup))
}

pub(crate) type Why = (String, String);

/// A muscle on element `name` with PCSA (m²), optimal length (m; `None`: the reference length)
/// and tendon slack length (m).
fn muscle(
    cx: &Context<'_>,
    name: &str,
    pcsa: f64,
    (optimal, tendon_slack): (Option<f64>, f64),
    group: Option<&str>,
) -> Result<MuscleInfo, Why> {
    let (element, mode, reference_length) = path_mode(cx, name)?;
    Ok(MuscleInfo {
        name: name.to_string(),
        muscle: group.unwrap_or(name).to_string(),
        pcsa,
        optimal_length: optimal.unwrap_or(reference_length),
        tendon_slack,
        element,
        mode,
        reference_length,
    })
}

/// The path of a muscle, element `name`: its free `elongation` mode and its length in the
/// initial configuration (m); or why it cannot be one, and a hint.
pub(crate) fn path_mode(cx: &Context<'_>, name: &str) -> Result<(ElementId, ModeId, f64), Why> {
    let model = cx.model;
    let Some(el) = cx.elements.iter().find(|e| e.name == name) else {
        let hint = match suggest(name, cx.elements.iter().map(|e| e.name.as_str())) {
            Some(s) => format!("did you mean `{s}`?"),
            None => "a muscle is an element of the file (a truss or curved truss) named under [elements]".into(),
        };
        return Err((format!("no element called `{name}`"), hint));
    };
    let mode = model
        .mode_by_name(el.id, "elongation")
        .filter(|m| model.mode_info(*m).quantity == Quantity::Length)
        .ok_or_else(|| {
            (
                format!("`{name}` is a {}, which has no `elongation`", el.kind),
                "a muscle is a line of action: a `truss` or `curved-truss`".to_string(),
            )
        })?;
    match model.mode_role(mode) {
        ModeRole::Dependent => {}
        ModeRole::Input => {
            return Err((
                format!("`{name}.elongation` is an input"),
                "a muscle's length follows the motion: list it in `free`, not in `inputs`".into(),
            ));
        }
        ModeRole::Fixed(_) => {
            return Err((
                format!("`{name}.elongation` is rigid"),
                format!("a muscle's length follows the motion: add `\"{name}\"` to `free`"),
            ));
        }
    }
    match model.mode_reference(mode) {
        Some(l) if l.is_finite() && l > 0.0 => Ok((el.id, mode, l)),
        _ => Err((
            format!("`{name}` ({}) does not report its length in the initial configuration", el.kind),
            "a muscle is a `truss` or `curved-truss`".into(),
        )),
    }
}

/// The muscle table's rows, resolved; problems located in the table.
fn muscle_table(cx: &Context<'_>, table: &str) -> Result<Vec<MuscleInfo>, Vec<Diagnostic>> {
    let path = Path::new(cx.doc.file()).parent().unwrap_or(Path::new("")).join(table);
    let file = path.display().to_string();
    let text = mollier_format::read_text(&path, "muscle table").map_err(|d| {
        // a file that cannot be read is the model's problem, placed at the field naming it
        d.0.into_iter()
            .map(|d| match d.location {
                Some(_) => d,
                None => cx.doc.error(
                    "load_sharing.muscle_table",
                    format!("`{file}`: {}", d.message),
                    format!("{}; the path is relative to the model file", d.hint.unwrap_or_default()),
                ),
            })
            .collect::<Vec<_>>()
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let t = csv_table(&file, text).map_err(|d| d.0)?;
    let header_err = |message: String, hint: &str| vec![*at(&file, text, t.header_at, "", message, hint)];
    for (i, h) in t.header.iter().enumerate() {
        if t.header[..i].contains(h) {
            return Err(header_err(format!("column `{h}` appears twice"), "delete one of them"));
        }
    }
    let column = |name: &str| t.header.iter().position(|h| h == name);
    let (Some(c_el), Some(c_pcsa)) = (column("element"), column("pcsa_cm2")) else {
        return Err(header_err(
            "the muscle table needs the columns `element` and `pcsa_cm2`".into(),
            "header: element,pcsa_cm2[,optimal_length_mm][,tendon_slack_mm][,muscle]; other columns are notes",
        ));
    };
    let (c_lopt, c_group, c_slack) = (column("optimal_length_mm"), column("muscle"), column("tendon_slack_mm"));
    let mut out: Vec<MuscleInfo> = Vec::with_capacity(t.rows.len());
    let mut errors = Vec::new();
    for (offset, row) in &t.rows {
        let err = |path: &str, message: String, hint: &str| {
            // at the cell of the named column, else at the row
            let cell = t.header.iter().position(|h| h == path).map_or(*offset, |c| t.cell_offset(text, *offset, c));
            *at(&file, text, cell, path, message, hint)
        };
        if row.len() != t.header.len() {
            errors.push(err(
                "",
                format!("{} values for {} columns", row.len(), t.header.len()),
                "one value per column",
            ));
            continue;
        }
        let number = |c: usize| -> Result<f64, Box<Diagnostic>> {
            match row[c].parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= mollier_format::MAX_MAGNITUDE => Ok(v),
                Ok(v) if v > mollier_format::MAX_MAGNITUDE => Err(Box::new(err(
                    &t.header[c],
                    format!("{} is too large: numbers are at most 1e15", mollier_format::human(v)),
                    "write the value in the column's unit (cm² for `pcsa_cm2`, mm for `optimal_length_mm`)",
                ))),
                _ => Err(Box::new(err(
                    &t.header[c],
                    format!("`{}` is not a positive number", &row[c]),
                    "write a positive number such as 2.39",
                ))),
            }
        };
        let name = &row[c_el];
        let pcsa = match number(c_pcsa) {
            Ok(v) => v * 1e-4,
            Err(d) => {
                errors.push(*d);
                continue;
            }
        };
        let optimal = match c_lopt.filter(|&c| !row[c].is_empty()).map(number).transpose() {
            Ok(v) => v.map(|mm| mm / 1000.0),
            Err(d) => {
                errors.push(*d);
                continue;
            }
        };
        let slack = match c_slack.filter(|&c| !row[c].is_empty()).map(number).transpose() {
            Ok(v) => v.map_or(0.0, |mm| mm / 1000.0),
            Err(d) => {
                errors.push(*d);
                continue;
            }
        };
        if out.iter().any(|m| m.name == name) {
            errors.push(err("element", format!("`{name}` is listed twice"), "give each element once"));
            continue;
        }
        let group = c_group.map(|c| &row[c]).filter(|g| !g.is_empty());
        match muscle(cx, name, pcsa, (optimal, slack), group) {
            Ok(m) => out.push(m),
            Err((message, hint)) => errors.push(err("element", message, &hint)),
        }
    }
    if errors.is_empty() && out.is_empty() {
        errors.push(*at(
            &file,
            text,
            t.header_at,
            "",
            "the muscle table has no rows",
            "add one row per muscle element",
        ));
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// The rigid mode `element.mode` (or the one mode of `element`).
fn rigid_mode(model: &Model, text: &str) -> Result<ModeId, Why> {
    let mode = mode_named(model, text)?;
    match model.mode_role(mode) {
        ModeRole::Fixed(_) => Ok(mode),
        role => Err((
            format!(
                "`{}` is {}: only a rigid mode has a reaction",
                model.mode_name(mode),
                match role {
                    ModeRole::Input => "an input",
                    _ => "free",
                }
            ),
            "a sign constraint bounds a reaction: name a mode that is neither in `free` nor in `inputs`".into(),
        )),
    }
}

/// The joint cone, resolved.
fn cone(cx: &Context<'_>, ls: &LoadSharingSpec) -> Result<ConeInfo, Vec<Diagnostic>> {
    let c = ls.joint_cone.as_ref().expect("called with a cone");
    let path = "load_sharing.joint_cone";
    let mut errors = Vec::new();
    let at_field = |field: &str, (m, h): Why| cx.doc.error(&format!("{path}.{field}"), m, h);
    let node =
        cx.resolver.node(&c.joint, NodeKind::Position).map_err(|e| errors.push(at_field("joint", split_hint(&e)))).ok();
    let body = cx
        .resolver
        .node(&c.body, NodeKind::Orientation)
        .map_err(|e| errors.push(at_field("body", split_hint(&e))))
        .ok();
    let mut elements = Vec::new();
    for (i, name) in c.elements.iter().enumerate() {
        let field = format!("elements[{i}]");
        // a name of the joint itself (a body's origin, a point there) stands for the socket
        // body's beam at the joint
        let at_joint = || {
            let n = cx.resolver.node(name, NodeKind::Position).ok().filter(|n| Some(*n) == node)?;
            let prefix = format!("{}.", c.body);
            (0..cx.model.n_elements()).map(ElementId::new).find(|&e| {
                cx.model.element_name(e).starts_with(&prefix)
                    && cx.model.element(e).layout().nodes().iter().any(|(x, _)| *x == n)
            })
        };
        let Some(el) = cx.model.element_by_name(name).or_else(at_joint) else {
            let names = (0..cx.model.n_elements()).map(|k| cx.model.element_name(ElementId::new(k)));
            let hint = match suggest(name, names) {
                Some(s) => format!("did you mean `{s}`?"),
                None => "name an element, or the generated beam `body.point` that holds a body's point".into(),
            };
            errors.push(at_field(&field, (format!("no element called `{name}`"), hint)));
            continue;
        };
        if let Some(node) = node {
            let layout = cx.model.element(el).layout();
            if !layout.nodes().iter().any(|(n, _)| *n == node) {
                errors.push(at_field(
                    &field,
                    (
                        format!("`{name}` does not act on the joint `{}`", c.joint),
                        format!("name the socket's elements that end at `{}`", c.joint),
                    ),
                ));
                continue;
            }
        }
        elements.push(el);
    }
    // checked when the file was parsed
    let rotation = c.rotation().ok();
    let half_angles = c.half_angles_rad(cx.doc.spec().units.angle_factor()).ok();
    match (node, body, rotation, half_angles, c.margin().ok(), errors.is_empty()) {
        (Some(node), Some(body), Some(rotation), Some(half_angles), Some(margin), true) => {
            Ok(ConeInfo { joint: c.joint.clone(), node, elements, body, rotation, half_angles, margin })
        }
        _ => Err(errors),
    }
}
