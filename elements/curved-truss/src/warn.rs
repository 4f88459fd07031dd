//! The warning a path gives where OpenSim's rule for an anchor inside a wrap object applies: the
//! stretch is straight (as OpenSim draws it), the frame solved, and the user told.

use mollier_core::geometry::{quat_at, vec3_at};

use crate::CurvedTruss;
use crate::rules::inside;

impl CurvedTruss {
    /// Each obstacle with `inside = "straight"` that holds a fixed point of the path (`p` = 0, the
    /// via points, `q`) of a stretch it may act on, at local coordinates `x`: one sentence per
    /// obstacle, or `None`.
    pub(crate) fn anchors_inside(&self, x: &[f64]) -> Option<String> {
        let mut said = Vec::new();
        for (k, pl) in self.obstacles.iter().enumerate() {
            if !pl.rules.straight_inside {
                continue;
            }
            let (lam, o) = (quat_at(x, pl.slots.orientation), vec3_at(x, pl.slots.origin));
            let first = pl.obstacle.segment;
            let last = pl.rules.last_segment.unwrap_or(first);
            let within: Vec<String> = (first..=last + 1)
                .filter(|&j| {
                    inside(&pl.obstacle.shape, &pl.obstacle.frame.local(&lam, &o, &vec3_at(x, self.points[j])))
                })
                .map(|j| j.to_string())
                .collect();
            if !within.is_empty() {
                said.push(format!(
                    "path point {} inside obstacle {k}: its stretch taken straight (OpenSim's rule)",
                    within.join(" and ")
                ));
            }
        }
        (!said.is_empty()).then(|| said.join("; "))
    }
}
