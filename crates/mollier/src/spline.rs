//! Smooth differentiation of sampled motions: cubic splines through (or near) the samples give
//! velocities and accelerations at the sample times.
//!
//! - [`Knots::interpolate_with`]: the interpolating cubic spline, with [`Ends::Quintic`] ends
//!   (clamped to the slope of the quintic through the six samples nearest each end) or
//!   **not-a-knot** ends (the first two and the last two pieces are one cubic each,
//!   [`Knots::interpolate`]). Both reproduce any cubic polynomial exactly (4 samples or more), so
//!   the derivatives are exact for motions that are cubic in time, and accurate to O(h³)
//!   (velocity) and O(h²) (acceleration) for smooth ones; not-a-knot ends are the least accurate
//!   frames of a sampled motion, quintic ends are about as accurate as the inner ones.
//! - [`Knots::smooth`]: the natural cubic **smoothing spline** (Reinsch 1967), which minimizes
//!   `Σ (yᵢ − f(tᵢ))² + λ ∫ f″(t)² dt`. For samples `Δt` apart it acts as a zero-lag low-pass
//!   filter with gain `1 / (1 + λ Δt ω⁴)` — the gain of a second-order Butterworth filter run
//!   forward and backward — so [`smoothing_parameter`] turns a cutoff frequency (gain ½) into `λ`.
//!   Its second derivative is zero at the first and last samples (natural ends).
//!
//! Both solve one banded linear system: O(n) time and memory.

/// Why a spline cannot be fitted.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SplineError {
    /// The times do not increase strictly, or are not finite.
    #[error("times must be finite and increase strictly (sample {0})")]
    Times(usize),
    /// A value is not finite, or there are not as many values as times.
    #[error("{0}")]
    Values(String),
    /// The smoothing parameter is negative or not finite.
    #[error("the smoothing parameter must be finite and at least 0, got {0}")]
    Smoothing(f64),
    /// A smoothing cutoff frequency is not positive and finite.
    #[error("the cutoff frequency must be a positive number of Hz, got {0}")]
    Cutoff(f64),
    /// A smoothing cutoff above the samples' Nyquist frequency: the spline would follow every
    /// sample and smooth nothing (a cutoff in the wrong unit, or meant for another motion).
    #[error(
        "the smoothing cutoff {0} Hz is above the motion's Nyquist frequency, {1} Hz (half its \
         sampling rate): a spline that passes a sine that fast follows every sample and smooths \
         nothing; give a cutoff below {1} Hz (a few Hz for human movement)"
    )]
    AboveNyquist(f64, f64),
}

/// A fitted spline at the sample times.
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// The spline's values (the samples themselves when interpolating).
    pub value: Vec<f64>,
    /// First derivatives.
    pub d1: Vec<f64>,
    /// Second derivatives.
    pub d2: Vec<f64>,
}

/// Sample times, checked once for any number of signals sampled at them.
#[derive(Clone, Debug, PartialEq)]
pub struct Knots {
    t: Vec<f64>,
    h: Vec<f64>,
}

impl Knots {
    /// Times that are finite and strictly increasing (at least one).
    pub fn new(t: &[f64]) -> Result<Self, SplineError> {
        if t.is_empty() {
            return Err(SplineError::Times(0));
        }
        for (i, w) in t.windows(2).enumerate() {
            if !(w[1] > w[0]) || !w[1].is_finite() {
                return Err(SplineError::Times(i + 1));
            }
        }
        if !t[0].is_finite() {
            return Err(SplineError::Times(0));
        }
        let h = t.windows(2).map(|w| w[1] - w[0]).collect();
        Ok(Self { t: t.to_vec(), h })
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.t.len()
    }

    /// `true` for no samples (never: [`Knots::new`] needs one).
    pub fn is_empty(&self) -> bool {
        self.t.is_empty()
    }

    /// Mean sample interval (s); 0 for one sample.
    pub fn mean_interval(&self) -> f64 {
        let n = self.t.len();
        if n < 2 { 0.0 } else { (self.t[n - 1] - self.t[0]) / (n - 1) as f64 }
    }

