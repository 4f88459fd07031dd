//! Messages of kinematic failures say what went wrong, never a success as the reason.

use mollier_core::KinematicsError;
use mollier_core::diagnostics::WellPosedness;

fn verdict(over: usize) -> WellPosedness {
    WellPosedness {
        dof: 1,
        equations: 7,
        unknowns: 7,
        rank: Some(7 - over),
        over,
        under: over,
        redundant: Vec::new(),
        free: Vec::new(),
        floating_parts: Vec::new(),
        note: None,
    }
}

#[test]
fn a_singular_frame_is_not_explained_as_well_posed() {
    // the rank check passed where the factorization failed: the configuration is singular
    let ok = verdict(0);
    assert!(ok.is_well_posed());
    let m = KinematicsError::NotWellPosed(Box::new(ok)).to_string();
    assert!(!m.contains("well posed"), "{m}");
    assert!(m.contains("singular at this configuration"), "{m}");
    // a real defect keeps the kernel's findings
    let m = KinematicsError::NotWellPosed(Box::new(verdict(1))).to_string();
    assert!(m.starts_with("not well posed: over-constrained by 1"), "{m}");
}
