//! The error-controlled integrator: the linearly implicit Rosenbrock-W pair ROS2(3) of
//! Shampine & Reichelt (1997, MATLAB's `ode23s`), second order with a third-order error
//! estimate, L-stable, with the step's exact Jacobian and a dense output of second order; and
//! the other [`Method`]s, the pair ROS34PW2, the linearly implicit Euler step and the linearly
//! implicit two-step BDF2.
//!
//! The system is implicit, `f(x, ẋ, u) = 0`; the method is written for its explicit form
//! `ẋ = F(x, u(t))` with `J = ∂F/∂x = −(∂f/∂ẋ)⁻¹ ∂f/∂x`, and every linear system
//! `(I − h d J) k = r` is solved as `(∂f/∂x + ∂f/∂ẋ / (h d)) k = ∂f/∂ẋ r / (h d)` by the structured
//! solve of the fixed step ([`Linearization::solve`]). `F` at a stage is the consistent rate:
//! one evaluation of the kernel at the stage's state and a guessed rate, `v̇` corrected by the
//! mass matrix (the residual is linear in it), `ṡ` by each muscle's contraction residual solved
//! for it ([`contraction_rate`](crate::integrate::contraction_rate); a rigid tendon's is the path's velocity). That evaluation's partials are the next step's Jacobian: two
//! evaluations of the kernel a step (the third stage's rate is the next step's first), against
//! the fixed step's one. With [`Tolerances::jacobian_every`] the stages are evaluated for the
//! rate alone ([`Musculoskeletal::consistent_rate`]) and the whole Jacobian is formed every few
//! steps, its kernel blocks kept in between.
//!
//! ```text
//! d = 1/(2 + √2), e32 = 6 + √2, W = I − h d J, T = ∂F/∂t (through the excitations)
//! k1 = W⁻¹ (F(x_n) + h d T)
//! k2 = W⁻¹ (F(x_n + h k1 / 2) − k1) + k1
//! x_{n+1} = x_n + h k2
//! k3 = W⁻¹ (F(x_{n+1}) − e32 (k2 − F₁) − 2 (k1 − F₀) + h d T)
//! error = h (k1 − 2 k2 + k3) / 6
//! x(t_n + θ h) = x_n + h (θ (1 − θ) k1 + θ (θ − 2d) k2) / (1 − 2d)
//! ```
//! The formula is a W-method: second order with any Jacobian, so the inertia's partial taken at
//! the guessed `v̇` and the kernel blocks kept from an earlier step do not lower it.

use faer::Mat;
use mollier_core::SavedPositions;
use mollier_core::dynamics::{bias_forces, mass_matrix};
use mollier_core::kinematics::{NewtonOptions, solve_positions_with};

use crate::hill::Contraction;
use crate::integrate::{Excitation, State, hermite, rosw};
use crate::system::{
    Factored, Layout, Linearization, Musculoskeletal, SimError, StateKind, Workspace, add_weighted_gram,
    solve_partial_pivoting,
};

mod apart;
use apart::Secant;

/// The error control's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerances {
    /// Relative tolerance (1).
    pub rtol: f64,
    /// Absolute tolerance, in each state's unit (rad or m, rad/s or m/s, m) but the activations.
    pub atol: f64,
    /// Absolute tolerance of the activations (1), `None` (the default): `atol`. An activation
    /// error of 1e-3 moves a muscle's force by at most 0.1 % of its `F_max`: `Some(1e-3)` takes
    /// 0.87 of the default's evaluations on the flexion (docs/performance.md).
    pub atol_activation: Option<f64>,
    /// The step-size controller.
    pub controller: Controller,
    /// The longest step (s).
    pub max_step: f64,
    /// The first step tried (s).
    pub first_step: f64,
    /// `Some(k)` (the default `Some(4)`): the stages are evaluated to first order for the rate
    /// alone ([`Musculoskeletal::consistent_rate`]: no second- or third-order transfer
    /// functions), and the whole Jacobian (the kernel's `∂f_v/∂q`, `∂f_v/∂v`) is formed at the
    /// end of every `k`-th accepted step; in between the Jacobian keeps those two blocks while
    /// its mass matrix and its muscle blocks (the stiff tendons and fibres) are the new state's.
    /// A W-method stays second order with any Jacobian. `None`: every evaluation forms the
    /// whole linearization (with `∂c/∂q`, 6.3 M instructions against the rate's 1.6 M on the
    /// shoulder), the step's Jacobian exact at its start: on the flexion 3.5 times the time of
    /// `Some(4)` and less accurate (docs/performance.md).
    pub jacobian_every: Option<usize>,
    /// The Rosenbrock-W pair.
    pub method: Method,
    /// Whether a step ends on a break of [`Adaptive::set_breaks`] rather than straddle it (the
    /// default `true`: the elastic flexion takes 937 evaluations against 1357 across its knots).
    /// `false` pays where the steps are longer than half the breaks' spacing: with every tendon
    /// rigid, ending on the 20 ms knots costs two steps an interval whatever the tolerance
    /// (docs/performance.md, "With error control").
    pub land_on_breaks: bool,
}

