//! OpenSim's own path over a cylinder (`WrapCylinder::wrapLine` of OpenSim 4.6 for a path with
//! one wrap object), for imported models: not the shortest path, so the span's length differs
//! from [`crate::span::cylinder`]'s by up to a few tenths of a millimetre where the path climbs
//! along the axis (Rajagopal 2016's adductors), and a one-sided (quadrant) cylinder may be
//! wrapped the long way round (DAS3's teres minor and infraspinatus).
//!
//! In the cylinder's frame (axis `z`), with anchors `p1`, `p2` outside the radius `R`:
//! 1. whether it wraps: without a quadrant, where the line `p1 p2` passes within `R` of the axis
//!    between the anchors; with one, by OpenSim's rules on the sides of the quadrant's plane;
//! 2. preliminary tangent points: in the plane normal to the axis through each anchor, the two
//!    tangent points, the pair chosen closest in angle (or by the quadrant);
//! 3. their heights: where the vertical lines through them meet the plane through `p1`, `p2` and
//!    an "apex" point on the surface (at the height of the point of `p1 p2` that divides it in
//!    the ratio of the anchors' distances from the axis), when that stays between the anchors;
//! 4. the length: the two tangent lines and `√((R θ)² + Δz²)`, `θ` the angle between the tangent
//!    points about the axis (`2π − θ` for OpenSim's "long wrap").
//!
//! No wrap when both tangent points lie beyond the ends of the cylinder. Every branch is decided
//! on the real parts, so the same code gives the length in dual numbers: the span's gradient and
//! Hessian are those of this length (not a shortest path: no envelope theorem), by automatic
//! differentiation.

use mollier_core::ElementError;
use mollier_core::geometry::{Vec3, cross, dot, norm, sub};
use mollier_core::scalar::{Real, c};
use num_dual::{Dual2SVec64, DualSVec64, gradient, hessian};

use crate::span::{Contact, SpanEval, straight};

pub mod ellipsoid;

/// OpenSim's answer for one stretch over a cylinder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// An anchor within the radius of the axis: the stretch is straight.
    Inside,
    /// Straight past the cylinder.
    NoWrap,
    /// The straight line passes through the cylinder: OpenSim takes the first such stretch.
    Mandatory,
    /// Wrapped by a quadrant's rule without passing through: OpenSim takes the stretch of its
    /// range that this lengthens least.
    Wrapped,
}

/// A quadrant: the cylinder-frame axis (0: x, 1: y) and the sign of the side the path must
/// stay on.
pub type Quadrant = (usize, f64);

/// The wrapped stretch: its length (m) and tangent points (cylinder frame).
#[derive(Clone, Copy, Debug)]
pub struct Wrapped<T> {
    /// The whole stretch: tangent lines and the surface path.
    pub length: T,
    /// Where the path meets and leaves the surface.
    pub r1: Vec3<T>,
    /// Where it leaves.
    pub r2: Vec3<T>,
    /// The length on the surface.
    pub surface: T,
}

fn dsign(v: f64) -> f64 {
    if v >= 0.0 { 1.0 } else { -1.0 }
}

fn unit<T: Real>(v: &Vec3<T>) -> Vec3<T> {
    let l = norm(v);
    if l.re() > 0.0 { v.map(|x| x / l) } else { *v }
}

/// The two tangent points in the plane normal to the axis through `p` (`ρ` its distance from the
/// axis), `+` and `−` about the axis.
fn tangents<T: Real>(p: &Vec3<T>, radius: f64) -> ([Vec3<T>; 2], T) {
    let rho = (p[0] * p[0] + p[1] * p[1]).sqrt();
    let v = [p[0] / rho, p[1] / rho];
    let d = c::<T>(radius * radius) / rho;
    let h = (c::<T>(radius * radius) - d * d).sqrt();
    let u = [-v[1], v[0]];
    let a = [d * v[0] + h * u[0], d * v[1] + h * u[1], p[2]];
    let b = [d * v[0] - h * u[0], d * v[1] - h * u[1], p[2]];
    ([a, b], rho)
}

