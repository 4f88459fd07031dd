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

use std::fmt;

use faer::Mat;

use crate::data::Data;
use crate::element::Order;
use crate::ids::{CoordId, ModeId};
use crate::kinematics::evaluate;
use crate::model::Model;

/// A mode or coordinate involved in a defect, with its share (0..1] of the null space.
#[derive(Clone, Debug, PartialEq)]
pub struct Involved {
    /// `element.mode` or `node.axis`.
    pub name: String,
    /// Participation in the null space, summed over its basis vectors.
    pub weight: f64,
}

/// The verdict on a model's position problem at one configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct WellPosedness {
    /// Generalized coordinates (inputs): `n_xm + n_em`.
    pub dof: usize,
    /// Constraint equations `n_eo + n_em` (rows of `D_cc`).
    pub equations: usize,
    /// Dependent coordinates `n_xc` (columns of `D_cc`).
    pub unknowns: usize,
    /// Numerical rank of `D_cc` (when it was computed).
    pub rank: Option<usize>,
    /// Redundant equations.
    pub over: usize,
    /// Free motions.
    pub under: usize,
    /// Fixed or input modes whose release would remove a redundancy, largest share first.
    pub redundant: Vec<Involved>,
    /// Coordinates that move in a free motion, largest share first.
    pub free: Vec<Involved>,
    /// Names of the nodes of each part not tied to the ground.
    pub floating_parts: Vec<Vec<String>>,
    /// Why the SVD was not done, if it was not.
    pub note: Option<String>,
}

impl WellPosedness {
    /// `true` when `D_cc` is square and of full rank.
    pub fn is_well_posed(&self) -> bool {
        self.over == 0 && self.under == 0 && self.equations == self.unknowns && self.note.is_none()
    }

    /// One line per finding, for people.
    pub fn messages(&self) -> Vec<String> {
        let mut out = Vec::new();
        let list = |v: &[Involved]| {
            let mut s: Vec<String> = v.iter().take(16).map(|i| format!("{} ({:.2})", i.name, i.weight)).collect();
            if v.len() > 16 {
                s.push(format!("and {} more", v.len() - 16));
            }
            s.join(", ")
        };
        if self.equations != self.unknowns {
            out.push(format!(
                "{} constraint equations (fixed + input modes) for {} dependent coordinates: {}",
                self.equations,
                self.unknowns,
                if self.equations > self.unknowns { "too many constraints" } else { "too few constraints or inputs" }
            ));
        }
        if self.over > 0 {
            let singular = self.equations == self.unknowns;
            out.push(format!(
                "over-constrained by {}{}: {}: {}",
                self.over,
                if singular { " (dependent constraints at this configuration)" } else { "" },
                release_advice(self.over),
                list(&self.redundant)
            ));
        }
        if self.under > 0 {
            out.push(format!(
                "under-constrained by {}: {} free motion{} not fixed by any input or constraint, moving: {}",
                self.under,
                self.under,
                if self.under == 1 { "" } else { "s" },
                list(&self.free)
            ));
        }
        for p in &self.floating_parts {
            out.push(format!("part not connected to the ground: {}", p.join(", ")));
        }
        if let Some(n) = &self.note {
            out.push(n.clone());
        }
        out
    }
}

/// How many of the listed modes to release: with one redundancy any of them restores the
/// rank; with more, a set restores it only if it removes every redundancy.
pub fn release_advice(over: usize) -> String {
    if over == 1 {
        "release any one of these modes".into()
    } else {
        format!(
            "release {over} of these modes, one per redundancy (not every set of {over} does it: a set that removes \
             the same redundancy twice leaves another, and the check says so)"
        )
    }
}

impl WellPosedness {
    /// The analysis with only the modes a user can release in its list of redundant ones: the
    /// modes of generated elements (the rigid beams that join a body's points, the Euler
    /// parameters' norms) cannot be, so they are left out, and a note says when only they take
    /// part.
    pub fn releasable(&self, model: &Model) -> WellPosedness {
        let generated: std::collections::HashSet<&str> = (0..model.n_elements())
            .map(crate::ids::ElementId::new)
            .filter(|&e| model.is_internal(e))
            .map(|e| model.element_name(e))
            .collect();
        let mut shown = self.clone();
        shown.redundant.retain(|i| i.name.rsplit_once('.').is_none_or(|(el, _)| !generated.contains(el)));
        if shown.over > 0 && shown.redundant.is_empty() && !self.redundant.is_empty() {
            shown.note = Some(
                "only the rigid joins of bodies' points take part in the redundancy: a point is joined to two \
                 bodies, or two bodies are joined rigidly twice; join each point to one body"
                    .into(),
            );
        }
        shown
    }
}

impl fmt::Display for WellPosedness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_well_posed() {
            write!(f, "well posed: {} degrees of freedom", self.dof)
        } else {
            write!(f, "not well posed: {}", self.messages().join("; "))
        }
    }
}

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
    crate::kinematics::assemble(model, data);
    if data.lu.factor(&model.pattern, &data.dcc, crate::sparse::Method::Sparse).is_err() {
        return false;
    }
    let n = model.n_unknowns();
    let b: Vec<f64> = (0..n).map(|i| 1.0 + (i % 7) as f64).collect();
    let mut v = Mat::from_fn(n, 1, |i, _| b[i]);
    data.lu.solve(&model.pattern, v.as_mut(), false);
    let v: Vec<f64> = (0..n).map(|i| v[(i, 0)]).collect();
    let ok = crate::kinematics::solution_ok(model, data, &v, &b, false, LU_CONDITION);
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
