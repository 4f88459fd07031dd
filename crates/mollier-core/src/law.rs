//! Constitutive laws: the stresses of an element's free modes from their deformations and rates
//! (van der Helm 1994, eq. 16, `σ^c = C e^c + K ė^c`, or any user-supplied nonlinear law).
//!
//! Sign convention: `σ_k` is the generalized stress conjugate to mode `k`, so the internal power
//! is `Σ σ_k ė_k`; a spring has `σ = k e` (tension positive for an elongation, N; a moment for an
//! angle, N m). A law is attached to an element with [`crate::ModelBuilder::set_law`], or carried
//! by the element itself ([`crate::Element::law`]).

use std::fmt;

use num_dual::{Dual2SVec64, DualSVec64};

/// Stresses of an element's modes from their deformations and rates.
pub trait Law: Send + Sync + fmt::Debug {
    /// Stresses `σ` (one per mode of the element) for deformations `e` and rates `ė` (one per
    /// mode each). Modes that the model fixes are ignored (their stress is a reaction).
    fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]);

    /// The stored energy (J) at deformations `e`, for laws that are conservative apart from their
    /// damping; `None` otherwise. Used to check energy conservation.
    fn energy(&self, e: &[f64]) -> Option<f64> {
        let _ = e;
        None
    }

    /// Called once when the model is built, with the reference value of each of the element's
    /// modes ([`crate::ElementInfo::mode_reference`]: a truss's initial length), for laws whose
    /// parameters are absolute measures (a slack length). An error names what is missing.
    fn bind(&mut self, references: &[Option<f64>]) -> Result<(), String> {
        let _ = references;
        Ok(())
    }

    /// The second partials of a law whose modes are uncoupled (`σ_k` depends on `e_k`, `ė_k`
    /// only): `out[3k..3k + 3] = (∂²σ_k/∂e_k², ∂²σ_k/∂e_k∂ė_k, ∂²σ_k/∂ė_k²)` (N/m², N s/m²,
    /// N s²/m², or per rad), for an exact Hessian of an optimal control problem. `false` (the
    /// default) where the law does not give them; whether it does never depends on `(e, ė)`.
    fn curvature(&self, e: &[f64], ed: &[f64], out: &mut [f64]) -> bool {
        let _ = (e, ed, out);
        false
    }

    /// The second partials of the weighted stress `wᵀσ(e, ė)` (weights `w`, one per mode: the
    /// modes' virtual rates, so `wᵀσ` is a power, W): `hee[i n + j] = Σ_k w_k ∂²σ_k/∂e_i∂e_j`,
    /// `heed[i n + j] = Σ_k w_k ∂²σ_k/∂e_i∂ė_j`, `hdd[i n + j] = Σ_k w_k ∂²σ_k/∂ė_i∂ė_j` (n x n
    /// row-major each; W per unit of the modes and rates), for the exact Hessian of an optimal
    /// control problem where the modes are coupled. The default serves uncoupled laws from
    /// [`Law::curvature`]; `false` where the law gives neither (never depending on `(e, ė, w)`).
    fn stress_hessian(
        &self,
        e: &[f64],
        ed: &[f64],
        w: &[f64],
        hee: &mut [f64],
        heed: &mut [f64],
        hdd: &mut [f64],
    ) -> bool {
        let n = e.len();
        let mut c = vec![0.0; 3 * n];
        if !self.curvature(e, ed, &mut c) {
            return false;
        }
        for m in [&mut *hee, &mut *heed, &mut *hdd] {
            m.fill(0.0);
        }
        for k in 0..n {
            hee[k * n + k] = w[k] * c[3 * k];
            heed[k * n + k] = w[k] * c[3 * k + 1];
            hdd[k * n + k] = w[k] * c[3 * k + 2];
        }
        true
    }

    /// The law's tangents at `(e, ė)`: `ds_de[i n + j] = ∂σ_i/∂e_j` and
    /// `ds_ded[i n + j] = ∂σ_i/∂ė_j` (n x n row-major each; N/m, N m/rad; N s/m, N m s/rad).
    /// Implicit integrators need them for their Jacobians. The default takes central differences
    /// of [`Law::stress`] (step `1e-6 (1 + |x|)`, error of order 1e-10 of the stress's scale for
    /// smooth laws); laws that know their tangents override it.
    fn tangent(&self, e: &[f64], ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
        let n = e.len();
        let (mut x, mut s_plus, mut s_minus) = (e.to_vec(), vec![0.0; n], vec![0.0; n]);
        let mut xd = ed.to_vec();
        for j in 0..n {
            let h = 1e-6 * (1.0 + e[j].abs());
            x[j] = e[j] + h;
            self.stress(&x, ed, &mut s_plus);
            x[j] = e[j] - h;
            self.stress(&x, ed, &mut s_minus);
            x[j] = e[j];
            for i in 0..n {
                ds_de[i * n + j] = (s_plus[i] - s_minus[i]) / (2.0 * h);
            }
            let h = 1e-6 * (1.0 + ed[j].abs());
            xd[j] = ed[j] + h;
            self.stress(e, &xd, &mut s_plus);
            xd[j] = ed[j] - h;
            self.stress(e, &xd, &mut s_minus);
            xd[j] = ed[j];
            for i in 0..n {
                ds_ded[i * n + j] = (s_plus[i] - s_minus[i]) / (2.0 * h);
            }
        }
    }
}

