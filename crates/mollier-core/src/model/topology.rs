//! Topology of a model: the incidence graph of nodes and elements.
//!
//! Vertices are the nodes, the elements and one *ground*; nodes whose coordinates are all fixed
//! are the ground itself, and a node with some fixed or driven coordinates is joined to it. An
//! element is joined to each distinct node it connects. From this graph (petgraph):
//! - **parts**: connected components; a part not joined to the ground floats;
//! - **loops**: the cycle rank `E − V + C` (independent closed chains of constraints, including
//!   those closed through the ground);
//! - a breadth-first **traversal order** from the ground, which orders the unknowns and equations
//!   so that neighbours in the mechanism are neighbours in the matrices.

use std::collections::VecDeque;

use petgraph::graph::{NodeIndex, UnGraph};

use crate::ids::{ElementId, NodeId};
use crate::linalg::sparse::Blocks;
use crate::model::types::{CoordRole, ElementEntry, NodeInfo};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Vertex {
    Ground,
    Node(NodeId),
    Element(ElementId),
}

/// A connected part of the model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its nodes (those that are not entirely fixed).
    pub nodes: Vec<NodeId>,
    /// Its elements.
    pub elements: Vec<ElementId>,
    /// `false` when nothing ties the part to the ground (it floats unless its inputs hold it).
    pub grounded: bool,
}

/// Parts, loops and traversal order of a model.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    /// Connected parts, the grounded one first.
    pub parts: Vec<Part>,
    /// Independent loops: the cycle rank of the incidence graph.
    pub loops: usize,
    /// Nodes in breadth-first order from the ground (all nodes).
    pub node_order: Vec<NodeId>,
    /// Elements in breadth-first order from the ground (all elements).
    pub element_order: Vec<ElementId>,
}

impl Topology {
    /// `attached`: `(node, origin, orientation)` of each attached node, joined to its frame's two
    /// nodes as a rigid attachment element joined them before (so parts and loops are unchanged).
    pub(crate) fn analyse(
        nodes: &[NodeInfo],
        elements: &[ElementEntry],
        coord_role: &[CoordRole],
        attached: &[(NodeId, NodeId, NodeId)],
    ) -> Self {
        let mut g: UnGraph<Vertex, ()> = UnGraph::new_undirected();
        let ground = g.add_node(Vertex::Ground);
        let mut node_vertex = Vec::with_capacity(nodes.len());
        let mut fully_fixed = Vec::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            let roles = &coord_role[n.offset..n.offset + n.kind.dim()];
            let all_fixed = roles.iter().all(|r| *r == CoordRole::Fixed);
            fully_fixed.push(all_fixed);
            if all_fixed {
                node_vertex.push(ground);
            } else {
                let v = g.add_node(Vertex::Node(NodeId::new(i)));
                if roles.iter().any(|r| *r != CoordRole::Dependent) {
                    g.add_edge(v, ground, ());
                }
                node_vertex.push(v);
            }
        }
        for (j, e) in elements.iter().enumerate() {
            let v = g.add_node(Vertex::Element(ElementId::new(j)));
            let mut seen: Vec<NodeIndex> = Vec::new();
            for &(node, _) in e.element.layout().nodes() {
                let nv = node_vertex[node.index()];
                if !seen.contains(&nv) {
                    seen.push(nv);
                    g.add_edge(v, nv, ());
                }
            }
        }
        for &(node, origin, orientation) in attached {
            let nv = node_vertex[node.index()];
            for other in [origin, orientation] {
                let ov = node_vertex[other.index()];
                if ov != nv {
                    g.add_edge(nv, ov, ());
                }
            }
        }
        // breadth-first from the ground, then from whatever is left (floating parts)
        let mut visited = vec![false; g.node_count()];
        let mut node_order: Vec<NodeId> = (0..nodes.len()).filter(|&i| fully_fixed[i]).map(NodeId::new).collect();
        let mut element_order = Vec::with_capacity(elements.len());
        let mut parts = Vec::new();
        let mut components = 0;
        let starts = std::iter::once(ground).chain(g.node_indices());
        for start in starts {
            if visited[start.index()] {
                continue;
            }
            components += 1;
            let mut part = Part { nodes: Vec::new(), elements: Vec::new(), grounded: start == ground };
            let mut queue = VecDeque::from([start]);
            visited[start.index()] = true;
            while let Some(v) = queue.pop_front() {
                match g[v] {
                    Vertex::Ground => {}
                    Vertex::Node(n) => {
                        node_order.push(n);
                        part.nodes.push(n);
                    }
                    Vertex::Element(e) => {
                        element_order.push(e);
                        part.elements.push(e);
                    }
                }
                let mut next: Vec<NodeIndex> = g.neighbors(v).filter(|w| !visited[w.index()]).collect();
                next.sort();
                for w in next {
                    visited[w.index()] = true;
                    queue.push_back(w);
                }
            }
            if start != ground || !part.elements.is_empty() || !part.nodes.is_empty() {
                parts.push(part);
            }
        }
        let loops = (g.edge_count() + components).saturating_sub(g.node_count());
        Topology { parts, loops, node_order, element_order }
    }

    /// Parts not tied to the ground.
    pub fn floating_parts(&self) -> impl Iterator<Item = &Part> {
        self.parts.iter().filter(|p| !p.grounded)
    }
}

