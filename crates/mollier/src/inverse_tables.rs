//! The tables of load sharing over a motion, as `mollier inverse` writes them, the Python
//! package returns them and a study writes them per variant: `forces.csv` (N),
//! `reactions.csv` (N; the joint force and the reserves) and `stability.csv` (status,
//! stability index, deviation angles, residuals), written row by row as frames are solved, and
//! the summary's figures. One implementation for every front end, so that their files and
//! tables hold the same numbers.

use mollier_optim::{FrameResult, RESERVE_WARNING_SHARE, Sign, deviation_angles, stability_index};
use serde_json::{Map, Value, json};

use crate::load_sharing::LoadSharingSetup;
use crate::output::{OutputDir, OutputError, TableId, number};

/// At most this many failed frames are listed in a summary (`stability.csv` has every frame's
/// status).
pub const LISTED: usize = 100;

/// Keep in `m` the largest finite value seen.
pub fn max_into(m: &mut Option<f64>, x: f64) {
    if x.is_finite() {
        *m = Some(m.map_or(x, |m| m.max(x)));
    }
}

/// Keep in `m` the smallest finite value seen.
pub fn min_into(m: &mut Option<f64>, x: f64) {
    if x.is_finite() {
        *m = Some(m.map_or(x, |m| m.min(x)));
    }
}

/// Deviation angles `(θ, φ)` (deg) of a frame's joint force from the cone's axis.
pub fn glenoid_angles(r: &FrameResult) -> Option<(f64, f64)> {
    r.cone_force.as_ref().and_then(deviation_angles).map(|(t, p)| (t.to_degrees(), p.to_degrees()))
}

/// Where reserves carry more than [`RESERVE_WARNING_SHARE`] of their input's driving force
/// (`FrameResult::reserve_shares`) over a run: the frames, the first [`LISTED`] of them, and the
/// largest share.
#[derive(Clone, Debug)]
pub struct ReserveUse {
    lead: Vec<String>,
    names: Vec<String>,
    frames: usize,
    over: usize,
    listed: Vec<Value>,
    largest: Option<(f64, Value)>,
}

impl ReserveUse {
    /// For frames led by the columns `lead` (`time`, ...) and reserves on the inputs `names`.
    pub fn new(lead: &[String], names: Vec<String>) -> Self {
        Self { lead: lead.to_vec(), names, frames: 0, over: 0, listed: Vec::new(), largest: None }
    }

    /// Count a frame with leading values `lead`.
    pub fn add(&mut self, lead: &[f64], r: &FrameResult) {
        self.frames += 1;
        let mut over = false;
        for ((name, &share), &reserve) in self.names.iter().zip(&r.reserve_shares).zip(&r.reserves) {
            if !(share > RESERVE_WARNING_SHARE) {
                continue;
            }
            over = true;
            let mut m: Map<String, Value> = self.lead.iter().zip(lead).map(|(h, v)| (h.clone(), json!(v))).collect();
            m.insert("input".into(), json!(name));
            m.insert("share".into(), json!(share));
            m.insert("reserve".into(), json!(reserve));
            let entry = Value::Object(m);
            if self.largest.as_ref().is_none_or(|(s, _)| share > *s) {
                self.largest = Some((share, entry.clone()));
            }
            if self.listed.len() < LISTED {
                self.listed.push(entry);
            }
        }
        self.over += usize::from(over);
    }

    /// Frames where some reserve carries more than the threshold.
    pub fn frames_over(&self) -> usize {
        self.over
    }

    /// The run's one warning: how many frames, and the largest share with where it is; `None`
    /// when no reserve carries more than the threshold.
    pub fn warning(&self) -> Option<String> {
        let (share, at) = self.largest.as_ref()?;
        let place: Vec<String> = self.lead.iter().map(|h| format!("{h} {}", at[h.as_str()])).collect();
        Some(format!(
            "reserves carry more than {:.0} % of a driving force in {} of {} solved frames, at most {:.1} % of `{}` (at {}, reserve r = {:.4}): the muscles cannot make the motion there, or only at a cost the criterion finds higher; check the muscles' paths, PCSAs and the load (summary.json: reserve_use lists the frames)",
            RESERVE_WARNING_SHARE * 100.0,
            self.over,
            self.frames,
            share * 100.0,
            at["input"].as_str().unwrap_or(""),
            place.join(", "),
            at["reserve"].as_f64().unwrap_or(f64::NAN),
        ))
    }

