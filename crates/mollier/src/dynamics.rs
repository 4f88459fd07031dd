//! Inverse dynamics of a motion and forward simulation, with outputs named as in the file.
//!
//! [`InverseDynamicsRun`] solves, for each frame, the positions for `q` and the kinetostatics
//! (van der Helm 1994, eq. 13-15) for `q̇` and `q̈`: the driving generalized force of every input, the
//! stress of every rigid mode of the user's elements (the reactions: joint moments in a hinge's
//! bendings, forces in rigid trusses, contact forces), the support reactions at the fixed
//! coordinates, the joint forces where bodies share a point, and the stresses the laws give the
//! free and driven modes.
//!
//! [`Simulation`] integrates the equations of motion of a passive mechanism (no driving forces)
//! with the kernel's fourth-order Runge-Kutta method and reports the energy.

use mollier_core::dynamics::{
    Kinetostatics, Trajectory, driving_into, element_forces, kinetostatics_into, law_stresses_into, moment_of, simulate,
};
use mollier_core::element::{NodeKind, Quantity};
use mollier_core::{CoordRole, Data, ElementId, Load, ModeId, ModeRole, Model, NodeId};

use crate::analysis::FrameError;
use crate::compile::Compiled;
use crate::loads::ExternalLoads;

/// An output column: its name, unit and meaning (for the units sidecar).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    /// The column's name in the CSV header.
    pub name: String,
    /// Its SI unit, e.g. `N m`.
    pub unit: &'static str,
    /// What the value is.
    pub meaning: String,
}

impl Column {
    fn new(name: String, unit: &'static str, meaning: impl Into<String>) -> Self {
        Self { name, unit, meaning: meaning.into() }
    }
}

/// The stress unit of a mode of this quantity (the stress is conjugate to the mode).
fn stress_unit(q: Quantity) -> &'static str {
    match q {
        Quantity::Length => "N",
        Quantity::Angle | Quantity::Dimensionless => "N m",
    }
}

/// A support reaction: a force component at a fixed position coordinate, or the moment on a fixed
/// orientation.
#[derive(Clone, Debug)]
enum Support {
    /// Generalized force at one fixed coordinate.
    Coordinate(usize),
    /// Component `axis` of the moment (global frame) on a fully fixed orientation node.
    Moment(NodeId, usize),
}

/// A joint: a point `A.P` of body `A` that another body shares (as its origin or as one of its
/// points). Its force is the force on `A` at `P` from everything else at the node.
#[derive(Clone, Debug)]
enum Joint {
    /// The point is attached to `A`'s frame: the force is what passes from the node into `A`,
    /// minus the kinetostatic nodal entries of its coordinates.
    Attached(NodeId),
    /// The point is held to `A` by a generated beam: minus the force the beam exerts on the node,
    /// at `offset` among the beam's local coordinates.
    Beam { beam: ElementId, offset: usize },
}

/// The joints of a compiled model, with their names (`A.P`), in the order of their nodes.
fn joints(compiled: &Compiled) -> Vec<(String, Joint)> {
    let model = &compiled.model;
    let body_of =
        |o: NodeId, l: NodeId| compiled.bodies.iter().find(|b| b.frame.position == o && b.frame.orientation == l);
    // the bodies that hold each position node: their origins, and their points (attached or
    // held by generated beams)
    let mut holders: Vec<Vec<&str>> = vec![Vec::new(); model.nodes().len()];
    let mut held: Vec<(usize, String, &str, Joint)> = Vec::new();
    for b in &compiled.bodies {
        holders[b.frame.position.index()].push(&b.name);
    }
    for i in 0..model.nodes().len() {
        let n = NodeId::new(i);
        let Some(b) = model.attached_to(n).and_then(|(o, l)| body_of(o, l)) else { continue };
        // a centre of mass is not a joint
        if b.mass_node == Some(n) && model.nodes()[i].name == format!("{}.com", b.name) {
            continue;
        }
        holders[i].push(&b.name);
        held.push((i, model.nodes()[i].name.clone(), &b.name, Joint::Attached(n)));
    }
    for i in 0..model.n_elements() {
        let el = ElementId::new(i);
        if !model.is_internal(el) {
            continue;
        }
        let name = model.element_name(el);
        let Some((body, point)) = name.split_once('.') else { continue };
        let Some(b) = compiled.bodies.iter().find(|b| b.name == body) else { continue };
        if point == "com" && b.mass_node.is_some() {
            continue;
        }
        let layout = model.element(el).layout();
        let at = layout
            .nodes()
            .iter()
            .map(|(n, _)| *n)
            .find(|n| *n != b.frame.position && model.nodes()[n.index()].kind == NodeKind::Position);
        if let Some(n) = at {
            holders[n.index()].push(&b.name);
            held.push((n.index(), name.to_string(), &b.name, Joint::Beam { beam: el, offset: slot(model, el, n) }));
        }
    }
    held.sort_by_key(|h| h.0);
    held.into_iter()
        .filter(|(n, _, body, _)| holders[*n].iter().any(|h| h != body))
        .map(|(_, name, _, joint)| (name, joint))
        .collect()
}

