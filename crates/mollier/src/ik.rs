//! Inverse kinematics: the model's motion that best fits measured markers.
//!
//! Frame by frame, the weighted least squares of the model's markers (named points) against the
//! measured ones of a `.trc` trial ([`crate::trc`]),
//!
//! ```text
//! min_p  Σ_k w_k |x_k(q(p)) − m_k|²  +  W Σ_j v_j (p_j − p̄_j)²,   W = Σ_k w_k
//! ```
//!
//! (OpenSim's objective, times `W`: Simbody's assembler divides the markers' term by the sum of
//! their weights in the frame)
//!
//! over unknowns `p`: the model's inputs, or for an OpenSim model the coordinates of OpenSim
//! whose functions give the inputs ([`Unknowns`]). Each trial `q` is solved by the kernel
//! (Newton-Raphson), so closed chains hold exactly at every iterate — the shoulder's scapula
//! never leaves the thorax. The step is Gauss-Newton's, damped as Levenberg-Marquardt's only
//! once a step fails to lower the cost, with the Jacobian `∂x_k/∂p = DF^x_k · ∂q/∂p` from the
//! kernel's exact first-order transfer functions (no differences); each frame starts from the
//! quadratic extrapolation of the last three frames' solutions (the line through the last two
//! for the third, the last one's for the second). A
//! marker missing in a frame (`NaN` in the trial) is left out of that frame.
//!
//! [`IkRun::solve`] gives a frame; [`write()`] writes `motion.csv` (the inputs: a motion file for
//! `inverse-dynamics`, `inverse` and `study`), `coordinates.csv` (the unknowns),
//! `marker_errors.csv` and the summary through [`crate::output`].

mod skeleton;
pub mod tasks;

use std::path::Path;

use mollier_core::kinematics::solve_positions_explained;
use mollier_core::transfer::first_order;
use mollier_core::{Data, NodeId};
use mollier_core::{NewtonOptions, Predictor, solve_positions_with};
use mollier_format::{Diagnostic, Diagnostics, human};
use serde_json::{Value, json};

use mollier_core::element::Quantity;

use crate::analysis::FrameError;
use crate::compile::Compiled;
use crate::output::{OutputDir, OutputError, TableFormat};
use crate::trc::MarkerTrial;
pub use tasks::{CoordinateTask, MarkerTask, Tasks, parse_tasks, read_tasks};

/// What inverse kinematics solves for.
#[derive(Clone, Debug, Default)]
pub enum Unknowns {
    /// The model's inputs (its generalized coordinates).
    #[default]
    Inputs,
    /// The coordinates of the OpenSim model it was imported from: each input is a function of
    /// one coordinate (a knee's translations of its angle, a coupler's dependent of its
    /// independent), so IK fits the coordinates OpenSim's IK fits. Locked coordinates and
    /// coupled ones are not unknowns.
    Coordinates(Box<mollier_osim::Import>),
}

/// The map from the unknowns `p` to the inputs `q` and its derivative.
struct Params {
    names: Vec<String>,
    angle: Vec<bool>,
    initial: Vec<f64>,
    osim: Option<Osim>,
}

struct Osim {
    import: Box<mollier_osim::Import>,
    /// The coordinate of each unknown.
    free: Vec<usize>,
}

impl Osim {
    /// Every coordinate of the OpenSim model at the unknowns `p` (rad or m, the model's order:
    /// locked ones at their defaults, coupled ones from their couplers), and their derivatives
    /// by `p` (n_coordinates x n_p, row-major).
    fn coordinates(&self, p: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let np = p.len();
        let m = &self.import.model;
        let mut c = self.import.initial.clone();
        let mut dc = vec![0.0; c.len() * np];
        for (j, &k) in self.free.iter().enumerate() {
            c[k] = p[j];
            dc[k * np + j] = 1.0;
        }
        // as OpenSim's couplers set their dependents, with the chain rule
        for _ in 0..m.couplers.len() {
            for cp in &m.couplers {
                let x = c[cp.independent];
                c[cp.dependent] = cp.scale * cp.function.value(x);
                let s = cp.scale * cp.function.derivatives(x)[1];
                for j in 0..np {
                    dc[cp.dependent * np + j] = s * dc[cp.independent * np + j];
                }
            }
        }
        (c, dc)
    }
}

