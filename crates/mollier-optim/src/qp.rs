//! The conic program of one frame in clarabel's form, `min ½ zᵀPz + qᵀz` s.t. `Az + s = b`,
//! `s ∈ K`, with a sparsity pattern fixed per study so that a solver is built once and updated
//! (`update_P/q/A/b`) for every later frame.
//!
//! Variables `z = (u, v, t, s)`: scaled muscle forces `u_i = F_i/Fmax_i(l)` in [0, 1], scaled
//! reserves `v_j = r_j/ρ_j`, for the first stage of criterion (d) the epigraph variable `t`
//! (maximum stress / specific tension), and for the cubic criterion one epigraph variable
//! `s_i >= u_i³` per muscle. Rows, in this order:
//! - zero cone: one equality per input, `Σ_i a_ji u_i − (ρ_j/ω_j) v_j = −τ0_j/ω_j`;
//! - non-negative cone: `u_i <= 1`, `−u_i <= 0`, the sign constraints, then either the epigraph
//!   rows `g_i u_i − t <= 0` (stage 1 of (d)) or the cap rows `g_i u_i <= cap` (stage 2);
//! - second-order cone (3 rows) when the joint cone is imposed: `(f_x; f_y/tan θ_a; f_z/tan φ_a)`;
//! - for the cubic criterion, one power cone `K(1/3) = {(x, y, z): x^⅓ y^⅔ >= |z|, x, y >= 0}`
//!   per muscle on `(s_i, κ, u_i)`: `s_i >= |u_i|³/κ²`, so that the objective `Σ c_i κ² s_i` is
//!   linear; `κ` (the frame's typical activation) keeps the cone's three entries of one size.
//!
//! Every row is scaled by the size of its terms so that clarabel sees O(1) data.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use crate::ipm::{Dense, DenseStatus};

mod cubes;

/// The structure of the program: what rows and variables exist.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Layout {
    /// Muscles.
    pub k: usize,
    /// Input equalities.
    pub n_eq: usize,
    /// Input index of each reserve variable.
    pub reserves: Vec<usize>,
    /// Sign-constrained reactions.
    pub n_sign: usize,
    /// Stress rows: `Some(true)` with the epigraph variable, `Some(false)` with a fixed cap.
    pub stress: Option<bool>,
    /// The joint cone is imposed.
    pub cone: bool,
    /// One epigraph variable and power cone per muscle (the cubic criterion).
    pub cubes: bool,
}

/// What one nonzero of `A` stands for.
#[derive(Clone, Copy, Debug)]
enum Entry {
    Eq {
        j: usize,
        i: usize,
    },
    Upper,
    Lower,
    Sign {
        s: usize,
        i: usize,
    },
    Stress {
        i: usize,
    },
    Cone {
        r: usize,
        i: usize,
    },
    Reserve {
        v: usize,
    },
    Epigraph,
    /// `−u_i` in the third row of muscle i's power cone, `−s_i` in its first.
    Cube,
}

