//! Mutated model files through the parser, the compiler, the well-posedness check, one kinematic
//! solve and one inverse-dynamics frame: nothing may panic, and every problem must come with a
//! location and a hint.

use std::path::Path;

use mollier::{InverseDynamicsRun, KinematicsRun, registry};
use mollier_format::{Diagnostics, Format, parse_as};
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

/// Pieces that make TOML and JSON go wrong in interesting ways.
const TOKENS: [&str; 36] = [
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

fn assert_located(d: &Diagnostics, text: &str) {
    for p in d.iter() {
        assert!(
            p.location.is_some() && p.hint.as_deref().is_some_and(|h| !h.is_empty()),
            "{}\n---\n{text}",
            p.render()
        );
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
    }
    if report.is_well_posed() {
        let q: Vec<f64> = compiled.model.q0().iter().map(|v| v + 0.3).collect();
        let mut run = KinematicsRun::new(&compiled);
        // solving may fail for a mutated mechanism; it must not panic
        let _ = run.solve(&q);
        let ones = vec![1.0; q.len()];
        let _ = InverseDynamicsRun::new(&compiled).solve(&q, &ones, &ones);
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

#[test]
fn the_seeds_themselves_are_valid() {
    for (text, format) in seeds() {
        let doc = parse_as("seed", &text, format).unwrap_or_else(|d| panic!("{}", d.render()));
        let c = mollier::compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
        assert!(mollier::check(&c, &registry()).is_well_posed());
    }
}
