//! The arm never enters the thorax (issue 37): `models/shoulder/shoulder-forward.toml` run from
//! rest with zero excitations, with every muscle at full excitation, and with each muscle alone
//! stepped to full excitation; at every step the arm's points (the humerus's middle, the elbow,
//! the forearm's middle, the wrist, the hand's centre of mass: all lumped on the humerus) are
//! measured against the thorax ellipsoid from their positions, not from the contact elements'
//! levels, so that a model without the arm's contact fails here. None of those runs drives the
//! arm against the thorax (each moves it away), so a push does: a constant horizontal force at
//! the elbow towards the ellipsoid's axis, which the contact must hold and which, with the arm's
//! contact made soft, takes the arm into the thorax (that the check fails is tested too).

use std::path::Path;

use mollier::{Compiled, Excitations, ForwardOptions, ForwardRun};
use mollier_core::geometry::{mat_t_vec, mat_vec, rotation};

include!("fixtures/contact.rs");

/// The step of `mollier simulate` (s), the run's duration (s) and when a muscle switches on (s).
const STEP: f64 = 0.001;
const DURATION: f64 = 0.6;
const ON: f64 = 0.02;

/// The deepest any arm point may reach (m): the soft contact lets a point in by its
/// compliance, as it does TS and AI (tests/flexion.rs allows 5 mm there).
const DEEPEST: f64 = 0.005;

const ARM: [&str; 5] = ["humerus.humerus_mid", "humerus.elbow", "humerus.forearm_mid", "humerus.wrist", "humerus.hand"];

fn model_path() -> std::path::PathBuf {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../..")).join("models/shoulder/shoulder-forward.toml")
}

