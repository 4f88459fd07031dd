//! Scaling a Mollier model file (`.toml`, `.json`) to a subject by the same rules as an OpenSim
//! model ([`super`]): the factors from the same setup, read by the same code; then every
//! location fixed in a body times the body's factors along its axes — its points, its centre of
//! mass, the wrap surfaces of its muscles (`curved-truss` obstacles) and its contact ellipsoids
//! (`surface`, `soft-contact`), the places of its moving path points (`path-point`) — wrap sizes,
//! masses and inertias as OpenSim scales them, and the muscles' optimal fibre and tendon slack
//! lengths (`[muscles]`, `[load_sharing.muscles]`, a ligament's `tension_only` slack length) by
//! the ratio of their path's length after to before, both in the initial configuration.
//!
//! A body's origin is the joint centre it shares with its parent (`origin = "parent.point"`),
//! so it follows the parent's scaled point; an origin written as coordinates (the root of a
//! chain) stays where it is. Orientations and directions (hinge axes) do not change, as
//! OpenSim's scaling leaves frames' orientations. The scaled model is written by the format's
//! serializer and read back: it is a valid model file.

use std::collections::HashMap;
use std::path::Path;

use mollier_core::registry::Registry;
use mollier_format::{BodySpec, Diagnostic, Diagnostics, InertiaSpec, ModelSpec, ParamValue, PointSpec, UnitsSpec};
use mollier_osim::pose::xyz;
use nalgebra::{Matrix3, UnitQuaternion, Vector3};

use super::placer::place_points;
use super::{
    Factors, MuscleScale, ScaleError, ScaleReport, ScaleSetup, Trials, WrapFactors, factors, inertial, muscle_columns,
    times, to_subject,
};
use crate::compile::{Compiled, compile};
use crate::ik::{point_name, relabel};

/// A scaled Mollier model.
pub struct NativeScaled {
    /// The scaled model.
    pub spec: ModelSpec,
    /// Its file as written (TOML, the format's serializer).
    pub text: String,
    /// The compiled scaled model.
    pub compiled: Compiled,
    /// What the scaling did.
    pub report: ScaleReport,
}

/// The model's initial configuration as written: global positions of its nodes, bodies and
/// points (file length unit) and the bodies' orientations.
struct Placed<'a> {
    spec: &'a ModelSpec,
    angle: f64,
}

impl Placed<'_> {
    fn rotation(&self, b: &BodySpec) -> Matrix3<f64> {
        let l =
            b.orientation.as_ref().and_then(|o| o.euler_parameters(self.angle).ok()).unwrap_or([1.0, 0.0, 0.0, 0.0]);
        *UnitQuaternion::from_quaternion(nalgebra::Quaternion::new(l[0], l[1], l[2], l[3]))
            .to_rotation_matrix()
            .matrix()
    }

    fn origin(&self, b: &BodySpec, depth: usize) -> Option<Vector3<f64>> {
        match &b.origin {
            PointSpec::Coordinates(c) => Some(Vector3::from(*c)),
            PointSpec::Name(n) => self.point(n, depth + 1),
        }
    }

    /// A point by the name the format gives it: a node, a body (its origin) or `body.point`.
    fn point(&self, name: &str, depth: usize) -> Option<Vector3<f64>> {
        // a cycle of names is the reader's to refuse; here it only stops the walk
        if depth > 64 {
            return None;
        }
        if let Some(n) = self.spec.nodes.get(name) {
            return n.position.map(Vector3::from);
        }
        if let Some(b) = self.spec.bodies.get(name) {
            return self.origin(b, depth);
        }
        let (body, point) = name.split_once('.')?;
        let b = self.spec.bodies.get(body)?;
        match b.points.get(point)? {
            PointSpec::Coordinates(c) => Some(self.origin(b, depth)? + self.rotation(b) * Vector3::from(*c)),
            PointSpec::Name(n) => self.point(n, depth + 1),
        }
    }

    /// The body's origin and orientation.
    fn frame(&self, body: &str) -> Option<(Vector3<f64>, Matrix3<f64>)> {
        let b = self.spec.bodies.get(body)?;
        Some((self.origin(b, 0)?, self.rotation(b)))
    }
}

