//! Mollier's De Groote et al. (2016) curve set against OpenSim 4.6's `DeGrooteFregly2016Muscle`
//! itself: its curves, its implicit tendon dynamics' equilibrium residual, its activation
//! rate and a rigid tendon's force (`ignore_tendon_compliance`), evaluated by OpenSim at the points of `tests/data/opensim_dgf.csv`
//! (`tools/peer_opensim_dgf.py`, whose text says what each row holds).

use mollier_sim::{Curves, DeGrooteFregly, HillMuscle, HillParams, Tendon};

/// The script's two muscles: OpenSim's defaults, and one differing in every parameter.
fn muscles() -> [HillMuscle; 2] {
    let defaults = HillParams::de_groote_fregly_2016(500.0, 0.1, 0.2, 0.0, 0.015, 0.06);
    let mut other = HillParams::de_groote_fregly_2016(500.0, 0.1, 0.2, 0.3, 0.02, 0.07);
    other.vmax = 8.0;
    other.see_strain = 0.06;
    other.curves = Curves::DeGrooteFregly2016(DeGrooteFregly {
        active_force_width_scale: 1.3,
        fiber_damping: 0.05,
        passive_fiber_strain: 0.5,
        activation_smoothing: 10.0,
        passive: true,
    });
    [HillMuscle::new(defaults), HillMuscle::new(other)]
}

/// Every row's OpenSim value beside Mollier's, within 1e-10 of the larger of the value and 1
/// (the curves and the residual are in units of `F_max`, the activation rate in 1/s).
#[test]
fn the_de_groote_fregly_curves_are_opensims_to_1e_10() {
    let text = include_str!("data/opensim_dgf.csv");
    let muscles = muscles();
    let (mut worst, mut count) = (0.0f64, 0);
    let mut check = |what: &str, mollier: f64, opensim: f64| {
        let err = (mollier - opensim).abs() / opensim.abs().max(1.0);
        worst = worst.max(err);
        count += 1;
        assert!(err <= 1e-10, "{what}: Mollier {mollier} vs OpenSim {opensim}");
    };
    let rows: Vec<(&str, usize, Vec<f64>)> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("kind"))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[0], f[1].parse().expect("a muscle"), f[2..].iter().map(|x| x.parse().expect("a number")).collect())
        })
        .collect();
    for (i, (kind, k, v)) in rows.iter().enumerate() {
        let m = &muscles[*k];
        let p = &m.params;
        let (lopt, fmax) = (p.optimal_fibre_length, p.max_force);
        let what = format!("{kind} of muscle {k} at {:?}", &v[..5]);
        match *kind {
            "fl" => {
                check(&what, m.force_length(v[0] * lopt).0, v[5]);
                check(&what, m.parallel(v[0] * lopt).0 / fmax, v[6]);
            }
            "fv" => check(&what, m.force_velocity(v[0] * p.vmax * lopt).0, v[5]),
            "ft" => check(&what, m.tendon(v[0] * p.tendon_slack_length).0 / fmax, v[5]),
            "residual" => {
                let (a, length, s) = (v[0], v[1], v[6]);
                let sdot = rows[i + 1].2[5];
                let c = m.contraction(a, s, sdot, length);
                check(&what, c.residual / fmax, v[5]);
                check(&what, c.force / fmax, v[3]);
            }
            "sdot" => {}
            "adot" => check(&what, m.activation_rate(v[0], v[1]), v[5]),
            "rigid" => {
                let mut rigid = *m;
                rigid.params.tendon = Tendon::Rigid;
                let (a, length, rate) = (v[0], v[1], v[2]);
                check(&what, rigid.rigid(a, 0.0, length, rate).force / fmax, v[5] / fmax);
                check(&what, rigid.state(a, 0.0, rate, length).fibre_length, v[6]);
            }
            other => panic!("unknown row kind {other}"),
        }
    }
    assert!(count > 100, "{count} values");
    println!("{count} values, worst relative difference {worst:.2e}");
}
