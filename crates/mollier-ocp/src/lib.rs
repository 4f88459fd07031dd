//! Optimal control of a mechanism with Hill muscles by direct collocation: the implicit system
//! `f(x, ẋ, u) = 0` of [`mollier_sim::system`] (Chadwick et al. 2014, eq. 7) imposed at the
//! grid's points, with ideal actuators on its coordinates, the states joined by trapezoidal or
//! Hermite-Simpson defects, and the NLP solved by IPOPT ([`mollier_ipopt`]).
//!
//! Variables per grid point `i` (`t_i = i T / (P − 1)`): `z_i = (x, ẋ, e, τ)` — the state
//! `x = (q, v, s, a)` (`2n + 2m`), its rate, the muscles' excitations `e` (m, 1) and the
//! actuators' controls `τ` (each times its optimal force: N or N m). The rates are variables, as in
//! Moco's implicit mode: the dynamics are the residual `f` itself, whose exact partials
//! (`∂f/∂x`, `∂f/∂ẋ`, `∂f/∂u`) come from the kernel's transfer functions
//! ([`mollier_sim::Linearization`]).
//!
//! Constraints, in this order:
//! - dynamics at every point: `f(x_i, ẋ_i, e_i) − B τ_i = 0` (`2n + 2m` rows; `B` puts each
//!   actuator's force on its coordinate's equation of motion);
//! - defects per interval `[t_k, t_k+1]` of length `h`:
//!   - trapezoidal (P = N + 1): `x_{k+1} − x_k − h/2 (ẋ_k + ẋ_{k+1}) = 0`;
//!   - Hermite-Simpson, separated (P = 2N + 1, the midpoint `c` a grid point):
//!     `x_c − (x_k + x_{k+1})/2 − h/8 (ẋ_k − ẋ_{k+1}) = 0`,
//!     `x_{k+1} − x_k − h/6 (ẋ_k + 4 ẋ_c + ẋ_{k+1}) = 0`, and the midpoint's controls the mean
//!     of the ends', `u_c = (u_k + u_{k+1})/2` (as Moco's default: free midpoint controls let
//!     the controls zig-zag between mesh points and midpoints, a spurious solution — on the
//!     pendulum's swing-up 0.19 rad from the refined optimum at 50 intervals).
//!
//! The objective is a quadrature of the running terms with the scheme's weights (trapezoid,
//! Simpson) plus the final terms ([`Objective`]). Its gradient and Hessian are exact; the
//! constraint Jacobian is exact, `∂c/∂q` of the velocity forces included
//! ([`mollier_sim::Linearization`] takes it from the third-order transfer functions). The
//! Hessian of the Lagrangian is
//! exact where the system allows it ([`exact_hessian`]: one translation, or one rotation about a
//! fixed axis with its muscles and its hinge's law), else IPOPT's limited-memory approximation
//! (OpenSim Moco's default).

use mollier_ipopt::{Nlp, Scaling, Solution, Value};
use mollier_sim::{Layout, Linearization, Musculoskeletal, SimError, Workspace};

mod cone;
mod direction;
mod free_time;
mod guess;
mod hessian;
mod markers;
mod mode;
mod position_rows;
mod scaling;
mod second_order;
pub use cone::ConeConstraint;
pub use direction::DirectionConstraint;
pub use guess::Trajectory;
pub use hessian::{HessianChoice, Motion, exact_hessian, multibody_block};
pub use markers::MarkerTracking;
pub use mode::ModeConstraint;
pub use mollier_ipopt::Multipliers;
pub use scaling::ScalingChoice;

/// The transcription's scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// Trapezoidal rule: second order.
    Trapezoidal,
    /// Hermite-Simpson, separated form (midpoints are grid points): third order in the states.
    HermiteSimpson,
}

/// An ideal actuator on one coordinate (OpenSim's `CoordinateActuator`): its generalized force
/// is `optimal_force τ`, `τ` the control.
#[derive(Clone, Debug, PartialEq)]
pub struct Actuator {
    /// Name, for output.
    pub name: String,
    /// The coordinate's index in `q`.
    pub coordinate: usize,
    /// N or N m per unit control.
    pub optimal_force: f64,
    /// Bounds of the control (`±inf` free).
    pub bounds: [f64; 2],
}

/// A state followed over time: `weight ∫ (x_state − r(t))² dt`, `r` piecewise linear.
#[derive(Clone, Debug, PartialEq)]
pub struct Tracking {
    /// Index into `x`.
    pub state: usize,
    /// Weight (per unit squared and second).
    pub weight: f64,
    /// The reference `(t, r)`, times increasing; held constant beyond its ends.
    pub reference: Vec<(f64, f64)>,
}

