//! The curves of De Groote et al. (2016), *Evaluation of direct collocation optimal control
//! problem formulations for solving the muscle redundancy problem* (Ann Biomed Eng 44:2922),
//! supplement, with the constants OpenSim 4.6's `DeGrooteFregly2016Muscle` uses: where the
//! supplement's rounded values miss the curves' defining points, OpenSim re-solved them (`b11`
//! so that `f_L(1) = 1`; `d1`, `d4` so that `f_V(−1) = 0` and `f_V(0) = 1`; `c2 = c3 = 0.2`/`1`
//! so that the tendon is slack at zero strain), and its passive curve passes through 0 at
//! `L̃ = 0.2` rather than at 1. Each curve is written once over dual numbers: its value on `f64`,
//! its slopes on dual and hyper-dual numbers.
//!
//! Arguments are normalized: fibre length `L̃ = L_CE/L_CEopt`, fibre velocity
//! `ṽ = L̇_CE/(v_max L_CEopt)`, tendon length `L̃_T = L_T/L_slack`.

use num_dual::DualNum;

/// `(b1, b2, b3, b4)` of the three Gaussian-like terms of the active force-length curve.
const ACTIVE: [[f64; 4]; 3] = [
    [0.8150671134243542, 1.055033428970575, 0.162384573599574, 0.063303448465465],
    [0.433004984392647, 0.716775413397760, -0.029947116970696, 0.200356847296188],
    [0.1, 1.0, 0.353553390593274, 0.0],
];
/// The force-velocity curve's `d1..d4`.
const FV: [f64; 4] = [-0.3211346127989808, -8.149, -0.374, 0.8825327733249912];
/// The passive curve's exponential shape factor `kPE`.
const K_PE: f64 = 4.0;
/// The normalized fibre length at which the passive force vanishes.
const MIN_FIBRE: f64 = 0.2;
/// The tendon curve's `c1, c2, c3`.
const TENDON: [f64; 3] = [0.2, 1.0, 0.2];

/// The active force-length multiplier at normalized fibre length `l`, the curve widened by
/// `scale` about its peak at 1 (`active_force_width_scale`).
pub(super) fn active_force_length<T: DualNum<Primitive = f64> + Copy>(l: T, scale: f64) -> T {
    let x = (l - 1.0) / scale + 1.0;
    let term = |[b1, b2, b3, b4]: [f64; 4]| {
        let d = x - b2;
        let w = x * b4 + b3;
        (d * d / (w * w) * -0.5).exp() * b1
    };
    term(ACTIVE[0]) + term(ACTIVE[1]) + term(ACTIVE[2])
}

/// The force-velocity multiplier at normalized fibre velocity `v` (positive lengthening):
/// `d1 ln(t + √(t² + 1)) + d4`, `t = d2 v + d3` (an asinh).
pub(super) fn force_velocity<T: DualNum<Primitive = f64> + Copy>(v: T) -> T {
    let [d1, d2, d3, d4] = FV;
    let t = v * d2 + d3;
    (t + (t * t + 1.0).sqrt()).ln() * d1 + d4
}

/// The passive force-length multiplier at normalized fibre length `l`, for the strain `e0` at
/// which it reaches 1: `(exp(kPE (l − 1)/e0) − o)/(exp(kPE) − o)`, `o = exp(kPE (0.2 − 1)/e0)`.
pub(super) fn passive_force_length<T: DualNum<Primitive = f64> + Copy>(l: T, e0: f64) -> T {
    let offset = (K_PE * (MIN_FIBRE - 1.0) / e0).exp();
    (((l - 1.0) * (K_PE / e0)).exp() - offset) / (K_PE.exp() - offset)
}

/// The tendon's stiffness parameter `kT` for the strain at which its force reaches `F_max`.
pub(super) fn tendon_stiffness(strain: f64) -> f64 {
    let [c1, c2, c3] = TENDON;
    ((1.0 + c3) / c1).ln() / (1.0 + strain - c2)
}

/// The normalized tendon force at normalized tendon length `l` for stiffness parameter `kt`
/// ([`tendon_stiffness`]): `c1 exp(kT (l − c2)) − c3`, slightly negative below slack.
pub(super) fn tendon_force_length<T: DualNum<Primitive = f64> + Copy>(l: T, kt: f64) -> T {
    let [c1, c2, c3] = TENDON;
    ((l - c2) * kt).exp() * c1 - c3
}

/// The activation rate `ȧ` at activation `a` and excitation `u` for time constants `ta`, `td`
/// (s) and smoothing `b`: `[(f + ½)/(T_act z) + (½ − f) z/T_deact] (u − a)` with
/// `f = ½ tanh(b (u − a))`, `z = ½ + 3a/2` (the time constants scale with activation).
pub(super) fn activation_rate<T: DualNum<Primitive = f64> + Copy>(a: T, u: T, ta: f64, td: f64, b: f64) -> T {
    let z = a * 1.5 + 0.5;
    let f = ((u - a) * b).tanh() * 0.5;
    ((f + 0.5) / (z * ta) + (-f + 0.5) * z / td) * (u - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The points the curves are defined by (OpenSim's comments and De Groote et al.'s text):
    /// written from the definitions, not from the code.
    #[test]
    fn the_curves_pass_through_their_defining_points() {
        assert!((active_force_length(1.0f64, 1.0) - 1.0).abs() < 1e-12);
        assert!((force_velocity(0.0f64) - 1.0).abs() < 1e-12);
        assert!(force_velocity(-1.0f64).abs() < 1e-12);
        assert!(passive_force_length(0.2f64, 0.6).abs() < 1e-15);
        assert!((passive_force_length(1.6f64, 0.6) - 1.0).abs() < 1e-12);
        let kt = tendon_stiffness(0.049);
        assert!((tendon_force_length(1.049f64, kt) - 1.0).abs() < 1e-12);
        assert!(tendon_force_length(1.0f64, kt).abs() < 1e-15);
        // far below slack the tendon pushes with at most c3 = 0.2
        assert!((tendon_force_length(0.0f64, kt) + 0.2).abs() < 1e-12);
        // activation: at u = a nothing moves; the rates' limits for a sharp switch are
        // (u − a)/(T_act z) rising and (u − a) z/T_deact falling
        assert_eq!(activation_rate(0.3f64, 0.3, 0.015, 0.06, 10.0), 0.0);
        let rise = activation_rate(0.2f64, 1.0, 0.015, 0.06, 1e6);
        assert!((rise - 0.8 / (0.015 * 0.8)).abs() < 1e-9, "{rise}");
        let fall = activation_rate(0.6f64, 0.0, 0.015, 0.06, 1e6);
        assert!((fall + 0.6 * 1.4 / 0.06).abs() < 1e-9, "{fall}");
    }
}
