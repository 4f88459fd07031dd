//! The study's files: CSV tables (SI units; an empty cell where a frame failed, never NaN) and
//! JSON summaries. The load-sharing tables ([`write_load_sharing`]) are those of
//! `mollier inverse` too.
//!
//! ```text
//! DIR/summary.json            the study: frames, variants, timing
//! DIR/motion.csv              the inputs per frame: a motion file of the model
//! DIR/kinematics.csv          landmarks (m), the girdle's free modes, scapula vs rhythm
//! DIR/lengths.csv             muscle lengths (m)
//! DIR/moment_arms.csv         −∂l/∂q for every muscle and input (m/rad, m/m)
//! DIR/<variant>/forces.csv    muscle forces (N)
//! DIR/<variant>/reactions.csv sign-constrained reactions (N), the joint force (N), reserves
//! DIR/<variant>/stability.csv solver status, stability index, deviation angles, residuals, ms
//! DIR/<variant>/summary.json  frames, solved, failed, criterion, ms_per_frame, checks
//! ```

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use mollier::LoadSharingSetup;
use mollier_optim::{FrameResult, Sign, Summary, deviation_angles};
use serde_json::{Map, Value, json};

use crate::study::{KinematicFrame, Results, Study};

/// A cell: the number, or empty if it is not finite.
fn cell(v: f64) -> String {
    if v.is_finite() { format!("{v}") } else { String::new() }
}

fn write_csv(path: &Path, header: &[String], rows: &[Vec<String>]) -> io::Result<()> {
    write_records(csv::Writer::from_path(path)?, header, rows)
}

/// A CSV table after one `# comment` line (motion files skip such lines).
fn write_csv_with_comment(path: &Path, comment: &str, header: &[String], rows: &[Vec<String>]) -> io::Result<()> {
    let mut file = fs::File::create(path)?;
    writeln!(file, "# {comment}")?;
    write_records(csv::Writer::from_writer(file), header, rows)
}

fn write_records<W: io::Write>(mut w: csv::Writer<W>, header: &[String], rows: &[Vec<String>]) -> io::Result<()> {
    w.write_record(header)?;
    for r in rows {
        w.write_record(r)?;
    }
    w.flush()
}

fn write_json(path: &Path, v: &Value) -> io::Result<()> {
    fs::write(path, serde_json::to_string_pretty(v).map_err(io::Error::other)? + "\n")
}

/// Largest value of an iterator of finite numbers (`None` if there is none).
fn max_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).fold(None, |m, x| Some(m.map_or(x, |m: f64| m.max(x))))
}

fn min_of(v: impl Iterator<Item = f64>) -> Option<f64> {
    v.filter(|x| x.is_finite()).fold(None, |m, x| Some(m.map_or(x, |m: f64| m.min(x))))
}

/// Deviation angles `(θ, φ)` (deg) of a frame's joint force from the cone's axis.
pub fn glenoid_angles(r: &FrameResult) -> Option<(f64, f64)> {
    r.cone_force.as_ref().and_then(deviation_angles).map(|(t, p)| (t.to_degrees(), p.to_degrees()))
}

/// The leading columns of every load-sharing table (`time`, ...): their names and, per frame,
/// their values.
#[derive(Clone, Debug, PartialEq)]
pub struct Lead {
    /// Column names.
    pub header: Vec<String>,
    /// One row of values per frame.
    pub rows: Vec<Vec<f64>>,
}

impl Lead {
    /// Just `time`.
    pub fn times(times: &[f64]) -> Self {
        Self { header: vec!["time".into()], rows: times.iter().map(|t| vec![*t]).collect() }
    }

    fn cells(&self, k: usize) -> Vec<String> {
        self.rows[k].iter().map(|v| cell(*v)).collect()
    }

    fn json(&self, k: usize) -> Map<String, Value> {
        self.header.iter().zip(&self.rows[k]).map(|(h, v)| (h.clone(), json!(v))).collect()
    }
}

/// One load-sharing run over a motion, to be written.
#[derive(Clone, Copy, Debug)]
pub struct LoadSharingRun<'a> {
    /// The model's load sharing: names of the columns.
    pub setup: &'a LoadSharingSetup,
    /// The problem solved: criterion, cone imposed or not.
    pub study: &'a mollier_optim::Study,
    /// The leading columns.
    pub lead: &'a Lead,
    /// One result per frame.
    pub frames: &'a [FrameResult],
    /// The study's independent equilibrium check by virtual work per frame (residual, scale),
    /// when there is one.
    pub virtual_work: Option<&'a [Option<(f64, f64)>]>,
    /// Wall time of the run (ms).
    pub wall_ms: f64,
}

