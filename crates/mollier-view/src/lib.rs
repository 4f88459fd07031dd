//! Mollier's 3D viewer: a compiled model moved through a motion, turned into the geometry of
//! every frame and one self-contained HTML page that draws it with three.js.
//!
//! Mollier computes everything drawn ([`Geometry::build`]): per frame the kernel's positions of
//! the named points (the columns of `mollier kinematics`' `positions.csv`, bit for bit), each
//! user element's [`drawing`](mollier_core::ElementInfo::drawing) — a muscle's path with its
//! surface parts along the geodesics, the obstacles and contact ellipsoids as solids — and the
//! muscles' lengths; with results ([`Forces`]) their forces.
//! The page ([`page`]) only draws: it embeds that geometry as JSON (large arrays as base64
//! little-endian floats, see [`Geometry::to_json`]), the three.js bundle of `assets/` (MIT,
//! `assets/three-LICENSE`, provenance in `assets/three-PROVENANCE`) and its own script, and
//! opens from disk with no network.

mod encode;
mod forces;
pub mod mesh;
mod page;
mod pair;
pub mod snapshot;
pub mod webm;

use mollier::{Compiled, FrameError, KinematicsRun, NodeRole, Rows};
use mollier_core::element::{Drawing, NodeKind, ShapeKind};
use mollier_core::geometry::rotate;
use mollier_core::{ElementRole, ModeRole, NodeId};
use mollier_format::AxesSpec;
use serde_json::{Value, json};

pub use forces::{Forces, read_forces};
pub use page::page;

/// Why a view cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A frame of the motion cannot be solved.
    #[error("frame {frame} (t = {time} s): {source}")]
    Frame {
        /// Its index.
        frame: usize,
        /// Its time (s).
        time: f64,
        /// Why.
        source: FrameError,
    },
    /// A drawn coordinate is not finite (the page would draw nothing there).
    #[error("frame {frame} (t = {time} s): element `{element}` is drawn with a non-finite coordinate")]
    NonFinite {
        /// Its index.
        frame: usize,
        /// Its time (s).
        time: f64,
        /// The element.
        element: String,
    },
    /// The motion has no frame to show.
    #[error("the motion has no frames")]
    Empty,
    /// A results file cannot be read or does not fit the model.
    #[error("{0}")]
    Results(String),
}

/// How an element is grouped in the page's list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// A muscle, listed by name: an element the model's `[load_sharing]` names as a muscle, or
    /// without that section a line of action ([`ElementRole::LineOfAction`]: `truss`,
    /// `curved-truss`) whose elongation is free.
    Muscle,
    /// A contact ([`ElementRole::Contact`]: `surface`, `soft-contact`), drawn with its ellipsoid.
    Contact,
    /// A joint of orientations only (`hinge`, `cardan-joint`, ...): its axes, placed at the
    /// joint by the viewer ([`ElementView::place`]).
    JointAxes,
    /// Any other element (ligaments, fixed trusses; a joint of orientations that reaches no
    /// body, not drawn).
    Element,
}

/// One drawn element.
#[derive(Clone, Debug)]
pub struct ElementView {
    /// Its name in the file.
    pub name: String,
    /// Its type name.
    pub kind: String,
    /// Its group.
    pub group: Group,
    /// Lines it draws (the same in every frame; a frame that draws fewer leaves the rest empty).
    pub lines: usize,
    /// Its solids, in order.
    pub shapes: Vec<ShapeKind>,
    /// For a muscle, where its length is in [`Geometry::lengths`]' rows.
    pub muscle: Option<usize>,
    /// For a joint of orientations only, the position node it is drawn at: its drawing (unit
    /// segments about the global origin) is scaled by [`Geometry::axis_length`] and moved there.
    pub place: Option<NodeId>,
}

