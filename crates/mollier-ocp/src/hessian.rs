//! The exact Hessian of the Lagrangian `σ ∇²J + Σ λ_r ∇²g_r` (IPOPT's `eval_h`, lower triangle),
//! where it is exact, and IPOPT's limited-memory approximation elsewhere.
//!
//! The defects and the actuators' `− B τ` are linear, so their second partials vanish. The
//! objective's are closed form (diagonal: `2 w` for `e²`, `τ²`, tracking and final targets,
//! `6 w a` for `a³`). The dynamics' are those of `f_v` (`f_q` is linear); they come from one
//! function, [`multibody_block`], which knows the cases where the kernel's first- and second-order
//! transfer functions determine them exactly:
//! - a translation (the one input a position coordinate, every other node fixed or carried):
//!   `M̄` and the loads' generalized force are constant, `c = 0`, so every second partial is 0;
//! - a rotation about a fixed axis (the one input the rotation of a hinge whose `p` node is fixed,
//!   every point on a body turning with it about a fixed point): each point moves on a circle, so
//!   `D³F_x = −DF_x`, `M̄` is constant and `c = 0`, and `∂²f_v/∂q² = Q = M̄ v̇ − f_v` (the loads'
//!   generalized force: gravity and point forces).
//!
//! Elsewhere it would need what the kernel does not give yet: for chains, `∂²M̄/∂q²`,
//! `∂²Q/∂q²` need third-order transfer functions (`D³F`) and `∂²c/∂q²` fourth-order ones; for
//! muscles, their paths' `∂³L/∂q³` (the term `F_m ∂L_m/∂q` of `f_v`) besides the Hill model's
//! second partials; for laws, their second derivatives. There [`exact_hessian`] says why not and
//! IPOPT's L-BFGS approximation is used: never an approximate "exact" Hessian.

use mollier_core::element::NodeKind;
use mollier_core::{CoordRole, Input, Load, Model, NodeId};
use mollier_sim::{Linearization, Musculoskeletal};

use crate::Transcription;

/// Which Hessian of the Lagrangian IPOPT is given.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HessianChoice {
    /// The exact Hessian where the system allows it ([`exact_hessian`]), else the approximation.
    #[default]
    Exact,
    /// IPOPT's limited-memory (L-BFGS) approximation (OpenSim Moco's default).
    LimitedMemory,
}

/// How one system's multibody part moves, where its dynamics' second partials are exact.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    /// A translation along a fixed direction: every second partial of `f_v` is 0.
    Translation,
    /// A rotation about a fixed axis: `∂²f_v/∂q² = M̄ v̇ − f_v`, the others 0.
    Rotation,
}

/// The motion of `system` whose dynamics' second partials [`multibody_block`] gives exactly, or
/// why there is none (then the Hessian is IPOPT's approximation).
pub fn exact_hessian(system: &Musculoskeletal<'_>) -> Result<Motion, String> {
    let model = system.model;
    if !system.muscles.is_empty() {
        return Err("the muscles' terms need their paths' third derivatives (∂³L/∂q³)".into());
    }
    if system.loads.is_some() {
        return Err("loads varying in time have no second partials here".into());
    }
    if model.dynamics().loads.iter().any(|l| matches!(l, Load::Moment { .. })) {
        return Err("a constant moment's generalized force does not turn with a hinge".into());
    }
    if let Some(el) = model.user_elements().find(|&el| model.law(el).is_some()) {
        return Err(format!("element `{}` has a law (its second derivatives are not wired)", model.element_name(el)));
    }
    let chain = || "more than one rotation or translation needs third-order transfer functions (D³F)".to_string();
    let [input] = model.inputs() else { return Err(chain()) };
    let role = |c: usize| model.coord_role(mollier_core::CoordId::new(c));
    let node_fixed = |node: NodeId| {
        let info = &model.nodes()[node.index()];
        (info.offset..info.offset + info.kind.dim()).all(|c| role(c) == CoordRole::Fixed)
    };
    match *input {
        Input::Coordinate(c) => {
            let (node, _) = model.coord_owner(c);
            let moving_ok = model.user_elements().next().is_none()
                && model.nodes()[node.index()].kind == NodeKind::Position
                && (0..model.n_x()).all(|k| role(k) != CoordRole::Dependent)
                && carried_by(model, |frame| frame == node || node_fixed(frame), node_fixed);
            if moving_ok { Ok(Motion::Translation) } else { Err(chain()) }
        }
        Input::Mode(mode) => {
            let (el, k) = model.mode_owner(mode);
            let coords = model.element_coords(el);
            let single = model.user_elements().count() == 1;
            if !single || model.element(el).type_name() != "hinge" || k != 0 || coords.len() != 8 {
                return Err(chain());
            }
            // the hinge's layout: p's four Euler parameters, then q's
            let q_node = model.coord_owner(mollier_core::CoordId::new(coords[4])).0;
            let moving_ok = coords[..4].iter().all(|&c| role(c) == CoordRole::Fixed)
                && (0..model.n_x()).all(|c| role(c) != CoordRole::Dependent || coords[4..].contains(&c))
                && carried_by(model, node_fixed, |frame| frame == q_node || node_fixed(frame));
            if moving_ok { Ok(Motion::Rotation) } else { Err(chain()) }
        }
    }
}

