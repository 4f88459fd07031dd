//! The Rosenbrock-W pair ROS34PW2 of Rang & Angermann (2005, BIT 45, 761-787, Table 4.2): four
//! stages, third order with any Jacobian (a W-method), an embedded second-order solution,
//! L-stable and stiffly accurate (`R(∞) = 0`: a stiff state's deviation from its slow manifold
//! is gone at the step's end, not estimated as an error of the step). Written for `ẋ = F(t, x)`
//! and a Jacobian approximation `J`:
//! ```text
//! (I − h γ J) k_i = h F(t + α_i h, x + Σ_j α_ij k_j) + h J Σ_j γ_ij k_j + γ_i h² ∂F/∂t
//! x_{n+1} = x + Σ b_i k_i,   error = Σ (b_i − b̂_i) k_i
//! ```
//! and integrated in the transformed variables `u_i = Σ_j γ_ij k_j` (Hairer & Wanner, IV.7),
//! which need no product with `J`, only solves with `I − h γ J`.

/// A Rosenbrock-W tableau of four stages as its paper gives it.
#[derive(Clone, Copy, Debug)]
pub struct Tableau {
    /// The diagonal `γ`.
    pub gamma: f64,
    /// `α_ij` (strictly lower).
    pub alpha: [[f64; 4]; 4],
    /// `γ_ij` off the diagonal (strictly lower).
    pub gammas: [[f64; 4]; 4],
    /// The solution's weights `b_i`.
    pub b: [f64; 4],
    /// The embedded solution's weights `b̂_i`.
    pub b_hat: [f64; 4],
}

/// ROS34PW2, Rang & Angermann (2005), Table 4.2.
#[allow(clippy::excessive_precision)] // the paper's digits
pub const ROS34PW2: Tableau = Tableau {
    gamma: 4.358_665_215_084_590e-1,
    alpha: [
        [0.0; 4],
        [8.717_330_430_169_180e-1, 0.0, 0.0, 0.0],
        [8.445_706_001_536_942e-1, -1.129_906_423_648_418_5e-1, 0.0, 0.0],
        [0.0, 0.0, 1.0, 0.0],
    ],
    gammas: [
        [0.0; 4],
        [-8.717_330_430_169_180e-1, 0.0, 0.0, 0.0],
        [-9.033_805_701_304_408e-1, 5.418_067_238_809_533e-2, 0.0, 0.0],
        [2.421_238_070_609_535e-1, -1.223_250_583_904_514_7, 5.452_602_553_351_021e-1, 0.0],
    ],
    b: [2.421_238_070_609_535e-1, -1.223_250_583_904_514_7, 1.545_260_255_335_102, 4.358_665_215_084_590e-1],
    b_hat: [3.781_090_314_581_937e-1, -9.604_229_221_242_318e-2, 0.5, 2.179_332_607_542_295e-1],
};

/// The tableau in the transformed variables `u = Γ k` (`Γ` lower with `γ` on its diagonal):
/// `a = α Γ⁻¹`, `c = diag(1/γ) − Γ⁻¹`, `m = b Γ⁻¹`, `m̂ = b̂ Γ⁻¹`.
#[derive(Clone, Copy, Debug)]
pub struct Transformed {
    /// `γ`.
    pub gamma: f64,
    /// The stages' arguments `x + Σ_j a_ij u_j` (strictly lower).
    pub a: [[f64; 4]; 4],
    /// The stages' couplings `Σ_j c_ij u_j / h` (strictly lower).
    pub c: [[f64; 4]; 4],
    /// `x_{n+1} = x + Σ m_i u_i`.
    pub m: [f64; 4],
    /// `error = Σ e_i u_i` (`m − m̂`).
    pub e: [f64; 4],
    /// The stages' times `α_i = Σ_j α_ij` (fractions of the step).
    pub time: [f64; 4],
    /// `γ_i = γ + Σ_j γ_ij`, the factors of `h ∂F/∂t`.
    pub time_gamma: [f64; 4],
}

impl Tableau {
    /// The transformed tableau.
    pub fn transformed(&self) -> Transformed {
        let g = self.gamma;
        // Γ⁻¹ by forward substitution (lower, γ on the diagonal)
        let mut inv = [[0.0; 4]; 4];
        for col in 0..4 {
            for i in col..4 {
                let delta = if i == col { 1.0 } else { 0.0 };
                let s: f64 = (col..i).map(|j| self.gammas[i][j] * inv[j][col]).sum();
                inv[i][col] = (delta - s) / g;
            }
        }
        let mut t = Transformed {
            gamma: g,
            a: [[0.0; 4]; 4],
            c: [[0.0; 4]; 4],
            m: [0.0; 4],
            e: [0.0; 4],
            time: [0.0; 4],
            time_gamma: [0.0; 4],
        };
        for i in 0..4 {
            for j in 0..4 {
                t.a[i][j] = (0..4).map(|k| self.alpha[i][k] * inv[k][j]).sum();
                t.c[i][j] = if j < i { -inv[i][j] } else { 0.0 };
            }
            t.m[i] = (0..4).map(|k| self.b[k] * inv[k][i]).sum();
            t.e[i] = t.m[i] - (0..4).map(|k| self.b_hat[k] * inv[k][i]).sum::<f64>();
            t.time[i] = self.alpha[i].iter().sum();
            t.time_gamma[i] = g + self.gammas[i].iter().sum::<f64>();
        }
        t
    }
}

