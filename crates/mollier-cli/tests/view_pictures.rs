//! `mollier view`'s pictures and comparisons: what cannot be drawn is refused before any browser
//! starts (exit 2, nothing written), and a PNG is written through headless Chromium when there is
//! one (skipped, saying so, when there is none).

use std::path::Path;

mod support;
use support::{mollier, path_str, scratch, text};

const MODEL: &str = "models/mechanisms/wrapping.toml";
const MOTION: &str = "models/mechanisms/wrapping-motion.csv";

#[test]
fn pictures_that_cannot_be_drawn_are_refused_first() {
    let dir = scratch("refused");
    let png = dir.join("a.png");
    let run = |extra: &[&str]| {
        let mut args = vec!["view", MODEL, "--motion", MOTION, "--png", path_str(&png)];
        args.extend_from_slice(extra);
        mollier(&args)
    };
    for size in ["0x10", "800", "99999x100", "axb"] {
        let out = run(&["--size", size]);
        assert_eq!(out.status.code(), Some(2), "--size {size}");
        assert!(text(&out.stderr).contains("--size"), "{}", text(&out.stderr));
    }
    // 45 frames: 0 to 44
    let out = run(&["--frame", "45"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("frames 0 to 44"), "{}", text(&out.stderr));
    // --frames into a folder holding anything Mollier did not write
    let frames = dir.join("frames");
    std::fs::create_dir_all(&frames).unwrap();
    std::fs::write(frames.join("notes.txt"), "mine").unwrap();
    let out = mollier(&["view", MODEL, "--motion", MOTION, "--frames", path_str(&frames)]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("notes.txt"), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(frames.join("notes.txt")).unwrap(), "mine");
    // neither a page nor a picture asked
    let out = mollier(&["view", MODEL, "--motion", MOTION]);
    assert_eq!(out.status.code(), Some(2));
    assert!(!png.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn compare_needs_the_same_frames_and_forces() {
    let dir = scratch("compare");
    let (a, b) = (dir.join("a"), dir.join("b"));
    for d in [&a, &b] {
        std::fs::create_dir_all(d).unwrap();
    }
    // one frame of the model as placed: forces at t = 0
    std::fs::write(a.join("forces.csv"), "time,over_sphere,over_cylinder\n0,10,20\n").unwrap();
    std::fs::write(b.join("forces.csv"), "time,over_sphere,over_cylinder\n0,30,5\n").unwrap();
    let motion = dir.join("motion.csv");
    let first: Vec<String> = std::fs::read_to_string(support::root().join(MOTION))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .take(2)
        .map(str::to_string)
        .collect();
    std::fs::write(&motion, first.join("\n") + "\n").unwrap();
    let page = dir.join("v.html");
    let args = ["view", MODEL, "--motion", path_str(&motion), "--results", path_str(&a), "--out", path_str(&page)];
    let out = mollier(&[&args[..], &["--compare", path_str(&b)]].concat());
    assert!(out.status.success(), "{}", text(&out.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("\"compare\":{"), "no compare block");
    // no forces to compare
    std::fs::remove_file(b.join("forces.csv")).unwrap();
    let out = mollier(&[&args[..], &["--compare", path_str(&b)]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("forces.csv"), "{}", text(&out.stderr));
    // --compare without --results: the left half without forces, on the same motion
    let out =
        mollier(&["view", MODEL, "--motion", path_str(&motion), "--out", path_str(&page), "--compare", path_str(&a)]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two different models side by side: the page embeds both on their own motions; bad input on
/// either side is a located error (exit 2) and writes nothing, neither the page nor a picture
/// nor a --frames folder.
#[test]
fn a_pair_of_models_draws_both_and_bad_input_writes_nothing() {
    let dir = scratch("pair");
    let (page, png, frames) = (dir.join("pair.html"), dir.join("pair.png"), dir.join("frames"));
    let pair = |extra: &[&str]| {
        let mut args = vec!["view", MODEL, "--motion", MOTION, "--out", path_str(&page)];
        args.extend_from_slice(extra);
        mollier(&args)
    };
    // the pendulum as placed beside the wrapping motion: 45 steps, the pendulum's one frame
    let out = pair(&["--compare-model", "models/mechanisms/pendulum.toml"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("45 frames, 3 muscles beside 1 frames, 0 muscles (45 steps)"),
        "{}",
        text(&out.stdout)
    );
    let html = std::fs::read_to_string(&page).unwrap();
    let data = html.split("id=\"mollier-data\">").nth(1).and_then(|t| t.split("</script>").next()).unwrap();
    let json: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(json["compare"]["title"], "Simple pendulum (models/mechanisms/pendulum.toml)");
    assert_eq!(json["steps"].as_array().map(Vec::len), Some(45));
    std::fs::remove_file(&page).unwrap();
    // a broken model file, a missing one, a broken motion, results that name none of its muscles
    let broken = dir.join("broken.toml");
    std::fs::write(&broken, "[bodies.arm]\nmass = [1.5\n").unwrap();
    let bad_motion = dir.join("bad.csv");
    std::fs::write(&bad_motion, "time,elbow.rotation [deg]\n0,1\n0.1,x\n").unwrap();
    let results = dir.join("results");
    std::fs::create_dir_all(&results).unwrap();
    std::fs::write(results.join("forces.csv"), "time,nobody\n0,1\n").unwrap();
    let gone = dir.join("gone.toml");
    let cases: [(&[&str], String); 4] = [
        (&["--compare-model", path_str(&broken)], format!("{}:2:", broken.display())),
        (&["--compare-model", path_str(&gone)], gone.display().to_string()),
        (&["--compare-model", MODEL, "--compare-motion", path_str(&bad_motion)], format!("{}:3", bad_motion.display())),
        (&["--compare-model", MODEL, "--compare", path_str(&results)], "forces.csv".to_string()),
    ];
    for (extra, located) in cases {
        let all = [extra, &["--png", path_str(&png), "--frames", path_str(&frames)]].concat();
        let out = pair(&all);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains(&located), "{extra:?}: want {located} in {err}");
        assert!(!page.exists() && !png.exists() && !frames.exists(), "{extra:?} wrote something");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The PNG of `--png` is a PNG of the size asked (needs Chromium: skipped, saying so, without).
#[test]
fn a_png_is_written_at_the_size_asked() {
    if mollier_view::snapshot::browser().is_none() {
        mollier_core::shared_data::skip(
            "a_png_is_written_at_the_size_asked",
            "no Chromium (apt-get install chromium, or tools/test-viewer --install-only as root)",
        );
        return;
    }
    let dir = scratch("png");
    let png = dir.join("frame.png");
    let out =
        mollier(&["view", MODEL, "--motion", MOTION, "--png", path_str(&png), "--frame", "44", "--size", "320x200"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"));
    // IHDR: width and height, big-endian, at bytes 16 and 20
    let (w, h) =
        (u32::from_be_bytes(bytes[16..20].try_into().unwrap()), u32::from_be_bytes(bytes[20..24].try_into().unwrap()));
    assert_eq!((w, h), (320, 200));
    assert!(!Path::new(&dir.join("v.html")).exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
