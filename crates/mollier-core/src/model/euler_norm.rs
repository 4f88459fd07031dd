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