/// The point of the model that a trial's marker `name` is, as `mollier ik` finds it: `body.name`,
/// or a body's point called `name` (or `name` as the OpenSim import renames it) when only one
/// body has one.
pub(super) fn marker_point(spec: &ModelSpec, name: &str) -> Option<String> {
    if name.split_once('.').is_some_and(|(b, p)| spec.bodies.get(b).is_some_and(|b| b.points.get(p).is_some())) {
        return Some(name.to_string());
    }
    let renamed = point_name(name);
    let hits: Vec<String> = spec
        .bodies
        .iter()
        .flat_map(|(b, body)| body.points.iter().map(move |(p, _)| (b, p)))
        .filter(|(_, p)| *p == name || *p == renamed)
        .map(|(b, p)| format!("{b}.{p}"))
        .collect();
    (hits.len() == 1).then(|| hits[0].clone())
}

fn numbers(v: &ParamValue) -> Option<Vec<f64>> {
    match v {
        ParamValue::Number(x) => Some(vec![*x]),
        ParamValue::Array(a) => a.iter().map(|x| if let ParamValue::Number(x) = x { Some(*x) } else { None }).collect(),
        _ => None,
    }
}

fn param<'a>(t: &'a [(String, ParamValue)], key: &str) -> Option<&'a ParamValue> {
    t.iter().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Multiply the numbers of parameter `key` of `t`, one factor per number (cycled).
fn multiply(t: &mut [(String, ParamValue)], key: &str, k: &[f64]) {
    let Some((_, v)) = t.iter_mut().find(|(name, _)| name == key) else { return };
    match v {
        ParamValue::Number(x) => *x *= k[0],
        ParamValue::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                if let ParamValue::Number(x) = x {
                    *x *= k[i % k.len()];
                }
            }
        }
        _ => {}
    }
}

fn vector(t: &[(String, ParamValue)], key: &str) -> Option<Vector3<f64>> {
    numbers(param(t, key)?).filter(|v| v.len() == 3).map(|v| Vector3::new(v[0], v[1], v[2]))
}

/// A wrap surface's or contact ellipsoid's axes in its body (the columns), as the element types
/// read them: `rotation` (X-Y-Z body-fixed angles), or `x_axis` and `y_axis` (made
/// perpendicular), or a cylinder's `axis` as its z axis (its x and y then any pair at right
/// angles to it: a cylinder's radius scales by their mean stretch).
fn shape_axes(t: &[(String, ParamValue)], angle: f64) -> Matrix3<f64> {
    if let Some(a) = vector(t, "rotation") {
        return xyz(&[a[0] * angle, a[1] * angle, a[2] * angle]);
    }
    let unit = |v: Vector3<f64>| v.try_normalize(0.0);
    if let Some(z) = vector(t, "axis").and_then(unit) {
        let least = (0..3).min_by(|&i, &j| z[i].abs().total_cmp(&z[j].abs())).unwrap_or(0);
        let x = (Vector3::ith(least, 1.0) - z * z[least]).normalize();
        return Matrix3::from_columns(&[x, z.cross(&x), z]);
    }
    let x = vector(t, "x_axis").and_then(unit).unwrap_or(Vector3::x());
    let y = vector(t, "y_axis").unwrap_or(Vector3::y());
    let y = unit(y - x * x.dot(&y)).unwrap_or(Vector3::y());
    Matrix3::from_columns(&[x, y, x.cross(&y)])
}

/// Scale a wrap surface or contact ellipsoid `t` (its `type`, else `ellipsoid`) on a body of
/// factors `s`.
fn scale_shape(t: &mut [(String, ParamValue)], s: [f64; 3], angle: f64) {
    let k = WrapFactors::new(&shape_axes(t, angle), s);
    multiply(t, "centre", &s);
    let kind = match param(t, "type") {
        Some(ParamValue::String(k)) => k.clone(),
        _ => "ellipsoid".into(),
    };
    match kind.as_str() {
        "sphere" => multiply(t, "radius", &[k.sphere]),
        "cylinder" => {
            multiply(t, "radius", &[k.radius]);
            multiply(t, "length", &[k.stretch[2]]);
        }
        _ => multiply(t, "semi_axes", &k.stretch),
    }
}

