//! Time integration of a [`Musculoskeletal`] system: the linearly implicit (Rosenbrock) step of
//! Chadwick et al. (2014), eq. 8, at a fixed step; the error-controlled Rosenbrock-W pair of
//! [`adaptive`]; and an explicit, variable-step reference (Dormand-Prince 5(4)) for accuracy
//! checks.
//!
//! The Rosenbrock step linearizes backward Euler, `f(x_{n+1}, (x_{n+1} − x_n)/h, u_{n+1}) = 0`,
//! about `(x_n, ẋ_n, u_n)`:
//! ```text
//! (∂f/∂x + ∂f/∂ẋ / h) Δx = ∂f/∂ẋ ẋ_n − f(x_n, ẋ_n, u_n) − ∂f/∂u (u_{n+1} − u_n)
//! x_{n+1} = x_n + Δx,   ẋ_{n+1} = Δx / h
//! ```
//! one linear solve per step, no iteration: first order, L-stable for the stiff muscle and contact
//! dynamics. The reference integrates the explicit form `ẋ = F(x, u)`: `v̇` from the equations of
//! motion, `ṡ` from the contraction residual solved for it (it is strictly monotone in `ṡ`: the
//! force-velocity curve rises and the CE has a viscosity), `ȧ` from eq. 1.

pub mod adaptive;
pub mod rosw;

use crate::hill::{HillMuscle, decreasing_root};
use crate::system::{Linearization, Musculoskeletal, SimError, Workspace, solve_partial_pivoting};

/// A state of the system and its rate.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    /// Time (s).
    pub t: f64,
    /// `x = (q, v, s, a)`.
    pub x: Vec<f64>,
    /// `ẋ`.
    pub xd: Vec<f64>,
}

/// Excitations as a function of time: fills `u` (one per muscle, 0…1) at time `t` (s).
pub type Excitation<'a> = &'a dyn Fn(f64, &mut [f64]);

