//! Exact first and second derivatives of the terms deformation functions are built from.
//!
//! Each function returns `s` times the term's value and adds `s` times its gradient and Hessian
//! (with respect to the element's local coordinates) to a [`Derivs`], so that a deformation that
//! is a weighted sum of terms is the sum of the calls, value and derivatives alike. Offsets are positions in the
//! local coordinate vector. Rotated-vector terms use `(R(λ)u)·d = λᵀQ(u,d)λ`
//! ([`crate::geometry::q_matrix`]).

use crate::element::{Derivs, ElementError};
use crate::geometry::{Quat, Vec3, dot, norm, q_matrix, q_times, quat_at, rotate, rotate_jacobian, sub, vec3_at};

fn flat4(q: &[[f64; 4]; 4], s: f64) -> [f64; 16] {
    let mut b = [0.0; 16];
    for i in 0..4 {
        for j in 0..4 {
            b[i * 4 + j] = s * q[i][j];
        }
    }
    b
}

/// `s (R(λ_a) a) · (R(λ_b) b)` for constant body vectors `a`, `b`; `λ_a`, `λ_b` at offsets `la`, `lb`.
pub fn dot_rr(d: &mut Derivs<'_>, x: &[f64], la: usize, a: &Vec3, lb: usize, b: &Vec3, s: f64) -> f64 {
    let hess = d.has_hess();
    dot_rr_rotated(d, &Rotated::new(x, la, a, hess), &Rotated::new(x, lb, b, hess), s)
}

/// A constant body vector `u` rotated by the Euler parameters `λ` at offset `l` of the local
/// coordinates: `R(λ) u` and, when asked, its Jacobian `∂(R(λ)u)/∂λ` (3 x 4). An element that
/// uses one rotated vector in several terms (a hinge's triads) makes it once.
#[derive(Clone, Copy, Debug)]
pub struct Rotated {
    l: usize,
    lam: Quat,
    u: Vec3,
    r: Vec3,
    jac: [[f64; 4]; 3],
}

impl Rotated {
    /// `R(λ) u` for `λ` at offset `l` of `x`, with the Jacobian when `jacobian`.
    pub fn new(x: &[f64], l: usize, u: &Vec3, jacobian: bool) -> Self {
        let lam: Quat = quat_at(x, l);
        let jac = if jacobian { rotate_jacobian(&lam, u) } else { [[0.0; 4]; 3] };
        Self { l, lam, u: *u, r: rotate(&lam, u), jac }
    }
}

/// [`dot_rr`] of two vectors rotated beforehand; the Jacobians must be there when `d` asks for
/// the Hessian.
pub fn dot_rr_rotated(d: &mut Derivs<'_>, a: &Rotated, b: &Rotated, s: f64) -> f64 {
    if d.has_grad() || d.has_hess() {
        let qa = q_matrix(&a.u, &b.r);
        let qb = q_matrix(&b.u, &a.r);
        if d.has_grad() {
            let ga = q_times(&qa, &a.lam).map(|v| 2.0 * v);
            let gb = q_times(&qb, &b.lam).map(|v| 2.0 * v);
            d.add_grad(a.l, &ga, s);
            d.add_grad(b.l, &gb, s);
        }
        if d.has_hess() {
            d.add_hess_diag(a.l, 4, &flat4(&qa, 2.0), s);
            d.add_hess_diag(b.l, 4, &flat4(&qb, 2.0), s);
            let (ja, jb) = (&a.jac, &b.jac);
            let mut c = [0.0; 16];
            for i in 0..4 {
                for j in 0..4 {
                    c[i * 4 + j] = (0..3).map(|k| ja[k][i] * jb[k][j]).sum();
                }
            }
            d.add_hess_cross(a.l, 4, b.l, 4, &c, s);
        }
    }
    s * dot(&a.r, &b.r)
}

