//! The polish of the cubic criterion (cb): clarabel's answer on the power cones, refined to the
//! precision of its optimality conditions.
//!
//! clarabel stops the power cones at its gap tolerance, so its forces are only as exact as that
//! stop (parts in 10⁸-10⁶ of the closed form) and move with the round-off of the program's data.
//! At the optimum every epigraph is tight, `s_i = u_i³/κ²`, and the program is smooth in the
//! scaled forces `u`: least `Σ w_i u_i³ + ½ Σ p_r v_r²` (`w_i = q_{s_i}/κ²`) subject to the
//! input equalities, the active bounds and the active sign rows. With the active set of
//! clarabel's answer (a row is active where its slack is below its multiplier), Newton's method
//! on the stationarity `3 w_i u_i² + (Aᵀλ)_i = 0` and the active rows converges in a few steps.
//! The polished point replaces clarabel's only when every optimality condition then holds to
//! [`TOL`]: stationarity, primal feasibility of every row, the multipliers' signs. A joint cone
//! on its surface or apex is not polished (clarabel's answer is kept); a cone clarabel found
//! inactive must stay strictly satisfied.

use mollier_core::dense::{lu_in_place, lu_solve};

use crate::program::{Layout, Values};

/// The optimality conditions the polished point must meet, on the program's O(1) scaled data.
const TOL: f64 = 1e-12;

/// Newton steps per active set: from clarabel's answer quadratic convergence takes 3-5.
const NEWTON_STEPS: usize = 30;

/// What fixes a scaled force: a bound.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Bound {
    Lower,
    Upper,
}

impl Bound {
    fn value(self) -> f64 {
        match self {
            Bound::Lower => 0.0,
            Bound::Upper => 1.0,
        }
    }
}

/// The rows imposed as equations: the bound that fixes each force, the active sign rows.
struct ActiveSet {
    fixed: Vec<Option<Bound>>,
    signs: Vec<usize>,
}

/// The optimality conditions at a Newton point, and what a failed one needs to correct the set.
struct Verdict {
    ok: bool,
    /// Reduced gradient of every force (k) and the size of its terms.
    grad: Vec<f64>,
    g_scale: Vec<f64>,
    /// Sign rows the point violates.
    violated: Vec<usize>,
}

/// The polished primal point (`n_var`, epigraph variables tight), or `None` when the active set
/// of clarabel's `(x, s, z)` does not lead to a point that meets the optimality conditions.
pub(crate) fn polish(l: &Layout, v: &Values, x: &[f64], s: &[f64], z: &[f64]) -> Option<Vec<f64>> {
    let (k, nr) = (l.k, l.reserves.len());
    let w = cubic_weights(l, v, x, s, z)?;
    let mut act = guess_active_set(l, s, z);
    let mut u: Vec<f64> = x[..k].iter().map(|v| v.clamp(0.0, 1.0)).collect();
    let mut res: Vec<f64> = x[k..k + nr].to_vec();
    for _pass in 0..3 {
        for (ui, f) in u.iter_mut().zip(&act.fixed) {
            if let Some(b) = f {
                *ui = b.value();
            }
        }
        let mult = newton(l, v, &w, &act, &mut u, &mut res)?;
        let verdict = check_optimality(l, v, &w, &act, &u, &res, &mult);
        if verdict.ok && u.iter().chain(&res).all(|v| v.is_finite()) {
            let kappa = v.cube_scale;
            let mut out = x.to_vec();
            for i in 0..k {
                // exact zeros as +0, as the dense polish writes them
                out[i] = u[i] + 0.0;
                out[l.cube_index(i)] = u[i] * u[i] * u[i] / (kappa * kappa);
            }
            out[k..k + nr].copy_from_slice(&res);
            return Some(out);
        }
        correct_active_set(l, &mut act, &mut u, &mult, verdict);
    }
    None
}

/// The weights `w_i = q_{s_i}/κ²` (k) of the cubic terms, or `None` where the polish does not
/// apply: no power cones, a stress row, shapes that do not match the layout, weights or reserve
/// curvatures not positive, a joint cone clarabel found active (on its surface or apex).
fn cubic_weights(l: &Layout, v: &Values, x: &[f64], s: &[f64], z: &[f64]) -> Option<Vec<f64>> {
    let (k, nr) = (l.k, l.reserves.len());
    if !l.cubes || l.stress.is_some() || x.len() != l.n_var() || s.len() != l.n_rows() || z.len() != s.len() {
        return None;
    }
    let kappa = v.cube_scale;
    let w: Vec<f64> = (0..k).map(|i| v.q[l.cube_index(i)] / (kappa * kappa)).collect();
    if !w.iter().all(|w| w.is_finite() && *w > 0.0) || !(0..nr).all(|r| v.p_diag[k + r] > 0.0) {
        return None;
    }
    if l.cone {
        let r = l.row_cone(0);
        let (sl, zl) = (s[r + 1].hypot(s[r + 2]), z[r + 1].hypot(z[r + 2]));
        // on the surface or at the apex the cone is active: not polished here
        if !(z[r] <= s[r] - sl) || zl > z[r] {
            return None;
        }
    }
    Some(w)
}

