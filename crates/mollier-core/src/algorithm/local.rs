//! One element's evaluation: its nodes placed, its own derivatives carried to the coordinates the
//! kernel differentiates it by (the chain rule of attached nodes), finiteness checked.

use std::f64::consts::{PI, TAU};

use crate::algorithm::error::{KinematicsError, non_finite};
use crate::data::Data;
use crate::element::{ElementError, Evaluation, Order};
use crate::model::{Model, RowTarget};

/// After element `i` was evaluated: refuse non-finite values and derivatives, and unwrap its
/// periodic modes.
pub(crate) fn check_finite(model: &Model, data: &mut Data, i: usize, order: Order) -> Result<(), KinematicsError> {
    let entry = &model.elements[i];
    let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
    for k in 0..m {
        let g = entry.mode_offset + k;
        if !data.e[g].is_finite() {
            return Err(non_finite(model, g, "value"));
        }
        if model.mode_info[g].periodic {
            let reference = match model.mode_row[g].map(|r| model.row_target[r]) {
                Some(RowTarget::Fixed(v)) => v,
                Some(RowTarget::Input(j)) => data.q[j],
                None => data.e_prev[g],
            };
            data.e[g] = unwrapped(data.e[g], reference);
        }
    }
    if order >= Order::Gradient && !all_finite(&data.de[entry.de_offset..entry.de_offset + m * n]) {
        let k = (0..m)
            .find(|&k| data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n].iter().any(|v| !v.is_finite()));
        return Err(non_finite(model, entry.mode_offset + k.unwrap_or(0), "gradient"));
    }
    if order >= Order::Hessian && !all_finite(&data.d2e[entry.d2e_offset..entry.d2e_offset + m * n * n]) {
        return Err(non_finite(model, entry.mode_offset, "Hessian"));
    }
    Ok(())
}

/// The periodic value `e` a whole number of turns towards `reference`:
/// `e + 2π round((reference − e) / 2π)`. Within half a turn the rounding gives ±0 (the sign of
/// the difference), added without calling `round` (a library call on the default target, once
/// a joint a frame): the same bits.
#[inline]
pub(crate) fn unwrapped(e: f64, reference: f64) -> f64 {
    let d = reference - e;
    e + if d.abs() < PI { 0.0f64.copysign(d) } else { TAU * (d / TAU).round() }
}

/// Whether every entry of `v` is finite. `0 · v` is NaN exactly where `v` is NaN or infinite, and
/// a sum with a NaN stays NaN: eight independent sums, which the compiler vectorizes, where a
/// short-circuiting search tests one entry at a time (the Hessians' scan was 7 % of a small
/// model's frame).
#[inline]
pub(crate) fn all_finite(v: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    for (a, x) in acc.iter_mut().zip(chunks.remainder()) {
        *a += x * 0.0;
    }
    acc.iter().all(|a| *a == 0.0)
}

/// The largest `|v_i|` (0 for none), NaNs passed over (as `f64::max` does). In eight lanes, each
/// keeping its largest (which the compiler vectorizes: `f64::max`'s fold goes one entry at a
/// time); the largest is the same whatever the order.
#[inline]
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    if v.len() < 16 {
        return v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    }
    let mut acc = [0.0f64; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            let x = x.abs();
            *a = if x > *a { x } else { *a };
        }
    }
    for x in chunks.remainder() {
        acc[0] = acc[0].max(x.abs());
    }
    acc.iter().fold(0.0f64, |m, a| m.max(*a))
}

/// Evaluate element `i` on its own local coordinates: its derivatives go to the kernel's buffers,
/// or for an element on attached nodes to the chain rule's (its own gradient, kept for its
/// forces, and a scratch Hessian).
pub(crate) fn evaluate_own(model: &Model, data: &mut Data, i: usize, order: Order) -> Result<(), KinematicsError> {
    evaluate_own_to(model, data, i, order, None)
}

