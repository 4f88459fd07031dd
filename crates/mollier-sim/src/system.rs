//! A mechanism with Hill muscles on its paths as one implicit first-order system
//! `f(x, ẋ, u) = 0` (Chadwick et al. 2014, eq. 7), with its exact partials, and the linear solve of the
//! Rosenbrock step by eliminating the muscles' states.
//!
//! State `x = (q, v, s, a)`: the generalized coordinates (n), their rates (n), and per muscle the
//! contraction state `s` and the active state `a` (m each); `u` the m excitations. The residual
//! is, in this order,
//! ```text
//! f_q = q̇ − v
//! f_v = M̄ v̇ + c − DF_xᵀ f + DF_eᵀ σ + Σ_m F_m ∂L_m/∂q      (the muscle pulls its path shorter)
//! f_s = the contraction residual of each muscle at its path length L_m(q)    (hill.rs)
//! f_a = the activation residual of each muscle
//! ```
//! `∂f/∂ẋ` is block diagonal but for `M̄`; `∂f/∂u` touches `f_a` only. A path's length and its
//! derivatives are the path element's mode and transfer functions: `L_m = L_ref + e_m`,
//! `∂L_m/∂q = DF_e` row; its second derivative enters `∂f_v/∂q` only as the geometric stiffness
//! `Σ_m F_m ∂²L_m/∂q²`, which the kernel sums without the paths' `D²F_e` rows
//! ([`mollier_core::linearize::linearize_motion_with`]). The muscle needs nothing else of the path.
//!
//! External loads that vary in time ([`ExternalForcing`]: force plates, a weight in the hand)
//! enter `f_v` as `− DF_xᵀ f_ext(t, x)` beside the model's own loads, with their part of `∂f_v/∂q`:
//! a force moves with the node it acts at and a moment's generalized force with its body's Euler
//! parameters (the kernel's, as for the model's `[loads]`), and a load whose value depends on the
//! configuration (a point fixed in space, a vector in a body's axes) adds the rest itself.

use faer::Mat;
use mollier_core::dense::{lu_in_place, lu_solve};
use mollier_core::kinematics::{KinematicsError, NewtonOptions, solve_positions_with};
use mollier_core::linearize::{VelocityPartials, linearize_motion_loaded};
use mollier_core::stiffness::evaluate_weighted;
use mollier_core::transfer::{first_order, second_order_for_dynamics};
use mollier_core::{Data, Load, ModeId, Model, pair_index};

use crate::hill::{Contraction, HillMuscle};

/// A muscle on a path: the path's length mode and its Hill model.
#[derive(Clone, Debug)]
pub struct Muscle {
    /// Name, for output.
    pub name: String,
    /// The path's elongation mode (free).
    pub mode: ModeId,
    /// The path's length in the initial configuration (m): `L = reference + e`.
    pub reference_length: f64,
    /// The muscle model.
    pub hill: HillMuscle,
}

/// Loads on the bodies that vary in time, beside the model's gravity and constant `[loads]`.
pub trait ExternalForcing: std::fmt::Debug + Send + Sync {
    /// The loads at time `t` (s) in the configuration solved in `data` (positions solved; the
    /// transfer functions need not be), as the kernel takes them (global frame), into `out`
    /// (cleared first).
    fn loads(&self, model: &Model, data: &Data, t: f64, out: &mut Vec<Load>);

    /// Add to `d_q` (n x n, `∂f_v/∂q`) the part of `∂(−DF_xᵀ f_ext)/∂q` that comes from the
    /// loads' values depending on the configuration (`−DF_xᵀ (∂f_ext/∂x) DF_x`); the kernel adds
    /// the rest. `data` holds the configuration and `DF_x`.
    fn add_partials(&self, model: &Model, data: &Data, t: f64, d_q: &mut Mat<f64>);
}

/// A mechanism and its muscles (immutable), and the external loads on it.
#[derive(Debug)]
pub struct Musculoskeletal<'m> {
    /// The kernel model.
    pub model: &'m Model,
    /// The muscles.
    pub muscles: Vec<Muscle>,
    /// Loads that vary in time, if any.
    pub loads: Option<Box<dyn ExternalForcing + 'm>>,
}

