//! The joint cone: a planar case solved by hand (the unconstrained optimum leaves the cone, the
//! constrained one lies on its boundary), a 3-D case checked by its KKT conditions, and the
//! relation between the second-order cone and the stability index of Chadwick et al. (2014) eq. 9.

use mollier_core::dynamics::Load;
use mollier_core::geometry::{Mat3, Vec3};
use mollier_core::{Data, solve_positions};
use mollier_optim::{
    Criterion, JointCone, LoadSharing, Muscle, Study, cone_violation, deviation_angles, stability_index,
};

use crate::common::*;

/// DAS3's glenoid half-angles (rad).
const DAS3: (f64, f64) = (0.7744, 0.6728);

/// Rotation by π about z: cone axis x_c = −x (into the scapula), y_c = −y, z_c = z.
const FLIP: Mat3 = [[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]];

pub fn cone_for(arm: &Arm, half_y: f64, half_z: f64, enforce: bool) -> JointCone {
    JointCone {
        node: arm.joint,
        elements: vec![arm.scapula_beam],
        body: arm.scapula,
        rotation: FLIP,
        half_angle_y: half_y,
        half_angle_z: half_z,
        enforce,
    }
}

fn to_cone(f: &Vec3) -> Vec3 {
    [-f[0], -f[1], f[2]]
}

/// Solve `min ‖x‖²` s.t. `a1·x = b1`, `a2·x = b2`: `x = Aᵀ y`, `(AAᵀ) y = b`.
fn two_equalities(a1: &[f64], a2: &[f64], b: [f64; 2]) -> (Vec<f64>, [f64; 2]) {
    let d = |u: &[f64], v: &[f64]| u.iter().zip(v).map(|(x, y)| x * y).sum::<f64>();
    let (g11, g12, g22) = (d(a1, a1), d(a1, a2), d(a2, a2));
    let det = g11 * g22 - g12 * g12;
    let y = [(g22 * b[0] - g12 * b[1]) / det, (g11 * b[1] - g12 * b[0]) / det];
    ((0..a1.len()).map(|i| y[0] * a1[i] + y[1] * a2[i]).collect(), y)
}

#[test]
fn planar_cone_constrained_optimum_lies_on_the_boundary() {
    // a "deltoid" pulling up, two "cuff" muscles pulling into the socket; all three lift
    let origins = [[-0.05, 0.15, 0.0], [-0.12, 0.04, 0.0], [-0.12, -0.01, 0.0]];
    let insertions = [[0.12, 0.01, 0.0], [0.02, 0.025, 0.0], [0.03, 0.03, 0.0]];
    let arm = arm(&origins, &insertions, [0.3, 0.0, 0.0], false);
    let (q, load) = (0.2, [0.0, -10.0, 0.0]);
    let half_y = 0.07;
    let (_, r, pull) = arm.planar(q);
    let m = arm.holding_moment(q, &load);
    let muscles: Vec<Muscle> = (0..3).map(|i| Muscle::new(arm.muscles[i], 5e-4, arm.l0[i])).collect();
    // hand statics: the humeral head pushes on the scapula with the load plus the muscles' pulls
    let joint = |f: &[f64]| -> Vec3 {
        let mut s = load;
        for i in 0..3 {
            for a in 0..3 {
                s[a] += f[i] * pull[i][a];
            }
        }
        to_cone(&s)
    };
    // unconstrained optimum of (a)
    assert!(r.iter().all(|v| *v > 0.0), "moment arms {r:?}");
    let lam = m / (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    let free = [r[0] * lam, r[1] * lam, r[2] * lam];
    let f_free = joint(&free);
    assert!(cone_violation(&f_free, half_y, 0.3) > 0.0, "precondition: the free optimum leaves the cone: {f_free:?}");
    // constrained: the boundary s f_y = tan θ f_x is active; all three muscles pull
    let s = f_free[1].signum();
    let tn = half_y.tan();
    let e: Vec<Vec3> = pull.iter().map(to_cone).collect();
    let c: Vec<f64> = (0..3).map(|i| s * e[i][1] - tn * e[i][0]).collect();
    let l = to_cone(&load);
    let (want, y) = two_equalities(&r, &c, [m, -(s * l[1] - tn * l[0])]);
    assert!(want.iter().all(|f| *f > 0.0), "precondition: all pull {want:?}");
    assert!(y[1] < 0.0, "precondition: the cone's multiplier −2y₂ is positive");

    let mut data = Data::new(&arm.model);
    solve_positions(&arm.model, &mut data, &[q]).unwrap();
    let loads = [Load::Force { node: arm.tip, force: load }];
    for (enforce, expect) in [(false, free.to_vec()), (true, want.clone())] {
        let mut study = Study::new(muscles.clone(), Criterion::Forces);
        study.cone = Some(cone_for(&arm, half_y, 0.3, enforce));
        let sharing = LoadSharing::new(&arm.model, study).unwrap();
        let mut ws = sharing.workspace();
        let res = sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &loads);
        assert!(res.status.is_success(), "{}", res.status);
        let d = rel_diff(&res.forces, &expect, 50.0);
        assert!(d < 1e-9, "enforce {enforce}: {:?} vs {expect:?} ({d:.1e})", res.forces);
        // the reported joint force is the hand statics of the returned forces
        let fc = res.cone_force.unwrap();
        let hand = joint(&res.forces);
        assert!(rel_diff(&fc, &hand, 50.0) < 1e-12, "{fc:?} vs {hand:?}");
        let index = res.stability_index.unwrap();
        if enforce {
            // on the y axis the cone's boundary is the index's zero level
            assert!(index.abs() < 1e-8, "on the rim: index {index}");
            assert!(cone_violation(&fc, half_y, 0.3).abs() < 1e-8 * 50.0);
        } else {
            assert!(index > 0.0, "free optimum outside: index {index}");
        }
    }
}

