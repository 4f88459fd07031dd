//! The parts of an OpenSim 4.x model that Mollier imports, read from the XML with every reference
//! resolved; what is not imported is listed in [`Model::unsupported`].

use mollier_format::{Diagnostic, Diagnostics};
use roxmltree::{Document, Node};

use crate::function::{Function, function_child, read_function};
use crate::report::Entry;
use crate::xml::{Src, child, name_of, set_objects, tag};

/// A frame fixed in a body: OpenSim's `PhysicalOffsetFrame` (or the body's own frame).
#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    /// The body (0 is ground).
    pub body: usize,
    /// Origin in body coordinates (m).
    pub translation: [f64; 3],
    /// Body-fixed X-Y-Z rotation angles (rad).
    pub orientation: [f64; 3],
}

/// A body (index 0 is ground).
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// OpenSim's name.
    pub name: String,
    /// Mass (kg).
    pub mass: f64,
    /// Centre of mass in body coordinates (m).
    pub com: [f64; 3],
    /// `[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]` about the centre of mass, body axes (kg m²).
    pub inertia: [f64; 6],
    /// Wrap objects fixed to the body.
    pub wraps: Vec<Wrap>,
    /// Where it is written.
    pub place: String,
}

/// A wrap object's shape.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    /// Radius (m).
    Sphere(f64),
    /// Radius and length (m); the axis is the local z axis.
    Cylinder(f64, f64),
    /// Semi-axes (m).
    Ellipsoid([f64; 3]),
    /// A type Mollier has no obstacle for (its tag).
    Other(String),
}

/// A wrap object.
#[derive(Clone, Debug, PartialEq)]
pub struct Wrap {
    /// OpenSim's name.
    pub name: String,
    /// Shape and size.
    pub shape: Shape,
    /// Centre in body coordinates (m).
    pub translation: [f64; 3],
    /// Body-fixed X-Y-Z rotation angles of its axes (rad).
    pub rotation: [f64; 3],
    /// `all`, `+x`, `-x`, `+y`, ...
    pub quadrant: String,
    /// `false` when the model switches it off.
    pub active: bool,
    /// Where it is written.
    pub place: String,
}

/// The value of one axis of a joint's spatial transform.
#[derive(Clone, Debug, PartialEq)]
pub enum AxisValue {
    /// A constant (rad or m).
    Const(f64),
    /// A function of a coordinate (index into [`Model::coordinates`]).
    Coord(usize, Function),
}

/// One rotation or translation of a joint: along or about `dir`, in the joint's parent frame
/// (rotations: in the frame turned by the rotations before it).
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    /// `rotation1`, `translation2`, or the built-in joint's axis name.
    pub label: String,
    /// Unit direction.
    pub dir: [f64; 3],
    /// Its value.
    pub value: AxisValue,
}

/// A joint: the child's frame moves relative to the parent's.
#[derive(Clone, Debug, PartialEq)]
pub struct Joint {
    /// OpenSim's name.
    pub name: String,
    /// `CustomJoint`, `PinJoint`, ...
    pub kind: String,
    /// The frame on the parent body.
    pub parent: Frame,
    /// The frame on the child body.
    pub child: Frame,
    /// Up to three rotations, applied in order (body-fixed).
    pub rotations: Vec<Axis>,
    /// Translations of the child frame's origin, along parent-frame axes.
    pub translations: Vec<Axis>,
    /// Where it is written.
    pub place: String,
}

/// A generalized coordinate.
#[derive(Clone, Debug, PartialEq)]
pub struct Coordinate {
    /// OpenSim's name.
    pub name: String,
    /// Default value (rad or m).
    pub default: f64,
    /// Range (rad or m).
    pub range: [f64; 2],
    /// Held at its default value.
    pub locked: bool,
    /// Kept in its range by OpenSim.
    pub clamped: bool,
    /// Where it is written.
    pub place: String,
}

/// `q_dependent = scale · f(q_independent)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Coupler {
    /// OpenSim's name.
    pub name: String,
    /// The coordinate it sets.
    pub dependent: usize,
    /// The coordinate it is a function of.
    pub independent: usize,
    /// The function.
    pub function: Function,
    /// Its scale factor.
    pub scale: f64,
}

/// How a path point moves.
#[derive(Clone, Debug, PartialEq)]
pub enum PointKind {
    /// Fixed in its body.
    Fixed,
    /// In the path only while a coordinate is in `[lo, hi]`.
    Conditional(usize, [f64; 2]),
    /// Each of x, y, z a function of a coordinate (or a constant).
    Moving(Box<[Option<(usize, Function)>; 3]>),
}

