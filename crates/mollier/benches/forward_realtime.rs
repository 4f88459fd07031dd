//! The shoulder's forward flexion (1.3 s, `models/shoulder/flexion-excitations.csv`) integrated
//! with error control, timed whole: the real-time factor to set beside MuJoCo's MyoArm
//! (`tools/peer_mujoco_myoarm.py --mollier`, which runs this in alternation with MuJoCo).
//!
//! ```sh
//! cargo bench -p mollier --bench forward_realtime -- [--rounds N] [--rtol R] [--jacobian-every K]
//!     [--whole-jacobian] [--max-step H] [--with-third-order] [--gustafsson] [--ros23 | --ros34pw2]
//!     [--accuracy] [--no-frames] [--no-breaks] [--atol-activation A] [--rigid-tendons R]
//!     [--end-state]
//! ```
//! Each round times the integration alone (`Adaptive::step` to 1.3 s, one thread) and the same
//! run through `ForwardRun` with a frame every 10 ms (what `mollier simulate` computes before it
//! writes); it prints one `round:` line each and a `real time:` line with the fastest round.
//! `--accuracy` also compares the run's joint angles and muscle forces every 20 ms with
//! Richardson's extrapolation of the fixed step at 0.5 and 0.25 ms, and gives the fixed 4 ms
//! step's errors beside them (the figures of `forward_convergence`). `--gustafsson`:
//! Gustafsson's step-size controller instead of the elementary one (the default); `--ros23`,
//! `--ros34pw2`: the Rosenbrock-W pair (`Tolerances::method`);
//! `--whole-jacobian`: the whole linearization at every evaluation (`jacobian_every: None`)
//! instead of every 4 steps; `--max-step`: the longest step (s, 0.02 by default);
//! `--with-third-order`: the integration alone with the exact `∂c/∂q` in the whole Jacobians, the
//! third-order transfer functions included (`Musculoskeletal::workspace`), instead of
//! `ForwardRun`'s without them (`Musculoskeletal::forward_workspace`); `--no-breaks` (or
//! `--steps-across-knots`, as `mollier simulate`'s): every adaptive run's steps straddle the
//! excitations' knots instead of ending on them (`Tolerances::land_on_breaks`);
//! `--atol-activation`: `Tolerances::atol_activation`; `--rigid-tendons R`: every muscle whose
//! tendon slack length is below `R` optimal fibre lengths with a rigid tendon (`inf`: all;
//! `mollier::rigid_tendons`), in every run of the round (the fixed step's too); with
//! `--accuracy` the adaptive and fixed runs are also compared with the elastic model's
//! reference (the approximation's own error). `--end-state`: the integration's end state
//! and a hash of its bits, each round (two builds' runs compared bit for bit or to round-off).

use std::path::PathBuf;
use std::time::Instant;

use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun, Tolerances};
use mollier_sim::{Adaptive, Musculoskeletal};

const DURATION: f64 = 1.3;

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models")
}

/// The value after `flag` on the command line, parsed.
fn arg<T: std::str::FromStr>(args: &[String], flag: &str) -> Option<T> {
    let i = args.iter().position(|a| a == flag)?;
    let v = args.get(i + 1).unwrap_or_else(|| panic!("{flag} needs a value"));
    Some(v.parse().unwrap_or_else(|_| panic!("{flag}: `{v}` is not a value")))
}

/// Joint angles (rad) and muscle forces (N) every `every` s to the end.
type Outputs = Vec<(Vec<f64>, Vec<f64>)>;

fn outputs(run: &mut ForwardRun<'_>, every: f64) -> Outputs {
    let n = run.system().layout().n;
    let count = (DURATION / every).round() as usize;
    (0..=count)
        .map(|k| {
            let f = run.output(k as f64 * every).expect("the run reaches the output");
            (f.x[..n].to_vec(), f.muscles.iter().map(|m| m[2]).collect())
        })
        .collect()
}

