//! A 1-DOF planar joint with 2, 3 and 4 muscles: every criterion against its closed-form
//! optimum, with the moment arms and lengths computed by hand from the geometry.
//!
//! Closed forms for `Σ r_i F_i = M` (M > 0) over the agonists (r_i > 0), antagonists at 0:
//! - (a) `F_i = r_i M / Σ r_j²`; (b) `F_i = A_i² r_i M / Σ A_j² r_j²`;
//! - (c) `F_i = Fmax_i² r_i M / Σ Fmax_j² r_j²`; weighted `F_i = (r_i/w_i) M / Σ r_j²/w_j`;
//! - (d) strict (slack 0): `F_i = A_i t`, `t = M / Σ A_j r_j`; with slack δ: `F_i = A_i s_i`,
//!   `s_i = min(μ A_i r_i, (1 + δ) t)`, μ from the moment (least `Σ s²` under the cap, KKT);
//! - (cb) `Σ (F/A)³` (Crowninshield & Brand): `3 F_i²/A_i³ = λ r_i`, so
//!   `F_i = A_i^{3/2} √r_i M / Σ A_j^{3/2} r_j^{3/2}`;
//! - with muscle s saturated: the same over the others with `M − r_s Fmax_s`.

use mollier_core::dynamics::Load;
use mollier_core::{Data, solve_positions};
use mollier_optim::{Criterion, FrameResult, LoadSharing, Muscle, Reserve, Study};

use crate::common::*;

const Q: f64 = 0.3;
const LOAD: [f64; 3] = [0.0, -20.0, 0.0];

fn origins() -> Vec<[f64; 3]> {
    vec![[-0.05, 0.20, 0.0], [0.02, 0.25, 0.0], [0.0, -0.2, 0.0], [0.05, 0.15, 0.0]]
}
fn insertions() -> Vec<[f64; 3]> {
    vec![[0.10, 0.02, 0.0], [0.15, -0.01, 0.0], [0.05, 0.0, 0.0], [0.2, 0.015, 0.0]]
}

struct Case {
    arm: Arm,
    pcsa: Vec<f64>,
    lopt: Vec<Option<f64>>,
    /// Tendon slack lengths (m): the force-length curve takes `l − slack`.
    slack: Vec<f64>,
}

impl Case {
    fn new(which: &[usize], pcsa: &[f64]) -> Self {
        let o: Vec<_> = which.iter().map(|&i| origins()[i]).collect();
        let ins: Vec<_> = which.iter().map(|&i| insertions()[i]).collect();
        Self {
            arm: arm(&o, &ins, [0.3, 0.0, 0.0], false),
            pcsa: pcsa.to_vec(),
            lopt: vec![None; which.len()],
            slack: vec![0.0; which.len()],
        }
    }

    fn muscles(&self) -> Vec<Muscle> {
        (0..self.pcsa.len())
            .map(|i| {
                let m = Muscle::new(self.arm.muscles[i], self.pcsa[i], self.arm.l0[i]).with_tendon_slack(self.slack[i]);
                match self.lopt[i] {
                    Some(l) => m.with_optimal_length(l),
                    None => m,
                }
            })
            .collect()
    }

    fn solve(&self, study: Study) -> FrameResult {
        let sharing = LoadSharing::new(&self.arm.model, study).unwrap();
        let mut data = Data::new(&self.arm.model);
        solve_positions(&self.arm.model, &mut data, &[Q]).unwrap();
        let mut ws = sharing.workspace();
        let load = [Load::Force { node: self.arm.tip, force: LOAD }];
        let r = sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &load);
        assert!(r.status.is_success(), "{}", r.status);
        r
    }

    /// Hand values at Q: lengths, moment arms, Fmax(l), required moment.
    fn hand(&self) -> (Vec<f64>, Vec<f64>, Vec<f64>, f64) {
        let (len, r, _) = self.arm.planar(Q);
        let fmax = (0..len.len())
            .map(|i| {
                let lo = self.lopt[i].unwrap_or(self.arm.l0[i]);
                self.pcsa[i] * T * (-((len[i] - self.slack[i] - lo) / (W * lo)).powi(2)).exp()
            })
            .collect();
        (len, r, fmax, self.arm.holding_moment(Q, &LOAD))
    }
}

