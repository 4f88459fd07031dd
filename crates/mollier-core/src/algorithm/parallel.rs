//! Work on a set of elements spread over threads, with results that do not depend on the
//! number of threads.
//!
//! Each element's work writes only that element's storage (its values, gradients, state, a
//! Hessian block of its own); what is summed over elements is summed afterwards on the calling
//! thread, in the elements' order. The work is cut into chunks of a fixed size (not derived from
//! the thread count), so a run on one thread and a run on two give the same bits. One thread
//! (`threads <= 1`) runs the chunks in order on the calling thread without any other thread;
//! more share the chunks on a rayon pool of that many threads. The kernel's former helpers of its
//! own, spinning before they slept, were 11 % faster on the shoulder's two-thread step on two
//! loaded cores (docs/performance.md): too little to keep a thread pool with unsafe code of its own.

use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use crate::algorithm::error::KinematicsError;
use crate::algorithm::local::{check_finite, evaluate_into};
use crate::data::Data;
use crate::element::{ElementState, Order};
use crate::model::Model;

/// Elements per chunk: small enough that two threads share 95 muscle paths evenly whatever
/// their cost, large enough that taking a chunk is negligible next to evaluating it.
pub const CHUNK: usize = 4;

pub use crate::data::default_threads;

/// Run `work` on every item of `items`, on up to `threads` threads (at most
/// [`default_threads`]), taking the items `chunk` at a time. Which thread runs which chunk
/// varies; what `work` writes must belong to its item alone. A panic in `work` reaches the
/// caller.
pub fn for_each<T: Send>(threads: usize, items: &mut [T], chunk: usize, work: impl Fn(&mut T) + Sync) {
    let chunk = chunk.max(1);
    let threads = threads.min(default_threads());
    let pool = if threads <= 1 || items.len() <= chunk { None } else { pool(threads) };
    match pool {
        Some(pool) => pool.install(|| items.par_chunks_mut(chunk).for_each(|c| c.iter_mut().for_each(&work))),
        None => items.iter_mut().for_each(work),
    }
}

/// The rayon pool of `threads` threads, built on first use and kept: one per count asked for
/// (at most [`default_threads`] of them); `None` when the threads cannot be started, and the
/// work runs on the calling thread.
fn pool(threads: usize) -> Option<Arc<rayon::ThreadPool>> {
    static POOLS: Mutex<Vec<Arc<rayon::ThreadPool>>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = pools.iter().find(|p| p.current_num_threads() == threads) {
        return Some(p.clone());
    }
    let built = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|k| format!("mollier-helper-{k}"))
        .build()
        .ok()?;
    pools.push(Arc::new(built));
    pools.last().cloned()
}

/// Evaluate the elements `set` (element indices, `(element, order)`, each element once) at the
/// current `x` on their own coordinates, on up to `threads` threads, as the kernel's serial
/// evaluation does (`kinematics::evaluate_elements`): values to the deformations (periodic modes
/// unwrapped), gradients to the kernel's `DF_e` blocks (an element on attached nodes: its own
/// gradient kept for its forces and carried to its expanded coordinates by the chain rule).
/// The Hessians of the elements evaluated to [`Order::Hessian`] are on their OWN coordinates,
/// `m x n_own x n_own` row-major, one after the other in `hessians`; `at[element]` is the
/// offset of each (`None` for the others; `at` has one entry per element of the model). The
/// Hessians are not checked for finiteness (the values and gradients are), nor carried to the
/// expanded coordinates: their user does what it needs with them.
///
/// The attachments must be placed at `x` (`Attachments::place_some`) for the elements of `set`.
/// On an error, the first element of `set` (in its order) that failed is named, and the
/// elements after it are left with the values and warm starts they had, as the serial
/// evaluation leaves them (it stops there): the next evaluation starts from the same states on
/// any number of threads.
pub fn evaluate_elements(
    model: &Model,
    data: &mut Data,
    set: &[(usize, Order)],
    hessians: &mut Vec<f64>,
    at: &mut Vec<Option<usize>>,
) -> Result<(), KinematicsError> {
    let ne = model.elements.len();
    at.clear();
    at.resize(ne, None);
    // the Hessians' places, in the order of `set`
    hessians.clear();
    let mut len = 0;
    for &(i, order) in set {
        if i >= ne || (at[i].is_some() && order >= Order::Hessian) {
            continue;
        }
        if order >= Order::Hessian {
            let entry = &model.elements[i];
            at[i] = Some(len);
            len += entry.element.layout().n_modes() * entry.own.len().pow(2);
        }
    }
    hessians.resize(len, 0.0);
    // the elements by index, each with its own storage carved out of the kernel's buffers
    // (their offsets grow with the element's index)
    let mut order_of: Vec<Option<Order>> = vec![None; ne];
    for &(i, order) in set {
        if i < ne {
            order_of[i] = Some(order_of[i].map_or(order, |o: Order| o.max(order)));
        }
    }
    let threads = data.threads();
    // the values before, for the elements after a failure
    let e_before = data.e.clone();
    let Data { x, e, de, de_own, states, att_jac, .. } = data;
    let (x, att_jac): (&[f64], &[crate::model::attach::Jacobian]) = (x, att_jac);
    let mut jobs: Vec<Job> = Vec::with_capacity(set.len());
    {
        let (mut e_rest, mut de_rest, mut own_rest, mut h_rest) =
            (&mut e[..], &mut de[..], &mut de_own[..], &mut hessians[..]);
        let (mut e_at, mut de_at, mut own_at, mut h_at) = (0, 0, 0, 0);
        for ((i, state), order) in states.iter_mut().enumerate().zip(&order_of) {
            let Some(order) = *order else { continue };
            let entry = &model.elements[i];
            let (m, n, no) = (entry.element.layout().n_modes(), entry.coords.len(), entry.own.len());
            let ev = take(&mut e_rest, &mut e_at, entry.mode_offset, m);
            let dv = take(&mut de_rest, &mut de_at, entry.de_offset, m * n);
            let own = entry.chain.as_ref().map(|c| take(&mut own_rest, &mut own_at, c.de_own_offset, m * no));
            let h = match at[i] {
                Some(o) => take(&mut h_rest, &mut h_at, o, m * no * no),
                None => Default::default(),
            };
            jobs.push(Job {
                i,
                order,
                e: ev,
                de: dv,
                de_own: own,
                h,
                state,
                saved: ElementState::default(),
                result: Ok(()),
            });
        }
    }
    for_each(threads, &mut jobs, CHUNK, |job| job.run(model, x, att_jac));
    let mut failed: Vec<(usize, crate::element::ElementError)> = Vec::new();
    let mut saved: Vec<(usize, ElementState)> = Vec::with_capacity(jobs.len());
    for job in jobs {
        if let Err(error) = job.result {
            failed.push((job.i, error));
        }
        saved.push((job.i, job.saved));
    }
    // the first failure in the order of `set`: an element's error, or a value not finite
    for (k, &(i, order)) in set.iter().enumerate() {
        let failure = match failed.iter().position(|(j, _)| *j == i) {
            Some(p) => {
                let (_, error) = failed.swap_remove(p);
                Some(KinematicsError::Element { element: model.elements[i].name.clone(), error })
            }
            None => check_finite(model, data, i, order.min(Order::Gradient)).err(),
        };
        if let Some(failure) = failure {
            for &(j, _) in set[k + 1..].iter().filter(|(j, _)| !set[..=k].iter().any(|(s, _)| s == j)) {
                if let Some((_, state)) = saved.iter_mut().find(|(s, _)| *s == j) {
                    data.states[j] = std::mem::take(state);
                }
                let entry = &model.elements[j];
                let modes = entry.mode_offset..entry.mode_offset + entry.element.layout().n_modes();
                data.e[modes.clone()].copy_from_slice(&e_before[modes]);
            }
            return Err(failure);
        }
    }
    Ok(())
}