/// RMS joint-angle difference (deg) and the largest force difference (N).
fn differences(a: &Outputs, b: &Outputs) -> (f64, f64) {
    let d: Vec<f64> =
        a.iter().zip(b).flat_map(|(x, y)| x.0.iter().zip(&y.0).map(|(p, q)| (p - q).to_degrees())).collect();
    let rms = (d.iter().map(|v| v * v).sum::<f64>() / d.len() as f64).sqrt();
    let force = a.iter().zip(b).flat_map(|(x, y)| x.1.iter().zip(&y.1).map(|(p, q)| (p - q).abs())).fold(0.0, f64::max);
    (rms, force)
}

/// The integration alone to the end: seconds and the step counts.
fn integrate(
    c: &Compiled,
    ex: &Excitations,
    tol: Tolerances,
    third: bool,
    rigid: Option<f64>,
) -> (f64, mollier_sim::StepStats, Vec<f64>) {
    let mut muscles = c.muscles.clone();
    if let Some(r) = rigid {
        mollier::rigid_tendons(&mut muscles, r);
    }
    let sys = Musculoskeletal::new(&c.model, muscles);
    let mut ws = if third { sys.workspace() } else { sys.forward_workspace() };
    let u = |t: f64, w: &mut [f64]| ex.at(t, w);
    let mut w = vec![0.0; sys.layout().m];
    ex.at(0.0, &mut w);
    let start = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &w).expect("a rest state");
    let t0 = Instant::now();
    let mut a = Adaptive::new(&sys, &mut ws, &start, &u, tol).expect("it starts");
    a.set_breaks(&ex.time);
    while a.state().t < DURATION {
        a.step(&sys, &mut ws, &u).expect("a step");
    }
    (t0.elapsed().as_secs_f64(), a.stats(), a.state().x.clone())
}

