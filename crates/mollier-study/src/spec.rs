//! The study file: TOML, read into these structures. Paths inside it are relative to the file.
//!
//! ```toml
//! format_version = 1
//! name = "Humeral abduction"
//! model = "shoulder.toml"
//! muscles = "muscles.csv"
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
//! compression = ["TS_thorax.distance"]
//! tension = ["conoid.elongation"]
//!
//! [glenoid]
//! joint = "scapula.GH"
//! elements = ["scapula.GH"]
//! body = "scapula"
//! to_glenoid = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]
//! into_socket = "-x"
//! half_angles = [44.37, 38.55]
//! ```
//!
//! `docs/shoulder.md` describes every field.

use serde::Deserialize;

/// The version of the study format this build reads.
pub const FORMAT_VERSION: u32 = 1;

/// A study file.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct StudySpec {
    /// Version of the study format: 1.
    pub format_version: u32,
    /// A title, for plots and the summary.
    #[serde(default)]
    pub name: Option<String>,
    /// The model file (relative to the study file).
    pub model: String,
    /// The muscle table (CSV: `element`, `muscle`, `pcsa_cm2`, `optimal_length_mm`, ...),
    /// relative to the study file.
    pub muscles: String,
    /// The motion.
    pub motion: MotionSpec,
    /// Load sharing.
    pub optimisation: OptimisationSpec,
    /// The glenohumeral stability cone.
    #[serde(default)]
    pub glenoid: Option<GlenoidSpec>,
    /// Which points to report in the kinematics and plot as landmarks (point names).
    #[serde(default)]
    pub landmarks: Vec<String>,
}

/// The motion: a shoulder rhythm through the model's inputs.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MotionSpec {
    /// `rhythm`: de Groot & Brand (2001) as in DAS3.
    #[serde(rename = "type")]
    pub kind: String,
    /// Number of frames (at least 2).
    pub frames: usize,
    /// Humerus pole angle (deg), constant: 0 is the frontal plane.
    #[serde(default)]
    pub pole_angle: f64,
    /// First and last humerus elevation (deg), evenly spaced over the frames.
    pub elevation: [f64; 2],
    /// Humerus axial rotation (deg), constant.
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

/// Load sharing.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct OptimisationSpec {
    /// Criteria: `a`, `b`, `c`, `d` (seed 001).
    pub criteria: Vec<String>,
    /// Specific tension (N/cm²): PCSA × this is a muscle's maximal force. Default 100.
    #[serde(default = "default_tension")]
    pub specific_tension: f64,
    /// Width of the Gaussian force-length relation (seed 002 eq. 13). Default 0.56.
    #[serde(default = "default_width")]
    pub width: f64,
    /// Fixed modes whose reaction must be compressive (`element.mode`).
    #[serde(default)]
    pub compression: Vec<String>,
    /// Fixed modes whose reaction must be tensile (`element.mode`).
    #[serde(default)]
    pub tension: Vec<String>,
    /// Weight of a reserve actuator on every input (in the criterion's units per (N m)² or
    /// N²); none if absent.
    #[serde(default)]
    pub reserve_weight: Option<f64>,
}

fn default_tension() -> f64 {
    100.0
}

fn default_width() -> f64 {
    0.56
}

/// The glenohumeral joint's stability cone.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GlenoidSpec {
    /// The joint centre (a point of the socket's body).
    pub joint: String,
    /// The elements of the socket's body at the joint centre (e.g. its generated beam
    /// `scapula.GH`): the force the joint node exerts on them is the joint force on the socket.
    pub elements: Vec<String>,
    /// The body that carries the socket.
    pub body: String,
    /// Rows map a vector in the body's frame to the glenoid frame (DAS3's `glenoid_scap`);
    /// orthonormalised if given to a few decimals (off by at most 1e-3).
    pub to_glenoid: [[f64; 3]; 3],
    /// The glenoid-frame axis that points from the humeral head into the socket: `x`, `-x`, `y`,
    /// `-y`, `z` or `-z`.
    pub into_socket: String,
    /// Half-angles of the glenoid ellipse (deg): towards the next axis after `into_socket` and
    /// the one after that (for `-x`: y, then z).
    pub half_angles: [f64; 2],
    /// Which variants to run: `with` (the cone imposed) and/or `without` (only reported).
    /// Default both.
    #[serde(default = "default_variants")]
    pub variants: Vec<String>,
}

fn default_variants() -> Vec<String> {
    vec!["with".into(), "without".into()]
}
