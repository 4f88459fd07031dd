//! Checks of the exact Hessian of the Lagrangian against central differences of the exact
//! gradient and Jacobian, at random points with random multipliers.

use mollier_ipopt::Nlp;
use mollier_ocp::Transcription;

use super::rng::Rng;

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
