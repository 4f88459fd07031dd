//! Small dense LU with partial pivoting on caller-owned, row-major storage: no allocation, for
//! the diagonal blocks of `D_cc` and the few-unknown systems of a time step.

/// LU with partial pivoting of the row-major `n x n` matrix `a` in place: `P a = L U`, `L` unit
/// lower (below the diagonal), `U` on and above; `perm[i]` is the original row now at `i`.
/// `false` when a pivot column is exactly zero.
pub fn lu_in_place(a: &mut [f64], n: usize, perm: &mut [usize]) -> bool {
    match n {
        3 => factor_rows(&mut a[..9], 3, &mut perm[..3]),
        4 => factor_rows(&mut a[..16], 4, &mut perm[..4]),
        8 => factor_rows(&mut a[..64], 8, &mut perm[..8]),
        _ => factor_rows(a, n, perm),
    }
}

#[inline(always)]
fn factor_rows(a: &mut [f64], n: usize, perm: &mut [usize]) -> bool {
    for (i, p) in perm.iter_mut().enumerate() {
        *p = i;
    }
    for k in 0..n {
        let mut p = k;
        for i in k + 1..n {
            if a[i * n + k].abs() > a[p * n + k].abs() {
                p = i;
            }
        }
        if a[p * n + k] == 0.0 {
            return false;
        }
        if p != k {
            for j in 0..n {
                a.swap(k * n + j, p * n + j);
            }
            perm.swap(k, p);
        }
        let d = a[k * n + k];
        let (top, rest) = a.split_at_mut((k + 1) * n);
        let pivot_row = &top[k * n..];
        for row in rest.chunks_exact_mut(n) {
            let l = row[k] / d;
            row[k] = l;
            if l != 0.0 {
                for (x, u) in row[k + 1..].iter_mut().zip(&pivot_row[k + 1..]) {
                    *x -= l * u;
                }
            }
        }
    }
    true
}

/// `$f(a, n, t)` with `n` a constant for 3 x 3, 4 x 4 and 8 x 8, so that the compiler unrolls it
/// (a macro: the solve passed to a function as `impl Fn` was not inlined for the transpose,
/// 465 instructions for a 4 x 4).
macro_rules! sized {
    ($f:ident, $a:expr, $n:expr, $t:expr) => {
        match $n {
            3 => $f(&$a[..9], 3, &mut $t[..3]),
            4 => $f(&$a[..16], 4, &mut $t[..4]),
            8 => $f(&$a[..64], 8, &mut $t[..8]),
            n => $f($a, n, $t),
        }
    };
}

/// Solve `L U x = t` in place (`t` already permuted by the pivots). Rows as slices, and a
/// 4 x 4 block (a body's orientation in a chain) or an 8 x 8 one (a frame's position and
/// orientation: three of the shoulder's eight blocks) with its size known to the compiler: the
/// same operations in the same order, unrolled.
pub fn lu_solve(a: &[f64], n: usize, t: &mut [f64]) {
    sized!(solve_rows, a, n, t);
}

#[inline(always)]
fn solve_rows(a: &[f64], n: usize, t: &mut [f64]) {
    let (a, t) = (&a[..n * n], &mut t[..n]);
    for i in 1..n {
        let (done, rest) = t.split_at_mut(i);
        let s: f64 = a[i * n..i * n + i].iter().zip(&*done).map(|(x, y)| x * y).sum();
        rest[0] -= s;
    }
    for i in (0..n).rev() {
        let (head, tail) = t.split_at_mut(i + 1);
        let row = &a[i * n..(i + 1) * n];
        let s: f64 = row[i + 1..].iter().zip(&*tail).map(|(x, y)| x * y).sum();
        head[i] = (head[i] - s) / row[i];
    }
}

/// Solve `Uᵀ Lᵀ z = t` in place: `z = P y` for `Aᵀ y = t`.
pub fn lu_solve_transpose(a: &[f64], n: usize, t: &mut [f64]) {
    sized!(solve_columns, a, n, t);
}

#[inline(always)]
fn solve_columns(a: &[f64], n: usize, t: &mut [f64]) {
    let (a, t) = (&a[..n * n], &mut t[..n]);
    for i in 0..n {
        let s: f64 = (0..i).map(|k| a[k * n + i] * t[k]).sum();
        t[i] = (t[i] - s) / a[i * n + i];
    }
    for i in (0..n.saturating_sub(1)).rev() {
        let s: f64 = (i + 1..n).map(|k| a[k * n + i] * t[k]).sum();
        t[i] -= s;
    }
}

/// [`lu_solve`] for `k` right-hand sides side by side: `t` is n x k, row-major (row `i` holds
/// the `k` values of unknown `i`), already permuted; `sums` (k) to work in. Each column's numbers
/// come from the same operations in the same order as [`lu_solve`] gives them (sums folded from
/// `-0.0`, as `Iterator::sum`), so the same bits; the work runs along the rows, `k` at a time.
pub fn lu_solve_many(a: &[f64], n: usize, t: &mut [f64], k: usize, sums: &mut [f64]) {
    let (a, t, sums) = (&a[..n * n], &mut t[..n * k], &mut sums[..k]);
    for i in 1..n {
        sums.fill(-0.0);
        for (j, &l) in a[i * n..i * n + i].iter().enumerate() {
            add_scaled(sums, l, &t[j * k..(j + 1) * k]);
        }
        for (v, s) in t[i * k..(i + 1) * k].iter_mut().zip(&*sums) {
            *v -= s;
        }
    }
    for i in (0..n).rev() {
        sums.fill(-0.0);
        let row = &a[i * n..(i + 1) * n];
        for (j, &u) in row.iter().enumerate().skip(i + 1) {
            add_scaled(sums, u, &t[j * k..(j + 1) * k]);
        }
        for (v, s) in t[i * k..(i + 1) * k].iter_mut().zip(&*sums) {
            *v = (*v - s) / row[i];
        }
    }
}

