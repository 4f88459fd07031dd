//! User-defined torque functions `M(x)` (N m) of a joint angle `x` (rad) or of an angular rate
//! (rad/s): the "torque-angle functions" the MADYMO and Calspan joint models leave to their user
//! (report §2.1.2, §2.1.3, §2.2.2), and the damping torques of the rates.
//!
//! In a model file a function is a table with one of these forms:
//! ```toml
//! { linear = 12.0 }                          # M = k x
//! { polynomial = [12.0, 0.0, 4.5] }          # M = Σ c_k x^k, k = 1, 2, …
//! { exponential = [0.5, 6.0] }               # M = a (exp(b x) − 1)
//! { angles = [...], moments = [...], interpolation = "monotone-cubic" }   # a table
//! ```
//! (`rates` instead of `angles` for a damping function.) Closed forms are in rad (rad/s) whatever
//! the file's angle unit; table abscissae are in the file's angle unit (per second). Tables are
//! interpolated linearly or by the monotone piecewise cubic Hermite curve of Fritsch & Carlson
//! (node slopes of Fritsch & Butland, as PCHIP), and continued outside by the tangent line at
//! their end node, so the function stays C1 where the interpolation is.

use mollier_core::registry::{ParamDoc, ParamError, ParamKind, Params};
use mollier_core::scalar::{Real, c};

/// How a table is interpolated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// Monotone piecewise cubic Hermite (Fritsch–Carlson, PCHIP slopes): C1.
    MonotoneCubic,
    /// Piecewise linear: C0.
    Linear,
}

impl Interpolation {
    /// The name used in model files.
    pub const fn name(self) -> &'static str {
        match self {
            Interpolation::MonotoneCubic => "monotone-cubic",
            Interpolation::Linear => "linear",
        }
    }

    /// The variant called `name` in model files.
    pub fn from_name(name: &str) -> Option<Self> {
        [Interpolation::MonotoneCubic, Interpolation::Linear].into_iter().find(|i| i.name() == name)
    }

    /// The optional model-file key `key` of `p`: monotone-cubic if it is absent.
    pub fn read(p: &Params<'_>, key: &str) -> Result<Self, ParamError> {
        match p.opt_string(key)? {
            None => Ok(Interpolation::MonotoneCubic),
            Some(name) => Interpolation::from_name(name).ok_or_else(|| {
                ParamError::new(p.path(key), format!("unknown interpolation `{name}`"))
                    .with_hint("monotone-cubic or linear")
            }),
        }
    }
}

/// A torque function `M(x)`: N m of rad (or of rad/s for damping).
#[derive(Clone, Debug, PartialEq)]
pub enum TorqueFunction {
    /// `M = Σ_k c_k x^k`, `k = 1..` (no constant term: `M(0) = 0`); `linear = k` is `[k]`.
    Polynomial(Vec<f64>),
    /// `M = a (exp(b x) − 1)`.
    Exponential {
        /// `a`, N m.
        a: f64,
        /// `b`, 1/rad.
        b: f64,
    },
    /// A table, interpolated.
    Table(Table),
}

/// An interpolated table `(x_i, M_i)` with its node slopes.
#[derive(Clone, Debug, PartialEq)]
pub struct Table {
    x: Vec<f64>,
    m: Vec<f64>,
    /// Node slopes: the Hermite slopes, or the end chords for linear interpolation.
    slopes: Vec<f64>,
    interpolation: Interpolation,
}

impl Table {
    /// A table through `(x[i], m[i])`: at least two points, `x` strictly increasing, all finite.
    pub fn new(x: Vec<f64>, m: Vec<f64>, interpolation: Interpolation) -> Result<Self, String> {
        let n = x.len();
        if n < 2 || m.len() != n {
            return Err(format!(
                "needs at least two points and one moment per abscissa ({n} abscissae, {} moments)",
                m.len()
            ));
        }
        if let Some(i) = (1..n).find(|&i| !(x[i] > x[i - 1])) {
            return Err(format!("the abscissae must increase strictly: {} follows {}", x[i], x[i - 1]));
        }
        if x.iter().chain(&m).any(|v| !v.is_finite()) {
            return Err("the table holds a non-finite number".into());
        }
        let slopes = match interpolation {
            Interpolation::MonotoneCubic => pchip_slopes(&x, &m),
            Interpolation::Linear => {
                let mut s = vec![0.0; n];
                s[0] = (m[1] - m[0]) / (x[1] - x[0]);
                s[n - 1] = (m[n - 1] - m[n - 2]) / (x[n - 1] - x[n - 2]);
                s
            }
        };
        Ok(Self { x, m, slopes, interpolation })
    }

