//! `mollier scale MODEL.osim|MODEL.toml --setup SETUP --out DIR [--markers STATIC.trc] [--mass KG]`.

use std::time::Instant;

use mollier::scale::{self, ScaleError, ScaleRequest};

use super::prelude::*;

/// What `mollier scale` is given.
pub(crate) struct Request<'a> {
    pub(crate) scale: ScaleRequest<'a>,
    pub(crate) out: &'a Path,
    pub(crate) quiet: bool,
}

pub(crate) fn run(r: &Request, registry: &Registry) -> ExitCode {
    let start = Instant::now();
    let (setup, scaled) = match scale::scale_any(&r.scale, registry) {
        Ok(v) => v,
        Err(ScaleError::Invalid(d)) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
        Err(e) => {
            errln!("error: {e}");
            errln!("nothing was written");
            return ExitCode::from(FAILED);
        }
    };
    let wall_ms = start.elapsed().as_secs_f64() * 1e3;
    let head = summary_head("scale", r.scale.model, None);
    if let Err(e) = scaled.write(r.out, &setup, head, json!({ "wall_ms": wall_ms })) {
        errln!("error: {e}");
        return ExitCode::from(INVALID);
    }
    if !r.quiet {
        // an OpenSim model's ground is not one of its bodies
        let bodies = scaled.report().bodies.len() - usize::from(matches!(scaled, scale::Scaling::OpenSim(_)));
        let scaled = scaled.report();
        for n in &scaled.notes {
            errln!("note: {n}");
        }
        let total: f64 = scaled.masses.iter().map(|(_, m)| m).sum();
        outln!(
            "scale: {} bodies, {} measurements, {} muscles' fibre lengths; total mass {:.3} kg; wrote {}",
            bodies,
            scaled.measurements.len(),
            scaled.muscles.len(),
            total,
            r.out.display()
        );
        if let Some(p) = &scaled.placement {
            outln!(
                "scale: {} markers placed on the static pose at {} s (their RMS error before: {:.1} mm)",
                p.moved.len(),
                p.time,
                1e3 * p.rms
            );
        }
    }
    ExitCode::SUCCESS
}
