//! The static arm of the quaternion screw-algebra arm paper (after Dumas et al.): two segments holding a weight, then with a
//! biceps and a triceps. Shoulder and elbow wrenches from kinetostatics against the seed's
//! recursive wrench equations (eq. 3 with zero accelerations), and the muscle force of its
//! eq. 4 cancelling the elbow moment normal to the muscles' plane.

use mollier_core::dynamics::{driving_from_kinetostatics, element_forces, kinetostatics};
use mollier_core::geometry::{Vec3, add, cross, dot, mat_vec, norm, quat_at, rotation, scale, sub};
use mollier_core::{Data, ElementId, Model, ModelBuilder, NodeId, solve_positions};
use mollier_hinge::Hinge;
use mollier_tests::{IDENTITY, rigid_point};
use mollier_truss::Truss;

const G: [f64; 3] = [0.0, 0.0, -9.81];
const M0: f64 = 2.0; // held weight
const M1: f64 = 1.2; // forearm
const M2: f64 = 2.1; // upper arm

struct Arm {
    model: Model,
    s: NodeId,
    e: NodeId,
    h: NodeId,
    c1: NodeId,
    c2: NodeId,
    bic: NodeId,
    tri: NodeId,
    upper_to_elbow: ElementId,
    shoulder: [ElementId; 3],
    elbow: [ElementId; 3],
    muscles: [ElementId; 2],
}

/// Three hinges z, y, x from `from` to `to` through two massless orientations.
fn spherical(b: &mut ModelBuilder, name: &str, from: NodeId, to: NodeId) -> [ElementId; 3] {
    let a = b.orientation_node(format!("{name}_a"), IDENTITY).unwrap();
    let c = b.orientation_node(format!("{name}_b"), IDENTITY).unwrap();
    let mut out = Vec::new();
    for (k, (p, q, axis)) in
        [(from, a, [0.0, 0.0, 1.0]), (a, c, [0.0, 1.0, 0.0]), (c, to, [1.0, 0.0, 0.0])].into_iter().enumerate()
    {
        let h = b.add_element(format!("{name}{k}"), Box::new(Hinge::new(p, q, axis, None))).unwrap();
        b.input_mode(h, "rotation");
        out.push(h);
    }
    [out[0], out[1], out[2]]
}

fn arm() -> Arm {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("thorax", IDENTITY).unwrap();
    let s = b.position_node("shoulder", [0.0; 3]).unwrap();
    b.fix_node(g);
    b.fix_node(s);
    let l1 = b.orientation_node("upper_arm", IDENTITY).unwrap();
    let l2 = b.orientation_node("forearm", IDENTITY).unwrap();
    let e = b.position_node("elbow", [0.0, 0.0, -0.3]).unwrap();
    let c2 = b.position_node("upper_arm_com", [0.0, 0.0, -0.13]).unwrap();
    let h = b.position_node("hand", [0.28, 0.0, -0.3]).unwrap();
    let c1 = b.position_node("forearm_com", [0.12, 0.0, -0.3]).unwrap();
    // muscle insertions 0.9 and 1.1 of the forearm from its distal end (seed: 10% in front of and
    // behind the elbow)
    let bic = b.position_node("biceps_insertion", [0.028, 0.0, -0.3]).unwrap();
    let tri = b.position_node("triceps_insertion", [-0.028, 0.0, -0.3]).unwrap();
    let upper_to_elbow = rigid_point(&mut b, "upper_to_elbow", s, l1, e);
    rigid_point(&mut b, "upper_to_com", s, l1, c2);
    rigid_point(&mut b, "fore_to_hand", e, l2, h);
    rigid_point(&mut b, "fore_to_com", e, l2, c1);
    rigid_point(&mut b, "fore_to_biceps", e, l2, bic);
    rigid_point(&mut b, "fore_to_triceps", e, l2, tri);
    let shoulder = spherical(&mut b, "shoulder", g, l1);
    let elbow = spherical(&mut b, "elbow", l1, l2);
    let mb = b.add_element("biceps", Box::new(Truss::new(s, bic))).unwrap();
    let mt = b.add_element("triceps", Box::new(Truss::new(s, tri))).unwrap();
    b.free_element(mb);
    b.free_element(mt);
    b.add_mass(h, M0);
    b.add_mass(c1, M1);
    b.add_mass(c2, M2);
    b.set_gravity(G);
    Arm { model: b.build().unwrap(), s, e, h, c1, c2, bic, tri, upper_to_elbow, shoulder, elbow, muscles: [mb, mt] }
}

