//! The constitutive law of the flexion-torsion joint (report §2.1.3): the bending torque
//! ```text
//! T_b = −(M_f(α) C(γ) + D_f(α̇)) û,     û = z_i × z_j / |z_i × z_j|
//! ```
//! about the unit vector perpendicular to both z axes, and the torsion torque
//! ```text
//! T_t = −(M_t(β) + D_t(ω · z_j)) z_j
//! ```
//! on the moving member, with `M_f`, `M_t` the user's torque-angle functions (`M_f(0) = 0`,
//! `M_t(0) = 0`), `C` the optional dimensionless factor of the directional angle, and `D_f`,
//! `D_t` damping functions of the bending rate `α̇ = ω · û` and of the angular velocity about
//! `z_j` (`ω` the moving member's angular velocity relative to the fixed one).
//!
//! The stresses follow from the power balance `σ · ė = −T · ω`. With `R = R_bend Rz(β)` the
//! relative angular velocity has `ω · û = α̇` and `ω · z_j = β̇ − (1 − cos α) γ̇`, so
//! ```text
//! σ_α = M_f C + D_f,   σ_γ = −(M_t + D_t)(1 − cos α),   σ_β = M_t + D_t
//! σ_p = σ_α cos γ − (σ_γ/α) sin γ,   σ_q = σ_α sin γ + (σ_γ/α) cos γ
//! ```
//! (`(1 − cos α)/α → 0` at `α = 0`, where the bending torque vanishes with `M_f(0) = 0`).

use std::f64::consts::PI;

use mollier_core::Law;
use mollier_core::scalar::{Real, atan2, c as lift};
use mollier_joint_common::torque::Table;
use mollier_joint_common::{TorqueFunction, hypot};

/// `α` (rad) below which the bending direction is taken as undefined: no bending torque.
const STRAIGHT: f64 = 1e-12;

/// The dimensionless factor `C(γ)` of the directional angle: a table over `[−π, π]`, periodic.
#[derive(Clone, Debug, PartialEq)]
pub struct DirectionFactor(Table);

impl DirectionFactor {
    /// The factor from a table whose angles (rad) span `[−π, π]`, with non-negative factors and
    /// equal values at `±π` (so that `C` is continuous round the circle).
    pub fn new(table: Table) -> Result<Self, String> {
        let (x, c) = (table.abscissae(), table.moments());
        let tol = 1e-9;
        if x[0] > -PI + tol || x[x.len() - 1] < PI - tol {
            return Err(format!(
                "the angles must span −π to π (−180° to 180°), found {} to {} rad",
                x[0],
                x[x.len() - 1]
            ));
        }
        if let Some(v) = c.iter().find(|v| **v < 0.0) {
            return Err(format!(
                "the factors must not be negative (a negative factor pushes the joint further), found {v}"
            ));
        }
        let (lo, hi) = (table.eval(-PI).0, table.eval(PI).0);
        if (lo - hi).abs() > tol * (1.0 + lo.abs()) {
            return Err(format!("C(−π) = {lo} and C(π) = {hi} differ: the factor must be continuous round the circle"));
        }
        Ok(Self(table))
    }

    /// `C(γ)` for any `γ` (rad), wrapped into `(−π, π]`.
    pub fn value(&self, gamma: f64) -> f64 {
        self.0.eval((gamma + PI).rem_euclid(2.0 * PI) - PI).0
    }

    /// `C(γ)` over any [`Real`], exact through second derivatives.
    pub fn apply<T: Real>(&self, gamma: T) -> T {
        let g = gamma.re();
        self.0.apply(gamma - g + ((g + PI).rem_euclid(2.0 * PI) - PI))
    }
}

/// The joint's moment at one posture.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct JointMoment<T = f64> {
    /// `(α, γ, β)`, rad (`γ = 0` at `α = 0`).
    pub angles: [T; 3],
    /// `σ_α = M_f(α) C(γ) + D_f(α̇)`: the bending torque's magnitude along `−û` (N m).
    pub bending: T,
    /// `M_t(β) + D_t(ω · z_j)`: the torsion torque's magnitude along `−z_j` (N m).
    pub torsion: T,
    /// Stresses conjugate to the modes `(bending_p, bending_q, torsion)` (N m).
    pub stress: [T; 3],
}

