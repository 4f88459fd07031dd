//! The weighted second derivatives of the equations of motion, `K = Σ_k w_k ∂²e_k/∂q² +
//! Σ_r W_r ∂²x_r/∂q²` (n_q x n_q), without any second-order transfer function.
//!
//! Where modes enter a system only through forces `w_k` along them (a muscle's tension on its
//! path, a law's stress), their second derivatives are needed only as this weighted sum —
//! SPACAR's geometric stiffness; so are the coordinates' where forces `W_r` act on them (masses'
//! inertia and weight, loads). An element is evaluated on its own coordinates `x_o` (the points
//! of bodies it touches, attached nodes, `docs/theory/kernel.md`), so that
//! ```text
//! ∂²e_k/∂q_i∂q_j = DF_o,iᵀ ∇²e_k DF_o,j + ∇e_k · ∂²x_o/∂q_i∂q_j
//! K = Σ_k w_k DF_oᵀ ∇²e_k DF_o + f · D²F_x,     f = W + Σ_k w_k ∇e_k  (a force on the coordinates)
//! ```
//! The first term takes each element's Hessian on its own few coordinates, never carried to the
//! bodies' frames. In the second, an attached point `x_p = x_o + R(λ) p` has
//! `D²x_p = D²x_o + (∂x_p/∂λ) D²λ + DF_λᵀ 2Q(p) DF_λ`: carrying `f` to the frames as a force
//! (`Attachments::pull_back`) leaves `F · D²F_x` on the independent coordinates plus, per frame,
//! `DF_λᵀ (Σ_p F_p · 2Q(p)) DF_λ` with `F_p` the force through each point. The dependent
//! coordinates' second derivatives solve `D_cc D²F_c = −[DF_iᵀ H_r DF_j]_r` (the constraint
//! rows' Hessians), so `F_c · D²F_c = −Σ_r λ_r DF_iᵀ H_r DF_j` with one adjoint solve
//! `D_ccᵀ λ = F_c`: the constraint elements' Hessians are weighted and contracted once, and no
//! row of `D²F_x` is formed.

use faer::{Mat, MatMut};

use crate::algorithm::error::KinematicsError;
use crate::algorithm::evaluate::{begin_free_elements, evaluate_constraints, evaluate_keeping_hessians};
use crate::algorithm::local::all_finite;
use crate::algorithm::solve::solve_transpose_checked;
use crate::data::Data;
use crate::data::stiffness::{Group, Plan, Scratch, Shared, Source, Workspace};
use crate::element::{Evaluation, Order};
use crate::geometry::q_matrix_of;
use crate::ids::ModeId;
use crate::model::{ModeRole, Model};

/// Add `Σ_k w_k ∂²e_k/∂q² + Σ_r W_r ∂²x_r/∂q²` for `weights = [(mode, w_k)]` and the force
/// `coordinates = W` (n_x; N on a position, the Euler parameters' generalized force on an
/// orientation) to `out` (n_q x n_q; `w_k` a force along the mode, N for a length, N m for an
/// angle). Modes that are not dependent have no second derivative (their `D²F_e` rows are 0) and
/// add nothing. The weighted modes' elements are evaluated here to second order on their own
/// coordinates, the constraint elements to second order (if they are not yet).
///
/// `DF_x` and the attachments' Jacobians must be current: after [`crate::algorithm::transfer::first_order`].
pub(crate) fn add_geometric_stiffness(
    model: &Model,
    data: &mut Data,
    weights: &[(ModeId, f64)],
    coordinates: &[f64],
    out: &mut Mat<f64>,
) -> Result<(), KinematicsError> {
    // the buffers of the last call (a warm step on one thread allocates nothing here; on more,
    // the lists of the chunks handed to the threads)
    let mut ws = std::mem::take(&mut data.work.stiffness);
    let (rows, moves) = (std::mem::take(&mut data.work.df_rows), std::mem::take(&mut data.work.df_moves));
    let nq = model.n_q();
    let df = Rows { nq, stride: crate::algorithm::transfer::df_stride(nq), rows: &rows, moves: &moves };
    let result = stiffness_in(model, data, &df, weights, coordinates, out, &mut ws);
    ws.force_valid = result.is_ok();
    (data.work.df_rows, data.work.df_moves) = (rows, moves);
    data.work.stiffness = ws;
    result
}

impl Workspace {
    /// The force of the last [`add_geometric_stiffness`] (n_x: `W + Σ_k w_k ∇e_k`, carried to the
    /// frames), while the configuration it was formed at stands.
    pub(crate) fn force(&self) -> Option<&[f64]> {
        self.force_valid.then_some(&self.force[..])
    }