impl Params {
    fn new(compiled: &Compiled, unknowns: Unknowns) -> Self {
        let Unknowns::Coordinates(import) = unknowns else {
            let names = compiled.inputs.iter().map(|i| i.name.clone()).collect();
            let angle = compiled.inputs.iter().map(|i| i.quantity == Quantity::Angle).collect();
            return Self { names, angle, initial: compiled.model.q0(), osim: None };
        };
        let coords = &import.model.coordinates;
        // a coordinate drives an input itself, or through the couplers it is independent of
        let mut drives = vec![false; coords.len()];
        let mut angle = vec![false; coords.len()];
        for (d, info) in import.inputs.iter().zip(&compiled.inputs) {
            drives[d.coordinate] = true;
            angle[d.coordinate] |= info.quantity == Quantity::Angle;
        }
        for _ in 0..import.model.couplers.len() {
            for c in &import.model.couplers {
                drives[c.independent] |= drives[c.dependent];
                angle[c.independent] |= angle[c.dependent];
            }
        }
        let coupled: Vec<usize> = import.model.couplers.iter().map(|c| c.dependent).collect();
        let free: Vec<usize> =
            (0..coords.len()).filter(|&c| drives[c] && !coords[c].locked && !coupled.contains(&c)).collect();
        Self {
            names: free.iter().map(|&c| coords[c].name.clone()).collect(),
            angle: free.iter().map(|&c| angle[c]).collect(),
            initial: free.iter().map(|&c| import.initial[c]).collect(),
            osim: Some(Osim { import, free }),
        }
    }

    fn len(&self) -> usize {
        self.names.len()
    }

    /// The inputs `q` at `p`, and with `g` also `∂q/∂p` (n_q x n_p, row-major).
    fn inputs(&self, p: &[f64], q: &mut Vec<f64>, g: Option<&mut Vec<f64>>) {
        let np = p.len();
        let Some(o) = &self.osim else {
            q.clear();
            q.extend_from_slice(p);
            if let Some(g) = g {
                g.clear();
                g.resize(np * np, 0.0);
                (0..np).for_each(|j| g[j * np + j] = 1.0);
            }
            return;
        };
        let (c, dc) = o.coordinates(p);
        q.clear();
        q.extend(o.import.inputs.iter().map(|d| d.function.value(c[d.coordinate]) - d.offset));
        if let Some(g) = g {
            g.clear();
            for d in &o.import.inputs {
                let s = d.function.derivatives(c[d.coordinate])[1];
                g.extend((0..np).map(|j| s * dc[d.coordinate * np + j]));
            }
        }
    }
}

/// A marker of the model fitted to one of the trial.
#[derive(Clone, Debug, PartialEq)]
pub struct UsedMarker {
    /// The trial's name for it.
    pub name: String,
    /// Its index in the trial.
    pub trial: usize,
    /// The model's point (`body.point`).
    pub point: String,
    /// The point's node.
    pub node: NodeId,
    /// Its weight.
    pub weight: f64,
}

/// How a frame's fit stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IkOptions {
    /// Most Gauss-Newton steps in a frame.
    pub max_iterations: usize,
    /// A step whose largest change is below this (rad or m) ends the frame.
    pub tolerance: f64,
}

impl Default for IkOptions {
    fn default() -> Self {
        Self { max_iterations: 200, tolerance: 1e-10 }
    }
}

impl IkOptions {
    /// These options with the stopping tolerance `tolerance` (rad or m: a frame ends when no
    /// step changes an unknown by more); refused unless a finite number in (0, 1].
    pub fn with_tolerance(self, tolerance: f64) -> Result<Self, Box<Diagnostic>> {
        if tolerance.is_finite() && tolerance > 0.0 && tolerance <= 1.0 {
            return Ok(Self { tolerance, ..self });
        }
        let message = format!("the tolerance is a number in (0, 1] (rad or m), not {tolerance}");
        Err(Box::new(Diagnostic::new("--tolerance", "", message).with_hint("e.g. 1e-5, OpenSim's IK accuracy")))
    }
}

