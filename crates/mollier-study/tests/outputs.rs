//! The files of a study: every table and summary written, no NaN in them, failed frames marked;
//! the plots are SVG documents.

mod common;

use common::*;

#[test]
fn tables_summaries_and_plots_are_written() {
    let study = abduction_with(|s| {
        s.motion.frames = 3;
        s.optimisation.criteria = vec!["b".into(), "d".into()];
    });
    let r = study.run();
    let dir = temp_dir("outputs");
    let dir = dir.join("results");
    let written = mollier_study::output::write(&study, &r, &dir).unwrap();
    let (plots, files): (Vec<_>, Vec<_>) = written.into_iter().partition(|f| f.extension().is_some_and(|e| e == "svg"));
    // 5 + 4 per variant tables and summaries, timing.json; forces per variant, 2 criteria plots,
    // glenoid, landmarks, girdle, moment arms
    assert_eq!(files.len(), 5 + 4 * 4 + 1);
    assert_eq!(plots.len(), 4 + 2 + 4);
    assert!(files.last().is_some_and(|f| f.ends_with("summary.json")));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains("NaN"), "{}", f.display());
        if f.extension().is_some_and(|e| e == "csv") {
            let mut rdr = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
            let n = rdr.headers().unwrap().len();
            let rows: Vec<_> = rdr.records().map(|r| r.unwrap()).collect();
            assert_eq!(rows.len(), 3, "{}", f.display());
            assert!(rows.iter().all(|r| r.len() == n));
            // every number finite
            for r in &rows {
                for c in r.iter() {
                    if let Ok(v) = c.parse::<f64>() {
                        assert!(v.is_finite(), "{}: {c}", f.display());
                    }
                }
            }
        } else {
            serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    }
    let forces = std::fs::read_to_string(dir.join("b-glenoid/forces.csv")).unwrap();
    let header = forces.lines().next().unwrap();
    assert!(header.starts_with("time,elevation_deg,trapezius_scapular_1,"));
    assert_eq!(header.split(',').count(), 2 + 95);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["frames"], 3);
    assert_eq!(summary["complete"], true);
    assert_eq!(summary["variants"].as_array().unwrap().len(), 4);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("d-free/summary.json")).unwrap()).unwrap();
    for key in ["frames", "solved", "failed", "criterion"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    let timing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("timing.json")).unwrap()).unwrap();
    assert!(timing["variants"]["d-free"]["ms_per_frame"].as_f64().is_some_and(|t| t > 0.0), "{timing}");
    for p in &plots {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "{}", p.display());
    }
}
