//! `mollier ik MODEL --markers TRIAL.trc --out DIR [--tasks FILE]`.

use std::time::Instant;

use mollier::ik::{self, IkRun};

use super::prelude::*;

/// What `mollier ik` is given.
pub(crate) struct Request<'a> {
    pub(crate) model: &'a Path,
    pub(crate) markers: &'a Path,
    pub(crate) tasks: Option<&'a Path>,
    pub(crate) tolerance: f64,
    pub(crate) out: &'a Path,
    pub(crate) quiet: bool,
}

pub(crate) fn run(r: &Request, registry: &Registry) -> ExitCode {
    let invalid = |d: &Diagnostics| {
        report(d);
        ExitCode::from(INVALID)
    };
    let options = match ik::IkOptions::default().with_tolerance(r.tolerance) {
        Ok(o) => o,
        Err(d) => return invalid(&Diagnostics::one(*d)),
    };
    let (compiled, unknowns) = match ik::load_model(r.model, registry) {
        Ok(v) => v,
        Err(d) => return invalid(&d),
    };
    let verdict = mollier::check(&compiled, registry);
    if !verdict.problems.is_empty() || !verdict.is_well_posed() {
        // the same verdict as the other commands give
        return load_well_posed(r.model, registry).err().unwrap_or(ExitCode::from(FAILED));
    }
    let trial = match mollier::read_trc(r.markers) {
        Ok(t) => t,
        Err(d) => return invalid(&d),
    };
    let tasks = match r.tasks.map(ik::read_tasks).transpose() {
        Ok(t) => t,
        Err(d) => return invalid(&d),
    };
    let mut run = match IkRun::new(&compiled, registry, unknowns, &trial, tasks.as_ref()) {
        Ok(run) => run.with_options(options),
        Err(d) => return invalid(&d),
    };
    if !run.ignored().is_empty() && !r.quiet {
        errln!("note: {} marker(s) of the trial not fitted: {}", run.ignored().len(), run.ignored().join(", "));
    }
    let bar = progress_bar(trial.len(), "{bar:40} {pos}/{len} frames", r.quiet);
    let start = Instant::now();
    let frames = match ik::solve_all(&mut run, |_| bar.inc(1)) {
        Ok(f) => f,
        Err((i, e)) => {
            bar.finish_and_clear();
            errln!(
                "error: {}: frame {} (t = {} s) cannot be solved: {e}",
                trial.file,
                trial.frame_numbers[i],
                trial.times[i]
            );
            errln!("nothing was written");
            return ExitCode::from(FAILED);
        }
    };
    bar.finish_and_clear();
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let head = summary_head("ik", r.model, None);
    let timing = json!({ "wall_ms": wall_ms, "ms_per_frame": wall_ms / frames.len().max(1) as f64 });
    if let Err(e) = ik::write(r.out, &run, &frames, table_format(), head, timing) {
        errln!("error: {e}");
        return ExitCode::from(INVALID);
    }
    if !r.quiet {
        let s = ik::summary(&run, &frames);
        outln!(
            "ik: {} frames, {} markers, marker RMS {:.2} mm on average (largest error {:.2} mm); wrote {}",
            frames.len(),
            run.markers().len(),
            1e3 * s["marker_error_m"]["rms_mean"].as_f64().unwrap_or(f64::NAN),
            1e3 * s["marker_error_m"]["max"].as_f64().unwrap_or(f64::NAN),
            r.out.display()
        );
    }
    ExitCode::SUCCESS
}
