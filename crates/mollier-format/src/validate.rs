//! Checks that need no element types and no kernel: names, finite numbers, one form per
//! orientation, inertia. Name resolution and element parameters are checked when the model is
//! compiled.

use std::collections::HashMap;

use crate::Document;
use crate::diag::{Diagnostic, human};
use crate::field::{FieldError, number_problem};
use crate::sharing::LoadSharingSpec;
use crate::spec::{
    AxesSpec, BodySpec, CoordinateLimitSpec, HillMuscleSpec, LoadSpec, ModeLawSpec, MuscleCurves, OrientationSpec,
};
use crate::values::{InertiaSpec, Named, ParamValue, PointSpec};

/// Standard gravity (m/s²), to recognise a gravity written in another length unit.
const STANDARD_GRAVITY: f64 = 9.80665;

const NUMBER_HINT: &str = "replace it with a finite number in the file's units (at most 1e15 in magnitude)";

/// Coordinate names; a body point may not take one, so that `body.x` always means a coordinate.
pub const AXIS_NAMES: [&str; 7] = ["x", "y", "z", "l0", "l1", "l2", "l3"];

/// `true` for a valid name of a node, body, point or element (see [`crate::NAME_PATTERN`]).
pub fn is_valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

const NAME_HINT: &str = "names start with a letter or `_` and use only letters, digits, `_` and `-` (a `.` separates a body from its points)";

pub(crate) fn validate(doc: &Document) -> Vec<Diagnostic> {
    let spec = doc.spec();
    let mut out = Vec::new();
    // one namespace for nodes, bodies and elements: `name.x` and `name.mode` must be unambiguous
    let mut seen: HashMap<&str, &str> = HashMap::new();
    let groups: [(&str, Vec<&str>); 3] = [
        ("nodes", spec.nodes.iter().map(|(k, _)| k).collect()),
        ("bodies", spec.bodies.iter().map(|(k, _)| k).collect()),
        ("elements", spec.elements.iter().map(|(k, _)| k).collect()),
    ];
    for (table, names) in &groups {
        for name in names {
            let path = format!("{table}.{name}");
            if !is_valid_name(name) {
                out.push(doc.error_at_key(&path, format!("`{name}` is not a valid name"), NAME_HINT));
            } else if let Some(prev) = seen.get(name) {
                out.push(doc.error_at_key(
                    &path,
                    format!("the name `{name}` is already used in `{prev}`"),
                    "nodes, bodies and elements share one namespace (inputs such as `name.x` refer to them): rename one",
                ));
            } else {
                seen.insert(name, table);
            }
        }
    }
    for (name, node) in spec.nodes.iter() {
        let path = format!("nodes.{name}");
        match (&node.position, &node.orientation) {
            (Some(p), None) => check_finite(doc, &mut out, &format!("{path}.position"), p),
            (None, Some(o)) => check_orientation(doc, &mut out, &format!("{path}.orientation"), o),
            (None, None) => out.push(doc.error(
                &path,
                "a node needs a `position` or an `orientation`",
                "write `position = [x, y, z]` for a point, or `orientation = { ... }`",
            )),
            (Some(_), Some(_)) => out.push(doc.error(
                &path,
                "a node is either a point or an orientation, not both",
                "keep one of `position` and `orientation`; a frame with both is a body (under [bodies])",
            )),
        }
    }
    for (name, body) in spec.bodies.iter() {
        check_body(doc, &mut out, name, body);
    }
    for (name, el) in spec.elements.iter() {
        if el.kind.trim().is_empty() {
            out.push(doc.error(
                &format!("elements.{name}.type"),
                "the element type is empty",
                "write e.g. `type = \"truss\"`; `mollier types` lists the types",
            ));
        }
        if let Some(law) = &el.law {
            check_law(doc, &mut out, &format!("elements.{name}.law"), law);
        }
        for (k, v) in &el.params.0 {
            check_params(doc, &mut out, &format!("elements.{name}.{k}"), v);
        }
    }
    if let Some(axes) = &spec.axes {
        check_axes(doc, &mut out, axes);
    }
    if let Some(g) = &spec.gravity {
        check_gravity(doc, &mut out, g);
    }
    for (name, load) in spec.loads.iter() {
        check_load(doc, &mut out, name, load);
    }
    for (list, items) in [("fixed", &spec.fixed), ("inputs", &spec.inputs), ("free", &spec.free)] {
        check_list(doc, &mut out, list, items, "write a node, body, coordinate or mode name");
    }
    if let Some(ls) = &spec.load_sharing {
        check_load_sharing(doc, &mut out, ls);
    }
    for (name, m) in spec.muscles.iter() {
        check_muscle(doc, &mut out, &format!("muscles.{name}"), m);
    }
    out
}

