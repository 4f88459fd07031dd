//! The tree path of the points' Jacobian: `∂x_p/∂q` of every node from the joints' screws, in
//! one pass outward along the model's placement, as Pinocchio's `computeJointJacobians` goes.
//!
//! A body turned by input `j` at angular rate `ω_j` (global, rad per unit of the input) moves
//! each of its points `p` at `∂p/∂q_j = ∂o/∂q_j + ω_j × (p − o)` about its origin `o`; a slider
//! adds its axis. So a node's Jacobian is kept as three rows of `n_q`: a position node's
//! `∂x/∂q`, an orientation node's `ω` columns, and an attached point's rows are its frame's
//! origin's plus `ω × (p − o)`, all inputs at once. A step that places nodes by an element (a
//! hinge's orientation, a beam's far end, a moving path point) turns each reached column of its
//! known nodes' into its placed nodes' through the element's own
//! [`crate::element::Element::place_jacobian`] (all columns at once, first order only), or
//! where it has none [`crate::element::Element::place_rates`] column by column (no
//! accelerations are read). No factorization of `D_cc` and no solve: the numbers are those of
//! `DF^x` (an orientation's rows of `DF^x` are `½ (0, ω_j) ⊗ λ`), to round-off. Its `first_order`
//! makes `DF` of them for [`crate::transfer::first_order`] on the tree path.

use crate::algorithm::error::KinematicsError;
use crate::algorithm::error::non_finite;
use crate::algorithm::evaluate::{evaluate_constraints, evaluate_elements};
use crate::algorithm::local::{all_finite, check_finite, evaluate_own};
use crate::algorithm::transfer::df_stride;
use crate::data::{Data, shaped};
use crate::element::{NodeKind, Order, Rates};
use crate::geometry::{quat_at, quat_conjugate, quat_mul, vec3_at};
use crate::ids::NodeId;
use crate::model::placement::Reached;
use crate::model::placement::Step;
use crate::model::{ElementEntry, Input, Model, RowTarget};

/// The Jacobians of every node from the joints' screws ([`Screws::compute`]), and the buffers
/// of the pass.
#[derive(Clone, Debug, Default)]
pub struct Screws {
    n_q: usize,
    /// Three rows of `n_q` per node, by columns (`3 x n_q`, column-major: a column's three
    /// values together, read and written together): a position node's `∂x/∂q` (m per unit
    /// input), an orientation node's angular rates `ω` (global, rad per unit input). Only the
    /// columns of the inputs that reach a node ([`crate::model::placement::Reached`]) are
    /// written; the others stay 0 from when the rows were made for `pattern`.
    rows: Vec<f64>,
    /// The sets the rows were zeroed for (the model's [`crate::model::placement::Reached`]).
    pattern: Reached,
    /// Whether the node's rows were written by this pass.
    done: Vec<bool>,
    valid: bool,
    /// [`first_order`]'s outputs (`DF_x`, its rows) hold 0 outside the nodes' sets (written by
    /// its fill alone since they were zeroed).
    clean: bool,
    local: [Vec<f64>; 6],
    ev_columns: Vec<f64>,
    /// An element step's input modes (mode, input).
    inputs: Vec<(usize, usize)>,
}

impl Screws {
    /// An empty workspace; sized by the first [`Screws::compute`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The three rows of `n_q` of `node` by columns (`3 x n_q`, column-major: input `j`'s column
    /// at `3 j..3 j + 3`) from the last [`Screws::compute`] that returned `Ok(true)`: a position
    /// node's `∂x/∂q` (m per unit input), an orientation node's global angular rates (rad per
    /// unit input); `None` before one.
    pub fn rows(&self, node: NodeId) -> Option<&[f64]> {
        let k = 3 * self.n_q;
        self.valid.then(|| &self.rows[node.index() * k..(node.index() + 1) * k])
    }

