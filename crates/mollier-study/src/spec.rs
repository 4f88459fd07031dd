//! The study file: TOML, read into these structures. Paths inside it are relative to the file.
//! The model file names the muscles, the sign constraints and the joint cone (its
//! `[load_sharing]` section); the study adds the motion, the criteria and the variants.
//!
//! ```toml
//! format_version = 2
//! name = "Humeral abduction"
//! model = "shoulder.toml"
//! cuff = ["m. supraspinatus", "m. infraspinatus", "m. subscapularis", "m. teres minor"]
//!
//! [motion]
//! type = "rhythm"
//! frames = 37
//! pole_angle = 0
//! elevation = [1, 179]
//! axial_rotation = 0
//!
//! [motion.model]
//! clavicle = "clavicle"
//! scapula = "scapula"
//! humerus = "humerus"
//! sc = "thorax.SC"
//! ac = "AC"
//! ts = "scapula.TS"
//! inputs = ["AC.y", "AC.z", "scapula.TS.x", "pole.rotation", "elevation.rotation", "axial.rotation"]
//!
//! [optimisation]
//! criteria = ["a", "b", "c", "d"]
//! joint_cone = ["with", "without"]
//! margins = [1, 0.6, 0.4]
//!
//! # optional: a weight in the hand
//! [load]
//! point = "humerus.hand"
//! mass = 2
//! ```
//!
//! Recorded kinematics replace the rhythm's `frames`, `elevation`, `pole_angle` (`plane`) and
//! `axial_rotation` with `type = "angles"` or `"inputs"` and a `file` (an IK result's
//! `motion.csv` is an `inputs` file), or with `type = "markers"`, a `.trc` marker trial as the
//! `file` and optionally the IK `tasks` (weights), solved by inverse kinematics first.
//!
//! `docs/shoulder.md` describes every field.

use mollier_format::{Diagnostic, Diagnostics, Spans};
use serde::Deserialize;

/// The version of the study format this build reads.
pub const FORMAT_VERSION: u32 = 2;

/// A study file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    /// Version of the study format: 2.
    pub format_version: u32,
    /// A title, for plots and the summary.
    #[serde(default)]
    pub name: Option<String>,
    /// The model file (relative to the study file), with a `[load_sharing]` section.
    pub model: String,
    /// The motion.
    pub motion: MotionSpec,
    /// Load sharing: the criteria and variants.
    pub optimisation: OptimisationSpec,
    /// Which points to report in the kinematics and plot as landmarks (point names).
    #[serde(default)]
    pub landmarks: Vec<String>,
    /// The rotator cuff: muscles (the muscle table's `muscle` names) whose summed force is
    /// tabulated (`cuff.csv`) and plotted against elevation and margin (`cuff.svg`).
    #[serde(default)]
    pub cuff: Vec<String>,

    /// Maximum isometric moments at every frame (Chadwick et al. 2014, II-F); optional.
    #[serde(default)]
    pub max_moment: Option<crate::max_moment::MaxMomentSpec>,

    /// A load at a point of the model besides its gravity: a mass held in the hand, or a force.
    #[serde(default)]
    pub load: Option<LoadSpec>,
}

/// A study's extra load: at `point`, a `mass` (kg, pulled by the model's gravity) or a `force`
/// (N, global frame), constant over the motion.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// The point (`body.point`), e.g. `humerus.hand`.
    pub point: String,
    /// A mass held there (kg).
    #[serde(default)]
    pub mass: Option<f64>,
    /// A force applied there (N, global frame).
    #[serde(default)]
    pub force: Option<[f64; 3]>,
}