/// A point of a muscle's path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathPoint {
    /// OpenSim's name.
    pub name: String,
    /// The body it is fixed to.
    pub body: usize,
    /// Location in body coordinates (m); for a moving point, where it is at the coordinates' zero.
    pub location: [f64; 3],
    /// How it moves.
    pub kind: PointKind,
    /// Where it is written.
    pub place: String,
}

/// A wrap object on a path.
#[derive(Clone, Debug, PartialEq)]
pub struct PathWrap {
    /// The body and the index of the wrap object in its list.
    pub wrap: (usize, usize),
    /// Path points (1-based, inclusive) between which it may act; `-1` for all.
    pub range: [i64; 2],
    /// OpenSim's method for ellipsoids (`hybrid`, `midpoint`, `axial`).
    pub method: String,
}

/// OpenSim's `CoordinateLimitForce`, its properties as the file gives them (OpenSim's units: a
/// rotational coordinate's limits and transition in degrees, its stiffnesses in N m per degree,
/// its damping in N m s per degree).
#[derive(Clone, Debug, PartialEq)]
pub struct LimitForce {
    /// OpenSim's name.
    pub name: String,
    /// The coordinate it limits.
    pub coordinate: usize,
    /// `upper_limit`, `upper_stiffness`, `lower_limit`, `lower_stiffness`, `damping`, `transition`.
    pub upper_limit: f64,
    /// See [`LimitForce::upper_limit`].
    pub upper_stiffness: f64,
    /// See [`LimitForce::upper_limit`].
    pub lower_limit: f64,
    /// See [`LimitForce::upper_limit`].
    pub lower_stiffness: f64,
    /// See [`LimitForce::upper_limit`].
    pub damping: f64,
    /// See [`LimitForce::upper_limit`].
    pub transition: f64,
    /// Where it is written.
    pub place: String,
}

/// A muscle.
#[derive(Clone, Debug, PartialEq)]
pub struct Muscle {
    /// OpenSim's name.
    pub name: String,
    /// Its type.
    pub kind: String,
    /// Maximal isometric force (N).
    pub max_force: f64,
    /// Optimal fibre length (m).
    pub optimal_fiber_length: f64,
    /// Tendon slack length (m).
    pub tendon_slack_length: f64,
    /// Pennation angle at the optimal fibre length (rad).
    pub pennation: f64,
    /// The path's points, from origin to insertion.
    pub points: Vec<PathPoint>,
    /// The wrap objects, in order.
    pub wraps: Vec<PathWrap>,
    /// A `DeGrooteFregly2016Muscle`'s contraction dynamics (the other types' are not read).
    pub dynamics: Option<DeGrooteFregly>,
    /// Where it is written.
    pub place: String,
}

/// The properties of a `DeGrooteFregly2016Muscle`'s contraction and activation dynamics,
/// OpenSim 4.6's defaults where the file gives none.
#[derive(Clone, Debug, PartialEq)]
pub struct DeGrooteFregly {
    /// `activation_time_constant` (s).
    pub activation_time_constant: f64,
    /// `deactivation_time_constant` (s).
    pub deactivation_time_constant: f64,
    /// `max_contraction_velocity` (optimal fibre lengths per second).
    pub max_contraction_velocity: f64,
    /// `active_force_width_scale`.
    pub active_force_width_scale: f64,
    /// `fiber_damping`.
    pub fiber_damping: f64,
    /// `passive_fiber_strain_at_one_norm_force`.
    pub passive_fiber_strain_at_one_norm_force: f64,
    /// `tendon_strain_at_one_norm_force`.
    pub tendon_strain_at_one_norm_force: f64,
    /// `activation_dynamics_smoothing`.
    pub activation_dynamics_smoothing: f64,
    /// `ignore_passive_fiber_force`.
    pub ignore_passive_fiber_force: bool,
    /// `ignore_tendon_compliance`: a rigid tendon (imported as `tendon = "rigid"`).
    pub ignore_tendon_compliance: bool,
    /// `ignore_activation_dynamics`: the activation is the excitation.
    pub ignore_activation_dynamics: bool,
}

