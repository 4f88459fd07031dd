//! The tree path of the position solve: every dependent node placed in closed form along the
//! model's [`crate::model::placement::Placement`], outward from the ground, for given inputs.

use crate::algorithm::error::KinematicsError;
use crate::data::Data;
use crate::element::{ElementError, Layout, NodeKind, Rates};
use crate::model::placement::Step;
use crate::model::{ElementEntry, Model, RowTarget};

/// Place the dependent nodes for the inputs `q` (n_q; the input coordinates already set in
/// `data.x`): `Ok(true)` when every step placed its nodes exactly, `Ok(false)` when one had no
/// closed form in the plan's order (Newton-Raphson then finishes from what was placed). An orientation keeps
/// the sign of its Euler parameters nearest its previous value, as Newton-Raphson from there
/// would. `Ok(false)` at once on a model without a placement.
pub(crate) fn place(model: &Model, data: &mut Data, q: &[f64]) -> Result<bool, KinematicsError> {
    let Some(plan) = &model.placement else { return Ok(false) };
    let (mut local, mut e) = (std::mem::take(&mut data.work.local_u), std::mem::take(&mut data.work.e_h));
    // steps without a closed form from what the plan knows (a conditional path point off the
    // path, its neighbours placed later): again at the end, from every node as placed by then
    let mut deferred = std::mem::take(&mut data.work.reached);
    deferred.clear();
    let mut result = Ok(true);
    for (i, step) in plan.steps.iter().enumerate() {
        match run(model, data, q, *step, None, &mut local, &mut e) {
            Ok(true) => {}
            Ok(false) => deferred.push(i),
            Err(err) => {
                result = Err(err);
                break;
            }
        }
    }
    if result.is_ok() {
        for &i in &deferred {
            match run(model, data, q, plan.steps[i], Some(u64::MAX), &mut local, &mut e) {
                Ok(true) => {}
                // placed from what was at hand: Newton-Raphson finishes
                Ok(false) => result = Ok(false),
                Err(err) => result = Err(err),
            }
        }
        // a step after a deferred one may have read its node before it was placed
        if !deferred.is_empty() {
            result = result.map(|_| false);
        }
    }
    data.work.reached = deferred;
    data.work.local_u = local;
    data.work.e_h = e;
    result
}

/// One step of the placement, with the slots `known` overridden; `Ok(false)` where the element
/// has no closed form.
fn run(
    model: &Model,
    data: &mut Data,
    q: &[f64],
    step: Step,
    known_override: Option<u64>,
    local: &mut Vec<f64>,
    e: &mut [f64],
) -> Result<bool, KinematicsError> {
    let (element, known, placed) = match step {
        Step::Attach(t) => {
            model.attachments.place_some(&[t], &mut data.x, &mut data.att_jac);
            return Ok(true);
        }
        Step::Element { element, known, placed } => (element, known_override.unwrap_or(known), placed),
    };
    let entry = &model.elements[element];
    let layout = entry.element.layout();
    // sized once (every entry written below): no length check a coordinate
    if local.len() < entry.own.len() {
        local.resize(entry.own.len(), 0.0);
    }
    let local = &mut local[..entry.own.len()];
    for (l, &c) in local.iter_mut().zip(&entry.own) {
        *l = data.x[c];
    }
    let modes = entry.mode_offset..entry.mode_offset + layout.n_modes();
    for m in modes.clone() {
        e[m] = match model.mode_row[m].map(|r| model.row_target[r]) {
            Some(RowTarget::Fixed(v)) => v,
            Some(RowTarget::Input(j)) => q[j],
            None => 0.0,
        };
    }
    if !answer(entry, entry.element.place(local, known, &e[modes]))? {
        return Ok(false);
    }
    for (o, kind) in placed_slots(layout, placed) {
        let own = &entry.own[o..o + kind.dim()];
        // −λ is the same orientation: the one nearer the last solution
        let flip = kind == NodeKind::Orientation
            && own.iter().zip(&local[o..o + 4]).map(|(&c, v)| data.x[c] * v).sum::<f64>() < 0.0;
        let sign = if flip { -1.0 } else { 1.0 };
        for (&c, v) in own.iter().zip(&local[o..o + kind.dim()]) {
            data.x[c] = sign * v;
        }
    }
    Ok(true)
}

