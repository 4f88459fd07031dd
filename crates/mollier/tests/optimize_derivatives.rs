//! The direct collocation NLP's derivatives against central differences at random points: every
//! block of the constraint Jacobian (each point's dynamics `∂f/∂x`, `∂f/∂ẋ`, `∂f/∂e`, the
//! actuators, and the defects) and the objective's gradient, on the pendulum (an actuator, no
//! muscles) and on the elbow with two Hill muscles (every muscle block), both schemes; and on the
//! shoulder (a chain of nine rotations, 95 muscles) at rest and at the flexion's target state,
//! `∂c/∂q` of the velocity forces (third-order transfer functions) included. The Hessian of
//! the Lagrangian against central differences of the exact gradient and Jacobian where it is
//! exact (the pendulum, the sliding mass, chains, the shoulder with its 95 muscles), and its
//! objective part on the elbow.

use mollier_ipopt::Nlp;
use mollier_ocp::{HessianChoice, MarkerTracking, Motion, Objective, Problem, Scheme, Tracking, Transcription};
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
use hessian_check::{about_rest, assert_random_hessians, hessian_error, random_hessian_error, random_point};

/// The largest difference between the exact Jacobian and central differences, relative to the
/// largest entry of its row (and to 1: the kernel's Newton solve leaves round-off of that order),
/// and the gradient's, relative to the larger of the entry and 1, over the NLP's variables at `z`.
fn largest_errors(t: &mut Transcription<'_, '_, '_>, z: &[f64]) -> (f64, f64, (usize, usize)) {
    let (errors, worst_grad) = errors(t, z);
    let m = t.m();
    let (mut worst, mut at) = (0.0f64, (0, 0));
    for (k, &e) in errors.iter().enumerate() {
        if e > worst {
            (worst, at) = (e, (k % m, k / m));
        }
    }
    (worst, worst_grad, at)
}

/// Per Jacobian entry (column-major, m x n) its difference from central differences relative to
/// its row's largest entry (and 1), and the gradient's largest difference, as [`largest_errors`].
fn errors(t: &mut Transcription<'_, '_, '_>, z: &[f64]) -> (Vec<f64>, f64) {
    let (n, m) = (t.n(), t.m());
    let pattern = t.jacobian_structure();
    let mut exact = vec![0.0; pattern.len()];
    assert!(t.jacobian(z, &mut exact));
    let mut dense = vec![0.0; n * m];
    for (&(i, j), v) in pattern.iter().zip(&exact) {
        dense[j * m + i] += v;
    }
    let mut row_scale = vec![1.0f64; m];
    for (&(i, _), v) in pattern.iter().zip(&exact) {
        row_scale[i] = row_scale[i].max(v.abs());
    }
    let mut grad = vec![0.0; n];
    assert!(t.gradient(z, &mut grad));
    let mut worst_grad = 0.0f64;
    let mut errors = vec![0.0; n * m];
    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
    let mut zp = z.to_vec();
    for j in 0..n {
        let h = 1e-6 * z[j].abs().max(1.0);
        zp[j] = z[j] + h;
        assert!(t.constraints(&zp, &mut gp));
        let fp = t.objective(&zp).unwrap();
        zp[j] = z[j] - h;
        assert!(t.constraints(&zp, &mut gm));
        let fm = t.objective(&zp).unwrap();
        zp[j] = z[j];
        for i in 0..m {
            let fd = (gp[i] - gm[i]) / (2.0 * h);
            errors[j * m + i] = (fd - dense[j * m + i]).abs() / row_scale[i];
        }
        let fd = (fp - fm) / (2.0 * h);
        worst_grad = worst_grad.max((fd - grad[j]).abs() / grad[j].abs().max(1.0));
    }
    (errors, worst_grad)
}

