//! The block-triangular form's analysis and solves against faer's sparse LU, and the inward
//! pass's own measure of its solution.

use super::*;

/// A square pattern from `(row, col)` entries, analysed as `Pattern::new` does.
fn pattern(n: usize, entries: &[(usize, usize)]) -> Pattern {
    let (_, col_ptr, row_idx) = csc(n, entries.iter().copied());
    let mut p = Pattern { n_rows: n, n_cols: n, col_ptr, row_idx, ..Default::default() };
    p.analyse();
    p
}

/// Values that make every entry count (a fixed pseudo-random sequence, diagonal-heavy).
fn values(p: &Pattern) -> Vec<f64> {
    values_dominant(p, |r, c| r == c)
}

/// Values with the entries `main(row, col)` dominant (3 to 4), the others -0.5 to 0.5.
fn values_dominant(p: &Pattern, main: impl Fn(usize, usize) -> bool) -> Vec<f64> {
    let mut v = Vec::new();
    for c in 0..p.n_cols {
        for &r in &p.row_idx[p.col_ptr[c]..p.col_ptr[c + 1]] {
            let k = (v.len() * 7919 % 101) as f64 / 101.0;
            v.push(if main(r, c) { 3.0 + k } else { k - 0.5 });
        }
    }
    v
}

/// The inward pass's measures `m` of its solution `y` of `Dᵀ y = b` against the product
/// `Dᵀ y` formed afterwards: the largest `|y_i|` exactly, the residual to round-off (a
/// backward stable solve's, far below any `b`), all finite.
fn inward_measures_hold(p: &Pattern, a: &[f64], b: &[f64], y: &[f64], m: Backward) {
    let largest = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    assert!(m.finite);
    assert_eq!(m.solution, largest(y));
    let mut r = vec![0.0; b.len()];
    p.mul_t(a, y, &mut r);
    let residual = largest(&r.iter().zip(b).map(|(r, b)| r - b).collect::<Vec<_>>());
    let round_off = 64.0 * f64::EPSILON * (largest(b) + largest(a) * m.solution);
    assert!(m.error <= round_off && residual <= round_off, "{} and {residual} (bound {round_off})", m.error);
    // a right-hand side not finite: the solution is not, and the pass says so
    let mut bad = b.to_vec();
    bad[b.len() - 1] = f64::NAN;
    let blocks = p.blocks.as_ref().expect("blocks");
    assert!(!Lu::default().solve_transpose_inward(blocks, a, &mut bad).expect("regular").finite);
}

/// The block solves (`D x = b`, `Dᵀ y = b`) against faer's sparse LU of the same matrix.
fn solves_agree(p: &Pattern) {
    solves_agree_for(p, &values(p));
}

