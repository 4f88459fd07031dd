//! The span over an ellipsoid: straight, or tangent segment – geodesic – tangent segment, the
//! shortest path found by shooting.
//!
//! **Does it wrap?** An affine map `y = D⁻¹x` (`D = diag(a)`) takes the ellipsoid to the unit
//! sphere and lines to lines, so the straight line from `p` to `s` meets the ellipsoid exactly
//! when the line from `D⁻¹p` to `D⁻¹s` meets the unit sphere: the closed-form sphere test decides,
//! with no iteration and no tolerance, and touch-down is where the geodesic's length is zero.
//!
//! **Unknowns.** The tangent points of lines from `p` form the *horizon* of `p`, the ellipse where
//! the ellipsoid meets the polar plane `pᵀMx = 1`; in `y` it is a circle,
//! `y(ψ) = p̂'/|p'| + ρ (cos ψ u₁ + sin ψ u₂)`, `ρ = √(1 − 1/|p'|²)`. Starting the geodesic at
//! `T(ψ) = D y(ψ)` along `t = (T − p)/|T − p|` makes the first segment tangent by
//! construction. With the geodesic's length `ℓ` and the last segment's length `μ`, the path
//! reaches `s` when
//! ```text
//! R(ψ, ℓ, μ) = X(ℓ) + μ V(ℓ) − s = 0
//! ```
//! (`X`, `V`: end point and tangent of the geodesic), three equations in three unknowns, solved
//! by damped Newton. The Jacobian needs the end state's response to a change of the start:
//! a shift along the geodesic moves the end along it; a sideways shift or a turn of the start
//! direction moves it by the Jacobi fields (`geodesic` module).
//!
//! **Derivatives.** `L = |p − T| + ℓ + μ`; `∂L/∂p = (p − T)/|p − T|`, `∂L/∂s = V` (envelope
//! theorem). The Hessian differentiates these through the solution: `dξ/ds = J⁻¹`,
//! `dξ/dp = −J⁻¹ ∂R/∂p` (implicit function theorem).
//!
//! **Warm start.** The solution and its sensitivity to the anchors are kept. At exactly the same
//! anchors the last solution is the answer (no shot). Elsewhere the next evaluation starts from
//! the prediction `ξ + ∂ξ/∂a δ + ½ ∂²ξ/∂a²[δ, δ]`, whose second-order term comes from the two
//! last solutions: the difference of their sensitivities `S₁ − S₀` is `∂²ξ/∂a²` applied to the
//! line `d` between their anchors, which gives the term (up to third-order terms) for the part
//! of the move along `d` — all of it when a motion goes on, or comes back, along its way. A cold
//! start takes the tangent points and the arc of the affine-image sphere problem, and if Newton
//! fails from there, continues along a homotopy of the end anchor.
//!
//! **The last Newton step is not checked by a shot.** A shot at `ξ` gives the residual and its
//! Jacobian; once the Newton step `δξ = −J⁻¹R` is small, the solution `ξ + δξ` is exact to
//! `O(|δξ|²)` and everything the length and its gradient need there (the end point and tangent,
//! the tangent point of `p`) follows from the same shot to that order through the Jacobi fields.
//! So a step below `1e-7` (`ψ` in rad, `ℓ` and `μ` over the largest semi-axis; less where a
//! tangent segment is short, see `linear_scale`) is applied without another shot: its
//! remainder, which grows as the step's square (the test measures `2e-14` in the length and
//! gradient at `1e-7`, `2e-12` at `1e-6`), is then at the integration's rounding floor. The Hessian is made of the Jacobi fields themselves, which the step changes to first
//! order; when it is wanted, only a step below `1e-11` is applied so, and a move takes a second
//! shot there (the fields' own first-order response to the step, the geodesic's second
//! variation, would cost more than that shot).

use mollier_core::ElementError;
use mollier_core::geometry::{Vec3, cross, dot, norm, perpendicular, sub};
use mollier_core::scalar::{Real, c};

use crate::geodesic::{Ellipsoid, Shot};
use crate::span::{Contact, SpanEval, straight, straight_generic};

/// What an evaluation keeps for the next one (obstacle frame): the solution, the anchors it was
/// for, and its sensitivity to them, so that the next evaluation starts from the prediction
/// `ξ + ∂ξ/∂(p, s) Δ(p, s)` (with a second-order term from the solution before, see the module
/// docs), or reuses the solution at the same anchors.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Warm {
    /// Reference direction of the horizon-circle parametrisation (unit sphere image).
    pub w: Vec3,
    /// `(ψ, ℓ, μ)`.
    pub xi: [f64; 3],
    /// The anchors of that solution.
    pub anchors: [f64; 6],
    /// `∂ξ/∂(p, s)`, 3 x 6.
    pub dxi: [[f64; 6]; 3],
    /// Whether the fields hold a solution.
    pub valid: bool,
    /// The solution before (same `w`): its anchors and `∂ξ/∂(p, s)`.
    previous: Option<([f64; 6], [[f64; 6]; 3])>,
    /// The last solution's trial, the answer at exactly the same anchors.
    last: Option<Trial>,
}

/// Largest Newton step (`ψ` in rad, `ℓ` and `μ` over the largest semi-axis) applied without a
/// shot to check it when only the length and its gradient are wanted, for tangent segments as
/// long as that semi-axis ([`linear_scale`] for shorter ones): its quadratic remainder is then
/// at the integration's rounding floor (see the module docs and the tests).
const LINEAR_VALUES: f64 = 1e-7;

