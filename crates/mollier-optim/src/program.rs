//! The program shared by both solvers of a frame (clarabel's in [`crate::qp`], the dense
//! interior point in `ipm`): `min ½ zᵀPz + qᵀz` s.t. `Az + s = b`, `s ∈ K`, its structure
//! ([`Layout`]: which variables and rows exist, the sparsity of `A`) and one frame's numbers
//! ([`Values`]).
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

use clarabel::solver::SupportedConeT;

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
pub(crate) enum Entry {
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
    pub fn row_upper(&self, i: usize) -> usize {
        self.n_eq + i
    }
    pub fn row_lower(&self, i: usize) -> usize {
        self.n_eq + self.k + i
    }
    pub fn row_sign(&self, s: usize) -> usize {
        self.n_eq + 2 * self.k + s
    }
    pub fn row_stress(&self, i: usize) -> usize {
        self.n_eq + 2 * self.k + self.n_sign + i
    }
    pub fn row_cone(&self, r: usize) -> usize {
        self.n_eq + 2 * self.k + self.n_sign + self.n_stress() + r
    }
    pub fn row_cube(&self, i: usize, r: usize) -> usize {
        self.row_cone(0) + if self.cone { 3 } else { 0 } + 3 * i + r
    }
    /// Number of rows.
    pub fn n_rows(&self) -> usize {
        self.row_cube(0, 0) + if self.cubes { 3 * self.k } else { 0 }
    }

    pub fn cones(&self) -> Vec<SupportedConeT<f64>> {
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
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, Entry)) {
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

    pub fn pattern(&self) -> (Vec<usize>, Vec<usize>) {
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

    pub fn is_finite(&self) -> bool {
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
