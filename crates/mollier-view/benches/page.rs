//! Building the viewer's page for the shoulder abduction (`models/shoulder/abduction.toml`, de
//! Groot & Brand's rhythm from 1° to 179°): at the study's 37 frames and at 721 (0.25° steps,
//! the rhythm itself at every frame).
//!
//! - `geometry`: [`Geometry::build`], each frame solved as `mollier kinematics` solves it (from
//!   the previous one) and every element drawn: the muscles' wrapped paths sampled along their
//!   geodesics, the obstacles, the joint axes;
//! - `kinematics_alone`: the same frames through [`mollier::KinematicsRun`] without drawing, for
//!   scale (what `mollier kinematics` computes);
//! - `page_from_geometry`: [`page`] from that geometry: the JSON with its base64 arrays, the HTML around it
//!   and the embedded three.js (no forces: they are a copy of the study's numbers).
//!
//! Run with `cargo bench -p mollier-view --bench page`; figures in docs/performance.md
//! ("Viewer").

use std::path::Path;

use divan::Bencher;
use mollier::Rows;
use mollier_study::Study;
use mollier_view::{Geometry, page};

fn main() {
    divan::main();
}

/// The shoulder and the abduction's times and inputs at `frames` frames.
fn abduction(frames: usize) -> (mollier::Compiled, Vec<f64>, Rows) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder/abduction.toml");
    let s = Study::load(&path).expect("the abduction study loads");
    let mut spec = s.spec;
    spec.motion.frames = frames;
    let s = Study::with_model(&path, spec, s.compiled).expect("the abduction at this many frames");
    let mut q = Rows::new(s.compiled.inputs.len());
    for f in &s.motion.frames {
        q.push(&f.q);
    }
    let times = s.motion.frames.iter().map(|f| f.time).collect();
    (s.compiled, times, q)
}

#[divan::bench(args = [37, 721], sample_count = 5, sample_size = 1)]
fn geometry(bencher: Bencher, frames: usize) {
    let (c, times, q) = abduction(frames);
    bencher.bench(|| Geometry::build(&c, &times, &q, 1, "abduction").expect("every frame solves"));
}

#[divan::bench(args = [37, 721], sample_count = 5, sample_size = 1)]
fn kinematics_alone(bencher: Bencher, frames: usize) {
    let (c, _, q) = abduction(frames);
    bencher.bench(|| {
        let mut run = mollier::KinematicsRun::new(&c);
        (0..q.len()).map(|i| run.solve(&q[i]).expect("solves").positions.len()).sum::<usize>()
    });
}

#[divan::bench(args = [37, 721], sample_count = 10, sample_size = 1)]
fn page_from_geometry(bencher: Bencher, frames: usize) {
    let (c, times, q) = abduction(frames);
    let g = Geometry::build(&c, &times, &q, 1, "abduction").expect("every frame solves");
    assert_eq!(g.frames(), frames);
    bencher.bench(|| page(&g));
}
