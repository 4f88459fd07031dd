//! Dynamics by virtual power (van der Helm 1994, eq. 9-16): inertia, loads, the reduced equations of
//! motion, inverse dynamics, and kinetostatics.
//!
//! Inertia is lumped: a mass `m` at a position node (`M = m I₃`), and a rotational inertia `J′`
//! (body frame of the node) at an orientation node, with
//! ```text
//! M_λ = 4 Ḡ(λ)ᵀ J′ Ḡ(λ),    h_λ = 8 Ḡ(λ̇)ᵀ J′ Ḡ(λ) λ̇        (ω_b = 2 Ḡ(λ) λ̇)
//! ```
//! from Lagrange's equations of `T = ½ ω_bᵀ J′ ω_b` (see `docs/theory/dynamics.md`). A body's mass
//! sits at a node at its centre of mass, its inertia about the centre of mass at its orientation
//! node. A moment `M` (global frame) at an orientation node is the generalized force `2 G(λ)ᵀ M`.
//!
//! With `f` the external forces, `f_in = M ẍ + h` the inertia forces and `σ` the stresses of the
//! modes (conjugate to them: the internal power is `σ·ė`), virtual power gives
//! ```text
//! M̄ q̈ = Q̄ + τ,   M̄ = DF_xᵀ M DF_x,   Q̄ = DF_xᵀ (f − h − M (D²F_x q̇) q̇) − DF_eᵀ σ_law
//! ```
//! where `τ_j` is the driving generalized force an actuator applies in the positive sense of input
//! `j` (a moment about a driven hinge, N m; a force along a driven coordinate, N), and `σ_law` the
//! stresses that constitutive laws give the free and input modes.

pub use crate::model::{Dynamics, Load};

use std::borrow::Cow;

use faer::{Mat, MatMut};

use crate::algorithm::error::KinematicsError;
use crate::algorithm::local::evaluate_into;
use crate::algorithm::solve::{solve_transpose_checked, solve_transpose_forces};
use crate::algorithm::transfer;
use crate::data::Data;
use crate::element::Order;
use crate::geometry::{Mat3, Quat, Vec3, g_matrix, gbar_matrix, quat_at};
use crate::ids::{ElementId, ModeId};
use crate::model::{CoordRole, Input, ModeRole, Model};

/// `Ḡ(a)ᵀ J Ḡ(b) c` (4), as `Ḡ(a)ᵀ (J (Ḡ(b) c))`: three matrix-vector products.
pub(crate) fn gbar_t_j_gbar_times(a: &Quat, j: &Mat3, b: &Quat, c: &[f64; 4]) -> [f64; 4] {
    gbar_t_times(a, &j_gbar_times(j, b, c))
}

/// `J Ḡ(b) c` (3).
#[inline]
pub(crate) fn j_gbar_times(j: &Mat3, b: &Quat, c: &[f64; 4]) -> [f64; 3] {
    // (plain loops: `array::map`'s closures were not inlined here)
    let gb = gbar_matrix(b);
    let mut w = [0.0; 3];
    for (wi, gi) in w.iter_mut().zip(&gb) {
        *wi = (0..4).map(|k| gi[k] * c[k]).sum();
    }
    let mut out = [0.0; 3];
    for (o, ji) in out.iter_mut().zip(j) {
        *o = (0..3).map(|k| ji[k] * w[k]).sum();
    }
    out
}

/// `Ḡ(a)ᵀ w` (4).
#[inline]
pub(crate) fn gbar_t_times(a: &Quat, w: &[f64; 3]) -> [f64; 4] {
    let ga = gbar_matrix(a);
    let mut out = [0.0; 4];
    for (r, o) in out.iter_mut().enumerate() {
        *o = (0..3).map(|i| ga[i][r] * w[i]).sum();
    }
    out
}

/// `M_λ = 4 Ḡᵀ J′ Ḡ` (4x4).
pub fn rotational_mass(l: &Quat, j: &Mat3) -> [[f64; 4]; 4] {
    let g = gbar_matrix(l);
    let mut m = [[0.0; 4]; 4];
    for a in 0..4 {
        for b in 0..4 {
            let mut s = 0.0;
            for i in 0..3 {
                for k in 0..3 {
                    s += g[i][a] * j[i][k] * g[k][b];
                }
            }
            m[a][b] = 4.0 * s;
        }
    }
    m
}

/// Inertia forces `f_in = M ẍ + h(ẋ)` (n_x) for given rates and accelerations of `x`.
pub fn inertia_forces(model: &Model, x: &[f64], xd: &[f64], xdd: &[f64]) -> Vec<f64> {
    let mut f = vec![0.0; model.n_x()];
    add_inertia_forces(model, x, xd, xdd, &mut f);
    f
}

