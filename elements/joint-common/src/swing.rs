//! The swing coordinates `(p, q) = θ (cos φ, sin φ)` of a direction `u = (u_x, u_y, u_z)` at polar
//! angle `θ` from the z axis and azimuth `φ` (the azimuthal equidistant map):
//! ```text
//! (p, q) = g(w, u_z) (u_x, u_y),   w = u_x² + u_y²,   g = atan2(√w, u_z) / √w
//! ```
//! `g` is analytic except at `θ = π`; near the pole (`w < u_z²/10`) it is evaluated as
//! `g = F(w/u_z²)/u_z`, `F(t) = atan(√t)/√t = Σ (−t)^k/(2k+1)`, so the map and its derivatives are
//! smooth through `θ = 0` (where `√w` alone is not). It is homogeneous of degree 0 in `u`.
//!
//! The flexion-torsion joint's bending `(α, γ)`, the joint stop's `(θ, φ)` and the ball-socket
//! resistance's swing `(p, q)` are all these coordinates of the moving member's z axis in the
//! fixed joint frame.

use mollier_core::ElementError;
use mollier_core::Order;
use mollier_core::scalar::{Real, c};

use crate::term::Term;

/// `w/u_z²` below which the series is used.
const SERIES_LIMIT: f64 = 0.1;
/// Terms of the series: `0.1^24` is far below rounding.
const SERIES_TERMS: usize = 24;
/// `sin²θ` below which a direction with `u_z < 0` counts as `θ = π` (within 1e-6 rad), where the
/// azimuth is undefined.
const ANTIPODE_SIN2: f64 = 1e-12;

fn domain(w: f64, z: f64) -> Result<(), ElementError> {
    let r2 = w + z * z;
    if !(r2 > 0.0) || !r2.is_finite() {
        return Err(ElementError::Domain(format!("the joint axes have no direction (|u|² = {r2})")));
    }
    if z < 0.0 && w <= ANTIPODE_SIN2 * r2 {
        return Err(ElementError::Domain(
            "the moving z axis points opposite the fixed one (angle π between them): its direction of bending is undefined"
                .into(),
        ));
    }
    Ok(())
}

/// `F(t)`, `F'(t)`, `F''(t)` by Horner's rule.
fn series(t: f64) -> (f64, f64, f64) {
    let (mut f, mut d1, mut d2) = (0.0, 0.0, 0.0);
    for k in (0..SERIES_TERMS).rev() {
        let a = if k % 2 == 0 { 1.0 } else { -1.0 } / (2 * k + 1) as f64;
        let kf = k as f64;
        f = f * t + a;
        if k >= 1 {
            d1 = d1 * t + a * kf;
        }
        if k >= 2 {
            d2 = d2 * t + a * kf * (kf - 1.0);
        }
    }
    (f, d1, d2)
}

/// `(p, q)` (rad) of a direction `u` and their derivatives with respect to `u`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Swing {
    /// `(p, q)`, rad.
    pub value: [f64; 2],
    /// `∂(p, q)/∂u`: for each of `p`, `q`, 3 components (rad per unit of `u`).
    pub grad: [[f64; 3]; 2],
    /// `∂²(p, q)/∂u²`: for each of `p`, `q`, 3 x 3, symmetric.
    pub hess: [[[f64; 3]; 3]; 2],
}

/// `(p, q)` of the direction `u` (any length) with gradient and Hessian in `u`.
pub fn swing_derivatives(u: [f64; 3]) -> Result<Swing, ElementError> {
    let [ux, uy, z] = u;
    let w = ux * ux + uy * uy;
    domain(w, z)?;
    let r2 = w + z * z;
    // g and its partial derivatives in (w, z)
    let (g, gw, gww) = if z > 0.0 && w < SERIES_LIMIT * z * z {
        let z2 = z * z;
        let (f, f1, f2) = series(w / z2);
        (f / z, f1 / (z2 * z), f2 / (z2 * z2 * z))
    } else {
        let s = w.sqrt();
        let g = s.atan2(z) / s;
        let gw = (z / r2 - g) / (2.0 * w);
        (g, gw, -1.5 * gw / w - z / (2.0 * w * r2 * r2))
    };
    let (gz, gwz, gzz) = (-1.0 / r2, 1.0 / (r2 * r2), 2.0 * z / (r2 * r2));
    let uv = [ux, uy];
    let delta = |i: usize, j: usize| f64::from(u8::from(i == j));
    let mut out = Swing::default();
    for a in 0..2 {
        let ua = uv[a];
        out.value[a] = ua * g;
        for b in 0..2 {
            out.grad[a][b] = delta(a, b) * g + 2.0 * ua * uv[b] * gw;
            for cc in 0..2 {
                out.hess[a][b][cc] = 2.0 * gw * (delta(a, b) * uv[cc] + delta(a, cc) * uv[b] + delta(b, cc) * ua)
                    + 4.0 * ua * uv[b] * uv[cc] * gww;
            }
            let mixed = delta(a, b) * gz + 2.0 * ua * uv[b] * gwz;
            out.hess[a][b][2] = mixed;
            out.hess[a][2][b] = mixed;
        }
        out.grad[a][2] = ua * gz;
        out.hess[a][2][2] = ua * gzz;
    }
    Ok(out)
}

