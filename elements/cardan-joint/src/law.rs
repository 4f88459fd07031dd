//! The constitutive law of the cardan joint: a resistive torque about each of the three rotation
//! axes, a function of its own angle, plus a damping torque, a function of its own rate
//! (report §2.1.2 and §2.1.1: "a function of the relative orientation and the relative angular
//! velocity").
//!
//! The three angles are the coordinates of a chain of three pins (x_i, the floating y', the moving
//! z''), so the stress conjugate to each mode is that pin's resistive torque:
//! ```text
//! σ_k = M_k(a_k) + D_k(ȧ_k),      a = (φ, θ, ψ)
//! ```
//! (internal power `Σ σ_k ȧ_k`; the moment on the moving member has component `−σ_k` about axis
//! `k`). A function left out is zero. The torque-angle functions store the energy
//! `Σ_k ∫ M_k da_k` ([`Law::energy`]), so an undamped joint conserves energy in a simulation.

use mollier_core::Law;
use mollier_joint_common::TorqueFunction;

/// The cardan joint's torque functions as a [`Law`] of its modes.
#[derive(Clone, Debug, PartialEq)]
pub struct CardanLaw {
    torques: [Option<TorqueFunction>; 3],
    damping: [Option<TorqueFunction>; 3],
    reference: [f64; 3],
}

impl CardanLaw {
    /// The law from the torque-angle functions `M_φ, M_θ, M_ψ` (N m of rad) and the damping
    /// functions `D_φ, D_θ, D_ψ` (N m of rad/s); `None` is zero. The modes are measured from the
    /// angles `(0, 0, 0)` until [`CardanLaw::set_reference`] says otherwise.
    pub fn new(torques: [Option<TorqueFunction>; 3], damping: [Option<TorqueFunction>; 3]) -> Self {
        Self { torques, damping, reference: [0.0; 3] }
    }

    /// The cardan angles `(φ0, θ0, ψ0)` (rad) at which the modes are zero.
    pub fn set_reference(&mut self, angles: [f64; 3]) {
        self.reference = angles;
    }

    /// The cardan angles at which the modes are zero (rad).
    pub fn reference(&self) -> [f64; 3] {
        self.reference
    }

    /// The resistive torques `(σ_φ, σ_θ, σ_ψ)` (N m) at cardan angles `a` (rad) and rates `ȧ`
    /// (rad/s).
    pub fn torques_at(&self, a: &[f64; 3], rates: &[f64; 3]) -> [f64; 3] {
        let f = |m: &Option<TorqueFunction>, v: f64| m.as_ref().map_or(0.0, |m| m.value(v));
        std::array::from_fn(|k| f(&self.torques[k], a[k]) + f(&self.damping[k], rates[k]))
    }
}

