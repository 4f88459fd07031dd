//! The abduction study's results as docs/shoulder.md reports them, each tied to the statement of
//! van der Helm (1994) it reproduces or the documented reason it differs. The whole
//! study (37 frames, criteria a-d, margins 1, 0.6, 0.4 and no constraint: 16 variants) runs once
//! for the file.
//!
//! Tolerances: forces within 2 % (the model is generated from DAS3 numbers to 4-12 decimals; a
//! change of the model or of the solver's tolerances beyond that is a change of the results
//! that docs/shoulder.md must follow); elevations are frames of the study (4.94° apart).

mod common;

use std::sync::OnceLock;

use common::*;
use mollier_optim::stability_index;
use mollier_study::{Results, Study, VariantResult};

const FORCE: f64 = 0.02;

fn study() -> &'static (Study, Results) {
    static RUN: OnceLock<(Study, Results)> = OnceLock::new();
    RUN.get_or_init(|| {
        let s = abduction_with(|_| {});
        let r = s.run();
        (s, r)
    })
}

fn variant(name: &str) -> &'static VariantResult {
    let (_, r) = study();
    r.variants.iter().find(|v| v.variant.name() == name).unwrap_or_else(|| panic!("no variant {name}"))
}

fn elevations() -> Vec<f64> {
    study().0.motion.frames.iter().map(|f| f.elevation).collect()
}

fn total(v: &VariantResult, k: usize) -> f64 {
    v.frames[k].forces.iter().sum()
}

/// The muscles by force at frame `k`, largest first.
fn ranking(v: &VariantResult, k: usize) -> Vec<&'static str> {
    let (s, _) = study();
    let mut m: Vec<(f64, &str)> =
        s.groups.iter().map(|g| (g.elements.iter().map(|&i| v.frames[k].forces[i]).sum(), g.name.as_str())).collect();
    m.sort_by(|a, b| b.0.total_cmp(&a.0));
    m.into_iter().map(|(_, n)| n).collect()
}

fn close(got: f64, want: f64, what: &str) {
    assert!((got - want).abs() <= FORCE * want.abs(), "{what}: {got:.1} N, docs/shoulder.md says {want:.1} N");
}

fn cuff(v: &VariantResult, k: usize) -> f64 {
    let (s, _) = study();
    s.cuff.iter().map(|&i| v.frames[k].forces[i]).sum()
}

#[test]
fn every_frame_of_every_variant_is_solved() {
    let (s, r) = study();
    assert_eq!(r.variants.len(), 16);
    assert!(r.kinematics.frames.iter().all(|f| f.is_ok()));
    for v in &r.variants {
        assert!(v.frames.iter().all(|f| f.status.is_success()), "{}", v.variant.name());
    }
    // the rhythm is extrapolated past 120°: the study says so
    assert!(s.warnings().iter().any(|w| w.contains("12 of 37 frames")), "{:?}", s.warnings());
}

/// van der Helm (1994), "Verification": the muscle forces "peaked at 90° abduction". Ours peak at 75°
/// (criterion b), within the seed's range of a peak near the horizontal; the subject, the
/// rhythm and the geometry differ (docs/shoulder.md, "What differs").
#[test]
fn the_total_force_peaks_near_the_horizontal() {
    let el = elevations();
    for (name, peak, at) in [("b-glenoid", 637.6, 75.17), ("c-glenoid", 656.7, 80.11), ("d-glenoid", 724.4, 75.17)] {
        let v = variant(name);
        let k = (0..el.len()).max_by(|&a, &b| total(v, a).total_cmp(&total(v, b))).unwrap();
        close(total(v, k), peak, &format!("{name}: peak"));
        assert!((el[k] - at).abs() < 0.01, "{name}: peak at {} deg, not {at}", el[k]);
        assert!((60.0..=100.0).contains(&el[k]), "{name}: the peak is not near the horizontal");
        // and falls on both sides: less than 40 % of it at rest and overhead
        assert!(total(v, 0) < 0.4 * total(v, k) && total(v, el.len() - 1) < 0.4 * total(v, k), "{name}");
    }
    close(total(variant("b-glenoid"), 0), 212.6, "b-glenoid at 1°");
}

