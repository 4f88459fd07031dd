//! The constitutive law of the element: the passive moment of the joint as stresses conjugate to
//! its modes (see `docs/theory/engin-joint.md`).
//!
//! With `u` the moving member's long axis and `(ê_θ, ê_φ)` the spherical unit vectors at `u`, all
//! in the fixed member's joint frame, the moment the joint exerts on the moving member is
//! ```text
//! τ = −M u × ê + T u,        ê = ∇_S M / |∇_S M|,   ∇_S M = M_θ ê_θ + (M_φ / sin θ) ê_φ
//! ```
//! - `M(φ, θ)` ([`SwingResistance`]) is Engin's resistive moment: the moment of a force tangent to
//!   the unit sphere at the tip of `u`, of magnitude `M`, pointing down the steepest descent of
//!   `M` on the sphere, so `τ ⟂ u`, `|τ| = M` for the swing part;
//! - `T(ψ)` ([`TorsionCurve`]) acts about the long axis, as the report assumes.
//!
//! The stresses follow from the power balance `σ · ė = −τ · ω` (`ω` the angular velocity of the
//! moving member relative to the fixed one); with `σ_r`, `σ_t` the radial and azimuthal
//! components of `(σ_p, σ_q)`:
//! ```text
//! σ_r = M M_θ sin θ / D,   σ_t = (M M_φ sin θ / D + T (1 − cos θ)) / θ,   σ_ψ = −T,
//! D = √(sin²θ M_θ² + M_φ²)
//! ```
//! The `T (1 − cos θ)` term appears because the swing-twist angle `ψ` is not the integral of the
//! axial angular velocity: a torque purely about `u` also does work on swing rates.

use mollier_core::Law;
use mollier_core::scalar::{Real, atan2, c as lift};
use mollier_joint_common::hypot;

use crate::resistance::SwingResistance;
use crate::torsion::TorsionCurve;

/// The passive moment of the joint at one orientation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMoment<T = f64> {
    /// Joint angles `(p, q, ψ)`, rad: `p = θ cos φ`, `q = θ sin φ`, `ψ` the torsion.
    pub angles: [T; 3],
    /// Swing moment magnitude `M` (N m).
    pub swing: T,
    /// Torsion moment `T` on the moving member about its long axis, right-handed (N m).
    pub torsion: T,
    /// The moment the joint exerts on the moving member, components in the fixed member's joint
    /// frame (N m); the fixed member receives the opposite.
    pub torque: [T; 3],
    /// Stresses conjugate to the modes `(swing_p, swing_q, torsion)` (N m): internal power
    /// `Σ σ_k ė_k`, so `σ = −(moment on the moving member)` in the sense of each mode.
    pub stress: [T; 3],
}

/// The passive resistance as a [`Law`] of the element's modes.
#[derive(Clone, Debug, PartialEq)]
pub struct ResistanceLaw {
    swing: SwingResistance,
    torsion: TorsionCurve,
    reference: [f64; 3],
}

impl ResistanceLaw {
    /// The law from its swing and torsion parts, with the modes measured from joint angles
    /// `(0, 0, 0)` until [`ResistanceLaw::set_reference`] says otherwise.
    pub fn new(swing: SwingResistance, torsion: TorsionCurve) -> Self {
        Self { swing, torsion, reference: [0.0; 3] }
    }

    /// The swing part.
    pub fn swing(&self) -> &SwingResistance {
        &self.swing
    }

    /// The torsion part.
    pub fn torsion(&self) -> &TorsionCurve {
        &self.torsion
    }

    /// Joint angles `(p0, q0, ψ0)` (rad) at which all modes are zero: the element's reference.
    pub fn set_reference(&mut self, angles: [f64; 3]) {
        self.reference = angles;
    }

    /// The joint angles at which all modes are zero (rad).
    pub fn reference(&self) -> [f64; 3] {
        self.reference
    }

    /// The joint angles `(p, q, ψ)` (rad) for mode values `e` (3).
    pub fn joint_angles(&self, e: &[f64; 3]) -> [f64; 3] {
        [e[0] + self.reference[0], e[1] + self.reference[1], e[2] + self.reference[2]]
    }

    /// The passive moment for mode values `e` (3, rad).
    pub fn moment(&self, e: &[f64; 3]) -> JointMoment {
        let [p, q, psi] = self.joint_angles(e);
        self.moment_at(p, q, psi)
    }

    /// The passive moment at joint angles `p = θ cos φ`, `q = θ sin φ`, `ψ` (rad).
    pub fn moment_at(&self, p: f64, q: f64, psi: f64) -> JointMoment {
        self.moment_of(p, q, psi)
    }

