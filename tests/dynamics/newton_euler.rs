//! A spatial chain of four rigid bodies: inverse dynamics and mass matrix against an independent
//! recursive Newton-Euler algorithm written here with rotation matrices.

use mollier_core::conformance::Rng;
use mollier_core::dynamics::{inverse_dynamics, mass_matrix};
use mollier_core::geometry::{
    Mat3, Vec3, add, cross, mat_mul, mat_vec, quat_from_axis_angle, rotation, scale, sub, transpose,
};
use mollier_core::{Data, solve_positions};
use mollier_tests::{Link, serial_chain, spatial_links};

fn links() -> Vec<Link> {
    spatial_links(4)
}

/// Joint torques by recursive Newton-Euler (world frame).
fn rnea(links: &[Link], q: &[f64], qd: &[f64], qdd: &[f64], g: Vec3) -> Vec<f64> {
    let n = links.len();
    let mut rot: Vec<Mat3> = Vec::with_capacity(n);
    let mut axes = Vec::with_capacity(n);
    let mut joints = Vec::with_capacity(n);
    let mut coms = Vec::with_capacity(n);
    let mut w = Vec::with_capacity(n);
    let mut wd = Vec::with_capacity(n);
    let mut aj: Vec<Vec3> = Vec::with_capacity(n);
    let mut ac = Vec::with_capacity(n);
    let ident = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    for i in 0..n {
        let (rp, wp, wdp, pj_prev, aj_prev): (Mat3, Vec3, Vec3, Vec3, Vec3) = if i == 0 {
            (ident, [0.0; 3], [0.0; 3], links[0].joint, [0.0; 3])
        } else {
            (rot[i - 1], w[i - 1], wd[i - 1], joints[i - 1], aj[i - 1])
        };
        // joint axis in the world: the parent's rotation of the reference axis
        let a = mat_vec(&rp, &links[i].axis);
        let r = mat_mul(&rp, &rotation(&quat_from_axis_angle(&links[i].axis, q[i])));
        // joint position: fixed in the parent body
        let pj = if i == 0 {
            links[0].joint
        } else {
            add(&joints[i - 1], &mat_vec(&rp, &sub(&links[i].joint, &links[i - 1].joint)))
        };
        let d = sub(&pj, &pj_prev);
        let ajv = add(&aj_prev, &add(&cross(&wdp, &d), &cross(&wp, &cross(&wp, &d))));
        let wi = add(&wp, &scale(qd[i], &a));
        let wdi = add(&add(&wdp, &scale(qdd[i], &a)), &cross(&wp, &scale(qd[i], &a)));
        let c = add(&pj, &mat_vec(&r, &sub(&links[i].com, &links[i].joint)));
        let rc = sub(&c, &pj);
        let aci = add(&ajv, &add(&cross(&wdi, &rc), &cross(&wi, &cross(&wi, &rc))));
        rot.push(r);
        axes.push(a);
        joints.push(pj);
        coms.push(c);
        w.push(wi);
        wd.push(wdi);
        aj.push(ajv);
        ac.push(aci);
    }
    let mut tau = vec![0.0; n];
    let (mut f_next, mut n_next, mut p_next): (Vec3, Vec3, Vec3) = ([0.0; 3], [0.0; 3], [0.0; 3]);
    for i in (0..n).rev() {
        let iw = mat_mul(&mat_mul(&rot[i], &links[i].inertia), &transpose(&rot[i]));
        let f = add(&scale(links[i].mass, &sub(&ac[i], &g)), &f_next);
        let rc = sub(&coms[i], &joints[i]);
        let mut m = add(&mat_vec(&iw, &wd[i]), &cross(&w[i], &mat_vec(&iw, &w[i])));
        m = add(&m, &cross(&rc, &scale(links[i].mass, &sub(&ac[i], &g))));
        if i + 1 < n {
            m = add(&m, &add(&n_next, &cross(&sub(&p_next, &joints[i]), &f_next)));
        }
        tau[i] = axes[i][0] * m[0] + axes[i][1] * m[1] + axes[i][2] * m[2];
        f_next = f;
        n_next = m;
        p_next = joints[i];
    }
    tau
}

#[test]
fn inverse_dynamics_matches_recursive_newton_euler() {
    let links = links();
    let g = [0.0, -9.81, 0.0];
    let (model, _) = serial_chain(&links, g);
    let mut data = Data::new(&model);
    let mut rng = Rng::new(5);
    let n = links.len();
    for _ in 0..15 {
        let q: Vec<f64> = (0..n).map(|_| 2.5 * rng.symmetric()).collect();
        let qd: Vec<f64> = (0..n).map(|_| 3.0 * rng.symmetric()).collect();
        let qdd: Vec<f64> = (0..n).map(|_| 4.0 * rng.symmetric()).collect();
        solve_positions(&model, &mut data, &q).unwrap();
        let tau = inverse_dynamics(&model, &mut data, &qd, &qdd, &[]).unwrap();
        let want = rnea(&links, &q, &qd, &qdd, g);
        for i in 0..n {
            assert!((tau[i] - want[i]).abs() < 1e-10 * (1.0 + want[i].abs()), "τ[{i}]: {} vs {}", tau[i], want[i]);
        }
        // mass matrix columns: RNEA without gravity and velocity, unit accelerations
        let mbar = mass_matrix(&model, &mut data).unwrap();
        for j in 0..n {
            let mut e = vec![0.0; n];
            e[j] = 1.0;
            let col = rnea(&links, &q, &vec![0.0; n], &e, [0.0; 3]);
            for i in 0..n {
                assert!((mbar[(i, j)] - col[i]).abs() < 1e-10, "M[{i}][{j}]: {} vs {}", mbar[(i, j)], col[i]);
            }
        }
    }
}
