//! Signed distance from a point to an ellipsoid along the surface normal, robust for every point.
//!
//! In the principal frame the ellipsoid is `Σ y_i²/a_i² = 1`. The closest point `y` to `p`
//! satisfies `p − y = t M y` with `M = diag(1/a_i²)`, so `y_i = a_i² p_i/(a_i² + t)` and `t` is the
//! root of the secular equation
//! ```text
//! S(t) = Σ (a_i p_i/(a_i² + t))² = 1,      t > −a_min²
//! ```
//! `S` decreases strictly on that interval, so the root is unique; `t > 0` outside, `t < 0`
//! inside, and the signed distance is `d = t |M y|` (no cancellation in `p − y`).
//!
//! The root is found as in Eberly ("Distance from a point to an ellipse, an ellipsoid, or a
//! hyperellipsoid", Geometric Tools), in our own formulation: in the shifted variable
//! `u = t + a_min²` (so that the smallest denominator is `u` itself, exact near the axes), on a
//! bracket that is valid by construction, by Newton's method on `S^{−1/2} − 1` (exactly linear
//! when one term dominates) safeguarded by bisection. It needs no tolerance: it stops when a step
//! no longer changes `u`.
//!
//! When every component of `p` along the smallest axis (or axes) is zero and the point lies
//! deep enough inside, the root does not exist in the open interval: the point is on the
//! ellipsoid's *ridge* (medial set), where two closest points are equally near. The distance is
//! still exact (`t = −a_min²`); the normal is that of one of the two closest points (the one
//! on the positive side of the first smallest axis), and the Hessian does not exist.

use mollier_core::ElementError;
use mollier_core::geometry::{Mat3, Vec3, norm};
use mollier_core::scalar::{Real, c};

/// The closest point of an ellipsoid to a point, in the ellipsoid's principal frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Projection {
    /// Signed distance (m): positive outside, negative inside, zero on the surface.
    pub distance: f64,
    /// The closest point on the surface (m).
    pub closest: Vec3,
    /// Unit outward normal at the closest point; it is also the gradient of the distance.
    pub normal: Vec3,
    /// The root `t` of the secular equation (m²): `p = y + t M y`.
    pub t: f64,
    /// `true` on the ridge: the closest point is not unique and the Hessian does not exist.
    pub ridge: bool,
    /// `a_i² + t` (m²), computed without cancellation.
    den: Vec3,
    /// Root in the scaled, shifted variable, and the scale (largest semi-axis).
    u: f64,
    scale: f64,
}

/// Validate semi-axes: three finite positive lengths.
pub fn check_axes(axes: &Vec3) -> Result<(), ElementError> {
    if axes.iter().all(|a| a.is_finite() && *a > 0.0) {
        Ok(())
    } else {
        Err(ElementError::Degenerate(format!("semi-axes must be finite and positive, found {axes:?}")))
    }
}

/// Root of `S(u) = Σ (c_i/(δ_i + u))² = 1` in `[lo, hi]`, where `S(lo) ≥ 1 ≥ S(hi)`.
fn secular_root(cc: &Vec3, delta: &Vec3, mut lo: f64, mut hi: f64) -> f64 {
    let eval = |u: f64| {
        let (mut s, mut ds) = (0.0, 0.0);
        for i in 0..3 {
            if cc[i] != 0.0 {
                let r = cc[i] / (delta[i] + u);
                s += r * r;
                ds -= 2.0 * r * r / (delta[i] + u);
            }
        }
        (s, ds)
    };
    let mut u = lo;
    // bisection alone would need at most ~2100 halvings to exhaust the doubles between lo and hi
    for _ in 0..2200 {
        let (s, ds) = eval(u);
        if s == 1.0 {
            return u;
        }
        if s > 1.0 {
            lo = u;
        } else {
            hi = u;
        }
        // Newton on g = S^{-1/2} − 1, which is linear in u for a single term
        let r = 1.0 / s.sqrt();
        let g = r - 1.0;
        let dg = -0.5 * r / s * ds;
        let step = -g / dg;
        // a step at the rounding level of u: converged (before the bracket test, which the
        // rounding of S may fail on either side of the root)
        if step.abs() <= 2.0 * f64::EPSILON * u.abs() {
            return u + step;
        }
        let mut next = u + step;
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
            if next <= lo || next >= hi {
                return u;
            }
        }
        u = next;
    }
    u
}