/// A 64-bit FNV-1a hash of the bits of `x`: two builds' runs end bit for bit alike when it is.
fn bits_hash(x: &[f64]) -> u64 {
    x.iter()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds").unwrap_or(5);
    let mut tol = Tolerances::default();
    if let Some(r) = arg(&args, "--rtol") {
        tol.rtol = r;
        tol.atol = r * 1e-2;
    }
    if let Some(a) = arg(&args, "--atol-activation") {
        tol.atol_activation = Some(a);
    }
    if let Some(k) = arg(&args, "--jacobian-every") {
        tol.jacobian_every = Some(k);
    }
    if args.iter().any(|a| a == "--whole-jacobian") {
        tol.jacobian_every = None;
    }
    if let Some(h) = arg(&args, "--max-step") {
        tol.max_step = h;
    }
    if args.iter().any(|a| a == "--ros23") {
        tol.method = mollier_sim::Method::Ros23;
    }
    if args.iter().any(|a| a == "--ros34pw2") {
        tol.method = mollier_sim::Method::Ros34pw2;
    }
    if args.iter().any(|a| a == "--gustafsson") {
        tol.controller = mollier_sim::Controller::Gustafsson;
    }
    if args.iter().any(|a| a == "--no-breaks" || a == "--steps-across-knots") {
        tol.land_on_breaks = false;
    }
    let rigid: Option<f64> = arg(&args, "--rigid-tendons");
    let adaptive = |tol| ForwardOptions::adaptive(tol).with_rigid_tendons(rigid);
    let fixed_step = |h| ForwardOptions::fixed(h).with_rigid_tendons(rigid);
    let c = mollier::load(&models().join("shoulder/shoulder-forward.toml"), &mollier::registry())
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let ex = Excitations::read(&models().join("shoulder/flexion-excitations.csv"), &c).expect("excitations");
    let every = tol
        .jacobian_every
        .map_or("at every evaluation".to_string(), |k| format!("every {k} steps, the stages for the rate alone"));
    println!(
        "flexion {DURATION} s, {:?}, rtol {:e}, atol {:e}, the whole Jacobian {every}, {:?} controller",
        tol.method, tol.rtol, tol.atol, tol.controller
    );
    if let Some(r) = rigid {
        let n = mollier::rigid_tendons(&mut c.muscles.clone(), r);
        println!("rigid tendons below {r} optimal fibre lengths: {n} of {} muscles", c.muscles.len());
    }
    let mut best = (f64::INFINITY, f64::INFINITY);
    for r in 0..rounds {
        let third = args.iter().any(|a| a == "--with-third-order");
        let (alone, stats, end) = integrate(&c, &ex, tol, third, rigid);
        let framed = (!args.iter().any(|a| a == "--no-frames")).then(|| {
            let t0 = Instant::now();
            let mut run = ForwardRun::new(&c, ex.clone(), adaptive(tol)).expect("it starts");
            let _ = outputs(&mut run, 0.01);
            t0.elapsed().as_secs_f64()
        });
        // the fixed 4 ms step of Chadwick et al. (2014) over the same motion, no frames
        let t0 = Instant::now();
        let mut fixed = ForwardRun::new(&c, ex.clone(), fixed_step(0.004)).expect("it starts");
        while fixed.state().t < DURATION - 1e-9 {
            fixed.step_once().expect("a step");
        }
        let fixed = t0.elapsed().as_secs_f64();
        let frames =
            framed.map_or(String::new(), |f| format!(", with 10 ms frames {:.1} ms ({:.1}x)", f * 1e3, DURATION / f));
        println!(
            "round {r}: integration {:.1} ms ({:.1}x real time){frames}, fixed 4 ms step {:.1} ms ({:.1}x); {} steps, {} rejected, {} evaluations ({} with the whole Jacobian)",
            alone * 1e3,
            DURATION / alone,
            fixed * 1e3,
            DURATION / fixed,
            stats.accepted,
            stats.rejected,
            stats.evaluations,
            stats.jacobians
        );
        if args.iter().any(|a| a == "--end-state") {
            let values: Vec<String> = end.iter().map(|v| format!("{v:e}")).collect();
            println!("end state: hash of its bits {:016x}; {}", bits_hash(&end), values.join(" "));
        }
        let framed = framed.unwrap_or(f64::INFINITY);
        best = (best.0.min(alone), best.1.min(framed));
    }
    println!(
        "real time: {:.1}x integration alone, {:.1}x with 10 ms frames (fastest of {rounds})",
        DURATION / best.0,
        DURATION / best.1
    );
    if args.iter().any(|a| a == "--accuracy") {
        let every = 0.02;
        let run = |o: ForwardOptions<'_>| outputs(&mut ForwardRun::new(&c, ex.clone(), o).expect("it starts"), every);
        // Richardson's extrapolation of the fixed step at 0.5 and 0.25 ms
        let reference = |r: Option<f64>| -> Outputs {
            let (fine, finer) = (
                run(ForwardOptions::fixed(0.0005).with_rigid_tendons(r)),
                run(ForwardOptions::fixed(0.00025).with_rigid_tendons(r)),
            );
            let extrapolate = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| 2.0 * y - x).collect::<Vec<f64>>();
            fine.iter().zip(&finer).map(|(a, b)| (extrapolate(&a.0, &b.0), extrapolate(&a.1, &b.1))).collect()
        };
        let own = reference(rigid);
        let runs = [("fixed 4 ms", run(fixed_step(0.004))), ("adaptive", run(adaptive(tol)))];
        for (name, o) in &runs {
            let (rms, force) = differences(o, &own);
            println!("accuracy, {name}: RMS joint-angle error {rms:.4}°, largest force error {force:.2} N");
        }
        if rigid.is_some() {
            let elastic = reference(None);
            for (name, o) in &runs {
                let (rms, force) = differences(o, &elastic);
                println!(
                    "against the elastic model's reference, {name}: RMS joint-angle difference {rms:.4}°, largest force difference {force:.2} N"
                );
            }
            let (rms, force) = differences(&own, &elastic);
            println!("the two references: RMS joint-angle difference {rms:.4}°, largest force difference {force:.2} N");
        }
    }
}