/// One frame's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct IkFrame {
    /// The unknowns (rad or m), in [`IkRun::unknown_names`]' order.
    pub p: Vec<f64>,
    /// The model's inputs (SI), in its input order.
    pub q: Vec<f64>,
    /// Each used marker's distance from its measurement (m); `NaN` where it is missing.
    pub errors: Vec<f64>,
    /// Root mean square of the errors of the markers present (m).
    pub rms: f64,
    /// The largest of them (m).
    pub max: f64,
    /// Gauss-Newton steps taken.
    pub iterations: usize,
}

/// An inverse kinematics run over a trial.
pub struct IkRun<'a> {
    /// The user's model (its inputs name the motion's columns).
    compiled: &'a Compiled,
    /// The model solved when it is not `compiled`: `compiled` without its muscles.
    skeleton: Option<Compiled>,
    trial: &'a MarkerTrial,
    data: Data,
    params: Params,
    markers: Vec<UsedMarker>,
    /// (unknown, square root of the weight, target)
    coordinate_tasks: Vec<(usize, f64, f64)>,
    /// The square root of the frame's marker weights' sum, by which the coordinate tasks'
    /// residuals are multiplied (see [`IkRun::solve`]).
    task_scale: f64,
    ignored: Vec<String>,
    p: Vec<f64>,
    /// The last three frames' times (s) and solutions, oldest first: the next frame starts from
    /// their extrapolation ([`IkRun::start`]).
    history: Vec<(f64, Vec<f64>)>,
    options: IkOptions,
}

/// `name` as the OpenSim import names a point (`R.ASIS` is `R_ASIS`).
pub(crate) fn point_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect()
}

/// The model's point for the trial's marker `name`: a point so named (`body.name`, or `name`
/// alone), or named as the OpenSim import renames it. `Err` with the candidates when several
/// bodies have one.
fn find_point(compiled: &Compiled, name: &str) -> Result<Option<(String, NodeId)>, Vec<String>> {
    let renamed = point_name(name);
    let hits: Vec<&crate::compile::PointEntry> = compiled
        .points
        .iter()
        .filter(|p| {
            let short = p.name.rsplit_once('.').map_or(p.name.as_str(), |(_, s)| s);
            p.name == name || (p.name.contains('.') && (short == name || short == renamed))
        })
        .collect();
    match hits.as_slice() {
        [] => Ok(None),
        [p] => Ok(Some((p.name.clone(), p.node))),
        many => match many.iter().find(|p| p.name == name) {
            Some(p) => Ok(Some((p.name.clone(), p.node))),
            None => Err(many.iter().map(|p| p.name.clone()).collect()),
        },
    }
}