/// Offset of position node `n` among the local coordinates of element `el` (which acts on it).
fn slot(model: &Model, el: ElementId, n: NodeId) -> usize {
    let layout = model.element(el).layout();
    let s = layout.nodes().iter().position(|(m, _)| *m == n).expect("the element acts on the node");
    layout.offset(s)
}

/// One frame's results of an inverse-dynamics run, in the order of its columns.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamicsFrame {
    /// Driving generalized force of each input (N m for an angle, N for a length).
    pub driving: Vec<f64>,
    /// Stresses of the rigid modes of the user's elements, the support reactions, then the joint
    /// forces.
    pub reactions: Vec<f64>,
    /// Stresses that the laws give the free and driven modes of elements with a law.
    pub passive: Vec<f64>,
}

/// An inverse-dynamics analysis in progress: the model's workspace and the output columns.
pub struct InverseDynamicsRun<'a> {
    compiled: &'a Compiled,
    data: Data,
    rigid: Vec<ModeId>,
    supports: Vec<Support>,
    joints: Vec<Joint>,
    passive: Vec<ModeId>,
    driving_columns: Vec<Column>,
    reaction_columns: Vec<Column>,
    passive_columns: Vec<Column>,
    /// The last frame's kinetostatics, law stresses and results, kept for their storage.
    ks: Kinetostatics,
    law: Vec<f64>,
    frame: DynamicsFrame,
    /// Time-varying external loads, and the last frame's as the kernel takes them.
    loads: Option<&'a ExternalLoads>,
    extra: Vec<Load>,
}

impl<'a> InverseDynamicsRun<'a> {
    /// Start at the model's initial configuration.
    pub fn new(compiled: &'a Compiled) -> Self {
        let model = &compiled.model;
        let driving_columns = compiled
            .inputs
            .iter()
            .map(|i| {
                let (unit, what) = match i.quantity {
                    Quantity::Length => ("N", "driving force along the input"),
                    _ => ("N m", "driving moment about the input"),
                };
                Column::new(i.name.clone(), unit, format!("{what}, positive in its positive sense"))
            })
            .collect();
        let (mut rigid, mut passive) = (Vec::new(), Vec::new());
        let (mut reaction_columns, mut passive_columns) = (Vec::new(), Vec::new());
        for el in &compiled.elements {
            let has_law = model.law(el.id).is_some();
            for k in 0..model.element(el.id).layout().n_modes() {
                let m = model.mode_id(el.id, k);
                let info = model.mode_info(m);
                let name = format!("{}.{}", el.name, info.name);
                let unit = stress_unit(info.quantity);
                match model.mode_role(m) {
                    ModeRole::Fixed(_) => {
                        rigid.push(m);
                        reaction_columns.push(Column::new(
                            name,
                            unit,
                            format!(
                                "reaction: stress of the rigid mode (conjugate to the {}'s {})",
                                el.kind, info.name
                            ),
                        ));
                    }
                    _ if has_law => {
                        passive.push(m);
                        passive_columns.push(Column::new(name, unit, "stress the element's law gives the mode"));
                    }
                    _ => {}
                }
            }
        }
        let mut supports = Vec::new();
        for (i, node) in model.nodes().iter().enumerate() {
            let id = NodeId::new(i);
            let fixed: Vec<usize> =
                (0..node.kind.dim()).filter(|&a| model.coord_role(model.coord_id(id, a)) == CoordRole::Fixed).collect();
            if node.kind == NodeKind::Orientation && fixed.len() == 4 {
                for (a, axis) in ["mx", "my", "mz"].into_iter().enumerate() {
                    supports.push(Support::Moment(id, a));
                    reaction_columns.push(Column::new(
                        format!("{}.{axis}", node.name),
                        "N m",
                        "support reaction: moment on the fixed orientation, global frame",
                    ));
                }
                continue;
            }
            for a in fixed {
                supports.push(Support::Coordinate(model.coord_id(id, a).index()));
                let (unit, what) = match node.kind {
                    NodeKind::Position => ("N", "support reaction: force on the fixed point, global frame"),
                    NodeKind::Orientation => ("N m", "support reaction: generalized force on a fixed Euler parameter"),
                };
                reaction_columns.push(Column::new(format!("{}.{}", node.name, node.kind.axis_names()[a]), unit, what));
            }
        }
        let mut joint_list = Vec::new();
        for (name, j) in joints(compiled) {
            let body = name.split_once('.').map_or(name.as_str(), |(b, _)| b);
            for axis in ["fx", "fy", "fz"] {
                reaction_columns.push(Column::new(
                    format!("{name}.{axis}"),
                    "N",
                    format!("joint force on body {body} at its point, from the bodies that share it; global frame"),
                ));
            }
            joint_list.push(j);
        }
        Self {
            compiled,
            data: Data::new(model),
            rigid,
            supports,
            joints: joint_list,
            passive,
            driving_columns,
            reaction_columns,
            passive_columns,
            ks: Kinetostatics::default(),
            law: Vec::new(),
            frame: DynamicsFrame { driving: Vec::new(), reactions: Vec::new(), passive: Vec::new() },
            loads: None,
            extra: Vec::new(),
        }
    }