pub fn spatial_arm(mass: Option<f64>) -> Arm {
    let n = 8;
    let tau = std::f64::consts::TAU;
    let origins: Vec<Vec3> = (0..n)
        .map(|k| {
            let a = tau * k as f64 / n as f64;
            [-0.1 + 0.02 * (k % 3) as f64, 0.15 * a.cos(), 0.15 * a.sin()]
        })
        .collect();
    let insertions: Vec<Vec3> = (0..n)
        .map(|k| {
            // alternate windings: some muscles rotate the humerus each way about its axis
            let a = tau * k as f64 / n as f64 + if k % 2 == 0 { 1.0 } else { -1.0 };
            [0.05 + 0.015 * k as f64, 0.02 * a.cos(), 0.02 * a.sin()]
        })
        .collect();
    arm_with_mass(&origins, &insertions, [0.3, 0.0, 0.0], true, mass)
}

/// The KKT conditions of criterion (c) with the elliptic cone active, in 3-D. Multipliers are
/// recovered by least squares: the equality gradients are the muscles' length derivatives from
/// the first-order transfer function (virtual power: `∂τ_j/∂F_i = ∂e_i/∂q_j`), the cone's is
/// that of the hand statics `f = load + Σ F_i u_i`.
#[test]
fn spatial_cone_kkt_conditions() {
    let arm = spatial_arm(None);
    let model = &arm.model;
    let q = [0.3, -0.2, 0.4];
    let load = [0.0, -8.0, 3.0];
    let (half_y, half_z) = (0.12, 0.08);
    let k = arm.muscles.len();
    let muscles: Vec<Muscle> = (0..k).map(|i| Muscle::new(arm.muscles[i], 2e-3, arm.l0[i])).collect();
    let mut data = Data::new(model);
    solve_positions(model, &mut data, &q).unwrap();
    let loads = [Load::Force { node: arm.tip, force: load }];
    let solve = |enforce: bool, data: &mut Data| {
        let mut study = Study::new(muscles.clone(), Criterion::Activations);
        study.cone = Some(cone_for(&arm, half_y, half_z, enforce));
        let sharing = LoadSharing::new(model, study).unwrap();
        let mut ws = sharing.workspace();
        sharing.solve_frame(&mut ws, data, &[0.0; 3], &[0.0; 3], &loads)
    };
    let free = solve(false, &mut data);
    assert!(free.status.is_success(), "{}", free.status);
    let fc = free.cone_force.unwrap();
    assert!(cone_violation(&fc, half_y, half_z) > 0.0, "precondition: the free optimum leaves the cone {fc:?}");
    let res = solve(true, &mut data);
    assert!(res.status.is_success(), "{}", res.status);
    let f = &res.forces;
    let fmax = &res.max_forces;

    // hand statics of the joint force, in the cone frame, as an affine map of F
    let pos = |n| data.position(model, n);
    let pulls: Vec<Vec3> =
        (0..k).map(|i| to_cone(&unit(&sub(&arm.origins[i], &pos(arm.insertion_nodes[i]))))).collect();
    let l = to_cone(&load);
    let joint: Vec3 = [0, 1, 2].map(|a| l[a] + (0..k).map(|i| f[i] * pulls[i][a]).sum::<f64>());
    assert!(rel_diff(&joint, &res.cone_force.unwrap(), 100.0) < 1e-12);
    let (ty, tz) = (half_y.tan(), half_z.tan());
    let nrm = (joint[1] / ty).hypot(joint[2] / tz);
    let g_cone = nrm - joint[0];
    assert!(g_cone.abs() < 1e-8 * 100.0, "on the cone: {g_cone}");
    let grad_cone: Vec<f64> = (0..k)
        .map(|i| pulls[i][1] * joint[1] / (ty * ty * nrm) + pulls[i][2] * joint[2] / (tz * tz * nrm) - pulls[i][0])
        .collect();

    let jac = length_jacobian(model, &mut data, &arm.muscles);
    let eq: Vec<Vec<f64>> = (0..3).map(|j| (0..k).map(|i| jac[i][j]).collect()).collect();
    let grad: Vec<f64> = (0..k).map(|i| 2.0 * f[i] / (fmax[i] * fmax[i])).collect();
    let mut ineq = Vec::new();
    for i in 0..k {
        let mut e = vec![0.0; k];
        e[i] = -1.0;
        ineq.push((e.clone(), -f[i], fmax[i]));
        e[i] = 1.0;
        ineq.push((e, f[i] - fmax[i], fmax[i]));
    }
    ineq.push((grad_cone, g_cone, 100.0));
    let rep = kkt(&grad, &eq, &ineq, 1e-7);
    // an interior-point point on a second-order cone: stationarity to ~1e-6 of |∇J| while the
    // constraints hold to 1e-10 (the cone's complementarity converges as √μ)
    assert!(rep.stationarity < 1e-5, "stationarity residual {:.1e}", rep.stationarity);
    let cone_mu = rep.mu.iter().find(|(m, _)| *m == 2 * k).expect("the cone is active").1;
    assert!(cone_mu > 0.0, "cone multiplier {cone_mu}");
    for (m, mu) in &rep.mu {
        assert!(*mu > -1e-8, "multiplier of inequality {m}: {mu}");
    }
    // complementary slackness: the inactive bounds are strictly inside
    let active: Vec<usize> = rep.mu.iter().map(|(m, _)| *m).collect();
    for (m, (_, g, s)) in ineq.iter().enumerate() {
        if !active.contains(&m) {
            assert!(*g < -1e-7 * s, "inactive constraint {m} has slack {g}");
        }
    }
    // primal feasibility by kinetostatics
    assert!(res.residual.unwrap() < 1e-9, "residual {}", res.residual.unwrap());
    assert!(res.stability_index.unwrap() <= 1e-9, "in the cone ⇒ index <= 0: {}", res.stability_index.unwrap());
}