/// `σ = σ0 + C e + K ė` with constant matrices (eq. 16): linear springs, dampers and preload.
#[derive(Clone, Debug, PartialEq)]
pub struct LinearLaw {
    n: usize,
    /// Stiffness `C`, n x n row-major (N/m, N m/rad).
    pub stiffness: Vec<f64>,
    /// Damping `K`, n x n row-major (N s/m, N m s/rad).
    pub damping: Vec<f64>,
    /// Preload `σ0`, n.
    pub preload: Vec<f64>,
}

impl LinearLaw {
    /// Uncoupled springs and dampers: `σ_k = σ0_k + c_k e_k + k_k ė_k`.
    pub fn diagonal(stiffness: &[f64], damping: &[f64], preload: &[f64]) -> Self {
        let n = stiffness.len();
        let mut c = vec![0.0; n * n];
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            c[i * n + i] = stiffness[i];
            k[i * n + i] = damping.get(i).copied().unwrap_or(0.0);
        }
        Self { n, stiffness: c, damping: k, preload: (0..n).map(|i| preload.get(i).copied().unwrap_or(0.0)).collect() }
    }
}

impl Law for LinearLaw {
    fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]) {
        let n = self.n;
        for i in 0..n {
            let mut s = self.preload[i];
            for j in 0..n {
                s += self.stiffness[i * n + j] * e[j] + self.damping[i * n + j] * ed[j];
            }
            sigma[i] = s;
        }
    }

    fn energy(&self, e: &[f64]) -> Option<f64> {
        let n = self.n;
        let symmetric = (0..n).all(|i| (0..n).all(|j| self.stiffness[i * n + j] == self.stiffness[j * n + i]));
        symmetric.then(|| {
            (0..n)
                .map(|i| {
                    self.preload[i] * e[i] + 0.5 * e[i] * (0..n).map(|j| self.stiffness[i * n + j] * e[j]).sum::<f64>()
                })
                .sum()
        })
    }

    fn tangent(&self, _e: &[f64], _ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
        ds_de.copy_from_slice(&self.stiffness);
        ds_ded.copy_from_slice(&self.damping);
    }

    /// Linear: every second partial is 0 (so the uncoupled form is complete for coupled
    /// matrices too).
    fn curvature(&self, _e: &[f64], _ed: &[f64], out: &mut [f64]) -> bool {
        out.fill(0.0);
        true
    }
}

/// A one-sided smooth spring (Chadwick et al. 2014, eq. 5, the conoid ligament):
/// `σ = (k/2)(d + √(d² + ε²))`, `d = e − slack`: tension `k d` when stretched well beyond the
/// slack value, vanishing (as `k ε²/(4|d|)`) when slack, smooth in between.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TensionOnly {
    /// Stiffness `k` when taut (N/m, N m/rad).
    pub stiffness: f64,
    /// The mode value at which it engages (m, rad): slack length minus reference length.
    pub slack: f64,
    /// Width `ε` of the smooth transition (m, rad), > 0.
    pub epsilon: f64,
}

/// Quadratic stops outside a range (Chadwick et al. 2014, eq. 4): `σ = −k₂ (e − min)²` below `min`,
/// `k₂ (e − max)²` above `max`, 0 inside.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Lower end of the free range (m, rad).
    pub min: f64,
    /// Upper end of the free range (m, rad).
    pub max: f64,
    /// `k₂` (N/m², N m/rad²), ≥ 0.
    pub stiffness: f64,
}

