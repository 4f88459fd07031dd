//! Position analysis: evaluate the elements, and solve the dependent coordinates `x^c` for given
//! generalized coordinates by Newton-Raphson with a second-order Taylor predictor
//! (seed 001, eq. 1 and 6).

use std::f64::consts::TAU;

use faer::MatMut;

use crate::data::{Data, Saved};
use crate::diagnostics::{WellPosedness, well_posedness};
use crate::element::{ElementError, Evaluation, Order};
use crate::model::{Input, Model, RowTarget};
use crate::predictor::predict;
use crate::sparse::Method;

/// Why a kinematic analysis failed.
#[derive(Clone, Debug, thiserror::Error)]
pub enum KinematicsError {
    /// `q` has the wrong length.
    #[error("expected {expected} generalized coordinates, got {got}")]
    InputLength {
        /// `n_q`.
        expected: usize,
        /// Given.
        got: usize,
    },
    /// A generalized coordinate is NaN or infinite.
    #[error("generalized coordinate `{name}` is not finite ({value})")]
    NonFiniteInput {
        /// Its name.
        name: String,
        /// Its value.
        value: f64,
    },
    /// The model is not well posed: `D_cc` is not square or is singular.
    #[error("{}", singular_message(.0))]
    NotWellPosed(Box<WellPosedness>),
    /// An element failed to evaluate.
    #[error("element `{element}`: {error}")]
    Element {
        /// The element.
        element: String,
        /// Its reason.
        error: ElementError,
    },
    /// An element produced NaN or infinity.
    #[error("element `{element}` produced a non-finite {what} for mode `{mode}`")]
    NonFinite {
        /// The element.
        element: String,
        /// The mode.
        mode: String,
        /// `value`, `gradient` or `Hessian`.
        what: &'static str,
    },
    /// Newton-Raphson did not converge.
    #[error(
        "Newton-Raphson did not converge in {iterations} iterations: residual {residual:.3e} \
         (tolerance {tolerance:.1e}), worst equation `{worst}`"
    )]
    NoConvergence {
        /// Iterations made.
        iterations: usize,
        /// Largest residual (in the unit of its mode).
        residual: f64,
        /// The tolerance it was held to.
        tolerance: f64,
        /// The mode (`element.mode`) with the largest scaled residual.
        worst: String,
    },
    /// The reduced mass matrix is singular (a degree of freedom without inertia).
    #[error("the reduced mass matrix is singular: some degree of freedom moves no mass")]
    SingularMass,
    /// The configuration cannot be reached, and these inputs cannot be reached even when moved
    /// alone from the last solved configuration ([`solve_positions_explained`]).
    #[error(
        "this configuration cannot be reached: moved alone from the last solved one, {} cannot \
         reach {} value here either ({cause})",
        inputs.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", "),
        if inputs.len() == 1 { "its" } else { "their" }
    )]
    Unreachable {
        /// The inputs' names.
        inputs: Vec<String>,
        /// What the solve reported.
        cause: Box<KinematicsError>,
    },
    /// Transfer functions were asked for before positions were solved.
    #[error("the configuration is not solved: call solve_positions first")]
    NotSolved,
    /// Kinetostatics from a linearization was asked for where none stands.
    #[error("the motion is not linearized at this configuration: call linearize_motion_with first")]
    NotLinearized,
    /// `D_cc` turned singular on the way to a configuration, in a model that was solved before:
    /// a dead point, where the constraints become dependent (the edge of the inputs' reach).
    #[error(
        "the mechanism reaches a dead point on the way: its constraints turn dependent there{}",
        dead_point_modes(.0)
    )]
    DeadPoint(Box<WellPosedness>),
    /// An input moves farther in one solve than the continuation follows (`MAX_SUBSTEPS` steps
    /// of the step limit): a motion that jumps, or a simulation that diverges.
    #[error(
        "input `{name}` moves by {change:.6e} in one solve, more than {MAX_SUBSTEPS} continuation steps \
         of {limit} can follow: does the motion jump, or does a simulation diverge (a time step too large)?"
    )]
    StepTooLarge {
        /// The input's name.
        name: String,
        /// Its change (m or rad).
        change: f64,
        /// The largest change of one continuation step (m or rad).
        limit: f64,
    },
}

/// The most continuation steps one solve takes ([`KinematicsError::StepTooLarge`] beyond).
pub const MAX_SUBSTEPS: usize = 1 << 16;

/// How the dependent coordinates are predicted from the previous solution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Predictor {
    /// Start Newton-Raphson from the previous solution.
    None,
    /// `x + DF Δq`.
    FirstOrder,
    /// `x + DF Δq + ½ (D²F Δq) Δq` (seed 001, eq. 1).
    SecondOrder,
    /// [`Predictor::SecondOrder`] plus the third-order term along the step's line, fitted through
    /// the solution before the last one when that lies on the line (a motion that goes on
    /// along, or back over, its last step); otherwise the second-order prediction.
    ThirdOrder,
    /// [`Predictor::ThirdOrder`] with the fourth-order term too where the two solutions before
    /// the last one lie on the step's line (a motion of one input, or of several in
    /// proportion); otherwise the third-order prediction.
    FourthOrder,
}

