//! Geodesics on an ellipsoid `Σ x_i²/a_i² = 1` (principal frame), integrated as an initial value
//! problem together with their two normal Jacobi fields.
//!
//! With `M = diag(1/a_i²)`, a unit-speed curve on the surface is a geodesic when its acceleration
//! is along the normal: `x'' = −(x'ᵀ M x' / |M x|²) M x`. A normal Jacobi field `j(s) b(s)` (`b`
//! the surface normal crossed with the tangent) satisfies `j'' + K j = 0`, with the Gaussian
//! curvature `K = 1/((a_0 a_1 a_2)² |M x|⁴)`. The fields `j_a` (`j(0) = 1, j'(0) = 0`, a sideways
//! shift of the start) and `j_r` (`j(0) = 0, j'(0) = 1`, a turn of the start direction) give the
//! end point's and end direction's response to any change of the initial state.

use std::cell::Cell;

use mollier_core::geometry::{Vec3, norm};
use mollier_core::scalar::Real;

use crate::ode;

thread_local! {
    static SHOTS: Cell<u64> = const { Cell::new(0) };
}

/// How many geodesic shots with Jacobi fields ([`Ellipsoid::shoot_in`], the costly part of an
/// ellipsoid wrap) this thread has integrated so far: a statistic for tests and benchmarks, so
/// that the shots an evaluation needs are counted, not assumed.
pub fn shots_on_this_thread() -> u64 {
    SHOTS.with(Cell::get)
}

/// Macro-step length in units of the smallest radius of curvature (and of `1/√K`): with the
/// order-16 extrapolation the truncation error is then at the rounding floor on the geodesics of
/// the tests, which grows by about 3e-14 (relative) per radian the geodesic turns. Not on every
/// geodesic: long ones round the thorax's strongly curved ends end up to 3e-11 of the largest
/// semi-axis from a four times finer integration (docs/performance.md, "The shoulder posture").
const STEP_ANGLE: f64 = 0.8;

/// An ellipsoid in its principal frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ellipsoid {
    /// Semi-axes (m).
    pub axes: Vec3,
    m: Vec3,
    k_num: f64,
    kappa_max: f64,
}

/// The end state of a geodesic shot: point, unit tangent, and the Jacobi fields with their
/// derivatives at the end.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shot {
    /// End point (m).
    pub x: Vec3,
    /// End tangent (unit).
    pub v: Vec3,
    /// `j_a(ℓ)`, dimensionless.
    pub ja: f64,
    /// `j_a'(ℓ)` (1/m).
    pub dja: f64,
    /// `j_r(ℓ)` (m).
    pub jr: f64,
    /// `j_r'(ℓ)`, dimensionless.
    pub djr: f64,
}

impl Ellipsoid {
    /// The ellipsoid with semi-axes `axes` (m, positive).
    pub fn new(axes: Vec3) -> Self {
        let m = axes.map(|a| 1.0 / (a * a));
        let vol = axes[0] * axes[1] * axes[2];
        let amax = axes[0].max(axes[1]).max(axes[2]);
        let amin = axes[0].min(axes[1]).min(axes[2]);
        Self { axes, m, k_num: 1.0 / (vol * vol), kappa_max: amax / (amin * amin) }
    }

    /// `M = diag(1/a_i²)`.
    pub fn metric(&self) -> &Vec3 {
        &self.m
    }

    /// `xᵀ M x`: 1 on the surface, below 1 inside.
    pub fn level<T: Real>(&self, x: &Vec3<T>) -> T {
        x[0] * x[0] * self.m[0] + x[1] * x[1] * self.m[1] + x[2] * x[2] * self.m[2]
    }

    /// `M x`, the unnormalised outward normal at `x`.
    pub fn grad<T: Real>(&self, x: &Vec3<T>) -> Vec3<T> {
        [x[0] * self.m[0], x[1] * self.m[1], x[2] * self.m[2]]
    }

    /// Unit outward normal at `x`.
    pub fn normal(&self, x: &Vec3) -> Vec3 {
        let g = self.grad(x);
        let n = norm(&g);
        g.map(|v| v / n)
    }