/// A `path-point` element's function of its coordinate times `k` (its outputs).
fn scale_function(f: &mut ParamValue, k: f64) {
    let ParamValue::Table(t) = f else { return };
    for key in ["constant", "linear", "polynomial", "values"] {
        multiply(t, key, &[k]);
    }
}

fn body_param(t: &[(String, ParamValue)]) -> Option<&str> {
    match param(t, "body") {
        Some(ParamValue::String(b)) => Some(b),
        _ => None,
    }
}

fn inertia6(i: &InertiaSpec) -> [f64; 6] {
    let m = i.matrix();
    [m[0][0], m[1][1], m[2][2], m[0][1], m[0][2], m[1][2]]
}

/// The spec scaled by the factors `f` (by body name): its geometry, masses and inertias, with
/// the subject's `mass` in the file's mass unit; fibre lengths are left for [`scale_native`].
/// Meshes named relative to the model's `folder` are named from there (the scaled model is
/// written elsewhere).
fn scale_geometry(
    spec: &ModelSpec,
    folder: &Path,
    f: &HashMap<&str, [f64; 3]>,
    preserve_mass_distribution: bool,
    mass: Option<f64>,
    notes: &mut Vec<String>,
) -> ModelSpec {
    let angle = spec.units.angle_factor();
    let of = |b: &str| f.get(b).copied().unwrap_or([1.0; 3]);
    let mut out = spec.clone();
    for (name, b) in &mut out.bodies.0 {
        let s = of(name);
        for (_, p) in &mut b.points.0 {
            if let PointSpec::Coordinates(c) = p {
                *c = times(*c, s);
            }
        }
        if let Some(PointSpec::Coordinates(c)) = &mut b.com {
            *c = times(*c, s);
        }
        // a bone's mesh with its body, as OpenSim scales a mesh's scale factors
        for g in &mut b.geometry {
            (g.scale, g.offset) = (times(g.scale, s), times(g.offset, s));
            if Path::new(&g.mesh).is_relative() {
                let at = folder.join(&g.mesh);
                g.mesh = std::path::absolute(&at).unwrap_or(at).display().to_string();
            }
        }
        if let Some(m) = b.mass {
            let i = b.inertia.as_ref().map_or([0.0; 6], inertia6);
            let (m, i) = inertial(m, &i, s, !preserve_mass_distribution);
            b.mass = Some(m);
            b.inertia = b.inertia.as_ref().map(|_| InertiaSpec::Moments(i));
        }
    }
    if let Some(k) = mass.and_then(|target| to_subject(out.bodies.iter().filter_map(|(_, b)| b.mass).sum(), target)) {
        for (_, b) in &mut out.bodies.0 {
            b.mass = b.mass.map(|m| m * k);
            if let Some(InertiaSpec::Moments(i)) = &mut b.inertia {
                i.iter_mut().for_each(|v| *v *= k);
            }
        }
    }
    // path points' nodes: their place on the body scaled, then put back in the scaled pose
    let mut carried: HashMap<String, String> = HashMap::new();
    for (_, e) in &mut out.elements.0 {
        let t = &mut e.params.0;
        let Some(body) = body_param(t).map(str::to_string) else {
            if e.kind == "curved-truss"
                && let Some((_, ParamValue::Array(obstacles))) = t.iter_mut().find(|(k, _)| k == "obstacles")
            {
                for o in obstacles {
                    if let ParamValue::Table(o) = o
                        && let Some(b) = body_param(o).map(str::to_string)
                    {
                        scale_shape(o, of(&b), angle);
                    }
                }
            }
            continue;
        };
        let s = of(&body);
        match e.kind.as_str() {
            "surface" | "soft-contact" => scale_shape(t, s, angle),
            "path-point" => {
                multiply(t, "location", &s);
                if let Some((_, ParamValue::Array(fs))) = t.iter_mut().find(|(k, _)| k == "moving") {
                    fs.iter_mut().zip(s).for_each(|(g, k)| scale_function(g, k));
                }
                if let Some(ParamValue::String(node)) = param(t, "point") {
                    carried.insert(node.clone(), body);
                }
            }
            _ => {}
        }
    }
    let snapshot = out.clone();
    let (before, after) = (Placed { spec, angle }, Placed { spec: &snapshot, angle });
    for (name, n) in &mut out.nodes.0 {
        let Some(x) = n.position else { continue };
        let moved = carried.get(name.as_str()).and_then(|b| {
            let ((o0, r), (o1, _)) = (before.frame(b)?, after.frame(b)?);
            let local = times((r.transpose() * (Vector3::from(x) - o0)).into(), of(b));
            Some((o1 + r * Vector3::from(local)).into())
        });
        match moved {
            Some(p) => n.position = Some(p),
            None if spec.fixed.iter().any(|h| h == name) => {}
            None => notes.push(format!("node `{name}` is a point of no body: kept where it is")),
        }
    }
    out
}

