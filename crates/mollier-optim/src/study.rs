//! What a load-sharing study is made of: the muscles (active elements), the criterion, sign
//! constraints on reactions, the joint cone and the reserve actuators.

use std::fmt;
use std::str::FromStr;

use mollier_core::geometry::Mat3;
use mollier_core::{ElementId, ModeId, NodeId};

/// Specific tension of muscle (N/m²): 100 N/cm², Chadwick et al. (2014) App. A.
pub const DEFAULT_SPECIFIC_TENSION: f64 = 1.0e6;
/// Width `W` of the Gaussian force-length curve, Chadwick et al. (2014) eq. 13.
pub const DEFAULT_WIDTH: f64 = 0.56;
/// Relative tolerance of the independent checks of every solution.
pub const DEFAULT_TOLERANCE: f64 = 1e-6;
/// Relative slack `δ` of criterion (d)'s second stage: every stress may exceed the least maximum
/// stress `t*` by `δ t*` (1 %). With `δ = 0` the forces are unique but jump where the set of
/// muscles at the maximum changes (20 N in 0.1° in the shoulder study); with `δ > 0` they are
/// continuous, with a slope of order `1/δ` there. 1 % is far below the uncertainty of the PCSAs
/// that define the stresses (tens of %), and keeps the largest change of any element's force in
/// the shoulder study under 7 N per degree of elevation (see `docs/theory/optimization.md`).
pub const DEFAULT_MAX_STRESS_SLACK: f64 = 0.01;

/// A reserve weight that makes a reserve expensive for every criterion (see [`Reserve`]): a
/// reserve then carries about `1/weight` of what a muscle could (a part in 10⁻⁴ on the elbow for
/// every criterion, `crates/mollier/tests/load_sharing.rs`).
pub const RESERVE_WEIGHT: f64 = 1.0e4;
/// A reserve carrying more than this share of its input's driving force (1 %) is reported:
/// `FrameResult::reserve_shares`, the warnings of `mollier inverse` and studies.
pub const RESERVE_WARNING_SHARE: f64 = 0.01;

/// A muscle element: an active TRUSS or CURVED-TRUSS whose force is an unknown.
#[derive(Clone, Debug, PartialEq)]
pub struct Muscle {
    /// The element's `elongation` mode; it must be dependent (released). Its stress is the
    /// muscle force, N, positive in tension.
    pub mode: ModeId,
    /// Physiological cross-sectional area attributed to this element (m²).
    pub pcsa: f64,
    /// Length of the element at zero elongation (m): the current length is this plus the
    /// elongation.
    pub reference_length: f64,
    /// Optimal length of the force-length curve (m); `None` takes the reference length. With a
    /// tendon slack length, the optimal length of the fibres.
    pub optimal_length: Option<f64>,
    /// Tendon slack length (m, default 0): the force-length curve is a function of the fibre
    /// length, the muscle's length minus this (a rigid tendon, as OpenSim's static
    /// optimization; Chadwick et al. (2014) eq. 13 applies to the contractile element).
    pub tendon_slack: f64,
}

impl Muscle {
    /// A muscle on mode `mode` with PCSA (m²) and reference length (m).
    pub fn new(mode: ModeId, pcsa: f64, reference_length: f64) -> Self {
        Self { mode, pcsa, reference_length, optimal_length: None, tendon_slack: 0.0 }
    }

    /// With a tendon slack length (m): the force-length curve then takes the fibre length.
    pub fn with_tendon_slack(mut self, length: f64) -> Self {
        self.tendon_slack = length;
        self
    }

    /// With an explicit optimal length (m).
    pub fn with_optimal_length(mut self, length: f64) -> Self {
        self.optimal_length = Some(length);
        self
    }

    /// The optimal length (m).
    pub fn l_opt(&self) -> f64 {
        self.optimal_length.unwrap_or(self.reference_length)
    }

    /// The force-length factor `g(l) = exp(−((l − l_s − l_opt)/(W l_opt))²)` at muscle length
    /// `l` (m) for width `w` (Chadwick et al. 2014, eq. 13), `l − l_s` the fibre length (`l_s` the tendon
    /// slack length, rigid tendon); `w = ∞` gives 1.
    pub fn force_length(&self, l: f64, w: f64) -> f64 {
        let lo = self.l_opt();
        let x = (l - self.tendon_slack - lo) / (w * lo);
        (-x * x).exp()
    }

    /// `Fmax(l) = PCSA · specific_tension · g(l)` (N).
    pub fn max_force(&self, l: f64, specific_tension: f64, w: f64) -> f64 {
        self.pcsa * specific_tension * self.force_length(l, w)
    }
}

