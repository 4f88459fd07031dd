//! `mollier inverse MODEL --motion MOTION --criterion C --out DIR`: the driving forces of a
//! motion shared among the muscles of the model's `[load_sharing]` section (crate
//! `mollier-optim`), frames solved in parallel; the tables of `mollier-study`'s output.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use mollier::Smoothing;
use mollier_core::registry::Registry;
use mollier_optim::{Criterion, LoadSharing, RunOptions};
use mollier_study::output::{Lead, LoadSharingRun, write_load_sharing};
use serde_json::{Map, json};

use crate::common::{
    FAILED, INVALID, derivatives_text, load_motion, load_well_posed, note_if_weightless, progress_bar,
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
    /// No progress bar and no summary.
    pub quiet: bool,
}

/// At most this many failed frames are listed on standard error (all are in `stability.csv`).
const LISTED: usize = 10;

/// Run the analysis: exit code 0 when every frame is solved, 1 when some are not (they are in
/// the outputs, marked), 2 when a file is invalid or the results cannot be written.
pub fn run(model: &Path, motion: &Path, out: &Path, o: &Options, registry: &Registry) -> ExitCode {
    let start = Instant::now();
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let Some(setup) = compiled.load_sharing.as_ref() else {
        errln!(
            "error: {} has no [load_sharing] section: name the muscles (and any sign constraints, joint cone and reserves) there; see docs/model-format.md",
            model.display()
        );
        return ExitCode::from(INVALID);
    };
    if !o.impose_cone && setup.cone.is_none() && !o.quiet {
        errln!("note: the model has no joint cone: --no-cone changes nothing");
    }
    let motion = match load_motion(motion, &compiled, o.quiet) {
        Ok(m) => m,
        Err(code) => return code,
    };
    note_if_weightless(&compiled, o.quiet);
    let derivatives = if o.quasi_static {
        None
    } else {
        match motion.differentiate(o.smooth.map_or(Smoothing::Interpolate, Smoothing::Cutoff)) {
            Ok(d) => Some(d),
            Err(e) => {
                errln!("error: {}: cannot differentiate the motion: {e}", motion.file);
                return ExitCode::from(INVALID);
            }
        }
    };
    let frames = mollier::load_sharing::frames(&motion, derivatives.as_ref());
    let study = setup.study(o.criterion.clone(), o.impose_cone);
    let sharing = match LoadSharing::new(&compiled.model, study.clone()) {
        Ok(s) => s,
        Err(e) => {
            errln!("error: {}: load sharing: {e}", model.display());
            return ExitCode::from(INVALID);
        }
    };
    let bar = progress_bar(frames.len(), "{bar:40} {pos}/{len} frames  ({eta} left)", o.quiet);
    let results = sharing.run_with_progress(&frames, RunOptions::default(), &|n| bar.inc(n as u64));
    bar.finish_and_clear();

    let lead = Lead::times(&motion.times);
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let run = LoadSharingRun { setup, study: &study, lead: &lead, frames: &results, virtual_work: None, wall_ms };
    let mut extra = Map::new();
    extra.insert("model".into(), json!(model.display().to_string()));
    extra.insert("motion".into(), json!(motion.file));
    extra.insert("motion_derivatives".into(), json!(derivatives_text(o.quasi_static, o.smooth)));
    let summary = match write_load_sharing(out, &run, extra) {
        Ok((_, s)) => s,
        Err(e) => {
            errln!("error: cannot write the results in `{}`: {e}", out.display());
            return ExitCode::from(INVALID);
        }
    };
    let failed: Vec<(f64, String)> = results
        .iter()
        .zip(&motion.times)
        .filter(|(r, _)| !r.status.is_success())
        .map(|(r, t)| (*t, r.status.to_string()))
        .collect();
    for (t, status) in failed.iter().take(LISTED) {
        errln!("error: frame at time {t} s: {status}");
    }
    if failed.len() > LISTED {
        errln!("error: ... and {} more frames (stability.csv lists every frame's status)", failed.len() - LISTED);
    }
    if !o.quiet {
        let index = summary["stability_index"]["max"].as_f64();
        outln!(
            "{}: criterion {}{}: {}/{} frames solved, {:.2} ms/frame{}; results in {}",
            model.display(),
            o.criterion,
            match (&study.cone, o.impose_cone) {
                (None, _) => "",
                (Some(_), true) => ", joint cone imposed",
                (Some(_), false) => ", joint cone reported",
            },
            results.len() - failed.len(),
            results.len(),
            summary["ms_per_frame"].as_f64().unwrap_or(f64::NAN),
            index.map(|i| format!(", largest stability index {i:.3}")).unwrap_or_default(),
            out.display()
        );
    }
    if failed.is_empty() { ExitCode::SUCCESS } else { ExitCode::from(FAILED) }
}
