//! Computed muscle control (Thelen et al. 2003, "Generating dynamic simulations of movement
//! using computed muscle control"; OpenSim's CMC): the excitations that make a forward
//! simulation of a model with Hill muscles track a target motion.
//!
//! At the start of each control interval `[t, t + T]`, from the simulated state then:
//!
//! 1. desired accelerations by PD tracking of the target at the interval's end, the state
//!    extrapolated there: `q̈* = q̈ₜ + k_v (q̇ₜ − q̇) + k_p (qₜ − (q + q̇ T))`, plus an integral
//!    of what the past intervals' mean accelerations missed of theirs (the muscles' forces vary
//!    over an interval and the girdle is light: a bias the PD alone leaves);
//! 2. the muscle forces that give those accelerations at the state the interval should end in
//!    (`q + q̇ T + q̈* T²/2`, `q̇ + q̈* T`), where the forces are reached: the model's
//!    load-sharing problem ([`LoadSharing`], `[load_sharing]`) with its criterion (default (b),
//!    `min Σ (F/PCSA)²`, van der Helm 1994) and the glenohumeral stability cone imposed;
//! 3. each muscle's excitation at the interval's end that makes it carry that force there: the
//!    muscle's activation and contraction (Chadwick et al. 2014, eq. 1 and App. A) integrated
//!    alone over the interval along its path as the desired accelerations move it (as OpenSim's
//!    CMC integrates its actuators along the desired kinematics to find the forces they can
//!    reach), the excitation linear from the last row, solved by bisection, in `[0, 1]`;
//! 4. the interval integrated by the error-controlled Rosenbrock-W pair, steps ending on the
//!    interval's end, the excitations linear from the last row to the new one — the same
//!    excitations an excitation file with these rows gives `mollier simulate`.
//!
//! Theory and figures: `docs/forward-dynamics.md`, "Computed muscle control".

use mollier_core::kinematics::solve_positions;
use mollier_core::{Data, ElementRole, ModeId};
use mollier_optim::{Criterion, Frame, FrameResult, LoadSharing, Muscle, RESERVE_WEIGHT, Reserve};
use mollier_sim::{Adaptive, HillMuscle, Musculoskeletal, SimError, State, Tolerances, Workspace};

use crate::compile::Compiled;
use crate::forward::Excitations;
use crate::motion::{Motion, MotionDerivatives, Smoothing};

/// The settings of computed muscle control.
#[derive(Clone, Debug, PartialEq)]
pub struct CmcOptions {
    /// The control interval `T` (s): the excitation rows are this far apart. Thelen et al.
    /// (2003) and OpenSim use 10 ms; on the shoulder's flexion 20 ms tracks longer (the stiff
    /// tendons make a muscle's force over a short interval harder to predict alone).
    pub interval: f64,
    /// Position gain `k_p` (1/s²).
    pub kp: f64,
    /// Velocity gain `k_v` (1/s); `2 √k_p` damps critically.
    pub kv: f64,
    /// Integral gain `γ` (1 per interval): after each interval the desired accelerations of the
    /// next ones are raised by `γ (q̈* − q̈̄)`, `q̈̄` the interval's mean accelerations.
    pub integral: f64,
    /// The load-sharing criterion.
    pub criterion: Criterion,
    /// Impose the model's joint cone in the load sharing.
    pub impose_cone: bool,
    /// Let the soft contacts whose points are at the thorax's surface push as hard as the load
    /// sharing needs (a contact's reaction, as the static model's sign-constrained one), rather
    /// than only with their own law's force at the state: the simulated point then sinks the
    /// few millimetres that give that push.
    pub contact_push: bool,
    /// The integrator's error control.
    pub tolerances: Tolerances,
}

impl Default for CmcOptions {
    /// 20 ms intervals, `k_p = 100 /s²`, `k_v = 20 /s` (critically damped at 10 rad/s, as
    /// Thelen et al. 2003), `γ = 0.8`, criterion (b) with the cone, the integrator's default
    /// tolerances, the contacts pushing.
    fn default() -> Self {
        Self {
            interval: 0.02,
            kp: 100.0,
            kv: 20.0,
            integral: 0.8,
            criterion: Criterion::Stresses,
            impose_cone: true,
            contact_push: true,
            tolerances: Tolerances::default(),
        }
    }
}

