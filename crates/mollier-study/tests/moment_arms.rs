//! Every muscle's moment arms (minus the first-order transfer functions of its length, from the
//! kernel and the elements' analytic derivatives, wrapping included) against central finite
//! differences of its length along the motion (positions solved at q ± h).

mod common;

use common::*;

#[test]
fn moment_arms_match_finite_differences_of_the_lengths() {
    let study = abduction_with(|s| s.motion.frames = 7);
    let k = study.kinematics();
    let nq = study.compiled.model.n_q();
    let mut worst = (0.0, String::new());
    for (f, frame) in k.frames.iter().zip(&study.motion.frames) {
        let f = f.as_ref().unwrap();
        for (i, m) in study.muscles().iter().enumerate() {
            for j in 0..nq {
                let analytic = f.moment_arms[i * nq + j];
                let fd = -f.length_differences[i * nq + j];
                // m/rad or m/m: absolute 1e-7 m (a tenth of a micrometre per radian) plus 1e-6
                let err = (analytic - fd).abs() / (1e-7 + 1e-6 * fd.abs());
                if err > worst.0 {
                    worst = (
                        err,
                        format!(
                            "{} / {} at {:.1} deg: {analytic} vs {fd}",
                            m.name, study.compiled.inputs[j].name, frame.elevation
                        ),
                    );
                }
            }
        }
    }
    assert!(worst.0 <= 1.0, "worst: {}", worst.1);
}