/// The objective: running terms integrated over the duration, and final terms.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Objective {
    /// Weight of `∫ Σ c_k e_k² dt` (muscle excitations).
    pub excitation: f64,
    /// Each muscle's factor `c_k` in the excitations' term (e.g. its volume relative to the
    /// mean); empty: 1 each.
    pub excitation_weights: Vec<f64>,
    /// Weight of `∫ Σ a³ dt` (activations).
    pub activation_cubed: f64,
    /// Weight of `∫ Σ τ² dt` (actuator controls).
    pub actuator: f64,
    /// Weight of `∫ Σ (ṡ / L_CEopt)² dt` (contraction rates in optimal fibre lengths per second):
    /// an inactive muscle's contraction row hardly depends on its rate (only through the fibres'
    /// small damping), so the rates are nearly free between the defects and alternate from
    /// point to point; a small weight pins them (as Moco's
    /// `minimize_implicit_auxiliary_derivatives`).
    pub contraction_rate: f64,
    /// Weight of `∫ Σ v̇² dt` (the coordinates' accelerations, rad/s² or m/s²): a smoothness
    /// term, as predictive simulations add to the effort (Falisse et al. 2019, gait).
    pub acceleration: f64,
    /// Tracking terms.
    pub tracking: Vec<Tracking>,
    /// Final-state targets `weight (x_state(T) − value)²`: `(state, value, weight)`.
    pub final_targets: Vec<(usize, f64, f64)>,
    /// Weight of the duration `T` (per second; with [`Problem::duration_bounds`]).
    pub time: f64,
    /// Model points tracked (`markers.rs`).
    pub markers: Vec<MarkerTracking>,
}

/// A direct collocation problem over a musculoskeletal system.
pub struct Problem<'s, 'm> {
    /// The mechanism and its muscles.
    pub system: &'s Musculoskeletal<'m>,
    /// Ideal actuators.
    pub actuators: Vec<Actuator>,
    /// Duration (s): fixed, or the guess of a free one.
    pub duration: f64,
    /// `Some([lower, upper])` (s): the duration is free within these bounds, an NLP variable
    /// (`free_time.rs`).
    pub duration_bounds: Option<[f64; 2]>,
    /// Number of intervals (mesh), ≥ 1.
    pub intervals: usize,
    /// The scheme.
    pub scheme: Scheme,
    /// The objective.
    pub objective: Objective,
    /// Bounds of each state at every point (`2n + 2m`).
    pub state_bounds: Vec<[f64; 2]>,
    /// States fixed at the start (`None`: within `state_bounds`).
    pub initial: Vec<Option<f64>>,
    /// `true`: the first point's rates of `v`, `s` and `a` are 0 (`v̇ = 0`, `ṡ = 0`, `ȧ = 0`):
    /// the start is an equilibrium the muscles hold, their activations equal to their
    /// excitations, so that a free initial activation costs effort.
    pub initial_equilibrium: bool,
    /// `true`: the last point's rates of `v`, `s` and `a` are 0: the end is an equilibrium the
    /// muscles hold, as [`Problem::initial_equilibrium`] the start.
    pub final_equilibrium: bool,
    /// States fixed at the end.
    pub final_state: Vec<Option<f64>>,
    /// Bounds of every excitation.
    pub excitation_bounds: [f64; 2],
    /// The Hessian of the Lagrangian IPOPT is given.
    pub hessian: HessianChoice,
    /// A joint cone the joint force keeps within at every point (`cone.rs`), if any.
    pub cone: Option<ConeConstraint>,
    /// Directions between model points held within bands about planes at every point
    /// (`direction.rs`).
    pub directions: Vec<DirectionConstraint>,
    /// Free modes held within bounds at every point (`mode.rs`).
    pub modes: Vec<ModeConstraint>,
}

/// Why a problem could not be set up or solved.
#[derive(Debug, thiserror::Error)]
pub enum OcpError {
    /// A vector or index of the wrong size.
    #[error("{0}")]
    Shape(String),
    /// The system could not be evaluated at the start.
    #[error(transparent)]
    System(#[from] SimError),
    /// IPOPT could not run.
    #[error(transparent)]
    Ipopt(#[from] mollier_ipopt::Error),
    /// The system has what the transcription does not take.
    #[error("{0}")]
    Unsupported(String),
}

/// Why the transcription cannot take `system`'s muscles, if it cannot: a rigid tendon (its
/// force's partials and second partials are not the contraction residual's, which the
/// transcription's Jacobian and Hessian are written from).
pub fn unsupported_muscles(system: &Musculoskeletal<'_>) -> Option<String> {
    let rigid: Vec<&str> = system.muscles.iter().filter(|m| m.hill.is_rigid()).map(|m| m.name.as_str()).collect();
    (!rigid.is_empty()).then(|| {
        format!("rigid tendons are not taken by the optimal control transcription (elastic only): {}", rigid.join(", "))
    })
}

/// One grid point of a solution.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    /// Time (s).
    pub time: f64,
    /// The state `(q, v, s, a)`.
    pub x: Vec<f64>,
    /// Its rate.
    pub xd: Vec<f64>,
    /// Excitations.
    pub excitations: Vec<f64>,
    /// Actuator controls.
    pub controls: Vec<f64>,
}

/// A solved problem.
#[derive(Clone, Debug)]
pub struct Solved {
    /// The grid points.
    pub points: Vec<Point>,
    /// IPOPT's result (status, objective, iteration table).
    pub ipopt: Solution,
    /// The largest dynamics and defect residual at the solution.
    pub max_residual: [f64; 2],
    /// The exact Hessian's case, or why IPOPT's approximation was used.
    pub hessian: Result<Motion, String>,
    /// The joint force in the cone frame (N) at every point, with a [`ConeConstraint`].
    pub cone: Vec<[f64; 3]>,
    /// The scaling IPOPT was given ([`ScalingChoice::Physical`]), or `None` (its own).
    pub scaling: Option<Scaling>,
}

/// Where an earlier run of the same problem stopped: the multipliers of its iterate and the
/// scaling it was solved with, for [`Problem::solve_warm`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WarmStart {
    /// The constraints' and the bounds' multipliers.
    pub multipliers: Multipliers,
    /// Its scaling ([`Solved::scaling`]); `None` computes the physical one at the start.
    pub scaling: Option<Scaling>,
}

