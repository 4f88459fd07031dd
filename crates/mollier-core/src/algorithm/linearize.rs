//! The reduced equations of motion as a residual, and its partial derivatives, for implicit
//! integrators (Chadwick et al. 2014, eqs. 7-8).
//!
//! With the notation of [`crate::dynamics`], the residual of the equations of motion at
//! `(q, v = q̇, v̇)` without driving forces is
//! ```text
//! r = M̄(q) v̇ + c(q, v) − DF_xᵀ f + DF_eᵀ σ(e, ė),     c = DF_xᵀ (h(ẋ) + M D²F_x(v, v))
//! ```
//! and its partials are assembled from the transfer functions:
//! - `∂r/∂v̇ = M̄`, exact;
//! - `∂r/∂v = ∂c/∂v + DF_eᵀ (∂σ/∂ė) DF_e`, exact: `c` is quadratic in `v`, so
//!   `∂c/∂v_k = DF_xᵀ (2 M D²F_x(v, e_k) + ∂h/∂ẋ · DF_x e_k)`;
//! - `∂r/∂q`, exact: the inertia forces of `v̇` (through `∂DF_x/∂q = D²F_x` and `∂M/∂q`), the
//!   loads, the laws' stresses, elastic (`D²F_eᵀ σ + DF_eᵀ (∂σ/∂e) DF_e`) and viscous
//!   (`DF_eᵀ (∂σ/∂ė) D²F_e(v, ·)`), and the velocity forces `c`:
//!   `∂c/∂q_k = D²F_x(e_k, ·)ᵀ f_in + DF_xᵀ (∂f_in/∂x DF_x e_k + ∂f_in/∂ẋ D²F_x(v, e_k) +
//!   M D³F_x(v, v, e_k))` with `f_in = h(ẋ) + M D²F_x(v, v)`, the third-order transfer
//!   functions from [`crate::transfer3`] (formed only when `v ≠ 0`, and left out with
//!   [`VelocityPartials::WithoutThirdOrder`]).
//!
//! Forces along modes that the caller models (muscles on their paths) add their geometric
//! stiffness `Σ_k w_k ∂²e_k/∂q²` ([`linearize_motion_with`], [`crate::stiffness`]). No
//! second-order transfer function is formed: where `∂r/∂q` weights `D²F` by forces (the masses'
//! `m (a − g)`, loads, the laws' stresses, the muscles' tensions) the weighted sum is formed
//! directly, with one adjoint solve ([`crate::stiffness`]); where it needs `D²F` in a direction
//! (`D²F_x(v, e_k)`, `D²F_x(v̇, e_k)` at the masses, `D²F_e(v, e_k)` of the laws' modes), those
//! `2 n_q` columns are solved for at once (`transfer::second_order_directions`).

use faer::Mat;

use crate::algorithm::dynamics::{
    gbar_t_j_gbar_times, gbar_t_times, j_gbar_times, mass_matrix, net_forces, rotational_mass,
};
use crate::algorithm::error::KinematicsError;
use crate::algorithm::evaluate::evaluate_elements;
use crate::algorithm::{transfer, transfer3};
use crate::data::{Data, shaped};
use crate::element::Order;
use crate::geometry::{g_matrix, quat_at};
use crate::ids::{ElementId, ModeId};
use crate::model::Load;
use crate::model::{ModeRole, Model};

/// How much of `∂c/∂q`, the velocity forces' partial in the coordinates, a moving
/// linearization forms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VelocityPartials {
    /// All of it: what a collocation's Jacobian (optimal control) needs.
    #[default]
    Exact,
    /// Without `DF_xᵀ M D³F_x(v, v, e_k)` (the masses' part through the velocities'
    /// accelerations), whose third-order transfer functions are most of a moving evaluation's
    /// work (56 % on the shoulder); the rest of `∂c/∂q` is kept. For a W-method's Jacobian (the
    /// forward step), which needs no exact one.
    WithoutThirdOrder,
}