    /// The weights of that call's force, `(element, local mode, w)` (the dependent modes with a
    /// weight, an element's together), while [`Workspace::force`] holds.
    pub(crate) fn weights(&self) -> Option<&[(usize, usize, f64)]> {
        self.force_valid.then_some(&self.modes[..])
    }

    /// The configuration changed: [`Workspace::force`] no longer holds.
    pub(crate) fn forget_force(&mut self) {
        self.force_valid = false;
    }
}

/// Evaluate every free element at the solved configuration to first order, as
/// [`crate::algorithm::evaluate::evaluate`] does, and the elements of the modes `weighted` to second order
/// on their own coordinates in that same evaluation: the geometric stiffness at this
/// configuration ([`crate::algorithm::linearize::linearize_motion_with`]) then takes their Hessians from it
/// instead of evaluating them again, and their values and gradients (`DF_e`) come from the same
/// solve of each element (a wrapping path's geodesic). Meant for positions solved without the
/// free elements ([`crate::NewtonOptions::free_elements`] false): they are evaluated once.
pub fn evaluate_weighted(model: &Model, data: &mut Data, weighted: &[ModeId]) -> Result<(), KinematicsError> {
    let mut ws = std::mem::take(&mut data.work.stiffness);
    let result = keep_hessians(model, data, weighted, &mut ws);
    data.work.stiffness = ws;
    result
}

fn keep_hessians(
    model: &Model,
    data: &mut Data,
    weighted: &[ModeId],
    ws: &mut Workspace,
) -> Result<(), KinematicsError> {
    let Workspace { wanted, kept, kept_x, kept_at, set, kernel_at, .. } = ws;
    let ne = model.elements.len();
    wanted.clear();
    wanted.resize(ne, false);
    for m in weighted.iter().filter(|m| matches!(model.mode_role[m.index()], ModeRole::Dependent)) {
        wanted[model.mode_element[m.index()].0.index()] = true;
    }
    kept_at.clear();
    kept_at.resize(ne, None);
    let result = if data.threads() <= 1 {
        evaluate_keeping_hessians(model, data, wanted, kept, kept_at)
    } else {
        kept.clear();
        // the same evaluations, each element's on its own storage, spread over the threads
        // (crate::parallel): the same bits
        (|| {
            begin_free_elements(model, data)?;
            set.clear();
            set.extend(
                model.free_elements.iter().map(|&i| (i, if wanted[i] { Order::Hessian } else { Order::Gradient })),
            );
            crate::algorithm::parallel::evaluate_elements(model, data, set, kept, kernel_at)?;
            for (at, h) in kept_at.iter_mut().zip(kernel_at.iter()) {
                *at = h.map(|h| (h, 0));
            }
            data.order_free = Some(Order::Gradient);
            Ok(())
        })()
    };
    // where each was evaluated: its Hessian is used only there
    kept_x.clear();
    for (i, at) in kept_at.iter_mut().enumerate() {
        if let Some((_, xo)) = at {
            *xo = kept_x.len();
            kept_x.extend(model.elements[i].own.iter().map(|&c| data.x[c]));
        }
    }
    if result.is_err() {
        kept_at.fill(None);
    }
    result
}

fn stiffness_in(
    model: &Model,
    data: &mut Data,
    df: &Rows,
    weights: &[(ModeId, f64)],
    coordinates: &[f64],
    out: &mut Mat<f64>,
    ws: &mut Workspace,
) -> Result<(), KinematicsError> {
    weighted_modes(model, weights, &mut ws.modes);
    // the sums of K's upper triangle, row i's entries j >= i at pair[i stride + j] (n_q x stride)
    ws.pair.clear();
    ws.pair.resize(model.n_q() * df.stride, 0.0);
    ws.force.clear();
    ws.force.extend_from_slice(coordinates);
    group_hessians(model, data, ws)?;
    // rows of at most 16: the fixed-width kernels form whole rows (see contract_groups)
    let sym = df.stride <= 16;
    if let Some(k) = contract_groups(model, data, df, sym, ws) {
        return Err(non_finite(model, &ws.groups[k]));
    }
    add_shared_blocks(model, df, ws)?;
    add_frame_curvature(model, data, df, sym, ws);
    add_constraint_curvature(model, data, df, sym, ws)?;
    add_symmetric(df, sym, &ws.pair, out);
    Ok(())
}

