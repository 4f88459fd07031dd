//! The model file as written: one set of serde structs for TOML and JSON.
//!
//! Doc comments here become the descriptions of the JSON Schema (`mollier schema`), so they are
//! written for the people who author model files.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::{FieldError, number_problem};
use crate::sharing::LoadSharingSpec;
use crate::values::{InertiaSpec, Named, ParamTable, PointSpec};

/// The format version this crate reads and writes.
pub const FORMAT_VERSION: u32 = 1;

/// A Mollier model: nodes, bodies and elements, and which coordinates and modes are fixed,
/// driven (inputs) or free.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Mollier model")]
pub struct ModelSpec {
    /// URL or path of this schema, for editors (ignored by Mollier).
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Version of the model-file format the file is written in. This version of Mollier reads 1.
    pub format_version: u32,
    /// A title for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Free text: source of the data, subject, author.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Units of the numbers in this file (SI unless said otherwise). Motion files are always SI.
    #[serde(default)]
    pub units: UnitsSpec,
    /// Held coordinates: a node, body or point name holds all its coordinates (a body: its origin
    /// and its orientation); `name.x` (`y`, `z`, or `l0`..`l3` for orientations) holds one.
    #[serde(default)]
    pub fixed: Vec<String>,
    /// The generalized coordinates (degrees of freedom), in order: a node coordinate such as
    /// `slider.x`, or an element mode such as `shoulder.rotation`. Motion files give one column
    /// for each.
    #[serde(default)]
    pub inputs: Vec<String>,
    /// Released modes, which follow from the motion: `element.mode`, or `element` for all its
    /// modes (a muscle, a ligament). Every other mode is rigid (held at its initial value).
    #[serde(default)]
    pub free: Vec<String>,
    /// Gravitational acceleration `[x, y, z]` in the global frame, in m/s² whatever the file's
    /// length unit (e.g. `[0, -9.81, 0]`). It acts on the bodies' masses. Default: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gravity: Option<[f64; 3]>,
    /// Which way the person faces and which way is up in the global frame, for drawing (the
    /// viewer's front, side and top views): each an axis `x`, `-x`, `y`, `-y`, `z` or `-z`.
    /// Default: OpenSim's and the ISB's, `{ forward = "x", up = "y" }`; the Delft shoulder's
    /// thorax frame (x lateral, y up, z dorsal) is `{ forward = "-z", up = "y" }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<AxesSpec>,
    /// Free-standing nodes: points (`position`) and orientations (`orientation`).
    #[serde(default)]
    pub nodes: Named<NodeSpec>,
    /// Rigid bodies: a frame (origin and orientation) with named points in body coordinates.
    #[serde(default)]
    pub bodies: Named<BodySpec>,
    /// Elements by name; `type` names a registered element type (`mollier types` lists them) and
    /// the other keys are that type's parameters.
    #[serde(default)]
    pub elements: Named<ElementSpec>,
    /// Constant external loads by name: forces at points and moments on bodies, in the global
    /// frame.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub loads: Named<LoadSpec>,
    /// Load sharing for `mollier inverse` and studies: the muscles (PCSA, optimal lengths), sign
    /// constraints on reactions, a joint's stability cone and reserve actuators.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_sharing: Option<LoadSharingSpec>,
    /// Hill-type muscles for forward simulation (`mollier simulate --excitations`), by name: each
    /// acts along the path of an element with an elongation (a `truss` or `curved-truss` listed
    /// in `free`). The model of Chadwick et al. (2014), DAS3.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub muscles: Named<HillMuscleSpec>,
}