/// The Rosenbrock-W pair of the error control.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// ROS2(3) of Shampine & Reichelt (1997): two evaluations a step, second order, a
    /// third-order estimate, second-order dense output.
    Ros23,
    /// ROS34PW2 of Rang & Angermann (2005) ([`super::rosw`]): four evaluations a step (three
    /// stages and the new state's), third order, stiffly accurate, a second-order estimate,
    /// cubic Hermite dense output.
    Ros34pw2,
    /// The linearly implicit (Rosenbrock) Euler step, `x_{n+1} = x_n + h W⁻¹ F(x_n)` with
    /// `W = I − h J`, the activations integrated apart (`ȧ` depends on `a` and `u` alone: the
    /// classical Runge-Kutta method on sub-steps held to a tenth of their tolerance, their step
    /// given to the solve): one evaluation a step (the new state's rate, the next step's first),
    /// first order with any Jacobian, L-stable; its local error `h² ẍ / 2` estimated by
    /// `h (F(x_{n+1}) − F(x_n)) / 2` (the activations' left out), no activation changing by more
    /// than 0.05 over a step, linear dense output. Chadwick et al.'s fixed step under error
    /// control.
    Euler,
    /// The linearly implicit two-step BDF2: the variable-step BDF2 formula linearized about the
    /// current state, `x_{n+1} = x_n + β W⁻¹ (F(x_n) + ω/(1+ω) (x_n − x_{n−1})/h_{n−1})` with
    /// `W = I − β J`, `ω = h/h_{n−1}`, `β = h (1+ω)/(1+2ω)`; the activations integrated apart
    /// as in [`Self::Euler`]. One evaluation a step (the new state's rate), second order; its
    /// local error estimated from the distance to the quadratic predictor through `x_{n−1}`,
    /// `x_n` and `F(x_n)`, and the formula's residual at the new state (what the linearization
    /// left) held to the tolerance too; growth of at most 2 a step; cubic Hermite dense output.
    /// The first step is the Euler step's.
    Bdf2,
}

impl Method {
    /// Every method, in the order of [`Self::name`]'s list.
    pub const ALL: [Method; 4] = [Method::Ros23, Method::Ros34pw2, Method::Euler, Method::Bdf2];

    /// Its name in `summary.json` and the front ends' options: `ros23`, `ros34pw2`, `euler`,
    /// `bdf2`.
    pub fn name(self) -> &'static str {
        match self {
            Method::Ros23 => "ros23",
            Method::Ros34pw2 => "ros34pw2",
            Method::Euler => "euler",
            Method::Bdf2 => "bdf2",
        }
    }

    /// The order of the error estimate (the local error's power of `h`), which the step-size
    /// controller's exponents divide by.
    fn estimate_order(self) -> f64 {
        match self {
            Method::Ros23 | Method::Ros34pw2 | Method::Bdf2 => 3.0,
            Method::Euler => 2.0,
        }
    }

    /// Whether the kept kernel blocks of the Jacobian are updated along each step between the
    /// whole ones ([`Tolerances::jacobian_every`]; Broyden's update, `apart::secant_update`): for
    /// the one-evaluation methods, whose accuracy is the Jacobian's (the W-methods' is not: ROS2(3)
    /// on the flexion took 1075 evaluations with it against 951).
    fn updates_kept_jacobian(self) -> bool {
        matches!(self, Method::Euler | Method::Bdf2)
    }

    /// The largest factor a step may grow by: the variable-step BDF2 is zero-stable for
    /// ratios below 1 + √2.
    fn largest_growth(self) -> f64 {
        if self == Method::Bdf2 { 2.0 } else { 5.0 }
    }
}

impl Tolerances {
    /// How the error norm weighs state `i` (of `layout`'s) over a step of `h` (s): the weight of
    /// its error (`h` for a velocity, whose error moves its coordinate by that over the step,
    /// else 1) and its absolute tolerance (the activations' own). The tolerance of a weighted
    /// error at weighted magnitude `y` is `atol + rtol |y|`.
    pub fn weight(&self, layout: Layout, i: usize, h: f64) -> (f64, f64) {
        let kind = layout.kind(i);
        let weight = if kind == StateKind::Velocity { h } else { 1.0 };
        let atol = if kind == StateKind::Activation { self.atol_activation.unwrap_or(self.atol) } else { self.atol };
        (weight, atol)
    }
}

impl Default for Tolerances {
    /// `rtol` 1e-3, `atol` 1e-5 (the activations too), the elementary controller, steps up to
    /// 20 ms, the first 0.5 ms, the whole Jacobian every 4 steps, steps ending on the breaks.
    fn default() -> Self {
        Self {
            rtol: 1e-3,
            atol: 1e-5,
            atol_activation: None,
            controller: Controller::Elementary,
            max_step: 0.02,
            first_step: 5e-4,
            jacobian_every: Some(4),
            method: Method::Ros23,
            land_on_breaks: true,
        }
    }
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Method::ALL
            .into_iter()
            .find(|m| m.name() == s)
            .ok_or_else(|| format!("the method is \"ros23\", \"ros34pw2\", \"euler\" or \"bdf2\", not {s:?}"))
    }
}

/// How the next step's length follows the error norms `e` (relative to the tolerance) of a
/// method whose error estimate is of order `k` (3 for the Rosenbrock-W pairs, 2 for the Euler
/// step).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Controller {
    /// `h (1/e_n)^(1/k)`, with a safety factor 0.8.
    Elementary,
    /// After an accepted step Gustafsson's PI controller, `h (1/e_n)^(0.7/k) (e_{n-1}/e_n)^(0.4/k)`
    /// (Hairer & Wanner, IV.8), which damps the alternation of accepted and rejected steps the
    /// elementary one falls into on the stiff muscle states; after a rejection the elementary one.
    Gustafsson,
}

