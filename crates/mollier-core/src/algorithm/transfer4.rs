//! Fourth-order transfer functions as multilinear jets, and the second partials of the
//! equations of motion they give: what the exact Hessian of an optimal control problem's
//! Lagrangian needs of a chain (`∂²M̄/∂q²`, `∂²Q/∂q²` and `∂²c/∂q²`, the last with
//! `D⁴F_x(v, v, ·, ·)`).
//!
//! **Jets.** Let the inputs follow `q(ε)`, a polynomial in four nilpotent infinitesimals
//! `ε1..ε4` (`ε_i² = 0`), given by its mixed derivatives `q_S = ∂_S q` for every subset `S` of
//! them. The coordinates `x(q(ε))` then have mixed derivatives `x_S`, found subset by subset in
//! order of size from the constraints `e_r(x) = target_r(q)` (van der Helm 1994, eq. 3-5, carried
//! to any order): with `x_S` provisionally `DF_x q_S` plus the attached nodes' known part,
//! ```text
//! D_cc y_S = target_r,S − [e_r(x(ε))]_S,     x_S = DF_x q_S + known_S + y_S
//! ```
//! where `[·]_S` is the `ε^S` part of one evaluation of each constraint element over [`Jet4`]
//! ([`crate::element::Element::fourth_order`]). An attached point `p = o + R(λ) r` is quadratic
//! in `λ`, so `known_S = Σ B(λ_A, λ_B)` over the splits of `S` into two nonempty parts `{A, B}`
//! (`B` the attachments' bilinear second derivative). One solve with `D_cc`'s factors per subset,
//! but none where `x_S` is 0 by the others: `q_S = 0` and every partition of `S` into two or more
//! blocks has a block whose jet is 0 (a direction of the rates moves no position: along it
//! `x_{ε1} = 0`). Of the attached points only those read are formed: the constraint elements',
//! the masses' and loads' (the equations of motion), the asked modes' elements' ([`mode_parts`]).
//!
//! **The Hessian of the equations of motion.** With `w = DF_x μ` (`μ` the multipliers of the
//! equations of motion), `ẋ = DF_x q̇`, `ẍ = DF_x q̈ + D²F_x(q̇, q̇)`, the power
//! `μᵀ DF_xᵀ (f_in(x, ẋ, ẍ) − f_ext(x)) = wᵀ (f_in − f_ext)` is a closed-form function of
//! `(x, ẋ, ẍ, w)`. Its second partial in two directions `a`, `b` of `(q, q̇, q̈)` is the `ε1ε2`
//! part of that function over hyper-dual numbers whose parts are the jets of
//! `q(ε) = q + ε1 a_q + ε2 b_q + τ (q̇ + ε1 a_q̇ + ε2 b_q̇) + τ²/2 (q̈ + ε1 a_q̈ + ε2 b_q̈)` with
//! `τ = ε3 + ε4` (so that `ẋ = x_{ε3}`, `ẍ = x_{ε3ε4}`), and of `q + ε1 a_q + ε2 b_q + ε3 μ`
//! for `w`: exact, no differences.

use faer::Mat;
use num_dual::{Dual64, HyperDual64, HyperHyperDual, HyperHyperDual64};

use crate::algorithm::error::KinematicsError;
use crate::algorithm::solve::solve_unchecked;
use crate::algorithm::transfer::first_order;
use crate::data::Data;
use crate::element::{ElementError, Jet4};
use crate::geometry::{g_matrix, gbar_matrix};
use crate::ids::ModeId;
use crate::model::{Load, Model, RowTarget};
use crate::scalar::Real;

/// Subsets of the four infinitesimals: bit `i` for `ε_{i+1}`.
const SUBSETS: usize = 16;

/// A [`Jet4`] from its mixed derivatives by subset (`c(S)`).
pub(crate) fn jet(c: impl Fn(usize) -> f64) -> Jet4 {
    let d = |t: usize| Dual64::new(c(t), c(t | 8));
    HyperHyperDual::new(d(0), d(1), d(2), d(4), d(3), d(5), d(6), d(7))
}

/// The mixed derivative of `j` over subset `s`.
pub(crate) fn part(j: &Jet4, s: usize) -> f64 {
    let d = match s & 7 {
        0 => j.re,
        1 => j.eps1,
        2 => j.eps2,
        3 => j.eps1eps2,
        4 => j.eps3,
        5 => j.eps1eps3,
        6 => j.eps2eps3,
        _ => j.eps1eps2eps3,
    };
    if s & 8 == 0 { d.re } else { d.eps }
}