/// The residual of the equations of motion and its partial derivatives at one state.
#[derive(Clone, Debug)]
pub struct MotionLinearization {
    /// `r` (n_q): N m for a hinge coordinate, N for a length.
    pub residual: Vec<f64>,
    /// `∂r/∂v̇ = M̄` (n_q x n_q).
    pub mass: Mat<f64>,
    /// `∂r/∂q` (n_q x n_q).
    pub d_q: Mat<f64>,
    /// `∂r/∂v` (n_q x n_q).
    pub d_v: Mat<f64>,
    /// `D²F_x(v, v)` (n_x, m/s² and 1/s²) at the coordinates of the masses and rotors, 0
    /// elsewhere: the accelerations of the velocities, whose inertia the weights of `d_q` leave
    /// out (the whole `ẍ` adds `DF_x v̇`; [`crate::algorithm::dynamics::kinetostatic_stresses`]).
    pub velocity_accelerations: Vec<f64>,
}

fn mat4_vec(m: &[[f64; 4]; 4], v: &[f64; 4]) -> [f64; 4] {
    four(|a| (0..4).map(|b| m[a][b] * v[b]).sum())
}

/// `[f(0), f(1), f(2), f(3)]`, in a plain loop (`array::map`'s closures were not inlined in the
/// rotors' loop).
#[inline(always)]
fn four(f: impl Fn(usize) -> f64) -> [f64; 4] {
    let mut out = [0.0; 4];
    for (a, o) in out.iter_mut().enumerate() {
        *o = f(a);
    }
    out
}

/// The equations of motion's residual and partials at input coordinates `q` (positions solved
/// by the caller: `data` must hold the solution for `q`), rates `v` and accelerations `vdot`
/// (n_q each), with no driving forces. Computes the first-order transfer functions and sets the
/// velocities `ẋ`, `ė` in `data`; the second-order terms are formed without the whole `D²F`
/// (see the module's doc).
pub fn linearize_motion(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    vdot: &[f64],
) -> Result<MotionLinearization, KinematicsError> {
    linearize_motion_with(model, data, v, vdot, &[])
}

/// [`linearize_motion`], with the geometric stiffness `Σ_k w_k ∂²e_k/∂q²` (n_q x n_q) of forces
/// `w_k` along modes (`geometric = [(mode, w_k)]`, N along a length, N m about an angle) added
/// to `∂r/∂q`. The forces themselves are the caller's (they are not in `r`): a muscle's tension
/// on its path, whose residual term `DF_eᵀ w` and tangent `∂w/∂e` its own model gives. The sum
/// is formed without the modes' second-order transfer functions ([`crate::stiffness`]).
pub fn linearize_motion_with(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    vdot: &[f64],
    geometric: &[(ModeId, f64)],
) -> Result<MotionLinearization, KinematicsError> {
    linearize_motion_loaded(model, data, v, vdot, geometric, &[], VelocityPartials::Exact)
}

