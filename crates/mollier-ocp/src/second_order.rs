//! The dynamics' part of the exact Hessian of the Lagrangian, `Σ_i λ_iᵀ ∇²f(x_i, ẋ_i, u_i)`,
//! for the one-input systems of [`crate::exact_hessian`]: the multibody term
//! ([`crate::multibody_block`]), a law on the input's mode, and Hill muscles on paths.
//!
//! With one input `q` and a muscle's path length `L(q)` (its derivatives `L'`, `L''`, `L'''`
//! from [`mollier_core::transfer3::mode_jets`]), tendon force `F(L − s)` (`F'`, `F''`) and
//! contraction residual `f_s(a, s, ṡ, L)` (its Hessian `H` from
//! [`mollier_sim::HillMuscle::contraction_hessian`]), the terms of
//! `f_v = M̄ v̇ − Q(q) + σ(q, v) + Σ F L'` and of `f_s`, `f_a` give:
//! ```text
//! ∂²f_v/∂q²   = ∂²(−Q)/∂q² + σ_ee + Σ (F'' L'³ + 3 F' L' L'' + F L''')
//! ∂²f_v/∂q∂v  = σ_eė,  ∂²f_v/∂v² = σ_ėė
//! ∂²f_v/∂q∂s  = −F'' L'² − F' L'',  ∂²f_v/∂s² = F'' L'
//! ∂²f_s/∂q²   = H_LL L'² + ∂f_s/∂L L'',  ∂²f_s/∂q∂y = H_yL L',  ∂²f_s/∂y∂y' = H_yy'   (y = a, s, ṡ)
//! ∂²f_a/∂u²   = −2 r',  ∂²f_a/∂u∂a = r'
//! ```
//! (`e = q` for an input mode, `ė = v`.)

use mollier_core::{ElementId, Input, Law, ModeId, transfer3, transfer4};
use mollier_sim::SimError;

use crate::Transcription;
use crate::hessian::{Motion, Slots, multibody_block};