fn check_muscle(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, m: &HillMuscleSpec) {
    let required = [
        ("max_force", Some(m.max_force), "the maximum isometric force in N, e.g. PCSA × 100 N/cm²"),
        ("optimal_fibre_length", Some(m.optimal_fibre_length), "in the file's length unit"),
        ("tendon_slack_length", Some(m.tendon_slack_length), "in the file's length unit"),
        ("activation_time", m.activation_time, "in seconds, e.g. 0.015"),
        ("deactivation_time", m.deactivation_time, "in seconds, e.g. 0.060"),
        ("pee_slack_length", m.pee_slack_length, "in the file's length unit"),
        ("max_contraction_velocity", m.max_contraction_velocity, "in optimal fibre lengths per second, e.g. 10"),
        ("tendon_strain_at_one_norm_force", m.tendon_strain_at_one_norm_force, "a strain, e.g. 0.049"),
        ("passive_fiber_strain_at_one_norm_force", m.passive_fiber_strain_at_one_norm_force, "a strain, e.g. 0.6"),
        ("activation_dynamics_smoothing", m.activation_dynamics_smoothing, "e.g. 10"),
    ];
    for (field, v, hint) in required {
        let Some(v) = v else { continue };
        let fp = format!("{path}.{field}");
        if let Some(msg) = number_problem(v) {
            out.push(doc.error(&fp, msg, NUMBER_HINT));
        } else if v <= 0.0 {
            out.push(doc.error(&fp, format!("`{field}` must be greater than 0, found {}", human(v)), hint));
        }
    }
    for (field, v, min, what) in [
        ("active_force_width_scale", m.active_force_width_scale, 1.0, "at least 1"),
        ("fiber_damping", m.fiber_damping, 0.0, "at least 0"),
    ] {
        let Some(v) = v else { continue };
        let fp = format!("{path}.{field}");
        if let Some(msg) = number_problem(v) {
            out.push(doc.error(&fp, msg, NUMBER_HINT));
        } else if v < min {
            out.push(doc.error(&fp, format!("`{field}` must be {what}, found {}", human(v)), "see `mollier schema`"));
        }
    }
    check_muscle_curves(doc, out, path, m);
    if let Some(p) = m.pennation {
        let fp = format!("{path}.pennation");
        if let Some(msg) = number_problem(p) {
            out.push(doc.error(&fp, msg, NUMBER_HINT));
        } else if p < 0.0 || p * doc.spec().units.angle_factor() >= std::f64::consts::FRAC_PI_2 {
            out.push(doc.error(
                &fp,
                format!("a pennation angle lies in [0, 90°), found {}", human(p)),
                "the angle between the fibres and the line of action at optimal fibre length, in the file's angle unit",
            ));
        }
    }
}