/// `F_i = c_i r_i λ` over the muscles with `r_i > 0` and `i ∉ saturated`, `λ` from the moment.
fn proportional(r: &[f64], c: &[f64], m: f64, saturated: &[(usize, f64)]) -> Vec<f64> {
    let rest = m - saturated.iter().map(|&(s, f)| r[s] * f).sum::<f64>();
    let free = |i: usize| r[i] > 0.0 && !saturated.iter().any(|&(s, _)| s == i);
    let den: f64 = (0..r.len()).filter(|&i| free(i)).map(|i| c[i] * r[i] * r[i]).sum();
    (0..r.len())
        .map(|i| match saturated.iter().find(|&&(s, _)| s == i) {
            Some(&(_, f)) => f,
            None if free(i) => c[i] * r[i] * rest / den,
            None => 0.0,
        })
        .collect()
}

fn assert_forces(what: &str, got: &[f64], want: &[f64]) {
    assert_forces_within(what, got, want, 1e-9);
}

fn assert_forces_within(what: &str, got: &[f64], want: &[f64], tol: f64) {
    let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let d = rel_diff(got, want, scale);
    assert!(d < tol, "{what}: got {got:?}, want {want:?} (relative {d:.1e})");
}

fn check_all_criteria(case: &Case) {
    let (_, r, fmax, m) = case.hand();
    assert!(m > 0.0);
    let a = &case.pcsa;
    let k = r.len();
    // (a)
    let got = case.solve(Study::new(case.muscles(), Criterion::Forces));
    assert_forces("(a)", &got.forces, &proportional(&r, &vec![1.0; k], m, &[]));
    assert_forces("Fmax(l)", &got.max_forces, &fmax);
    // (b)
    let got = case.solve(Study::new(case.muscles(), Criterion::Stresses));
    let c: Vec<f64> = a.iter().map(|v| v * v).collect();
    assert_forces("(b)", &got.forces, &proportional(&r, &c, m, &[]));
    // (c)
    let got = case.solve(Study::new(case.muscles(), Criterion::Activations));
    let c: Vec<f64> = fmax.iter().map(|v| v * v).collect();
    assert_forces("(c)", &got.forces, &proportional(&r, &c, m, &[]));
    // (cb): clarabel's answer on the power cones, polished to its optimality conditions
    let got = case.solve(Study::new(case.muscles(), Criterion::CubedStresses));
    let share: Vec<f64> = (0..k).map(|i| if r[i] > 0.0 { a[i].powf(1.5) * r[i].sqrt() } else { 0.0 }).collect();
    let den: f64 = (0..k).map(|i| share[i] * r[i]).sum();
    let want: Vec<f64> = share.iter().map(|s| s * m / den).collect();
    // (clarabel alone: 1e-9 of the closed form, and 1e-6 with other round-off in the kernel)
    assert_forces_within("(cb)", &got.forces, &want, 1e-12);
    let cubes: f64 = (0..k).map(|i| (want[i] / a[i]).powi(3)).sum();
    assert!((got.objective.unwrap() - cubes).abs() < 1e-12 * cubes, "{:?} vs {cubes}", got.objective);
    // weighted
    let w: Vec<f64> = (0..k).map(|i| 1.0 + i as f64).collect();
    let got = case.solve(Study::new(case.muscles(), Criterion::Weighted(w.clone())));
    let c: Vec<f64> = w.iter().map(|v| 1.0 / v).collect();
    assert_forces("weighted", &got.forces, &proportional(&r, &c, m, &[]));
    // (d), strict: F_i = A_i t
    let got = case.solve(strict(Study::new(case.muscles(), Criterion::MaxStress)));
    let t = m / (0..k).filter(|&i| r[i] > 0.0).map(|i| a[i] * r[i]).sum::<f64>();
    let want: Vec<f64> = (0..k).map(|i| if r[i] > 0.0 { a[i] * t } else { 0.0 }).collect();
    assert_forces("(d)", &got.forces, &want);
    assert!((got.objective.unwrap() - t).abs() < 1e-6 * t, "max stress {} vs {t}", got.objective.unwrap());
    // every frame is in equilibrium by the independent kinetostatics
    assert!(got.residual.unwrap() < 1e-10 * m);
}

