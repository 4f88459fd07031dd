//! The study's files: CSV tables (SI units; an empty cell where a frame failed, never NaN) and
//! JSON summaries.
//!
//! ```text
//! DIR/summary.json            the study: frames, variants, timing
//! DIR/kinematics.csv          inputs, landmarks (m), the girdle's free modes, scapula vs rhythm
//! DIR/lengths.csv             muscle lengths (m)
//! DIR/moment_arms.csv         −∂l/∂q for every muscle and input (m/rad, m/m)
//! DIR/<variant>/forces.csv    muscle forces (N)
//! DIR/<variant>/reactions.csv sign-constrained reactions (N), the glenohumeral force (N)
//! DIR/<variant>/stability.csv stability index, deviation angles, residual, solver status
//! DIR/<variant>/summary.json  frames, solved, failed, criterion, ms_per_frame, checks
//! ```

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use mollier_optim::{FrameResult, deviation_angles};
use serde_json::{Value, json};

use crate::study::{Results, Study, VariantResult};

/// A cell: the number, or empty if it is not finite.
fn cell(v: f64) -> String {
    if v.is_finite() { format!("{v}") } else { String::new() }
}

fn write_csv(path: &Path, header: &[String], rows: &[Vec<String>]) -> io::Result<()> {
    let mut w = csv::Writer::from_path(path)?;
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    w.flush()
}

/// Largest value of an iterator of finite numbers (`None` if there is none).
fn max_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).fold(None, |m, x| Some(m.map_or(x, |m: f64| m.max(x))))
}

fn min_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).fold(None, |m, x| Some(m.map_or(x, |m: f64| m.min(x))))
}

/// Deviation angles `(θ, φ)` (deg) of a frame's glenohumeral force.
pub fn glenoid_angles(r: &FrameResult) -> Option<(f64, f64)> {
    r.cone_force.as_ref().and_then(deviation_angles).map(|(t, p)| (t.to_degrees(), p.to_degrees()))
}

/// The variant's summary as JSON, with the checks a reader looks for.
pub fn variant_summary(study: &Study, v: &VariantResult) -> Value {
    let solved: Vec<&FrameResult> = v.frames.iter().filter(|r| r.status.is_success()).collect();
    let failed: Vec<Value> = v
        .frames
        .iter()
        .zip(&study.motion.frames)
        .filter(|(r, _)| !r.status.is_success())
        .map(|(r, f)| json!({"time": f.time, "elevation_deg": f.elevation, "status": r.status.to_string(), "residual": r.residual}))
        .collect();
    let compression: Vec<usize> = study
        .signs
        .iter()
        .enumerate()
        .filter(|(_, (_, s))| s.sign == mollier_optim::Sign::Compression)
        .map(|(i, _)| i)
        .collect();
    json!({
        "variant": v.variant.name(),
        "frames": v.summary.frames,
        "solved": v.summary.solved,
        "failed": v.summary.failed,
        "criterion": v.summary.criterion,
        "criterion_text": v.variant.criterion.to_string(),
        "glenoid_constraint": v.variant.glenoid,
        "ms_per_frame": v.summary.ms_per_frame,
        "wall_ms": v.time_ms,
        "max_residual": max_of(solved.iter().filter_map(|r| r.residual)),
        "virtual_work": {
            "max_residual": max_of(v.virtual_work.iter().flatten().map(|w| w.0)),
            "max_relative": max_of(v.virtual_work.iter().flatten().map(|w| w.0 / w.1.max(f64::MIN_POSITIVE))),
            "checked_frames": v.virtual_work.iter().flatten().count(),
        },
        "stability_index": {
            "max": max_of(solved.iter().filter_map(|r| r.stability_index)),
            "min": min_of(solved.iter().filter_map(|r| r.stability_index)),
            "frames_outside": solved.iter().filter(|r| r.stability_index.is_some_and(|i| i > 0.0)).count(),
        },
        "max_compression_reaction": max_of(solved.iter().flat_map(|r| compression.iter().map(|&i| r.reactions[i]))),
        "max_reserve": max_of(solved.iter().flat_map(|r| r.reserves.iter().map(|x| x.abs()))),
        "failed_frames": failed,
    })
}