/// The same when the Hessian is wanted: the step changes the Jacobi fields the Hessian is made
/// of to first order, so it must itself be at the accuracy the Hessian keeps.
const LINEAR_HESSIAN: f64 = 1e-11;

/// A converged wrap: what the derivatives and the dual-number version need.
#[derive(Clone, Copy, Debug)]
pub struct Solved {
    /// Reference direction fixing the horizon-circle parametrisation (`ψ = 0` towards it).
    pub w: Vec3,
    /// `(ψ, ℓ, μ)`.
    pub xi: [f64; 3],
    /// Macro steps of the integration at the solution.
    pub steps: usize,
    /// Inverse of `∂R/∂ξ` at the solution.
    pub jinv: [[f64; 3]; 3],
}

/// The start of the geodesic for horizon angle `psi`: tangent point `T` and unit direction `t`.
fn start<T: Real>(e: &Ellipsoid, p: &Vec3<T>, w: &Vec3, psi: T) -> (Vec3<T>, Vec3<T>) {
    let a = &e.axes;
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    let r = norm(&pn);
    let ph = pn.map(|v| v / r);
    let wd: Vec3<T> = [0, 1, 2].map(|i| ph[i] * (-(ph[0] * w[0] + ph[1] * w[1] + ph[2] * w[2])) + w[i]);
    let wn = norm(&wd);
    let u1 = wd.map(|v| v / wn);
    let u2 = cross(&ph, &u1);
    let rho = (c::<T>(1.0) - (r * r).recip()).sqrt();
    let (sn, cs) = (psi.sin(), psi.cos());
    let y: Vec3<T> = [0, 1, 2].map(|i| ph[i] / r + rho * (u1[i] * cs + u2[i] * sn));
    let t_pt = [y[0] * a[0], y[1] * a[1], y[2] * a[2]];
    let d = sub(&t_pt, p);
    let dl = norm(&d);
    (t_pt, d.map(|v| v / dl))
}

/// The start state and its derivatives: `∂(T, t)/∂ψ` (6) and `∂(T, t)/∂p` (6 x 3), in closed
/// form: [`start`] differentiated step by step (each unit vector `u = a/|a|` by
/// `du = (I − u uᵀ) da/|a|`), with the same trigonometry and roots as the values.
fn start_derivs(e: &Ellipsoid, p: &Vec3, w: &Vec3, psi: f64) -> (Vec3, Vec3, [f64; 6], [[f64; 3]; 6]) {
    let a = &e.axes;
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    let r = norm(&pn);
    let ph = pn.map(|v| v / r);
    let phw = dot(&ph, w);
    let wd: Vec3 = [0, 1, 2].map(|i| w[i] - phw * ph[i]);
    let wn = norm(&wd);
    let u1 = wd.map(|v| v / wn);
    let u2 = cross(&ph, &u1);
    let rho = (1.0 - 1.0 / (r * r)).sqrt();
    let (sn, cs) = psi.sin_cos();
    let ring: Vec3 = [0, 1, 2].map(|i| u1[i] * cs + u2[i] * sn);
    let y: Vec3 = [0, 1, 2].map(|i| ph[i] / r + rho * ring[i]);
    let t_pt = [y[0] * a[0], y[1] * a[1], y[2] * a[2]];
    let d = sub(&t_pt, p);
    let dl = norm(&d);
    let t = d.map(|v| v / dl);
    // the tangent direction's change for a change `dd` of `T − p`
    let unit = |dd: &Vec3| {
        let td = dot(&t, dd);
        [0, 1, 2].map(|i| (dd[i] - td * t[i]) / dl)
    };
    let mut d_psi = [0.0; 6];
    let dt_pt: Vec3 = [0, 1, 2].map(|i| a[i] * rho * (u2[i] * cs - u1[i] * sn));
    let dt_dir = unit(&dt_pt);
    d_psi[..3].copy_from_slice(&dt_pt);
    d_psi[3..].copy_from_slice(&dt_dir);
    let mut d_p = [[0.0; 3]; 6];
    for k in 0..3 {
        // dp = e_k
        let mut dpn = [0.0; 3];
        dpn[k] = 1.0 / a[k];
        let dr = ph[k] * dpn[k];
        let dph: Vec3 = [0, 1, 2].map(|i| (dpn[i] - dr * ph[i]) / r);
        let dphw = dot(&dph, w);
        let dwd: Vec3 = [0, 1, 2].map(|i| -(dphw * ph[i] + phw * dph[i]));
        let u1d = dot(&u1, &dwd);
        let du1: Vec3 = [0, 1, 2].map(|i| (dwd[i] - u1d * u1[i]) / wn);
        let (c1, c2) = (cross(&dph, &u1), cross(&ph, &du1));
        let du2: Vec3 = [0, 1, 2].map(|i| c1[i] + c2[i]);
        let drho = dr / (r * r * r * rho);
        let dy: Vec3 =
            [0, 1, 2].map(|i| dph[i] / r - ph[i] * dr / (r * r) + drho * ring[i] + rho * (du1[i] * cs + du2[i] * sn));
        let mut dd: Vec3 = [0, 1, 2].map(|i| a[i] * dy[i]);
        for i in 0..3 {
            d_p[i][k] = dd[i];
        }
        dd[k] -= 1.0;
        let dt = unit(&dd);
        for i in 0..3 {
            d_p[3 + i][k] = dt[i];
        }
    }
    (t_pt, t, d_psi, d_p)
}

