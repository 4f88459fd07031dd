//! One full load-sharing frame (positions by Newton-Raphson, kinetostatics and its influence,
//! the conic program, the independent check) on a synthetic model: a 5-DOF chain of bodies with
//! masses and inertia under gravity, 48 attachment points and 100 muscle trusses crossing one or
//! two joints, a reserve per input, and a joint cone; also the maximum isometric moment. Run with
//! `cargo bench -p mollier-optim --bench load_sharing`.

use divan::Bencher;
use mollier_core::{Model, ModelBuilder, NodeId};
use mollier_hinge::Hinge;
use mollier_optim::{Criterion, Frame, JointCone, LoadSharing, Muscle, Reserve, RunOptions, Study};
use mollier_tests::{IDENTITY, rigid_point};
use mollier_truss::Truss;

fn main() {
    divan::main();
}

const LINKS: usize = 5;
const LINK: f64 = 0.25;
const MUSCLES: usize = 100;

struct Synthetic {
    model: Model,
    muscles: Vec<Muscle>,
    cone: JointCone,
}

fn synthetic() -> Synthetic {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("ground", IDENTITY).unwrap();
    let j0 = b.position_node("J0", [0.0; 3]).unwrap();
    b.fix_node(g);
    b.fix_node(j0);
    let axes = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]];
    let (mut parent, mut joint) = (g, j0);
    let mut frames: Vec<(NodeId, Option<(NodeId, NodeId)>)> = vec![(g, None)];
    let mut first_beam = None;
    for i in 0..LINKS {
        let l = b.orientation_node(format!("L{i}"), IDENTITY).unwrap();
        let h = b.add_element(format!("joint{i}"), Box::new(Hinge::new(parent, l, axes[i % 3], None))).unwrap();
        b.input_mode(h, "rotation");
        let next = b.position_node(format!("J{}", i + 1), [LINK * (i + 1) as f64, 0.0, 0.0]).unwrap();
        let beam = rigid_point(&mut b, &format!("link{i}"), joint, l, next);
        first_beam.get_or_insert(beam);
        b.add_mass(next, 1.5);
        b.add_rotational_inertia(l, [[0.002, 0.0, 0.0], [0.0, 0.01, 0.0], [0.0, 0.0, 0.01]]);
        frames.push((l, Some((joint, l))));
        parent = l;
        joint = next;
    }
    b.set_gravity([0.0, -9.81, 0.0]);
    // 8 attachment points per body (the ground too), around the body's middle
    let mut points = Vec::new();
    for (body, (_, attach)) in frames.iter().enumerate() {
        let mid = if body == 0 { -0.1 } else { LINK * (body as f64 - 0.5) };
        let mut pts = Vec::new();
        for k in 0..8 {
            let a = std::f64::consts::TAU * k as f64 / 8.0;
            let x = [mid + if k % 2 == 0 { 0.05 } else { -0.05 }, 0.04 * a.cos(), 0.04 * a.sin()];
            let p = b.position_node(format!("P{body}_{k}"), x).unwrap();
            match attach {
                None => b.fix_node(p),
                Some((origin, l)) => {
                    rigid_point(&mut b, &format!("attach{body}_{k}"), *origin, *l, p);
                }
            }
            pts.push((p, x));
        }
        points.push(pts);
    }
    let mut els = Vec::new();
    for m in 0..MUSCLES {
        let a = m % LINKS;
        let span = 1 + (m / LINKS) % 2;
        let bb = (a + span).min(LINKS);
        let (p, xp) = points[a][(3 * m) % 8];
        let (q, xq) = points[bb][(5 * m + 1 + m / 40) % 8];
        let el = b.add_element(format!("muscle{m}"), Box::new(Truss::new(p, q))).unwrap();
        b.free_element(el);
        let l0 = ((xp[0] - xq[0]).powi(2) + (xp[1] - xq[1]).powi(2) + (xp[2] - xq[2]).powi(2)).sqrt();
        els.push((el, l0));
    }
    let model = b.build().unwrap();
    let muscles = els
        .iter()
        .enumerate()
        .map(|(i, &(el, l0))| Muscle::new(model.mode_id(el, 0), 2e-4 + 1e-5 * (i % 7) as f64, l0))
        .collect();
    // the cone at J1 on link 0: axis along −x (the link pushing back on its parent), DAS3's angles
    let j1 = model.node_by_name("J1").unwrap();
    let l0 = model.node_by_name("L0").unwrap();
    let cone = JointCone {
        node: j1,
        elements: vec![first_beam.unwrap()],
        body: l0,
        rotation: [[-1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 1.0]],
        half_angle_y: 0.7744,
        half_angle_z: 0.6728,
        enforce: false,
    };
    Synthetic { model, muscles, cone }
}