/// Add the inertia forces of [`inertia_forces`] to `f` (n_x).
fn add_inertia_forces(model: &Model, x: &[f64], xd: &[f64], xdd: &[f64], f: &mut [f64]) {
    for &(node, m) in &model.dynamics.masses {
        let o = model.nodes[node.index()].offset;
        for a in 0..3 {
            f[o + a] += m * xdd[o + a];
        }
    }
    for (node, j) in &model.dynamics.rotors {
        let o = model.nodes[node.index()].offset;
        let (l, ld, ldd) = (quat_at(x, o), quat_at(xd, o), quat_at(xdd, o));
        // M_λ λ̈ = 4 Ḡᵀ J′ Ḡ λ̈ (the 4 x 4 M_λ is not wanted) and h = 8 Ḡ(λ̇)ᵀ J′ Ḡ(λ) λ̇
        let mass = gbar_t_j_gbar_times(&l, j, &l, &ldd);
        let h = gbar_t_j_gbar_times(&ld, j, &l, &ld);
        for a in 0..4 {
            f[o + a] += 4.0 * mass[a] + 8.0 * h[a];
        }
    }
}

/// `f − f_in` (n_x, into `net`; `fin` n_x to work in): the external forces of
/// [`external_forces`] less the inertia forces of [`inertia_forces`] at velocities `xd` and
/// accelerations `xdd` (n_x; read where masses and rotors sit).
pub(crate) fn net_forces(
    model: &Model,
    data: &Data,
    xd: &[f64],
    xdd: &[f64],
    extra: &[Load],
    net: &mut Vec<f64>,
    fin: &mut Vec<f64>,
) {
    let nx = model.n_x();
    net.clear();
    net.resize(nx, 0.0);
    add_external_forces(model, data, extra, net);
    fin.clear();
    fin.resize(nx, 0.0);
    add_inertia_forces(model, &data.x, xd, xdd, fin);
    for (a, b) in net.iter_mut().zip(fin.iter()) {
        *a -= b;
    }
}

/// External generalized forces `f` (n_x): gravity on the masses, the model's constant loads, and
/// `extra` loads, at the configuration in `data`.
pub fn external_forces(model: &Model, data: &Data, extra: &[Load]) -> Vec<f64> {
    let mut f = vec![0.0; model.n_x()];
    add_external_forces(model, data, extra, &mut f);
    f
}

/// Add the forces of [`external_forces`] to `f` (n_x).
fn add_external_forces(model: &Model, data: &Data, extra: &[Load], f: &mut [f64]) {
    let g = model.dynamics.gravity;
    for &(node, m) in &model.dynamics.masses {
        let o = model.nodes[node.index()].offset;
        for a in 0..3 {
            f[o + a] += m * g[a];
        }
    }
    for load in model.dynamics.loads.iter().chain(extra) {
        match *load {
            Load::Force { node, force } => {
                let o = model.nodes[node.index()].offset;
                for a in 0..3 {
                    f[o + a] += force[a];
                }
            }
            Load::Moment { node, moment } => {
                let o = model.nodes[node.index()].offset;
                let gm = g_matrix(&quat_at(&data.x, o));
                for k in 0..4 {
                    f[o + k] += 2.0 * (0..3).map(|i| gm[i][k] * moment[i]).sum::<f64>();
                }
            }
        }
    }
}

/// Stresses that constitutive laws give the free and input modes (n_e; 0 for fixed modes and
/// modes without a law), from the current `e` and `ė`.
pub fn law_stresses(model: &Model, data: &Data) -> Vec<f64> {
    let mut sigma = Vec::new();
    law_stresses_into(model, data, &mut sigma);
    sigma
}

/// [`law_stresses`] into `sigma`, resized to n_e: with a vector kept from frame to frame, no
/// allocation.
pub fn law_stresses_into(model: &Model, data: &Data, sigma: &mut Vec<f64>) {
    sigma.resize(model.n_e(), 0.0);
    set_law_stresses(model, data, sigma);
}

/// [`law_stresses`] into `sigma` (n_e, every entry set).
fn set_law_stresses(model: &Model, data: &Data, sigma: &mut [f64]) {
    sigma.fill(0.0);
    for (i, entry) in model.elements.iter().enumerate() {
        let Some(law) = model.law(ElementId::new(i)) else { continue };
        let m = entry.element.layout().n_modes();
        let r = entry.mode_offset..entry.mode_offset + m;
        law.stress(&data.e[r.clone()], &data.ed[r.clone()], &mut sigma[r.clone()]);
        for k in r {
            if matches!(model.mode_role[k], ModeRole::Fixed(_)) {
                sigma[k] = 0.0;
            }
        }
    }
}

/// `Aᵀ v` (n_q) for `A` = DF_x (n_x x n_q) or DF_e (n_e x n_q), summed in row order over the
/// rows where `v` is not 0 (their indices into `rows`, scratch): the same sums as over every
/// row but for the sign of a sum that is 0.
fn transpose_times(a: faer::MatRef<'_, f64>, v: &[f64], rows: &mut Vec<usize>) -> Vec<f64> {
    rows.clear();
    rows.extend((0..a.nrows()).filter(|&i| v[i] != 0.0));
    (0..a.ncols())
        .map(|j| {
            let col = a.col(j);
            rows.iter().map(|&i| col[i] * v[i]).sum()
        })
        .collect()
}

