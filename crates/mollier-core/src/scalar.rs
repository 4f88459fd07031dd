//! The scalar type element code is written over, so one deformation function serves `f64`
//! evaluation and exact derivatives through dual numbers (`num-dual`).

use num_dual::DualNum;

/// A real scalar: `f64` or a `num-dual` dual number over `f64`.
///
/// Write an element's deformation function once, generic over `T: Real`; the kernel evaluates it
/// with `f64`, and [`crate::autodiff`] with first- and second-order dual numbers.
pub trait Real: DualNum<Primitive = f64> + Copy + Send + Sync {}

impl<T> Real for T where T: DualNum<Primitive = f64> + Copy + Send + Sync {}

/// A constant lifted into `T`.
#[inline]
pub fn c<T: Real>(v: f64) -> T {
    T::from(v)
}
