//! The two joint coordinate systems of a joint model (report §2.1.1: one fixed in element `i`, the
//! fixed member, one in element `j`, the moving member) and their relative rotation
//! ```text
//! R_ab = n_a^i · n_b^j      (a, b ∈ {x, y, z})
//! ```
//! the components of the moving joint frame's axes in the fixed one (its columns are `n_b^j`).
//! The frames are given in the global frame of the initial configuration and stored in the two
//! nodes' body frames at initialization, so that they move with their members.
//!
//! Every `R_ab` is a quadratic form in each set of Euler parameters; the angles built from them
//! (ratios under `atan2`) are homogeneous of degree 0, as the kernel needs while its Euler
//! parameters are not exactly unit during Newton iterations.

use mollier_core::element::{Drawing, ElementError, NodeKind};
use mollier_core::geometry::{Quat, Vec3, column, dot, lift, quat_at, quat_conjugate, rotate, triad};
use mollier_core::registry::{ParamDoc, ParamError, ParamKind, Params};
use mollier_core::scalar::Real;
use mollier_core::{NodeId, Order};

use crate::term::{FIXED, MOVING, N, Term};

/// The joint frames as given in a model file: `z` and `x` directions of each frame in the global
/// frame of the initial configuration (unitless; the part of `x` perpendicular to `z` is used,
/// `y = z × x`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FrameSpec {
    /// z axis of the fixed member's joint frame.
    pub fixed_z: Vec3,
    /// x axis of the fixed member's joint frame.
    pub fixed_x: Vec3,
    /// z axis of the moving member's joint frame.
    pub moving_z: Vec3,
    /// x axis of the moving member's joint frame.
    pub moving_x: Vec3,
}

impl FrameSpec {
    /// Both joint frames equal (`z`, `x`): the joint is in its neutral position initially.
    pub fn coincident(z: Vec3, x: Vec3) -> Self {
        Self { fixed_z: z, fixed_x: x, moving_z: z, moving_x: x }
    }

    /// Read `fixed_z`, `fixed_x` (required) and `moving_z`, `moving_x` (optional, both or
    /// neither; default: the fixed frame) from a model file's element table.
    pub fn read(p: &Params<'_>) -> Result<Self, ParamError> {
        let (fixed_z, fixed_x) = axis_pair(p, "fixed_z", "fixed_x")?;
        let (mz, mx) = (p.get("moving_z").is_some(), p.get("moving_x").is_some());
        if mz != mx {
            let (given, missing) = if mz { ("moving_z", "moving_x") } else { ("moving_x", "moving_z") };
            return Err(ParamError::new(
                p.path(missing),
                format!("missing: `{given}` is given, so `{missing}` must be too"),
            )
            .with_hint("give both moving axes, or neither for joint frames that coincide initially"));
        }
        let (moving_z, moving_x) = if mz { axis_pair(p, "moving_z", "moving_x")? } else { (fixed_z, fixed_x) };
        Ok(Self { fixed_z, fixed_x, moving_z, moving_x })
    }
}

/// The two members a joint joins, `fixed` and `moving`: orientation nodes (or bodies).
pub fn members(p: &Params<'_>) -> Result<(NodeId, NodeId), ParamError> {
    Ok((p.node("fixed", NodeKind::Orientation)?, p.node("moving", NodeKind::Orientation)?))
}

/// The documentation of `fixed` ([`members`]), required, `doc` saying which member it is.
pub const fn fixed_doc(doc: &'static str) -> ParamDoc {
    member_doc("fixed", doc)
}

/// The documentation of `moving` ([`members`]), required, `doc` saying which member it is.
pub const fn moving_doc(doc: &'static str) -> ParamDoc {
    member_doc("moving", doc)
}

const fn member_doc(name: &'static str, doc: &'static str) -> ParamDoc {
    ParamDoc { name, kind: ParamKind::Node(NodeKind::Orientation), required: true, doc }
}

/// The direction `key` of an element's table (unitless, in the global frame of the initial
/// configuration); an error at `key` where it is zero.
pub fn direction(p: &Params<'_>, key: &str) -> Result<Vec3, ParamError> {
    let v = p.vector(key)?;
    if v.iter().all(|a| *a == 0.0) {
        return Err(ParamError::new(p.path(key), "the direction must not be zero"));
    }
    Ok(v)
}

