//! A rhythm motion resolved in a model: the frames' generalized coordinates.

use mollier::Compiled;
use mollier_core::geometry::{Mat3, mat_t_vec, rotation, sub};
use mollier_core::{Data, NodeId};

use crate::rhythm::{Landmarks, Posture, RestAngles, posture};
use crate::rotation::{angle_between, yzy};
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

/// The rhythm in a model: its landmarks and the frames.
#[derive(Clone, Debug, PartialEq)]
pub struct RhythmMotion {
    /// The bone geometry of the landmarks, read from the model's initial configuration.
    pub landmarks: Landmarks,
    /// The frames.
    pub frames: Vec<MotionFrame>,
    /// The scapula's orientation node, to compare the model's scapula with the rhythm's.
    pub scapula: NodeId,
    /// Rest angles of the rhythm.
    pub rest: RestAngles,
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

impl RhythmMotion {
    /// Resolve a motion specification in a model. Checks that the six named inputs are the
    /// model's inputs and that the humerus is at the declared rest angles initially.
    pub fn new(spec: &MotionSpec, compiled: &Compiled) -> Result<Self, String> {
        if spec.kind != "rhythm" {
            return Err(format!("motion type `{}`: only `rhythm` is known", spec.kind));
        }
        if spec.frames < 2 || spec.frames > 100_000 {
            return Err(format!("motion.frames must be from 2 to 100000, got {}", spec.frames));
        }
        let finite = [spec.pole_angle, spec.elevation[0], spec.elevation[1], spec.axial_rotation];
        if !finite.iter().all(|v| v.is_finite()) {
            return Err("motion angles must be finite".into());
        }
        let ms = &spec.model;
        let model = &compiled.model;
        if model.n_q() != 6 {
            return Err(format!("the rhythm drives 6 inputs, the model has {}", model.n_q()));
        }
        let mut order = Vec::new();
        for name in &ms.inputs {
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
        let n = spec.frames;
        let frames = (0..n)
            .map(|k| {
                let elevation = spec.elevation[0] + (spec.elevation[1] - spec.elevation[0]) * k as f64 / (n - 1) as f64;
                let angles = [spec.pole_angle * DEG, elevation * DEG, spec.axial_rotation * DEG];
                let p = posture(&rest, angles[0], angles[1], angles[2]);
                let girdle = landmarks.coordinates(&p);
                let values = [
                    girdle[0],
                    girdle[1],
                    girdle[2],
                    angles[0] - rest_angles[0],
                    angles[1] - rest_angles[1],
                    angles[2] - rest_angles[2],
                ];
                let mut q = vec![0.0; 6];
                for (v, &j) in values.iter().zip(&order) {
                    q[j] = *v;
                }
                MotionFrame { time: k as f64, elevation, posture: p, q }
            })
            .collect();
        Ok(Self { landmarks, frames, scapula, rest })
    }

    /// How far (rad) the model's scapula in `data` is from the rhythm's scapula of `frame`.
    pub fn scapula_deviation(&self, compiled: &Compiled, data: &Data, frame: &MotionFrame) -> f64 {
        angle_between(&orientation(compiled, data, self.scapula), &frame.posture.scapula)
    }
}
