//! IPOPT through the binding on Hock & Schittkowski's problem 71 (IPOPT's own C example): the
//! known optimum f* = 17.0140171 (IPOPT's example prints 1.7014017140224134e+01) at x* = (1, 4.743, 3.82115, 1.37941), with the exact
//! Hessian and with the limited-memory approximation; a warm start from a solution's point and
//! multipliers continues it (under user scaling too, starting where the run stopped), and a
//! refused one gives its multipliers back; a panic in a callback comes back as an error.

use mollier_ipopt::{Error, Multipliers, Nlp, Scaling, Value, available, solve, solve_from};

/// Whether to run: IPOPT present, or a failure under CI=true (where `tools/install-ipopt` ran).
fn ipopt_here(test: &str) -> bool {
    match available() {
        Ok(()) => true,
        Err(e) if std::env::var("CI").as_deref() == Ok("true") => panic!("{test}: {e}"),
        Err(e) => {
            println!("SKIPPED: {test}: {e}");
            false
        }
    }
}

struct Hs071 {
    exact_hessian: bool,
    panic_in_gradient: bool,
    scaling: Option<Scaling>,
}

impl Nlp for Hs071 {
    fn n(&self) -> usize {
        4
    }
    fn m(&self) -> usize {
        2
    }
    fn bounds(&self, x_l: &mut [f64], x_u: &mut [f64], g_l: &mut [f64], g_u: &mut [f64]) {
        x_l.fill(1.0);
        x_u.fill(5.0);
        g_l.copy_from_slice(&[25.0, 40.0]);
        g_u.copy_from_slice(&[2e19, 40.0]);
    }
    fn objective(&mut self, x: &[f64]) -> Option<f64> {
        Some(x[0] * x[3] * (x[0] + x[1] + x[2]) + x[2])
    }
    fn gradient(&mut self, x: &[f64], g: &mut [f64]) -> bool {
        assert!(!self.panic_in_gradient, "planted");
        g[0] = x[0] * x[3] + x[3] * (x[0] + x[1] + x[2]);
        g[1] = x[0] * x[3];
        g[2] = x[0] * x[3] + 1.0;
        g[3] = x[0] * (x[0] + x[1] + x[2]);
        true
    }
    fn constraints(&mut self, x: &[f64], g: &mut [f64]) -> bool {
        g[0] = x[0] * x[1] * x[2] * x[3];
        g[1] = x.iter().map(|v| v * v).sum();
        true
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        (0..2).flat_map(|i| (0..4).map(move |j| (i, j))).collect()
    }
    fn jacobian(&mut self, x: &[f64], v: &mut [f64]) -> bool {
        v[..4].copy_from_slice(&[x[1] * x[2] * x[3], x[0] * x[2] * x[3], x[0] * x[1] * x[3], x[0] * x[1] * x[2]]);
        for j in 0..4 {
            v[4 + j] = 2.0 * x[j];
        }
        true
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.exact_hessian.then(|| (0..4).flat_map(|i| (0..=i).map(move |j| (i, j))).collect())
    }
    fn hessian(&mut self, x: &[f64], s: f64, l: &[f64], v: &mut [f64]) -> bool {
        // lower triangle row by row: (0,0) (1,0) (1,1) (2,0) (2,1) (2,2) (3,0) ..
        let f = [2.0 * x[3], x[3], 0.0, x[3], 0.0, 0.0, 2.0 * x[0] + x[1] + x[2], x[0], x[0], 0.0];
        let g0 = [0.0, x[2] * x[3], 0.0, x[1] * x[3], x[0] * x[3], 0.0, x[1] * x[2], x[0] * x[2], x[0] * x[1], 0.0];
        let g1 = [2.0, 0.0, 2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0];
        for k in 0..10 {
            v[k] = s * f[k] + l[0] * g0[k] + l[1] * g1[k];
        }
        true
    }
    fn scaling(&self) -> Option<Scaling> {
        self.scaling.clone()
    }
}

const X_STAR: [f64; 4] = [1.0, 4.742_999_64, 3.821_149_98, 1.379_408_29];

#[test]
fn hs071_reaches_the_known_optimum_with_the_exact_hessian_and_without() {
    if !ipopt_here("hs071") {
        return;
    }
    for exact in [true, false] {
        let mut p = Hs071 { exact_hessian: exact, panic_in_gradient: false, scaling: None };
        let s = solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &[("tol", Value::Num(1e-9))]).expect("solves");
        assert!(s.converged(), "{}", s.status_name());
        assert!((s.objective - 17.014_017_140_2).abs() < 1e-7, "exact Hessian {exact}: f = {}", s.objective);
        for (a, b) in s.x.iter().zip(X_STAR) {
            assert!((a - b).abs() < 1e-6, "exact Hessian {exact}: x = {:?}", s.x);
        }
        assert!((s.g[1] - 40.0).abs() < 1e-8);
        assert!(!s.iterations.is_empty() && s.iterations[0].iter == 0);
        // the exact Hessian converges quadratically: IPOPT's example takes 8 iterations
        if exact {
            assert!(s.iterations.len() <= 12, "{} iterations", s.iterations.len());
        }
    }
}

