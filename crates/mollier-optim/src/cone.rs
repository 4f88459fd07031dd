//! The elliptic joint cone and the stability index of Chadwick et al. (2014) eq. 9.
//!
//! A force `f = (f_x, f_y, f_z)` in the cone frame deviates from the cone axis (x) by the angle
//! `α = atan2(√(f_y² + f_z²), f_x)` in the azimuth `β = atan2(f_z, f_y)` from the y axis. Resolved
//! along the ellipse's axes, `θ = α cos β` and `φ = α sin β`; the index is
//! `(θ/θ_a)² + (φ/φ_a)² − 1` (<= 0 inside). The convex constraint imposed instead is the second
//! order cone `(f_y/tan θ_a)² + (f_z/tan φ_a)² <= f_x²`. With `w(y) = 1/atan²(1/√y)` concave, the
//! cone lies inside the index's region, with equality on the axes (see
//! `docs/theory/optimization.md`): a force in the cone has an index <= 0.

/// Deviation angles `(θ, φ)` (rad) of a cone-frame force from the cone axis, resolved along the
/// y and z axes; `None` for a zero or non-finite force.
pub fn deviation_angles(f: &[f64; 3]) -> Option<(f64, f64)> {
    if !f.iter().all(|v| v.is_finite()) {
        return None;
    }
    let lateral = f[1].hypot(f[2]);
    if lateral == 0.0 && f[0] == 0.0 {
        return None;
    }
    let alpha = lateral.atan2(f[0]);
    if lateral == 0.0 {
        // on the axis (α = 0) or straight out of the socket (α = π): azimuth 0, as atan2(0, 0)
        return Some((alpha, 0.0));
    }
    // α cos β = α f_y/|f_lat|: no atan2 round trip
    Some((alpha * f[1] / lateral, alpha * f[2] / lateral))
}

/// The stability index `(θ/θ_a)² + (φ/φ_a)² − 1` of Chadwick et al. (2014) eq. 9 for a cone-frame force `f`
/// (N) and half-angles `θ_a` (towards y), `φ_a` (towards z) in rad: −1 on the axis, 0 on the
/// rim, > 0 outside. `None` for a zero or non-finite force.
pub fn stability_index(f: &[f64; 3], half_angle_y: f64, half_angle_z: f64) -> Option<f64> {
    let (t, p) = deviation_angles(f)?;
    Some((t / half_angle_y).powi(2) + (p / half_angle_z).powi(2) - 1.0)
}

/// How far a cone-frame force is outside the second-order cone,
/// `‖(f_y/tan θ_a, f_z/tan φ_a)‖ − f_x` (N): <= 0 inside.
pub fn cone_violation(f: &[f64; 3], half_angle_y: f64, half_angle_z: f64) -> f64 {
    (f[1] / half_angle_y.tan()).hypot(f[2] / half_angle_z.tan()) - f[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_on_axes_and_rim() {
        let (ta, pa) = (0.7744, 0.6728);
        assert_eq!(stability_index(&[1.0, 0.0, 0.0], ta, pa), Some(-1.0));
        assert_eq!(stability_index(&[0.0; 3], ta, pa), None);
        assert_eq!(stability_index(&[f64::NAN, 0.0, 0.0], ta, pa), None);
        // on the y axis at angle θ_a: index 0
        let f = [ta.cos(), ta.sin(), 0.0];
        assert!(stability_index(&f, ta, pa).unwrap().abs() < 1e-15);
        let f = [pa.cos(), 0.0, -pa.sin()];
        assert!(stability_index(&f, ta, pa).unwrap().abs() < 1e-15);
        // pulling straight out: α = π
        let f = [-2.0, 0.0, 0.0];
        assert!((stability_index(&f, ta, pa).unwrap() - ((std::f64::consts::PI / ta).powi(2) - 1.0)).abs() < 1e-12);
    }

    #[test]
    fn violation_sign() {
        let (ta, pa) = (0.5, 0.3);
        assert!(cone_violation(&[1.0, 0.0, 0.0], ta, pa) < 0.0);
        assert!(cone_violation(&[1.0, ta.tan(), 0.0], ta, pa).abs() < 1e-15);
        assert!(cone_violation(&[1.0, 0.0, 1.01 * pa.tan()], ta, pa) > 0.0);
    }
}
