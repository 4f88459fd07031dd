//! Memory bounded by the work, not the motion: `mollier kinematics`, `mollier inverse` and
//! `mollier study` on motions of growing length, each run's peak resident memory (the child's
//! `ru_maxrss`) compared: the slope per frame must be a small fraction of what holding each
//! frame's results would cost. And `mollier view` thins a long motion to its frame budget.
//! Counts and bytes, never times. Linux only (`/proc`).

#![cfg(target_os = "linux")]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use support::root;

/// A flexion of the elbow model over `frames` frames (1 ms apart, between -80° and 50°).
fn elbow_motion(dir: &Path, frames: usize) -> PathBuf {
    let mut s = String::from("time,elbow.rotation [deg]\n");
    for k in 0..frames {
        let angle = -80.0 + 130.0 * (0.5 - 0.5 * (k as f64 * 0.01).cos());
        s += &format!("{},{angle}\n", k as f64 * 1e-3);
    }
    let path = dir.join(format!("motion-{frames}.csv"));
    std::fs::write(&path, s).expect("a motion file");
    path
}

/// Run `mollier args...` to the end and return its peak resident memory (kB): the child's
/// `ru_maxrss`, from `wait4` as it is reaped.
// the child is reaped by `wait4` below, which std cannot see
#[allow(clippy::zombie_processes)]
fn peak_kb(args: &[&str]) -> u64 {
    let child = Command::new(env!("CARGO_BIN_EXE_mollier"))
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("mollier starts");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid, "wait4");
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "mollier {args:?}: status {status}");
    usage.ru_maxrss as u64
}

/// [`peak_kb`] of `mollier args... --out DIR/out --quiet`, the output removed after.
fn peak_kb_out(dir: &Path, args: &[&str]) -> u64 {
    let out = dir.join("out");
    let mut all = args.to_vec();
    all.extend(["--out", out.to_str().unwrap(), "--quiet"]);
    let k = peak_kb(&all);
    let _ = std::fs::remove_dir_all(&out);
    k
}

/// Peak memory per frame (bytes) between a run of `small` and one of `large` frames.
fn slope(run: impl Fn(&Path) -> u64, small: usize, large: usize, tmp: &Path) -> (f64, u64, u64) {
    let (a, b) = (run(&elbow_motion(tmp, small)), run(&elbow_motion(tmp, large)));
    let per_frame = (b as f64 - a as f64) * 1024.0 / (large - small) as f64;
    eprintln!("peak {a} kB at {small} frames, {b} kB at {large}: {per_frame:.0} bytes a frame");
    (per_frame, a, b)
}

fn tmp(name: &str) -> PathBuf {
    support::scratch(name)
}

