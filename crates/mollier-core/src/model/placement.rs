//! The tree path of the position solve: an order in which every dependent node is placed in
//! closed form from nodes already known ([`crate::element::Element::placement`]), outward from
//! the ground, as Pinocchio's and MuJoCo's forward kinematics go down a kinematic tree.
//!
//! A model has one when each of its constraint elements places the nodes its held and input modes
//! determine, one element a node, and every other row is the Euler-parameter norm of a placed
//! orientation: a tree of joints whose bodies' points hang from their frames. A closed loop
//! leaves an element whose nodes are all known and the model keeps Newton-Raphson.

use crate::ids::CoordId;
use crate::model::types::CoordRole;
use crate::model::{Input, Model, RowTarget};

/// One step of a [`Placement`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// Place attachment `t` (its frame known) from its frame.
    Attach(usize),
    /// Element `element` places the slots `placed` from the slots `known`.
    Element { element: usize, known: u64, placed: u64 },
}

/// The steps, in order: each reads only nodes that are fixed, inputs or placed before.
#[derive(Clone, Debug, Default)]
pub(crate) struct Placement {
    pub steps: Vec<Step>,
    /// The inputs that move each node, from the tree's ancestry.
    pub reached: Reached,
    /// The constraint elements with a mode neither held nor an input (a joint's free measure):
    /// the only ones the tree path's acceptance evaluates, to their values.
    pub valued: Vec<usize>,
}

/// Per node, the inputs whose columns of its Jacobian can be nonzero: those of the joints
/// between it and the ground (a node below the right knee has no column of the left leg), made
/// once from the placement's steps as the joints' screws' pass
/// ([`crate::algorithm::screws::Screws::compute`]) carries them outward. A column outside a
/// node's set is exactly 0 at every configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reached {
    /// Node `n`'s inputs are `inputs[start[n]..start[n + 1]]`, ascending (n_nodes + 1).
    pub start: Vec<usize>,
    pub inputs: Vec<usize>,
    /// The node of each coordinate (n_x).
    pub node_of: Vec<usize>,
}

impl Reached {
    /// The inputs that move node `n`, ascending.
    pub fn of(&self, n: usize) -> &[usize] {
        &self.inputs[self.start[n]..self.start[n + 1]]
    }

    /// The sets for `steps` on `model`, as bits carried outward: an input coordinate's node has
    /// its input; an element step's placed nodes the inputs of its known nodes and its input
    /// modes; an attached node those of its frame's origin and orientation.
    fn find(model: &Model, steps: &[Step]) -> Reached {
        let (nq, nn) = (model.n_q(), model.nodes.len());
        let w = nq.div_ceil(64).max(1);
        let node_of: Vec<usize> = (0..model.n_x()).map(|c| model.coord_owner(CoordId::new(c)).0.index()).collect();
        let mut bits = vec![0u64; nn * w];
        let mut done = vec![false; nn];
        let set = |bits: &mut [u64], n: usize, j: usize| bits[n * w + j / 64] |= 1 << (j % 64);
        for (j, inp) in model.inputs.iter().enumerate() {
            if let Input::Coordinate(c) = inp {
                set(&mut bits, node_of[c.index()], j);
            }
        }
        let attach = |bits: &mut [u64], done: &mut [bool], t: usize| {
            let a = &model.attachments.list[t];
            let (n, o, l) = (node_of[a.node], node_of[a.origin], node_of[a.orientation]);
            if !done[n] {
                (0..w).for_each(|k| bits[n * w + k] = bits[o * w + k] | bits[l * w + k]);
                done[n] = true;
            }
        };
        let mut columns = vec![0u64; w];
        for step in steps {
            let (element, known, placed) = match *step {
                Step::Attach(t) => {
                    attach(&mut bits, &mut done, t);
                    continue;
                }
                Step::Element { element, known, placed } => (element, known, placed),
            };
            let entry = &model.elements[element];
            let layout = entry.element.layout();
            columns.fill(0);
            for m in entry.mode_offset..entry.mode_offset + layout.n_modes() {
                if let Some(RowTarget::Input(j)) = model.mode_row[m].map(|r| model.row_target[r]) {
                    columns[j / 64] |= 1 << (j % 64);
                }
            }
            let slots = layout.nodes().iter().take(64).enumerate();
            for (_, (node, _)) in slots.clone().filter(|(s, _)| known >> s & 1 == 1) {
                let n = node.index();
                columns.iter_mut().zip(&bits[n * w..(n + 1) * w]).for_each(|(c, b)| *c |= b);
            }
            for (_, (node, _)) in slots.filter(|(s, _)| placed >> s & 1 == 1) {
                let n = node.index();
                bits[n * w..(n + 1) * w].copy_from_slice(&columns);
                done[n] = true;
            }
        }
        // the attached nodes no step reads (a muscle's points), parents first
        for t in 0..model.attachments.list.len() {
            attach(&mut bits, &mut done, t);
        }
        let mut start = vec![0];
        let mut inputs = Vec::new();
        for n in 0..nn {
            inputs.extend((0..nq).filter(|&j| bits[n * w + j / 64] >> (j % 64) & 1 == 1));
            start.push(inputs.len());
        }
        Reached { start, inputs, node_of }
    }
}

