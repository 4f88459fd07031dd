//! The compile step: a checked [`Document`] → a kernel [`Model`], every name resolved to a typed
//! id, elements built by their registered types, bodies expanded into nodes and rigid beams.
//!
//! A body becomes a position node at its origin (named after the body), an orientation node
//! (`body.orientation`), and for each point off the origin a position node (`body.point`)
//! *attached* to the body's frame (`ModelBuilder::attach`): its place follows from the frame's,
//! so it adds no unknowns. The Delft shoulder model joins attachment points to bones by rigid
//! beams instead, which gives the same motion with three unknowns and three equations more per
//! point; a point that is fixed or an input, and a point given as the name of another body's
//! node, is still joined by a generated BEAM whose two ends share the body's orientation node.
//! A point at the origin, or one given as the name of another node, reuses that node.
//!
//! Dynamics: a body's mass sits at a node at its centre of mass — the named point, the origin, or
//! a node `body.com` joined to the origin like a point — and its inertia (about the centre of
//! mass, in body axes) at its orientation node. Gravity, loads and the elements' linear laws are
//! converted to SI and handed to the kernel.

use std::collections::HashMap;
use std::path::Path;

use mollier_beam::Beam;
use mollier_core::element::{Element, NodeKind, Quantity};
use mollier_core::registry::{Frame, Params, Registry, Resolver, Units, Value};
use mollier_core::{
    BuildError, CoordinateLimit, Input, Limits, Load, ModeLaw, ModeLaws, ModeRole, Model, ModelBuilder, NodeId,
    TensionOnly,
};
use mollier_format::{
    Diagnostic, Diagnostics, Document, ModeLawSpec, ModelSpec, Named, ParamValue, PointSpec, UnitsSpec,
};

pub(crate) mod load_sharing;
pub(crate) mod muscles;
mod names;
mod partition;
pub(crate) mod parts;
mod placing;

use load_sharing::LoadSharingSetup;
use names::{HINT_MARK, Lookup, Names, Ref, Why, unknown_node};
pub(crate) use names::{mode_named, suggest};
use partition::PendingInput;
pub use parts::{BodyInfo, InputInfo, NodeRole, PointEntry, UserElement};
use parts::{Built, Context, ZERO_LENGTH};
use placing::{BodyFrame, add, norm, position, rotate, rotate_back, sub};

/// A compiled model with the names it was written with.
#[derive(Debug)]
pub struct Compiled {
    /// The kernel model.
    pub model: Model,
    /// The file it came from (to place later problems).
    pub document: Document,
    /// Every kernel node and what it is in the file, in node order.
    pub nodes: Vec<NodeRole>,
    /// The positions a user can name — plain position nodes, body origins and body points — in
    /// file order: the columns of `positions.csv`.
    pub points: Vec<PointEntry>,
    /// The user's elements, in file order (generated beams are left out).
    pub elements: Vec<UserElement>,
    /// The generalized coordinates, in `q` order.
    pub inputs: Vec<InputInfo>,
    /// The bodies, in file order.
    pub bodies: Vec<BodyInfo>,
    /// Load sharing, when the file has a `[load_sharing]` section.
    pub load_sharing: Option<LoadSharingSetup>,
    /// The Hill muscles of `[muscles]`, for forward simulation.
    pub muscles: Vec<mollier_sim::Muscle>,
}

/// Read, check and compile a model file (or an OpenSim `.osim` model, imported first).
pub fn load(path: &Path, registry: &Registry) -> Result<Compiled, Diagnostics> {
    let what = if is_osim(&path.display().to_string()) { "OpenSim model" } else { "model file" };
    let text = mollier_format::read_text(path, what)?;
    load_text(&path.display().to_string(), &text, registry)
}

/// Check and compile the text of a model file named `file` (TOML, JSON, or an OpenSim `.osim`
/// model, imported first; the name's extension says which and is used in diagnostics). The
/// Python package ships this text to remote workers instead of a compiled model.
pub fn load_text(file: &str, text: &str, registry: &Registry) -> Result<Compiled, Diagnostics> {
    // an OpenSim model is imported in memory (docs/opensim-import.md)
    if is_osim(file) {
        return import_osim(file, text, registry).map(|(_, compiled)| compiled);
    }
    compile(&mollier_format::parse(file, text)?, registry)
}

/// Import the text of an OpenSim `.osim` model and compile it. A muscle whose path the kernel
/// cannot set up in the initial configuration (the compile fails at its element: Rajagopal
/// 2016's gastrocnemii, two cylinders on one stretch) is left out and reported in the import,
/// never the whole model; any other problem is the model's.
pub fn import_osim(
    file: &str,
    text: &str,
    registry: &Registry,
) -> Result<(mollier_osim::Import, Compiled), Diagnostics> {
    import_osim_model(file, &mollier_osim::model::read(file, text)?, registry)
}

