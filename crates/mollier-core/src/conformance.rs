//! The conformance harness every element passes (and a user's own element can be put through):
//!
//! 1. **zero at rest**: every deformation is zero in the reference configuration;
//! 2. **rigid-motion invariance**: deformations are unchanged by any rotation and translation of
//!    all nodes together, at the reference and at perturbed configurations;
//! 3. **first derivatives** agree with central differences of the deformations;
//! 4. **second derivatives** are symmetric and agree with central differences of the first;
//! 5. **fixed nodes**: with any one node held fixed ([`Evaluation::fixed`]), the deformations, the
//!    gradient and the Hessians' entries among the other coordinates are those of the whole
//!    evaluation, and the fixed node's rows and columns are that evaluation's or zero;
//! 6. **first order**: [`Element::evaluate_gradient`] gives the whole evaluation's deformations
//!    and gradients to round-off (1e-12 of each mode's largest entry), writing every entry;
//! 7. for an element that is also generic over the scalar ([`Deformations`]), its analytic
//!    derivatives agree with exact dual-number derivatives ([`check_generic`]);
//! 8. its third and fourth derivatives ([`Element::third_order`], [`Element::fourth_order`]),
//!    where it gives them, agree with central differences of the second and of the third
//!    ([`check_orders`]).
//!
//! Configurations are the reference perturbed at random (reproducibly, from a seed): positions
//! by `amplitude` times the element's size, orientations by rotations of up to `amplitude` rad.

use crate::autodiff;
use crate::element::{Deformations, Element, ElementState, Evaluation, Layout, NodeKind, Order, Quantity};
use crate::geometry::{Quat, quat_at, quat_from_axis_angle, quat_mul, rotate, vec3_at};

/// Settings of the harness.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Perturbed configurations to test (besides the reference).
    pub samples: usize,
    /// Size of the perturbations, relative to the element's size (positions) or in rad.
    pub amplitude: f64,
    /// Central-difference step, relative to the element's size for positions, absolute for
    /// Euler parameters.
    pub step: f64,
    /// Relative tolerance for first derivatives against central differences.
    pub gradient_rtol: f64,
    /// Relative tolerance for second derivatives against central differences.
    pub hessian_rtol: f64,
    /// Relative tolerance for invariance and rest values.
    pub value_rtol: f64,
    /// Seed of the perturbations.
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            samples: 8,
            amplitude: 0.2,
            step: 1e-5,
            gradient_rtol: 1e-6,
            hessian_rtol: 1e-5,
            value_rtol: 1e-10,
            seed: 0x5eed,
        }
    }
}

/// What the harness measured (largest errors, each relative to its tolerance scale).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Configurations checked, including the reference.
    pub configurations: usize,
    /// Largest `|e|` at rest, relative to the element's size for lengths.
    pub rest: f64,
    /// Largest change under rigid motion, relative.
    pub invariance: f64,
    /// Largest relative gradient error against central differences.
    pub gradient: f64,
    /// Largest relative Hessian error against central differences.
    pub hessian: f64,
    /// Largest relative error against dual numbers (only for [`check_generic`]).
    pub dual: Option<f64>,
    /// Largest difference of [`Element::evaluate_gradient`] from the whole evaluation's values
    /// and gradients, relative to each mode's largest entry.
    pub first_order: f64,
}

/// A failed check.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{element}: {check} failed at configuration {configuration}: {detail}")]
pub struct Failure {
    /// The element's type name.
    pub element: String,
    /// Which check.
    pub check: &'static str,
    /// 0 is the reference configuration.
    pub configuration: usize,
    /// What differed.
    pub detail: String,
}

/// A small reproducible random generator (SplitMix64).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }
    /// Uniform in `[0, 1)`.
    pub fn uniform(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `[-1, 1)`.
    pub fn symmetric(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }
    /// A random unit vector.
    pub fn unit_vector(&mut self) -> [f64; 3] {
        loop {
            let v = [self.symmetric(), self.symmetric(), self.symmetric()];
            let n = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
            if n > 0.1 && n <= 1.0 {
                return v.map(|a| a / n);
            }
        }
    }
    /// A random rotation of angle up to `max_angle` (rad).
    pub fn rotation(&mut self, max_angle: f64) -> Quat {
        let axis = self.unit_vector();
        quat_from_axis_angle(&axis, max_angle * self.symmetric())
    }
}

/// The size of an element: the largest distance between its position nodes (1 if none).
pub fn size(layout: &Layout, x: &[f64]) -> f64 {
    let pts: Vec<[f64; 3]> = layout
        .nodes()
        .iter()
        .enumerate()
        .filter(|(_, (_, k))| *k == NodeKind::Position)
        .map(|(i, _)| vec3_at(x, layout.offset(i)))
        .collect();
    let mut d: f64 = 0.0;
    for a in &pts {
        for b in &pts {
            d = d.max(((a[0] - b[0]).powi(2) + (a[1] - b[1]).powi(2) + (a[2] - b[2]).powi(2)).sqrt());
        }
    }
    if d > 0.0 { d } else { 1.0 }
}

