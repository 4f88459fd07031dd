//! The exact Hessian with laws on modes the inputs move through the mechanism: the sprung
//! four-bar (`fixtures/sprung-four-bar.toml`: range stops and a coordinate limit on the rocker's
//! hinge, a one-sided damped spring, a soft contact, all on dependent modes) against central
//! differences of the exact gradient and Jacobian, and solved end to end with it and with IPOPT's
//! L-BFGS approximation (`fixtures/sprung-four-bar-turn.toml`).

use std::path::Path;

use mollier::compile::load;
use mollier::optimize::HessianSpec;
use mollier_ipopt::Nlp;
use mollier_ocp::{Motion, Objective, Problem, Scheme, Tracking, Transcription};
use mollier_sim::Musculoskeletal;

#[path = "fixtures/problem.rs"]
mod problem;
use problem::{model, open};

#[path = "support/motors.rs"]
mod motors;
use motors::motors;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

#[path = "support/hessian_check.rs"]
mod hessian_check;
use hessian_check::{about_rest, assert_random_hessians, random_point};

#[path = "support/ipopt.rs"]
mod ipopt;
use ipopt::ipopt_here;

#[path = "support/solve_file.rs"]
mod solve_file;
use solve_file::solve_file;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// An actuator on each input (the four-bar's crank), effort, a tracking of the first input and
/// final targets on it and on the second state.
fn problem<'s, 'm>(system: &'s Musculoskeletal<'m>, scheme: Scheme) -> Problem<'s, 'm> {
    let objective = Objective {
        actuator: 1.3,
        tracking: vec![Tracking { state: 0, weight: 2.0, reference: vec![(0.0, 0.1), (0.9, 0.4)] }],
        final_targets: vec![(0, -0.2, 4.0), (1, 0.3, 5.0)],
        ..Objective::default()
    };
    Problem { actuators: motors(system.layout().n), ..open(system, 0.9, 2, scheme, objective) }
}

/// The sprung four-bar, both schemes, at random crank angles within ±0.3 rad of rest (the
/// rocker's hinge through its stops' and its coordinate limit's transitions, the spring slack
/// and taut, the contact's point outside and inside), random rates and multipliers: the exact
/// Hessian of the Lagrangian (the laws' terms through their modes' jets, `∂²e`, `D³e(a, b, λ_v)`,
/// `D³e(a, b, v)`, and their curvatures) against central differences of the exact gradient and
/// Jacobian, relative 1e-6.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_with_laws_on_dependent_modes() {
    let c = model("crates/mollier/tests/fixtures/sprung-four-bar.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut rng = Rng(0x1a2b_5eed_4f0b_0011);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = problem(&system, scheme);
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.hessian_case(), &Ok(Motion::Chain));
        let label = format!("{scheme:?}");
        assert_random_hessians(&mut t, &mut rng, 4, &[0.0, 0.0], &[0.3, 1.0], (1e-5, 1e-6), &label);
    }
}

