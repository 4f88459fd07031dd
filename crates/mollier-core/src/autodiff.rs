//! Exact derivatives of a generic deformation function with dual numbers.
//!
//! First derivatives use one forward-mode pass per local coordinate (`Dual64`); second
//! derivatives one hyper-dual pass per coordinate pair (`HyperDual64`), `n(n+1)/2` in all. This
//! is exact to rounding, and slower than analytic derivatives: use it to check them, or to ship
//! an element quickly.

use num_dual::{Dual64, HyperDual64, HyperHyperDual64};

use crate::element::{Deformations, Element, ElementError, ElementInfo, Evaluation, Layout, Order};

/// Deformations `e` (m), gradients (`m x n`) and Hessians (`m x n x n`), row-major.
pub type Derivatives = (Vec<f64>, Vec<f64>, Vec<f64>);

/// Deformations and, as `order` asks, their gradient and Hessians, by dual numbers.
pub fn derivatives<E: Deformations + ?Sized>(
    element: &E,
    x: &[f64],
    order: Order,
) -> Result<Derivatives, ElementError> {
    let m = element.layout().n_modes();
    let n = x.len();
    let mut e = vec![0.0; m];
    element.deformations(x, &mut e)?;
    let mut de = Vec::new();
    let mut d2e = Vec::new();
    if order >= Order::Gradient {
        de = vec![0.0; m * n];
        let mut xd: Vec<Dual64> = x.iter().map(|&v| Dual64::from(v)).collect();
        let mut ed = vec![Dual64::from(0.0); m];
        for j in 0..n {
            xd[j].eps = 1.0;
            element.deformations(&xd, &mut ed)?;
            xd[j].eps = 0.0;
            for k in 0..m {
                de[k * n + j] = ed[k].eps;
            }
        }
    }
    if order >= Order::Hessian {
        d2e = vec![0.0; m * n * n];
        let mut xh: Vec<HyperDual64> = x.iter().map(|&v| HyperDual64::from(v)).collect();
        let mut eh = vec![HyperDual64::from(0.0); m];
        for i in 0..n {
            for j in i..n {
                xh[i].eps1 = 1.0;
                xh[j].eps2 = 1.0;
                element.deformations(&xh, &mut eh)?;
                xh[i].eps1 = 0.0;
                xh[j].eps2 = 0.0;
                for k in 0..m {
                    let v = eh[k].eps1eps2;
                    d2e[k * n * n + i * n + j] = v;
                    d2e[k * n * n + j * n + i] = v;
                }
            }
        }
    }
    Ok((e, de, d2e))
}

/// [`Element::third_order`] of an element written over [`Deformations`]: its deformations over
/// `HyperHyperDual64`, `Ok(true)`.
pub fn third_order<E: Deformations + ?Sized>(
    element: &E,
    x: &[HyperHyperDual64],
    e: &mut [HyperHyperDual64],
) -> Result<bool, ElementError> {
    element.deformations(x, e).map(|()| true)
}

/// [`Element::third_order`] by [`third_order`] (and [`Element::fourth_order`] likewise), for an
/// element that implements
/// [`Deformations`]: write `mollier_core::third_order_by_deformations!();` inside its
/// `impl Element`.
#[macro_export]
macro_rules! third_order_by_deformations {
    () => {
        fn third_order(
            &self,
            x: &[$crate::HyperHyperDual64],
            e: &mut [$crate::HyperHyperDual64],
        ) -> Result<bool, $crate::ElementError> {
            $crate::autodiff::third_order(self, x, e)
        }
        fn fourth_order(&self, x: &[$crate::Jet4], e: &mut [$crate::Jet4]) -> Result<bool, $crate::ElementError> {
            $crate::Deformations::deformations(self, x, e).map(|()| true)
        }
    };
}

/// Makes an [`Element`] of a [`Deformations`] by automatic differentiation.
#[derive(Debug, Clone)]
pub struct AutoDiff<E>(pub E);

impl<E: Deformations> ElementInfo for AutoDiff<E> {
    fn type_name(&self) -> &str {
        self.0.type_name()
    }
    fn layout(&self) -> &Layout {
        self.0.layout()
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        self.0.initialize(x0)
    }
    fn mode_reference(&self, k: usize) -> Option<f64> {
        self.0.mode_reference(k)
    }
    fn drawing(&self, x: &[f64]) -> crate::element::Drawing {
        self.0.drawing(x)
    }
}

impl<E: Deformations> Element for AutoDiff<E> {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let (e, de, d2e) = derivatives(&self.0, x, out.order())?;
        out.e.copy_from_slice(&e);
        let n = x.len();
        for k in 0..e.len() {
            let d = out.mode(k);
            if d.has_grad() {
                d.grad.copy_from_slice(&de[k * n..(k + 1) * n]);
            }
            if d.has_hess() {
                d.hess.copy_from_slice(&d2e[k * n * n..(k + 1) * n * n]);
            }
        }
        Ok(())
    }
    fn third_order(&self, x: &[HyperHyperDual64], e: &mut [HyperHyperDual64]) -> Result<bool, ElementError> {
        third_order(&self.0, x, e)
    }
    fn fourth_order(&self, x: &[crate::Jet4], e: &mut [crate::Jet4]) -> Result<bool, ElementError> {
        self.0.deformations(x, e).map(|()| true)
    }
}