/// [`linearize_motion_with`], with `extra` loads (global frame) acting beside the model's own
/// `[loads]` at this configuration: in the residual and, as the model's loads, in `∂r/∂q`
/// (a force moves with its node, a moment's generalized force with its node's Euler
/// parameters), and `∂c/∂q` formed as `partials` says. A load whose value itself depends on
/// the configuration adds the rest of its partial itself.
pub fn linearize_motion_loaded(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    vdot: &[f64],
    geometric: &[(ModeId, f64)],
    extra: &[Load],
    partials: VelocityPartials,
) -> Result<MotionLinearization, KinematicsError> {
    let nq = model.n_q();
    check_rates(model, v, vdot)?;
    transfer::first_order(model, data)?;
    // the laws' elements to second order (for their damping's D²F_e(v, e_k)): the free ones and
    // the constraint elements with a law on a mode the inputs move (a hinge free in a loop)
    let moved = |i: usize| {
        let entry = &model.elements[i];
        (entry.mode_offset..entry.mode_offset + entry.element.layout().n_modes())
            .any(|m| matches!(model.mode_role[m], ModeRole::Dependent))
    };
    let laws: Vec<usize> = (0..model.elements.len())
        .filter(|&i| model.law(ElementId::new(i)).is_some())
        .filter(|&i| model.free_elements.contains(&i) || moved(i))
        .collect();
    evaluate_elements(model, data, &laws, Order::Hessian)?;
    let mass = mass_matrix(model, data)?;
    let nx = model.n_x();
    // the velocities ẋ = DF_x v, ė = DF_e v, and the accelerations' first-order part DF_x v̇,
    // in the kernel's vectors (ẋ, ė are set in `data` at the end)
    let (mut xd, mut ed, mut xa) =
        (std::mem::take(&mut data.xd), std::mem::take(&mut data.ed), std::mem::take(&mut data.work.x_step));
    times(&data.df_x, v, &mut xd);
    times(&data.df_e, v, &mut ed);
    // (DF_x v̇ only where the directions below read it, from DF_x's rows: each entry summed as
    // `times` sums it)
    xa.resize(nx, 0.0);
    for &c in &model.constraint_coords {
        let row = transfer::df_row(data, c);
        xa[c] = match vdot.split_first() {
            Some((w0, rest)) => row[1..].iter().zip(rest).fold(0.0 + row[0] * w0, |s, (a, w)| s + a * w),
            None => 0.0,
        };
    }
    // D²F_x(v, e_k) (columns k) and D²F_x(v̇, e_k) (columns n_q + k) where masses and loads sit:
    // the directions the inertia's partials need; its weighted terms (D²F_x · f) go to the
    // stiffness
    // (the rows written are the same at every step, the others stay 0: see Work::d2_dirs)
    let (mut d2, mut d2e_v) =
        (std::mem::replace(&mut data.work.d2_dirs, Mat::new()), std::mem::take(&mut data.work.d2e_v));
    shaped(&mut d2, nx, 2 * nq);
    // and D³F_x(v, v, e_k), for ∂/∂q of the velocity forces (0 at rest)
    let (moving, mut d3) = (v.iter().any(|a| *a != 0.0), std::mem::replace(&mut data.work.d3, Mat::new()));
    let third = moving && partials == VelocityPartials::Exact;
    let directions = transfer::second_order_directions(model, data, &[&xd, &xa], &model.attachments.dynamic, &mut d2)
        .and_then(|()| if third { transfer3::third_order_with(model, data, v, &xd, &d2, &mut d3) } else { Ok(()) });
    if let Err(e) = directions {
        data.work.d3 = d3;
        data.work.d2_dirs = d2;
        data.work.d2e_v = d2e_v;
        (data.xd, data.ed, data.work.x_step) = (xd, ed, xa);
        return Err(e);
    }
    law_rate_derivatives(model, data, &laws, &xd, &d2, &mut d2e_v);
    let mut xdd = vec![0.0; nx];
    let dynamics = &model.dynamics;
    // D²F_x(v, v) = Σ_k v_k D²F_x(v, e_k)
    let mass_rows =
        || dynamics.masses.iter().map(|&(node, _)| (node, 3)).chain(dynamics.rotors.iter().map(|(node, _)| (*node, 4)));
    for (node, len) in mass_rows() {
        let o = model.nodes[node.index()].offset;
        for (k, vk) in v.iter().enumerate() {
            for (a, d) in xdd[o..o + len].iter_mut().zip(&d2.col_as_slice(k)[o..o + len]) {
                *a += vk * d;
            }
        }
    }
    // DF_xᵀ (f − f_in): loads and the velocity terms (the laws' stresses are added below)
    let (mut net, mut fin) = (std::mem::take(&mut data.work.x_force), std::mem::take(&mut data.work.x_inertia));
    net_forces(model, data, &xd, &xdd, extra, &mut net, &mut fin);
    let df = &data.df_x;
    // the coordinates with a force (masses, loads: a few of n_x)
    let loaded: Vec<(usize, f64)> = net.iter().copied().enumerate().filter(|(_, f)| *f != 0.0).collect();
    (data.work.x_force, data.work.x_inertia) = (net, fin);
    let mut residual: Vec<f64> = (0..nq)
        .map(|i| {
            let inertia: f64 = (0..nq).map(|j| mass[(i, j)] * vdot[j]).sum();
            let col = df.col_as_slice(i);
            inertia - loaded.iter().map(|&(c, f)| col[c] * f).sum::<f64>()
        })
        .collect();
    let mut d_q = Mat::<f64>::zeros(nq, nq);
    let mut d_v = Mat::<f64>::zeros(nq, nq);
    // the forces that weight D²F_x in ∂r/∂q (n_x), and the modes' (laws' stresses)
    let mut weight = std::mem::take(&mut data.work.x_nodal);
    weight.clear();
    weight.resize(nx, 0.0);
    // the velocity forces' inertia weights D²F_x too: c = DF_xᵀ f_in(x, ẋ, D²F_x(v, v))
    for (w, f) in weight.iter_mut().zip(&data.work.x_inertia) {
        *w += f;
    }
    let mut modes: Vec<(ModeId, f64)> = geometric.to_vec();
    // a node's rows of DF_x (n_q values each, one after the other)
    let mut rows = vec![0.0; 4 * nq];
    add_mass_partials(model, data, &d2, vdot, &mut rows, &mut weight, &mut d_q, &mut d_v);
    add_rotor_partials(model, data, &d2, v, vdot, &mut rows, &mut weight, &mut d_q, &mut d_v);
    if moving {
        add_velocity_force_partials(model, data, (&d2, third.then_some(&d3)), [&xd, &xdd], &mut rows, &mut d_q);
    }
    add_load_partials(model, data, extra, &mut rows, &mut weight, &mut d_q);
    add_law_partials(model, data, &ed, &d2e_v, &mut residual, &mut modes, &mut d_q, &mut d_v);
    (data.xd, data.ed, data.work.x_step) = (xd, ed, xa);
    data.qd.copy_from_slice(v);
    data.work.d2_dirs = d2;
    data.work.d2e_v = d2e_v;
    data.work.d3 = d3;
    let stiffness = crate::algorithm::stiffness::add_geometric_stiffness(model, data, &modes, &weight, &mut d_q);
    if stiffness.is_ok() && moving {
        // the force kept for kinetostatics is without the velocities' inertia, which
        // `kinetostatic_stresses` adds itself
        let mut fin = data.work.x_inertia.clone();
        model.attachments.pull_back(&data.att_jac, &mut fin);
        for (f, v) in data.work.stiffness.force.iter_mut().zip(&fin) {
            *f -= v;
        }
    }
    data.work.x_nodal = weight;
    stiffness?;
    Ok(MotionLinearization { residual, mass, d_q, d_v, velocity_accelerations: xdd })
}

