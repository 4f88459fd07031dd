//! The steps of one evaluation, the linearly implicit Euler step's and BDF2's
//! ([`super::Method`]): the activations integrated apart by sub-steps (`ȧ` depends on `a` and `u`
//! alone), their steps given to the solve, and the new state's rate the one evaluation of the
//! kernel.

use super::{Adaptive, Attempt, Tolerances, w_solve};
use crate::integrate::Excitation;
use crate::system::{Factored, Musculoskeletal, SimError, Workspace};

/// The largest change of an activation over a step of the Euler step or BDF2 (1). The step
/// linearizes each fibre's force-velocity relation at the start's activation, and the estimates,
/// filtered by `W⁻¹`, hardly see the stiff fibres' states: over a larger change a step of
/// excitation left fibres far from their equilibrium (the Euler step: at 0.1, trapezius scapular 1
/// at 1.17 `v_max`; at 0.07, serratus anterior 3 at 1.24 `v_max`; 0.03-0.06 none above `v_max`;
/// BDF2 at 0.1, serratus anterior 4 at 1.05 `v_max`; docs/forward-dynamics-measurements.md).
const LARGEST_ACTIVATION_CHANGE: f64 = 0.05;

/// The longest sub-step (s) of the activations integrated apart under tolerances `tol`. The
/// classical Runge-Kutta method on `ȧ = −L (a − u)` errs by `(h L)⁵ / 120` a sub-step, and the
/// decay forgets all but about `1 / (h L)` of them: `(h L)⁴ / 120` in all, held to a tenth of the
/// activations' absolute tolerance with `L` the fastest muscle's rate
/// ([`HillMuscle::fastest_activation_rate`](crate::hill::HillMuscle::fastest_activation_rate)).
/// The shoulder's 14.4 ms activation time: 3.5 ms at `atol` 3e-4, 1.5 ms at 1e-5.
pub(super) fn activation_substep(sys: &Musculoskeletal<'_>, tol: &Tolerances) -> f64 {
    let fastest = sys.muscles.iter().map(|mu| mu.hill.fastest_activation_rate()).fold(0.0, f64::max);
    let atol = tol.atol_activation.unwrap_or(tol.atol);
    (12.0 * atol).powf(0.25) / fastest
}

impl Adaptive {
    /// An attempt of the linearly implicit Euler step ([`super::Method::Euler`]): the
    /// activations integrated apart ([`Self::activations_over`]), their rows of the solve given
    /// the step they take; its one evaluation is the new state's rate (whole when due), which the
    /// error estimate reads. `k1` and `k2` of the attempt are empty (the dense output is linear).
    pub(super) fn attempt_euler(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        h: f64,
    ) -> Result<Attempt, SimError> {
        let (x, f0) = (self.state.x.clone(), self.state.xd.clone());
        self.one_evaluation(sys, ws, u, h, h, f0.clone(), Vec::new(), |this, w, xn, f1| {
            // h² ẍ / 2 by the rate's change over the step, filtered by W⁻¹ as ROS2(3)'s estimate;
            // the activations' own error is the sub-steps', not the step's
            let l = this.lin.layout;
            let mut err: Vec<f64> = (0..l.len()).map(|i| 0.5 * h * (f1[i] - f0[i])).collect();
            err[l.a()..].fill(0.0);
            let err = w_solve(w, h, &err)?;
            Ok(this.error_norm(h, &x, xn, &err))
        })
    }

