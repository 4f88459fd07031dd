//! The derivative tests' actuators.

use mollier_ocp::Actuator;

/// An actuator on each of the first `n` inputs, `motor{k}` on input `k`: optimal force 3 (N m
/// for a hinge, N for a slider), controls in [−9, 9].
pub fn motors(n: usize) -> Vec<Actuator> {
    (0..n)
        .map(|k| Actuator { name: format!("motor{k}"), coordinate: k, optimal_force: 3.0, bounds: [-9.0, 9.0] })
        .collect()
}
