//! The steps of one evaluation, the linearly implicit Euler step's and BDF2's
//! ([`super::Method`]): the activations integrated apart by sub-steps (`ȧ` depends on `a` and `u`
//! alone), their steps given to the solve, and the new state's rate the one evaluation of the
//! kernel; and the update of the Jacobian's kept blocks along their steps ([`secant_update`]).

use faer::Mat;

use super::{Adaptive, Attempt, Tolerances, w_solve};
use crate::integrate::Excitation;
use crate::system::{Factored, Linearization, Musculoskeletal, SimError, Workspace};

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
/// The shoulder's fastest activation time, 6.1 ms: 1.5 ms at `atol` 3e-4, 1.6 ms at 4e-4, 0.64 ms
/// at 1e-5.
pub(super) fn activation_substep(sys: &Musculoskeletal<'_>, tol: &Tolerances) -> f64 {
    let fastest = sys.muscles.iter().map(|mu| mu.hill.fastest_activation_rate()).fold(0.0, f64::max);
    let atol = tol.atol_activation.unwrap_or(tol.atol);
    (12.0 * atol).powf(0.25) / fastest
}

/// The largest change of the kept `∂f_v/∂q` by one step's update, relative to its Frobenius norm.
/// On the flexion (BDF2, rtol 3e-2) the updates' median is 1.2e-3 of it and nine in ten are below
/// 9e-3; the few up to 0.56 come with steps of 0.2-0.4 mrad, where the prediction's error is the
/// fibres' and activations' second order, not the Jacobian's.
const LARGEST_SECANT_CHANGE: f64 = 0.1;

/// An accepted step: the states (len each) and their consistent rates at its ends.
pub(super) struct Secant<'a> {
    pub x0: &'a [f64],
    pub x1: &'a [f64],
    pub xd0: &'a [f64],
    pub xd1: &'a [f64],
}