/// Why computed muscle control cannot start or go on. Front ends name the model and target.
#[derive(Clone, Debug, thiserror::Error)]
pub enum CmcError {
    /// The model has no `[load_sharing]` section.
    #[error("tracking needs the model's [load_sharing] section (the muscles' share of the forces)")]
    NoSection,
    /// The model has no `[muscles]`.
    #[error("tracking needs Hill muscles ([muscles])")]
    NoMuscles,
    /// The load-sharing muscles and the Hill muscles are not the same elements.
    #[error("`{0}` is {1}")]
    Unmatched(String, &'static str),
    /// A setting is out of range.
    #[error("{0}")]
    Options(String),
    /// The target cannot be differentiated.
    #[error("the target motion: {0}")]
    Target(String),
    /// The load-sharing problem is refused or has no solution.
    #[error("load sharing at {time} s: {message}")]
    Sharing {
        /// The interval's start (s).
        time: f64,
        /// What the optimiser said.
        message: String,
    },
    /// The simulation failed.
    #[error(transparent)]
    Sim(#[from] SimError),
}

/// A target motion: the model's coordinates, rates and accelerations, linear between frames
/// and held beyond the ends.
#[derive(Clone, Debug)]
pub struct TrackTarget {
    times: Vec<f64>,
    d: MotionDerivatives,
}

/// `(q, q̇, q̈)` of a target at one time (n each; rad or m, per s, per s²).
pub type TargetPoint = (Vec<f64>, Vec<f64>, Vec<f64>);

impl TrackTarget {
    /// The target of a motion of the model: rates and accelerations from its columns where it
    /// has them, else from an interpolating spline ([`Motion::differentiate`]).
    pub fn new(motion: &Motion) -> Result<Self, CmcError> {
        let d = motion.differentiate(Smoothing::Interpolate).map_err(|e| CmcError::Target(e.to_string()))?;
        Ok(Self { times: motion.times.clone(), d })
    }

    /// The target's last time (s).
    pub fn end(&self) -> f64 {
        self.times.last().copied().unwrap_or(0.0)
    }

    /// `(q, q̇, q̈)` at `t` (s).
    pub fn at(&self, t: f64) -> TargetPoint {
        let n = self.times.len();
        let i = self.times.partition_point(|&x| x <= t).clamp(1, n.max(2) - 1).min(n - 1);
        let w =
            if n < 2 { 0.0 } else { ((t - self.times[i - 1]) / (self.times[i] - self.times[i - 1])).clamp(0.0, 1.0) };
        let lerp = |r: &crate::motion::Rows| -> Vec<f64> {
            if n < 2 {
                return r[0].to_vec();
            }
            r[i - 1].iter().zip(&r[i]).map(|(a, b)| (1.0 - w) * a + w * b).collect()
        };
        (lerp(&self.d.q), lerp(&self.d.qd), lerp(&self.d.qdd))
    }
}

/// What one control interval did.
#[derive(Clone, Debug, PartialEq)]
pub struct CmcInterval {
    /// The interval's start (s).
    pub time: f64,
    /// The simulated coordinates against the target at the start: the largest difference
    /// (rad or m).
    pub error: f64,
    /// The desired accelerations `q̈*` of the PD law (n).
    pub desired: Vec<f64>,
    /// The accelerations asked of the muscles: `desired` plus the integral term (n).
    pub requested: Vec<f64>,
    /// The coordinates and rates (2n) the load sharing was solved at: the state the interval
    /// should end in.
    pub ahead: Vec<f64>,
    /// The mean accelerations the interval made, `(q̇(t + T) − q̇(t))/T` (n).
    pub achieved: Vec<f64>,
    /// The load-sharing problem's muscle forces (N), in the order of the Hill muscles.
    pub forces: Vec<f64>,
    /// The excitations at the interval's end (m): the new row.
    pub excitations: Vec<f64>,
    /// The reserves' driving forces per input (n; N m or N): what the equations of motion at
    /// `ahead` with `requested` and `forces` leave over (`f_v` of `mollier_sim::system`). Not applied.
    pub reserves: Vec<f64>,
    /// The load-sharing problem's own equilibrium residual (N m or N).
    pub residual: f64,
    /// The soft contacts' pushes beyond their laws' ([`CmcOptions::contact_push`]; empty
    /// without): each contact's stress conjugate to its level (N m per unit level, ≤ 0), the
    /// model's soft contacts in file order.
    pub pushes: Vec<f64>,
}

/// Computed muscle control of a model along a target, interval by interval.
pub struct Cmc<'a> {
    system: Musculoskeletal<'a>,
    ws: Workspace,
    sharing: LoadSharing<'a>,
    sharing_ws: mollier_optim::Workspace,
    data: Data,
    /// For each Hill muscle, its index among the load-sharing problem's muscles.
    order: Vec<usize>,
    /// The levels of the soft contacts that push as the load sharing asks
    /// ([`CmcOptions::contact_push`]), its last muscles.
    pushes: Vec<ModeId>,
    target: TrackTarget,
    options: CmcOptions,
    excitations: Excitations,
    adaptive: Adaptive,
    /// The kernel's data for the paths ahead ([`Cmc::paths`]).
    probe: Data,
    /// The integral term of the desired accelerations (n).
    bias: Vec<f64>,
    /// Intervals run.
    intervals: usize,
}

impl<'a> Cmc<'a> {
    /// Set up on a model with `[muscles]` and `[load_sharing]` over the same elements, and start
    /// at rest in the target's first posture, each muscle activated (and its fibres in
    /// isometric equilibrium) so that it gives the first desired accelerations' share.
    pub fn new(compiled: &'a Compiled, target: TrackTarget, options: CmcOptions) -> Result<Self, CmcError> {
        if !(options.interval > 0.0 && options.interval.is_finite()) {
            return Err(CmcError::Options(format!("the control interval must be positive, got {}", options.interval)));
        }
        if ![options.kp, options.kv, options.integral].iter().all(|g| *g >= 0.0 && g.is_finite()) {
            return Err(CmcError::Options("the gains must be finite and not negative".into()));
        }
        let setup = compiled.load_sharing.as_ref().ok_or(CmcError::NoSection)?;
        if compiled.muscles.is_empty() {
            return Err(CmcError::NoMuscles);
        }
        let order =
            compiled
                .muscles
                .iter()
                .map(|mu| {
                    setup.muscles.iter().position(|s| s.mode == mu.mode).ok_or_else(|| {
                        CmcError::Unmatched(mu.name.clone(), "a Hill muscle the load sharing does not have")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
        if let Some(s) = setup.muscles.iter().find(|s| !compiled.muscles.iter().any(|mu| mu.mode == s.mode)) {
            return Err(CmcError::Unmatched(s.name.clone(), "a load-sharing muscle without a Hill muscle"));
        }
        let mut study = setup.study(options.criterion.clone(), options.impose_cone);
        let pushes: Vec<ModeId> = if options.contact_push {
            compiled
                .elements
                .iter()
                .filter(|e| e.role == ElementRole::Contact && compiled.model.element(e.id).law().is_some())
                .map(|e| compiled.model.mode_id(e.id, 0))
                .collect()
        } else {
            Vec::new()
        };
        // a contact's push, `σ` in `[−PUSH_LIMIT, 0]` beyond its law's, as a muscle of the
        // problem whose whole range costs a millionth of a muscle's at full force
        study.muscles.extend(pushes.iter().map(|&mode| Muscle::new(mode, PUSH_PCSA, 1.0)));
        // expensive reserves on the inputs without one (as OpenSim's CMC), so that an interval
        // whose desired accelerations the muscles cannot reach within it still has a solution;
        // they are not applied to the simulation: what they give is the feedback's to take up
        for input in 0..compiled.model.n_q() {
            if !study.reserves.iter().any(|r| r.input == input) {
                study.reserves.push(Reserve { input, weight: RESERVE_WEIGHT });
            }
        }
        let sharing = LoadSharing::new(&compiled.model, study)
            .map_err(|e| CmcError::Sharing { time: 0.0, message: e.to_string() })?;
        let system = Musculoskeletal::new(&compiled.model, compiled.muscles.clone());
        let mut ws = system.workspace();
        let m = system.muscles.len();
        let n = compiled.model.n_q();
        let (q0, v0, a0) = target.at(target.times.first().copied().unwrap_or(0.0));
        let t0 = target.times.first().copied().unwrap_or(0.0);
        if q0.len() != n {
            return Err(CmcError::Target(format!("{} coordinates for a model of {n}", q0.len())));
        }
        let mut sharing_ws = sharing.workspace();
        let mut data = Data::new(&compiled.model);
        // the first row: the activations whose isometric forces at rest in the first posture
        // are the share of the first desired accelerations
        let rest = system.rest_state(&mut ws, &q0, t0, &vec![0.0; m])?;
        let qdd: Vec<f64> = a0.iter().zip(&v0).map(|(a, v)| a + options.kv * v).collect();
        let lengths = system.linearize(&mut ws, &rest.x, &rest.xd, &vec![0.0; m])?.length;
        // at rest the muscles reach their isometric forces, passive to full
        let bounds: Vec<[f64; 2]> = system
            .muscles
            .iter()
            .zip(&lengths)
            .map(|(mu, &l)| [0.0, 1.0].map(|a| mu.hill.isometric_force(a, l).unwrap_or(f64::NAN)))
            .collect();
        let (forces, _) =
            share_with(&sharing, &mut sharing_ws, &mut data, (&order, &pushes), &rest.x, &qdd, t0, &bounds)?;
        let u0: Vec<f64> = system
            .muscles
            .iter()
            .zip(forces.iter().zip(&lengths))
            .map(|(mu, (&f, &l))| isometric_activation(&mu.hill, f, l))
            .collect();
        let excitations =
            Excitations { time: vec![t0], values: u0.iter().map(|&u| vec![u]).collect(), missing: Vec::new() };
        let start = system.rest_state(&mut ws, &q0, t0, &u0)?;
        let adaptive = Adaptive::new(&system, &mut ws, &start, &|t, u| excitations.at(t, u), options.tolerances)?;
        Ok(Self {
            system,
            ws,
            sharing,
            sharing_ws,
            data,
            order,
            pushes,
            target,
            options,
            excitations,
            adaptive,
            probe: Data::new(&compiled.model),
            bias: vec![0.0; n],
            intervals: 0,
        })
    }

    /// The system being simulated.
    pub fn system(&self) -> &Musculoskeletal<'a> {
        &self.system
    }

    /// The current state (the last interval's end).
    pub fn state(&self) -> &State {
        self.adaptive.state()
    }

    /// The excitation rows so far: at the target's start, then one per interval's end.
    pub fn excitations(&self) -> &Excitations {
        &self.excitations
    }

    /// The target.
    pub fn target(&self) -> &TrackTarget {
        &self.target
    }

    /// The settings.
    pub fn options(&self) -> &CmcOptions {
        &self.options
    }

    /// The integrator's counts so far.
    pub fn step_stats(&self) -> mollier_sim::StepStats {
        self.adaptive.stats()
    }

    /// The desired accelerations at state `st` for the interval ending at `t1` (s): the target
    /// there and the state's coordinates extrapolated there (`q + q̇ T`; the state's own
    /// accelerations, which the stiff muscles make ring, are left out).
    pub fn desired(&self, st: &State, t1: f64) -> Vec<f64> {
        let n = self.system.layout().n;
        let h = t1 - st.t;
        let (qt, vt, at) = self.target.at(t1);
        (0..n)
            .map(|i| {
                let (q, v) = (st.x[i], st.x[n + i]);
                at[i] + self.options.kv * (vt[i] - v) + self.options.kp * (qt[i] - (q + v * h))
            })
            .collect()
    }

    /// The load-sharing problem's muscle forces (N, the Hill muscles' order) that give
    /// accelerations `qdd` at the coordinates and rates of state vector `x`, each within its
    /// `bounds` (N, `[lower, upper]`, the Hill muscles' order), and the problem's result.
    pub fn share(
        &mut self,
        x: &[f64],
        qdd: &[f64],
        time: f64,
        bounds: &[[f64; 2]],
    ) -> Result<(Vec<f64>, FrameResult), CmcError> {
        share_with(
            &self.sharing,
            &mut self.sharing_ws,
            &mut self.data,
            (&self.order, &self.pushes),
            x,
            qdd,
            time,
            bounds,
        )
    }

    /// A result's reserves per input (n; 0 where none).
    fn reserve_forces(&self, result: &FrameResult) -> Vec<f64> {
        let mut out = vec![0.0; self.system.layout().n];
        for (r, v) in self.sharing.study().reserves.iter().zip(&result.reserves) {
            out[r.input] = *v;
        }
        out
    }

    /// The coordinates and rates (`x`'s first `2n`) at the end of the interval of `h` s from
    /// state `st` at accelerations `qdd`.
    fn ahead(&self, st: &State, qdd: &[f64], h: f64) -> Vec<f64> {
        let n = self.system.layout().n;
        let mut x = st.x[..2 * n].to_vec();
        for i in 0..n {
            x[i] += h * (x[n + i] + h * qdd[i] / 2.0);
            x[n + i] += h * qdd[i];
        }
        x
    }

    /// Each muscle's path over the interval of `h` s from state `st` at accelerations `qdd`,
    /// `L + L̇ τ + L̈ τ²/2` in the time `τ` from its start: `[L, L̇, L̈]` (m, m/s, m/s²), with
    /// `L̈ = ∂L/∂q · q̈ + q̇ᵀ ∂²L/∂q² q̇`, the curvature term from the paths' lengths at `q + q̇ h`.
    fn paths(&mut self, st: &State, qdd: &[f64], h: f64) -> Result<Vec<[f64; 3]>, CmcError> {
        let l = self.system.layout();
        let lin = self.adaptive.linearization();
        let (q, v) = (&st.x[..l.n], &st.x[l.n..2 * l.n]);
        let coasting: Vec<f64> = q.iter().zip(v).map(|(q, v)| q + v * h).collect();
        solve_positions(self.system.model, &mut self.probe, &coasting).map_err(SimError::from)?;
        let dot = |g: &[f64], w: &[f64]| -> f64 { g.iter().zip(w).map(|(g, w)| g * w).sum() };
        Ok(self
            .system
            .muscles
            .iter()
            .enumerate()
            .map(|(k, mu)| {
                let (length, g) = (lin.length[k], lin.grad(k));
                let rate = dot(g, v);
                let coasted = mu.reference_length + self.probe.e()[mu.mode.index()];
                let curvature = 2.0 * (coasted - length - rate * h) / (h * h);
                [length, rate, dot(g, qdd) + curvature]
            })
            .collect())
    }

    /// Run one control interval: the new excitation row at `t + T` and the state there.
    pub fn interval(&mut self) -> Result<CmcInterval, CmcError> {
        let st = self.adaptive.state().clone();
        let l = self.system.layout();
        // times on the interval grid, not sums of it
        let t1 = self.excitations.time[0] + (self.intervals + 1) as f64 * self.options.interval;
        let (qt, _, _) = self.target.at(st.t);
        let error = (0..l.n).map(|i| (qt[i] - st.x[i]).abs()).fold(0.0, f64::max);
        let desired = self.desired(&st, t1);
        let requested: Vec<f64> = desired.iter().zip(&self.bias).map(|(d, b)| d + b).collect();
        let h = self.options.interval;
        let ahead = self.ahead(&st, &requested, h);
        // each muscle alone along its path as the motion asked for moves it: the forces it can
        // reach at the interval's end bound the static problem's
        let paths = self.paths(&st, &requested, h)?;
        let alone: Vec<Alone<'_>> = self
            .system
            .muscles
            .iter()
            .zip(paths)
            .enumerate()
            .map(|(k, (mu, path))| Alone { hill: &mu.hill, a: st.x[l.a() + k], s: st.x[l.s() + k], path })
            .collect();
        let last: Vec<f64> = self.excitations.values.iter().map(|v| v.last().copied().unwrap_or(0.0)).collect();
        let bounds: Vec<[f64; 2]> =
            alone.iter().zip(&last).map(|(m, &u0)| [0.0, 1.0].map(|u| m.force_after(u0, u, h))).collect();
        // the shares at the state the interval should end in, where the forces are reached (at
        // its start the flexion's largest error is 3.5° against 3.1°)
        let (forces, result) = share_with(
            &self.sharing,
            &mut self.sharing_ws,
            &mut self.data,
            (&self.order, &self.pushes),
            &ahead,
            &requested,
            st.t,
            &bounds,
        )?;
        let excitations: Vec<f64> =
            alone.iter().zip(last.iter().zip(&forces)).map(|(m, (&u0, &f))| m.excitation_for(u0, f, h)).collect();
        self.excitations.time.push(t1);
        for (v, &u) in self.excitations.values.iter_mut().zip(&excitations) {
            v.push(u);
        }
        self.intervals += 1;
        let ex = &self.excitations;
        while self.adaptive.state().t < t1 {
            self.adaptive.step_until(&self.system, &mut self.ws, &|t, u| ex.at(t, u), t1)?;
        }
        let end = &self.adaptive.state().x;
        let achieved: Vec<f64> = (l.n..2 * l.n).map(|i| (end[i] - st.x[i]) / h).collect();
        for ((b, d), a) in self.bias.iter_mut().zip(&desired).zip(&achieved) {
            *b += self.options.integral * (d - a);
        }
        Ok(CmcInterval {
            time: st.t,
            error,
            desired,
            requested,
            ahead,
            achieved,
            forces,
            excitations,
            reserves: self.reserve_forces(&result),
            pushes: result.forces[result.forces.len() - self.pushes.len()..].to_vec(),
            residual: result.residual.unwrap_or(f64::NAN),
        })
    }
}

/// The largest level (dimensionless, `F` of the soft contact) at which a contact may push:
/// its point within about 1 mm of the thorax's surface (`F ≈ 2 d/a`, `a` ≥ 94 mm).
const PUSH_LEVEL: f64 = 0.02;

/// The largest push beyond a contact's law (N m per unit level): some 2 kN on TS or AI
/// (`|∇F| ≈ 2/a`, about 20 /m).
const PUSH_LIMIT: f64 = 100.0;

/// The PCSA (m²) that makes a push's whole range cost a millionth of a muscle's full force
/// under criterion (b): `(PUSH_LIMIT/PUSH_PCSA)²` against `(100 N/cm²)²`.
const PUSH_PCSA: f64 = 0.1;

/// [`Cmc::share`] on its parts; `(order, pushes)`: the Hill muscles' indices among the
/// problem's muscles and the pushing contacts' levels, the problem's last muscles.
fn share_with(
    sharing: &LoadSharing<'_>,
    ws: &mut mollier_optim::Workspace,
    data: &mut Data,
    (order, pushes): (&[usize], &[ModeId]),
    x: &[f64],
    qdd: &[f64],
    time: f64,
    bounds: &[[f64; 2]],
) -> Result<(Vec<f64>, FrameResult), CmcError> {
    let n = qdd.len();
    let frame = Frame { time, q: x[..n].to_vec(), qd: x[n..2 * n].to_vec(), qdd: qdd.to_vec(), loads: Vec::new() };
    // the Hill muscles' bounds in the problem's order, then the contacts'
    let base = sharing.study().muscles.len() - pushes.len();
    let mut within = vec![[0.0; 2]; base + pushes.len()];
    for (k, &i) in order.iter().enumerate() {
        within[i] = bounds[k];
    }
    if !pushes.is_empty() {
        solve_positions(sharing.model(), data, &frame.q).map_err(SimError::from)?;
        for (j, &mode) in pushes.iter().enumerate() {
            // a point off the surface has nothing to push on
            within[base + j] = if data.mode_value(mode) <= PUSH_LEVEL { [-PUSH_LIMIT, 0.0] } else { [0.0; 2] };
        }
    }
    let r = sharing.frame_within(ws, data, &frame, &within);
    if !r.status.is_success() {
        return Err(CmcError::Sharing { time, message: r.status.to_string() });
    }
    Ok((order.iter().map(|&i| r.forces[i]).collect(), r))
}

/// Backward-Euler steps of a muscle's own integration over a control interval.
const MUSCLE_STEPS: usize = 10;

/// A muscle alone over a control interval: its activation `a`, contraction state `s` (m) and
/// path at the start, `[L, L̇, L̈]` (m, m/s, m/s²: [`Cmc::paths`]).
struct Alone<'h> {
    hill: &'h HillMuscle,
    a: f64,
    s: f64,
    path: [f64; 3],
}

impl Alone<'_> {
    /// The tendon force (N) at the interval's end (`interval` s on) under excitations linear
    /// from `u0` to `u1`, the path's length `L + L̇ τ + L̈ τ²/2`: backward Euler in [`MUSCLE_STEPS`] steps
    /// (the contraction is stiff), Newton on each step's contraction residual, which falls in
    /// `s`. As OpenSim's CMC finds the force a muscle can reach by integrating it over the
    /// interval.
    fn force_after(&self, u0: f64, u1: f64, interval: f64) -> f64 {
        let hill = self.hill;
        let h = interval / MUSCLE_STEPS as f64;
        let (mut a, mut s) = (self.a, self.s);
        let [l0, rate, acc] = self.path;
        let mut l = l0;
        for j in 1..=MUSCLE_STEPS {
            let w = j as f64 / MUSCLE_STEPS as f64;
            let u = u0 + w * (u1 - u0);
            let tau = w * interval;
            l = l0 + tau * (rate + tau * acc / 2.0);
            // ȧ = c (u − a), c = u/t_act + (1 − u)/t_deact: linear in a
            let c = hill.activation(a, 0.0, u).1;
            a = (a + h * c * u) / (1.0 + h * c);
            if hill.is_rigid() {
                // no fibre state: the force at the path's length and velocity
                if j == MUSCLE_STEPS {
                    return hill.rigid(a, 0.0, l, rate + tau * acc).force;
                }
                continue;
            }
            let mut next = s;
            for _ in 0..30 {
                let r = hill.contraction(a, next, (next - s) / h, l);
                let step = r.residual / (r.d_s + r.d_sdot / h);
                if !step.is_finite() {
                    return f64::NAN;
                }
                next -= step;
                if step.abs() <= 1e-13 * hill.params.optimal_fibre_length {
                    break;
                }
            }
            s = next;
        }
        hill.tendon(l - s).0
    }

    /// The excitation at the interval's end, in `[0, 1]`, after `u0` at its start, at which the
    /// muscle carries `force` (N) at the end: the force rises with it (bisection to 1e-7).
    fn excitation_for(&self, u0: f64, force: f64, interval: f64) -> f64 {
        rising_root(|u| self.force_after(u0, u, interval), force, 1e-7)
    }
}

/// The `x` in `[0, 1]` at which the rising `f` reaches `value`, by bisection to `tol`: 0 when
/// `f(0)` is not below it, 1 when `f(1)` is not above it (or either is NaN).
fn rising_root(f: impl Fn(f64) -> f64, value: f64, tol: f64) -> f64 {
    if !(f(0.0) < value) {
        return 0.0;
    }
    if !(f(1.0) > value) {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while hi - lo > tol {
        let mid = 0.5 * (lo + hi);
        if f(mid) < value {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

/// The activation at which a muscle in isometric equilibrium at path length `length` (m)
/// carries tendon force `force` (N) (bisection: the force rises with the activation), clipped
/// to `[0, 1]`.
pub fn isometric_activation(hill: &HillMuscle, force: f64, length: f64) -> f64 {
    rising_root(|a| hill.isometric_force(a, length).unwrap_or(f64::NAN), force, 1e-12)
}

/// Computed muscle control from the target's start for `duration` (s): the excitation rows
/// (one per interval; a file of them replays the run with `mollier simulate`), and each
/// interval's record handed to `each` as it is done.
pub fn track(
    compiled: &Compiled,
    target: TrackTarget,
    duration: f64,
    options: CmcOptions,
    mut each: impl FnMut(&CmcInterval, &State),
) -> Result<Excitations, CmcError> {
    let mut cmc = Cmc::new(compiled, target, options)?;
    let count = (duration / cmc.options.interval - 1e-9).ceil().max(0.0) as usize;
    for _ in 0..count {
        let r = cmc.interval()?;
        each(&r, cmc.state());
    }
    Ok(cmc.excitations)
}

/// The excitations of computed muscle control along `motion` (the model's inputs) from its
/// start for `duration` s, with the integrator's `tolerances` and the default settings
/// otherwise ([`CmcOptions::default`]), and the largest coordinate error at an interval's start
/// (rad or m): what `mollier simulate --track` and Python's `simulate(track=...)` simulate.
pub fn track_motion(
    compiled: &Compiled,
    motion: &Motion,
    duration: f64,
    tolerances: Tolerances,
) -> Result<(Excitations, f64), CmcError> {
    let target = TrackTarget::new(motion)?;
    let options = CmcOptions { tolerances, ..CmcOptions::default() };
    let mut worst = 0.0f64;
    let ex = track(compiled, target, duration, options, |r, _| worst = worst.max(r.error))?;
    Ok((ex, worst))
}
