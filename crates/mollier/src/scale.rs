//! Scaling an OpenSim model to a subject, as OpenSim 4's `ScaleTool` scales it.
//!
//! The factors of each body (x, y, z along its axes) come from the setup's steps in order
//! ([`setup::ScaleSetup`]): a measurement sets the factor of its bodies to the mean, over its
//! marker pairs, of the pair's distance in the static trial (averaged over the time range) over
//! its distance in the model's default pose; a manual scale sets a body's factors. Then, as
//! OpenSim's `Model::scale`:
//!
//! - every location fixed in a body is multiplied by the body's factors, axis by axis: the
//!   joints' frames, markers, path points, wrap objects' centres, the centre of mass; a
//!   `CustomJoint`'s translations (a constant, or a function of a coordinate other than the
//!   identity) by `|axis| · s` of its parent's body, and a moving path point's functions by its
//!   body's factor along that axis (OpenSim's `MultiplierFunction`);
//! - wrap objects' sizes: a sphere's radius by the mean factor, a cylinder's radius by the mean of
//!   its x and y axes' stretch and its length by its z axis', an ellipsoid's semi-axes by theirs;
//! - inertias as OpenSim's `Body::scaleInertialProperties`: by the square of a uniform factor, or
//!   as a cylinder about the axis of least inertia for unequal factors; masses by the product of
//!   the factors unless the mass distribution is preserved; then every mass and inertia by one
//!   factor so that the total is the subject's mass;
//! - each muscle's optimal fibre length and tendon slack length by the ratio of its path's
//!   length after to before, both in the default pose (Mollier's own path lengths, wrapping
//!   included).
//!
//! Then, when the setup's `MarkerPlacer` applies, OpenSim's marker placement
//! ([`placer::place_markers`]): IK of the static trial on the scaled model, the markers moved
//! onto their measured places.
//!
//! [`scale()`] gives the scaled OpenSim model and its Mollier model; [`write()`] writes the model
//! file and the report of the factors through [`crate::output`].

pub mod native;
pub mod placer;
pub mod setup;

use std::collections::HashMap;
use std::path::Path;

use mollier_core::registry::Registry;
use mollier_format::{Diagnostic, Diagnostics};
use mollier_osim::function::Function;
use mollier_osim::model::{AxisValue, Model, PointKind, Shape};
use mollier_osim::pose::{joint_order, poses, xyz};
use nalgebra::{Matrix3, Vector3};
use serde_json::{Value, json};

use crate::analysis::{FrameError, KinematicsRun, MuscleColumns};
use crate::compile::{Compiled, import_osim_model};
use crate::ik::relabel;
use crate::output::{OutputDir, OutputError, number};
use crate::trc::MarkerTrial;
pub use native::NativeScaled;
pub use placer::{PlacedMarker, Placement, place_markers, place_points};
pub use setup::{
    BodyAxes, ManualScale, MarkerPlacer, Measurement, ScaleSetup, SetMarker, Step, read_marker_set, read_setup,
};

/// Why a model cannot be scaled.
#[derive(Debug, thiserror::Error)]
pub enum ScaleError {
    /// The inputs are wrong (exit code 2): located problems.
    #[error("{}", .0.render())]
    Invalid(Diagnostics),
    /// A model's muscle paths cannot be solved in the default pose, or the marker placement's
    /// static pose cannot be fitted (exit code 1).
    #[error("{which} cannot be computed: {error}")]
    Failed {
        /// What: the muscles' lengths of the unscaled or scaled model, or the static pose.
        which: &'static str,
        /// The kernel's reason.
        error: FrameError,
    },
}

impl From<Diagnostics> for ScaleError {
    fn from(d: Diagnostics) -> Self {
        Self::Invalid(d)
    }
}

/// One marker pair of a measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct PairLength {
    /// The two markers.
    pub markers: [String; 2],
    /// Their distance in the model's default pose (m).
    pub model: f64,
    /// Their mean distance in the trial over the time range (m).
    pub trial: f64,
}

/// A measurement's result.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasurementResult {
    /// Its name.
    pub name: String,
    /// The factor: the mean of `trial / model` over its pairs.
    pub factor: f64,
    /// Its pairs.
    pub pairs: Vec<PairLength>,
}

/// A muscle's path and fibre parameters before and after scaling (m).
#[derive(Clone, Debug, PartialEq)]
pub struct MuscleScale {
    /// OpenSim's name.
    pub name: String,
    /// Path length in the unscaled model's default pose.
    pub length_before: f64,
    /// Path length in the scaled model's default pose.
    pub length_after: f64,
    /// Optimal fibre length after scaling.
    pub optimal_fiber_length: f64,
    /// Tendon slack length after scaling.
    pub tendon_slack_length: f64,
}

