//! The model file's parameters of a `curved-truss` element and its obstacles, and the type's
//! registration.

use mollier_core::element::{Element, NodeKind};
use mollier_core::geometry::{cross, dot, norm};
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_surface::frame::{self, ShapeFrame};

use crate::*;

fn shape_of(t: &Params<'_>, fr: &ShapeFrame) -> Result<Shape, ParamError> {
    let kind = t.string("type")?;
    let no = |key: &str, why: &str| -> Result<(), ParamError> {
        if t.get(key).is_some() { Err(ParamError::new(t.path(key), why.to_string())) } else { Ok(()) }
    };
    match kind {
        "sphere" => {
            no("semi_axes", "a sphere has a `radius`, not semi-axes")?;
            no("side", "`side` is for cylinders and OpenSim's ellipsoids")?;
            no("length", "`length` is for cylinders")?;
            Ok(Shape::Sphere { radius: positive_length(t, "radius")? })
        }
        "cylinder" => {
            no("semi_axes", "a cylinder has a `radius`, not semi-axes")?;
            let radius = positive_length(t, "radius")?;
            let side = match t.opt_vector("side")? {
                None => Side::Either,
                Some(v) => {
                    // body frame → cylinder frame, projected on the plane normal to the axis
                    let u = fr.axes();
                    let (sx, sy) = (dot(&u[0], &v), dot(&u[1], &v));
                    let l = sx.hypot(sy);
                    if !(l > 1e-9 * norm(&v)) || !(l > 0.0) {
                        return Err(ParamError::new(
                            t.path("side"),
                            "must not be zero or parallel to the cylinder's axis",
                        ));
                    }
                    Side::Toward([sx / l, sy / l])
                }
            };
            let length = match t.get("length") {
                None => None,
                Some(_) => Some(positive_length(t, "length")?),
            };
            Ok(Shape::Cylinder { radius, side, length })
        }
        "ellipsoid" => {
            no("radius", "an ellipsoid has `semi_axes`, not a radius")?;
            no("length", "`length` is for cylinders")?;
            let semi_axes = t.point("semi_axes")?;
            if !semi_axes.iter().all(|v| *v > 0.0) {
                return Err(ParamError::new(t.path("semi_axes"), format!("must be positive, found {semi_axes:?}")));
            }
            Ok(Shape::Ellipsoid { semi_axes })
        }
        other => Err(ParamError::new(t.path("type"), format!("unknown obstacle type `{other}`"))
            .with_hint("one of: sphere, cylinder, ellipsoid")),
    }
}

fn positive_length(t: &Params<'_>, key: &str) -> Result<f64, ParamError> {
    let v = t.length(key)?;
    if v > 0.0 { Ok(v) } else { Err(ParamError::new(t.path(key), format!("must be positive, found {v}"))) }
}