/// The closest point of the ellipsoid with semi-axes `axes` (principal frame) to `p`.
///
/// Errors only for invalid semi-axes or a non-finite or absurdly far point.
pub fn project(axes: &Vec3, p: &Vec3) -> Result<Projection, ElementError> {
    check_axes(axes)?;
    let scale = axes[0].max(axes[1]).max(axes[2]);
    let a = axes.map(|v| v / scale);
    let ph = p.map(|v| v / scale);
    let r = norm(&ph);
    if !(r < 1e100) {
        return Err(ElementError::Domain(format!("point {p:?} is not finite or too far from the ellipsoid")));
    }
    let a2 = a.map(|v| v * v);
    let m = a2[0].min(a2[1]).min(a2[2]);
    let delta = a2.map(|v| v - m);
    let cc = [a[0] * ph[0].abs(), a[1] * ph[1].abs(), a[2] * ph[2].abs()];
    let hi = norm(&cc);
    let lower = |floor: f64| (0..3).filter(|&i| cc[i] > 0.0).map(|i| cc[i] - delta[i]).fold(floor, f64::max);
    let regular = (0..3).any(|i| delta[i] == 0.0 && cc[i] > 0.0);
    let (u, ridge, s0) = if regular {
        (secular_root(&cc, &delta, lower(0.0), hi), false, 0.0)
    } else {
        // no component along a smallest axis: S is finite at u = 0
        let s0: f64 = (0..3).filter(|&i| cc[i] > 0.0).map(|i| (cc[i] / delta[i]).powi(2)).sum();
        if s0 > 1.0 { (secular_root(&cc, &delta, lower(0.0), hi), false, s0) } else { (0.0, true, s0) }
    };
    let t = u - m;
    let den = delta.map(|v| v + u);
    let mut y = [0.0; 3];
    if ridge {
        let mut first_min = true;
        for i in 0..3 {
            if delta[i] > 0.0 {
                y[i] = a2[i] * ph[i] / den[i];
            } else if first_min {
                y[i] = a[i] * (1.0 - s0).max(0.0).sqrt();
                first_min = false;
            }
        }
    } else {
        for i in 0..3 {
            y[i] = a2[i] * ph[i] / den[i];
        }
    }
    let g = [y[0] / a2[0], y[1] / a2[1], y[2] / a2[2]];
    let gn = norm(&g);
    let normal = g.map(|v| v / gn);
    Ok(Projection {
        distance: t * gn * scale,
        closest: y.map(|v| v * scale),
        normal,
        t: t * scale * scale,
        ridge,
        den: den.map(|v| v * scale * scale),
        u,
        scale,
    })
}

impl Projection {
    /// Hessian of the signed distance at `p` (the point this projection was made for), 1/m;
    /// `None` on the ridge.
    ///
    /// With `q_i = 1/(a_i² + t)`, `g = q∘p` (the unnormalised normal `M y`), `w = q∘y` and
    /// `P = I − n nᵀ`:
    /// ```text
    /// ∇²d = P (diag(q) − (q∘g) wᵀ/(g·w)) / |g|
    /// ```
    /// which is the derivative of the normal `n(y(p))`, finite everywhere off the ridge. On
    /// the surface (`t = 0`) it is the shape operator `P M P/|M y|` (the curvature form), and in
    /// general `Σ κ_k/(1 + d κ_k) t_k t_kᵀ` over the principal directions.
    pub fn hessian(&self, p: &Vec3) -> Option<Mat3> {
        if self.ridge || self.den.iter().any(|d| !(*d > 0.0)) {
            return None;
        }
        let q = self.den.map(|d| 1.0 / d);
        let g = [p[0] * q[0], p[1] * q[1], p[2] * q[2]];
        let w = [self.closest[0] * q[0], self.closest[1] * q[1], self.closest[2] * q[2]];
        let gn = norm(&g);
        let cw = g[0] * w[0] + g[1] * w[1] + g[2] * w[2];
        let n = &self.normal;
        let mut b = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                b[i][j] = -q[i] * g[i] * w[j] / cw;
            }
            b[i][i] += q[i];
        }
        // P B / |g|
        let mut h = [[0.0; 3]; 3];
        for j in 0..3 {
            let nb = n[0] * b[0][j] + n[1] * b[1][j] + n[2] * b[2][j];
            for i in 0..3 {
                h[i][j] = (b[i][j] - n[i] * nb) / gn;
            }
        }
        let mut s = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                s[i][j] = 0.5 * (h[i][j] + h[j][i]);
            }
        }
        if s.iter().flatten().all(|v| v.is_finite()) { Some(s) } else { None }
    }
}

