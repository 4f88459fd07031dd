//! The per-thread workspace of a [`Model`]: configuration, element evaluations, factorization and
//! transfer functions. Every algorithm reads the model and writes here.

use std::sync::OnceLock;

use faer::Mat;

use crate::element::{ElementState, Order};
use crate::geometry::{Quat, Vec3};
use crate::ids::{ModeId, NodeId};
use crate::linalg::sparse::Lu;
use crate::model::Model;

pub(crate) mod stiffness;

/// Mutable state for one evaluation thread of a [`Model`].
pub struct Data {
    /// Nodal coordinates, `n_x`.
    pub(crate) x: Vec<f64>,
    /// Deformations, `n_e` (periodic modes unwrapped).
    pub(crate) e: Vec<f64>,
    pub(crate) e_prev: Vec<f64>,
    /// Generalized coordinates of the last solved configuration, `n_q`.
    pub(crate) q: Vec<f64>,
    /// Element gradients, concatenated blocks of `m x n`.
    pub(crate) de: Vec<f64>,
    /// Element Hessians, concatenated blocks of `m x n x n` (allocated on first use).
    pub(crate) d2e: Vec<f64>,
    /// What has been evaluated at the current `x`: the constraint elements, and the others.
    pub(crate) order: Option<Order>,
    pub(crate) order_free: Option<Order>,
    /// With `order_free` at `Some(Order::Value)`: the free elements' gradients on their own
    /// coordinates are current too (the tree path's evaluation, no chain rule through the
    /// attachments yet).
    pub(crate) free_own: bool,
    pub(crate) states: Vec<ElementState>,
    pub(crate) xloc: Vec<f64>,
    /// Gradients of the elements on attached nodes by their own coordinates (m x n_own blocks).
    pub(crate) de_own: Vec<f64>,
    /// Scratch of the chain rule: an own Hessian (m·n_own²), `J` and `H J` (n_own·n_exp).
    pub(crate) chain_h: Vec<f64>,
    pub(crate) chain_j: Vec<f64>,
    pub(crate) chain_t: Vec<f64>,
    /// `∂x_p/∂λ` of every attachment at the current `x` (set when the elements are evaluated).
    pub(crate) att_jac: Vec<crate::model::attach::Jacobian>,
    /// Values of `D_cc` in CSC order.
    pub(crate) dcc: Vec<f64>,
    pub(crate) lu: Lu,
    /// Residual of the constraint equations, `n_eo + n_em`.
    pub(crate) g: Vec<f64>,
    /// `x` is a converged solution for `q` and `lu` factors `D_cc` there.
    pub(crate) solved: bool,
    pub(crate) df_x: Mat<f64>,
    pub(crate) df_e: Mat<f64>,
    pub(crate) df_valid: bool,
    /// `DF_x` has every row (not only those of [`crate::algorithm::transfer::first_order_for_dynamics`]).
    pub(crate) df_complete: bool,
    pub(crate) d2f_x: Mat<f64>,
    pub(crate) d2f_e: Mat<f64>,
    pub(crate) d2f_valid: bool,
    /// `D²F_x` has every attached row (not only those of [`crate::algorithm::transfer::second_order_for_dynamics`]).
    pub(crate) d2f_complete: bool,
    pub(crate) xd: Vec<f64>,
    pub(crate) ed: Vec<f64>,
    pub(crate) xdd: Vec<f64>,
    pub(crate) edd: Vec<f64>,
    pub(crate) qd: Vec<f64>,
    pub(crate) qdd: Vec<f64>,
    /// Buffers of one frame, sized here once: a warm frame allocates nothing.
    pub(crate) work: Work,
    /// Threads for the work per element ([`Data::set_threads`]); 0: [`crate::data::default_threads`].
    pub(crate) threads: usize,
    /// Take the model's tree path where it has one ([`Data::set_tree_path`]).
    pub(crate) tree_path: bool,
    /// The last velocities and accelerations came from the tree path's recursion
    /// ([`Data::rates_by_recursion`]).
    pub(crate) rates_by_recursion: bool,
    /// The configuration is solved but `D_cc` is not factored yet: the tree path's position
    /// solve leaves that to the first caller that needs the factors (`solve::ensure_factors`).
    pub(crate) factors_due: bool,
    /// The last kinetostatics' stresses came from the inward pass without factors
    /// ([`Data::forces_by_recursion`]).
    pub(crate) forces_by_recursion: bool,
    /// The last `DF` came from the joints' screws ([`Data::df_by_screws`]).
    pub(crate) df_by_screws: bool,
}

