//! The scapulohumeral rhythm of de Groot & Brand (2001), as implemented in DAS3's
//! `estimate_shoulder_angles` (dasproject/DAS3), turned into the generalized coordinates of the
//! Delft shoulder model (van der Helm 1994, "Input variables").
//!
//! From the humerus's pole angle `φ` and elevation `θ` relative to the thorax (its YZY angles;
//! the axial rotation does not enter), a linear regression gives the clavicle's rotations about
//! thorax Y and z' and the scapula's about Y, z', x'' (YZX), each also a function of the rest
//! angles `C0`, `S0` of the Delft Shoulder and Elbow Model (A.H. de Groot and R. Brand, "A
//! three-dimensional regression model of the shoulder rhythm", Clin Biomech 16(9):735-743,
//! 2001; coefficients as in DAS3). The clavicle's axial rotation, which the palpation data do not
//! contain, is set by DAS3's `axclav`: the rotation about the clavicle's own x axis that keeps
//! the clavicle-scapula relation closest to the rest relation (the sum of the angles between
//! corresponding axes of the scapula and of the scapula carried along rigidly with the clavicle
//! from rest, minimised).
//!
//! The seed's model takes the landmark coordinates `AC.y`, `AC.z` and `TS.x` of that posture,
//! computed "omitting the thorax constraints", as inputs and lets the model place the scapula on
//! the thorax ([`Landmarks::coordinates`]).

use mollier_core::geometry::{Mat3, Vec3, add, mat_mul, mat_vec, transpose};

use crate::rotation::{rx, ry, rz, to_yzx, yzx, yzy};

const DEG: f64 = std::f64::consts::PI / 180.0;

/// The humerothoracic elevations (deg) the regression is trusted over: its data are 23 supported
/// humerus postures of 10 subjects (de Groot & Brand 2001, abstract). The paper's exact range is
/// not among the project's sources; 120° is where, in this model, the extrapolated girdle leaves
/// anatomy (AC 110 mm medial, the clavicle retracted 42° more, muscle lengths 0.24 to 2.2 optimal
/// at 179°; docs/shoulder.md). A study past it warns.
pub const DATA_ELEVATION_DEG: [f64; 2] = [0.0, 120.0];

/// Rest angles of the clavicle (YZ, plus the axial X) and the scapula (YZX) in the thorax frame,
/// rad: DSEM's, as in DAS3's `estimate_shoulder_angles` (`C0`, `S0`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RestAngles {
    /// Clavicle `[y, z, x]` (rad).
    pub clavicle: [f64; 3],
    /// Scapula `[y, z, x]` (rad).
    pub scapula: [f64; 3],
}

impl Default for RestAngles {
    fn default() -> Self {
        Self {
            clavicle: [-2.8573324e1 * DEG, 1.1679804e1 * DEG, 7.4820950 * DEG],
            scapula: [3.2047376e1 * DEG, 1.0669100e1 * DEG, -1.0320259e1 * DEG],
        }
    }
}

/// The orientations of the bones relative to the thorax for one posture (DAS3's bone frames).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Posture {
    /// Thorax-to-clavicle rotation.
    pub clavicle: Mat3,
    /// Thorax-to-scapula rotation.
    pub scapula: Mat3,
    /// Thorax-to-humerus rotation `Ry(φ) Rz(θ) Ry(ψ)`.
    pub humerus: Mat3,
    /// The clavicle's axial rotation chosen by `axclav` (rad, about its x axis, relative to the
    /// rest clavicle turned by the regression's y and z angles).
    pub clavicle_axial: f64,
}

/// The regression: clavicle `[y, z]` and scapula `[y, z, x]` angles (rad) in the thorax frame for
/// a humerus pole angle and elevation (rad).
pub fn regression(rest: &RestAngles, pole: f64, elevation: f64) -> ([f64; 2], [f64; 3]) {
    let (c0, s0) = (rest.clavicle.map(|a| a / DEG), rest.scapula.map(|a| a / DEG));
    let (hy, hz) = (pole / DEG, elevation / DEG);
    let cy = -4.983 + 0.120 * hy - 0.242 * hz + 0.851 * c0[0];
    let cz = 3.917 - 0.046 * hy + 0.123 * hz + 0.493 * c0[1];
    let sy = -1.203 + 0.140 * hy - 0.049 * hz + 0.901 * s0[0];
    let sz = 3.095 - 0.079 * hy + 0.396 * hz + 0.414 * s0[1];
    let sx = 0.659 - 0.028 * hy + 0.184 * hz + 0.886 * s0[2];
    ([cy * DEG, cz * DEG], [sy * DEG, sz * DEG, sx * DEG])
}

