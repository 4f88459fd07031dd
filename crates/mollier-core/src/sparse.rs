//! Sparse structure of `D_cc = ∂(e^o, e^m)/∂x^c` and its LU factorization.
//!
//! The pattern and the symbolic factorization (fill-reducing ordering, elimination structure)
//! are computed once per model; each Newton step only refills the values and refactors
//! numerically (faer, sequential: these systems are small and many). Systems of at most
//! [`DENSE_MAX`] unknowns are factored dense instead (LU with partial pivoting in storage
//! allocated once): below that size the sparse factorization's bookkeeping costs more than the
//! arithmetic it saves (docs/performance.md, "Dense or sparse LU").

use dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::LuError;
use faer::sparse::linalg::lu::{LuRef, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use crate::model::{CoordRole, Input, Model};

/// Largest square `D_cc` factored dense (the shoulder's 50 unknowns, a 10-body chain's 40); a
/// 30-body chain's 120 solved 1.7 times slower dense than sparse for its full `D²F`.
pub(crate) const DENSE_MAX: usize = 64;

/// The CSC pattern of `D_cc` with scatter maps from element gradients.
#[derive(Default)]
pub(crate) struct Pattern {
    pub n_rows: usize,
    pub n_cols: usize,
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
    /// `(gradient-buffer index, value slot)`: `D_cc` entries.
    pub scatter: Vec<(usize, usize)>,
    /// `(gradient-buffer index, row, input j)`: entries of `D_cm` (input-coordinate columns).
    pub scatter_input: Vec<(usize, usize, usize)>,
    /// `(gradient-buffer index, row, col)` in the same order as `scatter`, for dense copies.
    pub entries: Vec<(usize, usize, usize)>,
    pub symbolic: Option<SymbolicLu<usize>>,
    pub symbolic_error: Option<String>,
    /// Square and at most [`DENSE_MAX`]: factored dense, without a symbolic factorization.
    pub dense: bool,
}

impl Pattern {
    pub fn build(model: &Model) -> Self {
        let n_rows = model.rows.len();
        let n_cols = model.dependent_coords.len();
        let mut input_of_coord = vec![None; model.n_x()];
        for (j, inp) in model.inputs.iter().enumerate() {
            if let Input::Coordinate(c) = inp {
                input_of_coord[c.index()] = Some(j);
            }
        }
        let mut entries = Vec::new();
        let mut scatter_input = Vec::new();
        for e in &model.elements {
            let n = e.coords.len();
            for k in 0..e.element.layout().n_modes() {
                let Some(r) = model.mode_row[e.mode_offset + k] else { continue };
                for (a, &c) in e.coords.iter().enumerate() {
                    let src = e.de_offset + k * n + a;
                    match model.coord_role[c] {
                        CoordRole::Dependent => {
                            entries.push((src, r, model.coord_col[c].expect("dependent has a column")))
                        }
                        CoordRole::Input => {
                            scatter_input.push((src, r, input_of_coord[c].expect("input coordinate listed")))
                        }
                        // expanded coordinates are never attached ones
                        CoordRole::Fixed | CoordRole::Attached => {}
                    }
                }
            }
        }
        let mut keys: Vec<(usize, usize)> = entries.iter().map(|&(_, r, c)| (c, r)).collect();
        keys.sort_unstable();
        keys.dedup();
        let mut col_ptr = vec![0; n_cols + 1];
        for &(c, _) in &keys {
            col_ptr[c + 1] += 1;
        }
        for c in 0..n_cols {
            col_ptr[c + 1] += col_ptr[c];
        }
        let row_idx: Vec<usize> = keys.iter().map(|&(_, r)| r).collect();
        let scatter = entries
            .iter()
            .map(|&(src, r, c)| {
                let slot = keys.binary_search(&(c, r)).expect("key present");
                (src, slot)
            })
            .collect();
        let mut p = Pattern {
            n_rows,
            n_cols,
            col_ptr,
            row_idx,
            scatter,
            scatter_input,
            entries,
            symbolic: None,
            symbolic_error: None,
            dense: n_rows == n_cols && n_rows > 0 && n_rows <= DENSE_MAX,
        };
        if n_rows == n_cols && n_rows > 0 && !p.dense {
            match factorize_symbolic_lu(p.symbolic_ref(), Default::default()) {
                Ok(s) => p.symbolic = Some(s),
                Err(e) => p.symbolic_error = Some(format!("{e:?}")),
            }
        }
        p
    }

    pub fn symbolic_ref(&self) -> SymbolicSparseColMatRef<'_, usize> {
        SymbolicSparseColMatRef::new_checked(self.n_rows, self.n_cols, &self.col_ptr, None, &self.row_idx)
    }

    pub fn nnz(&self) -> usize {
        self.row_idx.len()
    }

    /// `y = D_cc v` (values in CSC order).
    pub fn mul(&self, values: &[f64], v: &[f64], y: &mut [f64]) {
        y.fill(0.0);
        for c in 0..self.n_cols {
            for i in self.col_ptr[c]..self.col_ptr[c + 1] {
                y[self.row_idx[i]] += values[i] * v[c];
            }
        }
    }

    /// `y = D_ccᵀ v`.
    pub fn mul_t(&self, values: &[f64], v: &[f64], y: &mut [f64]) {
        for c in 0..self.n_cols {
            y[c] = (self.col_ptr[c]..self.col_ptr[c + 1]).map(|i| values[i] * v[self.row_idx[i]]).sum();
        }
    }
}