    /// An attempt of a step of one evaluation over `h` (s): the activations' sub-steps (an
    /// attempt that changes one by more than [`LARGEST_ACTIVATION_CHANGE`] is rejected before the
    /// kernel is evaluated), the new state `x_n + hd W⁻¹ r` with `W` factored at `hd` (s) and `r`
    /// (len) but for its activation rows, which are given the sub-steps' change, and the new
    /// state's rate and linearization (whole when due). `estimate(self, W, x_{n+1}, F(x_{n+1}))`
    /// gives the error's norm and the state it is largest for; `k1` is the attempt's.
    #[allow(clippy::too_many_arguments)]
    fn one_evaluation(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        h: f64,
        hd: f64,
        mut r: Vec<f64>,
        k1: Vec<f64>,
        estimate: impl FnOnce(&Self, &Factored<'_>, &[f64], &[f64]) -> Result<(f64, usize), SimError>,
    ) -> Result<Attempt, SimError> {
        let l = self.lin.layout;
        let a1 = self.activations_over(sys, u, h);
        let (change, changed) = self.activations_change(&a1);
        if change > 1.0 {
            self.worst = Some(l.a() + changed);
            return Ok((change, Vec::new(), None, Vec::new(), Vec::new()));
        }
        let w = self.lin.factor(hd)?;
        self.give_activation_steps(&mut r, &a1, hd);
        let k = w_solve(&w, hd, &r)?;
        let x = &self.state.x;
        debug_assert!(
            a1.iter().enumerate().all(|(j, a)| (x[l.a() + j] + hd * k[l.a() + j] - a).abs() <= 1e-12),
            "the solve's activation steps are not the sub-steps'"
        );
        let mut xn: Vec<f64> = (0..l.len()).map(|i| x[i] + hd * k[i]).collect();
        xn[l.a()..].copy_from_slice(&a1);
        if let Some(i) = xn.iter().position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(sys.state_name(i)));
        }
        self.stats.evaluations += 1;
        self.stats.jacobians += usize::from(self.whole_jacobian_due());
        // the rate's guess: the step's mean rate
        let scale = hd / h;
        let guess: Vec<f64> = k.iter().map(|k| k * scale).collect();
        let (f1, lin1) = self.rate_at_end(sys, ws, u, &xn, self.state.t + h, &guess)?;
        let (norm, worst) = estimate(self, &w, &xn, &f1)?;
        let (norm, worst) = if change > norm { (change, l.a() + changed) } else { (norm, worst) };
        self.worst = Some(worst);
        Ok((norm, xn, Some((f1, lin1)), k1, Vec::new()))
    }

    /// The largest change of an activation from the current state to `a1` (m) relative to
    /// [`LARGEST_ACTIVATION_CHANGE`], squared (a norm of the estimate's order: the change is about
    /// proportional to the step), and its muscle. Above 1 the attempt is rejected before the kernel
    /// is evaluated.
    fn activations_change(&self, a1: &[f64]) -> (f64, usize) {
        let l = self.lin.layout;
        a1.iter()
            .zip(&self.state.x[l.a()..])
            .map(|(a, b)| ((a - b).abs() / LARGEST_ACTIVATION_CHANGE).powi(2))
            .enumerate()
            .fold((0.0f64, 0), |(m, k), (i, v)| if v > m { (v, i) } else { (m, k) })
    }

    /// Set the activation rows of `r` (len), the right side of `W⁻¹ r` with `W` factored at `hd`
    /// (s), so that the solve's step `hd W⁻¹ r` takes each activation to `a1` (m). The rows are
    /// diagonal, `(∂f_a/∂a + 1/hd) Δa = r_a / hd`, and the solve carries the activations' steps
    /// into the fibres and the motion.
    fn give_activation_steps(&self, r: &mut [f64], a1: &[f64], hd: f64) {
        let l = self.lin.layout;
        for (k, a) in a1.iter().enumerate() {
            r[l.a() + k] = (1.0 + hd * self.lin.activation[k].0) * (a - self.state.x[l.a() + k]) / hd;
        }
    }

    /// An attempt of the linearly implicit BDF2 ([`super::Method::Bdf2`]); the Euler step's
    /// where there is no last step. `k1` of the attempt is `F(x_n)` (the dense output is Hermite's).
    pub(super) fn attempt_bdf2(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        h: f64,
    ) -> Result<Attempt, SimError> {
        let Some(last) = &self.last else {
            // F(x_n) for the Hermite dense output
            let f0 = self.state.xd.clone();
            return self.attempt_euler(sys, ws, u, h).map(|(norm, xn, end, _, k2)| (norm, xn, end, f0, k2));
        };
        let (x, f0) = (self.state.x.clone(), self.state.xd.clone());
        let omega = h / last.h;
        let beta = h * (1.0 + omega) / (1.0 + 2.0 * omega);
        let c = omega / (1.0 + omega);
        let secant: Vec<f64> = x.iter().zip(&last.x0).map(|(x, x0)| (x - x0) / last.h).collect();
        let r = f0.iter().zip(&secant).map(|(f, d)| f + c * d).collect();
        self.one_evaluation(sys, ws, u, h, beta, r, f0.clone(), |this, w, xn, f1| {
            let l = this.lin.layout;
            // the predictor x_n + h F(x_n) + ω h (F(x_n) − secant) is off by (1+ω)/(6ω) h³ x⃛,
            // the formula by (1+ω)²/(6ω(1+2ω)) h³ x⃛: the local error is (1+ω)/(2+3ω) of their
            // distance
            let e = (1.0 + omega) / (2.0 + 3.0 * omega);
            let mut err: Vec<f64> =
                (0..l.len()).map(|i| e * (xn[i] - (x[i] + h * f0[i] + omega * h * (f0[i] - secant[i])))).collect();
            err[l.a()..].fill(0.0);
            let err = w_solve(w, beta, &err)?;
            // the formula's residual at the new state, W⁻¹ (x_{n+1} − x_n − β (F(x_{n+1}) +
            // ω/(1+ω) secant)): the step a Newton iteration would still take, which the
            // linearization left (a fibre racing to take up its tendon's slack, the predictor
            // racing with it)
            let mut rho: Vec<f64> = (0..l.len()).map(|i| xn[i] - x[i] - beta * (f1[i] + c * secant[i])).collect();
            rho[l.a()..].fill(0.0);
            let rho = w_solve(w, beta, &rho)?;
            let (norm, worst) = this.error_norm(h, &x, xn, &err);
            let (newton, off) = this.error_norm(h, &x, xn, &rho);
            Ok(if newton > norm { (newton, off) } else { (norm, worst) })
        })
    }

    /// The activations (m) at the end of a step of `h` (s) from the current state: each
    /// muscle's `ȧ = g(a, u(t))` by the classical Runge-Kutta method on sub-steps of at most
    /// [`activation_substep`]'s ending on the breaks inside the step (where `u` kinks).
    fn activations_over(&self, sys: &Musculoskeletal<'_>, u: Excitation<'_>, h: f64) -> Vec<f64> {
        let l = self.lin.layout;
        let (t0, t1) = (self.state.t, self.state.t + h);
        let mut a = self.state.x[l.a()..].to_vec();
        let mut ends: Vec<f64> = self.breaks.iter().copied().filter(|b| *b > t0 && *b < t1).collect();
        ends.push(t1);
        let (mut t, mut um, mut ue) = (t0, vec![0.0; l.m], vec![0.0; l.m]);
        let mut us = vec![0.0; l.m];
        u(t, &mut us);
        let g = |k: usize, a: f64, u: f64| sys.muscles[k].hill.activation_rate(a, u);
        for end in ends {
            let n = ((end - t) / self.activation_substep).ceil().max(1.0);
            let hs = (end - t) / n;
            for i in 0..n as usize {
                let ts = t + i as f64 * hs;
                if i > 0 {
                    // the last sub-step's end
                    std::mem::swap(&mut us, &mut ue);
                }
                u(ts + 0.5 * hs, &mut um);
                u(ts + hs, &mut ue);
                for k in 0..l.m {
                    let k1 = g(k, a[k], us[k]);
                    let k2 = g(k, a[k] + 0.5 * hs * k1, um[k]);
                    let k3 = g(k, a[k] + 0.5 * hs * k2, um[k]);
                    let k4 = g(k, a[k] + hs * k3, ue[k]);
                    a[k] += hs / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4);
                }
            }
            t = end;
            u(t, &mut us);
        }
        a
    }
}