/// `w(y) = 1/atan²(1/√y)` is concave: its second difference is negative on a wide log grid, and
/// the equivalent inequality `atan t >= 3t/(3 + t²)` holds.
#[test]
fn the_weight_function_is_concave() {
    let w = |y: f64| 1.0 / (1.0 / y.sqrt()).atan().powi(2);
    for e in -60..=60 {
        let y = 10f64.powf(e as f64 / 10.0);
        let h = 1e-3 * y;
        let d2 = (w(y + h) - 2.0 * w(y) + w(y - h)) / (h * h);
        // analytic: w'' = (a⁻⁴ / (2y(y+1)²)) (3 − a(3y+1)/√y), a = atan(1/√y)
        let a = (1.0 / y.sqrt()).atan();
        let exact = (3.0 - a * (3.0 * y + 1.0) / y.sqrt()) / (2.0 * y * (y + 1.0).powi(2) * a.powi(4));
        assert!(exact < 0.0, "w''({y}) = {exact}");
        assert!((d2 - exact).abs() < 1e-4 * exact.abs() + 1e-9, "w''({y}): {d2} vs {exact}");
        let t = 1.0 / y.sqrt();
        assert!(t.atan() >= 3.0 * t / (3.0 + t * t));
    }
}

/// With DAS3's half-angles: every force on the cone's boundary has index <= 0, with equality on
/// the axes; the index's rim lies outside the cone in between; forces inside have index < 0.
#[test]
fn cone_lies_inside_the_stability_region() {
    let (ta, pa) = DAS3;
    let (tt, tp) = (ta.tan(), pa.tan());
    let mut worst = f64::NEG_INFINITY;
    for k in 0..=3600 {
        let beta = std::f64::consts::TAU * k as f64 / 3600.0;
        // on the cone: f = (1, tan θ_a cos β', tan φ_a sin β') for a parameter β'
        let f = [1.0, tt * beta.cos(), tp * beta.sin()];
        assert!(cone_violation(&f, ta, pa).abs() < 1e-14);
        let idx = stability_index(&f, ta, pa).unwrap();
        assert!(idx <= 1e-12, "β' = {beta}: index {idx} on the cone");
        worst = worst.max(idx);
        // on the axes the two boundaries meet
        if k % 900 == 0 {
            assert!(idx.abs() < 1e-12, "axis β' = {beta}: index {idx}");
        }
        // strictly inside the cone: strictly inside the region
        let g = [1.0, 0.9 * f[1], 0.9 * f[2]];
        assert!(stability_index(&g, ta, pa).unwrap() < 0.0);
    }
    // in between the axes the cone is strictly inside
    let f = [1.0, tt * std::f64::consts::FRAC_PI_4.cos(), tp * std::f64::consts::FRAC_PI_4.sin()];
    assert!(stability_index(&f, ta, pa).unwrap() < -1e-4);
    assert!(worst.abs() < 1e-12);
    // and the index's rim at the diagonal is outside the cone
    let (t, p) = deviation_angles(&f).unwrap();
    let s = 1.0 / ((t / ta).powi(2) + (p / pa).powi(2)).sqrt();
    let alpha = (t * t + p * p).sqrt() * s;
    let beta = p.atan2(t);
    let rim = [alpha.cos(), alpha.sin() * beta.cos(), alpha.sin() * beta.sin()];
    assert!(stability_index(&rim, ta, pa).unwrap().abs() < 1e-12);
    assert!(cone_violation(&rim, ta, pa) > 0.0);
}

