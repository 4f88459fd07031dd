//! First- and second-order geometric transfer functions (van der Helm 1994, eq. 3-5) and the velocities
//! and accelerations they give (eq. 7-8).
//!
//! Differentiating `D^{(o,m)}(x) = (e^o_0, e^m)` once and twice at a solved configuration:
//! ```text
//! D_cc DF^x_c = [ −D_cm | (0; I_em) ]                   (n_xc x n_q)
//! D_cc (∂²x_c/∂q_i∂q_j) = −[ DF_iᵀ (∂²e_r/∂x²) DF_j ]_r  (one right-hand side per pair i <= j)
//! DF^e = D DF^x,   ∂²e/∂q_i∂q_j = D (∂²x/∂q_i∂q_j) + DF_iᵀ (∂²e/∂x²) DF_j
//! ```
//! All solves reuse the factorization of `D_cc` made by [`crate::solve_positions`].
//! [`velocities`] and [`accelerations`] contract with `q̇` before solving, so they cost one solve
//! each and grow linearly with the model, whatever `n_q` is.

use faer::{Mat, MatMut};

use crate::algorithm::error::KinematicsError;
use crate::algorithm::evaluate::{evaluate, evaluate_constraints};
use crate::algorithm::place;
use crate::algorithm::solve::{solve_reached, solve_unchecked};
use crate::data::{Data, n_pairs, pair_index, shaped};
use crate::element::Order;
use crate::ids::ModeId;
use crate::model::topology::shared_blocks;
use crate::model::{Input, ModeRole, Model, RowTarget};

/// A solved configuration, its factors made or due (the solves make them, `solve::ensure_factors`).
fn require_solved(data: &Data) -> Result<(), KinematicsError> {
    if data.solved && (data.lu.valid || data.factors_due) { Ok(()) } else { Err(KinematicsError::NotSolved) }
}

/// Right-hand side `[ −D_cm v_x ; v_e ]` for input rates `v` (n_q), into `rhs` (n_xc).
fn input_rhs(model: &Model, data: &Data, v: &[f64], rhs: &mut [f64]) {
    rhs.fill(0.0);
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Mode(m) = inp {
            rhs[model.mode_row[m.index()].expect("input mode has a row")] += v[j];
        }
    }
    for &(src, r, j) in &model.pattern.scatter_input {
        rhs[r] -= data.de[src] * v[j];
    }
}

/// `uᵀ H_k w` for every mode `k` of the elements `set` (all when `None`), into `out` (n_e); `u`,
/// `w` are global (n_x).
fn contract(model: &Model, data: &mut Data, set: Option<&[usize]>, u: &[f64], w: &[f64], out: &mut [f64]) {
    let (mut ul, mut wl) = (std::mem::take(&mut data.work.local_u), std::mem::take(&mut data.work.local_w));
    // the velocities' and the predictor's forms are quadratic (u = w): gathered once
    let same = std::ptr::eq(u, w);
    let mut one = |entry: &crate::model::ElementEntry| {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        ul.clear();
        ul.extend(entry.coords.iter().map(|&c| u[c]));
        if !same {
            wl.clear();
            wl.extend(entry.coords.iter().map(|&c| w[c]));
        }
        let wl = if same { &ul } else { &wl };
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            // a joint between two orientation nodes (8), an orientation's norm (4), with its size
            // known to the compiler
            out[entry.mode_offset + k] = match n {
                8 => quadratic_form(&h[..64], 8, &ul[..8], &wl[..8]),
                4 => quadratic_form(&h[..16], 4, &ul[..4], &wl[..4]),
                _ => quadratic_form(h, n, &ul, wl),
            };
        }
    };
    match set {
        Some(set) => set.iter().for_each(|&i| one(&model.elements[i])),
        None => model.elements.iter().for_each(one),
    }
    data.work.local_u = ul;
    data.work.local_w = wl;
}

/// `uᵀ H w` for the row-major `n x n` `H`, row by row, rows where `u` is 0 left out. The sums
/// are those of `Iterator::sum` (from −0, in order), so that the result does not depend on the
/// size being known.
#[inline(always)]
fn quadratic_form(h: &[f64], n: usize, u: &[f64], w: &[f64]) -> f64 {
    let mut total = -0.0;
    for (row, &ua) in h.chunks_exact(n).zip(u) {
        if ua != 0.0 {
            let mut s = -0.0;
            for (hv, wv) in row.iter().zip(w) {
                s += hv * wv;
            }
            total += ua * s;
        }
    }
    total
}

/// `D v` for every mode (n_e) from a global coordinate vector `v` (n_x).
fn jacobian_times(model: &Model, data: &Data, v: &[f64], out: &mut [f64]) {
    let own = free_on_own(data);
    for entry in &model.elements {
        for k in 0..entry.element.layout().n_modes() {
            let (g, coords) = element_gradient(model, data, entry, k, own);
            out[entry.mode_offset + k] = g.iter().zip(coords).map(|(gv, &c)| gv * v[c]).sum();
        }
    }
}

/// Whether the free elements are evaluated to first order on their own coordinates only (the
/// solve's evaluation, `Data::free_own`), their gradients not carried through the attachments.
fn free_on_own(data: &Data) -> bool {
    data.free_own && data.order_free == Some(Order::Value)
}

