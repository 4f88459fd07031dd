//! Spans: the shortest path between two anchor points that stays out of one obstacle, as a
//! function `L(a, b)` of the anchors' coordinates in the obstacle's frame, with its gradient and
//! Hessian (the 6 variables are `a_x, a_y, a_z, b_x, b_y, b_z`).
//!
//! When the straight line from `a` to `b` clears the obstacle the span is that line. Otherwise
//! it is a straight segment from `a` to a tangent point, a geodesic over the surface, and a
//! straight segment from a second tangent point to `b`. Either way `∂L/∂a` is the unit vector
//! from the path's first contact (or `b`) to `a`, and `∂L/∂b` the unit vector from the last
//! contact (or `a`) to `b` (the tangent points make the length stationary). At touch-down the
//! tangent points meet on the straight line, so `L` and its gradient are continuous; only the
//! Hessian jumps.

use mollier_core::ElementError;
use mollier_core::geometry::{Vec3, cross, dot, norm, sub};
use mollier_core::scalar::{Real, c};

/// Length, gradient and Hessian of a span, in the obstacle's frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SpanEval {
    /// Length (m).
    pub length: f64,
    /// `∂L/∂(a, b)`, 6.
    pub grad: [f64; 6],
    /// `∂²L/∂(a, b)²`, 6 x 6 row-major (zero unless asked for).
    pub hess: [f64; 36],
    /// Where the path touches the obstacle, if it does.
    pub wrap: Option<Contact>,
}

impl Default for SpanEval {
    /// A span of length 0 with zero derivatives, not wrapped.
    fn default() -> Self {
        Self { length: 0.0, grad: [0.0; 6], hess: [0.0; 36], wrap: None }
    }
}

/// The contact of a wrapped span with its obstacle (obstacle frame).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Where the path from `a` meets the surface.
    pub t_in: Vec3,
    /// Where the path to `b` leaves the surface.
    pub t_out: Vec3,
    /// Length of the path on the surface (m).
    pub surface_length: f64,
}

fn outer(s: f64, a: &Vec3, b: &Vec3, h: &mut [f64; 36], ra: usize, cb: usize) {
    for i in 0..3 {
        for j in 0..3 {
            h[(ra + i) * 6 + cb + j] += s * a[i] * b[j];
        }
    }
}

fn identity_block(s: f64, h: &mut [f64; 36], r: usize, cc: usize) {
    for i in 0..3 {
        h[(r + i) * 6 + cc + i] += s;
    }
}

/// The straight span `|b − a|`. Fails when the anchors coincide.
pub fn straight(a: &Vec3, b: &Vec3, want_hess: bool) -> Result<SpanEval, ElementError> {
    let d = sub(b, a);
    let l = norm(&d);
    if !(l > 0.0) || !l.is_finite() {
        return Err(ElementError::Domain(format!("two consecutive points of the path coincide (distance {l:e} m)")));
    }
    let u = d.map(|v| v / l);
    let mut ev = SpanEval { length: l, grad: [-u[0], -u[1], -u[2], u[0], u[1], u[2]], hess: [0.0; 36], wrap: None };
    if want_hess {
        let h = &mut ev.hess;
        for (r, cc, s) in [(0, 0, 1.0), (3, 3, 1.0), (0, 3, -1.0), (3, 0, -1.0)] {
            identity_block(s / l, h, r, cc);
            outer(-s / l, &u, &u, h, r, cc);
        }
    }
    Ok(ev)
}

/// The tangent length `h = √(r² − R²)` of an anchor at distance `r` from a centre (axis). The
/// angle between the anchor and its tangent point is `α = atan2(h, R)`.
fn tangent<T: Real>(r: T, radius: f64) -> T {
    ((r - radius) * (r + radius)).sqrt()
}

/// `θ − α_p − α_s` for the angle `θ = atan2(sn, cs)` (`θ ∈ [0, π]`) and the tangent angles of
/// tangent lengths `hp`, `hs`: one `atan2` of the product `(cs + i sn)(R − i h_p)(R − i h_s)`, exact
/// near zero (touch-down), where a difference of angles would cancel.
pub(crate) fn wrap_angle<T: Real>(sn: T, cs: T, radius: f64, hp: T, hs: T) -> T {
    let (a, b) = (cs * radius + sn * hp, sn * radius - cs * hp);
    (b * radius - a * hs).atan2(a * radius + b * hs)
}

fn inside(what: &str, which: &str, r: f64, radius: f64) -> ElementError {
    ElementError::Domain(format!(
        "the path's {which} anchor is inside the {what} ({:.6} m from its {}, radius {radius} m)",
        r,
        if what == "cylinder" { "axis" } else { "centre" }
    ))
}

