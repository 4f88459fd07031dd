//! The three-element Hill muscle of DAS3 (Chadwick et al. 2014, eqs. 1-2 and App. A),
//! in implicit form with exact partial derivatives.
//!
//! States: the active state `a` and the contraction state `s = L_CE cos φ` (m), the fibre length
//! projected on the line of action, which is regular where the pennation angle is not. With the
//! constant-volume pennation (eq. 14), `L_CE sin φ = b = L_CEopt sin φ_opt`, so
//! ```text
//! L_CE = √(s² + b²),   cos φ = s / L_CE,   L̇_CE = ṡ cos φ
//! ```
//! Activation (eq. 1) and contraction (eq. 2, the force balance of the series and parallel
//! branches) are the residuals
//! ```text
//! f_a = ȧ − (u/T_act + (1 − u)/T_deact)(u − a)
//! f_s = F_SEE(L_M − s) − (a F_max f_FL(L_CE) f_FV(L̇_CE) + F_PEE(L_CE)) cos φ − β F_max ṡ / L_CEopt
//! ```
//! both zero along a solution. The last term is the small viscosity DAS3's code puts in the
//! projected CE (β = 0.001) so that `∂f_s/∂ṡ` never vanishes, not in the paper. The muscle pulls
//! on its path with the tendon force `F_SEE`.
//!
//! A second set of curves, [`Curves::DeGrooteFregly2016`], is OpenSim's
//! `DeGrooteFregly2016Muscle` (De Groote et al. 2016; `hill/dgf.rs`) in the same residual form:
//! ```text
//! f_a = ȧ − [(f + ½)/(T_act z) + (½ − f) z/T_deact](u − a),   f = ½ tanh(b(u − a)), z = ½ + 3a/2
//! f_s = F_max [f_T(L̃_T) − (a f_L(L̃) f_V(ṽ) + f_PE(L̃) + d ṽ) cos φ]
//! ```
//! with `L̃ = L_CE/L_CEopt`, `ṽ = L̇_CE/(v_max L_CEopt)`, `L̃_T = (L_M − s)/L_slack` and the fibre
//! damping `d` on the normalized fibre velocity; the pennation is the same constant-height one.
//!
//! A muscle with a rigid tendon ([`Tendon::Rigid`], OpenSim's `ignore_tendon_compliance`) has
//! no contraction state of its own: the tendon stays at its slack length, the projected fibre
//! follows the path, `s = L_M − L_slack`, `ṡ = L̇_M`, and the force is explicit, the elastic
//! residual with `F_SEE` taken away:
//! ```text
//! F = (a F_max f_L(L_CE) f_V(L̇_CE) + F_PEE(L_CE) + c L̇_CE) cos φ + β F_max L̇_M / L_CEopt
//! ```
//! ([`HillMuscle::rigid`]).

mod dgf;
mod second;
use num_dual::{Dual64, DualNum};
pub use second::ContractionHessian;

/// The curves a muscle's elements follow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Curves {
    /// DAS3's (Chadwick et al. 2014): the fields of [`HillParams`] from `pee_slack_length` on.
    #[default]
    Das3,
    /// OpenSim's `DeGrooteFregly2016Muscle` (De Groote et al. 2016) with these parameters and
    /// [`HillParams::vmax`] (`max_contraction_velocity`) and [`HillParams::see_strain`]
    /// (`tendon_strain_at_one_norm_force`).
    DeGrooteFregly2016(DeGrooteFregly),
}

/// The parameters of OpenSim's `DeGrooteFregly2016Muscle` that DAS3's curves do not have, each
/// named after its OpenSim property.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DeGrooteFregly {
    /// `active_force_width_scale`: the active force-length curve widened about its peak, at
    /// least 1. Default 1.
    pub active_force_width_scale: f64,
    /// `fiber_damping`: the fibre's damping force in `F_max` per normalized fibre velocity
    /// `L̇_CE/(v_max L_CEopt)`, at least 0. Default 0.
    pub fiber_damping: f64,
    /// `passive_fiber_strain_at_one_norm_force`: fibre strain at which the passive force
    /// reaches `F_max`, greater than 0. Default 0.6.
    pub passive_fiber_strain: f64,
    /// `activation_dynamics_smoothing`: the steepness `b` of the tanh switch between activation
    /// and deactivation time constants (per unit of `u − a`), greater than 0. Default 0.1.
    pub activation_smoothing: f64,
    /// Whether the passive fibre force acts (`ignore_passive_fiber_force` negated). Default true.
    pub passive: bool,
}

impl Default for DeGrooteFregly {
    /// OpenSim 4.6's defaults.
    fn default() -> Self {
        Self {
            active_force_width_scale: 1.0,
            fiber_damping: 0.0,
            passive_fiber_strain: 0.6,
            activation_smoothing: 0.1,
            passive: true,
        }
    }
}

/// The tendon of a muscle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Tendon {
    /// Elastic (the series elastic element): the muscle has a contraction state.
    #[default]
    Elastic,
    /// Rigid, at its slack length: the fibre follows the path and the force is explicit.
    Rigid,
}

