//! Engin's two functional expansions over the spherical angles `(φ, θ)` of the moving member's
//! long axis in the fixed member's joint frame (report eqs 3.1/4.1 and 3.2):
//! - the joint sinus boundary `θ_b(φ)` (the maximal voluntary range of motion), and
//! - the passive resistive moment magnitude `f(φ, θ)` beyond it.
//!
//! Both are periodic in `φ` (rad), so any real `φ` is accepted.

use mollier_core::scalar::{Real, c as lift};

/// The joint sinus boundary (report eq. 3.1/4.1):
/// `θ_b(φ) = Σ_{n=1..5} cos^{n−1}φ (C_{2n−1} + C_{2n} sin φ)`, rad.
#[derive(Clone, Debug, PartialEq)]
pub struct SinusBoundary {
    c: [f64; 10],
}

impl SinusBoundary {
    /// The expansion with coefficients `C_1..C_10` (rad), in the report's order.
    pub fn new(coefficients: [f64; 10]) -> Self {
        Self { c: coefficients }
    }

    /// The coefficients `C_1..C_10` (rad).
    pub fn coefficients(&self) -> &[f64; 10] {
        &self.c
    }

    /// `θ_b(φ)`, rad.
    pub fn theta(&self, phi: f64) -> f64 {
        self.theta_and_slope(phi).0
    }

    /// `θ_b(φ)` and `dθ_b/dφ` (rad, rad/rad).
    pub fn theta_and_slope(&self, phi: f64) -> (f64, f64) {
        self.theta_and_slope_at(phi)
    }

    /// [`SinusBoundary::theta_and_slope`] over any [`Real`] (dual numbers for its derivatives).
    pub fn theta_and_slope_at<T: Real>(&self, phi: T) -> (T, T) {
        let (s, c) = phi.sin_cos();
        // Horner in cos φ for P(c) = Σ a_k c^k (a_k = C_{2k+1} + C_{2k+2} s), its c-derivative, and
        // B(c) = Σ C_{2k+2} c^k, the s-derivative of P: dθ_b/dφ = P'(c)(−s) + B(c) c.
        let (mut p, mut dp, mut b) = (lift::<T>(0.0), lift::<T>(0.0), lift::<T>(0.0));
        for k in (0..5).rev() {
            dp = dp * c + p;
            p = p * c + (s * self.c[2 * k + 1] + self.c[2 * k]);
            b = b * c + self.c[2 * k + 1];
        }
        (p, -s * dp + c * b)
    }
}

/// The resistive moment expansion (report eq. 3.2), N m, for `θ` in rad:
/// ```text
/// f(φ, θ) = (C1 + C2 cos φ + C3 sin φ) θ
///         + (C4 cos²φ + C5 cos φ sin φ + C6 sin²φ) θ²
///         + (C7 cos³φ + C8 cos²φ sin φ + C9 cos φ sin²φ + C10 sin³φ) θ³
/// ```
/// In `p = θ cos φ`, `q = θ sin φ` it is `C1 θ + C2 p + C3 q + C4 p² + …`, a polynomial plus a cone.
#[derive(Clone, Debug, PartialEq)]
pub struct MomentExpansion {
    c: [f64; 10],
}

impl MomentExpansion {
    /// The expansion with coefficients `C_1..C_10` (N m/rad, N m/rad², N m/rad³ by degree).
    pub fn new(coefficients: [f64; 10]) -> Self {
        Self { c: coefficients }
    }

    /// The coefficients `C_1..C_10`.
    pub fn coefficients(&self) -> &[f64; 10] {
        &self.c
    }

    /// `f(φ, θ)`, N m.
    pub fn value(&self, phi: f64, theta: f64) -> f64 {
        self.ray(phi).value(theta)
    }

    /// The expansion restricted to the ray of azimuth `φ`: a cubic in `θ` without constant term.
    pub fn ray(&self, phi: f64) -> Ray {
        self.ray_at(phi)
    }

    /// [`MomentExpansion::ray`] over any [`Real`] (dual numbers for its derivatives).
    pub fn ray_at<T: Real>(&self, phi: T) -> Ray<T> {
        let (s, c) = phi.sin_cos();
        let k = &self.c;
        let a = [
            c * k[1] + k[0] + s * k[2],
            c * k[3] * c + c * k[4] * s + s * k[5] * s,
            c * k[6] * c * c + c * k[7] * c * s + c * k[8] * s * s + s * k[9] * s * s,
        ];
        let da = [
            s * -k[1] + c * k[2],
            c * (-2.0 * k[3]) * s + (c * c - s * s) * k[4] + s * (2.0 * k[5]) * c,
            c * (-3.0 * k[6]) * c * s
                + (c * c * c - c * 2.0 * s * s) * k[7]
                + (c * 2.0 * c * s - s * s * s) * k[8]
                + s * (3.0 * k[9]) * s * c,
        ];
        Ray { a, da }
    }
}

