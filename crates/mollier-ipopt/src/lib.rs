//! A binding to IPOPT (Wächter & Biegler 2006), the interior-point NLP solver of the field's
//! optimal control tools, through its C interface (`IpStdCInterface.h`: create, options, solve,
//! free), with a safe wrapper: an [`Nlp`] trait and [`solve`].
//!
//! The library is loaded at run time (`dlopen` of `libipopt.so.1`, Debian's
//! `coinor-libipopt-dev`, or the file named by `MOLLIER_IPOPT`), not linked: every crate of the
//! workspace builds and runs on a machine without IPOPT, and only an optimization asks for it
//! ([`Error::Unavailable`] says how to install it: `tools/install-ipopt`). No crate on crates.io
//! does this offline: `ipopt-sys` builds IPOPT from downloaded sources.
//!
//! Callbacks never unwind into IPOPT: a panic in the problem's code is caught and returned as
//! [`Error::Panicked`] after IPOPT stops (the callback reports failure to IPOPT).

use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Mutex, OnceLock};

type Index = c_int;
type Number = f64;
type Bool = c_int;
type Problem = *mut c_void;
type EvalF = extern "C" fn(Index, *mut Number, Bool, *mut Number, *mut c_void) -> Bool;
type EvalGradF = extern "C" fn(Index, *mut Number, Bool, *mut Number, *mut c_void) -> Bool;
type EvalG = extern "C" fn(Index, *mut Number, Bool, Index, *mut Number, *mut c_void) -> Bool;
type EvalJacG =
    extern "C" fn(Index, *mut Number, Bool, Index, Index, *mut Index, *mut Index, *mut Number, *mut c_void) -> Bool;
type EvalH = extern "C" fn(
    Index,
    *mut Number,
    Bool,
    Number,
    Index,
    *mut Number,
    Bool,
    Index,
    *mut Index,
    *mut Index,
    *mut Number,
    *mut c_void,
) -> Bool;
type Intermediate = extern "C" fn(
    Index,
    Index,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Number,
    Index,
    *mut c_void,
) -> Bool;

type CreateFn = unsafe extern "C" fn(
    Index,
    *mut Number,
    *mut Number,
    Index,
    *mut Number,
    *mut Number,
    Index,
    Index,
    Index,
    EvalF,
    EvalG,
    EvalGradF,
    EvalJacG,
    EvalH,
) -> Problem;
type FreeFn = unsafe extern "C" fn(Problem);
type StrOptionFn = unsafe extern "C" fn(Problem, *mut c_char, *mut c_char) -> Bool;
type NumOptionFn = unsafe extern "C" fn(Problem, *mut c_char, Number) -> Bool;
type IntOptionFn = unsafe extern "C" fn(Problem, *mut c_char, Index) -> Bool;
type IntermediateFn = unsafe extern "C" fn(Problem, Intermediate) -> Bool;
type ScalingFn = unsafe extern "C" fn(Problem, Number, *mut Number, *mut Number) -> Bool;
type SolveFn = unsafe extern "C" fn(
    Problem,
    *mut Number,
    *mut Number,
    *mut Number,
    *mut Number,
    *mut Number,
    *mut Number,
    *mut c_void,
) -> c_int;

/// The entry points of `IpStdCInterface.h` (IPOPT 3.11 and later).
struct Api {
    create: CreateFn,
    free: FreeFn,
    str_option: StrOptionFn,
    num_option: NumOptionFn,
    int_option: IntOptionFn,
    intermediate: IntermediateFn,
    scaling: ScalingFn,
    solve: SolveFn,
}

// SAFETY: the table holds function pointers into a library that is never unloaded.
unsafe impl Send for Api {}
unsafe impl Sync for Api {}

/// The library names tried in turn when `MOLLIER_IPOPT` is not set.
const NAMES: [&str; 3] = ["libipopt.so.1", "libipopt.so.3", "libipopt.so"];