/// The contraction dynamics of `DeGrooteFregly2016Muscle` `f`.
fn read_de_groote_fregly(src: &Src, f: Node) -> Result<DeGrooteFregly, Box<Diagnostic>> {
    Ok(DeGrooteFregly {
        activation_time_constant: src.number_or(f, "activation_time_constant", 0.015)?,
        deactivation_time_constant: src.number_or(f, "deactivation_time_constant", 0.060)?,
        max_contraction_velocity: src.number_or(f, "max_contraction_velocity", 10.0)?,
        active_force_width_scale: src.number_or(f, "active_force_width_scale", 1.0)?,
        fiber_damping: src.number_or(f, "fiber_damping", 0.0)?,
        passive_fiber_strain_at_one_norm_force: src.number_or(f, "passive_fiber_strain_at_one_norm_force", 0.6)?,
        tendon_strain_at_one_norm_force: src.number_or(f, "tendon_strain_at_one_norm_force", 0.049)?,
        activation_dynamics_smoothing: src.number_or(f, "activation_dynamics_smoothing", 0.1)?,
        ignore_passive_fiber_force: src.bool_or(f, "ignore_passive_fiber_force", false)?,
        ignore_tendon_compliance: src.bool_or(f, "ignore_tendon_compliance", false)?,
        ignore_activation_dynamics: src.bool_or(f, "ignore_activation_dynamics", false)?,
    })
}

/// A marker: a named point of a body.
#[derive(Clone, Debug, PartialEq)]
pub struct Marker {
    /// OpenSim's name.
    pub name: String,
    /// Body.
    pub body: usize,
    /// Location in body coordinates (m).
    pub location: [f64; 3],
    /// OpenSim's `fixed`: left where it is by a scaling's marker placement.
    pub fixed: bool,
    /// Where it is written.
    pub place: String,
}

/// What Mollier imports of an OpenSim model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The model's name.
    pub name: String,
    /// Gravity (m/s²).
    pub gravity: [f64; 3],
    /// Ground first, then the bodies in file order.
    pub bodies: Vec<Body>,
    /// The joints, in file order.
    pub joints: Vec<Joint>,
    /// The coordinates, joint by joint.
    pub coordinates: Vec<Coordinate>,
    /// Coordinate couplers.
    pub couplers: Vec<Coupler>,
    /// Muscles.
    pub muscles: Vec<Muscle>,
    /// Coordinate limit forces.
    pub limit_forces: Vec<LimitForce>,
    /// Markers.
    pub markers: Vec<Marker>,
    /// What is not imported.
    pub unsupported: Vec<Entry>,
}

/// The muscle types whose parameters are imported.
pub const MUSCLE_TYPES: [&str; 4] =
    ["Thelen2003Muscle", "Millard2012EquilibriumMuscle", "DeGrooteFregly2016Muscle", "Schutte1993Muscle_Deprecated"];

/// Parse the text of a `.osim` file.
pub fn read(file: &str, text: &str) -> Result<Model, Diagnostics> {
    let place = |at: usize| {
        let lines = &text[..at.min(text.len())];
        (lines.matches('\n').count() + 1, lines.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1)
    };
    let located = |at: usize, message: String| {
        let (line, column) = place(at);
        let mut d = Diagnostic::new(file, "", message)
            .with_hint("an OpenSim model is an XML file written by OpenSim 4 (File > Save Model)");
        d.location = Some(mollier_format::Location { line, column });
        Diagnostics::one(d)
    };
    let prepared = crate::xml::prepare(text).map_err(|(at, message)| located(at, message))?;
    let swapped = matches!(prepared, std::borrow::Cow::Owned(_));
    let opts = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: 50_000_000, ..Default::default() };
    let doc = Document::parse_with_options(&prepared, opts).map_err(|e| {
        // the reader's line and column are of the prepared text, where `::` is one character:
        // back to a byte offset (the same in both texts), then placed in the file's own text
        let pos = e.pos();
        let at = crate::xml::offset_of(&prepared, pos.row as usize, pos.col as usize);
        let (line, column) = place(at);
        let message = e.to_string().replace(&format!(" at {}:{}", pos.row, pos.col), &format!(" at {line}:{column}"));
        let message = if swapped { message.replace('\u{b7}', "::") } else { message };
        located(at, format!("not a valid XML file: {message}"))
    })?;
    let src = Src::new(file, text, &doc);
    read_doc(&src).map_err(|d| Diagnostics::one(*d))
}