/// OpenSim's tangency test and step (`WrapCylinder::_adjust_tangent_point`): when the lines
/// `p → r` and `r → w` make angles with the axis that differ by more than 0.1°, `r` moves along
/// the axis 1.5 times the way to where the line `p w` passes it. Whether it moved.
fn adjust<T: Real>(p: &Vec3<T>, r: &mut Vec3<T>, w: &Vec3<T>) -> bool {
    let pr = unit(&sub(r, p));
    let rw = unit(&sub(w, r));
    if (pr[2].re().acos() - rw[2].re().acos()).abs() <= 0.1f64.to_radians() {
        return false;
    }
    let d = sub(w, p);
    let dxy = d[0] * d[0] + d[1] * d[1];
    let s = ((r[0] - p[0]) * d[0] + (r[1] - p[1]) * d[1]) / dxy;
    let z = p[2] + s * d[2];
    r[2] = r[2] + (z - r[2]) * 1.5;
    true
}

/// Which of the directions `a` (to the first anchor's two tangent points) and `b` (the second's)
/// are closest in angle, as OpenSim picks them for a sphere and a cylinder without quadrant (ties
/// to the later pair, in OpenSim's order a0 b0, a0 b1, a1 b0, a1 b1).
fn nearest<T: Real>(a: [Vec3<T>; 2], b: [Vec3<T>; 2]) -> (usize, usize) {
    let cs = |a: &Vec3<T>, b: &Vec3<T>| dot(&unit(a), &unit(b)).re();
    let (d1, d2, d3, d4) = (cs(&a[0], &b[0]), cs(&a[0], &b[1]), cs(&a[1], &b[0]), cs(&a[1], &b[1]));
    if d1 > d2 && d1 > d3 && d1 > d4 {
        (0, 0)
    } else if d2 > d3 && d2 > d4 {
        (0, 1)
    } else if d3 > d4 {
        (1, 0)
    } else {
        (1, 1)
    }
}

/// OpenSim's choice among the tangent points `[r1a, r1b]` of `p1` and `[r2a, r2b]` of `p2`: the
/// two it wraps between, whether its apex is on the far side, and whether it wraps the long way.
fn pair<T: Real>(
    quadrant: Option<Quadrant>,
    p1: &Vec3<T>,
    p2: &Vec3<T>,
    [r1a, r1b]: [Vec3<T>; 2],
    [r2a, r2b]: [Vec3<T>; 2],
) -> (Vec3<T>, Vec3<T>, bool, bool) {
    let (p11, p22): (Vec3<T>, Vec3<T>) = ([c(0.0), c(0.0), p1[2]], [c(0.0), c(0.0), p2[2]]);
    let angle = |a: &Vec3<T>, b: &Vec3<T>| (dot(a, b).re() / (norm(a).re() * norm(b).re())).acos();
    match quadrant {
        None => {
            let (i, j) = nearest([sub(&r1a, &p11), sub(&r1b, &p11)], [sub(&r2a, &p22), sub(&r2b, &p22)]);
            ([r1a, r1b][i], [r2a, r2b][j], false, false)
        }
        Some((ax, sign)) => {
            let alpha = angle(&sub(&r1a, &p11), &sub(&r2b, &p22));
            let beta = angle(&sub(&r1b, &p11), &sub(&r2a, &p22));
            let on = |p: &Vec3<T>| dsign(p[ax].re()) == sign;
            // (r1 is r1a, far side when alpha > beta) or (r1 is r1b, far side when alpha <= beta)
            let a_pair = (r1a, r2b, alpha > beta);
            let b_pair = (r1b, r2a, alpha <= beta);
            let (x1, x2, far) = match (on(&r1a), on(&r1b)) {
                (true, true) if on(&r2a) => b_pair,
                (true, true) => a_pair,
                (true, false) => a_pair,
                (false, true) => b_pair,
                (false, false) if on(&r2a) => b_pair,
                (false, false) if on(&r2b) => a_pair,
                (false, false) => {
                    if alpha > beta {
                        (r1a, r2b, true)
                    } else {
                        (r1b, r2a, true)
                    }
                }
            };
            // the long way round (more than half the cylinder)
            let musc = [0, 1, 2].map(|i| (x1[i] - p1[i] + x2[i] - p2[i]).re());
            let rad = [0, 1, 2].map(|i| (x1[i] - p11[i] + x2[i] - p22[i]).re());
            (x1, x2, far, dot(&rad, &musc) < 0.0)
        }
    }
}

