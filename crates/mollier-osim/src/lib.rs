//! # mollier-osim
//!
//! OpenSim models in: reads an OpenSim 4.x model (`.osim`, XML) and writes a Mollier model file
//! (TOML) that a person can read — comments name the source objects — with an import report that
//! lists every object Mollier does not reproduce exactly (where it is, its type, what was done).
//! docs/opensim-import.md says what maps to what.
//!
//! ```text
//! .osim ──read──▶ model::Model ──build──▶ TOML text ──mollier_format::parse──▶ checked Document
//! ```
//!
//! The crate depends on the file format only, not on the kernel. Problems in the `.osim` file
//! (not XML, unknown references, missing bodies) are [`mollier_format::Diagnostics`] at
//! `file:line:col` with the path of the XML element.

pub mod function;
pub mod geometry;
pub mod model;
pub mod motion;
pub mod pose;
pub mod report;

mod build;
mod xml;

use std::path::Path;

pub use build::{InputDef, SPECIFIC_TENSION};
use mollier_format::{Diagnostic, Diagnostics};
pub use report::{Entry, Report};

/// An imported model.
#[derive(Clone, Debug)]
pub struct Import {
    /// The OpenSim model as read.
    pub model: model::Model,
    /// The Mollier model file (TOML).
    pub toml: String,
    /// The inputs of the Mollier model, in order, and how each follows from the coordinates.
    pub inputs: Vec<InputDef>,
    /// The Mollier name of each body (ground first, then the BodySet's order).
    pub body_names: Vec<String>,
    /// The Mollier element of each muscle, in the ForceSet's order (`None` for a muscle left out:
    /// fewer than two of its path points are ever active).
    pub muscle_names: Vec<Option<String>>,
    /// The coordinates of the initial configuration (rad or m, one per coordinate).
    pub initial: Vec<f64>,
    /// What was not imported exactly.
    pub report: Report,
}

impl Import {
    /// The Mollier inputs (SI) for OpenSim coordinate values `q` (one per coordinate, in the
    /// model's order; coupled coordinates are set from their couplers first).
    pub fn inputs_from_coordinates(&self, q: &[f64]) -> Vec<f64> {
        let q = build::apply_couplers(&self.model, q.to_vec());
        self.inputs.iter().map(|d| d.function.value(q[d.coordinate]) - d.offset).collect()
    }

    /// The index of a coordinate by its OpenSim name.
    pub fn coordinate(&self, name: &str) -> Option<usize> {
        self.model.coordinates.iter().position(|c| c.name == name)
    }
}

/// Import the text of a `.osim` file; `file` names it in messages and comments. The model file
/// it makes is checked by [`mollier_format::parse`] (as `<file>.toml`).
pub fn import(file: &str, text: &str) -> Result<Import, Diagnostics> {
    import_without(file, text, &[])
}

/// [`import`], leaving out the muscles `leave_out` names (OpenSim names), each reported as left
/// out with its reason: for a muscle whose path the kernel cannot set up, which the import alone
/// does not know (`mollier::import_osim` finds them).
pub fn import_without(file: &str, text: &str, leave_out: &[(String, String)]) -> Result<Import, Diagnostics> {
    import_model(file, model::read(file, text)?, leave_out)
}

/// [`import_without`] of a model already read, perhaps changed since (`mollier scale` scales
/// one); `file` names the `.osim` file it came from.
pub fn import_model(file: &str, model: model::Model, leave_out: &[(String, String)]) -> Result<Import, Diagnostics> {
    let order = pose::joint_order(&model).map_err(|b| {
        Diagnostics::one(
            Diagnostic::new(
                file,
                format!("BodySet/Body[{}]", model.bodies[b].name),
                format!("body `{}` has no joint that connects it to ground", model.bodies[b].name),
            )
            .with_hint("every body needs a joint whose parent is ground or a body connected to ground"),
        )
    })?;
    let built = build::build(&model, file, &order, leave_out);
    let mut report = Report { source: file.to_string(), counts: Vec::new(), entries: model.unsupported.clone() };
    report.entries.extend(built.entries);
    report.counts = vec![
        ("bodies".into(), model.bodies.len() - 1),
        ("joints".into(), model.joints.len()),
        ("coordinates".into(), model.coordinates.len()),
        ("coordinate couplers".into(), model.couplers.len()),
        ("muscles".into(), model.muscles.len()),
        ("markers".into(), model.markers.len()),
        ("inputs".into(), built.inputs.len()),
    ];
    // the file must be one Mollier reads: a problem here is a fault of the import, said so
    let out_name = format!("{file}.toml");
    if let Err(d) = mollier_format::parse(&out_name, &built.toml) {
        let first = d.iter().next().map(|x| x.render()).unwrap_or_default();
        return Err(Diagnostics::one(
            Diagnostic::new(file, "", format!("the imported model is not a valid Mollier file: {first}"))
                .with_hint("this is a fault of the import: please report it with the .osim file"),
        ));
    }
    Ok(Import {
        model,
        toml: built.toml,
        inputs: built.inputs,
        body_names: built.body_names,
        muscle_names: built.muscle_names,
        initial: built.q0,
        report,
    })
}

/// Read ([`mollier_format::read_text`]: a regular file within the size limit, UTF-8) and import
/// a `.osim` file.
pub fn import_path(path: &Path) -> Result<Import, Diagnostics> {
    let file = path.display().to_string();
    let text = mollier_format::read_text(path, "OpenSim model")?;
    import(&file, &text)
}