/// A sphere of radius `radius` at the origin: closed form in the plane of `a`, the centre and
/// `b`.
///
/// With `p = a`, `s = b`, `θ = ∠(p, s)`, `cos α_p = R/|p|`, `h_p = √(|p|² − R²)`:
/// `L = h_p + h_s + R (θ − α_p − α_s)` when `θ > α_p + α_s`, else `|s − p|`. Its Hessian blocks
/// (with `u = p̂`, `n` the plane normal, `e1 = n × u`, `v = ŝ`, `e2 = v × n`):
/// ```text
/// ∂²L/∂p² = R²/(|p|² h_p) u uᵀ + h_p/|p|² (I − u uᵀ) + R/|p|² (u e1ᵀ + e1 uᵀ + cot θ n nᵀ)
/// ∂²L/∂p∂s = −R/|p × s| n nᵀ
/// ```
/// and likewise for `s`. Fails when an anchor is inside the sphere, or when the path wraps and
/// `a`, the centre and `b` are in line (the plane of the path is undefined).
pub fn sphere(radius: f64, p: &Vec3, s: &Vec3, want_hess: bool) -> Result<SpanEval, ElementError> {
    let (rp, rs) = (norm(p), norm(s));
    if !(rp > radius) {
        return Err(inside("sphere", "first", rp, radius));
    }
    if !(rs > radius) {
        return Err(inside("sphere", "second", rs, radius));
    }
    let (hp, hs) = (tangent(rp, radius), tangent(rs, radius));
    let cr = cross(p, s);
    let cn = norm(&cr);
    let ps = dot(p, s);
    let phi = wrap_angle(cn, ps, radius, hp, hs);
    if !(phi > 0.0) {
        return straight(p, s, want_hess);
    }
    if !(cn > 1e-12 * rp * rs) {
        return Err(ElementError::Domain(
            "the path's anchors and the sphere's centre are in line: the path may pass either side".into(),
        ));
    }
    let n = cr.map(|v| v / cn);
    let u = p.map(|v| v / rp);
    let v = s.map(|v| v / rs);
    let e1 = cross(&n, &u);
    let e2 = cross(&v, &n);
    let r = radius;
    let mut ev = SpanEval {
        length: hp + hs + r * phi,
        grad: [0.0; 6],
        hess: [0.0; 36],
        wrap: Some(Contact {
            t_in: [0, 1, 2].map(|i| r * (r * u[i] + hp * e1[i]) / rp),
            t_out: [0, 1, 2].map(|i| r * (r * v[i] + hs * e2[i]) / rs),
            surface_length: r * phi,
        }),
    };
    for i in 0..3 {
        ev.grad[i] = (hp * u[i] - r * e1[i]) / rp;
        ev.grad[3 + i] = (hs * v[i] - r * e2[i]) / rs;
    }
    if want_hess {
        let cot = ps / cn;
        let h = &mut ev.hess;
        for (o, rr, hh, w, e) in [(0, rp, hp, &u, &e1), (3, rs, hs, &v, &e2)] {
            let r2 = rr * rr;
            outer(r * r / (r2 * hh) - hh / r2, w, w, h, o, o);
            identity_block(hh / r2, h, o, o);
            outer(r / r2, w, e, h, o, o);
            outer(r / r2, e, w, h, o, o);
            outer(r * cot / r2, &n, &n, h, o, o);
        }
        outer(-r / cn, &n, &n, h, 0, 3);
        outer(-r / cn, &n, &n, h, 3, 0);
    }
    Ok(ev)
}

/// The same length as [`sphere`] for a generic scalar, on the branch (`wrapped` or not) the
/// `f64` evaluation chose; also its gradient (6).
pub fn sphere_generic<T: Real>(radius: f64, p: &Vec3<T>, s: &Vec3<T>, wrapped: bool) -> (T, [T; 6]) {
    if !wrapped {
        return straight_generic(p, s);
    }
    let (rp, rs) = (norm(p), norm(s));
    let (hp, hs) = (tangent(rp, radius), tangent(rs, radius));
    let cr = cross(p, s);
    let cn = norm(&cr);
    let len = hp + hs + wrap_angle(cn, dot(p, s), radius, hp, hs) * radius;
    let n = cr.map(|v| v / cn);
    let u = p.map(|v| v / rp);
    let v = s.map(|v| v / rs);
    let e1 = cross(&n, &u);
    let e2 = cross(&v, &n);
    let mut g = [c::<T>(0.0); 6];
    for i in 0..3 {
        g[i] = (hp * u[i] - e1[i] * radius) / rp;
        g[3 + i] = (hs * v[i] - e2[i] * radius) / rs;
    }
    (len, g)
}

