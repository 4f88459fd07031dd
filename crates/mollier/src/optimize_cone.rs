//! `[constraints]` of a problem file. `[constraints.cone]`: the model's joint cone
//! (`[load_sharing.joint_cone]`) as a path constraint ([`mollier_ocp::ConeConstraint`]), its
//! checks against the model (each placed at its field), and `stability.csv`, the joint force at
//! every grid point as `mollier simulate` writes it, with the constraint's value.
//! `[constraints.direction.NAME]`: the direction between two model points within a band about a
//! plane ([`mollier_ocp::DirectionConstraint`]). `[constraints.modes]`: free modes of the model
//! within bounds ([`mollier_ocp::ModeConstraint`]). Docs: `docs/optimal-control.md`.

use std::collections::BTreeMap;

use mollier_core::ModeRole;
use mollier_ocp::{ConeConstraint, DirectionConstraint, ModeConstraint};
use mollier_optim::{deviation_angles, stability_index};
use mollier_sim::Musculoskeletal;
use serde::Deserialize;

use crate::Column;
use crate::compile::Compiled;

/// Path constraints.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConstraintsSpec {
    /// The joint force within the model's joint cone at every point.
    pub cone: Option<ConeSpec>,
    /// Directions between model points held within bands about planes, by name.
    #[serde(default)]
    pub direction: BTreeMap<String, DirectionSpec>,
    /// Free modes held within bounds at every point: `element.mode` (or an element of one mode)
    /// to `[lower, upper]` in the mode's unit (`-inf` and `inf` leave a side open).
    #[serde(default)]
    pub modes: BTreeMap<String, [f64; 2]>,
}

/// `n · d / |d| ∈ [lo, hi]` at every point, `d` from one model point to another, `n` the unit
/// normal of a plane through the origin (global frame): the sine of the angle between `d` and
/// the plane within bounds.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// The direction's tail: a model point (`body.point`, `body` or a node).
    pub from: String,
    /// Its head.
    pub to: String,
    /// The plane's normal (global frame; scaled to length 1).
    pub normal: [f64; 3],
    /// `[lower, upper]` of the sine, in [-1, 1].
    pub bounds: [f64; 2],
}

/// What is wrong with the `[constraints.direction]` tables on `compiled`: (field path, message).
pub(crate) fn direction_problems(
    specs: &BTreeMap<String, DirectionSpec>,
    compiled: &Compiled,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (name, d) in specs {
        let path = format!("constraints.direction.{name}");
        for (field, point) in [("from", &d.from), ("to", &d.to)] {
            if !compiled.points.iter().any(|q| q.name == *point) {
                let hint = crate::compile::suggest(point, compiled.points.iter().map(|q| q.name.as_str()))
                    .map_or(String::new(), |s| format!(" (did you mean `{s}`?)"));
                out.push((format!("{path}.{field}"), format!("`{point}` is not a point of the model{hint}")));
            }
        }
        if d.from == d.to {
            out.push((format!("{path}.to"), "the direction's ends are two different points".into()));
        }
        let len = d.normal.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(len > 0.0 && len.is_finite()) {
            out.push((format!("{path}.normal"), format!("a finite, nonzero vector, not {:?}", d.normal)));
        }
        let [lo, hi] = d.bounds;
        if !(-1.0 <= lo && lo <= hi && hi <= 1.0) {
            out.push((
                format!("{path}.bounds"),
                format!("[lower, upper] with -1 ≤ lower ≤ upper ≤ 1, not [{lo}, {hi}]"),
            ));
        }
    }
    out
}

/// The direction constraints of `specs` (checked by [`direction_problems`]).
pub(crate) fn directions(specs: &BTreeMap<String, DirectionSpec>, compiled: &Compiled) -> Vec<DirectionConstraint> {
    let node = |p: &str| compiled.points.iter().find(|q| q.name == p).expect("checked").node;
    specs
        .iter()
        .map(|(name, d)| {
            let len = d.normal.iter().map(|v| v * v).sum::<f64>().sqrt();
            DirectionConstraint {
                name: name.clone(),
                from: node(&d.from),
                to: node(&d.to),
                normal: d.normal.map(|v| v / len),
                bounds: d.bounds,
            }
        })
        .collect()
}

/// What is wrong with `[constraints.modes]` on `compiled`: (field path, message).
pub(crate) fn mode_problems(specs: &BTreeMap<String, [f64; 2]>, compiled: &Compiled) -> Vec<(String, String)> {
    let model = &compiled.model;
    let mut out = Vec::new();
    for (name, &[lo, hi]) in specs {
        let path = format!("constraints.modes.{name}");
        match crate::compile::mode_named(model, name) {
            Err((message, hint)) => out.push((path.clone(), format!("{message}; {hint}"))),
            Ok(m) if model.mode_role(m) != ModeRole::Dependent => out.push((
                path.clone(),
                format!(
                    "`{}` is {}: only a free mode (listed in `free`) follows from the positions",
                    model.mode_name(m),
                    if model.mode_role(m) == ModeRole::Input { "an input" } else { "held fixed" }
                ),
            )),
            Ok(_) => {}
        }
        if !(lo <= hi && lo < f64::INFINITY && hi > f64::NEG_INFINITY) {
            out.push((path, format!("[lower, upper] with lower ≤ upper, not [{lo}, {hi}]")));
        }
    }
    out
}

