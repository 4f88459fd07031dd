//! Two models side by side (`mollier view --compare`): each its own scene, motion and results,
//! drawn in its half of the page with one camera; the slider steps through both motions on a
//! shared normalized time.

use crate::Geometry;

impl Geometry {
    /// Draw `other` in the right half of the page with the same camera: another model (two
    /// subjects, the shoulder against an imported arm), or the same model with other results
    /// (criterion d against b). Each half keeps its own motion, bones, muscles, forces and
    /// joint cone; the page's steps are [`Geometry::steps`]. A compared geometry's own
    /// `compare` is dropped (a page shows two halves).
    pub fn with_compare(mut self, other: Geometry) -> Self {
        self.compare = Some(Box::new(Geometry { compare: None, ..other }));
        self
    }

    /// The page's steps, its slider's positions, as the frame each half shows: `[k, 0]` for the
    /// frames of one geometry; for a pair, every frame of either motion on a shared normalized
    /// time (0 at a motion's first frame, 1 at its last; a single frame is at 0), each half
    /// showing its frame nearest in normalized time. Two motions with the same times give
    /// `[k, k]`: frame k beside frame k.
    pub fn steps(&self) -> Vec<[usize; 2]> {
        let Some(other) = &self.compare else {
            return (0..self.frames()).map(|k| [k, 0]).collect();
        };
        let (a, b) = (normalized(&self.times), normalized(&other.times));
        let mut all: Vec<f64> = a.iter().chain(&b).copied().collect();
        all.sort_by(f64::total_cmp);
        all.dedup_by(|x, y| (*x - *y).abs() < 1e-9);
        all.into_iter().map(|u| [nearest(&a, u), nearest(&b, u)]).collect()
    }

    /// How many pictures the page's slider steps through: its frames, or a pair's
    /// [`Geometry::steps`]. `--png --frame N` and `--video` count in these.
    pub fn shown(&self) -> usize {
        match self.compare {
            Some(_) => self.steps().len(),
            None => self.frames(),
        }
    }
}

/// Times (s, non-decreasing) as fractions of their span from the first; all 0 for a span of 0.
fn normalized(times: &[f64]) -> Vec<f64> {
    let (Some(&t0), Some(&t1)) = (times.first(), times.last()) else { return Vec::new() };
    let span = t1 - t0;
    times.iter().map(|t| if span > 0.0 { (t - t0) / span } else { 0.0 }).collect()
}

/// The index of the value of `u` (non-decreasing, not empty) nearest `x`, the earlier on a tie.
fn nearest(u: &[f64], x: f64) -> usize {
    let i = u.partition_point(|v| *v < x).min(u.len() - 1);
    if i > 0 && (x - u[i - 1]) <= (u[i] - x) { i - 1 } else { i }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_in_normalized_time() {
        assert_eq!(normalized(&[2.0, 3.0, 6.0]), vec![0.0, 0.25, 1.0]);
        assert_eq!(normalized(&[5.0]), vec![0.0]);
        let u = [0.0, 0.25, 1.0];
        assert_eq!([0.0, 0.1, 0.125, 0.2, 0.7, 1.0, 2.0].map(|x| nearest(&u, x)), [0, 0, 0, 1, 2, 2, 2]);
    }
}
