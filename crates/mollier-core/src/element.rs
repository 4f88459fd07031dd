//! The element interface: what every element type (built-in or a user's plugin) implements.
//!
//! An element connects a few nodes and has a few *deformation modes* `e(x)`: functions of the
//! coordinates of its nodes that are invariant under rigid motion and zero in the reference
//! configuration. The kernel only ever sees elements through these traits; it never asks what
//! kind an element is.
//!
//! Two ways to write one:
//! - implement [`Deformations`] once, generic over the scalar, and wrap it in
//!   [`crate::autodiff::AutoDiff`] to get exact derivatives from dual numbers; or
//! - implement [`Element`] with analytic first and second derivatives (faster), and also
//!   [`Deformations`] so the conformance harness can compare the two.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;

use num_dual::HyperHyperDual64;

use crate::ids::NodeId;
use crate::scalar::Real;

/// The two kinds of node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// A point: coordinates `(x, y, z)`, m.
    Position,
    /// An orientation: Euler parameters `(λ0, λ1, λ2, λ3)`, unit norm.
    Orientation,
}

impl NodeKind {
    /// Number of coordinates of a node of this kind (3 or 4).
    pub const fn dim(self) -> usize {
        match self {
            NodeKind::Position => 3,
            NodeKind::Orientation => 4,
        }
    }

    /// Names of the coordinates, used in reports and model files.
    pub const fn axis_names(self) -> &'static [&'static str] {
        match self {
            NodeKind::Position => &["x", "y", "z"],
            NodeKind::Orientation => &["l0", "l1", "l2", "l3"],
        }
    }
}

impl fmt::Display for NodeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NodeKind::Position => "position",
            NodeKind::Orientation => "orientation",
        })
    }
}

/// The physical quantity of a deformation mode (its unit in SI).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// m; its stress is a force, N.
    Length,
    /// rad; its stress is a moment, N m.
    Angle,
    /// no unit.
    Dimensionless,
}

/// One deformation mode of an element.
#[derive(Clone, Debug)]
pub struct ModeInfo {
    /// Name used in model files and outputs, e.g. `elongation`, `rotation`, `bending_y`.
    pub name: Cow<'static, str>,
    /// Unit of the mode.
    pub quantity: Quantity,
    /// `true` for an angle defined modulo 2π: the kernel keeps it continuous (unwrapped).
    pub periodic: bool,
}

impl ModeInfo {
    /// A length-valued mode.
    pub fn length(name: impl Into<Cow<'static, str>>) -> Self {
        Self { name: name.into(), quantity: Quantity::Length, periodic: false }
    }
    /// An angle-valued mode that is not periodic (e.g. a small bending).
    pub fn angle(name: impl Into<Cow<'static, str>>) -> Self {
        Self { name: name.into(), quantity: Quantity::Angle, periodic: false }
    }
    /// A rotation angle defined modulo 2π.
    pub fn rotation(name: impl Into<Cow<'static, str>>) -> Self {
        Self { name: name.into(), quantity: Quantity::Angle, periodic: true }
    }
    /// A dimensionless mode.
    pub fn dimensionless(name: impl Into<Cow<'static, str>>) -> Self {
        Self { name: name.into(), quantity: Quantity::Dimensionless, periodic: false }
    }
}

/// Which nodes an element connects and which modes it has.
///
/// The element's *local coordinate vector* stacks its nodes' coordinates in this order (3 for a
/// position node, 4 for an orientation node). A node may appear twice (e.g. a BEAM whose two ends
/// share one orientation node); the kernel adds the contributions.
#[derive(Clone, Debug)]
pub struct Layout {
    nodes: Vec<(NodeId, NodeKind)>,
    offsets: Vec<usize>,
    n_local: usize,
    modes: Vec<ModeInfo>,
}