impl<'a> IkRun<'a> {
    /// Set up IK of `trial` on the compiled model: the markers to fit (those of `tasks`, else
    /// every marker of the trial that the model has, weight 1) and the coordinate tasks. Every
    /// problem is located: a task naming a marker the trial or the model lacks, a coordinate
    /// that is not an unknown, a trial sharing no marker with the model, a frame without any
    /// used marker. The frames are solved on the model without its muscles' paths, compiled
    /// with `registry` (the one `compiled` was compiled with): they place no body.
    pub fn new(
        compiled: &'a Compiled,
        registry: &mollier_core::registry::Registry,
        unknowns: Unknowns,
        trial: &'a MarkerTrial,
        tasks: Option<&Tasks>,
    ) -> Result<Self, Diagnostics> {
        let params = Params::new(compiled, unknowns);
        let mut problems = Vec::new();
        let mut markers = Vec::new();
        let mut add = |k: usize, weight: f64, at: Option<&Diagnostic>, problems: &mut Vec<Diagnostic>| {
            let name = &trial.names[k];
            match find_point(compiled, name) {
                Ok(Some((point, node))) => {
                    markers.push(UsedMarker { name: name.clone(), trial: k, point, node, weight })
                }
                Ok(None) => {
                    if let Some(at) = at {
                        problems.push(relabel(
                            at,
                            format!("the model has no marker `{name}`"),
                            "a marker is a point of the model named as in the trial (`.` may be `_`)",
                        ));
                    }
                }
                Err(many) => problems.push(trial.marker_problem(
                    k,
                    format!("marker `{name}` is a point of several bodies: {}", many.join(", ")),
                    "rename the model's points so that one body has it",
                )),
            }
        };
        match tasks {
            Some(t) => {
                for task in &t.markers {
                    match trial.names.iter().position(|n| *n == task.name) {
                        Some(k) => add(k, task.weight, Some(&task.at), &mut problems),
                        None => problems.push(relabel(
                            &task.at,
                            format!("marker `{}` is not in the trial `{}`", task.name, trial.file),
                            "name the markers as in the .trc file's header",
                        )),
                    }
                }
            }
            None => (0..trial.names.len()).for_each(|k| add(k, 1.0, None, &mut problems)),
        }
        let ignored: Vec<String> =
            trial.names.iter().filter(|n| !markers.iter().any(|m| m.name == **n)).cloned().collect();
        let mut coordinate_tasks = Vec::new();
        for task in tasks.map_or(&[][..], |t| &t.coordinates) {
            match params.names.iter().position(|n| *n == task.name) {
                Some(j) => coordinate_tasks.push((j, task.weight.sqrt(), task.value.unwrap_or(params.initial[j]))),
                None => problems.push(relabel(
                    &task.at,
                    format!("`{}` is not one of the unknowns", task.name),
                    format!("the unknowns are {}", params.names.join(", ")),
                )),
            }
        }
        if markers.is_empty() && problems.is_empty() && !trial.names.is_empty() {
            problems.push(trial.marker_problem(
                0,
                "none of the trial's markers is a marker of the model",
                "the model's points must be named as the trial's markers (`R.ASIS` or `R_ASIS`)",
            ));
        }
        if problems.is_empty() {
            for i in 0..trial.len() {
                if !markers.iter().any(|m| trial.marker(i, m.trial).is_some()) {
                    problems.push(trial.frame_problem(
                        i,
                        format!("no marker used by IK is present at time {}", human(trial.times[i])),
                        "leave the frame out of the trial, or fill its gaps",
                    ));
                    break;
                }
            }
        }
        if !problems.is_empty() {
            return Err(Diagnostics(problems));
        }
        let points: Vec<&str> = markers.iter().map(|m| m.point.as_str()).collect();
        let node = |s: &Compiled, point: &str| s.points.iter().find(|p| p.name == point).map(|p| p.node);
        let skeleton = skeleton::without_muscles(compiled, registry, &points)
            .filter(|s| markers.iter().all(|m| node(s, &m.point).is_some()));
        if let Some(s) = &skeleton {
            // the same point of the model without its muscles
            markers.iter_mut().for_each(|m| m.node = node(s, &m.point).unwrap_or(m.node));
        }
        let p = params.initial.clone();
        let data = Data::new(&skeleton.as_ref().unwrap_or(compiled).model);
        Ok(Self {
            compiled,
            skeleton,
            trial,
            data,
            params,
            markers,
            coordinate_tasks,
            task_scale: 1.0,
            ignored,
            p,
            history: Vec::new(),
            options: IkOptions::default(),
        })
    }

    /// With these stopping rules.
    pub fn with_options(mut self, options: IkOptions) -> Self {
        self.options = options;
        self
    }

    /// The unknowns' names (inputs, or OpenSim coordinates).
    pub fn unknown_names(&self) -> &[String] {
        &self.params.names
    }

    /// For an OpenSim model, all its coordinates (rad or m, in its order) at the unknowns `p`
    /// ([`IkFrame::p`]): the free ones from `p`, locked ones at their defaults, coupled ones from
    /// their couplers. `None` when the unknowns are the model's inputs.
    pub fn coordinates(&self, p: &[f64]) -> Option<Vec<f64>> {
        self.params.osim.as_ref().map(|o| o.coordinates(p).0)
    }

    /// Whether each unknown is an angle (rad) rather than a length (m).
    pub fn unknown_is_angle(&self) -> &[bool] {
        &self.params.angle
    }

    /// The markers fitted, in task (or trial) order.
    pub fn markers(&self) -> &[UsedMarker] {
        &self.markers
    }

    /// The trial's markers that are not fitted (the model lacks them, or no task names them).
    pub fn ignored(&self) -> &[String] {
        &self.ignored
    }

    /// The trial.
    pub fn trial(&self) -> &MarkerTrial {
        self.trial
    }

    /// The compiled model the frames are solved on: the model without its muscles' paths, or
    /// the model itself when it has none. [`IkRun::data`] and the markers' nodes are its.
    pub fn solved_model(&self) -> &Compiled {
        self.skeleton.as_ref().unwrap_or(self.compiled)
    }

