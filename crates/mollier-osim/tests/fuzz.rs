//! A mutation fuzzer for the two ways text becomes a model: an `.osim` file (import, then parse,
//! compile and check what it makes) and a model file (TOML or JSON: parse, compile, check).
//! Nothing may panic and no input may take long.
//!
//! Seeds: the `.osim` fixtures of this crate, the mechanisms in `models/mechanisms/` and the
//! corpus in `fuzz/corpus/` (small inputs, and every input that once failed). Each case takes a
//! seed and applies a few mutations (byte changes, cuts, copies, splices with another seed,
//! tokens of XML, TOML and numbers), from a seeded generator, so a run is repeatable.
//!
//! In the normal tests: the corpus replayed and 1,500 mutants of each kind. The long run
//! (`fuzz/README.md`): `MOLLIER_FUZZ_CASES=1000000 MOLLIER_FUZZ_SEED=1 cargo test -p mollier-osim
//! --test fuzz -- --nocapture`; a failing input is written to `MOLLIER_FUZZ_OUT` (default
//! `fuzz/found/`) for the corpus.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Longest a case may take (debug build, a loaded machine): a hang or a quadratic step shows as
/// far more.
const SLOW: Duration = Duration::from_secs(5);

/// Largest mutant (bytes).
const MAX_LEN: usize = 1 << 17;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Which door an input goes through.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    Osim,
    Toml,
    Json,
}

impl Kind {
    fn file(self) -> &'static str {
        match self {
            Kind::Osim => "fuzz.osim",
            Kind::Toml => "fuzz.toml",
            Kind::Json => "fuzz.json",
        }
    }
}

/// One case: the text through import (for `.osim`), parse, compile and check. Errors are fine;
/// a panic is not. Returns whether the text made a well-posed model (for the statistics).
fn run(kind: Kind, text: &str) -> bool {
    let registry = mollier::registry();
    let toml;
    let (file, model) = match kind {
        Kind::Osim => match mollier_osim::import(kind.file(), text) {
            Ok(i) => {
                toml = i.toml;
                ("fuzz.osim.toml", toml.as_str())
            }
            Err(d) => {
                let _ = d.render();
                return false;
            }
        },
        _ => (kind.file(), text),
    };
    let Ok(doc) = mollier_format::parse(file, model) else {
        // an import must make a file Mollier reads
        assert!(kind != Kind::Osim, "the import made a model file that does not parse");
        return false;
    };
    let Ok(compiled) = mollier::compile(&doc, &registry) else { return false };
    mollier::check(&compiled, &registry).is_well_posed()
}

/// xorshift64*: small, seeded, repeatable.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

const TOKENS: &[&str] = &[
    "<",
    ">",
    "</",
    "/>",
    "\"",
    "'",
    "=",
    "::",
    "<!--",
    "-->",
    "&#10;",
    "&amp;",
    "&lt;",
    "]]>",
    "nan",
    "inf",
    "-inf",
    "1e308",
    "-1e400",
    "0",
    "-0",
    "1e-320",
    "9999999999",
    "\n",
    "\t",
    "\r",
    "[",
    "]",
    "{",
    "}",
    "#",
    ".",
    ",",
    "\\",
    "\"\"\"",
    "'''",
    "\u{0}",
    "\u{1b}",
    "\u{2028}",
    "é",
    "<Body name=\"b\"><mass>1</mass></Body>",
    "<objects>",
    "</objects>",
    "<MultiplierFunction><scale>2</scale><Constant><value>1</value></Constant></MultiplierFunction>",
    "<coordinates>c</coordinates>",
    "<range>1 -1</range>",
    "<default_value>1e9</default_value>",
    "<locked>true</locked>",
    "<quadrant>-y</quadrant>",
    "<radius>0</radius>",
    "/bodyset/",
    "/ground",
    "type = ",
    "\"truss\"",
    "\"curved-truss\"",
    "\"hinge\"",
    "\"beam\"",
    "inputs = [",
    "free = [",
    "[elements.",
    "[bodies.",
    "[nodes.",
    "[load_sharing]",
    "obstacles = [",
    "via = [",
    "\"p\": ",
    "{\"",
    "null",
    "true",
    "[[",
    "]]",
];