impl Transcription<'_, '_, '_> {
    /// Add `Σ_i λ_iᵀ ∇²f` at `z` to `out` (linearized at `z`): each point placed again for its
    /// law's mode and its paths' third-order jets.
    pub(crate) fn add_dynamics_hessian(
        &mut self,
        motion: Motion,
        z: &[f64],
        lambda: &[f64],
        slots: &Slots,
        out: &mut [f64],
    ) -> Result<(), SimError> {
        let (nx, nz, l) = (self.nx(), self.nz, self.layout);
        if motion == Motion::Chain {
            return self.add_chain_hessian(z, lambda, slots, out);
        }
        if l.n != 1 {
            return Ok(());
        }
        let (xd0, e0, _) = self.off();
        let system = self.p.system;
        let model = system.model;
        let modes: Vec<_> = system.muscles.iter().map(|m| m.mode).collect();
        // the law on the input's mode, if any: its element and the mode's index there
        let law = match model.inputs()[0] {
            Input::Mode(mode) => {
                let (el, k) = model.mode_owner(mode);
                model.law(el).map(|law| (law, model.element(el).layout().n_modes(), mode.index() - k, k))
            }
            Input::Coordinate(_) => None,
        };
        let mut jets = Vec::new();
        for i in 0..self.points {
            let zi = &z[i * nz..(i + 1) * nz];
            let li = &lambda[i * nx..(i + 1) * nx];
            let lin = self.p.system.linearize(&mut self.ws, &zi[..nx], &zi[xd0..xd0 + nx], &zi[e0..e0 + l.m])?;
            let data = &mut self.ws.data;
            if !modes.is_empty() {
                transfer3::mode_jets(model, data, &[1.0], &modes, &mut jets)?;
            }
            let (q, v, vd, lv) = (0, 1, zi[xd0 + 1], li[1]);
            // Q = M̄ v̇ + σ + Σ F L' − f_v
            let mut q_load = lin.mass[(0, 0)] * vd - lin.f[1];
            let (mut qq, mut vq, mut vv) = (0.0, 0.0, 0.0);
            if let Some((law, n, first, k)) = law {
                let (sigma, curv) = law_terms(law, &data.e()[first..first + n], k, zi[v]);
                q_load += sigma;
                [qq, vq, vv] = curv;
            }
            for (k, (mu, &[l1, l2, l3])) in system.muscles.iter().zip(&jets).enumerate() {
                let c = &lin.contraction[k];
                let (s, a, sdot) = (l.s() + k, l.a() + k, xd0 + l.s() + k);
                let h = mu.hill.contraction_hessian(zi[a], zi[s], zi[sdot], lin.length[k]);
                let (f, f1, f2) = (c.force, c.force_d_length, h.force);
                let (ls, la) = (li[s], li[a]);
                q_load += f * l1;
                qq += f2 * l1 * l1 * l1 + 3.0 * f1 * l1 * l2 + f * l3;
                let r = &h.residual;
                // y = (a, s, ṡ, L): indices 0..4
                out[slots.at(i, q, q)] += ls * (r[3][3] * l1 * l1 + c.d_length * l2);
                out[slots.at(i, s, q)] += lv * (-f2 * l1 * l1 - f1 * l2) + ls * r[1][3] * l1;
                out[slots.at(i, s, s)] += lv * f2 * l1 + ls * r[1][1];
                out[slots.at(i, a, q)] += ls * r[0][3] * l1;
                out[slots.at(i, sdot, q)] += ls * r[2][3] * l1;
                out[slots.at(i, a, s)] += ls * r[0][1];
                out[slots.at(i, sdot, s)] += ls * r[2][1];
                out[slots.at(i, sdot, a)] += ls * r[2][0];
                out[slots.at(i, a, a)] += ls * r[0][0];
                out[slots.at(i, sdot, sdot)] += ls * r[2][2];
                let (uu, ua, aa) = mu.hill.activation_hessian(zi[a], zi[e0 + k]);
                let ex = e0 + k;
                out[slots.at(i, ex, ex)] += la * uu;
                out[slots.at(i, ex, a)] += la * ua;
                out[slots.at(i, a, a)] += la * aa;
            }
            out[slots.at(i, q, q)] += lv * (multibody_block(motion, q_load) + qq);
            out[slots.at(i, v, q)] += lv * vq;
            out[slots.at(i, v, v)] += lv * vv;
        }
        Ok(())
    }

    /// Add `Σ_i λ_iᵀ ∇²f` of a [`Motion::Chain`] at `z` to `out`: per point, the multibody block
    /// in `(q, v, v̇)` from the fourth-order transfer functions
    /// ([`transfer4::equations_of_motion_hessian`]), the muscles' terms and the laws' (on input
    /// and dependent modes alike), both from the modes' jets along every pair of inputs, the
    /// multipliers and the rates ([`transfer4::mode_parts_with_rates`]).
    fn add_chain_hessian(&mut self, z: &[f64], lambda: &[f64], slots: &Slots, out: &mut [f64]) -> Result<(), SimError> {
        let (nx, nz, n) = (self.nx(), self.nz, self.layout.n);
        let (xd0, e0, _) = self.off();
        let model = self.p.system.model;
        let laws = law_elements(model);
        let mut modes: Vec<ModeId> = self.p.system.muscles.iter().map(|m| m.mode).collect();
        let n_muscles = modes.len();
        modes.extend(laws.iter().flat_map(|&(el, n_modes)| (0..n_modes).map(move |k| model.mode_id(el, k))));
        let (mut h, mut parts) = (faer::Mat::<f64>::new(), Vec::new());
        for i in 0..self.points {
            let zi = &z[i * nz..(i + 1) * nz];
            let lv = &lambda[i * nx + n..i * nx + 2 * n];
            let lin =
                self.p.system.linearize(&mut self.ws, &zi[..nx], &zi[xd0..xd0 + nx], &zi[e0..e0 + self.layout.m])?;
            let data = &mut self.ws.data;
            let (v, vd) = (&zi[n..2 * n], &zi[xd0 + n..xd0 + 2 * n]);
            if !modes.is_empty() {
                transfer4::mode_parts_with_rates(model, data, lv, v, &modes, n_muscles, &mut parts)?;
            }
            transfer4::equations_of_motion_hessian(model, data, v, vd, lv, &mut h)?;
            // the blocks' rows and columns in the point's z: q, v, v̇
            let at = |a: usize| if a < 2 * n { a } else { xd0 + a - n };
            for a in 0..3 * n {
                for b in 0..=a.min(2 * n - 1) {
                    if a < 2 * n || b < n {
                        out[slots.at(i, at(a), at(b))] += h[(a, b)];
                    }
                }
            }
            if n_muscles > 0 {
                self.add_chain_muscles(i, zi, &lambda[i * nx..(i + 1) * nx], &lin, &parts, modes.len(), slots, out);
            }
            let mut first = n_muscles;
            for &(el, n_modes) in &laws {
                let law = model.law(el).expect("law_elements lists elements with laws");
                let fixed: Vec<bool> = (0..n_modes)
                    .map(|k| matches!(model.mode_role(model.mode_id(el, k)), mollier_core::ModeRole::Fixed(_)))
                    .collect();
                let place = |a: usize, b: usize, value: f64, out: &mut [f64]| out[slots.at(i, a, b)] += value;
                LawPoint::new(law, &parts, modes.len(), first, &fixed).add(n, |a, b, v| place(a, b, v, out));
                first += n_modes;
            }
        }
        Ok(())
    }
}