/// [`solves_agree`] for the values `a`.
fn solves_agree_for(p: &Pattern, a: &[f64]) {
    let n = p.n_cols;
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 5) as f64 - 0.3 * i as f64).collect();
    for transpose in [false, true] {
        let mut got = [b.clone(), b.clone()];
        for (method, v) in [Method::Blocks, Method::Sparse].into_iter().zip(&mut got) {
            let mut lu = Lu::default();
            lu.factor(p, a, method).expect("regular");
            lu.solve(p, MatMut::from_column_major_slice_mut(v, n, 1), transpose);
        }
        for (x, y) in got[0].iter().zip(&got[1]) {
            assert!((x - y).abs() < 1e-13 * (1.0 + y.abs()), "transpose {transpose}: {x} vs {y}");
        }
        // the inward pass without factors: the blocks' factored solve, bit for bit where no
        // block is 4 x 4 (those in closed form: to round-off)
        if let (true, Some(blocks)) = (transpose, &p.blocks) {
            let mut inward = b.clone();
            let m = Lu::default().solve_transpose_inward(blocks, a, &mut inward).expect("regular");
            if blocks.start.windows(2).any(|w| w[1] - w[0] == 4) {
                for (x, y) in inward.iter().zip(&got[0]) {
                    assert!((x - y).abs() < 1e-13 * (1.0 + y.abs()), "the inward pass: {x} vs {y}");
                }
            } else {
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&inward), bits(&got[0]), "the inward pass and the factors' solve");
            }
            inward_measures_hold(p, a, &b, &inward, m);
        }
        // and the residual itself
        let mut r = vec![0.0; n];
        if transpose {
            p.mul_t(a, &got[0], &mut r)
        } else {
            p.mul(a, &got[0], &mut r)
        }
        for (ri, bi) in r.iter().zip(&b) {
            assert!((ri - bi).abs() < 1e-13 * (1.0 + bi.abs()));
        }
        // enough columns to be solved together by the blocks: each column the bits it has
        // alone, and each satisfying its system
        let k = TOGETHER + 1;
        let cols: Vec<Vec<f64>> = (0..k)
            .map(|j| b.iter().enumerate().map(|(i, v)| v * (1.0 + j as f64) - 0.1 * (i * j) as f64).collect())
            .collect();
        let mut together = cols.concat();
        let mut lu = Lu::default();
        lu.factor(p, a, Method::Blocks).expect("regular");
        lu.solve(p, MatMut::from_column_major_slice_mut(&mut together, n, k), transpose);
        for (c, x) in cols.iter().zip(together.chunks_exact(n)) {
            let mut alone = c.clone();
            lu.solve(p, MatMut::from_column_major_slice_mut(&mut alone, n, 1), transpose);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&alone), bits(x), "transpose {transpose}: together and alone");
            if transpose {
                p.mul_t(a, x, &mut r)
            } else {
                p.mul(a, x, &mut r)
            }
            for (ri, bi) in r.iter().zip(c) {
                assert!((ri - bi).abs() < 1e-13 * (1.0 + bi.abs()), "transpose {transpose}: {ri} vs {bi}");
            }
        }
    }
}

#[test]
fn an_open_chain_falls_apart_into_one_block_per_link() {
    // three links of 4 unknowns, each row block touching its own link and the previous one,
    // rows listed in an order that needs the matching (last link first)
    let mut e = Vec::new();
    for link in 0..3 {
        let rows = (2 - link) * 4;
        for i in 0..4 {
            for j in 0..4 {
                e.push((rows + i, link * 4 + j));
                if link > 0 {
                    e.push((rows + i, (link - 1) * 4 + j));
                }
            }
        }
    }
    let p = pattern(12, &e);
    let blocks = p.blocks.as_ref().expect("structurally regular");
    assert_eq!(blocks.len(), 3);
    assert_eq!(blocks.largest(), 4);
    // the first block solved is the first link (no earlier columns)
    assert!(blocks.cols[..4].iter().all(|&c| c < 4));
    solves_agree(&p);
}

#[test]
fn a_closed_loop_is_one_block() {
    // a cycle: row i touches columns i and i+1 (mod n)
    let n = 9;
    let e: Vec<_> = (0..n).flat_map(|i| [(i, i), (i, (i + 1) % n)]).collect();
    let p = pattern(n, &e);
    let blocks = p.blocks.as_ref().expect("structurally regular");
    assert_eq!(blocks.len(), 1);
    solves_agree(&p);
    // and with the columns shifted, so that rows are matched to other columns
    let e: Vec<_> = (0..n).flat_map(|i| [(i, (i + 3) % n), (i, (i + 4) % n)]).collect();
    let p = pattern(n, &e);
    let blocks = p.blocks.as_ref().expect("structurally regular");
    assert!(blocks.len() == 1 && blocks.rows != blocks.cols);
    solves_agree_for(&p, &values_dominant(&p, |r, c| c == (r + 3) % n));
}

