//! Forward dynamics with Hill muscles: the model file's `[muscles]`, excitation files, and a
//! simulation run on [`mollier_sim`] that the front ends share.

use std::path::Path;

use mollier_core::dynamics::{element_forces, kinetostatic_stresses, law_stresses};
use mollier_core::geometry::{mat_t_vec, rotation};
use mollier_core::linearize::VelocityPartials;
use mollier_core::{ElementId, ElementRole};
use mollier_format::Diagnostics;
use mollier_optim::{deviation_angles, stability_index};
use mollier_sim::{
    Adaptive, Linearization, Muscle, Musculoskeletal, SimError, State, StepStats, Tendon, Tolerances, Workspace,
};

use crate::compile::Compiled;
use crate::load_sharing::ConeInfo;
use crate::loads::ExternalLoads;
use crate::motion::{any_table, at};

pub use crate::compile::muscles::{DEFAULT_ACTIVATION_TIME, DEFAULT_DEACTIVATION_TIME};

/// Excitations read from a file: a time column and one column per muscle, values in [0, 1],
/// interpolated linearly in time and held constant beyond the ends.
#[derive(Clone, Debug, PartialEq)]
pub struct Excitations {
    /// Times (s), increasing.
    pub time: Vec<f64>,
    /// `values[k][i]`: muscle `k` (the model's order) at time `i`.
    pub values: Vec<Vec<f64>>,
    /// Muscles the file has no column for (their excitation is 0).
    pub missing: Vec<String>,
}

impl Excitations {
    /// Zero excitation for every muscle.
    pub fn zero(compiled: &Compiled) -> Self {
        Self {
            time: vec![0.0],
            values: vec![vec![0.0]; compiled.muscles.len()],
            missing: compiled.muscles.iter().map(|m| m.name.clone()).collect(),
        }
    }

    /// The note for muscles of `compiled` without a column (their excitation is 0), if any.
    pub fn missing_note(&self, compiled: &Compiled) -> Option<String> {
        (!self.missing.is_empty() && !compiled.muscles.is_empty())
            .then(|| format!("no excitation column for {}: their excitation is 0", self.missing.join(", ")))
    }

    /// The excitations at time `t` (s) into `u`.
    pub fn at(&self, t: f64, u: &mut [f64]) {
        let n = self.time.len();
        let i = self.time.partition_point(|&x| x <= t);
        for (k, v) in self.values.iter().enumerate() {
            u[k] = if i == 0 {
                v[0]
            } else if i >= n {
                v[n - 1]
            } else {
                let w = (t - self.time[i - 1]) / (self.time[i] - self.time[i - 1]);
                v[i - 1] + w * (v[i] - v[i - 1])
            };
        }
    }

    /// The excitation file of these rows for `compiled` (CSV: `time` and a column per muscle,
    /// every number in its shortest form that reads back the same, so that [`Self::read`]
    /// replays exactly these excitations).
    pub fn to_csv(&self, compiled: &Compiled) -> String {
        let mut out = String::from("time");
        for mu in &compiled.muscles {
            out.push(',');
            out.push_str(&mu.name);
        }
        out.push('\n');
        for (i, t) in self.time.iter().enumerate() {
            out.push_str(&t.to_string());
            for v in &self.values {
                out.push(',');
                out.push_str(&v[i].to_string());
            }
            out.push('\n');
        }
        out
    }

    /// Read an excitation file (CSV, or an OpenSim `.sto`/`.mot` with its header): a `time`
    /// column (s, increasing) and a column per muscle named as in `[muscles]`, values in [0, 1].
    /// Problems are located at `file:line:col`.
    pub fn read(path: &Path, compiled: &Compiled) -> Result<Self, Diagnostics> {
        let text = mollier_format::read_text(path, "excitation file")?;
        Self::parse(&path.display().to_string(), &text, compiled)
    }

