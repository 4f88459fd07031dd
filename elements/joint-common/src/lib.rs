//! Building blocks shared by the joint-model element types of the Delft report (*Human Joint
//! Modelling*, Delft, c. 1991, ch. 2): the MADYMO cardan joint (`mollier-cardan-joint`), the
//! MADYMO flexion-torsion joint (`mollier-flexion-torsion-joint`) and the Calspan joint stop
//! (`mollier-joint-stop`). The ball-socket resistance (`mollier-engin-joint`) uses its swing map,
//! its frames and its table interpolation. This crate registers no element type of its own.
//!
//! - [`torque`]: user-defined torque-angle (and torque-rate) functions — tables, linear or
//!   monotone-cubic, and named closed forms — with their model-file reader;
//! - [`frames`]: the two joint frames, fixed in the two orientation nodes, and the relative
//!   rotation `R_ab = n_a^i · n_b^j` between them, generic and as [`term::Term`]s;
//! - [`term`]: a scalar of an element's eight local coordinates (two sets of Euler parameters)
//!   with its exact gradient and Hessian, and the chain rule through the functions the joints
//!   need (`atan2`, `hypot`, any smooth map of a few terms);
//! - [`swing`]: the azimuthal equidistant map `(p, q) = θ (cos φ, sin φ)` of a direction, smooth
//!   through its pole.
//!
//! Theory: `docs/theory/joint-models.md`.

#[cfg(feature = "example")]
pub mod example;
pub mod frames;
pub mod swing;
pub mod term;
pub mod torque;

pub use frames::{
    FrameSpec, JointFrames, axes_drawing, axis_pair, check_len, direction, fixed_doc, members, moving_doc,
};
pub use term::{N, Term};
pub use torque::{Interpolation, TorqueFunction, hypot};