/// [`lu_solve_transpose`] for `k` right-hand sides side by side, as [`lu_solve_many`].
pub fn lu_solve_transpose_many(a: &[f64], n: usize, t: &mut [f64], k: usize, sums: &mut [f64]) {
    let (a, t, sums) = (&a[..n * n], &mut t[..n * k], &mut sums[..k]);
    for i in 0..n {
        sums.fill(-0.0);
        for j in 0..i {
            add_scaled(sums, a[j * n + i], &t[j * k..(j + 1) * k]);
        }
        let d = a[i * n + i];
        for (v, s) in t[i * k..(i + 1) * k].iter_mut().zip(&*sums) {
            *v = (*v - s) / d;
        }
    }
    for i in (0..n.saturating_sub(1)).rev() {
        sums.fill(-0.0);
        for j in i + 1..n {
            add_scaled(sums, a[j * n + i], &t[j * k..(j + 1) * k]);
        }
        for (v, s) in t[i * k..(i + 1) * k].iter_mut().zip(&*sums) {
            *v -= s;
        }
    }
}

/// `sums += c x`, entry by entry.
#[inline(always)]
fn add_scaled(sums: &mut [f64], c: f64, x: &[f64]) {
    for (s, v) in sums.iter_mut().zip(x) {
        *s += c * v;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `A (1, 2, 3) = (7, 3, 0)` and `Aᵀ (1, 2, 3) = (11, 4, −2)`, with a zero first pivot.
    #[test]
    fn solves_and_transposed_solves() {
        let a0 = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, -1.0];
        let mut a = a0;
        let mut perm = [0; 3];
        assert!(lu_in_place(&mut a, 3, &mut perm));
        let b = [7.0, 3.0, 0.0];
        let mut t: Vec<f64> = perm.iter().map(|&p| b[p]).collect();
        lu_solve(&a, 3, &mut t);
        assert!(t.iter().zip([1.0, 2.0, 3.0]).all(|(x, w)| (x - w).abs() < 1e-14), "{t:?}");
        // Aᵀ y = c: z = P y from the transposed solve
        let mut z = vec![11.0, 4.0, -2.0];
        lu_solve_transpose(&a, 3, &mut z);
        let mut y = [0.0; 3];
        for (i, &p) in perm.iter().enumerate() {
            y[p] = z[i];
        }
        assert!(y.iter().zip([1.0, 2.0, 3.0]).all(|(x, w)| (x - w).abs() < 1e-14), "{y:?}");
        // a zero column is singular
        let mut s = [1.0, 0.0, 2.0, 0.0];
        assert!(!lu_in_place(&mut s, 2, &mut [0; 2]));
    }

    /// The solves of several right-hand sides side by side give each column the bits of its solve
    /// alone, on the sizes the compiler unrolls and others (zeros among the values, so that the
    /// signs of zero sums count too), and solve the system (the residual).
    #[test]
    fn many_right_hand_sides_solve_as_each_alone() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let v = (seed % 2001) as f64 / 1000.0 - 1.0;
            if seed % 7 == 0 { 0.0 } else { v }
        };
        for n in 1..=9 {
            for k in [1, 2, 5, 9] {
                let a0: Vec<f64> = (0..n * n).map(|i| next() + if i % (n + 1) == 0 { 4.0 } else { 0.0 }).collect();
                let mut a = a0.clone();
                let mut perm = vec![0; n];
                assert!(lu_in_place(&mut a, n, &mut perm));
                let b: Vec<f64> = (0..n * k).map(|_| next()).collect();
                let mut sums = vec![0.0; k];
                for transpose in [false, true] {
                    let mut t = b.clone();
                    if transpose {
                        lu_solve_transpose_many(&a, n, &mut t, k, &mut sums);
                    } else {
                        lu_solve_many(&a, n, &mut t, k, &mut sums);
                    }
                    for c in 0..k {
                        let mut col: Vec<f64> = (0..n).map(|i| b[i * k + c]).collect();
                        if transpose {
                            lu_solve_transpose(&a, n, &mut col);
                        } else {
                            lu_solve(&a, n, &mut col);
                        }
                        for i in 0..n {
                            assert_eq!(t[i * k + c].to_bits(), col[i].to_bits(), "n {n} k {k} {transpose} ({i}, {c})");
                        }
                        if !transpose {
                            // P A x = L U x = the permuted right-hand side: A x = b at the rows perm
                            for (i, &p) in perm.iter().enumerate() {
                                let ax: f64 = (0..n).map(|j| a0[p * n + j] * col[j]).sum();
                                assert!((ax - b[i * k + c]).abs() < 1e-12, "residual n {n} k {k}");
                            }
                        }
                    }
                }
            }
        }
    }
}