#[test]
fn a_tree_is_solved_leaves_after_their_parents() {
    // a root (0, 1) with two branches (2, 3) and (4); a branch's rows touch its parent's columns
    let e = [(0, 0), (0, 1), (1, 0), (1, 1), (2, 2), (2, 0), (3, 3), (3, 2), (3, 1), (4, 4), (4, 1)];
    let p = pattern(5, &e);
    let blocks = p.blocks.as_ref().expect("structurally regular");
    assert_eq!(blocks.len(), 4, "{blocks:?}");
    solves_agree(&p);
}

#[test]
fn a_structurally_singular_pattern_has_no_blocks() {
    // two rows on the same single column
    let p = pattern(3, &[(0, 0), (1, 0), (2, 1), (2, 2)]);
    assert!(p.blocks.is_none());
    let (row_col, _) = p.max_matching();
    assert_eq!(row_col.iter().filter(|&&c| c != usize::MAX).count(), 2);
}

#[test]
fn a_zero_pivot_block_is_refused() {
    let p = pattern(2, &[(0, 0), (0, 1), (1, 0), (1, 1)]);
    let mut lu = Lu::default();
    assert!(lu.factor(&p, &[1.0, 2.0, 2.0, 4.0], Method::Blocks).is_err());
    let blocks = p.blocks.as_ref().expect("structurally regular");
    assert!(lu.solve_transpose_inward(blocks, &[1.0, 2.0, 2.0, 4.0], &mut [1.0, 1.0]).is_err());
    // nearly singular: a solution of 1e15 for a right-hand side of 1, which the pass
    // measures (the kinetostatics refuse a condition bound above 1e13)
    let m = lu.solve_transpose_inward(blocks, &[1.0, 2.0, 2.0, 4.0 + 1e-15 * 4.0], &mut [1.0, 0.0]).expect("regular");
    assert!(4.0 * m.solution > 1e14, "{m:?}");
}

/// A right-hand side solved over the blocks it reaches (`Blocks::downstream`,
/// `Lu::solve_reached`) gives the whole substitution's solution, 0 outside them; a leaf's
/// right-hand side reaches its own block only, the root's every block.
#[test]
fn a_solve_over_the_reached_blocks_is_the_whole_solve() {
    // four 2 x 2 blocks in a tree: 1 and 3 read 0, 2 reads 1 (block k: rows and columns
    // 2k, 2k + 1)
    let mut entries: Vec<(usize, usize)> =
        (0..4).flat_map(|k| (0..4).map(move |i| (2 * k + i / 2, 2 * k + i % 2))).collect();
    entries.extend([(2, 0), (3, 1), (4, 3), (6, 1)]);
    let p = pattern(8, &entries);
    let blocks = p.blocks.as_ref().expect("block-triangular");
    assert_eq!(blocks.len(), 4);
    let mut lu = Lu::default();
    lu.factor(&p, &values(&p), Method::Blocks).expect("regular");
    let (mut mark, mut reached) = (vec![false; 4], Vec::new());
    for (row, reach) in [(0, 4), (1, 4), (2, 2), (5, 1), (7, 1)] {
        let mut whole = vec![0.0; 8];
        whole[row] = 1.0 + row as f64;
        let mut part = whole.clone();
        lu.solve(&p, MatMut::from_column_major_slice_mut(&mut whole, 8, 1), false);
        blocks.downstream([row].into_iter(), &mut mark, &mut reached);
        assert_eq!(reached.len(), reach, "row {row}");
        lu.solve_reached(blocks, &reached, &mut part);
        assert_eq!(part, whole, "row {row}");
        assert_eq!(whole.iter().filter(|v| **v != 0.0).count(), 2 * reach, "row {row}");
        assert!(mark.iter().all(|m| !m));
    }
}

