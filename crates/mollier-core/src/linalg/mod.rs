//! Linear algebra of the kernel: small dense LU factorizations and the sparse structure of `D_cc`
//! with its block-triangular or sparse LU. No model type is known here.

pub mod dense;
pub(crate) mod sparse;