/// Whether every position node that is not fixed is carried by a body frame whose origin passes
/// `origin_ok` and whose orientation passes `orientation_ok`, and every orientation node is fixed
/// or passes `orientation_ok`.
fn carried_by(model: &Model, origin_ok: impl Fn(NodeId) -> bool, orientation_ok: impl Fn(NodeId) -> bool) -> bool {
    (0..model.nodes().len()).map(NodeId::new).all(|node| match model.nodes()[node.index()].kind {
        NodeKind::Orientation => orientation_ok(node),
        NodeKind::Position => {
            origin_ok(node) || model.attached_to(node).is_some_and(|(o, r)| origin_ok(o) && orientation_ok(r))
        }
    })
}

/// `∂²f_v/∂q²` of a one-input system (N m/rad² or N/m²) at a point with the linearization `lin`
/// and accelerations `vd`: the one place the kernel's transfer functions enter the Hessian (where
/// third-order ones exist, chains' blocks `∂²f_v/∂(q, v, v̇)²` would be built here).
pub fn multibody_block(motion: Motion, lin: &Linearization, vd: f64) -> f64 {
    let n = lin.layout.n;
    match motion {
        Motion::Translation => 0.0,
        Motion::Rotation => lin.mass[(0, 0)] * vd - lin.f[n],
    }
}

impl Transcription<'_, '_, '_> {
    /// Offsets in a point's `z` of the Hessian's nonzeros: the diagonal of `x`, `e`, `τ` (every
    /// second partial of the exact cases is there; `ẋ` enters only linearly).
    pub(crate) fn hessian_offsets(&self) -> Vec<usize> {
        let (nx, l) = (self.nx(), self.layout);
        let sd = nx + l.s();
        (0..nx).chain(sd..sd + l.m).chain(2 * nx..self.nz).collect()
    }

    /// The structure: the lower triangle's (row, column), per point the [`Self::hessian_offsets`].
    pub(crate) fn hessian_pattern(&self) -> Vec<(usize, usize)> {
        let offsets = self.hessian_offsets();
        let diagonal = (0..self.points).flat_map(|i| offsets.iter().map(move |&j| (i * self.nz + j, i * self.nz + j)));
        diagonal.chain(self.time_hessian_pattern()).collect()
    }

    /// `σ ∇²J` at `z` alone, for any system (the values in the order of the Hessian's structure,
    /// [`Nlp::hessian_structure`](mollier_ipopt::Nlp::hessian_structure) where it is given): for
    /// checks.
    pub fn objective_hessian(&mut self, z: &[f64], sigma: f64, out: &mut [f64]) -> Vec<(usize, usize)> {
        out.fill(0.0);
        self.add_objective_hessian(z, sigma, out);
        let per = self.hessian_offsets().len();
        self.add_marker_hessian(z, sigma, per, out);
        self.add_time_hessian(z, sigma, &[], &mut out[self.points * per..]);
        self.hessian_pattern()
    }

    /// The values at `z` (the order of [`Self::hessian_pattern`]).
    pub(crate) fn hessian_values(
        &mut self,
        motion: Motion,
        z: &[f64],
        sigma: f64,
        lambda: &[f64],
        out: &mut [f64],
    ) -> bool {
        if self.linearize(z).is_err() {
            return false;
        }
        out.fill(0.0);
        self.add_objective_hessian(z, sigma, out);
        let per = self.hessian_offsets().len();
        if !self.add_marker_hessian(z, sigma, per, out) {
            return false;
        }
        self.add_time_hessian(z, sigma, lambda, &mut out[self.points * per..]);
        let (nx, nz, per, xd0) = (self.nx(), self.nz, self.hessian_offsets().len(), self.off().0);
        if self.layout.n == 1 {
            let lins = &self.cache.as_ref().expect("linearized").1;
            for (i, lin) in lins.iter().enumerate() {
                // the state's first entry: q
                out[i * per] += lambda[i * nx + 1] * multibody_block(motion, lin, z[i * nz + xd0 + 1]);
            }
        }
        true
    }

    /// Add `σ ∇²J` at `z` to `out`.
    fn add_objective_hessian(&self, z: &[f64], sigma: f64, out: &mut [f64]) {
        let (nx, nz, l) = (self.nx(), self.nz, self.layout);
        let (_, e0, t0) = self.off();
        let (sd, m) = (nx + l.s(), l.m);
        let per = nx + m + self.controls();
        // a point's z offset j sits at j (states), nx + k (the contraction rates ṡ_k) or
        // j − nx + m (controls) in its block ([`Self::hessian_offsets`])
        let at = |i: usize, j: usize| {
            i * per
                + if j < nx {
                    j
                } else if j < 2 * nx {
                    nx + (j - sd)
                } else {
                    j - nx + m
                }
        };
        let o = &self.p.objective;
        for i in 0..self.points {
            let zi = &z[i * nz..(i + 1) * nz];
            let w = sigma * self.weight(i, z);
            for k in 0..l.m {
                out[at(i, e0 + k)] += w * 2.0 * o.excitation;
                out[at(i, l.a() + k)] += w * 6.0 * o.activation_cubed * zi[l.a() + k];
                let lopt = self.p.system.muscles[k].hill.params.optimal_fibre_length;
                out[at(i, sd + k)] += w * 2.0 * o.contraction_rate / (lopt * lopt);
            }
            for k in 0..self.p.actuators.len() {
                out[at(i, t0 + k)] += w * 2.0 * o.actuator;
            }
            for tr in &o.tracking {
                out[at(i, tr.state)] += w * 2.0 * tr.weight;
            }
        }
        let last = self.points - 1;
        for &(s, _, w) in &o.final_targets {
            out[at(last, s)] += sigma * 2.0 * w;
        }
    }
}
