//! Forward dynamics with Hill muscles (Chadwick et al. 2014): the implicit system's partials against central
//! differences, the Rosenbrock step against a variable-step reference and against closed forms,
//! and excitation files.

use std::path::Path;

use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun};
use mollier_sim::{Musculoskeletal, State};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn elbow() -> Compiled {
    mollier::load(&root().join("models/forward/elbow.toml"), &mollier::registry()).expect("the elbow compiles")
}

fn excitations(c: &Compiled) -> Excitations {
    Excitations::read(&root().join("models/forward/elbow-excitations.csv"), c).expect("the excitations read")
}

/// A state off rest: moving, muscles off equilibrium, with a rate that is not the explicit one.
fn test_state(sys: &Musculoskeletal<'_>, c: &Compiled, moving: bool) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut ws = sys.workspace();
    let l = sys.layout();
    let u = vec![0.4, 0.2];
    let rest = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &u).unwrap();
    let mut x = rest.x.clone();
    x[0] += 0.3;
    if moving {
        x[l.v()] = 1.7;
    }
    x[l.s()] *= 1.01;
    x[l.s() + 1] *= 0.995;
    x[l.a()] = 0.5;
    x[l.a() + 1] = 0.1;
    let xd: Vec<f64> = (0..l.len()).map(|i| 0.3 + 0.1 * i as f64).collect();
    (x, xd, u)
}

#[test]
fn the_partials_are_the_residuals_derivatives() {
    let c = elbow();
    check_partials(&c, c.muscles.clone());
}

/// The elbow with its biceps' tendon rigid (its force moves with the path's velocity, through
/// `DF_e v` in `q` too) and the triceps' elastic.
fn rigid_biceps(c: &Compiled) -> Vec<mollier_sim::Muscle> {
    let mut muscles = c.muscles.clone();
    muscles[0].hill.params.tendon = mollier_sim::Tendon::Rigid;
    muscles
}

#[test]
fn the_partials_with_a_rigid_tendon_are_the_residuals_derivatives() {
    let c = elbow();
    check_partials(&c, rigid_biceps(&c));
}

#[test]
fn the_step_solve_with_a_rigid_tendon_is_the_dense_solve() {
    let c = elbow();
    check_step_solve(&c, rigid_biceps(&c));
}

/// `∂f/∂x`, `∂f/∂ẋ`, `∂f/∂u` of the elbow with `muscles` against central differences, at rest
/// and moving.
fn check_partials(c: &Compiled, muscles: Vec<mollier_sim::Muscle>) {
    let sys = Musculoskeletal::new(&c.model, muscles);
    let l = sys.layout();
    let mut ws = sys.workspace();
    for moving in [false, true] {
        let (x, xd, u) = test_state(&sys, c, moving);
        let lin = sys.linearize(&mut ws, &x, &xd, &u).unwrap();
        let (fx, fxd, fu) = lin.dense();
        let f =
            |ws: &mut mollier_sim::Workspace, x: &[f64], xd: &[f64], u: &[f64]| sys.linearize(ws, x, xd, u).unwrap().f;
        let mut worst = 0.0f64;
        for j in 0..l.len() {
            let h = 1e-6 * (1.0 + x[j].abs());
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[j] += h;
            xm[j] -= h;
            let (fp, fm) = (f(&mut ws, &xp, &xd, &u), f(&mut ws, &xm, &xd, &u));
            let (mut dp, mut dm) = (xd.clone(), xd.clone());
            dp[j] += h;
            dm[j] -= h;
            let (gp, gm) = (f(&mut ws, &x, &dp, &u), f(&mut ws, &x, &dm, &u));
            for i in 0..l.len() {
                let num = (fp[i] - fm[i]) / (2.0 * h);
                let scale = 1.0 + fx[(i, j)].abs();
                // ∂c/∂q (velocity-quadratic inertia) included, moving or not
                worst = worst.max((fx[(i, j)] - num).abs() / scale);
                assert!((fx[(i, j)] - num).abs() < 1e-5 * scale, "∂f{i}/∂x{j}: {} vs {num}", fx[(i, j)]);
                let num = (gp[i] - gm[i]) / (2.0 * h);
                assert!((fxd[(i, j)] - num).abs() < 1e-5 * (1.0 + num.abs()), "∂f{i}/∂ẋ{j}: {} vs {num}", fxd[(i, j)]);
            }
        }
        for k in 0..l.m {
            let h = 1e-6;
            let (mut up, mut um) = (u.clone(), u.clone());
            up[k] += h;
            um[k] -= h;
            let (fp, fm) = (f(&mut ws, &x, &xd, &up), f(&mut ws, &x, &xd, &um));
            for i in 0..l.len() {
                let num = (fp[i] - fm[i]) / (2.0 * h);
                assert!((fu[(i, k)] - num).abs() < 1e-6 * (1.0 + num.abs()), "∂f{i}/∂u{k}");
            }
        }
        eprintln!("moving {moving}: largest relative error of ∂f/∂x {worst:.2e}");
    }
}

