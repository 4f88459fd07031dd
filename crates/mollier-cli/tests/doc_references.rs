//! The documents' references stay true. In `README.md`, `CONTRIBUTING.md`, `docs/*.md` and
//! `docs/theory/*.md`: each relative link reaches a file and a heading of it (GitHub's anchors);
//! each repository path written as code exists; each `FILE.rs::name` names a function of that
//! file; each `cargo test|bench|run -p PACKAGE --test|--bench|--example NAME` names a package
//! and a target of it; each `mollier` command in code names a subcommand and options that the
//! built command has (read from its `--help`), and a code block's command has the options the
//! subcommand requires. In the documents and in the code's comments and help texts, each section
//! named by its document and title exists. Every failure is listed, as `file:line: what`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

mod support;
use support::{mollier, root, text};

/// A document: its path from the repository's root and its text.
struct Doc {
    name: String,
    text: String,
}

/// README.md, CONTRIBUTING.md, docs/*.md and docs/theory/*.md.
fn docs() -> Vec<Doc> {
    let mut names = vec!["README.md".to_string(), "CONTRIBUTING.md".to_string()];
    for dir in ["docs", "docs/theory"] {
        let mut more: Vec<String> = std::fs::read_dir(root().join(dir))
            .expect("the docs folder")
            .map(|e| e.expect("an entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".md"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        more.sort();
        names.extend(more);
    }
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(root().join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            Doc { name, text }
        })
        .collect()
}

/// A piece of a document: its first line (1-based), whether it is code (and a fenced block's
/// line), and its text.
struct Piece {
    line: usize,
    code: bool,
    fenced: bool,
    text: String,
}

/// A document cut into prose (each line's text outside code spans) and code: inline spans (one
/// piece even when a span wraps onto the next line) and the lines of fenced blocks (a line ending
/// in `\` joined with the next, as a shell reads it).
fn pieces(text: &str) -> Vec<Piece> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    // an inline span still open at the end of a line: its line and text so far
    let mut open: Option<(usize, String)> = None;
    let mut continued: Option<(usize, String)> = None;
    for (i, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l)) {
        let t = line.trim_start();
        let marker: String = t.chars().take_while(|&c| c == '`' || c == '~').collect();
        if marker.len() >= 3 && (fence.is_none() || fence.as_deref() == Some(marker.as_str())) {
            fence = if fence.is_some() { None } else { Some(marker) };
            continue;
        }
        if fence.is_some() {
            let (first, mut joined) = continued.take().unwrap_or((i, String::new()));
            match line.trim_end().strip_suffix('\\') {
                Some(head) => {
                    joined.push_str(head);
                    continued = Some((first, joined));
                }
                None => {
                    joined.push_str(line);
                    out.push(Piece { line: first, code: true, fenced: true, text: joined });
                }
            }
            continue;
        }
        let mut prose = String::new();
        let mut rest = line;
        loop {
            if let Some((first, mut span)) = open.take() {
                match rest.find('`') {
                    Some(k) => {
                        span.push(' ');
                        span.push_str(&rest[..k]);
                        out.push(Piece { line: first, code: true, fenced: false, text: span });
                        rest = &rest[k + 1..];
                    }
                    None => {
                        span.push(' ');
                        span.push_str(rest);
                        open = Some((first, span));
                        break;
                    }
                }
                continue;
            }
            let Some(k) = rest.find('`') else {
                prose.push_str(rest);
                break;
            };
            prose.push_str(&rest[..k]);
            let ticks = rest[k..].chars().take_while(|&c| c == '`').count();
            let after = &rest[k + ticks..];
            match after.find(&rest[k..k + ticks]) {
                Some(e) => {
                    out.push(Piece { line: i, code: true, fenced: false, text: after[..e].to_string() });
                    rest = &after[e + ticks..];
                }
                None if ticks == 1 => {
                    open = Some((i, after.to_string()));
                    break;
                }
                None => break,
            }
        }
        out.push(Piece { line: i, code: false, fenced: false, text: prose });
    }
    out
}