/// Where the iterations start.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Guess {
    /// The states linear from the initial values to the final ones (each missing end taken from
    /// the rest state), the rates their slope.
    #[default]
    Linear,
    /// Every point at the rest state, at rest (OpenSim Moco's default guess is the bounds'
    /// midpoints, the same for the problems it is compared on).
    Rest,
    /// As [`Guess::Linear`], with each tracked state on its reference at every point (a tracked
    /// coordinate's velocity the reference's slope), the muscles at each point in isometric
    /// equilibrium at the guess's excitation (a static solution), and every rate the centred
    /// difference of its state over the grid.
    Reference,
    /// As [`Guess::Linear`], with the states and excitations a [`Trajectory`] has sampled at the
    /// points, every rate the centred difference of its state over the grid.
    Trajectory(Trajectory),
    /// The [`Transcription`]'s variables.
    Variables(Vec<f64>),
}

/// The NLP of a [`Problem`]: what IPOPT sees. Public so that its derivatives can be checked.
pub struct Transcription<'p, 's, 'm> {
    p: &'p Problem<'s, 'm>,
    layout: Layout,
    /// Points of the grid.
    points: usize,
    /// Variables per point.
    nz: usize,
    /// Quadrature weights per point.
    weights: Vec<f64>,
    /// Tracking references at the points: per tracking term, per point.
    refs: Vec<Vec<f64>>,
    /// The markers' references at the points: per marker, per point (m).
    marker_refs: Vec<Vec<[f64; 3]>>,
    /// The markers at the points of the last linearization.
    markers: markers::MarkerCache,
    /// One point's Hessian slots (shared, so that the Hessian's evaluation borrows them beside
    /// `&mut self`).
    slots: std::sync::Arc<hessian::Slots>,
    /// One point's dynamics pattern: (row in the point's block, column in `z`).
    pattern: Vec<(usize, usize)>,
    ws: Workspace,
    /// The linearizations at the last `x` (per point) and that `x`.
    cache: Option<(Vec<f64>, Vec<Linearization>)>,
    /// The exact Hessian's case, or why IPOPT approximates it.
    hessian: Result<Motion, String>,
    /// IPOPT's user scaling, if any.
    scaling: Option<Scaling>,
    /// The cone constraint, checked, and its rows at the linearized points.
    cone: Option<cone::ConeSetup>,
    cone_rows: Vec<cone::ConeRows>,
    /// The rows on the positions at the linearized points: per point, per constraint
    /// (`position_rows.rs`).
    position_rows: Vec<position_rows::PositionRow>,
}