/// `|s − p|` and its gradient for a generic scalar.
pub fn straight_generic<T: Real>(p: &Vec3<T>, s: &Vec3<T>) -> (T, [T; 6]) {
    let d = sub(s, p);
    let l = norm(&d);
    let u = d.map(|v| v / l);
    (l, [-u[0], -u[1], -u[2], u[0], u[1], u[2]])
}

/// Which way a path goes around a cylinder.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Side {
    /// The shorter way (no constraint): like a sphere, the path may flip sides when the straight
    /// line crosses the axis.
    Either,
    /// Over the face of the cylinder that the unit vector `(d_x, d_y)` (cylinder frame, normal
    /// to the axis) points at. The path then never crosses the back line (the direction `−d`):
    /// it wraps even when the straight line passes behind the cylinder, as a band hooked on
    /// the cylinder does.
    Toward([f64; 2]),
}

/// The in-plane wrap angle `φ = Δ − α_p − α_s` of a cylinder span and its sense `σ = ±1`
/// (`+1`: counter-clockwise seen from `+z`), where `Δ ≥ 0` is the angle from `p` to `s` about the
/// axis that the path goes through and `hp`, `hs` the tangent lengths.
fn cylinder_angle<T: Real>(side: &Side, p: &[T; 2], s: &[T; 2], radius: f64, hp: T, hs: T) -> (T, f64) {
    match side {
        Side::Either => {
            let cr = p[0] * s[1] - p[1] * s[0];
            let dt = p[0] * s[0] + p[1] * s[1];
            (wrap_angle(cr.abs(), dt, radius, hp, hs), if cr.re() >= 0.0 { 1.0 } else { -1.0 })
        }
        Side::Toward(d) => {
            let ang = |v: &[T; 2]| (v[1] * d[0] - v[0] * d[1]).atan2(v[0] * d[0] + v[1] * d[1]);
            let dg = ang(s) - ang(p);
            // α_p + α_s in one atan2: the angle of (R + i h_p)(R + i h_s)
            let alphas = ((hp + hs) * radius).atan2(-(hp * hs) + radius * radius);
            (dg.abs() - alphas, if dg.re() >= 0.0 { 1.0 } else { -1.0 })
        }
    }
}

