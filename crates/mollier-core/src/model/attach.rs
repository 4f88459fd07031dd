//! Points of rigid bodies as dependent nodes.
//!
//! A position node *attached* to a body frame — a position node `o` and an orientation node `λ` —
//! is no unknown of its own: `x_p = x_o + R(λ) p` with the body vector `p` fixed when the model
//! is built. Its coordinates stay in `x` (outputs and element layouts see an ordinary node), but
//! they are recomputed from the frame and never solved for; elements that touch it are evaluated
//! on their own coordinates and their derivatives carried to the frame's by the chain rule
//! (`docs/theory/kernel.md`, "Attached nodes"). `R(λ) p` is a homogeneous quadratic form in `λ`,
//! `(R(λ) p)_i = λᵀ Q(p, e_i) λ`, so its first derivative is `2 Q λ` and its second the constant
//! `2 Q`: the chain rule is exact at every order the kernel uses.
//!
//! A frame's origin may itself be attached (a body whose origin is another body's point): the
//! attachments form a forest, kept in an order where a parent comes before its children.

use crate::geometry::{cross, dot, q_matrix, rotate, rotate_jacobian};

/// `∂x_p/∂λ` of one attachment (3 x 4).
pub(crate) type Jacobian = [[f64; 4]; 3];

/// One attached node.
#[derive(Clone, Debug)]
pub(crate) struct Attachment {
    /// First coordinate of the attached node in `x`.
    pub node: usize,
    /// First coordinate of the frame's origin (a position node, possibly attached itself).
    pub origin: usize,
    /// First coordinate of the frame's orientation node.
    pub orientation: usize,
    /// The body vector `p` (m, body frame).
    pub p: [f64; 3],
    /// `2 Q(p, e_i)` for the three components (3): the constant Hessian of `(R(λ) p)_i`. On the
    /// heap: only second-order terms read it, and the loops over all attachments (placing them,
    /// their rates for every input) stream the list, 72 bytes an attachment instead of 432.
    pub q2: Vec<[[f64; 4]; 4]>,
}

impl Attachment {
    pub fn new(node: usize, origin: usize, orientation: usize, p: [f64; 3]) -> Self {
        let q2 = [0, 1, 2].map(|i| {
            let mut e = [0.0; 3];
            e[i] = 1.0;
            q_matrix(&p, &e).map(|row| row.map(|v| 2.0 * v))
        });
        Self { node, origin, orientation, p, q2: q2.to_vec() }
    }

    #[cfg(test)]
    fn lambda(&self, x: &[f64]) -> [f64; 4] {
        [x[self.orientation], x[self.orientation + 1], x[self.orientation + 2], x[self.orientation + 3]]
    }

    /// `∂x_p,i/∂λ = 2 Q(p, e_i) λ` (3 x 4), in closed form ([`rotate_jacobian`]).
    #[cfg(test)]
    pub fn jacobian(&self, x: &[f64]) -> Jacobian {
        rotate_jacobian(&self.lambda(x), &self.p)
    }

    /// The second-order transfer function of this attached node for one pair of inputs (see
    /// [`Attachments::second`]); its origin's and orientation's entries of `d` are final.
    /// The attached node's rates from its frame's, with the second-order term for `w = Some(ẋ)`
    /// ([`Attachments::rates`]).
    fn rates(&self, j: &Jacobian, v: &mut [f64], w: Option<&[f64]>) {
        let vl = quat(v, self.orientation);
        let quad = w.map(|w| {
            let wl = quat(w, self.orientation);
            self.bilinear(&wl, &wl)
        });
        let vo = vec3(v, self.origin);
        let dst: &mut [f64; 3] = (&mut v[self.node..self.node + 3]).try_into().expect("three coordinates");
        for i in 0..3 {
            let lin: f64 = (0..4).map(|k| j[i][k] * vl[k]).sum();
            dst[i] = vo[i] + lin + quad.map_or(0.0, |q| q[i]);
        }
    }

    /// [`Self::rates`] for the velocities `v` and then the accelerations `a` (with `w = v`) in
    /// one visit: the frame's Euler-parameter rates read once, the same operations (the same bits).
    fn rates_and_accelerations(&self, j: &Jacobian, v: &mut [f64], a: &mut [f64]) {
        let vl = quat(v, self.orientation);
        let al = quat(a, self.orientation);
        let quad = self.bilinear(&vl, &vl);
        let (vo, ao) = (vec3(v, self.origin), vec3(a, self.origin));
        let (mut vp, mut ap) = ([0.0; 3], [0.0; 3]);
        for i in 0..3 {
            let lin: f64 = (0..4).map(|k| j[i][k] * vl[k]).sum();
            // `+ 0.0` as `rates` adds its absent quadratic term: a −0 becomes +0 alike
            vp[i] = vo[i] + lin + 0.0;
            let lin: f64 = (0..4).map(|k| j[i][k] * al[k]).sum();
            ap[i] = ao[i] + lin + quad[i];
        }
        v[self.node..self.node + 3].copy_from_slice(&vp);
        a[self.node..self.node + 3].copy_from_slice(&ap);
    }