/// `(p, q)` of the direction `u`, as [`Term`]s from the terms of its components.
pub fn swing(u: [&Term; 3], order: Order) -> Result<[Term; 2], ElementError> {
    let s = swing_derivatives([u[0].v, u[1].v, u[2].v])?;
    Ok(std::array::from_fn(|a| Term::chain(s.value[a], &s.grad[a], &s.hess[a], u, order)))
}

/// The swing `(p, q)` of the moving z axis and the twist about it less the reference twist
/// `twist0 = (cos ψ0, sin ψ0)` (rad, the twist in (−π, π]), from the relative rotation `r`
/// (`R_ab`, [`crate::JointFrames::relative`]; scaled alike by the Euler parameters' norms, which
/// the angles do not see), generic over the scalar. `undefined` is the domain error where the
/// twist is undefined (the moving z axis opposite the fixed one).
pub fn swing_twist_generic<T: Real>(
    r: &[[T; 3]; 3],
    twist0: (f64, f64),
    undefined: &str,
) -> Result<[T; 3], ElementError> {
    let (p, q) = swing_generic([r[0][2], r[1][2], r[2][2]])?;
    let s = r[1][0] - r[0][1];
    let cc = r[0][0] + r[1][1];
    if !(s.re().hypot(cc.re()) > 0.0) {
        return Err(ElementError::Domain(undefined.into()));
    }
    let (c0, s0) = (c::<T>(twist0.0), c::<T>(twist0.1));
    Ok([p, q, (s * c0 - cc * s0).atan2(cc * c0 + s * s0)])
}

