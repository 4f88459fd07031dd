//! First- and second-order transfer functions against central differences of the kernel's own
//! Newton-Raphson solutions.

use mollier_core::{Data, Model, n_pairs, pair_index, solve_positions, transfer};
use mollier_tests::{FourBar, Rssr, SliderCrank, spherical_joint};

fn solved(model: &Model, q: &[f64]) -> Data {
    let mut data = Data::new(model);
    solve_positions(model, &mut data, q).unwrap();
    data
}

fn rel_err(a: &[f64], b: &[f64]) -> f64 {
    let scale = a.iter().chain(b).fold(0.0f64, |m, v| m.max(v.abs())).max(1e-3);
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

/// Checks DF^x, DF^e, D²F^x and D²F^e at `q` with steps `h`; returns the largest relative errors.
fn check(model: &Model, q: &[f64], h: f64) -> [f64; 4] {
    let (nx, ne, nq) = (model.n_x(), model.n_e(), model.n_q());
    let mut base = solved(model, q);
    transfer::second_order(model, &mut base).unwrap();
    let mut worst = [0.0f64; 4];
    for j in 0..nq {
        let mut qp = q.to_vec();
        let mut qm = q.to_vec();
        qp[j] += h;
        qm[j] -= h;
        let mut dp = solved(model, &qp);
        let mut dm = solved(model, &qm);
        transfer::first_order(model, &mut dp).unwrap();
        transfer::first_order(model, &mut dm).unwrap();
        let fdx: Vec<f64> = (0..nx).map(|i| (dp.x()[i] - dm.x()[i]) / (2.0 * h)).collect();
        let dfx: Vec<f64> = (0..nx).map(|i| base.df_x()[(i, j)]).collect();
        let fde: Vec<f64> = (0..ne).map(|i| (dp.e()[i] - dm.e()[i]) / (2.0 * h)).collect();
        let dfe: Vec<f64> = (0..ne).map(|i| base.df_e()[(i, j)]).collect();
        worst[0] = worst[0].max(rel_err(&fdx, &dfx));
        worst[1] = worst[1].max(rel_err(&fde, &dfe));
        for i in 0..nq {
            let p = pair_index(i, j, nq);
            let fd2x: Vec<f64> = (0..nx).map(|r| (dp.df_x()[(r, i)] - dm.df_x()[(r, i)]) / (2.0 * h)).collect();
            let d2x: Vec<f64> = (0..nx).map(|r| base.d2f_x()[(r, p)]).collect();
            let fd2e: Vec<f64> = (0..ne).map(|r| (dp.df_e()[(r, i)] - dm.df_e()[(r, i)]) / (2.0 * h)).collect();
            let d2e: Vec<f64> = (0..ne).map(|r| base.d2f_e()[(r, p)]).collect();
            worst[2] = worst[2].max(rel_err(&fd2x, &d2x));
            worst[3] = worst[3].max(rel_err(&fd2e, &d2e));
        }
    }
    assert_eq!(base.d2f_x().ncols(), n_pairs(nq));
    worst
}

fn assert_small(name: &str, w: [f64; 4]) {
    assert!(w.iter().all(|e| *e < 1e-6), "{name}: DF^x, DF^e, D²F^x, D²F^e relative errors {w:?}");
}

#[test]
fn four_bar_transfer_functions() {
    let (model, _, _) = FourBar::crank_rocker().model();
    for q in [0.2, 1.7, 4.0] {
        assert_small("four-bar", check(&model, &[q], 1e-4));
    }
}

#[test]
fn slider_crank_transfer_functions() {
    let (model, _) = SliderCrank { r: 0.15, l: 0.5, theta0: 0.4 }.model(false);
    assert_small("slider-crank", check(&model, &[0.9], 1e-4));
    // driven by the slider instead, the crank free
    let (model, _) = SliderCrank { r: 0.15, l: 0.5, theta0: 0.4 }.model(true);
    let x = model.q0()[0];
    assert_small("slider-driven", check(&model, &[x - 0.02], 1e-5));
}

#[test]
fn spherical_joint_transfer_functions() {
    let (model, _) = spherical_joint();
    assert_small("spherical", check(&model, &[0.4, -0.7, 1.1], 1e-4));
}

#[test]
fn spatial_loop_transfer_functions() {
    let (model, _, _) = Rssr::example().model();
    for q in [0.5, 2.5] {
        assert_small("rssr", check(&model, &[q], 1e-4));
    }
}

#[test]
fn predictor_cuts_newton_iterations() {
    use mollier_core::{NewtonOptions, Predictor, solve_positions_with};
    let (model, _, _) = FourBar::crank_rocker().model();
    let count = |predictor| {
        let mut data = Data::new(&model);
        // Newton-Raphson, not the closed-form placement of a chain
        data.set_tree_path(false);
        let opts = NewtonOptions { predictor, ..NewtonOptions::default() };
        (1..=36)
            .map(|k| solve_positions_with(&model, &mut data, &[k as f64 * 0.1], &opts).unwrap().iterations)
            .sum::<usize>()
    };
    let (none, first, second) = (count(Predictor::None), count(Predictor::FirstOrder), count(Predictor::SecondOrder));
    assert!(second < first && first < none, "iterations: none {none}, first {first}, second {second}");
}

/// The third-order predictor (the default) fits the motion through the solution before the last
/// one: fewer Newton iterations than the second-order predictor along a line and along a curve,
/// and the same solutions.
#[test]
fn third_order_predictor_cuts_newton_iterations() {
    use mollier_core::{NewtonOptions, Predictor, solve_positions_with};
    use mollier_tests::{Points, chain_by};
    let model = chain_by(6, 0.1, Points::Attached);
    for bend in [0.0, 1e-4] {
        let q = |k: usize| -> Vec<f64> {
            let k = k as f64;
            (0..model.n_q()).map(|j| 0.05 * ((j % 5) as f64 - 2.0) + 0.01 * k + bend * (j % 3) as f64 * k * k).collect()
        };
        let run = |predictor| {
            let mut data = Data::new(&model);
            // Newton-Raphson, not the closed-form placement of a chain
            data.set_tree_path(false);
            let opts = NewtonOptions { predictor, ..NewtonOptions::default() };
            let mut iterations = 0;
            let mut xs = Vec::new();
            for k in 0..20 {
                iterations += solve_positions_with(&model, &mut data, &q(k), &opts).unwrap().iterations;
                xs.push(data.x().to_vec());
            }
            (iterations, xs)
        };
        let ((second, xs2), (third, xs3)) = (run(Predictor::SecondOrder), run(Predictor::ThirdOrder));
        assert!(third < second, "bend {bend}: iterations second {second}, third {third}");
        for (a, b) in xs2.iter().zip(&xs3) {
            assert!(rel_err(a, b) < 1e-12, "bend {bend}: {}", rel_err(a, b));
        }
    }
}

/// The fourth-order term (the default predictor) fits the motion through the two solutions
/// before the last one where they lie on the step's line: along a line of a chain's inputs, walked
/// forth and back with steps that grow and shrink, fewer Newton iterations and chord steps than
/// the third-order predictor, and the same solutions.
#[test]
fn fourth_order_predictor_cuts_newton_iterations_along_a_line() {
    use mollier_core::{NewtonOptions, Predictor, solve_positions_with};
    use mollier_tests::{Points, chain_by};
    let model = chain_by(6, 0.1, Points::Attached);
    let q = |k: usize| -> Vec<f64> {
        // along a fixed direction, 20 frames forth and back, the step varying as a motion's
        let i = if k % 40 < 20 { k % 40 } else { 40 - k % 40 } as f64;
        let s = 0.02 * i - 0.0004 * i * i;
        (0..model.n_q()).map(|j| 0.05 * ((j % 5) as f64 - 2.0) + s * (1.0 + 0.3 * j as f64)).collect()
    };
    let run = |predictor| {
        let mut data = Data::new(&model);
        // Newton-Raphson, not the closed-form placement of a chain
        data.set_tree_path(false);
        let opts = NewtonOptions { predictor, ..NewtonOptions::default() };
        let (mut steps, mut xs) = (0, Vec::new());
        for k in 0..60 {
            let r = solve_positions_with(&model, &mut data, &q(k), &opts).unwrap();
            steps += r.iterations + r.chord_steps;
            xs.push(data.x().to_vec());
        }
        (steps, xs)
    };
    let ((third, xs3), (fourth, xs4)) = (run(Predictor::ThirdOrder), run(Predictor::FourthOrder));
    assert!(4 * fourth < 3 * third, "steps third {third}, fourth {fourth}");
    for (a, b) in xs3.iter().zip(&xs4) {
        assert!(rel_err(a, b) < 1e-12, "{}", rel_err(a, b));
    }
}

/// Near the solution, a step with the previous iterate's factors (a chord step) replaces a Newton
/// step: along a motion some solves take one, none takes more iterations for it, and the
/// solutions and their transfer functions are those of Newton's method to round-off — and, for
/// the four-bar, Freudenstein's closed form of the rocker's angle and its rate.
#[test]
fn chord_steps_end_where_newton_steps_do() {
    use crate::closed_form::{angle_and_derivatives, unwrap_to};
    use mollier_core::{NewtonOptions, solve_positions_with};
    let fb = FourBar::crank_rocker();
    let (model, c, d) = fb.model();
    let mut data = Data::new(&model);
    // Newton-Raphson, not the closed-form placement of a chain
    data.set_tree_path(false);
    let (cx, cy) = (model.coord_id(c, 0).index(), model.coord_id(c, 1).index());
    let (mut chords, mut worst) = (0, [0.0f64; 2]);
    for k in 0..30 {
        // the motion of `chord_and_newton_agree` (along a line the predictor is exact enough)
        let t = k as f64 * 0.15;
        let q = t + 0.3 * t.sin();
        chords += solve_positions_with(&model, &mut data, &[q], &NewtonOptions::default()).unwrap().chord_steps;
        transfer::first_order(&model, &mut data).unwrap();
        let (t4, dt4, _) = fb.theta4_derivatives(fb.theta0 + q);
        let (p, o) = (data.position(&model, c), data.position(&model, d));
        let (a, g, _) = angle_and_derivatives(p[0] - o[0], p[1] - o[1]);
        let rate = g[0] * data.df_x()[(cx, 0)] + g[1] * data.df_x()[(cy, 0)];
        worst = [worst[0].max((unwrap_to(a, t4) - t4).abs()), worst[1].max((rate - dt4).abs())];
    }
    assert!(chords > 0 && worst.iter().all(|w| *w < 1e-12), "{chords} chord steps; angle, rate errors {worst:?}");
    chord_and_newton_agree();
}

/// Along a chain's and a four-bar's motions, with and without chord steps: some taken, never
/// more iterations, positions within 1e-13 and `DF_x` within 1e-12.
fn chord_and_newton_agree() {
    use mollier_core::{NewtonOptions, solve_positions_with};
    use mollier_tests::{Points, chain_by};
    let chain = chain_by(6, 0.1, Points::Attached);
    let (four_bar, _, _) = FourBar::crank_rocker().model();
    for (name, model, step) in [("chain", &chain, 0.08), ("four-bar", &four_bar, 0.15)] {
        let q = |k: usize| -> Vec<f64> {
            let t = k as f64 * step;
            (0..model.n_q()).map(|j| t + 0.3 * (t * (1.0 + j as f64)).sin()).collect()
        };
        let run = |chord| {
            let mut data = Data::new(model);
            // Newton-Raphson, not the closed-form placement of a chain
            data.set_tree_path(false);
            let opts = NewtonOptions { chord, ..NewtonOptions::default() };
            let (mut iterations, mut chords, mut solutions) = (0, 0, Vec::new());
            for k in 0..30 {
                let r = solve_positions_with(model, &mut data, &q(k), &opts).unwrap();
                iterations += r.iterations;
                chords += r.chord_steps;
                transfer::first_order(model, &mut data).unwrap();
                let df: Vec<f64> = (0..model.n_x()).map(|i| data.df_x()[(i, 0)]).collect();
                solutions.push((data.x().to_vec(), df));
            }
            (iterations, chords, solutions)
        };
        let ((newton, none, a), (with, chords, b)) = (run(false), run(true));
        assert_eq!(none, 0);
        assert!(chords > 0 && with <= newton, "{name}: {chords} chord steps, iterations {with} against {newton}");
        for ((xa, da), (xb, db)) in a.iter().zip(&b) {
            assert!(
                rel_err(xa, xb) < 1e-13 && rel_err(da, db) < 1e-12,
                "{name}: {} {}",
                rel_err(xa, xb),
                rel_err(da, db)
            );
        }
    }
}
