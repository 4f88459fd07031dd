//! Load sharing as a model file states it (`[load_sharing]`), through the facade's run, against
//! closed forms: `models/mechanisms/elbow-muscles.toml`, a planar elbow whose one equilibrium
//! equation `Σ r_i F_i = W` makes every criterion solvable by hand.

use std::path::PathBuf;

use mollier::{Compiled, LoadSharingSetup};
use mollier_optim::{Criterion, DEFAULT_MAX_STRESS_SLACK, FrameResult, LoadSharing, RunOptions};

const G: f64 = 9.81;
/// Geometry of elbow-muscles.toml in metres, the elbow at the origin: muscle origins on the
/// humerus (fixed), insertions on the forearm at zero flexion, PCSA (m²), optimal lengths (m).
const ORIGINS: [[f64; 2]; 4] = [[0.030, 0.280], [0.005, 0.120], [0.012, 0.070], [-0.020, 0.220]];
const INSERTIONS: [[f64; 2]; 4] = [[0.045, 0.010], [0.030, 0.006], [0.240, 0.008], [-0.025, 0.004]];
const PCSA: [f64; 4] = [4.6e-4, 7.0e-4, 1.5e-4, 15.0e-4];
const OPTIMAL: [f64; 4] = [0.280, 0.120, 0.250, 0.210];
const MASS: f64 = 1.5;
const COM: f64 = 0.150;
const HAND: f64 = 0.300;
const CABLE: f64 = -20.0;
const HALF_ANGLE: f64 = 25.0 * std::f64::consts::PI / 180.0;

fn mechanism(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms").join(name)
}

fn turned(p: [f64; 2], phi: f64) -> [f64; 2] {
    [p[0] * phi.cos() - p[1] * phi.sin(), p[0] * phi.sin() + p[1] * phi.cos()]
}

/// The posture at flexion φ: each muscle's unit vector from insertion to origin, length and
/// moment arm about +z (m), and the moment `W` (N m) the muscles must supply.
struct Posture {
    unit: [[f64; 2]; 4],
    length: [f64; 4],
    arm: [f64; 4],
    w: f64,
}

fn posture(phi: f64) -> Posture {
    let mut p = Posture { unit: [[0.0; 2]; 4], length: [0.0; 4], arm: [0.0; 4], w: 0.0 };
    for i in 0..4 {
        let ins = turned(INSERTIONS[i], phi);
        let d = [ORIGINS[i][0] - ins[0], ORIGINS[i][1] - ins[1]];
        let l = d[0].hypot(d[1]);
        p.unit[i] = [d[0] / l, d[1] / l];
        p.length[i] = l;
        p.arm[i] = ins[0] * p.unit[i][1] - ins[1] * p.unit[i][0];
    }
    // gravity at the centre of mass and the cable (along x) at the hand, about the elbow
    let external = -MASS * G * COM * phi.cos() - HAND * phi.sin() * CABLE;
    p.w = -external;
    p
}

/// Maximal forces (N): PCSA × 100 N/cm² × the Gaussian force-length factor (width 0.56).
fn fmax(p: &Posture) -> [f64; 4] {
    std::array::from_fn(|i| PCSA[i] * 1e6 * (-((p.length[i] - OPTIMAL[i]) / (0.56 * OPTIMAL[i])).powi(2)).exp())
}

/// The forces `F_i = clamp(μ g_i, 0, Fmax_i)` whose moment is `W`, `μ` found by bisection (the
/// moment grows with `μ`): with `g_i = c_i r_i` the minimiser of `Σ F_i² / c_i` subject to
/// `Σ r_i F_i = W`, `0 ≤ F ≤ Fmax` (KKT), with `g_i = A_i` for the muscles that help the least
/// maximal stress (signed as their moment arms).
fn saturating(p: &Posture, g: [f64; 4]) -> [f64; 4] {
    saturating_under(p, g, fmax(p))
}

