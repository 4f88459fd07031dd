//! Shared set-up: an element between two orientation nodes placed at chosen joint angles.
#![allow(dead_code)]

use mollier_core::NodeId;
use mollier_core::element::ElementInfo;
use mollier_core::geometry::{
    Mat3, Quat, Vec3, cross, norm, quat_conjugate, quat_from_axis_angle, quat_from_rotation, quat_mul, scale,
};
use mollier_engin_joint::{BallSocketResistance, Interpolation, JointFrames, ResistanceLaw, shoulder};

/// The shoulder law with the element's defaults.
pub fn shoulder_law(interpolation: Interpolation) -> ResistanceLaw {
    ResistanceLaw::new(shoulder::swing_resistance(), shoulder::torsion(interpolation))
}

pub fn unit(v: Vec3) -> Vec3 {
    scale(1.0 / norm(&v), &v)
}

/// The matrix with columns x, y, z of the right-handed frame with `z ∥ z_axis`, x from `x_hint`.
pub fn frame_matrix(z_axis: Vec3, x_hint: Vec3) -> Mat3 {
    let z = unit(z_axis);
    let d = x_hint[0] * z[0] + x_hint[1] * z[1] + x_hint[2] * z[2];
    let x = unit([x_hint[0] - d * z[0], x_hint[1] - d * z[1], x_hint[2] - d * z[2]]);
    let y = cross(&z, &x);
    [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]]
}

/// Euler parameters of the swing `θ` at azimuth `φ` followed by the twist `ψ` (joint frame).
pub fn relative(theta: f64, phi: f64, psi: f64) -> Quat {
    let swing = quat_from_axis_angle(&[-phi.sin(), phi.cos(), 0.0], theta);
    quat_mul(&swing, &quat_from_axis_angle(&[0.0, 0.0, 1.0], psi))
}

/// An initialized element and what made it.
pub struct Setup {
    pub element: BallSocketResistance,
    pub frames: JointFrames,
    pub lf0: Quat,
    pub lm0: Quat,
    pub x0: Vec<f64>,
}

impl Setup {
    pub fn new(frames: JointFrames, lf0: Quat, lm0: Quat, law: ResistanceLaw) -> Self {
        let mut element = BallSocketResistance::new(NodeId::new(0), NodeId::new(1), frames, law);
        let x0: Vec<f64> = lf0.iter().chain(&lm0).copied().collect();
        element.initialize(&x0).unwrap();
        Self { element, frames, lf0, lm0, x0 }
    }

    /// Oblique frames, nodes turned arbitrarily, the moving member in a given joint posture.
    pub fn oblique(theta0: f64, phi0: f64, psi0: f64, law: ResistanceLaw) -> Self {
        let fixed_z = [0.3, -0.5, 0.8];
        let fixed_x = [1.0, 0.2, 0.1];
        let lf0 = quat_from_axis_angle(&[0.2, 0.9, -0.3], 0.8);
        let jf = frame_matrix(fixed_z, fixed_x);
        // the moving joint frame at the requested joint angles
        let jm = quat_mul(&quat_from_rotation(&jf), &relative(theta0, phi0, psi0));
        let r = mollier_core::geometry::rotation(&jm);
        let col = |j: usize| [r[0][j], r[1][j], r[2][j]];
        let frames = JointFrames { fixed_z, fixed_x, moving_z: col(2), moving_x: col(0) };
        let lm0 = quat_from_axis_angle(&[-0.6, 0.1, 0.7], 1.3);
        Self::new(frames, lf0, lm0, law)
    }

    /// Local coordinates with the fixed node at `lf` and the joint at `(θ, φ, ψ)`.
    pub fn config(&self, lf: Quat, theta: f64, phi: f64, psi: f64) -> Vec<f64> {
        let qf = quat_from_rotation(&frame_matrix(self.frames.fixed_z, self.frames.fixed_x));
        let qm = quat_from_rotation(&frame_matrix(self.frames.moving_z, self.frames.moving_x));
        // R(λ_m) R(λ_m0)ᵀ J_m = R(λ_f) R(λ_f0)ᵀ J_f R_rel
        let lm = [quat_conjugate(&self.lf0), qf, relative(theta, phi, psi), quat_conjugate(&qm), self.lm0]
            .iter()
            .fold(lf, |acc, q| quat_mul(&acc, q));
        lf.iter().chain(&lm).copied().collect()
    }
}

/// Engin's expansion written out in `p = θ cos φ`, `q = θ sin φ` (report eq. 3.3), N m.
pub fn engin_pq(p: f64, q: f64) -> f64 {
    let c = shoulder::MOMENT;
    c[0] * p.hypot(q)
        + c[1] * p
        + c[2] * q
        + c[3] * p * p
        + c[4] * p * q
        + c[5] * q * q
        + c[6] * p.powi(3)
        + c[7] * p * p * q
        + c[8] * p * q * q
        + c[9] * q.powi(3)
}