/// The gradients the mode rates need: the constraint elements' to first order, and the free
/// elements' where the solve did not leave them on their own coordinates, whose rates then come
/// from the attached points' (carrying them through the attachments was 6 % of the shoulder's
/// forward rate evaluation).
fn evaluate_for_rates(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    if free_on_own(data) {
        evaluate_constraints(model, data, Order::Gradient)
    } else {
        evaluate(model, data, Order::Gradient)
    }
}

/// Mode `k` of `entry`'s gradient and the coordinates it is on: with `own`, a free element's on
/// its own coordinates (`Data::de_own`), else the expanded one (`Data::de`).
fn element_gradient<'a>(
    model: &'a Model,
    data: &'a Data,
    entry: &'a crate::model::ElementEntry,
    k: usize,
    own: bool,
) -> (&'a [f64], &'a [usize]) {
    if own {
        return crate::algorithm::screws::own_gradient(model, data, entry, k, k + 1);
    }
    let n = entry.coords.len();
    (&data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n], &entry.coords)
}

/// `ė` (n_e) at the rates `xd` (n_x) of the tree path's recursion for input rates `qd` (n_q):
/// a row's mode rate is its target's (0 for a fixed mode, the input's rate for an input),
/// which the placed rates hold to round-off — each step turns its nodes by its element's modes
/// at those rates, so `D_cc ẋ` is the right-hand side — and only a dependent mode's is `D ẋ`
/// (a free element's on its own coordinates where the solve left it so: `xd` rates the attached
/// nodes too).
fn placed_mode_rates(model: &Model, data: &Data, qd: &[f64], xd: &[f64], out: &mut [f64]) {
    for (&m, target) in model.rows.iter().zip(&model.row_target) {
        out[m] = match *target {
            RowTarget::Fixed(_) => 0.0,
            RowTarget::Input(j) => qd[j],
        };
    }
    let own = free_on_own(data);
    for &m in &model.dependent_modes {
        let (el, k) = model.mode_element[m];
        let (g, coords) = element_gradient(model, data, &model.elements[el.index()], k, own);
        out[m] = g.iter().zip(coords).map(|(gv, &c)| gv * xd[c]).sum();
    }
}

/// `∂x/∂q · v + (∂²x/∂q²)(w, w)` in one solve: the coordinate rates for input rates `v` (n_q),
/// plus the quadratic term when `w = Some(ẋ)` (n_x), into `x` (n_x).
pub(crate) fn directional(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    quadratic: Option<&[f64]>,
    x: &mut [f64],
) -> Result<(), KinematicsError> {
    directional_with(model, data, v, quadratic, x, true)
}

/// [`directional`]; with `attached = false` the attached coordinates are left at zero: no
/// element reads them (elements on attached nodes are evaluated on their own coordinates, placed
/// from their frames, and contracted on their expanded ones), so a predictor need not rate them.
pub(crate) fn directional_with(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    quadratic: Option<&[f64]>,
    x: &mut [f64],
    attached: bool,
) -> Result<(), KinematicsError> {
    require_solved(data)?;
    let nc = model.n_unknowns();
    let mut rhs = std::mem::take(&mut data.work.c_rhs);
    let result = directional_in(model, data, v, quadratic, &mut rhs);
    if result.is_ok() {
        x.fill(0.0);
        for (col, &c) in model.dependent_coords.iter().enumerate() {
            x[c] = rhs[col];
        }
    }
    data.work.c_rhs = rhs;
    result?;
    debug_assert_eq!(nc, model.dependent_coords.len());
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            x[c.index()] = v[j];
        }
    }
    if attached {
        // x is 0 but at the dependent and input coordinates: a still frame's points stay +0
        model.attachments.rates_of_moving(&data.att_jac, x, quadratic);
    }
    Ok(())
}

/// The solve of [`directional`], into `rhs` (n_unknowns).
fn directional_in(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    quadratic: Option<&[f64]>,
    rhs: &mut [f64],
) -> Result<(), KinematicsError> {
    // D_cm's entries, where the tree path's acceptance left the gradients due
    evaluate_constraints(model, data, Order::Gradient)?;
    input_rhs(model, data, v, rhs);
    if let Some(w) = quadratic {
        evaluate_constraints(model, data, Order::Hessian)?;
        let mut h = std::mem::take(&mut data.work.e_h);
        contract(model, data, Some(&model.constraint_elements), w, w, &mut h);
        for (r, &m) in model.rows.iter().enumerate() {
            rhs[r] -= h[m];
        }
        data.work.e_h = h;
    }
    let nc = rhs.len();
    // the factors were probed at this configuration when it converged
    solve_unchecked(model, data, MatMut::from_column_major_slice_mut(rhs, nc, 1))
}