    /// `reserve_use` of a summary: `threshold_share`, `frames_over`, `largest` and `frames` (the
    /// first [`LISTED`]), each frame with its leading values, `input`, `share` and `reserve`.
    pub fn json(&self) -> Value {
        json!({
            "threshold_share": RESERVE_WARNING_SHARE,
            "frames_over": self.over,
            "largest": self.largest.as_ref().map(|(_, v)| v),
            "frames": self.listed,
        })
    }
}

/// The columns of `reactions.csv` after the leading ones: the sign-constrained reactions (N),
/// the joint force's components and magnitude when the model has a joint cone (N), and a
/// reserve per input (`reserve:<input>`, N or N·m).
pub fn reaction_header(setup: &LoadSharingSetup) -> Vec<String> {
    let mut header = setup.reaction_names();
    if setup.cone.is_some() {
        header.extend(["joint_force.x", "joint_force.y", "joint_force.z", "joint_force"].map(String::from));
    }
    header.extend(setup.reserve_names().iter().map(|n| format!("reserve:{n}")));
    header
}

/// The numeric columns of `stability.csv`, in [`FrameValues::stability`]'s order (the table
/// has the status before them, and its virtual-work check, iterations and message around them).
pub const STABILITY_NUMBERS: [&str; 6] =
    ["stability_index", "rim_index", "theta_deg", "phi_deg", "residual", "objective"];

/// The numbers of one frame in the load-sharing tables, NaN where a cell is empty (a failed
/// frame's forces and reactions, a quantity the model does not have): one place decides them
/// for the files and for the Python package.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameValues {
    /// Muscle forces (N), in [`LoadSharingSetup::muscle_names`]' order.
    pub forces: Vec<f64>,
    /// The columns of [`reaction_header`].
    pub reactions: Vec<f64>,
    /// The columns of [`STABILITY_NUMBERS`]: stability index (at the imposed margin), the index
    /// against the socket's rim ([`rim_index`]), deviation angles θ and φ (deg), equilibrium
    /// residual (kept for a failed frame), objective.
    pub stability: [f64; 6],
}

impl FrameValues {
    /// The values of frame result `r` of a run on `setup`.
    pub fn of(setup: &LoadSharingSetup, r: &FrameResult) -> Self {
        let ok = r.status.is_success();
        let num = |x: f64| if ok { x } else { f64::NAN };
        let forces = r.forces.iter().map(|f| num(*f)).collect();
        let mut reactions: Vec<f64> = r.reactions.iter().map(|x| num(*x)).collect();
        if setup.cone.is_some() {
            match (ok, r.cone_force) {
                (true, Some(f)) => {
                    reactions.extend(f);
                    reactions.push((f[0] * f[0] + f[1] * f[1] + f[2] * f[2]).sqrt());
                }
                _ => reactions.extend([f64::NAN; 4]),
            }
        }
        reactions.extend(r.reserves.iter().map(|x| num(*x)));
        let angles = glenoid_angles(r).filter(|_| ok);
        let stability = [
            r.stability_index.filter(|_| ok).unwrap_or(f64::NAN),
            rim_index(setup, r).filter(|_| ok).unwrap_or(f64::NAN),
            angles.map_or(f64::NAN, |a| a.0),
            angles.map_or(f64::NAN, |a| a.1),
            r.residual.unwrap_or(f64::NAN),
            r.objective.filter(|_| ok).unwrap_or(f64::NAN),
        ];
        Self { forces, reactions, stability }
    }
}