/// The model's point `name` followed along a path through three positions (m) over 0.9 s,
/// weight 2.5.
fn marker(c: &mollier::Compiled, name: &str) -> MarkerTracking {
    let node = c.points.iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no point {name}")).node;
    let reference = vec![(0.0, [0.3, -0.5, 0.1]), (0.4, [0.6, 0.2, -0.1]), (0.9, [-0.2, 0.7, 0.05])];
    MarkerTracking { name: name.into(), node, weight: 2.5, reference }
}

/// A problem over 0.9 s in `intervals` with an actuator on each of the `n` inputs, effort, a
/// tracking of the first input, final targets on the first input and the last rate, and each
/// state within ±10.
fn actuated<'s, 'm>(system: &'s Musculoskeletal<'m>, scheme: Scheme, intervals: usize) -> Problem<'s, 'm> {
    let (n, nx) = (system.layout().n, system.layout().len());
    let objective = Objective {
        actuator: 1.3,
        tracking: vec![Tracking { state: 0, weight: 2.0, reference: vec![(0.0, 0.1), (0.9, 1.2)] }],
        final_targets: vec![(0, -0.2, 4.0), (2 * n - 1, 0.3, 5.0)],
        ..Objective::default()
    };
    let actuators = motors(n);
    Problem { actuators, state_bounds: vec![[-10.0, 10.0]; nx], ..open(system, 0.9, intervals, scheme, objective) }
}

/// A problem of the elbow's muscles with `Σ c_k e_k²` (a factor per muscle), `Σ a³`, the
/// contraction rates, the accelerations, tracking and a final activation target.
fn with_muscles<'s, 'm>(system: &'s Musculoskeletal<'m>, scheme: Scheme) -> Problem<'s, 'm> {
    let objective = Objective {
        excitation: 0.7,
        excitation_weights: (0..system.layout().m).map(|k| 0.8 + 0.5 * k as f64).collect(),
        activation_cubed: 1.1,
        contraction_rate: 0.9,
        acceleration: 0.6,
        tracking: vec![Tracking { state: 0, weight: 3.0, reference: vec![(0.0, 0.0), (0.3, 0.5)] }],
        final_targets: vec![(system.layout().a(), 0.1, 2.0)],
        ..Objective::default()
    };
    open(system, 0.3, 2, scheme, objective)
}

#[test]
fn the_pendulums_jacobian_and_gradient_are_exact() {
    let c = model("models/mechanisms/pendulum.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let mut p = actuated(&system, scheme, 3);
        p.objective.markers = vec![marker(&c, "rod.tip")];
        let mut t = Transcription::new(&p).unwrap();
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        for _ in 0..3 {
            let z = random_point(&t, &mut rng, &[0.0, 0.0], &[2.0, 3.0]);
            let (jac, grad, at) = largest_errors(&mut t, &z);
            assert!(jac < 1e-6, "{scheme:?}: Jacobian off by {jac:.2e} (relative) at {at:?}");
            assert!(grad < 1e-6, "{scheme:?}: gradient off by {grad:.2e}");
        }
    }
}

/// [`actuated`] with the duration free (no tracking: its references' times would move) and a
/// weight on it.
fn free_time<'s, 'm>(system: &'s Musculoskeletal<'m>, scheme: Scheme) -> Problem<'s, 'm> {
    let mut p = actuated(system, scheme, 3);
    p.duration_bounds = Some([0.1, 5.0]);
    p.objective.tracking.clear();
    p.objective.time = 0.7;
    p
}