/// Compute `DF^x` (n_x x n_q) and `DF^e` (n_e x n_q) at the solved configuration.
///
/// Rows of `DF^e` for fixed modes are 0 and for input modes the unit rows, by definition; the
/// dependent modes' rows are `D DF^x`.
pub fn first_order(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    require_solved(data)?;
    if data.df_valid && data.df_complete {
        return Ok(());
    }
    // on a placed tree, from the joints' screws outward: no factors, no solve
    data.df_by_screws = false;
    if crate::algorithm::screws::first_order(model, data)? {
        (data.df_by_screws, data.df_valid, data.df_complete) = (true, true, true);
        return Ok(());
    }
    // free elements evaluated on their own coordinates (the solve's) are contracted with the
    // attached rows there: the chain rule through the attachments is not needed for DF
    let own = free_on_own(data);
    if own {
        evaluate_constraints(model, data, Order::Gradient)?;
    } else {
        evaluate(model, data, Order::Gradient)?;
    }
    let (nx, ne, nq, nc) = (model.n_x(), model.n_e(), model.n_q(), model.n_unknowns());
    // the storage of the last frame's DF, and of its right-hand sides, is reused
    let take = |m: &mut Mat<f64>| std::mem::replace(m, Mat::new());
    let (mut b, mut unit) = (take(&mut data.work.df_rhs), std::mem::take(&mut data.work.zeros_q));
    let (mut dfx, mut dfe) = (take(&mut data.df_x), take(&mut data.df_e));
    b.resize_with(nc, nq, |_, _| 0.0);
    for j in 0..nq {
        unit[j] = 1.0;
        input_rhs(model, data, &unit, b.col_as_slice_mut(j));
        unit[j] = 0.0;
    }
    // on the tree path, each column over its input's subtree
    let solved = solve_reached(model, data, b.as_mut(), |j, list| {
        list.clear();
        list.extend_from_slice(model.reach.as_ref().map_or(&[][..], |r| r.of(j)));
    });
    if solved.is_ok() {
        // the entries written are the same at every configuration (the dependent, input and
        // attached rows): the others stay 0 from when the storage was made
        shaped(&mut dfx, nx, nq);
        shaped(&mut dfe, ne, nq);
        let (mut rows, mut moves) = (std::mem::take(&mut data.work.df_rows), std::mem::take(&mut data.work.df_moves));
        first_order_from(model, data, &b, &mut dfx, &mut dfe, &mut rows, &mut moves, own);
        // the screws' fill writes only the reached entries: it zeroes them again
        data.work.screws.outputs_overwritten();
        (data.work.df_rows, data.work.df_moves) = (rows, moves);
    }
    (data.work.df_rhs, data.work.zeros_q) = (b, unit);
    (data.df_x, data.df_e) = (dfx, dfe);
    solved?;
    (data.df_valid, data.df_complete) = (true, true);
    Ok(())
}

/// [`first_order`] for the equations of motion with forces `extra` besides the model's: on a
/// placed tree, `DF_x`'s rows of the points only free elements read (a muscle's; no mass or force
/// sits there and no frame hangs from them) are not formed and hold whatever they held; the free
/// elements' rows of `DF_e`, complete, take their gradient entries on those points to the points'
/// frames' rows of `DF_x` instead. A later [`first_order`] completes `DF_x`. Where a force of
/// `extra` sits on such a point, or the model has no placement, [`first_order`].
pub fn first_order_for_dynamics(
    model: &Model,
    data: &mut Data,
    extra: &[crate::model::Load],
) -> Result<(), KinematicsError> {
    require_solved(data)?;
    let att = &model.attachments;
    let loaded = extra
        .iter()
        .any(|l| matches!(*l, crate::model::Load::Force { node, .. } if att.free_only_of(node.index()).is_some()));
    if loaded || !att.any_free_only() {
        return first_order(model, data);
    }
    if data.df_valid {
        return Ok(());
    }
    data.df_by_screws = false;
    if crate::algorithm::screws::first_order_with(model, data, true)? {
        (data.df_by_screws, data.df_valid, data.df_complete) = (true, true, false);
        return Ok(());
    }
    first_order(model, data)
}

/// Inputs whose columns of `DF` [`first_order_of_modes`] solves together on a model with more
/// inputs: `n_unknowns x 256` values at a time (faer's sparse solve above 64 columns).
const MODE_COLUMNS: usize = 256;

