//! OpenSim's marker placement (`MarkerPlacer`), the last step of a scaling: the scaled model is
//! fitted by inverse kinematics ([`crate::ik`], the same pipeline as `mollier ik`) to the static
//! trial's mean over the placer's time range, then every marker that is not `fixed` is moved onto
//! its measured place, expressed in its body. As OpenSim 4.6 does it:
//!
//! - the model's markers that the trial does not have are removed (`deleteUnusedMarkers`);
//! - the time range is narrowed to the trial's times; IK fits the mean of the frames inside it
//!   (`TimeSeriesTable::averageRow`), while the markers are moved onto the mean over the frames
//!   `MarkerData::findFrameRange` takes (the last frame at or before the start to the first at or
//!   after the end), each marker's missing frames left out;
//! - the model's default coordinates are kept: the static pose goes to the motion file.

use std::collections::HashSet;

use mollier_core::registry::Registry;
use mollier_format::{Diagnostics, ModelSpec, ParamValue, PointSpec, human};
use mollier_osim::model::Model;
use mollier_osim::pose::{joint_order, poses};
use nalgebra::{Matrix3, Vector3};

use super::ScaleError;
use super::native::marker_point;
use super::setup::MarkerPlacer;
use crate::compile::{Compiled, import_osim_model};
use crate::ik::{IkFrame, IkRun, Unknowns, relabel};
use crate::motion::Rows;
use crate::trc::MarkerTrial;

/// A marker moved by the placement.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedMarker {
    /// Its name in the trial (OpenSim's name).
    pub name: String,
    /// Its body (index in the model's bodies, an OpenSim model's ground first).
    pub body: usize,
    /// Its location in the body before (m).
    pub before: [f64; 3],
    /// And after (m).
    pub after: [f64; 3],
}

/// What the placement did.
#[derive(Clone, Debug, PartialEq)]
pub struct Placement {
    /// The time of the static pose (s): the start of the time range, narrowed to the trial.
    pub time: f64,
    /// The static pose: every coordinate of an OpenSim model, or a Mollier model's inputs (rad
    /// or m), in the model's order.
    pub coordinates: Vec<f64>,
    /// The markers' RMS and largest distance from the trial in that pose, before moving (m).
    pub rms: f64,
    /// See [`Placement::rms`].
    pub max: f64,
    /// Gauss-Newton steps of the fit.
    pub iterations: usize,
    /// The markers moved, in the model's order.
    pub moved: Vec<PlacedMarker>,
    /// The model's markers removed because the trial has not got them.
    pub removed: Vec<String>,
    /// Markers left where they were: fixed, or missing in every frame averaged.
    pub kept: Vec<String>,
}

/// The indices of the frames whose times are within `[t0, t1]`.
fn frames_within(trial: &MarkerTrial, t0: f64, t1: f64) -> Vec<usize> {
    (0..trial.len()).filter(|&i| trial.times[i] >= t0 && trial.times[i] <= t1).collect()
}

/// Marker `k`'s mean over `frames`, leaving out those where it is missing; `strict`: missing in
/// any of them makes it missing (OpenSim's `averageRow` adds the NaN in).
fn mean(trial: &MarkerTrial, k: usize, frames: impl Iterator<Item = usize>, strict: bool) -> Option<Vector3<f64>> {
    let (mut sum, mut n) = (Vector3::zeros(), 0usize);
    for i in frames {
        match trial.marker(i, k) {
            Some(x) => {
                sum += Vector3::from(x);
                n += 1;
            }
            None if strict => return None,
            None => {}
        }
    }
    (n > 0).then(|| sum / n as f64)
}

/// The static pose a placement fits: the time range narrowed to the trial, the trial's mean
/// over the frames inside it as one frame, and the frames the markers' places are averaged over.
struct StaticPose {
    /// The range's start (s).
    time: f64,
    /// The mean frame, at `time`.
    mean: MarkerTrial,
    /// The first and last frames averaged for the markers' places.
    from: usize,
    to: usize,
}