/// [`import_osim`] of a model already read (and perhaps changed: `mollier scale` scales one).
pub fn import_osim_model(
    file: &str,
    model: &mollier_osim::model::Model,
    registry: &Registry,
) -> Result<(mollier_osim::Import, Compiled), Diagnostics> {
    let mut leave_out: Vec<(String, String)> = Vec::new();
    loop {
        let imported = mollier_osim::import_model(file, model.clone(), &leave_out)?;
        let doc = mollier_format::parse(&format!("{file}.toml"), &imported.toml)?;
        let failed = match compile(&doc, registry) {
            Ok(compiled) => return Ok((imported, compiled)),
            Err(d) => d,
        };
        // the muscle whose element failed, once: a muscle is left out at most once, so this ends
        let muscle = failed.iter().find_map(|d| {
            let element = d.path.strip_prefix("elements.")?;
            let k = imported.muscle_names.iter().position(|n| n.as_deref() == Some(element))?;
            Some((imported.model.muscles[k].name.clone(), d.message.clone()))
        });
        match muscle {
            Some((name, why)) if !leave_out.iter().any(|(n, _)| *n == name) => {
                leave_out.push((name, format!("its path cannot be set up in the initial configuration ({why})")));
            }
            _ => return Err(failed),
        }
    }
}

fn is_osim(file: &str) -> bool {
    Path::new(file).extension().is_some_and(|e| e.eq_ignore_ascii_case("osim"))
}

/// Compile a checked model file into a kernel model.
pub fn compile(doc: &Document, registry: &Registry) -> Result<Compiled, Diagnostics> {
    compile_with(doc, registry, true)
}

fn to_value(v: &ParamValue) -> Value {
    match v {
        ParamValue::Bool(b) => Value::Bool(*b),
        ParamValue::Number(x) => Value::Number(*x),
        ParamValue::String(s) => Value::String(s.clone()),
        ParamValue::Array(a) => Value::Array(a.iter().map(to_value).collect()),
        ParamValue::Table(t) => Value::Table(t.iter().map(|(k, v)| (k.clone(), to_value(v))).collect()),
    }
}

/// The steps of `docs/architecture.md` ("The compile step"), each a function of its own.
pub(crate) fn compile_with(doc: &Document, registry: &Registry, with_inputs: bool) -> Result<Compiled, Diagnostics> {
    let mut builder = ModelBuilder::new();
    let mut element_paths: HashMap<String, String> = HashMap::new();

    // 1. place bodies and points
    let (frames, globals, mut errors) = placing::place(doc, doc.spec().units.angle_factor());
    // 2. kernel nodes
    let nodes = make_nodes(doc, &frames, &globals, &mut builder, &mut errors);
    // 3. each body's points: attached to its frame once the partition is known (step 5), or
    //    joined to the origin by a rigid beam
    let attachments = body_points(doc, &nodes, &mut builder, &mut element_paths, &mut errors);
    // 4. the user's elements, built by their registered types
    let (elements, built) = build_elements(doc, registry, &nodes.names, &mut builder, &mut element_paths, &mut errors);
    // 5. the partition, in the user's words; then the attachments it leaves
    let (inputs, coord_role) = partition::partition(doc, &nodes.names, &built, &mut builder, &mut errors, with_inputs);
    attach(doc, &nodes.names, attachments, &coord_role, &mut builder, &mut element_paths, &mut errors);
    // 6. dynamics: masses and inertias, gravity, loads, laws
    let (mass_nodes, laws) = add_dynamics(doc, &nodes.names, &nodes.com_own, &built, &mut builder, &mut errors);
    if !errors.is_empty() {
        return Err(Diagnostics(errors));
    }
    // 7. build, and what the file's names became
    let model = builder.build().map_err(|e| Diagnostics::one(build_error(doc, &element_paths, e)))?;
    no_law_on_rigid_modes(doc, &model, &laws, &built)?;
    let inputs = typed_inputs(&model, inputs);
    let (points, bodies) = named_places(doc, &nodes.names, &frames, &globals, &mass_nodes);
    let cx = Context { doc, model: &model, resolver: &nodes.names, elements: &elements, inputs: &inputs };
    // without inputs (the mobility analysis of `check`) there is no load to share
    let load_sharing = if with_inputs { load_sharing::compile(&cx).map_err(Diagnostics)? } else { None };
    let muscles = muscles::compile(&cx).map_err(Diagnostics)?;
    Ok(Compiled {
        model,
        document: doc.clone(),
        nodes: nodes.roles,
        points,
        elements,
        inputs,
        bodies,
        load_sharing,
        muscles,
    })
}