fn load() -> Result<Api, String> {
    let names: Vec<String> = match std::env::var("MOLLIER_IPOPT") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let mut tried = Vec::new();
    for name in &names {
        let c = CString::new(name.as_str()).map_err(|_| format!("library name `{name}` contains a NUL byte"))?;
        // SAFETY: dlopen with a valid C string; the handle is kept for the process's life.
        let handle = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            // SAFETY: dlerror returns a C string owned by libc, or null.
            let why = unsafe { libc::dlerror() };
            let why = if why.is_null() {
                String::new()
            } else {
                // SAFETY: non-null, NUL-terminated (dlerror's contract).
                unsafe { CStr::from_ptr(why) }.to_string_lossy().into_owned()
            };
            tried.push(why);
            continue;
        }
        let sym = |s: &str| -> Result<*mut c_void, String> {
            let cs = CString::new(s).expect("symbol names have no NUL");
            // SAFETY: a handle from dlopen and a valid C string.
            let p = unsafe { libc::dlsym(handle, cs.as_ptr()) };
            if p.is_null() { Err(format!("{name} has no symbol `{s}`: not IPOPT's C interface")) } else { Ok(p) }
        };
        // SAFETY: the symbols are the C interface's functions, whose signatures these types
        // transcribe from IpStdCInterface.h (Index = int, Number = double, Bool = int).
        unsafe {
            return Ok(Api {
                create: std::mem::transmute::<*mut c_void, CreateFn>(sym("CreateIpoptProblem")?),
                free: std::mem::transmute::<*mut c_void, FreeFn>(sym("FreeIpoptProblem")?),
                str_option: std::mem::transmute::<*mut c_void, StrOptionFn>(sym("AddIpoptStrOption")?),
                num_option: std::mem::transmute::<*mut c_void, NumOptionFn>(sym("AddIpoptNumOption")?),
                int_option: std::mem::transmute::<*mut c_void, IntOptionFn>(sym("AddIpoptIntOption")?),
                intermediate: std::mem::transmute::<*mut c_void, IntermediateFn>(sym("SetIntermediateCallback")?),
                scaling: std::mem::transmute::<*mut c_void, ScalingFn>(sym("SetIpoptProblemScaling")?),
                solve: std::mem::transmute::<*mut c_void, SolveFn>(sym("IpoptSolve")?),
            });
        }
    }
    Err(tried.join("; "))
}

fn api() -> Result<&'static Api, Error> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(|why| Error::Unavailable(why.clone()))
}

/// Whether IPOPT can be loaded here (`Err` says why not).
pub fn available() -> Result<(), Error> {
    api().map(|_| ())
}

/// Why a solve could not run or did not finish.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// The library could not be loaded.
    #[error(
        "IPOPT is not available ({0}): install it with `tools/install-ipopt` (Debian's coinor-libipopt-dev), or name the library in MOLLIER_IPOPT"
    )]
    Unavailable(String),
    /// The problem is too large for IPOPT's 32-bit indices, or its structure is inconsistent.
    #[error("invalid problem: {0}")]
    Invalid(String),
    /// IPOPT refused an option.
    #[error("IPOPT refused the option `{0}`")]
    Option(String),
    /// The problem's code panicked inside a callback.
    #[error("the problem's evaluation panicked: {0}")]
    Panicked(String),
}