/// A heading as rendered: links by their text, no backticks.
fn rendered(heading: &str) -> String {
    let mut out = String::new();
    let mut rest = heading;
    // [text](target) -> text
    while let Some(k) = rest.find("](") {
        let Some(close) = rest[k..].find(')') else { break };
        out.push_str(&rest[..k]);
        rest = &rest[k + close + 1..];
    }
    out.push_str(rest);
    out.replace(['`', '['], "")
}

/// GitHub's anchor of a rendered heading: lower case, every character but letters, digits, `-`,
/// `_` and spaces dropped (emphasis marks too), spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|&c| c.is_alphanumeric() || c == '-' || c == '_' || c == ' ')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A document's headings (`#` to `######` outside code blocks), rendered.
fn headings(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for p in pieces(text).iter().filter(|p| !p.code) {
        let hashes = p.text.chars().take_while(|&c| c == '#').count();
        if !(1..=6).contains(&hashes) || !p.text[hashes..].starts_with(' ') {
            continue;
        }
        // code spans were cut out of the prose: take the heading's whole line again
        let line = text.lines().nth(p.line - 1).expect("the piece's line");
        out.push(rendered(line[hashes..].trim().trim_end_matches('#').trim()));
    }
    out
}

/// What a reader can find by its title: the headings and the emphasised words that open a
/// paragraph (`*The polish of (cb)* ...`, `**Cost.** ...`), rendered.
fn titles(text: &str) -> Vec<String> {
    let mut out = headings(text);
    let mut after_blank = true;
    for line in text.lines() {
        for mark in ["**", "*"] {
            if let Some(rest) = line.strip_prefix(mark).filter(|_| after_blank)
                && let Some(end) = rest.find(mark)
            {
                out.push(rendered(rest[..end].trim_end_matches('.')));
                break;
            }
        }
        after_blank = line.trim().is_empty();
    }
    out
}

/// The anchors of a document's headings, a repeated one numbered as GitHub numbers it (`-1`, ...).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = BTreeSet::new();
    for s in headings(text).iter().map(|h| slug(h)) {
        let n = seen.entry(s.clone()).or_insert(0);
        out.insert(if *n == 0 { s } else { format!("{s}-{n}") });
        *n += 1;
    }
    out
}

/// The targets of a prose line's links and images, `[text](target)`, and of a reference
/// definition, `[label]: target`.
fn link_targets(prose: &str) -> Vec<String> {
    let mut out = Vec::new();
    if prose.starts_with('[')
        && let Some(k) = prose.find("]: ")
    {
        out.extend(prose[k + 3..].split_whitespace().next().map(str::to_string));
    }
    let mut rest = prose;
    while let Some(k) = rest.find("](") {
        rest = &rest[k + 2..];
        let end = rest.find(')').unwrap_or(rest.len());
        out.extend(rest[..end].split_whitespace().next().map(|t| t.trim_matches(['<', '>']).to_string()));
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_reaches_a_file_and_heading() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        let here = Path::new(&doc.name).parent().expect("a document's folder");
        for p in pieces(&doc.text).iter().filter(|p| !p.code) {
            for target in link_targets(&p.text) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((&target, ""));
                let path = if file.is_empty() { Path::new(&doc.name).to_path_buf() } else { here.join(file) };
                let at = format!("{}:{}: link `{target}`", doc.name, p.line);
                if !root().join(&path).exists() {
                    failures.push(format!("{at}: no file {}", path.display()));
                } else if !anchor.is_empty() {
                    let text = std::fs::read_to_string(root().join(&path)).unwrap_or_default();
                    if !anchors(&text).contains(anchor) {
                        failures.push(format!("{at}: no heading with the anchor #{anchor}"));
                    }
                }
            }
        }
    }
    assert!(checked > 200, "only {checked} links found: is the scan broken?");
    assert!(failures.is_empty(), "{} broken links:\n{}", failures.len(), failures.join("\n"));
}

