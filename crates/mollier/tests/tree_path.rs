//! The kernel's tree path of the transfer functions (`Model::tree_path`: each column of `DF`
//! solved over its input's subtree of `D_cc`'s blocks, each column of `D²F` over the subtree its
//! two inputs share) against the general solve of every column over the whole of `D_cc`, on
//! every model in `models/` and on OpenSim's gait and whole-body models where `tools/fetch-opensim-models`
//! fetched them: `DF` and `D²F` (coordinates and modes) agree to 1e-12 of their largest entry,
//! and so do the velocities, accelerations and driving forces of kinetostatics (on the tree path
//! outward by the recursion and inward over `D_cc`'s blocks without its factors).

use std::path::{Path, PathBuf};

use mollier_core::shared_data::opensim_models;

use mollier_core::dynamics::{
    driving_from_kinetostatics, element_forces, inverse_dynamics, kinetostatics, mass_matrix, stress_to_nodal,
};
use mollier_core::screws::Screws;
use mollier_core::transfer::{first_order, first_order_for_dynamics, second_order};
use mollier_core::{Data, ElementId, Input, Load, Model, NodeId, NodeKind, Quantity, solve_positions};

/// Largest difference allowed, relative to the largest entry of the matrix.
const RTOL: f64 = 1e-12;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The model files under `dir`, sorted.
fn model_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(dir).expect("models/ is readable").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            model_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "toml") {
            out.push(p);
        }
    }
}

/// A posture off the initial one (inputs moved by up to 0.05, in radians or as a fraction of
/// the model's size), else the initial one where that cannot be reached.
fn solve_off_initial(model: &Model, data: &mut Data) -> usize {
    let q0 = model.q0();
    solve_positions(model, data, &q0).expect("the initial configuration solves");
    let scale = model.length_scale();
    let q: Vec<f64> = q0
        .iter()
        .enumerate()
        .map(|(j, v)| {
            let step = 0.05 * (0.7 * j as f64 + 0.3).sin();
            // an input coordinate is a length; an input mode's quantity is its own
            let length = match model.inputs()[j] {
                Input::Coordinate(_) => true,
                Input::Mode(m) => model.mode_info(m).quantity == Quantity::Length,
            };
            v + if length { step * 0.1 * scale } else { step }
        })
        .collect();
    match solve_positions(model, data, &q) {
        Ok(r) => r.iterations,
        Err(_) => solve_positions(model, data, &q0).expect("the initial configuration solves").iterations,
    }
}

/// Largest difference of two matrices relative to the largest entry of the second, or to
/// `floor` when that is larger (a matrix of round-off only, such as `D²F_e` of a tree's joints).
fn relative(a: faer::MatRef<'_, f64>, b: faer::MatRef<'_, f64>, floor: f64) -> f64 {
    assert_eq!((a.nrows(), a.ncols()), (b.nrows(), b.ncols()));
    let mut diff = 0.0f64;
    for j in 0..a.ncols() {
        for i in 0..a.nrows() {
            diff = diff.max((a[(i, j)] - b[(i, j)]).abs());
        }
    }
    let size = largest(b).max(floor);
    if size == 0.0 { diff } else { diff / size }
}

/// Largest magnitude of the entries of `m`.
fn largest(m: faer::MatRef<'_, f64>) -> f64 {
    (0..m.ncols()).flat_map(|j| (0..m.nrows()).map(move |i| m[(i, j)].abs())).fold(0.0, f64::max)
}

/// `DF^x` (n_x x n_q) from the joints' screws at `data`'s solved configuration, or `None` where
/// the screws' pass has no closed form there.
fn screws_df_x(name: &str, model: &Model, data: &Data) -> Option<faer::Mat<f64>> {
    let mut screws = Screws::new();
    if !screws.compute(model, data).unwrap_or_else(|e| panic!("{name}: screws: {e}")) {
        return None;
    }
    let mut m = faer::Mat::zeros(model.n_x(), model.n_q());
    let mut rows = Vec::new();
    for (n, info) in model.nodes().iter().enumerate() {
        assert!(screws.coordinate_rows(model, data, NodeId::new(n), &mut rows));
        for (k, row) in rows.chunks_exact(model.n_q().max(1)).enumerate() {
            row.iter().enumerate().for_each(|(j, v)| m[(info.offset + k, j)] = *v);
        }
    }
    Some(m)
}

