//! `mollier kinematics MODEL --motion MOTION --out DIR`.

use super::prelude::*;

/// The muscles' columns: every `truss` and `curved-truss` whose elongation is free, with where
/// its elongation and transfer functions are in a frame's output and its reference length (m).
struct Muscles {
    names: Vec<String>,
    deformation: Vec<usize>,
    transfer: Vec<usize>,
    reference: Vec<f64>,
}

impl Muscles {
    fn of(compiled: &Compiled, run: &KinematicsRun) -> Self {
        let (deformation_header, transfer_header) = (run.deformation_header(), run.transfer_header());
        let first_input = compiled.inputs.first().map(|i| i.name.as_str());
        let mut m = Muscles { names: Vec::new(), deformation: Vec::new(), transfer: Vec::new(), reference: Vec::new() };
        for el in compiled.elements.iter().filter(|e| e.kind == "truss" || e.kind == "curved-truss") {
            let Some(mode) = compiled.model.mode_by_name(el.id, "elongation") else { continue };
            if compiled.model.mode_role(mode) != ModeRole::Dependent {
                continue;
            }
            let label = format!("{}.elongation", el.name);
            let (Some(d), Some(t)) = (
                deformation_header.iter().position(|h| *h == label),
                first_input.and_then(|i| transfer_header.iter().position(|h| *h == format!("{label}/{i}"))),
            ) else {
                continue;
            };
            m.names.push(el.name.clone());
            m.deformation.push(d);
            m.transfer.push(t);
            m.reference.push(compiled.model.mode_reference(mode).unwrap_or(0.0));
        }
        m
    }
}

/// Kinematics over a motion's frames.
struct KinematicsFrames<'a> {
    run: KinematicsRun<'a>,
    motion: Motion,
    muscles: Muscles,
    inputs: Vec<String>,
}

impl FrameRun for KinematicsFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        let mut t = vec![
            Table::plain("positions.csv", self.run.position_header()),
            Table::plain("deformations.csv", self.run.deformation_header()),
            Table::plain("transfer.csv", self.run.transfer_header()),
        ];
        if !self.muscles.names.is_empty() {
            t.push(Table::plain("lengths.csv", self.muscles.names.clone()));
            let arms =
                self.muscles.names.iter().flat_map(|m| self.inputs.iter().map(move |i| format!("{m}/{i}"))).collect();
            t.push(Table::plain("moment_arms.csv", arms));
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
        let m = &self.muscles;
        let n_q = self.inputs.len();
        let mut values = vec![];
        if !m.names.is_empty() {
            let lengths = (0..m.names.len()).map(|k| m.reference[k] + f.deformations[m.deformation[k]]).collect();
            // a moment arm is minus the transfer function of the muscle's length
            let arms = (0..m.names.len())
                .flat_map(|k| (0..n_q).map(move |j| (k, j)))
                .map(|(k, j)| -f.transfer[m.transfer[k] + j])
                .collect();
            values = vec![lengths, arms];
        }
        let mut all = vec![f.positions, f.deformations, f.transfer];
        all.extend(values);
        all.push(f.second_order);
        Ok(vec![Row { time: self.motion.times[i], values: all }])
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
    let muscles = Muscles::of(&compiled, &run);
    let inputs = compiled.inputs.iter().map(|i| i.name.clone()).collect();
    let mut frames = KinematicsFrames { run, motion, muscles, inputs };
    run_frames(&mut frames, r.out, LoopKind { noun: "frame", failed: frame_at, on_error: r.on_error, summary }, r.quiet)
}
