//! The geometric stiffness of weighted modes, `K = Σ_k w_k ∂²e_k/∂q²` (n_q x n_q), without the
//! modes' second-order transfer functions.
//!
//! Where modes enter a system only through forces `w_k` along them (a muscle's tension on its
//! path), their second derivatives are needed only as this weighted sum — SPACAR's geometric
//! stiffness. An element is evaluated on its own coordinates `x_o` (the points of bodies it
//! touches, attached nodes, `docs/theory/kernel.md`), so that
//! ```text
//! ∂²e_k/∂q_i∂q_j = DF_o,iᵀ ∇²e_k DF_o,j + ∇e_k · ∂²x_o/∂q_i∂q_j
//! K = Σ_k w_k DF_oᵀ ∇²e_k DF_o + f · D²F_x,     f = Σ_k w_k ∇e_k  (a force on the coordinates)
//! ```
//! The first term takes each element's Hessian on its own few coordinates, never carried to the
//! bodies' frames. In the second, an attached point `x_p = x_o + R(λ) p` has
//! `D²x_p = D²x_o + (∂x_p/∂λ) D²λ + DF_λᵀ 2Q(p) DF_λ`: carrying `f` to the frames as a force
//! (`Attachments::pull_back`) leaves `F · D²F_x` on the independent coordinates
//! (whose rows the solve for the constraints gives) plus, per frame, `DF_λᵀ (Σ_p F_p · 2Q(p)) DF_λ`
//! with `F_p` the force through each point: no attached row of `D²F_x` is needed either.

use faer::Mat;

use crate::data::{Data, n_pairs, pair_index};
use crate::element::{Evaluation, Order};
use crate::ids::ModeId;
use crate::kinematics::KinematicsError;
use crate::model::{ModeRole, Model};