/// The forward workspace's evaluation leaves out of `∂f_v/∂q` exactly `DF_xᵀ M D³F_x(v, v, e_k)`
/// (the masses' `m I` and the rotors' `M_λ = 4 Ḡᵀ J Ḡ`, with the third-order transfer functions
/// formed apart), and nothing else: the residual and the other partials are the same bits, and
/// at rest the two are equal.
#[test]
fn the_forward_workspace_leaves_out_the_third_order_term_alone() {
    let c = elbow();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let (model, n) = (&c.model, sys.layout().n);
    let (mut exact_ws, mut forward_ws) = (sys.workspace(), sys.forward_workspace());
    for moving in [false, true] {
        let (x, xd, u) = test_state(&sys, &c, moving);
        let exact = sys.linearize(&mut exact_ws, &x, &xd, &u).unwrap();
        let forward = sys.linearize(&mut forward_ws, &x, &xd, &u).unwrap();
        assert_eq!((&exact.f, &exact.fv_v, &exact.mass), (&forward.f, &forward.fv_v, &forward.mass));
        // the dropped term, from the kernel's third order at the same configuration
        let mut d3 = faer::Mat::<f64>::zeros(0, 0);
        mollier_core::transfer3::third_order(model, &mut forward_ws.data, &x[n..2 * n], &mut d3).unwrap();
        let (data, dynamics) = (&forward_ws.data, model.dynamics());
        let blocks = dynamics.masses.iter().map(|&(node, m)| {
            let i3 = |a: usize, b: usize| if a == b { m } else { 0.0 };
            (node, (0..3).map(|a| (0..3).map(|b| i3(a, b)).collect()).collect::<Vec<Vec<f64>>>())
        });
        let rotors = dynamics.rotors.iter().map(|(node, j)| {
            let l = mollier_core::geometry::quat_at(data.x(), model.nodes()[node.index()].offset);
            let ml = mollier_core::dynamics::rotational_mass(&l, j);
            (*node, ml.iter().map(|r| r.to_vec()).collect())
        });
        let mut expected = faer::Mat::<f64>::zeros(n, n);
        for (node, mass) in blocks.chain(rotors) {
            let o = model.nodes()[node.index()].offset;
            for k in 0..n {
                for (a, row) in mass.iter().enumerate() {
                    let md3: f64 = row.iter().enumerate().map(|(b, m)| m * d3[(o + b, k)]).sum();
                    for i in 0..n {
                        expected[(i, k)] += data.df_x()[(o + a, i)] * md3;
                    }
                }
            }
        }
        let scale = (0..n).flat_map(|k| (0..n).map(move |i| (i, k))).fold(0.0f64, |m, ik| m.max(expected[ik].abs()));
        assert_eq!(scale > 1e-3, moving, "the third-order term is {scale:.3e}, moving {moving}");
        for k in 0..n {
            for i in 0..n {
                let dropped = exact.fv_q[(i, k)] - forward.fv_q[(i, k)];
                let tol = 1e-12 * (1.0 + exact.fv_q[(i, k)].abs());
                assert!(
                    (dropped - expected[(i, k)]).abs() <= tol,
                    "∂f_v{i}/∂q{k}: {dropped} dropped, {} expected",
                    expected[(i, k)]
                );
            }
        }
    }
}

#[test]
fn the_step_solve_is_the_dense_solve() {
    let c = elbow();
    check_step_solve(&c, c.muscles.clone());
}

fn check_step_solve(c: &Compiled, muscles: Vec<mollier_sim::Muscle>) {
    let sys = Musculoskeletal::new(&c.model, muscles);
    let mut ws = sys.workspace();
    let (x, xd, u) = test_state(&sys, c, true);
    let lin = sys.linearize(&mut ws, &x, &xd, &u).unwrap();
    let (fx, fxd, _) = lin.dense();
    let h = 0.004;
    let n = sys.layout().len();
    let a = faer::Mat::from_fn(n, n, |i, j| fx[(i, j)] + fxd[(i, j)] / h);
    let rhs: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
    let fast = lin.solve(h, &rhs).unwrap();
    let dense = mollier_sim::system::solve_partial_pivoting(&a, &rhs).unwrap();
    for i in 0..n {
        assert!((fast[i] - dense[i]).abs() < 1e-9 * (1.0 + dense[i].abs()), "{i}: {} vs {}", fast[i], dense[i]);
    }
}

/// Rosenbrock states every 0.04 s to `t_end` with step `h` (0.04 s a multiple of it).
fn rosenbrock(c: &Compiled, h: f64, t_end: f64, rigid: Option<f64>) -> Vec<Vec<f64>> {
    let mut run = ForwardRun::new(c, excitations(c), ForwardOptions::fixed(h).with_rigid_tendons(rigid)).unwrap();
    let mut out = Vec::new();
    let n = (t_end / h).round() as usize;
    let every = (0.04 / h).round() as usize;
    for k in 0..=n {
        if k % every == 0 {
            out.push(run.state().x.clone());
        }
        if k < n {
            run.advance().unwrap();
        }
    }
    out
}

#[test]
fn the_rosenbrock_step_converges_to_the_reference_with_order_one() {
    converges_with_order_one(None);
}

/// The same with both tendons rigid (`ForwardOptions::rigid_tendons`): the reference integrates
/// the explicit rates, in which a rigid muscle's `ṡ` is its path's velocity.
#[test]
fn the_rosenbrock_step_with_rigid_tendons_converges_with_order_one() {
    converges_with_order_one(Some(f64::INFINITY));
}

