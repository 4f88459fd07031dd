//! One frame of load sharing: the affine maps from the muscle forces to the driving forces, the
//! sign-constrained reactions and the joint force (kinetostatics, van der Helm (1994) eq. 15/19), the conic
//! program, and the independent check of its solution.

use std::fmt;
use std::time::Instant;

use faer::Mat;
use mollier_core::ModeRole;
use mollier_core::dynamics::{driving_from_kinetostatics, element_forces, kinetostatic_sensitivity, kinetostatics};
use mollier_core::element::Quantity;
use mollier_core::geometry::{Mat3, quat_at, rotation};
use mollier_core::kinematics::solve_positions_explained;
use mollier_core::transfer::first_order;
use mollier_core::{Data, ElementId, Load, ModeId, Model, NodeKind, solve_positions};

use crate::cone::{cone_violation, stability_index};
use crate::program::{Layout, Values};
use crate::qp::{Outcome, Program};
use crate::result::{Frame, FrameResult, RunOptions, Status};
use crate::study::{Criterion, SetupError, Sign, Study};

mod report;

/// Per-thread state: the programs (and their clarabel solvers, reused from frame to frame).
pub struct Workspace {
    programs: Vec<Program>,
    values: Vec<Values>,
}

impl fmt::Debug for Workspace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Workspace").field("stages", &self.programs.len()).finish()
    }
}

#[derive(Clone, Debug)]
struct ConeSetup {
    /// Each element with the local offsets of the joint node's position slots in it.
    slots: Vec<(ElementId, Vec<usize>)>,
    /// Offset of the body's orientation node in `x`.
    body_offset: usize,
    rotation: Mat3,
    half_y: f64,
    half_z: f64,
    enforce: bool,
}

/// A load-sharing study set up on a model: shared by all threads.
#[derive(Debug)]
pub struct LoadSharing<'m> {
    model: &'m Model,
    study: Study,
    modes: Vec<ModeId>,
    /// Modes whose stress derivatives the frame needs: the sign-constrained ones, then every
    /// mode of the cone's elements.
    rows: Vec<ModeId>,
    cone: Option<ConeSetup>,
    layouts: Vec<Layout>,
    /// Say which constraints make an infeasible frame infeasible (off in the relaxed copies
    /// that find out).
    explain: bool,
}

/// The affine maps of one frame, from the muscle forces `F` (N).
pub(crate) struct Maps {
    /// Stresses with every muscle's active force 0 (n_e).
    pub(crate) sigma0: Vec<f64>,
    /// Driving forces `τ0` (n_q) and `∂τ/∂F` (n_q x k, row-major).
    pub(crate) tau0: Vec<f64>,
    pub(crate) tau_f: Vec<f64>,
    /// Sign-constrained reactions and their derivatives (n_sign x k).
    pub(crate) sig0: Vec<f64>,
    pub(crate) sig_f: Vec<f64>,
    /// Joint force in the cone frame and its derivatives (3 x k).
    pub(crate) cone0: [f64; 3],
    pub(crate) cone_f: Vec<f64>,
    /// Cone frame: `f_cone = C f_global`.
    pub(crate) to_cone: Mat3,
    /// `Fmax(l)` (N), `g(l)`, lengths (m).
    pub(crate) fmax: Vec<f64>,
    pub(crate) g: Vec<f64>,
    pub(crate) lengths: Vec<f64>,
}

fn transpose(m: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| m[j][i]))
}

fn mat_mul(a: &Mat3, b: &Mat3) -> Mat3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