/// The dependent modes with a weight, `(element, local mode, w)`, an element's together.
fn weighted_modes(model: &Model, weights: &[(ModeId, f64)], modes: &mut Vec<(usize, usize, f64)>) {
    modes.clear();
    modes.extend(
        weights.iter().filter(|(m, w)| *w != 0.0 && matches!(model.mode_role[m.index()], ModeRole::Dependent)).map(
            |&(m, w)| {
                let (el, k) = model.mode_element[m.index()];
                (el.index(), k, w)
            },
        ),
    );
    modes.sort_by_key(|&(el, k, _)| (el, k));
}

/// Stage 1, per weighted element (in order): its gradient and weighted Hessian as a [`Group`],
/// evaluated here if it was not kept at this configuration, and its weighted gradient added to
/// the force.
fn group_hessians(model: &Model, data: &mut Data, ws: &mut Workspace) -> Result<(), KinematicsError> {
    let Workspace { force, xloc, e, own, hsum, modes, groups, .. } = ws;
    let (kept, kept_x, kept_at) = (&ws.kept, &ws.kept_x, &ws.kept_at);
    own.clear();
    groups.clear();
    let mut next = 0;
    while next < modes.len() {
        let el = modes[next].0;
        let entry = &model.elements[el];
        let (m, n) = (entry.element.layout().n_modes(), entry.own.len());
        xloc.clear();
        xloc.extend(entry.own.iter().map(|&c| data.x[c]));
        // the gradient and Hessians on the element's own coordinates (m x n, m x n x n)
        let (de, d2e) = match kept_at.get(el).copied().flatten() {
            // evaluated with its Hessian at this configuration (evaluate_weighted): read in
            // place; its gradient on its own coordinates is the kernel's
            Some((ho, xo)) if kept_x[xo..xo + n] == xloc[..] => {
                let g = match &entry.chain {
                    Some(c) => Source::DeOwn(c.de_own_offset),
                    None => Source::De(entry.de_offset),
                };
                (g, Source::Kept(ho))
            }
            _ => {
                let (o, od) = (own.len(), own.len() + m * n);
                own.resize(o + m * n + m * n * n, 0.0);
                e.clear();
                e.resize(m, 0.0);
                let (de, d2e) = own[o..].split_at_mut(m * n);
                let mut ev = Evaluation::new(Order::Hessian, n, e, de, d2e, &mut data.states[el]);
                entry
                    .element
                    .evaluate(xloc, &mut ev)
                    .map_err(|error| KinematicsError::Element { element: entry.name.clone(), error })?;
                (Source::Own(o), Source::Own(od))
            }
        };
        let first = next;
        let grad = de.slice(data, kept, own, m * n);
        while next < modes.len() && modes[next].0 == el {
            let (_, k, w) = modes[next];
            next += 1;
            for (&c, gv) in entry.own.iter().zip(&grad[k * n..(k + 1) * n]) {
                force[c] += w * gv;
            }
        }
        // the element's weighted Hessian Σ_k w_k H_k, contracted once (a muscle's path has one
        // mode: its Hessian, scaled in the contraction)
        let (h, scale) = match &modes[first..next] {
            [(_, k, w)] => (d2e.plus(k * n * n), *w),
            several => {
                let all = d2e.slice(data, kept, own, m * n * n);
                weighted_sum(several.iter().map(|&(_, k, w)| (&all[k * n * n..(k + 1) * n * n], w)), hsum);
                let o = own.len();
                own.extend_from_slice(hsum);
                (Source::Own(o), 1.0)
            }
        };
        groups.push(Group { el, mode: modes[first].1, de, h, scale, n, m, ok: true, plan: Plan::default() });
    }
    Ok(())
}