/// The stability index of a frame's joint force against the socket's rim (the model's
/// half-angles, margin 1; Chadwick et al. (2014) eq. 9), whatever margin the run imposed.
pub fn rim_index(setup: &LoadSharingSetup, r: &FrameResult) -> Option<f64> {
    let c = setup.cone.as_ref()?;
    stability_index(r.cone_force.as_ref()?, c.half_angles[0], c.half_angles[1])
}

/// The load-sharing tables of one run, written as its frames are solved: `forces.csv`,
/// `reactions.csv` and `stability.csv` under `prefix`, and counts for the summary (memory does
/// not grow with the frames).
pub struct LoadSharingTables<'a> {
    setup: &'a LoadSharingSetup,
    study: &'a mollier_optim::Study,
    lead: Vec<String>,
    virtual_work: bool,
    tables: [TableId; 3],
    compression: Vec<usize>,
    frames: usize,
    solved: usize,
    ms: f64,
    max_residual: Option<f64>,
    index_max: Option<f64>,
    index_min: Option<f64>,
    outside: usize,
    max_compression: Option<f64>,
    max_reserve: Option<f64>,
    reserve_use: ReserveUse,
    failed_frames: Vec<Value>,
    vw_max: Option<f64>,
    vw_relative: Option<f64>,
    vw_checked: usize,
}

impl<'a> LoadSharingTables<'a> {
    /// Open the tables in `out` under `prefix` (`""`, or `b-glenoid/`); `lead` names the leading
    /// columns (`time`, ...); `virtual_work`: the rows carry the study's virtual-work check.
    pub fn open(
        out: &mut OutputDir,
        prefix: &str,
        setup: &'a LoadSharingSetup,
        study: &'a mollier_optim::Study,
        lead: &[String],
        virtual_work: bool,
    ) -> Result<Self, OutputError> {
        let with_lead = |rest: Vec<String>| lead.iter().cloned().chain(rest).collect::<Vec<String>>();
        let forces = out.table(&format!("{prefix}forces.csv"), None, with_lead(setup.muscle_names()))?;
        let reactions = out.table(&format!("{prefix}reactions.csv"), None, with_lead(reaction_header(setup)))?;
        let mut header: Vec<String> =
            ["status", "stability_index", "rim_index", "theta_deg", "phi_deg", "residual"].map(String::from).into();
        if virtual_work {
            header.extend(["virtual_work_residual", "virtual_work_scale"].map(String::from));
        }
        header.extend(["objective", "iterations", "message"].map(String::from));
        let stability = out.table(&format!("{prefix}stability.csv"), None, with_lead(header))?;
        Ok(Self {
            setup,
            study,
            lead: lead.to_vec(),
            virtual_work,
            tables: [forces, reactions, stability],
            compression: (0..study.signs.len()).filter(|&i| study.signs[i].sign == Sign::Compression).collect(),
            frames: 0,
            solved: 0,
            ms: 0.0,
            max_residual: None,
            index_max: None,
            index_min: None,
            outside: 0,
            max_compression: None,
            max_reserve: None,
            reserve_use: ReserveUse::new(lead, setup.reserve_names()),
            failed_frames: Vec::new(),
            vw_max: None,
            vw_relative: None,
            vw_checked: 0,
        })
    }

    /// Write one frame: its leading values, its result and (with `virtual_work`) its check.
    /// A failed frame's forces and reactions are empty cells, its status in `stability.csv`.
    pub fn push(
        &mut self,
        out: &mut OutputDir,
        lead: &[f64],
        r: &FrameResult,
        vw: Option<(f64, f64)>,
    ) -> Result<(), OutputError> {
        let ok = r.status.is_success();
        let v = FrameValues::of(self.setup, r);
        let lead_cells = || lead.iter().map(|v| number(*v)).collect::<Vec<String>>();
        let [forces, reactions, stability] = self.tables;

        let mut row = lead_cells();
        row.extend(v.forces.iter().map(|f| number(*f)));
        out.row(forces, &row)?;

        let mut row = lead_cells();
        row.extend(v.reactions.iter().map(|x| number(*x)));
        out.row(reactions, &row)?;

        let [index, rim, theta, phi, residual, objective] = v.stability;
        let mut row = lead_cells();
        row.push(r.status.label().to_string());
        row.extend([index, rim, theta, phi, residual].map(number));
        if self.virtual_work {
            row.push(vw.map(|w| number(w.0)).unwrap_or_default());
            row.push(vw.map(|w| number(w.1)).unwrap_or_default());
        }
        row.push(number(objective));
        row.push(r.iterations.to_string());
        row.push(if ok { String::new() } else { r.status.to_string() });
        out.row(stability, &row)?;

        self.count(lead, r, vw);
        Ok(())
    }

