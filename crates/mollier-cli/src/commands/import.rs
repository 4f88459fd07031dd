//! `mollier import MODEL.osim --out MODEL.toml [--report REPORT.md]`: an OpenSim 4.x model as a
//! Mollier model file, with an import report of everything not imported exactly.

use std::path::PathBuf;

use super::prelude::*;

/// The report's default path: beside the model file, `MODEL.import.md`.
fn default_report(out: &Path) -> PathBuf {
    out.with_extension("import.md")
}

/// Write `text` to `path` through a temporary sibling, so that a failed run leaves no half file.
fn write_whole(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.partial-{}", std::process::id()));
    std::fs::write(&tmp, text)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

pub fn run(osim: &Path, out: &Path, report_path: Option<&Path>, quiet: bool, registry: &Registry) -> ExitCode {
    let imported = match mollier_osim::import_path(osim) {
        Ok(i) => i,
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    let report_path = report_path.map(Path::to_path_buf).unwrap_or_else(|| default_report(out));
    for (path, text) in [(out, imported.toml.as_str()), (report_path.as_path(), imported.report.markdown().as_str())] {
        if let Err(e) = write_whole(path, text) {
            errln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(FAILED);
        }
    }
    if !quiet {
        errln!(
            "wrote {} ({} inputs, {} muscles) and {} ({} objects not imported exactly)",
            out.display(),
            imported.inputs.len(),
            imported.muscle_names.iter().flatten().count(),
            report_path.display(),
            imported.report.entries.len()
        );
    }
    // the model must compile and be well posed: anything else is a fault of the import
    match load_well_posed(out, registry) {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => {
            errln!(
                "error: the imported model {} cannot be analysed (see above); please report this with the .osim file",
                out.display()
            );
            code
        }
    }
}