/// The NLP's Jacobian on the sprung four-bar at random points (rates too: the damping of the
/// rocker's hinge, a constraint element, through `D²F_e(v, e_k)`) against central differences of
/// the constraints, relative to the larger of the row's largest entry and 1: 1e-6.
#[test]
fn the_jacobian_is_exact_with_damped_laws_on_dependent_modes() {
    let c = model("crates/mollier/tests/fixtures/sprung-four-bar.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut rng = Rng(0x1a2b_5eed_4f0b_0012);
    let p = problem(&system, Scheme::Trapezoidal);
    let mut t = Transcription::new(&p).unwrap();
    let (n, m) = (t.n(), t.m());
    for _ in 0..4 {
        let z = random_point(&t, &mut rng, &[0.0, 0.0], &[0.3, 1.0]);
        let pattern = t.jacobian_structure();
        let mut values = vec![0.0; pattern.len()];
        assert!(t.jacobian(&z, &mut values));
        let mut dense = vec![0.0; n * m];
        let mut scale = vec![1.0f64; m];
        for (&(i, j), v) in pattern.iter().zip(&values) {
            dense[i * n + j] += v;
            scale[i] = scale[i].max(v.abs());
        }
        let (mut gp, mut gm, mut zp) = (vec![0.0; m], vec![0.0; m], z.clone());
        let mut worst = (0.0f64, (0, 0));
        for j in 0..n {
            let h = 1e-6 * z[j].abs().max(1.0);
            zp[j] = z[j] + h;
            assert!(t.constraints(&zp, &mut gp));
            zp[j] = z[j] - h;
            assert!(t.constraints(&zp, &mut gm));
            zp[j] = z[j];
            for i in 0..m {
                let e = ((gp[i] - gm[i]) / (2.0 * h) - dense[i * n + j]).abs() / scale[i];
                if !(e <= worst.0) {
                    worst = (e, (i, j));
                }
            }
        }
        println!("Jacobian off by {:.2e} at {:?}", worst.0, worst.1);
        assert!(worst.0 < 1e-6, "Jacobian off by {:.2e} (relative) at {:?}", worst.0, worst.1);
    }
}

fn solve(hessian: HessianSpec) -> (f64, usize, Result<Motion, String>) {
    solve_file(Path::new(&format!("{FIXTURES}/sprung-four-bar-turn.toml")), hessian, 1e-10)
}

/// The crank turned through the laws' ranges, solved with the exact Hessian (the laws' terms
/// included) and with IPOPT's L-BFGS approximation: the same optimum (relative 1e-6).
#[test]
fn the_exact_hessian_with_laws_on_dependent_modes_reaches_the_approximations_optimum() {
    if !ipopt_here("the_exact_hessian_with_laws_on_dependent_modes_reaches_the_approximations_optimum") {
        return;
    }
    let (exact, exact_iterations, case) = solve(HessianSpec::Exact);
    assert_eq!(case, Ok(Motion::Chain), "the sprung four-bar takes the fourth-order Hessian");
    let (approx, approx_iterations, case) = solve(HessianSpec::LimitedMemory);
    assert!(case.is_err(), "asked for the approximation");
    let relative = (exact - approx).abs() / approx.abs();
    println!("exact {exact_iterations} iterations, L-BFGS {approx_iterations}; objectives differ by {relative:.2e}");
    assert!(relative < 1e-6, "exact Hessian's optimum {exact}, L-BFGS's {approx}");
    // measured 33 (L-BFGS 67)
    assert!(exact_iterations < approx_iterations, "{exact_iterations} iterations, L-BFGS {approx_iterations}");
}

/// The shoulder's girdle and arm without their muscles (`models/shoulder/shoulder-forward.toml`:
/// nine hinges with DAS3's stops on SC and AC and OpenSim's coordinate limits on GH, the conoid
/// ligament that pulls but does not push, TS and AI and five points of the arm kept out of the
/// thorax by soft contacts, every law but the hinges' on a dependent mode), an actuator on each
/// rotation, at random postures about rest (±0.12 rad: stops engaged) and about `gh_z` at its
/// lower limit (−20°: the coordinate limit's transition), random rates and multipliers: the
/// exact Hessian of the Lagrangian against central differences of the exact gradient and
/// Jacobian, relative 1e-5 (the differences' own error; see below).
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_shoulders_laws() {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, Vec::new());
    let n = system.layout().n;
    let actuators = motors(n);
    let objective = Objective {
        actuator: 1.3,
        tracking: vec![Tracking { state: 0, weight: 2.0, reference: vec![(0.0, 0.1), (0.9, 0.4)] }],
        ..Objective::default()
    };
    let p = Problem { actuators, ..open(&system, 0.9, 1, Scheme::Trapezoidal, objective) };
    let mut t = Transcription::new(&p).unwrap();
    assert_eq!(t.hessian_case(), &Ok(Motion::Chain));
    let mut rng = Rng(0x5e0d_a5c1_1a40_0031);
    let mut low = vec![0.0; 2 * n];
    low[n - 1] = -20f64.to_radians() - 0.05;
    let mut near = vec![0.05; 2 * n];
    near[n - 1] = 0.1;
    for (mid, spread) in [(vec![0.0; 2 * n], vec![0.12; 2 * n]), (low, near)] {
        // 1e-5 at a step of 3e-6: the differences' truncation error, from the contacts' and
        // stops' curvature, falls as the step squared (the fourth posture: 4.4e-5 at 1e-5,
        // 4.0e-6 at 3e-6, 4.4e-7 at 1e-6) and their round-off rises (the second: 4.1e-7 at
        // 3e-6, 1.3e-6 at 1e-6); a term left out shows at 1e-2 and more
        assert_random_hessians(&mut t, &mut rng, 2, &mid, &spread, (3e-6, 1e-5), "shoulder");
    }
}