/// The tree path of the velocities and accelerations, outward along the placement as the
/// recursive Newton-Euler algorithm goes: `ẋ = DF q̇` into `xd` and `ẍ = DF q̈ + (D²F q̇) q̇` into
/// `xdd` (n_x each) for input rates `qd` and accelerations `qdd` (n_q), at the solved positions
/// in `data` (the attachments' Jacobians current, as any evaluation leaves them). Each step
/// turns its known nodes' rates into its placed nodes' ([`crate::element::Element::place_rates`]),
/// no factorization, no Hessian. `Ok(false)` (`xd`, `xdd` then unspecified) on a model without a
/// placement or where a step has no closed form: the caller solves instead.
pub(crate) fn rates(
    model: &Model,
    data: &mut Data,
    qd: &[f64],
    qdd: &[f64],
    xd: &mut [f64],
    xdd: &mut [f64],
) -> Result<bool, KinematicsError> {
    let Some(plan) = &model.placement else { return Ok(false) };
    xd.fill(0.0);
    xdd.fill(0.0);
    for (j, inp) in model.inputs.iter().enumerate() {
        if let crate::model::Input::Coordinate(c) = inp {
            (xd[c.index()], xdd[c.index()]) = (qd[j], qdd[j]);
        }
    }
    let mut buffers = std::mem::take(&mut data.work.place_rates);
    let mut result = Ok(true);
    for step in &plan.steps {
        match *step {
            Step::Attach(t) => model.attachments.rates_and_accelerations_of(t, &data.att_jac, xd, xdd),
            Step::Element { element, known, placed } => {
                match step_rates(model, data, [qd, qdd], element, known, placed, [xd, xdd], &mut buffers) {
                    Ok(true) => {}
                    other => {
                        result = other;
                        break;
                    }
                }
            }
        }
    }
    data.work.place_rates = buffers;
    if matches!(result, Ok(true)) {
        // the attached nodes no step reads (a muscle's points), as the general path rates them
        model.attachments.rates_and_accelerations(&data.att_jac, xd, xdd);
    }
    result
}

/// One element step of [`rates`]: the placed slots' rates from the known slots' and the given
/// modes'; `Ok(false)` where the element has none.
#[allow(clippy::too_many_arguments)]
fn step_rates(
    model: &Model,
    data: &Data,
    [qd, qdd]: [&[f64]; 2],
    element: usize,
    known: u64,
    placed: u64,
    [xd, xdd]: [&mut [f64]; 2],
    [x, v, a, e, ev, ea]: &mut [Vec<f64>; 6],
) -> Result<bool, KinematicsError> {
    let entry = &model.elements[element];
    let layout = entry.element.layout();
    let (n, nm) = (entry.own.len(), layout.n_modes());
    // every entry written below: sized once (no zeroing pass a step)
    for (vec, len) in [(&mut *x, n), (&mut *v, n), (&mut *a, n), (&mut *e, nm), (&mut *ev, nm), (&mut *ea, nm)] {
        if vec.len() < len {
            vec.resize(len, 0.0);
        }
    }
    let (x, v, a) = (&mut x[..n], &mut v[..n], &mut a[..n]);
    for (i, &c) in entry.own.iter().enumerate() {
        (x[i], v[i], a[i]) = (data.x[c], xd[c], xdd[c]);
    }
    let (e, ev, ea) = (&mut e[..nm], &mut ev[..nm], &mut ea[..nm]);
    for k in 0..nm {
        let m = entry.mode_offset + k;
        (e[k], ev[k], ea[k]) = match model.mode_row[m].map(|r| model.row_target[r]) {
            Some(RowTarget::Fixed(value)) => (value, 0.0, 0.0),
            Some(RowTarget::Input(j)) => (data.e[m], qd[j], qdd[j]),
            None => (data.e[m], 0.0, 0.0),
        };
    }
    if !answer(entry, entry.element.place_rates(x, known, e, Rates { v, a, ev, ea }))? {
        return Ok(false);
    }
    for (o, kind) in placed_slots(layout, placed) {
        for (i, &c) in entry.own[o..o + kind.dim()].iter().enumerate() {
            (xd[c], xdd[c]) = (v[o + i], a[o + i]);
        }
    }
    Ok(true)
}

/// The local offset and kind of each slot of `layout` whose bit is set in `placed`.
fn placed_slots(layout: &Layout, placed: u64) -> impl Iterator<Item = (usize, NodeKind)> + '_ {
    let slots = layout.nodes().iter().enumerate().take(64);
    slots.filter(move |(s, _)| placed >> s & 1 == 1).map(|(s, &(_, kind))| (layout.offset(s), kind))
}

/// An element's answer to a step, its error named by the element.
fn answer(entry: &ElementEntry, answer: Result<bool, ElementError>) -> Result<bool, KinematicsError> {
    answer.map_err(|error| KinematicsError::Element { element: entry.name.clone(), error })
}