    /// Parse the text of an excitation file named `file` (see [`Self::read`]).
    pub fn parse(file: &str, text: &str, compiled: &Compiled) -> Result<Self, Diagnostics> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let t = any_table(file, text)?;
        let err = |offset: usize, field: &str, message: String, hint: &str| {
            Diagnostics(vec![*at(file, text, offset, field, message, hint)])
        };
        let time_col = t.header.iter().position(|h| h == "time").ok_or_else(|| {
            err(
                t.header_at,
                "",
                "no `time` column".into(),
                "the first line names the columns: time, then one per muscle",
            )
        })?;
        let names: Vec<&str> = compiled.muscles.iter().map(|m| m.name.as_str()).collect();
        let mut cols = vec![None; names.len()];
        for (c, h) in t.header.iter().enumerate() {
            if c == time_col {
                continue;
            }
            if t.header[..c].contains(h) {
                return Err(err(t.header_at, h, format!("column `{h}` appears twice"), "delete one of them"));
            }
            match names.iter().position(|n| n == h) {
                Some(k) => cols[k] = Some(c),
                None => {
                    let hint = match crate::compile::suggest(h, names.iter().copied()) {
                        Some(s) => format!("did you mean `{s}`? the model's muscles: {}", names.join(", ")),
                        None => format!("the model's muscles: {}", names.join(", ")),
                    };
                    return Err(err(t.header_at, h, format!("`{h}` is not a muscle of the model"), &hint));
                }
            }
        }
        if t.rows.is_empty() {
            return Err(err(t.header_at, "", "the file has no rows".into(), "give at least one row of excitations"));
        }
        let mut time = Vec::with_capacity(t.rows.len());
        let mut values = vec![Vec::with_capacity(t.rows.len()); names.len()];
        for (offset, row) in &t.rows {
            if row.len() != t.header.len() {
                return Err(err(
                    *offset,
                    "",
                    format!("{} values for {} columns", row.len(), t.header.len()),
                    "one value per column",
                ));
            }
            let cell = |c: usize| t.cell_offset(text, *offset, c);
            let tv: f64 = row[time_col].parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                err(cell(time_col), "time", format!("`{}` is not a time", &row[time_col]), "a number of seconds")
            })?;
            if let Some(&prev) = time.last() {
                if tv <= prev {
                    return Err(err(
                        cell(time_col),
                        "time",
                        format!("time {tv} does not increase (previous {prev})"),
                        "rows are in increasing time",
                    ));
                }
            }
            time.push(tv);
            for (k, c) in cols.iter().enumerate() {
                let v = match c {
                    None => 0.0,
                    Some(c) => {
                        let raw = &row[*c];
                        match raw.parse::<f64>() {
                            Ok(v) if (0.0..=1.0).contains(&v) => v,
                            Ok(v) if v.is_finite() => {
                                return Err(err(
                                    cell(*c),
                                    names[k],
                                    format!("excitation {v} of `{}` is outside [0, 1]", names[k]),
                                    "an excitation is a fraction of full neural drive, from 0 to 1",
                                ));
                            }
                            _ => {
                                return Err(err(
                                    cell(*c),
                                    names[k],
                                    format!("`{raw}` is not an excitation"),
                                    "write a number from 0 to 1",
                                ));
                            }
                        }
                    }
                };
                values[k].push(v);
            }
        }
        let missing = cols.iter().zip(&names).filter(|(c, _)| c.is_none()).map(|(_, n)| n.to_string()).collect();
        Ok(Self { time, values, missing })
    }
}

/// Elements with the local offsets of a node's position slots in each.
type Slots = Vec<(ElementId, Vec<usize>)>;

/// How a [`ForwardRun`] integrates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Integration {
    /// The fixed first-order linearly implicit step of Chadwick et al. (2014), eq. 8, of this
    /// length (s).
    Fixed(f64),
    /// Error control at these tolerances: the Rosenbrock-W pair ROS2(3)
    /// ([`mollier_sim::integrate::adaptive`]).
    Adaptive(Tolerances),
}

/// What a [`ForwardRun`] starts with besides its model and excitations.
#[derive(Clone, Copy)]
pub struct ForwardOptions<'l> {
    /// The integration.
    pub integration: Integration,
    /// External loads that vary in time (read for the run's model), if any.
    pub loads: Option<&'l ExternalLoads>,
    /// `Some(R)`: every muscle whose tendon slack length is below `R` times its optimal fibre
    /// length runs with a rigid tendon ([`rigid_tendons`]; `f64::INFINITY`: every muscle) beside
    /// those the model makes rigid. `None` (the default): the model's tendons.
    pub rigid_tendons: Option<f64>,
}

impl<'l> ForwardOptions<'l> {
    /// The fixed step of `step` (s), no external loads.
    pub fn fixed(step: f64) -> Self {
        Self { integration: Integration::Fixed(step), loads: None, rigid_tendons: None }
    }

