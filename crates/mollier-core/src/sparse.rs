//! Sparse structure of `D_cc = ∂(e^o, e^m)/∂x^c` and its LU factorization.
//!
//! The pattern and the symbolic factorization (fill-reducing ordering, elimination structure)
//! are computed once per model; each Newton step only refills the values and refactors
//! numerically (faer, sequential: these systems are small and many).

use dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::LuError;
use faer::sparse::linalg::lu::{LuRef, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use crate::model::{CoordRole, Input, Model};

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
        };
        if n_rows == n_cols && n_rows > 0 {
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
    pub valid: bool,
}

impl Lu {
    fn ensure_mem(&mut self, req: StackReq) {
        let bytes = req.size_bytes();
        if self.mem.is_none() || bytes > self.mem_bytes {
            self.mem = Some(MemBuffer::new(req));
            self.mem_bytes = bytes;
        }
    }

    /// Factor `D_cc` with the given values. `Err` when the pattern is structurally singular or
    /// there is no symbolic factorization (non-square).
    pub fn factor(&mut self, pattern: &Pattern, values: &[f64]) -> Result<(), String> {
        self.valid = false;
        if pattern.n_rows == 0 && pattern.n_cols == 0 {
            // every coordinate is given: nothing to solve
            self.valid = true;
            return Ok(());
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

    /// Solve `D_cc X = B` (or `D_ccᵀ X = B`) in place for all columns of `rhs`.
    pub fn solve(&mut self, pattern: &Pattern, rhs: MatMut<'_, f64>, transpose: bool) {
        if pattern.n_rows == 0 {
            return;
        }
        let symbolic = pattern.symbolic.as_ref().expect("factored");
        debug_assert!(self.valid);
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