impl Musculoskeletal<'_> {
    /// The state at rest at coordinates `q` and time `t`: `v = 0`, each muscle's active state
    /// equal to its excitation and its fibres in isometric equilibrium at the path length, and
    /// `ẋ` consistent with it (`v̇` from the equations of motion, `ṡ = ȧ = 0`).
    pub fn rest_state(&self, ws: &mut Workspace, q: &[f64], t: f64, u: &[f64]) -> Result<State, SimError> {
        let l = self.layout();
        for (what, got, expected) in [("q", q.len(), l.n), ("u", u.len(), l.m)] {
            if got != expected {
                return Err(SimError::Length { what, got, expected });
            }
        }
        let mut x = vec![0.0; l.len()];
        x[..l.n].copy_from_slice(q);
        let xd = vec![0.0; l.len()];
        // the path lengths at q: a first evaluation with any muscle states
        for k in 0..l.m {
            x[l.a() + k] = u[k].clamp(0.0, 1.0);
            x[l.s() + k] = self.muscles[k].hill.params.optimal_fibre_length;
        }
        let lin = self.linearize_at(ws, t, &x, &xd, u)?;
        for (k, mu) in self.muscles.iter().enumerate() {
            let s = mu
                .hill
                .isometric_state(x[l.a() + k], lin.length[k])
                .ok_or_else(|| SimError::NoEquilibrium(mu.name.clone(), lin.length[k]))?;
            x[l.s() + k] = s;
        }
        let mut state = State { t, x, xd };
        state.xd = self.rates(ws, &state.x, t, &|_, w: &mut [f64]| w.copy_from_slice(u))?;
        Ok(state)
    }

    /// One Rosenbrock step of size `h` (s) from `state` under excitations `u`; returns the next
    /// state and the linearization at `state` (its muscle forces, lengths and residual).
    pub fn rosenbrock_step(
        &self,
        ws: &mut Workspace,
        state: &State,
        h: f64,
        u: Excitation<'_>,
    ) -> Result<(State, Linearization), SimError> {
        let l = self.layout();
        let (mut u0, mut u1) = (vec![0.0; l.m], vec![0.0; l.m]);
        u(state.t, &mut u0);
        u(state.t + h, &mut u1);
        let lin = self.linearize_at(ws, state.t, &state.x, &state.xd, &u0)?;
        let xd = &state.xd;
        let mut rhs = vec![0.0; l.len()];
        for i in 0..l.n {
            rhs[i] = xd[i] - lin.f[i];
            let mv: f64 = (0..l.n).map(|j| lin.mass[(i, j)] * xd[l.n + j]).sum();
            rhs[l.n + i] = mv - lin.f[l.n + i];
        }
        for k in 0..l.m {
            let (rs, ra) = (l.s() + k, l.a() + k);
            rhs[rs] = lin.contraction[k].d_sdot * xd[rs] - lin.f[rs];
            rhs[ra] = xd[ra] - lin.f[ra] - lin.activation[k].1 * (u1[k] - u0[k]);
        }
        let dx = lin.solve(h, &rhs)?;
        let x: Vec<f64> = state.x.iter().zip(&dx).map(|(a, d)| a + d).collect();
        let xd: Vec<f64> = dx.iter().map(|d| d / h).collect();
        if let Some(i) = x.iter().chain(&xd).position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(self.state_name(i % l.len())));
        }
        Ok((State { t: state.t + h, x, xd }, lin))
    }

    /// The name of state variable `i`: `q:NAME`, `v:NAME`, `s:MUSCLE`, `a:MUSCLE`.
    pub fn state_name(&self, i: usize) -> String {
        let l = self.layout();
        if i < l.n {
            format!("q:{}", self.model.input_name(i))
        } else if i < 2 * l.n {
            format!("v:{}", self.model.input_name(i - l.n))
        } else if i < l.a() {
            format!("s:{}", self.muscles[i - l.s()].name)
        } else {
            format!("a:{}", self.muscles[i - l.a()].name)
        }
    }

    /// The explicit rates `ẋ = F(x, u(t))`.
    pub fn rates(&self, ws: &mut Workspace, x: &[f64], t: f64, u: Excitation<'_>) -> Result<Vec<f64>, SimError> {
        let l = self.layout();
        let mut uu = vec![0.0; l.m];
        u(t, &mut uu);
        let zero = vec![0.0; l.len()];
        // at ẋ = 0 the v rows of f are the generalized forces that v̇ must balance: M̄ v̇ = −f_v
        let lin = self.linearize_at(ws, t, x, &zero, &uu)?;
        let mut xd = vec![0.0; l.len()];
        xd[..l.n].copy_from_slice(&x[l.n..2 * l.n]);
        let rhs: Vec<f64> = (0..l.n).map(|i| -lin.f[l.n + i]).collect();
        let vdot =
            solve_partial_pivoting(&lin.mass, &rhs).ok_or_else(|| SimError::Singular(" (mass matrix)".into()))?;
        xd[l.n..2 * l.n].copy_from_slice(&vdot);
        for (k, mu) in self.muscles.iter().enumerate() {
            let (s, a) = (x[l.s() + k], x[l.a() + k]);
            xd[l.s() + k] = self.muscle_rate(k, a, s, lin.length[k], lin.grad(k), &x[l.n..2 * l.n])?;
            xd[l.a() + k] = mu.hill.activation_rate(a, uu[k]);
        }
        Ok(xd)
    }

    /// Muscle `k`'s `ṡ` at active state `a`, contraction state `s` and path length `length`
    /// (m): the root of its contraction residual ([`contraction_rate`]), or with a rigid tendon
    /// the path's velocity `∂L/∂q · v` (`grad`, `v`: n each).
    pub(crate) fn muscle_rate(
        &self,
        k: usize,
        a: f64,
        s: f64,
        length: f64,
        grad: &[f64],
        v: &[f64],
    ) -> Result<f64, SimError> {
        let mu = &self.muscles[k];
        if mu.hill.is_rigid() {
            return Ok(grad.iter().zip(v).map(|(g, w)| g * w).sum());
        }
        contraction_rate(&mu.hill, a, s, length)
            .ok_or_else(|| SimError::NonFinite(format!("s:{} (no contraction rate)", mu.name)))
    }

    /// Integrate from `state` to time `t_end` with the explicit Dormand-Prince 5(4) pair and
    /// error control (relative `rtol`, absolute `atol` per component), calling `out` at every
    /// multiple of `every` (s) by dense (Hermite) output between accepted steps. Returns the
    /// number of accepted steps.
    #[allow(clippy::too_many_arguments)]
    pub fn reference(
        &self,
        ws: &mut Workspace,
        state: &State,
        t_end: f64,
        rtol: f64,
        atol: f64,
        every: f64,
        u: Excitation<'_>,
        out: &mut dyn FnMut(f64, &[f64]),
    ) -> Result<usize, SimError> {
        let (mut t, mut x) = (state.t, state.x.clone());
        let mut k1 = self.rates(ws, &x, t, u)?;
        let mut h = (t_end - t).clamp(1e-12, 1e-4);
        let mut next = t;
        let mut accepted = 0;
        out(t, &x);
        next += every;
        while t < t_end - 1e-15 * t_end.abs().max(1.0) {
            h = h.min(t_end - t);
            let (x5, err, k7) = dopri_step(self, ws, t, &x, &k1, h, u)?;
            let scale_err = x
                .iter()
                .zip(&x5)
                .zip(&err)
                .map(|((a, b), e)| {
                    let sc = atol + rtol * a.abs().max(b.abs());
                    (e / sc) * (e / sc)
                })
                .sum::<f64>();
            let norm = (scale_err / x.len().max(1) as f64).sqrt();
            if norm <= 1.0 {
                // outputs inside the step by cubic Hermite interpolation of (x, k1) and (x5, k7)
                while next <= t + h + 1e-12 * h {
                    let th = ((next - t) / h).clamp(0.0, 1.0);
                    out(next, &hermite(th, h, (&x, &k1), (&x5, &k7)).0);
                    next += every;
                }
                t += h;
                x = x5;
                k1 = k7;
                accepted += 1;
            }
            let factor = if norm == 0.0 { 5.0 } else { (0.9 * norm.powf(-0.2)).clamp(0.2, 5.0) };
            h *= factor;
            if h < 1e-14 {
                return Err(SimError::NonFinite("the reference integrator's step vanished".into()));
            }
        }
        Ok(accepted)
    }
}