/// The moment vector `M` with `M · a_k = τ_k` for the three current hinge axes `a_k`.
fn moment_from_hinges(model: &Model, data: &Data, hinges: &[ElementId; 3], tau: [f64; 3], axes0: [Vec3; 3]) -> Vec3 {
    let a: Vec<Vec3> = (0..3)
        .map(|k| {
            let p = model.element(hinges[k]).layout().nodes()[0].0;
            let l = quat_at(data.x(), model.nodes()[p.index()].offset);
            mat_vec(&rotation(&l), &axes0[k])
        })
        .collect();
    // Cramer's rule for [a0; a1; a2] M = τ
    let det = dot(&a[0], &cross(&a[1], &a[2]));
    let c0 = cross(&a[1], &a[2]);
    let c1 = cross(&a[2], &a[0]);
    let c2 = cross(&a[0], &a[1]);
    [0, 1, 2].map(|i| (tau[0] * c0[i] + tau[1] * c1[i] + tau[2] * c2[i]) / det)
}

/// Dumas et al.'s recursive wrench equations from the hand inwards, for "weights" `w` (the forces the
/// masses need besides the segments': m g when static, m (g − a) in motion) at the held weight,
/// the forearm's and the upper arm's centres of mass: the force and moment the upper arm exerts
/// on the forearm at the elbow and the ground on the upper arm at the shoulder.
fn seed_wrenches(points: [Vec3; 5], w: [Vec3; 3]) -> [Vec3; 4] {
    let [s, e, hand, c1, c2] = points;
    let [w0, w1, w2] = w;
    let f_e = scale(-1.0, &add(&w1, &w0));
    let m_e = scale(-1.0, &add(&cross(&sub(&c1, &e), &w1), &cross(&sub(&hand, &e), &w0)));
    let f_s = sub(&f_e, &w2);
    let m_s = add(&add(&scale(-1.0, &cross(&sub(&c2, &s), &w2)), &cross(&sub(&e, &s), &f_e)), &m_e);
    [f_e, m_e, f_s, m_s]
}

/// The same wrenches from the kernel's kinetostatics: the shoulder's support reaction, the force
/// the upper arm's beam exerts on the elbow node, and the hinges' moments.
fn kernel_wrenches(arm: &Arm, data: &Data, ks: &mollier_core::dynamics::Kinetostatics) -> [Vec3; 4] {
    let model = &arm.model;
    let tau = driving_from_kinetostatics(model, data, ks);
    let axes0 = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];
    let mom_s = moment_from_hinges(model, data, &arm.shoulder, [tau[0], tau[1], tau[2]], axes0);
    let mom_e = moment_from_hinges(model, data, &arm.elbow, [tau[3], tau[4], tau[5]], axes0);
    let so = model.coord_id(arm.s, 0).index();
    let reaction_s = [ks.nodal[so], ks.nodal[so + 1], ks.nodal[so + 2]];
    let on_elbow = element_forces(model, data, arm.upper_to_elbow, &ks.sigma);
    [[on_elbow[7], on_elbow[8], on_elbow[9]], mom_e, reaction_s, mom_s]
}

const WRENCHES: [&str; 4] = ["elbow force", "elbow moment", "shoulder force", "shoulder moment"];

fn close(a: Vec3, b: Vec3, what: &str) {
    let err = norm(&sub(&a, &b));
    assert!(err < 1e-9 * (1.0 + norm(&b)), "{what}: {a:?} vs {b:?}");
}

