//! The predictor of Newton-Raphson (van der Helm 1994, eq. 1): from the solved configuration in `data`,
//! `x` at the next inputs to first, second, third or fourth order ([`Predictor`];
//! docs/theory/kernel.md). Only a starting point: every solution is accepted by its residual.

use crate::algorithm::error::KinematicsError;
use crate::data::Data;
use crate::model::Model;

/// Predict `x` at `q` from the solved configuration in `data` (van der Helm 1994, eq. 1).
pub(crate) fn predict(model: &Model, data: &mut Data, q: &[f64], kind: Predictor) -> Result<(), KinematicsError> {
    if kind == Predictor::None || !data.solved {
        return Ok(());
    }
    let mut dq = std::mem::take(&mut data.work.dq);
    for ((d, a), b) in dq.iter_mut().zip(q).zip(&data.q) {
        *d = a - b;
    }
    let result = if dq.iter().all(|v| *v == 0.0) { Ok(()) } else { predict_step(model, data, &dq, kind) };
    data.work.dq = dq;
    result
}

/// Add the predicted step for `dq` (n_q) to the dependent coordinates.
fn predict_step(model: &Model, data: &mut Data, dq: &[f64], kind: Predictor) -> Result<(), KinematicsError> {
    let mut step = std::mem::take(&mut data.work.x_step);
    let mut second = std::mem::take(&mut data.work.x_second);
    let zeros = std::mem::take(&mut data.work.zeros_q);
    let mut h = std::mem::take(&mut data.work.history);
    let fit = if matches!(kind, Predictor::ThirdOrder | Predictor::FourthOrder) {
        path_through(&mut h, data, dq)
    } else {
        None
    };
    // on the step's line, the solution before that too (the fourth-order term)
    let earlier = match fit {
        Some((sigma, true)) if kind == Predictor::FourthOrder => earlier_on_line(&h, data, dq, sigma),
        _ => None,
    };
    // along the path q(τ) = q + τ Δq + τ(τ − 1) w: y' = DF (Δq − w), y'' = D²F[y', y'] + DF 2w
    // (w = 0 without a fit: DF Δq and D²F[Δq, Δq])
    let (rate, bend) = if fit.is_some() { (&h.rate[..], &h.bend[..]) } else { (dq, &zeros[..]) };
    // the attached coordinates are placed from their frames: not predicted
    let mut result = crate::algorithm::transfer::directional_with(model, data, rate, None, &mut step, false);
    if result.is_ok() && matches!(kind, Predictor::SecondOrder | Predictor::ThirdOrder | Predictor::FourthOrder) {
        result = crate::algorithm::transfer::directional_with(model, data, bend, Some(&step), &mut second, false);
        if let (true, Some((sigma, _))) = (result.is_ok(), fit) {
            add_higher_orders(model, data, &h, (sigma, earlier), &mut step, &second);
        }
        for (s, t) in step.iter_mut().zip(&second) {
            *s += 0.5 * t;
        }
    }
    if result.is_ok() {
        for &c in &model.dependent_coords {
            data.x[c] += step[c];
        }
    }
    data.work.history = h;
    data.work.x_step = step;
    data.work.x_second = second;
    data.work.zeros_q = zeros;
    result
}

/// The solution before the last one is taken to lie on the step's line if it is off it by at
/// most this, relative to its distance (inputs interpolated in floating point are off it by
/// round-off, ~1e-14).
const ON_LINE: f64 = 1e-9;

