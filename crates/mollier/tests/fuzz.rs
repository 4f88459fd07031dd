//! Mutated model files through the parser, the compiler, the well-posedness check, one kinematic
//! solve and one inverse-dynamics frame: nothing may panic, every problem must come with a
//! location and a hint, messages stay short and leak no environment, and numbers that pass the
//! checks give finite results. Also: bytes that are not UTF-8 (located at the first), files that
//! are devices, FIFOs, directories or `/proc/self/environ` named as a model, a motion or a
//! muscle table, and a 5 MB name.

use std::path::Path;

use mollier::{InverseDynamicsRun, KinematicsRun, registry};
use mollier_format::{Diagnostic, Diagnostics, EXCERPT_CHARS, Format, MESSAGE_CHARS, parse_as};
use proptest::prelude::*;
use proptest::sample::Index;

const SEEDS: [&str; 6] = [
    "four-bar.toml",
    "slider-crank.toml",
    "spherical-joint.toml",
    "rssr.toml",
    "pendulum.toml",
    "double-pendulum.toml",
];

/// Pieces that make TOML and JSON go wrong in interesting ways: syntax, names, numbers that
/// overflow in products (1e154 squared, 1e308), hostile file references.
const TOKENS: [&str; 46] = [
    "",
    "[",
    "]",
    "{",
    "}",
    "\"",
    "=",
    ",",
    ".",
    ":",
    "\n",
    "#",
    "nan",
    "inf",
    "-",
    "0",
    "1e308",
    "1e-300",
    "[0, 0, 0]",
    "[1, 2]",
    "\"ground\"",
    "\"crank.B\"",
    "\"rocker\"",
    "arm.tip",
    "type",
    "\"hinge\"",
    "\"truss\"",
    "\"beam\"",
    "[[x]]",
    "law",
    "{ stiffness = -1 }",
    "mass",
    "\"rod.orientation\"",
    "free",
    "inputs = []",
    "ÿ",
    "1.3e154",
    "-1e200",
    "9e15",
    "gravity = [0, -1e308, 0]",
    "inertia = [1, 1, 1, 1.3e154, 0, 0]",
    "mass = 1e308",
    "\"/dev/zero\"",
    "\"/proc/self/environ\"",
    "muscle_table = \"/dev/zero\"",
    "[load_sharing]\nmuscle_table = \"/proc/self/environ\"\n",
];

fn seeds() -> Vec<(String, Format)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms");
    let mut out = Vec::new();
    for s in SEEDS {
        let text = std::fs::read_to_string(dir.join(s)).expect("mechanism file");
        let doc = mollier_format::parse(s, &text).expect("seed parses");
        let json = serde_json::to_string_pretty(doc.spec()).expect("seed serializes");
        out.push((text, Format::Toml));
        out.push((json, Format::Json));
    }
    out
}

/// Every problem located, with a hint, and short: a message never echoes more than excerpts.
fn assert_located(d: &Diagnostics, text: &str) {
    for p in d.iter() {
        assert!(
            p.location.is_some() && p.hint.as_deref().is_some_and(|h| !h.is_empty()),
            "{}\n---\n{text}",
            p.render()
        );
        assert_short(p);
    }
}

/// A problem's rendering is bounded whatever the input, and leaks no environment.
fn assert_short(p: &Diagnostic) {
    let r = p.render();
    let bound = p.file.len() + p.path.len() + 2 * MESSAGE_CHARS + 6 * EXCERPT_CHARS;
    assert!(r.chars().count() < bound, "{} characters:\n{r}", r.len());
    if let Some(s) = &p.snippet {
        assert!(s.text.chars().count() <= EXCERPT_CHARS, "{s:?}");
    }
    for (k, v) in std::env::vars().filter(|(_, v)| v.len() >= 12) {
        assert!(!r.contains(&format!("{k}={v}")), "the environment leaks into:\n{r}");
    }
}