/// Step 2's kernel nodes: the names resolved to them, what each is in the file, and which of
/// them a body owns.
struct Nodes<'a> {
    names: Names<'a>,
    /// What each kernel node is in the file, in node order.
    roles: Vec<NodeRole>,
    /// A body's own node for each of its points (`None` where the point reuses another node).
    point_own: Vec<Vec<Option<NodeId>>>,
    /// A body's own centre-of-mass node, when it has one off the origin.
    com_own: Vec<Option<NodeId>>,
}

/// Step 2: nodes declared under `[nodes]`, each body's origin and orientation, each point off the
/// origin and each centre of mass given as coordinates; names given instead of coordinates share
/// the named node.
fn make_nodes<'a>(
    doc: &'a Document,
    frames: &[Option<BodyFrame>],
    globals: &[Vec<Option<[f64; 3]>>],
    builder: &mut ModelBuilder,
    errors: &mut Vec<Diagnostic>,
) -> Nodes<'a> {
    let spec = doc.spec();
    let lookup = Lookup::new(spec);
    let units = &spec.units;
    let ang = units.angle_factor();
    let mut roles: Vec<NodeRole> = Vec::new();
    // values were checked when the file was parsed, and generated names contain a `.` that
    // the file's names cannot: the builder has nothing to refuse, but is asked anyway
    let mut push_node = |builder: &mut ModelBuilder,
                         errors: &mut Vec<Diagnostic>,
                         path: &str,
                         name: String,
                         role: NodeRole,
                         pos: Option<[f64; 3]>,
                         l: Option<[f64; 4]>| {
        let r = match (pos, l) {
            (Some(p), _) => builder.position_node(name, p),
            (None, Some(l)) => builder.orientation_node(name, l),
            (None, None) => return None,
        };
        match r {
            Ok(id) => {
                roles.push(role);
                Some(id)
            }
            Err(e) => {
                errors.push(doc.error(path, e.to_string(), "check this value"));
                None
            }
        }
    };
    let mut plain = Vec::with_capacity(spec.nodes.len());
    for (name, node) in spec.nodes.iter() {
        let l = node.orientation.as_ref().and_then(|o| o.euler_parameters(ang).ok());
        let p = node.position.map(|p| p.map(|v| units.length_to_si(v)));
        let path = format!("nodes.{name}");
        plain.push(push_node(builder, errors, &path, name.to_string(), NodeRole::Node, p, l));
    }
    let mut origin_own = vec![None; spec.bodies.len()];
    let mut orientation = vec![None; spec.bodies.len()];
    let mut point_own: Vec<Vec<Option<NodeId>>> = Vec::with_capacity(spec.bodies.len());
    let mut com_own: Vec<Option<NodeId>> = Vec::with_capacity(spec.bodies.len());
    for (b, (name, body)) in spec.bodies.iter().enumerate() {
        let mut own = vec![None; body.points.len()];
        if let Some(f) = frames[b] {
            if matches!(body.origin, PointSpec::Coordinates(_)) {
                origin_own[b] = push_node(
                    builder,
                    errors,
                    &format!("bodies.{name}.origin"),
                    name.to_string(),
                    NodeRole::Origin { body: name.to_string() },
                    Some(f.origin),
                    None,
                );
            }
            orientation[b] = push_node(
                builder,
                errors,
                &format!("bodies.{name}.orientation"),
                format!("{name}.orientation"),
                NodeRole::Orientation { body: name.to_string() },
                None,
                Some(f.euler),
            );
            for (p, (pname, point)) in body.points.iter().enumerate() {
                if let (PointSpec::Coordinates(c), Some(x)) = (point, globals[b][p]) {
                    if norm(&c.map(|v| units.length_to_si(v))) > ZERO_LENGTH {
                        let role = NodeRole::Point { body: name.to_string(), point: pname.to_string() };
                        let path = format!("bodies.{name}.points.{pname}");
                        own[p] = push_node(builder, errors, &path, format!("{name}.{pname}"), role, Some(x), None);
                    }
                }
            }
        }
        point_own.push(own);
        com_own.push(match (frames[b], &body.com, body.mass) {
            (Some(f), Some(PointSpec::Coordinates(c)), Some(_)) => {
                let c = c.map(|v| units.length_to_si(v));
                (norm(&c) > ZERO_LENGTH).then(|| add(&f.origin, &rotate(&f.euler, &c))).and_then(|x| {
                    push_node(
                        builder,
                        errors,
                        &format!("bodies.{name}.com"),
                        format!("{name}.com"),
                        NodeRole::CentreOfMass { body: name.to_string() },
                        Some(x),
                        None,
                    )
                })
            }
            _ => None,
        });
    }
    // names given instead of coordinates share the named node
    let limit = spec.nodes.len() + spec.bodies.iter().map(|(_, b)| 1 + b.points.len()).sum::<usize>() + 1;
    let follow = |name: &str| -> Option<NodeId> {
        let mut name = name.to_string();
        for _ in 0..limit {
            match lookup.get(&name)? {
                Ref::Node(i) => return plain[i],
                Ref::Body(b) => match (&spec.bodies.0[b].1.origin, origin_own[b]) {
                    (_, Some(id)) => return Some(id),
                    (PointSpec::Name(n), None) => name = n.clone(),
                    (PointSpec::Coordinates(_), None) => return None,
                },
                Ref::Point(b, p) => match (&spec.bodies.0[b].1.points.0[p].1, point_own[b][p]) {
                    (_, Some(id)) => return Some(id),
                    (PointSpec::Name(n), None) => name = n.clone(),
                    (PointSpec::Coordinates(_), None) => name = spec.bodies.0[b].0.clone(),
                },
            }
        }
        None
    };
    let origin: Vec<Option<NodeId>> =
        spec.bodies.iter().enumerate().map(|(b, (name, _))| frames[b].and_then(|_| follow(name))).collect();
    let points: Vec<Vec<Option<NodeId>>> = spec
        .bodies
        .iter()
        .map(|(name, body)| body.points.iter().map(|(p, _)| follow(&format!("{name}.{p}"))).collect())
        .collect();
    let n_nodes = roles.len();
    let coords: Vec<Vec<f64>> = (0..n_nodes)
        .map(|i| builder.node_coordinates(NodeId::new(i)).map(<[f64]>::to_vec).unwrap_or_default())
        .collect();
    let kinds: Vec<NodeKind> =
        (0..n_nodes).map(|i| builder.node_kind(NodeId::new(i)).unwrap_or(NodeKind::Position)).collect();
    let names = Names { spec, lookup, plain, origin, orientation, points, coords, kinds };
    Nodes { names, roles, point_own, com_own }
}