/// The free duration's blocks: the defects' `T` column, the gradient's `T` entry (the running
/// cost per unit duration), on the pendulum and on the elbow's muscles (every running term),
/// both schemes; the Hessian's `T` row where the Hessian is exact (pendulum, sliding mass).
#[test]
fn the_free_durations_derivatives_are_exact() {
    let mut rng = Rng(0x71e5_f4ee_0000_0039);
    let elbow = model("models/forward/elbow.toml");
    let elbow_system = Musculoskeletal::new(&elbow.model, elbow.muscles.clone());
    let l = elbow_system.layout();
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let mut p = with_muscles(&elbow_system, scheme);
        p.objective.tracking.clear();
        p.duration_bounds = Some([0.1, 5.0]);
        p.objective.time = 0.3;
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.n(), t.points() * (4 * l.len() / 2 + l.m) + 1);
        let mut mid = vec![0.5; l.len()];
        mid[l.s()..l.a()].fill(0.1);
        let mut spread = vec![0.4; l.len()];
        spread[l.s()..l.a()].fill(0.005);
        for _ in 0..3 {
            let z = random_point(&t, &mut rng, &mid, &spread);
            let (jac, grad, at) = largest_errors(&mut t, &z);
            println!("elbow {scheme:?}, free duration: Jacobian {jac:.2e} at {at:?}, gradient {grad:.2e}");
            assert!(jac < 1e-5, "{scheme:?}: Jacobian off by {jac:.2e} (relative) at {at:?}");
            assert!(grad < 1e-6, "{scheme:?}: gradient off by {grad:.2e}");
        }
    }
    for file in ["models/mechanisms/pendulum.toml", "models/optimal-control/sliding-mass.toml"] {
        let c = model(file);
        let system = Musculoskeletal::new(&c.model, c.muscles.clone());
        for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
            let p = free_time(&system, scheme);
            let mut t = Transcription::new(&p).unwrap();
            for _ in 0..3 {
                let z = random_point(&t, &mut rng, &[0.0, 0.0], &[2.0, 3.0]);
                let (jac, grad, at) = largest_errors(&mut t, &z);
                assert!(jac < 1e-6, "{file} {scheme:?}: Jacobian off by {jac:.2e} (relative) at {at:?}");
                assert!(grad < 1e-6, "{file} {scheme:?}: gradient off by {grad:.2e}");
                let (err, at) = random_hessian_error(1e-4, &mut t, &mut rng, &z);
                println!("{file} {scheme:?}, free duration: Jacobian {jac:.2e}, Hessian {err:.2e} at {at:?}");
                assert!(err < 1e-6, "{file} {scheme:?}: Hessian off by {err:.2e} (relative) at {at:?}");
            }
        }
    }
}

#[test]
fn the_elbow_muscles_jacobian_and_gradient_are_exact() {
    let c = model("models/forward/elbow.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    // the angle ± 0.4 rad, the rate ± 1, the contraction states ± 5 mm about rest, any activation
    let (mid, spread) = about_rest(&system, &mut system.workspace(), &c.model.q0(), [0.4, 1.0, 0.005, 0.45]);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let mut p = with_muscles(&system, scheme);
        p.objective.markers = vec![marker(&c, "forearm.hand")];
        let mut t = Transcription::new(&p).unwrap();
        let mut rng = Rng(0x0e1b_0111_2222_3333);
        for _ in 0..3 {
            let z = random_point(&t, &mut rng, &mid, &spread);
            let (jac, grad, at) = largest_errors(&mut t, &z);
            assert!(jac < 1e-5, "{scheme:?}: Jacobian off by {jac:.2e} (relative) at {at:?}");
            assert!(grad < 1e-6, "{scheme:?}: gradient off by {grad:.2e}");
        }
    }
}

/// The shoulder's flexion target at 0.65 s (`models/shoulder/flexion-target.csv`): time, then
/// the nine rotations (rad), their rates and accelerations.
fn flexion_target_at_065() -> Vec<f64> {
    let target =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/shoulder/flexion-target.csv"))
            .unwrap();
    target
        .lines()
        .filter(|r| !r.starts_with('#'))
        .find(|r| r.starts_with("0.65,"))
        .expect("the target has a row at 0.65 s")
        .split(',')
        .map(|v| v.parse().unwrap())
        .collect()
}