/// `axclav`'s criterion: the sum of the angles between the axes of the scapula `s` and of the
/// rest scapula carried by the clavicle `c` (rad).
pub fn axclav_error(rest: &RestAngles, c: &Mat3, s: &Mat3) -> f64 {
    let mp = mat_mul(&transpose(&yzx(&rest.clavicle)), &yzx(&rest.scapula));
    let e = mat_mul(&transpose(&mat_mul(c, &mp)), s);
    (0..3).map(|i| e[i][i].clamp(-1.0, 1.0).acos()).sum()
}

/// DAS3's `axclav`: the clavicle `c` turned about its own x axis to the axial rotation that
/// minimises [`axclav_error`] for the scapula `s`; returns the clavicle and the angle (rad).
///
/// DAS3 searches with a damped secant iteration stopped when the squared error changes by less
/// than 0.001; here a scan of the half circle (0.25° steps) and a golden-section refinement find
/// the same minimum to machine precision.
pub fn axclav(rest: &RestAngles, c: &Mat3, s: &Mat3) -> (Mat3, f64) {
    let co = yzx(&rest.clavicle);
    let [b, g, _] = to_yzx(&mat_mul(&transpose(&co), c));
    let ma = mat_mul(&mat_mul(&co, &ry(b)), &rz(g));
    let err = |a: f64| axclav_error(rest, &mat_mul(&ma, &rx(a)), s);
    let n = 720;
    let step = std::f64::consts::PI / n as f64;
    let mut best = -std::f64::consts::FRAC_PI_2;
    let mut best_e = err(best);
    for k in 1..=n {
        let a = -std::f64::consts::FRAC_PI_2 + step * k as f64;
        let e = err(a);
        if e < best_e {
            (best, best_e) = (a, e);
        }
    }
    let (mut lo, mut hi) = (best - step, best + step);
    let g = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..80 {
        let (c1, c2) = (hi - g * (hi - lo), lo + g * (hi - lo));
        if err(c1) < err(c2) {
            hi = c2;
        } else {
            lo = c1;
        }
    }
    let a = 0.5 * (lo + hi);
    (mat_mul(&ma, &rx(a)), a)
}

/// The posture of the rhythm for a humerus pole angle, elevation and axial rotation (rad).
pub fn posture(rest: &RestAngles, pole: f64, elevation: f64, axial: f64) -> Posture {
    let ([cy, cz], s) = regression(rest, pole, elevation);
    let scapula = yzx(&s);
    let (clavicle, clavicle_axial) = axclav(rest, &yzx(&[cy, cz, 0.0]), &scapula);
    Posture { clavicle, scapula, humerus: yzy(&[pole, elevation, axial]), clavicle_axial }
}

/// The bone geometry the rhythm's landmarks are computed from (m, body frames as DAS3's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Landmarks {
    /// The sternoclavicular joint centre in the thorax (global) frame.
    pub sc: Vec3,
    /// The acromioclavicular joint centre in the clavicle frame (from SC).
    pub ac: Vec3,
    /// Trigonum spinae in the scapula frame (from AC).
    pub ts: Vec3,
}

/// The landmark coordinates of a posture: `AC` and `TS` in the thorax frame (m).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LandmarkPositions {
    /// The acromioclavicular joint centre.
    pub ac: Vec3,
    /// Trigonum spinae.
    pub ts: Vec3,
}

impl Landmarks {
    /// `AC = SC + R_clavicle ac`, `TS = AC + R_scapula ts`: the landmarks of the posture with
    /// the thorax constraints omitted.
    pub fn positions(&self, p: &Posture) -> LandmarkPositions {
        let ac = add(&self.sc, &mat_vec(&p.clavicle, &self.ac));
        let ts = add(&ac, &mat_vec(&p.scapula, &self.ts));
        LandmarkPositions { ac, ts }
    }

