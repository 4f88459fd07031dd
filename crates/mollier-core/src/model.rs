//! The compiled, immutable [`Model`] and the [`ModelBuilder`] that makes it.
//!
//! Partition (seed 001, eq. 4-5): every nodal coordinate is fixed (`x^o`), dependent (`x^c`) or
//! an input (`x^m`); every deformation mode is fixed/rigid (`e^o`), an input (`e^m`) or dependent
//! (`e^c`: free, flexible or released). As in SPACAR, modes are fixed unless said otherwise and
//! coordinates are dependent unless said otherwise. Each orientation node with a dependent
//! coordinate gets one more fixed mode, `λᵀλ − 1` (named `<node>.norm`).
//!
//! The generalized coordinates are `q = (x^m, e^m)` in the order the inputs were declared.

use std::collections::HashMap;
use std::fmt;

use crate::attach::{Attachment, Attachments, Chain};
use crate::dynamics::{Dynamics, Load};
use crate::element::{Element, ElementError, Layout, ModeInfo, NodeKind, Quantity};
use crate::euler_norm::EulerNorm;
use crate::ids::{CoordId, ElementId, ModeId, NodeId};
use crate::law::Law;
use crate::sparse::Pattern;
use crate::topology::Topology;

/// A node of a built model.
#[derive(Clone, Debug)]
pub struct NodeInfo {
    /// Name, unique among nodes.
    pub name: String,
    /// Position or orientation.
    pub kind: NodeKind,
    /// Index of its first coordinate in `x`.
    pub offset: usize,
}

/// The role of a nodal coordinate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoordRole {
    /// `x^o`: held at its initial value.
    Fixed,
    /// `x^c`: solved for.
    Dependent,
    /// `x^m`: a generalized coordinate, given.
    Input,
    /// A coordinate of a node attached to a body frame ([`ModelBuilder::attach`]): computed from
    /// the frame, never solved for.
    Attached,
}

/// The role of a deformation mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ModeRole {
    /// `e^o`: held at a constant (0 unless set otherwise) — a rigid element or an ideal joint.
    Fixed(f64),
    /// `e^m`: a generalized coordinate, given.
    Input,
    /// `e^c`: follows from the motion (free, flexible, released, a muscle).
    Dependent,
}

/// A generalized coordinate: a nodal coordinate or a deformation mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Input {
    /// A nodal coordinate (`x^m`).
    Coordinate(CoordId),
    /// A deformation mode (`e^m`).
    Mode(ModeId),
}

/// What a constraint row is held at.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RowTarget {
    Fixed(f64),
    Input(usize),
}

pub(crate) struct ElementEntry {
    pub name: String,
    pub element: Box<dyn Element>,
    /// Generated (Euler-parameter norms, a front end's attachment beams), not written by a user.
    pub internal: bool,
    /// Constitutive law attached in the model (else the element's own, if any).
    pub law: Option<Box<dyn Law>>,
    pub mode_offset: usize,
    /// Global coordinate index of each of the element's own local coordinates (its layout).
    pub own: Vec<usize>,
    /// The independent coordinates the kernel differentiates the element by: `own`, unless the
    /// element touches an attached node, in which case the chain rule in `chain` maps `own` to
    /// these (its frames' coordinates, each once). Gradient and Hessian blocks are over these.
    pub coords: Vec<usize>,
    /// The chain rule from `coords` to `own`, for an element touching an attached node.
    pub chain: Option<crate::attach::Chain>,
    /// Offset of this element's gradient block (m·n) in the gradient buffer.
    pub de_offset: usize,
    /// Offset of this element's Hessian block (m·n·n) in the Hessian buffer.
    pub d2e_offset: usize,
    /// Bit `a` set when own coordinate `a` (`a` < 64) is fixed ([`CoordRole::Fixed`]): the
    /// element may leave its rows and columns of the Hessians out
    /// ([`crate::element::Evaluation::fixed`]).
    pub fixed: u64,
}

/// The bits of the coordinates among `own` (the first 64) that are fixed.
fn fixed_mask(own: &[usize], coord_role: &[CoordRole]) -> u64 {
    own.iter().take(64).enumerate().filter(|&(_, &c)| coord_role[c] == CoordRole::Fixed).fold(0, |m, (a, _)| m | 1 << a)
}

/// Why a model could not be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BuildError {
    /// Two nodes or two elements share a name.
    #[error("duplicate {what} name `{name}`")]
    DuplicateName {
        /// `node` or `element`.
        what: &'static str,
        /// The name.
        name: String,
    },
    /// A node id that this builder did not make.
    #[error("element `{element}` refers to node #{index}, which does not exist")]
    UnknownNode {
        /// The element.
        element: String,
        /// The node index.
        index: usize,
    },
    /// An element slot wants a node of the other kind.
    #[error("element `{element}` needs a {expected} node in slot {slot}, but `{node}` is a {found} node")]
    NodeKind {
        /// The element.
        element: String,
        /// Slot index in the element's layout.
        slot: usize,
        /// The node.
        node: String,
        /// Expected kind.
        expected: NodeKind,
        /// Actual kind.
        found: NodeKind,
    },
    /// An element has no mode of that name.
    #[error("element `{element}` has no mode `{mode}` (its modes: {available})")]
    UnknownMode {
        /// The element.
        element: String,
        /// The requested mode.
        mode: String,
        /// Its modes, comma-separated.
        available: String,
    },
    /// Contradictory roles for one coordinate or mode.
    #[error("{what} is declared both {first} and {second}")]
    Conflict {
        /// The coordinate or mode.
        what: String,
        /// First role.
        first: &'static str,
        /// Second role.
        second: &'static str,
    },
    /// A value that must be finite is not, or a value is out of range.
    #[error("{what}: {message}")]
    BadValue {
        /// The value's owner.
        what: String,
        /// What is wrong.
        message: String,
    },
    /// An element rejected its reference configuration.
    #[error("element `{element}`: {error}")]
    Element {
        /// The element.
        element: String,
        /// The element's reason.
        error: ElementError,
    },
}