/// `r ↦ (I − h γ J)⁻¹ r` (len to len).
pub type Solve<'a, E> = &'a mut dyn FnMut(&[f64]) -> Result<Vec<f64>, E>;

/// `(θ, y) ↦ F(t_n + θ h, y)` (len to len).
pub type Rate<'a, E> = &'a mut dyn FnMut(f64, &[f64]) -> Result<Vec<f64>, E>;

/// One step of length `h` of a transformed tableau from `x` with `F(t_n, x) = f0` and
/// `∂F/∂t = dt` (len each): `solve(r)` is `(I − h γ J)⁻¹ r`, `eval(θ, y)` the rate `F` at
/// `t_n + θ h` and `y`. Returns `x_{n+1}` and the embedded error estimate (len each).
pub fn step<E>(
    tab: &Transformed,
    h: f64,
    x: &[f64],
    f0: &[f64],
    dt: &[f64],
    solve: Solve<'_, E>,
    eval: Rate<'_, E>,
) -> Result<(Vec<f64>, Vec<f64>), E> {
    let n = x.len();
    let hg = h * tab.gamma;
    let mut u: Vec<Vec<f64>> = Vec::with_capacity(4);
    for i in 0..4 {
        let f = if i == 0 {
            f0.to_vec()
        } else {
            let y: Vec<f64> = (0..n).map(|r| x[r] + (0..i).map(|j| tab.a[i][j] * u[j][r]).sum::<f64>()).collect();
            eval(tab.time[i], &y)?
        };
        let rhs: Vec<f64> = (0..n)
            .map(|r| f[r] + (0..i).map(|j| tab.c[i][j] * u[j][r]).sum::<f64>() / h + tab.time_gamma[i] * h * dt[r])
            .collect();
        u.push(solve(&rhs)?.iter().map(|v| hg * v).collect());
    }
    let sum = |w: &[f64; 4], r: usize| (0..4).map(|i| w[i] * u[i][r]).sum::<f64>();
    let xn = (0..n).map(|r| x[r] + sum(&tab.m, r)).collect();
    let err = (0..n).map(|r| sum(&tab.e, r)).collect();
    Ok((xn, err))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order conditions of Rosenbrock-W methods (Hairer & Wanner, IV.7, trees with the
    /// Jacobian's vertices apart) for weights `w`, as residuals, up to order 3.
    fn conditions(t: &Tableau, w: &[f64; 4]) -> Vec<(&'static str, f64)> {
        let g = t.gamma;
        let full = |i: usize, j: usize| t.gammas[i][j] + if i == j { g } else { 0.0 };
        let al: Vec<f64> = (0..4).map(|i| t.alpha[i].iter().sum()).collect();
        let gs: Vec<f64> = (0..4).map(|i| (0..4).map(|j| full(i, j)).sum()).collect();
        let dot = |v: &dyn Fn(usize) -> f64| (0..4).map(|i| w[i] * v(i)).sum::<f64>();
        let row = |m: &dyn Fn(usize, usize) -> f64, v: &[f64], i: usize| (0..4).map(|j| m(i, j) * v[j]).sum::<f64>();
        let alpha = |i: usize, j: usize| t.alpha[i][j];
        vec![
            ("1: Σ b", dot(&|_| 1.0) - 1.0),
            ("2: Σ b α", dot(&|i| al[i]) - 0.5),
            ("2: Σ b γ (J f)", dot(&|i| gs[i])),
            ("3: Σ b α²", dot(&|i| al[i] * al[i]) - 1.0 / 3.0),
            ("3: Σ b α α", dot(&|i| row(&alpha, &al, i)) - 1.0 / 6.0),
            ("3: Σ b α γ (f' J f)", dot(&|i| row(&alpha, &gs, i))),
            ("3: Σ b γ α (J f' f)", dot(&|i| row(&full, &al, i))),
            ("3: Σ b γ γ (J J f)", dot(&|i| row(&full, &gs, i))),
        ]
    }

    #[test]
    fn ros34pw2_is_a_third_order_w_method_with_a_second_order_estimate() {
        let t = ROS34PW2;
        for (name, r) in conditions(&t, &t.b) {
            assert!(r.abs() < 1e-15, "b, {name}: {r:e}");
        }
        let embedded = conditions(&t, &t.b_hat);
        for (name, r) in &embedded[..3] {
            assert!(r.abs() < 1e-15, "b̂, {name}: {r:e}");
        }
        // the estimate is of third order: the embedded solution fails a third-order condition
        assert!(embedded[3..].iter().any(|(_, r)| r.abs() > 1e-2), "{embedded:?}");
        // stiffly accurate: b_i = α_4i + γ_4i, b_4 = γ
        for i in 0..3 {
            assert!((t.b[i] - t.alpha[3][i] - t.gammas[3][i]).abs() < 1e-15, "{i}");
        }
        assert_eq!(t.b[3], t.gamma);
        // transformed: x_{n+1} is the last stage's argument plus its u
        let tr = t.transformed();
        for i in 0..3 {
            assert!((tr.m[i] - tr.a[3][i]).abs() < 1e-13, "{i}: {} {}", tr.m[i], tr.a[3][i]);
        }
        assert!((tr.m[3] - 1.0).abs() < 1e-13);
    }

    /// Prothero & Robinson's problem `y' = λ (y − φ) + φ'`, `φ = sin t`, from `y(0) = 1`: its
    /// closed form `sin t + e^{λ t}`. The error at `t = 1` of `steps` steps, the Jacobian exact.
    fn prothero_robinson(steps: usize, lambda: f64) -> f64 {
        let tab = ROS34PW2.transformed();
        let h = 1.0 / steps as f64;
        let mut y = vec![1.0];
        for k in 0..steps {
            let t = k as f64 * h;
            let rate = |t: f64, y: &[f64]| vec![lambda * (y[0] - t.sin()) + t.cos()];
            let dt = [-lambda * t.cos() - t.sin()];
            let f0 = rate(t, &y);
            let jac = lambda;
            let mut solve = |r: &[f64]| Ok::<_, ()>(vec![r[0] / (1.0 - h * tab.gamma * jac)]);
            let mut eval = |th: f64, z: &[f64]| Ok(rate(t + th * h, z));
            y = step(&tab, h, &y, &f0, &dt, &mut solve, &mut eval).unwrap().0;
        }
        (y[0] - (1.0f64.sin() + (lambda * 1.0).exp())).abs()
    }

    /// A linear, non-stiff system `y' = A y` with a Jacobian off by `skew` in one entry: its
    /// error at `t = 1` from the closed form.
    fn rotation(steps: usize, skew: f64) -> f64 {
        // A = [[-0.5, 2], [-2, -0.5]]: y = e^{-t/2} (cos 2t, −sin 2t) from (1, 0)
        let a = [[-0.5, 2.0], [-2.0, -0.5]];
        let j = [[-0.5 + skew, 2.0], [-2.0, -0.5]];
        let tab = ROS34PW2.transformed();
        let h = 1.0 / steps as f64;
        let mut y = vec![1.0, 0.0];
        let mv = |m: &[[f64; 2]; 2], y: &[f64]| vec![m[0][0] * y[0] + m[0][1] * y[1], m[1][0] * y[0] + m[1][1] * y[1]];
        for _ in 0..steps {
            let f0 = mv(&a, &y);
            let w = [
                [1.0 - h * tab.gamma * j[0][0], -h * tab.gamma * j[0][1]],
                [-h * tab.gamma * j[1][0], 1.0 - h * tab.gamma * j[1][1]],
            ];
            let det = w[0][0] * w[1][1] - w[0][1] * w[1][0];
            let mut solve = |r: &[f64]| {
                Ok::<_, ()>(vec![(w[1][1] * r[0] - w[0][1] * r[1]) / det, (w[0][0] * r[1] - w[1][0] * r[0]) / det])
            };
            let mut eval = |_: f64, z: &[f64]| Ok(mv(&a, z));
            y = step(&tab, h, &y, &f0, &[0.0, 0.0], &mut solve, &mut eval).unwrap().0;
        }
        let e = (-0.5f64).exp();
        ((y[0] - e * 2.0f64.cos()).powi(2) + (y[1] + e * 2.0f64.sin()).powi(2)).sqrt()
    }

    fn order(e: &dyn Fn(usize) -> f64, coarse: usize) -> f64 {
        (e(coarse) / e(2 * coarse)).log2()
    }

    #[test]
    fn ros34pw2_converges_at_third_order_on_linear_problems_with_any_jacobian() {
        // exact and approximate Jacobians alike: a W-method
        for skew in [0.0, 0.3] {
            let p = order(&|s| rotation(s, skew), 40);
            eprintln!("rotation, Jacobian off by {skew}: order {p:.3}");
            assert!((p - 3.0).abs() < 0.15, "{skew}: {p}");
        }
        // the non-stiff Prothero-Robinson problem (λ = −1): third order with the time partial
        let p = order(&|s| prothero_robinson(s, -1.0), 40);
        eprintln!("Prothero-Robinson, λ = −1: order {p:.3}");
        assert!((p - 3.0).abs() < 0.15, "{p}");
        // stiff (h λ down to −1e8/40): the error is O(h² / |λ|) (measured 8.1e-11 at λ = −1e6,
        // h = 1/20, 2.0e-11 at 1/40; the same figures by an independent script): the fast mode
        // leaves no error of its own, the stiffer the smaller
        let (e4, e6) = (prothero_robinson(40, -1e4), prothero_robinson(40, -1e6));
        eprintln!("Prothero-Robinson, h = 1/40: {e4:.2e} at λ = −1e4, {e6:.2e} at −1e6");
        assert!(e4 < 3e-9 && e6 < e4 / 50.0, "{e4:e} {e6:e}");
    }
}
