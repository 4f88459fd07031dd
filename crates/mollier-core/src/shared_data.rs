//! The reference data kept outside the repository (`../shared/data`, beside the checkout), for
//! tests that compare with it and skip when it is absent.
//!
//! A skip must be seen: `cargo test` hides what a passing test prints (with `println!` and
//! `eprintln!` alike), so [`skip`] writes to the process's standard error directly, which the
//! test harness does not capture: `SKIPPED: <test>: <reason>` appears in the run's output.
//!
//! Under `CI=true` (as `.ci/run` runs) every dependency of a test is present by construction
//! (the data beside the checkout, python3), so a skip can only mean a fault: [`skip`] panics
//! there instead, and the test fails.

use std::io::Write;
use std::path::PathBuf;

/// The directory `shared/data` beside the repository's checkout.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
}

/// OpenSim's model collection, which `tools/fetch-opensim-models` brings: the directory
/// `$MOLLIER_OPENSIM_MODELS`, or else `.cache/opensim-models` in the checkout.
pub fn opensim_models() -> PathBuf {
    std::env::var_os("MOLLIER_OPENSIM_MODELS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../.cache/opensim-models")))
}

/// The text of `relative` under [`dir`], or the reason it cannot be read.
pub fn read(relative: &str) -> Result<(PathBuf, String), String> {
    let path = dir().join(relative);
    std::fs::read_to_string(&path)
        .map(|text| (path.clone(), text))
        .map_err(|e| format!("{} is absent or unreadable ({e}): the reference data is not checked out", path.display()))
}

/// Report that `test` is skipped, and why, where `cargo test` shows it; under `CI=true`, fail
/// the test instead (panics).
pub fn skip(test: &str, reason: &str) {
    skip_or_fail(in_ci(), test, reason);
}

/// `python3` run with `args` to its end (its output), or `None` when there is no `python3` to
/// run, after [`skip`]ping `test` (under `CI=true` a failure).
pub fn python3(test: &str, args: &[&std::ffi::OsStr]) -> Option<std::process::Output> {
    match std::process::Command::new("python3").args(args).output() {
        Ok(out) => Some(out),
        Err(e) => {
            skip(test, &format!("python3 is not available ({e})"));
            None
        }
    }
}

/// Whether the environment says this is CI (`CI=true`, as `.ci/run` is run).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

fn skip_or_fail(ci: bool, test: &str, reason: &str) {
    if ci {
        panic!("{test}: a missing dependency under CI=true is a failure, not a skip: {reason}");
    }
    // straight to the file descriptor: the harness captures only the print macros
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {test}: {reason}");
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_skip_under_ci_is_a_failure() {
        assert!(std::panic::catch_unwind(|| super::skip_or_fail(true, "probe", "absent")).is_err());
        // outside CI the same call reports and returns
        super::skip_or_fail(false, "a_skip_under_ci_is_a_failure", "the probe of a skip outside CI");
    }
}
