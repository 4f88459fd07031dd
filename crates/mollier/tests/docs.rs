//! The documents stay true: `docs/model-format.md` names every field of the schema and every
//! parameter of every registered element type, and the complete models in the docs compile and
//! are well posed (the tutorial's motion runs).

use std::path::{Path, PathBuf};

use mollier::{KinematicsRun, registry};
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
fn the_format_reference_names_every_field_and_element_parameter() {
    let text = doc("model-format.md");
    let mut names = Vec::new();
    properties(&mollier::schema(&registry()), &mut names);
    names.sort();
    names.dedup();
    assert!(names.len() > 25, "{names:?}");
    let missing: Vec<&String> = names.iter().filter(|n| !text.contains(&format!("`{n}`"))).collect();
    assert!(missing.is_empty(), "docs/model-format.md does not mention {missing:?}");
    for t in registry().types() {
        assert!(text.contains(&format!("### `{}`", t.name)), "no section for element type `{}`", t.name);
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
