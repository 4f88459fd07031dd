//! A study set up on its model, and running it: the kinematics of the motion, then load
//! sharing for every variant (criterion × glenoid constraint).

use std::path::{Path, PathBuf};
use std::time::Instant;

use mollier::{Compiled, KinematicsRun, LoadSharingSetup, MuscleInfo};
use mollier_core::{Data, Load, ModeId, ModeRole, NodeId, solve_positions};
use mollier_optim::{Criterion, Frame, FrameResult, LoadSharing, RunOptions, Summary};
use rayon::prelude::*;

use crate::max_moment::{MomentRun, resolve, run_postures};
use crate::motion::RhythmMotion;
use crate::muscles::{MuscleGroup, groups};
pub use crate::spec::margin_folder;
use crate::spec::{FORMAT_VERSION, StudySpec};

/// Why a study cannot be read or set up.
#[derive(Debug, thiserror::Error)]
pub enum StudyError {
    /// The study file cannot be read.
    #[error("{message}")]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong, rendered as `file:line:col: error: message` with the line and a hint.
        message: String,
    },
    /// The model file has problems (rendered diagnostics).
    #[error("{0}")]
    Model(String),
    /// The study does not fit its model.
    #[error("{message}")]
    Setup {
        /// The study file.
        path: PathBuf,
        /// What does not fit, as `file[:line:col]: error: field: message` (placed in the file
        /// when the study was read from one).
        message: String,
    },
}

/// One variant of the load sharing: a criterion, with or without the glenoid cone imposed, and
/// the cone's stability margin.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    /// The criterion.
    pub criterion: Criterion,
    /// The cone imposed (`true`) or only reported.
    pub glenoid: bool,
    /// Stability margin `k` in (0, 1] of the cone imposed: the joint force stays within `k`
    /// times the glenoid's half-angles (1: anywhere in the glenoid). 1 without the cone.
    pub margin: f64,
}

impl Variant {
    /// A variant at margin 1 (the rim).
    pub fn new(criterion: Criterion, glenoid: bool) -> Self {
        Self { criterion, glenoid, margin: 1.0 }
    }

    /// `b-glenoid`, `b-glenoid-k0.6`, `b-free`, ...: the variant's output directory (the
    /// margin is named when it is below 1).
    pub fn name(&self) -> String {
        match (self.glenoid, self.margin < 1.0) {
            (false, _) => format!("{}-free", self.criterion.letter()),
            (true, false) => format!("{}-glenoid", self.criterion.letter()),
            (true, true) => format!("{}-glenoid{}", self.criterion.letter(), margin_folder(self.margin)),
        }
    }
}

/// A study read and set up on its model.
#[derive(Debug)]
pub struct Study {
    /// The study file.
    pub file: PathBuf,
    /// Its contents.
    pub spec: StudySpec,
    /// The model.
    pub compiled: Compiled,
    /// The model's load sharing (its `[load_sharing]` section): muscles, sign constraints,
    /// joint cone, reserves.
    pub sharing: LoadSharingSetup,
    /// The muscles (groups of elements).
    pub groups: Vec<MuscleGroup>,
    /// The motion.
    pub motion: RhythmMotion,
    /// Landmarks to report: name and node.
    pub landmarks: Vec<(String, NodeId)>,
    /// The variants, in output order.
    pub variants: Vec<Variant>,
    /// The rotator cuff's muscle elements (indices among the muscles), from the study's `cuff`.
    pub cuff: Vec<usize>,
    /// The study's extra load: its node and force (N, global), from `[load]`.
    pub load: Option<(NodeId, [f64; 3])>,
    /// Time-varying external loads per frame of the motion (`mollier study --loads`; empty
    /// without), in the frame's configuration.
    pub external: Vec<Vec<Load>>,
}

/// One frame of the kinematics pass.
#[derive(Clone, Debug, PartialEq)]
pub struct KinematicFrame {
    /// Positions of the landmarks (m).
    pub landmarks: Vec<[f64; 3]>,
    /// Values of the free modes of the model's other elements (joint angles in rad, ligament
    /// elongations in m).
    pub free: Vec<f64>,
    /// Muscle lengths (m).
    pub lengths: Vec<f64>,
    /// Minus the first-order transfer functions of the muscle lengths, `−∂l/∂q_j` (m/rad for
    /// an angle input: the moment arm; m/m for a coordinate input), muscle-major.
    pub moment_arms: Vec<f64>,
    /// Angle between the model's scapula and the rhythm's (rad).
    pub scapula_deviation: f64,
    /// The clavicle's and the scapula's angles relative to the thorax, DAS3's YZX: clavicle
    /// `[y, z, x]`, scapula `[y, z, x]` (rad).
    pub girdle_angles: [f64; 6],
    /// Central finite differences of the muscle lengths, `∂l_i/∂q_j` (muscle-major), from
    /// solving positions at `q ± h e_j`: an independent check of the transfer functions.
    pub length_differences: Vec<f64>,
    /// Central finite differences of the potential energy of gravity, `∂V/∂q_j` (N m, N), when
    /// the model's only loads are gravity and no element has a law; `None` otherwise.
    pub gravity_differences: Option<Vec<f64>>,
}

