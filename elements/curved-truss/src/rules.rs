//! OpenSim's wrapping rules, where they differ from Mollier's own, chosen per obstacle
//! ([`Rules`]): the stretch an obstacle acts on chosen at each posture among a range of
//! segments, and an anchor inside an obstacle giving the straight line instead of an error.
//!
//! OpenSim (`GeometryPath::applyWrapObjects`) tries the stretches of a `PathWrap`'s range in order
//! and wraps the first whose straight line passes through the object (a cylinder, an ellipsoid;
//! for a sphere, or a one-sided cylinder whose line does not pass through, the wrapping stretch
//! it lengthens least). Mollier does the same over the segments between its fixed points; OpenSim
//! also counts the tangent points of the wrap objects met before as path points, which only
//! matters where two obstacles of a range act on one segment. Where the choice changes, the
//! length jumps, as OpenSim's does.

use std::borrow::Cow;

use mollier_core::element::ElementError;
use mollier_core::geometry::{Quat, Vec3, dot, quat_at, sub, vec3_at};

use crate::*;

/// How an obstacle is applied where OpenSim's rules and Mollier's differ.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Rules {
    /// The last segment the obstacle may act on; `None`: only [`Obstacle::segment`]. With a
    /// range, the obstacle acts at each posture on the first segment from `segment` to
    /// `last_segment` whose straight line passes through it; if none does, on the one where its
    /// span wraps with the least lengthening (a sphere; a cylinder with a `side`); else on none.
    pub last_segment: Option<usize>,
    /// An anchor inside the obstacle gives the straight span (OpenSim's rule) instead of an
    /// error (Mollier's: a path cannot start inside an obstacle).
    pub straight_inside: bool,
    /// The path over a cylinder (alone on its segment) or an ellipsoid.
    pub cylinder: CylinderPath,
    /// An ellipsoid's OpenSim quadrant (its own axis 0, 1 or 2 and the sign of the side the
    /// path keeps to), with OpenSim's path only; `None`: all.
    pub quadrant: Option<crate::opensim::Quadrant>,
}

/// Which path a cylinder or an ellipsoid gives (see [`crate::opensim`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CylinderPath {
    /// The shortest path (Mollier's).
    #[default]
    Shortest,
    /// OpenSim's, for a finite cylinder or an ellipsoid; a cylinder's `side`, when given, is
    /// OpenSim's quadrant (along the cylinder's own x or y axis). `several`: the muscle has
    /// several wrap objects, and OpenSim adjusts a cylinder's tangent points.
    OpenSim {
        /// The muscle's path has several wrap objects.
        several: bool,
    },
}

impl CurvedTruss {
    /// Apply `rules` to obstacle `k` (in the order given to [`CurvedTruss::new`]).
    pub fn with_rules(mut self, k: usize, rules: Rules) -> Result<Self, ElementError> {
        let nseg = self.segments.len();
        let pl = self.obstacles.get_mut(k).ok_or_else(|| ElementError::Degenerate(format!("no obstacle {k}")))?;
        if let Some(last) = rules.last_segment {
            if !(last >= pl.obstacle.segment && last < nseg) {
                return Err(ElementError::Degenerate(format!(
                    "obstacle {k}: its last segment {last} must be from its segment {} to {}",
                    pl.obstacle.segment,
                    nseg - 1
                )));
            }
            // chosen at each posture, no longer fixed to its first segment
            self.segments[pl.obstacle.segment].retain(|&j| j != k);
        }
        if rules.cylinder != CylinderPath::Shortest {
            match pl.obstacle.shape {
                Shape::Cylinder { length: Some(_), side, .. } if quadrant(&side).is_some() => {}
                Shape::Ellipsoid { .. } => {}
                _ => {
                    return Err(ElementError::Degenerate(format!(
                        "obstacle {k}: OpenSim's path is for an ellipsoid or a cylinder with a length, and a side (if any) along its own x or y axis"
                    )));
                }
            }
        }
        let ellipsoid =
            matches!(pl.obstacle.shape, Shape::Ellipsoid { .. }) && rules.cylinder != CylinderPath::Shortest;
        if rules.quadrant.is_some_and(|(axis, sign)| !ellipsoid || axis > 2 || sign.abs() != 1.0) {
            return Err(ElementError::Degenerate(format!(
                "obstacle {k}: a quadrant is for an ellipsoid with OpenSim's path, along its own x, y or z axis"
            )));
        }
        pl.rules = rules;
        Ok(self)
    }