/// `v` and `vdot` have one finite entry per input.
fn check_rates(model: &Model, v: &[f64], vdot: &[f64]) -> Result<(), KinematicsError> {
    let nq = model.n_q();
    for w in [v, vdot] {
        if w.len() != nq {
            return Err(KinematicsError::InputLength { expected: nq, got: w.len() });
        }
        if let Some(j) = w.iter().position(|a| !a.is_finite()) {
            return Err(KinematicsError::NonFiniteInput { name: model.input_name(j), value: w[j] });
        }
    }
    Ok(())
}

/// `out = A w` (a column per entry of `w`), its first column written rather than added to
/// zeroed storage.
fn times(a: &Mat<f64>, w: &[f64], out: &mut Vec<f64>) {
    out.clear();
    // the first column written (0 + a w_0: the sums of zeroed storage, without zeroing it)
    let Some((w0, rest)) = w.split_first() else { return out.resize(a.nrows(), 0.0) };
    out.extend(a.col_as_slice(0).iter().map(|av| 0.0 + av * w0));
    for (j, wj) in rest.iter().enumerate() {
        for (o, av) in out.iter_mut().zip(a.col_as_slice(j + 1)) {
            *o += av * wj;
        }
    }
}

/// `D²F_e(v, e_k)` of the laws' modes (rows `n_e`, columns `n_q`, into `d2e_v`), `= ∇e ·
/// D²F_x(v, e_k) + ẋᵀ H DF_x e_k`, with `d2` holding `D²F_x(v, e_k)` in its first `n_q` columns.
fn law_rate_derivatives(model: &Model, data: &Data, laws: &[usize], xd: &[f64], d2: &Mat<f64>, d2e_v: &mut Vec<f64>) {
    let nq = model.n_q();
    let ne = model.n_e();
    d2e_v.resize(ne * nq, 0.0);
    transfer::contract_directions(model, data, laws, &[xd], d2e_v);
    for &el in laws {
        let entry = &model.elements[el];
        for m in entry.mode_offset..entry.mode_offset + entry.element.layout().n_modes() {
            // fixed and input modes have no second derivative
            let dependent = matches!(model.mode_role[m], ModeRole::Dependent);
            for k in 0..nq {
                d2e_v[m * nq + k] = if dependent {
                    d2e_v[m * nq + k] + transfer::mode_gradient_dot(model, data, m, d2.col_as_slice(k))
                } else {
                    0.0
                };
            }
        }
    }
}

