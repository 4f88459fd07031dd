//! First- and second-order geometric transfer functions (seed 001, eq. 3-5) and the velocities
//! and accelerations they give (eq. 7-8).
//!
//! Differentiating `D^{(o,m)}(x) = (e^o_0, e^m)` once and twice at a solved configuration:
//! ```text
//! D_cc DF^x_c = [ −D_cm | (0; I_em) ]                   (n_xc x n_q)
//! D_cc (∂²x_c/∂q_i∂q_j) = −[ DF_iᵀ (∂²e_r/∂x²) DF_j ]_r  (one right-hand side per pair i <= j)
//! DF^e = D DF^x,   ∂²e/∂q_i∂q_j = D (∂²x/∂q_i∂q_j) + DF_iᵀ (∂²e/∂x²) DF_j
//! ```
//! All solves reuse the factorization of `D_cc` made by [`crate::solve_positions`].
//! [`velocities`] and [`accelerations`] contract with `q̇` before solving, so they cost one solve
//! each and grow linearly with the model, whatever `n_q` is.

use faer::Mat;

use crate::data::{Data, n_pairs, pair_index};
use crate::element::Order;
use crate::kinematics::{KinematicsError, evaluate, solve_checked};
use crate::model::{Input, Model};

fn require_solved(data: &Data) -> Result<(), KinematicsError> {
    if data.solved && data.lu.valid { Ok(()) } else { Err(KinematicsError::NotSolved) }
}

/// Right-hand side `[ −D_cm v_x ; v_e ]` for input rates `v` (n_q), into `rhs` (n_xc).
fn input_rhs(model: &Model, data: &Data, v: &[f64], rhs: &mut [f64]) {
    rhs.fill(0.0);
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Mode(m) = inp {
            rhs[model.mode_row[m.index()].expect("input mode has a row")] += v[j];
        }
    }
    for &(src, r, j) in &model.pattern.scatter_input {
        rhs[r] -= data.de[src] * v[j];
    }
}

/// `uᵀ H_k w` for every mode `k` of every element, into `out` (n_e); `u`, `w` are global (n_x).
fn contract(model: &Model, data: &Data, u: &[f64], w: &[f64], out: &mut [f64]) {
    for entry in &model.elements {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            let mut s = 0.0;
            for (a, &ca) in entry.coords.iter().enumerate() {
                let ua = u[ca];
                if ua == 0.0 {
                    continue;
                }
                let row = &h[a * n..(a + 1) * n];
                s += ua * row.iter().zip(&entry.coords).map(|(hv, &cb)| hv * w[cb]).sum::<f64>();
            }
            out[entry.mode_offset + k] = s;
        }
    }
}

/// `D v` for every mode (n_e) from a global coordinate vector `v` (n_x).
fn jacobian_times(model: &Model, data: &Data, v: &[f64], out: &mut [f64]) {
    for entry in &model.elements {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        for k in 0..m {
            let g = &data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n];
            out[entry.mode_offset + k] = g.iter().zip(&entry.coords).map(|(gv, &c)| gv * v[c]).sum();
        }
    }
}

/// `∂x/∂q · v + (∂²x/∂q²)(w, w)` in one solve: the coordinate rates for input rates `v` (n_q),
/// plus the quadratic term when `w = Some(ẋ)` (n_x). Returns a vector of n_x.
pub(crate) fn directional(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    quadratic: Option<&[f64]>,
) -> Result<Vec<f64>, KinematicsError> {
    require_solved(data)?;
    let nc = model.n_unknowns();
    let mut rhs = vec![0.0; nc];
    input_rhs(model, data, v, &mut rhs);
    if let Some(w) = quadratic {
        evaluate(model, data, Order::Hessian)?;
        let mut h = vec![0.0; model.n_e()];
        contract(model, data, w, w, &mut h);
        for (r, &m) in model.rows.iter().enumerate() {
            rhs[r] -= h[m];
        }
    }
    let mut sol = Mat::from_fn(nc, 1, |i, _| rhs[i]);
    solve_checked(model, data, sol.as_mut())?;
    let mut x = vec![0.0; model.n_x()];
    for (col, &c) in model.dependent_coords.iter().enumerate() {
        x[c] = sol[(col, 0)];
    }
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            x[c.index()] = v[j];
        }
    }
    Ok(x)
}

/// Compute `DF^x` (n_x x n_q) and `DF^e` (n_e x n_q) at the solved configuration.
pub fn first_order(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    require_solved(data)?;
    if data.df_valid {
        return Ok(());
    }
    let (nx, ne, nq, nc) = (model.n_x(), model.n_e(), model.n_q(), model.n_unknowns());
    let mut b = Mat::<f64>::zeros(nc, nq);
    let mut unit = vec![0.0; nq];
    let mut col = vec![0.0; nc];
    for j in 0..nq {
        unit[j] = 1.0;
        input_rhs(model, data, &unit, &mut col);
        unit[j] = 0.0;
        for i in 0..nc {
            b[(i, j)] = col[i];
        }
    }
    solve_checked(model, data, b.as_mut())?;
    let mut dfx = Mat::<f64>::zeros(nx, nq);
    for (r, &c) in model.dependent_coords.iter().enumerate() {
        for j in 0..nq {
            dfx[(c, j)] = b[(r, j)];
        }
    }
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            dfx[(c.index(), j)] = 1.0;
        }
    }
    let mut dfe = Mat::<f64>::zeros(ne, nq);
    let mut xcol = vec![0.0; nx];
    let mut ecol = vec![0.0; ne];
    for j in 0..nq {
        for i in 0..nx {
            xcol[i] = dfx[(i, j)];
        }
        jacobian_times(model, data, &xcol, &mut ecol);
        for i in 0..ne {
            dfe[(i, j)] = ecol[i];
        }
    }
    data.df_x = dfx;
    data.df_e = dfe;
    data.df_valid = true;
    Ok(())
}

