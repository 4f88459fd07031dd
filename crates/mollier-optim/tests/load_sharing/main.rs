//! Load sharing against independent references: closed forms, hand statics, KKT conditions.

mod common;
mod cone;
mod kernel;
mod max_moment;
mod one_dof;
mod robustness;
mod signs;
mod synthetic;