/// A nonlinear program `min f(x)` subject to `g_L ≤ g(x) ≤ g_U`, `x_L ≤ x ≤ x_U`, with a sparse
/// constraint Jacobian and, optionally, the sparse lower triangle of the Hessian of the Lagrangian
/// `σ ∇²f + Σ λ_i ∇²g_i`. An evaluation returns `false` when it cannot evaluate at `x` (IPOPT then
/// shortens its step).
pub trait Nlp {
    /// Number of variables.
    fn n(&self) -> usize;
    /// Number of constraints.
    fn m(&self) -> usize;
    /// Fill the bounds (n, n, m, m); `±1e19` or beyond is infinite.
    fn bounds(&self, x_l: &mut [f64], x_u: &mut [f64], g_l: &mut [f64], g_u: &mut [f64]);
    /// The objective.
    fn objective(&mut self, x: &[f64]) -> Option<f64>;
    /// The objective's gradient (n).
    fn gradient(&mut self, x: &[f64], grad: &mut [f64]) -> bool;
    /// The constraints (m).
    fn constraints(&mut self, x: &[f64], g: &mut [f64]) -> bool;
    /// The Jacobian's nonzeros as (row, column), in the order of [`Nlp::jacobian`]'s values.
    fn jacobian_structure(&self) -> Vec<(usize, usize)>;
    /// The Jacobian's values at `x`.
    fn jacobian(&mut self, x: &[f64], values: &mut [f64]) -> bool;
    /// The Hessian of the Lagrangian's lower-triangle nonzeros (row ≥ column), or `None` to let
    /// IPOPT approximate it (limited-memory BFGS).
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        None
    }
    /// The Hessian of the Lagrangian's values at `x`, objective factor `sigma`, multipliers `lambda`.
    fn hessian(&mut self, _x: &[f64], _sigma: f64, _lambda: &[f64], _values: &mut [f64]) -> bool {
        false
    }
    /// IPOPT's user scaling ([`Scaling`]), or `None` for IPOPT's own (gradient-based) scaling.
    fn scaling(&self) -> Option<Scaling> {
        None
    }
}

/// IPOPT's user scaling (`SetIpoptProblemScaling`, `nlp_scaling_method = user-scaling`): IPOPT
/// solves for `x̃ = D_x x` with `f̃ = d_f f` and `g̃ = D_g g`. A factor is the reciprocal of its
/// quantity's typical size: a variable of typical size 0.01 m has 100 (1/m).
#[derive(Clone, Debug, PartialEq)]
pub struct Scaling {
    /// `d_f`, the objective's factor.
    pub objective: f64,
    /// `D_x`, one factor per variable (n).
    pub x: Vec<f64>,
    /// `D_g`, one factor per constraint (m).
    pub g: Vec<f64>,
}

/// An option for IPOPT (its documented names, e.g. `tol`, `max_iter`, `print_level`).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A string option.
    Str(String),
    /// A numeric option.
    Num(f64),
    /// An integer option.
    Int(i32),
}

/// One row of IPOPT's iteration table (its intermediate callback).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Iteration {
    /// Iteration count.
    pub iter: i32,
    /// Whether in the restoration phase.
    pub restoration: bool,
    /// Objective (unscaled).
    pub objective: f64,
    /// Primal infeasibility (constraint violation).
    pub inf_pr: f64,
    /// Dual infeasibility.
    pub inf_du: f64,
    /// Barrier parameter, base-10 logarithm taken by the caller if wanted.
    pub mu: f64,
    /// Infinity norm of the step.
    pub d_norm: f64,
    /// Hessian regularization.
    pub regularization: f64,
    /// Dual step size.
    pub alpha_du: f64,
    /// Primal step size.
    pub alpha_pr: f64,
    /// Line search trials.
    pub ls_trials: i32,
}

/// The outcome of [`solve`].
#[derive(Clone, Debug)]
pub struct Solution {
    /// IPOPT's `ApplicationReturnStatus` (0 solved, 1 solved to the acceptable level, negative
    /// failures).
    pub status: i32,
    /// The final point (n), within the variables' bounds.
    pub x: Vec<f64>,
    /// IPOPT's last iterate (n): [`Solution::x`] before its projection onto the bounds. IPOPT
    /// relaxes the bounds by `bound_relax_factor` (1e-8 relative) and may stop that far beyond
    /// one; a warm start continues the run from this point and its multipliers (from `x`, the
    /// point differs by up to that much and the dual infeasibility by the Hessian times it).
    pub iterate: Vec<f64>,
    /// The objective there.
    pub objective: f64,
    /// The constraints there (m).
    pub g: Vec<f64>,
    /// The constraints' multipliers (m).
    pub lambda: Vec<f64>,
    /// The multipliers of the variables' lower bounds (n).
    pub z_l: Vec<f64>,
    /// The multipliers of the variables' upper bounds (n).
    pub z_u: Vec<f64>,
    /// The iteration table.
    pub iterations: Vec<Iteration>,
}