/// Stages 2 and 3: each group's `Uᵀ H U` added to the pair sums; the index of the first group whose
/// part is not finite.
fn contract_groups(model: &Model, data: &Data, df: &Rows, sym: bool, ws: &mut Workspace) -> Option<usize> {
    let Workspace { pair, own, scratches, groups, contributions, shared, .. } = ws;
    let kept = &ws.kept;
    let np = model.n_q() * df.stride;
    // 2. each element's Uᵀ H U, with the finiteness of what it uses. On one thread straight
    // into the sums; on more, each on its own storage (crate::parallel), then 3. summed in the
    // elements' order: the same bits, as the fixed-width kernels add each contribution to the
    // sums whole, as it was formed (on zeros, exactly that); the general one (n_q > 16) sums
    // its terms one by one, so it always goes through the contributions.
    // With rows of at most 16 (`sym`: the fixed-width kernels form whole rows, j < i too), each
    // product is formed as `M = Uᵀ (½ H_PP U_P + H_PF U_F)` on the rows of its own points P
    // only, `M + Mᵀ` being `Uᵀ H U` but for `U_Fᵀ H_FF U_F`: the coordinates F that many elements
    // share (an obstacle's frame, 61 of the shoulder's paths) add their block `H_FF`, summed per
    // set in the elements' order, once (Shared); `pair + pairᵀ` is taken at the end
    let chunk = crate::algorithm::parallel::CHUNK;
    let chunks = groups.len().div_ceil(chunk).max(1);
    if scratches.len() < chunks {
        scratches.resize_with(chunks, Default::default);
    }
    let parts_len = plan_shared(model, df, groups, shared, sym);
    // (each written whole: sized, not zeroed)
    shared.parts.resize(parts_len, 0.0);
    let threads = data.threads();
    {
        let (own, kept, data, moving): (&[f64], &[f64], &Data, &[usize]) = (own, kept, data, &shared.moving);
        let contract = |scratch: &mut Scratch, g: &Group, out: &mut [f64], part: &mut [f64]| {
            let h = g.h.slice(data, kept, own, g.n * g.n);
            let own_coords = &model.elements[g.el].own;
            let planned = (&moving[g.plan.moving.clone()], g.plan.mp, part);
            scratch.add_congruence_sharing(df, own_coords, Some(planned), sym, h, g.scale, out);
        };
        // an element's part is finite when what it added is and the gradient it used (the
        // kernel's evaluation checked the gradients it gave: only those evaluated here are)
        let finite = |g: &Group, added: &[f64]| {
            all_finite(added) && (!matches!(g.de, Source::Own(_)) || all_finite(g.de.slice(data, kept, own, g.m * g.n)))
        };
        let part_len = |g: &Group| g.plan.nf * g.plan.nf;
        if threads <= 1 && df.stride <= 16 {
            let scratch = &mut scratches[0];
            let mut rest = &mut shared.parts[..];
            for g in groups.iter() {
                let (p, r) = std::mem::take(&mut rest).split_at_mut(part_len(g));
                rest = r;
                contract(scratch, g, pair, p);
            }
            // a NaN or infinity added stays in the sums: only then is each element's part formed
            // alone again, to name the first that is not finite
            if all_finite(pair) && groups.iter().all(|g| finite(g, &[])) {
                None
            } else {
                let (mut alone, mut part) = (vec![0.0; np], Vec::new());
                groups.iter().position(|g| {
                    alone.fill(0.0);
                    part.resize(part_len(g), 0.0);
                    contract(scratch, g, &mut alone, &mut part);
                    !finite(g, &alone)
                })
            }
        } else {
            contributions.clear();
            contributions.resize(groups.len() * np, 0.0);
            let mut work: Vec<Chunk<'_>> = Vec::with_capacity(chunks);
            let mut rest = &mut shared.parts[..];
            for ((g, c), s) in
                groups.chunks_mut(chunk).zip(contributions.chunks_mut(chunk * np)).zip(scratches.iter_mut())
            {
                let (p, r) = std::mem::take(&mut rest).split_at_mut(g.iter().map(part_len).sum());
                rest = r;
                work.push((g, c, p, s));
            }
            crate::algorithm::parallel::for_each(threads, &mut work, 1, |(groups, contributions, parts, scratch)| {
                let mut rest = &mut parts[..];
                for (g, c) in groups.iter_mut().zip(contributions.chunks_exact_mut(np)) {
                    let (p, r) = std::mem::take(&mut rest).split_at_mut(part_len(g));
                    rest = r;
                    contract(scratch, g, c, p);
                    g.ok = finite(g, c);
                }
            });
            let failed = groups.iter().position(|g| !g.ok);
            if failed.is_none() {
                // 3. the sums, in the elements' order (the same bits whatever the threads)
                for c in contributions.chunks_exact(np) {
                    for (p, v) in pair.iter_mut().zip(c) {
                        *p += v;
                    }
                }
            }
            failed
        }
    }
}

/// A group's element and mode named in the error.
fn non_finite(model: &Model, g: &Group) -> KinematicsError {
    let entry = &model.elements[g.el];
    KinematicsError::NonFinite {
        element: entry.name.clone(),
        mode: model.mode_info[entry.mode_offset + g.mode].name.to_string(),
        what: "Hessian",
    }
}

