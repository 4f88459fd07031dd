//! The explicit form's state matrix `J = ∂F/∂x` (`Linearization::state_matrix`) against central
//! differences of the explicit rates `F` (`Musculoskeletal::rates`), on the elbow and on the
//! shoulder, moving, with the muscles active and their fibres off equilibrium; the states that
//! limit the adaptive steps (`Adaptive::limiting_states`).

use std::path::Path;

use mollier::Compiled;
use mollier_sim::{Musculoskeletal, Workspace};

fn root() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}

fn load(path: &str) -> Compiled {
    mollier::load(&root().join(path), &mollier::registry()).expect("the model compiles")
}

/// `J` at `x` under the constant excitations `u` against central differences of `F`: each entry
/// within `tol` of the larger of its own size and a thousandth of its row's largest entry, and
/// every rigid tendon's contraction state (left out of `J`) moves no other state's rate. The
/// largest relative error.
fn check(sys: &Musculoskeletal<'_>, x: &[f64], u: &[f64], tol: f64) -> f64 {
    let mut ws: Workspace = sys.workspace();
    let ex = |_: f64, w: &mut [f64]| w.copy_from_slice(u);
    let rate = |ws: &mut Workspace, x: &[f64]| sys.rates(ws, x, 0.0, &ex).expect("a rate");
    // the linearization at the consistent rate, with that rate as the guess: the inertia's v̇
    let xd = rate(&mut ws, x);
    let (_, lin) = sys.consistent(&mut ws, x, 0.0, &ex, &xd).expect("an evaluation");
    let sm = lin.state_matrix().expect("a state matrix");
    let len = sys.layout().len();
    let rigid: Vec<usize> = (0..len).filter(|i| !sm.states.contains(i)).collect();
    let mut worst = 0.0f64;
    for (c, &k) in sm.states.iter().chain(&rigid).enumerate() {
        // Richardson's extrapolation of central differences at h and h/2: a fibre's rate curves
        // sharply in its state (the force-velocity curve), 1e-4 off at h = 1e-6 m alone
        let mut central = |h: f64| {
            let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
            xp[k] += h;
            xm[k] -= h;
            let (fp, fm) = (rate(&mut ws, &xp), rate(&mut ws, &xm));
            fp.iter().zip(&fm).map(|(p, m)| (p - m) / (2.0 * h)).collect::<Vec<f64>>()
        };
        let h = 1e-6 * (1.0 + x[k].abs());
        let (d1, d2) = (central(h), central(h / 2.0));
        for (r, &i) in sm.states.iter().enumerate() {
            let num = (4.0 * d2[i] - d1[i]) / 3.0;
            let exact = if c < sm.states.len() { sm.j[(r, c)] } else { 0.0 };
            let row = (0..sm.states.len()).fold(0.0f64, |m, cc| m.max(sm.j[(r, cc)].abs()));
            let scale = exact.abs().max(1e-3 * row).max(1e-9);
            let err = (exact - num).abs() / scale;
            worst = worst.max(err);
            assert!(err < tol, "∂F/∂x at {} / {}: {exact:e} against {num:e}", sys.state_name(i), sys.state_name(k));
        }
    }
    worst
}

/// The elbow off rest: flexed, moving, both muscles active and off equilibrium.
fn elbow_state(sys: &Musculoskeletal<'_>, c: &Compiled) -> (Vec<f64>, Vec<f64>) {
    let l = sys.layout();
    let u = vec![0.4, 0.2];
    let rest = sys.rest_state(&mut sys.workspace(), &c.model.q0(), 0.0, &u).expect("a rest state");
    let mut x = rest.x;
    x[0] += 0.3;
    x[l.v()] = 1.7;
    x[l.s()] *= 1.01;
    x[l.s() + 1] *= 0.995;
    x[l.a()] = 0.5;
    x[l.a() + 1] = 0.1;
    (x, u)
}

#[test]
fn the_elbows_state_matrix_is_the_rates_derivative() {
    let c = load("models/forward/elbow.toml");
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let (x, u) = elbow_state(&sys, &c);
    let worst = check(&sys, &x, &u, 1e-6);
    eprintln!("elbow: largest relative error of J {worst:.2e}");
}