/// The flexion-torsion joint's torque functions as a [`Law`] of its modes.
#[derive(Clone, Debug, PartialEq)]
pub struct FlexionTorsionLaw {
    bending: Option<TorqueFunction>,
    direction: Option<DirectionFactor>,
    torsion: Option<TorqueFunction>,
    bending_damping: Option<TorqueFunction>,
    torsion_damping: Option<TorqueFunction>,
    reference: [f64; 3],
}

impl FlexionTorsionLaw {
    /// The law from the bending function `M_f` (N m of α, rad), the direction factor `C` (absent:
    /// 1), the torsion function `M_t` (N m of β, rad), and the damping functions of the bending
    /// rate and of the torsion rate (N m of rad/s); `None` is zero.
    pub fn new(
        bending: Option<TorqueFunction>,
        direction: Option<DirectionFactor>,
        torsion: Option<TorqueFunction>,
        bending_damping: Option<TorqueFunction>,
        torsion_damping: Option<TorqueFunction>,
    ) -> Self {
        Self { bending, direction, torsion, bending_damping, torsion_damping, reference: [0.0; 3] }
    }

    /// The joint angles `(p0, q0, β0)` (rad) at which the modes are zero.
    pub fn set_reference(&mut self, angles: [f64; 3]) {
        self.reference = angles;
    }

    /// The joint angles at which the modes are zero (rad).
    pub fn reference(&self) -> [f64; 3] {
        self.reference
    }

    /// The moment at joint angles `p = α cos γ`, `q = α sin γ`, `β` (rad) and mode rates
    /// `(ṗ, q̇, β̇)` (rad/s).
    pub fn moment_at(&self, p: f64, q: f64, beta: f64, rates: &[f64; 3]) -> JointMoment {
        self.moment_of(p, q, beta, rates)
    }

    /// [`FlexionTorsionLaw::moment_at`] over any [`Real`] (dual numbers for the stresses'
    /// derivatives).
    pub fn moment_of<T: Real>(&self, p: T, q: T, beta: T, rates: &[T; 3]) -> JointMoment<T> {
        let zero = lift::<T>(0.0);
        let f = |m: &Option<TorqueFunction>, v: T| m.as_ref().map_or(zero, |m| m.apply(v));
        let alpha = hypot(p, q);
        let [pd, qd, bd] = *rates;
        // (1 − cos α)/α² without cancellation; 1/2 at α = 0
        let versine_over_a2 = if alpha.re() > 1e-4 {
            let half = (alpha * 0.5).sin();
            half * half * 2.0 / (alpha * alpha)
        } else {
            -(alpha * alpha / 24.0) + 0.5
        };
        let omega_z = bd - versine_over_a2 * (p * qd - q * pd);
        let torsion = f(&self.torsion, beta) + f(&self.torsion_damping, omega_z);
        if !(alpha.re() > STRAIGHT) {
            return JointMoment { angles: [alpha, zero, beta], bending: zero, torsion, stress: [zero, zero, torsion] };
        }
        let (cg, sg) = (p / alpha, q / alpha);
        let gamma = atan2(q, p);
        let alpha_rate = cg * pd + sg * qd;
        let factor = self.direction.as_ref().map_or(lift(1.0), |c| c.apply(gamma));
        let bending = f(&self.bending, alpha) * factor + f(&self.bending_damping, alpha_rate);
        // σ_γ / α = −T (1 − cos α)/α
        let tangential = -torsion * versine_over_a2 * alpha;
        JointMoment {
            angles: [alpha, gamma, beta],
            bending,
            torsion,
            stress: [bending * cg - tangential * sg, bending * sg + tangential * cg, torsion],
        }
    }