/// Broyden's update of the kept `∂f_v/∂q` (`fv_q`, n x n, without the muscles' tangent
/// stiffness) along an accepted step whose end's linearization is `lin` (with the kept `fv_v`).
/// `f_v` is 0 at both consistent ends, so the linearization's prediction of its change is its
/// error along the step:
/// ```text
/// r = (fv_q + Σ ∂F_m/∂L_m g gᵀ) Δq + (fv_v + Σ ∂F_m/∂L̇_m g gᵀ) Δv + M̄ Δv̇ + Σ g (∂F_m/∂s Δs + ∂F_m/∂a Δa)
/// ```
/// and `fv_q −= r Δqᵀ / |Δq|²` makes it exact along `Δq`, the change held to
/// [`LARGEST_SECANT_CHANGE`]. The kernel's blocks (the inertia of `v̇`, the geometric stiffness of
/// the muscles' forces) move with the forces faster than the whole Jacobian is formed: BDF2's
/// angle error on the flexion (rtol 3e-2) with the whole Jacobian every 16 steps is 0.257°
/// without the update and 0.067° with it (every 4 steps 0.037° and 0.042°).
pub(super) fn secant_update(fv_q: &mut Mat<f64>, fv_v: &Mat<f64>, lin: &Linearization, step: &Secant<'_>) {
    let l = lin.layout;
    let n = l.n;
    let d = |x: &[f64], y: &[f64], i: usize| y[i] - x[i];
    let dq: Vec<f64> = (0..n).map(|i| d(step.x0, step.x1, i)).collect();
    let dv: Vec<f64> = (0..n).map(|i| d(step.x0, step.x1, n + i)).collect();
    let dvd: Vec<f64> = (0..n).map(|i| d(step.xd0, step.xd1, n + i)).collect();
    let norm2: f64 = dq.iter().map(|v| v * v).sum();
    let fro = (0..n).flat_map(|j| fv_q.col_as_slice(j).iter()).map(|v| v * v).sum::<f64>().sqrt();
    if !(norm2 > 0.0 && fro > 0.0) {
        return;
    }
    let mut r: Vec<f64> = (0..n)
        .map(|i| (0..n).map(|j| fv_q[(i, j)] * dq[j] + fv_v[(i, j)] * dv[j] + lin.mass[(i, j)] * dvd[j]).sum())
        .collect();
    for (k, c) in lin.contraction.iter().enumerate() {
        let g = lin.grad(k);
        let along = |w: &[f64]| g.iter().zip(w).map(|(g, w)| g * w).sum::<f64>();
        let w = c.force_d_length * along(&dq)
            + c.force_d_rate * along(&dv)
            + c.force_d_s * d(step.x0, step.x1, l.s() + k)
            + c.force_d_a * d(step.x0, step.x1, l.a() + k);
        for (ri, gi) in r.iter_mut().zip(g) {
            *ri += w * gi;
        }
    }
    // |r Δqᵀ| / |Δq|² = |r| / |Δq|
    let change = r.iter().map(|v| v * v).sum::<f64>().sqrt() / norm2.sqrt();
    if !change.is_finite() {
        return;
    }
    let scale = (LARGEST_SECANT_CHANGE * fro / change).min(1.0) / norm2;
    for (j, dqj) in dq.iter().enumerate() {
        for (f, ri) in fv_q.col_as_slice_mut(j).iter_mut().zip(&r) {
            *f -= scale * ri * dqj;
        }
    }
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
        // the estimate reads the start from `this`, which the attempt leaves where it was
        self.one_evaluation(sys, ws, u, h, h, self.state.xd.clone(), Vec::new(), |this, w, xn, f1| {
            // h² ẍ / 2 by the rate's change over the step, filtered by W⁻¹ as ROS2(3)'s estimate;
            // the activations' own error is the sub-steps', not the step's
            let (l, f0) = (this.lin.layout, &this.state.xd);
            let mut err: Vec<f64> = (0..l.len()).map(|i| 0.5 * h * (f1[i] - f0[i])).collect();
            err[l.a()..].fill(0.0);
            let err = w_solve(w, h, &err)?;
            Ok(this.error_norm(h, &this.state.x, xn, &err))
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
        let (x, f0) = (&self.state.x, &self.state.xd);
        let omega = h / last.h;
        let beta = h * (1.0 + omega) / (1.0 + 2.0 * omega);
        let c = omega / (1.0 + omega);
        let secant: Vec<f64> = x.iter().zip(&last.x0).map(|(x, x0)| (x - x0) / last.h).collect();
        let r = f0.iter().zip(&secant).map(|(f, d)| f + c * d).collect();
        // the estimate reads the start from `this`, which the attempt leaves where it was
        self.one_evaluation(sys, ws, u, h, beta, r, f0.clone(), |this, w, xn, f1| {
            let (l, x, f0) = (this.lin.layout, &this.state.x, &this.state.xd);
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
            let (norm, worst) = this.error_norm(h, x, xn, &err);
            let (newton, off) = this.error_norm(h, x, xn, &rho);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hill::Contraction;
    use crate::system::Layout;

    /// Two coordinates and one muscle; the states `[q; v; s; a]` and rates of a step.
    fn setup() -> (Linearization, Mat<f64>, Mat<f64>, [Vec<f64>; 4]) {
        let layout = Layout { n: 2, m: 1 };
        let c = Contraction {
            force_d_length: 300.0,
            force_d_s: -250.0,
            force_d_rate: 4.0,
            force_d_a: 7.0,
            ..Default::default()
        };
        let lin = Linearization {
            layout,
            f: vec![0.0; 6],
            mass: Mat::from_fn(2, 2, |i, j| [[2.0, 0.3], [0.3, 1.0]][i][j]),
            fv_q: Mat::new(),
            fv_v: Mat::new(),
            grad: vec![0.04, -0.02],
            length: vec![0.3],
            contraction: vec![c],
            activation: vec![(0.0, 0.0)],
            velocity_accelerations: Vec::new(),
        };
        let fv_q = Mat::from_fn(2, 2, |i, j| [[40.0, -3.0], [5.0, 12.0]][i][j]);
        let fv_v = Mat::from_fn(2, 2, |i, j| [[0.5, 0.1], [0.0, 0.2]][i][j]);
        let x0 = vec![0.1, 0.2, 1.0, -0.5, 0.09, 0.3];
        let x1 = vec![0.103, 0.198, 1.2, -0.45, 0.0901, 0.32];
        let xd0 = vec![1.0, -0.5, 30.0, 12.0, 0.01, 2.0];
        let xd1 = vec![1.2, -0.45, 28.0, 13.0, 0.02, 1.5];
        (lin, fv_q, fv_v, [x0, x1, xd0, xd1])
    }

    /// The prediction of `f_v`'s change along the step, written out for two coordinates.
    fn prediction(
        lin: &Linearization,
        fv_q: &Mat<f64>,
        fv_v: &Mat<f64>,
        [x0, x1, xd0, xd1]: &[Vec<f64>; 4],
    ) -> [f64; 2] {
        let c = lin.contraction[0];
        let g = [lin.grad[0], lin.grad[1]];
        let (dq, dv, dvd) =
            ([x1[0] - x0[0], x1[1] - x0[1]], [x1[2] - x0[2], x1[3] - x0[3]], [xd1[2] - xd0[2], xd1[3] - xd0[3]]);
        let gq = g[0] * dq[0] + g[1] * dq[1];
        let gv = g[0] * dv[0] + g[1] * dv[1];
        let w =
            c.force_d_length * gq + c.force_d_rate * gv + c.force_d_s * (x1[4] - x0[4]) + c.force_d_a * (x1[5] - x0[5]);
        std::array::from_fn(|i| {
            (0..2).map(|j| fv_q[(i, j)] * dq[j] + fv_v[(i, j)] * dv[j] + lin.mass[(i, j)] * dvd[j]).sum::<f64>()
                + w * g[i]
        })
    }

    #[test]
    fn the_secant_update_makes_the_prediction_exact_along_the_step() {
        let (lin, mut fv_q, fv_v, mut states) = setup();
        // accelerations that take up 95 % of the rest's prediction: a mismatch within the cap
        let start: Vec<f64> = states[2][2..4].to_vec();
        states[3][2..4].copy_from_slice(&start);
        let rest = prediction(&lin, &fv_q, &fv_v, &states);
        let m = &lin.mass;
        let det = m[(0, 0)] * m[(1, 1)] - m[(0, 1)] * m[(1, 0)];
        let dvd = [
            -0.95 * (m[(1, 1)] * rest[0] - m[(0, 1)] * rest[1]) / det,
            -0.95 * (m[(0, 0)] * rest[1] - m[(1, 0)] * rest[0]) / det,
        ];
        states[3][2] += dvd[0];
        states[3][3] += dvd[1];
        let before = prediction(&lin, &fv_q, &fv_v, &states);
        let kept = fv_q.clone();
        let [x0, x1, xd0, xd1] = &states;
        secant_update(&mut fv_q, &fv_v, &lin, &Secant { x0, x1, xd0, xd1 });
        let after = prediction(&lin, &fv_q, &fv_v, &states);
        // a change of the block well within the cap (|r|/|Δq| against the block's 42.4)
        let fro = |m: &Mat<f64>| {
            (0..2).flat_map(|j| (0..2).map(move |i| (i, j))).map(|(i, j)| m[(i, j)].powi(2)).sum::<f64>().sqrt()
        };
        let dq = [x1[0] - x0[0], x1[1] - x0[1]];
        let change = (before[0].hypot(before[1])) / dq[0].hypot(dq[1]);
        assert!(change < LARGEST_SECANT_CHANGE * fro(&kept), "{change}");
        let largest = before[0].abs().max(before[1].abs());
        assert!(largest > 1e-3, "{before:?}");
        assert!(after[0].abs().max(after[1].abs()) < 1e-12 * largest, "{after:?}");
        // and nothing across it: a direction orthogonal to Δq is predicted as before
        let across = [-dq[1], dq[0]];
        for i in 0..2 {
            let (a, b) = (
                (0..2).map(|j| kept[(i, j)] * across[j]).sum::<f64>(),
                (0..2).map(|j| fv_q[(i, j)] * across[j]).sum::<f64>(),
            );
            assert!((a - b).abs() < 1e-12 * a.abs().max(1.0), "{a} against {b}");
        }
    }

    #[test]
    fn a_secant_update_beyond_the_cap_is_scaled_to_it_and_a_still_step_changes_nothing() {
        let (lin, mut fv_q, fv_v, [x0, mut x1, xd0, mut xd1]) = setup();
        // a step of 0.1 mrad with the same change of the rates: an error far beyond the cap
        x1[0] = x0[0] + 1e-4;
        x1[1] = x0[1];
        xd1[2] += 500.0;
        let kept = fv_q.clone();
        secant_update(&mut fv_q, &fv_v, &lin, &Secant { x0: &x0, x1: &x1, xd0: &xd0, xd1: &xd1 });
        let fro = |m: &Mat<f64>| {
            (0..2).flat_map(|j| (0..2).map(move |i| (i, j))).map(|(i, j)| m[(i, j)].powi(2)).sum::<f64>().sqrt()
        };
        let diff = Mat::from_fn(2, 2, |i, j| fv_q[(i, j)] - kept[(i, j)]);
        assert!((fro(&diff) - LARGEST_SECANT_CHANGE * fro(&kept)).abs() < 1e-12 * fro(&kept), "{}", fro(&diff));
        // no step in the coordinates: nothing to learn along
        let mut still = kept.clone();
        secant_update(&mut still, &fv_v, &lin, &Secant { x0: &x0, x1: &x0, xd0: &xd0, xd1: &xd1 });
        assert_eq!(still, kept);
    }
}