/// The masses under gravity (their nodes and kg) and the gravity vector (m/s²).
type Gravity = (Vec<(NodeId, f64)>, [f64; 3]);

/// The finite-difference step for an input (m for a coordinate, rad for an angle).
pub const DIFFERENCE_STEP: f64 = 1e-6;

/// The kinematics of the motion.
#[derive(Clone, Debug, PartialEq)]
pub struct Kinematics {
    /// Names of the free modes reported (`element.mode`).
    pub free_names: Vec<String>,
    /// One result per frame: the frame, or why it failed.
    pub frames: Vec<Result<KinematicFrame, String>>,
    /// Wall time (ms).
    pub time_ms: f64,
}

/// The load sharing of one variant.
#[derive(Clone, Debug)]
pub struct VariantResult {
    /// The variant.
    pub variant: Variant,
    /// One result per frame.
    pub frames: Vec<FrameResult>,
    /// Per frame, the independent equilibrium check by virtual work (see
    /// [`Study::virtual_work`]): the largest residual over the inputs (N m or N) and the scale
    /// it is measured against; `None` where the frame or its kinematics failed, or the check
    /// does not apply.
    pub virtual_work: Vec<Option<(f64, f64)>>,
    /// Counts and timing, over every frame (also those not kept).
    pub summary: Summary,
    /// The largest stability index of the solved frames, over every frame.
    pub max_stability_index: Option<f64>,
    /// Wall time of the variant (ms).
    pub time_ms: f64,
}

/// One frame of a study: its kinematics and each variant's load sharing with its
/// virtual-work check, in the study's variant order.
#[derive(Clone, Debug)]
pub struct StudyFrame {
    /// The kinematics, or why the frame failed.
    pub kinematics: Result<KinematicFrame, String>,
    /// Per variant: the result and the virtual-work check (see [`VariantResult::virtual_work`]).
    pub variants: Vec<Checked>,
}

/// A variant's frame and its virtual-work check: the largest residual and its scale.
pub type Checked = (FrameResult, Option<(f64, f64)>);

/// Frames solved at a time: the kinematics in order, then every variant's frames in parallel
/// (each variant in sequence, from its previous frame); memory holds one chunk.
const CHUNK: usize = 32;

/// The most frames [`Study::run`] keeps for the plots and `view.html`, the last counted: a line
/// of a plot needs no more points, and each kept frame costs about 100 kB to draw (the
/// shoulder).
pub const PLOTTED_FRAMES: usize = 500;

/// The step between the frames a study of `frames` frames keeps for its plots and page: every
/// step-th from the first, and the last, at most [`PLOTTED_FRAMES`] (as `mollier view` thins a
/// motion to its page budget).
pub fn frame_step(frames: usize) -> usize {
    if frames <= PLOTTED_FRAMES { 1 } else { (frames - 1).div_ceil(PLOTTED_FRAMES - 2) }
}

/// A variant's load sharing in progress: each frame from the previous configuration.
struct VariantPass<'m> {
    sharing: Result<(LoadSharing<'m>, mollier_optim::Workspace), String>,
    study: mollier_optim::Study,
    data: Data,
    reserves: Vec<usize>,
    solved: usize,
    ms: f64,
    index: Option<f64>,
    wall_ms: f64,
}

/// The kinematics in progress: each frame from the previous solution.
struct KinematicsPass<'s> {
    study: &'s Study,
    run: KinematicsRun<'s>,
    free: Vec<ModeId>,
    points: Vec<usize>,
    dependent: Vec<ModeId>,
    gravity: Option<Gravity>,
    fd: Data,
}

