//! Well-posedness of the position problem: is `D_cc` square and nonsingular, and if not, which
//! element modes and nodal coordinates are involved (SVD, as SPACAR's constraint check).
//!
//! A large square `D_cc` (above 500 x 500) is first factored by the sparse LU, linear in the size
//! of a mechanism: if that succeeds with a well-conditioned probe solve, the model is well posed
//! and no SVD is needed. The SVD below is for the models found singular, up to 4000 x 4000; above
//! that the structural rank (a maximum matching over the sparsity pattern) says how many
//! equations and unknowns are left over and which.
//!
//! With the rows and columns of `D_cc` equilibrated (each scaled by its largest entry, so lengths
//! and angles compare), the singular values below `1e-8 · s_max` count as zero. Then:
//! - `over = rows − rank` constraint equations are redundant. A fixed mode *participates* in the
//!   redundancy when its row has a component in the left null space; releasing any participating
//!   mode removes one redundancy.
//! - `under = cols − rank` motions are free. A coordinate participates when it has a component
//!   in the right null space: it can move without violating any constraint (to first order).

use faer::Mat;

use crate::algorithm::evaluate::evaluate;
use crate::data::Data;
use crate::element::Order;
use crate::ids::{CoordId, ModeId};
use crate::model::Model;

pub use crate::algorithm::well_posed::{Involved, WellPosedness, release_advice};
/// Dense SVD is used up to this many matrix entries (a 4000 x 4000 `D_cc`).
const DENSE_LIMIT: usize = 16_000_000;
/// Above this many entries a square `D_cc` is first tried with the sparse LU (linear in the size
/// of a mechanism); the SVD is left for the models it finds singular.
const LU_FIRST: usize = 250_000;
/// Largest condition number (lower bound `|A| |v| / |b|` of a probe solve) the sparse-LU path
/// accepts as full rank; the SVD's threshold is `1e-8 s_max` after equilibration.
const LU_CONDITION: f64 = 1e10;

/// Check well-posedness at the configuration in `data` (the initial one for a new [`Data`]).
pub fn well_posedness(model: &Model, data: &mut Data) -> WellPosedness {
    let (rows, cols) = (model.n_equations(), model.n_unknowns());
    let mut w = WellPosedness {
        dof: model.n_q(),
        equations: rows,
        unknowns: cols,
        rank: None,
        over: rows.saturating_sub(cols),
        under: cols.saturating_sub(rows),
        redundant: Vec::new(),
        free: Vec::new(),
        floating_parts: model
            .topology()
            .floating_parts()
            .map(|p| p.nodes.iter().map(|n| model.nodes()[n.index()].name.clone()).collect())
            .collect(),
        note: None,
    };
    if let Err(e) = evaluate(model, data, Order::Gradient) {
        w.note = Some(format!("could not evaluate the elements: {e}"));
        return w;
    }
    if rows * cols > LU_FIRST && rows == cols && full_rank_by_lu(model, data) {
        w.rank = Some(rows);
        return w;
    }
    if rows * cols > DENSE_LIMIT {
        structural(model, &mut w);
        return w;
    }
    if rows == 0 || cols == 0 {
        w.rank = Some(0);
        w.redundant = (0..rows).map(|r| involved_mode(model, r, 1.0)).collect();
        w.free = model
            .dependent_coords
            .iter()
            .map(|&c| Involved { name: model.coord_name(CoordId::new(c)), weight: 1.0 })
            .collect();
        return w;
    }
    let mut d = Mat::<f64>::zeros(rows, cols);
    for &(src, r, c) in &model.pattern.entries {
        d[(r, c)] += data.de[src];
    }
    // equilibrate rows, then columns
    for r in 0..rows {
        let s = (0..cols).map(|c| d[(r, c)].abs()).fold(0.0, f64::max);
        if s > 0.0 {
            for c in 0..cols {
                d[(r, c)] /= s;
            }
        }
    }
    for c in 0..cols {
        let s = (0..rows).map(|r| d[(r, c)].abs()).fold(0.0, f64::max);
        if s > 0.0 {
            for r in 0..rows {
                d[(r, c)] /= s;
            }
        }
    }
    let svd = match d.svd() {
        Ok(s) => s,
        Err(e) => {
            w.note = Some(format!("SVD failed: {e:?}"));
            return w;
        }
    };
    let s = svd.S().column_vector();
    let smax = (0..s.nrows()).map(|i| s[i]).fold(0.0, f64::max);
    let rank = (0..s.nrows()).filter(|&i| s[i] > 1e-8 * smax).count();
    w.rank = Some(rank);
    w.over = rows - rank;
    w.under = cols - rank;
    let u = svd.U();
    let v = svd.V();
    w.redundant = participation(rows, rank, |i, k| u[(i, k)])
        .into_iter()
        .map(|(r, weight)| involved_mode(model, r, weight))
        .collect();
    w.free = participation(cols, rank, |i, k| v[(i, k)])
        .into_iter()
        .map(|(c, weight)| Involved { name: model.coord_name(CoordId::new(model.dependent_coords[c])), weight })
        .collect();
    w
}

