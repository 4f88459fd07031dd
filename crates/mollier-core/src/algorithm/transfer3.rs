//! Third-order geometric transfer functions in a direction, `D³F_x(v, v, e_k)` for every input
//! `k`: what `∂/∂q` of the velocity forces `c = DF_xᵀ M D²F_x(v, v)` needs.
//!
//! Differentiating the constraints `e_r(x(q)) = const` three times, along `v`, `v` and `w`
//! (the SPACAR structure of van der Helm 1994, eq. 3-5, one order further):
//! ```text
//! D_cc x_vvw = −[ ∇e_r · x_vvw|known + H_r(x_vv, x_w) + 2 H_r(x_vw, x_v) + T_r(x_v, x_v, x_w) ]_r
//! ```
//! with `x_v = DF_x v`, `x_vv = D²F_x(v, v)`, `x_w = DF_x w`, `x_vw = D²F_x(v, w)` and `T_r` the
//! element's third derivatives. The bracket is one evaluation of each constraint element over
//! hyper-hyper-dual numbers (`x + ε1 x_v + ε2 x_v + ε3 x_w + ε1ε2 x_vv + (ε1ε3 + ε2ε3) x_vw +
//! ε1ε2ε3 x_vvw|known`: its `ε1ε2ε3` part), on the element's own coordinates
//! ([`crate::element::Element::third_order`]). `x_vvw|known` is 0 on the dependent coordinates
//! (the solve's unknowns) and, on attached ones, the part their frames' rates give without
//! their own third order: an attached point `p = o + R(λ) r` is quadratic in `λ`, so
//! `p_vvw = o_vvw + J λ_vvw + B(λ_vv, λ_w) + 2 B(λ_vw, λ_v)` (`B` the bilinear second
//! derivative of the attachments). One solve with `D_cc`'s factors, `n_q` right-hand
//! sides.
//!
//! Which elements give third order: every built-in element written over
//! [`crate::element::Deformations`] (truss, hinge, beam, surface, Engin joint,
//! cardan and flexion-torsion joints, joint stop, soft contact) by dual numbers, and the
//! Euler-parameter norm in closed form. A constraint element without it is refused.

use faer::Mat;
use num_dual::HyperHyperDual64;

use crate::algorithm::error::KinematicsError;
use crate::algorithm::solve::solve_unchecked;
use crate::algorithm::transfer::{first_order, second_order_directions};
use crate::data::{Data, shaped};
use crate::element::ElementError;
use crate::model::Model;

/// `D³F_x(v, v, e_k)` (n_x x n_q, column `k`; m/rad³ or 1/rad³ per coordinate) at the solved
/// configuration, for input rates `v` (n_q), into `out`. Forms `DF` and `D²F_x(v, e_k)` first.
pub fn third_order(model: &Model, data: &mut Data, v: &[f64], out: &mut Mat<f64>) -> Result<(), KinematicsError> {
    let mut b = std::mem::take(&mut data.work.third);
    let result = third_order_whole(model, data, v, out, &mut b);
    data.work.third = b;
    result
}

/// [`third_order`] in `b`'s buffers, every attached row formed; leaves `x_v` and `x_vv` (with
/// their attached rows) in `b.xv`, `b.xvv`.
fn third_order_whole(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    out: &mut Mat<f64>,
    b: &mut Buffers,
) -> Result<(), KinematicsError> {
    if v.len() != model.n_q() {
        return Err(KinematicsError::InputLength { expected: model.n_q(), got: v.len() });
    }
    first_order(model, data)?;
    let (nx, nq) = (model.n_x(), model.n_q());
    let (mut xv, mut d2) = (std::mem::take(&mut b.xv_in), std::mem::replace(&mut b.d2, Mat::new()));
    xv.clear();
    xv.resize(nx, 0.0);
    for (k, vk) in v.iter().enumerate() {
        for (a, d) in xv.iter_mut().zip(data.df_x.col_as_slice(k)) {
            *a += vk * d;
        }
    }
    shaped(&mut d2, nx, nq);
    d2.fill(0.0);
    b.which.clear();
    b.which.extend(0..model.attachments.list.len());
    let result = second_order_directions(model, data, &[&xv], &b.which, &mut d2)
        .and_then(|()| third_order_in(model, data, v, &xv, &d2, out, b));
    (b.xv_in, b.d2) = (xv, d2);
    result
}