    /// The kernel's workspace of [`IkRun::solved_model`], at the last frame's solution.
    pub fn data(&self) -> &Data {
        &self.data
    }

    /// Solve the kernel at `p` and fill the residuals `r` of the frame's markers `observed`
    /// (used marker, measured position) and coordinate tasks.
    fn residuals(
        &mut self,
        p: &[f64],
        observed: &[(usize, [f64; 3])],
        q: &mut Vec<f64>,
        r: &mut Vec<f64>,
    ) -> Result<f64, FrameError> {
        let model = &self.skeleton.as_ref().unwrap_or(self.compiled).model;
        self.params.inputs(p, q, None);
        // a trial step is a Gauss-Newton step from the solution whose DF is at hand: the linear
        // prediction is as good as the step's own model of the markers, and costs no joint
        // Hessians; the kernel's default (its fourth-order predictor, bisections) where it fails
        let linear = NewtonOptions { predictor: Predictor::FirstOrder, ..NewtonOptions::default() };
        if solve_positions_with(model, &mut self.data, q, &linear).is_err() {
            solve_positions_explained(model, &mut self.data, q)?;
        }
        r.clear();
        for &(k, m) in observed {
            let x = self.data.position(model, self.markers[k].node);
            let w = self.markers[k].weight.sqrt();
            r.extend((0..3).map(|a| w * (x[a] - m[a])));
        }
        let c = self.task_scale;
        r.extend(self.coordinate_tasks.iter().map(|&(j, w, target)| c * w * (p[j] - target)));
        let cost: f64 = r.iter().map(|v| v * v).sum();
        if cost.is_finite() { Ok(cost) } else { Err(FrameError::NonFinite("marker residual".into())) }
    }

    /// The Jacobian of the residuals at the solved `p` (rows x n_p, row-major): the marker rows
    /// of `DF^x`, read a column (an input) at a time, times the nonzeros of that input's row of
    /// `∂q/∂p` (one or two: an input is a function of one coordinate, or of a coupler's).
    fn jacobian(&mut self, p: &[f64], observed: &[(usize, [f64; 3])], jac: &mut Vec<f64>) -> Result<(), FrameError> {
        let model = &self.skeleton.as_ref().unwrap_or(self.compiled).model;
        first_order(model, &mut self.data)?;
        let (np, nq) = (p.len(), model.n_q());
        let mut q = Vec::new();
        let mut g = Vec::new();
        self.params.inputs(p, &mut q, Some(&mut g));
        let rows: Vec<(usize, f64)> = observed
            .iter()
            .map(|&(k, _)| (model.nodes()[self.markers[k].node.index()].offset, self.markers[k].weight.sqrt()))
            .collect();
        jac.clear();
        jac.resize((3 * rows.len() + self.coordinate_tasks.len()) * np, 0.0);
        let df = self.data.df_x();
        let mut nonzero = Vec::new();
        for (i, gi) in g.chunks_exact(np.max(1)).take(nq).enumerate() {
            nonzero.clear();
            nonzero.extend(gi.iter().copied().enumerate().filter(|(_, v)| *v != 0.0));
            if nonzero.is_empty() {
                continue;
            }
            let column = df.col(i).try_as_col_major().expect("a column of DF is contiguous").as_slice();
            for (r, &(o, w)) in rows.iter().enumerate() {
                for a in 0..3 {
                    let d = w * column[o + a];
                    let row = &mut jac[(3 * r + a) * np..(3 * r + a + 1) * np];
                    nonzero.iter().for_each(|&(j, v)| row[j] += d * v);
                }
            }
        }
        for (t, &(j, w, _)) in self.coordinate_tasks.iter().enumerate() {
            jac[(3 * rows.len() + t) * np + j] = self.task_scale * w;
        }
        Ok(())
    }