#[test]
fn criterion_c_takes_the_fibre_length() {
    // two agonists with tendons: 40 % and 60 % of each element's length at rest is tendon, the
    // fibres' optimal length 0.9 of the rest. Criterion (c)'s KKT optimum is
    // F_i = Fmax_i(l)² r_i M / Σ Fmax_j(l)² r_j² with Fmax on the fibre length, and not the one
    // with Fmax on the whole length against the same optimal length.
    let mut case = Case::new(&[0, 1], &[3e-4, 5e-4]);
    case.slack = vec![0.4 * case.arm.l0[0], 0.6 * case.arm.l0[1]];
    case.lopt = vec![Some(0.9 * 0.6 * case.arm.l0[0]), Some(0.9 * 0.4 * case.arm.l0[1])];
    let (len, r, fmax, m) = case.hand();
    let got = case.solve(Study::new(case.muscles(), Criterion::Activations));
    assert_forces("Fmax(l) of the fibres", &got.max_forces, &fmax);
    let c: Vec<f64> = fmax.iter().map(|v| v * v).collect();
    let want = proportional(&r, &c, m, &[]);
    assert_forces("(c)", &got.forces, &want);
    // the whole length against the fibres' optimum would give a third of the force or less:
    // the test can tell them apart
    let whole: Vec<f64> = (0..2)
        .map(|i| {
            let lo = case.lopt[i].unwrap();
            case.pcsa[i] * T * (-((len[i] - lo) / (W * lo)).powi(2)).exp()
        })
        .collect();
    assert!(whole.iter().zip(&fmax).all(|(w, f)| *w < 0.5 * f), "{whole:?} vs {fmax:?}");
    assert!(got.residual.unwrap() < 1e-10 * m);
}

#[test]
fn two_agonists_every_criterion() {
    let case = Case::new(&[0, 1], &[3e-4, 5e-4]);
    check_all_criteria(&case);
}

#[test]
fn two_agonists_and_an_antagonist_every_criterion() {
    let mut case = Case::new(&[0, 1, 2], &[3e-4, 5e-4, 4e-4]);
    // a muscle away from its optimal length: g(l) < 1 weighs criterion (c)
    case.lopt[1] = Some(0.6 * case.arm.l0[1]);
    let (_, r, fmax, _) = case.hand();
    assert!(r[0] > 0.0 && r[1] > 0.0 && r[2] < 0.0, "moment arms {r:?}");
    assert!(fmax[1] < 0.9 * case.pcsa[1] * T);
    check_all_criteria(&case);
}

#[test]
fn three_agonists_every_criterion() {
    let case = Case::new(&[0, 1, 3], &[3e-4, 5e-4, 2e-4]);
    let (_, r, _, _) = case.hand();
    assert!(r.iter().all(|v| *v > 0.0), "moment arms {r:?}");
    check_all_criteria(&case);
}

/// Criterion (d) without slack: the strict lexicographic optimum.
fn strict(mut s: Study) -> Study {
    s.max_stress_slack = 0.0;
    s
}

