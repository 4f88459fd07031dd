//! The hinge's derivatives in closed form: every term is a product `(R(λ_p) a)·(R(λ_q) b)` of a
//! triad vector of p and one of q, and a mode is a weighted sum of such terms (the rotation's
//! sine and cosine, each bending), so its gradient and Hessian are sums of the terms' — built
//! once per mode from each rotated vector's Jacobian, on the stack.
//!
//! With `R(λ) u = (λ0² − v·v) u + 2 (v·u) v + 2 λ0 (v × u)` (`v = λ_1..3`, not normalised):
//! - `∂(R u)/∂λ0 = 2 (λ0 u + v × u)`, `∂(R u)/∂v_k = 2 (−v_k u + (v·u) e_k + u_k v + λ0 e_k × u)`;
//! - the gradient of a term is `(J_aᵀ R_q b, J_bᵀ R_p a)`;
//! - its Hessian has the diagonal blocks `2 Q(a, R_q b)` and `2 Q(b, R_p a)`, `Q` the constant
//!   matrix of `(R(λ) u)·d = λᵀ Q(u, d) λ`, linear in `d uᵀ`, so that a weighted sum of terms
//!   needs one `Q` per side; and the mixed block `J_aᵀ J_b`.

use mollier_core::geometry::{Quat, Vec3, dot, q_matrix_of, rotate, rotate_jacobian};

/// A body vector `u` rotated by `λ`: `R(λ) u` and its Jacobian `∂(R(λ) u)/∂λ` (3 x 4, row-major).
pub(crate) struct Turned {
    /// The body vector.
    pub u: Vec3,
    /// `R(λ) u`.
    pub r: Vec3,
    /// `∂(R(λ) u)/∂λ` when asked for, zero otherwise.
    pub j: [[f64; 4]; 3],
}

impl Turned {
    /// `R(λ) u`, with the Jacobian when `jacobian`.
    #[inline]
    pub fn new(l: &Quat, u: &Vec3, jacobian: bool) -> Self {
        let j = if jacobian { rotate_jacobian(l, u) } else { [[0.0; 4]; 3] };
        Self { u: *u, r: rotate(l, u), j }
    }
}

/// One term `w (R_p a)·(R_q b)` of a mode.
pub(crate) type Term<'a> = (&'a Turned, &'a Turned, f64);

/// Add the gradient (8: `λ_p`, `λ_q`) of the weighted terms to `g`.
pub(crate) fn add_gradient(terms: &[Term<'_>], g: &mut [f64; 8]) {
    for &(a, b, w) in terms {
        for i in 0..4 {
            g[i] += w * (a.j[0][i] * b.r[0] + a.j[1][i] * b.r[1] + a.j[2][i] * b.r[2]);
            g[4 + i] += w * (b.j[0][i] * a.r[0] + b.j[1][i] * a.r[1] + b.j[2][i] * a.r[2]);
        }
    }
}

/// `2 Q` of `Σ w d uᵀ` given as `c[i][j] = Σ w d_i u_j`.
fn two_q(c: &[[f64; 3]; 3]) -> [[f64; 4]; 4] {
    q_matrix_of(c).map(|row| row.map(|v| 2.0 * v))
}

/// Add the Hessian (8 x 8, row-major) of the weighted terms to `h`, its blocks of the sides
/// that `moves` (`λ_p`, `λ_q`): a fixed side's rows and columns are left as they are.
pub(crate) fn add_hessian(terms: &[Term<'_>], h: &mut [f64; 64], moves: [bool; 2]) {
    let (mut cp, mut cq) = ([[0.0; 3]; 3], [[0.0; 3]; 3]);
    for &(a, b, w) in terms {
        if moves[0] {
            add_outer(&mut cp, w, &b.r, &a.u);
        }
        if moves[1] {
            add_outer(&mut cq, w, &a.r, &b.u);
        }
        if !(moves[0] && moves[1]) {
            continue;
        }
        for i in 0..4 {
            for k in 0..4 {
                let x = w * (a.j[0][i] * b.j[0][k] + a.j[1][i] * b.j[1][k] + a.j[2][i] * b.j[2][k]);
                h[i * 8 + 4 + k] += x;
                h[(4 + k) * 8 + i] += x;
            }
        }
    }
    if moves[0] {
        add_block(h, 0, &two_q(&cp));
    }
    if moves[1] {
        add_block(h, 4, &two_q(&cq));
    }
}

/// Add `q` to the diagonal block of `h` (8 x 8) from row and column `at`.
#[inline(always)]
fn add_block(h: &mut [f64; 64], at: usize, q: &[[f64; 4]; 4]) {
    for i in 0..4 {
        for k in 0..4 {
            h[(at + i) * 8 + at + k] += q[i][k];
        }
    }
}

/// `c += w d uᵀ`.
#[inline(always)]
fn add_outer(c: &mut [[f64; 3]; 3], w: f64, d: &Vec3, u: &Vec3) {
    for i in 0..3 {
        for k in 0..3 {
            c[i][k] += w * d[i] * u[k];
        }
    }
}

/// The local coordinates (of 8) whose rows and columns of a Hessian are formed when the sides
/// that `moves` (`λ_p`, `λ_q`) are: one range, since each side is a half.
pub(crate) fn moving_range(moves: [bool; 2]) -> std::ops::Range<usize> {
    match moves {
        [true, true] => 0..8,
        [true, false] => 0..4,
        [false, true] => 4..8,
        [false, false] => 0..0,
    }
}

/// The value of the weighted terms.
pub(crate) fn value(terms: &[Term<'_>]) -> f64 {
    terms.iter().map(|&(a, b, w)| w * dot(&a.r, &b.r)).sum()
}
