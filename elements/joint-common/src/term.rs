//! A scalar function of a joint element's eight local coordinates (the Euler parameters of the
//! fixed member at offset 0 and of the moving member at offset 4) with its exact gradient and
//! Hessian, in fixed-size arrays so that an evaluation allocates nothing.
//!
//! Terms are made from rotated-vector products ([`Term::product`]) and combined by the chain
//! rule: for `y = f(t_1, …, t_K)`,
//! ```text
//! ∇y = Σ_a f_a ∇t_a,    ∇²y = Σ_a f_a ∇²t_a + Σ_ab f_ab ∇t_a ∇t_bᵀ
//! ```

use mollier_core::element::Derivs;
use mollier_core::geometry::Vec3;
use mollier_core::terms::dot_rr;
use mollier_core::{Evaluation, Order};

/// Local coordinates of a joint element: two sets of Euler parameters.
pub const N: usize = 8;
/// Offset of the fixed member's Euler parameters.
pub const FIXED: usize = 0;
/// Offset of the moving member's Euler parameters.
pub const MOVING: usize = 4;

/// A scalar of the local coordinates: value, gradient (8) and Hessian (8 x 8, row-major). The
/// derivatives are filled only as far as the [`Order`] it was made with asks.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    /// The value.
    pub v: f64,
    /// Gradient.
    pub g: [f64; N],
    /// Hessian, row-major, symmetric.
    pub h: [f64; N * N],
}

impl Term {
    /// A constant.
    pub fn constant(v: f64) -> Self {
        Self { v, g: [0.0; N], h: [0.0; N * N] }
    }

    /// `(R(λ_i) a) · (R(λ_j) b)` for a vector `a` fixed in the fixed member and `b` in the moving
    /// member (body-frame components).
    pub fn product(x: &[f64], a: &Vec3, b: &Vec3, order: Order) -> Self {
        let mut t = Self::constant(0.0);
        let (g, h): (&mut [f64], &mut [f64]) = match order {
            Order::Hessian => (&mut t.g, &mut t.h),
            Order::Gradient => (&mut t.g, &mut []),
            _ => (&mut [], &mut []),
        };
        t.v = dot_rr(&mut Derivs::new(N, g, h), x, FIXED, a, MOVING, b, 1.0);
        t
    }

    /// `Σ w_k t_k`.
    pub fn combine(parts: &[(f64, &Term)]) -> Self {
        let mut r = Self::constant(0.0);
        for (w, t) in parts {
            r.v += w * t.v;
            r.g.iter_mut().zip(&t.g).for_each(|(a, b)| *a += w * b);
            r.h.iter_mut().zip(&t.h).for_each(|(a, b)| *a += w * b);
        }
        r
    }

    /// `y = f(t_1, …, t_K)` from `f`'s value, gradient `df` and Hessian `d2f` at the terms' values.
    pub fn chain<const K: usize>(f: f64, df: &[f64; K], d2f: &[[f64; K]; K], t: [&Term; K], order: Order) -> Self {
        let mut r = Self::constant(f);
        if order < Order::Gradient {
            return r;
        }
        for a in 0..K {
            let w = df[a];
            r.g.iter_mut().zip(&t[a].g).for_each(|(y, ta)| *y += w * ta);
            if order >= Order::Hessian {
                r.h.iter_mut().zip(&t[a].h).for_each(|(y, ta)| *y += w * ta);
                for b in 0..K {
                    let wab = d2f[a][b];
                    if wab == 0.0 {
                        continue;
                    }
                    for i in 0..N {
                        let s = wab * t[a].g[i];
                        for j in 0..N {
                            r.h[i * N + j] += s * t[b].g[j];
                        }
                    }
                }
            }
        }
        r
    }

    /// `atan2(s, c)` (in `(−π, π]`); `s² + c²` must be positive.
    pub fn atan2(s: &Term, c: &Term, order: Order) -> Self {
        let (sv, cv) = (s.v, c.v);
        let r2 = sv * sv + cv * cv;
        let r4 = r2 * r2;
        let df = [cv / r2, -sv / r2];
        let d2f = [[-2.0 * sv * cv / r4, (sv * sv - cv * cv) / r4], [(sv * sv - cv * cv) / r4, 2.0 * sv * cv / r4]];
        Self::chain(sv.atan2(cv), &df, &d2f, [s, c], order)
    }