#[test]
fn static_arm_wrenches_with_and_without_muscles() {
    let arm = arm();
    let model = &arm.model;
    let mut data = Data::new(model);
    let q = [0.4, -0.3, 0.25, 0.2, -0.9, 0.15];
    solve_positions(model, &mut data, &q).unwrap();
    let pos = |n: NodeId| data.position(model, n);
    let (s, e, h, c1, c2) = (pos(arm.s), pos(arm.e), pos(arm.h), pos(arm.c1), pos(arm.c2));
    let (bic, tri) = (pos(arm.bic), pos(arm.tri));
    let (w0, w1, w2) = (scale(M0, &G), scale(M1, &G), scale(M2, &G));
    let zeros = [0.0; 6];
    let axes0 = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];

    // seed eq. 3, static: forearm, then upper arm
    let want = seed_wrenches([s, e, h, c1, c2], [w0, w1, w2]);
    let [f_e, m_e, _, _] = want;
    let mut sigma = vec![0.0; model.n_e()];
    let ks = kinetostatics(model, &mut data, &zeros, &zeros, Some(&sigma), &[]).unwrap();
    for ((got, want), what) in kernel_wrenches(&arm, &data, &ks).into_iter().zip(want).zip(WRENCHES) {
        close(got, want, what);
    }

    // seed eq. 4: one of biceps and triceps cancels the elbow moment normal to their plane
    let u = |p: Vec3| {
        let d = sub(&s, &p);
        scale(1.0 / norm(&d), &d)
    };
    let (u1, u2) = (u(bic), u(tri));
    let n = {
        let c = cross(&u1, &u2);
        scale(1.0 / norm(&c), &c)
    };
    let lever = |p: Vec3, uu: Vec3| dot(&cross(&sub(&p, &e), &uu), &n);
    let (mu_b, mu_t) = (dot(&m_e, &n) / lever(bic, u1), dot(&m_e, &n) / lever(tri, u2));
    let (k, mu, ins, uu) = if mu_b >= 0.0 { (0, mu_b, bic, u1) } else { (1, mu_t, tri, u2) };
    assert!(mu > 0.0, "one muscle pulls: biceps {mu_b}, triceps {mu_t}");
    sigma[model.mode_id(arm.muscles[k], 0).index()] = mu;
    let ks = kinetostatics(model, &mut data, &zeros, &zeros, Some(&sigma), &[]).unwrap();
    let tau = driving_from_kinetostatics(model, &data, &ks);
    let mom_e2 = moment_from_hinges(model, &data, &arm.elbow, [tau[3], tau[4], tau[5]], axes0);
    assert!(dot(&mom_e2, &n).abs() < 1e-9, "elbow moment normal to the muscles' plane: {}", dot(&mom_e2, &n));
    let f_e2 = sub(&f_e, &scale(mu, &uu));
    let m_e2 = sub(&m_e, &cross(&sub(&ins, &e), &scale(mu, &uu)));
    close(mom_e2, m_e2, "elbow moment with the muscle");
    let on_elbow = element_forces(model, &data, arm.upper_to_elbow, &ks.sigma);
    close([on_elbow[7], on_elbow[8], on_elbow[9]], f_e2, "elbow force with the muscle");
    let m_s2 = add(&add(&scale(-1.0, &cross(&sub(&c2, &s), &w2)), &cross(&sub(&e, &s), &f_e2)), &m_e2);
    let mom_s2 = moment_from_hinges(model, &data, &arm.shoulder, [tau[0], tau[1], tau[2]], axes0);
    close(mom_s2, m_s2, "shoulder moment with the muscle");
}