/// [`saturating`] with upper bounds `cap` (N) in place of the maximal forces.
fn saturating_under(p: &Posture, g: [f64; 4], cap: [f64; 4]) -> [f64; 4] {
    let forces = |mu: f64| -> [f64; 4] { std::array::from_fn(|i| (mu * g[i]).clamp(0.0, cap[i])) };
    let moment = |f: [f64; 4]| (0..4).map(|i| p.arm[i] * f[i]).sum::<f64>();
    let sign = p.w.signum();
    let (mut lo, mut hi) = (0.0, 1.0);
    while moment(forces(sign * hi)).abs() < p.w.abs() {
        hi *= 2.0;
        assert!(hi < 1e30, "W = {} cannot be reached", p.w);
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if moment(forces(sign * mid)).abs() < p.w.abs() { lo = mid } else { hi = mid }
    }
    forces(sign * 0.5 * (lo + hi))
}

fn closed_form(criterion: &Criterion, p: &Posture) -> [f64; 4] {
    // only the muscles whose moment has the sign of W work
    let helps = |i: usize| p.arm[i] * p.w > 0.0;
    let weights = |c: [f64; 4]| std::array::from_fn(|i| if helps(i) { c[i] * p.arm[i] } else { 0.0 });
    match criterion {
        Criterion::Forces => saturating(p, weights([1.0; 4])),
        Criterion::Stresses => saturating(p, weights(PCSA.map(|a| a * a))),
        Criterion::Activations => saturating(p, weights(fmax(p).map(|f| f * f))),
        // stage 1: every muscle that helps at one stress t* (or its maximal force); stage 2: the
        // least Σ (F/PCSA)² (criterion (b)'s KKT form) with every stress at most t* (1 + δ)
        Criterion::MaxStress => {
            let strict =
                saturating(p, std::array::from_fn(|i| if helps(i) { PCSA[i] * p.arm[i].signum() } else { 0.0 }));
            let t = (0..4).map(|i| strict[i] / PCSA[i]).fold(0.0, f64::max);
            let cap = std::array::from_fn(|i| fmax(p)[i].min(t * (1.0 + DEFAULT_MAX_STRESS_SLACK) * PCSA[i]));
            saturating_under(p, weights(PCSA.map(|a| a * a)), cap)
        }
        // (cb), Crowninshield & Brand: 3 F_i²/A_i³ = λ r_i, F_i = A_i^{3/2} √(λ r_i/3)
        Criterion::CubedStresses => saturating(
            p,
            std::array::from_fn(|i| {
                if helps(i) { PCSA[i].powf(1.5) * p.arm[i].abs().sqrt() * p.arm[i].signum() } else { 0.0 }
            }),
        ),
        Criterion::Weighted(_) => unreachable!("not tested here"),
    }
}

/// The force of the forearm on the humerus in the cone frame (x = global y into the humerus,
/// y = global z, z = global x): the muscles' pull, the weight and the cable.
fn joint_force(p: &Posture, forces: &[f64]) -> [f64; 3] {
    let fx: f64 = (0..4).map(|i| forces[i] * p.unit[i][0]).sum::<f64>() + CABLE;
    let fy: f64 = (0..4).map(|i| forces[i] * p.unit[i][1]).sum::<f64>() - MASS * G;
    [fy, 0.0, fx]
}