    /// The obstacles of each segment at `x`, in the order given: the fixed ones, and each with a
    /// range on the segment [`Rules`] chooses there.
    pub(crate) fn assign(&self, x: &[f64]) -> Result<Cow<'_, [Vec<usize>]>, ElementError> {
        if self.obstacles.iter().all(|pl| pl.rules.last_segment.is_none()) {
            return Ok(Cow::Borrowed(&self.segments));
        }
        let mut segs = self.segments.clone();
        for (k, pl) in self.obstacles.iter().enumerate() {
            let Some(last) = pl.rules.last_segment else { continue };
            if let Some(si) = self.choose(k, pl.obstacle.segment, last, x)? {
                segs[si].push(k);
                segs[si].sort_unstable();
            }
        }
        Ok(Cow::Owned(segs))
    }

    /// The segment from `first` to `last` that obstacle `k` acts on at `x`, if any.
    fn choose(&self, k: usize, first: usize, last: usize, x: &[f64]) -> Result<Option<usize>, ElementError> {
        let pl = &self.obstacles[k];
        let lam: Quat = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let mut best: Option<(f64, usize)> = None;
        for si in first..=last {
            let (xa, xb) = (vec3_at(x, self.points[si]), vec3_at(x, self.points[si + 1]));
            let (pa, pb) = (pl.obstacle.frame.local(&lam, &o, &xa), pl.obstacle.frame.local(&lam, &o, &xb));
            if let Some(obj) = pl.opensim() {
                // OpenSim's codes (its own test of an anchor inside included): the first stretch
                // it must wrap, else the least lengthening
                match obj.wrap(&pa, &pb) {
                    (crate::opensim::Code::Mandatory, Some(_)) => return Ok(Some(si)),
                    (crate::opensim::Code::Wrapped, Some(w)) => {
                        let change = w.length - dot(&sub(&xb, &xa), &sub(&xb, &xa)).sqrt();
                        if best.is_none_or(|(c, _)| change < c) {
                            best = Some((change, si));
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if inside(&pl.obstacle.shape, &pa) || inside(&pl.obstacle.shape, &pb) {
                continue;
            }
            let through = passes_through(&pl.obstacle.shape, &pa, &pb);
            if through && !matches!(pl.obstacle.shape, Shape::Sphere { .. }) {
                return Ok(Some(si));
            }
            if through || matches!(pl.obstacle.shape, Shape::Cylinder { side: Side::Toward(_), .. }) {
                let mut ev = span::SpanEval::default();
                let mut st = PathState::default();
                self.state_for(&mut st);
                self.span(k, x, &xa, &xb, &mut st, false, true, &mut ev)?;
                if ev.wrap.is_some() {
                    let change = ev.length - dot(&sub(&xb, &xa), &sub(&xb, &xa)).sqrt();
                    if best.is_none_or(|(c, _)| change < c) {
                        best = Some((change, si));
                    }
                }
            }
        }
        Ok(best.map(|(_, si)| si))
    }
}

impl Placed {
    /// The obstacle as OpenSim's wrap object, where it takes OpenSim's path: a cylinder with a
    /// length, or an ellipsoid, with [`CylinderPath::OpenSim`].
    pub(crate) fn opensim(&self) -> Option<crate::opensim::Object> {
        let CylinderPath::OpenSim { several } = self.rules.cylinder else { return None };
        match self.obstacle.shape {
            Shape::Cylinder { radius, side, length: Some(length) } => {
                Some(crate::opensim::Object::Cylinder { radius, length, quadrant: quadrant(&side).flatten(), several })
            }
            Shape::Ellipsoid { semi_axes } => {
                Some(crate::opensim::Object::Ellipsoid { semi_axes, quadrant: self.rules.quadrant })
            }
            _ => None,
        }
    }
}

/// A cylinder's `side` as OpenSim's quadrant: `Some(None)` for either side, `Some(Some((axis,
/// sign)))` for a side along the cylinder frame's x (0) or y (1) axis, `None` for another side.
pub(crate) fn quadrant(side: &Side) -> Option<Option<crate::opensim::Quadrant>> {
    match *side {
        Side::Either => Some(None),
        Side::Toward([x, y]) if y.abs() < 1e-12 => Some(Some((0, x.signum()))),
        Side::Toward([x, y]) if x.abs() < 1e-12 => Some(Some((1, y.signum()))),
        Side::Toward(_) => None,
    }
}

/// Whether the point `p` (obstacle frame) is inside the shape (a cylinder: within its radius of
/// the axis, between its ends when it has a length).
pub(crate) fn inside(shape: &Shape, p: &Vec3) -> bool {
    match *shape {
        Shape::Sphere { radius } => dot(p, p) < radius * radius,
        Shape::Cylinder { radius, length, .. } => {
            p[0].hypot(p[1]) < radius && length.is_none_or(|l| p[2].abs() <= 0.5 * l)
        }
        Shape::Ellipsoid { semi_axes: d } => (0..3).map(|i| (p[i] / d[i]).powi(2)).sum::<f64>() < 1.0,
    }
}

/// Whether the straight line from `a` to `b` (obstacle frame, both outside) passes through the
/// shape, as OpenSim tests it: a sphere or ellipsoid where the segment meets its surface; a
/// cylinder where the segment's nearest point to the (infinite) axis is within the radius.
pub(crate) fn passes_through(shape: &Shape, a: &Vec3, b: &Vec3) -> bool {
    // in coordinates where the shape is the unit sphere (a cylinder: the unit disc)
    let unit = |v: &Vec3| match *shape {
        Shape::Sphere { radius } => v.map(|c| c / radius),
        Shape::Cylinder { radius, .. } => [v[0] / radius, v[1] / radius, 0.0],
        Shape::Ellipsoid { semi_axes: d } => [v[0] / d[0], v[1] / d[1], v[2] / d[2]],
    };
    let (p, q) = (unit(a), unit(b));
    let d = sub(&q, &p);
    let dd = dot(&d, &d);
    if !(dd > 0.0) {
        return false;
    }
    let t = -dot(&p, &d) / dd;
    let near = [0, 1, 2].map(|i| p[i] + t * d[i]);
    t > 0.0 && t < 1.0 && dot(&near, &near) < 1.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::NodeId;
    use mollier_core::conformance::{Options, check_generic};
    use mollier_core::geometry::norm;
    use mollier_core::registry::Frame;

    /// A path p → v → q (nodes 0, 1, 2) with one obstacle on a body at rest at the origin
    /// (nodes 3, 4); `x` with the points given.
    fn bent(shape: Shape, segment: usize, rules: Rules, pts: [Vec3; 3]) -> (CurvedTruss, Vec<f64>) {
        let body = Frame { position: NodeId::new(3), orientation: NodeId::new(4) };
        let ob = Obstacle { shape, frame: ShapeFrame::default(), body, segment };
        let nodes = [NodeId::new(0), NodeId::new(1), NodeId::new(2)];
        let el = CurvedTruss::new(&nodes, &[ob]).unwrap().with_rules(0, rules).unwrap();
        let mut x: Vec<f64> = pts.iter().flatten().copied().collect();
        x.extend_from_slice(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0]);
        (el, x)
    }

    fn length(el: &CurvedTruss, x: &[f64]) -> Result<f64, ElementError> {
        el.path(x).map(|(_, l)| l)
    }

    /// Whether the segment passes through the shape, by sampling it densely (independent of the
    /// closed form).
    fn sampled(shape: &Shape, a: &Vec3, b: &Vec3) -> bool {
        (1..4000).any(|i| {
            let t = i as f64 / 4000.0;
            let p = [0, 1, 2].map(|k| a[k] + t * (b[k] - a[k]));
            match *shape {
                Shape::Cylinder { radius, .. } => p[0].hypot(p[1]) < radius,
                _ => inside(shape, &p),
            }
        })
    }

    #[test]
    fn passes_through_agrees_with_sampling() {
        let shapes = [
            Shape::Sphere { radius: 0.3 },
            Shape::Cylinder { radius: 0.3, side: Side::Either, length: None },
            Shape::Ellipsoid { semi_axes: [0.5, 0.3, 0.2] },
        ];
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let (mut yes, mut no) = (0, 0);
        for shape in &shapes {
            for _ in 0..300 {
                let a = [rnd(), rnd(), rnd()];
                let b = [rnd(), rnd(), rnd()];
                if inside(shape, &a) || inside(shape, &b) {
                    continue;
                }
                let want = sampled(shape, &a, &b);
                // the sampling misses grazing lines: skip those within a sample of the surface
                let got = passes_through(shape, &a, &b);
                if got != want {
                    let l = norm(&sub(&b, &a));
                    assert!(l / 4000.0 > 1e-4, "{shape:?} {a:?} {b:?}: {got} vs sampled {want}");
                    continue;
                }
                if got { yes += 1 } else { no += 1 }
            }
        }
        assert!(yes > 100 && no > 100, "{yes} through, {no} clear");
    }

    /// With a range, the obstacle acts on the segment whose line passes through it: the same
    /// length as the obstacle fixed to that segment, on either segment.
    #[test]
    fn a_range_wraps_the_segment_that_passes_through() {
        let cyl = Shape::Cylinder { radius: 0.02, side: Side::Either, length: None };
        let ranged =
            Rules { last_segment: Some(1), straight_inside: false, cylinder: CylinderPath::Shortest, quadrant: None };
        // the second segment passes through the cylinder, then the first
        for (pts, through) in [
            ([[-0.1, 0.05, 0.0], [0.05, 0.06, 0.01], [-0.06, -0.03, 0.02]], 1),
            ([[-0.06, -0.03, 0.02], [0.05, 0.06, 0.01], [-0.1, 0.05, 0.0]], 0),
        ] {
            let (el, x) = bent(cyl, 0, ranged, pts);
            let (fixed, _) = bent(cyl, through, Rules::default(), pts);
            let (other, _) = bent(cyl, 1 - through, Rules::default(), pts);
            let (l, lf, lo) = (length(&el, &x).unwrap(), length(&fixed, &x).unwrap(), length(&other, &x).unwrap());
            let chords = norm(&sub(&pts[1], &pts[0])) + norm(&sub(&pts[2], &pts[1]));
            assert!(lf > chords + 1e-4 && (lo - chords).abs() < 1e-15, "{lf} {lo} {chords}");
            assert_eq!(l, lf);
            // exact derivatives away from the switch
            let mut el = el;
            el.initialize(&x).unwrap();
            let opts = Options { amplitude: 0.01, samples: 3, ..Options::default() };
            let r = check_generic(&el, &x, &opts).unwrap_or_else(|f| panic!("{f}"));
            assert!(r.dual.unwrap() < 1e-9 && r.gradient < 1e-6 && r.hessian < 1e-5, "{r:?}");
        }
        // neither passes through: no wrap at all
        let pts = [[-0.1, 0.05, 0.0], [0.0, 0.08, 0.0], [0.1, 0.05, 0.0]];
        let (el, x) = bent(cyl, 0, ranged, pts);
        let chords = norm(&sub(&pts[1], &pts[0])) + norm(&sub(&pts[2], &pts[1]));
        assert!((length(&el, &x).unwrap() - chords).abs() < 1e-15);
        // a range must end at or after its first segment
        let ob = Obstacle {
            shape: cyl,
            frame: ShapeFrame::default(),
            body: Frame { position: NodeId::new(3), orientation: NodeId::new(4) },
            segment: 1,
        };
        let nodes = [NodeId::new(0), NodeId::new(1), NodeId::new(2)];
        assert!(
            CurvedTruss::new(&nodes, &[ob])
                .unwrap()
                .with_rules(
                    0,
                    Rules {
                        last_segment: Some(0),
                        straight_inside: false,
                        cylinder: CylinderPath::Shortest,
                        quadrant: None
                    }
                )
                .is_err()
        );
        assert!(
            CurvedTruss::new(&nodes, &[ob])
                .unwrap()
                .with_rules(
                    0,
                    Rules {
                        last_segment: Some(2),
                        straight_inside: false,
                        cylinder: CylinderPath::Shortest,
                        quadrant: None
                    }
                )
                .is_err()
        );
    }

    /// An anchor inside: the straight line with `straight_inside`, an error without.
    #[test]
    fn an_anchor_inside_gives_the_straight_line() {
        let ell = Shape::Ellipsoid { semi_axes: [0.05, 0.03, 0.04] };
        let pts = [[0.01, 0.0, 0.0], [0.0, 0.2, 0.0], [0.1, 0.2, 0.0]];
        let chords = norm(&sub(&pts[1], &pts[0])) + norm(&sub(&pts[2], &pts[1]));
        for shape in
            [ell, Shape::Sphere { radius: 0.03 }, Shape::Cylinder { radius: 0.03, side: Side::Either, length: None }]
        {
            let (el, x) = bent(
                shape,
                0,
                Rules { last_segment: None, straight_inside: true, cylinder: CylinderPath::Shortest, quadrant: None },
                pts,
            );
            assert!((length(&el, &x).unwrap() - chords).abs() < 1e-15, "{shape:?}");
            let (el, x) = bent(shape, 0, Rules::default(), pts);
            assert!(matches!(length(&el, &x), Err(ElementError::Domain(_))), "{shape:?}");
        }
    }
}