/// Why a step or an evaluation failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum SimError {
    /// The kernel could not solve or differentiate the configuration.
    #[error(transparent)]
    Kinematics(#[from] KinematicsError),
    /// The iteration matrix of the step is singular.
    #[error("the step's iteration matrix is singular{0}")]
    Singular(String),
    /// A state became NaN or infinite.
    #[error("the state is no longer finite: {0}")]
    NonFinite(String),
    /// A state, rate or excitation vector of the wrong length.
    #[error("{what} has {got} values, the system {expected}")]
    Length {
        /// Which vector.
        what: &'static str,
        /// Its length.
        got: usize,
        /// The length the system needs.
        expected: usize,
    },
    /// A muscle has no isometric equilibrium at its path length (the path is shorter than the
    /// tendon and fibres can be).
    #[error("muscle `{0}` has no equilibrium at its path length {1:.6} m")]
    NoEquilibrium(String, f64),
}

/// Index ranges of the state vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Generalized coordinates.
    pub n: usize,
    /// Muscles.
    pub m: usize,
}

impl Layout {
    /// Length of `x`.
    pub fn len(&self) -> usize {
        2 * self.n + 2 * self.m
    }
    /// Whether the state has no variables.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Offset of `v`.
    pub fn v(&self) -> usize {
        self.n
    }
    /// Offset of `s`.
    pub fn s(&self) -> usize {
        2 * self.n
    }
    /// Offset of `a`.
    pub fn a(&self) -> usize {
        2 * self.n + self.m
    }
    /// The kind of state `i` (an index of `x`, below [`Self::len`]).
    pub fn kind(&self, i: usize) -> StateKind {
        StateKind::ALL[[self.v(), self.s(), self.a()].iter().filter(|&&start| i >= start).count()]
    }
}

/// The kinds of state in `x`, in the layout's order (`kind as usize` indexes per-kind counts).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum StateKind {
    /// A coordinate `q` (rad or m).
    Coordinate,
    /// A velocity `v` (rad/s or m/s).
    Velocity,
    /// A muscle's contraction state `s` (m).
    Contraction,
    /// A muscle's activation `a` (1).
    Activation,
}

impl StateKind {
    /// Every kind, in the layout's order.
    pub const ALL: [StateKind; 4] = [Self::Coordinate, Self::Velocity, Self::Contraction, Self::Activation];

    /// The kind's name in outputs (`summary.json`): `coordinates`, `velocities`,
    /// `contraction_states`, `activations`.
    pub fn name(self) -> &'static str {
        ["coordinates", "velocities", "contraction_states", "activations"][self as usize]
    }
}

/// The residual at one `(x, ẋ, u)` and everything its partials and the muscles' outputs need.
#[derive(Clone, Debug)]
pub struct Linearization {
    /// The layout of `x`.
    pub layout: Layout,
    /// `f` (len).
    pub f: Vec<f64>,
    /// `M̄` (n x n).
    pub mass: Mat<f64>,
    /// `∂f_v/∂q` (n x n), muscles included.
    pub fv_q: Mat<f64>,
    /// `∂f_v/∂v` (n x n).
    pub fv_v: Mat<f64>,
    /// `∂L_m/∂q` (m x n, row-major: muscle `k`'s row is [`Linearization::grad`]`(k)`).
    pub grad: Vec<f64>,
    /// Path lengths (m).
    pub length: Vec<f64>,
    /// Contraction residuals and partials per muscle.
    pub contraction: Vec<Contraction>,
    /// Activation partials per muscle: `(∂f_a/∂a, ∂f_a/∂u)` (`∂f_a/∂ȧ = 1`).
    pub activation: Vec<(f64, f64)>,
    /// `D²F_x(v, v)` where masses sit (n_x, as
    /// [`mollier_core::linearize::MotionLinearization::velocity_accelerations`]): for
    /// kinetostatics at this state ([`mollier_core::dynamics::kinetostatic_stresses`]).
    pub velocity_accelerations: Vec<f64>,
}