/// The cardan hip (`models/joints/cardan-hip.toml`: three hinges in series, the cardan joint's
/// law on its three dependent modes: a monotone cubic table, a cubic polynomial, a linear spring
/// and dampers), an actuator on each hinge, both schemes, random postures within ±0.5 rad of rest
/// with random rates and multipliers: the exact Hessian against central differences of the exact
/// gradient and Jacobian, relative 1e-6.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_cardan_hip() {
    joint_law_hessian("cardan-hip.toml", 0x0ca7_da41_4e55_0017, 0.5, 1e-5, 1e-6);
}

/// The shoulders of the Delft report's joint models (`models/joints/`: Engin's resistance, the
/// Calspan joint stop on Engin's sinus, the flexion-torsion joint; each on three driven hinges,
/// its law on the joint element's dependent modes), an actuator on each hinge, both schemes,
/// random postures within `spread` of rest with random rates and multipliers: the exact Hessian
/// against central differences of the exact gradient and Jacobian, relative `tolerance`.
fn joint_law_hessian(file: &str, seed: u64, spread: f64, step: f64, tolerance: f64) {
    let c = model(&format!("models/joints/{file}"));
    let system = Musculoskeletal::new(&c.model, Vec::new());
    let n = system.layout().n;
    let mut rng = Rng(seed);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = problem(&system, scheme);
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.hessian_case(), &Ok(Motion::Chain), "{file}");
        let (mid, spread) = (vec![0.0; 2 * n], vec![spread; 2 * n]);
        let label = format!("{file} {scheme:?}");
        assert_random_hessians(&mut t, &mut rng, 3, &mid, &spread, (step, tolerance), &label);
    }
}

/// Engin's resistance: postures inside the sinus, within the ramp and beyond (the humerus at rest
/// 1.05 rad from the sinus's pole).
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_engins_shoulder() {
    joint_law_hessian("engin-shoulder.toml", 0xe461_5e0d_0000_0041, 0.6, 1e-5, 1e-6);
}

/// The joint stop: postures inside and beyond Engin's sinus, the stop's damping through the rates.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_calspan_stop() {
    joint_law_hessian("calspan-shoulder.toml", 0xca15_0a4e_0000_0042, 0.6, 1e-5, 1e-6);
}

/// The flexion-torsion joint: bent up to 0.8 rad each way from hanging, twisted, with rates.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_flexion_torsion_shoulder() {
    joint_law_hessian("flexion-torsion-shoulder.toml", 0xf1e7_0510_0000_0043, 0.8, 1e-5, 1e-6);
}

/// A muscle path with a law on a chain: the two-joint arm (`fixtures/two-joint-arm.toml`) with a
/// damped one-sided spring on the biceps' path besides its Hill muscle, `Σ e²`, `Σ a³`, the
/// contraction rates and tracking, both schemes, three random points about a flexed rest: the
/// exact Hessian against central differences of the exact gradient and Jacobian, relative 1e-6.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_a_muscle_path_with_a_law() {
    let text = std::fs::read_to_string(format!("{FIXTURES}/two-joint-arm.toml")).expect("reads");
    let insertion = "q = \"forearm.biceps_insertion\"\n";
    assert!(text.contains(insertion));
    let law = "law.elongation = { stiffness = 0.2, damping = 0.05, tension_only = { stiffness = 2.0, slack_length = 330, epsilon = 2 } }\n";
    let path = std::env::temp_dir().join(format!("mollier-law-path-{}.toml", std::process::id()));
    std::fs::write(&path, text.replace(insertion, &format!("{insertion}{law}"))).expect("writes");
    let c = load(&path, &mollier::registry()).expect("loads");
    std::fs::remove_file(&path).expect("removes");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    // the points of `optimize_derivatives.rs`'s muscles-on-a-chain check (away from the Hill model's kinks)
    let (mid, spread) = about_rest(&system, &mut system.workspace(), &[0.3, 0.4], [0.15, 1.0, 0.005, 0.45]);
    let mut rng = Rng(0x4e55_c4a1_3333_0039);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let objective = Objective {
            excitation: 0.7,
            activation_cubed: 1.1,
            contraction_rate: 0.9,
            tracking: vec![Tracking { state: 0, weight: 3.0, reference: vec![(0.0, 0.0), (0.3, 0.5)] }],
            ..Objective::default()
        };
        let p = open(&system, 0.3, 2, scheme, objective);
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.hessian_case(), &Ok(Motion::Chain));
        let label = format!("a path with a law {scheme:?}");
        assert_random_hessians(&mut t, &mut rng, 3, &mid, &spread, (1e-5, 1e-6), &label);
    }
}
