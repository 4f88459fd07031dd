//! `mollier simulate MODEL --duration T --dt DT --out DIR`.

use super::prelude::*;

/// A simulation, in chunks of steps (one progress tick per chunk).
struct SimulationFrames<'a> {
    sim: Simulation<'a>,
    steps: usize,
    chunk: usize,
    e0: Option<f64>,
    drift: f64,
}

impl SimulationFrames<'_> {
    fn row(&mut self, s: &SimulationState) -> Row {
        let mut values = vec![s.q.clone(), s.qd.clone()];
        if let (Some(e0), Some(e)) = (self.e0, s.energy) {
            self.drift = self.drift.max((e - e0).abs());
            values.push(vec![e, e - e0]);
        }
        Row { time: s.time, values }
    }
}

impl FrameRun for SimulationFrames<'_> {
    fn tables(&self) -> Vec<Table> {
        let inputs = &self.sim.compiled().inputs;
        let column = |i: &mollier::InputInfo, rate: bool| {
            let (unit, what) = match (i.quantity, rate) {
                (Quantity::Length, false) => ("m", "generalized coordinate"),
                (Quantity::Length, true) => ("m/s", "its rate"),
                (_, false) => ("rad", "generalized coordinate"),
                (_, true) => ("rad/s", "its rate"),
            };
            Column { name: i.name.clone(), unit, meaning: what.to_string() }
        };
        let mut t = vec![
            Table { file: "motion.csv".into(), columns: inputs.iter().map(|i| column(i, false)).collect() },
            Table { file: "velocities.csv".into(), columns: inputs.iter().map(|i| column(i, true)).collect() },
        ];
        if self.e0.is_some() {
            t.push(Table {
                file: "energy.csv".into(),
                columns: vec![
                    Column {
                        name: "energy".into(),
                        unit: "J",
                        meaning: "kinetic plus potential energy (gravity, springs of the laws)".into(),
                    },
                    Column { name: "drift".into(), unit: "J", meaning: "energy minus its initial value".into() },
                ],
            });
        }
        t
    }
    fn frames(&self) -> usize {
        // frame 0 is the initial state
        1 + self.steps.div_ceil(self.chunk)
    }
    fn summary(&self) -> serde_json::Map<String, Value> {
        let mut m = serde_json::Map::new();
        m.insert("end_time_s".into(), json!(self.sim.state().time));
        // absent when a law defines no energy (no energy.csv then)
        m.insert("max_energy_drift_J".into(), json!(self.e0.map(|_| self.drift)));
        m
    }
    fn rows_in(&self, i: usize) -> usize {
        if i == 0 { 1 } else { self.chunk.min(self.steps - (i - 1) * self.chunk) }
    }
    fn time(&self, _: usize) -> f64 {
        self.sim.state().time
    }
    fn solve(&mut self, i: usize) -> Result<Vec<Row>, FrameError> {
        if i == 0 {
            let s = self.sim.state().clone();
            return Ok(vec![self.row(&s)]);
        }
        let n = self.rows_in(i);
        let states = self.sim.advance(n)?;
        Ok(states.iter().map(|s| self.row(s)).collect())
    }
}

pub fn run(model: &Path, duration: f64, dt: f64, out: &Path, quiet: bool, registry: &Registry) -> ExitCode {
    let steps = duration / dt;
    if !(dt > 0.0 && duration > 0.0 && steps.is_finite() && steps <= 1e9) {
        errln!("error: --duration and --dt must be positive, and at most 1e9 steps long (got {duration} s and {dt} s)");
        return ExitCode::from(INVALID);
    }
    // a duration that is a whole number of steps up to rounding is not one step more
    let steps = (steps - 1e-9).ceil().max(1.0) as usize;
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    note_if_weightless(&compiled, quiet);
    let sim = match Simulation::new(&compiled, dt) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: the initial configuration: {e}");
            return ExitCode::from(FAILED);
        }
    };
    let e0 = sim.state().energy;
    let conservative = sim.is_conservative();
    let mut frames = SimulationFrames { sim, steps, chunk: steps.div_ceil(200).max(1), e0, drift: 0.0 };
    let mut summary = summary_head("simulate", model, None);
    summary.insert("duration_s".into(), json!(duration));
    summary.insert("dt_s".into(), json!(dt));
    summary.insert("conservative".into(), json!(conservative));
    let kind = LoopKind { noun: "step", failed: steps_from, on_error: OnError::Stop, summary };
    let code = run_frames(&mut frames, out, kind, quiet);
    if !quiet {
        let t = frames.sim.state().time;
        match e0 {
            Some(_) if conservative => {
                errln!("energy drift over {t} s: max |E − E(0)| = {:.3e} J", frames.drift)
            }
            Some(_) => errln!(
                "energy change over {t} s: max |E − E(0)| = {:.3e} J (the model has damping or loads: energy is not conserved)",
                frames.drift
            ),
            None => errln!("note: a law of the model defines no energy: energy.csv is not written"),
        }
    }
    code
}