/// Builds a [`Model`]: nodes with initial coordinates, elements, and the partition.
#[derive(Default)]
pub struct ModelBuilder {
    nodes: Vec<NodeInfo>,
    x0: Vec<f64>,
    node_names: HashMap<String, NodeId>,
    elements: Vec<(String, Box<dyn Element>)>,
    generated: Vec<bool>,
    laws: Vec<(ElementId, Box<dyn Law>)>,
    element_names: HashMap<String, ElementId>,
    coord_roles: HashMap<usize, (CoordRole, &'static str)>,
    attached: Vec<(NodeId, NodeId, NodeId)>,
    mode_roles: Vec<(ElementId, usize, ModeRole, &'static str)>,
    inputs: Vec<PendingInput>,
    dynamics: Dynamics,
    errors: Vec<BuildError>,
}

enum PendingInput {
    Coordinate(usize),
    Mode(ElementId, usize),
}

impl fmt::Debug for ModelBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ModelBuilder")
            .field("nodes", &self.nodes.len())
            .field("elements", &self.elements.len())
            .finish()
    }
}

impl ModelBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn add_node(&mut self, name: String, kind: NodeKind, values: &[f64]) -> Result<NodeId, BuildError> {
        if self.node_names.contains_key(&name) {
            return Err(BuildError::DuplicateName { what: "node", name });
        }
        if values.iter().any(|v| !v.is_finite()) {
            return Err(BuildError::BadValue {
                what: format!("node `{name}`"),
                message: "non-finite coordinate".into(),
            });
        }
        let id = NodeId::new(self.nodes.len());
        self.nodes.push(NodeInfo { name: name.clone(), kind, offset: self.x0.len() });
        self.x0.extend_from_slice(values);
        self.node_names.insert(name, id);
        Ok(id)
    }

    /// A position node at `x` (m).
    pub fn position_node(&mut self, name: impl Into<String>, x: [f64; 3]) -> Result<NodeId, BuildError> {
        self.add_node(name.into(), NodeKind::Position, &x)
    }

    /// An orientation node with Euler parameters `l` (`λ0` first); must have unit norm (1e-9).
    pub fn orientation_node(&mut self, name: impl Into<String>, l: [f64; 4]) -> Result<NodeId, BuildError> {
        let name = name.into();
        let n2: f64 = l.iter().map(|v| v * v).sum();
        if (n2 - 1.0).abs() > 1e-9 {
            return Err(BuildError::BadValue {
                what: format!("orientation node `{name}`"),
                message: format!("Euler parameters must have unit norm, |λ|² = {n2}"),
            });
        }
        self.add_node(name, NodeKind::Orientation, &l)
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<NodeId> {
        self.node_names.get(name).copied()
    }

    /// Kind of a node made by this builder.
    pub fn node_kind(&self, node: NodeId) -> Option<NodeKind> {
        self.nodes.get(node.index()).map(|n| n.kind)
    }

    /// Initial coordinates of a node made by this builder.
    pub fn node_coordinates(&self, node: NodeId) -> Option<&[f64]> {
        self.nodes.get(node.index()).map(|n| &self.x0[n.offset..n.offset + n.kind.dim()])
    }

    /// Add an element. Its modes are fixed (rigid) unless made inputs or free.
    pub fn add_element(&mut self, name: impl Into<String>, element: Box<dyn Element>) -> Result<ElementId, BuildError> {
        self.push_element(name.into(), element, false)
    }

    /// Add an element generated by a front end (e.g. the rigid beam attaching a body's point):
    /// it works like any other, but outputs meant for people leave it out.
    pub fn add_generated_element(
        &mut self,
        name: impl Into<String>,
        element: Box<dyn Element>,
    ) -> Result<ElementId, BuildError> {
        self.push_element(name.into(), element, true)
    }

    fn push_element(
        &mut self,
        name: String,
        element: Box<dyn Element>,
        generated: bool,
    ) -> Result<ElementId, BuildError> {
        if self.element_names.contains_key(&name) {
            return Err(BuildError::DuplicateName { what: "element", name });
        }
        let id = ElementId::new(self.elements.len());
        self.element_names.insert(name.clone(), id);
        self.elements.push((name, element));
        self.generated.push(generated);
        Ok(id)
    }

    /// Attach a constitutive law to an element (its stresses for the free modes).
    pub fn set_law(&mut self, element: ElementId, law: Box<dyn Law>) {
        self.laws.push((element, law));
    }

    /// The element called `name`.
    pub fn element(&self, name: &str) -> Option<ElementId> {
        self.element_names.get(name).copied()
    }

    fn coord_index(&mut self, node: NodeId, axis: usize) -> Option<usize> {
        match self.nodes.get(node.index()) {
            Some(n) if axis < n.kind.dim() => Some(n.offset + axis),
            _ => {
                self.errors.push(BuildError::BadValue {
                    what: format!("coordinate {axis} of node #{}", node.index()),
                    message: "no such node or axis".into(),
                });
                None
            }
        }
    }

    fn set_coord(&mut self, c: usize, role: CoordRole, label: &'static str) {
        if let Some((_, prev)) = self.coord_roles.get(&c) {
            if *prev != label {
                let what = self.coord_label(c);
                self.errors.push(BuildError::Conflict { what, first: prev, second: label });
            }
            return;
        }
        self.coord_roles.insert(c, (role, label));
    }

    fn coord_label(&self, c: usize) -> String {
        let node = self.nodes.iter().rev().find(|n| n.offset <= c).expect("coordinate has a node");
        format!("coordinate {}.{}", node.name, node.kind.axis_names()[c - node.offset])
    }

    /// Hold every coordinate of `node` at its initial value.
    pub fn fix_node(&mut self, node: NodeId) {
        let dim = self.nodes.get(node.index()).map_or(0, |n| n.kind.dim());
        for a in 0..dim {
            self.fix_coordinate(node, a);
        }
    }

    /// Hold one coordinate (`axis` 0..3 for positions, 0..4 for orientations) at its initial value.
    pub fn fix_coordinate(&mut self, node: NodeId, axis: usize) {
        if let Some(c) = self.coord_index(node, axis) {
            self.set_coord(c, CoordRole::Fixed, "fixed");
        }
    }

    /// Attach position node `node` rigidly to the body frame `(origin, orientation)` — a position
    /// and an orientation node — at its initial place: `x_node = x_origin + R(λ) p` with `p`
    /// fixed from the initial coordinates. Its coordinates are then computed, not solved for
    /// (no unknowns, no equations), and the elements on it are differentiated by the chain rule.
    /// `origin` may itself be attached. A node is attached at most once and cannot also be fixed
    /// or an input.
    pub fn attach(&mut self, node: NodeId, origin: NodeId, orientation: NodeId) {
        let kinds = [node, origin, orientation].map(|n| self.nodes.get(n.index()).map(|i| i.kind));
        if kinds != [Some(NodeKind::Position), Some(NodeKind::Position), Some(NodeKind::Orientation)] {
            self.errors.push(BuildError::BadValue {
                what: format!("attachment of node #{}", node.index()),
                message: "needs a position node attached to a position and an orientation node".into(),
            });
            return;
        }
        if node == origin {
            self.errors.push(BuildError::BadValue {
                what: format!("node `{}`", self.nodes[node.index()].name),
                message: "cannot be attached to itself".into(),
            });
            return;
        }
        self.attached.push((node, origin, orientation));
    }

    /// Make a nodal coordinate a generalized coordinate; returns its index in `q`.
    pub fn input_coordinate(&mut self, node: NodeId, axis: usize) -> usize {
        if let Some(c) = self.coord_index(node, axis) {
            self.set_coord(c, CoordRole::Input, "an input");
            self.inputs.push(PendingInput::Coordinate(c));
        }
        self.inputs.len().saturating_sub(1)
    }

    fn mode_slot(&mut self, element: ElementId, mode: &str) -> Option<usize> {
        let Some((name, el)) = self.elements.get(element.index()) else {
            self.errors.push(BuildError::BadValue {
                what: format!("element #{}", element.index()),
                message: "no such element".into(),
            });
            return None;
        };
        let layout = el.layout();
        match layout.mode_index(mode) {
            Some(k) => Some(k),
            None => {
                let available = layout.modes().iter().map(|m| m.name.as_ref()).collect::<Vec<_>>().join(", ");
                self.errors.push(BuildError::UnknownMode { element: name.clone(), mode: mode.into(), available });
                None
            }
        }
    }

    /// Make a mode a generalized coordinate (e.g. a driven hinge angle); returns its index in `q`.
    pub fn input_mode(&mut self, element: ElementId, mode: &str) -> usize {
        if let Some(k) = self.mode_slot(element, mode) {
            self.mode_roles.push((element, k, ModeRole::Input, "an input"));
            self.inputs.push(PendingInput::Mode(element, k));
        }
        self.inputs.len().saturating_sub(1)
    }

    /// Release a mode: it follows from the motion (`e^c`).
    pub fn free_mode(&mut self, element: ElementId, mode: &str) {
        if let Some(k) = self.mode_slot(element, mode) {
            self.mode_roles.push((element, k, ModeRole::Dependent, "free"));
        }
    }

    /// Release every mode of an element (a muscle, a flexible ligament).
    pub fn free_element(&mut self, element: ElementId) {
        if let Some((_, el)) = self.elements.get(element.index()) {
            for k in 0..el.layout().n_modes() {
                self.mode_roles.push((element, k, ModeRole::Dependent, "free"));
            }
        }
    }

    /// Hold a mode at `value` instead of 0.
    pub fn fix_mode_at(&mut self, element: ElementId, mode: &str, value: f64) {
        if let Some(k) = self.mode_slot(element, mode) {
            self.mode_roles.push((element, k, ModeRole::Fixed(value), "fixed"));
        }
    }

    /// A point mass (kg) at a position node.
    pub fn add_mass(&mut self, node: NodeId, mass: f64) {
        match self.nodes.get(node.index()) {
            Some(n) if n.kind == NodeKind::Position && mass.is_finite() && mass >= 0.0 => {
                self.dynamics.masses.push((node, mass))
            }
            _ => self.errors.push(BuildError::BadValue {
                what: format!("mass at node #{}", node.index()),
                message: format!("needs a position node and a finite mass >= 0, got {mass}"),
            }),
        }
    }

    /// A rotational inertia tensor (kg m², in the body frame of the node, about the body's
    /// centre of mass) at an orientation node. Must be symmetric and positive semi-definite.
    pub fn add_rotational_inertia(&mut self, node: NodeId, inertia: [[f64; 3]; 3]) {
        // relative to the largest entry, so that the verdict does not depend on the units
        let scale = inertia.iter().flatten().fold(0.0f64, |a, v| a.max(v.abs()));
        let symmetric = (0..3).all(|i| (0..3).all(|j| (inertia[i][j] - inertia[j][i]).abs() <= 1e-12 * scale));
        let finite = scale.is_finite();
        // positive semi-definite: every principal minor of the scaled tensor >= 0 (no overflow)
        let m = inertia.map(|r| r.map(|v| if scale > 0.0 { v / scale } else { 0.0 }));
        let minor = |i: usize, j: usize| m[i][i] * m[j][j] - m[i][j] * m[j][i];
        let det = m[0][0] * minor(1, 2) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
        let diag_ok = (0..3).all(|i| m[i][i] >= 0.0)
            && [(0, 1), (0, 2), (1, 2)].iter().all(|&(i, j)| minor(i, j) >= -1e-12)
            && det >= -1e-12;
        match self.nodes.get(node.index()) {
            Some(n) if n.kind == NodeKind::Orientation && symmetric && finite && diag_ok => {
                self.dynamics.rotors.push((node, inertia))
            }
            _ => self.errors.push(BuildError::BadValue {
                what: format!("inertia at node #{}", node.index()),
                message: "needs an orientation node and a finite, symmetric, positive semi-definite tensor".into(),
            }),
        }
    }

    /// Gravitational acceleration (m/s², global frame), e.g. `[0, -9.81, 0]`.
    pub fn set_gravity(&mut self, g: [f64; 3]) {
        if g.iter().all(|v| v.is_finite()) {
            self.dynamics.gravity = g;
        } else {
            self.errors.push(BuildError::BadValue { what: "gravity".into(), message: "must be finite".into() });
        }
    }

    /// A constant external load.
    pub fn add_load(&mut self, load: Load) {
        let (node, kind, v) = match load {
            Load::Force { node, force } => (node, NodeKind::Position, force),
            Load::Moment { node, moment } => (node, NodeKind::Orientation, moment),
        };
        match self.nodes.get(node.index()) {
            Some(n) if n.kind == kind && v.iter().all(|a| a.is_finite()) => self.dynamics.loads.push(load),
            _ => self.errors.push(BuildError::BadValue {
                what: format!("load at node #{}", node.index()),
                message: format!("a force needs a position node, a moment an orientation node; got {load:?}"),
            }),
        }
    }

    /// Number of generalized coordinates declared so far.
    pub fn n_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Compile the model: validate, initialize elements from the initial coordinates, partition,
    /// and analyse topology and sparsity.
    pub fn build(mut self) -> Result<Model, BuildError> {
        if let Some(e) = self.errors.drain(..).next() {
            return Err(e);
        }
        let n_x = self.x0.len();
        // coordinate roles
        let mut coord_role = vec![CoordRole::Dependent; n_x];
        for (&c, &(role, _)) in &self.coord_roles {
            coord_role[c] = role;
        }
        let (attachments, attachment_of) = self.resolve_attachments(&mut coord_role)?;
        // elements: check layouts, initialize
        let mut entries: Vec<ElementEntry> = Vec::with_capacity(self.elements.len());
        let mut n_e = 0;
        let generated = std::mem::take(&mut self.generated);
        for (idx, (name, mut element)) in std::mem::take(&mut self.elements).into_iter().enumerate() {
            let layout = element.layout().clone();
            let mut coords = Vec::with_capacity(layout.n_local());
            for (slot, &(node, kind)) in layout.nodes().iter().enumerate() {
                let Some(info) = self.nodes.get(node.index()) else {
                    return Err(BuildError::UnknownNode { element: name, index: node.index() });
                };
                if info.kind != kind {
                    return Err(BuildError::NodeKind {
                        element: name,
                        slot,
                        node: info.name.clone(),
                        expected: kind,
                        found: info.kind,
                    });
                }
                coords.extend(info.offset..info.offset + kind.dim());
            }
            check_unique_modes(&name, &layout)?;
            let x_loc: Vec<f64> = coords.iter().map(|&c| self.x0[c]).collect();
            element.initialize(&x_loc).map_err(|error| BuildError::Element { element: name.clone(), error })?;
            let (expanded, chain) = match chain_of(&layout, &self.nodes, &attachments, &attachment_of) {
                Some((expanded, chain)) => (expanded, Some(chain)),
                None => (coords.clone(), None),
            };
            entries.push(ElementEntry {
                name,
                element,
                internal: generated[idx],
                law: None,
                mode_offset: n_e,
                own: coords,
                coords: expanded,
                chain,
                de_offset: 0,
                d2e_offset: 0,
                fixed: 0,
            });
            n_e += layout.n_modes();
        }
        // the Euler-parameter norm of every orientation node that moves
        for (i, node) in self.nodes.iter().enumerate() {
            if node.kind == NodeKind::Orientation && (0..4).any(|a| coord_role[node.offset + a] == CoordRole::Dependent)
            {
                let el = EulerNorm::new(NodeId::new(i));
                entries.push(ElementEntry {
                    name: format!("{}.norm", node.name),
                    element: Box::new(el),
                    internal: true,
                    law: None,
                    mode_offset: n_e,
                    own: (node.offset..node.offset + 4).collect(),
                    coords: (node.offset..node.offset + 4).collect(),
                    chain: None,
                    de_offset: 0,
                    d2e_offset: 0,
                    fixed: 0,
                });
                n_e += 1;
            }
        }
        for (el, mut law) in std::mem::take(&mut self.laws) {
            match entries.get_mut(el.index()) {
                Some(entry) => {
                    let refs: Vec<Option<f64>> =
                        (0..entry.element.layout().n_modes()).map(|k| entry.element.mode_reference(k)).collect();
                    law.bind(&refs).map_err(|message| BuildError::BadValue {
                        what: format!("the law of element `{}`", entry.name),
                        message,
                    })?;
                    entry.law = Some(law);
                }
                None => {
                    return Err(BuildError::BadValue {
                        what: format!("element #{}", el.index()),
                        message: "a law is attached to an element that does not exist".into(),
                    });
                }
            }
        }
        // buffer offsets
        let (mut de_off, mut d2e_off, mut own_off) = (0, 0, 0);
        for entry in &mut entries {
            let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
            entry.de_offset = de_off;
            entry.d2e_offset = d2e_off;
            entry.fixed = fixed_mask(&entry.own, &coord_role);
            de_off += m * n;
            d2e_off += m * n * n;
            if let Some(chain) = &mut entry.chain {
                chain.de_own_offset = own_off;
                own_off += m * entry.own.len();
            }
        }
        // mode roles
        let mut mode_role = vec![ModeRole::Fixed(0.0); n_e];
        let mut mode_element = Vec::with_capacity(n_e);
        let mut mode_info = Vec::with_capacity(n_e);
        for (i, entry) in entries.iter().enumerate() {
            for (k, info) in entry.element.layout().modes().iter().enumerate() {
                mode_element.push((ElementId::new(i), k));
                mode_info.push(info.clone());
            }
        }
        let mut mode_label: HashMap<usize, &'static str> = HashMap::new();
        for &(el, k, role, label) in &self.mode_roles {
            let m = entries[el.index()].mode_offset + k;
            if let Some(prev) = mode_label.get(&m) {
                if *prev != label {
                    return Err(BuildError::Conflict {
                        what: format!("mode {}.{}", entries[el.index()].name, mode_info[m].name),
                        first: prev,
                        second: label,
                    });
                }
                if label == "an input" {
                    return Err(BuildError::Conflict {
                        what: format!("mode {}.{}", entries[el.index()].name, mode_info[m].name),
                        first: "an input",
                        second: "an input again",
                    });
                }
            }
            mode_label.insert(m, label);
            mode_role[m] = role;
        }
        for (m, role) in mode_role.iter().enumerate() {
            if let ModeRole::Fixed(v) = role {
                if !v.is_finite() {
                    return Err(BuildError::BadValue {
                        what: format!("mode {}.{}", entries[mode_element[m].0.index()].name, mode_info[m].name),
                        message: "fixed value is not finite".into(),
                    });
                }
            }
        }
        let inputs: Vec<Input> = self
            .inputs
            .iter()
            .map(|p| match *p {
                PendingInput::Coordinate(c) => Input::Coordinate(CoordId::new(c)),
                PendingInput::Mode(el, k) => Input::Mode(ModeId::new(entries[el.index()].mode_offset + k)),
            })
            .collect();
        let length_scale = length_scale(&self.nodes, &self.x0);
        let frames: Vec<(NodeId, NodeId, NodeId)> = self.attached.clone();
        let topology = Topology::analyse(&self.nodes, &entries, &coord_role, &frames);
        let mut model = Model {
            dynamics: std::mem::take(&mut self.dynamics),
            nodes: self.nodes,
            x0: self.x0,
            elements: entries,
            n_e,
            mode_element,
            mode_info,
            coord_role,
            mode_role,
            inputs,
            dependent_coords: Vec::new(),
            coord_col: Vec::new(),
            rows: Vec::new(),
            mode_row: Vec::new(),
            row_target: Vec::new(),
            dependent_modes: Vec::new(),
            length_scale,
            topology,
            pattern: Pattern::default(),
            de_len: de_off,
            d2e_len: d2e_off,
            de_own_len: own_off,
            attachments,
            constraint_elements: Vec::new(),
            free_elements: Vec::new(),
            constraint_coords: Vec::new(),
        };
        model.order_unknowns();
        let mut needed = vec![false; model.attachments.list.len()];
        for (i, entry) in model.elements.iter().enumerate() {
            let m = entry.element.layout().n_modes();
            if (entry.mode_offset..entry.mode_offset + m).any(|k| model.mode_row[k].is_some()) {
                model.constraint_elements.push(i);
                // a chain's terms name every frame up to the root: the ancestors too
                for (_, terms) in entry.chain.iter().flat_map(|c| &c.rows) {
                    for &(t, _, _) in terms {
                        needed[t] = true;
                    }
                }
            } else {
                model.free_elements.push(i);
            }
        }
        let dynamic_nodes: Vec<usize> = (model.dynamics.masses.iter().map(|(n, _)| *n))
            .chain(model.dynamics.loads.iter().filter_map(|l| match *l {
                Load::Force { node, .. } => Some(node),
                Load::Moment { .. } => None,
            }))
            .map(|n| model.nodes[n.index()].offset)
            .collect();
        let n_x = model.n_x();
        model.attachments.classify(&needed, &dynamic_nodes, n_x);
        let mut read = vec![false; model.n_x()];
        for &i in &model.constraint_elements {
            for &c in &model.elements[i].coords {
                read[c] = true;
            }
        }
        for &t in &model.attachments.dynamic {
            let o = model.attachments.list[t].orientation;
            read[o..o + 4].fill(true);
        }
        model.constraint_coords = (0..read.len()).filter(|&c| read[c]).collect();
        model.pattern = Pattern::build(&model);
        Ok(model)
    }
}

