//! The joint stability cone as a path constraint (the glenohumeral cone of Chadwick et al. 2014,
//! eq. 9): at every grid point the joint force `f` in the cone frame (x into the socket) within
//! the second-order cone of the half-angles `θ_a`, `φ_a`,
//! ```text
//! g_1 = ((f_y/tan θ_a)² + (f_z/tan φ_a)² − f_x²)/F₀² ≤ 0,    g_2 = f_x/F₀ ≥ 0
//! ```
//! Quadratic in `f` (smooth where the index's angles are not: their `atan2` has no derivative at
//! `f = 0`), and of order 1 at forces of order `F₀`. `g_2` keeps the nappe into the socket. The
//! cone lies inside the index's region, with equality on its axes (`mollier_optim::cone`): a
//! force that satisfies it has a stability index ≤ 0.
//!
//! The force is [`mollier_core::joint_force`]'s: the virtual work of the bodies beyond the
//! socket, `−f = w_uᵀ (f_in − f_ext) + Σ_k σ_k ∇e_k · w_u` over the modes `k` of the elements
//! that cross the joint: the muscles' paths (tendon forces `F_k(L_k − s_k)`) and elements with a
//! law (`σ(e, ė)`: a soft contact between the arm and the thorax). Its Jacobian is exact in every
//! variable: by `q`, `v`, `v̇` from the coordinates' mixed derivatives, by `q` and `s` through the
//! tendon forces' partials, by `q` and `v` through the laws' tangents along the modes' jets
//! (`e`, `ė` and their derivatives), with the modes' gradients and second derivatives; the
//! activations, the controls and the other rates do not enter it. It has no second derivatives here: with it
//! the Hessian is IPOPT's L-BFGS.

use mollier_core::joint_force::{DistalSide, JointForceJet, joint_force_jet};
use mollier_core::{ElementId, Law, Model, NodeId};
use mollier_sim::{Linearization, Musculoskeletal, SimError, Workspace};
use num_dual::Dual64;

/// A joint cone to keep the joint force in.
#[derive(Clone, Debug, PartialEq)]
pub struct ConeConstraint {
    /// The joint node (a position node).
    pub joint: NodeId,
    /// The socket's elements at the joint.
    pub socket: Vec<ElementId>,
    /// The socket body's orientation node.
    pub body: NodeId,
    /// The cone frame in the body frame (columns: the cone's axes; x into the socket).
    pub rotation: [[f64; 3]; 3],
    /// The half-angles imposed (rad) towards the cone's y and z axes, in (0, π/2).
    pub half_angles: [f64; 2],
    /// The force scale `F₀` (N): the rows are of order 1 at forces of this size.
    pub force_scale: f64,
}

/// A [`ConeConstraint`] checked against its system.
#[derive(Clone, Debug)]
pub(crate) struct ConeSetup {
    pub c: ConeConstraint,
    side: DistalSide,
    /// Per crossing element, per mode: the muscle whose tendon force it carries.
    muscles: Vec<Vec<Option<usize>>>,
}

/// One point's rows: values and their partials by `(q, v, v̇, s)` (3n + m each).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ConeRows {
    pub g: [f64; 2],
    pub d: [Vec<f64>; 2],
    /// The joint force in the cone frame (N).
    pub force: [f64; 3],
}

impl ConeSetup {
    /// Check `c` on `system`: the distal side exists (its crossing elements, paths or elements
    /// with a law, give their fourth order), no loads vary in time, the half-angles and the force
    /// scale make sense.
    pub fn new(system: &Musculoskeletal<'_>, c: &ConeConstraint) -> Result<Self, String> {
        let [ty, tz] = c.half_angles;
        let right = |a: f64| a > 0.0 && a < std::f64::consts::FRAC_PI_2;
        if !(right(ty) && right(tz)) {
            return Err(format!("half-angles {ty} and {tz} rad: each in (0, π/2)"));
        }
        if !(c.force_scale > 0.0 && c.force_scale.is_finite()) {
            return Err(format!("force scale {} N: give a positive force", c.force_scale));
        }
        if system.loads.is_some() {
            return Err("loads varying in time act on the model: their part of the joint force is not built".into());
        }
        let model = system.model;
        let side = DistalSide::new(model, c.joint, &c.socket)?;
        let mut muscles = Vec::new();
        for &el in &side.crossing {
            let modes = (0..model.element(el).layout().n_modes())
                .map(|k| {
                    let m = model.mode_id(el, k);
                    system.muscles.iter().position(|mu| mu.mode == m)
                })
                .collect();
            muscles.push(modes);
        }
        Ok(Self { c: c.clone(), side, muscles })
    }

