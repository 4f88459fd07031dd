//! A 4 x 4 diagonal block of `D_cc` solved transposed in closed form: a body's orientation
//! block, its columns one node's Euler parameters `λ` and its rows a hinge's three modes and the
//! norm of `λ` (whose gradient is a multiple of `λᵀ`).
//!
//! For any row `u` of the block `A`, `Q = [u; G(u)]` (`G` as in the Euler parameters' angular
//! velocity, `ω = 2 G(λ) λ̇`) has `Q Qᵀ = QᵀQ = |u|² I` and `u G(u)ᵀ = 0`, so `M = A Qᵀ` is block
//! triangular: `u`'s row is `[|u|², 0, 0, 0]`. `Aᵀ y = t` becomes `Mᵀ y = Q t`: three equations
//! in the other rows' unknowns alone (`Σ y_i β_i = G(u) t`, `β_i = G(u) a_i`), solved by
//! Cramer's rule with cross products, then `u`'s unknown by one division. `B = [β_i]` is a block
//! of `M`, and `B⁻¹` one of `M⁻¹`, so `B`'s condition is at most `A`'s.

/// `|det B|` below this fraction of `|β_0| |β_1| |β_2|` (Hadamard's bound) leaves the block to
/// the LU with pivoting.
const FLAT: f64 = 1e-6;

/// Solve `Aᵀ y = t` for a 4 x 4 `a` (row-major, 16 entries; `y_i` the unknown of row `i`),
/// `u` the last row. Any row serves (`B`'s condition is bounded by `A`'s whichever it is, and
/// `|u| ≥ σ_min(A)`); a fixed one spares a choice that round-off decides where the rows have
/// equal norms, as a hinge's `2 G(λ)` rows and the norm's `2λ` have. `None` when `B` is flat
/// ([`FLAT`]: singular or nearly so, or not finite); the caller then factors the block.
#[inline(always)]
pub(crate) fn solve_transpose(a: &[f64], t: &[f64]) -> Option<[f64; 4]> {
    let (a, t) = (&a[..16], &t[..4]);
    let row = |i: usize| [a[4 * i], a[4 * i + 1], a[4 * i + 2], a[4 * i + 3]];
    let rows = [row(0), row(1), row(2)];
    let (u, t) = (row(3), [t[0], t[1], t[2], t[3]]);
    let n = dot4(u, u);
    let g = [[-u[1], u[0], -u[3], u[2]], [-u[2], u[3], u[0], -u[1]], [-u[3], -u[2], u[1], u[0]]];
    // written out: `array::map` is left a call here
    let beta = [by_g(rows[0], &g), by_g(rows[1], &g), by_g(rows[2], &g)];
    let gt = by_g(t, &g);
    let c = [cross(beta[1], beta[2]), cross(beta[2], beta[0]), cross(beta[0], beta[1])];
    let det = dot3(beta[0], c[0]);
    let scale = dot3(beta[0], beta[0]) * dot3(beta[1], beta[1]) * dot3(beta[2], beta[2]);
    // written so that a NaN falls back too
    if !(det * det > FLAT * FLAT * scale) {
        return None;
    }
    let inv = 1.0 / det;
    let yh = [dot3(gt, c[0]) * inv, dot3(gt, c[1]) * inv, dot3(gt, c[2]) * inv];
    let rest = dot4(u, t) - dot4(rows[0], u) * yh[0] - dot4(rows[1], u) * yh[1] - dot4(rows[2], u) * yh[2];
    let y = [yh[0], yh[1], yh[2], rest / n];
    Some(y)
}

#[inline(always)]
fn dot4(a: [f64; 4], b: [f64; 4]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]
}

/// `G v` (3).
#[inline(always)]
fn by_g(v: [f64; 4], g: &[[f64; 4]; 3]) -> [f64; 3] {
    [dot4(g[0], v), dot4(g[1], v), dot4(g[2], v)]
}

#[inline(always)]
fn dot3(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

#[inline(always)]
fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