/// Whether every constraint element gives [`crate::element::Element::fourth_order`] (evaluated
/// at the model's reference configuration), or the first that does not, by name.
pub fn supported(model: &Model) -> Result<(), String> {
    supported_elements(model, model.constraint_elements.iter().copied())
}

/// Whether the elements of `modes` (muscles' paths, say) give fourth order, as [`supported`]
/// asks of the constraint elements, and third order ([`mode_parts`] evaluates them over either);
/// the error names the first that does not.
pub fn supported_modes(model: &Model, modes: &[ModeId]) -> Result<(), String> {
    supported_elements(model, modes.iter().map(|&m| model.mode_owner(m).0.index()))?;
    for &m in modes {
        let entry = &model.elements[model.mode_owner(m).0.index()];
        let own: Vec<HyperHyperDual64> = entry.own.iter().map(|&c| HyperHyperDual64::from(model.x0[c])).collect();
        let mut e = vec![HyperHyperDual64::from(0.0); entry.element.layout().n_modes()];
        if !matches!(entry.element.third_order(&own, &mut e), Ok(true)) {
            return Err(format!(
                "element `{}` (`{}`) has no third-order derivatives (Element::third_order)",
                entry.name,
                entry.element.type_name()
            ));
        }
    }
    Ok(())
}

fn supported_elements(model: &Model, elements: impl Iterator<Item = usize>) -> Result<(), String> {
    let mut e = Vec::new();
    for i in elements {
        let entry = &model.elements[i];
        let own: Vec<Jet4> = entry.own.iter().map(|&c| Jet4::from(model.x0[c])).collect();
        e.clear();
        e.resize(entry.element.layout().n_modes(), Jet4::from(0.0));
        if !matches!(entry.element.fourth_order(&own, &mut e), Ok(true)) {
            return Err(format!(
                "element `{}` (`{}`) has no fourth-order derivatives (Element::fourth_order)",
                entry.name,
                entry.element.type_name()
            ));
        }
    }
    Ok(())
}

/// The coordinates' mixed derivatives `x_S` (n_x each, m per unit of the inputs' parts) of the
/// inputs' jet `q` (per subset `S`, its `q_S`: n_q values, or none for 0; `q[0]` unread: the
/// solved configuration), for the subsets of `used` (a bit mask), into `out` (16 vectors; `out[0]`
/// the configuration, the subsets outside `used` 0). The configuration in `data` must be solved
/// and its attached nodes placed.
pub fn subset_jets(
    model: &Model,
    data: &mut Data,
    q: &[Vec<f64>],
    used: usize,
    out: &mut Vec<Vec<f64>>,
) -> Result<(), KinematicsError> {
    first_order(model, data)?;
    let (nx, nq) = (model.n_x(), model.n_q());
    if q.len() != SUBSETS || q.iter().any(|qs| !qs.is_empty() && qs.len() != nq) {
        let got = q.iter().map(Vec::len).find(|&l| l != 0 && l != nq).unwrap_or(q.len());
        return Err(KinematicsError::InputLength { expected: nq, got });
    }
    out.clear();
    out.resize(SUBSETS, vec![0.0; nx]);
    out[0].copy_from_slice(&data.x);
    let mut order: Vec<usize> = (1..SUBSETS).filter(|s| s & !used == 0).collect();
    order.sort_by_key(|s| s.count_ones());
    let every: Vec<usize> = (0..model.attachments.list.len()).collect();
    fill_subsets(model, data, q, &order, &every, out)
}

/// The attachments whose nodes' jets are read (in list order, ancestors included): those the
/// constraint elements need and `more` (ancestors included). The others (a muscle's points,
/// where no path is asked for) are left unformed.
fn attachments_with(model: &Model, more: &[usize]) -> Vec<usize> {
    let mut set: Vec<usize> = model.attachments.constraining.iter().chain(more).copied().collect();
    set.sort_unstable();
    set.dedup();
    set
}