    fn second(&self, j: &Jacobian, d: &mut [f64], u: &[f64], w: &[f64]) {
        let dl = quat(d, self.orientation);
        let b = self.bilinear(&quat(u, self.orientation), &quat(w, self.orientation));
        for i in 0..3 {
            let lin: f64 = (0..4).map(|k| j[i][k] * dl[k]).sum();
            d[self.node + i] = d[self.origin + i] + lin + b[i];
        }
    }

    /// `uᵀ (2 Q(p, e_i)) w` for the three components, `u`, `w` Euler-parameter rates, in closed
    /// form: twice the polarization of `R(λ) p = (λ0² − v·v) p + 2 (v·p) v + 2 λ0 v × p`, that is
    /// `2 [(u0 w0 − U·W) p + (U·p) W + (W·p) U + u0 W × p + w0 U × p]` with `u = (u0, U)`,
    /// `w = (w0, W)`.
    #[inline]
    fn bilinear(&self, u: &[f64; 4], w: &[f64; 4]) -> [f64; 3] {
        let p = &self.p;
        let (uu, ww) = ([u[1], u[2], u[3]], [w[1], w[2], w[3]]);
        let a = 2.0 * (u[0] * w[0] - dot(&uu, &ww));
        let (up, wp) = (2.0 * dot(&uu, p), 2.0 * dot(&ww, p));
        let (wxp, uxp) = (cross(&ww, p), cross(&uu, p));
        let (u0, w0) = (2.0 * u[0], 2.0 * w[0]);
        // written out: the `map` was left an out-of-line call (3 % of a tree's frame by the clock)
        let at = |i: usize| a * p[i] + up * ww[i] + wp * uu[i] + u0 * wxp[i] + w0 * uxp[i];
        [at(0), at(1), at(2)]
    }
}

/// The attachments of a model, parents before children; `constraining` lists (in that order)
/// those the constraint elements need, with their ancestors — placed in every Newton iteration —
/// and `rest` the others (a muscle's attachment points), placed once at the solution.
#[derive(Clone, Debug, Default)]
pub(crate) struct Attachments {
    pub list: Vec<Attachment>,
    /// The attachment of each node (by node index), `None` when it is not attached.
    pub of_node: Vec<Option<usize>>,
    pub constraining: Vec<usize>,
    pub rest: Vec<usize>,
    /// The attachments whose nodes carry a mass or a force load, with their ancestors (in list
    /// order): the rows of `D²F_x` the equations of motion read.
    pub dynamic: Vec<usize>,
    /// By attachment: whether only free elements read its node (a muscle's point: in `rest`, not
    /// in `dynamic`, no attachment's origin). The equations of motion read no row of `DF_x` there,
    /// only the free elements' rows of `DF_e`, which its frame's rows give.
    pub free_only: Vec<bool>,
    /// The coordinates not attached, as runs `start..end` of `x` (in order): the rows of `DF_x`
    /// that are not formed from their frames'.
    pub unattached: Vec<std::ops::Range<usize>>,
    /// The attachments whose frame can move (in list order): its origin's or orientation's
    /// coordinates are not all fixed, or its origin is attached to a frame that moves. The
    /// others' rows of `DF_x` are 0 at every configuration.
    pub moving: Vec<usize>,
}

fn quat(v: &[f64], o: usize) -> [f64; 4] {
    v[o..o + 4].try_into().expect("four Euler parameters")
}

fn vec3(v: &[f64], o: usize) -> [f64; 3] {
    v[o..o + 3].try_into().expect("three coordinates")
}

impl Attachments {
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The attachment of node `n` (by node index) where only free elements read it
    /// ([`Self::free_only`]).
    #[inline]
    pub fn free_only_of(&self, n: usize) -> Option<usize> {
        self.of_node[n].filter(|&t| self.free_only[t])
    }

    /// Whether any attachment is read by free elements only.
    pub fn any_free_only(&self) -> bool {
        self.free_only.contains(&true)
    }

    /// Once the elements are partitioned: `needed` (by attachment) marks those the constraint
    /// elements need (with their ancestors), `dynamic_nodes` the coordinate offsets of the nodes
    /// with a mass or a force load; sets `constraining`, `rest`, `dynamic` and the `unattached`
    /// runs of the `n_x` coordinates; `fixed` (n_x) marks the coordinates held at their initial
    /// values, from which `moving` follows.
    pub fn classify(&mut self, needed: &[bool], dynamic_nodes: &[usize], fixed: &[bool]) {
        let n_x = fixed.len();
        (self.constraining, self.rest) = (0..needed.len()).partition(|&t| needed[t]);
        self.dynamic = self.with_ancestors(dynamic_nodes);
        self.free_only = vec![false; self.list.len()];
        self.rest.iter().for_each(|&t| self.free_only[t] = true);
        self.dynamic.iter().for_each(|&t| self.free_only[t] = false);
        let origins: std::collections::HashSet<usize> = self.list.iter().map(|a| a.origin).collect();
        for (t, a) in self.list.iter().enumerate() {
            if origins.contains(&a.node) {
                self.free_only[t] = false;
            }
        }
        // parents first: an attached origin's motion is known when its children are reached
        let mut still = fixed.to_vec();
        self.moving.clear();
        for (t, a) in self.list.iter().enumerate() {
            let frame_still =
                still[a.origin..a.origin + 3].iter().chain(&still[a.orientation..a.orientation + 4]).all(|&f| f);
            still[a.node..a.node + 3].fill(frame_still);
            if !frame_still {
                self.moving.push(t);
            }
        }
        let mut attached = vec![false; n_x];
        for a in &self.list {
            attached[a.node..a.node + 3].fill(true);
        }
        self.unattached.clear();
        for c in (0..n_x).filter(|&c| !attached[c]) {
            match self.unattached.last_mut() {
                Some(r) if r.end == c => r.end = c + 1,
                _ => self.unattached.push(c..c + 1),
            }
        }
    }

