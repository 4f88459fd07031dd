//! Tests of the geodesic over an ellipsoid (`super`).

use super::*;
use mollier_core::conformance::Rng;
use num_dual::HyperDual64;

fn thorax() -> Ellipsoid {
    Ellipsoid::new([0.147, 0.2079, 0.0944])
}

/// Anchors on opposite sides of the thorax, so that the path wraps.
fn anchors(rng: &mut Rng) -> (Vec3, Vec3) {
    let e = thorax();
    loop {
        let a = rng.unit_vector().map(|v| v * 0.3);
        let b = rng.unit_vector().map(|v| v * 0.3);
        let (p, s) = ([a[0] * 0.8, a[1], a[2] * 0.7], [b[0] * 0.8, b[1], b[2] * 0.7]);
        if e.level(&p) > 1.3 && e.level(&s) > 1.3 && wraps(&e, &p, &s).unwrap() {
            return (p, s);
        }
    }
}

/// The closed-form start derivatives against dual numbers, on random anchors, reference
/// directions and horizon angles.
#[test]
fn start_derivatives_match_dual_numbers() {
    let e = thorax();
    let mut rng = Rng::new(23);
    for _ in 0..50 {
        let (p, _) = anchors(&mut rng);
        let w = rng.unit_vector();
        let psi = 7.0 * rng.symmetric();
        let (t0, v0, dpsi0, dp0) = start_derivs_dual(&e, &p, &w, psi);
        let (t1, v1, dpsi1, dp1) = start_derivs(&e, &p, &w, psi);
        for i in 0..3 {
            assert!((t0[i] - t1[i]).abs() < 1e-15 && (v0[i] - v1[i]).abs() < 1e-15);
        }
        for i in 0..6 {
            assert!((dpsi0[i] - dpsi1[i]).abs() < 1e-13, "ψ {i}: {} vs {}", dpsi0[i], dpsi1[i]);
            for k in 0..3 {
                assert!((dp0[i][k] - dp1[i][k]).abs() < 1e-12, "p {i} {k}: {} vs {}", dp0[i][k], dp1[i][k]);
            }
        }
    }
}

fn shots() -> u64 {
    crate::geodesic::shots_on_this_thread()
}

/// Largest differences of length (relative), gradient and Hessian (relative to its largest
/// entry) between two evaluations.
fn gap(a: &SpanEval, b: &SpanEval) -> (f64, f64, f64) {
    let dg = (0..6).map(|i| (a.grad[i] - b.grad[i]).abs()).fold(0.0, f64::max);
    let hmax = b.hess.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    let dh = (0..36).map(|i| (a.hess[i] - b.hess[i]).abs()).fold(0.0, f64::max) / hmax.max(1e-300);
    ((a.length - b.length).abs() / b.length, dg, dh)
}

/// Along a motion of both anchors in steps of 0.1 to 1 mm, forwards and back, the results
/// equal a cold solve's to the rounding floor, and at an unchanged configuration there is no
/// shot at all and the same numbers. Shots: the first move (first-order prediction) at most
/// three, as before; after it, with steps up to 0.5 mm, one for the length and gradient
/// (two where the wrap bends the prediction's second-order term off, in at most a fifth of
/// the moves) and two with the Hessian; 1 mm steps with the anchors this close to the
/// thorax (1.15 times its size) may take one more.
#[test]
fn one_shot_per_move_at_full_accuracy() {
    let e = thorax();
    let mut rng = Rng::new(11);
    let (mut worst_l, mut worst_g, mut worst_h) = (0.0f64, 0.0f64, 0.0f64);
    let mut gradient_moves = Vec::new();
    for case in 0..12 {
        let (p0, s0) = anchors(&mut rng);
        let (up, us) = (rng.unit_vector(), rng.unit_vector());
        let step = [1e-4, 3e-4, 5e-4, 1e-3][case % 4];
        let mut counts = Vec::new();
        let at = |k: f64| {
            let c = k * step;
            ([0, 1, 2].map(|i| p0[i] + c * up[i]), [0, 1, 2].map(|i| s0[i] + c * us[i]))
        };
        let mut warm = Warm::default();
        span(&e, &p0, &s0, &mut warm, true).unwrap();
        // forwards four steps, back two, forwards again
        for (j, k) in [1.0, 2.0, 3.0, 4.0, 3.0, 2.0, 3.0].into_iter().enumerate() {
            let (p, s) = at(k);
            let want_hess = j % 2 == 1;
            let before = shots();
            let (ev, _) = span(&e, &p, &s, &mut warm, want_hess).unwrap();
            let used = shots() - before;
            counts.push(used);
            let most = if j == 0 || step > 5e-4 { 3 } else { 2 };
            if j > 0 && step <= 5e-4 && !want_hess {
                gradient_moves.push(used);
            }
            assert!(used <= most, "case {case}, move {j} ({step} m): {used} shots");
            let (cold, _) = span(&e, &p, &s, &mut Warm::default(), want_hess).unwrap();
            let (dl, dg, dh) = gap(&ev, &cold);
            worst_l = worst_l.max(dl);
            worst_g = worst_g.max(dg);
            if want_hess {
                worst_h = worst_h.max(dh);
            }
            // unchanged: no shot, the same numbers
            let before = shots();
            let (again, _) = span(&e, &p, &s, &mut warm, want_hess).unwrap();
            assert_eq!(shots(), before, "case {case}, move {j}: a shot at an unchanged configuration");
            assert!(again.length == ev.length && again.grad == ev.grad && again.hess == ev.hess);
        }
        println!("steps of {step} m: shots per move {counts:?} (odd moves with the Hessian)");
    }
    println!("largest gaps to a cold solve: length {worst_l:e}, gradient {worst_g:e}, Hessian {worst_h:e}");
    assert!(worst_l < 1e-13 && worst_g < 1e-12 && worst_h < 1e-10, "{worst_l:e} {worst_g:e} {worst_h:e}");
    let one = gradient_moves.iter().filter(|&&n| n == 1).count();
    assert!(5 * one >= 4 * gradient_moves.len(), "one shot in {one} of {} moves", gradient_moves.len());
}