/// The reduced mass matrix `M̄ = DF_xᵀ M DF_x` (n_q x n_q) at the solved configuration. Forms
/// `DF` as [`transfer::first_order_for_dynamics`] does (`DF_x` without the rows of the points
/// only free elements read).
pub fn mass_matrix(model: &Model, data: &mut Data) -> Result<Mat<f64>, KinematicsError> {
    transfer::first_order_for_dynamics(model, data, &[])?;
    let nq = model.n_q();
    let row = |c: usize| transfer::df_row(data, c);
    let mut mbar = Mat::<f64>::zeros(nq, nq);
    // each entry of the upper triangle formed once and mirrored (M̄ is symmetric)
    let mut add = |i: usize, j: usize, v: f64| {
        mbar[(i, j)] += v;
        if j != i {
            mbar[(j, i)] += v;
        }
    };
    for &(node, m) in &model.dynamics.masses {
        let o = model.nodes[node.index()].offset;
        let r = [row(o), row(o + 1), row(o + 2)];
        for i in 0..nq {
            for j in i..nq {
                add(i, j, m * (r[0][i] * r[0][j] + r[1][i] * r[1][j] + r[2][i] * r[2][j]));
            }
        }
    }
    // u = M_λ DF_λ (4 x n_q, row-major), then DF_λᵀ u
    let mut u = vec![0.0; 4 * nq];
    for (node, jm) in &model.dynamics.rotors {
        let o = model.nodes[node.index()].offset;
        let ml = rotational_mass(&quat_at(&data.x, o), jm);
        let r = [row(o), row(o + 1), row(o + 2), row(o + 3)];
        for (a, ua) in u.chunks_exact_mut(nq.max(1)).enumerate() {
            for (j, v) in ua.iter_mut().enumerate() {
                *v = (0..4).map(|b| ml[a][b] * r[b][j]).sum();
            }
        }
        for i in 0..nq {
            for j in i..nq {
                add(i, j, (0..4).map(|a| r[a][i] * u[a * nq + j]).sum());
            }
        }
    }
    Ok(mbar)
}

/// `DF_xᵀ (f − f_in) − DF_eᵀ σ_law` (n_q) for the rates and accelerations of the inputs: the
/// generalized force left over by loads, inertia and laws, which the drives must balance.
fn unbalanced(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    extra: &[Load],
) -> Result<Vec<f64>, KinematicsError> {
    transfer::first_order_for_dynamics(model, data, extra)?;
    transfer::coordinate_accelerations(model, data, qd, qdd)?;
    let mut nonzero = std::mem::take(&mut data.work.reached);
    let out = with_buffers(data, |data, [net, fin, sigma, _]| {
        net_forces(model, data, &data.xd, &data.xdd, extra, net, fin);
        law_stresses_into(model, data, sigma);
        // f − f_in sits at the masses, rotors and loads, σ_law at the laws' modes: each product
        // over those rows only (the terms left out are 0)
        let a = transpose_times(data.df_x.as_ref(), net, &mut nonzero);
        let b = transpose_times(data.df_e.as_ref(), sigma, &mut nonzero);
        a.iter().zip(&b).map(|(x, y)| x - y).collect()
    });
    data.work.reached = nonzero;
    Ok(out)
}

/// The generalized forces `Q̄(q, q̇)` (n_q): loads, velocity-dependent inertia and law stresses,
/// at the solved configuration, for input rates `qd`. Also sets the velocities in `data`, and
/// `DF` as [`transfer::first_order_for_dynamics`] forms it.
pub fn bias_forces(model: &Model, data: &mut Data, qd: &[f64], extra: &[Load]) -> Result<Vec<f64>, KinematicsError> {
    unbalanced(model, data, qd, &vec![0.0; model.n_q()], extra)
}

/// Inverse dynamics: the driving generalized forces `τ` (n_q) that produce accelerations `qdd`
/// at rates `qd` (N m for a driven hinge, N for a driven coordinate), at the solved configuration:
/// `τ = M̄ q̈ − Q̄`, computed with the full `ẍ` without forming `M̄`.
pub fn inverse_dynamics(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    extra: &[Load],
) -> Result<Vec<f64>, KinematicsError> {
    Ok(unbalanced(model, data, qd, qdd, extra)?.into_iter().map(|v| -v).collect())
}

/// Forward dynamics: `q̈` (n_q) from `M̄ q̈ = Q̄ + τ` at the solved configuration.
pub fn forward_dynamics(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    tau: &[f64],
    extra: &[Load],
) -> Result<Vec<f64>, KinematicsError> {
    let q = bias_forces(model, data, qd, extra)?;
    let m = mass_matrix(model, data)?;
    let rhs = Mat::from_fn(model.n_q(), 1, |i, _| q[i] + tau[i]);
    let sol = solve_full_pivoting(&m, &rhs).ok_or(KinematicsError::SingularMass)?;
    Ok((0..model.n_q()).map(|i| sol[(i, 0)]).collect())
}