/// `s (R(λ) a) · (x_q − x_p)` for a constant body vector `a`; `λ` at `l`, positions at `p`, `q`.
pub fn dot_rd(d: &mut Derivs<'_>, x: &[f64], l: usize, a: &Vec3, p: usize, q: usize, s: f64) -> f64 {
    let lam: Quat = quat_at(x, l);
    let dv = sub(&vec3_at(x, q), &vec3_at(x, p));
    let ra = rotate(&lam, a);
    if d.has_grad() || d.has_hess() {
        let qm = q_matrix(a, &dv);
        if d.has_grad() {
            d.add_grad(l, &q_times(&qm, &lam).map(|v| 2.0 * v), s);
            d.add_grad(q, &ra, s);
            d.add_grad(p, &ra, -s);
        }
        if d.has_hess() {
            d.add_hess_diag(l, 4, &flat4(&qm, 2.0), s);
            let j = rotate_jacobian(&lam, a);
            let mut jt = [0.0; 12];
            for i in 0..4 {
                for k in 0..3 {
                    jt[i * 3 + k] = j[k][i];
                }
            }
            d.add_hess_cross(l, 4, q, 3, &jt, s);
            d.add_hess_cross(l, 4, p, 3, &jt, -s);
        }
    }
    s * dot(&ra, &dv)
}

/// `s |x_q − x_p|`; positions at offsets `p`, `q`. Fails when the points coincide.
pub fn distance(d: &mut Derivs<'_>, x: &[f64], p: usize, q: usize, s: f64) -> Result<f64, ElementError> {
    let dv = sub(&vec3_at(x, q), &vec3_at(x, p));
    let l = norm(&dv);
    if !(l > 0.0) || !l.is_finite() {
        return Err(ElementError::Domain(format!("the two points coincide (distance {l})")));
    }
    let n = dv.map(|v| v / l);
    d.add_grad(q, &n, s);
    d.add_grad(p, &n, -s);
    if d.has_hess() {
        let mut h = [0.0; 9];
        for i in 0..3 {
            for j in 0..3 {
                h[i * 3 + j] = (if i == j { 1.0 } else { 0.0 } - n[i] * n[j]) / l;
            }
        }
        d.add_hess_diag(p, 3, &h, s);
        d.add_hess_diag(q, 3, &h, s);
        d.add_hess_cross(p, 3, q, 3, &h, -s);
    }
    Ok(s * l)
}

/// Gradient and Hessian of up to this many local coordinates are stored inline in a [`Scratch`]
/// (an element evaluation in a warm frame allocates nothing).
const INLINE_COORDS: usize = 8;

/// Owned gradient/Hessian storage for an intermediate scalar (e.g. the sine and cosine inside an
/// `atan2`), to be combined by the chain rule.
#[derive(Clone, Debug)]
pub struct Scratch {
    n: usize,
    /// Gradient (`n`) then Hessian (`n x n`, row-major), inline for up to [`INLINE_COORDS`].
    inline: [f64; INLINE_COORDS * (INLINE_COORDS + 1)],
    heap: Vec<f64>,
    with_grad: bool,
    with_hess: bool,
}

impl Scratch {
    /// Zeroed storage for `n` local coordinates, with the parts `like` wants.
    pub fn like(like: &Derivs<'_>, n: usize) -> Self {
        let (g, h) = (like.has_grad(), like.has_hess());
        let heap = if n <= INLINE_COORDS { Vec::new() } else { vec![0.0; n * (n + 1)] };
        Self { n, inline: [0.0; INLINE_COORDS * (INLINE_COORDS + 1)], heap, with_grad: g, with_hess: h }
    }
    fn storage(&self) -> &[f64] {
        if self.n <= INLINE_COORDS { &self.inline[..self.n * (self.n + 1)] } else { &self.heap }
    }
    /// Gradient (`n`; empty when not asked for).
    pub fn grad(&self) -> &[f64] {
        if self.with_grad { &self.storage()[..self.n] } else { &[] }
    }
    /// Hessian (`n x n` row-major; empty when not asked for).
    pub fn hess(&self) -> &[f64] {
        if self.with_hess { &self.storage()[self.n..] } else { &[] }
    }
    /// A [`Derivs`] view to accumulate into.
    pub fn derivs(&mut self) -> Derivs<'_> {
        let (n, g, h) = (self.n, self.with_grad, self.with_hess);
        let s = if n <= INLINE_COORDS { &mut self.inline[..n * (n + 1)] } else { &mut self.heap[..] };
        let (grad, hess) = s.split_at_mut(n);
        Derivs::new(n, if g { grad } else { &mut [] }, if h { hess } else { &mut [] })
    }
}