/// OpenSim's `CoordinateLimitForce` (Seth; OpenSim 4.6) as a stress: beyond the upper end of the
/// free range a spring whose stiffness rises from 0 to `upper_stiffness` over `transition` by
/// Simbody's quintic step `S(x) = x³ (10 − 15 x + 6 x²)` (clamped to [0, 1]), likewise below the
/// lower end, and a damping switched on by the same steps:
///
/// ```text
/// σ = K_up S((e − upper)/t) (e − upper) + K_low S((lower − e)/t) (e − lower)
///     + c (S((e − upper)/t) + S((lower − e)/t)) ė
/// ```
///
/// (OpenSim's generalized force is `−σ`). All values in SI: limits and `t` in m or rad,
/// stiffnesses N/m or N m/rad, damping N s/m or N m s/rad.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CoordinateLimit {
    /// Lower end of the free range (m, rad).
    pub lower: f64,
    /// Upper end of the free range (m, rad).
    pub upper: f64,
    /// Stiffness below the range once the transition is passed (N/m, N m/rad), ≥ 0.
    pub lower_stiffness: f64,
    /// Stiffness above the range once the transition is passed (N/m, N m/rad), ≥ 0.
    pub upper_stiffness: f64,
    /// Damping outside the range once the transition is passed (N s/m, N m s/rad), ≥ 0.
    pub damping: f64,
    /// Width `t` of the transition (m, rad), > 0.
    pub transition: f64,
}

/// Simbody's `stepUp` on `[0, 1]`, clamped outside, its first and second derivatives.
fn step_up(x: f64) -> (f64, f64, f64) {
    if x <= 0.0 {
        (0.0, 0.0, 0.0)
    } else if x >= 1.0 {
        (1.0, 0.0, 0.0)
    } else {
        let x2 = x * x;
        let s = x2 * x * (10.0 + x * (-15.0 + 6.0 * x));
        (s, 30.0 * x2 * (1.0 - x) * (1.0 - x), 60.0 * x * (1.0 - x) * (1.0 - 2.0 * x))
    }
}

impl CoordinateLimit {
    /// `(σ, ∂σ/∂e, ∂σ/∂ė)` at `(e, ė)`.
    pub fn eval(&self, e: f64, ed: f64) -> (f64, f64, f64) {
        let t = self.transition;
        let (su, dsu, _) = step_up((e - self.upper) / t);
        let (sl, dsl, _) = step_up((self.lower - e) / t);
        let (du, dl) = (e - self.upper, e - self.lower);
        let s = self.upper_stiffness * su * du + self.lower_stiffness * sl * dl + self.damping * (su + sl) * ed;
        let ds = self.upper_stiffness * (dsu / t * du + su)
            + self.lower_stiffness * (-dsl / t * dl + sl)
            + self.damping * (dsu - dsl) / t * ed;
        (s, ds, self.damping * (su + sl))
    }

    /// `(∂²σ/∂e², ∂²σ/∂e∂ė, ∂²σ/∂ė²)` at `(e, ė)`: the steps' second derivatives
    /// `S''(x) = 60 x (1 − x)(1 − 2x)` within the transitions (N m/rad², N m s/rad², 0).
    pub fn curvature(&self, e: f64, ed: f64) -> (f64, f64, f64) {
        let t = self.transition;
        let (_, dsu, ddsu) = step_up((e - self.upper) / t);
        let (_, dsl, ddsl) = step_up((self.lower - e) / t);
        let (du, dl) = (e - self.upper, e - self.lower);
        let ee = self.upper_stiffness * (ddsu / (t * t) * du + 2.0 * dsu / t)
            + self.lower_stiffness * (ddsl / (t * t) * dl - 2.0 * dsl / t)
            + self.damping * (ddsu + ddsl) / (t * t) * ed;
        (ee, self.damping * (dsu - dsl) / t, 0.0)
    }