#[test]
fn a_rigid_tendons_contraction_state_is_left_out() {
    let c = load("models/forward/elbow.toml");
    let mut muscles = c.muscles.clone();
    muscles[0].hill.params.tendon = mollier_sim::Tendon::Rigid;
    let sys = Musculoskeletal::new(&c.model, muscles);
    let (x, u) = elbow_state(&sys, &c);
    let l = sys.layout();
    let mut ws = sys.workspace();
    let xd = sys.rates(&mut ws, &x, 0.0, &|_, w: &mut [f64]| w.copy_from_slice(&u)).expect("a rate");
    let (_, lin) = sys.consistent(&mut ws, &x, 0.0, &|_, w: &mut [f64]| w.copy_from_slice(&u), &xd).expect("a rate");
    let states = lin.state_matrix().expect("a state matrix").states;
    assert_eq!(states.len(), l.len() - 1);
    assert!(!states.contains(&l.s()), "the biceps' fibre follows its path");
    let worst = check(&sys, &x, &u, 1e-6);
    eprintln!("elbow, the biceps' tendon rigid: largest relative error of J {worst:.2e}");
}

#[test]
fn the_shoulders_state_matrix_is_the_rates_derivative() {
    let c = load("models/shoulder/shoulder-forward.toml");
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let l = sys.layout();
    let u: Vec<f64> = (0..l.m).map(|k| 0.05 + 0.3 * (0.5 + 0.5 * (k as f64 * 0.37).sin())).collect();
    let q: Vec<f64> = c.model.q0().iter().enumerate().map(|(i, q)| q + 0.03 * ((i as f64) * 1.3).cos()).collect();
    let rest = sys.rest_state(&mut sys.workspace(), &q, 0.0, &u).expect("a rest state");
    let mut x = rest.x;
    for i in 0..l.n {
        x[l.v() + i] = 0.5 * ((i as f64) * 0.9).cos();
    }
    for k in 0..l.m {
        x[l.s() + k] *= 1.0 + 0.002 * (k as f64).sin();
        x[l.a() + k] = 0.1 + 0.4 * (0.5 + 0.5 * (k as f64 * 0.53).cos());
    }
    let worst = check(&sys, &x, &u, 1e-5);
    eprintln!("shoulder: largest relative error of J {worst:.2e}");
}

/// Per accepted step its end time (s) and the limiting states of its attempts.
type Limits = Vec<(f64, Vec<Option<usize>>)>;

/// The elbow's flexion (`models/forward/elbow-excitations.csv`) to `t_end` (s) with `tol`.
fn limits(tol: mollier::Tolerances, t_end: f64) -> (mollier_sim::Layout, Limits) {
    let c = load("models/forward/elbow.toml");
    let ex = mollier::Excitations::read(&root().join("models/forward/elbow-excitations.csv"), &c).expect("excitations");
    let sys = Musculoskeletal::new(&c.model, c.muscles.clone());
    let mut ws = sys.forward_workspace();
    let u = |t: f64, w: &mut [f64]| ex.at(t, w);
    let mut w = vec![0.0; sys.layout().m];
    ex.at(0.0, &mut w);
    let start = sys.rest_state(&mut ws, &c.model.q0(), 0.0, &w).expect("a rest state");
    let mut a = mollier_sim::Adaptive::new(&sys, &mut ws, &start, &u, tol).expect("it starts");
    let mut out = Vec::new();
    while a.state().t < t_end {
        let rejected = a.stats().rejected;
        a.step(&sys, &mut ws, &u).expect("a step");
        assert_eq!(a.limiting_states().len(), a.stats().rejected - rejected + 1, "one per attempt");
        out.push((a.state().t, a.limiting_states().to_vec()));
    }
    // the counts by kind are the attempts' limiting states
    let (l, st) = (sys.layout(), a.stats());
    let mut by = [[0usize; 4]; 2];
    for (_, w) in &out {
        for (j, i) in w.iter().enumerate() {
            by[usize::from(j + 1 == w.len())][l.kind(i.expect("no failed stage")) as usize] += 1;
        }
    }
    assert_eq!((by[1], by[0]), (st.limited_by, st.rejected_by));
    (sys.layout(), out)
}

/// The state the tolerance holds tightest limits the steps: with the activations' absolute
/// tolerance 1e-6 and the others' 1 every attempt once the biceps' excitation rises (0.1 s) is
/// limited by an activation; swapped, none is.
#[test]
fn the_limiting_state_is_the_one_held_tightest() {
    for (atol, atol_activation, activations) in [(1.0, 1e-6, true), (1e-6, 1.0, false)] {
        let tol =
            mollier::Tolerances { rtol: 1e-4, atol, atol_activation: Some(atol_activation), ..Default::default() };
        let (l, steps) = limits(tol, 0.4);
        let after = steps.iter().filter(|(t, _)| !activations || *t > 0.1005);
        let states: Vec<usize> = after.flat_map(|(_, w)| w.iter().map(|i| i.expect("no failed stage"))).collect();
        assert!(states.len() > 20, "{} attempts", states.len());
        assert!(
            states.iter().all(|&i| (i >= l.a()) == activations),
            "activations' tolerance {atol_activation}: {:?}",
            states
        );
    }
}
