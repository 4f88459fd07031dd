//! Sparse structure of `D_cc = ∂(e^o, e^m)/∂x^c` and its LU factorization.
//!
//! The pattern and its analysis are computed once per model; each Newton step only refills the
//! values and refactors numerically. The analysis is the block-triangular form of `D_cc` (a
//! maximum matching of equations to unknowns, then the strongly connected components of the
//! matched graph, Tarjan): an open chain falls apart into one small diagonal block per body, a
//! closed loop stays one block. When every block is small ([`DENSE_BLOCK`]) each is factored by
//! a dense LU with partial pivoting on storage made once and the solves substitute block by
//! block — in the Newton iterations and at the solution alike; otherwise faer's sparse LU factors
//! the whole matrix (fill-reducing ordering and elimination structure computed once; sequential:
//! these systems are small and many).

use dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::sparse::linalg::LuError;
use faer::sparse::linalg::lu::{LuRef, NumericLu, SymbolicLu, factorize_symbolic_lu};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par};

use crate::linalg::dense::{lu_in_place, lu_solve, lu_solve_many, lu_solve_transpose, lu_solve_transpose_many};

/// The CSC pattern of `D_cc` with scatter maps from element gradients.
#[derive(Default)]
pub(crate) struct Pattern {
    pub n_rows: usize,
    pub n_cols: usize,
    pub col_ptr: Vec<usize>,
    pub row_idx: Vec<usize>,
    /// `(gradient-buffer index, value slot)` of the `D_cc` entries, split for an assembly without
    /// zeroing: each slot's first entry (in the entries' order), then the others in their order
    /// (every slot has at least one).
    pub scatter_first: Vec<(usize, usize)>,
    pub scatter_more: Vec<(usize, usize)>,
    /// `(gradient-buffer index, row, input j)`: entries of `D_cm` (input-coordinate columns).
    pub scatter_input: Vec<(usize, usize, usize)>,
    /// `(gradient-buffer index, row, col)` of the `D_cc` entries, for dense copies.
    pub entries: Vec<(usize, usize, usize)>,
    pub symbolic: Option<SymbolicLu<usize>>,
    pub symbolic_error: Option<String>,
    /// The block-triangular form, when every block is at most [`DENSE_BLOCK`] square.
    pub blocks: Option<Blocks>,
}

/// The sorted, distinct `(col, row)` keys of `(row, col)` entries, and the CSC column pointers
/// (`n_cols + 1`) and row indices they make.
fn csc(n_cols: usize, entries: impl Iterator<Item = (usize, usize)>) -> (Vec<(usize, usize)>, Vec<usize>, Vec<usize>) {
    let mut keys: Vec<(usize, usize)> = entries.map(|(r, c)| (c, r)).collect();
    keys.sort_unstable();
    keys.dedup();
    let mut col_ptr = vec![0; n_cols + 1];
    for &(c, _) in &keys {
        col_ptr[c + 1] += 1;
    }
    for c in 0..n_cols {
        col_ptr[c + 1] += col_ptr[c];
    }
    let row_idx = keys.iter().map(|&(_, r)| r).collect();
    (keys, col_ptr, row_idx)
}

/// Largest diagonal block of the block-triangular form factored densely: a block this size costs
/// a few µs; a larger one (a long closed loop) goes to the sparse LU, whose fill-reducing order
/// keeps fewer entries.
pub(crate) const DENSE_BLOCK: usize = 64;

/// The block lower-triangular form of a square `D_cc`, found once per model: `P D_cc Q` has
/// square diagonal blocks with nonzero diagonals (a maximum matching), and block `k`'s rows touch
/// only the columns of blocks `0..=k`.
#[derive(Debug, Default)]
pub(crate) struct Blocks {
    /// Block `k` is `start[k]..start[k + 1]` of `rows` and `cols` (`n_blocks + 1`).
    pub start: Vec<usize>,
    /// Rows and columns of `D_cc` in block order; `rows[i]` is matched to `cols[i]`.
    pub rows: Vec<usize>,
    pub cols: Vec<usize>,
    /// Offset of each block's dense `s x s` storage (`n_blocks + 1`).
    pub dense_start: Vec<usize>,
    /// `(value slot, index in the dense storage)` of the entries inside diagonal blocks, grouped
    /// by block (`diag_start`, `n_blocks + 1`; in the pattern's order inside a block).
    pub diag: Vec<(usize, usize)>,
    pub diag_start: Vec<usize>,
    /// Entries outside the diagonal blocks as `(value slot, row, col)`, grouped by the row's
    /// block (`off_row_start`, `n_blocks + 1`), and again by the column's block.
    pub off_by_row: Vec<(usize, usize, usize)>,
    pub off_row_start: Vec<usize>,
    pub off_by_col: Vec<(usize, usize, usize)>,
    pub off_col_start: Vec<usize>,
    /// The block of each row and of each column of `D_cc`.
    pub block_of_row: Vec<usize>,
    pub block_of_col: Vec<usize>,
}