/// Each curve set's own parameters given only with that set.
fn check_muscle_curves(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, m: &HillMuscleSpec) {
    let dgf = m.curves == Some(MuscleCurves::DeGrooteFregly2016);
    let given = [
        ("active_force_width_scale", m.active_force_width_scale.is_some(), true),
        ("fiber_damping", m.fiber_damping.is_some(), true),
        ("passive_fiber_strain_at_one_norm_force", m.passive_fiber_strain_at_one_norm_force.is_some(), true),
        ("activation_dynamics_smoothing", m.activation_dynamics_smoothing.is_some(), true),
        ("ignore_passive_fiber_force", m.ignore_passive_fiber_force.is_some(), true),
        ("pee_slack_length", m.pee_slack_length.is_some(), false),
    ];
    for (field, is_given, of_dgf) in given {
        if is_given && of_dgf != dgf {
            let (set, hint) = if of_dgf {
                ("`de-groote-fregly-2016`", "add `curves = \"de-groote-fregly-2016\"` or delete the field")
            } else {
                ("`das3`", "delete the field: De Groote et al.'s passive curve starts at 0.2 optimal fibre lengths")
            };
            out.push(doc.error(&format!("{path}.{field}"), format!("`{field}` belongs to the {set} curves"), hint));
        }
    }
}

/// Every entry of a list of names is non-empty and listed once.
fn check_list(doc: &Document, out: &mut Vec<Diagnostic>, list: &str, items: &[String], what: &str) {
    for (i, item) in items.iter().enumerate() {
        let path = format!("{list}[{i}]");
        if item.trim().is_empty() {
            out.push(doc.error(&path, "empty name", what));
        } else if let Some(j) = items[..i].iter().position(|x| x == item) {
            out.push(doc.error(&path, format!("`{item}` is listed twice (also at {list}[{j}])"), "delete one"));
        }
    }
}

/// A number that must be finite and positive (`inf` allowed where `infinite_ok`).
fn check_positive(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, v: f64, infinite_ok: bool, hint: &str) {
    if !(v > 0.0) || (v.is_infinite() && !infinite_ok) {
        out.push(doc.error(path, format!("must be a positive number, found {}", human(v)), hint));
    } else if let Some(m) = number_problem(v).filter(|_| v.is_finite()) {
        out.push(doc.error(path, m, hint));
    }
}

