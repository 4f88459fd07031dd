//! PATH-POINT: a point of a muscle's path whose place on its body depends on a joint's
//! coordinate — OpenSim's `MovingPathPoint` (each component a function of the coordinate) and
//! `ConditionalPathPoint` (on the path only while the coordinate is within a range). Theory and
//! design: `docs/theory/path-point.md`.
//!
//! The element holds a position node (declared under `[nodes]`) where it belongs. Its three
//! modes `x`, `y`, `z` (m) are the node's offset from there along the body's axes,
//!
//! ```text
//! e = R(λ)ᵀ (x_P − x_O) − t(q)        q = at + scale · m(joint)
//! ```
//!
//! with `t` the location functions and `m` the joint element's mode, measured by a copy of the
//! joint element built from its own parameters. The modes are held rigid (the default), so the
//! kernel solves the node with the mechanism, and a muscle through it (a `truss` or
//! `curved-truss`) depends on the coordinate through the kernel: its first- and second-order
//! transfer functions (moment arms `−dL/dq`) include the point's motion exactly. A conditional
//! point outside its range sits midway between its neighbours on the path (`between`), where a
//! path through it has the length of the path without it.

mod element;
pub mod function;

use mollier_core::element::{Element, NodeKind, Quantity};
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};

pub use element::{Coordinate, Location, PathPoint};
use function::{Function, Spline};

/// The parameters of a function of the coordinate (one of `moving`'s three tables).
pub const FUNCTION_PARAMS: &[ParamDoc] = &[
    ParamDoc { name: "constant", kind: ParamKind::Length, required: false, doc: "a constant component" },
    ParamDoc {
        name: "linear",
        kind: ParamKind::Numbers,
        required: false,
        doc: "`[slope, intercept]`: slope · q + intercept (length unit per coordinate unit, length unit)",
    },
    ParamDoc {
        name: "polynomial",
        kind: ParamKind::Numbers,
        required: false,
        doc: "coefficients from the highest power of q down (OpenSim's PolynomialFunction; file units)",
    },
    ParamDoc {
        name: "knots",
        kind: ParamKind::Numbers,
        required: false,
        doc: "with `values`: the coordinate's values (increasing, at least 2) of a cubic spline, SIMM's (OpenSim's SimmSpline)",
    },
    ParamDoc {
        name: "values",
        kind: ParamKind::Numbers,
        required: false,
        doc: "with `knots`: the component at each knot (length unit)",
    },
];

/// The `path-point` element type.
pub const TYPE: ElementType = ElementType {
    name: "path-point",
    summary: "a point of a body placed by a joint's coordinate (OpenSim's MovingPathPoint, ConditionalPathPoint); modes: x, y, z (m), held rigid",
    role: ElementRole::Body,
    modes: &["x", "y", "z"],
    params: &[
        ParamDoc {
            name: "point",
            kind: ParamKind::Node(NodeKind::Position),
            required: true,
            doc: "the node placed (declared under [nodes], at its place in the initial configuration); name it in the muscles' paths",
        },
        ParamDoc { name: "body", kind: ParamKind::Body, required: true, doc: "the body it belongs to" },
        ParamDoc {
            name: "coordinate",
            // a name of no fixed set (the registry has no kind of its own for `element.mode`)
            kind: ParamKind::Choice(&[]),
            required: true,
            doc: "`element.mode`: the joint mode whose change (from the initial configuration) moves it, e.g. `knee.rotation`",
        },
        ParamDoc {
            name: "at",
            kind: ParamKind::Number,
            required: false,
            doc: "the coordinate's value in the initial configuration (angle or length unit, as the mode); default 0",
        },
        ParamDoc {
            name: "scale",
            kind: ParamKind::Number,
            required: false,
            doc: "coordinate per unit of the mode: q = at + scale · mode; default 1",
        },
        ParamDoc {
            name: "location",
            kind: ParamKind::Point,
            required: false,
            doc: "a fixed place in the body frame (a conditional point); give this or `moving`",
        },
        ParamDoc {
            name: "moving",
            kind: ParamKind::Tables(FUNCTION_PARAMS),
            required: false,
            doc: "three functions of the coordinate, the place's x, y, z in the body frame",
        },
        ParamDoc {
            name: "active",
            kind: ParamKind::Numbers,
            required: false,
            doc: "`[min, max]` of the coordinate: on the path only while min <= q <= max (coordinate's unit); needs `between`",
        },
        ParamDoc {
            name: "between",
            kind: ParamKind::Nodes(NodeKind::Position),
            required: false,
            doc: "the path's points before and after it: while inactive it sits midway between them",
        },
    ],
    build,
};

