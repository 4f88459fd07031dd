//! OpenSim's own path over an ellipsoid (`WrapEllipsoid::wrapLine` of OpenSim 4.6, its "hybrid"
//! method), for imported models. Not a shortest path and not a geodesic: OpenSim picks a plane
//! and wraps the curve where that plane cuts the ellipsoid.
//!
//! In the ellipsoid's frame, every coordinate multiplied by `3 / (a + b + c)` (OpenSim's scaling,
//! reproduced because its tolerances apply to the scaled numbers):
//! 1. it wraps where the straight line between the anchors enters and leaves the ellipsoid
//!    between them (and the anchors are not nearly in line with the centre);
//! 2. a point `c1` on the surface: the nearest to where the line crosses the coordinate plane
//!    normal to the axis the line is most parallel to ("Frans"), or to the mean direction of the
//!    nearest points of 298 samples of the line inside ("fan"), blended between the two;
//!    with a quadrant, `c1` is mirrored onto its side;
//! 3. the wrap plane through the anchors and `c1`; each tangent point by OpenSim's damped
//!    least-squares iteration from `c1` (in that plane, on the surface, its tangent line through
//!    the anchor), stopped when the squared residuals sum below 1e-8;
//! 4. the surface length: a polyline of one segment per millimetre of the chord between the
//!    tangent points (at most 499), its vertices where rays in the plane from a point on one of
//!    the axes meet the surface; with a quadrant, the other way round the ellipse when the first
//!    or last segment turns back.
//!
//! The procedure has OpenSim's discontinuities: the segment count (a jump of a fraction of a
//! micrometre when the chord crosses a whole millimetre) and the iterations' stopping tests.
//! Every branch is decided on real parts, so in dual numbers it gives the derivatives of this
//! length between them.

use mollier_core::geometry::{Vec3, cross, dot, norm, sub};
use mollier_core::scalar::{Real, c};

use super::{Code, Quadrant, Wrapped};

/// OpenSim's `MU_BLEND_MIN`: at or below, the fan alone.
const MU_BLEND_MIN: f64 = 0.7073;
/// OpenSim's `MU_BLEND_MAX`: at or above, Frans' point alone.
const MU_BLEND_MAX: f64 = 0.9;
/// OpenSim's `NUM_FAN_SAMPLES`.
const FAN_SAMPLES: usize = 300;
/// OpenSim's `SV_BOUNDARY_BLEND`.
const SV_BOUNDARY_BLEND: f64 = 0.3;
/// OpenSim's `ELLIPSOID_TINY`: the tangent points' squared residuals.
const TINY: f64 = 1e-8;
/// OpenSim's `ROUNDOFF_ERROR` (`EQUAL_WITHIN_ERROR`).
const ROUNDOFF: f64 = 2e-13;

/// `v` over its length, or zero below machine epsilon (OpenSim's `NormalizeOrZero`, which
/// multiplies by the reciprocal).
fn unit<T: Real>(v: &Vec3<T>) -> Vec3<T> {
    let l = norm(v);
    if l.re() >= f64::EPSILON {
        let r = l.recip();
        v.map(|x| x * r)
    } else {
        [c(0.0); 3]
    }
}

/// `|v|`, with a zero derivative where `v` is exactly zero (an anchor on the surface is its own
/// tangent point; the length's derivative there is that of the rest of the path).
pub(crate) fn chord<T: Real>(v: &Vec3<T>) -> T {
    if v.iter().all(|x| x.re() == 0.0) { c(0.0) } else { norm(v) }
}

fn lerp<T: Real>(p: &Vec3<T>, t: T, d: &Vec3<T>) -> Vec3<T> {
    [0, 1, 2].map(|i| p[i] + t * d[i])
}

