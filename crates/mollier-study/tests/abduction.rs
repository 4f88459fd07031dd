//! Load sharing in the abduction study, on a few frames (the whole study is a release run:
//! `mollier study models/shoulder/abduction.toml`): every frame solved; equilibrium checked
//! independently by virtual work; the scapula pressed onto the thorax and the conoid pulling;
//! the glenoid constraint respected where imposed, and where it binds the rotator cuff takes
//! the load (van der Helm 1994, "Inverse dynamics").

mod common;

use common::*;
use mollier_optim::{Sign, stability_index};
use mollier_study::{Results, Study};

/// Relative tolerance of the virtual-work equilibrium check: the residual over the largest sum
/// of the magnitudes of the work terms. Central differences with a step of 1e-6 (m, rad) are
/// good to about 1e-8 here; 1e-6 leaves room.
const VIRTUAL_WORK: f64 = 1e-6;
/// Reactions and cone: tolerances (N) on a sign, and on the stability index.
const SIGN: f64 = 1e-6;
const INDEX: f64 = 1e-6;

fn five_frames() -> Study {
    abduction_with(|s| {
        s.motion.frames = 5;
        s.motion.elevation = Some([1.0, 179.0]);
        s.optimisation.margins = Some(vec![1.0]);
    })
}

fn check_variants(study: &Study, r: &Results) {
    for v in &r.variants {
        let name = v.variant.name();
        for (k, f) in v.frames.iter().enumerate() {
            assert!(f.status.is_success(), "{name}, frame {k}: {}", f.status);
            assert!(
                f.forces.iter().zip(&f.max_forces).all(|(x, m)| *x >= -SIGN && *x <= m + SIGN),
                "{name}, frame {k}: bounds"
            );
            let (res, scale) = v.virtual_work[k].unwrap_or_else(|| panic!("{name}, frame {k}: no virtual-work check"));
            assert!(res <= VIRTUAL_WORK * scale, "{name}, frame {k}: virtual work {res} against {scale}");
            for (s, reaction) in study.sharing.signs.iter().zip(&f.reactions) {
                let label = &s.name;
                match s.constraint.sign {
                    Sign::Compression => assert!(*reaction <= SIGN, "{name}, frame {k}: {label} = {reaction} N pulls"),
                    Sign::Tension => assert!(*reaction >= -SIGN, "{name}, frame {k}: {label} = {reaction} N pushes"),
                }
            }
            if v.variant.glenoid {
                let i = f.stability_index.expect("a joint force");
                assert!(i <= INDEX, "{name}, frame {k}: stability index {i} with the constraint");
            }
        }
    }
}

fn cuff_force(study: &Study, forces: &[f64]) -> f64 {
    study.muscles().iter().zip(forces).filter(|(m, _)| ROTATOR_CUFF.contains(&m.muscle.as_str())).map(|(_, f)| f).sum()
}

#[test]
fn every_variant_solves_every_frame_in_equilibrium() {
    let study = five_frames();
    assert_eq!(study.variants.len(), 8);
    let r = study.run();
    check_variants(&study, &r);
    // the check can fail: forces off by 0.1 % leave work undone
    let kin = study.kinematics();
    let v = &r.variants[2];
    for (k, f) in v.frames.iter().enumerate() {
        let mut off = f.clone();
        off.forces.iter_mut().for_each(|x| *x *= 1.001);
        let (res, scale) = study.virtual_work(kin.frames[k].as_ref().unwrap(), &off, &[]).unwrap();
        assert!(res > 10.0 * VIRTUAL_WORK * scale, "frame {k}: a 0.1 % error went unnoticed ({res} against {scale})");
    }
    // the thorax carries the scapula: at least one contact presses at every frame
    for v in &r.variants {
        for f in &v.frames {
            let pressing = study
                .sharing
                .signs
                .iter()
                .zip(&f.reactions)
                .filter(|(s, x)| s.constraint.sign == Sign::Compression && **x < -1.0)
                .count();
            assert!(pressing >= 1, "{}: the scapula floats", v.variant.name());
        }
    }
    // DAS3's glenoid is wide (44° by 39°): in this model the unconstrained optimum of every
    // criterion already points into it at every frame, so the constraint never binds and the
    // variants with and without it agree (the margin below makes it bind)
    for pair in r.variants.chunks(2) {
        let (with, without) = (&pair[0], &pair[1]);
        assert!(with.variant.glenoid && !without.variant.glenoid);
        for (a, b) in with.frames.iter().zip(&without.frames) {
            assert!(b.stability_index.unwrap() < 0.0, "{}: outside without the constraint", without.variant.name());
            let d = a.forces.iter().zip(&b.forces).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
            assert!(d < 1e-3, "{}: the inactive constraint changed a force by {d} N", with.variant.name());
        }
    }
}

