//! Functions of one coordinate with their first and second derivatives, as OpenSim 4.x
//! evaluates them: `Constant`, `LinearFunction`, `PolynomialFunction`, `SimmSpline` (which
//! OpenSim 4.6 also reads for `NaturalCubicSpline`) and `MultiplierFunction`. The OpenSim import
//! (`mollier-osim`) uses the same type, so that a model's kinematics and its path points agree.

use mollier_core::scalar::{Real, c};

/// A function of one variable.
#[derive(Clone, Debug, PartialEq)]
pub enum Function {
    /// `value`, whatever the variable.
    Constant(f64),
    /// `slope · x + intercept`.
    Linear {
        /// Slope.
        slope: f64,
        /// Intercept.
        intercept: f64,
    },
    /// `Σ c_k x^(n−k)`: coefficients from the highest power down, as OpenSim writes them.
    Polynomial(Vec<f64>),
    /// A cubic spline through knots, `y_i + b_i d + c_i d² + d_i d³` with `d = x − x_i` on
    /// `[x_i, x_(i+1)]`, continued by its end tangents outside the knots.
    Spline(Spline),
    /// `scale · f(x)`.
    Multiplier(f64, Box<Function>),
}

/// A cubic spline's knots and coefficients.
#[derive(Clone, Debug, PartialEq)]
pub struct Spline {
    x: Vec<f64>,
    y: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
    d: Vec<f64>,
}

impl Function {
    /// The value at `x`.
    pub fn value(&self, x: f64) -> f64 {
        self.derivatives(x)[0]
    }

    /// The value and the first and second derivatives at `x`. A spline's second derivative is
    /// that of the piece holding `x` (at a knot, the piece to its right; zero beyond the knots).
    pub fn derivatives(&self, x: f64) -> [f64; 3] {
        match self {
            Function::Constant(v) => [*v, 0.0, 0.0],
            Function::Linear { slope, intercept } => [slope * x + intercept, *slope, 0.0],
            Function::Polynomial(c) => {
                // Horner's scheme carried to the second derivative
                let (mut p, mut dp, mut ddp) = (0.0, 0.0, 0.0);
                for k in c {
                    ddp = ddp * x + 2.0 * dp;
                    dp = dp * x + p;
                    p = p * x + k;
                }
                [p, dp, ddp]
            }
            Function::Spline(s) => s.derivatives(x),
            Function::Multiplier(k, f) => f.derivatives(x).map(|v| k * v),
        }
    }

    /// The value at `x` over a jet scalar (dual numbers of any order): the same pieces as
    /// [`Self::derivatives`] (a spline's chosen by the real part), so that every derivative of
    /// the value is exact, for the third- and fourth-order transfer functions.
    pub fn at<T: Real>(&self, x: T) -> T {
        match self {
            Function::Constant(v) => c(*v),
            Function::Linear { slope, intercept } => x * *slope + *intercept,
            Function::Polynomial(cs) => cs.iter().fold(c::<T>(0.0), |p, k| p * x + *k),
            Function::Spline(s) => {
                let (n, r) = (s.x.len(), x.re());
                let (i, cubic) = if r < s.x[0] {
                    (0, false)
                } else if r > s.x[n - 1] {
                    (n - 1, false)
                } else {
                    (s.x.partition_point(|k| *k <= r).saturating_sub(1).min(n - 1), true)
                };
                let h = x - s.x[i];
                if cubic { h * (h * (h * s.d[i] + s.c[i]) + s.b[i]) + s.y[i] } else { h * s.b[i] + s.y[i] }
            }
            Function::Multiplier(k, f) => f.at(x) * *k,
        }
    }

    /// The value when it does not depend on the variable: a `Constant`, or a
    /// `MultiplierFunction` of one (OpenSim's ScaleTool scales a constant axis so).
    pub fn constant(&self) -> Option<f64> {
        match self {
            Function::Constant(v) => Some(*v),
            Function::Multiplier(k, f) => f.constant().map(|v| k * v),
            _ => None,
        }
    }

    /// `slope 1, intercept b`: the function only shifts its variable, so a Mollier input that is
    /// the change of the axis's value is the change of the coordinate itself.
    pub fn is_shift(&self) -> bool {
        matches!(self, Function::Linear { slope, .. } if *slope == 1.0)
    }