/// The geometry of every frame of a motion through a model: what the page draws.
#[derive(Clone, Debug)]
pub struct Geometry {
    /// A title (the model file).
    pub title: String,
    /// The named points, as in `positions.csv`.
    pub points: Vec<String>,
    /// Bodies: name, then indices into `points` (the origin first when it is named).
    pub bodies: Vec<(String, Vec<usize>)>,
    /// Time of each frame (s).
    pub times: Vec<f64>,
    /// Positions: `frames x points x 3` (m), the kernel's, as `mollier kinematics` writes them.
    pub positions: Vec<f64>,
    /// Body frames: `frames x bodies x 12`, the origin then the unit x, y, z axes (m).
    pub body_frames: Vec<f32>,
    /// Bones drawn as capsules where a body has no mesh ([`capsules`]).
    pub capsules: Vec<Capsule>,
    /// The bodies' meshes ([`mesh::load_meshes`]); a body with one is drawn without capsules.
    pub meshes: Vec<mesh::BodyMesh>,
    /// Another model or other results, drawn in the right half of the page with the same camera
    /// ([`Geometry::with_compare`]).
    pub compare: Option<Box<Geometry>>,
    /// The forces file drawn ([`Geometry::with_forces`]), named beside the title.
    pub results: Option<String>,
    /// The drawn elements.
    pub elements: Vec<ElementView>,
    /// Points per line and frame: `frames x lines` (lines of all elements in order).
    pub line_counts: Vec<u32>,
    /// The lines' points, frame after frame, line after line (m).
    pub line_points: Vec<f32>,
    /// Solids per frame: `frames x shapes x 12`, centre then three scaled axes (m).
    pub shapes: Vec<f32>,
    /// The muscles' names, in the order of [`Self::lengths`]' columns.
    pub muscles: Vec<String>,
    /// Muscle lengths: `frames x muscles` (m).
    pub lengths: Vec<f64>,
    /// Muscle forces, when results were given: `frames x muscles` (N; NaN where none).
    pub forces: Option<Vec<f64>>,
    /// The joint's stability cone of `[load_sharing]`, when the model has one.
    pub cone: Option<Cone>,
    /// Length of a drawn joint axis (m): 8 % of the largest extent of the named points in the
    /// first frame (twice a body frame's triad in the page).
    pub axis_length: f64,
    /// When the motion had more frames than [`FRAME_BUDGET`] allows at the step asked for: its
    /// number of frames and the step taken instead (every `.1`-th frame; the title says so).
    pub thinned: Option<(usize, usize)>,
    /// The person's forward and up directions (unit vectors in the global frame) from the
    /// model's `axes`: the page's front, side and top views.
    pub axes: AxesSpec,
}

/// A bone drawn as a capsule (a cylinder with round ends) between two named points of a body,
/// which move with it.
#[derive(Clone, Debug, PartialEq)]
pub struct Capsule {
    /// The body, an index into [`Geometry::bodies`].
    pub body: usize,
    /// Its ends, indices into [`Geometry::points`].
    pub ends: [usize; 2],
    /// The body whose origin its far end is, when it goes to a joint (the page leaves the
    /// capsule out when that body has a mesh and this one has none: the mesh shows that bone).
    pub child: Option<usize>,
    /// Its radius (m).
    pub radius: f64,
}

/// The most frames a page draws (the last frame counted). A longer motion is thinned to every
/// k-th frame: a page of 1,000,000 frames of a small model was 526 MB, and a page's size and
/// the memory to make it grow with the frames it draws.
pub const FRAME_BUDGET: usize = 2_000;

/// The step between the frames drawn of a motion of `frames` frames: `every`, or larger so that
/// at most [`FRAME_BUDGET`] frames are drawn (every step-th frame from the first, and the last).
pub fn frame_step(frames: usize, every: usize) -> usize {
    every.max(1).max(frames.saturating_sub(1).div_ceil(FRAME_BUDGET - 2))
}

/// A joint's stability cone and the joint force, per frame.
#[derive(Clone, Debug)]
pub struct Cone {
    /// The joint centre as the file names it.
    pub joint: String,
    /// Half-angles towards the cone's y and z axes (rad).
    pub half_angles: [f64; 2],
    /// Per frame: the joint centre, then the cone's unit x (into the socket), y and z axes in
    /// global coordinates: `frames x 12` (m).
    pub frames: Vec<f64>,
    /// The force the joint exerts on the socket, global: `frames x 3` (N; NaN where none), when
    /// results were given ([`Geometry::with_joint_force`]).
    pub force: Option<Vec<f64>>,
}