/// A Hill-type muscle (Chadwick et al. 2014, App. A): activation dynamics, a contractile element
/// with the Gaussian force-length and two-hyperbola force-velocity curves, pennation at
/// constant volume, and parallel and series elastic elements.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HillMuscleSpec {
    /// The element whose elongation is the muscle-tendon length: default, the element with the
    /// muscle's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Maximum isometric force (N), greater than 0.
    pub max_force: f64,
    /// Optimal fibre length (length unit), greater than 0.
    pub optimal_fibre_length: f64,
    /// Tendon slack length (length unit), greater than 0: the series elastic element pulls
    /// beyond it, with `max_force` at 4 % strain.
    pub tendon_slack_length: f64,
    /// Pennation angle at optimal fibre length (angle unit), in [0, 90°). Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pennation: Option<f64>,
    /// Activation time constant (s), greater than 0. Default 0.015 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_time: Option<f64>,
    /// Deactivation time constant (s), greater than 0. Default 0.060 s.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deactivation_time: Option<f64>,
    /// Slack length of the parallel elastic element (length unit), DAS3's curves only. Default:
    /// the optimal fibre length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pee_slack_length: Option<f64>,
    /// The curves of the muscle's elements: `das3` (default) or `de-groote-fregly-2016`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curves: Option<MuscleCurves>,
    /// Maximum contraction velocity in optimal fibre lengths per second, greater than 0.
    /// Default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_contraction_velocity: Option<f64>,
    /// Tendon strain at which the tendon's force reaches `max_force`, greater than 0. Default
    /// 0.04 (DAS3's), 0.049 (De Groote et al.'s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tendon_strain_at_one_norm_force: Option<f64>,
    /// De Groote et al.'s curves only: the active force-length curve widened about its peak, at
    /// least 1. Default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_force_width_scale: Option<f64>,
    /// De Groote et al.'s curves only: the fibre's damping in `max_force` per normalized fibre
    /// velocity, at least 0. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fiber_damping: Option<f64>,
    /// De Groote et al.'s curves only: fibre strain at which the passive force reaches
    /// `max_force`, greater than 0. Default 0.6.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passive_fiber_strain_at_one_norm_force: Option<f64>,
    /// De Groote et al.'s curves only: steepness of the tanh switch between the activation and
    /// deactivation time constants, greater than 0. Default 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub activation_dynamics_smoothing: Option<f64>,
    /// De Groote et al.'s curves only: leave the passive fibre force out. Default false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignore_passive_fiber_force: Option<bool>,
    /// The tendon: `elastic` (default; the muscle has a contraction state) or `rigid` (at its
    /// slack length: the fibre follows the path and the force is explicit, OpenSim's
    /// `ignore_tendon_compliance`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tendon: Option<TendonKind>,
}

/// The tendon of a muscle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TendonKind {
    /// Elastic: the series elastic element, with the fibre's contraction state.
    #[default]
    Elastic,
    /// Rigid, at its slack length.
    Rigid,
}

/// The curves of a muscle's elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MuscleCurves {
    /// DAS3's (Chadwick et al. 2014, App. A).
    #[default]
    Das3,
    /// OpenSim's `DeGrooteFregly2016Muscle` (De Groote et al. 2016).
    #[serde(rename = "de-groote-fregly-2016")]
    DeGrooteFregly2016,
}

/// Units of the numbers in a model file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitsSpec {
    /// Unit of lengths, positions and offsets: `m` (default), `cm` or `mm`.
    #[serde(default)]
    pub length: LengthUnit,
    /// Unit of angles: `rad` (default) or `deg`.
    #[serde(default)]
    pub angle: AngleUnit,
    /// Unit of masses: `kg` (default) or `g`.
    #[serde(default)]
    pub mass: MassUnit,
}

