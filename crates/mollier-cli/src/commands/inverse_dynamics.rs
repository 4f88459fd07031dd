//! `mollier inverse-dynamics MODEL --motion MOTION --out DIR`.

use super::prelude::*;

/// Inverse dynamics over a motion's frames, with its derivatives.
struct InverseDynamicsFrames<'a> {
    compiled: &'a Compiled,
    run: InverseDynamicsRun<'a>,
    times: Vec<f64>,
    motion: MotionDerivatives,
}

impl FrameRun for InverseDynamicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        vec![
            Table { file: "driving.csv".into(), columns: self.run.driving_columns().to_vec() },
            Table { file: "reactions.csv".into(), columns: self.run.reaction_columns().to_vec() },
            Table { file: "passive.csv".into(), columns: self.run.passive_columns().to_vec() },
        ]
    }
    fn frames(&self) -> usize {
        self.times.len()
    }
    fn time(&self, i: usize) -> f64 {
        self.times[i]
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        let m = &self.motion;
        let f = self.run.solve_at(self.times[i], &m.q[i], &m.qd[i], &m.qdd[i])?;
        // the writer's rows own their values
        let values = vec![f.driving.clone(), f.reactions.clone(), f.passive.clone()];
        let warnings = mollier::element_warnings(self.compiled, self.run.data());
        Ok(vec![Row { time: self.times[i], values, warnings }])
    }
}

pub fn run(r: &MotionRun, smooth: Option<f64>, registry: &Registry) -> ExitCode {
    let (compiled, motion) = match load_with_motion(r.model, r.motion, r.quiet, registry) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let (first, last) = (motion.times[0], motion.times[motion.times.len() - 1]);
    let loads = match load_loads(r.loads, &compiled, first, last) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if loads.is_none() {
        note_if_weightless(&compiled, r.quiet);
    }
    let smoothing = smooth.map_or(Smoothing::Interpolate, Smoothing::Cutoff);
    let derivatives = match motion.differentiate(smoothing) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {}: cannot differentiate the motion: {e}", motion.file);
            return ExitCode::from(INVALID);
        }
    };
    let mut summary = summary_head("inverse-dynamics", r.model, Some(&motion.file));
    summary.insert("motion_derivatives".into(), json!(derivatives_text(Some(&derivatives), &compiled.inputs)));
    if let Some(l) = &loads {
        summary.insert("loads".into(), json!(l.file));
    }
    let run = InverseDynamicsRun::new(&compiled).with_loads(loads.as_ref());
    let mut frames = InverseDynamicsFrames { compiled: &compiled, run, times: motion.times, motion: derivatives };
    run_frames(&mut frames, r.out, LoopKind { noun: "frame", failed: frame_at, on_error: r.on_error, summary }, r.quiet)
}