/// Apply the rigid motion `p ↦ R(rot) p + t` to every node of a local coordinate vector.
pub fn rigid_motion(layout: &Layout, x: &[f64], rot: &Quat, t: &[f64; 3]) -> Vec<f64> {
    let mut y = x.to_vec();
    for (i, &(_, kind)) in layout.nodes().iter().enumerate() {
        let o = layout.offset(i);
        match kind {
            NodeKind::Position => {
                let p = rotate(rot, &vec3_at(x, o));
                for a in 0..3 {
                    y[o + a] = p[a] + t[a];
                }
            }
            NodeKind::Orientation => {
                let l = quat_mul(rot, &quat_at(x, o));
                y[o..o + 4].copy_from_slice(&l);
            }
        }
    }
    y
}

/// A random configuration near `x_ref`: positions moved by up to `amplitude · size`, orientations
/// turned by up to `amplitude` rad.
pub fn perturb(layout: &Layout, x_ref: &[f64], amplitude: f64, rng: &mut Rng) -> Vec<f64> {
    let l = size(layout, x_ref);
    let mut y = x_ref.to_vec();
    for (i, &(_, kind)) in layout.nodes().iter().enumerate() {
        let o = layout.offset(i);
        match kind {
            NodeKind::Position => {
                for a in 0..3 {
                    y[o + a] += amplitude * l * rng.symmetric();
                }
            }
            NodeKind::Orientation => {
                let l2 = quat_mul(&rng.rotation(amplitude), &quat_at(x_ref, o));
                y[o..o + 4].copy_from_slice(&l2);
            }
        }
    }
    y
}

/// Evaluate an element once into fresh buffers: `(e, de, d2e)` row-major.
pub fn evaluate(element: &dyn Element, x: &[f64], order: Order) -> Result<autodiff::Derivatives, String> {
    evaluate_fixed(element, x, order, 0)
}

/// [`evaluate`] with the local coordinates of the set bits of `fixed` held fixed
/// ([`Evaluation::with_fixed`]).
pub fn evaluate_fixed(
    element: &dyn Element,
    x: &[f64],
    order: Order,
    fixed: u64,
) -> Result<autodiff::Derivatives, String> {
    let m = element.layout().n_modes();
    let n = x.len();
    let mut e = vec![0.0; m];
    let mut de = vec![0.0; if order >= Order::Gradient { m * n } else { 0 }];
    let mut d2e = vec![0.0; if order >= Order::Hessian { m * n * n } else { 0 }];
    let mut state = ElementState::default();
    let mut out = Evaluation::new(order, n, &mut e, &mut de, &mut d2e, &mut state).with_fixed(fixed);
    element.evaluate(x, &mut out).map_err(|err| err.to_string())?;
    Ok((e, de, d2e))
}

fn steps(layout: &Layout, x: &[f64], rel: f64) -> Vec<f64> {
    let l = size(layout, x);
    let mut h = vec![rel; x.len()];
    for (i, &(_, kind)) in layout.nodes().iter().enumerate() {
        if kind == NodeKind::Position {
            for a in 0..3 {
                h[layout.offset(i) + a] = rel * l;
            }
        }
    }
    h
}

/// Central differences of the element's values and gradients: `(de, d2e)` (m x n, m x n x n).
pub fn central_differences(element: &dyn Element, x: &[f64], rel_step: f64) -> Result<(Vec<f64>, Vec<f64>), String> {
    let layout = element.layout();
    let (m, n) = (layout.n_modes(), x.len());
    let h = steps(layout, x, rel_step);
    let mut de = vec![0.0; m * n];
    let mut d2e = vec![0.0; m * n * n];
    for j in 0..n {
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[j] += h[j];
        xm[j] -= h[j];
        let (ep, gp, _) = evaluate(element, &xp, Order::Gradient)?;
        let (em, gm, _) = evaluate(element, &xm, Order::Gradient)?;
        for k in 0..m {
            de[k * n + j] = (ep[k] - em[k]) / (2.0 * h[j]);
            for i in 0..n {
                d2e[k * n * n + i * n + j] = (gp[k * n + i] - gm[k * n + i]) / (2.0 * h[j]);
            }
        }
    }
    Ok((de, d2e))
}

fn max_abs(v: &[f64]) -> f64 {
    v.iter().fold(0.0, |a, b| a.max(b.abs()))
}

/// Run checks 1-6 on an element that has been initialized at `x_ref`.
pub fn check_element(element: &dyn Element, x_ref: &[f64], opts: &Options) -> Result<Report, Failure> {
    let mut rng = Rng::new(opts.seed);
    let layout = element.layout();
    let mut configs = vec![x_ref.to_vec()];
    for _ in 0..opts.samples {
        configs.push(perturb(layout, x_ref, opts.amplitude, &mut rng));
    }
    check_element_at(element, x_ref, &configs[1..], opts)
}