/// Modes' derivatives along input rates `v` (n_q) to third order at the solved configuration:
/// per mode of `modes`, `[De · v, D²e(v, v), D³e(v, v, v)]` (m or rad per unit of `v`, its
/// square and cube), into `out` (cleared first). The coordinates' jets `x_v = DF_x v`,
/// `x_vv = D²F_x(v, v)` and `x_vvv = D³F_x(v, v, v)` ([`third_order`]) are carried through each
/// mode's element by one hyper-hyper-dual evaluation (`ε1 = ε2 = ε3` along `v`:
/// [`crate::element::Element::third_order`]), so any element the kernel differentiates three
/// times serves, free elements (muscles' paths) included: what a muscle's terms in the Hessian
/// of an optimal control problem need of its path, `L'`, `L''`, `L'''` for one input.
/// The configuration's free elements must be placed (their points' coordinates in `data`).
/// The work space is `data`'s: nothing is allocated once `data` and `out` have their sizes.
pub fn mode_jets(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    modes: &[crate::ids::ModeId],
    out: &mut Vec<[f64; 3]>,
) -> Result<(), KinematicsError> {
    let mut b = std::mem::take(&mut data.work.third);
    let mut d3 = std::mem::replace(&mut b.d3, Mat::new());
    let result = third_order_whole(model, data, v, &mut d3, &mut b)
        .and_then(|()| jets_in(model, data, v, &d3, modes, out, &mut b));
    b.d3 = d3;
    data.work.third = b;
    result
}

/// [`mode_jets`] from `d3` = `D³F_x(v, v, e_k)` and `b.xv`, `b.xvv` as [`third_order_whole`]
/// leaves them.
fn jets_in(
    model: &Model,
    data: &Data,
    v: &[f64],
    d3: &Mat<f64>,
    modes: &[crate::ids::ModeId],
    out: &mut Vec<[f64; 3]>,
    b: &mut Buffers,
) -> Result<(), KinematicsError> {
    let Buffers { xv, xvv, z: xvvv, own, e, .. } = b;
    xvvv.clear();
    xvvv.resize(model.n_x(), 0.0);
    for (k, vk) in v.iter().enumerate() {
        for (a, t) in xvvv.iter_mut().zip(d3.col_as_slice(k)) {
            *a += vk * t;
        }
    }
    out.clear();
    for &m in modes {
        let (el, k) = model.mode_owner(m);
        let entry = &model.elements[el.index()];
        own.clear();
        own.extend(
            entry
                .own
                .iter()
                .map(|&c| HyperHyperDual64::new(data.x[c], xv[c], xv[c], xv[c], xvv[c], xvv[c], xvv[c], xvvv[c])),
        );
        e.clear();
        e.resize(entry.element.layout().n_modes(), HyperHyperDual64::from(0.0));
        let element_error = |error| KinematicsError::Element { element: entry.name.clone(), error };
        if !entry.element.third_order(own, e).map_err(element_error)? {
            let why = format!("`{}` has no third-order derivatives (Element::third_order)", entry.element.type_name());
            return Err(element_error(ElementError::Other(why)));
        }
        out.push([e[k].eps1, e[k].eps1eps2, e[k].eps1eps2eps3]);
    }
    Ok(())
}

/// The third-order scratch, kept in `Data`'s work space so that a moving linearization and
/// [`mode_jets`] allocate nothing: `x_v`, `x_vv`, `x_vw`, a product (n_x each), the
/// constraints' right-hand sides (n_unknowns x n_q), the attached rows' known part
/// (n_x x n_q), one element's dual coordinates and modes, the attachments formed; for
/// [`third_order`] its `x_v` input (n_x) and `D²F_x(v, e_k)` (n_x x n_q), for [`mode_jets`]
/// `D³F_x(v, v, e_k)` (n_x x n_q).
#[derive(Clone)]
pub(crate) struct Buffers {
    xv: Vec<f64>,
    xvv: Vec<f64>,
    xvw: Vec<f64>,
    z: Vec<f64>,
    rhs: Mat<f64>,
    known: Mat<f64>,
    own: Vec<HyperHyperDual64>,
    e: Vec<HyperHyperDual64>,
    which: Vec<usize>,
    xv_in: Vec<f64>,
    d2: Mat<f64>,
    d3: Mat<f64>,
}

impl Default for Buffers {
    fn default() -> Self {
        let (xv, xvv, xvw, z, own, e, which, xv_in) = Default::default();
        let (rhs, known, d2, d3) = (Mat::new(), Mat::new(), Mat::new(), Mat::new());
        Self { xv, xvv, xvw, z, rhs, known, own, e, which, xv_in, d2, d3 }
    }
}