/// [`start_derivs`] by dual numbers, one pass per argument: the reference the closed form is
/// tested against.
#[cfg(test)]
fn start_derivs_dual(e: &Ellipsoid, p: &Vec3, w: &Vec3, psi: f64) -> (Vec3, Vec3, [f64; 6], [[f64; 3]; 6]) {
    use num_dual::Dual64;
    let (tp, tv) = start(e, p, w, psi);
    let mut d_psi = [0.0; 6];
    let mut d_p = [[0.0; 3]; 6];
    for k in 0..4 {
        let mut pd = p.map(Dual64::from);
        let mut sd = Dual64::from(psi);
        if k == 0 {
            sd.eps = 1.0;
        } else {
            pd[k - 1].eps = 1.0;
        }
        let (a, b) = start(e, &pd, w, sd);
        for i in 0..3 {
            if k == 0 {
                d_psi[i] = a[i].eps;
                d_psi[3 + i] = b[i].eps;
            } else {
                d_p[i][k - 1] = a[i].eps;
                d_p[3 + i][k - 1] = b[i].eps;
            }
        }
    }
    (tp, tv, d_psi, d_p)
}

/// Everything about one shot at `ξ`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Trial {
    xi: [f64; 3],
    r: Vec3,
    jac: [[f64; 3]; 3],
    t_pt: Vec3,
    d_psi: [f64; 6],
    d_p: [[f64; 3]; 6],
    resp: Response,
    steps: usize,
    /// The size of the Newton step applied to the shot without another (0: none; see
    /// [`corrected`]).
    correction: f64,
}

/// The end state's linear response to a change of the start state (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Response {
    t_in: Vec3,
    b_in: Vec3,
    shot: Shot,
    t_out: Vec3,
    n_out: Vec3,
    b_out: Vec3,
    g_out: f64,
    kappa: f64,
    m: Vec3,
}

impl Response {
    /// `(δX, δV)` for a start change `(δT, δt)`.
    fn apply(&self, d: &[f64; 6]) -> (Vec3, Vec3) {
        let dt = [d[0], d[1], d[2]];
        let dv = [d[3], d[4], d[5]];
        let st = dot(&dt, &self.t_in);
        let sb = dot(&dt, &self.b_in);
        let sr = dot(&dv, &self.b_in);
        let s = &self.shot;
        let j = sb * s.ja + sr * s.jr;
        let jp = sb * s.dja + sr * s.djr;
        let dx: Vec3 = [0, 1, 2].map(|i| st * self.t_out[i] + j * self.b_out[i]);
        let tmdx = (0..3).map(|i| self.m[i] * self.t_out[i] * dx[i]).sum::<f64>() / self.g_out;
        let dvv: Vec3 = [0, 1, 2].map(|i| jp * self.b_out[i] - tmdx * self.n_out[i]);
        (dx, dvv)
    }
}

fn trial(e: &Ellipsoid, p: &Vec3, s: &Vec3, w: &Vec3, xi: [f64; 3]) -> Trial {
    let (t_pt, t_dir, d_psi, d_p) = start_derivs(e, p, w, xi[0]);
    let steps = e.steps_with(xi[1], path_curvature(e, p, s));
    let shot = e.shoot_in(&t_pt, &t_dir, xi[1], steps);
    assemble(e, s, xi, (t_pt, t_dir, d_psi, d_p), shot, steps)
}

/// The trial at `ξ` from its start (`start_derivs`) and the shot's end state.
fn assemble(
    e: &Ellipsoid,
    s: &Vec3,
    xi: [f64; 3],
    (t_pt, t_dir, d_psi, d_p): (Vec3, Vec3, [f64; 6], [[f64; 3]; 6]),
    shot: Shot,
    steps: usize,
) -> Trial {
    let n_in = e.normal(&t_pt);
    let b_in = cross(&n_in, &t_dir);
    let g = e.grad(&shot.x);
    let g_out = norm(&g);
    let n_out = g.map(|v| v / g_out);
    let t_out = shot.v;
    let b_out = cross(&n_out, &t_out);
    let m = *e.metric();
    let kappa = (m[0] * t_out[0] * t_out[0] + m[1] * t_out[1] * t_out[1] + m[2] * t_out[2] * t_out[2]) / g_out;
    let resp = Response { t_in: t_dir, b_in, shot, t_out, n_out, b_out, g_out, kappa, m };
    let mu = xi[2];
    let r = [0, 1, 2].map(|i| shot.x[i] + mu * t_out[i] - s[i]);
    let (dx, dv) = resp.apply(&d_psi);
    let mut jac = [[0.0; 3]; 3];
    for i in 0..3 {
        jac[i][0] = dx[i] + mu * dv[i];
        jac[i][1] = t_out[i] - mu * kappa * n_out[i];
        jac[i][2] = t_out[i];
    }
    Trial { xi, r, jac, t_pt, d_psi, d_p, resp, steps, correction: 0.0 }
}

