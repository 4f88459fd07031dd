//! A study's motion resolved in a model: the frames' generalized coordinates, from the shoulder
//! rhythm, from recorded thorax-relative angles, from a motion file of the model's inputs, or
//! from a marker trial by the facade's inverse kinematics.

use std::path::Path;

use mollier::{Compiled, InputInfo};
use mollier_core::element::Quantity;
use mollier_core::geometry::{Mat3, mat_t_vec, rotation, sub};
use mollier_core::{Data, NodeId, solve_positions};

use crate::rhythm::{Landmarks, Posture, RestAngles, posture};
use crate::rotation::{angle_between, to_yzx, yzx, yzy};
use crate::spec::MotionSpec;

const DEG: f64 = std::f64::consts::PI / 180.0;

/// One frame of the motion.
#[derive(Clone, Debug, PartialEq)]
pub struct MotionFrame {
    /// Time (s): the frame's index (the motion is a sequence of static postures).
    pub time: f64,
    /// Humerus elevation (deg).
    pub elevation: f64,
    /// The rhythm's posture (bone orientations, thorax constraints omitted).
    pub posture: Posture,
    /// The model's generalized coordinates, in input order (m, rad).
    pub q: Vec<f64>,
}

/// The most frames a study runs, whatever its motion (a rhythm's `frames`, or the rows of an
/// `angles` or `inputs` file).
pub const MAX_FRAMES: usize = 100_000;

/// The rhythm in a model: its landmarks and the frames.
#[derive(Clone, Debug, PartialEq)]
pub struct RhythmMotion {
    /// The bone geometry of the landmarks, read from the model's initial configuration.
    pub landmarks: Landmarks,
    /// The frames.
    pub frames: Vec<MotionFrame>,
    /// The scapula's orientation node, to compare the model's scapula with the rhythm's.
    pub scapula: NodeId,
    /// The clavicle's orientation node.
    pub clavicle: NodeId,
    /// Rest angles of the rhythm.
    pub rest: RestAngles,
}

/// DAS3's thorax-relative angles of a clavicle `c` and a scapula `s`: `[y, z, x]` each (YZX,
/// rad).
pub fn girdle_angles(c: &Mat3, s: &Mat3) -> [f64; 6] {
    let (c, s) = (to_yzx(c), to_yzx(s));
    [c[0], c[1], c[2], s[0], s[1], s[2]]
}

/// The orientation (rotation matrix) of an orientation node in `data`.
pub fn orientation(compiled: &Compiled, data: &Data, node: NodeId) -> Mat3 {
    let l = data.orientation(&compiled.model, node);
    let s: f64 = l.iter().map(|v| v * v).sum();
    rotation(&l).map(|r| r.map(|v| v / s))
}

fn point(compiled: &Compiled, name: &str) -> Result<NodeId, String> {
    compiled
        .points
        .iter()
        .find(|p| p.name == name)
        .map(|p| p.node)
        .ok_or_else(|| format!("the model has no point `{name}`"))
}

fn body_orientation(compiled: &Compiled, name: &str) -> Result<NodeId, String> {
    compiled
        .bodies
        .iter()
        .find(|b| b.name == name)
        .map(|b| b.frame.orientation)
        .ok_or_else(|| format!("the model has no body `{name}`"))
}

/// The columns of a motion of type `angles` (deg unless the file says otherwise): the clavicle's
/// and the scapula's orientations relative to the thorax as DAS3's YZX angles, and the
/// humerus's as YZY (pole angle, elevation, axial rotation).
pub const ANGLE_COLUMNS: [&str; 9] = [
    "clavicle_y",
    "clavicle_z",
    "clavicle_x",
    "scapula_y",
    "scapula_z",
    "scapula_x",
    "humerus_y",
    "humerus_z",
    "humerus_yy",
];

/// The humerus's elevation (rad): the angle of its long axis (body −y) from thorax −Y.
fn elevation_of(humerus: &Mat3) -> f64 {
    humerus[1][1].clamp(-1.0, 1.0).acos()
}