/// [`subset_jets`]' work for the subsets `order` (each after its proper subsets, which `out`
/// holds already: computed here before it, or given), `DF_x` formed; of the attached nodes only
/// those of the attachments `att` (in list order, ancestors included: at least the constraint
/// elements' ones) are formed.
fn fill_subsets(
    model: &Model,
    data: &mut Data,
    q: &[Vec<f64>],
    order: &[usize],
    att: &[usize],
    out: &mut [Vec<f64>],
) -> Result<(), KinematicsError> {
    let (nx, nc) = (model.n_x(), model.n_unknowns());
    let (mut xs, mut tmp) = (vec![0.0; nx], vec![0.0; nx]);
    let mut rhs = Mat::<f64>::zeros(nc, 1);
    let (mut own, mut e) = (Vec::new(), Vec::new());
    let mut moved: [bool; SUBSETS] = std::array::from_fn(|t| t > 0 && out[t].iter().any(|&v| v != 0.0));
    for &s in order {
        // x_S is 0 where q_S is and every product of the jets of a partition of S has a factor 0
        if q[s].iter().all(|&v| v == 0.0) && !split_moves(s, &moved) {
            out[s].fill(0.0);
            moved[s] = false;
            continue;
        }
        xs.fill(0.0);
        for (k, &qk) in q[s].iter().enumerate() {
            for (a, d) in xs.iter_mut().zip(data.df_x.col_as_slice(k)) {
                *a += qk * d;
            }
        }
        // the attachments' quadratic part: each split {A, B} once (A holds S's lowest bit)
        let low = s & s.wrapping_neg();
        let mut a = (s - 1) & s;
        while a != 0 {
            if a & low != 0 {
                tmp.fill(0.0);
                model.attachments.second_of(att, &data.att_jac, &mut tmp, &out[a], &out[s ^ a]);
                xs.iter_mut().zip(&tmp).for_each(|(x, t)| *x += t);
            }
            a = (a - 1) & s;
        }
        rhs.fill(0.0);
        for &i in &model.constraint_elements {
            let entry = &model.elements[i];
            let x = |t: usize, c: usize| if t == s { xs[c] } else { out[t][c] };
            // its part over S is 0 when one of S's infinitesimals moves none of its coordinates
            // (every subset of S with it 0 there): every term of the part has such a factor
            let still = |bit: usize| {
                let mut t = s;
                loop {
                    if t & bit != 0 && entry.own.iter().any(|&c| x(t, c) != 0.0) {
                        return false;
                    }
                    if t == 0 {
                        return true;
                    }
                    t = (t - 1) & s;
                }
            };
            let moved = (0..4).map(|k| 1 << k).filter(|&bit| s & bit != 0).all(|bit| !still(bit));
            if moved {
                evaluate(model, i, |c| jet(|t| x(t, c)), &mut own, &mut e)?;
            }
            for m in 0..entry.element.layout().n_modes() {
                if let Some(r) = model.mode_row[entry.mode_offset + m] {
                    let target = match model.row_target[r] {
                        RowTarget::Input(j) => q[s].get(j).copied().unwrap_or(0.0),
                        _ => 0.0,
                    };
                    rhs[(r, 0)] = if moved { target - part(&e[m], s) } else { target };
                }
            }
        }
        solve_unchecked(model, data, rhs.as_mut())?;
        tmp.fill(0.0);
        for (d, &c) in rhs.col_as_slice(0).iter().zip(&model.dependent_coords) {
            tmp[c] = *d;
        }
        for &t in att {
            model.attachments.rates_of(t, &data.att_jac, &mut tmp, None);
        }
        for ((o, x), y) in out[s].iter_mut().zip(&xs).zip(&tmp) {
            *o = x + y;
        }
        moved[s] = out[s].iter().any(|&v| v != 0.0);
    }
    Ok(())
}

/// Whether some partition of subset `s` into two or more blocks has every block's jet `moved`
/// (not 0): the `ε^S` part of a function of the jets is a sum over such partitions (and the
/// block `S` itself), so where there is none it comes from `x_S` alone.
fn split_moves(s: usize, moved: &[bool; SUBSETS]) -> bool {
    let low = s & s.wrapping_neg();
    let mut block = (s - 1) & s;
    while block != 0 {
        // the block holding S's lowest bit, then the rest as one moving block or split again
        let rest = s ^ block;
        if block & low != 0 && moved[block] && (moved[rest] || split_moves(rest, moved)) {
            return true;
        }
        block = (block - 1) & s;
    }
    false
}