    fn check(&self, y: &[f64]) -> Result<(), SplineError> {
        if y.len() != self.t.len() {
            return Err(SplineError::Values(format!("{} values for {} times", y.len(), self.t.len())));
        }
        match y.iter().position(|v| !v.is_finite()) {
            Some(i) => Err(SplineError::Values(format!("value {i} is not finite"))),
            None => Ok(()),
        }
    }

    /// The interpolating cubic spline with not-a-knot ends. With 3 samples it is the parabola
    /// through them, with 2 the line, with 1 a constant.
    pub fn interpolate(&self, y: &[f64]) -> Result<Fit, SplineError> {
        self.interpolate_with(y, Ends::NotAKnot)
    }

    /// The interpolating cubic spline with the given ends (as [`Knots::interpolate`] for fewer
    /// than 4 samples, where both kinds of end give the polynomial through the samples).
    pub fn interpolate_with(&self, y: &[f64], ends: Ends) -> Result<Fit, SplineError> {
        self.check(y)?;
        let (n, h) = (y.len(), &self.h);
        match n {
            1 => return Ok(Fit { value: y.to_vec(), d1: vec![0.0], d2: vec![0.0] }),
            2 => {
                let s = (y[1] - y[0]) / h[0];
                return Ok(Fit { value: y.to_vec(), d1: vec![s, s], d2: vec![0.0, 0.0] });
            }
            3 => return Ok(parabola(&self.t, y)),
            _ => {}
        }
        if ends == Ends::Quintic {
            return Ok(self.clamped(y, end_slope(&self.t, y, false), end_slope(&self.t, y, true)));
        }
        let d: Vec<f64> = (0..n - 1).map(|i| (y[i + 1] - y[i]) / h[i]).collect();
        // second derivatives M: h_{i−1} M_{i−1} + 2 (h_{i−1} + h_i) M_i + h_i M_{i+1} = 6 (d_i − d_{i−1})
        // at the interior samples; not-a-knot (M_1 − M_0)/h_0 = (M_2 − M_1)/h_1 and its mirror at
        // the far end eliminate M_0 and M_{n−1}, leaving a tridiagonal system in M_1..M_{n−2}.
        let m = n - 2;
        let (mut sub, mut diag, mut sup, mut rhs) = (vec![0.0; m], vec![0.0; m], vec![0.0; m], vec![0.0; m]);
        for r in 0..m {
            let i = r + 1;
            sub[r] = h[i - 1];
            diag[r] = 2.0 * (h[i - 1] + h[i]);
            sup[r] = h[i];
            rhs[r] = 6.0 * (d[i] - d[i - 1]);
        }
        // M_0 = ((h0 + h1) M_1 − h0 M_2) / h1
        let (h0, h1) = (h[0], h[1]);
        diag[0] += h0 * (h0 + h1) / h1;
        sup[0] -= h0 * h0 / h1;
        // M_{n−1} = ((a + b) M_{n−2} − a M_{n−3}) / b with a = h_{n−2}, b = h_{n−3}
        let (a, b) = (h[n - 2], h[n - 3]);
        diag[m - 1] += a * (a + b) / b;
        sub[m - 1] -= a * a / b;
        let inner = tridiagonal(&sub, &diag, &sup, &rhs);
        let mut mm = Vec::with_capacity(n);
        mm.push(((h0 + h1) * inner[0] - h0 * inner[1]) / h1);
        mm.extend_from_slice(&inner);
        mm.push(((a + b) * inner[m - 1] - a * inner[m - 2]) / b);
        Ok(self.evaluate(y.to_vec(), mm))
    }

    /// The interpolating cubic spline with the slopes `s0`, `sn` at the first and last samples
    /// (at least 4 samples, checked).
    fn clamped(&self, y: &[f64], s0: f64, sn: f64) -> Fit {
        let (n, h) = (y.len(), &self.h);
        let d: Vec<f64> = (0..n - 1).map(|i| (y[i + 1] - y[i]) / h[i]).collect();
        // the continuity equations at the interior samples, and at the ends the given slope:
        // 2 h_0 M_0 + h_0 M_1 = 6 (d_0 − s0), h_{n−2} M_{n−2} + 2 h_{n−2} M_{n−1} = 6 (sn − d_{n−2})
        let (mut sub, mut diag, mut sup, mut rhs) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        (diag[0], sup[0], rhs[0]) = (2.0 * h[0], h[0], 6.0 * (d[0] - s0));
        for i in 1..n - 1 {
            (sub[i], diag[i], sup[i]) = (h[i - 1], 2.0 * (h[i - 1] + h[i]), h[i]);
            rhs[i] = 6.0 * (d[i] - d[i - 1]);
        }
        (sub[n - 1], diag[n - 1], rhs[n - 1]) = (h[n - 2], 2.0 * h[n - 2], 6.0 * (sn - d[n - 2]));
        self.evaluate(y.to_vec(), tridiagonal(&sub, &diag, &sup, &rhs))
    }