/// Checks 1-6 at the reference and at the given configurations.
pub fn check_element_at(
    element: &dyn Element,
    x_ref: &[f64],
    samples: &[Vec<f64>],
    opts: &Options,
) -> Result<Report, Failure> {
    let layout = element.layout();
    let name = element.type_name().to_string();
    let (m, n) = (layout.n_modes(), layout.n_local());
    let fail = |check, configuration, detail: String| Failure { element: name.clone(), check, configuration, detail };
    if x_ref.len() != n {
        return Err(fail("layout", 0, format!("reference has {} coordinates, layout {n}", x_ref.len())));
    }
    let l = size(layout, x_ref);
    let mode_scale: Vec<f64> =
        layout.modes().iter().map(|md| if md.quantity == Quantity::Length { l } else { 1.0 }).collect();
    let mut report = Report { configurations: 1 + samples.len(), ..Report::default() };
    // 1. rest
    let (e0, _, _) = evaluate(element, x_ref, Order::Value).map_err(|d| fail("evaluation", 0, d))?;
    for k in 0..m {
        let r = e0[k].abs() / mode_scale[k];
        report.rest = report.rest.max(r);
        if r > opts.value_rtol {
            return Err(fail("zero at rest", 0, format!("mode `{}` = {:e}", layout.modes()[k].name, e0[k])));
        }
    }
    let mut rng = Rng::new(opts.seed ^ 0xABCD);
    let all = std::iter::once(x_ref).chain(samples.iter().map(|s| s.as_slice()));
    for (ci, x) in all.enumerate() {
        let (e, de, d2e) = evaluate(element, x, Order::Hessian).map_err(|d| fail("evaluation", ci, d))?;
        // 2. invariance
        for _ in 0..2 {
            let rot = rng.rotation(std::f64::consts::PI);
            let t = [rng.symmetric() * l, rng.symmetric() * l, rng.symmetric() * l];
            let y = rigid_motion(layout, x, &rot, &t);
            let (ey, _, _) = evaluate(element, &y, Order::Value).map_err(|d| fail("evaluation", ci, d))?;
            for k in 0..m {
                let r = (ey[k] - e[k]).abs() / (mode_scale[k] * (1.0 + (e[k] / mode_scale[k]).abs()));
                report.invariance = report.invariance.max(r);
                if r > opts.value_rtol * 10.0 {
                    return Err(fail(
                        "rigid-motion invariance",
                        ci,
                        format!("mode `{}`: {} before, {} after", layout.modes()[k].name, e[k], ey[k]),
                    ));
                }
            }
        }
        // 6. the first-order evaluation gives the whole evaluation's values and gradients
        let r = first_order(element, x, &e, &de).map_err(|d| fail("first-order evaluation", ci, d))?;
        report.first_order = report.first_order.max(r);
        // 5. fixed nodes (before 3-4, whose central differences report the larger errors)
        fixed_nodes(element, x, (&e, &de, &d2e)).map_err(|d| fail("fixed nodes", ci, d))?;
        // 3-4. derivatives
        let (fd1, fd2) = central_differences(element, x, opts.step).map_err(|d| fail("evaluation", ci, d))?;
        for k in 0..m {
            let g = &de[k * n..(k + 1) * n];
            let gf = &fd1[k * n..(k + 1) * n];
            let gs = max_abs(gf).max(max_abs(g)).max(mode_scale[k] / l * 1e-3);
            let err = g.iter().zip(gf).fold(0.0f64, |a, (p, q)| a.max((p - q).abs())) / gs;
            report.gradient = report.gradient.max(err);
            if err > opts.gradient_rtol {
                let j = (0..n).max_by(|&a, &b| (g[a] - gf[a]).abs().total_cmp(&(g[b] - gf[b]).abs())).unwrap_or(0);
                return Err(fail(
                    "first derivatives",
                    ci,
                    format!(
                        "mode `{}`, coordinate {j}: analytic {} vs central difference {}",
                        layout.modes()[k].name,
                        g[j],
                        gf[j]
                    ),
                ));
            }
            let h = &d2e[k * n * n..(k + 1) * n * n];
            let hf = &fd2[k * n * n..(k + 1) * n * n];
            for i in 0..n {
                for j in 0..i {
                    let s = (h[i * n + j] - h[j * n + i]).abs();
                    if s > 1e-12 * (1.0 + max_abs(h)) {
                        return Err(fail(
                            "symmetric Hessian",
                            ci,
                            format!("mode `{}` ({i},{j})", layout.modes()[k].name),
                        ));
                    }
                }
            }
            let hs = max_abs(hf).max(max_abs(h)).max(mode_scale[k] / (l * l) * 1e-3);
            let err = h.iter().zip(hf).fold(0.0f64, |a, (p, q)| a.max((p - q).abs())) / hs;
            report.hessian = report.hessian.max(err);
            if err > opts.hessian_rtol {
                let idx =
                    (0..n * n).max_by(|&a, &b| (h[a] - hf[a]).abs().total_cmp(&(h[b] - hf[b]).abs())).unwrap_or(0);
                return Err(fail(
                    "second derivatives",
                    ci,
                    format!(
                        "mode `{}`, entry ({}, {}): analytic {} vs central difference {}",
                        layout.modes()[k].name,
                        idx / n,
                        idx % n,
                        h[idx],
                        hf[idx]
                    ),
                ));
            }
        }
    }
    Ok(report)
}

