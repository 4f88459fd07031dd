//! The vector operations of the interior point, its Newton systems and its polish.

/// `aᵀb`, summed in order.
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `y += a x`, nothing when `a` is zero.
pub(super) fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    if a != 0.0 {
        for (yi, xi) in y.iter_mut().zip(x) {
            *yi += a * xi;
        }
    }
}

/// `max |v_i|`.
pub(super) fn inf_norm(v: &[f64]) -> f64 {
    v.iter().fold(0.0f64, |m, x| m.max(x.abs()))
}