/// The load-sharing criterion (van der Helm 1994, "Results": criteria a-d).
#[derive(Clone, Debug, PartialEq)]
pub enum Criterion {
    /// (a) `min Σ F²` (N²).
    Forces,
    /// (b) `min Σ (F/PCSA)²` ((N/m²)²).
    Stresses,
    /// (c) `min Σ (F/Fmax(l))²` (dimensionless): squared activations.
    Activations,
    /// (d) `min max F/PCSA` (N/m²), lexicographic: first the least maximum stress `t*` (an
    /// epigraph), then the least `Σ (F/PCSA)²` with every stress at most `t* (1 + δ)`,
    /// `δ = Study::max_stress_slack` (a second stage), which makes the forces unique and
    /// continuous along a motion.
    MaxStress,
    /// `min Σ (F/PCSA)³` ((N/m²)³), Crowninshield & Brand (1981): sum of cubed stresses, through
    /// one power cone per muscle. It spreads the load more evenly over the muscles than (b).
    CubedStresses,
    /// `min Σ w_i F_i²`, one weight `w_i > 0` per muscle (N⁻² or any consistent unit).
    Weighted(Vec<f64>),
}

impl Criterion {
    /// A short name: `a`, `b`, `c`, `d`, `cb` (cubed stresses) or `weighted`.
    pub fn letter(&self) -> &'static str {
        match self {
            Criterion::Forces => "a",
            Criterion::Stresses => "b",
            Criterion::Activations => "c",
            Criterion::MaxStress => "d",
            Criterion::CubedStresses => "cb",
            Criterion::Weighted(_) => "weighted",
        }
    }
}

impl fmt::Display for Criterion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Criterion::Forces => "a: min sum F^2",
            Criterion::Stresses => "b: min sum (F/PCSA)^2",
            Criterion::Activations => "c: min sum (F/Fmax(l))^2",
            Criterion::MaxStress => "d: min max F/PCSA",
            Criterion::CubedStresses => "cb: min sum (F/PCSA)^3",
            Criterion::Weighted(_) => "weighted: min sum w F^2",
        };
        f.write_str(s)
    }
}

/// Parses `a`..`d` (or `forces`, `stresses`, `activations`, `max-stress`), `cb` (or
/// `cubed-stresses`, `crowninshield`) and `so` (or `opensim`, `static-optimization`).
///
/// `so` is OpenSim StaticOptimization's criterion, `Σ a²` with activation `a = F/Fmax(l)`: in a
/// static frame that is criterion (c) itself (OpenSim's force is `a · Fmax · f_l(l) · f_v(v)` with
/// `f_v(0) = 1`), so it parses to [`Criterion::Activations`] and runs as (c).
impl FromStr for Criterion {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "a" | "forces" => Ok(Criterion::Forces),
            "b" | "stresses" => Ok(Criterion::Stresses),
            "c" | "activations" | "so" | "opensim" | "static-optimization" => Ok(Criterion::Activations),
            "d" | "max-stress" | "minmax" => Ok(Criterion::MaxStress),
            "cb" | "cubed-stresses" | "crowninshield" => Ok(Criterion::CubedStresses),
            other => Err(format!("unknown criterion `{other}` (expected a, b, c, d, cb or so)")),
        }
    }
}

/// The allowed sign of a reaction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sign {
    /// `σ <= 0`: a SURFACE element, a contact.
    Compression,
    /// `σ >= 0`: a ligament.
    Tension,
}

/// A sign constraint on the reaction (stress) of a fixed mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SignConstraint {
    /// The mode; it must be fixed (its stress is a reaction).
    pub mode: ModeId,
    /// Allowed sign.
    pub sign: Sign,
}

/// The stability cone of a joint (van der Helm 1994, App. C; Chadwick et al. (2014) eq. 9): the force that the joint
/// node exerts on `elements` (e.g. the humeral head on the scapula's elements at the GH node),
/// expressed in a frame fixed to a body, must lie in the elliptic cone
/// `(F_y/tan θ_a)² + (F_z/tan φ_a)² <= F_x²`, `F_x >= 0`.
#[derive(Clone, Debug, PartialEq)]
pub struct JointCone {
    /// The joint's position node.
    pub node: NodeId,
    /// The elements the node pushes on; each must have the node among its nodes.
    pub elements: Vec<ElementId>,
    /// Orientation node of the body that carries the cone (e.g. the scapula).
    pub body: NodeId,
    /// The cone frame in the body frame: column `c` holds cone axis `c` in body coordinates
    /// (`v_body = R v_cone`). Cone-frame x is the cone axis, pointing into the socket.
    pub rotation: Mat3,
    /// Half-angle `θ_a` (rad, in (0, π/2)) towards cone-frame y.
    pub half_angle_y: f64,
    /// Half-angle `φ_a` (rad, in (0, π/2)) towards cone-frame z.
    pub half_angle_z: f64,
    /// Impose the cone as a constraint; otherwise only report the stability index.
    pub enforce: bool,
}

