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
//! [`crate::element::Element::place_rates`] (first order: no accelerations are read).
//! No factorization of `D_cc` and no solve: the numbers are those of `DF^x` (an orientation's
//! rows of `DF^x` are `½ (0, ω_j) ⊗ λ`), to round-off.

use crate::algorithm::error::KinematicsError;
use crate::data::Data;
use crate::element::{NodeKind, Rates};
use crate::geometry::{quat_at, quat_mul, vec3_at};
use crate::ids::{CoordId, NodeId};
use crate::model::placement::Step;
use crate::model::{Input, Model, RowTarget};

/// The Jacobians of every node from the joints' screws ([`Screws::compute`]), and the buffers
/// of the pass.
#[derive(Clone, Debug, Default)]
pub struct Screws {
    n_q: usize,
    /// Three rows of `n_q` per node, row-major: a position node's `∂x/∂q` (m per unit input),
    /// an orientation node's angular rates `ω` (global, rad per unit input).
    rows: Vec<f64>,
    /// Per node, the inputs whose columns are not all 0 (bit `j % 64` of word `j / 64`).
    reach: Vec<u64>,
    words: usize,
    /// Whether the node's rows were written by this pass.
    done: Vec<bool>,
    valid: bool,
    local: [Vec<f64>; 6],
}

impl Screws {
    /// An empty workspace; sized by the first [`Screws::compute`].
    pub fn new() -> Self {
        Self::default()
    }