/// [`evaluate_own`], its Hessians (when `order` asks for them) into `hessians` (m x n_own x
/// n_own) if given, instead of the kernel's buffers.
pub(crate) fn evaluate_own_to(
    model: &Model,
    data: &mut Data,
    i: usize,
    order: Order,
    hessians: Option<&mut [f64]>,
) -> Result<(), KinematicsError> {
    let entry = &model.elements[i];
    let m = entry.element.layout().n_modes();
    let (de, d2e) = match (&entry.chain, hessians) {
        (None, Some(h)) => (&mut data.de[entry.de_offset..], h),
        (Some(c), Some(h)) => (&mut data.de_own[c.de_own_offset..], h),
        // the Hessians' buffer is sized only once they are asked for
        (None, None) if order >= Order::Hessian => (&mut data.de[entry.de_offset..], &mut data.d2e[entry.d2e_offset..]),
        (None, None) => (&mut data.de[entry.de_offset..], &mut [][..]),
        (Some(c), None) => (&mut data.de_own[c.de_own_offset..], &mut data.chain_h[..]),
    };
    let (e, state) = (&mut data.e[entry.mode_offset..entry.mode_offset + m], &mut data.states[i]);
    evaluate_into(entry, &data.x, &mut data.xloc, order, e, de, d2e, state)
        .map_err(|error| KinematicsError::Element { element: entry.name.clone(), error })
}

/// Element `entry` evaluated at `x` on its own coordinates (gathered into `xloc`, at least
/// n_own long): its values into `e` (m) and, as `order` asks, its gradient into `de` (the first
/// m x n_own, row-major) and its Hessians into `d2e` (the first m x n_own x n_own), each zeroed
/// first; what `order` does not ask for is not touched (and may be empty).
#[inline]
pub(crate) fn evaluate_into(
    entry: &crate::model::ElementEntry,
    x: &[f64],
    xloc: &mut [f64],
    order: Order,
    e: &mut [f64],
    de: &mut [f64],
    d2e: &mut [f64],
    state: &mut crate::element::ElementState,
) -> Result<(), ElementError> {
    let (m, n) = (entry.element.layout().n_modes(), entry.own.len());
    let xloc = &mut xloc[..n];
    for (v, &c) in xloc.iter_mut().zip(&entry.own) {
        *v = x[c];
    }
    if order == Order::Gradient {
        // the element writes every entry
        return entry.element.evaluate_gradient(xloc, e, &mut de[..m * n], state);
    }
    let de: &mut [f64] = if order >= Order::Gradient { &mut de[..m * n] } else { &mut [] };
    de.fill(0.0);
    let d2e: &mut [f64] = if order >= Order::Hessian { &mut d2e[..m * n * n] } else { &mut [] };
    d2e.fill(0.0);
    entry.element.evaluate(xloc, &mut Evaluation::new(order, n, e, de, d2e, state).with_fixed(entry.fixed))
}