fn mat_vec(a: &Mat3, v: &[f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

fn max_abs(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(0.0, |m, x| m.max(x.abs()))
}

/// `ε` of (d)'s first-stage objective `t² + εt` (t = maximum stress / specific tension): small
/// beside `2t` at any load the muscles notice, so reserves see a quadratic cost.
const MAX_STRESS_LINEAR: f64 = 1e-3;

/// `x` if it is a positive finite scale, else 1.
fn scale_or_one(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 { x } else { 1.0 }
}

/// The name of `mode`, listed by a study's muscles or signs, after checking that it is one of the
/// model's modes and not listed before: `seen` (n_e) marks the modes listed so far, `mode` among
/// them now. Else the name to blame and what is wrong. Whether the mode may be listed at all
/// depends on the mode alone, so a second listing fails here or not at all.
fn listed_once(model: &Model, mode: ModeId, seen: &mut [bool]) -> Result<String, (String, String)> {
    let i = mode.index();
    if i >= seen.len() {
        return Err((format!("mode #{i}"), format!("the model has {} modes", seen.len())));
    }
    let name = model.mode_name(mode);
    if std::mem::replace(&mut seen[i], true) {
        return Err((name, "the mode is listed twice".into()));
    }
    Ok(name)
}

impl<'m> LoadSharing<'m> {
    /// Check a study against a model and set it up.
    pub fn new(model: &'m Model, study: Study) -> Result<Self, SetupError> {
        let (ne, nq) = (model.n_e(), model.n_q());
        let param = |ok: bool, msg: String| if ok { Ok(()) } else { Err(SetupError::Parameter(msg)) };
        param(
            study.specific_tension.is_finite() && study.specific_tension > 0.0,
            format!("specific tension must be finite and > 0, got {}", study.specific_tension),
        )?;
        param(study.width > 0.0, format!("force-length width must be > 0 (or infinite), got {}", study.width))?;
        param(
            study.tolerance.is_finite() && study.tolerance > 0.0 && study.tolerance < 1.0,
            format!("check tolerance must be in (0, 1), got {}", study.tolerance),
        )?;
        param(!study.muscles.is_empty(), "a study needs at least one muscle".into())?;
        param(
            study.max_stress_slack.is_finite() && (0.0..1.0).contains(&study.max_stress_slack),
            format!(
                "the slack of criterion (d) must be in [0, 1) (default {}), got {}",
                crate::study::DEFAULT_MAX_STRESS_SLACK,
                study.max_stress_slack
            ),
        )?;
        let mut seen = vec![false; ne];
        for (index, m) in study.muscles.iter().enumerate() {
            let bad = |name: String, message: String| SetupError::Muscle { index, name, message };
            let name = listed_once(model, m.mode, &mut seen).map_err(|(name, message)| bad(name, message))?;
            if model.mode_role(m.mode) != ModeRole::Dependent {
                return Err(bad(name, "its mode must be free (dependent), not fixed or an input".into()));
            }
            // a dimensionless mode: a soft contact's level, whose push computed muscle control
            // shares out with the muscles (its stress in N m per unit level)
            if !matches!(model.mode_info(m.mode).quantity, Quantity::Length | Quantity::Dimensionless) {
                return Err(bad(name, "its mode must be a length (an elongation) or a contact's level".into()));
            }
            let pos = |v: f64| v.is_finite() && v > 0.0;
            if !pos(m.pcsa) {
                return Err(bad(name, format!("PCSA must be finite and > 0, got {}", m.pcsa)));
            }
            if !pos(m.reference_length) {
                return Err(bad(name, format!("reference length must be finite and > 0, got {}", m.reference_length)));
            }
            if !pos(m.l_opt()) {
                return Err(bad(name, format!("optimal length must be finite and > 0, got {}", m.l_opt())));
            }
            if !(m.tendon_slack.is_finite() && m.tendon_slack >= 0.0) {
                return Err(bad(name, format!("tendon slack length must be finite and >= 0, got {}", m.tendon_slack)));
            }
        }
        if let Criterion::Weighted(w) = &study.criterion {
            param(w.len() == study.muscles.len(), format!("{} weights for {} muscles", w.len(), study.muscles.len()))?;
            param(w.iter().all(|v| v.is_finite() && *v > 0.0), "weights must be finite and > 0".into())?;
        }
        let mut seen = vec![false; ne];
        for (index, s) in study.signs.iter().enumerate() {
            let bad = |name: String, message: String| SetupError::Sign { index, name, message };
            let name = listed_once(model, s.mode, &mut seen).map_err(|(name, message)| bad(name, message))?;
            if !matches!(model.mode_role(s.mode), ModeRole::Fixed(_)) {
                return Err(bad(name, "only a fixed mode has a reaction".into()));
            }
        }
        let mut seen = vec![false; nq];
        for (index, r) in study.reserves.iter().enumerate() {
            let bad = |message: String| SetupError::Reserve { index, message };
            if r.input >= nq {
                return Err(bad(format!("input {} does not exist (the model has {nq})", r.input)));
            }
            if std::mem::replace(&mut seen[r.input], true) {
                return Err(bad(format!("input `{}` has two reserves", model.input_name(r.input))));
            }
            if !(r.weight.is_finite() && r.weight > 0.0) {
                return Err(bad(format!("weight must be finite and > 0, got {}", r.weight)));
            }
        }
        let cone = study.cone.as_ref().map(|c| Self::setup_cone(model, c)).transpose()?;
        let base = Layout {
            k: study.muscles.len(),
            n_eq: nq,
            reserves: study.reserves.iter().map(|r| r.input).collect(),
            n_sign: study.signs.len(),
            stress: None,
            cone: cone.as_ref().is_some_and(|c| c.enforce),
            cubes: study.criterion == Criterion::CubedStresses,
        };
        let layouts = match study.criterion {
            // stage 1; stage 2 with the reserves held; stage 2 with them free (when held ones
            // make it infeasible)
            Criterion::MaxStress => vec![
                Layout { stress: Some(true), ..base.clone() },
                Layout { stress: Some(false), reserves: Vec::new(), ..base.clone() },
                Layout { stress: Some(false), ..base },
            ],
            _ => vec![base],
        };
        let modes = study.muscles.iter().map(|m| m.mode).collect();
        let mut rows: Vec<ModeId> = study.signs.iter().map(|s| s.mode).collect();
        if let Some(c) = &cone {
            for (el, _) in &c.slots {
                rows.extend((0..model.element(*el).layout().n_modes()).map(|kk| model.mode_id(*el, kk)));
            }
        }
        Ok(Self { model, study, modes, rows, cone, layouts, explain: true })
    }

    fn setup_cone(model: &Model, c: &crate::study::JointCone) -> Result<ConeSetup, SetupError> {
        let err = |m: String| SetupError::Cone(m);
        let nodes = model.nodes();
        let node = nodes.get(c.node.index()).ok_or_else(|| err(format!("node #{} does not exist", c.node.index())))?;
        if node.kind != NodeKind::Position {
            return Err(err(format!("joint node `{}` must be a position node", node.name)));
        }
        let body = nodes.get(c.body.index()).ok_or_else(|| err(format!("node #{} does not exist", c.body.index())))?;
        if body.kind != NodeKind::Orientation {
            return Err(err(format!("body node `{}` must be an orientation node", body.name)));
        }
        if c.elements.is_empty() {
            return Err(err("no elements listed".into()));
        }
        let mut slots = Vec::new();
        for &el in &c.elements {
            if el.index() >= model.n_elements() {
                return Err(err(format!("element #{} does not exist", el.index())));
            }
            if slots.iter().any(|(e, _)| *e == el) {
                return Err(err(format!("element `{}` is listed twice", model.element_name(el))));
            }
            let layout = model.element(el).layout();
            let offs: Vec<usize> = (0..layout.nodes().len())
                .filter(|&s| layout.nodes()[s].0 == c.node)
                .map(|s| layout.offset(s))
                .collect();
            if offs.is_empty() {
                return Err(err(format!("element `{}` does not act on node `{}`", model.element_name(el), node.name)));
            }
            slots.push((el, offs));
        }
        let r = c.rotation;
        let rtr = mat_mul(&transpose(&r), &r);
        let ortho = (0..3).all(|i| (0..3).all(|j| (rtr[i][j] - f64::from(u8::from(i == j))).abs() < 1e-9));
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
            + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        if !(ortho && det > 0.0) {
            return Err(err("the cone frame's rotation must be a proper rotation (orthonormal, det +1)".into()));
        }
        for (name, a) in [("θ_a", c.half_angle_y), ("φ_a", c.half_angle_z)] {
            if !(a > 0.0 && a < std::f64::consts::FRAC_PI_2) {
                return Err(err(format!("half-angle {name} must be in (0, π/2) rad, got {a}")));
            }
        }
        Ok(ConeSetup {
            slots,
            body_offset: body.offset,
            rotation: r,
            half_y: c.half_angle_y,
            half_z: c.half_angle_z,
            enforce: c.enforce,
        })
    }

    /// The model.
    pub fn model(&self) -> &'m Model {
        self.model
    }

    /// The study.
    pub fn study(&self) -> &Study {
        &self.study
    }

    /// A fresh per-thread workspace.
    pub fn workspace(&self) -> Workspace {
        Workspace {
            programs: self.layouts.iter().map(|l| Program::new(l.clone())).collect(),
            values: self.layouts.iter().map(Values::new).collect(),
        }
    }

    /// Output names of the muscles: their elements' names.
    pub fn muscle_names(&self) -> Vec<String> {
        self.modes.iter().map(|&m| self.model.element_name(self.model.mode_owner(m).0).to_string()).collect()
    }

    /// Output names of the sign-constrained reactions (`element.mode`).
    pub fn reaction_names(&self) -> Vec<String> {
        self.study.signs.iter().map(|s| self.model.mode_name(s.mode)).collect()
    }

    /// Output names of the reserves: their inputs' names.
    pub fn reserve_names(&self) -> Vec<String> {
        self.study.reserves.iter().map(|r| self.model.input_name(r.input)).collect()
    }

    /// The stresses of the dependent modes (n_e) that make the muscles pull with `forces` (N)
    /// on top of the laws' stresses `base` (n_e): the `sigma_free` of
    /// [`mollier_core::dynamics::kinetostatics`].
    pub fn stresses(&self, base: &[f64], forces: &[f64]) -> Vec<f64> {
        let mut s = base.to_vec();
        for (&m, &f) in self.modes.iter().zip(forces) {
            s[m.index()] += f;
        }
        s
    }

    /// Solve positions for `frame.q`, then [`Self::solve_frame`]. Never panics; a failure is in
    /// the result's status.
    pub fn frame(&self, ws: &mut Workspace, data: &mut Data, frame: &Frame) -> FrameResult {
        let start = Instant::now();
        if let Err(e) = solve_positions_explained(self.model, data, &frame.q) {
            return self.failed(Status::Kinematics(e.to_string()), start);
        }
        self.solve_inner(ws, data, &frame.qd, &frame.qdd, &frame.loads, None, start)
    }

    /// Load sharing at the configuration solved in `data`, for input rates `qd` and
    /// accelerations `qdd` (n_q each) and extra loads. Never panics.
    pub fn solve_frame(
        &self,
        ws: &mut Workspace,
        data: &mut Data,
        qd: &[f64],
        qdd: &[f64],
        loads: &[Load],
    ) -> FrameResult {
        self.solve_inner(ws, data, qd, qdd, loads, None, Instant::now())
    }

    /// [`Self::frame`] with each muscle's force bounded by `bounds[i]` = `[lower, upper]` (N, in
    /// the study's muscle order) instead of `[0, Fmax(l)]`: the forces a muscle can reach, such
    /// as a Hill muscle's over a control interval (computed muscle control; its passive force is
    /// the lower bound). The criterion weighs the force above the lower bound; the forces
    /// reported are whole, `max_forces` the upper bounds. Never panics.
    pub fn frame_within(&self, ws: &mut Workspace, data: &mut Data, frame: &Frame, bounds: &[[f64; 2]]) -> FrameResult {
        let start = Instant::now();
        if bounds.len() != self.modes.len() || bounds.iter().any(|b| !(b[0].is_finite() && b[1].is_finite())) {
            let message = format!("{} finite force bounds for {} muscles", bounds.len(), self.modes.len());
            return self.failed(Status::Kinematics(message), start);
        }
        if let Err(e) = solve_positions_explained(self.model, data, &frame.q) {
            return self.failed(Status::Kinematics(e.to_string()), start);
        }
        let mut r = self.solve_inner(ws, data, &frame.qd, &frame.qdd, &frame.loads, Some(bounds), start);
        for (i, b) in bounds.iter().enumerate() {
            r.forces[i] += b[0];
            r.max_forces[i] = b[1].max(b[0]);
        }
        r
    }

    /// Shift the maps to forces above `bounds`' lower ends, spans to their upper ends (at
    /// least a micronewton, so that no muscle's variable is idle).
    fn raise(&self, maps: &mut Maps, bounds: &[[f64; 2]]) {
        let k = self.modes.len();
        for (i, (&m, b)) in self.modes.iter().zip(bounds).enumerate() {
            let lo = b[0];
            maps.sigma0[m.index()] += lo;
            for (j, t) in maps.tau0.iter_mut().enumerate() {
                *t += maps.tau_f[j * k + i] * lo;
            }
            for (s, t) in maps.sig0.iter_mut().enumerate() {
                *t += maps.sig_f[s * k + i] * lo;
            }
            for (r, t) in maps.cone0.iter_mut().enumerate() {
                *t += maps.cone_f[r * k + i] * lo;
            }
            maps.fmax[i] = (b[1] - lo).max(1e-6);
        }
    }

    /// All frames, in chunks (see [`RunOptions`]); one result per frame, in order.
    pub fn run(&self, frames: &[Frame], options: RunOptions) -> Vec<FrameResult> {
        self.run_with_progress(frames, options, &|_| {})
    }

    /// [`LoadSharing::run`], telling `progress` the number of frames of each finished chunk.
    pub fn run_with_progress(
        &self,
        frames: &[Frame],
        options: RunOptions,
        progress: &(dyn Fn(usize) + Sync),
    ) -> Vec<FrameResult> {
        let mut results = Vec::with_capacity(frames.len());
        let collect = |_: usize, r: FrameResult| -> Result<(), std::convert::Infallible> {
            results.push(r);
            Ok(())
        };
        let Ok(()) = self.run_streaming(frames.len(), &|i| frames[i].clone(), options, progress, collect);
        results
    }

    /// [`LoadSharing::run`] over `n` frames made on demand by `frame(i)`, each result handed to
    /// `sink(i, result)` in frame order as soon as it and every frame before it are solved; a
    /// sink's error stops the run. Frames go through in windows of a few chunks per thread (the
    /// chunks of a window in parallel), so memory is bounded by the chunk size and the number of
    /// threads, not by `n`. The results are those of [`LoadSharing::run`]: they do not depend on
    /// `parallel`, on the number of threads or on the windows.
    pub fn run_streaming<E>(
        &self,
        n: usize,
        frame: &(dyn Fn(usize) -> Frame + Sync),
        options: RunOptions,
        progress: &(dyn Fn(usize) + Sync),
        mut sink: impl FnMut(usize, FrameResult) -> Result<(), E>,
    ) -> Result<(), E> {
        use rayon::prelude::*;
        let chunk = options.chunk.max(1);
        let n_chunks = n.div_ceil(chunk);
        let per_window = if options.parallel { 4 * rayon::current_num_threads().max(1) } else { 1 };
        let run_chunk = |(c, seed): (Vec<Frame>, Data)| -> Vec<FrameResult> {
            let mut data = seed;
            let mut ws = self.workspace();
            let out: Vec<FrameResult> = c
                .iter()
                .map(|f| {
                    let mut r = self.frame(&mut ws, &mut data, f);
                    if r.status.is_success() {
                        r.warnings = self.model.element_warnings(data.x(), self.muscle_elements());
                    }
                    r
                })
                .collect();
            progress(out.len());
            out
        };
        // the configuration of a sequential run at the start of the next chunk (`follow`)
        let mut follow = Data::new(self.model);
        let mut first = 0;
        while first < n_chunks {
            let last = (first + per_window).min(n_chunks);
            let mut work = Vec::with_capacity(last - first);
            for c in first..last {
                let frames: Vec<Frame> = (c * chunk..((c + 1) * chunk).min(n)).map(frame).collect();
                let seed = if options.follow { follow.clone() } else { Data::new(self.model) };
                if options.follow && c + 1 < n_chunks {
                    for f in &frames {
                        // on failure the configuration stays at the last solved frame, and the
                        // frame reports the failure in its chunk
                        let _ = solve_positions(self.model, &mut follow, &f.q);
                    }
                }
                work.push((frames, seed));
            }
            let parts: Vec<Vec<FrameResult>> = if options.parallel {
                work.into_par_iter().map(run_chunk).collect()
            } else {
                work.into_iter().map(run_chunk).collect()
            };
            for (k, r) in parts.into_iter().flatten().enumerate() {
                sink(first * chunk + k, r)?;
            }
            first = last;
        }
        Ok(())
    }

    /// The elements of the study's muscles, in its order.
    fn muscle_elements(&self) -> impl Iterator<Item = mollier_core::ElementId> + '_ {
        self.study.muscles.iter().map(|m| self.model.mode_owner(m.mode).0)
    }

    pub(crate) fn failed(&self, status: Status, start: Instant) -> FrameResult {
        let k = self.modes.len();
        FrameResult {
            status,
            forces: vec![f64::NAN; k],
            max_forces: vec![f64::NAN; k],
            lengths: vec![f64::NAN; k],
            reserves: vec![f64::NAN; self.study.reserves.len()],
            reserve_shares: vec![f64::NAN; self.study.reserves.len()],
            reactions: vec![f64::NAN; self.study.signs.len()],
            cone_force: None,
            stability_index: None,
            objective: None,
            residual: None,
            iterations: 0,
            time_ms: start.elapsed().as_secs_f64() * 1e3,
            warnings: Vec::new(),
        }
    }

    /// The affine maps of the frame: kinetostatics at zero active force; the driving forces'
    /// derivatives by virtual power, `∂τ_j/∂F_i = ∂e_i/∂q_j` (first-order transfer function);
    /// the constrained reactions' derivatives by the adjoint of kinetostatics.
    pub(crate) fn maps(&self, data: &mut Data, qd: &[f64], qdd: &[f64], loads: &[Load]) -> Result<Maps, String> {
        let model = self.model;
        let (k, nq) = (self.modes.len(), model.n_q());
        let ks0 = kinetostatics(model, data, qd, qdd, None, loads).map_err(|e| e.to_string())?;
        let tau0 = driving_from_kinetostatics(model, data, &ks0);
        first_order(model, data).map_err(|e| e.to_string())?;
        let dfe = data.df_e();
        let mut tau_f = vec![0.0; nq * k];
        for j in 0..nq {
            for (i, m) in self.modes.iter().enumerate() {
                // the muscle's power −F ė is a generalized force −F ∂e/∂q_j, which the driving
                // force need not supply
                tau_f[j * k + i] = dfe[(m.index(), j)];
            }
        }
        let sens = kinetostatic_sensitivity(model, data, &self.rows, &self.modes).map_err(|e| e.to_string())?;
        let ns = self.study.signs.len();
        let mut sig0 = vec![0.0; ns];
        let mut sig_f = vec![0.0; ns * k];
        for (s, sc) in self.study.signs.iter().enumerate() {
            sig0[s] = ks0.sigma[sc.mode.index()];
            for i in 0..k {
                sig_f[s * k + i] = sens[(s, i)];
            }
        }
        let (mut cone0, mut cone_f, mut to_cone) = ([0.0; 3], vec![0.0; 3 * k], [[0.0; 3]; 3]);
        if let Some(c) = &self.cone {
            to_cone = mat_mul(&transpose(&c.rotation), &transpose(&rotation(&quat_at(data.x(), c.body_offset))));
            let (g0, gf) = self.joint_force_map(data, &ks0.sigma, &sens);
            cone0 = mat_vec(&to_cone, &g0);
            for i in 0..k {
                let v = mat_vec(&to_cone, &[gf[i], gf[k + i], gf[2 * k + i]]);
                for r in 0..3 {
                    cone_f[r * k + i] = v[r];
                }
            }
        }
        let mut fmax = vec![0.0; k];
        let mut g = vec![0.0; k];
        let mut lengths = vec![0.0; k];
        for (i, m) in self.study.muscles.iter().enumerate() {
            lengths[i] = m.reference_length + data.mode_value(m.mode);
            g[i] = m.force_length(lengths[i], self.study.width);
            fmax[i] = m.pcsa * self.study.specific_tension * g[i];
        }
        Ok(Maps { sigma0: ks0.sigma, tau0, tau_f, sig0, sig_f, cone0, cone_f, to_cone, fmax, g, lengths })
    }

    /// The global force (N) that the joint node exerts on the cone's elements for stresses
    /// `sigma` (n_e): `Σ D_elᵀ σ_el` at the node's slots.
    fn joint_force(&self, data: &Data, sigma: &[f64]) -> [f64; 3] {
        let mut f = [0.0; 3];
        if let Some(c) = &self.cone {
            for (el, offs) in &c.slots {
                let on_nodes = element_forces(self.model, data, *el, sigma);
                for &o in offs {
                    for a in 0..3 {
                        f[a] -= on_nodes[o + a];
                    }
                }
            }
        }
        f
    }

    /// The joint force as an affine map of the muscle forces: value at `sigma0` and derivatives
    /// (3 x k, row-major) through `sens`, whose rows past the sign constraints are the cone
    /// elements' modes in order.
    fn joint_force_map(&self, data: &Data, sigma0: &[f64], sens: &Mat<f64>) -> ([f64; 3], Vec<f64>) {
        let k = self.modes.len();
        let mut gf = vec![0.0; 3 * k];
        let Some(c) = &self.cone else { return ([0.0; 3], gf) };
        let f0 = self.joint_force(data, sigma0);
        let mut unit = vec![0.0; self.model.n_e()];
        let mut row = self.study.signs.len();
        for (el, offs) in &c.slots {
            let nm = self.model.element(*el).layout().n_modes();
            for kk in 0..nm {
                let m = self.model.mode_id(*el, kk).index();
                unit[m] = 1.0;
                let per = element_forces(self.model, data, *el, &unit);
                unit[m] = 0.0;
                let mut h = [0.0; 3];
                for &o in offs {
                    for a in 0..3 {
                        h[a] -= per[o + a];
                    }
                }
                for i in 0..k {
                    let d = sens[(row, i)];
                    if d != 0.0 {
                        for a in 0..3 {
                            gf[a * k + i] += h[a] * d;
                        }
                    }
                }
                row += 1;
            }
        }
        (f0, gf)
    }

    fn solve_inner(
        &self,
        ws: &mut Workspace,
        data: &mut Data,
        qd: &[f64],
        qdd: &[f64],
        loads: &[Load],
        bounds: Option<&[[f64; 2]]>,
        start: Instant,
    ) -> FrameResult {
        let mut maps = match self.maps(data, qd, qdd, loads) {
            Ok(m) => m,
            Err(e) => return self.failed(Status::Kinematics(e), start),
        };
        if let Some(b) = bounds {
            self.raise(&mut maps, b);
        }
        let k = self.modes.len();
        let nr = self.study.reserves.len();
        let omega_eq = self.input_scales(&maps);
        // a reserve's variable v = r/ρ, ρ = ω/√w: its cost w (r/ω)² is v², like a muscle's u²
        // (an expensive reserve as a large entry of P stalls the interior point)
        let rho: Vec<f64> = self.study.reserves.iter().map(|r| omega_eq[r.input] / r.weight.sqrt()).collect();

        let first = self.fill(&mut ws.values[0], &self.layouts[0], &maps, &omega_eq, &rho, None);
        let out1 = ws.programs[0].solve(&ws.values[0]);
        let mut iterations = out1.iterations;
        if !out1.solved() {
            let mut r = self.report(data, qd, qdd, loads, &maps, &out1, &rho, iterations, start);
            let infeasible = matches!(
                out1.status,
                Some(
                    clarabel::solver::SolverStatus::PrimalInfeasible
                        | clarabel::solver::SolverStatus::AlmostPrimalInfeasible
                )
            );
            if let (true, true, Status::Solver(m)) = (self.explain, infeasible, &mut r.status) {
                *m = format!("{m}: {}", self.explain_infeasible(data, qd, qdd, loads));
            }
            return r;
        }
        let mut out = out1;
        if let Criterion::MaxStress = self.study.criterion {
            // stage 2: least Σ (F/PCSA)² with every stress at most the optimal maximum times
            // 1 + δ (continuity, see `Study::max_stress_slack`) and a hair more (round-off must
            // not make the cap infeasible), reserves held at their stage-1 values
            let t_opt = (0..k).map(|i| maps.g[i] * out.x[i]).fold(out.x[first.t_index()], f64::max);
            let cap = t_opt * (1.0 + self.study.max_stress_slack + 1e-10) + 1e-13;
            let fixed: Vec<f64> = (0..nr).map(|v| rho[v] * out.x[k + v]).collect();
            let (values, programs) = (&mut ws.values[1], &mut ws.programs[1]);
            self.fill(values, &self.layouts[1], &maps, &omega_eq, &rho, Some((cap, &fixed)));
            let out2 = programs.solve(values);
            iterations += out2.iterations;
            if out2.solved() {
                let mut x = out2.x;
                x.truncate(k);
                x.extend((0..nr).map(|v| out.x[k + v]));
                out = Outcome { status: out2.status, error: None, x, iterations, dense: out2.dense };
            } else if nr > 0 {
                // a first stage solved only to clarabel's reduced accuracy (`AlmostSolved`) can
                // hold reserves with which no force within its bounds balances the frame: the
                // reserves free again, at their cost
                let (values, programs) = (&mut ws.values[2], &mut ws.programs[2]);
                self.fill(values, &self.layouts[2], &maps, &omega_eq, &rho, Some((cap, &fixed)));
                let out3 = programs.solve(values);
                iterations += out3.iterations;
                if out3.solved() {
                    out = Outcome { iterations, ..out3 };
                }
            }
            // else: keep the stage-1 solution, optimal for the maximum stress too
        }
        self.report(data, qd, qdd, loads, &maps, &out, &rho, iterations, start)
    }

    /// Why a frame is infeasible, found by solving it again with constraints dropped, one set
    /// more at a time: the joint cone, then the sign constraints on reactions, then the
    /// muscles' upper bounds `Fmax(l)` (a thousand times stronger, no force-length factor). The
    /// first relaxation that solves names the culprit; what to try follows. Only on the failure
    /// path (up to three more solves).
    fn explain_infeasible(&self, data: &mut Data, qd: &[f64], qdd: &[f64], loads: &[Load]) -> String {
        let solves = |study: &Study, data: &mut Data| -> bool {
            let Ok(mut relaxed) = LoadSharing::new(self.model, study.clone()) else { return false };
            relaxed.explain = false;
            let mut ws = relaxed.workspace();
            relaxed.solve_frame(&mut ws, data, qd, qdd, loads).status.is_success()
        };
        let mut study = self.study.clone();
        if let Some(c) = study.cone.as_mut().filter(|c| c.enforce) {
            c.enforce = false;
            if solves(&study, data) {
                return "the joint cone makes the frame infeasible (it solves without it): widen the margin, \
                        run without the cone (`--no-cone`, or `joint_cone = [\"without\"]` in a study) or add reserves"
                    .into();
            }
        }
        if !study.signs.is_empty() {
            let names: Vec<String> = study.signs.iter().map(|s| self.model.mode_name(s.mode)).collect();
            study.signs.clear();
            if solves(&study, data) {
                return format!(
                    "the sign constraints on reactions ({}) make the frame infeasible, with the joint cone \
                     dropped too (it solves without them): check the contacts and ligaments, or add reserves",
                    names.join(", ")
                );
            }
        }
        study.specific_tension *= 1e3;
        study.width = f64::INFINITY;
        if solves(&study, data) {
            return "the muscles' force bounds make the frame infeasible (it solves with muscles a thousand \
                    times stronger and the other constraints dropped): the muscles are too weak for the load \
                    here; add reserves, check the PCSAs, the force-length relation and the load"
                .into();
        }
        "no combination of pulling muscles makes the driving forces, even without the cone, the sign \
         constraints and the force bounds: an input has no muscle that pulls the needed way; add reserves \
         or muscles"
            .into()
    }

    /// The scale `ω_j` of each input's equality (N m or N): its largest term, one muscle at full
    /// force or the load.
    pub(crate) fn input_scales(&self, maps: &Maps) -> Vec<f64> {
        let k = self.modes.len();
        (0..self.model.n_q())
            .map(|j| {
                scale_or_one(max_abs((0..k).map(|i| maps.tau_f[j * k + i] * maps.fmax[i])).max(maps.tau0[j].abs()))
            })
            .collect()
    }

    /// The program's layouts: one per stage.
    pub(crate) fn layouts(&self) -> &[Layout] {
        &self.layouts
    }

    /// Fill the program's numbers. `stage2 = Some((cap, reserves))` for the second stage of (d).
    pub(crate) fn fill<'a>(
        &self,
        v: &mut Values,
        layout: &'a Layout,
        maps: &Maps,
        omega_eq: &[f64],
        rho: &[f64],
        stage2: Option<(f64, &[f64])>,
    ) -> &'a Layout {
        let k = layout.k;
        let s = &maps.fmax;
        for j in 0..layout.n_eq {
            let w = omega_eq[j];
            for i in 0..k {
                v.eq[j * k + i] = maps.tau_f[j * k + i] * s[i] / w;
            }
            v.eq_rhs[j] = -maps.tau0[j] / w;
        }
        if let Some((_, fixed)) = stage2.filter(|_| layout.reserves.is_empty()) {
            for (r, res) in self.study.reserves.iter().enumerate() {
                v.eq_rhs[res.input] += fixed[r] / omega_eq[res.input];
            }
        }
        for (r, res) in layout.reserves.iter().enumerate() {
            v.reserve_coef[r] = -rho[r] / omega_eq[*res];
        }
        for (sidx, sc) in self.study.signs.iter().enumerate() {
            let row = &maps.sig_f[sidx * k..(sidx + 1) * k];
            let w = scale_or_one(max_abs((0..k).map(|i| row[i] * s[i])).max(maps.sig0[sidx].abs()));
            // compression: σ <= 0; tension: −σ <= 0
            let sg = match sc.sign {
                Sign::Compression => 1.0,
                Sign::Tension => -1.0,
            };
            for i in 0..k {
                v.sign[sidx * k + i] = sg * row[i] * s[i] / w;
            }
            v.sign_rhs[sidx] = -sg * maps.sig0[sidx] / w;
        }
        if layout.stress.is_some() {
            v.stress.copy_from_slice(&maps.g);
            v.stress_rhs = stage2.map_or(0.0, |(cap, _)| cap);
        }
        if let (true, Some(c)) = (layout.cone, &self.cone) {
            let w = scale_or_one(
                (0..k)
                    .map(|i| {
                        let f = [maps.cone_f[i], maps.cone_f[k + i], maps.cone_f[2 * k + i]];
                        (f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt() * s[i]
                    })
                    .fold(0.0, f64::max)
                    .max(maps.cone0.iter().map(|x| x * x).sum::<f64>().sqrt()),
            );
            let div = [1.0, c.half_y.tan(), c.half_z.tan()];
            for r in 0..3 {
                for i in 0..k {
                    v.cone[r * k + i] = -maps.cone_f[r * k + i] * s[i] / (div[r] * w);
                }
                v.cone_rhs[r] = maps.cone0[r] / (div[r] * w);
            }
        }
        // objective: Σ c_i u_i² (+ reserves), normalised by the largest c_i
        let c: Vec<f64> = match (&self.study.criterion, layout.stress) {
            (Criterion::MaxStress, Some(true)) => vec![0.0; k],
            (Criterion::MaxStress, _) => (0..k).map(|i| maps.g[i] * maps.g[i]).collect(),
            _ => self.cost_coefficients(&maps.fmax),
        };
        // stage 1 of (d): objective t² + Σ w v², t the maximum stress over the specific tension
        let norm =
            if layout.stress == Some(true) { 1.0 } else { scale_or_one(c.iter().fold(0.0, |m: f64, x| m.max(*x))) };
        let cubes = layout.cubes;
        if cubes {
            // κ: the activation that would balance the most loaded input if every muscle helped
            // it alike; with s_i >= u_i³/κ² the cones' entries are of one size (with κ = 1 and
            // activations of a few %, clarabel stops with forces off by parts in 10⁶)
            v.cube_scale = (0..layout.n_eq)
                .map(|j| v.eq_rhs[j].abs() / scale_or_one((0..k).map(|i| v.eq[j * k + i].abs()).sum()))
                .fold(0.0, f64::max)
                .clamp(1e-3, 1.0);
        }
        // the cubic objective in units of κ³ (its value near 1): clarabel stops at an absolute
        // gap, and the forces' error grows as the square root of the gap over the curvature
        let gain = if cubes { v.cube_scale.powi(-3) } else { 1.0 };
        for i in 0..k {
            // Σ c_i u_i² on P, or Σ c_i κ² s_i (s_i >= u_i³/κ², the power cones) on q
            v.p_diag[i] = if cubes { 0.0 } else { 2.0 * c[i] / norm };
            v.q[i] = 0.0;
            if cubes {
                v.p_diag[layout.cube_index(i)] = 0.0;
                v.q[layout.cube_index(i)] = gain * c[i] * v.cube_scale.powi(2) / norm;
            }
        }
        // a reserve's cost w (r/ω)² = v² in the scaled objective: at its input's scale ω it
        // costs w times the most expensive muscle at full force (see `Reserve`)
        for (r, res) in self.study.reserves.iter().enumerate().take(layout.reserves.len()) {
            v.p_diag[k + r] = gain * 2.0 * res.weight * (rho[r] / omega_eq[res.input]).powi(2);
            v.q[k + r] = 0.0;
        }
        if layout.stress == Some(true) {
            // t² + εt rather than t: the same minimiser (t >= 0, increasing), and reserves then
            // trade against the muscles quadratically, as in (a)-(c), instead of always taking
            // a fixed amount; ε keeps a gradient at t = 0 (no load), where t² alone leaves every
            // active row without a multiplier and the interior point stalls
            let t = layout.t_index();
            v.p_diag[t] = 2.0;
            v.q[t] = MAX_STRESS_LINEAR;
        }
        layout
    }

    /// `c_i` of a quadratic criterion `Σ c_i u_i²` in `u_i = F_i/Fmax_i` (the criterion's units):
    /// muscle i's cost at full force. For (d), `T²` (its second stage's `Σ (F/PCSA)²`).
    fn cost_coefficients(&self, fmax: &[f64]) -> Vec<f64> {
        let m = &self.study.muscles;
        let k = fmax.len();
        match &self.study.criterion {
            Criterion::Forces => (0..k).map(|i| fmax[i] * fmax[i]).collect(),
            Criterion::Stresses => (0..k).map(|i| (fmax[i] / m[i].pcsa).powi(2)).collect(),
            Criterion::Activations => vec![1.0; k],
            Criterion::Weighted(w) => (0..k).map(|i| w[i] * fmax[i] * fmax[i]).collect(),
            Criterion::MaxStress => vec![self.study.specific_tension.powi(2); k],
            Criterion::CubedStresses => (0..k).map(|i| (fmax[i] / m[i].pcsa).powi(3)).collect(),
        }
    }

    /// The cost of a reserve at its input's scale with weight 1, in the criterion's units: the
    /// largest muscle cost at full force (`max c_i`; `T`, N/m², for (d)).
    fn reserve_unit(&self, fmax: &[f64]) -> f64 {
        match self.study.criterion {
            Criterion::MaxStress => self.study.specific_tension,
            _ => scale_or_one(self.cost_coefficients(fmax).into_iter().fold(0.0, f64::max)),
        }
    }

    /// The criterion's value (its own units) with the reserves' cost `w · C · (r/ω)²` (`C` of
    /// [`Self::reserve_unit`], `ω` the input's scale), `(r/ρ)²` with `rho` holding `ω/√w`.
    fn objective(&self, forces: &[f64], reserves: &[f64], fmax: &[f64], rho: &[f64]) -> f64 {
        let m = &self.study.muscles;
        let unit = self.reserve_unit(fmax);
        let res: f64 =
            self.study.reserves.iter().zip(reserves).zip(rho).map(|((_, v), p)| unit * (v / p).powi(2)).sum();
        let sum = |f: &dyn Fn(usize) -> f64| (0..forces.len()).map(f).sum::<f64>();
        res + match &self.study.criterion {
            Criterion::Forces => sum(&|i| forces[i] * forces[i]),
            Criterion::Stresses => sum(&|i| (forces[i] / m[i].pcsa).powi(2)),
            Criterion::Activations => sum(&|i| if fmax[i] > 0.0 { (forces[i] / fmax[i]).powi(2) } else { 0.0 }),
            Criterion::Weighted(w) => sum(&|i| w[i] * forces[i] * forces[i]),
            Criterion::MaxStress => (0..forces.len()).map(|i| forces[i] / m[i].pcsa).fold(0.0, f64::max),
            Criterion::CubedStresses => sum(&|i| (forces[i] / m[i].pcsa).powi(3)),
        }
    }
}
