//! The exact Hessian of the Lagrangian `σ ∇²J + Σ λ_r ∇²g_r` (IPOPT's `eval_h`, lower triangle),
//! where it is exact, and IPOPT's limited-memory approximation elsewhere.
//!
//! The defects and the actuators' `− B τ` are linear, so their second partials vanish. The
//! objective's are closed form (diagonal: `2 w` for `e²`, `τ²`, tracking and final targets,
//! `6 w a` for `a³`). The dynamics' are those of `f_v`, `f_s` and `f_a` (`f_q` is linear). The
//! multibody part of `f_v` comes from one function, [`multibody_block`], which knows the cases
//! where the kernel's transfer functions determine it exactly:
//! - a translation (the one input a position coordinate, every other node fixed or carried):
//!   `M̄` and the loads' generalized force are constant, `c = 0`, so every second partial is 0;
//! - a rotation about a fixed axis (the one input the rotation of a hinge whose `p` node is fixed,
//!   every point on a body turning with it about a fixed point): each point moves on a circle, so
//!   `D³F_x = −DF_x`, `M̄` is constant and `c = 0`, and `∂²(−Q)/∂q² = Q` (the loads'
//!   generalized force: gravity and point forces).
//!
//! A rotation may carry Hill muscles on paths (free elements) and a law on its hinge: their
//! terms ([`crate::second_order`]) take the paths' `L'`, `L''`, `L'''` from the third-order
//! transfer functions, the Hill model's second partials from dual numbers and the law's
//! curvature ([`mollier_core::Law::curvature`]).
//!
//! Any other mechanism (a tree of joints or one with closed loops) is a [`Motion::Chain`]: the
//! second partials of the equations of motion's multibody part in `(q, v, v̇)` come from the
//! fourth-order transfer functions ([`mollier_core::transfer4`]: `∂²M̄/∂q²`, `∂²Q/∂q²` and
//! `∂²c/∂q²`, exact, as the directional derivative of `DF_xᵀ` applied to the multipliers), its
//! muscles' from their paths' second and mixed third derivatives, `∂²L` and `D³L(a, b, λ_v)`,
//! and its laws' (on input and dependent modes alike: `DF_eᵀ σ(e, ė)` with `e = F(q)`,
//! `ė = DF_e v`) from their modes' `∂²e`, `D³e(a, b, λ_v)`, `D³e(a, b, v)` and the laws' tangents
//! and second partials ([`mollier_core::Law::stress_hessian`]), by the same jets
//! ([`mollier_core::transfer4::mode_parts_with_rates`]: a muscle's path over third-order
//! numbers, a law's element over `Jet4`). Where a piece is missing — an element without fourth
//! order (or a muscle's path without third), a law without second partials (Engin's, the
//! joint stop's, the flexion-torsion joint's) — [`exact_hessian`] says why
//! not and IPOPT's L-BFGS approximation is used: never an approximate "exact" Hessian.

use mollier_core::element::NodeKind;
use mollier_core::{CoordRole, ElementId, Input, Load, ModeId, Model, NodeId};
use mollier_sim::Musculoskeletal;

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
    /// A mechanism (a tree of joints, or closed loops) whose constraint elements, muscles' paths
    /// and laws' elements give fourth order and whose laws give their second partials: the
    /// multibody block, the muscles' and the laws' terms from [`mollier_core::transfer4`].
    Chain,
}

/// The motion of `system` whose dynamics' second partials [`multibody_block`] gives exactly, or
/// why there is none (then the Hessian is IPOPT's approximation). A rotation may carry muscles
/// on paths of free elements without laws (their terms in `second_order.rs`) and a law on its hinge
/// that gives its second partials ([`mollier_core::Law::curvature`]).
pub fn exact_hessian(system: &Musculoskeletal<'_>) -> Result<Motion, String> {
    if system.loads.is_some() {
        return Err("loads varying in time have no second partials here".into());
    }
    match one_input(system) {
        Ok(motion) => Ok(motion),
        Err(_) if system.muscles.is_empty() => chain(system.model).map(|()| Motion::Chain),
        Err(_) => {
            // muscles on several inputs: their paths' mixed third derivatives from the fourth order
            chain(system.model)?;
            let modes: Vec<ModeId> = system.muscles.iter().map(|m| m.mode).collect();
            mollier_core::transfer4::supported_modes(system.model, &modes).map(|()| Motion::Chain)
        }
    }
}