/// The shoulder (9 joint rotations in a chain, 95 Hill muscles) on one trapezoidal interval at the
/// flexion's target state at 0.65 s (its rotations, rates and accelerations; the muscles in
/// isometric equilibrium at excitation 0.2), at rest and moving: every block exact, `∂c/∂q` of
/// the velocity forces (rows `f_v`, columns `q`, which needs the third-order transfer functions)
/// included; that block's error is printed on its own.
#[test]
fn the_shoulders_jacobian_is_exact() {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let row = flexion_target_at_065();
    let (q, v, vd) = (&row[1..10], &row[10..19], &row[19..28]);
    let mut ws = system.workspace();
    let rest = system.rest_state(&mut ws, q, 0.0, &vec![0.2; l.m]).unwrap();
    let p = open(&system, 0.01, 1, Scheme::Trapezoidal, Objective { excitation: 1.0, ..Objective::default() });
    let mut t = Transcription::new(&p).unwrap();
    let (nx, m) = (l.len(), t.m());
    let per = t.n() / t.points();
    for moving in [false, true] {
        let mut z = vec![0.0; t.n()];
        for i in 0..t.points() {
            let zi = &mut z[i * per..(i + 1) * per];
            zi[..nx].copy_from_slice(&rest.x);
            zi[2 * nx..2 * nx + l.m].fill(0.2);
            if moving {
                zi[l.n..2 * l.n].copy_from_slice(v);
                zi[nx..nx + l.n].copy_from_slice(v);
                zi[nx + l.n..nx + 2 * l.n].copy_from_slice(vd);
            }
        }
        let (errors, grad) = errors(&mut t, &z);
        // the velocity forces' rows by q at either point, and everything else
        let in_block = |i: usize, j: usize| {
            let (pi, pj) = (i / nx, j / per);
            i < t.points() * nx && pi == pj && (l.n..2 * l.n).contains(&(i % nx)) && j % per < l.n
        };
        let (mut block, mut rest_err) = (0.0f64, (0.0f64, (0, 0)));
        for (k, &e) in errors.iter().enumerate() {
            let (i, j) = (k % m, k / m);
            if in_block(i, j) {
                block = block.max(e);
            } else if e > rest_err.0 {
                rest_err = (e, (i, j));
            }
        }
        println!("moving {moving}: ∂c/∂q block off by {block:.3e}, elsewhere {:.3e} at {:?}", rest_err.0, rest_err.1);
        assert!(rest_err.0 < 1e-5, "moving {moving}: Jacobian off by {:.2e} at {:?}", rest_err.0, rest_err.1);
        assert!(grad < 1e-6, "gradient off by {grad:.2e}");
        assert!(block < 1e-8, "moving {moving}: the velocity forces' block off by {block:.2e}");
    }
}

/// The shoulder's 95 muscle paths (67 wrapping: DAS3's thorax ellipsoid, cylinders with a
/// quadrant and a length, the deltoids over several) in the rest posture and at the flexion's
/// target posture at 0.65 s: their third and fourth orders agree with central differences of
/// their second and third (conformance check 8, 1e-7 of the largest), and the fourth-order
/// transfer functions accept them; what the exact Hessian then says is printed.
#[test]
fn the_shoulders_paths_have_exact_third_and_fourth_orders() {
    use mollier_core::conformance::{Options, check_orders};
    let c = model("models/shoulder/shoulder-forward.toml");
    let model = &c.model;
    let row = flexion_target_at_065();
    let mut data = mollier_core::Data::new(model);
    mollier_core::solve_positions(model, &mut data, &row[1..10]).unwrap();
    let modes: Vec<_> = c.muscles.iter().map(|m| m.mode).collect();
    // the harness's steps down to 1e-6 of each element's size: paths near touch-down (the serratus
    // anterior over the thorax) have large higher derivatives, and a path near a change of branch
    // (the biceps) must not cross it; the differences' round-off is then about 2e-8
    let opts = Options { step: 1e-4, hessian_rtol: 1e-7, ..Options::default() };
    let (mut worst3, mut worst4, mut wrapped) = (0.0f64, 0.0f64, 0);
    for x in [model.x0(), data.x()] {
        for &mode in &modes {
            let el = model.mode_owner(mode).0;
            let local: Vec<f64> = model.element_coords(el).iter().map(|&i| x[i]).collect();
            let element = model.element(el);
            wrapped += usize::from(element.type_name() == "curved-truss");
            let o =
                check_orders(element, &local, 2, &opts).unwrap_or_else(|f| panic!("{}: {f}", model.element_name(el)));
            worst3 = worst3.max(o.third.expect("a third order"));
            worst4 = worst4.max(o.fourth.expect("a fourth order"));
        }
    }
    println!("{wrapped} wrapping paths: third order off by {worst3:.2e}, fourth by {worst4:.2e}");
    assert_eq!(wrapped, 2 * 67);
    mollier_core::transfer4::supported_modes(model, &modes).unwrap();
    let system = Musculoskeletal::new(model, c.muscles.clone());
    println!("the exact Hessian: {:?}", mollier_ocp::exact_hessian(&system));
}