/// Step 3: each body's own points (and centre of mass), to be attached to the body's frame
/// once the partition is known; a point that names another node is joined to the origin by a
/// rigid beam now.
fn body_points(
    doc: &Document,
    nodes: &Nodes<'_>,
    builder: &mut ModelBuilder,
    element_paths: &mut HashMap<String, String>,
    errors: &mut Vec<Diagnostic>,
) -> Vec<Attachment> {
    let names = &nodes.names;
    let mut attachments: Vec<Attachment> = Vec::new();
    for (b, (name, body)) in doc.spec().bodies.iter().enumerate() {
        let (Some(o), Some(l)) = (names.origin[b], names.orientation[b]) else { continue };
        for (p, (pname, _)) in body.points.iter().enumerate() {
            let Some(t) = names.points[b][p] else { continue };
            if t == o {
                continue;
            }
            let path = format!("bodies.{name}.points.{pname}");
            let d = norm(&sub(&position(&names.coords[t.index()]), &position(&names.coords[o.index()])));
            if !(d > ZERO_LENGTH) {
                errors.push(doc.error(
                    &path,
                    format!("`{name}.{pname}` is at the origin of `{name}` but is another node"),
                    format!("a point at the origin is the origin: refer to `{name}` instead, or move the point"),
                ));
                continue;
            }
            let attachment = Attachment { name: format!("{name}.{pname}"), path, point: t, origin: o, orientation: l };
            if nodes.point_own[b][p] == Some(t) {
                attachments.push(attachment);
            } else {
                attachment.beam(builder, element_paths, errors, doc);
            }
        }
        if let Some(t) = nodes.com_own[b] {
            let path = format!("bodies.{name}.com");
            attachments.push(Attachment { name: format!("{name}.com"), path, point: t, origin: o, orientation: l });
        }
    }
    attachments
}

/// Step 4: the user's elements, each built by its registered type from its table; a problem is
/// placed at the element's field. `built` has one entry per element of the file (`None` where it
/// could not be built).
/// The names, and the file's elements for an element that measures another's mode
/// ([`Resolver::element`]): a copy built from that element's own table. The copy is built with the
/// names alone, so it cannot name an element in turn.
struct WithElements<'a> {
    names: &'a Names<'a>,
    registry: &'a Registry,
    doc: &'a Document,
    units: Units,
}

impl Resolver for WithElements<'_> {
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String> {
        self.names.node(name, kind)
    }
    fn frame(&self, name: &str) -> Option<Frame> {
        self.names.frame(name)
    }
    fn initial(&self, node: NodeId) -> Option<Vec<f64>> {
        self.names.initial(node)
    }
    fn element(&self, reference: &str) -> Result<(Box<dyn Element>, usize), String> {
        let (name, mode) = reference.rsplit_once('.').ok_or_else(|| {
            format!("`{reference}` is not `element.mode`{HINT_MARK}name a joint's mode, e.g. `knee.rotation`")
        })?;
        let spec = self.doc.spec();
        let Some(el) = spec.elements.get(name) else {
            return Err(format!("no element called `{name}`{HINT_MARK}name an element of [elements]"));
        };
        let table: Vec<(String, Value)> = el.params.0.iter().map(|(k, v)| (k.clone(), to_value(v))).collect();
        let params = Params::new(&table, "", self.names, self.units);
        let element = self.registry.build(&el.kind, &params).map_err(|e| {
            format!("element `{name}` cannot be built: {}", e.message.split(HINT_MARK).next().unwrap_or(""))
        })?;
        let k = element.layout().mode_index(mode).ok_or_else(|| {
            let modes: Vec<&str> = element.layout().modes().iter().map(|m| m.name.as_ref()).collect();
            format!("element `{name}` has no mode `{mode}`{HINT_MARK}its modes: {}", modes.join(", "))
        })?;
        Ok((element, k))
    }
}

