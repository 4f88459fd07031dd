//! `D_cc` factored and solved: a singular `D_cc` explained by the well-posedness diagnostics.

use faer::MatMut;

use crate::algorithm::diagnostics::well_posedness;
use crate::algorithm::error::KinematicsError;
use crate::algorithm::evaluate::{assemble, backward_ok, evaluate_constraints, solution_ok_in};
use crate::algorithm::local::{all_finite, max_abs};
use crate::data::Data;
use crate::element::Order;
use crate::linalg::sparse::Method;
use crate::model::Model;
/// Evaluate, assemble and factor `D_cc` at the current `x` by `method`. On a singular matrix,
/// the error carries the SVD diagnostics.
pub(crate) fn factor(model: &Model, data: &mut Data, method: Method) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, Order::Gradient)?;
    if !model.is_square() {
        return Err(not_well_posed(model, data));
    }
    assemble(model, data);
    if data.lu.factor(&model.pattern, &data.dcc, method).is_err() {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Factor `D_cc` at the solution and probe the factors: the block LU refuses only an exactly zero
/// pivot, so one solve of a fixed right-hand side, checked, shows a singular or ill-conditioned
/// `D_cc` once, and every later solve at this configuration uses the factors unchecked.
pub(crate) fn factor_probed(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    factor(model, data, Method::Blocks)?;
    let n = model.n_unknowns();
    let mut probe = std::mem::take(&mut data.work.c_rhs);
    probe.resize(n, 0.0);
    for (i, v) in probe.iter_mut().enumerate() {
        *v = 1.0 + (i % 7) as f64;
    }
    let checked = solve_checked(model, data, MatMut::from_column_major_slice_mut(&mut probe, n, 1));
    data.work.c_rhs = probe;
    checked
}

/// The factors of `D_cc` at the solved configuration, made now where the position solve left
/// them due (the tree path's, [`Data::factors_due`]); nothing where they are there.
pub(crate) fn ensure_factors(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    if data.factors_due && data.solved {
        data.factors_due = false;
        factor_probed(model, data)?;
    }
    Ok(())
}

pub(crate) fn not_well_posed(model: &Model, data: &mut Data) -> KinematicsError {
    // a failed solve names only the modes a user can release
    KinematicsError::NotWellPosed(Box::new(well_posedness(model, data).releasable(model)))
}

/// Solve `D_cc v = rhs` in place with the current factors and check the solution: a singular
/// `D_cc` shows as a non-finite or inaccurate solution, since the sparse LU does not report it.
pub(crate) fn solve_checked(model: &Model, data: &mut Data, rhs: MatMut<'_, f64>) -> Result<(), KinematicsError> {
    let mut rhs = rhs;
    let n = model.n_unknowns();
    let (mut b, mut y) = (std::mem::take(&mut data.work.c_b), std::mem::take(&mut data.work.c_y));
    b.clear();
    for j in 0..rhs.ncols() {
        b.extend_from_slice(rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut());
    }
    data.lu.solve(&model.pattern, rhs.as_mut(), false);
    let mut ok = true;
    for j in 0..rhs.ncols() {
        let v = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
        ok = ok && solution_ok_in(model, data, v, &b[j * n..(j + 1) * n], false, 1e13, &mut y);
    }
    data.work.c_b = b;
    data.work.c_y = y;
    if !ok {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Solve `D_cc v = rhs` in place for many right-hand sides with factors that were already checked
/// at this configuration (by the probe at convergence); only finiteness is verified.
pub(crate) fn solve_unchecked(model: &Model, data: &mut Data, rhs: MatMut<'_, f64>) -> Result<(), KinematicsError> {
    ensure_factors(model, data)?;
    if rhs.ncols() > crate::linalg::sparse::MANY_COLUMNS && data.lu.add_sparse(&model.pattern, &data.dcc).is_err() {
        return Err(not_well_posed(model, data));
    }
    solve_finite(model, data, rhs, false)
}

/// [`solve_unchecked`] for right-hand sides of the transfer functions, column `j` moving the
/// blocks `reached(j, list)` writes into `list` (ascending; [`crate::model::topology::Reach`]):
/// on the model's tree path each column is solved over those blocks only
/// ([`crate::linalg::sparse::Lu::solve_reached`]), else all together as [`solve_unchecked`]
/// solves them. The same numbers either way.
pub(crate) fn solve_reached(
    model: &Model,
    data: &mut Data,
    rhs: MatMut<'_, f64>,
    mut reached: impl FnMut(usize, &mut Vec<usize>),
) -> Result<(), KinematicsError> {
    ensure_factors(model, data)?;
    let blocks = match (&model.reach, &model.pattern.blocks) {
        (Some(_), Some(blocks)) if data.tree_path && data.lu.has_block_factors() => blocks,
        _ => return solve_unchecked(model, data, rhs),
    };
    let mut rhs = rhs;
    let mut list = std::mem::take(&mut data.work.reached);
    let mut finite = true;
    for j in 0..rhs.ncols() {
        let col = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
        reached(j, &mut list);
        data.lu.solve_reached(blocks, &list, col);
        finite = finite && all_finite(col);
    }
    data.work.reached = list;
    if !finite {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Solve with the current factors, verifying only that the solution is finite.
pub(crate) fn solve_finite(
    model: &Model,
    data: &mut Data,
    rhs: MatMut<'_, f64>,
    transpose: bool,
) -> Result<(), KinematicsError> {
    let mut rhs = rhs;
    data.lu.solve(&model.pattern, rhs.as_mut(), transpose);
    let finite = |j: usize| {
        let c = rhs.as_ref().col(j);
        c.try_as_col_major().map_or_else(|| c.iter().all(|v| v.is_finite()), |c| all_finite(c.as_slice()))
    };
    if !(0..rhs.ncols()).all(finite) {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Solve `D_ccᵀ v = rhs` in place (kinetostatics) with the factors probed at convergence (the
/// transpose has the same condition); only finiteness is verified.
pub(crate) fn solve_transpose_checked(
    model: &Model,
    data: &mut Data,
    rhs: MatMut<'_, f64>,
) -> Result<(), KinematicsError> {
    ensure_factors(model, data)?;
    if !(data.solved && data.lu.valid) {
        return Err(KinematicsError::NotSolved);
    }
    solve_finite(model, data, rhs, true)
}

/// Solve `D_ccᵀ v = rhs` in place (n_unknowns) for the stresses of kinetostatics. Where the tree
/// path's position solve left the factors due, by the inward pass over `D_cc`'s blocks from the
/// leaves ([`crate::linalg::sparse::Lu::solve_transpose_inward`]; no factorization of the whole
/// matrix, no probe solve), its solution held to the probe's test (backward error and a
/// condition bound of 1e13) against `D_cc` itself, measured by the pass; else as
/// [`solve_transpose_checked`].
/// [`Data::forces_by_recursion`] says which.
pub(crate) fn solve_transpose_forces(model: &Model, data: &mut Data, rhs: &mut [f64]) -> Result<(), KinematicsError> {
    data.forces_by_recursion = false;
    let blocks = match &model.pattern.blocks {
        Some(blocks) if data.factors_due && data.solved => blocks,
        _ => {
            let n = rhs.len();
            return solve_transpose_checked(model, data, MatMut::from_column_major_slice_mut(rhs, n, 1));
        }
    };
    // the joints' gradients, where the tree path's acceptance left them due
    evaluate_constraints(model, data, Order::Gradient)?;
    assemble(model, data);
    let bn = max_abs(rhs);
    let ok = match data.lu.solve_transpose_inward(blocks, &data.dcc, rhs) {
        Ok(m) => m.finite && backward_ok(m.error, bn, max_abs(&data.dcc) * m.solution, 1e13),
        Err(_) => false,
    };
    if !ok {
        return Err(not_well_posed(model, data));
    }
    data.forces_by_recursion = true;
    Ok(())
}
