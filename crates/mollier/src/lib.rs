//! # mollier
//!
//! The facade that turns model files into kernel models. Compiling needs three things at once —
//! the file format ([`mollier_format`]), the kernel ([`mollier_core`]) and the element types
//! ([`registry`]) — and both the `mollier` command and the language bindings need the same
//! compile step, so it lives here rather than in any of them.
//!
//! Pipeline (after MuJoCo's mjSpec → mjModel → mjData):
//! ```text
//! file ──parse──▶ Document (ModelSpec) ──compile──▶ Compiled { Model, names } ──▶ Data, analyses
//! ```
//! [`compile()`] resolves every name to a typed id once; nothing after it looks anything up by name.
//! The analyses run frame by frame: [`KinematicsRun`] (positions, deformations, transfer
//! functions), [`InverseDynamicsRun`] (driving forces, reactions, law stresses; motions are
//! differentiated by [`Motion::differentiate`]), [`InverseRun`] (the driving forces shared
//! among the muscles, with its tables in [`inverse_tables`]) and [`Simulation`] (forward
//! dynamics).
//!
//! ```
//! let registry = mollier::registry();
//! let doc = mollier_format::parse("pendulum.toml", r#"
//! format_version = 1
//! fixed = ["ground"]
//! inputs = ["swing.rotation"]
//! [bodies.ground]
//! origin = [0, 0, 0]
//! [bodies.arm]
//! origin = "ground"
//! points = { tip = [0, -0.5, 0] }
//! [elements.swing]
//! type = "hinge"
//! p = "ground"
//! q = "arm"
//! axis = [0, 0, 1]
//! "#).unwrap();
//! let compiled = mollier::compile(&doc, &registry).unwrap();
//! assert_eq!(compiled.model.n_q(), 1);
//! assert!(mollier::check(&compiled, &registry).is_well_posed());
//! ```

pub mod analysis;
pub mod check;
pub mod cmc;
pub mod compile;
pub mod dynamics;
pub mod forward;
pub mod forward_tables;
pub mod ik;
pub mod inverse;
pub mod inverse_tables;
pub mod load_sharing;
pub mod loads;
pub mod motion;
pub mod optimize;
pub mod optimize_cone;
pub mod optimize_guess;
pub mod optimize_markers;
pub mod output;
pub mod reference;
pub mod scale;
pub mod schema;
pub mod spline;
pub mod trc;

use mollier_core::registry::Registry;

pub use analysis::{FrameError, FrameOutput, KinematicsRun, MuscleColumns, element_warnings};
pub use check::{CheckReport, check};
pub use cmc::{Cmc, CmcError, CmcInterval, CmcOptions, TrackTarget};
pub use compile::{
    BodyInfo, Compiled, InputInfo, NodeRole, PointEntry, UserElement, compile, import_osim, load, load_text,
};
pub use dynamics::{Column, DynamicsFrame, InverseDynamicsRun, Simulation, SimulationState};
pub use forward::{
    DEFAULT_DEFECT_TOLERANCE, Defects, Excitations, ForwardFrame, ForwardOptions, ForwardRun, Integration,
    rigid_tendons,
};
pub use forward_tables::{Integrator, SimulateError, SimulateOptions, SimulateRun};
pub use ik::{IkFrame, IkOptions, IkRun, Tasks, Unknowns};
pub use inverse::{InverseError, InverseOptions, InverseRun};
pub use inverse_tables::LoadSharingTables;
pub use load_sharing::{ConeInfo, LoadSharingSetup, MuscleInfo, ReserveInfo, SignInfo};
pub use loads::{ExternalLoads, Forcing};
pub use mollier_sim::{Controller, Method as StepMethod, StepStats, Tolerances};
pub use motion::{Method, Motion, MotionDerivatives, Rows, RowsIter, Smoothing, Source, parse_motion, read_motion};
pub use output::{OutputDir, OutputError, Table, TableId};
pub use reference::element_reference;
pub use schema::schema;
pub use spline::Ends;
pub use trc::{MarkerTrial, parse_trc, read_trc};

/// Every element type this build knows, each registered by its own crate.
///
/// To add an element crate: depend on it in `crates/mollier/Cargo.toml` and add one line here.
pub fn registry() -> Registry {
    let mut r = Registry::new();
    add(&mut r, mollier_truss::register);
    add(&mut r, mollier_hinge::register);
    add(&mut r, mollier_beam::register);
    add(&mut r, mollier_surface::register);
    add(&mut r, mollier_curved_truss::register);
    add(&mut r, mollier_engin_joint::register);
    add(&mut r, mollier_soft_contact::register);
    add(&mut r, mollier_cardan_joint::register);
    add(&mut r, mollier_flexion_torsion_joint::register);
    add(&mut r, mollier_joint_stop::register);
    add(&mut r, mollier_path_point::register);
    r
}

fn add(r: &mut Registry, register: fn(&mut Registry) -> Result<(), String>) {
    // two crates claiming one type name is a mistake in this build, not in a user's file
    if let Err(e) = register(r) {
        panic!("element registry: {e}");
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_registry_has_the_built_in_types() {
        let r = super::registry();
        let names: Vec<&str> = r.types().map(|t| t.name).collect();
        for t in ["beam", "hinge", "truss", "surface", "curved-truss", "ball-socket-resistance"] {
            assert!(names.contains(&t), "{t} is not registered: {names:?}");
        }
    }
}