fn check_load_sharing(doc: &Document, out: &mut Vec<Diagnostic>, ls: &LoadSharingSpec) {
    let base = "load_sharing";
    if ls.muscle_table.is_none() && ls.muscles.is_empty() {
        out.push(doc.error(
            base,
            "load sharing needs muscles, and none are named",
            "add `muscle_table = \"muscles.csv\"` or entries such as `muscles.biceps = { pcsa = 4.6 }` (cm²)",
        ));
    }
    if ls.muscle_table.as_deref().is_some_and(|t| t.trim().is_empty()) {
        out.push(doc.error(
            &format!("{base}.muscle_table"),
            "empty file name",
            "give the CSV file's path relative to this model file",
        ));
    }
    for (name, m) in ls.muscles.iter() {
        let path = format!("{base}.muscles.{name}");
        check_positive(doc, out, &format!("{path}.pcsa"), m.pcsa, false, "the PCSA is in cm², e.g. 4.6");
        if let Some(l) = m.optimal_length {
            check_positive(doc, out, &format!("{path}.optimal_length"), l, false, "a length in the file's length unit");
        }
        if let Some(l) = m.tendon_slack.filter(|l| *l != 0.0) {
            check_positive(
                doc,
                out,
                &format!("{path}.tendon_slack"),
                l,
                false,
                "a length in the file's length unit, or 0",
            );
        }
        if m.muscle.as_deref().is_some_and(|g| g.trim().is_empty()) {
            out.push(doc.error(&format!("{path}.muscle"), "empty muscle name", "name the muscle, or leave it out"));
        }
    }
    if let Some(t) = ls.specific_tension {
        check_positive(
            doc,
            out,
            &format!("{base}.specific_tension"),
            t,
            false,
            "in N/cm², e.g. 100 (Chadwick et al. 2014)",
        );
    }
    if let Some(w) = ls.width {
        check_positive(
            doc,
            out,
            &format!("{base}.width"),
            w,
            true,
            "e.g. 0.56 (Chadwick et al. 2014, eq. 13), or inf for none",
        );
    }
    let what = "write a rigid mode as `element.mode`";
    check_list(doc, out, &format!("{base}.compression"), &ls.compression, what);
    check_list(doc, out, &format!("{base}.tension"), &ls.tension, what);
    for (i, item) in ls.tension.iter().enumerate() {
        if let Some(j) = ls.compression.iter().position(|c| c == item) {
            out.push(doc.error(
                &format!("{base}.tension[{i}]"),
                format!("`{item}` is also at {base}.compression[{j}]: its reaction could only be zero"),
                "keep it in one of the two lists",
            ));
        }
    }
    if let Some(c) = &ls.joint_cone {
        let path = format!("{base}.joint_cone");
        for (field, v) in [("joint", &c.joint), ("body", &c.body)] {
            if v.trim().is_empty() {
                out.push(doc.error(&format!("{path}.{field}"), "empty name", "name a point (joint) or a body"));
            }
        }
        if c.elements.is_empty() {
            out.push(doc.error(
                &format!("{path}.elements"),
                "no elements: the joint force is the force on them",
                "name the socket's elements at the joint, e.g. the generated beam `scapula.GH`",
            ));
        }
        check_list(doc, out, &format!("{path}.elements"), &c.elements, "name an element");
        check_finite(doc, out, &format!("{path}.half_angles"), &c.half_angles);
        let checks = [c.rotation().err(), c.half_angles_rad(doc.spec().units.angle_factor()).err(), c.margin().err()];
        for FieldError { field, message, hint } in checks.into_iter().flatten() {
            out.push(doc.error(&format!("{path}.{field}"), message, hint));
        }
    }
    for (i, r) in ls.reserves.iter().enumerate() {
        let path = format!("{base}.reserves[{i}]");
        if r.input.trim().is_empty() {
            out.push(doc.error(&format!("{path}.input"), "empty name", "name an input as written in `inputs`"));
        } else if let Some(j) = ls.reserves[..i].iter().position(|x| x.input == r.input) {
            out.push(doc.error(
                &format!("{path}.input"),
                format!("`{}` has a reserve already (at {base}.reserves[{j}])", r.input),
                "one reserve per input: delete one",
            ));
        }
        check_positive(doc, out, &format!("{path}.weight"), r.weight, false, "a large cost weight, e.g. 1e6");
    }
}

/// Every number of `v` finite and at most [`MAX_MAGNITUDE`](crate::MAX_MAGNITUDE).
fn check_finite(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, v: &[f64]) {
    for (i, x) in v.iter().enumerate() {
        if let Some(m) = number_problem(*x) {
            out.push(doc.error(&format!("{path}[{i}]"), m, NUMBER_HINT));
        }
    }
}

/// Every number in an element's parameters finite and at most [`MAX_MAGNITUDE`](crate::MAX_MAGNITUDE).
fn check_params(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, v: &ParamValue) {
    match v {
        ParamValue::Number(x) => {
            if let Some(m) = number_problem(*x) {
                out.push(doc.error(path, m, NUMBER_HINT));
            }
        }
        ParamValue::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                check_params(doc, out, &format!("{path}[{i}]"), x);
            }
        }
        ParamValue::Table(t) => {
            for (k, x) in t {
                check_params(doc, out, &format!("{path}.{k}"), x);
            }
        }
        ParamValue::Bool(_) | ParamValue::String(_) => {}
    }
}

fn check_orientation(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, o: &OrientationSpec) {
    if let Err(FieldError { field, message, hint }) = o.euler_parameters(doc.spec().units.angle_factor()) {
        let p = if field.is_empty() { path.to_string() } else { format!("{path}.{field}") };
        out.push(doc.error(&p, message, hint));
    }
}

