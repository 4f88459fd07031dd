//! The output contract of every command that writes a directory (docs/model-format.md, "Output
//! directories"): a unit replaced whole, `summary.json` last with `"complete": true`, timings
//! only in `timing.json`, so that reruns are byte-identical whatever the number of threads.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use support::{root, scratch};

/// Run `mollier` from the workspace root on `threads` rayon threads.
fn mollier(args: &[&str], threads: usize) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mollier"))
        .args(args)
        .current_dir(root())
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .expect("runs")
}

/// Every file under `dir` (relative path → bytes).
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("a directory") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("inside").to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).expect("readable"));
            }
        }
    }
    out
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("summary.json")).expect("summary.json")).expect("JSON")
}

/// The commands that write a directory, each with its arguments before `--out`.
const COMMANDS: &[&[&str]] = &[
    &["kinematics", "models/mechanisms/four-bar.toml", "--motion", "models/mechanisms/four-bar-motion.csv"],
    &[
        "inverse-dynamics",
        "models/mechanisms/double-pendulum.toml",
        "--motion",
        "models/mechanisms/double-pendulum-motion.mot",
    ],
    &[
        "inverse",
        "models/mechanisms/elbow-muscles.toml",
        "--motion",
        "models/mechanisms/elbow-muscles-motion.csv",
        "--criterion",
        "d",
    ],
    &["simulate", "models/mechanisms/pendulum.toml", "--duration", "0.5", "--dt", "0.01"],
];

#[test]
fn reruns_are_byte_identical_but_for_timing_whatever_the_threads() {
    let dir = scratch("reruns");
    for args in COMMANDS {
        let run = |name: &str, threads: usize| {
            let out = dir.join(format!("{}-{name}", args[0]));
            let mut a = args.to_vec();
            a.extend(["--out", out.to_str().expect("utf-8"), "--quiet"]);
            let o = mollier(&a, threads);
            assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
            let mut f = files(&out);
            // the marker that lets a later run replace the directory, outside `files`
            assert_eq!(f.remove(".mollier-output").expect("the marker"), b"mollier-output 1\n", "{args:?}");
            let timing = f.remove("timing.json").expect("timing.json");
            let timing: serde_json::Value = serde_json::from_slice(&timing).expect("JSON");
            assert!(timing["wall_ms"].as_f64().is_some_and(|t| t > 0.0), "{args:?}: {timing}");
            f
        };
        let (a, b) = (run("one", 1), run("two", 2));
        assert!(a.len() >= 3, "{args:?}: {:?}", a.keys());
        assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>(), "{args:?}");
        for (name, bytes) in &a {
            assert!(bytes == &b[name], "{args:?}: {name} differs between runs on 1 and 2 threads");
            let text = String::from_utf8_lossy(bytes);
            for field in ["\"ms\"", "wall_ms", "ms_per_frame", "ms_per_step", "time_ms"] {
                assert!(!text.contains(field), "{args:?}: {name} has a timing field {field}");
            }
            if name.ends_with(".csv") {
                let header = text.lines().find(|l| !l.starts_with('#')).unwrap_or("");
                assert!(!header.split(',').any(|c| c == "ms"), "{args:?}: {name} has a column of ms");
            }
        }
        let s: serde_json::Value = serde_json::from_slice(&a["summary.json"]).expect("JSON");
        assert_eq!(s["complete"], true, "{args:?}");
        let mut listed: Vec<String> =
            s["files"].as_array().expect("files").iter().map(|f| f.as_str().unwrap_or("").to_string()).collect();
        listed.push("summary.json".into());
        listed.sort();
        let mut present: Vec<String> = a.keys().cloned().collect();
        present.push("timing.json".into());
        present.sort();
        assert_eq!(listed, present, "{args:?}: summary.json lists every file");
    }
}