impl StaticPose {
    fn new(placer: &MarkerPlacer, trial: &MarkerTrial) -> Result<Self, ScaleError> {
        let invalid = |message: String, hint: &str| {
            ScaleError::Invalid(Diagnostics::one(relabel(&placer.time_range_at, message, hint)))
        };
        let Some(range) = placer.time_range else {
            return Err(invalid(
                "the marker placement needs a <time_range>".into(),
                "e.g. `<time_range> 1 1.01 </time_range>`",
            ));
        };
        let (Some(&first), Some(&last)) = (trial.times.first(), trial.times.last()) else {
            return Err(invalid(format!("the static trial {} has no frame", trial.file), "give a trial with frames"));
        };
        // OpenSim narrows a range that reaches past the trial to the trial's times
        let (t0, t1) = (range[0].max(first), range[1].min(last));
        let inside = frames_within(trial, t0, t1);
        if inside.is_empty() {
            return Err(invalid(
                format!(
                    "the time range {} to {} s holds no frame of {} (its times are {} to {} s)",
                    human(range[0]),
                    human(range[1]),
                    trial.file,
                    human(first),
                    human(last)
                ),
                "choose a time range that holds a frame of the static trial",
            ));
        }
        let mut mean_frame = trial.clone();
        let row: Vec<f64> = (0..trial.names.len())
            .flat_map(|k| mean(trial, k, inside.iter().copied(), true).map_or([f64::NAN; 3], |x| [x[0], x[1], x[2]]))
            .collect();
        let i0 = inside[0];
        mean_frame.positions = Rows::new(row.len());
        mean_frame.positions.push(&row);
        (mean_frame.times, mean_frame.frame_numbers, mean_frame.lines) =
            (vec![t0], vec![trial.frame_numbers[i0]], vec![trial.lines[i0]]);
        // the frames MarkerData::findFrameRange takes
        let n = trial.len();
        let from = (0..n).rev().find(|&i| trial.times[i] <= t0).unwrap_or(0);
        let to = (from..n).find(|&i| trial.times[i] >= t1).unwrap_or(n - 1);
        Ok(Self { time: t0, mean: mean_frame, from, to })
    }

    /// Fit the mean frame by IK on `compiled` (the placer's tasks), then hand the run at its
    /// solution and the fit to `then`.
    fn fit<R>(
        &self,
        compiled: &Compiled,
        registry: &Registry,
        unknowns: Unknowns,
        placer: &MarkerPlacer,
        then: impl FnOnce(&IkRun, &IkFrame) -> R,
    ) -> Result<R, ScaleError> {
        let mut run = IkRun::new(compiled, registry, unknowns, &self.mean, placer.tasks.as_ref())?;
        let fit = run
            .solve(0)
            .map_err(|error| ScaleError::Failed { which: "the static pose of the marker placement", error })?;
        Ok(then(&run, &fit))
    }

    /// Where marker `name` of `trial` goes in a body at origin `o` with axes `r` (the columns):
    /// its mean over the averaged frames in the body, `None` when it is missing in all of them.
    fn place(&self, trial: &MarkerTrial, name: &str, o: &Vector3<f64>, r: &Matrix3<f64>) -> Option<[f64; 3]> {
        let k = trial.names.iter().position(|x| x == name)?;
        let x = mean(trial, k, self.from..=self.to, false)?;
        Some((r.transpose() * (x - o)).into())
    }

    /// The placement's record: the static pose's `coordinates` and `fit`, then the markers.
    fn placement(
        &self,
        coordinates: Vec<f64>,
        fit: &IkFrame,
        moved: Vec<PlacedMarker>,
        kept: Vec<String>,
    ) -> Placement {
        let (time, rms, max, iterations) = (self.time, fit.rms, fit.max, fit.iterations);
        Placement { time, coordinates, rms, max, iterations, moved, removed: Vec::new(), kept }
    }
}

/// Place the markers of the scaled OpenSim `model` (read from `file`) on the static `trial` as
/// `placer` says; `model`'s markers are moved (and those the trial lacks removed).
pub fn place_markers(
    file: &str,
    model: &mut Model,
    placer: &MarkerPlacer,
    trial: &MarkerTrial,
    registry: &Registry,
) -> Result<Placement, ScaleError> {
    let pose = StaticPose::new(placer, trial)?;
    let removed: Vec<String> =
        model.markers.iter().filter(|m| !trial.names.contains(&m.name)).map(|m| m.name.clone()).collect();
    model.markers.retain(|m| trial.names.contains(&m.name));
    let (import, compiled) = import_osim_model(file, model, registry)?;
    let unknowns = Unknowns::Coordinates(Box::new(import));
    let (coordinates, fit) = pose.fit(&compiled, registry, unknowns, placer, |run, fit| {
        (run.coordinates(&fit.p).unwrap_or_default(), fit.clone())
    })?;
    let order = joint_order(model).unwrap_or_default();
    let frames = poses(model, &order, &coordinates);
    let (mut moved, mut kept) = (Vec::new(), Vec::new());
    for m in &mut model.markers {
        let b = &frames[m.body];
        match pose.place(trial, &m.name, &b.o, &b.r) {
            Some(after) if placer.move_markers && !m.fixed => {
                moved.push(PlacedMarker { name: m.name.clone(), body: m.body, before: m.location, after });
                m.location = after;
            }
            _ => kept.push(m.name.clone()),
        }
    }
    Ok(Placement { removed, ..pose.placement(coordinates, &fit, moved, kept) })
}