/// The workspace of a system: the kernel's `Data`.
pub struct Workspace {
    /// The kernel's data for the last configuration.
    pub data: Data,
    /// The muscles' path modes.
    modes: Vec<ModeId>,
    /// The external loads of the last evaluation.
    pub(crate) loads: Vec<Load>,
    /// How much of the velocity forces' `∂c/∂q` the evaluations form (in `fv_q`): exact in
    /// [`Musculoskeletal::workspace`], without the third-order term in
    /// [`Musculoskeletal::forward_workspace`].
    pub velocity_partials: VelocityPartials,
}

impl<'m> Musculoskeletal<'m> {
    /// The system of `model` with `muscles`.
    pub fn new(model: &'m Model, muscles: Vec<Muscle>) -> Self {
        Self { model, muscles, loads: None }
    }

    /// The system with external loads that vary in time.
    pub fn with_loads(mut self, loads: Box<dyn ExternalForcing + 'm>) -> Self {
        self.loads = Some(loads);
        self
    }

    /// The external loads at time `t` (s) in the configuration solved in `ws` into the
    /// workspace's list (empty without loads), which is returned.
    pub(crate) fn external_loads<'w>(&self, ws: &'w mut Workspace, t: f64) -> &'w [Load] {
        match &self.loads {
            Some(l) => l.loads(self.model, &ws.data, t, &mut ws.loads),
            None => ws.loads.clear(),
        }
        &ws.loads
    }

    /// The state layout.
    pub fn layout(&self) -> Layout {
        Layout { n: self.model.n_q(), m: self.muscles.len() }
    }

    /// A workspace for this system.
    pub fn workspace(&self) -> Workspace {
        let data = Data::new(self.model);
        let modes = self.muscles.iter().map(|m| m.mode).collect();
        Workspace { data, modes, loads: Vec::new(), velocity_partials: VelocityPartials::Exact }
    }

    /// A workspace for the Rosenbrock steps, fixed and error-controlled: its `∂f_v/∂q` leaves out
    /// the velocity forces' third-order term ([`VelocityPartials::WithoutThirdOrder`], on the
    /// shoulder 56 % of a moving evaluation), which a linearly implicit step does without; the
    /// residual and every other partial are the same.
    pub fn forward_workspace(&self) -> Workspace {
        Workspace { velocity_partials: VelocityPartials::WithoutThirdOrder, ..self.workspace() }
    }

    /// Evaluate `f(x, ẋ, u)` and its partials at time 0 (the time matters only to external
    /// loads: [`Self::linearize_at`]).
    pub fn linearize(&self, ws: &mut Workspace, x: &[f64], xd: &[f64], u: &[f64]) -> Result<Linearization, SimError> {
        self.linearize_at(ws, 0.0, x, xd, u)
    }

    /// Evaluate `f(x, ẋ, u)` and its partials at time `t` (s).
    pub fn linearize_at(
        &self,
        ws: &mut Workspace,
        t: f64,
        x: &[f64],
        xd: &[f64],
        u: &[f64],
    ) -> Result<Linearization, SimError> {
        let layout = self.layout();
        let Layout { n, m } = layout;
        for (what, got, expected) in [("x", x.len(), layout.len()), ("ẋ", xd.len(), layout.len()), ("u", u.len(), m)]
        {
            if got != expected {
                return Err(SimError::Length { what, got, expected });
            }
        }
        let (q, v) = (&x[..n], &x[n..2 * n]);
        // the paths are evaluated once, at the solution, with their Hessians: their lengths and
        // moment arms give the muscles' forces, and the forces weight the Hessians in the
        // geometric stiffness Σ F_m ∂²L_m/∂q² (∂f_v/∂q), without the paths' second-order
        // transfer functions
        let opts = NewtonOptions { free_elements: false, ..NewtonOptions::default() };
        solve_positions_with(self.model, &mut ws.data, q, &opts)?;
        evaluate_weighted(self.model, &mut ws.data, &ws.modes)?;
        first_order(self.model, &mut ws.data)?;
        // the loads once every point is placed (the free elements' evaluation places the points
        // the constraints do not need)
        self.external_loads(ws, t);
        let data = &ws.data;
        // DF_e's columns (n_e each): a muscle's row read across them
        let dfe: Vec<&[f64]> =
            (0..n).map(|j| data.df_e().col(j).try_as_col_major().expect("contiguous").as_slice()).collect();
        let mut grad = Vec::with_capacity(m * n);
        let mut length = Vec::with_capacity(m);
        let mut contraction = Vec::with_capacity(m);
        let mut activation = Vec::with_capacity(m);
        let mut f = vec![0.0; layout.len()];
        for (k, mu) in self.muscles.iter().enumerate() {
            let r = mu.mode.index();
            let l = mu.reference_length + data.e()[r];
            let (s, a) = (x[layout.s() + k], x[layout.a() + k]);
            grad.extend(dfe.iter().map(|col| col[r]));
            // a rigid tendon's force moves with the path's velocity L̇ = DF_e v
            let rate = if mu.hill.is_rigid() { dot(&grad[k * n..], v) } else { 0.0 };
            let c = mu.hill.row(a, s, xd[layout.s() + k], l, rate);
            let (fa, da, _, du) = mu.hill.activation(a, xd[layout.a() + k], u[k]);
            f[layout.s() + k] = c.residual;
            f[layout.a() + k] = fa;
            length.push(l);
            contraction.push(c);
            activation.push((da, du));
        }
        let tensions: Vec<(ModeId, f64)> =
            self.muscles.iter().zip(&contraction).map(|(mu, c)| (mu.mode, c.force)).collect();
        let loads = std::mem::take(&mut ws.loads);
        let lin = linearize_motion_loaded(
            self.model,
            &mut ws.data,
            v,
            &xd[n..2 * n],
            &tensions,
            &loads,
            ws.velocity_partials,
        );
        ws.loads = loads;
        let lin = lin?;
        let mut fv_q = lin.d_q;
        if let Some(l) = &self.loads {
            l.add_partials(self.model, &ws.data, t, &mut fv_q);
        }
        let mut fv_v = lin.d_v;
        if self.muscles.iter().any(|mu| mu.hill.is_rigid()) {
            // rigid tendons: Σ (∂F_m/∂L̇_m) ∂L_m/∂q ∂L_m/∂qᵀ, and through L̇ = DF_e v in q
            add_weighted_gram(&mut fv_v, &grad, contraction.iter().map(|c| c.force_d_rate));
            if ws.velocity_partials == VelocityPartials::Exact {
                self.add_rate_stiffness(&mut ws.data, v, &grad, &contraction, &mut fv_q)?;
            }
        }
        for i in 0..n {
            f[i] = xd[i] - v[i];
            f[n + i] = lin.residual[i];
        }
        for (c, g) in contraction.iter().zip(grad.chunks_exact(n.max(1))) {
            for i in 0..n {
                f[n + i] += c.force * g[i];
            }
        }
        // Σ_m (∂F_m/∂L_m) ∂L_m/∂q ∂L_m/∂qᵀ
        add_weighted_gram(&mut fv_q, &grad, contraction.iter().map(|c| c.force_d_length));
        Ok(Linearization {
            layout,
            f,
            mass: lin.mass,
            fv_q,
            fv_v,
            grad,
            length,
            contraction,
            activation,
            velocity_accelerations: lin.velocity_accelerations,
        })
    }
}