/// OpenSim's path over a cylinder of radius `radius` and length `length` (m; infinite for an
/// unlimited one) from `p1` to `p2` (cylinder frame): its code and, when it wraps, the path.
/// `several`: the muscle's path has several wrap objects (OpenSim then adjusts the tangent
/// points).
pub fn cylinder<T: Real>(
    radius: f64,
    length: f64,
    quadrant: Option<Quadrant>,
    several: bool,
    p1: &Vec3<T>,
    p2: &Vec3<T>,
) -> (Code, Option<Wrapped<T>>) {
    let r2 = radius * radius;
    let rr = |p: &Vec3<T>| p[0].re() * p[0].re() + p[1].re() * p[1].re();
    if rr(p1) < r2 || rr(p2) < r2 {
        return (Code::Inside, None);
    }
    // the point of the line p1 p2 nearest the axis (OpenSim's `IntersectLines` with the axis)
    let d = sub(p2, p1);
    let dxy = d[0].re() * d[0].re() + d[1].re() * d[1].re();
    let sin2 = dxy / dot(&d, &d).re();
    let (t12, near) = if sin2 <= 2e-13 {
        (f64::NAN, [f64::NAN; 3])
    } else {
        let t = -(p1[0].re() * d[0].re() + p1[1].re() * d[1].re()) / dxy;
        (t, [0, 1, 2].map(|i| p1[i].re() + t * d[i].re()))
    };
    let through = near[0] * near[0] + near[1] * near[1] < r2 && t12 > 0.0 && t12 < 1.0;
    let mut code = Code::Wrapped;
    match quadrant {
        None if through => code = Code::Mandatory,
        None => return (Code::NoWrap, None),
        Some((ax, sign)) => {
            if dsign(p1[ax].re()) == sign || dsign(p2[ax].re()) == sign {
                if through {
                    code = Code::Mandatory;
                } else if dsign(p1[ax].re()) != dsign(p2[ax].re()) && dsign(near[ax]) != sign {
                    code = Code::Wrapped;
                } else {
                    return (Code::NoWrap, None);
                }
            }
        }
    }
    let ([r1a, r1b], rho1) = tangents(p1, radius);
    let ([r2a, r2b], rho2) = tangents(p2, radius);
    let (mut r1, mut r2t, far_side, long_wrap) = pair(quadrant, p1, p2, [r1a, r1b], [r2a, r2b]);
    // the apex: on the surface, at the height of the point dividing p1 p2 as rho1 : rho2
    let t = rho1 / (rho1 + rho2);
    let mpt: Vec3<T> = [0, 1, 2].map(|i| p1[i] + t * d[i]);
    let axispt: Vec3<T> = [c(0.0), c(0.0), mpt[2]];
    let n = unit(&cross(&unit(&sub(p1, &axispt)), &unit(&sub(p2, &axispt))));
    let vert = unit(&cross(&[c(0.0), c(0.0), c(1.0)], &n));
    let apex1: Vec3<T> = [0, 1, 2].map(|i| axispt[i] + vert[i] * radius);
    let apex2: Vec3<T> = [0, 1, 2].map(|i| axispt[i] - vert[i] * radius);
    let (d1, d2) = (dot(&sub(&mpt, &apex1), &sub(&mpt, &apex1)).re(), dot(&sub(&mpt, &apex2), &sub(&mpt, &apex2)).re());
    let apex = if (d1 < d2) != far_side { apex1 } else { apex2 };
    // slide the tangent points along the axis onto the plane through p1, p2 and the apex
    let pn = unit(&cross(&unit(&sub(p1, &apex)), &unit(&sub(p2, &apex))));
    let slide = |r: &mut Vec3<T>, from_z: f64, to_z: f64| {
        // OpenSim intersects the segment r ± 10 z with the plane (LINE_EPSILON 1e-5)
        if (20.0 * pn[2].re()).abs() < 1e-5 {
            return;
        }
        let z = (dot(&pn, p1) - pn[0] * r[0] - pn[1] * r[1]) / pn[2];
        let tt = (z.re() - (r[2].re() - 10.0)) / 20.0;
        // kept when nearer the other anchor's height than this anchor is
        if (-1e-5..=1.0 + 1e-5).contains(&tt) && (z.re() - to_z).powi(2) < (from_z - to_z).powi(2) {
            r[2] = z;
        }
    };
    let (z1, z2) = (p1[2].re(), p2[2].re());
    // OpenSim measures both along the line through p11 in the direction of p22 (as a vector):
    // the axis, unless p2 is at height 0, when neither point moves
    if z2 != 0.0 {
        slide(&mut r1, z1, z2);
        slide(&mut r2t, z2, z1);
    }
    let half = 0.5 * length;
    let beyond = |z: f64| !(-half..=half).contains(&z);
    if beyond(r1[2].re()) && beyond(r2t[2].re()) {
        return (Code::NoWrap, None);
    }
    let surface = helix(radius, long_wrap, several, p1, p2, &mut r1, &mut r2t);
    let length = norm(&sub(&r1, p1)) + surface + norm(&sub(p2, &r2t));
    (code, Some(Wrapped { length, r1, r2: r2t, surface }))
}