impl UnitsSpec {
    /// Metres per length unit.
    pub fn length_factor(&self) -> f64 {
        match self.length {
            LengthUnit::M => 1.0,
            LengthUnit::Cm => 0.01,
            LengthUnit::Mm => 0.001,
        }
    }
    /// A length in metres. Divides by the units per metre, so that 10 mm is exactly the double
    /// nearest 0.01 m.
    pub fn length_to_si(&self, v: f64) -> f64 {
        match self.length {
            LengthUnit::M => v,
            LengthUnit::Cm => v / 100.0,
            LengthUnit::Mm => v / 1000.0,
        }
    }
    /// A mass in kilograms (see [`Self::length_to_si`]).
    pub fn mass_to_si(&self, v: f64) -> f64 {
        v / self.mass_units_per_kg()
    }
    /// A moment of inertia (mass unit × length unit²) in kg m², by one division.
    pub fn inertia_to_si(&self, v: f64) -> f64 {
        let per_m = match self.length {
            LengthUnit::M => 1.0,
            LengthUnit::Cm => 100.0,
            LengthUnit::Mm => 1000.0,
        };
        v / (self.mass_units_per_kg() * per_m * per_m)
    }
    /// Mass units per kilogram.
    fn mass_units_per_kg(&self) -> f64 {
        match self.mass {
            MassUnit::Kg => 1.0,
            MassUnit::G => 1000.0,
        }
    }
    /// Radians per angle unit.
    pub fn angle_factor(&self) -> f64 {
        match self.angle {
            AngleUnit::Rad => 1.0,
            AngleUnit::Deg => std::f64::consts::PI / 180.0,
        }
    }
    /// A quantity per length unit (a stiffness in N per length unit, a damping in N s per length
    /// unit) in SI (per metre), by one multiplication by the units per metre.
    pub fn per_length_to_si(&self, v: f64) -> f64 {
        match self.length {
            LengthUnit::M => v,
            LengthUnit::Cm => v * 100.0,
            LengthUnit::Mm => v * 1000.0,
        }
    }
    /// A quantity per angle unit (a stiffness in N m per angle unit) in SI (per radian).
    pub fn per_angle_to_si(&self, v: f64) -> f64 {
        match self.angle {
            AngleUnit::Rad => v,
            AngleUnit::Deg => v * (180.0 / std::f64::consts::PI),
        }
    }
    /// Kilograms per mass unit.
    pub fn mass_factor(&self) -> f64 {
        match self.mass {
            MassUnit::Kg => 1.0,
            MassUnit::G => 0.001,
        }
    }
}

/// The person's forward and up directions in the global frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AxesSpec {
    /// The axis the person faces along.
    pub forward: Axis,
    /// The axis pointing up (against gravity).
    pub up: Axis,
}

impl AxesSpec {
    /// OpenSim's and the ISB's convention: x forward, y up.
    pub const ISB: AxesSpec = AxesSpec { forward: Axis::X, up: Axis::Y };
}

/// A global axis with its sense.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum Axis {
    /// +x.
    #[serde(rename = "x")]
    X,
    /// −x.
    #[serde(rename = "-x")]
    NegX,
    /// +y.
    #[serde(rename = "y")]
    Y,
    /// −y.
    #[serde(rename = "-y")]
    NegY,
    /// +z.
    #[serde(rename = "z")]
    Z,
    /// −z.
    #[serde(rename = "-z")]
    NegZ,
}

impl Axis {
    /// The unit vector `[x, y, z]`.
    pub fn vector(self) -> [f64; 3] {
        match self {
            Axis::X => [1.0, 0.0, 0.0],
            Axis::NegX => [-1.0, 0.0, 0.0],
            Axis::Y => [0.0, 1.0, 0.0],
            Axis::NegY => [0.0, -1.0, 0.0],
            Axis::Z => [0.0, 0.0, 1.0],
            Axis::NegZ => [0.0, 0.0, -1.0],
        }
    }
}

/// Unit of length.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LengthUnit {
    /// Metre.
    #[default]
    M,
    /// Centimetre.
    Cm,
    /// Millimetre.
    Mm,
}

/// Unit of angle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AngleUnit {
    /// Radian.
    #[default]
    Rad,
    /// Degree.
    Deg,
}

/// Unit of mass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MassUnit {
    /// Kilogram.
    #[default]
    Kg,
    /// Gram.
    G,
}

