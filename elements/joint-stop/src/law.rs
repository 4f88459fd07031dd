//! The stop torque of the Calspan joint-stop model (report §2.2.2), as stresses conjugate to the
//! swing modes.
//!
//! The direction `r` (fixed in segment j) is at polar angle `θ` and azimuth `φ` in the frame of
//! the three unit vectors fixed in segment i. The joint-stop contour is `θ = θ_b(φ)` (Engin's
//! sinus, report eq. 3.1/4.1), the penetration `δ = θ − θ_b(φ)` (rad, along the meridian). Outside
//! the contour (`δ > 0`) the stop torque on segment j is
//! ```text
//! T = −(K(δ) + D(δ̇)) r × ê,      ê = ∇_S δ / |∇_S δ|,   ∇_S δ = ê_θ − (θ_b'(φ)/sin θ) ê_φ
//! ```
//! perpendicular to `r`, of the user's magnitude `K(δ)` (`K(0) = 0`, so it is continuous across
//! the contour) plus a damping `D` of the penetration rate, pushing the tip of `r` down the
//! steepest descent of the penetration: back inside as quickly as possible, and perpendicular to
//! the contour where it crosses it. Inside, `T = 0`.
//!
//! From the power balance `σ · ė = −T · ω`, with `ω · ê_φ = θ̇` and `ω · ê_θ = −sin θ φ̇`:
//! ```text
//! σ_θ = (K + D) sin θ / S,   σ_φ = −(K + D) θ_b' sin θ / S,   S = √(sin²θ + θ_b'²)
//! σ_p = σ_θ cos φ − (σ_φ/θ) sin φ,   σ_q = σ_θ sin φ + (σ_φ/θ) cos φ
//! ```

use mollier_core::Law;
use mollier_engin_joint::SinusBoundary;
use mollier_joint_common::TorqueFunction;

/// The stop torque at one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopTorque {
    /// `(θ, φ)` of the direction, rad.
    pub angles: [f64; 2],
    /// The penetration `δ = θ − θ_b(φ)` (rad; negative inside).
    pub penetration: f64,
    /// The magnitude `K(δ) + D(δ̇)` outside, 0 inside (N m).
    pub magnitude: f64,
    /// The torque on segment j, components in segment i's stop frame (N m).
    pub torque: [f64; 3],
    /// Stresses conjugate to the modes `(swing_p, swing_q)` (N m).
    pub stress: [f64; 2],
}

/// The joint-stop contour and the stop torque as a [`Law`] of the element's modes.
#[derive(Clone, Debug, PartialEq)]
pub struct StopLaw {
    contour: SinusBoundary,
    stiffness: TorqueFunction,
    damping: Option<TorqueFunction>,
    reference: [f64; 2],
}

impl StopLaw {
    /// The law from the contour `θ_b(φ)`, the stop torque `K(δ)` (N m of rad) and its damping
    /// `D(δ̇)` (N m of rad/s; `None` is zero).
    pub fn new(contour: SinusBoundary, stiffness: TorqueFunction, damping: Option<TorqueFunction>) -> Self {
        Self { contour, stiffness, damping, reference: [0.0; 2] }
    }

    /// The contour.
    pub fn contour(&self) -> &SinusBoundary {
        &self.contour
    }

    /// The swing coordinates `(p0, q0)` (rad) at which the modes are zero.
    pub fn set_reference(&mut self, pq: [f64; 2]) {
        self.reference = pq;
    }

    /// The swing coordinates at which the modes are zero (rad).
    pub fn reference(&self) -> [f64; 2] {
        self.reference
    }

    /// The stop torque at `p = θ cos φ`, `q = θ sin φ` (rad) with rates `(ṗ, q̇)` (rad/s).
    pub fn torque_at(&self, p: f64, q: f64, rates: &[f64; 2]) -> StopTorque {
        let theta = p.hypot(q);
        let phi = q.atan2(p);
        let (tb, slope) = self.contour.theta_and_slope(phi);
        let penetration = theta - tb;
        let inside =
            StopTorque { angles: [theta, phi], penetration, magnitude: 0.0, torque: [0.0; 3], stress: [0.0; 2] };
        // θ_b > 0 everywhere (checked with the data), so θ = 0 is inside
        if !(penetration > 0.0) {
            return inside;
        }
        let (cp, sp) = (p / theta, q / theta);
        let [pd, qd] = *rates;
        let (theta_rate, phi_rate) = ((p * pd + q * qd) / theta, (p * qd - q * pd) / (theta * theta));
        let damping = self.damping.as_ref().map_or(0.0, |d| d.value(theta_rate - slope * phi_rate));
        let magnitude = self.stiffness.value(penetration) + damping;
        let (st, ct) = theta.sin_cos();
        let s = st.hypot(slope);
        // ê = a ê_θ + b ê_φ
        let (a, b) = (st / s, -slope / s);
        let (sigma_theta, sigma_phi) = (magnitude * a, magnitude * b * st);
        let e_theta = [ct * cp, ct * sp, -st];
        let e_phi = [-sp, cp, 0.0];
        // −M r × ê = −M (a ê_φ − b ê_θ)
        let torque = std::array::from_fn(|i| -magnitude * (a * e_phi[i] - b * e_theta[i]));
        let tangential = sigma_phi / theta;
        StopTorque {
            angles: [theta, phi],
            penetration,
            magnitude,
            torque,
            stress: [sigma_theta * cp - tangential * sp, sigma_theta * sp + tangential * cp],
        }
    }
}

impl Law for StopLaw {
    /// Stresses `σ` (2, N m) for mode values `e` (2, rad) and rates `ė` (2, rad/s).
    fn stress(&self, e: &[f64], ed: &[f64], sigma: &mut [f64]) {
        match (e.get(..2), ed.get(..2), sigma.get_mut(..2)) {
            (Some(e), Some(ed), Some(s)) => {
                let t = self.torque_at(e[0] + self.reference[0], e[1] + self.reference[1], &[ed[0], ed[1]]);
                s.copy_from_slice(&t.stress);
            }
            _ => sigma.fill(f64::NAN),
        }
    }
}