fn shoulder() -> Compiled {
    mollier::load(&model_path(), &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The push at the elbow (N): about the arm's weight (36 N). At 100 N the arm's middle hits the
/// thorax 5.1 mm deep (at 0.08 s, then less), past `DEEPEST`: the contact's 20 000 N/m is soft.
const PUSH: f64 = 50.0;

/// The shoulder with a constant horizontal force of `PUSH` at the elbow towards the thorax
/// ellipsoid's vertical axis (from the elbow's rest position; the hand hangs below the
/// ellipsoid), and the arm's five contacts with `arm_stiffness` (N/m) instead of the model's
/// 20 000 N/m when given.
fn pushed(arm_stiffness: Option<f64>) -> Compiled {
    let c = shoulder();
    let (_, centre, _) = contact(&c, "TS_thorax");
    let elbow = c.points.iter().find(|p| p.name == "humerus.elbow").expect("the elbow").node;
    let mut data = mollier_core::Data::new(&c.model);
    mollier_core::solve_positions(&c.model, &mut data, &c.model.q0()).expect("the rest posture");
    let p = data.position(&c.model, elbow);
    // y is up
    let d: Vec<f64> = (0..3).map(|i| if i == 1 { 0.0 } else { centre[i] - p[i] }).collect();
    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
    let force: Vec<String> = d.iter().map(|v| format!("{:.6}", PUSH * v / norm)).collect();
    let mut text = std::fs::read_to_string(model_path()).expect("the model file");
    if let Some(k) = arm_stiffness {
        for point in ARM {
            let head = format!("point = \"{point}\"");
            let at = text.find(&head).unwrap_or_else(|| panic!("no contact at {point}"));
            let rel = text[at..].find("stiffness = 20000").expect("the contact's stiffness");
            text.replace_range(at + rel..at + rel + "stiffness = 20000".len(), &format!("stiffness = {k}"));
        }
    }
    text += &format!("\n[loads.push]\nat = \"humerus.elbow\"\nforce = [{}]\n", force.join(", "));
    mollier::load_text(&model_path().display().to_string(), &text, &mollier::registry())
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

/// Excitations 0 until `ON`, then `on[k]` for muscle `k` (a ramp over one step).
fn stepped(c: &Compiled, on: impl Fn(usize) -> f64) -> Excitations {
    Excitations {
        time: vec![0.0, ON, ON + STEP],
        values: (0..c.muscles.len()).map(|k| vec![0.0, 0.0, on(k)]).collect(),
        missing: Vec::new(),
    }
}

/// The deepest of the arm's points in the thorax ellipsoid over a run (m, positive inside), and
/// the point and time where it was.
fn deepest(c: &Compiled, ex: Excitations) -> (f64, &'static str, f64) {
    deepest_with(c, ex, None)
}

/// [`deepest`] with tendons rigid below the ratio `rigid` (`ForwardOptions::rigid_tendons`).
fn deepest_with(c: &Compiled, ex: Excitations, rigid: Option<f64>) -> (f64, &'static str, f64) {
    let n = c.model.n_q();
    // the thorax ellipsoid of the scapula's contact
    let (_, centre, axes) = contact(c, "TS_thorax");
    let nodes: Vec<_> = ARM
        .iter()
        .map(|name| c.points.iter().find(|p| p.name == *name).unwrap_or_else(|| panic!("no point {name}")).node)
        .collect();
    // each point in its body's frame (origin, orientation nodes, local position), from the rest
    // posture solved with every element: a point is placed only when the elements that use it
    // are evaluated, which the bodies-only solve below leaves out
    let mut data = mollier_core::Data::new(&c.model);
    mollier_core::solve_positions(&c.model, &mut data, &c.model.q0()).expect("the rest posture");
    let in_body: Vec<_> = nodes
        .iter()
        .map(|&p| {
            let (o, r) = c.model.attached_to(p).expect("a point on a body");
            let (origin, rot) = (data.position(&c.model, o), rotation(&data.orientation(&c.model, r)));
            let x = data.position(&c.model, p);
            (o, r, mat_t_vec(&rot, &[x[0] - origin[0], x[1] - origin[1], x[2] - origin[2]]))
        })
        .collect();
    let mut run = ForwardRun::new(c, ex, ForwardOptions::fixed(STEP).with_rigid_tendons(rigid)).expect("a rest state");
    // the bodies only: a muscle path may fail where the arm has been driven (the point of the test)
    let bodies = mollier_core::NewtonOptions { free_elements: false, ..Default::default() };
    let mut worst = (f64::NEG_INFINITY, "", 0.0);
    for _ in 0..(DURATION / STEP).round() as usize {
        let frame = match run.advance() {
            Ok(f) => f,
            // a run that stops is a failure as the arm inside is (reported with the time)
            Err(e) => {
                return (f64::INFINITY, Box::leak(format!("the run stopped: {e}").into_boxed_str()), run.state().t);
            }
        };
        mollier_core::solve_positions_with(&c.model, &mut data, &frame.x[..n], &bodies).expect("a configuration");
        for (name, (o, r, local)) in ARM.iter().zip(&in_body) {
            let (origin, rot) = (data.position(&c.model, *o), rotation(&data.orientation(&c.model, *r)));
            let v = mat_vec(&rot, local);
            let d = depth(&[origin[0] + v[0], origin[1] + v[1], origin[2] + v[2]], &centre, &axes);
            if d > worst.0 {
                worst = (d, *name, frame.time);
            }
        }
    }
    worst
}

/// `f` of every case, the cases shared between two threads (every other one each).
fn on_two_threads<T: Sync, R: Send>(cases: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    std::thread::scope(|s| {
        let f = &f;
        let handles: Vec<_> =
            (0..2).map(|t| s.spawn(move || cases.iter().skip(t).step_by(2).map(f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().expect("a run")).collect()
    })
}

/// Assert that no run of `results` (per case its name and deepest arm point: depth, point, time)
/// took the arm more than [`DEEPEST`] into the thorax; `what` follows "the arm enters the thorax".
fn assert_outside(results: &[(String, (f64, &str, f64))], what: &str) {
    let inside: Vec<String> = results
        .iter()
        .filter(|(_, (d, _, _))| *d > DEEPEST)
        .map(|(name, (d, point, t))| format!("{name}: {point} {:.1} mm inside at {t:.3} s", 1000.0 * d))
        .collect();
    assert!(inside.is_empty(), "the arm enters the thorax{what}:\n{}", inside.join("\n"));
}

/// The muscle element `k` belongs to: its name without a trailing `_N` (`deltoideus_clavicular_1`
/// to `_6` are the anterior deltoid).
fn muscle_of(c: &Compiled, k: usize) -> String {
    let name = c.muscles[k].name.as_str();
    name.rsplit_once('_').filter(|(_, n)| n.parse::<u32>().is_ok()).map_or(name, |(m, _)| m).to_string()
}

/// The model's muscles, each once, in the order of their elements.
fn muscles_of(c: &Compiled) -> Vec<String> {
    let mut muscles: Vec<String> = (0..c.muscles.len()).map(|k| muscle_of(c, k)).collect();
    muscles.dedup();
    muscles
}

#[test]
fn the_arm_stays_out_of_the_thorax() {
    let c = shoulder();
    let m = c.muscles.len();
    // zero, all ones, then each muscle alone (all its elements: `deltoideus_clavicular_1` to `_6`
    // are the anterior deltoid) and each element alone; two threads
    let (muscle, muscles) = (|k: usize| muscle_of(&c, k), muscles_of(&c));
    let cases: Vec<(String, Excitations)> = [
        ("zero excitations".to_string(), stepped(&c, |_| 0.0)),
        ("all excitations at 1".to_string(), stepped(&c, |_| 1.0)),
    ]
    .into_iter()
    .chain(muscles.iter().map(|g| (format!("{g} alone"), stepped(&c, |k| if muscle(k) == *g { 1.0 } else { 0.0 }))))
    .chain((0..m).map(|j| (format!("{} alone", c.muscles[j].name), stepped(&c, |k| if k == j { 1.0 } else { 0.0 }))))
    .collect();
    let results = on_two_threads(&cases, |(name, ex)| (name.clone(), deepest(&c, ex.clone())));
    // the push, with zero excitations: the one case that presses the arm on the thorax
    let push = pushed(None);
    let mut results = results;
    results.push((format!("a push of {PUSH} N at the elbow"), deepest(&push, stepped(&push, |_| 0.0))));
    let worst = results.iter().max_by(|a, b| a.1.0.total_cmp(&b.1.0)).expect("runs");
    eprintln!(
        "{} runs of {DURATION} s: deepest arm point {:.2} mm ({}, {} at {:.3} s)",
        results.len(),
        1000.0 * worst.1.0,
        worst.0,
        worst.1.1,
        worst.1.2
    );
    let mut ranked: Vec<&(String, (f64, &str, f64))> = results.iter().filter(|r| r.1.0.is_finite()).collect();
    ranked.sort_by(|a, b| b.1.0.total_cmp(&a.1.0));
    for (name, (d, point, t)) in ranked.iter().take(6) {
        eprintln!("  {name}: {point} {:.1} mm at {t:.3} s", 1000.0 * d);
    }
    assert_outside(&results, "");
}

#[test]
fn without_the_arms_contact_the_push_takes_the_arm_into_the_thorax() {
    // the check of `the_arm_stays_out_of_the_thorax` can fail: the same push with the arm's five
    // contacts a thousand times softer (20 N/m) ends with the arm inside
    let soft = pushed(Some(20.0));
    let (d, point, t) = deepest(&soft, stepped(&soft, |_| 0.0));
    eprintln!("the push without the arm's contact: {point} {:.1} mm inside at {t:.3} s", 1000.0 * d);
    assert!(d > DEEPEST, "{point} {:.1} mm inside at {t:.3} s", 1000.0 * d);
}

/// With every tendon rigid (`--rigid-tendons inf`): zero, all ones, each muscle alone (all its
/// elements) and the push keep the arm out of the thorax too.
#[test]
fn the_arm_stays_out_of_the_thorax_with_rigid_tendons() {
    let c = shoulder();
    let (muscle, muscles) = (|k: usize| muscle_of(&c, k), muscles_of(&c));
    let rigid = Some(f64::INFINITY);
    let mut cases: Vec<(String, Compiled, Excitations)> = vec![
        ("zero excitations".to_string(), shoulder(), stepped(&c, |_| 0.0)),
        ("all excitations at 1".to_string(), shoulder(), stepped(&c, |_| 1.0)),
    ];
    for g in &muscles {
        cases.push((format!("{g} alone"), shoulder(), stepped(&c, |k| if muscle(k) == *g { 1.0 } else { 0.0 })));
    }
    let push = pushed(None);
    let ex = stepped(&push, |_| 0.0);
    cases.push((format!("a push of {PUSH} N at the elbow"), push, ex));
    let results = on_two_threads(&cases, |(name, c, ex)| (name.clone(), deepest_with(c, ex.clone(), rigid)));
    let worst = results.iter().max_by(|a, b| a.1.0.total_cmp(&b.1.0)).expect("runs");
    eprintln!(
        "{} runs of {DURATION} s with rigid tendons: deepest arm point {:.2} mm ({}, {} at {:.3} s)",
        results.len(),
        1000.0 * worst.1.0,
        worst.0,
        worst.1.1,
        worst.1.2
    );
    assert_outside(&results, " with rigid tendons");
}