    /// `M(x)` and `dM/dx` (on the right at a node of a linear table).
    pub fn eval(&self, v: f64) -> (f64, f64) {
        let (x, m, s) = (&self.x, &self.m, &self.slopes);
        let n = x.len();
        if v < x[0] {
            return (m[0] + s[0] * (v - x[0]), s[0]);
        }
        if v > x[n - 1] {
            return (m[n - 1] + s[n - 1] * (v - x[n - 1]), s[n - 1]);
        }
        let i = x.partition_point(|&a| a <= v).saturating_sub(1).min(n - 2);
        let h = x[i + 1] - x[i];
        match self.interpolation {
            Interpolation::Linear => {
                let d = (m[i + 1] - m[i]) / h;
                (m[i] + d * (v - x[i]), d)
            }
            Interpolation::MonotoneCubic => {
                // cubic Hermite basis in t ∈ [0, 1]
                let t = (v - x[i]) / h;
                let (t2, t3) = (t * t, t * t * t);
                let value = (2.0 * t3 - 3.0 * t2 + 1.0) * m[i]
                    + (t3 - 2.0 * t2 + t) * h * s[i]
                    + (3.0 * t2 - 2.0 * t3) * m[i + 1]
                    + (t3 - t2) * h * s[i + 1];
                let slope = 6.0 * (t2 - t) * (m[i] - m[i + 1]) / h
                    + (3.0 * t2 - 4.0 * t + 1.0) * s[i]
                    + (3.0 * t2 - 2.0 * t) * s[i + 1];
                (value, slope)
            }
        }
    }

    /// `d²M/dx²` (on the right at a node; 0 on a linear table and on the end tangents).
    pub fn curvature(&self, v: f64) -> f64 {
        let (x, m, s) = (&self.x, &self.m, &self.slopes);
        let n = x.len();
        if v < x[0] || v > x[n - 1] || self.interpolation == Interpolation::Linear {
            return 0.0;
        }
        let i = x.partition_point(|&a| a <= v).saturating_sub(1).min(n - 2);
        let h = x[i + 1] - x[i];
        let t = (v - x[i]) / h;
        // the cubic Hermite basis differentiated twice in t, over h²
        ((12.0 * t - 6.0) * (m[i] - m[i + 1]) + (6.0 * t - 4.0) * h * s[i] + (6.0 * t - 2.0) * h * s[i + 1]) / (h * h)
    }

    /// `M(x)` over any [`Real`]: its second-order Taylor polynomial about `x`'s value, so exact
    /// through second derivatives (`f64`, and dual numbers of order one or two), the value as
    /// [`Table::eval`]'s.
    pub fn apply<T: Real>(&self, x: T) -> T {
        let (v, s) = self.eval(x.re());
        taylor(x, v, s, self.curvature(x.re()))
    }

    /// `∫_{x_0}^{v} M dx` (N m rad), exact for the interpolant and its tangent continuations.
    pub fn primitive(&self, v: f64) -> f64 {
        let (x, m, s) = (&self.x, &self.m, &self.slopes);
        let n = x.len();
        let line = |x0: f64, m0: f64, s0: f64, v: f64| (v - x0) * (m0 + 0.5 * s0 * (v - x0));
        if v <= x[0] {
            return line(x[0], m[0], s[0], v);
        }
        let mut total = 0.0;
        for i in 0..n - 1 {
            let h = x[i + 1] - x[i];
            let t = ((v - x[i]) / h).min(1.0);
            total += match self.interpolation {
                Interpolation::Linear => {
                    let d = (m[i + 1] - m[i]) / h;
                    t * h * (m[i] + 0.5 * d * t * h)
                }
                // the cubic Hermite basis functions integrated from 0 to t
                Interpolation::MonotoneCubic => {
                    let (t2, t3, t4) = (t * t, t * t * t, t * t * t * t);
                    h * ((0.5 * t4 - t3 + t) * m[i]
                        + (0.25 * t4 - 2.0 * t3 / 3.0 + 0.5 * t2) * h * s[i]
                        + (t3 - 0.5 * t4) * m[i + 1]
                        + (0.25 * t4 - t3 / 3.0) * h * s[i + 1])
                }
            };
            if v <= x[i + 1] {
                return total;
            }
        }
        total + line(x[n - 1], m[n - 1], s[n - 1], v)
    }

