//! The buffers the geometric stiffness (`crate::stiffness`) keeps in [`crate::Data`] between
//! calls: declared with the data, filled and read by the algorithm.

use crate::element::Order;
use crate::geometry::Mat3;

/// The buffers of [`add_geometric_stiffness`], kept in [`Data`] between calls.
#[derive(Clone, Debug, Default)]
pub(crate) struct Workspace {
    pub(crate) force: Vec<f64>,
    /// Whether `force` is the last call's, at the configuration in `Data`.
    pub(crate) force_valid: bool,
    pub(crate) attached: Vec<bool>,
    pub(crate) pair: Vec<f64>,
    pub(crate) xloc: Vec<f64>,
    pub(crate) e: Vec<f64>,
    /// The gradients and Hessians of the elements evaluated here, their weighted Hessians.
    pub(crate) own: Vec<f64>,
    pub(crate) hsum: Vec<f64>,
    pub(crate) modes: Vec<(usize, usize, f64)>,
    /// Per frame (its orientation's first coordinate), `Σ_p F_p pᵀ` over its points.
    pub(crate) frames: Vec<(usize, Mat3)>,
    pub(crate) lambda: Vec<f64>,
    /// One per chunk of elements ([`crate::algorithm::parallel::CHUNK`]).
    pub(crate) scratches: Vec<Scratch>,
    pub(crate) groups: Vec<Group>,
    /// Each group's `Uᵀ H U`, its upper triangle as the sums' (`n_q` x the rows' stride each).
    pub(crate) contributions: Vec<f64>,
    pub(crate) shared: Shared,
    /// [`evaluate_weighted`]'s: the elements wanted; their Hessians on their own coordinates
    /// (one after the other), the coordinates they were evaluated at, and per element the
    /// offsets of both.
    pub(crate) wanted: Vec<bool>,
    pub(crate) kept: Vec<f64>,
    pub(crate) kept_x: Vec<f64>,
    pub(crate) kept_at: Vec<Option<(usize, usize)>>,
    /// The parallel evaluation's: its `(element, order)` and its Hessians' offsets.
    pub(crate) set: Vec<(usize, Order)>,
    pub(crate) kernel_at: Vec<Option<usize>>,
}

/// One weighted element: its gradient (m x n) and weighted Hessian (n x n, times `scale`) on its
/// own n coordinates, and whether its `Uᵀ H U` (in the workspace's `contributions`) was finite.
#[derive(Clone, Debug)]
pub(crate) struct Group {
    pub(crate) el: usize,
    /// Its first weighted mode (for an error's message).
    pub(crate) mode: usize,
    pub(crate) de: Source,
    pub(crate) h: Source,
    pub(crate) scale: f64,
    pub(crate) n: usize,
    pub(crate) m: usize,
    pub(crate) ok: bool,
    pub(crate) plan: Plan,
}

/// A group's part in the shared coordinates' sums ([`plan_shared`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Plan {
    /// Where its shared coordinates' block is in `Shared::parts` (nf x nf), how many
    /// of its moving coordinates are shared, and their set (`Shared::sets`).
    pub(crate) part: usize,
    pub(crate) nf: usize,
    pub(crate) set: usize,
    /// Its moving coordinates (local, in `Shared::moving`), the first `mp` not shared.
    pub(crate) moving: std::ops::Range<usize>,
    pub(crate) mp: usize,
}

/// The coordinates many elements share (a frame's own, not a point of a body: an obstacle's
/// frame, which 61 of the shoulder's paths touch), whose part of each `Uᵀ s H U` is summed over
/// the elements and contracted once ([`Scratch::add_congruence_sharing`]).
#[derive(Clone, Debug, Default)]
pub(crate) struct Shared {
    /// Per coordinate (n_x): not a point of a body.
    pub(crate) marks: Vec<bool>,
    /// The sets' coordinates, one set after the other, and each set's range.
    pub(crate) coords: Vec<usize>,
    pub(crate) sets: Vec<std::ops::Range<usize>>,
    /// Each group's part, and each set's sum of them (the same layout).
    pub(crate) parts: Vec<f64>,
    pub(crate) sums: Vec<f64>,
    /// Each set's offset in `sums`.
    pub(crate) offsets: Vec<usize>,
    /// The last plan (per group; the parts' length) and what it was made for:
    /// the groups' elements and the coordinates that moved (the same at every step).
    pub(crate) planned: Vec<Plan>,
    /// Each group's moving coordinates (local; `Plan::moving`).
    pub(crate) moving: Vec<usize>,
    pub(crate) planned_len: usize,
    pub(crate) planned_sym: bool,
    pub(crate) planned_for: (Vec<usize>, Vec<bool>),
}

/// Where an element's gradient or Hessian is: the kernel's gradients (`de`, or `de_own` on
/// attached nodes), the Hessians kept by [`evaluate_weighted`], or the stiffness's own buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Source {
    De(usize),
    DeOwn(usize),
    Kept(usize),
    Own(usize),
}

/// Scratch of [`Scratch::add_congruence`].
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    pub(crate) u: Vec<f64>,
    pub(crate) t: Vec<f64>,
    pub(crate) hm: Vec<f64>,
    pub(crate) moving: Vec<usize>,
    pub(crate) arch: pulp::Arch,
}