/// A joint frame's `z` and `x` directions, [`direction`]s `z_key` and `x_key`; an error at
/// `x_key` where they are parallel (no frame).
pub fn axis_pair(p: &Params<'_>, z_key: &str, x_key: &str) -> Result<(Vec3, Vec3), ParamError> {
    let (z, x) = (direction(p, z_key)?, direction(p, x_key)?);
    if triad(&z, Some(&x)).is_none() {
        return Err(ParamError::new(p.path(x_key), format!("must not be parallel to `{z_key}`")));
    }
    Ok((z, x))
}

/// Axes (x, y, z) of the right-handed frame with `z ∥ z_axis` and x from `x_hint`.
fn axes(z_axis: &Vec3, x_hint: &Vec3, which: &str) -> Result<[Vec3; 3], ElementError> {
    // triad's columns are (z, x⊥, z × x⊥ = y)
    let t = triad(z_axis, Some(x_hint)).ok_or_else(|| {
        ElementError::Degenerate(format!("the {which} joint frame: its z axis is zero or its x axis is parallel to it"))
    })?;
    Ok([column(&t, 1), column(&t, 2), column(&t, 0)])
}

fn unit_quat(l: Quat) -> Option<Quat> {
    let n = l.iter().map(|v| v * v).sum::<f64>().sqrt();
    (n > 0.0 && n.is_finite()).then(|| l.map(|v| v / n))
}

/// The joint frames' axes in the two nodes' body frames.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointFrames {
    /// Fixed joint frame axes (x, y, z) in the fixed node's body frame.
    pub fixed: [Vec3; 3],
    /// Moving joint frame axes (x, y, z) in the moving node's body frame.
    pub moving: [Vec3; 3],
}

impl JointFrames {
    /// The frames of `spec` carried into the body frames of the nodes at local coordinates `x0`
    /// (8: the fixed node's Euler parameters, then the moving node's).
    pub fn new(spec: &FrameSpec, x0: &[f64]) -> Result<Self, ElementError> {
        if x0.len() != N {
            return Err(ElementError::Degenerate(format!("expected {N} local coordinates, found {}", x0.len())));
        }
        let jf = axes(&spec.fixed_z, &spec.fixed_x, "fixed")?;
        let jm = axes(&spec.moving_z, &spec.moving_x, "moving")?;
        let zero = || ElementError::Degenerate("an orientation node has zero Euler parameters".into());
        let lf = unit_quat(quat_at(x0, FIXED)).ok_or_else(zero)?;
        let lm = unit_quat(quat_at(x0, MOVING)).ok_or_else(zero)?;
        // the body vector b with R(λ) b = a: rotate by the conjugate
        let body = |l: &Quat, a: &Vec3| rotate(&quat_conjugate(l), a);
        Ok(Self { fixed: jf.map(|a| body(&lf, &a)), moving: jm.map(|a| body(&lm, &a)) })
    }

    /// `R_ab` at local coordinates `x` (8), generic over the scalar.
    pub fn relative<T: Real>(&self, x: &[T]) -> Result<[[T; 3]; 3], ElementError> {
        check_len(x.len())?;
        let (lf, lm) = (quat_at(x, FIXED), quat_at(x, MOVING));
        let nf = self.fixed.map(|a| rotate(&lf, &lift(&a)));
        let nm = self.moving.map(|b| rotate(&lm, &lift(&b)));
        Ok(std::array::from_fn(|a| std::array::from_fn(|b| dot(&nf[a], &nm[b]))))
    }

    /// `R_ab` as a [`Term`] with derivatives up to `order`.
    pub fn entry(&self, x: &[f64], a: usize, b: usize, order: Order) -> Term {
        Term::product(x, &self.fixed[a], &self.moving[b], order)
    }

    /// The fixed joint frame's axes (x, y, z) in global components at local coordinates `x`
    /// (normalized Euler parameters), e.g. to express a torque globally.
    pub fn fixed_axes(&self, x: &[f64]) -> Result<[Vec3; 3], ElementError> {
        global_axes(&self.fixed, x, FIXED, "fixed")
    }

    /// The moving joint frame's axes (x, y, z) in global components at local coordinates `x`.
    pub fn moving_axes(&self, x: &[f64]) -> Result<[Vec3; 3], ElementError> {
        global_axes(&self.moving, x, MOVING, "moving")
    }

    /// The two z axes, fixed then moving, drawn as [`axes_drawing`] draws them: a joint whose
    /// posture is the moving z axis seen in the fixed frame (a bending, a swing) shows it so.
    pub fn z_axes_drawing(&self, x: &[f64]) -> Drawing {
        axes_drawing(self.fixed_axes(x).and_then(|f| Ok([f[2], self.moving_axes(x)?[2]])))
    }
}