    /// `node`'s rows of `DF^x` (3 or 4 rows of `n_q`, row-major) into `out`, from its screws'
    /// rows: a position node's as they are, an orientation node's `λ̇ = ½ (0, ω) ⊗ λ` at `data`'s
    /// configuration. `false` before a successful [`Screws::compute`].
    pub fn coordinate_rows(&self, model: &Model, data: &Data, node: NodeId, out: &mut Vec<f64>) -> bool {
        let Some(rows) = self.rows(node) else { return false };
        out.clear();
        let info = &model.nodes[node.index()];
        let nq = self.n_q;
        if info.kind == NodeKind::Position {
            out.resize(3 * nq, 0.0);
            for (j, c) in rows.chunks_exact(3).enumerate() {
                (0..3).for_each(|i| out[i * nq + j] = c[i]);
            }
            return true;
        }
        let l = quat_at(&data.x, info.offset);
        out.resize(4 * nq, 0.0);
        for (j, c) in rows.chunks_exact(3).enumerate() {
            let w = [0.0, 0.5 * c[0], 0.5 * c[1], 0.5 * c[2]];
            let d = quat_mul(&w, &l);
            (0..4).for_each(|i| out[i * nq + j] = d[i]);
        }
        true
    }

    /// `DF` was written by other means than [`first_order`]: its next fill zeroes it first.
    pub(crate) fn outputs_overwritten(&mut self) {
        self.clean = false;
    }

    /// Every node's Jacobian at the solved configuration in `data`, outward along the model's
    /// placement. `Ok(false)` (the rows then unavailable) where the model has no placement, the
    /// data takes the general path (`Data::set_tree_path(false)`), an input is an orientation's
    /// coordinate, or a step has no closed form (an element without `place_rates`, a
    /// conditional path point off the path whose neighbours are placed after it): the caller
    /// then takes `DF` from [`crate::transfer::first_order`].
    pub fn compute(&mut self, model: &Model, data: &Data) -> Result<bool, KinematicsError> {
        self.compute_skipping(model, data, false)
    }

    /// [`Screws::compute`], with `skip` without the rows of the attachments only free elements
    /// read (`Attachments::free_only`; no step or other attachment reads them): those nodes'
    /// rows are left as they were.
    fn compute_skipping(&mut self, model: &Model, data: &Data, skip: bool) -> Result<bool, KinematicsError> {
        self.valid = false;
        if !data.solved {
            return Err(KinematicsError::NotSolved);
        }
        let Some(plan) = model.placement.as_ref().filter(|_| data.tree_path) else { return Ok(false) };
        let (nq, nn) = (model.n_q(), model.nodes.len());
        if self.n_q != nq || self.rows.len() != nn * 3 * nq || self.pattern != plan.reached {
            // made once for the model: what no pass writes stays 0
            self.n_q = nq;
            self.rows.clear();
            self.rows.resize(nn * 3 * nq, 0.0);
            self.pattern.clone_from(&plan.reached);
            self.clean = false;
        }
        self.done.clear();
        self.done.resize(nn, false);
        for (j, inp) in model.inputs.iter().enumerate() {
            if let Input::Coordinate(c) = inp {
                let (node, axis) = model.coord_owner(*c);
                if model.nodes[node.index()].kind != NodeKind::Position {
                    return Ok(false);
                }
                self.rows[(node.index() * nq + j) * 3 + axis] = 1.0;
            }
        }
        for step in &plan.steps {
            let placed = match *step {
                Step::Attach(t) => {
                    self.attach(model, data, t);
                    true
                }
                Step::Element { element, known, placed } => self.element(model, data, element, known, placed)?,
            };
            if !placed {
                return Ok(false);
            }
        }
        // the attached nodes no step reads (a muscle's points), parents first
        for t in 0..model.attachments.list.len() {
            if !(skip && model.attachments.free_only[t]) {
                self.attach(model, data, t);
            }
        }
        self.valid = true;
        Ok(true)
    }

    /// Attachment `t`: its node's rows from its frame's, `∂p/∂q = ∂o/∂q + ω × (p − o)`, over
    /// the inputs that reach it.
    fn attach(&mut self, model: &Model, data: &Data, t: usize) {
        let a = &model.attachments.list[t];
        let reached = &self.pattern;
        let (n, o, l) = (reached.node_of[a.node], reached.node_of[a.origin], reached.node_of[a.orientation]);
        if self.done[n] {
            return;
        }
        let r = [0, 1, 2].map(|i| data.x[a.node + i] - data.x[a.origin + i]);
        let (node, [origin, turn]) = blocks(&mut self.rows, 3 * self.n_q, n, [o, l]);
        for &j in reached.of(n) {
            // a column's three values as one slice (one bounds check, not three)
            let column = |block: &[f64]| -> [f64; 3] { block[3 * j..3 * j + 3].try_into().expect("three values") };
            let (b, w) = (column(origin), column(turn));
            // (ω × r)_i = ω_{i+1} r_{i+2} − ω_{i+2} r_{i+1}
            let v =
                [b[0] + w[1] * r[2] - w[2] * r[1], b[1] + w[2] * r[0] - w[0] * r[2], b[2] + w[0] * r[1] - w[1] * r[0]];
            node[3 * j..3 * j + 3].copy_from_slice(&v);
        }
        self.done[n] = true;
    }