/// The shared coordinates' blocks summed per set in the elements' order, then each set's
/// `½ U_Fᵀ (Σ s H_FF) U_F` added to the pair sums.
fn add_shared_blocks(model: &Model, df: &Rows, ws: &mut Workspace) -> Result<(), KinematicsError> {
    let Workspace { pair, scratches, groups, shared, .. } = ws;
    let Shared { coords, sets, parts, sums, offsets, .. } = shared;
    let size = |nf: usize| nf * nf;
    offsets.clear();
    let mut total = 0;
    for r in sets.iter() {
        offsets.push(total);
        total += size(r.len());
    }
    sums.clear();
    sums.resize(total, 0.0);
    for g in groups.iter().map(|g| &g.plan).filter(|g| g.nf > 0) {
        let o = offsets[g.set];
        for (a, v) in sums[o..o + size(g.nf)].iter_mut().zip(&parts[g.part..g.part + size(g.nf)]) {
            *a += v;
        }
    }
    for (k, (r, &o)) in sets.iter().zip(offsets.iter()).enumerate() {
        let (f, nf) = (&coords[r.clone()], r.len());
        if nf == 0 {
            continue;
        }
        if !all_finite(&sums[o..o + size(nf)]) {
            // the first of the set's elements whose part is not finite (else the first)
            let of_set = || groups.iter().filter(|g| g.plan.nf > 0 && g.plan.set == k);
            let g = of_set()
                .find(|g| !all_finite(&parts[g.plan.part..g.plan.part + size(nf)]))
                .or_else(|| of_set().next())
                .expect("a set has elements");
            return Err(non_finite(model, g));
        }
        let hf = &sums[o..o + size(nf)];
        scratches[0].add_congruence_sharing(df, f, None, false, hf, 0.5, pair);
    }
    Ok(())
}

/// `f · D²F_x` on the frames: the force carried to the frames, and the frames' curvature at
/// each point, added to the pair sums.
fn add_frame_curvature(model: &Model, data: &Data, df: &Rows, sym: bool, ws: &mut Workspace) {
    let nx = model.n_x();
    let Workspace { force, attached, frames, pair, scratches, .. } = ws;
    let scratch = &mut scratches[0];
    let att = &model.attachments;
    att.pull_back(&data.att_jac, force);
    attached.clear();
    attached.resize(nx, false);
    frames.clear();
    for a in &att.list {
        attached[a.node..a.node + 3].fill(true);
        let fp = &force[a.node..a.node + 3];
        if fp.iter().all(|v| *v == 0.0) {
            continue;
        }
        let c = match frames.iter().position(|(o, _)| *o == a.orientation) {
            Some(i) => &mut frames[i].1,
            None => {
                frames.push((a.orientation, [[0.0; 3]; 3]));
                &mut frames.last_mut().expect("just pushed").1
            }
        };
        // Σ_p F_p · 2Q(p, e_i) = 2 Q_of(Σ_p F_p pᵀ): Q is linear in F pᵀ (geometry::q_matrix_of)
        for (cr, fi) in c.iter_mut().zip(fp) {
            for (cv, pj) in cr.iter_mut().zip(&a.p) {
                *cv += fi * pj;
            }
        }
    }
    for (o, c) in frames.iter() {
        let coords = [*o, o + 1, o + 2, o + 3];
        let q = q_matrix_of(c);
        let h: [f64; 16] = std::array::from_fn(|i| 2.0 * q[i / 4][i % 4]);
        scratch.add_congruence_sharing(df, &coords, None, sym, &h, 1.0, pair);
    }
}

/// `F_c · D²F_c` on the dependent coordinates (the inputs' second derivatives are 0): one
/// adjoint solve, then the constraint rows' Hessians weighted by `−λ`, added to the pair sums.
fn add_constraint_curvature(
    model: &Model,
    data: &mut Data,
    df: &Rows,
    sym: bool,
    ws: &mut Workspace,
) -> Result<(), KinematicsError> {
    let Workspace { force, attached, lambda, hsum, pair, scratches, .. } = ws;
    let scratch = &mut scratches[0];
    let nc = model.n_unknowns();
    lambda.clear();
    lambda.extend(model.dependent_coords.iter().map(|&c| if attached[c] { 0.0 } else { force[c] }));
    if lambda.iter().any(|v| *v != 0.0) {
        // with the factors probed at this configuration when it converged
        solve_transpose_checked(model, data, MatMut::from_column_major_slice_mut(lambda, nc, 1))?;
        evaluate_constraints(model, data, Order::Hessian)?;
        for &el in &model.constraint_elements {
            let entry = &model.elements[el];
            let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
            let rows = (0..m).filter_map(|k| model.mode_row[entry.mode_offset + k].map(|r| (k, -lambda[r])));
            let h = |k: usize| &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            weighted_sum(rows.filter(|(_, w)| *w != 0.0).map(|(k, w)| (h(k), w)), hsum);
            if !hsum.is_empty() {
                scratch.add_congruence_sharing(df, &entry.coords, None, sym, hsum, 1.0, pair);
            }
        }
    }
    Ok(())
}

