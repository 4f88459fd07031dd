//! `mollier import MODEL.osim --out MODEL.toml [--report REPORT.md] [--motion COORDS.mot
//! --motion-out MOTION.csv]`: an OpenSim 4.x model as a Mollier model file, with an import report
//! of everything not imported exactly, and optionally an OpenSim motion of its coordinates as a
//! motion of the model's inputs.

use std::path::PathBuf;

use super::prelude::*;

/// The report's default path: beside the model file, `MODEL.import.md`.
fn default_report(out: &Path) -> PathBuf {
    out.with_extension("import.md")
}

// one argument per option of `mollier import`, as main.rs passes them
#[allow(clippy::too_many_arguments)]
pub fn run(
    osim: &Path,
    out: &Path,
    report_path: Option<&Path>,
    motion: Option<(&Path, &Path)>,
    geometry: &[PathBuf],
    force: bool,
    quiet: bool,
    registry: &Registry,
) -> ExitCode {
    // imported and compiled: a muscle whose path cannot be set up is left out and reported
    let file = osim.display().to_string();
    let imported = match mollier_format::read_text(osim, "OpenSim model")
        .and_then(|text| mollier::import_osim(&file, &text, registry).map(|(i, _)| (i, text)))
    {
        // the bodies' meshes, when their files are found (drawing only)
        Ok((mut i, text)) => {
            let out_dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
            mollier_osim::geometry::attach_geometry(&mut i, osim, &text, geometry, out_dir);
            i
        }
        Err(d) => {
            report(&d);
            return ExitCode::from(INVALID);
        }
    };
    let report_path = report_path.map(Path::to_path_buf).unwrap_or_else(|| default_report(out));
    // every path is checked before any file is written
    let mut targets = vec![out, report_path.as_path()];
    targets.extend(motion.map(|(_, csv)| csv));
    if let Err(code) = check_outputs(&targets, force) {
        return code;
    }
    let mut files = vec![(out.to_path_buf(), imported.toml.clone()), (report_path.clone(), imported.report.markdown())];
    if let Some((mot, csv)) = motion {
        let file = mot.display().to_string();
        let converted = mollier_format::read_text(mot, "OpenSim motion")
            .and_then(|text| imported.read_coordinate_motion(&file, &text));
        match converted {
            Ok(m) => {
                if !m.missing.is_empty() && !quiet {
                    errln!("note: {file} has no column for {}: held at their default values", m.missing.join(", "));
                }
                files.push((csv.to_path_buf(), imported.motion_csv(&m, &file)));
            }
            Err(d) => {
                report(&d);
                return ExitCode::from(INVALID);
            }
        }
    }
    for (path, text) in &files {
        if let Err(code) = write_output(path, text.as_bytes(), force) {
            return code;
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