/// The assembly's split scatter (each slot's first entry set, the others added) gives the bits of
/// zeroing and adding every entry in order, with repeated entries and a negative zero.
#[test]
fn an_assembly_without_zeroing_is_the_sums() {
    // (gradient index, row, col): (0, 0) three times, (1, 1) twice, one entry -0.0
    let entries = vec![(0, 0, 0), (1, 1, 1), (2, 0, 0), (3, 0, 1), (4, 1, 1), (5, 0, 0), (6, 1, 0)];
    let de = [0.1, -0.0, 0.2, -0.0, 0.0, 0.3, 1e-17];
    let p = Pattern::new(2, 2, entries.clone(), Vec::new());
    let (keys, ..) = csc(2, entries.iter().map(|&(_, r, c)| (r, c)));
    let mut want = vec![0.0; keys.len()];
    for &(src, r, c) in &entries {
        want[keys.binary_search(&(c, r)).expect("key")] += de[src];
    }
    let mut got = vec![f64::NAN; keys.len()];
    p.assemble(&de, &mut got);
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
    assert_eq!((p.scatter_first.len(), p.scatter_more.len()), (4, 3));
}

/// A pseudo-random sequence in [-1, 1) (a linear congruential generator, fixed start).
struct Uniform(u64);

impl Uniform {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
}

/// `Aᵀ y = t` by the dense LU with pivoting (the inward pass's other way), `y` by row.
fn lu_transposed(a: &[f64], t: &[f64]) -> Vec<f64> {
    let (mut f, mut piv, mut v) = (a.to_vec(), vec![0; 4], t.to_vec());
    assert!(lu_in_place(&mut f, 4, &mut piv));
    lu_solve_transpose(&f, 4, &mut v);
    let mut y = vec![0.0; 4];
    for (vi, &p) in v.iter().zip(&piv) {
        y[p] = *vi;
    }
    y
}

#[test]
fn a_hinge_block_in_closed_form_is_the_lu_solution() {
    let mut rnd = Uniform(7);
    for case in 0..2000 {
        // a unit λ and a hinge's rows C G(λ) (C well away from singular), the norm's 2λᵀ, in
        // some row order; every fourth block a general one
        let mut l = [rnd.next(), rnd.next(), rnd.next(), rnd.next()];
        let norm = l.iter().map(|v| v * v).sum::<f64>().sqrt();
        l.iter_mut().for_each(|v| *v /= norm);
        let g = [[-l[1], l[0], -l[3], l[2]], [-l[2], l[3], l[0], -l[1]], [-l[3], -l[2], l[1], l[0]]];
        let mut rows: Vec<[f64; 4]> = (0..3)
            .map(|i| {
                let c: Vec<f64> = (0..3).map(|k| if i == k { 2.0 } else { 0.0 } + 0.5 * rnd.next()).collect();
                std::array::from_fn(|j| (0..3).map(|k| c[k] * g[k][j]).sum())
            })
            .collect();
        rows.insert(case % 4, l.map(|v| 2.0 * v));
        if case % 4 == 3 {
            rows.iter_mut().flatten().for_each(|v| *v = rnd.next());
        }
        let a: Vec<f64> = rows.concat();
        let t = [rnd.next(), rnd.next(), rnd.next(), rnd.next()];
        let Some(y) = quaternion::solve_transpose(&a, &t) else {
            assert_eq!(case % 4, 3, "a hinge's block left to the LU");
            continue;
        };
        let lu = lu_transposed(&a, &t);
        let big = lu.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (p, q) in y.iter().zip(&lu) {
            assert!((p - q).abs() < 1e-11 * big, "case {case}: {y:?} against the LU's {lu:?}");
        }
    }
    // a singular block (two rows alike) is left to the LU, which refuses it
    let a = [1.0, 2.0, 0.5, 0.0, 0.0, 1.0, 0.0, 3.0, 1.0, 2.0, 0.5, 0.0, 0.2, 0.0, 1.0, 0.0];
    assert!(quaternion::solve_transpose(&a, &[1.0, 0.0, 0.0, 0.0]).is_none());
    let nan = [f64::NAN; 16];
    assert!(quaternion::solve_transpose(&nan, &[1.0, 0.0, 0.0, 0.0]).is_none());
}