/// Newton-Raphson settings.
#[derive(Clone, Copy, Debug)]
pub struct NewtonOptions {
    /// Convergence: every residual below `tolerance`, times the model's length scale for length
    /// modes (m) and times 1 for angles (rad) and norms. Within 100 times the tolerance, an
    /// iteration that no longer halves the residual has reached round-off and is accepted.
    pub tolerance: f64,
    /// Iterations per attempt.
    pub max_iterations: usize,
    /// Predictor from the previous solution (default [`Predictor::FourthOrder`]).
    pub predictor: Predictor,
    /// When an attempt fails, retry by splitting the step in `q` in halves, down to
    /// `2^-max_bisections` of it (continuation).
    pub max_bisections: u32,
    /// Largest change of an angle (or dimensionless) input in one Newton solve (rad); larger
    /// changes are taken in substeps, which keeps the solution on its assembly branch.
    pub max_step_angle: f64,
    /// Largest change of a length input in one Newton solve, as a fraction of the model's length
    /// scale.
    pub max_step_length: f64,
    /// Evaluate the elements that do not constrain the motion (muscles' paths, ligaments) at the
    /// solution (the default). Without, they are evaluated by the first [`evaluate`] or
    /// transfer function that needs them, or by the caller (`crate::stiffness`'s one evaluation
    /// with their Hessians).
    pub free_elements: bool,
    /// Near the solution, after a Newton step, step with the last iterate's factors (a chord
    /// step, no factorization; see `CHORD` in the source) (the default). The solution is held to
    /// the same tolerance, and the final iterate is factored either way.
    pub chord: bool,
}

impl Default for NewtonOptions {
    fn default() -> Self {
        Self {
            tolerance: 1e-14,
            max_iterations: 30,
            predictor: Predictor::FourthOrder,
            max_bisections: 6,
            max_step_angle: 0.5,
            max_step_length: 0.1,
            free_elements: true,
            chord: true,
        }
    }
}

/// What a successful position solve took.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NewtonReport {
    /// Newton iterations, summed over substeps.
    pub iterations: usize,
    /// Newton solves taken: 1, or more when the step was split (large steps, continuation).
    pub substeps: usize,
    /// Largest scaled residual at the solution (≤ 1 means within tolerance).
    pub residual: f64,
    /// Of the iterations, those that stepped with the previous iterate's factors
    /// ([`NewtonOptions::chord`]).
    pub chord_steps: usize,
}

/// Evaluate every element at the current `x`: deformations and, as `order` asks, their first
/// and second derivatives. Periodic modes are unwrapped: towards their target for constraint
/// rows, towards their previous value otherwise.
pub fn evaluate(model: &Model, data: &mut Data, order: Order) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, order)?;
    if data.order_free.is_some_and(|o| o >= order) {
        return Ok(());
    }
    model.attachments.place_some(&model.attachments.rest, &mut data.x, &mut data.att_jac);
    data.e_prev.copy_from_slice(&data.e);
    evaluate_elements(model, data, &model.free_elements, order)?;
    data.order_free = Some(order);
    Ok(())
}

/// [`evaluate`] to first order, with the free elements `hessian` (by element, `true` for those
/// wanted) evaluated to second order on their own coordinates: element `i`'s Hessians there
/// (m x n_own x n_own, row-major), from the same evaluation that gave its value and gradient, are
/// written into `kept` at `kept_at[i] = Some((offset, 0))` (`kept` grown as needed, never
/// shrunk), not checked for finiteness (values and gradients are). Always evaluates the free
/// elements, even when they were.
pub(crate) fn evaluate_keeping_hessians(
    model: &Model,
    data: &mut Data,
    hessian: &[bool],
    kept: &mut Vec<f64>,
    kept_at: &mut [Option<(usize, usize)>],
) -> Result<(), KinematicsError> {
    begin_free_elements(model, data)?;
    // the Hessians written where they are kept, one after another from the start of `kept`
    // (grown when they need more: a step's are as long as the last's, and nothing is zeroed
    // twice)
    let mut at = 0;
    for &i in &model.free_elements {
        if !hessian[i] {
            evaluate_elements(model, data, &[i], Order::Gradient)?;
            continue;
        }
        let entry = &model.elements[i];
        let len = entry.element.layout().n_modes() * entry.own.len().pow(2);
        if kept.len() < at + len {
            kept.resize(at + len, 0.0);
        }
        evaluate_own_to(model, data, i, Order::Hessian, Some(&mut kept[at..at + len]))?;
        if let Some(chain) = &entry.chain {
            chain_rule(model, data, i, chain, Order::Gradient);
        }
        // its user checks what it uses of the Hessian (crate::stiffness)
        check_finite(model, data, i, Order::Gradient)?;
        kept_at[i] = Some((at, 0));
        at += len;
    }
    data.order_free = Some(Order::Gradient);
    Ok(())
}

/// Before the free elements are evaluated again (with Hessians kept, [`evaluate_keeping_hessians`]
/// or `crate::stiffness`'s evaluation on threads): the constraint elements to first order, the
/// attachments that only free elements use placed, the previous deformations kept (periodic
/// modes unwrap towards them) and the free elements marked unevaluated.
pub(crate) fn begin_free_elements(model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, Order::Gradient)?;
    model.attachments.place_some(&model.attachments.rest, &mut data.x, &mut data.att_jac);
    data.e_prev.copy_from_slice(&data.e);
    data.order_free = None;
    Ok(())
}

