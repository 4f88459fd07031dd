//! The `[load_sharing]` section: which elements are muscles and how strong, sign constraints on
//! reactions, a joint's stability cone and reserve actuators (van der Helm 1994, eq. 17-19, "Constraints",
//! App. C). Names are resolved when the model is compiled; here only what needs no model.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::field::FieldError;
use crate::values::Named;

/// Specific tension of muscle when none is given (N/cm²; Chadwick et al. 2014, App. A).
pub const DEFAULT_SPECIFIC_TENSION: f64 = 100.0;
/// Width of the Gaussian force-length relation when none is given (Chadwick et al. 2014, eq. 13).
pub const DEFAULT_WIDTH: f64 = 0.56;
/// How far a joint cone's `axes` may be from orthonormal (rows typed to 4 decimals, as published)
/// before they are refused; within it they are orthonormalised.
pub const AXES_TOLERANCE: f64 = 1e-3;

/// Load sharing (`mollier inverse`, studies): the driving forces of a motion are shared among
/// muscles, elements whose force is unknown, by a criterion chosen for the analysis.
#[derive(Clone, Debug, Default, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LoadSharingSpec {
    /// A muscle table: a CSV file, relative to this model file, with the columns `element` and
    /// `pcsa_cm2` (PCSA, cm²) and optionally `optimal_length_mm` (mm), `tendon_slack_mm` (mm:
    /// then `optimal_length_mm` is the fibres' and the force-length relation takes the fibre
    /// length, the element's length minus the tendon slack) and `muscle` (the muscle the
    /// element belongs to); other columns are notes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub muscle_table: Option<String>,
    /// Muscles by element name (a truss or curved truss whose `elongation` is free), after those
    /// of `muscle_table`.
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub muscles: Named<MuscleSpec>,
    /// Specific tension (N/cm², whatever the file's units): a muscle's maximal force is its PCSA
    /// times this. Default 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub specific_tension: Option<f64>,
    /// Width `W` of the Gaussian force-length relation `exp(−((l − l_opt)/(W l_opt))²)` that scales
    /// the maximal force (Chadwick et al. 2014, eq. 13). Default 0.56; `inf` (TOML) for none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub width: Option<f64>,
    /// Rigid modes (`element.mode`, or an element with one mode) whose reaction may only be
    /// compressive (`σ ≤ 0`): contacts such as SURFACE elements.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compression: Vec<String>,
    /// Rigid modes (`element.mode`, or an element with one mode) whose reaction may only be
    /// tensile (`σ ≥ 0`): ligaments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tension: Vec<String>,
    /// A joint's stability cone (the glenohumeral joint's, van der Helm 1994, App. C): the joint force on
    /// the socket must point into it. Imposed or only reported, as the analysis chooses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_cone: Option<JointConeSpec>,
    /// Reserve actuators: ideal motors on inputs, expensive, so that every frame can be solved;
    /// their use is reported.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reserves: Vec<ReserveSpec>,
}

/// A muscle element.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MuscleSpec {
    /// Physiological cross-sectional area attributed to the element (cm², whatever the file's
    /// units).
    #[schemars(range(min = 0.0))]
    pub pcsa: f64,
    /// Optimal length of the force-length relation (file length unit). Default: the element's
    /// length in the initial configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub optimal_length: Option<f64>,
    /// Tendon slack length (file length unit, default 0): the force-length relation takes the
    /// fibre length, the element's length minus this, and `optimal_length` is the fibres'.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0))]
    pub tendon_slack: Option<f64>,
    /// The muscle the element belongs to, for grouping in outputs (default: the element's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub muscle: Option<String>,
}

/// The axis of the cone frame given by `axes` that points from the joint into the socket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub enum SocketAxis {
    /// `+x`.
    #[serde(rename = "x", alias = "+x")]
    X,
    /// `−x`.
    #[serde(rename = "-x")]
    MinusX,
    /// `+y`.
    #[serde(rename = "y", alias = "+y")]
    Y,
    /// `−y`.
    #[serde(rename = "-y")]
    MinusY,
    /// `+z`.
    #[serde(rename = "z", alias = "+z")]
    Z,
    /// `−z`.
    #[serde(rename = "-z")]
    MinusZ,
}