/// `wᵀ (f_in(x, ẋ, ẍ) − f_ext(x))`: the power of the inertia forces less the loads (gravity on the
/// masses, the model's constant forces and moments) in the virtual rates `w` (n_x each), in
/// closed form over any scalar (`crate::dynamics`' lumped masses and rotors,
/// `f_in,λ = 4 Ḡ(λ)ᵀ J′ Ḡ(λ) λ̈ + 8 Ḡ(λ̇)ᵀ J′ Ḡ(λ) λ̇`, a moment's `2 G(λ)ᵀ M`).
pub fn power<T: Real>(model: &Model, x: &[T], xd: &[T], xdd: &[T], w: &[T]) -> T {
    let dynamics = &model.dynamics;
    let offset = |node: crate::ids::NodeId| model.nodes[node.index()].offset;
    let quat = |v: &[T], o: usize| [v[o], v[o + 1], v[o + 2], v[o + 3]];
    // Ḡ(a) b or G(a) b (3), with `m` the matrix of `a`'s parts ([`gbar_matrix`]'s or [`g_matrix`]'s pattern)
    let times = |m: fn(&[f64; 4]) -> [[f64; 4]; 3], a: &[T; 4], b: &[T; 4]| -> [T; 3] {
        let mut out = [T::from(0.0); 3];
        for k in 0..4 {
            let mut unit = [0.0; 4];
            unit[k] = 1.0;
            let mk = m(&unit);
            for (o, row) in out.iter_mut().zip(&mk) {
                for l in 0..4 {
                    if row[l] != 0.0 {
                        *o += a[k] * b[l] * row[l];
                    }
                }
            }
        }
        out
    };
    let mut p = T::from(0.0);
    for &(node, m) in &dynamics.masses {
        let o = offset(node);
        for a in 0..3 {
            p += w[o + a] * (xdd[o + a] - dynamics.gravity[a]) * m;
        }
    }
    for (node, j) in &dynamics.rotors {
        let o = offset(*node);
        let (l, ld, ldd, wl) = (quat(x, o), quat(xd, o), quat(xdd, o), quat(w, o));
        // wᵀ (4 Ḡ(λ)ᵀ J Ḡ(λ) λ̈ + 8 Ḡ(λ̇)ᵀ J Ḡ(λ) λ̇) = 4 (Ḡ(λ) w)ᵀ J Ḡ(λ) λ̈ + 8 (Ḡ(λ̇) w)ᵀ J Ḡ(λ) λ̇
        let (gw, gdw) = (times(gbar_matrix, &l, &wl), times(gbar_matrix, &ld, &wl));
        let (gl, gdl) = (times(gbar_matrix, &l, &ldd), times(gbar_matrix, &l, &ld));
        for r in 0..3 {
            for c in 0..3 {
                p += (gw[r] * gl[c] * 4.0 + gdw[r] * gdl[c] * 8.0) * j[r][c];
            }
        }
    }
    for load in &dynamics.loads {
        match *load {
            Load::Force { node, force } => {
                let o = offset(node);
                for a in 0..3 {
                    p -= w[o + a] * force[a];
                }
            }
            Load::Moment { node, moment } => {
                let o = offset(node);
                let gw = times(g_matrix, &quat(x, o), &quat(w, o));
                for i in 0..3 {
                    p -= gw[i] * moment[i] * 2.0;
                }
            }
        }
    }
    p
}

