//! The shoulder's forward flexion (1.3 s, `models/shoulder/flexion-excitations.csv`) integrated
//! with error control, timed whole: the real-time factor to set beside MuJoCo's MyoArm
//! (`tools/peer_mujoco_myoarm.py --mollier`, which runs this in alternation with MuJoCo).
//!
//! ```sh
//! cargo bench -p mollier --bench forward_realtime -- [--rounds N] [--rtol R] [--jacobian-every K]
//!     [--whole-jacobian] [--max-step H] [--with-third-order] [--gustafsson]
//!     [--ros23 | --ros34pw2 | --euler | --bdf2] [--accuracy] [--no-frames] [--no-breaks]
//!     [--atol-activation A] [--rigid-tendons R] [--end-state] [--modes T[,T...]] [--limits]
//! ```
//! Each round times the integration alone (`Adaptive::step` to 1.3 s, one thread) and the same
//! run through `ForwardRun` with a frame every 10 ms (what `mollier simulate` computes before it
//! writes); it prints one `round:` line each and a `real time:` line with the fastest round.
//! `--accuracy` also compares the run's joint angles and muscle forces every 20 ms with
//! Richardson's extrapolation of the fixed step at 0.5 and 0.25 ms, and gives the fixed 4 ms
//! step's errors beside them (the figures of `forward_convergence`). `--gustafsson`:
//! Gustafsson's step-size controller instead of the elementary one (the default); `--ros23`,
//! `--ros34pw2`, `--euler`, `--bdf2`: the method (`Tolerances::method`);
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
//! `--modes` and `--limits` run the integration once more, untimed, and look at it: `--modes` at
//! the first accepted state at or after each time `T` (s) gives the eigenvalues of the explicit
//! form's state matrix `J = ∂F/∂x` (`Linearization::state_matrix`, from a whole linearization at
//! the consistent rate) counted in bands of `|λ|`, the fastest underdamped modes with their
//! dominant states (the eigenvector's components over each state's tolerance scale, the error
//! norm's), the kinds of state with the largest scaled component of the modes above 300 s⁻¹, and
//! per band the kinds that own its modes (the largest participation factor); `--limits` tallies
//! the state with the largest scaled error of every attempt (`Adaptive::limiting_states`) by
//! kind, the fibre states by their tendon at the step's start (slack: `|∂F/∂s|` below 100 N/m),
//! for the accepted and the rejected attempts, with the accepted steps' median length per kind
//! and how many of them saw a tendon turn slack or taut (the limiting fibre's own, for a fibre),
//! the limiting fibres by their `|∂F/∂s|`, and the states that limit most often. Both check that
//! looking leaves the integration's bits alone.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use faer::linalg::solvers::DenseSolveCore;
use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun, Tolerances};
use mollier_sim::{Adaptive, Contraction, Excitation, Musculoskeletal, StateKind, Workspace};

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

/// What looks at the integration after each accepted step: the system, the integrator, the
/// muscles' rows at the step's start, the excitations.
type Probe<'p> = &'p mut dyn FnMut(&Musculoskeletal<'_>, &Adaptive, &[Contraction], Excitation<'_>);