impl SocketAxis {
    /// The axis (0, 1, 2) and its sign.
    pub fn axis(self) -> (usize, f64) {
        match self {
            SocketAxis::X => (0, 1.0),
            SocketAxis::MinusX => (0, -1.0),
            SocketAxis::Y => (1, 1.0),
            SocketAxis::MinusY => (1, -1.0),
            SocketAxis::Z => (2, 1.0),
            SocketAxis::MinusZ => (2, -1.0),
        }
    }
}

/// The stability cone of a joint: the force that the joint's node exerts on the socket's
/// `elements`, expressed in a frame fixed to `body`, must lie in the elliptic cone about the axis
/// `into_socket` with the two `half_angles`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JointConeSpec {
    /// The joint centre: a point (`body.point`, a body's origin, a position node).
    pub joint: String,
    /// The socket's elements at the joint centre, e.g. the generated beam `scapula.GH` that holds
    /// the point `GH` to the scapula: the force the joint exerts on them is the joint force.
    pub elements: Vec<String>,
    /// The body that carries the socket (or an orientation node).
    pub body: String,
    /// The socket frame's x, y and z axes in body coordinates, one row each (the matrix maps a
    /// body-frame vector to the socket frame, as DAS3's `glenoid_scap`). Orthonormal to 1e-3, then
    /// orthonormalised. Default: the body's axes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<[[f64; 3]; 3]>,
    /// The socket-frame axis that points from the joint centre into the socket: `x`, `-x`, `y`,
    /// `-y`, `z` or `-z`.
    pub into_socket: SocketAxis,
    /// Half-angles of the ellipse (file angle unit, each in (0°, 90°)): towards the axis after
    /// `into_socket` and towards the one after that (for `-x`: y, then z).
    pub half_angles: [f64; 2],
    /// Stability margin `k` in (0, 1] (dimensionless): the force must stay inside `k` times the
    /// half-angles, not merely inside the rim (van der Helm 1994 notes that a force allowed anywhere in
    /// the glenoid underestimates the rotator cuff). Default 1: the rim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0.0, max = 1.0))]
    pub margin: Option<f64>,
}

impl JointConeSpec {
    /// The margin `k`, default 1; an error for one outside (0, 1].
    pub fn margin(&self) -> Result<f64, FieldError> {
        let k = self.margin.unwrap_or(1.0);
        if k.is_finite() && k > 0.0 && k <= 1.0 {
            Ok(k)
        } else {
            Err(FieldError::new(
                "margin",
                format!("the margin must be in (0, 1], found {k}"),
                "give the fraction of the half-angles the force must stay within, e.g. 0.6; 1 is the rim",
            ))
        }
    }

    /// The cone frame in the body frame: column `c` holds cone axis `c` in body coordinates, cone
    /// x pointing into the socket. With `into_socket` = ±axis `k` of `axes` (rows `a`), the cone
    /// axes are `(±a_k, ±a_{k+1}, a_{k+2})`: right-handed, the sign on the first two.
    pub fn rotation(&self) -> Result<[[f64; 3]; 3], FieldError> {
        let rows = match self.axes {
            None => IDENTITY,
            Some(a) => {
                if !a.iter().flatten().all(|v| v.is_finite()) {
                    return Err(FieldError::new(
                        "axes",
                        "numbers must be finite (not nan or inf)",
                        "replace the value with a finite number",
                    ));
                }
                if determinant(&a) < 0.0 {
                    return Err(FieldError::new(
                        "axes",
                        "the axes are left-handed (determinant −1)",
                        "make them right-handed: the third row is the cross product of the first two",
                    ));
                }
                nearest_rotation(&a, AXES_TOLERANCE).ok_or_else(|| {
                    FieldError::new(
                        "axes",
                        format!(
                            "the axes are not orthonormal (off by {:.1e}, more than {AXES_TOLERANCE})",
                            orthonormality_error(&a)
                        ),
                        "give three unit vectors at right angles, one row each (to 4 decimals or more)",
                    )
                })?
            }
        };
        let (k, s) = self.into_socket.axis();
        let row = |i: usize, sign: f64| rows[i % 3].map(|v| sign * v);
        let cone = [row(k, s), row(k + 1, s), row(k + 2, 1.0)];
        Ok([0, 1, 2].map(|i| [0, 1, 2].map(|c| cone[c][i])))
    }

