//! The dense solver against clarabel and the KKT conditions on random programs, and its cone
//! algebra.

use super::*;

use crate::qp::{Backend, Program};
use clarabel::solver::SolverStatus;

use mollier_core::conformance::Rng;

/// Uniform in `[a, b)`.
fn range(rng: &mut Rng, a: f64, b: f64) -> f64 {
    a + (b - a) * rng.uniform()
}

/// A random program of `layout` around a feasible point `u*` (or made infeasible: an
/// equality no force within the bounds reaches).
fn random_values(layout: &Layout, rng: &mut Rng, infeasible: bool) -> Values {
    let k = layout.k;
    let mut v = Values::new(layout);
    let us: Vec<f64> = (0..k).map(|_| range(rng, 0.0, 0.6)).collect();
    for j in 0..layout.n_eq {
        for i in 0..k {
            // sparse-ish: a muscle crosses about half the inputs
            v.eq[j * k + i] = if rng.uniform() < 0.5 { range(rng, -1.0, 1.0) } else { 0.0 };
        }
        v.eq_rhs[j] = dot(&v.eq[j * k..(j + 1) * k], &us);
    }
    if infeasible {
        // the last input has no reserve
        let j = layout.n_eq - 1;
        v.eq_rhs[j] = 1.5 * v.eq[j * k..].iter().map(|a| a.abs()).sum::<f64>() + 0.1;
    }
    for r in 0..layout.reserves.len() {
        v.reserve_coef[r] = -range(rng, 0.5, 1.5);
    }
    for s in 0..layout.n_sign {
        for i in 0..k {
            v.sign[s * k + i] = range(rng, -1.0, 1.0);
        }
        // tight at u* for the first row: the optimum is likely pushed against it
        v.sign_rhs[s] = dot(&v.sign[s * k..(s + 1) * k], &us) + if s == 0 { 0.0 } else { range(rng, 0.0, 0.5) };
    }
    for i in 0..k {
        v.stress[i] = range(rng, 0.5, 1.5);
    }
    let smax = (0..k).map(|i| v.stress[i] * us[i]).fold(0.0, f64::max);
    v.stress_rhs = if layout.stress == Some(false) { 1.02 * smax } else { 0.0 };
    if layout.cone {
        // the joint force at u* inside the cone, near its rim
        let inside = [1.0, range(rng, -0.6, 0.6), range(rng, -0.6, 0.6)];
        for r in 0..3 {
            for i in 0..k {
                v.cone[r * k + i] = range(rng, -1.0, 1.0) * if r == 0 { 0.3 } else { 1.0 };
            }
            v.cone_rhs[r] = inside[r] + dot(&v.cone[r * k..(r + 1) * k], &us);
        }
    }
    for i in 0..k {
        v.p_diag[i] = if layout.stress == Some(true) { 0.0 } else { range(rng, 0.2, 2.0) };
    }
    for r in 0..layout.reserves.len() {
        v.p_diag[k + r] = range(rng, 1.0, 50.0);
    }
    if layout.stress == Some(true) {
        v.p_diag[layout.t_index()] = 2.0;
        v.q[layout.t_index()] = 1e-3;
    }
    v
}

/// The program's rows at `x`, independently of the solver: equalities, bounds, sign and
/// stress rows, the cone, to 1e-11.
fn assert_feasible(layout: &Layout, v: &Values, x: &[f64], what: &str) {
    let k = layout.k;
    let tol = 1e-11;
    for j in 0..layout.n_eq {
        let mut r = dot(&v.eq[j * k..(j + 1) * k], &x[..k]) - v.eq_rhs[j];
        for (q, &jj) in layout.reserves.iter().enumerate() {
            if jj == j {
                r += v.reserve_coef[q] * x[k + q];
            }
        }
        assert!(r.abs() <= tol, "{what}: equality {j} off by {r:e}");
    }
    for i in 0..k {
        assert!(x[i] >= -tol && x[i] <= 1.0 + tol, "{what}: u[{i}] = {}", x[i]);
        if let Some(with_t) = layout.stress {
            let t = if with_t { x[layout.t_index()] } else { 0.0 };
            assert!(v.stress[i] * x[i] - t <= v.stress_rhs + tol, "{what}: stress row {i}");
        }
    }
    for s in 0..layout.n_sign {
        assert!(dot(&v.sign[s * k..(s + 1) * k], &x[..k]) <= v.sign_rhs[s] + tol, "{what}: sign row {s}");
    }
    if layout.cone {
        let c: Vec<f64> = (0..3).map(|r| v.cone_rhs[r] - dot(&v.cone[r * k..(r + 1) * k], &x[..k])).collect();
        assert!(c[1].hypot(c[2]) <= c[0] + tol, "{what}: outside the cone: {c:?}");
    }
}

