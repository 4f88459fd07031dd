//! The dynamics of imported models against OpenSim 4.6's (tools/peer_opensim_dynamics.py,
//! `tests/data/opensim_dynamics.json`): the mass matrix (Mollier's from the transfer functions,
//! `DF_xᵀ M DF_x`) and the inverse-dynamics generalized forces at random `(q, q̇, q̈)`, with the
//! model's gravity and with the model turned as a whole (its gravity turned the other way), for
//! the synthetic import models and DAS3. Both agree to 1e-9 of the largest entry. Where the
//! import documents a difference (an inertia no rigid body can have, left out: DAS3's clavicle)
//! the reference is computed with the same change and the import must report it; the models
//! OpenSim cannot serve for (quaternion mobilities, a constraint, velocities that are not the
//! derivatives of its own poses: `custom_linear`) are named with the reason by the script.
//!
//! Mollier's inputs are functions of OpenSim's coordinates (`input = f(q) − f(q₀)`: the
//! coordinate itself for most joints, the axis function of a custom joint), so the coordinates'
//! mass matrix is `Jᵀ M̄ J` with `J = ∂input/∂q`, their forces `Jᵀ τ`, and the inputs'
//! accelerations `J q̈ + f''(q) q̇²`.

use std::path::PathBuf;

use mollier_osim::Import;
use serde_json::Value;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// Each input's value, first and second derivative in its coordinate at `q` (coordinates' order):
/// fourth-order central differences, exact for the polynomial pieces of the axis functions
/// (linear, polynomials, cubic splines between their knots).
fn jets(imp: &Import, q: &[f64]) -> Vec<[f64; 3]> {
    let h = 1e-3;
    let at = |c: usize, d: f64| {
        let mut p = q.to_vec();
        p[c] += d;
        imp.inputs_from_coordinates(&p)
    };
    imp.inputs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let c = d.coordinate;
            let f: Vec<f64> = [-2.0, -1.0, 0.0, 1.0, 2.0].iter().map(|k| at(c, k * h)[i]).collect();
            let d1 = (f[0] - 8.0 * f[1] + 8.0 * f[3] - f[4]) / (12.0 * h);
            let d2 = (-f[0] + 16.0 * f[1] - 30.0 * f[2] + 16.0 * f[3] - f[4]) / (12.0 * h * h);
            [f[2], d1, d2]
        })
        .collect()
}

