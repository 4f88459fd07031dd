//! The magnitude `M(φ, θ)` (N m) of the passive swing moment: zero inside the joint sinus, Engin's
//! expansion `f` from its lowest measured contour outward, and a C1 ramp in between.
//!
//! Along each ray `φ` (see `docs/theory/engin-joint.md`):
//! ```text
//! θ_b  sinus boundary              θ_c  first θ > 0 with F(θ) = M_c (the lowest contour, 6 N m)
//! W    = stretch(θ_c − θ_b)        ramp width: θ_c − θ_b when that is ≥ 5w/4; never below w
//! t    = (θ − θ_b) / W
//! M    = 0            t ≤ 0
//!        F(θ) S(t)    0 < t < 1,   S(t) = 3t² − 2t³
//!        F(θ)         t ≥ 1
//! ```
//! `F` is `f` up to `θ_max` and its tangent line beyond. Because `S(0) = S'(0) = S'(1) = 0` and
//! `S(1) = 1`, `M` and its gradient are continuous at the sinus and at the end of the ramp, and
//! `M` rises monotonically where `F > 0` and `F' ≥ 0` (checked when the data are loaded).

use std::f64::consts::PI;

use mollier_core::scalar::{Real, c as lift};

use crate::DataError;
use crate::expansion::{MomentExpansion, Ray, SinusBoundary};

/// Rays sampled when the data are checked (every 0.5°).
const CHECK_RAYS: usize = 720;
/// Points per ray sampled when the data are checked, from the sinus to θ = π.
const CHECK_POINTS: usize = 256;

/// `M` and its partial derivatives at one point.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Magnitude<T = f64> {
    /// `M`, N m.
    pub value: T,
    /// `∂M/∂θ`, N m/rad.
    pub d_theta: T,
    /// `∂M/∂φ`, N m/rad.
    pub d_phi: T,
}

/// Where the ramp lies on one ray.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RampGeometry {
    /// Sinus boundary `θ_b`, rad.
    pub sinus: f64,
    /// The lowest contour `θ_c` (where `F` first reaches `M_c`), rad.
    pub contour: f64,
    /// Ramp width `W`, rad; the ramp ends at `θ_b + W`, where `M` joins `F`.
    pub width: f64,
}

/// The swing part of the passive joint resistance.
#[derive(Clone, Debug, PartialEq)]
pub struct SwingResistance {
    sinus: SinusBoundary,
    expansion: MomentExpansion,
    contour_moment: f64,
    min_width: f64,
    theta_max: f64,
}

impl SwingResistance {
    /// The swing resistance from the sinus expansion, the moment expansion, the moment of the
    /// lowest measured contour `contour_moment` (N m; 6 for Engin's data), the minimum ramp width
    /// `min_width` (rad) and `theta_max` (rad, in `(0, π]`), beyond which `f` is continued by its
    /// tangent line.
    ///
    /// Fails unless, on every ray sampled at 0.5° steps, the sinus lies in `(0, π)`, `F`
    /// reaches the contour moment before `θ = π`, and `M` rises strictly from the sinus to
    /// `θ = π` (the data then give a restoring moment everywhere).
    pub fn new(
        sinus: SinusBoundary,
        expansion: MomentExpansion,
        contour_moment: f64,
        min_width: f64,
        theta_max: f64,
    ) -> Result<Self, DataError> {
        if !(contour_moment > 0.0) || !contour_moment.is_finite() {
            return Err(DataError::Parameter {
                name: "lowest_contour",
                message: format!("must be positive, found {contour_moment}"),
            });
        }
        if !(min_width > 0.0) || !min_width.is_finite() {
            return Err(DataError::Parameter {
                name: "min_ramp_width",
                message: format!("must be positive, found {min_width}"),
            });
        }
        if !(theta_max > 0.0 && theta_max <= PI) {
            return Err(DataError::Parameter {
                name: "theta_max",
                message: format!("must lie in (0, π], found {theta_max}"),
            });
        }
        let r = Self { sinus, expansion, contour_moment, min_width, theta_max };
        r.check()?;
        Ok(r)
    }

