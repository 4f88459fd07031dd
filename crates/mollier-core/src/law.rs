//! Constitutive laws: the stresses of an element's free modes from their deformations and rates
//! (seed 001, eq. 16, `σ^c = C e^c + K ė^c`, or any user-supplied nonlinear law).
//!
//! Sign convention: `σ_k` is the generalized stress conjugate to mode `k`, so the internal power
//! is `Σ σ_k ė_k`; a spring has `σ = k e` (tension positive for an elongation, N; a moment for an
//! angle, N m). A law is attached to an element with [`crate::ModelBuilder::set_law`], or carried
//! by the element itself ([`crate::Element::law`]).

use std::fmt;

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
}