impl<'p, 's, 'm> Transcription<'p, 's, 'm> {
    /// The transcription of `p` (its sizes checked).
    pub fn new(p: &'p Problem<'s, 'm>) -> Result<Self, OcpError> {
        let layout = p.system.layout();
        let nx = layout.len();
        let shape = |what: &str, got: usize| {
            if got != nx { Err(OcpError::Shape(format!("{what} has {got} values, the state {nx}"))) } else { Ok(()) }
        };
        shape("state_bounds", p.state_bounds.len())?;
        shape("initial", p.initial.len())?;
        shape("final_state", p.final_state.len())?;
        if let Some(why) = unsupported_muscles(p.system) {
            return Err(OcpError::Unsupported(why));
        }
        if p.intervals == 0 || !(p.duration > 0.0) || !p.duration.is_finite() {
            return Err(OcpError::Shape("the mesh needs at least one interval and a positive duration".into()));
        }
        if let Some(a) = p.actuators.iter().find(|a| a.coordinate >= layout.n) {
            return Err(OcpError::Shape(format!("actuator `{}`: no coordinate #{}", a.name, a.coordinate)));
        }
        let ew = &p.objective.excitation_weights;
        if !ew.is_empty() && ew.len() != layout.m {
            return Err(OcpError::Shape(format!("{} excitation weights, {} muscles", ew.len(), layout.m)));
        }
        if let Some(w) = ew.iter().find(|w| !(**w >= 0.0 && w.is_finite())) {
            return Err(OcpError::Shape(format!("an excitation weight is finite and not negative, not {w}")));
        }
        let bad_state =
            p.objective.tracking.iter().map(|t| t.state).chain(p.objective.final_targets.iter().map(|t| t.0));
        if let Some(s) = bad_state.into_iter().find(|&s| s >= nx) {
            return Err(OcpError::Shape(format!("objective: no state #{s}")));
        }
        if let Some([lo, hi]) = p.duration_bounds {
            if !(lo > 0.0 && lo <= hi && hi.is_finite()) {
                return Err(OcpError::Shape(format!("duration bounds [{lo}, {hi}]: give 0 < lower ≤ upper < ∞")));
            }
            if !p.objective.tracking.is_empty() || !p.objective.markers.is_empty() {
                return Err(OcpError::Shape("tracking needs a fixed duration (its references' times)".into()));
            }
        }
        let model = p.system.model;
        for mk in &p.objective.markers {
            let node = model.nodes().get(mk.node.index());
            if node.is_none_or(|info| info.kind != mollier_core::element::NodeKind::Position) {
                return Err(OcpError::Shape(format!("marker `{}`: not a position node of the model", mk.name)));
            }
            let finite = mk.reference.iter().all(|(t, x)| t.is_finite() && x.iter().all(|v| v.is_finite()));
            if mk.reference.is_empty() || !finite || !(mk.weight >= 0.0 && mk.weight.is_finite()) {
                return Err(OcpError::Shape(format!("marker `{}`: a finite weight and reference", mk.name)));
            }
        }
        let points = match p.scheme {
            Scheme::Trapezoidal => p.intervals + 1,
            Scheme::HermiteSimpson => 2 * p.intervals + 1,
        };
        let h = p.duration / p.intervals as f64;
        let mut weights = vec![0.0; points];
        for k in 0..p.intervals {
            match p.scheme {
                Scheme::Trapezoidal => {
                    weights[k] += h / 2.0;
                    weights[k + 1] += h / 2.0;
                }
                Scheme::HermiteSimpson => {
                    weights[2 * k] += h / 6.0;
                    weights[2 * k + 1] += 4.0 * h / 6.0;
                    weights[2 * k + 2] += h / 6.0;
                }
            }
        }
        let dt = p.duration / (points - 1) as f64;
        let refs = p
            .objective
            .tracking
            .iter()
            .map(|t| (0..points).map(|i| interpolate(&t.reference, i as f64 * dt)).collect())
            .collect();
        let marker_refs = p
            .objective
            .markers
            .iter()
            .map(|m| (0..points).map(|i| markers::interpolate3(&m.reference, i as f64 * dt)).collect())
            .collect();
        if let Some(why) = p
            .directions
            .iter()
            .map(|d| d.check(model))
            .chain(p.modes.iter().map(|c| c.check(model)))
            .find_map(Result::err)
        {
            return Err(OcpError::Shape(why));
        }
        let nz = 2 * nx + layout.m + p.actuators.len();
        let cone = p.cone.as_ref().map(|c| cone::ConeSetup::new(p.system, c)).transpose().map_err(OcpError::Shape)?;
        let hessian = match p.hessian {
            HessianChoice::Exact if cone.is_some() => Err(cone::NO_HESSIAN.into()),
            HessianChoice::Exact => exact_hessian(p.system),
            HessianChoice::LimitedMemory => Err("as the problem asks".into()),
        };
        Ok(Self {
            p,
            layout,
            points,
            nz,
            weights,
            refs,
            marker_refs,
            markers: markers::MarkerCache::new(hessian.is_ok()),
            slots: std::sync::Arc::new(hessian::hessian_slots(layout, nz, p.objective.acceleration != 0.0)),
            pattern: dynamics_pattern(layout, &p.actuators),
            ws: p.system.workspace(),
            cache: None,
            hessian,
            scaling: None,
            cone,
            cone_rows: Vec::new(),
            position_rows: Vec::new(),
        })
    }

    /// The exact Hessian's case, or why IPOPT approximates it.
    pub fn hessian_case(&self) -> &Result<Motion, String> {
        &self.hessian
    }

    /// Grid points.
    pub fn points(&self) -> usize {
        self.points
    }

    /// Time of point `i` (s).
    pub fn time(&self, i: usize) -> f64 {
        self.p.duration * i as f64 / (self.points - 1) as f64
    }

    fn nx(&self) -> usize {
        self.layout.len()
    }

    /// Offsets in `z` of `ẋ`, `e`, `τ`.
    fn off(&self) -> (usize, usize, usize) {
        let nx = self.nx();
        (nx, 2 * nx, 2 * nx + self.layout.m)
    }

    /// Rows of the defects of one interval.
    fn defect_rows(&self) -> usize {
        match self.p.scheme {
            Scheme::Trapezoidal => self.nx(),
            Scheme::HermiteSimpson => 2 * self.nx() + self.controls(),
        }
    }

    /// Controls per point: excitations and actuator controls.
    fn controls(&self) -> usize {
        self.layout.m + self.p.actuators.len()
    }

    /// Linearize every point at `z` (cached for the same `z`).
    fn linearize(&mut self, z: &[f64]) -> Result<(), SimError> {
        if self.cache.as_ref().is_some_and(|(c, _)| c == z) {
            return Ok(());
        }
        self.cache = None;
        self.cone_rows.clear();
        self.position_rows.clear();
        self.markers.clear();
        let (xd0, e0, _) = self.off();
        let nx = self.nx();
        let mut lins = Vec::with_capacity(self.points);
        for i in 0..self.points {
            let zi = &z[i * self.nz..(i + 1) * self.nz];
            let lin =
                self.p.system.linearize(&mut self.ws, &zi[..nx], &zi[xd0..xd0 + nx], &zi[e0..e0 + self.layout.m])?;
            if lin.f.iter().any(|v| !v.is_finite()) {
                return Err(SimError::NonFinite(format!("the dynamics at t = {} s", self.time(i))));
            }
            // the markers where this point is placed (the kernel's data holds its q and DF)
            let model = self.p.system.model;
            self.markers.read(model, &mut self.ws.data, &self.p.objective.markers, self.layout.n)?;
            self.read_position_rows(i)?;
            if let Some(c) = &self.cone {
                self.cone_rows.push(c.rows(self.p.system, &mut self.ws, &lin, &zi[..nx], &zi[xd0..xd0 + nx])?);
            }
            lins.push(lin);
        }
        self.cache = Some((z.to_vec(), lins));
        Ok(())
    }