/// The second partials of `μᵀ f_v` with `f_v = DF_xᵀ (f_in − f_ext)` (the equations of motion's
/// multibody part, without the laws' stresses) in `(q, q̇, q̈)` (3 n_q x 3 n_q, in that order of
/// blocks; N m per rad², (rad/s)⁻¹ and (rad/s²)⁻¹ per multiplier unit), at the solved
/// configuration for rates `qd`, accelerations `qdd` and multipliers `mu` (n_q each), into `out`.
/// The `(q̈, q̈)` and `(q̇, q̈)` blocks are 0 (`f_v` is linear in `q̈`, without `q̇ q̈` terms).
pub fn equations_of_motion_hessian(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    mu: &[f64],
    out: &mut Mat<f64>,
) -> Result<(), KinematicsError> {
    let nq = model.n_q();
    if let Some(got) = [qd.len(), qdd.len(), mu.len()].into_iter().find(|&l| l != nq) {
        return Err(KinematicsError::InputLength { expected: nq, got });
    }
    *out = Mat::zeros(3 * nq, 3 * nq);
    first_order(model, data)?;
    let unit = |d: usize, block: usize| -> Vec<f64> {
        if d / nq == block { (0..nq).map(|k| if k == d % nq { 1.0 } else { 0.0 }).collect() } else { Vec::new() }
    };
    // The subsets without ε2 depend on the first direction alone, those without ε1 on the second
    // alone (the same numbers with ε1 for ε2), those with neither on neither: made once (per
    // direction), only the subsets with both per pair. Along (q, q̇, q̈): ε3, ε4 the rates.
    let mut base = vec![data.x.clone(); 1];
    base.resize(SUBSETS, vec![0.0; model.n_x()]);
    let mut q = vec![Vec::new(); SUBSETS];
    (q[4], q[8], q[12]) = (qd.to_vec(), qd.to_vec(), qdd.to_vec());
    // the power reads the nodes with a mass or a force load
    let att = attachments_with(model, &model.attachments.dynamic);
    fill_subsets(model, data, &q, &[4, 8, 12], &att, &mut base)?;
    let mut single = Vec::with_capacity(3 * nq);
    for d in 0..3 * nq {
        let mut out = base.clone();
        (q[1], q[5], q[9], q[13]) = (unit(d, 0), unit(d, 1), unit(d, 1), unit(d, 2));
        fill_subsets(model, data, &q, &[1, 5, 9, 13], &att, &mut out)?;
        single.push(out);
    }
    let virtual_jets = VirtualJets::new(model, data, mu, None, att.clone())?;
    let (mut acc, mut vir) = (base.clone(), Vec::new());
    for a in 0..3 * nq {
        for b in 0..=a {
            if a >= 2 * nq && b >= nq {
                continue;
            }
            (q[1], q[5], q[9], q[13]) = (unit(a, 0), unit(a, 1), unit(a, 1), unit(a, 2));
            (q[2], q[6], q[10], q[14]) = (unit(b, 0), unit(b, 1), unit(b, 1), unit(b, 2));
            for t in [1, 5, 9, 13] {
                acc[t].clone_from(&single[a][t]);
                acc[t + 1].clone_from(&single[b][t]);
            }
            fill_subsets(model, data, &q, &[3, 7, 11, 15], &att, &mut acc)?;
            virtual_jets.pair(model, data, a, b, &mut vir)?;
            // (x, ẋ, ẍ, w) over ε1, ε2: the parts of the subsets 0, 1, 2, 3 joined with `with`
            let lift = |jets: &[Vec<f64>], with: usize| -> Vec<HyperDual64> {
                (0..model.n_x())
                    .map(|c| HyperDual64::new(jets[with][c], jets[with | 1][c], jets[with | 2][c], jets[with | 3][c]))
                    .collect()
            };
            let h = power(model, &lift(&acc, 0), &lift(&acc, 4), &lift(&acc, 12), &lift(&vir, 4)).eps1eps2;
            out[(a, b)] = h;
            out[(b, a)] = h;
        }
    }
    Ok(())
}

/// The coordinates' mixed derivatives along `(e_a, e_b, μ, q̇)` (`ε1`, `ε2`, `ε3`, `ε4`; `μ` and
/// `q̇` n_q input rates, `q̇` optional) for any pair of directions, without the subsets holding
/// both `ε3` and `ε4`: the subsets without `ε1` or `ε2` formed once (per direction), a pair
/// forming only `{ε1 ε2}`, `{ε1 ε2 ε3}` and `{ε1 ε2 ε4}`. A direction `d ≥ n_q` (a rate's or an
/// acceleration's) moves no coordinate: its parts are 0.
struct VirtualJets {
    /// Per direction `d < n_q`, the 16 subsets with `ε1` along `e_d` (those without `ε1`: `μ`'s).
    single: Vec<Vec<Vec<f64>>>,
    /// The subsets without `ε1` and `ε2`.
    base: Vec<Vec<f64>>,
    /// The inputs' parts of the subsets a pair solves (none: `{ε1 ε2}`, `{ε1 ε2 ε3}` have 0).
    q: Vec<Vec<f64>>,
    /// The subsets with `ε1` and `ε2` that a pair solves.
    pair_subsets: &'static [usize],
    /// The attachments formed ([`fill_subsets`]).
    att: Vec<usize>,
}