    /// The abscissae (rad or rad/s).
    pub fn abscissae(&self) -> &[f64] {
        &self.x
    }

    /// The moments (N m).
    pub fn moments(&self) -> &[f64] {
        &self.m
    }

    /// The interpolation in use.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }
}

/// `v + s d + k d²/2` with `d = x − x.re()`: a function of value `v`, slope `s` and curvature
/// `k` at `x`'s value, lifted to dual numbers (`d` has no value part, so `f64` gives `v` exactly).
fn taylor<T: Real>(x: T, v: f64, s: f64, k: f64) -> T {
    let d = x - c::<T>(x.re());
    d * (d * (0.5 * k) + s) + v
}

/// `√(a² + b²)` over any [`Real`], its value `f64::hypot`'s (no overflow, and the same bits as
/// an `f64` evaluation that calls it); it must be positive for derivatives.
pub fn hypot<T: Real>(a: T, b: T) -> T {
    let r = (a * a + b * b).sqrt();
    r - c::<T>(r.re()) + a.re().hypot(b.re())
}

/// PCHIP node slopes: the weighted harmonic mean of the adjacent chords where they have one sign,
/// zero where the data turn or are flat; the shape-preserving three-point formula at the ends.
fn pchip_slopes(x: &[f64], y: &[f64]) -> Vec<f64> {
    let n = x.len();
    let h: Vec<f64> = x.windows(2).map(|w| w[1] - w[0]).collect();
    let d: Vec<f64> = (0..n - 1).map(|i| (y[i + 1] - y[i]) / h[i]).collect();
    if n == 2 {
        return vec![d[0]; 2];
    }
    let mut s = vec![0.0; n];
    for k in 1..n - 1 {
        if d[k - 1] * d[k] > 0.0 {
            let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
            s[k] = (w1 + w2) / (w1 / d[k - 1] + w2 / d[k]);
        }
    }
    let end = |h0: f64, h1: f64, d0: f64, d1: f64| {
        let m = ((2.0 * h0 + h1) * d0 - h0 * d1) / (h0 + h1);
        if m * d0 <= 0.0 {
            0.0
        } else if d0 * d1 <= 0.0 && m.abs() > 3.0 * d0.abs() {
            3.0 * d0
        } else {
            m
        }
    };
    s[0] = end(h[0], h[1], d[0], d[1]);
    s[n - 1] = end(h[n - 2], h[n - 3], d[n - 2], d[n - 3]);
    s
}

impl TorqueFunction {
    /// `M = k x`.
    pub fn linear(k: f64) -> Self {
        Self::Polynomial(vec![k])
    }

    /// `M(x)`, N m.
    pub fn value(&self, x: f64) -> f64 {
        self.eval(x).0
    }

    /// `M(x)` and `dM/dx`.
    pub fn eval(&self, x: f64) -> (f64, f64) {
        match self {
            Self::Polynomial(c) => {
                // Horner on M/x = Σ c_k x^(k−1)
                let (mut p, mut dp) = (0.0, 0.0);
                for &ck in c.iter().rev() {
                    dp = dp * x + p;
                    p = p * x + ck;
                }
                (p * x, p + dp * x)
            }
            Self::Exponential { a, b } => {
                let e = (b * x).exp();
                (a * (e - 1.0), a * b * e)
            }
            Self::Table(t) => t.eval(x),
        }
    }

    /// `d²M/dx²` (N m per rad², or per (rad/s)²; a table's on the right at a node).
    pub fn curvature(&self, x: f64) -> f64 {
        match self {
            Self::Polynomial(c) => {
                // M = p x with p = Σ c_k x^(k−1): M'' = 2 p' + p'' x
                let (mut p, mut dp, mut ddp) = (0.0, 0.0, 0.0);
                for &ck in c.iter().rev() {
                    ddp = ddp * x + 2.0 * dp;
                    dp = dp * x + p;
                    p = p * x + ck;
                }
                2.0 * dp + ddp * x
            }
            Self::Exponential { a, b } => a * b * b * (b * x).exp(),
            Self::Table(t) => t.curvature(x),
        }
    }