/// Check 6 at `x`: [`Element::evaluate_gradient`] (its gradient storage filled with NaN first,
/// as every entry must be written) against the whole evaluation's `e` (m) and `de` (m x n);
/// the largest difference relative to each mode's largest value or gradient entry, refused
/// above 1e-12.
fn first_order(element: &dyn Element, x: &[f64], e: &[f64], de: &[f64]) -> Result<f64, String> {
    let (m, n) = (e.len(), x.len());
    let (mut e1, mut de1) = (vec![0.0; m], vec![f64::NAN; m * n]);
    element.evaluate_gradient(x, &mut e1, &mut de1, &mut ElementState::default()).map_err(|err| err.to_string())?;
    let mut worst = 0.0f64;
    for k in 0..m {
        let (g, g1) = (&de[k * n..(k + 1) * n], &de1[k * n..(k + 1) * n]);
        let scale = max_abs(g).max(e[k].abs()).max(f64::MIN_POSITIVE);
        let diff = g.iter().zip(g1).fold((e[k] - e1[k]).abs(), |a, (p, q)| a.max((p - q).abs()));
        // a NaN left in the gradient fails too
        let r = if diff.is_nan() { f64::INFINITY } else { diff / scale };
        if r > 1e-12 {
            return Err(format!("mode `{}`: {r:e} of its largest entry", element.layout().modes()[k].name));
        }
        worst = worst.max(r);
    }
    Ok(worst)
}

/// Check 5 at `x`, against the whole evaluation `whole` there: each node in turn held fixed.
/// Agreement to round-off (an element may form the kept entries in another order).
fn fixed_nodes(element: &dyn Element, x: &[f64], whole: (&[f64], &[f64], &[f64])) -> Result<(), String> {
    let layout = element.layout();
    let (m, n) = (layout.n_modes(), layout.n_local());
    // entry i of a (one mode's values) against b's, to round-off of b's largest
    let close = |a: &[f64], b: &[f64], i: usize| (a[i] - b[i]).abs() <= 1e-13 * (1.0 + max_abs(b));
    for (node, &(_, kind)) in layout.nodes().iter().enumerate() {
        let held = layout.offset(node)..layout.offset(node) + kind.dim();
        let mask = held.clone().filter(|&a| a < 64).fold(0u64, |m, a| m | 1 << a);
        let (e, de, d2e) = evaluate_fixed(element, x, Order::Hessian, mask)?;
        let differs = |what: &str, k: usize, i: usize| format!("node {node} held fixed: mode {k}'s {what}, entry {i}");
        if let Some(k) = (0..m).find(|&k| !close(&e, whole.0, k)) {
            return Err(differs("deformation", k, 0));
        }
        for k in 0..m {
            let (g, gw) = (&de[k * n..(k + 1) * n], &whole.1[k * n..(k + 1) * n]);
            if let Some(i) = (0..n).find(|&i| !close(g, gw, i)) {
                return Err(differs("gradient", k, i));
            }
            let (h, hw) = (&d2e[k * n * n..(k + 1) * n * n], &whole.2[k * n * n..(k + 1) * n * n]);
            let on_held = |i: usize| held.contains(&(i / n)) || held.contains(&(i % n));
            if let Some(i) = (0..n * n).find(|&i| !(close(h, hw, i) || on_held(i) && h[i] == 0.0)) {
                return Err(differs("Hessian", k, i));
            }
        }
    }
    Ok(())
}

/// Checks 1-6 for an element written both analytically and generically.
pub fn check_generic<E: Element + Deformations>(element: &E, x_ref: &[f64], opts: &Options) -> Result<Report, Failure> {
    let mut report = check_element(element, x_ref, opts)?;
    let layout = element.layout();
    let (m, n) = (layout.n_modes(), layout.n_local());
    let mut rng = Rng::new(opts.seed);
    let mut worst: f64 = 0.0;
    for ci in 0..=opts.samples {
        let x = if ci == 0 { x_ref.to_vec() } else { perturb(layout, x_ref, opts.amplitude, &mut rng) };
        let fail = |detail: String| Failure {
            element: element.type_name().into(),
            check: "dual numbers",
            configuration: ci,
            detail,
        };
        let (e, de, d2e) = evaluate(element, &x, Order::Hessian).map_err(fail)?;
        let (ea, dea, d2ea) = autodiff::derivatives(element, &x, Order::Hessian).map_err(|er| fail(er.to_string()))?;
        for k in 0..m {
            let cmp = |a: &[f64], b: &[f64]| {
                let s = max_abs(a).max(max_abs(b)).max(1e-300);
                a.iter().zip(b).fold(0.0f64, |acc, (p, q)| acc.max((p - q).abs())) / s
            };
            let ev = (e[k] - ea[k]).abs() / (1.0 + e[k].abs());
            let g = cmp(&de[k * n..(k + 1) * n], &dea[k * n..(k + 1) * n]);
            let h = cmp(&d2e[k * n * n..(k + 1) * n * n], &d2ea[k * n * n..(k + 1) * n * n]);
            let w = ev.max(g).max(h);
            worst = worst.max(w);
            if w > 1e-9 {
                return Err(fail(format!(
                    "mode `{}`: value {ev:e}, gradient {g:e}, Hessian {h:e} relative difference",
                    layout.modes()[k].name
                )));
            }
        }
    }
    report.dual = Some(worst);
    Ok(report)
}