/// What [`compare`] found: the largest relative difference and which tree-path stages ran.
struct Compared {
    worst: f64,
    recursion: bool,
    inward: bool,
    screws: bool,
    /// `DF` (every muscle's moment arms) came from the joints' screws, not from solves.
    df_by_screws: bool,
}

/// Positions, `DF`, `D²F` and inverse dynamics by the tree paths (the position solve's closed-form
/// placement, the transfer functions' subtrees) and by the general path (Newton-Raphson, every
/// column over the whole of `D_cc`), each from the initial configuration to the same posture;
/// the largest relative difference and whether the tree path's velocities and accelerations
/// came from its recursion outward and its forces from the inward pass (no factors of `D_cc`),
/// and whether `DF^x` from the joints' screws was compared too, or `None` when the model has
/// neither tree path.
fn compare(name: &str, model: &Model, second: bool, placed_exactly: bool) -> Option<Compared> {
    if model.tree_path().is_none() && !model.places_in_closed_form() {
        return None;
    }
    let mut got = Vec::new();
    let (mut recursion, mut inward, mut by_screws) = ([false; 2], [false; 2], [false; 2]);
    let mut screws = None;
    for tree in [true, false] {
        let mut data = Data::new(model);
        data.set_tree_path(tree);
        let iterations = solve_off_initial(model, &mut data);
        // placed in closed form: accepted as it is, no Newton iteration
        assert!(
            !(placed_exactly && tree && model.places_in_closed_form()) || iterations == 0,
            "{name}: the placed positions took {iterations} Newton iterations"
        );
        let x = faer::Mat::from_fn(model.n_x(), 1, |i, _| data.x()[i]);
        // kinetostatics before any transfer function (the recursion needs none): velocities,
        // accelerations outward, the driving forces
        let n = model.n_q();
        let qd: Vec<f64> = (0..n).map(|j| 0.3 * (1.3 * j as f64 + 0.2).cos()).collect();
        let qdd: Vec<f64> = (0..n).map(|j| 0.8 * (0.9 * j as f64 + 0.5).sin()).collect();
        let column = |v: &[f64]| faer::Mat::from_fn(v.len(), 1, |i, _| v[i]);
        let mut rates = Vec::new();
        if let Ok(ks) = kinetostatics(model, &mut data, &qd, &qdd, None, &[]) {
            recursion[usize::from(!tree)] = data.rates_by_recursion();
            inward[usize::from(!tree)] = data.forces_by_recursion();
            let tau = driving_from_kinetostatics(model, &data, &ks);
            rates = vec![column(data.xd()), column(data.xdd()), column(data.ed()), column(&tau)];
        }
        // DF for the equations of motion first (on the tree path without the rows of the points
        // only the muscles read): its DF_e and the mass matrix; then the whole DF from there
        first_order_for_dynamics(model, &mut data, &[]).unwrap_or_else(|e| panic!("{name}: DF for dynamics: {e}"));
        let dynamic_dfe = data.df_e().to_owned();
        let mass = mass_matrix(model, &mut data).unwrap_or_else(|e| panic!("{name}: M̄: {e}"));
        // a force on each of the last three position nodes (the muscles' points where the model
        // has them): inverse dynamics then reads their rows of DF_x
        let loads: Vec<Load> = (model.nodes().iter().enumerate().rev())
            .filter(|(_, info)| info.kind == NodeKind::Position)
            .take(3)
            .map(|(n, _)| Load::Force { node: NodeId::new(n), force: [1.0, -2.0, 0.5] })
            .collect();
        let loaded = inverse_dynamics(model, &mut data, &qd, &qdd, &loads)
            .map_or_else(|_| faer::Mat::zeros(0, 0), |tau| column(&tau));
        first_order(model, &mut data).unwrap_or_else(|e| panic!("{name}: DF: {e}"));
        by_screws[usize::from(!tree)] = data.df_by_screws();
        if tree {
            screws = screws_df_x(name, model, &data);
        }
        let mut mats = vec![x, dynamic_dfe, mass, loaded, data.df_x().to_owned(), data.df_e().to_owned()];
        mats.extend(rates);
        if second {
            second_order(model, &mut data).unwrap_or_else(|e| panic!("{name}: D²F: {e}"));
            mats.extend([data.d2f_x().to_owned(), data.d2f_e().to_owned()]);
            // the driving forces of the same motion by DF
            if let Ok(tau) = inverse_dynamics(model, &mut data, &qd, &qdd, &[]) {
                mats.push(faer::Mat::from_fn(n, 1, |i, _| tau[i]));
            }
        }
        got.push(mats);
    }
    assert_eq!(got[0].len(), got[1].len(), "{name}: kinetostatics or inverse dynamics failed on one path only");
    // the model's own scale: its largest first-order transfer function (m or rad per input)
    let floor = largest(got[1][4].as_ref());
    let mut worst = 0.0f64;
    let what = [
        "x",
        "DF_e (for dynamics)",
        "M̄",
        "τ (forces on points)",
        "DF_x",
        "DF_e",
        "ẋ",
        "ẍ",
        "ė",
        "τ (kinetostatics)",
        "D²F_x",
        "D²F_e",
        "τ (DF)",
    ];
    for (what, (a, b)) in what.iter().zip(got[0].iter().zip(&got[1])) {
        // positions (Euler parameters: 1) and the mass matrix against their own largest entry,
        // the rest against the largest DF too
        let d = relative(a.as_ref(), b.as_ref(), if matches!(*what, "x" | "M̄") { 0.0 } else { floor });
        worst = worst.max(d);
        assert!(
            d <= RTOL,
            "{name}: {what} by the tree path differs from the general path by {d:.2e} of its largest entry"
        );
    }
    assert!(!recursion[1], "{name}: the general path took the tree path's recursion");
    assert!(!inward[1], "{name}: the general path took the tree path's inward pass");
    assert!(!by_screws[1], "{name}: the general path took DF from the screws");
    if let Some(s) = &screws {
        let d = relative(s.as_ref(), got[1][4].as_ref(), floor);
        worst = worst.max(d);
        assert!(d <= RTOL, "{name}: DF_x from the joints' screws differs from the general path's by {d:.2e}");
    }
    Some(Compared {
        worst,
        recursion: recursion[0],
        inward: inward[0],
        screws: screws.is_some(),
        df_by_screws: by_screws[0],
    })
}