/// A cylinder of radius `radius` along the local z axis through the origin, infinitely long
/// (`length` `None`) or `length` long and centred on the origin: the path is tangent lines and a
/// helix, i.e. a straight line on the developed surface.
///
/// In the plane normal to the axis the path length is `L_xy = h_p + h_s + R φ` with
/// `φ = Δ − α_p − α_s` the wrap angle (`Δ` from `side`); along the axis the rise is
/// `Δz = s_z − p_z`; and since the whole path unrolls into one straight line,
/// `L = √(L_xy² + Δz²)`. No wrap when `φ ≤ 0`: then `L = |s − p|`.
///
/// A finite cylinder is OpenSim's (`WrapCylinder`): the path is straight when both of its
/// contact points lie beyond the ends (`|z| > length/2`, either end), or when an anchor is
/// within the radius of the axis but beyond the ends; otherwise the path is the infinite
/// cylinder's. The length then jumps where the contacts leave the cylinder, as OpenSim's does.
///
/// Fails when an anchor is inside the cylinder, or when `side` is [`Side::Either`], the path
/// wraps and the plane projections of `a`, the axis and `b` are in line.
pub fn cylinder(
    radius: f64,
    side: &Side,
    length: Option<f64>,
    p: &Vec3,
    s: &Vec3,
    want_hess: bool,
) -> Result<SpanEval, ElementError> {
    let beyond = |z: f64| length.is_some_and(|l| z.abs() > 0.5 * l);
    let (p2, s2) = ([p[0], p[1]], [s[0], s[1]]);
    let rp = (p2[0] * p2[0] + p2[1] * p2[1]).sqrt();
    let rs = (s2[0] * s2[0] + s2[1] * s2[1]).sqrt();
    if !(rp > radius) && beyond(p[2]) || !(rs > radius) && beyond(s[2]) {
        return straight(p, s, want_hess);
    }
    if !(rp > radius) {
        return Err(inside("cylinder", "first", rp, radius));
    }
    if !(rs > radius) {
        return Err(inside("cylinder", "second", rs, radius));
    }
    let (hp, hs) = (tangent(rp, radius), tangent(rs, radius));
    let (phi, sigma) = cylinder_angle(side, &p2, &s2, radius, hp, hs);
    if !(phi > 0.0) {
        return straight(p, s, want_hess);
    }
    if *side == Side::Either && !((p2[0] * s2[1] - p2[1] * s2[0]).abs() > 1e-12 * rp * rs) {
        return Err(ElementError::Domain(
            "the path's anchors and the cylinder's axis are in line: the path may pass either side (give `side`)"
                .into(),
        ));
    }
    let r = radius;
    let lxy = hp + hs + r * phi;
    let dz = s[2] - p[2];
    let len = (lxy * lxy + dz * dz).sqrt();
    // in-plane gradient of L_xy: tangent-length part along r̂, wrap-angle part R σ ∇(γ_s − γ_p)
    let gxy = [
        (hp * p2[0] + sigma * r * p2[1]) / (rp * rp),
        (hp * p2[1] - sigma * r * p2[0]) / (rp * rp),
        0.0,
        (hs * s2[0] - sigma * r * s2[1]) / (rs * rs),
        (hs * s2[1] + sigma * r * s2[0]) / (rs * rs),
        0.0,
    ];
    let gz = [0.0, 0.0, -1.0, 0.0, 0.0, 1.0];
    let mut grad = [0.0; 6];
    for i in 0..6 {
        grad[i] = (lxy * gxy[i] + dz * gz[i]) / len;
    }
    // tangent points: rotate r̂ by ±α towards the wrap, at the helix's heights
    let perp = |v: &[f64; 2], rr: f64| [-v[1] / rr, v[0] / rr];
    let (up, us) = (perp(&p2, rp), perp(&s2, rs));
    let t_in = [
        r * (r * p2[0] / rp + sigma * hp * up[0]) / rp,
        r * (r * p2[1] / rp + sigma * hp * up[1]) / rp,
        p[2] + dz * hp / lxy,
    ];
    let t_out = [
        r * (r * s2[0] / rs - sigma * hs * us[0]) / rs,
        r * (r * s2[1] / rs - sigma * hs * us[1]) / rs,
        s[2] - dz * hs / lxy,
    ];
    if beyond(t_in[2]) && beyond(t_out[2]) {
        return straight(p, s, want_hess);
    }
    let mut ev = SpanEval {
        length: len,
        grad,
        hess: [0.0; 36],
        wrap: Some(Contact { t_in, t_out, surface_length: r * phi * len / lxy }),
    };
    if want_hess {
        // in-plane Hessian of L_xy (variables 0, 1 and 3, 4)
        let mut hxy = [0.0; 36];
        for (o, v, rr, hh, sg) in [(0usize, &p2, rp, hp, -sigma), (3, &s2, rs, hs, sigma)] {
            let r2 = rr * rr;
            let u = [v[0] / rr, v[1] / rr];
            let fpp = r * r / (r2 * hh);
            let ft = hh / r2;
            // ∇²γ = [[2xy, y² − x²], [y² − x², −2xy]] / r⁴
            let r4 = r2 * r2;
            let gxx = 2.0 * v[0] * v[1] / r4;
            let gxy2 = (v[1] * v[1] - v[0] * v[0]) / r4;
            let hloc = [
                [
                    fpp * u[0] * u[0] + ft * (1.0 - u[0] * u[0]) + sg * r * gxx,
                    fpp * u[0] * u[1] - ft * u[0] * u[1] + sg * r * gxy2,
                ],
                [
                    fpp * u[0] * u[1] - ft * u[0] * u[1] + sg * r * gxy2,
                    fpp * u[1] * u[1] + ft * (1.0 - u[1] * u[1]) - sg * r * gxx,
                ],
            ];
            for i in 0..2 {
                for j in 0..2 {
                    hxy[(o + i) * 6 + o + j] = hloc[i][j];
                }
            }
        }
        // ∇²L = (∇L_xy ∇L_xyᵀ + L_xy ∇²L_xy + ∇Δz ∇Δzᵀ − ∇L ∇Lᵀ) / L
        for i in 0..6 {
            for j in 0..6 {
                ev.hess[i * 6 + j] = (gxy[i] * gxy[j] + lxy * hxy[i * 6 + j] + gz[i] * gz[j] - grad[i] * grad[j]) / len;
            }
        }
    }
    Ok(ev)
}

