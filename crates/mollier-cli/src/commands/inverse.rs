//! `mollier inverse MODEL --motion MOTION --criterion C --out DIR`: the driving forces of a
//! motion shared among the muscles of the model's `[load_sharing]` section (crate
//! `mollier-optim`), frames solved in parallel: the facade's [`InverseRun`] and its tables.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use mollier::output::OutputError;
use mollier::{InverseError, InverseOptions, InverseRun, LoadSharingTables};
use mollier_core::registry::Registry;
use mollier_optim::{Criterion, FrameResult};
use serde_json::{Map, json};

use super::frames::{LISTED, Warned};
use crate::common::{
    FAILED, INVALID, load_loads, load_motion, load_sharing_section, load_well_posed, note_if_weightless, output_dir,
    progress_bar,
};

/// How `mollier inverse` runs.
pub struct Options {
    /// The criterion.
    pub criterion: Criterion,
    /// Impose the joint cone (else only report its stability index).
    pub impose_cone: bool,
    /// Every frame a static posture: rates and accelerations zero.
    pub quasi_static: bool,
    /// Smoothing cut-off (Hz) for differentiating the motion.
    pub smooth: Option<f64>,
    /// Time-varying external loads (`--loads`).
    pub loads: Option<std::path::PathBuf>,
    /// No progress bar and no summary.
    pub quiet: bool,
}

/// Run the analysis: exit code 0 when every frame is solved, 1 when some are not (they are in
/// the outputs, marked), 2 when a file is invalid or the results cannot be written.
pub fn run(model: &Path, motion: &Path, out: &Path, o: &Options, registry: &Registry) -> ExitCode {
    let start = Instant::now();
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let setup = match load_sharing_section(&compiled, model, "sign constraints, joint cone and reserves") {
        Ok(s) => s,
        Err(code) => return code,
    };
    if !o.impose_cone && setup.cone.is_none() && !o.quiet {
        errln!("note: the model has no joint cone: --no-cone changes nothing");
    }
    let motion = match load_motion(motion, &compiled, o.quiet) {
        Ok(m) => m,
        Err(code) => return code,
    };
    let (first, last) = (motion.times[0], motion.times[motion.times.len() - 1]);
    let loads = match load_loads(o.loads.as_deref(), &compiled, first, last) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if loads.is_none() {
        note_if_weightless(&compiled, o.quiet);
    }
    let options = InverseOptions {
        criterion: o.criterion.clone(),
        impose_cone: o.impose_cone,
        quasi_static: o.quasi_static,
        smooth: o.smooth,
    };
    let run = match InverseRun::new(&compiled, &motion, &options) {
        Ok(r) => r.with_loads(&compiled, loads.as_ref()),
        Err(e @ InverseError::Differentiate(_)) => {
            errln!("error: {}: {e}", motion.file);
            return ExitCode::from(INVALID);
        }
        Err(e) => {
            errln!("error: {}: {e}", model.display());
            return ExitCode::from(INVALID);
        }
    };
    let derivatives_used = run.derivatives_text(&compiled);
    let study = run.study();
    let cannot_write = |e: OutputError| {
        errln!("error: {e}");
        ExitCode::from(INVALID)
    };
    let mut dir = match output_dir(out) {
        Ok(d) => d,
        Err(e) => return cannot_write(e),
    };
    let mut tables = match LoadSharingTables::open(&mut dir, "", setup, study, &["time".to_string()], false) {
        Ok(t) => t,
        Err(e) => return cannot_write(e),
    };
    // frames are made, solved and written chunk by chunk: memory does not grow with the motion
    let n = run.frames();
    let bar = progress_bar(n, "{bar:40} {pos}/{len} frames  ({eta} left)", o.quiet);
    let mut failed = 0usize;
    let mut warned = Warned::default();
    let sink = |k: usize, r: FrameResult| {
        if !r.status.is_success() {
            failed += 1;
            if failed <= LISTED {
                bar.suspend(|| errln!("error: frame at time {} s: {}", motion.times[k], r.status));
            }
        }
        tables.push(&mut dir, &[motion.times[k]], &r, None)?;
        warned.write(&mut dir, motion.times[k], &r.warnings)
    };
    let streamed = run.run(&|k| bar.inc(k as u64), sink);
    bar.finish_and_clear();
    if let Err(e) = streamed {
        return cannot_write(e);
    }

    let mut extra = Map::new();
    extra.insert("model".into(), json!(model.display().to_string()));
    extra.insert("motion".into(), json!(motion.file));
    extra.insert("motion_derivatives".into(), json!(derivatives_used));
    if let Some(l) = &loads {
        extra.insert("loads".into(), json!(l.file));
    }
    warned.summarize(&mut extra);
    // once per run, whether quiet or not: a reserve doing the muscles' work must not be silent
    if let Some(w) = tables.reserve_warning() {
        errln!("warning: {w}");
    }
    warned.report(n, "frame");
    let (summary, mut timing) = tables.finish(extra);
    let ms_per_frame = timing["ms_per_frame"].as_f64().unwrap_or(f64::NAN);
    if let Some(t) = timing.as_object_mut() {
        t.insert("wall_ms".into(), json!(start.elapsed().as_secs_f64() * 1e3));
    }
    let index = summary["stability_index"]["max"].as_f64();
    if let Err(e) = dir.commit(summary, timing) {
        return cannot_write(e);
    }
    if failed > LISTED {
        errln!("error: ... and {} more frames (stability.csv lists every frame's status)", failed - LISTED);
    }
    if !o.quiet {
        outln!(
            "{}: criterion {}{}: {}/{} frames solved, {:.2} ms/frame{}; results in {}",
            model.display(),
            o.criterion,
            match (&study.cone, o.impose_cone) {
                (None, _) => "",
                (Some(_), true) => ", joint cone imposed",
                (Some(_), false) => ", joint cone reported",
            },
            n - failed,
            n,
            ms_per_frame,
            index.map(|i| format!(", largest stability index {i:.3}")).unwrap_or_default(),
            out.display()
        );
    }
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(FAILED) }
}