/// `out += K` from the pair sums: `pair + pairᵀ` with whole rows (`sym`), else the upper
/// triangle mirrored.
fn add_symmetric(df: &Rows, sym: bool, pair: &[f64], out: &mut Mat<f64>) {
    let nq = df.nq;
    for j in 0..nq {
        for (i, o) in out.col_as_slice_mut(j).iter_mut().enumerate() {
            *o += if sym {
                pair[i * df.stride + j] + pair[j * df.stride + i]
            } else {
                pair[i.min(j) * df.stride + i.max(j)]
            };
        }
    }
}

/// `out = Σ w H` over `(H, w)` (all of one length); empty when there is none.
fn weighted_sum<'a>(terms: impl Iterator<Item = (&'a [f64], f64)>, out: &mut Vec<f64>) {
    out.clear();
    for (h, w) in terms {
        if out.is_empty() {
            out.resize(h.len(), 0.0);
        }
        for (a, hv) in out.iter_mut().zip(h) {
            *a += w * hv;
        }
    }
}

/// `DF_x` by rows (`Work::df_rows`, made with `DF_x` by [`crate::algorithm::transfer::first_order`]): an
/// element's rows are contiguous, and fixed-width rows keep a row of `H U` in registers.
struct Rows<'a> {
    nq: usize,
    stride: usize,
    rows: &'a [f64],
    moves: &'a [bool],
}

impl Rows<'_> {
    fn row(&self, r: usize) -> &[f64] {
        &self.rows[r * self.stride..(r + 1) * self.stride]
    }
}

impl Source {
    fn slice<'a>(self, data: &'a Data, kept: &'a [f64], own: &'a [f64], len: usize) -> &'a [f64] {
        match self {
            Self::De(o) => &data.de[o..o + len],
            Self::DeOwn(o) => &data.de_own[o..o + len],
            Self::Kept(o) => &kept[o..o + len],
            Self::Own(o) => &own[o..o + len],
        }
    }

    fn plus(self, d: usize) -> Self {
        match self {
            Self::De(o) => Self::De(o + d),
            Self::DeOwn(o) => Self::DeOwn(o + d),
            Self::Kept(o) => Self::Kept(o + d),
            Self::Own(o) => Self::Own(o + d),
        }
    }
}

/// A chunk of groups for a thread: the groups, their `Uᵀ H U` and shared blocks, a scratch.
type Chunk<'a> = (&'a mut [Group], &'a mut [f64], &'a mut [f64], &'a mut Scratch);

/// Mark the shared coordinates (once) and find each group's: its count, its set, the offset of
/// its part; the total length of the parts.
fn plan_shared(model: &Model, df: &Rows, groups: &mut [Group], sh: &mut Shared, sym: bool) -> usize {
    let nx = model.n_x();
    if sh.marks.len() != nx {
        sh.marks.clear();
        sh.marks.resize(nx, true);
        for a in &model.attachments.list {
            sh.marks[a.node..a.node + 3].fill(false);
        }
    }
    let (els, moves) = &sh.planned_for;
    if sh.planned_sym == sym
        && els.len() == groups.len()
        && els.iter().zip(groups.iter()).all(|(e, g)| *e == g.el)
        && moves[..] == df.moves[..]
    {
        for (g, plan) in groups.iter_mut().zip(&sh.planned) {
            g.plan.clone_from(plan);
        }
        return sh.planned_len;
    }
    sh.coords.clear();
    sh.sets.clear();
    sh.planned.clear();
    sh.moving.clear();
    let mut at = 0;
    for g in groups.iter_mut() {
        // its moving coordinates (local), those not shared first
        let own = &model.elements[g.el].own;
        let plan = &mut g.plan;
        let m0 = sh.moving.len();
        let shared = |c: usize| sym && sh.marks[c];
        sh.moving.extend((0..own.len()).filter(|&a| df.moves[own[a]] && !shared(own[a])));
        plan.mp = sh.moving.len() - m0;
        sh.moving.extend((0..own.len()).filter(|&a| df.moves[own[a]] && shared(own[a])));
        plan.moving = m0..sh.moving.len();
        let from = sh.coords.len();
        sh.coords.extend(own.iter().copied().filter(|&c| sym && df.moves[c] && sh.marks[c]));
        let nf = sh.coords.len() - from;
        plan.set = match sh.sets.iter().position(|r| sh.coords[r.clone()] == sh.coords[from..]) {
            Some(k) => {
                sh.coords.truncate(from);
                k
            }
            None => {
                sh.sets.push(from..sh.coords.len());
                sh.sets.len() - 1
            }
        };
        (plan.part, plan.nf) = (at, nf);
        sh.planned.push(plan.clone());
        at += nf * nf;
    }
    sh.planned_for.0.clear();
    sh.planned_for.0.extend(groups.iter().map(|g| g.el));
    sh.planned_for.1.clear();
    sh.planned_for.1.extend_from_slice(df.moves);
    sh.planned_len = at;
    sh.planned_sym = sym;
    at
}

