//! `mollier max-moment MODEL --postures FILE --direction INPUT:POSITIVE/NEGATIVE --out DIR`:
//! the maximum isometric moments of Chadwick et al. (2014, section II-F) with the model's `[load_sharing]`
//! muscles, sign constraints and joint cone; the run and the files are `mollier-study`'s
//! (`mollier_study::max_moment`).

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::time::Instant;

use mollier_core::registry::Registry;
use mollier_optim::{Criterion, Direction};
use serde_json::json;

use crate::common::{
    FAILED, INVALID, load_motion, load_sharing_section, load_well_posed, note_if_weightless, output_dir,
};

/// What `mollier max-moment` is asked.
pub struct Options {
    /// `INPUT:POSITIVE/NEGATIVE`, one per direction.
    pub directions: Vec<String>,
    /// Other inputs the device holds.
    pub hold: Vec<String>,
    /// Impose the joint cone (else only report its stability index).
    pub impose_cone: bool,
    /// The input the plot runs along.
    pub x: Option<String>,
    /// No summary on standard output.
    pub quiet: bool,
}

/// A direction `INPUT:POSITIVE/NEGATIVE` against the model's inputs.
fn direction(spec: &str, compiled: &mollier::Compiled) -> Result<Direction, String> {
    let (input, senses) = spec.rsplit_once(':').ok_or_else(|| {
        format!("direction `{spec}`: expected INPUT:POSITIVE/NEGATIVE, e.g. elbow.rotation:flexion/extension")
    })?;
    let (positive, negative) = senses.split_once('/').unwrap_or((senses, ""));
    mollier_study::max_moment::direction(input, positive, negative, compiled)
}

/// Run: exit code 0 when every maximum is solved and checked, 1 when some are not (written as
/// such), 2 when a file or an argument is invalid or the results cannot be written.
pub fn run(model: &Path, postures: &Path, out: &Path, o: &Options, registry: &Registry) -> ExitCode {
    let start = Instant::now();
    let compiled = match load_well_posed(model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let setup = match load_sharing_section(&compiled, model, "sign constraints and joint cone") {
        Ok(s) => s,
        Err(code) => return code,
    };
    let input_index = |name: &str| mollier_study::max_moment::input_index(name, &compiled);
    let parsed = (|| -> Result<_, String> {
        let directions = o.directions.iter().map(|d| direction(d, &compiled)).collect::<Result<Vec<_>, _>>()?;
        let hold = o.hold.iter().map(|h| input_index(h)).collect::<Result<Vec<_>, _>>()?;
        let x = o.x.as_deref().map(input_index).transpose()?;
        Ok((directions, hold, x))
    })();
    let (directions, hold, x) = match parsed {
        Ok(p) => p,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(INVALID);
        }
    };
    let motion = match load_motion(postures, &compiled, o.quiet) {
        Ok(m) => m,
        Err(code) => return code,
    };
    note_if_weightless(&compiled, o.quiet);
    // the plot's input: as asked, else the first held input that varies over the postures (a
    // direction's, then --hold's), else the first input that varies, else the first direction's
    let varies = |j: usize| motion.q.iter().any(|q| (q[j] - motion.q.iter().next().map_or(q[j], |f| f[j])).abs() > 0.0);
    let held = directions.iter().map(|d| d.input).chain(hold.iter().copied());
    let x = x
        .or_else(|| held.clone().find(|&j| varies(j)))
        .or_else(|| (0..compiled.inputs.len()).find(|&j| varies(j)))
        .unwrap_or(directions.first().map_or(0, |d| d.input));
    let study = setup.study(Criterion::Stresses, o.impose_cone);
    let moments = match mollier_study::max_moment::run(&compiled.model, study, &motion, directions, &hold) {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {}: maximum moments: {e}", model.display());
            return ExitCode::from(INVALID);
        }
    };
    let cannot_write = |e: mollier::OutputError| {
        errln!("error: {e}");
        ExitCode::from(INVALID)
    };
    let mut dir = match output_dir(out) {
        Ok(d) => d,
        Err(e) => return cannot_write(e),
    };
    let mut summary = match moments.write(&mut dir, &compiled, x) {
        Ok(s) => s,
        Err(e) => return cannot_write(e),
    };
    if let Some(s) = summary.as_object_mut() {
        s.insert("model".into(), json!(model.display().to_string()));
        s.insert("postures_file".into(), json!(motion.file));
        s.insert(
            "joint_cone".into(),
            json!(if setup.cone.is_none() {
                "none"
            } else if o.impose_cone {
                "imposed"
            } else {
                "reported"
            }),
        );
    }
    let wall = start.elapsed().as_secs_f64() * 1e3;
    let timing = json!({ "wall_ms": wall, "ms_per_posture": wall / moments.results.len().max(1) as f64 });
    let failed = moments.results.len() - moments.solved();
    for (k, p) in moments.results.iter().enumerate() {
        for (s, m) in p.iter().flatten().enumerate() {
            if !m.frame.status.is_success() {
                errln!("error: posture at time {} s, {}: {}", moments.times[k], moments.senses()[s], m.frame.status);
            }
        }
    }
    if let Err(e) = dir.commit(summary, timing) {
        return cannot_write(e);
    }
    if !o.quiet {
        outln!(
            "{}: maximum moments in {} directions at {} postures ({} solved) in {:.0} ms; results in {}",
            model.display(),
            moments.directions.len(),
            moments.results.len(),
            moments.solved(),
            wall,
            out.display()
        );
    }
    if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(FAILED) }
}