/// The largest errors of an element's third and fourth derivatives (check 8,
/// [`check_orders`]), each relative to the largest of its order's values and references (and
/// to `1e-3` of the mode's scale); `None` where the element refuses that order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Orders {
    /// [`Element::third_order`] against central differences of the analytic Hessian.
    pub third: Option<f64>,
    /// [`Element::fourth_order`] against central differences of the third order.
    pub fourth: Option<f64>,
}

/// Check 8 at `x`: the third derivatives ([`Element::third_order`]) in `directions` random
/// directions `D³e[a, b, c]` against central differences along `c` of `aᵀ D²e b` from
/// [`Element::evaluate`], and the fourth ([`Element::fourth_order`]) `D⁴e[a, b, c, d]` against
/// central differences along `d` of the third. Directions are random with position components
/// scaled by the element's size; the differences are taken with steps `h` and `h/2` along them
/// and extrapolated (Richardson), so that they are off by `O(h⁴)`, for `h` = `opts.step`, a tenth
/// and a hundredth of it, and the smallest error is kept (round-off grows as `h` shrinks). A
/// failure names the order and the mode where the error passes `opts.hessian_rtol`.
pub fn check_orders(element: &dyn Element, x: &[f64], directions: usize, opts: &Options) -> Result<Orders, Failure> {
    let layout = element.layout();
    let fail = |check, detail: String| Failure { element: element.type_name().into(), check, configuration: 0, detail };
    // the differences' error is truncation (as step⁴) and round-off (as 1/step): the smallest of
    // three steps a decade apart
    let (mut best3, mut best4): (Worst, Worst) = (None, None);
    for step in [opts.step, 0.1 * opts.step, 0.01 * opts.step] {
        let (r3, r4) = orders_at(element, x, directions, &Options { step, ..*opts })?;
        let least = |b: Worst, r: Worst| match (b, r) {
            (Some(b), Some(r)) => Some(if r.0 < b.0 { r } else { b }),
            (b, r) => b.or(r),
        };
        (best3, best4) = (least(best3, r3), least(best4, r4));
    }
    for (best, what) in [(best3, "third derivatives"), (best4, "fourth derivatives")] {
        if let Some((r, k)) = best.filter(|(r, _)| !(*r <= opts.hessian_rtol)) {
            return Err(fail(
                what,
                format!("mode `{}`: {r:.3e} relative to central differences", layout.modes()[k].name),
            ));
        }
    }
    Ok(Orders { third: best3.map(|b| b.0), fourth: best4.map(|b| b.0) })
}

/// The largest relative error of one order and the mode where it is; `None`: the order is refused.
type Worst = Option<(f64, usize)>;