    fn check(&self) -> Result<(), DataError> {
        for k in 0..CHECK_RAYS {
            let phi = 2.0 * PI * k as f64 / CHECK_RAYS as f64;
            let tb = self.sinus.theta(phi);
            if !(tb > 0.0 && tb < PI) {
                return Err(DataError::Sinus { phi, theta: tb });
            }
            let ray = self.expansion.ray(phi);
            if !self.contour_on(&ray).is_some_and(|t| t < PI) {
                return Err(DataError::NoContour { phi, moment: self.contour_moment });
            }
            let mut previous = 0.0;
            for j in 1..=CHECK_POINTS {
                let theta = tb + (PI - tb) * j as f64 / CHECK_POINTS as f64;
                let m = self.magnitude(phi, theta).value;
                if !(m > previous) {
                    return Err(DataError::NotIncreasing { phi, theta });
                }
                previous = m;
            }
        }
        Ok(())
    }

    /// The sinus boundary.
    pub fn sinus(&self) -> &SinusBoundary {
        &self.sinus
    }

    /// The moment expansion.
    pub fn expansion(&self) -> &MomentExpansion {
        &self.expansion
    }

    /// Moment of the lowest measured contour, where the ramp joins `f` (N m).
    pub fn contour_moment(&self) -> f64 {
        self.contour_moment
    }

    /// `F` on a ray: `f` up to `θ_max`, its tangent line beyond. Returns `(F, ∂F/∂θ, ∂F/∂φ)`.
    fn extended<T: Real>(&self, ray: &Ray<T>, theta: T) -> (T, T, T) {
        let tm = self.theta_max;
        if theta.re() <= tm {
            (ray.value(theta), ray.d_theta(theta), ray.d_phi(theta))
        } else {
            let (d, tm) = (theta - tm, lift::<T>(tm));
            (ray.value(tm) + ray.d_theta(tm) * d, ray.d_theta(tm), ray.d_phi(tm) + ray.d_theta_phi(tm) * d)
        }
    }

    /// The first `θ > 0` where `F` reaches the contour moment, if it does.
    fn contour_on(&self, ray: &Ray) -> Option<f64> {
        let target = self.contour_moment;
        // F(0) = 0 < target; between stationary points F is monotone, so the first interval
        // whose right end reaches the target holds exactly one crossing
        let mut ends: Vec<f64> =
            ray.stationary_points().into_iter().filter(|&t| t > 0.0 && t < self.theta_max).collect();
        ends.push(self.theta_max);
        let mut lo = 0.0;
        for hi in ends {
            if ray.value(hi) >= target {
                return Some(bracketed_root(|t| (ray.value(t) - target, ray.d_theta(t)), lo, hi));
            }
            lo = hi;
        }
        let (fm, dm) = (ray.value(self.theta_max), ray.d_theta(self.theta_max));
        (dm > 0.0).then(|| self.theta_max + (target - fm) / dm)
    }

    /// Where the ramp lies on the ray of azimuth `φ`: `[θ_b, θ_c, W]`, with the `φ`-derivatives
    /// of `θ_b` and `W`. Over dual numbers `θ_c(φ)` is the root's value with the derivative parts
    /// of three Newton steps on `F(θ_c, φ) = M_c` (each doubles their order: exact to rounding
    /// through the seventh), the value left as found.
    fn geometry<T: Real>(&self, phi: T, ray: &Ray<T>) -> ([T; 3], T, T) {
        let (tb, dtb) = self.sinus.theta_and_slope_at(phi);
        let w = self.min_width;
        let plain = Ray { a: ray.a.map(|v| v.re()), da: ray.da.map(|v| v.re()) };
        let Some(tc) = self.contour_on(&plain) else {
            // only for rays the check did not sample, with data that never reach the contour
            return ([tb, lift(f64::INFINITY), lift(w)], dtb, lift(0.0));
        };
        let mut tc = lift::<T>(tc);
        for _ in 0..3 {
            let (f, ft, _) = self.extended(ray, tc);
            if ft.re() > 0.0 {
                let r = f - self.contour_moment;
                tc -= (r - r.re()) / ft;
            }
        }
        let (_, ft, fp) = self.extended(ray, tc);
        let dtc = if ft.re() > 0.0 { -fp / ft } else { lift(0.0) };
        let (width, slope) = stretch(tc - tb, w);
        ([tb, tc, width], dtb, slope * (dtc - dtb))
    }

    /// Where the ramp lies on the ray of azimuth `φ` (rad).
    pub fn ramp(&self, phi: f64) -> RampGeometry {
        let ([sinus, contour, width], _, _) = self.geometry(phi, &self.expansion.ray(phi));
        RampGeometry { sinus, contour, width }
    }

    /// `M(φ, θ)` and its partial derivatives; `φ`, `θ` in rad, `θ ≥ 0`.
    pub fn magnitude(&self, phi: f64, theta: f64) -> Magnitude {
        self.magnitude_at(phi, theta)
    }