fn check_body(doc: &Document, out: &mut Vec<Diagnostic>, name: &str, body: &BodySpec) {
    let path = format!("bodies.{name}");
    match &body.origin {
        PointSpec::Coordinates(c) => check_finite(doc, out, &format!("{path}.origin"), c),
        PointSpec::Name(n) if n.is_empty() => {
            out.push(doc.error(&format!("{path}.origin"), "empty node name", "give coordinates or a node name"));
        }
        PointSpec::Name(_) => {}
    }
    if let Some(o) = &body.orientation {
        check_orientation(doc, out, &format!("{path}.orientation"), o);
    }
    for (p, point) in body.points.iter() {
        let pp = format!("{path}.points.{p}");
        if !is_valid_name(p) {
            out.push(doc.error_at_key(&pp, format!("`{p}` is not a valid name"), NAME_HINT));
        } else if AXIS_NAMES.contains(&p) || p == "orientation" {
            out.push(doc.error_at_key(
                &pp,
                format!("`{p}` is reserved"),
                if p == "orientation" {
                    format!("`{name}.orientation` is the body's orientation node; call the point differently")
                } else {
                    format!("`{name}.{p}` is a coordinate of the body's origin; call the point differently")
                },
            ));
        }
        match point {
            PointSpec::Coordinates(c) => check_finite(doc, out, &pp, c),
            PointSpec::Name(n) if n.is_empty() => {
                out.push(doc.error(&pp, "empty node name", "give body coordinates or a node name"));
            }
            PointSpec::Name(_) => {}
        }
    }
    let mass_needed = body.com.is_some() || body.inertia.is_some();
    match body.mass {
        Some(m) if !(m.is_finite() && m > 0.0) => out.push(doc.error(
            &format!("{path}.mass"),
            format!("the mass must be a positive number, found {}", human(m)),
            "give the mass in the file's mass unit",
        )),
        Some(m) if number_problem(m).is_some() => out.push(doc.error(
            &format!("{path}.mass"),
            number_problem(m).unwrap_or_default(),
            "give the mass in the file's mass unit (at most 1e15)",
        )),
        None if mass_needed => out.push(doc.error(
            &path,
            "a centre of mass or inertia is given without a `mass`",
            "add `mass = ...` (file mass unit)",
        )),
        _ => {}
    }
    match &body.com {
        Some(PointSpec::Coordinates(c)) => {
            check_finite(doc, out, &format!("{path}.com"), c);
            if body.points.get("com").is_some() {
                out.push(doc.error(
                    &format!("{path}.com"),
                    format!("`{name}` has a point called `com`, and a centre of mass given as coordinates would take that name"),
                    "write `com = \"com\"` to put the centre of mass at that point, or rename the point",
                ));
            }
        }
        Some(PointSpec::Name(n)) if body.points.get(n).is_none() => {
            let known: Vec<&str> = body.points.iter().map(|(k, _)| k).collect();
            out.push(doc.error(
                &format!("{path}.com"),
                format!("`{name}` has no point `{n}`"),
                if known.is_empty() {
                    "give the centre of mass as [x, y, z] in body coordinates, or declare the point".to_string()
                } else {
                    format!("its points: {}", known.join(", "))
                },
            ));
        }
        _ => {}
    }
    if let Some(inertia) = &body.inertia {
        check_inertia(doc, out, &format!("{path}.inertia"), inertia);
    }
}