    /// An element's step: each column its known nodes or its input modes reach (the placed
    /// nodes' inputs), through the element's first-order `place_jacobian` or `place_rates`;
    /// `Ok(false)` where it has neither.
    fn element(
        &mut self,
        model: &Model,
        data: &Data,
        element: usize,
        known: u64,
        placed: u64,
    ) -> Result<bool, KinematicsError> {
        let entry = &model.elements[element];
        let layout = entry.element.layout();
        let slots = layout.nodes();
        let nq = self.n_q;
        let [x, v, a, e, ev, ea] = &mut self.local;
        x.clear();
        x.extend(entry.own.iter().map(|&c| data.x[c]));
        let n_local = x.len();
        a.clear();
        a.resize(n_local, 0.0);
        let modes = entry.mode_offset..entry.mode_offset + layout.n_modes();
        for vec in [&mut *e, &mut *ev, &mut *ea] {
            vec.clear();
            vec.resize(modes.len(), 0.0);
        }
        // the input modes (buffers kept: a warm frame allocates nothing)
        let inputs = &mut self.inputs;
        inputs.clear();
        for (k, m) in modes.enumerate() {
            match model.mode_row[m].map(|r| model.row_target[r]) {
                Some(RowTarget::Fixed(value)) => e[k] = value,
                Some(RowTarget::Input(j)) => {
                    e[k] = data.e[m];
                    inputs.push((k, j));
                }
                None => e[k] = data.e[m],
            }
        }
        // the columns: every placed node's set, its known nodes' and its input modes' together
        let is_placed = |s: usize| s < 64 && placed >> s & 1 == 1;
        let Some(first) = (0..slots.len()).find(|&s| is_placed(s)) else { return Ok(true) };
        let cols = self.pattern.of(slots[first].0.index());
        // every reached column's known rates, then the placed slots' for all at once
        let n_modes = ev.len();
        // not zeroed: below, each column's known slots (every slot not placed) are written
        // and the element writes the placed ones before anything reads them
        let len = cols.len() * n_local;
        if v.len() < len {
            v.resize(len, 0.0);
        }
        let v = &mut v[..len];
        let evs = &mut self.ev_columns;
        evs.clear();
        evs.resize(cols.len() * n_modes, 0.0);
        // slot by slot (its node's block and orientation taken once), each reached column
        for (s, &(node, kind)) in slots.iter().enumerate() {
            if is_placed(s) {
                continue;
            }
            let (o, n) = (layout.offset(s), node.index());
            let block = &self.rows[n * 3 * nq..(n + 1) * 3 * nq];
            match kind {
                NodeKind::Position => {
                    for (vc, &j) in v.chunks_exact_mut(n_local).zip(cols) {
                        vc[o..o + 3].copy_from_slice(&block[3 * j..3 * j + 3]);
                    }
                }
                NodeKind::Orientation => {
                    let l = quat_at(x, o);
                    for (vc, &j) in v.chunks_exact_mut(n_local).zip(cols) {
                        let w = &block[3 * j..3 * j + 3];
                        let d = quat_mul(&[0.0, 0.5 * w[0], 0.5 * w[1], 0.5 * w[2]], &l);
                        vc[o..o + 4].copy_from_slice(&d);
                    }
                }
            }
        }
        for (c, &j) in cols.iter().enumerate() {
            for &(k, input) in inputs.iter() {
                evs[c * n_modes + k] = f64::from(u8::from(input == j));
            }
        }
        let error = |error| KinematicsError::Element { element: entry.name.clone(), error };
        match entry.element.place_jacobian(x, known, e, v, evs).map_err(error)? {
            Some(true) => {}
            Some(false) => return Ok(false),
            // column by column through the element's rates, accelerations 0 and not read
            None => {
                for (c, vc) in v.chunks_exact_mut(n_local).enumerate() {
                    ev.copy_from_slice(&evs[c * n_modes..(c + 1) * n_modes]);
                    let rates = Rates { v: vc, a, ev, ea };
                    if !entry.element.place_rates(x, known, e, rates).map_err(error)? {
                        return Ok(false);
                    }
                }
            }
        }
        // the placed slots' columns, slot by slot (its node's block taken once)
        for (s, &(node, kind)) in slots.iter().enumerate() {
            if !is_placed(s) {
                continue;
            }
            let (o, n) = (layout.offset(s), node.index());
            let block = &mut self.rows[n * 3 * nq..(n + 1) * 3 * nq];
            let conj = match kind {
                NodeKind::Orientation => quat_conjugate(&quat_at(x, o)),
                NodeKind::Position => [0.0; 4],
            };
            for (vc, &j) in v.chunks_exact(n_local).zip(cols) {
                let value = match kind {
                    NodeKind::Position => vec3_at(vc, o),
                    NodeKind::Orientation => {
                        // ω = 2 vec(λ̇ ⊗ λ*)
                        let d = quat_mul(&quat_at(vc, o), &conj);
                        [2.0 * d[1], 2.0 * d[2], 2.0 * d[3]]
                    }
                };
                block[3 * j..3 * j + 3].copy_from_slice(&value);
            }
        }
        for (s, (node, _)) in slots.iter().enumerate() {
            if is_placed(s) {
                self.done[node.index()] = true;
            }
        }
        Ok(true)
    }
}