fn load() -> Compiled {
    let registry = mollier::registry();
    mollier::load(&mechanism("elbow-muscles.toml"), &registry).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn run(c: &Compiled, setup: &LoadSharingSetup, criterion: Criterion, cone: bool) -> (Vec<f64>, Vec<FrameResult>) {
    let motion = mollier::read_motion(&mechanism("elbow-muscles-motion.csv"), &c.inputs)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let frames = mollier::load_sharing::frames(&motion, None);
    let sharing = LoadSharing::new(&c.model, setup.study(criterion, cone)).expect("a valid study");
    let results = sharing.run(&frames, RunOptions::default());
    (motion.q.iter().map(|q| q[0]).collect(), results)
}

#[test]
fn the_section_compiles_to_si_with_names_resolved() {
    let c = load();
    let s = c.load_sharing.as_ref().expect("a [load_sharing] section");
    assert_eq!(s.muscle_names(), ["biceps", "brachialis", "brachioradialis", "triceps"]);
    for (m, i) in s.muscles.iter().zip(0..) {
        assert!((m.pcsa - PCSA[i]).abs() < 1e-18, "{}: {}", m.name, m.pcsa);
        assert!((m.optimal_length - OPTIMAL[i]).abs() < 1e-15, "{}", m.name);
        let l0 = posture(0.0).length[i];
        assert!((m.reference_length - l0).abs() < 1e-14, "{}: {} vs {l0}", m.name, m.reference_length);
    }
    assert_eq!(s.specific_tension, 1e6);
    let cone = s.cone.as_ref().expect("a joint cone");
    assert_eq!(cone.half_angles, [HALF_ANGLE; 2]);
    // into the socket along +y: the cone's axes are the body's (y, z, x)
    assert_eq!(cone.rotation, [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]);
}

#[test]
fn every_criterion_shares_the_moment_as_its_closed_form_says() {
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let all = [
        Criterion::Forces,
        Criterion::Stresses,
        Criterion::Activations,
        Criterion::MaxStress,
        Criterion::CubedStresses,
    ];
    for criterion in all {
        let (phis, results) = run(&c, setup, criterion.clone(), false);
        let (mut extensor, mut saturated, mut slack_acts) = (false, false, false);
        for (phi, r) in phis.iter().zip(&results) {
            let p = posture(*phi);
            assert!(r.status.is_success(), "{} at {phi}: {}", criterion.letter(), r.status);
            let want = closed_form(&criterion, &p);
            let scale = want.iter().fold(1.0f64, |m, f| m.max(f.abs()));
            // (cb) too: clarabel's answer is polished to its optimality conditions (it agrees
            // to 1e-14 here; unpolished, to parts in 10⁻⁶ of the largest force)
            let tol = 1e-6;
            for i in 0..4 {
                assert!(
                    (r.forces[i] - want[i]).abs() <= tol * scale,
                    "criterion {} at φ = {phi}: muscle {i} {} N, closed form {} N",
                    criterion.letter(),
                    r.forces[i],
                    want[i]
                );
                assert!((r.lengths[i] - p.length[i]).abs() < 1e-12);
            }
            extensor |= want[3] > 0.0 && want[0] == 0.0;
            if criterion == Criterion::MaxStress {
                // the slack changes the strict optimum (one stress for every helper)
                let helps = |i: usize| p.arm[i] * p.w > 0.0;
                let strict =
                    saturating(&p, std::array::from_fn(|i| if helps(i) { PCSA[i] * p.arm[i].signum() } else { 0.0 }));
                slack_acts |= (0..4).any(|i| (strict[i] - want[i]).abs() > 1e-3 * scale);
            }
            saturated |= (0..4).any(|i| want[i] > 0.0 && want[i] == fmax(&p)[i]);
            let j = joint_force(&p, &r.forces);
            let got = r.cone_force.expect("the cone force is reported");
            for k in 0..3 {
                assert!((got[k] - j[k]).abs() <= tol * scale, "joint force at φ = {phi}: {got:?} vs {j:?}");
            }
        }
        assert!(extensor, "the triceps takes over in the motion");
        assert_eq!(slack_acts, criterion == Criterion::MaxStress, "(d)'s slack moves the forces");
        if criterion == Criterion::Forces {
            assert!(saturated, "(a) loads the brachioradialis to its maximal force when the arm is nearly straight");
        }
    }
}

#[test]
fn the_joint_cone_binds_where_the_free_force_leaves_it() {
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let (phis, free) = run(&c, setup, Criterion::Stresses, false);
    let (_, held) = run(&c, setup, Criterion::Stresses, true);
    let mut bound = 0;
    for ((phi, f), h) in phis.iter().zip(&free).zip(&held) {
        assert!(h.status.is_success(), "at {phi}: {}", h.status);
        let index = h.stability_index.expect("an index");
        assert!(index <= 1e-6, "at φ = {phi} the imposed cone is left: index {index}");
        let free_index = f.stability_index.expect("an index");
        let same = f.forces.iter().zip(&h.forces).all(|(a, b)| (a - b).abs() <= 1e-6 * a.abs().max(1.0));
        if free_index <= 0.0 {
            assert!(same, "at φ = {phi} the cone does not bind, yet the forces change");
        } else {
            // a binding cone: on its rim (the SOC meets the index's ellipse on the cone's axes,
            // and this force lies in the x-z plane) and at a higher cost
            bound += 1;
            assert!(!same && index.abs() < 1e-5, "at φ = {phi}: index {index}");
            assert!(h.objective.expect("cost") > f.objective.expect("cost"));
            let j = joint_force(&posture(*phi), &h.forces);
            assert!((j[2].atan2(j[0]).abs() - HALF_ANGLE).abs() < 1e-6, "at φ = {phi}: {j:?}");
        }
    }
    assert!(bound >= 5, "the cone binds at {bound} frames");
}

#[test]
fn parallel_runs_equal_sequential_ones() {
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let motion = mollier::read_motion(&mechanism("elbow-muscles-motion.csv"), &c.inputs)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let frames = mollier::load_sharing::frames(&motion, None);
    let sharing = LoadSharing::new(&c.model, setup.study(Criterion::Activations, true)).expect("a valid study");
    let go = |parallel, chunk| sharing.run(&frames, RunOptions { parallel, chunk, follow: true });
    let forces = |r: &[FrameResult]| r.iter().flat_map(|f| f.forces.clone()).collect::<Vec<f64>>();
    // the same chunks on threads or not: the same numbers, to the bit
    assert_eq!(forces(&go(true, 4)), forces(&go(false, 4)));
    // chunks of one frame: many windows of the streaming run; on 1 and on 3 threads (other windows)
    let one = forces(&go(false, 1));
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
        assert_eq!(pool.install(|| forces(&go(true, 1))), one, "{threads} threads");
    }
    // streamed in order, frame by frame, to the same numbers
    let mut streamed = Vec::new();
    let run = sharing.run_streaming(
        frames.len(),
        &|k| frames[k].clone(),
        RunOptions { parallel: true, chunk: 1, follow: true },
        &|_| {},
        |k, r| {
            assert_eq!(k, streamed.len() / 4, "in order");
            streamed.extend(r.forces);
            Ok::<(), ()>(())
        },
    );
    assert_eq!((run, streamed), (Ok(()), one));
    // other chunks start Newton-Raphson elsewhere: the same solution to the solver's tolerance
    let (a, b) = (forces(&go(true, 4)), forces(&go(false, 1000)));
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-8 * x.abs().max(1.0)), "{a:?}\n{b:?}");
}