impl RhythmMotion {
    /// Resolve a motion specification in a model: the rhythm, recorded angles (`angles`) or the
    /// model's inputs (`inputs`) read from `spec.file`, relative to `dir`. Checks that the six
    /// named inputs are the model's inputs and that the humerus is at the declared rest angles
    /// initially.
    pub fn new(spec: &MotionSpec, compiled: &Compiled, dir: &Path) -> Result<Self, String> {
        check_kind(spec)?;
        let ms = &spec.model;
        let model = &compiled.model;
        if model.n_q() != 6 {
            return Err(format!("the rhythm drives 6 inputs, the model has {}", model.n_q()));
        }
        let order = input_order(compiled, &ms.inputs)?;
        let data = Data::new(model);
        let (sc, ac, ts) = (point(compiled, &ms.sc)?, point(compiled, &ms.ac)?, point(compiled, &ms.ts)?);
        let clavicle = body_orientation(compiled, &ms.clavicle)?;
        let scapula = body_orientation(compiled, &ms.scapula)?;
        let humerus = body_orientation(compiled, &ms.humerus)?;
        let pos = |n: NodeId| data.position(model, n);
        let (rc, rs) = (orientation(compiled, &data, clavicle), orientation(compiled, &data, scapula));
        let landmarks = Landmarks {
            sc: pos(sc),
            ac: mat_t_vec(&rc, &sub(&pos(ac), &pos(sc))),
            ts: mat_t_vec(&rs, &sub(&pos(ts), &pos(ac))),
        };
        let rest_angles = ms.rest_angles.map(|a| a * DEG);
        let rh = orientation(compiled, &data, humerus);
        let off = angle_between(&rh, &yzy(&rest_angles));
        if !(off < 1e-6) {
            return Err(format!(
                "the humerus of the model's initial configuration is {:.4} deg away from the rest angles {:?} deg",
                off / DEG,
                ms.rest_angles
            ));
        }
        let rest = RestAngles::default();
        let inputs = InputMap { landmarks: &landmarks, rest_angles, order: &order };
        let frames = match spec.kind.as_str() {
            "rhythm" => rhythm_frames(spec, &rest, &inputs),
            "angles" => angle_frames(spec, compiled, dir, &inputs)?,
            "markers" => {
                let (times, q) = marker_inputs(spec, compiled, dir)?;
                posture_frames(compiled, &times, q.iter().map(Vec::as_slice), [clavicle, scapula, humerus])?
            }
            _ => {
                let m = read_file(spec, dir, &compiled.inputs)?;
                posture_frames(compiled, &m.times, m.q.iter(), [clavicle, scapula, humerus])?
            }
        };
        if frames.len() < 2 {
            return Err(format!("motion: {} frame(s): a study needs at least 2", frames.len()));
        }
        Ok(Self { landmarks, frames, scapula, clavicle, rest })
    }

    /// The clavicle's and the scapula's orientations relative to the thorax (the global frame)
    /// in `data` as DAS3's angles: clavicle `[y, z, x]`, scapula `[y, z, x]` (YZX, rad).
    pub fn girdle_angles(&self, compiled: &Compiled, data: &Data) -> [f64; 6] {
        girdle_angles(&orientation(compiled, data, self.clavicle), &orientation(compiled, data, self.scapula))
    }

    /// How far (rad) the model's scapula in `data` is from the rhythm's scapula of `frame`.
    pub fn scapula_deviation(&self, compiled: &Compiled, data: &Data, frame: &MotionFrame) -> f64 {
        angle_between(&orientation(compiled, data, self.scapula), &frame.posture.scapula)
    }
}