    /// Fit frame `i` of the trial, starting from the extrapolation of the last frames' solutions
    /// when they are the frames just before it (a quadratic, or a line), else from the last
    /// frame's solution (the model's initial configuration for the first). On failure the run
    /// stays at the last solved frame.
    pub fn solve(&mut self, i: usize) -> Result<IkFrame, FrameError> {
        let observed: Vec<(usize, [f64; 3])> = self
            .markers
            .iter()
            .enumerate()
            .filter_map(|(k, m)| self.trial.marker(i, m.trial).map(|x| (k, x)))
            .collect();
        // OpenSim's objective (Simbody's assembler): the markers' weighted squares over the sum
        // of their weights, plus each coordinate task's weighted square; times that sum here
        self.task_scale = observed.iter().map(|&(k, _)| self.markers[k].weight).sum::<f64>().sqrt();
        let start_x = self.data.x().to_vec();
        let start_solved = self.data.is_solved();
        let result = self.fit(&observed, self.trial.times[i]);
        match result {
            Ok(frame) => Ok(frame),
            Err(e) => {
                self.data.set_x(&start_x);
                if start_solved {
                    let mut q = Vec::new();
                    self.params.inputs(&self.p.clone(), &mut q, None);
                    let model = &self.skeleton.as_ref().unwrap_or(self.compiled).model;
                    let _ = solve_positions_explained(model, &mut self.data, &q);
                }
                Err(e)
            }
        }
    }

    /// Where frame `t` (s) starts: the quadratic through the last three solutions when they are
    /// the frames just before it (no spacing more than twice another), else the line through the
    /// last two, else the last solution. The quadratic's error is of the third order in the
    /// spacing, the line's of the second: the first step is smaller.
    fn start(&self, t: f64) -> Vec<f64> {
        let even = |a: f64, b: f64| a > 0.0 && b > 0.0 && a <= 2.0 * b && b <= 2.0 * a;
        match self.history.as_slice() {
            [(t3, p3), (t2, p2), (t1, p1)] if even(t - t1, t1 - t2) && even(t1 - t2, t2 - t3) => {
                // Lagrange's weights at t of the nodes t1, t2, t3
                let w1 = (t - t2) * (t - t3) / ((t1 - t2) * (t1 - t3));
                let w2 = (t - t1) * (t - t3) / ((t2 - t1) * (t2 - t3));
                let w3 = (t - t1) * (t - t2) / ((t3 - t1) * (t3 - t2));
                p1.iter().zip(p2).zip(p3).map(|((a, b), c)| w1 * a + w2 * b + w3 * c).collect()
            }
            [.., (t2, p2), (t1, p1)] if t > *t1 && t1 > t2 && t - t1 <= 2.0 * (t1 - t2) => {
                let k = (t - t1) / (t1 - t2);
                p1.iter().zip(p2).map(|(a, b)| a + k * (a - b)).collect()
            }
            _ => self.p.clone(),
        }
    }