/// The pendulum (a rotation about a fixed axis: `∂²f_v/∂q² = M̄ v̇ − f_v`) and the sliding mass
/// (a translation: no second partials of the dynamics), with an actuator, a tracking and a
/// final-state term, both schemes, at three random points with random multipliers: the exact
/// Hessian of the Lagrangian against central differences of the exact gradient and Jacobian.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_one_rotation_or_translation() {
    let mut rng = Rng(0x4e55_1a40_0b0b_0007);
    for (file, motion, point) in [
        ("models/mechanisms/pendulum.toml", Motion::Rotation, "rod.tip"),
        ("models/optimal-control/sliding-mass.toml", Motion::Translation, "block"),
    ] {
        let c = model(file);
        let system = Musculoskeletal::new(&c.model, c.muscles.clone());
        for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
            let mut p = actuated(&system, scheme, 3);
            p.objective.markers = vec![marker(&c, point)];
            let mut t = Transcription::new(&p).unwrap();
            assert_eq!(t.hessian_case(), &Ok(motion), "{file}");
            // 1e-6: the differences' noise, which grows as the step shrinks (with the exact
            // ∂c/∂q the pendulum's Jacobian carries round-off from one evaluation to the next:
            // 1.6e-8 at a step of 1e-4, the step used, 1.7e-7 at 1e-5, 3.8e-7 at 3e-6, even
            // between grid points no term couples; without tracking terms, rows of scale 1
            // showed 5.6e-6 at 1e-5); a wrong term shows at 1e-1
            let label = format!("{file} {scheme:?}");
            assert_random_hessians(&mut t, &mut rng, 3, &[0.0, 0.0], &[2.0, 3.0], (1e-4, 1e-6), &label);
        }
    }
}

/// The elbow with two Hill muscles (a rotation about a fixed axis, a law with range stops on its
/// hinge, straight paths) with `Σ e²`, `Σ a³`, the contraction rates, tracking and a final
/// activation target, both schemes, at three random points with random multipliers inside the
/// joint's range and three beyond its upper stop: the exact Hessian of the Lagrangian (the Hill
/// model's second partials, the paths' `L''`, `L'''`, the stops' curvature) against central
/// differences of the exact gradient and Jacobian.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_elbow_with_two_muscles() {
    let c = model("models/forward/elbow.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut ws = system.workspace();
    let mut rng = Rng(0x4e55_e1b0_2222_0039);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = with_muscles(&system, scheme);
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.hessian_case(), &Ok(Motion::Rotation));
        // inside the range (−90° to 60°) and beyond its upper stop (1.05 rad)
        for angle in [0.0, 1.25] {
            // the angle ± 0.15 rad, the rate ± 1, the contraction states ± 5 mm about rest, any activation
            let (mid, spread) = about_rest(&system, &mut ws, &[angle], [0.15, 1.0, 0.005, 0.45]);
            // a step of 1e-5: at 1e-4 the tendons' curvature gives the differences a truncation
            // error of 4e-6
            let label = format!("elbow {scheme:?} at {angle} rad");
            assert_random_hessians(&mut t, &mut rng, 3, &mid, &spread, (1e-5, 1e-6), &label);
        }
    }
}