fn build_elements(
    doc: &Document,
    registry: &Registry,
    names: &Names<'_>,
    builder: &mut ModelBuilder,
    element_paths: &mut HashMap<String, String>,
    errors: &mut Vec<Diagnostic>,
) -> (Vec<UserElement>, Vec<Option<Built>>) {
    let spec = doc.spec();
    let units = &spec.units;
    let kernel_units = Units { length: units.length_factor(), angle: units.angle_factor(), mass: units.mass_factor() };
    let mut built: Vec<Option<Built>> = Vec::with_capacity(spec.elements.len());
    let mut elements = Vec::new();
    for (name, el) in spec.elements.iter() {
        let base = format!("elements.{name}");
        let Some(t) = registry.get(&el.kind) else {
            let known: Vec<&str> = registry.types().map(|t| t.name).collect();
            let hint = match suggest(&el.kind, known.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? (`mollier types` lists the types: {})", known.join(", ")),
                None => format!("the types of this build: {} (see `mollier types`)", known.join(", ")),
            };
            errors.push(doc.error(&format!("{base}.type"), format!("unknown element type `{}`", el.kind), hint));
            built.push(None);
            continue;
        };
        let table: Vec<(String, Value)> = el.params.0.iter().map(|(k, v)| (k.clone(), to_value(v))).collect();
        let with_elements = WithElements { names, registry, doc, units: kernel_units };
        let params = Params::new(&table, "", &with_elements, kernel_units);
        match registry.build(&el.kind, &params) {
            Ok(element) => {
                let modes =
                    element.layout().modes().iter().map(|m| (m.name.to_string(), m.quantity)).collect::<Vec<_>>();
                let own_law = element.law().is_some();
                match builder.add_element(name.to_string(), element) {
                    Ok(id) => {
                        element_paths.insert(name.to_string(), base.clone());
                        elements.push(UserElement { name: name.to_string(), kind: el.kind.clone(), role: t.role, id });
                        built.push(Some(Built { id, modes, own_law }));
                    }
                    Err(e) => {
                        errors.push(doc.error(&base, e.to_string(), "rename the element"));
                        built.push(None);
                    }
                }
            }
            Err(pe) => {
                let path = if pe.path.is_empty() { base.clone() } else { format!("{base}.{}", pe.path) };
                let key = pe.path.rsplit(['.', '[']).next().unwrap_or("");
                let (message, resolver_hint) = match pe.message.split_once(HINT_MARK) {
                    Some((m, h)) => (m.to_string(), Some(h.to_string())),
                    None => (pe.message.clone(), None),
                };
                // a top-level key written after the element's header lands in its table
                let misplaced = (pe.message == "unknown parameter" && pe.path == key)
                    .then(|| mollier_format::misplaced_top_level(&base, key))
                    .flatten();
                let hint = misplaced.or(pe.hint.clone()).or(resolver_hint).unwrap_or_else(|| {
                    match t.params.iter().find(|d| d.name == key) {
                        Some(d) => format!("`{}` of a {}: {}", d.name, t.name, d.doc),
                        None => format!("`mollier types` lists the parameters of `{}`", t.name),
                    }
                });
                errors.push(doc.error(&path, message, hint));
                built.push(None);
            }
        }
    }
    (elements, built)
}

/// Step 5, after the partition: a body's point is attached to its frame, unless it moves on its
/// own (fixed or an input) or a joint cone takes its force from the beam `body.point` at the
/// joint — those are joined to their bodies by beams instead.
fn attach(
    doc: &Document,
    names: &Names<'_>,
    attachments: Vec<Attachment>,
    coord_role: &partition::CoordRoles<'_>,
    builder: &mut ModelBuilder,
    element_paths: &mut HashMap<String, String>,
    errors: &mut Vec<Diagnostic>,
) {
    let cone = doc.spec().load_sharing.as_ref().and_then(|l| l.joint_cone.as_ref());
    let cone_elements: &[String] = cone.map_or(&[], |c| &c.elements);
    // the socket body's point at the cone's joint, which a cone naming the joint by another of
    // its names (a body's origin, a point there) takes its force from
    let socket_point = cone.and_then(|c| {
        let joint = names.node(&c.joint, NodeKind::Position).ok()?;
        Some((joint, format!("{}.", c.body)))
    });
    for a in attachments {
        let at_socket = socket_point.as_ref().is_some_and(|(j, prefix)| a.point == *j && a.name.starts_with(prefix));
        if (0..3).any(|axis| coord_role.contains_key(&(a.point, axis))) || cone_elements.contains(&a.name) || at_socket
        {
            a.beam(builder, element_paths, errors, doc);
        } else {
            builder.attach(a.point, a.origin, a.orientation);
        }
    }
}

