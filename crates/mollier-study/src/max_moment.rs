//! Maximum isometric moments over a file of postures (Chadwick et al. 2014, section II-F, Figs. 4-8 panel
//! A): [`mollier_optim::MaxMoment`] per posture, direction and sense, the tables and the plot.
//!
//! Files (through [`mollier::output`], written as a unit):
//! - `moments.csv`: time, then per direction its positive and negative sense (N m, or N for a
//!   length input): the largest moment the muscles exert on a device holding the posture;
//! - `postures.csv`: time and the model's inputs (rad, m) of each posture: the girdle's posture
//!   is the posture file's (the program is convex because the posture is given);
//! - `forces_<sense>.csv`: the muscle forces (N) at each maximum (the least `Σ (F/PCSA)²` among
//!   the forces that reach it);
//! - `checks.csv`: per posture and sense, the status of the independent check, the stability
//!   index of the joint force, the equilibrium residual (N m) and the device's driving force on
//!   each input it holds;
//! - `plots/moments.svg`: one panel per direction, both senses against the plot's input.

use std::io;
use std::path::Path;

use mollier::output::{OutputDir, OutputError};
use mollier::{Compiled, Motion};
use mollier_core::element::Quantity;
use mollier_core::{Data, Model};
use mollier_optim::{Direction, MaxMoment, PostureMoments, SetupError, Study};
use plotters::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::chart::{err, grid, key, padded};

/// The moments of every posture.
#[derive(Clone, Debug)]
pub struct MomentRun {
    /// Time (s) of each posture, as in the posture file.
    pub times: Vec<f64>,
    /// The postures' inputs (rad or m), one row per posture.
    pub postures: Vec<Vec<f64>>,
    /// The directions.
    pub directions: Vec<Direction>,
    /// The inputs the device holds (directions first), by index.
    pub held: Vec<usize>,
    /// Per posture, per direction, the positive and the negative sense.
    pub results: Vec<PostureMoments>,
    /// The muscles' names.
    pub muscles: Vec<String>,
}

/// A study's `[max_moment]` section: the maximum isometric moments at every frame of its motion.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaxMomentSpec {
    /// The directions, each an input of the model and the names of its senses.
    pub directions: Vec<DirectionSpec>,
    /// Other inputs the device holds, with whatever driving force the maximum needs.
    #[serde(default)]
    pub hold: Vec<String>,
    /// Impose the model's joint cone (default `true`); else only report its stability index.
    #[serde(default = "impose")]
    pub joint_cone: bool,
}

fn impose() -> bool {
    true
}

/// One direction of a `[max_moment]` section.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DirectionSpec {
    /// The input, as in the model's `inputs`.
    pub input: String,
    /// The name of the sense that increases it.
    pub positive: String,
    /// The name of the sense that decreases it.
    pub negative: String,
}

/// The index of the model's input called `name`, or a message listing the inputs.
pub fn input_index(name: &str, compiled: &Compiled) -> Result<usize, String> {
    let names: Vec<&str> = compiled.inputs.iter().map(|i| i.name.as_str()).collect();
    names
        .iter()
        .position(|i| *i == name.trim())
        .ok_or_else(|| format!("no input called `{}`; the model's inputs: {}", name.trim(), names.join(", ")))
}

/// A direction from its input's name and its senses' names (non-empty and different).
pub fn direction(input: &str, positive: &str, negative: &str, compiled: &Compiled) -> Result<Direction, String> {
    let (p, n) = (positive.trim(), negative.trim());
    if p.is_empty() || n.is_empty() || p == n {
        return Err(format!("direction `{input}`: name both senses, different, as POSITIVE/NEGATIVE"));
    }
    Ok(Direction { input: input_index(input, compiled)?, positive: p.into(), negative: n.into() })
}

/// The directions and held inputs of a `[max_moment]` section, resolved on the model; a
/// problem as `max_moment.<field>: message`.
pub fn resolve(spec: &MaxMomentSpec, compiled: &Compiled) -> Result<(Vec<Direction>, Vec<usize>), String> {
    if spec.directions.is_empty() {
        return Err("max_moment.directions: the list is empty: name at least one input".into());
    }
    let directions = spec
        .directions
        .iter()
        .map(|d| direction(&d.input, &d.positive, &d.negative, compiled))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| format!("max_moment.directions: {m}"))?;
    let hold = spec
        .hold
        .iter()
        .map(|h| input_index(h, compiled))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|m| format!("max_moment.hold: {m}"))?;
    Ok((directions, hold))
}