/// The largest differences of one model's mass matrices and generalized forces from OpenSim's,
/// each over the largest entry of OpenSim's.
fn compare(name: &str, imp: &Import, reference: &Value) -> [f64; 2] {
    // an inertia no rigid body can have is left out by the import, reported, and zeroed in the
    // reference likewise (DAS3's clavicle)
    for body in reference["inertia_left_out"].as_array().unwrap() {
        let body = body.as_str().unwrap();
        assert!(
            imp.report.entries.iter().any(|e| e.object == body && e.action.contains("inertia")),
            "{name}: the import does not report {body}'s inertia as left out"
        );
    }
    let coords: Vec<&str> = reference["coordinates"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    let names: Vec<&str> = imp.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(coords, names, "{name}: coordinates");
    let registry = mollier::registry();
    let line = imp.toml.lines().find(|l| l.starts_with("gravity = ")).expect("the imported model's gravity");
    let (n, ni) = (names.len(), imp.inputs.len());
    let mut worst = [0.0f64; 2];
    for sample in reference["samples"].as_array().unwrap() {
        let (q, qd, qdd) = (numbers(&sample["q"]), numbers(&sample["qd"]), numbers(&sample["qdd"]));
        let jet = jets(imp, &q);
        // J: input i depends on its coordinate only
        let jac = |i: usize, c: usize| if imp.inputs[i].coordinate == c { jet[i][1] } else { 0.0 };
        let y: Vec<f64> = jet.iter().map(|j| j[0]).collect();
        let yd: Vec<f64> = (0..ni).map(|i| jet[i][1] * qd[imp.inputs[i].coordinate]).collect();
        let ydd: Vec<f64> = (0..ni)
            .map(|i| {
                let c = imp.inputs[i].coordinate;
                jet[i][1] * qdd[c] + jet[i][2] * qd[c] * qd[c]
            })
            .collect();
        let want_m: Vec<Vec<f64>> = sample["mass_matrix"].as_array().unwrap().iter().map(numbers).collect();
        for (g, want_tau) in sample["gravity"].as_array().unwrap().iter().zip(sample["tau"].as_array().unwrap()) {
            let g = numbers(g);
            let text = imp.toml.replace(line, &format!("gravity = [{:?}, {:?}, {:?}]", g[0], g[1], g[2]));
            let doc = mollier_format::parse(&format!("{name}.toml"), &text).expect("the import checks its file");
            let compiled = mollier::compile(&doc, &registry).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
            let mut run = mollier::InverseDynamicsRun::new(&compiled);
            let tau_in = run.solve(&y, &yd, &ydd).unwrap_or_else(|e| panic!("{name} at {q:?}: {e}")).driving.clone();
            let mut data = mollier_core::Data::new(&compiled.model);
            mollier_core::solve_positions(&compiled.model, &mut data, &y).expect("the posture");
            let m_in = mollier_core::dynamics::mass_matrix(&compiled.model, &mut data).expect("a mass matrix");
            let scale_m = want_m.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
            for r in 0..n {
                for c in 0..n {
                    let ours: f64 = (0..ni)
                        .flat_map(|i| (0..ni).map(move |k| (i, k)))
                        .map(|(i, k)| jac(i, r) * m_in[(i, k)] * jac(k, c))
                        .sum();
                    worst[0] = worst[0].max((ours - want_m[r][c]).abs() / scale_m);
                }
            }
            let want_tau = numbers(want_tau);
            let scale_t = want_tau.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            for (c, want) in want_tau.iter().enumerate() {
                let ours: f64 = (0..ni).map(|i| jac(i, c) * tau_in[i]).sum();
                worst[1] = worst[1].max((ours - want).abs() / scale_t);
            }
        }
    }
    worst
}

fn reference() -> Value {
    let text = std::fs::read_to_string(data().join("opensim_dynamics.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn imported_models_have_opensims_mass_matrices_and_inverse_dynamics() {
    let reference = reference();
    let models = reference["models"].as_object().unwrap();
    let mut compared = 0;
    let mut failed = Vec::new();
    for (name, r) in models {
        if let Some(why) = r["left_out"].as_str() {
            eprintln!("{name:20} left out: {why}");
            continue;
        }
        let path = data().join(format!("osim/{name}.osim"));
        let imp = mollier_osim::import_path(&path).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
        let [m, tau] = compare(name, &imp, r);
        eprintln!("{name:20} mass matrix {m:.1e}, generalized forces {tau:.1e} (relative)");
        if !(m < 1e-9 && tau < 1e-9) {
            failed.push(format!("{name}: {m:.2e}, {tau:.2e}"));
        }
        compared += 1;
    }
    assert!(compared >= 9, "every joint and function type with q̇ = u: {compared}");
    assert!(failed.is_empty(), "{failed:?}");
}

#[test]
fn das3_has_opensims_mass_matrix_and_inverse_dynamics() {
    let path = mollier_core::shared_data::dir().join("das3/das3.osim");
    if !path.exists() {
        return mollier_core::shared_data::skip(
            "das3_has_opensims_mass_matrix_and_inverse_dynamics",
            "../shared/data/das3/das3.osim is absent: the reference data is not checked out",
        );
    }
    let reference = reference();
    let r = &reference["das3"];
    assert!(r["samples"].as_array().unwrap().len() >= 6);
    // the skeleton: the reference has every force switched off, and the muscles' paths, which
    // Mollier's curved truss refuses at postures with a path point inside an obstacle, play no
    // part in the mass matrix or in the generalized forces without forces
    let text = std::fs::read_to_string(&path).unwrap();
    let set = text.find("<ForceSet").expect("DAS3's ForceSet");
    let open = set + text[set..].find("<objects>").unwrap() + "<objects>".len();
    let close = set + text[set..].find("</ForceSet>").unwrap();
    let close = set + text[set..close].rfind("</objects>").unwrap();
    let skeleton = format!("{}{}", &text[..open], &text[close..]);
    let imp = mollier_osim::import("das3.osim", &skeleton).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(imp.model.muscles.is_empty());
    let [m, tau] = compare("das3", &imp, r);
    eprintln!("das3: mass matrix {m:.1e}, generalized forces {tau:.1e} (relative)");
    assert!(m < 1e-9 && tau < 1e-9, "mass matrix {m:.2e}, generalized forces {tau:.2e}");
}