    /// Error control at tolerances `tol`, no external loads.
    pub fn adaptive(tol: Tolerances) -> Self {
        Self { integration: Integration::Adaptive(tol), loads: None, rigid_tendons: None }
    }

    /// These options with external loads.
    pub fn with_loads(self, loads: Option<&'l ExternalLoads>) -> Self {
        Self { loads, ..self }
    }

    /// These options with rigid tendons below a ratio ([`Self::rigid_tendons`]).
    pub fn with_rigid_tendons(self, ratio: Option<f64>) -> Self {
        Self { rigid_tendons: ratio, ..self }
    }
}

/// Make rigid the tendon of every muscle whose tendon slack length is below `ratio` times its
/// optimal fibre length (the usual approximation where the tendon's stretch at `F_max`, 4 % of
/// a short slack length, is a fraction of a millimetre); returns how many are rigid in all.
pub fn rigid_tendons(muscles: &mut [Muscle], ratio: f64) -> usize {
    for mu in muscles.iter_mut() {
        let p = &mut mu.hill.params;
        if p.tendon_slack_length < ratio * p.optimal_fibre_length {
            p.tendon = Tendon::Rigid;
        }
    }
    muscles.iter().filter(|mu| mu.hill.is_rigid()).count()
}

/// A forward simulation of a compiled model with its muscles, step by step.
pub struct ForwardRun<'a> {
    system: Musculoskeletal<'a>,
    /// The contacts that carry their own law (`soft-contact`): name and element.
    contacts: Vec<(String, ElementId)>,
    /// The joint cone of `[load_sharing]`, if any, with each socket element's local offsets of the
    /// joint node: the joint force's stability (Chadwick et al. 2014, eq. 9) is reported per frame.
    cone: Option<(ConeInfo, Slots)>,
    /// The lines of action, asked for their warnings at each frame.
    paths: Vec<ElementId>,
    ws: Workspace,
    excitations: Excitations,
    step: f64,
    steps: usize,
    state: State,
    /// The error-controlled integration, when the run is adaptive (`step` is then unused).
    adaptive: Option<Adaptive>,
    defects: Defects,
}

/// The muscle equilibrium defects a fixed-step run leaves: the contraction residual `f_s` of each
/// step's start state (what the linearly implicit step before it did not satisfy), against a
/// tolerance relative to each muscle's `F_max`.
#[derive(Clone, Debug, PartialEq)]
pub struct Defects {
    /// The tolerance (fraction of the muscle's `F_max`).
    pub tolerance: f64,
    /// The largest defect (N) and the same as a fraction of its muscle's `F_max`.
    pub largest: [f64; 2],
    /// The muscle (its index) and time (s) of the largest defect relative to `F_max`.
    pub worst: Option<(usize, f64)>,
    /// Steps whose state has a defect above the tolerance, and the first's time (s).
    pub over: usize,
    /// The first time a defect was above the tolerance (s).
    pub first_over: Option<f64>,
}

/// The default muscle equilibrium defect tolerance of a fixed-step run: 1 % of `F_max`.
pub const DEFAULT_DEFECT_TOLERANCE: f64 = 0.01;

/// What the run reports of one state.
#[derive(Clone, Debug, PartialEq)]
pub struct ForwardFrame {
    /// Time (s).
    pub time: f64,
    /// The state `(q, v, s, a)`.
    pub x: Vec<f64>,
    /// Per muscle: excitation, active state, tendon force (N), fibre length (m), fibre velocity
    /// (m/s), path length (m).
    pub muscles: Vec<[f64; 6]>,
    /// Per soft contact: the force on its point (N, global x, y, z) and the level `F` of the
    /// ellipsoid's implicit function there (negative inside).
    pub contacts: Vec<[f64; 4]>,
    /// The joint force in the cone frame (N; x into the socket), its deviation angles towards the
    /// cone's y and z axes (rad) and the stability index `(θ/θ_a)² + (φ/φ_a)² − 1` (Chadwick et al. 2014,
    /// eq. 9; ≤ 0 inside): present when the model has a joint cone.
    pub stability: Option<[f64; 6]>,
    /// The largest residual of the equations of motion (N m or N) and of the muscles' force
    /// balance (N) at this state: what the linearly implicit step leaves (0 at the start).
    pub defect: [f64; 2],
    /// What the paths say of this configuration without failing it
    /// ([`crate::element_warnings`]), each as `element: warning`; usually none.
    pub warnings: Vec<String>,
}