impl VirtualJets {
    /// The jets at the solved configuration in `data` (`DF_x` formed), of the attached nodes
    /// those of the attachments `att` ([`fill_subsets`]).
    fn new(
        model: &Model,
        data: &mut Data,
        mu: &[f64],
        rates: Option<&[f64]>,
        att: Vec<usize>,
    ) -> Result<Self, KinematicsError> {
        let nq = model.n_q();
        let mut base = vec![data.x.clone(); 1];
        base.resize(SUBSETS, vec![0.0; model.n_x()]);
        let mut q = vec![Vec::new(); SUBSETS];
        q[4] = mu.to_vec();
        let (base_subsets, single_subsets, pair_subsets): (&[usize], &[usize], &'static [usize]) = match rates {
            Some(rates) => {
                q[8] = rates.to_vec();
                (&[4, 8], &[1, 5, 9], &[3, 7, 11])
            }
            None => (&[4], &[1, 5], &[3, 7]),
        };
        fill_subsets(model, data, &q, base_subsets, &att, &mut base)?;
        let mut single = Vec::with_capacity(nq);
        for d in 0..nq {
            let mut out = base.clone();
            q[1] = (0..nq).map(|k| if k == d { 1.0 } else { 0.0 }).collect();
            fill_subsets(model, data, &q, single_subsets, &att, &mut out)?;
            single.push(out);
        }
        Ok(Self { single, base, q: vec![Vec::new(); SUBSETS], pair_subsets, att })
    }

    /// The pair `(a, b)`'s 16 subsets into `out` (only those with `ε1` and `ε2` solved here: the
    /// others are the directions' own, `ε2`'s those of `ε1` along `e_b`).
    fn pair(
        &self,
        model: &Model,
        data: &mut Data,
        a: usize,
        b: usize,
        out: &mut Vec<Vec<f64>>,
    ) -> Result<(), KinematicsError> {
        out.clone_from(&self.base);
        for (d, bit) in [(a, 1), (b, 2)] {
            for t in [1, 5, 9] {
                match self.single.get(d) {
                    Some(jets) => out[bit | (t & 12)].clone_from(&jets[t]),
                    None => out[bit | (t & 12)].fill(0.0),
                }
            }
        }
        fill_subsets(model, data, &self.q, self.pair_subsets, &self.att, out)
    }
}

/// The mixed derivatives of the modes `modes` (muscles' path lengths, say) along every pair of
/// inputs `a ≥ b` and the input rates `mu` (n_q): per pair in the order `(0, 0), (1, 0), (1, 1),
/// (2, 0), …` and per mode within it, by subset of `(ε1, ε2, ε3)` = (`e_a`, `e_b`, `mu`),
/// `[e, ∂_a e, ∂_b e, ∂_ab e, De·μ, ∂_a(De·μ), ∂_b(De·μ), ∂_ab(De·μ)]` (m or rad per unit of the
/// inputs), into `out` (cleared first): a mode's second derivatives and the third `D³e(a, b, μ)`
/// that the Hessian of `μᵀ (F ∇e)` needs. The parts hold at most three infinitesimals, so each
/// element is evaluated over third-order hyper-dual numbers, all its pairs in one call
/// ([`crate::element::Element::third_order_jets`]: a wrapping path solves its configuration
/// once); a pair one of whose directions moves none of the element's coordinates (every part of
/// the element's jets with that infinitesimal exactly 0) is not evaluated: its parts with that
/// direction are 0 and the others those of the other direction's own pair. The configuration in
/// `data` must be solved and its attached nodes placed; the modes' elements must give fourth
/// order ([`supported_modes`]).
pub fn mode_parts(
    model: &Model,
    data: &mut Data,
    mu: &[f64],
    modes: &[ModeId],
    out: &mut Vec<[f64; 8]>,
) -> Result<(), KinematicsError> {
    parts(model, data, mu, None, modes, modes.len(), out)
}

/// [`mode_parts`] with the rates `qd` (n_q) along `ε4`: per pair and mode the twelve parts
/// `[…mode_parts' eight…, De·q̇, ∂_a(De·q̇), ∂_b(De·q̇), ∂_ab(De·q̇)]` (subsets 0 to 11), what the
/// Hessian of a law's power `μᵀ DF_eᵀ σ(e, ė)`, `ė = De·q̇`, needs, for the modes from
/// `rated_from` on (their elements evaluated over [`Jet4`]); the modes before it (muscles' paths,
/// which need no rates) have 0 there and are evaluated as [`mode_parts`]' are.
pub fn mode_parts_with_rates(
    model: &Model,
    data: &mut Data,
    mu: &[f64],
    qd: &[f64],
    modes: &[ModeId],
    rated_from: usize,
    out: &mut Vec<[f64; 12]>,
) -> Result<(), KinematicsError> {
    if qd.len() != model.n_q() {
        return Err(KinematicsError::InputLength { expected: model.n_q(), got: qd.len() });
    }
    parts(model, data, mu, Some(qd), modes, rated_from.min(modes.len()), out)
}

