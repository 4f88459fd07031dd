//! A fixed-order Gragg–Bulirsch–Stoer integrator for smooth, non-stiff autonomous ODEs.
//!
//! Each macro step runs the modified midpoint rule with `n = 2, 4, …, 2·LEVELS` substeps and
//! extrapolates the results polynomially in `h²` to `h = 0` (Aitken–Neville), an explicit method
//! of order `2·LEVELS`. The number of macro steps is fixed by the caller, so the result is a
//! smooth function of the initial state and of the interval length: its derivatives are what
//! a Newton iteration over those arguments needs. Generic over the scalar, so the same code
//! integrates dual numbers.

use mollier_core::scalar::{Real, c};

/// Extrapolation levels (substep counts 2, 4, …, 2·LEVELS): order 2·LEVELS.
pub const LEVELS: usize = 8;

/// Integrate `y' = f(y)` over an interval of length `length` (any sign) in `steps` macro steps.
///
/// The midpoint sweeps of the levels are independent: they advance in lock-step, so that their
/// evaluations overlap in the processor instead of waiting on each other (each sweep alone is a
/// chain of dependent evaluations). Each sweep works with the increment `z − y`, which keeps
/// rounding relative to the increment rather than to `y`.
pub fn integrate<T: Real, const N: usize>(
    y0: [T; N],
    length: T,
    steps: usize,
    f: impl Fn(&[T; N]) -> [T; N],
) -> [T; N] {
    let steps = steps.max(1);
    let big_h = length / c::<T>(steps as f64);
    let zero = [c::<T>(0.0); N];
    let mut y = y0;
    for _ in 0..steps {
        let f0 = f(&y);
        let h: [T; LEVELS] = std::array::from_fn(|j| big_h / c::<T>((2 * (j + 1)) as f64));
        // per level: the last two increments of the midpoint recurrence
        let mut d0 = [zero; LEVELS];
        let mut d1 = [zero; LEVELS];
        let mut t = [zero; LEVELS];
        for j in 0..LEVELS {
            for i in 0..N {
                d1[j][i] = h[j] * f0[i];
            }
        }
        let at = |d: &[T; N]| {
            let mut z = y;
            for i in 0..N {
                z[i] += d[i];
            }
            f(&z)
        };
        for k in 1..=2 * LEVELS {
            for j in (k / 2).saturating_sub(1)..LEVELS {
                let n = 2 * (j + 1);
                if k < n {
                    let fz = at(&d1[j]);
                    let two_h = h[j] * 2.0;
                    for i in 0..N {
                        let d2 = d0[j][i] + two_h * fz[i];
                        d0[j][i] = d1[j][i];
                        d1[j][i] = d2;
                    }
                } else if k == n {
                    // Gragg's smoothing step ends this level's sweep
                    let fz = at(&d1[j]);
                    for i in 0..N {
                        t[j][i] = (d1[j][i] + d0[j][i] + h[j] * fz[i]) * 0.5;
                    }
                }
            }
        }
        // Aitken–Neville extrapolation to h = 0 in h², column by column in place: before pass m,
        // table[j] holds T_{j,m−1}
        let mut table = t;
        for m in 1..LEVELS {
            for j in (m..LEVELS).rev() {
                let ratio = ((j + 1) as f64 / (j + 1 - m) as f64).powi(2);
                for i in 0..N {
                    table[j][i] = table[j][i] + (table[j][i] - table[j - 1][i]) / (ratio - 1.0);
                }
            }
        }
        for i in 0..N {
            y[i] += table[LEVELS - 1][i];
        }
    }
    y
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn harmonic_oscillator_to_rounding() {
        // y'' = −y: rotation of (y, y'); one full turn in 8 macro steps
        // macro steps of at most 0.8 rad, as the geodesic code uses
        for (steps, len) in [(8usize, std::f64::consts::TAU), (3, 1.7), (1, 0.4), (2, -0.9)] {
            let y = integrate([1.0, 0.0], len, steps, |y: &[f64; 2]| [y[1], -y[0]]);
            assert!((y[0] - len.cos()).abs() < 2e-14 && (y[1] + len.sin()).abs() < 2e-14, "{steps}: {y:?}");
        }
        // a nonlinear one: y' = y², y(0) = 1 → 1/(1 − t)
        let y = integrate([1.0], 0.5, 4, |y: &[f64; 1]| [y[0] * y[0]]);
        assert!((y[0] - 2.0).abs() < 1e-13, "{y:?}");
    }
}
