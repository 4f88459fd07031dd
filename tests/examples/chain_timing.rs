//! Times Mollier's kernel on a serial chain with inertia and prints JSON for a peer to compare
//! against (`tools/peer_pinocchio.py` builds the same chain in Pinocchio from the printed links).
//!
//! ```sh
//! cargo run --release -p mollier-tests --example chain_timing [-- N ...]   # default: 10 100
//! cargo run --release -p mollier-tests --example chain_timing -- --body MODEL.toml
//! cargo run --release -p mollier-tests --example chain_timing -- --frames K --body MODEL.toml
//! cargo run --release -p mollier-tests --example chain_timing -- --frames K --chain N
//! ```
//!
//! With `--body`, a tree from a model file instead (Huston's 17-member body,
//! `models/body/huston17.toml`, for `tools/peer_pinocchio.py --body`): the same timings at a
//! fixed state off the model's initial configuration, printed under `body` with the inputs' names;
//! the peer reads the tree from the model file itself.
//!
//! For each N: the chain of [`timing_links`] (joints 0.1 m apart) under gravity, its joints and
//! centres of mass attached to the body frames. Timed, warm, alternating between two inputs a
//! small step apart so that every call really solves:
//! - `positions_us`: every body's position and orientation for the new inputs (Newton-Raphson from
//!   the previous solution);
//! - `inverse_dynamics_us`: one frame as `mollier inverse-dynamics` computes its torques: the
//!   positions, then the kinetostatics (velocities, accelerations and one transposed solve)
//!   and the driving torques from them (`dynamics::driving_into`), into vectors kept from frame
//!   to frame as the command keeps them;
//! - `inverse_dynamics_df_us`: the positions, then `dynamics::inverse_dynamics`, which forms the
//!   first-order transfer functions `DF` (one solve per input) and contracts them with the net
//!   forces;
//! - `df_us`, `d2f_us`: the positions, then `DF` (`transfer::first_order`: every mode's, so a
//!   muscle's moment arms about every input), or `DF` and `D²F` (`transfer::second_order`); on a
//!   model with a tree path (`Model::tree_path`, whose size `tree_path` gives: the blocks of
//!   `D_cc` one `DF` substitutes) also `df_us_general`, `d2f_us_general` by the general solve.
//!
//! Each sample is a batch of calls (about 0.5 ms of work) divided by its length; fastest and
//! median per call in µs. `newton_iterations` is the count of one timed positions step. The
//! driving torques (N m) at a fixed (q, q̇, q̈) by both routes (`tau`, `tau_df`) are printed with
//! the links so that the peer's values can be compared.

use std::time::Instant;

use mollier_core::dynamics::{
    Kinetostatics, driving_from_kinetostatics, driving_into, inverse_dynamics, kinetostatics, kinetostatics_into,
    law_stresses_into,
};
use mollier_core::transfer::{first_order, second_order};
use mollier_core::{Data, Model, solve_positions};
use mollier_tests::{Link, Points, serial_chain_with, timing_links};
use serde_json::{Value, json};

/// Distance between successive joints (m).
const LINK: f64 = 0.1;
/// Gravity (m/s²), global frame.
const GRAVITY: [f64; 3] = [0.0, -9.81, 0.0];
/// Timed samples per measurement.
const SAMPLES: usize = 301;
/// Work per sample (s).
const BATCH_SECONDS: f64 = 5e-4;