/// A free-standing node: give exactly one of `position` and `orientation`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    /// A point: its initial position `[x, y, z]` in the global frame (file length unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<[f64; 3]>,
    /// An orientation: its initial value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<OrientationSpec>,
}

/// An orientation relative to the global frame: give exactly one of `euler`, `axis` with
/// `angle`, or `matrix`. Omitted, a body's orientation is the global frame's.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrientationSpec {
    /// Euler parameters `[λ0, λ1, λ2, λ3]` (unit quaternion, scalar part `λ0` first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub euler: Option<[f64; 4]>,
    /// Rotation axis `[x, y, z]` (any length but zero), with `angle`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axis: Option<[f64; 3]>,
    /// Rotation angle about `axis` (file angle unit, right-handed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub angle: Option<f64>,
    /// Rotation matrix, rows first: its columns are the body's x, y and z axes in global
    /// coordinates (orthonormal, right-handed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<[[f64; 3]; 3]>,
}

/// Tolerance on the unit norm of Euler parameters and the orthonormality of matrices as typed
/// by hand; within it the value is normalized.
pub const ORIENTATION_TOLERANCE: f64 = 1e-6;

impl OrientationSpec {
    /// The Euler parameters (`λ0` first, unit norm, `λ0 >= 0` for the axis-angle and matrix forms),
    /// with `angle_factor` radians per angle unit.
    pub fn euler_parameters(&self, angle_factor: f64) -> Result<[f64; 4], FieldError> {
        let forms = [self.euler.is_some(), self.axis.is_some() || self.angle.is_some(), self.matrix.is_some()];
        match forms.iter().filter(|f| **f).count() {
            0 => {
                return Err(FieldError::new(
                    "",
                    "an orientation needs a value",
                    "give `euler = [λ0, λ1, λ2, λ3]`, `axis = [x, y, z]` with `angle`, or `matrix`",
                ));
            }
            1 => {}
            _ => {
                return Err(FieldError::new(
                    "",
                    "give only one of `euler`, `axis`/`angle` and `matrix`",
                    "keep the form you trust and delete the others",
                ));
            }
        }
        if let Some(l) = self.euler {
            finite("euler", &l)?;
            let n = l.iter().map(|v| v * v).sum::<f64>().sqrt();
            if (n - 1.0).abs() > ORIENTATION_TOLERANCE {
                return Err(FieldError::new(
                    "euler",
                    format!("Euler parameters must have unit norm, |λ| = {n}"),
                    "write them to 7 significant digits or more, or use `axis` and `angle`",
                ));
            }
            return Ok(l.map(|v| v / n));
        }
        if let Some(m) = self.matrix {
            for (i, r) in m.iter().enumerate() {
                finite(["matrix[0]", "matrix[1]", "matrix[2]"][i], r)?;
            }
            let mut worst: f64 = 0.0;
            for i in 0..3 {
                for j in 0..3 {
                    let dot: f64 = (0..3).map(|k| m[k][i] * m[k][j]).sum();
                    worst = worst.max((dot - if i == j { 1.0 } else { 0.0 }).abs());
                }
            }
            let det = m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1])
                - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
                + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
            if worst > ORIENTATION_TOLERANCE {
                return Err(FieldError::new(
                    "matrix",
                    format!("the rotation matrix is not orthonormal (MᵀM differs from I by {worst:.1e})"),
                    "its columns must be unit vectors at right angles; write them to 7 significant digits or more",
                ));
            }
            if det < 0.0 {
                return Err(FieldError::new(
                    "matrix",
                    "the matrix is a reflection (determinant −1), not a rotation",
                    "make the axes right-handed: z = x × y",
                ));
            }
            return Ok(quat_from_matrix(&m));
        }
        let Some(axis) = self.axis else {
            return Err(FieldError::new("axis", "`angle` needs an `axis`", "add `axis = [x, y, z]`"));
        };
        let Some(angle) = self.angle else {
            return Err(FieldError::new("angle", "`axis` needs an `angle`", "add `angle = ...` (file angle unit)"));
        };
        finite("axis", &axis)?;
        finite("angle", &[angle])?;
        let n = axis.iter().map(|v| v * v).sum::<f64>().sqrt();
        if !(n > 0.0) || !n.is_finite() {
            return Err(FieldError::new("axis", "the rotation axis is zero", "give a direction, e.g. [0, 0, 1]"));
        }
        let (s, c) = (0.5 * angle * angle_factor).sin_cos();
        let q = [c, s * axis[0] / n, s * axis[1] / n, s * axis[2] / n];
        let qn = q.iter().map(|v| v * v).sum::<f64>().sqrt();
        Ok(q.map(|v| v / qn))
    }
}