/// The counts and extremes of an adaptive run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StepStats {
    /// Steps accepted.
    pub accepted: usize,
    /// Steps rejected (the error above the tolerance, or a stage the kernel could not evaluate).
    pub rejected: usize,
    /// Of the rejected steps, those with a stage the kernel could not evaluate (a path's anchor
    /// inside its obstacle, positions without a solution).
    pub failures: usize,
    /// The shortest accepted step (s).
    pub shortest: f64,
    /// The longest accepted step (s).
    pub longest: f64,
    /// Evaluations of the kernel (positions, transfer functions, partials).
    pub evaluations: usize,
    /// Of the evaluations, those that formed the whole Jacobian (the rest: the rate alone).
    pub jacobians: usize,
    /// The accepted steps by the kind of state with the largest scaled error
    /// ([`Adaptive::limiting_states`]), indexed by [`StateKind`] `as usize`.
    pub limited_by: [usize; 4],
    /// The rejected steps by the same kinds (the failed stages, which have none, left out).
    pub rejected_by: [usize; 4],
}

const D: f64 = 0.292_893_218_813_452_5; // 1/(2 + √2)
const E32: f64 = 7.414_213_562_373_095; // 6 + √2

/// What a step's dense output reads of it, the end being the current state.
struct LastStep {
    /// Start time and length (s).
    t0: f64,
    h: f64,
    /// The start state (len).
    x0: Vec<f64>,
    /// The stages `k1`, `k2` (len; ROS34PW2: `F(x_n)` and none; the Euler step: none).
    k1: Vec<f64>,
    k2: Vec<f64>,
    /// The muscles' path lengths (m) and their rates (m/s) at the start (m each).
    length0: Vec<f64>,
    rate0: Vec<f64>,
}

/// An adaptive integration in progress: the current state with its consistent rate and
/// linearization, and the last accepted step for dense output.
pub struct Adaptive {
    tol: Tolerances,
    state: State,
    /// The Jacobian of the next step: the current state's but for `∂f_v/∂q` less the muscles'
    /// tangent stiffness and `∂f_v/∂v`, which are those of the last whole linearization.
    lin: Linearization,
    /// That linearization's `∂f_v/∂q` without `Σ (∂F_m/∂L_m) ∂L_m/∂q ∂L_m/∂qᵀ` (n x n), and the
    /// accepted steps since it.
    kept_fv_q: Mat<f64>,
    /// That linearization's `∂f_v/∂v` without the rigid tendons' damping.
    kept_fv_v: Mat<f64>,
    since_jacobian: usize,
    h: f64,
    /// The last accepted step ([`LastStep`]).
    last: Option<LastStep>,
    stats: StepStats,
    /// The error norm of the last accepted step (0 before the first; at least 1e-4).
    last_norm: f64,
    /// Times (s, increasing) the steps end on rather than straddle ([`Self::set_breaks`]).
    breaks: Vec<f64>,
    /// The longest sub-step of the activations integrated apart (s; [`Method::Euler`],
    /// [`Method::Bdf2`]).
    activation_substep: f64,
    /// The positions and the paths' warm starts at the current state, which an attempt with a
    /// stage the kernel could not evaluate returns the workspace to.
    warm: SavedPositions,
    /// The state with the largest scaled error of the attempt in progress, and of each attempt
    /// of the last step ([`Self::limiting_states`]).
    worst: Option<usize>,
    attempts: Vec<Option<usize>>,
}

