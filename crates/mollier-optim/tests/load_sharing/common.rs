//! Test rigs built with the kernel's `ModelBuilder`, hand geometry, and a KKT checker that
//! recovers multipliers by least squares, independently of clarabel.

use mollier_core::geometry::Vec3;
use mollier_core::{Data, ElementId, ModeId, Model, ModelBuilder, NodeId};
use mollier_hinge::Hinge;
use mollier_tests::{IDENTITY, rigid_point};
use mollier_truss::Truss;
use nalgebra::{DMatrix, DVector};

pub const T: f64 = mollier_optim::DEFAULT_SPECIFIC_TENSION;
pub const W: f64 = mollier_optim::DEFAULT_WIDTH;

/// A humerus-like body turning about a joint node `J` (at the origin) that hangs on a fixed
/// "scapula" point `S` by a rigid beam. Muscles run from fixed origins to insertions on the body.
pub struct Arm {
    pub model: Model,
    /// Scapula orientation (fixed, identity).
    pub scapula: NodeId,
    /// The joint node.
    pub joint: NodeId,
    /// The rigid beam from S to the joint: the scapula's element at the joint.
    pub scapula_beam: ElementId,
    /// The body's tip (where loads go).
    pub tip: NodeId,
    /// The muscles' trusses and elongation modes.
    pub muscle_elements: Vec<ElementId>,
    pub muscles: Vec<ModeId>,
    /// Reference lengths (m).
    pub l0: Vec<f64>,
    /// Hand geometry in the reference configuration.
    pub origins: Vec<Vec3>,
    pub insertions: Vec<Vec3>,
    pub tip0: Vec3,
    /// Insertion nodes.
    pub insertion_nodes: Vec<NodeId>,
}

pub fn sub(a: &Vec3, b: &Vec3) -> Vec3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
pub fn norm(a: &Vec3) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}
pub fn cross(a: &Vec3, b: &Vec3) -> Vec3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
pub fn unit(a: &Vec3) -> Vec3 {
    let n = norm(a);
    [a[0] / n, a[1] / n, a[2] / n]
}
/// Rotation about z by `q`.
pub fn rot_z(q: f64, p: &Vec3) -> Vec3 {
    let (s, c) = q.sin_cos();
    [c * p[0] - s * p[1], s * p[0] + c * p[1], p[2]]
}

/// `spherical = false`: one hinge about z (1 DOF); `true`: hinges z, y, x in series (3 DOF).
pub fn arm(origins: &[Vec3], insertions: &[Vec3], tip: Vec3, spherical: bool) -> Arm {
    arm_with_mass(origins, insertions, tip, spherical, None)
}

/// [`arm`] with a point mass (kg) at the tip and a body inertia, under gravity (−y).
pub fn arm_with_mass(origins: &[Vec3], insertions: &[Vec3], tip: Vec3, spherical: bool, mass: Option<f64>) -> Arm {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("scapula", IDENTITY).unwrap();
    let s = b.position_node("S", [-0.04, 0.01, 0.0]).unwrap();
    b.fix_node(g);
    b.fix_node(s);
    let j = b.position_node("GH", [0.0; 3]).unwrap();
    let scapula_beam = rigid_point(&mut b, "scapula_gh", s, g, j);
    let body = b.orientation_node("humerus", IDENTITY).unwrap();
    if spherical {
        let a = b.orientation_node("gh_a", IDENTITY).unwrap();
        let c = b.orientation_node("gh_b", IDENTITY).unwrap();
        for (k, (p, q, axis)) in
            [(g, a, [0.0, 0.0, 1.0]), (a, c, [0.0, 1.0, 0.0]), (c, body, [1.0, 0.0, 0.0])].into_iter().enumerate()
        {
            let h = b.add_element(format!("gh{k}"), Box::new(Hinge::new(p, q, axis, None))).unwrap();
            b.input_mode(h, "rotation");
        }
    } else {
        let h = b.add_element("gh", Box::new(Hinge::new(g, body, [0.0, 0.0, 1.0], None))).unwrap();
        b.input_mode(h, "rotation");
    }
    let tipn = b.position_node("tip", tip).unwrap();
    rigid_point(&mut b, "humerus_tip", j, body, tipn);
    let mut muscle_elements = Vec::new();
    let mut insertion_nodes = Vec::new();
    let mut l0 = Vec::new();
    for (i, (o, ins)) in origins.iter().zip(insertions).enumerate() {
        let on = b.position_node(format!("O{i}"), *o).unwrap();
        b.fix_node(on);
        let inn = b.position_node(format!("I{i}"), *ins).unwrap();
        rigid_point(&mut b, &format!("humerus_I{i}"), j, body, inn);
        let m = b.add_element(format!("muscle{i}"), Box::new(Truss::new(on, inn))).unwrap();
        b.free_element(m);
        muscle_elements.push(m);
        insertion_nodes.push(inn);
        l0.push(norm(&sub(ins, o)));
    }
    if let Some(m) = mass {
        b.add_mass(tipn, m);
        b.add_rotational_inertia(body, [[0.01, 0.0, 0.0], [0.0, 0.02, 0.0], [0.0, 0.0, 0.02]]);
        b.set_gravity([0.0, -9.81, 0.0]);
    }
    let model = b.build().unwrap();
    let muscles = muscle_elements.iter().map(|&e| model.mode_id(e, 0)).collect();
    Arm {
        model,
        scapula: g,
        joint: j,
        scapula_beam,
        tip: tipn,
        muscle_elements,
        muscles,
        l0,
        origins: origins.to_vec(),
        insertions: insertions.to_vec(),
        tip0: tip,
        insertion_nodes,
    }
}