    /// The three rows of `n_q` (row-major) of `node` from the last [`Screws::compute`] that
    /// returned `Ok(true)`: a position node's `∂x/∂q` (m per unit input), an orientation
    /// node's global angular rates (rad per unit input); `None` before one.
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
            out.extend_from_slice(rows);
            return true;
        }
        let l = quat_at(&data.x, info.offset);
        out.resize(4 * nq, 0.0);
        for j in 0..nq {
            let w = [0.0, 0.5 * rows[j], 0.5 * rows[nq + j], 0.5 * rows[2 * nq + j]];
            let d = quat_mul(&w, &l);
            (0..4).for_each(|i| out[i * nq + j] = d[i]);
        }
        true
    }

    /// Every node's Jacobian at the solved configuration in `data`, outward along the model's
    /// placement. `Ok(false)` (the rows then unavailable) where the model has no placement, the
    /// data takes the general path (`Data::set_tree_path(false)`), an input is an orientation's
    /// coordinate, or a step has no closed form (an element without `place_rates`, a
    /// conditional path point off the path whose neighbours are placed after it): the caller
    /// then takes `DF` from [`crate::transfer::first_order`].
    pub fn compute(&mut self, model: &Model, data: &Data) -> Result<bool, KinematicsError> {
        self.valid = false;
        if !data.solved {
            return Err(KinematicsError::NotSolved);
        }
        let Some(plan) = model.placement.as_ref().filter(|_| data.tree_path) else { return Ok(false) };
        let (nq, nn) = (model.n_q(), model.nodes.len());
        self.n_q = nq;
        self.words = nq.div_ceil(64).max(1);
        self.rows.clear();
        self.rows.resize(nn * 3 * nq, 0.0);
        self.reach.clear();
        self.reach.resize(nn * self.words, 0);
        self.done.clear();
        self.done.resize(nn, false);
        for (j, inp) in model.inputs.iter().enumerate() {
            if let Input::Coordinate(c) = inp {
                let (node, axis) = model.coord_owner(*c);
                if model.nodes[node.index()].kind != NodeKind::Position {
                    return Ok(false);
                }
                self.rows[(node.index() * 3 + axis) * nq + j] = 1.0;
                self.reach[node.index() * self.words + j / 64] |= 1 << (j % 64);
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
            self.attach(model, data, t);
        }
        self.valid = true;
        Ok(true)
    }

    /// Attachment `t`: its node's rows from its frame's, `∂p/∂q = ∂o/∂q + ω × (p − o)`.
    fn attach(&mut self, model: &Model, data: &Data, t: usize) {
        let a = &model.attachments.list[t];
        let node_of = |c: usize| model.coord_owner(CoordId::new(c)).0.index();
        let (n, o, l) = (node_of(a.node), node_of(a.origin), node_of(a.orientation));
        if self.done[n] {
            return;
        }
        let r = [0, 1, 2].map(|i| data.x[a.node + i] - data.x[a.origin + i]);
        let (nq, w) = (self.n_q, self.words);
        for k in 0..w {
            self.reach[n * w + k] = self.reach[o * w + k] | self.reach[l * w + k];
        }
        for i in 0..3 {
            let (i1, i2) = ((i + 1) % 3, (i + 2) % 3);
            for j in 0..nq {
                let omega = |axis: usize| self.rows[(l * 3 + axis) * nq + j];
                // (ω × r)_i = ω_{i+1} r_{i+2} − ω_{i+2} r_{i+1}
                let v = self.rows[(o * 3 + i) * nq + j] + omega(i1) * r[i2] - omega(i2) * r[i1];
                self.rows[(n * 3 + i) * nq + j] = v;
            }
        }
        self.done[n] = true;
    }

    /// An element's step: each column its known nodes or its input modes reach, through the
    /// element's first-order `place_rates`; `Ok(false)` where it has none.
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
        let (nq, w) = (self.n_q, self.words);
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
        // the columns: the known slots' and the input modes'
        let mut columns = vec![0u64; w];
        let mut inputs = Vec::new();
        for (k, m) in modes.enumerate() {
            match model.mode_row[m].map(|r| model.row_target[r]) {
                Some(RowTarget::Fixed(value)) => e[k] = value,
                Some(RowTarget::Input(j)) => {
                    e[k] = data.e[m];
                    columns[j / 64] |= 1 << (j % 64);
                    inputs.push((k, j));
                }
                None => e[k] = data.e[m],
            }
        }
        for (s, (node, _)) in slots.iter().enumerate().take(64) {
            if known >> s & 1 == 1 {
                let n = node.index();
                columns.iter_mut().zip(&self.reach[n * w..(n + 1) * w]).for_each(|(c, r)| *c |= r);
            }
        }
        for (s, (node, _)) in slots.iter().enumerate().take(64) {
            if placed >> s & 1 == 1 {
                let n = node.index();
                self.rows[n * 3 * nq..(n + 1) * 3 * nq].fill(0.0);
                self.reach[n * w..(n + 1) * w].copy_from_slice(&columns);
            }
        }
        for j in (0..nq).filter(|&j| columns[j / 64] >> (j % 64) & 1 == 1) {
            v.clear();
            v.resize(n_local, 0.0);
            for (s, &(node, kind)) in slots.iter().enumerate() {
                if s < 64 && placed >> s & 1 == 1 {
                    continue;
                }
                let (o, n) = (layout.offset(s), node.index());
                let col = |axis: usize| self.rows[(n * 3 + axis) * nq + j];
                match kind {
                    NodeKind::Position => (0..3).for_each(|i| v[o + i] = col(i)),
                    NodeKind::Orientation => {
                        let d = quat_mul(&[0.0, 0.5 * col(0), 0.5 * col(1), 0.5 * col(2)], &quat_at(x, o));
                        v[o..o + 4].copy_from_slice(&d);
                    }
                }
            }
            for &(k, input) in &inputs {
                ev[k] = f64::from(u8::from(input == j));
            }
            let rates = Rates { v, a, ev, ea };
            match entry.element.place_rates(x, known, e, rates) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(error) => return Err(KinematicsError::Element { element: entry.name.clone(), error }),
            }
            for (s, &(node, kind)) in slots.iter().enumerate().take(64) {
                if placed >> s & 1 == 0 {
                    continue;
                }
                let (o, n) = (layout.offset(s), node.index());
                let value = match kind {
                    NodeKind::Position => vec3_at(v, o),
                    NodeKind::Orientation => {
                        // ω = 2 vec(λ̇ ⊗ λ*)
                        let l = quat_at(x, o);
                        let d = quat_mul(&quat_at(v, o), &[l[0], -l[1], -l[2], -l[3]]);
                        [2.0 * d[1], 2.0 * d[2], 2.0 * d[3]]
                    }
                };
                (0..3).for_each(|i| self.rows[(n * 3 + i) * nq + j] = value[i]);
            }
        }
        for (s, (node, _)) in slots.iter().enumerate().take(64) {
            if placed >> s & 1 == 1 {
                self.done[node.index()] = true;
            }
        }
        Ok(true)
    }
}