/// The point of the ellipse `(x/a)² + (y/b)² = 1` nearest `(u, v)` (OpenSim's
/// `closestPointToEllipse`, after Eberly, Graphics Gems IV).
fn ellipse_point<T: Real>(a: f64, b: f64, u: T, v: T) -> (T, T) {
    let (a2, b2) = (a * a, b * b);
    let (a2u2, b2v2) = (u * u * a2, v * v * b2);
    let near_x = u.re().abs() <= ROUNDOFF;
    let near_y = v.re().abs() <= ROUNDOFF;
    if near_x && near_y {
        return if a < b {
            (c(if u.re() < 0.0 { -a } else { a }), v)
        } else {
            (u, c(if v.re() < 0.0 { -b } else { b }))
        };
    }
    if near_x {
        if a >= b || v.re().abs() >= b - a2 / b {
            return (u, c(if v.re() >= 0.0 { b } else { -b }));
        }
        let y = v * b2 / (b2 - a2);
        let ydb = y / b;
        return ((c::<T>(1.0) - ydb * ydb).abs().sqrt() * a, y);
    }
    if near_y {
        if b >= a || u.re().abs() >= a - b2 / a {
            return (c(if u.re() >= 0.0 { a } else { -a }), v);
        }
        let x = u * a2 / (a2 - b2);
        let xda = x / a;
        return (x, (c::<T>(1.0) - xda * xda).abs().sqrt() * b);
    }
    let (ur, vr) = (u.re(), v.re());
    let mut t: T =
        if (ur / a) * (ur / a) + (vr / b) * (vr / b) < 1.0 { c(0.0) } else { (u * u + v * v).sqrt() * a.max(b) };
    let (mut p, mut q) = (t, t);
    for _ in 0..64 {
        p = t + a2;
        q = t + b2;
        let (p2, q2) = (p * p, q * q);
        let f = p2 * q2 - a2u2 * q2 - b2v2 * p2;
        if f.re().abs() < 1e-9 {
            break;
        }
        let fp = (p * q * (p + q) - a2u2 * q - b2v2 * p) * 2.0;
        t -= f / fp;
    }
    (u * a2 / p, v * b2 / q)
}

/// The point of the ellipsoid with semi-axes `a` nearest `w` into `out` (OpenSim's
/// `findClosestPoint`): in the cross-section of the coordinate plane `special` when given, else
/// of the one `w` lies in (within 2e-13; the narrowest if several), else in 3-d. `out` is left as
/// it was when OpenSim's iteration does not converge (OpenSim leaves its output unwritten).
/// `dims`: the unscaled semi-axes (OpenSim ranks the cross-sections by them).
fn closest<T: Real>(a: &[f64; 3], dims: &[f64; 3], w: &Vec3<T>, special: Option<usize>, out: &mut Vec3<T>) {
    let mut axis = special;
    if axis.is_none() {
        let mut least = f64::INFINITY;
        for i in 0..3 {
            if w[i].re().abs() <= ROUNDOFF {
                let sum: f64 = (0..3).filter(|&j| j != i).map(|j| dims[j]).sum();
                if least > sum {
                    axis = Some(i);
                    least = sum;
                }
            }
        }
    }
    match axis {
        Some(0) => {
            let (y, z) = ellipse_point(a[1], a[2], w[1], w[2]);
            *out = [w[0], y, z];
        }
        Some(1) => {
            let (z, x) = ellipse_point(a[2], a[0], w[2], w[0]);
            *out = [x, w[1], z];
        }
        Some(_) => {
            let (x, y) = ellipse_point(a[0], a[1], w[0], w[1]);
            *out = [x, y, w[2]];
        }
        None => {
            let (a2, b2, c2) = (a[0] * a[0], a[1] * a[1], a[2] * a[2]);
            let (u, v, z) = (w[0], w[1], w[2]);
            let (a2u2, b2v2, c2w2) = (u * u * a2, v * v * b2, z * z * c2);
            let (ur, vr, zr) = (u.re(), v.re(), z.re());
            let inside = (ur / a[0]) * (ur / a[0]) + (vr / a[1]) * (vr / a[1]) + (zr / a[2]) * (zr / a[2]) < 1.0;
            let mut t: T = if inside { c(0.0) } else { (u * u + v * v + z * z).sqrt() * a[0].max(a[1]).max(a[2]) };
            for _ in 0..64 {
                let (p, q, r) = (t + a2, t + b2, t + c2);
                let (p2, q2, r2) = (p * p, q * q, r * r);
                let f = p2 * q2 * r2 - a2u2 * q2 * r2 - b2v2 * p2 * r2 - c2w2 * p2 * q2;
                if f.re().abs() < 1e-9 {
                    *out = [u * a2 / p, v * b2 / q, z * c2 / r];
                    return;
                }
                let (pq, pr, qr) = (p * q, p * r, q * r);
                let pqr = p * q * r;
                let fp = (pqr * (qr + pr + pq) - a2u2 * qr * (q + r) - b2v2 * pr * (p + r) - c2w2 * pq * (p + q)) * 2.0;
                t -= f / fp;
            }
        }
    }
}