/// OpenSim's path over a sphere of radius `radius` (`WrapSphere::wrapLine` of OpenSim 4.6, no
/// quadrant) from `p1` to `p2` (sphere frame, centre at the origin): the great circle in the plane
/// of the anchors and the centre, the shorter way. OpenSim calls it `Wrapped` (never mandatory),
/// so on a range the stretch it lengthens least takes it. Where the line passes within 1e-5
/// (relative) of the centre OpenSim reuses the previous posture's tangent points; here the plane
/// is still the one the anchors span.
pub fn sphere<T: Real>(radius: f64, p1: &Vec3<T>, p2: &Vec3<T>) -> (Code, Option<Wrapped<T>>) {
    let (n1, n2) = (norm(p1), norm(p2));
    if n1.re() < radius || n2.re() < radius {
        return (Code::Inside, None);
    }
    // where the line p2 + l (p1 − p2) meets the sphere: both crossings strictly between
    let ri = sub(p1, p2);
    let a = dot(&ri, &ri).re();
    let b = 2.0 * dot(p2, &ri).re();
    let cc = dot(p2, p2).re() - radius * radius;
    let disc = b * b - 4.0 * a * cc;
    if disc < 0.0 {
        return (Code::NoWrap, None);
    }
    let (l1, l2) = ((-b + disc.sqrt()) / (2.0 * a), (-b - disc.sqrt()) / (2.0 * a));
    let between = |l: f64| 0.0 < l && l < 1.0;
    if !(between(l1) && between(l2)) {
        return (Code::NoWrap, None);
    }
    let n = unit(&cross(&unit(&ri), &unit(p2)));
    // the two tangent points from p in the plane normal to n
    let cands = |p: &Vec3<T>, np: T| -> [Vec3<T>; 2] {
        let y = unit(&p.map(|v| -v));
        let z = cross(&n, &y);
        let a1 = (c::<T>(radius) / np).asin();
        let (ca, sa, k) = (a1.cos(), a1.sin(), np * a1.cos());
        [[0, 1, 2].map(|i| p[i] + k * (ca * y[i] - sa * z[i])), [0, 1, 2].map(|i| p[i] + k * (ca * y[i] + sa * z[i]))]
    };
    let ([r1a, r1b], [r2a, r2b]) = (cands(p1, n1), cands(p2, n2));
    let (i, j) = nearest([r1a, r1b], [r2a, r2b]);
    let (r1, r2) = ([r1a, r1b][i], [r2a, r2b][j]);
    let surface = dot(&unit(&r1), &unit(&r2)).acos() * radius;
    let length = norm(&sub(&r1, p1)) + surface + norm(&sub(p2, &r2));
    (Code::Wrapped, Some(Wrapped { length, r1, r2, surface }))
}