/// Solve a small dense system `a x = b` (`a` n x n, `b` n x k) by faer's LU with full pivoting,
/// its residual checked; `None` when singular.
pub(crate) fn solve_full_pivoting(a: &Mat<f64>, b: &Mat<f64>) -> Option<Mat<f64>> {
    use faer::linalg::solvers::Solve;
    let n = a.nrows();
    if n == 0 {
        return Some(b.clone());
    }
    let lu = a.full_piv_lu();
    let x = lu.solve(b);
    let scale = (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).fold(0.0f64, |s, (i, j)| s.max(a[(i, j)].abs()));
    let mut resid = 0.0f64;
    let mut bn = 0.0f64;
    for c in 0..b.ncols() {
        for i in 0..n {
            let r: f64 = (0..n).map(|k| a[(i, k)] * x[(k, c)]).sum::<f64>() - b[(i, c)];
            resid = resid.max(r.abs());
            bn = bn.max(b[(i, c)].abs());
        }
    }
    let xn = (0..n).flat_map(|i| (0..b.ncols()).map(move |c| (i, c))).fold(0.0f64, |s, (i, c)| s.max(x[(i, c)].abs()));
    let ok = x.col_iter().all(|c| c.iter().all(|v| v.is_finite()))
        && resid <= 1e-9 * (bn + scale * xn)
        && !(bn > 0.0 && scale * xn > 1e13 * bn);
    ok.then_some(x)
}

/// Kinetic energy `½ q̇ᵀ M̄ q̇` (J) at the solved configuration.
pub fn kinetic_energy(model: &Model, data: &mut Data, qd: &[f64]) -> Result<f64, KinematicsError> {
    let m = mass_matrix(model, data)?;
    let n = model.n_q();
    Ok(0.5 * (0..n).map(|i| (0..n).map(|j| qd[i] * m[(i, j)] * qd[j]).sum::<f64>()).sum::<f64>())
}

/// Potential energy (J): gravity on the masses plus the energy of laws that define one. `None`
/// when some law has no energy (the system is then not known to be conservative).
pub fn potential_energy(model: &Model, data: &Data) -> Option<f64> {
    let g = model.dynamics.gravity;
    let mut v = 0.0;
    for &(node, m) in &model.dynamics.masses {
        let o = model.nodes[node.index()].offset;
        v -= m * (0..3).map(|a| g[a] * data.x[o + a]).sum::<f64>();
    }
    for (i, entry) in model.elements.iter().enumerate() {
        if let Some(law) = model.law(ElementId::new(i)) {
            let m = entry.element.layout().n_modes();
            v += law.energy(&data.e[entry.mode_offset..entry.mode_offset + m])?;
        }
    }
    Some(v)
}

/// Result of a kinetostatic analysis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Kinetostatics {
    /// Stress of every mode (n_e): for fixed modes the reaction (joint forces and moments,
    /// contact forces), for input modes the total stress they carry, for free modes the given or
    /// law stress. Units: N for length modes, N m for angle modes.
    pub sigma: Vec<f64>,
    /// `Dᵀσ − (f − f_in)` per coordinate (n_x): zero at dependent coordinates (equilibrium), the
    /// support reaction at fixed coordinates, the driving force at input coordinates.
    pub nodal: Vec<f64>,
}

/// Kinetostatics (eq. 13-15): the stresses of the fixed and input modes and the reactions, for
/// rates `qd` and accelerations `qdd` (n_q) at the solved configuration. `sigma_free` gives the
/// stresses of the dependent modes (n_e, only their entries are read; e.g. muscle forces); `None`
/// takes them from the laws. Sets the velocities `ẋ`, `ė` and the coordinates' accelerations `ẍ`
/// in `data` ([`transfer::coordinate_accelerations`]: the free elements are not evaluated to
/// second order; [`transfer::accelerations`] gives `ë` too).
pub fn kinetostatics(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    sigma_free: Option<&[f64]>,
    extra: &[Load],
) -> Result<Kinetostatics, KinematicsError> {
    let mut out = Kinetostatics { sigma: Vec::new(), nodal: Vec::new() };
    kinetostatics_into(model, data, qd, qdd, sigma_free, extra, &mut out)?;
    Ok(out)
}

/// [`kinetostatics`] into `out`, whose vectors are resized (n_e, n_x): with an `out` kept from
/// the previous frame, a frame allocates nothing. On an error `out` holds no result.
pub fn kinetostatics_into(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    sigma_free: Option<&[f64]>,
    extra: &[Load],
    out: &mut Kinetostatics,
) -> Result<(), KinematicsError> {
    transfer::coordinate_accelerations(model, data, qd, qdd)?;
    let xdd = std::mem::take(&mut data.xdd);
    let result = with_buffers(data, |data, [net, fin, free, rhs]| {
        stresses_in(model, data, &xdd, sigma_free, extra, &mut out.sigma, [net, fin, free, rhs])?;
        // Dᵀσ − (f − f_in), every mode's stress in one pass element by element
        out.nodal.resize(model.n_x(), 0.0);
        all_modes_to_nodal(model, data, &out.sigma, &mut out.nodal);
        for (a, b) in out.nodal.iter_mut().zip(net.iter()) {
            *a -= b;
        }
        Ok(())
    });
    data.xdd = xdd;
    if result.is_err() {
        out.sigma.clear();
        out.nodal.clear();
    }
    result
}