/// Where a repository path starts: the folders of the repository's root that documents name.
const FOLDERS: [&str; 8] = ["models/", "tools/", "crates/", "elements/", "docs/", "tests/", "benches/", "examples/"];

/// Paths written as code that are not in the repository, by design. Each says why.
const NOT_FILES: [&str; 2] = [
    // a placeholder for any crate, in `tools/import-graph crates/CRATE`
    "crates/CRATE",
    // the file of a user's mistake, in an example of an error message
    "models/arm.toml",
];

/// Whether `pattern` (a path from the root, with `*` and one `{a,b}` allowed) names something.
fn exists(base: &Path, pattern: &str) -> bool {
    if let (Some(open), Some(close)) = (pattern.find('{'), pattern.find('}'))
        && open < close
    {
        let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
        return pattern[open + 1..close].split(',').all(|alt| exists(base, &format!("{head}{alt}{tail}")));
    }
    let Some((first, rest)) = pattern.split_once('/') else {
        return pattern.is_empty() || matches(base, pattern).next().is_some();
    };
    matches(base, first).any(|dir| exists(&dir, rest))
}

/// The entries of `dir` that `name` names (`*` any characters).
fn matches<'a>(dir: &Path, name: &'a str) -> impl Iterator<Item = std::path::PathBuf> + 'a {
    let entries: Vec<_> = if name.contains('*') {
        std::fs::read_dir(dir).map(|r| r.filter_map(Result::ok).map(|e| e.path()).collect()).unwrap_or_default()
    } else {
        vec![dir.join(name)]
    };
    entries
        .into_iter()
        .filter(move |p| p.exists() && p.file_name().is_some_and(|f| wildcard(name, &f.to_string_lossy())))
}

/// `*` matches any run of characters.
fn wildcard(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.starts_with(head)
                && (head.len()..=name.len()).filter(|&k| name.is_char_boundary(k)).any(|k| wildcard(tail, &name[k..]))
        }
    }
}

/// The repository paths in a piece of code: words starting with one of `FOLDERS` (not inside a
/// longer path such as `../shared/...`), trailing punctuation dropped.
fn repository_paths(code: &str) -> Vec<&str> {
    let in_path = |c: char| c.is_alphanumeric() || "_./-{},*".contains(c);
    let mut out = Vec::new();
    let mut start = None;
    for (k, c) in code.char_indices().chain([(code.len(), ' ')]) {
        match (start, in_path(c)) {
            (None, true) => start = Some(k),
            (Some(s), false) => {
                let word = code[s..k].trim_end_matches([',', '.', ':']);
                if FOLDERS.iter().any(|f| word.starts_with(f)) {
                    out.push(word);
                }
                start = None;
            }
            _ => {}
        }
    }
    out
}

#[test]
fn every_repository_path_in_the_docs_exists() {
    let base = root();
    // a test's or a benchmark's path may be written from its crate's folder (`tests/ik.rs`)
    let crate_dirs: Vec<_> = ["crates", "elements"]
        .iter()
        .flat_map(|d| std::fs::read_dir(base.join(d)).expect("crates").map(|e| e.expect("an entry").path()))
        .collect();
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        for p in pieces(&doc.text).iter().filter(|p| p.code) {
            for path in repository_paths(&p.text) {
                checked += 1;
                let found = exists(&base, path)
                    || ((path.starts_with("tests/") || path.starts_with("benches/"))
                        && crate_dirs.iter().any(|c| exists(c, path)));
                if found || NOT_FILES.contains(&path) {
                    continue;
                }
                failures.push(format!("{}:{}: no `{path}` in the repository", doc.name, p.line));
            }
        }
    }
    assert!(checked > 300, "only {checked} paths found: is the scan broken?");
    assert!(failures.is_empty(), "{} missing paths:\n{}", failures.len(), failures.join("\n"));
}