/// clarabel's active set: a row is active where its slack is below its multiplier.
fn guess_active_set(l: &Layout, s: &[f64], z: &[f64]) -> ActiveSet {
    let active = |r: usize| s[r] < z[r];
    let fixed = (0..l.k)
        .map(|i| {
            if active(l.row_lower(i)) {
                Some(Bound::Lower)
            } else if active(l.row_upper(i)) {
                Some(Bound::Upper)
            } else {
                None
            }
        })
        .collect();
    let signs = (0..l.n_sign).filter(|&sg| active(l.row_sign(sg))).collect();
    ActiveSet { fixed, signs }
}

/// Newton's method on the stationarity of the active set's program from `(u, res)` (scaled
/// forces k, reserves), which it moves; the multipliers of the equalities and the active sign
/// rows, or `None` when a system is singular or the steps do not converge.
fn newton(l: &Layout, v: &Values, w: &[f64], act: &ActiveSet, u: &mut [f64], res: &mut [f64]) -> Option<Vec<f64>> {
    let (k, nr, neq) = (l.k, l.reserves.len(), l.n_eq);
    let (fixed, signs) = (&act.fixed, &act.signs);
    let free: Vec<usize> = (0..k).filter(|&i| fixed[i].is_none()).collect();
    let (nf, na) = (free.len(), signs.len());
    let nv = nf + nr;
    let n = nv + neq + na;
    // the active rows as (coefficients on the free forces, on the reserves, right-hand side)
    let row = |j: usize, u: &[f64]| -> (Vec<f64>, Vec<f64>, f64) {
        let (a, rhs, reserve): (&[f64], f64, bool) = if j < neq {
            (&v.eq[j * k..(j + 1) * k], v.eq_rhs[j], true)
        } else {
            let sg = signs[j - neq];
            (&v.sign[sg * k..(sg + 1) * k], v.sign_rhs[sg], false)
        };
        let fixed_part: f64 = (0..k).filter(|&i| fixed[i].is_some()).map(|i| a[i] * u[i]).sum();
        let on_reserves =
            (0..nr).map(|r| if reserve && l.reserves[r] == j { v.reserve_coef[r] } else { 0.0 }).collect();
        (free.iter().map(|&i| a[i]).collect(), on_reserves, rhs - fixed_part)
    };
    let rows: Vec<_> = (0..neq + na).map(|j| row(j, u)).collect();
    let mut mult = vec![0.0; neq + na];
    let (mut m, mut perm, mut t) = (vec![0.0; n * n], vec![0; n], vec![0.0; n]);
    for _ in 0..NEWTON_STEPS {
        // [H Aᵀ; A 0] (Δ, λ) = (−∇f, b − A y): the multipliers come out whole, not as steps
        m.fill(0.0);
        for (a, &i) in free.iter().enumerate() {
            m[a * n + a] = 6.0 * w[i] * u[i];
            t[a] = -3.0 * w[i] * u[i] * u[i];
        }
        for r in 0..nr {
            let a = nf + r;
            m[a * n + a] = v.p_diag[k + r];
            t[a] = -v.p_diag[k + r] * res[r];
        }
        for (j, (af, ar, rhs)) in rows.iter().enumerate() {
            let c = nv + j;
            let mut ay = 0.0;
            for (a, &coef) in af.iter().chain(ar).enumerate() {
                m[c * n + a] = coef;
                m[a * n + c] = coef;
                ay += coef * if a < nf { u[free[a]] } else { res[a - nf] };
            }
            t[c] = rhs - ay;
        }
        if !lu_in_place(&mut m, n, &mut perm) {
            return None;
        }
        let b = t.clone();
        for (ti, &p) in t.iter_mut().zip(&perm) {
            *ti = b[p];
        }
        lu_solve(&m, n, &mut t);
        if !t.iter().all(|v| v.is_finite()) {
            return None;
        }
        let mut step = 0.0f64;
        for (a, &i) in free.iter().enumerate() {
            u[i] += t[a];
            step = step.max(t[a].abs());
        }
        for r in 0..nr {
            res[r] += t[nf + r];
            step = step.max(t[nf + r].abs());
        }
        mult.copy_from_slice(&t[nv..]);
        let size = u.iter().chain(res.iter()).fold(1e-300f64, |m, v| m.max(v.abs()));
        if step <= 4.0 * f64::EPSILON * size {
            return Some(mult);
        }
    }
    None
}