    /// [`SwingResistance::magnitude`] over any [`Real`] (dual numbers for its derivatives: `M`
    /// is C1, so these are piecewise, jumping at both ends of the ramp).
    pub fn magnitude_at<T: Real>(&self, phi: T, theta: T) -> Magnitude<T> {
        let (tb, _) = self.sinus.theta_and_slope_at(phi);
        if !(theta.re() > tb.re()) {
            return Magnitude { value: lift(0.0), d_theta: lift(0.0), d_phi: lift(0.0) };
        }
        let ray = self.expansion.ray_at(phi);
        let ([tb, _, width], dtb, dw) = self.geometry(phi, &ray);
        let t = (theta - tb) / width;
        let (f, ft, fp) = self.extended(&ray, theta);
        if t.re() >= 1.0 {
            return Magnitude { value: f, d_theta: ft, d_phi: fp };
        }
        let s = t * t * (t * -2.0 + 3.0);
        let ds = t * 6.0 * (-t + 1.0);
        let dt_dphi = -(dtb + t * dw) / width;
        Magnitude { value: f * s, d_theta: ft * s + f * ds / width, d_phi: fp * s + f * ds * dt_dphi }
    }
}

/// The smooth lower bound on the ramp width: `w` for `g ≤ 3w/4`, `g` for `g ≥ 5w/4`, and the C1
/// quadratic `w + (g − 3w/4)²/w` between (never below `max(g, w)`). Returns the width and its
/// slope.
fn stretch<T: Real>(g: T, w: f64) -> (T, T) {
    let band = 0.25 * w;
    if g.re() <= w - band {
        (lift(w), lift(0.0))
    } else if g.re() >= w + band {
        (g, lift(1.0))
    } else {
        let d = g - (w - band);
        (d * d / (4.0 * band) + w, d / (2.0 * band))
    }
}