impl Scratch {
    /// `pair += s Uᵀ H U` on the pairs `i <= j` (at `pair[i w + j]`, `w` the rows' stride), with
    /// `U = DF_x` on the coordinates `coords` (n of them; `H` n x n, row-major, symmetric). Only
    /// the coordinates that move enter (a fixed body's points and obstacles add nothing). A NaN
    /// or infinity in the terms used reaches `pair` (the caller checks it there).
    ///
    /// With `half` (rows of at most 16, whole rows formed), `M = s Uᵀ (½ H_PP U_P + H_PF U_F)`
    /// on the rows of P instead, whose `M + Mᵀ` is `s Uᵀ H U` but for `s U_Fᵀ H_FF U_F`.
    /// `shared = (moving, mp, part)`: the moving coordinates (indices into `coords`), P the
    /// first `mp` of them, F the others (coordinates many elements share), whose block `s H_FF`
    /// (nf x nf) goes into `part` for the caller to sum over the elements that share them
    /// (`stiffness_in`). Without it, every moving coordinate is in P.
    fn add_congruence_sharing(
        &mut self,
        df: &Rows,
        coords: &[usize],
        shared: Option<(&[usize], usize, &mut [f64])>,
        half: bool,
        h: &[f64],
        s: f64,
        pair: &mut [f64],
    ) {
        let (n, w) = (coords.len(), df.stride);
        debug_assert!(w <= 16 || (!half && shared.is_none()), "whole rows only up to 16");
        let Self { u, t, hm, moving: all, arch } = self;
        // the moving coordinates, the others first, then the shared ones (planned by the caller)
        let (moving, mp, part): (&[usize], usize, _) = match shared {
            Some((moving, mp, part)) => (moving, mp, Some(part)),
            None => {
                all.clear();
                all.extend((0..n).filter(|&a| df.moves[coords[a]]));
                (all, all.len(), None)
            }
        };
        let m = moving.len();
        // s H on the moving coordinates (m x m, row-major), ½ on P x P with `half`
        hm.clear();
        let sp = if half && mp == m { 0.5 * s } else { s };
        // (a path's obstacle frame comes after its points: in their order)
        if m == n && moving.iter().enumerate().all(|(i, &a)| i == a) {
            hm.extend(h.iter().map(|v| sp * v));
        } else {
            for &a in moving.iter() {
                let row = &h[a * n..(a + 1) * n];
                hm.extend(moving.iter().map(|&b| sp * row[b]));
            }
        }
        if half && mp < m {
            for row in hm[..mp * m].chunks_exact_mut(m) {
                for v in &mut row[..mp] {
                    *v *= 0.5;
                }
            }
        }
        // (both written whole below: sized, not zeroed)
        u.resize(m * w, 0.0);
        t.resize(m * w, 0.0);
        // u = DF_x's rows of the moving coordinates, t = s H U on P (rows of width w), then
        // U_Pᵀ t; compiled for the widest vectors the processor has (`pulp`'s runtime dispatch:
        // no FMA, so the sums round as the scalar code's)
        let c = Congruence { rows: df.rows, coords, hm, moving, mp, u, t, nq: df.nq, pair };
        match w {
            4 => arch.dispatch(Fixed::<4>(c)),
            8 => arch.dispatch(Fixed::<8>(c)),
            12 => arch.dispatch(Fixed::<12>(c)),
            16 => arch.dispatch(Fixed::<16>(c)),
            _ => {
                let Congruence { u, t, pair, nq, .. } = c;
                for (ua, &a) in u.chunks_exact_mut(w).zip(moving.iter()) {
                    ua.copy_from_slice(df.row(coords[a]));
                }
                t.fill(0.0);
                for (ta, ha) in t.chunks_exact_mut(w).zip(hm.chunks_exact(m)) {
                    for (ub, &hab) in u.chunks_exact(w).zip(ha) {
                        for (tv, uv) in ta.iter_mut().zip(ub) {
                            *tv += hab * uv;
                        }
                    }
                }
                add_pairs(u, t, nq, w, pair);
            }
        }
        if let Some(part) = part {
            let nf = m - mp;
            for (dst, row) in part.chunks_exact_mut(nf.max(1)).zip(hm[mp * m..].chunks_exact(m)) {
                for (d, v) in dst.iter_mut().zip(&row[mp..]) {
                    *d = *v;
                }
            }
        }
    }
}