    /// The springs' stored energy `∫ σ de` from the range (J); zero inside it. Beyond the
    /// transition `K (δ²/2 − t²/7)`, within it `K δ² x³ (2 − 5x/2 + 6x²/7)`, `x = δ/t`, as
    /// OpenSim's `computePotentialEnergy`.
    pub fn energy(&self, e: f64) -> f64 {
        let (k, d) = if e > self.upper {
            (self.upper_stiffness, e - self.upper)
        } else if e < self.lower {
            (self.lower_stiffness, self.lower - e)
        } else {
            return 0.0;
        };
        let t = self.transition;
        if d >= t {
            k * (0.5 * d * d - t * t / 7.0)
        } else {
            let x = d / t;
            k * d * d * x * x * x * (2.0 - 2.5 * x + 6.0 / 7.0 * x * x)
        }
    }
}

/// The law of one mode: `σ = σ0 + c e + k ė` plus an optional one-sided spring, optional range
/// stops and an optional coordinate limit, each term with its exact tangent.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ModeLaw {
    /// Preload `σ0` (N, N m).
    pub preload: f64,
    /// Linear stiffness `c` (N/m, N m/rad).
    pub stiffness: f64,
    /// Linear damping `k` (N s/m, N m s/rad).
    pub damping: f64,
    /// A one-sided spring (ligament).
    pub tension_only: Option<TensionOnly>,
    /// Stops at the ends of a range.
    pub limits: Option<Limits>,
    /// OpenSim's coordinate limit force.
    pub coordinate_limit: Option<CoordinateLimit>,
}

impl ModeLaw {
    /// `(σ, ∂σ/∂e, ∂σ/∂ė)` at `(e, ė)`.
    pub fn eval(&self, e: f64, ed: f64) -> (f64, f64, f64) {
        let mut s = self.preload + self.stiffness * e + self.damping * ed;
        let mut ds = self.stiffness;
        if let Some(t) = self.tension_only {
            let d = e - t.slack;
            let r = d.hypot(t.epsilon);
            s += 0.5 * t.stiffness * (d + r);
            ds += 0.5 * t.stiffness * (1.0 + d / r);
        }
        if let Some(l) = self.limits {
            if e < l.min {
                s -= l.stiffness * (e - l.min) * (e - l.min);
                ds -= 2.0 * l.stiffness * (e - l.min);
            } else if e > l.max {
                s += l.stiffness * (e - l.max) * (e - l.max);
                ds += 2.0 * l.stiffness * (e - l.max);
            }
        }
        let mut dsd = self.damping;
        if let Some(c) = self.coordinate_limit {
            let (cs, cds, cdsd) = c.eval(e, ed);
            s += cs;
            ds += cds;
            dsd += cdsd;
        }
        (s, ds, dsd)
    }

    /// `(∂²σ/∂e², ∂²σ/∂e∂ė, ∂²σ/∂ė²)` at `(e, ė)` ([`Law::curvature`]; the stops' jumps at the
    /// ends of their range take the side `e` is on, the range's inside at an end).
    pub fn curvature(&self, e: f64, ed: f64) -> (f64, f64, f64) {
        let (mut dd, mut ded) = (0.0, 0.0);
        if let Some(t) = self.tension_only {
            // (k/2)(1 + d/r)' = (k/2) ε²/r³
            let r = (e - t.slack).hypot(t.epsilon);
            dd += 0.5 * t.stiffness * t.epsilon * t.epsilon / (r * r * r);
        }
        if let Some(l) = self.limits {
            if e < l.min {
                dd -= 2.0 * l.stiffness;
            } else if e > l.max {
                dd += 2.0 * l.stiffness;
            }
        }
        if let Some(c) = self.coordinate_limit {
            let (cee, ceed, _) = c.curvature(e, ed);
            dd += cee;
            ded += ceed;
        }
        (dd, ded, 0.0)
    }

    /// The stored energy `∫ σ de` from 0 (J), without the damping.
    pub fn energy(&self, e: f64) -> f64 {
        let mut v = self.preload * e + 0.5 * self.stiffness * e * e;
        if let Some(t) = self.tension_only {
            // ∫ (k/2)(d + √(d²+ε²)) dd = (k/4)(d² + d√(d²+ε²) + ε² asinh(d/ε))
            let w = |d: f64| {
                0.25 * t.stiffness * (d * d + d * d.hypot(t.epsilon) + t.epsilon * t.epsilon * (d / t.epsilon).asinh())
            };
            v += w(e - t.slack) - w(-t.slack);
        }
        if let Some(l) = self.limits {
            // the stops are zero at e = 0 whenever 0 lies in the range; the integral from 0 is
            // the difference of the antiderivative's values
            let w = |x: f64| {
                if x < l.min {
                    -l.stiffness * (x - l.min).powi(3) / 3.0
                } else if x > l.max {
                    l.stiffness * (x - l.max).powi(3) / 3.0
                } else {
                    0.0
                }
            };
            v += w(e) - w(0.0);
        }
        if let Some(c) = self.coordinate_limit {
            v += c.energy(e) - c.energy(0.0);
        }
        v
    }
}

