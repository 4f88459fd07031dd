//! `[constraints.cone]` of a problem file: the model's joint cone (`[load_sharing.joint_cone]`)
//! as a path constraint ([`mollier_ocp::ConeConstraint`]), its checks against the model (each
//! placed at its field), and `stability.csv`, the joint force at every grid point as `mollier
//! simulate` writes it, with the constraint's value. Docs: `docs/optimal-control.md`.

use mollier_ocp::ConeConstraint;
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