/// `(p, q)` of the direction `u`, generic over the scalar (for dual numbers).
pub fn swing_generic<T: Real>(u: [T; 3]) -> Result<(T, T), ElementError> {
    let [ux, uy, z] = u;
    let w = ux * ux + uy * uy;
    domain(w.re(), z.re())?;
    let g = if z.re() > 0.0 && w.re() < SERIES_LIMIT * z.re() * z.re() {
        let t = w / (z * z);
        let mut f = c::<T>(0.0);
        for k in (0..SERIES_TERMS).rev() {
            f = f * t + c::<T>(if k % 2 == 0 { 1.0 } else { -1.0 } / (2 * k + 1) as f64);
        }
        f / z
    } else {
        let s = w.sqrt();
        s.atan2(z) / s
    };
    Ok((ux * g, uy * g))
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::HyperDual64;

    fn dir(theta: f64, phi: f64, k: f64) -> [f64; 3] {
        [k * theta.sin() * phi.cos(), k * theta.sin() * phi.sin(), k * theta.cos()]
    }

    /// `u` as three independent "terms": the first three local coordinates.
    fn terms(u: [f64; 3]) -> [Term; 3] {
        std::array::from_fn(|i| {
            let mut t = Term::constant(u[i]);
            t.g[i] = 1.0;
            t
        })
    }

    #[test]
    fn values_are_theta_cos_phi_theta_sin_phi_at_any_scale() {
        for &theta in &[0.0, 1e-9, 0.01, 0.3, 0.31, 0.32, 1.2, 1.57, 2.4, 3.1] {
            for &phi in &[0.0, 0.7, 2.0, -2.9] {
                for &k in &[1.0, 0.8, 1.3] {
                    let u = terms(dir(theta, phi, k));
                    let s = swing([&u[0], &u[1], &u[2]], Order::Value).unwrap();
                    let (pg, qg) = swing_generic(dir(theta, phi, k)).unwrap();
                    for (v, want) in [(s[0].v, theta * phi.cos()), (s[1].v, theta * phi.sin())] {
                        assert!((v - want).abs() < 4e-15 * (1.0 + theta), "{theta} {phi} {k}: {v} {want}");
                    }
                    assert!((pg - s[0].v).abs() < 1e-15 && (qg - s[1].v).abs() < 1e-15);
                    let d = swing_derivatives(dir(theta, phi, k)).unwrap();
                    assert_eq!(d.value, [s[0].v, s[1].v]);
                }
            }
        }
    }

    #[test]
    fn derivatives_match_hyper_dual_numbers_on_both_sides_of_the_series_switch() {
        let mut worst: f64 = 0.0;
        // t = w/z² = tan²θ: the series holds below θ = atan(√0.1) ≈ 0.3064
        for &theta in &[0.0, 0.05, 0.30, 0.3064, 0.307, 0.33, 1.0, 1.6, 2.2, 2.9] {
            for &phi in &[0.4, 1.9, -2.5] {
                let u = dir(theta, phi, 0.9);
                let t = terms(u);
                let s = swing([&t[0], &t[1], &t[2]], Order::Hessian).unwrap();
                for i in 0..3 {
                    for j in 0..3 {
                        let v: [HyperDual64; 3] = std::array::from_fn(|k| {
                            HyperDual64::new(u[k], f64::from(u8::from(k == i)), f64::from(u8::from(k == j)), 0.0)
                        });
                        let (p, q) = swing_generic(v).unwrap();
                        for (a, d) in [p, q].iter().enumerate() {
                            let (g, h) = (s[a].g[i], s[a].h[i * 8 + j]);
                            let e =
                                ((d.eps1 - g).abs() / (1.0 + g.abs())).max((d.eps1eps2 - h).abs() / (1.0 + h.abs()));
                            assert!(e < 1e-10, "{theta} {phi} ({a}, {i}, {j}): {} {g}, {} {h}", d.eps1, d.eps1eps2);
                            worst = worst.max(e);
                        }
                    }
                }
            }
        }
        assert!(worst < 1e-10, "{worst}");
    }

    #[test]
    fn derivatives_match_central_differences_on_both_sides_of_the_series_switch() {
        let h = 1e-6;
        for &theta in &[0.0, 0.05, 0.30, 0.3064, 0.307, 0.33, 1.0, 1.6, 2.2, 2.9] {
            for &phi in &[0.4, 1.9, -2.5] {
                let u = dir(theta, phi, 0.9);
                let s = swing_derivatives(u).unwrap();
                for i in 0..3 {
                    let (mut up, mut um) = (u, u);
                    up[i] += h;
                    um[i] -= h;
                    let (sp, sm) = (swing_derivatives(up).unwrap(), swing_derivatives(um).unwrap());
                    for a in 0..2 {
                        let fd = (sp.value[a] - sm.value[a]) / (2.0 * h);
                        assert!((fd - s.grad[a][i]).abs() < 1e-7, "{theta} {phi} d{a}/du{i}: {fd} {}", s.grad[a][i]);
                        for j in 0..3 {
                            let fd2 = (sp.grad[a][j] - sm.grad[a][j]) / (2.0 * h);
                            assert!(
                                (fd2 - s.hess[a][i][j]).abs() < 1e-6 * (1.0 + s.hess[a][i][j].abs()),
                                "{theta} {phi} d2{a}/du{i}du{j}: {fd2} {}",
                                s.hess[a][i][j]
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn the_antipode_and_the_zero_vector_are_domain_errors() {
        let bad = |u: [f64; 3]| {
            let t = terms(u);
            matches!(swing([&t[0], &t[1], &t[2]], Order::Hessian), Err(ElementError::Domain(_)))
        };
        assert!(bad([0.0, 0.0, -1.0]) && bad([1e-8, 0.0, -1.0]) && bad([0.0; 3]) && bad([f64::NAN, 0.0, 1.0]));
        for u in [[0.0, 0.0, -1.0], [1e-8, 0.0, -1.0], [0.0; 3], [f64::NAN, 0.0, 1.0]] {
            assert!(matches!(swing_derivatives(u), Err(ElementError::Domain(_))));
        }
        assert!(swing_generic([0.0, 0.0, -2.0]).is_err());
        let (p, _) = swing_generic([1e-5, 0.0, -1.0]).unwrap();
        assert!((p - (std::f64::consts::PI - 1e-5)).abs() < 1e-9);
        let s = swing_derivatives([1e-5, 0.0, -1.0]).unwrap();
        assert!((s.value[0] - (std::f64::consts::PI - 1e-5)).abs() < 1e-9);
    }
}