impl Blocks {
    /// Number of diagonal blocks.
    pub fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Size of the largest diagonal block.
    pub fn largest(&self) -> usize {
        self.start.windows(2).map(|w| w[1] - w[0]).max().unwrap_or(0)
    }

    /// The blocks a right-hand side whose nonzero entries are in `rows` moves: the blocks of
    /// those rows and every block downstream of them (whose rows read a moved block's columns),
    /// ascending (the forward substitution's order), into `out`. The other blocks' unknowns are
    /// 0 in the solution. `mark` (n_blocks, all `false`) is left all `false`.
    pub fn downstream(&self, rows: impl Iterator<Item = usize>, mark: &mut [bool], out: &mut Vec<usize>) {
        out.clear();
        for r in rows {
            let b = self.block_of_row[r];
            if !mark[b] {
                mark[b] = true;
                out.push(b);
            }
        }
        let mut next = 0;
        while next < out.len() {
            let b = out[next];
            next += 1;
            for &(_, r, _) in &self.off_by_col[self.off_col_start[b]..self.off_col_start[b + 1]] {
                let s = self.block_of_row[r];
                if !mark[s] {
                    mark[s] = true;
                    out.push(s);
                }
            }
        }
        for &b in out.iter() {
            mark[b] = false;
        }
        out.sort_unstable();
    }
}

impl Pattern {
    /// The pattern of an `n_rows x n_cols` `D_cc` from its entries `(gradient-buffer index, row,
    /// col)` and the entries of `D_cm` `(gradient-buffer index, row, input j)`, analysed.
    pub fn new(
        n_rows: usize,
        n_cols: usize,
        entries: Vec<(usize, usize, usize)>,
        scatter_input: Vec<(usize, usize, usize)>,
    ) -> Self {
        let (keys, col_ptr, row_idx) = csc(n_cols, entries.iter().map(|&(_, r, c)| (r, c)));
        let scatter = entries
            .iter()
            .map(|&(src, r, c)| {
                let slot = keys.binary_search(&(c, r)).expect("key present");
                (src, slot)
            })
            .collect::<Vec<_>>();
        let mut seen = vec![false; keys.len()];
        let (scatter_first, scatter_more) =
            scatter.iter().partition(|&&(_, slot)| !std::mem::replace(&mut seen[slot], true));
        let mut p = Pattern {
            n_rows,
            n_cols,
            col_ptr,
            row_idx,
            scatter_first,
            scatter_more,
            scatter_input,
            entries,
            symbolic: None,
            symbolic_error: None,
            blocks: None,
        };
        p.analyse();
        p
    }

    /// `D_cc`'s values (`dcc`, one a slot) from the element gradients `de`: each slot's first
    /// entry set (`0.0 +` it, the sum a zeroed slot starts from), the others added in the
    /// entries' order; the bits of zeroing and adding, without the zeroing pass.
    pub fn assemble(&self, de: &[f64], dcc: &mut [f64]) {
        for &(src, dst) in &self.scatter_first {
            dcc[dst] = 0.0 + de[src];
        }
        for &(src, dst) in &self.scatter_more {
            dcc[dst] += de[src];
        }
    }

    /// The block-triangular form and faer's symbolic LU of a square pattern (or why there is none).
    fn analyse(&mut self) {
        if self.n_rows == self.n_cols && self.n_rows > 0 {
            self.blocks = self.block_triangular().filter(|b| b.largest() <= DENSE_BLOCK);
            match factorize_symbolic_lu(self.symbolic_ref(), Default::default()) {
                Ok(s) => self.symbolic = Some(s),
                Err(e) => self.symbolic_error = Some(format!("{e:?}")),
            }
        }
    }

    /// The columns of each row (the transpose of the pattern).
    fn row_cols(&self) -> Vec<Vec<usize>> {
        let mut row_cols: Vec<Vec<usize>> = vec![Vec::new(); self.n_rows];
        for c in 0..self.n_cols {
            for &r in &self.row_idx[self.col_ptr[c]..self.col_ptr[c + 1]] {
                row_cols[r].push(c);
            }
        }
        row_cols
    }

