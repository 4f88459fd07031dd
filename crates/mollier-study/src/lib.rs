//! # mollier-study
//!
//! A study runs a motion through a model and shares the load among its muscles for several
//! criteria, with and without a joint stability constraint, and writes the results as CSV
//! tables, JSON summaries and SVG plots. It is the runner of the shoulder abduction study of
//! van der Helm (1994, "Results"): `mollier study models/shoulder/abduction.toml`.
//!
//! - [`spec`]: the study file (TOML);
//! - [`rhythm`]: the scapulohumeral rhythm of de Groot & Brand (2001), as in DAS3;
//! - [`motion`]: the rhythm in a model's inputs;
//! - [`muscles`]: the model's muscle elements grouped into muscles;
//! - [`study`]: setting up and running: kinematics, then load sharing per variant with
//!   [`mollier_optim`];
//! - [`output`], [`plots`]: the files;
//! - [`max_moment`]: maximum isometric moments over postures (Chadwick et al. 2014, II-F).
//!
//! ```no_run
//! let study = mollier_study::Study::load("models/shoulder/abduction.toml".as_ref()).unwrap();
//! // tables, summaries and plots, written as one unit (summary.json last, "complete": true),
//! // the tables streamed as the frames are solved: memory does not grow with the motion
//! let csv = mollier::output::TableFormat::Csv;
//! let written = mollier_study::output::run_and_write(&study, "results/abduction".as_ref(), csv).unwrap();
//! println!("{} files", written.files.len());
//! ```

mod chart;
pub mod forward_plots;
pub mod max_moment;
pub mod motion;
pub mod muscles;
pub mod output;
pub mod plots;
pub mod rhythm;
pub mod rotation;
pub mod spec;
pub mod study;
mod view;

pub use study::{Checked, KinematicFrame, Kinematics, Results, Study, StudyError, StudyFrame, Variant, VariantResult};