/// van der Helm (1994), "Discussion" of criterion (b): "some muscle elements which have an excellent moment
/// arm will be favored to a large extent, e.g. m. deltoideus, scapular part"; the scapula is
/// held by the trapezius and the serratus anterior (Fig. 7).
#[test]
fn the_scapular_deltoid_carries_the_load_and_the_trapezius_holds_the_scapula() {
    let v = variant("b-glenoid");
    for (k, e) in elevations().into_iter().enumerate() {
        let r = ranking(v, k);
        if (20.0..=160.0).contains(&e) {
            assert_eq!(r[0], "m. deltoideus, scapular part", "{e} deg: {r:?}");
            assert_eq!(r[1], "m. trapezius, scapular part", "{e} deg: {r:?}");
        }
        if (20.0..=140.0).contains(&e) {
            assert!(r[..4].contains(&"m. serratus anterior"), "{e} deg: {r:?}");
        }
    }
}

/// van der Helm (1994), "Discussion": "Criteria (b)-(d) do not show much differences": their peaks of the
/// total force lie within 15 % of each other.
#[test]
fn criteria_b_to_d_agree_on_the_total() {
    let el = elevations();
    let peak = |n: &str| (0..el.len()).map(|k| total(variant(n), k)).fold(0.0, f64::max);
    let b = peak("b-glenoid");
    for n in ["c-glenoid", "d-glenoid"] {
        assert!((peak(n) - b).abs() < 0.15 * b, "{n}: {} vs b {b}", peak(n));
    }
}

/// van der Helm (1994), "Results" and conclusion 5: where the glenohumeral constraint works the rotator
/// cuff becomes active. With DAS3's wide glenoid (44° by 39°) the constraint never binds at
/// k = 1 (the free force stays 33° or more inside the rim); with the margin it binds overhead,
/// and there the cuff's force rises (at 179°: 13 N free, 24 N at k = 0.6, 60 N at k = 0.4). At
/// rest it binds at k = 0.4 but the deltoid and the biceps, not the cuff, lift the head into the
/// socket: the seed's activation at 0° and 30° does not appear (docs/shoulder.md).
#[test]
fn the_margin_binds_overhead_and_the_cuff_takes_the_load() {
    let (s, _) = study();
    let el = elevations();
    let half = s.sharing.cone.as_ref().unwrap().half_angles;
    let free = variant("b-free");
    let rim = |k: usize| stability_index(&free.frames[k].cone_force.unwrap(), half[0], half[1]).unwrap();
    assert!((0..el.len()).all(|k| rim(k) < -0.45), "the free force reaches the rim");
    let binding = |name: &str| -> Vec<f64> {
        let v = variant(name);
        (0..el.len()).filter(|&k| v.frames[k].stability_index.unwrap() > -1e-3).map(|k| el[k].round()).collect()
    };
    assert!(binding("b-glenoid").is_empty());
    assert_eq!(binding("b-glenoid-k0.6"), [169.0, 174.0, 179.0]);
    assert_eq!(binding("b-glenoid-k0.4"), [1.0, 154.0, 159.0, 164.0, 169.0, 174.0, 179.0]);
    let last = el.len() - 1;
    close(cuff(free, last), 13.1, "cuff at 179°, free");
    close(cuff(variant("b-glenoid-k0.6"), last), 24.5, "cuff at 179°, k = 0.6");
    close(cuff(variant("b-glenoid-k0.4"), last), 59.8, "cuff at 179°, k = 0.4");
    // where it does not bind, the margin changes nothing
    for k in (0..el.len()).filter(|&k| (10.0..150.0).contains(&el[k])) {
        let d = (cuff(variant("b-glenoid-k0.4"), k) - cuff(free, k)).abs();
        assert!(d < 1e-3, "{} deg: the cuff changed by {d} N where the margin does not bind", el[k]);
    }
    // at rest the binding margin lowers the cuff's force (the deltoid and biceps lift instead)
    assert!(cuff(variant("b-glenoid-k0.4"), 0) < cuff(free, 0) - 1.0);
}