/// What a study keeps of its run: the frames for the plots and the page (at most
/// [`PLOTTED_FRAMES`]), the summaries over every frame, the timings. Every frame's rows go to
/// the sink of [`Study::run_streaming`] (the tables: [`crate::output::run_and_write`]).
#[derive(Clone, Debug)]
pub struct Results {
    /// The motion's frame (index into `Study::motion.frames`) of each kept entry of the
    /// kinematics' and the variants' `frames`: every [`frame_step`]-th and the last.
    pub frames: Vec<usize>,
    /// The kinematics.
    pub kinematics: Kinematics,
    /// One result per variant, in the study's order.
    pub variants: Vec<VariantResult>,
    /// Wall time of the whole run (ms).
    pub time_ms: f64,
    /// The maximum isometric moments of a `[max_moment]` section, or why they failed.
    pub max_moment: Option<Result<MomentRun, String>>,
}

impl Study {
    /// Read a study file, compile its model and set everything up.
    pub fn load(path: &Path) -> Result<Self, StudyError> {
        let read_err =
            |d: mollier_format::Diagnostics| StudyError::Read { path: path.to_path_buf(), message: d.render() };
        let text = mollier_format::read_text(path, "study file").map_err(read_err)?;
        let spec = crate::spec::parse(&path.display().to_string(), &text).map_err(read_err)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        let registry = mollier::registry();
        // the model may be any readable file: its problems say where and why, not what it holds
        let named_by = path.display().to_string();
        let compiled = mollier::load(&dir.join(&spec.model), &registry)
            .map_err(|d| StudyError::Model(d.without_contents(&named_by).render()))?;
        Self::set_up(path, Some(&text), spec, compiled)
    }

    /// Set a study up on an already compiled model (`path` names the study file).
    pub fn with_model(path: &Path, spec: StudySpec, compiled: Compiled) -> Result<Self, StudyError> {
        Self::set_up(path, None, spec, compiled)
    }