/// One element's evaluation and its storage.
struct Job<'a> {
    i: usize,
    order: Order,
    e: &'a mut [f64],
    /// Its gradient on its expanded coordinates (`DF_e`'s block).
    de: &'a mut [f64],
    /// On attached nodes: its gradient on its own coordinates.
    de_own: Option<&'a mut [f64]>,
    h: &'a mut [f64],
    state: &'a mut ElementState,
    /// The warm start before this evaluation (restored when an element before it failed).
    saved: ElementState,
    result: Result<(), crate::element::ElementError>,
}

impl Job<'_> {
    fn run(&mut self, model: &Model, x: &[f64], att_jac: &[crate::model::attach::Jacobian]) {
        let entry = &model.elements[self.i];
        let no = entry.own.len();
        self.saved = self.state.snapshot();
        // the own coordinates, on the stack for the elements there are
        let mut stack = [0.0; 32];
        let mut heap = Vec::new();
        let xloc: &mut [f64] = if no <= stack.len() {
            &mut stack[..no]
        } else {
            heap.resize(no, 0.0);
            &mut heap
        };
        let de: &mut [f64] = match &mut self.de_own {
            Some(own) => own,
            None => &mut self.de[..],
        };
        self.result = evaluate_into(entry, x, xloc, self.order, self.e, de, self.h, self.state);
        if self.result.is_ok()
            && self.order >= Order::Gradient
            && let (Some(chain), Some(own)) = (&entry.chain, &self.de_own)
        {
            chain.gradient(att_jac, own, &mut self.de[..]);
        }
    }
}

/// The next `len` values of `rest` from offset `from` (`at`: the offset of `rest`'s start,
/// `from >= at`), leaving the values after them in `rest`.
fn take<'a>(rest: &mut &'a mut [f64], at: &mut usize, from: usize, len: usize) -> &'a mut [f64] {
    let tail = std::mem::take(rest).split_at_mut(from - *at).1;
    let (mine, tail) = tail.split_at_mut(len);
    *rest = tail;
    *at = from + len;
    mine
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_item_is_worked_on_once_whatever_the_threads() {
        for threads in [0, 1, 2, 3, 8] {
            for len in [0, 1, CHUNK, CHUNK + 1, 97] {
                let mut items: Vec<(usize, u32)> = (0..len).map(|i| (i, 0)).collect();
                for_each(threads, &mut items, CHUNK, |(i, n)| {
                    *n += 1;
                    *i *= 3;
                });
                assert!(items.iter().enumerate().all(|(k, &(i, n))| i == 3 * k && n == 1), "{threads} {len}");
            }
        }
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller_and_the_helpers_still_work() {
        let mut items: Vec<usize> = (0..64).collect();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            for_each(2, &mut items, 1, |i| assert_ne!(*i, 40, "item 40"));
        }));
        assert!(caught.is_err());
        let mut items: Vec<usize> = (0..64).collect();
        for_each(2, &mut items, 1, |i| *i += 1);
        assert!(items.iter().enumerate().all(|(k, &i)| i == k + 1));
    }
}