/// The motion: a shoulder rhythm, recorded angles or recorded inputs, through the model's inputs.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MotionSpec {
    /// `rhythm`: de Groot & Brand (2001) as in DAS3; `angles`: the clavicle's, scapula's and
    /// humerus's angles relative to the thorax per frame, read from `file`
    /// ([`crate::motion::ANGLE_COLUMNS`]); `inputs`: a motion file of the model's inputs (an IK
    /// result's `motion.csv`); `markers`: a `.trc` marker trial, the model's inputs fitted to it
    /// frame by frame by inverse kinematics ([`mollier::ik`]).
    #[serde(rename = "type")]
    pub kind: String,
    /// The motion file of `angles` and `inputs` (relative to the study file): CSV, `.mot` or
    /// `.sto`, a `time` column and one per angle or input; of `markers`, the `.trc` trial.
    #[serde(default)]
    pub file: Option<String>,
    /// `markers` only: the IK tasks (relative to the study file), a TOML of marker weights or
    /// OpenSim's IK setup XML (`mollier ik --tasks`); default every marker of the trial that the
    /// model has, weight 1.
    #[serde(default)]
    pub tasks: Option<String>,
    /// Number of frames of a rhythm (at least 2).
    #[serde(default)]
    pub frames: usize,
    /// Humerus pole angle of a rhythm (deg), constant: the plane of elevation, 0 the frontal
    /// plane (abduction), 90 the sagittal plane (forward flexion), about 30-40 the scapular
    /// plane. Also written `plane`.
    #[serde(default, alias = "plane")]
    pub pole_angle: f64,
    /// First and last humerus elevation of a rhythm (deg), evenly spaced over the frames.
    #[serde(default)]
    pub elevation: Option<[f64; 2]>,
    /// Humerus axial rotation of a rhythm (deg), constant.
    #[serde(default)]
    pub axial_rotation: f64,
    /// Where the rhythm meets the model.
    pub model: RhythmModelSpec,
}

/// The names through which the rhythm reaches the model.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RhythmModelSpec {
    /// The clavicle body (its frame is DAS3's clavicle frame).
    pub clavicle: String,
    /// The scapula body.
    pub scapula: String,
    /// The humerus body.
    pub humerus: String,
    /// The sternoclavicular joint centre (a point of the thorax).
    pub sc: String,
    /// The acromioclavicular joint centre (a point of the clavicle and the scapula).
    pub ac: String,
    /// Trigonum spinae (a point of the scapula).
    pub ts: String,
    /// The model's inputs that take, in this order, `AC.y`, `AC.z`, `TS.x` (m) and the
    /// humerus's pole angle, elevation and axial rotation (rad, changes from the rest angles).
    pub inputs: [String; 6],
    /// The humerus's pole angle, elevation and axial rotation in the model's initial
    /// configuration (deg); checked against the model. Default 0, 0, 0.
    #[serde(default)]
    pub rest_angles: [f64; 3],
}

/// Load sharing: which criteria, with and without the model's joint cone imposed.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OptimisationSpec {
    /// Criteria: `a`, `b`, `c`, `d` (van der Helm 1994).
    pub criteria: Vec<String>,
    /// When the model has a joint cone: run each criterion `with` it imposed and/or `without`
    /// (only reported). Default both.
    #[serde(default = "default_variants")]
    pub joint_cone: Vec<String>,
    /// Stability margins `k` in (0, 1] to run the `with` variants at (the force within `k`
    /// times the glenoid's half-angles), one variant each; default the model's
    /// (`[load_sharing.joint_cone] margin`, itself default 1).
    #[serde(default)]
    pub margins: Option<Vec<f64>>,
}

fn default_variants() -> Vec<String> {
    vec!["with".into(), "without".into()]
}

/// The smallest stability margin a study runs: below it the cone is all but its axis, and the
/// variant's folder name (`k` and the margin's shortest decimal text) grows with the exponent
/// (`1e-300` gave a name longer than a file name may be, failing after the whole run).
pub const MIN_MARGIN: f64 = 1e-3;

/// The end of a variant's folder name for margin `k` of the imposed cone: `-k0.6`, none at 1
/// (the rim). Distinct margins have distinct names (the shortest decimal text of each).
pub fn margin_folder(k: f64) -> String {
    if k < 1.0 { format!("-k{k}") } else { String::new() }
}

