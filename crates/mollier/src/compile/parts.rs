//! What the compile step makes of the file's parts, as the later steps and the front ends see
//! them: kernel nodes and what they are in the file, the user's elements, the inputs, the
//! bodies; and what a model section (`[load_sharing]`, `[muscles]`) is compiled against.

use mollier_core::element::Quantity;
use mollier_core::registry::{ElementRole, Frame, Resolver};
use mollier_core::{ElementId, Input, Model, NodeId};
use mollier_format::Document;

/// Below this distance (m) a body point is its body's origin: a beam needs a length.
pub(super) const ZERO_LENGTH: f64 = 1e-12;
pub(super) const IDENTITY: [f64; 4] = [1.0, 0.0, 0.0, 0.0];

/// What a kernel node is in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeRole {
    /// A node declared under `[nodes]`.
    Node,
    /// The origin of a body (the body's name).
    Origin {
        /// The body.
        body: String,
    },
    /// The orientation of a body (`body.orientation`).
    Orientation {
        /// The body.
        body: String,
    },
    /// A point of a body (`body.point`).
    Point {
        /// The body.
        body: String,
        /// The point.
        point: String,
    },
    /// The centre of mass of a body, given as coordinates (`body.com`).
    CentreOfMass {
        /// The body.
        body: String,
    },
}

/// A position the user can name, and the kernel node that holds it. Several names may share a
/// node (a body turning about another body's point).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointEntry {
    /// `node`, `body` (its origin) or `body.point`.
    pub name: String,
    /// The kernel node.
    pub node: NodeId,
}

/// An element written by the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UserElement {
    /// Its name.
    pub name: String,
    /// Its type name.
    pub kind: String,
    /// What its type stands for (declared by the type): front ends select muscles, joints and
    /// contacts by it, never by `kind`.
    pub role: ElementRole,
    /// The kernel element.
    pub id: ElementId,
}

/// A generalized coordinate as the file names it.
#[derive(Clone, Debug, PartialEq)]
pub struct InputInfo {
    /// As written in `inputs`, e.g. `crank_joint.rotation` or `slider.x`: the motion-file column.
    pub name: String,
    /// The kernel's input.
    pub input: Input,
    /// Its quantity: `Length` (m) for point coordinates, `Angle` (rad) for angular modes.
    pub quantity: Quantity,
}

/// A body's frame and its inertial properties in SI (kept for dynamics; kinematics ignores them).
#[derive(Clone, Debug, PartialEq)]
pub struct BodyInfo {
    /// The body's name.
    pub name: String,
    /// Its origin and orientation nodes.
    pub frame: Frame,
    /// Mass (kg).
    pub mass: Option<f64>,
    /// Centre of mass in body coordinates (m).
    pub com: Option<[f64; 3]>,
    /// Inertia tensor about the centre of mass in body axes (kg m², 3x3).
    pub inertia: Option<[[f64; 3]; 3]>,
    /// The node that carries the mass (at the centre of mass), when the body has one.
    pub mass_node: Option<NodeId>,
}

/// A user element as built: its kernel id and modes.
pub(super) struct Built {
    pub(super) id: ElementId,
    pub(super) modes: Vec<(String, Quantity)>,
    /// The element type gives the element a constitutive law of its own.
    pub(super) own_law: bool,
}

/// What the section is compiled against.
pub(crate) struct Context<'a> {
    pub doc: &'a Document,
    pub model: &'a Model,
    pub resolver: &'a dyn Resolver,
    pub elements: &'a [UserElement],
    pub inputs: &'a [InputInfo],
}