#[test]
fn the_tree_path_gives_the_general_transfer_functions_on_every_model() {
    let registry = mollier::registry();
    let mut files = Vec::new();
    model_files(&root().join("models"), &mut files);
    let (mut compared, mut general) = (Vec::new(), Vec::new());
    for file in &files {
        let name = file.strip_prefix(root()).unwrap_or(file).display().to_string();
        // a study file names its model (`model = "..."`): not a model itself
        let Ok(c) = mollier::load(file, &registry) else {
            assert!(
                std::fs::read_to_string(file).is_ok_and(|t| t.lines().any(|l| l.starts_with("model = "))),
                "{name} is neither a model nor a study"
            );
            continue;
        };
        match compare(&name, &c.model, true, true) {
            Some(Compared { worst: d, recursion, inward, screws, df_by_screws }) => {
                let how = if c.model.places_in_closed_form() { ", positions placed" } else { "" };
                let forces = if inward { ", forces inward" } else { "" };
                let rates = if recursion { ", rates by recursion" } else { "" };
                let screws = match (screws, df_by_screws) {
                    (true, true) => ", screws, DF by screws",
                    (true, false) => ", screws",
                    _ => "",
                };
                compared.push((format!("{name}{how}{forces}{rates}{screws}"), d));
            }
            None => general.push(name),
        }
    }
    println!("tree path, largest relative difference of DF and D²F from the general solve:");
    for (name, d) in &compared {
        println!("  {name}: {d:.1e}");
    }
    println!("general path only: {}", general.join(", "));
    // the whole-body models are trees of hinges: they must take the tree path
    for body in ["huston17.toml", "huston17-hinges.toml", "fall.toml"] {
        assert!(compared.iter().any(|(n, _)| n.contains(body)), "models/body/{body} did not take the tree path");
    }
    // the free-standing bodies' positions in closed form (fall.toml hangs from a held foot:
    // its bodies' points are attached to the frames the other way, and it keeps Newton-Raphson)
    for body in ["huston17.toml", "huston17-hinges.toml"] {
        let c = mollier::load(&root().join("models/body").join(body), &registry).expect("a body model loads");
        assert!(c.model.places_in_closed_form(), "models/body/{body}: positions not placed in closed form");
        // and their velocities and accelerations outward by the recursion, the forces inward,
        // no solve and no factors of D_cc
        assert!(
            compared.iter().any(|(n, _)| n.contains(body) && n.contains("forces inward, rates by recursion")),
            "models/body/{body}: rates not by the recursion or forces not by the inward pass"
        );
        // and DF from the joints' screws, no solve
        assert!(
            compared.iter().any(|(n, _)| n.contains(body) && n.ends_with("DF by screws")),
            "models/body/{body}: DF not from the screws"
        );
    }
}

