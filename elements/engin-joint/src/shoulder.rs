//! Engin's data for the human shoulder complex (thorax–humerus), as listed in the Fortran program
//! "Shoulderjoint" of the graduation report *Human Joint Modelling* (Delft, c. 1991, App. G):
//! subject-based sample means over ten subjects (Engin & Chen 1986-1987). The same values ship as
//! the model-file example `models/joints/engin-shoulder.toml`; the element reads them from the
//! model file, never from here.

use std::f64::consts::PI;

use crate::expansion::{MomentExpansion, SinusBoundary};
use crate::resistance::SwingResistance;
use crate::torsion::{Interpolation, TorsionCurve};

/// Maximal voluntary sinus `CF(1..10)` (rad), eq. 3.1/4.1; also Table D.1, sample mean.
pub const SINUS: [f64; 10] =
    [1.49936, -0.09257, -0.24640, -0.29356, 0.18743, 0.58589, 0.45557, 0.00899, -0.42918, -0.47066];

/// Resistive moment expansion `C(1..10)` (N m/rad^k), eq. 3.2; Table E.1, sample mean.
pub const MOMENT: [f64; 10] =
    [-21.49310, -2.03660, 2.21320, 19.60600, 5.15610, 15.78320, -1.36790, -4.13520, 0.21110, -0.60590];

/// Torsion angles `APSI(1..38)` (rad); `ψ = 0` is the arm rotated 45° internally (App. F, Fig. F.20).
pub const TORSION_ANGLES: [f64; 38] = [
    -2.094, -2.064, -1.955, -1.915, -1.866, -1.780, -1.705, -1.628, -1.490, -1.349, -1.176, -1.000, -0.813, -0.651,
    -0.499, -0.349, -0.224, -0.140, -0.060, 0.0, 0.156, 0.279, 0.401, 0.539, 0.628, 0.658, 0.757, 0.791, 0.868, 0.928,
    0.955, 0.993, 1.023, 1.047, 1.071, 1.094, 1.137, 1.167,
];

/// Torsion moments `MPSI(1..38)` (N m) at [`TORSION_ANGLES`].
pub const TORSION_MOMENTS: [f64; 38] = [
    78.9, 40.0, 24.0, 19.5, 15.3, 12.9, 10.5, 9.3, 6.4, 6.0, 3.9, 3.3, 3.3, 3.3, 3.0, 2.7, 2.7, 2.7, 2.7, 2.7, 0.0,
    -2.0, -3.3, -5.4, -6.7, -8.8, -11.4, -14.7, -16.4, -20.5, -24.0, -25.4, -28.8, -32.0, -34.7, -37.3, -50.0, -82.6,
];

/// The lowest moment contour Engin measured (N m): the ramp from the sinus ends there.
pub const LOWEST_CONTOUR: f64 = 6.0;

/// Mean joint axis `(φ_n, θ_n)` of the fixed (torso) joint frame in Engin's torso-fixed axes
/// (deg), Table 3.2 sample means; the frame is `Rz(φ_n) Ry(θ_n)` (App. C).
pub const MEAN_JOINT_AXIS_DEG: (f64, f64) = (59.29, 79.08);

/// The swing resistance with these data and the element's defaults.
pub fn swing_resistance() -> SwingResistance {
    SwingResistance::new(
        SinusBoundary::new(SINUS),
        MomentExpansion::new(MOMENT),
        LOWEST_CONTOUR,
        crate::DEFAULT_MIN_RAMP_WIDTH,
        PI,
    )
    .expect("Engin's shoulder data pass the checks")
}

/// The torsion curve with these data.
pub fn torsion(interpolation: Interpolation) -> TorsionCurve {
    TorsionCurve::new(TORSION_ANGLES.to_vec(), TORSION_MOMENTS.to_vec(), interpolation)
        .expect("Engin's torsion table is increasing in ψ and non-increasing in moment")
}