impl Layout {
    fn has_t(&self) -> bool {
        self.stress == Some(true)
    }
    fn n_stress(&self) -> usize {
        if self.stress.is_some() { self.k } else { 0 }
    }
    /// Number of variables.
    pub fn n_var(&self) -> usize {
        self.cube_index(0) + if self.cubes { self.k } else { 0 }
    }
    /// Index of muscle i's cubic epigraph variable `s_i`.
    pub fn cube_index(&self, i: usize) -> usize {
        self.k + self.reserves.len() + usize::from(self.has_t()) + i
    }
    /// Index of the epigraph variable.
    pub fn t_index(&self) -> usize {
        self.k + self.reserves.len()
    }
    fn row_upper(&self, i: usize) -> usize {
        self.n_eq + i
    }
    fn row_lower(&self, i: usize) -> usize {
        self.n_eq + self.k + i
    }
    fn row_sign(&self, s: usize) -> usize {
        self.n_eq + 2 * self.k + s
    }
    fn row_stress(&self, i: usize) -> usize {
        self.n_eq + 2 * self.k + self.n_sign + i
    }
    fn row_cone(&self, r: usize) -> usize {
        self.n_eq + 2 * self.k + self.n_sign + self.n_stress() + r
    }
    fn row_cube(&self, i: usize, r: usize) -> usize {
        self.row_cone(0) + if self.cone { 3 } else { 0 } + 3 * i + r
    }
    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.row_cube(0, 0) + if self.cubes { 3 * self.k } else { 0 }
    }

    fn cones(&self) -> Vec<SupportedConeT<f64>> {
        let mut c = Vec::new();
        if self.n_eq > 0 {
            c.push(SupportedConeT::ZeroConeT(self.n_eq));
        }
        let nn = 2 * self.k + self.n_sign + self.n_stress();
        if nn > 0 {
            c.push(SupportedConeT::NonnegativeConeT(nn));
        }
        if self.cone {
            c.push(SupportedConeT::SecondOrderConeT(3));
        }
        if self.cubes {
            c.extend((0..self.k).map(|_| SupportedConeT::PowerConeT(1.0 / 3.0)));
        }
        c
    }

    /// Visit the nonzeros of `A` column by column, rows increasing.
    fn for_each(&self, mut f: impl FnMut(usize, usize, Entry)) {
        for i in 0..self.k {
            for j in 0..self.n_eq {
                f(i, j, Entry::Eq { j, i });
            }
            f(i, self.row_upper(i), Entry::Upper);
            f(i, self.row_lower(i), Entry::Lower);
            for s in 0..self.n_sign {
                f(i, self.row_sign(s), Entry::Sign { s, i });
            }
            if self.stress.is_some() {
                f(i, self.row_stress(i), Entry::Stress { i });
            }
            if self.cone {
                for r in 0..3 {
                    f(i, self.row_cone(r), Entry::Cone { r, i });
                }
            }
            if self.cubes {
                f(i, self.row_cube(i, 2), Entry::Cube);
            }
        }
        for (v, &j) in self.reserves.iter().enumerate() {
            f(self.k + v, j, Entry::Reserve { v });
        }
        if self.has_t() {
            for i in 0..self.k {
                f(self.t_index(), self.row_stress(i), Entry::Epigraph);
            }
        }
        if self.cubes {
            for i in 0..self.k {
                f(self.cube_index(i), self.row_cube(i, 0), Entry::Cube);
            }
        }
    }

    fn pattern(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.n_var();
        let mut colptr = vec![0usize; n + 1];
        let mut rowval = Vec::new();
        self.for_each(|col, row, _| {
            colptr[col + 1] += 1;
            rowval.push(row);
        });
        for c in 0..n {
            colptr[c + 1] += colptr[c];
        }
        (colptr, rowval)
    }
}

/// The numbers of one frame's program, already scaled. Dense row-major blocks of `k` columns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Values {
    /// `a_ji`, n_eq x k.
    pub eq: Vec<f64>,
    /// Right-hand sides of the equalities.
    pub eq_rhs: Vec<f64>,
    /// Coefficient of each reserve variable in its equality.
    pub reserve_coef: Vec<f64>,
    /// Sign rows, n_sign x k, and their right-hand sides.
    pub sign: Vec<f64>,
    /// Right-hand sides of the sign rows.
    pub sign_rhs: Vec<f64>,
    /// `g_i` of the stress rows.
    pub stress: Vec<f64>,
    /// Right-hand side of the stress rows (0 with the epigraph variable, else the cap).
    pub stress_rhs: f64,
    /// Cone rows, 3 x k, and their right-hand sides.
    pub cone: Vec<f64>,
    /// Right-hand sides of the cone rows.
    pub cone_rhs: [f64; 3],
    /// `κ` of the power cones `(s_i, κ, u_i)`: 1, or the frame's typical activation.
    pub cube_scale: f64,
    /// Diagonal of `P` (n_var).
    pub p_diag: Vec<f64>,
    /// Linear cost (n_var).
    pub q: Vec<f64>,
}

impl Values {
    pub fn new(layout: &Layout) -> Self {
        let (k, n) = (layout.k, layout.n_var());
        Self {
            eq: vec![0.0; layout.n_eq * k],
            eq_rhs: vec![0.0; layout.n_eq],
            reserve_coef: vec![0.0; layout.reserves.len()],
            sign: vec![0.0; layout.n_sign * k],
            sign_rhs: vec![0.0; layout.n_sign],
            stress: vec![0.0; k],
            stress_rhs: 0.0,
            cone: vec![0.0; 3 * k],
            cone_rhs: [0.0; 3],
            cube_scale: 1.0,
            p_diag: vec![0.0; n],
            q: vec![0.0; n],
        }
    }

    fn is_finite(&self) -> bool {
        let all = |v: &[f64]| v.iter().all(|x| x.is_finite());
        all(&self.eq)
            && all(&self.eq_rhs)
            && all(&self.reserve_coef)
            && all(&self.sign)
            && all(&self.sign_rhs)
            && all(&self.stress)
            && self.stress_rhs.is_finite()
            && all(&self.cone)
            && all(&self.cone_rhs)
            && self.cube_scale.is_finite()
            && self.cube_scale > 0.0
            && all(&self.p_diag)
            && all(&self.q)
    }
}

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
