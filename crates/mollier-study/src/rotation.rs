//! Elementary rotations and the Euler decompositions of the Delft shoulder conventions: YZX for
//! clavicle and scapula, YZY for the humerus (pole angle, elevation, axial rotation).

use mollier_core::geometry::{Mat3, mat_mul, transpose};

/// The identity.
pub const IDENTITY: Mat3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Rotation by `t` (rad) about the x axis.
pub fn rx(t: f64) -> Mat3 {
    let (s, c) = t.sin_cos();
    [[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]]
}

/// Rotation by `t` (rad) about the y axis.
pub fn ry(t: f64) -> Mat3 {
    let (s, c) = t.sin_cos();
    [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]]
}

/// Rotation by `t` (rad) about the z axis.
pub fn rz(t: f64) -> Mat3 {
    let (s, c) = t.sin_cos();
    [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
}

/// Rotation by `t` (rad) about the unit vector `u` (Rodrigues).
pub fn about(u: &[f64; 3], t: f64) -> Mat3 {
    let (s, c) = t.sin_cos();
    let k = 1.0 - c;
    let [x, y, z] = *u;
    [
        [c + x * x * k, x * y * k - z * s, x * z * k + y * s],
        [y * x * k + z * s, c + y * y * k, y * z * k - x * s],
        [z * x * k - y * s, z * y * k + x * s, c + z * z * k],
    ]
}

/// `Ry(a[0]) Rz(a[1]) Rx(a[2])`.
pub fn yzx(a: &[f64; 3]) -> Mat3 {
    mat_mul(&mat_mul(&ry(a[0]), &rz(a[1])), &rx(a[2]))
}

/// `Ry(a[0]) Rz(a[1]) Ry(a[2])`: pole angle, elevation, axial rotation.
pub fn yzy(a: &[f64; 3]) -> Mat3 {
    mat_mul(&mat_mul(&ry(a[0]), &rz(a[1])), &ry(a[2]))
}

/// The angles `(y, z, x)` with `r = Ry(y) Rz(z) Rx(x)`, `z` in `[−π/2, π/2]` (DAS3's `rotyzx`).
pub fn to_yzx(r: &Mat3) -> [f64; 3] {
    let z = r[1][0].clamp(-1.0, 1.0).asin();
    let x = (-r[1][2]).atan2(r[1][1]);
    let y = (-r[2][0]).atan2(r[0][0]);
    [y, z, x]
}

/// The angles `(pole, elevation, axial)` with `r = Ry Rz Ry`, elevation in `[0, π]`; `None` in
/// gimbal lock (elevation within `1e-9` rad of 0 or π), where only their sum or difference is
/// defined.
pub fn to_yzy(r: &Mat3) -> Option<[f64; 3]> {
    let e = r[1][1].clamp(-1.0, 1.0).acos();
    if e.sin() < 1e-9 {
        return None;
    }
    Some([r[2][1].atan2(-r[0][1]), e, r[1][2].atan2(r[1][0])])
}

/// The angle (rad) of the rotation `aᵀ b`: how far apart two orientations are.
pub fn angle_between(a: &Mat3, b: &Mat3) -> f64 {
    let d = mat_mul(&transpose(a), b);
    ((d[0][0] + d[1][1] + d[2][2] - 1.0) / 2.0).clamp(-1.0, 1.0).acos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::geometry::{mat_vec, norm};

    fn close(a: &Mat3, b: &Mat3, tol: f64) -> bool {
        (0..3).all(|i| (0..3).all(|j| (a[i][j] - b[i][j]).abs() < tol))
    }

    #[test]
    fn elementary_rotations_are_right_handed() {
        // 90° about z takes x to y, about x takes y to z, about y takes z to x
        let q = std::f64::consts::FRAC_PI_2;
        let e = |v: [f64; 3], w: [f64; 3]| v.iter().zip(&w).all(|(a, b)| (a - b).abs() < 1e-15);
        assert!(e(mat_vec(&rz(q), &[1.0, 0.0, 0.0]), [0.0, 1.0, 0.0]));
        assert!(e(mat_vec(&rx(q), &[0.0, 1.0, 0.0]), [0.0, 0.0, 1.0]));
        assert!(e(mat_vec(&ry(q), &[0.0, 0.0, 1.0]), [1.0, 0.0, 0.0]));
        let u: [f64; 3] = [0.48, -0.6, 0.64];
        assert!((norm(&u) - 1.0).abs() < 1e-15);
        assert!(close(&about(&[0.0, 1.0, 0.0], 0.7), &ry(0.7), 1e-15));
        // the axis is fixed by the rotation
        assert!(e(mat_vec(&about(&u, 1.3), &u), u));
    }

    #[test]
    fn decompositions_round_trip() {
        for a in [[0.3, -0.4, 1.2], [-2.0, 1.1, -0.3], [3.0, -1.5, 0.2]] {
            let b = to_yzx(&yzx(&a));
            assert!(close(&yzx(&b), &yzx(&a), 1e-14));
            assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12), "{a:?} {b:?}");
        }
        for a in [[0.3, 0.4, 1.2], [-2.0, 2.9, -0.3], [3.0, 1.5, 0.2]] {
            let b = to_yzy(&yzy(&a)).unwrap();
            assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12), "{a:?} {b:?}");
        }
        // gimbal lock: only the sum of pole angle and axial rotation is defined
        assert!(to_yzy(&yzy(&[0.3, 0.0, 0.2])).is_none());
        assert!(to_yzy(&ry(0.5)).is_none());
    }
}
