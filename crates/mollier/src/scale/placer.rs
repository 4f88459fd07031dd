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

use mollier_core::registry::Registry;
use mollier_format::{Diagnostics, human};
use mollier_osim::model::Model;
use mollier_osim::pose::{joint_order, poses};
use nalgebra::Vector3;

use super::ScaleError;
use super::setup::MarkerPlacer;
use crate::compile::import_osim_model;
use crate::ik::{IkRun, Unknowns, relabel};
use crate::motion::Rows;
use crate::trc::MarkerTrial;

/// A marker moved by the placement.
#[derive(Clone, Debug, PartialEq)]
pub struct PlacedMarker {
    /// OpenSim's name.
    pub name: String,
    /// Its body (index in the model).
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
    /// The static pose: every coordinate of the model (rad or m), in its order.
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

/// Place the markers of the scaled OpenSim `model` (read from `file`) on the static `trial` as
/// `placer` says; `model`'s markers are moved (and those the trial lacks removed).
pub fn place_markers(
    file: &str,
    model: &mut Model,
    placer: &MarkerPlacer,
    trial: &MarkerTrial,
    registry: &Registry,
) -> Result<Placement, ScaleError> {
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
    let removed: Vec<String> =
        model.markers.iter().filter(|m| !trial.names.contains(&m.name)).map(|m| m.name.clone()).collect();
    model.markers.retain(|m| trial.names.contains(&m.name));
    let mut static_pose = trial.clone();
    let row: Vec<f64> = (0..trial.names.len())
        .flat_map(|k| mean(trial, k, inside.iter().copied(), true).map_or([f64::NAN; 3], |x| [x[0], x[1], x[2]]))
        .collect();
    let i0 = inside[0];
    static_pose.positions = Rows::new(row.len());
    static_pose.positions.push(&row);
    (static_pose.times, static_pose.frame_numbers, static_pose.lines) =
        (vec![t0], vec![trial.frame_numbers[i0]], vec![trial.lines[i0]]);
    let (import, compiled) = import_osim_model(file, model, registry)?;
    let unknowns = Unknowns::Coordinates(Box::new(import));
    let mut run = IkRun::new(&compiled, registry, unknowns, &static_pose, placer.tasks.as_ref())?;
    let fit =
        run.solve(0).map_err(|error| ScaleError::Failed { which: "the static pose of the marker placement", error })?;
    let coordinates = run.coordinates(&fit.p).unwrap_or_default();
    let order = joint_order(model).unwrap_or_default();
    let pose = poses(model, &order, &coordinates);
    // the frames MarkerData::findFrameRange takes
    let n = trial.len();
    let from = (0..n).rev().find(|&i| trial.times[i] <= t0).unwrap_or(0);
    let to = (from..n).find(|&i| trial.times[i] >= t1).unwrap_or(n - 1);
    let (mut moved, mut kept) = (Vec::new(), Vec::new());
    for m in &mut model.markers {
        let k = trial.names.iter().position(|x| *x == m.name);
        let at = k.and_then(|k| mean(trial, k, from..=to, false));
        match at {
            Some(x) if placer.move_markers && !m.fixed => {
                let b = &pose[m.body];
                let local = b.r.transpose() * (x - b.o);
                let after = [local[0], local[1], local[2]];
                moved.push(PlacedMarker { name: m.name.clone(), body: m.body, before: m.location, after });
                m.location = after;
            }
            _ => kept.push(m.name.clone()),
        }
    }
    Ok(Placement {
        time: t0,
        coordinates,
        rms: fit.rms,
        max: fit.max,
        iterations: fit.iterations,
        moved,
        removed,
        kept,
    })
}