/// Each muscle path's length (m) in the initial configuration, by element name.
fn path_lengths(compiled: &Compiled) -> Result<HashMap<String, f64>, crate::analysis::FrameError> {
    let (names, lengths) = muscle_columns(compiled)?;
    Ok(names.into_iter().zip(lengths).collect())
}

/// Read back and compile a scaled model's text (named `file` in messages).
fn compile_text(file: &str, text: &str, registry: &Registry) -> Result<Compiled, ScaleError> {
    let doc = mollier_format::parse_as(file, text, mollier_format::Format::Toml)?;
    Ok(compile(&doc, registry)?)
}

/// The fibre parameters scaled by their paths' ratios `ratio` (by element name), and the rows
/// of the report (m).
fn scale_fibres(spec: &mut ModelSpec, before: &HashMap<String, f64>, after: &HashMap<String, f64>) -> Vec<MuscleScale> {
    let units: UnitsSpec = spec.units;
    let si = |v: f64| units.length_to_si(v);
    let ratio = |e: &str| Some((before.get(e)?, after.get(e)?)).filter(|(l0, _)| **l0 > 0.0);
    let mut rows = Vec::new();
    for (name, m) in &mut spec.muscles.0 {
        let path = m.path.clone().unwrap_or_else(|| name.clone());
        let Some((l0, l1)) = ratio(&path) else { continue };
        let k = l1 / l0;
        m.optimal_fibre_length *= k;
        m.tendon_slack_length *= k;
        m.pee_slack_length = m.pee_slack_length.map(|v| v * k);
        let (optimal_fiber_length, tendon_slack_length) = (si(m.optimal_fibre_length), si(m.tendon_slack_length));
        rows.push(MuscleScale {
            name: name.clone(),
            length_before: *l0,
            length_after: *l1,
            optimal_fiber_length,
            tendon_slack_length,
        });
    }
    let hill: Vec<String> = spec.muscles.iter().map(|(n, m)| m.path.clone().unwrap_or_else(|| n.to_string())).collect();
    if let Some(sharing) = &mut spec.load_sharing {
        for (element, m) in &mut sharing.muscles.0 {
            let Some((l0, l1)) = ratio(element) else { continue };
            let k = l1 / l0;
            m.optimal_length = m.optimal_length.map(|v| v * k);
            m.tendon_slack = m.tendon_slack.map(|v| v * k);
            if let (false, Some(o)) = (hill.contains(element), m.optimal_length) {
                let tendon = m.tendon_slack.map_or(f64::NAN, si);
                rows.push(MuscleScale {
                    name: element.clone(),
                    length_before: *l0,
                    length_after: *l1,
                    optimal_fiber_length: si(o),
                    tendon_slack_length: tendon,
                });
            }
        }
    }
    // a ligament's slack length, as OpenSim scales a Ligament's resting length
    for (name, e) in &mut spec.elements.0 {
        let Some((l0, l1)) = ratio(name) else { continue };
        for (_, law) in e.law.iter_mut().flat_map(|l| l.0.iter_mut()) {
            if let Some(t) = &mut law.tension_only {
                t.slack_length = t.slack_length.map(|v| v * l1 / l0);
            }
        }
    }
    rows
}