/// The motion's type and its fields agree: a rhythm has 2 to [`MAX_FRAMES`] frames, finite
/// angles and no file; `angles`, `inputs` and `markers` name a file; only `markers` has tasks.
fn check_kind(spec: &MotionSpec) -> Result<(), String> {
    if spec.tasks.is_some() && spec.kind != "markers" {
        return Err("motion.tasks: IK tasks go with a motion of type `markers`".into());
    }
    match (spec.kind.as_str(), &spec.file) {
        ("rhythm", None) => {
            if spec.frames < 2 || spec.frames > MAX_FRAMES {
                return Err(format!("motion.frames must be from 2 to {MAX_FRAMES}, got {}", spec.frames));
            }
            let e = spec.elevation.ok_or("motion.elevation: give the first and last elevation (deg)")?;
            let finite = [spec.pole_angle, e[0], e[1], spec.axial_rotation];
            if !finite.iter().all(|v| v.is_finite()) {
                return Err("motion angles must be finite".into());
            }
            Ok(())
        }
        ("rhythm", Some(_)) => {
            Err("motion.file: a rhythm reads no file (types `angles`, `inputs` and `markers` do)".into())
        }
        ("angles" | "inputs" | "markers", None) => {
            Err(format!("motion.file: a motion of type `{}` is read from a file: name it", spec.kind))
        }
        ("angles" | "inputs" | "markers", Some(_)) => Ok(()),
        (other, _) => Err(format!("motion type `{other}`: expected `rhythm`, `angles`, `inputs` or `markers`")),
    }
}

/// The model's input index of each of the six named inputs (AC.y, AC.z, TS.x, the humerus's
/// three angles), each named once.
fn input_order(compiled: &Compiled, names: &[String]) -> Result<Vec<usize>, String> {
    let mut order = Vec::new();
    for name in names {
        let j = compiled
            .inputs
            .iter()
            .position(|i| &i.name == name)
            .ok_or_else(|| format!("motion.model.inputs: the model has no input `{name}`"))?;
        if order.contains(&j) {
            return Err(format!("motion.model.inputs: `{name}` is listed twice"));
        }
        order.push(j);
    }
    Ok(order)
}

/// From a posture to the model's six inputs.
struct InputMap<'a> {
    landmarks: &'a Landmarks,
    /// The humerus's rest angles (rad, YZY).
    rest_angles: [f64; 3],
    /// The model's input index of AC.y, AC.z, TS.x and the humerus's angles.
    order: &'a [usize],
}

impl InputMap<'_> {
    /// The inputs of a posture: AC.y, AC.z, TS.x and the humerus's angles (rad) from rest.
    fn inputs(&self, p: &Posture, humerus: [f64; 3]) -> Vec<f64> {
        let girdle = self.landmarks.coordinates(p);
        let values = [
            girdle[0],
            girdle[1],
            girdle[2],
            humerus[0] - self.rest_angles[0],
            humerus[1] - self.rest_angles[1],
            humerus[2] - self.rest_angles[2],
        ];
        let mut q = vec![0.0; 6];
        for (v, &j) in values.iter().zip(self.order) {
            q[j] = *v;
        }
        q
    }
}

/// The rhythm's frames: the elevation in equal steps, the girdle from de Groot & Brand (2001).
fn rhythm_frames(spec: &MotionSpec, rest: &RestAngles, inputs: &InputMap) -> Vec<MotionFrame> {
    let n = spec.frames;
    let e = spec.elevation.unwrap_or_default();
    (0..n)
        .map(|k| {
            let elevation = e[0] + (e[1] - e[0]) * k as f64 / (n - 1) as f64;
            let angles = [spec.pole_angle * DEG, elevation * DEG, spec.axial_rotation * DEG];
            let p = posture(rest, angles[0], angles[1], angles[2]);
            MotionFrame { time: k as f64, elevation, posture: p, q: inputs.inputs(&p, angles) }
        })
        .collect()
}

/// `spec.file` (relative to `dir`) read with `columns`, at most [`MAX_FRAMES`] rows (counted
/// before any is solved).
fn read_file(spec: &MotionSpec, dir: &Path, columns: &[InputInfo]) -> Result<mollier::Motion, String> {
    let file = dir.join(spec.file.as_deref().unwrap_or_default());
    let m = mollier::read_motion(&file, columns)
        .map_err(|d| format!("motion.file: {}", d.without_contents("the study").render()))?;
    match m.times.len() {
        n if n > MAX_FRAMES => {
            Err(format!("motion.file: {n} frames: a study runs at most {MAX_FRAMES}, as a rhythm's `frames` may be"))
        }
        _ => Ok(m),
    }
}