/// The columns of `DF^x` [`fill`] writes at a time (arrays of slices have `Default` up to 32).
const COLUMNS: usize = 32;

/// Node `n`'s block of `width` values in `rows`, to write, and the blocks of the nodes `read`
/// (none of them `n`), to read.
fn blocks<const K: usize>(rows: &mut [f64], width: usize, n: usize, read: [usize; K]) -> (&mut [f64], [&[f64]; K]) {
    let (head, tail) = rows.split_at_mut(n * width);
    let (node, tail) = tail.split_at_mut(width);
    let (head, tail) = (&*head, &*tail);
    let others = read
        .map(|m| if m < n { &head[m * width..(m + 1) * width] } else { &tail[(m - n - 1) * width..(m - n) * width] });
    (node, others)
}

/// `DF` from the joints' screws, for [`crate::transfer::first_order`] on the tree path: `DF^x`
/// (n_x x n_q) and its rows from [`Screws::compute`] (no factorization of `D_cc`, no solve),
/// `DF^e`'s dependent rows `∇e_m · DF_x` from each element's gradient on its own coordinates
/// and their rows (a muscle's `−dL/dq_j`: over its straight segments the unit direction dotted
/// with the difference of its ends' columns, over a wrap its own gradient through its points;
/// no chain rule through the attachments). `Ok(false)`, nothing written, where the pass has no
/// closed form or there is no input.
pub(crate) fn first_order(model: &Model, data: &mut Data) -> Result<bool, KinematicsError> {
    first_order_with(model, data, false)
}

/// [`first_order`], with `skip` without `DF_x`'s rows of the attachments only free elements read
/// (`Attachments::free_only`), left as they were: the free elements'
/// gradient entries on those points go to their frames' rows of `DF_x` instead.
pub(crate) fn first_order_with(model: &Model, data: &mut Data, skip: bool) -> Result<bool, KinematicsError> {
    if model.n_q() == 0 || model.placement.is_none() || !data.tree_path {
        return Ok(false);
    }
    if !data.solved {
        return Err(KinematicsError::NotSolved);
    }
    // the free elements' own gradients, and the attached points only they read placed (by the
    // position solve's acceptance on the tree path)
    if !(data.order_free == Some(Order::Value) && data.free_own) {
        evaluate_free_own(model, data)?;
    }
    // a dependent mode of a constraint element (a joint's free mode) by its expanded gradient:
    // those elements alone where the tree path's acceptance left the joints' gradients due
    if model.dependent_modes.iter().any(|&m| !free(model, &model.elements[model.mode_element[m].0.index()])) {
        match &model.placement {
            Some(plan) if data.order.is_none_or(|o| o < Order::Gradient) => {
                evaluate_elements(model, data, &plan.valued, Order::Gradient)?;
            }
            _ => evaluate_constraints(model, data, Order::Gradient)?,
        }
    }
    let mut screws = std::mem::take(&mut data.work.screws);
    let placed = screws.compute_skipping(model, data, skip);
    let result = match placed {
        Ok(true) => {
            fill(model, data, &mut screws, skip);
            Ok(true)
        }
        other => other,
    };
    data.work.screws = screws;
    result
}