/// [`mode_parts`]' and [`mode_parts_with_rates`]' work: the first `N` subsets; the modes from
/// `rated_from` on over [`Jet4`], those before it over third-order numbers.
fn parts<const N: usize>(
    model: &Model,
    data: &mut Data,
    mu: &[f64],
    rates: Option<&[f64]>,
    modes: &[ModeId],
    rated_from: usize,
    out: &mut Vec<[f64; N]>,
) -> Result<(), KinematicsError> {
    let nq = model.n_q();
    if mu.len() != nq {
        return Err(KinematicsError::InputLength { expected: nq, got: mu.len() });
    }
    first_order(model, data)?;
    // the attached nodes among the modes' elements' coordinates
    let mut read = vec![false; model.n_x()];
    for &m in modes {
        model.elements[model.mode_owner(m).0.index()].own.iter().for_each(|&c| read[c] = true);
    }
    let nodes: Vec<usize> = model.attachments.list.iter().map(|a| a.node).filter(|&o| read[o]).collect();
    let att = attachments_with(model, &model.attachments.with_ancestors(&nodes));
    let virtual_jets = VirtualJets::new(model, data, mu, rates, att)?;
    // every pair's coordinates' jets, formed once for all the elements
    let pairs: Vec<(usize, usize)> = (0..nq).flat_map(|a| (0..=a).map(move |b| (a, b))).collect();
    let mut jets = vec![Vec::new(); pairs.len()];
    for (&(a, b), j) in pairs.iter().zip(&mut jets) {
        virtual_jets.pair(model, data, a, b, j)?;
    }
    out.clear();
    out.resize(pairs.len() * modes.len(), [0.0; N]);
    let mut done: Vec<(usize, bool)> = Vec::new();
    let mut scratch = ElementJets::default();
    for (j, &m) in modes.iter().enumerate() {
        let (el, _) = model.mode_owner(m);
        let rated = j >= rated_from;
        if done.contains(&(el.index(), rated)) {
            continue;
        }
        done.push((el.index(), rated));
        // the modes of this element (and kind) that `modes` lists: (index in `modes`, mode within the element)
        let listed: Vec<(usize, usize)> = modes
            .iter()
            .enumerate()
            .filter(|&(i, &o)| model.mode_owner(o).0 == el && (i >= rated_from) == rated)
            .map(|(i, &o)| (i, model.mode_owner(o).1))
            .collect();
        scratch.element(model, el.index(), &pairs, &jets, rated)?;
        for (p, chunk) in out.chunks_exact_mut(modes.len()).enumerate() {
            for &(i, k) in &listed {
                chunk[i] = std::array::from_fn(|s| scratch.part(p, k, s));
            }
        }
    }
    Ok(())
}

/// One element's modes along every pair of inputs (its parts by subset, per pair and mode), and
/// the scratch that makes them.
#[derive(Default)]
struct ElementJets {
    /// Per pair, whether it was evaluated, and the start of its modes' parts in `values`.
    at: Vec<Option<usize>>,
    /// The evaluated pairs' parts: per pair and mode, the 16 subsets.
    values: Vec<[f64; SUBSETS]>,
    pairs: Vec<(usize, usize)>,
    n_modes: usize,
    own3: Vec<HyperHyperDual64>,
    e3: Vec<HyperHyperDual64>,
    own4: Vec<Jet4>,
    e4: Vec<Jet4>,
}