/// What a scaling did, whatever the model's format: the factors, masses, measurements, fibre
/// lengths and the marker placement, as the report's files give them.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleReport {
    /// The bodies, in the model's order (an OpenSim model's: ground first).
    pub bodies: Vec<String>,
    /// Each body's factors (x, y, z along its axes).
    pub factors: Vec<[f64; 3]>,
    /// Where each body's factors come from (`measurement NAME`, `manual`, `unscaled`).
    pub sources: Vec<String>,
    /// Each body's mass before and after (kg).
    pub masses: Vec<(f64, f64)>,
    /// The measurements, in the setup's order.
    pub measurements: Vec<MeasurementResult>,
    /// The muscles' path lengths and fibre parameters (m): those the Mollier model has.
    pub muscles: Vec<MuscleScale>,
    /// What was passed over or kept (bodies the model does not have, muscles left out of the
    /// import, nodes of no body).
    pub notes: Vec<String>,
    /// The marker placement, when the setup's `MarkerPlacer` applies.
    pub placement: Option<Placement>,
}

/// A scaled OpenSim model.
pub struct Scaled {
    /// The scaled OpenSim model (the setup's markers in it).
    pub model: Model,
    /// Its Mollier model (`import.toml`) and how its inputs follow from the coordinates.
    pub import: mollier_osim::Import,
    /// The compiled Mollier model.
    pub compiled: Compiled,
    /// What the scaling did.
    pub report: ScaleReport,
}

/// The marker trial's mean distance between markers `a` and `b` over the frames OpenSim's
/// `MarkerData::findFrameRange` takes: from the last frame at or before the range's start to
/// the first at or after its end.
fn trial_distance(trial: &MarkerTrial, a: usize, b: usize, range: [f64; 2]) -> Result<f64, Box<Diagnostic>> {
    let n = trial.len();
    let first = (0..n).rev().find(|&i| trial.times[i] <= range[0]).unwrap_or(0);
    let last = (first..n).find(|&i| trial.times[i] >= range[1]).unwrap_or(n.saturating_sub(1));
    let mut sum = 0.0;
    for i in first..=last {
        let (Some(p), Some(q)) = (trial.marker(i, a), trial.marker(i, b)) else {
            let missing = if trial.marker(i, a).is_none() { &trial.names[a] } else { &trial.names[b] };
            return Err(Box::new(trial.frame_problem(
                i,
                format!("marker `{missing}` of a measurement is missing in this frame of the time range"),
                "choose a time range in which the measurements' markers are all present",
            )));
        };
        sum += (Vector3::from(p) - Vector3::from(q)).norm();
    }
    Ok(sum / (last + 1 - first) as f64)
}

/// What the setup's steps give.
struct Factors {
    f: Vec<[f64; 3]>,
    sources: Vec<String>,
    results: Vec<MeasurementResult>,
}