/// The elbow with a reserve on its one input, weight `weight`, and the muscles `keep`.
fn with_reserve(setup: &LoadSharingSetup, weight: f64, keep: &[&str]) -> LoadSharingSetup {
    let mut s = setup.clone();
    s.muscles.retain(|m| keep.contains(&m.name.as_str()));
    s.reserves = vec![mollier::load_sharing::ReserveInfo { name: "elbow.rotation".into(), input: 0, weight }];
    s
}

/// The reserve's cost scale of a criterion: the most expensive muscle at full force, `max c_i`.
fn reserve_unit(criterion: &Criterion, cap: &[f64; 4], kept: &[usize]) -> f64 {
    let c = |i: usize| match criterion {
        Criterion::Forces => cap[i] * cap[i],
        Criterion::Stresses => (cap[i] / PCSA[i]).powi(2),
        Criterion::Activations => 1.0,
        _ => unreachable!("not tested here"),
    };
    kept.iter().map(|&i| c(i)).fold(0.0, f64::max)
}

#[test]
fn a_reserve_costs_its_weight_times_the_dearest_muscle_for_every_criterion() {
    // KKT of Σ c_i (F_i/Fmax_i)² + w C (r/ρ)² subject to Σ r_i F_i + r = W, 0 <= F <= Fmax:
    // F_i = clamp(λ r_i Fmax_i²/(2 c_i)), r = λ ρ²/(2 w C), with ρ = max(max_i |r_i| Fmax_i, |W|)
    // the input's scale and C = max_i c_i; λ by bisection on the moment.
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let all = ["biceps", "brachialis", "brachioradialis", "triceps"];
    let weight = mollier_optim::RESERVE_WEIGHT;
    let s = with_reserve(setup, weight, &all);
    let mut largest = Vec::new();
    for criterion in [Criterion::Forces, Criterion::Stresses, Criterion::Activations] {
        let (phis, results) = run(&c, &s, criterion.clone(), false);
        let mut top = 0.0f64;
        for (phi, r) in phis.iter().zip(&results) {
            assert!(r.status.is_success(), "{} at {phi}: {}", criterion.letter(), r.status);
            let p = posture(*phi);
            let cap = fmax(&p);
            let unit = reserve_unit(&criterion, &cap, &[0, 1, 2, 3]);
            let rho = (0..4).map(|i| (p.arm[i] * cap[i]).abs()).fold(p.w.abs(), f64::max);
            // F_i = clamp(μ r_i Fmax_i²/c_i, 0, Fmax_i), r = μ ρ²/(w C)
            let g: [f64; 4] =
                std::array::from_fn(|i| p.arm[i] * cap[i] * cap[i] / reserve_unit(&criterion, &cap, &[i]));
            let g_r = rho * rho / (weight * unit);
            let force = |l: f64, i: usize| (l * g[i]).clamp(0.0, cap[i]);
            let moment = |l: f64| (0..4).map(|i| p.arm[i] * force(l, i)).sum::<f64>() + l * g_r;
            // the moment grows with μ
            let (mut lo, mut hi) = (-1.0, 1.0);
            while moment(lo) > p.w || moment(hi) < p.w {
                (lo, hi) = (2.0 * lo, 2.0 * hi);
                assert!(hi < 1e40, "no bracket");
            }
            for _ in 0..400 {
                let mid = 0.5 * (lo + hi);
                if moment(mid) < p.w { lo = mid } else { hi = mid }
            }
            let l = 0.5 * (lo + hi);
            let want: Vec<f64> = (0..4).map(|i| force(l, i)).collect();
            let want_r = l * g_r;
            let scale = want.iter().fold(1.0f64, |m, f| m.max(f.abs()));
            for i in 0..4 {
                assert!(
                    (r.forces[i] - want[i]).abs() <= 1e-6 * scale,
                    "{} at φ = {phi}: muscle {i} {} N vs {} N",
                    criterion.letter(),
                    r.forces[i],
                    want[i]
                );
            }
            assert!(
                (r.reserves[0] - want_r).abs() <= 1e-6 * rho,
                "{} at {phi}: {} vs {want_r}",
                criterion.letter(),
                r.reserves[0]
            );
            top = top.max(r.reserve_shares[0]);
        }
        // expensive: far below the warning's 1 %
        assert!(top < 0.1 * mollier_optim::RESERVE_WARNING_SHARE, "{}: share {top}", criterion.letter());
        largest.push(top);
    }
    // one weight, one order of magnitude for every criterion (in the criteria's own units the
    // same weight would differ by (Fmax/PCSA)² ~ 1e12 between (a) and (b))
    let (lo, hi) = largest.iter().fold((f64::MAX, 0.0f64), |(a, b), x| (a.min(*x), b.max(*x)));
    println!("largest reserve shares (a, b, c): {largest:?}");
    assert!(lo > 0.0 && hi < 10.0 * lo, "{largest:?}");
}