/// Register the `path-point` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

/// One function of the coordinate from its table, in SI: `q` in `cf` per file unit, values in
/// `lf` (m per file length unit).
fn function_of(t: &Params<'_>, cf: f64, lf: f64) -> Result<Function, ParamError> {
    let given: Vec<&str> =
        ["constant", "linear", "polynomial", "knots"].into_iter().filter(|k| t.get(k).is_some()).collect();
    let f = match given.as_slice() {
        ["constant"] => Function::Constant(t.length("constant")?),
        ["linear"] => {
            let c = t.numbers("linear", Some(2))?;
            Function::Linear { slope: c[0] * lf / cf, intercept: c[1] * lf }
        }
        ["polynomial"] => {
            let c = t.numbers("polynomial", None)?;
            if c.is_empty() {
                return Err(ParamError::new(t.path("polynomial"), "needs at least one coefficient"));
            }
            let n = c.len() - 1;
            Function::Polynomial(c.iter().enumerate().map(|(i, v)| v * lf / cf.powi((n - i) as i32)).collect())
        }
        ["knots"] => {
            let x = t.numbers("knots", None)?;
            let y = t.numbers("values", Some(x.len()))?;
            if x.len() < 2 || x.windows(2).any(|w| !(w[1] > w[0])) {
                return Err(ParamError::new(t.path("knots"), "needs at least 2 knots, increasing without repeats"));
            }
            Function::Spline(Spline::fmm(x.iter().map(|v| v * cf).collect(), y.iter().map(|v| v * lf).collect()))
        }
        _ => {
            return Err(ParamError::new(
                t.path(""),
                "give one function: `constant`, `linear`, `polynomial` or `knots` with `values`",
            )
            .with_hint(format!("given: {}", if given.is_empty() { "none".into() } else { given.join(", ") })));
        }
    };
    t.finish(&FUNCTION_PARAMS.iter().map(|d| d.name).collect::<Vec<_>>())?;
    Ok(f)
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    let point = p.node("point", NodeKind::Position)?;
    let body = p.frame("body")?;
    let reference = p.string("coordinate")?;
    let (joint, mode) = p.resolver().element(reference).map_err(|m| ParamError::new(p.path("coordinate"), m))?;
    let units = p.units();
    let cf = match joint.layout().modes()[mode].quantity {
        Quantity::Angle => units.angle,
        Quantity::Length => units.length,
        Quantity::Dimensionless => 1.0,
    };
    let scale = p.number_or("scale", 1.0)?;
    if !(scale != 0.0) {
        return Err(ParamError::new(p.path("scale"), "must not be zero"));
    }
    let coordinate = Coordinate { element: joint, mode, at: p.number_or("at", 0.0)? * cf, scale };
    let location = match (p.get("location").is_some(), p.get("moving").is_some()) {
        (true, false) => Location::Fixed(p.point("location")?),
        (false, true) => {
            let ts = p.tables("moving")?;
            if ts.len() != 3 {
                return Err(ParamError::new(
                    p.path("moving"),
                    format!("expected 3 functions (x, y, z), found {}", ts.len()),
                ));
            }
            let fs: Vec<Function> = ts.iter().map(|t| function_of(t, cf, units.length)).collect::<Result<_, _>>()?;
            let [x, y, z]: [Function; 3] = fs.try_into().expect("three functions");
            Location::Moving(Box::new([x, y, z]))
        }
        _ => return Err(ParamError::new(p.path("location"), "give either `location` or `moving`")),
    };
    let conditional = match (p.get("active").is_some(), p.get("between").is_some()) {
        (false, false) => None,
        (true, true) => {
            let r = p.numbers("active", Some(2))?;
            if !(r[0] <= r[1]) {
                return Err(ParamError::new(p.path("active"), format!("min {} is above max {}", r[0], r[1])));
            }
            let b = p.nodes("between", NodeKind::Position)?;
            let [a, c]: [_; 2] = b.try_into().map_err(|b: Vec<_>| {
                ParamError::new(p.path("between"), format!("expected 2 points, found {}", b.len()))
            })?;
            Some(([r[0] * cf, r[1] * cf], [a, c]))
        }
        (true, false) => return Err(ParamError::new(p.path("active"), "a conditional point needs `between`")),
        (false, true) => {
            return Err(ParamError::new(p.path("between"), "`between` is for a conditional point (`active`)"));
        }
    };
    Ok(Box::new(PathPoint::new(point, body, location, coordinate, conditional)))
}

#[cfg(test)]
mod tests;
