//! FLEXION-TORSION-JOINT: the flexion-torsion joint model of MADYMO 4.3 as the graduation report
//! *Human Joint Modelling* (Delft, c. 1991, §2.1.3) describes it. Theory:
//! `docs/theory/joint-models.md`.
//!
//! The element joins two orientation nodes, element i (the fixed member) and element j (the
//! moving member), each with a joint coordinate system. Its posture is a bending `α` (the angle
//! between the z axes) in the direction `γ` (the azimuth of `z_j` about `z_i`), followed by a
//! torsion `β` about `z_j`. The modes (rad) are `bending_p = α cos γ`, `bending_q = α sin γ`
//! (smooth through the straight joint) and `torsion = β`, less their initial values.
//!
//! Its law ([`FlexionTorsionLaw`], returned by `Element::law`) is the report's: a bending torque
//! `−M_f(α) C(γ) û` about the unit vector `û` perpendicular to both z axes, with an optional
//! dimensionless direction factor `C(γ)`, and a torsion torque `−M_t(β) z_j`, `M_t(0) = 0`, plus
//! damping torques of the bending rate and of the angular velocity about `z_j`. With `C ≡ 1`
//! the free range is circular (report §4.1); a bending torque acts only about `û`.
//!
//! ```
//! use mollier_flexion_torsion_joint::FlexionTorsionLaw;
//! use mollier_joint_common::TorqueFunction;
//!
//! let law = FlexionTorsionLaw::new(Some(TorqueFunction::linear(10.0)), None, Some(TorqueFunction::linear(2.0)), None, None);
//! // bent by 0.3 rad in the direction γ = π/2, twisted by 0.1 rad, at rest
//! let m = law.moment_at(0.0, 0.3, 0.1, &[0.0; 3]);
//! assert!((m.bending - 3.0).abs() < 1e-12 && (m.torsion - 0.2).abs() < 1e-12);
//! ```

pub mod element;
pub mod law;

use mollier_core::element::Element;
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_joint_common::torque::{ANGLE_FUNCTION, RATE_FUNCTION, Table};
use mollier_joint_common::{FrameSpec, Interpolation, TorqueFunction, fixed_doc, members, moving_doc};

pub use element::{FlexionTorsionJoint, JointTorque, MODES};
pub use law::{DirectionFactor, FlexionTorsionLaw, JointMoment};

fn optional(p: &Params<'_>, key: &str, rate: bool) -> Result<Option<TorqueFunction>, ParamError> {
    if p.get(key).is_none() { Ok(None) } else { TorqueFunction::read(p, key, rate).map(Some) }
}

/// A torque-angle function that must vanish at zero (the report's `M_t(0) = 0`; `M_f(0) = 0` so
/// that the bending torque is continuous through the straight joint, where `û` turns).
fn zero_at_zero(p: &Params<'_>, key: &str) -> Result<Option<TorqueFunction>, ParamError> {
    let f = optional(p, key, false)?;
    if let Some(m) = &f {
        let m0 = m.value(0.0);
        if m0.abs() > 1e-9 {
            return Err(ParamError::new(p.path(key), format!("must be zero at the angle 0, found {m0} N m")));
        }
    }
    Ok(f)
}

fn direction(p: &Params<'_>) -> Result<Option<DirectionFactor>, ParamError> {
    const KEY: &str = "direction_factor";
    if p.get(KEY).is_none() {
        return Ok(None);
    }
    let t = p.table(KEY)?;
    let angles: Vec<f64> = t.numbers("angles", None)?.iter().map(|a| a * p.units().angle).collect();
    let factors = t.numbers("factors", None)?;
    let interpolation = Interpolation::read(&t, "interpolation")?;
    t.finish(&["angles", "factors", "interpolation"])?;
    let table = Table::new(angles, factors, interpolation).map_err(|e| ParamError::new(t.path("angles"), e))?;
    DirectionFactor::new(table).map(Some).map_err(|e| ParamError::new(t.path("angles"), e))
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (fixed, moving) = members(p)?;
    let spec = FrameSpec::read(p)?;
    let bending = zero_at_zero(p, "bending")?;
    let factor = direction(p)?;
    let torsion = zero_at_zero(p, "torsion")?;
    let bending_damping = optional(p, "damping_bending", true)?;
    let torsion_damping = optional(p, "damping_torsion", true)?;
    if factor.is_some() && bending.is_none() {
        return Err(ParamError::new(p.path("direction_factor"), "a direction factor needs a `bending` function"));
    }
    if [&bending, &torsion, &bending_damping, &torsion_damping].iter().all(|f| f.is_none()) {
        return Err(ParamError::new(p.path("bending"), "the joint has no torque function")
            .with_hint("give at least one of bending, torsion, damping_bending, damping_torsion"));
    }
    let law = FlexionTorsionLaw::new(bending, factor, torsion, bending_damping, torsion_damping);
    Ok(Box::new(FlexionTorsionJoint::new(fixed, moving, spec, law)))
}