/// The path of the inputs through the solution before the last one (`q_p`), the last (`q`, in
/// `data`) and the target `q + Δq` (`dq`, n_q): `q(τ) = q + τ Δq + τ(τ − 1) w` with `q(σ) = q_p`.
/// `Some((σ, w = 0))`, with the path's rates at `τ = 0`, `Δq − w`, in `h.rate` and `2w` (its
/// second derivative) in `h.bend`; `w = 0` when `q_p` lies on the step's line (either side).
/// `None` when there is no such solution, when `q_p` is too far along the line (`|σ|` outside
/// ½…2: the fit's error grows as `σ`) or, off the line, not behind or too far from it.
fn path_through(h: &mut crate::data::History, data: &Data, dq: &[f64]) -> Option<(f64, bool)> {
    let (q_p, _) = h.before(&data.q, &data.x)?;
    let (sigma, dd, pp) = along(q_p, &data.q, dq, 2.0)?;
    let off = off_line(q_p, &data.q, dq, sigma);
    let scale = sigma * (sigma - 1.0);
    let inv = if off <= ON_LINE * ON_LINE * pp {
        0.0
    } else if sigma < 0.0 && off <= 0.25 * dd * scale * scale {
        // a bent path through a solution behind (a motion going on along a curve); ahead,
        // σ(σ − 1) vanishes at σ = 1 and the bend would be large
        1.0 / scale
    } else {
        return None;
    };
    let (q_p, q) = (&h.previous_q, &data.q);
    for ((((r, b), a), c), d) in h.rate.iter_mut().zip(h.bend.iter_mut()).zip(q_p).zip(q).zip(dq) {
        let w = (a - c - sigma * d) * inv;
        *r = d - w;
        *b = 2.0 * w;
    }
    Some((sigma, inv == 0.0))
}

/// `σ` of `q_o`'s projection on the step's line, `q_o ≈ q + σ Δq`, with `|Δq|²` and
/// `|q_o − q|²`, if `|σ|` is within ½…`max`.
fn along(q_o: &[f64], q: &[f64], dq: &[f64], max: f64) -> Option<(f64, f64, f64)> {
    let (mut dd, mut pd, mut pp) = (0.0, 0.0, 0.0);
    for ((d, a), b) in dq.iter().zip(q_o).zip(q) {
        let p = a - b;
        dd += d * d;
        pd += p * d;
        pp += p * p;
    }
    let sigma = pd / dd;
    (0.5..=max).contains(&sigma.abs()).then_some((sigma, dd, pp))
}

/// `q_o`'s squared distance from the point `σ` along the step's line, summed square by square
/// (no cancellation).
fn off_line(q_o: &[f64], q: &[f64], dq: &[f64], sigma: f64) -> f64 {
    dq.iter().zip(q_o).zip(q).map(|((d, a), b)| (a - b - sigma * d).powi(2)).sum()
}

/// With the solution before the last on the step's line at `σ₁` ([`path_through`]), the one
/// before that, if it lies on the line too at `σ₂` (`|σ₂|` within ½…3: two steps of a motion
/// that slows down), apart from `σ₁` by ½ at least: `Some(σ₂)`.
fn earlier_on_line(h: &crate::data::History, data: &Data, dq: &[f64], sigma1: f64) -> Option<f64> {
    let (q_e, _) = h.earlier()?;
    let (sigma, _, ee) = along(q_e, &data.q, dq, 3.0)?;
    (off_line(q_e, &data.q, dq, sigma) <= ON_LINE * ON_LINE * ee && (sigma - sigma1).abs() >= 0.5).then_some(sigma)
}