#[test]
fn without_the_triceps_the_reserve_extends_the_elbow_and_says_so() {
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let s = with_reserve(setup, mollier_optim::RESERVE_WEIGHT, &["biceps", "brachialis", "brachioradialis"]);
    for criterion in [Criterion::Forces, Criterion::Stresses, Criterion::Activations, Criterion::MaxStress] {
        let (phis, results) = run(&c, &s, criterion.clone(), false);
        let mut needed = 0;
        for (phi, r) in phis.iter().zip(&results) {
            assert!(r.status.is_success(), "{} at {phi}: {}", criterion.letter(), r.status);
            let w = posture(*phi).w;
            if w < 0.0 {
                // only the triceps extends: the reserve makes the whole moment
                needed += 1;
                assert!(
                    (r.reserves[0] - w).abs() < 1e-6 * w.abs(),
                    "{} at {phi}: {} vs {w}",
                    criterion.letter(),
                    r.reserves[0]
                );
                assert!(r.reserve_shares[0] > 1.0 - 1e-6, "{} at {phi}: {}", criterion.letter(), r.reserve_shares[0]);
            } else {
                assert!(
                    r.reserve_shares[0] < mollier_optim::RESERVE_WARNING_SHARE,
                    "{} at {phi}: share {}",
                    criterion.letter(),
                    r.reserve_shares[0]
                );
            }
        }
        assert!(needed >= 5, "{}: {needed} frames need the reserve", criterion.letter());
    }
}

