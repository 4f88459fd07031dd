//! The conic program of one frame ([`crate::program`]) solved: by the dense interior point
//! where it applies, else by clarabel, with a sparsity pattern fixed per study so that
//! clarabel's solver is built once and updated (`update_P/q/A/b`) for every later frame.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus};

use crate::ipm::{Dense, DenseStatus};
use crate::program::{Entry, Layout, Values};

mod cubes;

/// Outcome of one solve.
#[derive(Clone, Debug)]
pub(crate) struct Outcome {
    /// clarabel's status, or `None` when no solve could be made (see `error`).
    pub status: Option<SolverStatus>,
    /// Why no solve could be made.
    pub error: Option<String>,
    /// Primal solution (n_var); meaningful for solved statuses only.
    pub x: Vec<f64>,
    /// Interior-point iterations.
    pub iterations: u32,
    /// Solved by the dense interior point ([`Dense`]) rather than clarabel.
    pub dense: bool,
}

impl Outcome {
    pub fn solved(&self) -> bool {
        matches!(self.status, Some(SolverStatus::Solved | SolverStatus::AlmostSolved))
    }
}

/// Which solver a [`Program`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Backend {
    /// The dense interior point where it applies (no power cones), clarabel when it does not
    /// solve (an infeasible program, a stall) and for power cones.
    Auto,
    /// clarabel alone (the reference of the tests).
    #[cfg_attr(not(test), allow(dead_code))]
    Clarabel,
}

/// A program of fixed structure, its dense solver and its (reused) clarabel solver.
pub(crate) struct Program {
    pub layout: Layout,
    pub backend: Backend,
    dense: Option<Dense>,
    colptr: Vec<usize>,
    rowval: Vec<usize>,
    nz: Vec<f64>,
    b: Vec<f64>,
    solver: Option<DefaultSolver<f64>>,
}

fn settings() -> DefaultSettings<f64> {
    DefaultSettings {
        verbose: false,
        // keep the problem as given so that every later frame may update it in place
        presolve_enable: false,
        input_sparse_dropzeros: false,
        max_iter: 100,
        iterative_refinement_max_iter: 3,
        tol_gap_abs: 1e-12,
        tol_gap_rel: 1e-12,
        tol_feas: 1e-12,
        tol_ktratio: 1e-9,
        ..DefaultSettings::default()
    }
}

impl Program {
    pub fn new(layout: Layout) -> Self {
        let (colptr, rowval) = layout.pattern();
        let nnz = rowval.len();
        let m = layout.n_rows();
        let dense = Dense::new(&layout);
        Self {
            layout,
            backend: Backend::Auto,
            dense,
            colptr,
            rowval,
            nz: vec![0.0; nnz],
            b: vec![0.0; m],
            solver: None,
        }
    }

    fn fill(&mut self, v: &Values) {
        let l = &self.layout;
        let k = l.k;
        let mut p = 0;
        let nz = &mut self.nz;
        l.for_each(|_, _, e| {
            nz[p] = match e {
                Entry::Eq { j, i } => v.eq[j * k + i],
                Entry::Upper => 1.0,
                Entry::Lower => -1.0,
                Entry::Sign { s, i } => v.sign[s * k + i],
                Entry::Stress { i } => v.stress[i],
                Entry::Cone { r, i } => v.cone[r * k + i],
                Entry::Reserve { v: r } => v.reserve_coef[r],
                Entry::Epigraph | Entry::Cube => -1.0,
            };
            p += 1;
        });
        let b = &mut self.b;
        b[..l.n_eq].copy_from_slice(&v.eq_rhs);
        for i in 0..k {
            b[l.row_upper(i)] = 1.0;
            b[l.row_lower(i)] = 0.0;
        }
        for s in 0..l.n_sign {
            b[l.row_sign(s)] = v.sign_rhs[s];
        }
        if l.stress.is_some() {
            for i in 0..k {
                b[l.row_stress(i)] = v.stress_rhs;
            }
        }
        if l.cone {
            for r in 0..3 {
                b[l.row_cone(r)] = v.cone_rhs[r];
            }
        }
        if l.cubes {
            for i in 0..k {
                // (s_i, κ, u_i): the middle slack is the constant κ
                b[l.row_cube(i, 0)] = 0.0;
                b[l.row_cube(i, 1)] = v.cube_scale;
                b[l.row_cube(i, 2)] = 0.0;
            }
        }
    }