/// The state a failed position solve returns to, with the deformations its periodic modes
/// unwrap towards (a failed solve's iterates may have moved them by turns).
#[derive(Clone, Default)]
pub(crate) struct Saved {
    pub x: Vec<f64>,
    pub e: Vec<f64>,
    pub e_prev: Vec<f64>,
    pub q: Vec<f64>,
    pub solved: bool,
    /// The elements' states (warm starts), copied.
    pub states: Vec<ElementState>,
}

impl Saved {
    /// Storage shaped like `data`'s state.
    fn new(model: &Model) -> Self {
        let (nx, ne, nq) = (model.n_x(), model.n_e(), model.n_q());
        let states = Vec::with_capacity(model.elements.len());
        Self { x: vec![0.0; nx], e: vec![0.0; ne], e_prev: vec![0.0; ne], q: vec![0.0; nq], solved: false, states }
    }
    /// Copy `data`'s state in (reusing the storage).
    pub fn copy_from(&mut self, data: &Data) {
        let pairs =
            [(&mut self.x, &data.x), (&mut self.e, &data.e), (&mut self.e_prev, &data.e_prev), (&mut self.q, &data.q)];
        for (dst, src) in pairs {
            dst.clear();
            dst.extend_from_slice(src);
        }
        self.solved = data.solved;
        self.states.resize_with(data.states.len(), ElementState::default);
        for (to, from) in self.states.iter_mut().zip(&data.states) {
            from.copy_over(to);
        }
    }
}

/// Scratch vectors of the kernel's algorithms, named by their shapes. An algorithm takes one out
/// (`std::mem::take`), uses it, and puts it back, so that it can pass `data` on meanwhile.
#[derive(Clone)]
pub(crate) struct Work {
    /// The state at the start of a solve and of its first segment.
    pub whole: Saved,
    pub segment: Saved,
    /// `n_q` each: the segment's ends and the solve's start; a step in `q`; zeros.
    pub q_from: Vec<f64>,
    pub q_a: Vec<f64>,
    pub q_b: Vec<f64>,
    pub dq: Vec<f64>,
    pub zeros_q: Vec<f64>,
    /// `n_x` each: a predicted step (or a linearization's `DF_x v̇`) and its second-order part;
    /// forces.
    pub x_step: Vec<f64>,
    pub x_second: Vec<f64>,
    pub x_force: Vec<f64>,
    pub x_inertia: Vec<f64>,
    pub x_nodal: Vec<f64>,
    /// `n_unknowns` each: a right-hand side, and the checked solve's copy of it and `D_cc v`.
    pub c_rhs: Vec<f64>,
    pub c_b: Vec<f64>,
    pub c_y: Vec<f64>,
    /// `n_unknowns x n_q`: the right-hand sides of `DF`, solved in place.
    pub df_rhs: Mat<f64>,
    /// `n_e`: Hessian contractions.
    pub e_h: Vec<f64>,
    /// The blocks one column of a transfer function reaches (`solve::solve_reached`).
    pub reached: Vec<usize>,
    /// Largest number of an element's coordinates, twice: its slice of two global vectors.
    pub local_u: Vec<f64>,
    pub local_w: Vec<f64>,
    /// `DF_x` by rows (n_x x stride, row-major, each row padded with zeros to `stride`, `n_q`
    /// rounded up to a multiple of 4) and whether each row is not all 0, made with `DF_x`
    /// (`transfer::first_order`).
    pub df_rows: Vec<f64>,
    pub df_moves: Vec<bool>,
    /// The directions' buffers (`crate::linearize`, `transfer::second_order_directions`), sized
    /// at their first use, kept with the zeros of the entries no step writes: `D²F_x(a_i, e_k)`
    /// (n_x x 2 n_q), the laws' `D²F_e(v, e_k)` (n_e x n_q, row-major), the constraint
    /// Hessians' contractions (n_e x 2 n_q, row-major) and their solve (n_unknowns x 2 n_q).
    pub d2_dirs: Mat<f64>,
    pub d2e_v: Vec<f64>,
    pub dirs_h: Vec<f64>,
    pub dirs_rhs: Mat<f64>,
    /// A moving linearization's `D³F_x(v, v, e_k)` (n_x x n_q) and the third-order transfer
    /// functions' scratch (`transfer3`), sized at their first use.
    pub d3: Mat<f64>,
    pub third: crate::algorithm::transfer3::Buffers,
    /// The geometric stiffness's buffers (`crate::stiffness`), sized at its first call.
    pub stiffness: crate::data::stiffness::Workspace,
    /// The last three solutions, for the third- and fourth-order predictor.
    pub history: History,
    /// The tree path's rates (`algorithm::place::rates`): one element's local coordinates, their
    /// rates and accelerations, and its modes' values, rates and accelerations.
    pub place_rates: [Vec<f64>; 6],
    /// The joints' screws' pass of `transfer::first_order` on the tree path.
    pub screws: crate::algorithm::screws::Screws,
}