/// The factors of every body of `bodies` (by name, in the model's order) from the setup's steps,
/// with their sources and the measurements' results; `place` gives a marker's place in the
/// model's default pose (m), `None` for a marker the model has not got. One reading of the
/// setup for OpenSim's models and Mollier's own.
fn factors(
    bodies: &[String],
    place: &dyn Fn(&str) -> Option<Vector3<f64>>,
    setup: &ScaleSetup,
    trial: Option<&MarkerTrial>,
    notes: &mut Vec<String>,
) -> Result<Factors, Diagnostics> {
    let n = bodies.len();
    let mut f = vec![[1.0; 3]; n];
    let mut sources = vec!["unscaled".to_string(); n];
    let mut results = Vec::new();
    let mut problems = Vec::new();
    let body = |name: &str, at: &Diagnostic, what: &str, problems: &mut Vec<Diagnostic>, notes: &mut Vec<String>| {
        let b = bodies.iter().position(|b| b == name);
        if b.is_none() {
            if setup.strict_bodies {
                let known: Vec<&str> = bodies.iter().map(String::as_str).collect();
                problems.push(relabel(
                    at,
                    format!("the model has no body `{name}`"),
                    format!("its bodies: {}", known.join(", ")),
                ));
            } else {
                // as OpenSim's ScaleTool, which scales only the bodies the model has
                notes.push(format!("{what}: the model has no body `{name}`; passed over"));
            }
        }
        b
    };
    for step in &setup.order {
        match step {
            Step::Measurements if setup.measurements.is_empty() => {}
            Step::Measurements => {
                let setup_at = Diagnostic::new(&setup.file, "ScaleTool/ModelScaler", "");
                let Some(trial) = trial else {
                    problems.push(relabel(
                        &setup_at,
                        "the measurements need a static trial",
                        "give it with --markers, or as the setup's <marker_file>",
                    ));
                    break;
                };
                let Some(range) = setup.time_range else {
                    problems.push(relabel(
                        &setup_at,
                        "the measurements need a <time_range>",
                        "e.g. `<time_range> 1 2 </time_range>`",
                    ));
                    break;
                };
                for m in &setup.measurements {
                    let mut pairs = Vec::new();
                    for [a, b] in &m.pairs {
                        let in_model = (place(a), place(b));
                        let in_trial =
                            (trial.names.iter().position(|x| x == a), trial.names.iter().position(|x| x == b));
                        let (Some(pa), Some(pb)) = in_model else {
                            let missing = if in_model.0.is_none() { a } else { b };
                            problems.push(relabel(
                                &m.at,
                                format!("marker `{missing}` of measurement `{}` is not a marker of the model", m.name),
                                "give the marker set that defines it (the setup's <marker_set_file>)",
                            ));
                            continue;
                        };
                        let (Some(ka), Some(kb)) = in_trial else {
                            let missing = if in_trial.0.is_none() { a } else { b };
                            problems.push(relabel(
                                &m.at,
                                format!(
                                    "marker `{missing}` of measurement `{}` is not in the trial {}",
                                    m.name, trial.file
                                ),
                                "give a static trial with both markers of every pair",
                            ));
                            continue;
                        };
                        match trial_distance(trial, ka, kb, range) {
                            Ok(d) => pairs.push(PairLength {
                                markers: [a.clone(), b.clone()],
                                model: (pa - pb).norm(),
                                trial: d,
                            }),
                            Err(d) => problems.push(*d),
                        }
                    }
                    if pairs.len() != m.pairs.len() {
                        continue;
                    }
                    let factor = pairs.iter().map(|p| p.trial / p.model).sum::<f64>() / pairs.len() as f64;
                    if !finite_positive(factor) {
                        problems.push(relabel(
                            &m.at,
                            format!(
                                "measurement `{}` gives no factor (a marker pair at one place in the model)",
                                m.name
                            ),
                            "pair markers that are apart",
                        ));
                        continue;
                    }
                    for ba in &m.bodies {
                        let what = format!("measurement `{}`", m.name);
                        if let Some(b) = body(&ba.body, &ba.at, &what, &mut problems, notes) {
                            (0..3).filter(|&k| ba.axes[k]).for_each(|k| f[b][k] = factor);
                            sources[b] = format!("measurement {}", m.name);
                        }
                    }
                    results.push(MeasurementResult { name: m.name.clone(), factor, pairs });
                }
            }
            Step::Manual => {
                for s in &setup.manual {
                    if let Some(b) = body(&s.body, &s.at, "manual scale", &mut problems, notes) {
                        f[b] = s.factors;
                        sources[b] = "manual".into();
                    }
                }
            }
        }
    }
    if problems.is_empty() { Ok(Factors { f, sources, results }) } else { Err(Diagnostics(problems)) }
}

fn finite_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

fn multiplied(f: &Function, k: f64) -> Function {
    match f {
        Function::Multiplier(m, g) => Function::Multiplier(m * k, g.clone()),
        f => Function::Multiplier(k, Box::new(f.clone())),
    }
}

fn times(a: [f64; 3], s: [f64; 3]) -> [f64; 3] {
    [a[0] * s[0], a[1] * s[1], a[2] * s[2]]
}

/// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` as a matrix, and back.
fn inertia_matrix(i: &[f64; 6]) -> Matrix3<f64> {
    Matrix3::new(i[0], i[3], i[4], i[3], i[1], i[5], i[4], i[5], i[2])
}

/// OpenSim's `Body::scaleInertialProperties`: the inertia (about the centre of mass, kg m²) of a
/// body of mass `mass` (kg, after any scaling of it) that had `unscaled` (kg), for factors `s`.
fn scaled_inertia(inertia: &[f64; 6], unscaled: f64, mass: f64, s: [f64; 3], scale_mass: bool) -> [f64; 6] {
    let mut m = inertia_matrix(inertia);
    let volume = (s[0] * s[1] * s[2]).abs();
    let equal = |a: f64, b: f64| (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1.0);
    if mass <= f64::EPSILON {
        m *= 0.0;
    } else if equal(s[0], s[1]) && equal(s[1], s[2]) {
        m *= if scale_mass { volume } else { 1.0 } * s[0] * s[0];
    } else {
        // a cylinder about the axis of least inertia, its radius and length scaled
        let axis = if m[(0, 0)] <= m[(1, 1)] {
            if m[(0, 0)] <= m[(2, 2)] { 0 } else { 2 }
        } else if m[(1, 1)] <= m[(2, 2)] {
            1
        } else {
            2
        };
        let radius = (2.0 * m[(axis, axis)] / unscaled).max(0.0).sqrt();
        let other = if axis == 0 { 1 } else { 0 };
        let length =
            (12.0 * (m[(other, other)] - 0.25 * unscaled * radius * radius) / unscaled).max(0.0).sqrt() * s[axis];
        let (a, b) = ((axis + 1) % 3, (axis + 2) % 3);
        let r2 = radius * s[a] * radius * s[b];
        for k in 0..3 {
            m[(k, k)] = if k == axis { 0.5 * mass * r2 } else { mass * (length * length / 12.0 + 0.25 * r2) };
        }
        for (j, k) in [(0, 1), (0, 2), (1, 2)] {
            let p = s[j] * s[k] * if scale_mass { volume } else { 1.0 };
            m[(j, k)] *= p;
            m[(k, j)] *= p;
        }
    }
    [m[(0, 0)], m[(1, 1)], m[(2, 2)], m[(0, 1)], m[(0, 2)], m[(1, 2)]]
}

