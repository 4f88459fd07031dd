//! Safe with any file and any path (issue 33): outputs written only over what Mollier wrote, no
//! file's contents in errors, no panic on long names, numeric options checked, no control
//! character from an input printed raw. Every fixture is made here, in a scratch directory.

mod support;

use std::path::Path;
use std::process::Command;

use support::{both as text, mollier, path_str as s, root, scratch};

/// The characters that must never reach a terminal raw.
fn raw_controls(t: &str) -> Vec<char> {
    t.chars().filter(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c)).collect()
}

/// `view --out` and `import --out/--report/--motion-out` write regular files only: a link, a
/// FIFO or a directory at the path is refused with exit code 2 and left as it was; `--force`
/// replaces a link itself, never what it points to, and never a FIFO.
#[test]
fn file_outputs_replace_only_regular_files() {
    let dir = scratch("files");
    let precious = dir.join("precious.txt");
    std::fs::write(&precious, "keep me").unwrap();
    let link = dir.join("page.html");
    std::os::unix::fs::symlink(&precious, &link).unwrap();
    let fifo = dir.join("fifo.html");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let folder = dir.join("folder.html");
    std::fs::create_dir(&folder).unwrap();
    let view = |out: &Path, force: bool| {
        let mut a = vec!["view", "models/mechanisms/pendulum.toml", "--out", s(out), "-q"];
        if force {
            a.push("--force");
        }
        mollier(&a)
    };
    for (path, kind) in [(&link, "a symbolic link"), (&fifo, "a FIFO"), (&folder, "a directory")] {
        let o = view(path, false);
        assert_eq!(o.status.code(), Some(2), "{}: {}", path.display(), text(&o));
        assert!(text(&o).contains(&format!("exists and is {kind}")), "{}", text(&o));
    }
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    for (path, kind) in [(&fifo, "a FIFO"), (&folder, "a directory")] {
        let o = view(path, true);
        assert_eq!(o.status.code(), Some(2), "--force {}: {}", path.display(), text(&o));
        assert!(text(&o).contains(kind), "{}", text(&o));
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(folder.is_dir());
    let o = view(&link, true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().is_file(), "the link itself is replaced");
    assert!(std::fs::read_to_string(&link).unwrap().starts_with("<!DOCTYPE html>"));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me");
    // import checks all of its paths before it writes any: a FIFO as the report leaves no model
    let model = dir.join("pin.toml");
    let osim = "crates/mollier-osim/tests/data/osim/pin.osim";
    let o = mollier(&["import", osim, "--out", s(&model), "--report", s(&fifo), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!model.exists(), "nothing written");
    let o = mollier(&["import", osim, "--out", s(&model), "--report", s(&model), "-q"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("two outputs"), "{}", text(&o));
    let o = mollier(&["import", osim, "--out", s(&model), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(model.is_file() && dir.join("pin.import.md").is_file());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A directory is replaced only when it carries Mollier's marker: a `summary.json` of one's own
/// (even `{"complete": true}`) is no reason to delete the folder it is in.
#[test]
fn a_folder_with_a_summary_json_is_not_deleted() {
    let dir = scratch("thesis");
    let thesis = dir.join("thesis");
    std::fs::create_dir_all(thesis.join("src")).unwrap();
    std::fs::write(thesis.join("src/main.tex"), "chapter one").unwrap();
    let args = |out: &Path| {
        let mut a = vec!["kinematics", "models/mechanisms/four-bar.toml", "--motion"];
        a.extend(["models/mechanisms/four-bar-motion.csv", "--out", s(out), "-q"].iter().map(|x| x.to_owned()));
        a.into_iter().map(str::to_string).collect::<Vec<_>>()
    };
    for summary in ["{}", "{\"complete\": true, \"files\": []}"] {
        std::fs::write(thesis.join("summary.json"), summary).unwrap();
        let a = args(&thesis);
        let o = mollier(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(".mollier-output"), "{}", text(&o));
        assert_eq!(std::fs::read_to_string(thesis.join("src/main.tex")).unwrap(), "chapter one");
    }
    // an output of Mollier is replaced by the next run
    let out = dir.join("out");
    for _ in 0..2 {
        let a = args(&out);
        let o = mollier(&a.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    }
    assert_eq!(std::fs::read_to_string(out.join(".mollier-output")).unwrap(), "mollier-output 1\n");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A model naming any readable file as its muscle table: the error says which file and why,
/// never a line of it.
#[test]
fn a_muscle_table_is_not_echoed() {
    let dir = scratch("secret");
    let secret = dir.join("secrets.env");
    std::fs::write(&secret, "FAKE_PASSWORD=hunter2-do-not-print\nAPI_TOKEN=abc\n").unwrap();
    let model = std::fs::read_to_string(root().join("models/mechanisms/elbow-muscles.toml")).unwrap();
    let model = model.replace("width = 0.56\n", &format!("width = 0.56\nmuscle_table = {:?}\n", s(&secret)));
    let file = dir.join("model.toml");
    std::fs::write(&file, model).unwrap();
    for json in [false, true] {
        let mut a = vec!["check", s(&file)];
        if json {
            a.push("--json");
        }
        let o = mollier(&a);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(2), "{t}");
        assert!(t.contains("secrets.env"), "the file is named: {t}");
        assert!(!t.contains("hunter2") && !t.contains("FAKE_PASSWORD") && !t.contains("API_TOKEN"), "{t}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `check` lists nodes and elements in columns: a name of 70,000 characters once panicked
/// ("Formatting argument out of range", a width over 65,535).
#[test]
fn check_lists_a_very_long_name() {
    let dir = scratch("long");
    let long = "n".repeat(70_000);
    let model = std::fs::read_to_string(root().join("models/mechanisms/pendulum.toml"))
        .unwrap()
        .replace("bodies.rod", &format!("bodies.{long}"))
        .replace("q = \"rod\"", &format!("q = \"{long}\""))
        .replace("[elements.swing]", &format!("[elements.s{long}]"))
        .replace("swing.rotation", &format!("s{long}.rotation"));
    let file = dir.join("long.toml");
    std::fs::write(&file, model).unwrap();
    let o = mollier(&["check", s(&file)]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(0), "{}", &t[..t.len().min(2000)]);
    assert!(!t.contains("panicked"));
    // the body's orientation node, its name past the column
    let line = t.lines().find(|l| l.trim_start().starts_with("nnn")).expect("the body's line");
    assert!(line.contains(".orientation  orientation  orientation of body nnn"), "{}", &line[line.len() - 60..]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Numeric options that make no sense are refused, the option named, before any work.
#[test]
fn numeric_options_are_checked() {
    let dir = scratch("numbers");
    let out = dir.join("out");
    let simulate = |duration: &str, dt: &str| {
        mollier(&["simulate", "models/mechanisms/pendulum.toml", "--duration", duration, "--dt", dt, "--out", s(&out)])
    };
    // a step larger than the duration simulated to t = 1e300 s, exit 0
    for (duration, dt) in [("1", "1e300"), ("1", "2"), ("0.01", "0.02")] {
        let o = simulate(duration, dt);
        assert_eq!(o.status.code(), Some(2), "--duration {duration} --dt {dt}: {}", text(&o));
        assert!(text(&o).contains("--dt"), "{}", text(&o));
        assert!(!out.exists());
    }
    for (duration, dt) in [("1", "nan"), ("inf", "0.1"), ("1", "0"), ("1", "1e-320"), ("1e300", "1e-3")] {
        let o = simulate(duration, dt);
        assert_eq!(o.status.code(), Some(2), "--duration {duration} --dt {dt}: {}", text(&o));
        assert!(!out.exists());
    }
    let o = mollier(&[
        "simulate",
        "models/mechanisms/pendulum.toml",
        "--duration",
        "0.1",
        "--threads",
        "100000",
        "--out",
        s(&out),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--threads"), "{}", text(&o));
    for smooth in ["nan", "-1", "0", "inf"] {
        let o = mollier(&[
            "inverse-dynamics",
            "models/mechanisms/double-pendulum.toml",
            "--motion",
            "models/mechanisms/double-pendulum-motion.mot",
            &format!("--smooth={smooth}"),
            "--out",
            s(&out),
        ]);
        assert_eq!(o.status.code(), Some(2), "--smooth {smooth}: {}", text(&o));
        assert!(text(&o).contains("--smooth"), "{}", text(&o));
    }
    // the motion's frames are 0.05 s apart: its Nyquist frequency is 10 Hz. Below it the spline
    // smooths; above it, it would follow every sample (a cutoff in the wrong unit): refused
    for (smooth, code) in [("6", 0), ("9.9", 0), ("10.5", 2), ("6000", 2)] {
        let o = mollier(&[
            "inverse-dynamics",
            "models/mechanisms/double-pendulum.toml",
            "--motion",
            "models/mechanisms/double-pendulum-motion.mot",
            "--smooth",
            smooth,
            "--out",
            s(&out),
            "--quiet",
        ]);
        assert_eq!(o.status.code(), Some(code), "--smooth {smooth}: {}", text(&o));
        if code == 2 {
            let want = format!("smoothing cutoff {smooth} Hz is above the motion's Nyquist frequency, 10 Hz");
            assert!(text(&o).contains(&want), "{}", text(&o));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// ESC, BEL, CR and a bidi override in a model's title and a motion's column name are shown
/// escaped, on standard output and standard error.
#[test]
fn control_characters_from_inputs_are_shown_escaped() {
    let dir = scratch("controls");
    let model = std::fs::read_to_string(root().join("models/mechanisms/pendulum.toml"))
        .unwrap()
        .replace("name = \"Simple pendulum\"", "name = \"Simple\\u001b[2J\\u0007\\rpendulum\\u202e\"");
    let file = dir.join("model.toml");
    std::fs::write(&file, model).unwrap();
    let o = mollier(&["check", s(&file)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(raw_controls(&text(&o)).is_empty(), "{:?}", text(&o));
    assert!(text(&o).contains("Simple\\u{1b}[2J\\u{7}\\rpendulum\\u{202e}"), "{}", text(&o));
    // JSON escapes it too, and reads back the same
    let o = mollier(&["check", s(&file), "--json"]);
    assert!(raw_controls(&text(&o)).is_empty(), "{:?}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["name"], "Simple\u{1b}[2J\u{7}\rpendulum\u{202e}");
    // a motion's column that is not an input is named in a note
    let motion = dir.join("motion.csv");
    std::fs::write(&motion, "time,swing.rotation,x\u{1b}]0;owned\u{7}\n0,0,1\n0.1,0.1,1\n").unwrap();
    let out = dir.join("out");
    let o = mollier(&["kinematics", "models/mechanisms/pendulum.toml", "--motion", s(&motion), "--out", s(&out)]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("x\\u{1b}]0;owned\\u{7}"), "{}", text(&o));
    assert!(raw_controls(&text(&o)).is_empty(), "{:?}", text(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