/// The Newton step applied without a shot ([`corrected`]) from a shot off the solution by
/// `size` (relative, random directions, random wraps, some hugging the thorax): the length
/// and gradient it gives
/// against the solution's. The remainder grows as the square of the step; up to
/// [`LINEAR_VALUES`] it is at the rounding floor.
#[test]
fn the_unchecked_newton_step_is_exact_to_second_order() {
    let e = thorax();
    let scale = 0.2079;
    let mut rng = Rng::new(17);
    let value = |p: &Vec3, t: &Trial| (length_of(p, t), t.t_pt, t.resp.t_out);
    let mut gaps = Vec::new();
    for size in [1e-8, 3e-8, 1e-7, 3e-7, 1e-6, 1e-5] {
        let (mut wl, mut wg) = (0.0f64, 0.0f64);
        for k in 0..60 {
            // two in three as elsewhere, one in three hugging the surface
            let (p, s) = if k % 3 == 2 { hugging(&mut rng) } else { anchors(&mut rng) };
            let phi = image_wrap_angle(&e, &p, &s).unwrap();
            let (t, w) = solve(&e, &p, &s, phi, &Warm::default(), 0.0).unwrap();
            // the solution past the rounding floor of its residual: one more (tiny) step
            let d = mat_vec3(&inverse3(&t.jac).unwrap(), &t.r).map(|v| -v);
            let exact = corrected(&e, &p, &s, &w, &t, &d, 0.0).unwrap();
            let u = rng.unit_vector().map(|v| v * size * linear_scale(&p, &exact, scale));
            let xi = [exact.xi[0] + u[0], exact.xi[1] + scale * u[1], exact.xi[2] + scale * u[2]];
            let t = trial(&e, &p, &s, &w, xi);
            let d = mat_vec3(&inverse3(&t.jac).unwrap(), &t.r).map(|v| -v);
            let c = corrected(&e, &p, &s, &w, &t, &d, 0.0).unwrap();
            let (l0, a0, b0) = value(&p, &exact);
            let (l1, a1, b1) = value(&p, &c);
            let (d0, d1) = (sub(&p, &a0), sub(&p, &a1));
            let (e0, e1) = (d0.map(|v| v / norm(&d0)), d1.map(|v| v / norm(&d1)));
            wl = wl.max((l1 - l0).abs() / l0);
            // a direction's rounding floor is that of its segment's end over its length
            let short = norm(&d0).min(exact.xi[2]) / scale;
            let dg = (0..3).map(|i| (e0[i] - e1[i]).abs().max((b0[i] - b1[i]).abs())).fold(0.0, f64::max);
            wg = wg.max(dg * short.min(1.0));
        }
        println!("step {size:e}: length {wl:e}, gradient {wg:e} (times the shorter segment over the size)");
        if size <= LINEAR_VALUES {
            assert!(wl < 1e-13 && wg < 1e-13, "step {size:e}: length {wl:e}, gradient {wg:e}");
        }
        gaps.push(wl.max(wg));
    }
    // second order: a tenth of the step, a hundredth of the remainder (above the floor)
    let n = gaps.len();
    assert!(gaps[n - 1] > 30.0 * gaps[n - 2] && gaps[n - 2] > 3.0 * gaps[n - 3], "{gaps:?}");
}

