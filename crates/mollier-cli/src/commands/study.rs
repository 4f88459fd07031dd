//! `mollier study STUDY --out DIR`: a motion through a model, load sharing for several criteria
//! with and without the glenoid constraint, CSV tables, JSON summaries and SVG plots
//! (crate `mollier-study`; docs/shoulder.md).

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use crate::common::table_format;

/// Run the study in `file`, write into `out`. Exit code 0 when every frame of every variant was
/// solved, 1 when some failed (they are in the outputs, marked), 2 when the study cannot be read
/// or set up or the outputs cannot be written.
pub fn run(file: &Path, out: &Path, loads: Option<&Path>, quiet: bool) -> ExitCode {
    let mut study = match mollier_study::Study::load(file) {
        Ok(s) => s,
        Err(e) => {
            errln!("{e}");
            return ExitCode::from(2);
        }
    };
    if let Some(path) = loads {
        let applied = mollier::ExternalLoads::read(path, &study.compiled)
            .map_err(|d| d.render())
            .and_then(|l| study.set_loads(&l).map_err(|e| format!("error: {}: {e}", path.display())));
        if let Err(e) = applied {
            errln!("{e}");
            return ExitCode::from(2);
        }
    }
    if !quiet {
        outln!(
            "{}: {} frames, {} muscle elements in {} muscles, {} variants",
            study.title(),
            study.motion.frames.len(),
            study.muscles().len(),
            study.groups.len(),
            study.variants.len()
        );
    }
    for w in study.warnings() {
        errln!("warning: {w}");
    }
    // the tables are streamed: memory holds the frames kept for the plots, not the motion
    let written = match mollier_study::output::run_and_write(&study, out, table_format()) {
        Ok(w) => w,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let (results, files) = (&written.results, &written.files);
    let kin_failed = written.kinematics_failed_count;
    for (k, e) in &written.kinematics_failed {
        errln!("kinematics, elevation {:.2} deg: {e}", study.motion.frames[*k].elevation);
    }
    if kin_failed > written.kinematics_failed.len() {
        errln!(
            "kinematics: {} more frames failed (summary.json counts them)",
            kin_failed - written.kinematics_failed.len()
        );
    }
    let mut failed = kin_failed;
    for (name, w) in &written.reserve_warnings {
        // once per variant, whether quiet or not: a reserve doing the muscles' work is not silent
        errln!("warning: {name}: {w}");
    }
    for v in &results.variants {
        failed += v.summary.failed;
        if !quiet {
            outln!(
                "  {:<14} {:>3}/{} solved, {:6.2} ms/frame, largest stability index {}",
                v.variant.name(),
                v.summary.solved,
                v.summary.frames,
                v.summary.ms_per_frame,
                v.max_stability_index.map_or("-".into(), |i| format!("{i:.3}"))
            );
        }
    }
    // [max_moment]: a failed maximum counts as a failed frame
    match &results.max_moment {
        Some(Ok(m)) => failed += m.results.len() - m.solved(),
        Some(Err(e)) => {
            errln!("error: {e}");
            failed += 1;
        }
        None => {}
    }
    if !quiet {
        outln!(
            "kinematics {}/{} frames; {:.0} ms in all; {} files in {}",
            study.motion.frames.len() - kin_failed,
            study.motion.frames.len(),
            results.time_ms,
            files.len(),
            out.display()
        );
    }
    if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
