//! Runs over motions: parallel equals sequential, reused solvers equal fresh ones, dynamics by
//! virtual power, failures reported as such, bad studies refused.

use mollier_core::dynamics::{Load, inverse_dynamics};
use mollier_core::{Data, ElementId, ModeId, NodeId, solve_positions};
use mollier_optim::{
    Criterion, Frame, FrameResult, JointCone, LoadSharing, Muscle, Reserve, RunOptions, SetupError, Sign,
    SignConstraint, Status, Study, Summary,
};

use crate::common::*;
use crate::cone::{cone_for, spatial_arm};

fn motion(n: usize) -> Vec<Frame> {
    (0..n)
        .map(|k| {
            let t = k as f64 * 0.02;
            let w = [2.0, 1.5, 3.0];
            let amp = [0.4, 0.3, 0.5];
            let q = (0..3).map(|j| amp[j] * (w[j] * t).sin()).collect();
            let qd = (0..3).map(|j| amp[j] * w[j] * (w[j] * t).cos()).collect();
            let qdd = (0..3).map(|j| -amp[j] * w[j] * w[j] * (w[j] * t).sin()).collect();
            Frame { time: t, q, qd, qdd, loads: Vec::new() }
        })
        .collect()
}

fn study(arm: &Arm, criterion: Criterion) -> Study {
    let muscles = (0..arm.muscles.len()).map(|i| Muscle::new(arm.muscles[i], 2e-3, arm.l0[i])).collect();
    let mut s = Study::new(muscles, criterion);
    s.cone = Some(cone_for(arm, 0.7744, 0.6728, true));
    s.reserves = vec![Reserve { input: 2, weight: 1e3 }];
    s
}

fn same(a: &FrameResult, b: &FrameResult) -> bool {
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    a.status == b.status
        && bits(&a.forces) == bits(&b.forces)
        && bits(&a.reserves) == bits(&b.reserves)
        && bits(&a.reactions) == bits(&b.reactions)
        && a.cone_force.map(|f| bits(&f)) == b.cone_force.map(|f| bits(&f))
        && a.stability_index.map(f64::to_bits) == b.stability_index.map(f64::to_bits)
        && a.residual.map(f64::to_bits) == b.residual.map(f64::to_bits)
        && a.objective.map(f64::to_bits) == b.objective.map(f64::to_bits)
        && a.iterations == b.iterations
}

#[test]
fn parallel_and_sequential_runs_are_identical() {
    let arm = spatial_arm(Some(2.0));
    let sharing = LoadSharing::new(&arm.model, study(&arm, Criterion::Activations)).unwrap();
    let frames = motion(40);
    let seq = sharing.run(&frames, RunOptions { parallel: false, chunk: 8, ..RunOptions::default() });
    let par = sharing.run(&frames, RunOptions { parallel: true, chunk: 8, ..RunOptions::default() });
    assert_eq!(seq.len(), 40);
    for (k, (a, b)) in seq.iter().zip(&par).enumerate() {
        assert!(a.status.is_success(), "frame {k}: {}", a.status);
        assert!(same(a, b), "frame {k} differs:\n{a:?}\n{b:?}");
        assert!(a.stability_index.unwrap() <= 1e-9, "in the cone ⇒ index <= 0");
    }
    let s = Summary::of(sharing.study(), &seq);
    assert_eq!((s.frames, s.solved, s.failed, s.criterion.as_str()), (40, 40, 0, "c"));
    assert!(s.ms_per_frame > 0.0);
}

#[test]
fn reused_solver_matches_a_fresh_one() {
    let arm = spatial_arm(Some(2.0));
    for criterion in [Criterion::Forces, Criterion::MaxStress] {
        let sharing = LoadSharing::new(&arm.model, study(&arm, criterion)).unwrap();
        let frames = motion(12);
        let mut data = Data::new(&arm.model);
        let mut ws = sharing.workspace();
        for f in &frames {
            let reused = sharing.frame(&mut ws, &mut data, f);
            let fresh = sharing.frame(&mut sharing.workspace(), &mut data, f);
            assert!(reused.status.is_success() && fresh.status.is_success());
            let d = rel_diff(&reused.forces, &fresh.forces, 1.0 + fresh.forces.iter().fold(0.0f64, |m, v| m.max(*v)));
            assert!(d < 1e-8, "t = {}: {:?} vs {:?}", f.time, reused.forces, fresh.forces);
        }
    }
}