impl Layout {
    /// A layout from its nodes (with the kind the element expects) and its modes.
    pub fn new(nodes: Vec<(NodeId, NodeKind)>, modes: Vec<ModeInfo>) -> Self {
        let mut offsets = Vec::with_capacity(nodes.len());
        let mut n = 0;
        for (_, k) in &nodes {
            offsets.push(n);
            n += k.dim();
        }
        Self { nodes, offsets, n_local: n, modes }
    }
    /// The nodes with the kind expected for each.
    pub fn nodes(&self) -> &[(NodeId, NodeKind)] {
        &self.nodes
    }
    /// Offset of node slot `i` in the local coordinate vector.
    pub fn offset(&self, i: usize) -> usize {
        self.offsets[i]
    }
    /// Length of the local coordinate vector.
    #[inline]
    pub fn n_local(&self) -> usize {
        self.n_local
    }
    /// The deformation modes.
    pub fn modes(&self) -> &[ModeInfo] {
        &self.modes
    }
    /// Number of deformation modes.
    pub fn n_modes(&self) -> usize {
        self.modes.len()
    }
    /// Index of the mode called `name`.
    pub fn mode_index(&self, name: &str) -> Option<usize> {
        self.modes.iter().position(|m| m.name == name)
    }
}

/// How many derivatives an evaluation must produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Order {
    /// `e` only.
    Value = 0,
    /// `e` and `De`.
    Gradient = 1,
    /// `e`, `De` and `D²e`.
    Hessian = 2,
}

/// Why an element could not be built or evaluated.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ElementError {
    /// The reference configuration is degenerate (e.g. zero length).
    #[error("degenerate reference configuration: {0}")]
    Degenerate(String),
    /// The current configuration is outside the element's domain (e.g. two nodes coincide).
    #[error("configuration outside the element's domain: {0}")]
    Domain(String),
    /// An inner iteration (e.g. a wrapping path) did not converge.
    #[error("inner iteration did not converge: {0}")]
    NoConvergence(String),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// Per-evaluation scratch an element may keep between calls (e.g. a warm start), one per
/// [`crate::Data`]. Created on first use by [`Evaluation::state`]; with it, how to copy it, so
/// that a failed solve can hand the next one the state of the last solution, not of a failed
/// iterate.
#[derive(Default)]
pub struct ElementState(Option<Box<dyn Any + Send + Sync>>, Option<Copier>);

/// Copies a state of the type it was made for: into a new box, or over a state of its type
/// (`Clone::clone_from`, reusing the storage: a position solve saves its start every time).
#[derive(Clone, Copy)]
struct Copier {
    new: fn(&(dyn Any + Send + Sync)) -> Box<dyn Any + Send + Sync>,
    over: fn(&(dyn Any + Send + Sync), &mut (dyn Any + Send + Sync)),
}

fn copy_as<S: Clone + Send + Sync + 'static>(b: &(dyn Any + Send + Sync)) -> Box<dyn Any + Send + Sync> {
    Box::new(b.downcast_ref::<S>().expect("a state is copied as its own type").clone())
}

fn copy_over_as<S: Clone + Send + Sync + 'static>(b: &(dyn Any + Send + Sync), to: &mut (dyn Any + Send + Sync)) {
    let from = b.downcast_ref::<S>().expect("a state is copied as its own type");
    to.downcast_mut::<S>().expect("a state is copied over one of its type").clone_from(from);
}

impl Copier {
    fn of<S: Clone + Send + Sync + 'static>() -> Self {
        Self { new: copy_as::<S>, over: copy_over_as::<S> }
    }
}

impl fmt::Debug for ElementState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.0.is_some() { "ElementState(..)" } else { "ElementState(empty)" })
    }
}

impl ElementState {
    /// The state an element kept, if it is of type `S` (read-only: for drawing a solved frame).
    pub fn get<S: 'static>(&self) -> Option<&S> {
        self.0.as_ref().and_then(|b| b.downcast_ref::<S>())
    }

    /// A copy of the state itself (where [`Clone`] starts cold).
    pub(crate) fn snapshot(&self) -> Self {
        match (&self.0, self.1) {
            (Some(b), Some(copy)) => Self(Some((copy.new)(b.as_ref())), Some(copy)),
            _ => Self(None, None),
        }
    }

    /// Make `to` a copy of the state itself ([`Self::snapshot`]), reusing its storage where it
    /// holds a state of the same type.
    pub(crate) fn copy_over(&self, to: &mut Self) {
        match (&self.0, self.1, &mut to.0) {
            (Some(b), Some(copy), Some(t)) if b.as_ref().type_id() == t.as_ref().type_id() => {
                (copy.over)(b.as_ref(), t.as_mut());
                to.1 = Some(copy);
            }
            _ => *to = self.snapshot(),
        }
    }
}

impl Clone for ElementState {
    /// States are warm starts: a clone starts cold.
    fn clone(&self) -> Self {
        Self(None, None)
    }
}