fn check_inertia(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, inertia: &InertiaSpec) {
    let m = inertia.matrix();
    if let Some(problem) = m.iter().flatten().find_map(|v| number_problem(*v)) {
        out.push(doc.error(path, problem, NUMBER_HINT));
        return;
    }
    let scale = m.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
    if scale == 0.0 {
        return;
    }
    // the checks on the tensor divided by its largest entry: scale-free, and the eigenvalue
    // formula's squares and cubes cannot overflow
    let m = m.map(|row| row.map(|v| v / scale));
    let tol = 1e-9;
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        if (m[i][j] - m[j][i]).abs() > tol {
            let (a, b) = (human(m[i][j] * scale), human(m[j][i] * scale));
            out.push(doc.error(
                path,
                format!("the inertia matrix is not symmetric (entry ({i},{j}) = {a}, ({j},{i}) = {b})"),
                "an inertia tensor is symmetric; or give six numbers [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]",
            ));
            return;
        }
    }
    let e = sym_eigenvalues(&m).map(|v| v * scale);
    let tol = tol * scale;
    let (lo, hi) = (e[0], e[2]);
    if lo < -tol {
        out.push(doc.error(
            path,
            format!("the inertia tensor has a negative principal moment ({lo:.3e})"),
            "principal moments of inertia are never negative: check the signs of the products of inertia",
        ));
    } else if hi > e[0] + e[1] + tol {
        out.push(doc.error(
            path,
            format!("the principal moments {:.3e}, {:.3e}, {:.3e} violate the triangle inequality", e[0], e[1], e[2]),
            "no body has such an inertia: each principal moment is at most the sum of the other two",
        ));
    }
}

fn check_law(doc: &Document, out: &mut Vec<Diagnostic>, path: &str, law: &Named<ModeLawSpec>) {
    if law.is_empty() {
        out.push(doc.error(
            path,
            "the law names no mode",
            "give one table per mode, e.g. `law.elongation = { stiffness = 1000 }`",
        ));
    }
    for (mode, m) in law.iter() {
        let mp = format!("{path}.{mode}");
        if m.stiffness.is_none()
            && m.damping.is_none()
            && m.preload.is_none()
            && m.tension_only.is_none()
            && m.limits.is_none()
            && m.coordinate_limit.is_none()
        {
            out.push(doc.error(
                &mp,
                format!("the law of `{mode}` gives no `stiffness`, `damping`, `preload`, `tension_only`, `limits` or `coordinate_limit`"),
                "give at least one of them (omitted ones are 0), or delete the entry",
            ));
        }
        if let Some(t) = &m.tension_only {
            let tp = format!("{mp}.tension_only");
            let mut positive = |field: &str, v: f64, what: &str| {
                if let Some(m) = number_problem(v) {
                    out.push(doc.error(&format!("{tp}.{field}"), m, NUMBER_HINT));
                } else if v <= 0.0 {
                    out.push(doc.error(
                        &format!("{tp}.{field}"),
                        format!("`{field}` must be greater than 0, found {}", human(v)),
                        what,
                    ));
                }
            };
            positive("stiffness", t.stiffness, "a ligament's stiffness when taut, e.g. 80000 N/m");
            positive("epsilon", t.epsilon, "the width of the smooth transition from slack to taut, e.g. 1 mm");
            match (t.slack_length, t.slack) {
                (Some(_), Some(_)) => out.push(doc.error(
                    &tp,
                    "both `slack_length` and `slack` are given",
                    "give one: `slack_length` (the length at which it engages) or `slack` (the mode's value then)",
                )),
                (None, None) => out.push(doc.error(
                    &tp,
                    "neither `slack_length` nor `slack` is given",
                    "give one: `slack_length` (the length at which it engages) or `slack` (the mode's value then)",
                )),
                (Some(l), None) => {
                    if let Some(m) = number_problem(l) {
                        out.push(doc.error(&format!("{tp}.slack_length"), m, NUMBER_HINT));
                    } else if l <= 0.0 {
                        out.push(doc.error(
                            &format!("{tp}.slack_length"),
                            format!("a slack length must be greater than 0, found {}", human(l)),
                            "the length at which the ligament becomes taut",
                        ));
                    }
                }
                (None, Some(v)) => {
                    if let Some(m) = number_problem(v) {
                        out.push(doc.error(&format!("{tp}.slack"), m, NUMBER_HINT));
                    }
                }
            }
        }
        if let Some(l) = &m.limits {
            let lp = format!("{mp}.limits");
            let [lo, hi] = l.range;
            if let Some(m) = number_problem(lo).or_else(|| number_problem(hi)) {
                out.push(doc.error(&format!("{lp}.range"), m, NUMBER_HINT));
            } else if lo > hi {
                out.push(doc.error(
                    &format!("{lp}.range"),
                    format!("the range [{}, {}] is reversed", human(lo), human(hi)),
                    "write it as [min, max]",
                ));
            }
            if let Some(m) = number_problem(l.stiffness) {
                out.push(doc.error(&format!("{lp}.stiffness"), m, NUMBER_HINT));
            } else if l.stiffness < 0.0 {
                out.push(doc.error(
                    &format!("{lp}.stiffness"),
                    format!("the stiffness must not be negative, found {}", human(l.stiffness)),
                    "the stops push the mode back into its range: k₂ is at least 0",
                ));
            }
        }
        if let Some(c) = &m.coordinate_limit {
            check_coordinate_limit(doc, out, &format!("{mp}.coordinate_limit"), c);
        }
        for (field, v) in [("stiffness", m.stiffness), ("damping", m.damping), ("preload", m.preload)] {
            let Some(v) = v else { continue };
            let fp = format!("{mp}.{field}");
            if let Some(m) = number_problem(v) {
                out.push(doc.error(&fp, m, NUMBER_HINT));
            } else if v < 0.0 && field != "preload" {
                let hint = if field == "stiffness" {
                    "a spring's stiffness is at least 0; to load the mode the other way, give a negative `preload`"
                } else {
                    "a damper dissipates energy: its coefficient is at least 0"
                };
                out.push(doc.error(&fp, format!("the {field} must not be negative, found {}", human(v)), hint));
            }
        }
    }
}

