//! `mollier view MODEL [--motion M | --results DIR] --out view.html`: one self-contained page
//! that draws the model moving through the motion, muscles coloured by force with results
//! (crate `mollier-view`; docs/viewer.md).

use std::path::PathBuf;

use super::prelude::*;

/// What `mollier view` is given.
pub(crate) struct Request<'a> {
    pub(crate) model: &'a Path,
    pub(crate) motion: Option<&'a Path>,
    pub(crate) results: Option<&'a Path>,
    pub(crate) every: usize,
    pub(crate) out: &'a Path,
    pub(crate) force: bool,
    pub(crate) quiet: bool,
}

/// The motion of a results directory: `DIR/motion.csv` (a study) or the study's beside a
/// variant (`DIR/../motion.csv`).
fn results_motion(dir: &Path) -> Option<PathBuf> {
    [dir.join("motion.csv"), dir.join("..").join("motion.csv")].into_iter().find(|p| p.is_file())
}

pub(crate) fn run(r: &Request, registry: &Registry) -> ExitCode {
    // refused before any work: the page goes nowhere but a regular file
    if let Err(code) = check_outputs(&[r.out], r.force) {
        return code;
    }
    let compiled = match load_well_posed(r.model, registry) {
        Ok(c) => c,
        Err(code) => return code,
    };
    let motion_path = match (r.motion, r.results) {
        (Some(m), _) => Some(m.to_path_buf()),
        (None, Some(dir)) => match results_motion(dir) {
            Some(m) => Some(m),
            None => {
                errln!("error: {}: no motion.csv in it or beside it: give the motion with --motion", dir.display());
                return ExitCode::from(INVALID);
            }
        },
        (None, None) => None,
    };
    let motion = match &motion_path {
        Some(p) => match load_motion(p, &compiled, r.quiet) {
            Ok(m) => Some(m),
            Err(code) => return code,
        },
        None => None,
    };
    // no motion: the model as its file places it
    let (times, q, source) = match &motion {
        Some(m) => (m.times.clone(), m.q.clone(), m.file.clone()),
        None => {
            let mut rows = mollier::Rows::new(compiled.model.n_q());
            rows.push(&compiled.model.q0());
            (vec![0.0], rows, r.model.display().to_string())
        }
    };
    let title = r.model.display().to_string();
    let mut geometry = match mollier_view::Geometry::build(&compiled, &times, &q, r.every, &title) {
        Ok(g) => g,
        Err(e) => {
            errln!("error: {source}: {e}");
            return ExitCode::from(FAILED);
        }
    };
    if let Some(dir) = r.results {
        let forces = mollier_view::read_forces(&dir.join("forces.csv")).and_then(|f| geometry.clone().with_forces(&f));
        match forces {
            Ok(g) => geometry = g,
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::from(INVALID);
            }
        }
    }
    // the joint force in its cone, when the results and the model have them
    if let (Some(dir), true) = (r.results, geometry.cone.is_some()) {
        let path = dir.join("reactions.csv");
        if path.is_file() {
            let joint = mollier_view::read_forces(&path).and_then(|t| {
                let cols = ["x", "y", "z"].map(|a| t.column(&format!("joint_force.{a}")));
                let per_frame: Vec<Option<[f64; 3]>> = geometry
                    .times
                    .iter()
                    .map(|time| {
                        let row = t.row_at(*time)?;
                        let f = [0, 1, 2].map(|a| cols[a].map_or(f64::NAN, |c| t.values[row][c]));
                        f.iter().all(|v| v.is_finite()).then_some(f)
                    })
                    .collect();
                geometry.clone().with_joint_force(&per_frame)
            });
            match joint {
                Ok(g) => geometry = g,
                Err(e) => {
                    errln!("error: {e}");
                    return ExitCode::from(INVALID);
                }
            }
        }
    }
    if let Some((n, k)) = geometry.thinned {
        // not silenced by --quiet: the page is not what was asked for
        errln!(
            "note: {source}: {n} frames drawn every {k}th ({} frames: a page draws at most {})",
            geometry.frames(),
            mollier_view::FRAME_BUDGET
        );
    }
    let page = mollier_view::page(&geometry);
    if let Err(code) = write_output(r.out, page.as_bytes(), r.force) {
        return code;
    }
    if !r.quiet {
        outln!(
            "{}: {} frames, {} muscles, {:.1} MB",
            r.out.display(),
            geometry.frames(),
            geometry.muscles.len(),
            page.len() as f64 / 1e6
        );
    }
    ExitCode::SUCCESS
}
