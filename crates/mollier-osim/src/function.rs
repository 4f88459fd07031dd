//! OpenSim's functions of one coordinate, as OpenSim 4.x evaluates them: `Constant`,
//! `LinearFunction`, `PolynomialFunction`, `SimmSpline`, `NaturalCubicSpline` and
//! `MultiplierFunction`. Checked against OpenSim's own values (`tests/opensim_kinematics.rs`).
//! OpenSim 4.6 reads a `NaturalCubicSpline` as a `SimmSpline`, and so does this crate.

use mollier_format::Diagnostic;
use roxmltree::Node;

use crate::xml::{Src, child};

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
        match self {
            Function::Constant(v) => *v,
            Function::Linear { slope, intercept } => slope * x + intercept,
            Function::Polynomial(c) => c.iter().fold(0.0, |acc, k| acc * x + k),
            Function::Spline(s) => s.value(x),
            Function::Multiplier(k, f) => k * f.value(x),
        }
    }

    /// The derivative at `x` (per unit of `x`), exact for every kind: inverse kinematics chains
    /// it with the kernel's transfer functions.
    pub fn derivative(&self, x: f64) -> f64 {
        match self {
            Function::Constant(_) => 0.0,
            Function::Linear { slope, .. } => *slope,
            Function::Polynomial(c) => {
                let n = c.len().saturating_sub(1);
                c.iter().take(n).enumerate().fold(0.0, |acc, (k, ck)| acc * x + (n - k) as f64 * ck)
            }
            Function::Spline(s) => s.derivative(x),
            Function::Multiplier(k, f) => k * f.derivative(x),
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
    /// The value at `x`: the cubic of the interval holding `x`, the end tangent beyond the knots.
    pub fn value(&self, x: f64) -> f64 {
        let n = self.x.len();
        if x < self.x[0] {
            return self.y[0] + self.b[0] * (x - self.x[0]);
        }
        if x > self.x[n - 1] {
            return self.y[n - 1] + self.b[n - 1] * (x - self.x[n - 1]);
        }
        // the last knot with x_i <= x (binary search; the knots increase)
        let i = self.x.partition_point(|k| *k <= x).saturating_sub(1).min(n - 1);
        let dx = x - self.x[i];
        self.y[i] + dx * (self.b[i] + dx * (self.c[i] + dx * self.d[i]))
    }

    /// The slope at `x`: of the interval's cubic, the end tangent beyond the knots.
    pub fn derivative(&self, x: f64) -> f64 {
        let n = self.x.len();
        if x < self.x[0] {
            return self.b[0];
        }
        if x > self.x[n - 1] {
            return self.b[n - 1];
        }
        let i = self.x.partition_point(|k| *k <= x).saturating_sub(1).min(n - 1);
        let dx = x - self.x[i];
        self.b[i] + dx * (2.0 * self.c[i] + 3.0 * dx * self.d[i])
    }

    /// SIMM's spline (`SimmSpline`): Forsythe, Malcolm & Moler's cubic spline, whose end
    /// conditions match the third derivative of the cubic through the four end knots (a
    /// quadratic-free natural spline for three knots, a line for two).
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

/// The function element among `node`'s children (any of the supported tags), if any.
pub(crate) fn function_child<'a, 'i>(node: Node<'a, 'i>) -> Option<Node<'a, 'i>> {
    node.children().find(|c| c.is_element() && is_function_tag(c.tag_name().name()))
}

fn is_function_tag(tag: &str) -> bool {
    matches!(
        tag,
        "Constant"
            | "LinearFunction"
            | "PolynomialFunction"
            | "SimmSpline"
            | "NaturalCubicSpline"
            | "MultiplierFunction"
            | "GCVSpline"
            | "PiecewiseLinearFunction"
            | "PiecewiseConstantFunction"
            | "StepFunction"
            | "Sine"
            | "MultivariatePolynomialFunction"
            | "ClutchedPathSpring"
    )
}

/// Read a function element.
pub(crate) fn read_function(src: &Src, node: Node) -> Result<Function, Box<Diagnostic>> {
    let tag = node.tag_name().name();
    match tag {
        "Constant" => Ok(Function::Constant(src.number_or(node, "value", 0.0)?)),
        "LinearFunction" => {
            let c = src.numbers(node, "coefficients", 2)?;
            Ok(Function::Linear { slope: c[0], intercept: c[1] })
        }
        "PolynomialFunction" => {
            let c = src.numbers(node, "coefficients", 0)?;
            if c.is_empty() {
                return Err(src.error(node, "a PolynomialFunction without coefficients", "give its coefficients"));
            }
            Ok(Function::Polynomial(c))
        }
        "SimmSpline" | "NaturalCubicSpline" => {
            let x = src.numbers(node, "x", 0)?;
            let y = src.numbers(node, "y", 0)?;
            if x.len() != y.len() || x.len() < 2 {
                return Err(src.error(
                    node,
                    format!("a spline needs at least 2 knots and as many x as y values ({} x, {} y)", x.len(), y.len()),
                    "give matching <x> and <y> lists",
                ));
            }
            if x.windows(2).any(|w| !(w[1] > w[0])) {
                return Err(src.error(
                    node,
                    "the spline's x values do not increase",
                    "sort the knots by x, without repeats",
                ));
            }
            // OpenSim 4.6 has no class `NaturalCubicSpline`: it reads the tag as a SimmSpline (its
            // values agree with SimmSpline's, not a natural spline's; tests/opensim_kinematics.rs)
            Ok(Function::Spline(Spline::fmm(x, y)))
        }
        "MultiplierFunction" => {
            let scale = src.number_or(node, "scale", 1.0)?;
            let inner =
                child(node, "function").and_then(function_child).or_else(|| function_child(node)).ok_or_else(|| {
                    src.error(node, "a MultiplierFunction without its function", "add the function it scales")
                })?;
            Ok(Function::Multiplier(scale, Box::new(read_function(src, inner)?)))
        }
        _ => Err(src.error(
            node,
            format!("the function type `{tag}` is not supported"),
            "use Constant, LinearFunction, PolynomialFunction, SimmSpline, NaturalCubicSpline or MultiplierFunction",
        )),
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
        // FMM's end conditions reproduce a cubic exactly
        for t in [-1.0, -0.3, 0.2, 1.1, 2.7, 3.0] {
            assert!((s.value(t) - cubic(t)).abs() < 1e-12, "{t}");
        }
        for (a, b) in x.iter().zip(&y) {
            assert!((s.value(*a) - b).abs() < 1e-12);
        }
        // beyond the knots: the end tangents
        let h = 1e-7;
        let slope = (s.value(3.0) - s.value(3.0 - h)) / h;
        assert!((s.value(4.0) - s.value(3.0) - slope).abs() < 1e-6);
    }

    #[test]
    fn polynomial_coefficients_start_at_the_highest_power() {
        let p = Function::Polynomial(vec![2.0, 0.0, -1.0]);
        assert_eq!(p.value(3.0), 17.0);
        let m = Function::Multiplier(0.5, Box::new(p));
        assert_eq!(m.value(3.0), 8.5);
    }

    #[test]
    fn derivatives_are_exact() {
        let x = vec![-1.0, 0.0, 0.5, 2.0, 3.0];
        let cubic = |t: f64| 0.3 * t * t * t - t * t + 2.0 * t - 1.0;
        let slope = |t: f64| 0.9 * t * t - 2.0 * t + 2.0;
        let s = Function::Spline(Spline::fmm(x.clone(), x.iter().map(|t| cubic(*t)).collect()));
        for t in [-1.0, -0.3, 0.2, 0.5, 1.1, 2.7, 3.0] {
            assert!((s.derivative(t) - slope(t)).abs() < 1e-12, "{t}");
        }
        // beyond the knots the end tangent holds
        assert!((s.derivative(5.0) - slope(3.0)).abs() < 1e-12);
        let p = Function::Polynomial(vec![2.0, 0.0, -1.0]);
        assert_eq!(p.derivative(3.0), 12.0);
        assert_eq!(Function::Multiplier(0.5, Box::new(p)).derivative(3.0), 6.0);
        assert_eq!(Function::Linear { slope: -2.0, intercept: 1.0 }.derivative(7.0), -2.0);
        assert_eq!(Function::Constant(4.0).derivative(7.0), 0.0);
    }
}