    /// The seed's generalized coordinates of the shoulder girdle: `[AC.y, AC.z, TS.x]` (m).
    pub fn coordinates(&self, p: &Posture) -> [f64; 3] {
        let l = self.positions(p);
        [l.ac[1], l.ac[2], l.ts[0]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rotation::angle_between;

    #[test]
    fn regression_matches_the_published_coefficients() {
        // at rest (φ = θ = 0) each angle is intercept + slope·rest angle, by hand from DAS3's
        // estimate_shoulder_angles: Cy = −4.983 + 0.851·(−28.573324) = −29.298899 deg, ...
        // (the published table of de Groot & Brand 2001 is not among the project's sources: these
        // are DAS3's copy of it, and remain to be checked against the paper)
        let rest = RestAngles::default();
        let ([cy, cz], [sy, sz, sx]) = regression(&rest, 0.0, 0.0);
        let want = [-29.298_899, 9.675_143, 27.671_686, 7.512_007, -8.484_749];
        for (got, want) in [cy, cz, sy, sz, sx].iter().zip(want) {
            assert!((got / DEG - want).abs() < 1e-5, "{} vs {want}", got / DEG);
        }
        // slopes: 90° of elevation adds −0.242·90 to Cy and 0.396·90 to Sz; 90° of pole angle
        // adds 0.140·90 to Sy
        let ([cy90, _], [_, sz90, _]) = regression(&rest, 0.0, 90.0 * DEG);
        assert!(((cy90 - cy) / DEG + 0.242 * 90.0).abs() < 1e-9);
        assert!(((sz90 - sz) / DEG - 0.396 * 90.0).abs() < 1e-9);
        let (_, [sy90, _, _]) = regression(&rest, 90.0 * DEG, 0.0);
        assert!(((sy90 - sy) / DEG - 0.140 * 90.0).abs() < 1e-9);
    }

    #[test]
    fn axclav_minimises_its_criterion_and_keeps_the_clavicle_axis() {
        let rest = RestAngles::default();
        for elevation in [0.0, 45.0, 90.0, 150.0] {
            let ([cy, cz], s) = regression(&rest, 0.0, elevation * DEG);
            let c = yzx(&[cy, cz, 0.0]);
            let s = yzx(&s);
            let (cn, a) = axclav(&rest, &c, &s);
            // only the axial rotation changes: the x axis (the clavicle's long axis) stays
            for i in 0..3 {
                assert!((cn[i][0] - c[i][0]).abs() < 1e-12);
            }
            // a minimum: turning further either way is worse
            let e = axclav_error(&rest, &cn, &s);
            for d in [-1e-3, 1e-3, -0.05, 0.05] {
                assert!(axclav_error(&rest, &mat_mul(&cn, &rx(d)), &s) > e, "elevation {elevation}, d {d}");
            }
            assert!(a.abs() < std::f64::consts::FRAC_PI_2);
        }
        // at rest with the rest scapula the rest clavicle is the minimiser: zero error
        let (cn, _) = axclav(&rest, &yzx(&[rest.clavicle[0], rest.clavicle[1], 0.0]), &yzx(&rest.scapula));
        assert!(angle_between(&cn, &yzx(&rest.clavicle)) < 1e-9);
        assert!(axclav_error(&rest, &cn, &yzx(&rest.scapula)) < 1e-6);
    }

    #[test]
    fn landmarks_follow_the_bones() {
        let l = Landmarks { sc: [0.001, -0.015, 0.003], ac: [0.2, 0.0, 0.03], ts: [-0.13, -0.02, -0.03] };
        let rest = RestAngles::default();
        let p = posture(&rest, 0.0, 0.0, 0.0);
        let pos = l.positions(&p);
        // the clavicle's length is kept
        let d = [pos.ac[0] - l.sc[0], pos.ac[1] - l.sc[1], pos.ac[2] - l.sc[2]];
        let len = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        assert!((len - (0.2f64.powi(2) + 0.03f64.powi(2)).sqrt()).abs() < 1e-15);
        // elevating the arm raises AC (the clavicle elevates) and moves TS laterally (the
        // scapula rotates laterally)
        let up = l.coordinates(&posture(&rest, 0.0, 120.0 * DEG, 0.0));
        let down = l.coordinates(&p);
        assert!(up[0] > down[0] + 0.01, "AC.y {down:?} -> {up:?}");
        assert_eq!(p.humerus, crate::rotation::IDENTITY);
    }
}