/// The mode constraints of `specs` (checked by [`mode_problems`]).
pub(crate) fn modes(specs: &BTreeMap<String, [f64; 2]>, compiled: &Compiled) -> Vec<ModeConstraint> {
    specs
        .iter()
        .map(|(name, &bounds)| ModeConstraint {
            name: name.clone(),
            mode: crate::compile::mode_named(&compiled.model, name).expect("checked"),
            bounds,
        })
        .collect()
}

/// The joint cone as a path constraint.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConeSpec {
    /// Whether it is imposed (default `true`).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// `F₀` (N): the constraint is `((f_y/tan θ)² + (f_z/tan φ)² − f_x²)/F₀² ≤ 0`; a typical
    /// joint force.
    pub force_scale: f64,
    /// The cone imposed has the model's half-angles times this, in (0, 1] (default: the model
    /// cone's `margin`).
    pub margin: Option<f64>,
}

fn yes() -> bool {
    true
}

/// The constraint `spec` asks of `compiled`, if it asks one and the model has a cone.
pub(crate) fn constraint(spec: Option<&ConeSpec>, compiled: &Compiled) -> Option<ConeConstraint> {
    let spec = spec.filter(|s| s.enabled)?;
    let info = compiled.load_sharing.as_ref()?.cone.as_ref()?;
    let k = spec.margin.unwrap_or(info.margin);
    Some(ConeConstraint {
        joint: info.node,
        socket: info.elements.clone(),
        body: info.body,
        rotation: info.rotation,
        half_angles: info.half_angles.map(|a| k * a),
        force_scale: spec.force_scale,
    })
}

/// What is wrong with `spec` on `compiled`: (field path, message).
pub(crate) fn problems(spec: Option<&ConeSpec>, exact_hessian: bool, compiled: &Compiled) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(s) = spec.filter(|s| s.enabled) else { return out };
    if !(s.force_scale > 0.0 && s.force_scale.is_finite()) {
        out.push(("constraints.cone.force_scale".into(), format!("a positive force (N), not {}", s.force_scale)));
    }
    if let Some(k) = s.margin.filter(|k| !(*k > 0.0 && *k <= 1.0)) {
        out.push(("constraints.cone.margin".into(), format!("a margin in (0, 1], not {k}")));
    }
    if exact_hessian {
        out.push((
            "solver.hessian".into(),
            format!("the exact Hessian is not available with `[constraints.cone]` ({}): write `limited-memory`, or leave the field out", NO_HESSIAN),
        ));
    }
    let Some(c) = constraint(spec, compiled) else {
        out.push((
            "constraints.cone".into(),
            "the model has no joint cone: give it one (`[load_sharing.joint_cone]`), or leave this table out".into(),
        ));
        return out;
    };
    if out.is_empty() {
        let system = Musculoskeletal::new(&compiled.model, compiled.muscles.clone());
        if let Err(why) = c.check(&system) {
            out.push(("constraints.cone".into(), format!("the joint cone cannot be imposed: {why}")));
        }
    }
    out
}

/// What `mollier_ocp` says of the Hessian with a cone.
const NO_HESSIAN: &str = "the constraint has no second derivatives";

/// `stability.csv`'s columns after `time`: `simulate`'s, and the constraint's row `g_1`.
pub(crate) fn columns() -> Vec<Column> {
    let mut c: Vec<Column> = crate::forward_tables::STABILITY
        .iter()
        .map(|&(name, unit, meaning)| Column { name: name.into(), unit, meaning: meaning.into() })
        .collect();
    c.push(Column {
        name: "cone_constraint".into(),
        unit: "1",
        meaning: "((force_y/tan theta_a)^2 + (force_z/tan phi_a)^2 - force_x^2)/F0^2 with the imposed half-angles: at most 0 inside".into(),
    });
    c
}

/// One row of `stability.csv` after `time` for the joint force `f` (cone frame, N), with the
/// model's half-angles `model` and the constraint `c`.
pub(crate) fn row(f: &[f64; 3], model: [f64; 2], c: &ConeConstraint) -> Vec<f64> {
    let (theta, phi) = deviation_angles(f).unwrap_or((f64::NAN, f64::NAN));
    let index = stability_index(f, model[0], model[1]).unwrap_or(f64::NAN);
    let [ty, tz] = c.half_angles.map(f64::tan);
    let g = ((f[1] / ty).powi(2) + (f[2] / tz).powi(2) - f[0].powi(2)) / c.force_scale.powi(2);
    vec![f[0], f[1], f[2], theta, phi, index, g]
}