/// The gait models, and two whole-body ones with more than 32 inputs (Hamner's and Rajagopal's:
/// `DF`'s fill goes 32 columns at a time).
#[test]
fn the_tree_path_gives_the_general_transfer_functions_on_opensim_gait_models() {
    let dir = opensim_models();
    let registry = mollier::registry();
    let files = [
        "gait10dof18musc.osim",
        "gait2354_simbody.osim",
        "gait2392_thelen2003muscle.osim",
        "FullBodyModel_Hamner2010_v2_0.osim",
        "Rajagopal2016.osim",
    ];
    for file in files {
        let path = dir.join(file);
        if !path.is_file() {
            mollier_core::shared_data::skip(
                &format!("the_tree_path_gives_the_general_transfer_functions_on_opensim_gait_models {file}"),
                &format!("not in {} (run tools/fetch-opensim-models)", dir.display()),
            );
            continue;
        }
        let c = mollier::load(&path, &registry).unwrap_or_else(|d| panic!("{file}: {}", d.render()));
        // DF of every muscle about every coordinate; D²F on the smallest model (it has n_q²/2
        // columns)
        let second = file.starts_with("gait10dof");
        assert!(c.model.places_in_closed_form(), "{file}: positions not placed in closed form");
        // every one placed exactly (gait2392's vasti too: their conditional points off the
        // path sit toward the next point that is on it, never toward each other)
        let Compared { worst: d, recursion, inward, screws, df_by_screws } =
            compare(file, &c.model, second, true).unwrap_or_else(|| panic!("{file}: a tree, but no tree path"));
        println!(
            "{file}: largest relative difference {d:.1e}, rates by recursion: {recursion}, forces inward: {inward}, screws: {screws}, DF by screws: {df_by_screws}"
        );
        // every muscle's length and moment arms from the screws (gait2392's vasti too)
        assert!(
            screws && recursion && df_by_screws,
            "{file}: DF from the joints' screws or the rates' recursion not compared"
        );
    }
}

