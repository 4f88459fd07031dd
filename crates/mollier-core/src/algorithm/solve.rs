//! `D_cc` factored and solved: a singular `D_cc` explained by the well-posedness diagnostics.

use faer::MatMut;

use crate::algorithm::diagnostics::well_posedness;
use crate::algorithm::error::KinematicsError;
use crate::algorithm::evaluate::{assemble, evaluate_constraints, solution_ok_in};
use crate::algorithm::local::all_finite;
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
    if !(data.solved && data.lu.valid) {
        return Err(KinematicsError::NotSolved);
    }
    solve_finite(model, data, rhs, true)
}