/// The elements with a law and a mode that is not fixed, with their numbers of modes.
fn law_elements(model: &mollier_core::Model) -> Vec<(ElementId, usize)> {
    (0..model.n_elements())
        .map(ElementId::new)
        .filter(|&el| model.law(el).is_some())
        .map(|el| (el, model.element(el).layout().n_modes()))
        .filter(|&(el, n)| {
            (0..n).any(|k| !matches!(model.mode_role(model.mode_id(el, k)), mollier_core::ModeRole::Fixed(_)))
        })
        .collect()
}

/// One element's law at one point, for the second partials of its power `wᵀσ(e, ė)` with
/// `e(q)`, `ė = De·v`, `w = De·λ_v` (the law's share of `λ_vᵀ f_v`, `f_v ∋ DF_eᵀ σ`): the
/// modes' jets along each pair of inputs `(a, b)` (`e_a`, `e_ab`, `ė_a`, `ė_ab`, `w_a`, `w_ab`)
/// and the law's stress, tangents `S = ∂σ/∂e`, `T = ∂σ/∂ė` and weighted second partials at
/// `(e, ė, w)` ([`Law::stress_hessian`]). With `g = Sᵀw`, `t = Tᵀw`, `d_a = S e_a + T ė_a`:
/// ```text
/// ∂²/∂q_a∂q_b = e_aᵀ H_ee e_b + e_aᵀ H_eė ė_b + e_bᵀ H_eė ė_a + ė_aᵀ H_ėė ė_b
///              + gᵀ e_ab + tᵀ ė_ab + d_aᵀ w_b + d_bᵀ w_a + σᵀ w_ab
/// ∂²/∂v_a∂q_b = w_bᵀ T e_a + tᵀ e_ab + e_bᵀ H_eė e_a + ė_bᵀ H_ėė e_a,   ∂²/∂v_a∂v_b = e_aᵀ H_ėė e_b
/// ```
/// (`∂ė/∂v_a = e_a`). A fixed mode's weight and its parts are 0: its stress is a reaction.
struct LawPoint<'a> {
    parts: &'a [[f64; 12]],
    stride: usize,
    first: usize,
    fixed: &'a [bool],
    sigma: Vec<f64>,
    s: Vec<f64>,
    t: Vec<f64>,
    hee: Vec<f64>,
    heed: Vec<f64>,
    hdd: Vec<f64>,
}