impl Arm {
    /// Planar hand geometry at angle `q` (1 DOF): each muscle's current length, moment arm
    /// about z (`r = ẑ·(I × O)/L`, positive when the muscle drives q up) and unit pull on the
    /// body (from insertion to origin).
    pub fn planar(&self, q: f64) -> (Vec<f64>, Vec<f64>, Vec<Vec3>) {
        let mut len = Vec::new();
        let mut arm = Vec::new();
        let mut pull = Vec::new();
        for (o, i0) in self.origins.iter().zip(&self.insertions) {
            let i = rot_z(q, i0);
            let d = sub(o, &i);
            let l = norm(&d);
            len.push(l);
            arm.push(cross(&i, o)[2] / l);
            pull.push(unit(&d));
        }
        (len, arm, pull)
    }

    /// The driving moment that holds a force `f` at the tip at angle `q` (1 DOF): `−(r × f)_z`.
    pub fn holding_moment(&self, q: f64, f: &Vec3) -> f64 {
        -cross(&rot_z(q, &self.tip0), f)[2]
    }
}

/// KKT conditions of `min J(F)` s.t. `a_j·F = b_j`, `g_m(F) <= 0`, with the multipliers
/// recovered by least squares on the active set.
pub struct KktReport {
    /// Stationarity residual relative to |∇J|.
    pub stationarity: f64,
    /// Multipliers of the active inequalities, with their indices.
    pub mu: Vec<(usize, f64)>,
}

/// `ineq`: (gradient, value in `g <= 0` form, scale of the constraint).
pub fn kkt(grad: &[f64], eq: &[Vec<f64>], ineq: &[(Vec<f64>, f64, f64)], active_tol: f64) -> KktReport {
    let k = grad.len();
    let active: Vec<usize> = (0..ineq.len()).filter(|&m| ineq[m].1 >= -active_tol * ineq[m].2).collect();
    let ncol = eq.len() + active.len();
    let a = DMatrix::from_fn(k, ncol, |r, c| if c < eq.len() { eq[c][r] } else { ineq[active[c - eq.len()]].0[r] });
    let rhs = DVector::from_fn(k, |r, _| -grad[r]);
    let svd = a.clone().svd(true, true);
    let x = svd.solve(&rhs, 1e-12).expect("least squares");
    let res = &a * &x - &rhs;
    let gn = grad.iter().map(|v| v * v).sum::<f64>().sqrt();
    KktReport {
        stationarity: res.norm() / gn.max(1e-300),
        mu: active.iter().enumerate().map(|(c, &m)| (m, x[eq.len() + c])).collect(),
    }
}

/// Muscle lengths' derivatives with respect to the inputs, `∂e_i/∂q_j` (k x n_q), from the
/// kernel's first-order transfer function (not from kinetostatics).
pub fn length_jacobian(model: &Model, data: &mut Data, modes: &[ModeId]) -> Vec<Vec<f64>> {
    mollier_core::transfer::first_order(model, data).unwrap();
    let df = data.df_e();
    modes.iter().map(|m| (0..model.n_q()).map(|j| df[(m.index(), j)]).collect()).collect()
}

/// Largest relative difference between two vectors, relative to `scale`.
pub fn rel_diff(a: &[f64], b: &[f64], scale: f64) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs() / scale))
}