    fn count(&mut self, lead: &[f64], r: &FrameResult, vw: Option<(f64, f64)>) {
        self.frames += 1;
        self.ms += r.time_ms;
        if let Some((res, scale)) = vw {
            max_into(&mut self.vw_max, res);
            max_into(&mut self.vw_relative, res / scale.max(f64::MIN_POSITIVE));
            self.vw_checked += 1;
        }
        if !r.status.is_success() {
            if self.failed_frames.len() < LISTED {
                let mut m: Map<String, Value> =
                    self.lead.iter().zip(lead).map(|(h, v)| (h.clone(), json!(v))).collect();
                m.insert("status".into(), json!(r.status.to_string()));
                m.insert("residual".into(), json!(r.residual.filter(|x| x.is_finite())));
                self.failed_frames.push(Value::Object(m));
            }
            return;
        }
        self.solved += 1;
        if let Some(x) = r.residual {
            max_into(&mut self.max_residual, x);
        }
        if let Some(i) = r.stability_index {
            max_into(&mut self.index_max, i);
            min_into(&mut self.index_min, i);
            self.outside += usize::from(i > 0.0);
        }
        for &i in &self.compression {
            max_into(&mut self.max_compression, r.reactions[i].abs());
        }
        for x in &r.reserves {
            max_into(&mut self.max_reserve, x.abs());
        }
        self.reserve_use.add(lead, r);
    }

    /// The run's warning about its reserves ([`ReserveUse::warning`]).
    pub fn reserve_warning(&self) -> Option<String> {
        self.reserve_use.warning()
    }

    /// The run's summary: `extra` (e.g. the variant's name), then `frames`, `solved`, `failed`,
    /// `criterion`, the largest residuals, the stability index's range, the largest contact
    /// reaction and reserve, and the first [`LISTED`] failed frames with their status; and its
    /// timing (`ms_per_frame`: mean solve time per frame).
    pub fn finish(self, extra: Map<String, Value>) -> (Value, Value) {
        let mut out = extra;
        let cone = self.study.cone.as_ref().map(|c| if c.enforce { "imposed" } else { "reported" });
        let margin = self
            .study
            .cone
            .as_ref()
            .zip(self.setup.cone.as_ref())
            .map(|(s, c)| (s.half_angle_y / c.half_angles[0] * 1e12).round() / 1e12);
        let mut fields = json!({
            "frames": self.frames,
            "solved": self.solved,
            "failed": self.frames - self.solved,
            "criterion": self.study.criterion.letter(),
            "criterion_text": self.study.criterion.to_string(),
            "joint_cone": cone,
            "margin": margin,
            "max_residual": self.max_residual,
            "stability_index": {
                "max": self.index_max,
                "min": self.index_min,
                "frames_outside": self.outside,
            },
            "max_compression_reaction": self.max_compression,
            "max_reserve": self.max_reserve,
            "reserve_use": self.reserve_use.json(),
            "failed_frames": self.failed_frames,
        });
        if let (true, Some(m)) = (self.virtual_work, fields.as_object_mut()) {
            m.insert(
                "virtual_work".into(),
                json!({
                    "max_residual": self.vw_max,
                    "max_relative": self.vw_relative,
                    "checked_frames": self.vw_checked,
                }),
            );
        }
        if let Value::Object(m) = fields {
            out.extend(m);
        }
        let timing = json!({ "ms_per_frame": if self.frames == 0 { 0.0 } else { self.ms / self.frames as f64 } });
        (Value::Object(out), timing)
    }
}