/// The stresses of [`kinetostatics`] (`Kinetostatics::sigma`, n_e, into `sigma`) at the state of
/// the last [`crate::algorithm::linearize::linearize_motion_with`] on `data`, nothing solved since, from the
/// force its geometric stiffness weighted `D²F_x` with: `W + Σ_k w_k ∇e_k` carried to the frames,
/// `W` the masses' `m (DF_x v̇ − g)`, the rotors' `M_λ DF_λ v̇` and the loads' `−f`, `w_k` the
/// laws' stresses and the forces along the weighted modes. The right-hand side of kinetostatics,
/// `f − f_in − Dᵀ σ`, is that force's negative less the inertia of the velocities
/// (`M D²F_x(v, v) + h(ẋ)`, at the masses and rotors only): no pass over the elements.
/// `velocity_accelerations` (n_x) is the linearization's; the free modes' stresses in `sigma` are
/// the weights `w_k` it used. On an error `sigma` is empty.
pub fn kinetostatic_stresses(
    model: &Model,
    data: &mut Data,
    velocity_accelerations: &[f64],
    sigma: &mut Vec<f64>,
) -> Result<(), KinematicsError> {
    sigma.clear();
    if velocity_accelerations.len() != model.n_x() {
        return Err(KinematicsError::InputLength { expected: model.n_x(), got: velocity_accelerations.len() });
    }
    if data.work.stiffness.force().is_none() {
        return Err(KinematicsError::NotLinearized);
    }
    let (mut fv, mut rhs) = (std::mem::take(&mut data.work.x_inertia), std::mem::take(&mut data.work.c_rhs));
    fv.clear();
    fv.resize(model.n_x(), 0.0);
    add_inertia_forces(model, &data.x, &data.xd, velocity_accelerations, &mut fv);
    model.attachments.pull_back(&data.att_jac, &mut fv);
    let force = data.work.stiffness.force().expect("checked above");
    rhs.clear();
    rhs.extend(model.dependent_coords.iter().map(|&c| -(force[c] + fv[c])));
    let nc = rhs.len();
    let solved = solve_transpose_checked(model, data, MatMut::from_column_major_slice_mut(&mut rhs, nc, 1));
    if solved.is_ok() {
        sigma.resize(model.n_e(), 0.0);
        for &(el, k, w) in data.work.stiffness.weights().expect("checked above") {
            sigma[model.elements[el].mode_offset + k] += w;
        }
        for (r, &m) in model.rows.iter().enumerate() {
            sigma[m] = rhs[r];
        }
    }
    (data.work.x_inertia, data.work.c_rhs) = (fv, rhs);
    solved
}

/// Run `f` with four of `data`'s work vectors (n_x three, n_unknowns one) taken out of it.
fn with_buffers<T>(data: &mut Data, f: impl FnOnce(&mut Data, [&mut Vec<f64>; 4]) -> T) -> T {
    let w = &mut data.work;
    let mut buffers = [&mut w.x_force, &mut w.x_inertia, &mut w.x_nodal, &mut w.c_rhs].map(std::mem::take);
    let [net, fin, free, rhs] = &mut buffers;
    let result = f(data, [net, fin, free, rhs]);
    let w = &mut data.work;
    [w.x_force, w.x_inertia, w.x_nodal, w.c_rhs] = buffers;
    result
}

/// The stresses of kinetostatics with the accelerations `xdd` (n_x) and the velocities in
/// `data`; leaves `f − f_in` in `net` (n_x).
fn stresses_in(
    model: &Model,
    data: &mut Data,
    xdd: &[f64],
    sigma_free: Option<&[f64]>,
    extra: &[Load],
    sigma: &mut Vec<f64>,
    [net, fin, nodal_free, rhs]: [&mut Vec<f64>; 4],
) -> Result<(), KinematicsError> {
    net_forces(model, data, &data.xd, xdd, extra, net, fin);
    // forces on attached nodes act on their bodies (`stress_to_nodal` carries the stresses' too)
    model.attachments.pull_back(&data.att_jac, net);
    sigma.clear();
    sigma.resize(model.n_e(), 0.0);
    match sigma_free {
        Some(s) => {
            for &m in &model.dependent_modes {
                sigma[m] = s[m];
            }
        }
        None => {
            set_law_stresses(model, data, sigma);
            for &r in &model.rows {
                sigma[r] = 0.0;
            }
        }
    }
    // D_ccᵀ σ^(o,m) = (f − f_in)_c − D_(c,c)ᵀ σ^c, the last term only where a dependent mode
    // is stressed (a tree without muscles or laws has none)
    rhs.clear();
    rhs.extend(model.dependent_coords.iter().map(|&c| net[c]));
    if model.dependent_modes.iter().any(|&m| sigma[m] != 0.0) {
        nodal_free.clear();
        nodal_free.resize(model.n_x(), 0.0);
        modes_to_nodal(model, data, sigma, model.dependent_modes.iter().copied(), nodal_free);
        for (v, &c) in rhs.iter_mut().zip(&model.dependent_coords) {
            *v -= nodal_free[c];
        }
    }
    solve_transpose_forces(model, data, rhs)?;
    for (r, &m) in model.rows.iter().enumerate() {
        sigma[m] = rhs[r];
    }
    Ok(())
}