fn exercise(text: &str, format: Format) {
    let name = if format == Format::Json { "m.json" } else { "m.toml" };
    let doc = match parse_as(name, text, format) {
        Ok(d) => d,
        Err(d) => return assert_located(&d, text),
    };
    let reg = registry();
    let compiled = match mollier::compile(&doc, &reg) {
        Ok(c) => c,
        Err(d) => return assert_located(&d, text),
    };
    let report = mollier::check(&compiled, &reg);
    for p in &report.problems {
        assert!(p.location.is_some() && p.hint.is_some(), "{}", p.render());
        assert_short(p);
    }
    if report.is_well_posed() {
        let q: Vec<f64> = compiled.model.q0().iter().map(|v| v + 0.3).collect();
        let mut run = KinematicsRun::new(&compiled);
        // solving may fail for a mutated mechanism; it must not panic
        let _ = run.solve(&q);
        let ones = vec![1.0; q.len()];
        // numbers that passed the checks keep the results finite, or the frame fails
        if let Ok(f) = InverseDynamicsRun::new(&compiled).solve(&q, &ones, &ones) {
            let all = f.driving.iter().chain(&f.reactions).chain(&f.passive);
            assert!(all.into_iter().all(|v| v.is_finite()), "non-finite results:\n{text}");
        }
    }
}

fn mutate(mut text: String, edits: &[(Index, usize, usize)]) -> String {
    for (at, len, tok) in edits {
        let mut i = at.index(text.len() + 1);
        while !text.is_char_boundary(i) {
            i -= 1;
        }
        let mut j = (i + len).min(text.len());
        while !text.is_char_boundary(j) {
            j += 1;
        }
        text.replace_range(i..j, TOKENS[*tok]);
    }
    text
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn mutated_model_files_never_panic(
        seed in 0..2 * SEEDS.len(),
        edits in prop::collection::vec((any::<Index>(), 0usize..6, 0..TOKENS.len()), 1..5),
    ) {
        let (text, format) = seeds().swap_remove(seed);
        exercise(&mutate(text, &edits), format);
    }

    #[test]
    fn swapped_numbers_and_names_never_panic(
        seed in 0..SEEDS.len(),
        swaps in prop::collection::vec((any::<Index>(), any::<Index>()), 1..4),
    ) {
        // replace whole words by other words of the same file: names, numbers, keys
        let (text, _) = seeds().swap_remove(2 * seed);
        let words: Vec<&str> = text.split(|c: char| c.is_whitespace() || "[]{},=\"".contains(c)).filter(|w| !w.is_empty()).collect();
        let mut out = text.clone();
        for (a, b) in &swaps {
            let (from, to) = (words[a.index(words.len())], words[b.index(words.len())]);
            out = out.replacen(from, to, 1);
        }
        exercise(&out, Format::Toml);
    }
}

/// A scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mollier-fuzz-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Line and column (characters) of byte `at` of `text`.
fn line_col(text: &[u8], at: usize) -> (usize, usize) {
    let before = &text[..at];
    let line_start = before.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let col = String::from_utf8_lossy(&before[line_start..]).chars().count() + 1;
    (before.iter().filter(|&&b| b == b'\n').count() + 1, col)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 100, ..ProptestConfig::default() })]

    #[test]
    fn bytes_that_are_not_utf8_are_located_at_the_first_one(
        seed in 0..SEEDS.len(),
        at in any::<Index>(),
        bad in prop::sample::select(vec![0xffu8, 0xfe, 0xc0, 0xe9, 0x80, 0xed]),
    ) {
        let (text, _) = seeds().swap_remove(2 * seed);
        let mut bytes = text.into_bytes();
        let mut i = at.index(bytes.len() + 1);
        // at a character boundary, so that the first bad byte is the inserted one
        while i < bytes.len() && (bytes[i] & 0xc0) == 0x80 {
            i += 1;
        }
        bytes.insert(i, bad);
        let path = scratch("utf8").join(format!("m{seed}.toml"));
        std::fs::write(&path, &bytes).expect("write");
        let d = mollier_format::load(&path).expect_err("not UTF-8");
        let p = &d.0[0];
        prop_assert!(p.message.contains("not UTF-8"), "{}", p.render());
        let (line, column) = line_col(&bytes, i);
        prop_assert_eq!(p.location.map(|l| (l.line, l.column)), Some((line, column)));
        assert_short(p);
    }
}

