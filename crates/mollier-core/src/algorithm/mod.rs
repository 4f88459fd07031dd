//! The algorithms, free functions `algo(&model, &mut data, ...)` over a [`crate::Model`] and its
//! [`crate::Data`], in floors: an element's evaluation (`local`), the elements on threads
//! ([`parallel`]), the model's evaluation and `D_cc` (`evaluate`), the well-posedness
//! ([`diagnostics`]), `D_cc`'s solves (`solve`), the transfer functions ([`transfer`], third order [`transfer3`]), the
//! predictor and Newton-Raphson ([`kinematics`]), then [`dynamics`], [`stiffness`] and
//! [`linearize`].

pub mod diagnostics;
pub mod dynamics;
pub(crate) mod error;
pub(crate) mod evaluate;
pub mod joint_force;
pub mod kinematics;
pub mod linearize;
pub(crate) mod local;
pub mod parallel;
pub(crate) mod place;
pub(crate) mod predictor;
pub mod screws;
pub(crate) mod solve;
pub mod stiffness;
pub mod transfer;
pub mod transfer3;
pub mod transfer4;
pub(crate) mod well_posed;