/// The length of the helix between the tangent points `r1`, `r2` (OpenSim's
/// `_make_spiral_path`); with `several`, the tangent points moved first.
fn helix<T: Real>(
    radius: f64,
    long_wrap: bool,
    several: bool,
    p1: &Vec3<T>,
    p2: &Vec3<T>,
    r1: &mut Vec3<T>,
    r2: &mut Vec3<T>,
) -> T {
    // the surface path: a helix through the tangent points; on a path with several wrap objects
    // OpenSim then slides the tangent points along the axis until the path is tangent to the
    // helix within 0.1° at its first and last sample (every 2 mm of the helix), up to 100 times
    let mut iterations = 0;
    loop {
        // the signed angle about the axis; the long way is 2π minus it (more than a turn where
        // the signed angle is negative, as OpenSim 4.6 computes it)
        let (u, v) = ([r1[0], r1[1]], [r2[0], r2[1]]);
        let mut theta = (u[0] * v[1] - u[1] * v[0]).atan2(u[0] * v[0] + u[1] * v[1]);
        if long_wrap {
            theta = -theta + 2.0 * std::f64::consts::PI;
        }
        let rise = r2[2] - r1[2];
        let surface = (theta * theta * (radius * radius) + rise * rise).sqrt();
        let n = ((surface.re() / 0.002) as i64).max(1);
        if !several || n < 2 || iterations >= 100 {
            return surface;
        }
        // the helix's points at 1/n and 1 − 1/n of the way: r1 turned about the axis and raised
        let sense = if long_wrap { -1.0 } else { 1.0 };
        let at = |t: f64, z: T| -> Vec3<T> {
            let a = theta * (sense * t);
            let (ca, sa) = (a.cos(), a.sin());
            [u[0] * ca - u[1] * sa, u[0] * sa + u[1] * ca, z + rise * t]
        };
        let w1 = at(1.0 / n as f64, r1[2]);
        let moved1 = adjust(p1, r1, &w1);
        // OpenSim turns the tangent point as moved just now
        let w2 = at(1.0 - 1.0 / n as f64, r1[2]);
        let moved2 = adjust(p2, r2, &w2);
        if !(moved1 || moved2) {
            return surface;
        }
        iterations += 1;
    }
}

/// One of OpenSim's wrap objects with its parameters, for [`span_of`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Object {
    /// [`cylinder`]'s parameters.
    Cylinder {
        /// Radius (m).
        radius: f64,
        /// Length (m; infinite: unlimited).
        length: f64,
        /// OpenSim's quadrant.
        quadrant: Option<Quadrant>,
        /// The muscle has several wrap objects.
        several: bool,
    },
    /// [`ellipsoid::ellipsoid`]'s parameters.
    Ellipsoid {
        /// Semi-axes (m).
        semi_axes: Vec3,
        /// OpenSim's quadrant (axis 0, 1 or 2 and its sign).
        quadrant: Option<Quadrant>,
    },
}

impl Object {
    /// OpenSim's path over the object from `p1` to `p2` (its frame): its code and, when it
    /// wraps, the path.
    pub fn wrap<T: Real>(&self, p1: &Vec3<T>, p2: &Vec3<T>) -> (Code, Option<Wrapped<T>>) {
        match *self {
            Object::Cylinder { radius, length, quadrant, several } => {
                cylinder(radius, length, quadrant, several, p1, p2)
            }
            Object::Ellipsoid { semi_axes, quadrant } => ellipsoid::ellipsoid(&semi_axes, quadrant, p1, p2),
        }
    }
}

/// [`cylinder`] as a span (see [`span_of`]).
pub fn span(
    radius: f64,
    length: f64,
    quadrant: Option<Quadrant>,
    several: bool,
    p: &Vec3,
    s: &Vec3,
    want_hess: bool,
) -> Result<(SpanEval, Code), ElementError> {
    span_of(&Object::Cylinder { radius, length, quadrant, several }, p, s, want_hess)
}