/// Add to `step` (n_x, `y'`) the higher-order terms of the motion along the path of
/// [`path_through`], `y(τ) = x(q(τ))`, where `data` holds the solution at `τ = 0` and `second`
/// (n_x) is `y''`. The solution `x_p` at `τ = σ₁` gives the third derivative through
/// `x_p = x + σ₁ y' + ½ σ₁² y'' + ⅙ σ₁³ y''' + O(σ₁⁴)`, so that the term at `τ = 1` is
/// `⅙ y''' = t₁ = (x_p − x − σ₁ y' − ½ σ₁² y'') / σ₁³`. With the solution before that, `x_e` at
/// `τ = σ₂` on the same line ([`earlier_on_line`]), the third and fourth together: `t₂` likewise
/// from `x_e`, `t_i = a₃ + σ_i a₄` (`a₃ = ⅙ y'''`, `a₄ = y''''/24`), so that
/// `a₄ = (t₂ − t₁) / (σ₂ − σ₁)` and the term is `a₃ + a₄ = t₁ + (1 − σ₁) a₄`
/// (docs/theory/kernel.md). A term is added only while the series converges: the fourth-order
/// one when its largest entry is below the third's and the whole below the second-order
/// term's; else the third-order term alone, if below the second-order one; else nothing (a
/// branch switch or a wrapped coordinate between the solutions).
fn add_higher_orders(
    model: &Model,
    data: &Data,
    h: &crate::data::History,
    (sigma1, sigma2): (f64, Option<f64>),
    step: &mut [f64],
    second: &[f64],
) {
    let p = Through::new(&h.previous_x, sigma1);
    let quadratic = model.dependent_coords.iter().fold(0.0f64, |m, &c| m.max((0.5 * second[c]).abs()));
    if let (Some(sigma2), Some((_, x_e))) = (sigma2, h.earlier()) {
        let (e, apart) = (Through::new(x_e, sigma2), 1.0 / (sigma2 - sigma1));
        let (mut a3, mut a4, mut whole) = (0.0f64, 0.0f64, 0.0f64);
        for &c in &model.dependent_coords {
            let t1 = p.t(&data.x, step, second, c);
            let f = (e.t(&data.x, step, second, c) - t1) * apart;
            a3 = a3.max((t1 - sigma1 * f).abs());
            a4 = a4.max(f.abs());
            whole = whole.max((t1 + (1.0 - sigma1) * f).abs());
        }
        if a4 < a3 && whole < quadratic {
            for &c in &model.dependent_coords {
                let t1 = p.t(&data.x, step, second, c);
                let f = (e.t(&data.x, step, second, c) - t1) * apart;
                step[c] += t1 + (1.0 - sigma1) * f;
            }
            return;
        }
    }
    let third = model.dependent_coords.iter().fold(0.0f64, |m, &c| m.max(p.t(&data.x, step, second, c).abs()));
    if third < quadratic {
        for &c in &model.dependent_coords {
            step[c] += p.t(&data.x, step, second, c);
        }
    }
}

/// A solution `x_o` at `τ = σ` along the path of [`add_higher_orders`], with `σ`, `½ σ²` and
/// `1/σ³`.
struct Through<'a> {
    x_o: &'a [f64],
    a: f64,
    b: f64,
    inv: f64,
}

impl<'a> Through<'a> {
    fn new(x_o: &'a [f64], sigma: f64) -> Self {
        Self { x_o, a: sigma, b: 0.5 * sigma * sigma, inv: 1.0 / (sigma * sigma * sigma) }
    }

    /// `t = (x_o − x − σ y' − ½ σ² y'') / σ³` at coordinate `c`.
    #[inline(always)]
    fn t(&self, x: &[f64], step: &[f64], second: &[f64], c: usize) -> f64 {
        (self.x_o[c] - x[c] - self.a * step[c] - self.b * second[c]) * self.inv
    }
}

/// How the dependent coordinates are predicted from the previous solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predictor {
    /// Start Newton-Raphson from the previous solution.
    None,
    /// `x + DF Δq`.
    FirstOrder,
    /// `x + DF Δq + ½ (D²F Δq) Δq` (van der Helm 1994, eq. 1).
    SecondOrder,
    /// [`Predictor::SecondOrder`] plus the third-order term along the step's line, fitted through
    /// the solution before the last one when that lies on the line (a motion that goes on
    /// along, or back over, its last step); otherwise the second-order prediction.
    ThirdOrder,
    /// [`Predictor::ThirdOrder`] with the fourth-order term too where the two solutions before
    /// the last one lie on the step's line (a motion of one input, or of several in
    /// proportion); otherwise the third-order prediction.
    FourthOrder,
}