/// The trial at `t.xi + d` without another shot, to first order in the Newton step `d` (of
/// size `size`, see [`LINEAR_VALUES`]): the end point and tangent move by the Jacobi fields
/// (the start's change with `ψ`) and along the geodesic (`ℓ`), the Jacobi fields along the
/// geodesic (`j″ = −K j`); the start, the residual and its Jacobian are made anew there.
fn corrected(e: &Ellipsoid, p: &Vec3, s: &Vec3, w: &Vec3, t: &Trial, d: &Vec3, size: f64) -> Option<Trial> {
    let xi = [0, 1, 2].map(|i| t.xi[i] + d[i]);
    if !(xi[1] >= 0.0 && xi[2] > 0.0) {
        return None;
    }
    let r = &t.resp;
    let sh = &r.shot;
    let (dx, dv) = r.apply(&t.d_psi.map(|v| v * d[0]));
    let x: Vec3 = [0, 1, 2].map(|i| sh.x[i] + dx[i] + d[1] * r.t_out[i]);
    let v: Vec3 = [0, 1, 2].map(|i| sh.v[i] + dv[i] - d[1] * r.kappa * r.n_out[i]);
    let vl = norm(&v);
    let k = e.gaussian_curvature(&sh.x);
    let shot = Shot {
        x,
        v: v.map(|c| c / vl),
        ja: sh.ja + d[1] * sh.dja,
        dja: sh.dja - d[1] * k * sh.ja,
        jr: sh.jr + d[1] * sh.djr,
        djr: sh.djr - d[1] * k * sh.jr,
    };
    let mut c = assemble(e, s, xi, start_derivs(e, p, w, xi[0]), shot, t.steps);
    c.correction = size;
    Some(c)
}

/// The factor on [`LINEAR_VALUES`] and [`LINEAR_HESSIAN`] for a wrap whose tangent segments are
/// short: the step's remainder grows as the largest semi-axis `scale` over the shorter segment
/// (through the tangent directions), so the step allowed shrinks as the root of that ratio.
fn linear_scale(p: &Vec3, t: &Trial, scale: f64) -> f64 {
    (norm(&sub(p, &t.t_pt)).min(t.xi[2]) / scale).min(1.0).sqrt()
}

fn det3(m: &[[f64; 3]; 3]) -> f64 {
    m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
        + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
}

/// Inverse of a 3x3 matrix, `None` when (numerically) singular.
fn inverse3(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let d = det3(m);
    let scale: f64 = m.iter().flatten().fold(0.0, |a, v| a.max(v.abs()));
    if !(d.abs() > 1e-14 * scale * scale * scale) {
        return None;
    }
    let mut r = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let (i1, i2) = ((j + 1) % 3, (j + 2) % 3);
            let (j1, j2) = ((i + 1) % 3, (i + 2) % 3);
            r[i][j] = (m[i1][j1] * m[i2][j2] - m[i1][j2] * m[i2][j1]) / d;
        }
    }
    Some(r)
}

fn mat_vec3(m: &[[f64; 3]; 3], v: &Vec3) -> Vec3 {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v)]
}

/// A bound on the curvature along the path from `p` to `s` for the integration's step count:
/// 1.25 times the largest principal curvature at nine points of the affine image's arc (the
/// cold-start path), a function of the anchors alone. Near the ends of a long axis the
/// curvature is far larger than elsewhere; bounding it along this path instead of over the
/// whole ellipsoid saves steps where they are not needed.
fn path_curvature(e: &Ellipsoid, p: &Vec3, s: &Vec3) -> f64 {
    let a = &e.axes;
    let (yi, yo) = image_tangent_points(e, p, s);
    let ang = dot(&yi, &yo).clamp(-1.0, 1.0).acos();
    let ortho = {
        let q = [0, 1, 2].map(|i| yo[i] - dot(&yo, &yi) * yi[i]);
        let l = norm(&q);
        if l > 1e-12 { q.map(|x| x / l) } else { perpendicular(&yi) }
    };
    let mut k: f64 = 0.0;
    // the nine points by turning one eighth of the arc at a time (one sine and cosine, not nine)
    let (sd, cd) = (ang / 8.0).sin_cos();
    let (mut cs, mut sn) = (1.0f64, 0.0f64);
    for _ in 0..9 {
        let y = [0, 1, 2].map(|i| cs * yi[i] + sn * ortho[i]);
        k = k.max(e.max_curvature(&[y[0] * a[0], y[1] * a[1], y[2] * a[2]]));
        (cs, sn) = (cs * cd - sn * sd, sn * cd + cs * sd);
    }
    1.25 * k
}

/// Damped Newton from `xi0`; `None` when it fails. Converged when the residual is below `1e-13`
/// of the ellipsoid's size, about the integration's rounding floor, or when the Newton step is
/// below `linear` (relative), which is then applied without another shot ([`corrected`]);
/// between `1e-13` and `1e-10`, a full step that does not reduce the residual also means the
/// floor is reached.
fn newton(e: &Ellipsoid, p: &Vec3, s: &Vec3, w: &Vec3, xi0: [f64; 3], max_iter: usize, linear: f64) -> Option<Trial> {
    let scale = e.axes[0].max(e.axes[1]).max(e.axes[2]);
    let mut cur = trial(e, p, s, w, xi0);
    for _ in 0..max_iter {
        let rn = norm(&cur.r);
        if !rn.is_finite() {
            return None;
        }
        if rn <= 1e-13 * scale {
            return Some(cur);
        }
        let jinv = inverse3(&cur.jac)?;
        let step = mat_vec3(&jinv, &cur.r).map(|v| -v);
        let size = step[0].abs().max(step[1].abs() / scale).max(step[2].abs() / scale);
        if size <= linear * linear_scale(p, &cur, scale) {
            if let Some(c) = corrected(e, p, s, w, &cur, &step, size) {
                return Some(c);
            }
        }
        let mut lam: f64 = 1.0;
        // keep the geodesic length non-negative and the last segment pointing forward
        if cur.xi[1] + step[1] < 0.0 {
            lam = lam.min(0.9 * cur.xi[1] / -step[1]);
        }
        if cur.xi[2] + step[2] < 0.1 * cur.xi[2] {
            lam = lam.min(0.9 * cur.xi[2] / -step[2]);
        }
        let near = rn <= 1e-10 * scale;
        let mut accepted = false;
        while lam > 1e-6 {
            let xi = [0, 1, 2].map(|i| cur.xi[i] + lam * step[i]);
            let t = trial(e, p, s, w, xi);
            let tn = norm(&t.r);
            if tn < (1.0 - 1e-4 * lam) * rn {
                cur = t;
                accepted = true;
                break;
            }
            if near {
                break;
            }
            lam *= 0.5;
        }
        if !accepted {
            // no further decrease: converged to the rounding floor of the integration, or stuck
            return near.then_some(cur);
        }
    }
    (norm(&cur.r) <= 1e-10 * scale).then_some(cur)
}