fn global_axes(body: &[Vec3; 3], x: &[f64], at: usize, which: &str) -> Result<[Vec3; 3], ElementError> {
    check_len(x.len())?;
    let l = unit_quat(quat_at(x, at))
        .ok_or_else(|| ElementError::Domain(format!("the {which} member's Euler parameters are zero")))?;
    Ok(body.map(|a| rotate(&l, &a)))
}

/// What a viewer draws for a joint of two orientations ([`ElementInfo::drawing`]): each
/// direction (global components) as a segment of unit length centred on the global origin.
/// The joint has no position of its own: the viewer moves the segments to the joint and
/// scales them (docs/viewer.md). Nothing when the directions cannot be had (zero Euler
/// parameters).
///
/// [`ElementInfo::drawing`]: mollier_core::element::ElementInfo::drawing
pub fn axes_drawing<const K: usize>(axes: Result<[Vec3; K], ElementError>) -> Drawing {
    let lines = axes
        .map(|axes| {
            axes.iter()
                .map(|a| {
                    let half = a.map(|v| 0.5 * v / dot(a, a).sqrt());
                    vec![half.map(|v| -v), half]
                })
                .collect()
        })
        .unwrap_or_default();
    Drawing { lines, shapes: Vec::new() }
}

/// `Ok` where an element is given its [`N`] local coordinates (two sets of Euler parameters),
/// else the error that says how many it was given (`n`).
pub fn check_len(n: usize) -> Result<(), ElementError> {
    if n == N { Ok(()) } else { Err(ElementError::Other(format!("expected {N} local coordinates, found {n}"))) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::geometry::{quat_from_axis_angle, quat_mul};

    #[test]
    fn relative_rotation_is_the_moving_frame_in_the_fixed_one() {
        // fixed frame: z = global y, x = global z; moving frame initially equal
        let spec = FrameSpec::coincident([0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
        let lf = quat_from_axis_angle(&[0.3, -0.4, 0.5], 0.7);
        let x0: Vec<f64> = lf.iter().chain(lf.iter()).copied().collect();
        let f = JointFrames::new(&spec, &x0).unwrap();
        let r0 = f.relative(&x0).unwrap();
        for a in 0..3 {
            for b in 0..3 {
                assert!((r0[a][b] - f64::from(u8::from(a == b))).abs() < 1e-15);
            }
        }
        // turn the moving member by 0.4 rad about the fixed joint frame's y axis (global, after lf)
        let y_global = rotate(&lf, &f.fixed[1]);
        let lm = quat_mul(&quat_from_axis_angle(&y_global, 0.4), &lf);
        let x: Vec<f64> = lf.iter().chain(lm.iter()).copied().collect();
        let r = f.relative(&x).unwrap();
        let (s, c) = 0.4f64.sin_cos();
        let want = [[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]];
        for a in 0..3 {
            for b in 0..3 {
                assert!((r[a][b] - want[a][b]).abs() < 1e-15, "{a}{b}: {} {}", r[a][b], want[a][b]);
                assert!((f.entry(&x, a, b, Order::Value).v - r[a][b]).abs() < 1e-15);
            }
        }
        // the moving frame's z axis, turned with it, drawn as a unit segment about the origin
        let zm = f.moving_axes(&x.iter().map(|v| 3.0 * v).collect::<Vec<_>>()).unwrap()[2];
        let want = rotate(&lm, &rotate(&[lf[0], -lf[1], -lf[2], -lf[3]], &[0.0, 1.0, 0.0]));
        assert!((0..3).all(|k| (zm[k] - want[k]).abs() < 1e-15), "{zm:?} vs {want:?}");
        let d = axes_drawing(f.moving_axes(&x).map(|a| [a[2]]));
        assert!(
            (0..3).all(|k| (d.lines[0][1][k] - 0.5 * want[k]).abs() < 1e-15 && d.lines[0][0][k] == -d.lines[0][1][k])
        );
        assert!(axes_drawing(f.moving_axes(&[0.0; 8])).lines.is_empty());
        assert!(JointFrames::new(&FrameSpec::coincident([0.0; 3], [1.0, 0.0, 0.0]), &x0).is_err());
        assert!(JointFrames::new(&spec, &[0.0; 8]).is_err());
        assert!(f.relative(&[1.0; 7]).is_err());
    }
}