impl Solution {
    /// Whether IPOPT converged (to its tolerance or the acceptable one).
    pub fn converged(&self) -> bool {
        self.status == 0 || self.status == 1
    }

    /// The status's name in IPOPT's `IpReturnCodes_inc.h`.
    pub fn status_name(&self) -> &'static str {
        status_name(self.status)
    }
}

/// The name of an `ApplicationReturnStatus`.
pub fn status_name(status: i32) -> &'static str {
    match status {
        0 => "Solve_Succeeded",
        1 => "Solved_To_Acceptable_Level",
        2 => "Infeasible_Problem_Detected",
        3 => "Search_Direction_Becomes_Too_Small",
        4 => "Diverging_Iterates",
        5 => "User_Requested_Stop",
        6 => "Feasible_Point_Found",
        -1 => "Maximum_Iterations_Exceeded",
        -2 => "Restoration_Failed",
        -3 => "Error_In_Step_Computation",
        -4 => "Maximum_CpuTime_Exceeded",
        -10 => "Not_Enough_Degrees_Of_Freedom",
        -11 => "Invalid_Problem_Definition",
        -12 => "Invalid_Option",
        -13 => "Invalid_Number_Detected",
        -100 => "Unrecoverable_Exception",
        -101 => "NonIpopt_Exception_Thrown",
        -102 => "Insufficient_Memory",
        -199 => "Internal_Error",
        _ => "unknown status",
    }
}

/// The multipliers of a point, for IPOPT's warm start (`warm_start_init_point`): those of an
/// earlier [`Solution`] of the same problem continue its iterate.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Multipliers {
    /// The constraints' multipliers (m).
    pub lambda: Vec<f64>,
    /// The multipliers of the variables' lower bounds (n; not negative).
    pub z_l: Vec<f64>,
    /// The multipliers of the variables' upper bounds (n; not negative).
    pub z_u: Vec<f64>,
}

/// Move `x` onto its finite bounds `x_l`, `x_u` (IPOPT's `honor_original_bounds`).
fn project(x: &mut [f64], x_l: &[f64], x_u: &[f64]) {
    for ((x, l), u) in x.iter_mut().zip(x_l).zip(x_u) {
        if *l > -1e19 && *x < *l {
            *x = *l;
        }
        if *u < 1e19 && *x > *u {
            *x = *u;
        }
    }
}

/// The variables' factors `D_x` IPOPT scales by: the problem's user scaling `x_factors` unless
/// the last `nlp_scaling_method` among `options` chose another method.
fn user_x_scaling<'a>(options: &[(&str, Value)], x_factors: Option<&'a [f64]>) -> Option<&'a [f64]> {
    let method = options.iter().rev().find(|(k, _)| *k == "nlp_scaling_method").map(|(_, v)| v);
    x_factors.filter(|_| matches!(method, Some(Value::Str(s)) if s == "user-scaling"))
}

/// A bound's multiplier `z` (unscaled, as [`Solution`] returns it) of a variable of factor `d`
/// as IPOPT's warm start must be given it. The scaled multiplier is `d_f z / d` (the scaled
/// gradient is `d_f ∇f / d`), and IPOPT unscales its result so (`OrigIpoptNLP::
/// FinalizeSolution`), but its start (`OrigIpoptNLP::InitializeStructures`, 3.11 to 3.14)
/// takes `d_f z d`: given `z / d²`, it starts at `d_f z / d`, where the run stopped.
fn bound_multiplier_for_ipopt(z: f64, d: f64) -> f64 {
    z / (d * d)
}