fn finite(field: &'static str, v: &[f64]) -> Result<(), FieldError> {
    match v.iter().find_map(|x| number_problem(*x)) {
        None => Ok(()),
        Some(m) => Err(FieldError::new(field, m, "replace the value with a finite number (at most 1e15 in magnitude)")),
    }
}

/// Euler parameters of an orthonormal matrix (Shepperd's method), normalized, `λ0 >= 0`.
fn quat_from_matrix(r: &[[f64; 3]; 3]) -> [f64; 4] {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let cands = [tr, r[0][0], r[1][1], r[2][2]];
    let k = (0..4).fold(0, |b, i| if cands[i] > cands[b] { i } else { b });
    let mut q = match k {
        0 => {
            let s = (1.0 + tr).sqrt() * 2.0;
            [0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s]
        }
        1 => {
            let s = (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt() * 2.0;
            [(r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s]
        }
        2 => {
            let s = (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt() * 2.0;
            [(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s]
        }
        _ => {
            let s = (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt() * 2.0;
            [(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s]
        }
    };
    if q[0] < 0.0 {
        q = q.map(|v| -v);
    }
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    q.map(|v| v / n)
}

/// A rigid body: a frame (a position node at its origin and an orientation node) with named
/// points fixed in it. Each point becomes a node joined to the origin by a rigid beam.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BodySpec {
    /// The body's origin: `[x, y, z]` in the global frame (file length unit), or the name of an
    /// existing node or point that the body turns about (a joint centre shared with another body).
    pub origin: PointSpec,
    /// The body's initial orientation (default: aligned with the global frame).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub orientation: Option<OrientationSpec>,
    /// Named points fixed in the body: `[x, y, z]` in body coordinates (file length unit), or the
    /// name of an existing node or point that is attached to this body too. Refer to them
    /// elsewhere as `body.point`.
    #[serde(default)]
    pub points: Named<PointSpec>,
    /// Mass (file mass unit), at the centre of mass. Dynamics uses it; kinematics does not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mass: Option<f64>,
    /// Centre of mass: the name of one of this body's points, or `[x, y, z]` in body coordinates
    /// (file length unit; a node `body.com` is made there). Default: the body's origin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub com: Option<PointSpec>,
    /// Inertia tensor about the centre of mass in body axes (file mass unit × length unit²): a 3x3
    /// matrix or `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inertia: Option<InertiaSpec>,
    /// Meshes that `mollier view` draws for the body (its bones). Drawing only: the mechanics
    /// never reads them. Without one, or when none can be read, the body is drawn as capsules
    /// between its joints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub geometry: Vec<MeshSpec>,
}

/// A mesh drawn for a body: a file, scaled, then moved, in body coordinates.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MeshSpec {
    /// The mesh file, relative to the model file: VTK PolyData with ASCII arrays (`.vtp`, as
    /// OpenSim's models use), Wavefront `.obj`, or `.stl` (binary or ASCII).
    pub mesh: String,
    /// Factors on the file's x, y, z coordinates, which give body coordinates in the model's
    /// length unit (default `[1, 1, 1]`; OpenSim's meshes are in metres).
    #[serde(default = "MeshSpec::unit_scale")]
    pub scale: [f64; 3],
    /// Added after scaling: where the mesh's origin is in body coordinates (length unit;
    /// default `[0, 0, 0]`).
    #[serde(default)]
    pub offset: [f64; 3],
}

impl MeshSpec {
    fn unit_scale() -> [f64; 3] {
        [1.0, 1.0, 1.0]
    }
}

/// An element: its type and that type's parameters (see `mollier types`). Node parameters take
/// node names, body names (the body's origin or orientation, whichever the parameter needs) and
/// `body.point` names.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
pub struct ElementSpec {
    /// The element type, e.g. `truss`, `hinge`, `beam`.
    #[serde(rename = "type")]
    pub kind: String,
    /// A constitutive law for the element's free (or driven) modes, by mode name: linear
    /// springs, dampers and preload (`σ = preload + stiffness·e + damping·ė`). Rigid modes
    /// cannot have one: their stress is a reaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub law: Option<Named<ModeLawSpec>>,
    /// The type's parameters.
    #[serde(flatten)]
    pub params: ParamTable,
}

/// The linear law of one mode (SPACAR's eq. 16, uncoupled): its stress is
/// `preload + stiffness · e + damping · ė`, with `e` the mode's value (zero in the initial
/// configuration). Stresses are forces (N) for modes that are lengths and moments (N m) for
/// angles; the file's length and angle units apply to the "per" part. Omitted values are 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModeLawSpec {
    /// Spring stiffness, at least 0: N per length unit for a length mode, N m per angle unit for
    /// an angle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub stiffness: Option<f64>,
    /// Damping coefficient, at least 0: N s per length unit for a length mode, N m s per angle
    /// unit for an angle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub damping: Option<f64>,
    /// Stress in the initial configuration (N, or N m for an angle): positive is tension for an
    /// elongation, a moment in the positive sense of the mode for an angle.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preload: Option<f64>,
    /// A one-sided smooth spring added to the above, a ligament that pulls but does not push
    /// (Chadwick et al. 2014, eq. 5): `(k/2)(d + √(d² + ε²))` with `d` the stretch beyond slack.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tension_only: Option<TensionOnlySpec>,
    /// Stops at the ends of a free range, added to the above (Chadwick et al. 2014, eq. 4):
    /// `−k₂ (e − min)²` below the range, `k₂ (e − max)²` above it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limits: Option<LimitsSpec>,
    /// OpenSim's `CoordinateLimitForce`, added to the above: beyond either end of a free range a
    /// spring whose stiffness rises to its full value over `transition` by Simbody's quintic
    /// step, and a damping switched on with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinate_limit: Option<CoordinateLimitSpec>,
}

/// A one-sided smooth spring: the stress is `(k/2)(d + √(d² + ε²))`, where `d` is the stretch
/// beyond slack: about `k d` when taut, tending to 0 when slack.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TensionOnlySpec {
    /// `k`, greater than 0: N per length unit (N m per angle unit for an angle).
    pub stiffness: f64,
    /// The slack length (length unit), for a mode that is an elongation of an element with a
    /// length (a truss, a curved truss): `d = length − slack_length`. Give this or `slack`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack_length: Option<f64>,
    /// The value of the mode at which the spring engages (length or angle unit; 0 = the initial
    /// configuration): `d = e − slack`. Give this or `slack_length`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slack: Option<f64>,
    /// `ε`, greater than 0 (length or angle unit): the width of the smooth transition.
    pub epsilon: f64,
}

/// Quadratic stops outside a free range of a mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LimitsSpec {
    /// `[min, max]`: the free range of the mode's value (length or angle unit; 0 = the initial
    /// configuration).
    pub range: [f64; 2],
    /// `k₂`, at least 0: N per length unit² (N m per angle unit² for an angle).
    pub stiffness: f64,
}

/// OpenSim's `CoordinateLimitForce` on one mode, its properties under its names: the stress is
/// `K_up S((e − upper)/t) (e − upper) + K_low S((lower − e)/t) (e − lower) + c (S_up + S_low) ė`
/// with `S(x) = x³ (10 − 15x + 6x²)` on [0, 1] (0 before, 1 beyond). In a file in degrees the
/// numbers are OpenSim's own (N m per degree, degrees); limits are values of the mode (0 = the
/// initial configuration, where OpenSim's are values of the coordinate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoordinateLimitSpec {
    /// The upper end of the free range (length or angle unit).
    pub upper_limit: f64,
    /// The full stiffness above it, at least 0: N per length unit (N m per angle unit).
    #[schemars(range(min = 0.0))]
    pub upper_stiffness: f64,
    /// The lower end of the free range (length or angle unit), at most `upper_limit`.
    pub lower_limit: f64,
    /// The full stiffness below it, at least 0: N per length unit (N m per angle unit).
    #[schemars(range(min = 0.0))]
    pub lower_stiffness: f64,
    /// The full damping outside the range, at least 0: N s per length unit (N m s per angle
    /// unit).
    #[serde(default)]
    #[schemars(range(min = 0.0))]
    pub damping: f64,
    /// The width over which stiffness and damping switch on, greater than 0 (length or angle
    /// unit).
    pub transition: f64,
}