/// Refuses a muscle path with a law (its stress's second derivatives are not wired into a
/// rotation's terms; a chain's take them).
fn plain_paths(system: &Musculoskeletal<'_>) -> Result<(), String> {
    let model = system.model;
    match system.muscles.iter().map(|m| model.mode_owner(m.mode).0).find(|&el| model.law(el).is_some()) {
        Some(el) => {
            Err(format!("muscle path `{}` has a law (its second derivatives are not wired)", model.element_name(el)))
        }
        None => Ok(()),
    }
}

/// Whether a mechanism is a [`Motion::Chain`]: its constraint elements give fourth order, and
/// each law gives its second partials ([`mollier_core::Law::stress_hessian`]) on an element
/// that gives fourth order (its modes' jets), on input and dependent modes alike. Trees and
/// closed loops alike: the fourth order's solves with `D_cc` serve both.
fn chain(model: &Model) -> Result<(), String> {
    mollier_core::transfer4::supported(model)?;
    for el in (0..model.n_elements()).map(ElementId::new) {
        let Some(law) = model.law(el) else { continue };
        let n = model.element(el).layout().n_modes();
        let zeros = vec![0.0; n];
        let [mut hee, mut heed, mut hdd] = [0; 3].map(|_| vec![0.0; n * n]);
        if !law.stress_hessian(&zeros, &zeros, &zeros, &mut hee, &mut heed, &mut hdd) {
            return Err(format!("the law of `{}` gives no second partials", model.element_name(el)));
        }
        if n > 0 {
            mollier_core::transfer4::supported_modes(model, &[model.mode_id(el, 0)])?;
        }
    }
    Ok(())
}

/// [`exact_hessian`]'s one-input cases: a translation, or a rotation with its muscles.
fn one_input(system: &Musculoskeletal<'_>) -> Result<Motion, String> {
    let model = system.model;
    if model.dynamics().loads.iter().any(|l| matches!(l, Load::Moment { .. })) {
        return Err("a constant moment's generalized force does not turn with a hinge".into());
    }
    let paths: Vec<ElementId> = system.muscles.iter().map(|m| model.mode_owner(m.mode).0).collect();
    plain_paths(system)?;
    let chain = || "muscles on more than one rotation or translation: a chain's case".to_string();
    let [input] = model.inputs() else { return Err(chain()) };
    let role = |c: usize| model.coord_role(mollier_core::CoordId::new(c));
    let fixed = static_nodes(model);
    let owner = |c: usize| model.coord_owner(mollier_core::CoordId::new(c)).0;
    let node_fixed = |node: NodeId| fixed[node.index()];
    // the elements that are not muscles' paths
    let mut own = model.user_elements().filter(|el| !paths.contains(el));
    match *input {
        Input::Coordinate(c) => {
            if !system.muscles.is_empty() {
                return Err("muscles on a translation are not wired into the exact Hessian".into());
            }
            let (node, _) = model.coord_owner(c);
            let moving_ok = own.next().is_none()
                && model.nodes()[node.index()].kind == NodeKind::Position
                && (0..model.n_x()).all(|k| role(k) != CoordRole::Dependent || node_fixed(owner(k)))
                && carried_by(model, |frame| frame == node || node_fixed(frame), node_fixed);
            if moving_ok { Ok(Motion::Translation) } else { Err(chain()) }
        }
        Input::Mode(mode) => {
            let (el, k) = model.mode_owner(mode);
            let coords = model.element_coords(el);
            let single = own.count() == 1;
            if !single || model.element(el).type_name() != "hinge" || k != 0 || coords.len() != 8 {
                return Err(chain());
            }
            if let Some(law) = model.law(el) {
                let n = model.element(el).layout().n_modes();
                if !law.curvature(&vec![0.0; n], &vec![0.0; n], &mut vec![0.0; 3 * n]) {
                    return Err(format!("the law of `{}` gives no second partials", model.element_name(el)));
                }
            }
            // the hinge's layout: p's four Euler parameters, then q's
            let q_node = model.coord_owner(mollier_core::CoordId::new(coords[4])).0;
            let moving_ok = coords[..4].iter().all(|&c| role(c) == CoordRole::Fixed)
                && (0..model.n_x())
                    .all(|c| role(c) != CoordRole::Dependent || coords[4..].contains(&c) || node_fixed(owner(c)))
                && carried_by(model, node_fixed, |frame| frame == q_node || node_fixed(frame));
            if moving_ok { Ok(Motion::Rotation) } else { Err(chain()) }
        }
    }
}

