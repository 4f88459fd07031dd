//! Sign constraints on reactions: a plate whose rotation is driven, held in the plane by a rigid
//! "ligament" (tension only) and a rigid "contact" (compression only, as a SURFACE element), with
//! four muscles. Its statics are solved by hand in the reference configuration: the ligament
//! (vertical) and the contact (horizontal) take the net force, the driving moment balances the
//! rest, all affine in the muscle forces.

use mollier_core::dynamics::{Load, kinetostatics};
use mollier_core::geometry::Vec3;
use mollier_core::{Data, ModeId, Model, ModelBuilder, NodeId, solve_positions};
use mollier_hinge::Hinge;
use mollier_optim::{Criterion, LoadSharing, Muscle, Sign, SignConstraint, Study};
use mollier_tests::{IDENTITY, rigid_point};
use mollier_truss::Truss;

use crate::common::*;

const P: Vec3 = [-0.1, 0.05, 0.0];
const A: Vec3 = [-0.1, 0.25, 0.0];
const Q: Vec3 = [0.1, -0.05, 0.0];
const C: Vec3 = [0.25, -0.05, 0.0];
const H: Vec3 = [0.2, 0.0, 0.0];
// two muscles pull to the left, two up and to the right; all four turn the plate the same way
const ORIGINS: [Vec3; 4] = [[-0.3, 0.1, 0.0], [0.35, 0.2, 0.0], [-0.3, 0.05, 0.0], [0.2, 0.25, 0.0]];
const INSERTIONS: [Vec3; 4] = [[0.05, 0.05, 0.0], [0.15, 0.03, 0.0], [-0.05, 0.0, 0.0], [0.05, -0.04, 0.0]];

struct Plate {
    model: Model,
    tip: NodeId,
    ligament: ModeId,
    contact: ModeId,
    muscles: Vec<ModeId>,
    l0: Vec<f64>,
}

fn plate() -> Plate {
    let mut b = ModelBuilder::new();
    let g = b.orientation_node("ground", IDENTITY).unwrap();
    b.fix_node(g);
    let l = b.orientation_node("plate", IDENTITY).unwrap();
    let h = b.add_element("drive", Box::new(Hinge::new(g, l, [0.0, 0.0, 1.0], None))).unwrap();
    b.input_mode(h, "rotation");
    let o = b.position_node("B", [0.0; 3]).unwrap();
    b.fix_coordinate(o, 2);
    let point = |b: &mut ModelBuilder, name: &str, x: Vec3| {
        let n = b.position_node(name, x).unwrap();
        rigid_point(b, &format!("plate_{name}"), o, l, n);
        n
    };
    let fixed = |b: &mut ModelBuilder, name: &str, x: Vec3| {
        let n = b.position_node(name, x).unwrap();
        b.fix_node(n);
        n
    };
    let (pn, qn, tip) = (point(&mut b, "P", P), point(&mut b, "Q", Q), point(&mut b, "H", H));
    let (an, cn) = (fixed(&mut b, "A", A), fixed(&mut b, "C", C));
    let lig = b.add_element("ligament", Box::new(Truss::new(an, pn))).unwrap();
    let con = b.add_element("contact", Box::new(Truss::new(cn, qn))).unwrap();
    let mut els = Vec::new();
    for i in 0..4 {
        let on = fixed(&mut b, &format!("O{i}"), ORIGINS[i]);
        let inn = point(&mut b, &format!("I{i}"), INSERTIONS[i]);
        let m = b.add_element(format!("muscle{i}"), Box::new(Truss::new(on, inn))).unwrap();
        b.free_element(m);
        els.push(m);
    }
    let model = b.build().unwrap();
    let muscles = els.iter().map(|&e| model.mode_id(e, 0)).collect();
    let (ligament, contact) = (model.mode_id(lig, 0), model.mode_id(con, 0));
    let l0 = (0..4).map(|i| norm(&sub(&INSERTIONS[i], &ORIGINS[i]))).collect();
    Plate { model, tip, ligament, contact, muscles, l0 }
}

/// Hand statics at the reference configuration for load `w` at H: for each of (σ_ligament,
/// σ_contact, τ) the value at F = 0 and the coefficients of F.
fn statics(w: &Vec3) -> [(f64, Vec<f64>); 3] {
    let al = unit(&sub(&A, &P));
    let ac = unit(&sub(&C, &Q));
    // σ_L al + σ_C ac = −g, g the other forces; the two directions are vertical and horizontal
    assert!(al[0].abs() < 1e-15 && ac[1].abs() < 1e-15);
    let solve = |g: &Vec3, moment: f64| -> [f64; 3] {
        let sl = -g[1] / al[1];
        let sc = -g[0] / ac[0];
        let tau =
            -(cross(&P, &[sl * al[0], sl * al[1], 0.0])[2] + cross(&Q, &[sc * ac[0], sc * ac[1], 0.0])[2] + moment);
        [sl, sc, tau]
    };
    let base = solve(w, cross(&H, w)[2]);
    let per: Vec<[f64; 3]> = (0..4)
        .map(|i| {
            let d = unit(&sub(&ORIGINS[i], &INSERTIONS[i]));
            solve(&d, cross(&INSERTIONS[i], &d)[2])
        })
        .collect();
    [0, 1, 2].map(|r| (base[r], per.iter().map(|p| p[r]).collect()))
}

