//! Position analysis: evaluate the elements, and solve the dependent coordinates `x^c` for given
//! generalized coordinates by Newton-Raphson with a second-order Taylor predictor
//! (van der Helm 1994, eq. 1 and 6).

use faer::MatMut;

pub use crate::algorithm::error::{KinematicsError, MAX_SUBSTEPS};
pub use crate::algorithm::evaluate::evaluate;
use crate::algorithm::evaluate::{evaluate_constraints, evaluate_elements};
use crate::algorithm::local::all_finite;
use crate::algorithm::place::place;
pub use crate::algorithm::predictor::Predictor;
use crate::algorithm::predictor::predict;
use crate::algorithm::solve::{factor, factor_probed, not_well_posed, solve_checked, solve_finite};
use crate::data::{Data, History, Saved};
use crate::element::Order;
use crate::linalg::sparse::Method;
use crate::model::{Input, Model, RowTarget};

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
    /// Largest scaled residual at the solution (≤ 1 means within tolerance); 0 where the tree
    /// path placed the positions in closed form and accepted them without an evaluation.
    pub residual: f64,
    /// Of the iterations, those that stepped with the previous iterate's factors
    /// ([`NewtonOptions::chord`]).
    pub chord_steps: usize,
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

fn set_input_coordinates(model: &Model, data: &mut Data, q: &[f64]) {
    for (j, inp) in model.inputs.iter().enumerate() {
        if let Input::Coordinate(c) = inp {
            data.x[c.index()] = q[j];
        }
    }
}