impl<'a> LawPoint<'a> {
    /// The law at the jets' values: modes `first..first + fixed.len()` of each pair's `stride`
    /// parts.
    fn new(law: &dyn Law, parts: &'a [[f64; 12]], stride: usize, first: usize, fixed: &'a [bool]) -> Self {
        let n = fixed.len();
        let p = &parts[first..first + n];
        let e: Vec<f64> = p.iter().map(|p| p[0]).collect();
        let ed: Vec<f64> = p.iter().map(|p| p[8]).collect();
        let w: Vec<f64> = p.iter().zip(fixed).map(|(p, &f)| if f { 0.0 } else { p[4] }).collect();
        let mut sigma = vec![0.0; n];
        let [mut s, mut t, mut hee, mut heed, mut hdd] = [0; 5].map(|_| vec![0.0; n * n]);
        law.stress(&e, &ed, &mut sigma);
        law.tangent(&e, &ed, &mut s, &mut t);
        // refused by `exact_hessian` where it is false: 0s are never taken for its partials
        let given = law.stress_hessian(&e, &ed, &w, &mut hee, &mut heed, &mut hdd);
        debug_assert!(given, "exact_hessian admits laws that give their second partials");
        Self { parts, stride, first, fixed, sigma, s, t, hee, heed, hdd }
    }

    /// Add the terms of every pair of the `nq` inputs through `add(row, column, value)` (rows
    /// and columns in the point's `z`: `q` then `v`).
    fn add(&self, nq: usize, mut add: impl FnMut(usize, usize, f64)) {
        let n = self.fixed.len();
        let bilinear = |m: &[f64], x: &dyn Fn(usize) -> f64, y: &dyn Fn(usize) -> f64| {
            (0..n).map(|i| x(i) * (0..n).map(|j| m[i * n + j] * y(j)).sum::<f64>()).sum::<f64>()
        };
        let mut pair = 0;
        for a in 0..nq {
            for b in 0..=a {
                let p = &self.parts[pair * self.stride + self.first..pair * self.stride + self.first + n];
                pair += 1;
                let part = |s: usize| move |k: usize| p[k][s];
                let weight = |s: usize| move |k: usize| if self.fixed[k] { 0.0 } else { p[k][s] };
                let (ea, eb, eab, wa, wb, wab) = (part(1), part(2), part(3), weight(5), weight(6), weight(7));
                let (eda, edb, edab) = (part(9), part(10), part(11));
                let w = weight(4);
                // gᵀ x and tᵀ x: the weighted tangents
                let g = |x: &dyn Fn(usize) -> f64| bilinear(&self.s, &w, x);
                let t = |x: &dyn Fn(usize) -> f64| bilinear(&self.t, &w, x);
                let qq = bilinear(&self.hee, &ea, &eb)
                    + bilinear(&self.heed, &ea, &edb)
                    + bilinear(&self.heed, &eb, &eda)
                    + bilinear(&self.hdd, &eda, &edb)
                    + g(&eab)
                    + t(&edab)
                    + bilinear(&self.s, &wb, &ea)
                    + bilinear(&self.t, &wb, &eda)
                    + bilinear(&self.s, &wa, &eb)
                    + bilinear(&self.t, &wa, &edb)
                    + (0..n).map(|k| self.sigma[k] * wab(k)).sum::<f64>();
                add(a, b, qq);
                let vq = |x: &dyn Fn(usize) -> f64, y: &dyn Fn(usize) -> f64, yd: &dyn Fn(usize) -> f64, wy| {
                    bilinear(&self.t, wy, x) + t(&eab) + bilinear(&self.heed, y, x) + bilinear(&self.hdd, yd, x)
                };
                add(nq + a, b, vq(&ea, &eb, &edb, &wb));
                if a != b {
                    add(nq + b, a, vq(&eb, &ea, &eda, &wa));
                }
                add(nq + a, nq + b, bilinear(&self.hdd, &ea, &eb));
            }
        }
    }
}