/// With rates, accelerations and gravity: the muscles' generalized forces `−Σ F_i ∂e_i/∂q_j`
/// (first-order transfer function) plus the reserve balance the kernel's inverse dynamics.
#[test]
fn dynamic_frames_balance_inverse_dynamics() {
    let arm = spatial_arm(Some(2.0));
    let sharing = LoadSharing::new(&arm.model, study(&arm, Criterion::Stresses)).unwrap();
    let mut data = Data::new(&arm.model);
    let mut ws = sharing.workspace();
    for f in motion(6).iter().skip(1) {
        let r = sharing.frame(&mut ws, &mut data, f);
        assert!(r.status.is_success(), "{}", r.status);
        let tau = inverse_dynamics(&arm.model, &mut data, &f.qd, &f.qdd, &[]).unwrap();
        let jac = length_jacobian(&arm.model, &mut data, &arm.muscles);
        for j in 0..3 {
            let muscles: f64 = (0..arm.muscles.len()).map(|i| r.forces[i] * jac[i][j]).sum();
            let reserve = if j == 2 { r.reserves[0] } else { 0.0 };
            let d = tau[j] + muscles - reserve;
            assert!(
                d.abs() < 1e-9 * (1.0 + tau[j].abs()),
                "input {j}: τ {} + muscles {muscles} − reserve {reserve} = {d}",
                tau[j]
            );
        }
    }
}

#[test]
fn failures_are_reported_not_panics() {
    let arm = spatial_arm(None);
    let sharing = LoadSharing::new(&arm.model, study(&arm, Criterion::Forces)).unwrap();
    let mut data = Data::new(&arm.model);
    let mut ws = sharing.workspace();
    let bad = Frame::at_rest(0.0, vec![0.1, f64::NAN, 0.0]);
    let r = sharing.frame(&mut ws, &mut data, &bad);
    assert!(matches!(r.status, Status::Kinematics(_)), "{}", r.status);
    assert!(r.forces.iter().all(|f| f.is_nan()) && r.residual.is_none());
    let short = Frame { qd: vec![0.0; 2], ..Frame::at_rest(0.0, vec![0.1, 0.0, 0.0]) };
    let r = sharing.frame(&mut ws, &mut data, &short);
    assert_eq!(r.status.label(), "kinematics_failed");
    // a load the muscles cannot hold, and no reserve: infeasible
    let mut s = study(&arm, Criterion::Forces);
    s.reserves.clear();
    let weak = LoadSharing::new(&arm.model, s).unwrap();
    let mut ws2 = weak.workspace();
    let mut f = Frame::at_rest(0.0, vec![0.1, 0.0, 0.0]);
    f.loads = vec![Load::Force { node: arm.tip, force: [0.0, -1e5, 0.0] }];
    let r = weak.frame(&mut ws2, &mut data, &f);
    assert_eq!(r.status.label(), "solver_failed", "{}", r.status);
    assert!(r.residual.is_some_and(|v| v.is_finite() && v > 0.0));
    // the workspace goes on: the next frame solves
    let ok = weak.frame(&mut ws2, &mut data, &Frame::at_rest(0.0, vec![0.1, 0.0, 0.0]));
    assert!(ok.status.is_success(), "{}", ok.status);
    // and so does the first one after a kinematic failure
    let ok = sharing.frame(&mut ws, &mut data, &Frame::at_rest(0.0, vec![0.1, 0.0, 0.0]));
    assert!(ok.status.is_success(), "{}", ok.status);
}

