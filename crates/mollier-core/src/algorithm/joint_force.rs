//! The force a joint's socket carries, from the bodies beyond it, with its exact derivatives:
//! what a joint-stability constraint of an optimal control problem needs.
//!
//! **The distal side.** Cut the socket's elements at the joint node `J`. The position nodes
//! joined to `J` by elements that carry reactions (any mode fixed or an input) or by attachments
//! form the distal side `D`; the elements with only dependent modes (the muscles' paths) that
//! reach both sides cross the cut. Translate every node of `D` by a virtual `u` (orientations
//! held): the elements inside `D` do not deform (their deformations are invariant under a common
//! translation), so the virtual work on `D` is the socket's force on `J`, the crossing elements'
//! forces and the loads, against the inertia forces. With `w_u` that translation (n_x: `u` at
//! `D`'s position coordinates, 0 elsewhere) and `σ_k` the crossing modes' stresses,
//! ```text
//! u · F_socket = w_uᵀ (f_in − f_ext) + Σ_k σ_k ∇e_k · w_u
//! ```
//! No reaction is solved for: the kinetostatics of [`crate::dynamics::kinetostatic_stresses`]
//! give the same force by `D_cc`'s transposed solve (checked against each other in
//! `crates/mollier/tests/optimize_cone.rs`).
//!
//! **Derivatives.** The power `w_uᵀ (f_in − f_ext)` is a closed form in `(x, ẋ, ẍ)`
//! ([`crate::transfer4::power`]); along a direction `(a_q, a_v, a_v̇)` of `(q, v, v̇)` its
//! derivative is the `ε1` part over dual numbers whose parts are the coordinates' mixed
//! derivatives ([`crate::transfer4::subset_jets`] of `q + ε1 a_q + τ (v + ε1 a_v) + τ²/2 (v̇ + ε1
//! a_v̇)`, `τ = ε3 + ε4`: `ẋ = x_{ε3}`, `ẍ = x_{ε3ε4}`, the `D²F_x` and `D³F_x` terms included).
//! A crossing mode's `∇e_k · w_u` and its derivative along `a_q` are the `ε2` and `ε1ε2` parts of
//! one evaluation over [`Jet4`] at `x + ε1 x_{ε1} + ε2 w_u + ε3 x_{ε3} + ε1ε3 x_{ε1ε3}`
//! ([`crate::element::Element::fourth_order`]); the same evaluation's `ε3` and `ε1ε3` parts are
//! the mode's rate `ė_k` and its derivative, which with `e_k` and its `ε1` part give a law's
//! stress and its derivative through the law's tangents.

use num_dual::Dual64;

use crate::algorithm::error::KinematicsError;
use crate::algorithm::transfer4::{jet, part, power, subset_jets};
use crate::data::Data;
use crate::element::{ElementError, Jet4, NodeKind};
use crate::ids::{ElementId, NodeId};
use crate::model::{CoordRole, Model};

/// The bodies beyond a joint's socket: the position coordinates that translate with the joint
/// node, and the elements that cross the cut.
#[derive(Clone, Debug, PartialEq)]
pub struct DistalSide {
    /// First coordinate of each position node of the distal side (the joint's among them).
    pub nodes: Vec<usize>,
    /// The elements with only dependent modes that have position nodes on both sides.
    pub crossing: Vec<ElementId>,
}