/// Anchors 1 % to 5 % outside the thorax (in `xᵀMx`), on opposite sides.
fn hugging(rng: &mut Rng) -> (Vec3, Vec3) {
    let e = thorax();
    loop {
        let out = |u: Vec3, lev: f64| u.map(|v| v * (lev / e.level(&u)).sqrt());
        let p = out(rng.unit_vector(), 1.01 + 0.04 * rng.uniform());
        let s = out(rng.unit_vector(), 1.01 + 0.04 * rng.uniform());
        if wraps(&e, &p, &s).unwrap() {
            return (p, s);
        }
    }
}

#[test]
fn sphere_case_matches_the_closed_form() {
    let r = 0.12;
    let e = Ellipsoid::new([r, r, r]);
    let mut rng = Rng::new(21);
    for _ in 0..20 {
        let p = rng.unit_vector().map(|v| v * r * (1.2 + rng.uniform()));
        let s = rng.unit_vector().map(|v| v * r * (1.2 + rng.uniform()));
        let mut warm = Warm::default();
        let (ev, _) = span(&e, &p, &s, &mut warm, true).unwrap();
        let want = crate::span::sphere(r, &p, &s, true).unwrap();
        assert!((ev.length - want.length).abs() < 1e-13, "{} vs {}", ev.length, want.length);
        for i in 0..6 {
            assert!((ev.grad[i] - want.grad[i]).abs() < 1e-11);
        }
        if ev.wrap.is_some() {
            for i in 0..36 {
                assert!((ev.hess[i] - want.hess[i]).abs() < 1e-8 * (1.0 + want.hess[i].abs()), "{i}");
            }
        }
    }
}

/// The solution is a local minimum of length, never longer than what Newton from the affine
/// image's solution or the shape homotopy find when those are minima; and the minimum test
/// agrees with the sphere's closed form (`det Q = 0` exactly when anchors and centre are in
/// line).
#[test]
fn solutions_are_shortest_local_minima() {
    let e = thorax();
    let mut rng = Rng::new(5);
    let mut compared = 0;
    for _ in 0..60 {
        let (p, s) = anchors(&mut rng);
        let phi = image_wrap_angle(&e, &p, &s).unwrap();
        let (t, _) = solve(&e, &p, &s, phi, &Warm::default(), 0.0).unwrap();
        assert!(is_minimum(&p, &t));
        let l = length_of(&p, &t);
        let (w, xi0) = cold_guess(&e, &p, &s);
        let others = [newton(&e, &p, &s, &w, xi0, 40, 0.0), homotopy(&e, &p, &s, 0.0).map(|x| x.0)];
        for o in others.into_iter().flatten() {
            if is_minimum(&p, &o) {
                compared += 1;
                assert!(l <= length_of(&p, &o) + 1e-13, "{l} vs {}", length_of(&p, &o));
            }
        }
    }
    assert!(compared > 40, "{compared}");
    // sphere: anchors at twice the radius; as they come in line with the centre (wrap angle
    // 60°) det Q goes to zero (∝ the angle from the line); away from the line it is a strict
    // minimum
    let r = 0.1;
    let sph = Ellipsoid::new([r, r, r]);
    let p = [-2.0 * r, 0.0, 0.0];
    for (ang, strict) in [(std::f64::consts::PI - 1e-6, false), (2.8, true)] {
        let s = [-2.0 * r * ang.cos(), 2.0 * r * ang.sin(), 0.0];
        let (w, xi0) = cold_guess(&sph, &p, &s);
        let t = newton(&sph, &p, &s, &w, xi0, 40, 0.0).unwrap();
        let sh = &t.resp.shot;
        let d = norm(&sub(&p, &t.t_pt));
        let det = (sh.jr / d + sh.ja) * (sh.jr / t.xi[2] + sh.djr) - 1.0;
        if strict {
            assert!(det > 1e-2 && is_minimum(&p, &t), "{det}");
        } else {
            assert!(det.abs() < 1e-5, "{det}");
        }
    }
}