impl Transcription<'_, '_, '_> {
    /// Add point `i`'s muscle terms of `λᵀ ∇²f` of a [`Motion::Chain`] (`zi`, `li` its variables
    /// and multipliers, `lin` its linearization): with `F(L − s)` the tendon's force on the
    /// equations of motion `F ∇L` and the contraction residual `r(a, s, ṡ, L)`, the paths'
    /// second derivatives `∂_ab L` and the third `D³L(a, b, λ_v)` from the fourth-order transfer
    /// functions (`parts`: [`transfer4::mode_parts_with_rates`] of the muscles' modes first, then
    /// others, `stride` a pair), the Hill model's second partials from
    /// [`mollier_sim::Hill::contraction_hessian`].
    #[allow(clippy::too_many_arguments)]
    fn add_chain_muscles(
        &self,
        i: usize,
        zi: &[f64],
        li: &[f64],
        lin: &mollier_sim::Linearization,
        parts: &[[f64; 12]],
        stride: usize,
        slots: &Slots,
        out: &mut [f64],
    ) {
        let (l, system) = (self.layout, self.p.system);
        let n = l.n;
        let (xd0, e0, _) = self.off();
        let sd = xd0 + l.s();
        let hills: Vec<_> = system
            .muscles
            .iter()
            .enumerate()
            .map(|(k, mu)| mu.hill.contraction_hessian(zi[l.a() + k], zi[l.s() + k], zi[sd + k], lin.length[k]))
            .collect();
        let mut pairs = parts.chunks_exact(stride.max(1));
        for a in 0..n {
            for b in 0..=a {
                let pair = pairs.next().unwrap_or_default();
                for (k, p) in pair.iter().take(system.muscles.len()).enumerate() {
                    let &[_, la, lb, lab, w, wa, wb, wab, ..] = p;
                    let c = &lin.contraction[k];
                    let (f, f1, f2, r) = (c.force, c.force_d_length, hills[k].force, &hills[k].residual);
                    let ls = li[l.s() + k];
                    // F ∇L · λ_v and the contraction row, differentiated by q_a and q_b
                    out[slots.at(i, a, b)] += f2 * la * lb * w
                        + f1 * (lab * w + la * wb + lb * wa)
                        + f * wab
                        + ls * (r[3][3] * la * lb + c.d_length * lab);
                    if b == a {
                        let (s, act, sdot) = (l.s() + k, l.a() + k, sd + k);
                        out[slots.at(i, s, a)] += -f2 * la * w - f1 * wa + ls * r[1][3] * la;
                        out[slots.at(i, act, a)] += ls * r[0][3] * la;
                        out[slots.at(i, sdot, a)] += ls * r[2][3] * la;
                        if a == 0 {
                            // y = (a, s, ṡ, L): the muscle's own states, once
                            out[slots.at(i, s, s)] += f2 * w + ls * r[1][1];
                            out[slots.at(i, act, s)] += ls * r[0][1];
                            out[slots.at(i, sdot, s)] += ls * r[2][1];
                            out[slots.at(i, sdot, act)] += ls * r[2][0];
                            out[slots.at(i, act, act)] += ls * r[0][0];
                            out[slots.at(i, sdot, sdot)] += ls * r[2][2];
                            let (uu, ua, aa) = system.muscles[k].hill.activation_hessian(zi[act], zi[e0 + k]);
                            out[slots.at(i, e0 + k, e0 + k)] += li[l.a() + k] * uu;
                            out[slots.at(i, e0 + k, act)] += li[l.a() + k] * ua;
                            out[slots.at(i, act, act)] += li[l.a() + k] * aa;
                        }
                    }
                }
            }
        }
    }
}

/// A law's stress on mode `k` of its element and its curvature there `[σ_ee, σ_eė, σ_ėė]`, at the
/// element's modes `e` with mode `k` moving at `rate` (the others still).
fn law_terms(law: &dyn Law, e: &[f64], k: usize, rate: f64) -> (f64, [f64; 3]) {
    let n = e.len();
    let mut ed = vec![0.0; n];
    ed[k] = rate;
    let (mut sigma, mut curv) = (vec![0.0; n], vec![0.0; 3 * n]);
    law.stress(e, &ed, &mut sigma);
    law.curvature(e, &ed, &mut curv);
    (sigma[k], [curv[3 * k], curv[3 * k + 1], curv[3 * k + 2]])
}
