//! The documents stay true: `docs/model-format.md` names every field of the schema and every
//! parameter of every registered element type, and the complete models in the docs compile and
//! are well posed (the tutorial's motion runs, and its inverse dynamics prints what it says).

use std::path::{Path, PathBuf};

use mollier::{InverseDynamicsRun, KinematicsRun, Smoothing, registry};
use mollier_format::{Format, parse_as};
use serde_json::Value;

fn doc(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every property name anywhere in a schema.
fn properties(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            if let Some(Value::Object(p)) = m.get("properties") {
                out.extend(p.keys().cloned());
            }
            m.values().for_each(|x| properties(x, out));
        }
        Value::Array(a) => a.iter().for_each(|x| properties(x, out)),
        _ => {}
    }
}

#[test]
fn the_element_reference_is_generated_from_the_registry() {
    let committed = doc("element-types.md");
    let generated = mollier::element_reference(&registry());
    assert!(
        committed == generated,
        "docs/element-types.md is out of date: run `cargo run -p mollier-cli -- types --markdown > docs/element-types.md`"
    );
    for t in registry().types() {
        assert!(committed.contains(&format!("## `{}`", t.name)), "no section for element type `{}`", t.name);
    }
}

#[test]
fn the_format_reference_names_every_field_and_element_parameter() {
    // format fields in the hand-written reference, element parameters in the generated one
    let text = doc("model-format.md") + &doc("element-types.md");
    let mut names = Vec::new();
    properties(&mollier::schema(&registry()), &mut names);
    names.sort();
    names.dedup();
    assert!(names.len() > 25, "{names:?}");
    let missing: Vec<&String> = names.iter().filter(|n| !text.contains(&format!("`{n}`"))).collect();
    assert!(missing.is_empty(), "docs/model-format.md and docs/element-types.md do not mention {missing:?}");
    for t in registry().types() {
        for m in t.modes {
            assert!(text.contains(&format!("`{m}`")), "mode `{m}` of `{}` is not documented", t.name);
        }
    }
}