/// Newton-Raphson from the current `x` for the target `q`. With `defer`, a solution reached
/// without a step leaves the factorization of `D_cc` due ([`ensure_factors`]): the tree path's
/// frame needs none (the inward pass of kinetostatics factors its blocks as it goes).
fn newton(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    opts: &NewtonOptions,
    defer: bool,
) -> Result<NewtonReport, KinematicsError> {
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
            // the factors at the solution serve every later solve, probed once
            if defer && it == 0 && worst <= 1.0 {
                data.factors_due = true;
            } else {
                factor_probed(model, data)?;
            }
            // the elements that do not constrain the motion, once, at the solution, to first
            // order on their own coordinates only: what `DF` contracts, by the screws or with
            // the attached rows of the general path (the chain rule through the attachments
            // left to whatever wants the expanded gradients: `evaluate` at `Order::Gradient`
            // adds it)
            if opts.free_elements {
                crate::algorithm::screws::evaluate_free_own(model, data)?;
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
    // the first segment starts from the state saved in `saved` unless a solve below moves it
    let mut at_saved = data.solved;
    if data.tree_path && model.placement.is_some() {
        at_saved = false;
        match tree_solve(model, data, q, opts) {
            Ok(report) => return Ok(report),
            // no solution from the placement: Newton-Raphson from the last solution
            Err(_) => restore(saved, model, data),
        }
    }
    let mut total = NewtonReport { iterations: 0, substeps: 0, residual: 0.0, chord_steps: 0 };
    // a fresh workspace is at its initial configuration: solve there first, so that the
    // predictor and the step control start from a solution
    if !data.solved {
        at_saved = false;
        let here = data.q.clone();
        match newton(model, data, &here, opts, false) {
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
        let start = (s == 1 && at_saved).then_some(saved);
        if let Err(e) = solve_segment(model, data, [a, b], opts, 0, &mut total, start) {
            restore(saved, model, data);
            return Err(e);
        }
    }
    Ok(total)
}

/// The tree path of the position solve: the dependent nodes placed in closed form for `q`
/// ([`place`]), outward from the ground, then accepted without evaluating the joints
/// ([`accept_placed`]). No predictor, no step control: the placement is exact at any step; an
/// input change the general path's continuation would refuse is refused here too. Where a step
/// has no closed form in the plan's order, or a coordinate is not finite, Newton-Raphson
/// iterates from what was placed.
fn tree_solve(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    opts: &NewtonOptions,
) -> Result<NewtonReport, KinematicsError> {
    // an input that jumps farther than the continuation would follow is refused as on the
    // general path (a diverging simulation), though the placement could reach it
    if data.solved {
        substeps(model, &data.q, q, opts)?;
    }
    set_input_coordinates(model, data, q);
    // inexact (a step without closed form) or not finite: Newton-Raphson from there, no
    // predictor
    let report = if place(model, data, q)? && all_finite(&data.x) {
        accept_placed(model, data, q, opts)?
    } else {
        newton(model, data, q, opts, true)?
    };
    data.q.copy_from_slice(q);
    data.work.history.record(&data.q, &data.x);
    Ok(NewtonReport { substeps: 1, ..report })
}

/// What the next position solve of a `Data` starts from: the coordinates and deformations of its
/// configuration, the elements' warm starts (a wrapping path's last solution) and the
/// predictor's last solutions. Saved to return to after solves that went astray (an
/// integrator's failed stage); much less to copy than the whole `Data` (its factors, transfer
/// functions and buffers, which the next solve forms again).
#[derive(Clone, Default)]
pub struct SavedPositions {
    saved: Saved,
    history: History,
}

impl SavedPositions {
    /// Empty storage: [`Self::restore`] refuses it until [`Self::save`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Copy in `data`'s configuration and warm starts, reusing the storage.
    pub fn save(&mut self, data: &Data) {
        self.saved.copy_from(data);
        self.history.copy_from(&data.work.history);
    }

    /// Return `data` (of `model`) to the saved configuration and warm starts; `D_cc` is factored
    /// again if the configuration was solved. An error, leaving `data` as it is, if nothing is
    /// saved or the saved configuration or `data` is not of `model`'s size.
    pub fn restore(&self, model: &Model, data: &mut Data) -> Result<(), KinematicsError> {
        let s = &self.saved;
        let (nq, nx, ne, nel) = (model.n_q(), model.n_x(), model.n_e(), model.elements.len());
        let sizes = [(s.q.len(), nq), (data.q.len(), nq), (s.x.len(), nx), (data.x.len(), nx)];
        let more = [(s.e.len(), ne), (data.e.len(), ne), (s.states.len(), nel), (data.states.len(), nel)];
        if let Some(&(got, expected)) = sizes.iter().chain(&more).find(|(got, expected)| got != expected) {
            return Err(KinematicsError::InputLength { expected, got });
        }
        restore(s, model, data);
        data.work.history.copy_from(&self.history);
        Ok(())
    }
}

/// The tree path's acceptance of positions [`place`] placed exactly (every step in closed form,
/// in the plan's order) and finite: no evaluation of the constraint elements. Their held and
/// input modes take their targets (what the placement imposed: an evaluation gives them to
/// round-off), the constraint elements with a free mode are evaluated to their values
/// (`Placement::valued`), and the gradients are left due (`data.order` at `Order::Value`): the
/// first consumer that reads them (`D_cc` and its factors, kinetostatics' rates and forces,
/// [`evaluate`], a transfer function's solve) evaluates the constraint elements then
/// (`evaluate_constraints`). The free elements are evaluated on their own coordinates as
/// after an accepted Newton iteration 0, and the factors of `D_cc` are due. The report's
/// residual is 0 (the targets', not evaluated).
fn accept_placed(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    opts: &NewtonOptions,
) -> Result<NewtonReport, KinematicsError> {
    // (the attached nodes the joints read were placed by the plan's steps)
    data.invalidate();
    for (r, &m) in model.rows.iter().enumerate() {
        data.e[m] = match model.row_target[r] {
            RowTarget::Fixed(v) => v,
            RowTarget::Input(j) => q[j],
        };
    }
    if let Some(plan) = &model.placement {
        evaluate_elements(model, data, &plan.valued, Order::Value)?;
    }
    data.order = Some(Order::Value);
    data.factors_due = true;
    if opts.free_elements {
        crate::algorithm::screws::evaluate_free_own(model, data)?;
    }
    data.solved = true;
    Ok(NewtonReport { iterations: 0, substeps: 1, residual: 0.0, chord_steps: 0 })
}

/// Return to a saved state.
fn restore(saved: &Saved, model: &Model, data: &mut Data) {
    data.x.copy_from_slice(&saved.x);
    data.e.copy_from_slice(&saved.e);
    data.e_prev.copy_from_slice(&saved.e_prev);
    data.q.copy_from_slice(&saved.q);
    // the elements' warm starts too: the next solve must not start from a failed iterate's
    for (state, kept) in data.states.iter_mut().zip(&saved.states) {
        kept.copy_over(state);
    }
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

/// Solve from `from` (the solved state in `data`, if any) to `to`; on failure, bisect. `start`:
/// the state in `data` already saved (the whole solve's start), which a failure returns to.
fn solve_segment(
    model: &Model,
    data: &mut Data,
    [from, to]: [&[f64]; 2],
    opts: &NewtonOptions,
    depth: u32,
    total: &mut NewtonReport,
    start: Option<&Saved>,
) -> Result<(), KinematicsError> {
    // the first level keeps its copy in the workspace; bisections (a failure path) allocate
    let own = start.is_none().then(|| {
        let mut saved = if depth == 0 { std::mem::take(&mut data.work.segment) } else { Saved::default() };
        saved.copy_from(data);
        saved
    });
    let saved = start.or(own.as_ref()).expect("the segment's start is given or copied above");
    let predictor = if data.solved { opts.predictor } else { Predictor::None };
    let result = match predict(model, data, to, predictor).and_then(|_| newton(model, data, to, opts, false)) {
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
            restore(saved, model, data);
            let mid: Vec<f64> = from.iter().zip(to).map(|(a, b)| 0.5 * (a + b)).collect();
            solve_segment(model, data, [from, &mid], opts, depth + 1, total, None)
                .and_then(|_| solve_segment(model, data, [&mid, to], opts, depth + 1, total, None))
                .map_err(|_| e)
        }
    };
    if let (0, Some(saved)) = (depth, own) {
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