/// Uncoupled laws of an element's modes, one [`ModeLaw`] per mode.
#[derive(Clone, Debug, PartialEq)]
pub struct ModeLaws {
    /// One law per mode of the element.
    pub laws: Vec<ModeLaw>,
    /// Per mode, a slack length (m) that [`Law::bind`] turns into the tension-only spring's
    /// `slack` (the length less the mode's reference length).
    pub slack_lengths: Vec<Option<f64>>,
}

impl ModeLaws {
    /// Laws whose parameters are all relative to the initial configuration.
    pub fn new(laws: Vec<ModeLaw>) -> Self {
        let n = laws.len();
        Self { laws, slack_lengths: vec![None; n] }
    }
}

impl Law for ModeLaws {
    fn bind(&mut self, references: &[Option<f64>]) -> Result<(), String> {
        for (k, l) in self.slack_lengths.iter().enumerate() {
            let Some(l) = *l else { continue };
            let Some(t) = self.laws[k].tension_only.as_mut() else { continue };
            match references.get(k).copied().flatten() {
                Some(r) => t.slack = l - r,
                None => return Err(format!("mode #{k} has no reference length for a `slack_length`")),
            }
        }
        Ok(())
    }

    fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]) {
        for (k, law) in self.laws.iter().enumerate() {
            sigma[k] = law.eval(e[k], ed[k]).0;
        }
    }

    fn energy(&self, e: &[f64]) -> Option<f64> {
        Some(self.laws.iter().zip(e).map(|(l, &e)| l.energy(e)).sum())
    }

    fn curvature(&self, e: &[f64], ed: &[f64], out: &mut [f64]) -> bool {
        for (k, law) in self.laws.iter().enumerate() {
            let (ee, eed, edd) = law.curvature(e[k], ed[k]);
            out[3 * k..3 * k + 3].copy_from_slice(&[ee, eed, edd]);
        }
        true
    }

    fn tangent(&self, e: &[f64], ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
        let n = self.laws.len();
        ds_de.fill(0.0);
        ds_ded.fill(0.0);
        for (k, law) in self.laws.iter().enumerate() {
            let (_, de, ded) = law.eval(e[k], ed[k]);
            ds_de[k * n + k] = de;
            ds_ded[k * n + k] = ded;
        }
    }
}

/// The tangents of a law whose stresses are written over [`crate::scalar::Real`]
/// ([`Law::tangent`]'s `ds_de`, `ds_ded`, n x n row-major each), by one pass over vector dual
/// numbers in the `M = 2n` variables `(e, ė)`: exact to rounding. `stress(e, ė, σ)` evaluates the
/// law over them. A size that is not `2n` gives NaN.
pub fn dual_tangent<const M: usize>(
    e: &[f64],
    ed: &[f64],
    ds_de: &mut [f64],
    ds_ded: &mut [f64],
    stress: impl Fn(&[DualSVec64<M>], &[DualSVec64<M>], &mut [DualSVec64<M>]),
) {
    let n = e.len();
    if M != 2 * n || ed.len() != n {
        ds_de.fill(f64::NAN);
        ds_ded.fill(f64::NAN);
        return;
    }
    let x: Vec<DualSVec64<M>> =
        (0..M).map(|j| DualSVec64::<M>::from(if j < n { e[j] } else { ed[j - n] }).derivative(j)).collect();
    let mut s = vec![DualSVec64::<M>::from(0.0); n];
    stress(&x[..n], &x[n..], &mut s);
    for (i, si) in s.iter().enumerate() {
        let g = |j: usize| si.eps.0.as_ref().map_or(0.0, |d| d[j]);
        for j in 0..n {
            ds_de[i * n + j] = g(j);
            ds_ded[i * n + j] = g(n + j);
        }
    }
}