/// The repository's files whose names end in one of `ends`, paths from the root with `/`.
fn sources(dir: &Path, from: &str, ends: &[&str], out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).expect("a folder").map(|e| e.expect("an entry")) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = if from.is_empty() { name.clone() } else { format!("{from}/{name}") };
        if entry.file_type().expect("a type").is_dir() {
            if !name.starts_with('.') && !["target", "node_modules"].contains(&name.as_str()) {
                sources(&entry.path(), &path, ends, out);
            }
        } else if ends.iter().any(|e| name.ends_with(e)) {
            out.push(path);
        }
    }
}

/// The functions a piece of code names in a file, `FILE.rs::name` (`FILE.py::name`, or
/// `FILE.rs::module::name`): (the file as written, the function). A piece that starts with
/// `::name` names one in the file named before it (`None`).
fn named_functions(code: &str) -> Vec<(Option<&str>, &str)> {
    let word_char = |c: char| c.is_alphanumeric() || "_./-:".contains(c);
    let mut out = Vec::new();
    for (k, word) in code.split(|c| !word_char(c)).enumerate() {
        let Some((file, chain)) = word.split_once("::") else { continue };
        let name = chain.rsplit("::").next().expect("a name").trim_end_matches(['.', ':']);
        if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        if file.ends_with(".rs") || file.ends_with(".py") {
            out.push((Some(file), name));
        } else if file.is_empty() && k == 0 && code.starts_with("::") {
            out.push((None, name));
        }
    }
    out
}

#[test]
fn every_test_the_docs_name_is_in_its_file() {
    let mut files = Vec::new();
    sources(&root(), "", &[".rs", ".py"], &mut files);
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        // the files that the last `FILE::name` could mean, for a following `::name`
        let mut last: Vec<&String> = Vec::new();
        for p in pieces(&doc.text).iter().filter(|p| p.code) {
            for (file, name) in named_functions(&p.text) {
                if let Some(file) = file {
                    // a path from the root, from a crate's folder, or a file's name alone
                    last = files.iter().filter(|f| *f == file || f.ends_with(&format!("/{file}"))).collect();
                    if last.is_empty() {
                        failures.push(format!("{}:{}: no file `{file}`", doc.name, p.line));
                        continue;
                    }
                }
                checked += 1;
                let defines = |f: &&String| {
                    let text = std::fs::read_to_string(root().join(f)).unwrap_or_default();
                    text.contains(&format!("fn {name}(")) || text.contains(&format!("def {name}("))
                };
                if !last.is_empty() && !last.iter().any(defines) {
                    let file = file.unwrap_or("the file before");
                    failures.push(format!("{}:{}: no `{name}` in `{file}`", doc.name, p.line));
                }
            }
        }
    }
    assert!(checked > 150, "only {checked} named tests found: is the scan broken?");
    assert!(failures.is_empty(), "{} tests not found:\n{}", failures.len(), failures.join("\n"));
}

/// The sections named by their title after their document, as this comment names one:
/// (docs/model-format.md, "Output directories"); in a document also after a link to it. A title
/// may wrap onto the next comment line. Each: its line, the document's path as written, whether
/// it is a link's (relative to the referring file), and the title.
fn section_refs(text: &str) -> Vec<(usize, &str, bool, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let in_path = |c: char| c.is_alphanumeric() || "_./-".contains(c);
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        // the line with the next one's text after its comment marks, for what wraps
        let next = lines.get(i + 1).map_or("", |n| n.trim_start().trim_start_matches(['/', '!', '#', '*']));
        let joined = format!("{line} {}", next.trim_start());
        for (k, _) in line.match_indices(".md") {
            let after = joined[k + 3..].trim_start_matches(['`', ')']);
            let Some(title) = after.strip_prefix(',').map(str::trim_start).and_then(|t| t.strip_prefix('"')) else {
                continue;
            };
            let Some(end) = title.find('"') else { continue };
            let start = line[..k].rfind(|c: char| !in_path(c)).map_or(0, |s| s + 1);
            out.push((i + 1, &line[start..k + 3], line[..start].ends_with("]("), title[..end].to_string()));
        }
    }
    out
}

