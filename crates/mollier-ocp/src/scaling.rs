//! A physically based scaling of the transcription for IPOPT's user scaling
//! ([`mollier_ipopt::Scaling`]): each variable by its typical size, each constraint row by the
//! largest of its terms' typical sizes.
//!
//! Typical sizes, with `T` the duration: a coordinate 1 (rad or m), its rate `1/T`, its
//! acceleration `1/T²`; a contraction state the tendon's stretch at `F_max`,
//! `ε₀ L_slack,SEE` (m; the optimal fibre length `L_CEopt` where that is shorter), its rate that
//! over `T`; an activation 1, its rate `1/T`; excitations and controls 1. The tendon's stretch,
//! not the fibre's length: a step of a few millimetres in `s` carries a slack tendon past its
//! slack length, where its force rises as the square of the stretch, and the next Newton steps
//! only halve the overshoot (on the shoulder, a fifth of IPOPT's iterations threw the contraction
//! rows' residual up to 10²-10³ N, each time taken down by a quarter per iteration). A dynamics row's
//! typical size is the largest `|∂f_i/∂z_j| · size_j` over its variables and the grid points of
//! the start: the equations of motion then scale by the inertia times the typical acceleration
//! or the muscles' moments (N m), a contraction row by about `F_max` (its partial by the
//! activation), an activation row by its largest rate (about `1/T_act`). A defect scales as its
//! state. Without it the rows of the shoulder ranged from 1/s to thousands of N and the rates of
//! inactive muscles' contraction states, which their rows hardly feel, dominated IPOPT's steps.

use mollier_ipopt::{Nlp, Scaling};
use mollier_sim::SimError;

use crate::{Scheme, Transcription};

/// How IPOPT scales the problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalingChoice {
    /// The physically based scaling of this module (IPOPT's `user-scaling`).
    Physical,
    /// IPOPT's own gradient-based row scaling (its default; variables unscaled).
    Ipopt,
}

impl ScalingChoice {
    /// The default: [`ScalingChoice::Physical`] for a system with muscles (`muscles` > 0), whose
    /// rows span 1/s to kN; else [`ScalingChoice::Ipopt`] (the pendulum's swing-up, with one
    /// actuator, stops 1.7e-4 above Moco's optimum with the physical scaling, with IPOPT's at it).
    pub fn by_muscles(muscles: usize) -> Self {
        if muscles > 0 { Self::Physical } else { Self::Ipopt }
    }
}

impl Transcription<'_, '_, '_> {
    /// The typical size of each of one point's variables `z_i` (see the module's text).
    pub fn variable_sizes(&self) -> Vec<f64> {
        let l = self.layout;
        let t = self.p.duration;
        let mut x = vec![1.0; l.len()];
        x[l.n..2 * l.n].fill(1.0 / t);
        for (k, mu) in self.p.system.muscles.iter().enumerate() {
            let h = &mu.hill.params;
            x[l.s() + k] = (h.see_strain * h.tendon_slack_length).min(h.optimal_fibre_length);
        }
        // the rates: each state's size over the duration
        let mut z = x.clone();
        z.extend(x.iter().map(|v| v / t));
        z.resize(self.nz, 1.0);
        z
    }

    /// The physically based scaling at `z` (the start): factors, the reciprocals of the sizes.
    pub fn physical_scaling(&mut self, z: &[f64]) -> Result<Scaling, SimError> {
        let sizes = self.variable_sizes();
        let nx = self.nx();
        let mut rows = vec![0.0f64; nx];
        let mut values = vec![0.0; self.jacobian_structure().len()];
        self.linearize(z)?;
        if !self.jacobian(z, &mut values) {
            return Err(SimError::NonFinite("the Jacobian at the start".into()));
        }
        // the dynamics blocks come first in the Jacobian's values, point by point
        for (k, v) in values[..self.pattern.len() * self.points].iter().enumerate() {
            let (r, c) = self.pattern[k % self.pattern.len()];
            rows[r] = rows[r].max(v.abs() * sizes[c]);
        }
        let mut g = Vec::with_capacity(self.m());
        for _ in 0..self.points {
            // a row no variable moves (none at the start) keeps the factor 1
            g.extend(rows.iter().map(|&s| if s > 0.0 && s.is_finite() { 1.0 / s } else { 1.0 }));
        }
        for _ in 0..self.p.intervals {
            let per_state = sizes[..nx].iter().map(|s| 1.0 / s);
            match self.p.scheme {
                Scheme::Trapezoidal => g.extend(per_state),
                Scheme::HermiteSimpson => {
                    g.extend(per_state.clone().chain(per_state));
                    g.extend(sizes[2 * nx..].iter().map(|s| 1.0 / s));
                }
            }
        }
        let mut x: Vec<f64> = (0..self.points).flat_map(|_| sizes.iter().map(|s| 1.0 / s)).collect();
        if self.free_time() {
            x.push(1.0 / self.p.duration);
        }
        // the cone's rows are of order 1 at forces of their scale already
        g.resize(self.m(), 1.0);
        Ok(Scaling { objective: 1.0, x, g })
    }
}