/// A body's mass and inertia (any consistent units) after scaling by its factors `s`: the mass
/// by the product of the factors when `scale_mass` (OpenSim's `preserve_mass_distribution`
/// false), the inertia as OpenSim's `Body::scaleInertialProperties` ([`scaled_inertia`]).
fn inertial(mass: f64, inertia: &[f64; 6], s: [f64; 3], scale_mass: bool) -> (f64, [f64; 6]) {
    let scaled = if scale_mass { mass * (s[0] * s[1] * s[2]).abs() } else { mass };
    (scaled, scaled_inertia(inertia, mass, scaled, s, scale_mass))
}

/// The one factor of every mass and inertia that makes the total `total` the subject's mass
/// `target` (both in one unit); `None` for a model without mass.
fn to_subject(total: f64, target: f64) -> Option<f64> {
    (total > 0.0).then(|| target / total)
}

/// How a wrap surface's sizes scale with its body's factors `s` (OpenSim's `WrapObject::scale`):
/// each of its own axes (the columns of `r`, its orientation in the body) stretches by the
/// length of `s` applied to it; a sphere's radius by the mean factor, a cylinder's by the mean
/// stretch of its x and y axes (its length by its z axis'), an ellipsoid's semi-axes by theirs.
struct WrapFactors {
    stretch: [f64; 3],
    sphere: f64,
    radius: f64,
}

impl WrapFactors {
    fn new(r: &Matrix3<f64>, s: [f64; 3]) -> Self {
        let stretch = [0, 1, 2].map(|k| r.column(k).component_mul(&Vector3::from(s)).norm());
        Self { stretch, sphere: (s[0] + s[1] + s[2]) / 3.0, radius: 0.5 * (stretch[0] + stretch[1]) }
    }
}

/// The model scaled by the factors `f` (one per body, ground first), its masses to `mass` (kg)
/// when given; muscles' fibre parameters are left for [`scale()`].
pub fn scale_model(model: &Model, f: &[[f64; 3]], preserve_mass_distribution: bool, mass: Option<f64>) -> Model {
    let mut m = model.clone();
    for j in &mut m.joints {
        j.parent.translation = times(j.parent.translation, f[j.parent.body]);
        j.child.translation = times(j.child.translation, f[j.child.body]);
        if j.kind != "CustomJoint" {
            continue;
        }
        let s = f[j.parent.body];
        for a in &mut j.translations {
            let k = a.dir[0].abs() * s[0] + a.dir[1].abs() * s[1] + a.dir[2].abs() * s[2];
            a.value = match &a.value {
                AxisValue::Const(v) => AxisValue::Const(v * k),
                // the identity is the coordinate itself: a degree of freedom, not scaled
                AxisValue::Coord(c, Function::Linear { slope, intercept }) if *slope == 1.0 && *intercept == 0.0 => {
                    AxisValue::Coord(*c, Function::Linear { slope: 1.0, intercept: 0.0 })
                }
                AxisValue::Coord(c, g) => AxisValue::Coord(*c, multiplied(g, k)),
            };
        }
    }
    let scale_mass = !preserve_mass_distribution;
    for (b, body) in m.bodies.iter_mut().enumerate() {
        let s = f[b];
        body.com = times(body.com, s);
        (body.mass, body.inertia) = inertial(body.mass, &body.inertia, s, scale_mass);
        for w in &mut body.wraps {
            w.translation = times(w.translation, s);
            let k = WrapFactors::new(&xyz(&w.rotation), s);
            w.shape = match &w.shape {
                Shape::Sphere(radius) => Shape::Sphere(radius * k.sphere),
                Shape::Cylinder(radius, length) => Shape::Cylinder(radius * k.radius, length * k.stretch[2]),
                Shape::Ellipsoid(d) => Shape::Ellipsoid(times(*d, k.stretch)),
                other => other.clone(),
            };
        }
    }
    if let Some(k) = mass.and_then(|target| to_subject(m.bodies.iter().map(|b| b.mass).sum(), target)) {
        for b in &mut m.bodies {
            b.mass *= k;
            b.inertia.iter_mut().for_each(|i| *i *= k);
        }
    }
    for marker in &mut m.markers {
        marker.location = times(marker.location, f[marker.body]);
    }
    for muscle in &mut m.muscles {
        for p in &mut muscle.points {
            let s = f[p.body];
            p.location = times(p.location, s);
            if let PointKind::Moving(axes) = &mut p.kind {
                for (k, a) in axes.iter_mut().enumerate() {
                    if let Some((_, g)) = a {
                        *g = multiplied(g, s[k]);
                    }
                }
            }
        }
    }
    m
}