fn check_coordinate_limit(doc: &Document, out: &mut Vec<Diagnostic>, cp: &str, c: &CoordinateLimitSpec) {
    let fields = [
        ("upper_limit", c.upper_limit),
        ("upper_stiffness", c.upper_stiffness),
        ("lower_limit", c.lower_limit),
        ("lower_stiffness", c.lower_stiffness),
        ("damping", c.damping),
        ("transition", c.transition),
    ];
    let mut finite = true;
    for (field, v) in fields {
        let fp = format!("{cp}.{field}");
        if let Some(m) = number_problem(v) {
            out.push(doc.error(&fp, m, NUMBER_HINT));
            finite = false;
        } else if field == "transition" && v <= 0.0 {
            out.push(doc.error(
                &fp,
                format!("the transition must be greater than 0, found {}", human(v)),
                "the width over which the limit's stiffness switches on, e.g. 2 degrees (OpenSim's default is 0.1)",
            ));
        } else if (field.ends_with("stiffness") || field == "damping") && v < 0.0 {
            out.push(doc.error(
                &fp,
                format!("`{field}` must not be negative, found {}", human(v)),
                "the limit pushes the mode back into its range: stiffness and damping are at least 0",
            ));
        }
    }
    if finite && c.lower_limit > c.upper_limit {
        out.push(doc.error(
            &format!("{cp}.lower_limit"),
            format!("the lower limit {} is above the upper limit {}", human(c.lower_limit), human(c.upper_limit)),
            "swap them: `lower_limit` is the smaller end of the free range",
        ));
    }
}

fn check_axes(doc: &Document, out: &mut Vec<Diagnostic>, axes: &AxesSpec) {
    let (f, u) = (axes.forward.vector(), axes.up.vector());
    if f.iter().zip(&u).any(|(a, b)| a * b != 0.0) {
        out.push(doc.error(
            "axes.up",
            "`up` is along the same axis as `forward`",
            "give two different axes, e.g. { forward = \"x\", up = \"y\" }",
        ));
    }
}

fn check_gravity(doc: &Document, out: &mut Vec<Diagnostic>, g: &[f64; 3]) {
    let before = out.len();
    check_finite(doc, out, "gravity", g);
    if out.len() > before {
        return;
    }
    let n = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    // standard gravity in cm/s² or mm/s², give or take 2 %
    for (per_m, unit) in [(100.0, "cm"), (1000.0, "mm")] {
        if (n / (per_m * STANDARD_GRAVITY) - 1.0).abs() < 0.02 {
            out.push(doc.error(
                "gravity",
                format!("a gravity of {} m/s² is about {per_m} g: it looks like {unit}/s²", human(n)),
                "gravity is in m/s² whatever the file's length unit: write e.g. [0, -9.81, 0]",
            ));
        }
    }
}