/// A rigid tendon's choice by its slack length against its optimal fibre length: the elbow's
/// biceps (160 mm against 116 mm, 1.379) below 1.385, its triceps (125 against 90, 1.389) not.
#[test]
fn rigid_tendons_are_chosen_by_their_ratio() {
    let c = elbow();
    let mut muscles = c.muscles.clone();
    assert_eq!(mollier::rigid_tendons(&mut muscles, 1.379), 0);
    assert_eq!(mollier::rigid_tendons(&mut muscles, 1.385), 1);
    assert!(muscles[0].hill.is_rigid() && !muscles[1].hill.is_rigid());
    assert_eq!(mollier::rigid_tendons(&mut muscles, f64::INFINITY), 2);
}

fn converges_with_order_one(rigid: Option<f64>) {
    let c = elbow();
    let ex = excitations(&c);
    let mut muscles = c.muscles.clone();
    if let Some(r) = rigid {
        mollier::rigid_tendons(&mut muscles, r);
    }
    let sys = Musculoskeletal::new(&c.model, muscles);
    let mut ws = sys.workspace();
    let mut u = vec![0.0; 2];
    ex.at(0.0, &mut u);
    let start = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &u).unwrap();
    let t_end = 0.6;
    let mut reference = Vec::new();
    let steps = sys
        .reference(&mut ws, &start, t_end, 1e-10, 1e-12, 0.04, &|t, u| ex.at(t, u), &mut |_, x| {
            reference.push(x.to_vec())
        })
        .unwrap();
    assert_eq!(reference.len(), 16);
    let angle_error = |h: f64| {
        let r = rosenbrock(&c, h, t_end, rigid);
        let e: f64 = r.iter().zip(&reference).map(|(a, b)| (a[0] - b[0]).powi(2)).sum::<f64>() / r.len() as f64;
        e.sqrt().to_degrees()
    };
    let (e1, e2, e3) = (angle_error(0.004), angle_error(0.002), angle_error(0.001));
    eprintln!(
        "rigid tendons {rigid:?}, reference: {steps} steps; RMS elbow-angle error at 4, 2, 1 ms: {e1:.4}°, {e2:.4}°, {e3:.4}° (ratios {:.2}, {:.2})",
        e1 / e2,
        e2 / e3
    );
    // first order: halving the step halves the error
    assert!(e1 / e2 > 1.6 && e1 / e2 < 2.6 && e2 / e3 > 1.7 && e2 / e3 < 2.4, "{e1} {e2} {e3}");
    assert!(e1 < 0.5, "{e1}° at 4 ms");
    // the motion is real: the elbow flexes by tens of degrees
    let travel = reference.iter().map(|x| (x[0] - reference[0][0]).abs()).fold(0.0, f64::max).to_degrees();
    assert!(travel > 20.0, "{travel}°");
}

#[test]
fn activation_follows_its_closed_forms() {
    // with a constant excitation u the active state obeys ȧ = r (u − a), r = u/T_act + (1 − u)/T_deact:
    // exactly a(t) = u + (a0 − u) e^{−r t}; the Rosenbrock step is exactly backward Euler on it
    let c = elbow();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = sys.layout();
    let mut ws = sys.workspace();
    let start = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &[0.0, 0.0]).unwrap();
    let step_to = |u: f64| move |_: f64, w: &mut [f64]| w.fill(u);
    let mut off = start.clone();
    for u in [1.0, 0.3] {
        let hill = &c.muscles[0].hill.params;
        let r = u / hill.activation_time + (1.0 - u) / hill.deactivation_time;
        let h = 0.002;
        let mut st: State;
        let ex = step_to(u);
        let mut ref_out = Vec::new();
        sys.reference(&mut ws, &start, 0.05, 1e-11, 1e-13, 0.01, &ex, &mut |t, x| ref_out.push((t, x[l.a()]))).unwrap();
        for (t, a) in &ref_out {
            let exact = u - u * (-r * t).exp();
            assert!((a - exact).abs() < 1e-8, "reference at {t}: {a} vs {exact}");
        }
        // the activation equation is linear in a for a constant u: the Rosenbrock step is then
        // exactly backward Euler, a_k = u + (a_0 − u)/(1 + h r)^k
        off.x[l.a()] = 0.0;
        st = off.clone();
        for k in 1..=20 {
            st = sys.rosenbrock_step(&mut ws, &st, h, &ex).unwrap().0;
            let exact = u - u / (1.0 + h * r).powi(k);
            assert!((st.x[l.a()] - exact).abs() < 1e-12, "step {k}: {} vs {exact}", st.x[l.a()]);
        }
    }
}

#[test]
fn passive_energy_error_shrinks_with_the_step() {
    // no muscles, no damping: the double pendulum's energy is conserved; backward Euler loses it
    // at a rate proportional to the step
    let c = mollier::load(&root().join("models/mechanisms/double-pendulum.toml"), &mollier::registry()).unwrap();
    let sys = Musculoskeletal::new(&c.model, Vec::new());
    let mut ws = sys.workspace();
    let mut q0 = c.model.q0();
    q0[0] += 0.3;
    let energy = |ws: &mut mollier_sim::Workspace, x: &[f64]| {
        let n = c.model.n_q();
        mollier_core::kinematics::solve_positions(&c.model, &mut ws.data, &x[..n]).unwrap();
        mollier_core::transfer::velocities(&c.model, &mut ws.data, &x[n..2 * n]).unwrap();
        mollier_core::dynamics::kinetic_energy(&c.model, &mut ws.data, &x[n..2 * n]).unwrap()
            + mollier_core::dynamics::potential_energy(&c.model, &ws.data).unwrap()
    };
    let none = |_: f64, _: &mut [f64]| {};
    let mut losses = Vec::new();
    for h in [0.002f64, 0.001, 0.0005] {
        let mut st = sys.rest_state(&mut ws, &q0, 0.0, &[]).unwrap();
        let e0 = energy(&mut ws, &st.x);
        for _ in 0..(0.4 / h).round() as usize {
            st = sys.rosenbrock_step(&mut ws, &st, h, &none).unwrap().0;
        }
        losses.push(e0 - energy(&mut ws, &st.x));
    }
    eprintln!("energy lost over 0.4 s at 2, 1, 0.5 ms: {losses:?} J");
    assert!(losses.iter().all(|l| *l > 0.0), "backward Euler dissipates: {losses:?}");
    let (r1, r2) = (losses[0] / losses[1], losses[1] / losses[2]);
    assert!(r1 > 1.7 && r1 < 2.3 && r2 > 1.8 && r2 < 2.2, "{r1} {r2}");
}