const DIRECTION_FACTOR: &[ParamDoc] = &[
    ParamDoc {
        name: "angles",
        kind: ParamKind::Numbers,
        required: true,
        doc: "directional angles γ, strictly increasing from −π or below to π or above, in the file's angle unit",
    },
    ParamDoc {
        name: "factors",
        kind: ParamKind::Numbers,
        required: true,
        doc: "C at `angles`, dimensionless, not negative, equal at ±π",
    },
    ParamDoc {
        name: "interpolation",
        kind: ParamKind::Choice(&["monotone-cubic", "linear"]),
        required: false,
        doc: "interpolation of the table: monotone-cubic (C1, default) or linear",
    },
];

/// The `flexion-torsion-joint` element type.
pub const TYPE: ElementType = ElementType {
    name: "flexion-torsion-joint",
    summary: "MADYMO flexion-torsion joint between two orientations: bending α between the z axes in the direction γ, \
              torsion β about z_j; bending torque −M_f(α) C(γ) about z_i × z_j, torsion torque −M_t(β) about z_j, with \
              damping; modes: bending_p, bending_q (α cos γ, α sin γ), torsion (rad)",
    role: ElementRole::Joint,
    modes: &MODES,
    params: &[
        fixed_doc("orientation node (or body) of element i"),
        moving_doc("orientation node (or body) of element j"),
        ParamDoc {
            name: "fixed_z",
            kind: ParamKind::Vector,
            required: true,
            doc: "z_i, the axis the bending α is measured from, global frame of the initial configuration",
        },
        ParamDoc {
            name: "fixed_x",
            kind: ParamKind::Vector,
            required: true,
            doc: "x_i (its part perpendicular to fixed_z): the direction γ = 0, and the vector that, carried along by the bending, measures the torsion; global frame of the initial configuration",
        },
        ParamDoc {
            name: "moving_z",
            kind: ParamKind::Vector,
            required: false,
            doc: "z_j, global frame of the initial configuration; default fixed_z (the frames coincide initially)",
        },
        ParamDoc {
            name: "moving_x",
            kind: ParamKind::Vector,
            required: false,
            doc: "x_j (its part perpendicular to moving_z), the torsion β = 0 where it meets x_i carried along by the bending; given with moving_z; default fixed_x",
        },
        ParamDoc {
            name: "bending",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: false,
            doc: "bending torque-angle function M_f(α), N m, α ≥ 0 the angle between the z axes; M_f(0) = 0; absent: zero",
        },
        ParamDoc {
            name: "direction_factor",
            kind: ParamKind::Table(DIRECTION_FACTOR),
            required: false,
            doc: "dimensionless factor C(γ) of M_f, a table over the directional angle γ (azimuth of z_j about z_i from x_i); absent: 1",
        },
        ParamDoc {
            name: "torsion",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: false,
            doc: "torsion torque-angle function M_t(β), N m, used at the continuous torsion angle; M_t(0) = 0; absent: zero",
        },
        ParamDoc {
            name: "damping_bending",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping torque about z_i × z_j, N m, of the bending rate dα/dt; absent: zero",
        },
        ParamDoc {
            name: "damping_torsion",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping torque about z_j, N m, of the relative angular velocity about z_j; absent: zero",
        },
    ],
    build,
};

/// Register the `flexion-torsion-joint` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}