    /// `√(a² + b²)`; it must be positive.
    pub fn hypot(a: &Term, b: &Term, order: Order) -> Self {
        let (av, bv) = (a.v, b.v);
        let r = av.hypot(bv);
        let r3 = r * r * r;
        let d2f = [[bv * bv / r3, -av * bv / r3], [-av * bv / r3, av * av / r3]];
        Self::chain(r, &[av / r, bv / r], &d2f, [a, b], order)
    }

    /// Write the value into `out.e[k]` and the derivatives into mode `k`, as far as wanted.
    pub fn store(&self, out: &mut Evaluation<'_>, k: usize) {
        out.e[k] = self.v;
        let d = out.mode(k);
        if d.has_grad() {
            d.grad.copy_from_slice(&self.g);
        }
        if d.has_hess() {
            d.hess.copy_from_slice(&self.h);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Central differences of `f`'s value and gradient against its own gradient and Hessian.
    fn fd_check(f: &dyn Fn(&[f64], Order) -> Term, x: &[f64; N]) {
        let t = f(x, Order::Hessian);
        let step = 1e-6;
        for i in 0..N {
            let (mut xp, mut xm) = (*x, *x);
            xp[i] += step;
            xm[i] -= step;
            let (p, m) = (f(&xp, Order::Gradient), f(&xm, Order::Gradient));
            let fd = (p.v - m.v) / (2.0 * step);
            assert!((fd - t.g[i]).abs() < 1e-7 * (1.0 + fd.abs()), "grad {i}: {fd} vs {}", t.g[i]);
            for j in 0..N {
                let fd2 = (p.g[j] - m.g[j]) / (2.0 * step);
                assert!(
                    (fd2 - t.h[i * N + j]).abs() < 1e-6 * (1.0 + fd2.abs()),
                    "hess {i} {j}: {fd2} vs {}",
                    t.h[i * N + j]
                );
            }
        }
        // values only: the same value, no derivatives
        let v = f(x, Order::Value);
        assert_eq!(v.v, t.v);
        assert!(v.g.iter().chain(&v.h).all(|d| *d == 0.0));
    }

    const X: [f64; N] = [0.9, 0.2, -0.3, 0.1, 0.7, -0.4, 0.35, 0.5];
    const A: Vec3 = [0.3, -0.2, 0.9];
    const B: Vec3 = [-0.6, 0.5, 0.1];
    const C: Vec3 = [0.1, 0.8, -0.3];

    #[test]
    fn chain_rules_match_central_differences() {
        fd_check(&|x, o| Term::product(x, &A, &B, o), &X);
        fd_check(&|x, o| Term::atan2(&Term::product(x, &A, &B, o), &Term::product(x, &C, &A, o), o), &X);
        fd_check(&|x, o| Term::hypot(&Term::product(x, &A, &B, o), &Term::product(x, &B, &C, o), o), &X);
        fd_check(
            &|x, o| {
                let (p, q) = (Term::product(x, &A, &B, o), Term::product(x, &B, &C, o));
                let s = Term::combine(&[(2.0, &p), (-0.5, &q)]);
                // y = s² q³: f_s = 2 s q³, f_q = 3 s² q², …
                let (sv, qv) = (s.v, q.v);
                let df = [2.0 * sv * qv.powi(3), 3.0 * sv * sv * qv * qv];
                let d2f = [[2.0 * qv.powi(3), 6.0 * sv * qv * qv], [6.0 * sv * qv * qv, 6.0 * sv * sv * qv]];
                Term::chain(sv * sv * qv.powi(3), &df, &d2f, [&s, &q], o)
            },
            &X,
        );
    }

    #[test]
    fn a_wrong_chain_coefficient_is_caught() {
        // negative control: a Hessian coefficient off by 1e-3 fails the same comparison
        let f = |x: &[f64], o: Order| {
            let p = Term::product(x, &A, &B, o);
            Term::chain(p.v * p.v, &[2.0 * p.v], &[[2.0 + 1e-3]], [&p], o)
        };
        let r = std::panic::catch_unwind(|| fd_check(&f, &X));
        assert!(r.is_err());
    }
}