#[test]
fn maximum_isometric_moments_of_the_elbow_are_its_closed_form_without_the_cone_and_below_it_with() {
    // the device holds the elbow: flexion = Σ_{r_i > 0} r_i Fmax_i(l) − W, extension =
    // Σ_{r_i < 0} |r_i| Fmax_i(l) + W, W the moment the load asks of the muscles
    let c = load();
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let motion = mollier::read_motion(&mechanism("elbow-muscles-motion.csv"), &c.inputs)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let direction =
        || vec![mollier_optim::Direction { input: 0, positive: "flexion".into(), negative: "extension".into() }];
    let run = |cone: bool| {
        let mm =
            mollier_optim::MaxMoment::new(&c.model, setup.study(Criterion::Stresses, cone), direction(), &[]).unwrap();
        let mut ws = mm.workspace();
        let mut data = mollier_core::Data::new(&c.model);
        motion.q.iter().map(|q| mm.posture(&mut ws, &mut data, q, &[]).remove(0)).collect::<Vec<_>>()
    };
    let (free, held) = (run(false), run(true));
    let mut cone_lowers = false;
    for (k, q) in motion.q.iter().enumerate() {
        let p = posture(q[0]);
        let cap = fmax(&p);
        let flexion: f64 = (0..4).filter(|&i| p.arm[i] > 0.0).map(|i| p.arm[i] * cap[i]).sum::<f64>() - p.w;
        let extension: f64 = (0..4).filter(|&i| p.arm[i] < 0.0).map(|i| -p.arm[i] * cap[i]).sum::<f64>() + p.w;
        let [f, e] = &free[k];
        assert!(f.frame.status.is_success() && e.frame.status.is_success(), "{} {}", f.frame.status, e.frame.status);
        assert!(
            (f.moment - flexion).abs() < 1e-7 * flexion.abs().max(1.0),
            "φ = {}: flexion {} vs {flexion}",
            q[0],
            f.moment
        );
        assert!(
            (e.moment - extension).abs() < 1e-7 * extension.abs().max(1.0),
            "φ = {}: extension {} vs {extension}",
            q[0],
            e.moment
        );
        for s in 0..2 {
            let m = &held[k][s];
            assert!(m.frame.status.is_success(), "{}", m.frame.status);
            // a constraint more never raises a maximum; the joint force stays in the cone
            assert!(
                m.moment <= free[k][s].moment + 1e-9 * free[k][s].moment.abs(),
                "{} > {}",
                m.moment,
                free[k][s].moment
            );
            assert!(m.frame.stability_index.unwrap() <= 1e-6);
            cone_lowers |= m.moment < free[k][s].moment - 1e-3;
        }
    }
    assert!(cone_lowers, "the 25° cone limits the elbow's maximum somewhere");
}

#[test]
fn a_cone_may_name_the_joint_by_a_bodys_origin() {
    // the forearm's origin is the elbow: a cone naming it (the body, or a point of the forearm
    // at its origin) takes its force from the humerus's beam at the elbow, as the file that
    // names `humerus.elbow` does
    let text = std::fs::read_to_string(mechanism("elbow-muscles.toml")).unwrap();
    let reference = load();
    let want = reference.load_sharing.as_ref().and_then(|s| s.cone.clone()).unwrap();
    let (_, expected) = run(&reference, reference.load_sharing.as_ref().unwrap(), Criterion::Stresses, true);
    let dir = std::env::temp_dir().join(format!("mollier-cone-origin-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in ["forearm.head", "forearm"] {
        let t = text
            .replace(r#"joint = "humerus.elbow""#, &format!("joint = {name:?}"))
            .replace(r#"elements = ["humerus.elbow"]"#, &format!("elements = [{name:?}]"))
            .replace("points = { biceps_insertion", "points = { head = [0, 0, 0], biceps_insertion");
        let file = dir.join("elbow.toml");
        std::fs::write(&file, t).unwrap();
        let c = mollier::load(&file, &mollier::registry()).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
        let cone = c.load_sharing.as_ref().and_then(|s| s.cone.clone()).unwrap();
        assert_eq!((cone.node, &cone.elements), (want.node, &want.elements), "{name}");
        let (_, got) = run(&c, c.load_sharing.as_ref().unwrap(), Criterion::Stresses, true);
        for (a, b) in got.iter().zip(&expected) {
            assert_eq!(a.cone_force, b.cone_force, "{name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