/// A node's `len` rows of `DF_x` from coordinate `o` into `rows` (n_q values each, one after
/// the other).
fn rows_of(data: &Data, nq: usize, o: usize, len: usize, rows: &mut [f64]) {
    for (a, dst) in rows[..len * nq].chunks_exact_mut(nq.max(1)).enumerate() {
        dst.copy_from_slice(transfer::df_row(data, o + a));
    }
}

/// The point masses' terms: inertia of `v̇` and gravity through `∂DF/∂q` into the weights of
/// `D²F_x` (`weight`, n_x), their partials into `d_q` and `d_v` (n_q x n_q); `d2` holds
/// `D²F_x(v, e_k)` and `D²F_x(v̇, e_k)`, `rows` is room for 4 n_q.
fn add_mass_partials(
    model: &Model,
    data: &Data,
    d2: &Mat<f64>,
    vdot: &[f64],
    rows: &mut [f64],
    weight: &mut [f64],
    d_q: &mut Mat<f64>,
    d_v: &mut Mat<f64>,
) {
    let nq = model.n_q();
    let dynamics = &model.dynamics;
    for &(node, m) in &dynamics.masses {
        let o = model.nodes[node.index()].offset;
        rows_of(data, nq, o, 3, rows);
        let (r0, r1, r2) = (&rows[..nq], &rows[nq..2 * nq], &rows[2 * nq..3 * nq]);
        let acc: [f64; 3] = [r0, r1, r2].map(|r| r.iter().zip(vdot).map(|(a, b)| a * b).sum());
        let g = dynamics.gravity;
        // inertia of v̇ and gravity through ∂DF/∂q: D²F_x · m (acc − g)
        for a in 0..3 {
            weight[o + a] += m * (acc[a] - g[a]);
        }
        for k in 0..nq {
            let (cv, ca) = (d2.col_as_slice(k), d2.col_as_slice(nq + k));
            let dacc = [ca[o], ca[o + 1], ca[o + 2]];
            let dvel = [cv[o], cv[o + 1], cv[o + 2]];
            let (dq_col, dv_col) = (d_q.col_as_slice_mut(k), d_v.col_as_slice_mut(k));
            for i in 0..nq {
                let (a0, a1, a2) = (r0[i], r1[i], r2[i]);
                // inertia of v̇ through DF
                dq_col[i] += m * a0 * dacc[0] + m * a1 * dacc[1] + m * a2 * dacc[2];
                // c = DFᵀ M D²F(v, v): ∂/∂v_k = 2 DFᵀ M D²F(v, e_k)
                dv_col[i] += 2.0 * m * a0 * dvel[0] + 2.0 * m * a1 * dvel[1] + 2.0 * m * a2 * dvel[2];
            }
        }
    }
}

