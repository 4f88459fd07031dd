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

use crate::resistance::SwingResistance;
use crate::torsion::TorsionCurve;

/// The passive moment of the joint at one orientation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMoment {
    /// Joint angles `(p, q, ψ)`, rad: `p = θ cos φ`, `q = θ sin φ`, `ψ` the torsion.
    pub angles: [f64; 3],
    /// Swing moment magnitude `M` (N m).
    pub swing: f64,
    /// Torsion moment `T` on the moving member about its long axis, right-handed (N m).
    pub torsion: f64,
    /// The moment the joint exerts on the moving member, components in the fixed member's joint
    /// frame (N m); the fixed member receives the opposite.
    pub torque: [f64; 3],
    /// Stresses conjugate to the modes `(swing_p, swing_q, torsion)` (N m): internal power
    /// `Σ σ_k ė_k`, so `σ = −(moment on the moving member)` in the sense of each mode.
    pub stress: [f64; 3],
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
        let t = self.torsion.moment(psi);
        let theta = p.hypot(q);
        if !(theta > 0.0) {
            // the pole lies inside the sinus (checked with the data): torsion only
            return JointMoment {
                angles: [p, q, psi],
                swing: 0.0,
                torsion: t,
                torque: [0.0, 0.0, t],
                stress: [0.0, 0.0, -t],
            };
        }
        let (cp, sp) = (p / theta, q / theta);
        let m = self.swing.magnitude(q.atan2(p), theta);
        let (st, ct) = theta.sin_cos();
        let d = (st * m.d_theta).hypot(m.d_phi);
        // ê = a ê_θ + b ê_φ; M = 0 wherever its gradient vanishes
        let (a, b) = if d > 0.0 { (st * m.d_theta / d, m.d_phi / d) } else { (0.0, 0.0) };
        let versine = 2.0 * (0.5 * theta).sin().powi(2);
        let sr = m.value * a;
        let sa = (m.value * b * st + t * versine) / theta;
        let e_theta = [ct * cp, ct * sp, -st];
        let e_phi = [-sp, cp, 0.0];
        let u = [st * cp, st * sp, ct];
        let torque: [f64; 3] = std::array::from_fn(|i| m.value * b * e_theta[i] - m.value * a * e_phi[i] + t * u[i]);
        JointMoment {
            angles: [p, q, psi],
            swing: m.value,
            torsion: t,
            torque,
            stress: [sr * cp - sa * sp, sr * sp + sa * cp, -t],
        }
    }
}

impl Law for ResistanceLaw {
    /// Stresses `σ` (3, N m) for mode values `e` (3, rad); the rates are not used (Engin's data
    /// are quasi-static).
    fn stress(&self, e: &[f64], _ed: &[f64], sigma: &mut [f64]) {
        match (e.get(..3), sigma.get_mut(..3)) {
            (Some(e), Some(s)) => s.copy_from_slice(&self.moment(&[e[0], e[1], e[2]]).stress),
            _ => sigma.fill(f64::NAN),
        }
    }
}
