//! What the command's tests share: the repository root, running `mollier`, scratch directories
//! and reading the CSV tables it writes. Each test binary uses a part of it, hence the allowance.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository's root: the commands run there, as the README's examples do.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `mollier ARGS` run from the repository's root.
pub fn mollier(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mollier")).args(args).current_dir(root()).output().expect("runs")
}

/// A stream's bytes as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A run's standard output, then its standard error, as text.
pub fn both(o: &Output) -> String {
    format!("{}{}", text(&o.stdout), text(&o.stderr))
}

/// A fresh scratch directory for one test, named for the test binary and the process.
pub fn scratch(name: &str) -> PathBuf {
    let d =
        std::env::temp_dir().join(format!("mollier-cli-{}-{}-{name}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// A path as an argument.
pub fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}