impl<'a> ForwardRun<'a> {
    /// Start at rest in the initial configuration, muscles in isometric equilibrium at their
    /// initial excitation, integrating as `options` says (a fixed step, or error control whose
    /// frames come from [`Self::output`] at any times by the method's dense output), with
    /// `options.loads` in the equations of motion and their Jacobian.
    pub fn new(
        compiled: &'a Compiled,
        excitations: Excitations,
        options: ForwardOptions<'_>,
    ) -> Result<Self, SimError> {
        let mut muscles = compiled.muscles.clone();
        if let Some(r) = options.rigid_tendons {
            rigid_tendons(&mut muscles, r);
        }
        let mut system = Musculoskeletal::new(&compiled.model, muscles);
        if let Some(l) = options.loads {
            system = system.with_loads(Box::new(l.forcing(compiled)));
        }
        // the Jacobian without the velocity forces' third order (a W-method's need not be
        // exact): the fixed step's, and the error control's whole Jacobians (on the flexion 0.89
        // of the exact term's instructions by the median of eleven runs; forward-dynamics.md)
        let mut ws = system.forward_workspace();
        let mut u = vec![0.0; system.muscles.len()];
        excitations.at(0.0, &mut u);
        let mut state = system.rest_state(&mut ws, &compiled.model.q0(), 0.0, &u)?;
        let (step, adaptive) = match options.integration {
            Integration::Fixed(step) => (step, None),
            Integration::Adaptive(tol) => {
                let mut a = Adaptive::new(&system, &mut ws, &state, &|t, u| excitations.at(t, u), tol)?;
                // the steps end on the excitations' knots, where their slope changes
                a.set_breaks(&excitations.time);
                state = a.state().clone();
                (tol.first_step, Some(a))
            }
        };
        let contacts = compiled
            .elements
            .iter()
            .filter(|e| e.role == ElementRole::Contact && compiled.model.element(e.id).law().is_some())
            .map(|e| (e.name.clone(), e.id))
            .collect();
        let cone = compiled.load_sharing.as_ref().and_then(|l| l.cone.clone()).map(|c| {
            let model = &compiled.model;
            let slots = c
                .elements
                .iter()
                .map(|&el| {
                    let layout = model.element(el).layout();
                    let offs = (0..layout.nodes().len())
                        .filter(|&i| layout.nodes()[i].0 == c.node)
                        .map(|i| layout.offset(i))
                        .collect();
                    (el, offs)
                })
                .collect();
            (c, slots)
        });
        let defects =
            Defects { tolerance: DEFAULT_DEFECT_TOLERANCE, largest: [0.0; 2], worst: None, over: 0, first_over: None };
        let paths = crate::analysis::lines_of_action(compiled).collect();
        Ok(Self { system, contacts, cone, paths, ws, excitations, step, steps: 0, state, adaptive, defects })
    }

    /// Whether the run integrates with error control.
    pub fn is_adaptive(&self) -> bool {
        self.adaptive.is_some()
    }

    /// The adaptive run's step counts (`None` at a fixed step).
    pub fn step_stats(&self) -> Option<StepStats> {
        self.adaptive.as_ref().map(Adaptive::stats)
    }

    /// The fixed step's muscle equilibrium defects so far.
    pub fn defects(&self) -> &Defects {
        &self.defects
    }

    /// Set the muscle equilibrium defect tolerance (a fraction of each muscle's `F_max`).
    pub fn set_defect_tolerance(&mut self, tolerance: f64) {
        self.defects.tolerance = tolerance;
    }

    /// The fixed step (s); the first step tried when adaptive.
    pub fn step(&self) -> f64 {
        self.step
    }

