//! One module per command; `main.rs` parses the command line and calls them.

pub(crate) mod check;
pub(crate) mod frames;
pub(crate) mod ik;
pub(crate) mod import;
pub(crate) mod inverse;
pub(crate) mod inverse_dynamics;
pub(crate) mod kinematics;
pub(crate) mod max_moment;
pub(crate) mod optimize;
pub(crate) mod scale;
pub(crate) mod simulate;
pub(crate) mod study;
pub(crate) mod types;
pub(crate) mod view;

/// What the command modules use.
pub(crate) mod prelude {
    pub(crate) use std::io::{IsTerminal, Write};
    pub(crate) use std::path::Path;
    pub(crate) use std::process::ExitCode;

    pub(crate) use indicatif::{ProgressBar, ProgressStyle};
    pub(crate) use mollier::{
        CheckReport, Compiled, FrameError, InputInfo, InverseDynamicsRun, KinematicsRun, Motion, MotionDerivatives,
        MuscleColumns, NodeRole, Smoothing,
    };
    pub(crate) use mollier_core::element::{NodeKind, Quantity};
    pub(crate) use mollier_core::registry::{ParamDoc, ParamKind, Registry};
    pub(crate) use mollier_core::{CoordRole, ModeRole};
    pub(crate) use mollier_format::{Diagnostic, Diagnostics, printable};
    pub(crate) use serde_json::{Value, json};

    pub(crate) use super::frames::{FrameRun, LoopKind, Row, frame_at, run_frames, steps_from, summary_head};
    pub(crate) use crate::OnError;
    pub(crate) use crate::common::*;
    pub(crate) use mollier::output::Table;
}