fn read_doc(src: &Src) -> Result<Model, Box<Diagnostic>> {
    let root = src.doc.root_element();
    if root.tag_name().name() != "OpenSimDocument" {
        return Err(src.error(
            root,
            format!("`<{}>` is not an OpenSim document", tag(root)),
            "an .osim file starts with `<OpenSimDocument Version=\"40000\">`",
        ));
    }
    let version: i64 = root.attribute("Version").and_then(|v| v.trim().parse().ok()).unwrap_or(0);
    if version < 40000 {
        return Err(src.error(
            root,
            format!("this is an OpenSim 3 file (Version {version}); Mollier reads OpenSim 4 models"),
            "open it in OpenSim 4 and save it again (the file is then converted)",
        ));
    }
    let model =
        child(root, "Model").ok_or_else(|| src.error(root, "no `<Model>`", "an .osim file holds one `<Model>`"))?;
    let mut m = Model {
        name: name_of(model).to_string(),
        gravity: src.vec3_or(model, "gravity", [0.0, -9.80665, 0.0])?,
        bodies: Vec::new(),
        joints: Vec::new(),
        coordinates: Vec::new(),
        couplers: Vec::new(),
        muscles: Vec::new(),
        limit_forces: Vec::new(),
        markers: Vec::new(),
        unsupported: Vec::new(),
    };
    let ground = child(model, "Ground");
    let ground_name = ground.map(name_of).filter(|n| !n.is_empty()).unwrap_or("ground").to_string();
    m.bodies.push(Body {
        name: ground_name,
        mass: 0.0,
        com: [0.0; 3],
        inertia: [0.0; 6],
        wraps: Vec::new(),
        place: ground.map(|g| src.place(g)).unwrap_or_default(),
    });
    if let Some(g) = ground {
        m.bodies[0].wraps = read_wraps(src, g, &mut m.unsupported)?;
    }
    for b in set_objects(model, "BodySet") {
        if b.tag_name().name() != "Body" {
            return Err(src.error(
                b,
                format!("`<{}>` in the BodySet is not supported", tag(b)),
                "Mollier imports `<Body>`",
            ));
        }
        let name = name_of(b).to_string();
        if m.bodies.iter().any(|o| o.name == name) {
            return Err(src.error(b, format!("a second body called `{name}`"), "give every body its own name"));
        }
        let ine = if child(b, "inertia").is_some() { src.numbers(b, "inertia", 6)? } else { vec![0.0; 6] };
        let wraps = read_wraps(src, b, &mut m.unsupported)?;
        m.bodies.push(Body {
            name,
            mass: src.number_or(b, "mass", 0.0)?,
            com: src.vec3_or(b, "mass_center", [0.0; 3])?,
            inertia: [ine[0], ine[1], ine[2], ine[3], ine[4], ine[5]],
            wraps,
            place: src.place(b),
        });
    }
    for j in set_objects(model, "JointSet") {
        read_joint(src, j, &mut m)?;
    }
    for c in set_objects(model, "ConstraintSet") {
        read_constraint(src, c, &mut m)?;
    }
    for f in set_objects(model, "ForceSet") {
        let tag_text = tag(f);
        let tag = tag_text.as_str();
        if MUSCLE_TYPES.contains(&tag) {
            let muscle = read_muscle(src, f, &m)?;
            m.muscles.push(muscle);
        } else if tag == "CoordinateLimitForce" {
            let limit = read_limit_force(src, f, &m)?;
            m.limit_forces.push(limit);
        } else {
            m.unsupported.push(Entry::new(
                &src.place(f),
                name_of(f),
                tag,
                "left out: Mollier imports muscles of the four supported types and CoordinateLimitForce only",
            ));
        }
    }
    for k in set_objects(model, "MarkerSet") {
        let body = resolve_body(src, k, "socket_parent_frame", &m)?;
        let location = src.vec3_or(k, "location", [0.0; 3])?;
        let fixed = src.opt_text(k, "fixed").is_some_and(|f| f.trim().eq_ignore_ascii_case("true"));
        m.markers.push(Marker { name: name_of(k).to_string(), body, location, fixed, place: src.place(k) });
    }
    for set in ["ContactGeometrySet", "ControllerSet", "ProbeSet", "ComponentSet"] {
        for o in set_objects(model, set) {
            m.unsupported.push(Entry::new(&src.place(o), name_of(o), &tag(o), "left out: not part of a Mollier model"));
        }
    }
    if let Some(c) = child(model, "components") {
        for o in c.children().filter(|n| n.is_element()) {
            m.unsupported.push(Entry::new(&src.place(o), name_of(o), &tag(o), "left out: not part of a Mollier model"));
        }
    }
    Ok(m)
}