impl Cone {
    /// The cone of `[load_sharing]`, before any frame is placed.
    fn empty(c: &mollier::ConeInfo) -> Self {
        Cone { joint: c.joint.clone(), half_angles: c.half_angles, frames: Vec::new(), force: None }
    }

    /// Whether a force with components `f` in the cone frame (N) points inside the cone: along
    /// +x, within the half-angles (an elliptic cone).
    pub fn contains(&self, f: &[f64; 3]) -> bool {
        let [ty, tz] = self.half_angles.map(f64::tan);
        f[0] > 0.0 && (f[1] / (f[0] * ty)).powi(2) + (f[2] / (f[0] * tz)).powi(2) <= 1.0
    }
}

/// The columns `columns` (unit vectors in a body) turned by its Euler parameters `lam`:
/// R(λ)/|λ|² is the rotation whatever the norm the solve left.
fn rotated(lam: &[f64; 4], columns: [[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let sigma: f64 = lam.iter().map(|l| l * l).sum();
    columns.map(|u| rotate(lam, &u).map(|v| v / sigma))
}

impl Geometry {
    /// Solve the model through a motion — times `times` (s) and the inputs `q` of each frame
    /// (`frames x n_q`, SI, as [`mollier::Motion`] has them) —, every `every`-th frame (1: all; the last is always
    /// kept), and collect what is drawn. Frames are solved in order, each from the previous
    /// solution, as `mollier kinematics` does; a frame that cannot be solved is an error (a view
    /// is complete or absent).
    pub fn build(compiled: &Compiled, times: &[f64], q: &Rows, every: usize, title: &str) -> Result<Self, ViewError> {
        let n = times.len().min(q.len());
        if n == 0 {
            return Err(ViewError::Empty);
        }
        let asked = every.max(1);
        let every = frame_step(n, asked);
        let thinned = (every > asked).then_some((n, every));
        let title = match thinned {
            Some((n, k)) => format!("{title} (every {k}th of {n} frames: a page draws at most {FRAME_BUDGET})"),
            None => title.to_string(),
        };
        let model = &compiled.model;
        let mut run = KinematicsRun::new(compiled);
        let header = run.deformation_header();
        let points: Vec<String> = compiled.points.iter().map(|p| p.name.clone()).collect();
        let bodies = bodies(compiled);
        let places = joint_places(compiled);
        // the muscles: those the model's `[load_sharing]` names, else as `mollier kinematics`
        // chooses them (a line of action whose elongation is free)
        let named: Option<Vec<String>> = compiled.load_sharing.as_ref().map(|s| s.muscle_names());
        let mut muscles = Vec::new();
        let mut muscle_modes = Vec::new();
        let mut elements = Vec::new();
        for el in &compiled.elements {
            let elongation = model.mode_by_name(el.id, "elongation").filter(|m| match &named {
                Some(names) => names.contains(&el.name),
                None => el.role == ElementRole::LineOfAction && model.mode_role(*m) == ModeRole::Dependent,
            });
            let muscle = elongation.and_then(|m| {
                let col = header.iter().position(|h| *h == format!("{}.elongation", el.name))?;
                muscles.push(el.name.clone());
                muscle_modes.push((col, model.mode_reference(m).unwrap_or(0.0)));
                Some(muscles.len() - 1)
            });
            let d = model
                .element(el.id)
                .drawing(&model.element_coords(el.id).iter().map(|&c| model.x0()[c]).collect::<Vec<_>>());
            // a joint of orientations that reaches no body is not drawn (it has no place)
            let (joint, place) = (places[elements.len()].is_some(), places[elements.len()].flatten());
            let group = if muscle.is_some() {
                Group::Muscle
            } else if place.is_some() {
                Group::JointAxes
            } else if el.role == ElementRole::Contact {
                Group::Contact
            } else {
                Group::Element
            };
            elements.push(ElementView {
                name: el.name.clone(),
                kind: el.kind.clone(),
                group,
                lines: if joint && place.is_none() { 0 } else { d.lines.len() },
                shapes: d.shapes.iter().map(|s| s.kind).collect(),
                muscle,
                place,
            });
        }
        let frames: Vec<usize> = (0..n).filter(|i| i % every == 0 || *i == n - 1).collect();
        let mut g = Geometry {
            title,
            points,
            bodies,
            times: Vec::with_capacity(frames.len()),
            positions: Vec::new(),
            body_frames: Vec::new(),
            capsules: Vec::new(),
            meshes: Vec::new(),
            compare: None,
            results: None,
            elements,
            line_counts: Vec::new(),
            line_points: Vec::new(),
            shapes: Vec::new(),
            muscles,
            lengths: Vec::new(),
            forces: None,
            cone: compiled.load_sharing.as_ref().and_then(|ls| ls.cone.as_ref()).map(Cone::empty),
            axis_length: 0.0,
            thinned,
            axes: compiled.document.spec().axes.unwrap_or(AxesSpec::ISB),
        };
        let cone_info = compiled.load_sharing.as_ref().and_then(|ls| ls.cone.as_ref());
        let mut solved = 0;
        for i in 0..n {
            // every frame is solved (each starts from the previous one), only the kept are drawn
            let time = times[i];
            let out = run.solve(&q[i]).map_err(|source| ViewError::Frame { frame: i, time, source })?;
            if frames.get(solved) != Some(&i) {
                continue;
            }
            solved += 1;
            if g.times.is_empty() {
                g.axis_length = 0.08 * extent(&out.positions);
                g.capsules = capsules(compiled, &out.positions);
            }
            g.times.push(time);
            g.positions.extend_from_slice(&out.positions);
            g.lengths.extend(muscle_modes.iter().map(|&(col, l0)| l0 + out.deformations[col]));
            let data = run.data();
            for b in &compiled.bodies {
                let o = data.position(model, b.frame.position);
                let axes = rotated(
                    &data.orientation(model, b.frame.orientation),
                    [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
                );
                g.body_frames.extend(o.iter().chain(axes.iter().flatten()).map(|&v| v as f32));
            }
            if let (Some(info), Some(cone)) = (cone_info, g.cone.as_mut()) {
                cone.frames.extend(data.position(model, info.node));
                let columns = std::array::from_fn(|a| [info.rotation[0][a], info.rotation[1][a], info.rotation[2][a]]);
                cone.frames.extend(rotated(&data.orientation(model, info.body), columns).iter().flatten());
            }
            let x = data.x();
            for (el, view) in compiled.elements.iter().zip(&g.elements) {
                let local: Vec<f64> = model.element_coords(el.id).iter().map(|&c| x[c]).collect();
                let mut d = model.element(el.id).drawing_with(&local, data.element_state(el.id));
                if let Some(node) = view.place {
                    let at = data.position(model, node);
                    for p in d.lines.iter_mut().flatten() {
                        *p = std::array::from_fn(|a| at[a] + g.axis_length * p[a]);
                    }
                }
                if !finite(&d) {
                    return Err(ViewError::NonFinite { frame: i, time, element: el.name.clone() });
                }
                for k in 0..view.lines {
                    let line = d.lines.get(k).map(Vec::as_slice).unwrap_or(&[]);
                    g.line_counts.push(line.len() as u32);
                    g.line_points.extend(line.iter().flatten().map(|&v| v as f32));
                }
                for k in 0..view.shapes.len() {
                    let s = d.shapes.get(k);
                    let mut v = [0.0f32; 12];
                    if let Some(s) = s {
                        let all = s.centre.iter().chain(s.axes.iter().flatten());
                        for (slot, c) in v.iter_mut().zip(all) {
                            *slot = *c as f32;
                        }
                    }
                    g.shapes.extend_from_slice(&v);
                }
            }
        }
        Ok(g)
    }

    /// Draw these meshes for their bodies (in place of those bodies' capsules).
    pub fn with_meshes(mut self, meshes: Vec<mesh::BodyMesh>) -> Self {
        self.meshes = meshes;
        self
    }

    /// Number of frames drawn.
    pub fn frames(&self) -> usize {
        self.times.len()
    }

    /// Add muscle forces read from results ([`read_forces`]): matched by muscle name and by
    /// time (within 1e-9 s); a muscle or frame without a value is drawn without a force colour.
    pub fn with_forces(mut self, forces: &Forces) -> Result<Self, ViewError> {
        let cols: Vec<Option<usize>> = self.muscles.iter().map(|m| forces.column(m)).collect();
        if cols.iter().all(Option::is_none) {
            return Err(ViewError::Results(format!(
                "{}: no column names a muscle of the model (e.g. `{}`)",
                forces.file,
                self.muscles.first().map_or("", String::as_str)
            )));
        }
        let mut values = Vec::with_capacity(self.times.len() * self.muscles.len());
        for &t in &self.times {
            let row = forces.row_at(t);
            values.extend(cols.iter().map(|c| match (row, c) {
                (Some(r), Some(c)) => forces.values[r][*c],
                _ => f64::NAN,
            }));
        }
        self.forces = Some(values);
        self.results = Some(forces.file.clone());
        Ok(self)
    }

    /// Add the joint force of each drawn frame, in the cone frame (N; `None` where a frame has
    /// none), from results: `joint_force.x/y/z` of `reactions.csv`, or a study's
    /// `FrameResult::cone_force`. An error when the model has no cone or the count is wrong.
    pub fn with_joint_force(mut self, force: &[Option<[f64; 3]>]) -> Result<Self, ViewError> {
        let n = self.frames();
        let Some(cone) = self.cone.as_mut() else {
            return Err(ViewError::Results("the model's [load_sharing] has no joint cone to draw a force in".into()));
        };
        if force.len() != n {
            return Err(ViewError::Results(format!("{} joint forces for {n} frames", force.len())));
        }
        let mut global = Vec::with_capacity(3 * n);
        for (k, f) in force.iter().enumerate() {
            let axes = &cone.frames[k * 12 + 3..k * 12 + 12];
            global.extend((0..3).map(|c| match f {
                Some(f) if f.iter().all(|v| v.is_finite()) => (0..3).map(|a| f[a] * axes[3 * a + c]).sum(),
                _ => f64::NAN,
            }));
        }
        cone.force = Some(global);
        Ok(self)
    }

    /// The JSON the page reads. Large arrays are base64 strings of little-endian numbers:
    /// `positions` and `lengths` as `f64` (exact), `line_points`, `shapes` and `body_frames` as `f32` (0.1 µm
    /// at a metre, for drawing only), `forces` as `f64` with NaN where there is none;
    /// `line_counts` is a plain array. Array shapes as in [`Geometry`]'s fields.
    pub fn to_json(&self) -> Value {
        let group = |g: Group| match g {
            Group::Muscle => "muscle",
            Group::Contact => "contact",
            Group::JointAxes => "axes",
            Group::Element => "element",
        };
        let shape = |s: &ShapeKind| match s {
            ShapeKind::Sphere => "sphere",
            ShapeKind::Cylinder => "cylinder",
            ShapeKind::Ellipsoid => "ellipsoid",
        };
        let elements: Vec<Value> = self
            .elements
            .iter()
            .map(|e| {
                json!({"name": e.name, "kind": e.kind, "group": group(e.group), "lines": e.lines,
                    "shapes": e.shapes.iter().map(shape).collect::<Vec<_>>(), "muscle": e.muscle})
            })
            .collect();
        let bodies: Vec<Value> = self.bodies.iter().map(|(n, p)| json!({"name": n, "points": p})).collect();
        let capsules: Vec<Value> = self
            .capsules
            .iter()
            .map(|c| json!({"body": c.body, "ends": c.ends, "child": c.child, "radius": c.radius}))
            .collect();
        json!({
            "format": 1,
            "title": self.title,
            "units": {"length": "m", "force": "N", "time": "s"},
            "points": self.points,
            "bodies": bodies,
            "times": self.times,
            "positions": encode::f64s(&self.positions),
            "body_frames": encode::f32s(&self.body_frames),
            "capsules": capsules,
            "meshes": self.meshes.iter().map(encode::mesh).collect::<Vec<_>>(),
            "compare": self.compare.as_ref().map(|c| c.to_json()),
            "steps": self.compare.as_ref().map(|_| self.steps()),
            "results": self.results,
            "elements": elements,
            "line_counts": self.line_counts,
            "line_points": encode::f32s(&self.line_points),
            "shapes": encode::f32s(&self.shapes),
            "muscles": self.muscles,
            "lengths": encode::f64s(&self.lengths),
            "forces": self.forces.as_ref().map(|f| encode::f64s(f)),
            "axis_length": self.axis_length,
            "forward": self.axes.forward.vector(),
            "up": self.axes.up.vector(),
            "cone": self.cone.as_ref().map(|c| json!({
                "joint": c.joint,
                "half_angles": c.half_angles,
                "frames": encode::f64s(&c.frames),
                "force": c.force.as_ref().map(|f| encode::f64s(f)),
                "inside": c.force.as_ref().map(|_| self.inside()),
            })),
        })
    }
}

impl Geometry {
    /// Per frame whether the joint force is inside its cone (false where there is none).
    fn inside(&self) -> Vec<bool> {
        let Some(c) = &self.cone else { return Vec::new() };
        let Some(f) = &c.force else { return Vec::new() };
        (0..self.frames())
            .map(|k| {
                let axes = &c.frames[k * 12 + 3..k * 12 + 12];
                let local = [0, 1, 2].map(|a| (0..3).map(|i| f[3 * k + i] * axes[3 * a + i]).sum::<f64>());
                local.iter().all(|v| v.is_finite()) && c.contains(&local)
            })
            .collect()
    }
}

fn finite(d: &Drawing) -> bool {
    d.lines.iter().flatten().flatten().all(|v| v.is_finite())
        && d.shapes.iter().all(|s| s.centre.iter().chain(s.axes.iter().flatten()).all(|v| v.is_finite()))
}

/// Each body and the named points on it (its origin first when named), by the kernel node's
/// role in the file.
fn bodies(compiled: &Compiled) -> Vec<(String, Vec<usize>)> {
    let on = |node: NodeId, body: &str| match compiled.nodes.get(node.index()) {
        Some(NodeRole::Origin { body: b }) => b == body,
        Some(NodeRole::Point { body: b, .. }) => b == body,
        _ => false,
    };
    compiled
        .bodies
        .iter()
        .map(|b| {
            let mut idx: Vec<usize> =
                (0..compiled.points.len()).filter(|&i| on(compiled.points[i].node, &b.name)).collect();
            // the origin first: a bone is drawn from it to each point
            idx.sort_by_key(|&i| compiled.points[i].node != b.frame.position);
            (b.name.clone(), idx)
        })
        .collect()
}

/// The bones of bodies drawn without a mesh, from the positions `xyz xyz ...` of the first frame
/// (m): a capsule from each body's origin to the origin of each body jointed to it (a body whose
/// origin is one of this body's points: the clavicle's SC to AC, the scapula's AC to GH), or,
/// for a body with mass that carries none, to its named point farthest from its origin (the
/// humerus to the hand). Radius: a tenth of its length, within 0.4 % and 2 % of the scene's extent. A body
/// whose origin is not a named point, or a capsule of zero length, is left out.
pub fn capsules(compiled: &Compiled, xyz: &[f64]) -> Vec<Capsule> {
    let scene = extent(xyz);
    let at = |i: usize| [xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]];
    let dist = |a: usize, b: usize| {
        let (p, q) = (at(a), at(b));
        ((p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2)).sqrt()
    };
    let point_of = |node: NodeId| compiled.points.iter().position(|p| p.node == node);
    let mut out = Vec::new();
    for (b, body) in compiled.bodies.iter().enumerate() {
        let Some(origin) = point_of(body.frame.position) else { continue };
        // every name `body.point`, shared nodes included (a body turning about this one's point)
        let prefix = format!("{}.", body.name);
        let own: Vec<usize> =
            (0..compiled.points.len()).filter(|&i| compiled.points[i].name.starts_with(&prefix)).collect();
        let mut ends: Vec<(usize, Option<usize>)> = compiled
            .bodies
            .iter()
            .enumerate()
            .filter(|(_, c)| c.name != body.name && own.iter().any(|&i| compiled.points[i].node == c.frame.position))
            .filter_map(|(k, c)| point_of(c.frame.position).map(|p| (p, Some(k))))
            .collect();
        // a massless body (ground) carrying no joint has no bone to draw
        if ends.is_empty() && body.mass.is_some_and(|m| m > 0.0) {
            let far = own.iter().copied().max_by(|&i, &j| dist(origin, i).total_cmp(&dist(origin, j)));
            ends.extend(far.map(|p| (p, None)));
        }
        for (end, child) in ends {
            let length = dist(origin, end);
            if length.is_finite() && length > 1e-9 {
                let radius = (0.1 * length).clamp(0.004 * scene, 0.02 * scene);
                out.push(Capsule { body: b, ends: [origin, end], child, radius });
            }
        }
    }
    out
}

/// The largest extent of points `xyz xyz ...` along a global axis (m); 1 when there are none.
fn extent(xyz: &[f64]) -> f64 {
    let span = |a: usize| {
        let v = xyz.iter().skip(a).step_by(3);
        v.clone().fold(f64::NEG_INFINITY, |m, &x| m.max(x)) - v.fold(f64::INFINITY, |m, &x| m.min(x))
    };
    let e = span(0).max(span(1)).max(span(2));
    if e.is_finite() && e > 0.0 { e } else { 1.0 }
}

/// Where each user element of orientations only is drawn (the rest: `None`). Such a joint has
/// no position: it is drawn at the origin of the body its second node (q, the moving member)
/// is the orientation of, directly or reached through intermediate orientation nodes
/// (`[nodes]`, no body's) and the other such joints that chain them, away from its first node —
/// as the shoulder's three hinges of SC all reach the clavicle, whose origin is SC. Failing
/// that, the origin of its first node's body; `Some(None)` when there is none.
fn joint_places(compiled: &Compiled) -> Vec<Option<Option<NodeId>>> {
    let model = &compiled.model;
    let orientations = |el: &mollier::UserElement| -> Option<Vec<NodeId>> {
        let nodes = model.element(el.id).layout().nodes();
        let all = !nodes.is_empty() && nodes.iter().all(|(_, k)| *k == NodeKind::Orientation);
        all.then(|| nodes.iter().map(|(n, _)| *n).collect())
    };
    let joints: Vec<Option<Vec<NodeId>>> = compiled.elements.iter().map(orientations).collect();
    let origin = |node: NodeId| compiled.bodies.iter().find(|b| b.frame.orientation == node).map(|b| b.frame.position);
    // breadth first from `start`, never through `avoid`
    let search = |start: NodeId, avoid: &[NodeId]| {
        let mut seen: Vec<NodeId> = avoid.to_vec();
        let mut queue = std::collections::VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            if seen.contains(&n) {
                continue;
            }
            seen.push(n);
            if let Some(o) = origin(n) {
                return Some(o);
            }
            for nodes in joints.iter().flatten().filter(|nodes| nodes.contains(&n)) {
                queue.extend(nodes.iter().filter(|m| !seen.contains(m)));
            }
        }
        None
    };
    joints
        .iter()
        .map(|nodes| {
            let nodes = nodes.as_ref()?;
            let (first, last) = (nodes[0], nodes[nodes.len() - 1]);
            Some(search(last, &nodes[..nodes.len() - 1]).or_else(|| origin(first)))
        })
        .collect()
}