/// Where an element writes its deformations and their derivatives.
///
/// Shapes, with `m` modes and `n` local coordinates: `e` is `m`; the gradient of mode `k` is a
/// row of `n`; its Hessian is `n x n`, row-major and symmetric. The kernel zeroes the gradient and
/// Hessian storage before each call, so an element may accumulate into them.
///
/// The Hessians' rows and columns of the local coordinates the kernel holds fixed
/// ([`Evaluation::fixed`]) are never read: an element may leave them zero, and skip the work.
/// The gradient is wanted whole (the reactions at fixed nodes are formed from it).
pub struct Evaluation<'a> {
    order: Order,
    n: usize,
    fixed: u64,
    /// Deformation values, one per mode.
    pub e: &'a mut [f64],
    de: &'a mut [f64],
    d2e: &'a mut [f64],
    state: &'a mut ElementState,
}

impl<'a> Evaluation<'a> {
    /// Wrap output buffers: `e` (m), `de` (m·n, or empty below [`Order::Gradient`]) and `d2e`
    /// (m·n·n, or empty below [`Order::Hessian`]).
    pub fn new(
        order: Order,
        n: usize,
        e: &'a mut [f64],
        de: &'a mut [f64],
        d2e: &'a mut [f64],
        state: &'a mut ElementState,
    ) -> Self {
        debug_assert!(order < Order::Gradient || de.len() == e.len() * n);
        debug_assert!(order < Order::Hessian || d2e.len() == e.len() * n * n);
        Self { order, n, e, de, d2e, state, fixed: 0 }
    }
    /// The same, with the local coordinates of the set bits of `mask` (the first 64) held fixed.
    pub fn with_fixed(mut self, mask: u64) -> Self {
        self.fixed = mask;
        self
    }
    /// `true` when local coordinate `i` is held fixed: its rows and columns of the Hessians are
    /// not read (its gradient entries are). `false` for every coordinate unless the kernel says
    /// so, and always from `i` = 64 on.
    #[inline]
    pub fn fixed(&self, i: usize) -> bool {
        i < 64 && self.fixed >> i & 1 == 1
    }
    /// The requested order.
    pub fn order(&self) -> Order {
        self.order
    }
    /// `true` when first derivatives are wanted.
    #[inline]
    pub fn wants_gradient(&self) -> bool {
        self.order >= Order::Gradient
    }
    /// `true` when second derivatives are wanted.
    #[inline]
    pub fn wants_hessian(&self) -> bool {
        self.order >= Order::Hessian
    }
    /// Local coordinate count `n`.
    pub fn n_local(&self) -> usize {
        self.n
    }
    /// Derivative accumulator of mode `k` (empty when only values are wanted).
    #[inline]
    pub fn mode(&mut self, k: usize) -> Derivs<'_> {
        let n = self.n;
        let grad = if self.order >= Order::Gradient { &mut self.de[k * n..(k + 1) * n] } else { &mut [] };
        let hess = if self.order >= Order::Hessian { &mut self.d2e[k * n * n..(k + 1) * n * n] } else { &mut [] };
        Derivs { n, grad, hess }
    }
    /// The element's scratch state of type `S`, created with `S::default()` on first use.
    pub fn state<S: Default + Clone + Send + Sync + 'static>(&mut self) -> &mut S {
        let slot = &mut self.state.0;
        if slot.as_ref().is_none_or(|b| !b.is::<S>()) {
            *slot = Some(Box::new(S::default()));
            self.state.1 = Some(Copier::of::<S>());
        }
        slot.as_mut().and_then(|b| b.downcast_mut::<S>()).expect("state just set")
    }
}

/// Accumulates the gradient (length `n`) and Hessian (`n x n`) of one scalar function of the
/// local coordinates. Either may be empty, in which case adding to it does nothing.
#[derive(Debug)]
pub struct Derivs<'a> {
    n: usize,
    /// Gradient, `n` (empty when not requested).
    pub grad: &'a mut [f64],
    /// Hessian, `n x n` row-major (empty when not requested).
    pub hess: &'a mut [f64],
}