#[test]
fn a_warm_start_from_a_solution_and_its_multipliers_stops_there() {
    if !ipopt_here("hs071 warm start") {
        return;
    }
    let mut p = Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: None };
    let tol = [("tol", Value::Num(1e-9))];
    let cold = solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &tol).expect("solves");
    assert!(cold.converged(), "{}", cold.status_name());
    // x₁ = 1 sits on its lower bound: its multiplier carries the active bound (IPOPT's example
    // prints z_L[0] = 1.087871)
    assert!((cold.z_l[0] - 1.087_871).abs() < 1e-5 && cold.z_u.iter().all(|z| z.abs() < 1e-6), "{:?}", cold.z_l);
    let warm = Multipliers { lambda: cold.lambda.clone(), z_l: cold.z_l.clone(), z_u: cold.z_u.clone() };
    let options = [
        ("tol", Value::Num(1e-9)),
        ("mu_init", Value::Num(1e-11)),
        ("warm_start_bound_push", Value::Num(1e-12)),
        ("warm_start_mult_bound_push", Value::Num(1e-12)),
    ];
    let again = solve_from(&mut p, &cold.x, Some(&warm), &options).expect("solves");
    assert!(again.converged(), "{}", again.status_name());
    assert!((again.objective - cold.objective).abs() < 1e-9, "f = {} then {}", cold.objective, again.objective);
    // measured: one step (rows 0 and 1 of the table); 7 rows with the multipliers at 0
    assert!(again.iterations.len() <= 2, "{} iterations from the solution", again.iterations.len());
    // the same point with the multipliers left at 0 (IPOPT's estimates from its own start rule)
    // is not a solution to IPOPT: it takes more iterations
    let zero = Multipliers { lambda: vec![0.0; 2], z_l: vec![0.0; 4], z_u: vec![0.0; 4] };
    let blind = solve_from(&mut p, &cold.x, Some(&zero), &options).expect("solves");
    eprintln!(
        "from the solution: {} iterations with its multipliers, {} without",
        again.iterations.len(),
        blind.iterations.len()
    );
    assert!(blind.iterations.len() > 2, "{} iterations without the multipliers", blind.iterations.len());
    // multipliers of the wrong number are refused before IPOPT runs
    let short = Multipliers { lambda: vec![0.0; 1], ..warm };
    assert!(matches!(solve_from(&mut p, &cold.x, Some(&short), &[]), Err(Error::Invalid(_))));
}

/// A warm start from a solution of the user-scaled problem, with its multipliers: IPOPT's
/// iteration 0 is where the first run stopped (its scaled dual infeasibility), and it stops at once.
#[test]
fn a_warm_start_with_user_scaling_starts_where_the_run_stopped() {
    if !ipopt_here("hs071 scaled warm start") {
        return;
    }
    // x₁'s factor is not 1: its bound's multiplier (1.088) is scaled
    let projected = restarted(0.1);
    // from the point projected onto x₁'s bound (1e-8 from the iterate: `bound_relax_factor`)
    // the start is further (measured: 1.4e-8)
    assert!(projected > 1e-10, "from x: inf_du {projected}");
    // the objective's factor 1e6 makes the scaled multipliers 5e6 to 1.4e7, beyond IPOPT's
    // `warm_start_mult_init_max` (1e6), which the binding lifts
    restarted(1e6);
}