/// `Dᵀ σ` (n_x): the generalized forces the stresses exert, summed at every coordinate. Forces
/// at an attached node are carried on to its body frame; its own entries keep the force that
/// passes through it (from the elements on it and on the nodes attached to it).
pub fn stress_to_nodal(model: &Model, data: &Data, sigma: &[f64]) -> Vec<f64> {
    let mut out = vec![0.0; model.n_x()];
    if gradients_due(data) {
        // the tree path's acceptance left the joints' gradients due: read each through
        // `own_gradient`, which evaluates it
        modes_to_nodal(model, data, sigma, 0..model.n_e(), &mut out);
    } else {
        all_modes_to_nodal(model, data, sigma, &mut out);
    }
    out
}

/// Whether `data`'s positions are solved and the constraint elements' gradients not yet
/// evaluated (the tree path's acceptance leaves them due).
#[inline]
fn gradients_due(data: &Data) -> bool {
    data.solved && data.order.is_none_or(|o| o < Order::Gradient)
}

/// [`stress_to_nodal`] into `out` (n_x): element by element in the kernel's order, each
/// element's gradient rows read where they lie (no per-mode look-up of its element); the
/// gradients must be evaluated (not [`gradients_due`]).
fn all_modes_to_nodal(model: &Model, data: &Data, sigma: &[f64], out: &mut [f64]) {
    out.fill(0.0);
    for el in &model.topology.element_order {
        let entry = &model.elements[el.index()];
        let (n, m) = (entry.own.len(), entry.element.layout().n_modes());
        let grads = match &entry.chain {
            Some(chain) => &data.de_own[chain.de_own_offset..chain.de_own_offset + m * n],
            None => &data.de[entry.de_offset..entry.de_offset + m * n],
        };
        for (g, &s) in grads.chunks_exact(n.max(1)).zip(&sigma[entry.mode_offset..entry.mode_offset + m]) {
            if s == 0.0 {
                continue;
            }
            for (gv, &c) in g.iter().zip(&entry.own) {
                out[c] += gv * s;
            }
        }
    }
    model.attachments.pull_back(&data.att_jac, out);
}

/// [`stress_to_nodal`] of the stresses of the `modes` alone (indices into `sigma`, n_e; the
/// other modes' read as 0) into `out` (n_x): kinetostatics walks each mode once, the dependent
/// modes' before the stresses of the rows are solved, the rows' after.
fn modes_to_nodal(model: &Model, data: &Data, sigma: &[f64], modes: impl Iterator<Item = usize>, out: &mut [f64]) {
    out.fill(0.0);
    for m in modes {
        let s = sigma[m];
        if s == 0.0 {
            continue;
        }
        let (el, k) = model.mode_element[m];
        for (g, &c) in own_gradient(model, data, el.index(), k).iter().zip(&model.elements[el.index()].own) {
            out[c] += g * s;
        }
    }
    model.attachments.pull_back(&data.att_jac, out);
}

/// The gradient of mode `k` of element `i` by the element's own local coordinates (n_own). A
/// constraint element whose gradient the tree path's acceptance left due (the positions placed,
/// nothing evaluated since) is evaluated here on a copy of its state ([`due_gradient`]).
// inlined into kinetostatics' loop over the modes (a call a mode was 3 % of a frame)
#[inline(always)]
fn own_gradient<'a>(model: &Model, data: &'a Data, i: usize, k: usize) -> Cow<'a, [f64]> {
    if gradients_due(data)
        && let Some(g) = due_gradient(model, data, i, k)
    {
        return Cow::Owned(g);
    }
    let entry = &model.elements[i];
    let n = entry.own.len();
    Cow::Borrowed(match &entry.chain {
        Some(chain) => &data.de_own[chain.de_own_offset + k * n..chain.de_own_offset + (k + 1) * n],
        None => &data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n],
    })
}

/// [`own_gradient`] of a constraint element (a mode held or an input) whose gradient is due,
/// evaluated on a copy of its state; `None` for a free element (evaluated with the positions)
/// or where the evaluation fails (the stored gradient is read then).
#[cold]
#[inline(never)]
fn due_gradient(model: &Model, data: &Data, i: usize, k: usize) -> Option<Vec<f64>> {
    let entry = &model.elements[i];
    let (m, n) = (entry.element.layout().n_modes(), entry.own.len());
    if model.mode_row[entry.mode_offset..entry.mode_offset + m].iter().all(Option::is_none) {
        return None;
    }
    let (mut xloc, mut e, mut de) = (vec![0.0; n], vec![0.0; m], vec![0.0; m * n]);
    let mut state = data.states[i].snapshot();
    evaluate_into(entry, &data.x, &mut xloc, Order::Gradient, &mut e, &mut de, &mut [], &mut state).ok()?;
    Some(de[k * n..(k + 1) * n].to_vec())
}

/// The generalized forces (n_local of the element, its layout's coordinates) that element `el`
/// exerts on its nodes for mode stresses `sigma` (n_e): `−D_elᵀ σ_el`. For a position node the
/// three entries are a force (N); for an orientation node, `M = ½ G(λ) f_λ` is the moment (N m)
/// on the node's body.
pub fn element_forces(model: &Model, data: &Data, el: ElementId, sigma: &[f64]) -> Vec<f64> {
    let entry = &model.elements[el.index()];
    let mut out = vec![0.0; entry.own.len()];
    for k in 0..entry.element.layout().n_modes() {
        let s = sigma[entry.mode_offset + k];
        for (o, g) in out.iter_mut().zip(own_gradient(model, data, el.index(), k).iter()) {
            *o -= g * s;
        }
    }
    out
}

