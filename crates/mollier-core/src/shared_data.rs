//! The reference data kept outside the repository (`../shared/data`, beside the checkout), for
//! tests that compare with it and skip when it is absent.
//!
//! A skip must be seen: `cargo test` hides what a passing test prints (with `println!` and
//! `eprintln!` alike), so [`skip`] writes to the process's standard error directly, which the
//! test harness does not capture: `SKIPPED: <test>: <reason>` appears in the run's output.

use std::io::Write;
use std::path::PathBuf;

/// The directory `shared/data` beside the repository's checkout.
pub fn dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data"))
}

/// The text of `relative` under [`dir`], or the reason it cannot be read.
pub fn read(relative: &str) -> Result<(PathBuf, String), String> {
    let path = dir().join(relative);
    std::fs::read_to_string(&path)
        .map(|text| (path.clone(), text))
        .map_err(|e| format!("{} is absent or unreadable ({e}): the reference data is not checked out", path.display()))
}

/// Report that `test` is skipped, and why, where `cargo test` shows it.
pub fn skip(test: &str, reason: &str) {
    // straight to the file descriptor: the harness captures only the print macros
    let _ = writeln!(std::io::stderr().lock(), "SKIPPED: {test}: {reason}");
}