/// The root of an increasing function in `[lo, hi]` with `r(lo) < 0 ≤ r(hi)`, by Newton steps
/// kept inside the shrinking bracket (bisection when a step leaves it).
fn bracketed_root(r: impl Fn(f64) -> (f64, f64), mut lo: f64, mut hi: f64) -> f64 {
    let mut x = 0.5 * (lo + hi);
    for _ in 0..200 {
        let (v, d) = r(x);
        if v == 0.0 {
            return x;
        }
        if v < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - v / d;
        let next = if d > 0.0 && newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
        if (next - x).abs() <= 4.0 * f64::EPSILON * x.abs().max(f64::MIN_POSITIVE) || hi - lo <= 0.0 {
            return next;
        }
        x = next;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shoulder;

    fn shoulder() -> SwingResistance {
        shoulder::swing_resistance()
    }

    #[test]
    fn stretch_is_c1_and_never_below_its_bounds() {
        let w = 0.05;
        for i in 0..400 {
            let g = -0.05 + 0.0005 * i as f64;
            let (v, d) = stretch(g, w);
            assert!(v >= g.max(w) - 1e-15);
            let h = 1e-7;
            let fd = (stretch(g + h, w).0 - stretch(g - h, w).0) / (2.0 * h);
            assert!((d - fd).abs() < 1e-5, "{g}: {d} {fd}");
        }
        assert_eq!(stretch(0.1, w), (0.1, 1.0));
        assert_eq!(stretch(-0.2, w), (0.05, 0.0));
    }

    #[test]
    fn contour_is_the_first_crossing_of_the_contour_moment() {
        let r = shoulder();
        for k in 0..36 {
            let phi = 0.1745 * k as f64;
            let g = r.ramp(phi);
            let f = |t: f64| r.expansion.value(phi, t);
            assert!((f(g.contour) - 6.0).abs() < 1e-12, "{phi}: {}", f(g.contour));
            // below it f stays under 6 N m
            for j in 0..200 {
                assert!(f(g.contour * j as f64 / 200.0) < 6.0);
            }
        }
    }

    #[test]
    fn gradient_matches_central_differences() {
        let r = shoulder();
        let h = 1e-6;
        let mut ramp_points = 0;
        for k in 0..90 {
            let phi = 0.07 * k as f64;
            let g = r.ramp(phi);
            for frac in [0.03, 0.3, 0.6, 0.97, 1.2, 2.5] {
                let theta = g.sinus + frac * g.width;
                if theta >= PI - 1e-3 {
                    continue;
                }
                ramp_points += usize::from(frac < 1.0);
                let m = r.magnitude(phi, theta);
                let fd_t = (r.magnitude(phi, theta + h).value - r.magnitude(phi, theta - h).value) / (2.0 * h);
                let fd_p = (r.magnitude(phi + h, theta).value - r.magnitude(phi - h, theta).value) / (2.0 * h);
                let scale = 1.0 + m.d_theta.abs() + m.d_phi.abs();
                assert!((m.d_theta - fd_t).abs() < 1e-6 * scale, "{phi} {theta}: {} {fd_t}", m.d_theta);
                assert!((m.d_phi - fd_p).abs() < 1e-6 * scale, "{phi} {theta}: {} {fd_p}", m.d_phi);
            }
        }
        assert!(ramp_points > 300);
    }

    #[test]
    fn zero_inside_continuous_and_c1_at_both_ends_of_the_ramp() {
        let r = shoulder();
        for k in 0..72 {
            let phi = 0.0873 * k as f64;
            let g = r.ramp(phi);
            assert_eq!(r.magnitude(phi, g.sinus).value, 0.0);
            assert_eq!(r.magnitude(phi, 0.5 * g.sinus).value, 0.0);
            let eps = 1e-9;
            let inner = r.magnitude(phi, g.sinus + eps);
            assert!(inner.value >= 0.0 && inner.value < 1e-12 && inner.d_theta.abs() < 1e-4, "{inner:?}");
            let end = g.sinus + g.width;
            let (a, b) = (r.magnitude(phi, end - eps), r.magnitude(phi, end + eps));
            assert!((a.value - b.value).abs() < 1e-6, "{a:?} {b:?}");
            assert!((a.d_theta - b.d_theta).abs() < 1e-5 * (1.0 + b.d_theta.abs()), "{a:?} {b:?}");
            assert!((a.d_phi - b.d_phi).abs() < 1e-5 * (1.0 + b.d_phi.abs()), "{a:?} {b:?}");
            assert!((b.value - r.expansion.value(phi, end + eps)).abs() < 1e-12);
        }
    }

    #[test]
    fn the_ramp_joins_f_at_the_six_newton_metre_contour_where_there_is_room() {
        let r = shoulder();
        let (mut exact, mut stretched) = (0, 0);
        for k in 0..360 {
            let phi = 2.0 * PI * k as f64 / 360.0;
            let g = r.ramp(phi);
            if g.contour - g.sinus >= 0.0625 {
                assert_eq!(g.width, g.contour - g.sinus);
                assert!((r.magnitude(phi, g.contour).value - 6.0).abs() < 1e-12);
                exact += 1;
            } else {
                assert!(g.width >= 0.05 && g.width >= g.contour - g.sinus);
                stretched += 1;
            }
        }
        assert!(exact > 100 && stretched > 100, "{exact} {stretched}");
    }

    #[test]
    fn bad_data_are_rejected_without_panicking() {
        let s = shoulder();
        let sinus = s.sinus.clone();
        let f = s.expansion.clone();
        assert!(matches!(
            SwingResistance::new(sinus.clone(), f.clone(), 0.0, 0.05, PI),
            Err(DataError::Parameter { .. })
        ));
        assert!(matches!(
            SwingResistance::new(sinus.clone(), f.clone(), 6.0, -1.0, PI),
            Err(DataError::Parameter { .. })
        ));
        assert!(matches!(
            SwingResistance::new(sinus.clone(), f.clone(), 6.0, 0.05, 4.0),
            Err(DataError::Parameter { .. })
        ));
        // a sinus through the pole
        let mut c = *sinus.coefficients();
        c[0] -= 1.6;
        assert!(matches!(
            SwingResistance::new(SinusBoundary::new(c), f.clone(), 6.0, 0.05, PI),
            Err(DataError::Sinus { .. })
        ));
        // a moment that never reaches 6 N m
        let flat = MomentExpansion::new([0.1, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        assert!(matches!(SwingResistance::new(sinus.clone(), flat, 6.0, 0.05, PI), Err(DataError::NoContour { .. })));
        // f = 10 θ − 2 cos³φ θ³ turns down beyond θ = 1.29 rad near φ = 0
        let turning = MomentExpansion::new([10.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2.0, 0.0, 0.0, 0.0]);
        assert!(matches!(
            SwingResistance::new(sinus.clone(), turning.clone(), 6.0, 0.05, PI),
            Err(DataError::NotIncreasing { .. })
        ));
        // unless it is continued by its tangent line before it turns
        assert!(SwingResistance::new(sinus, turning, 6.0, 0.05, 1.2).is_ok());
    }
}