/// The tangent points (on the unit sphere) of the affine-image sphere problem.
fn image_tangent_points(e: &Ellipsoid, p: &Vec3, s: &Vec3) -> (Vec3, Vec3) {
    let a = &e.axes;
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    let sn = [s[0] / a[0], s[1] / a[1], s[2] / a[2]];
    let (rp, rs) = (norm(&pn), norm(&sn));
    let (u, v) = (pn.map(|x| x / rp), sn.map(|x| x / rs));
    let cr = cross(&u, &v);
    let cn = norm(&cr);
    let n = if cn > 1e-9 { cr.map(|x| x / cn) } else { perpendicular(&u) };
    let e1 = cross(&n, &u);
    let e2 = cross(&v, &n);
    let (cp, sp) = (1.0 / rp, (1.0 - 1.0 / (rp * rp)).sqrt());
    let (cs, ss) = (1.0 / rs, (1.0 - 1.0 / (rs * rs)).sqrt());
    ([0, 1, 2].map(|i| cp * u[i] + sp * e1[i]), [0, 1, 2].map(|i| cs * v[i] + ss * e2[i]))
}

/// The cold-start guess: tangent points and arc of the affine-image sphere problem.
fn cold_guess(e: &Ellipsoid, p: &Vec3, s: &Vec3) -> (Vec3, [f64; 3]) {
    let a = &e.axes;
    let (y_in, y_out) = image_tangent_points(e, p, s);
    // the arc from y_in to y_out mapped back by D, as a polyline
    let ang = dot(&y_in, &y_out).clamp(-1.0, 1.0).acos();
    let k = 16;
    let mut ell = 0.0;
    let mut prev = [y_in[0] * a[0], y_in[1] * a[1], y_in[2] * a[2]];
    let ortho = {
        let q = [0, 1, 2].map(|i| y_out[i] - dot(&y_out, &y_in) * y_in[i]);
        let l = norm(&q);
        if l > 1e-12 { q.map(|x| x / l) } else { perpendicular(&y_in) }
    };
    for j in 1..=k {
        let t = ang * j as f64 / k as f64;
        let y = [0, 1, 2].map(|i| t.cos() * y_in[i] + t.sin() * ortho[i]);
        let x = [y[0] * a[0], y[1] * a[1], y[2] * a[2]];
        ell += norm(&sub(&x, &prev));
        prev = x;
    }
    let t_out = [y_out[0] * a[0], y_out[1] * a[1], y_out[2] * a[2]];
    (y_in, [0.0, ell, norm(&sub(s, &t_out))])
}

/// Shape homotopy: the same problem on ellipsoids deformed from a sphere (where the cold guess
/// is exact) to `e`, with the anchors fixed in the affine image. Since the image is unchanged,
/// so is whether the path wraps; the solution is followed in small, adaptive steps.
fn homotopy(e: &Ellipsoid, p: &Vec3, s: &Vec3, linear: f64) -> Option<(Trial, Vec3)> {
    let a = e.axes;
    let g = (a[0] * a[1] * a[2]).cbrt();
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    let sn = [s[0] / a[0], s[1] / a[1], s[2] / a[2]];
    let at = |tau: f64| {
        let ax = a.map(|v| g.powf(1.0 - tau) * v.powf(tau));
        let ei = Ellipsoid::new(ax);
        let pi = [pn[0] * ax[0], pn[1] * ax[1], pn[2] * ax[2]];
        let si = [sn[0] * ax[0], sn[1] * ax[1], sn[2] * ax[2]];
        (ei, pi, si)
    };
    // at τ = 0 the guess (scaled to the sphere of radius g) is the exact solution
    let (e0, p0, s0) = at(0.0);
    let (w0, xi_start) = cold_guess(&e0, &p0, &s0);
    let mut xi = newton(&e0, &p0, &s0, &w0, xi_start, 10, LINEAR_VALUES)?.xi;
    let (mut tau, mut dtau) = (0.0f64, 0.125f64);
    // bounded work: a path that needs more steps than this is not followed
    let mut budget = 200;
    while tau < 1.0 {
        budget -= 1;
        if budget == 0 {
            return None;
        }
        let next = (tau + dtau).min(1.0);
        let (ei, pi, si) = at(next);
        match newton(&ei, &pi, &si, &w0, xi, 12, LINEAR_VALUES) {
            Some(t) => {
                xi = t.xi;
                tau = next;
                dtau = (dtau * 1.5).min(0.5);
            }
            None => {
                dtau *= 0.5;
                if dtau < 1e-3 {
                    return None;
                }
            }
        }
    }
    newton(e, p, s, &w0, xi, 20, linear).map(|t| (t, w0))
}