/// The last three solutions of the positions (`q`: n_q, `x`: n_x each), oldest first: the
/// predictor fits the third- and fourth-order terms of the motion through them. `last` is
/// compared with the state in `data` bit for bit before the others are used, so that a state
/// set by other means than a solve never pairs with a stale history.
#[derive(Clone, Default)]
pub(crate) struct History {
    pub earlier_q: Vec<f64>,
    pub earlier_x: Vec<f64>,
    pub previous_q: Vec<f64>,
    pub previous_x: Vec<f64>,
    pub last_q: Vec<f64>,
    pub last_x: Vec<f64>,
    /// How many of the three are recorded (0 to 3).
    pub count: u8,
    /// The fit's path (n_q each): its rates and its second derivative at the last solution.
    pub rate: Vec<f64>,
    pub bend: Vec<f64>,
}

impl History {
    fn new(model: &Model) -> Self {
        let (nq, nx) = (model.n_q(), model.n_x());
        Self {
            earlier_q: vec![0.0; nq],
            earlier_x: vec![0.0; nx],
            previous_q: vec![0.0; nq],
            previous_x: vec![0.0; nx],
            last_q: vec![0.0; nq],
            last_x: vec![0.0; nx],
            count: 0,
            rate: vec![0.0; nq],
            bend: vec![0.0; nq],
        }
    }

    /// Make this a copy of `from`, reusing the storage.
    pub fn copy_from(&mut self, from: &Self) {
        let pairs = [
            (&mut self.earlier_q, &from.earlier_q),
            (&mut self.earlier_x, &from.earlier_x),
            (&mut self.previous_q, &from.previous_q),
            (&mut self.previous_x, &from.previous_x),
            (&mut self.last_q, &from.last_q),
            (&mut self.last_x, &from.last_x),
            (&mut self.rate, &from.rate),
            (&mut self.bend, &from.bend),
        ];
        for (dst, src) in pairs {
            dst.clone_from(src);
        }
        self.count = from.count;
    }

    /// Record the solution now in `data` (`last` becomes `previous`, `previous` `earlier`).
    pub fn record(&mut self, data_q: &[f64], data_x: &[f64]) {
        std::mem::swap(&mut self.earlier_q, &mut self.previous_q);
        std::mem::swap(&mut self.earlier_x, &mut self.previous_x);
        std::mem::swap(&mut self.previous_q, &mut self.last_q);
        std::mem::swap(&mut self.previous_x, &mut self.last_x);
        self.last_q.clear();
        self.last_q.extend_from_slice(data_q);
        self.last_x.clear();
        self.last_x.extend_from_slice(data_x);
        self.count = (self.count + 1).min(3);
    }

    /// The solution before the one in `data` (`q`, `x`), if both are recorded and `data` still
    /// holds the last one.
    pub fn before(&self, data_q: &[f64], data_x: &[f64]) -> Option<(&[f64], &[f64])> {
        (self.count >= 2 && self.last_q == data_q && self.last_x == data_x)
            .then_some((&self.previous_q[..], &self.previous_x[..]))
    }

    /// The solution before that, once [`History::before`] gave one and it is recorded.
    pub fn earlier(&self) -> Option<(&[f64], &[f64])> {
        (self.count == 3).then_some((&self.earlier_q[..], &self.earlier_x[..]))
    }
}

/// `m` shaped `rows x cols`: kept as it is when it has that shape, else made anew of zeros. For
/// buffers whose every read entry is written at each use, or stays 0 at each.
pub(crate) fn shaped(m: &mut Mat<f64>, rows: usize, cols: usize) {
    if (m.nrows(), m.ncols()) != (rows, cols) {
        *m = Mat::zeros(rows, cols);
    }
}