/// Write every table and summary into `dir` (created if needed); returns the files written.
pub fn write(study: &Study, results: &Results, dir: &Path) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let frames = &study.motion.frames;
    let lead = |k: usize| vec![cell(frames[k].time), cell(frames[k].elevation)];
    let base = || vec!["time".to_string(), "elevation_deg".to_string()];
    let kin = &results.kinematics;

    // kinematics.csv
    let mut header = base();
    header.push("status".into());
    header.extend(study.compiled.inputs.iter().map(|i| i.name.clone()));
    for (n, _) in &study.landmarks {
        header.extend(["x", "y", "z"].map(|a| format!("{n}.{a}")));
    }
    header.extend(kin.free_names.iter().cloned());
    header.push("scapula_vs_rhythm_deg".into());
    let rows: Vec<Vec<String>> = kin
        .frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let mut r = lead(k);
            match f {
                Ok(f) => {
                    r.push("solved".into());
                    r.extend(frames[k].q.iter().map(|v| cell(*v)));
                    r.extend(f.landmarks.iter().flatten().map(|v| cell(*v)));
                    r.extend(f.free.iter().map(|v| cell(*v)));
                    r.push(cell(f.scapula_deviation.to_degrees()));
                }
                Err(e) => {
                    r.push(format!("failed: {e}"));
                    r.extend(frames[k].q.iter().map(|v| cell(*v)));
                    r.resize(header.len(), String::new());
                }
            }
            r
        })
        .collect();
    let p = dir.join("kinematics.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    // lengths.csv and moment_arms.csv
    let names: Vec<String> = study.muscles.iter().map(|m| m.name.clone()).collect();
    let mut header = base();
    header.extend(names.iter().cloned());
    let rows: Vec<Vec<String>> = kin
        .frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let mut r = lead(k);
            match f {
                Ok(f) => r.extend(f.lengths.iter().map(|v| cell(*v))),
                Err(_) => r.resize(header.len(), String::new()),
            }
            r
        })
        .collect();
    let p = dir.join("lengths.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);
    let mut header = base();
    for n in &names {
        header.extend(study.compiled.inputs.iter().map(|i| format!("{n}/{}", i.name)));
    }
    let rows: Vec<Vec<String>> = kin
        .frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let mut r = lead(k);
            match f {
                Ok(f) => r.extend(f.moment_arms.iter().map(|v| cell(*v))),
                Err(_) => r.resize(header.len(), String::new()),
            }
            r
        })
        .collect();
    let p = dir.join("moment_arms.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    // the variants
    let mut variants = Vec::new();
    for v in &results.variants {
        let vdir = dir.join(v.variant.name());
        fs::create_dir_all(&vdir)?;
        let status = |r: &FrameResult| r.status.label().to_string();
        let mut header = base();
        header.push("status".into());
        header.extend(names.iter().cloned());
        let rows: Vec<Vec<String>> = v
            .frames
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let mut row = lead(k);
                row.push(status(r));
                let ok = r.status.is_success();
                row.extend(r.forces.iter().map(|f| if ok { cell(*f) } else { String::new() }));
                row
            })
            .collect();
        let p = vdir.join("forces.csv");
        write_csv(&p, &header, &rows)?;
        written.push(p);

        let mut header = base();
        header.push("status".into());
        header.extend(study.signs.iter().map(|(n, _)| n.clone()));
        if study.glenoid.is_some() {
            header.extend(["gh_force.x", "gh_force.y", "gh_force.z", "gh_force"].map(String::from));
        }
        header.extend(
            study
                .optim_study(&v.variant)
                .reserves
                .iter()
                .map(|r| format!("reserve:{}", study.compiled.inputs[r.input].name)),
        );
        header.push("residual".into());
        let rows: Vec<Vec<String>> = v
            .frames
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let ok = r.status.is_success();
                let mut row = lead(k);
                row.push(status(r));
                let num = |x: f64| if ok { cell(x) } else { String::new() };
                row.extend(r.reactions.iter().map(|x| num(*x)));
                if study.glenoid.is_some() {
                    match (ok, r.cone_force) {
                        (true, Some(f)) => {
                            row.extend(f.iter().map(|x| cell(*x)));
                            row.push(cell((f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt()));
                        }
                        _ => row.extend(std::iter::repeat_n(String::new(), 4)),
                    }
                }
                row.extend(r.reserves.iter().map(|x| num(*x)));
                row.push(r.residual.map(cell).unwrap_or_default());
                row
            })
            .collect();
        let p = vdir.join("reactions.csv");
        write_csv(&p, &header, &rows)?;
        written.push(p);

        let mut header = base();
        header.extend(
            [
                "status",
                "stability_index",
                "theta_deg",
                "phi_deg",
                "residual",
                "virtual_work_residual",
                "virtual_work_scale",
                "objective",
                "iterations",
                "ms",
                "message",
            ]
            .map(String::from),
        );
        let rows: Vec<Vec<String>> = v
            .frames
            .iter()
            .enumerate()
            .map(|(k, r)| {
                let ok = r.status.is_success();
                let mut row = lead(k);
                row.push(status(r));
                let angles = glenoid_angles(r).filter(|_| ok);
                row.push(r.stability_index.filter(|_| ok).map(cell).unwrap_or_default());
                row.push(angles.map(|a| cell(a.0)).unwrap_or_default());
                row.push(angles.map(|a| cell(a.1)).unwrap_or_default());
                row.push(r.residual.map(cell).unwrap_or_default());
                let vw = v.virtual_work.get(k).copied().flatten();
                row.push(vw.map(|w| cell(w.0)).unwrap_or_default());
                row.push(vw.map(|w| cell(w.1)).unwrap_or_default());
                row.push(r.objective.filter(|_| ok).map(cell).unwrap_or_default());
                row.push(r.iterations.to_string());
                row.push(cell(r.time_ms));
                row.push(if ok { String::new() } else { r.status.to_string() });
                row
            })
            .collect();
        let p = vdir.join("stability.csv");
        write_csv(&p, &header, &rows)?;
        written.push(p);

        let summary = variant_summary(study, v);
        let p = vdir.join("summary.json");
        fs::write(&p, serde_json::to_string_pretty(&summary).map_err(io::Error::other)? + "\n")?;
        written.push(p);
        variants.push(summary);
    }

    let kin_failed: Vec<Value> = kin
        .frames
        .iter()
        .zip(frames)
        .filter_map(|(r, f)| {
            r.as_ref().err().map(|e| json!({"time": f.time, "elevation_deg": f.elevation, "error": e}))
        })
        .collect();
    let summary = json!({
        "study": study.title(),
        "file": study.file.display().to_string(),
        "model": study.spec.model,
        "frames": frames.len(),
        "elevation_deg": [frames.first().map(|f| f.elevation), frames.last().map(|f| f.elevation)],
        "muscle_elements": study.muscles.len(),
        "muscles": study.groups.len(),
        "kinematics": {
            "solved": kin.frames.iter().filter(|f| f.is_ok()).count(),
            "failed_frames": kin_failed,
            "ms": kin.time_ms,
            "max_scapula_vs_rhythm_deg": max_of(kin.frames.iter().filter_map(|f| f.as_ref().ok()).map(|f| f.scapula_deviation.to_degrees())),
        },
        "variants": variants,
        "wall_ms": results.time_ms,
    });
    let p = dir.join("summary.json");
    fs::write(&p, serde_json::to_string_pretty(&summary).map_err(io::Error::other)? + "\n")?;
    written.push(p);
    Ok(written)
}