/// The wrap angle of the affine-image sphere problem: positive exactly when the straight line
/// from `p` to `s` passes through the ellipsoid (the path wraps). Both anchors must be outside.
pub fn image_wrap_angle(e: &Ellipsoid, p: &Vec3, s: &Vec3) -> Result<f64, ElementError> {
    let a = &e.axes;
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    let sn = [s[0] / a[0], s[1] / a[1], s[2] / a[2]];
    for (which, q) in [("first", &pn), ("second", &sn)] {
        let r2 = dot(q, q);
        if !(r2 > 1.0) {
            return Err(ElementError::Domain(format!(
                "the path's {which} anchor is inside the ellipsoid (xᵀMx = {r2:.6} ≤ 1)"
            )));
        }
    }
    let (rp, rs) = (norm(&pn), norm(&sn));
    let (hp, hs) = (((rp - 1.0) * (rp + 1.0)).sqrt(), ((rs - 1.0) * (rs + 1.0)).sqrt());
    Ok(crate::span::wrap_angle(norm(&cross(&pn, &sn)), dot(&pn, &sn), 1.0, hp, hs))
}

/// Does the straight line from `p` to `s` pass through the ellipsoid (see [`image_wrap_angle`])?
pub fn wraps(e: &Ellipsoid, p: &Vec3, s: &Vec3) -> Result<bool, ElementError> {
    Ok(image_wrap_angle(e, p, s)? > 0.0)
}

/// Below this wrap angle of the affine image (rad), Newton started from the image's solution
/// converges to the shortest path; above it, it may find a longer geodesic, and the cold start
/// follows the shape homotopy instead (see the tests).
const DIRECT_COLD_START: f64 = 0.3;

/// Whether a converged path is a local minimum of length, not a saddle. Moving the contact
/// points sideways by `δa` and `δb` (the middle staying a geodesic, so a Jacobi field with those
/// end values) changes the length to second order by `½ [δa δb] Q [δa δb]ᵀ / j_r(ℓ)` with
/// ```text
/// Q = [ j_r/d + j_a    −1          ]      d = |p − T_in|, μ = last segment
///     [ −1             j_r/μ + j_r' ]
/// ```
/// (index form of the Jacobi fields, using their Wronskian `j_a j_r' − j_a' j_r = 1`). A minimum
/// needs `j_r(ℓ) > 0` (no conjugate point) and `Q` positive definite. On a sphere `det Q` is
/// zero exactly when the anchors and the centre are in line, where the path may turn about
/// that line freely.
fn is_minimum(p: &Vec3, t: &Trial) -> bool {
    let s = &t.resp.shot;
    let d = norm(&sub(p, &t.t_pt));
    let mu = t.xi[2];
    let a = s.jr / d + s.ja;
    let b = s.jr / mu + s.djr;
    s.jr >= 0.0 && a > 0.0 && a * b - 1.0 > -1e-12
}

fn length_of(p: &Vec3, t: &Trial) -> f64 {
    norm(&sub(p, &t.t_pt)) + t.xi[1] + t.xi[2]
}

/// `ξ` at the anchors `a` predicted from the last solution: its sensitivity to first order and,
/// when the solution before it is known, the second-order term `½ ∂²ξ/∂a²[δ, δ]` as far as the
/// difference of the two sensitivities gives it (see the module docs). With `d` the line
/// between the two solutions' anchors and `δ = α d + δ⊥`, the term is `½ α (S₁ − S₀)(2δ − α d)`
/// up to `½ ∂²ξ/∂a²[δ⊥, δ⊥]`. Used only when the two moves are of a size (`d` and `δ` within a
/// factor of ten), where `S₁ − S₀` is neither rounding noise nor a long chord.
fn predict(warm: &Warm, a: &[f64; 6]) -> [f64; 3] {
    let delta: [f64; 6] = std::array::from_fn(|k| a[k] - warm.anchors[k]);
    let mut pred: [f64; 3] =
        std::array::from_fn(|i| warm.xi[i] + (0..6).map(|k| warm.dxi[i][k] * delta[k]).sum::<f64>());
    if let Some((a0, s0)) = &warm.previous {
        let d: [f64; 6] = std::array::from_fn(|k| warm.anchors[k] - a0[k]);
        let dd: f64 = d.iter().map(|v| v * v).sum();
        let del2: f64 = delta.iter().map(|v| v * v).sum();
        if dd > 0.0 && del2 <= 100.0 * dd && dd <= 100.0 * del2 {
            let alpha = d.iter().zip(&delta).map(|(x, y)| x * y).sum::<f64>() / dd;
            let v: [f64; 6] = std::array::from_fn(|k| 2.0 * delta[k] - alpha * d[k]);
            for (i, pi) in pred.iter_mut().enumerate() {
                *pi += 0.5 * alpha * (0..6).map(|k| (warm.dxi[i][k] - s0[i][k]) * v[k]).sum::<f64>();
            }
        }
    }
    pred
}