fn read_wraps(src: &Src, body: Node, unsupported: &mut Vec<Entry>) -> Result<Vec<Wrap>, Box<Diagnostic>> {
    let mut out = Vec::new();
    for w in set_objects(body, "WrapObjectSet") {
        let tag_text = tag(w);
        let tag = tag_text.as_str();
        let shape = match tag {
            "WrapSphere" => Shape::Sphere(src.number_or(w, "radius", 0.05)?),
            "WrapCylinder" => Shape::Cylinder(src.number_or(w, "radius", 0.05)?, src.number_or(w, "length", 0.1)?),
            "WrapEllipsoid" => {
                let d = src.vec3_or(w, "dimensions", [0.05; 3])?;
                Shape::Ellipsoid(d)
            }
            _ => {
                unsupported.push(Entry::new(
                    &src.place(w),
                    name_of(w),
                    tag,
                    "left out: Mollier has no such obstacle; paths that use it go straight past it",
                ));
                Shape::Other(tag.to_string())
            }
        };
        let size_ok = match &shape {
            Shape::Sphere(r) => *r > 0.0,
            Shape::Cylinder(r, l) => *r > 0.0 && *l > 0.0,
            Shape::Ellipsoid(d) => d.iter().all(|v| *v > 0.0),
            Shape::Other(_) => true,
        };
        if !size_ok {
            return Err(src.error(
                w,
                "a wrap object's radius, length and semi-axes must be positive",
                "give positive sizes (m)",
            ));
        }
        out.push(Wrap {
            name: name_of(w).to_string(),
            shape,
            translation: src.vec3_or(w, "translation", [0.0; 3])?,
            rotation: src.vec3_or(w, "xyz_body_rotation", [0.0; 3])?,
            quadrant: src.opt_text(w, "quadrant").unwrap_or("all").to_string(),
            active: src.bool_or(w, "active", true)?,
            place: src.place(w),
        });
    }
    Ok(out)
}

/// The body a socket path names: `/bodyset/NAME`, `/ground`, `../NAME` or `NAME`.
fn body_by_path(path: &str, m: &Model) -> Option<usize> {
    let p = path.trim();
    let p = p.strip_prefix("/bodyset/").or_else(|| p.strip_prefix("../")).or_else(|| p.strip_prefix('/')).unwrap_or(p);
    m.bodies.iter().position(|b| b.name == p)
}

fn resolve_body(src: &Src, node: Node, tag: &str, m: &Model) -> Result<usize, Box<Diagnostic>> {
    let path = src.text(node, tag)?;
    body_by_path(path, m).ok_or_else(|| {
        src.error(
            child(node, tag).unwrap_or(node),
            format!("`{path}` is not a body of the model"),
            "name a body of the BodySet as `/bodyset/NAME`, or `/ground`",
        )
    })
}

fn read_frame(src: &Src, joint: Node, tag: &str, m: &Model) -> Result<Frame, Box<Diagnostic>> {
    let name = src.text(joint, tag)?;
    if let Some(frames) = child(joint, "frames") {
        for f in frames.children().filter(|c| c.is_element()) {
            if name_of(f) == name || name.ends_with(&format!("/{}", name_of(f))) {
                if f.tag_name().name() != "PhysicalOffsetFrame" {
                    return Err(src.error(
                        f,
                        format!("a `<{}>` as a joint frame is not supported", crate::xml::tag(f)),
                        "use a PhysicalOffsetFrame",
                    ));
                }
                let body = resolve_body(src, f, "socket_parent", m)?;
                return Ok(Frame {
                    body,
                    translation: src.vec3_or(f, "translation", [0.0; 3])?,
                    orientation: src.vec3_or(f, "orientation", [0.0; 3])?,
                });
            }
        }
    }
    match body_by_path(name, m) {
        Some(body) => Ok(Frame { body, translation: [0.0; 3], orientation: [0.0; 3] }),
        None => Err(src.error(
            child(joint, tag).unwrap_or(joint),
            format!("`{name}` is neither a frame of this joint nor a body"),
            "name one of the joint's `<frames>` or a body (`/bodyset/NAME`)",
        )),
    }
}