#[test]
fn virtual_work_and_nodal_equilibrium() {
    // DF_xᵀ f equals the generalized forces of the loads, and the kinetostatic stresses balance
    // every dependent coordinate
    let arm = arm();
    let model = &arm.model;
    let mut data = Data::new(model);
    let q = [0.1, 0.5, -0.2, 0.7, 0.3, -0.4];
    let qd = [0.3, -0.2, 0.5, 0.1, 0.4, -0.6];
    let qdd = [1.0, -0.5, 0.2, -0.7, 0.3, 0.8];
    solve_positions(model, &mut data, &q).unwrap();
    let ks = kinetostatics(model, &mut data, &qd, &qdd, None, &[]).unwrap();
    for i in 0..model.n_x() {
        if model.coord_role(mollier_core::CoordId::new(i)) == mollier_core::CoordRole::Dependent {
            assert!(
                ks.nodal[i].abs() < 1e-9,
                "coordinate {}: {}",
                model.coord_name(mollier_core::CoordId::new(i)),
                ks.nodal[i]
            );
        }
    }
    let tau = mollier_core::dynamics::inverse_dynamics(model, &mut data, &qd, &qdd, &[]).unwrap();
    let tau2 = driving_from_kinetostatics(model, &data, &ks);
    for j in 0..6 {
        assert!((tau[j] - tau2[j]).abs() < 1e-9 * (1.0 + tau[j].abs()), "input {j}: {} vs {}", tau[j], tau2[j]);
    }
    // virtual power of gravity: Σ_j τ_j δq_j for a static pose equals −δV
    let h = 1e-6;
    let zeros = [0.0; 6];
    let tau_static = mollier_core::dynamics::inverse_dynamics(model, &mut data, &zeros, &zeros, &[]).unwrap();
    let mut vs = [0.0; 2];
    for (k, sgn) in [(0, 1.0), (1, -1.0)] {
        let qs: Vec<f64> = q.iter().enumerate().map(|(j, v)| v + sgn * h * (j as f64 + 1.0)).collect();
        let mut d = Data::new(model);
        solve_positions(model, &mut d, &qs).unwrap();
        vs[k] = mollier_core::dynamics::potential_energy(model, &d).unwrap();
    }
    let dv = (vs[0] - vs[1]) / (2.0 * h);
    let power: f64 = tau_static.iter().enumerate().map(|(j, t)| t * (j as f64 + 1.0)).sum();
    assert!((power - dv).abs() < 1e-6 * (1.0 + dv.abs()), "τ·δq {power} vs δV {dv}");
}

#[test]
fn moving_arm_wrenches_by_recursive_propagation() {
    // The arm paper's general wrench equation (its eq. 2, after Dumas et al.) for the arm in motion:
    // from the hand inwards, a segment's proximal wrench balances its distal one and its masses'
    // m (a − g) (point masses here: no rotational inertia terms). The accelerations of the masses
    // are central differences (five points) of their positions along q(t) = q + q̇ t + ½ q̈ t²,
    // so that nothing of the kernel's dynamics enters the reference.
    let arm = arm();
    let model = &arm.model;
    let mut data = Data::new(model);
    let q = [0.4, -0.3, 0.25, 0.2, -0.9, 0.15];
    let qd = [0.8, -0.5, 1.1, -0.6, 1.4, 0.3];
    let qdd = [2.0, 1.5, -1.0, 3.0, -2.5, 1.2];
    let at = |t: f64| -> [f64; 6] { [0, 1, 2, 3, 4, 5].map(|j| q[j] + qd[j] * t + 0.5 * qdd[j] * t * t) };
    let nodes = [arm.h, arm.c1, arm.c2];
    let h = 1e-3;
    let mut acc = [[0.0; 3]; 3];
    for (k, w) in [(-2.0, -1.0), (-1.0, 16.0), (0.0, -30.0), (1.0, 16.0), (2.0, -1.0)] {
        let mut d = Data::new(model);
        solve_positions(model, &mut d, &at(k * h)).unwrap();
        for (a, &n) in acc.iter_mut().zip(&nodes) {
            *a = add(a, &scale(w / (12.0 * h * h), &d.position(model, n)));
        }
    }
    solve_positions(model, &mut data, &q).unwrap();
    let pos = |n: NodeId| data.position(model, n);
    // the "weights" m (g − a): what each mass needs from the segments besides its own motion
    let w = [(M0, acc[0]), (M1, acc[1]), (M2, acc[2])].map(|(m, a)| scale(m, &sub(&G, &a)));
    let want = seed_wrenches([pos(arm.s), pos(arm.e), pos(arm.h), pos(arm.c1), pos(arm.c2)], w);
    let ks = kinetostatics(model, &mut data, &qd, &qdd, None, &[]).unwrap();
    // the motion matters: the wrenches differ from the static ones by far more than the tolerance
    let static_f_s = scale(-(M0 + M1 + M2), &G);
    assert!(norm(&sub(&want[2], &static_f_s)) > 1.0, "the motion barely loads the arm");
    for ((got, want), what) in kernel_wrenches(&arm, &data, &ks).into_iter().zip(want).zip(WRENCHES) {
        let err = norm(&sub(&got, &want));
        assert!(err < 1e-7 * (1.0 + norm(&want)), "{what}: {got:?} vs {want:?} ({err:e})");
    }
}
