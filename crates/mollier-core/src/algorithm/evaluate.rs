//! The model's evaluation: every element's deformations and derivatives at the current `x`, `D_cc`
//! assembled from them, and the check of a solve with it.

use crate::algorithm::error::KinematicsError;
use crate::algorithm::local::{all_finite, chain_rule, check_finite, evaluate_own, evaluate_own_to, max_abs};
use crate::data::Data;
use crate::element::Order;
use crate::model::Model;

/// Evaluate every element at the current `x`: deformations and, as `order` asks, their first
/// and second derivatives. Periodic modes are unwrapped: towards their target for constraint
/// rows, towards their previous value otherwise.
pub fn evaluate(model: &Model, data: &mut Data, order: Order) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, order)?;
    if data.order_free.is_some_and(|o| o >= order) {
        return Ok(());
    }
    // evaluated on their own coordinates already (the tree path's): the chain rule is what is
    // left of a first-order evaluation
    if order == Order::Gradient && data.order_free == Some(Order::Value) && data.free_own {
        for &i in &model.free_elements {
            if let Some(chain) = &model.elements[i].chain {
                chain_rule(model, data, i, chain, order);
            }
            check_finite(model, data, i, order)?;
        }
        data.order_free = Some(order);
        return Ok(());
    }
    model.attachments.place_some(&model.attachments.rest, &mut data.x, &mut data.att_jac);
    data.e_prev.copy_from_slice(&data.e);
    evaluate_elements(model, data, &model.free_elements, order)?;
    (data.order_free, data.free_own) = (Some(order), false);
    Ok(())
}

/// [`evaluate`] to first order, with the free elements `hessian` (by element, `true` for those
/// wanted) evaluated to second order on their own coordinates: element `i`'s Hessians there
/// (m x n_own x n_own, row-major), from the same evaluation that gave its value and gradient, are
/// written into `kept` at `kept_at[i] = Some((offset, 0))` (`kept` grown as needed, never
/// shrunk), not checked for finiteness (values and gradients are). Always evaluates the free
/// elements, even when they were.
pub(crate) fn evaluate_keeping_hessians(
    model: &Model,
    data: &mut Data,
    hessian: &[bool],
    kept: &mut Vec<f64>,
    kept_at: &mut [Option<(usize, usize)>],
) -> Result<(), KinematicsError> {
    begin_free_elements(model, data)?;
    // the Hessians written where they are kept, one after another from the start of `kept`
    // (grown when they need more: a step's are as long as the last's, and nothing is zeroed
    // twice)
    let mut at = 0;
    for &i in &model.free_elements {
        if !hessian[i] {
            evaluate_elements(model, data, &[i], Order::Gradient)?;
            continue;
        }
        let entry = &model.elements[i];
        let len = entry.element.layout().n_modes() * entry.own.len().pow(2);
        if kept.len() < at + len {
            kept.resize(at + len, 0.0);
        }
        evaluate_own_to(model, data, i, Order::Hessian, Some(&mut kept[at..at + len]))?;
        if let Some(chain) = &entry.chain {
            chain_rule(model, data, i, chain, Order::Gradient);
        }
        // its user checks what it uses of the Hessian (crate::stiffness)
        check_finite(model, data, i, Order::Gradient)?;
        kept_at[i] = Some((at, 0));
        at += len;
    }
    data.order_free = Some(Order::Gradient);
    Ok(())
}

/// Before the free elements are evaluated again (with Hessians kept, [`evaluate_keeping_hessians`]
/// or `crate::stiffness`'s evaluation on threads): the constraint elements to first order, the
/// attachments that only free elements use placed, the previous deformations kept (periodic
/// modes unwrap towards them) and the free elements marked unevaluated.
pub(crate) fn begin_free_elements(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, Order::Gradient)?;
    model.attachments.place_some(&model.attachments.rest, &mut data.x, &mut data.att_jac);
    data.e_prev.copy_from_slice(&data.e);
    data.order_free = None;
    Ok(())
}

/// Evaluate the elements with a fixed or input mode — the constraint equations, all that
/// Newton-Raphson and the predictor need. Elements whose modes are all dependent (muscles,
/// ligaments, free joints' measures) do not move the mechanism: [`evaluate`] adds them once at
/// the solution.
pub(crate) fn evaluate_constraints(model: &Model, data: &mut Data, order: Order) -> Result<(), KinematicsError> {
    if data.order.is_some_and(|o| o >= order) {
        return Ok(());
    }
    model.attachments.place_some(&model.attachments.constraining, &mut data.x, &mut data.att_jac);
    evaluate_elements(model, data, &model.constraint_elements, order)?;
    data.order = Some(order);
    Ok(())
}

/// Evaluate the elements `set` (indices) to `order`, their nodes placed at the current `x`; the
/// other elements are left as they are.
pub(crate) fn evaluate_elements(
    model: &Model,
    data: &mut Data,
    set: &[usize],
    order: Order,
) -> Result<(), KinematicsError> {
    if order >= Order::Hessian && data.d2e.len() != model.d2e_len {
        data.d2e = vec![0.0; model.d2e_len];
    }
    for &i in set {
        evaluate_own(model, data, i, order)?;
        if let Some(chain) = &model.elements[i].chain {
            chain_rule(model, data, i, chain, order);
        }
        check_finite(model, data, i, order)?;
    }
    Ok(())
}

/// Fill `D_cc` from the element gradients ([`crate::linalg::sparse::Pattern::assemble`]).
pub(crate) fn assemble(model: &Model, data: &mut Data) {
    model.pattern.assemble(&data.de, &mut data.dcc);
}

/// Backward error and a condition lower bound (at most `condition`) of a solve of `D_cc` (or its
/// transpose).
pub(crate) fn solution_ok(model: &Model, data: &Data, v: &[f64], b: &[f64], transpose: bool, condition: f64) -> bool {
    solution_ok_in(model, data, v, b, transpose, condition, &mut Vec::new())
}

/// [`solution_ok`] with the storage of `D_cc v` given (resized to `v`).
pub(crate) fn solution_ok_in(
    model: &Model,
    data: &Data,
    v: &[f64],
    b: &[f64],
    transpose: bool,
    condition: f64,
    y: &mut Vec<f64>,
) -> bool {
    if !all_finite(v) {
        return false;
    }
    y.resize(v.len(), 0.0);
    if transpose {
        model.pattern.mul_t(&data.dcc, v, y);
    } else {
        model.pattern.mul(&data.dcc, v, y);
    }
    let bn = max_abs(b);
    for (p, q) in y.iter_mut().zip(b) {
        *p -= q;
    }
    backward_ok(max_abs(y), bn, max_abs(&data.dcc) * max_abs(v), condition)
}

/// The test of [`solution_ok_in`] on its measures: the largest residual `error`, the largest
/// right-hand side entry `rhs` and `scale` = largest `|D_cc|` entry times largest `|v|` entry;
/// the backward error at most 1e-8 and the condition bound `scale / rhs` at most `condition`.
pub(crate) fn backward_ok(error: f64, rhs: f64, scale: f64, condition: f64) -> bool {
    !(error > 1e-8 * (rhs + scale) + f64::MIN_POSITIVE || (rhs > 0.0 && scale > condition * rhs))
}