/// Evaluate the elements with a fixed or input mode — the constraint equations, all that
/// Newton-Raphson and the predictor need. Elements whose modes are all dependent (muscles,
/// ligaments, free joints' measures) do not move the mechanism: [`evaluate`] adds them once at
/// the solution.
pub(crate) fn evaluate_constraints(model: &Model, data: &mut Data, order: Order) -> Result<(), KinematicsError> {
    if data.order.is_some_and(|o| o >= order) {
        return Ok(());
    }
    model.attachments.place_some(&model.attachments.constraining, &mut data.x, &mut data.att_jac);
    evaluate_elements(model, data, &model.constraint_elements, order)?;
    data.order = Some(order);
    Ok(())
}

/// Evaluate the elements `set` (indices) to `order`, their nodes placed at the current `x`; the
/// other elements are left as they are.
pub(crate) fn evaluate_elements(
    model: &Model,
    data: &mut Data,
    set: &[usize],
    order: Order,
) -> Result<(), KinematicsError> {
    if order >= Order::Hessian && data.d2e.len() != model.d2e_len {
        data.d2e = vec![0.0; model.d2e_len];
    }
    for &i in set {
        evaluate_own(model, data, i, order)?;
        if let Some(chain) = &model.elements[i].chain {
            chain_rule(model, data, i, chain, order);
        }
        check_finite(model, data, i, order)?;
    }
    Ok(())
}

/// After element `i` was evaluated: refuse non-finite values and derivatives, and unwrap its
/// periodic modes.
pub(crate) fn check_finite(model: &Model, data: &mut Data, i: usize, order: Order) -> Result<(), KinematicsError> {
    let entry = &model.elements[i];
    let (m, n) = (entry.element.layout().n_modes(), entry.coords.len());
    for k in 0..m {
        let g = entry.mode_offset + k;
        if !data.e[g].is_finite() {
            return Err(non_finite(model, g, "value"));
        }
        if model.mode_info[g].periodic {
            let reference = match model.mode_row[g].map(|r| model.row_target[r]) {
                Some(RowTarget::Fixed(v)) => v,
                Some(RowTarget::Input(j)) => data.q[j],
                None => data.e_prev[g],
            };
            data.e[g] += TAU * ((reference - data.e[g]) / TAU).round();
        }
    }
    if order >= Order::Gradient && !all_finite(&data.de[entry.de_offset..entry.de_offset + m * n]) {
        let k = (0..m)
            .find(|&k| data.de[entry.de_offset + k * n..entry.de_offset + (k + 1) * n].iter().any(|v| !v.is_finite()));
        return Err(non_finite(model, entry.mode_offset + k.unwrap_or(0), "gradient"));
    }
    if order >= Order::Hessian && !all_finite(&data.d2e[entry.d2e_offset..entry.d2e_offset + m * n * n]) {
        return Err(non_finite(model, entry.mode_offset, "Hessian"));
    }
    Ok(())
}

/// Whether every entry of `v` is finite. `0 · v` is NaN exactly where `v` is NaN or infinite, and
/// a sum with a NaN stays NaN: eight independent sums, which the compiler vectorizes, where a
/// short-circuiting search tests one entry at a time (the Hessians' scan was 7 % of a small
/// model's frame).
#[inline]
pub(crate) fn all_finite(v: &[f64]) -> bool {
    let mut acc = [0.0f64; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            *a += x * 0.0;
        }
    }
    for (a, x) in acc.iter_mut().zip(chunks.remainder()) {
        *a += x * 0.0;
    }
    acc.iter().all(|a| *a == 0.0)
}

/// The largest `|v_i|` (0 for none), NaNs passed over (as `f64::max` does). In eight lanes, each
/// keeping its largest (which the compiler vectorizes: `f64::max`'s fold goes one entry at a
/// time); the largest is the same whatever the order.
#[inline]
pub(crate) fn max_abs(v: &[f64]) -> f64 {
    if v.len() < 16 {
        return v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    }
    let mut acc = [0.0f64; 8];
    let mut chunks = v.chunks_exact(8);
    for c in &mut chunks {
        for (a, x) in acc.iter_mut().zip(c) {
            let x = x.abs();
            *a = if x > *a { x } else { *a };
        }
    }
    for x in chunks.remainder() {
        acc[0] = acc[0].max(x.abs());
    }
    acc.iter().fold(0.0f64, |m, a| m.max(*a))
}

/// Evaluate element `i` on its own local coordinates: its derivatives go to the kernel's buffers,
/// or for an element on attached nodes to the chain rule's (its own gradient, kept for its
/// forces, and a scratch Hessian).
fn evaluate_own(model: &Model, data: &mut Data, i: usize, order: Order) -> Result<(), KinematicsError> {
    evaluate_own_to(model, data, i, order, None)
}

/// [`evaluate_own`], its Hessians (when `order` asks for them) into `hessians` (m x n_own x
/// n_own) if given, instead of the kernel's buffers.
fn evaluate_own_to(
    model: &Model,
    data: &mut Data,
    i: usize,
    order: Order,
    hessians: Option<&mut [f64]>,
) -> Result<(), KinematicsError> {
    let entry = &model.elements[i];
    let m = entry.element.layout().n_modes();
    let (de, d2e) = match (&entry.chain, hessians) {
        (None, Some(h)) => (&mut data.de[entry.de_offset..], h),
        (Some(c), Some(h)) => (&mut data.de_own[c.de_own_offset..], h),
        // the Hessians' buffer is sized only once they are asked for
        (None, None) if order >= Order::Hessian => (&mut data.de[entry.de_offset..], &mut data.d2e[entry.d2e_offset..]),
        (None, None) => (&mut data.de[entry.de_offset..], &mut [][..]),
        (Some(c), None) => (&mut data.de_own[c.de_own_offset..], &mut data.chain_h[..]),
    };
    let (e, state) = (&mut data.e[entry.mode_offset..entry.mode_offset + m], &mut data.states[i]);
    evaluate_into(entry, &data.x, &mut data.xloc, order, e, de, d2e, state)
        .map_err(|error| KinematicsError::Element { element: entry.name.clone(), error })
}