impl Law for CardanLaw {
    /// Stresses `σ` (3, N m) for mode values `e` (3, rad) and rates `ė` (3, rad/s).
    fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]) {
        match (e.get(..3), ed.get(..3), sigma.get_mut(..3)) {
            (Some(e), Some(ed), Some(s)) => {
                let a = std::array::from_fn(|k| e[k] + self.reference[k]);
                s.copy_from_slice(&self.torques_at(&a, &[ed[0], ed[1], ed[2]]));
            }
            _ => sigma.fill(f64::NAN),
        }
    }

    /// The exact tangents: `∂σ_k/∂e_k = M_k'(a_k)`, `∂σ_k/∂ė_k = D_k'(ȧ_k)` (N m/rad, N m s/rad;
    /// 3 x 3 each, diagonal).
    fn tangent(&self, e: &[f64], ed: &[f64], ds_de: &mut [f64], ds_ded: &mut [f64]) {
        ds_de.fill(0.0);
        ds_ded.fill(0.0);
        let slope = |m: &Option<TorqueFunction>, v: f64| m.as_ref().map_or(0.0, |m| m.eval(v).1);
        for k in 0..e.len().min(3) {
            ds_de[k * e.len() + k] = slope(&self.torques[k], e[k] + self.reference[k]);
            ds_ded[k * e.len() + k] = slope(&self.damping[k], ed[k]);
        }
    }

    /// Uncoupled: `(M_k''(a_k), 0, D_k''(ȧ_k))` per mode (N m/rad², 0, N m s²/rad²).
    fn curvature(&self, e: &[f64], ed: &[f64], out: &mut [f64]) -> bool {
        let curv = |m: &Option<TorqueFunction>, v: f64| m.as_ref().map_or(0.0, |m| m.curvature(v));
        for k in 0..e.len().min(3) {
            out[3 * k..3 * k + 3].copy_from_slice(&[
                curv(&self.torques[k], e[k] + self.reference[k]),
                0.0,
                curv(&self.damping[k], ed[k]),
            ]);
        }
        true
    }

    /// The energy stored by the torque-angle functions from the reference, `Σ_k ∫ M_k da_k`
    /// (J); the damping dissipates.
    fn energy(&self, e: &[f64]) -> Option<f64> {
        let e = e.get(..3)?;
        let stored = |k: usize| {
            let a0 = self.reference[k];
            self.torques[k].as_ref().map_or(0.0, |m| m.integral(a0, a0 + e[k]))
        };
        Some((0..3).map(stored).sum())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_joint_common::torque::{Interpolation, Table};

    /// The exact tangents and curvatures against central differences of the stress and of the
    /// tangents: a polynomial, an exponential and a monotone cubic table, two damping functions.
    #[test]
    fn tangents_and_curvatures_are_the_stress_derivatives() {
        let table = Table::new(vec![-1.0, -0.2, 0.4, 1.1], vec![-20.0, -1.0, 2.0, 30.0], Interpolation::MonotoneCubic)
            .expect("a table");
        let mut law = CardanLaw::new(
            [
                Some(TorqueFunction::Polynomial(vec![3.0, 0.0, 5.0])),
                Some(TorqueFunction::Exponential { a: 0.2, b: 4.0 }),
                Some(TorqueFunction::Table(table)),
            ],
            [Some(TorqueFunction::Polynomial(vec![0.5, 0.0, 0.2])), None, Some(TorqueFunction::linear(0.3))],
        );
        law.set_reference([0.1, -0.2, 0.05]);
        for (e, ed) in [([0.3, -0.4, 0.2], [1.0, -0.5, 2.0]), ([-0.6, 0.5, -0.9], [-1.5, 0.3, -0.2])] {
            let (mut a, mut ad, mut b, mut bd) = (vec![0.0; 9], vec![0.0; 9], vec![0.0; 9], vec![0.0; 9]);
            law.tangent(&e, &ed, &mut a, &mut ad);
            // the trait's default: central differences of the stress
            #[derive(Debug)]
            struct Fd<'a>(&'a CardanLaw);
            impl Law for Fd<'_> {
                fn stress(&self, e: &[f64], ed: &[f64], s: &mut [f64]) {
                    self.0.stress(e, ed, s)
                }
            }
            Fd(&law).tangent(&e, &ed, &mut b, &mut bd);
            for i in 0..9 {
                assert!((a[i] - b[i]).abs() < 1e-6 * (1.0 + b[i].abs()), "∂σ/∂e {i}: {} vs {}", a[i], b[i]);
                assert!((ad[i] - bd[i]).abs() < 1e-6 * (1.0 + bd[i].abs()), "∂σ/∂ė {i}: {} vs {}", ad[i], bd[i]);
            }
            let err = mollier_core::law::stress_hessian_error(&law, &e, &ed, &[0.7, -1.2, 2.0], 1e-6);
            assert!(err.is_some_and(|x| x < 1e-6), "at {e:?}, {ed:?}: off by {err:?}");
        }
    }
}