    /// The natural cubic smoothing spline with parameter `lambda` (units of `y² s³`; 0
    /// interpolates with natural ends). With fewer than 3 samples it is the interpolant.
    pub fn smooth(&self, y: &[f64], lambda: f64) -> Result<Fit, SplineError> {
        self.check(y)?;
        if !(lambda >= 0.0) || !lambda.is_finite() {
            return Err(SplineError::Smoothing(lambda));
        }
        let (n, h) = (y.len(), &self.h);
        if n < 3 {
            return self.interpolate(y);
        }
        // Reinsch: (R + λ QᵀQ) γ = Qᵀ y, f = y − λ Q γ; γ the second derivatives at the interior
        // samples. Q is n x (n−2) with column j (interior sample i = j + 1) holding 1/h_{i−1},
        // −1/h_{i−1} − 1/h_i, 1/h_i in rows i − 1, i, i + 1; R is tridiagonal with (h_{i−1} + h_i)/3
        // on its diagonal and h_i/6 beside it. The matrix is symmetric positive definite with
        // bandwidth 2.
        let m = n - 2;
        let q = |j: usize| -> [f64; 3] {
            let i = j + 1;
            [1.0 / h[i - 1], -1.0 / h[i - 1] - 1.0 / h[i], 1.0 / h[i]]
        };
        // band[k][j] = A[j][j + k]
        let mut band = [vec![0.0; m], vec![0.0; m], vec![0.0; m]];
        let mut rhs = vec![0.0; m];
        for j in 0..m {
            let i = j + 1;
            let qj = q(j);
            band[0][j] = (h[i - 1] + h[i]) / 3.0 + lambda * qj.iter().map(|v| v * v).sum::<f64>();
            if j + 1 < m {
                let qk = q(j + 1);
                // columns j and j+1 overlap in rows i and i + 1
                band[1][j] = h[i] / 6.0 + lambda * (qj[1] * qk[0] + qj[2] * qk[1]);
            }
            if j + 2 < m {
                let qk = q(j + 2);
                // columns j and j+2 overlap in row i + 1
                band[2][j] = lambda * qj[2] * qk[0];
            }
            rhs[j] = qj[0] * y[i - 1] + qj[1] * y[i] + qj[2] * y[i + 1];
        }
        let gamma = band_cholesky_solve(band, rhs);
        let mut f = y.to_vec();
        for j in 0..m {
            let qj = q(j);
            for (r, v) in qj.iter().enumerate() {
                f[j + r] -= lambda * v * gamma[j];
            }
        }
        let mut mm = Vec::with_capacity(n);
        mm.push(0.0);
        mm.extend_from_slice(&gamma);
        mm.push(0.0);
        Ok(self.evaluate(f, mm))
    }

    /// Values, slopes and second derivatives at the samples of the spline with values `y` and
    /// second derivatives `m` there.
    fn evaluate(&self, y: Vec<f64>, m: Vec<f64>) -> Fit {
        let (n, h) = (y.len(), &self.h);
        let mut d1 = Vec::with_capacity(n);
        for i in 0..n - 1 {
            d1.push((y[i + 1] - y[i]) / h[i] - h[i] * (2.0 * m[i] + m[i + 1]) / 6.0);
        }
        let k = n - 2;
        d1.push((y[k + 1] - y[k]) / h[k] + h[k] * (m[k] + 2.0 * m[k + 1]) / 6.0);
        Fit { value: y, d1, d2: m }
    }
}