impl ModelBuilder {
    /// Check the attachments, mark their coordinates, and order them parents first; returns them
    /// with the attachment index of every node (`None` when not attached).
    fn resolve_attachments(
        &self,
        coord_role: &mut [CoordRole],
    ) -> Result<(Attachments, Vec<Option<usize>>), BuildError> {
        let mut parent: Vec<Option<(NodeId, NodeId)>> = vec![None; self.nodes.len()];
        for &(node, origin, orientation) in &self.attached {
            let info = &self.nodes[node.index()];
            if parent[node.index()].is_some() {
                return Err(BuildError::Conflict {
                    what: format!("node `{}`", info.name),
                    first: "attached to a body",
                    second: "attached again",
                });
            }
            for c in info.offset..info.offset + 3 {
                if let Some(&(_, label)) = self.coord_roles.get(&c) {
                    return Err(BuildError::Conflict {
                        what: self.coord_label(c),
                        first: "attached to a body",
                        second: label,
                    });
                }
                coord_role[c] = CoordRole::Attached;
            }
            parent[node.index()] = Some((origin, orientation));
        }
        // parents first: depth-first from each attached node up its chain of origins
        let mut order: Vec<NodeId> = Vec::with_capacity(self.attached.len());
        let mut state = vec![0u8; self.nodes.len()]; // 0 new, 1 on the current chain, 2 placed
        for &(node, _, _) in &self.attached {
            let mut chain = Vec::new();
            let mut cur = node;
            while parent[cur.index()].is_some() && state[cur.index()] == 0 {
                state[cur.index()] = 1;
                chain.push(cur);
                cur = parent[cur.index()].expect("attached").0;
            }
            if state[cur.index()] == 1 {
                return Err(BuildError::BadValue {
                    what: format!("node `{}`", self.nodes[cur.index()].name),
                    message: "its attachments form a cycle: a body frame cannot hang from itself".into(),
                });
            }
            for n in chain.into_iter().rev() {
                state[n.index()] = 2;
                order.push(n);
            }
        }
        let mut index = vec![None; self.nodes.len()];
        let mut list = Vec::with_capacity(order.len());
        for n in order {
            let (origin, orientation) = parent[n.index()].expect("attached");
            let (po, oo, lo) = (
                self.nodes[n.index()].offset,
                self.nodes[origin.index()].offset,
                self.nodes[orientation.index()].offset,
            );
            let l = [self.x0[lo], -self.x0[lo + 1], -self.x0[lo + 2], -self.x0[lo + 3]];
            let d = [0, 1, 2].map(|i| self.x0[po + i] - self.x0[oo + i]);
            // p = R(λ)ᵀ d = R(λ̄) d for unit λ
            let p = crate::geometry::rotate(&l, &d);
            index[n.index()] = Some(list.len());
            list.push(Attachment::new(po, oo, lo, p));
        }
        Ok((
            Attachments {
                list,
                of_node: index.clone(),
                constraining: Vec::new(),
                rest: Vec::new(),
                dynamic: Vec::new(),
                unattached: Vec::new(),
            },
            index,
        ))
    }
}

