//! The parts of a model: its nodes, the roles of its coordinates and modes, its inputs and its
//! elements as the kernel keeps them.

use crate::element::{Element, NodeKind};
use crate::ids::{CoordId, ModeId};
use crate::law::Law;
use crate::model::attach::Chain;

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
    /// A coordinate of a node attached to a body frame ([`crate::ModelBuilder::attach`]): computed from
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
    pub chain: Option<Chain>,
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
pub(crate) fn fixed_mask(own: &[usize], coord_role: &[CoordRole]) -> u64 {
    own.iter().take(64).enumerate().filter(|&(_, &c)| coord_role[c] == CoordRole::Fixed).fold(0, |m, (a, _)| m | 1 << a)
}