/// Compute the second-order transfer functions `∂²x/∂q_i∂q_j` (n_x x n_q(n_q+1)/2) and
/// `∂²e/∂q_i∂q_j` (n_e x n_q(n_q+1)/2) at the solved configuration (also computes the first
/// order). Columns are numbered by [`crate::pair_index`].
pub fn second_order(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    first_order(model, data)?;
    if data.d2f_valid {
        return Ok(());
    }
    evaluate(model, data, Order::Hessian)?;
    let (nx, ne, nq, nc) = (model.n_x(), model.n_e(), model.n_q(), model.n_unknowns());
    let np = n_pairs(nq);
    // hq[m, p] = DF_iᵀ H_m DF_j, element by element on local columns
    let mut hq = Mat::<f64>::zeros(ne, np);
    let mut u = Vec::new();
    let mut t = Vec::new();
    for entry in &model.elements {
        let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
        u.clear();
        u.resize(n * nq, 0.0);
        for (a, &c) in entry.coords.iter().enumerate() {
            for j in 0..nq {
                u[a * nq + j] = data.df_x[(c, j)];
            }
        }
        t.clear();
        t.resize(n * nq, 0.0);
        for k in 0..m {
            let h = &data.d2e[entry.d2e_offset + k * n * n..entry.d2e_offset + (k + 1) * n * n];
            t.fill(0.0);
            for a in 0..n {
                for b in 0..n {
                    let hab = h[a * n + b];
                    if hab != 0.0 {
                        for j in 0..nq {
                            t[a * nq + j] += hab * u[b * nq + j];
                        }
                    }
                }
            }
            for i in 0..nq {
                for j in i..nq {
                    let s: f64 = (0..n).map(|a| u[a * nq + i] * t[a * nq + j]).sum();
                    hq[(entry.mode_offset + k, pair_index(i, j, nq))] = s;
                }
            }
        }
    }
    let mut rhs = Mat::<f64>::zeros(nc, np);
    for (r, &m) in model.rows.iter().enumerate() {
        for p in 0..np {
            rhs[(r, p)] = -hq[(m, p)];
        }
    }
    solve_checked(model, data, rhs.as_mut())?;
    let mut d2x = Mat::<f64>::zeros(nx, np);
    for (r, &c) in model.dependent_coords.iter().enumerate() {
        for p in 0..np {
            d2x[(c, p)] = rhs[(r, p)];
        }
    }
    let mut d2e = hq;
    let mut xcol = vec![0.0; nx];
    let mut ecol = vec![0.0; ne];
    for p in 0..np {
        for i in 0..nx {
            xcol[i] = d2x[(i, p)];
        }
        jacobian_times(model, data, &xcol, &mut ecol);
        for i in 0..ne {
            d2e[(i, p)] += ecol[i];
        }
    }
    data.d2f_x = d2x;
    data.d2f_e = d2e;
    data.d2f_valid = true;
    Ok(())
}

/// Velocities `ẋ = DF^x q̇` and `ė = DF^e q̇` (seed 001, eq. 7) for generalized velocities `qd`
/// (n_q), in one solve.
pub fn velocities(model: &Model, data: &mut Data, qd: &[f64]) -> Result<(), KinematicsError> {
    check_len(model, qd)?;
    let xd = directional(model, data, qd, None)?;
    let mut ed = vec![0.0; model.n_e()];
    jacobian_times(model, data, &xd, &mut ed);
    data.xd = xd;
    data.ed = ed;
    data.qd.copy_from_slice(qd);
    Ok(())
}

/// Accelerations `ẍ = DF^x q̈ + (D²F^x q̇) q̇` and `ë` likewise (seed 001, eq. 8), for
/// generalized velocities `qd` and accelerations `qdd` (n_q each); also sets the velocities.
pub fn accelerations(model: &Model, data: &mut Data, qd: &[f64], qdd: &[f64]) -> Result<(), KinematicsError> {
    check_len(model, qdd)?;
    velocities(model, data, qd)?;
    let xd = std::mem::take(&mut data.xd);
    let xdd = directional(model, data, qdd, Some(&xd));
    data.xd = xd;
    let xdd = xdd?;
    let mut edd = vec![0.0; model.n_e()];
    jacobian_times(model, data, &xdd, &mut edd);
    let mut h = vec![0.0; model.n_e()];
    contract(model, data, &data.xd, &data.xd, &mut h);
    for (a, b) in edd.iter_mut().zip(&h) {
        *a += b;
    }
    data.xdd = xdd;
    data.edd = edd;
    data.qdd.copy_from_slice(qdd);
    Ok(())
}

fn check_len(model: &Model, v: &[f64]) -> Result<(), KinematicsError> {
    if v.len() != model.n_q() {
        return Err(KinematicsError::InputLength { expected: model.n_q(), got: v.len() });
    }
    if let Some(j) = v.iter().position(|a| !a.is_finite()) {
        return Err(KinematicsError::NonFiniteInput { name: model.input_name(j), value: v[j] });
    }
    Ok(())
}