/// The free elements at `data.x` to first order on their own coordinates (`Data::de_own` for an
/// element on attached nodes, `Data::de` otherwise; not carried to the expanded coordinates),
/// values and those gradients checked finite, the attached nodes only free elements read placed
/// first. The free elements then count as evaluated to their values, with their own gradients
/// (`Data::free_own`).
pub(crate) fn evaluate_free_own(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, Order::Value)?;
    model.attachments.place_some(&model.attachments.rest, &mut data.x, &mut data.att_jac);
    data.e_prev.copy_from_slice(&data.e);
    for &i in &model.free_elements {
        evaluate_own(model, data, i, Order::Gradient)?;
        check_finite(model, data, i, Order::Value)?;
        let entry = &model.elements[i];
        if !all_finite(own_gradient(model, data, entry, 0, entry.element.layout().n_modes()).0) {
            return Err(non_finite(model, entry.mode_offset, "gradient"));
        }
    }
    (data.order_free, data.free_own) = (Some(Order::Value), true);
    Ok(())
}

/// Modes `k0..k1` of `entry`'s gradient on the coordinates [`first_order`] contracts it with:
/// its own for a free element (`m x n_own`, row-major), else the expanded one.
pub(crate) fn own_gradient<'a>(
    model: &Model,
    data: &'a Data,
    entry: &'a ElementEntry,
    k0: usize,
    k1: usize,
) -> (&'a [f64], &'a [usize]) {
    match (&entry.chain, free(model, entry)) {
        (Some(c), true) => {
            let n = entry.own.len();
            (&data.de_own[c.de_own_offset + k0 * n..c.de_own_offset + k1 * n], &entry.own)
        }
        _ => {
            let n = entry.coords.len();
            (&data.de[entry.de_offset + k0 * n..entry.de_offset + k1 * n], &entry.coords)
        }
    }
}

/// Whether `entry` is a free element (no mode held or an input: a muscle, a ligament).
fn free(model: &Model, entry: &ElementEntry) -> bool {
    let m = entry.element.layout().n_modes();
    model.mode_row[entry.mode_offset..entry.mode_offset + m].iter().all(Option::is_none)
}