/// Parameters of one muscle (SI units).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HillParams {
    /// Maximum isometric force `F_max` (N).
    pub max_force: f64,
    /// Optimal fibre (CE) length `L_CEopt` (m).
    pub optimal_fibre_length: f64,
    /// Slack length of the series elastic element (tendon), `L_slack,SEE` (m).
    pub tendon_slack_length: f64,
    /// Pennation angle at optimal fibre length `φ_opt` (rad), in `[0, π/2)`.
    pub pennation: f64,
    /// The curves; the fields from `pee_slack_length` on other than `vmax` and `see_strain`
    /// are DAS3's only.
    pub curves: Curves,
    /// Whether the tendon is elastic (default) or rigid.
    pub tendon: Tendon,
    /// Activation time constant `T_act` (s).
    pub activation_time: f64,
    /// Deactivation time constant `T_deact` (s).
    pub deactivation_time: f64,
    /// Slack length of the parallel elastic element (m): `L_CEopt` unless the data say otherwise.
    pub pee_slack_length: f64,
    /// Width `W` of the Gaussian force-length curve (eq. 13), relative to `L_CEopt`: 0.56.
    pub width: f64,
    /// Hill's `A` of the concentric curve (eq. 15): 0.25.
    pub hill_a: f64,
    /// Maximal shortening velocity in optimal lengths per second (eq. 15): 10.
    pub vmax: f64,
    /// Maximal normalized eccentric force `g_max` (eq. 15): 1.5.
    pub gmax: f64,
    /// Stiffness of the linear term of both elastic elements `k₁` (N/m): 10.
    pub k1: f64,
    /// Tendon strain at which the SEE's quadratic term reaches `F_max` (App. A): 0.04.
    pub see_strain: f64,
    /// PEE force, relative to `F_max`, of the quadratic term at an elongation of `W L_CEopt`: 1.
    pub pee_force: f64,
    /// Viscosity of the projected CE, in `F_max` per `L_CEopt`/s (DAS3's code): 0.001.
    pub damping: f64,
}

impl HillParams {
    /// A muscle with the constants of Chadwick et al. (2014), App. A (and DAS3's code where the paper is
    /// silent), PEE slack length = optimal fibre length.
    pub fn new(
        max_force: f64,
        optimal_fibre_length: f64,
        tendon_slack_length: f64,
        pennation: f64,
        activation_time: f64,
        deactivation_time: f64,
    ) -> Self {
        Self {
            max_force,
            optimal_fibre_length,
            tendon_slack_length,
            pennation,
            curves: Curves::Das3,
            tendon: Tendon::Elastic,
            activation_time,
            deactivation_time,
            pee_slack_length: optimal_fibre_length,
            width: 0.56,
            hill_a: 0.25,
            vmax: 10.0,
            gmax: 1.5,
            k1: 10.0,
            see_strain: 0.04,
            pee_force: 1.0,
            damping: 0.001,
        }
    }

    /// A muscle with OpenSim's `DeGrooteFregly2016Muscle` curves and its default parameters
    /// ([`DeGrooteFregly::default`], `max_contraction_velocity` 10, tendon strain 0.049).
    pub fn de_groote_fregly_2016(
        max_force: f64,
        optimal_fibre_length: f64,
        tendon_slack_length: f64,
        pennation: f64,
        activation_time: f64,
        deactivation_time: f64,
    ) -> Self {
        let mut p = Self::new(
            max_force,
            optimal_fibre_length,
            tendon_slack_length,
            pennation,
            activation_time,
            deactivation_time,
        );
        p.curves = Curves::DeGrooteFregly2016(DeGrooteFregly::default());
        p.see_strain = 0.049;
        p
    }

    /// What is wrong with the parameters, if anything (a field name and why).
    pub fn problem(&self) -> Option<(&'static str, String)> {
        if let Curves::DeGrooteFregly2016(d) = &self.curves {
            let checks = [
                ("active_force_width_scale", d.active_force_width_scale, 1.0, "at least 1"),
                ("fiber_damping", d.fiber_damping, 0.0, "at least 0"),
                ("passive_fiber_strain_at_one_norm_force", d.passive_fiber_strain, f64::MIN_POSITIVE, "greater than 0"),
                ("activation_dynamics_smoothing", d.activation_smoothing, f64::MIN_POSITIVE, "greater than 0"),
            ];
            for (name, v, min, what) in checks {
                if !(v.is_finite() && v >= min) {
                    return Some((name, format!("must be a finite number {what}, found {v}")));
                }
            }
        }
        let positive = [
            ("max_force", self.max_force),
            ("optimal_fibre_length", self.optimal_fibre_length),
            ("tendon_slack_length", self.tendon_slack_length),
            ("activation_time", self.activation_time),
            ("deactivation_time", self.deactivation_time),
            ("pee_slack_length", self.pee_slack_length),
            ("width", self.width),
            ("hill_a", self.hill_a),
            ("vmax", self.vmax),
            ("see_strain", self.see_strain),
        ];
        for (name, v) in positive {
            if !(v.is_finite() && v > 0.0) {
                return Some((name, format!("must be a finite number greater than 0, found {v}")));
            }
        }
        if !(self.pennation.is_finite() && (0.0..std::f64::consts::FRAC_PI_2).contains(&self.pennation)) {
            return Some(("pennation", format!("must lie in [0, 90°), found {} rad", self.pennation)));
        }
        if !(self.gmax.is_finite() && self.gmax > 1.0) {
            return Some(("gmax", format!("must be greater than 1, found {}", self.gmax)));
        }
        for (name, v) in [("k1", self.k1), ("pee_force", self.pee_force), ("damping", self.damping)] {
            if !(v.is_finite() && v >= 0.0) {
                return Some((name, format!("must be a finite number of at least 0, found {v}")));
            }
        }
        None
    }
}

/// The root of a function that is positive at `bracket.0` and negative at `bracket.1`, from
/// `start`: Newton steps while they stay inside the shrinking bracket, bisection otherwise, until
/// `|f| <= ftol` or the bracket is narrower than `xtol`. `f` returns the value and its slope.
pub(crate) fn decreasing_root(
    f: impl Fn(f64) -> (f64, f64),
    bracket: (f64, f64),
    start: f64,
    ftol: f64,
    xtol: f64,
) -> f64 {
    let (mut lo, mut hi) = bracket;
    let mut x = start;
    for _ in 0..200 {
        let (v, slope) = f(x);
        if v.abs() <= ftol || hi - lo <= xtol {
            return x;
        }
        if v > 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let newton = x - v / slope;
        x = if newton > lo && newton < hi { newton } else { 0.5 * (lo + hi) };
    }
    x
}

