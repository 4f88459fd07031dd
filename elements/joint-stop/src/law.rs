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
use mollier_core::scalar::{Real, atan2, c as lift};
use mollier_engin_joint::SinusBoundary;
use mollier_joint_common::{TorqueFunction, hypot};

/// The stop torque at one direction.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StopTorque<T = f64> {
    /// `(θ, φ)` of the direction, rad.
    pub angles: [T; 2],
    /// The penetration `δ = θ − θ_b(φ)` (rad; negative inside).
    pub penetration: T,
    /// The magnitude `K(δ) + D(δ̇)` outside, 0 inside (N m).
    pub magnitude: T,
    /// The torque on segment j, components in segment i's stop frame (N m).
    pub torque: [T; 3],
    /// Stresses conjugate to the modes `(swing_p, swing_q)` (N m).
    pub stress: [T; 2],
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
        self.torque_of(p, q, rates)
    }

    /// [`StopLaw::torque_at`] over any [`Real`] (dual numbers for the stresses' derivatives).
    pub fn torque_of<T: Real>(&self, p: T, q: T, rates: &[T; 2]) -> StopTorque<T> {
        let zero = lift::<T>(0.0);
        let theta = hypot(p, q);
        let phi = atan2(q, p);
        let (tb, slope) = self.contour.theta_and_slope_at(phi);
        let penetration = theta - tb;
        let inside =
            StopTorque { angles: [theta, phi], penetration, magnitude: zero, torque: [zero; 3], stress: [zero; 2] };
        // θ_b > 0 everywhere (checked with the data), so θ = 0 is inside
        if !(penetration.re() > 0.0) {
            return inside;
        }
        let (cp, sp) = (p / theta, q / theta);
        let [pd, qd] = *rates;
        let (theta_rate, phi_rate) = ((p * pd + q * qd) / theta, (p * qd - q * pd) / (theta * theta));
        let damping = self.damping.as_ref().map_or(zero, |d| d.apply(theta_rate - slope * phi_rate));
        let magnitude = self.stiffness.apply(penetration) + damping;
        let (st, ct) = theta.sin_cos();
        let s = hypot(st, slope);
        // ê = a ê_θ + b ê_φ
        let (a, b) = (st / s, -slope / s);
        let (sigma_theta, sigma_phi) = (magnitude * a, magnitude * b * st);
        let e_theta = [ct * cp, ct * sp, -st];
        let e_phi = [-sp, cp, zero];
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

    /// The stresses `σ` (2, N m) over any [`Real`] for mode values `e` and rates `ė` (2 each).
    fn stress_of<T: Real>(&self, e: &[T], ed: &[T], sigma: &mut [T]) {
        match (e.get(..2), ed.get(..2), sigma.get_mut(..2)) {
            (Some(e), Some(ed), Some(s)) => {
                let t = self.torque_of(e[0] + self.reference[0], e[1] + self.reference[1], &[ed[0], ed[1]]);
                s.copy_from_slice(&t.stress);
            }
            _ => sigma.fill(lift(f64::NAN)),
        }
    }
}

// Stresses `σ` (2, N m) for mode values `e` (2, rad) and rates `ė` (2, rad/s); exact tangents
// and second partials through the law's generic form (the stop's partials jump at the contour,
// where the torque starts with `K(0) = 0`, and a table's curvature at its nodes).
impl Law for StopLaw {
    mollier_core::law_by_dual_numbers!(4);
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::law::{stress_hessian_error, tangent_error};

    /// Engin's sinus as the contour, a cubic stop torque and a damping table: outside the
    /// contour about the whole circle, with rates, and inside (no torque). The exact tangents
    /// against central differences of the stresses, and the second partials of `wᵀσ` against
    /// central differences of the exact tangents.
    #[test]
    fn tangents_and_second_partials_are_the_stress_derivatives() {
        let damping = mollier_joint_common::torque::Table::new(
            vec![-2.0, -0.5, 0.0, 0.7, 2.0],
            vec![-9.0, -1.0, 0.0, 0.8, 6.0],
            mollier_joint_common::Interpolation::MonotoneCubic,
        )
        .expect("a table");
        let mut law = StopLaw::new(
            SinusBoundary::new(mollier_engin_joint::shoulder::SINUS),
            TorqueFunction::Polynomial(vec![40.0, 0.0, 400.0]),
            Some(TorqueFunction::Table(damping)),
        );
        law.set_reference([0.1, -0.2]);
        let w = [1.3, -0.6];
        for k in 0..24 {
            let phi = 0.2618 * k as f64 + 0.05;
            for over in [-0.3, 0.05, 0.4] {
                let theta = law.contour().theta(phi) + over;
                let e = [theta * phi.cos() - 0.1, theta * phi.sin() + 0.2];
                let ed = [0.9 * (0.7 * k as f64).sin(), -1.1 * (0.3 * k as f64).cos()];
                let t = tangent_error(&law, &e, &ed, 1e-6);
                assert!(t < 1e-6, "tangent at φ {phi}, θ {theta}: off by {t:.2e}");
                let h = stress_hessian_error(&law, &e, &ed, &w, 1e-6).expect("given");
                assert!(h < 1e-6, "second partials at φ {phi}, θ {theta}: off by {h:.2e}");
            }
        }
    }
}