/// Muscles on a chain: the two-joint arm (`fixtures/two-joint-arm.toml`: a shoulder and an elbow
/// hinge, one muscle on each and one across both, straight paths, a law with range stops on the
/// elbow) with `Σ e²`, `Σ a³`, the contraction rates, tracking and a final activation target,
/// both schemes, three random points with random multipliers: the exact Hessian of the Lagrangian
/// (the multibody block and the paths' `∂²L`, `D³L(a, b, λ_v)` from the fourth-order transfer
/// functions, the Hill model's second partials) against central differences of the exact
/// gradient and Jacobian.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_muscles_on_a_chain() {
    let c = model("crates/mollier/tests/fixtures/two-joint-arm.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut rng = Rng(0x4e55_c4a1_3333_0039);
    // the angles ± 0.15 rad, the rates ± 1, the contraction states ± 5 mm about rest, any activation
    let (mid, spread) = about_rest(&system, &mut system.workspace(), &[0.3, 0.4], [0.15, 1.0, 0.005, 0.45]);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = with_muscles(&system, scheme);
        let mut t = Transcription::new(&p).unwrap();
        assert_eq!(t.hessian_case(), &Ok(Motion::Chain));
        let label = format!("two-joint arm {scheme:?}");
        assert_random_hessians(&mut t, &mut rng, 3, &mid, &spread, (1e-5, 1e-6), &label);
    }
}

/// The shoulder with its 95 muscles (`models/shoulder/shoulder-forward.toml`: nine rotations in a
/// chain, 67 wrapping paths over the thorax ellipsoid and cylinders, the girdle's laws) on one
/// trapezoidal interval with `Σ e²`, at random points near the flexion's target state at 0.65 s
/// (each rotation ± 0.05 rad, each rate ± 0.5 rad/s about the target's, the contraction states
/// ± 2 mm about isometric equilibrium at excitation 0.2, activations 0.05 to 0.95), random
/// rates and multipliers: the whole exact Hessian of the Lagrangian (the multibody block, every
/// muscle's `∂²L` and `D³L(a, b, λ_v)` from its path's fourth order, the Hill model's second
/// partials, the laws') against central differences of the exact gradient and Jacobian.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_the_shoulder_with_its_muscles() {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let row = flexion_target_at_065();
    let (q, v) = (&row[1..10], &row[10..19]);
    let mut ws = system.workspace();
    let (mut mid, spread) = about_rest(&system, &mut ws, q, [0.05, 0.5, 0.002, 0.45]);
    mid[l.n..2 * l.n].copy_from_slice(v);
    let p = open(&system, 0.1, 1, Scheme::Trapezoidal, Objective { excitation: 1.0, ..Objective::default() });
    let mut t = Transcription::new(&p).unwrap();
    assert_eq!(t.hessian_case(), &Ok(Motion::Chain));
    let mut rng = Rng(0x5e0d_a5c1_95e5_0043);
    assert_random_hessians(&mut t, &mut rng, 2, &mid, &spread, (3e-6, 1e-5), "shoulder with its muscles");
}

