//! BALL-SOCKET-RESISTANCE: the passive resistive moment of a human ball-and-socket joint with
//! directional dependence, after Engin's measurements on the shoulder complex and the graduation
//! report *Human Joint Modelling* (Delft, c. 1991), completed where that report's
//! program stopped: the moment's direction, and its interpolation below the lowest measured
//! contour. Theory: `docs/theory/engin-joint.md`.
//!
//! The element joins two orientation nodes, the fixed member (e.g. the thorax) and the moving
//! member (e.g. the humerus), each with a joint frame. Its three modes (rad) are the relative
//! orientation by swing and twist, zero in the initial configuration:
//! - `swing_p`, `swing_q`: `p = θ cos φ`, `q = θ sin φ`, where `(θ, φ)` are the polar angle and
//!   azimuth of the moving member's long axis in the fixed joint frame (smooth through `θ = 0`);
//! - `torsion`: the twist `ψ` about the long axis (periodic).
//!
//! Its law ([`ResistanceLaw`], returned by `Element::law`, so it acts when the modes are free)
//! gives the moment:
//! - zero inside the joint sinus `θ_b(φ)` (Engin's maximal voluntary range, eq. 3.1);
//! - Engin's expansion `f(φ, θ)` (eq. 3.2) from the lowest measured contour (6 N m) outward, and
//!   its own extrapolation beyond the measured range, as Engin recommends;
//! - a C1 ramp from 0 at the sinus to `f` at that contour ([`SwingResistance`]);
//! - directed down the steepest descent of the moment field on the unit sphere, perpendicular
//!   to the long axis, so it opposes every motion that raises the moment;
//! - plus the torsion moment `T(ψ)` about the long axis from a measured table, interpolated
//!   monotonically with C1 continuity ([`TorsionCurve`]).
//!
//! It constrains nothing by itself: the joint centre is made by the model (a shared position
//! node, or fixed BEAM modes). The element's type name says what it models — the passive
//! resistance of a ball-and-socket joint — rather than whose data it was first used with: the
//! same type serves the hip or the elbow with other coefficients and tables.
//!
//! ```
//! use mollier_engin_joint::{ResistanceLaw, shoulder, torsion::Interpolation};
//!
//! let law = ResistanceLaw::new(shoulder::swing_resistance(), shoulder::torsion(Interpolation::MonotoneCubic));
//! // the long axis 2.5 rad from the sinus' pole at azimuth 1.57 rad, no twist (Table H.4: 41.00 N m)
//! let (theta, phi) = (2.5_f64, 1.57_f64);
//! let m = law.moment_at(theta * phi.cos(), theta * phi.sin(), 0.0);
//! assert!((m.swing - 41.00).abs() < 0.005);
//! assert!((m.torsion - 2.7).abs() < 1e-12); // the torsion table at ψ = 0
//! ```

pub mod element;
pub mod expansion;
pub mod law;
pub mod resistance;
pub mod shoulder;
pub mod torsion;

use std::f64::consts::PI;

use mollier_core::element::Element;
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_joint_common::{axis_pair, fixed_doc, members, moving_doc};

pub use element::{BallSocketResistance, JointFrames, MODES};
pub use expansion::{MomentExpansion, SinusBoundary};
pub use law::{JointMoment, ResistanceLaw};
pub use resistance::SwingResistance;
pub use torsion::{Interpolation, TorsionCurve};

/// Default minimum width of the ramp from the sinus to the expansion (rad).
pub const DEFAULT_MIN_RAMP_WIDTH: f64 = 0.05;

