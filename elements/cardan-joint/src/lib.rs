//! CARDAN-JOINT: the cardan joint model of MADYMO 4.3 as the graduation report *Human Joint
//! Modelling* (Delft, c. 1991, §2.1.2) describes it. Theory:
//! `docs/theory/joint-models.md`.
//!
//! The element joins two orientation nodes, element i (the fixed member) and element j (the
//! moving member), each with a joint coordinate system. The orientation of j's relative to i's is
//! given by three successive rotations, the Bryant or cardan angles: φ about `x_i`, θ about the
//! floating `y'`, ψ about `z''` (fixed in j), with `|θ| < π/2` against gimbal lock. The modes
//! `phi`, `theta`, `psi` (rad) are these angles less their values in the initial configuration.
//!
//! Its law ([`CardanLaw`], returned by `Element::law`, so it acts when the modes are free) is
//! the report's "combination of three pin joints": a user-defined resistive torque `M(φ)` about
//! the x axis, `M(θ)` about the y' axis, `M(ψ)` about the z'' axis, each a function of its own
//! angle (a table or a closed form, `mollier_joint_common::torque`), plus a damping torque of its
//! own rate. Only a rectangular free range can be modelled this way (report §4.1).
//!
//! The element constrains nothing by itself: the joint centre is made by the model.
//!
//! ```
//! use mollier_cardan_joint::CardanLaw;
//! use mollier_joint_common::TorqueFunction;
//!
//! // 20 N m/rad about x only, 0.5 N m s/rad damping about z''
//! let law = CardanLaw::new([Some(TorqueFunction::linear(20.0)), None, None], [None, None, Some(TorqueFunction::linear(0.5))]);
//! assert_eq!(law.torques_at(&[0.1, 0.3, 0.2], &[0.0, 0.0, 2.0]), [2.0, 0.0, 1.0]);
//! ```

pub mod element;
pub mod law;

use mollier_core::element::Element;
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_joint_common::torque::{ANGLE_FUNCTION, RATE_FUNCTION, TorqueFunction};
use mollier_joint_common::{FrameSpec, fixed_doc, members, moving_doc};

pub use element::{CardanJoint, MODES};
pub use law::CardanLaw;

const TORQUE_KEYS: [&str; 3] = ["torque_phi", "torque_theta", "torque_psi"];
const DAMPING_KEYS: [&str; 3] = ["damping_phi", "damping_theta", "damping_psi"];

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let (fixed, moving) = members(p)?;
    let spec = FrameSpec::read(p)?;
    let read = |key: &str, rate: bool| -> Result<Option<TorqueFunction>, ParamError> {
        if p.get(key).is_none() { Ok(None) } else { TorqueFunction::read(p, key, rate).map(Some) }
    };
    let torques = [read(TORQUE_KEYS[0], false)?, read(TORQUE_KEYS[1], false)?, read(TORQUE_KEYS[2], false)?];
    let damping = [read(DAMPING_KEYS[0], true)?, read(DAMPING_KEYS[1], true)?, read(DAMPING_KEYS[2], true)?];
    if torques.iter().chain(&damping).all(Option::is_none) {
        return Err(ParamError::new(p.path("torque_phi"), "the joint has no torque function").with_hint(
            "give at least one of torque_phi, torque_theta, torque_psi, damping_phi, damping_theta, damping_psi",
        ));
    }
    Ok(Box::new(CardanJoint::new(fixed, moving, spec, CardanLaw::new(torques, damping))))
}

const FRAME_PARAMS: [ParamDoc; 4] = [
    ParamDoc {
        name: "fixed_z",
        kind: ParamKind::Vector,
        required: true,
        doc: "z axis of element i's joint frame, global frame of the initial configuration",
    },
    ParamDoc {
        name: "fixed_x",
        kind: ParamKind::Vector,
        required: true,
        doc: "x axis of element i's joint frame (its part perpendicular to fixed_z): the axis of the first rotation φ; global frame of the initial configuration",
    },
    ParamDoc {
        name: "moving_z",
        kind: ParamKind::Vector,
        required: false,
        doc: "z axis of element j's joint frame, global frame of the initial configuration; default fixed_z (the frames coincide initially: all angles zero)",
    },
    ParamDoc {
        name: "moving_x",
        kind: ParamKind::Vector,
        required: false,
        doc: "x axis of element j's joint frame (its part perpendicular to moving_z); given with moving_z; default fixed_x",
    },
];

/// The `cardan-joint` element type.
pub const TYPE: ElementType = ElementType {
    name: "cardan-joint",
    summary: "MADYMO cardan joint between two orientations: Bryant angles φ (about x_i), θ (floating y'), ψ (about z'' of j), \
              |θ| < π/2, a resistive torque and a damping torque about each axis; modes: phi, theta, psi (rad)",
    role: ElementRole::Joint,
    modes: &MODES,
    params: &[
        fixed_doc("orientation node (or body) of element i, which carries the first rotation axis"),
        moving_doc("orientation node (or body) of element j, which carries the third rotation axis"),
        FRAME_PARAMS[0],
        FRAME_PARAMS[1],
        FRAME_PARAMS[2],
        FRAME_PARAMS[3],
        ParamDoc {
            name: "torque_phi",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: false,
            doc: "resistive torque M(φ) about x_i, N m, of the absolute angle φ; absent: zero",
        },
        ParamDoc {
            name: "torque_theta",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: false,
            doc: "resistive torque M(θ) about the floating y' axis, N m; absent: zero",
        },
        ParamDoc {
            name: "torque_psi",
            kind: ParamKind::Table(ANGLE_FUNCTION),
            required: false,
            doc: "resistive torque M(ψ) about z'' (element j's z axis), N m; absent: zero",
        },
        ParamDoc {
            name: "damping_phi",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping torque about x_i, N m, of the rate dφ/dt; absent: zero",
        },
        ParamDoc {
            name: "damping_theta",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping torque about y', N m, of the rate dθ/dt; absent: zero",
        },
        ParamDoc {
            name: "damping_psi",
            kind: ParamKind::Table(RATE_FUNCTION),
            required: false,
            doc: "damping torque about z'', N m, of the rate dψ/dt; absent: zero",
        },
    ],
    build,
};

/// Register the `cardan-joint` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}