/// The first-order transfer functions of the modes `modes` only, `∂e_m/∂q` (1 per input mode
/// of its own input, 0 for a fixed mode), into `out` (`modes.len() x n_q`, row-major), at the
/// solved configuration.
///
/// With at most 256 inputs these are [`first_order`]'s rows of `DF^e`, bit for bit. With more,
/// `DF` is solved 256 columns at a time and each column contracted with the modes' gradients
/// at once: the storage is `O(n_x · 256)` where [`first_order`] keeps `DF^x`, `DF^e` and their
/// right-hand sides whole (`O(n_x · n_q)`: 5.2 GB for a chain of 5000 bodies, each with its
/// input). `DF` is then not kept ([`Data::df_e`] is not made current).
pub fn first_order_of_modes(
    model: &Model,
    data: &mut Data,
    modes: &[ModeId],
    out: &mut Vec<f64>,
) -> Result<(), KinematicsError> {
    let nq = model.n_q();
    out.clear();
    if nq <= MODE_COLUMNS {
        first_order(model, data)?;
        for m in modes {
            out.extend((0..nq).map(|j| data.df_e[(m.index(), j)]));
        }
        return Ok(());
    }
    require_solved(data)?;
    evaluate(model, data, Order::Gradient)?;
    out.resize(modes.len() * nq, 0.0);
    let mut dependent = Vec::new();
    for (r, m) in modes.iter().enumerate() {
        match model.mode_role(*m) {
            ModeRole::Dependent => dependent.push((r, m.index())),
            ModeRole::Input => {
                let j = model.inputs.iter().position(|i| *i == Input::Mode(*m)).expect("an input mode is an input");
                out[r * nq + j] = 1.0;
            }
            ModeRole::Fixed(_) => {}
        }
    }
    if dependent.is_empty() {
        return Ok(());
    }
    let (nx, nc) = (model.n_x(), model.n_unknowns());
    let mut unit = vec![0.0; nq];
    let mut x = vec![0.0; nx];
    for j0 in (0..nq).step_by(MODE_COLUMNS) {
        let k = (nq - j0).min(MODE_COLUMNS);
        let mut b = Mat::<f64>::zeros(nc, k);
        for c in 0..k {
            unit[j0 + c] = 1.0;
            input_rhs(model, data, &unit, b.col_as_slice_mut(c));
            unit[j0 + c] = 0.0;
        }
        solve_unchecked(model, data, b.as_mut())?;
        // each column of DF^x as first_order_from makes it, contracted as it contracts them
        for c in 0..k {
            let j = j0 + c;
            x.fill(0.0);
            for (&coord, &v) in model.dependent_coords.iter().zip(b.col_as_slice(c)) {
                x[coord] = v;
            }
            if let Input::Coordinate(coord) = model.inputs[j] {
                x[coord.index()] = 1.0;
            }
            model.attachments.rates(&data.att_jac, &mut x, None);
            for &(r, m) in &dependent {
                out[r * nq + j] = mode_gradient_dot(model, data, m, &x);
            }
        }
    }
    Ok(())
}

/// `DF^x` and `DF^e` (n_x x n_q and n_e x n_q, 0 in the rows of fixed coordinates and of modes
/// neither dependent nor inputs, and in the input modes' rows but for their 1) from the solved
/// columns `b` (n_unknowns x n_q); `DF^x` by rows into `rows` ([`df_rows`]) and whether each
/// of its rows is not all 0 into `moves` (n_x).
#[allow(clippy::too_many_arguments)]
fn first_order_from(
    model: &Model,
    data: &Data,
    b: &Mat<f64>,
    dfx: &mut Mat<f64>,
    dfe: &mut Mat<f64>,
    rows: &mut Vec<f64>,
    moves: &mut Vec<bool>,
    own: bool,
) {
    let nq = model.n_q();
    for j in 0..nq {
        let src = b.col_as_slice(j);
        let dst = dfx.col_as_slice_mut(j);
        for (r, &c) in model.dependent_coords.iter().enumerate() {
            dst[c] = src[r];
        }
    }
    for (j, inp) in model.inputs.iter().enumerate() {
        match inp {
            Input::Coordinate(c) => dfx[(c.index(), j)] = 1.0,
            Input::Mode(m) => dfe[(m.index(), j)] = 1.0,
        }
    }
    let att = &model.attachments;
    let stride = df_stride(nq);
    // the attached rows from their frames': on the rows, every input at once, then copied to
    // the columns; with rows wider than 16, column by column
    if att.is_empty() || stride > 16 {
        for j in 0..nq {
            att.rates(&data.att_jac, dfx.col_as_slice_mut(j), None);
        }
        df_rows(dfx, rows, std::slice::from_ref(&(0..dfx.nrows())));
    } else {
        // (the attached rows are formed on the rows below: the others only)
        df_rows(dfx, rows, &att.unattached);
        let mut cols: [&mut [f64]; 16] = Default::default();
        for (dst, col) in cols.iter_mut().zip(dfx.col_iter_mut()) {
            *dst = col.try_as_col_major_mut().expect("a contiguous column").as_slice_mut();
        }
        let (jac, cols) = (&data.att_jac, &mut cols[..nq]);
        match stride {
            4 => att.rates_of_rows::<4>(jac, rows, cols),
            8 => att.rates_of_rows::<8>(jac, rows, cols),
            12 => att.rates_of_rows::<12>(jac, rows, cols),
            _ => att.rates_of_rows::<16>(jac, rows, cols),
        }
    }
    moves.clear();
    moves.extend(rows.chunks_exact(stride).map(|row| row.iter().any(|v| *v != 0.0)));
    // the dependent modes' rows, ∇e_m · DF_x, a row of n_q (padded) at a time
    match stride {
        4 => gradient_rows::<4>(model, data, rows, dfe, own),
        8 => gradient_rows::<8>(model, data, rows, dfe, own),
        12 => gradient_rows::<12>(model, data, rows, dfe, own),
        16 => gradient_rows::<16>(model, data, rows, dfe, own),
        _ => {
            for j in 0..nq {
                let x = dfx.col_as_slice(j);
                let e = dfe.col_as_slice_mut(j);
                for &m in &model.dependent_modes {
                    let (g, coords) = mode_gradient(model, data, m, own);
                    e[m] = g.iter().zip(coords).map(|(gv, &c)| gv * x[c]).sum();
                }
            }
        }
    }
}