    /// A short description for comments and the report.
    pub fn describe(&self) -> String {
        match self {
            Function::Constant(v) => format!("Constant {v}"),
            Function::Linear { slope, intercept } => format!("LinearFunction {slope}·q + {intercept}"),
            Function::Polynomial(c) => format!("PolynomialFunction of degree {}", c.len().saturating_sub(1)),
            Function::Spline(s) => format!("spline through {} knots", s.x.len()),
            Function::Multiplier(k, f) => format!("{k} × ({})", f.describe()),
        }
    }
}

impl Spline {
    /// The knots' abscissae and values.
    pub fn knots(&self) -> (&[f64], &[f64]) {
        (&self.x, &self.y)
    }

    /// The value at `x`: the cubic of the interval holding `x`, the end tangent beyond the knots.
    pub fn value(&self, x: f64) -> f64 {
        self.derivatives(x)[0]
    }

    /// The value and the first two derivatives at `x` (see [`Function::derivatives`]).
    pub fn derivatives(&self, x: f64) -> [f64; 3] {
        let n = self.x.len();
        if x < self.x[0] {
            return [self.y[0] + self.b[0] * (x - self.x[0]), self.b[0], 0.0];
        }
        if x > self.x[n - 1] {
            return [self.y[n - 1] + self.b[n - 1] * (x - self.x[n - 1]), self.b[n - 1], 0.0];
        }
        // the last knot with x_i <= x (binary search; the knots increase)
        let i = self.x.partition_point(|k| *k <= x).saturating_sub(1).min(n - 1);
        let h = x - self.x[i];
        let (b, c, d) = (self.b[i], self.c[i], self.d[i]);
        [self.y[i] + h * (b + h * (c + h * d)), b + h * (2.0 * c + 3.0 * h * d), 2.0 * c + 6.0 * h * d]
    }