impl Musculoskeletal<'_> {
    /// Add to `fv_q` (n x n) the rigid tendons' `Σ_m (∂F_m/∂L̇_m) ∂L_m/∂q (D²F_e,m v)ᵀ`: their
    /// forces move with `L̇_m = DF_e,m v`, whose partial in `q` is the path's second derivative
    /// along `v` (the kernel's `D²F_e`, formed here; 0 at rest). `data` holds the configuration
    /// and `grad` the paths' `DF_e` rows (m x n).
    fn add_rate_stiffness(
        &self,
        data: &mut Data,
        v: &[f64],
        grad: &[f64],
        contraction: &[Contraction],
        fv_q: &mut Mat<f64>,
    ) -> Result<(), SimError> {
        let n = v.len();
        if v.iter().all(|x| *x == 0.0) || contraction.iter().all(|c| c.force_d_rate == 0.0) {
            return Ok(());
        }
        second_order_for_dynamics(self.model, data)?;
        let d2 = data.d2f_e();
        for ((mu, c), g) in self.muscles.iter().zip(contraction).zip(grad.chunks_exact(n)) {
            if c.force_d_rate == 0.0 {
                continue;
            }
            let r = mu.mode.index();
            for j in 0..n {
                let hv: f64 = (0..n).map(|i| d2[(r, pair_index(i, j, n))] * v[i]).sum();
                for (i, gi) in g.iter().enumerate() {
                    fv_q[(i, j)] += c.force_d_rate * gi * hv;
                }
            }
        }
        Ok(())
    }
}