#[test]
fn criterion_d_with_slack_is_the_least_sum_of_squares_under_the_relaxed_cap() {
    // three agonists, one antagonist; stage 1 gives t, stage 2 s_i = min(μ A_i r_i, (1 + δ) t)
    let case = Case::new(&[0, 1, 2, 3], &[3e-4, 5e-4, 4e-4, 2e-4]);
    let (_, r, _, m) = case.hand();
    let a = &case.pcsa;
    let t = m / (0..4).filter(|&i| r[i] > 0.0).map(|i| a[i] * r[i]).sum::<f64>();
    for delta in [0.0, 0.001, 0.01, 0.1] {
        let cap = (1.0 + delta) * t;
        // active set by hand: cap the muscles whose unconstrained share exceeds it, until none
        let mut capped = [false; 4];
        let s = loop {
            let rest = m - (0..4).filter(|&i| capped[i]).map(|i| a[i] * r[i] * cap).sum::<f64>();
            let mu = rest / (0..4).filter(|&i| !capped[i] && r[i] > 0.0).map(|i| (a[i] * r[i]).powi(2)).sum::<f64>();
            let s: Vec<f64> = (0..4).map(|i| if capped[i] { cap } else { (mu * a[i] * r[i]).max(0.0) }).collect();
            match (0..4).find(|&i| !capped[i] && s[i] > cap) {
                Some(i) => capped[i] = true,
                None => break s,
            }
        };
        let mut study = Study::new(case.muscles(), Criterion::MaxStress);
        study.max_stress_slack = delta;
        let got = case.solve(study);
        let want: Vec<f64> = (0..4).map(|i| a[i] * s[i]).collect();
        // two interior-point solves in sequence: ~1e-9 each (docs/theory/optimization.md)
        let d = rel_diff(&got.forces, &want, want.iter().fold(0.0f64, |m, v| m.max(v.abs())));
        assert!(d < 1e-8, "(d), δ = {delta}: got {:?}, want {want:?} (relative {d:.1e})", got.forces);
        let top = (0..4).map(|i| got.forces[i] / a[i]).fold(0.0, f64::max);
        assert!(top <= cap * (1.0 + 1e-8), "δ = {delta}: max stress {top} above (1 + δ) t = {cap}");
        if delta > 0.0 {
            // the precondition of a test that can fail: the slack changes the forces
            assert!(capped.iter().any(|c| *c) && s.iter().any(|v| *v > 0.0 && *v < cap), "δ = {delta}: {s:?}");
        }
    }
}

#[test]
fn saturated_muscle_criteria_a_and_d() {
    // muscle 1 has the largest moment arm but little PCSA: it saturates at Fmax(l)
    let case = Case::new(&[0, 1, 3], &[3e-4, 1e-5, 2e-4]);
    let (_, r, fmax, m) = case.hand();
    // (a): the unbounded optimum wants more than Fmax from muscle 1
    let want = proportional(&r, &[1.0; 3], m, &[(1, fmax[1])]);
    let lambda = want[0] / r[0];
    assert!(lambda * r[1] > fmax[1], "precondition: muscle 1 saturates");
    let got = case.solve(Study::new(case.muscles(), Criterion::Forces));
    assert_forces("(a) saturated", &got.forces, &want);
    // (d): saturation comes from the force-length curve: muscle 1 far from its optimal length
    let mut case = Case::new(&[0, 1, 3], &[3e-4, 5e-4, 2e-4]);
    case.lopt[1] = Some(0.4 * case.arm.l0[1]);
    let (_, r, fmax, m) = case.hand();
    let a = &case.pcsa;
    let t = (m - r[1] * fmax[1]) / (r[0] * a[0] + r[2] * a[2]);
    assert!(a[1] * t > fmax[1], "precondition: muscle 1 saturates under (d)");
    let got = case.solve(strict(Study::new(case.muscles(), Criterion::MaxStress)));
    assert_forces("(d) saturated", &got.forces, &[a[0] * t, fmax[1], a[2] * t]);
    let s0 = got.forces[0] / a[0];
    let s2 = got.forces[2] / a[2];
    assert!((s0 - s2).abs() < 1e-9 * s0, "equal stresses of the unsaturated muscles: {s0} vs {s2}");
    assert!(got.forces[1] / a[1] < s0, "the saturated one is below the common stress");
}

