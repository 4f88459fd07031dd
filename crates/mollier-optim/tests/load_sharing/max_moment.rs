//! Maximum isometric moments ([`MaxMoment`]) against closed forms on the one-joint arm, and the
//! ordering that removing a constraint never lowers a maximum.

use mollier_core::dynamics::Load;
use mollier_core::{Data, solve_positions};
use mollier_optim::{Criterion, Direction, MaxMoment, Muscle, Study};

use crate::common::*;
use crate::cone::cone_for;

const Q: f64 = 0.3;

fn flexion() -> Vec<Direction> {
    vec![Direction { input: 0, positive: "flexion".into(), negative: "extension".into() }]
}

/// Four muscles: three with positive moment arms at Q, one with a negative one; the third away
/// from its optimal length so that `Fmax(l) < PCSA · T`.
fn case() -> (Arm, Vec<Muscle>) {
    let origins = [[-0.05, 0.20, 0.0], [0.02, 0.25, 0.0], [0.0, -0.2, 0.0], [0.05, 0.15, 0.0]];
    let insertions = [[0.10, 0.02, 0.0], [0.15, -0.01, 0.0], [0.05, 0.0, 0.0], [0.2, 0.015, 0.0]];
    let arm = arm(&origins, &insertions, [0.3, 0.0, 0.0], false);
    let pcsa = [3e-4, 5e-4, 4e-4, 2e-4];
    let muscles = (0..4)
        .map(|i| {
            let m = Muscle::new(arm.muscles[i], pcsa[i], arm.l0[i]);
            if i == 1 { m.with_optimal_length(0.7 * arm.l0[i]) } else { m }
        })
        .collect();
    (arm, muscles)
}

fn solve(arm: &Arm, study: Study, load: &[Load]) -> [mollier_optim::MomentResult; 2] {
    let mm = MaxMoment::new(&arm.model, study, flexion(), &[]).unwrap();
    let mut data = Data::new(&arm.model);
    let mut ws = mm.workspace();
    let mut out = mm.posture(&mut ws, &mut data, &[Q], load);
    out.remove(0)
}

#[test]
fn one_joint_maximum_is_the_sum_of_fmax_times_arm_over_the_muscles_with_the_right_sign() {
    let (arm, muscles) = case();
    let (len, r, _) = arm.planar(Q);
    assert!(r.iter().filter(|v| **v > 0.0).count() >= 2 && r.iter().any(|v| *v < 0.0), "moment arms {r:?}");
    let fmax: Vec<f64> = (0..4)
        .map(|i| {
            let lo = muscles[i].l_opt();
            muscles[i].pcsa * T * (-((len[i] - lo) / (W * lo)).powi(2)).exp()
        })
        .collect();
    let pos: f64 = (0..4).filter(|&i| r[i] > 0.0).map(|i| r[i] * fmax[i]).sum();
    let neg: f64 = (0..4).filter(|&i| r[i] < 0.0).map(|i| -r[i] * fmax[i]).sum();
    for (load, hold) in [(vec![], 0.0), (vec![Load::Force { node: arm.tip, force: [0.0, -20.0, 0.0] }], 1.0)] {
        let m_hold = hold * arm.holding_moment(Q, &[0.0, -20.0, 0.0]);
        let [up, down] = solve(&arm, Study::new(muscles.clone(), Criterion::Stresses), &load);
        assert!(
            up.frame.status.is_success() && down.frame.status.is_success(),
            "{} {}",
            up.frame.status,
            down.frame.status
        );
        // the device feels the muscles' moment less the load's (flexion) or plus it (extension)
        assert!((up.moment - (pos - m_hold)).abs() < 1e-7 * pos, "flexion {} vs {}", up.moment, pos - m_hold);
        assert!((down.moment - (neg + m_hold)).abs() < 1e-7 * pos, "extension {} vs {}", down.moment, neg + m_hold);
        // at the maximum every agonist pulls with Fmax(l), the antagonists not at all
        for i in 0..4 {
            let (want_up, want_down) = if r[i] > 0.0 { (fmax[i], 0.0) } else { (0.0, fmax[i]) };
            assert!((up.frame.forces[i] - want_up).abs() < 1e-4 * fmax[i], "flexion muscle {i}: {:?}", up.frame.forces);
            assert!(
                (down.frame.forces[i] - want_down).abs() < 1e-4 * fmax[i],
                "extension muscle {i}: {:?}",
                down.frame.forces
            );
        }
        // the device's torque on the input is minus the moment (flexion) within the slack
        assert!((up.frame.reserves[0] + up.moment).abs() < 1e-5 * pos, "{:?}", up.frame.reserves);
    }
}