    /// `M(x)` over any [`Real`], exact through second derivatives ([`Table::apply`]).
    pub fn apply<T: Real>(&self, x: T) -> T {
        let (v, s) = self.eval(x.re());
        taylor(x, v, s, self.curvature(x.re()))
    }

    /// `∫_a^b M(x) dx` (N m rad, or N m rad/s for a damping function).
    pub fn integral(&self, a: f64, b: f64) -> f64 {
        match self {
            Self::Polynomial(c) => {
                let p =
                    |x: f64| c.iter().enumerate().rev().fold(0.0, |acc, (k, ck)| acc * x + ck / (k + 2) as f64) * x * x;
                p(b) - p(a)
            }
            Self::Exponential { a: k, b: r } => {
                let p = |x: f64| if *r == 0.0 { 0.0 } else { k * ((r * x).exp_m1() / r - x) };
                p(b) - p(a)
            }
            Self::Table(t) => t.primitive(b) - t.primitive(a),
        }
    }

    /// Whether `M` never decreases: checked exactly for tables and closed forms on `[lo, hi]`
    /// (polynomials sampled at 1000 points).
    pub fn is_non_decreasing_on(&self, lo: f64, hi: f64) -> bool {
        match self {
            Self::Exponential { a, b } => a * b >= 0.0,
            Self::Table(t) => t.m.windows(2).all(|w| w[1] >= w[0]) && t.slopes.iter().all(|s| *s >= 0.0),
            Self::Polynomial(_) => (0..=1000).all(|k| self.eval(lo + (hi - lo) * k as f64 / 1000.0).1 >= 0.0),
        }
    }

    /// Read the function in the table `key` of an element's parameters. `rate` selects a damping
    /// function (abscissae under `rates`, in the file's angle unit per second) over a torque-angle
    /// function (`angles`).
    pub fn read(p: &Params<'_>, key: &str, rate: bool) -> Result<Self, ParamError> {
        let t = p.table(key)?;
        let abscissa = if rate { "rates" } else { "angles" };
        let forms = ["linear", "polynomial", "exponential", abscissa];
        let given: Vec<&str> = forms.iter().copied().filter(|k| t.get(k).is_some()).collect();
        let hint = format!("give one of `linear`, `polynomial`, `exponential`, or `{abscissa}` with `moments`");
        let f = match given.as_slice() {
            ["linear"] => Self::linear(t.number("linear")?),
            ["polynomial"] => {
                let c = t.numbers("polynomial", None)?;
                if c.is_empty() {
                    return Err(ParamError::new(t.path("polynomial"), "needs at least one coefficient"));
                }
                Self::Polynomial(c)
            }
            ["exponential"] => {
                let v = t.numbers("exponential", Some(2))?;
                Self::Exponential { a: v[0], b: v[1] }
            }
            [k] if *k == abscissa => {
                let x: Vec<f64> = t.numbers(abscissa, None)?.iter().map(|v| v * p.units().angle).collect();
                let m = t.numbers("moments", None)?;
                let interpolation = Interpolation::read(&t, "interpolation")?;
                Self::Table(Table::new(x, m, interpolation).map_err(|e| ParamError::new(t.path(abscissa), e))?)
            }
            [] => return Err(ParamError::new(p.path(key), "no torque function given").with_hint(hint)),
            _ => {
                return Err(ParamError::new(p.path(key), format!("more than one form given: {}", given.join(", ")))
                    .with_hint(hint));
            }
        };
        if !matches!(f, Self::Table(_)) {
            if let Some(k) = ["moments", "interpolation"].into_iter().find(|k| t.get(k).is_some()) {
                return Err(ParamError::new(
                    t.path(k),
                    format!("belongs to a table (`{abscissa}` with `moments`), not to a closed form"),
                ));
            }
        }
        let known: &[&str] = if rate { &RATE_KEYS } else { &ANGLE_KEYS };
        t.finish(known)?;
        Ok(f)
    }
}

const ANGLE_KEYS: [&str; 6] = ["linear", "polynomial", "exponential", "angles", "moments", "interpolation"];
const RATE_KEYS: [&str; 6] = ["linear", "polynomial", "exponential", "rates", "moments", "interpolation"];

const INTERPOLATION_DOC: &str =
    "interpolation of the table: monotone-cubic (C1, default) or linear; tangent-line continuation outside";