/// The muscles' elements (the paths whose elongation is free) and their lengths (m) in the
/// model's initial configuration.
fn muscle_columns(compiled: &Compiled) -> Result<(Vec<String>, Vec<f64>), FrameError> {
    let mut run = KinematicsRun::new(compiled);
    let columns = MuscleColumns::of(compiled, &run);
    let frame = run.solve(&compiled.model.q0())?;
    let (lengths, _) = columns.values(&frame);
    Ok((columns.names().to_vec(), lengths))
}

/// Each muscle's path length (m) in the model's initial configuration (OpenSim's default pose),
/// by OpenSim name; muscles left out of the import have none.
fn muscle_lengths(import: &mollier_osim::Import, compiled: &Compiled) -> Result<HashMap<String, f64>, FrameError> {
    let (names, lengths) = muscle_columns(compiled)?;
    let by_element: HashMap<&str, f64> = names.iter().map(String::as_str).zip(lengths).collect();
    Ok(import
        .model
        .muscles
        .iter()
        .zip(&import.muscle_names)
        .filter_map(|(m, e)| Some((m.name.clone(), *by_element.get(e.as_deref()?)?)))
        .collect())
}

/// Put the marker set's markers into the model: a marker of the same name is replaced, others
/// are added (OpenSim's `Model::updateMarkerSet`).
pub fn use_marker_set(model: &mut Model, markers: &[SetMarker]) -> Result<(), Diagnostics> {
    let mut problems = Vec::new();
    for s in markers {
        let Some(body) = model.bodies.iter().position(|b| b.name == s.body) else {
            problems.push(relabel(&s.at, format!("the model has no body `{}`", s.body), "name a body of the model"));
            continue;
        };
        let place = match s.at.location {
            Some(l) => format!("{}:{}:{}", s.at.file, l.line, l.column),
            None => s.at.file.clone(),
        };
        let marker =
            mollier_osim::model::Marker { name: s.name.clone(), body, location: s.location, fixed: s.fixed, place };
        match model.markers.iter_mut().find(|m| m.name == s.name) {
            Some(m) => *m = marker,
            None => model.markers.push(marker),
        }
    }
    if problems.is_empty() { Ok(()) } else { Err(Diagnostics(problems)) }
}

/// The static trials of a scaling (SI).
#[derive(Clone, Copy, Debug, Default)]
pub struct Trials<'a> {
    /// For the measurements (the `ModelScaler`'s `marker_file`).
    pub measurements: Option<&'a MarkerTrial>,
    /// For the marker placement (the `MarkerPlacer`'s `marker_file`).
    pub placement: Option<&'a MarkerTrial>,
}

/// Scale the OpenSim model `model` (read from `file`) as `setup` says, the measurements and the
/// marker placement on `trials`. The model's markers are those the caller put in
/// ([`use_marker_set`]).
pub fn scale(
    file: &str,
    model: &Model,
    setup: &ScaleSetup,
    trials: Trials,
    registry: &Registry,
) -> Result<Scaled, ScaleError> {
    let trial = trials.measurements;
    let (before, compiled_before) = import_osim_model(file, model, registry)?;
    let mut notes = Vec::new();
    let order = joint_order(model).unwrap_or_default();
    let pose = poses(model, &order, &before.initial);
    let place = |name: &str| model.markers.iter().find(|m| m.name == name).map(|m| pose[m.body].point(&m.location));
    let bodies: Vec<String> = model.bodies.iter().map(|b| b.name.clone()).collect();
    let Factors { f, sources, results: measurements } = factors(&bodies, &place, setup, trial, &mut notes)?;
    let mut scaled = scale_model(model, &f, setup.preserve_mass_distribution, setup.mass);
    let length_before =
        muscle_lengths(&before, &compiled_before).map_err(|error| ScaleError::Failed { which: UNSCALED, error })?;
    let (shaped, compiled_shaped) = import_osim_model(file, &scaled, registry)?;
    let length_after =
        muscle_lengths(&shaped, &compiled_shaped).map_err(|error| ScaleError::Failed { which: SCALED, error })?;
    let mut muscles = Vec::new();
    for m in &mut scaled.muscles {
        let (Some(l0), Some(l1)) = (length_before.get(&m.name), length_after.get(&m.name)) else {
            notes.push(format!(
                "muscle `{}` is left out of the Mollier model: its fibre lengths are not scaled",
                m.name
            ));
            continue;
        };
        if *l0 > 0.0 {
            m.optimal_fiber_length *= l1 / l0;
            m.tendon_slack_length *= l1 / l0;
        }
        muscles.push(MuscleScale {
            name: m.name.clone(),
            length_before: *l0,
            length_after: *l1,
            optimal_fiber_length: m.optimal_fiber_length,
            tendon_slack_length: m.tendon_slack_length,
        });
    }
    let placement = match (&setup.placer, trials.placement) {
        (Some(p), Some(t)) => Some(place_markers(file, &mut scaled, p, t, registry)?),
        (Some(p), None) => return Err(placer_needs_trial(p)),
        _ => None,
    };
    let (import, compiled) = import_osim_model(file, &scaled, registry)?;
    let masses = model.bodies.iter().zip(&scaled.bodies).map(|(a, b)| (a.mass, b.mass)).collect();
    let report = ScaleReport { bodies, factors: f, sources, masses, measurements, muscles, notes, placement };
    Ok(Scaled { model: scaled, import, compiled, report })
}