/// The cubic Hermite interpolant at `θ` (0…1) of a step of `h` (s) from the state and rate
/// `(x0, f0)` to `(x1, f1)` (len each): the state and its time derivative.
pub fn hermite(th: f64, h: f64, (x0, f0): (&[f64], &[f64]), (x1, f1): (&[f64], &[f64])) -> (Vec<f64>, Vec<f64>) {
    let (t2, t3) = (th * th, th * th * th);
    let (h00, h10, h01, h11) = (2.0 * t3 - 3.0 * t2 + 1.0, t3 - 2.0 * t2 + th, -2.0 * t3 + 3.0 * t2, t3 - t2);
    let (d00, d10, d11) = (6.0 * t2 - 6.0 * th, 3.0 * t2 - 4.0 * th + 1.0, 3.0 * t2 - 2.0 * th);
    let x = (0..x0.len()).map(|i| h00 * x0[i] + h10 * h * f0[i] + h01 * x1[i] + h11 * h * f1[i]).collect();
    let xd = (0..x0.len()).map(|i| d00 * (x0[i] - x1[i]) / h + d10 * f0[i] + d11 * f1[i]).collect();
    (x, xd)
}

/// The `ṡ` at which the contraction residual vanishes (it decreases strictly in `ṡ`): DAS3's in
/// closed form ([`HillMuscle`]'s quadratic), else (or where that misses 1e-13 `F_max`) by
/// bracketing and safeguarded Newton steps.
pub fn contraction_rate(hill: &HillMuscle, a: f64, s: f64, length: f64) -> Option<f64> {
    let r = |sd: f64| hill.contraction(a, s, sd, length);
    let ftol = 1e-13 * hill.params.max_force;
    // an inactive fibre without damping (De Groote et al.'s curves allow it, DAS3's viscosity
    // does not): the residual does not depend on ṡ, so there is no rate to solve for; in
    // isometric equilibrium (to `isometric_state`'s tolerance) the fibre rests
    if a == 0.0 && hill.damping() == (0.0, 0.0) {
        let at_rest = r(0.0);
        if at_rest.d_sdot == 0.0 {
            return (at_rest.residual.abs() <= 1e-12 * hill.params.max_force).then_some(0.0);
        }
    }
    if let Some(sd) = hill.das3_contraction_rate(a, s, length, ftol) {
        return Some(sd);
    }
    bracketed_contraction_rate(hill, a, s, length, ftol)
}