/// The numeric LU factors of `D_cc` and their workspace.
#[derive(Default)]
pub(crate) struct Lu {
    numeric: NumericLu<usize, f64>,
    mem: Option<MemBuffer>,
    mem_bytes: usize,
    /// Dense factors `P A = L U` (n x n, column-major; `L` unit lower, below the diagonal).
    dense: Vec<f64>,
    /// Row `k` of `P A` is row `perm[k]` of `A`.
    perm: Vec<usize>,
    /// Rows of the nonzero entries of `L` (below the diagonal) and of `U` (above it), column by
    /// column (`*_ptr`: n + 1 offsets): the solves and updates touch only those.
    l_rows: Vec<usize>,
    l_ptr: Vec<usize>,
    u_rows: Vec<usize>,
    u_ptr: Vec<usize>,
    /// One right-hand side, permuted (n).
    work: Vec<f64>,
    pub valid: bool,
}

impl Lu {
    /// Factors for `pattern`, with the dense storage allocated.
    pub fn new(pattern: &Pattern) -> Self {
        let mut lu = Self::default();
        if pattern.dense {
            let n = pattern.n_rows;
            lu.dense = vec![0.0; n * n];
            lu.perm = (0..n).collect();
            lu.work = vec![0.0; n];
            lu.l_rows = vec![0; n * n.saturating_sub(1) / 2];
            lu.u_rows = vec![0; n * n.saturating_sub(1) / 2];
            lu.l_ptr = vec![0; n + 1];
            lu.u_ptr = vec![0; n + 1];
        }
        lu
    }

    fn ensure_mem(&mut self, req: StackReq) {
        let bytes = req.size_bytes();
        if self.mem.is_none() || bytes > self.mem_bytes {
            self.mem = Some(MemBuffer::new(req));
            self.mem_bytes = bytes;
        }
    }

