//! `view.html`: the study's motion in 3D (crate `mollier-view`, docs/viewer.md), its muscles
//! coloured by the forces of one variant, with its glenohumeral force in the cone — `b-glenoid` when the study has it, else the first
//! with the cone imposed, else the first — over the frames whose kinematics were solved.

use mollier::Rows;
use mollier::output::{OutputDir, OutputError, Replace, write_file};
use mollier_view::{Forces, Geometry};

use crate::study::{Results, Study};

/// The variant whose forces colour the muscles.
fn shown(results: &Results) -> Option<usize> {
    let v = &results.variants;
    v.iter()
        .position(|r| r.variant.name() == "b-glenoid")
        .or_else(|| v.iter().position(|r| r.variant.glenoid))
        .or(if v.is_empty() { None } else { Some(0) })
}

/// Write `view.html` into the study's output.
pub(crate) fn write(study: &Study, results: &Results, out: &mut OutputDir) -> Result<(), OutputError> {
    // entries of the kept frames whose kinematics were solved
    let solved: Vec<usize> = (0..results.frames.len()).filter(|&i| results.kinematics.frames[i].is_ok()).collect();
    if solved.is_empty() {
        return Ok(());
    }
    let mut q = Rows::new(study.compiled.inputs.len());
    let motion = |i: usize| &study.motion.frames[results.frames[i]];
    for &i in &solved {
        q.push(&motion(i).q);
    }
    let times: Vec<f64> = solved.iter().map(|&i| motion(i).time).collect();
    let fail = |e: mollier_view::ViewError| OutputError::Io {
        path: "view.html".into(),
        source: std::io::Error::other(e.to_string()),
    };
    let mut g = Geometry::build(&study.compiled, &times, &q, 1, &study.title()).map_err(fail)?;
    // the study kept every step-th frame for its plots and this page
    let (n, step) = (study.motion.frames.len(), crate::output::frame_step(study.motion.frames.len()));
    if step > 1 {
        g.thinned = Some((n, step));
        g.title = format!(
            "{} (every {step}th of {n} frames: a study draws at most {})",
            g.title,
            crate::output::PLOTTED_FRAMES
        );
    }
    if let Some(v) = shown(results) {
        let r = &results.variants[v];
        let forces = Forces {
            file: format!("{}/forces.csv", r.variant.name()),
            names: study.sharing.muscle_names(),
            times: times.clone(),
            values: solved
                .iter()
                .map(|&k| {
                    let f = &r.frames[k];
                    if f.status.is_success() { f.forces.clone() } else { vec![f64::NAN; f.forces.len()] }
                })
                .collect(),
        };
        g = g.with_forces(&forces).map_err(fail)?;
        if g.cone.is_some() {
            let joint: Vec<Option<[f64; 3]>> =
                solved.iter().map(|&k| r.frames[k].cone_force.filter(|_| r.frames[k].status.is_success())).collect();
            g = g.with_joint_force(&joint).map_err(fail)?;
        }
        g.title = format!("{} — forces of {}", g.title, r.variant.name());
    }
    write_file(&out.file("view.html")?, mollier_view::page(&g).as_bytes(), Replace::Files)
}