/// The root of the contraction residual in `ṡ` (m/s) by bracketing from `±V_max` and safeguarded
/// Newton steps to `|residual| <= ftol` (N), `None` where no bracket is found within 1e12 m/s.
pub(crate) fn bracketed_contraction_rate(hill: &HillMuscle, a: f64, s: f64, length: f64, ftol: f64) -> Option<f64> {
    let r = |sd: f64| hill.contraction(a, s, sd, length);
    let vmax = hill.params.vmax * hill.params.optimal_fibre_length;
    let (mut lo, mut hi) = (-vmax, vmax);
    while r(lo).residual < 0.0 {
        lo *= 4.0;
        if !lo.is_finite() || lo < -1e12 {
            return None;
        }
    }
    while r(hi).residual > 0.0 {
        hi *= 4.0;
        if !hi.is_finite() || hi > 1e12 {
            return None;
        }
    }
    let residual = |sd: f64| {
        let c = r(sd);
        (c.residual, c.d_sdot)
    };
    Some(decreasing_root(residual, (lo, hi), 0.0f64.clamp(lo, hi), ftol, 1e-15 * vmax))
}

// Dormand-Prince 5(4) tableau
const C: [f64; 7] = [0.0, 1.0 / 5.0, 3.0 / 10.0, 4.0 / 5.0, 8.0 / 9.0, 1.0, 1.0];
const A: [[f64; 6]; 7] = [
    [0.0; 6],
    [1.0 / 5.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 40.0, 9.0 / 40.0, 0.0, 0.0, 0.0, 0.0],
    [44.0 / 45.0, -56.0 / 15.0, 32.0 / 9.0, 0.0, 0.0, 0.0],
    [19372.0 / 6561.0, -25360.0 / 2187.0, 64448.0 / 6561.0, -212.0 / 729.0, 0.0, 0.0],
    [9017.0 / 3168.0, -355.0 / 33.0, 46732.0 / 5247.0, 49.0 / 176.0, -5103.0 / 18656.0, 0.0],
    [35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0],
];
const B5: [f64; 7] = [35.0 / 384.0, 0.0, 500.0 / 1113.0, 125.0 / 192.0, -2187.0 / 6784.0, 11.0 / 84.0, 0.0];
const B4: [f64; 7] =
    [5179.0 / 57600.0, 0.0, 7571.0 / 16695.0, 393.0 / 640.0, -92097.0 / 339200.0, 187.0 / 2100.0, 1.0 / 40.0];

type DopriOut = (Vec<f64>, Vec<f64>, Vec<f64>);

fn dopri_step(
    sys: &Musculoskeletal<'_>,
    ws: &mut Workspace,
    t: f64,
    x: &[f64],
    k1: &[f64],
    h: f64,
    u: Excitation<'_>,
) -> Result<DopriOut, SimError> {
    let n = x.len();
    let mut k: Vec<Vec<f64>> = vec![k1.to_vec()];
    for stage in 1..7 {
        let xi: Vec<f64> = (0..n).map(|i| x[i] + h * (0..stage).map(|j| A[stage][j] * k[j][i]).sum::<f64>()).collect();
        k.push(sys.rates(ws, &xi, t + C[stage] * h, u)?);
    }
    let x5: Vec<f64> = (0..n).map(|i| x[i] + h * (0..7).map(|j| B5[j] * k[j][i]).sum::<f64>()).collect();
    let err: Vec<f64> = (0..n).map(|i| h * (0..7).map(|j| (B5[j] - B4[j]) * k[j][i]).sum::<f64>()).collect();
    let k7 = k.pop().expect("seven stages");
    Ok((x5, err, k7))
}

#[cfg(test)]
mod tests {
    #[test]
    fn hermite_reproduces_a_cubic_and_its_rate() {
        // x(t) = 1 − 2t + 3t² − t³ over a step of 0.5 from t = 0.25
        let x = |t: f64| 1.0 - 2.0 * t + 3.0 * t * t - t * t * t;
        let f = |t: f64| -2.0 + 6.0 * t - 3.0 * t * t;
        let (t0, h) = (0.25, 0.5);
        for th in [0.0, 0.3, 0.7, 1.0] {
            let (xi, fi) = super::hermite(th, h, (&[x(t0)], &[f(t0)]), (&[x(t0 + h)], &[f(t0 + h)]));
            let t = t0 + th * h;
            assert!((xi[0] - x(t)).abs() < 1e-14 && (fi[0] - f(t)).abs() < 1e-13, "{th}: {xi:?} {fi:?}");
        }
    }
}