/// Add `Σ_k w_k ∂²e_k/∂q²` for `weights = [(mode, w_k)]` to `out` (n_q x n_q; `w_k` a force
/// along the mode, N for a length, N m for an angle). Modes that are not dependent have no
/// second derivative (their `D²F_e` rows are 0) and add nothing. The weighted modes' elements are
/// evaluated here to second order on their own coordinates.
///
/// `DF_x`, the attachments' Jacobians and `D²F_x` of the independent coordinates must be current:
/// after [`crate::transfer::second_order_for_dynamics`] or the partial second order of
/// [`crate::linearize`].
pub(crate) fn add_geometric_stiffness(
    model: &Model,
    data: &mut Data,
    weights: &[(ModeId, f64)],
    out: &mut Mat<f64>,
) -> Result<(), KinematicsError> {
    let (nx, nq) = (model.n_x(), model.n_q());
    // (element, local mode, w), an element's modes together
    let mut modes: Vec<(usize, usize, f64)> = weights
        .iter()
        .filter(|(m, w)| *w != 0.0 && matches!(model.mode_role[m.index()], ModeRole::Dependent))
        .map(|&(m, w)| {
            let (el, k) = model.mode_element[m.index()];
            (el.index(), k, w)
        })
        .collect();
    modes.sort_by_key(|&(el, k, _)| (el, k));
    let np = n_pairs(nq);
    let mut pair = vec![0.0; np];
    let mut force = vec![0.0; nx];
    let (mut xloc, mut e, mut de, mut d2e) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut u, mut t, mut moving) = (Vec::new(), Vec::new(), Vec::new());
    let mut next = 0;
    while next < modes.len() {
        let el = modes[next].0;
        let entry = &model.elements[el];
        let (m, n) = (entry.element.layout().n_modes(), entry.own.len());
        xloc.clear();
        xloc.extend(entry.own.iter().map(|&c| data.x[c]));
        e.clear();
        e.resize(m, 0.0);
        de.clear();
        de.resize(m * n, 0.0);
        d2e.clear();
        d2e.resize(m * n * n, 0.0);
        let mut ev = Evaluation::new(Order::Hessian, n, &mut e, &mut de, &mut d2e, &mut data.states[el]);
        entry
            .element
            .evaluate(&xloc, &mut ev)
            .map_err(|error| KinematicsError::Element { element: entry.name.clone(), error })?;
        // U = DF_x on the own coordinates that move (n_m x n_q, row-major): a fixed body's
        // points and obstacles add nothing to the Hessian term
        moving.clear();
        moving.extend((0..n).filter(|&a| (0..nq).any(|j| data.df_x[(entry.own[a], j)] != 0.0)));
        let nm = moving.len();
        u.clear();
        u.extend(moving.iter().flat_map(|&a| (0..nq).map(move |j| (a, j))).map(|(a, j)| data.df_x[(entry.own[a], j)]));
        t.resize(nm * nq, 0.0);
        while next < modes.len() && modes[next].0 == el {
            let (_, k, w) = modes[next];
            next += 1;
            let (g, h) = (&de[k * n..(k + 1) * n], &d2e[k * n * n..(k + 1) * n * n]);
            for (&c, gv) in entry.own.iter().zip(g) {
                force[c] += w * gv;
            }
            // w Uᵀ H U: t = w H U, then Uᵀ t on the pairs i <= j
            t.fill(0.0);
            for (ta, &a) in t.chunks_exact_mut(nq).zip(&moving) {
                let ha = &h[a * n..(a + 1) * n];
                for (ub, &b) in u.chunks_exact(nq).zip(&moving) {
                    let hab = w * ha[b];
                    for (tv, uv) in ta.iter_mut().zip(ub) {
                        *tv += hab * uv;
                    }
                }
            }
            // a NaN or infinity in what is used propagates to the sums
            if !(t.iter().sum::<f64>() + g.iter().sum::<f64>()).is_finite() {
                return Err(KinematicsError::NonFinite {
                    element: entry.name.clone(),
                    mode: model.mode_info[entry.mode_offset + k].name.to_string(),
                    what: "Hessian",
                });
            }
            add_pairs(&u, &t, nq, &mut pair);
        }
    }
    // f · D²F_x: the force carried to the frames, and the frames' curvature at each point
    let att = &model.attachments;
    att.pull_back(&data.att_jac, &mut force);
    let mut attached = vec![false; nx];
    let mut frames: Vec<(usize, [[f64; 4]; 4])> = Vec::new();
    for a in &att.list {
        attached[a.node..a.node + 3].fill(true);
        let fp = &force[a.node..a.node + 3];
        if fp.iter().all(|v| *v == 0.0) {
            continue;
        }
        let c = match frames.iter().position(|(o, _)| *o == a.orientation) {
            Some(i) => &mut frames[i].1,
            None => {
                frames.push((a.orientation, [[0.0; 4]; 4]));
                &mut frames.last_mut().expect("just pushed").1
            }
        };
        for (fi, q) in fp.iter().zip(&a.q2) {
            for (cr, qr) in c.iter_mut().zip(q) {
                for (cv, qv) in cr.iter_mut().zip(qr) {
                    *cv += fi * qv;
                }
            }
        }
    }
    let d2 = data.d2f_x.as_ref();
    for (c, &fc) in force.iter().enumerate() {
        if fc != 0.0 && !attached[c] {
            for (p, v) in pair.iter_mut().enumerate() {
                *v += fc * d2[(c, p)];
            }
        }
    }
    for (o, c) in &frames {
        u.clear();
        u.extend((0..4).flat_map(|a| (0..nq).map(move |j| (a, j))).map(|(a, j)| data.df_x[(o + a, j)]));
        t.clear();
        t.extend(
            (0..4)
                .flat_map(|a| (0..nq).map(move |j| (a, j)))
                .map(|(a, j)| (0..4).map(|b| c[a][b] * u[b * nq + j]).sum::<f64>()),
        );
        add_pairs(&u, &t, nq, &mut pair);
    }
    for i in 0..nq {
        for j in 0..nq {
            out[(i, j)] += pair[pair_index(i, j, nq)];
        }
    }
    Ok(())
}

/// `pair[(i, j)] += Σ_a u[a, i] t[a, j]` for `i <= j`, `u` and `t` row-major with `nq` columns.
fn add_pairs(u: &[f64], t: &[f64], nq: usize, pair: &mut [f64]) {
    for (ua, ta) in u.chunks_exact(nq).zip(t.chunks_exact(nq)) {
        // the pairs (i, i..nq) are contiguous, from pair_index(i, i)
        let mut rest = &mut pair[..];
        for (i, &ui) in ua.iter().enumerate() {
            let (row, tail) = rest.split_at_mut(nq - i);
            rest = tail;
            if ui != 0.0 {
                for (p, tj) in row.iter_mut().zip(&ta[i..]) {
                    *p += ui * tj;
                }
            }
        }
    }
}