/// The rotors' terms (Euler parameters' inertia, `M_λ = 4 Ḡ(λ)ᵀ J Ḡ(λ)`): as
/// [`add_mass_partials`], with the velocity term `h(λ̇)`.
fn add_rotor_partials(
    model: &Model,
    data: &Data,
    d2: &Mat<f64>,
    v: &[f64],
    vdot: &[f64],
    rows: &mut [f64],
    weight: &mut [f64],
    d_q: &mut Mat<f64>,
    d_v: &mut Mat<f64>,
) {
    let nq = model.n_q();
    let (dynamics, x) = (&model.dynamics, &data.x);
    for (node, j) in &dynamics.rotors {
        let o = model.nodes[node.index()].offset;
        rows_of(data, nq, o, 4, rows);
        let l = quat_at(x, o);
        let ml = rotational_mass(&l, j);
        let row = |a: usize| &rows[a * nq..(a + 1) * nq];
        let dot = |a: usize, w: &[f64]| -> f64 { row(a).iter().zip(w).map(|(p, q)| p * q).sum() };
        let acc = four(|a| dot(a, vdot));
        let ld = four(|a| dot(a, v));
        let m_acc = acc;
        // H(a, b) = 8 Ḡ(a)ᵀ J Ḡ(λ) b, h(λ̇) = H(λ̇, λ̇)
        let jg_ld = j_gbar_times(j, &l, &ld);
        let jg_acc = j_gbar_times(j, &l, &m_acc);
        let ml_acc = mat4_vec(&ml, &m_acc);
        for a in 0..4 {
            weight[o + a] += ml_acc[a];
        }
        for k in 0..nq {
            let dl = four(|a| row(a)[k]);
            // ∂M_λ/∂q_k = 4 (Ḡ(δλ)ᵀ J Ḡ(λ) + Ḡ(λ)ᵀ J Ḡ(δλ)), times the acceleration
            let (p1, p2) = (gbar_t_times(&dl, &jg_acc), gbar_t_j_gbar_times(&l, j, &dl, &m_acc));
            let dm_acc = four(|a| 4.0 * (p1[a] + p2[a]));
            let (cv, ca) = (d2.col_as_slice(k), d2.col_as_slice(nq + k));
            let m_dacc = mat4_vec(&ml, &[ca[o], ca[o + 1], ca[o + 2], ca[o + 3]]);
            // ∂h/∂λ̇ · δ = 8 Ḡ(δ)ᵀ J Ḡ(λ) λ̇ + 8 Ḡ(λ̇)ᵀ J Ḡ(λ) δ, with δ = DF_λ e_k
            let (h1, h2) = (gbar_t_times(&dl, &jg_ld), gbar_t_j_gbar_times(&ld, j, &l, &dl));
            let dh = four(|a| 8.0 * (h1[a] + h2[a]));
            let m_dvel = mat4_vec(&ml, &[cv[o], cv[o + 1], cv[o + 2], cv[o + 3]]);
            let tq = four(|a| dm_acc[a] + m_dacc[a]);
            let tv = four(|a| 2.0 * m_dvel[a] + dh[a]);
            let (dq_col, dv_col) = (d_q.col_as_slice_mut(k), d_v.col_as_slice_mut(k));
            for i in 0..nq {
                let dfi = [rows[i], rows[nq + i], rows[2 * nq + i], rows[3 * nq + i]];
                dq_col[i] += dfi[0] * tq[0] + dfi[1] * tq[1] + dfi[2] * tq[2] + dfi[3] * tq[3];
                dv_col[i] += dfi[0] * tv[0] + dfi[1] * tv[1] + dfi[2] * tv[2] + dfi[3] * tv[3];
            }
        }
    }
}