/// A marker placement without its static trial.
fn placer_needs_trial(p: &MarkerPlacer) -> ScaleError {
    let hint = "give it with --markers, or as the MarkerPlacer's <marker_file>";
    Diagnostics::one(relabel(&p.at, "the marker placement needs a static trial", hint)).into()
}

const UNSCALED: &str = "the muscles' lengths in the default pose of the unscaled model";
const SCALED: &str = "the muscles' lengths in the default pose of the scaled model";

/// What a scaling is given: files, as `mollier scale` and Python name them.
#[derive(Clone, Copy, Debug)]
pub struct ScaleRequest<'a> {
    /// The generic OpenSim model (`.osim`).
    pub model: &'a Path,
    /// OpenSim's scale setup (`.xml`) or a TOML file of factors per body.
    pub setup: &'a Path,
    /// The static trial (`.trc`), instead of the setup's `<marker_file>`.
    pub markers: Option<&'a Path>,
    /// The subject's mass (kg), instead of the setup's.
    pub mass: Option<f64>,
}

/// The whole pipeline from files: read the model, the setup, its marker set and the static
/// trials (the measurements' read only when measurements are taken; the marker placement's),
/// then [`scale()`]. Paths in an OpenSim setup
/// are relative to its folder, as OpenSim reads them.
pub fn scale_files(r: &ScaleRequest, registry: &Registry) -> Result<(ScaleSetup, Scaled), ScaleError> {
    let file = r.model.display().to_string();
    if !r.model.extension().is_some_and(|e| e.eq_ignore_ascii_case("osim")) {
        return Err(ScaleError::Invalid(Diagnostics::one(
            Diagnostic::new(&file, "", "`mollier scale` scales an OpenSim model (.osim)")
                .with_hint("give the generic .osim model; its scaled Mollier model is written"),
        )));
    }
    scale_with_setup(r, read_setup(r.setup)?, registry)
}

/// [`scale_files`] with the setup already read (`r.setup` names it in messages), perhaps
/// changed since (a check leaves out its marker placement).
pub fn scale_with_setup(
    r: &ScaleRequest,
    mut setup: ScaleSetup,
    registry: &Registry,
) -> Result<(ScaleSetup, Scaled), ScaleError> {
    let file = r.model.display().to_string();
    let text = mollier_format::read_text(r.model, "OpenSim model")?;
    let mut model = mollier_osim::model::read(&file, &text)?;
    subject_mass(r, &mut setup)?;
    if let Some(set) = &setup.marker_set_file {
        use_marker_set(&mut model, &read_marker_set(set)?)?;
    }
    let (trial, static_pose) = static_trials(r, &setup)?;
    let trials = Trials { measurements: trial.as_ref(), placement: static_pose.as_ref() };
    let scaled = scale(&file, &model, &setup, trials, registry)?;
    Ok((setup, scaled))
}

/// `--mass` (kg), checked, instead of the setup's.
fn subject_mass(r: &ScaleRequest, setup: &mut ScaleSetup) -> Result<(), ScaleError> {
    if let Some(m) = r.mass {
        if !finite_positive(m) || m > mollier_format::MAX_MAGNITUDE {
            let d = Diagnostic::new("--mass", "", format!("the subject's mass is a number > 0 (kg), not {m}"));
            return Err(ScaleError::Invalid(Diagnostics::one(d)));
        }
        setup.mass = Some(m);
    }
    Ok(())
}

/// The measurements' static trial (`--markers`, else the setup's), read only when the setup
/// takes measurements, and the marker placement's (its own; `--markers` replaces both).
fn static_trials(
    r: &ScaleRequest,
    setup: &ScaleSetup,
) -> Result<(Option<MarkerTrial>, Option<MarkerTrial>), Diagnostics> {
    let measures = setup.order.contains(&Step::Measurements) && !setup.measurements.is_empty();
    let trial_path = r.markers.map(Path::to_path_buf).or_else(|| setup.marker_file.clone());
    let measurements = match trial_path {
        Some(p) if measures => Some(crate::trc::read_trc(&p)?),
        _ => None,
    };
    let placer_path = setup.placer.as_ref().and_then(|p| r.markers.map(Path::to_path_buf).or(p.marker_file.clone()));
    Ok((measurements, placer_path.map(|p| crate::trc::read_trc(&p)).transpose()?))
}

