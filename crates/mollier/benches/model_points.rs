//! Building a model against its number of points: a pendulum whose arm carries `n` points (and
//! `n / 10` more named after them), parsed and compiled. Linear in `n` since the compile
//! indexes the file's names (80,000 points took 31 s before: a scan of the body's points per
//! point). Run with `cargo bench -p mollier --bench model_points`.

use divan::Bencher;

#[path = "../tests/support/points.rs"]
mod points;
use points::many_points;

fn main() {
    divan::main();
}

#[divan::bench(args = [10_000, 20_000, 40_000, 80_000], sample_count = 3)]
fn parse_and_compile(bencher: Bencher, n: usize) {
    let text = many_points(n);
    let registry = mollier::registry();
    bencher.bench(|| {
        let doc = mollier_format::parse("points.toml", &text).expect("a valid model");
        mollier::compile(&doc, &registry).expect("compiled")
    });
}