/// [`check_orders`] at one step: the largest relative errors of the third and fourth orders.
fn orders_at(element: &dyn Element, x: &[f64], directions: usize, opts: &Options) -> Result<(Worst, Worst), Failure> {
    use crate::element::Jet4;
    use num_dual::{Dual64, HyperHyperDual64};
    let layout = element.layout();
    let (m, n) = (layout.n_modes(), x.len());
    let name = element.type_name().to_string();
    let fail = |check, detail: String| Failure { element: name.clone(), check, configuration: 0, detail };
    let scales = steps(layout, x, 1.0);
    let mut rng = Rng::new(opts.seed ^ 0x0D3D);
    let mode_scale: Vec<f64> =
        layout.modes().iter().map(|md| if md.quantity == Quantity::Length { size(layout, x) } else { 1.0 }).collect();
    // D³e[a, b, c] over hyper-hyper-dual numbers at y, one per mode; None when refused
    let third = |y: &[f64], d: [&[f64]; 3]| -> Result<Option<Vec<f64>>, String> {
        let xs: Vec<HyperHyperDual64> =
            (0..n).map(|i| HyperHyperDual64::new(y[i], d[0][i], d[1][i], d[2][i], 0.0, 0.0, 0.0, 0.0)).collect();
        let mut e = vec![HyperHyperDual64::from(0.0); m];
        let ok = element.third_order(&xs, &mut e).map_err(|err| err.to_string())?;
        Ok(ok.then(|| e.iter().map(|v| v.eps1eps2eps3).collect()))
    };
    // per mode: the largest difference and the largest value or reference
    let (mut worst3, mut worst4) = (vec![(0.0f64, 0.0f64); m], vec![(0.0f64, 0.0f64); m]);
    let (mut has3, mut has4) = (true, true);
    for _ in 0..directions {
        let dirs: Vec<Vec<f64>> = (0..4).map(|_| scales.iter().map(|s| s * rng.symmetric()).collect()).collect();
        let h = opts.step;
        let at = |s: f64, d: &[f64]| -> Vec<f64> { x.iter().zip(d).map(|(v, w)| v + s * w).collect() };
        let Some(t3) = third(x, [&dirs[0], &dirs[1], &dirs[2]]).map_err(|d| fail("evaluation", d))? else {
            has3 = false;
            has4 = false;
            break;
        };
        let bilinear = |y: &[f64]| -> Result<Vec<f64>, String> {
            let (_, _, d2e) = evaluate(element, y, Order::Hessian)?;
            Ok((0..m)
                .map(|k| {
                    let hk = &d2e[k * n * n..(k + 1) * n * n];
                    (0..n).map(|i| dirs[0][i] * (0..n).map(|j| hk[i * n + j] * dirs[1][j]).sum::<f64>()).sum()
                })
                .collect())
        };
        // central differences at h and h/2, extrapolated (Richardson): error O(h⁴)
        let mut fd3 = vec![0.0; m];
        for (s, w) in [(h, -1.0 / 3.0), (0.5 * h, 4.0 / 3.0)] {
            let hp = bilinear(&at(s, &dirs[2])).map_err(|d| fail("evaluation", d))?;
            let hm = bilinear(&at(-s, &dirs[2])).map_err(|d| fail("evaluation", d))?;
            for k in 0..m {
                fd3[k] += w * (hp[k] - hm[k]) / (2.0 * s);
            }
        }
        for k in 0..m {
            let fd = fd3[k];
            let w = &mut worst3[k];
            *w = (w.0.max((t3[k] - fd).abs()), w.1.max(t3[k].abs()).max(fd.abs()));
        }
        let xs: Vec<Jet4> = (0..n)
            .map(|i| {
                let p = |v: f64, eps: f64| Dual64::new(v, eps);
                let z = p(0.0, 0.0);
                num_dual::HyperHyperDual::new(
                    p(x[i], dirs[3][i]),
                    p(dirs[0][i], 0.0),
                    p(dirs[1][i], 0.0),
                    p(dirs[2][i], 0.0),
                    z,
                    z,
                    z,
                    z,
                )
            })
            .collect();
        let mut e4 = vec![Jet4::from(0.0); m];
        if !has4 || !element.fourth_order(&xs, &mut e4).map_err(|err| fail("evaluation", err.to_string()))? {
            has4 = false;
            continue;
        }
        let mut fd4 = vec![0.0; m];
        for (s, w) in [(h, -1.0 / 3.0), (0.5 * h, 4.0 / 3.0)] {
            let abc = [dirs[0].as_slice(), &dirs[1], &dirs[2]];
            let tp = third(&at(s, &dirs[3]), abc).map_err(|d| fail("evaluation", d))?;
            let tm = third(&at(-s, &dirs[3]), abc).map_err(|d| fail("evaluation", d))?;
            let (Some(tp), Some(tm)) = (tp, tm) else { return Err(fail("third order", "refused nearby".into())) };
            for k in 0..m {
                fd4[k] += w * (tp[k] - tm[k]) / (2.0 * s);
            }
        }
        for k in 0..m {
            let (v, fd) = (e4[k].eps1eps2eps3.eps, fd4[k]);
            let w = &mut worst4[k];
            *w = (w.0.max((v - fd).abs()), w.1.max(v.abs()).max(fd.abs()));
        }
    }
    let relative = |w: &[(f64, f64)]| -> (f64, usize) {
        (0..m)
            .map(|k| (w[k].0 / w[k].1.max(1e-3 * mode_scale[k]), k))
            .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a })
    };
    Ok((has3.then(|| relative(&worst3)), has4.then(|| relative(&worst4))))
}