fn read_joint(src: &Src, j: Node, m: &mut Model) -> Result<(), Box<Diagnostic>> {
    let kind = tag(j);
    let name = name_of(j).to_string();
    let parent = read_frame(src, j, "socket_parent_frame", m)?;
    let child_frame = read_frame(src, j, "socket_child_frame", m)?;
    if child_frame.body == 0 {
        return Err(src.error(j, format!("joint `{name}` moves the ground"), "make ground the joint's parent"));
    }
    if let Some(other) = m.joints.iter().find(|o| o.child.body == child_frame.body) {
        return Err(src.error(
            j,
            format!(
                "body `{}` has a second joint (`{}` already moves it): closed loops are not supported",
                m.bodies[child_frame.body].name, other.name
            ),
            "keep one joint per body; close loops with constraints in Mollier",
        ));
    }
    let first = m.coordinates.len();
    let mut names = Vec::new();
    if let Some(cs) = child(j, "coordinates") {
        for c in cs.children().filter(|n| n.is_element()) {
            let cname = name_of(c).to_string();
            if m.coordinates.iter().any(|o| o.name == cname) {
                return Err(src.error(
                    c,
                    format!("a second coordinate called `{cname}`"),
                    "give every coordinate its own name",
                ));
            }
            let range = if child(c, "range").is_some() { src.numbers(c, "range", 2)? } else { vec![-1e300, 1e300] };
            m.coordinates.push(Coordinate {
                name: cname.clone(),
                default: src.number_or(c, "default_value", 0.0)?,
                range: [range[0], range[1]],
                locked: src.bool_or(c, "locked", false)?,
                clamped: src.bool_or(c, "clamped", false)?,
                place: src.place(c),
            });
            names.push(cname);
        }
    }
    let n = names.len();
    let need = |k: usize| -> Result<(), Box<Diagnostic>> {
        if n == k {
            Ok(())
        } else {
            Err(src.error(
                j,
                format!("a {kind} has {k} coordinates, this one {n}"),
                format!("give it {k} `<Coordinate>`s"),
            ))
        }
    };
    let lin = || Function::Linear { slope: 1.0, intercept: 0.0 };
    let ax = |label: &str, dir: [f64; 3], c: usize| Axis {
        label: label.into(),
        dir,
        value: AxisValue::Coord(first + c, lin()),
    };
    let (x, y, z) = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]);
    let (rotations, translations) = match kind.as_str() {
        "WeldJoint" => (need(0).map(|_| vec![])?, vec![]),
        "PinJoint" => (need(1).map(|_| vec![ax("rz", z, 0)])?, vec![]),
        "SliderJoint" => (need(1).map(|_| vec![])?, vec![ax("tx", x, 0)]),
        "UniversalJoint" => (need(2).map(|_| vec![ax("rx", x, 0), ax("ry", y, 1)])?, vec![]),
        "BallJoint" | "GimbalJoint" => (need(3).map(|_| vec![ax("rx", x, 0), ax("ry", y, 1), ax("rz", z, 2)])?, vec![]),
        "PlanarJoint" => (need(3).map(|_| vec![ax("rz", z, 0)])?, vec![ax("tx", x, 1), ax("ty", y, 2)]),
        "FreeJoint" => {
            need(6)?;
            (vec![ax("rx", x, 0), ax("ry", y, 1), ax("rz", z, 2)], vec![ax("tx", x, 3), ax("ty", y, 4), ax("tz", z, 5)])
        }
        "CustomJoint" => read_spatial_transform(src, j, first, &names)?,
        _ => {
            return Err(src.error(
                j,
                format!("the joint type `{kind}` is not supported"),
                "Mollier imports Weld, Pin, Slider, Universal, Ball, Gimbal, Planar, Free and Custom joints",
            ));
        }
    };
    m.joints.push(Joint { name, kind, parent, child: child_frame, rotations, translations, place: src.place(j) });
    Ok(())
}

type Axes = (Vec<Axis>, Vec<Axis>);

