//! `mollier kinematics MODEL --motion MOTION --out DIR`.

use super::prelude::*;

/// Kinematics over a motion's frames.
struct KinematicsFrames<'a> {
    run: KinematicsRun<'a>,
    motion: Motion,
}

impl FrameRun for KinematicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        vec![
            Table::plain("positions.csv", self.run.position_header()),
            Table::plain("deformations.csv", self.run.deformation_header()),
            Table::plain("transfer.csv", self.run.transfer_header()),
        ]
    }
    fn units(&self) -> bool {
        false
    }
    fn frames(&self) -> usize {
        self.motion.times.len()
    }
    fn time(&self, i: usize) -> f64 {
        self.motion.times[i]
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        let f = self.run.solve(&self.motion.q[i])?;
        Ok(vec![Row { time: self.motion.times[i], values: vec![f.positions, f.deformations, f.transfer] }])
    }
}

pub fn run(model: &Path, motion: &Path, out: &Path, on_error: OnError, quiet: bool, registry: &Registry) -> ExitCode {
    let (compiled, motion) = match load_with_motion(model, motion, quiet, registry) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let summary = summary_head("kinematics", model, Some(&motion.file));
    let mut frames = KinematicsFrames { run: KinematicsRun::new(&compiled), motion };
    run_frames(&mut frames, out, LoopKind { noun: "frame", failed: frame_at, on_error, summary }, quiet)
}