impl Work {
    fn new(model: &Model) -> Self {
        let (nq, nx, nc, ne) = (model.n_q(), model.n_x(), model.n_unknowns(), model.n_e());
        let local = model.elements.iter().map(|e| e.coords.len()).max().unwrap_or(0);
        Self {
            whole: Saved::new(model),
            segment: Saved::new(model),
            q_from: vec![0.0; nq],
            q_a: vec![0.0; nq],
            q_b: vec![0.0; nq],
            dq: vec![0.0; nq],
            zeros_q: vec![0.0; nq],
            x_step: vec![0.0; nx],
            x_second: vec![0.0; nx],
            x_force: vec![0.0; nx],
            x_inertia: vec![0.0; nx],
            x_nodal: vec![0.0; nx],
            c_rhs: vec![0.0; nc],
            c_b: vec![0.0; nc],
            c_y: vec![0.0; nc],
            // n_unknowns x n_q: made by the first `first_order`, never for a run that does not need DF
            df_rhs: Mat::new(),
            e_h: vec![0.0; ne],
            reached: Vec::new(),
            local_u: Vec::with_capacity(local),
            local_w: Vec::with_capacity(local),
            df_rows: Vec::new(),
            df_moves: Vec::new(),
            d2_dirs: Mat::new(),
            d2e_v: Vec::new(),
            dirs_h: Vec::new(),
            dirs_rhs: Mat::new(),
            d3: Mat::new(),
            third: Default::default(),
            stiffness: Default::default(),
            history: History::new(model),
            place_rates: Default::default(),
            screws: Default::default(),
        }
    }
}

impl Clone for Data {
    /// A copy of the configuration, deformations and results; the factorization is not copied,
    /// so the copy re-establishes it (cheaply, at its converged configuration) on its first
    /// solve. Use it to give each thread its own workspace from a solved one.
    fn clone(&self) -> Self {
        Self {
            x: self.x.clone(),
            e: self.e.clone(),
            e_prev: self.e_prev.clone(),
            q: self.q.clone(),
            de: self.de.clone(),
            d2e: self.d2e.clone(),
            order: None,
            order_free: None,
            free_own: false,
            states: self.states.clone(),
            xloc: self.xloc.clone(),
            de_own: self.de_own.clone(),
            chain_h: self.chain_h.clone(),
            chain_j: self.chain_j.clone(),
            chain_t: self.chain_t.clone(),
            att_jac: self.att_jac.clone(),
            dcc: self.dcc.clone(),
            lu: Lu::default(),
            g: self.g.clone(),
            solved: false,
            df_x: self.df_x.clone(),
            df_e: self.df_e.clone(),
            df_valid: self.df_valid,
            df_complete: self.df_complete,
            d2f_x: self.d2f_x.clone(),
            d2f_e: self.d2f_e.clone(),
            d2f_valid: self.d2f_valid,
            d2f_complete: self.d2f_complete,
            xd: self.xd.clone(),
            ed: self.ed.clone(),
            xdd: self.xdd.clone(),
            edd: self.edd.clone(),
            qd: self.qd.clone(),
            qdd: self.qdd.clone(),
            work: self.work.clone(),
            threads: self.threads,
            tree_path: self.tree_path,
            rates_by_recursion: self.rates_by_recursion,
            factors_due: false,
            forces_by_recursion: self.forces_by_recursion,
            df_by_screws: self.df_by_screws,
        }
    }
}