    /// Recompute the attached coordinates of `x` from their frames, and each attachment's
    /// Jacobian `∂x_p/∂λ` (3 x 4) into `jac` (one per attachment).
    #[cfg(test)]
    pub fn place(&self, x: &mut [f64], jac: &mut [Jacobian]) {
        let all: Vec<usize> = (0..self.list.len()).collect();
        self.place_some(&all, x, jac);
    }

    /// Recompute the attached coordinates of `x` of the attachments `set` (in order, their parents
    /// placed) from their frames, and their Jacobians `∂x_p/∂λ` (3 x 4) into `jac` (one per
    /// attachment).
    pub fn place_some(&self, set: &[usize], x: &mut [f64], jac: &mut [Jacobian]) {
        for &t in set {
            let a = &self.list[t];
            let l = quat(x, a.orientation);
            let r = rotate(&l, &a.p);
            let o = vec3(x, a.origin);
            let dst: &mut [f64; 3] = (&mut x[a.node..a.node + 3]).try_into().expect("three coordinates");
            for i in 0..3 {
                dst[i] = o[i] + r[i];
            }
            jac[t] = rotate_jacobian(&l, &a.p);
        }
    }

    /// Rates of the attached coordinates from those of their frames: `v_p = v_o + J(λ) v_λ`,
    /// plus, with `w = Some(ẋ)`, the second-order term `ẋ_λᵀ 2Q ẋ_λ` (the part of an
    /// acceleration that the rates alone give). `jac`: the Jacobians of [`Attachments::place_some`].
    pub fn rates(&self, jac: &[Jacobian], v: &mut [f64], w: Option<&[f64]>) {
        for (a, j) in self.list.iter().zip(jac) {
            a.rates(j, v, w);
        }
    }

    /// [`Self::rates`] of the attachments whose frame moves (`moving`) only, for a `v` whose
    /// still frames' coordinates and points are `+0` already (a vector zeroed but for the
    /// dependent and input coordinates): `rates` would give their points the same `+0`.
    pub fn rates_of_moving(&self, jac: &[Jacobian], v: &mut [f64], w: Option<&[f64]>) {
        for &t in &self.moving {
            self.list[t].rates(&jac[t], v, w);
        }
    }

    /// [`Self::rates`] of attachment `t` alone (its frame's rates known).
    pub fn rates_of(&self, t: usize, jac: &[Jacobian], v: &mut [f64], w: Option<&[f64]>) {
        self.list[t].rates(&jac[t], v, w);
    }

    /// [`Self::rates`] into the velocities `v` and then, with `w = v`, the accelerations `a`
    /// (n_x each), both in one pass over the list: the same numbers as the two passes.
    pub fn rates_and_accelerations(&self, jac: &[Jacobian], v: &mut [f64], a: &mut [f64]) {
        for (t, j) in self.list.iter().zip(jac) {
            t.rates_and_accelerations(j, v, a);
        }
    }

    /// [`Self::rates_and_accelerations`] of attachment `t` alone (its frame's rates known).
    pub fn rates_and_accelerations_of(&self, t: usize, jac: &[Jacobian], v: &mut [f64], a: &mut [f64]) {
        self.list[t].rates_and_accelerations(&jac[t], v, a);
    }

    /// [`Self::rates`] (without the second-order term) for every input at once: on `DF_x` by rows
    /// (`rows`: n_x rows of `W` values, row-major, as `crate::algorithm::transfer::df_rows` lays it out),
    /// a row's `W` lanes together in the widest vectors the processor has (`pulp`'s runtime
    /// dispatch; no FMA), each entry formed as `rates` forms it (the same bits), and copied to
    /// `DF_x` by columns (`cols`: n_q columns of n_x values). A column at a time, as `rates`
    /// goes, is a pass over the list and its Jacobians per input.
    ///
    /// Only the attachments whose frame moves (`moving`) are formed: a still frame's rows are 0
    /// (the `+0` that `rates` forms from its frame's zero rows), which `rows` and `cols` hold
    /// already from when they were made and no other step writes.
    pub fn rates_of_rows<const W: usize>(&self, jac: &[Jacobian], rows: &mut [f64], cols: &mut [&mut [f64]]) {
        pulp::Arch::new().dispatch(RatesOfRows::<W> { list: &self.list, which: &self.moving, jac, rows, cols });
    }

