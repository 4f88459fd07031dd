//! External loads in the forward simulation ([`crate::ForwardRun`], [`mollier_sim`]): the
//! pendulum of `models/mechanisms/pendulum.toml` (rod 0.8 m, 1.5 kg, centre of mass 0.4 m out,
//! `m c² + J = 0.32 kg m²`, hinged about z at the origin, gravity −y) in closed form, the
//! inverse dynamics of a simulated double pendulum, and the loads' part of the Jacobian against
//! central differences.

use std::path::Path;

use mollier_sim::{Musculoskeletal, Tolerances};

use super::*;
use crate::dynamics::InverseDynamicsRun;
use crate::{Excitations, ForwardOptions, ForwardRun};

fn model(name: &str) -> Compiled {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms").join(name);
    crate::load(&path, &crate::registry()).expect("the model compiles")
}

fn tight() -> Tolerances {
    Tolerances { rtol: 1e-9, atol: 1e-11, ..Tolerances::default() }
}

/// The states `(t, x, ẋ)` of an error-controlled run of `c` under `loads` at `times` (s): the
/// integrator's accepted states, whose rates are consistent with the equations of motion.
fn simulate(c: &Compiled, loads: &ExternalLoads, times: &[f64]) -> Vec<(f64, Vec<f64>, Vec<f64>)> {
    let mut run = ForwardRun::new(c, Excitations::zero(c), ForwardOptions::adaptive(tight()).with_loads(Some(loads)))
        .expect("it starts");
    times
        .iter()
        .map(|&t| {
            let f = run.output(t).expect("it steps");
            assert_eq!(f.time, t);
            let s = run.state();
            (s.t, s.x.clone(), s.xd.clone())
        })
        .collect()
}

#[test]
fn the_pendulum_is_held_still_by_loads_equal_to_gravity_s_moment() {
    let c = model("pendulum.toml");
    // horizontal, gravity's moment about the hinge is −m g c = −5.886 N m: half of it balanced
    // by a force up at the tip (0.8 m), half by a moment about z
    let (mgc, half) = (1.5 * 9.81 * 0.4, 0.5 * 1.5 * 9.81 * 0.4);
    let held = format!("time,rod.tip.fx,rod.tip.fy,rod.tip.fz,rod.mx,rod.my,rod.mz\n0,0,{},0,0,0,{half}\n", half / 0.8);
    let loads = ExternalLoads::parse("held.csv", &held, &c).expect("parses");
    let states = simulate(&c, &loads, &[0.25, 0.5, 1.0]);
    for (t, x, xd) in &states {
        assert!(x[0].abs() < 1e-12 && x[1].abs() < 1e-12 && xd[1].abs() < 1e-12, "t {t}: q {} v {}", x[0], x[1]);
    }
    // 1 % less force: it falls, θ̈ = −0.01 · 5.886 / 0.32 at first
    let less = format!("time,rod.tip.fx,rod.tip.fy,rod.tip.fz\n0,0,{},0\n", 0.99 * mgc / 0.8);
    let loads = ExternalLoads::parse("less.csv", &less, &c).expect("parses");
    // (the integrator's state a step past the output time: its own time)
    let (t, x, _) = &simulate(&c, &loads, &[0.1])[0];
    let expected = -0.5 * 0.01 * mgc / 0.32 * t * t;
    assert!((x[0] - expected).abs() < 1e-3 * expected.abs(), "{} vs {expected}", x[0]);
}

#[test]
fn a_constant_force_s_work_is_the_energy_gained() {
    let c = model("pendulum.toml");
    // F = (4, 6, 0) N at the tip, fixed in direction: its work from the start is F · Δr_tip, so
    // ½ (m c² + J) v² + m g c sin q − F · r_tip(q) stays what it was
    let loads = ExternalLoads::parse("f.csv", "time,rod.tip.fx,rod.tip.fy,rod.tip.fz\n0,4,6,0\n", &c).expect("ok");
    let energy =
        |q: f64, v: f64| 0.5 * 0.32 * v * v + 1.5 * 9.81 * 0.4 * q.sin() - 0.8 * (4.0 * q.cos() + 6.0 * q.sin());
    let e0 = energy(0.0, 0.0);
    let times: Vec<f64> = (1..=20).map(|k| 0.05 * k as f64).collect();
    let mut gained = 0.0f64;
    for (t, x, _) in simulate(&c, &loads, &times) {
        let kinetic = 0.5 * 0.32 * x[1] * x[1];
        gained = gained.max(kinetic);
        let drift = energy(x[0], x[1]) - e0;
        assert!(drift.abs() < 1e-6, "t {t}: energy changed by {drift:.3e} J (kinetic {kinetic:.4} J)");
    }
    assert!(gained > 0.1, "the pendulum swings: {gained} J");
}

/// A load table for the double pendulum (mm, deg): a force on `lower` at a point fixed in space
/// that moves along x over time, and a moment on `upper`, both varying in time.
const DOUBLE: &str = "time,lower.fx,lower.fy,lower.fz,lower.px [mm],lower.py [mm],lower.pz [mm],upper.mx,upper.my,upper.mz\n\
                      0,2,-5,0,600,-100,0,0,0,1.5\n0.3,-3,4,1,700,50,0,0,0,-2\n0.6,1,8,0,650,0,0,0,0,0.5\n\
                      1,0,-2,0,800,100,0,0,0,1\n";

