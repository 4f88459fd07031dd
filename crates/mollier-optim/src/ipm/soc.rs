//! The 3-dimensional second-order cone's algebra: Nesterov-Todd scaling, the step to its
//! boundary, the Jordan product.

pub(super) type M3 = [[f64; 3]; 3];

pub(super) fn m3v(a: &M3, v: &[f64]) -> [f64; 3] {
    [0, 1, 2].map(|i| a[i][0] * v[0] + a[i][1] * v[1] + a[i][2] * v[2])
}

/// Nesterov-Todd scaling of the 3-dimensional second-order cone at interior `s`, `z`: the
/// symmetric `W` with `W z = W⁻¹ s` (= `λ`), its inverse, and `λ`.
pub(super) fn soc_scaling(s: &[f64], z: &[f64]) -> Option<(M3, M3, [f64; 3])> {
    // (x₀ − |x₁|)(x₀ + |x₁|): no cancellation near the boundary
    let ss = (s[0] - s[1].hypot(s[2])) * (s[0] + s[1].hypot(s[2]));
    let zz = (z[0] - z[1].hypot(z[2])) * (z[0] + z[1].hypot(z[2]));
    if !(ss > 0.0 && zz > 0.0 && s[0] > 0.0 && z[0] > 0.0) {
        return None;
    }
    let (sn, zn) = (ss.sqrt(), zz.sqrt());
    let sb = [s[0] / sn, s[1] / sn, s[2] / sn];
    let zb = [z[0] / zn, z[1] / zn, z[2] / zn];
    let gamma = ((1.0 + sb[0] * zb[0] + sb[1] * zb[1] + sb[2] * zb[2]) / 2.0).sqrt();
    // the scaling point w̄ = (s̄ + J z̄)/(2γ), and v = (w̄ + e)/√(2(w̄₀ + 1)) (Vandenberghe's
    // CVXOPT notes, §4): W = η (2 v vᵀ − J), W⁻¹ = (2 J v vᵀ J − J)/η
    let wb = [(sb[0] + zb[0]) / (2.0 * gamma), (sb[1] - zb[1]) / (2.0 * gamma), (sb[2] - zb[2]) / (2.0 * gamma)];
    let f = 1.0 / (2.0 * (wb[0] + 1.0)).sqrt();
    let w = [(wb[0] + 1.0) * f, wb[1] * f, wb[2] * f];
    let eta = (sn / zn).sqrt();
    let jd = [1.0, -1.0, -1.0];
    let wm = [0, 1, 2].map(|i| [0, 1, 2].map(|j| eta * (2.0 * w[i] * w[j] - if i == j { jd[i] } else { 0.0 })));
    let wi = [0, 1, 2]
        .map(|i| [0, 1, 2].map(|j| (2.0 * jd[i] * w[i] * w[j] * jd[j] - if i == j { jd[i] } else { 0.0 }) / eta));
    let lam = m3v(&wm, z);
    Some((wm, wi, lam))
}

/// Largest `α >= 0` (capped at `cap`) with `x + α d` in the second-order cone, `x` interior.
pub(super) fn soc_step(x: &[f64], d: &[f64], cap: f64) -> f64 {
    let a = d[0] * d[0] - d[1] * d[1] - d[2] * d[2];
    let b = x[0] * d[0] - x[1] * d[1] - x[2] * d[2];
    let c = (x[0] - x[1].hypot(x[2])) * (x[0] + x[1].hypot(x[2]));
    let mut alpha = cap;
    if d[0] < 0.0 {
        alpha = alpha.min(-x[0] / d[0]);
    }
    // roots of a α² + 2 b α + c = 0 (c > 0)
    let disc = b * b - a * c;
    if disc >= 0.0 {
        let sq = disc.sqrt();
        let qq = -(b + if b >= 0.0 { sq } else { -sq });
        for r in [if a != 0.0 { qq / a } else { f64::INFINITY }, if qq != 0.0 { c / qq } else { f64::INFINITY }] {
            if r > 0.0 {
                alpha = alpha.min(r);
            }
        }
    }
    alpha.max(0.0)
}

pub(super) fn mat3_mul(a: &M3, b: &M3) -> M3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|k| a[i][k] * b[k][j]).sum()))
}

/// Jordan product of the second-order cone, `x∘y = (xᵀy, x₀ y₁ + y₀ x₁)`.
pub(super) fn jordan(x: &[f64; 3], y: &[f64; 3]) -> [f64; 3] {
    [x[0] * y[0] + x[1] * y[1] + x[2] * y[2], x[0] * y[1] + y[0] * x[1], x[0] * y[2] + y[0] * x[2]]
}

/// `v` with `λ∘v = r` (λ interior).
pub(super) fn jordan_div(l: &[f64; 3], r: &[f64; 3]) -> [f64; 3] {
    let det = l[0] * l[0] - l[1] * l[1] - l[2] * l[2];
    let v0 = (l[0] * r[0] - l[1] * r[1] - l[2] * r[2]) / det;
    [v0, (r[1] - v0 * l[1]) / l[0], (r[2] - v0 * l[2]) / l[0]]
}