/// The same length as [`cylinder`] for a generic scalar, on the branch the `f64` evaluation
/// chose; also its gradient (6).
pub fn cylinder_generic<T: Real>(radius: f64, side: &Side, p: &Vec3<T>, s: &Vec3<T>, wrapped: bool) -> (T, [T; 6]) {
    if !wrapped {
        return straight_generic(p, s);
    }
    let (p2, s2) = ([p[0], p[1]], [s[0], s[1]]);
    let rp = (p2[0] * p2[0] + p2[1] * p2[1]).sqrt();
    let rs = (s2[0] * s2[0] + s2[1] * s2[1]).sqrt();
    let (hp, hs) = (tangent(rp, radius), tangent(rs, radius));
    let (phi, sigma) = cylinder_angle(side, &p2, &s2, radius, hp, hs);
    let lxy = hp + hs + phi * radius;
    let dz = s[2] - p[2];
    let len = (lxy * lxy + dz * dz).sqrt();
    let r = radius;
    let gxy = [
        (hp * p2[0] + p2[1] * (sigma * r)) / (rp * rp),
        (hp * p2[1] - p2[0] * (sigma * r)) / (rp * rp),
        (hs * s2[0] - s2[1] * (sigma * r)) / (rs * rs),
        (hs * s2[1] + s2[0] * (sigma * r)) / (rs * rs),
    ];
    let g = [lxy * gxy[0] / len, lxy * gxy[1] / len, -dz / len, lxy * gxy[2] / len, lxy * gxy[3] / len, dz / len];
    (len, g)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::Rng;
    use num_dual::{DualNum, HyperDual64};

    fn check_derivatives(f: &dyn Fn(&Vec3, &Vec3, bool) -> Result<SpanEval, ElementError>, p: &Vec3, s: &Vec3) {
        let ev = f(p, s, true).unwrap();
        let h = 1e-6;
        let x = [p[0], p[1], p[2], s[0], s[1], s[2]];
        let at = |x: &[f64; 6]| f(&[x[0], x[1], x[2]], &[x[3], x[4], x[5]], false).unwrap();
        for i in 0..6 {
            let (mut xp, mut xm) = (x, x);
            xp[i] += h;
            xm[i] -= h;
            let (a, b) = (at(&xp), at(&xm));
            let fd = (a.length - b.length) / (2.0 * h);
            assert!((fd - ev.grad[i]).abs() < 1e-8, "grad {i}: {fd} vs {}", ev.grad[i]);
            for j in 0..6 {
                let fd2 = (a.grad[j] - b.grad[j]) / (2.0 * h);
                let an = ev.hess[i * 6 + j];
                assert!((fd2 - an).abs() < 1e-6 * (1.0 + an.abs()), "hess {i},{j}: {fd2} vs {an}");
                assert!((an - ev.hess[j * 6 + i]).abs() < 1e-14 * (1.0 + an.abs()));
            }
        }
    }

    /// A span's length and gradient for hyper-dual numbers.
    type GenericSpan<'a> = &'a dyn Fn(&Vec3<HyperDual64>, &Vec3<HyperDual64>, bool) -> (HyperDual64, [HyperDual64; 6]);

    /// Hessian by hyper-dual numbers through the generic version.
    fn check_generic(
        f: &dyn Fn(&Vec3, &Vec3, bool) -> Result<SpanEval, ElementError>,
        g: GenericSpan<'_>,
        p: &Vec3,
        s: &Vec3,
    ) {
        let ev = f(p, s, true).unwrap();
        let wrapped = ev.wrap.is_some();
        let x = [p[0], p[1], p[2], s[0], s[1], s[2]];
        for i in 0..6 {
            for j in 0..6 {
                let mut xh = x.map(HyperDual64::from);
                xh[i].eps1 = 1.0;
                xh[j].eps2 = 1.0;
                let (l, gg) = g(&[xh[0], xh[1], xh[2]], &[xh[3], xh[4], xh[5]], wrapped);
                assert!((l.re - ev.length).abs() < 1e-15 * (1.0 + ev.length));
                assert!((l.eps1 - ev.grad[i]).abs() < 1e-13);
                assert!((gg[j].re - ev.grad[j]).abs() < 1e-13);
                let an = ev.hess[i * 6 + j];
                assert!((l.eps1eps2 - an).abs() < 1e-11 * (1.0 + an.abs()), "{i},{j}: {} vs {an}", l.eps1eps2);
                assert!((gg[j].eps1 - an).abs() < 1e-11 * (1.0 + an.abs()));
            }
        }
    }

    #[test]
    fn sphere_matches_an_independent_construction() {
        // Build the wrapped path in the plane of p, centre, s from explicit tangent points (unit
        // circle construction by rotation) and compare length, tangent points and tangency.
        let r = 0.03;
        let mut rng = Rng::new(1);
        let mut wrapped = 0;
        for _ in 0..200 {
            let p = rng.unit_vector().map(|v| v * r * (1.05 + 3.0 * rng.uniform()));
            let s = rng.unit_vector().map(|v| v * r * (1.05 + 3.0 * rng.uniform()));
            let ev = sphere(r, &p, &s, true).unwrap();
            // independent: 2-D coordinates in the plane, tangent points by rotating the radius
            let (rp, rs) = (norm(&p), norm(&s));
            let ex = p.map(|v| v / rp);
            let ey = {
                let w = [0, 1, 2].map(|i| s[i] - dot(&s, &ex) * ex[i]);
                let l = norm(&w);
                w.map(|v| v / l)
            };
            let s2 = [dot(&s, &ex), dot(&s, &ey)];
            let theta_s = s2[1].atan2(s2[0]); // in (0, π)
            let tp_ang = (r / rp).acos(); // tangent point from p, towards s
            let ts_ang = theta_s - (r / rs).acos();
            let chord = ((s[0] - p[0]).powi(2) + (s[1] - p[1]).powi(2) + (s[2] - p[2]).powi(2)).sqrt();
            if ts_ang > tp_ang {
                wrapped += 1;
                let tp = [r * tp_ang.cos(), r * tp_ang.sin()];
                let ts = [r * ts_ang.cos(), r * ts_ang.sin()];
                let want = (rp - tp[0]).hypot(tp[1]) + r * (ts_ang - tp_ang) + (s2[0] - ts[0]).hypot(s2[1] - ts[1]);
                assert!((ev.length - want).abs() < 1e-15 * (1.0 + want) * 4.0, "{} vs {want}", ev.length);
                let w = ev.wrap.unwrap();
                let t3 = |t: &[f64; 2]| [0, 1, 2].map(|i| t[0] * ex[i] + t[1] * ey[i]);
                for i in 0..3 {
                    assert!((w.t_in[i] - t3(&tp)[i]).abs() < 1e-15);
                    assert!((w.t_out[i] - t3(&ts)[i]).abs() < 1e-15);
                }
                // tangency: radius ⟂ segment at both tangent points
                assert!(dot(&w.t_in, &sub(&p, &w.t_in)).abs() < 1e-17);
                assert!(dot(&w.t_out, &sub(&s, &w.t_out)).abs() < 1e-17);
                assert!(ev.length < chord * 2.0 && ev.length > chord);
            } else {
                assert!(ev.wrap.is_none() && (ev.length - chord).abs() < 1e-16);
            }
        }
        assert!(wrapped > 20 && wrapped < 180, "{wrapped}");
    }

    /// Samples the derivative tests must check, of 30 and 40 drawn (30 and 36 with these seeds;
    /// the others are near touch-down or inside the obstacle): fewer would test little.
    const CHECKED_SPHERE: usize = 25;
    const CHECKED_CYLINDER: usize = 30;

    #[test]
    fn sphere_derivatives() {
        let r = 0.5;
        let mut rng = Rng::new(2);
        let (mut checked, mut wrapped) = (0, 0);
        for _ in 0..30 {
            let p = rng.unit_vector().map(|v| v * r * (1.1 + 2.0 * rng.uniform()));
            let s = rng.unit_vector().map(|v| v * r * (1.1 + 2.0 * rng.uniform()));
            let f = |p: &Vec3, s: &Vec3, h: bool| sphere(r, p, s, h);
            let ev = f(&p, &s, false).unwrap();
            let margin = 1e-4;
            // stay away from touch-down, where the Hessian jumps
            let strictly = {
                let on = |pp: &Vec3, ss: &Vec3| f(pp, ss, false).unwrap().wrap.is_some();
                let pe = p.map(|v| v * (1.0 + margin));
                let pm = p.map(|v| v * (1.0 - margin));
                on(&pe, &s) == on(&pm, &s)
            };
            if strictly {
                check_derivatives(&f, &p, &s);
                check_generic(&f, &|p, s, w| sphere_generic(r, p, s, w), &p, &s);
                checked += 1;
                wrapped += usize::from(ev.wrap.is_some());
            }
        }
        // most samples are away from touch-down, wrapped and straight both among them
        assert!(checked >= CHECKED_SPHERE && wrapped > 0 && wrapped < checked, "{checked} checked, {wrapped} wrapped");
        // inside anchors are errors, never NaN
        assert!(sphere(r, &[0.1, 0.0, 0.0], &[2.0, 0.0, 0.0], true).is_err());
        // a path through the centre line has no plane
        assert!(sphere(r, &[-2.0, 0.0, 0.0], &[2.0, 0.0, 0.0], true).is_err());
    }

    /// The developed-surface formula, evaluated independently: parametrise the contact points
    /// on the cylinder by (angle, height), minimise the total length by Newton, compare.
    #[test]
    fn cylinder_matches_the_developed_surface() {
        let r = 0.02;
        let mut rng = Rng::new(4);
        let mut count = 0;
        for k in 0..100 {
            let ang = |v: f64| [v.cos(), v.sin()];
            let (ga, gb) = (rng.symmetric() * 3.1, rng.symmetric() * 3.1);
            let (ra, rb) = (r * (1.2 + 3.0 * rng.uniform()), r * (1.2 + 3.0 * rng.uniform()));
            let p = [ra * ang(ga)[0], ra * ang(ga)[1], 0.05 * rng.symmetric()];
            let s = [rb * ang(gb)[0], rb * ang(gb)[1], 0.05 * rng.symmetric()];
            let side = if k % 2 == 0 { Side::Either } else { Side::Toward([0.0, 1.0]) };
            let ev = match cylinder(r, &side, None, &p, &s, true) {
                Ok(ev) => ev,
                Err(_) => continue,
            };
            let Some(w) = ev.wrap else {
                assert!((ev.length - norm(&sub(&s, &p))).abs() < 1e-16);
                continue;
            };
            count += 1;
            // the signed angle the path turns through (from the reported tangent points)
            let tin_ang = w.t_in[1].atan2(w.t_in[0]);
            let tout_ang = w.t_out[1].atan2(w.t_out[0]);
            let sigma = if (p[0] * w.t_in[1] - p[1] * w.t_in[0]) > 0.0 { 1.0 } else { -1.0 };
            let mut turn = sigma * (tout_ang - tin_ang);
            while turn < 0.0 {
                turn += std::f64::consts::TAU;
            }
            // independent: with the contact angles at the planar tangent points (checked by the
            // tangency asserts below), the heights z_k of the contact points C_k minimise the
            // convex |P − C1| + √((R φ)² + (z2 − z1)²) + |C2 − S| (the helix unrolled); damped
            // Newton with hyper-dual derivatives. (Over the angles too the function has an
            // inflection, not a minimum, at the tangent points: a path cutting the cylinder is
            // shorter, so the angles are not free here.)
            let total = |v: &[HyperDual64; 2]| {
                let d1: Vec3<HyperDual64> =
                    [HyperDual64::from(w.t_in[0] - p[0]), HyperDual64::from(w.t_in[1] - p[1]), v[0] - p[2]];
                let d2: Vec3<HyperDual64> =
                    [HyperDual64::from(w.t_out[0] - s[0]), HyperDual64::from(w.t_out[1] - s[1]), v[1] - s[2]];
                let arc = r * turn;
                norm(&d1) + ((v[1] - v[0]) * (v[1] - v[0]) + arc * arc).sqrt() + norm(&d2)
            };
            let mut v = [p[2], s[2]];
            for _ in 0..60 {
                let at = |i: usize, j: usize| {
                    let mut h = v.map(HyperDual64::from);
                    h[i].eps1 = 1.0;
                    h[j].eps2 = 1.0;
                    total(&h)
                };
                let (d00, d01, d11) = (at(0, 0), at(0, 1), at(1, 1));
                let (g1, g2) = (d00.eps1, d11.eps1);
                let (h11, h12, h22) = (d00.eps1eps2, d01.eps1eps2, d11.eps1eps2);
                let det = h11 * h22 - h12 * h12;
                let d = [(h22 * g1 - h12 * g2) / det, (h11 * g2 - h12 * g1) / det];
                let f0 = d00.re;
                let step = |lam: f64| [v[0] - lam * d[0], v[1] - lam * d[1]];
                let mut lam = 1.0;
                while lam > 1e-12 && !(total(&step(lam).map(HyperDual64::from)).re <= f0) {
                    lam *= 0.5;
                }
                v = step(lam);
            }
            let total = |_z1: f64, _z2: f64| total(&v.map(HyperDual64::from)).re;
            let (z1, z2) = (v[0], v[1]);
            let want = total(z1, z2);
            assert!((ev.length - want).abs() < 1e-12, "{} vs {want}", ev.length);
            assert!(
                (w.t_in[2] - z1).abs() < 1e-12 && (w.t_out[2] - z2).abs() < 1e-12,
                "{} vs {z1}, {} vs {z2}",
                w.t_in[2],
                w.t_out[2]
            );
            // tangency: the segment from P to the tangent point is normal to the radius there
            let rad_in = [w.t_in[0], w.t_in[1], 0.0];
            assert!(dot(&rad_in, &sub(&p, &w.t_in)).abs() < 1e-17);
            let rad_out = [w.t_out[0], w.t_out[1], 0.0];
            assert!(dot(&rad_out, &sub(&s, &w.t_out)).abs() < 1e-17);
        }
        assert!(count > 20, "{count}");
    }

    /// A finite cylinder against its rule stated independently: with the infinite cylinder's
    /// contact heights `z_in`, `z_out`, the path is that one unless both are beyond the ends
    /// (then the straight line); an anchor within the radius is an error only between the ends.
    #[test]
    fn finite_cylinder_follows_opensims_rule() {
        let (r, len) = (0.02, 0.08);
        let mut rng = Rng::new(12);
        let (mut inside, mut beyond, mut half) = (0, 0, 0);
        for k in 0..400 {
            let side = if k % 2 == 0 { Side::Either } else { Side::Toward([0.0, 1.0]) };
            let ang = |v: f64| [v.cos(), v.sin()];
            let (ga, gb) = (rng.symmetric() * 3.1, rng.symmetric() * 3.1);
            let (ra, rb) = (r * (1.1 + 3.0 * rng.uniform()), r * (1.1 + 3.0 * rng.uniform()));
            let p = [ra * ang(ga)[0], ra * ang(ga)[1], 0.15 * rng.symmetric()];
            let s = [rb * ang(gb)[0], rb * ang(gb)[1], 0.15 * rng.symmetric()];
            let Ok(inf) = cylinder(r, &side, None, &p, &s, true) else { continue };
            let fin = cylinder(r, &side, Some(len), &p, &s, true).unwrap();
            let chord = norm(&sub(&s, &p));
            match inf.wrap {
                None => assert_eq!(fin, inf),
                Some(w) => {
                    let out = |z: f64| z.abs() > 0.5 * len;
                    if out(w.t_in[2]) && out(w.t_out[2]) {
                        beyond += 1;
                        assert!(fin.wrap.is_none() && (fin.length - chord).abs() < 1e-16, "{fin:?}");
                    } else {
                        if out(w.t_in[2]) || out(w.t_out[2]) {
                            half += 1;
                        } else {
                            inside += 1;
                        }
                        assert_eq!(fin, inf);
                    }
                }
            }
        }
        assert!(inside > 10 && beyond > 10 && half > 5, "{inside} within, {beyond} beyond, {half} one end");
        // an anchor within the radius: straight beyond the ends, an error between them
        let (a, b) = ([0.005, 0.0, 0.06], [0.0, 0.1, -0.02]);
        let ev = cylinder(r, &Side::Either, Some(len), &a, &b, false).unwrap();
        assert!(ev.wrap.is_none() && (ev.length - norm(&sub(&b, &a))).abs() < 1e-16);
        assert!(cylinder(r, &Side::Either, Some(0.2), &a, &b, false).is_err());
        assert!(cylinder(r, &Side::Either, None, &a, &b, false).is_err());
        // derivatives of a wrapped finite span are the infinite cylinder's
        let (p, s) = ([0.05, 0.01, -0.01], [-0.05, 0.015, 0.02]);
        let f = |p: &Vec3, s: &Vec3, h: bool| cylinder(r, &Side::Either, Some(len), p, s, h);
        assert!(f(&p, &s, false).unwrap().wrap.is_some());
        check_derivatives(&f, &p, &s);
        check_generic(&f, &|p, s, w| cylinder_generic(r, &Side::Either, p, s, w), &p, &s);
    }

    #[test]
    fn cylinder_derivatives() {
        let r = 0.3;
        let mut rng = Rng::new(8);
        let (mut checked, mut wrapped) = (0, 0);
        for k in 0..40 {
            let p = [rng.symmetric(), rng.symmetric(), rng.symmetric()];
            let s = [rng.symmetric(), rng.symmetric(), rng.symmetric()];
            let side = if k % 2 == 0 { Side::Either } else { Side::Toward([0.6, -0.8]) };
            let f = |p: &Vec3, s: &Vec3, h: bool| cylinder(r, &side, None, p, s, h);
            let Ok(_) = f(&p, &s, false) else { continue };
            let on = |pp: &Vec3| f(pp, &s, false).map(|e| e.wrap.is_some()).unwrap_or(false);
            let pe = p.map(|v| v * 1.0001);
            let pm = p.map(|v| v * 0.9999);
            if on(&pe) == on(&pm) && f(&pe, &s, false).is_ok() && f(&pm, &s, false).is_ok() {
                check_derivatives(&f, &p, &s);
                check_generic(&f, &|p, s, w| cylinder_generic(r, &side, p, s, w), &p, &s);
                checked += 1;
                wrapped += usize::from(on(&p));
            }
        }
        assert!(
            checked >= CHECKED_CYLINDER && wrapped > 0 && wrapped < checked,
            "{checked} checked, {wrapped} wrapped"
        );
    }
}