/// A scaled model of either format.
pub enum Scaling {
    /// An OpenSim model (`.osim`), written as its Mollier model.
    OpenSim(Box<Scaled>),
    /// A Mollier model file (`.toml`, `.json`).
    Native(Box<NativeScaled>),
}

impl Scaling {
    /// What it did.
    pub fn report(&self) -> &ScaleReport {
        match self {
            Scaling::OpenSim(s) => &s.report,
            Scaling::Native(s) => &s.report,
        }
    }

    /// The compiled scaled model.
    pub fn compiled(&self) -> &Compiled {
        match self {
            Scaling::OpenSim(s) => &s.compiled,
            Scaling::Native(s) => &s.compiled,
        }
    }

    /// Write it into `out` as a unit ([`write()`] for an OpenSim model; the same files for a
    /// Mollier model, its static pose's columns its inputs).
    pub fn write(
        &self,
        out: &Path,
        setup: &ScaleSetup,
        head: serde_json::Map<String, Value>,
        timing: Value,
    ) -> Result<std::path::PathBuf, OutputError> {
        match self {
            Scaling::OpenSim(s) => write(out, s, setup, head, timing),
            Scaling::Native(s) => {
                let inputs: Vec<&str> = s.compiled.inputs.iter().map(|i| i.name.as_str()).collect();
                write_files(out, &s.text, &s.report, &inputs, setup, head, timing)
            }
        }
    }
}

/// `mollier scale` for a model of either format: an OpenSim model (`.osim`) as
/// [`scale_files`]; a Mollier model file ([`native::scale_native`]) with the same setups, except
/// an OpenSim marker set (its markers are its points).
pub fn scale_any(r: &ScaleRequest, registry: &Registry) -> Result<(ScaleSetup, Scaling), ScaleError> {
    if r.model.extension().is_some_and(|e| e.eq_ignore_ascii_case("osim")) {
        let (setup, s) = scale_files(r, registry)?;
        return Ok((setup, Scaling::OpenSim(Box::new(s))));
    }
    let mut setup = read_setup(r.setup)?;
    let before = crate::compile::load(r.model, registry)?;
    subject_mass(r, &mut setup)?;
    let (trial, static_pose) = static_trials(r, &setup)?;
    let trials = Trials { measurements: trial.as_ref(), placement: static_pose.as_ref() };
    let s = native::scale_native(&before, &setup, trials, registry)?;
    Ok((setup, Scaling::Native(Box::new(s))))
}

/// The summary's part of a scaling: the subject's mass, the total, the notes.
pub fn summary(s: &ScaleReport, setup: &ScaleSetup) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("setup".into(), json!(setup.file));
    m.insert("subject_mass_kg".into(), json!(setup.mass));
    m.insert("total_mass_kg".into(), json!(s.masses.iter().map(|(_, b)| b).sum::<f64>()));
    m.insert("preserve_mass_distribution".into(), json!(setup.preserve_mass_distribution));
    let measured: Vec<Value> = s.measurements.iter().map(|r| json!({ "name": r.name, "factor": r.factor })).collect();
    m.insert("measurements".into(), json!(measured));
    m.insert("muscles_scaled".into(), json!(s.muscles.len()));
    m.insert("notes".into(), json!(s.notes));
    if let Some(p) = &s.placement {
        let file = setup.placer.as_ref().and_then(|p| p.output_motion_file.clone());
        m.insert(
            "marker_placement".into(),
            json!({
                "time": p.time,
                "marker_error_before_m": { "rms": p.rms, "max": p.max },
                "iterations": p.iterations,
                "moved": p.moved.len(),
                "removed": p.removed,
                "kept": p.kept,
                "output_motion_file": file,
            }),
        );
    }
    m
}

/// The marker placement's tables: `static_pose.csv` (the time, then every coordinate, rad or
/// m) and `placed_markers.csv` (each marker moved: its body, its location in it before and
/// after, m, and the distance moved).
fn write_placement(
    dir: &mut OutputDir,
    s: &ScaleReport,
    coordinates: &[&str],
    p: &Placement,
) -> Result<(), OutputError> {
    let t = dir.table("static_pose.csv", None, std::iter::once("time").chain(coordinates.iter().copied()))?;
    dir.numbers(t, std::iter::once(p.time).chain(p.coordinates.iter().copied()))?;
    let header = ["marker", "body", "x_before", "y_before", "z_before", "x", "y", "z", "moved"];
    let t = dir.table("placed_markers.csv", None, header)?;
    for m in &p.moved {
        let moved = (Vector3::from(m.after) - Vector3::from(m.before)).norm();
        let v = m.before.iter().chain(&m.after).copied().chain([moved]).map(number);
        dir.row(t, [m.name.clone(), s.bodies[m.body].clone()].into_iter().chain(v))?;
    }
    Ok(())
}