/// What is wrong with the settings of `[optimisation]`, as (field path, message) pairs: a
/// criterion that is not one or is listed twice (`c` and `so` are one criterion), a
/// `joint_cone` value that is not `with` or `without` or is listed twice, a margin outside
/// [[`MIN_MARGIN`], 1] or whose variant folder another margin's takes
/// ([`margin_folder`]). Checked when the file is read, and again when a study is
/// set up from a specification made in code.
pub fn settings_problems(o: &OptimisationSpec) -> Vec<(String, String)> {
    let mut problems = Vec::new();
    let mut criteria: Vec<(usize, mollier_optim::Criterion)> = Vec::new();
    for (i, c) in o.criteria.iter().enumerate() {
        let path = format!("optimisation.criteria[{i}]");
        match c.parse::<mollier_optim::Criterion>() {
            Err(m) => problems.push((path, m)),
            Ok(k) => match criteria.iter().find(|(_, e)| *e == k) {
                Some((j, _)) => problems.push((
                    path,
                    format!(
                        "`{c}` is criterion {} again (item {j} is `{}`): its variants would be run twice into one folder",
                        k.letter(),
                        o.criteria[*j]
                    ),
                )),
                None => criteria.push((i, k)),
            },
        }
    }
    for (i, v) in o.joint_cone.iter().enumerate() {
        let path = format!("optimisation.joint_cone[{i}]");
        if v != "with" && v != "without" {
            problems.push((path, format!("`{v}` (expected with, without)")));
        } else if o.joint_cone[..i].contains(v) {
            problems.push((path, format!("`{v}` is listed twice")));
        }
    }
    for (i, &k) in o.margins.iter().flatten().enumerate() {
        let path = format!("optimisation.margins[{i}]");
        if !(k.is_finite() && (MIN_MARGIN..=1.0).contains(&k)) {
            problems.push((
                path,
                format!(
                    "{k} is not in [{MIN_MARGIN}, 1]: a margin is the fraction of the glenoid's half-angles the force must stay within"
                ),
            ));
            continue;
        }
        let folder = margin_folder(k);
        let earlier = o.margins.iter().flatten().take(i).position(|&e| margin_folder(e) == folder);
        if let Some(j) = earlier {
            problems
                .push((path, format!("{k} is margin {j} again (variant folders `…{folder}`): give each margin once")));
        }
    }
    problems
}

/// Parse a study file's text, its version first: a study written for format 1 is told what
/// moved to the model file. `file` names it in the problem, which is placed at `line:col`.
pub fn parse(file: &str, text: &str) -> Result<StudySpec, Diagnostics> {
    parse_all(file, text).map_err(Diagnostics)
}

fn parse_all(file: &str, text: &str) -> Result<StudySpec, Vec<Diagnostic>> {
    #[derive(Deserialize)]
    struct Version {
        format_version: Option<u32>,
    }
    let toml_err = |e: toml::de::Error| {
        let d = Diagnostic::new(file, "", e.message().trim_end())
            .with_hint("docs/shoulder.md describes every field of a study file");
        vec![d.at_span(text, e.span().unwrap_or(0..0))]
    };
    let at_version = |message: String, hint: &str| {
        let span = Spans::toml(text).value("format_version").unwrap_or(0..0);
        vec![Diagnostic::new(file, "format_version", message).with_hint(hint).at_span(text, span)]
    };
    let v: Version = toml::from_str(text).map_err(toml_err)?;
    match v.format_version {
        Some(FORMAT_VERSION) => {
            let spec: StudySpec = toml::from_str(text).map_err(toml_err)?;
            // the settings, before any work: a study that would fail when it writes fails here,
            // at the value
            let problems = settings_problems(&spec.optimisation);
            if !problems.is_empty() {
                let spans = Spans::toml(text);
                return Err(problems
                    .into_iter()
                    .map(|(path, message)| {
                        let span = spans.value(&path).unwrap_or(0..0);
                        Diagnostic::new(file, path, message)
                            .with_hint("docs/shoulder.md describes every field of a study file")
                            .at_span(text, span)
                    })
                    .collect());
            }
            Ok(spec)
        }
        Some(1) => Err(at_version(
            "format_version 1 is no longer read".into(),
            "the muscle table (`muscles`), `optimisation.specific_tension`, `width`, `compression`, \
             `tension`, `reserve_weight` and the `[glenoid]` section moved to the model file's \
             `[load_sharing]` section (docs/model-format.md), and `[glenoid] variants` is now \
             `optimisation.joint_cone`; then write `format_version = 2`",
        )),
        Some(n) => Err(at_version(
            format!("format_version {n} is not supported (this build reads {FORMAT_VERSION})"),
            &format!("write `format_version = {FORMAT_VERSION}`"),
        )),
        None => Err(vec![
            Diagnostic::new(file, "format_version", "missing field `format_version`")
                .with_hint(format!("write `format_version = {FORMAT_VERSION}` first"))
                .at_span(text, 0..0),
        ]),
    }
}