/// `a · b` over the shorter.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

impl Linearization {
    /// `∂L_m/∂q` of muscle `k` (n).
    pub fn grad(&self, k: usize) -> &[f64] {
        let n = self.layout.n;
        &self.grad[k * n..(k + 1) * n]
    }

    /// `∂f/∂x`, `∂f/∂ẋ` and `∂f/∂u` as dense matrices (len x len, len x len, len x m), for tests
    /// and inspection; the step uses the blocks.
    pub fn dense(&self) -> (Mat<f64>, Mat<f64>, Mat<f64>) {
        let l = self.layout;
        let (n, m, len) = (l.n, l.m, l.len());
        let mut fx = Mat::<f64>::zeros(len, len);
        let mut fxd = Mat::<f64>::zeros(len, len);
        let mut fu = Mat::<f64>::zeros(len, m);
        for i in 0..n {
            fx[(i, n + i)] = -1.0;
            fxd[(i, i)] = 1.0;
            for j in 0..n {
                fx[(n + i, j)] = self.fv_q[(i, j)];
                fx[(n + i, n + j)] = self.fv_v[(i, j)];
                fxd[(n + i, n + j)] = self.mass[(i, j)];
            }
        }
        for k in 0..m {
            let c = &self.contraction[k];
            let (rs, ra) = (l.s() + k, l.a() + k);
            for (i, g) in self.grad(k).iter().enumerate() {
                fx[(n + i, rs)] = c.force_d_s * g;
                fx[(n + i, ra)] = c.force_d_a * g;
                fx[(rs, i)] = c.d_length * g;
            }
            fx[(rs, rs)] = c.d_s;
            fx[(rs, ra)] = c.d_a;
            fxd[(rs, rs)] = c.d_sdot;
            fx[(ra, ra)] = self.activation[k].0;
            fxd[(ra, ra)] = 1.0;
            fu[(ra, k)] = self.activation[k].1;
        }
        (fx, fxd, fu)
    }

    /// The state matrix of the explicit form `ẋ = F(x, u)`: `J = ∂F/∂x = −(∂f/∂ẋ)⁻¹ ∂f/∂x`
    /// (implicit differentiation of `f(x, F(x, u), u) = 0`) over the differential states, dense.
    /// A rigid tendon's contraction row is algebraic (`∂f_s/∂ṡ = 0`: the fibre follows the path)
    /// and nothing else depends on its `s`; those states are left out, the rest form a closed
    /// system whose `J` this is.
    ///
    /// `J` is exact only where `self` is a whole linearization at the consistent rate: from
    /// [`Musculoskeletal::consistent`] with [`Musculoskeletal::workspace`] (the velocity forces'
    /// third-order term in `∂f_v/∂q`) and that rate as its guess (`∂f_v/∂q` carries the inertia
    /// of the guessed `v̇`). The adaptive integrator's own linearizations are not: they keep
    /// kernel blocks from earlier steps and leave the third-order term out.
    ///
    /// Errors: [`SimError::Singular`] when the mass matrix is.
    pub fn state_matrix(&self) -> Result<StateMatrix, SimError> {
        let l = self.layout;
        let (n, len) = (l.n, l.len());
        let (fx, fxd, _) = self.dense();
        let algebraic = |i: usize| l.kind(i) == StateKind::Contraction && fxd[(i, i)] == 0.0;
        let states: Vec<usize> = (0..len).filter(|&i| !algebraic(i)).collect();
        let mass = PartialPivoting::factor(&self.mass).ok_or_else(|| SimError::Singular(" (mass matrix)".into()))?;
        let mut j = Mat::<f64>::zeros(states.len(), states.len());
        for (c, &sc) in states.iter().enumerate() {
            // the v rows through M̄⁻¹, the others' ∂f/∂ẋ is diagonal (1, ∂f_s/∂ṡ, 1)
            let fv: Vec<f64> = (0..n).map(|i| fx[(n + i, sc)]).collect();
            let dv = mass.solve(&fv).ok_or_else(|| SimError::Singular(" (mass matrix)".into()))?;
            for (r, &sr) in states.iter().enumerate() {
                j[(r, c)] = if l.kind(sr) == StateKind::Velocity { -dv[sr - n] } else { -fx[(sr, sc)] / fxd[(sr, sr)] };
            }
        }
        Ok(StateMatrix { states, j })
    }