    /// The rows at the state `x` with rates `xd` whose linearization `lin` the workspace holds.
    pub fn rows(
        &self,
        system: &Musculoskeletal<'_>,
        ws: &mut Workspace,
        lin: &Linearization,
        x: &[f64],
        xd: &[f64],
    ) -> Result<ConeRows, SimError> {
        let l = system.layout();
        let (n, m) = (l.n, l.m);
        let v = &x[n..2 * n];
        let vd = &xd[n..2 * n];
        let model = system.model;
        let mut jet = |dir: [&[f64]; 3]| joint_force_jet(model, &mut ws.data, &self.side, self.c.body, v, vd, dir);
        let base = jet([&[], &[], &[]])?;
        let value = self.rows_of(&self.force(model, &base, lin, None, None));
        let mut d = [vec![0.0; 3 * n + m], vec![0.0; 3 * n + m]];
        let mut unit = vec![0.0; n];
        for j in 0..n {
            unit[j] = 1.0;
            for (block, dir) in
                [[&unit[..], &[], &[]], [&[], &unit[..], &[]], [&[], &[], &unit[..]]].into_iter().enumerate()
            {
                let jj = jet(dir)?;
                let g = self.rows_of(&self.force(model, &jj, lin, (block == 0).then_some(j), None));
                for r in 0..2 {
                    d[r][block * n + j] = g[r].eps;
                }
            }
            unit[j] = 0.0;
        }
        for k in 0..m {
            let g = self.rows_of(&self.force(model, &base, lin, None, Some(k)));
            for r in 0..2 {
                d[r][3 * n + k] = g[r].eps;
            }
        }
        let force = self.cone_frame(&self.force(model, &base, lin, None, None)).map(|f| f.re);
        Ok(ConeRows { g: value.map(|g| g.re), d, force })
    }

    /// The joint force (global, N; the force of the distal side on the socket) over dual numbers
    /// whose part is the derivative along the jet's direction, with `q_j` the direction's input
    /// (for the tendon forces' `∂F/∂L L'`) or `s_k` the direction (with a jet of no direction).
    fn force(
        &self,
        model: &Model,
        jet: &JointForceJet,
        lin: &Linearization,
        q: Option<usize>,
        s: Option<usize>,
    ) -> Forces {
        let mut f = [0, 1, 2].map(|i| Dual64::new(-jet.power[i][0], -jet.power[i][1]));
        for ((&el, per_mode), modes) in self.side.crossing.iter().zip(&jet.crossing).zip(&jet.modes) {
            let Some(law) = model.law(el) else { continue };
            for (k, sigma) in law_stresses(law, modes).into_iter().enumerate() {
                let c = &per_mode[k];
                for i in 0..3 {
                    f[i] -= Dual64::new(sigma.re * c[i][0], sigma.eps * c[i][0] + sigma.re * c[i][1]);
                }
            }
        }
        for (per_mode, muscles) in jet.crossing.iter().zip(&self.muscles) {
            for (c, mu) in per_mode.iter().zip(muscles) {
                let Some(k) = *mu else { continue };
                let ct = &lin.contraction[k];
                let df = match (q, s) {
                    (Some(j), _) => ct.force_d_length * lin.grad(k)[j],
                    (_, Some(sk)) if sk == k => ct.force_d_s,
                    _ => 0.0,
                };
                for i in 0..3 {
                    f[i] -= Dual64::new(ct.force * c[i][0], df * c[i][0] + ct.force * c[i][1]);
                }
            }
        }
        let lambda = jet.orientation.map(|[re, eps]| Dual64::new(re, eps));
        Forces { global: f, lambda }
    }

    /// The force in the cone frame: `Cᵀ R(λ)ᵀ f`.
    fn cone_frame(&self, f: &Forces) -> [Dual64; 3] {
        let r = mollier_core::geometry::rotation(&f.lambda);
        let body: [Dual64; 3] = [0, 1, 2].map(|a| (0..3).map(|b| r[b][a] * f.global[b]).sum());
        let c = &self.c.rotation;
        [0, 1, 2].map(|a| (0..3).map(|b| body[b] * c[b][a]).sum())
    }

    /// `(g_1, g_2)` of the force.
    fn rows_of(&self, f: &Forces) -> [Dual64; 2] {
        let fc = self.cone_frame(f);
        let [ty, tz] = self.c.half_angles.map(f64::tan);
        let f0 = self.c.force_scale;
        let (y, z) = (fc[1] / ty, fc[2] / tz);
        let g1 = (y * y + z * z - fc[0] * fc[0]) / (f0 * f0);
        [g1, fc[0] / f0]
    }
}