#[test]
fn bad_excitation_files_are_located() {
    let c = elbow();
    let cases = [
        ("time,biceps,triceps\n0,0.1,1.2\n", "2:", "outside [0, 1]"),
        ("time,biceps,deltoid\n0,0.1,0.2\n", "1:", "`deltoid` is not a muscle"),
        ("time,biceps\n0,NaN\n", "2:", "is not an excitation"),
        ("time,biceps\n0,0.1\n0,0.2\n", "3:", "does not increase"),
        ("biceps\n0.1\n", "1:", "no `time` column"),
        ("time,biceps\n0,0.1,0.3\n", "2:", "3 fields"),
    ];
    for (text, line, want) in cases {
        let e = Excitations::parse("ex.csv", text, &c).unwrap_err();
        let s = e.to_string();
        assert!(s.contains(want) && s.contains(&format!("ex.csv:{line}")), "{text:?}: {s}");
    }
    // a muscle without a column is listed, at 0
    let ok = Excitations::parse("ex.csv", "time,biceps\n0,0.5\n1,0.7\n", &c).unwrap();
    assert_eq!(ok.missing, vec!["triceps".to_string()]);
    let mut u = [9.0, 9.0];
    ok.at(0.25, &mut u);
    assert!((u[0] - 0.55).abs() < 1e-15 && u[1] == 0.0);
}

#[test]
fn the_joint_force_is_newtons_law_on_the_forearm() {
    // at the rest state (v = 0) the forearm, a rigid body turning about z at the origin, obeys
    // J + Σ F_i u_i + m g = m α × r_c with α from the moments about the elbow: J is the humerus's
    // force on it, and the force of the forearm on the humerus, −J, is what stability.csv reports
    let c = elbow();
    let mut run = ForwardRun::new(&c, excitations(&c), ForwardOptions::fixed(0.004)).unwrap();
    let f = run.current().unwrap();
    let (m, cx, izz, g) = (1.5, 0.15, 0.011, 9.81);
    // origins (humerus, fixed) and insertions (forearm at 0°) in metres, global
    let paths: [([f64; 2], [f64; 2]); 2] = [([0.030, 0.280], [0.045, 0.010]), ([-0.020, 0.220], [-0.025, 0.004])];
    let mut force = [0.0f64; 2];
    let mut moment = -1.308997; // the law's preload at 0 (σ = 1.309 N m resists positive rotation)
    moment -= m * g * cx;
    for (k, (o, i)) in paths.iter().enumerate() {
        let d = [o[0] - i[0], o[1] - i[1]];
        let l = d[0].hypot(d[1]);
        let fm = f.muscles[k][2];
        let u = [d[0] / l, d[1] / l];
        assert!((l - f.muscles[k][5]).abs() < 1e-12, "path length");
        force[0] += fm * u[0];
        force[1] += fm * u[1];
        moment += i[0] * fm * u[1] - i[1] * fm * u[0];
    }
    let alpha = moment / (izz + m * cx * cx);
    // J = m a_c − m g − Σ F u, a_c = (0, α c) at 0°
    let j = [-force[0], m * alpha * cx + m * g - force[1]];
    let on_humerus = [-j[0], -j[1]];
    let st = f.stability.expect("the elbow has a joint cone");
    let got = (st[0] * st[0] + st[1] * st[1] + st[2] * st[2]).sqrt();
    let want = on_humerus[0].hypot(on_humerus[1]);
    eprintln!("joint force on the humerus: {on_humerus:?} N, |F| = {want} N; cone frame {:?}", &st[..3]);
    assert!((got - want).abs() < 1e-6 * want, "{got} vs {want}");
    // the cone's axis is the humerus's y: its x component is the force's y
    assert!((st[0] - on_humerus[1]).abs() < 1e-6 * want, "{} vs {}", st[0], on_humerus[1]);
    // and the index is eq. 9 of its angles
    let index = (st[3] / 25f64.to_radians()).powi(2) + (st[4] / 25f64.to_radians()).powi(2) - 1.0;
    assert!((st[5] - index).abs() < 1e-12);
}

