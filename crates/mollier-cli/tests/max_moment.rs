//! `mollier max-moment`: the elbow's maxima and files, the shoulder's against the statements of
//! Chadwick et al. (2014, section III-B, IV), and the errors of a bad direction.

mod support;

use std::path::{Path, PathBuf};

use support::{mollier, scratch as temp};

fn models() -> PathBuf {
    support::root().join("models")
}

/// A CSV table: header and rows of cells.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head = lines.next().unwrap().split(',').map(String::from).collect();
    (head, lines.map(|l| l.split(',').map(String::from).collect()).collect())
}

fn column(path: &Path, name: &str) -> Vec<f64> {
    let (head, rows) = table(path);
    let j = head.iter().position(|h| h == name).unwrap_or_else(|| panic!("no column {name} in {head:?}"));
    rows.iter().map(|r| r[j].parse().unwrap()).collect()
}

#[test]
fn the_elbow_writes_every_file_and_both_senses() {
    let dir = temp("elbow");
    let out = dir.join("results");
    let m = models().join("mechanisms");
    let run = mollier(&[
        "max-moment",
        m.join("elbow-muscles.toml").to_str().unwrap(),
        "--postures",
        m.join("elbow-muscles-motion.csv").to_str().unwrap(),
        "--direction",
        "elbow.rotation:flexion/extension",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["complete"], true);
    assert_eq!((summary["postures"].as_u64(), summary["solved"].as_u64()), (Some(27), Some(27)));
    for f in
        ["moments.csv", "postures.csv", "forces_flexion.csv", "forces_extension.csv", "checks.csv", "plots/moments.svg"]
    {
        assert!(out.join(f).is_file(), "{f}");
    }
    let (head, rows) = table(&out.join("moments.csv"));
    assert_eq!(head, ["time", "flexion", "extension"]);
    assert_eq!(rows.len(), 27);
    let flexion = column(&out.join("moments.csv"), "flexion");
    // the peak at the elbow's strongest posture, as the summary says
    let peak = flexion.iter().copied().fold(f64::MIN, f64::max);
    assert_eq!(summary["peaks"]["flexion"]["moment"].as_f64(), Some(peak));
    let svg = std::fs::read_to_string(out.join("plots/moments.svg")).unwrap();
    assert!(svg.contains("flexion") && svg.contains("extension"), "the plot has a key");
}

#[test]
fn a_bad_direction_is_refused_with_the_inputs_listed() {
    let dir = temp("bad");
    let m = models().join("mechanisms");
    let model = m.join("elbow-muscles.toml");
    let postures = m.join("elbow-muscles-motion.csv");
    for (spec, says) in [
        ("elbow.twist:flexion/extension", "no input called `elbow.twist`; the model's inputs: elbow.rotation"),
        ("elbow.rotation:flexion", "name both senses"),
        ("elbow.rotation", "expected INPUT:POSITIVE/NEGATIVE"),
    ] {
        let out = dir.join("results");
        let run = mollier(&[
            "max-moment",
            model.to_str().unwrap(),
            "--postures",
            postures.to_str().unwrap(),
            "--direction",
            spec,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert_eq!(run.status.code(), Some(2), "{spec}");
        let err = String::from_utf8_lossy(&run.stderr);
        assert!(err.contains(says), "{spec}: {err}");
        assert!(!out.exists(), "no output for a refused run");
    }
}

/// The abduction study from 10° to 80° of elevation in 8 frames in the plane of `pole` degrees,
/// with criterion (b) only and `extra` appended, in `dir`.
fn shoulder_study(dir: &Path, pole: u32, extra: &str) -> PathBuf {
    let s = models().join("shoulder");
    let text = std::fs::read_to_string(s.join("abduction.toml")).unwrap();
    let text = text
        .replace("model = \"shoulder.toml\"", &format!("model = {:?}", s.join("shoulder.toml").display().to_string()))
        .replace("frames = 37", "frames = 8")
        .replace("pole_angle = 0", &format!("pole_angle = {pole}"))
        .replace("elevation = [1, 179]", "elevation = [10, 80]")
        .replace("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = [\"b\"]")
        + extra;
    let path = dir.join("study.toml");
    std::fs::write(&path, text).unwrap();
    path
}

/// The shoulder's postures from 10° to 80° of elevation in the plane of `pole` degrees (the
/// rhythm, through a one-criterion study), and the maxima in elevation and axial rotation.
fn shoulder(name: &str, pole: u32, extra: &[&str]) -> PathBuf {
    let dir = temp(name);
    let s = models().join("shoulder");
    shoulder_study(&dir, pole, "");
    let study = dir.join("study");
    let run = mollier(&["study", dir.join("study.toml").to_str().unwrap(), "--out", study.to_str().unwrap(), "-q"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let out = dir.join("moments");
    let mut args: Vec<String> = vec![
        "max-moment".into(),
        s.join("shoulder.toml").to_str().unwrap().to_string(),
        "--postures".into(),
        study.join("motion.csv").to_str().unwrap().to_string(),
        "--direction".into(),
        "humerus_elevation.rotation:elevation/depression".into(),
        "--direction".into(),
        "humerus_axial.rotation:internal/external".into(),
        "--hold".into(),
        "humerus_pole.rotation".into(),
        "--out".into(),
        out.to_str().unwrap().to_string(),
        "-q".into(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let run = mollier(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    out
}

#[test]
fn the_shoulder_in_the_scapular_plane_as_chadwick_2014_describes_it() {
    let out = shoulder("scapular", 40, &[]);
    let m = out.join("moments.csv");
    // plotted along the direction that varies (elevation), not the girdle's first input
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["plot_input"], "humerus_elevation.rotation");
    let (up, down) = (column(&m, "elevation"), column(&m, "depression"));
    let (int, ext) = (column(&m, "internal"), column(&m, "external"));
    assert_eq!(up.len(), 8);
    // Chadwick et al. (2014), IV: "the model predicted increasing strength up to 90 degrees of abduction"
    // (this model: over 10°-80° the abduction maximum grows by more than a tenth, and never
    // drops by more than 5 % from one posture to the next)
    assert!(up[7] > 1.1 * up[0], "abduction {up:?}");
    assert!(up.windows(2).all(|w| w[1] > 0.95 * w[0]), "abduction {up:?}");
    // Chadwick et al. (2014), IV: "for adduction they were higher" than the literature's, which are already
    // higher than abduction's: adduction is the stronger sense at every posture
    assert!(down.iter().zip(&up).all(|(d, u)| d > u), "adduction {down:?} vs abduction {up:?}");
    // internal rotation stronger than external (subscapularis, pectoralis major, latissimus,
    // teres major against infraspinatus and teres minor), as in every study Chadwick et al. (2014) cites
    assert!(int.iter().zip(&ext).all(|(i, e)| i > e && *e > 0.0), "internal {int:?} external {ext:?}");
    // magnitudes of tens of N m, as Chadwick et al. (2014) Figs. 5-6 (and within a factor of 3 of them)
    assert!(up.iter().chain(&ext).all(|v| (10.0..200.0).contains(v)), "{up:?} {ext:?}");
    // the glenohumeral force inside the glenoid at every maximum
    for index in column(&out.join("checks.csv"), "stability_index") {
        assert!(index <= 1e-6, "stability index {index}");
    }
    // without the cone no maximum is lower
    let free = shoulder("scapular-free", 40, &["--no-cone"]).join("moments.csv");
    for name in ["elevation", "depression", "internal", "external"] {
        for (f, c) in column(&free, name).iter().zip(column(&m, name)) {
            assert!(*f >= c - 1e-6 * c.abs(), "{name}: {f} without the cone < {c} with it");
        }
    }
}

const SECTION: &str = r#"
[max_moment]
directions = [
    { input = "humerus_elevation.rotation", positive = "elevation", negative = "depression" },
    { input = "humerus_axial.rotation", positive = "internal", negative = "external" },
]
hold = ["humerus_pole.rotation"]
"#;

#[test]
fn a_study_with_a_max_moment_section_gives_the_command_s_moments() {
    let dir = temp("study-section");
    let out = dir.join("results");
    let run =
        mollier(&["study", shoulder_study(&dir, 40, SECTION).to_str().unwrap(), "--out", out.to_str().unwrap(), "-q"]);
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["max_moment"]["solved"].as_u64(), Some(8), "{}", summary["max_moment"]);
    assert_eq!(summary["max_moment"]["plot_input"], "humerus_elevation.rotation");
    assert!(out.join("max_moment/plots/moments.svg").is_file());
    // the same postures through the command: the same moments
    let command = shoulder("study-section-command", 40, &[]).join("moments.csv");
    for name in ["elevation", "depression", "internal", "external"] {
        let (a, b) = (column(&out.join("max_moment/moments.csv"), name), column(&command, name));
        assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() <= 1e-9 * y.abs()), "{name}: {a:?} vs {b:?}");
    }
    // a bad input is placed in the study file
    let bad = shoulder_study(&dir, 40, &SECTION.replace("humerus_pole.rotation", "humerus_plane"));
    let run = mollier(&["study", bad.to_str().unwrap(), "--out", dir.join("bad").to_str().unwrap()]);
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("max_moment.hold: no input called `humerus_plane`") && err.contains("study.toml:"), "{err}");
}