/// The expanded coordinates and chain rule of an element with a node in `layout` that is
/// attached; `None` when no node of it is.
fn chain_of(
    layout: &Layout,
    nodes: &[NodeInfo],
    attachments: &Attachments,
    attachment_of: &[Option<usize>],
) -> Option<(Vec<usize>, Chain)> {
    if layout.nodes().iter().all(|(n, _)| attachment_of[n.index()].is_none()) {
        return None;
    }
    let mut expanded: Vec<usize> = Vec::new();
    let mut slot = |c: usize| match expanded.iter().position(|&e| e == c) {
        Some(i) => i,
        None => {
            expanded.push(c);
            expanded.len() - 1
        }
    };
    let node_of = |offset: usize| nodes.partition_point(|n| n.offset <= offset) - 1;
    let mut rows = Vec::with_capacity(layout.n_local());
    for &(node, kind) in layout.nodes() {
        let offset = nodes[node.index()].offset;
        let Some(first) = attachment_of[node.index()] else {
            for c in offset..offset + kind.dim() {
                rows.push((slot(c), Vec::new()));
            }
            continue;
        };
        for i in 0..3 {
            let mut terms = Vec::new();
            let mut t = first;
            let base = loop {
                let a = &attachments.list[t];
                let l = slot(a.orientation);
                for k in 1..4 {
                    slot(a.orientation + k);
                }
                terms.push((t, i, l));
                match attachment_of[node_of(a.origin)] {
                    Some(up) => t = up,
                    None => break slot(a.origin + i),
                };
            };
            rows.push((base, terms));
        }
    }
    Some((expanded, Chain::new(rows)))
}