/// Chain rule for `θ = atan2(s, c)` given the derivatives of `s` and `c`; adds `w` times the
/// result to `out`. Returns `θ ∈ (−π, π]`.
///
/// With `z = c + i s`: `∇θ = Im(∇z/z)`, `∇²θ = Im(∇²z/z − ∇z∇zᵀ/z²)`, which is symmetric.
pub fn atan2_chain(out: &mut Derivs<'_>, s: f64, ds: &Scratch, c: f64, dc: &Scratch, w: f64) -> f64 {
    let r2 = s * s + c * c;
    let n = ds.n;
    let (dsg, dcg, dsh, dch) = (ds.grad(), dc.grad(), ds.hess(), dc.hess());
    if ds.with_grad {
        for i in 0..n {
            out.grad[i] += w * (c * dsg[i] - s * dcg[i]) / r2;
        }
    }
    if ds.with_hess {
        let r4 = r2 * r2;
        let (a, b) = (c * c - s * s, 2.0 * c * s);
        for i in 0..n {
            for j in 0..n {
                let k = i * n + j;
                let first = (c * dsh[k] - s * dch[k]) / r2;
                let im_zz = dcg[i] * dsg[j] + dsg[i] * dcg[j];
                let re_zz = dcg[i] * dcg[j] - dsg[i] * dsg[j];
                out.hess[k] += w * (first - (a * im_zz - b * re_zz) / r4);
            }
        }
    }
    s.atan2(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fd_check(f: &dyn Fn(&mut Derivs<'_>, &[f64]) -> f64, x: &[f64]) {
        let n = x.len();
        let (mut g, mut h) = (vec![0.0; n], vec![0.0; n * n]);
        f(&mut Derivs::new(n, &mut g, &mut h), x);
        let step = 1e-6;
        for i in 0..n {
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[i] += step;
            xm[i] -= step;
            let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
            let fp = f(&mut Derivs::new(n, &mut gp, &mut []), &xp);
            let fm = f(&mut Derivs::new(n, &mut gm, &mut []), &xm);
            assert!(
                ((fp - fm) / (2.0 * step) - g[i]).abs() < 1e-7,
                "grad {i}: {} vs {}",
                (fp - fm) / (2.0 * step),
                g[i]
            );
            for j in 0..n {
                let fd = (gp[j] - gm[j]) / (2.0 * step);
                assert!((fd - h[i * n + j]).abs() < 1e-6, "hess {i} {j}: {fd} vs {}", h[i * n + j]);
            }
        }
    }

    #[test]
    fn terms_match_finite_differences() {
        let x = [0.1, 0.2, -0.3, 0.8, 0.1, -0.4, 0.3, 1.0, -0.5, 0.7, 0.2, 0.9, -0.1, 0.35];
        let a = [0.3, -0.2, 0.9];
        let b = [-0.6, 0.5, 0.1];
        fd_check(&|d, x| dot_rr(d, x, 3, &a, 10, &b, 1.5), &x);
        // the same orientation node in both slots
        fd_check(&|d, x| dot_rr(d, x, 3, &a, 3, &b, 1.0), &x);
        fd_check(&|d, x| dot_rd(d, x, 3, &a, 0, 7, -0.7), &x);
        fd_check(&|d, x| distance(d, x, 0, 7, 2.0).unwrap(), &x);
        fd_check(
            &|d, x| {
                let n = x.len();
                let mut ss = Scratch::like(d, n);
                let mut cc = Scratch::like(d, n);
                let s =
                    dot_rr(&mut ss.derivs(), x, 3, &a, 10, &b, 1.0) + dot_rr(&mut ss.derivs(), x, 3, &b, 10, &a, -0.5);
                let c = dot_rd(&mut cc.derivs(), x, 3, &b, 0, 7, 1.0);
                atan2_chain(d, s, &ss, c, &cc, 1.0)
            },
            &x,
        );
    }
}
