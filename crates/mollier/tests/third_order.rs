//! The third-order transfer functions `D³F_x(v, v, e_k)` against central differences of
//! `D²F_x(v, v)` (the accelerations of the rates `v`), on every mechanism, joint and body model
//! and on the shoulder, at a configuration moved off the reference and with rates in every
//! input.

use std::path::PathBuf;

use faer::Mat;
use mollier_core::{Data, NewtonOptions, solve_positions_with, transfer, transfer3};

fn models() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut files = Vec::new();
    for dir in ["mechanisms", "joints", "body", "forward"] {
        for f in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = f.unwrap().path();
            if p.extension().is_some_and(|e| e == "toml") {
                files.push(p);
            }
        }
    }
    files.push(root.join("shoulder/shoulder-forward.toml"));
    files.sort();
    files
}

/// `D²F_x(v, v)` (n_x) at `q`, from `data` solved at the neighbouring configuration.
fn velocity_accelerations(model: &mollier_core::Model, data: &mut Data, q: &[f64], v: &[f64]) -> Vec<f64> {
    let opts = NewtonOptions { tolerance: 1e-13, ..NewtonOptions::default() };
    solve_positions_with(model, data, q, &opts).expect("the neighbouring configuration solves");
    transfer::accelerations(model, data, v, &vec![0.0; v.len()]).expect("accelerations");
    data.xdd().to_vec()
}

#[test]
fn third_order_transfer_functions_are_the_derivatives_of_the_second_order_ones() {
    let registry = mollier::registry();
    let mut checked = Vec::new();
    for path in models() {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let c = mollier::load(&path, &registry).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
        let model = &c.model;
        let nq = model.n_q();
        if nq == 0 || model.n_unknowns() == 0 {
            continue;
        }
        // moved off the reference (where many second derivatives vanish by symmetry)
        let q0 = model.q0();
        let q: Vec<f64> = q0.iter().enumerate().map(|(j, v)| v + 0.05 * ((j as f64 + 1.0) * 1.7).sin()).collect();
        let v: Vec<f64> = (0..nq).map(|j| 0.8 * ((j as f64 + 1.0) * 2.3).cos()).collect();
        let mut data = Data::new(model);
        let opts = NewtonOptions { tolerance: 1e-13, ..NewtonOptions::default() };
        solve_positions_with(model, &mut data, &q, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut d3 = Mat::<f64>::zeros(0, 0);
        transfer3::third_order(model, &mut data, &v, &mut d3).unwrap_or_else(|e| panic!("{name}: {e}"));
        let scale = (0..nq).flat_map(|k| d3.col_as_slice(k).to_vec()).fold(0.0f64, |m, a| m.max(a.abs()));
        let mut worst = 0.0f64;
        for k in 0..nq {
            // fourth-order central differences of D²F_x(v, v) along e_k
            let h = 1e-3;
            let side = |s: f64| {
                let mut qs = q.clone();
                qs[k] += s * h;
                let mut d = Data::new(model);
                solve_positions_with(model, &mut d, &q, &opts).expect("the configuration");
                velocity_accelerations(model, &mut d, &qs, &v)
            };
            let (p1, m1, p2, m2) = (side(1.0), side(-1.0), side(2.0), side(-2.0));
            for i in 0..model.n_x() {
                let fd = (8.0 * (p1[i] - m1[i]) - (p2[i] - m2[i])) / (12.0 * h);
                let err = (d3[(i, k)] - fd).abs() / scale.max(1e-12);
                worst = worst.max(err);
            }
        }
        println!("{name}: n_q {nq}, |D³F| up to {scale:.3e}, off central differences by {worst:.2e} of it");
        assert!(worst < 1e-7, "{name}: D³F off central differences by {worst:.2e} of its largest");
        checked.push((name, scale));
    }
    assert!(checked.len() >= 15, "{} models checked", checked.len());
    assert!(checked.iter().filter(|(_, s)| *s > 1e-3).count() >= 10, "D³F vanishes on most models: {checked:?}");
}

/// The muscles' path lengths to third order along rates `v` (`transfer3::mode_jets`), on the
/// elbow (two straight paths) and the shoulder (95 paths, 67 wrapping), at a configuration moved
/// off the reference: the first derivative is the kernel's `DF_e v`, the second and third the
/// fourth-order central differences of the first and second along `v`.
#[test]
fn the_paths_third_order_jets_are_the_derivatives_of_their_lower_orders() {
    let registry = mollier::registry();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models");
    for file in ["forward/elbow.toml", "shoulder/shoulder-forward.toml"] {
        let c = mollier::load(&root.join(file), &registry).unwrap_or_else(|d| panic!("{file}: {}", d.render()));
        let model = &c.model;
        let nq = model.n_q();
        let modes: Vec<_> = c.muscles.iter().map(|m| m.mode).collect();
        let q: Vec<f64> =
            model.q0().iter().enumerate().map(|(j, v)| v + 0.05 * ((j as f64 + 1.0) * 1.7).sin()).collect();
        let v: Vec<f64> = (0..nq).map(|j| 0.8 * ((j as f64 + 1.0) * 2.3).cos()).collect();
        let opts = NewtonOptions { tolerance: 1e-13, ..NewtonOptions::default() };
        let jets = |t: f64| {
            let qt: Vec<f64> = q.iter().zip(&v).map(|(a, b)| a + t * b).collect();
            let mut data = Data::new(model);
            solve_positions_with(model, &mut data, &qt, &opts).unwrap_or_else(|e| panic!("{file}: {e}"));
            let mut out = Vec::new();
            transfer3::mode_jets(model, &mut data, &v, &modes, &mut out).unwrap_or_else(|e| panic!("{file}: {e}"));
            transfer::first_order(model, &mut data).unwrap();
            let first: Vec<f64> = modes
                .iter()
                .map(|m| {
                    (0..nq).map(|k| data.df_e().col(k).try_as_col_major().unwrap().as_slice()[m.index()] * v[k]).sum()
                })
                .collect();
            (out, first)
        };
        let (at, first) = jets(0.0);
        let h = 1e-3;
        let (p1, m1, p2, m2) = (jets(h).0, jets(-h).0, jets(2.0 * h).0, jets(-2.0 * h).0);
        let fd = |o: usize, k: usize| (8.0 * (p1[k][o] - m1[k][o]) - (p2[k][o] - m2[k][o])) / (12.0 * h);
        let scale: [f64; 3] = [0, 1, 2].map(|o| at.iter().fold(1e-12f64, |s, j| s.max(j[o].abs())));
        let mut worst = [0.0f64; 3];
        for k in 0..modes.len() {
            worst[0] = worst[0].max((at[k][0] - first[k]).abs() / scale[0]);
            worst[1] = worst[1].max((at[k][1] - fd(0, k)).abs() / scale[1]);
            worst[2] = worst[2].max((at[k][2] - fd(1, k)).abs() / scale[2]);
        }
        println!("{file}: L', L'', L''' up to {scale:?}, off by {worst:?} of them");
        assert!(worst[0] < 1e-12, "{file}: L' off DF_e v by {:.2e}", worst[0]);
        // the differences' own error: 4.4e-13, 1.1e-13 on the elbow, 3.4e-11, 2.3e-10 on the
        // shoulder (its positions solved to 1e-13 over h = 1e-3, through nine hinges)
        let bound = if file.starts_with("shoulder") { 1e-9 } else { 1e-10 };
        assert!(worst[1] < bound && worst[2] < bound, "{file}: L'', L''' off their differences by {worst:?}");
        assert!(scale[2] > 1e-6, "{file}: L''' vanishes");
    }
}
