//! Second partial derivatives of the Hill model's residuals, for the exact Hessian of an optimal
//! control problem's Lagrangian: the contraction residual written once over dual numbers (the
//! formulas of [`HillMuscle::contraction`], the same branches) and differentiated twice by
//! hyper-dual numbers, exact to rounding; the activation residual's in closed form.

use num_dual::{DualNum, HyperDual64};

use super::{Curves, HillMuscle};

/// The contraction residual's second partials in `(a, s, ṡ, L_M)` (4 x 4, symmetric; units
/// N over the variables' units: a is 1, s and `L_M` m, ṡ m/s), and the tendon force's curvature.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContractionHessian {
    /// `∂²f_s/∂y_i∂y_j`, `y = (a, s, ṡ, L_M)`.
    pub residual: [[f64; 4]; 4],
    /// `d²F_SEE/dx²` at the tendon's elongation `x = L_M − s − L_slack` (N/m²): the force's
    /// Hessian in `(s, L_M)` is this times `[[1, −1], [−1, 1]]`.
    pub force: f64,
}

impl HillMuscle {
    /// An elastic element over dual numbers: `k₁ x + k₂ x²` for `x > 0`, `k₁ x` otherwise
    /// ([`HillMuscle::tendon`], [`HillMuscle::parallel`]).
    pub(super) fn spring_dual<T: DualNum<Primitive = f64> + Copy>(k1: f64, k2: f64, x: T) -> T {
        if x.re() > 0.0 { x * k1 + x * x * k2 } else { x * k1 }
    }

    /// `(f_s, F_SEE)` at `(a, s, ṡ, L_M)` over dual numbers: [`HillMuscle::contraction`]'s
    /// residual and force, with its branches taken on the real parts.
    pub fn contraction_dual<T: DualNum<Primitive = f64> + Copy>(&self, a: T, s: T, sdot: T, length: T) -> (T, T) {
        let (lce, cos) = if self.b == 0.0 {
            (s, T::from(1.0))
        } else {
            let l = (s * s + self.b * self.b).sqrt();
            (l, s / l)
        };
        let v = sdot * cos;
        let fl = self.force_length_t(lce);
        let fv = self.force_velocity_t(v);
        let fp = self.parallel_t(lce);
        let ft = self.tendon_t(length - s);
        let (c_fibre, beta) = self.damping();
        let fibre = a * fl * fv * self.params.max_force + fp + v * c_fibre;
        (ft - fibre * cos - sdot * beta, ft)
    }

    /// The contraction residual's second partials at `(a, s, ṡ, L_M)`: ten hyper-dual
    /// evaluations of [`HillMuscle::contraction_dual`].
    pub fn contraction_hessian(&self, a: f64, s: f64, sdot: f64, length: f64) -> ContractionHessian {
        let y = [a, s, sdot, length];
        let mut out = ContractionHessian::default();
        for i in 0..4 {
            for j in i..4 {
                let mut h: [HyperDual64; 4] = y.map(HyperDual64::from);
                h[i].eps1 = 1.0;
                h[j].eps2 = 1.0;
                let (r, _) = self.contraction_dual(h[0], h[1], h[2], h[3]);
                out.residual[i][j] = r.eps1eps2;
                out.residual[j][i] = r.eps1eps2;
            }
        }
        out.force = match self.params.curves {
            Curves::Das3 => {
                let elongation = length - s - self.params.tendon_slack_length;
                if elongation > 0.0 { 2.0 * self.k_see } else { 0.0 }
            }
            Curves::DeGrooteFregly2016(_) => {
                let mut l = HyperDual64::from(length - s);
                (l.eps1, l.eps2) = (1.0, 1.0);
                self.tendon_t(l).eps1eps2
            }
        };
        out
    }

    /// The activation residual's second partials `(∂²f_a/∂u², ∂²f_a/∂u∂a, ∂²f_a/∂a²)` (1/s) at
    /// active state `a` and excitation `u`; those in `ȧ` vanish. For DAS3's, with
    /// `f_a = ȧ − r(u)(u − a)`, `r(u) = u/T_act + (1 − u)/T_deact`: `∂²f_a/∂u² = −2 r'`,
    /// `∂²f_a/∂u∂a = r'`, `∂²f_a/∂a² = 0`, `r' = 1/T_act − 1/T_deact`, whatever `a` and `u`; for De
    /// Groote et al.'s, by hyper-dual numbers.
    pub fn activation_hessian(&self, a: f64, u: f64) -> (f64, f64, f64) {
        if let Curves::Das3 = self.params.curves {
            let slope = 1.0 / self.params.activation_time - 1.0 / self.params.deactivation_time;
            return (-2.0 * slope, slope, 0.0);
        }
        let second = |[i, j]: [usize; 2]| {
            let mut y = [a, u].map(HyperDual64::from);
            y[i].eps1 = 1.0;
            y[j].eps2 = 1.0;
            -self.activation_rate_t(y[0], y[1]).eps1eps2
        };
        (second([1, 1]), second([1, 0]), second([0, 0]))
    }
}

