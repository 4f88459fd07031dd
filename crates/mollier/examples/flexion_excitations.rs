//! Make `models/shoulder/flexion-excitations.csv`: the muscle excitations that move
//! `models/shoulder/shoulder-forward.toml` through the forward flexion of
//! `models/shoulder/flexion-target.csv` (humerus elevated from rest to 80° in the plane of
//! elevation 50° in 1.3 s, the girdle following the shoulder rhythm; made by
//! `models/shoulder/tools/flexion_target.py`).
//!
//! As Chadwick et al. (2014)'s pattern was made — excitations estimated every 50 ms along a motion — but by
//! tracking in the spirit of computed muscle control (Thelen et al. 2003), with the forward
//! simulation itself in the loop:
//!
//! 1. before the simulation steps past the last excitation row, from the state then: desired
//!    accelerations at the next row by a PD law on the target, and generalized forces by a PID
//!    law on the same errors (the light directions, the clavicle's axial rotation above all,
//!    get next to nothing from accelerations, and the muscle forces as modelled here miss by a
//!    bias that the integral takes out);
//! 2. what the muscles must give for them (the equations of motion's residual with the muscles
//!    taken out) shared among the muscles: minimum `Σ a²` over activations `0 ≤ a ≤ 1`, each
//!    muscle's force `a F_max f_FL f_FV cos φ + F_PEE cos φ` at its current fibre length and
//!    velocity, with a heavily weighted residual for what they cannot give;
//! 3. the next row's excitations are those activations. (Inverting the activation dynamics so
//!    that the activation reaches them at the next row makes the excitations, linear between
//!    rows, alternate between rows; the loop's feedback takes up the activation's lag.)
//! 4. the Rosenbrock step of `mollier simulate` (4 ms) advances under the rows so far.
//!
//! The first row holds the rest posture (a fixed point: activating the muscles moves their
//! fibres). Excitations are rounded to the six decimals written before they are simulated, and
//! the file is replayed at the end through `ForwardRun` (what `mollier simulate` runs): the
//! replay is the loop's trajectory. Run from anywhere (paths are the repository's):
//!
//! ```sh
//! cargo run --release -p mollier --example flexion_excitations
//! ```

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use faer::Mat;
use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun};
use mollier_sim::system::solve_partial_pivoting;
use mollier_sim::{Musculoskeletal, State};

/// Rows of the excitation file, s apart (Chadwick et al. 2014: "every 50ms").
const EVERY: f64 = 0.05;
/// The simulation's step (s), `mollier simulate`'s default.
const STEP: f64 = 0.004;
/// Duration (s).
const DURATION: f64 = 1.3;
/// PD gains on the target's accelerations: stiffness (1/s²) and damping (1/s), critically damped
/// at 10 rad/s.
const KP: f64 = 100.0;
const KV: f64 = 20.0;
/// PID gains as generalized forces on each coordinate: N m/rad, N m s/rad, N m/(rad s).
const KP_FORCE: f64 = 30.0;
const KD_FORCE: f64 = 3.0;
const KI_FORCE: f64 = 60.0;
/// Weight of the residual generalized force (1/(N m)²) against `Σ a²`.
const RHO: f64 = 1e4;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

include!("../tests/fixtures/flexion.rs");

/// Minimise `aᵀa + ρ |A a − b|²` over `0 ≤ a ≤ 1` by a primal active set (`A` is n x m, `b` n):
/// a small dense problem, solved exactly, so no solver crate.
fn share(a_mat: &[Vec<f64>], b: &[f64], m: usize) -> Vec<f64> {
    let n = b.len();
    let mut h = Mat::<f64>::zeros(m, m);
    let mut c = vec![0.0; m];
    for i in 0..m {
        for j in 0..m {
            h[(i, j)] = RHO * (0..n).map(|r| a_mat[r][i] * a_mat[r][j]).sum::<f64>() + if i == j { 1.0 } else { 0.0 };
        }
        c[i] = RHO * (0..n).map(|r| a_mat[r][i] * b[r]).sum::<f64>();
    }
    let mut x = vec![0.0; m];
    // bound: None free, Some(value) held at 0 or 1
    let mut bound: Vec<Option<f64>> = vec![Some(0.0); m];
    for _ in 0..10 * m {
        let free: Vec<usize> = (0..m).filter(|&i| bound[i].is_none()).collect();
        let mut y = x.clone();
        if !free.is_empty() {
            let mut hf = Mat::<f64>::zeros(free.len(), free.len());
            let mut rf = vec![0.0; free.len()];
            for (p, &i) in free.iter().enumerate() {
                for (r, &j) in free.iter().enumerate() {
                    hf[(p, r)] = h[(i, j)];
                }
                rf[p] = c[i] - (0..m).filter(|&j| bound[j].is_some()).map(|j| h[(i, j)] * x[j]).sum::<f64>();
            }
            let sol = solve_partial_pivoting(&hf, &rf).expect("H is positive definite");
            for (p, &i) in free.iter().enumerate() {
                y[i] = sol[p];
            }
        }
        // step towards y as far as the bounds allow
        let mut step = 1.0f64;
        let mut hit = None;
        for &i in &free {
            let d = y[i] - x[i];
            let room = if d < 0.0 {
                -x[i] / d
            } else if d > 0.0 {
                (1.0 - x[i]) / d
            } else {
                f64::INFINITY
            };
            if room < step {
                step = room;
                hit = Some(i);
            }
        }
        for &i in &free {
            x[i] += step * (y[i] - x[i]);
        }
        if let Some(i) = hit {
            x[i] = x[i].round();
            bound[i] = Some(x[i]);
            continue;
        }
        // release the bound variable whose gradient points most into the box
        let grad: Vec<f64> = (0..m).map(|i| (0..m).map(|j| h[(i, j)] * x[j]).sum::<f64>() - c[i]).collect();
        let release = (0..m)
            .filter_map(|i| match bound[i] {
                Some(v) if v == 0.0 && grad[i] < -1e-12 => Some((i, -grad[i])),
                Some(v) if v == 1.0 && grad[i] > 1e-12 => Some((i, grad[i])),
                _ => None,
            })
            .max_by(|a, b| a.1.total_cmp(&b.1));
        match release {
            Some((i, _)) => bound[i] = None,
            None => return x,
        }
    }
    panic!("the load sharing did not converge");
}