/// OpenSim's path over `obj` as a span: its length with gradient and Hessian (automatic
/// differentiation), the straight line where OpenSim does not wrap, and OpenSim's code.
pub fn span_of(obj: &Object, p: &Vec3, s: &Vec3, want_hess: bool) -> Result<(SpanEval, Code), ElementError> {
    let (code, w) = obj.wrap(p, s);
    let Some(w) = w else { return Ok((straight(p, s, want_hess)?, code)) };
    let x = nalgebra::SVector::<f64, 6>::from([p[0], p[1], p[2], s[0], s[1], s[2]]);
    let (l, g, h) = if want_hess {
        let f = |v: nalgebra::SVector<Dual2SVec64<6>, 6>| {
            let (a, b) = ([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
            obj.wrap(&a, &b).1.map(|w| w.length).unwrap_or(Dual2SVec64::from(f64::NAN))
        };
        let (l, g, h) = hessian(f, &x);
        (l, g, Some(h))
    } else {
        let f = |v: nalgebra::SVector<DualSVec64<6>, 6>| {
            let (a, b) = ([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
            obj.wrap(&a, &b).1.map(|w| w.length).unwrap_or(DualSVec64::from(f64::NAN))
        };
        let (l, g) = gradient(f, &x);
        (l, g, None)
    };
    if !(l.is_finite() && g.iter().all(|v| v.is_finite())) {
        return Err(ElementError::Domain("OpenSim's path over the wrap object is not defined here".into()));
    }
    let mut ev = SpanEval {
        length: l,
        grad: [g[0], g[1], g[2], g[3], g[4], g[5]],
        hess: [0.0; 36],
        wrap: Some(Contact { t_in: w.r1, t_out: w.r2, surface_length: w.surface }),
    };
    if let Some(h) = h {
        for i in 0..6 {
            for j in 0..6 {
                ev.hess[i * 6 + j] = h[(i, j)];
            }
        }
    }
    Ok((ev, code))
}

/// The same length for a generic scalar (the branches are decided on the real parts, as in the
/// `f64` evaluation).
pub fn length_generic<T: Real>(obj: &Object, p: &Vec3<T>, s: &Vec3<T>) -> T {
    match obj.wrap(p, s).1 {
        Some(w) => w.length,
        None => norm(&sub(s, p)),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Without climbing along the axis, OpenSim's path is the shortest: the same as Mollier's.
    #[test]
    fn a_path_normal_to_the_axis_is_the_shortest() {
        let (p, s) = ([-0.1, 0.03, 0.02], [0.12, 0.01, 0.02]);
        let (ev, code) = span(0.03, 1.0, None, false, &p, &s, true).unwrap();
        let short = crate::span::cylinder(0.03, &crate::Side::Either, Some(1.0), &p, &s, true).unwrap();
        assert_eq!(code, Code::Mandatory);
        assert!((ev.length - short.length).abs() < 1e-15, "{} vs {}", ev.length, short.length);
        for i in 0..6 {
            assert!((ev.grad[i] - short.grad[i]).abs() < 1e-12, "{i}: {:?} vs {:?}", ev.grad, short.grad);
        }
    }

    /// Asserts that [`span_of`]'s gradient and Hessian are those of its length (central
    /// differences, h = 1e-6 m) within `tol_h` for the Hessian (1e-8 for the gradient).
    pub(crate) fn assert_derivatives(obj: &Object, p: &Vec3, s: &Vec3, tol_h: f64) {
        let (ev, _) = span_of(obj, p, s, true).unwrap();
        let x = [p[0], p[1], p[2], s[0], s[1], s[2]];
        let at = |x: &[f64; 6]| span_of(obj, &[x[0], x[1], x[2]], &[x[3], x[4], x[5]], false).unwrap().0;
        let h = 1e-6;
        for i in 0..6 {
            let (mut up, mut down) = (x, x);
            up[i] += h;
            down[i] -= h;
            let (a, b) = (at(&up), at(&down));
            let g = (a.length - b.length) / (2.0 * h);
            assert!((g - ev.grad[i]).abs() < 1e-8, "{obj:?} grad {i}: {g} vs {}", ev.grad[i]);
            for j in 0..6 {
                let hh = (a.grad[j] - b.grad[j]) / (2.0 * h);
                assert!(
                    (hh - ev.hess[i * 6 + j]).abs() < tol_h,
                    "{obj:?} hess {i} {j}: {hh} vs {}",
                    ev.hess[i * 6 + j]
                );
            }
        }
    }

    /// The span's gradient and Hessian are those of its length (central differences), with and
    /// without a quadrant and the tangent points' adjustment.
    #[test]
    fn derivatives_are_those_of_the_length() {
        let (p, s) = ([-0.1, 0.03, 0.05], [0.12, 0.01, -0.04]);
        for (quadrant, several) in [(None, false), (None, true), (Some((1, 1.0)), false), (Some((0, -1.0)), true)] {
            assert_derivatives(&Object::Cylinder { radius: 0.03, length: 1.0, quadrant, several }, &p, &s, 1e-5);
        }
    }

    /// Climbing, OpenSim's path is longer than the shortest one, but not by much.
    #[test]
    fn a_climbing_path_is_a_little_longer_than_the_shortest() {
        let (p, s) = ([-0.1, 0.03, 0.05], [0.12, 0.01, -0.04]);
        let (ev, _) = span(0.03, 1.0, None, false, &p, &s, false).unwrap();
        let short = crate::span::cylinder(0.03, &crate::Side::Either, Some(1.0), &p, &s, false).unwrap();
        let extra = ev.length - short.length;
        assert!(extra > 1e-9 && extra < 1e-3, "{extra}");
    }
}