/// The keys of a torque-angle function table, for the element types' documentation.
pub const ANGLE_FUNCTION: &[ParamDoc] = &[
    ParamDoc { name: "linear", kind: ParamKind::Number, required: false, doc: "M = k x: the stiffness k, N m/rad" },
    ParamDoc {
        name: "polynomial",
        kind: ParamKind::Numbers,
        required: false,
        doc: "M = Σ c_k x^k (k = 1, 2, …): the coefficients c_k, N m/rad^k (x in rad whatever the file's angle unit)",
    },
    ParamDoc {
        name: "exponential",
        kind: ParamKind::Numbers,
        required: false,
        doc: "M = a (exp(b x) − 1): [a, b], N m and 1/rad",
    },
    ParamDoc {
        name: "angles",
        kind: ParamKind::Numbers,
        required: false,
        doc: "a table: the angles x, strictly increasing, in the file's angle unit",
    },
    ParamDoc { name: "moments", kind: ParamKind::Numbers, required: false, doc: "a table: M at `angles`, N m" },
    ParamDoc {
        name: "interpolation",
        kind: ParamKind::Choice(&["monotone-cubic", "linear"]),
        required: false,
        doc: INTERPOLATION_DOC,
    },
];

/// The keys of a damping function table, for the element types' documentation.
pub const RATE_FUNCTION: &[ParamDoc] = &[
    ParamDoc { name: "linear", kind: ParamKind::Number, required: false, doc: "M = c ω: the damping c, N m s/rad" },
    ParamDoc {
        name: "polynomial",
        kind: ParamKind::Numbers,
        required: false,
        doc: "M = Σ c_k ω^k (k = 1, 2, …): the coefficients c_k, N m (s/rad)^k",
    },
    ParamDoc {
        name: "exponential",
        kind: ParamKind::Numbers,
        required: false,
        doc: "M = a (exp(b ω) − 1): [a, b], N m and s/rad",
    },
    ParamDoc {
        name: "rates",
        kind: ParamKind::Numbers,
        required: false,
        doc: "a table: the angular rates ω, strictly increasing, in the file's angle unit per second",
    },
    ParamDoc { name: "moments", kind: ParamKind::Numbers, required: false, doc: "a table: M at `rates`, N m" },
    ParamDoc {
        name: "interpolation",
        kind: ParamKind::Choice(&["monotone-cubic", "linear"]),
        required: false,
        doc: INTERPOLATION_DOC,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn cubic(x: &[f64], m: &[f64]) -> TorqueFunction {
        TorqueFunction::Table(Table::new(x.to_vec(), m.to_vec(), Interpolation::MonotoneCubic).unwrap())
    }

    #[test]
    fn closed_forms_and_their_slopes() {
        let p = TorqueFunction::Polynomial(vec![2.0, -1.0, 0.5]);
        let e = TorqueFunction::Exponential { a: 0.5, b: 3.0 };
        for k in 0..50 {
            let x = -2.0 + 0.08 * k as f64;
            assert!((p.value(x) - (2.0 * x - x * x + 0.5 * x * x * x)).abs() < 1e-13);
            assert!((e.value(x) - 0.5 * ((3.0 * x).exp() - 1.0)).abs() < 1e-12);
            for f in [&p, &e] {
                let h = 1e-6;
                let fd = (f.value(x + h) - f.value(x - h)) / (2.0 * h);
                assert!((f.eval(x).1 - fd).abs() < 1e-6 * (1.0 + fd.abs()));
            }
        }
        assert_eq!(TorqueFunction::linear(7.0).eval(0.3), (7.0 * 0.3, 7.0));
    }

    /// The curvature against central differences of the slope: the closed forms, and a monotone
    /// cubic table within its segments and on its end tangents.
    #[test]
    fn curvatures_are_the_slopes_derivatives() {
        let p = TorqueFunction::Polynomial(vec![2.0, -1.0, 0.5, 0.25]);
        let e = TorqueFunction::Exponential { a: 0.5, b: 3.0 };
        let t = cubic(&[-1.0, -0.4, 0.0, 0.3, 0.5, 1.2], &[-30.0, -2.0, 0.0, 1.0, 1.0, 25.0]);
        for k in 0..50 {
            // off the table's nodes, where the curvature jumps
            let x = -1.7 + 0.0613 * k as f64;
            for f in [&p, &e, &t] {
                let h = 1e-6;
                let fd = (f.eval(x + h).1 - f.eval(x - h).1) / (2.0 * h);
                assert!(
                    (f.curvature(x) - fd).abs() < 1e-6 * (1.0 + fd.abs()),
                    "{f:?} at {x}: {} vs {fd}",
                    f.curvature(x)
                );
            }
        }
    }

    #[test]
    fn tables_are_exact_at_nodes_c1_monotone_and_continued_by_their_end_tangents() {
        let (x, m) = ([-1.0, -0.4, 0.0, 0.3, 0.5, 1.2], [-30.0, -2.0, 0.0, 1.0, 1.0, 25.0]);
        let f = cubic(&x, &m);
        for i in 0..x.len() {
            assert!((f.value(x[i]) - m[i]).abs() < 1e-13);
            let h = 1e-9;
            let (l, r) = (f.eval(x[i] - h).1, f.eval(x[i] + h).1);
            assert!((l - r).abs() < 1e-4 * (1.0 + l.abs()), "node {i}: {l} {r}");
        }
        for k in 0..400 {
            let v = -1.5 + 0.008 * k as f64;
            let h = 1e-7;
            let fd = (f.value(v + h) - f.value(v - h)) / (2.0 * h);
            assert!((f.eval(v).1 - fd).abs() < 1e-5 * (1.0 + fd.abs()), "{v}");
            assert!(f.eval(v).1 >= -1e-12, "monotone data give a monotone curve at {v}");
        }
        // flat data stay flat, and outside: the tangent line at the end
        assert!((f.value(0.4) - 1.0).abs() < 1e-13);
        let (m1, s1) = f.eval(1.2);
        assert!((f.value(1.7) - (m1 + 0.5 * s1)).abs() < 1e-12);
        assert!(f.is_non_decreasing_on(-2.0, 2.0));
        // a linear table is the chords
        let l = TorqueFunction::Table(Table::new(x.to_vec(), m.to_vec(), Interpolation::Linear).unwrap());
        assert!((l.value(-0.7) - (-16.0)).abs() < 1e-12 && (l.value(-1.5) - (-30.0 - 0.5 * 28.0 / 0.6)).abs() < 1e-12);
    }

    #[test]
    fn integrals_match_the_trapezoidal_rule() {
        let (x, m) = ([-1.0, -0.4, 0.0, 0.3, 0.5, 1.2], [-30.0, -2.0, 0.0, 1.0, 1.0, 25.0]);
        let fs = [
            cubic(&x, &m),
            TorqueFunction::Table(Table::new(x.to_vec(), m.to_vec(), Interpolation::Linear).unwrap()),
            TorqueFunction::Polynomial(vec![2.0, -1.0, 0.5]),
            TorqueFunction::Exponential { a: 0.5, b: 3.0 },
        ];
        for f in &fs {
            for (a, b) in [(-1.7, 1.9), (-0.2, 0.45), (0.31, 0.29), (1.3, 2.0), (-3.0, -1.2)] {
                let n = 20000;
                let h = (b - a) / n as f64;
                let trap: f64 =
                    (0..=n).map(|k| f.value(a + h * k as f64) * if k == 0 || k == n { 0.5 } else { 1.0 }).sum::<f64>()
                        * h;
                let got = f.integral(a, b);
                assert!((got - trap).abs() < 1e-6 * (1.0 + trap.abs()), "{f:?} {a} {b}: {got} vs {trap}");
            }
        }
    }

    #[test]
    fn bad_tables_are_rejected() {
        let bad = |x: Vec<f64>, m: Vec<f64>| Table::new(x, m, Interpolation::Linear).is_err();
        assert!(bad(vec![0.0], vec![1.0]));
        assert!(bad(vec![0.0, 1.0], vec![1.0]));
        assert!(bad(vec![0.0, 0.0], vec![0.0, 1.0]));
        assert!(bad(vec![0.0, f64::NAN], vec![0.0, 1.0]));
        assert!(!TorqueFunction::Polynomial(vec![1.0, 0.0, -1.0]).is_non_decreasing_on(0.0, 1.0));
        assert!(TorqueFunction::value(&cubic(&[0.0, 1.0], &[0.0, 1.0]), f64::NAN).is_nan());
    }
}
