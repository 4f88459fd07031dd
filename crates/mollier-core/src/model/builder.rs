//! The [`ModelBuilder`]: nodes, elements, the partition and the dynamics in, a [`Model`] out.

use std::collections::HashMap;
use std::fmt;

use super::*;
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
        let (mut entries, n_e) = self.compile_elements(&coord_role, &attachments, &attachment_of)?;
        self.bind_laws(&mut entries)?;
        let (de_off, d2e_off, own_off) = buffer_offsets(&mut entries, &coord_role);
        let (mode_role, mode_element, mode_info) = self.mode_roles(&entries, n_e)?;
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
            reach: None,
            placement: None,
            de_len: de_off,
            d2e_len: d2e_off,
            de_own_len: own_off,
            attachments,
            constraint_elements: Vec::new(),
            free_elements: Vec::new(),
            constraint_coords: Vec::new(),
        };
        model.order_unknowns();
        classify_elements(&mut model);
        Ok(model)
    }

    /// The elements with their layouts checked, initialized at the initial coordinates, each
    /// with its own and (through attachment chains) expanded coordinates; then the Euler-parameter
    /// norm of every orientation node that moves. Returns them and the number of modes.
    fn compile_elements(
        &mut self,
        coord_role: &[CoordRole],
        attachments: &Attachments,
        attachment_of: &[Option<usize>],
    ) -> Result<(Vec<ElementEntry>, usize), BuildError> {
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
            let (expanded, chain) = match chain_of(&layout, &self.nodes, attachments, attachment_of) {
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
        Ok((entries, n_e))
    }

    /// Bind each law to its element's modes (their reference values).
    fn bind_laws(&mut self, entries: &mut [ElementEntry]) -> Result<(), BuildError> {
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
        Ok(())
    }

    /// Every mode's role (fixed at 0 unless declared), element and description, the roles
    /// checked: one label per mode, an input once, fixed values finite.
    #[allow(clippy::type_complexity)]
    fn mode_roles(
        &self,
        entries: &[ElementEntry],
        n_e: usize,
    ) -> Result<(Vec<ModeRole>, Vec<(ElementId, usize)>, Vec<ModeInfo>), BuildError> {
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
        Ok((mode_role, mode_element, mode_info))
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
                free_only: Vec::new(),
                unattached: Vec::new(),
                moving: Vec::new(),
            },
            index,
        ))
    }
}

/// Each element's offsets in the gradient and Hessian buffers and its fixed-coordinate mask;
/// returns the buffers' lengths `(de, d2e, de_own)`.
fn buffer_offsets(entries: &mut [ElementEntry], coord_role: &[CoordRole]) -> (usize, usize, usize) {
    let (mut de_off, mut d2e_off, mut own_off) = (0, 0, 0);
    for entry in entries.iter_mut() {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        entry.de_offset = de_off;
        entry.d2e_offset = d2e_off;
        entry.fixed = fixed_mask(&entry.own, coord_role);
        de_off += m * n;
        d2e_off += m * n * n;
        if let Some(chain) = &mut entry.chain {
            chain.de_own_offset = own_off;
            own_off += m * entry.own.len();
        }
    }
    (de_off, d2e_off, own_off)
}

/// With the unknowns ordered: the constraint and free elements, the attachments each needs
/// (a chain's ancestors too), the coordinates the constraints and dynamic attachments read,
/// and the sparsity pattern.
fn classify_elements(model: &mut Model) {
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
    let fixed: Vec<bool> = model.coord_role.iter().map(|r| *r == CoordRole::Fixed).collect();
    model.attachments.classify(&needed, &dynamic_nodes, &fixed);
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
    model.pattern = pattern(model);
    model.reach = reach(model);
    model.placement = super::placement::Placement::find(model);
}

/// The tree path's subtrees of the inputs ([`Reach`]): each input's rows of `[−D_cm | (0; I)]`,
/// the right-hand side of its column of `DF`, carried down the block-triangular form.
fn reach(model: &Model) -> Option<Reach> {
    let blocks = model.pattern.blocks.as_ref()?;
    let mut rows = vec![Vec::new(); model.n_q()];
    for &(_, r, j) in &model.pattern.scatter_input {
        rows[j].push(r);
    }
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Mode(m) = inp {
            rows[j].push(model.mode_row[m.index()].expect("an input mode has a row"));
        }
    }
    Reach::find(blocks, &rows)
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

/// The pattern of `D_cc` (and the scatter of `D_cm`) from the elements' gradients' places.
fn pattern(model: &Model) -> Pattern {
    let n_rows = model.rows.len();
    let n_cols = model.dependent_coords.len();
    let mut input_of_coord = vec![None; model.n_x()];
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            input_of_coord[c.index()] = Some(j);
        }
    }
    let mut entries = Vec::new();
    let mut scatter_input = Vec::new();
    for e in &model.elements {
        let n = e.coords.len();
        for k in 0..e.element.layout().n_modes() {
            let Some(r) = model.mode_row[e.mode_offset + k] else { continue };
            for (a, &c) in e.coords.iter().enumerate() {
                let src = e.de_offset + k * n + a;
                match model.coord_role[c] {
                    CoordRole::Dependent => entries.push((src, r, model.coord_col[c].expect("dependent has a column"))),
                    CoordRole::Input => {
                        scatter_input.push((src, r, input_of_coord[c].expect("input coordinate listed")))
                    }
                    // expanded coordinates are never attached ones
                    CoordRole::Fixed | CoordRole::Attached => {}
                }
            }
        }
    }
    Pattern::new(n_rows, n_cols, entries, scatter_input)
}
