//! Helpers shared by the study's tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mollier::Compiled;
use mollier_study::Study;
use mollier_study::spec::StudySpec;

/// The repository's `models/shoulder`.
pub fn shoulder_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/shoulder")
}

/// The abduction study file.
pub fn abduction_file() -> PathBuf {
    shoulder_dir().join("abduction.toml")
}

/// The abduction study's specification.
pub fn abduction_spec() -> StudySpec {
    toml::from_str(&std::fs::read_to_string(abduction_file()).unwrap()).unwrap()
}

/// The abduction study with its specification changed by `edit` (e.g. fewer frames).
pub fn abduction_with(edit: impl FnOnce(&mut StudySpec)) -> Study {
    abduction_with_model(edit, |_| {})
}

/// The shoulder model, compiled.
pub fn shoulder_model() -> Compiled {
    mollier::load(&shoulder_dir().join("shoulder.toml"), &mollier::registry())
        .unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The abduction study with its specification and its compiled model changed (e.g. the model's
/// load sharing).
pub fn abduction_with_model(edit: impl FnOnce(&mut StudySpec), edit_model: impl FnOnce(&mut Compiled)) -> Study {
    let mut spec = abduction_spec();
    edit(&mut spec);
    let mut compiled = shoulder_model();
    edit_model(&mut compiled);
    Study::with_model(&abduction_file(), spec, compiled).unwrap_or_else(|e| panic!("{e}"))
}

/// A fresh directory under the system's temporary directory, unique to the call.
pub fn temp_dir(name: &str) -> PathBuf {
    static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let d = std::env::temp_dir().join(format!("mollier-study-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The rotator cuff in van der Helm's Table 2.
pub const ROTATOR_CUFF: [&str; 4] = ["m. supraspinatus", "m. infraspinatus", "m. teres minor", "m. subscapularis"];
