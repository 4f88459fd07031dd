//! Checks of the exact Hessian of the Lagrangian against central differences of the exact
//! gradient and Jacobian, at random points with random multipliers.

use mollier_ipopt::Nlp;
use mollier_ocp::Transcription;
use mollier_sim::{Musculoskeletal, Workspace};

use super::rng::Rng;

/// The centre and the spread (n_x each) of [`random_point`] about `system`'s rest at angles `q`
/// (n_q, rad; solved in `ws`, each muscle's excitation 0.2): each angle ± `angle` (rad), each
/// rate ± `rate` (rad/s) about 0, each contraction state ± `contraction` (m) about rest, each
/// activation 0.5 ± `activation`.
pub fn about_rest(
    system: &Musculoskeletal,
    ws: &mut Workspace,
    q: &[f64],
    [angle, rate, contraction, activation]: [f64; 4],
) -> (Vec<f64>, Vec<f64>) {
    let l = system.layout();
    let mut mid = system.rest_state(ws, q, 0.0, &vec![0.2; l.m]).expect("a rest state").x;
    mid[l.a()..].fill(0.5);
    let mut spread = vec![angle; l.n];
    spread.extend(vec![rate; l.n]);
    spread.extend(vec![contraction; l.m]);
    spread.extend(vec![activation; l.m]);
    (mid, spread)
}

/// Random states and rates around `x_mid` (each state ± `spread`, each rate in [−1, 1]),
/// excitations and controls in [0, 1], and a free duration between 0.5 and 1.5 s.
pub fn random_point(t: &Transcription<'_, '_, '_>, rng: &mut Rng, x_mid: &[f64], spread: &[f64]) -> Vec<f64> {
    let nx = x_mid.len();
    let free = usize::from(t.free_time());
    let per = (t.n() - free) / t.points();
    let mut z = vec![0.0; t.n()];
    if free == 1 {
        z[t.n() - 1] = 0.5 + rng.next();
    }
    for i in 0..t.points() {
        let zi = &mut z[i * per..(i + 1) * per];
        for j in 0..nx {
            zi[j] = x_mid[j] + spread[j] * rng.sym();
            zi[nx + j] = rng.sym();
        }
        for v in &mut zi[2 * nx..] {
            *v = rng.next();
        }
    }
    z
}

/// The gradient of the Lagrangian `σ ∇J + Jᵀλ` from the exact gradient and Jacobian (`lambda`
/// empty: the objective's alone).
pub fn lagrangian_gradient(t: &mut Transcription<'_, '_, '_>, z: &[f64], sigma: f64, lambda: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; t.n()];
    assert!(t.gradient(z, &mut g));
    g.iter_mut().for_each(|v| *v *= sigma);
    if !lambda.is_empty() {
        let pattern = t.jacobian_structure();
        let mut values = vec![0.0; pattern.len()];
        assert!(t.jacobian(z, &mut values));
        for (&(r, c), v) in pattern.iter().zip(&values) {
            g[c] += lambda[r] * v;
        }
    }
    g
}

/// The largest difference between the Hessian `values` (lower triangle at `pattern`) and central
/// differences of the Lagrangian's gradient (`lambda` empty: the objective's alone), over every
/// entry of the n x n matrix (off the structure the differences must vanish), relative to the
/// larger of its row's largest entry and 1; and where. The differences' step is `step` relative
/// to each variable's size (at least 1).
pub fn hessian_error(
    step: f64,
    t: &mut Transcription<'_, '_, '_>,
    z: &[f64],
    sigma: f64,
    lambda: &[f64],
    pattern: &[(usize, usize)],
    values: &[f64],
) -> (f64, (usize, usize)) {
    let n = t.n();
    let mut dense = vec![0.0; n * n];
    for (&(i, j), v) in pattern.iter().zip(values) {
        dense[i * n + j] += v;
        if i != j {
            dense[j * n + i] += v;
        }
    }
    let mut fd = vec![0.0; n * n];
    let mut zp = z.to_vec();
    for j in 0..n {
        let h = step * z[j].abs().max(1.0);
        zp[j] = z[j] + h;
        let gp = lagrangian_gradient(t, &zp, sigma, lambda);
        zp[j] = z[j] - h;
        let gm = lagrangian_gradient(t, &zp, sigma, lambda);
        zp[j] = z[j];
        for i in 0..n {
            fd[i * n + j] = (gp[i] - gm[i]) / (2.0 * h);
        }
    }
    let mut worst = (0.0f64, (0, 0));
    for i in 0..n {
        let scale = (0..n).fold(1.0f64, |s, j| s.max(fd[i * n + j].abs()));
        for j in 0..n {
            let e = (fd[i * n + j] - dense[i * n + j]).abs() / scale;
            // a non-finite entry (either side) is the worst difference, not one `>` skips
            if !(e <= worst.0) {
                worst = (e, (i, j));
            }
        }
    }
    worst
}

/// [`hessian_error`] of the exact Hessian of the Lagrangian at `z`, with multipliers drawn from
/// `rng` in [−10, 10] and an objective factor in [0.5, 1.5].
pub fn random_hessian_error(
    step: f64,
    t: &mut Transcription<'_, '_, '_>,
    rng: &mut Rng,
    z: &[f64],
) -> (f64, (usize, usize)) {
    let pattern = t.hessian_structure().expect("an exact Hessian");
    let lambda: Vec<f64> = (0..t.m()).map(|_| 20.0 * rng.next() - 10.0).collect();
    let sigma = 0.5 + rng.next();
    let mut values = vec![0.0; pattern.len()];
    assert!(t.hessian(z, sigma, &lambda, &mut values));
    hessian_error(step, t, z, sigma, &lambda, &pattern, &values)
}

/// [`random_hessian_error`] at `count` points drawn in turn by [`random_point`] about `x_mid`
/// (n_x) within `spread` (n_x), with the differences' step `step` (relative to each variable's
/// size): each printed and asserted below `tolerance` (relative to the larger of its row's
/// largest entry and 1), `label` naming the case in both.
pub fn assert_random_hessians(
    t: &mut Transcription<'_, '_, '_>,
    rng: &mut Rng,
    count: usize,
    x_mid: &[f64],
    spread: &[f64],
    (step, tolerance): (f64, f64),
    label: &str,
) {
    for _ in 0..count {
        let z = random_point(t, rng, x_mid, spread);
        let (err, at) = random_hessian_error(step, t, rng, &z);
        println!("{label}: Hessian off by {err:.2e} at {at:?}");
        assert!(err < tolerance, "{label}: Hessian off by {err:.2e} (relative) at {at:?}");
    }
}