/// Just past touch-down the geodesic is tiny; length and gradient meet the straight line's.
#[test]
fn touch_down_is_smooth() {
    let e = thorax();
    let p = [0.25, 0.0, 0.0];
    // move s along z until the straight line grazes the ellipsoid; bisect on the image test
    let s_at = |z: f64| [-0.25, 0.05, z];
    let (mut lo, mut hi) = (0.0, 1.0); // wraps at lo, clear at hi
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if wraps(&e, &p, &s_at(mid)).unwrap() {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let z0 = lo;
    assert!(wraps(&e, &p, &s_at(0.0)).unwrap() && !wraps(&e, &p, &s_at(1.0)).unwrap() && z0 < 0.9);
    for dz in [1e-9, 1e-6, 1e-4] {
        let (inside, outside) = (s_at(z0 - dz), s_at(z0 + dz));
        let (a, _) = span(&e, &p, &inside, &mut Warm::default(), true).unwrap();
        let (b, _) = span(&e, &p, &outside, &mut Warm::default(), true).unwrap();
        assert!(a.wrap.is_some() && b.wrap.is_none(), "{dz}: {:?} {:?} z0 {z0}", a.wrap, b.wrap);
        // L(z) is C¹ with a jump only in L″: the two sides differ by O(dz) in value
        // (through the common slope) and O(dz) in gradient
        assert!((a.length - b.length).abs() < 2.0 * dz, "{dz}: {} {}", a.length, b.length);
        let dg = (0..6).map(|i| (a.grad[i] - b.grad[i]).abs()).fold(0.0, f64::max);
        let hmax = a.hess.iter().chain(&b.hess).fold(0.0f64, |m, v| m.max(v.abs()));
        println!("dz {dz:e}: |ΔL| {:e}, |Δ∇L| {dg:e}, |∇²L| ≤ {hmax:e}", (a.length - b.length).abs());
        // the gradient changes by at most the step times the second derivative
        assert!(dg < 2.0 * dz * hmax * 1.5 + 1e-12, "{dz}: {dg}");
        assert!(a.hess.iter().all(|v| v.is_finite()));
    }
}

#[test]
fn tangency_and_stationarity_on_a_triaxial_ellipsoid() {
    let e = thorax();
    let mut rng = Rng::new(5);
    for _ in 0..10 {
        let (p, s) = anchors(&mut rng);
        let mut warm = Warm::default();
        let (ev, _) = span(&e, &p, &s, &mut warm, false).unwrap();
        let c = ev.wrap.unwrap();
        // the straight segments lie in the tangent planes at the contact points
        let n_in = e.normal(&c.t_in);
        let n_out = e.normal(&c.t_out);
        let din = sub(&p, &c.t_in);
        let dout = sub(&s, &c.t_out);
        assert!(dot(&n_in, &din).abs() < 1e-13 * norm(&din), "{}", dot(&n_in, &din));
        assert!(dot(&n_out, &dout).abs() < 1e-12 * norm(&dout));
        assert!((e.level(&c.t_in) - 1.0).abs() < 1e-14 && (e.level(&c.t_out) - 1.0).abs() < 1e-12);
    }
}

#[test]
fn derivatives_against_differences_and_duals() {
    let e = thorax();
    let mut rng = Rng::new(7);
    for _ in 0..6 {
        let (p, s) = anchors(&mut rng);
        let mut warm = Warm::default();
        let (ev, sol) = span(&e, &p, &s, &mut warm, true).unwrap();
        let sol = sol.unwrap();
        let x = [p[0], p[1], p[2], s[0], s[1], s[2]];
        let h = 1e-6;
        for i in 0..6 {
            let (mut xp, mut xm) = (x, x);
            xp[i] += h;
            xm[i] -= h;
            let f = |x: &[f64; 6]| {
                let mut w = warm;
                span(&e, &[x[0], x[1], x[2]], &[x[3], x[4], x[5]], &mut w, false).unwrap().0
            };
            let (a, b) = (f(&xp), f(&xm));
            let fd = (a.length - b.length) / (2.0 * h);
            assert!((fd - ev.grad[i]).abs() < 1e-7, "grad {i}: {fd} vs {}", ev.grad[i]);
            for j in 0..6 {
                let fd2 = (a.grad[j] - b.grad[j]) / (2.0 * h);
                let an = ev.hess[i * 6 + j];
                assert!((fd2 - an).abs() < 1e-5 * (1.0 + an.abs()), "hess {i},{j}: {fd2} vs {an}");
            }
        }
        for i in 0..6 {
            for j in i..6 {
                let mut xh = x.map(HyperDual64::from);
                xh[i].eps1 = 1.0;
                xh[j].eps2 = 1.0;
                let (l, _) = span_generic(&e, &[xh[0], xh[1], xh[2]], &[xh[3], xh[4], xh[5]], Some(&sol));
                assert!((l.re - ev.length).abs() < 1e-13);
                assert!((l.eps1 - ev.grad[i]).abs() < 1e-10, "{} vs {}", l.eps1, ev.grad[i]);
                let an = ev.hess[i * 6 + j];
                assert!((l.eps1eps2 - an).abs() < 1e-8 * (1.0 + an.abs()), "{i},{j}: {} vs {an}", l.eps1eps2);
            }
        }
    }
}