    /// Apply these external loads (resolved against the same model) in [`Self::solve_at`].
    pub fn with_loads(mut self, loads: Option<&'a ExternalLoads>) -> Self {
        self.loads = loads;
        self
    }

    /// Columns of `driving.csv`: one per input, named as in the file's `inputs`.
    pub fn driving_columns(&self) -> &[Column] {
        &self.driving_columns
    }

    /// Columns of `reactions.csv`: `<element>.<mode>` per rigid mode of the user's elements, then
    /// `<node>.<axis>` per fixed coordinate (`<node>.mx`, `.my`, `.mz` for a fixed orientation),
    /// then `<body>.<point>.fx`, `.fy`, `.fz` per joint (a body's point that another body shares).
    pub fn reaction_columns(&self) -> &[Column] {
        &self.reaction_columns
    }

    /// Columns of `passive.csv`: `<element>.<mode>` per free or driven mode of an element with a
    /// law.
    pub fn passive_columns(&self) -> &[Column] {
        &self.passive_columns
    }

    /// Solve one frame for `q`, `q̇` and `q̈` (n_q each, SI): its results, in the run's storage
    /// (no allocation after the first frame; clone them to keep them). On failure the workspace
    /// stays at the last solved frame.
    pub fn solve(&mut self, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<&DynamicsFrame, FrameError> {
        self.solve_inner(None, q, qd, qdd)
    }

    /// [`Self::solve`] at time `time` (s), with the run's external loads at that time
    /// ([`Self::with_loads`]) in the configuration of the frame.
    pub fn solve_at(&mut self, time: f64, q: &[f64], qd: &[f64], qdd: &[f64]) -> Result<&DynamicsFrame, FrameError> {
        self.solve_inner(Some(time), q, qd, qdd)
    }

    fn solve_inner(
        &mut self,
        time: Option<f64>,
        q: &[f64],
        qd: &[f64],
        qdd: &[f64],
    ) -> Result<&DynamicsFrame, FrameError> {
        let model = &self.compiled.model;
        mollier_core::kinematics::solve_positions_explained(model, &mut self.data, q)?;
        match (self.loads, time) {
            (Some(l), Some(t)) => l.at(self.compiled, &self.data, t, &mut self.extra),
            _ => self.extra.clear(),
        }
        // kinetostatics needs the factors at the solution, not the transfer functions
        kinetostatics_into(model, &mut self.data, qd, qdd, None, &self.extra, &mut self.ks)?;
        let ks = &self.ks;
        law_stresses_into(model, &self.data, &mut self.law);
        let DynamicsFrame { driving, reactions, passive } = &mut self.frame;
        driving.clear();
        driving_into(model, ks, &self.law, driving);
        reactions.clear();
        reactions.extend(self.rigid.iter().map(|m| ks.sigma[m.index()]));
        for s in &self.supports {
            reactions.push(match *s {
                // the support reaction at a fixed coordinate (see `support_reactions`)
                Support::Coordinate(c) => ks.nodal[c],
                Support::Moment(node, axis) => {
                    let o = model.nodes()[node.index()].offset;
                    let f = [ks.nodal[o], ks.nodal[o + 1], ks.nodal[o + 2], ks.nodal[o + 3]];
                    moment_of(&self.data.orientation(model, node), &f)[axis]
                }
            });
        }
        for j in &self.joints {
            match *j {
                Joint::Attached(n) => {
                    let o = model.nodes()[n.index()].offset;
                    reactions.extend((0..3).map(|a| -ks.nodal[o + a]));
                }
                Joint::Beam { beam, offset } => {
                    let on_node = element_forces(model, &self.data, beam, &ks.sigma);
                    reactions.extend((0..3).map(|a| -on_node[offset + a]));
                }
            }
        }
        passive.clear();
        passive.extend(self.passive.iter().map(|m| self.law[m.index()]));
        let out = &self.frame;
        let bad = |v: &[f64], c: &[Column]| v.iter().position(|x| !x.is_finite()).map(|i| c[i].name.clone());
        let culprit = bad(&out.driving, &self.driving_columns)
            .or_else(|| bad(&out.reactions, &self.reaction_columns))
            .or_else(|| bad(&out.passive, &self.passive_columns));
        if let Some(column) = culprit {
            self.data.reset(model);
            return Err(FrameError::NonFinite(column));
        }
        Ok(&self.frame)
    }

    /// The workspace (configuration of the last solved frame).
    pub fn data(&self) -> &Data {
        &self.data
    }
}

/// One state of a simulation.
#[derive(Clone, Debug, PartialEq)]
pub struct SimulationState {
    /// Time (s).
    pub time: f64,
    /// Generalized coordinates (m, rad).
    pub q: Vec<f64>,
    /// Their rates (m/s, rad/s).
    pub qd: Vec<f64>,
    /// Kinetic plus potential energy (J) — gravity and the laws' springs — when every law of the
    /// model defines an energy.
    pub energy: Option<f64>,
}

/// A forward simulation of a passive mechanism (no driving forces) from rest in its initial
/// configuration, step by step (classical fourth-order Runge-Kutta; positions solved on the
/// constraint manifold at every stage).
pub struct Simulation<'a> {
    compiled: &'a Compiled,
    data: Data,
    dt: f64,
    steps: usize,
    state: SimulationState,
}

