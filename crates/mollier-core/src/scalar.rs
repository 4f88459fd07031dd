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

#[cfg(test)]
mod tests {
    use super::*;
    use num_dual::Dual3_64;

    /// Along a circle `(y, x) = r(t) (sin t, cos t)` the angle is `t`: its first derivative 1, the
    /// second and third 0, in every quadrant and where `x` is exactly 0 (a hinge at ±90°).
    #[test]
    fn atan2_over_dual_numbers_is_exact_where_x_vanishes() {
        let check = |y: Dual3_64, x: Dual3_64, t: f64| {
            let a = atan2(y, x);
            let err = [(a.re - t).abs(), (a.v1 - 1.0).abs(), a.v2.abs(), a.v3.abs()];
            assert!(err.iter().all(|e| *e < 1e-12), "at t = {t}: {a:?}");
        };
        // exactly on the axis: sin, cos and their three derivatives at ±π/2, r = 1
        let h = std::f64::consts::FRAC_PI_2;
        check(Dual3_64::new(1.0, 0.0, -1.0, 0.0), Dual3_64::new(0.0, -1.0, 0.0, 1.0), h);
        check(Dual3_64::new(-1.0, 0.0, 1.0, 0.0), Dual3_64::new(0.0, 1.0, 0.0, -1.0), -h);
        for t0 in [-3.0, -h, -1e-3, 0.0, 0.7, h - 1e-9, h, 2.5, 3.1] {
            let t = Dual3_64::new(t0, 1.0, 0.0, 0.0);
            let r = t * 0.5 + 2.0;
            check(r * t.sin(), r * t.cos(), t0);
        }
    }
}