impl<'a> Derivs<'a> {
    /// Wrap buffers (`grad`: n or empty; `hess`: n·n or empty).
    pub fn new(n: usize, grad: &'a mut [f64], hess: &'a mut [f64]) -> Self {
        Self { n, grad, hess }
    }
    /// `true` when the gradient is wanted.
    #[inline]
    pub fn has_grad(&self) -> bool {
        !self.grad.is_empty()
    }
    /// `true` when the Hessian is wanted.
    #[inline]
    pub fn has_hess(&self) -> bool {
        !self.hess.is_empty()
    }
    /// `grad[off..off+g.len()] += s g`.
    #[inline]
    pub fn add_grad(&mut self, off: usize, g: &[f64], s: f64) {
        if self.has_grad() {
            for (i, v) in g.iter().enumerate() {
                self.grad[off + i] += s * v;
            }
        }
    }
    /// Add `s B` to the symmetric diagonal block at `(off, off)`; `B` is `dim x dim` row-major.
    #[inline]
    pub fn add_hess_diag(&mut self, off: usize, dim: usize, b: &[f64], s: f64) {
        if self.has_hess() {
            let n = self.n;
            for i in 0..dim {
                for j in 0..dim {
                    self.hess[(off + i) * n + off + j] += s * b[i * dim + j];
                }
            }
        }
    }
    /// Add `s B` at `(oi, oj)` and `s Bᵀ` at `(oj, oi)`; `B` is `di x dj` row-major.
    ///
    /// Correct also when `oi == oj` (one node in two slots): the mixed term appears twice.
    #[inline]
    pub fn add_hess_cross(&mut self, oi: usize, di: usize, oj: usize, dj: usize, b: &[f64], s: f64) {
        if self.has_hess() {
            let n = self.n;
            for i in 0..di {
                for j in 0..dj {
                    let v = s * b[i * dj + j];
                    self.hess[(oi + i) * n + oj + j] += v;
                    self.hess[(oj + j) * n + oi + i] += v;
                }
            }
        }
    }
}

/// What every element tells the kernel about itself.
pub trait ElementInfo: Send + Sync + fmt::Debug {
    /// The registered type name, e.g. `truss`.
    fn type_name(&self) -> &str;
    /// Its nodes and modes.
    fn layout(&self) -> &Layout;
    /// Take reference values from the initial local coordinates `x0` (length `n_local`), so that
    /// every deformation is zero there. Called once when the model is built.
    fn initialize(&mut self, x0: &[f64]) -> Result<(), ElementError>;

    /// The value mode `k` is measured from, so that its absolute measure is `e_k + reference`
    /// (the reference length of an elongation, m). `None` for modes without one (an angle from
    /// the initial configuration). Known after [`initialize`](Self::initialize).
    fn mode_reference(&self, k: usize) -> Option<f64> {
        let _ = k;
        None
    }

    /// What a viewer draws for the element at local coordinates `x` (length `n_local`), in
    /// global coordinates (m). The default is one line through its position nodes in layout
    /// order (none for an element of orientations only); an element whose drawn shape is not
    /// its nodes (a path wrapping an obstacle) says so here. For display only: never used in a
    /// solve.
    fn drawing(&self, x: &[f64]) -> Drawing {
        let l = self.layout();
        let line: Vec<[f64; 3]> = (0..l.nodes().len())
            .filter(|&i| l.nodes()[i].1 == NodeKind::Position)
            .map(|i| {
                let o = l.offset(i);
                [x[o], x[o + 1], x[o + 2]]
            })
            .collect();
        Drawing { lines: if line.len() >= 2 { vec![line] } else { Vec::new() }, shapes: Vec::new() }
    }

    /// [`Self::drawing`] from the state the element's last evaluation at `x` kept
    /// ([`crate::Data::element_state`]): a wrapping path drawn from the contact points the
    /// analysis used, not solved afresh. The state is read, never changed, so drawing does not
    /// alter later solves. The default ignores it.
    fn drawing_with(&self, x: &[f64], state: &ElementState) -> Drawing {
        let _ = state;
        self.drawing(x)
    }

    /// A warning about the configuration at local coordinates `x` (length `n_local`) that does
    /// not stop a solve: a rule the element took that a user should hear of (a path's anchor
    /// inside a wrap object, where the path goes straight as OpenSim's does). Asked once a frame
    /// is solved, never during a solve (Mollier's facade asks the lines of action, the paths).
    /// `None` (the default): nothing to say.
    fn warning(&self, _x: &[f64]) -> Option<String> {
        None
    }
}