impl ElementJets {
    /// Element `i` along the `pairs` (their coordinates' jets `jets`), over [`Jet4`] when `rated`
    /// (the rates' subsets wanted), else over third-order numbers, all pairs in one call.
    fn element(
        &mut self,
        model: &Model,
        i: usize,
        pairs: &[(usize, usize)],
        jets: &[Vec<Vec<f64>>],
        rated: bool,
    ) -> Result<(), KinematicsError> {
        let entry = &model.elements[i];
        self.n_modes = entry.element.layout().n_modes();
        self.pairs.clear();
        self.pairs.extend_from_slice(pairs);
        // a direction moves the element when a part of its coordinates' jets with it is not 0
        let moves = |p: usize, bit: usize| {
            (0..SUBSETS).filter(|t| t & bit != 0).any(|t| entry.own.iter().any(|&c| jets[p][t][c] != 0.0))
        };
        let mut evaluated: Vec<usize> = (0..pairs.len()).filter(|&p| moves(p, 1) && moves(p, 2)).collect();
        if evaluated.is_empty() {
            // the parts without either direction still come from one evaluation
            evaluated.push(0);
        }
        self.at.clear();
        self.at.resize(pairs.len(), None);
        for (k, &p) in evaluated.iter().enumerate() {
            self.at[p] = Some(k * self.n_modes);
        }
        self.values.clear();
        let element_error = |error| KinematicsError::Element { element: entry.name.clone(), error };
        let missing = |order: &str| {
            let why = format!("`{}` has no {order} derivatives (Element::{order})", entry.element.type_name());
            element_error(ElementError::Other(why))
        };
        if rated {
            for &p in &evaluated {
                evaluate(model, i, |c| jet(|t| jets[p][t][c]), &mut self.own4, &mut self.e4)?;
                self.values.extend(self.e4.iter().map(|e| std::array::from_fn(|s| part(e, s))));
            }
        } else {
            self.own3.clear();
            for &p in &evaluated {
                let d = |t: usize, c: usize| jets[p][t][c];
                self.own3.extend(entry.own.iter().map(|&c| {
                    HyperHyperDual64::new(d(0, c), d(1, c), d(2, c), d(4, c), d(3, c), d(5, c), d(6, c), d(7, c))
                }));
            }
            self.e3.clear();
            self.e3.resize(evaluated.len() * self.n_modes, HyperHyperDual64::from(0.0));
            if !entry.element.third_order_jets(&self.own3, &mut self.e3).map_err(element_error)? {
                return Err(missing("third_order"));
            }
            let part3 = |e: &HyperHyperDual64, s: usize| match s {
                0 => e.re,
                1 => e.eps1,
                2 => e.eps2,
                3 => e.eps1eps2,
                4 => e.eps3,
                5 => e.eps1eps3,
                6 => e.eps2eps3,
                7 => e.eps1eps2eps3,
                _ => 0.0,
            };
            self.values.extend(self.e3.iter().map(|e| std::array::from_fn(|s| part3(e, s))));
        }
        Ok(())
    }

    /// Mode `k`'s part over subset `s` along pair `p`: evaluated, or, where one of the pair's
    /// directions moves none of the element's coordinates, 0 with that direction and the other
    /// direction's own pair's `ε1` part without it (0 if that pair was not evaluated either).
    fn part(&self, p: usize, k: usize, s: usize) -> f64 {
        if let Some(at) = self.at[p] {
            return self.values[at + k][s];
        }
        let (a, b) = self.pairs[p];
        // pair (d, d)'s place in the order (0, 0), (1, 0), (1, 1), (2, 0), …
        let own = |d: usize| self.at[d * (d + 1) / 2 + d];
        match s & 3 {
            // the parts without ε1 and ε2 are those of every evaluated pair
            0 => self.at.iter().flatten().next().map_or(0.0, |&at| self.values[at + k][s]),
            3 => 0.0,
            bit => own(if bit == 1 { a } else { b }).map_or(0.0, |at| self.values[at + k][(s & !3) | 1]),
        }
    }
}

/// Element `i`'s modes over [`Jet4`] into `e`, its coordinates' jets from `x` (`own` scratch).
fn evaluate(
    model: &Model,
    i: usize,
    x: impl Fn(usize) -> Jet4,
    own: &mut Vec<Jet4>,
    e: &mut Vec<Jet4>,
) -> Result<(), KinematicsError> {
    let entry = &model.elements[i];
    own.clear();
    own.extend(entry.own.iter().map(|&c| x(c)));
    e.clear();
    e.resize(entry.element.layout().n_modes(), Jet4::from(0.0));
    let element_error = |error| KinematicsError::Element { element: entry.name.clone(), error };
    if !entry.element.fourth_order(own, e).map_err(element_error)? {
        let why = format!("`{}` has no fourth-order derivatives (Element::fourth_order)", entry.element.type_name());
        return Err(element_error(ElementError::Other(why)));
    }
    Ok(())
}