/// A muscle: its parameters and the constants derived from them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HillMuscle {
    /// The parameters.
    pub params: HillParams,
    /// `b = L_CEopt sin φ_opt` (m).
    b: f64,
    /// `V_max` (m/s).
    vmax: f64,
    /// `c₃` of eq. 16 (m/s): the eccentric curve's constant for a continuous slope at 0.
    c3: f64,
    /// Quadratic SEE stiffness (N/m²).
    k_see: f64,
    /// Quadratic PEE stiffness (N/m²).
    k_pee: f64,
    /// De Groote et al.'s tendon stiffness parameter `kT` (0 for DAS3's curves).
    k_tendon: f64,
}

/// The contraction residual `f_s` and what depends on it, at one state.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Contraction {
    /// `f_s` (N).
    pub residual: f64,
    /// `∂f_s/∂a` (N).
    pub d_a: f64,
    /// `∂f_s/∂s` (N/m).
    pub d_s: f64,
    /// `∂f_s/∂ṡ` (N s/m).
    pub d_sdot: f64,
    /// `∂f_s/∂L_M` (N/m).
    pub d_length: f64,
    /// The tendon force `F_SEE`, what the muscle pulls its path with (N).
    pub force: f64,
    /// `∂F_SEE/∂L_M` (N/m).
    pub force_d_length: f64,
    /// `∂F_SEE/∂s` (N/m).
    pub force_d_s: f64,
    /// `∂F/∂a` of a rigid tendon's force (N; 0 for an elastic one, whose force is the tendon's).
    pub force_d_a: f64,
    /// `∂F/∂L̇_M` of a rigid tendon's force (N s/m; 0 for an elastic one).
    pub force_d_rate: f64,
}

/// What scales a rigid muscle's row `f_s = (F_max/L_CEopt)(s − L_M + L_slack)` to newtons.
fn rigid_row_scale(p: &HillParams) -> f64 {
    p.max_force / p.optimal_fibre_length
}

/// Where a muscle is: its fibres, forces and curves at one state (for output).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MuscleState {
    /// Fibre (CE) length (m).
    pub fibre_length: f64,
    /// Fibre velocity (m/s, positive lengthening).
    pub fibre_velocity: f64,
    /// Pennation angle (rad).
    pub pennation: f64,
    /// Active CE force `a F_max f_FL f_FV` (N).
    pub active_force: f64,
    /// PEE force (N).
    pub passive_force: f64,
    /// Tendon force (N).
    pub force: f64,
}

impl HillMuscle {
    /// The muscle with parameters `p` (see [`HillParams::problem`] for which are valid).
    pub fn new(p: HillParams) -> Self {
        let lopt = p.optimal_fibre_length;
        let vmax = p.vmax * lopt;
        let strain = p.see_strain * p.tendon_slack_length;
        let stretch = p.width * lopt;
        Self {
            params: p,
            b: lopt * p.pennation.sin(),
            vmax,
            c3: vmax * p.hill_a * (p.gmax - 1.0) / (p.hill_a + 1.0),
            k_see: p.max_force / (strain * strain),
            k_pee: p.pee_force * p.max_force / (stretch * stretch),
            k_tendon: match p.curves {
                Curves::Das3 => 0.0,
                Curves::DeGrooteFregly2016(_) => dgf::tendon_stiffness(p.see_strain),
            },
        }
    }

    /// `f_L` at fibre length `lce` (m), over dual numbers.
    fn force_length_t<T: DualNum<Primitive = f64> + Copy>(&self, lce: T) -> T {
        let lopt = self.params.optimal_fibre_length;
        match &self.params.curves {
            Curves::Das3 => {
                let x = (lce - lopt) / (self.params.width * lopt);
                (-(x * x)).exp()
            }
            Curves::DeGrooteFregly2016(d) => dgf::active_force_length(lce / lopt, d.active_force_width_scale),
        }
    }

    /// `f_V` at fibre velocity `v` (m/s), over dual numbers.
    fn force_velocity_t<T: DualNum<Primitive = f64> + Copy>(&self, v: T) -> T {
        let p = &self.params;
        match &p.curves {
            Curves::Das3 if v.re() < 0.0 => (v + self.vmax) / (-(v / p.hill_a) + self.vmax),
            Curves::Das3 => (v * p.gmax + self.c3) / (v + self.c3),
            Curves::DeGrooteFregly2016(_) => dgf::force_velocity(v / self.vmax),
        }
    }

    /// The parallel element's force (N) at fibre length `lce` (m), over dual numbers.
    fn parallel_t<T: DualNum<Primitive = f64> + Copy>(&self, lce: T) -> T {
        let p = &self.params;
        match &p.curves {
            Curves::Das3 => Self::spring_dual(p.k1, self.k_pee, lce - p.pee_slack_length),
            Curves::DeGrooteFregly2016(d) if d.passive => {
                dgf::passive_force_length(lce / p.optimal_fibre_length, d.passive_fiber_strain) * p.max_force
            }
            Curves::DeGrooteFregly2016(_) => lce * 0.0,
        }
    }

    /// The tendon's force (N) at tendon length `l` (m), over dual numbers.
    fn tendon_t<T: DualNum<Primitive = f64> + Copy>(&self, l: T) -> T {
        let p = &self.params;
        match &p.curves {
            Curves::Das3 => Self::spring_dual(p.k1, self.k_see, l - p.tendon_slack_length),
            Curves::DeGrooteFregly2016(_) => {
                dgf::tendon_force_length(l / p.tendon_slack_length, self.k_tendon) * p.max_force
            }
        }
    }

    /// The damping coefficients `(c_f, c_s)`: force along the fibre per fibre velocity and force
    /// along the line of action per `ṡ` (N s/m). DAS3's viscosity acts on `ṡ`, De Groote et
    /// al.'s on the fibre velocity.
    pub(crate) fn damping(&self) -> (f64, f64) {
        let p = &self.params;
        match &p.curves {
            Curves::Das3 => (0.0, p.damping * p.max_force / p.optimal_fibre_length),
            Curves::DeGrooteFregly2016(d) => (d.fiber_damping * p.max_force / self.vmax, 0.0),
        }
    }

    /// The value and slope of a curve written over dual numbers.
    fn slope(f: impl Fn(Dual64) -> Dual64, x: f64) -> (f64, f64) {
        let d = f(Dual64::new(x, 1.0));
        (d.re, d.eps)
    }