fn check_unique_modes(name: &str, layout: &Layout) -> Result<(), BuildError> {
    for (i, a) in layout.modes().iter().enumerate() {
        if layout.modes()[..i].iter().any(|b| b.name == a.name) {
            return Err(BuildError::BadValue {
                what: format!("element `{name}`"),
                message: format!("mode name `{}` appears twice", a.name),
            });
        }
    }
    Ok(())
}

fn length_scale(nodes: &[NodeInfo], x0: &[f64]) -> f64 {
    let (mut lo, mut hi) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
    for n in nodes.iter().filter(|n| n.kind == NodeKind::Position) {
        for a in 0..3 {
            lo[a] = lo[a].min(x0[n.offset + a]);
            hi[a] = hi[a].max(x0[n.offset + a]);
        }
    }
    let d = (0..3).map(|a| (hi[a] - lo[a]).max(0.0).powi(2)).sum::<f64>().sqrt();
    if d.is_finite() && d > 0.0 { d } else { 1.0 }
}

/// A compiled model: immutable, shared between threads. All per-evaluation state lives in
/// [`crate::Data`].
pub struct Model {
    pub(crate) dynamics: Dynamics,
    pub(crate) nodes: Vec<NodeInfo>,
    pub(crate) x0: Vec<f64>,
    pub(crate) elements: Vec<ElementEntry>,
    pub(crate) n_e: usize,
    pub(crate) mode_element: Vec<(ElementId, usize)>,
    pub(crate) mode_info: Vec<ModeInfo>,
    pub(crate) coord_role: Vec<CoordRole>,
    pub(crate) mode_role: Vec<ModeRole>,
    pub(crate) inputs: Vec<Input>,
    /// Columns of `D_cc`: dependent coordinates, in traversal order.
    pub(crate) dependent_coords: Vec<usize>,
    pub(crate) coord_col: Vec<Option<usize>>,
    /// Rows of `D_cc`: fixed and input modes, in traversal order.
    pub(crate) rows: Vec<usize>,
    pub(crate) mode_row: Vec<Option<usize>>,
    pub(crate) row_target: Vec<RowTarget>,
    pub(crate) dependent_modes: Vec<usize>,
    pub(crate) length_scale: f64,
    pub(crate) topology: Topology,
    pub(crate) pattern: Pattern,
    pub(crate) de_len: usize,
    pub(crate) d2e_len: usize,
    /// Length of the own-gradient buffer of the elements on attached nodes.
    pub(crate) de_own_len: usize,
    pub(crate) attachments: Attachments,
    /// Elements with a fixed or input mode (rows of `D_cc`), and the others.
    pub(crate) constraint_elements: Vec<usize>,
    pub(crate) free_elements: Vec<usize>,
    /// The coordinates of the constraint elements and of the orientations of the frames in
    /// `attachments.dynamic`, ascending: where the directions of
    /// `transfer::second_order_directions` are read.
    pub(crate) constraint_coords: Vec<usize>,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("nodes", &self.nodes.len())
            .field("elements", &self.elements.len())
            .field("n_x", &self.n_x())
            .field("n_e", &self.n_e)
            .field("dof", &self.n_q())
            .finish()
    }
}