#[test]
fn energy_balances_the_work_of_muscles_and_dampers() {
    // the elbow released with its muscles unexcited: the change of kinetic plus potential energy
    // (gravity, the joint's springs and stops) equals the work of the muscles' tendon forces
    // (−∫ F dL) plus that of the joint's damper (−∫ b ė de); with the Rosenbrock step the
    // imbalance is of the step's order
    let c = elbow();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = sys.layout();
    let mut ws = sys.workspace();
    let none = |_: f64, u: &mut [f64]| u.fill(0.0);
    let b = 1.0; // N m s/rad, the elbow's damping
    let energy = |ws: &mut mollier_sim::Workspace, x: &[f64]| {
        let n = l.n;
        mollier_core::kinematics::solve_positions(&c.model, &mut ws.data, &x[..n]).unwrap();
        mollier_core::transfer::velocities(&c.model, &mut ws.data, &x[n..2 * n]).unwrap();
        mollier_core::dynamics::kinetic_energy(&c.model, &mut ws.data, &x[n..2 * n]).unwrap()
            + mollier_core::dynamics::potential_energy(&c.model, &ws.data).unwrap()
    };
    let mut imbalance = Vec::new();
    for h in [0.002f64, 0.001, 0.0005] {
        let mut st = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &[0.0, 0.0]).unwrap();
        let e0 = energy(&mut ws, &st.x);
        let (mut w_muscles, mut w_damper) = (0.0, 0.0);
        let mut lin = sys.linearize(&mut ws, &st.x, &st.xd, &[0.0, 0.0]).unwrap();
        for _ in 0..(0.3 / h).round() as usize {
            let (next, _) = sys.rosenbrock_step(&mut ws, &st, h, &none).unwrap();
            let lin_next = sys.linearize(&mut ws, &next.x, &next.xd, &[0.0, 0.0]).unwrap();
            for k in 0..l.m {
                let (f0, f1) = (lin.contraction[k].force, lin_next.contraction[k].force);
                w_muscles -= 0.5 * (f0 + f1) * (lin_next.length[k] - lin.length[k]);
            }
            let (v0, v1) = (st.x[l.v()], next.x[l.v()]);
            w_damper -= 0.5 * b * (v0 + v1) * (next.x[0] - st.x[0]);
            st = next;
            lin = lin_next;
        }
        let de = energy(&mut ws, &st.x) - e0;
        eprintln!("h {h}: ΔE {de:.5} J, muscles {w_muscles:.5} J, damper {w_damper:.5} J");
        imbalance.push((de - w_muscles - w_damper).abs());
    }
    eprintln!("energy imbalance at 2, 1, 0.5 ms: {imbalance:?} J");
    let (r1, r2) = (imbalance[0] / imbalance[1], imbalance[1] / imbalance[2]);
    assert!(r1 > 1.6 && r1 < 2.5 && r2 > 1.7 && r2 < 2.3, "first order: {r1} {r2}");
}

#[test]
fn the_dynamic_second_order_is_the_full_one_where_it_is_read() {
    // the shoulder: D²F_e whole, and D²F_x at the masses, as second_order computes them
    let c = shoulder_model();
    let m = &c.model;
    let q: Vec<f64> = (0..m.n_q()).map(|i| 0.05 * ((i as f64) * 1.7).sin()).collect();
    let mut a = mollier_core::Data::new(m);
    let mut b = mollier_core::Data::new(m);
    for d in [&mut a, &mut b] {
        mollier_core::kinematics::solve_positions(m, d, &q).unwrap();
    }
    mollier_core::transfer::second_order_for_dynamics(m, &mut a).unwrap();
    mollier_core::transfer::second_order(m, &mut b).unwrap();
    let (ea, eb) = (a.d2f_e(), b.d2f_e());
    assert_eq!((ea.nrows(), ea.ncols()), (eb.nrows(), eb.ncols()));
    for i in 0..ea.nrows() {
        for j in 0..ea.ncols() {
            assert_eq!(ea[(i, j)], eb[(i, j)]);
        }
    }
    let rows: Vec<usize> = m.dynamics().masses.iter().map(|(n, _)| m.nodes()[n.index()].offset).collect();
    assert_eq!(rows.len(), 3);
    let mut nonzero = 0;
    for o in rows {
        for r in o..o + 3 {
            for j in 0..a.d2f_x().ncols() {
                assert_eq!(a.d2f_x()[(r, j)], b.d2f_x()[(r, j)], "row {r}");
                nonzero += usize::from(b.d2f_x()[(r, j)] != 0.0);
            }
        }
    }
    assert!(nonzero > 50, "{nonzero}");
    // a full second order afterwards completes it
    mollier_core::transfer::second_order(m, &mut a).unwrap();
    let (xa, xb) = (a.d2f_x(), b.d2f_x());
    for i in 0..xa.nrows() {
        for j in 0..xa.ncols() {
            assert_eq!(xa[(i, j)], xb[(i, j)]);
        }
    }
}

/// The shoulder as a forward model (`models/shoulder/shoulder-forward.toml`).
fn shoulder_model() -> Compiled {
    mollier::load(&root().join("models/shoulder/shoulder-forward.toml"), &mollier::registry()).unwrap()
}

/// The shoulder off rest, at rest (`v = 0`, where `∂f/∂x` is exact) with the muscles at a
/// tone: `(sys state x, ẋ, u)`.
fn shoulder_state(sys: &Musculoskeletal<'_>, c: &Compiled) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let l = sys.layout();
    let mut ws = sys.workspace();
    let u: Vec<f64> = (0..l.m).map(|k| 0.05 + 0.3 * (0.5 + 0.5 * (k as f64 * 0.37).sin())).collect();
    let q: Vec<f64> = c.model.q0().iter().enumerate().map(|(i, q)| q + 0.03 * ((i as f64) * 1.3).cos()).collect();
    let rest = sys.rest_state(&mut ws, &q, 0.0, &u).unwrap();
    let mut x = rest.x.clone();
    for k in 0..l.m {
        x[l.s() + k] *= 1.0 + 0.002 * (k as f64).sin();
    }
    let xd: Vec<f64> = (0..l.len()).map(|i| 0.01 * ((i as f64) * 0.7).sin()).collect();
    (x, xd, u)
}