/// Every direction in both senses at every posture of `motion`, with the muscles, sign
/// constraints and (if `study.cone` is set) the joint cone of `study`. Postures are solved in
/// order, each from the last, so that a motion-like posture file stays on one assembly branch.
pub fn run(
    model: &Model,
    study: Study,
    motion: &Motion,
    directions: Vec<Direction>,
    free: &[usize],
) -> Result<MomentRun, SetupError> {
    let postures: Vec<Vec<f64>> = motion.q.iter().map(|q| q.to_vec()).collect();
    run_postures(model, study, motion.times.clone(), postures, directions, free)
}

/// [`run`] over postures (rad, m) at `times` (s).
pub fn run_postures(
    model: &Model,
    study: Study,
    times: Vec<f64>,
    postures: Vec<Vec<f64>>,
    directions: Vec<Direction>,
    free: &[usize],
) -> Result<MomentRun, SetupError> {
    let mm = MaxMoment::new(model, study, directions, free)?;
    let mut ws = mm.workspace();
    let mut data = Data::new(model);
    let results = postures.iter().map(|q| mm.posture(&mut ws, &mut data, q, &[])).collect();
    Ok(MomentRun {
        times,
        postures,
        directions: mm.directions().to_vec(),
        held: mm.held_inputs(),
        results,
        muscles: mm.sharing().muscle_names(),
    })
}

impl MomentRun {
    /// The senses' names in table order: per direction, positive then negative.
    pub fn senses(&self) -> Vec<String> {
        self.directions.iter().flat_map(|d| [d.positive.clone(), d.negative.clone()]).collect()
    }

    /// Postures whose every maximum was solved and checked.
    pub fn solved(&self) -> usize {
        self.results.iter().filter(|p| p.iter().flatten().all(|m| m.frame.status.is_success())).count()
    }

    /// Write the tables and the plot into `dir` (not committed); the summary's body is returned.
    /// `x` is the input the plot runs along.
    pub fn write(&self, dir: &mut OutputDir, compiled: &Compiled, x: usize) -> Result<Value, OutputError> {
        self.write_in(dir, "", compiled, x)
    }

    /// [`Self::write`] with every file's name after `prefix` (`max_moment/`, say).
    pub fn write_in(
        &self,
        dir: &mut OutputDir,
        prefix: &str,
        compiled: &Compiled,
        x: usize,
    ) -> Result<Value, OutputError> {
        let inputs: Vec<&str> = compiled.inputs.iter().map(|i| i.name.as_str()).collect();
        let senses = self.senses();
        let moments = dir.table(
            &format!("{prefix}moments.csv"),
            None,
            std::iter::once("time").chain(senses.iter().map(String::as_str)),
        )?;
        let postures =
            dir.table(&format!("{prefix}postures.csv"), None, std::iter::once("time").chain(inputs.iter().copied()))?;
        let mut forces = Vec::new();
        for s in &senses {
            let name = format!("{prefix}forces_{}.csv", file_safe(s));
            forces.push(dir.table(
                &name,
                None,
                std::iter::once("time").chain(self.muscles.iter().map(String::as_str)),
            )?);
        }
        let held: Vec<String> = self.held.iter().map(|&j| format!("device {}", inputs[j])).collect();
        let head = ["time", "sense", "status", "stability_index", "residual"].into_iter().map(String::from);
        let checks = dir.table(&format!("{prefix}checks.csv"), None, head.chain(held))?;
        let num = mollier::output::number;
        for (k, p) in self.results.iter().enumerate() {
            let t = self.times[k];
            dir.numbers(moments, std::iter::once(t).chain(p.iter().flatten().map(|m| m.moment)))?;
            dir.numbers(postures, std::iter::once(t).chain(self.postures[k].iter().copied()))?;
            for (s, m) in p.iter().flatten().enumerate() {
                let f = &m.frame;
                let ok = f.status.is_success();
                dir.numbers(
                    forces[s],
                    std::iter::once(t).chain(f.forces.iter().map(|v| if ok { *v } else { f64::NAN })),
                )?;
                let mut row = vec![num(t), senses[s].clone(), f.status.to_string()];
                row.push(num(f.stability_index.unwrap_or(f64::NAN)));
                row.push(num(f.residual.unwrap_or(f64::NAN)));
                row.extend(f.reserves.iter().map(|v| num(if ok { *v } else { f64::NAN })));
                dir.row(checks, row)?;
            }
        }
        let svg = dir.file(&format!("{prefix}plots/moments.svg"))?;
        let angle = compiled.inputs[x].quantity == Quantity::Angle;
        let xs: Vec<f64> = self.postures.iter().map(|q| if angle { q[x].to_degrees() } else { q[x] }).collect();
        let x_desc = format!("{} ({})", inputs[x], if angle { "deg" } else { "m" });
        plot(&svg, self, &xs, &x_desc).map_err(|source| OutputError::Io { path: svg.clone(), source })?;
        let peaks: serde_json::Map<String, Value> = senses
            .iter()
            .enumerate()
            .map(|(s, name)| {
                let (d, i) = (s / 2, s % 2);
                let best = (0..self.results.len())
                    .filter(|&k| self.results[k][d][i].moment.is_finite())
                    .max_by(|&a, &b| self.results[a][d][i].moment.total_cmp(&self.results[b][d][i].moment));
                let v = best.map(|k| json!({"moment": self.results[k][d][i].moment, "at": xs[k]}));
                (name.clone(), v.unwrap_or(Value::Null))
            })
            .collect();
        Ok(json!({
            "postures": self.results.len(),
            "solved": self.solved(),
            "directions": self.directions.iter().map(|d| json!({
                "input": inputs[d.input], "positive": d.positive, "negative": d.negative
            })).collect::<Vec<_>>(),
            "held_inputs": self.held.iter().map(|&j| inputs[j]).collect::<Vec<_>>(),
            "plot_input": inputs[x],
            "peaks": peaks,
        }))
    }
}

