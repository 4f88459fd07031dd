//! The torsion moment `T(ψ)` (N m) about the moving member's long axis, from a measured table
//! (Engin's 38 points, report App. G: `APSI`, `MPSI`).
//!
//! Inside the table it is interpolated by a monotone piecewise cubic Hermite curve (Fritsch &
//! Carlson 1980), with the node slopes of Fritsch & Butland (1984) as in PCHIP (SciPy, MATLAB):
//! C1, exact at the nodes, monotone where the data are, flat where they are flat. Outside it is
//! continued by the tangent line at the end node, so `T` stays C1 and monotone. The report's own
//! program interpolated linearly and returned ±200 N m outside; [`Interpolation::Linear`]
//! reproduces its interpolation (with the end chords as continuation).

use crate::DataError;

/// How the table is interpolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Monotone piecewise cubic Hermite (Fritsch–Carlson, PCHIP slopes): C1.
    MonotoneCubic,
    /// Piecewise linear, as the report's program: C0.
    Linear,
}

impl Interpolation {
    /// The name used in model files.
    pub const fn name(self) -> &'static str {
        match self {
            Interpolation::MonotoneCubic => "monotone-cubic",
            Interpolation::Linear => "linear",
        }
    }

    /// The variant called `name` in model files.
    pub fn from_name(name: &str) -> Option<Self> {
        [Interpolation::MonotoneCubic, Interpolation::Linear].into_iter().find(|i| i.name() == name)
    }
}

/// The torsion moment curve `T(ψ)`: the moment (N m) on the moving member about its long axis,
/// right-handed, at torsion angle `ψ` (rad).
#[derive(Clone, Debug, PartialEq)]
pub struct TorsionCurve {
    angles: Vec<f64>,
    moments: Vec<f64>,
    /// Node slopes (N m/rad): the Hermite slopes, or the end chords for linear interpolation.
    slopes: Vec<f64>,
    interpolation: Interpolation,
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
        let slopes = match interpolation {
            Interpolation::MonotoneCubic => pchip_slopes(&angles, &moments),
            Interpolation::Linear => {
                let chord = |i: usize| (moments[i + 1] - moments[i]) / (angles[i + 1] - angles[i]);
                let mut s = vec![0.0; n];
                s[0] = chord(0);
                s[n - 1] = chord(n - 2);
                s
            }
        };
        Ok(Self { angles, moments, slopes, interpolation })
    }

    /// The table's angles (rad).
    pub fn angles(&self) -> &[f64] {
        &self.angles
    }

    /// The table's moments (N m).
    pub fn moments(&self) -> &[f64] {
        &self.moments
    }

    /// The interpolation in use.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// `T(ψ)`, N m.
    pub fn moment(&self, psi: f64) -> f64 {
        self.moment_and_slope(psi).0
    }

    /// `T(ψ)` and `dT/dψ` (N m, N m/rad); at a node of the linear curve, the slope on the right.
    pub fn moment_and_slope(&self, psi: f64) -> (f64, f64) {
        let (a, m, s) = (&self.angles, &self.moments, &self.slopes);
        let n = a.len();
        if psi < a[0] {
            return (m[0] + s[0] * (psi - a[0]), s[0]);
        }
        if psi > a[n - 1] {
            return (m[n - 1] + s[n - 1] * (psi - a[n - 1]), s[n - 1]);
        }
        let i = a.partition_point(|&x| x <= psi).saturating_sub(1).min(n - 2);
        let h = a[i + 1] - a[i];
        let t = (psi - a[i]) / h;
        match self.interpolation {
            Interpolation::Linear => {
                let d = (m[i + 1] - m[i]) / h;
                (m[i] + d * (psi - a[i]), d)
            }
            Interpolation::MonotoneCubic => {
                let (t2, t3) = (t * t, t * t * t);
                let v = (2.0 * t3 - 3.0 * t2 + 1.0) * m[i]
                    + (t3 - 2.0 * t2 + t) * h * s[i]
                    + (3.0 * t2 - 2.0 * t3) * m[i + 1]
                    + (t3 - t2) * h * s[i + 1];
                let d = (6.0 * t2 - 6.0 * t) * (m[i] - m[i + 1]) / h
                    + (3.0 * t2 - 4.0 * t + 1.0) * s[i]
                    + (3.0 * t2 - 2.0 * t) * s[i + 1];
                (v, d)
            }
        }
    }
}

/// PCHIP node slopes: the weighted harmonic mean of the adjacent chords where they agree in sign,
/// zero where the data turn or are flat, and the shape-preserving three-point formula at the
/// ends (Fritsch & Butland 1984; Moler, *Numerical Computing with MATLAB*, §3.4).
fn pchip_slopes(x: &[f64], y: &[f64]) -> Vec<f64> {
    let n = x.len();
    let h: Vec<f64> = (0..n - 1).map(|i| x[i + 1] - x[i]).collect();
    let d: Vec<f64> = (0..n - 1).map(|i| (y[i + 1] - y[i]) / h[i]).collect();
    if n == 2 {
        return vec![d[0]; 2];
    }
    let mut s = vec![0.0; n];
    for k in 1..n - 1 {
        if d[k - 1] * d[k] > 0.0 {
            let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
            s[k] = (w1 + w2) / (w1 / d[k - 1] + w2 / d[k]);
        }
    }
    let end = |h0: f64, h1: f64, d0: f64, d1: f64| {
        let m = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
        if m * d0 <= 0.0 {
            0.0
        } else if d0 * d1 <= 0.0 && m.abs() > 3.0 * d0.abs() {
            3.0 * d0
        } else {
            m
        }
    };
    s[0] = end(h[0], h[1], d[0], d[1]);
    s[n - 1] = end(h[n - 2], h[n - 3], d[n - 2], d[n - 3]);
    s
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