#[test]
fn every_section_named_by_its_title_exists() {
    // the documents, and the code's comments and help texts that send a reader to a section
    let mut files: Vec<String> = docs().into_iter().map(|d| d.name).collect();
    for dir in ["crates", "elements", "tools", "models", "tests", "examples"] {
        sources(&root().join(dir), dir, &[".rs", ".py", ".pyi", ".sh", ".toml", ".md"], &mut files);
    }
    let tools: Vec<String> = std::fs::read_dir(root().join("tools"))
        .expect("tools")
        .map(|e| format!("tools/{}", e.expect("an entry").file_name().to_string_lossy()))
        .filter(|f| !f.contains('.'))
        .collect();
    files.extend(tools);
    let mut failures = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(root().join(file)) else { continue };
        let here = Path::new(file).parent().expect("a folder");
        for (line, path, link, title) in section_refs(&text) {
            checked += 1;
            let candidates = if link || !path.starts_with("docs/") {
                vec![here.join(path), Path::new("docs").join(path)]
            } else {
                vec![Path::new(path).to_path_buf()]
            };
            let Some(doc) = candidates.iter().find(|c| root().join(c).is_file()) else {
                failures.push(format!("{file}:{line}: no document `{path}`"));
                continue;
            };
            // a heading or a paragraph's title, or its start up to a word's end ("Attached nodes"
            // for "Attached nodes: a body's points without unknowns")
            let found = titles(&std::fs::read_to_string(root().join(doc)).expect("a document"))
                .iter()
                .any(|h| h.strip_prefix(title.as_str()).is_some_and(|rest| !rest.starts_with(char::is_alphanumeric)));
            if found {
                continue;
            }
            failures.push(format!("{file}:{line}: `{path}` has no section \"{title}\""));
        }
    }
    assert!(checked > 30, "only {checked} sections named by title found: is the scan broken?");
    assert!(failures.is_empty(), "{} sections not found:\n{}", failures.len(), failures.join("\n"));
}

/// The workspace's packages: name and folder, from each `Cargo.toml` in `crates/`, `elements/`
/// and `tests/`.
fn packages() -> BTreeMap<String, std::path::PathBuf> {
    let base = root();
    let dirs = ["crates", "elements"]
        .iter()
        .flat_map(|d| std::fs::read_dir(base.join(d)).expect("crates").map(|e| e.expect("an entry").path()))
        .chain([base.join("tests")]);
    let mut out = BTreeMap::new();
    for dir in dirs {
        let Ok(manifest) = std::fs::read_to_string(dir.join("Cargo.toml")) else { continue };
        let name = manifest.lines().find_map(|l| l.strip_prefix("name = \"")).expect("a package name");
        out.insert(name.trim_end_matches('"').to_string(), dir);
    }
    out
}

/// Whether package folder `dir` has the target `name` of `kind` (`test`, `bench`, `example`): a
/// file cargo finds by itself or a `[[kind]]` its manifest declares.
fn has_target(dir: &Path, kind: &str, name: &str) -> bool {
    let folder = match kind {
        "test" => "tests",
        "bench" => "benches",
        _ => "examples",
    };
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    dir.join(folder).join(format!("{name}.rs")).exists()
        || dir.join(folder).join(name).join("main.rs").exists()
        || manifest.contains(&format!("[[{kind}]]\nname = \"{name}\""))
}

