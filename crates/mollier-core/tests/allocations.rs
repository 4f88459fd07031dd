//! A warm frame allocates nothing: positions (placed in closed form on these chains) and
//! kinetostatics (velocities, accelerations, driving forces, reactions) of a pendulum and of a
//! 10-body chain, counted by a global allocator that counts this thread's allocations.

use mollier_core::dynamics::{Kinetostatics, kinetostatics_into};
use mollier_core::{Data, Model, solve_positions};
use mollier_tests::counting::{Counting, allocations};
use mollier_tests::{Points, serial_chain_with, timing_links};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// `n` bodies in series under gravity, each turned about the previous one by a driven hinge, with
/// a mass and a full inertia tensor; joints and centres of mass attached to the body frames.
fn chain(n: usize) -> Model {
    serial_chain_with(&timing_links(n, 0.1), [0.0, -9.81, 0.0], Points::Attached, |_, _| {}).0
}

/// Allocations of the third of three frames that move every input, with rates and accelerations.
fn warm_frame_allocations(model: &Model) -> usize {
    let nq = model.n_q();
    let (qd, qdd) = (vec![0.4; nq], vec![-1.1; nq]);
    let mut data = Data::new(model);
    let mut out = Kinetostatics { sigma: Vec::new(), nodal: Vec::new() };
    let frame = |data: &mut Data, out: &mut Kinetostatics, k: usize| {
        let q = vec![0.02 * k as f64; nq];
        let before = data.x().to_vec();
        solve_positions(model, data, &q).expect("solves");
        // placed in closed form on a chain: no Newton iteration, but the frame moved
        assert!(data.x() != &before[..], "the frame moved");
        kinetostatics_into(model, data, &qd, &qdd, None, &[], out).expect("kinetostatics");
        assert!(out.sigma.iter().all(|v| v.is_finite()) && out.sigma.iter().any(|v| *v != 0.0));
    };
    frame(&mut data, &mut out, 1);
    frame(&mut data, &mut out, 2);
    // the input vector is made outside the count
    let q = vec![0.06; nq];
    allocations(|| {
        solve_positions(model, &mut data, &q).expect("solves");
        kinetostatics_into(model, &mut data, &qd, &qdd, None, &[], &mut out).expect("kinetostatics");
    })
}

#[test]
fn the_counter_counts() {
    assert_eq!(allocations(|| drop(std::hint::black_box(vec![1.0f64; 3]))), 1);
}

#[test]
fn a_warm_pendulum_frame_allocates_nothing() {
    assert_eq!(warm_frame_allocations(&chain(1)), 0);
}

#[test]
fn a_warm_chain_frame_allocates_nothing() {
    assert_eq!(warm_frame_allocations(&chain(10)), 0);
}

/// A kinematics frame as `mollier kinematics` makes it: positions, then the first-order transfer
/// functions `DF` (the storage of the previous frame's reused), which on this placed chain come
/// from the joints' screws outward (asserted: else the count says nothing of that pass).
#[test]
fn a_warm_kinematics_frame_allocates_nothing() {
    let model = chain(10);
    let nq = model.n_q();
    let mut data = Data::new(&model);
    for k in 1..=2 {
        solve_positions(&model, &mut data, &vec![0.02 * k as f64; nq]).expect("solves");
        mollier_core::transfer::first_order(&model, &mut data).expect("DF");
    }
    let q = vec![0.06; nq];
    let n = allocations(|| {
        solve_positions(&model, &mut data, &q).expect("solves");
        mollier_core::transfer::first_order(&model, &mut data).expect("DF");
    });
    assert!(data.df_by_screws(), "DF came from the general path, not the joints' screws");
    assert_eq!(n, 0);
    // and DF is the one of this configuration: a column against central differences of x(q)
    let h = 1e-6;
    let x_at = |q: &[f64]| {
        let mut d = data.clone();
        solve_positions(&model, &mut d, q).expect("solves");
        d.x().to_vec()
    };
    for j in [0, nq - 1] {
        let (mut qp, mut qm) = (q.clone(), q.clone());
        qp[j] += h;
        qm[j] -= h;
        let (xp, xm) = (x_at(&qp), x_at(&qm));
        for (i, (a, b)) in xp.iter().zip(&xm).enumerate() {
            let fd = (a - b) / (2.0 * h);
            assert!((fd - data.df_x()[(i, j)]).abs() < 1e-7, "DF[{i}, {j}]: {} against {fd}", data.df_x()[(i, j)]);
        }
    }
}

/// The modes' third-order jets of a moving chain (`transfer3::mode_jets`, what optimal control
/// asks of each muscle's path at each node of its grid) take their work space from `Data`: a
/// warm call allocates no more than the third-order transfer functions it is built on (one
/// allocation a call below `transfer3`, in the kernel's solve, not located), and gives the
/// cold call's numbers.
#[test]
fn warm_third_order_jets_allocate_nothing_of_their_own() {
    let model = chain(10);
    let nq = model.n_q();
    let v: Vec<f64> = (0..nq).map(|j| 0.8 * ((j as f64 + 1.0) * 2.3).cos()).collect();
    let modes: Vec<_> = (0..model.n_e()).map(mollier_core::ModeId::new).collect();
    let mut data = Data::new(&model);
    solve_positions(&model, &mut data, &vec![0.06; nq]).expect("solves");
    let (mut first, mut out, mut d3) = (Vec::new(), Vec::new(), faer::Mat::<f64>::new());
    mollier_core::transfer3::mode_jets(&model, &mut data, &v, &modes, &mut first).expect("jets");
    mollier_core::transfer3::mode_jets(&model, &mut data, &v, &modes, &mut out).expect("jets");
    mollier_core::transfer3::third_order(&model, &mut data, &v, &mut d3).expect("D³F");
    let jets = allocations(|| {
        mollier_core::transfer3::mode_jets(&model, &mut data, &v, &modes, &mut out).expect("jets");
    });
    let third = allocations(|| mollier_core::transfer3::third_order(&model, &mut data, &v, &mut d3).expect("D³F"));
    assert_eq!(jets, third, "the jets allocate {jets}, the transfer functions {third}");
    assert!(third <= 1, "the third-order transfer functions allocate {third} times a call");
    assert_eq!(out, first);
    assert!(out.iter().any(|j| j[2] != 0.0), "the chain's third derivatives vanish");
}