/// `DF_e`'s dependent rows `∇e_m · DF_x` from `DF_x`'s rows of width `W` (the stride of
/// [`df_rows`]): each entry summed in the order of the element's coordinates from −0, as
/// [`mode_gradient_dot`] sums it.
fn gradient_rows<const W: usize>(model: &Model, data: &Data, rows: &[f64], dfe: &mut Mat<f64>, own: bool) {
    let nq = model.n_q();
    for &m in &model.dependent_modes {
        let (g, coords) = mode_gradient(model, data, m, own);
        let mut acc = [-0.0; W];
        for (gv, &c) in g.iter().zip(coords) {
            let row: &[f64; W] = rows[c * W..(c + 1) * W].try_into().expect("a row of W values");
            for l in 0..W {
                acc[l] += gv * row[l];
            }
        }
        for (j, v) in acc[..nq].iter().enumerate() {
            dfe.col_as_slice_mut(j)[m] = *v;
        }
    }
}

/// `df` (n_x x n_q) by rows into `rows` (n_x x stride, row-major, each row padded with zeros to
/// the stride, `n_q` rounded up to a multiple of 4 ([`df_stride`]): fixed-width rows keep a
/// row's sums in registers), the rows in the runs `which` (start..end) only. The padding is
/// written when the buffer is made and stays 0.
pub(crate) fn df_rows(df: &Mat<f64>, rows: &mut Vec<f64>, which: &[std::ops::Range<usize>]) {
    let (nx, nq) = (df.nrows(), df.ncols());
    let stride = df_stride(nq);
    if rows.len() != nx * stride {
        rows.clear();
        rows.resize(nx * stride, 0.0);
    }
    // four columns at a time: each row's four values are written together
    for j0 in (0..nq).step_by(4) {
        let k = (nq - j0).min(4);
        let cols: [&[f64]; 4] = std::array::from_fn(|c| df.col_as_slice(j0 + c.min(k - 1)));
        for run in which {
            for (r, row) in run.clone().zip(rows[run.start * stride..run.end * stride].chunks_exact_mut(stride)) {
                for (c, v) in row[j0..j0 + k].iter_mut().enumerate() {
                    *v = cols[c][r];
                }
            }
        }
    }
}

/// The width of a row of `DF_x` by rows ([`df_rows`]): `n_q` rounded up to a multiple of 4.
pub(crate) fn df_stride(nq: usize) -> usize {
    nq.next_multiple_of(4).max(4)
}

/// Row `c` of `DF_x` (n_q values), from the rows [`first_order`] made with it.
pub(crate) fn df_row(data: &Data, c: usize) -> &[f64] {
    let nq = data.df_x.ncols();
    let stride = df_stride(nq);
    &data.work.df_rows[c * stride..c * stride + nq]
}

/// [`element_gradient`] of mode `m`.
fn mode_gradient<'a>(model: &'a Model, data: &'a Data, m: usize, own: bool) -> (&'a [f64], &'a [usize]) {
    let (el, k) = model.mode_element[m];
    element_gradient(model, data, &model.elements[el.index()], k, own)
}

/// `∇e_m · v` for one mode and a global coordinate vector `v` (n_x).
#[inline]
pub(crate) fn mode_gradient_dot(model: &Model, data: &Data, m: usize, v: &[f64]) -> f64 {
    let (el, k) = model.mode_element[m];
    let entry = &model.elements[el.index()];
    let n = entry.coords.len();
    let g = &data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n];
    g.iter().zip(&entry.coords).map(|(gv, &c)| gv * v[c]).sum()
}

/// Compute the second-order transfer functions `∂²x/∂q_i∂q_j` (n_x x n_q(n_q+1)/2) and
/// `∂²e/∂q_i∂q_j` (n_e x n_q(n_q+1)/2) at the solved configuration (also computes the first
/// order). Columns are numbered by [`crate::pair_index`]; rows of fixed and input modes are 0.
pub fn second_order(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    second_order_rows(model, data, true)
}

/// [`second_order`] for the equations of motion: the rows of `D²F_x` of attached coordinates
/// are computed only where a mass or a force load sits (and up their chains); the others are
/// left 0. `D²F_e` is complete. A later [`second_order`] completes `D²F_x`.
pub fn second_order_for_dynamics(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    second_order_rows(model, data, false)
}