fn main() {
    if let Err(e) = run() {
        eprintln!("chain_timing: {e}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, k, body, file] = args.as_slice()
        && flag == "--frames"
        && body == "--body"
    {
        let k = k.parse::<usize>().map_err(|e| format!("--frames: {e}"))?;
        return frames(file, k);
    }
    if let [flag, k, chain, n] = args.as_slice()
        && flag == "--frames"
        && chain == "--chain"
    {
        let k = k.parse::<usize>().map_err(|e| format!("--frames: {e}"))?;
        let n = n.parse::<usize>().ok().filter(|&n| n > 0).ok_or("--chain: a positive chain length")?;
        return chain_frames(n, k);
    }
    if let [flag, file] = args.as_slice()
        && flag == "--body"
    {
        let out = json!({ "gravity": GRAVITY, "body": body(file)? });
        println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
        return Ok(());
    }
    let ns: Vec<usize> = match std::env::args().skip(1).map(|a| a.parse::<usize>()).collect::<Result<Vec<_>, _>>() {
        Ok(v) if v.is_empty() => vec![10, 100],
        Ok(v) if v.iter().all(|&n| n > 0) => v,
        _ => return Err("arguments must be chain lengths (positive integers)".into()),
    };
    let chains = ns.iter().map(|&n| chain(n)).collect::<Result<Vec<_>, _>>()?;
    let out = json!({ "link": LINK, "gravity": GRAVITY, "chains": chains });
    println!("{}", serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?);
    Ok(())
}

/// The fixed state of the value check: moderate angles, rates and accelerations, all different.
fn check_state(n: usize) -> [Vec<f64>; 3] {
    let f = |a: f64, w: f64, p: f64| (0..n).map(|j| a * (w * j as f64 + p).sin()).collect::<Vec<f64>>();
    [f(0.4, 0.83, 0.3), f(1.5, 0.61, 1.1), f(3.0, 1.27, -0.4)]
}

fn chain(n: usize) -> Result<Value, String> {
    let links = timing_links(n, LINK);
    let (model, _) = serial_chain_with(&links, GRAVITY, Points::Attached, |_, _| {});
    let [q, qd, qdd] = check_state(n);
    let mut data = Data::new(&model);
    // from the reference configuration in steps, so Newton-Raphson starts near each solution
    for k in 1..=10 {
        let qk: Vec<f64> = q.iter().map(|v| v * k as f64 / 10.0).collect();
        solve_positions(&model, &mut data, &qk).map_err(|e| format!("N = {n}: positions: {e}"))?;
    }
    let tau = frame(&model, &mut data, &q, &qd, &qdd).map_err(|e| format!("N = {n}: {e}"))?;
    let tau_df = inverse_dynamics(&model, &mut data, &qd, &qdd, &[]).map_err(|e| format!("N = {n}: {e}"))?;
    if let Some(j) = tau.iter().chain(&tau_df).position(|t| !t.is_finite()) {
        return Err(format!("N = {n}: torque {} is not finite", j % n));
    }

    let timed = timings(&model, &mut data, &q, &qd, &qdd).map_err(|e| format!("N = {n}: {e}"))?;
    let links: Vec<Value> = links.iter().map(link_json).collect();
    Ok(merged(json!({ "n": n, "links": links, "q": q, "qd": qd, "qdd": qdd, "tau": tau, "tau_df": tau_df }), timed))
}

/// A tree from a model file, at a fixed state off its initial configuration (angles within
/// 0.4 rad of it): the same timings and torques as a chain's.
fn body(file: &str) -> Result<Value, String> {
    let registry = mollier::registry();
    let c = mollier::load(std::path::Path::new(file), &registry).map_err(|d| d.render())?;
    let model = &c.model;
    let n = model.n_q();
    let [dq, qd, qdd] = check_state(n);
    let q: Vec<f64> = model.q0().iter().zip(&dq).map(|(a, b)| a + b).collect();
    let mut data = Data::new(model);
    for k in 1..=10 {
        let qk: Vec<f64> = model.q0().iter().zip(&dq).map(|(a, b)| a + b * k as f64 / 10.0).collect();
        solve_positions(model, &mut data, &qk).map_err(|e| format!("{file}: positions: {e}"))?;
    }
    let tau = frame(model, &mut data, &q, &qd, &qdd).map_err(|e| format!("{file}: {e}"))?;
    let tau_df = inverse_dynamics(model, &mut data, &qd, &qdd, &[]).map_err(|e| format!("{file}: {e}"))?;
    let timed = timings(model, &mut data, &q, &qd, &qdd).map_err(|e| format!("{file}: {e}"))?;
    let inputs: Vec<&str> = c.inputs.iter().map(|i| i.name.as_str()).collect();
    Ok(merged(
        json!({ "file": file, "inputs": inputs, "q": q, "qd": qd, "qdd": qdd, "tau": tau, "tau_df": tau_df }),
        timed,
    ))
}

/// `k` inverse-dynamics frames of the tree in `file` ([`frame_into`], alternating as the timings
/// do) and nothing else: for an instruction count a frame (callgrind of two lengths, the
/// difference over the difference of `k`).
fn frames(file: &str, k: usize) -> Result<(), String> {
    let registry = mollier::registry();
    let c = mollier::load(std::path::Path::new(file), &registry).map_err(|d| d.render())?;
    let model = &c.model;
    let [dq, qd, qdd] = check_state(model.n_q());
    let q: Vec<f64> = model.q0().iter().zip(&dq).map(|(a, b)| a + b).collect();
    run_frames(model, &q, &qd, &qdd, k).map_err(|e| format!("{file}: {e}"))
}

/// [`frames`] of the chain of N links that the timings use, at its value check's state.
fn chain_frames(n: usize, k: usize) -> Result<(), String> {
    let (model, _) = serial_chain_with(&timing_links(n, LINK), GRAVITY, Points::Attached, |_, _| {});
    let [q, qd, qdd] = check_state(n);
    run_frames(&model, &q, &qd, &qdd, k).map_err(|e| format!("N = {n}: {e}"))
}

/// `k` frames of [`frame_into`] alternating between `q` and a step of 0.01 from it, after the
/// positions were solved from the initial configuration to `q` in ten steps; prints the first
/// torque.
fn run_frames(model: &Model, q: &[f64], qd: &[f64], qdd: &[f64], k: usize) -> Result<(), String> {
    let q0 = model.q0();
    let qs = [q.to_vec(), q.iter().map(|v| v + 0.01).collect::<Vec<f64>>()];
    let mut data = Data::new(model);
    for s in 1..=10 {
        let qk: Vec<f64> = q0.iter().zip(q).map(|(a, b)| a + (b - a) * s as f64 / 10.0).collect();
        solve_positions(model, &mut data, &qk).map_err(|e| format!("positions: {e}"))?;
    }
    let mut kept = Kept::default();
    for i in 0..k {
        frame_into(model, &mut data, &qs[i % 2], qd, qdd, &mut kept)?;
    }
    println!("{k} frames, torque 0: {}", kept.tau.first().copied().unwrap_or(f64::NAN));
    Ok(())
}

/// The timings (positions, inverse-dynamics frame, frame by DF, µs) and the Newton iterations of
/// one timed step, alternating between `q` and a step of 0.01 from it; with the unknowns.
fn timings(model: &Model, data: &mut Data, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<Value, String> {
    let qs = [q.to_vec(), q.iter().map(|v| v + 0.01).collect::<Vec<f64>>()];
    let positions = time(model, data, &qs, |m, d, q| solve_positions(m, d, q).map(|_| ()).map_err(|e| e.to_string()))
        .map_err(|e| format!("positions: {e}"))?;
    let mut kept = Kept::default();
    let dynamics = time(model, data, &qs, |m, d, q| frame_into(m, d, q, qd, qdd, &mut kept))
        .map_err(|e| format!("inverse dynamics: {e}"))?;
    let dynamics_df = time(model, data, &qs, |m, d, q| {
        solve_positions(m, d, q).map_err(|e| e.to_string())?;
        inverse_dynamics(m, d, qd, qdd, &[]).map(|_| ()).map_err(|e| e.to_string())
    })
    .map_err(|e| format!("inverse dynamics by DF: {e}"))?;
    // the transfer functions after the positions, by the model's tree path where it has one and
    // by the general solve (`Data::set_tree_path(false)`), in the same run
    let mut transfer = serde_json::Map::new();
    for (tree, suffix) in [(true, ""), (false, "_general")] {
        if !tree && model.tree_path().is_none() {
            continue;
        }
        data.set_tree_path(tree);
        let df = time(model, data, &qs, |m, d, q| {
            solve_positions(m, d, q).map_err(|e| e.to_string())?;
            first_order(m, d).map_err(|e| e.to_string())
        })
        .map_err(|e| format!("DF: {e}"))?;
        let d2f = time(model, data, &qs, |m, d, q| {
            solve_positions(m, d, q).map_err(|e| e.to_string())?;
            second_order(m, d).map_err(|e| e.to_string())
        })
        .map_err(|e| format!("D²F: {e}"))?;
        transfer.insert(format!("df_us{suffix}"), df);
        transfer.insert(format!("d2f_us{suffix}"), d2f);
    }
    data.set_tree_path(true);
    // Newton iterations of one timed step, to read the timings by
    solve_positions(model, data, &qs[0]).map_err(|e| e.to_string())?;
    let iterations = solve_positions(model, data, &qs[1]).map_err(|e| e.to_string())?.iterations;
    Ok(merged(
        json!({
        "unknowns": model.n_unknowns(),
        "tree_path": model.tree_path().map(|r| r.total()),
        "newton_iterations": iterations,
        "positions_us": positions,
        "inverse_dynamics_us": dynamics,
        "inverse_dynamics_df_us": dynamics_df,
        }),
        Value::Object(transfer),
    ))
}

/// `a` with the fields of the object `b` added.
fn merged(mut a: Value, b: Value) -> Value {
    if let (Some(a), Value::Object(b)) = (a.as_object_mut(), b) {
        a.extend(b);
    }
    a
}

/// One inverse-dynamics frame: positions for `q`, kinetostatics for `qd`, `qdd`, and the driving
/// torques (n_q, N m).
fn frame(model: &Model, data: &mut Data, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<Vec<f64>, String> {
    solve_positions(model, data, q).map_err(|e| e.to_string())?;
    let ks = kinetostatics(model, data, qd, qdd, None, &[]).map_err(|e| e.to_string())?;
    Ok(driving_from_kinetostatics(model, data, &ks))
}

/// What a run of frames keeps from one frame to the next, as `mollier inverse-dynamics` does
/// (`mollier::dynamics`): the kinetostatics, the laws' stresses and the torques.
#[derive(Default)]
struct Kept {
    ks: Kinetostatics,
    law: Vec<f64>,
    tau: Vec<f64>,
}

/// [`frame`] into the vectors of `kept` (no allocation once they have their sizes).
fn frame_into(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    qd: &[f64],
    qdd: &[f64],
    kept: &mut Kept,
) -> Result<(), String> {
    solve_positions(model, data, q).map_err(|e| e.to_string())?;
    kinetostatics_into(model, data, qd, qdd, None, &[], &mut kept.ks).map_err(|e| e.to_string())?;
    law_stresses_into(model, data, &mut kept.law);
    kept.tau.clear();
    driving_into(model, &kept.ks, &kept.law, &mut kept.tau);
    Ok(())
}

fn link_json(l: &Link) -> Value {
    json!({ "axis": l.axis, "joint": l.joint, "com": l.com, "mass": l.mass, "inertia": l.inertia })
}

/// Fastest and median time per call (µs) of `work`, alternating between the two inputs.
fn time(
    model: &Model,
    data: &mut Data,
    qs: &[Vec<f64>; 2],
    mut work: impl FnMut(&Model, &mut Data, &[f64]) -> Result<(), String>,
) -> Result<Value, String> {
    // warm up, and size the batches from the warm cost
    let start = Instant::now();
    let mut calls = 0usize;
    while calls < 20 || start.elapsed().as_secs_f64() < 0.05 {
        work(model, data, &qs[calls % 2])?;
        calls += 1;
    }
    let per_call = start.elapsed().as_secs_f64() / calls as f64;
    let batch = ((BATCH_SECONDS / per_call).ceil() as usize).max(2) & !1;
    let mut samples = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let t = Instant::now();
        for k in 0..batch {
            work(model, data, &qs[k % 2])?;
        }
        samples.push(t.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    samples.sort_by(f64::total_cmp);
    Ok(json!({ "fastest": samples[0], "median": samples[SAMPLES / 2], "samples": SAMPLES, "batch": batch }))
}
