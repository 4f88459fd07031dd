//! The synthetic model of the load-sharing benchmark (`benches/load_sharing.rs` includes this
//! file): a 5-DOF chain of bodies with masses and inertia under gravity, 48 attachment points and
//! 100 muscle trusses crossing one or two joints, a reserve per input, a joint cone, and a motion
//! through it.
#![allow(dead_code)]

use mollier_core::{Model, ModelBuilder, NodeId};
use mollier_hinge::Hinge;
use mollier_optim::{Criterion, Frame, JointCone, Muscle, Reserve, Study};
use mollier_tests::{IDENTITY, rigid_point};
use mollier_truss::Truss;

pub const LINKS: usize = 5;
pub const LINK: f64 = 0.25;
pub const MUSCLES: usize = 100;

pub struct Synthetic {
    pub model: Model,
    pub muscles: Vec<Muscle>,
    pub cone: JointCone,
}

pub fn synthetic() -> Synthetic {
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

pub fn frames(n_q: usize, n: usize) -> Vec<Frame> {
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

pub fn study(s: &Synthetic, criterion: Criterion, enforce: bool) -> Study {
    let mut st = Study::new(s.muscles.clone(), criterion);
    st.cone = Some(JointCone { enforce, ..s.cone.clone() });
    st.reserves = (0..LINKS).map(|input| Reserve { input, weight: 1e4 }).collect();
    st
}