/// Joint data that cannot give a restoring moment, or an out-of-range setting.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum DataError {
    /// A setting out of range.
    #[error("{name}: {message}")]
    Parameter {
        /// The model-file key.
        name: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The sinus boundary leaves `(0, π)`.
    #[error("the sinus boundary θ_b = {theta} rad at φ = {phi} rad lies outside (0, π)")]
    Sinus {
        /// Azimuth, rad.
        phi: f64,
        /// Its boundary, rad.
        theta: f64,
    },
    /// The expansion never reaches the lowest contour along a ray.
    #[error("along φ = {phi} rad the moment expansion does not reach the lowest contour ({moment} N m) before θ = π")]
    NoContour {
        /// Azimuth, rad.
        phi: f64,
        /// The contour moment, N m.
        moment: f64,
    },
    /// The moment does not rise outward along a ray.
    #[error("along φ = {phi} rad the moment does not increase outward at θ = {theta} rad, so it would not restore")]
    NotIncreasing {
        /// Azimuth, rad.
        phi: f64,
        /// Where, rad.
        theta: f64,
    },
    /// A bad torsion table.
    #[error("{name}: {message}")]
    Torsion {
        /// The model-file key.
        name: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl DataError {
    /// The model-file key the problem belongs to.
    pub fn key(&self) -> &'static str {
        match self {
            DataError::Parameter { name, .. } | DataError::Torsion { name, .. } => name,
            DataError::Sinus { .. } => "sinus",
            DataError::NoContour { .. } | DataError::NotIncreasing { .. } => "moment",
        }
    }
}

fn ten(p: &Params<'_>, key: &str, scale: f64) -> Result<[f64; 10], ParamError> {
    let v = p.numbers(key, Some(10))?;
    Ok(std::array::from_fn(|i| v[i] * scale))
}

fn optional_angle(p: &Params<'_>, key: &str, default: f64) -> Result<f64, ParamError> {
    if p.get(key).is_none() { Ok(default) } else { p.angle(key) }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (fixed, moving) = members(p)?;
    let (fixed_z, fixed_x) = axis_pair(p, "fixed_z", "fixed_x")?;
    let (moving_z, moving_x) = axis_pair(p, "moving_z", "moving_x")?;
    let rad = p.units().angle;
    let sinus = ten(p, "sinus", rad)?;
    let moment = ten(p, "moment", 1.0)?;
    let contour = p.positive("lowest_contour")?;
    let min_width = optional_angle(p, "min_ramp_width", DEFAULT_MIN_RAMP_WIDTH)?;
    let theta_max = optional_angle(p, "theta_max", PI)?;
    let interpolation = Interpolation::read(p, "torsion_interpolation")?;
    let angles: Vec<f64> = p.numbers("torsion_angles", None)?.iter().map(|a| a * rad).collect();
    let moments = p.numbers("torsion_moments", None)?;
    let data = |e: DataError| ParamError::new(p.path(e.key()), e.to_string());
    let swing =
        SwingResistance::new(SinusBoundary::new(sinus), MomentExpansion::new(moment), contour, min_width, theta_max)
            .map_err(|e| match e {
                DataError::NoContour { .. } | DataError::NotIncreasing { .. } => {
                    data(e).with_hint("check the coefficients' order and sign, `lowest_contour`, or set `theta_max`")
                }
                e => data(e),
            })?;
    let torsion = TorsionCurve::new(angles, moments, interpolation).map_err(data)?;
    let frames = JointFrames { fixed_z, fixed_x, moving_z, moving_x };
    Ok(Box::new(BallSocketResistance::new(fixed, moving, frames, ResistanceLaw::new(swing, torsion))))
}

/// The `ball-socket-resistance` element type.
pub const TYPE: ElementType = ElementType {
    name: "ball-socket-resistance",
    summary: "passive moment of a ball-and-socket joint between two orientations (Engin's sinus, \
              moment expansion and torsion table); modes: swing_p, swing_q, torsion (rad)",
    role: ElementRole::Joint,
    modes: &MODES,
    params: &[
        fixed_doc("orientation node (or body) of the fixed member, e.g. the thorax"),
        moving_doc("orientation node (or body) of the moving member, e.g. the humerus"),
        ParamDoc {
            name: "fixed_z",
            kind: ParamKind::Vector,
            required: true,
            doc: "pole of the joint sinus (z axis of the fixed member's joint frame, θ = 0), global frame of the initial configuration",
        },
        ParamDoc {
            name: "fixed_x",
            kind: ParamKind::Vector,
            required: true,
            doc: "azimuth φ = 0 (x axis of the fixed member's joint frame; its part perpendicular to fixed_z), global frame of the initial configuration",
        },
        ParamDoc {
            name: "moving_z",
            kind: ParamKind::Vector,
            required: true,
            doc: "long axis of the moving member, pointing away from the joint (z axis of its joint frame), global frame of the initial configuration",
        },
        ParamDoc {
            name: "moving_x",
            kind: ParamKind::Vector,
            required: true,
            doc: "x axis of the moving member's joint frame (its part perpendicular to moving_z): torsion ψ = 0 where it meets the fixed x axis carried along by the swing; global frame of the initial configuration",
        },
        ParamDoc {
            name: "sinus",
            kind: ParamKind::Numbers,
            required: true,
            doc: "the ten coefficients C1..C10 of the joint sinus θ_b(φ) = Σ cos^(n−1)φ (C(2n−1) + C(2n) sin φ) (report eq. 3.1), in the file's angle unit",
        },
        ParamDoc {
            name: "moment",
            kind: ParamKind::Numbers,
            required: true,
            doc: "the ten coefficients C1..C10 of the resistive moment f(φ, θ) (report eq. 3.2), N m per rad^k for θ in rad whatever the file's angle unit",
        },
        ParamDoc {
            name: "lowest_contour",
            kind: ParamKind::Number,
            required: true,
            doc: "moment of the lowest measured contour, N m (6 for Engin's shoulder data): f is used from there outward, a C1 ramp from zero at the sinus leads up to it",
        },
        ParamDoc {
            name: "torsion_angles",
            kind: ParamKind::Numbers,
            required: true,
            doc: "torsion angles ψ of the torsion table, strictly increasing, in the file's angle unit",
        },
        ParamDoc {
            name: "torsion_moments",
            kind: ParamKind::Numbers,
            required: true,
            doc: "torsion moments on the moving member about its long axis at torsion_angles, N m, non-increasing",
        },
        ParamDoc {
            name: "torsion_interpolation",
            kind: ParamKind::Choice(&["monotone-cubic", "linear"]),
            required: false,
            doc: "interpolation of the torsion table: monotone-cubic (C1, default) or linear (as the report's program); tangent-line extrapolation outside",
        },
        ParamDoc {
            name: "min_ramp_width",
            kind: ParamKind::Angle,
            required: false,
            doc: "smallest angular width w of the ramp from the sinus to the lowest contour, used where the contour lies less than 5w/4 outside the sinus or inside it; default 0.05 rad",
        },
        ParamDoc {
            name: "theta_max",
            kind: ParamKind::Angle,
            required: false,
            doc: "polar angle beyond which f is continued by its tangent line instead of its own polynomial; default π (the polynomial everywhere, as Engin recommends)",
        },
    ],
    build,
};

/// Register the `ball-socket-resistance` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}