/// The spatial moment `½ G(λ) f_λ` (N m) of a generalized force on Euler parameters.
pub fn moment_of(l: &Quat, f_lambda: &Quat) -> Vec3 {
    let g = g_matrix(l);
    [0, 1, 2].map(|i| 0.5 * (0..4).map(|k| g[i][k] * f_lambda[k]).sum::<f64>())
}

/// How the stresses and nodal reactions change with the stresses of some dependent modes: for
/// each given mode `k` (a column), `∂σ/∂σ_k` (n_e) and `∂nodal/∂σ_k` (n_x), at the solved
/// configuration (the kinetostatic map is affine in them). Used for load sharing.
pub fn kinetostatic_influence(
    model: &Model,
    data: &mut Data,
    modes: &[ModeId],
) -> Result<(Mat<f64>, Mat<f64>), KinematicsError> {
    let (ne, nx, nc, k) = (model.n_e(), model.n_x(), model.n_unknowns(), modes.len());
    let mut dsigma = Mat::<f64>::zeros(ne, k);
    let mut rhs = Mat::<f64>::zeros(nc, k);
    let mut unit = vec![0.0; ne];
    for (j, m) in modes.iter().enumerate() {
        unit[m.index()] = 1.0;
        let nodal = stress_to_nodal(model, data, &unit);
        unit[m.index()] = 0.0;
        for (col, &c) in model.dependent_coords.iter().enumerate() {
            rhs[(col, j)] = -nodal[c];
        }
        dsigma[(m.index(), j)] = 1.0;
    }
    solve_transpose_checked(model, data, rhs.as_mut())?;
    let mut dnodal = Mat::<f64>::zeros(nx, k);
    let mut s = vec![0.0; ne];
    for j in 0..k {
        s.fill(0.0);
        s[modes[j].index()] = 1.0;
        for (r, &m) in model.rows.iter().enumerate() {
            dsigma[(m, j)] = rhs[(r, j)];
            s[m] = rhs[(r, j)];
        }
        let n = stress_to_nodal(model, data, &s);
        for c in 0..nx {
            dnodal[(c, j)] = n[c];
        }
    }
    Ok((dsigma, dnodal))
}

/// `∂σ_r/∂σ_k` (rows.len() x modes.len()) of chosen modes `rows` with respect to the stresses of
/// dependent modes `modes`, at the solved configuration: the rows of [`kinetostatic_influence`]
/// by the adjoint, one solve with `D_cc` per row instead of one per mode. For a fixed or input
/// mode `r` (a row of `D_cc`), with `D_cc w_r = e_r`, `∂σ_r/∂σ_k = −Σ_c w_r[c] ∂e_k/∂x_c` over
/// the dependent coordinates; a dependent `r` gives `δ_rk`. Load sharing asks it for the few
/// constrained reactions of many muscles.
pub fn kinetostatic_sensitivity(
    model: &Model,
    data: &mut Data,
    rows: &[ModeId],
    modes: &[ModeId],
) -> Result<Mat<f64>, KinematicsError> {
    crate::algorithm::solve::ensure_factors(model, data)?;
    if !(data.solved && data.lu.valid) {
        return Err(KinematicsError::NotSolved);
    }
    // the modes' expanded gradients (the solve leaves free elements on their own coordinates)
    crate::algorithm::evaluate::evaluate(model, data, Order::Gradient)?;
    let (nc, nr) = (model.n_unknowns(), rows.len());
    let mut w = Mat::<f64>::zeros(nc, nr);
    for (j, r) in rows.iter().enumerate() {
        if let Some(row) = model.mode_row[r.index()] {
            w[(row, j)] = 1.0;
        }
    }
    crate::algorithm::solve::solve_checked(model, data, w.as_mut())?;
    let mut out = Mat::<f64>::zeros(nr, modes.len());
    for (k, m) in modes.iter().enumerate() {
        let (el, local) = model.mode_element[m.index()];
        let entry = &model.elements[el.index()];
        let n = entry.coords.len();
        let g = &data.de[entry.de_offset + local * n..entry.de_offset + (local + 1) * n];
        for (j, r) in rows.iter().enumerate() {
            out[(j, k)] = match model.mode_row[r.index()] {
                Some(_) => -entry
                    .coords
                    .iter()
                    .zip(g)
                    .filter_map(|(&c, gv)| model.coord_col[c].map(|col| w[(col, j)] * gv))
                    .sum::<f64>(),
                None => f64::from(u8::from(r == m)),
            };
        }
    }
    Ok(out)
}

/// The driving generalized forces of the inputs from a kinetostatic result (n_q): `−σ` of the
/// actuator part for input modes, the nodal force for input coordinates.
pub fn driving_from_kinetostatics(model: &Model, data: &Data, ks: &Kinetostatics) -> Vec<f64> {
    let mut out = Vec::with_capacity(model.inputs.len());
    driving_into(model, ks, &law_stresses(model, data), &mut out);
    out
}