    /// The half-angles in radians, with `angle_factor` radians per angle unit.
    pub fn half_angles_rad(&self, angle_factor: f64) -> Result<[f64; 2], FieldError> {
        let rad = self.half_angles.map(|a| a * angle_factor);
        if rad.iter().all(|a| *a > 0.0 && *a < std::f64::consts::FRAC_PI_2) {
            Ok(rad)
        } else {
            Err(FieldError::new(
                "half_angles",
                format!("half-angles must be between 0° and 90°, found {:?} (file angle unit)", self.half_angles),
                "give the ellipse's two half-angles in the file's angle unit (`units.angle`), e.g. [44.37, 38.55] in degrees",
            ))
        }
    }
}

/// A reserve actuator: an ideal motor on one input whose driving force `r` costs `weight · r²`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReserveSpec {
    /// The input, as written in `inputs`.
    pub input: String,
    /// Cost per squared driving force (per (N m)² for an angle, per N² for a length), in the
    /// criterion's units; make it large, so that muscles are preferred.
    #[schemars(range(min = 0.0))]
    pub weight: f64,
}

const IDENTITY: [[f64; 3]; 3] = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

fn determinant(r: &[[f64; 3]; 3]) -> f64 {
    r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
        + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0])
}

/// The largest deviation of `r` from a proper rotation: `max |rᵀr − I|`, and `|det r − 1|`.
pub fn orthonormality_error(r: &[[f64; 3]; 3]) -> f64 {
    let mut e: f64 = 0.0;
    for i in 0..3 {
        for j in 0..3 {
            let dot: f64 = (0..3).map(|k| r[k][i] * r[k][j]).sum();
            e = e.max((dot - IDENTITY[i][j]).abs());
        }
    }
    e.max((determinant(r) - 1.0).abs())
}

/// The rotation nearest to `r` (polar decomposition by Newton's iteration `R ← (R + R⁻ᵀ)/2`), for
/// matrices published to a few decimals. `None` if `r` is far from a rotation (an orthonormality
/// error above `tol`), singular or not finite.
pub fn nearest_rotation(r: &[[f64; 3]; 3], tol: f64) -> Option<[[f64; 3]; 3]> {
    if !r.iter().flatten().all(|v| v.is_finite()) || orthonormality_error(r) > tol {
        return None;
    }
    let mut m = *r;
    for _ in 0..50 {
        let inv_t = inverse_transpose(&m)?;
        let next = [0, 1, 2].map(|i| [0, 1, 2].map(|j| 0.5 * (m[i][j] + inv_t[i][j])));
        let change = (0..3).flat_map(|i| (0..3).map(move |j| (i, j))).map(|(i, j)| (next[i][j] - m[i][j]).abs());
        let change = change.fold(0.0, f64::max);
        m = next;
        if change < 1e-15 {
            break;
        }
    }
    (orthonormality_error(&m) < 1e-12).then_some(m)
}