/// Solve the wrap (`phi_image`: the image wrap angle), warm-started from `warm` when it holds a
/// solution. Returns a local minimum of length: when the warm or cold start lands on a saddle
/// (two ways round a bump of the ellipsoid, nearly equally long), Newton restarts from
/// neighbouring horizon angles and the shortest minimum found is kept.
fn solve(
    e: &Ellipsoid,
    p: &Vec3,
    s: &Vec3,
    phi_image: f64,
    warm: &Warm,
    linear: f64,
) -> Result<(Trial, Vec3), ElementError> {
    let a = &e.axes;
    let pn = [p[0] / a[0], p[1] / a[1], p[2] / a[2]];
    // the horizon parametrisation needs the reference direction well off the anchor's axis: at
    // least half the horizon circle's radius
    let rho = (1.0 - 1.0 / dot(&pn, &pn)).max(0.0).sqrt();
    let usable = |w: &Vec3| {
        let ph = pn.map(|v| v / norm(&pn));
        let d = [0, 1, 2].map(|i| w[i] - dot(w, &ph) * ph[i]);
        norm(&d) > 0.5 * rho * norm(w)
    };
    let mut found: Option<(Trial, Vec3)> = None;
    if warm.valid && usable(&warm.w) {
        // predicted from the last solutions; the plain last solution if that fails
        let mut pred = predict(warm, &[p[0], p[1], p[2], s[0], s[1], s[2]]);
        if !(pred[1] >= 0.0 && pred[2] > 0.0) {
            pred = warm.xi;
        }
        let t = newton(e, p, s, &warm.w, pred, 30, linear).or_else(|| newton(e, p, s, &warm.w, warm.xi, 30, linear));
        if let Some(t) = t {
            if is_minimum(p, &t) {
                return Ok((t, warm.w));
            }
            found = Some((t, warm.w));
        }
    }
    if found.is_none() {
        let (w, xi0) = cold_guess(e, p, s);
        if usable(&w) && phi_image < DIRECT_COLD_START {
            if let Some(t) = newton(e, p, s, &w, xi0, 40, linear) {
                found = Some((t, w));
            }
        }
        if found.is_none() {
            found = homotopy(e, p, s, linear);
        }
    }
    let Some((t, w)) = found else {
        return Err(ElementError::NoConvergence("the geodesic over the ellipsoid was not found".into()));
    };
    if is_minimum(p, &t) {
        return Ok((t, w));
    }
    // a saddle: look for the minima on either side
    let mut best: Option<(f64, Trial)> = None;
    for dpsi in [0.3, -0.3, 0.7, -0.7, 1.2, -1.2, 1.8, -1.8, 2.5, -2.5, 3.1] {
        if let Some(c) = newton(e, p, s, &w, [t.xi[0] + dpsi, t.xi[1], t.xi[2]], 40, linear) {
            if is_minimum(p, &c) {
                let l = length_of(p, &c);
                if best.as_ref().is_none_or(|(bl, _)| l < *bl) {
                    best = Some((l, c));
                }
            }
        }
    }
    Ok(match best {
        Some((_, c)) => (c, w),
        None => (t, w),
    })
}

/// The span over an ellipsoid from `p` to `s` (ellipsoid frame), its gradient and, when
/// `want_hess`, its Hessian; updates the warm start. Also returns what the dual-number version
/// needs (`None` when the path does not wrap).
pub fn span(
    e: &Ellipsoid,
    p: &Vec3,
    s: &Vec3,
    warm: &mut Warm,
    want_hess: bool,
) -> Result<(SpanEval, Option<Solved>), ElementError> {
    let phi_image = image_wrap_angle(e, p, s)?;
    if !(phi_image > 0.0) {
        *warm = Warm::default();
        return Ok((straight(p, s, want_hess)?, None));
    }
    let anchors = [p[0], p[1], p[2], s[0], s[1], s[2]];
    let same = warm.valid && anchors.map(f64::to_bits) == warm.anchors.map(f64::to_bits);
    let linear = if want_hess { LINEAR_HESSIAN } else { LINEAR_VALUES };
    let (t, w) = match warm.last {
        // the same anchors: the last solution, unless the Hessian now wants a closer one
        Some(t) if same && t.correction <= linear => (t, warm.w),
        _ => solve(e, p, s, phi_image, warm, linear)?,
    };
    let jinv = inverse3(&t.jac).ok_or_else(|| {
        ElementError::Domain("the wrapped path over the ellipsoid is at a focal configuration".into())
    })?;
    let [_, ell, mu] = t.xi;
    // keep the solution, its sensitivity and the one before for the next evaluation; a new
    // reference direction only when the anchor turns towards the old one (where the
    // parametrisation degenerates)
    let (rp_dxi, _) = sensitivities(&t, &jinv);
    let previous = if same {
        warm.previous
    } else if warm.valid && warm.w == w {
        Some((warm.anchors, warm.dxi))
    } else {
        None
    };
    *warm = Warm { w, xi: t.xi, anchors, dxi: rp_dxi, valid: true, previous, last: Some(t) };
    let dpv = sub(p, &t.t_pt);
    let dp = norm(&dpv);
    let ep = dpv.map(|v| v / dp);
    let t_out = t.resp.t_out;
    let mut ev = SpanEval {
        length: dp + ell + mu,
        grad: [ep[0], ep[1], ep[2], t_out[0], t_out[1], t_out[2]],
        hess: [0.0; 36],
        wrap: Some(Contact { t_in: t.t_pt, t_out: t.resp.shot.x, surface_length: ell }),
    };
    if want_hess {
        hessian(&t, &jinv, &ep, dp, &mut ev.hess);
    }
    Ok((ev, Some(Solved { w, xi: t.xi, steps: t.steps, jinv })))
}