/// The KKT conditions of the program at `(x, y, z)`, computed here from the data: dual
/// feasibility, stationarity and complementarity to 1e-11 (with the rows' feasibility of
/// `assert_feasible`, `x` is then optimal, and unique to about 1e-11 where `P > 0`).
fn assert_kkt(layout: &Layout, v: &Values, x: &[f64], y: &[f64], z: &[f64], what: &str) {
    let k = layout.k;
    let ns = layout.n_sign;
    let nst = if layout.stress.is_some() { k } else { 0 };
    let (rs, rt, rc) = (2 * k, 2 * k + ns, 2 * k + ns + nst);
    let tol = 1e-11;
    let mut g: Vec<f64> = (0..layout.n_var()).map(|i| v.p_diag[i] * x[i] + v.q[i]).collect();
    let mut comp = 0.0;
    for i in 0..k {
        g[i] += (0..layout.n_eq).map(|j| v.eq[j * k + i] * y[j]).sum::<f64>() + z[i] - z[k + i];
        g[i] += (0..ns).map(|s| v.sign[s * k + i] * z[rs + s]).sum::<f64>();
        comp += (1.0 - x[i]) * z[i] + x[i] * z[k + i];
        if nst > 0 {
            g[i] += v.stress[i] * z[rt + i];
            let t = if layout.stress == Some(true) { x[layout.t_index()] } else { 0.0 };
            comp += (v.stress_rhs + t - v.stress[i] * x[i]) * z[rt + i];
            if layout.stress == Some(true) {
                g[layout.t_index()] -= z[rt + i];
            }
        }
        if layout.cone {
            g[i] += (0..3).map(|r| v.cone[r * k + i] * z[rc + r]).sum::<f64>();
        }
    }
    for (r, &j) in layout.reserves.iter().enumerate() {
        g[k + r] += v.reserve_coef[r] * y[j];
    }
    for s in 0..ns {
        comp += (v.sign_rhs[s] - dot(&v.sign[s * k..(s + 1) * k], &x[..k])) * z[rs + s];
    }
    if layout.cone {
        let c: Vec<f64> = (0..3).map(|r| v.cone_rhs[r] - dot(&v.cone[r * k..(r + 1) * k], &x[..k])).collect();
        comp += dot(&c, &z[rc..rc + 3]);
        assert!(z[rc + 1].hypot(z[rc + 2]) <= z[rc] + tol, "{what}: cone dual outside: {:?}", &z[rc..]);
    }
    assert!(z[..rc].iter().all(|&zi| zi >= -tol), "{what}: a negative dual");
    let gmax = g.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(gmax <= tol, "{what}: stationarity {gmax:e}");
    assert!(comp.abs() <= tol, "{what}: complementarity {comp:e}");
}

fn objective(v: &Values, x: &[f64]) -> f64 {
    x.iter().enumerate().map(|(i, xi)| 0.5 * v.p_diag[i] * xi * xi + v.q[i] * xi).sum()
}