/// Fenced code blocks of a Markdown text: (info string, body).
fn blocks(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut cur: Option<(String, String)> = None;
    for line in text.lines() {
        if let Some(info) = line.strip_prefix("```") {
            match cur.take() {
                Some(b) => out.push(b),
                None => cur = Some((info.trim().to_string(), String::new())),
            }
        } else if let Some((_, body)) = cur.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

fn check_models(name: &str) -> Vec<(mollier::Compiled, Vec<(String, String)>)> {
    let all = blocks(&doc(name));
    let mut models = Vec::new();
    for (info, body) in &all {
        let format = match info.as_str() {
            "toml" => Format::Toml,
            "json" => Format::Json,
            _ => continue,
        };
        if !body.contains("format_version") {
            continue;
        }
        let d = parse_as(name, body, format).unwrap_or_else(|d| panic!("{name}: {}\n{body}", d.render()));
        let c = mollier::compile(&d, &registry()).unwrap_or_else(|d| panic!("{name}: {}\n{body}", d.render()));
        let r = mollier::check(&c, &registry());
        assert!(r.is_well_posed(), "{name}: {:?}\n{body}", r.diagnostics);
        models.push((c, all.clone()));
    }
    models
}

#[test]
fn the_examples_in_the_format_reference_compile() {
    let models = check_models("model-format.md");
    assert_eq!(models.len(), 2, "the TOML example and its JSON twin");
    // the two are the same model
    let (a, b) = (&models[0].0, &models[1].0);
    let (mut ra, mut rb) = (KinematicsRun::new(a), KinematicsRun::new(b));
    assert_eq!(ra.solve(&[0.4]).expect("toml"), rb.solve(&[0.4]).expect("json"));
    // with the same masses, gravity and spring
    let (mut da, mut db) = (InverseDynamicsRun::new(a), InverseDynamicsRun::new(b));
    let (fa, fb) = (da.solve(&[0.4], &[1.0], &[2.0]).expect("toml"), db.solve(&[0.4], &[1.0], &[2.0]).expect("json"));
    assert_eq!(fa, fb);
    assert!(fa.driving[0].abs() > 1.0 && fa.passive.len() == 1, "{fa:?}");
}

#[test]
fn the_tutorial_runs_from_model_to_results() {
    let models = check_models("tutorial.md");
    let (model, all) = models.last().expect("the tutorial has a complete model");
    let dir: PathBuf = std::env::temp_dir().join(format!("mollier-tutorial-{}", std::process::id()));
    let csv = all.iter().find(|(info, body)| info == "csv" && body.starts_with("time,")).expect("a motion");
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("flexion.csv");
    std::fs::write(&path, &csv.1).expect("write");
    let motion = mollier::read_motion(&path, &model.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = KinematicsRun::new(model);
    for q in &motion.q {
        run.solve(q).unwrap_or_else(|e| panic!("{e}"));
    }
}

/// The tutorial's model as its dynamics section leaves it (the forearm's table replaced, gravity
/// added), with the load-sharing section appended if `sharing`, and its motion differentiated.
fn tutorial_dynamics(
    sharing: bool,
) -> (mollier::Compiled, mollier::Motion, mollier::MotionDerivatives, Vec<(String, String)>) {
    let all = blocks(&doc("tutorial.md"));
    let toml = |pred: &dyn Fn(&str) -> bool| {
        all.iter().filter(|(i, b)| i == "toml" && pred(b)).map(|(_, b)| b.clone()).next_back().expect("a block")
    };
    let model = toml(&|b| b.contains("format_version"));
    let forearm = toml(&|b| b.starts_with("[bodies.forearm]") && b.contains("mass"));
    let gravity = toml(&|b| b.starts_with("gravity"));
    let start = model.find("[bodies.forearm]").expect("forearm");
    let end = start + model[start..].find("\n\n").expect("end of the table");
    let mut model = format!("{}{}{}", &model[..start], forearm.trim_end(), &model[end..]).replacen(
        "free = [\"biceps\"]\n",
        &format!("free = [\"biceps\"]\n{gravity}"),
        1,
    );
    if sharing {
        model = format!("{model}\n{}", toml(&|b| b.starts_with("[load_sharing]")));
    }
    let d = parse_as("tutorial.md", &model, Format::Toml).unwrap_or_else(|d| panic!("{}\n{model}", d.render()));
    let c = mollier::compile(&d, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let csv = all.iter().find(|(info, body)| info == "csv" && body.starts_with("time,")).expect("a motion");
    let motion = mollier::parse_motion("flexion.csv", &csv.1, &c.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
    let m = motion.differentiate(Smoothing::Interpolate).expect("differentiable");
    (c, motion, m, all)
}

/// The numbers of a `$ cat results/FILE` block of the tutorial, one row per line after the header.
fn shown(all: &[(String, String)], file: &str) -> Vec<Vec<f64>> {
    let text = &all.iter().find(|(_, b)| b.starts_with(&format!("$ cat results/{file}"))).expect("the output").1;
    text.lines().skip(2).map(|l| l.split(',').map(|v| v.parse().expect("number")).collect()).collect()
}

#[test]
fn the_tutorials_load_sharing_gives_the_forces_it_shows() {
    let (c, motion, m, all) = tutorial_dynamics(true);
    let setup = c.load_sharing.as_ref().expect("the section");
    let frames = mollier::load_sharing::frames(&motion, Some(&m));
    let sharing = mollier_optim::LoadSharing::new(&c.model, setup.study(mollier_optim::Criterion::Stresses, true))
        .expect("a study");
    let results = sharing.run(&frames, mollier_optim::RunOptions::default());
    let rows = shown(&all, "forces.csv");
    assert_eq!(rows.len(), results.len());
    let (mut kin, mut id) = (KinematicsRun::new(&c), InverseDynamicsRun::new(&c));
    for (k, (row, r)) in rows.iter().zip(&results).enumerate() {
        assert!(r.status.is_success(), "{}", r.status);
        assert!((row[1] - r.forces[0]).abs() < 1e-9, "shown {} vs computed {}", row[1], r.forces[0]);
        // one muscle: its force times its moment arm (minus ∂l/∂φ) is the elbow's moment
        let arm = -kin.solve(&m.q[k]).expect("kinematics").transfer[0];
        let tau = id.solve(&m.q[k], &m.qd[k], &m.qdd[k]).expect("inverse dynamics").driving[0];
        assert!((r.forces[0] * arm - tau).abs() < 1e-9, "F r = {} vs τ = {tau}", r.forces[0] * arm);
    }
    // as the text says at t = 0.5 s
    assert!(
        (rows[2][1] - 64.1).abs() < 0.05
            && (-kin.solve(&m.q[2]).expect("kinematics").transfer[0] * 1e3 - 34.43).abs() < 0.005
    );
}

#[test]
fn the_tutorials_inverse_dynamics_gives_the_moments_it_shows() {
    let (c, motion, m, all) = tutorial_dynamics(false);
    // what the tutorial prints
    let rows = shown(&all, "driving.csv");
    assert_eq!(rows.len(), motion.times.len());
    let mut run = InverseDynamicsRun::new(&c);
    for (i, row) in rows.iter().enumerate() {
        let f = run.solve(&m.q[i], &m.qd[i], &m.qdd[i]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(row[0], motion.times[i]);
        assert!((row[1] - f.driving[0]).abs() < 1e-12, "shown {} vs computed {}", row[1], f.driving[0]);
        // steady turning: the moment holds the forearm up, m g c cos φ
        let want = 1.5 * 9.81 * 0.15 * m.q[i][0].cos();
        assert!((row[1] - want).abs() < 1e-12, "shown {} vs m g c cos φ = {want}", row[1]);
    }
}