/// Euler-parameter norms are satisfied by any placed orientation: not an element to place by.
fn is_norm(model: &Model, i: usize) -> bool {
    let e = &model.elements[i];
    e.internal && e.element.type_name() == "euler-norm"
}

impl Placement {
    /// The model's placement, or `None` where some dependent node cannot be placed in closed form
    /// (a loop, a joint without [`crate::element::Element::placement`], a node partly given).
    pub(crate) fn find(model: &Model) -> Option<Placement> {
        let n_nodes = model.nodes.len();
        // known: fixed and input nodes; attached and dependent ones once placed
        let mut known = vec![false; n_nodes];
        for (n, info) in model.nodes.iter().enumerate() {
            let roles = &model.coord_role[info.offset..info.offset + info.kind.dim()];
            let dependent = roles.iter().filter(|r| **r == CoordRole::Dependent).count();
            if dependent != 0 && dependent != roles.len() {
                return None;
            }
            known[n] = roles.iter().all(|r| matches!(r, CoordRole::Fixed | CoordRole::Input));
        }
        let node_of = |c: usize| model.coord_owner(CoordId::new(c)).0.index();
        let mut steps = Vec::new();
        let mut constraint = vec![false; model.elements.len()];
        for &i in &model.constraint_elements {
            constraint[i] = !is_norm(model, i);
        }
        // outward from the ground: most elements find their known side placed in the first pass
        let mut pending: Vec<usize> =
            model.topology.element_order.iter().map(|e| e.index()).filter(|&i| constraint[i]).collect();
        let mut chain = Vec::new();
        // an element that places its nodes from some of the others only (a conditional path
        // point without its neighbours, which it needs only while off the path) waits until
        // nothing else can be placed: then the first such goes
        let mut relaxed = false;
        while !pending.is_empty() {
            let before = pending.len();
            let mut taken_relaxed = false;
            pending.retain(|&i| {
                if taken_relaxed {
                    return true;
                }
                let entry = &model.elements[i];
                let slots = entry.element.layout().nodes();
                // the attached nodes the element reads, placed from their frames where known
                for &(node, _) in slots {
                    attach(model, node.index(), &mut known, &mut steps, &mut chain, &node_of);
                }
                let mask = |pick: &dyn Fn(usize) -> bool| {
                    slots
                        .iter()
                        .take(64)
                        .enumerate()
                        .filter(|(_, (n, _))| pick(n.index()))
                        .fold(0u64, |m, (s, _)| m | 1 << s)
                };
                let k = mask(&|n| known[n]);
                let given = (0..entry.element.layout().n_modes().min(64))
                    .filter(|&m| model.mode_row[entry.mode_offset + m].is_some())
                    .fold(0u64, |m, k| m | 1 << k);
                let placed = entry.element.placement(k, given);
                let ok = placed != 0
                    && placed & k == 0
                    && slots.iter().take(64).enumerate().all(|(s, (n, _))| {
                        placed >> s & 1 == 0 || {
                            let info = &model.nodes[n.index()];
                            model.coord_role[info.offset] == CoordRole::Dependent
                        }
                    });
                let all = mask(&|_| true);
                let strict = (k | placed) == all;
                if !ok || (!strict && !relaxed) {
                    return true;
                }
                taken_relaxed = !strict;
                for (s, (n, _)) in slots.iter().enumerate().take(64) {
                    if placed >> s & 1 == 1 {
                        known[n.index()] = true;
                    }
                }
                steps.push(Step::Element { element: i, known: k, placed });
                false
            });
            if pending.len() == before && !relaxed {
                relaxed = true;
                continue;
            }
            relaxed = false;
            if pending.len() == before {
                return None;
            }
        }
        // every dependent node placed (the norms' rows then hold by themselves)
        let all = model.dependent_coords.iter().all(|&c| known[node_of(c)]);
        let valued = model
            .constraint_elements
            .iter()
            .copied()
            .filter(|&i| {
                let entry = &model.elements[i];
                let modes = entry.mode_offset..entry.mode_offset + entry.element.layout().n_modes();
                model.mode_row[modes].iter().any(Option::is_none)
            })
            .collect();
        all.then(|| Placement { reached: Reached::find(model, &steps), steps, valued })
    }
}

/// Place the attached node `node` (and the attached origins above it) where their frames are
/// known, iteratively (an attachment chain may be as long as a chain of bodies).
fn attach(
    model: &Model,
    node: usize,
    known: &mut [bool],
    steps: &mut Vec<Step>,
    chain: &mut Vec<usize>,
    node_of: &dyn Fn(usize) -> usize,
) {
    let of = |n: usize| model.attachments.of_node.get(n).copied().flatten();
    chain.clear();
    let mut n = node;
    while !known[n] {
        let Some(t) = of(n) else { return };
        chain.push(t);
        let a = &model.attachments.list[t];
        if !known[node_of(a.orientation)] {
            return;
        }
        n = node_of(a.origin);
    }
    for &t in chain.iter().rev() {
        steps.push(Step::Attach(t));
        known[node_of(model.attachments.list[t].node)] = true;
    }
}