fn inverse_transpose(m: &[[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    // the cofactor matrix divided by the determinant
    let c = |i: usize, j: usize| {
        let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
        let (j1, j2) = ((j + 1) % 3, (j + 2) % 3);
        m[i1][j1] * m[i2][j2] - m[i1][j2] * m[i2][j1]
    };
    let cof = [0, 1, 2].map(|i| [0, 1, 2].map(|j| c(i, j)));
    let det = m[0][0] * cof[0][0] + m[0][1] * cof[0][1] + m[0][2] * cof[0][2];
    if det.abs() < 1e-300 {
        return None;
    }
    Some(cof.map(|row| row.map(|v| v / det)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rot_z(t: f64) -> [[f64; 3]; 3] {
        let (s, c) = t.sin_cos();
        [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]
    }

    #[test]
    fn nearest_rotation_of_a_rounded_matrix() {
        // a rotation about (1, 2, 3) by 0.9 rad, Rodrigues
        let n = (14f64).sqrt();
        let u = [1.0 / n, 2.0 / n, 3.0 / n];
        let (s, c) = 0.9f64.sin_cos();
        let k = 1.0 - c;
        let r = [
            [c + u[0] * u[0] * k, u[0] * u[1] * k - u[2] * s, u[0] * u[2] * k + u[1] * s],
            [u[1] * u[0] * k + u[2] * s, c + u[1] * u[1] * k, u[1] * u[2] * k - u[0] * s],
            [u[2] * u[0] * k - u[1] * s, u[2] * u[1] * k + u[0] * s, c + u[2] * u[2] * k],
        ];
        let rounded = r.map(|row| row.map(|v| (v * 1e4).round() / 1e4));
        assert!(orthonormality_error(&rounded) > 1e-6);
        let m = nearest_rotation(&rounded, 1e-3).unwrap();
        assert!(orthonormality_error(&m) < 1e-13);
        // within the rounding of the original
        assert!(m.iter().flatten().zip(r.iter().flatten()).all(|(a, b)| (a - b).abs() < 1e-4));
        // a sheared matrix, a non-finite one are refused
        let mut bad = r;
        bad[0][0] += 0.1;
        assert!(nearest_rotation(&bad, 1e-3).is_none());
        assert!(nearest_rotation(&[[f64::NAN; 3]; 3], 1e-3).is_none());
    }

    fn cone(axes: Option<[[f64; 3]; 3]>, into: SocketAxis) -> JointConeSpec {
        JointConeSpec {
            joint: "j".into(),
            elements: vec!["e".into()],
            body: "b".into(),
            axes,
            into_socket: into,
            half_angles: [30.0, 20.0],
            margin: None,
        }
    }

    #[test]
    fn the_cone_frame_points_into_the_socket_and_is_right_handed() {
        let a = rot_z(0.3);
        for (into, want) in [
            // cone axes (columns) in body coordinates: the rows of `axes`, signed
            (SocketAxis::X, [a[0], a[1], a[2]]),
            (SocketAxis::MinusX, [a[0].map(|v| -v), a[1].map(|v| -v), a[2]]),
            (SocketAxis::Y, [a[1], a[2], a[0]]),
            (SocketAxis::MinusZ, [a[2].map(|v| -v), a[0].map(|v| -v), a[1]]),
        ] {
            let r = cone(Some(a), into).rotation().unwrap();
            for c in 0..3 {
                for i in 0..3 {
                    assert!((r[i][c] - want[c][i]).abs() < 1e-15, "{into:?}: column {c}");
                }
            }
            assert!((determinant(&r) - 1.0).abs() < 1e-14, "{into:?}");
        }
        assert_eq!(cone(None, SocketAxis::X).rotation().unwrap(), IDENTITY);
    }

    #[test]
    fn bad_cones_name_the_field() {
        let mirror = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, -1.0]];
        let e = cone(Some(mirror), SocketAxis::X).rotation().unwrap_err();
        assert!(e.field == "axes" && e.message.contains("left-handed"), "{e:?}");
        let sheared = [[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        assert!(cone(Some(sheared), SocketAxis::X).rotation().unwrap_err().message.contains("orthonormal"));
        let deg = std::f64::consts::PI / 180.0;
        assert!(cone(None, SocketAxis::X).half_angles_rad(deg).is_ok());
        let mut c = cone(None, SocketAxis::X);
        c.half_angles = [30.0, 95.0];
        assert_eq!(c.half_angles_rad(deg).unwrap_err().field, "half_angles");
        // 30 rad is not an angle of a cone either
        c.half_angles = [30.0, 20.0];
        assert!(c.half_angles_rad(1.0).is_err());
        assert_eq!(c.margin(), Ok(1.0));
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            c.margin = Some(bad);
            assert_eq!(c.margin().unwrap_err().field, "margin", "{bad}");
        }
        c.margin = Some(0.6);
        assert_eq!(c.margin(), Ok(0.6));
    }
}