    /// The stresses `σ` (3, N m) over any [`Real`] for mode values `e` and rates `ė` (3 each).
    fn stress_of<T: Real>(&self, e: &[T], ed: &[T], sigma: &mut [T]) {
        match (e.get(..3), ed.get(..3), sigma.get_mut(..3)) {
            (Some(e), Some(ed), Some(s)) => {
                let r = self.reference;
                let m = self.moment_of(e[0] + r[0], e[1] + r[1], e[2] + r[2], &[ed[0], ed[1], ed[2]]);
                s.copy_from_slice(&m.stress);
            }
            _ => sigma.fill(lift(f64::NAN)),
        }
    }
}

// Stresses `σ` (3, N m) for mode values `e` (3, rad) and rates `ė` (3, rad/s); exact tangents
// and second partials through the law's generic form (a table's curvature jumps at its nodes).
impl Law for FlexionTorsionLaw {
    mollier_core::law_by_dual_numbers!(6);

    /// `∫_0^α M_f` (J) when the law is conservative apart from its damping: a bending function
    /// without direction factor and no torsion function. (A torsion torque about `z_j` as a
    /// function of `β` does work round closed paths of the bending direction — its `σ_γ` is not
    /// a gradient —, and so does `M_f C(γ)` with a varying `C`.)
    fn energy(&self, e: &[f64]) -> Option<f64> {
        let e = e.get(..3)?;
        if self.direction.is_some() || self.torsion.is_some() {
            return None;
        }
        let alpha = (e[0] + self.reference[0]).hypot(e[1] + self.reference[1]);
        Some(self.bending.as_ref().map_or(0.0, |m| m.integral(0.0, alpha)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::law::{stress_hessian_error, tangent_error};
    use mollier_joint_common::Interpolation;

    /// A monotone cubic bending table, a direction factor, a cubic torsion and both dampings,
    /// bent in every direction between the tables' nodes, with rates: the exact tangents against
    /// central differences of the stresses, and the second partials of `wᵀσ` against central
    /// differences of the exact tangents.
    #[test]
    fn tangents_and_second_partials_are_the_stress_derivatives() {
        let table = |x: Vec<f64>, m: Vec<f64>| Table::new(x, m, Interpolation::MonotoneCubic).expect("a table");
        let direction =
            DirectionFactor::new(table(vec![-PI, -PI / 2.0, 0.0, PI / 2.0, PI], vec![0.8, 1.0, 1.3, 1.0, 0.8]))
                .expect("a factor");
        let mut law = FlexionTorsionLaw::new(
            Some(TorqueFunction::Table(table(
                vec![0.0, 0.6, 1.0, 1.4, 1.8, 2.2],
                vec![0.0, 0.6, 2.5, 8.0, 22.0, 60.0],
            ))),
            Some(direction),
            Some(TorqueFunction::Polynomial(vec![1.5, 0.0, 4.0])),
            Some(TorqueFunction::Polynomial(vec![0.5, 0.0, 0.2])),
            Some(TorqueFunction::linear(0.1)),
        );
        law.set_reference([0.05, 0.1, -0.1]);
        let w = [0.9, -1.4, 0.6];
        for k in 0..24 {
            let gamma = 0.2618 * k as f64 + 0.05;
            for alpha in [0.02, 0.3, 0.8, 1.2, 1.7, 2.5] {
                let e = [alpha * gamma.cos() - 0.05, alpha * gamma.sin() - 0.1, 0.03 * k as f64 - 0.3];
                let ed = [0.9 * (0.7 * k as f64).sin(), -1.1 * (0.3 * k as f64).cos(), 0.4];
                let t = tangent_error(&law, &e, &ed, 1e-6);
                assert!(t < 1e-6, "tangent at γ {gamma}, α {alpha}: off by {t:.2e}");
                // step 1e-7: the differences' truncation error near the pole (α = 0.02: 6.9e-6
                // at a step of 1e-6, falling as its square; 1.0e-7 at most here)
                let h = stress_hessian_error(&law, &e, &ed, &w, 1e-7).expect("given");
                assert!(h < 1e-6, "second partials at γ {gamma}, α {alpha}: off by {h:.2e}");
            }
        }
    }
}