/// Per node, whether it cannot move: its coordinates fixed, or held by a generated element (a
/// body's rigid beam to one of its points, its released modes without a law) whose orientation
/// nodes cannot move and one of whose position nodes cannot (the elbow's point on the fixed
/// humerus).
fn static_nodes(model: &Model) -> Vec<bool> {
    let role = |c: usize| model.coord_role(mollier_core::CoordId::new(c));
    let mut fixed: Vec<bool> = model
        .nodes()
        .iter()
        .map(|info| (info.offset..info.offset + info.kind.dim()).all(|c| role(c) == CoordRole::Fixed))
        .collect();
    let rigid: Vec<Vec<NodeId>> = (0..model.n_elements())
        .map(ElementId::new)
        .filter(|&el| model.is_internal(el) && model.law(el).is_none())
        .filter(|&el| {
            (0..model.element(el).layout().n_modes())
                .all(|k| model.mode_role(model.mode_id(el, k)) != mollier_core::ModeRole::Input)
        })
        .map(|el| {
            let mut nodes: Vec<NodeId> =
                model.element_coords(el).iter().map(|&c| model.coord_owner(mollier_core::CoordId::new(c)).0).collect();
            nodes.dedup();
            nodes
        })
        .collect();
    loop {
        let mut changed = false;
        for nodes in &rigid {
            let kind = |n: &NodeId| model.nodes()[n.index()].kind;
            let held = nodes.iter().filter(|n| kind(n) == NodeKind::Orientation).all(|n| fixed[n.index()])
                && nodes.iter().any(|n| kind(n) == NodeKind::Position && fixed[n.index()]);
            if held && nodes.iter().any(|n| !fixed[n.index()]) {
                nodes.iter().for_each(|n| fixed[n.index()] = true);
                changed = true;
            }
        }
        if !changed {
            return fixed;
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

/// The multibody part of `∂²f_v/∂q²` of a one-input system (N m/rad² or N/m²), `f_v`'s terms
/// without the laws' and muscles' (in `second_order.rs`), from the loads' generalized force
/// `q_load = DF_xᵀ f` (gravity and point forces, N m or N): the one place the kernel's
/// transfer functions enter the Hessian (chains' blocks `∂²f_v/∂(q, v, v̇)²` would be built here
/// with `D⁴F`).
pub fn multibody_block(motion: Motion, q_load: f64) -> f64 {
    match motion {
        Motion::Translation | Motion::Chain => 0.0,
        Motion::Rotation => q_load,
    }
}

/// One point's nonzeros of the Hessian (lower triangle: offsets in the point's `z`, row ≥
/// column) and where each sits in the point's values.
pub(crate) struct Slots {
    pairs: Vec<(usize, usize)>,
    index: std::collections::HashMap<(usize, usize), usize>,
}

impl Slots {
    /// The value index of `(a, b)` (either order) within point `i`'s values.
    pub(crate) fn at(&self, i: usize, a: usize, b: usize) -> usize {
        i * self.pairs.len() + self.index[&(a.max(b), a.min(b))]
    }
}

/// A point's nonzeros for `layout` and `nz` variables per point (made once, by
/// [`Transcription::new`]): the diagonal of `x`, the contraction rates `ṡ`, `e`, `τ` (the
/// objective's and the rotation's), `(v, q)` (a law's damping), a chain's `(q, q)`, `(v, v)`
/// and `(v̇, q)` (`M̄(q) v̇`), and per muscle its states' couplings with `q` and each other and
/// its excitation's with its activation ([`crate::second_order`]); `ȧ` enters only linearly.
pub(crate) fn hessian_slots(l: mollier_sim::Layout, nz: usize, accelerations: bool) -> Slots {
    let nx = l.len();
    let (n, sd) = (l.n, nx + l.s());
    let mut pairs: Vec<(usize, usize)> = (0..nx).chain(sd..sd + l.m).chain(2 * nx..nz).map(|j| (j, j)).collect();
    if accelerations {
        // the diagonal of `∫ Σ v̇² dt` (the dynamics are linear in `v̇`)
        pairs.extend((nx + n..nx + 2 * n).map(|j| (j, j)));
    }
    pairs.extend((0..n).flat_map(|i| (0..n).map(move |j| (n + i, j))));
    // a chain's couplings: (q, q), (v, v) below the diagonal, and (v̇, q) (`M̄(q)`)
    pairs.extend((0..n).flat_map(|i| (0..i).flat_map(move |j| [(i, j), (n + i, n + j)])));
    pairs.extend((0..n).flat_map(|i| (0..n).map(move |j| (nx + n + i, j))));
    for k in 0..l.m {
        let (s, a, sdot, e) = (l.s() + k, l.a() + k, sd + k, 2 * nx + k);
        pairs.extend((0..n).flat_map(|j| [(s, j), (a, j), (sdot, j)]));
        pairs.extend([(a, s), (sdot, s), (sdot, a), (e, a)]);
    }
    let index = pairs.iter().enumerate().map(|(k, &p)| (p, k)).collect();
    Slots { pairs, index }
}

impl Transcription<'_, '_, '_> {
    /// The structure: the lower triangle's (row, column), per point its [`hessian_slots`].
    pub(crate) fn hessian_pattern(&self) -> Vec<(usize, usize)> {
        let pairs = &self.slots.pairs;
        let per_point = (0..self.points)
            .flat_map(|i| pairs.iter().map(move |&(a, b)| (i * self.nz + a, i * self.nz + b)).collect::<Vec<_>>());
        per_point.chain(self.time_hessian_pattern()).collect()
    }

    /// `σ ∇²J` at `z` alone, for any system (the values in the order of the Hessian's structure,
    /// [`Nlp::hessian_structure`](mollier_ipopt::Nlp::hessian_structure) where it is given): for
    /// checks.
    pub fn objective_hessian(&mut self, z: &[f64], sigma: f64, out: &mut [f64]) -> Vec<(usize, usize)> {
        out.fill(0.0);
        let slots = std::sync::Arc::clone(&self.slots);
        self.add_objective_hessian(z, sigma, &slots, out);
        let per = slots.pairs.len();
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
        let slots = std::sync::Arc::clone(&self.slots);
        out.fill(0.0);
        self.add_objective_hessian(z, sigma, &slots, out);
        let per = slots.pairs.len();
        if !self.add_marker_hessian(z, sigma, per, out) {
            return false;
        }
        self.add_time_hessian(z, sigma, lambda, &mut out[self.points * per..]);
        self.add_position_hessian(lambda, &slots, out);
        self.add_dynamics_hessian(motion, z, lambda, &slots, out).is_ok()
    }

    /// Add `σ ∇²J` at `z` to `out`.
    fn add_objective_hessian(&self, z: &[f64], sigma: f64, slots: &Slots, out: &mut [f64]) {
        let (nx, nz, l) = (self.nx(), self.nz, self.layout);
        let (_, e0, t0) = self.off();
        let sd = nx + l.s();
        let at = |i: usize, j: usize| slots.at(i, j, j);
        let o = &self.p.objective;
        for i in 0..self.points {
            let zi = &z[i * nz..(i + 1) * nz];
            let w = sigma * self.weight(i, z);
            for k in 0..l.m {
                out[at(i, e0 + k)] += w * 2.0 * o.excitation * self.excitation_weight(k);
                out[at(i, l.a() + k)] += w * 6.0 * o.activation_cubed * zi[l.a() + k];
                let lopt = self.p.system.muscles[k].hill.params.optimal_fibre_length;
                out[at(i, sd + k)] += w * 2.0 * o.contraction_rate / (lopt * lopt);
            }
            if o.acceleration != 0.0 {
                for j in nx + l.n..nx + 2 * l.n {
                    out[at(i, j)] += w * 2.0 * o.acceleration;
                }
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