fn round6(v: f64) -> f64 {
    format!("{v:.6}").parse().expect("a number")
}

/// The humerus's plane of elevation and elevation (deg) at coordinates `q` (or a state).
fn angles_at(c: &Compiled, data: &mut mollier_core::Data, q: &[f64]) -> [f64; 2] {
    mollier_core::solve_positions(&c.model, data, &q[..c.model.n_q()]).expect("a configuration");
    humerus_angles(c, data)
}

fn main() {
    let model = root().join("models/shoulder/shoulder-forward.toml");
    let c = mollier::load(&model, &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let names: Vec<String> = (0..c.model.n_q()).map(|i| c.model.input_name(i).to_string()).collect();
    let target = Target::read(&root().join("models/shoulder/flexion-target.csv"), &names);
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = sys.layout();
    let (n, m) = (l.n, l.m);
    let mut ws = sys.workspace();
    let rows = (DURATION / EVERY).round() as usize;
    let row_time = |k: usize| -> f64 { format!("{:.2}", k as f64 * EVERY).parse().expect("a time") };
    let mut ex = Excitations { time: vec![0.0], values: vec![vec![0.0]; m], missing: Vec::new() };

    // the activations that give the generalized forces for accelerations `vdot` at state `x`
    let activations =
        |ws: &mut mollier_sim::Workspace, x: &[f64], xd: &[f64], vdot: &[f64], extra: &[f64]| -> (Vec<f64>, f64) {
            let mut xdd = xd.to_vec();
            xdd[n..2 * n].copy_from_slice(vdot);
            let lin = sys.linearize(ws, x, &xdd, &vec![0.0; m]).expect("a configuration");
            // what the muscles must give: Σ F_m ∂L/∂q = −(f_v without the muscles)
            let mut b: Vec<f64> = (0..n).map(|i| -lin.f[n + i] - extra[i]).collect();
            let mut a_mat = vec![vec![0.0; m]; n];
            for (k, mu) in sys.muscles.iter().enumerate() {
                let g = lin.grad(k);
                let (s, sd) = (x[l.s() + k], xd[l.s() + k]);
                let (lce, cos, _, _) = mu.hill.fibre(s);
                let fl = mu.hill.force_length(lce).0;
                let fv = mu.hill.force_velocity(sd * cos).0.max(0.1);
                let active = mu.hill.params.max_force * fl * fv * cos;
                let passive = mu.hill.parallel(lce).0 * cos;
                for i in 0..n {
                    b[i] += lin.contraction[k].force * g[i] - passive * g[i];
                    a_mat[i][k] = active * g[i];
                }
            }
            let a = share(&a_mat, &b, m);
            let residual = (0..n)
                .map(|i| (0..m).map(|k| a_mat[i][k] * a[k]).sum::<f64>() - b[i])
                .fold(0.0f64, |r, v| r.max(v.abs()));
            (a, residual)
        };

    // the first row: the activations that hold the rest posture (the run starts there, its
    // muscles activated at the first row's excitations and in isometric equilibrium)
    let q0 = c.model.q0();
    let (_, _, acc0) = target.at(0.0);
    let mut u0 = vec![0.0; m];
    let mut state: State = sys.rest_state(&mut ws, &q0, 0.0, &u0).expect("a rest state");
    // a fixed point: activating the muscles moves their fibres, and with them the forces
    let mut r0 = f64::INFINITY;
    for _ in 0..50 {
        let (a0, r) = activations(&mut ws, &state.x, &vec![0.0; l.len()], &acc0, &vec![0.0; n]);
        let next: Vec<f64> = a0.iter().map(|&a| round6(a)).collect();
        let change = next.iter().zip(&u0).fold(0.0f64, |w, (a, b)| w.max((a - b).abs()));
        (u0, r0) = (next, r);
        state = sys.rest_state(&mut ws, &q0, 0.0, &u0).expect("a rest state");
        if change == 0.0 {
            break;
        }
    }
    for k in 0..m {
        ex.values[k][0] = u0[k];
    }
    let vd0 = state.xd[n..2 * n].iter().fold(0.0f64, |w, v| w.max(v.abs()));
    eprintln!("row 0: largest initial acceleration {vd0:.2e} rad/s²");
    eprintln!("row 0: largest residual {r0:.2e} N m");

    let mut trajectory = vec![state.x.clone()];
    let mut integral = vec![0.0; n];
    let mut probe = mollier_core::Data::new(&c.model);
    let mut steps = 0usize;
    let mut report = String::new();
    while (steps as f64) * STEP < DURATION - 1e-9 {
        let t_last = *ex.time.last().expect("a row");
        if state.t + STEP > t_last + 1e-12 && ex.time.len() <= rows {
            let k_next = ex.time.len();
            let t_next = row_time(k_next);
            // the target at the next row, the state's coordinates extrapolated there
            let dt = t_next - state.t;
            let (qt, vt, at) = target.at(t_next);
            let (q, v) = (&state.x[..n], &state.x[n..2 * n]);
            let vdot: Vec<f64> = (0..n)
                .map(|i| {
                    let e = qt[i] - q[i] - v[i] * dt;
                    integral[i] += e * (t_next - t_last);
                    at[i] + KV * (vt[i] - v[i]) + KP * e
                })
                .collect();
            // and generalized forces on the same errors: the light directions (the clavicle's
            // axial rotation) get next to nothing from accelerations, and the muscles' forces
            // as modelled here miss by a bias that the integral takes out
            let extra: Vec<f64> = (0..n)
                .map(|i| KP_FORCE * (qt[i] - q[i] - v[i] * dt) + KD_FORCE * (vt[i] - v[i]) + KI_FORCE * integral[i])
                .collect();
            let (a_star, residual) = activations(&mut ws, &state.x, &state.xd, &vdot, &extra);
            ex.time.push(t_next);
            for (k, v) in ex.values.iter_mut().enumerate() {
                v.push(round6(a_star[k]));
            }
            let err = (0..n).map(|i| (qt[i] - q[i]).abs()).fold(0.0f64, f64::max).to_degrees();
            // measured in a Data of their own: the loop's workspace is the run's
            let [_, e_t] = angles_at(&c, &mut probe, &target.at(state.t).0);
            let [plane, elev] = angles_at(&c, &mut probe, &state.x);
            let _ = writeln!(
                report,
                "t {:.3}: row {k_next} at {t_next:.2} s; elevation {elev:.1}° (target {e_t:.1}°), plane {plane:.1}°; largest joint error {err:.2}°, residual {residual:.2e} N m, largest activation {:.3}",
                state.t,
                a_star.iter().fold(0.0f64, |a, &b| a.max(b))
            );
        }
        let u = |t: f64, u: &mut [f64]| ex.at(t, u);
        let (mut next, _) = sys.rosenbrock_step(&mut ws, &state, STEP, &u).expect("a step");
        steps += 1;
        next.t = steps as f64 * STEP;
        state = next;
        trajectory.push(state.x.clone());
    }
    eprint!("{report}");

    // the file, then its replay through ForwardRun
    let mut out = String::from("time");
    for mu in &sys.muscles {
        out.push(',');
        out.push_str(&mu.name);
    }
    out.push('\n');
    for (i, t) in ex.time.iter().enumerate() {
        let _ = write!(out, "{t:.2}");
        for v in &ex.values {
            let _ = write!(out, ",{:.6}", v[i]);
        }
        out.push('\n');
    }
    let path = root().join("models/shoulder/flexion-excitations.csv");
    std::fs::write(&path, out).expect("the file written");
    let read = Excitations::read(&path, &c).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = ForwardRun::new(&c, read, ForwardOptions::fixed(STEP)).expect("a rest state");
    let mut worst = 0.0f64;
    for x in &trajectory[1..] {
        run.advance().expect("a step");
        worst = run.state().x.iter().zip(x).fold(worst, |w, (a, b)| w.max((a - b).abs()));
    }
    let [plane, elev] = angles_at(&c, &mut probe, &run.state().x);
    eprintln!(
        "wrote {} ({} rows); the replay differs from the loop by {worst:.1e} at most; at {:.2} s elevation {elev:.1}°, plane {plane:.1}°",
        path.display(),
        ex.time.len(),
        run.state().t
    );
}