    /// `(L_CE, cos φ, ∂L_CE/∂s, ∂cos φ/∂s)` for contraction state `s` (m).
    pub fn fibre(&self, s: f64) -> (f64, f64, f64, f64) {
        if self.b == 0.0 {
            return (s, 1.0, 1.0, 0.0);
        }
        let l = s.hypot(self.b);
        let cos = s / l;
        (l, cos, cos, self.b * self.b / (l * l * l))
    }

    /// The Gaussian force-length curve (eq. 13) and its slope (1/m).
    pub fn force_length(&self, lce: f64) -> (f64, f64) {
        if let Curves::DeGrooteFregly2016(_) = self.params.curves {
            return Self::slope(|x| self.force_length_t(x), lce);
        }
        let lopt = self.params.optimal_fibre_length;
        let w = self.params.width * lopt;
        let x = (lce - lopt) / w;
        let f = (-x * x).exp();
        (f, -2.0 * x * f / w)
    }

    /// The force-velocity curve (eqs. 15-16) and its slope (s/m), for CE velocity `v` (m/s,
    /// positive lengthening).
    pub fn force_velocity(&self, v: f64) -> (f64, f64) {
        if let Curves::DeGrooteFregly2016(_) = self.params.curves {
            return Self::slope(|x| self.force_velocity_t(x), v);
        }
        let p = &self.params;
        if v < 0.0 {
            let d = self.vmax - v / p.hill_a;
            let f = (self.vmax + v) / d;
            (f, (1.0 + f / p.hill_a) / d)
        } else {
            let d = v + self.c3;
            let f = (p.gmax * v + self.c3) / d;
            (f, (p.gmax - f) / d)
        }
    }

    /// An elastic element: `k₁ x + k₂ x²` for `x > 0`, `k₁ x` otherwise, and its slope.
    fn spring(k1: f64, k2: f64, x: f64) -> (f64, f64) {
        if x > 0.0 { (k1 * x + k2 * x * x, k1 + 2.0 * k2 * x) } else { (k1 * x, k1) }
    }

    /// SEE force and slope at tendon length `l` (m).
    pub fn tendon(&self, l: f64) -> (f64, f64) {
        if let Curves::DeGrooteFregly2016(_) = self.params.curves {
            return Self::slope(|x| self.tendon_t(x), l);
        }
        Self::spring(self.params.k1, self.k_see, l - self.params.tendon_slack_length)
    }

    /// PEE force and slope at fibre length `lce` (m).
    pub fn parallel(&self, lce: f64) -> (f64, f64) {
        if let Curves::DeGrooteFregly2016(_) = self.params.curves {
            return Self::slope(|x| self.parallel_t(x), lce);
        }
        Self::spring(self.params.k1, self.k_pee, lce - self.params.pee_slack_length)
    }

    /// The contraction residual and its partials at active state `a`, contraction state `s` and
    /// its rate `sdot`, and muscle-tendon (path) length `length` (m).
    pub fn contraction(&self, a: f64, s: f64, sdot: f64, length: f64) -> Contraction {
        let p = &self.params;
        let (lce, cos, dl_ds, dcos_ds) = self.fibre(s);
        let v = sdot * cos;
        let (fl, dfl) = self.force_length(lce);
        let (fv, dfv) = self.force_velocity(v);
        let (fp, dfp) = self.parallel(lce);
        let (ft, dft) = self.tendon(length - s);
        let (c_fibre, beta) = self.damping();
        let active = a * p.max_force * fl * fv;
        let fibre = active + fp + c_fibre * v;
        // d(active)/ds through L_CE (force-length) and through L̇_CE = ṡ cos φ (force-velocity)
        let d_active_ds = a * p.max_force * (dfl * dl_ds * fv + fl * dfv * sdot * dcos_ds);
        let d_damping_ds = c_fibre * sdot * dcos_ds;
        Contraction {
            residual: ft - fibre * cos - beta * sdot,
            d_a: -p.max_force * fl * fv * cos,
            d_s: -dft - (d_active_ds + dfp * dl_ds + d_damping_ds) * cos - fibre * dcos_ds,
            d_sdot: -(a * p.max_force * fl * dfv + c_fibre) * cos * cos - beta,
            d_length: dft,
            force: ft,
            force_d_length: dft,
            force_d_s: -dft,
            force_d_a: 0.0,
            force_d_rate: 0.0,
        }
    }

    /// The `ṡ` (m/s) at which DAS3's contraction residual vanishes, in closed form, or `None`
    /// where it has none on the curve's branch (or De Groote et al.'s curves, not ratios of
    /// linear functions). With `s` fixed the residual is `T − K f_V(v) − β v / cos φ` in the
    /// fibre velocity `v = ṡ cos φ` (m/s), `K = a F_max f_L cos φ` and `T` the tendon's force less
    /// the parallel element's along the line of action (N); each branch of `f_V` (eqs. 15-16) is
    /// a ratio of linear functions of `v`, so the root is a quadratic's: on the concentric branch
    /// where `T < K` (the residual decreases in `ṡ` and is `T − K` at rest), else on the
    /// eccentric one. The root is kept where the residual there is within `ftol` (N).
    pub(crate) fn das3_contraction_rate(&self, a: f64, s: f64, length: f64, ftol: f64) -> Option<f64> {
        if !matches!(self.params.curves, Curves::Das3) {
            return None;
        }
        let p = &self.params;
        let (lce, cos, _, _) = self.fibre(s);
        if !(cos > 0.0) {
            return None;
        }
        let big_k = a * p.max_force * self.force_length(lce).0 * cos;
        let t = self.tendon(length - s).0 - self.parallel(lce).0 * cos;
        let beta = self.damping().1 / cos;
        let (vmax, c3) = (self.vmax, self.c3);
        // α v² + b v + γ = 0 over the branch's denominator (positive on it); its root on the
        // branch is the one of the sign of `T − K` (the product of the roots γ/α ≤ 0)
        let concentric = t < big_k;
        let (alpha, b, gamma) = if concentric {
            (beta / p.hill_a, -(t / p.hill_a + big_k + beta * vmax), vmax * (t - big_k))
        } else {
            (beta, big_k * p.gmax + beta * c3 - t, -c3 * (t - big_k))
        };
        let q = -0.5 * (b + b.signum() * (b * b - 4.0 * alpha * gamma).sqrt());
        let v = match (concentric, q > 0.0) {
            (true, true) | (false, false) => gamma / q,
            (true, false) | (false, true) => q / alpha,
        };
        let on_branch = if concentric { v < 0.0 } else { v >= 0.0 };
        let residual = t - big_k * self.force_velocity(v).0 - beta * v;
        (on_branch && v.is_finite() && residual.abs() <= ftol).then_some(v / cos)
    }

