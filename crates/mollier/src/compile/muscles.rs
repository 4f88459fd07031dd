//! The model file's `[muscles]` section compiled: the Hill muscles of forward dynamics
//! (Chadwick et al. 2014), each acting along a path element's elongation.

use mollier_format::{Diagnostic, HillMuscleSpec, MuscleCurves, TendonKind, UnitsSpec};
use mollier_sim::{Curves, HillMuscle, HillParams, Muscle, Tendon};

use super::load_sharing::path_mode;
use super::parts::Context;

/// Default activation time constant (s) when a muscle gives none.
pub const DEFAULT_ACTIVATION_TIME: f64 = 0.015;
/// Default deactivation time constant (s) when a muscle gives none.
pub const DEFAULT_DEACTIVATION_TIME: f64 = 0.060;

/// Compile the `[muscles]` section; every problem found, placed at its field.
pub(crate) fn compile(cx: &Context<'_>) -> Result<Vec<Muscle>, Vec<Diagnostic>> {
    let spec = cx.doc.spec();
    let units = &spec.units;
    let mut out = Vec::with_capacity(spec.muscles.len());
    let mut errors = Vec::new();
    for (name, m) in spec.muscles.iter() {
        let base = format!("muscles.{name}");
        let path = m.path.as_deref().unwrap_or(name);
        let (_, mode, reference_length) = match path_mode(cx, path) {
            Ok(p) => p,
            Err((message, hint)) => {
                let field = if m.path.is_some() { format!("{base}.path") } else { base.clone() };
                let hint =
                    if m.path.is_some() { hint } else { format!("{hint}; or name the element with `path = \"...\"`") };
                errors.push(cx.doc.error(&field, message, hint));
                continue;
            }
        };
        if let Some(other) = out.iter().find(|o: &&Muscle| o.mode == mode) {
            errors.push(cx.doc.error(
                &base,
                format!("muscle `{}` already acts along `{path}`", other.name),
                "give each muscle its own path element",
            ));
            continue;
        }
        let p = params(m, units);
        if let Some((field, why)) = p.problem() {
            errors.push(cx.doc.error(&format!("{base}.{field}"), format!("`{field}` {why}"), "see `mollier schema`"));
            continue;
        }
        out.push(Muscle { name: name.to_string(), mode, reference_length, hill: HillMuscle::new(p) });
    }
    if errors.is_empty() { Ok(out) } else { Err(errors) }
}

/// The parameters of muscle `m` (SI units) of the curve set it names.
fn params(m: &HillMuscleSpec, units: &UnitsSpec) -> HillParams {
    let lopt = units.length_to_si(m.optimal_fibre_length);
    let new = match m.curves.unwrap_or_default() {
        MuscleCurves::Das3 => HillParams::new,
        MuscleCurves::DeGrooteFregly2016 => HillParams::de_groote_fregly_2016,
    };
    let mut p = new(
        m.max_force,
        lopt,
        units.length_to_si(m.tendon_slack_length),
        m.pennation.unwrap_or(0.0) * units.angle_factor(),
        m.activation_time.unwrap_or(DEFAULT_ACTIVATION_TIME),
        m.deactivation_time.unwrap_or(DEFAULT_DEACTIVATION_TIME),
    );
    p.pee_slack_length = m.pee_slack_length.map_or(lopt, |l| units.length_to_si(l));
    p.vmax = m.max_contraction_velocity.unwrap_or(p.vmax);
    p.see_strain = m.tendon_strain_at_one_norm_force.unwrap_or(p.see_strain);
    p.tendon = match m.tendon.unwrap_or_default() {
        TendonKind::Elastic => Tendon::Elastic,
        TendonKind::Rigid => Tendon::Rigid,
    };
    if let Curves::DeGrooteFregly2016(d) = &mut p.curves {
        d.active_force_width_scale = m.active_force_width_scale.unwrap_or(d.active_force_width_scale);
        d.fiber_damping = m.fiber_damping.unwrap_or(d.fiber_damping);
        d.passive_fiber_strain = m.passive_fiber_strain_at_one_norm_force.unwrap_or(d.passive_fiber_strain);
        d.activation_smoothing = m.activation_dynamics_smoothing.unwrap_or(d.activation_smoothing);
        d.passive = !m.ignore_passive_fiber_force.unwrap_or(false);
    }
    p
}
