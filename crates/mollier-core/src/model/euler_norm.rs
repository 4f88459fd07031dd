//! The element every orientation node with a dependent coordinate gets: its Euler parameters'
//! unit norm, a fixed mode (named `<node>.norm`).

use crate::element::{Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind};
use crate::ids::NodeId;

/// The unit-norm condition of an orientation node, `e = λᵀλ − 1` (always fixed).
#[derive(Debug, Clone)]
pub(crate) struct EulerNorm {
    layout: Layout,
}

impl EulerNorm {
    pub(crate) fn new(node: NodeId) -> Self {
        Self { layout: Layout::new(vec![(node, NodeKind::Orientation)], vec![ModeInfo::dimensionless("norm")]) }
    }
}

impl ElementInfo for EulerNorm {
    fn type_name(&self) -> &str {
        "euler-norm"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, _x0: &[f64]) -> Result<(), ElementError> {
        Ok(())
    }
}

impl Element for EulerNorm {
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        out.e[0] = x[..4].iter().map(|v| v * v).sum::<f64>() - 1.0;
        let d = out.mode(0);
        if d.has_grad() {
            for i in 0..4 {
                d.grad[i] = 2.0 * x[i];
            }
        }
        if d.has_hess() {
            for i in 0..4 {
                d.hess[i * 4 + i] = 2.0;
            }
        }
        Ok(())
    }
    /// `|λ|² − 1` and `2 λ` written directly: a tree has a norm a body, and the default's
    /// zeroing and `Evaluation` cost more than the element's own work.
    fn evaluate_gradient(
        &self,
        x: &[f64],
        e: &mut [f64],
        de: &mut [f64],
        _state: &mut crate::element::ElementState,
    ) -> Result<(), ElementError> {
        e[0] = x[..4].iter().map(|v| v * v).sum::<f64>() - 1.0;
        for (d, v) in de[..4].iter_mut().zip(x) {
            *d = 2.0 * v;
        }
        Ok(())
    }
    fn third_order(
        &self,
        x: &[num_dual::HyperHyperDual64],
        e: &mut [num_dual::HyperHyperDual64],
    ) -> Result<bool, ElementError> {
        e[0] = x[..4].iter().map(|v| *v * *v).sum::<num_dual::HyperHyperDual64>() - 1.0;
        Ok(true)
    }
    fn fourth_order(&self, x: &[crate::element::Jet4], e: &mut [crate::element::Jet4]) -> Result<bool, ElementError> {
        e[0] = x[..4].iter().map(|v| *v * *v).sum::<crate::element::Jet4>() - 1.0;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::evaluate;
    use crate::element::{ElementState, Order};

    /// The first-order evaluation is the whole one's, bit for bit, every entry written, and its
    /// gradient that of the value by central differences, off the unit norm as a Newton iterate
    /// leaves it.
    #[test]
    fn the_first_order_evaluation_is_the_whole_ones() {
        let norm = EulerNorm::new(NodeId::new(0));
        for x in [[1.0, 0.0, 0.0, 0.0], [0.3, -0.5, 0.7, 0.2], [-1.1, 0.4, 0.05, -0.6]] {
            let (e, de, _) = evaluate(&norm, &x, Order::Gradient).unwrap();
            let (mut e1, mut de1) = ([f64::NAN], [f64::NAN; 4]);
            norm.evaluate_gradient(&x, &mut e1, &mut de1, &mut ElementState::default()).unwrap();
            assert_eq!(e[0].to_bits(), e1[0].to_bits(), "{x:?}");
            assert!(de.iter().zip(&de1).all(|(a, b)| a.to_bits() == b.to_bits()), "{x:?}: {de:?} vs {de1:?}");
            let value = |x: &[f64]| {
                let mut e = [0.0];
                norm.evaluate_gradient(x, &mut e, &mut [0.0; 4], &mut ElementState::default()).unwrap();
                e[0]
            };
            for i in 0..4 {
                let h = 1e-6;
                let (mut up, mut down) = (x, x);
                up[i] += h;
                down[i] -= h;
                let central = (value(&up) - value(&down)) / (2.0 * h);
                assert!((central - de1[i]).abs() < 1e-9, "{x:?} {i}: {central} vs {}", de1[i]);
            }
        }
    }
}