impl Musculoskeletal<'_> {
    /// The consistent rate `ẋ = F(x, u(t))` and the linearization at `(x, ẋ)`, from one
    /// evaluation of the kernel at the rate `guess` (len): `q̇ = v` and `ȧ` exactly, `v̇` corrected
    /// by the mass matrix (the residual is linear in it), `ṡ` solved per muscle. The
    /// linearization's residual and muscle partials are those at the consistent rate; its
    /// `∂f_v/∂q` carries the inertia of the guessed `v̇`.
    pub fn consistent(
        &self,
        ws: &mut Workspace,
        x: &[f64],
        t: f64,
        u: Excitation<'_>,
        guess: &[f64],
    ) -> Result<(Vec<f64>, Linearization), SimError> {
        let l = self.layout();
        if guess.len() != l.len() {
            return Err(SimError::Length { what: "ẋ", got: guess.len(), expected: l.len() });
        }
        let mut uu = vec![0.0; l.m];
        u(t, &mut uu);
        let mut xd = guess.to_vec();
        xd[..l.n].copy_from_slice(&x[l.n..2 * l.n]);
        for (k, mu) in self.muscles.iter().enumerate() {
            xd[l.a() + k] = mu.hill.activation_rate(x[l.a() + k], uu[k]);
        }
        let mut lin = self.linearize_at(ws, t, x, &xd, &uu)?;
        let rhs: Vec<f64> = lin.f[l.n..2 * l.n].to_vec();
        let dv = solve_partial_pivoting(&lin.mass, &rhs).ok_or_else(|| SimError::Singular(" (mass matrix)".into()))?;
        for i in 0..l.n {
            xd[l.n + i] -= dv[i];
            lin.f[i] = 0.0;
        }
        // the v rows at the corrected v̇: f_v − M̄ M̄⁻¹ f_v, round-off
        for i in 0..l.n {
            lin.f[l.n + i] -= (0..l.n).map(|j| lin.mass[(i, j)] * dv[j]).sum::<f64>();
        }
        for (k, mu) in self.muscles.iter().enumerate() {
            let (s, a) = (x[l.s() + k], x[l.a() + k]);
            let sd = self.muscle_rate(k, a, s, lin.length[k], lin.grad(k), &x[l.n..2 * l.n])?;
            xd[l.s() + k] = sd;
            lin.contraction[k] = mu.hill.row(a, s, sd, lin.length[k], sd);
            lin.f[l.s() + k] = lin.contraction[k].residual;
            lin.f[l.a() + k] = 0.0;
        }
        if let Some(i) = xd.iter().position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(self.state_name(i)));
        }
        Ok((xd, lin))
    }

    /// The consistent rate `ẋ = F(x, u(t))` (len) alone, as [`Self::consistent`] gives it, from an
    /// evaluation of the kernel to first order: the positions, `DF`, the mass matrix and the
    /// velocities' accelerations `D²F_x(v, v)` (one direction), with no second-order terms of
    /// the paths and no partials but the muscles' own. Returns the rate and the Jacobian at `x`
    /// but for `∂f_v/∂q` and `∂f_v/∂v`, which are `fv_q` (n x n; the muscles' tangent stiffness
    /// `Σ (∂F_m/∂L_m) ∂L_m/∂q ∂L_m/∂qᵀ` at `x` is added to it) and `fv_v` (n x n).
    pub fn consistent_rate(
        &self,
        ws: &mut Workspace,
        x: &[f64],
        t: f64,
        u: Excitation<'_>,
        fv_q: &Mat<f64>,
        fv_v: &Mat<f64>,
    ) -> Result<(Vec<f64>, Linearization), SimError> {
        let (xd, mut lin) = self.first_order_rate(ws, x, t, u)?;
        let mut fv_q = fv_q.clone();
        add_weighted_gram(&mut fv_q, &lin.grad, lin.contraction.iter().map(|c| c.force_d_length));
        let mut fv_v = fv_v.clone();
        if self.muscles.iter().any(|mu| mu.hill.is_rigid()) {
            // the rigid tendons' damping Σ (∂F_m/∂L̇_m) ∂L_m/∂q ∂L_m/∂qᵀ, the state's own
            add_weighted_gram(&mut fv_v, &lin.grad, lin.contraction.iter().map(|c| c.force_d_rate));
        }
        (lin.fv_q, lin.fv_v) = (fv_q, fv_v);
        Ok((xd, lin))
    }

    /// The consistent rate `ẋ = F(x, u(t))` (len) of [`Self::consistent_rate`] without its
    /// Jacobian: for a stage whose linearization the step does not keep.
    pub fn rate_alone(&self, ws: &mut Workspace, x: &[f64], t: f64, u: Excitation<'_>) -> Result<Vec<f64>, SimError> {
        Ok(self.first_order_rate(ws, x, t, u)?.0)
    }

    /// [`Self::consistent_rate`]'s rate and linearization but for `fv_q` and `fv_v`, left empty.
    fn first_order_rate(
        &self,
        ws: &mut Workspace,
        x: &[f64],
        t: f64,
        u: Excitation<'_>,
    ) -> Result<(Vec<f64>, Linearization), SimError> {
        let l = self.layout();
        let n = l.n;
        if x.len() != l.len() {
            return Err(SimError::Length { what: "x", got: x.len(), expected: l.len() });
        }
        let mut uu = vec![0.0; l.m];
        u(t, &mut uu);
        let model = self.model;
        solve_positions_with(model, &mut ws.data, &x[..n], &NewtonOptions::default())?;
        self.external_loads(ws, t);
        let (data, loads) = (&mut ws.data, &ws.loads);
        // Q̄ = DF_xᵀ (f − f_in(v, v̇ = 0)) − DF_eᵀ σ: f_v = M̄ v̇ − Q̄ + Σ F_m ∂L_m/∂q
        let mut rhs = bias_forces(model, data, &x[n..2 * n], loads)?;
        let mass = mass_matrix(model, data)?;
        let mut xd = vec![0.0; l.len()];
        xd[..n].copy_from_slice(&x[n..2 * n]);
        let dfe = data.df_e();
        let (mut grad, mut length) = (Vec::with_capacity(l.m * n), Vec::with_capacity(l.m));
        let (mut contraction, mut activation): (Vec<Contraction>, _) =
            (Vec::with_capacity(l.m), Vec::with_capacity(l.m));
        let mut f = vec![0.0; l.len()];
        for (k, mu) in self.muscles.iter().enumerate() {
            let r = mu.mode.index();
            let len = mu.reference_length + data.e()[r];
            let (s, a) = (x[l.s() + k], x[l.a() + k]);
            grad.extend((0..n).map(|j| dfe[(r, j)]));
            let sd = self.muscle_rate(k, a, s, len, &grad[k * n..], &x[n..2 * n])?;
            let ad = mu.hill.activation_rate(a, uu[k]);
            let c = mu.hill.row(a, s, sd, len, sd);
            let (_, da, _, du) = mu.hill.activation(a, ad, uu[k]);
            for (q, g) in rhs.iter_mut().zip(&grad[k * n..]) {
                *q -= c.force * g;
            }
            (xd[l.s() + k], xd[l.a() + k]) = (sd, ad);
            f[l.s() + k] = c.residual;
            length.push(len);
            contraction.push(c);
            activation.push((da, du));
        }
        let vdot = solve_partial_pivoting(&mass, &rhs).ok_or_else(|| SimError::Singular(" (mass matrix)".into()))?;
        xd[n..2 * n].copy_from_slice(&vdot);
        if let Some(i) = xd.iter().position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(self.state_name(i)));
        }
        let lin = Linearization {
            layout: l,
            f,
            mass,
            fv_q: Mat::new(),
            fv_v: Mat::new(),
            grad,
            length,
            contraction,
            activation,
            velocity_accelerations: Vec::new(),
        };
        Ok((xd, lin))
    }
}

/// `∂f_v/∂q` of `lin` without the muscles' tangent stiffness `Σ (∂F_m/∂L_m) ∂L_m/∂q ∂L_m/∂qᵀ`.
fn without_muscle_stiffness(lin: &Linearization) -> Mat<f64> {
    let mut fv_q = lin.fv_q.clone();
    add_weighted_gram(&mut fv_q, &lin.grad, lin.contraction.iter().map(|c| -c.force_d_length));
    fv_q
}