/// The residuals of OpenSim's tangent-point conditions at `r` (with `d1`): in the plane
/// `vs·r + vs4 = 0`, on the surface, and two for the tangent plane through `p`.
fn residuals<T: Real>(r: &Vec3<T>, d1: T, p: &Vec3<T>, a: &[f64; 3], vs: &Vec3<T>, vs4: T) -> ([T; 4], T) {
    let nr: Vec3<T> = [0, 1, 2].map(|i| r[i] * 2.0 / (a[i] * a[i]));
    let mut e1 = c::<T>(-1.0);
    for i in 0..3 {
        e1 += (r[i] / a[i]) * (r[i] / a[i]);
    }
    let ee = [dot(vs, r) + vs4, e1, dot(&nr, r) + d1, dot(&nr, p) + d1];
    let ssq = ee[0] * ee[0] + ee[1] * ee[1] + ee[2] * ee[2] + ee[3] * ee[3];
    (ee, ssq)
}

/// The inverse of a 4×4 matrix by Gauss-Jordan elimination with partial pivoting.
fn invert4<T: Real>(m: &[[T; 4]; 4]) -> [[T; 4]; 4] {
    let mut a = *m;
    let mut inv = [[c::<T>(0.0); 4]; 4];
    for (i, row) in inv.iter_mut().enumerate() {
        row[i] = c(1.0);
    }
    for col in 0..4 {
        let piv = (col..4).max_by(|&i, &j| a[i][col].re().abs().total_cmp(&a[j][col].re().abs())).unwrap_or(col);
        a.swap(col, piv);
        inv.swap(col, piv);
        let d = a[col][col].recip();
        for j in 0..4 {
            a[col][j] *= d;
            inv[col][j] *= d;
        }
        for i in (0..4).filter(|&i| i != col) {
            let f = a[i][col];
            for j in 0..4 {
                let (aj, ij) = (a[col][j], inv[col][j]);
                a[i][j] -= f * aj;
                inv[i][j] -= f * ij;
            }
        }
    }
    inv
}

