//! A corpus of broken model files (`tests/bad/`), each with the problem it must report
//! (`<name>.expect`: the headline `file:line:col: error: path: message`, then the hint).
//!
//! Every problem must carry a location and a hint. `MOLLIER_BLESS=1 cargo test -p mollier --test
//! bad_files` rewrites the `.expect` files from the current messages (review the diff!).
//!
//! A message that lists the registered element types is pinned with `{types}` in place of the
//! list, so that adding a type changes no file here.

use std::path::{Path, PathBuf};

use mollier_format::Diagnostic;

/// Parse, compile and check: every problem found, in order. The file is read by its full path,
/// so that files it names (a muscle table) are found next to it.
fn problems(path: &Path) -> Vec<Diagnostic> {
    let registry = mollier::registry();
    // read as users' files are: some corpus files are not UTF-8
    let doc = match mollier_format::load(path) {
        Ok(d) => d,
        Err(d) => return d.0,
    };
    let compiled = match mollier::compile(&doc, &registry) {
        Ok(c) => c,
        Err(d) => return d.0,
    };
    mollier::check(&compiled, &registry).problems
}

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/bad exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "toml" || e == "json"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_bad_file_reports_its_problem_with_location_and_hint() {
    let bless = std::env::var_os("MOLLIER_BLESS").is_some();
    let files = corpus();
    let types = mollier::registry().types().map(|t| t.name).collect::<Vec<_>>().join(", ");
    assert!(files.len() >= 30, "the corpus is {} files", files.len());
    let mut failures = Vec::new();
    for path in &files {
        let found = problems(path);
        let Some(first) = found.first() else {
            failures.push(format!("{}: no problem reported", path.display()));
            continue;
        };
        for d in &found {
            if d.location.is_none() || d.hint.as_deref().is_none_or(str::is_empty) {
                failures.push(format!("{}: a problem without location or hint:\n{}", path.display(), d.render()));
            }
        }
        // messages name the corpus directory `bad/`, wherever the checkout is
        let dir = format!("{}/", path.parent().expect("in tests/bad").display());
        let got = format!("{}\nhint: {}\n", first.headline(), first.hint.as_deref().unwrap_or(""))
            .replace(&dir, "bad/")
            .replace(&types, "{types}");
        let expect_path = path.with_extension("expect");
        if bless {
            std::fs::write(&expect_path, &got).expect("write .expect");
            continue;
        }
        match std::fs::read_to_string(&expect_path) {
            Ok(want) if want == got => {}
            Ok(want) => failures.push(format!("{}:\n  want: {want:?}\n  got:  {got:?}", path.display())),
            Err(_) => failures.push(format!("{}: no .expect file; got:\n{got}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