    fn fit(&mut self, observed: &[(usize, [f64; 3])], t: f64) -> Result<IkFrame, FrameError> {
        let np = self.params.len();
        let (mut q, mut r, mut jac) = (Vec::new(), Vec::new(), Vec::new());
        let mut p = self.start(t);
        let mut cost = match self.residuals(&p, observed, &mut q, &mut r) {
            Ok(c) => c,
            Err(_) if p != self.p => {
                p.clone_from(&self.p);
                self.residuals(&p, observed, &mut q, &mut r)?
            }
            Err(e) => return Err(e),
        };
        let (mut trial_q, mut trial_r, mut nonzero) = (Vec::new(), Vec::new(), Vec::new());
        // Gauss-Newton's own step first; Levenberg-Marquardt's damping only once a step fails
        let mut lambda = 0.0;
        let more = |l: f64| if l == 0.0 { 1e-3 } else { l * 10.0 };
        let mut iterations = 0;
        while iterations < self.options.max_iterations {
            iterations += 1;
            self.jacobian(&p, observed, &mut jac)?;
            let rows = r.len();
            // the normal equations J'J δ = -J'r
            let mut a = vec![0.0; np * np];
            let mut b = vec![0.0; np];
            for row in 0..rows {
                // a marker's row is 0 for the unknowns that do not move its body: its products
                // are those of its nonzeros
                nonzero.clear();
                nonzero.extend(jac[row * np..(row + 1) * np].iter().copied().enumerate().filter(|(_, v)| *v != 0.0));
                for (k, &(j, v)) in nonzero.iter().enumerate() {
                    b[j] -= v * r[row];
                    nonzero[k..].iter().for_each(|&(l, u)| a[j * np + l] += v * u);
                }
            }
            for j in 0..np {
                for l in 0..j {
                    a[j * np + l] = a[l * np + j];
                }
            }
            let x_good = self.data.x().to_vec();
            let mut step = None;
            while lambda < 1e16 {
                let mut m = a.clone();
                for j in 0..np {
                    // Marquardt's scaling, with a floor for an unknown no marker sees
                    m[j * np + j] += lambda * a[j * np + j].max(1e-9);
                }
                let Some(delta) = solve_partial_pivoting(&m, &b, np) else {
                    lambda = more(lambda);
                    continue;
                };
                let trial: Vec<f64> = p.iter().zip(&delta).map(|(x, d)| x + d).collect();
                match self.residuals(&trial, observed, &mut trial_q, &mut trial_r) {
                    Ok(c) if c <= cost => {
                        step = Some((trial, delta, c));
                        break;
                    }
                    _ => {
                        // back to the last solution before the next trial
                        self.data.set_x(&x_good);
                        lambda = more(lambda);
                    }
                }
            }
            let Some((trial, delta, c)) = step else {
                // no step lowers the cost: at its minimum to rounding
                self.residuals(&p, observed, &mut q, &mut r)?;
                break;
            };
            lambda = if lambda <= 1e-3 { 0.0 } else { lambda * 0.1 };
            let small = delta.iter().all(|d| d.abs() <= self.options.tolerance);
            let stalled = cost - c <= 1e-15 * cost;
            (p, cost) = (trial, c);
            std::mem::swap(&mut q, &mut trial_q);
            std::mem::swap(&mut r, &mut trial_r);
            if small || stalled {
                break;
            }
        }
        self.p.clone_from(&p);
        if self.history.len() == 3 {
            self.history.remove(0);
        }
        self.history.push((t, p.clone()));
        let mut errors = vec![f64::NAN; self.markers.len()];
        let model = &self.skeleton.as_ref().unwrap_or(self.compiled).model;
        for &(k, m) in observed {
            let x = self.data.position(model, self.markers[k].node);
            errors[k] = ((x[0] - m[0]).powi(2) + (x[1] - m[1]).powi(2) + (x[2] - m[2]).powi(2)).sqrt();
        }
        let present: Vec<f64> = errors.iter().copied().filter(|e| e.is_finite()).collect();
        let rms = (present.iter().map(|e| e * e).sum::<f64>() / present.len().max(1) as f64).sqrt();
        let max = present.iter().copied().fold(0.0, f64::max);
        Ok(IkFrame { p, q, errors, rms, max, iterations })
    }
}

/// A copy of `at` (a task's or a setup's place) with this message and hint.
pub(crate) fn relabel(at: &Diagnostic, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
    let mut d = Diagnostic::new(&at.file, &at.path, message).with_hint(hint);
    d.location = at.location;
    d.snippet.clone_from(&at.snippet);
    d
}