    /// SIMM's spline (`SimmSpline`): Forsythe, Malcolm & Moler's cubic spline, whose end
    /// conditions match the third derivative of the cubic through the four end knots (a
    /// quadratic-free natural spline for three knots, a line for two). `x` increases strictly,
    /// with as many `y`, at least 2.
    pub fn fmm(x: Vec<f64>, y: Vec<f64>) -> Spline {
        let n = x.len();
        let (mut b, mut c, mut d) = (vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        if n < 3 {
            let s = (y[1] - y[0]) / (x[1] - x[0]);
            return Spline { x, y, b: vec![s; n], c, d };
        }
        let nm1 = n - 1;
        d[0] = x[1] - x[0];
        c[1] = (y[1] - y[0]) / d[0];
        for i in 1..nm1 {
            d[i] = x[i + 1] - x[i];
            b[i] = 2.0 * (d[i - 1] + d[i]);
            c[i + 1] = (y[i + 1] - y[i]) / d[i];
            c[i] = c[i + 1] - c[i];
        }
        b[0] = -d[0];
        b[nm1] = -d[n - 2];
        c[0] = 0.0;
        c[nm1] = 0.0;
        if n > 3 {
            c[0] = c[2] / (x[3] - x[1]) - c[1] / (x[2] - x[0]);
            c[nm1] = c[n - 2] / (x[nm1] - x[n - 3]) - c[n - 3] / (x[n - 2] - x[n - 4]);
            c[0] = c[0] * d[0] * d[0] / (x[3] - x[0]);
            c[nm1] = -c[nm1] * d[n - 2] * d[n - 2] / (x[nm1] - x[n - 4]);
        }
        for i in 1..n {
            let t = d[i - 1] / b[i - 1];
            b[i] -= t * d[i - 1];
            c[i] -= t * c[i - 1];
        }
        c[nm1] /= b[nm1];
        for i in (0..nm1).rev() {
            c[i] = (c[i] - d[i] * c[i + 1]) / b[i];
        }
        b[nm1] = (y[nm1] - y[n - 2]) / d[n - 2] + d[n - 2] * (c[n - 2] + 2.0 * c[nm1]);
        for i in 0..nm1 {
            b[i] = (y[i + 1] - y[i]) / d[i] - d[i] * (c[i + 1] + 2.0 * c[i]);
            d[i] = (c[i + 1] - c[i]) / d[i];
            c[i] *= 3.0;
        }
        c[nm1] *= 3.0;
        d[nm1] = d[n - 2];
        Spline { x, y, b, c, d }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splines_interpolate_their_knots_and_cubics() {
        let x = vec![-1.0, 0.0, 0.5, 2.0, 3.0];
        let cubic = |t: f64| 0.3 * t * t * t - t * t + 2.0 * t - 1.0;
        let y: Vec<f64> = x.iter().map(|t| cubic(*t)).collect();
        let s = Spline::fmm(x.clone(), y.clone());
        // FMM's end conditions reproduce a cubic exactly, with its derivatives
        for t in [-1.0, -0.3, 0.2, 1.1, 2.7, 3.0] {
            let [v, d1, d2] = s.derivatives(t);
            assert!((v - cubic(t)).abs() < 1e-12, "{t}");
            assert!((d1 - (0.9 * t * t - 2.0 * t + 2.0)).abs() < 1e-11, "{t}");
            assert!((d2 - (1.8 * t - 2.0)).abs() < 1e-10, "{t}");
        }
        for (a, b) in x.iter().zip(&y) {
            assert!((s.value(*a) - b).abs() < 1e-12);
        }
        // beyond the knots: the end tangents
        let h = 1e-7;
        let slope = (s.value(3.0) - s.value(3.0 - h)) / h;
        assert!((s.value(4.0) - s.value(3.0) - slope).abs() < 1e-6);
        assert_eq!(s.derivatives(4.0)[2], 0.0);
    }

    #[test]
    fn derivatives_agree_with_central_differences() {
        let s = Spline::fmm(vec![-2.0, -0.5, 0.1, 0.4, 1.7], vec![0.01, 0.03, -0.02, 0.0, 0.05]);
        let fs = [
            Function::Polynomial(vec![2.0, -0.5, 0.0, 1.0]),
            Function::Multiplier(1.5, Box::new(Function::Spline(s))),
            Function::Linear { slope: -0.7, intercept: 0.2 },
            Function::Constant(0.3),
        ];
        let h = 1e-5;
        for f in &fs {
            for x in [-2.5, -1.1, 0.2, 0.35, 1.0, 2.0] {
                let [_, d1, d2] = f.derivatives(x);
                let (p, m) = (f.derivatives(x + h), f.derivatives(x - h));
                assert!((d1 - (p[0] - m[0]) / (2.0 * h)).abs() < 1e-8, "{f:?} at {x}");
                assert!((d2 - (p[1] - m[1]) / (2.0 * h)).abs() < 1e-6, "{f:?} at {x}");
            }
        }
    }

    /// Over a jet, the value's first and second derivatives are [`Function::derivatives`]'
    /// (independent: Horner's scheme and the spline's derivative formulas), and its third and
    /// fourth central differences of the second.
    #[test]
    fn jets_carry_the_derivatives() {
        use mollier_core::{HyperHyperDual64, Jet4};
        use num_dual::Dual64;
        let s = Spline::fmm(vec![-2.0, -0.5, 0.1, 0.4, 1.7], vec![0.01, 0.03, -0.02, 0.0, 0.05]);
        let fs = [
            Function::Polynomial(vec![2.0, -0.5, 0.3, 0.0, 1.0]),
            Function::Multiplier(1.5, Box::new(Function::Spline(s))),
            Function::Linear { slope: -0.7, intercept: 0.2 },
            Function::Constant(0.3),
        ];
        let h = 1e-4;
        for f in &fs {
            for x in [-2.5, -1.1, 0.2, 0.35, 1.0, 2.0] {
                let j = f.at(HyperHyperDual64::new(x, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0));
                let [v, d1, d2] = f.derivatives(x);
                let (p, m) = (f.derivatives(x + h), f.derivatives(x - h));
                let d3 = (p[2] - m[2]) / (2.0 * h);
                assert!((j.re - v).abs() < 1e-14 && (j.eps1 - d1).abs() < 1e-12, "{f:?} at {x}");
                assert!((j.eps1eps2 - d2).abs() < 1e-11 && (j.eps1eps2eps3 - d3).abs() < 1e-6, "{f:?} at {x}");
                let (one, z) = (Dual64::new(1.0, 0.0), Dual64::new(0.0, 0.0));
                let j4 = f.at(Jet4::new(Dual64::new(x, 1.0), one, one, one, z, z, z, z));
                let d4 = (p[2] - 2.0 * d2 + m[2]) / (h * h);
                assert!((j4.eps1eps2eps3.eps - d4).abs() < 1e-5 * (1.0 + d4.abs()), "{f:?} at {x}: {j4:?} {d4}");
            }
        }
    }

    #[test]
    fn polynomial_coefficients_start_at_the_highest_power() {
        let p = Function::Polynomial(vec![2.0, 0.0, -1.0]);
        assert_eq!(p.derivatives(3.0), [17.0, 12.0, 4.0]);
        let m = Function::Multiplier(0.5, Box::new(p));
        assert_eq!(m.value(3.0), 8.5);
    }
}