/// The integration alone to the end: seconds and the step counts; `probe` after each step.
fn integrate(
    c: &Compiled,
    ex: &Excitations,
    tol: Tolerances,
    third: bool,
    rigid: Option<f64>,
    mut probe: Option<Probe<'_>>,
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
        let start = probe.is_some().then(|| a.linearization().contraction.clone());
        a.step(&sys, &mut ws, &u).expect("a step");
        if let (Some(p), Some(start)) = (probe.as_mut(), start) {
            p(&sys, &a, &start, &u);
        }
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
    if args.iter().any(|a| a == "--bdf2") {
        tol.method = mollier_sim::Method::Bdf2;
    }
    if args.iter().any(|a| a == "--euler") {
        tol.method = mollier_sim::Method::Euler;
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
    let third = args.iter().any(|a| a == "--with-third-order");
    for r in 0..rounds {
        let (alone, stats, end) = integrate(&c, &ex, tol, third, rigid, None);
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
    let modes_at: Vec<f64> = arg::<String>(&args, "--modes").map_or(Vec::new(), |v| {
        v.split(',').map(|t| t.parse().unwrap_or_else(|_| panic!("--modes: `{t}` is not a time"))).collect()
    });
    let limits = args.iter().any(|a| a == "--limits");
    if limits || !modes_at.is_empty() {
        diagnose(&c, &ex, tol, third, rigid, &modes_at, limits);
    }
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

/// `|∂F/∂s|` (N/m) below which a fibre's tendon counts as slack.
const SLACK: f64 = 100.0;

/// The kind of state `i` for the tallies, a fibre state's by its muscle's row `c` (`rows`).
fn kind(sys: &Musculoskeletal<'_>, rows: &[Contraction], i: usize) -> &'static str {
    let l = sys.layout();
    if l.kind(i) != StateKind::Contraction {
        return l.kind(i).name();
    }
    let c = &rows[i - l.s()];
    if c.d_sdot == 0.0 {
        "fibres, rigid tendon"
    } else if c.force_d_s.abs() < SLACK {
        "fibres, slack tendon"
    } else {
        "fibres, taut tendon"
    }
}

/// The integration once more with `--modes` at `at` (s) and the `--limits` tally; it checks
/// that looking does not move the integration (the end state's bits).
fn diagnose(
    c: &Compiled,
    ex: &Excitations,
    tol: Tolerances,
    third: bool,
    rigid: Option<f64>,
    at: &[f64],
    limits: bool,
) {
    let mut at: Vec<f64> = at.to_vec();
    at.sort_by(f64::total_cmp);
    at.reverse();
    // per kind and per state: (accepted, rejected) attempts it limited
    let mut by_kind: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut by_state: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    // the limiting fibres' |∂F/∂s| (N/m) by decade from below 1 to 1e6 and above
    let mut stiffness = [(0usize, 0usize); 8];
    let mut failed = 0;
    // the accepted steps' lengths (s) by the kind that limited them
    let (mut steps, mut t0): (BTreeMap<&'static str, Vec<f64>>, f64) = (BTreeMap::new(), 0.0);
    // of those, by the same kind: the steps in which an elastic tendon turned slack or taut, and
    // of the fibre-limited ones those in which the limiting fibre's own did
    let mut switched: BTreeMap<&'static str, (usize, usize)> = BTreeMap::new();
    let mut exact: Option<Workspace> = None;
    let mut probe = |sys: &Musculoskeletal<'_>, a: &Adaptive, start: &[Contraction], u: Excitation<'_>| {
        let attempts = a.limiting_states();
        for (j, w) in attempts.iter().enumerate() {
            let Some(i) = *w else {
                failed += 1;
                continue;
            };
            let accepted = j + 1 == attempts.len();
            let l = sys.layout();
            if accepted {
                steps.entry(kind(sys, start, i)).or_default().push(a.state().t - t0);
                let end = &a.linearization().contraction;
                let turned = |k: usize| {
                    let slack = |c: &Contraction| c.force_d_s.abs() < SLACK;
                    end[k].d_sdot != 0.0 && slack(&start[k]) != slack(&end[k])
                };
                let e = switched.entry(kind(sys, start, i)).or_default();
                e.0 += usize::from((0..l.m).any(turned));
                e.1 += usize::from(l.kind(i) == StateKind::Contraction && turned(i - l.s()));
            }
            let decade = (l.kind(i) == StateKind::Contraction).then(|| {
                let d = start[i - l.s()].force_d_s.abs().log10().floor() + 1.0;
                &mut stiffness[d.clamp(0.0, 7.0) as usize]
            });
            for e in [by_kind.entry(kind(sys, start, i)).or_default(), by_state.entry(sys.state_name(i)).or_default()]
                .into_iter()
                .chain(decade)
            {
                if accepted { e.0 += 1 } else { e.1 += 1 }
            }
        }
        t0 = a.state().t;
        while at.last().is_some_and(|t| *t <= a.state().t) {
            at.pop();
            let ws = exact.get_or_insert_with(|| sys.workspace());
            modes(sys, ws, a, u, &tol);
        }
    };
    let (_, stats, end) = integrate(c, ex, tol, third, rigid, Some(&mut probe));
    let (_, _, plain) = integrate(c, ex, tol, third, rigid, None);
    println!(
        "looked at: {} steps, {} rejected, {} evaluations; the end state {} the unobserved run's",
        stats.accepted,
        stats.rejected,
        stats.evaluations,
        if bits_hash(&end) == bits_hash(&plain) { "bit for bit" } else { "DIFFERS from" }
    );
    if !limits {
        return;
    }
    println!("limiting state of each attempt, by kind (accepted / rejected); {failed} attempts with a failed stage:");
    for (k, (acc, rej)) in &by_kind {
        let h = steps.get_mut(k).map_or(f64::NAN, |h| {
            h.sort_by(f64::total_cmp);
            h[h.len() / 2]
        });
        let (any, own) = switched.get(k).copied().unwrap_or_default();
        println!(
            "  {k}: {acc} / {rej}, the accepted steps' median {:.2} ms; {any} accepted with a tendon turning slack or taut in the step ({own} the limiting fibre's own)",
            h * 1e3
        );
    }
    let decades: Vec<String> = stiffness
        .iter()
        .enumerate()
        .map(|(d, (acc, rej))| {
            let range = match d {
                0 => "< 1".to_string(),
                7 => "> 1e6".to_string(),
                _ => format!("1e{}-1e{d}", d - 1),
            };
            format!("{range}: {acc} / {rej}")
        })
        .collect();
    println!("  the limiting fibres by their |∂F/∂s| (N/m): {}", decades.join(", "));
    let mut states: Vec<_> = by_state.into_iter().collect();
    states.sort_by_key(|(_, (acc, rej))| std::cmp::Reverse(acc + rej));
    let top: Vec<String> = states.iter().take(10).map(|(s, (acc, rej))| format!("{s} {acc} / {rej}")).collect();
    println!("  most often: {}", top.join(", "));
}

/// The modes at `a`'s state: `J` from a whole linearization (`ws` exact) at the consistent rate,
/// its eigenvalues in bands and its fastest underdamped modes with their dominant states.
fn modes(sys: &Musculoskeletal<'_>, ws: &mut Workspace, a: &Adaptive, u: Excitation<'_>, tol: &Tolerances) {
    let st = a.state();
    // twice: the second evaluation's inertia is at the consistent v̇
    let (xd, _) = sys.consistent(ws, &st.x, st.t, u, &st.xd).expect("an evaluation");
    let (_, lin) = sys.consistent(ws, &st.x, st.t, u, &xd).expect("an evaluation");
    let sm = lin.state_matrix().expect("a state matrix");
    let eigen = sm.j.eigen().expect("the eigenvalues");
    let (values, vectors) = (eigen.S().column_vector(), eigen.U());
    let l = sys.layout();
    let h = a.next_step();
    // each state's tolerance scale as the error norm weighs it (velocities over the step)
    let scale = |i: usize| {
        let (w, atol) = tol.weight(l, i, h);
        (atol + tol.rtol * (w * st.x[i]).abs()) / w
    };
    // the states of mode `c`, largest scaled component first, relative to it
    let dominant = |c: usize| -> Vec<(usize, f64)> {
        let mut w: Vec<(usize, f64)> = sm
            .states
            .iter()
            .enumerate()
            .map(|(r, &i)| (i, vectors[(r, c)].re.hypot(vectors[(r, c)].im) / scale(i)))
            .collect();
        w.sort_by(|p, q| q.1.total_cmp(&p.1));
        let top = w[0].1;
        w.into_iter().map(|(i, v)| (i, v / top)).collect()
    };
    let size = |c: usize| values[c].re.hypot(values[c].im);
    let edges = [30.0, 100.0, 300.0, 3000.0];
    let mut bands = [0usize; 5];
    for c in 0..values.nrows() {
        bands[edges.iter().filter(|e| size(c) >= **e).count()] += 1;
    }
    let rising = (0..values.nrows()).filter(|&c| values[c].re > 0.0).count();
    let largest = (0..values.nrows()).map(|c| values[c].re).fold(f64::NEG_INFINITY, f64::max);
    println!(
        "modes at t = {:.4} s (next step {:.2} ms), {} states ({} algebraic left out): |λ| < 30 s⁻¹: {}, 30-100: {}, 100-300: {}, 300-3000: {}, > 3000: {}; {rising} with Re λ > 0 (the largest Re λ {largest:.3} s⁻¹)",
        st.t,
        h * 1e3,
        sm.states.len(),
        l.len() - sm.states.len(),
        bands[0],
        bands[1],
        bands[2],
        bands[3],
        bands[4]
    );
    let mut under: Vec<usize> = (0..values.nrows()).filter(|&c| values[c].im > 0.0).collect();
    under.sort_by(|p, q| size(*q).total_cmp(&size(*p)));
    for &c in under.iter().take(5) {
        let names: Vec<String> =
            dominant(c).iter().take(3).map(|(i, w)| format!("{} {w:.2}", sys.state_name(*i))).collect();
        println!(
            "  underdamped {:.0} Hz, ζ {:.2} (|λ| {:.0} s⁻¹): {}",
            values[c].im / std::f64::consts::TAU,
            -values[c].re / size(c),
            size(c),
            names.join(", ")
        );
    }
    let mut fast: BTreeMap<&'static str, usize> = BTreeMap::new();
    for c in (0..values.nrows()).filter(|&c| size(c) >= 300.0) {
        *fast.entry(kind(sys, &lin.contraction, dominant(c)[0].0)).or_default() += 1;
    }
    let fast: Vec<String> = fast.iter().map(|(k, v)| format!("{k} {v}")).collect();
    println!("  modes above 300 s⁻¹ by their largest scaled component: {}", fast.join(", "));
    // whose modes they are, whatever the units: the state with the largest participation factor
    // |r_i l_i| (right and left eigenvectors' components; they sum to 1 over the states)
    let left = vectors.partial_piv_lu().inverse();
    let mut owners = vec![BTreeMap::<&'static str, usize>::new(); 5];
    for c in 0..values.nrows() {
        let p = |r: usize| {
            let (a, b) = (vectors[(r, c)], left[(c, r)]);
            (a.re * b.re - a.im * b.im).hypot(a.re * b.im + a.im * b.re)
        };
        let owner = (0..sm.states.len()).max_by(|x, y| p(*x).total_cmp(&p(*y))).unwrap_or(0);
        let band = edges.iter().filter(|e| size(c) >= **e).count();
        *owners[band].entry(kind(sys, &lin.contraction, sm.states[owner])).or_default() += 1;
    }
    let names = ["< 30", "30-100", "100-300", "300-3000", "> 3000"];
    for (band, o) in names.iter().zip(&owners) {
        let o: Vec<String> = o.iter().map(|(k, v)| format!("{k} {v}")).collect();
        println!("  modes of |λ| {band} s⁻¹ by the state that participates most: {}", o.join(", "));
    }
}