    /// A guess: the states linear from `x_start` to `x_end`, the rates their slope, excitations
    /// `e`, controls 0.
    pub fn linear_guess(&self, x_start: &[f64], x_end: &[f64], e: f64) -> Vec<f64> {
        let (xd0, e0, _) = self.off();
        let nx = self.nx();
        let mut z = vec![0.0; self.points * self.nz];
        for i in 0..self.points {
            let s = i as f64 / (self.points - 1) as f64;
            let zi = &mut z[i * self.nz..(i + 1) * self.nz];
            for j in 0..nx {
                zi[j] = x_start[j] + s * (x_end[j] - x_start[j]);
                zi[xd0 + j] = (x_end[j] - x_start[j]) / self.p.duration;
            }
            zi[e0..e0 + self.layout.m].fill(e);
        }
        if self.free_time() {
            z.push(self.p.duration);
        }
        z
    }

    /// [`Guess::Reference`] from a linear guess `z`.
    fn follow_references(&mut self, z: &mut [f64]) -> Result<(), SimError> {
        let (nx, l, nz) = (self.nx(), self.layout, self.nz);
        let last = self.points - 1;
        let dt = self.p.duration / last as f64;
        // centred differences over the grid (one-sided at the ends)
        let slope = |v: &dyn Fn(usize) -> f64, i: usize| {
            let (a, b) = (i.saturating_sub(1), (i + 1).min(last));
            (v(b) - v(a)) / ((b - a) as f64 * dt)
        };
        for (tr, r) in self.p.objective.tracking.iter().zip(&self.refs) {
            for i in 0..self.points {
                z[i * nz + tr.state] = r[i];
                if tr.state < l.n {
                    z[i * nz + l.n + tr.state] = slope(&|k| r[k], i);
                }
            }
        }
        for i in 0..self.points {
            let zi = &mut z[i * nz..(i + 1) * nz];
            let e = zi[2 * nx..2 * nx + l.m].to_vec();
            let t = self.p.duration * i as f64 / last as f64;
            let rest = self.p.system.rest_state(&mut self.ws, &zi[..l.n], t, &e)?;
            zi[l.s()..nx].copy_from_slice(&rest.x[l.s()..nx]);
        }
        self.grid_slopes(z);
        Ok(())
    }

    /// The running cost at point `i` and, if asked, its gradient into `g` (the point's `z`).
    fn running(&self, i: usize, zi: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let o = &self.p.objective;
        let (xd0, e0, t0) = self.off();
        let l = self.layout;
        let mut c = 0.0;
        let mut gbuf = grad;
        let mut add = |j: usize, v: f64, d: f64| {
            c += v;
            if let Some(g) = gbuf.as_deref_mut() {
                g[j] += d;
            }
        };
        for k in 0..l.m {
            let e = zi[e0 + k];
            let we = o.excitation * self.excitation_weight(k);
            add(e0 + k, we * e * e, 2.0 * we * e);
            let a = zi[l.a() + k];
            add(l.a() + k, o.activation_cubed * a * a * a, 3.0 * o.activation_cubed * a * a);
            let lopt = self.p.system.muscles[k].hill.params.optimal_fibre_length;
            let r = zi[xd0 + l.s() + k] / lopt;
            add(xd0 + l.s() + k, o.contraction_rate * r * r, 2.0 * o.contraction_rate * r / lopt);
        }
        for j in xd0 + l.n..xd0 + 2 * l.n {
            let r = zi[j];
            add(j, o.acceleration * r * r, 2.0 * o.acceleration * r);
        }
        for k in 0..self.p.actuators.len() {
            let t = zi[t0 + k];
            add(t0 + k, o.actuator * t * t, 2.0 * o.actuator * t);
        }
        for (tr, r) in o.tracking.iter().zip(&self.refs) {
            let d = zi[tr.state] - r[i];
            add(tr.state, tr.weight * d * d, 2.0 * tr.weight * d);
        }
        c
    }

    /// Muscle `k`'s factor in the excitations' term (1 without [`Objective::excitation_weights`]).
    fn excitation_weight(&self, k: usize) -> f64 {
        self.p.objective.excitation_weights.get(k).copied().unwrap_or(1.0)
    }

    /// The grid points of a solution vector.
    pub fn unpack(&self, z: &[f64]) -> Vec<Point> {
        let (xd0, e0, t0) = self.off();
        let nx = self.nx();
        (0..self.points)
            .map(|i| {
                let zi = &z[i * self.nz..(i + 1) * self.nz];
                Point {
                    time: self.duration_of(z) * i as f64 / (self.points - 1) as f64,
                    x: zi[..nx].to_vec(),
                    xd: zi[xd0..xd0 + nx].to_vec(),
                    excitations: zi[e0..t0].to_vec(),
                    controls: zi[t0..].to_vec(),
                }
            })
            .collect()
    }
}