/// [`Law::stress_hessian`] of a law whose stresses are written over [`crate::scalar::Real`]: the
/// second partials of `wᵀσ` (W per unit of the modes and rates, n x n row-major each) by one pass
/// over second-order vector dual numbers in the `M = 2n` variables `(e, ė)`, exact to rounding.
/// `false` for a size that is not `2n`.
#[allow(clippy::too_many_arguments)]
pub fn dual_stress_hessian<const M: usize>(
    e: &[f64],
    ed: &[f64],
    w: &[f64],
    hee: &mut [f64],
    heed: &mut [f64],
    hdd: &mut [f64],
    stress: impl Fn(&[Dual2SVec64<M>], &[Dual2SVec64<M>], &mut [Dual2SVec64<M>]),
) -> bool {
    let n = e.len();
    if M != 2 * n || ed.len() != n || w.len() != n {
        return false;
    }
    let x: Vec<Dual2SVec64<M>> =
        (0..M).map(|j| Dual2SVec64::<M>::from(if j < n { e[j] } else { ed[j - n] }).derivative(j)).collect();
    let mut s = vec![Dual2SVec64::<M>::from(0.0); n];
    stress(&x[..n], &x[n..], &mut s);
    let mut h = [[0.0; M]; M];
    for (wk, sk) in w.iter().zip(&s) {
        let Some(d2) = sk.v2.0.as_ref() else { continue };
        for (a, row) in h.iter_mut().enumerate() {
            for (b, v) in row.iter_mut().enumerate() {
                *v += wk * d2[(a, b)];
            }
        }
    }
    for i in 0..n {
        for j in 0..n {
            hee[i * n + j] = h[i][j];
            heed[i * n + j] = h[i][n + j];
            hdd[i * n + j] = h[n + i][n + j];
        }
    }
    true
}

/// [`Law::stress`], [`Law::tangent`] and [`Law::stress_hessian`] of a law whose stresses are
/// written once over [`crate::scalar::Real`] as a method
/// `fn stress_of<T: Real>(&self, e: &[T], ed: &[T], sigma: &mut [T])`: the stresses themselves,
/// and their first and second partials exact to rounding by [`dual_tangent`] and
/// [`dual_stress_hessian`] in the `$duals = 2n` variables `(e, ė)` of `n` modes. Write
/// `mollier_core::law_by_dual_numbers!(6);` inside the law's `impl Law`.
#[macro_export]
macro_rules! law_by_dual_numbers {
    ($duals:literal) => {
        fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]) {
            self.stress_of(e, ed, sigma);
        }
        fn tangent(&self, e: &[f64], ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
            $crate::law::dual_tangent::<$duals>(e, ed, ds_de, ds_ded, |e, ed, s| self.stress_of(e, ed, s));
        }
        fn stress_hessian(
            &self,
            e: &[f64],
            ed: &[f64],
            w: &[f64],
            hee: &mut [f64],
            heed: &mut [f64],
            hdd: &mut [f64],
        ) -> bool {
            $crate::law::dual_stress_hessian::<$duals>(e, ed, w, hee, heed, hdd, |e, ed, s| self.stress_of(e, ed, s))
        }
    };
}

/// The largest difference between [`Law::stress_hessian`] at `(e, ė)` with weights `w` and
/// central differences of [`Law::tangent`] (step `h (1 + |x|)`), relative to the larger of the
/// entry and 1: a check of a law's second partials against its first, for tests. `None` where
/// the law gives no second partials.
pub fn stress_hessian_error(law: &dyn Law, e: &[f64], ed: &[f64], w: &[f64], h: f64) -> Option<f64> {
    let n = e.len();
    let [mut hee, mut heed, mut hdd] = [0, 1, 2].map(|_| vec![0.0; n * n]);
    if !law.stress_hessian(e, ed, w, &mut hee, &mut heed, &mut hdd) {
        return None;
    }
    // Σ_k w_k ∂σ_k/∂e_i and Σ_k w_k ∂σ_k/∂ė_i at (e, ė)
    let weighted = |e: &[f64], ed: &[f64]| {
        let (mut de, mut ded) = (vec![0.0; n * n], vec![0.0; n * n]);
        law.tangent(e, ed, &mut de, &mut ded);
        let f = |m: &[f64], i: usize| (0..n).map(|k| w[k] * m[k * n + i]).sum::<f64>();
        ((0..n).map(|i| f(&de, i)).collect::<Vec<_>>(), (0..n).map(|i| f(&ded, i)).collect::<Vec<_>>())
    };
    let mut worst = 0.0f64;
    let mut compare = |exact: f64, numeric: f64| {
        let d = (exact - numeric).abs() / numeric.abs().max(1.0);
        // a non-finite entry is the worst difference
        worst = if d <= worst {
            worst
        } else if d.is_nan() {
            f64::INFINITY
        } else {
            d
        };
    };
    let (mut x, mut xd) = (e.to_vec(), ed.to_vec());
    for j in 0..n {
        let step = h * (1.0 + e[j].abs());
        x[j] = e[j] + step;
        let (up, _) = weighted(&x, ed);
        x[j] = e[j] - step;
        let (down, _) = weighted(&x, ed);
        x[j] = e[j];
        let step_d = h * (1.0 + ed[j].abs());
        xd[j] = ed[j] + step_d;
        let (up_d, up_dd) = weighted(e, &xd);
        xd[j] = ed[j] - step_d;
        let (down_d, down_dd) = weighted(e, &xd);
        xd[j] = ed[j];
        for i in 0..n {
            compare(hee[i * n + j], (up[i] - down[i]) / (2.0 * step));
            compare(heed[i * n + j], (up_d[i] - down_d[i]) / (2.0 * step_d));
            compare(hdd[i * n + j], (up_dd[i] - down_dd[i]) / (2.0 * step_d));
        }
    }
    Some(worst)
}

