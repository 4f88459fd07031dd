//! `mollier kinematics MODEL --motion MOTION --out DIR`.

use super::prelude::*;

/// Kinematics over a motion's frames.
struct KinematicsFrames<'a> {
    run: KinematicsRun<'a>,
    motion: Motion,
    muscles: MuscleColumns,
}

impl FrameRun for KinematicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        let mut t = vec![
            Table::plain("positions.csv", self.run.position_header()),
            Table::plain("deformations.csv", self.run.deformation_header()),
            Table::plain("transfer.csv", self.run.transfer_header()),
        ];
        if !self.muscles.names().is_empty() {
            t.push(Table::plain("lengths.csv", self.muscles.names().to_vec()));
            t.push(Table::plain("moment_arms.csv", self.muscles.moment_arm_header()));
        }
        let second = self.run.second_order_header();
        if !second.is_empty() {
            t.push(Table::plain("second_order.csv", second));
        }
        t
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
        let mut values = vec![];
        if !self.muscles.names().is_empty() {
            let (lengths, arms) = self.muscles.values(&f);
            values = vec![lengths, arms];
        }
        let mut all = vec![f.positions, f.deformations, f.transfer];
        all.extend(values);
        all.push(f.second_order);
        Ok(vec![Row { time: self.motion.times[i], values: all, warnings: f.warnings }])
    }
}

pub fn run(r: &MotionRun, second_order: bool, registry: &Registry) -> ExitCode {
    let (compiled, motion) = match load_with_motion(r.model, r.motion, r.quiet, registry) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let summary = summary_head("kinematics", r.model, Some(&motion.file));
    let mut run = KinematicsRun::new(&compiled);
    if second_order {
        run = run.with_second_order();
    }
    let muscles = MuscleColumns::of(&compiled, &run);
    let mut frames = KinematicsFrames { run, motion, muscles };
    run_frames(&mut frames, r.out, LoopKind { noun: "frame", failed: frame_at, on_error: r.on_error, summary }, r.quiet)
}