    /// Whether the tendon is rigid.
    pub fn is_rigid(&self) -> bool {
        self.params.tendon == Tendon::Rigid
    }

    /// A rigid tendon's muscle at active state `a`, path length `length` (m) and path velocity
    /// `rate` (m/s), with its row `f_s = (F_max/L_CEopt)(s − length + L_slack)` at contraction
    /// state `s` (m), which only records the fibre: the force `F` (N, the module's formula) is
    /// the elastic residual at `s = length − L_slack`, `ṡ = rate` with `F_SEE` taken away, and
    /// its partials `∂F/∂L_M` ([`Contraction::force_d_length`]), `∂F/∂a`, `∂F/∂L̇_M`.
    pub fn rigid(&self, a: f64, s: f64, length: f64, rate: f64) -> Contraction {
        let p = &self.params;
        let fibre = length - p.tendon_slack_length;
        let c = self.contraction(a, fibre, rate, length);
        let k = rigid_row_scale(p);
        Contraction {
            residual: k * (s - fibre),
            d_a: 0.0,
            d_s: k,
            d_sdot: 0.0,
            d_length: -k,
            force: c.force - c.residual,
            force_d_length: -(c.d_s - c.force_d_s),
            force_d_s: 0.0,
            force_d_a: -c.d_a,
            force_d_rate: -c.d_sdot,
        }
    }

    /// The muscle's row and force: [`Self::contraction`] for an elastic tendon (`rate` unused),
    /// [`Self::rigid`] for a rigid one (`sdot` unused).
    pub fn row(&self, a: f64, s: f64, sdot: f64, length: f64, rate: f64) -> Contraction {
        if self.is_rigid() { self.rigid(a, s, length, rate) } else { self.contraction(a, s, sdot, length) }
    }

    /// The activation residual `f_a` and its partials `(∂/∂a, ∂/∂ȧ, ∂/∂u)`.
    pub fn activation(&self, a: f64, adot: f64, u: f64) -> (f64, f64, f64, f64) {
        if let Curves::DeGrooteFregly2016(_) = self.params.curves {
            let da = self.activation_rate_t(Dual64::new(a, 1.0), Dual64::from(u));
            let du = self.activation_rate_t(Dual64::from(a), Dual64::new(u, 1.0));
            return (adot - da.re, -da.eps, 1.0, -du.eps);
        }
        let (ta, td) = (self.params.activation_time, self.params.deactivation_time);
        let rate = u / ta + (1.0 - u) / td;
        (adot - rate * (u - a), rate, 1.0, -((1.0 / ta - 1.0 / td) * (u - a) + rate))
    }

    /// The activation dynamics' fastest rate (s⁻¹): the largest `|∂ȧ/∂a|` over `a` and `u` in
    /// `[0, 1]`. DAS3's `ȧ = (u/T_act + (1 − u)/T_deact)(u − a)` is linear in `a`, its rate
    /// the larger of `1/T_act` and `1/T_deact`; De Groote et al.'s is the largest on a grid of
    /// 0.05 in both, with a quarter more for what lies between the points.
    pub fn fastest_activation_rate(&self) -> f64 {
        let (ta, td) = (self.params.activation_time, self.params.deactivation_time);
        if let Curves::Das3 = self.params.curves {
            return (1.0 / ta).max(1.0 / td);
        }
        let grid = || (0..=20).map(|i| f64::from(i) / 20.0);
        let largest = grid()
            .flat_map(|a| grid().map(move |u| (a, u)))
            .map(|(a, u)| self.activation_rate_t(Dual64::new(a, 1.0), Dual64::from(u)).eps.abs())
            .fold(0.0, f64::max);
        1.25 * largest
    }

    /// `ȧ` for excitation `u` (eq. 1).
    pub fn activation_rate(&self, a: f64, u: f64) -> f64 {
        self.activation_rate_t(a, u)
    }

    /// `ȧ` for excitation `u` over dual numbers: eq. 1 of Chadwick et al. (2014) or De Groote et
    /// al.'s smooth switch.
    fn activation_rate_t<T: DualNum<Primitive = f64> + Copy>(&self, a: T, u: T) -> T {
        let (ta, td) = (self.params.activation_time, self.params.deactivation_time);
        match &self.params.curves {
            Curves::Das3 => (u / ta + (-u + 1.0) / td) * (u - a),
            Curves::DeGrooteFregly2016(d) => dgf::activation_rate(a, u, ta, td, d.activation_smoothing),
        }
    }