impl Model {
    fn order_unknowns(&mut self) {
        let n_x = self.x0.len();
        self.coord_col = vec![None; n_x];
        for &node in &self.topology.node_order {
            let info = &self.nodes[node.index()];
            for c in info.offset..info.offset + info.kind.dim() {
                if self.coord_role[c] == CoordRole::Dependent {
                    self.coord_col[c] = Some(self.dependent_coords.len());
                    self.dependent_coords.push(c);
                }
            }
        }
        let mut input_of_mode = vec![None; self.n_e];
        for (j, inp) in self.inputs.iter().enumerate() {
            if let Input::Mode(m) = inp {
                input_of_mode[m.index()] = Some(j);
            }
        }
        self.mode_row = vec![None; self.n_e];
        for &el in &self.topology.element_order {
            let entry = &self.elements[el.index()];
            for k in 0..entry.element.layout().n_modes() {
                let m = entry.mode_offset + k;
                match self.mode_role[m] {
                    ModeRole::Fixed(v) => {
                        self.mode_row[m] = Some(self.rows.len());
                        self.rows.push(m);
                        self.row_target.push(RowTarget::Fixed(v));
                    }
                    ModeRole::Input => {
                        self.mode_row[m] = Some(self.rows.len());
                        self.rows.push(m);
                        self.row_target.push(RowTarget::Input(input_of_mode[m].expect("input mode listed")));
                    }
                    ModeRole::Dependent => self.dependent_modes.push(m),
                }
            }
        }
    }