fn check_load(doc: &Document, out: &mut Vec<Diagnostic>, name: &str, load: &LoadSpec) {
    let path = format!("loads.{name}");
    if !is_valid_name(name) {
        out.push(doc.error_at_key(&path, format!("`{name}` is not a valid name"), NAME_HINT));
    }
    if load.at.trim().is_empty() {
        out.push(doc.error(
            &format!("{path}.at"),
            "empty name",
            "name the point a force acts at, or the body a moment acts on",
        ));
    }
    if load.force.is_none() && load.moment.is_none() {
        out.push(doc.error(
            &path,
            "a load needs a `force` or a `moment`",
            "write `force = [x, y, z]` (N) or `moment = [x, y, z]` (N m), global frame",
        ));
    }
    for (field, v) in [("force", &load.force), ("moment", &load.moment)] {
        if let Some(v) = v {
            check_finite(doc, out, &format!("{path}.{field}"), v);
        }
    }
}

/// Eigenvalues of a symmetric 3x3 matrix, ascending (trigonometric closed form).
fn sym_eigenvalues(m: &[[f64; 3]; 3]) -> [f64; 3] {
    let p1 = m[0][1].powi(2) + m[0][2].powi(2) + m[1][2].powi(2);
    let q = (m[0][0] + m[1][1] + m[2][2]) / 3.0;
    if p1 == 0.0 {
        let mut d = [m[0][0], m[1][1], m[2][2]];
        d.sort_by(f64::total_cmp);
        return d;
    }
    let p2 = (m[0][0] - q).powi(2) + (m[1][1] - q).powi(2) + (m[2][2] - q).powi(2) + 2.0 * p1;
    let p = (p2 / 6.0).sqrt();
    let b = |i: usize, j: usize| (m[i][j] - if i == j { q } else { 0.0 }) / p;
    let det = b(0, 0) * (b(1, 1) * b(2, 2) - b(1, 2) * b(2, 1)) - b(0, 1) * (b(1, 0) * b(2, 2) - b(1, 2) * b(2, 0))
        + b(0, 2) * (b(1, 0) * b(2, 1) - b(1, 1) * b(2, 0));
    let phi = (det / 2.0).clamp(-1.0, 1.0).acos() / 3.0;
    let e1 = q + 2.0 * p * phi.cos();
    let e3 = q + 2.0 * p * (phi + 2.0 * std::f64::consts::PI / 3.0).cos();
    let e2 = 3.0 * q - e1 - e3;
    let mut e = [e1, e2, e3];
    e.sort_by(f64::total_cmp);
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for ok in ["A", "gh_elevation", "_x", "m-1"] {
            assert!(is_valid_name(ok), "{ok}");
        }
        for bad in ["", "1a", "a.b", "a b", "a/b", "é"] {
            assert!(!is_valid_name(bad), "{bad}");
        }
    }

    #[test]
    fn eigenvalues_of_a_rotated_diagonal_tensor() {
        // R diag(1, 2, 4) Rᵀ with R a rotation by 30° about z: eigenvalues 1, 2, 4
        let (s, c) = (30f64.to_radians().sin(), 30f64.to_radians().cos());
        let m = [
            [c * c + 2.0 * s * s, (1.0 - 2.0) * c * s, 0.0],
            [(1.0 - 2.0) * c * s, s * s + 2.0 * c * c, 0.0],
            [0.0, 0.0, 4.0],
        ];
        let e = sym_eigenvalues(&m);
        for (a, b) in e.iter().zip([1.0, 2.0, 4.0]) {
            assert!((a - b).abs() < 1e-12, "{e:?}");
        }
    }
}