/// OpenSim's tangent point (`calcTangentPoint`): `r` moved from where it starts, by a damped
/// Gauss-Newton iteration on [`residuals`], to where the line from `p` touches the surface in
/// the plane (`pe`: `p`'s `(x/a)² + … − 1`; within 1e-4 of the surface, `p` itself).
fn tangent_point<T: Real>(pe: f64, r: &mut Vec3<T>, p: &Vec3<T>, a: &[f64; 3], vs: &Vec3<T>, vs4: T) {
    if pe.abs() < 0.0001 {
        *r = *p;
        return;
    }
    let mut d1 = -dot(&[0, 1, 2].map(|i| r[i] * 2.0 / (a[i] * a[i])), r);
    let (mut ee, mut ssq) = residuals(r, d1, p, a, vs, vs4);
    let mut ssqo = ssq;
    let mut alpha = 0.01;
    let pm = unit(p);
    for _ in 0..50 {
        if !(ssq.re() > TINY) {
            break;
        }
        let mut j = [[c::<T>(0.0); 4]; 4];
        for i in 0..3 {
            let a2 = a[i] * a[i];
            j[i] = [vs[i], r[i] * 2.0 / a2, r[i] * 2.0 * 2.0 / a2, p[i] * 2.0 / a2];
        }
        j[3] = [c(0.0), c(0.0), c(1.0), c(1.0)];
        let pcos = dot(&unit(&sub(p, r)), &pm);
        let dd = if pcos.re() > 0.1 { c::<T>(1.0) - pcos.powf(100.0) } else { c(1.0) };
        let v: [T; 4] = [0, 1, 2, 3].map(|i| {
            let mut s = c::<T>(0.0);
            for k in 0..4 {
                s -= j[i][k] * ee[k];
            }
            s
        });
        let mut jj = [[c::<T>(0.0); 4]; 4];
        for i in 0..4 {
            for k in 0..4 {
                for l in 0..4 {
                    jj[i][k] += j[i][l] * j[k][l];
                }
            }
        }
        let diag = [0, 1, 2, 3].map(|i| jj[i][i]);
        let mut vt = [c::<T>(0.0); 4];
        let mut tries = 0;
        while ssq.re() >= ssqo.re() && tries < 1000 {
            for i in 0..4 {
                jj[i][i] = diag[i] * (1.0 + alpha);
            }
            let inv = invert4(&jj);
            for i in 0..4 {
                vt[i] = c(0.0);
                for k in 0..4 {
                    vt[i] += dd * inv[i][k] * v[k] / 16.0;
                }
            }
            for i in 0..3 {
                r[i] += vt[i];
            }
            d1 += vt[3];
            ssqo = ssq;
            ssq = residuals(r, d1, p, a, vs, vs4).1;
            alpha *= 4.0;
            tries += 1;
        }
        alpha /= 8.0;
        let mut fakt = 0.5;
        tries = 0;
        while ssq.re() <= ssqo.re() && tries < 1000 {
            fakt *= 2.0;
            for i in 0..3 {
                r[i] += vt[i] * fakt;
            }
            d1 += vt[3] * fakt;
            ssqo = ssq;
            ssq = residuals(r, d1, p, a, vs, vs4).1;
            tries += 1;
        }
        for i in 0..3 {
            r[i] -= vt[i] * fakt;
        }
        d1 -= vt[3] * fakt;
        (ee, ssq) = residuals(r, d1, p, a, vs, vs4);
        ssqo = ssq;
    }
}

/// OpenSim's surface path (`CalcDistanceOnEllipsoid`) from `r1` to `r2` in the plane
/// `vs·r + vs4 = 0`: its vertices and length (scaled coordinates; `factor` the scaling).
fn surface_path<T: Real>(
    r1: &Vec3<T>,
    r2: &Vec3<T>,
    a: &[f64; 3],
    vs: &Vec3<T>,
    vs4: T,
    far: bool,
    factor: f64,
) -> (Vec<Vec3<T>>, T) {
    let len = norm(&sub(r1, r2)) / factor;
    if len.re() < 0.001 {
        return (vec![*r1, *r2], len * factor);
    }
    let n = ((len.re() / 0.001) as usize).min(499);
    // rays from a0, the plane's point on the coordinate axis most normal to it
    let mut imax = 0;
    for i in 1..3 {
        if vs[i].re().abs() > vs[imax].re().abs() {
            imax = i;
        }
    }
    let mut a0 = [c::<T>(0.0); 3];
    a0[imax] = -vs4 / vs[imax];
    let (ar1, ar2) = (unit(&sub(r1, &a0)), unit(&sub(r2, &a0)));
    let phi0 = dot(&ar1, &ar2).acos();
    let dphi = if far { -(c::<T>(2.0 * std::f64::consts::PI) - phi0) / n as f64 } else { phi0 / n as f64 };
    let vsz = unit(&cross(&ar1, &ar2));
    let vsy = cross(&vsz, &ar1);
    let f2: Vec3<T> = [0, 1, 2].map(|j| a0[j] / a[j]);
    let cc = dot(&f2, &f2) - 1.0;
    let mut pts = Vec::with_capacity(n + 1);
    pts.push(*r1);
    for i in 0..n - 1 {
        let phi = dphi * (i + 1) as f64;
        let (cp, sp) = (phi.cos(), phi.sin());
        let r: Vec3<T> = [0, 1, 2].map(|j| ar1[j] * cp + vsy[j] * sp);
        let f1: Vec3<T> = [0, 1, 2].map(|j| r[j] / a[j]);
        let aa = dot(&f1, &f1);
        let bb = dot(&f1, &f2) * 2.0;
        let mu3 = (-bb + (bb * bb - aa * cc * 4.0).sqrt()) / (aa * 2.0);
        pts.push(lerp(&a0, mu3, &r));
    }
    pts.push(*r2);
    let mut total = c::<T>(0.0);
    for w in pts.windows(2) {
        total += norm(&sub(&w[1], &w[0]));
    }
    (pts, total)
}