/// `r(t)` of a piecewise linear reference, constant beyond its ends.
fn interpolate(r: &[(f64, f64)], t: f64) -> f64 {
    match r.iter().position(|&(ti, _)| ti >= t) {
        None => r.last().map_or(0.0, |p| p.1),
        Some(0) => r[0].1,
        Some(k) => {
            let ((t0, v0), (t1, v1)) = (r[k - 1], r[k]);
            if t1 > t0 { v0 + (v1 - v0) * (t - t0) / (t1 - t0) } else { v1 }
        }
    }
}

/// The nonzeros of one point's dynamics block `∂(f − Bτ)/∂z` (row, column in `z`), as
/// [`Linearization::dense`] fills `∂f/∂x`, `∂f/∂ẋ`, `∂f/∂u`, then the actuators.
fn dynamics_pattern(l: Layout, actuators: &[Actuator]) -> Vec<(usize, usize)> {
    let (n, m, nx) = (l.n, l.m, l.len());
    let (xd, e, t) = (nx, 2 * nx, 2 * nx + m);
    let mut p = Vec::new();
    for i in 0..n {
        p.push((i, n + i));
        p.push((i, xd + i));
    }
    for i in 0..n {
        let r = n + i;
        p.extend((0..2 * n).map(|j| (r, j)));
        p.extend((0..n).map(|j| (r, xd + n + j)));
        p.extend((0..m).map(|k| (r, l.s() + k)));
        p.extend(actuators.iter().enumerate().filter(|(_, a)| a.coordinate == i).map(|(k, _)| (r, t + k)));
    }
    for k in 0..m {
        let r = l.s() + k;
        p.extend((0..n).map(|j| (r, j)));
        p.extend([(r, l.s() + k), (r, l.a() + k), (r, xd + l.s() + k)]);
    }
    for k in 0..m {
        let r = l.a() + k;
        p.extend([(r, l.a() + k), (r, xd + l.a() + k), (r, e + k)]);
    }
    p
}