    /// [`ResistanceLaw::moment_at`] over any [`Real`] (dual numbers for the stresses'
    /// derivatives).
    pub fn moment_of<T: Real>(&self, p: T, q: T, psi: T) -> JointMoment<T> {
        let zero = lift::<T>(0.0);
        let t = self.torsion.moment_at(psi);
        let theta = hypot(p, q);
        if !(theta.re() > 0.0) {
            // the pole lies inside the sinus (checked with the data): torsion only
            return JointMoment {
                angles: [p, q, psi],
                swing: zero,
                torsion: t,
                torque: [zero, zero, t],
                stress: [zero, zero, -t],
            };
        }
        let (cp, sp) = (p / theta, q / theta);
        let m = self.swing.magnitude_at(atan2(q, p), theta);
        let (st, ct) = theta.sin_cos();
        let d = hypot(st * m.d_theta, m.d_phi);
        // ê = a ê_θ + b ê_φ; M = 0 wherever its gradient vanishes
        let (a, b) = if d.re() > 0.0 { (st * m.d_theta / d, m.d_phi / d) } else { (zero, zero) };
        let half = (theta * 0.5).sin();
        let versine = half * half * 2.0;
        let sr = m.value * a;
        let sa = (m.value * b * st + t * versine) / theta;
        let e_theta = [ct * cp, ct * sp, -st];
        let e_phi = [-sp, cp, zero];
        let u = [st * cp, st * sp, ct];
        let torque: [T; 3] = std::array::from_fn(|i| m.value * b * e_theta[i] - m.value * a * e_phi[i] + t * u[i]);
        JointMoment {
            angles: [p, q, psi],
            swing: m.value,
            torsion: t,
            torque,
            stress: [sr * cp - sa * sp, sr * sp + sa * cp, -t],
        }
    }

    /// The stresses `σ` (3, N m) over any [`Real`] for mode values `e` (3, rad).
    fn stress_of<T: Real>(&self, e: &[T], _ed: &[T], sigma: &mut [T]) {
        match (e.get(..3), sigma.get_mut(..3)) {
            (Some(e), Some(s)) => {
                let r = self.reference;
                s.copy_from_slice(&self.moment_of(e[0] + r[0], e[1] + r[1], e[2] + r[2]).stress);
            }
            _ => sigma.fill(lift(f64::NAN)),
        }
    }
}

// Exact tangents (`∂σ/∂ė = 0`: Engin's data are quasi-static) and second partials through the
// law's generic form; the swing's ramp is C1 in `M`, so the partials jump at its ends, and the
// torsion table's curvature at its nodes.
impl Law for ResistanceLaw {
    mollier_core::law_by_dual_numbers!(6);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::shoulder;
    use crate::torsion::Interpolation;
    use mollier_core::law::{stress_hessian_error, tangent_error};

    /// Engin's shoulder, about the whole circle of azimuths: inside the sinus, within the ramp
    /// (where `M` and its gradient have the smooth step's factors) and beyond it, the torsion
    /// between the table's nodes. The exact tangents against central differences of the stresses,
    /// and the second partials of `wᵀσ` against central differences of the exact tangents.
    #[test]
    fn tangents_and_second_partials_are_the_stress_derivatives() {
        let law = ResistanceLaw::new(shoulder::swing_resistance(), shoulder::torsion(Interpolation::MonotoneCubic));
        let w = [0.8, -1.7, 1.3];
        let mut checked = 0;
        for k in 0..24 {
            let phi = 0.2618 * k as f64 + 0.05;
            let g = law.swing().ramp(phi);
            for frac in [-0.5, 0.35, 0.8, 1.6, 3.0] {
                let theta = g.sinus + frac * g.width;
                if !(theta > 0.05 && theta < 3.0) {
                    continue;
                }
                let e = [theta * phi.cos(), theta * phi.sin(), -0.55 + 0.071 * k as f64];
                let t = tangent_error(&law, &e, &[0.0; 3], 1e-6);
                assert!(t < 1e-6, "tangent at φ {phi}, θ {theta}: off by {t:.2e}");
                // step 3e-7: the differences' truncation error grows with the ramp's steepness
                // (1.0e-5 at a step of 1e-6 where the ramp is its least width, 1.1e-6 here)
                let h = stress_hessian_error(&law, &e, &[0.0; 3], &w, 3e-7).expect("given");
                assert!(h < 1e-5, "second partials at φ {phi}, θ {theta}: off by {h:.2e}");
                checked += 1;
            }
        }
        assert!(checked > 100, "{checked}");
    }
}