/// HS071 under user scaling with the objective's factor `d_f`, solved, then restarted from its
/// iterate and multipliers, checked; the start's dual infeasibility from the projected point
/// `x` instead.
fn restarted(d_f: f64) -> f64 {
    let scaling = Scaling { objective: d_f, x: vec![0.2, 0.2, 0.25, 0.7], g: vec![0.04, 0.025] };
    let mut p = Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: Some(scaling) };
    let cold = solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &[("tol", Value::Num(1e-9))]).expect("solves");
    assert!(cold.converged(), "{}", cold.status_name());
    let last = *cold.iterations.last().expect("a table");
    let warm = Multipliers { lambda: cold.lambda.clone(), z_l: cold.z_l.clone(), z_u: cold.z_u.clone() };
    let options = [
        ("tol", Value::Num(1e-9)),
        ("mu_init", Value::Num(last.mu)),
        ("warm_start_bound_push", Value::Num(1e-20)),
        ("warm_start_mult_bound_push", Value::Num(1e-20)),
        ("warm_start_slack_bound_push", Value::Num(1e-20)),
    ];
    let again = solve_from(&mut p, &cold.iterate, Some(&warm), &options).expect("solves");
    let first = again.iterations[0];
    eprintln!(
        "d_f {d_f}: stopped at inf_du {}, restarted at {} ({} rows)",
        last.inf_du,
        first.inf_du,
        again.iterations.len()
    );
    assert!(again.converged(), "{}", again.status_name());
    assert!((again.objective - cold.objective).abs() < 1e-9, "f = {} then {}", cold.objective, again.objective);
    // measured: 2.42e-15 against 2.53e-15 (d_f 0.1), 6.29e-7 against 6.45e-7 (1e6), and IPOPT
    // stops at iteration 0
    assert!(first.inf_du <= 10.0 * last.inf_du.max(1e-12), "inf_du {} against {}", first.inf_du, last.inf_du);
    assert!(first.inf_pr <= 10.0 * last.inf_pr.max(1e-12), "inf_pr {} against {}", first.inf_pr, last.inf_pr);
    assert!(again.iterations.len() <= 2, "{} iterations from the solution", again.iterations.len());
    let projected = solve_from(&mut p, &cold.x, Some(&warm), &options).expect("solves");
    projected.iterations[0].inf_du
}

#[test]
fn user_scaling_reaches_ipopt_and_keeps_the_optimum() {
    if !ipopt_here("hs071 scaling") {
        return;
    }
    let scaled = |objective: f64| Scaling { objective, x: vec![1.0, 0.2, 0.25, 0.7], g: vec![0.04, 0.025] };
    let run = |scaling: Scaling| {
        let mut p = Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: Some(scaling) };
        solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &[("tol", Value::Num(1e-9))]).expect("solves")
    };
    // each quantity by its size: the same optimum
    let s = run(scaled(0.1));
    assert!(s.converged(), "{}", s.status_name());
    assert!((s.objective - 17.014_017_140_2).abs() < 1e-7, "f = {}", s.objective);
    for (a, b) in s.x.iter().zip(X_STAR) {
        assert!((a - b).abs() < 1e-6, "x = {:?}", s.x);
    }
    // an objective scaled to nothing: IPOPT's stopping tests hardly see it, and it stops at a
    // feasible point above the optimum (17.014035, measured), which it would not if the factors
    // did not reach it (then within 1e-7, as above)
    let s = run(scaled(1e-12));
    assert!(s.objective > 17.014_017_140_2 + 1e-6, "f = {} ({})", s.objective, s.status_name());
    assert!((s.g[1] - 40.0).abs() < 1e-6 && s.g[0] >= 25.0 - 1e-6, "g = {:?}", s.g);
    // factors of the wrong number, or not positive, are refused before IPOPT runs
    for bad in [
        Scaling { objective: 1.0, x: vec![1.0; 3], g: vec![1.0; 2] },
        Scaling { objective: 1.0, x: vec![1.0; 4], g: vec![1.0, 0.0] },
        Scaling { objective: f64::NAN, x: vec![1.0; 4], g: vec![1.0; 2] },
    ] {
        let mut p = Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: Some(bad.clone()) };
        assert!(matches!(solve(&mut p, &[1.0; 4], &[]), Err(Error::Invalid(_))), "{bad:?}");
    }
}