    /// Factor `D_cc` with the given values. `Err` when the pattern is structurally singular or
    /// there is no symbolic factorization (non-square), or, dense, on an exactly zero pivot.
    pub fn factor(&mut self, pattern: &Pattern, values: &[f64]) -> Result<(), String> {
        self.valid = false;
        if pattern.n_rows == 0 && pattern.n_cols == 0 {
            // every coordinate is given: nothing to solve
            self.valid = true;
            return Ok(());
        }
        if pattern.dense {
            return self.factor_dense(pattern, values);
        }
        let Some(symbolic) = pattern.symbolic.as_ref() else {
            return Err(pattern.symbolic_error.clone().unwrap_or_else(|| "D_cc is not square".into()));
        };
        let req = symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default());
        self.ensure_mem(req);
        let mat = SparseColMatRef::new(pattern.symbolic_ref(), values);
        let stack = MemStack::new(self.mem.as_mut().expect("allocated"));
        match symbolic.factorize_numeric_lu(&mut self.numeric, mat, Par::Seq, stack, Default::default()) {
            Ok(_) => {
                self.valid = true;
                Ok(())
            }
            Err(LuError::SymbolicSingular { index }) => Err(format!("structurally singular at pivot {index}")),
            Err(LuError::Generic(e)) => Err(format!("{e:?}")),
        }
    }

    /// Right-looking LU with partial (row) pivoting; the updates touch only the nonzero entries
    /// of the pivot row and column, which keeps a sparse `D_cc` cheap.
    fn factor_dense(&mut self, pattern: &Pattern, values: &[f64]) -> Result<(), String> {
        let n = pattern.n_rows;
        if self.dense.len() != n * n {
            // a workspace made by `Default` (a cloned `Data`): allocate once
            *self = Self::new(pattern);
        }
        let a = &mut self.dense;
        a.fill(0.0);
        for c in 0..n {
            for i in pattern.col_ptr[c]..pattern.col_ptr[c + 1] {
                a[c * n + pattern.row_idx[i]] = values[i];
            }
        }
        for (k, p) in self.perm.iter_mut().enumerate() {
            *p = k;
        }
        for k in 0..n {
            let col = &a[k * n..(k + 1) * n];
            let mut p = k;
            let mut big = col[k].abs();
            for (i, v) in col.iter().enumerate().skip(k + 1) {
                if v.abs() > big {
                    big = v.abs();
                    p = i;
                }
            }
            if !(big > 0.0) || !big.is_finite() {
                return Err(format!("singular at pivot {k}"));
            }
            if p != k {
                for c in 0..n {
                    a.swap(c * n + k, c * n + p);
                }
                self.perm.swap(k, p);
            }
            let (left, right) = a.split_at_mut((k + 1) * n);
            let colk = &mut left[k * n..];
            let inv = 1.0 / colk[k];
            // the multipliers, and where they are nonzero (later row swaps move them: the lists
            // of L are made at the end)
            let mut end = 0;
            for (i, v) in colk.iter_mut().enumerate().skip(k + 1) {
                if *v != 0.0 {
                    *v *= inv;
                    self.l_rows[end] = i;
                    end += 1;
                }
            }
            let rows = &self.l_rows[..end];
            for colj in right.chunks_exact_mut(n) {
                let u = colj[k];
                if u != 0.0 {
                    for &i in rows {
                        colj[i] -= colk[i] * u;
                    }
                }
            }
        }
        // the nonzero entries of L and U, column by column
        let (mut l_end, mut u_end) = (0, 0);
        for k in 0..n {
            self.l_ptr[k] = l_end;
            self.u_ptr[k] = u_end;
            for (i, v) in a[k * n..(k + 1) * n].iter().enumerate() {
                if *v != 0.0 && i < k {
                    self.u_rows[u_end] = i;
                    u_end += 1;
                } else if *v != 0.0 && i > k {
                    self.l_rows[l_end] = i;
                    l_end += 1;
                }
            }
        }
        self.l_ptr[n] = l_end;
        self.u_ptr[n] = u_end;
        self.valid = true;
        Ok(())
    }

    /// Solve `A x = b` (or `Aᵀ x = b`) in place with the dense factors.
    fn solve_dense(&mut self, b: &mut [f64], transpose: bool) {
        let n = self.perm.len();
        let a = &self.dense;
        let w = &mut self.work;
        let l_col = |k: usize| &self.l_rows[self.l_ptr[k]..self.l_ptr[k + 1]];
        let u_col = |k: usize| &self.u_rows[self.u_ptr[k]..self.u_ptr[k + 1]];
        if !transpose {
            // L U x = P b
            for (k, &p) in self.perm.iter().enumerate() {
                w[k] = b[p];
            }
            for k in 0..n {
                let wk = w[k];
                if wk != 0.0 {
                    for &i in l_col(k) {
                        w[i] -= a[k * n + i] * wk;
                    }
                }
            }
            for k in (0..n).rev() {
                w[k] /= a[k * n + k];
                let wk = w[k];
                if wk != 0.0 {
                    for &i in u_col(k) {
                        w[i] -= a[k * n + i] * wk;
                    }
                }
            }
            b.copy_from_slice(w);
        } else {
            // Aᵀ = Uᵀ Lᵀ P: Uᵀ y = b, Lᵀ z = y, x = Pᵀ z
            w.copy_from_slice(b);
            for k in 0..n {
                let s: f64 = u_col(k).iter().map(|&i| a[k * n + i] * w[i]).sum();
                w[k] = (w[k] - s) / a[k * n + k];
            }
            for k in (0..n).rev() {
                let s: f64 = l_col(k).iter().map(|&i| a[k * n + i] * w[i]).sum();
                w[k] -= s;
            }
            for (k, &p) in self.perm.iter().enumerate() {
                b[p] = w[k];
            }
        }
    }

    /// Solve `D_cc X = B` (or `D_ccᵀ X = B`) in place for all columns of `rhs`.
    pub fn solve(&mut self, pattern: &Pattern, rhs: MatMut<'_, f64>, transpose: bool) {
        if pattern.n_rows == 0 {
            return;
        }
        debug_assert!(self.valid);
        if pattern.dense {
            let mut rhs = rhs;
            for j in 0..rhs.ncols() {
                let col = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns");
                self.solve_dense(col.as_slice_mut(), transpose);
            }
            return;
        }
        let symbolic = pattern.symbolic.as_ref().expect("factored");
        let req = symbolic.solve_in_place_scratch::<f64>(rhs.ncols(), Par::Seq);
        self.ensure_mem(req);
        let stack = MemStack::new(self.mem.as_mut().expect("allocated"));
        // `numeric` was produced from `symbolic` by `factor`
        let lu = LuRef::new_unchecked(symbolic, &self.numeric);
        if transpose {
            lu.solve_transpose_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
        } else {
            lu.solve_in_place_with_conj(Conj::No, rhs, Par::Seq, stack);
        }
    }
}