/// How an interpolating spline ends.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ends {
    /// The first two and the last two pieces are one cubic each: exact for cubic motions, but
    /// the end frames' accelerations of a sampled motion are the least accurate (a sine in 12
    /// frames: 37 % of its amplitude at the last frame).
    NotAKnot,
    /// Clamped to the slope, at each end, of the polynomial through the six samples nearest it
    /// (a quintic; through all samples when there are fewer): exact for cubic motions too, and
    /// the end frames become about as accurate as the others.
    #[default]
    Quintic,
}

/// The slope at the first sample (at the last with `last`) of the polynomial through the
/// samples nearest that end, at most six: `Σ_j y_j L_j′(t_end)` with the Lagrange basis `L_j`.
fn end_slope(t: &[f64], y: &[f64], last: bool) -> f64 {
    let k = t.len().min(6);
    let idx: Vec<usize> = if last { (t.len() - k..t.len()).rev().collect() } else { (0..k).collect() };
    let t0 = t[idx[0]];
    let mut slope = 0.0;
    for (a, &j) in idx.iter().enumerate() {
        let weight = if a == 0 {
            // L_0′(t_0) = Σ_{m≠0} 1/(t_0 − t_m)
            idx[1..].iter().map(|&m| 1.0 / (t0 - t[m])).sum::<f64>()
        } else {
            // L_j′(t_0) = Π_{m≠0,j} (t_0 − t_m) / Π_{m≠j} (t_j − t_m)
            let num: f64 = idx[1..].iter().filter(|&&m| m != j).map(|&m| t0 - t[m]).product();
            let den: f64 = idx.iter().filter(|&&m| m != j).map(|&m| t[j] - t[m]).product();
            num / den
        };
        slope += weight * y[j];
    }
    slope
}

/// `λ` for which the smoothing spline of samples `interval` seconds apart halves the amplitude
/// of a sine of `cutoff` Hz: `λ = 1 / (Δt (2π f)⁴)`.
pub fn smoothing_parameter(interval: f64, cutoff: f64) -> f64 {
    1.0 / (interval * (std::f64::consts::TAU * cutoff).powi(4))
}

/// The parabola through three samples, with its derivatives there.
fn parabola(t: &[f64], y: &[f64]) -> Fit {
    let (h0, h1) = (t[1] - t[0], t[2] - t[1]);
    let (d0, d1) = ((y[1] - y[0]) / h0, (y[2] - y[1]) / h1);
    let c = (d1 - d0) / (h0 + h1); // half the second derivative
    let slope = |x: f64| d0 + c * (2.0 * x - t[0] - t[1]);
    Fit { value: y.to_vec(), d1: t.iter().map(|&x| slope(x)).collect(), d2: vec![2.0 * c; 3] }
}

/// Solve a tridiagonal system (Thomas algorithm; the systems here are diagonally dominant).
fn tridiagonal(sub: &[f64], diag: &[f64], sup: &[f64], rhs: &[f64]) -> Vec<f64> {
    let n = diag.len();
    let (mut c, mut d) = (vec![0.0; n], vec![0.0; n]);
    c[0] = sup[0] / diag[0];
    d[0] = rhs[0] / diag[0];
    for i in 1..n {
        let den = diag[i] - sub[i] * c[i - 1];
        c[i] = sup[i] / den;
        d[i] = (rhs[i] - sub[i] * d[i - 1]) / den;
    }
    for i in (0..n - 1).rev() {
        d[i] -= c[i] * d[i + 1];
    }
    d
}