    /// Solve with the numbers `v`: update the existing solver when there is one, else build it.
    pub fn solve(&mut self, v: &Values) -> Outcome {
        let n = self.layout.n_var();
        let fail =
            |msg: String| Outcome { status: None, error: Some(msg), x: vec![f64::NAN; n], iterations: 0, dense: false };
        if !v.is_finite() {
            self.solver = None;
            return fail("the program has non-finite data".into());
        }
        let mut dense_iterations = 0;
        if let (Backend::Auto, Some(d)) = (self.backend, self.dense.as_mut()) {
            if let DenseStatus::Solved { .. } = d.solve(v) {
                return Outcome {
                    status: Some(SolverStatus::Solved),
                    error: None,
                    x: d.x().to_vec(),
                    iterations: d.iterations,
                    dense: true,
                };
            }
            dense_iterations = d.iterations;
        }
        self.fill(v);
        let updated = match self.solver.as_mut() {
            Some(s) => s
                .update_P(&v.p_diag)
                .and_then(|_| s.update_q(&v.q))
                .and_then(|_| s.update_A(&self.nz))
                .and_then(|_| s.update_b(&self.b))
                .is_ok(),
            None => false,
        };
        if !updated {
            let m = self.layout.n_rows();
            let pm = CscMatrix::new(n, n, (0..=n).collect(), (0..n).collect(), v.p_diag.clone());
            let am = CscMatrix::new(m, n, self.colptr.clone(), self.rowval.clone(), self.nz.clone());
            let cones = self.layout.cones();
            let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                DefaultSolver::new(&pm, &v.q, &am, &self.b, &cones, settings())
            }));
            match built {
                Ok(Ok(s)) => self.solver = Some(s),
                Ok(Err(e)) => return fail(format!("clarabel setup: {e}")),
                Err(_) => return fail("clarabel setup panicked".into()),
            }
        }
        let Some(solver) = self.solver.as_mut() else { return fail("no solver".into()) };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| solver.solve()));
        if ran.is_err() {
            self.solver = None;
            return fail("clarabel panicked".into());
        }
        let sol = &solver.solution;
        let mut out = Outcome {
            status: Some(sol.status),
            error: None,
            x: sol.x.clone(),
            iterations: sol.iterations + dense_iterations,
            dense: false,
        };
        if out.solved() && self.layout.cubes {
            // the power cones stop at clarabel's gap tolerance: polished to the optimality
            // conditions where its active set leads there (then verified, hence solved)
            if let Some(x) = cubes::polish(&self.layout, v, &sol.x, &sol.s, &sol.z) {
                out.x = x;
                out.status = Some(SolverStatus::Solved);
            }
        }
        if !out.solved() {
            // start the next frame from a fresh solver: nothing of a failed solve carries over
            self.solver = None;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_is_sorted_and_complete() {
        let l = Layout { k: 3, n_eq: 2, reserves: vec![1], n_sign: 1, stress: Some(true), cone: true, cubes: false };
        let (colptr, rowval) = l.pattern();
        assert_eq!(colptr.len(), l.n_var() + 1);
        // per muscle: 2 eq + 2 bounds + 1 sign + 1 stress + 3 cone; reserve: 1; t: 3
        assert_eq!(rowval.len(), 3 * 9 + 1 + 3);
        for c in 0..l.n_var() {
            let rows = &rowval[colptr[c]..colptr[c + 1]];
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "column {c}: {rows:?}");
            assert!(rows.iter().all(|&r| r < l.n_rows()));
        }
        let cones = l.cones();
        assert_eq!(cones.len(), 3);
    }

    #[test]
    fn small_qp_against_closed_form() {
        // min u0² + u1² s.t. u0 + 2 u1 = 1, 0 <= u <= 1  →  u = (1, 2)/5
        let l = Layout { k: 2, n_eq: 1, reserves: vec![], n_sign: 0, stress: None, cone: false, cubes: false };
        let mut v = Values::new(&l);
        v.eq = vec![1.0, 2.0];
        v.eq_rhs = vec![1.0];
        v.p_diag = vec![2.0, 2.0];
        let mut p = Program::new(l);
        let o = p.solve(&v);
        assert!(o.solved(), "{o:?}");
        assert!((o.x[0] - 0.2).abs() < 1e-7 && (o.x[1] - 0.4).abs() < 1e-7, "{:?}", o.x);
        // reuse: the right-hand side doubles, the solution too
        v.eq_rhs = vec![2.0];
        let o = p.solve(&v);
        assert!(o.solved());
        assert!((o.x[0] - 0.4).abs() < 1e-7 && (o.x[1] - 0.8).abs() < 1e-7, "{:?}", o.x);
        // infeasible: u0 + 2 u1 = 4 with u <= 1
        v.eq_rhs = vec![4.0];
        let o = p.solve(&v);
        assert!(!o.solved());
        assert!(matches!(o.status, Some(SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible)));
        // NaN data is refused before clarabel sees it (after the cubic case below)
        let l3 = Layout { k: 2, n_eq: 1, reserves: vec![], n_sign: 0, stress: None, cone: false, cubes: true };
        // min s0 + s1, s_i >= u_i³, u0 + 2 u1 = 1: 3 u0² = λ, 3 u1² = 2λ, so u1 = √2 u0
        let mut v3 = Values::new(&l3);
        v3.eq = vec![1.0, 2.0];
        v3.eq_rhs = vec![1.0];
        v3.q[l3.cube_index(0)] = 1.0;
        v3.q[l3.cube_index(1)] = 1.0;
        let mut p3 = Program::new(l3);
        let o3 = p3.solve(&v3);
        assert!(o3.solved(), "{o3:?}");
        let u0 = 1.0 / (1.0 + 2.0 * 2f64.sqrt());
        assert!((o3.x[0] - u0).abs() < 1e-15 && (o3.x[1] - 2f64.sqrt() * u0).abs() < 1e-15, "{:?}", o3.x);
        assert!((o3.x[2] - u0.powi(3)).abs() < 1e-15, "the epigraph is tight: {:?}", o3.x);
        v.eq_rhs = vec![f64::NAN];
        let o = p.solve(&v);
        assert!(o.status.is_none() && o.error.is_some());
    }
}