/// The signed distance for a generic scalar, for exact derivatives by dual numbers: the root is
/// found on the real parts by [`project`], then three Newton steps on the secular equation in
/// `T` carry the derivative parts (exact to second order, since the real part is already the
/// root). Fails on the ridge, where the distance is not differentiable.
pub fn signed_distance<T: Real>(axes: &Vec3, p: &Vec3<T>) -> Result<T, ElementError> {
    let re = [p[0].re(), p[1].re(), p[2].re()];
    let pr = project(axes, &re)?;
    if pr.ridge {
        return Err(ElementError::Domain("the point is on the ridge of the ellipsoid (two closest points)".into()));
    }
    let s = pr.scale;
    let a = axes.map(|v| v / s);
    let a2 = a.map(|v| v * v);
    let m = a2[0].min(a2[1]).min(a2[2]);
    let delta = a2.map(|v| v - m);
    let ph = [p[0] / s, p[1] / s, p[2] / s];
    let mut u = c::<T>(pr.u);
    for _ in 0..3 {
        let mut f = c::<T>(-1.0);
        let mut df = c::<T>(0.0);
        for i in 0..3 {
            let r = ph[i] * a[i] / (u + delta[i]);
            f += r * r;
            df -= r * r * 2.0 / (u + delta[i]);
        }
        u -= f / df;
    }
    let g = [0, 1, 2].map(|i| ph[i] / (u + delta[i]));
    Ok((u - m) * norm(&g) * s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::Rng;
    use num_dual::HyperDual64;

    fn residual(axes: &Vec3, p: &Vec3, pr: &Projection) {
        // on the surface, and p − y along the normal
        let y = pr.closest;
        let f: f64 = (0..3).map(|i| (y[i] / axes[i]).powi(2)).sum();
        assert!((f - 1.0).abs() < 1e-14, "closest point off the surface: {f}");
        let dv = [p[0] - y[0], p[1] - y[1], p[2] - y[2]];
        let along = dv[0] * pr.normal[0] + dv[1] * pr.normal[1] + dv[2] * pr.normal[2];
        assert!((along - pr.distance).abs() < 1e-14 * axes[0].max(1.0), "{along} vs {}", pr.distance);
        assert!((norm(&dv) - pr.distance.abs()).abs() < 1e-14 * axes[0].max(1.0));
    }

    #[test]
    fn sphere_distance_is_radius_difference() {
        let r = 0.37;
        let mut rng = Rng::new(3);
        for _ in 0..200 {
            let dir = rng.unit_vector();
            let rad = r * (0.01 + 2.5 * rng.uniform());
            let p = dir.map(|v| v * rad);
            let pr = project(&[r, r, r], &p).unwrap();
            assert!(
                (pr.distance - (rad - r)).abs() < 4.0 * f64::EPSILON * r.max(rad),
                "{} vs {}",
                pr.distance,
                rad - r
            );
            for i in 0..3 {
                assert!((pr.normal[i] - dir[i]).abs() < 1e-14);
            }
        }
        // the centre of a sphere is a ridge point, at distance −R
        let pr = project(&[r, r, r], &[0.0; 3]).unwrap();
        assert!(pr.ridge && (pr.distance + r).abs() < 1e-16);
    }

    /// Brute force: the distance is the minimum of |p − y(θ, φ)| over the surface, polished by
    /// Newton on the two angles.
    fn brute_force(axes: &Vec3, p: &Vec3) -> f64 {
        let surf =
            |th: f64, ph: f64| [axes[0] * th.cos() * ph.cos(), axes[1] * th.sin() * ph.cos(), axes[2] * ph.sin()];
        let dist2 = |th: f64, ph: f64| {
            let y = surf(th, ph);
            (p[0] - y[0]).powi(2) + (p[1] - y[1]).powi(2) + (p[2] - y[2]).powi(2)
        };
        let (mut bt, mut bp, mut best) = (0.0, 0.0, f64::INFINITY);
        let n = 200;
        for i in 0..n {
            for j in 1..n {
                let th = 2.0 * std::f64::consts::PI * i as f64 / n as f64;
                let ph = -std::f64::consts::FRAC_PI_2 + std::f64::consts::PI * j as f64 / n as f64;
                let d = dist2(th, ph);
                if d < best {
                    (bt, bp, best) = (th, ph, d);
                }
            }
        }
        // Newton on the angles with central-difference derivatives of dist2 (a smooth function)
        for _ in 0..50 {
            let h = 1e-4;
            let f = |a: f64, b: f64| dist2(a, b);
            let gx = (f(bt + h, bp) - f(bt - h, bp)) / (2.0 * h);
            let gy = (f(bt, bp + h) - f(bt, bp - h)) / (2.0 * h);
            let hxx = (f(bt + h, bp) - 2.0 * f(bt, bp) + f(bt - h, bp)) / (h * h);
            let hyy = (f(bt, bp + h) - 2.0 * f(bt, bp) + f(bt, bp - h)) / (h * h);
            let hxy = (f(bt + h, bp + h) - f(bt + h, bp - h) - f(bt - h, bp + h) + f(bt - h, bp - h)) / (4.0 * h * h);
            let det = hxx * hyy - hxy * hxy;
            if !(det > 0.0) {
                break;
            }
            bt -= (hyy * gx - hxy * gy) / det;
            bp -= (hxx * gy - hxy * gx) / det;
        }
        // golden-section polish is unnecessary: the minimum value is quadratic in the angle error
        dist2(bt, bp).sqrt()
    }

    #[test]
    fn agrees_with_brute_force_minimisation() {
        let mut rng = Rng::new(11);
        for k in 0..60 {
            let axes = [0.2 + rng.uniform(), 0.2 + rng.uniform(), 0.2 + rng.uniform()];
            let amax = axes[0].max(axes[1]).max(axes[2]);
            // outside points, and inside points near the surface (unique closest point)
            let dir = rng.unit_vector();
            let on = {
                let f: f64 = (0..3).map(|i| (dir[i] / axes[i]).powi(2)).sum();
                dir.map(|v| v / f.sqrt())
            };
            let factor = if k % 3 == 0 { 0.97 } else { 1.0 + 2.0 * rng.uniform() };
            let p = on.map(|v| v * factor);
            let pr = project(&axes, &p).unwrap();
            residual(&axes, &p, &pr);
            let bf = brute_force(&axes, &p);
            assert!((pr.distance.abs() - bf).abs() < 1e-9 * amax, "case {k}: {} vs brute force {bf}", pr.distance);
            assert_eq!(pr.distance < 0.0, factor < 1.0);
        }
    }

    #[test]
    fn degenerate_points_on_axes_and_planes() {
        let axes = [3.0, 2.0, 1.0];
        // on the long axis, outside: closest point is the vertex
        let pr = project(&axes, &[5.0, 0.0, 0.0]).unwrap();
        assert!((pr.distance - 2.0).abs() < 1e-15 && !pr.ridge);
        // on the short axis inside: the vertex (0, 0, ±1) is closest
        let pr = project(&axes, &[0.0, 0.0, 0.4]).unwrap();
        assert!((pr.distance + 0.6).abs() < 1e-15 && !pr.ridge);
        // inside on the long axis near the centre: a ridge point, closest points (x*, 0, ±z*)
        let p = [0.5, 0.0, 0.0];
        let pr = project(&axes, &p).unwrap();
        assert!(pr.ridge);
        residual(&axes, &p, &pr);
        // x* = a² p/(a² − c²) = 9·0.5/8
        assert!((pr.closest[0] - 9.0 * 0.5 / 8.0).abs() < 1e-15);
        assert!(pr.hessian(&p).is_none());
        // inside on the long axis near the vertex: past the centre of curvature, regular again
        let p = [2.9, 0.0, 0.0];
        let pr = project(&axes, &p).unwrap();
        assert!(!pr.ridge && (pr.distance + 0.1).abs() < 1e-15);
        // exactly on the surface, on and off the axes
        for p in [[3.0, 0.0, 0.0], [0.0, -2.0, 0.0], [0.0, 0.0, 1.0]] {
            let pr = project(&axes, &p).unwrap();
            assert!(pr.distance.abs() <= 4.0 * f64::EPSILON * 3.0, "{}", pr.distance);
        }
        let on = [1.2, -1.1, 0.0];
        let z = (1.0 - (1.2f64 / 3.0).powi(2) - (1.1f64 / 2.0).powi(2)).sqrt();
        let p = [on[0], on[1], z];
        let pr = project(&axes, &p).unwrap();
        assert!(pr.distance.abs() < 1e-16, "{}", pr.distance);
        // the centre
        let pr = project(&axes, &[0.0; 3]).unwrap();
        assert!(pr.ridge && (pr.distance + 1.0).abs() < 1e-15);
        // a prolate spheroid with two equal smallest axes, point on the long axis inside
        let pr = project(&[2.0, 1.0, 1.0], &[0.3, 0.0, 0.0]).unwrap();
        assert!(pr.ridge && pr.distance < 0.0);
        residual(&[2.0, 1.0, 1.0], &[0.3, 0.0, 0.0], &pr);
        // points extremely close to a plane of symmetry inside: continuous with the ridge value
        let a = project(&axes, &[0.5, 0.0, 1e-300]).unwrap();
        let b = project(&axes, &[0.5, 0.0, 0.0]).unwrap();
        assert!((a.distance - b.distance).abs() < 1e-15);
        // huge and tiny scales
        for s in [1e-9, 1e9] {
            let pr = project(&axes.map(|v| v * s), &[5.0 * s, 0.0, 0.0]).unwrap();
            assert!((pr.distance - 2.0 * s).abs() < 1e-15 * s);
        }
        assert!(project(&[1.0, 0.0, 1.0], &[1.0, 1.0, 1.0]).is_err());
        assert!(project(&axes, &[f64::NAN, 0.0, 0.0]).is_err());
    }

    #[test]
    fn gradient_and_hessian_match_finite_differences() {
        let mut rng = Rng::new(5);
        let axes = [0.147, 0.2079, 0.0944];
        for k in 0..40 {
            let dir = rng.unit_vector();
            let f: f64 = (0..3).map(|i| (dir[i] / axes[i]).powi(2)).sum();
            let on = dir.map(|v| v / f.sqrt());
            // include points exactly on the surface (the curvature form)
            let factor = if k % 4 == 0 { 1.0 } else { 0.9 + 0.6 * rng.uniform() };
            let p = on.map(|v| v * factor);
            let pr = project(&axes, &p).unwrap();
            let h = pr.hessian(&p).unwrap();
            let step = 1e-6;
            for i in 0..3 {
                let (mut pp, mut pm) = (p, p);
                pp[i] += step;
                pm[i] -= step;
                let (a, b) = (project(&axes, &pp).unwrap(), project(&axes, &pm).unwrap());
                let fd = (a.distance - b.distance) / (2.0 * step);
                assert!((fd - pr.normal[i]).abs() < 1e-8, "gradient {i}: {fd} vs {}", pr.normal[i]);
                for j in 0..3 {
                    let fd2 = (a.normal[j] - b.normal[j]) / (2.0 * step);
                    assert!(
                        (fd2 - h[i][j]).abs() < 1e-5 * (1.0 + h[i][j].abs()),
                        "Hessian {i},{j}: {fd2} vs {}",
                        h[i][j]
                    );
                }
            }
            // dual numbers through the generic version agree
            let d0 = signed_distance(&axes, &p).unwrap();
            assert!((d0 - pr.distance).abs() < 1e-15);
            for i in 0..3 {
                for j in 0..3 {
                    let mut ph = p.map(HyperDual64::from);
                    ph[i].eps1 = 1.0;
                    ph[j].eps2 = 1.0;
                    let v = signed_distance(&axes, &ph).unwrap();
                    assert!((v.eps1 - pr.normal[i]).abs() < 1e-12);
                    let want = h[i][j];
                    assert!((v.eps1eps2 - want).abs() < 1e-9 * (1.0 + want.abs()), "{k}: {} vs {want}", v.eps1eps2);
                }
            }
        }
    }
}