/// Checks 3-4 for the chain rule of attached nodes ([`crate::ModelBuilder::attach`]): at the
/// configuration `x` (n_x; attached coordinates are recomputed from their frames), the gradient
/// and Hessian the kernel assembles for every element on an attached node, by the independent
/// coordinates it depends on, against central differences of its deformations with the attached
/// nodes carried along. Steps: `opts.step` times the model's length scale for positions, and
/// `opts.step` for Euler parameters. Returns the largest errors (`configurations` counts the
/// elements checked).
pub fn check_attached(model: &crate::Model, x: &[f64], opts: &Options) -> Result<Report, Failure> {
    use crate::algorithm::evaluate::evaluate as evaluate_model;
    let fail = |el: &str, check, detail: String| Failure { element: el.to_string(), check, configuration: 0, detail };
    let mut data = crate::Data::new(model);
    data.set_x(x);
    evaluate_model(model, &mut data, Order::Hessian).map_err(|e| fail("model", "evaluation", e.to_string()))?;
    let mut probe = crate::Data::new(model);
    let mut report = Report::default();
    let l = model.length_scale();
    for entry in model.elements.iter().filter(|e| e.chain.is_some()) {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        let g = &data.de[entry.de_offset..entry.de_offset + m * n];
        let h = &data.d2e[entry.d2e_offset..entry.d2e_offset + m * n * n];
        let mut fd1 = vec![0.0; m * n];
        let mut fd2 = vec![0.0; m * n * n];
        for (j, &c) in entry.coords.iter().enumerate() {
            let is_position =
                model.nodes[model.coord_owner(crate::CoordId::new(c)).0.index()].kind == NodeKind::Position;
            let step = if is_position { opts.step * l } else { opts.step };
            let mut at = |s: f64| -> Result<(Vec<f64>, Vec<f64>), Failure> {
                let mut y = x.to_vec();
                y[c] += s;
                probe.set_x(&y);
                evaluate_model(model, &mut probe, Order::Gradient)
                    .map_err(|e| fail(&entry.name, "evaluation", e.to_string()))?;
                Ok((
                    probe.e[entry.mode_offset..entry.mode_offset + m].to_vec(),
                    probe.de[entry.de_offset..entry.de_offset + m * n].to_vec(),
                ))
            };
            let (ep, gp) = at(step)?;
            let (em, gm) = at(-step)?;
            for k in 0..m {
                fd1[k * n + j] = (ep[k] - em[k]) / (2.0 * step);
                for i in 0..n {
                    fd2[k * n * n + i * n + j] = (gp[k * n + i] - gm[k * n + i]) / (2.0 * step);
                }
            }
        }
        for k in 0..m {
            let scale = if entry.element.layout().modes()[k].quantity == Quantity::Length { l } else { 1.0 };
            let (gk, fk) = (&g[k * n..(k + 1) * n], &fd1[k * n..(k + 1) * n]);
            let gs = max_abs(fk).max(max_abs(gk)).max(scale / l * 1e-3);
            let err = gk.iter().zip(fk).fold(0.0f64, |a, (p, q)| a.max((p - q).abs())) / gs;
            report.gradient = report.gradient.max(err);
            let mode = &entry.element.layout().modes()[k].name;
            if err > opts.gradient_rtol {
                return Err(fail(
                    &entry.name,
                    "first derivatives through attached nodes",
                    format!("mode `{mode}`: {err:e}"),
                ));
            }
            let (hk, fk) = (&h[k * n * n..(k + 1) * n * n], &fd2[k * n * n..(k + 1) * n * n]);
            let hs = max_abs(fk).max(max_abs(hk)).max(scale / (l * l) * 1e-3);
            // the rows and columns of fixed coordinates are not read (the element may leave them)
            let fixed = |i: usize| model.coord_role[entry.coords[i]] == crate::model::CoordRole::Fixed;
            let read = (0..n * n).filter(|&i| !fixed(i / n) && !fixed(i % n));
            let err = read.fold(0.0f64, |a, i| a.max((hk[i] - fk[i]).abs())) / hs;
            report.hessian = report.hessian.max(err);
            if err > opts.hessian_rtol {
                return Err(fail(
                    &entry.name,
                    "second derivatives through attached nodes",
                    format!("mode `{mode}`: {err:e}"),
                ));
            }
        }
        report.configurations += 1;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    //! Negative controls: elements with one planted fault each, which the harness must reject
    //! at the check that the fault breaks (and the same element without the fault passes).

    use super::*;
    use crate::element::{ElementError, ElementInfo, ModeInfo};
    use crate::ids::NodeId;

    /// What is wrong with a [`Distance`] element.
    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Fault {
        None,
        /// The gradient's entry for `b.y` has the wrong sign.
        GradientSign,
        /// The Hessian's `(b.x, b.x)` entry is off by this much (1/m).
        HessianEntry(f64),
        /// The mode is `b.x − a.x` minus its rest value: correct derivatives, but it changes
        /// when the element turns.
        NotInvariant,
    }

    /// The distance between two points minus its rest value (m), written out here with its
    /// derivatives: gradient `(−u, u)`, Hessian `±(I − u uᵀ)/L` with `u` the unit vector a→b.
    #[derive(Debug)]
    struct Distance {
        layout: Layout,
        rest: f64,
        fault: Fault,
    }

    impl Distance {
        fn new(fault: Fault, x0: &[f64]) -> Self {
            let layout = Layout::new(
                vec![(NodeId::new(0), NodeKind::Position), (NodeId::new(1), NodeKind::Position)],
                vec![ModeInfo::length("elongation")],
            );
            let mut d = Self { layout, rest: 0.0, fault };
            d.initialize(x0).unwrap();
            d
        }
        fn measure(&self, x: &[f64]) -> f64 {
            let d = [x[3] - x[0], x[4] - x[1], x[5] - x[2]];
            match self.fault {
                Fault::NotInvariant => d[0],
                _ => (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt(),
            }
        }
    }

    impl ElementInfo for Distance {
        fn type_name(&self) -> &str {
            "distance"
        }
        fn layout(&self) -> &Layout {
            &self.layout
        }
        fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
            self.rest = self.measure(x0);
            Ok(())
        }
    }

    impl Element for Distance {
        fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
            out.e[0] = self.measure(x) - self.rest;
            let d = [x[3] - x[0], x[4] - x[1], x[5] - x[2]];
            let l = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let (u, curvature) = match self.fault {
                Fault::NotInvariant => ([1.0, 0.0, 0.0], [0.0; 9]),
                _ => {
                    let u = d.map(|v| v / l);
                    let p: [f64; 9] =
                        std::array::from_fn(|k| (f64::from(u8::from(k / 3 == k % 3)) - u[k / 3] * u[k % 3]) / l);
                    (u, p)
                }
            };
            let mut dv = out.mode(0);
            dv.add_grad(0, &u, -1.0);
            dv.add_grad(3, &u, 1.0);
            if self.fault == Fault::GradientSign && dv.has_grad() {
                dv.grad[4] = -dv.grad[4];
            }
            dv.add_hess_diag(0, 3, &curvature, 1.0);
            dv.add_hess_diag(3, 3, &curvature, 1.0);
            dv.add_hess_cross(0, 3, 3, 3, &curvature, -1.0);
            if let (Fault::HessianEntry(error), true) = (self.fault, dv.has_hess()) {
                dv.hess[3 * 6 + 3] += error;
            }
            Ok(())
        }
    }

    /// A generic reference configuration, about 1 m long, where no gradient entry is zero.
    const X0: [f64; 6] = [0.1, -0.2, 0.05, 0.7, 0.55, 0.4];

    fn check(fault: Fault) -> Result<Report, Failure> {
        check_element(&Distance::new(fault, &X0), &X0, &Options::default())
    }

    #[test]
    fn the_faultless_control_passes() {
        let r = check(Fault::None).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(r.configurations, 1 + Options::default().samples);
        assert!(r.rest == 0.0 && r.invariance < 1e-12 && r.gradient < 1e-8 && r.hessian < 1e-6, "{r:?}");
    }

    #[test]
    fn a_wrong_sign_in_one_derivative_is_rejected() {
        let f = check(Fault::GradientSign).unwrap_err();
        assert_eq!((f.check, f.configuration), ("first derivatives", 0), "{f}");
        assert!(f.detail.contains("mode `elongation`, coordinate 4"), "{f}");
    }

    #[test]
    fn an_error_of_1e_4_in_one_hessian_entry_is_rejected() {
        let f = check(Fault::HessianEntry(1e-4)).unwrap_err();
        assert_eq!((f.check, f.configuration), ("second derivatives", 0), "{f}");
        assert!(f.detail.contains("entry (3, 3)"), "{f}");
        // a diagonal entry keeps the Hessian symmetric: central differences catch it; an error
        // below the tolerance passes, so the test above fails because of the planted error
        let r = check(Fault::HessianEntry(1e-7)).unwrap_or_else(|f| panic!("{f}"));
        assert!(r.hessian > 1e-8 && r.hessian < Options::default().hessian_rtol, "{r:?}");
    }

    /// `λ_a · λ_b` (the Euler parameters' dot product, the cosine of half the relative
    /// rotation) minus its rest value: invariant, since a common rotation is an orthogonal map of
    /// both; gradient `(λ_b, λ_a)`, Hessian `I` in the cross blocks. With `wrong_sign`, the
    /// derivative with respect to `λ_b`'s third parameter has the wrong sign.
    #[derive(Debug)]
    struct Alignment {
        layout: Layout,
        rest: f64,
        wrong_sign: bool,
    }

    impl ElementInfo for Alignment {
        fn type_name(&self) -> &str {
            "alignment"
        }
        fn layout(&self) -> &Layout {
            &self.layout
        }
        fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
            self.rest = (0..4).map(|i| x0[i] * x0[4 + i]).sum();
            Ok(())
        }
    }

    impl Element for Alignment {
        fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
            out.e[0] = (0..4).map(|i| x[i] * x[4 + i]).sum::<f64>() - self.rest;
            let mut dv = out.mode(0);
            dv.add_grad(0, &x[4..8], 1.0);
            dv.add_grad(4, &x[0..4], 1.0);
            if self.wrong_sign && dv.has_grad() {
                dv.grad[7] = -dv.grad[7];
            }
            let identity: [f64; 16] = std::array::from_fn(|k| f64::from(u8::from(k / 4 == k % 4)));
            dv.add_hess_cross(0, 4, 4, 4, &identity, 1.0);
            Ok(())
        }
    }

    #[test]
    fn a_wrong_sign_in_an_euler_parameter_derivative_is_rejected() {
        let x0: Vec<f64> = quat_from_axis_angle(&[0.3, -0.5, 0.8], 0.4)
            .into_iter()
            .chain(quat_from_axis_angle(&[-0.6, 0.2, 0.7], 1.1))
            .collect();
        let check = |wrong_sign| {
            let layout = Layout::new(
                vec![(NodeId::new(0), NodeKind::Orientation), (NodeId::new(1), NodeKind::Orientation)],
                vec![ModeInfo::dimensionless("alignment")],
            );
            let mut el = Alignment { layout, rest: 0.0, wrong_sign };
            el.initialize(&x0).unwrap();
            check_element(&el, &x0, &Options::default())
        };
        let r = check(false).unwrap_or_else(|f| panic!("{f}"));
        assert!(r.invariance < 1e-12 && r.gradient < 1e-8 && r.hessian < 1e-6, "{r:?}");
        let f = check(true).unwrap_err();
        assert_eq!((f.check, f.configuration), ("first derivatives", 0), "{f}");
        assert!(f.detail.contains("mode `alignment`, coordinate 7"), "{f}");
    }

    #[test]
    fn an_element_that_is_not_invariant_under_rigid_motion_is_rejected() {
        let f = check(Fault::NotInvariant).unwrap_err();
        assert_eq!((f.check, f.configuration), ("rigid-motion invariance", 0), "{f}");
        // its derivatives are right: the harness rejects it for the invariance alone
        let x = perturb(&Distance::new(Fault::NotInvariant, &X0).layout, &X0, 0.2, &mut Rng::new(3));
        let el = Distance::new(Fault::NotInvariant, &X0);
        let (_, de, d2e) = evaluate(&el, &x, Order::Hessian).unwrap();
        let (fd1, fd2) = central_differences(&el, &x, 1e-5).unwrap();
        assert!(de.iter().zip(&fd1).all(|(a, b)| (a - b).abs() < 1e-9));
        assert!(d2e.iter().zip(&fd2).all(|(a, b)| (a - b).abs() < 1e-9));
    }
}
