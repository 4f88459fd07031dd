//! A study's reserves are not silent: with reserves on every input and every
//! muscle they stay below 1 % of the driving forces and nothing is reported; with the muscles that
//! cross the glenohumeral joint a thousand times weaker they must hold the arm, and the warning says so.

mod common;

use common::*;
use mollier::inverse_tables::ReserveUse;
use mollier::load_sharing::ReserveInfo;

/// The muscles that cross the glenohumeral joint (van der Helm 1994, Table 2).
const GLENOHUMERAL: [&str; 10] = [
    "biceps",
    "deltoideus",
    "pectoralis major",
    "triceps",
    "coracobrachialis",
    "infraspinatus",
    "latissimus dorsi",
    "subscapularis",
    "supraspinatus",
    "teres",
];

fn with_reserve(drop: &'static [&'static str]) -> mollier_study::Study {
    abduction_with_model(
        |s| {
            s.motion.frames = 5;
            s.motion.elevation = Some([30.0, 150.0]);
            s.optimisation.criteria = vec!["a".into(), "b".into(), "c".into(), "d".into()];
            s.optimisation.joint_cone = vec!["without".into()];
        },
        |c| {
            // on every input: without the glenohumeral muscles the girdle may not hold the arm
            let reserves = c
                .inputs
                .iter()
                .enumerate()
                .map(|(input, i)| ReserveInfo { name: i.name.clone(), input, weight: mollier_optim::RESERVE_WEIGHT })
                .collect();
            let ls = c.load_sharing.as_mut().expect("load sharing");
            // too weak to matter, kept where they are
            for m in ls.muscles.iter_mut().filter(|m| drop.iter().any(|d| m.muscle.contains(d))) {
                m.pcsa *= 1e-3;
            }
            ls.reserves = reserves;
        },
    )
}

fn uses(study: &mollier_study::Study) -> Vec<(String, ReserveUse, f64)> {
    let r = study.run();
    let lead = ["time".to_string(), "elevation_deg".to_string()];
    r.variants
        .iter()
        .map(|v| {
            let mut u = ReserveUse::new(&lead, study.sharing.reserve_names());
            let mut top = 0.0f64;
            for (f, frame) in v.frames.iter().zip(&study.motion.frames) {
                assert!(f.status.is_success(), "{}: {}", v.variant.name(), f.status);
                u.add(&[frame.time, frame.elevation], f);
                top = f.reserve_shares.iter().fold(top, |m, x| m.max(*x));
            }
            (v.variant.name(), u, top)
        })
        .collect()
}

#[test]
fn a_reserve_the_muscles_do_not_need_is_silent_for_every_criterion() {
    let study = with_reserve(&[]);
    let all = uses(&study);
    let tops: Vec<f64> = all.iter().map(|(_, _, t)| *t).collect();
    println!("largest shares with every muscle (a, b, c, d): {tops:?}");
    for (name, u, top) in &all {
        assert_eq!((u.frames_over(), u.warning()), (0, None), "{name}: share {top}");
    }
}

#[test]
fn with_weak_glenohumeral_muscles_the_reserves_hold_the_arm_and_are_reported() {
    let study = with_reserve(&GLENOHUMERAL);
    let all = uses(&study);
    for (name, u, top) in &all {
        println!("{name}: {} frames over, largest share {top}", u.frames_over());
        assert_eq!(u.frames_over(), 5, "{name}: largest share {top}");
        assert!(*top > 0.9, "{name}: the reserves hold the arm: largest share {top}");
        let w = u.warning().expect("a warning");
        assert!(w.contains("in 5 of 5 solved frames") && w.contains("elevation_deg"), "{w}");
    }
}