/// OpenSim's path over the ellipsoid with semi-axes `dims` (m) from `p1` to `p2` (ellipsoid
/// frame, centre at the origin), with OpenSim's quadrant (axis 0, 1 or 2 and its sign) if any:
/// its code and, when it wraps, the path.
pub fn ellipsoid<T: Real>(
    dims: &[f64; 3],
    quadrant: Option<Quadrant>,
    anchor1: &Vec3<T>,
    anchor2: &Vec3<T>,
) -> (Code, Option<Wrapped<T>>) {
    let factor = 3.0 / (dims[0] + dims[1] + dims[2]);
    let a = dims.map(|d| d * factor);
    let (p1, p2) = (anchor1.map(|v| v * factor), anchor2.map(|v| v * factor));
    let level = |p: &Vec3<T>| {
        let mut e = -1.0;
        for i in 0..3 {
            e += (p[i].re() / a[i]) * (p[i].re() / a[i]);
        }
        e
    };
    let (p1e, p2e) = (level(&p1), level(&p2));
    if p1e < -0.0001 || p2e < -0.0001 {
        return (Code::Inside, None);
    }
    let p1p2 = sub(&p1, &p2);
    if (dot(&unit(&p1), &unit(&p2)).re() - 1.0).abs() < 0.0001 {
        return (Code::NoWrap, None);
    }
    // where the line p2 + l (p1 − p2) meets the surface: both crossings strictly between
    let f1 = [0, 1, 2].map(|i| p1p2[i].re() / a[i]);
    let f2 = [0, 1, 2].map(|i| p2[i].re() / a[i]);
    let aa = dot(&f1, &f1);
    let bb = 2.0 * dot(&f1, &f2);
    let cc = dot(&f2, &f2) - 1.0;
    let disc = bb * bb - 4.0 * aa * cc;
    if disc < 0.0 {
        return (Code::NoWrap, None);
    }
    let between = |l: f64| 0.0 < l && l < 1.0;
    if !(between((-bb + disc.sqrt()) / (2.0 * aa)) && between((-bb - disc.sqrt()) / (2.0 * aa))) {
        return (Code::NoWrap, None);
    }
    // the same crossings in T
    let (f1, f2): (Vec3<T>, Vec3<T>) = ([0, 1, 2].map(|i| p1p2[i] / a[i]), [0, 1, 2].map(|i| p2[i] / a[i]));
    let (aa, bb, cc) = (dot(&f1, &f1), dot(&f1, &f2) * 2.0, dot(&f2, &f2) - 1.0);
    let sd = (bb * bb - aa * cc * 4.0).sqrt();
    let r1 = lerp(&p2, (-bb + sd) / (aa * 2.0), &p1p2);
    let r2 = lerp(&p2, (-bb - sd) / (aa * 2.0), &p1p2);
    let (mut c1, fan_weight) = plane_point(&a, dims, &p1p2, &r1, &r2);
    let mut start = c1;
    if let Some((axis, sign)) = quadrant {
        // mirror c1 onto the quadrant's side, pulled back toward the plane by the fan's weight
        if (if c1[axis].re() >= 0.0 { 1.0 } else { -1.0 }) != sign {
            let orig = c1[axis];
            c1[axis] = -c1[axis];
            start = c1;
            if let Some(w) = fan_weight.filter(|w| w.re() > 0.0) {
                let w = if w.re() > 1.0 { c(1.0) } else { w };
                let bisection = (orig + c1[axis]) / 2.0;
                c1[axis] += w * (bisection - c1[axis]);
                let tc1 = c1;
                closest(&a, dims, &tc1, None, &mut c1);
            }
        }
    }
    // the wrap plane through p1, p2 and c1
    let vs = unit(&cross(&p1p2, &sub(&p1, &c1)));
    let vs4 = -dot(&vs, &c1);
    let (mut t1, mut t2) = (start, start);
    tangent_point(p1e, &mut t1, &p1, &a, &vs, vs4);
    tangent_point(p2e, &mut t2, &p2, &a, &vs, vs4);
    let (mut pts, mut surface) = surface_path(&t1, &t2, &a, &vs, vs4, false, factor);
    if quadrant.is_some() && pts.len() > 2 {
        // a wrong-way wrap: the first or last segment turns back toward its anchor
        let (w1, w2) = (pts[1], pts[pts.len() - 2]);
        let back = |r: &Vec3<T>, p: &Vec3<T>, w: &Vec3<T>| dot(&unit(&sub(p, r)), &unit(&sub(w, r))).re() > 0.0;
        if back(&t1, &p1, &w1) || back(&t2, &p2, &w2) {
            (pts, surface) = surface_path(&t1, &t2, &a, &vs, vs4, true, factor);
        }
    }
    drop(pts);
    let (r1, r2, surface) = (t1.map(|v| v / factor), t2.map(|v| v / factor), surface / factor);
    let length = chord(&sub(&r1, anchor1)) + surface + chord(&sub(anchor2, &r2));
    (Code::Mandatory, Some(Wrapped { length, r1, r2, surface }))
}