/// Element `entry` evaluated at `x` on its own coordinates (gathered into `xloc`, at least
/// n_own long): its values into `e` (m) and, as `order` asks, its gradient into `de` (the first
/// m x n_own, row-major) and its Hessians into `d2e` (the first m x n_own x n_own), each zeroed
/// first; what `order` does not ask for is not touched (and may be empty).
#[inline]
pub(crate) fn evaluate_into(
    entry: &crate::model::ElementEntry,
    x: &[f64],
    xloc: &mut [f64],
    order: Order,
    e: &mut [f64],
    de: &mut [f64],
    d2e: &mut [f64],
    state: &mut crate::element::ElementState,
) -> Result<(), ElementError> {
    let (m, n) = (entry.element.layout().n_modes(), entry.own.len());
    let xloc = &mut xloc[..n];
    for (v, &c) in xloc.iter_mut().zip(&entry.own) {
        *v = x[c];
    }
    let de: &mut [f64] = if order >= Order::Gradient { &mut de[..m * n] } else { &mut [] };
    de.fill(0.0);
    let d2e: &mut [f64] = if order >= Order::Hessian { &mut d2e[..m * n * n] } else { &mut [] };
    d2e.fill(0.0);
    entry.element.evaluate(xloc, &mut Evaluation::new(order, n, e, de, d2e, state).with_fixed(entry.fixed))
}

/// Carry the derivatives of element `i`, evaluated on its own coordinates ([`evaluate_own`]), to
/// its expanded coordinates by the chain rule (`J = ∂x_own/∂x_exp`):
/// `∇_exp e = Jᵀ ∇e`, `∇²_exp e = Jᵀ ∇²e J + Σ_a (∂e/∂x_a) ∂²x_a/∂x_exp²`.
fn chain_rule(model: &Model, data: &mut Data, i: usize, chain: &crate::attach::Chain, order: Order) {
    let entry = &model.elements[i];
    let (m, no, n) = (entry.element.layout().n_modes(), entry.own.len(), entry.coords.len());
    if order < Order::Gradient {
        return;
    }
    let g_own = &data.de_own[chain.de_own_offset..chain.de_own_offset + m * no];
    chain.gradient(&data.att_jac, g_own, &mut data.de[entry.de_offset..entry.de_offset + m * n]);
    if order < Order::Hessian {
        return;
    }
    // J's rows have 1 + 4·depth nonzeros (most own coordinates are free: one): the products
    // walk them, adding each entry's terms in the order the dense product would
    let j = &mut data.chain_j[..chain.jacobian_nonzeros()];
    let (starts, cols) = chain.sparse_jacobian(&data.att_jac, j);
    let t = &mut data.chain_t[..no * n];
    let h = &mut data.d2e[entry.d2e_offset..entry.d2e_offset + m * n * n];
    h.fill(0.0);
    for k in 0..m {
        let hk_own = &data.chain_h[k * no * no..(k + 1) * no * no];
        // t = H_own J (no x n)
        t.fill(0.0);
        for a in 0..no {
            let ta = &mut t[a * n..(a + 1) * n];
            for b in 0..no {
                let hab = hk_own[a * no + b];
                if hab != 0.0 {
                    for (&c, jv) in cols[starts[b]..starts[b + 1]].iter().zip(&j[starts[b]..starts[b + 1]]) {
                        ta[c] += hab * jv;
                    }
                }
            }
        }
        // h = Jᵀ t + Σ_a g_a ∂²x_a
        let hk = &mut h[k * n * n..(k + 1) * n * n];
        for a in 0..no {
            let ta = &t[a * n..(a + 1) * n];
            for (&c, &jac) in cols[starts[a]..starts[a + 1]].iter().zip(&j[starts[a]..starts[a + 1]]) {
                if jac != 0.0 {
                    for (hv, tv) in hk[c * n..(c + 1) * n].iter_mut().zip(ta) {
                        *hv += jac * tv;
                    }
                }
            }
            let ga = g_own[k * no + a];
            if ga != 0.0 {
                chain.add_curvature(&model.attachments, a, ga, n, hk);
            }
        }
    }
}

fn non_finite(model: &Model, m: usize, what: &'static str) -> KinematicsError {
    let (el, _) = model.mode_element[m];
    KinematicsError::NonFinite {
        element: model.elements[el.index()].name.clone(),
        mode: model.mode_info[m].name.to_string(),
        what,
    }
}

/// Residual of the constraint equations at the current evaluation; returns the largest scaled
/// residual and its row.
fn residual(model: &Model, data: &mut Data, q: &[f64], tol: f64) -> (f64, usize) {
    let mut worst = (0.0, 0);
    for (r, &m) in model.rows.iter().enumerate() {
        let target = match model.row_target[r] {
            RowTarget::Fixed(v) => v,
            RowTarget::Input(j) => q[j],
        };
        let g = data.e[m] - target;
        data.g[r] = g;
        let s = g.abs() / (tol * model.mode_scale(m));
        if s > worst.0 || s.is_nan() {
            worst = (s, r);
        }
    }
    worst
}