    /// Solve `(∂f/∂x + ∂f/∂ẋ / h) Δ = rhs` by eliminating, in turn, the activations (diagonal),
    /// the contraction states (one per muscle, coupled to `q` only), and `v` (`Δv = Δq/h − r_q`):
    /// what is left is one dense n x n system. `O(m n² + n³)`; [`Self::factor`] once and
    /// [`Factored::solve`] for several right-hand sides at one `h`.
    pub fn solve(&self, h: f64, rhs: &[f64]) -> Result<Vec<f64>, SimError> {
        self.factor(h)?.solve(rhs)
    }

    /// The matrix of [`Self::solve`] at `h` (s), reduced to `q` and factored (`O(m n² + n³)`):
    /// each [`Factored::solve`] is then `O(m n + n²)`.
    pub fn factor(&self, h: f64) -> Result<Factored<'_>, SimError> {
        let (n, m) = (self.layout.n, self.layout.m);
        let mut a_ss = vec![0.0; m];
        for (k, c) in self.contraction.iter().enumerate() {
            a_ss[k] = c.d_s + c.d_sdot / h;
            if a_ss[k] == 0.0 || !a_ss[k].is_finite() {
                return Err(SimError::Singular(format!(" (contraction of muscle #{k})")));
            }
        }
        // the v rows with Δv = Δq/h − r_q: (f_vq + f_vv/h + M/h² − Σ F_s d_L g gᵀ / A_ss) Δq
        let mut k_mat = Mat::<f64>::zeros(n, n);
        let mut fvv = Mat::<f64>::zeros(n, n);
        for j in 0..n {
            let (fv, ms, fq) = (self.fv_v.col_as_slice(j), self.mass.col_as_slice(j), self.fv_q.col_as_slice(j));
            let (kc, vc) = (k_mat.col_as_slice_mut(j), fvv.col_as_slice_mut(j));
            for i in 0..n {
                vc[i] = fv[i] + ms[i] / h;
                kc[i] = fq[i] + vc[i] / h;
            }
        }
        let gt = transposed(&self.grad, n);
        add_weighted_gram_of(
            &mut k_mat,
            &gt,
            self.contraction.iter().zip(&a_ss).map(|(c, a)| -(c.force_d_s / a) * c.d_length),
        );
        let lu = PartialPivoting::factor(&k_mat).ok_or_else(|| SimError::Singular(String::new()))?;
        Ok(Factored { lin: self, h, a_ss, fvv, gt, lu })
    }
}

/// The explicit form's state matrix at one state ([`Linearization::state_matrix`]).
#[derive(Clone, Debug)]
pub struct StateMatrix {
    /// The differential states, as indices of `x` (increasing): all but the contraction states
    /// of rigid tendons.
    pub states: Vec<usize>,
    /// `J` (states x states): entry `(r, c)` is `∂F_i/∂x_k` with `i = states[r]`, `k = states[c]`,
    /// in the unit of `x_i` per second per unit of `x_k` (`q`: rad or m, `v`: rad/s or m/s,
    /// `s`: m, `a`: 1); its eigenvalues are the modes' rates (s⁻¹).
    pub j: Mat<f64>,
}