#[test]
fn every_cargo_target_in_the_docs_exists() {
    let packages = packages();
    assert!(packages.contains_key("mollier-cli") && packages.contains_key("mollier-tests"), "{packages:?}");
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        for p in pieces(&doc.text).iter().filter(|p| p.code) {
            let words: Vec<&str> = p.text.split_whitespace().take_while(|w| !w.starts_with('#')).collect();
            if !words.windows(2).any(|w| w[0] == "cargo" && ["test", "bench", "run", "build"].contains(&w[1])) {
                continue;
            }
            let after = |flag: &str| -> Vec<&str> { words.windows(2).filter(|w| w[0] == flag).map(|w| w[1]).collect() };
            let names = after("-p");
            for name in &names {
                // `CRATE` stands for any package (`cargo clippy -p CRATE`)
                if *name != "CRATE" && !packages.contains_key(*name) {
                    failures.push(format!("{}:{}: no package `{name}`", doc.name, p.line));
                }
            }
            for kind in ["test", "bench", "example"] {
                for target in after(&format!("--{kind}")) {
                    checked += 1;
                    let dirs: Vec<_> = names.iter().filter_map(|n| packages.get(*n)).collect();
                    if !dirs.is_empty() && !dirs.iter().any(|d| has_target(d, kind, target)) {
                        failures.push(format!("{}:{}: no {kind} `{target}` in {names:?}", doc.name, p.line));
                    }
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} cargo targets found: is the scan broken?");
    assert!(failures.is_empty(), "{} missing cargo targets:\n{}", failures.len(), failures.join("\n"));
}

/// What the command accepts, from its help: the subcommands, the options taken before one (and
/// whether each takes a value), each subcommand's options, short and long, and the options its
/// usage line requires.
struct Cli {
    global: BTreeMap<String, bool>,
    options: BTreeMap<String, BTreeSet<String>>,
    required: BTreeMap<String, Vec<String>>,
}

/// A help text's options, `-q, --quiet` and `--out <OUT>`: each name and whether it takes a value.
fn help_options(help: &str) -> BTreeMap<String, bool> {
    let mut out = BTreeMap::new();
    for line in help.lines() {
        let t = line.trim_start();
        // option lines are indented by two to six; their descriptions by more
        if line.len() - t.len() > 6 || !t.starts_with('-') {
            continue;
        }
        let takes = t.split("  ").next().is_some_and(|s| s.contains('<'));
        for name in t.split([',', ' ']).filter(|w| w.starts_with('-') && w.len() > 1) {
            out.insert(name.to_string(), takes);
        }
    }
    out
}

fn help(args: &[&str]) -> String {
    let out = mollier(args);
    assert_eq!(out.status.code(), Some(0), "mollier {args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn cli() -> Cli {
    let top = help(&["--help"]);
    let commands = top.split("Commands:\n").nth(1).expect("a list of commands").split("\n\n").next().expect("list");
    let (mut options, mut required) = (BTreeMap::new(), BTreeMap::new());
    // a command's line is indented by two; its description's wrapped lines (clap wraps where a
    // dependency of the workspace turns on its `wrap_help`) by more
    let names = commands.lines().filter(|l| l.len() - l.trim_start().len() == 2);
    for sub in names.filter_map(|l| l.split_whitespace().next()).filter(|&s| s != "help") {
        let text = help(&[sub, "--help"]);
        // `Usage: mollier simulate [OPTIONS] --duration <DURATION> --out <OUT> <MODEL>`
        let usage = text.lines().find(|l| l.starts_with("Usage:")).expect("a usage line");
        required.insert(sub.to_string(), usage.split(' ').filter(|w| w.starts_with("--")).map(String::from).collect());
        options.insert(sub.to_string(), help_options(&text).into_keys().collect::<BTreeSet<_>>());
    }
    assert!(options.len() > 10 && options["simulate"].contains("--rigid-tendons"), "{:?}", options.keys());
    assert!(required["simulate"] == ["--duration", "--out"], "{:?}", required["simulate"]);
    Cli { global: help_options(&top), options, required }
}

/// The shell's separators of commands on one line.
const SEPARATORS: [&str; 5] = ["|", "&&", "||", ";", "&"];

/// The `mollier` commands in a piece of code, each as its words from the subcommand on: after
/// `cargo run ... -p mollier-cli --`, or after `mollier` (or `.../mollier`) as a command's first
/// word (following a prompt `$`, variable assignments or `time`), commands split at `&&`, `|`, ...
fn commands(code: &str) -> Vec<Vec<&str>> {
    let words: Vec<&str> = code.split_whitespace().take_while(|w| !w.starts_with('#')).collect();
    let skip = |w: &&str| *w == "$" || *w == "time" || w.split('/').next().is_some_and(|h| h.contains('='));
    let mut out = Vec::new();
    for command in words.split(|w| SEPARATORS.contains(w)) {
        if command.contains(&"cargo") && command.contains(&"run") && command.contains(&"mollier-cli") {
            out.extend(command.iter().position(|&w| w == "--").map(|k| command[k + 1..].to_vec()));
            continue;
        }
        let mut rest = command.iter().copied().skip_while(skip);
        if rest.next().is_some_and(|first| first == "mollier" || first.ends_with("/mollier")) {
            out.push(rest.collect());
        }
    }
    out
}

/// A command's problems: an unknown subcommand or an option the subcommand does not have, and if
/// it is `whole` (a code block's, not shortened with `...`) a required option it lacks.
fn command_problems(cli: &Cli, words: &[&str], whole: bool) -> Vec<String> {
    let mut words = words.iter().map(|w| w.trim_matches(['[', ']'])).take_while(|w| ![">", ">>", "2>"].contains(w));
    // options before the subcommand: the command's own (`--format sto`, `--help`)
    let sub = loop {
        match words.next() {
            None => return Vec::new(),
            Some(w) if w.starts_with('-') => match cli.global.get(w) {
                Some(true) => {
                    words.next();
                }
                Some(false) => {}
                None => return vec![format!("`mollier` has no option `{w}`")],
            },
            Some(w) => break w,
        }
    };
    let Some(known) = cli.options.get(sub) else {
        return vec![format!("`mollier` has no subcommand `{sub}`")];
    };
    let words: Vec<&str> = words.map(|w| w.split('=').next().expect("a word")).collect();
    let mut problems: Vec<String> = words
        .iter()
        .filter(|w| w.starts_with('-') && w.len() > 1 && !w[1..].starts_with(|c: char| c.is_ascii_digit()))
        .filter(|w| !known.contains(**w))
        .map(|w| format!("`mollier {sub}` has no option `{w}`"))
        .collect();
    if whole && !words.contains(&"...") && !words.contains(&"--help") {
        let lacks = cli.required[sub].iter().filter(|r| !words.contains(&r.as_str()));
        problems.extend(lacks.map(|r| format!("`mollier {sub}` needs `{r}`")));
    }
    problems
}

#[test]
fn every_mollier_command_in_the_docs_has_its_subcommand_and_options() {
    let cli = cli();
    let mut failures = Vec::new();
    let mut checked = 0;
    for doc in docs() {
        for p in pieces(&doc.text).iter().filter(|p| p.code) {
            for words in commands(&p.text) {
                checked += 1;
                for problem in command_problems(&cli, &words, p.fenced) {
                    failures.push(format!("{}:{}: {problem}: {}", doc.name, p.line, words.join(" ")));
                }
            }
        }
    }
    assert!(checked > 50, "only {checked} commands found: is the scan broken?");
    assert!(failures.is_empty(), "{} wrong commands:\n{}", failures.len(), failures.join("\n"));
}

/// The options every subcommand spells alike: where one has `--quiet` it has `-q` too, as the
/// others do, so that a user's habit (and the docs' `-q`) holds for each.
#[test]
fn every_quiet_option_has_its_short_form() {
    let cli = cli();
    let missing: Vec<&String> =
        cli.options.iter().filter(|(_, o)| o.contains("--quiet") && !o.contains("-q")).map(|(s, _)| s).collect();
    assert!(cli.options.values().filter(|o| o.contains("--quiet")).count() > 5, "{:?}", cli.options.keys());
    assert!(missing.is_empty(), "`--quiet` without `-q`: {missing:?}");
}