#[test]
fn an_expensive_reserve_covers_what_the_muscles_cannot() {
    // the load is beyond the muscles: without a reserve the frame is infeasible, with an
    // expensive one all muscles saturate and the reserve gives the rest. Its cost w C (r/ρ)²,
    // C = max Fmax² (criterion (a)), ρ = max(max r_i Fmax_i, M) the input's scale.
    // KKT: 2 F_i = λ r_i (unsaturated), 2 w C r/ρ² = λ  ⇒  saturated when w C r r_i/ρ² > Fmax_i
    let case = Case::new(&[0, 1], &[1e-5, 1e-5]);
    let (_, r, fmax, m) = case.hand();
    assert!(r[0] * fmax[0] + r[1] * fmax[1] < 0.5 * m, "precondition: the muscles are too weak");
    let sharing = LoadSharing::new(&case.arm.model, Study::new(case.muscles(), Criterion::Forces)).unwrap();
    let mut data = Data::new(&case.arm.model);
    solve_positions(&case.arm.model, &mut data, &[Q]).unwrap();
    let load = [Load::Force { node: case.arm.tip, force: LOAD }];
    let mut ws = sharing.workspace();
    let res = sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &load);
    assert!(!res.status.is_success(), "{}", res.status);
    assert!(res.status.to_string().contains("Infeasible"), "{}", res.status);
    assert!(res.residual.unwrap() > 0.0 && res.residual.unwrap().is_finite());
    let weight = mollier_optim::RESERVE_WEIGHT;
    let mut study = Study::new(case.muscles(), Criterion::Forces);
    study.reserves = vec![Reserve { input: 0, weight }];
    let sharing = LoadSharing::new(&case.arm.model, study).unwrap();
    let mut ws = sharing.workspace();
    let res = sharing.solve_frame(&mut ws, &mut data, &[0.0], &[0.0], &load);
    assert!(res.status.is_success(), "{}", res.status);
    let reserve = m - r[0] * fmax[0] - r[1] * fmax[1];
    let c = fmax.iter().fold(0.0f64, |a, f| a.max(f * f));
    let rho = (0..2).map(|i| r[i] * fmax[i]).fold(m, f64::max);
    assert!((0..2).all(|i| weight * c * reserve * r[i] / (rho * rho) > fmax[i]), "precondition: both saturate");
    assert_forces("saturated muscles", &res.forces, &fmax);
    assert!((res.reserves[0] - reserve).abs() < 1e-9 * m, "reserve {} vs {reserve}", res.reserves[0]);
    let cost = fmax.iter().map(|f| f * f).sum::<f64>() + weight * c * (reserve / rho).powi(2);
    assert!((res.objective.unwrap() - cost).abs() < 1e-6 * cost);
}

#[test]
fn equal_stresses_under_criterion_d_with_several_muscles() {
    // four muscles, one antagonist: the three agonists share one F/PCSA
    let case = Case::new(&[0, 1, 2, 3], &[3e-4, 5e-4, 4e-4, 2e-4]);
    let r = case.solve(strict(Study::new(case.muscles(), Criterion::MaxStress)));
    let s: Vec<f64> = (0..4).map(|i| r.forces[i] / case.pcsa[i]).collect();
    assert!(s[2].abs() < 1e-9 * s[0], "the antagonist rests: {s:?}");
    for i in [1, 3] {
        assert!((s[i] - s[0]).abs() < 1e-9 * s[0], "equal stresses: {s:?}");
    }
    assert!(r.forces.iter().zip(&r.max_forces).all(|(f, m)| f < m), "unsaturated");
}