/// A reserve actuator on one input: an ideal motor whose driving force `r` (N m for an angle
/// input, N for a length) costs `weight · C · (r/ρ)²` in the criterion's own units, so that one
/// weight means the same for every criterion. `ρ` is the input's scale in the frame (the largest
/// driving force one muscle makes on it at full force, or the load's if larger; N m or N); `C`
/// the most expensive muscle at full force in the criterion's units (`max_i` of `Fmax_i²`,
/// `(Fmax_i/PCSA_i)²`, 1 or `w_i Fmax_i²` for (a), (b), (c), weighted; the specific tension `T`
/// for (d), whose first stage is `max F/PCSA`). A reserve as strong as the strongest muscle thus
/// costs `weight` times that muscle at full force. Make it expensive
/// ([`RESERVE_WEIGHT`]); its share is reported ([`RESERVE_WARNING_SHARE`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reserve {
    /// Index of the input (generalized coordinate) in `q`.
    pub input: usize,
    /// Cost weight (> 0).
    pub weight: f64,
}

/// A load-sharing study: muscles, criterion and constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct Study {
    /// The active elements, in output order.
    pub muscles: Vec<Muscle>,
    /// The criterion.
    pub criterion: Criterion,
    /// Specific tension (N/m²), turning PCSA into maximal force.
    pub specific_tension: f64,
    /// Width `W` of the force-length curve (`f64::INFINITY`: no length dependence).
    pub width: f64,
    /// Sign constraints on reactions of fixed modes.
    pub signs: Vec<SignConstraint>,
    /// Joint stability cone, imposed or only reported.
    pub cone: Option<JointCone>,
    /// Reserve actuators (at most one per input).
    pub reserves: Vec<Reserve>,
    /// Relative tolerance of the independent checks of each solution (equilibrium, bounds,
    /// signs, cone), relative to the scale of each constraint.
    pub tolerance: f64,
    /// Relative slack `δ >= 0` of criterion (d)'s second stage (dimensionless; default
    /// [`DEFAULT_MAX_STRESS_SLACK`]): the stresses are capped at `t* (1 + δ)`. `0` gives the
    /// strict lexicographic optimum, unique but discontinuous where the muscles at the maximum
    /// change. Unused by the other criteria.
    pub max_stress_slack: f64,
}

impl Study {
    /// A study with default parameters: no sign constraints, no cone, no reserves.
    pub fn new(muscles: Vec<Muscle>, criterion: Criterion) -> Self {
        Self {
            muscles,
            criterion,
            specific_tension: DEFAULT_SPECIFIC_TENSION,
            width: DEFAULT_WIDTH,
            signs: Vec::new(),
            cone: None,
            reserves: Vec::new(),
            tolerance: DEFAULT_TOLERANCE,
            max_stress_slack: DEFAULT_MAX_STRESS_SLACK,
        }
    }
}

/// Why a study cannot be set up on a model.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SetupError {
    /// A muscle is not usable.
    #[error("muscle #{index} ({name}): {message}")]
    Muscle {
        /// Index in `Study::muscles`.
        index: usize,
        /// Its mode (`element.mode`) when known.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// A sign constraint is not usable.
    #[error("sign constraint #{index} ({name}): {message}")]
    Sign {
        /// Index in `Study::signs`.
        index: usize,
        /// Its mode when known.
        name: String,
        /// What is wrong.
        message: String,
    },
    /// The joint cone is not usable.
    #[error("joint cone: {0}")]
    Cone(String),
    /// A reserve actuator is not usable.
    #[error("reserve #{index}: {message}")]
    Reserve {
        /// Index in `Study::reserves`.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// A study-wide parameter is out of range.
    #[error("{0}")]
    Parameter(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn criteria_parse_by_letter_and_by_name() {
        for (s, c) in [
            ("cb", Criterion::CubedStresses),
            ("Crowninshield", Criterion::CubedStresses),
            ("so", Criterion::Activations),
            ("opensim", Criterion::Activations),
            ("d", Criterion::MaxStress),
        ] {
            assert_eq!(s.parse::<Criterion>(), Ok(c));
        }
        assert!("e".parse::<Criterion>().unwrap_err().contains("cb or so"));
        assert_eq!(Criterion::CubedStresses.letter(), "cb");
    }
}
