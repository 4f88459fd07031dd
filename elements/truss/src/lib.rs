//! TRUSS: a straight line between two position nodes, with one deformation mode, its elongation
//! `e = |x_q − x_p| − l0` (m). Fixed, it is a rigid bar with ball joints; free, it is a ligament
//! or a muscle line of action whose stress is the axial force (N, positive in tension).

use mollier_core::element::{Deformations, Element, ElementError, ElementInfo, Evaluation, Layout, ModeInfo, NodeKind};
use mollier_core::geometry::{norm, sub, vec3_at};
use mollier_core::registry::{ElementRole, ElementType, ParamDoc, ParamError, ParamKind, Params, Registry};
use mollier_core::scalar::{Real, c};
use mollier_core::{NodeId, terms};

/// A TRUSS element.
#[derive(Clone, Debug)]
pub struct Truss {
    layout: Layout,
    /// Reference length (m), from the initial configuration.
    l0: f64,
}

impl Truss {
    /// A truss from position node `p` to position node `q`.
    pub fn new(p: NodeId, q: NodeId) -> Self {
        Self {
            layout: Layout::new(
                vec![(p, NodeKind::Position), (q, NodeKind::Position)],
                vec![ModeInfo::length("elongation")],
            ),
            l0: 0.0,
        }
    }

    /// Reference length (m).
    pub fn reference_length(&self) -> f64 {
        self.l0
    }
}

impl ElementInfo for Truss {
    fn type_name(&self) -> &str {
        "truss"
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError> {
        let l = norm(&sub(&vec3_at(x0, 3), &vec3_at(x0, 0)));
        if !(l > 1e-12) {
            return Err(ElementError::Degenerate(format!("zero length ({l:e} m) in the reference configuration")));
        }
        self.l0 = l;
        Ok(())
    }
    fn mode_reference(&self, _k: usize) -> Option<f64> {
        Some(self.l0)
    }
}

impl Element for Truss {
    mollier_core::third_order_by_deformations!();
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError> {
        let l = terms::distance(&mut out.mode(0), x, 0, 3, 1.0)?;
        out.e[0] = l - self.l0;
        Ok(())
    }
}

impl Deformations for Truss {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let d = sub(&vec3_at(x, 3), &vec3_at(x, 0));
        e[0] = norm(&d) - c::<T>(self.l0);
        Ok(())
    }
}

fn build(p: &Params<'_>) -> Result<Box<dyn Element>, ParamError> {
    Ok(Box::new(Truss::new(p.node("p", NodeKind::Position)?, p.node("q", NodeKind::Position)?)))
}

/// The `truss` element type.
pub const TYPE: ElementType = ElementType {
    name: "truss",
    summary: "straight line between two points; mode: elongation (m). Bars, ligaments, muscles.",
    role: ElementRole::LineOfAction,
    modes: &["elongation"],
    params: &[
        ParamDoc { name: "p", kind: ParamKind::Node(NodeKind::Position), required: true, doc: "first end point" },
        ParamDoc { name: "q", kind: ParamKind::Node(NodeKind::Position), required: true, doc: "second end point" },
    ],
    build,
};

/// Register the `truss` type.
pub fn register(registry: &mut Registry) -> Result<(), String> {
    registry.register(TYPE)
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::conformance::{Options, check_generic};

    #[test]
    fn conformance() {
        let x0 = [0.1, -0.2, 0.3, 0.7, 0.4, -0.5];
        let mut t = Truss::new(NodeId::new(0), NodeId::new(1));
        t.initialize(&x0).unwrap();
        let r = check_generic(&t, &x0, &Options::default()).unwrap();
        assert!(r.gradient < 1e-6 && r.hessian < 1e-5, "{r:?}");
    }

    #[test]
    fn zero_length_is_rejected() {
        let mut t = Truss::new(NodeId::new(0), NodeId::new(1));
        assert!(matches!(t.initialize(&[1.0, 2.0, 3.0, 1.0, 2.0, 3.0]), Err(ElementError::Degenerate(_))));
    }
}