/// The tree path's position solve evaluates the muscles on their own coordinates only (what `DF`
/// by the screws contracts), the chain rule through the attachments left to whatever wants the
/// expanded gradients: right after the solve every element's forces on its nodes (its own
/// gradients), and `DF` by the general solve on the same data afterwards (the expanded ones,
/// the chain rule alone added), equal those of a general-path solve, on gait10dof18musc.
#[test]
fn the_tree_paths_muscle_gradients_serve_the_general_path() {
    let dir = opensim_models();
    let path = dir.join("gait10dof18musc.osim");
    if !path.is_file() {
        mollier_core::shared_data::skip(
            "the_tree_paths_muscle_gradients_serve_the_general_path",
            &format!("gait10dof18musc.osim not in {} (run tools/fetch-opensim-models)", dir.display()),
        );
        return;
    }
    let registry = mollier::registry();
    let c = mollier::load(&path, &registry).unwrap_or_else(|d| panic!("{}", d.render()));
    let model = &c.model;
    let mut data = [true, false].map(|tree| {
        let mut d = Data::new(model);
        d.set_tree_path(tree);
        solve_off_initial(model, &mut d);
        d
    });
    // every element's forces for unit stresses on all its modes, straight after the solve
    let forces = |data: &Data| -> Vec<f64> {
        (0..model.n_elements())
            .flat_map(|i| {
                let el = ElementId::new(i);
                let mut sigma = vec![0.0; model.n_e()];
                let k = model.element(el).layout().n_modes();
                (0..k).for_each(|m| sigma[model.mode_id(el, m).index()] = 1.0);
                element_forces(model, data, el, &sigma)
            })
            .collect()
    };
    let (a, b) = (forces(&data[0]), forces(&data[1]));
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let f = a.iter().zip(&b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale;
    assert!(f <= RTOL, "the elements' forces after the tree path's solve differ by {f:.2e}");
    for (k, data) in data.iter_mut().enumerate() {
        data.set_tree_path(false);
        first_order(model, data).unwrap_or_else(|e| panic!("DF, data {k}: {e}"));
        assert!(!data.df_by_screws());
    }
    let d = relative(data[0].df_e(), data[1].df_e(), 0.0);
    println!("gait10dof18musc: elements' forces {f:.1e}, DF_e by the general solve {d:.1e}");
    assert!(d <= RTOL, "DF_e by the general solve after the tree path's solve differs by {d:.2e}");
}

/// The tree path's position solve accepts the placed positions without evaluating the joints
/// (their held and input modes at their targets, their gradients left due): each consumer that
/// reads the joints' gradients, the first to do so after a fresh solve, evaluates them and gets
/// the general path's numbers — every element's forces on its nodes, the driving forces of
/// kinetostatics, `DF` by the general solve (`D_cc`'s factors), `Dᵀσ` of every mode
/// (`stress_to_nodal`) — and the modes' values are the
/// general path's, on Huston's body (hinges) and on gait10dof18musc (custom joints, moving path
/// points, muscles) where it was fetched.
#[test]
fn the_joints_gradients_left_due_serve_their_first_consumer() {
    let registry = mollier::registry();
    let mut files = vec![root().join("models/body/huston17.toml")];
    let gait = root().join(".cache/opensim-models/gait10dof18musc.osim");
    if gait.is_file() {
        files.push(gait);
    } else {
        mollier_core::shared_data::skip(
            "the_joints_gradients_left_due_serve_their_first_consumer",
            "gait10dof18musc.osim",
        );
    }
    for file in &files {
        let name = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let c = mollier::load(file, &registry).unwrap_or_else(|d| panic!("{name}: {}", d.render()));
        let model = &c.model;
        assert!(model.places_in_closed_form(), "{name}: not placed in closed form");
        let n = model.n_q();
        let qd: Vec<f64> = (0..n).map(|j| 0.3 * (1.3 * j as f64 + 0.2).cos()).collect();
        let qdd: Vec<f64> = (0..n).map(|j| 0.8 * (0.9 * j as f64 + 0.5).sin()).collect();
        // consumer k on a fresh solve: the element forces, kinetostatics, DF by D_cc's factors
        let consume = |tree: bool, k: usize| -> Vec<f64> {
            let mut data = Data::new(model);
            data.set_tree_path(tree);
            let iterations = solve_off_initial(model, &mut data);
            assert!(!tree || iterations == 0, "{name}: {iterations} Newton iterations on the tree path");
            match k {
                0 => (0..model.n_elements())
                    .flat_map(|i| {
                        let el = ElementId::new(i);
                        let mut sigma = vec![0.0; model.n_e()];
                        (0..model.element(el).layout().n_modes())
                            .for_each(|m| sigma[model.mode_id(el, m).index()] = 1.0);
                        element_forces(model, &data, el, &sigma)
                    })
                    .collect(),
                1 => {
                    let ks = kinetostatics(model, &mut data, &qd, &qdd, None, &[])
                        .unwrap_or_else(|e| panic!("{name}: kinetostatics: {e}"));
                    driving_from_kinetostatics(model, &data, &ks)
                }
                2 => {
                    data.set_tree_path(false);
                    first_order(model, &mut data).unwrap_or_else(|e| panic!("{name}: DF: {e}"));
                    assert!(!data.df_by_screws());
                    (0..model.n_e())
                        .flat_map(|m| (0..n).map(move |j| (m, j)))
                        .map(|(m, j)| data.df_e()[(m, j)])
                        .collect()
                }
                3 => {
                    let sigma: Vec<f64> = (0..model.n_e()).map(|m| 1.0 + 0.1 * m as f64).collect();
                    stress_to_nodal(model, &data, &sigma)
                }
                _ => data.e().to_vec(),
            }
        };
        let consumers = ["elements' forces", "driving forces", "DF_e by the general solve", "Dᵀσ", "modes' values"];
        for (k, what) in consumers.iter().enumerate() {
            let (a, b) = (consume(true, k), consume(false, k));
            let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1.0);
            let d = a.iter().zip(&b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale;
            println!("{name}: {what} {d:.1e}");
            assert!(d <= RTOL, "{name}: {what} after the tree path's solve differ from the general path's by {d:.2e}");
        }
    }
}
