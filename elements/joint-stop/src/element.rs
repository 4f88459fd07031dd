//! The element: the direction of the unit vector `r` fixed in segment j relative to the three unit
//! vectors `(a1, a2, a3)` fixed in segment i (report §2.2.2, Fig. 2.10), by its swing coordinates
//! ```text
//! p = θ cos φ,  q = θ sin φ,     cos θ = r · a3,  tan φ = (r · a2)/(r · a1)
//! ```
//! (the report's "two independent coordinates u1, u2, functions of θ and φ"; these are smooth
//! through `θ = 0`, see `mollier_joint_common::swing`), less their values in the initial
//! configuration. The stop depends on the direction of `r` only: twisting segment j about `r`
//! changes nothing.

use mollier_core::element::{
    Deformations, Drawing, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind,
};
use mollier_core::geometry::{Vec3, perpendicular};
use mollier_core::scalar::{Real, c};
use mollier_core::{Law, NodeId};
use mollier_joint_common::swing::{swing, swing_generic};
use mollier_joint_common::{FrameSpec, JointFrames, check_len};

use crate::law::{StopLaw, StopTorque};

/// Names of the two modes, in order (rad).
pub const MODES: [&str; 2] = ["swing_p", "swing_q"];

/// Where the stop's vectors lie, in the global frame of the initial configuration (unitless).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopFrame {
    /// `a3`: the pole of the contour (`θ = 0`), fixed in segment i.
    pub pole: Vec3,
    /// `a1`: the azimuth `φ = 0` (its part perpendicular to `pole`), fixed in segment i.
    pub azimuth: Vec3,
    /// `r`, fixed in segment j.
    pub r: Vec3,
}

/// The Calspan joint stop between two orientation nodes.
#[derive(Clone, Debug)]
pub struct JointStop {
    layout: Layout,
    frame: StopFrame,
    frames: JointFrames,
    law: StopLaw,
}

impl JointStop {
    /// The stop between segment i's orientation node `fixed` and segment j's `moving`.
    pub fn new(fixed: NodeId, moving: NodeId, frame: StopFrame, law: StopLaw) -> Self {
        Self {
            layout: Layout::new(
                vec![(fixed, NodeKind::Orientation), (moving, NodeKind::Orientation)],
                vec![ModeInfo::angle(MODES[0]), ModeInfo::angle(MODES[1])],
            ),
            frame,
            frames: JointFrames::default(),
            law,
        }
    }

    /// The element's law (with its reference once initialized).
    pub fn stop_law(&self) -> &StopLaw {
        &self.law
    }

    /// `(p, q)` (rad) of `r` at local coordinates `x` (8).
    pub fn swing(&self, x: &[f64]) -> Result<[f64; 2], ElementError> {
        let r = self.frames.relative(x)?;
        let (p, q) = swing_generic([r[0][2], r[1][2], r[2][2]])?;
        Ok([p, q])
    }

    /// The stop torque at local coordinates `x` (8, unit Euler parameters) and mode rates
    /// `rates` (2, rad/s), with the torque on segment j also in global components (N m).
    pub fn torque(&self, x: &[f64], rates: &[f64; 2]) -> Result<(StopTorque, Vec3), ElementError> {
        let [p, q] = self.swing(x)?;
        let t = self.law.torque_at(p, q, rates);
        let axes = self.frames.fixed_axes(x)?;
        Ok((t, std::array::from_fn(|k| (0..3).map(|i| t.torque[i] * axes[i][k]).sum())))
    }
}

impl ElementInfo for JointStop {
    fn type_name(&self) -> &str {
        crate::TYPE.name
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The contour's pole and `r` (unit segments about the origin, placed by the viewer).
    fn drawing(&self, x: &[f64]) -> Drawing {
        self.frames.z_axes_drawing(x)
    }

    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let f = &self.frame;
        // only r's direction matters: any x axis for segment j's frame
        let spec = FrameSpec { fixed_z: f.pole, fixed_x: f.azimuth, moving_z: f.r, moving_x: perpendicular(&f.r) };
        self.frames = JointFrames::new(&spec, x0)?;
        let pq = self
            .swing(x0)
            .map_err(|e| ElementError::Degenerate(format!("the initial configuration has no direction: {e}")))?;
        self.law.set_reference(pq);
        Ok(())
    }
}

impl Element for JointStop {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        check_len(x.len())?;
        let o = out.order();
        let u = [0, 1, 2].map(|a| self.frames.entry(x, a, 2, o));
        let reference = self.law.reference();
        for (k, mut t) in swing([&u[0], &u[1], &u[2]], o)?.into_iter().enumerate() {
            t.v -= reference[k];
            t.store(out, k);
        }
        Ok(())
    }

    fn law(&self) -> Option<&dyn Law> {
        Some(&self.law)
    }
}

impl Deformations for JointStop {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        if e.len() < 2 {
            return Err(ElementError::Other("expected room for 2 modes".into()));
        }
        let r = self.frames.relative(x)?;
        let (p, q) = swing_generic([r[0][2], r[1][2], r[2][2]])?;
        let reference = self.law.reference();
        e[0] = p - c::<T>(reference[0]);
        e[1] = q - c::<T>(reference[1]);
        Ok(())
    }
}