#[cfg(test)]
mod tests {
    use crate::hill::Curves;
    use crate::hill::tests::both;

    /// Each second partial against central differences of the hand-written first partials
    /// ([`HillMuscle::contraction`]): an independent reference, on both branches of the
    /// force-velocity curve, with and without pennation, the parallel element slack and taut, the
    /// tendon taut and slack (where its force's curvature is 0, not `2 k_SEE`). The bounds are
    /// six to seven times the differences' own error (1.7e-7 of the larger entry and 1; the force's
    /// curvature, its slope linear in `L_M`, 2.9e-11).
    #[test]
    fn the_second_partials_are_the_first_partials_derivatives() {
        let (mut worst, mut worst_force) = (0.0f64, 0.0f64);
        for (pen, m) in [0.0, 0.4].into_iter().flat_map(|pen| both(pen).map(|m| (pen, m))) {
            // the tendon taut (three), then 5 mm short of its slack length
            for (a, s, sdot, l) in
                [(0.3, 0.098, -0.05, 0.3), (0.9, 0.11, 0.2, 0.315), (0.05, 0.09, 0.01, 0.295), (0.6, 0.105, -0.02, 0.3)]
            {
                let hess = m.contraction_hessian(a, s, sdot, l);
                let y = [a, s, sdot, l];
                let first = |y: [f64; 4]| {
                    let c = m.contraction(y[0], y[1], y[2], y[3]);
                    [c.d_a, c.d_s, c.d_sdot, c.d_length]
                };
                for j in 0..4 {
                    let h = 1e-7 * (1.0 + y[j].abs());
                    let (mut up, mut down) = (y, y);
                    up[j] += h;
                    down[j] -= h;
                    let (fu, fd) = (first(up), first(down));
                    for i in 0..4 {
                        let numeric = (fu[i] - fd[i]) / (2.0 * h);
                        let exact = hess.residual[i][j];
                        let scale = 1.0 + exact.abs().max(numeric.abs());
                        worst = worst.max((exact - numeric).abs() / scale);
                        assert!((exact - numeric).abs() < 1e-6 * scale, "pen {pen} ({i}, {j}): {exact} vs {numeric}");
                    }
                }
                let h = 1e-7;
                let slope = |x: f64| m.contraction(a, s, sdot, x).force_d_length;
                let numeric = (slope(l + h) - slope(l - h)) / (2.0 * h);
                worst_force = worst_force.max((hess.force - numeric).abs() / (1.0 + numeric.abs()));
                // DAS3's slope is linear in L_M, De Groote et al.'s exponential (truncation error)
                let bound = if m.params.curves == Curves::Das3 { 2e-10 } else { 1e-8 };
                assert!((hess.force - numeric).abs() < bound * (1.0 + numeric.abs()), "{} vs {numeric}", hess.force);
            }
        }
        println!("second partials off by {worst:.2e}, the force's curvature by {worst_force:.2e}");
    }

    #[test]
    fn the_activation_second_partials_are_its_first_partials_derivatives() {
        for m in both(0.0) {
            for (a, u) in [(0.2, 0.7), (0.6, 0.1)] {
                let (uu, ua, aa) = m.activation_hessian(a, u);
                let (ad, h) = (3.0, 1e-6);
                let first = |a: f64, u: f64| {
                    let (_, da, _, du) = m.activation(a, ad, u);
                    [da, du]
                };
                let d_du = (first(a, u + h)[1] - first(a, u - h)[1]) / (2.0 * h);
                let d_ua = (first(a + h, u)[1] - first(a - h, u)[1]) / (2.0 * h);
                let d_aa = (first(a + h, u)[0] - first(a - h, u)[0]) / (2.0 * h);
                for (exact, numeric) in [(uu, d_du), (ua, d_ua), (aa, d_aa)] {
                    assert!((exact - numeric).abs() < 1e-6 * (1.0 + exact.abs()), "{exact} vs {numeric}");
                }
            }
        }
    }
}