/// `∂ξ/∂(p, s)` (3 x 6) at a converged trial, and `∂R/∂p` (3 x 3).
fn sensitivities(t: &Trial, jinv: &[[f64; 3]; 3]) -> ([[f64; 6]; 3], [[f64; 3]; 3]) {
    let mu = t.xi[2];
    let mut rp = [[0.0; 3]; 3];
    for k in 0..3 {
        let col: [f64; 6] = [0, 1, 2, 3, 4, 5].map(|i| t.d_p[i][k]);
        let (dx, dv) = t.resp.apply(&col);
        for i in 0..3 {
            rp[i][k] = dx[i] + mu * dv[i];
        }
    }
    let mut dxi = [[0.0; 6]; 3];
    for i in 0..3 {
        for k in 0..3 {
            dxi[i][k] = -(0..3).map(|q| jinv[i][q] * rp[q][k]).sum::<f64>();
            dxi[i][3 + k] = jinv[i][k];
        }
    }
    (dxi, rp)
}

/// The 6 x 6 Hessian at a converged trial (see the module docs).
fn hessian(t: &Trial, jinv: &[[f64; 3]; 3], ep: &Vec3, dp: f64, h: &mut [f64; 36]) {
    let mu = t.xi[2];
    let resp = &t.resp;
    // responses to the three components of p at fixed ψ
    let mut rp = [[0.0; 3]; 3]; // ∂R/∂p, rows R, cols p
    let mut dtp = [[0.0; 3]; 3]; // ∂t_out/∂p at fixed ξ
    for k in 0..3 {
        let col: [f64; 6] = [0, 1, 2, 3, 4, 5].map(|i| t.d_p[i][k]);
        let (dx, dv) = resp.apply(&col);
        for i in 0..3 {
            rp[i][k] = dx[i] + mu * dv[i];
            dtp[i][k] = dv[i];
        }
    }
    let (_, dv_psi) = resp.apply(&t.d_psi);
    // ∂t_out/∂ξ, rows t_out, cols (ψ, ℓ, μ)
    let mut dtxi = [[0.0; 3]; 3];
    for i in 0..3 {
        dtxi[i][0] = dv_psi[i];
        dtxi[i][1] = -resp.kappa * resp.n_out[i];
    }
    let mm = |a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]| {
        let mut r = [[0.0; 3]; 3];
        for i in 0..3 {
            for j in 0..3 {
                r[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        r
    };
    // dξ/dp = −J⁻¹ ∂R/∂p, dξ/ds = J⁻¹
    let dxi_dp = mm(jinv, &rp).map(|row| row.map(|v| -v));
    let h_ss = mm(&dtxi, jinv);
    let mut h_sp = mm(&dtxi, &dxi_dp);
    for i in 0..3 {
        for j in 0..3 {
            h_sp[i][j] += dtp[i][j];
        }
    }
    // ∂L/∂p = e_p = (p − T)/|p − T|: d e_p = P (dp − dT)/|p − T|
    let dt_psi = [t.d_psi[0], t.d_psi[1], t.d_psi[2]];
    let mut dtin_dp = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            dtin_dp[i][j] = t.d_p[i][j] + dt_psi[i] * dxi_dp[0][j];
        }
    }
    let proj = |i: usize, k: usize| (if i == k { 1.0 } else { 0.0 }) - ep[i] * ep[k];
    let mut h_pp = [[0.0; 3]; 3];
    let mut h_ps = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            let mut a = 0.0;
            let mut b = 0.0;
            for k in 0..3 {
                a += proj(i, k) * ((if k == j { 1.0 } else { 0.0 }) - dtin_dp[k][j]);
                b -= proj(i, k) * dt_psi[k] * jinv[0][j];
            }
            h_pp[i][j] = a / dp;
            h_ps[i][j] = b / dp;
        }
    }
    // symmetric by construction up to the integration's rounding: symmetrise
    for i in 0..3 {
        for j in 0..3 {
            h[i * 6 + j] = 0.5 * (h_pp[i][j] + h_pp[j][i]);
            h[(3 + i) * 6 + 3 + j] = 0.5 * (h_ss[i][j] + h_ss[j][i]);
            let cross_ij = 0.5 * (h_ps[i][j] + h_sp[j][i]);
            h[i * 6 + 3 + j] = cross_ij;
            h[(3 + j) * 6 + i] = cross_ij;
        }
    }
}

/// The span's length and gradient for a generic scalar: chord-Newton steps in `T` from the
/// `f64` solution (with its Jacobian), one per order the scalar carries (`DualNum::NDERIV`: each
/// step makes `ξ` exact to one more order, and the length is not stationary in `ξ`), so that the
/// length and gradient are exact to that order.
pub fn span_generic<T: Real>(e: &Ellipsoid, p: &Vec3<T>, s: &Vec3<T>, solved: Option<&Solved>) -> (T, [T; 6]) {
    let Some(sol) = solved else {
        return straight_generic(p, s);
    };
    let mut xi = sol.xi.map(c::<T>);
    let shoot = |xi: &[T; 3]| {
        let (tp, tv) = start(e, p, &sol.w, xi[0]);
        let (x, v) = e.shoot_generic(&tp, &tv, xi[1], sol.steps);
        (tp, x, v)
    };
    for _ in 0..T::NDERIV {
        let (_, x, v) = shoot(&xi);
        let r: Vec3<T> = [0, 1, 2].map(|i| x[i] + xi[2] * v[i] - s[i]);
        for k in 0..3 {
            xi[k] -= r[0] * sol.jinv[k][0] + r[1] * sol.jinv[k][1] + r[2] * sol.jinv[k][2];
        }
    }
    let (tp, _, v) = shoot(&xi);
    let d = sub(p, &tp);
    let dl = norm(&d);
    let len = dl + xi[1] + xi[2];
    (len, [d[0] / dl, d[1] / dl, d[2] / dl, v[0], v[1], v[2]])
}

#[cfg(test)]
mod tests;