    /// Normal curvature along the unit tangent `v` at `x`: `vᵀMv/|Mx|` (1/m, positive: convex).
    pub fn normal_curvature(&self, x: &Vec3, v: &Vec3) -> f64 {
        (self.m[0] * v[0] * v[0] + self.m[1] * v[1] * v[1] + self.m[2] * v[2] * v[2]) / norm(&self.grad(x))
    }

    /// Macro steps for a geodesic of length `ell` (m) anywhere on the ellipsoid (bounded by the
    /// largest curvature the ellipsoid has).
    pub fn steps(&self, ell: f64) -> usize {
        self.steps_with(ell, self.kappa_max)
    }

    /// Macro steps for a geodesic of length `ell` (m) where the principal curvatures stay below
    /// `kappa` (1/m).
    pub fn steps_with(&self, ell: f64, kappa: f64) -> usize {
        let s = (ell.abs() * kappa.min(self.kappa_max) / STEP_ANGLE).ceil();
        if s.is_finite() { (s as usize).clamp(1, 10_000) } else { 1 }
    }

    /// The Gaussian curvature at the surface point `x` (1/m²): `1/((a_0 a_1 a_2)² |Mx|⁴)`.
    pub fn gaussian_curvature(&self, x: &Vec3) -> f64 {
        let g = self.grad(x);
        let g2 = g[0] * g[0] + g[1] * g[1] + g[2] * g[2];
        self.k_num / (g2 * g2)
    }

    /// The larger principal curvature at the surface point `x` (1/m): from the trace of the
    /// shape operator `P M P/|Mx|` and the Gaussian curvature.
    pub fn max_curvature(&self, x: &Vec3) -> f64 {
        let g = self.grad(x);
        let gn = norm(&g);
        let n = g.map(|v| v / gn);
        let m = &self.m;
        let tr = (m[0] + m[1] + m[2] - (m[0] * n[0] * n[0] + m[1] * n[1] * n[1] + m[2] * n[2] * n[2])) / gn;
        let k = self.k_num / (gn * gn * gn * gn);
        0.5 * (tr + (tr * tr - 4.0 * k).max(0.0).sqrt())
    }

    /// The geodesic from `x0` (on the surface) with unit tangent `v0`, over arc length `ell`
    /// (m; negative runs backwards), with its Jacobi fields, in the default number of steps.
    pub fn shoot(&self, x0: &Vec3, v0: &Vec3, ell: f64) -> Shot {
        self.shoot_in(x0, v0, ell, self.steps(ell))
    }

    /// [`Ellipsoid::shoot`] in `steps` macro steps.
    pub fn shoot_in(&self, x0: &Vec3, v0: &Vec3, ell: f64, steps: usize) -> Shot {
        SHOTS.with(|c| c.set(c.get() + 1));
        let y0 = [x0[0], x0[1], x0[2], v0[0], v0[1], v0[2], 1.0, 0.0, 0.0, 1.0];
        let (m, k) = (self.m, self.k_num);
        let y = ode::integrate(y0, ell, steps, |y: &[f64; 10]| {
            let mx = [m[0] * y[0], m[1] * y[1], m[2] * y[2]];
            let inv = 1.0 / (mx[0] * mx[0] + mx[1] * mx[1] + mx[2] * mx[2]);
            let vmv = m[0] * y[3] * y[3] + m[1] * y[4] * y[4] + m[2] * y[5] * y[5];
            let mu = vmv * inv;
            let kg = k * inv * inv;
            [y[3], y[4], y[5], -mu * mx[0], -mu * mx[1], -mu * mx[2], y[7], -kg * y[6], y[9], -kg * y[8]]
        });
        Shot { x: [y[0], y[1], y[2]], v: [y[3], y[4], y[5]], ja: y[6], dja: y[7], jr: y[8], djr: y[9] }
    }

