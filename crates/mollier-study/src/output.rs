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

use mollier::inverse_tables::{LoadSharingTables, max_into};
use mollier::output::{OutputDir, OutputError, TableFormat, number};
use serde_json::{Map, Value, json};

use crate::max_moment::{MomentRun, input_index};
use crate::study::{KinematicFrame, Results, Study};

/// A table written in one go: header, then rows of cells.
fn write_table(
    out: &mut OutputDir,
    name: &str,
    comment: Option<&str>,
    header: &[String],
    rows: &[Vec<String>],
) -> Result<(), OutputError> {
    let t = out.table(name, comment, header)?;
    for r in rows {
        out.row(t, r)?;
    }
    Ok(())
}

/// Write the study into the directory `target` as a unit (see [`mollier::output`]): every table,
/// the variants' tables and summaries, the plots, `timing.json` and `summary.json` last. Returns
/// the files written, `summary.json` last.
pub fn write(study: &Study, results: &Results, target: &Path) -> Result<Vec<PathBuf>, OutputError> {
    write_as(study, results, target, TableFormat::Csv)
}

/// [`write()`] with the tables in `format` (`.sto` for OpenSim).
pub fn write_as(
    study: &Study,
    results: &Results,
    target: &Path,
    format: TableFormat,
) -> Result<Vec<PathBuf>, OutputError> {
    let mut out = OutputDir::create(target)?.with_format(format);
    let (mut summary, timing) = write_tables(study, results, &mut out)?;
    crate::plots::write(study, results, &mut out)?;
    if let Some(m) = &results.max_moment {
        summary["max_moment"] = write_max_moment(study, m, &mut out)?;
    }
    crate::view::write(study, results, &mut out)?;
    let mut files: Vec<PathBuf> = out.files().iter().map(|f| target.join(f)).collect();
    out.commit(summary, timing)?;
    files.push(target.join(mollier::output::TIMING));
    files.push(target.join(mollier::output::SUMMARY));
    Ok(files)
}

/// `motion.csv`: the frames' inputs as a motion file for the model (`mollier inverse`, ...).
fn motion_table(study: &Study, out: &mut OutputDir) -> Result<(), OutputError> {
    let frames = &study.motion.frames;
    let mut header = vec!["time".to_string()];
    header.extend(study.compiled.inputs.iter().map(|i| i.name.clone()));
    let rows: Vec<Vec<String>> = frames
        .iter()
        .map(|f| std::iter::once(number(f.time)).chain(f.q.iter().map(|v| number(*v))).collect())
        .collect();
    write_table(
        out,
        "motion.csv",
        Some(
            "the study's motion as a motion file of its model (static postures; time is the frame \
             number): mollier inverse MODEL --motion motion.csv --static ...",
        ),
        &header,
        &rows,
    )
}

