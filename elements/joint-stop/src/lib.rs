//! JOINT-STOP: the joint-stop model of the Calspan three-dimensional crash-victim program as the
//! graduation report *Human Joint Modelling* (Delft, c. 1991, §2.2.2) describes it.
//! Theory: `docs/theory/joint-models.md`.
//!
//! Three orthogonal unit vectors are fixed in segment i, a unit vector `r` in segment j. The
//! bounds on the orientation of `r` are a closed joint-stop contour `θ = θ_b(φ)` on the unit
//! sphere about the joint; the Calspan model takes it from Engin's measurements of the free range
//! (report §3.3), the sinus of eq. 3.1 that `ball-socket-resistance` uses too. Inside the contour
//! nothing acts; when the tip of `r` comes outside, a stop torque perpendicular to `r` tends to
//! restore it as quickly as possible, its magnitude a user-defined function of the penetration
//! `δ = θ − θ_b(φ)`, plus a damping of the penetration rate.
//!
//! The element's modes `swing_p`, `swing_q` (rad) are the swing coordinates `θ (cos φ, sin φ)` of
//! `r`, less their initial values; its law is [`StopLaw`]. It constrains nothing by itself; it
//! does not depend on the twist of segment j about `r` (the report's criticism of the Calspan
//! model, §4.1).

pub mod element;
pub mod law;

use std::f64::consts::PI;

use mollier_core::element::Element;
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_engin_joint::SinusBoundary;
use mollier_joint_common::torque::{ANGLE_FUNCTION, RATE_FUNCTION};
use mollier_joint_common::{TorqueFunction, axis_pair, direction, fixed_doc, members, moving_doc};

pub use element::{JointStop, MODES, StopFrame};
pub use law::{StopLaw, StopTorque};

/// Rays on which the contour is checked when the data are read (every 0.5°).
const CHECK_RAYS: usize = 720;

/// The contour from Engin's ten sinus coefficients; it must lie in `(0, π)` on every ray.
pub fn contour(coefficients: [f64; 10]) -> Result<SinusBoundary, String> {
    let s = SinusBoundary::new(coefficients);
    for k in 0..CHECK_RAYS {
        let phi = 2.0 * PI * k as f64 / CHECK_RAYS as f64;
        let tb = s.theta(phi);
        if !(tb > 0.0 && tb < PI) {
            return Err(format!("the contour θ_b = {tb} rad at φ = {phi} rad lies outside (0, π)"));
        }
    }
    Ok(s)
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (fixed, moving) = members(p)?;
    let (pole, azimuth) = axis_pair(p, "fixed_z", "fixed_x")?;
    let r = direction(p, "moving_z")?;
    let c = p.numbers("sinus", Some(10))?;
    let rad = p.units().angle;
    let sinus = contour(std::array::from_fn(|i| c[i] * rad)).map_err(|e| ParamError::new(p.path("sinus"), e))?;
    let stiffness = TorqueFunction::read(p, "stop_torque", false)?;
    let k0 = stiffness.value(0.0);
    if k0.abs() > 1e-9 {
        return Err(ParamError::new(
            p.path("stop_torque"),
            format!("must be zero at the contour (δ = 0), found {k0} N m"),
        )
        .with_hint("the stop torque must switch on continuously"));
    }
    if !stiffness.is_non_decreasing_on(0.0, PI) {
        return Err(ParamError::new(
            p.path("stop_torque"),
            "must not decrease with the penetration (it would not restore)",
        ));
    }
    let damping = if p.get("damping").is_none() { None } else { Some(TorqueFunction::read(p, "damping", true)?) };
    Ok(Box::new(JointStop::new(fixed, moving, StopFrame { pole, azimuth, r }, StopLaw::new(sinus, stiffness, damping))))
}

/// The `joint-stop` element type.
pub const TYPE: ElementType = ElementType {
    name: "joint-stop",
    summary: "Calspan joint stop between two orientations: outside a contour θ = θ_b(φ) (Engin's sinus) on the unit sphere, \
              a stop torque ⟂ to a vector r of the moving member, a function of the penetration θ − θ_b, restores it; \
              modes: swing_p, swing_q (rad)",
    role: ElementRole::Joint,
    modes: &MODES,
    params: &[
        fixed_doc("orientation node (or body) of segment i, which carries the contour"),
        moving_doc("orientation node (or body) of segment j, which carries r"),
        ParamDoc {
            name: "fixed_z",
            kind: ParamKind::Vector,
            required: true,
            doc: "a3, the pole of the contour (θ = 0), global frame of the initial configuration",
        },
        ParamDoc {
            name: "fixed_x",
            kind: ParamKind::Vector,
            required: true,
            doc: "a1, the azimuth φ = 0 (its part perpendicular to fixed_z); a2 = a3 × a1; global frame of the initial configuration",
        },
        ParamDoc {
            name: "moving_z",
            kind: ParamKind::Vector,
            required: true,
            doc: "r, the vector of segment j whose direction the stop bounds (e.g. the long axis), global frame of the initial configuration",
        },
        ParamDoc {
            name: "sinus",
            kind: ParamKind::Numbers,
            required: true,
            doc: "the contour θ_b(φ) = Σ cos^(n−1)φ (C(2n−1) + C(2n) sin φ), n = 1..5 (report eq. 3.1): C1..C10 in the file's angle unit; a cone of half-angle c is [c, 0, …]",
        },
        ParamDoc {
            name: "stop_torque",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: true,
            doc: "magnitude K(δ) of the stop torque, N m, of the penetration δ = θ − θ_b(φ) ≥ 0; K(0) = 0, non-decreasing",
        },
        ParamDoc {
            name: "damping",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping added to the magnitude outside the contour, N m, of the penetration rate dδ/dt; absent: zero",
        },
    ],
    build,
};

/// Register the `joint-stop` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}