/// A chain (the double pendulum: two hinges in series) and two closed loops with masses (the
/// planar four-bar and the spatial RSSR, a truss closing each) with an actuator per input,
/// effort, tracking and final targets, both schemes, at three random configurations with random
/// rates, accelerations and multipliers:
/// the exact Hessian of the Lagrangian (the equations of motion's second partials in
/// `(q, v, v̇)` from the fourth-order transfer functions) against central differences of the
/// exact gradient and Jacobian.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_chains() {
    let mut rng = Rng(0x4e55_d4f0_c4a1_0039);
    for file in [
        "models/mechanisms/double-pendulum.toml",
        "crates/mollier/tests/fixtures/weighted-four-bar.toml",
        "crates/mollier/tests/fixtures/weighted-rssr.toml",
    ] {
        let c = model(file);
        let system = Musculoskeletal::new(&c.model, c.muscles.clone());
        let n = system.layout().n;
        let mut ws = system.workspace();
        let mid = system.rest_state(&mut ws, &vec![0.0; n], 0.0, &[]).unwrap().x;
        for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
            let p = actuated(&system, scheme, 2);
            let mut t = Transcription::new(&p).unwrap();
            assert_eq!(t.hessian_case(), &Ok(Motion::Chain), "{file}");
            let label = format!("{file} {scheme:?}");
            assert_random_hessians(&mut t, &mut rng, 3, &mid, &vec![0.3; 2 * n], (1e-4, 1e-6), &label);
        }
    }
}

/// The chain at the swing-up's ends: each hinge exactly hanging (−π/2) at the first point and
/// upright (π/2) at the last, where a hinge's angle `atan2(s, c)` has `c = 0` (over dual numbers
/// `atan(s/c)` divides by it): the exact Hessian is finite and agrees with central differences.
#[test]
fn the_hessian_of_the_lagrangian_is_exact_for_a_chain_hanging_and_upright() {
    let mut rng = Rng(0x5713_a9e1_0c4f_0d2b);
    let c = model("models/mechanisms/double-pendulum.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let n = system.layout().n;
    let mut ws = system.workspace();
    let mid = system.rest_state(&mut ws, &vec![0.0; n], 0.0, &[]).unwrap().x;
    let half_pi = std::f64::consts::FRAC_PI_2;
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = actuated(&system, scheme, 2);
        let mut t = Transcription::new(&p).unwrap();
        let per = t.n() / t.points();
        for ends in [[-half_pi, half_pi], [half_pi, -half_pi]] {
            let mut z = random_point(&t, &mut rng, &mid, &vec![0.3; 2 * n]);
            let last = (t.points() - 1) * per;
            z[..n].fill(ends[0]);
            z[last..last + n].fill(ends[1]);
            let (err, at) = random_hessian_error(1e-4, &mut t, &mut rng, &z);
            println!("{scheme:?} {ends:?}: Hessian off by {err:.2e} at {at:?}");
            assert!(err < 1e-6, "{scheme:?} {ends:?}: Hessian off by {err:.2e} (relative) at {at:?}");
        }
    }
}

/// Loads that vary in time (none here: their kind is what refuses the exact Hessian).
#[derive(Debug)]
struct TimedLoads;

impl mollier_sim::ExternalForcing for TimedLoads {
    fn loads(&self, _: &mollier_core::Model, _: &mollier_core::Data, _: f64, out: &mut Vec<mollier_core::Load>) {
        out.clear();
    }
    fn add_partials(&self, _: &mollier_core::Model, _: &mollier_core::Data, _: f64, _: &mut faer::Mat<f64>) {}
}