/// `∂f_v/∂v` of `lin` without the rigid tendons' damping `Σ (∂F_m/∂L̇_m) ∂L_m/∂q ∂L_m/∂qᵀ`
/// (`lin`'s own when no tendon is rigid).
fn without_muscle_damping(lin: &Linearization) -> Mat<f64> {
    let mut fv_v = lin.fv_v.clone();
    if lin.contraction.iter().any(|c| c.force_d_rate != 0.0) {
        add_weighted_gram(&mut fv_v, &lin.grad, lin.contraction.iter().map(|c| -c.force_d_rate));
    }
    fv_v
}

/// `∂f/∂ẋ w`: `w_q`, `M̄ w_v`, `∂f_s/∂ṡ w_s`, `w_a`.
fn e_times(lin: &Linearization, w: &[f64]) -> Vec<f64> {
    let l = lin.layout;
    let mut out = w.to_vec();
    for i in 0..l.n {
        out[l.n + i] = (0..l.n).map(|j| lin.mass[(i, j)] * w[l.n + j]).sum();
    }
    for k in 0..l.m {
        out[l.s() + k] *= lin.contraction[k].d_sdot;
    }
    out
}

/// `W⁻¹ r` with `W = I − h d J`: `(∂f/∂x + ∂f/∂ẋ / (h d)) k = ∂f/∂ẋ r / (h d)`, `w` that
/// matrix factored at `hd` (s).
fn w_solve(w: &Factored<'_>, hd: f64, r: &[f64]) -> Result<Vec<f64>, SimError> {
    let rhs: Vec<f64> = e_times(w.linearization(), r).iter().map(|v| v / hd).collect();
    w.solve(&rhs)
}

/// What one attempted step gives: the error's norm relative to the tolerance, the new state, its
/// rate and linearization (`None` where the norm fails and they were not evaluated), `k1`, `k2`.
type Attempt = (f64, Vec<f64>, Option<(Vec<f64>, Linearization)>, Vec<f64>, Vec<f64>);

impl Adaptive {
    /// Start from `state` (its rate is made consistent) with tolerances `tol`.
    pub fn new(
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        state: &State,
        u: Excitation<'_>,
        tol: Tolerances,
    ) -> Result<Self, SimError> {
        if ![tol.rtol, tol.atol, tol.atol_activation.unwrap_or(tol.atol), tol.max_step, tol.first_step]
            .iter()
            .all(|v| *v > 0.0 && v.is_finite())
        {
            return Err(SimError::NonFinite("the tolerances must be positive and finite".into()));
        }
        let (xd, lin) = sys.consistent(ws, &state.x, state.t, u, &state.xd)?;
        let state = State { t: state.t, x: state.x.clone(), xd };
        if tol.jacobian_every == Some(0) {
            return Err(SimError::NonFinite("the Jacobian's interval must be at least one step".into()));
        }
        let stats = StepStats { evaluations: 1, jacobians: 1, shortest: f64::INFINITY, ..StepStats::default() };
        let (kept_fv_q, kept_fv_v) = (without_muscle_stiffness(&lin), without_muscle_damping(&lin));
        let h = tol.first_step.min(tol.max_step);
        let mut warm = SavedPositions::new();
        warm.save(&ws.data);
        Ok(Self {
            h,
            tol,
            state,
            lin,
            kept_fv_q,
            kept_fv_v,
            since_jacobian: 0,
            last: None,
            stats,
            last_norm: 0.0,
            breaks: Vec::new(),
            activation_substep: apart::activation_substep(sys, &tol),
            warm,
            worst: None,
            attempts: Vec::new(),
        })
    }

    /// Times (s) where the excitations change course (the knots of piecewise-linear ones): a
    /// step that would straddle one ends on it instead, since a kink of `u` inside a step is a
    /// jump of `ä` the error estimate sees as a large error (most rejections on the flexion were
    /// steps across its 20 ms knots). Times not finite are ignored; the rest are sorted.
    pub fn set_breaks(&mut self, times: &[f64]) {
        self.breaks = times.iter().copied().filter(|t| t.is_finite()).collect();
        self.breaks.sort_by(f64::total_cmp);
        self.breaks.dedup();
    }

    /// The first break after time `t` (s) by more than a rounding, if any.
    fn next_break(&self, t: f64) -> Option<f64> {
        let eps = 1e-12 * t.abs().max(1.0);
        let i = self.breaks.partition_point(|&b| b <= t + eps);
        self.breaks.get(i).copied()
    }

    /// The current state (the end of the last accepted step) and its consistent rate.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The linearization at the current state and rate.
    pub fn linearization(&self) -> &Linearization {
        &self.lin
    }

    /// The counts so far.
    pub fn stats(&self) -> StepStats {
        self.stats
    }

    /// The step the next attempt takes (s).
    pub fn next_step(&self) -> f64 {
        self.h
    }

    /// The state (an index of `x`) with the largest scaled error of each attempt of the last
    /// [`Self::step`], in order: the last attempt accepted, those before it rejected; `None` for
    /// an attempt with a stage the kernel could not evaluate. Which states limit the steps.
    pub fn limiting_states(&self) -> &[Option<usize>] {
        &self.attempts
    }