impl<'a> Simulation<'a> {
    /// Start at rest in the initial configuration, with time step `dt` (s).
    pub fn new(compiled: &'a Compiled, dt: f64) -> Result<Self, FrameError> {
        let model = &compiled.model;
        let mut data = Data::new(model);
        let q0 = model.q0();
        let zero = vec![0.0; q0.len()];
        // zero steps: the energy of the initial state
        let t = simulate(model, &mut data, &q0, &zero, dt, 0, &|_, _, _| vec![0.0; q0.len()])?;
        let state = SimulationState { time: 0.0, q: q0.clone(), qd: zero, energy: t.energy.first().copied() };
        Ok(Self { compiled, data, dt, steps: 0, state })
    }

    /// The model being simulated.
    pub fn compiled(&self) -> &'a Compiled {
        self.compiled
    }

    /// The current state.
    pub fn state(&self) -> &SimulationState {
        &self.state
    }

    /// `true` when the model is conservative as far as its file says: no constant loads and no
    /// damping (its energy should then stay constant, up to the integrator's error).
    pub fn is_conservative(&self) -> bool {
        let spec = self.compiled.document.spec();
        spec.loads.is_empty()
            && spec
                .elements
                .iter()
                .filter_map(|(_, e)| e.law.as_ref())
                .all(|l| l.iter().all(|(_, m)| m.damping.unwrap_or(0.0) == 0.0))
    }

    /// Advance `steps` steps; returns the state after each. On failure the simulation stays at
    /// its last state.
    pub fn advance(&mut self, steps: usize) -> Result<Vec<SimulationState>, FrameError> {
        let model = &self.compiled.model;
        let n = self.state.q.len();
        let traj: Trajectory =
            simulate(model, &mut self.data, &self.state.q, &self.state.qd, self.dt, steps, &|_, _, _| vec![0.0; n])?;
        let mut out = Vec::with_capacity(steps);
        for k in 1..traj.t.len() {
            let state = SimulationState {
                time: (self.steps + k) as f64 * self.dt,
                q: traj.q[k].clone(),
                qd: traj.qd[k].clone(),
                energy: traj.energy.get(k).copied(),
            };
            if let Some(i) = state.q.iter().chain(&state.qd).position(|v| !v.is_finite()) {
                let name = self.compiled.inputs.get(i % n.max(1)).map_or_else(String::new, |inp| inp.name.clone());
                return Err(FrameError::NonFinite(name));
            }
            out.push(state);
        }
        self.steps += out.len();
        if let Some(last) = out.last() {
            self.state = last.clone();
        }
        Ok(out)
    }
}