    /// The frame at time `t` (s, not before the current state's time): an adaptive run
    /// integrates past `t` and interpolates (second order) the state there, its rate made
    /// consistent; a fixed-step run steps until a step starts within half a step of `t` and
    /// reports that state.
    pub fn output(&mut self, t: f64) -> Result<ForwardFrame, SimError> {
        let Some(a) = &mut self.adaptive else {
            while (self.steps as f64 + 0.5) * self.step <= t {
                self.step_once()?;
            }
            return self.current();
        };
        let ex = &self.excitations;
        let u = |t: f64, w: &mut [f64]| ex.at(t, w);
        while a.state().t < t {
            a.step(&self.system, &mut self.ws, &u)?;
        }
        let (x, guess) = a.dense(t).ok_or_else(|| SimError::NonFinite(format!("no dense output at {t} s")))?;
        self.state = a.state().clone();
        // a frame reads no Jacobian: its evaluations leave out the third order
        let kept = std::mem::replace(&mut self.ws.velocity_partials, VelocityPartials::WithoutThirdOrder);
        let evaluated = self.system.consistent(&mut self.ws, &x, t, &u, &guess).and_then(|(xd, lin)| {
            // the joint force reads the accelerations the kernel was evaluated at: evaluate
            // again at the consistent ones
            if self.cone.is_none() {
                return Ok((xd, lin));
            }
            let mut uu = vec![0.0; self.system.layout().m];
            ex.at(t, &mut uu);
            self.system.linearize_at(&mut self.ws, t, &x, &xd, &uu).map(|lin| (xd, lin))
        });
        self.ws.velocity_partials = kept;
        let frame = evaluated.and_then(|(xd, lin)| self.frame_of(&State { t, x, xd }, &lin));
        // the next step starts from the step's warm starts, not the row's, whether the row was
        // made or not
        let restored = self.adaptive.as_ref().map_or(Ok(()), |a| a.return_to_state(&self.system, &mut self.ws));
        let frame = frame?;
        restored?;
        Ok(frame)
    }

    /// One fixed step without a frame (its defect checked).
    pub fn step_once(&mut self) -> Result<(), SimError> {
        self.fixed_step().map(|_| ())
    }

    /// Use up to `threads` threads for the work per muscle path (`Data::set_threads`: 1 the
    /// serial code, the default; 0 the cores available); the results are the same bits for every count.
    pub fn set_threads(&mut self, threads: usize) {
        self.ws.data.set_threads(threads);
    }