/// [`first_order`]'s `DF^x`, `DF^e`, `DF^x` by rows and its moving rows into `data`, from the
/// screws' rows and the gradients [`first_order`] evaluated: only the columns of the inputs that
/// reach each node are written (the rest stays 0 from when the outputs were zeroed, once while
/// only this fill writes them).
fn fill(model: &Model, data: &mut Data, screws: &mut Screws, skip: bool) {
    let (nx, ne, nq) = (model.n_x(), model.n_e(), model.n_q());
    let stride = df_stride(nq);
    let (mut rows, mut moves) = (std::mem::take(&mut data.work.df_rows), std::mem::take(&mut data.work.df_moves));
    let take = |m: &mut faer::Mat<f64>| std::mem::replace(m, faer::Mat::new());
    let (mut dfx, mut dfe) = (take(&mut data.df_x), take(&mut data.df_e));
    let zeroed = screws.clean && rows.len() == nx * stride && (dfx.nrows(), dfx.ncols()) == (nx, nq);
    if !zeroed {
        rows.clear();
        rows.resize(nx * stride, 0.0);
        dfx = faer::Mat::zeros(nx, nq);
    }
    shaped(&mut dfe, ne, nq);
    moves.clear();
    moves.resize(nx, false);
    let reached = &screws.pattern;
    // DF^x's columns (each contiguous, as a faer matrix's column always is), COLUMNS at a time
    // so that a warm fill allocates nothing
    for j0 in (0..nq).step_by(COLUMNS) {
        let j1 = (j0 + COLUMNS).min(nq);
        let mut columns: [&mut [f64]; COLUMNS] = Default::default();
        for (dst, col) in columns.iter_mut().zip(dfx.col_iter_mut().skip(j0).take(j1 - j0)) {
            *dst = col.try_as_col_major_mut().expect("a contiguous column").as_slice_mut();
        }
        for (n, info) in model.nodes.iter().enumerate() {
            if skipped(model, skip, n) {
                continue;
            }
            let all = reached.of(n);
            let cols = if j1 - j0 == nq {
                all
            } else {
                &all[all.partition_point(|&j| j < j0)..all.partition_point(|&j| j < j1)]
            };
            let node = &screws.rows[n * 3 * nq..(n + 1) * 3 * nq];
            let o = info.offset;
            // each reached column once: into the rows, DF^x's column and the moving flags
            let mut put = |j: usize, values: &[f64]| {
                for (k, (&v, x)) in values.iter().zip(&mut columns[j - j0][o..o + values.len()]).enumerate() {
                    rows[(o + k) * stride + j] = v;
                    *x = v;
                    moves[o + k] |= v != 0.0;
                }
            };
            if info.kind == NodeKind::Position {
                // the node's three rows of DF^x by rows, taken once
                let (r0, rest) = rows[o * stride..(o + 3) * stride].split_at_mut(stride);
                let (r1, r2) = rest.split_at_mut(stride);
                // a row moves where one of its values is not 0: where the sum of their
                // magnitudes is not 0 (a NaN's too), without a branch a value
                let mut size = [0.0f64; 3];
                for &j in cols {
                    let t: &[f64; 3] = node[3 * j..3 * j + 3].try_into().expect("three values a column");
                    (r0[j], r1[j], r2[j]) = (t[0], t[1], t[2]);
                    columns[j - j0][o..o + 3].copy_from_slice(t);
                    (0..3).for_each(|k| size[k] += t[k].abs());
                }
                (0..3).for_each(|k| moves[o + k] |= size[k] != 0.0);
                continue;
            }
            // λ̇ = ½ (0, ω) ⊗ λ
            let l = quat_at(&data.x, o);
            for &j in cols {
                let w = [0.0, 0.5 * node[3 * j], 0.5 * node[3 * j + 1], 0.5 * node[3 * j + 2]];
                put(j, &quat_mul(&w, &l));
            }
        }
    }
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Mode(m) = inp {
            dfe[(m.index(), j)] = 1.0;
        }
    }
    // the dependent modes' rows, 32 columns at a time (the sums in registers)
    let source = Rows { rows: &rows, stride, node_of: &screws.pattern.node_of, skip };
    for j0 in (0..stride).step_by(32) {
        let dfe = &mut dfe;
        match stride - j0 {
            4 => mode_rows::<4>(model, data, &source, j0, dfe),
            8 => mode_rows::<8>(model, data, &source, j0, dfe),
            12 => mode_rows::<12>(model, data, &source, j0, dfe),
            16 => mode_rows::<16>(model, data, &source, j0, dfe),
            20 => mode_rows::<20>(model, data, &source, j0, dfe),
            24 => mode_rows::<24>(model, data, &source, j0, dfe),
            28 => mode_rows::<28>(model, data, &source, j0, dfe),
            _ => mode_rows::<32>(model, data, &source, j0, dfe),
        }
    }
    screws.clean = true;
    (data.work.df_rows, data.work.df_moves) = (rows, moves);
    (data.df_x, data.df_e) = (dfx, dfe);
}

/// Where [`mode_rows`] reads a coordinate's row: `DF^x` by rows (`rows`, `stride` values a row;
/// `node_of`: the node of each coordinate), with `skip` not formed on the nodes only free
/// elements read.
struct Rows<'a> {
    rows: &'a [f64],
    stride: usize,
    node_of: &'a [usize],
    skip: bool,
}

/// Whether node `n`'s rows are left out (`skip`, and only free elements read it).
fn skipped(model: &Model, skip: bool, n: usize) -> bool {
    skipped_attachment(model, skip, n).is_some()
}

/// The attachment of node `n` where its rows are left out.
#[inline(always)]
fn skipped_attachment(model: &Model, skip: bool, n: usize) -> Option<usize> {
    if skip { model.attachments.free_only_of(n) } else { None }
}

/// A mode's gradient entries on points a frame carries, carried to the frame's rows of `DF^x`:
/// `∂p/∂q = ∂o/∂q + J(λ) ∂λ/∂q` with `J = ∂p/∂λ` (3 x 4), so the entries `g` weigh its origin's
/// three rows by `g` and its orientation's four by `Jᵀ g`.
struct FrameWeights {
    /// The first coordinates of the frame's origin and orientation.
    origin: usize,
    orientation: usize,
    on_origin: [f64; 3],
    on_orientation: [f64; 4],
}