impl LoadSharingRun<'_> {
    /// The run's summary: `extra` (e.g. the variant's name), then `frames`, `solved`, `failed`,
    /// `criterion`, `ms_per_frame`, the largest residuals, the stability index's range, the
    /// largest contact reaction and reserve, and every failed frame with its status.
    pub fn summary(&self, extra: Map<String, Value>) -> Value {
        let counts = Summary::of(self.study, self.frames);
        let solved: Vec<&FrameResult> = self.frames.iter().filter(|r| r.status.is_success()).collect();
        let failed: Vec<Value> = self
            .frames
            .iter()
            .enumerate()
            .filter(|(_, r)| !r.status.is_success())
            .map(|(k, r)| {
                let mut m = self.lead.json(k);
                m.insert("status".into(), json!(r.status.to_string()));
                m.insert("residual".into(), json!(r.residual.filter(|x| x.is_finite())));
                Value::Object(m)
            })
            .collect();
        let compression: Vec<usize> =
            (0..self.study.signs.len()).filter(|&i| self.study.signs[i].sign == Sign::Compression).collect();
        let mut out = extra;
        let cone = self.study.cone.as_ref().map(|c| if c.enforce { "imposed" } else { "reported" });
        let mut fields = json!({
            "frames": counts.frames,
            "solved": counts.solved,
            "failed": counts.failed,
            "criterion": counts.criterion,
            "criterion_text": self.study.criterion.to_string(),
            "joint_cone": cone,
            "ms_per_frame": counts.ms_per_frame,
            "wall_ms": self.wall_ms,
            "max_residual": max_of(solved.iter().filter_map(|r| r.residual)),
            "stability_index": {
                "max": max_of(solved.iter().filter_map(|r| r.stability_index)),
                "min": min_of(solved.iter().filter_map(|r| r.stability_index)),
                "frames_outside": solved.iter().filter(|r| r.stability_index.is_some_and(|i| i > 0.0)).count(),
            },
            "max_compression_reaction": max_of(solved.iter().flat_map(|r| compression.iter().map(|&i| r.reactions[i].abs()))),
            "max_reserve": max_of(solved.iter().flat_map(|r| r.reserves.iter().map(|x| x.abs()))),
            "failed_frames": failed,
        });
        if let (Some(vw), Some(m)) = (self.virtual_work, fields.as_object_mut()) {
            m.insert(
                "virtual_work".into(),
                json!({
                    "max_residual": max_of(vw.iter().flatten().map(|w| w.0)),
                    "max_relative": max_of(vw.iter().flatten().map(|w| w.0 / w.1.max(f64::MIN_POSITIVE))),
                    "checked_frames": vw.iter().flatten().count(),
                }),
            );
        }
        if let Value::Object(m) = fields {
            out.extend(m);
        }
        Value::Object(out)
    }
}