    /// A maximum matching of rows to columns over the pattern: `(row_col, col_row)`, with
    /// `usize::MAX` for a row or column left over. Greedy, then augmenting paths by an iterative
    /// depth-first search from each row left over (no recursion: chains of 20 000 unknowns).
    pub fn max_matching(&self) -> (Vec<usize>, Vec<usize>) {
        let row_cols = self.row_cols();
        let (rows, cols) = (self.n_rows, self.n_cols);
        let mut col_row = vec![usize::MAX; cols];
        let mut row_col = vec![usize::MAX; rows];
        for r in 0..rows {
            if let Some(&c) = row_cols[r].iter().find(|&&c| col_row[c] == usize::MAX) {
                col_row[c] = r;
                row_col[r] = c;
            }
        }
        let mut seen = vec![usize::MAX; cols];
        let (mut stack, mut via) = (Vec::new(), Vec::new());
        for r0 in 0..rows {
            if row_col[r0] != usize::MAX {
                continue;
            }
            // stack of (row, next candidate index); via[i] the column row stack[i] would take
            stack.clear();
            via.clear();
            stack.push((r0, 0usize));
            let mut found = false;
            while let Some(&mut (r, ref mut k)) = stack.last_mut() {
                if *k >= row_cols[r].len() {
                    stack.pop();
                    via.pop();
                    continue;
                }
                let c = row_cols[r][*k];
                *k += 1;
                if seen[c] == r0 {
                    continue;
                }
                seen[c] = r0;
                via.push(c);
                if col_row[c] == usize::MAX {
                    found = true;
                    break;
                }
                stack.push((col_row[c], 0));
            }
            if found {
                // flip the path: row stack[i] takes column via[i]
                for (&(r, _), &c) in stack.iter().zip(&via) {
                    col_row[c] = r;
                    row_col[r] = c;
                }
            }
        }
        (row_col, col_row)
    }