#[test]
fn the_shoulders_stiffness_is_exact_without_the_paths_second_order() {
    // ∂f_v/∂q of the shoulder (95 wrapping paths, soft contact): the muscles' geometric stiffness
    // Σ F_m ∂²L_m/∂q² is summed without the paths' D²F_e; against (1) the sum written with the
    // full second-order transfer functions, to round-off, (2) central differences of f_v
    let c = shoulder_model();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = sys.layout();
    let n = l.n;
    let mut ws = sys.workspace();
    let (x, xd, u) = shoulder_state(&sys, &c);
    let lin = sys.linearize(&mut ws, &x, &xd, &u).unwrap();
    // (1) the equations of motion without muscles, plus Σ F ∂²L/∂q² + ∂F/∂L g gᵀ from D²F_e
    let m = &c.model;
    let mut data = mollier_core::Data::new(m);
    mollier_core::kinematics::solve_positions(m, &mut data, &x[..n]).unwrap();
    let bare = mollier_core::linearize::linearize_motion(m, &mut data, &x[n..2 * n], &xd[n..2 * n]).unwrap();
    mollier_core::transfer::second_order(m, &mut data).unwrap();
    let mut worst = 0.0f64;
    let mut geometric = 0.0f64;
    for i in 0..n {
        for j in 0..n {
            let mut want = bare.d_q[(i, j)];
            for (k, mu) in sys.muscles.iter().enumerate() {
                let (r, ck) = (mu.mode.index(), &lin.contraction[k]);
                let g = |a: usize| data.df_e()[(r, a)];
                let d2 = ck.force * data.d2f_e()[(r, mollier_core::pair_index(i, j, n))];
                geometric = geometric.max(d2.abs());
                want += d2 + ck.force_d_length * g(i) * g(j);
            }
            let err = (lin.fv_q[(i, j)] - want).abs() / (1.0 + want.abs());
            worst = worst.max(err);
            assert!(err < 1e-9, "∂f_v{i}/∂q{j}: {} vs {want}", lin.fv_q[(i, j)]);
        }
    }
    assert!(geometric > 1.0, "the muscles' geometric stiffness is exercised: {geometric}");
    eprintln!("against Σ F D²F_e: largest relative difference {worst:.2e}");
    // (2) central differences of f_v in q
    let worst = fv_q_against_central_differences(&sys, &mut ws, &x, &xd, &u, &lin);
    eprintln!("against central differences: largest relative error {worst:.2e}");
}

/// `lin.fv_q` (`∂f_v/∂q`, n x n) against central differences of `f_v` at `(x, ẋ, u)`, each entry
/// within 1e-5 of `1 + |entry|`; the largest such relative difference.
fn fv_q_against_central_differences(
    sys: &Musculoskeletal<'_>,
    ws: &mut mollier_sim::Workspace,
    x: &[f64],
    xd: &[f64],
    u: &[f64],
    lin: &mollier_sim::Linearization,
) -> f64 {
    let n = sys.layout().n;
    let mut worst = 0.0f64;
    for j in 0..n {
        let h = 1e-6;
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[j] += h;
        xm[j] -= h;
        let fp = sys.linearize(ws, &xp, xd, u).unwrap().f;
        let fm = sys.linearize(ws, &xm, xd, u).unwrap().f;
        for i in 0..n {
            let num = (fp[n + i] - fm[n + i]) / (2.0 * h);
            let scale = 1.0 + lin.fv_q[(i, j)].abs();
            worst = worst.max((lin.fv_q[(i, j)] - num).abs() / scale);
            assert!((lin.fv_q[(i, j)] - num).abs() < 1e-5 * scale, "∂f_v{i}/∂q{j}: {} vs {num}", lin.fv_q[(i, j)]);
        }
    }
    worst
}

/// With every tendon rigid and the shoulder moving, `∂f_v/∂q` holds the rigid forces' rate
/// stiffness through `L̇ = DF_e v` (the wrapping paths' `D²F_e v`, from the kernel's second
/// order): against central differences of `f_v`.
#[test]
fn the_shoulders_rigid_tendons_rate_stiffness_is_exact() {
    let c = shoulder_model();
    let mut muscles = c.muscles.clone();
    mollier::rigid_tendons(&mut muscles, f64::INFINITY);
    let sys = Musculoskeletal::new(&c.model, muscles);
    let n = sys.layout().n;
    let mut ws = sys.workspace();
    let (mut x, xd, u) = shoulder_state(&sys, &c);
    for i in 0..n {
        x[n + i] = 0.5 * ((i as f64) * 0.9).cos();
    }
    let lin = sys.linearize(&mut ws, &x, &xd, &u).unwrap();
    let worst = fv_q_against_central_differences(&sys, &mut ws, &x, &xd, &u, &lin);
    eprintln!("moving, every tendon rigid: largest relative error of ∂f_v/∂q {worst:.2e}");
}

