//! `ModelBuilder::add_rotational_inertia` judges a tensor the same in any unit: a tensor and the
//! same tensor times 1e150 (or 1e-150) are accepted or refused together.

use mollier_core::model::{BuildError, ModelBuilder};

/// `Some(message)` when the builder refuses `inertia` at an orientation node.
fn refused(inertia: [[f64; 3]; 3]) -> Option<String> {
    let mut b = ModelBuilder::new();
    let l = b.orientation_node("l", [1.0, 0.0, 0.0, 0.0]).expect("node");
    b.add_rotational_inertia(l, inertia);
    match b.build() {
        Err(e @ BuildError::BadValue { .. }) => Some(e.to_string()),
        _ => None,
    }
}

fn scaled(m: [[f64; 3]; 3], s: f64) -> [[f64; 3]; 3] {
    m.map(|r| r.map(|v| v * s))
}

#[test]
fn inertia_is_judged_at_every_scale() {
    // a thin rod (principal moments 1, 1, 0 rotated): valid; its eigenvalues are 0, 1, 1
    let rod = [[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.0, 0.0, 1.0]];
    // diagonal entries non-negative, yet the product of inertia makes it indefinite
    // (eigenvalues of the upper block: 1 - 2 = -1 and 1 + 2 = 3)
    let indefinite = [[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let asymmetric = [[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for s in [1.0, 1e-150, 1e150, 1e300] {
        assert_eq!(refused(scaled(rod, s)), None, "rod x {s}");
        assert!(refused(scaled(indefinite, s)).is_some(), "indefinite x {s}");
        assert!(refused(scaled(asymmetric, s)).is_some(), "asymmetric x {s}");
    }
    let mut nan = rod;
    nan[0][1] = f64::NAN;
    assert!(refused(nan).is_some());
    assert!(refused(scaled(rod, f64::INFINITY)).is_some());
    assert_eq!(refused([[0.0; 3]; 3]), None, "a point mass has no rotational inertia");
}