    /// Second-order transfer function of the attached coordinates for one pair of inputs:
    /// `d_p = d_o + J d_λ + u_λᵀ 2Q w_λ` with `u`, `w` the first-order columns of the two inputs.
    pub fn second(&self, jac: &[Jacobian], d: &mut [f64], u: &[f64], w: &[f64]) {
        for (a, j) in self.list.iter().zip(jac) {
            a.second(j, d, u, w);
        }
    }

    /// [`Self::second`] for the attachments `which` only (in list order, ancestors included).
    pub fn second_of(&self, which: &[usize], jac: &[Jacobian], d: &mut [f64], u: &[f64], w: &[f64]) {
        for &t in which {
            self.list[t].second(&jac[t], d, u, w);
        }
    }

    /// The attachments of the nodes at coordinate offsets `nodes` with their ancestors, in list
    /// order.
    pub fn with_ancestors(&self, nodes: &[usize]) -> Vec<usize> {
        let mut needed: Vec<bool> = self.list.iter().map(|a| nodes.contains(&a.node)).collect();
        // parents come first: walking back marks every frame up each chain
        for t in (0..self.list.len()).rev() {
            if needed[t] {
                if let Some(p) = self.list.iter().position(|a| a.node == self.list[t].origin) {
                    needed[p] = true;
                }
            }
        }
        (0..needed.len()).filter(|&t| needed[t]).collect()
    }

    /// Carry generalized forces at attached coordinates to their frames, children first:
    /// `f_o += f_p`, `f_λ += Jᵀ f_p`. The attached entries keep the force that passes through
    /// them (their own plus their children's). A point without force adds nothing (most of a
    /// model's points carry no mass or load).
    pub fn pull_back(&self, jac: &[Jacobian], f: &mut [f64]) {
        for (a, j) in self.list.iter().zip(jac).rev() {
            let fp = vec3(f, a.node);
            if fp == [0.0; 3] {
                continue;
            }
            // each sum in a register, its terms in the order of the components (the same bits
            // as adding into `f` term by term, which the compiler cannot keep out of memory)
            let (mut fo, mut fl) = (vec3(f, a.origin), quat(f, a.orientation));
            for i in 0..3 {
                fo[i] += fp[i];
            }
            for (k, s) in fl.iter_mut().enumerate() {
                for i in 0..3 {
                    *s += j[i][k] * fp[i];
                }
            }
            f[a.origin..a.origin + 3].copy_from_slice(&fo);
            f[a.orientation..a.orientation + 4].copy_from_slice(&fl);
        }
    }
}

/// One frame of an attached coordinate's chain: `(attachment index, component, expanded index
/// of the frame's first Euler parameter)`.
pub(crate) type Term = (usize, usize, usize);

/// How an element's own local coordinates depend on the independent coordinates it is evaluated
/// on (the *expanded* coordinates: its nodes' coordinates with each attached node replaced by
/// the chain of frames it hangs from).
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    /// Per own local coordinate: `(expanded index of the coordinate itself or of its base
    /// origin's, attached terms)`; each term is `(attachment index, component, expanded index of
    /// the frame's first Euler parameter)`, one per frame up the chain.
    pub rows: Vec<(usize, Vec<Term>)>,
    /// Offset of the element's own gradient (m · n_own) in the own-gradient buffer.
    pub de_own_offset: usize,
    /// The rows grouped for [`Chain::gradient`]: runs of rows in order, each a free coordinate or
    /// the three coordinates of one attached node, whose terms differ only in their component.
    groups: Vec<Group>,
    /// The frames of the attached groups, `(attachment index, expanded index of the frame's first
    /// Euler parameter)`, one run per group.
    frames: Vec<(usize, usize)>,
    /// `J`'s nonzero pattern by rows: row `a`'s expanded columns are `columns[starts[a]..starts[a
    /// + 1]]`, its base first, then four Euler parameters per term (n_own + 1 starts).
    starts: Vec<usize>,
    columns: Vec<usize>,
}

/// A run of rows of a [`Chain`].
#[derive(Clone, Copy, Debug)]
enum Group {
    /// Own coordinate `row` with no terms, at expanded index `base`.
    Free { row: usize, base: usize },
    /// Own coordinates `row..row + 3`, components 0, 1, 2 of one attached node: their base
    /// origins' expanded indices and the frames `frames[from..to]` they share.
    Attached { row: usize, bases: [usize; 3], from: usize, to: usize },
    /// Own coordinate `row`, component `comp` of an attached node through the frames
    /// `frames[from..to]` (rows not in a triple; the kernel builds none).
    Single { row: usize, comp: usize, base: usize, from: usize, to: usize },
}