/// Fill `D_cc` from the element gradients.
pub(crate) fn assemble(model: &Model, data: &mut Data) {
    data.dcc.fill(0.0);
    for &(src, dst) in &model.pattern.scatter {
        data.dcc[dst] += data.de[src];
    }
}

/// Evaluate, assemble and factor `D_cc` at the current `x` by `method`. On a singular matrix,
/// the error carries the SVD diagnostics.
pub(crate) fn factor(model: &Model, data: &mut Data, method: Method) -> Result<(), KinematicsError> {
    evaluate_constraints(model, data, Order::Gradient)?;
    if !model.is_square() {
        return Err(not_well_posed(model, data));
    }
    assemble(model, data);
    if data.lu.factor(&model.pattern, &data.dcc, method).is_err() {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Why `D_cc` could not be factored. The rank check may pass where the factorization failed
/// (its tolerance is looser): then the configuration is singular — never "well posed" as a
/// reason for a failure.
fn singular_message(w: &WellPosedness) -> String {
    if w.is_well_posed() {
        "the constraint matrix D_cc is numerically singular at this configuration: the inputs reach a dead point \
         or a position the mechanism cannot take"
            .into()
    } else {
        w.to_string()
    }
}

fn dead_point_modes(w: &WellPosedness) -> String {
    let names: Vec<&str> = w.redundant.iter().take(4).map(|i| i.name.as_str()).collect();
    if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
}

fn not_well_posed(model: &Model, data: &mut Data) -> KinematicsError {
    // a failed solve names only the modes a user can release
    KinematicsError::NotWellPosed(Box::new(well_posedness(model, data).releasable(model)))
}

/// Solve `D_cc v = rhs` in place with the current factors and check the solution: a singular
/// `D_cc` shows as a non-finite or inaccurate solution, since the sparse LU does not report it.
pub(crate) fn solve_checked(model: &Model, data: &mut Data, rhs: MatMut<'_, f64>) -> Result<(), KinematicsError> {
    let mut rhs = rhs;
    let n = model.n_unknowns();
    let (mut b, mut y) = (std::mem::take(&mut data.work.c_b), std::mem::take(&mut data.work.c_y));
    b.clear();
    for j in 0..rhs.ncols() {
        b.extend_from_slice(rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut());
    }
    data.lu.solve(&model.pattern, rhs.as_mut(), false);
    let mut ok = true;
    for j in 0..rhs.ncols() {
        let v = rhs.as_mut().col_mut(j).try_as_col_major_mut().expect("contiguous columns").as_slice_mut();
        ok = ok && solution_ok_in(model, data, v, &b[j * n..(j + 1) * n], false, 1e13, &mut y);
    }
    data.work.c_b = b;
    data.work.c_y = y;
    if !ok {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Solve `D_cc v = rhs` in place for many right-hand sides with factors that were already checked
/// at this configuration (by the probe at convergence); only finiteness is verified.
pub(crate) fn solve_unchecked(model: &Model, data: &mut Data, rhs: MatMut<'_, f64>) -> Result<(), KinematicsError> {
    if rhs.ncols() > crate::sparse::MANY_COLUMNS && data.lu.add_sparse(&model.pattern, &data.dcc).is_err() {
        return Err(not_well_posed(model, data));
    }
    solve_finite(model, data, rhs, false)
}

/// Solve with the current factors, verifying only that the solution is finite.
fn solve_finite(model: &Model, data: &mut Data, rhs: MatMut<'_, f64>, transpose: bool) -> Result<(), KinematicsError> {
    let mut rhs = rhs;
    data.lu.solve(&model.pattern, rhs.as_mut(), transpose);
    let finite = |j: usize| {
        let c = rhs.as_ref().col(j);
        c.try_as_col_major().map_or_else(|| c.iter().all(|v| v.is_finite()), |c| all_finite(c.as_slice()))
    };
    if !(0..rhs.ncols()).all(finite) {
        return Err(not_well_posed(model, data));
    }
    Ok(())
}

/// Solve `D_ccᵀ v = rhs` in place (kinetostatics) with the factors probed at convergence (the
/// transpose has the same condition); only finiteness is verified.
pub(crate) fn solve_transpose_checked(
    model: &Model,
    data: &mut Data,
    rhs: MatMut<'_, f64>,
) -> Result<(), KinematicsError> {
    if !(data.solved && data.lu.valid) {
        return Err(KinematicsError::NotSolved);
    }
    solve_finite(model, data, rhs, true)
}

/// Backward error and a condition lower bound (at most `condition`) of a solve of `D_cc` (or its
/// transpose).
pub(crate) fn solution_ok(model: &Model, data: &Data, v: &[f64], b: &[f64], transpose: bool, condition: f64) -> bool {
    solution_ok_in(model, data, v, b, transpose, condition, &mut Vec::new())
}

/// [`solution_ok`] with the storage of `D_cc v` given (resized to `v`).
fn solution_ok_in(
    model: &Model,
    data: &Data,
    v: &[f64],
    b: &[f64],
    transpose: bool,
    condition: f64,
    y: &mut Vec<f64>,
) -> bool {
    if !all_finite(v) {
        return false;
    }
    y.resize(v.len(), 0.0);
    if transpose {
        model.pattern.mul_t(&data.dcc, v, y);
    } else {
        model.pattern.mul(&data.dcc, v, y);
    }
    let bn = max_abs(b);
    for (p, q) in y.iter_mut().zip(b) {
        *p -= q;
    }
    let err = max_abs(y);
    let scale = max_abs(&data.dcc) * max_abs(v);
    !(err > 1e-8 * (bn + scale) + f64::MIN_POSITIVE || (bn > 0.0 && scale > condition * bn))
}

fn set_input_coordinates(model: &Model, data: &mut Data, q: &[f64]) {
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            data.x[c.index()] = q[j];
        }
    }
}

/// Newton-Raphson from the current `x` for the target `q`.
fn newton(model: &Model, data: &mut Data, q: &[f64], opts: &NewtonOptions) -> Result<NewtonReport, KinematicsError> {
    set_input_coordinates(model, data, q);
    data.invalidate();
    let n = model.n_unknowns();
    let mut first_worst = f64::NAN;
    let mut previous = f64::INFINITY;
    // the factors of the last iterate's D_cc, after a checked Newton step from it
    let mut last_factors = false;
    let mut chord_steps = 0;
    for it in 0..=opts.max_iterations {
        // an iterate after a step from one close to the solution (quadratic convergence: the
        // scaled residual squared times the tolerance) is likely the solution, where the
        // Hessians are wanted (the accelerations', the next solve's predictor): evaluated with
        // the gradients, the elements are not evaluated again for them
        let likely_last = it > 0 && previous * previous * opts.tolerance <= LIKELY_LAST;
        if !(likely_last && evaluate_hessians_too(model, data, opts)) {
            evaluate_constraints(model, data, Order::Gradient)?;
        }
        let (worst, _) = residual(model, data, q, opts.tolerance);
        if it == 0 {
            first_worst = worst;
        }
        let stagnated = worst <= 100.0 && worst > 0.5 * previous;
        previous = worst;
        if worst <= 1.0 || stagnated {
            factor(model, data, Method::Blocks)?;
            // the factors at the solution serve every later solve; the block LU refuses only an
            // exactly zero pivot: probe them once at the solution
            let mut probe = std::mem::take(&mut data.work.c_rhs);
            for (i, v) in probe.iter_mut().enumerate() {
                *v = 1.0 + (i % 7) as f64;
            }
            let checked = solve_checked(model, data, MatMut::from_column_major_slice_mut(&mut probe, n, 1));
            data.work.c_rhs = probe;
            checked?;
            // the elements that do not constrain the motion, once, at the solution
            if opts.free_elements {
                evaluate(model, data, Order::Gradient)?;
            }
            data.solved = true;
            return Ok(NewtonReport { iterations: it, substeps: 1, residual: worst, chord_steps });
        }
        if it == opts.max_iterations || !worst.is_finite() || (it >= 4 && worst > 1e8 * first_worst.max(1.0)) {
            break;
        }
        // within CHORD of the tolerance after a Newton step, the step from here with the last
        // iterate's factors (a chord step) contracts the error by about that step's size: it
        // converges as a Newton step would, without a factorization and its check; the final
        // iterate is factored as always (DF and D²F need D_cc at the solution)
        let chord = opts.chord && last_factors && worst <= CHORD;
        let mut dx = std::mem::take(&mut data.work.c_rhs);
        dx.copy_from_slice(&data.g[..n]);
        let solved = if chord {
            // the factors are the last iterate's, checked there: valid for this step
            data.lu.valid = true;
            solve_finite(model, data, MatMut::from_column_major_slice_mut(&mut dx, n, 1), false)
        } else {
            factor(model, data, Method::Blocks)
                .and_then(|()| solve_checked(model, data, MatMut::from_column_major_slice_mut(&mut dx, n, 1)))
        };
        if solved.is_ok() {
            for (col, &c) in model.dependent_coords.iter().enumerate() {
                data.x[c] -= dx[col];
            }
        }
        data.work.c_rhs = dx;
        // the factors are not x's any more (a failed Newton solve leaves them, at x, as before)
        if chord || solved.is_ok() {
            data.lu.valid = false;
        }
        solved?;
        last_factors = !chord;
        chord_steps += usize::from(chord);
        data.order = None;
        data.order_free = None;
    }
    let (_, row) = residual(model, data, q, opts.tolerance);
    let m = model.rows[row];
    Err(KinematicsError::NoConvergence {
        iterations: opts.max_iterations,
        residual: data.g[row].abs(),
        tolerance: opts.tolerance * model.mode_scale(m),
        worst: model.mode_name(crate::ids::ModeId::new(m)),
    })
}

/// A Newton iterate whose predecessor's scaled residual `r` had `r² · tolerance` at most this is
/// expected to converge (the chain's and the pendulum's frames: `r` 2e3 to 6e3 before the last
/// iterate, 4e8 to 2e9 before the one that does not converge; the chain going on along a line
/// with the third-order predictor: `r` 1.3e7, `r² · tolerance` 1.6, then 0.66 — it converged). A
/// wrong guess costs the Hessians of one evaluation, a right one saves a whole evaluation.
const LIKELY_LAST: f64 = 4.0;

/// A scaled residual (1 = the tolerance) below which a Newton iterate takes a chord step: after a
/// Newton step, a residual of `r` tolerances means a step of about `√(r · tolerance)` (quadratic
/// convergence), so the chord step's contraction, of the order of that step, is 3e-6 at most.
/// The pendulum's frames: 1 to 10 after one Newton step from the predictor, where 7 in 10
/// frames took a second Newton step.
const CHORD: f64 = 1e3;

/// Evaluate the constraint elements to second order where the solve will want their Hessians
/// (the second-order predictor's, the accelerations'); `false` when it does not, or when the
/// evaluation failed — then the caller evaluates to first order, so that a Hessian outside an
/// element's domain at an iterate is no error (it would not have been one before). The values
/// and gradients are those of a first-order evaluation, bit for bit.
fn evaluate_hessians_too(model: &Model, data: &mut Data, opts: &NewtonOptions) -> bool {
    if !matches!(opts.predictor, Predictor::SecondOrder | Predictor::ThirdOrder | Predictor::FourthOrder) {
        return false;
    }
    if evaluate_constraints(model, data, Order::Hessian).is_ok() {
        return true;
    }
    data.order = None;
    false
}

/// Solve the dependent coordinates for the generalized coordinates `q` (n_q) with default
/// options. On success `data` holds the configuration, all deformations, and the factorization
/// of `D_cc` for the transfer functions.
pub fn solve_positions(model: &Model, data: &mut Data, q: &[f64]) -> Result<NewtonReport, KinematicsError> {
    solve_positions_with(model, data, q, &NewtonOptions::default())
}

/// [`solve_positions`] with explicit options.
pub fn solve_positions_with(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    opts: &NewtonOptions,
) -> Result<NewtonReport, KinematicsError> {
    if q.len() != model.n_q() {
        return Err(KinematicsError::InputLength { expected: model.n_q(), got: q.len() });
    }
    if let Some(j) = q.iter().position(|v| !v.is_finite()) {
        return Err(KinematicsError::NonFiniteInput { name: model.input_name(j), value: q[j] });
    }
    if !model.is_square() {
        return Err(not_well_posed(model, data));
    }
    let mut saved = std::mem::take(&mut data.work.whole);
    saved.copy_from(data);
    let (mut from, mut a, mut b) =
        (std::mem::take(&mut data.work.q_from), std::mem::take(&mut data.work.q_a), std::mem::take(&mut data.work.q_b));
    let result = solve_from_saved(model, data, q, opts, &saved, [&mut from, &mut a, &mut b]);
    data.work.whole = saved;
    (data.work.q_from, data.work.q_a, data.work.q_b) = (from, a, b);
    result
}

/// [`solve_positions_with`] once the state is saved, with three vectors of `n_q` to work in.
fn solve_from_saved(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    opts: &NewtonOptions,
    saved: &Saved,
    [from, a, b]: [&mut Vec<f64>; 3],
) -> Result<NewtonReport, KinematicsError> {
    let mut total = NewtonReport { iterations: 0, substeps: 0, residual: 0.0, chord_steps: 0 };
    // a fresh workspace is at its initial configuration: solve there first, so that the
    // predictor and the step control start from a solution
    if !data.solved {
        let here = data.q.clone();
        match newton(model, data, &here, opts) {
            Ok(r) => {
                total.iterations += r.iterations;
                total.chord_steps += r.chord_steps;
                data.work.history.record(&data.q, &data.x);
            }
            Err(_) => restore(saved, model, data),
        }
    }
    from.clone_from(&data.q);
    let n = match substeps(model, from, q, opts) {
        Ok(n) => n,
        Err(e) => {
            restore(saved, model, data);
            return Err(e);
        }
    };
    for s in 1..=n {
        a.clear();
        a.extend(from.iter().zip(q).map(|(x, y)| x + (s - 1) as f64 / n as f64 * (y - x)));
        b.clear();
        b.extend(from.iter().zip(q).map(|(x, y)| x + s as f64 / n as f64 * (y - x)));
        if let Err(e) = solve_segment(model, data, a, b, opts, 0, &mut total) {
            restore(saved, model, data);
            return Err(e);
        }
    }
    Ok(total)
}

/// Return to a saved state.
fn restore(saved: &Saved, model: &Model, data: &mut Data) {
    data.x.copy_from_slice(&saved.x);
    data.e.copy_from_slice(&saved.e);
    data.e_prev.copy_from_slice(&saved.e_prev);
    data.q.copy_from_slice(&saved.q);
    data.invalidate();
    // the factors were overwritten: make them again for the predictor
    if saved.solved && factor(model, data, Method::Blocks).is_ok() {
        data.solved = true;
    }
}

/// Substeps so that no input moves more than the step limits in one Newton solve (large steps
/// can converge to another assembly branch).
fn substeps(model: &Model, from: &[f64], to: &[f64], opts: &NewtonOptions) -> Result<usize, KinematicsError> {
    let mut ratio: f64 = 0.0;
    for (j, inp) in model.inputs.iter().enumerate() {
        let is_length = match inp {
            Input::Coordinate(_) => true,
            Input::Mode(m) => model.mode_info[m.index()].quantity == crate::element::Quantity::Length,
        };
        let limit = if is_length { opts.max_step_length * model.length_scale } else { opts.max_step_angle };
        let r = (to[j] - from[j]).abs() / limit;
        // refused rather than clamped: clamped, each substep would fail and bisect (a hang)
        if r > MAX_SUBSTEPS as f64 {
            return Err(KinematicsError::StepTooLarge { name: model.input_name(j), change: to[j] - from[j], limit });
        }
        ratio = ratio.max(r);
    }
    Ok((ratio.ceil() as usize).max(1))
}

/// Solve from `from` (the solved state in `data`, if any) to `to`; on failure, bisect.
fn solve_segment(
    model: &Model,
    data: &mut Data,
    from: &[f64],
    to: &[f64],
    opts: &NewtonOptions,
    depth: u32,
    total: &mut NewtonReport,
) -> Result<(), KinematicsError> {
    // the first level keeps its copy in the workspace; bisections (a failure path) allocate
    let mut saved = if depth == 0 { std::mem::take(&mut data.work.segment) } else { Saved::default() };
    saved.copy_from(data);
    let predictor = if data.solved { opts.predictor } else { Predictor::None };
    let result = match predict(model, data, to, predictor).and_then(|_| newton(model, data, to, opts)) {
        Ok(r) => {
            data.q.copy_from_slice(to);
            data.work.history.record(&data.q, &data.x);
            total.iterations += r.iterations;
            total.chord_steps += r.chord_steps;
            total.substeps += 1;
            total.residual = r.residual;
            Ok(())
        }
        Err(e) if depth >= opts.max_bisections => Err(e),
        Err(e) => {
            restore(&saved, model, data);
            let mid: Vec<f64> = from.iter().zip(to).map(|(a, b)| 0.5 * (a + b)).collect();
            solve_segment(model, data, from, &mid, opts, depth + 1, total)
                .and_then(|_| solve_segment(model, data, &mid, to, opts, depth + 1, total))
                .map_err(|_| e)
        }
    };
    if depth == 0 {
        data.work.segment = saved;
    }
    result
}

/// After [`solve_positions`] failed to reach `q` (n_q) from the solved configuration in `data`:
/// the inputs that, moved alone from there to their values in `q`, cannot be reached either — the
/// likely culprits of an unreachable posture, where the failure itself names whichever equation
/// gave up first. `data` is left as it is (each trial works on a copy); one solve per input that
/// moves, so call it only on the failure path. Empty when `data` holds no solution, or when every
/// input can be reached alone (then it is their combination that cannot).
pub fn unreachable_inputs(model: &Model, data: &Data, q: &[f64]) -> Vec<usize> {
    if !data.solved || q.len() != model.n_q() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for j in 0..q.len() {
        if q[j] == data.q[j] || !q[j].is_finite() {
            continue;
        }
        let mut trial = data.q.clone();
        trial[j] = q[j];
        let mut copy = data.clone();
        if solve_positions(model, &mut copy, &trial).is_err() {
            out.push(j);
        }
    }
    out
}

/// [`solve_positions`]; when `q` cannot be reached (no convergence, an element outside its
/// domain, a configuration where `D_cc` turns singular on the way — a dead point at the edge of
/// the inputs' reach) and some inputs cannot be reached alone either ([`unreachable_inputs`]),
/// the error names them ([`KinematicsError::Unreachable`]) instead of the equation that gave up
/// first. A model that is not well posed never solves, so its error is returned as it is.
pub fn solve_positions_explained(model: &Model, data: &mut Data, q: &[f64]) -> Result<NewtonReport, KinematicsError> {
    match solve_positions(model, data, q) {
        Err(
            cause @ (KinematicsError::NoConvergence { .. }
            | KinematicsError::Element { .. }
            | KinematicsError::NotWellPosed(_)),
        ) => {
            let culprits = unreachable_inputs(model, data, q);
            if culprits.is_empty() {
                return Err(cause);
            }
            let inputs = culprits.iter().map(|&j| model.input_name(j)).collect();
            // the model was solved before: a singular D_cc on the way is a dead point, not a
            // modelling error whose advice (release a mode) would mislead
            let cause = match cause {
                KinematicsError::NotWellPosed(w) => KinematicsError::DeadPoint(w),
                other => other,
            };
            Err(KinematicsError::Unreachable { inputs, cause: Box::new(cause) })
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::all_finite;

    /// The largest magnitude of every length through a few vectors and a tail, at every place,
    /// with NaNs passed over, as the fold of `f64::max` gives it.
    #[test]
    fn max_abs_is_the_fold_of_max() {
        for n in 0..40 {
            for at in 0..n.max(1) {
                let mut v: Vec<f64> =
                    (0..n).map(|i| ((i * 7919) % 13) as f64 * if i % 3 == 0 { -0.5 } else { 0.25 }).collect();
                if n > 0 {
                    v[at] = -9.5;
                    v[(at + 1) % n] = f64::NAN;
                }
                let want = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                assert_eq!(super::max_abs(&v).to_bits(), want.to_bits(), "{n} {at}");
            }
        }
    }

    /// Every length through a few vectors and a tail, a non-finite value at every place.
    #[test]
    fn all_finite_finds_every_non_finite_value() {
        for n in 0..70 {
            let v: Vec<f64> = (0..n).map(|i| [f64::MAX, -f64::MAX, 1e-300, -0.0, 3.5][i % 5]).collect();
            assert!(all_finite(&v), "{n}");
            for i in 0..n {
                for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                    let mut w = v.clone();
                    w[i] = bad;
                    assert!(!all_finite(&w), "{n} {i} {bad}");
                }
            }
        }
    }
}