/// `f` along one ray: `f(θ) = a1 θ + a2 θ² + a3 θ³`, with the `φ`-derivatives of the `a_i`
/// (`f64`, or dual numbers of `φ`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ray<T = f64> {
    /// `a1, a2, a3` (N m/rad^k).
    pub a: [T; 3],
    /// `da_i/dφ`.
    pub da: [T; 3],
}

impl<T: Real> Ray<T> {
    /// `f`, N m.
    pub fn value(&self, t: T) -> T {
        t * (self.a[0] + t * (self.a[1] + t * self.a[2]))
    }
    /// `∂f/∂θ`, N m/rad.
    pub fn d_theta(&self, t: T) -> T {
        self.a[0] + t * (self.a[1] * 2.0 + t * 3.0 * self.a[2])
    }
    /// `∂f/∂φ`, N m/rad.
    pub fn d_phi(&self, t: T) -> T {
        t * (self.da[0] + t * (self.da[1] + t * self.da[2]))
    }
    /// `∂²f/∂θ∂φ`.
    pub fn d_theta_phi(&self, t: T) -> T {
        self.da[0] + t * (self.da[1] * 2.0 + t * 3.0 * self.da[2])
    }
}

impl Ray {
    /// The stationary points of `f` on the ray (roots of `∂f/∂θ`), ascending; none, one or two.
    pub fn stationary_points(&self) -> Vec<f64> {
        let [a1, a2, a3] = self.a;
        // 3 a3 θ² + 2 a2 θ + a1 = 0, solved without cancellation
        let (qa, qb, qc) = (3.0 * a3, 2.0 * a2, a1);
        let scale = qa.abs().max(qb.abs()).max(qc.abs());
        if !(scale > 0.0) || !scale.is_finite() {
            return Vec::new();
        }
        let mut roots = Vec::with_capacity(2);
        if qa.abs() <= 1e-14 * scale {
            if qb != 0.0 {
                roots.push(-qc / qb);
            }
        } else {
            let disc = qb * qb - 4.0 * qa * qc;
            if disc >= 0.0 {
                let h = -0.5 * (qb + qb.signum() * disc.sqrt());
                if h != 0.0 {
                    roots.push(h / qa);
                    roots.push(qc / h);
                } else {
                    roots.push(0.0);
                }
            }
        }
        roots.retain(|r| r.is_finite());
        roots.sort_by(f64::total_cmp);
        roots
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CF: [f64; 10] = [1.3, -0.2, 0.4, 0.1, -0.25, 0.3, 0.05, -0.15, 0.2, 0.12];
    const C: [f64; 10] = [-20.0, 2.0, -3.0, 18.0, 4.0, 15.0, -1.5, 3.0, -0.5, 0.7];

    #[test]
    fn sinus_matches_the_sum_and_its_slope_central_differences() {
        let b = SinusBoundary::new(CF);
        for i in 0..40 {
            let phi = -3.0 + 0.17 * i as f64;
            let (s, c) = phi.sin_cos();
            let sum: f64 = (0..5).map(|n| c.powi(n as i32) * (CF[2 * n] + CF[2 * n + 1] * s)).sum();
            let (t, dt) = b.theta_and_slope(phi);
            assert!((t - sum).abs() < 1e-15, "{t} {sum}");
            let h = 1e-6;
            let fd = (b.theta(phi + h) - b.theta(phi - h)) / (2.0 * h);
            assert!((dt - fd).abs() < 1e-8, "{dt} {fd}");
        }
    }

    #[test]
    fn expansion_matches_eq_3_2_and_its_derivatives() {
        let f = MomentExpansion::new(C);
        for i in 0..30 {
            let phi = -2.0 + 0.31 * i as f64;
            let th = 0.2 + 0.09 * i as f64;
            let (s, c) = phi.sin_cos();
            let eq = (C[0] + C[1] * c + C[2] * s) * th
                + (C[3] * c * c + C[4] * c * s + C[5] * s * s) * th * th
                + (C[6] * c.powi(3) + C[7] * c * c * s + C[8] * c * s * s + C[9] * s.powi(3)) * th.powi(3);
            let r = f.ray(phi);
            assert!((r.value(th) - eq).abs() < 1e-12 * (1.0 + eq.abs()));
            let h = 1e-6;
            let fd_t = (f.value(phi, th + h) - f.value(phi, th - h)) / (2.0 * h);
            let fd_p = (f.value(phi + h, th) - f.value(phi - h, th)) / (2.0 * h);
            let fd_tp = (f.ray(phi + h).d_theta(th) - f.ray(phi - h).d_theta(th)) / (2.0 * h);
            assert!((r.d_theta(th) - fd_t).abs() < 1e-6, "{} {fd_t}", r.d_theta(th));
            assert!((r.d_phi(th) - fd_p).abs() < 1e-6, "{} {fd_p}", r.d_phi(th));
            assert!((r.d_theta_phi(th) - fd_tp).abs() < 1e-6);
            for t0 in r.stationary_points() {
                assert!(r.d_theta(t0).abs() < 1e-9 * (1.0 + r.a[0].abs()), "{t0}: {}", r.d_theta(t0));
            }
        }
    }
}
