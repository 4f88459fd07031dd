//! OpenSim's kinematics of the tree, as OpenSim 4.x defines it, for placing the initial
//! configuration: a joint's child frame M is its parent frame F turned by the rotations (applied
//! in order, each about its axis in the frame turned by the ones before) about F's origin moved by
//! the translations (along F's axes); a body's pose follows from its joint's child frame.

use nalgebra::{Matrix3, Rotation3, Unit, Vector3};

use crate::model::{AxisValue, Frame, Model};

/// A body's pose: `x_global = o + R x_body`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Pose {
    /// Orientation.
    pub r: Matrix3<f64>,
    /// Origin (m).
    pub o: Vector3<f64>,
}

impl Pose {
    /// The ground's pose.
    pub fn identity() -> Self {
        Pose { r: Matrix3::identity(), o: Vector3::zeros() }
    }
    /// A point given in this frame, in global coordinates.
    pub fn point(&self, p: &[f64; 3]) -> Vector3<f64> {
        self.o + self.r * Vector3::from(*p)
    }
}

/// Rotation by `angle` (rad) about the unit vector `dir`.
pub fn rot(dir: &[f64; 3], angle: f64) -> Matrix3<f64> {
    Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::from(*dir)), angle).into_inner()
}

/// OpenSim's body-fixed X-Y-Z rotation `Rx(a) Ry(b) Rz(c)`.
pub fn xyz(a: &[f64; 3]) -> Matrix3<f64> {
    rot(&[1.0, 0.0, 0.0], a[0]) * rot(&[0.0, 1.0, 0.0], a[1]) * rot(&[0.0, 0.0, 1.0], a[2])
}

/// The value of an axis at the coordinates `q` (one per coordinate of the model).
pub fn axis_value(v: &AxisValue, q: &[f64]) -> f64 {
    match v {
        AxisValue::Const(c) => *c,
        AxisValue::Coord(i, f) => f.value(q[*i]),
    }
}

/// The joints in an order in which every parent comes before its child (indices into
/// `model.joints`), or the name of a body no joint chain connects to ground.
pub fn joint_order(model: &Model) -> Result<Vec<usize>, usize> {
    let mut placed = vec![false; model.bodies.len()];
    placed[0] = true;
    let mut order = Vec::new();
    let mut done = vec![false; model.joints.len()];
    loop {
        let mut progress = false;
        for (k, j) in model.joints.iter().enumerate() {
            if !done[k] && placed[j.parent.body] {
                placed[j.child.body] = true;
                done[k] = true;
                order.push(k);
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    match placed.iter().position(|p| !p) {
        Some(b) => Err(b),
        None => Ok(order),
    }
}

/// The frame's pose, given its body's.
pub fn frame_pose(body: &Pose, f: &Frame) -> Pose {
    Pose { r: body.r * xyz(&f.orientation), o: body.point(&f.translation) }
}

/// Every body's pose at the coordinates `q`, bodies in model order.
pub fn poses(model: &Model, order: &[usize], q: &[f64]) -> Vec<Pose> {
    let mut out = vec![Pose::identity(); model.bodies.len()];
    for &k in order {
        let j = &model.joints[k];
        let f = frame_pose(&out[j.parent.body], &j.parent);
        let mut r_fm = Matrix3::identity();
        for a in &j.rotations {
            r_fm *= rot(&a.dir, axis_value(&a.value, q));
        }
        let mut p_fm = Vector3::zeros();
        for a in &j.translations {
            p_fm += Vector3::from(a.dir) * axis_value(&a.value, q);
        }
        let r_gm = f.r * r_fm;
        let o_m = f.o + f.r * p_fm;
        let r_gb = r_gm * xyz(&j.child.orientation).transpose();
        let o_b = o_m - r_gb * Vector3::from(j.child.translation);
        out[j.child.body] = Pose { r: r_gb, o: o_b };
    }
    out
}