/// `DF_xᵀ ∂f_in/∂q_k` of the velocity forces `f_in(x, ẋ, ẍ_v)` at the masses and rotors, into
/// `d_q`: through `ẍ_v = D²F_x(v, v)` (`d3` holds `D³F_x(v, v, e_k)`; that term is left out
/// when it is `None`), through `ẋ = DF_x v` (`d2` holds `D²F_x(v, e_k)`) and, for a rotor,
/// through `λ` (`M_λ` and `h`); `(d2, d3)` n_x x n_q, `[ẋ, D²F_x(v, v)]` (n_x each); `rows` is
/// room for 4 n_q. (`D²F_xᵀ f_in` goes with the weights.)
fn add_velocity_force_partials(
    model: &Model,
    data: &Data,
    (d2, d3): (&Mat<f64>, Option<&Mat<f64>>),
    [xd, xvv]: [&[f64]; 2],
    rows: &mut [f64],
    d_q: &mut Mat<f64>,
) {
    let nq = model.n_q();
    let (dynamics, x) = (&model.dynamics, &data.x);
    let mut add = |o: usize, len: usize, rows: &mut [f64], t: &[f64], k: usize| {
        rows_of(data, nq, o, len, rows);
        for (i, d) in d_q.col_as_slice_mut(k).iter_mut().enumerate() {
            *d += (0..len).map(|a| rows[a * nq + i] * t[a]).sum::<f64>();
        }
    };
    // a mass's f_in = m ẍ_v: its part is D³F's alone
    let masses = d3.map(|d3| dynamics.masses.iter().map(move |&(node, m)| (node, m, d3))).into_iter().flatten();
    for (node, m, d3) in masses {
        let o = model.nodes[node.index()].offset;
        for k in 0..nq {
            let t = [0, 1, 2].map(|a| m * d3[(o + a, k)]);
            add(o, 3, rows, &t, k);
        }
    }
    for (node, j) in &dynamics.rotors {
        let o = model.nodes[node.index()].offset;
        let (l, ld, la) = (quat_at(x, o), quat_at(xd, o), quat_at(xvv, o));
        let jg_ld = j_gbar_times(j, &l, &ld);
        let jg_la = j_gbar_times(j, &l, &la);
        for k in 0..nq {
            let dl = four(|a| data.df_x[(o + a, k)]);
            let dld = four(|a| d2[(o + a, k)]);
            // f_in = 4 Ḡ(λ)ᵀ J Ḡ(λ) ẍ_λ + 8 Ḡ(λ̇)ᵀ J Ḡ(λ) λ̇, differentiated in λ, λ̇ and ẍ_λ
            let (m1, m2) = (gbar_t_times(&dl, &jg_la), gbar_t_j_gbar_times(&l, j, &dl, &la));
            let m3 = d3.map_or([0.0; 4], |d3| gbar_t_j_gbar_times(&l, j, &l, &four(|a| d3[(o + a, k)])));
            let (h1, h2, h3) = (
                gbar_t_j_gbar_times(&ld, j, &dl, &ld),
                gbar_t_times(&dld, &jg_ld),
                gbar_t_j_gbar_times(&ld, j, &l, &dld),
            );
            let t = four(|a| 4.0 * (m1[a] + m2[a] + m3[a]) + 8.0 * (h1[a] + h2[a] + h3[a]));
            add(o, 4, rows, &t, k);
        }
    }
}

/// Constant loads: forces are constant, so only `∂DF/∂q`; a moment's `f_λ = 2 G(λ)ᵀ M` moves
/// with `λ`.
fn add_load_partials(
    model: &Model,
    data: &Data,
    extra: &[Load],
    rows: &mut [f64],
    weight: &mut [f64],
    d_q: &mut Mat<f64>,
) {
    let nq = model.n_q();
    let x = &data.x;
    for load in model.dynamics.loads.iter().chain(extra) {
        let (node, moment, force) = match *load {
            Load::Force { node, force } => (node, None, Some(force)),
            Load::Moment { node, moment } => (node, Some(moment), None),
        };
        let o = model.nodes[node.index()].offset;
        if let Some(f) = force {
            for a in 0..3 {
                weight[o + a] -= f[a];
            }
        }
        if let Some(mm) = moment {
            let g = g_matrix(&quat_at(x, o));
            let f: [f64; 4] = [0, 1, 2, 3].map(|c| 2.0 * (0..3).map(|i| g[i][c] * mm[i]).sum::<f64>());
            for a in 0..4 {
                weight[o + a] -= f[a];
            }
            rows_of(data, nq, o, 4, rows);
            for k in 0..nq {
                let gd = g_matrix(&[0, 1, 2, 3].map(|a| rows[a * nq + k]));
                let df_load: [f64; 4] = [0, 1, 2, 3].map(|c| 2.0 * (0..3).map(|i| gd[i][c] * mm[i]).sum::<f64>());
                let dq_col = d_q.col_as_slice_mut(k);
                for i in 0..nq {
                    dq_col[i] -= (0..4).map(|a| rows[a * nq + i] * df_load[a]).sum::<f64>();
                }
            }
        }
    }
}