/// [`third_order`] from `x_v = DF_x v` (n_x) and `d2`, whose first `n_q` columns are
/// `D²F_x(v, e_k)` (n_x each; their dependent rows are read, the attached ones formed here), at
/// a configuration whose `DF` is current ([`first_order`]), with the attached rows a
/// linearization reads: those of the constraint elements and of the nodes with a mass or a
/// load (their ancestors with them). The other attached rows of `out` are 0: on a
/// musculoskeletal model they are most (the muscles' path points), and forming them for every
/// input was a third of the work.
pub(crate) fn third_order_with(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    xv: &[f64],
    d2: &Mat<f64>,
    out: &mut Mat<f64>,
) -> Result<(), KinematicsError> {
    // the scratch out of `data` (so that `data` can be passed on), put back whatever happens
    let mut b = std::mem::take(&mut data.work.third);
    let att = &model.attachments;
    // both lists are in list order, parents first: so is their sorted union
    b.which.clear();
    b.which.extend(att.constraining.iter().chain(&att.dynamic).copied());
    b.which.sort_unstable();
    b.which.dedup();
    let result = third_order_in(model, data, v, xv, d2, out, &mut b);
    data.work.third = b;
    result
}

/// [`third_order_with`]'s work, in `b`'s buffers, the attached rows of the attachments
/// `b.which` (list order) formed.
fn third_order_in(
    model: &Model,
    data: &mut Data,
    v: &[f64],
    xv_in: &[f64],
    d2: &Mat<f64>,
    out: &mut Mat<f64>,
    b: &mut Buffers,
) -> Result<(), KinematicsError> {
    let (nx, nq, nc) = (model.n_x(), model.n_q(), model.n_unknowns());
    let (att, jac) = (&model.attachments, &data.att_jac);
    let Buffers { xv, xvv, xvw, z, rhs, known, own, e, which, .. } = b;
    let which = &which[..];
    xv.clear();
    xv.extend_from_slice(xv_in);
    for &t in which {
        att.rates_of(t, jac, xv, None);
    }
    // x_vv = Σ_k v_k D²F_x(v, e_k), its attached rows from their frames'
    xvv.clear();
    xvv.resize(nx, 0.0);
    for (k, vk) in v.iter().enumerate() {
        for (a, d) in xvv.iter_mut().zip(d2.col_as_slice(k)) {
            *a += vk * d;
        }
    }
    att.second_of(which, jac, xvv, xv, xv);
    // the rows no element writes stay 0; the solve overwrites the rest: zeroed at each use
    shaped(rhs, nc, nq);
    rhs.fill(0.0);
    // per input: x_vw with its attached rows, and x_vvw|known (attached rows only)
    shaped(known, nx, nq);
    known.fill(0.0);
    xvw.resize(nx, 0.0);
    z.resize(nx, 0.0);
    for k in 0..nq {
        let xw = data.df_x.col_as_slice(k);
        xvw.copy_from_slice(&d2.col_as_slice(k)[..nx]);
        att.second_of(which, jac, xvw, xv, xw);
        let n = known.col_as_slice_mut(k);
        att.second_of(which, jac, n, xvv, xw);
        z.fill(0.0);
        att.second_of(which, jac, z, xvw, xv);
        for (a, w) in n.iter_mut().zip(z.iter()) {
            *a += 2.0 * w;
        }
        let n = known.col_as_slice(k);
        let col = rhs.col_as_slice_mut(k);
        for &i in &model.constraint_elements {
            let entry = &model.elements[i];
            if entry.own.iter().all(|&c| xw[c] == 0.0 && xvw[c] == 0.0 && n[c] == 0.0) {
                continue;
            }
            own.clear();
            own.extend(
                entry
                    .own
                    .iter()
                    .map(|&c| HyperHyperDual64::new(data.x[c], xv[c], xv[c], xw[c], xvv[c], xvw[c], xvw[c], n[c])),
            );
            e.clear();
            e.resize(entry.element.layout().n_modes(), HyperHyperDual64::from(0.0));
            let provided = entry.element.third_order(own, e);
            let element_error = |error| KinematicsError::Element { element: entry.name.clone(), error };
            if !provided.map_err(element_error)? {
                let why =
                    format!("`{}` has no third-order derivatives (Element::third_order)", entry.element.type_name());
                return Err(element_error(ElementError::Other(why)));
            }
            for (a, ea) in e.iter().enumerate() {
                if let Some(r) = model.mode_row[entry.mode_offset + a] {
                    col[r] = -ea.eps1eps2eps3;
                }
            }
        }
    }
    solve_unchecked(model, data, rhs.as_mut())?;
    shaped(out, nx, nq);
    for k in 0..nq {
        let dst = out.col_as_slice_mut(k);
        dst.fill(0.0);
        for (d, &c) in rhs.col_as_slice(k).iter().zip(&model.dependent_coords) {
            dst[c] = *d;
        }
        for &t in which {
            att.rates_of(t, &data.att_jac, dst, None);
        }
        for (a, w) in dst.iter_mut().zip(known.col_as_slice(k)) {
            *a += w;
        }
    }
    Ok(())
}
