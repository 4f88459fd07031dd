//! The torsion moment `T(ψ)` (N m) about the moving member's long axis, from a measured table
//! (Engin's 38 points, report App. G: `APSI`, `MPSI`).
//!
//! Inside the table it is interpolated by a monotone piecewise cubic Hermite curve (Fritsch &
//! Carlson 1980), with the node slopes of Fritsch & Butland (1984) as in PCHIP (SciPy, MATLAB):
//! C1, exact at the nodes, monotone where the data are, flat where they are flat. Outside it is
//! continued by the tangent line at the end node, so `T` stays C1 and monotone. The report's own
//! program interpolated linearly and returned ±200 N m outside; [`Interpolation::Linear`]
//! reproduces its interpolation (with the end chords as continuation). The interpolation is
//! `mollier_joint_common`'s table ([`Table`]), shared with the other joint types' torque functions.

use mollier_core::scalar::Real;
use mollier_joint_common::torque::Table;

use crate::DataError;

pub use mollier_joint_common::Interpolation;

/// The torsion moment curve `T(ψ)`: the moment (N m) on the moving member about its long axis,
/// right-handed, at torsion angle `ψ` (rad).
#[derive(Clone, Debug, PartialEq)]
pub struct TorsionCurve {
    table: Table,
}

impl TorsionCurve {
    /// A curve through `(angles[i], moments[i])`: at least two points, angles (rad) strictly
    /// increasing, moments (N m) finite and non-increasing (a passive joint resists twist).
    pub fn new(angles: Vec<f64>, moments: Vec<f64>, interpolation: Interpolation) -> Result<Self, DataError> {
        let n = angles.len();
        if n < 2 || moments.len() != n {
            return Err(DataError::Torsion {
                name: "torsion_moments",
                message: format!("needs at least two points, one per angle ({n} angles, {} moments)", moments.len()),
            });
        }
        if let Some(v) = angles.iter().find(|v| !v.is_finite()) {
            return Err(DataError::Torsion { name: "torsion_angles", message: format!("non-finite angle {v}") });
        }
        if let Some(v) = moments.iter().find(|v| !v.is_finite()) {
            return Err(DataError::Torsion { name: "torsion_moments", message: format!("non-finite moment {v}") });
        }
        if let Some(i) = (1..n).find(|&i| !(angles[i] > angles[i - 1])) {
            return Err(DataError::Torsion {
                name: "torsion_angles",
                message: format!("must increase strictly: angle {i} ({}) follows {}", angles[i], angles[i - 1]),
            });
        }
        if let Some(i) = (1..n).find(|&i| moments[i] > moments[i - 1]) {
            return Err(DataError::Torsion {
                name: "torsion_moments",
                message: format!(
                    "must not increase with the angle (the moment resists the twist): {} at {} after {} at {}",
                    moments[i],
                    angles[i],
                    moments[i - 1],
                    angles[i - 1]
                ),
            });
        }
        // validated above, so the table accepts it
        let table = Table::new(angles, moments, interpolation)
            .map_err(|message| DataError::Torsion { name: "torsion_angles", message })?;
        Ok(Self { table })
    }

    /// The table's angles (rad).
    pub fn angles(&self) -> &[f64] {
        self.table.abscissae()
    }

    /// The table's moments (N m).
    pub fn moments(&self) -> &[f64] {
        self.table.moments()
    }

    /// The interpolation in use.
    pub fn interpolation(&self) -> Interpolation {
        self.table.interpolation()
    }

    /// `T(ψ)`, N m.
    pub fn moment(&self, psi: f64) -> f64 {
        self.moment_and_slope(psi).0
    }

    /// `T(ψ)` and `dT/dψ` (N m, N m/rad); at a node of the linear curve, the slope on the right.
    pub fn moment_and_slope(&self, psi: f64) -> (f64, f64) {
        self.table.eval(psi)
    }

