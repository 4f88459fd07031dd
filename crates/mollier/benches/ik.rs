//! Marker inverse kinematics on OpenSim's gait2354 walking example: the first 30 frames of
//! `subject01_walk1.trc` fitted to `subject01_simbody.osim` with the tasks of
//! `subject01_Setup_IK.xml` (31 markers, 4 coordinate tasks), each frame warm-started from the
//! last — what `mollier ik` does. `tolerance` is the stopping tolerance (rad or m): 1e-10 is the
//! default, 1e-5 OpenSim's `accuracy` in that setup. The files come from
//! `tools/fetch-opensim-models` (`Gait2354_Simbody/` in `$MOLLIER_OPENSIM_MODELS`, else in
//! `.cache/opensim-models`); without them the bench says SKIPPED. OpenSim's time for the same
//! frames: `tools/peer_opensim_ik.py --out /tmp/ik.csv` prints it. Run with `cargo bench -p
//! mollier --bench ik`.

use divan::Bencher;
use mollier::ik::{IkOptions, IkRun, load_model, read_tasks};
use mollier::read_trc;

fn main() {
    divan::main();
}

/// Frames fitted per iteration.
const FRAMES: usize = 30;

#[divan::bench(args = [1e-10, 1e-5])]
fn gait2354_walk_30_frames(bencher: Bencher, tolerance: f64) {
    let dir = mollier_core::shared_data::opensim_models().join("Gait2354_Simbody");
    if !dir.join("subject01_walk1.trc").is_file() {
        eprintln!("SKIPPED: {} has no gait2354 pipeline (run tools/fetch-opensim-models)", dir.display());
        return;
    }
    let registry = mollier::registry();
    let (compiled, unknowns) = load_model(&dir.join("subject01_simbody.osim"), &registry).expect("the model imports");
    let trial = read_trc(&dir.join("subject01_walk1.trc")).expect("the trial reads");
    let tasks = read_tasks(&dir.join("subject01_Setup_IK.xml")).expect("the tasks read");
    let options = IkOptions::default().with_tolerance(tolerance).expect("a valid tolerance");
    bencher.bench_local(|| {
        let mut run = IkRun::new(&compiled, &registry, unknowns.clone(), &trial, Some(&tasks))
            .expect("IK sets up")
            .with_options(options);
        for i in 0..FRAMES {
            run.solve(i).expect("the frame fits");
        }
    });
}