/// Every optimality condition at `(u, res)` with the multipliers `mult` to [`TOL`]:
/// stationarity (a free force's reduced gradient vanishes, a fixed one's has its bound's sign),
/// the reserves' stationarity, every row (equalities, sign rows, the cone strictly inside), the
/// active sign rows' multipliers not negative.
fn check_optimality(
    l: &Layout,
    v: &Values,
    w: &[f64],
    act: &ActiveSet,
    u: &[f64],
    res: &[f64],
    mult: &[f64],
) -> Verdict {
    let (k, nr, neq, ns) = (l.k, l.reserves.len(), l.n_eq, l.n_sign);
    let (fixed, signs) = (&act.fixed, &act.signs);
    let na = signs.len();
    // the reduced gradient of every force: zero for a free one, the bound's multiplier else
    let mut grad: Vec<f64> = (0..k).map(|i| 3.0 * w[i] * u[i] * u[i]).collect();
    let mut g_scale: Vec<f64> = grad.clone();
    for j in 0..neq + na {
        let a = if j < neq { &v.eq[j * k..(j + 1) * k] } else { &v.sign[signs[j - neq] * k..][..k] };
        for i in 0..k {
            grad[i] += mult[j] * a[i];
            g_scale[i] += (mult[j] * a[i]).abs();
        }
    }
    let mut ok = true;
    for i in 0..k {
        let tol = TOL * (1.0 + g_scale[i]);
        ok &= match fixed[i] {
            None => grad[i].abs() <= tol && u[i] >= 0.0 && u[i] <= 1.0,
            Some(Bound::Lower) => grad[i] >= -tol,
            Some(Bound::Upper) => grad[i] <= tol,
        };
    }
    for r in 0..nr {
        let j = l.reserves[r];
        let g = v.p_diag[k + r] * res[r] + mult[j] * v.reserve_coef[r];
        ok &= g.abs() <= TOL * (1.0 + (v.p_diag[k + r] * res[r]).abs());
    }
    // every row: equalities and active sign rows hold, inactive sign rows and the cone too
    let lhs =
        |a: &[f64]| -> (f64, f64) { (0..k).fold((0.0, 0.0), |(s, m), i| (s + a[i] * u[i], m + (a[i] * u[i]).abs())) };
    for j in 0..neq {
        let (mut ax, mut scale) = lhs(&v.eq[j * k..(j + 1) * k]);
        for r in (0..nr).filter(|&r| l.reserves[r] == j) {
            ax += v.reserve_coef[r] * res[r];
            scale += (v.reserve_coef[r] * res[r]).abs();
        }
        ok &= (ax - v.eq_rhs[j]).abs() <= TOL * (1.0 + scale + v.eq_rhs[j].abs());
    }
    let mut violated = Vec::new();
    for sg in 0..ns {
        let (ax, scale) = lhs(&v.sign[sg * k..(sg + 1) * k]);
        if ax - v.sign_rhs[sg] > TOL * (1.0 + scale + v.sign_rhs[sg].abs()) {
            violated.push(sg);
        }
    }
    ok &= violated.is_empty();
    ok &= mult[neq..].iter().all(|&mu| mu >= -TOL);
    if l.cone {
        let sc: Vec<f64> = (0..3).map(|r| v.cone_rhs[r] - lhs(&v.cone[r * k..(r + 1) * k]).0).collect();
        ok &= sc[0] > sc[1].hypot(sc[2]);
    }
    Verdict { ok, grad, g_scale, violated }
}

/// A primal-dual active-set step: free the bounds and rows whose multiplier came out negative,
/// fix the forces outside their bounds, add the violated rows.
fn correct_active_set(l: &Layout, act: &mut ActiveSet, u: &mut [f64], mult: &[f64], verdict: Verdict) {
    let Verdict { grad, g_scale, violated, .. } = verdict;
    for i in 0..l.k {
        let tol = TOL * (1.0 + g_scale[i]);
        act.fixed[i] = match act.fixed[i] {
            Some(Bound::Lower) if grad[i] < -tol => None,
            Some(Bound::Upper) if grad[i] > tol => None,
            None if u[i] < 0.0 => Some(Bound::Lower),
            None if u[i] > 1.0 => Some(Bound::Upper),
            other => other,
        };
        if act.fixed[i].is_none() && u[i] <= 0.0 {
            // a force freed at zero has no curvature: start it off its bound
            u[i] = 1e-3;
        }
    }
    let kept: Vec<usize> =
        act.signs.iter().zip(&mult[l.n_eq..]).filter(|&(_, &mu)| mu >= -TOL).map(|(&sg, _)| sg).collect();
    act.signs = kept;
    for sg in violated {
        if !act.signs.contains(&sg) {
            act.signs.push(sg);
        }
    }
    act.signs.sort_unstable();
}