/// The tree path of the transfer functions, where the block-triangular form of `D_cc` makes the
/// mechanism a tree of small blocks (a joint's unknowns, or a closed loop's in one block): for
/// each input, the diagonal blocks its column of `DF` moves — the blocks of its own equations
/// and those downstream of them, its subtree — ascending. A column is solved over its subtree
/// only, and a column of `D²F` over the subtrees its two inputs share (empty for inputs on
/// different branches); the other blocks' unknowns are 0. Like Pinocchio's and MuJoCo's
/// recursions over a kinematic tree, the work follows the subtrees rather than the whole model.
#[derive(Clone, Debug, Default)]
pub struct Reach {
    /// Input `j`'s blocks are `blocks[start[j]..start[j + 1]]` (`n_q + 1`).
    start: Vec<usize>,
    blocks: Vec<usize>,
}

impl Reach {
    /// The subtrees of the inputs whose right-hand sides have their nonzero entries in the rows
    /// `input_rows[j]`; `None` where they are not worth a path of their own: when together they
    /// cover more than half of the `n_q x n_blocks` a whole solve of every column substitutes (a
    /// chain, whose inputs reach on average half of it; a single block), or more than
    /// [`REACH_LIMIT`] entries.
    pub(crate) fn find(blocks: &Blocks, input_rows: &[Vec<usize>]) -> Option<Reach> {
        let budget = (input_rows.len() * blocks.len() / 2).min(REACH_LIMIT);
        let mut reach = Reach { start: vec![0], blocks: Vec::new() };
        let (mut mark, mut list) = (vec![false; blocks.len()], Vec::new());
        for rows in input_rows {
            blocks.downstream(rows.iter().copied(), &mut mark, &mut list);
            reach.blocks.extend_from_slice(&list);
            if reach.blocks.len() > budget {
                return None;
            }
            reach.start.push(reach.blocks.len());
        }
        Some(reach)
    }

    /// Input `j`'s blocks, ascending.
    pub fn of(&self, j: usize) -> &[usize] {
        &self.blocks[self.start[j]..self.start[j + 1]]
    }

    /// Blocks over all inputs: the substitutions of one `DF`, in blocks.
    pub fn total(&self) -> usize {
        self.blocks.len()
    }
}

/// Largest number of (input, block) pairs a [`Reach`] keeps (8 MB).
pub const REACH_LIMIT: usize = 1 << 20;

/// The blocks in both of the ascending lists `a` and `b`, into `out`: the subtree that moves
/// with both of two inputs.
pub(crate) fn shared_blocks(a: &[usize], b: &[usize], out: &mut Vec<usize>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}