/// A crossing element's law's stresses (N, N m) over dual numbers whose part is the derivative
/// along the jet's direction: `σ(e, ė)` and `S e' + T ė'` with the law's tangents `S`, `T`, from
/// the modes' `[[e, e'], [ė, ė']]`.
fn law_stresses(law: &dyn Law, modes: &[[[f64; 2]; 2]]) -> Vec<Dual64> {
    let n = modes.len();
    let e: Vec<f64> = modes.iter().map(|m| m[0][0]).collect();
    let ed: Vec<f64> = modes.iter().map(|m| m[1][0]).collect();
    let mut sigma = vec![0.0; n];
    let (mut ds_de, mut ds_ded) = (vec![0.0; n * n], vec![0.0; n * n]);
    law.stress(&e, &ed, &mut sigma);
    law.tangent(&e, &ed, &mut ds_de, &mut ds_ded);
    (0..n)
        .map(|i| {
            let d: f64 = (0..n).map(|j| ds_de[i * n + j] * modes[j][0][1] + ds_ded[i * n + j] * modes[j][1][1]).sum();
            Dual64::new(sigma[i], d)
        })
        .collect()
}

/// The joint force (global) and the socket body's Euler parameters, over dual numbers.
struct Forces {
    global: [Dual64; 3],
    lambda: [Dual64; 4],
}

/// Why the Hessian is IPOPT's with a cone.
pub(crate) const NO_HESSIAN: &str = "the joint cone constraint has no second derivatives";

impl crate::Transcription<'_, '_, '_> {
    /// The cone's rows: two per point, after the defects.
    pub(crate) fn cone_m(&self) -> usize {
        if self.cone.is_some() { 2 * self.points } else { 0 }
    }

    /// The first cone row.
    fn cone_base(&self) -> usize {
        self.points * self.nx() + self.p.intervals * self.defect_rows()
    }

    /// `g_1 ≤ 0`, `g_2 ≥ 0`.
    pub(crate) fn cone_bounds(&self, g_l: &mut [f64], g_u: &mut [f64]) {
        let base = self.cone_base();
        for i in 0..self.cone_m() / 2 {
            (g_l[base + 2 * i], g_u[base + 2 * i]) = (-2e19, 0.0);
            (g_l[base + 2 * i + 1], g_u[base + 2 * i + 1]) = (0.0, 2e19);
        }
    }

    /// The rows' values at the linearized points.
    pub(crate) fn cone_constraints(&self, g: &mut [f64]) {
        let base = self.cone_base();
        for (i, r) in self.cone_rows.iter().enumerate() {
            g[base + 2 * i..base + 2 * i + 2].copy_from_slice(&r.g);
        }
    }

    /// The columns of one point's rows in `z_i`: `q`, `v`, `v̇`, `s`.
    fn cone_columns(&self) -> Vec<usize> {
        let l = self.layout;
        let (xd0, _, _) = self.off();
        let mut c: Vec<usize> = (0..2 * l.n).collect();
        c.extend(xd0 + l.n..xd0 + 2 * l.n);
        c.extend(l.s()..l.s() + l.m);
        c
    }

    /// The rows' Jacobian pattern (dense in the point's columns).
    pub(crate) fn cone_structure(&self) -> Vec<(usize, usize)> {
        let (base, cols) = (self.cone_base(), self.cone_columns());
        let mut s = Vec::new();
        for i in 0..self.cone_m() / 2 {
            for r in 0..2 {
                s.extend(cols.iter().map(|&c| (base + 2 * i + r, i * self.nz + c)));
            }
        }
        s
    }

    /// The rows' Jacobian values at the linearized points, in [`Self::cone_structure`]'s order.
    pub(crate) fn cone_values(&self, values: &mut [f64]) {
        let mut v = 0;
        for r in &self.cone_rows {
            for d in &r.d {
                values[v..v + d.len()].copy_from_slice(d);
                v += d.len();
            }
        }
    }
}

impl ConeConstraint {
    /// Whether the constraint can be imposed on `system` (see [`crate::Problem::cone`]), or why
    /// not: the joint's distal side, the elements crossing it, the half-angles and the scale.
    pub fn check(&self, system: &Musculoskeletal<'_>) -> Result<(), String> {
        ConeSetup::new(system, self).map(|_| ())
    }
}

impl crate::Transcription<'_, '_, '_> {
    /// The joint force in the cone frame (N; x into the socket) at every point of `z`, with a
    /// [`ConeConstraint`] (else empty).
    pub fn cone_forces(&mut self, z: &[f64]) -> Result<Vec<[f64; 3]>, SimError> {
        self.linearize(z)?;
        Ok(self.cone_rows.iter().map(|r| r.force).collect())
    }
}