/// An element as a viewer draws it ([`ElementInfo::drawing`]), in global coordinates (m).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Drawing {
    /// Polylines, each at least two points (m): a truss's two ends, a muscle's wrapped path with
    /// its surface parts sampled along the geodesic.
    pub lines: Vec<Vec<[f64; 3]>>,
    /// Solids the element carries: the obstacles of a path, the ellipsoid of a contact.
    pub shapes: Vec<DrawnShape>,
}

/// The kinds of [`DrawnShape`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeKind {
    /// A sphere (its three axes have the same length).
    Sphere,
    /// A cylinder along its third axis, infinite in the model, drawn as long as that axis is
    /// (both ways from the centre).
    Cylinder,
    /// An ellipsoid.
    Ellipsoid,
}

/// A solid as drawn: its centre and its three axes, each scaled to the semi-axis (m), so that
/// the surface is `centre + Σ u_i a_i` over the unit sphere `|u| = 1`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DrawnShape {
    /// Which solid.
    pub kind: ShapeKind,
    /// Centre (m).
    pub centre: [f64; 3],
    /// Semi-axes as global vectors (m): for a cylinder, the first two are radii and the third
    /// is the half length drawn along its axis.
    pub axes: [[f64; 3]; 3],
}

/// An element with its own (analytic) derivatives: what the kernel evaluates.
pub trait Element: ElementInfo {
    /// Evaluate the deformations at local coordinates `x` (length `n_local`) and, as
    /// `out.order()` asks, their first and second derivatives.
    fn evaluate(&self, x: &[f64], out: &mut Evaluation<'_>) -> Result<(), ElementError>;

    /// The deformations and their first derivatives only, where no second order is wanted (a
    /// position solve's residual and `D_cc`, kinetostatics, `DF`): write `e` (m) and every entry
    /// of `de` (m x n_local, row-major, not zeroed by the kernel) at the local coordinates `x`
    /// (n_local). The numbers are [`evaluate`](Self::evaluate)'s at [`Order::Gradient`] to
    /// round-off. The default zeroes `de` and calls `evaluate`; an element whose gradient has a
    /// cheaper form than the one its Hessian is built from (a joint's, from the angular
    /// velocities of its triads) gives it here.
    fn evaluate_gradient(
        &self,
        x: &[f64],
        e: &mut [f64],
        de: &mut [f64],
        state: &mut ElementState,
    ) -> Result<(), ElementError> {
        de.fill(0.0);
        self.evaluate(x, &mut Evaluation::new(Order::Gradient, x.len(), e, de, &mut [], state))
    }

    /// The element's own constitutive law, for element types that carry one (e.g. a passive
    /// joint resistance). A law attached in the model takes precedence.
    fn law(&self) -> Option<&dyn crate::law::Law> {
        None
    }

    /// The tree path of the position solve: the node slots of the layout (bit `i` for slot
    /// `i`) this element places in closed form when the slots `known` are known and the modes
    /// `given` (bit `k` for mode `k`: held or an input, the rest free) have their values; 0
    /// (the default) when it cannot. Asked once, when the model is built; a joint of a tree
    /// that answers lets the kernel place the tree outward from the ground in one pass instead
    /// of solving it by Newton-Raphson.
    fn placement(&self, known: u64, given: u64) -> u64 {
        let _ = (known, given);
        0
    }

    /// Place the slots [`placement`](Self::placement)`(known, given)` names: write their
    /// coordinates into `x` (the local coordinate vector, `n_local`; the known slots' are read)
    /// so that every given mode takes its value in `e` (one per mode, the free modes' entries
    /// unread), exactly, without iteration. `Ok(false)` when these values have no closed form
    /// (a bending held at other than 0): the kernel then solves by Newton-Raphson.
    fn place(&self, x: &mut [f64], known: u64, e: &[f64]) -> Result<bool, ElementError> {
        let _ = (x, known, e);
        Ok(false)
    }

    /// The rates of what [`place`](Self::place) writes, for the tree path's velocities and
    /// accelerations (outward, as Pinocchio's recursive Newton-Euler): at local coordinates `x`
    /// (`n_local`, every slot placed and the element's given modes at their values `e`), write
    /// the placed slots' first and second time derivatives into `r.v` and `r.a` (`n_local`
    /// each; the known slots' are read) for the given modes' rates `r.ev` and `r.ea` (one per
    /// mode, per s and per s²). Exact: the numbers the transfer functions give,
    /// `DF q̇` and `DF q̈ + (D²F q̇) q̇`. `Ok(false)` where `place` has no closed form or the
    /// element does not implement it: the kernel then solves for the rates.
    fn place_rates(&self, x: &[f64], known: u64, e: &[f64], r: Rates<'_>) -> Result<bool, ElementError> {
        let _ = (x, known, e, r);
        Ok(false)
    }

    /// The first-order half of [`place_rates`](Self::place_rates) for `k` columns at once, the
    /// points' Jacobian of [`crate::screws`]: `v` holds `k` columns of local rates (`n_local`
    /// each, one after another; the known slots' read, the placed slots' written), `ev` the
    /// modes' rates of the same `k` columns (one per mode each). What is common to the columns
    /// (a coordinate's gradient) is evaluated once; no second derivative is. `Ok(Some(false))`
    /// where `place` has no closed form; `Ok(None)`, the default: the kernel calls
    /// `place_rates` column by column.
    fn place_jacobian(
        &self,
        x: &[f64],
        known: u64,
        e: &[f64],
        v: &mut [f64],
        ev: &[f64],
    ) -> Result<Option<bool>, ElementError> {
        let _ = (x, known, e, v, ev);
        Ok(None)
    }

    /// The deformations over third-order hyper-dual numbers, for the third-order transfer
    /// functions ([`crate::transfer3`]): write `e` (one per mode) from the local coordinates
    /// `x` (`n_local`) and answer `Ok(true)`. An element written over [`Deformations`] answers
    /// with [`crate::autodiff::third_order`]; the default, `Ok(false)`, leaves it without them
    /// (third order then refuses a model where it constrains).
    fn third_order(&self, x: &[HyperHyperDual64], e: &mut [HyperHyperDual64]) -> Result<bool, ElementError> {
        let _ = (x, e);
        Ok(false)
    }

    /// [`third_order`](Self::third_order) of `k` jets at once: `x` holds their local coordinates
    /// one jet after another (`k n_local`), `e` their modes likewise (`k n_modes`). Jets that
    /// share their real parts (one configuration, several directions) may share what the element
    /// solves there (a wrapping path's contact points, solved once). The default evaluates the
    /// jets one by one.
    fn third_order_jets(&self, x: &[HyperHyperDual64], e: &mut [HyperHyperDual64]) -> Result<bool, ElementError> {
        let (n, m) = (self.layout().n_local(), self.layout().n_modes());
        for (xj, ej) in x.chunks_exact(n.max(1)).zip(e.chunks_exact_mut(m.max(1))) {
            if !self.third_order(xj, ej)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The deformations over fourth-order multilinear dual numbers ([`Jet4`]: four nilpotent
    /// infinitesimals), for the fourth-order transfer functions ([`crate::transfer4`]): as
    /// [`third_order`](Self::third_order), one order up. An element written over
    /// [`Deformations`] answers with its deformations; the default, `Ok(false)`, leaves it
    /// without them (fourth order then refuses a model where it constrains).
    fn fourth_order(&self, x: &[Jet4], e: &mut [Jet4]) -> Result<bool, ElementError> {
        let _ = (x, e);
        Ok(false)
    }
}

/// Four nilpotent infinitesimals `ε1..ε4` (`ε_i² = 0`): a value's mixed derivatives over every
/// subset of them, what [`Element::fourth_order`] evaluates the deformations on.
pub type Jet4 = num_dual::HyperHyperDual<num_dual::Dual64>;

/// The rates [`Element::place_rates`] reads and writes (local coordinates, `n_local`; modes, one
/// per mode).
#[derive(Debug)]
pub struct Rates<'a> {
    /// First time derivatives of the local coordinates: the known slots' read, the placed
    /// slots' written.
    pub v: &'a mut [f64],
    /// Second time derivatives, likewise.
    pub a: &'a mut [f64],
    /// The modes' first time derivatives (the given modes' read).
    pub ev: &'a [f64],
    /// The modes' second time derivatives (the given modes' read).
    pub ea: &'a [f64],
}

/// The deformation function written once over a generic scalar, for dual numbers.
pub trait Deformations: ElementInfo {
    /// Write the deformations at local coordinates `x` into `e` (one per mode).
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError>;
}