    /// The contraction state at which the muscle is in isometric equilibrium (`ṡ = 0`,
    /// `f_s = 0`) at path length `length` and active state `a`, by safeguarded Newton on the
    /// residual; `None` if there is none with a positive fibre length (the path is too short).
    pub fn isometric_state(&self, a: f64, length: f64) -> Option<f64> {
        if self.is_rigid() {
            // the fibre follows the path; a path shorter than the tendon leaves none
            let s = length - self.params.tendon_slack_length;
            return (s > 0.0).then_some(s);
        }
        // bracketed: at a vanishing fibre the stretched tendon pulls harder than the fibres, at
        // a slack tendon less (bisection keeps the bracket, Newton speeds it up)
        let (lo, mut hi) = (1e-9 * self.params.optimal_fibre_length, length - self.params.tendon_slack_length);
        let f = |s: f64| self.contraction(a, s, 0.0, length);
        if hi <= lo {
            hi = lo + self.params.optimal_fibre_length;
        }
        if f(lo).residual < 0.0 {
            return None;
        }
        // a path shorter than slack tendon and fibres together: both elastic elements are slack
        // and only their small linear terms (k₁) balance, possibly with the fibre longer than the
        // path; widen the bracket until the residual changes sign
        let mut widen = 0;
        while f(hi).residual > 0.0 {
            hi += self.params.optimal_fibre_length;
            widen += 1;
            if widen > 20 {
                return None;
            }
        }
        let residual = |s: f64| {
            let c = f(s);
            (c.residual, c.d_s)
        };
        Some(decreasing_root(residual, (lo, hi), 0.5 * (lo + hi), 1e-12 * self.params.max_force, 1e-15 * length))
    }

    /// The force (N) of the muscle held isometric at activation `a` and path length `length`
    /// (m): a rigid tendon's at rest ([`Self::rigid`]), an elastic one's tendon force in the
    /// equilibrium of [`Self::isometric_state`] (`None` without one).
    pub fn isometric_force(&self, a: f64, length: f64) -> Option<f64> {
        if self.is_rigid() {
            return Some(self.rigid(a, 0.0, length, 0.0).force);
        }
        self.isometric_state(a, length).map(|s| self.tendon(length - s).0)
    }

