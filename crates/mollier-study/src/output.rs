//! The study's files: CSV tables (SI units; an empty cell where a frame failed, never NaN) and
//! JSON summaries, written as one unit by the shared writer ([`mollier::output`]). The
//! load-sharing tables of each variant are the facade's ([`LoadSharingTables`]), those of
//! `mollier inverse`.
//!
//! ```text
//! DIR/summary.json            written last: "complete": true, files, frames, variants
//! DIR/timing.json             wall times: the run, the kinematics, each variant (ms)
//! DIR/motion.csv              the inputs per frame: a motion file of the model
//! DIR/kinematics.csv          landmarks (m), the girdle's free modes, scapula vs rhythm
//! DIR/lengths.csv             muscle lengths (m)
//! DIR/moment_arms.csv         −∂l/∂q for every muscle and input (m/rad, m/m)
//! DIR/<variant>/forces.csv    muscle forces (N)
//! DIR/<variant>/reactions.csv sign-constrained reactions (N), the joint force (N), reserves
//! DIR/<variant>/stability.csv solver status, stability index, deviation angles, residuals
//! DIR/<variant>/summary.json  frames, solved, failed, criterion, checks
//! DIR/plots/*.svg             the plots
//! DIR/view.html               the motion in 3D, muscles coloured by force (docs/viewer.md)
//! ```

use std::path::{Path, PathBuf};

use mollier::inverse_tables::{LISTED, LoadSharingTables, max_into};
use mollier::output::{OutputDir, OutputError, TableFormat, TableId, number};
use serde_json::{Map, Value, json};

use crate::max_moment::{MomentRun, input_index};
pub use crate::study::{PLOTTED_FRAMES, frame_step};
use crate::study::{Results, Study, StudyFrame};

/// What [`run_and_write`] did: the results kept for the plots and the page, and the files.
#[derive(Debug)]
pub struct Written {
    /// The kept frames: every [`frame_step`]-th and the last, at most [`PLOTTED_FRAMES`].
    pub results: Results,
    /// The files written, `summary.json` last.
    pub files: Vec<PathBuf>,
    /// The frames whose kinematics failed (motion frame, why): the first [`LISTED`].
    pub kinematics_failed: Vec<(usize, String)>,
    /// The number of frames whose kinematics failed.
    pub kinematics_failed_count: usize,
    /// Per variant (its name), the warning about its reserves, when it has one.
    pub reserve_warnings: Vec<(String, String)>,
}

/// Run the study and write it into the directory `target` as a unit (see [`mollier::output`]),
/// the tables (in `format`: `.sto` for OpenSim) streamed as the frames are solved: every table,
/// the variants' tables and summaries, the plots, `timing.json` and `summary.json` last. Memory
/// holds a chunk of frames and the frames kept for the plots and the page ([`frame_step`]), not
/// the motion (a 2,000-frame study of the shoulder held 321 MB when every frame was kept).
pub fn run_and_write(study: &Study, target: &Path, format: TableFormat) -> Result<Written, OutputError> {
    let optim = optim_studies(study);
    let mut w = StudyWriter::open(study, &optim, target, format)?;
    let results = study.run_streaming(frame_step(study.motion.frames.len()), |k, f| w.push(k, f))?;
    // a copy: the summary lists them too (at most `LISTED`)
    let kinematics_failed = w.kin_failed.clone();
    let kinematics_failed_count = w.kin_failed_count;
    let reserve_warnings =
        w.variants.iter().filter_map(|(name, t)| Some((name.clone(), t.reserve_warning()?))).collect();
    let files = w.finish(&results)?;
    Ok(Written { results, files, kinematics_failed, kinematics_failed_count, reserve_warnings })
}

/// The load-sharing problem of every variant, in the study's order.
fn optim_studies(study: &Study) -> Vec<mollier_optim::Study> {
    study.variants.iter().map(|v| study.optim_study(v)).collect()
}

/// The study's tables, open in their output directory, written a frame at a time, with the
/// counts the summary needs.
struct StudyWriter<'a> {
    study: &'a Study,
    out: OutputDir,
    /// `kinematics.csv`, `lengths.csv`, `moment_arms.csv`, `cuff.csv` (with a cuff).
    tables: [TableId; 3],
    cuff: Option<TableId>,
    widths: [usize; 3],
    /// Per variant: its name and tables.
    variants: Vec<(String, LoadSharingTables<'a>)>,
    kin_solved: usize,
    kin_failed: Vec<(usize, String)>,
    kin_failed_count: usize,
    max_deviation: Option<f64>,
}