impl Data {
    /// A workspace in the model's initial configuration.
    pub fn new(model: &Model) -> Self {
        let n_x = model.n_x();
        let n_e = model.n_e();
        let max_local = model.elements.iter().map(|e| e.coords.len().max(e.own.len())).max().unwrap_or(0);
        let chained = || model.elements.iter().filter(|e| e.chain.is_some());
        let max_h = chained().map(|e| e.element.layout().n_modes() * e.own.len().pow(2)).max().unwrap_or(0);
        let max_j = chained().map(|e| e.own.len() * e.coords.len()).max().unwrap_or(0);
        Self {
            x: model.x0.clone(),
            e: vec![0.0; n_e],
            e_prev: vec![0.0; n_e],
            q: model.q0(),
            de: vec![0.0; model.de_len],
            d2e: Vec::new(),
            order: None,
            order_free: None,
            free_own: false,
            states: (0..model.elements.len()).map(|_| ElementState::default()).collect(),
            xloc: vec![0.0; max_local],
            de_own: vec![0.0; model.de_own_len],
            chain_h: vec![0.0; max_h],
            chain_j: vec![0.0; max_j],
            chain_t: vec![0.0; max_j],
            att_jac: vec![[[0.0; 4]; 3]; model.attachments.list.len()],
            dcc: vec![0.0; model.pattern.nnz()],
            lu: Lu::default(),
            g: vec![0.0; model.n_equations()],
            solved: false,
            df_x: Mat::zeros(0, 0),
            df_e: Mat::zeros(0, 0),
            df_valid: false,
            df_complete: false,
            d2f_x: Mat::zeros(0, 0),
            d2f_e: Mat::zeros(0, 0),
            d2f_valid: false,
            d2f_complete: false,
            xd: vec![0.0; n_x],
            ed: vec![0.0; n_e],
            xdd: vec![0.0; n_x],
            edd: vec![0.0; n_e],
            qd: vec![0.0; model.n_q()],
            qdd: vec![0.0; model.n_q()],
            work: Work::new(model),
            threads: 1,
            tree_path: true,
            rates_by_recursion: false,
            factors_due: false,
            forces_by_recursion: false,
            df_by_screws: false,
        }
    }

    /// Use up to `threads` threads (a rayon pool of that many, [`crate::parallel`]) for the work
    /// that is independent per element (the forward step's muscle paths to second order and their
    /// Hessians' contraction, [`crate::parallel`]); 1 (the default) keeps all of it on the
    /// calling thread, the serial code; 0 is [`crate::data::default_threads`]: the cores
    /// available, or `RAYON_NUM_THREADS`. The results are the same bits for every count. Serial
    /// by default: on the 2-core VM of docs/performance.md two threads did not pay measurably,
    /// and a sweep running one process per core would only oversubscribe its cores.
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// Whether the last velocities and accelerations of kinetostatics
    /// ([`crate::transfer::coordinate_accelerations`]) came from the tree path's recursion
    /// outward along the placement rather than from solves of `D_cc`.
    pub fn rates_by_recursion(&self) -> bool {
        self.rates_by_recursion
    }

    /// Whether the last stresses of kinetostatics ([`crate::dynamics::kinetostatics`]) came
    /// from the tree path's inward pass over `D_cc`'s blocks, factored one by one as the pass
    /// reaches them, rather than from a transposed solve with the factors of the position solve.
    pub fn forces_by_recursion(&self) -> bool {
        self.forces_by_recursion
    }

    /// Whether the last first-order transfer functions ([`crate::transfer::first_order`]) came
    /// from the joints' screws outward along the placement ([`crate::screws`]) rather than from
    /// solves of `D_cc`.
    pub fn df_by_screws(&self) -> bool {
        self.df_by_screws
    }

    /// Take the model's tree paths (the default): positions placed in closed form outward from
    /// the ground where the model can be ([`Model::places_in_closed_form`]), and so the
    /// velocities and accelerations of kinetostatics; the transfer functions solved over each
    /// input's subtree where it has one ([`Model::tree_path`]). With `false`, Newton-Raphson and
    /// the general solve of every column over the whole of `D_cc` (the reference the tree paths
    /// are tested against). Both give the same numbers to round-off; the transfer functions
    /// already computed are forgotten.
    pub fn set_tree_path(&mut self, on: bool) {
        self.tree_path = on;
        self.df_valid = false;
        self.d2f_valid = false;
    }

    /// The threads [`Data::set_threads`] asked for (the default resolved).
    pub fn threads(&self) -> usize {
        match self.threads {
            0 => crate::data::default_threads(),
            n => n,
        }
    }

    /// Back to the model's initial configuration.
    pub fn reset(&mut self, model: &Model) {
        *self = Data::new(model);
    }

    /// Forget everything derived from `x` (after `x` changed).
    pub(crate) fn invalidate(&mut self) {
        self.order = None;
        self.order_free = None;
        self.solved = false;
        self.lu.valid = false;
        self.factors_due = false;
        self.df_valid = false;
        self.d2f_valid = false;
        self.work.stiffness.forget_force();
    }