/// The names of points that some part of `spec` refers to by name: bodies' origins and points
/// given as another point, the nodes held fixed or free, and every string of the elements'
/// parameters (their nodes, bodies, obstacles).
fn named_elsewhere(spec: &ModelSpec) -> HashSet<String> {
    fn strings(v: &ParamValue, out: &mut HashSet<String>) {
        match v {
            ParamValue::String(s) => {
                out.insert(s.clone());
            }
            ParamValue::Array(a) => a.iter().for_each(|v| strings(v, out)),
            ParamValue::Table(t) => t.iter().for_each(|(_, v)| strings(v, out)),
            ParamValue::Bool(_) | ParamValue::Number(_) => {}
        }
    }
    let mut out: HashSet<String> = spec.fixed.iter().chain(&spec.free).cloned().collect();
    for (_, b) in spec.bodies.iter() {
        let aliases = std::iter::once(&b.origin).chain(b.points.iter().map(|(_, p)| p)).chain(&b.com);
        out.extend(aliases.filter_map(|p| if let PointSpec::Name(n) = p { Some(n.clone()) } else { None }));
    }
    for (_, e) in spec.elements.iter() {
        e.params.0.iter().for_each(|(_, v)| strings(v, &mut out));
    }
    out
}

/// Place the points of the scaled Mollier model `spec` (compiled as `compiled`) that the static
/// `trial`'s markers are, as [`place_markers`] places an OpenSim model's markers: the trial's
/// mean frame fitted by IK on the model's inputs, then each such point moved onto the marker's
/// measured place in its body (file units). A point that another part of the model names (a
/// body's origin, an element's node) is kept: moving it would move a joint or a path. No point
/// is removed; the static pose is the model's inputs.
pub fn place_points(
    spec: &mut ModelSpec,
    compiled: &Compiled,
    placer: &MarkerPlacer,
    trial: &MarkerTrial,
    registry: &Registry,
) -> Result<Placement, ScaleError> {
    let pose = StaticPose::new(placer, trial)?;
    let bodies: Vec<String> = spec.bodies.iter().map(|(b, _)| b.to_string()).collect();
    let (frames, fit) = pose.fit(compiled, registry, Unknowns::Inputs, placer, |run, fit| {
        let (model, data) = (&run.solved_model().model, run.data());
        let frame = |name: &String| {
            let b = run.solved_model().bodies.iter().find(|b| b.name == *name)?;
            let r = mollier_core::geometry::rotation(&data.orientation(model, b.frame.orientation));
            Some((Vector3::from(data.position(model, b.frame.position)), Matrix3::from_fn(|i, j| r[i][j])))
        };
        (bodies.iter().map(frame).collect::<Vec<_>>(), fit.clone())
    })?;
    let referenced = named_elsewhere(spec);
    let si = spec.units.length_factor();
    let (mut moved, mut kept) = (Vec::new(), Vec::new());
    for name in &trial.names {
        let Some(point) = marker_point(spec, name) else { continue };
        let Some((body, short)) = point.split_once('.') else { continue };
        let k = bodies.iter().position(|b| b == body);
        let located = k.and_then(|k| Some((k, frames[k]?, spec.bodies.get(body)?.points.get(short)?.clone())));
        let at = located.and_then(|(k, (o, r), p)| Some((k, pose.place(trial, name, &o, &r)?, p)));
        match at {
            Some((k, after, PointSpec::Coordinates(before))) if placer.move_markers && !referenced.contains(&point) => {
                let b = &mut spec.bodies.0[k].1;
                if let Some((_, p)) = b.points.0.iter_mut().find(|(p, _)| p == short) {
                    *p = PointSpec::Coordinates(after.map(|v| v / si));
                }
                let before = before.map(|v| v * si);
                moved.push(PlacedMarker { name: name.clone(), body: k, before, after });
            }
            _ => kept.push(name.clone()),
        }
    }
    Ok(pose.placement(fit.q.clone(), &fit, moved, kept))
}