/// The operands of [`Scratch::add_congruence`].
struct Congruence<'a> {
    /// `DF_x` by rows ([`Rows`]), the coordinates, `s H` on the moving ones (m x m).
    rows: &'a [f64],
    coords: &'a [usize],
    hm: &'a [f64],
    moving: &'a [usize],
    /// The moving coordinates not shared (the first `mp`): only their rows of `t` are formed
    /// and enter `Uᵀ t`.
    mp: usize,
    /// `U` and `t` (m rows of the rows' width each), written here.
    u: &'a mut [f64],
    t: &'a mut [f64],
    nq: usize,
    pair: &'a mut [f64],
}

/// [`fixed`] for rows of `W` values, run by `pulp`'s dispatch: inlined into a function compiled
/// for the processor's widest vectors (a closure would not be inlined there).
struct Fixed<'a, const W: usize>(Congruence<'a>);

impl<const W: usize> pulp::WithSimd for Fixed<'_, W> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        fixed::<W>(self.0)
    }
}

/// [`Scratch::add_congruence`] for rows of `W` values, their sums kept in registers:
/// `t[a] = Σ_b (s H)[a, b] u[b]`, two rows at a time, then row `i` of `Uᵀ t`, three rows at a
/// time, so that independent sums hide the additions' latency; each sum is taken in the order
/// of the row-by-row loop, so it rounds the same.
#[inline(always)]
fn fixed<const W: usize>(c: Congruence<'_>) {
    let Congruence { rows, coords, hm, moving, mp, u, t, nq, pair } = c;
    let m = moving.len();
    // (copied as arrays of W: a slice's copy_from_slice is a call to memcpy per row)
    for (ua, &a) in u.chunks_exact_mut(W).zip(moving) {
        let c = coords[a];
        let ua: &mut [f64; W] = ua.try_into().expect("a row of W values");
        *ua = rows[c * W..(c + 1) * W].try_into().expect("a row of W values");
    }
    let u: &[f64] = u;
    let mut a0 = 0;
    // (the rows of P only: mp)
    while a0 < mp {
        let k = (mp - a0).min(2);
        let (h0, h1) = (&hm[a0 * m..(a0 + 1) * m], &hm[(a0 + k - 1) * m..(a0 + k) * m]);
        let mut acc = [[0.0; W]; 2];
        for ((ub, &x0), &x1) in u.chunks_exact(W).zip(h0).zip(h1) {
            for l in 0..W {
                acc[0][l] += x0 * ub[l];
                acc[1][l] += x1 * ub[l];
            }
        }
        for (ta, accr) in t[a0 * W..(a0 + k) * W].chunks_exact_mut(W).zip(&acc) {
            let ta: &mut [f64; W] = ta.try_into().expect("a row of W values");
            *ta = *accr;
        }
        a0 += k;
    }
    let mut i0 = 0;
    while i0 < nq {
        let k = (nq - i0).min(3);
        let mut acc = [[0.0; W]; 3];
        for (ua, ta) in u[..mp * W].chunks_exact(W).zip(t.chunks_exact(W)) {
            for (r, accr) in acc.iter_mut().enumerate() {
                // rows are padded with zeros past n_q
                let ui = if i0 + r < W { ua[i0 + r] } else { 0.0 };
                for (x, y) in accr.iter_mut().zip(ta) {
                    *x += ui * y;
                }
            }
        }
        // whole rows (the entries j < i, and the padding, are not read)
        for (accr, row) in acc[..k].iter().zip(pair[i0 * W..(i0 + k) * W].chunks_exact_mut(W)) {
            for l in 0..W {
                row[l] += accr[l];
            }
        }
        i0 += k;
    }
}

/// `pair[i w + j] += Σ_a u[a, i] t[a, j]` for `i <= j < nq`, `u` and `t` row-major with rows of
/// `w >= nq` values.
fn add_pairs(u: &[f64], t: &[f64], nq: usize, w: usize, pair: &mut [f64]) {
    for (ua, ta) in u.chunks_exact(w).zip(t.chunks_exact(w)) {
        for (i, &ui) in ua[..nq].iter().enumerate() {
            if ui != 0.0 {
                for (p, tj) in pair[i * w + i..i * w + nq].iter_mut().zip(&ta[i..nq]) {
                    *p += ui * tj;
                }
            }
        }
    }
}