impl DistalSide {
    /// The distal side of `joint` (a position node) beyond the `socket` elements, or why there
    /// is none: the joint not a position node, the socket not ending at it, the distal side
    /// holding a fixed or input coordinate (the socket is then not the only support), a
    /// socket element wholly inside it, or a crossing element without
    /// [`crate::element::Element::fourth_order`].
    pub fn new(model: &Model, joint: NodeId, socket: &[ElementId]) -> Result<Self, String> {
        let nodes = model.nodes();
        let info = nodes.get(joint.index()).ok_or_else(|| format!("no node #{}", joint.index()))?;
        if info.kind != NodeKind::Position {
            return Err(format!("`{}` is not a position node", info.name));
        }
        // position nodes by their first coordinate
        let of_coord = |c: usize| nodes.iter().position(|n| n.kind == NodeKind::Position && n.offset == c);
        let mut parent: Vec<usize> = (0..nodes.len()).collect();
        fn root(p: &mut [usize], mut i: usize) -> usize {
            while p[i] != i {
                p[i] = p[p[i]];
                i = p[i];
            }
            i
        }
        let join = |p: &mut Vec<usize>, a: usize, b: usize| {
            let (ra, rb) = (root(p, a), root(p, b));
            p[ra] = rb;
        };
        let positions = |el: usize| -> Vec<usize> {
            let layout = model.elements[el].element.layout();
            layout.nodes().iter().filter(|(_, k)| *k == NodeKind::Position).map(|(n, _)| n.index()).collect()
        };
        let carries = |el: usize| {
            let entry = &model.elements[el];
            (0..entry.element.layout().n_modes()).any(|k| model.mode_row[entry.mode_offset + k].is_some())
        };
        for el in 0..model.elements.len() {
            if socket.iter().any(|s| s.index() == el) || !carries(el) {
                continue;
            }
            let p = positions(el);
            for w in p.windows(2) {
                join(&mut parent, w[0], w[1]);
            }
        }
        for a in &model.attachments.list {
            if let (Some(n), Some(o)) = (of_coord(a.node), of_coord(a.origin)) {
                join(&mut parent, n, o);
            }
        }
        let r = root(&mut parent, joint.index());
        let inside: Vec<bool> = (0..nodes.len()).map(|i| root(&mut parent, i) == r).collect();
        let mut side = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            if !(inside[i] && n.kind == NodeKind::Position) {
                continue;
            }
            if let Some(c) = (n.offset..n.offset + 3)
                .find(|&c| !matches!(model.coord_role[c], CoordRole::Dependent | CoordRole::Attached))
            {
                return Err(format!(
                    "the bodies beyond the joint hold `{}` (coordinate {}), which is {:?}: the socket is not their only support",
                    n.name,
                    c - n.offset,
                    model.coord_role[c]
                ));
            }
            side.push(n.offset);
        }
        for s in socket {
            let p = positions(s.index());
            if !p.iter().any(|&n| !inside[n]) {
                return Err(format!(
                    "the socket element `{}` lies wholly beyond the joint",
                    model.elements[s.index()].name
                ));
            }
            if !p.contains(&joint.index()) {
                return Err(format!(
                    "the socket element `{}` does not end at the joint",
                    model.elements[s.index()].name
                ));
            }
        }
        let crossing = (0..model.elements.len())
            .filter(|&el| !carries(el) && !socket.iter().any(|s| s.index() == el))
            .filter(|&el| {
                let p = positions(el);
                p.iter().any(|&n| inside[n]) && p.iter().any(|&n| !inside[n])
            })
            .map(ElementId::new)
            .collect::<Vec<_>>();
        // the crossing elements' second derivatives come from their fourth-order evaluation
        for el in &crossing {
            let entry = &model.elements[el.index()];
            let own: Vec<Jet4> = entry.own.iter().map(|&c| Jet4::from(model.x0[c])).collect();
            let mut e = vec![Jet4::from(0.0); entry.element.layout().n_modes()];
            if !matches!(entry.element.fourth_order(&own, &mut e), Ok(true)) {
                return Err(format!(
                    "`{}` (`{}`) crosses the joint and has no higher derivatives (Element::fourth_order)",
                    entry.name,
                    entry.element.type_name()
                ));
            }
        }
        Ok(Self { nodes: side, crossing })
    }

    /// The virtual translation `w_u` (n_x) of the distal side by `u`.
    fn translation<T: Copy + From<f64>>(&self, n_x: usize, u: [f64; 3]) -> Vec<T> {
        let mut w = vec![T::from(0.0); n_x];
        for &o in &self.nodes {
            for a in 0..3 {
                w[o + a] = T::from(u[a]);
            }
        }
        w
    }
}