    /// The state at time `t` inside the last accepted step (or the current state), by the
    /// method's dense output (ROS2(3)'s of second order, ROS34PW2's cubic Hermite, the Euler
    /// step's linear) but for the contraction states `s`, and its rate (the polynomial's
    /// derivative); `None` outside. Each `s` is the path's length (a cubic Hermite through the
    /// lengths and rates at the step's ends, `∂L/∂q v`) less a tendon length taken linearly
    /// between the ends': the muscle's force between two steps lies between theirs (to the
    /// interpolation's error in the path's length).
    ///
    /// A fibre behind a short tendon follows the path to within the tendon's stretch, and its
    /// rate jumps where the tendon goes slack or taut inside a step: a polynomial through the
    /// fibre's rates (the stages' or the ends') bends it away from the path by tens of µm
    /// between the steps, which on DAS3's 1 mm tendon of serratus anterior 6 gave 3047 N (16
    /// `F_max`) in a row 0.2 ms apart, the steps' own states carrying none; the fibre taken
    /// linearly instead misses the path's curvature (41 N in a row 2 ms apart).
    pub fn dense(&self, t: f64) -> Option<(Vec<f64>, Vec<f64>)> {
        let Some(LastStep { t0, h, x0, k1, k2, length0, rate0 }) = &self.last else {
            return (t == self.state.t).then(|| (self.state.x.clone(), self.state.xd.clone()));
        };
        let th = (t - t0) / h;
        if !(-1e-9..=1.0 + 1e-9).contains(&th) {
            return None;
        }
        let th = th.clamp(0.0, 1.0);
        let x1 = &self.state.x;
        let (mut x, mut xd) = match self.tol.method {
            Method::Ros23 => {
                let (w1, w2) = (th * (1.0 - th) / (1.0 - 2.0 * D), th * (th - 2.0 * D) / (1.0 - 2.0 * D));
                let (d1, d2) = ((1.0 - 2.0 * th) / (1.0 - 2.0 * D), (2.0 * th - 2.0 * D) / (1.0 - 2.0 * D));
                let x = (0..x0.len()).map(|i| x0[i] + h * (w1 * k1[i] + w2 * k2[i])).collect();
                let xd = (0..x0.len()).map(|i| d1 * k1[i] + d2 * k2[i]).collect();
                (x, xd)
            }
            // cubic Hermite between (x_n, F(x_n)) (`k1`) and the current state
            Method::Ros34pw2 | Method::Bdf2 => hermite(th, *h, (x0, k1), (x1, &self.state.xd)),
            // linear, the method's own order: Hermite's cubic through the stiff fibres' steep
            // rates overshoots between the steps
            Method::Euler => {
                let x = (0..x0.len()).map(|i| x0[i] + th * (x1[i] - x0[i])).collect();
                let xd = (0..x0.len()).map(|i| (x1[i] - x0[i]) / h).collect();
                (x, xd)
            }
        };
        let (length1, rate1) = path_lengths_and_rates(&self.lin, x1);
        let (length, rate) = hermite(th, *h, (length0, rate0), (&length1, &rate1));
        let l = self.lin.layout;
        for k in 0..l.m {
            let i = l.s() + k;
            let (tendon0, tendon1) = (length0[k] - x0[i], length1[k] - x1[i]);
            x[i] = length[k] - (tendon0 + th * (tendon1 - tendon0));
            xd[i] = rate[k] - (tendon1 - tendon0) / h;
        }
        Some((x, xd))
    }

    /// Return the workspace to the current state's positions and paths' warm starts after an
    /// evaluation elsewhere (a row between the steps): the next step starts as it would have
    /// without it, so the rows asked for do not change the run.
    pub fn return_to_state(&self, sys: &Musculoskeletal<'_>, ws: &mut Workspace) -> Result<(), SimError> {
        Ok(self.warm.restore(sys.model, &mut ws.data)?)
    }

    /// Take one accepted step (rejecting and shrinking as the error asks).
    pub fn step(&mut self, sys: &Musculoskeletal<'_>, ws: &mut Workspace, u: Excitation<'_>) -> Result<(), SimError> {
        let mut failure = None;
        self.attempts.clear();
        loop {
            // a step that would end past a break, or leave a sliver before it, ends on it; the
            // next step follows from this one's error as any other (restored to the length
            // planned before it, the flexion took 1025 evaluations instead of 937)
            let landing =
                self.next_break(self.state.t).filter(|b| self.tol.land_on_breaks && self.state.t + 1.1 * self.h >= *b);
            let h = landing.map_or(self.h, |b| b - self.state.t);
            if h < 1e-12 {
                // the last stage's failure says more than the step's length
                return Err(failure.unwrap_or_else(|| {
                    SimError::NonFinite(format!("the adaptive step vanished at t = {} s (below 1e-12 s)", self.state.t))
                }));
            }
            self.worst = None;
            let attempt = match self.tol.method {
                Method::Ros23 => self.attempt(sys, ws, u, h),
                Method::Ros34pw2 => self.attempt_ros34pw2(sys, ws, u, h),
                Method::Euler => self.attempt_euler(sys, ws, u, h),
                Method::Bdf2 => self.attempt_bdf2(sys, ws, u, h),
            };
            let worst = attempt.as_ref().ok().and(self.worst);
            self.attempts.push(worst);
            let kind = worst.map(|i| self.lin.layout.kind(i));
            let (norm, done) = match attempt {
                Ok((norm, x, Some((xd, lin)), k1, k2)) if norm <= 1.0 => {
                    let t0 = self.state.t;
                    let t1 = landing.unwrap_or(t0 + h);
                    let start = std::mem::replace(&mut self.state, State { t: t1, x, xd });
                    let x0 = start.x;
                    let (length0, rate0) = path_lengths_and_rates(&self.lin, &x0);
                    if self.tol.jacobian_every.is_none() {
                        // every evaluation is whole: nothing is kept
                    } else if self.whole_jacobian_due() {
                        self.kept_fv_q = without_muscle_stiffness(&lin);
                        self.kept_fv_v = without_muscle_damping(&lin);
                        self.since_jacobian = 0;
                    } else {
                        self.since_jacobian += 1;
                        if self.tol.method.updates_kept_jacobian() {
                            let step = Secant { x0: &x0, x1: &self.state.x, xd0: &start.xd, xd1: &self.state.xd };
                            apart::secant_update(&mut self.kept_fv_q, &self.kept_fv_v, &lin, &step);
                        }
                    }
                    self.lin = lin;
                    self.warm.save(&ws.data);
                    self.last = Some(LastStep { t0, h, x0, k1, k2, length0, rate0 });
                    self.stats.accepted += 1;
                    self.stats.shortest = self.stats.shortest.min(h);
                    self.stats.longest = self.stats.longest.max(h);
                    (norm, true)
                }
                Ok((norm, ..)) => (norm, false),
                // a stage the kernel cannot evaluate (a wild guess of the positions): shorter
                Err(e) => {
                    self.stats.failures += 1;
                    failure = Some(e);
                    (f64::INFINITY, false)
                }
            };
            if let Some(k) = kind {
                let by = if done { &mut self.stats.limited_by } else { &mut self.stats.rejected_by };
                by[k as usize] += 1;
            }
            if !done {
                self.stats.rejected += 1;
                if norm == f64::INFINITY {
                    // a failed stage: the next attempt solves from the current state's positions
                    // and paths' warm starts, not from the solution a stage before the failure
                    // reached, from which the solves went on to fail at every shorter step
                    // (serratus anterior 1's anchor inside the thorax with serratus anterior 6 on)
                    self.warm.restore(sys.model, &mut ws.data)?;
                }
            }
            // the estimate's order k (Controller)
            let (pi, k) = (self.tol.controller == Controller::Gustafsson, self.tol.method.estimate_order());
            let factor = if norm == 0.0 {
                5.0
            } else if pi && done && self.last_norm > 0.0 {
                0.8 * norm.powf(-0.7 / k) * (self.last_norm / norm).powf(0.4 / k)
            } else {
                0.8 * norm.powf(-1.0 / k)
            }
            .clamp(0.1, self.tol.method.largest_growth());
            if done {
                self.last_norm = norm.max(1e-4);
            }
            let factor = if done { factor } else { factor.min(0.5) };
            self.h = (h * factor).min(self.tol.max_step);
            if done {
                return Ok(());
            }
        }
    }