#[test]
fn hostile_file_references_are_refused_quickly_and_echo_nothing() {
    let dir = scratch("hostile");
    let mut targets: Vec<String> = ["/dev/zero", "/dev/null", "/proc/self/environ", "/etc/passwd", "/"]
        .iter()
        .filter(|p| Path::new(p).exists())
        .map(|p| p.to_string())
        .collect();
    targets.push(dir.join("missing.csv").display().to_string());
    #[cfg(unix)]
    {
        let fifo = dir.join("fifo");
        let _ = std::fs::remove_file(&fifo);
        let c = std::ffi::CString::new(fifo.display().to_string()).expect("path");
        // SAFETY: a NUL-terminated path that outlives the call; no writer ever opens it, so a
        // reader that opened it blocking would hang this test
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "mkfifo");
        targets.push(fifo.display().to_string());
    }
    // a model with a muscle table (from the bad-file corpus: its table is missing)
    let model = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bad/ls-table-missing.toml"))
        .expect("model");
    let reg = registry();
    let elbow =
        mollier::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms/elbow-muscles.toml"), &reg)
            .unwrap_or_else(|d| panic!("{}", d.render()));
    let mut checked = 0;
    for t in &targets {
        // as a model file, a motion file, and a muscle table named in a model
        let as_model = mollier::load(Path::new(t), &reg).expect_err("refused as a model");
        let as_motion = mollier::read_motion(Path::new(t), &elbow.inputs).expect_err("refused as a motion");
        let text = model.replace("muscle_table = \"no-such-table.csv\"", &format!("muscle_table = {t:?}"));
        assert_ne!(text, model, "the model names its muscle table");
        let file = dir.join("model.toml");
        std::fs::write(&file, text).expect("write");
        let as_table = mollier::load(&file, &reg).expect_err("refused as a muscle table");
        // a readable text file that is no model: at most an excerpt of the line at fault is shown
        // (read by the safe reader: /dev/zero would fill the memory)
        let lines: Vec<String> = mollier_format::read_text(Path::new(t), "file")
            .map(|x| x.lines().filter(|l| l.len() >= 8).map(str::to_string).collect())
            .unwrap_or_default();
        for d in as_model.iter().chain(as_motion.iter()).chain(as_table.iter()) {
            assert_short(d);
            let r = d.render();
            assert!(lines.iter().filter(|l| r.contains(l.as_str())).count() <= 1, "more than one line echoed:\n{r}");
        }
        checked += 1;
    }
    assert_eq!(checked, targets.len());
    assert!(checked >= 2);
}

#[test]
fn a_huge_name_gets_a_short_message_at_once() {
    let text = seeds().swap_remove(0).0;
    let huge = format!("rocker.{}", "C".repeat(5_000_000));
    let bad = text.replacen("\"rocker.C\"", &format!("{huge:?}"), 1);
    assert_ne!(bad, text, "the seed names rocker.C");
    let start = std::time::Instant::now();
    let doc = parse_as("m.toml", &bad, Format::Toml).unwrap_or_else(|d| panic!("{}", d.render()));
    let d = mollier::compile(&doc, &registry()).expect_err("an unknown point");
    // bounded work: the 43 s of the issue were the did-you-mean search over 5 MB
    assert!(start.elapsed().as_secs() < 20, "{:?}", start.elapsed());
    assert!(d.0.iter().any(|p| p.message.contains("…")), "{}", d.render());
    assert_located(&d, "");
}

#[test]
fn the_seeds_themselves_are_valid() {
    for (text, format) in seeds() {
        let doc = parse_as("seed", &text, format).unwrap_or_else(|d| panic!("{}", d.render()));
        let c = mollier::compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
        assert!(mollier::check(&c, &registry()).is_well_posed());
    }
}