    /// The block-triangular form of a square pattern, `None` when it is structurally singular.
    /// The graph has one vertex per matched pair (row `r`, column `c`) and an edge to the pair
    /// of column `c'` for each entry `(r, c')`; its strongly connected components (Tarjan,
    /// iterative) come out sinks first, which is the order of a forward substitution.
    fn block_triangular(&self) -> Option<Blocks> {
        let n = self.n_cols;
        let (row_col, col_row) = self.max_matching();
        if row_col.contains(&usize::MAX) {
            return None;
        }
        let row_cols = self.row_cols();
        // vertex v = column v, whose equation is row col_row[v]
        const NONE: usize = usize::MAX;
        let (mut index, mut low, mut on_stack) = (vec![NONE; n], vec![0; n], vec![false; n]);
        let (mut stack, mut call) = (Vec::new(), Vec::<(usize, usize)>::new());
        let mut next = 0;
        let mut blocks = Blocks { start: vec![0], ..Default::default() };
        for root in 0..n {
            if index[root] != NONE {
                continue;
            }
            call.push((root, 0));
            while let Some(&mut (v, ref mut k)) = call.last_mut() {
                if *k == 0 {
                    index[v] = next;
                    low[v] = next;
                    next += 1;
                    stack.push(v);
                    on_stack[v] = true;
                }
                let edges = &row_cols[col_row[v]];
                if *k < edges.len() {
                    let w = edges[*k];
                    *k += 1;
                    if index[w] == NONE {
                        call.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    loop {
                        let w = stack.pop().expect("v is on the stack");
                        on_stack[w] = false;
                        blocks.cols.push(w);
                        blocks.rows.push(col_row[w]);
                        if w == v {
                            break;
                        }
                    }
                    blocks.start.push(blocks.cols.len());
                }
            }
        }
        // `*k == 0` marks a first visit: every vertex has an edge (its own matched entry), so
        // `k > 0` once it was entered
        debug_assert_eq!(blocks.cols.len(), n);
        let nb = blocks.len();
        let (mut block_of_col, mut local_col, mut block_of_row, mut local_row) =
            (vec![0; n], vec![0; n], vec![0; n], vec![0; n]);
        blocks.dense_start.push(0);
        for b in 0..nb {
            let (s0, s1) = (blocks.start[b], blocks.start[b + 1]);
            for i in s0..s1 {
                (block_of_col[blocks.cols[i]], local_col[blocks.cols[i]]) = (b, i - s0);
                (block_of_row[blocks.rows[i]], local_row[blocks.rows[i]]) = (b, i - s0);
            }
            let s = s1 - s0;
            blocks.dense_start.push(blocks.dense_start[b] + s * s);
        }
        let mut off = Vec::new();
        for c in 0..n {
            for slot in self.col_ptr[c]..self.col_ptr[c + 1] {
                let r = self.row_idx[slot];
                let (br, bc) = (block_of_row[r], block_of_col[c]);
                if br == bc {
                    let s = blocks.start[br + 1] - blocks.start[br];
                    blocks.diag.push((slot, blocks.dense_start[br] + local_row[r] * s + local_col[c]));
                } else {
                    debug_assert!(bc < br, "block lower-triangular");
                    off.push((slot, r, c));
                }
            }
        }
        // by block, stably: the sums into one dense entry keep their order
        blocks.diag.sort_by_key(|&(_, at)| blocks.dense_start.partition_point(|&d| d <= at) - 1);
        blocks.diag_start =
            (0..=nb).map(|b| blocks.diag.partition_point(|&(_, at)| at < blocks.dense_start[b])).collect();
        let group = |key: &dyn Fn(&(usize, usize, usize)) -> usize| {
            let mut list = off.clone();
            list.sort_by_key(|e| (key(e), e.0));
            let mut start = vec![0; nb + 1];
            for e in &list {
                start[key(e) + 1] += 1;
            }
            for b in 0..nb {
                start[b + 1] += start[b];
            }
            (list, start)
        };
        (blocks.off_by_row, blocks.off_row_start) = group(&|e| block_of_row[e.1]);
        (blocks.off_by_col, blocks.off_col_start) = group(&|e| block_of_col[e.2]);
        (blocks.block_of_row, blocks.block_of_col) = (block_of_row, block_of_col);
        Some(blocks)
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
        for (c, &vc) in v[..self.n_cols].iter().enumerate() {
            let range = self.col_ptr[c]..self.col_ptr[c + 1];
            for (&r, &a) in self.row_idx[range.clone()].iter().zip(&values[range]) {
                y[r] += a * vc;
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

/// How [`Lu::factor`] factors `D_cc`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    /// faer's sparse LU of the whole matrix.
    Sparse,
    /// Dense LU of the block-triangular form's diagonal blocks, where the model has it
    /// (`Pattern::blocks`); the sparse LU otherwise.
    Blocks,
}

/// The numeric LU factors of `D_cc` and their workspace.
#[derive(Default)]
pub(crate) struct Lu {
    numeric: NumericLu<usize, f64>,
    mem: Option<MemBuffer>,
    mem_bytes: usize,
    /// Dense LU factors of the diagonal blocks (row-major, unit lower and upper triangle in
    /// place), their row pivots (block-local), and a copy of a right-hand side.
    dense: Vec<f64>,
    pivots: Vec<usize>,
    rhs: Vec<f64>,
    /// Several right-hand sides by rows, and their solutions as they are solved (n x k each,
    /// row-major).
    by_rows: Vec<f64>,
    solved: Vec<f64>,
    /// One block's part of the right-hand sides (its rows of k values), and a row's sums (k).
    block: Vec<f64>,
    sums: Vec<f64>,
    /// Values of the entries outside the diagonal blocks, in the orders of `Blocks::off_by_row`
    /// and `Blocks::off_by_col`.
    off_row: Vec<f64>,
    off_col: Vec<f64>,
    /// One diagonal block and its pivots, factored in [`Lu::solve_transpose_inward`].
    one: Vec<f64>,
    one_pivots: Vec<usize>,
    /// The factors are the blocks' ([`Method::Blocks`]).
    blocks: bool,
    /// faer's sparse factors of the same matrix are there too ([`Lu::add_sparse`]).
    sparse: bool,
    pub valid: bool,
}

/// What [`Lu::solve_transpose_inward`] measured of its solution `y` of `D_ccᵀ y = c`: the
/// largest residual `|(D_ccᵀ y − c)_i|` and the largest `|y_i|` (NaNs passed over), and whether
/// every `y_i` is finite: with the largest entries of `c` and `D_cc`, the backward error and
/// condition bound that a product with `D_ccᵀ` after the solve would give.
#[derive(Clone, Copy, Debug, Default)]
pub struct Backward {
    /// The largest residual entry (the right-hand side's units).
    pub error: f64,
    /// The largest solution entry.
    pub solution: f64,
    /// Every solution entry finite.
    pub finite: bool,
}

/// Right-hand sides beyond which one solve goes through faer's sparse factors (made once per
/// factorization, [`Lu::add_sparse`]) rather than the blocks': faer's factors cost a
/// factorization more, the blocks' substitution of many columns moves them through its rows
/// (n x k) in and out. Measured since the blocks solve the columns together along the rows
/// ([`Lu::solve_blocks_together`]): `D²F` of a 10-body chain (55 and fewer columns) 946k
/// instructions with faer, 844k with the blocks (wall clock 8-10 % faster, medians); `DF` of a
/// 100-body chain, 100 columns, 19 % fewer instructions with the blocks but no faster by the
/// clock, and of a 1000-body chain twice as slow (91 against 171 ms): faer above 64.
pub(crate) const MANY_COLUMNS: usize = 64;

/// Right-hand sides from which the blocks' solve takes them together
/// ([`Lu::solve_blocks_together`]) rather than one after another. Measured (instructions): the
/// shoulder's forward step, whose 9 and 18 columns gain 19k and 3k with an entry outside the
/// diagonal blocks read once for all columns, and 21k more with the diagonal blocks solved along
/// the rows ([`lu_solve_many`]); the shoulder posture's 6 columns lose 8k taken together (the
/// transposition in and out costs more than the shared reads save).
const TOGETHER: usize = 8;

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
    pub fn factor(&mut self, pattern: &Pattern, values: &[f64], method: Method) -> Result<(), String> {
        self.valid = false;
        self.blocks = false;
        self.sparse = false;
        if pattern.n_rows == 0 && pattern.n_cols == 0 {
            // every coordinate is given: nothing to solve
            self.valid = true;
            return Ok(());
        }
        if let (Method::Blocks, Some(blocks)) = (method, &pattern.blocks) {
            self.factor_blocks(blocks, values)?;
            self.valid = true;
            self.blocks = true;
            return Ok(());
        }
        self.factor_sparse(pattern, values)?;
        self.valid = true;
        Ok(())
    }

    /// faer's sparse LU of `values` into `numeric`.
    fn factor_sparse(&mut self, pattern: &Pattern, values: &[f64]) -> Result<(), String> {
        let Some(symbolic) = pattern.symbolic.as_ref() else {
            return Err(pattern.symbolic_error.clone().unwrap_or_else(|| "D_cc is not square".into()));
        };
        let req = symbolic.factorize_numeric_lu_scratch::<f64>(Par::Seq, Default::default());
        self.ensure_mem(req);
        let mat = SparseColMatRef::new(pattern.symbolic_ref(), values);
        let stack = MemStack::new(self.mem.as_mut().expect("allocated"));
        match symbolic.factorize_numeric_lu(&mut self.numeric, mat, Par::Seq, stack, Default::default()) {
            Ok(_) => {
                self.sparse = true;
                Ok(())
            }
            Err(LuError::SymbolicSingular { index }) => Err(format!("structurally singular at pivot {index}")),
            Err(LuError::Generic(e)) => Err(format!("{e:?}")),
        }
    }

    /// With block factors of `values` (the matrix they were made from), add faer's sparse
    /// factors of it for solves of more than [`MANY_COLUMNS`] right-hand sides; nothing when they
    /// are there already or the model has no symbolic factorization.
    pub fn add_sparse(&mut self, pattern: &Pattern, values: &[f64]) -> Result<(), String> {
        if !self.valid || self.sparse || pattern.symbolic.is_none() {
            return Ok(());
        }
        self.factor_sparse(pattern, values)
    }

    /// The factors are the diagonal blocks' ([`Method::Blocks`]), valid: [`Lu::solve_reached`]
    /// may be used.
    pub fn has_block_factors(&self) -> bool {
        self.valid && self.blocks
    }

    /// Solve `D_cc x = b` in place (`v`: `b` in, `x` out) over the blocks `reached` only
    /// ([`Blocks::downstream`] of `b`'s nonzero rows, ascending): the other blocks' unknowns
    /// are 0, as the whole substitution would make them. Every reached block's numbers are
    /// formed by the operations of [`Lu::solve`] in its order (an unreached block's unknowns,
    /// read as 0, subtract nothing). Needs block factors ([`Lu::has_block_factors`]).
    pub fn solve_reached(&mut self, blocks: &Blocks, reached: &[usize], v: &mut [f64]) {
        debug_assert!(self.has_block_factors());
        let mut b = std::mem::take(&mut self.rhs);
        b.clear();
        b.extend_from_slice(v);
        v.fill(0.0);
        self.substitute_in(blocks, reached.iter().copied(), &mut b, v, 1, false);
        self.rhs = b;
    }

    /// Solve `D_ccᵀ y = c` in place (`v`: `c` by column in, `y` by row out) from the values of
    /// `D_cc` alone, without factors: the blocks from the last (the leaves) to the first, each
    /// diagonal block factored as it is reached — the backward pass of the recursive
    /// Newton-Euler algorithm on the kernel's blocks, a block's unknowns the stresses of one
    /// joint and the forces its children pass on read from the entries outside the diagonal
    /// blocks. The operations and their order are those of [`Lu::factor`] then [`Lu::solve`]
    /// (the same numbers), but for a 4 x 4 block (a body's orientation), solved in closed form
    /// without pivoting (`quaternion.rs`; the same to round-off) unless it is flat; the stored
    /// factors are left as they were. The pass measures its own
    /// solution as it goes ([`Backward`]: each block's residual against its unfactored values, so
    /// no product with `D_ccᵀ` afterwards). `Err` names a block with a zero pivot.
    pub fn solve_transpose_inward(
        &mut self,
        blocks: &Blocks,
        values: &[f64],
        v: &mut [f64],
    ) -> Result<Backward, String> {
        let mut b = std::mem::take(&mut self.rhs);
        b.clear();
        b.extend_from_slice(v);
        let result = self.inward(blocks, values, &mut b, v);
        self.rhs = b;
        result
    }

    /// [`Lu::solve_transpose_inward`] with the right-hand side `b` (by column, used up) and the
    /// solution `x` (by row, every entry written).
    fn inward(&mut self, blocks: &Blocks, values: &[f64], b: &mut [f64], x: &mut [f64]) -> Result<Backward, String> {
        let largest = blocks.largest();
        // a block factored, the same block as assembled and its unknowns
        let room = 2 * largest * largest + largest;
        if self.one.len() < room {
            self.one.resize(room, 0.0);
        }
        if self.one_pivots.len() < largest {
            self.one_pivots.resize(largest, 0);
        }
        if self.block.len() < largest {
            self.block.resize(largest, 0.0);
        }
        let mut m = Backward::default();
        // 0 · y is NaN exactly where y is not finite
        let mut finite = 0.0;
        for bk in (0..blocks.len()).rev() {
            let s = blocks.start[bk + 1] - blocks.start[bk];
            // a joint's block (a body's orientation) with its size known to the compiler: the
            // same operations, unrolled
            let ok = if s == 4 {
                self.inward_block(blocks, values, b, x, bk, 4, &mut m, &mut finite)
            } else {
                self.inward_block(blocks, values, b, x, bk, s, &mut m, &mut finite)
            };
            if !ok {
                return Err(format!("singular diagonal block {bk} ({s} x {s})"));
            }
        }
        m.finite = finite == 0.0;
        Ok(m)
    }

    /// One step of [`Lu::inward`]: block `bk` (`s x s`) solved for its unknowns in `x` from what
    /// its children left in `b`, its residual, largest entry and finiteness added to `m` and
    /// `finite`; `false` on a zero pivot.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn inward_block(
        &mut self,
        blocks: &Blocks,
        values: &[f64],
        b: &mut [f64],
        x: &mut [f64],
        bk: usize,
        s: usize,
        m: &mut Backward,
        finite: &mut f64,
    ) -> bool {
        let s0 = blocks.start[bk];
        // the forces of the blocks already solved (downstream: the children) on this one
        for &(slot, r, c) in &blocks.off_by_col[blocks.off_col_start[bk]..blocks.off_col_start[bk + 1]] {
            b[c] -= values[slot] * x[r];
        }
        let pivots = &mut self.one_pivots[..s];
        // the block factored, the same block as assembled and its unknowns (for its residual)
        let (a, rest) = self.one[..2 * s * s + s].split_at_mut(s * s);
        let (a0, y) = rest.split_at_mut(s * s);
        a.fill(0.0);
        let d0 = blocks.dense_start[bk];
        for &(slot, at) in &blocks.diag[blocks.diag_start[bk]..blocks.diag_start[bk + 1]] {
            a[at - d0] += values[slot];
        }
        let (rows, cols) = (&blocks.rows[s0..s0 + s], &blocks.cols[s0..s0 + s]);
        let t = &mut self.block[..s];
        for (ti, &c) in t.iter_mut().zip(cols) {
            *ti = b[c];
        }
        // a body's orientation block in closed form, no pivoting (quaternion.rs); the block as
        // assembled is left in `a` for the residual
        let closed = if s == 4 { quaternion::solve_transpose(a, t) } else { None };
        let a0: &[f64] = if let Some(sol) = closed {
            for (i, &v) in sol.iter().enumerate() {
                x[rows[i]] = v;
                y[i] = v;
            }
            a
        } else {
            a0.copy_from_slice(a);
            if !lu_in_place(a, s, pivots) {
                return false;
            }
            lu_solve_transpose(a, s, t);
            for (ti, &p) in t.iter().zip(pivots.iter()) {
                x[rows[p]] = *ti;
                y[p] = *ti;
            }
            a0
        };
        for yi in y.iter() {
            *finite += *yi * 0.0;
            m.solution = m.solution.max(yi.abs());
        }
        // the block's columns' residual: what is left of b after this block's own forces
        for (j, &c) in cols.iter().enumerate() {
            let mut r = b[c];
            for (i, yi) in y.iter().enumerate() {
                r -= a0[i * s + j] * yi;
            }
            m.error = m.error.max(r.abs());
        }
        true
    }

    /// Solve `D_cc X = B` (or `D_ccᵀ X = B`) in place for all columns of `rhs`.
    pub fn solve(&mut self, pattern: &Pattern, rhs: MatMut<'_, f64>, transpose: bool) {
        if pattern.n_rows == 0 {
            return;
        }
        let many = rhs.ncols() > MANY_COLUMNS && self.sparse;
        if let (true, false, Some(blocks)) = (self.blocks, many, &pattern.blocks) {
            debug_assert!(self.valid);
            let mut rhs = rhs;
            if rhs.ncols() < TOGETHER {
                for j in 0..rhs.ncols() {
                    let col =
                        rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
                    self.solve_blocks(blocks, col, transpose);
                }
            } else {
                self.solve_blocks_together(blocks, rhs, transpose);
            }
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

impl Lu {
    /// Factor each diagonal block densely: `P_k A_kk = L_k U_k`, partial pivoting by rows.
    fn factor_blocks(&mut self, blocks: &Blocks, values: &[f64]) -> Result<(), String> {
        let size = *blocks.dense_start.last().unwrap_or(&0);
        self.dense.clear();
        self.dense.resize(size, 0.0);
        self.pivots.resize(blocks.rows.len(), 0);
        // (a together-solve may have grown it: kept)
        if self.block.len() < blocks.largest() {
            self.block.resize(blocks.largest(), 0.0);
        }
        for &(slot, at) in &blocks.diag {
            self.dense[at] += values[slot];
        }
        self.off_row.clear();
        self.off_row.extend(blocks.off_by_row.iter().map(|e| values[e.0]));
        self.off_col.clear();
        self.off_col.extend(blocks.off_by_col.iter().map(|e| values[e.0]));
        for b in 0..blocks.len() {
            let (s0, s1) = (blocks.start[b], blocks.start[b + 1]);
            let a = &mut self.dense[blocks.dense_start[b]..blocks.dense_start[b + 1]];
            if !lu_in_place(a, s1 - s0, &mut self.pivots[s0..s1]) {
                return Err(format!("singular diagonal block {b} ({} x {})", s1 - s0, s1 - s0));
            }
        }
        Ok(())
    }

    /// [`Lu::solve_blocks`] for the `k` columns of `rhs` (n x k) together: each column's numbers
    /// are formed by the same operations in the same order, but an entry outside the diagonal
    /// blocks is read once for all columns, which lie side by side (rows of `k`), and each
    /// diagonal block is solved along those rows ([`lu_solve_many`]).
    fn solve_blocks_together(&mut self, blocks: &Blocks, mut rhs: MatMut<'_, f64>, transpose: bool) {
        let (n, k) = (rhs.nrows(), rhs.ncols());
        let (mut by_rows, mut solved) = (std::mem::take(&mut self.by_rows), std::mem::take(&mut self.solved));
        // every entry is written before it is read (sized, not zeroed)
        for v in [&mut by_rows, &mut solved] {
            if v.len() < n * k {
                v.resize(n * k, 0.0);
            }
        }
        let largest = blocks.largest();
        if self.block.len() < largest * k {
            self.block.resize(largest * k, 0.0);
        }
        if self.sums.len() < k {
            self.sums.resize(k, 0.0);
        }
        for j in 0..k {
            let col = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
            for (i, v) in col.iter().enumerate() {
                by_rows[i * k + j] = *v;
            }
        }
        self.substitute(blocks, &mut by_rows[..n * k], &mut solved[..n * k], k, transpose);
        for j in 0..k {
            let col = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
            for (i, v) in col.iter_mut().enumerate() {
                *v = solved[i * k + j];
            }
        }
        (self.by_rows, self.solved) = (by_rows, solved);
    }

    /// `D_cc x = b` in place (`v`: `b` by row in, `x` by column out), block by block forward; or
    /// `D_ccᵀ y = c` (`c` by column in, `y` by row out), block by block backward.
    fn solve_blocks(&mut self, blocks: &Blocks, v: &mut [f64], transpose: bool) {
        if blocks.len() == 1 {
            // one block (a small loop, a pendulum): its right-hand side is gathered before its
            // solution is scattered, so `v` needs no copy; the operations are the substitution's
            let (a, s) = (&self.dense[..blocks.dense_start[1]], blocks.rows.len());
            let t = &mut self.block[..s];
            if transpose {
                for (ti, &c) in t.iter_mut().zip(&blocks.cols) {
                    *ti = v[c];
                }
                lu_solve_transpose(a, s, t);
                for (ti, &p) in t.iter().zip(&self.pivots) {
                    v[blocks.rows[p]] = *ti;
                }
            } else {
                for (ti, &p) in t.iter_mut().zip(&self.pivots) {
                    *ti = v[blocks.rows[p]];
                }
                lu_solve(a, s, t);
                for (ti, &c) in t.iter().zip(&blocks.cols) {
                    v[c] = *ti;
                }
            }
            return;
        }
        let mut b = std::mem::take(&mut self.rhs);
        b.clear();
        b.extend_from_slice(v);
        self.substitute(blocks, &mut b, v, 1, transpose);
        self.rhs = b;
    }

    /// The blocks' substitution for `k` right-hand sides side by side (rows of `k`): `b` the
    /// right-hand sides by row (by column when transposed), used up; `x` the solutions by column
    /// (by row when transposed), every entry written.
    #[inline(always)]
    fn substitute(&mut self, blocks: &Blocks, b: &mut [f64], x: &mut [f64], k: usize, transpose: bool) {
        let nb = blocks.len();
        let order = (0..nb).map(|step| if transpose { nb - 1 - step } else { step });
        self.substitute_in(blocks, order, b, x, k, transpose);
    }

    /// [`Lu::substitute`] over the blocks `order` only (every block, in the substitution's
    /// order, for a whole solve).
    #[inline(always)]
    fn substitute_in(
        &mut self,
        blocks: &Blocks,
        order: impl Iterator<Item = usize>,
        b: &mut [f64],
        x: &mut [f64],
        k: usize,
        transpose: bool,
    ) {
        for bk in order {
            let (s0, s1) = (blocks.start[bk], blocks.start[bk + 1]);
            // less the unknowns of the blocks already solved
            let (off, values, start) = if transpose {
                (&blocks.off_by_col, &self.off_col, &blocks.off_col_start)
            } else {
                (&blocks.off_by_row, &self.off_row, &blocks.off_row_start)
            };
            let range = start[bk]..start[bk + 1];
            for (&(_, r, c), a) in off[range.clone()].iter().zip(&values[range]) {
                let (to, from) = if transpose { (c, r) } else { (r, c) };
                for (d, s) in b[to * k..(to + 1) * k].iter_mut().zip(&x[from * k..(from + 1) * k]) {
                    *d -= a * s;
                }
            }
            let a = &self.dense[blocks.dense_start[bk]..blocks.dense_start[bk + 1]];
            let (s, pivots) = (s1 - s0, &self.pivots[s0..s1]);
            // P A = L U: A x = b is L U x = P b; Aᵀ y = c is Uᵀ Lᵀ (P y) = c
            if k > 1 {
                // the block's rows of all k columns, solved along the rows
                let (t, sums) = (&mut self.block[..s * k], &mut self.sums[..k]);
                if transpose {
                    for (i, ti) in t.chunks_exact_mut(k).enumerate() {
                        ti.copy_from_slice(&b[blocks.cols[s0 + i] * k..][..k]);
                    }
                    lu_solve_transpose_many(a, s, t, k, sums);
                    for (ti, &p) in t.chunks_exact(k).zip(pivots) {
                        x[blocks.rows[s0 + p] * k..][..k].copy_from_slice(ti);
                    }
                } else {
                    for (ti, &p) in t.chunks_exact_mut(k).zip(pivots) {
                        ti.copy_from_slice(&b[blocks.rows[s0 + p] * k..][..k]);
                    }
                    lu_solve_many(a, s, t, k, sums);
                    for (i, ti) in t.chunks_exact(k).enumerate() {
                        x[blocks.cols[s0 + i] * k..][..k].copy_from_slice(ti);
                    }
                }
                continue;
            }
            // one column: the block's sizes known to the compiler (`lu_solve`)
            let t = &mut self.block[..s];
            if transpose {
                for (i, ti) in t.iter_mut().enumerate() {
                    *ti = b[blocks.cols[s0 + i]];
                }
                lu_solve_transpose(a, s, t);
                for (ti, &p) in t.iter().zip(pivots) {
                    x[blocks.rows[s0 + p]] = *ti;
                }
            } else {
                for (ti, &p) in t.iter_mut().zip(pivots) {
                    *ti = b[blocks.rows[s0 + p]];
                }
                lu_solve(a, s, t);
                for (i, ti) in t.iter().enumerate() {
                    x[blocks.cols[s0 + i]] = *ti;
                }
            }
        }
    }
}

mod quaternion;
#[cfg(test)]
mod tests;