    /// `T(ψ)` over any [`Real`], exact through second derivatives (the table's
    /// [`Table::apply`]).
    pub fn moment_at<T: Real>(&self, psi: T) -> T {
        self.table.apply(psi)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shoulder::{TORSION_ANGLES, TORSION_MOMENTS};

    fn shoulder(i: Interpolation) -> TorsionCurve {
        TorsionCurve::new(TORSION_ANGLES.to_vec(), TORSION_MOMENTS.to_vec(), i).unwrap()
    }

    #[test]
    fn exact_at_the_nodes_c1_and_monotone_between() {
        let c = shoulder(Interpolation::MonotoneCubic);
        let (a, m) = (TORSION_ANGLES, TORSION_MOMENTS);
        for i in 0..a.len() {
            assert!((c.moment(a[i]) - m[i]).abs() < 1e-12, "node {i}");
            // the slope is continuous through the node
            let h = 1e-9;
            let (l, r) = (c.moment_and_slope(a[i] - h).1, c.moment_and_slope(a[i] + h).1);
            assert!((l - r).abs() < 1e-4 * (1.0 + l.abs()), "node {i}: {l} {r}");
        }
        for i in 0..a.len() - 1 {
            let mut prev = m[i];
            for j in 1..=50 {
                let v = c.moment(a[i] + (a[i + 1] - a[i]) * j as f64 / 50.0);
                assert!(v <= prev + 1e-12 && v >= m[i + 1] - 1e-12, "segment {i}");
                prev = v;
            }
            // flat data stay flat (3.3 N m from −1.000 to −0.651; 2.7 N m from −0.349 to 0)
            if m[i] == m[i + 1] {
                assert!((c.moment(0.5 * (a[i] + a[i + 1])) - m[i]).abs() < 1e-12);
            }
        }
    }

    #[test]
    fn slopes_match_central_differences_and_extrapolation_is_the_end_tangent() {
        let c = shoulder(Interpolation::MonotoneCubic);
        let h = 1e-7;
        for k in 0..400 {
            let psi = -2.5 + 0.009 * k as f64;
            let (_, d) = c.moment_and_slope(psi);
            let fd = (c.moment(psi + h) - c.moment(psi - h)) / (2.0 * h);
            assert!((d - fd).abs() < 1e-5 * (1.0 + d.abs()), "{psi}: {d} {fd}");
        }
        let (m0, s0) = c.moment_and_slope(-2.094);
        assert!((c.moment(-2.3) - (m0 + s0 * (-2.3 + 2.094))).abs() < 1e-12);
        assert!(c.moment(-2.3) > 78.9 && c.moment(1.2) < -82.6 && s0 < 0.0);
    }

    #[test]
    fn two_points_give_a_straight_line_and_bad_tables_are_rejected() {
        let c = TorsionCurve::new(vec![-1.0, 1.0], vec![10.0, -10.0], Interpolation::MonotoneCubic).unwrap();
        for psi in [-3.0, -0.4, 0.0, 0.7, 2.0] {
            assert!((c.moment(psi) + 10.0 * psi).abs() < 1e-12);
        }
        let err = |a: Vec<f64>, m: Vec<f64>| TorsionCurve::new(a, m, Interpolation::Linear).is_err();
        assert!(err(vec![0.0], vec![1.0]));
        assert!(err(vec![0.0, 1.0], vec![1.0]));
        assert!(err(vec![0.0, 0.0], vec![1.0, 0.0]));
        assert!(err(vec![0.0, 1.0], vec![1.0, 2.0]));
        assert!(err(vec![0.0, f64::NAN], vec![1.0, 0.0]));
        assert_eq!(Interpolation::from_name("linear"), Some(Interpolation::Linear));
        assert_eq!(Interpolation::from_name("cubic"), None);
        // NaN in, NaN out: no panic
        assert!(shoulder(Interpolation::MonotoneCubic).moment(f64::NAN).is_nan());
    }
}
