//! Pendulum and double pendulum: mass matrix, velocity and gravity terms against Lagrange's
//! equations derived by hand.

use mollier_core::conformance::Rng;
use mollier_core::dynamics::{bias_forces, inverse_dynamics, mass_matrix};
use mollier_core::{Data, solve_positions};
use mollier_tests::{Link, serial_chain};

const G: f64 = 9.81;

fn diag(a: f64, b: f64, c: f64) -> [[f64; 3]; 3] {
    [[a, 0.0, 0.0], [0.0, b, 0.0], [0.0, 0.0, c]]
}

#[test]
fn simple_pendulum() {
    let (m, l, j) = (1.7, 0.6, 0.04);
    let link =
        Link { axis: [0.0, 0.0, 1.0], joint: [0.0; 3], com: [0.0, -l, 0.0], mass: m, inertia: diag(0.01, 0.02, j) };
    let (model, _) = serial_chain(&[link], [0.0, -G, 0.0]);
    let mut data = Data::new(&model);
    let mut rng = Rng::new(3);
    for _ in 0..20 {
        let (phi, w, a) = (3.0 * rng.symmetric(), 4.0 * rng.symmetric(), 5.0 * rng.symmetric());
        solve_positions(&model, &mut data, &[phi]).unwrap();
        let mbar = mass_matrix(&model, &mut data).unwrap();
        assert!((mbar[(0, 0)] - (m * l * l + j)).abs() < 1e-10, "{}", mbar[(0, 0)]);
        let q = bias_forces(&model, &mut data, &[w], &[]).unwrap();
        assert!((q[0] + m * G * l * phi.sin()).abs() < 1e-10, "{} vs {}", q[0], -m * G * l * phi.sin());
        let tau = inverse_dynamics(&model, &mut data, &[w], &[a], &[]).unwrap();
        assert!((tau[0] - ((m * l * l + j) * a + m * G * l * phi.sin())).abs() < 1e-10);
    }
}

#[test]
fn double_pendulum() {
    let (m1, m2, l1, l2, j1, j2) = (1.3, 0.8, 0.5, 0.7, 0.03, 0.05);
    let links = [
        Link { axis: [0.0, 0.0, 1.0], joint: [0.0; 3], com: [0.0, -l1, 0.0], mass: m1, inertia: diag(0.01, 0.01, j1) },
        Link {
            axis: [0.0, 0.0, 1.0],
            joint: [0.0, -l1, 0.0],
            com: [0.0, -l1 - l2, 0.0],
            mass: m2,
            inertia: diag(0.02, 0.02, j2),
        },
    ];
    let (model, _) = serial_chain(&links, [0.0, -G, 0.0]);
    let mut data = Data::new(&model);
    let mut rng = Rng::new(11);
    for _ in 0..20 {
        let q = [3.0 * rng.symmetric(), 3.0 * rng.symmetric()];
        let qd = [4.0 * rng.symmetric(), 4.0 * rng.symmetric()];
        let qdd = [5.0 * rng.symmetric(), 5.0 * rng.symmetric()];
        // absolute angles a = T q, T = [[1, 0], [1, 1]]
        let (a1, a2) = (q[0], q[0] + q[1]);
        let (ad1, ad2) = (qd[0], qd[0] + qd[1]);
        let (c, s) = ((a1 - a2).cos(), (a1 - a2).sin());
        let ma = [[(m1 + m2) * l1 * l1 + j1, m2 * l1 * l2 * c], [m2 * l1 * l2 * c, m2 * l2 * l2 + j2]];
        let ha = [m2 * l1 * l2 * s * ad2 * ad2, -m2 * l1 * l2 * s * ad1 * ad1];
        let ga = [(m1 + m2) * G * l1 * a1.sin(), m2 * G * l2 * a2.sin()];
        // in relative coordinates: M_q = Tᵀ M_a T, forces Tᵀ f_a
        let mq = [[ma[0][0] + 2.0 * ma[0][1] + ma[1][1], ma[0][1] + ma[1][1]], [ma[0][1] + ma[1][1], ma[1][1]]];
        let fa = [ha[0] + ga[0], ha[1] + ga[1]];
        let fq = [fa[0] + fa[1], fa[1]];
        solve_positions(&model, &mut data, &q).unwrap();
        let mbar = mass_matrix(&model, &mut data).unwrap();
        for i in 0..2 {
            for k in 0..2 {
                assert!((mbar[(i, k)] - mq[i][k]).abs() < 1e-10, "M[{i}][{k}] {} vs {}", mbar[(i, k)], mq[i][k]);
            }
        }
        let bias = bias_forces(&model, &mut data, &qd, &[]).unwrap();
        for i in 0..2 {
            assert!((bias[i] + fq[i]).abs() < 1e-10, "Q[{i}] {} vs {}", bias[i], -fq[i]);
        }
        let tau = inverse_dynamics(&model, &mut data, &qd, &qdd, &[]).unwrap();
        for i in 0..2 {
            let want = mq[i][0] * qdd[0] + mq[i][1] * qdd[1] + fq[i];
            assert!((tau[i] - want).abs() < 1e-10, "τ[{i}] {} vs {want}", tau[i]);
        }
    }
}