impl<'a> StudyWriter<'a> {
    /// Open the output directory and every table (`optim`: the variants' load-sharing problems).
    fn open(
        study: &'a Study,
        optim: &'a [mollier_optim::Study],
        target: &Path,
        format: TableFormat,
    ) -> Result<Self, OutputError> {
        let mut out = OutputDir::create(target)?.with_format(format);
        motion_table(study, &mut out)?;
        let base = || vec!["time".to_string(), "elevation_deg".to_string()];
        // kinematics.csv (the inputs are in motion.csv: an input may be a landmark's coordinate)
        let mut header = base();
        header.push("status".into());
        for (n, _) in &study.landmarks {
            header.extend(["x", "y", "z"].map(|a| format!("{n}.{a}")));
        }
        header.extend(study.free_names());
        header.push("scapula_vs_rhythm_deg".into());
        header.extend(crate::plots::GIRDLE_ANGLES.iter().map(|(n, _)| format!("{n}_deg")));
        let kin_width = header.len();
        let kinematics = out.table("kinematics.csv", None, &header)?;
        // lengths.csv and moment_arms.csv: one value per muscle (and input) per solved frame
        let names = study.sharing.muscle_names();
        let arms: Vec<String> =
            names.iter().flat_map(|n| study.compiled.inputs.iter().map(move |i| format!("{n}/{}", i.name))).collect();
        let widths = [kin_width, 2 + names.len(), 2 + arms.len()];
        let lengths = out.table("lengths.csv", None, base().into_iter().chain(names).collect::<Vec<_>>())?;
        let moment_arms = out.table("moment_arms.csv", None, base().into_iter().chain(arms).collect::<Vec<_>>())?;
        let mut variants = Vec::new();
        for (v, o) in study.variants.iter().zip(optim) {
            let name = v.name();
            let tables = LoadSharingTables::open(&mut out, &format!("{name}/"), &study.sharing, o, &base(), true)?;
            variants.push((name, tables));
        }
        // cuff.csv: the rotator cuff's total force per variant
        let cuff = if study.cuff.is_empty() {
            None
        } else {
            let mut header = base();
            header.extend(study.variants.iter().map(|v| v.name()));
            Some(out.table(
                "cuff.csv",
                Some("the summed force of the study's cuff muscles (N) per variant"),
                &header,
            )?)
        };
        Ok(Self {
            study,
            out,
            tables: [kinematics, lengths, moment_arms],
            cuff,
            widths,
            variants,
            kin_solved: 0,
            kin_failed: Vec::new(),
            kin_failed_count: 0,
            max_deviation: None,
        })
    }

    /// Write motion frame `k`'s rows.
    fn push(&mut self, k: usize, frame: &StudyFrame) -> Result<(), OutputError> {
        let f = &self.study.motion.frames[k];
        let lead = || vec![number(f.time), number(f.elevation)];
        let [kinematics, lengths, moment_arms] = self.tables;
        let out = &mut self.out;
        let mut rows = [lead(), lead(), lead()];
        match &frame.kinematics {
            Ok(kf) => {
                self.kin_solved += 1;
                max_into(&mut self.max_deviation, kf.scapula_deviation.to_degrees());
                let r = &mut rows[0];
                r.push("solved".into());
                r.extend(kf.landmarks.iter().flatten().map(|v| number(*v)));
                r.extend(kf.free.iter().map(|v| number(*v)));
                r.push(number(kf.scapula_deviation.to_degrees()));
                r.extend(kf.girdle_angles.iter().map(|a| number(a.to_degrees())));
                rows[1].extend(kf.lengths.iter().map(|v| number(*v)));
                rows[2].extend(kf.moment_arms.iter().map(|v| number(*v)));
            }
            Err(e) => {
                self.kin_failed_count += 1;
                if self.kin_failed.len() < LISTED {
                    self.kin_failed.push((k, e.clone()));
                }
                rows[0].push(format!("failed: {e}"));
                for (r, w) in rows.iter_mut().zip(self.widths) {
                    r.resize(w, String::new());
                }
            }
        }
        for (t, r) in [kinematics, lengths, moment_arms].into_iter().zip(&rows) {
            out.row(t, r)?;
        }
        for ((_, tables), (r, vw)) in self.variants.iter_mut().zip(&frame.variants) {
            tables.push(out, &[f.time, f.elevation], r, *vw)?;
        }
        if let Some(t) = self.cuff {
            let mut r = lead();
            r.extend(
                frame
                    .variants
                    .iter()
                    .map(|(v, _)| crate::plots::cuff_force(self.study, v).map(number).unwrap_or_default()),
            );
            out.row(t, &r)?;
        }
        Ok(())
    }