/// Step 7: a rigid mode's stress is a reaction, so a law there would be silently ignored.
fn no_law_on_rigid_modes(
    doc: &Document,
    model: &Model,
    laws: &LawModes,
    built: &[Option<Built>],
) -> Result<(), Diagnostics> {
    let spec = doc.spec();
    let mut errors = Vec::new();
    for (e, modes) in laws {
        let (name, b) = (&spec.elements.0[*e].0, built[*e].as_ref().expect("a law is only read for built elements"));
        for &k in modes {
            if let ModeRole::Fixed(_) = model.mode_role(model.mode_id(b.id, k)) {
                let mode = &b.modes[k].0;
                errors.push(doc.error_at_key(
                    &format!("elements.{name}.law.{mode}"),
                    format!("`{name}.{mode}` is rigid: its stress is a reaction, which a law cannot set"),
                    format!("release it (`free = [\"{name}.{mode}\"]`, or `\"{name}\"` for all its modes) or drive it (`inputs`)"),
                ));
            }
        }
    }
    if errors.is_empty() { Ok(()) } else { Err(Diagnostics(errors)) }
}

/// Step 7: the partition's inputs as the built model's typed ids, in `q` order.
fn typed_inputs(model: &Model, inputs: Vec<(String, PendingInput, Quantity)>) -> Vec<InputInfo> {
    inputs
        .into_iter()
        .map(|(name, p, quantity)| InputInfo {
            name,
            input: match p {
                PendingInput::Coordinate(node, axis) => Input::Coordinate(model.coord_id(node, axis)),
                PendingInput::Mode(el, k) => Input::Mode(model.mode_id(el, k)),
            },
            quantity,
        })
        .collect()
}

/// Step 7: the positions a user can name (plain position nodes, then each body's origin and
/// points, in file order: the columns of `positions.csv`) and the bodies with their inertial
/// properties in SI.
fn named_places(
    doc: &Document,
    names: &Names<'_>,
    frames: &[Option<BodyFrame>],
    globals: &[Vec<Option<[f64; 3]>>],
    mass_nodes: &[Option<NodeId>],
) -> (Vec<PointEntry>, Vec<BodyInfo>) {
    let spec = doc.spec();
    let units = &spec.units;
    let mut user_points = Vec::new();
    for (i, (name, _)) in spec.nodes.iter().enumerate() {
        if let Some(id) = names.plain[i].filter(|id| names.kinds[id.index()] == NodeKind::Position) {
            user_points.push(PointEntry { name: name.to_string(), node: id });
        }
    }
    let mut bodies = Vec::new();
    for (b, (name, body)) in spec.bodies.iter().enumerate() {
        if let Some(o) = names.origin[b] {
            user_points.push(PointEntry { name: name.to_string(), node: o });
        }
        for (p, (pname, _)) in body.points.iter().enumerate() {
            if let Some(id) = names.points[b][p] {
                user_points.push(PointEntry { name: format!("{name}.{pname}"), node: id });
            }
        }
        if let (Some(position), Some(orientation), Some(f)) = (names.origin[b], names.orientation[b], frames[b]) {
            let com = match &body.com {
                Some(PointSpec::Coordinates(c)) => Some(c.map(|v| units.length_to_si(v))),
                Some(PointSpec::Name(p)) => body
                    .points
                    .position(p)
                    .and_then(|i| globals[b][i])
                    .map(|x| rotate_back(&f.euler, &sub(&x, &f.origin))),
                None => None,
            };
            bodies.push(BodyInfo {
                name: name.to_string(),
                frame: Frame { position, orientation },
                mass: body.mass.map(|m| units.mass_to_si(m)),
                com,
                inertia: body.inertia.as_ref().map(|i| i.matrix().map(|r| r.map(|v| units.inertia_to_si(v)))),
                mass_node: mass_nodes[b],
            });
        }
    }
    (user_points, bodies)
}

/// The nodes a load named `at` acts on: the point for its force, the orientation for its moment
/// (each when asked for; `None` when it could not be made, which was reported already).
/// A body's point, with the body frame it is rigidly part of.
struct Attachment {
    /// `body.point` (or `body.com`).
    name: String,
    /// Its field path in the file.
    path: String,
    point: NodeId,
    origin: NodeId,
    orientation: NodeId,
}