/// Where the dynamics' second partials would not be exact (loads varying in time; or when
/// asked), IPOPT is given no Hessian and approximates it; the objective's part (`Σ e²`, `Σ a³`,
/// tracking) is checked alone, on the elbow with two Hill muscles.
#[test]
fn the_hessian_is_left_to_ipopt_where_it_would_not_be_exact() {
    let c = model("models/forward/elbow.toml");
    let mut system = Musculoskeletal::new(&c.model, c.muscles.clone());
    mollier_ocp::exact_hessian(&system).expect("the elbow's Hessian is exact");
    system.loads = Some(Box::new(TimedLoads));
    let why = mollier_ocp::exact_hessian(&system).expect_err("loads varying in time");
    assert!(why.contains("loads varying in time"), "{why}");
    let c = model("models/forward/elbow.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let mut p = with_muscles(&system, Scheme::HermiteSimpson);
    p.objective.markers = vec![marker(&c, "forearm.hand")];
    let mut t = Transcription::new(&p).unwrap();
    let mut rng = Rng(0x0b1e_c71e_0000_0003);
    let spread = vec![0.4; l.len()];
    for _ in 0..3 {
        let z = random_point(&t, &mut rng, &vec![0.5; l.len()], &spread);
        let sigma = 0.5 + rng.next();
        let mut values = vec![0.0; t.hessian_structure().expect("exact").len()];
        let pattern = t.objective_hessian(&z, sigma, &mut values);
        let (err, at) = hessian_error(1e-4, &mut t, &z, sigma, &[], &pattern, &values);
        assert!(err < 1e-8, "the objective's Hessian off by {err:.2e} at {at:?}");
    }
    let pend = model("models/mechanisms/pendulum.toml");
    let pend_system = Musculoskeletal::new(&pend.model, Vec::new());
    let asked = Problem {
        hessian: HessianChoice::LimitedMemory,
        ..open(&pend_system, 1.0, 2, Scheme::Trapezoidal, Objective::default())
    };
    let t = Transcription::new(&asked).unwrap();
    assert!(t.hessian_structure().is_none(), "the approximation was asked for");
}

/// The physical scaling sizes each contraction state by its tendon's stretch at `F_max`: from
/// slack, a step of one size loads a tendon of the shoulder to at most `F_max` (and no less than
/// a fifth of it, or the size would be needlessly fine). Sized by the fibre's optimal length, as
/// before, the same step loaded a tendon to 150 to 5.6e6 `F_max`, and IPOPT's steps of a few
/// hundredths kept throwing the contraction rows' residual to 10²-10⁴ N
/// (docs/optimal-control.md, "Scaling").
#[test]
fn a_contraction_states_size_loads_its_slack_tendon_to_at_most_f_max() {
    let c = model("models/shoulder/shoulder-forward.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = system.layout();
    let p = with_muscles(&system, Scheme::Trapezoidal);
    let t = Transcription::new(&p).unwrap();
    let sizes = t.variable_sizes();
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for (k, mu) in system.muscles.iter().enumerate() {
        let h = &mu.hill;
        let slack = h.params.tendon_slack_length;
        // the tendon stretched by the contraction state's size and its rate's over the duration
        let size = sizes[l.s() + k];
        let (f, _) = h.tendon(slack + size);
        let (fr, _) = h.tendon(slack + sizes[l.len() + l.s() + k] * p.duration);
        // the quadratic term's share (the linear `k₁ x`, 10 N/m, adds a few tenths of a newton)
        let r = (f - h.params.k1 * size) / h.params.max_force;
        assert!((fr - f).abs() <= 1e-9 * f, "muscle {k}: the rate's size is not the state's over the duration");
        lo = lo.min(r);
        hi = hi.max(r);
    }
    println!("a slack tendon stretched by its contraction state's size: {lo:.3} to {hi:.3} F_max");
    assert!(hi <= 1.0 + 1e-9 && lo >= 0.2, "{lo} to {hi} F_max");
}

/// Excitation weights other than one per muscle, or negative or not finite, are refused by the
/// transcription (a problem built by hand skips the file's checks).
#[test]
fn excitation_weights_of_the_wrong_shape_or_sign_are_refused() {
    let c = model("models/forward/elbow.toml");
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    for (weights, why) in [(vec![1.0], "1 excitation weights, 2 muscles"), (vec![1.0, f64::NAN], "not NaN")] {
        let mut p = with_muscles(&system, Scheme::Trapezoidal);
        p.objective.excitation_weights = weights;
        let err = Transcription::new(&p).err().expect("refused").to_string();
        assert!(err.contains(why), "{err}");
    }
    let mut p = with_muscles(&system, Scheme::Trapezoidal);
    p.objective.excitation_weights = vec![1.0, -0.5];
    assert!(Transcription::new(&p).is_err(), "a negative weight");
}