/// What the callbacks reach through IPOPT's user-data pointer.
struct Context<'a> {
    nlp: &'a mut dyn Nlp,
    jac: Vec<(usize, usize)>,
    hess: Option<Vec<(usize, usize)>>,
    iterations: Vec<Iteration>,
    panic: Option<String>,
}

/// Run `f` on the context, turning a panic into a recorded failure.
fn guarded(user: *mut c_void, f: impl FnOnce(&mut Context<'_>) -> bool) -> Bool {
    // SAFETY: IPOPT passes back the pointer `solve` gave it, to a Context alive for the solve.
    let ctx = unsafe { &mut *(user as *mut Context<'_>) };
    if ctx.panic.is_some() {
        return 0;
    }
    match catch_unwind(AssertUnwindSafe(|| f(&mut *ctx))) {
        Ok(ok) => ok as Bool,
        Err(e) => {
            let msg = e
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| e.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            ctx.panic = Some(msg);
            0
        }
    }
}

/// `n` values at `p` (IPOPT's arrays are never shorter than the sizes it passes).
///
/// # Safety
/// `p` points at `n` readable numbers.
unsafe fn slice<'a>(p: *const Number, n: usize) -> &'a [f64] {
    if n == 0 { &[] } else { unsafe { std::slice::from_raw_parts(p, n) } }
}

/// # Safety
/// `p` points at `n` writable numbers.
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> &'a mut [T] {
    if n == 0 { &mut [] } else { unsafe { std::slice::from_raw_parts_mut(p, n) } }
}

extern "C" fn eval_f(n: Index, x: *mut Number, _: Bool, obj: *mut Number, user: *mut c_void) -> Bool {
    guarded(user, |c| {
        // SAFETY: IPOPT's arrays of the sizes it passes.
        let x = unsafe { slice(x, n as usize) };
        match c.nlp.objective(x) {
            Some(v) => {
                // SAFETY: a pointer to one number.
                unsafe { *obj = v };
                true
            }
            None => false,
        }
    })
}

extern "C" fn eval_grad_f(n: Index, x: *mut Number, _: Bool, grad: *mut Number, user: *mut c_void) -> Bool {
    guarded(user, |c| {
        // SAFETY: IPOPT's arrays of the sizes it passes.
        let (x, g) = unsafe { (slice(x, n as usize), slice_mut(grad, n as usize)) };
        c.nlp.gradient(x, g)
    })
}

extern "C" fn eval_g(n: Index, x: *mut Number, _: Bool, m: Index, g: *mut Number, user: *mut c_void) -> Bool {
    guarded(user, |c| {
        // SAFETY: IPOPT's arrays of the sizes it passes.
        let (x, g) = unsafe { (slice(x, n as usize), slice_mut(g, m as usize)) };
        c.nlp.constraints(x, g)
    })
}

/// Fill IPOPT's structure arrays (`values` null) or the values.
fn structure_or(
    pattern: &[(usize, usize)],
    rows: *mut Index,
    cols: *mut Index,
    values: *mut Number,
    fill: impl FnOnce(&mut [f64]) -> bool,
) -> bool {
    let nnz = pattern.len();
    if values.is_null() {
        // SAFETY: IPOPT passes arrays of nele entries for the structure.
        let (r, c) = unsafe { (slice_mut(rows, nnz), slice_mut(cols, nnz)) };
        for (k, &(i, j)) in pattern.iter().enumerate() {
            r[k] = i as Index;
            c[k] = j as Index;
        }
        true
    } else {
        // SAFETY: as above, for the values.
        fill(unsafe { slice_mut(values, nnz) })
    }
}

extern "C" fn eval_jac_g(
    n: Index,
    x: *mut Number,
    _: Bool,
    _m: Index,
    _nele: Index,
    rows: *mut Index,
    cols: *mut Index,
    values: *mut Number,
    user: *mut c_void,
) -> Bool {
    guarded(user, |c| {
        let jac = std::mem::take(&mut c.jac);
        // SAFETY: IPOPT's x of n numbers (read only when values are asked for).
        let ok = structure_or(&jac, rows, cols, values, |v| c.nlp.jacobian(unsafe { slice(x, n as usize) }, v));
        c.jac = jac;
        ok
    })
}

extern "C" fn eval_h(
    n: Index,
    x: *mut Number,
    _: Bool,
    sigma: Number,
    m: Index,
    lambda: *mut Number,
    _: Bool,
    _nele: Index,
    rows: *mut Index,
    cols: *mut Index,
    values: *mut Number,
    user: *mut c_void,
) -> Bool {
    guarded(user, |c| {
        let Some(hess) = c.hess.take() else { return false };
        let ok = structure_or(&hess, rows, cols, values, |v| {
            // SAFETY: IPOPT's x (n) and multipliers (m).
            let (x, l) = unsafe { (slice(x, n as usize), slice(lambda, m as usize)) };
            c.nlp.hessian(x, sigma, l, v)
        });
        c.hess = Some(hess);
        ok
    })
}

extern "C" fn intermediate(
    mode: Index,
    iter: Index,
    objective: Number,
    inf_pr: Number,
    inf_du: Number,
    mu: Number,
    d_norm: Number,
    regularization: Number,
    alpha_du: Number,
    alpha_pr: Number,
    ls_trials: Index,
    user: *mut c_void,
) -> Bool {
    guarded(user, |c| {
        c.iterations.push(Iteration {
            iter,
            restoration: mode == 1,
            objective,
            inf_pr,
            inf_du,
            mu,
            d_norm,
            regularization,
            alpha_du,
            alpha_pr,
            ls_trials,
        });
        true
    })
}

/// Whether a warm start's multipliers `w` fit a problem of `n` variables and `m` constraints.
fn check_multipliers(w: &Multipliers, n: usize, m: usize) -> Result<(), Error> {
    let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
    if w.lambda.len() != m || w.z_l.len() != n || w.z_u.len() != n {
        return Err(Error::Invalid(format!(
            "the warm start has {}, {} and {} multipliers, the problem {m} constraints and {n} variables",
            w.lambda.len(),
            w.z_l.len(),
            w.z_u.len()
        )));
    }
    if !finite(&w.lambda) || !finite(&w.z_l) || !finite(&w.z_u) {
        return Err(Error::Invalid("the warm start's multipliers are not all finite".into()));
    }
    Ok(())
}

/// Give IPOPT's `problem` its `options` in turn.
fn set_options(api: &Api, problem: Problem, options: &[(&str, Value)]) -> Result<(), Error> {
    for (key, value) in options {
        let k = CString::new(*key).map_err(|_| Error::Option(key.to_string()))?;
        let k = k.into_raw();
        // SAFETY: valid C strings; IPOPT copies them; ownership is taken back right after.
        let ok = unsafe {
            match value {
                Value::Str(s) => {
                    let v = CString::new(s.as_str()).map_err(|_| Error::Option(key.to_string()))?.into_raw();
                    let ok = (api.str_option)(problem, k, v);
                    drop(CString::from_raw(v));
                    ok
                }
                Value::Num(v) => (api.num_option)(problem, k, *v),
                Value::Int(v) => (api.int_option)(problem, k, *v),
            }
        };
        // SAFETY: from into_raw above.
        drop(unsafe { CString::from_raw(k) });
        if ok == 0 {
            return Err(Error::Option(format!("{key} = {value:?}")));
        }
    }
    Ok(())
}

/// Solve `nlp` from `x0` with IPOPT's `options` (`print_level` 0 unless given: the iteration
/// table is returned in [`Solution::iterations`]; `hessian_approximation` is set to
/// `limited-memory` when the problem gives no Hessian; `honor_original_bounds` is `no`, and
/// [`Solution::x`] is projected onto the bounds here, so that [`Solution::iterate`] is IPOPT's).
///
/// Solves run one at a time in a process: Debian's IPOPT 3.11 solves its linear systems with
/// MUMPS over a sequential MPI stub, which is not reentrant (two solves on two threads crashed
/// with SIGSEGV), so a lock serializes them.
pub fn solve(nlp: &mut dyn Nlp, x0: &[f64], options: &[(&str, Value)]) -> Result<Solution, Error> {
    solve_from(nlp, x0, None, options)
}

/// [`solve`] from `x0` and, when `warm` is given, its multipliers: IPOPT's warm start
/// (`warm_start_init_point = yes` and `warm_start_mult_init_max` 1e300, not IPOPT's 1e6 that
/// clips larger scaled multipliers, set before `options`, which may tune it: IPOPT pushes the
/// point and the multipliers off their bounds by `warm_start_bound_push` and
/// `warm_start_mult_bound_push`, and starts the barrier at `mu_init`). The bounds' multipliers
/// are given to IPOPT so that, under user scaling, it starts from their scaled values (IPOPT
/// 3.11 to 3.14 scales them by `D_x`, not `1/D_x`: `bound_multiplier_for_ipopt`); a start
/// from a [`Solution::iterate`] and its multipliers begins at that run's last iteration.
pub fn solve_from(
    nlp: &mut dyn Nlp,
    x0: &[f64],
    warm: Option<&Multipliers>,
    options: &[(&str, Value)],
) -> Result<Solution, Error> {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let api = api()?;
    // a panic in another solve's callback is caught there: the lock is never poisoned by one,
    // and a poisoned lock still serializes
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (n, m) = (nlp.n(), nlp.m());
    if x0.len() != n {
        return Err(Error::Invalid(format!("the start has {} values, the problem {n} variables", x0.len())));
    }
    let jac = nlp.jacobian_structure();
    let hess = nlp.hessian_structure();
    let too_big = |k: usize| k > Index::MAX as usize;
    if too_big(n) || too_big(m) || too_big(jac.len()) || hess.as_ref().is_some_and(|h| too_big(h.len())) {
        return Err(Error::Invalid("more variables, constraints or nonzeros than IPOPT's indices hold".into()));
    }
    if let Some(&(i, j)) = jac.iter().find(|&&(i, j)| i >= m || j >= n) {
        return Err(Error::Invalid(format!("Jacobian entry ({i}, {j}) outside {m} x {n}")));
    }
    if let Some(&(i, j)) = hess.iter().flatten().find(|&&(i, j)| i >= n || j > i) {
        return Err(Error::Invalid(format!("Hessian entry ({i}, {j}) outside the lower triangle of {n} x {n}")));
    }
    let (mut x_l, mut x_u, mut g_l, mut g_u) = (vec![0.0; n], vec![0.0; n], vec![0.0; m], vec![0.0; m]);
    nlp.bounds(&mut x_l, &mut x_u, &mut g_l, &mut g_u);
    let scaling = nlp.scaling();
    if let Some(sc) = &scaling {
        let good = |v: &[f64]| v.iter().all(|f| f.is_finite() && *f > 0.0);
        if sc.x.len() != n || sc.g.len() != m || !good(&sc.x) || !good(&sc.g) || !good(&[sc.objective]) {
            return Err(Error::Invalid(format!(
                "the scaling needs {n} and {m} positive finite factors, and one for the objective"
            )));
        }
    }
    if let Some(w) = warm {
        check_multipliers(w, n, m)?;
    }
    let nele_hess = hess.as_ref().map_or(0, Vec::len);
    let has_hess = hess.is_some();
    let mut ctx = Context { nlp, jac, hess, iterations: Vec::new(), panic: None };
    // SAFETY: arrays of the sizes given; IPOPT copies the bounds.
    let problem = unsafe {
        (api.create)(
            n as Index,
            x_l.as_mut_ptr(),
            x_u.as_mut_ptr(),
            m as Index,
            g_l.as_mut_ptr(),
            g_u.as_mut_ptr(),
            ctx.jac.len() as Index,
            nele_hess as Index,
            0,
            eval_f,
            eval_g,
            eval_grad_f,
            eval_jac_g,
            eval_h,
        )
    };
    if problem.is_null() {
        return Err(Error::Invalid("IPOPT could not create the problem".into()));
    }
    struct Free<'a>(&'a Api, Problem);
    impl Drop for Free<'_> {
        fn drop(&mut self) {
            // SAFETY: created above, freed once.
            unsafe { (self.0.free)(self.1) }
        }
    }
    let guard = Free(api, problem);
    // the iterate comes back as IPOPT left it, and is projected onto the bounds here
    let mut all: Vec<(&str, Value)> = vec![
        ("print_level", Value::Int(0)),
        ("sb", Value::Str("yes".into())),
        ("honor_original_bounds", Value::Str("no".into())),
    ];
    if !has_hess {
        all.push(("hessian_approximation", Value::Str("limited-memory".into())));
    }
    if warm.is_some() {
        all.push(("warm_start_init_point", Value::Str("yes".into())));
        // the multipliers as given: IPOPT clips scaled ones beyond 1e6 by default
        all.push(("warm_start_mult_init_max", Value::Num(1e300)));
    }
    let x_factors = scaling.as_ref().map(|sc| sc.x.clone());
    if let Some(mut sc) = scaling {
        // the caller's options come after, so `nlp_scaling_method` may still be overridden
        all.push(("nlp_scaling_method", Value::Str("user-scaling".into())));
        // SAFETY: arrays of n and m numbers; IPOPT copies them.
        if unsafe { (api.scaling)(problem, sc.objective, sc.x.as_mut_ptr(), sc.g.as_mut_ptr()) } == 0 {
            return Err(Error::Invalid("IPOPT refused the scaling".into()));
        }
    }
    all.extend(options.iter().cloned());
    set_options(api, problem, &all)?;
    // SAFETY: a valid problem and callback.
    unsafe { (api.intermediate)(problem, intermediate) };
    let mut x = x0.to_vec();
    let (mut g, mut lambda, mut z_l, mut z_u) = match warm {
        Some(w) => (vec![0.0; m], w.lambda.clone(), w.z_l.clone(), w.z_u.clone()),
        None => (vec![0.0; m], vec![0.0; m], vec![0.0; n], vec![0.0; n]),
    };
    let d_x = user_x_scaling(&all, x_factors.as_deref()).filter(|_| warm.is_some());
    let handed = d_x.map(|d_x| {
        for (z, d) in z_l.iter_mut().zip(d_x).chain(z_u.iter_mut().zip(d_x)) {
            *z = bound_multiplier_for_ipopt(*z, *d);
        }
        (z_l.clone(), z_u.clone())
    });
    let mut objective = f64::NAN;
    // SAFETY: arrays of the problem's sizes; the context outlives the call.
    let status = unsafe {
        (api.solve)(
            problem,
            x.as_mut_ptr(),
            g.as_mut_ptr(),
            &mut objective,
            lambda.as_mut_ptr(),
            z_l.as_mut_ptr(),
            z_u.as_mut_ptr(),
            &mut ctx as *mut Context<'_> as *mut c_void,
        )
    };
    drop(guard);
    if let Some(p) = ctx.panic {
        return Err(Error::Panicked(p));
    }
    // IPOPT leaves the arrays as they were when it stops before a solution (the problem
    // refused): then the multipliers given come back, not IPOPT's copies of them
    if let (Some(w), Some((l, u))) = (warm, handed) {
        if z_l == l && z_u == u {
            (z_l, z_u) = (w.z_l.clone(), w.z_u.clone());
        }
    }
    let iterate = x.clone();
    project(&mut x, &x_l, &x_u);
    Ok(Solution { status, x, iterate, objective, g, lambda, z_l, z_u, iterations: ctx.iterations })
}