/// Every table and the variants' summaries; the study's summary and timing.
fn write_tables(study: &Study, results: &Results, out: &mut OutputDir) -> Result<(Value, Value), OutputError> {
    let frames = &study.motion.frames;
    let lead = |k: usize| vec![number(frames[k].time), number(frames[k].elevation)];
    let base = || vec!["time".to_string(), "elevation_deg".to_string()];
    let kin = &results.kinematics;

    motion_table(study, out)?;

    // kinematics.csv (the inputs are in motion.csv: an input may be a landmark's coordinate)
    let mut header = base();
    header.push("status".into());
    for (n, _) in &study.landmarks {
        header.extend(["x", "y", "z"].map(|a| format!("{n}.{a}")));
    }
    header.extend(kin.free_names.iter().cloned());
    header.push("scapula_vs_rhythm_deg".into());
    header.extend(crate::plots::GIRDLE_ANGLES.iter().map(|(n, _)| format!("{n}_deg")));
    let rows: Vec<Vec<String>> = kin
        .frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let mut r = lead(k);
            match f {
                Ok(f) => {
                    r.push("solved".into());
                    r.extend(f.landmarks.iter().flatten().map(|v| number(*v)));
                    r.extend(f.free.iter().map(|v| number(*v)));
                    r.push(number(f.scapula_deviation.to_degrees()));
                    r.extend(f.girdle_angles.iter().map(|a| number(a.to_degrees())));
                }
                Err(e) => {
                    r.push(format!("failed: {e}"));
                    r.resize(header.len(), String::new());
                }
            }
            r
        })
        .collect();
    write_table(out, "kinematics.csv", None, &header, &rows)?;

    // lengths.csv and moment_arms.csv: one value per muscle (and input) per solved frame
    let names = study.sharing.muscle_names();
    let mut per_frame = |file: &str, columns: Vec<String>, values: fn(&KinematicFrame) -> &[f64]| {
        let mut header = base();
        header.extend(columns);
        let rows: Vec<Vec<String>> = kin
            .frames
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let mut r = lead(k);
                match f {
                    Ok(f) => r.extend(values(f).iter().map(|v| number(*v))),
                    Err(_) => r.resize(header.len(), String::new()),
                }
                r
            })
            .collect();
        write_table(out, file, None, &header, &rows)
    };
    per_frame("lengths.csv", names.clone(), |f| &f.lengths)?;
    let arms = names.iter().flat_map(|n| study.compiled.inputs.iter().map(move |i| format!("{n}/{}", i.name)));
    per_frame("moment_arms.csv", arms.collect(), |f| &f.moment_arms)?;

    // the variants
    let lead_header = base();
    let mut variants = Vec::new();
    let mut timings = Map::new();
    for v in &results.variants {
        let study_v = study.optim_study(&v.variant);
        let name = v.variant.name();
        let mut tables =
            LoadSharingTables::open(out, &format!("{name}/"), &study.sharing, &study_v, &lead_header, true)?;
        for (k, (r, f)) in v.frames.iter().zip(frames).enumerate() {
            tables.push(out, &[f.time, f.elevation], r, v.virtual_work.get(k).copied().flatten())?;
        }
        let mut extra = Map::new();
        extra.insert("variant".into(), json!(name));
        let (summary, mut timing) = tables.finish(extra);
        out.json(&format!("{name}/summary.json"), &summary)?;
        if let Some(t) = timing.as_object_mut() {
            t.insert("wall_ms".into(), json!(v.time_ms));
        }
        timings.insert(name, timing);
        variants.push(summary);
    }

    // cuff.csv: the rotator cuff's total force per variant
    if !study.cuff.is_empty() {
        let mut header = base();
        header.extend(results.variants.iter().map(|v| v.variant.name()));
        let rows: Vec<Vec<String>> = (0..frames.len())
            .map(|k| {
                let mut r = lead(k);
                r.extend(
                    results
                        .variants
                        .iter()
                        .map(|v| crate::plots::cuff_force(study, v, k).map(number).unwrap_or_default()),
                );
                r
            })
            .collect();
        write_table(
            out,
            "cuff.csv",
            Some("the summed force of the study's cuff muscles (N) per variant"),
            &header,
            &rows,
        )?;
    }

    let kin_failed: Vec<Value> = kin
        .frames
        .iter()
        .zip(frames)
        .filter_map(|(r, f)| {
            r.as_ref().err().map(|e| json!({"time": f.time, "elevation_deg": f.elevation, "error": e}))
        })
        .collect();
    let mut max_deviation = None;
    for f in kin.frames.iter().filter_map(|f| f.as_ref().ok()) {
        max_into(&mut max_deviation, f.scapula_deviation.to_degrees());
    }
    let summary = json!({
        "study": study.title(),
        "file": study.file.display().to_string(),
        "model": study.spec.model,
        "frames": frames.len(),
        "elevation_deg": [frames.first().map(|f| f.elevation), frames.last().map(|f| f.elevation)],
        "muscle_elements": study.muscles().len(),
        "muscles": study.groups.len(),
        "kinematics": {
            "solved": kin.frames.iter().filter(|f| f.is_ok()).count(),
            "failed_frames": kin_failed,
            "max_scapula_vs_rhythm_deg": max_deviation,
        },
        "variants": variants,
        "rhythm": { "data_elevation_deg": crate::rhythm::DATA_ELEVATION_DEG },
        "warnings": study.warnings(),
    });
    let timing = json!({ "wall_ms": results.time_ms, "kinematics_ms": kin.time_ms, "variants": timings });
    Ok((summary, timing))
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