/// OpenSim's point `c1` of the wrap plane (its "hybrid" method) from the crossings `r1`, `r2` of
/// the line along `p1p2`, and the fan's weight in it (`None` where the fan was not used: OpenSim
/// marks that with −∞ and its test for −∞ is never true, so a mirrored `c1` is then not pulled
/// back).
fn plane_point<T: Real>(
    a: &[f64; 3],
    dims: &[f64; 3],
    p1p2: &Vec3<T>,
    r1: &Vec3<T>,
    r2: &Vec3<T>,
) -> (Vec3<T>, Option<T>) {
    let r1r2 = sub(r2, r1);
    let mut mu: Vec3<T> = unit(p1p2).map(|v| v.abs());
    let mut t = [c::<T>(0.0); 3];
    let mut t_sv = [[c::<T>(0.0); 3]; 3];
    let mut t_c1 = [[c::<T>(0.0); 3]; 3];
    for i in 0..3 {
        t[i] = -r1[i] / r1r2[i];
        t_sv[i] = lerp(r1, t[i], &r1r2);
        closest(a, dims, &t_sv[i], Some(i), &mut t_c1[i]);
    }
    let mut best = 0;
    for i in 1..3 {
        if mu[i].re() > mu[best].re() {
            best = i;
        }
    }
    if mu[best].re() > MU_BLEND_MIN {
        // Frans' point fades out where it leaves the chord's middle
        let tb = t[best].re();
        // OpenSim's comparisons, which a NaN passes (`contains` would not)
        #[allow(clippy::manual_range_contains)]
        let s: T = if tb < 0.0 || tb > 1.0 {
            c(0.0)
        } else if tb < SV_BOUNDARY_BLEND {
            t[best] / SV_BOUNDARY_BLEND
        } else if tb > 1.0 - SV_BOUNDARY_BLEND {
            (-t[best] + 1.0) / SV_BOUNDARY_BLEND
        } else {
            c(1.0)
        };
        if s.re() < 1.0 {
            mu[best] = s * (mu[best] - MU_BLEND_MIN) + MU_BLEND_MIN;
        }
    }
    // (OpenSim also blends a point `sv` of the chord, which nothing reads)
    let mut c1 = [c::<T>(0.0); 3];
    if mu[best].re() > MU_BLEND_MIN {
        c1 = t_c1[best];
    }
    if mu[best].re() >= MU_BLEND_MAX {
        return (c1, None);
    }
    // the fan: the mean direction to the surface from the samples of the chord
    let mid = lerp(r1, c(0.5), &r1r2);
    let mut sum = [c::<T>(0.0); 3];
    // OpenSim's outputs keep their last values where its iteration does not converge
    let mut near = t_c1[0];
    for i in 1..FAN_SAMPLES - 1 {
        let sample = lerp(r1, c(i as f64 / FAN_SAMPLES as f64), &r1r2);
        closest(a, dims, &sample, None, &mut near);
        let v = unit(&sub(&near, &sample));
        for j in 0..3 {
            sum[j] += v[j];
        }
    }
    let sum = unit(&sum);
    let fan = [0, 1, 2].map(|i| mid[i] + sum[i]);
    if mu[best].re() <= MU_BLEND_MIN {
        closest(a, dims, &fan, None, &mut c1);
        return (c1, Some(c(1.0)));
    }
    let tt = (mu[best] - MU_BLEND_MIN) / (MU_BLEND_MAX - MU_BLEND_MIN);
    let one_minus = -tt + 1.0;
    let mut on_fan = t_c1[1];
    closest(a, dims, &fan, None, &mut on_fan);
    let blend: Vec3<T> = [0, 1, 2].map(|i| tt * c1[i] + one_minus * on_fan[i]);
    closest(a, dims, &blend, None, &mut c1);
    (c1, Some(one_minus))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the wrap plane cuts off a small cap of the ellipsoid, the plane's point on the axis
    /// most normal to it lies outside the ellipsoid (its `(x/a)² + … = 1.065`), the rays of the
    /// surface path miss the surface, and OpenSim 4.6's length is NaN. The anchors (ellipsoid
    /// frame) are OpenSim's at θ = −0.32 in `ellipsoid_minus_y_on_arm` of
    /// `tools/peer_opensim_synthetic_wraps.py` built with semi-axes (0.045, 0.03, 0.04) and
    /// rotation (−0.3, 0.2, 0.5), where OpenSim's `getLength` gave NaN: so does this, and the
    /// span is refused.
    /// The span's gradient and Hessian are those of its length (central differences, h = 1e-6
    /// m), through the fan, Frans' point, their blend and a quadrant's mirrored point.
    #[test]
    fn derivatives_are_those_of_the_length() {
        let cases: [(Vec3, Option<Quadrant>, Vec3, Vec3); 4] = [
            ([0.05, 0.035, 0.045], None, [-0.1, 0.03, 0.02], [0.12, 0.01, -0.03]),
            ([0.09, 0.025, 0.03], None, [-0.15, 0.02, 0.01], [0.14, 0.015, -0.01]),
            ([0.05, 0.04, 0.045], None, [-0.1, 0.03, 0.09], [0.12, 0.01, -0.06]),
            ([0.045, 0.03, 0.05], Some((1, -1.0)), [-0.1, 0.02, 0.02], [0.12, 0.01, -0.03]),
        ];
        for (semi_axes, quadrant, p, s) in cases {
            let obj = crate::opensim::Object::Ellipsoid { semi_axes, quadrant };
            assert_eq!(obj.wrap(&p, &s).0, Code::Mandatory, "{obj:?}");
            crate::opensim::tests::assert_derivatives(&obj, &p, &s, 1e-4);
        }
    }

    #[test]
    fn a_cap_cut_off_near_a_tip_gives_opensims_nan() {
        let p1: Vec3 = [-0.1781365080781674, 0.07935270201181721, -0.03793986228524465];
        let p2 = [0.2094059838120744, -0.03361504131399039, 0.0043775496748688705];
        let obj = crate::opensim::Object::Ellipsoid { semi_axes: [0.045, 0.03, 0.04], quadrant: Some((1, -1.0)) };
        let (code, w) = obj.wrap(&p1, &p2);
        assert_eq!(code, Code::Mandatory);
        assert!(w.unwrap().length.is_nan());
        assert!(crate::opensim::span_of(&obj, &p1, &p2, false).is_err());
    }
}