    /// The system.
    pub fn system(&self) -> &Musculoskeletal<'a> {
        &self.system
    }

    /// The current state.
    pub fn state(&self) -> &State {
        &self.state
    }

    /// The excitations.
    pub fn excitations(&self) -> &Excitations {
        &self.excitations
    }

    /// The names of the soft contacts, in the order of [`ForwardFrame::contacts`].
    pub fn contact_names(&self) -> impl Iterator<Item = &str> {
        self.contacts.iter().map(|(n, _)| n.as_str())
    }

    /// Whether frames report the joint cone's stability.
    pub fn has_cone(&self) -> bool {
        self.cone.is_some()
    }

    /// The joint cone's half-angles (rad) towards its y and z axes, if the model has one.
    pub fn cone_half_angles(&self) -> Option<[f64; 2]> {
        self.cone.as_ref().map(|(c, _)| c.half_angles)
    }

    /// Advance one Rosenbrock step of the fixed size; returns the frame of the state the step
    /// started from. An adaptive run refuses (it gives frames by [`Self::output`]).
    pub fn advance(&mut self) -> Result<ForwardFrame, SimError> {
        let (start, lin) = self.fixed_step()?;
        // the workspace still holds the step's linearization at its start
        self.frame_of(&start, &lin)
    }

    /// One fixed step, its defect checked: the state it started from and the linearization there.
    fn fixed_step(&mut self) -> Result<(State, Linearization), SimError> {
        if self.adaptive.is_some() {
            return Err(SimError::NonFinite("an adaptive run steps by `output`, not `advance`".into()));
        }
        let ex = &self.excitations;
        let (mut next, lin) = self.system.rosenbrock_step(&mut self.ws, &self.state, self.step, &|t, u| ex.at(t, u))?;
        self.check_defects(&lin);
        // times as multiples of the step, not sums of it
        self.steps += 1;
        next.t = self.steps as f64 * self.step;
        Ok((std::mem::replace(&mut self.state, next), lin))
    }

    /// Record the muscle equilibrium defects of the linearization at the current state.
    fn check_defects(&mut self, lin: &Linearization) {
        let l = self.system.layout();
        let d = &mut self.defects;
        let mut over = false;
        for (k, mu) in self.system.muscles.iter().enumerate() {
            let abs = lin.f[l.s() + k].abs();
            let rel = abs / mu.hill.params.max_force;
            d.largest[0] = d.largest[0].max(abs);
            if rel > d.largest[1] {
                d.largest[1] = rel;
                d.worst = Some((k, self.state.t));
            }
            over |= rel > d.tolerance;
        }
        if over {
            d.over += 1;
            d.first_over.get_or_insert(self.state.t);
        }
    }

    /// The frame of the current state (its path lengths evaluated afresh).
    pub fn current(&mut self) -> Result<ForwardFrame, SimError> {
        let l = self.system.layout();
        let mut u = vec![0.0; l.m];
        self.excitations.at(self.state.t, &mut u);
        let lin = self.system.linearize_at(&mut self.ws, self.state.t, &self.state.x, &self.state.xd, &u)?;
        self.frame_of(&self.state.clone(), &lin)
    }

    /// The joint force at the current state from kinetostatics (van der Helm 1994, eqs. 13-15) with the
    /// state's accelerations, the laws' stresses and the muscles' forces (those the linearization
    /// `lin` weighted), in the cone frame, and its stability. The workspace holds `lin`'s state.
    fn stability(&mut self, lin: &Linearization) -> Result<Option<[f64; 6]>, SimError> {
        let Some((cone, slots)) = &self.cone else { return Ok(None) };
        let model = self.system.model;
        // the linearization left its force and velocities in the workspace
        let mut ks = Vec::new();
        kinetostatic_stresses(model, &mut self.ws.data, &lin.velocity_accelerations, &mut ks)?;
        let data = &self.ws.data;
        let mut f = [0.0; 3];
        for (el, offs) in slots {
            let on_nodes = element_forces(model, data, *el, &ks);
            for &o in offs {
                for a in 0..3 {
                    f[a] -= on_nodes[o + a];
                }
            }
        }
        // global → body → cone frame
        let body = rotation(&data.orientation(model, cone.body));
        let fc = mat_t_vec(&cone.rotation, &mat_t_vec(&body, &f));
        let [ty, tz] = cone.half_angles;
        let (theta, phi) = deviation_angles(&fc).unwrap_or((f64::NAN, f64::NAN));
        let index = stability_index(&fc, ty, tz).unwrap_or(f64::NAN);
        Ok(Some([fc[0], fc[1], fc[2], theta, phi, index]))
    }

    /// The frame of state `st`, whose linearization the workspace holds.
    fn frame_of(&mut self, st: &State, lin: &Linearization) -> Result<ForwardFrame, SimError> {
        let length = &lin.length;
        let l = self.system.layout();
        let mut u = vec![0.0; l.m];
        self.excitations.at(st.t, &mut u);
        let muscles = self
            .system
            .muscles
            .iter()
            .enumerate()
            .map(|(k, mu)| {
                let (s, a) = (st.x[l.s() + k], st.x[l.a() + k]);
                // the tendon force is the linearization's; the fibre's length and velocity
                // (`HillMuscle::state`'s, without its curves); a rigid tendon's fibre the path's
                let s = if mu.hill.is_rigid() { length[k] - mu.hill.params.tendon_slack_length } else { s };
                let (fibre_length, cos, _, _) = mu.hill.fibre(s);
                [u[k], a, lin.contraction[k].force, fibre_length, st.xd[l.s() + k] * cos, length[k]]
            })
            .collect();
        let largest = |r: std::ops::Range<usize>| lin.f[r].iter().fold(0.0f64, |m, v| m.max(v.abs()));
        let defect = [largest(l.n..2 * l.n), largest(l.s()..l.a())];
        // the workspace holds this state's configuration, gradients and rates (linearized)
        let model = self.system.model;
        let data = &self.ws.data;
        let sigma = if self.contacts.is_empty() { Vec::new() } else { law_stresses(model, data) };
        let contacts = self
            .contacts
            .iter()
            .map(|&(_, el)| {
                // the element's forces on its nodes: the point's three come first
                let f = element_forces(model, data, el, &sigma);
                [f[0], f[1], f[2], data.mode_value(model.mode_id(el, 0))]
            })
            .collect();
        let warnings = model.element_warnings(data.x(), self.paths.iter().copied());
        let x = st.x.clone();
        let time = st.t;
        let stability = self.stability(lin)?;
        Ok(ForwardFrame { time, x, muscles, contacts, stability, defect, warnings })
    }
}