/// The cylinder frame from `axis` (its z axis) when given, else the common frame parameters.
fn frame_of(t: &Params<'_>) -> Result<ShapeFrame, ParamError> {
    match t.opt_vector("axis")? {
        None => frame::from_params(t),
        Some(z) => {
            for key in ["x_axis", "y_axis", "rotation"] {
                if t.get(key).is_some() {
                    return Err(ParamError::new(
                        t.path(key),
                        "give either `axis` or the frame's axes/rotation, not both",
                    ));
                }
            }
            let centre = if t.get("centre").is_some() { t.point("centre")? } else { [0.0; 3] };
            let zl = norm(&z);
            if !(zl > 0.0) {
                return Err(ParamError::new(t.path("axis"), "must not be zero"));
            }
            let zu = z.map(|v| v / zl);
            let xu = mollier_core::geometry::perpendicular(&zu);
            let yu = cross(&zu, &xu);
            Ok(ShapeFrame::new([xu, yu, zu], centre))
        }
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let first = p.node("p", NodeKind::Position)?;
    let last = p.node("q", NodeKind::Position)?;
    let via = if p.get("via").is_some() { p.nodes("via", NodeKind::Position)? } else { Vec::new() };
    let mut points = vec![first];
    points.extend(&via);
    points.push(last);
    let mut obstacles = Vec::new();
    let mut rules = Vec::new();
    for t in p.tables("obstacles")? {
        let fr = frame_of(&t)?;
        let shape = shape_of(&t, &fr)?;
        if !matches!(shape, Shape::Cylinder { .. }) && t.get("axis").is_some() {
            return Err(ParamError::new(t.path("axis"), "`axis` is for cylinders"));
        }
        let body = t.frame("body")?;
        let seg = t.number_or("segment", 0.0)?;
        if !(seg >= 0.0 && seg.fract() == 0.0 && seg <= via.len() as f64) {
            return Err(ParamError::new(
                t.path("segment"),
                format!("must be a whole number from 0 to {} (the number of via points)", via.len()),
            ));
        }
        obstacles.push(Obstacle { shape, frame: fr, body, segment: seg as usize });
        let mut r = rules_of(&t, seg as usize, via.len())?;
        if let Shape::Ellipsoid { .. } = shape {
            r.quadrant = ellipsoid_quadrant(&t, &fr, r.cylinder)?;
        }
        if r.cylinder != CylinderPath::Shortest {
            match shape {
                Shape::Cylinder { length: Some(_), side, .. } if crate::rules::quadrant(&side).is_some() => {}
                Shape::Ellipsoid { .. } => {}
                _ => {
                    return Err(ParamError::new(
                        t.path("method"),
                        "OpenSim's path is for an ellipsoid, or a cylinder with a `length` and a `side` (if any) along its own x or y axis",
                    ));
                }
            }
        }
        rules.push(r);
        t.finish(&OBSTACLE_PARAMS.iter().map(|d| d.name).collect::<Vec<_>>())?;
    }
    let mut el = CurvedTruss::new(&points, &obstacles).map_err(|e| ParamError::new("obstacles", e.to_string()))?;
    for (k, r) in rules.into_iter().enumerate() {
        el = el.with_rules(k, r).map_err(|e| ParamError::new("obstacles", e.to_string()))?;
    }
    if p.get("wrapping").is_some() {
        match p.string("wrapping")? {
            "shortest" => {}
            "opensim" => {
                // the element's message without the kernel's "degenerate configuration" prefix
                el = el.with_opensim_sequence().map_err(|e| {
                    let why = match e {
                        mollier_core::element::ElementError::Degenerate(m) => m,
                        other => other.to_string(),
                    };
                    ParamError::new(p.path("wrapping"), why)
                })?
            }
            other => {
                return Err(ParamError::new(p.path("wrapping"), format!("unknown wrapping `{other}`"))
                    .with_hint("one of: shortest, opensim"));
            }
        }
    }
    Ok(Box::new(el))
}

/// An obstacle's `last_segment`, `inside` and `method` (see [`Rules`]).
fn rules_of(t: &Params<'_>, first: usize, n_via: usize) -> Result<Rules, ParamError> {
    let last_segment = match t.get("last_segment") {
        None => None,
        Some(_) => {
            let v = t.number("last_segment")?;
            if !(v.fract() == 0.0 && v >= first as f64 && v <= n_via as f64) {
                return Err(ParamError::new(
                    t.path("last_segment"),
                    format!("must be a whole number from `segment` ({first}) to {n_via} (the number of via points)"),
                ));
            }
            Some(v as usize)
        }
    };
    let straight_inside = match t.get("inside") {
        None => false,
        Some(_) => match t.string("inside")? {
            "error" => false,
            "straight" => true,
            other => {
                return Err(ParamError::new(t.path("inside"), format!("unknown rule `{other}`"))
                    .with_hint("one of: error, straight"));
            }
        },
    };
    let cylinder = match t.get("method") {
        None => CylinderPath::Shortest,
        Some(_) => match t.string("method")? {
            "shortest" => CylinderPath::Shortest,
            "opensim" => CylinderPath::OpenSim { several: false },
            "opensim-several" => CylinderPath::OpenSim { several: true },
            other => {
                return Err(ParamError::new(t.path("method"), format!("unknown method `{other}`"))
                    .with_hint("one of: shortest, opensim, opensim-several"));
            }
        },
    };
    Ok(Rules { last_segment, straight_inside, cylinder, quadrant: None })
}

/// An ellipsoid's `side` as OpenSim's quadrant: with OpenSim's path only, along one of its own
/// axes (to 1e-9 of the direction's length).
fn ellipsoid_quadrant(
    t: &Params<'_>,
    fr: &ShapeFrame,
    path: CylinderPath,
) -> Result<Option<crate::opensim::Quadrant>, ParamError> {
    let Some(v) = t.opt_vector("side")? else { return Ok(None) };
    if path == CylinderPath::Shortest {
        return Err(ParamError::new(
            t.path("side"),
            "an ellipsoid's `side` is OpenSim's quadrant: it needs `method = \"opensim\"`",
        ));
    }
    let u = fr.axes();
    let l = norm(&v);
    let along = (0..3).find(|&i| l > 0.0 && (dot(&u[i], &v).abs() - l).abs() <= 1e-9 * l);
    match along {
        Some(i) => Ok(Some((i, dot(&u[i], &v).signum()))),
        None => Err(ParamError::new(
            t.path("side"),
            "must point along one of the ellipsoid's own x, y or z axes (OpenSim's quadrant)",
        )),
    }
}

/// Parameters of one entry of `obstacles`.
pub const OBSTACLE_PARAMS: &[ParamDoc] = &[
    ParamDoc {
        name: "type",
        kind: ParamKind::Choice(&["sphere", "cylinder", "ellipsoid"]),
        required: true,
        doc: "the obstacle's shape",
    },
    ParamDoc {
        name: "body",
        kind: ParamKind::Body,
        required: true,
        doc: "the body the obstacle is fixed to (it moves with the body's origin and orientation nodes)",
    },
    ParamDoc {
        name: "radius",
        kind: ParamKind::Length,
        required: false,
        doc: "radius of a sphere or cylinder (length unit, positive); required for those, not allowed for an ellipsoid",
    },
    ParamDoc {
        name: "semi_axes",
        kind: ParamKind::Point,
        required: false,
        doc: "the ellipsoid's three semi-axes along its local x, y and z axes (length unit, positive); required for an ellipsoid only",
    },
    frame::docs::CENTRE,
    frame::docs::X_AXIS,
    frame::docs::Y_AXIS,
    frame::docs::ROTATION,
    ParamDoc {
        name: "axis",
        kind: ParamKind::Vector,
        required: false,
        doc: "cylinders only: direction of the cylinder's axis in the body frame, instead of x_axis/y_axis/rotation (whose local z axis is the cylinder's axis otherwise). The cylinder is infinitely long unless `length` is given",
    },
    ParamDoc {
        name: "length",
        kind: ParamKind::Length,
        required: false,
        doc: "cylinders only: the cylinder's length along its axis (length unit, positive), centred on `centre`, as OpenSim's WrapCylinder: the path goes straight when both contact points would lie beyond the ends, or an anchor within the radius lies beyond them (the length then jumps, as OpenSim's). Default: infinitely long",
    },
    ParamDoc {
        name: "side",
        kind: ParamKind::Vector,
        required: false,
        doc: "cylinders: a direction in the body frame (its part normal to the axis is used) pointing at the face the path must go over; the path then wraps round that face even when the straight line passes behind the cylinder (OpenSim's quadrant \"-x\" is side = −(local x axis)). Default: the shorter way round, which flips sides when the line crosses the axis. Ellipsoids with `method = \"opensim\"`: OpenSim's quadrant, a direction along one of the ellipsoid's own axes (\"-y\" is side = −(local y axis)); default all",
    },
    ParamDoc {
        name: "segment",
        kind: ParamKind::Number,
        required: false,
        doc: "which stretch of the path the obstacle acts on: 0 (default) from p to the first via point (or to q), k from via point k to the next point. Several obstacles on one stretch are met in the order listed",
    },
    ParamDoc {
        name: "last_segment",
        kind: ParamKind::Number,
        required: false,
        doc: "with `segment`, a range of stretches: at each posture the obstacle acts on the first from `segment` to `last_segment` whose straight line passes through it; if none does, on the one where it wraps with the least lengthening (a sphere; a cylinder with `side`); else on none (OpenSim's PathWrap `range`). The length jumps where the choice changes, as OpenSim's does. Default: `segment` only",
    },
    ParamDoc {
        name: "inside",
        kind: ParamKind::Choice(&["error", "straight"]),
        required: false,
        doc: "what an anchor of the obstacle's stretch inside it gives: \"error\" (default: the configuration is outside the element's domain) or \"straight\" (the straight line, as OpenSim does)",
    },
    ParamDoc {
        name: "method",
        kind: ParamKind::Choice(&["shortest", "opensim", "opensim-several"]),
        required: false,
        doc: "ellipsoids: \"shortest\" (default: the geodesic) or \"opensim\" (OpenSim 4.6's WrapEllipsoid with its \"hybrid\" method: the curve where a plane through the anchors cuts the ellipsoid, as a polyline of 1 mm segments; not a shortest path). Cylinders with a `length`: \"shortest\" (default: the shortest path, a helix between exact tangent points), \"opensim\" (OpenSim 4.6's WrapCylinder path on a muscle with one wrap object: tangent points found in the plane through the anchors and an apex, not a shortest path; `side` along the cylinder's own x or y axis is its quadrant) or \"opensim-several\" (the same on a muscle with several wrap objects, where OpenSim then slides the tangent points along the axis towards tangency). Applies while the cylinder is the only obstacle of its stretch, and always with the element's `wrapping = \"opensim\"`",
    },
];

/// The `curved-truss` element type.
pub const TYPE: ElementType = ElementType {
    name: "curved-truss",
    summary: "a muscle's line of action from p through via points to q, wrapping over spheres, cylinders and ellipsoids fixed to bodies; mode: elongation (m), path length minus its initial length",
    role: ElementRole::LineOfAction,
    modes: &["elongation"],
    params: &[
        ParamDoc {
            name: "p",
            kind: ParamKind::Node(NodeKind::Position),
            required: true,
            doc: "first point of the path (origin)",
        },
        ParamDoc {
            name: "q",
            kind: ParamKind::Node(NodeKind::Position),
            required: true,
            doc: "last point of the path (insertion)",
        },
        ParamDoc {
            name: "via",
            kind: ParamKind::Nodes(NodeKind::Position),
            required: false,
            doc: "points the path passes through, in order from p to q (typically points of bodies); default none",
        },
        ParamDoc {
            name: "obstacles",
            kind: ParamKind::Tables(OBSTACLE_PARAMS),
            required: false,
            doc: "the obstacles the path wraps over; the path touches one only where the straight line would pass through it (or, for a cylinder with `side`, behind it). Default none: a straight line through the via points",
        },
        ParamDoc {
            name: "wrapping",
            kind: ParamKind::Choice(&["shortest", "opensim"]),
            required: false,
            doc: "\"shortest\" (default: the shortest path over the obstacles of each stretch, with a free point between consecutive ones) or \"opensim\" (OpenSim 4.6's GeometryPath: each obstacle in turn wraps the stretch of its range in the path left by the others, their tangent points included, for up to 8 rounds until the length changes by less than 0.5 mm; not a shortest path). \"opensim\" takes spheres, and ellipsoids and cylinders with a `length` with `method = \"opensim\"` or \"opensim-several\"",
        },
    ],
    build,
};

/// Register the `curved-truss` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}