/// The largest difference between [`Law::tangent`] at `(e, ė)` and central differences of
/// [`Law::stress`] (step `h (1 + |x|)`), relative to the larger of the entry and 1: a check of a
/// law's first partials, for tests (a non-finite entry is infinitely far).
pub fn tangent_error(law: &dyn Law, e: &[f64], ed: &[f64], h: f64) -> f64 {
    let n = e.len();
    let (mut de, mut ded) = (vec![0.0; n * n], vec![0.0; n * n]);
    law.tangent(e, ed, &mut de, &mut ded);
    let (mut up, mut down) = (vec![0.0; n], vec![0.0; n]);
    let (mut x, mut xd) = (e.to_vec(), ed.to_vec());
    let mut worst = 0.0f64;
    for j in 0..n {
        for rate in [false, true] {
            let v = if rate { &mut xd } else { &mut x };
            let x0 = v[j];
            let step = h * (1.0 + x0.abs());
            v[j] = x0 + step;
            law.stress(&x, &xd, &mut up);
            let v = if rate { &mut xd } else { &mut x };
            v[j] = x0 - step;
            law.stress(&x, &xd, &mut down);
            let v = if rate { &mut xd } else { &mut x };
            v[j] = x0;
            let exact = if rate { &ded } else { &de };
            for i in 0..n {
                let numeric = (up[i] - down[i]) / (2.0 * step);
                let d = (exact[i * n + j] - numeric).abs() / numeric.abs().max(1.0);
                worst = if d <= worst {
                    worst
                } else if d.is_nan() {
                    f64::INFINITY
                } else {
                    d
                };
            }
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn laws() -> ModeLaws {
        ModeLaws::new(vec![
            ModeLaw {
                preload: 0.3,
                stiffness: 5.0,
                damping: 1.0,
                tension_only: Some(TensionOnly { stiffness: 8.0e4, slack: -0.02, epsilon: 1e-3 }),
                limits: None,
                coordinate_limit: None,
            },
            ModeLaw {
                stiffness: 5.0,
                limits: Some(Limits { min: -0.5, max: 0.4, stiffness: 5000.0 }),
                ..Default::default()
            },
            ModeLaw {
                coordinate_limit: Some(CoordinateLimit {
                    lower: -0.5,
                    upper: 0.4,
                    lower_stiffness: 300.0,
                    upper_stiffness: 800.0,
                    damping: 2.0,
                    transition: 0.1,
                }),
                ..Default::default()
            },
        ])
    }

    /// Every mode's law (a ligament, stops, a coordinate limit beyond, within and before each
    /// transition) and a coupled linear law: the second partials of `wᵀσ` against central
    /// differences of the exact tangents.
    #[test]
    fn curvatures_are_the_tangents_derivatives() {
        let law = laws();
        let w = [0.7, -1.3, 2.1];
        for (e, ed) in [
            ([-0.03, -0.7, -0.7], [0.2, -1.0, -1.3]),
            ([-0.0195, 0.1, -0.55], [0.0, 0.3, 0.8]),
            ([0.01, 0.55, 0.1], [-0.5, 0.0, 2.0]),
            ([0.0, 0.0, 0.45], [0.0, 0.0, -0.7]),
            ([0.0, 0.0, 0.47], [0.0, 0.0, 1.9]),
            ([0.0, 0.0, -0.53], [0.0, 0.0, -0.4]),
            ([0.0, 0.0, 0.62], [0.0, 0.0, 0.4]),
        ] {
            let err = stress_hessian_error(&law, &e, &ed, &w, 1e-6).expect("mode laws give them");
            assert!(err < 1e-6, "at {e:?}, {ed:?}: off by {err:.2e}");
        }
        let coupled = LinearLaw {
            n: 2,
            stiffness: vec![3.0, -1.0, 0.5, 2.0],
            damping: vec![0.1, 0.2, 0.0, 0.3],
            preload: vec![1.0, 0.0],
        };
        let err = stress_hessian_error(&coupled, &[0.3, -0.2], &[1.0, 0.5], &[1.0, -2.0], 1e-6);
        assert!(err.is_some_and(|e| e < 1e-9), "{err:?}");
    }

    #[test]
    fn tangents_are_the_stress_derivatives() {
        let law = laws();
        // the coordinate limit (third mode) beyond, within and before each transition
        for (e, ed) in [
            ([-0.03, -0.7, -0.7], [0.2, -1.0, -1.3]),
            ([-0.0195, 0.1, -0.55], [0.0, 0.3, 0.8]),
            ([0.01, 0.55, 0.1], [-0.5, 0.0, 2.0]),
            ([0.0, 0.0, 0.45], [0.0, 0.0, -0.7]),
            ([0.0, 0.0, 0.62], [0.0, 0.0, 0.4]),
        ] {
            let (mut a, mut ad) = (vec![0.0; 9], vec![0.0; 9]);
            let (mut b, mut bd) = (vec![0.0; 9], vec![0.0; 9]);
            law.tangent(&e, &ed, &mut a, &mut ad);
            // the trait's default: central differences
            struct Fd<'a>(&'a ModeLaws);
            impl fmt::Debug for Fd<'_> {
                fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("Fd")
                }
            }
            impl Law for Fd<'_> {
                fn stress(&self, e: &[f64], ed: &[f64], s: &mut [f64]) {
                    self.0.stress(e, ed, s)
                }
            }
            Fd(&law).tangent(&e, &ed, &mut b, &mut bd);
            for i in 0..9 {
                let scale = 1.0 + a[i].abs();
                assert!((a[i] - b[i]).abs() < 1e-6 * scale, "{i}: {} vs {}", a[i], b[i]);
                assert!((ad[i] - bd[i]).abs() < 1e-6 * (1.0 + ad[i].abs()));
            }
        }
    }

    #[test]
    fn energy_is_the_integral_of_the_stress() {
        // Simpson's rule on σ(e) with ė = 0 against the closed-form energy
        let law = laws();
        for k in 0..3 {
            for end in [-0.7, -0.6, -0.55, -0.025, 0.0, 0.03, 0.45, 0.62] {
                let n = 20000;
                let f = |e: f64| law.laws[k].eval(e, 0.0).0;
                let h = end / n as f64;
                let mut sum = f(0.0) + f(end);
                for i in 1..n {
                    sum += if i % 2 == 1 { 4.0 } else { 2.0 } * f(i as f64 * h);
                }
                let simpson = sum * h / 3.0;
                let exact = law.laws[k].energy(end);
                assert!(
                    (simpson - exact).abs() < 1e-7 * (1.0 + exact.abs()),
                    "mode {k} at {end}: {simpson} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn the_ligament_pulls_and_does_not_push() {
        let l = ModeLaw {
            tension_only: Some(TensionOnly { stiffness: 8.0e4, slack: 0.0, epsilon: 1e-3 }),
            ..Default::default()
        };
        // 10 mm taut: k d to within k ε²/(4d)
        assert!((l.eval(0.01, 0.0).0 - 800.0).abs() < 8.0e4 * 1e-6 / 0.04 + 1e-9);
        // 10 mm slack: k ε²/(4|d|) = 2 N, positive (never a push)
        let slack = l.eval(-0.01, 0.0).0;
        assert!(slack > 0.0 && (slack - 2.0).abs() < 0.01, "{slack}");
    }
}
