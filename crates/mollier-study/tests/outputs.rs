//! The files of a study: every table and summary written, no NaN in them, failed frames marked;
//! the plots are SVG documents.

mod common;

use common::*;

#[test]
fn tables_summaries_and_plots_are_written() {
    let mut study = abduction_with(|s| {
        s.motion.frames = 3;
        s.optimisation.criteria = vec!["b".into(), "d".into()];
    });
    // the middle frame asks for a posture the shoulder cannot reach (AC 0.5 m higher than the
    // rhythm puts it): its kinematics and every variant fail there, the frames around it solve
    study.motion.frames[1].q[0] += 0.5;
    let dir = temp_dir("outputs");
    let dir = dir.join("results");
    let written = mollier_study::output::run_and_write(&study, &dir, mollier::output::TableFormat::Csv).unwrap();
    let r = written.results;
    assert!(r.kinematics.frames[1].is_err() && r.kinematics.frames[0].is_ok() && r.kinematics.frames[2].is_ok());
    for v in &r.variants {
        let solved: Vec<bool> = v.frames.iter().map(|f| f.status.is_success()).collect();
        assert_eq!(solved, [true, false, true], "{}", v.variant.name());
    }
    let (plots, files): (Vec<_>, Vec<_>) =
        written.files.into_iter().partition(|f| f.extension().is_some_and(|e| e == "svg"));
    // view.html: the frames whose kinematics solved (the failed frame is left out, not drawn
    // from a poisoned configuration)
    let (views, files): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| f.ends_with("view.html"));
    assert_eq!(views.len(), 1);
    let page = std::fs::read_to_string(&views[0]).unwrap();
    let times = format!("\"times\":[{:?},{:?}]", study.motion.frames[0].time, study.motion.frames[2].time);
    assert!(page.contains(&times), "{times}");
    // 2 criteria × (3 margins with the constraint + 1 without)
    let n = r.variants.len();
    assert_eq!(n, 8);
    // 5 tables, cuff.csv, 4 per variant tables and summaries, timing.json; forces per variant,
    // 2 criteria plots, glenoid, cuff, landmarks, girdle, moment arms
    assert_eq!(files.len(), 5 + 1 + 4 * n + 1);
    assert_eq!(plots.len(), n + 2 + 5);
    assert!(files.last().is_some_and(|f| f.ends_with("summary.json")));
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!text.contains("NaN"), "{}", f.display());
        if f.extension().is_some_and(|e| e == "csv") {
            let mut rdr = csv::ReaderBuilder::new().comment(Some(b'#')).from_reader(text.as_bytes());
            let n = rdr.headers().unwrap().len();
            let rows: Vec<_> = rdr.records().map(|r| r.unwrap()).collect();
            // failed frames keep their row
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
    assert_eq!(summary["variants"].as_array().unwrap().len(), n);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("d-free/summary.json")).unwrap()).unwrap();
    for key in ["frames", "solved", "failed", "criterion"] {
        assert!(v.get(key).is_some(), "{key}");
    }
    // the failed frame: a row like the others, its status and message, every number empty
    let (time, elevation) = (study.motion.frames[1].time, study.motion.frames[1].elevation);
    let row = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        let mut rdr = csv::ReaderBuilder::new().from_reader(text.as_bytes());
        let header: Vec<String> = rdr.headers().unwrap().iter().map(String::from).collect();
        let row: Vec<String> = rdr.records().nth(1).unwrap().unwrap().iter().map(String::from).collect();
        assert_eq!(row[..2], [time.to_string(), elevation.to_string()], "{file}");
        header.iter().zip(row).map(|(h, c)| format!("{h}={c}")).collect()
    };
    let kin = row("kinematics.csv");
    assert!(kin[2].starts_with("status=failed: "), "{kin:?}");
    assert!(kin[3..].iter().all(|c| c.ends_with('=')), "{kin:?}");
    for file in ["lengths.csv", "moment_arms.csv", "b-glenoid/forces.csv", "d-free/reactions.csv"] {
        let cells = row(file);
        assert!(cells[2..].iter().all(|c| c.ends_with('=')), "{file}: {cells:?}");
    }
    let stability = row("b-glenoid/stability.csv");
    assert!(stability[2] == "status=kinematics_failed" && !stability.last().unwrap().ends_with('='), "{stability:?}");
    let failed = &v["failed_frames"];
    assert_eq!((v["solved"].as_u64(), v["failed"].as_u64()), (Some(2), Some(1)), "{v}");
    assert_eq!(failed.as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(failed[0]["time"].as_f64(), Some(time), "{v}");
    assert_eq!(summary["kinematics"]["failed_frames"][0]["time"].as_f64(), Some(time), "{summary}");

    let timing: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("timing.json")).unwrap()).unwrap();
    assert!(timing["variants"]["d-free"]["ms_per_frame"].as_f64().is_some_and(|t| t > 0.0), "{timing}");
    for p in &plots {
        let text = std::fs::read_to_string(p).unwrap();
        assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "{}", p.display());
    }
}