/// `acc += Σ_r weight_r · row_r` over the rows of `DF^x` starting at coordinate `first`, columns
/// `j0..j0 + W` (zero weights left out).
#[inline(always)]
fn add_rows<const W: usize>(source: &Rows<'_>, j0: usize, first: usize, weights: &[f64], acc: &mut [f64; W]) {
    for (r, &wv) in weights.iter().enumerate() {
        if wv != 0.0 {
            let at = (first + r) * source.stride + j0;
            let row: &[f64; W] = source.rows[at..at + W].try_into().expect("W values of a row");
            for l in 0..W {
                acc[l] += wv * row[l];
            }
        }
    }
}

/// [`fill`]'s dependent modes' entries of `DF^e` in columns `j0..j0 + W` (those below `n_q`)
/// from `DF^x` by rows (`j0 + W` at most the stride), in `pulp`'s dispatch (a mode's `W` sums
/// stay in vector registers where the machine has them): each gradient entry on the element's
/// own coordinates times its coordinate's row. A column that does not reach the coordinate's
/// node adds ±0 to a sum that started at +0 and so is never −0: the reached columns' sums
/// alone, the same bits whatever `W`. The entries on points whose rows were not formed go to
/// their frame's rows ([`FrameWeights`]; consecutive points on one frame together).
fn mode_rows<const W: usize>(model: &Model, data: &Data, source: &Rows<'_>, j0: usize, dfe: &mut faer::Mat<f64>) {
    pulp::Arch::new().dispatch(ModeRows::<W> { model, data, source, j0, dfe });
}

/// [`mode_rows`]'s loop, inlined into `pulp`'s dispatch.
struct ModeRows<'a, const W: usize> {
    model: &'a Model,
    data: &'a Data,
    source: &'a Rows<'a>,
    j0: usize,
    dfe: &'a mut faer::Mat<f64>,
}

impl<const W: usize> pulp::WithSimd for ModeRows<'_, W> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Self { model, data, source, j0, dfe } = self;
        let width = model.n_q().saturating_sub(j0).min(W);
        let flush = |f: FrameWeights, acc: &mut [f64; W]| {
            add_rows(source, j0, f.origin, &f.on_origin, acc);
            add_rows(source, j0, f.orientation, &f.on_orientation, acc);
        };
        for &m in &model.dependent_modes {
            let (el, k) = model.mode_element[m];
            let entry = &model.elements[el.index()];
            let (g, coords) = own_gradient(model, data, entry, k, k + 1);
            let mut acc = [0.0; W];
            let mut held: Option<FrameWeights> = None;
            let mut at = 0;
            while at < coords.len() {
                let c = coords[at];
                let Some(t) = skipped_attachment(model, source.skip, source.node_of[c]) else {
                    if g[at] != 0.0 {
                        add_rows(source, j0, c, &[g[at]], &mut acc);
                    }
                    at += 1;
                    continue;
                };
                // the point's entries (its three coordinates, or those of them the element has)
                let a = &model.attachments.list[t];
                let mut end = at + 1;
                while end < coords.len() && coords[end] > c && coords[end] < a.node + 3 {
                    end += 1;
                }
                let mut f = match held.take() {
                    Some(f) if (f.origin, f.orientation) == (a.origin, a.orientation) => f,
                    other => {
                        if let Some(f) = other {
                            flush(f, &mut acc);
                        }
                        FrameWeights {
                            origin: a.origin,
                            orientation: a.orientation,
                            on_origin: [0.0; 3],
                            on_orientation: [0.0; 4],
                        }
                    }
                };
                let jac = &data.att_jac[t];
                for (gv, &ci) in g[at..end].iter().zip(&coords[at..end]) {
                    let i = ci - a.node;
                    f.on_origin[i] += gv;
                    (0..4).for_each(|q| f.on_orientation[q] += gv * jac[i][q]);
                }
                held = Some(f);
                at = end;
            }
            if let Some(f) = held {
                flush(f, &mut acc);
            }
            acc[..width].iter().enumerate().for_each(|(j, v)| dfe[(m, j0 + j)] = *v);
        }
    }
}