    /// Nodal coordinates `x` (n_x).
    pub fn x(&self) -> &[f64] {
        &self.x
    }
    /// Deformations `e` (n_e), in model mode order.
    pub fn e(&self) -> &[f64] {
        &self.e
    }
    /// Value of one deformation mode.
    pub fn mode_value(&self, m: ModeId) -> f64 {
        self.e[m.index()]
    }
    /// Generalized coordinates `q` of the last solved configuration (n_q).
    pub fn q(&self) -> &[f64] {
        &self.q
    }
    /// `true` when `x` is a converged configuration (transfer functions may be asked for).
    pub fn is_solved(&self) -> bool {
        self.solved
    }
    /// Position of a position node (m).
    pub fn position(&self, model: &Model, node: NodeId) -> Vec3 {
        let o = model.nodes[node.index()].offset;
        [self.x[o], self.x[o + 1], self.x[o + 2]]
    }
    /// Euler parameters of an orientation node.
    pub fn orientation(&self, model: &Model, node: NodeId) -> Quat {
        let o = model.nodes[node.index()].offset;
        [self.x[o], self.x[o + 1], self.x[o + 2], self.x[o + 3]]
    }
    /// Set the nodal coordinates directly (e.g. to start Newton-Raphson from a guess).
    /// Everything derived from `x` is invalidated.
    pub fn set_x(&mut self, x: &[f64]) {
        self.x.copy_from_slice(x);
        self.invalidate();
    }
    /// First-order transfer function of the coordinates, `DF^x = ∂x/∂q` (n_x x n_q), after
    /// [`crate::algorithm::transfer::first_order`] (the dynamics' functions form it without the
    /// rows of the points only free elements read:
    /// [`crate::algorithm::transfer::first_order_for_dynamics`]).
    pub fn df_x(&self) -> faer::MatRef<'_, f64> {
        self.df_x.as_ref()
    }
    /// First-order transfer function of the deformations, `DF^e = ∂e/∂q` (n_e x n_q): for a
    /// muscle's elongation these are its moment arms (m per rad for hinge inputs).
    pub fn df_e(&self) -> faer::MatRef<'_, f64> {
        self.df_e.as_ref()
    }
    /// Second-order transfer function of the coordinates, `∂²x/∂q_i∂q_j` (n_x x n_q(n_q+1)/2,
    /// column [`pair_index`]`(i, j, n_q)`), after [`crate::algorithm::transfer::second_order`].
    pub fn d2f_x(&self) -> faer::MatRef<'_, f64> {
        self.d2f_x.as_ref()
    }
    /// Second-order transfer function of the deformations (n_e x n_q(n_q+1)/2).
    pub fn d2f_e(&self) -> faer::MatRef<'_, f64> {
        self.d2f_e.as_ref()
    }
    /// The state element `el` kept from its last evaluation (a warm start), for
    /// [`crate::element::ElementInfo::drawing_with`].
    pub fn element_state(&self, el: crate::ids::ElementId) -> &crate::element::ElementState {
        &self.states[el.index()]
    }
    /// Nodal velocities `ẋ` (n_x), after [`crate::algorithm::transfer::velocities`].
    pub fn xd(&self) -> &[f64] {
        &self.xd
    }
    /// Deformation rates `ė` (n_e).
    pub fn ed(&self) -> &[f64] {
        &self.ed
    }
    /// Nodal accelerations `ẍ` (n_x), after [`crate::algorithm::transfer::accelerations`].
    pub fn xdd(&self) -> &[f64] {
        &self.xdd
    }
    /// Deformation accelerations `ë` (n_e), after [`crate::algorithm::transfer::accelerations`].
    pub fn edd(&self) -> &[f64] {
        &self.edd
    }
    /// Generalized velocities last given to [`crate::algorithm::transfer::velocities`].
    pub fn qd(&self) -> &[f64] {
        &self.qd
    }
    /// Generalized accelerations last given to [`crate::algorithm::transfer::accelerations`].
    pub fn qdd(&self) -> &[f64] {
        &self.qdd
    }
}

/// Column of the pair `(i, j)` (either order) in the second-order transfer functions.
#[inline]
pub fn pair_index(i: usize, j: usize, n_q: usize) -> usize {
    let (i, j) = if i <= j { (i, j) } else { (j, i) };
    i * (2 * n_q - i - 1) / 2 + j
}

/// Number of pairs `i <= j` of `n_q` generalized coordinates.
#[inline]
pub fn n_pairs(n_q: usize) -> usize {
    n_q * (n_q + 1) / 2
}

/// The number of threads the work of one [`Data`] uses when it is not set
/// ([`Data::set_threads`]): `RAYON_NUM_THREADS` if set (the variable the project's other
/// parallel code reads), else the cores available.
pub fn default_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|n| *n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}