#[test]
fn a_rerun_replaces_the_directory_whole() {
    let dir = scratch("replace");
    let out = dir.join("out");
    let o = out.to_str().expect("utf-8");
    let mut a = COMMANDS[1].to_vec();
    a.extend(["--out", o, "-q"]);
    assert_eq!(mollier(&a, 1).status.code(), Some(0));
    assert!(out.join("units.csv").is_file());
    // another command into the same directory: nothing of the first run survives
    let mut a = COMMANDS[0].to_vec();
    a.extend(["--out", o, "-q"]);
    assert_eq!(mollier(&a, 1).status.code(), Some(0));
    let mut names: Vec<String> = files(&out).into_keys().collect();
    names.sort();
    assert_eq!(
        names,
        [".mollier-output", "deformations.csv", "positions.csv", "summary.json", "timing.json", "transfer.csv"]
    );
    assert_eq!(summary(&out)["command"], "kinematics");
    // and nothing beside it
    let beside: Vec<_> = std::fs::read_dir(&dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(beside, ["out"]);
}

#[test]
fn a_directory_of_other_files_is_refused_and_kept() {
    let dir = scratch("foreign");
    std::fs::write(dir.join("notes.txt"), "mine").expect("write");
    let mut a = COMMANDS[0].to_vec();
    a.extend(["--out", dir.to_str().expect("utf-8")]);
    let o = mollier(&a, 1);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not an output directory of Mollier"));
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).expect("kept"), "mine");
}

#[test]
fn a_killed_run_leaves_the_previous_output_whole() {
    let dir = scratch("killed");
    let out = dir.join("out");
    let o = out.to_str().expect("utf-8");
    let args = ["simulate", "models/mechanisms/pendulum.toml", "--dt", "0.001", "--out", o, "-q"];
    let first = [&args[..2], &["--duration", "0.2"], &args[2..]].concat();
    assert_eq!(mollier(&first, 1).status.code(), Some(0));
    let before = files(&out);
    // a long run, killed while it writes its rows
    let long = [&args[..2], &["--duration", "1000"], &args[2..]].concat();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mollier")).args(&long).current_dir(root()).spawn().expect("runs");
    // killed once its staging directory exists with a file in it (the swap is under way), not
    // after a guessed delay that might end before staging starts
    let staging = dir.join(format!(".out.partial-{}", child.id()));
    let started = std::time::Instant::now();
    while !std::fs::read_dir(&staging).is_ok_and(|mut d| d.next().is_some()) {
        if started.elapsed().as_secs() >= 60 {
            let _ = child.kill();
            panic!("no staging directory {} after 60 s", staging.display());
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().expect("killed");
    let _ = child.wait();
    assert!(files(&out) == before, "the old output changed");
    assert_eq!(summary(&out)["complete"], true);
    // the next run cleans up the killed run's temporary directory
    assert_eq!(mollier(&first, 1).status.code(), Some(0));
    let beside: Vec<_> = std::fs::read_dir(&dir).expect("dir").map(|e| e.expect("entry").file_name()).collect();
    assert_eq!(beside, ["out"]);
}

#[test]
fn kinematics_writes_second_order_transfer_functions_on_request() {
    // the values are checked against central differences in crates/mollier/tests/second_order.rs
    let dir = scratch("second-order");
    let out = dir.join("out");
    let mut a = vec![
        "kinematics",
        "models/mechanisms/spherical-joint.toml",
        "--motion",
        "models/mechanisms/spherical-joint-motion.mot",
    ];
    a.extend(["--out", out.to_str().expect("utf-8"), "--second-order", "-q"]);
    let o = mollier(&a, 1);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = |f: &str| std::fs::read_to_string(out.join(f)).expect(f);
    let (second, first) = (text("second_order.csv"), text("transfer.csv"));
    let header: Vec<&str> = second.lines().next().expect("header").split(',').collect();
    let first_header: Vec<&str> = first.lines().next().expect("header").split(',').collect();
    // three inputs: six pairs per free mode, three first-order columns
    assert_eq!((header.len() - 1) * 3, (first_header.len() - 1) * 6, "{header:?}");
    assert!(header.iter().skip(1).all(|h| h.split('/').count() == 3), "{header:?}");
    assert_eq!(second.lines().count(), first.lines().count());
    assert!(summary(&out)["files"].as_array().expect("files").iter().any(|f| f == "second_order.csv"));
}
