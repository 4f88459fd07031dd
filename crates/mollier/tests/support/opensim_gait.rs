//! Where OpenSim's gait2354 pipeline files are (`tools/fetch-opensim-models` puts them in
//! `.cache/opensim-models/Gait2354_Simbody`, or `$MOLLIER_OPENSIM_MODELS/Gait2354_Simbody`).

use std::path::PathBuf;

/// The models folder; `None` (after saying why, a failure under `CI=true`) when the gait
/// pipeline is not in it.
pub fn models_or_skip(test: &str) -> Option<PathBuf> {
    let dir = mollier_core::shared_data::opensim_models();
    if dir.join("Gait2354_Simbody/subject01_walk1.trc").is_file() {
        Some(dir)
    } else {
        let why = format!("no Gait2354_Simbody pipeline in {} (run tools/fetch-opensim-models)", dir.display());
        mollier_core::shared_data::skip(test, &why);
        None
    }
}