impl Nlp for Transcription<'_, '_, '_> {
    fn n(&self) -> usize {
        self.variables()
    }

    fn scaling(&self) -> Option<Scaling> {
        self.scaling.clone()
    }

    fn m(&self) -> usize {
        self.points * self.nx() + self.p.intervals * self.defect_rows() + self.cone_m() + self.position_m()
    }

    fn bounds(&self, x_l: &mut [f64], x_u: &mut [f64], g_l: &mut [f64], g_u: &mut [f64]) {
        let (xd0, e0, t0) = self.off();
        let nx = self.nx();
        for i in 0..self.points {
            let (lo, hi) = (&mut x_l[i * self.nz..(i + 1) * self.nz], &mut x_u[i * self.nz..(i + 1) * self.nz]);
            for j in 0..nx {
                let fixed = if i == 0 {
                    self.p.initial[j]
                } else if i + 1 == self.points {
                    self.p.final_state[j]
                } else {
                    None
                };
                let [a, b] = fixed.map_or(self.p.state_bounds[j], |v| [v, v]);
                (lo[j], hi[j]) = (a, b);
            }
            lo[xd0..e0].fill(-2e19);
            hi[xd0..e0].fill(2e19);
            let held = (i == 0 && self.p.initial_equilibrium) || (i + 1 == self.points && self.p.final_equilibrium);
            if held {
                // v̇, ṡ, ȧ: every rate but q̇'s, which the dynamics tie to v
                lo[xd0 + self.layout.n..e0].fill(0.0);
                hi[xd0 + self.layout.n..e0].fill(0.0);
            }
            lo[e0..t0].fill(self.p.excitation_bounds[0]);
            hi[e0..t0].fill(self.p.excitation_bounds[1]);
            for (k, a) in self.p.actuators.iter().enumerate() {
                (lo[t0 + k], hi[t0 + k]) = (a.bounds[0], a.bounds[1]);
            }
        }
        if let Some([lo, hi]) = self.p.duration_bounds {
            (x_l[self.time_index()], x_u[self.time_index()]) = (lo, hi);
        }
        g_l.fill(0.0);
        g_u.fill(0.0);
        self.cone_bounds(g_l, g_u);
        self.position_bounds(g_l, g_u);
    }

    fn objective(&mut self, z: &[f64]) -> Option<f64> {
        let mut j = 0.0;
        for i in 0..self.points {
            j += self.weight(i, z) * self.running(i, &z[i * self.nz..(i + 1) * self.nz], None);
        }
        j += self.p.objective.time * self.duration_of(z);
        j += self.marker_cost(z, None)?;
        let last = (self.points - 1) * self.nz;
        for &(s, v, w) in &self.p.objective.final_targets {
            j += w * (z[last + s] - v).powi(2);
        }
        Some(j)
    }

    fn gradient(&mut self, z: &[f64], grad: &mut [f64]) -> bool {
        grad.fill(0.0);
        let mut g = vec![0.0; self.nz];
        for i in 0..self.points {
            g.fill(0.0);
            self.running(i, &z[i * self.nz..(i + 1) * self.nz], Some(&mut g));
            for (o, v) in grad[i * self.nz..(i + 1) * self.nz].iter_mut().zip(&g) {
                *o += self.weight(i, z) * v;
            }
        }
        if self.free_time() {
            grad[self.time_index()] = self.time_gradient(z);
        }
        if self.marker_cost(z, Some(grad)).is_none() {
            return false;
        }
        let last = (self.points - 1) * self.nz;
        for &(s, v, w) in &self.p.objective.final_targets {
            grad[last + s] += 2.0 * w * (z[last + s] - v);
        }
        true
    }

    fn constraints(&mut self, z: &[f64], g: &mut [f64]) -> bool {
        if self.linearize(z).is_err() {
            return false;
        }
        let nx = self.nx();
        let (xd0, _, t0) = self.off();
        let lins = &self.cache.as_ref().expect("linearized").1;
        for (i, lin) in lins.iter().enumerate() {
            let gi = &mut g[i * nx..(i + 1) * nx];
            gi.copy_from_slice(&lin.f);
            for (k, a) in self.p.actuators.iter().enumerate() {
                gi[self.layout.n + a.coordinate] -= a.optimal_force * z[i * self.nz + t0 + k];
            }
        }
        let h = self.duration_of(z) / self.p.intervals as f64;
        let base = self.points * nx;
        let x = |i: usize, j: usize| z[i * self.nz + j];
        let xd = |i: usize, j: usize| z[i * self.nz + xd0 + j];
        for k in 0..self.p.intervals {
            let r = base + k * self.defect_rows();
            match self.p.scheme {
                Scheme::Trapezoidal => {
                    for j in 0..nx {
                        g[r + j] = x(k + 1, j) - x(k, j) - h / 2.0 * (xd(k, j) + xd(k + 1, j));
                    }
                }
                Scheme::HermiteSimpson => {
                    let (a, c, b) = (2 * k, 2 * k + 1, 2 * k + 2);
                    for j in 0..nx {
                        g[r + j] = x(c, j) - (x(a, j) + x(b, j)) / 2.0 - h / 8.0 * (xd(a, j) - xd(b, j));
                        g[r + nx + j] = x(b, j) - x(a, j) - h / 6.0 * (xd(a, j) + 4.0 * xd(c, j) + xd(b, j));
                    }
                    for j in 2 * nx..self.nz {
                        // rows 2 nx.. of the interval: the controls' columns are 2 nx.. of z
                        g[r + j] = x(c, j) - (x(a, j) + x(b, j)) / 2.0;
                    }
                }
            }
        }
        self.cone_constraints(g);
        self.position_values(g);
        true
    }

    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        let nx = self.nx();
        let (xd0, _, _) = self.off();
        let mut s = Vec::new();
        for i in 0..self.points {
            s.extend(self.pattern.iter().map(|&(r, c)| (i * nx + r, i * self.nz + c)));
        }
        let base = self.points * nx;
        let col = |i: usize, j: usize| i * self.nz + j;
        for k in 0..self.p.intervals {
            let r = base + k * self.defect_rows();
            match self.p.scheme {
                Scheme::Trapezoidal => {
                    for j in 0..nx {
                        s.extend([
                            (r + j, col(k + 1, j)),
                            (r + j, col(k, j)),
                            (r + j, col(k, xd0 + j)),
                            (r + j, col(k + 1, xd0 + j)),
                        ]);
                    }
                }
                Scheme::HermiteSimpson => {
                    let (a, c, b) = (2 * k, 2 * k + 1, 2 * k + 2);
                    for j in 0..nx {
                        s.extend([
                            (r + j, col(c, j)),
                            (r + j, col(a, j)),
                            (r + j, col(b, j)),
                            (r + j, col(a, xd0 + j)),
                            (r + j, col(b, xd0 + j)),
                        ]);
                        s.extend([
                            (r + nx + j, col(b, j)),
                            (r + nx + j, col(a, j)),
                            (r + nx + j, col(a, xd0 + j)),
                            (r + nx + j, col(c, xd0 + j)),
                            (r + nx + j, col(b, xd0 + j)),
                        ]);
                    }
                    for j in 2 * nx..self.nz {
                        s.extend([(r + j, col(c, j)), (r + j, col(a, j)), (r + j, col(b, j))]);
                    }
                }
            }
        }
        s.extend(self.time_jacobian_structure());
        s.extend(self.cone_structure());
        s.extend(self.position_structure());
        s
    }

    fn jacobian(&mut self, z: &[f64], values: &mut [f64]) -> bool {
        if self.linearize(z).is_err() {
            return false;
        }
        let nx = self.nx();
        let (xd0, e0, t0) = self.off();
        let lins = &self.cache.as_ref().expect("linearized").1;
        let mut v = 0;
        for lin in lins {
            let (fx, fxd, fu) = lin.dense();
            for &(r, c) in &self.pattern {
                values[v] = if c < xd0 {
                    fx[(r, c)]
                } else if c < e0 {
                    fxd[(r, c - xd0)]
                } else if c < t0 {
                    fu[(r, c - e0)]
                } else {
                    -self.p.actuators[c - t0].optimal_force
                };
                v += 1;
            }
        }
        let h = self.duration_of(z) / self.p.intervals as f64;
        for _ in 0..self.p.intervals {
            let block: &[f64] = match self.p.scheme {
                Scheme::Trapezoidal => &[1.0, -1.0, -h / 2.0, -h / 2.0],
                Scheme::HermiteSimpson => {
                    &[1.0, -0.5, -0.5, -h / 8.0, h / 8.0, 1.0, -1.0, -h / 6.0, -4.0 * h / 6.0, -h / 6.0]
                }
            };
            for _ in 0..nx {
                values[v..v + block.len()].copy_from_slice(block);
                v += block.len();
            }
            if self.p.scheme == Scheme::HermiteSimpson {
                for _ in 0..self.controls() {
                    values[v..v + 3].copy_from_slice(&[1.0, -0.5, -0.5]);
                    v += 3;
                }
            }
        }
        self.time_jacobian_values(z, &mut values[v..]);
        let v = v + self.time_jacobian_structure().len();
        self.cone_values(&mut values[v..]);
        let v = v + self.cone_structure().len();
        self.position_jacobian(&mut values[v..]);
        true
    }

    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.hessian.is_ok().then(|| self.hessian_pattern())
    }

    fn hessian(&mut self, z: &[f64], sigma: f64, lambda: &[f64], values: &mut [f64]) -> bool {
        match self.hessian {
            Ok(motion) => self.hessian_values(motion, z, sigma, lambda, values),
            Err(_) => false,
        }
    }
}