/// A large square `D_cc` factored by the sparse LU: full rank when the factorization succeeds
/// and a probe solve is finite, accurate and not ill-conditioned.
fn full_rank_by_lu(model: &Model, data: &mut Data) -> bool {
    crate::algorithm::evaluate::assemble(model, data);
    if data.lu.factor(&model.pattern, &data.dcc, crate::linalg::sparse::Method::Sparse).is_err() {
        return false;
    }
    let n = model.n_unknowns();
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    let mut v = Mat::from_fn(n, 1, |i, _| b[i]);
    data.lu.solve(&model.pattern, v.as_mut(), false);
    let v: Vec<f64> = (0..n).map(|i| v[(i, 0)]).collect();
    let ok = crate::algorithm::evaluate::solution_ok(model, data, &v, &b, false, LU_CONDITION);
    data.lu.valid = false;
    ok
}

/// The structural rank of `D_cc` by a maximum matching of rows to columns over its pattern (for
/// models too large for the SVD): an unmatched row is an equation no unknown is left for, an
/// unmatched column an unknown no equation holds. Structural rank bounds the numerical rank from
/// above, so a full structural rank with a failed factorization is reported as singular.
fn structural(model: &Model, w: &mut WellPosedness) {
    let p = &model.pattern;
    let (rows, cols) = (p.n_rows, p.n_cols);
    let (row_col, _) = p.max_matching();
    let rank = row_col.iter().filter(|&&c| c != usize::MAX).count();
    w.rank = Some(rank);
    w.over = rows - rank;
    w.under = cols - rank;
    // which rows and columns a matching leaves over is not the shape of the redundancy or the
    // free motion: the lists stay empty rather than name the wrong modes
    w.note = Some(if rank == rows && rows == cols {
        format!(
            "D_cc ({rows} x {cols}) has full structural rank but is singular at this configuration; it is too large \
             for the SVD that would name the modes involved"
        )
    } else {
        format!(
            "D_cc ({rows} x {cols}) has structural rank {rank} (from its sparsity pattern): {} equation(s) and {} \
             unknown(s) left over; it is too large for the SVD that would name the modes and coordinates involved",
            rows - rank,
            cols - rank
        )
    });
}

fn involved_mode(model: &Model, row: usize, weight: f64) -> Involved {
    Involved { name: model.mode_name(ModeId::new(model.rows[row])), weight }
}

/// `(index, Σ_k basis(i, k)²)` over the null-space columns `rank..n`, above 1e-6, largest first.
fn participation(n: usize, rank: usize, basis: impl Fn(usize, usize) -> f64) -> Vec<(usize, f64)> {
    let mut p: Vec<(usize, f64)> =
        (0..n).map(|i| (i, (rank..n).map(|k| basis(i, k).powi(2)).sum::<f64>())).filter(|&(_, w)| w > 1e-6).collect();
    p.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    p
}