    /// Take one accepted step that ends no later than `t_end` (s, after the current time): the
    /// step is shortened to land on it, where the excitations change course (a control
    /// interval's end). The controller's step is kept for the next step when the shortened one
    /// passed at once.
    pub fn step_until(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        t_end: f64,
    ) -> Result<(), SimError> {
        let room = t_end - self.state.t;
        if !(room > 0.0) {
            return Err(SimError::NonFinite(format!("no step from {} s to {t_end} s", self.state.t)));
        }
        let (planned, rejected) = (self.h, self.stats.rejected);
        let capped = planned >= room;
        if capped {
            self.h = room;
        }
        self.step(sys, ws, u)?;
        if capped && self.stats.rejected == rejected {
            // landed: on the end exactly, not a rounding away from it
            self.state.t = t_end;
            self.h = self.h.max(planned).min(self.tol.max_step);
        }
        Ok(())
    }

    /// Whether the step being taken ends with the whole Jacobian.
    fn whole_jacobian_due(&self) -> bool {
        self.tol.jacobian_every.is_none_or(|k| self.since_jacobian + 1 >= k)
    }

    /// The rate and linearization of the new state `xn` (len) at `t1` (s), `guess` (len) its
    /// rate's guess: the whole linearization when due, else the rate with the kept kernel blocks.
    /// The caller counts the evaluation.
    fn rate_at_end(
        &self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        xn: &[f64],
        t1: f64,
        guess: &[f64],
    ) -> Result<(Vec<f64>, Linearization), SimError> {
        if self.whole_jacobian_due() {
            sys.consistent(ws, xn, t1, u, guess)
        } else {
            sys.consistent_rate(ws, xn, t1, u, &self.kept_fv_q, &self.kept_fv_v)
        }
    }

