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

/// `atan2(y, x)` (rad, in (−π, π]) over any [`Real`], its derivative parts exact and bounded
/// wherever `(y, x) ≠ 0`.
///
/// `num-dual`'s `atan2` takes the derivative parts from `atan(y / x)`, which divides by `x`: they
/// are infinite or NaN where `x` vanishes (a hinge at ±90°) and lose digits near there, the more
/// the higher the order. The quotient by the larger of `|x|`, `|y|` (`atan(y/x)` or
/// `−atan(x/y)`, which differ from `atan2` by a constant) has the same derivatives and stays
/// within [−1, 1].
pub fn atan2<T: Real>(y: T, x: T) -> T {
    let (yr, xr) = (y.re(), x.re());
    let r = if xr.abs() >= yr.abs() { (y / x).atan() } else { -(x / y).atan() };
    r - c::<T>(r.re()) + c::<T>(yr.atan2(xr))
}