impl Attachment {
    /// Join the point to its body by a generated rigid BEAM whose two ends share the body's
    /// orientation node: with one orientation node only `elongation`, `bending_y_p` and
    /// `bending_z_p` are independent, so those are held and the other three released.
    fn beam(
        self,
        builder: &mut ModelBuilder,
        element_paths: &mut HashMap<String, String>,
        errors: &mut Vec<Diagnostic>,
        doc: &Document,
    ) {
        let (o, l, t) = (self.origin, self.orientation, self.point);
        match builder.add_generated_element(self.name.clone(), Box::new(Beam::new(o, l, t, l, None))) {
            Ok(id) => {
                for m in ["torsion", "bending_y_q", "bending_z_q"] {
                    builder.free_mode(id, m);
                }
                element_paths.insert(self.name, self.path);
            }
            Err(e) => errors.push(doc.error(&self.path, e.to_string(), "rename the point")),
        }
    }
}

fn load_nodes(
    spec: &ModelSpec,
    names: &Names<'_>,
    at: &str,
    force: bool,
    moment: bool,
) -> Result<(Option<NodeId>, Option<NodeId>), Why> {
    let Some(r) = names.lookup.get(at) else {
        if let Some(body) = at.strip_suffix(".orientation").filter(|b| spec.bodies.position(b).is_some()) {
            return Err((
                format!("`{at}` is not a name in the file"),
                format!("a body's name stands for its orientation: write `at = \"{body}\"`"),
            ));
        }
        return Err(unknown_node(spec, at));
    };
    let (point, body) = match r {
        Ref::Node(i) => {
            let id = names.plain[i];
            let kind = id.map(|id| names.kinds[id.index()]);
            if force && kind == Some(NodeKind::Orientation) {
                return Err((
                    format!("`{at}` is an orientation node: a force acts at a point"),
                    "name a point: a position node, a body (its origin) or `body.point`".to_string(),
                ));
            }
            if moment && kind == Some(NodeKind::Position) {
                return Err((
                    format!("`{at}` is a point node, which belongs to no body: a moment acts on a body"),
                    "name a body (or one of its points), or an orientation node".to_string(),
                ));
            }
            (id, id)
        }
        Ref::Body(b) => (names.origin[b], names.orientation[b]),
        Ref::Point(b, p) => (names.points[b][p], names.orientation[b]),
    };
    Ok((point.filter(|_| force), body.filter(|_| moment)))
}

/// Per element with a `law` table (its index in the file): the modes the table names.
type LawModes = Vec<(usize, Vec<usize>)>;

/// Step 6: masses (at each body's centre of mass), inertias, gravity, loads and the elements'
/// laws, added to `builder`; problems into `errors`. Returns each body's mass node and, per
/// element with a `law` table, the modes it names.
fn add_dynamics(
    doc: &Document,
    names: &Names<'_>,
    com_own: &[Option<NodeId>],
    built: &[Option<Built>],
    builder: &mut ModelBuilder,
    errors: &mut Vec<Diagnostic>,
) -> (Vec<Option<NodeId>>, LawModes) {
    let spec = doc.spec();
    let units = &spec.units;
    let mut mass_nodes = vec![None; spec.bodies.len()];
    for (b, (_, body)) in spec.bodies.iter().enumerate() {
        let Some(mass) = body.mass else { continue };
        let node = match &body.com {
            Some(PointSpec::Coordinates(_)) => com_own[b].or(names.origin[b]),
            Some(PointSpec::Name(p)) => body.points.position(p).and_then(|i| names.points[b][i]),
            None => names.origin[b],
        };
        // a body that could not be placed was reported where the cause is
        if let Some(node) = node {
            builder.add_mass(node, units.mass_to_si(mass));
            mass_nodes[b] = Some(node);
        }
        if let (Some(inertia), Some(l)) = (&body.inertia, names.orientation[b]) {
            // symmetric to the parser's tolerance: take the symmetric part
            let j = inertia.matrix().map(|r| r.map(|v| units.inertia_to_si(v)));
            builder.add_rotational_inertia(l, [0, 1, 2].map(|i| [0, 1, 2].map(|k| 0.5 * (j[i][k] + j[k][i]))));
        }
    }
    if let Some(g) = spec.gravity {
        builder.set_gravity(g);
    }
    for (name, load) in spec.loads.iter() {
        let path = format!("loads.{name}.at");
        match load_nodes(spec, names, &load.at, load.force.is_some(), load.moment.is_some()) {
            Ok((point, body)) => {
                if let (Some(force), Some(node)) = (load.force, point) {
                    builder.add_load(Load::Force { node, force });
                }
                if let (Some(moment), Some(node)) = (load.moment, body) {
                    builder.add_load(Load::Moment { node, moment });
                }
            }
            Err((m, h)) => errors.push(doc.error(&path, m, h)),
        }
    }
    let mut laws: LawModes = Vec::new();
    for (e, (name, el)) in spec.elements.iter().enumerate() {
        let (Some(law), Some(b)) = (&el.law, &built[e]) else { continue };
        let path = format!("elements.{name}.law");
        if b.own_law {
            errors.push(doc.error(
                &path,
                format!("a `{}` has a constitutive law of its own, which a `law` table would replace", el.kind),
                "delete the `law` table; the element type's parameters set its law",
            ));
            continue;
        }
        match mode_laws(law, b, units) {
            Ok((laws_of_modes, modes)) => {
                builder.set_law(b.id, Box::new(laws_of_modes));
                laws.push((e, modes));
            }
            Err((mode, m, h)) => errors.push(doc.error_at_key(
                &format!("{path}.{mode}"),
                format!("element `{name}` ({}) {m}", el.kind),
                h,
            )),
        }
    }
    (mass_nodes, laws)
}