/// A sense's name as part of a file name: letters, digits, `-` and `_`; others become `_`.
fn file_safe(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect()
}

/// A plotted line: its key, its points and its colour.
type Series = (String, Vec<(f64, f64)>, RGBColor);

/// Chadwick et al. (2014) Figs. 4-8 panel A: per direction, the positive sense (red) and the negative (black)
/// against the posture's input, with markers and a key.
fn plot(path: &Path, run: &MomentRun, xs: &[f64], x_desc: &str) -> io::Result<()> {
    let n = run.directions.len();
    let (rows, cols) = grid(n);
    let root = SVGBackend::new(path, (420 * cols as u32, 320 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (x0, x1) = padded(
        xs.iter().copied().filter(|v| v.is_finite()).fold(f64::INFINITY, f64::min),
        xs.iter().copied().filter(|v| v.is_finite()).fold(f64::NEG_INFINITY, f64::max),
    );
    // whole numbers for degrees; enough decimals for a length's millimetres
    let decimals = if x1 - x0 >= 20.0 {
        0
    } else if x1 - x0 >= 2.0 {
        1
    } else {
        3
    };
    for (d, area) in root.split_evenly((rows, cols)).iter().enumerate().take(n) {
        let dir = &run.directions[d];
        let series: Vec<Series> = [(0, &dir.positive, RED), (1, &dir.negative, BLACK)]
            .into_iter()
            .map(|(i, name, color)| {
                let pts = run.results.iter().zip(xs).map(|(p, &x)| (x, p[d][i].moment)).collect();
                (name.clone(), pts, color)
            })
            .collect();
        let finite = series.iter().flat_map(|s| s.1.iter().map(|p| p.1)).filter(|v| v.is_finite());
        let (lo, hi) = finite.fold((0.0f64, 0.0f64), |(a, b), v| (a.min(v), b.max(v)));
        let (y0, y1) = padded(lo, hi);
        let mut chart = ChartBuilder::on(area)
            .caption(format!("maximum isometric moment: {} / {}", dir.positive, dir.negative), ("sans-serif", 14))
            .margin(8)
            .x_label_area_size(32)
            .y_label_area_size(48)
            .build_cartesian_2d(x0..x1, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_labels(8)
            .y_labels(6)
            .x_label_formatter(&|v| format!("{:.*}", decimals, v))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .x_desc(x_desc)
            .y_desc("moment (N m)")
            .label_style(("sans-serif", 11))
            .draw()
            .map_err(err)?;
        for (name, pts, color) in series {
            let style = color.stroke_width(2);
            for part in pts.split(|p| !p.1.is_finite()).filter(|r| !r.is_empty()) {
                chart.draw_series(LineSeries::new(part.to_vec(), style)).map_err(err)?;
            }
            let marks = pts.iter().filter(|p| p.1.is_finite()).map(|&p| Circle::new(p, 3, color.filled()));
            chart
                .draw_series(marks)
                .map_err(err)?
                .label(name)
                .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2)));
        }
        key(&mut chart)?;
    }
    root.present().map_err(err)
}