/// [`Linearization::solve`]'s matrix at one `h`, factored ([`Linearization::factor`]).
pub struct Factored<'a> {
    lin: &'a Linearization,
    h: f64,
    /// `∂f_s/∂s + ∂f_s/∂ṡ / h` per muscle (m).
    a_ss: Vec<f64>,
    /// `∂f_v/∂v + M̄ / h` (n x n).
    fvv: Mat<f64>,
    /// The muscles' `∂L_m/∂q` transposed: row `i` the `m` values of `∂L/∂q_i` (n x m, row-major),
    /// so that both products with it in a solve run along the muscles.
    gt: Vec<f64>,
    /// The reduced matrix of `Δq`'s system.
    lu: PartialPivoting,
}

impl Factored<'_> {
    /// The linearization factored.
    pub fn linearization(&self) -> &Linearization {
        self.lin
    }

    /// `Δ` (len) with `(∂f/∂x + ∂f/∂ẋ / h) Δ = rhs` (len).
    pub fn solve(&self, rhs: &[f64]) -> Result<Vec<f64>, SimError> {
        let (lin, h) = (self.lin, self.h);
        let l = lin.layout;
        let (n, m) = (l.n, l.m);
        if rhs.len() != l.len() {
            return Err(SimError::Length { what: "right-hand side", got: rhs.len(), expected: l.len() });
        }
        let mut out = vec![0.0; l.len()];
        let (r_q, r_v, r_s, r_a) = (&rhs[..n], &rhs[n..2 * n], &rhs[l.s()..l.a()], &rhs[l.a()..]);
        let (o_qv, o_sa) = out.split_at_mut(l.s());
        let (o_s, o_a) = o_sa.split_at_mut(m);
        // activations: (∂f_a/∂a + 1/h) Δa = r_a
        for ((o, r), act) in o_a.iter_mut().zip(r_a).zip(&lin.activation) {
            *o = r / (act.0 + 1.0 / h);
        }
        // contraction: A_ss Δs + c.d_a Δa + c.d_length g·Δq = r_s  →  Δs = (b_s − c.d_length g·Δq) / A_ss
        let b_s: Vec<f64> = r_s.iter().zip(&lin.contraction).zip(&*o_a).map(|((r, c), da)| r - c.d_a * da).collect();
        // r_v + (f_vv + M/h) r_q − Σ F_s g b_s / A_ss
        let mut b = r_v.to_vec();
        for (j, rj) in r_q.iter().enumerate() {
            for (bi, v) in b.iter_mut().zip(self.fvv.col_as_slice(j)) {
                *bi += v * rj;
            }
        }
        // Σ g (F_s b_s / A_ss + F_a Δa): a rigid tendon's force moves with its activation too
        // (force_d_a, 0 if elastic)
        let pull: Vec<f64> = lin
            .contraction
            .iter()
            .zip(&self.a_ss)
            .zip(b_s.iter().zip(&*o_a))
            .map(|((c, a_ss), (bs, da))| c.force_d_s / a_ss * bs + c.force_d_a * da)
            .collect();
        for (bi, row) in b.iter_mut().zip(self.gt.chunks_exact(m.max(1))) {
            *bi -= dot4(row, &pull);
        }
        let dq = self.lu.solve(&b).ok_or_else(|| SimError::Singular(String::new()))?;
        let (o_q, o_v) = o_qv.split_at_mut(n);
        for (((oq, ov), d), r) in o_q.iter_mut().zip(o_v.iter_mut()).zip(&dq).zip(r_q) {
            *oq = *d;
            *ov = d / h - r;
        }
        // g·Δq for every muscle, a row of Gᵀ at a time
        let mut gq = vec![0.0; m];
        for (row, d) in self.gt.chunks_exact(m.max(1)).zip(&dq) {
            for (s, g) in gq.iter_mut().zip(row) {
                *s += g * d;
            }
        }
        for ((((o, bs), c), a_ss), gq) in o_s.iter_mut().zip(&b_s).zip(&lin.contraction).zip(&self.a_ss).zip(&gq) {
            *o = (bs - c.d_length * gq) / a_ss;
        }
        Ok(out)
    }
}