    /// Number of nodal coordinates `n_x`.
    pub fn n_x(&self) -> usize {
        self.x0.len()
    }
    /// Number of deformation modes `n_e` (including the Euler-parameter norms).
    pub fn n_e(&self) -> usize {
        self.n_e
    }
    /// Number of generalized coordinates (degrees of freedom) `n_q = n_xm + n_em`.
    pub fn n_q(&self) -> usize {
        self.inputs.len()
    }
    /// Number of constraint equations `n_eo + n_em` (rows of `D_cc`).
    pub fn n_equations(&self) -> usize {
        self.rows.len()
    }
    /// Number of dependent coordinates `n_xc` (columns of `D_cc`).
    pub fn n_unknowns(&self) -> usize {
        self.dependent_coords.len()
    }
    /// `true` when `D_cc` is square (necessary for a well-posed model).
    pub fn is_square(&self) -> bool {
        self.rows.len() == self.dependent_coords.len()
    }
    /// Initial coordinates `x0` (n_x).
    pub fn x0(&self) -> &[f64] {
        &self.x0
    }
    /// Characteristic length of the model (m): the diagonal of the box around its position
    /// nodes. Length tolerances scale with it.
    pub fn length_scale(&self) -> f64 {
        self.length_scale
    }
    /// The nodes.
    pub fn nodes(&self) -> &[NodeInfo] {
        &self.nodes
    }
    /// The node called `name`.
    pub fn node_by_name(&self, name: &str) -> Option<NodeId> {
        self.nodes.iter().position(|n| n.name == name).map(NodeId::new)
    }
    /// Number of elements (including the kernel's internal ones).
    pub fn n_elements(&self) -> usize {
        self.elements.len()
    }
    /// Name of an element.
    pub fn element_name(&self, el: ElementId) -> &str {
        &self.elements[el.index()].name
    }
    /// The element itself.
    pub fn element(&self, el: ElementId) -> &dyn Element {
        self.elements[el.index()].element.as_ref()
    }
    /// `true` for generated elements (Euler-parameter norms, attachment beams of bodies).
    pub fn is_internal(&self, el: ElementId) -> bool {
        self.elements[el.index()].internal
    }
    /// The constitutive law of an element: the one attached in the model, else its own.
    pub fn law(&self, el: ElementId) -> Option<&dyn Law> {
        let e = &self.elements[el.index()];
        e.law.as_deref().or_else(|| e.element.law())
    }
    /// The element called `name`.
    pub fn element_by_name(&self, name: &str) -> Option<ElementId> {
        self.elements.iter().position(|e| e.name == name).map(ElementId::new)
    }
    /// The user's elements (not generated ones).
    pub fn user_elements(&self) -> impl Iterator<Item = ElementId> + '_ {
        (0..self.elements.len()).filter(|&i| !self.elements[i].internal).map(ElementId::new)
    }
    /// Global coordinate indices of an element's local coordinates (its layout's).
    pub fn element_coords(&self, el: ElementId) -> &[usize] {
        &self.elements[el.index()].own
    }
    /// The body frame `(origin, orientation)` a position node is attached to
    /// ([`ModelBuilder::attach`]), or `None`.
    pub fn attached_to(&self, node: NodeId) -> Option<(NodeId, NodeId)> {
        let a = &self.attachments.list[self.attachments.of_node.get(node.index()).copied().flatten()?];
        Some((self.coord_owner(CoordId::new(a.origin)).0, self.coord_owner(CoordId::new(a.orientation)).0))
    }
    /// Number of attached nodes (computed, not solved for).
    pub fn n_attached(&self) -> usize {
        self.attachments.list.len()
    }
    /// The global mode of local mode `k` of an element.
    pub fn mode_id(&self, el: ElementId, k: usize) -> ModeId {
        ModeId::new(self.elements[el.index()].mode_offset + k)
    }
    /// The mode `name` of element `el`.
    pub fn mode_by_name(&self, el: ElementId, name: &str) -> Option<ModeId> {
        let e = &self.elements[el.index()];
        e.element.layout().mode_index(name).map(|k| ModeId::new(e.mode_offset + k))
    }
    /// The element and local index of a mode.
    pub fn mode_owner(&self, m: ModeId) -> (ElementId, usize) {
        self.mode_element[m.index()]
    }
    /// The value a mode is measured from (e.g. a muscle's reference length, m), so that its
    /// absolute measure is `e + reference`; `None` when the element defines none.
    pub fn mode_reference(&self, m: ModeId) -> Option<f64> {
        let (el, k) = self.mode_element[m.index()];
        self.elements[el.index()].element.mode_reference(k)
    }
    /// Description of a mode.
    pub fn mode_info(&self, m: ModeId) -> &ModeInfo {
        &self.mode_info[m.index()]
    }
    /// `element.mode`, e.g. `crank_hinge.rotation`.
    pub fn mode_name(&self, m: ModeId) -> String {
        let (el, _) = self.mode_element[m.index()];
        format!("{}.{}", self.elements[el.index()].name, self.mode_info[m.index()].name)
    }
    /// Role of a mode.
    pub fn mode_role(&self, m: ModeId) -> ModeRole {
        self.mode_role[m.index()]
    }
    /// The dependent modes `e^c` (free, released, muscles), in model order.
    pub fn dependent_modes(&self) -> impl Iterator<Item = ModeId> + '_ {
        self.dependent_modes.iter().map(|&m| ModeId::new(m))
    }
    /// The node and axis of a coordinate.
    pub fn coord_owner(&self, c: CoordId) -> (NodeId, usize) {
        let i = self.nodes.partition_point(|n| n.offset <= c.index()) - 1;
        (NodeId::new(i), c.index() - self.nodes[i].offset)
    }
    /// `node.axis`, e.g. `B.x` or `L1.l2`.
    pub fn coord_name(&self, c: CoordId) -> String {
        let (n, a) = self.coord_owner(c);
        let info = &self.nodes[n.index()];
        format!("{}.{}", info.name, info.kind.axis_names()[a])
    }
    /// The coordinate `axis` of `node`.
    pub fn coord_id(&self, node: NodeId, axis: usize) -> CoordId {
        CoordId::new(self.nodes[node.index()].offset + axis)
    }
    /// Role of a coordinate.
    pub fn coord_role(&self, c: CoordId) -> CoordRole {
        self.coord_role[c.index()]
    }
    /// The generalized coordinates, in `q` order.
    pub fn inputs(&self) -> &[Input] {
        &self.inputs
    }
    /// Name of generalized coordinate `j` (`B.x` or `hinge.rotation`).
    pub fn input_name(&self, j: usize) -> String {
        match self.inputs[j] {
            Input::Coordinate(c) => self.coord_name(c),
            Input::Mode(m) => self.mode_name(m),
        }
    }
    /// Value of each generalized coordinate in the initial configuration.
    pub fn q0(&self) -> Vec<f64> {
        self.inputs
            .iter()
            .map(|inp| match *inp {
                Input::Coordinate(c) => self.x0[c.index()],
                Input::Mode(_) => 0.0,
            })
            .collect()
    }
    /// Inertia and constant loads.
    pub fn dynamics(&self) -> &Dynamics {
        &self.dynamics
    }
    /// Topology: parts, loops, traversal order.
    pub fn topology(&self) -> &Topology {
        &self.topology
    }
    /// Tolerance scale of a mode's residual: the model's length scale for lengths, 1 otherwise.
    pub(crate) fn mode_scale(&self, m: usize) -> f64 {
        match self.mode_info[m].quantity {
            Quantity::Length => self.length_scale,
            _ => 1.0,
        }
    }
}