#[test]
fn vectors_of_the_wrong_length_are_errors_not_panics() {
    let c = elbow();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut ws = sys.workspace();
    let n = sys.layout().len();
    let e = sys.linearize(&mut ws, &vec![0.0; n - 1], &vec![0.0; n], &[0.0, 0.0]).unwrap_err();
    assert!(e.to_string().contains("x has 5 values, the system 6"), "{e}");
    assert!(sys.linearize(&mut ws, &vec![0.0; n], &vec![0.0; n], &[0.0]).is_err());
    let st = State { t: 0.0, x: vec![0.0; 3], xd: vec![0.0; 3] };
    assert!(sys.rosenbrock_step(&mut ws, &st, 0.004, &|_, u: &mut [f64]| u.fill(0.0)).is_err());
    assert!(sys.rest_state(&mut ws, &[0.0, 0.0], 0.0, &[0.0, 0.0]).is_err());
}

#[test]
fn one_evaluation_of_the_paths_gives_what_two_gave() {
    // the step solves the positions without the free elements and evaluates them once, with the
    // paths' Hessians kept for the stiffness (stiffness::evaluate_weighted); against the default
    // solve, which evaluates them to first order, and a stiffness that evaluates them itself
    use mollier_core::kinematics::{NewtonOptions, solve_positions, solve_positions_with};
    use mollier_core::linearize::linearize_motion_with;
    let c = shoulder_model();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let (m, n) = (&c.model, sys.layout().n);
    let (x, xd, _) = shoulder_state(&sys, &c);
    let (q, v, vdot) = (&x[..n], &x[n..2 * n], &xd[n..2 * n]);
    let tensions: Vec<_> =
        sys.muscles.iter().enumerate().map(|(k, mu)| (mu.mode, 50.0 + 10.0 * (k as f64).cos())).collect();
    let modes: Vec<_> = sys.muscles.iter().map(|mu| mu.mode).collect();
    let without = NewtonOptions { free_elements: false, ..NewtonOptions::default() };
    // (a) two evaluations: the default solve, the stiffness evaluating the paths itself
    let mut a = mollier_core::Data::new(m);
    solve_positions(m, &mut a, q).unwrap();
    let lin_a = linearize_motion_with(m, &mut a, v, vdot, &tensions).unwrap();
    // (b) one evaluation, the Hessians kept
    let mut b = mollier_core::Data::new(m);
    solve_positions_with(m, &mut b, q, &without).unwrap();
    mollier_core::stiffness::evaluate_weighted(m, &mut b, &modes).unwrap();
    let lin_b = linearize_motion_with(m, &mut b, v, vdot, &tensions).unwrap();
    // (c) free elements left out of the solve, evaluated by the first transfer function
    let mut cc = mollier_core::Data::new(m);
    solve_positions_with(m, &mut cc, q, &without).unwrap();
    mollier_core::transfer::first_order(m, &mut cc).unwrap();
    let rel = |p: f64, w: f64, scale: f64| (p - w).abs() / scale;
    let (mut de, mut dk) = (0.0f64, 0.0f64);
    for mu in &sys.muscles {
        let r = mu.mode.index();
        let scale = (0..n).fold(1e-3f64, |s, j| s.max(a.df_e()[(r, j)].abs()));
        for d in [&b, &cc] {
            de = de.max(rel(d.e()[r], a.e()[r], 1e-3));
            for j in 0..n {
                de = de.max(rel(d.df_e()[(r, j)], a.df_e()[(r, j)], scale));
            }
        }
    }
    let scale = (0..n * n).fold(0.0f64, |s, k| s.max(lin_a.d_q[(k / n, k % n)].abs()));
    for i in 0..n {
        for j in 0..n {
            dk = dk.max(rel(lin_b.d_q[(i, j)], lin_a.d_q[(i, j)], scale));
        }
    }
    assert!(scale > 1.0, "the stiffness is exercised: {scale}");
    assert!(de < 1e-10, "lengths and moment arms: largest relative difference {de:e}");
    assert!(dk < 1e-10, "∂r/∂q: largest relative difference {dk:e}");
    eprintln!("one evaluation against two: e, DF_e {de:.1e}; ∂r/∂q {dk:.1e}");
}

/// A tension that is not finite on one path makes the geometric stiffness non-finite, and the
/// error names that path's element (the sums are checked once; only then is each path's part
/// formed alone to find it), whichever paths come before and after it.
#[test]
fn a_non_finite_stiffness_names_its_element() {
    use mollier_core::kinematics::{KinematicsError, solve_positions};
    use mollier_core::linearize::linearize_motion_with;
    let c = shoulder_model();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let (m, n) = (&c.model, sys.layout().n);
    let (x, xd, _) = shoulder_state(&sys, &c);
    let (q, v, vdot) = (&x[..n], &x[n..2 * n], &xd[n..2 * n]);
    for bad in [0, 40, sys.muscles.len() - 1] {
        let tensions: Vec<_> = sys
            .muscles
            .iter()
            .enumerate()
            .map(|(k, mu)| (mu.mode, if k == bad { f64::INFINITY } else { 50.0 }))
            .collect();
        let mut data = mollier_core::Data::new(m);
        solve_positions(m, &mut data, q).unwrap();
        let want = m.mode_name(sys.muscles[bad].mode);
        match linearize_motion_with(m, &mut data, v, vdot, &tensions) {
            Err(KinematicsError::NonFinite { element, mode, what }) => {
                assert_eq!(format!("{element}.{mode}"), want, "muscle {bad}");
                assert_eq!(what, "Hessian");
            }
            other => panic!("muscle {bad}: {:?}", other.map(|_| ())),
        }
    }
}

