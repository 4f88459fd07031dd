//! `mollier inverse`'s streaming path on a long motion: 1e6 frames of the elbow
//! (models/mechanisms/elbow-muscles.toml, criterion d, joint cone imposed, quasi-static: the
//! postures of elbow-muscles-motion.csv over and over) solved in parallel chunks and written
//! through the shared output writer as they are solved; reports the process's peak resident
//! memory (VmHWM), which must stay under 200 MB. Run with
//! `cargo bench -p mollier --bench streaming_inverse` (about a minute per 1e6 frames on
//! two cores; `MOLLIER_BENCH_FRAMES` sets the number); figures in docs/performance.md.

use std::path::Path;

use divan::Bencher;
use mollier::LoadSharingTables;
use mollier::output::OutputDir;
use mollier_optim::{Criterion, Frame, LoadSharing, RunOptions};

fn main() {
    divan::main();
}

#[path = "../tests/support/peak.rs"]
mod peak;

/// Peak resident memory of this process (MB), from /proc/self/status; `None` elsewhere.
fn peak_mb() -> Option<f64> {
    Some(peak::status_bytes("VmHWM:")? / (1024.0 * 1024.0))
}

#[divan::bench(sample_count = 1, sample_size = 1)]
fn elbow_frames_streamed(bencher: Bencher) {
    let n: usize = std::env::var("MOLLIER_BENCH_FRAMES").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms");
    let registry = mollier::registry();
    let c = mollier::load(&root.join("elbow-muscles.toml"), &registry).expect("the elbow model");
    let motion = mollier::read_motion(&root.join("elbow-muscles-motion.csv"), &c.inputs).expect("its motion");
    let setup = c.load_sharing.as_ref().expect("a [load_sharing] section");
    let study = setup.study(Criterion::MaxStress, true);
    let sharing = LoadSharing::new(&c.model, study.clone()).expect("a valid study");
    let out = std::env::temp_dir().join(format!("mollier-bench-streaming-{}", std::process::id()));
    let before = peak_mb();
    bencher.bench(|| {
        let mut dir = OutputDir::create(&out).expect("an output directory");
        let mut tables =
            LoadSharingTables::open(&mut dir, "", setup, &study, &["time".to_string()], false).expect("tables");
        let frame = |k: usize| Frame::at_rest(k as f64 * 0.01, motion.q[k % motion.q.len()].to_vec());
        let mut failed = 0usize;
        sharing
            .run_streaming(n, &frame, RunOptions::default(), &|_| {}, |k, r| {
                failed += usize::from(!r.status.is_success());
                tables.push(&mut dir, &[k as f64 * 0.01], &r, None)
            })
            .expect("written");
        let (summary, timing) = tables.finish(serde_json::Map::new());
        dir.commit(summary, timing).expect("committed");
        assert_eq!(failed, 0);
    });
    let forces = std::fs::metadata(out.join("forces.csv")).map(|m| m.len()).unwrap_or(0);
    let _ = std::fs::remove_dir_all(&out);
    if let (Some(b), Some(peak)) = (before, peak_mb()) {
        eprintln!(
            "{n} frames: peak resident memory {peak:.1} MB (before the run {b:.1} MB); forces.csv {:.0} MB",
            forces as f64 / 1e6
        );
        assert!(peak < 200.0, "peak memory {peak:.1} MB over 200 MB");
    }
}