fn second_order_rows(model: &Model, data: &mut Data, all_attached: bool) -> Result<(), KinematicsError> {
    first_order(model, data)?;
    if data.d2f_valid && (data.d2f_complete || !all_attached) {
        return Ok(());
    }
    evaluate(model, data, Order::Hessian)?;
    let (nx, ne, nq, nc) = (model.n_x(), model.n_e(), model.n_q(), model.n_unknowns());
    let np = n_pairs(nq);
    // hq[m·np + p] = DF_iᵀ H_m DF_j, element by element on local columns
    let mut hq = vec![0.0; ne * np];
    let mut u = Vec::new();
    let mut t = Vec::new();
    let mut cols = Vec::with_capacity(nq);
    for entry in &model.elements {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        // the inputs that move this element (in a chain, only those upstream of it)
        cols.clear();
        for j in 0..nq {
            let col = data.df_x.col_as_slice(j);
            if entry.coords.iter().any(|&c| col[c] != 0.0) {
                cols.push(j);
            }
        }
        let nz = cols.len();
        if nz == 0 {
            continue;
        }
        u.clear();
        u.resize(n * nz, 0.0);
        for (jj, &j) in cols.iter().enumerate() {
            let col = data.df_x.col_as_slice(j);
            for (a, &c) in entry.coords.iter().enumerate() {
                u[a * nz + jj] = col[c];
            }
        }
        t.resize(n * nz, 0.0);
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            // t = H u (n x nz), skipping the Hessian's zero entries
            t.fill(0.0);
            for (ta, hrow) in t.chunks_exact_mut(nz).zip(h.chunks_exact(n)) {
                for (ub, &hab) in u.chunks_exact(nz).zip(hrow) {
                    if hab != 0.0 {
                        for (tv, uv) in ta.iter_mut().zip(ub) {
                            *tv += hab * uv;
                        }
                    }
                }
            }
            // out[pair(i, j)] = Σ_a u[a, i] t[a, j], i <= j
            let out = &mut hq[(entry.mode_offset + k) * np..(entry.mode_offset + k + 1) * np];
            for ii in 0..nz {
                let i = cols[ii];
                for jj in ii..nz {
                    let s: f64 = u.chunks_exact(nz).zip(t.chunks_exact(nz)).map(|(ua, ta)| ua[ii] * ta[jj]).sum();
                    out[pair_index(i, cols[jj], nq)] = s;
                }
            }
        }
    }
    let mut rhs = Mat::<f64>::zeros(nc, np);
    for p in 0..np {
        let col = rhs.col_as_slice_mut(p);
        for (r, &m) in model.rows.iter().enumerate() {
            col[r] = -hq[m * np + p];
        }
    }
    // on the tree path, pair (i, j) over the subtree both inputs move: none for inputs on
    // different branches (every entry of the pair's right-hand side is in the rows of an
    // element that both move, so in that subtree)
    let pairs: Vec<(usize, usize)> = (0..nq).flat_map(|i| (i..nq).map(move |j| (i, j))).collect();
    solve_reached(model, data, rhs.as_mut(), |p, list| {
        if let Some(reach) = &model.reach {
            let (i, j) = pairs[p];
            shared_blocks(reach.of(i), reach.of(j), list);
        }
    })?;
    let mut d2x = Mat::<f64>::zeros(nx, np);
    let mut d2e = Mat::<f64>::zeros(ne, np);
    for p in 0..np {
        let src = rhs.col_as_slice(p);
        let dst = d2x.col_as_slice_mut(p);
        for (r, &c) in model.dependent_coords.iter().enumerate() {
            dst[c] = src[r];
        }
        if !model.attachments.is_empty() {
            let (i, j) = pairs[p];
            debug_assert_eq!(pair_index(i, j, nq), p);
            let (u, w) = (data.df_x.col_as_slice(i), data.df_x.col_as_slice(j));
            if all_attached {
                model.attachments.second(&data.att_jac, dst, u, w);
            } else {
                model.attachments.second_of(&model.attachments.dynamic, &data.att_jac, dst, u, w);
            }
        }
        let x = d2x.col_as_slice(p);
        for &m in &model.dependent_modes {
            d2e[(m, p)] = mode_gradient_dot(model, data, m, x) + hq[m * np + p];
        }
    }
    data.d2f_x = d2x;
    data.d2f_e = d2e;
    data.d2f_valid = true;
    data.d2f_complete = all_attached;
    Ok(())
}

/// `out[(m, i n_q + k)] = w_iᵀ H_m DF_x e_k` for every mode `m` of the elements `set` and every
/// input `k` (`out` n_e x (n_q · ws.len()), row-major; `w_i` global, n_x): `H_m w_i` once per
/// direction, then `n_q` products with `DF_x`'s rows on the element's coordinates — or, with
/// fewer inputs than directions, `H_m DF_x` once.
pub(crate) fn contract_directions(model: &Model, data: &Data, set: &[usize], ws: &[&[f64]], out: &mut [f64]) {
    let nq = model.n_q();
    let ncols = nq * ws.len();
    if nq >= ws.len() {
        match df_stride(nq) {
            4 => return contract_directions_rows::<4>(model, data, set, ws, out),
            8 => return contract_directions_rows::<8>(model, data, set, ws, out),
            12 => return contract_directions_rows::<12>(model, data, set, ws, out),
            16 => return contract_directions_rows::<16>(model, data, set, ws, out),
            _ => {}
        }
    }
    let (mut y, mut u, mut wl) = (Vec::new(), Vec::new(), Vec::new());
    for &el in set {
        let entry = &model.elements[el];
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        // the directions on the element's coordinates (n each, one after the other)
        wl.clear();
        wl.extend(ws.iter().flat_map(|w| entry.coords.iter().map(|&c| w[c])));
        // u = DF_x on the coordinates, once per element: by columns (n_q x n) with fewer inputs
        // than directions, else by rows (n x n_q)
        u.clear();
        if nq < ws.len() {
            u.extend((0..nq).flat_map(|j| entry.coords.iter().map(move |&c| (c, j))).map(|(c, j)| data.df_x[(c, j)]));
        } else {
            for &c in &entry.coords {
                u.extend_from_slice(df_row(data, c));
            }
        }
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            if nq < ws.len() {
                for (j, uj) in u.chunks_exact(n).enumerate() {
                    y.clear();
                    y.extend(h.chunks_exact(n).map(|row| row.iter().zip(uj).map(|(hv, uv)| hv * uv).sum::<f64>()));
                    for (i, w) in ws.iter().enumerate() {
                        out[(entry.mode_offset + k) * ncols + i * nq + j] =
                            y.iter().zip(&entry.coords).map(|(yv, &c)| yv * w[c]).sum::<f64>();
                    }
                }
                continue;
            }
            for i in 0..ws.len() {
                let w = &wl[i * n..(i + 1) * n];
                y.clear();
                y.extend(h.chunks_exact(n).map(|row| row.iter().zip(w).map(|(hv, wv)| hv * wv).sum::<f64>()));
                // yᵀ U, row by row of U (each sum in the order of a), into the mode's row
                let o = (entry.mode_offset + k) * ncols + i * nq;
                let z = &mut out[o..o + nq];
                z.fill(0.0);
                for (yv, ua) in y.iter().zip(u.chunks_exact(nq.max(1))) {
                    for (zv, uv) in z.iter_mut().zip(ua) {
                        *zv += yv * uv;
                    }
                }
            }
        }
    }
}

