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
    let results = study.run();
    let files = match mollier_study::output::write_as(&study, &results, out, table_format()) {
        Ok(f) => f,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let kin_failed = results.kinematics.frames.iter().filter(|f| f.is_err()).count();
    for (f, frame) in results.kinematics.frames.iter().zip(&study.motion.frames) {
        if let Err(e) = f {
            errln!("kinematics, elevation {:.2} deg: {e}", frame.elevation);
        }
    }
    let mut failed = kin_failed;
    for v in &results.variants {
        failed += v.summary.failed;
        // once per variant, whether quiet or not: a reserve doing the muscles' work is not silent
        let lead = ["time".to_string(), "elevation_deg".to_string()];
        let mut use_ = mollier::inverse_tables::ReserveUse::new(&lead, study.sharing.reserve_names());
        for (r, frame) in v.frames.iter().zip(&study.motion.frames) {
            if r.status.is_success() {
                use_.add(&[frame.time, frame.elevation], r);
            }
        }
        if let Some(w) = use_.warning() {
            errln!("warning: {}: {w}", v.variant.name());
        }
        if !quiet {
            let index = v
                .frames
                .iter()
                .filter(|r| r.status.is_success())
                .filter_map(|r| r.stability_index)
                .fold(f64::NEG_INFINITY, f64::max);
            outln!(
                "  {:<14} {:>3}/{} solved, {:6.2} ms/frame, largest stability index {}",
                v.variant.name(),
                v.summary.solved,
                v.summary.frames,
                v.summary.ms_per_frame,
                if index.is_finite() { format!("{index:.3}") } else { "-".into() }
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
            results.kinematics.frames.len() - kin_failed,
            results.kinematics.frames.len(),
            results.time_ms,
            files.len(),
            out.display()
        );
    }
    if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS }
}