/// Frames of recorded angles (`angles`): DAS3's clavicle and scapula YZX, humerus YZY (rad).
fn angle_frames(
    spec: &MotionSpec,
    compiled: &Compiled,
    dir: &Path,
    inputs: &InputMap,
) -> Result<Vec<MotionFrame>, String> {
    let columns: Vec<InputInfo> = ANGLE_COLUMNS
        .iter()
        .map(|n| InputInfo { name: n.to_string(), input: compiled.inputs[0].input, quantity: Quantity::Angle })
        .collect();
    let m = read_file(spec, dir, &columns)?;
    let mut frames = Vec::with_capacity(m.times.len());
    for (k, a) in m.q.iter().enumerate() {
        let p = Posture {
            clavicle: yzx(&[a[0], a[1], a[2]]),
            scapula: yzx(&[a[3], a[4], a[5]]),
            humerus: yzy(&[a[6], a[7], a[8]]),
            clavicle_axial: a[2],
        };
        let elevation = elevation_of(&p.humerus) / DEG;
        frames.push(MotionFrame { time: m.times[k], elevation, posture: p, q: inputs.inputs(&p, [a[6], a[7], a[8]]) });
    }
    Ok(frames)
}

/// The inputs fitted to the marker trial `spec.file` (with `spec.tasks`, relative to `dir`) by
/// the facade's inverse kinematics, frame by frame: the trial's times and each frame's inputs.
/// The trial's and the tasks' problems are given with their `file:line:col`, at most
/// [`MAX_FRAMES`] frames.
fn marker_inputs(spec: &MotionSpec, compiled: &Compiled, dir: &Path) -> Result<(Vec<f64>, Vec<Vec<f64>>), String> {
    let located =
        |field: &str, d: mollier_format::Diagnostics| format!("{field}: {}", d.without_contents("the study").render());
    let trial = mollier::read_trc(&dir.join(spec.file.as_deref().unwrap_or_default()))
        .map_err(|d| located("motion.file", d))?;
    if trial.len() > MAX_FRAMES {
        return Err(format!("motion.file: {} frames: a study runs at most {MAX_FRAMES}", trial.len()));
    }
    let tasks = spec
        .tasks
        .as_ref()
        .map(|t| mollier::ik::read_tasks(&dir.join(t)))
        .transpose()
        .map_err(|d| located("motion.tasks", d))?;
    let registry = mollier::registry();
    let mut run = mollier::IkRun::new(compiled, &registry, mollier::Unknowns::Inputs, &trial, tasks.as_ref())
        .map_err(|d| located("motion.file", d))?;
    let frames = mollier::ik::solve_all(&mut run, |_| {}).map_err(|(i, e)| {
        format!("motion.file: inverse kinematics of the frame at time {} s failed: {e}", trial.times[i])
    })?;
    Ok((trial.times.clone(), frames.into_iter().map(|f| f.q).collect()))
}

/// Frames of the model's inputs `q` at `times`: the posture is the model's own at each frame,
/// with `bones` the clavicle's, scapula's and humerus's nodes.
fn posture_frames<'q>(
    compiled: &Compiled,
    times: &[f64],
    qs: impl IntoIterator<Item = &'q [f64]>,
    bones: [NodeId; 3],
) -> Result<Vec<MotionFrame>, String> {
    let model = &compiled.model;
    let mut d = Data::new(model);
    let mut frames = Vec::with_capacity(times.len());
    for (&time, q) in times.iter().zip(qs) {
        solve_positions(model, &mut d, q)
            .map_err(|e| format!("motion.file: the frame at time {time} cannot be reached: {e}"))?;
        let at = |n: NodeId| orientation(compiled, &d, n);
        let p = Posture { clavicle: at(bones[0]), scapula: at(bones[1]), humerus: at(bones[2]), clavicle_axial: 0.0 };
        let elevation = elevation_of(&p.humerus) / DEG;
        frames.push(MotionFrame { time, elevation, posture: p, q: q.to_vec() });
    }
    Ok(frames)
}