    /// Fibre length, velocity, pennation and forces at a state, for output; a rigid tendon's
    /// fibre is the path's (`s = length − L_slack`, `sdot` the path's velocity).
    pub fn state(&self, a: f64, s: f64, sdot: f64, length: f64) -> MuscleState {
        let s = if self.is_rigid() { length - self.params.tendon_slack_length } else { s };
        let (lce, cos, _, _) = self.fibre(s);
        let v = sdot * cos;
        let active = a * self.params.max_force * self.force_length(lce).0 * self.force_velocity(v).0;
        MuscleState {
            fibre_length: lce,
            fibre_velocity: v,
            pennation: cos.clamp(-1.0, 1.0).acos(),
            active_force: active,
            passive_force: self.parallel(lce).0,
            force: if self.is_rigid() { self.rigid(a, s, length, sdot).force } else { self.tendon(length - s).0 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn muscle(pennation: f64) -> HillMuscle {
        HillMuscle::new(HillParams::new(500.0, 0.1, 0.2, pennation, 0.015, 0.06))
    }

    /// DAS3's muscle and one with De Groote et al.'s curves, away from OpenSim's defaults (the
    /// second partials' tests use them too).
    pub(super) fn both(pennation: f64) -> [HillMuscle; 2] {
        let mut p = HillParams::de_groote_fregly_2016(500.0, 0.1, 0.2, pennation, 0.015, 0.06);
        p.curves = Curves::DeGrooteFregly2016(DeGrooteFregly {
            active_force_width_scale: 1.2,
            fiber_damping: 0.05,
            passive_fiber_strain: 0.5,
            activation_smoothing: 10.0,
            passive: true,
        });
        [muscle(pennation), HillMuscle::new(p)]
    }

    #[test]
    fn force_velocity_is_continuous_in_value_and_slope_at_zero() {
        let m = muscle(0.0);
        let (f0, d0) = m.force_velocity(0.0);
        let (fm, dm) = m.force_velocity(-1e-12);
        assert_eq!(f0, 1.0);
        assert!((fm - 1.0).abs() < 1e-10);
        // both slopes equal (1 + 1/A)/V_max at 0 by the choice of c₃ (eq. 16)
        let want = (1.0 + 1.0 / 0.25) / (10.0 * 0.1);
        assert!((d0 - want).abs() < 1e-12 * want, "{d0} vs {want}");
        assert!((dm - want).abs() < 1e-9 * want, "{dm} vs {want}");
        // the curve's limits: 0 at −V_max, g_max far into lengthening
        assert!(m.force_velocity(-1.0).0.abs() < 1e-15);
        assert!((m.force_velocity(1e9).0 - 1.5).abs() < 1e-6);
    }

    #[test]
    fn the_fastest_activation_rate_bounds_the_rates_slope() {
        // the slope by central differences on a grid five times finer than the bound's
        for m in both(0.0) {
            let h = 1e-6;
            let grid = || (0..=100).map(|i| f64::from(i) / 100.0);
            let slope = grid()
                .flat_map(|a| grid().map(move |u| (a, u)))
                .map(|(a, u)| ((m.activation_rate(a + h, u) - m.activation_rate(a - h, u)) / (2.0 * h)).abs())
                .fold(0.0, f64::max);
            let bound = m.fastest_activation_rate();
            // the differences' round-off, 1e-6 of the slope
            assert!(bound >= slope * (1.0 - 1e-6), "{bound} below {slope}");
            if let Curves::Das3 = m.params.curves {
                // attained at u = 1: 1/T_act (1/T_deact is the smaller here)
                assert!((bound - 1.0 / m.params.activation_time.min(m.params.deactivation_time)).abs() < 1e-12);
                assert!((bound - slope).abs() < 1e-6 * bound, "{bound} vs {slope}");
            } else {
                assert!(bound <= 1.5 * slope, "{bound} against {slope}");
            }
        }
    }

    #[test]
    fn the_elastic_elements_reach_their_defining_forces() {
        let m = muscle(0.0);
        // SEE: F_max (+ the k₁ term) at 4 % strain
        let (f, _) = m.tendon(0.2 * 1.04);
        assert!((f - (500.0 + 10.0 * 0.008)).abs() < 1e-9, "{f}");
        // PEE: F_max (+ k₁) at an elongation of W L_opt
        let (f, _) = m.parallel(0.1 * 1.56);
        assert!((f - (500.0 + 10.0 * 0.056)).abs() < 1e-9, "{f}");
    }

    #[test]
    fn the_partials_are_the_residuals_derivatives() {
        for m in [0.0, 0.4].into_iter().flat_map(both) {
            for (a, s, sdot, l) in [(0.3, 0.098, -0.05, 0.3), (0.9, 0.11, 0.2, 0.315), (0.05, 0.09, 0.0, 0.295)] {
                let c = m.contraction(a, s, sdot, l);
                let h = 1e-7;
                let fd = |f: &dyn Fn(f64) -> f64, x: f64| (f(x + h) - f(x - h)) / (2.0 * h);
                let r = |a: f64, s: f64, sd: f64, l: f64| m.contraction(a, s, sd, l).residual;
                let checks = [
                    (c.d_a, fd(&|x| r(x, s, sdot, l), a)),
                    (c.d_s, fd(&|x| r(a, x, sdot, l), s)),
                    (c.d_sdot, fd(&|x| r(a, s, x, l), sdot)),
                    (c.d_length, fd(&|x| r(a, s, sdot, x), l)),
                    (c.force_d_s, fd(&|x| m.contraction(a, x, sdot, l).force, s)),
                    (c.force_d_length, fd(&|x| m.contraction(a, s, sdot, x).force, l)),
                ];
                for (k, (exact, numeric)) in checks.iter().enumerate() {
                    assert!((exact - numeric).abs() < 1e-5 * (1.0 + exact.abs()), "{k}: {exact} vs {numeric}");
                }
            }
        }
    }

    #[test]
    fn the_active_force_is_the_appendix_formula() {
        // a fully active fibre at optimal length, no pennation, moving at constant velocity v:
        // the CE's force is F_max f_FV(v), written here from eq. 15 directly
        let m = muscle(0.0);
        let (vmax, a, g) = (1.0, 0.25, 1.5);
        let c3 = vmax * a * (g - 1.0) / (a + 1.0);
        for v in [-0.8, -0.3, -0.01, 0.0, 0.05, 0.4, 2.0] {
            let fv = if v <= 0.0 { (vmax + v) / (vmax - v / a) } else { (g * v + c3) / (v + c3) };
            let st = m.state(1.0, 0.1, v, 0.3);
            assert!((st.active_force - 500.0 * fv).abs() < 1e-10, "v = {v}");
            assert_eq!(st.passive_force, 0.0);
        }
    }

    #[test]
    fn isometric_equilibrium_balances_the_branches() {
        for pen in [0.0, 0.35] {
            let m = muscle(pen);
            // the last: a path shorter than tendon slack and fibres, elastic elements slack
            for (a, l) in [(1.0, 0.3), (0.2, 0.32), (0.0, 0.35), (1.0, 0.36), (0.0, 0.25)] {
                let s = m.isometric_state(a, l).expect("an equilibrium");
                let st = m.state(a, s, 0.0, l);
                let cos = st.pennation.cos();
                let fl = (-((st.fibre_length - 0.1) / 0.056).powi(2)).exp();
                let balance = st.force - (a * 500.0 * fl + st.passive_force) * cos;
                assert!(balance.abs() < 1e-9, "pen {pen} a {a} l {l}: {balance}");
            }
        }
    }

    /// DAS3's contraction rate in closed form is the root the safeguarded Newton steps find, on
    /// both branches of the force-velocity curve, with and without pennation and damping, the
    /// tendon slack or taut, the fibre at rest, shortening past `v_max` and lengthening.
    #[test]
    fn the_closed_form_contraction_rate_is_the_residuals_root() {
        let mut found = [0usize; 2];
        for pen in [0.0, 0.35] {
            for damping in [None, Some(0.0)] {
                let mut m = muscle(pen);
                if let Some(d) = damping {
                    m.params.damping = d;
                }
                let vmax = m.params.vmax * m.params.optimal_fibre_length;
                let ftol = 1e-13 * m.params.max_force;
                for a in [0.0, 0.01, 0.3, 1.0] {
                    for s in [0.05, 0.08, 0.1, 0.12, 0.15] {
                        for length in [0.24, 0.28, 0.3, 0.31, 0.33, 0.36] {
                            let closed = m.das3_contraction_rate(a, s, length, ftol);
                            let Some(newton) = crate::integrate::bracketed_contraction_rate(&m, a, s, length, ftol)
                            else {
                                assert_eq!(closed, None, "pen {pen} a {a} s {s} l {length}: no root");
                                continue;
                            };
                            let sd = closed.unwrap_or_else(|| panic!("pen {pen} a {a} s {s} l {length}: {newton}"));
                            assert!(
                                (sd - newton).abs() <= 1e-9 * vmax.max(newton.abs()),
                                "pen {pen} a {a} s {s} l {length}: {sd} against {newton}"
                            );
                            assert!(m.contraction(a, s, sd, length).residual.abs() <= ftol);
                            found[usize::from(sd < 0.0)] += 1;
                        }
                    }
                }
            }
        }
        // both branches were met
        assert!(found[0] > 20 && found[1] > 20, "{found:?}");
    }

    /// An inactive muscle of De Groote et al. without fibre damping (OpenSim's default) has a
    /// residual that does not depend on `ṡ`; in isometric equilibrium its rate is 0 (a muscle at
    /// rest), found although the residual has no root to bracket.
    #[test]
    fn an_undamped_inactive_muscle_at_equilibrium_rests() {
        let mut p = HillParams::de_groote_fregly_2016(500.0, 0.1, 0.2, 0.2, 0.015, 0.06);
        p.curves = Curves::DeGrooteFregly2016(DeGrooteFregly::default());
        let m = HillMuscle::new(p);
        let s = m.isometric_state(0.0, 0.31).expect("an equilibrium");
        assert_eq!(m.contraction(0.0, s, 0.0, 0.31).d_sdot, 0.0);
        assert_eq!(crate::integrate::contraction_rate(&m, 0.0, s, 0.31), Some(0.0));
    }

    /// A rigid tendon's force: its partials against central differences, and at optimal
    /// length without pennation DAS3's closed form `a F_max f_V(L̇) + β F_max L̇ / L_CEopt`.
    #[test]
    fn a_rigid_tendons_force_and_its_partials() {
        for mut m in [0.0, 0.4].into_iter().flat_map(both) {
            m.params.tendon = Tendon::Rigid;
            for (a, s, l, rate) in [(0.3, 0.09, 0.302, -0.05), (0.9, 0.12, 0.317, 0.2), (0.05, 0.1, 0.296, 0.0)] {
                let c = m.rigid(a, s, l, rate);
                assert_eq!(c, m.row(a, s, 1e3, l, rate));
                let h = 1e-7;
                let fd = |f: &dyn Fn(f64) -> f64, x: f64| (f(x + h) - f(x - h)) / (2.0 * h);
                let force = |a: f64, l: f64, r: f64| m.rigid(a, s, l, r).force;
                let row = |s: f64, l: f64| m.rigid(a, s, l, rate).residual;
                let checks = [
                    (c.force_d_a, fd(&|x| force(x, l, rate), a)),
                    (c.force_d_length, fd(&|x| force(a, x, rate), l)),
                    (c.force_d_rate, fd(&|x| force(a, l, x), rate)),
                    (c.force_d_s, fd(&|x| m.rigid(a, x, l, rate).force, s)),
                    (c.d_s, fd(&|x| row(x, l), s)),
                    (c.d_length, fd(&|x| row(s, x), l)),
                ];
                for (k, (exact, numeric)) in checks.iter().enumerate() {
                    assert!((exact - numeric).abs() < 1e-5 * (1.0 + exact.abs()), "{k}: {exact} vs {numeric}");
                }
                assert!(c.force_d_rate > 0.0 && c.d_sdot == 0.0 && c.d_a == 0.0);
            }
        }
        let mut m = muscle(0.0);
        m.params.tendon = Tendon::Rigid;
        let (vmax, ha, g) = (1.0, 0.25, 1.5);
        let c3 = vmax * ha * (g - 1.0) / (ha + 1.0);
        for (a, v) in [(1.0, -0.3), (0.4, 0.0), (0.7, 0.2)] {
            let fv = if v <= 0.0 { (vmax + v) / (vmax - v / ha) } else { (g * v + c3) / (v + c3) };
            let want = a * 500.0 * fv + 0.001 * 500.0 * v / 0.1;
            let got = m.rigid(a, 0.0, 0.3, v).force;
            assert!((got - want).abs() < 1e-9 * want, "a {a} v {v}: {got} vs {want}");
        }
    }

    /// The isometric force: an elastic muscle's tendon force where its contraction residual
    /// vanishes at rest, and a rigid one's DAS3 closed form at optimal fibre length without
    /// pennation, `a F_max` (the PEE slack there).
    #[test]
    fn the_isometric_force_of_an_elastic_and_a_rigid_tendon() {
        let m = muscle(0.0);
        for (a, l) in [(0.3, 0.305), (0.8, 0.31)] {
            let s = m.isometric_state(a, l).expect("an equilibrium");
            let f = m.isometric_force(a, l).expect("a force");
            assert!(m.contraction(a, s, 0.0, l).residual.abs() < 1e-9 * 500.0);
            assert!((f - m.tendon(l - s).0).abs() < 1e-12 * 500.0 && f > 0.0, "{f}");
        }
        let mut r = muscle(0.0);
        r.params.tendon = Tendon::Rigid;
        for a in [0.0, 0.4, 1.0] {
            let f = r.isometric_force(a, 0.2 + 0.1).expect("a force");
            assert!((f - a * 500.0).abs() < 1e-9, "a {a}: {f}");
        }
    }

    /// An elastic tendon made stiffer and stiffer tends to the rigid one: at the fibre state
    /// where the elastic residual vanishes with `ṡ = L̇` the tendon force approaches the rigid
    /// force, the difference falling with the tendon's strain at `F_max`.
    #[test]
    fn a_stiff_elastic_tendon_tends_to_the_rigid_one() {
        for m in [0.0, 0.4].into_iter().flat_map(both) {
            let mut rigid = m;
            rigid.params.tendon = Tendon::Rigid;
            for (a, l, rate) in [(0.6, 0.31, -0.1), (0.2, 0.3, 0.05), (1.0, 0.305, 0.0)] {
                let want = rigid.rigid(a, 0.0, l, rate).force;
                let mut last = f64::INFINITY;
                for strain in [1e-3, 1e-4, 1e-5] {
                    let mut p = m.params;
                    p.see_strain = strain;
                    let e = HillMuscle::new(p);
                    let f = |s: f64| {
                        let c = e.contraction(a, s, rate, l);
                        (c.residual, c.d_s)
                    };
                    let s = decreasing_root(f, (0.5 * (l - 0.2), l - 0.2 + 0.01), l - 0.2, 1e-12, 1e-15);
                    let diff = (e.contraction(a, s, rate, l).force - want).abs();
                    assert!(diff < 0.5 * last + 1e-9, "strain {strain}: {diff} after {last}");
                    last = diff;
                }
                assert!(last < 1e-3 * want.abs().max(1.0), "a {a} l {l} rate {rate}: {last} from {want}");
            }
        }
    }

    #[test]
    fn activation_partials() {
        for m in both(0.0) {
            // rising and falling
            for (u, a, ad) in [(0.7, 0.2, 3.0), (0.1, 0.6, -2.0)] {
                let (f, da, dad, du) = m.activation(a, ad, u);
                assert!((f - (ad - m.activation_rate(a, u))).abs() < 1e-14);
                let h = 1e-7;
                let fd = |g: &dyn Fn(f64) -> f64, x: f64| (g(x + h) - g(x - h)) / (2.0 * h);
                let (nda, ndu) = (fd(&|x| m.activation(x, ad, u).0, a), fd(&|x| m.activation(a, ad, x).0, u));
                assert!((da - nda).abs() < 1e-6 * (1.0 + da.abs()), "{da} vs {nda}");
                assert_eq!(dad, 1.0);
                assert!((du - ndu).abs() < 1e-6 * (1.0 + du.abs()), "{du} vs {ndu}");
            }
        }
    }
}
