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