/// The laws' terms, `r ∋ DF_eᵀ σ(e, ė)` with `ė = DF_e v` (`ed`): the stresses into the
/// residual and, as weights of their modes, into `modes` (the stiffness's); `∂σ/∂q`, `∂σ/∂v`
/// through `DF_e` into `d_q`, `d_v`; `d2e_v` holds `D²F_e(v, e_k)`.
fn add_law_partials(
    model: &Model,
    data: &Data,
    ed: &[f64],
    d2e_v: &[f64],
    residual: &mut [f64],
    modes: &mut Vec<(ModeId, f64)>,
    d_q: &mut Mat<f64>,
    d_v: &mut Mat<f64>,
) {
    let nq = model.n_q();
    let dfe = &data.df_e;
    // sized once for the element with the most modes (grown element by element, they were
    // reallocated and copied every step)
    let most = (0..model.elements.len())
        .filter(|&el| model.law(ElementId::new(el)).is_some())
        .map(|el| model.elements[el].element.layout().n_modes())
        .max()
        .unwrap_or(0);
    let cap = |len: usize| Vec::<f64>::with_capacity(len);
    let (mut sigma, mut ks, mut cs) = (cap(most), cap(most * most), cap(most * most));
    let (mut dsig, mut dsig_v, mut erows) = (cap(most), cap(most), cap(most * nq));
    let mut free = Vec::with_capacity(most);
    let (mut tq, mut tv) = (vec![0.0; nq], vec![0.0; nq]);
    for (el, entry) in model.elements.iter().enumerate() {
        let Some(law) = model.law(ElementId::new(el)) else { continue };
        let n = entry.element.layout().n_modes();
        let r = entry.mode_offset..entry.mode_offset + n;
        sigma.resize(n, 0.0);
        ks.resize(n * n, 0.0);
        cs.resize(n * n, 0.0);
        law.stress(&data.e[r.clone()], &ed[r.clone()], &mut sigma);
        law.tangent(&data.e[r.clone()], &ed[r.clone()], &mut ks, &mut cs);
        // rigid modes carry reactions, not the law's stresses (as in law_stresses)
        free.clear();
        for (a, m) in r.clone().enumerate() {
            if matches!(model.mode_role[m], ModeRole::Fixed(_)) {
                sigma[a] = 0.0;
                ks[a * n..(a + 1) * n].fill(0.0);
                cs[a * n..(a + 1) * n].fill(0.0);
            } else {
                free.push(a);
            }
        }
        let o = entry.mode_offset;
        // the element's rows of DF_e (n_q values each)
        erows.clear();
        erows.extend((0..n).flat_map(|a| (0..nq).map(move |i| (a, i))).map(|(a, i)| dfe.col_as_slice(i)[o + a]));
        for (i, ri) in residual.iter_mut().enumerate() {
            *ri += (0..n).map(|a| erows[a * nq + i] * sigma[a]).sum::<f64>();
        }
        // the elastic term D²F_eᵀ σ: the stresses weight their modes in the stiffness
        modes.extend((0..n).map(|a| (ModeId::new(o + a), sigma[a])));
        // over the free modes only: a fixed mode's DF_e row, D²F_e(v, ·), stiffness and damping
        // rows are 0, and its terms ±0, which leave every sum as it is
        for k in 0..nq {
            // ∂σ/∂q_k = K DF_e e_k + C D²F_e(v, e_k)
            let d2k = |b: usize| d2e_v[(o + b) * nq + k];
            dsig.clear();
            dsig.extend(free.iter().map(|&a| {
                free.iter().map(|&b| ks[a * n + b] * erows[b * nq + k] + cs[a * n + b] * d2k(b)).sum::<f64>()
            }));
            dsig_v.clear();
            dsig_v.extend(free.iter().map(|&a| free.iter().map(|&b| cs[a * n + b] * erows[b * nq + k]).sum::<f64>()));
            // DF_eᵀ ∂σ/∂q_k and DF_eᵀ ∂σ/∂v_k, each entry summed over the free modes in order,
            // a mode's row at a time (contiguous), then added
            tq.fill(0.0);
            tv.fill(0.0);
            for ((&a, ds), dsv) in free.iter().zip(&dsig).zip(&dsig_v) {
                for ((q, v), e) in tq.iter_mut().zip(tv.iter_mut()).zip(&erows[a * nq..(a + 1) * nq]) {
                    *q += e * ds;
                    *v += e * dsv;
                }
            }
            for (d, t) in d_q.col_as_slice_mut(k).iter_mut().zip(&tq) {
                *d += t;
            }
            for (d, t) in d_v.col_as_slice_mut(k).iter_mut().zip(&tv) {
                *d += t;
            }
        }
    }
}