impl Chain {
    /// The Jacobian `J = ∂x_own/∂x_expanded` (n_own x n_exp, row-major) into `j`.
    #[cfg(test)]
    pub fn jacobian(&self, jac: &[Jacobian], n_exp: usize, j: &mut [f64]) {
        j.fill(0.0);
        for (a, (base, terms)) in self.rows.iter().enumerate() {
            let row = &mut j[a * n_exp..(a + 1) * n_exp];
            row[*base] = 1.0;
            for &(t, i, l) in terms {
                for k in 0..4 {
                    row[l + k] += jac[t][i][k];
                }
            }
        }
    }

    /// The chain of the rows `rows` (see the field) with the element's own-gradient offset 0.
    pub fn new(rows: Vec<(usize, Vec<Term>)>) -> Self {
        let mut groups = Vec::new();
        let mut frames = Vec::new();
        let mut a = 0;
        while a < rows.len() {
            // an attached node's three rows: components 0, 1, 2 through the same frames
            let node = rows.get(a..a + 3).filter(|r| {
                !r[0].1.is_empty()
                    && (0..3).all(|i| {
                        r[i].1.len() == r[0].1.len()
                            && r[i].1.iter().zip(&r[0].1).all(|(&(t, c, l), &(t0, _, l0))| t == t0 && c == i && l == l0)
                    })
            });
            match node {
                Some(r) => {
                    let from = frames.len();
                    frames.extend(r[0].1.iter().map(|&(t, _, l)| (t, l)));
                    groups.push(Group::Attached { row: a, bases: [r[0].0, r[1].0, r[2].0], from, to: frames.len() });
                    a += 3;
                }
                None => {
                    // a free coordinate (or, never built so, attached rows of another shape:
                    // one term at a time as a generic row)
                    if rows[a].1.is_empty() {
                        groups.push(Group::Free { row: a, base: rows[a].0 });
                    } else {
                        let from = frames.len();
                        frames.extend(rows[a].1.iter().map(|&(t, _, l)| (t, l)));
                        let c = rows[a].1[0].1;
                        assert!(rows[a].1.iter().all(|&(_, ci, _)| ci == c), "a row's terms share one component");
                        groups.push(Group::Single { row: a, comp: c, base: rows[a].0, from, to: frames.len() });
                    }
                    a += 1;
                }
            }
        }
        let mut starts = vec![0];
        let mut columns = Vec::new();
        for (base, terms) in &rows {
            columns.push(*base);
            columns.extend(terms.iter().flat_map(|&(_, _, l)| l..l + 4));
            starts.push(columns.len());
        }
        let distinct = starts.windows(2).all(|w| {
            let row = &columns[w[0]..w[1]];
            row.iter().enumerate().all(|(i, c)| !row[..i].contains(c))
        });
        assert!(distinct, "a row of the chain reaches each expanded coordinate once");
        Self { rows, de_own_offset: 0, groups, frames, starts, columns }
    }

    /// The number of nonzeros of `J` ([`Self::sparse_jacobian`]'s length).
    pub fn jacobian_nonzeros(&self) -> usize {
        self.columns.len()
    }

    /// `J = ∂x_own/∂x_expanded` by rows on its pattern: row `a`'s values into
    /// `values[starts[a]..starts[a + 1]]` (the base's 1, then `∂x_a/∂λ` of each frame up the chain);
    /// returns the row starts (n_own + 1) and the expanded columns of the values.
    pub fn sparse_jacobian(&self, jac: &[Jacobian], values: &mut [f64]) -> (&[usize], &[usize]) {
        let mut e = 0;
        for (_, terms) in &self.rows {
            values[e] = 1.0;
            e += 1;
            for &(t, i, _) in terms {
                values[e..e + 4].copy_from_slice(&jac[t][i]);
                e += 4;
            }
        }
        (&self.starts, &self.columns)
    }

    /// `∇_exp e = Jᵀ ∇e` for every mode: `g_own` the gradients on the own coordinates (m x
    /// n_own, row-major), into `g` (m x n_exp). Walks the chain's terms instead of the dense
    /// `J` ([`Self::jacobian`]): each own coordinate of an attached node adds to its base
    /// origin's coordinate and to four Euler parameters per frame up its chain, nothing else.
    /// The three coordinates of an attached node go through their frames together (each
    /// entry still receives its terms in row order, so the sums are those of one row at a time).
    pub fn gradient(&self, jac: &[Jacobian], g_own: &[f64], g: &mut [f64]) {
        let no = self.rows.len();
        g.fill(0.0);
        if no == 0 {
            return;
        }
        let n = g.len() * no / g_own.len();
        for (gk, ok) in g.chunks_exact_mut(n).zip(g_own.chunks_exact(no)) {
            for grp in &self.groups {
                match *grp {
                    Group::Free { row, base } => gk[base] += ok[row],
                    Group::Attached { row, bases, from, to } => {
                        let ga = [ok[row], ok[row + 1], ok[row + 2]];
                        for i in 0..3 {
                            gk[bases[i]] += ga[i];
                        }
                        for &(t, l) in &self.frames[from..to] {
                            let j = &jac[t];
                            let dst: &mut [f64; 4] = (&mut gk[l..l + 4]).try_into().expect("four Euler parameters");
                            for k in 0..4 {
                                dst[k] = dst[k] + ga[0] * j[0][k] + ga[1] * j[1][k] + ga[2] * j[2][k];
                            }
                        }
                    }
                    Group::Single { row, comp, base, from, to } => {
                        let ga = ok[row];
                        gk[base] += ga;
                        for &(t, l) in &self.frames[from..to] {
                            let jr = &jac[t][comp];
                            for k in 0..4 {
                                gk[l + k] += ga * jr[k];
                            }
                        }
                    }
                }
            }
        }
    }