/// A constant load in the global frame: a force at a point, a moment on a body, or both (a
/// wrench at a point of a body).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSpec {
    /// Where it acts: a point (`body.point`, a body's origin by the body's name, or a position
    /// node) for a force; a body (or `body.point`: the moment acts on that body) or an
    /// orientation node for a moment.
    pub at: String,
    /// Force `[x, y, z]` in N, global frame, at the point `at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force: Option<[f64; 3]>,
    /// Moment `[x, y, z]` in N m, global frame, on the body `at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moment: Option<[f64; 3]>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: [f64; 4], b: [f64; 4]) -> bool {
        a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    // 0.7071068 is deliberate: Euler parameters typed to 7 digits are normalized
    #[allow(clippy::approx_constant)]
    #[test]
    fn the_three_orientation_forms_agree() {
        // 90° about z: x → y, y → −x
        let h = std::f64::consts::FRAC_1_SQRT_2;
        let want = [h, 0.0, 0.0, h];
        let aa = OrientationSpec { axis: Some([0.0, 0.0, 2.0]), angle: Some(90.0), ..Default::default() };
        assert!(close(aa.euler_parameters(std::f64::consts::PI / 180.0).unwrap(), want));
        let m = OrientationSpec {
            matrix: Some([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]),
            ..Default::default()
        };
        assert!(close(m.euler_parameters(1.0).unwrap(), want));
        let e = OrientationSpec { euler: Some([0.7071068, 0.0, 0.0, 0.7071068]), ..Default::default() };
        assert!(close(e.euler_parameters(1.0).unwrap(), want));
    }

    #[test]
    fn bad_orientations_name_the_field() {
        let e = OrientationSpec { euler: Some([1.0, 0.1, 0.0, 0.0]), ..Default::default() };
        assert_eq!(e.euler_parameters(1.0).unwrap_err().field, "euler");
        let m = OrientationSpec {
            matrix: Some([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]]),
            ..Default::default()
        };
        assert!(m.euler_parameters(1.0).unwrap_err().message.contains("reflection"));
        let a = OrientationSpec { axis: Some([0.0; 3]), angle: Some(1.0), ..Default::default() };
        assert_eq!(a.euler_parameters(1.0).unwrap_err().field, "axis");
        let b = OrientationSpec { angle: Some(1.0), ..Default::default() };
        assert_eq!(b.euler_parameters(1.0).unwrap_err().field, "axis");
        let two = OrientationSpec { euler: Some([1.0, 0.0, 0.0, 0.0]), angle: Some(1.0), ..Default::default() };
        assert!(two.euler_parameters(1.0).unwrap_err().message.contains("only one"));
    }
}