    /// The end point and tangent of the geodesic for a generic scalar, in `steps` macro steps
    /// (the count the `f64` solution used, so that both integrate the same discrete map).
    pub fn shoot_generic<T: Real>(&self, x0: &Vec3<T>, v0: &Vec3<T>, ell: T, steps: usize) -> (Vec3<T>, Vec3<T>) {
        let y0 = [x0[0], x0[1], x0[2], v0[0], v0[1], v0[2]];
        let m = self.m;
        let y = ode::integrate(y0, ell, steps, |y: &[T; 6]| {
            let mx = [y[0] * m[0], y[1] * m[1], y[2] * m[2]];
            let g2 = mx[0] * mx[0] + mx[1] * mx[1] + mx[2] * mx[2];
            let vmv = y[3] * y[3] * m[0] + y[4] * y[4] * m[1] + y[5] * y[5] * m[2];
            let mu = -(vmv / g2);
            [y[3], y[4], y[5], mu * mx[0], mu * mx[1], mu * mx[2]]
        });
        ([y[0], y[1], y[2]], [y[3], y[4], y[5]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::geometry::{cross, dot, scale};

    #[test]
    fn great_circle_on_a_sphere() {
        // on a sphere geodesics are great circles and K = 1/R²: j_a = cos(s/R), j_r = R sin(s/R)
        let r = 0.7;
        let e = Ellipsoid::new([r, r, r]);
        let x0 = [r, 0.0, 0.0];
        let v0 = [0.0, 0.6, 0.8];
        for ell in [0.01, 0.5, 2.0, 4.3, -1.0] {
            let s = e.shoot(&x0, &v0, ell);
            let (sn, cs) = (ell / r).sin_cos();
            let want_x = [r * cs, r * sn * 0.6, r * sn * 0.8];
            let want_v = [-sn, cs * 0.6, cs * 0.8];
            // rounding floor: a few 1e-14 per radian turned
            let tol = 5e-14 * (1.0 + (ell / r).abs());
            for i in 0..3 {
                assert!((s.x[i] - want_x[i]).abs() < tol * r, "ell {ell}: {:?} vs {want_x:?}", s.x);
                assert!((s.v[i] - want_v[i]).abs() < tol);
            }
            assert!((s.ja - cs).abs() < tol && (s.dja + sn / r).abs() < tol / r);
            assert!((s.jr - r * sn).abs() < tol * r && (s.djr - cs).abs() < tol);
        }
    }

    /// On a triaxial ellipsoid: the point stays on the surface, the speed stays 1, Joachimsthal's
    /// integral is conserved, and the Jacobi fields agree with finite differences of neighbouring
    /// geodesics.
    #[test]
    fn triaxial_invariants_and_jacobi_fields() {
        let e = Ellipsoid::new([0.147, 0.2079, 0.0944]);
        let x0 = {
            let d = [0.5f64, -0.4, 0.6];
            let f = e.level(&d).sqrt();
            d.map(|v| v / f)
        };
        let n0 = e.normal(&x0);
        let t0 = {
            let a = [0.3, 0.9, -0.2];
            let p = [0, 1, 2].map(|i| a[i] - dot(&a, &n0) * n0[i]);
            let l = norm(&p);
            p.map(|v| v / l)
        };
        let b0 = cross(&n0, &t0);
        let ell = 0.35;
        let s = e.shoot(&x0, &t0, ell);
        assert!((e.level(&s.x) - 1.0).abs() < 1e-13, "{}", e.level(&s.x));
        assert!((norm(&s.v) - 1.0).abs() < 1e-13);
        assert!(dot(&s.v, &e.grad(&s.x)).abs() < 1e-12);
        // Joachimsthal: on a quadric p·d is constant along a geodesic, with p = 1/|M x| (distance
        // from the centre to the tangent plane) and d = 1/√(vᵀ M v) (semi-diameter along v)
        let jo = |x: &Vec3, v: &Vec3| {
            let g = e.grad(x);
            let vmv = e.metric()[0] * v[0] * v[0] + e.metric()[1] * v[1] * v[1] + e.metric()[2] * v[2] * v[2];
            1.0 / (norm(&g) * vmv.sqrt())
        };
        assert!((jo(&x0, &t0) - jo(&s.x, &s.v)).abs() < 1e-12 * jo(&x0, &t0));
        // Jacobi fields by finite differences: shift the start sideways along the surface, and turn
        let h = 1e-5;
        let project = |x: &Vec3| {
            let f = e.level(x).sqrt();
            x.map(|v| v / f)
        };
        let tangent_at = |x: &Vec3, t: &Vec3| {
            let n = e.normal(x);
            let p = [0, 1, 2].map(|i| t[i] - dot(t, &n) * n[i]);
            let l = norm(&p);
            p.map(|v| v / l)
        };
        let b_end = cross(&e.normal(&s.x), &s.v);
        // shift: start at x0 ± h b0 (projected), direction parallel-transported to first order
        let shot_shift = |sg: f64| {
            let x = project(&[0, 1, 2].map(|i| x0[i] + sg * h * b0[i]));
            e.shoot(&x, &tangent_at(&x, &t0), ell)
        };
        let (sp, sm) = (shot_shift(1.0), shot_shift(-1.0));
        let dj = dot(&scale(0.5 / h, &[0, 1, 2].map(|i| sp.x[i] - sm.x[i])), &b_end);
        assert!((dj - s.ja).abs() < 1e-6, "{dj} vs {}", s.ja);
        // turn: rotate the start direction about the normal by ±h
        let shot_turn = |sg: f64| {
            let t = [0, 1, 2].map(|i| t0[i] * (sg * h).cos() + b0[i] * (sg * h).sin());
            e.shoot(&x0, &t, ell)
        };
        let (tp, tm) = (shot_turn(1.0), shot_turn(-1.0));
        let dj = dot(&scale(0.5 / h, &[0, 1, 2].map(|i| tp.x[i] - tm.x[i])), &b_end);
        assert!((dj - s.jr).abs() < 1e-6, "{dj} vs {}", s.jr);
        let djp = dot(&scale(0.5 / h, &[0, 1, 2].map(|i| tp.v[i] - tm.v[i])), &b_end);
        assert!((djp - s.djr).abs() < 1e-6, "{djp} vs {}", s.djr);
    }

    #[test]
    fn accuracy_against_a_finer_integration() {
        // the production step count against ten times as many steps: both at the rounding floor
        let e = Ellipsoid::new([0.147, 0.2079, 0.0944]);
        let x0 = {
            let d = [0.2f64, 0.9, 0.3];
            let f = e.level(&d).sqrt();
            d.map(|v| v / f)
        };
        let n0 = e.normal(&x0);
        let t0 = {
            let a = [1.0, 0.1, -0.5];
            let p = [0, 1, 2].map(|i| a[i] - dot(&a, &n0) * n0[i]);
            let l = norm(&p);
            p.map(|v| v / l)
        };
        for ell in [0.05, 0.2, 0.35] {
            let s = e.shoot(&x0, &t0, ell);
            let y0 = [x0[0], x0[1], x0[2], t0[0], t0[1], t0[2]];
            let fine = ode::integrate(y0, ell, 10 * e.steps(ell), |y: &[f64; 6]| {
                let m = e.metric();
                let mx = [m[0] * y[0], m[1] * y[1], m[2] * y[2]];
                let g2 = mx[0] * mx[0] + mx[1] * mx[1] + mx[2] * mx[2];
                let mu = (m[0] * y[3] * y[3] + m[1] * y[4] * y[4] + m[2] * y[5] * y[5]) / g2;
                [y[3], y[4], y[5], -mu * mx[0], -mu * mx[1], -mu * mx[2]]
            });
            // both at the rounding floor: 3e-14 per radian of the finer one's turning
            let turn = ell * 0.2079 / (0.0944 * 0.0944);
            for i in 0..3 {
                assert!(
                    (s.x[i] - fine[i]).abs() < 3e-14 * (1.0 + turn) * 0.2079,
                    "ell {ell}: {} vs {}",
                    s.x[i],
                    fine[i]
                );
            }
        }
    }
}