    /// The variants' summaries, the plots and the page of the kept `results`, the maximum
    /// moments, then `timing.json` and `summary.json`: the directory committed.
    fn finish(mut self, results: &Results) -> Result<Vec<PathBuf>, OutputError> {
        let study = self.study;
        let frames = &study.motion.frames;
        let mut variants = Vec::new();
        let mut timings = Map::new();
        for ((name, tables), v) in self.variants.into_iter().zip(&results.variants) {
            let mut extra = Map::new();
            extra.insert("variant".into(), json!(name));
            let (summary, mut timing) = tables.finish(extra);
            self.out.json(&format!("{name}/summary.json"), &summary)?;
            if let Some(t) = timing.as_object_mut() {
                t.insert("wall_ms".into(), json!(v.time_ms));
            }
            timings.insert(name, timing);
            variants.push(summary);
        }
        let kin_failed: Vec<Value> = self
            .kin_failed
            .iter()
            .map(|(k, e)| json!({"time": frames[*k].time, "elevation_deg": frames[*k].elevation, "error": e}))
            .collect();
        let mut summary = json!({
            "study": study.title(),
            "file": study.file.display().to_string(),
            "model": study.spec.model,
            "frames": frames.len(),
            "elevation_deg": [frames.first().map(|f| f.elevation), frames.last().map(|f| f.elevation)],
            "muscle_elements": study.muscles().len(),
            "muscles": study.groups.len(),
            "kinematics": {
                "solved": self.kin_solved,
                "failed": self.kin_failed_count,
                "failed_frames": kin_failed,
                "max_scapula_vs_rhythm_deg": self.max_deviation,
            },
            "variants": variants,
            "plotted_frames": { "count": results.frames.len(), "step": frame_step(frames.len()) },
            "rhythm": { "data_elevation_deg": crate::rhythm::DATA_ELEVATION_DEG },
            "warnings": study.warnings(),
        });
        let timing =
            json!({ "wall_ms": results.time_ms, "kinematics_ms": results.kinematics.time_ms, "variants": timings });
        let out = &mut self.out;
        crate::plots::write(study, results, out)?;
        if let Some(m) = &results.max_moment {
            summary["max_moment"] = write_max_moment(study, m, out)?;
        }
        crate::view::write(study, results, out)?;
        let target = out.target().to_path_buf();
        let mut files: Vec<PathBuf> = out.files().iter().map(|f| target.join(f)).collect();
        self.out.commit(summary, timing)?;
        files.push(target.join(mollier::output::TIMING));
        files.push(target.join(mollier::output::SUMMARY));
        Ok(files)
    }
}

/// `motion.csv`: the frames' inputs as a motion file for the model (`mollier inverse`, ...).
fn motion_table(study: &Study, out: &mut OutputDir) -> Result<(), OutputError> {
    let frames = &study.motion.frames;
    let mut header = vec!["time".to_string()];
    header.extend(study.compiled.inputs.iter().map(|i| i.name.clone()));
    let t = out.table(
        "motion.csv",
        Some(
            "the study's motion as a motion file of its model (static postures; time is the frame \
             number): mollier inverse MODEL --motion motion.csv --static ...",
        ),
        &header,
    )?;
    for f in frames {
        let row: Vec<String> = std::iter::once(number(f.time)).chain(f.q.iter().map(|v| number(*v))).collect();
        out.row(t, &row)?;
    }
    Ok(())
}

/// Write a study's maximum moments under `max_moment/`, plotted along the rhythm's elevation;
/// the summary's `max_moment` entry (the error when they failed).
fn write_max_moment(study: &Study, run: &Result<MomentRun, String>, dir: &mut OutputDir) -> Result<Value, OutputError> {
    match run {
        Ok(r) => {
            let x = input_index(&study.spec.motion.model.inputs[4], &study.compiled).unwrap_or(0);
            r.write_in(dir, "max_moment/", &study.compiled, x)
        }
        Err(e) => Ok(json!({ "error": e })),
    }
}
