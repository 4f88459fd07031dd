//! The compiled, immutable [`Model`] and the [`ModelBuilder`] that makes it: the types every
//! algorithm reads (nodes, elements, the partition, inertia and loads), below the algorithms.
//!
//! Partition (van der Helm 1994, eq. 4-5): every nodal coordinate is fixed (`x^o`), dependent (`x^c`) or
//! an input (`x^m`); every deformation mode is fixed/rigid (`e^o`), an input (`e^m`) or dependent
//! (`e^c`: free, flexible or released). As in SPACAR, modes are fixed unless said otherwise and
//! coordinates are dependent unless said otherwise. Each orientation node with a dependent
//! coordinate gets one more fixed mode, `λᵀλ − 1` (named `<node>.norm`).
//!
//! The generalized coordinates are `q = (x^m, e^m)` in the order the inputs were declared.

use std::fmt;

use crate::element::{Element, ElementError, Layout, ModeInfo, NodeKind, Quantity};
use crate::geometry::{Mat3, Vec3};
use crate::ids::{CoordId, ElementId, ModeId, NodeId};
use crate::law::Law;
use crate::linalg::sparse::Pattern;

pub(crate) mod attach;
mod builder;
pub(crate) mod euler_norm;
pub(crate) mod placement;
pub mod topology;
mod types;

use attach::{Attachment, Attachments, Chain};
pub use builder::{BuildError, ModelBuilder};
use euler_norm::EulerNorm;
use topology::{Reach, Topology};
pub use types::{CoordRole, Input, ModeRole, NodeInfo};
pub(crate) use types::{ElementEntry, RowTarget, fixed_mask};

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
    /// The tree path of the transfer functions, where the model has one ([`Reach`]).
    pub(crate) reach: Option<Reach>,
    /// The tree path of the position solve, where the model has one ([`placement::Placement`]).
    pub(crate) placement: Option<placement::Placement>,
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

    /// The tree path of the transfer functions ([`Reach`]: each input's subtree of `D_cc`'s
    /// blocks), chosen when the model is built; `None` where the general solve is taken.
    pub fn tree_path(&self) -> Option<&Reach> {
        self.reach.as_ref()
    }

    /// `true` when the position solve places every dependent node in closed form, outward from
    /// the ground, instead of solving by Newton-Raphson (a tree of joints that can: hinges,
    /// beams; [`crate::element::Element::placement`]). [`crate::Data::set_tree_path`]`(false)`
    /// takes Newton-Raphson all the same.
    pub fn places_in_closed_form(&self) -> bool {
        self.placement.is_some()
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
    /// The warnings ([`crate::ElementInfo::warning`]) of `elements` at the global coordinates
    /// `x` (n_x) of a solved configuration, each as `element: warning`, in the order given.
    pub fn element_warnings(&self, x: &[f64], elements: impl IntoIterator<Item = ElementId>) -> Vec<String> {
        let mut local = Vec::new();
        let mut out = Vec::new();
        for el in elements {
            local.clear();
            local.extend(self.element_coords(el).iter().map(|&c| x[c]));
            if let Some(w) = self.element(el).warning(&local) {
                out.push(format!("{}: {w}", self.element_name(el)));
            }
        }
        out
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

/// An external load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Load {
    /// A force (N, global frame) at a position node.
    Force {
        /// The node.
        node: NodeId,
        /// The force.
        force: Vec3,
    },
    /// A moment (N m, global frame) on the body of an orientation node.
    Moment {
        /// The node.
        node: NodeId,
        /// The moment.
        moment: Vec3,
    },
}

/// Inertia and constant loads of a model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dynamics {
    /// Point masses (kg) at position nodes.
    pub masses: Vec<(NodeId, f64)>,
    /// Rotational inertia tensors (kg m², body frame of the node) at orientation nodes.
    pub rotors: Vec<(NodeId, Mat3)>,
    /// Gravitational acceleration (m/s², global frame).
    pub gravity: Vec3,
    /// Constant external loads.
    pub loads: Vec<Load>,
}