    /// Add `s Σ` of the chain's constant second derivatives of own coordinate `a` to `h`
    /// (n_exp x n_exp): `s · 2Q(p, e_i)` on each frame's Euler-parameter block.
    pub fn add_curvature(&self, att: &Attachments, a: usize, s: f64, n_exp: usize, h: &mut [f64]) {
        for &(t, i, l) in &self.rows[a].1 {
            let q = &att.list[t].q2[i];
            for r in 0..4 {
                for c in 0..4 {
                    h[(l + r) * n_exp + l + c] += s * q[r][c];
                }
            }
        }
    }
}

/// [`Attachments::rates_of_rows`]'s loop, inlined into `pulp`'s dispatch.
struct RatesOfRows<'a, 'b, const W: usize> {
    list: &'a [Attachment],
    which: &'a [usize],
    jac: &'a [Jacobian],
    rows: &'a mut [f64],
    cols: &'a mut [&'b mut [f64]],
}

impl<const W: usize> pulp::WithSimd for RatesOfRows<'_, '_, W> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) {
        let Self { list, which, jac, rows, cols } = self;
        let four = |rows: &[f64], at: usize| -> [f64; 4] { rows[at..at + 4].try_into().expect("four values") };
        for (a, j) in which.iter().map(|&t| (&list[t], &jac[t])) {
            let (lo, oo, no) = (a.orientation * W, a.origin * W, a.node * W);
            for c0 in (0..W).step_by(4) {
                // (plain loops: `array::from_fn`'s closures were not always inlined here)
                let l = [
                    four(rows, lo + c0),
                    four(rows, lo + W + c0),
                    four(rows, lo + 2 * W + c0),
                    four(rows, lo + 3 * W + c0),
                ];
                let mut d = [[0.0; 4]; 3];
                for (i, (di, ji)) in d.iter_mut().zip(j).enumerate() {
                    let o = four(rows, oo + i * W + c0);
                    for c in 0..4 {
                        // (as `rates`: the sum of four from −0, then the origin's, then the absent
                        // second-order term's 0)
                        di[c] = o[c] + (ji[0] * l[0][c] + ji[1] * l[1][c] + ji[2] * l[2][c] + ji[3] * l[3][c]) + 0.0;
                    }
                }
                for (i, di) in d.iter().enumerate() {
                    rows[no + i * W + c0..no + i * W + c0 + 4].copy_from_slice(di);
                }
                for (c, col) in cols.iter_mut().skip(c0).take(4).enumerate() {
                    col[a.node..a.node + 3].copy_from_slice(&[d[0][c], d[1][c], d[2][c]]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::Rng;
    use crate::geometry::q_times;

    fn random_quat(rng: &mut Rng) -> [f64; 4] {
        [rng.symmetric(), rng.symmetric(), rng.symmetric(), rng.symmetric()]
    }

    /// The closed-form bilinear form is `uᵀ 2Q(p, e_i) w` of the stored quadratic forms.
    #[test]
    fn the_closed_form_bilinear_is_the_quadratic_forms() {
        let mut rng = Rng::new(5);
        for _ in 0..20 {
            let a = Attachment::new(7, 0, 3, [rng.symmetric(), rng.symmetric(), rng.symmetric()]);
            let (u, w) = (random_quat(&mut rng), random_quat(&mut rng));
            let b = a.bilinear(&u, &w);
            for i in 0..3 {
                let want: f64 = (0..4).map(|k| u[k] * q_times(&a.q2[i], &w)[k]).sum();
                assert!((b[i] - want).abs() < 1e-14, "{i}: {} vs {want}", b[i]);
            }
        }
    }

    /// A point on a body whose origin is a point of another body, in `x` (n_x ≥ 17 random
    /// coordinates): ground origin 0..3, λ1 3..7, o2 7..10 (on body 1), λ2 10..14, the point
    /// 14..17 (on body 2); both placed, with their Jacobians.
    fn two_bodies(rng: &mut Rng, n_x: usize) -> (Attachments, Vec<f64>, Vec<Jacobian>) {
        let list = vec![
            Attachment::new(7, 0, 3, [rng.symmetric(), rng.symmetric(), rng.symmetric()]),
            Attachment::new(14, 7, 10, [rng.symmetric(), rng.symmetric(), rng.symmetric()]),
        ];
        let mut x: Vec<f64> = (0..n_x).map(|_| rng.symmetric()).collect();
        let att = Attachments {
            list,
            of_node: vec![],
            constraining: vec![0, 1],
            rest: vec![],
            dynamic: vec![],
            free_only: vec![],
            unattached: vec![],
            moving: vec![0, 1],
        };
        let mut jac = vec![[[0.0; 4]; 3]; 2];
        att.place(&mut x, &mut jac);
        (att, x, jac)
    }

    /// A frame moves where one of its origin's or orientation's coordinates is not fixed, or its
    /// origin hangs from a frame that moves; a point on a still frame has rows of 0 in the
    /// rows' pass, bit for bit the `+0` of the column pass (`rates`), though it is not formed.
    #[test]
    fn only_the_frames_that_move_are_formed() {
        let mut rng = Rng::new(11);
        // a still body (0..7), a point on it (7), a point hanging from that point (10) on the
        // still orientation, and a point (13) on a moving body (16..23)
        let p = |rng: &mut Rng| [rng.symmetric(), rng.symmetric(), rng.symmetric()];
        let list = vec![
            Attachment::new(7, 0, 3, p(&mut rng)),
            Attachment::new(10, 7, 3, p(&mut rng)),
            Attachment::new(13, 16, 19, p(&mut rng)),
        ];
        let mut att = Attachments { list, ..Default::default() };
        let mut fixed = vec![false; 23];
        fixed[..7].fill(true);
        att.classify(&[false; 3], &[], &fixed);
        assert_eq!(att.moving, vec![2]);
        // the still body's origin moving makes both points on it move
        fixed[0] = false;
        att.classify(&[false; 3], &[], &fixed);
        assert_eq!(att.moving, vec![0, 1, 2]);
        fixed[0] = true;
        att.classify(&[false; 3], &[], &fixed);
        let mut x: Vec<f64> = (0..23).map(|_| rng.symmetric()).collect();
        let mut jac = vec![[[0.0; 4]; 3]; 3];
        att.place(&mut x, &mut jac);
        const W: usize = 4;
        let moving = |c: usize| (16..23).contains(&c);
        let mut columns: Vec<Vec<f64>> =
            (0..W).map(|_| (0..23).map(|c| if moving(c) { rng.symmetric() } else { 0.0 }).collect()).collect();
        rows_pass_is_column_pass::<W>(&att, &jac, &mut columns);
        for col in &columns {
            assert!(col[13..16].iter().all(|v| *v != 0.0), "the point on the moving body moves");
        }
        // the velocities' and accelerations' pass over the moving frames alone, on vectors 0 but
        // at the moving body's coordinates, with and without the second-order term
        let rates: Vec<f64> = (0..23).map(|c| if moving(c) { rng.symmetric() } else { 0.0 }).collect();
        let mut all = rates.clone();
        att.rates(&jac, &mut all, None);
        for w in [None, Some(&all[..])] {
            let (mut a, mut b) = (rates.clone(), rates.clone());
            att.rates(&jac, &mut a, w);
            att.rates_of_moving(&jac, &mut b, w);
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()), "{a:?} against {b:?}");
        }
    }

    /// Lay `columns` (the frames' rates per input) out as rows of width `W`, run the rows' pass
    /// ([`Attachments::rates_of_rows`]) on them and the column pass ([`Attachments::rates`]) on
    /// each column in place, and assert that the rows and the rows' pass's copies into the columns
    /// are the column pass's values bit for bit. Returns the rows.
    fn rows_pass_is_column_pass<const W: usize>(
        att: &Attachments,
        jac: &[Jacobian],
        columns: &mut [Vec<f64>],
    ) -> Vec<f64> {
        let n = columns[0].len();
        let mut rows = vec![0.0; n * W];
        for (j, col) in columns.iter().enumerate() {
            for (c, v) in col.iter().enumerate() {
                rows[c * W + j] = *v;
            }
        }
        let mut copies = columns.to_vec();
        {
            let mut cols: Vec<&mut [f64]> = copies.iter_mut().map(|c| c.as_mut_slice()).collect();
            att.rates_of_rows::<W>(jac, &mut rows, &mut cols);
        }
        for col in columns.iter_mut() {
            att.rates(jac, col, None);
        }
        for (j, col) in columns.iter().enumerate() {
            for (c, v) in col.iter().enumerate() {
                assert_eq!(rows[c * W + j].to_bits(), v.to_bits(), "W {W}, input {j}, coordinate {c}");
                assert_eq!(copies[j][c].to_bits(), v.to_bits(), "W {W}, input {j}, coordinate {c}");
            }
        }
        rows
    }

    /// The rates of every input at once on the rows are, bit for bit, those of the column-by-column
    /// pass (`rates`, the definition `v_p = v_o + J v_λ`), for a point on a body whose origin
    /// hangs from another body, at every row width, with as many inputs as the width allows and
    /// fewer; the columns get the same values and the padding stays 0; and both are the placed
    /// points' rates by central differences.
    #[test]
    fn the_rates_on_rows_are_the_column_rates() {
        fn check<const W: usize>(rng: &mut Rng, nq: usize) {
            let (att, x, jac) = two_bodies(rng, 17);
            // the frames' rates per input (the attached rows are left at 0 for both)
            let frames = |c: usize| !(7..10).contains(&c) && c < 14;
            let mut columns: Vec<Vec<f64>> =
                (0..nq).map(|_| (0..17).map(|c| if frames(c) { rng.symmetric() } else { 0.0 }).collect()).collect();
            let rows = rows_pass_is_column_pass::<W>(&att, &jac, &mut columns);
            for (j, col) in columns.iter().enumerate() {
                assert!(col[14..17].iter().all(|v| *v != 0.0), "the point moves");
                // against the definition: the placed points moved along the frames' rates, by
                // central differences (exact but for rounding: `x_p` is quadratic in the frames)
                let h = 1e-3;
                let placed = |sign: f64| {
                    let mut y: Vec<f64> = x.iter().zip(col).map(|(xv, v)| xv + sign * h * v).collect();
                    let mut jy = vec![[[0.0; 4]; 3]; 2];
                    att.place(&mut y, &mut jy);
                    y
                };
                let (plus, minus) = (placed(1.0), placed(-1.0));
                for c in (7..10).chain(14..17) {
                    let fd = (plus[c] - minus[c]) / (2.0 * h);
                    assert!((rows[c * W + j] - fd).abs() < 1e-11, "W {W}, input {j}, coordinate {c}: {fd}");
                }
            }
            assert!((0..17).all(|c| rows[c * W + nq..(c + 1) * W].iter().all(|v| v.to_bits() == 0)));
        }
        let mut rng = Rng::new(13);
        for (w, nq) in [(4, 4), (4, 1), (8, 6), (12, 9), (12, 12), (16, 13), (16, 16)] {
            match w {
                4 => check::<4>(&mut rng, nq),
                8 => check::<8>(&mut rng, nq),
                12 => check::<12>(&mut rng, nq),
                _ => check::<16>(&mut rng, nq),
            }
        }
    }

    /// The chain's gradient walked term by term is `Jᵀ g` with the dense Jacobian, for a point on
    /// a body whose origin hangs from another body (two frames up the chain), next to a free node.
    #[test]
    fn the_chains_gradient_is_the_dense_jacobians_transpose_product() {
        let mut rng = Rng::new(9);
        // a free node 17..20 besides
        let (_, _, jac) = two_bodies(&mut rng, 20);
        // own coordinates: the point (3), the free node (3); expanded: ground origin (0..3),
        // λ2 (3..7), λ1 (7..11), the free node (11..14)
        let rows =
            (0..3).map(|i| (i, vec![(1, i, 3), (0, i, 7)])).chain((0..3).map(|i| (11 + i, Vec::new()))).collect();
        let chain = Chain::new(rows);
        let (m, no, n) = (2, 6, 14);
        let g_own: Vec<f64> = (0..m * no).map(|_| rng.symmetric()).collect();
        let mut j = vec![0.0; no * n];
        chain.jacobian(&jac, n, &mut j);
        let mut g = vec![1.0; m * n];
        chain.gradient(&jac, &g_own, &mut g);
        for k in 0..m {
            for c in 0..n {
                let want: f64 = (0..no).map(|a| g_own[k * no + a] * j[a * n + c]).sum();
                assert!((g[k * n + c] - want).abs() < 1e-15, "{k} {c}: {} vs {want}", g[k * n + c]);
            }
        }
        // the rows on their pattern are the dense J's, every other entry of which is 0
        let mut values = vec![f64::NAN; chain.jacobian_nonzeros()];
        let (starts, cols) = chain.sparse_jacobian(&jac, &mut values);
        let mut dense = vec![0.0; no * n];
        for a in 0..no {
            for e in starts[a]..starts[a + 1] {
                dense[a * n + cols[e]] = values[e];
            }
        }
        assert_eq!(dense, j);
        assert_eq!(chain.jacobian_nonzeros(), 3 * 9 + 3);
    }

    #[test]
    fn the_closed_form_jacobian_is_the_quadratic_forms_gradient() {
        let mut rng = Rng::new(3);
        for _ in 0..20 {
            let p = [rng.symmetric(), rng.symmetric(), rng.symmetric()];
            let l = [rng.symmetric(), rng.symmetric(), rng.symmetric(), rng.symmetric()];
            let mut x = vec![0.0; 10];
            x[3..7].copy_from_slice(&l);
            let a = Attachment::new(7, 0, 3, p);
            let j = a.jacobian(&x);
            for i in 0..3 {
                let g = q_times(&a.q2[i], &l);
                for k in 0..4 {
                    assert!((j[i][k] - g[k]).abs() < 1e-14, "{i} {k}: {} vs {}", j[i][k], g[k]);
                }
            }
            // and the place it gives is x_o + R(λ) p
            let list = Attachments {
                list: vec![a],
                of_node: vec![],
                constraining: vec![0],
                rest: vec![],
                dynamic: vec![],
                free_only: vec![],
                unattached: vec![],
                moving: vec![0],
            };
            let mut jac = vec![[[0.0; 4]; 3]];
            list.place(&mut x, &mut jac);
            let r = rotate(&l, &p);
            assert!((0..3).all(|i| (x[7 + i] - r[i]).abs() < 1e-15));
        }
    }
}