/// Carry the derivatives of element `i`, evaluated on its own coordinates ([`evaluate_own`]), to
/// its expanded coordinates by the chain rule (`J = ∂x_own/∂x_exp`):
/// `∇_exp e = Jᵀ ∇e`, `∇²_exp e = Jᵀ ∇²e J + Σ_a (∂e/∂x_a) ∂²x_a/∂x_exp²`.
pub(crate) fn chain_rule(model: &Model, data: &mut Data, i: usize, chain: &crate::model::attach::Chain, order: Order) {
    let entry = &model.elements[i];
    let (m, no, n) = (entry.element.layout().n_modes(), entry.own.len(), entry.coords.len());
    if order < Order::Gradient {
        return;
    }
    let g_own = &data.de_own[chain.de_own_offset..chain.de_own_offset + m * no];
    chain.gradient(&data.att_jac, g_own, &mut data.de[entry.de_offset..entry.de_offset + m * n]);
    if order < Order::Hessian {
        return;
    }
    // J's rows have 1 + 4·depth nonzeros (most own coordinates are free: one): the products
    // walk them, adding each entry's terms in the order the dense product would
    let j = &mut data.chain_j[..chain.jacobian_nonzeros()];
    let (starts, cols) = chain.sparse_jacobian(&data.att_jac, j);
    let t = &mut data.chain_t[..no * n];
    let h = &mut data.d2e[entry.d2e_offset..entry.d2e_offset + m * n * n];
    h.fill(0.0);
    for k in 0..m {
        let hk_own = &data.chain_h[k * no * no..(k + 1) * no * no];
        // t = H_own J (no x n)
        t.fill(0.0);
        for a in 0..no {
            let ta = &mut t[a * n..(a + 1) * n];
            for b in 0..no {
                let hab = hk_own[a * no + b];
                if hab != 0.0 {
                    for (&c, jv) in cols[starts[b]..starts[b + 1]].iter().zip(&j[starts[b]..starts[b + 1]]) {
                        ta[c] += hab * jv;
                    }
                }
            }
        }
        // h = Jᵀ t + Σ_a g_a ∂²x_a
        let hk = &mut h[k * n * n..(k + 1) * n * n];
        for a in 0..no {
            let ta = &t[a * n..(a + 1) * n];
            for (&c, &jac) in cols[starts[a]..starts[a + 1]].iter().zip(&j[starts[a]..starts[a + 1]]) {
                if jac != 0.0 {
                    for (hv, tv) in hk[c * n..(c + 1) * n].iter_mut().zip(ta) {
                        *hv += jac * tv;
                    }
                }
            }
            let ga = g_own[k * no + a];
            if ga != 0.0 {
                chain.add_curvature(&model.attachments, a, ga, n, hk);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;
    use std::f64::consts::{PI, TAU};

    /// The unwrap's short cut gives the formula's bits: across and at half a turn either way
    /// (where the formula rounds away from 0), at signed zeros and several turns off.
    #[test]
    fn unwrapping_is_the_formula_bit_for_bit() {
        let near = |v: f64| [v, v.next_down(), v.next_up()];
        let mut diffs = vec![0.0, -0.0, 1e-300, -1e-300, 0.3, -2.9, 3.0 * TAU + 0.1, -7.0 * PI, f64::NAN];
        diffs.extend(near(PI).into_iter().chain(near(-PI)).chain(near(TAU)).chain(near(-3.0 * PI)));
        for e in [0.0, -0.0, 1.25, -PI, 3.0 * PI, 1e6 + 0.5] {
            for &d in &diffs {
                let reference = e + d;
                let want = e + TAU * ((reference - e) / TAU).round();
                let got = super::unwrapped(e, reference);
                assert_eq!(got.to_bits(), want.to_bits(), "e {e}, reference {reference}: {got} vs {want}");
            }
            for &r in &[0.0, -0.0] {
                let want = e + TAU * ((r - e) / TAU).round();
                assert_eq!(super::unwrapped(e, r).to_bits(), want.to_bits(), "e {e}, reference {r}");
            }
        }
    }

    /// The largest magnitude of every length through a few vectors and a tail, at every place,
    /// with NaNs passed over, as the fold of `f64::max` gives it.
    #[test]
    fn max_abs_is_the_fold_of_max() {
        for n in 0..40 {
            for at in 0..n.max(1) {
                let mut v: Vec<f64> =
                    (0..n).map(|i| ((i * 7919) % 13) as f64 * if i % 3 == 0 { -0.5 } else { 0.25 }).collect();
                if n > 0 {
                    v[at] = -9.5;
                    v[(at + 1) % n] = f64::NAN;
                }
                let want = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                assert_eq!(super::max_abs(&v).to_bits(), want.to_bits(), "{n} {at}");
            }
        }
    }

    /// Every length through a few vectors and a tail, a non-finite value at every place.
    #[test]
    fn all_finite_finds_every_non_finite_value() {
        for n in 0..70 {
            let v: Vec<f64> = (0..n).map(|i| [f64::MAX, -f64::MAX, 1e-300, -0.0, 3.5][i % 5]).collect();
            assert!(all_finite(&v), "{n}");
            for i in 0..n {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut w = v.clone();
                    w[i] = bad;
                    assert!(!all_finite(&w), "{n} {i} {bad}");
                }
            }
        }
    }
}