#[test]
fn a_panic_in_a_callback_is_an_error_not_an_abort() {
    if !ipopt_here("hs071 panic") {
        return;
    }
    let mut p = Hs071 { exact_hessian: true, panic_in_gradient: true, scaling: None };
    match solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &[]) {
        Err(Error::Panicked(m)) => assert!(m.contains("planted"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_options_are_refused() {
    if !ipopt_here("hs071 option") {
        return;
    }
    let mut p = Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: None };
    assert!(matches!(solve(&mut p, &[1.0; 4], &[("no_such_option", Value::Int(1))]), Err(Error::Option(_))));
}

/// HS071 whose callbacks note when they run (and sleep, so that a solve spans some milliseconds).
struct Timed {
    inner: Hs071,
    seen: Vec<std::time::Instant>,
}

impl Nlp for Timed {
    fn n(&self) -> usize {
        self.inner.n()
    }
    fn m(&self) -> usize {
        self.inner.m()
    }
    fn bounds(&self, x_l: &mut [f64], x_u: &mut [f64], g_l: &mut [f64], g_u: &mut [f64]) {
        self.inner.bounds(x_l, x_u, g_l, g_u)
    }
    fn objective(&mut self, x: &[f64]) -> Option<f64> {
        self.seen.push(std::time::Instant::now());
        std::thread::sleep(std::time::Duration::from_millis(2));
        let f = self.inner.objective(x);
        self.seen.push(std::time::Instant::now());
        f
    }
    fn gradient(&mut self, x: &[f64], g: &mut [f64]) -> bool {
        self.seen.push(std::time::Instant::now());
        self.inner.gradient(x, g)
    }
    fn constraints(&mut self, x: &[f64], g: &mut [f64]) -> bool {
        self.seen.push(std::time::Instant::now());
        self.inner.constraints(x, g)
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        self.inner.jacobian_structure()
    }
    fn jacobian(&mut self, x: &[f64], v: &mut [f64]) -> bool {
        self.seen.push(std::time::Instant::now());
        self.inner.jacobian(x, v)
    }
    fn hessian_structure(&self) -> Option<Vec<(usize, usize)>> {
        self.inner.hessian_structure()
    }
    fn hessian(&mut self, x: &[f64], s: f64, l: &[f64], v: &mut [f64]) -> bool {
        self.seen.push(std::time::Instant::now());
        self.inner.hessian(x, s, l, v)
    }
}

/// Two threads start a solve at the same moment; `solve`'s lock must run them one after the other
/// (IPOPT 3.11's MUMPS is not reentrant): every callback of one solve comes before every callback
/// of the other.
#[test]
fn solves_on_two_threads_run_one_after_the_other() {
    if !ipopt_here("hs071 two threads") {
        return;
    }
    let start = std::sync::Barrier::new(2);
    let spans: Vec<(std::time::Instant, std::time::Instant)> = std::thread::scope(|scope| {
        let threads: Vec<_> = (0..2)
            .map(|_| {
                scope.spawn(|| {
                    let mut p = Timed {
                        inner: Hs071 { exact_hessian: true, panic_in_gradient: false, scaling: None },
                        seen: Vec::new(),
                    };
                    start.wait();
                    let s = solve(&mut p, &[1.0, 5.0, 5.0, 1.0], &[]).expect("solves");
                    assert!(s.converged(), "{}", s.status_name());
                    (*p.seen.iter().min().unwrap(), *p.seen.iter().max().unwrap())
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().expect("the thread's solve")).collect()
    });
    let (a, b) = (spans[0], spans[1]);
    let t0 = a.0.min(b.0);
    let ms =
        |s: (std::time::Instant, std::time::Instant)| ((s.0 - t0).as_secs_f64() * 1e3, (s.1 - t0).as_secs_f64() * 1e3);
    assert!(a.1 < b.0 || b.1 < a.0, "the solves overlapped: {:?} ms and {:?} ms", ms(a), ms(b));
}

/// One variable, two equality constraints: IPOPT refuses it before it solves.
struct TooFew;

impl Nlp for TooFew {
    fn n(&self) -> usize {
        1
    }
    fn m(&self) -> usize {
        2
    }
    fn bounds(&self, x_l: &mut [f64], x_u: &mut [f64], g_l: &mut [f64], g_u: &mut [f64]) {
        (x_l[0], x_u[0]) = (0.0, 2e19);
        g_l.copy_from_slice(&[1.0, 2.0]);
        g_u.copy_from_slice(&[1.0, 2.0]);
    }
    fn objective(&mut self, x: &[f64]) -> Option<f64> {
        Some(x[0])
    }
    fn gradient(&mut self, _: &[f64], g: &mut [f64]) -> bool {
        g[0] = 1.0;
        true
    }
    fn constraints(&mut self, x: &[f64], g: &mut [f64]) -> bool {
        g.copy_from_slice(&[x[0], x[0] * x[0]]);
        true
    }
    fn jacobian_structure(&self) -> Vec<(usize, usize)> {
        vec![(0, 0), (1, 0)]
    }
    fn jacobian(&mut self, x: &[f64], v: &mut [f64]) -> bool {
        v.copy_from_slice(&[1.0, 2.0 * x[0]]);
        true
    }
    fn scaling(&self) -> Option<Scaling> {
        Some(Scaling { objective: 1.0, x: vec![2.0], g: vec![1.0, 1.0] })
    }
}

/// A warm start IPOPT refuses before solving gives back the multipliers it was given, not the
/// copies scaled for IPOPT.
#[test]
fn a_refused_warm_start_gives_back_its_multipliers() {
    if !ipopt_here("refused warm start") {
        return;
    }
    let warm = Multipliers { lambda: vec![0.5, 0.5], z_l: vec![1.0], z_u: vec![0.0] };
    let s = solve_from(&mut TooFew, &[1.0], Some(&warm), &[]).expect("runs");
    assert_eq!(s.status_name(), "Not_Enough_Degrees_Of_Freedom");
    assert_eq!((s.z_l.as_slice(), s.z_u.as_slice()), (&[1.0][..], &[0.0][..]));
}