    /// [`Study::with_model`], placing problems in the study file's `text` when given.
    fn set_up(path: &Path, text: Option<&str>, spec: StudySpec, compiled: Compiled) -> Result<Self, StudyError> {
        let setup =
            |message: String| StudyError::Setup { path: path.to_path_buf(), message: place(path, text, &message) };
        if spec.format_version != FORMAT_VERSION {
            return Err(setup(format!(
                "format_version: {} is not supported (this build reads {FORMAT_VERSION})",
                spec.format_version
            )));
        }
        let sharing = compiled.load_sharing.clone().ok_or_else(|| {
            setup(format!(
                "model: `{}` has no `[load_sharing]` section: it names the muscles, sign constraints and joint cone (docs/model-format.md)",
                spec.model
            ))
        })?;
        let groups = groups(&sharing.muscles);
        let dir = path.parent().unwrap_or(Path::new("."));
        let motion = RhythmMotion::new(&spec.motion, &compiled, dir).map_err(|m| setup(format!("motion: {m}")))?;
        let landmarks = spec
            .landmarks
            .iter()
            .map(|n| {
                compiled
                    .points
                    .iter()
                    .find(|p| &p.name == n)
                    .map(|p| (n.clone(), p.node))
                    .ok_or_else(|| setup(format!("landmarks: the model has no point `{n}`")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let o = &spec.optimisation;
        // a specification made in code has not been through the file's checks
        if let Some((path, message)) = crate::spec::settings_problems(o).into_iter().next() {
            return Err(setup(format!("{path}: {message}")));
        }
        let criteria = o
            .criteria
            .iter()
            .map(|c| c.parse::<Criterion>().map_err(|m| setup(format!("optimisation.criteria: {m}"))))
            .collect::<Result<Vec<_>, _>>()?;
        if criteria.is_empty() {
            return Err(setup("optimisation.criteria: the list is empty: name at least one of a, b, c, d".into()));
        }
        let mut with = Vec::new();
        for v in &o.joint_cone {
            match v.as_str() {
                "with" => with.push(true),
                "without" => with.push(false),
                other => return Err(setup(format!("optimisation.joint_cone: `{other}` (expected with, without)"))),
            }
        }
        if with.is_empty() {
            return Err(setup("optimisation.joint_cone: the list is empty: give \"with\", \"without\" or both".into()));
        }
        if sharing.cone.is_none() {
            // nothing to impose: one variant per criterion
            with = vec![false];
        }
        let margins = match &o.margins {
            None => vec![sharing.cone.as_ref().map_or(1.0, |c| c.margin)],
            Some(m) if m.is_empty() => {
                return Err(setup(
                    "optimisation.margins: the list is empty: give margins in (0, 1], e.g. [1, 0.6, 0.4]".into(),
                ));
            }
            Some(m) => m.clone(),
        };
        if let Some(k) = margins.iter().find(|k| **k < crate::spec::MIN_MARGIN) {
            return Err(setup(format!(
                "optimisation.margins: the model's joint cone margin {k} is below {}: give the study's margins",
                crate::spec::MIN_MARGIN
            )));
        }
        let mut variants = Vec::new();
        for c in &criteria {
            for &g in &with {
                for &k in if g { &margins[..] } else { &[1.0][..] } {
                    variants.push(Variant { criterion: c.clone(), glenoid: g, margin: k });
                }
            }
        }
        let mut cuff = Vec::new();
        for name in &spec.cuff {
            let g = groups.iter().find(|g| &g.name == name).ok_or_else(|| {
                let names: Vec<&str> = groups.iter().map(|g| g.name.as_str()).collect();
                setup(format!("cuff: the model has no muscle `{name}` (its muscles: {})", names.join("; ")))
            })?;
            cuff.extend(&g.elements);
        }
        let load = match &spec.load {
            None => None,
            Some(l) => {
                let node = compiled
                    .points
                    .iter()
                    .find(|p| p.name == l.point)
                    .map(|p| p.node)
                    .ok_or_else(|| setup(format!("load.point: the model has no point `{}`", l.point)))?;
                let g = compiled.document.spec().gravity.unwrap_or([0.0; 3]);
                let force = match (l.mass, l.force) {
                    (Some(m), None) if m.is_finite() && m >= 0.0 => g.map(|gi| m * gi),
                    (None, Some(f)) if f.iter().all(|v| v.is_finite()) => f,
                    (Some(_), Some(_)) | (None, None) => {
                        return Err(setup("load: give either `mass` (kg) or `force` (N), one of the two".into()));
                    }
                    _ => return Err(setup("load: the mass must be finite and >= 0, the force finite".into())),
                };
                Some((node, force))
            }
        };
        let study = Self {
            file: path.to_path_buf(),
            spec,
            compiled,
            sharing,
            groups,
            motion,
            landmarks,
            variants,
            cuff,
            load,
            external: Vec::new(),
        };
        // set every variant up once, so that a bad study fails here and not half-way
        for v in &study.variants {
            LoadSharing::new(&study.compiled.model, study.optim_study(v))
                .map_err(|e| setup(format!("model: the load sharing of variant {}: {e}", v.name())))?;
        }
        if let Some(m) = &study.spec.max_moment {
            resolve(m, &study.compiled).map_err(setup)?;
        }
        Ok(study)
    }

    /// What a reader of the results must know: frames where the rhythm is extrapolated beyond
    /// its data ([`crate::rhythm::DATA_ELEVATION_DEG`]). Printed by `mollier study` on standard
    /// error and listed in `summary.json` (`warnings`).
    pub fn warnings(&self) -> Vec<String> {
        let [lo, hi] = crate::rhythm::DATA_ELEVATION_DEG;
        if self.spec.motion.kind != "rhythm" {
            return Vec::new();
        }
        let out: Vec<f64> = self.motion.frames.iter().map(|f| f.elevation).filter(|e| *e < lo || *e > hi).collect();
        if out.is_empty() {
            return Vec::new();
        }
        let (min, max) = out.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), e| (a.min(*e), b.max(*e)));
        vec![format!(
            "the shoulder rhythm (de Groot & Brand 2001) is extrapolated beyond its data ({lo}° to {hi}° humerus \
             elevation) at {} of {} frames ({}° to {}°): the girdle there, and the muscle lengths and forces \
             that follow, are the regression's extrapolation; use recorded kinematics (motion type `angles` or \
             `inputs`) to go further",
            out.len(),
            self.motion.frames.len(),
            mollier_format::human(min),
            mollier_format::human(max)
        )]
    }

    /// The title.
    pub fn title(&self) -> String {
        self.spec.name.clone().unwrap_or_else(|| self.file.display().to_string())
    }

    /// The muscle elements, in the model's order.
    pub fn muscles(&self) -> &[MuscleInfo] {
        &self.sharing.muscles
    }

    /// The load-sharing problem of a variant.
    pub fn optim_study(&self, v: &Variant) -> mollier_optim::Study {
        self.sharing.study_with_margin(v.criterion.clone(), v.glenoid, v.margin)
    }

    /// The frames of the motion, at rest (quasi-static), with the study's load and the external
    /// loads, every frame held (for [`Study::run_variant`]).
    pub fn frames(&self) -> Vec<Frame> {
        (0..self.motion.frames.len()).map(|k| self.frame(k)).collect()
    }

    /// Frame `k` of [`Study::frames`].
    fn frame(&self, k: usize) -> Frame {
        let f = &self.motion.frames[k];
        let mut loads: Vec<Load> = self.load.iter().map(|&(node, force)| Load::Force { node, force }).collect();
        loads.extend(self.external.get(k).into_iter().flatten().copied());
        Frame { loads, ..Frame::at_rest(f.time, f.q.clone()) }
    }

    /// Apply time-varying external loads (resolved against the study's model) at every frame:
    /// an error, to show after the load file's name, when the motion's times leave the loads'.
    pub fn set_loads(&mut self, loads: &mollier::ExternalLoads) -> Result<(), String> {
        let frames = &self.motion.frames;
        if let (Some(first), Some(last)) = (frames.first(), frames.last()) {
            loads.check_times(first.time, last.time)?;
        }
        self.external = loads.over_motion(&self.compiled, frames.iter().map(|f| (f.time, f.q.as_slice())));
        Ok(())
    }

    /// The free modes reported besides the muscles: every free mode of the other user elements.
    fn free_modes(&self) -> Vec<(String, ModeId)> {
        let model = &self.compiled.model;
        let mut out = Vec::new();
        for el in &self.compiled.elements {
            if self.muscles().iter().any(|m| m.element == el.id) {
                continue;
            }
            for k in 0..model.element(el.id).layout().n_modes() {
                let m = model.mode_id(el.id, k);
                if model.mode_role(m) == ModeRole::Dependent {
                    out.push((format!("{}.{}", el.name, model.mode_info(m).name), m));
                }
            }
        }
        out
    }

    /// The kinematics of the motion, frame after frame (each from the previous solution), every
    /// frame held: for a test or a benchmark of this part on a short motion ([`Study::run`]
    /// keeps a bounded number).
    pub fn kinematics(&self) -> Kinematics {
        let start = Instant::now();
        let mut pass = KinematicsPass::new(self);
        let frames = self.motion.frames.iter().map(|f| pass.frame(f)).collect();
        Kinematics { free_names: self.free_names(), frames, time_ms: start.elapsed().as_secs_f64() * 1e3 }
    }

    /// Names of the free modes reported (`element.mode`).
    pub(crate) fn free_names(&self) -> Vec<String> {
        self.free_modes().into_iter().map(|(n, _)| n).collect()
    }

    /// The masses under gravity (kg), their nodes, and the gravity vector (m/s²), when gravity
    /// and the study's `[load]` are the only loads (no `[loads]` in the model, no external
    /// loads) and no element has a law (so that muscles and gravity are all the applied forces);
    /// `None` otherwise.
    fn gravity_masses(&self) -> Option<Gravity> {
        let spec = self.compiled.document.spec();
        let external = self.external.iter().any(|l| !l.is_empty());
        if external || !spec.loads.0.is_empty() || spec.elements.0.iter().any(|(_, e)| e.law.is_some()) {
            return None;
        }
        let g = spec.gravity.unwrap_or([0.0; 3]);
        let masses = self.compiled.bodies.iter().filter_map(|b| Some((b.mass_node?, b.mass?))).collect();
        Some((masses, g))
    }

    /// Central differences at `q`: `∂l_i/∂q_j` and `∂V/∂q_j`. `fd` is a workspace of its own
    /// that follows the motion (each solve starts from the previous sample, close by).
    fn differences(
        &self,
        fd: &mut Data,
        q: &[f64],
        gravity: Option<&Gravity>,
    ) -> Result<(Vec<f64>, Option<Vec<f64>>), String> {
        let model = &self.compiled.model;
        let (nq, k) = (model.n_q(), self.muscles().len());
        let mut dl = vec![0.0; k * nq];
        let mut dv = vec![0.0; nq];
        let h = DIFFERENCE_STEP;
        for j in 0..nq {
            let mut sample = |sign: f64| -> Result<(Vec<f64>, f64), String> {
                let mut qs = q.to_vec();
                qs[j] += sign * h;
                solve_positions(model, fd, &qs).map_err(|e| e.to_string())?;
                let l = self.muscles().iter().map(|m| fd.mode_value(m.mode)).collect();
                // the potential of gravity and of the study's constant load: −Σ F·p
                let v = gravity.map_or(0.0, |(masses, g)| {
                    let load = self.load.iter().map(|&(n, f)| (n, f, 1.0));
                    masses
                        .iter()
                        .map(|&(n, m)| (n, *g, m))
                        .chain(load)
                        .map(|(n, f, m)| {
                            let p = fd.position(model, n);
                            -m * (f[0] * p[0] + f[1] * p[1] + f[2] * p[2])
                        })
                        .sum()
                });
                Ok((l, v))
            };
            let (lp, vp) = sample(1.0)?;
            let (lm, vm) = sample(-1.0)?;
            for i in 0..k {
                dl[i * nq + j] = (lp[i] - lm[i]) / (2.0 * h);
            }
            dv[j] = (vp - vm) / (2.0 * h);
        }
        Ok((dl, gravity.map(|_| dv)))
    }

    /// The independent equilibrium check of a solved frame by virtual work: for every input
    /// `j`, `Σ_i F_i ∂l_i/∂q_j + ∂V/∂q_j − r_j` (N m or N) must vanish, where the derivatives
    /// are central differences of positions solved at `q ± h e_j` (no transfer functions, no
    /// kinetostatics): the joints, the contacts and the rigid conoid do no work, the muscles'
    /// forces `F_i` and gravity do, and the inputs' driving forces are zero (or the reserves
    /// `r_j`). Returns the largest residual and the scale it is measured against (the largest
    /// `Σ_i |F_i ∂l_i/∂q_j| + |∂V/∂q_j|`).
    pub fn virtual_work(&self, frame: &KinematicFrame, result: &FrameResult, reserves: &[usize]) -> Option<(f64, f64)> {
        let dv = frame.gravity_differences.as_ref()?;
        if !result.status.is_success() {
            return None;
        }
        let nq = dv.len();
        let (mut worst, mut scale) = (0.0f64, 0.0f64);
        for j in 0..nq {
            let mut sum = dv[j];
            let mut mag = dv[j].abs();
            for (i, f) in result.forces.iter().enumerate() {
                let t = f * frame.length_differences[i * nq + j];
                sum += t;
                mag += t.abs();
            }
            if let Some(r) = reserves.iter().position(|&input| input == j) {
                sum -= result.reserves[r];
            }
            worst = worst.max(sum.abs());
            scale = scale.max(mag);
        }
        Some((worst, scale))
    }

    /// Load sharing of one variant over the motion at once (the load sharing's own run, frames
    /// in sequence, each starting from the previous configuration), without the independent
    /// check: every frame held, for a test or a benchmark of this part on a short motion.
    pub fn run_variant(&self, v: &Variant) -> VariantResult {
        let start = Instant::now();
        let study = self.optim_study(v);
        let frames = self.frames();
        let results = match LoadSharing::new(&self.compiled.model, study.clone()) {
            Ok(sharing) => {
                sharing.run(&frames, RunOptions { parallel: false, chunk: frames.len().max(1), follow: false })
            }
            // checked in `with_model`; kept as failed frames rather than a panic
            Err(e) => frames.iter().map(|_| failed_frame(&study, e.to_string())).collect(),
        };
        let summary = Summary::of(&study, &results);
        let n = results.len();
        VariantResult {
            variant: v.clone(),
            max_stability_index: results
                .iter()
                .filter(|r| r.status.is_success())
                .filter_map(|r| r.stability_index)
                .fold(None, |m, i| Some(i.max(m.unwrap_or(i)))),
            frames: results,
            summary,
            virtual_work: vec![None; n],
            time_ms: start.elapsed().as_secs_f64() * 1e3,
        }
    }

    /// The maximum isometric moments at every frame of a study with a `[max_moment]` section;
    /// `None` without the section.
    fn max_moments(&self) -> Option<Result<MomentRun, String>> {
        let spec = self.spec.max_moment.as_ref()?;
        let run = || {
            let (directions, hold) = resolve(spec, &self.compiled)?;
            let frames = &self.motion.frames;
            let times = frames.iter().map(|f| f.time).collect();
            let postures = frames.iter().map(|f| f.q.clone()).collect();
            let optim = self.sharing.study(mollier_optim::Criterion::Stresses, spec.joint_cone);
            run_postures(&self.compiled.model, optim, times, postures, directions, &hold)
                .map_err(|e| format!("max_moment: {e}"))
        };
        Some(run())
    }

    /// The kinematics and every variant (variants in parallel), keeping every [`frame_step`]-th
    /// frame and the last: every frame of a motion up to [`PLOTTED_FRAMES`] frames, at most that
    /// many of a longer one (`Results::frames` says which), so that memory does not grow with
    /// the motion. The tables of every frame: [`crate::output::run_and_write`], or
    /// [`Study::run_streaming`] with a sink.
    pub fn run(&self) -> Results {
        let keep = frame_step(self.motion.frames.len());
        let Ok(r) = self.run_streaming(keep, |_, _| Ok::<(), std::convert::Infallible>(()));
        r
    }

    /// The kinematics and every variant, frame after frame in chunks (the variants of a chunk
    /// in parallel), each frame handed to `sink(k, frame)` in order as soon as it is solved; a
    /// sink's error stops the run. Only every `keep`-th frame (and the last) is kept in the
    /// results, so that memory holds a chunk and the kept frames, not the motion. The kept
    /// frames' results do not depend on `keep`; the summaries count every frame.
    pub fn run_streaming<E>(
        &self,
        keep: usize,
        mut sink: impl FnMut(usize, &StudyFrame) -> Result<(), E>,
    ) -> Result<Results, E> {
        let start = Instant::now();
        let n = self.motion.frames.len();
        let keep = keep.max(1);
        let mut kin = KinematicsPass::new(self);
        let mut kin_ms = 0.0;
        let mut passes: Vec<VariantPass> = self.variants.iter().map(|v| VariantPass::new(self, v)).collect();
        let mut kept = Vec::new();
        let mut kept_kin = Vec::new();
        let mut kept_variants: Vec<Vec<Checked>> = vec![Vec::new(); passes.len()];
        for first in (0..n).step_by(CHUNK) {
            let last = (first + CHUNK).min(n);
            let t = Instant::now();
            let kinematics: Vec<Result<KinematicFrame, String>> =
                self.motion.frames[first..last].iter().map(|f| kin.frame(f)).collect();
            kin_ms += t.elapsed().as_secs_f64() * 1e3;
            let solved: Vec<Vec<Checked>> = passes
                .par_iter_mut()
                .map(|p| {
                    let t = Instant::now();
                    let out = (first..last).zip(&kinematics).map(|(k, kf)| p.frame(self, &self.frame(k), kf)).collect();
                    p.wall_ms += t.elapsed().as_secs_f64() * 1e3;
                    out
                })
                .collect();
            let mut per_variant: Vec<_> = solved.into_iter().map(Vec::into_iter).collect();
            for (k, kinematics) in (first..last).zip(kinematics) {
                let frame = StudyFrame {
                    kinematics,
                    variants: per_variant.iter_mut().map(|v| v.next().expect("a frame")).collect(),
                };
                sink(k, &frame)?;
                if k % keep == 0 || k + 1 == n {
                    kept.push(k);
                    kept_kin.push(frame.kinematics);
                    for (all, v) in kept_variants.iter_mut().zip(frame.variants) {
                        all.push(v);
                    }
                }
            }
        }
        let variants = passes
            .iter()
            .zip(&self.variants)
            .zip(kept_variants)
            .map(|((p, v), frames)| {
                let (frames, virtual_work) = frames.into_iter().unzip();
                VariantResult {
                    variant: v.clone(),
                    frames,
                    virtual_work,
                    summary: p.summary(n),
                    max_stability_index: p.index,
                    time_ms: p.wall_ms,
                }
            })
            .collect();
        let kinematics = Kinematics { free_names: self.free_names(), frames: kept_kin, time_ms: kin_ms };
        let max_moment = self.max_moments();
        Ok(Results { frames: kept, kinematics, variants, time_ms: start.elapsed().as_secs_f64() * 1e3, max_moment })
    }
}

impl<'s> KinematicsPass<'s> {
    fn new(study: &'s Study) -> Self {
        let model = &study.compiled.model;
        let points = study
            .landmarks
            .iter()
            .map(|(_, n)| study.compiled.points.iter().position(|p| p.node == *n).expect("resolved in load"))
            .collect();
        // columns of the run's outputs
        let dependent = study
            .compiled
            .elements
            .iter()
            .flat_map(|el| (0..model.element(el.id).layout().n_modes()).map(move |k| model.mode_id(el.id, k)))
            .filter(|m| model.mode_role(*m) == ModeRole::Dependent)
            .collect();
        Self {
            study,
            run: KinematicsRun::new(&study.compiled),
            free: study.free_modes().into_iter().map(|(_, m)| m).collect(),
            points,
            dependent,
            gravity: study.gravity_masses(),
            fd: Data::new(model),
        }
    }

    /// The next frame of the motion.
    fn frame(&mut self, f: &crate::motion::MotionFrame) -> Result<KinematicFrame, String> {
        let study = self.study;
        let nq = study.compiled.model.n_q();
        let out = self.run.solve(&f.q).map_err(|e| e.to_string())?;
        let (length_differences, gravity_differences) = study
            .differences(&mut self.fd, &f.q, self.gravity.as_ref())
            .map_err(|e| format!("finite differences: {e}"))?;
        let data = self.run.data();
        let lengths = study.muscles().iter().map(|m| m.reference_length + data.mode_value(m.mode)).collect();
        let mut moment_arms = Vec::with_capacity(study.muscles().len() * nq);
        for m in study.muscles() {
            let row = self.dependent.iter().position(|d| *d == m.mode).expect("muscles are free");
            moment_arms.extend((0..nq).map(|j| -out.transfer[row * nq + j]));
        }
        Ok(KinematicFrame {
            landmarks: self
                .points
                .iter()
                .map(|&i| [out.positions[3 * i], out.positions[3 * i + 1], out.positions[3 * i + 2]])
                .collect(),
            free: self.free.iter().map(|m| data.mode_value(*m)).collect(),
            lengths,
            moment_arms,
            scapula_deviation: study.motion.scapula_deviation(&study.compiled, data, f),
            girdle_angles: study.motion.girdle_angles(&study.compiled, data),
            length_differences,
            gravity_differences,
        })
    }
}

impl<'m> VariantPass<'m> {
    fn new(study: &'m Study, v: &Variant) -> Self {
        let optim = study.optim_study(v);
        let sharing = LoadSharing::new(&study.compiled.model, optim.clone()).map(|s| {
            let ws = s.workspace();
            (s, ws)
        });
        Self {
            sharing: sharing.map_err(|e| e.to_string()),
            reserves: optim.reserves.iter().map(|r| r.input).collect(),
            study: optim,
            data: Data::new(&study.compiled.model),
            solved: 0,
            ms: 0.0,
            index: None,
            wall_ms: 0.0,
        }
    }

    /// The next frame, checked by virtual work against its kinematics.
    fn frame(&mut self, study: &Study, frame: &Frame, kinematics: &Result<KinematicFrame, String>) -> Checked {
        let r = match &mut self.sharing {
            Ok((sharing, ws)) => sharing.frame(ws, &mut self.data, frame),
            // checked in `with_model`; kept as failed frames rather than a panic
            Err(e) => failed_frame(&self.study, e.clone()),
        };
        self.ms += r.time_ms;
        if r.status.is_success() {
            self.solved += 1;
            if let Some(i) = r.stability_index {
                mollier::inverse_tables::max_into(&mut self.index, i);
            }
        }
        let vw = kinematics.as_ref().ok().and_then(|k| study.virtual_work(k, &r, &self.reserves));
        (r, vw)
    }

    fn summary(&self, frames: usize) -> Summary {
        Summary {
            frames,
            solved: self.solved,
            failed: frames - self.solved,
            criterion: self.study.criterion.letter().to_string(),
            ms_per_frame: if frames == 0 { 0.0 } else { self.ms / frames as f64 },
        }
    }
}

fn failed_frame(study: &mollier_optim::Study, message: String) -> FrameResult {
    let k = study.muscles.len();
    FrameResult {
        status: mollier_optim::Status::Solver(message),
        forces: vec![f64::NAN; k],
        max_forces: vec![f64::NAN; k],
        lengths: vec![f64::NAN; k],
        reserves: vec![f64::NAN; study.reserves.len()],
        reserve_shares: vec![f64::NAN; study.reserves.len()],
        reactions: vec![f64::NAN; study.signs.len()],
        cone_force: None,
        stability_index: None,
        objective: None,
        residual: None,
        iterations: 0,
        time_ms: 0.0,
        warnings: Vec::new(),
    }
}

/// A set-up problem `field: message` as `file:line:col: error: field: message`, placed at the
/// field (or at the field the message starts with, as in `motion: motion.frames must be ...`); `file: error: message` when it cannot be placed.
fn place(path: &Path, text: Option<&str>, message: &str) -> String {
    let file = path.display().to_string();
    let unplaced = || format!("{file}: error: {message}");
    let (Some(text), Some((field, rest))) = (text, message.split_once(": ")) else { return unplaced() };
    let spans = mollier_format::Spans::toml(text);
    let word = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).next().unwrap_or("");
    let inner = format!("{field}.{word}");
    let exact = [inner.as_str(), word].into_iter().find_map(|p| spans.exact(p).map(|s| (p, s)));
    match exact.or_else(|| spans.value(field).map(|s| (field, s))) {
        Some((p, span)) => mollier_format::Diagnostic::new(&file, p, rest).at_span(text, span).render(),
        None => unplaced(),
    }
}
