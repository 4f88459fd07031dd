//! # mollier-core
//!
//! The kernel of Mollier, a finite element multibody framework for musculoskeletal models in the
//! manner of SPACAR (van der Helm 1994). A mechanism is a set of **nodes** (positions,
//! and orientations as Euler parameters) and **elements** whose **deformation modes** are
//! functions of those nodes. Fixing modes makes bodies and joints, making some modes or
//! coordinates inputs makes the motion; the kernel solves the remaining coordinates by
//! Newton-Raphson and yields the first- and second-order geometric transfer functions.
//!
//! Layout, after Pinocchio and MuJoCo:
//! - [`ModelBuilder`] → immutable [`Model`] (shared between threads) + per-thread [`Data`];
//! - algorithms are free functions `algo(&model, &mut data, ...)`, named for the stage:
//!   [`kinematics::solve_positions`], [`transfer::first_order`], [`transfer::second_order`],
//!   [`transfer::velocities`], [`transfer::accelerations`], [`diagnostics::well_posedness`],
//!   [`dynamics::mass_matrix`], [`dynamics::inverse_dynamics`], [`dynamics::kinetostatics`];
//! - elements are plugins behind the [`Element`] trait; the kernel never asks an element's kind.
//!
//! Units are SI: m, rad, kg, s, N.

// floors, each importing only those above it in this list (tools/import-graph checks it):
// numbers and the element interface; the model's types; the per-thread data; the algorithms
pub mod algorithm;
pub mod autodiff;
pub mod conformance;
pub mod data;
pub mod element;
pub mod geometry;
pub mod ids;
pub mod law;
pub mod linalg;
pub mod model;
pub mod registry;
pub mod scalar;
pub mod shared_data;
pub mod terms;

// the algorithms' modules by their names of before, so that `mollier_core::kinematics::...`
// and the others keep working
pub use algorithm::{
    diagnostics, dynamics, joint_force, kinematics, linearize, parallel, screws, stiffness, transfer, transfer3,
    transfer4,
};
pub use linalg::dense;
pub use model::topology;
/// The third-order hyper-dual number of [`Element::third_order`].
pub use num_dual::HyperHyperDual64;

pub use data::{Data, n_pairs, pair_index};
pub use diagnostics::{Involved, WellPosedness, well_posedness};
pub use element::{
    Deformations, Derivs, Drawing, DrawnShape, Element, ElementError, ElementInfo, Evaluation, Jet4, Layout, ModeInfo,
    NodeKind, Order, Quantity, Rates, ShapeKind,
};
pub use ids::{CoordId, ElementId, ModeId, NodeId};
pub use kinematics::{
    KinematicsError, NewtonOptions, NewtonReport, Predictor, SavedPositions, solve_positions, solve_positions_with,
};
pub use law::{CoordinateLimit, Law, Limits, LinearLaw, ModeLaw, ModeLaws, TensionOnly};
pub use model::Load;
pub use model::{BuildError, CoordRole, Input, ModeRole, Model, ModelBuilder, NodeInfo};
pub use registry::ElementRole;
pub use scalar::Real;