/// The laws of an element's modes from its `law` table in SI units, and the modes it names; or
/// the mode that is wrong, why, and a hint.
fn mode_laws(
    law: &Named<ModeLawSpec>,
    b: &Built,
    units: &UnitsSpec,
) -> Result<(ModeLaws, Vec<usize>), (String, String, String)> {
    let mut laws = ModeLaws::new(vec![ModeLaw::default(); b.modes.len()]);
    let mut modes = Vec::with_capacity(law.len());
    for (mode, spec) in law.iter() {
        let Some(k) = b.modes.iter().position(|(m, _)| m == mode) else {
            let all: Vec<&str> = b.modes.iter().map(|(m, _)| m.as_str()).collect();
            let hint = match suggest(mode, all.iter().copied()) {
                Some(s) => format!("did you mean `{s}`? its modes: {}", all.join(", ")),
                None => format!("its modes: {}", all.join(", ")),
            };
            return Err((mode.to_string(), format!("has no mode `{mode}`"), hint));
        };
        // the stress is N or N m in any file; the file's units apply to the "per" part
        let quantity = b.modes[k].1;
        let per = |v: f64| match quantity {
            Quantity::Length => units.per_length_to_si(v),
            Quantity::Angle => units.per_angle_to_si(v),
            Quantity::Dimensionless => v,
        };
        let value = |v: f64| match quantity {
            Quantity::Length => units.length_to_si(v),
            Quantity::Angle => v * units.angle_factor(),
            Quantity::Dimensionless => v,
        };
        let tension_only = match &spec.tension_only {
            None => None,
            Some(t) => {
                // a slack length becomes a slack value when the model is built (Law::bind)
                if let Some(l) = t.slack_length {
                    if quantity != Quantity::Length {
                        return Err((
                            format!("{mode}.tension_only.slack_length"),
                            format!("`{mode}` is not a length"),
                            "give `slack` instead: the mode's value at which the spring engages".into(),
                        ));
                    }
                    laws.slack_lengths[k] = Some(units.length_to_si(l));
                }
                let slack = t.slack.map_or(0.0, value);
                Some(TensionOnly { stiffness: per(t.stiffness), slack, epsilon: value(t.epsilon) })
            }
        };
        let limits = spec.limits.map(|l| Limits {
            min: value(l.range[0]),
            max: value(l.range[1]),
            stiffness: per(per(l.stiffness)),
        });
        let coordinate_limit = spec.coordinate_limit.map(|c| CoordinateLimit {
            lower: value(c.lower_limit),
            upper: value(c.upper_limit),
            lower_stiffness: per(c.lower_stiffness),
            upper_stiffness: per(c.upper_stiffness),
            damping: per(c.damping),
            transition: value(c.transition),
        });
        laws.laws[k] = ModeLaw {
            preload: spec.preload.unwrap_or(0.0),
            stiffness: per(spec.stiffness.unwrap_or(0.0)),
            damping: per(spec.damping.unwrap_or(0.0)),
            tension_only,
            limits,
            coordinate_limit,
        };
        modes.push(k);
    }
    Ok((laws, modes))
}

fn build_error(doc: &Document, paths: &HashMap<String, String>, e: BuildError) -> Diagnostic {
    match &e {
        BuildError::Element { element, error } => {
            let path = paths.get(element).cloned().unwrap_or_default();
            let msg = error.to_string();
            if msg.contains("zero length") {
                doc.error(
                    &path,
                    "zero-length element: its end points coincide in the initial configuration",
                    "move one end, or make the two ends one node",
                )
            } else {
                doc.error(&path, msg, "check the element's nodes and parameters in the initial configuration")
            }
        }
        BuildError::NodeKind { element, .. } | BuildError::UnknownMode { element, .. } => {
            let path = paths.get(element).cloned().unwrap_or_default();
            doc.error(&path, e.to_string(), "check the element's node parameters")
        }
        _ => doc.error("", e.to_string(), "this is a problem Mollier did not expect: please report it with the file"),
    }
}