fn frames(n_q: usize, n: usize) -> Vec<Frame> {
    (0..n)
        .map(|k| {
            let t = k as f64 * 0.01;
            let f = |j: usize| 1.0 + 0.3 * j as f64;
            let q = (0..n_q).map(|j| 0.3 * (f(j) * t).sin()).collect();
            let qd = (0..n_q).map(|j| 0.3 * f(j) * (f(j) * t).cos()).collect();
            let qdd = (0..n_q).map(|j| -0.3 * f(j) * f(j) * (f(j) * t).sin()).collect();
            Frame { time: t, q, qd, qdd, loads: Vec::new() }
        })
        .collect()
}

fn study(s: &Synthetic, criterion: Criterion, enforce: bool) -> Study {
    let mut st = Study::new(s.muscles.clone(), criterion);
    st.cone = Some(JointCone { enforce, ..s.cone.clone() });
    st.reserves = (0..LINKS).map(|input| Reserve { input, weight: 1e4 }).collect();
    st
}

/// One frame at a time on one core, stepping through a motion.
fn bench_frames(bencher: Bencher, criterion: Criterion, enforce: bool) {
    let s = synthetic();
    let sharing = LoadSharing::new(&s.model, study(&s, criterion, enforce)).unwrap();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut ws = sharing.workspace();
    let mut k = 0;
    bencher.bench_local(|| {
        let r = sharing.frame(&mut ws, &mut data, &motion[k % motion.len()]);
        assert!(r.status.is_success(), "{}", r.status);
        k += 1;
    });
}

/// Criterion (c), cone reported.
#[divan::bench]
fn frame_activations(bencher: Bencher) {
    bench_frames(bencher, Criterion::Activations, false);
}

/// Criterion (c), cone imposed (one second-order cone more).
#[divan::bench]
fn frame_activations_cone(bencher: Bencher) {
    bench_frames(bencher, Criterion::Activations, true);
}

/// Criterion (d): two programs per frame.
#[divan::bench]
fn frame_max_stress(bencher: Bencher) {
    bench_frames(bencher, Criterion::MaxStress, false);
}

/// Criterion (cb), Σ (F/PCSA)³: one power cone per muscle.
#[divan::bench]
fn frame_cubed_stresses(bencher: Bencher) {
    bench_frames(bencher, Criterion::CubedStresses, false);
}

/// One maximum isometric moment (both stages) about the first joint, the other joints
/// balanced, cone imposed, at the motion's postures (with the positions, as a frame above).
#[divan::bench]
fn max_moment(bencher: Bencher) {
    let s = synthetic();
    let mut st = study(&s, Criterion::Stresses, true);
    st.reserves.clear();
    let dirs = vec![mollier_optim::Direction { input: 0, positive: "up".into(), negative: "down".into() }];
    let mm = mollier_optim::MaxMoment::new(&s.model, st, dirs, &[]).unwrap();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut ws = mm.workspace();
    let mut k = 0;
    bencher.bench_local(|| {
        mollier_core::solve_positions(&s.model, &mut data, &motion[k % motion.len()].q).unwrap();
        let r = mm.solve(&mut ws, &mut data, 0, k % 2 == 0, &[]);
        assert!(r.frame.status.is_success(), "{}", r.frame.status);
        k += 1;
    });
}

/// Positions only, for reference: the kinematics part of a frame.
#[divan::bench]
fn positions_only(bencher: Bencher) {
    let s = synthetic();
    let motion = frames(s.model.n_q(), 200);
    let mut data = mollier_core::Data::new(&s.model);
    let mut k = 0;
    bencher.bench_local(|| {
        mollier_core::solve_positions(&s.model, &mut data, &motion[k % motion.len()].q).unwrap();
        k += 1;
    });
}

/// 200 frames through `run` on all cores (2 here), per call; each chunk from the initial
/// configuration (`follow` would add a sequential pass of the positions).
#[divan::bench(sample_count = 10)]
fn run_200_frames_parallel(bencher: Bencher) {
    let s = synthetic();
    let sharing = LoadSharing::new(&s.model, study(&s, Criterion::Activations, true)).unwrap();
    let motion = frames(s.model.n_q(), 200);
    bencher.bench_local(|| sharing.run(&motion, RunOptions { follow: false, ..RunOptions::default() }));
}