/// `out += Gᵀ diag(w) G` for `G` (rows of `out.ncols()` values, row-major, one per weight `w`;
/// `out` n x n, symmetric): a rank-m update. Each entry of the upper triangle is one sum over the
/// m rows, taken four rows at a time in four partial sums (vectorized; m is large, n small), then
/// mirrored.
pub(crate) fn add_weighted_gram(out: &mut Mat<f64>, g: &[f64], w: impl Iterator<Item = f64>) {
    let n = out.ncols();
    if n == 0 {
        return;
    }
    add_weighted_gram_of(out, &transposed(g, n), w);
}

/// `Gᵀ` (n x m, row-major) of `G` given as `m` rows of `n` values (row-major).
fn transposed(g: &[f64], n: usize) -> Vec<f64> {
    let mut gt = Vec::with_capacity(g.len());
    for i in 0..n {
        gt.extend(g.chunks_exact(n).map(|row| row[i]));
    }
    gt
}

/// [`add_weighted_gram`] with `G` given transposed (`gt`, n x m row-major, `n = out.ncols()`).
fn add_weighted_gram_of(out: &mut Mat<f64>, gt: &[f64], w: impl Iterator<Item = f64>) {
    let n = out.ncols();
    if n == 0 {
        return;
    }
    let m = gt.len() / n;
    // (diag(w) G)ᵀ: row i of Gᵀ weighted
    let w: Vec<f64> = w.collect();
    let mut wgt = Vec::with_capacity(n * m);
    for row in gt.chunks_exact(m.max(1)).take(n) {
        wgt.extend(row.iter().zip(&w).map(|(g, wk)| wk * g));
    }
    for i in 0..n {
        let a = &wgt[i * m..(i + 1) * m];
        for j in i..n {
            let u = dot4(a, &gt[j * m..(j + 1) * m]);
            out[(i, j)] += u;
            if j != i {
                out[(j, i)] += u;
            }
        }
    }
}

/// `a · b` (one length) in four partial sums, four values at a time, then the rest.
fn dot4(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0; 4];
    let (ac, bc) = (a.chunks_exact(4), b.chunks_exact(4));
    let tail: f64 = ac.remainder().iter().zip(bc.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ac.zip(bc) {
        for l in 0..4 {
            acc[l] += x[l] * y[l];
        }
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// Solve a small dense system `a x = b` (`a` n x n, `b` n) by LU with partial pivoting (the
/// kernel's [`mollier_core::dense::lu_in_place`]); `None` when a pivot is below `1e-14` of the
/// largest entry or the solution is not finite. The kernel's `solve_full_pivoting` (faer's fully
/// pivoted LU with residual checks) costs 17 µs more per 1 x 1 system on the step's hot path (the
/// elbow's step, 21 → 38 µs).
pub fn solve_partial_pivoting(a: &Mat<f64>, b: &[f64]) -> Option<Vec<f64>> {
    PartialPivoting::factor(a)?.solve(b)
}

/// The LU factors of [`solve_partial_pivoting`], for several right-hand sides.
struct PartialPivoting {
    n: usize,
    /// The factors (n x n, row-major) and the row permutation.
    lu: Vec<f64>,
    perm: Vec<usize>,
}

impl PartialPivoting {
    /// `None` when a pivot is below `1e-14` of the largest entry of `a` (n x n).
    fn factor(a: &Mat<f64>) -> Option<Self> {
        let n = a.nrows();
        let mut lu: Vec<f64> = (0..n * n).map(|k| a[(k / n, k % n)]).collect();
        let scale = lu.iter().fold(0.0f64, |s, v| s.max(v.abs()));
        let mut perm = vec![0; n];
        if !lu_in_place(&mut lu, n, &mut perm) || (0..n).any(|k| !(lu[k * n + k].abs() > 1e-14 * scale)) {
            return None;
        }
        Some(Self { n, lu, perm })
    }

    /// `x` (n) with `a x = b` (n); `None` when it is not finite.
    fn solve(&self, b: &[f64]) -> Option<Vec<f64>> {
        let mut x: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
        lu_solve(&self.lu, self.n, &mut x);
        x.iter().all(|v| v.is_finite()).then_some(x)
    }
}