#[test]
fn bad_studies_are_refused() {
    let arm = spatial_arm(None);
    let model = &arm.model;
    let good = || study(&arm, Criterion::Forces);
    let err = |s: Study| LoadSharing::new(model, s).unwrap_err();
    let mut s = good();
    s.muscles[0].pcsa = 0.0;
    assert!(matches!(err(s), SetupError::Muscle { index: 0, .. }));
    let mut s = good();
    s.muscles[1].mode = s.muscles[0].mode;
    assert!(err(s).to_string().contains("twice"));
    // a fixed mode is not a muscle; a free mode has no reaction
    let fixed = model.mode_id(arm.scapula_beam, 0);
    let mut s = good();
    s.muscles[0].mode = fixed;
    assert!(matches!(err(s), SetupError::Muscle { .. }));
    let mut s = good();
    s.signs = vec![SignConstraint { mode: arm.muscles[0], sign: Sign::Tension }];
    assert!(matches!(err(s), SetupError::Sign { .. }));
    let mut s = good();
    s.signs = vec![SignConstraint { mode: ModeId::new(10_000), sign: Sign::Tension }];
    assert!(matches!(err(s), SetupError::Sign { .. }));
    let mut s = good();
    s.muscles[1].mode = ModeId::new(10_000);
    let e = err(s);
    assert!(matches!(&e, SetupError::Muscle { index: 1, name, .. } if name == "mode #10000"), "{e}");
    assert!(e.to_string().contains(&format!("the model has {} modes", model.n_e())), "{e}");
    let mut s = good();
    s.signs = vec![SignConstraint { mode: fixed, sign: Sign::Tension }; 2];
    let e = err(s);
    assert!(matches!(&e, SetupError::Sign { index: 1, .. }) && e.to_string().contains("twice"), "{e}");
    let mut s = good();
    s.reserves = vec![Reserve { input: 7, weight: 1.0 }];
    assert!(matches!(err(s), SetupError::Reserve { .. }));
    let mut s = good();
    s.reserves = vec![Reserve { input: 0, weight: -1.0 }];
    assert!(matches!(err(s), SetupError::Reserve { .. }));
    let mut s = good();
    s.criterion = Criterion::Weighted(vec![1.0; 3]);
    assert!(matches!(err(s), SetupError::Parameter(_)));
    let mut s = good();
    s.specific_tension = f64::NAN;
    assert!(matches!(err(s), SetupError::Parameter(_)));
    let mut s = good();
    s.muscles.clear();
    assert!(matches!(err(s), SetupError::Parameter(_)));
    let cone = |f: &dyn Fn(&mut JointCone)| {
        let mut s = good();
        f(s.cone.as_mut().unwrap());
        err(s)
    };
    assert!(matches!(cone(&|c| c.rotation[0][0] = 1.0), SetupError::Cone(_)));
    assert!(matches!(cone(&|c| c.half_angle_y = 2.0), SetupError::Cone(_)));
    assert!(matches!(cone(&|c| c.elements = vec![arm.muscle_elements[0]]), SetupError::Cone(_)));
    assert!(matches!(cone(&|c| c.elements = vec![ElementId::new(9999)]), SetupError::Cone(_)));
    assert!(matches!(cone(&|c| c.body = arm.joint), SetupError::Cone(_)));
    assert!(matches!(cone(&|c| c.node = NodeId::new(9999)), SetupError::Cone(_)));
    // the criterion parses from the CLI's letters
    assert_eq!("b".parse::<Criterion>().unwrap(), Criterion::Stresses);
    assert_eq!("D".parse::<Criterion>().unwrap(), Criterion::MaxStress);
    assert!("e".parse::<Criterion>().is_err());
    // a good study gives names for the outputs
    let ls = LoadSharing::new(model, good()).unwrap();
    assert_eq!(ls.muscle_names()[0], "muscle0");
    assert_eq!(ls.reserve_names(), vec!["gh2.rotation".to_string()]);
}

/// The stresses and reactions of a solved frame satisfy kinetostatics at every dependent
/// coordinate (no residual forces at the nodes).
#[test]
fn nodal_equilibrium_of_the_solution() {
    let arm = spatial_arm(Some(1.0));
    let sharing = LoadSharing::new(&arm.model, study(&arm, Criterion::Forces)).unwrap();
    let mut data = Data::new(&arm.model);
    let f = &motion(3)[2];
    let r = sharing.frame(&mut sharing.workspace(), &mut data, f);
    assert!(r.status.is_success());
    let mut sigma = vec![0.0; arm.model.n_e()];
    for (i, m) in arm.muscles.iter().enumerate() {
        sigma[m.index()] = r.forces[i];
    }
    solve_positions(&arm.model, &mut data, &f.q).unwrap();
    let ks = mollier_core::dynamics::kinetostatics(&arm.model, &mut data, &f.qd, &f.qdd, Some(&sigma), &[]).unwrap();
    let tau = mollier_core::dynamics::driving_from_kinetostatics(&arm.model, &data, &ks);
    assert!(tau[0].abs() < 1e-9 && tau[1].abs() < 1e-9, "{tau:?}");
    assert!((tau[2] - r.reserves[0]).abs() < 1e-9, "{tau:?} vs reserve {}", r.reserves[0]);
}

/// Criterion (d) through the load-sharing benchmark's motion (100 muscles, reserves): every frame
/// solved and passing the independent check. At t = 0.02 clarabel's first stage (a linear
/// program) stops `AlmostSolved` holding reserves with which no force within its bounds balances
/// the frame (a force 3.4e-6 of `Fmax` beyond its bound); the second stage then frees them.
#[test]
fn max_stress_solves_every_frame_of_the_synthetic_motion() {
    use crate::synthetic::{frames, study, synthetic};
    let s = synthetic();
    let sharing =
        mollier_optim::LoadSharing::new(&s.model, study(&s, mollier_optim::Criterion::MaxStress, false)).unwrap();
    let mut data = mollier_core::Data::new(&s.model);
    let mut ws = sharing.workspace();
    for f in frames(s.model.n_q(), 200) {
        let r = sharing.frame(&mut ws, &mut data, &f);
        assert!(r.status.is_success(), "t = {}: {}", f.time, r.status);
    }
}