/// min ‖F‖² s.t. the rows `a_m·F = b_m`, `F >= 0`, with the muscles in `support` pulling and the
/// others at 0: on the support `F = Σ y_m a_m` by the normal equations. Checks the KKT signs off
/// the support (bound multipliers `ν_i = −2 Σ y_m a_mi >= 0`) and the forces on it (> 0).
fn projection(rows: &[(Vec<f64>, f64)], support: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let n = rows.len();
    let dot = |i: usize, j: usize| support.iter().map(|&k| rows[i].0[k] * rows[j].0[k]).sum::<f64>();
    let g = nalgebra::DMatrix::from_fn(n, n, dot);
    let b = nalgebra::DVector::from_fn(n, |i, _| rows[i].1);
    let y = g.lu().solve(&b).unwrap();
    let f: Vec<f64> =
        (0..4).map(|k| if support.contains(&k) { (0..n).map(|i| y[i] * rows[i].0[k]).sum() } else { 0.0 }).collect();
    for k in 0..4 {
        if support.contains(&k) {
            assert!(f[k] > 0.0, "hand solution: muscle {k} must pull: {f:?}");
        } else {
            let nu = -2.0 * (0..n).map(|i| y[i] * rows[i].0[k]).sum::<f64>();
            assert!(nu >= 0.0, "hand solution: muscle {k} at rest needs ν >= 0, got {nu}");
        }
    }
    (f, y.iter().copied().collect())
}

fn solve(p: &Plate, w: Vec3, signs: Vec<SignConstraint>) -> mollier_optim::FrameResult {
    let muscles = (0..4).map(|i| Muscle::new(p.muscles[i], 1e-3, p.l0[i])).collect();
    let mut study = Study::new(muscles, Criterion::Forces);
    study.signs = signs;
    let sharing = LoadSharing::new(&p.model, study).unwrap();
    let mut data = Data::new(&p.model);
    solve_positions(&p.model, &mut data, &[0.0]).unwrap();
    let mut ws = sharing.workspace();
    let r = sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &[Load::Force { node: p.tip, force: w }]);
    assert!(r.status.is_success(), "{}", r.status);
    r
}

fn value(row: &(f64, Vec<f64>), f: &[f64]) -> f64 {
    row.0 + row.1.iter().zip(f).map(|(a, b)| a * b).sum::<f64>()
}

#[test]
fn contact_compression_changes_the_solution() {
    let p = plate();
    let w = [0.0, -10.0, 0.0];
    let [lig, con, tau] = statics(&w);
    let all = [0, 1, 2, 3];
    // free optimum: F ∝ ∂τ/∂F
    let free = projection(&[(tau.1.clone(), -tau.0)], &all).0;
    assert!(value(&con, &free) > 0.0, "precondition: the free optimum pulls on the contact");
    let r = solve(&p, w, vec![]);
    assert!(rel_diff(&r.forces, &free, 100.0) < 1e-9, "{:?} vs {free:?}", r.forces);
    // with compression only, the contact carries nothing: a second equality
    let (want, y) = projection(&[(tau.1.clone(), -tau.0), (con.1.clone(), -con.0)], &all);
    // KKT of min ‖F‖² + μ σ_C: 2F = λ t + ... − μ c with F = Σ y a ⇒ μ = −2 y₂ >= 0
    assert!(y[1] < 0.0, "precondition: the contact's multiplier is positive");
    let r = solve(&p, w, vec![SignConstraint { mode: p.contact, sign: Sign::Compression }]);
    assert!(rel_diff(&r.forces, &want, 100.0) < 1e-9, "{:?} vs {want:?}", r.forces);
    assert_eq!(r.reactions.len(), 1);
    assert!(r.reactions[0].abs() < 1e-8, "contact {}", r.reactions[0]);
    // the ligament, unconstrained, carries what the hand statics say (kinetostatics directly)
    let mut data = Data::new(&p.model);
    solve_positions(&p.model, &mut data, &[0.0]).unwrap();
    let mut sigma = vec![0.0; p.model.n_e()];
    for i in 0..4 {
        sigma[p.muscles[i].index()] = r.forces[i];
    }
    let load = [Load::Force { node: p.tip, force: w }];
    let ks = kinetostatics(&p.model, &mut data, &[0.0], &[0.0], Some(&sigma), &load).unwrap();
    let sl = ks.sigma[p.ligament.index()];
    assert!((sl - value(&lig, &want)).abs() < 1e-9 * 100.0, "ligament {sl} vs {}", value(&lig, &want));
}

#[test]
fn ligament_tension_changes_the_solution() {
    let p = plate();
    // a light load pushing right: the muscles' upward pull would push on the ligament
    let w = [20.0, -2.0, 0.0];
    let [lig, _, tau] = statics(&w);
    let free = projection(&[(tau.1.clone(), -tau.0)], &[0, 1, 2, 3]).0;
    assert!(value(&lig, &free) < 0.0, "precondition: the free optimum pushes on the ligament");
    let r = solve(&p, w, vec![]);
    assert!(rel_diff(&r.forces, &free, 100.0) < 1e-9, "{:?} vs {free:?}", r.forces);
    // tension only: σ_L = 0 becomes an equality and muscles 1 and 3 rest
    let (want, y) = projection(&[(tau.1.clone(), -tau.0), (lig.1.clone(), -lig.0)], &[0, 2]);
    // the constraint is −σ_L <= 0: its multiplier μ = 2 y₂ >= 0
    assert!(y[1] > 0.0, "precondition: the ligament's multiplier is positive");
    let r = solve(&p, w, vec![SignConstraint { mode: p.ligament, sign: Sign::Tension }]);
    assert!(rel_diff(&r.forces, &want, 100.0) < 1e-9, "{:?} vs {want:?}", r.forces);
    assert!(r.reactions[0].abs() < 1e-8, "ligament slack: {}", r.reactions[0]);
}
