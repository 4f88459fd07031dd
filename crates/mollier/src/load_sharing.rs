//! Load sharing over a motion: the frames of a motion for [`LoadSharing::run`], with the
//! section's compiled setup ([`LoadSharingSetup`], from the compile step).

pub use crate::compile::load_sharing::{ConeInfo, LoadSharingSetup, MuscleInfo, ReserveInfo, SignInfo};

use mollier_optim::Frame;
#[cfg(doc)]
use mollier_optim::LoadSharing;

use crate::motion::{Motion, MotionDerivatives};

/// Frame `k` of a motion for load sharing: with its derivatives, or at rest (quasi-static: a
/// static posture) without.
pub fn frame(motion: &Motion, derivatives: Option<&MotionDerivatives>, k: usize) -> Frame {
    match derivatives {
        Some(d) => Frame {
            time: motion.times[k],
            q: d.q[k].to_vec(),
            qd: d.qd[k].to_vec(),
            qdd: d.qdd[k].to_vec(),
            loads: Vec::new(),
        },
        None => Frame::at_rest(motion.times[k], motion.q[k].to_vec()),
    }
}

/// Every frame of a motion for load sharing ([`frame`]).
pub fn frames(motion: &Motion, derivatives: Option<&MotionDerivatives>) -> Vec<Frame> {
    (0..motion.times.len()).map(|k| frame(motion, derivatives, k)).collect()
}