#[test]
fn the_inverse_dynamics_of_the_simulated_motion_gives_back_the_load() {
    let c = model("double-pendulum.toml");
    let loads = ExternalLoads::parse("double.csv", DOUBLE, &c).expect("parses");
    let times: Vec<f64> = (1..=10).map(|k| 0.1 * k as f64).collect();
    let mut moved = 0.0f64;
    let (mut loaded, mut bare) = (InverseDynamicsRun::new(&c).with_loads(Some(&loads)), InverseDynamicsRun::new(&c));
    for (t, x, xd) in simulate(&c, &loads, &times) {
        let (q, v, vdot) = (&x[..2], &x[2..4], &xd[2..4]);
        let with = loaded.solve_at(t, q, v, vdot).expect("solves").driving.clone();
        let without = bare.solve(q, v, vdot).expect("solves").driving.clone();
        // the motion needs no driving moment with the loads; without them the driving moments
        // are the loads' own (minus their generalized forces)
        for j in 0..2 {
            assert!(with[j].abs() < 1e-9, "t {t}: driving {j} {} N m", with[j]);
        }
        moved = moved.max(without[0].abs().max(without[1].abs()));
    }
    assert!(moved > 1.0, "the loads are felt: {moved} N m");
}

/// `∂f_v/∂q` of `sys` at `q` (at rest, `v̇ = 0`) against central differences of `f_v`; returns
/// the largest entry of the analytic partial.
fn check_jacobian(sys: &Musculoskeletal<'_>, q: &[f64], t: f64) -> f64 {
    let n = q.len();
    let mut ws = sys.workspace();
    let mut x = vec![0.0; 2 * n];
    x[..n].copy_from_slice(q);
    let xd = vec![0.0; 2 * n];
    let lin = sys.linearize_at(&mut ws, t, &x, &xd, &[]).expect("linearizes");
    let mut largest = 0.0f64;
    for j in 0..n {
        let h = 1e-6;
        let (mut xp, mut xm) = (x.clone(), x.clone());
        xp[j] += h;
        xm[j] -= h;
        let fp = sys.linearize_at(&mut ws, t, &xp, &xd, &[]).expect("linearizes").f;
        let fm = sys.linearize_at(&mut ws, t, &xm, &xd, &[]).expect("linearizes").f;
        for i in 0..n {
            let num = (fp[n + i] - fm[n + i]) / (2.0 * h);
            let a = lin.fv_q[(i, j)];
            largest = largest.max(a.abs());
            assert!((a - num).abs() < 1e-7 * (1.0 + a.abs()), "∂f_v{i}/∂q{j} at t {t}: {a} vs {num}");
        }
    }
    largest
}

#[test]
fn the_loads_part_of_the_jacobian_is_the_residual_s_derivative() {
    // the spherical joint (no mass: f_v is the loads' alone): a force at a body point, a force at
    // a point fixed in space, a moment; then OpenSim's force, point and torque in the arm's axes
    let c = model("spherical-joint.toml");
    let table = "time,arm.tip.fx,arm.tip.fy,arm.tip.fz,arm.fx,arm.fy,arm.fz,arm.px,arm.py,arm.pz,arm.mx,arm.my,arm.mz\n\
                 0,3,-4,5,1,2,-6,0.1,0.4,-0.2,0.7,-0.3,0.9\n1,-2,6,1,4,-1,2,0.3,-0.2,0.1,-0.5,0.8,0.2\n";
    let q = [0.4, -0.7, 1.1];
    let global = ExternalLoads::parse("g.csv", table, &c).expect("parses");
    let sys = Musculoskeletal::new(&c.model, Vec::new()).with_loads(Box::new(global.forcing(&c)));
    assert!(check_jacobian(&sys, &q, 0.4) > 1.0);
    let table = "grf\nendheader\ntime\tf_x\tf_y\tf_z\tp_x\tp_y\tp_z\tt_x\tt_y\tt_z\n\
                 0\t3\t-4\t5\t0.2\t0.1\t-0.3\t0.5\t0.6\t-0.7\n1\t1\t2\t3\t0.1\t0.2\t0.3\t0.1\t0.2\t0.3\n";
    let axes = super::tests::xml_loads(&c, &super::tests::opensim_xml("arm", "arm", "arm"), table).expect("parses");
    let sys = Musculoskeletal::new(&c.model, Vec::new()).with_loads(Box::new(axes.forcing(&c)));
    assert!(check_jacobian(&sys, &q, 0.6) > 0.1);
    // the double pendulum (gravity, masses): a point fixed in space on the moving forearm, and a
    // force on the forearm at a point in the upper arm's axes
    let c = model("double-pendulum.toml");
    let loads = ExternalLoads::parse("double.csv", DOUBLE, &c).expect("parses");
    let sys = Musculoskeletal::new(&c.model, Vec::new()).with_loads(Box::new(loads.forcing(&c)));
    check_jacobian(&sys, &[0.3, 0.9], 0.45);
    let xml = super::tests::opensim_xml("lower", "ground", "upper");
    let loads = super::tests::xml_loads(&c, &xml, table).expect("parses");
    let sys = Musculoskeletal::new(&c.model, Vec::new()).with_loads(Box::new(loads.forcing(&c)));
    check_jacobian(&sys, &[-0.5, 1.2], 0.3);
}