/// [`contract_directions`] with `DF_x` by rows of `W` values ([`df_rows`]): `w_iᵀ H_m`'s entry
/// for each coordinate is formed as it is needed and times that coordinate's whole row added
/// to the mode's row, in registers; each sum in the general loop's order (the same bits).
fn contract_directions_rows<const W: usize>(model: &Model, data: &Data, set: &[usize], ws: &[&[f64]], out: &mut [f64]) {
    let nq = model.n_q();
    let ncols = nq * ws.len();
    let rows = &data.work.df_rows;
    let mut wl = Vec::new();
    for &el in set {
        let entry = &model.elements[el];
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        wl.clear();
        wl.extend(ws.iter().flat_map(|w| entry.coords.iter().map(|&c| w[c])));
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            for i in 0..ws.len() {
                let w = &wl[i * n..(i + 1) * n];
                let mut z = [0.0; W];
                for (hr, &c) in h.chunks_exact(n).zip(&entry.coords) {
                    let y: f64 = hr.iter().zip(w).map(|(hv, wv)| hv * wv).sum();
                    let u: &[f64; W] = rows[c * W..(c + 1) * W].try_into().expect("a row of W values");
                    for l in 0..W {
                        z[l] += y * u[l];
                    }
                }
                let o = (entry.mode_offset + k) * ncols + i * nq;
                out[o..o + nq].copy_from_slice(&z[..nq]);
            }
        }
    }
}

/// Second derivatives `D²F_x(a_i, e_k)` in input directions `a_i` (given as their coordinate
/// rates `w_i = DF_x a_i`, n_x each, read only at `Model::constraint_coords`) and every input
/// `k`: column `i n_q + k` of `out` (n_x x (n_q · ws.len())), in one solve. Writes the rows of the dependent coordinates and of the
/// attached ones `which` (attachment indices, ancestors first); the others are left as they
/// are (the inputs' are 0). The constraint elements are evaluated to second order.
pub(crate) fn second_order_directions(
    model: &Model,
    data: &mut Data,
    ws: &[&[f64]],
    which: &[usize],
    out: &mut Mat<f64>,
) -> Result<(), KinematicsError> {
    require_solved(data)?;
    evaluate_constraints(model, data, Order::Hessian)?;
    let (nq, ncols) = (model.n_q(), model.n_q() * ws.len());
    // the constraint modes' rows of h are written, the rest stay 0; rhs is written whole
    let (mut h, mut rhs) =
        (std::mem::take(&mut data.work.dirs_h), std::mem::replace(&mut data.work.dirs_rhs, Mat::new()));
    h.resize(model.n_e() * ncols, 0.0);
    shaped(&mut rhs, model.n_unknowns(), ncols);
    contract_directions(model, data, &model.constraint_elements, ws, &mut h);
    for p in 0..ncols {
        let col = rhs.col_as_slice_mut(p);
        for (r, &m) in model.rows.iter().enumerate() {
            col[r] = -h[m * ncols + p];
        }
    }
    let solved = solve_unchecked(model, data, rhs.as_mut());
    if solved.is_ok() {
        for p in 0..ncols {
            let dst = out.col_as_slice_mut(p);
            for (d, &c) in rhs.col_as_slice(p).iter().zip(&model.dependent_coords) {
                dst[c] = *d;
            }
            model.attachments.second_of(which, &data.att_jac, dst, ws[p / nq], data.df_x.col_as_slice(p % nq));
        }
    }
    (data.work.dirs_h, data.work.dirs_rhs) = (h, rhs);
    solved
}