/// A mutant of `seeds[i]`: one to four mutations.
fn mutate(rng: &mut Rng, seeds: &[Vec<u8>], i: usize) -> Vec<u8> {
    let mut b = seeds[i].clone();
    for _ in 0..1 + rng.below(4) {
        let n = b.len();
        match rng.below(6) {
            0 if n > 0 => {
                let k = rng.below(n);
                b[k] = rng.next() as u8;
            }
            1 if n > 0 => {
                let k = rng.below(n);
                let len = 1 + rng.below((n - k).min(256));
                b.drain(k..k + len);
            }
            2 if n > 0 => {
                let k = rng.below(n);
                let len = 1 + rng.below((n - k).min(512));
                let piece = b[k..k + len].to_vec();
                let at = rng.below(n);
                b.splice(at..at, piece);
            }
            3 => {
                let other = &seeds[rng.below(seeds.len())];
                if !other.is_empty() && n > 0 {
                    let (k, at) = (rng.below(other.len()), rng.below(n));
                    let len = 1 + rng.below((other.len() - k).min(1024));
                    b.splice(at..at, other[k..k + len].iter().copied());
                }
            }
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                let at = rng.below(n + 1);
                b.splice(at..at, t.iter().copied());
            }
        }
    }
    b.truncate(MAX_LEN);
    b
}

fn read_dir(dir: &Path, ext: &str) -> Vec<Vec<u8>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == ext)).collect())
        .unwrap_or_default();
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}

fn seeds(kind: Kind) -> Vec<Vec<u8>> {
    let r = root();
    match kind {
        Kind::Osim => {
            let mut s = read_dir(&r.join("crates/mollier-osim/tests/data/osim"), "osim");
            s.extend(read_dir(&r.join("fuzz/corpus/osim"), "osim"));
            s
        }
        Kind::Toml => {
            let mut s = read_dir(&r.join("models/mechanisms"), "toml");
            s.extend(read_dir(&r.join("fuzz/corpus/model"), "toml"));
            s
        }
        Kind::Json => read_dir(&r.join("fuzz/corpus/model"), "json"),
    }
}

/// Run `cases` mutants of each kind from `seed`; failing inputs are written to `out` and
/// returned as messages.
fn fuzz(cases: usize, seed: u64, out: &Path) -> Vec<String> {
    let mut failures = Vec::new();
    for kind in [Kind::Osim, Kind::Toml, Kind::Json] {
        let seeds = seeds(kind);
        assert!(!seeds.is_empty(), "no seeds for {kind:?}");
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let (mut posed, mut slowest) = (0usize, Duration::ZERO);
        let inputs = seeds.iter().cloned().chain((0..cases).map(|c| mutate(&mut rng, &seeds, c % seeds.len())));
        for (c, bytes) in inputs.enumerate() {
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let start = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| run(kind, &text)));
            let took = start.elapsed();
            slowest = slowest.max(took);
            let problem = match result {
                Ok(ok) => {
                    posed += ok as usize;
                    (took > SLOW).then(|| format!("took {took:?}"))
                }
                Err(p) => Some(format!(
                    "panicked: {}",
                    p.downcast_ref::<String>()
                        .cloned()
                        .or(p.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                )),
            };
            if let Some(why) = problem {
                let _ = std::fs::create_dir_all(out);
                let name = out.join(format!("{kind:?}-{seed}-{c}.{}", kind.file().rsplit('.').next().unwrap_or("txt")));
                let _ = std::fs::write(&name, &bytes);
                failures.push(format!("{kind:?} case {c} {why}: {}", name.display()));
            }
            if cases >= 100_000 && c % 100_000 == 0 {
                eprintln!("{kind:?}: {c} cases, {posed} well posed, slowest {slowest:?}, {} failures", failures.len());
            }
        }
        eprintln!("{kind:?}: {} seeds + {cases} mutants, {posed} well posed, slowest {slowest:?}", seeds.len());
    }
    failures
}

#[test]
fn the_corpus_and_mutants_of_it_neither_panic_nor_hang() {
    let cases = std::env::var("MOLLIER_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500);
    let seed = std::env::var("MOLLIER_FUZZ_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(20261128);
    let out = std::env::var_os("MOLLIER_FUZZ_OUT").map(PathBuf::from).unwrap_or_else(|| root().join("fuzz/found"));
    let failures = fuzz(cases, seed, &out);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