/// Solve `m x = b` (n x n, row-major) by the kernel's dense LU with partial pivoting; `None`
/// when `m` is singular or the solution is not finite (a damping too small for a direction no
/// marker sees).
fn solve_partial_pivoting(m: &[f64], b: &[f64], n: usize) -> Option<Vec<f64>> {
    let mut lu = m.to_vec();
    let mut perm = vec![0; n];
    if !mollier_core::dense::lu_in_place(&mut lu, n, &mut perm) {
        return None;
    }
    let mut x: Vec<f64> = perm.iter().map(|&r| b[r]).collect();
    mollier_core::dense::lu_solve(&lu, n, &mut x);
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Fit every frame of the run's trial in order; `progress` is called after each. Stops at the
/// first frame that cannot be solved, with its index.
pub fn solve_all(run: &mut IkRun, mut progress: impl FnMut(usize)) -> Result<Vec<IkFrame>, (usize, FrameError)> {
    let mut frames = Vec::with_capacity(run.trial.len());
    for i in 0..run.trial.len() {
        frames.push(run.solve(i).map_err(|e| (i, e))?);
        progress(i);
    }
    Ok(frames)
}

/// The summary's IK part: the trial, the unknowns, the markers with their weights and the
/// marker errors (m) over the frames.
pub fn summary(run: &IkRun, frames: &[IkFrame]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    let t = run.trial;
    m.insert("markers_file".into(), json!(t.file));
    m.insert("units".into(), json!(t.units));
    m.insert("frames".into(), json!(frames.len()));
    m.insert("unknowns".into(), json!(run.params.names));
    let used: Vec<Value> =
        run.markers.iter().map(|k| json!({ "marker": k.name, "point": k.point, "weight": k.weight })).collect();
    m.insert("markers_used".into(), json!(used));
    m.insert("markers_ignored".into(), json!(run.ignored));
    let rms: Vec<f64> = frames.iter().map(|f| f.rms).collect();
    let mean_rms = rms.iter().sum::<f64>() / rms.len().max(1) as f64;
    let max = frames.iter().map(|f| f.max).fold(0.0, f64::max);
    m.insert(
        "marker_error_m".into(),
        json!({ "rms_mean": mean_rms, "rms_max": rms.iter().copied().fold(0.0, f64::max), "max": max }),
    );
    let iterations: usize = frames.iter().map(|f| f.iterations).sum();
    m.insert("iterations_per_frame".into(), json!(iterations as f64 / frames.len().max(1) as f64));
    m
}

/// The tables of an IK result, as [`write()`] writes them and Python returns them: the name and
/// the columns after `time` of `motion` (the model's inputs, SI), `coordinates` (the unknowns,
/// rad or m, only when they are not the inputs) and `marker_errors` (each used marker's distance
/// from its measurement, m, then the frame's `rms` and `max`).
pub fn table_columns(run: &IkRun) -> Vec<(&'static str, Vec<String>)> {
    let mut t = vec![("motion", run.compiled.inputs.iter().map(|i| i.name.clone()).collect())];
    if run.params.osim.is_some() {
        t.push(("coordinates", run.params.names.clone()));
    }
    let markers = run.markers.iter().map(|m| m.name.clone());
    t.push(("marker_errors", markers.chain(["rms".to_string(), "max".to_string()]).collect()));
    t
}

/// A frame's row of each of [`table_columns`]' tables (after the time); `NaN` for a marker
/// missing in the frame.
pub fn table_rows(run: &IkRun, f: &IkFrame) -> Vec<Vec<f64>> {
    let mut rows = vec![f.q.clone()];
    if run.params.osim.is_some() {
        rows.push(f.p.clone());
    }
    rows.push(f.errors.iter().copied().chain([f.rms, f.max]).collect());
    rows
}

/// Write an IK result into the output directory `out` as a unit: [`table_columns`]' tables
/// (`motion.csv`: a motion file for the model; an empty cell where a marker is missing) and
/// `summary.json` (`head`, then [`summary`]). Tables in `format` (`.sto` names for
/// [`TableFormat::Sto`]).
pub fn write(
    out: &Path,
    run: &IkRun,
    frames: &[IkFrame],
    format: TableFormat,
    mut head: serde_json::Map<String, Value>,
    timing: Value,
) -> Result<std::path::PathBuf, OutputError> {
    let mut dir = OutputDir::create(out)?.with_format(format);
    let mut tables = Vec::new();
    for (name, columns) in table_columns(run) {
        let header = std::iter::once("time").chain(columns.iter().map(String::as_str));
        tables.push(dir.table(&format!("{name}.csv"), None, header)?);
    }
    let cell = |v: &f64| if v.is_finite() { crate::output::number(*v) } else { String::new() };
    for (t, f) in run.trial.times.iter().zip(frames) {
        for (table, row) in tables.iter().zip(table_rows(run, f)) {
            dir.row(*table, std::iter::once(cell(t)).chain(row.iter().map(cell)))?;
        }
    }
    head.extend(summary(run, frames));
    dir.commit(Value::Object(head), timing)
}

/// Load a model for IK: a model file, whose unknowns are its inputs, or an OpenSim `.osim`
/// model, imported, whose unknowns are OpenSim's coordinates ([`Unknowns::Coordinates`]).
pub fn load_model(
    path: &Path,
    registry: &mollier_core::registry::Registry,
) -> Result<(Compiled, Unknowns), Diagnostics> {
    let file = path.display().to_string();
    if !Path::new(&file).extension().is_some_and(|e| e.eq_ignore_ascii_case("osim")) {
        return crate::load(path, registry).map(|c| (c, Unknowns::Inputs));
    }
    let text = mollier_format::read_text(path, "OpenSim model")?;
    let (import, compiled) = crate::import_osim(&file, &text, registry)?;
    Ok((compiled, Unknowns::Coordinates(Box::new(import))))
}