#[test]
fn removing_a_constraint_never_lowers_the_maximum() {
    // the planar "shoulder" of cone.rs: a deltoid and two cuff muscles; a narrowing cone binds
    let origins = [[-0.05, 0.15, 0.0], [-0.12, 0.04, 0.0], [-0.12, -0.01, 0.0], [-0.05, -0.12, 0.0]];
    let insertions = [[0.12, 0.01, 0.0], [0.02, 0.025, 0.0], [0.03, 0.03, 0.0], [0.1, -0.01, 0.0]];
    let arm = arm(&origins, &insertions, [0.3, 0.0, 0.0], false);
    let muscles: Vec<Muscle> = (0..4).map(|i| Muscle::new(arm.muscles[i], 5e-4, arm.l0[i])).collect();
    let load = [Load::Force { node: arm.tip, force: [0.0, -10.0, 0.0] }];
    let free = solve(&arm, Study::new(muscles.clone(), Criterion::Stresses), &load);
    let mut previous = [free[0].moment, free[1].moment];
    let mut bound = false;
    for half in [1.2, 0.6, 0.3, 0.15, 0.08] {
        let mut study = Study::new(muscles.clone(), Criterion::Stresses);
        study.cone = Some(cone_for(&arm, half, half, true));
        let got = solve(&arm, study, &load);
        for s in 0..2 {
            let m = got[s].moment;
            assert!(got[s].frame.status.is_success(), "half-angle {half}: {}", got[s].frame.status);
            // a narrower cone is a tighter constraint: never a larger maximum
            assert!(
                m <= previous[s] + 1e-7 * free[0].moment.abs(),
                "half-angle {half}, sense {s}: {m} > {}",
                previous[s]
            );
            bound |= m < previous[s] - 1e-3 * free[0].moment.abs();
            previous[s] = m;
            let index = got[s].frame.stability_index.expect("the joint force is reported");
            assert!(index <= 1e-6, "the joint force stays in the cone: index {index}");
        }
    }
    assert!(bound, "the cone lowers a maximum somewhere in the sweep");
}

#[test]
fn a_free_input_is_held_by_the_device_and_an_unheld_one_is_in_equilibrium() {
    // three hinges in series: maximise about the first; the others either free or balanced
    let origins = [
        [-0.05, 0.20, 0.02],
        [0.02, 0.25, -0.03],
        [0.0, -0.2, 0.01],
        [0.05, 0.15, 0.04],
        [0.0, 0.1, -0.08],
        [0.0, 0.12, 0.09],
    ];
    let insertions = [
        [0.10, 0.02, 0.01],
        [0.15, -0.01, -0.02],
        [0.05, 0.0, 0.02],
        [0.2, 0.015, 0.03],
        [0.12, 0.0, -0.03],
        [0.1, 0.01, 0.03],
    ];
    let arm = arm(&origins, &insertions, [0.3, 0.0, 0.0], true);
    let muscles: Vec<Muscle> = (0..6).map(|i| Muscle::new(arm.muscles[i], 4e-4, arm.l0[i])).collect();
    let q = [0.2, 0.1, -0.1];
    let run = |free: &[usize]| {
        let mm = MaxMoment::new(&arm.model, Study::new(muscles.clone(), Criterion::Stresses), flexion(), free).unwrap();
        let mut data = Data::new(&arm.model);
        solve_positions(&arm.model, &mut data, &q).unwrap();
        let mut ws = mm.workspace();
        let out = mm.posture(&mut ws, &mut data, &q, &[]);
        assert_eq!(mm.held_inputs(), [&[0][..], free].concat());
        out.into_iter().next().unwrap()
    };
    let balanced = run(&[]);
    let held = run(&[1, 2]);
    for s in 0..2 {
        assert!(balanced[s].frame.status.is_success() && held[s].frame.status.is_success());
        // holding more inputs removes equalities: never a smaller maximum
        assert!(
            held[s].moment >= balanced[s].moment - 1e-9 * held[s].moment.abs(),
            "{} < {}",
            held[s].moment,
            balanced[s].moment
        );
    }
    assert!(
        held[0].moment > balanced[0].moment * 1.001 || held[1].moment > balanced[1].moment * 1.001,
        "holding the other inputs helps"
    );
    // errors: no direction, an input out of range
    let err = MaxMoment::new(&arm.model, Study::new(muscles.clone(), Criterion::Stresses), vec![], &[]).unwrap_err();
    assert!(err.to_string().contains("no direction"), "{err}");
    let err =
        MaxMoment::new(&arm.model, Study::new(muscles.clone(), Criterion::Stresses), flexion(), &[7]).unwrap_err();
    assert!(err.to_string().contains("free input #0"), "{err}");
}
