//! A start read from a trajectory (a `simulate` or `optimize` output, a replayed forward
//! motion): its states, rates and excitations interpolated to the grid. On the grid of the
//! `optimize` run that wrote it (the same times), the start is that run's iterate.

use crate::Transcription;

/// A trajectory to start from, its columns in the state's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Trajectory {
    /// Times (s), increasing; the values are held beyond the ends.
    pub time: Vec<f64>,
    /// Per state (`x`'s order): its values at `time` (SI units), or `None` where the trajectory
    /// does not have it (then as [`crate::Guess::Linear`]).
    pub states: Vec<Option<Vec<f64>>>,
    /// Per state: its rate at `time` (SI units per second), or `None` (then the centred
    /// difference of the state over the grid).
    pub rates: Vec<Option<Vec<f64>>>,
    /// Per muscle: its excitations at `time`, or `None` (the guess's excitation, 0.05).
    pub excitations: Vec<Option<Vec<f64>>>,
}

/// `v(t)` of samples `v` at increasing `time`, linear between them, held beyond the ends.
fn sample(time: &[f64], v: &[f64], t: f64) -> f64 {
    let k = time.partition_point(|&s| s <= t);
    if k == 0 {
        v[0]
    } else if k >= time.len() {
        v[time.len() - 1]
    } else {
        let w = (t - time[k - 1]) / (time[k] - time[k - 1]);
        v[k - 1] + w * (v[k] - v[k - 1])
    }
}

impl Transcription<'_, '_, '_> {
    /// Put `tr` on the grid of `z` (a linear guess): the states and excitations it has, sampled
    /// at the points (excitations within their bounds), then every rate the trajectory's where it
    /// has it, else the centred difference of its state over the grid. An empty `tr.rates` has
    /// none.
    pub(crate) fn follow_trajectory(&self, tr: &Trajectory, z: &mut [f64]) -> Result<(), String> {
        let (nx, m, nz) = (self.nx(), self.layout.m, self.nz);
        let good = |c: &Option<Vec<f64>>| c.as_ref().is_none_or(|v| v.len() == tr.time.len());
        if tr.time.is_empty()
            || tr.states.len() != nx
            || !(tr.rates.is_empty() || tr.rates.len() == nx)
            || tr.excitations.len() != m
            || !tr.states.iter().chain(&tr.rates).chain(&tr.excitations).all(good)
        {
            return Err(format!(
                "the trajectory needs a row or more and {nx} state, {nx} rate (or none) and {m} excitation columns of its rows' length"
            ));
        }
        let [lo, hi] = self.p.excitation_bounds;
        for i in 0..self.points {
            let t = self.time(i);
            let zi = &mut z[i * nz..(i + 1) * nz];
            for (j, c) in tr.states.iter().enumerate() {
                if let Some(v) = c {
                    zi[j] = sample(&tr.time, v, t);
                }
            }
            for (k, c) in tr.excitations.iter().enumerate() {
                if let Some(v) = c {
                    zi[2 * nx + k] = sample(&tr.time, v, t).clamp(lo, hi);
                }
            }
        }
        self.grid_slopes(z);
        for i in 0..self.points {
            let t = self.time(i);
            for (j, c) in tr.rates.iter().enumerate() {
                if let Some(v) = c {
                    z[i * nz + nx + j] = sample(&tr.time, v, t);
                }
            }
        }
        Ok(())
    }

    /// Every rate of `z` the centred difference of its state over the grid (one-sided at the
    /// ends).
    pub(crate) fn grid_slopes(&self, z: &mut [f64]) {
        let (nx, nz) = (self.nx(), self.nz);
        let last = self.points - 1;
        let dt = self.p.duration / last as f64;
        for i in 0..self.points {
            let (a, b) = (i.saturating_sub(1), (i + 1).min(last));
            for j in 0..nx {
                z[i * nz + nx + j] = (z[b * nz + j] - z[a * nz + j]) / ((b - a) as f64 * dt);
            }
        }
    }
}