/// Solve `A x = b` for a symmetric positive definite `A` with bandwidth 2 given by its diagonal
/// and two superdiagonals (`band[k][j] = A[j][j + k]`), by a banded LDLᵀ factorization.
fn band_cholesky_solve(band: [Vec<f64>; 3], mut b: Vec<f64>) -> Vec<f64> {
    let n = b.len();
    let [mut d, mut u1, mut u2] = band;
    // A = L D Lᵀ with unit lower L; store L[j+1][j] in u1[j], L[j+2][j] in u2[j]
    for j in 0..n {
        if j >= 1 {
            d[j] -= u1[j - 1] * u1[j - 1] * d[j - 1];
            if j + 1 < n {
                u1[j] -= u1[j - 1] * u2[j - 1] * d[j - 1];
            }
        }
        if j >= 2 {
            d[j] -= u2[j - 2] * u2[j - 2] * d[j - 2];
        }
        if j + 1 < n {
            u1[j] /= d[j];
        }
        if j + 2 < n {
            u2[j] /= d[j];
        }
    }
    for j in 0..n {
        if j >= 1 {
            b[j] -= u1[j - 1] * b[j - 1];
        }
        if j >= 2 {
            b[j] -= u2[j - 2] * b[j - 2];
        }
    }
    for j in 0..n {
        b[j] /= d[j];
    }
    for j in (0..n).rev() {
        if j + 1 < n {
            b[j] -= u1[j] * b[j + 1];
        }
        if j + 2 < n {
            b[j] -= u2[j] * b[j + 2];
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::TAU;

    fn close(what: &str, got: &[f64], want: impl Fn(usize) -> f64, tol: f64) {
        for (i, g) in got.iter().enumerate() {
            let w = want(i);
            assert!((g - w).abs() <= tol, "{what}[{i}]: got {g}, want {w} (difference {:e})", g - w);
        }
    }

    /// Uneven sample times on [0, 2]: even ones with the inner ones moved by up to a fifth of the
    /// interval.
    fn uneven(n: usize) -> Vec<f64> {
        let h = 2.0 / (n - 1) as f64;
        (0..n)
            .map(|i| i as f64 * h + if i == 0 || i == n - 1 { 0.0 } else { 0.2 * h * (7.0 * i as f64).sin() })
            .collect()
    }

    #[test]
    fn a_cubic_motion_is_differentiated_exactly() {
        let p = |t: f64| 0.3 - 1.1 * t + 2.5 * t * t - 0.7 * t * t * t;
        let dp = |t: f64| -1.1 + 5.0 * t - 2.1 * t * t;
        let ddp = |t: f64| 5.0 - 4.2 * t;
        for n in [4, 5, 9, 40] {
            for t in [(0..n).map(|i| i as f64 * 0.05).collect::<Vec<_>>(), uneven(n)] {
                let y: Vec<f64> = t.iter().map(|&x| p(x)).collect();
                for ends in [Ends::NotAKnot, Ends::Quintic] {
                    let f = Knots::new(&t).unwrap().interpolate_with(&y, ends).unwrap();
                    close(&format!("n = {n}, {ends:?}: value"), &f.value, |i| p(t[i]), 0.0);
                    close(&format!("n = {n}, {ends:?}: velocity"), &f.d1, |i| dp(t[i]), 1e-11);
                    close(&format!("n = {n}, {ends:?}: acceleration"), &f.d2, |i| ddp(t[i]), 1e-9);
                }
            }
        }
    }

    /// Largest end-frame (first or last) errors of the velocity and the acceleration, and the
    /// largest acceleration errors of the middle half and of all frames, of `sin(2π t + 1)` sampled at `n` even frames over one period, relative to
    /// the amplitudes 2π and (2π)².
    fn sine_errors(n: usize, ends: Ends) -> [f64; 4] {
        let w = TAU;
        let t: Vec<f64> = (0..n).map(|i| i as f64 / (n - 1) as f64).collect();
        let y: Vec<f64> = t.iter().map(|x| (w * x + 1.0).sin()).collect();
        let f = Knots::new(&t).unwrap().interpolate_with(&y, ends).unwrap();
        let ev = |i: usize| (f.d1[i] - w * (w * t[i] + 1.0).cos()).abs() / w;
        let ea = |i: usize| (f.d2[i] + w * w * (w * t[i] + 1.0).sin()).abs() / (w * w);
        [
            ev(0).max(ev(n - 1)),
            ea(0).max(ea(n - 1)),
            (n / 4..3 * n / 4).map(ea).fold(0.0, f64::max),
            (0..n).map(ea).fold(0.0, f64::max),
        ]
    }

    #[test]
    fn quintic_ends_make_the_end_frames_as_accurate_as_the_others() {
        // the figures of docs/model-format.md (Motion files)
        let [v, a, inner, all] = sine_errors(12, Ends::NotAKnot);
        assert!(v > 0.01 && a > 0.2 && inner < 0.03 && all == a, "{v} {a} {inner} {all}");
        let [v, a, inner, all] = sine_errors(12, Ends::Quintic);
        assert!(v < 0.008 && a < 0.035 && inner < 0.03 && all < 0.04, "{v} {a} {inner} {all}");
        let [v, a, inner, all] = sine_errors(400, Ends::NotAKnot);
        assert!(v > 5e-7 && a > 1.4e-4 && inner < 2.1e-5 && all == a, "{v} {a} {inner} {all}");
        let [v, a, inner, all] = sine_errors(400, Ends::Quintic);
        assert!(v < 2e-10 && a < inner && inner < 2.1e-5 && all < 2.1e-5, "{v} {a} {inner} {all}");
    }

    #[test]
    fn the_end_slope_is_the_quintics() {
        // through six samples of a quintic, uneven, its slope at either end exactly
        let p = |t: f64| 0.2 + t - 0.5 * t.powi(2) + 0.8 * t.powi(3) - 0.3 * t.powi(4) + 0.05 * t.powi(5);
        let dp = |t: f64| 1.0 - t + 2.4 * t.powi(2) - 1.2 * t.powi(3) + 0.25 * t.powi(4);
        let t = uneven(9);
        let y: Vec<f64> = t.iter().map(|&x| p(x)).collect();
        assert!((end_slope(&t, &y, false) - dp(t[0])).abs() < 1e-12);
        assert!((end_slope(&t, &y, true) - dp(t[8])).abs() < 1e-12);
    }

    #[test]
    fn few_samples_give_the_polynomial_through_them() {
        // three: the parabola; two: the line; one: at rest
        let t = [0.0, 0.4, 1.0];
        let y: Vec<f64> = t.iter().map(|x| 1.0 + 2.0 * x - 3.0 * x * x).collect();
        let f = Knots::new(&t).unwrap().interpolate(&y).unwrap();
        close("parabola velocity", &f.d1, |i| 2.0 - 6.0 * t[i], 1e-14);
        close("parabola acceleration", &f.d2, |_| -6.0, 1e-13);
        let f = Knots::new(&[1.0, 1.5]).unwrap().interpolate(&[2.0, 3.0]).unwrap();
        assert_eq!((f.d1, f.d2), (vec![2.0, 2.0], vec![0.0, 0.0]));
        let f = Knots::new(&[1.0]).unwrap().interpolate(&[2.0]).unwrap();
        assert_eq!((f.value, f.d1, f.d2), (vec![2.0], vec![0.0], vec![0.0]));
    }

    #[test]
    fn a_sine_is_differentiated_to_the_splines_order() {
        // 1 Hz sampled at 100 Hz
        let (w, h) = (TAU, 0.01);
        let t: Vec<f64> = (0..=200).map(|i| i as f64 * h).collect();
        let y: Vec<f64> = t.iter().map(|x| (w * x).sin()).collect();
        let f = Knots::new(&t).unwrap().interpolate(&y).unwrap();
        // velocities to O(h³): 3e-6 relative here, 1e-7 away from the ends
        close("velocity", &f.d1, |i| w * (w * t[i]).cos(), 1e-5 * w);
        close("inner velocity", &f.d1[20..180], |i| w * (w * t[i + 20]).cos(), 2e-7 * w);
        // accelerations to O(h²): a spline through a sine has second derivatives −ω² a sin ωt
        // with a = 6 (1 − cos ωh) / ((ωh)² (2 + cos ωh)) ≈ 1 + (ωh)²/12 (from its continuity
        // equations h²/6 (M₋ + 4M + M₊) = y₋ − 2y + y₊), 3.3e-4 above 1 here
        close("acceleration", &f.d2, |i| -w * w * (w * t[i]).sin(), 5e-4 * w * w);
        let c = (w * h).cos();
        let a = 6.0 * (1.0 - c) / ((w * h).powi(2) * (2.0 + c));
        assert!((a - 1.0 - (w * h).powi(2) / 12.0).abs() < 1e-6);
        close("inner acceleration", &f.d2[20..180], |i| -w * w * a * (w * t[i + 20]).sin(), 1e-8 * w * w);
    }

    #[test]
    fn smoothing_halves_a_sine_at_the_cutoff_and_passes_slow_motion() {
        let dt = 0.01;
        let t: Vec<f64> = (0..=1000).map(|i| i as f64 * dt).collect();
        let knots = Knots::new(&t).unwrap();
        let lambda = smoothing_parameter(knots.mean_interval(), 5.0);
        let amplitude = |hz: f64| {
            let y: Vec<f64> = t.iter().map(|x| (TAU * hz * x).sin()).collect();
            let f = knots.smooth(&y, lambda).unwrap();
            // least-squares amplitude of the fitted sine away from the ends
            let (mut num, mut den) = (0.0, 0.0);
            for i in 200..800 {
                num += f.value[i] * y[i];
                den += y[i] * y[i];
            }
            num / den
        };
        // gain 1/(1 + (f/fc)⁴): ½ at the cutoff, 1/17 at twice it, ≈ 1 well below
        assert!((amplitude(5.0) - 0.5).abs() < 0.01, "{}", amplitude(5.0));
        assert!((amplitude(10.0) - 1.0 / 17.0).abs() < 0.01, "{}", amplitude(10.0));
        assert!((amplitude(1.0) - 1.0 / (1.0 + 0.2f64.powi(4))).abs() < 0.002, "{}", amplitude(1.0));
    }

    #[test]
    fn smoothing_recovers_the_derivatives_of_a_noisy_motion() {
        // 0.5 Hz motion sampled at 100 Hz with ±1 mrad noise: raw interpolation amplifies the
        // noise in the accelerations by 1/h²; a 6 Hz smoothing spline does not
        let w = TAU * 0.5;
        let t: Vec<f64> = (0..=400).map(|i| i as f64 * 0.01).collect();
        let mut seed = 12345u64;
        let mut noise = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5) * 2e-3
        };
        let y: Vec<f64> = t.iter().map(|x| (w * x).sin() + noise()).collect();
        let knots = Knots::new(&t).unwrap();
        let raw = knots.interpolate(&y).unwrap();
        let smooth = knots.smooth(&y, smoothing_parameter(0.01, 6.0)).unwrap();
        let err = |f: &Fit| (50..350).map(|i| (f.d2[i] + w * w * (w * t[i]).sin()).abs()).fold(0.0, f64::max);
        assert!(err(&raw) > 10.0, "raw {}", err(&raw));
        assert!(err(&smooth) < 0.1 * w * w, "smooth {}", err(&smooth));
    }

    #[test]
    fn a_very_stiff_smoothing_spline_is_the_least_squares_line() {
        let t = uneven(12);
        let y: Vec<f64> =
            t.iter().enumerate().map(|(i, x)| 1.0 + 0.5 * x + if i % 2 == 0 { 0.1 } else { -0.1 }).collect();
        let n = t.len() as f64;
        let (mt, my) = (t.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
        let slope = t.iter().zip(&y).map(|(a, b)| (a - mt) * (b - my)).sum::<f64>()
            / t.iter().map(|a| (a - mt) * (a - mt)).sum::<f64>();
        let f = Knots::new(&t).unwrap().smooth(&y, 1e12).unwrap();
        close("value", &f.value, |i| my + slope * (t[i] - mt), 1e-8);
        close("slope", &f.d1, |_| slope, 1e-8);
        close("curvature", &f.d2, |_| 0.0, 1e-8);
        // and λ = 0 interpolates
        let f = Knots::new(&t).unwrap().smooth(&y, 0.0).unwrap();
        close("interpolant", &f.value, |i| y[i], 1e-14);
    }

    #[test]
    fn bad_samples_are_refused() {
        assert_eq!(Knots::new(&[]), Err(SplineError::Times(0)));
        assert_eq!(Knots::new(&[0.0, 1.0, 1.0]), Err(SplineError::Times(2)));
        assert_eq!(Knots::new(&[f64::NAN, 1.0]), Err(SplineError::Times(1)));
        let k = Knots::new(&[0.0, 1.0, 2.0]).unwrap();
        assert!(k.interpolate(&[0.0, 1.0]).is_err());
        assert!(k.interpolate(&[0.0, f64::INFINITY, 1.0]).is_err());
        assert_eq!(k.smooth(&[0.0, 1.0, 2.0], -1.0), Err(SplineError::Smoothing(-1.0)));
    }
}