/// Write a load-sharing run into `dir` (created if needed): `forces.csv`, `reactions.csv`,
/// `stability.csv` and `summary.json` (with `extra` first). Returns the files and the summary.
pub fn write_load_sharing(
    dir: &Path,
    run: &LoadSharingRun<'_>,
    extra: Map<String, Value>,
) -> io::Result<(Vec<PathBuf>, Value)> {
    fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let lead = run.lead;
    let frames = run.frames;
    let ok = |r: &FrameResult| r.status.is_success();

    // forces.csv: the muscles' forces
    let mut header = lead.header.clone();
    header.extend(run.setup.muscle_names());
    let rows: Vec<Vec<String>> = frames
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut row = lead.cells(k);
            row.extend(r.forces.iter().map(|f| if ok(r) { cell(*f) } else { String::new() }));
            row
        })
        .collect();
    let p = dir.join("forces.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    // reactions.csv: the sign-constrained reactions, the joint force, the reserves
    let cone = run.setup.cone.is_some();
    let mut header = lead.header.clone();
    header.extend(run.setup.reaction_names());
    if cone {
        header.extend(["joint_force.x", "joint_force.y", "joint_force.z", "joint_force"].map(String::from));
    }
    header.extend(run.setup.reserve_names().iter().map(|n| format!("reserve:{n}")));
    let rows: Vec<Vec<String>> = frames
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let num = |x: f64| if ok(r) { cell(x) } else { String::new() };
            let mut row = lead.cells(k);
            row.extend(r.reactions.iter().map(|x| num(*x)));
            if cone {
                match (ok(r), r.cone_force) {
                    (true, Some(f)) => {
                        row.extend(f.iter().map(|x| cell(*x)));
                        row.push(cell((f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt()));
                    }
                    _ => row.extend(std::iter::repeat_n(String::new(), 4)),
                }
            }
            row.extend(r.reserves.iter().map(|x| num(*x)));
            row
        })
        .collect();
    let p = dir.join("reactions.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    // stability.csv: status, the stability index, residuals, timing
    let mut header = lead.header.clone();
    header.extend(["status", "stability_index", "theta_deg", "phi_deg", "residual"].map(String::from));
    if run.virtual_work.is_some() {
        header.extend(["virtual_work_residual", "virtual_work_scale"].map(String::from));
    }
    header.extend(["objective", "iterations", "ms", "message"].map(String::from));
    let rows: Vec<Vec<String>> = frames
        .iter()
        .enumerate()
        .map(|(k, r)| {
            let mut row = lead.cells(k);
            row.push(r.status.label().to_string());
            let angles = glenoid_angles(r).filter(|_| ok(r));
            row.push(r.stability_index.filter(|_| ok(r)).map(cell).unwrap_or_default());
            row.push(angles.map(|a| cell(a.0)).unwrap_or_default());
            row.push(angles.map(|a| cell(a.1)).unwrap_or_default());
            row.push(r.residual.map(cell).unwrap_or_default());
            if let Some(vw) = run.virtual_work {
                let w = vw.get(k).copied().flatten();
                row.push(w.map(|w| cell(w.0)).unwrap_or_default());
                row.push(w.map(|w| cell(w.1)).unwrap_or_default());
            }
            row.push(r.objective.filter(|_| ok(r)).map(cell).unwrap_or_default());
            row.push(r.iterations.to_string());
            row.push(cell(r.time_ms));
            row.push(if ok(r) { String::new() } else { r.status.to_string() });
            row
        })
        .collect();
    let p = dir.join("stability.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    let summary = run.summary(extra);
    let p = dir.join("summary.json");
    write_json(&p, &summary)?;
    written.push(p);
    Ok((written, summary))
}

/// Write every table and summary into `dir` (created if needed); returns the files written.
pub fn write(study: &Study, results: &Results, dir: &Path) -> io::Result<Vec<PathBuf>> {
    fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let frames = &study.motion.frames;
    let lead = |k: usize| vec![cell(frames[k].time), cell(frames[k].elevation)];
    let base = || vec!["time".to_string(), "elevation_deg".to_string()];
    let kin = &results.kinematics;

    // motion.csv: the frames' inputs as a motion file for the model (`mollier inverse`, ...)
    let mut header = vec!["time".to_string()];
    header.extend(study.compiled.inputs.iter().map(|i| i.name.clone()));
    let rows: Vec<Vec<String>> =
        frames.iter().map(|f| std::iter::once(cell(f.time)).chain(f.q.iter().map(|v| cell(*v))).collect()).collect();
    let p = dir.join("motion.csv");
    write_csv_with_comment(
        &p,
        "the study's motion as a motion file of its model (static postures; time is the frame \
         number): mollier inverse MODEL --motion motion.csv --static ...",
        &header,
        &rows,
    )?;
    written.push(p);

    // kinematics.csv (the inputs are in motion.csv: an input may be a landmark's coordinate)
    let mut header = base();
    header.push("status".into());
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
                    r.extend(f.landmarks.iter().flatten().map(|v| cell(*v)));
                    r.extend(f.free.iter().map(|v| cell(*v)));
                    r.push(cell(f.scapula_deviation.to_degrees()));
                }
                Err(e) => {
                    r.push(format!("failed: {e}"));
                    r.resize(header.len(), String::new());
                }
            }
            r
        })
        .collect();
    let p = dir.join("kinematics.csv");
    write_csv(&p, &header, &rows)?;
    written.push(p);

    // lengths.csv and moment_arms.csv: one value per muscle (and input) per solved frame
    let names = study.sharing.muscle_names();
    let per_frame = |file: &str, columns: Vec<String>, values: fn(&KinematicFrame) -> &[f64]| -> io::Result<PathBuf> {
        let mut header = base();
        header.extend(columns);
        let rows: Vec<Vec<String>> = kin
            .frames
            .iter()
            .enumerate()
            .map(|(k, f)| {
                let mut r = lead(k);
                match f {
                    Ok(f) => r.extend(values(f).iter().map(|v| cell(*v))),
                    Err(_) => r.resize(header.len(), String::new()),
                }
                r
            })
            .collect();
        let p = dir.join(file);
        write_csv(&p, &header, &rows)?;
        Ok(p)
    };
    written.push(per_frame("lengths.csv", names.clone(), |f| &f.lengths)?);
    let arms = names.iter().flat_map(|n| study.compiled.inputs.iter().map(move |i| format!("{n}/{}", i.name)));
    written.push(per_frame("moment_arms.csv", arms.collect(), |f| &f.moment_arms)?);

    // the variants
    let lead = Lead { header: base(), rows: frames.iter().map(|f| vec![f.time, f.elevation]).collect() };
    let mut variants = Vec::new();
    for v in &results.variants {
        let study_v = study.optim_study(&v.variant);
        let run = LoadSharingRun {
            setup: &study.sharing,
            study: &study_v,
            lead: &lead,
            frames: &v.frames,
            virtual_work: Some(&v.virtual_work),
            wall_ms: v.time_ms,
        };
        let mut extra = Map::new();
        extra.insert("variant".into(), json!(v.variant.name()));
        let (files, summary) = write_load_sharing(&dir.join(v.variant.name()), &run, extra)?;
        written.extend(files);
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
        "muscle_elements": study.muscles().len(),
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
    write_json(&p, &summary)?;
    written.push(p);
    Ok(written)
}