fn read_spatial_transform(src: &Src, j: Node, first: usize, names: &[String]) -> Result<Axes, Box<Diagnostic>> {
    let st = child(j, "SpatialTransform")
        .ok_or_else(|| src.error(j, "a CustomJoint without a `<SpatialTransform>`", "add its six TransformAxis"))?;
    let axes: Vec<Node> = st.children().filter(|c| c.is_element() && c.tag_name().name() == "TransformAxis").collect();
    if axes.len() != 6 {
        return Err(src.error(
            st,
            format!("a SpatialTransform has 6 TransformAxis, this one {}", axes.len()),
            "rotation1..3, translation1..3",
        ));
    }
    let mut rot = Vec::new();
    let mut tra = Vec::new();
    for (k, a) in axes.iter().enumerate() {
        let dir = src.vec3_or(*a, "axis", [0.0; 3])?;
        let norm = dir.iter().map(|v| v * v).sum::<f64>().sqrt();
        let coords: Vec<&str> = src.opt_text(*a, "coordinates").unwrap_or("").split_whitespace().collect();
        let fnode = child(*a, "function").and_then(function_child).or_else(|| function_child(*a));
        let value = match (coords.as_slice(), fnode) {
            ([], None) => AxisValue::Const(0.0),
            // a constant, or (OpenSim's ScaleTool writes it) a MultiplierFunction of a Constant
            ([], Some(f)) => {
                let fun = read_function(src, f)?;
                match fun.constant() {
                    Some(v) => AxisValue::Const(v),
                    None => {
                        return Err(src.error(
                            f,
                            format!("a {} of no coordinate", fun.describe()),
                            "name the axis's coordinate, or make it a Constant",
                        ));
                    }
                }
            }
            ([c], f) => {
                let idx = names.iter().position(|n| n == c).ok_or_else(|| {
                    src.error(
                        child(*a, "coordinates").unwrap_or(*a),
                        format!("`{c}` is not a coordinate of this joint"),
                        format!("use one of: {}", names.join(", ")),
                    )
                })?;
                let fun = match f {
                    Some(f) => read_function(src, f)?,
                    None => Function::Linear { slope: 1.0, intercept: 0.0 },
                };
                AxisValue::Coord(first + idx, fun)
            }
            _ => {
                return Err(src.error(
                    *a,
                    "an axis driven by several coordinates is not supported",
                    "drive each axis by one coordinate",
                ));
            }
        };
        let is_zero = matches!(value, AxisValue::Const(v) if v == 0.0);
        if !(norm > 0.0) {
            if is_zero {
                continue;
            }
            return Err(src.error(*a, "a TransformAxis with a zero axis", "give its direction"));
        }
        let unit = dir.map(|v| v / norm);
        let axis = Axis { label: name_of(*a).to_string(), dir: unit, value };
        if k < 3 { rot.push(axis) } else { tra.push(axis) }
    }
    Ok((rot, tra))
}

fn coordinate_by_path(m: &Model, path: &str) -> Option<usize> {
    let name = path.trim().rsplit('/').next().unwrap_or("");
    m.coordinates.iter().position(|c| c.name == name)
}

fn read_limit_force(src: &Src, f: Node, m: &Model) -> Result<LimitForce, Box<Diagnostic>> {
    let path = src.text(f, "coordinate")?;
    let coordinate = coordinate_by_path(m, path).ok_or_else(|| {
        src.error(
            child(f, "coordinate").unwrap_or(f),
            format!("`{}` is not a coordinate of the model", path.trim()),
            "name one of the model's coordinates",
        )
    })?;
    // OpenSim's defaults (CoordinateLimitForce::constructProperties)
    let transition = src.number_or(f, "transition", 0.1)?;
    if !(transition > 0.0) {
        return Err(src.error(
            child(f, "transition").unwrap_or(f),
            format!("the transition {transition} is not greater than 0"),
            "OpenSim's step needs a transition of some width (its default is 0.1)",
        ));
    }
    Ok(LimitForce {
        name: name_of(f).to_string(),
        coordinate,
        upper_limit: src.number_or(f, "upper_limit", 0.0)?,
        upper_stiffness: src.number_or(f, "upper_stiffness", 1.0)?,
        lower_limit: src.number_or(f, "lower_limit", 0.0)?,
        lower_stiffness: src.number_or(f, "lower_stiffness", 1.0)?,
        damping: src.number_or(f, "damping", 0.001)?,
        transition,
        place: src.place(f),
    })
}

fn read_constraint(src: &Src, c: Node, m: &mut Model) -> Result<(), Box<Diagnostic>> {
    if c.tag_name().name() != "CoordinateCouplerConstraint" {
        m.unsupported.push(Entry::new(
            &src.place(c),
            name_of(c),
            &tag(c),
            "left out: Mollier imports CoordinateCouplerConstraint only",
        ));
        return Ok(());
    }
    if !src.bool_or(c, "isEnforced", true)? {
        m.unsupported.push(Entry::new(&src.place(c), name_of(c), &tag(c), "left out: not enforced in the model"));
        return Ok(());
    }
    let ind = src.text(c, "independent_coordinate_names")?;
    let words: Vec<&str> = ind.split_whitespace().collect();
    if words.len() != 1 {
        return Err(src.error(
            c,
            "a coupler of several independent coordinates is not supported",
            "couple one coordinate to one",
        ));
    }
    let find = |name: &str, tag: &str| {
        coordinate_by_path(m, name).ok_or_else(|| {
            src.error(
                child(c, tag).unwrap_or(c),
                format!("`{name}` is not a coordinate of the model"),
                "name a coordinate of a joint",
            )
        })
    };
    let independent = find(words[0], "independent_coordinate_names")?;
    let dep_name = src.text(c, "dependent_coordinate_name")?;
    let dependent = find(dep_name, "dependent_coordinate_name")?;
    let f = child(c, "coupled_coordinates_function")
        .and_then(function_child)
        .ok_or_else(|| src.error(c, "a coupler without `<coupled_coordinates_function>`", "give the function"))?;
    let function = read_function(src, f)?;
    let scale = src.number_or(c, "scale_factor", 1.0)?;
    if m.couplers.iter().any(|o| o.dependent == dependent) {
        return Err(src.error(c, format!("coordinate `{dep_name}` is set by two couplers"), "keep one"));
    }
    m.couplers.push(Coupler { name: name_of(c).to_string(), dependent, independent, function, scale });
    Ok(())
}