impl Problem<'_, '_> {
    /// Solve from `guess` (`x_rest`: the rest state, for [`Guess::Linear`] and [`Guess::Rest`])
    /// with IPOPT's `options`, scaled by [`ScalingChoice::by_muscles`].
    pub fn solve(&self, guess: Guess, x_rest: &[f64], options: &[(&str, Value)]) -> Result<Solved, OcpError> {
        self.solve_scaled(guess, x_rest, options, ScalingChoice::by_muscles(self.system.muscles.len()))
    }

    /// [`Problem::solve`] with the scaling chosen.
    pub fn solve_scaled(
        &self,
        guess: Guess,
        x_rest: &[f64],
        options: &[(&str, Value)],
        scaling: ScalingChoice,
    ) -> Result<Solved, OcpError> {
        self.solve_warm(guess, None, x_rest, options, scaling)
    }

    /// [`Problem::solve_scaled`], and with `warm` IPOPT's warm start from the guess and its
    /// multipliers (a [`Solved::ipopt`]'s of the same problem, with [`Guess::Variables`] its
    /// iterate, and [`Solved::scaling`]: the run continues where that one stopped, on the same
    /// scaled problem).
    pub fn solve_warm(
        &self,
        guess: Guess,
        warm: Option<&WarmStart>,
        x_rest: &[f64],
        options: &[(&str, Value)],
        scaling: ScalingChoice,
    ) -> Result<Solved, OcpError> {
        let mut t = Transcription::new(self)?;
        if x_rest.len() != t.nx() {
            return Err(OcpError::Shape(format!("the rest state has {} values, the state {}", x_rest.len(), t.nx())));
        }
        // a small excitation, within the bounds
        let e = 0.05f64.max(self.excitation_bounds[0]).min(self.excitation_bounds[1]);
        let start: Vec<f64> = self.initial.iter().zip(x_rest).map(|(i, r)| i.unwrap_or(*r)).collect();
        let end: Vec<f64> = self.final_state.iter().zip(&start).map(|(f, s)| f.unwrap_or(*s)).collect();
        let z0 = match guess {
            Guess::Variables(z) if z.len() == t.n() => z,
            Guess::Variables(z) => {
                return Err(OcpError::Shape(format!("the guess has {} values, the problem {}", z.len(), t.n())));
            }
            Guess::Linear => t.linear_guess(&start, &end, e),
            Guess::Rest => t.linear_guess(x_rest, x_rest, e),
            Guess::Reference => {
                let mut z = t.linear_guess(&start, &end, e);
                t.follow_references(&mut z)?;
                z
            }
            Guess::Trajectory(tr) => {
                let mut z = t.linear_guess(&start, &end, e);
                t.follow_trajectory(&tr, &mut z).map_err(OcpError::Shape)?;
                z
            }
        };
        if scaling == ScalingChoice::Physical {
            // a continued run keeps its scaling: IPOPT's stopping test is on the scaled problem
            t.scaling = match warm.and_then(|w| w.scaling.clone()) {
                Some(given) => Some(given),
                None => Some(t.physical_scaling(&z0)?),
            };
        }
        let sol = mollier_ipopt::solve_from(&mut t, &z0, warm.map(|w| &w.multipliers), options)?;
        let mut g = vec![0.0; t.m()];
        let mut max_residual = [f64::NAN; 2];
        if t.constraints(&sol.x, &mut g) {
            let split = t.points * t.nx();
            let largest = |s: &[f64]| s.iter().fold(0.0f64, |m, v| m.max(v.abs()));
            let end = g.len() - t.cone_m() - t.position_m();
            max_residual = [largest(&g[..split]), largest(&g[split..end])];
        }
        let cone = t.cone_rows.iter().map(|r| r.force).collect();
        let scaling = t.scaling.clone();
        Ok(Solved { points: t.unpack(&sol.x), ipopt: sol, max_residual, hessian: t.hessian.clone(), cone, scaling })
    }
}