/// [`driving_from_kinetostatics`] appended to `out`, with the laws' stresses `law` (n_e,
/// [`law_stresses`]) at the same configuration and rates.
pub fn driving_into(model: &Model, ks: &Kinetostatics, law: &[f64], out: &mut Vec<f64>) {
    out.extend(model.inputs.iter().map(|inp| match *inp {
        Input::Mode(m) => -(ks.sigma[m.index()] - law[m.index()]),
        Input::Coordinate(c) => ks.nodal[c.index()],
    }));
}

/// The support reactions: `(coordinate, generalized force)` at every fixed coordinate.
pub fn support_reactions(model: &Model, ks: &Kinetostatics) -> Vec<(crate::ids::CoordId, f64)> {
    (0..model.n_x())
        .filter(|&c| model.coord_role[c] == CoordRole::Fixed)
        .map(|c| (crate::ids::CoordId::new(c), ks.nodal[c]))
        .collect()
}

/// A simulated motion: time, generalized coordinates and velocities at every step, and the total
/// energy where the model is conservative.
#[derive(Clone, Debug, PartialEq)]
pub struct Trajectory {
    /// Times (s).
    pub t: Vec<f64>,
    /// `q` at each time (n_q each).
    pub q: Vec<Vec<f64>>,
    /// `q̇` at each time.
    pub qd: Vec<Vec<f64>>,
    /// Kinetic plus potential energy (J) at each time; empty when some law has no energy.
    pub energy: Vec<f64>,
}

impl Trajectory {
    /// Largest `|E(t) − E(0)|` over the motion (J), or `None` when energy is not defined.
    pub fn energy_drift(&self) -> Option<f64> {
        let e0 = *self.energy.first()?;
        Some(self.energy.iter().fold(0.0f64, |m, e| m.max((e - e0).abs())))
    }
}

/// Generalized driving forces as a function of time, `q` and `q̇` (n_q).
pub type Drive<'a> = &'a dyn Fn(f64, &[f64], &[f64]) -> Vec<f64>;

/// Forward simulation of all generalized coordinates from `(q0, qd0)` with the classical
/// fourth-order Runge-Kutta method, `steps` steps of `dt` (s), under driving forces `drive`.
/// Positions stay on the constraint manifold: every stage solves them by Newton-Raphson, and
/// velocities are `DF^x q̇`.
pub fn simulate(
    model: &Model,
    data: &mut Data,
    q0: &[f64],
    qd0: &[f64],
    dt: f64,
    steps: usize,
    drive: Drive<'_>,
) -> Result<Trajectory, KinematicsError> {
    let n = model.n_q();
    let accel = |t: f64, q: &[f64], qd: &[f64], data: &mut Data| -> Result<Vec<f64>, KinematicsError> {
        crate::algorithm::kinematics::solve_positions(model, data, q)?;
        forward_dynamics(model, data, qd, &drive(t, q, qd), &[])
    };
    let energy = |data: &mut Data, q: &[f64], qd: &[f64]| -> Result<Option<f64>, KinematicsError> {
        crate::algorithm::kinematics::solve_positions(model, data, q)?;
        transfer::velocities(model, data, qd)?;
        let t = kinetic_energy(model, data, qd)?;
        Ok(potential_energy(model, data).map(|v| v + t))
    };
    let mut traj = Trajectory { t: vec![0.0], q: vec![q0.to_vec()], qd: vec![qd0.to_vec()], energy: Vec::new() };
    let mut conservative = true;
    match energy(data, q0, qd0)? {
        Some(e) => traj.energy.push(e),
        None => conservative = false,
    }
    let (mut q, mut v) = (q0.to_vec(), qd0.to_vec());
    let axpy = |a: &[f64], s: f64, b: &[f64]| -> Vec<f64> { a.iter().zip(b).map(|(x, y)| x + s * y).collect() };
    for step in 0..steps {
        let t = step as f64 * dt;
        let k1v = accel(t, &q, &v, data)?;
        let k1q = v.clone();
        let q2 = axpy(&q, 0.5 * dt, &k1q);
        let v2 = axpy(&v, 0.5 * dt, &k1v);
        let k2v = accel(t + 0.5 * dt, &q2, &v2, data)?;
        let q3 = axpy(&q, 0.5 * dt, &v2);
        let v3 = axpy(&v, 0.5 * dt, &k2v);
        let k3v = accel(t + 0.5 * dt, &q3, &v3, data)?;
        let q4 = axpy(&q, dt, &v3);
        let v4 = axpy(&v, dt, &k3v);
        let k4v = accel(t + dt, &q4, &v4, data)?;
        for i in 0..n {
            q[i] += dt / 6.0 * (k1q[i] + 2.0 * v2[i] + 2.0 * v3[i] + v4[i]);
            v[i] += dt / 6.0 * (k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i] + k4v[i]);
        }
        traj.t.push(t + dt);
        traj.q.push(q.clone());
        traj.qd.push(v.clone());
        if conservative {
            if let Some(e) = energy(data, &q, &v)? {
                traj.energy.push(e);
            }
        }
    }
    crate::algorithm::kinematics::solve_positions(model, data, &q)?;
    Ok(traj)
}