/// Write a scaling into the output directory `out` as a unit: `model.toml` (the scaled Mollier
/// model), `scale_factors.csv` (each body's x, y, z factors and their source), `masses.csv`
/// (kg), `measurements.csv` (each marker pair's lengths, m, and the measurement's factor),
/// `muscles.csv` (path lengths before and after, the scaled optimal fibre and tendon slack
/// lengths, m), with a marker placement `static_pose.csv` and `placed_markers.csv`
/// (`write_placement`), `summary.json` (`head`, then [`summary`]).
pub fn write(
    out: &Path,
    s: &Scaled,
    setup: &ScaleSetup,
    head: serde_json::Map<String, Value>,
    timing: Value,
) -> Result<std::path::PathBuf, OutputError> {
    let coordinates: Vec<&str> = s.model.coordinates.iter().map(|c| c.name.as_str()).collect();
    write_files(out, &s.import.toml, &s.report, &coordinates, setup, head, timing)
}

/// [`write()`] for either format: the model file's `text` and the report `s`; `coordinates`
/// name the columns of the marker placement's static pose.
fn write_files(
    out: &Path,
    text: &str,
    s: &ScaleReport,
    coordinates: &[&str],
    setup: &ScaleSetup,
    mut head: serde_json::Map<String, Value>,
    timing: Value,
) -> Result<std::path::PathBuf, OutputError> {
    let mut dir = OutputDir::create(out)?;
    let path = dir.file("model.toml")?;
    let text = format!(
        "# Scaled by `mollier scale` with {}: the factors per body are in scale_factors.csv beside this file.\n{text}",
        setup.file
    );
    std::fs::write(&path, text).map_err(|e| OutputError::Io { path: path.clone(), source: e })?;
    let t = dir.table("scale_factors.csv", None, ["body", "x", "y", "z", "source"])?;
    for ((b, f), src) in s.bodies.iter().zip(&s.factors).zip(&s.sources) {
        dir.row(t, [b.to_string(), number(f[0]), number(f[1]), number(f[2]), src.clone()])?;
    }
    let t = dir.table("masses.csv", None, ["body", "mass_before", "mass_after"])?;
    for (b, (m0, m1)) in s.bodies.iter().zip(&s.masses) {
        dir.row(t, [b.to_string(), number(*m0), number(*m1)])?;
    }
    let t = dir.table("measurements.csv", None, ["measurement", "marker_1", "marker_2", "model", "trial", "factor"])?;
    for r in &s.measurements {
        for p in &r.pairs {
            let cells = [&r.name, &p.markers[0], &p.markers[1]].map(String::clone);
            dir.row(t, cells.into_iter().chain([number(p.model), number(p.trial), number(r.factor)]))?;
        }
    }
    let header = ["muscle", "length_before", "length_after", "optimal_fiber_length", "tendon_slack_length"];
    let t = dir.table("muscles.csv", None, header)?;
    for m in &s.muscles {
        let v = [m.length_before, m.length_after, m.optimal_fiber_length, m.tendon_slack_length];
        dir.row(t, std::iter::once(m.name.clone()).chain(v.map(number)))?;
    }
    if let Some(p) = &s.placement {
        write_placement(&mut dir, s, coordinates, p)?;
    }
    head.extend(summary(s, setup));
    dir.commit(Value::Object(head), timing)
}

#[cfg(test)]
mod tests {
    use super::scaled_inertia;

    #[test]
    fn a_uniform_factor_scales_the_inertia_by_its_square_and_unequal_ones_as_a_cylinder() {
        let i = [0.1, 0.02, 0.1, 0.0, 0.0, 0.0];
        let u = scaled_inertia(&i, 8.0, 8.0, [1.5; 3], false);
        assert!((u[0] - 0.225).abs() < 1e-15 && (u[1] - 0.045).abs() < 1e-15, "{u:?}");
        // a cylinder along y (the least inertia): 0.02 = m r²/2 → r² = 0.005; 0.1 = m (L²/12 +
        // r²/4) → L² = 0.135; y stretched by 2: L² = 0.54, r unchanged
        let c = scaled_inertia(&i, 8.0, 8.0, [1.0, 2.0, 1.0], false);
        assert!((c[1] - 0.02).abs() < 1e-15, "{c:?}");
        assert!((c[0] - 8.0 * (0.54 / 12.0 + 0.005 / 4.0)).abs() < 1e-14, "{c:?}");
    }
}