/// The forward frame's joint force is kinetostatics from the step's linearization: the force its
/// geometric stiffness weighted, less the inertia of the velocities (`velocity_accelerations`),
/// in one adjoint solve. On the shoulder moving (v ≠ 0, so the convective part counts), its
/// muscles at arbitrary tensions: the accelerations `D²F_x(v, v) + DF_x v̇` at the masses against
/// (1) the kernel's own second-order pass (`coordinate_accelerations`) and (2) central differences
/// of the solved positions along `q(t) = q + v t + v̇ t²/2`; the stresses (free modes' and
/// reactions) against `kinetostatics` given the laws' stresses and the tensions; none once the
/// configuration moved.
#[test]
fn the_linearizations_force_gives_kinetostatics_stresses() {
    use mollier_core::KinematicsError;
    use mollier_core::dynamics::{kinetostatic_stresses, kinetostatics, law_stresses};
    use mollier_core::kinematics::solve_positions;
    use mollier_core::linearize::linearize_motion_with;
    let c = shoulder_model();
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let (m, n) = (&c.model, sys.layout().n);
    let (mut x, xd, _) = shoulder_state(&sys, &c);
    for i in 0..n {
        x[n + i] = 0.4 * ((i as f64) * 0.9 + 0.3).sin();
    }
    let (q, v, vdot) = (&x[..n], &x[n..2 * n], &xd[n..2 * n]);
    let weights: Vec<_> =
        c.muscles.iter().enumerate().map(|(k, mu)| (mu.mode, 40.0 + 30.0 * ((k as f64) * 0.3).cos())).collect();
    let mut a = mollier_core::Data::new(m);
    solve_positions(m, &mut a, q).unwrap();
    let lin = linearize_motion_with(m, &mut a, v, vdot, &weights).unwrap();
    // the stresses the linearization weighted, for kinetostatics: the laws' at its rates, the
    // muscles' tensions
    let mut sigma_free = law_stresses(m, &a);
    for &(mode, w) in &weights {
        sigma_free[mode.index()] = w;
    }
    let mut sigma = Vec::new();
    kinetostatic_stresses(m, &mut a, &lin.velocity_accelerations, &mut sigma).unwrap();
    let mut b = mollier_core::Data::new(m);
    solve_positions(m, &mut b, q).unwrap();
    let ks = kinetostatics(m, &mut b, v, vdot, Some(&sigma_free), &[]).unwrap();
    // the coordinates where masses and rotors sit
    let d = m.dynamics();
    let rows: Vec<usize> = (d.masses.iter().map(|&(node, _)| (node, 3)))
        .chain(d.rotors.iter().map(|(node, _)| (*node, 4)))
        .flat_map(|(node, len)| {
            let o = m.nodes()[node.index()].offset;
            o..o + len
        })
        .collect();
    assert!(rows.len() >= 9, "masses and rotors: {}", rows.len());
    let df = a.df_x();
    let acc: Vec<f64> = (0..m.n_x())
        .map(|r| lin.velocity_accelerations[r] + (0..n).map(|j| df[(r, j)] * vdot[j]).sum::<f64>())
        .collect();
    let scale = rows.iter().fold(1e-3f64, |s, &r| s.max(b.xdd()[r].abs()));
    let kernel = rows.iter().fold(0.0f64, |w, &r| w.max((acc[r] - b.xdd()[r]).abs() / scale));
    // central differences of x(q(t)) at t = ±h
    let h = 1e-4;
    let at = |t: f64| -> Vec<f64> {
        let qt: Vec<f64> = (0..n).map(|i| q[i] + v[i] * t + 0.5 * vdot[i] * t * t).collect();
        let mut d = mollier_core::Data::new(m);
        solve_positions(m, &mut d, &qt).unwrap();
        d.x().to_vec()
    };
    let (xp, x0, xm) = (at(h), at(0.0), at(-h));
    let differences =
        rows.iter().fold(0.0f64, |w, &r| w.max((acc[r] - (xp[r] - 2.0 * x0[r] + xm[r]) / (h * h)).abs() / scale));
    let s_scale = ks.sigma.iter().fold(1.0f64, |s, v| s.max(v.abs()));
    let stresses = sigma.iter().zip(&ks.sigma).fold(0.0f64, |w, (p, q)| w.max((p - q).abs() / s_scale));
    eprintln!(
        "ẍ at the masses: {kernel:.1e} from the second-order pass, {differences:.1e} from differences; σ {stresses:.1e} \
         (largest {s_scale:.1})"
    );
    assert!(scale > 0.1, "the accelerations are exercised: {scale}");
    assert!(kernel < 1e-12, "against the second-order pass: {kernel:e}");
    assert!(differences < 1e-5, "against central differences: {differences:e}");
    assert!(sigma.len() == m.n_e() && stresses < 1e-12, "stresses against kinetostatics: {stresses:e}");
    // a new configuration: the linearization's force is not its
    let q2: Vec<f64> = q.iter().map(|v| v + 0.01).collect();
    solve_positions(m, &mut a, &q2).unwrap();
    let moved = kinetostatic_stresses(m, &mut a, &lin.velocity_accelerations, &mut sigma);
    assert!(matches!(moved, Err(KinematicsError::NotLinearized)) && sigma.is_empty(), "{moved:?}");
}