#[test]
fn kinematics_memory_does_not_grow_with_the_frames() {
    let dir = tmp("kinematics");
    let model = root().join("models/mechanisms/elbow-muscles.toml");
    let run = |motion: &Path| {
        peak_kb_out(
            &dir,
            &["kinematics", model.to_str().unwrap(), "--motion", motion.to_str().unwrap(), "--second-order"],
        )
    };
    // a frame's rows (positions, deformations, first- and second-order transfer functions,
    // lengths, moment arms) held: about 850 bytes a frame; the motion file, read whole, about 150
    let (per_frame, a, b) = slope(run, 10_000, 60_000, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(per_frame < 400.0, "{per_frame:.0} bytes a frame (peak {a} kB at 10,000 frames, {b} kB at 60,000)");
}

#[test]
fn inverse_memory_does_not_grow_with_the_frames() {
    let dir = tmp("inverse");
    let model = root().join("models/mechanisms/elbow-muscles.toml");
    let run = |motion: &Path| {
        let m = motion.to_str().unwrap();
        peak_kb_out(&dir, &["inverse", model.to_str().unwrap(), "--motion", m, "--criterion", "b", "--static"])
    };
    // a frame's result (forces, lengths, reserves, status) held: about 490 bytes a frame; the
    // motion file, read whole, about 100
    let (per_frame, a, b) = slope(run, 4_000, 24_000, &dir);
    let _ = std::fs::remove_dir_all(&dir);
    assert!(per_frame < 250.0, "{per_frame:.0} bytes a frame (peak {a} kB at 4,000 frames, {b} kB at 24,000)");
}

#[test]
fn a_long_motion_is_thinned_to_the_page_budget_and_memory_does_not_grow() {
    let dir = tmp("view");
    let model = root().join("models/mechanisms/elbow-muscles.toml");
    let page = dir.join("view.html");
    let args = |motion: &Path| -> Vec<String> {
        ["view", model.to_str().unwrap(), "--motion", motion.to_str().unwrap(), "--out", page.to_str().unwrap()]
            .map(String::from)
            .to_vec()
    };
    let run = |motion: &Path| {
        let a = args(motion);
        peak_kb(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (per_frame, a, b) = slope(run, 10_000, 60_000, &dir);
    // the page of 60,000 frames: at most the budget's frames, and it says so
    let out = Command::new(env!("CARGO_BIN_EXE_mollier")).args(args(&elbow_motion(&dir, 60_000))).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let html = std::fs::read_to_string(&page).expect("the page");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(stderr.contains("60000 frames drawn every 31th"), "{stderr}");
    assert!(stdout.contains(": 1937 frames,"), "{stdout}");
    assert!(html.contains("every 31th of 60000 frames: a page draws at most 2000"), "the page does not say so");
    assert!(html.len() < 20_000_000, "a page of {} MB", html.len() / 1_000_000);
    // without the budget the page and the geometry grow by about 4,000 bytes a frame
    assert!(per_frame < 400.0, "{per_frame:.0} bytes a frame (peak {a} kB at 10,000 frames, {b} kB at 60,000)");
}

#[test]
fn a_long_forward_run_holds_bounded_memory() {
    // issue 37: rows were buffered in chunks of steps/200. The elbow with its two Hill muscles at
    // a fixed 10 µs step, a row a step (2e4 and 2e5 rows, written as they come): the peak does
    // not grow with the steps, and stays under 100 MB (the test profile's binary makes 1e6 steps
    // a minute; the slope says what they would hold)
    let dir = tmp("forward");
    let model = root().join("models/forward/elbow.toml");
    let run = |duration: &str| {
        peak_kb_out(&dir, &["simulate", model.to_str().unwrap(), "--duration", duration, "--dt", "1e-5"])
    };
    let (a, b) = (run("0.2"), run("2"));
    let per_step = (b as f64 - a as f64) * 1024.0 / 180_000.0;
    eprintln!("peak {a} kB at 2e4 steps, {b} kB at 2e5: {per_step:.1} bytes a step");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(b < 100_000, "{b} kB");
    assert!(per_step < 50.0, "{per_step:.1} bytes a step");
}

#[test]
fn study_memory_does_not_grow_with_the_frames() {
    // issue 33: a study held every frame's kinematics and results for its plots and page, about
    // 100 kB a frame of the shoulder (2,000 frames: 321 MB with every variant). The abduction
    // study with one variant, over 997 and 3985 frames: the tables streamed, both runs keep the
    // same 499 frames (every 2nd, every 8th) for the plots and the page. The peak moves by up to
    // 2 MB from run to run of one binary (997 frames: 66.9 to 68.7 MB), so the runs are 2988
    // frames apart (996 apart, one binary measured 181 to 2513 bytes a frame)
    let dir = tmp("study");
    let shoulder = root().join("models/shoulder");
    let text = std::fs::read_to_string(shoulder.join("abduction.toml")).expect("the study");
    let study = |frames: usize| {
        let path = dir.join(format!("study-{frames}.toml"));
        let t = text
            .replace("model = \"shoulder.toml\"", &format!("model = {:?}", shoulder.join("shoulder.toml")))
            .replace("frames = 37", &format!("frames = {frames}"))
            .replace("criteria = [\"a\", \"b\", \"c\", \"d\"]", "criteria = [\"b\"]")
            .replace("joint_cone = [\"with\", \"without\"]", "joint_cone = [\"without\"]");
        std::fs::write(&path, t).expect("a study file");
        path
    };
    let run = |frames: usize| peak_kb_out(&dir, &["study", study(frames).to_str().unwrap()]);
    let (a, b) = (run(997), run(3985));
    let per_frame = (b as f64 - a as f64) * 1024.0 / 2988.0;
    eprintln!("peak {a} kB at 997 frames, {b} kB at 3985: {per_frame:.0} bytes a frame");
    let _ = std::fs::remove_dir_all(&dir);
    // what does grow: the motion's frames (inputs and the rhythm's posture), about 250 bytes
    assert!(per_frame < 2_000.0, "{per_frame:.0} bytes a frame (peak {a} kB at 997 frames, {b} kB at 3985)");
}