/// Every layout of criteria (a)-(d) (the cone reported or imposed, with and without sign
/// rows and reserves): the dense solver against clarabel on the same random programs, to
/// 1e-9 in the objective and the solution (the O(1) scaled variables), and infeasible ones
/// refused by both.
#[test]
fn agrees_with_clarabel_on_random_programs() {
    let mut rng = Rng::new(0x9e37_79b9_7f4a_7c15);
    let (mut solved, mut polished, mut loose, mut almost_solved) = (0, 0, 0, 0);
    let (mut moved_ours, mut moved_theirs) = (0.0f64, 0.0f64);
    for stress in [None, Some(true), Some(false)] {
        for cone in [false, true] {
            for (n_sign, reserves) in [(0, vec![]), (3, vec![]), (2, vec![0, 2])] {
                let layout = Layout { k: 40, n_eq: 5, reserves, n_sign, stress, cone, cubes: false };
                let mut ours = Program::new(layout.clone());
                let mut theirs = Program::new(layout.clone());
                theirs.backend = Backend::Clarabel;

                for trial in 0..12 {
                    let infeasible = trial % 6 == 5;
                    let v = random_values(&layout, &mut rng, infeasible);
                    let a = ours.solve(&v);
                    let b = theirs.solve(&v);
                    let what = format!("{layout:?}, trial {trial}");
                    assert_eq!(a.solved(), b.solved(), "{what}: {a:?} vs {b:?}");
                    assert_eq!(a.solved(), !infeasible, "{what}: {a:?}");
                    if infeasible {
                        assert!(!a.dense, "{what}: the dense solver claims an infeasible program solved");
                        continue;
                    }
                    if layout.stress == Some(true) {
                        assert!(!a.dense, "{what}: (d)'s first stage is clarabel's");
                        assert_eq!(a.x, b.x);
                        continue;
                    }
                    assert!(a.dense, "{what}: the dense solver did not solve, clarabel did: {b:?}");
                    solved += 1;
                    assert_feasible(&layout, &v, &a.x, &what);
                    let mut d = Dense::new(&layout).unwrap();
                    let st = d.solve(&v);
                    polished += usize::from(st == DenseStatus::Solved { polished: true });
                    assert_eq!(d.x(), &a.x[..], "{what}: the same solve twice");
                    // a force at its lower bound is +0, never −0 (printed "-0" by front ends)
                    assert!(a.x.iter().all(|x| *x != 0.0 || x.is_sign_positive()), "{what}: a −0 in {:?}", a.x);
                    let (y, z) = d.duals();
                    assert_kkt(&layout, &v, d.x(), y, z, &what);
                    // a change of 1e-14 in the data moves the polished forces by round-off
                    // only; clarabel's by its last iterate's error
                    let mut w = v.clone();
                    for (e, x) in w.eq.iter_mut().enumerate() {
                        *x *= 1.0 + 1e-14 * if e % 2 == 0 { 1.0 } else { -1.0 };
                    }
                    let moved = |p: &mut Program, x0: &[f64]| {
                        let o = p.solve(&w);
                        o.x.iter().zip(x0).fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
                    };
                    let ours_moved = moved(&mut ours, &a.x);
                    if st == (DenseStatus::Solved { polished: true }) {
                        assert!(ours_moved <= 1e-11, "{what}: a 1e-14 change moved a force by {ours_moved:e}");
                    }
                    moved_ours = moved_ours.max(ours_moved);
                    moved_theirs = moved_theirs.max(moved(&mut theirs, &b.x));
                    let (fa, fb) = (objective(&v, &a.x), objective(&v, &b.x));
                    let scale = 1.0 + fb.abs();
                    assert!(fa <= fb + 1e-9 * scale, "{what}: objective {fa} above clarabel's {fb}");
                    if b.status == Some(SolverStatus::AlmostSolved) {
                        // clarabel's reduced accuracy (gap 5e-5): ours is certified, and lower
                        assert!(fb - fa <= 1e-5 * scale, "{what}: objective {fa} vs {fb}");
                        almost_solved += 1;
                        continue;
                    }
                    assert!(fb - fa <= 1e-9 * scale, "{what}: objective {fa} vs {fb}");
                    // clarabel's forces at its gap 1e-12 are off by up to √(gap/curvature) ~ 1e-6
                    // (at tolerances 1e-15 it stops `AlmostSolved`, no closer): the reference
                    // is good to 1e-6 only; the 1e-9 check of ours is its KKT certificate above
                    for i in 0..layout.n_var() {
                        loose += usize::from((a.x[i] - b.x[i]).abs() > 1e-9);
                        assert!((a.x[i] - b.x[i]).abs() <= 5e-6, "{what}: x[{i}] {} vs {}", a.x[i], b.x[i]);
                    }
                }
            }
        }
    }
    // the polish applies wherever there is curvature in every variable: (a)-(c), (d)'s stage 2
    assert!(polished >= solved / 2, "{polished} of {solved} polished");
    eprintln!(
        "{solved} programs solved, {polished} polished; {loose} forces beyond 1e-9 of clarabel's; \
         clarabel almost solved {almost_solved}; a 1e-14 change of the data moved a force by \
         {moved_ours:.1e} (clarabel's by {moved_theirs:.1e})"
    );
}

#[test]
fn nt_scaling_maps_z_to_s() {
    let s = [2.0, 0.3, -1.1];
    let z = [1.5, -0.9, 0.4];
    let (w, wi, lam) = soc_scaling(&s, &z).unwrap();
    let w2z = m3v(&w, &m3v(&w, &z));
    let wis = m3v(&wi, &s);
    for r in 0..3 {
        assert!((w2z[r] - s[r]).abs() < 1e-14, "{w2z:?} {s:?}");
        assert!((wis[r] - lam[r]).abs() < 1e-14);
    }
    let i = mat3_mul(&w, &wi);
    for (a, row) in i.iter().enumerate() {
        for (b, v) in row.iter().enumerate() {
            assert!((v - f64::from(u8::from(a == b))).abs() < 1e-14);
        }
    }
    let q = jordan_div(&lam, &[0.3, 0.2, -0.1]);
    let back = jordan(&lam, &q);
    assert!((back[0] - 0.3).abs() < 1e-15 && (back[1] - 0.2).abs() < 1e-15 && (back[2] + 0.1).abs() < 1e-15);
}

#[test]
fn soc_step_reaches_the_boundary() {
    let x = [1.0, 0.2, 0.1];
    let d = [-0.5, 1.0, 0.0];
    let a = soc_step(&x, &d, 10.0);
    let p = [x[0] + a * d[0], x[1] + a * d[1], x[2] + a * d[2]];
    assert!((p[0] - p[1].hypot(p[2])).abs() < 1e-14, "{p:?}");
    assert_eq!(soc_step(&x, &[1.0, 0.0, 0.0], 3.0), 3.0);
}