    fn attempt(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        h: f64,
    ) -> Result<Attempt, SimError> {
        let l = self.lin.layout;
        let (t, x, f0) = (self.state.t, &self.state.x, &self.state.xd);
        let hd = h * D;
        let tt = self.time_partial(u, h);
        let r1: Vec<f64> = (0..l.len()).map(|i| f0[i] + hd * tt[i]).collect();
        // one factorization for the attempt's four solves
        let w = self.lin.factor(hd)?;
        let k1 = w_solve(&w, hd, &r1)?;
        let x1: Vec<f64> = (0..l.len()).map(|i| x[i] + 0.5 * h * k1[i]).collect();
        self.stats.evaluations += 1;
        // the stage's Jacobian is not kept: its rate alone
        let f1 = if self.tol.jacobian_every.is_none() {
            self.stats.jacobians += 1;
            sys.consistent(ws, &x1, t + 0.5 * h, u, &k1)?.0
        } else {
            sys.rate_alone(ws, &x1, t + 0.5 * h, u)?
        };
        let r2: Vec<f64> = (0..l.len()).map(|i| f1[i] - k1[i]).collect();
        let k2: Vec<f64> = w_solve(&w, hd, &r2)?.iter().zip(&k1).map(|(a, b)| a + b).collect();
        let xn: Vec<f64> = (0..l.len()).map(|i| x[i] + h * k2[i]).collect();
        if let Some(i) = xn.iter().position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(sys.state_name(i)));
        }
        self.stats.evaluations += 1;
        self.stats.jacobians += usize::from(self.whole_jacobian_due());
        let (f2, lin2) = self.rate_at_end(sys, ws, u, &xn, t + h, &k2)?;
        let r3: Vec<f64> =
            (0..l.len()).map(|i| f2[i] - E32 * (k2[i] - f1[i]) - 2.0 * (k1[i] - f0[i]) + hd * tt[i]).collect();
        let k3 = w_solve(&w, hd, &r3)?;
        let err: Vec<f64> = (0..l.len()).map(|i| h / 6.0 * (k1[i] - 2.0 * k2[i] + k3[i])).collect();
        // the estimate filtered by W⁻¹ (as Hairer & Wanner's RADAU5 filters its own): the stiff
        // components' estimate, large where the explicit F₂ enters it, is damped as the step damps them
        let err = w_solve(&w, hd, &err)?;
        let (norm, worst) = self.error_norm(h, x, &xn, &err);
        self.worst = Some(worst);
        Ok((norm, xn, Some((f2, lin2)), k1, k2))
    }

    /// The largest error of `err` (len) relative to the tolerance of a step of `h` (s) from `x`
    /// to `xn` (len each), and the state it is of (the first of the largest).
    fn error_norm(&self, h: f64, x: &[f64], xn: &[f64], err: &[f64]) -> (f64, usize) {
        let l = self.lin.layout;
        // the rates' error weighted by the step, what it moves the coordinates by over one step:
        // the coordinates, not their rates, are what the tolerance is on (unweighted, the rates
        // driven by the stiff tendons and contact took 2.5 times the evaluations on the flexion)
        let rtol = self.tol.rtol;
        // the weight and tolerance are the kind's, read once a kind (Tolerances::weight)
        [0, l.v(), l.s(), l.a()].into_iter().zip([l.v(), l.s(), l.a(), l.len()]).fold(
            (0.0f64, 0),
            |(mut m, mut k), (start, end)| {
                if start < end {
                    let (w, atol) = self.tol.weight(l, start, h);
                    for i in start..end {
                        let tol = atol + rtol * (w * x[i]).abs().max((w * xn[i]).abs());
                        let v = (w * err[i] / tol).abs();
                        let v = if v.is_nan() { f64::INFINITY } else { v };
                        if v > m {
                            (m, k) = (v, i);
                        }
                    }
                }
                (m, k)
            },
        )
    }

    /// `T = ∂F/∂t` (len) over a step of `h` (s): through the excitations, their secant over the
    /// step, `∂f_a/∂u u̇` moved across.
    fn time_partial(&self, u: Excitation<'_>, h: f64) -> Vec<f64> {
        let (l, t) = (self.lin.layout, self.state.t);
        let (mut u0, mut u1) = (vec![0.0; l.m], vec![0.0; l.m]);
        u(t, &mut u0);
        u(t + h, &mut u1);
        let mut tt = vec![0.0; l.len()];
        for k in 0..l.m {
            tt[l.a() + k] = -self.lin.activation[k].1 * (u1[k] - u0[k]) / h;
        }
        tt
    }

    /// An attempt of ROS34PW2 ([`rosw`]): the stages for the rate alone (or whole with
    /// `jacobian_every` `None`), the new state's rate and Jacobian evaluated only when the error
    /// passes. `k1` of the attempt is `F(x_n)`, `k2` empty (the dense output is Hermite's).
    fn attempt_ros34pw2(
        &mut self,
        sys: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        u: Excitation<'_>,
        h: f64,
    ) -> Result<Attempt, SimError> {
        let tt = self.time_partial(u, h);
        let tab = rosw::ROS34PW2.transformed();
        let (t, x, f0) = (self.state.t, &self.state.x, &self.state.xd);
        let (lin, whole) = (&self.lin, self.tol.jacobian_every.is_none());
        let mut evaluations = 0;
        let mut last_rate = Vec::new();
        let w = lin.factor(h * tab.gamma)?;
        let mut solve = |r: &[f64]| w_solve(&w, h * tab.gamma, r);
        let mut eval = |th: f64, y: &[f64]| {
            evaluations += 1;
            let rate =
                if whole { sys.consistent(ws, y, t + th * h, u, f0)?.0 } else { sys.rate_alone(ws, y, t + th * h, u)? };
            last_rate.clone_from(&rate);
            Ok(rate)
        };
        let stepped = rosw::step(&tab, h, x, f0, &tt, &mut solve, &mut eval);
        self.stats.evaluations += evaluations;
        if whole {
            self.stats.jacobians += evaluations;
        }
        let (xn, err) = stepped?;
        if let Some(i) = xn.iter().position(|v| !v.is_finite()) {
            return Err(SimError::NonFinite(sys.state_name(i)));
        }
        // filtered by W⁻¹ as ROS2(3)'s (unfiltered: 2229 evaluations against 2395 on the flexion,
        // within the count's spread with the last bits; forward-dynamics.md)
        let err = w_solve(&w, h * tab.gamma, &err)?;
        let (norm, worst) = self.error_norm(h, x, &xn, &err);
        self.worst = Some(worst);
        let f0 = f0.clone();
        if norm > 1.0 {
            return Ok((norm, xn, None, f0, Vec::new()));
        }
        // the last stage's rate: a guess of the new state's (its argument is x_{n+1} less u_4)
        self.stats.evaluations += 1;
        self.stats.jacobians += usize::from(self.whole_jacobian_due());
        let end = self.rate_at_end(sys, ws, u, &xn, t + h, &last_rate)?;
        Ok((norm, xn, Some(end), f0, Vec::new()))
    }
}

/// The muscles' path lengths (m) at the state `x` of the linearization `lin` and their rates
/// `∂L/∂q v` (m/s).
fn path_lengths_and_rates(lin: &Linearization, x: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let l = lin.layout;
    let v = &x[l.v()..l.v() + l.n];
    let rates = (0..l.m).map(|k| lin.grad(k).iter().zip(v).map(|(g, v)| g * v).sum()).collect();
    (lin.length.clone(), rates)
}