/// The index is reported without the constraint too, and agrees with its definition
/// `(θ/θ_a)² + (φ/φ_a)² − 1` for θ = α cos β, φ = α sin β.
#[test]
fn stability_index_definition() {
    let (ta, pa) = DAS3;
    for (alpha, beta) in [(0.3, 0.0), (0.3, 1.0), (1.2, -2.0), (0.01, 3.0), (2.5, 0.7)] {
        let f: [f64; 3] =
            [5.0 * f64::cos(alpha), 5.0 * f64::sin(alpha) * f64::cos(beta), 5.0 * f64::sin(alpha) * f64::sin(beta)];
        let want = (alpha * f64::cos(beta) / ta).powi(2) + (alpha * f64::sin(beta) / pa).powi(2) - 1.0;
        let got = stability_index(&f, ta, pa).unwrap();
        assert!((got - want).abs() < 1e-12, "α {alpha}, β {beta}: {got} vs {want}");
    }
}

#[test]
fn an_infeasible_frame_names_the_constraints_responsible() {
    // the planar arm of the test above, holding a weight
    let origins = [[-0.05, 0.15, 0.0], [-0.12, 0.04, 0.0], [-0.12, -0.01, 0.0]];
    let insertions = [[0.12, 0.01, 0.0], [0.02, 0.025, 0.0], [0.03, 0.03, 0.0]];
    let arm = arm(&origins, &insertions, [0.3, 0.0, 0.0], false);
    let solve = |pcsa: f64, cone: Option<JointCone>, load: Vec3| {
        let mut data = Data::new(&arm.model);
        solve_positions(&arm.model, &mut data, &[0.2]).unwrap();
        let muscles: Vec<Muscle> = (0..3).map(|i| Muscle::new(arm.muscles[i], pcsa, arm.l0[i])).collect();
        let mut study = Study::new(muscles, Criterion::Stresses);
        study.cone = cone;
        let sharing = LoadSharing::new(&arm.model, study).unwrap();
        let mut ws = sharing.workspace();
        let loads = [Load::Force { node: arm.tip, force: load }];
        sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &loads).status.to_string()
    };
    let down = [0.0, -10.0, 0.0];
    // a cone turned to point out of the socket: the joint force cannot lie in it
    let mut away = cone_for(&arm, 0.1, 0.1, true);
    away.rotation = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let s = solve(5e-4, Some(away), down);
    assert!(s.contains("Infeasible") && s.contains("the joint cone makes the frame infeasible"), "{s}");
    assert!(s.contains("--no-cone") && s.contains("margin"), "{s}");
    // muscles of 1 N each cannot hold 3 N m; a thousand times stronger they can
    let s = solve(1e-6, None, down);
    assert!(s.contains("the muscles' force bounds make the frame infeasible"), "{s}");
    // a load that only pushing muscles could hold
    let s = solve(5e-4, None, [0.0, 10.0, 0.0]);
    assert!(s.contains("no combination of pulling muscles"), "{s}");
    // a feasible frame says nothing of the kind
    let s = solve(5e-4, Some(cone_for(&arm, DAS3.0, DAS3.1, true)), down);
    assert_eq!(s, "solved");
}