#[test]
fn where_a_margin_binds_the_rotator_cuff_takes_the_load() {
    // the force kept within 40 % of DAS3's half-angles (17.7° by 15.4°): the unconstrained
    // joint force leaves that cone at some frames
    let study = abduction_with(|s| {
        s.motion.frames = 5;
        s.optimisation.criteria = vec!["b".into()];
        s.optimisation.margins = Some(vec![0.4]);
    });
    assert_eq!(study.variants.iter().map(|v| v.name()).collect::<Vec<_>>(), ["b-glenoid-k0.4", "b-free"]);
    let r = study.run();
    check_variants(&study, &r);
    let (with, without) = (&r.variants[0], &r.variants[1]);
    let half = study.sharing.cone.as_ref().unwrap().half_angles;
    // the free variant's index is against the rim; against the margin's cone:
    let index =
        |k: usize| stability_index(&without.frames[k].cone_force.unwrap(), 0.4 * half[0], 0.4 * half[1]).unwrap();
    let binding: Vec<usize> = (0..without.frames.len()).filter(|&k| index(k) > 1e-3).collect();
    assert!(!binding.is_empty(), "the margin does not bind: test precondition");
    let mut rise = 0.0;
    for &k in &binding {
        let (a, b) = (&with.frames[k], &without.frames[k]);
        // the constrained force lies on the margin's ellipse (its index is against it), and
        // costs more
        assert!(a.stability_index.unwrap().abs() < 0.05, "frame {k}: index {}", a.stability_index.unwrap());
        assert!(
            a.objective.unwrap() >= b.objective.unwrap() * (1.0 - 1e-9),
            "frame {k}: the constraint lowered the cost"
        );
        rise += cuff_force(&study, &a.forces) - cuff_force(&study, &b.forces);
    }
    // the rotator cuff takes the load (van der Helm 1994): over the binding frames, and most where the
    // force would leave the glenoid furthest (near the rim other muscles may redistribute: at
    // rest the deltoid and the biceps lift the head into the socket, docs/shoulder.md)
    let worst = *binding.iter().max_by(|&&a, &&b| index(a).total_cmp(&index(b))).unwrap();
    let (a, b) = (&with.frames[worst], &without.frames[worst]);
    let (ca, cb) = (cuff_force(&study, &a.forces), cuff_force(&study, &b.forces));
    assert!(ca > cb + 10.0, "frame {worst}: rotator cuff {ca:.1} N with the constraint, {cb:.1} N without");
    assert!(rise > 0.0, "the rotator cuff's force fell over the binding frames ({rise:.1} N)");
}

#[test]
fn a_mass_in_the_hand_is_held_in_equilibrium() {
    let with_load = |load: Option<mollier_study::spec::LoadSpec>| {
        abduction_with(|s| {
            s.motion.frames = 3;
            s.motion.elevation = Some([30.0, 90.0]);
            s.optimisation.criteria = vec!["b".into()];
            s.optimisation.margins = Some(vec![1.0]);
            s.load = load;
        })
    };
    let spec = |mass: Option<f64>, force: Option<[f64; 3]>| {
        Some(mollier_study::spec::LoadSpec { point: "humerus.hand".into(), mass, force })
    };
    let (none, mass) = (with_load(None), with_load(spec(Some(2.0), None)));
    let force = with_load(spec(None, Some([0.0, -2.0 * 9.80665, 0.0])));
    let (a, b, c) = (none.run(), mass.run(), force.run());
    // equilibrium by virtual work, the load's work included
    check_variants(&mass, &b);
    for k in 0..3 {
        let (fa, fb, fc) = (&a.variants[0].frames[k], &b.variants[0].frames[k], &c.variants[0].frames[k]);
        // a mass is its weight
        let d = fb.forces.iter().zip(&fc.forces).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
        assert!(d < 1e-6, "frame {k}: mass and force differ by {d} N");
        // 2 kg at 0.6 m from the shoulder: the muscles pull harder
        let (ta, tb): (f64, f64) = (fa.forces.iter().sum(), fb.forces.iter().sum());
        assert!(tb > ta + 50.0, "frame {k}: {ta:.1} N without, {tb:.1} N with 2 kg in the hand");
    }
}