/// The parts of the socket's force along one direction of `(q, v, v̇)`: per global axis `i`,
/// `[value, derivative]` of each term, and the socket body's Euler parameters with theirs.
#[derive(Clone, Debug, PartialEq)]
pub struct JointForceJet {
    /// `w_iᵀ (f_in − f_ext)` (N) per global axis `i`, and its derivative along the direction.
    pub power: [[f64; 2]; 3],
    /// Per crossing element (in [`DistalSide::crossing`]'s order), per mode, per axis:
    /// `∇e_k · w_i` (dimensionless for a length) and its derivative along the direction's `a_q`.
    pub crossing: Vec<Vec<[[f64; 2]; 3]>>,
    /// Per crossing element, per mode: `[e_k, ė_k]` (m and m/s, or rad and rad/s), each with its
    /// derivative along the direction, for a law's stress `σ_k(e, ė)` and its partials.
    pub modes: Vec<Vec<[[f64; 2]; 2]>>,
    /// The Euler parameters of the requested orientation node and their derivative.
    pub orientation: [[f64; 2]; 4],
}

/// The terms of the socket's force of the distal side `side` at the solved configuration in
/// `data` (its attached nodes placed), rates `qd` and accelerations `qdd` (n_q each), and their
/// derivatives along the direction `(a_q, a_v, a_vd)` (n_q each, or empty for 0), with the
/// orientation node `body`'s Euler parameters: the socket's force on the joint node is
/// `F_i = power_i + Σ_k σ_k crossing_{k,i}` (see the module's text), a law's `σ_k` of the
/// crossing modes' values and rates in `modes`.
#[allow(clippy::too_many_arguments)]
pub fn joint_force_jet(
    model: &Model,
    data: &mut Data,
    side: &DistalSide,
    body: NodeId,
    qd: &[f64],
    qdd: &[f64],
    direction: [&[f64]; 3],
) -> Result<JointForceJet, KinematicsError> {
    let mut q = vec![Vec::new(); 16];
    q[1] = direction[0].to_vec();
    (q[4], q[8]) = (qd.to_vec(), qd.to_vec());
    (q[5], q[9]) = (direction[1].to_vec(), direction[1].to_vec());
    (q[12], q[13]) = (qdd.to_vec(), direction[2].to_vec());
    let mut out = Vec::new();
    subset_jets(model, data, &q, 1 | 4 | 8, &mut out)?;
    let nx = model.n_x();
    let lift = |s: usize| -> Vec<Dual64> { (0..nx).map(|c| Dual64::new(out[s][c], out[s | 1][c])).collect() };
    let (x, xd, xdd) = (lift(0), lift(4), lift(12));
    let axes = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
    let power = axes.map(|u| {
        let p = power(model, &x, &xd, &xdd, &side.translation::<Dual64>(nx, u));
        [p.re, p.eps]
    });
    let mut crossing = Vec::with_capacity(side.crossing.len());
    let mut modes = Vec::with_capacity(side.crossing.len());
    let (mut own, mut e) = (Vec::new(), Vec::new());
    for el in &side.crossing {
        let entry = &model.elements[el.index()];
        let n_modes = entry.element.layout().n_modes();
        let mut per_mode = vec![[[0.0; 2]; 3]; n_modes];
        let mut values = vec![[[0.0; 2]; 2]; n_modes];
        for (i, u) in axes.iter().enumerate() {
            let w = side.translation::<f64>(nx, *u);
            own.clear();
            // ε3 carries the rates: e's ε3 part is ė = ∇e · ẋ, its ε1ε3 part ė's derivative
            own.extend(entry.own.iter().map(|&c| {
                jet(|s| match s {
                    0 => out[0][c],
                    1 => out[1][c],
                    2 => w[c],
                    4 => out[4][c],
                    5 => out[5][c],
                    _ => 0.0,
                })
            }));
            e.clear();
            e.resize(n_modes, Jet4::from(0.0));
            let element_error = |error| KinematicsError::Element { element: entry.name.clone(), error };
            if !entry.element.fourth_order(&own, &mut e).map_err(element_error)? {
                let why = format!("`{}` has no higher derivatives (Element::fourth_order)", entry.element.type_name());
                return Err(element_error(ElementError::Other(why)));
            }
            for (k, ek) in e.iter().enumerate() {
                per_mode[k][i] = [part(ek, 2), part(ek, 3)];
                values[k] = [[part(ek, 0), part(ek, 1)], [part(ek, 4), part(ek, 5)]];
            }
        }
        crossing.push(per_mode);
        modes.push(values);
    }
    let o = model.nodes()[body.index()].offset;
    let orientation = [0, 1, 2, 3].map(|k| [out[0][o + k], out[1][o + k]]);
    Ok(JointForceJet { power, crossing, modes, orientation })
}