/// Scale the compiled Mollier model `before` as `setup` says, the measurements and the marker
/// placement ([`super::placer::place_points`]) on `trials` (markers are the model's points,
/// found as `mollier ik` finds them).
pub fn scale_native(
    before: &Compiled,
    setup: &ScaleSetup,
    trials: Trials,
    registry: &Registry,
) -> Result<NativeScaled, ScaleError> {
    refuse_marker_set(setup)?;
    let trial = trials.measurements;
    let doc = &before.document;
    let spec = doc.spec();
    if spec.load_sharing.as_ref().is_some_and(|l| l.muscle_table.is_some()) {
        return Err(Diagnostics::one(doc.error(
            "load_sharing.muscle_table",
            "the optimal lengths of a muscle table are not scaled with their paths",
            "give the muscles in [load_sharing.muscles], whose lengths `mollier scale` scales",
        ))
        .into());
    }
    let compiled_before = before;
    let units = spec.units;
    let placed = Placed { spec, angle: units.angle_factor() };
    let place = |m: &str| marker_point(spec, m).and_then(|p| placed.point(&p, 0)).map(|x| x * units.length_factor());
    let bodies: Vec<String> = spec.bodies.iter().map(|(b, _)| b.to_string()).collect();
    let mut notes = Vec::new();
    let Factors { f, sources, results: measurements } = factors(&bodies, &place, setup, trial, &mut notes)?;
    let by_name: HashMap<&str, [f64; 3]> = bodies.iter().map(String::as_str).zip(f.iter().copied()).collect();
    let target = setup.mass.map(|kg| kg / units.mass_factor());
    let folder = Path::new(doc.file()).parent().unwrap_or(Path::new(""));
    let mut scaled = scale_geometry(spec, folder, &by_name, setup.preserve_mass_distribution, target, &mut notes);
    let failed = |which| move |error| ScaleError::Failed { which, error };
    let before = path_lengths(compiled_before).map_err(failed(super::UNSCALED))?;
    let written = format!("{} (scaled)", doc.file());
    let shaped = compile_text(&written, &to_text(doc.file(), &scaled)?, registry)?;
    let after = path_lengths(&shaped).map_err(failed(super::SCALED))?;
    let muscles = scale_fibres(&mut scaled, &before, &after);
    let mut text = to_text(doc.file(), &scaled)?;
    let mut compiled = compile_text(&written, &text, registry)?;
    let placement = match (&setup.placer, trials.placement) {
        (Some(p), Some(t)) => {
            let placement = place_points(&mut scaled, &compiled, p, t, registry)?;
            text = to_text(doc.file(), &scaled)?;
            compiled = compile_text(&written, &text, registry)?;
            Some(placement)
        }
        (Some(p), None) => return Err(super::placer_needs_trial(p)),
        _ => None,
    };
    let mass = |s: &ModelSpec| -> Vec<f64> {
        s.bodies.iter().map(|(_, b)| b.mass.unwrap_or(0.0) * s.units.mass_factor()).collect()
    };
    let masses = mass(spec).into_iter().zip(mass(&scaled)).collect();
    let report = ScaleReport { bodies, factors: f, sources, masses, measurements, muscles, notes, placement };
    Ok(NativeScaled { spec: scaled, text, compiled, report })
}

fn to_text(file: &str, spec: &ModelSpec) -> Result<String, ScaleError> {
    mollier_format::to_toml(spec).map_err(|e| {
        ScaleError::Invalid(Diagnostics::one(Diagnostic::new(
            file,
            "",
            format!("the scaled model cannot be written: {e}"),
        )))
    })
}

/// What a setup may ask only of an OpenSim model: its marker set (markers added to an OpenSim
/// model; a Mollier model's markers are its points).
fn refuse_marker_set(setup: &ScaleSetup) -> Result<(), Diagnostics> {
    if setup.marker_set_file.is_none() {
        return Ok(());
    }
    let path = "ScaleTool/GenericModelMaker/marker_set_file";
    let at = setup.marker_set_at.clone().unwrap_or_else(|| Diagnostic::new(&setup.file, path, ""));
    Err(Diagnostics::one(relabel(
        &at,
        "a marker set adds markers to an OpenSim model; a Mollier model's markers are its points",
        "name the points in the measurements (`body.point`) and leave out <marker_set_file>",
    )))
}