fn read_muscle(src: &Src, f: Node, m: &Model) -> Result<Muscle, Box<Diagnostic>> {
    let gp =
        child(f, "GeometryPath").ok_or_else(|| src.error(f, "a muscle without a `<GeometryPath>`", "give its path"))?;
    let mut points = Vec::new();
    for p in set_objects(gp, "PathPointSet") {
        let tag_text = tag(p);
        let tag = tag_text.as_str();
        let body = resolve_body(src, p, "socket_parent_frame", m)?;
        let coord = |tag: &str| -> Result<usize, Box<Diagnostic>> {
            let path = src.text(p, tag)?;
            coordinate_by_path(m, path).ok_or_else(|| {
                src.error(
                    child(p, tag).unwrap_or(p),
                    format!("`{path}` is not a coordinate of the model"),
                    "name a coordinate (`/jointset/JOINT/COORDINATE`)",
                )
            })
        };
        let (location, kind) = match tag {
            "PathPoint" => (src.vec3_or(p, "location", [0.0; 3])?, PointKind::Fixed),
            "ConditionalPathPoint" => {
                let r = src.numbers(p, "range", 2)?;
                (
                    src.vec3_or(p, "location", [0.0; 3])?,
                    PointKind::Conditional(coord("socket_coordinate")?, [r[0], r[1]]),
                )
            }
            "MovingPathPoint" => {
                let mut fs: [Option<(usize, Function)>; 3] = [None, None, None];
                for (k, axis) in ["x", "y", "z"].iter().enumerate() {
                    let loc = format!("{axis}_location");
                    if let Some(fnode) = child(p, &loc).and_then(function_child) {
                        let fun = read_function(src, fnode)?;
                        let c = coord(&format!("socket_{axis}_coordinate"))?;
                        fs[k] = Some((c, fun));
                    }
                }
                let loc0 = [0, 1, 2].map(|k| fs[k].as_ref().map_or(0.0, |(_, f)| f.value(0.0)));
                (loc0, PointKind::Moving(Box::new(fs)))
            }
            _ => {
                return Err(src.error(
                    p,
                    format!("the path point type `{tag}` is not supported"),
                    "use PathPoint, ConditionalPathPoint or MovingPathPoint",
                ));
            }
        };
        points.push(PathPoint { name: name_of(p).to_string(), body, location, kind, place: src.place(p) });
    }
    if points.len() < 2 {
        return Err(src.error(
            gp,
            format!("muscle `{}` has {} path points", name_of(f), points.len()),
            "a path needs an origin and an insertion",
        ));
    }
    let mut wraps = Vec::new();
    for w in set_objects(gp, "PathWrapSet") {
        let wname = src.text(w, "wrap_object")?;
        let found = m
            .bodies
            .iter()
            .enumerate()
            .find_map(|(b, body)| body.wraps.iter().position(|o| o.name == wname).map(|k| (b, k)));
        let wrap = found.ok_or_else(|| {
            src.error(
                child(w, "wrap_object").unwrap_or(w),
                format!("`{wname}` is not a wrap object of the model"),
                "name a wrap object of a body's WrapObjectSet",
            )
        })?;
        let range = if child(w, "range").is_some() {
            let r = src.numbers(w, "range", 2)?;
            [r[0] as i64, r[1] as i64]
        } else {
            [-1, -1]
        };
        wraps.push(PathWrap { wrap, range, method: src.opt_text(w, "method").unwrap_or("hybrid").to_string() });
    }
    Ok(Muscle {
        name: name_of(f).to_string(),
        kind: tag(f),
        max_force: src.number_or(f, "max_isometric_force", 0.0)?,
        optimal_fiber_length: src.number_or(f, "optimal_fiber_length", 0.0)?,
        tendon_slack_length: src.number_or(f, "tendon_slack_length", 0.0)?,
        pennation: src.number_or(f, "pennation_angle_at_optimal", 0.0)?,
        points,
        wraps,
        dynamics: if tag(f) == "DeGrooteFregly2016Muscle" { Some(read_de_groote_fregly(src, f)?) } else { None },
        place: src.place(f),
    })
}