#[test]
fn streamed_study_equals_the_one_held_whole() {
    // issue 33: the study is solved frame after frame in chunks, each variant from its previous
    // frame, and written as it goes. Its results are those of a variant run over the whole
    // motion at once (`run_variant`: the load sharing's own run), bit for bit; the streamed
    // tables hold those results; a study keeping every 2nd frame for its plots keeps those
    // frames' results
    let study = abduction_with(|s| {
        s.motion.frames = 5;
        s.optimisation.criteria = vec!["b".into(), "d".into()];
        s.optimisation.margins = Some(vec![1.0]);
    });
    let whole = study.run();
    assert_eq!(whole.frames, [0, 1, 2, 3, 4]);
    let bits = |r: &mollier_optim::FrameResult| -> Vec<u64> { r.forces.iter().map(|f| f.to_bits()).collect() };
    for (v, r) in study.variants.iter().zip(&whole.variants) {
        let alone = study.run_variant(v);
        assert_eq!(alone.frames.len(), 5);
        for (a, b) in alone.frames.iter().zip(&r.frames) {
            assert!(a.status.is_success(), "{}: {}", v.name(), a.status);
            assert_eq!(bits(a), bits(b), "{}", v.name());
            assert_eq!(a.cone_force, b.cone_force, "{}", v.name());
        }
        assert_eq!((r.summary.frames, r.summary.solved), (5, 5));
    }
    let mut seen = Vec::new();
    let kept = study
        .run_streaming(2, |k, f| {
            seen.push((k, f.variants.iter().map(|(r, _)| bits(r)).collect::<Vec<_>>()));
            Ok::<(), ()>(())
        })
        .unwrap();
    assert_eq!(seen.iter().map(|s| s.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    assert_eq!(kept.frames, [0, 2, 4]);
    for (v, (r, w)) in whole.variants.iter().zip(&kept.variants).enumerate() {
        assert_eq!(w.frames.len(), 3);
        for (i, &k) in kept.frames.iter().enumerate() {
            assert_eq!(bits(&w.frames[i]), bits(&r.frames[k]));
            assert_eq!(seen[k].1[v], bits(&r.frames[k]));
        }
        assert_eq!(w.summary.frames, 5, "the summary counts every frame, not the kept ones");
        assert_eq!(w.max_stability_index, r.max_stability_index);
    }
    assert_eq!(kept.kinematics.frames, [0, 2, 4].map(|k| whole.kinematics.frames[k].clone()));

    let dir = temp_dir("streamed");
    let written = mollier_study::output::run_and_write(&study, &dir, mollier::output::TableFormat::Csv).unwrap();
    assert_eq!(written.results.frames, [0, 1, 2, 3, 4]);
    // every variant's forces.csv: the forces of the variant run over the whole motion at once
    for (v, r) in study.variants.iter().zip(&whole.variants) {
        let text = std::fs::read_to_string(dir.join(v.name()).join("forces.csv")).unwrap();
        let rows: Vec<Vec<u64>> = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .skip(1)
            .map(|l| l.split(',').skip(2).map(|c| c.parse::<f64>().unwrap().to_bits()).collect())
            .collect();
        assert_eq!(rows, r.frames.iter().map(bits).collect::<Vec<_>>(), "{}", v.name());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_long_study_run_keeps_at_most_the_plotted_frames() {
    // issue 33: `Study::run` held every frame (about 100 kB each on the shoulder). 601 frames of
    // the abduction, one variant: every 2nd frame is kept (the last among them), the summary
    // counts all
    use mollier_study::output::PLOTTED_FRAMES;
    let study = abduction_with(|s| {
        s.motion.frames = 601;
        s.optimisation.criteria = vec!["b".into()];
        s.optimisation.joint_cone = vec!["without".into()];
    });
    let r = study.run();
    assert_eq!(r.frames.len(), 301);
    assert!(r.frames.len() <= PLOTTED_FRAMES);
    assert!(r.frames.iter().all(|k| k % 2 == 0) && r.frames.last() == Some(&600), "{:?}", r.frames);
    assert_eq!(r.kinematics.frames.len(), r.frames.len());
    assert_eq!(r.variants[0].frames.len(), r.frames.len());
    assert_eq!(r.variants[0].summary.frames, 601);
}

#[test]
fn a_long_study_keeps_a_bounded_number_of_frames_for_its_plots() {
    use mollier_study::output::{PLOTTED_FRAMES, frame_step};
    // every step-th frame from the first, and the last: never more than the budget
    for n in [1, 2, 499, 500, 501, 997, 1993, 2000, 100_000] {
        let step = frame_step(n);
        let kept = (0..n).filter(|k| k % step == 0 || k + 1 == n).count();
        assert!(kept <= PLOTTED_FRAMES && kept >= PLOTTED_FRAMES.min(n) / 2, "{n} frames: {kept} kept");
        assert_eq!(step == 1, n <= PLOTTED_FRAMES, "{n}");
    }
}