/// Velocities `ẋ = DF^x q̇` and `ė = DF^e q̇` (van der Helm 1994, eq. 7) for generalized velocities `qd`
/// (n_q), in one solve.
pub fn velocities(model: &Model, data: &mut Data, qd: &[f64]) -> Result<(), KinematicsError> {
    check_len(model, qd)?;
    evaluate_for_rates(model, data)?;
    let mut xd = std::mem::take(&mut data.xd);
    let result = directional(model, data, qd, None, &mut xd);
    if result.is_ok() {
        let mut ed = std::mem::take(&mut data.ed);
        jacobian_times(model, data, &xd, &mut ed);
        data.ed = ed;
        data.qd.copy_from_slice(qd);
    }
    data.xd = xd;
    result
}

/// Accelerations `ẍ = DF^x q̈ + (D²F^x q̇) q̇` and `ë` likewise (van der Helm 1994, eq. 8), for
/// generalized velocities `qd` and accelerations `qdd` (n_q each); also sets the velocities.
pub fn accelerations(model: &Model, data: &mut Data, qd: &[f64], qdd: &[f64]) -> Result<(), KinematicsError> {
    check_len(model, qdd)?;
    coordinate_accelerations_solved(model, data, qd, qdd)?;
    let xd = std::mem::take(&mut data.xd);
    let mut edd = std::mem::take(&mut data.edd);
    jacobian_times(model, data, &data.xdd, &mut edd);
    // ë's quadratic term needs every element's Hessian; at rest it is 0. The constraint
    // elements' `ẋᵀ H ẋ` are in `work.e_h` already, from the accelerations' right-hand side
    // (`coordinate_accelerations`, the same Hessians and `ẋ`): only the free elements' are added.
    let result = if xd.iter().any(|v| *v != 0.0) {
        evaluate(model, data, Order::Hessian).map(|()| {
            let mut h = std::mem::take(&mut data.work.e_h);
            contract(model, data, Some(&model.free_elements), &xd, &xd, &mut h);
            for (a, b) in edd.iter_mut().zip(&h) {
                *a += b;
            }
            data.work.e_h = h;
        })
    } else {
        Ok(())
    };
    data.xd = xd;
    data.edd = edd;
    result
}

/// The coordinates' accelerations `ẍ = DF^x q̈ + (D²F^x q̇) q̇` (n_x) and the velocities, as
/// [`accelerations`] but without the modes' `ë` (left as they were): only the constraint
/// elements' Hessians enter, none at rest. What kinetostatics needs (the inertia forces); the
/// free elements (muscle paths) are not evaluated beyond their gradients.
pub fn coordinate_accelerations(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
) -> Result<(), KinematicsError> {
    check_len(model, qdd)?;
    if tree_rates(model, data, qd, qdd)? {
        return Ok(());
    }
    coordinate_accelerations_solved(model, data, qd, qdd)
}

/// [`coordinate_accelerations`] by the solves of `D_cc`, leaving the constraint elements'
/// `ẋᵀ H ẋ` in `work.e_h` (n_e) for [`accelerations`]. `qdd` checked by the caller.
fn coordinate_accelerations_solved(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
) -> Result<(), KinematicsError> {
    data.rates_by_recursion = false;
    velocities(model, data, qd)?;
    let xd = std::mem::take(&mut data.xd);
    let mut xdd = std::mem::take(&mut data.xdd);
    let moving = xd.iter().any(|v| *v != 0.0);
    let result = directional(model, data, qdd, moving.then_some(&xd[..]), &mut xdd);
    if result.is_ok() {
        data.qdd.copy_from_slice(qdd);
    }
    data.xd = xd;
    data.xdd = xdd;
    result
}

/// The velocities and the coordinates' accelerations of [`coordinate_accelerations`] by the
/// tree path's recursion (`place::rates`) where the model has one and the data takes it:
/// `Ok(false)` where it does not, or where a step has no closed form (nothing set then).
fn tree_rates(model: &Model, data: &mut Data, qd: &[f64], qdd: &[f64]) -> Result<bool, KinematicsError> {
    if !data.tree_path || model.placement.is_none() {
        return Ok(false);
    }
    check_len(model, qd)?;
    require_solved(data)?;
    evaluate_for_rates(model, data)?;
    let (mut xd, mut xdd) = (std::mem::take(&mut data.xd), std::mem::take(&mut data.xdd));
    let placed = place::rates(model, data, qd, qdd, &mut xd, &mut xdd);
    data.rates_by_recursion = matches!(placed, Ok(true));
    if let Ok(true) = placed {
        let mut ed = std::mem::take(&mut data.ed);
        placed_mode_rates(model, data, qd, &xd, &mut ed);
        data.ed = ed;
        data.qd.copy_from_slice(qd);
        data.qdd.copy_from_slice(qdd);
    }
    (data.xd, data.xdd) = (xd, xdd);
    placed
}

fn check_len(model: &Model, v: &[f64]) -> Result<(), KinematicsError> {
    if v.len() != model.n_q() {
        return Err(KinematicsError::InputLength { expected: model.n_q(), got: v.len() });
    }
    if let Some(j) = v.iter().position(|a| !a.is_finite()) {
        return Err(KinematicsError::NonFiniteInput { name: model.input_name(j), value: v[j] });
    }
    Ok(())
}
