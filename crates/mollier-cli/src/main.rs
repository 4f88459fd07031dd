//! `mollier`: check models, run kinematic and dynamic analyses, print the model-file schema.
//!
//! Exit codes: 0 success; 1 the analysis failed (the model is not well posed, or frames or
//! simulation steps could not be solved); 2 a file is unreadable or invalid (model, motion), the
//! results cannot be written, or the command line is wrong.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use commands::{
    check, ik, import, inverse, inverse_dynamics, kinematics, max_moment, optimize, scale, simulate, study, types, view,
};
use common::{MotionRun, positive_number};

/// `println!` that does not panic when stdout is closed (piped into `head`, say), and never
/// prints a control character from an input raw (`mollier_format::printable_lines`: the one
/// escaping every message goes through; line breaks are the message's own).
macro_rules! outln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stdout().lock(), "{}", mollier_format::printable_lines(&format!($($t)*)));
    }};
}

/// `print!` that does not panic when stdout is closed; escaped as `outln!`.
macro_rules! out {
    ($($t:tt)*) => {{
        let _ = write!(std::io::stdout().lock(), "{}", mollier_format::printable_lines(&format!($($t)*)));
    }};
}

/// `eprintln!` that does not panic when stderr is closed; escaped as `outln!`.
macro_rules! errln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), "{}", mollier_format::printable_lines(&format!($($t)*)));
    }};
}

mod commands;
mod common;

/// Mollier: finite-element multibody kinematics and dynamics for musculoskeletal models.
#[derive(Parser, Debug)]
#[command(name = "mollier", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How result tables are written: `csv` (default), or `sto`, OpenSim storage files (tab
    /// separated, with OpenSim's header) that OpenSim's GUI and scripts load; `units.csv` and the
    /// JSON files stay as they are.
    #[arg(long, global = true, value_enum, default_value = "csv")]
    format: common::Format,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Check a model: its nodes, elements, inputs, degrees of freedom and well-posedness.
    ///
    /// Exit code 0 when the model is well posed, 1 when it is not, 2 when the file is invalid.
    Check {
        /// The model file (.toml, or .json).
        model: PathBuf,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Inverse kinematics: the motion of the model's inputs that best fits a marker trial.
    ///
    /// Frame by frame, the weighted least squares of the model's markers (points named as the
    /// trial's markers) against the measured ones, closed chains held exactly. Writes
    /// DIR/motion.csv (a motion file for `inverse-dynamics`, `inverse` and `study`),
    /// DIR/marker_errors.csv (m), for an OpenSim model DIR/coordinates.csv, and DIR/summary.json.
    /// See docs/inverse-kinematics.md.
    Ik {
        /// The model file, or an OpenSim model (.osim: its coordinates are fitted).
        model: PathBuf,
        /// The marker trial (.trc; units from its header).
        #[arg(long)]
        markers: PathBuf,
        /// The markers to use and their weights, and coordinates to hold: a TOML file, or
        /// OpenSim's IK setup (.xml, its IKTaskSet). Default: every marker of the trial that the
        /// model has, weight 1.
        #[arg(long)]
        tasks: Option<PathBuf>,
        /// A frame ends when no step changes an unknown by more than this (rad or m). OpenSim's IK
        /// stops at its `accuracy`, 1e-5 by default: a looser tolerance takes fewer steps.
        #[arg(long, default_value_t = 1e-10)]
        tolerance: f64,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Scale an OpenSim model or a Mollier model file to a subject, as OpenSim's ScaleTool does.
    ///
    /// The factors per body from marker-pair distances of a static trial (the setup's
    /// measurements) and factors given per body; the masses to the subject's, their distribution
    /// kept; muscles' optimal fibre and tendon slack lengths with their paths; then, when the
    /// setup's MarkerPlacer applies, the markers placed on the static trial (its pose by IK; an
    /// OpenSim model's only).
    /// Writes DIR/model.toml (the scaled Mollier model), DIR/scale_factors.csv, DIR/masses.csv,
    /// DIR/measurements.csv, DIR/muscles.csv, with the placement DIR/static_pose.csv and
    /// DIR/placed_markers.csv, and DIR/summary.json. See docs/scaling.md.
    Scale {
        /// The generic model: OpenSim's (.osim) or a Mollier model file (.toml, .json).
        model: PathBuf,
        /// OpenSim's scale setup (.xml, its ScaleTool; the files it names are read relative to
        /// it), or a TOML file of factors per body.
        #[arg(long)]
        setup: PathBuf,
        /// The static trial (.trc), instead of the setup's <marker_file>s (the scaler's and the placer's).
        #[arg(long)]
        markers: Option<PathBuf>,
        /// The subject's mass (kg), instead of the setup's.
        #[arg(long)]
        mass: Option<f64>,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// No summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Solve the positions for a motion and write positions, deformations and transfer functions.
    ///
    /// Writes DIR/positions.csv, DIR/deformations.csv and DIR/transfer.csv, one row per solved
    /// frame (with muscles also DIR/lengths.csv and DIR/moment_arms.csv; with --second-order also
    /// DIR/second_order.csv), then DIR/timing.json and DIR/summary.json. A frame that cannot be solved is reported with its time; see --on-error.
    Kinematics {
        /// The model file.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// What to do when a frame cannot be solved: stop there (default), or skip it and go on.
        /// Either way the exit code is 1 and no row is written for a failed frame.
        #[arg(long, value_enum, default_value_t = OnError::Stop)]
        on_error: OnError,
        /// Also write the second-order transfer functions ∂²e/∂q_i∂q_j of the free modes,
        /// columns `<element>.<mode>/<input i>/<input j>` for i <= j, in DIR/second_order.csv.
        #[arg(long)]
        second_order: bool,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Inverse dynamics of a motion: the driving forces of the inputs and the reactions.
    ///
    /// Differentiates the motion with a cubic spline per input (exact for motions cubic in time;
    /// see --smooth for measured data), then solves positions and kinetostatics frame by frame.
    /// Writes DIR/driving.csv (one column per input: N m for an angle, N for a length),
    /// DIR/reactions.csv (the stress of every rigid mode of the model's elements, then the support
    /// reactions at the fixed coordinates), DIR/passive.csv (the stresses the elements' laws give)
    /// and DIR/units.csv (unit and meaning of every column). SI units, global frame.
    InverseDynamics {
        /// The model file.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// Smooth the motion before differentiating it: a cubic smoothing spline that halves a
        /// sine of this frequency (Hz), like a second-order Butterworth low-pass filter run forward
        /// and backward, below the motion's Nyquist frequency (half its sampling rate). The
        /// positions are smoothed too.
        #[arg(long, value_name = "HZ", value_parser = positive_number)]
        smooth: Option<f64>,
        /// Time-varying external loads on bodies: a table (CSV, `.mot`, `.sto`) with columns
        /// `<body or body.point>.fx` (N), `.mx` (N m), `<body>.px` (m), global frame, or OpenSim's
        /// ExternalLoads XML (docs/loads.md).
        #[arg(long, value_name = "FILE")]
        loads: Option<PathBuf>,
        /// What to do when a frame cannot be solved: stop there (default), or skip it and go on.
        /// Either way the exit code is 1 and no row is written for a failed frame.
        #[arg(long, value_enum, default_value_t = OnError::Stop)]
        on_error: OnError,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Load sharing: the driving forces of a motion shared among the model's muscles by a
    /// criterion, under its sign constraints and joint cone (the model's `[load_sharing]` section).
    ///
    /// Differentiates the motion like inverse-dynamics (or, with --static, takes every frame as a
    /// static posture), then solves every frame's convex program (frames in parallel; the results
    /// do not depend on the number of threads). Writes DIR/forces.csv (one column per muscle
    /// element, N), DIR/reactions.csv (the sign-constrained reactions, the joint force in the cone
    /// frame, the reserves), DIR/stability.csv (status, stability index, equilibrium residual,
    /// objective, ms per frame) and DIR/summary.json. A frame that cannot be solved (infeasible,
    /// say) is written as such, with empty cells, and the run goes on; the exit code is then 1.
    Inverse {
        /// The model file, with a `[load_sharing]` section.
        model: PathBuf,
        /// The motion: CSV (time,<input>,...; SI units) or OpenSim .mot/.sto (inDegrees honoured).
        #[arg(long)]
        motion: PathBuf,
        /// The criterion: a = min Σ F², b = min Σ (F/PCSA)², c = min Σ (F/Fmax(l))²,
        /// d = min max F/PCSA, cb = min Σ (F/PCSA)³ (Crowninshield & Brand), so = OpenSim's
        /// static optimization, min Σ a² with a = F/Fmax(l) (the same program as c).
        #[arg(long, value_parser = criterion)]
        criterion: mollier_optim::Criterion,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// Report the joint cone's stability index but do not impose the cone.
        #[arg(long)]
        no_cone: bool,
        /// Take every frame as a static posture: rates and accelerations zero (a quasi-static
        /// analysis; time only orders the frames).
        #[arg(long = "static", conflicts_with = "smooth")]
        quasi_static: bool,
        /// Smooth the motion before differentiating it (Hz), as for inverse-dynamics.
        #[arg(long, value_name = "HZ", value_parser = positive_number)]
        smooth: Option<f64>,
        /// Time-varying external loads on bodies, as for `inverse-dynamics`.
        #[arg(long, value_name = "FILE")]
        loads: Option<PathBuf>,
        /// No progress bar and no summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Maximum isometric moments (Chadwick et al. 2014, section II-F): per posture and direction, the largest
    /// moment the muscles exert on a device holding the posture.
    ///
    /// Each maximum is a conic program over the muscle forces 0 <= F <= Fmax(l) of the model's
    /// `[load_sharing]` section, with the inputs the device does not hold (the girdle's) in
    /// equilibrium, the sign constraints and the joint cone. Writes DIR/moments.csv,
    /// DIR/postures.csv, DIR/forces_<sense>.csv, DIR/checks.csv, DIR/plots/moments.svg and
    /// DIR/summary.json. See docs/shoulder.md, "Maximum isometric moments".
    MaxMoment {
        /// The model file, with a `[load_sharing]` section.
        model: PathBuf,
        /// The postures: a motion file of the model's inputs (CSV or .mot/.sto), one per row.
        #[arg(long)]
        postures: PathBuf,
        /// A direction: an input and the names of its two senses, increasing then decreasing,
        /// `INPUT:POSITIVE/NEGATIVE` (e.g. `humerus_elevation.rotation:abduction/adduction`).
        /// Repeat for several; the device holds every direction's input.
        #[arg(long = "direction", required = true)]
        directions: Vec<String>,
        /// Another input the device holds, with whatever driving force the maximum needs
        /// (Chadwick et al.'s other external moments). Repeat for several.
        #[arg(long)]
        hold: Vec<String>,
        /// Report the joint cone's stability index but do not impose the cone.
        #[arg(long)]
        no_cone: bool,
        /// The input the plot runs along (default: the first held input that varies over the
        /// postures, a direction's first; else the first input that varies).
        #[arg(long)]
        x: Option<String>,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// No summary on standard output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Optimal control by direct collocation (trapezoidal or Hermite-Simpson) solved by IPOPT:
    /// the excitations and actuator controls that minimize the problem file's objective; writes
    /// DIR/states.csv, DIR/muscles.csv, DIR/controls.csv as `simulate` writes them and
    /// DIR/convergence.csv (IPOPT's iteration table). See docs/optimal-control.md.
    Optimize {
        /// The problem file (TOML).
        problem: PathBuf,
        /// Output directory.
        #[arg(long)]
        out: PathBuf,
        /// No summary line.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Forward dynamics from rest in the initial configuration: a passive mechanism, or a model
    /// with Hill muscles (`[muscles]`) driven by excitations.
    ///
    /// Passive mechanisms: fourth-order Runge-Kutta, positions solved on the constraint manifold;
    /// writes DIR/motion.csv (the inputs over time: a motion file for `kinematics` and
    /// `inverse-dynamics`), DIR/velocities.csv, DIR/energy.csv (kinetic plus potential energy and
    /// its drift from the start, J) and DIR/units.csv, and reports the energy drift.
    ///
    /// Models with muscles: the error-controlled Rosenbrock-W pair ROS2(3) (--rtol, --atol; rows
    /// every --output-dt; --method for another method), or with --dt the fixed linearly implicit
    /// step of Chadwick et al. (2014) with each step's muscle equilibrium defect checked
    /// (--defect-tolerance), muscles starting in isometric equilibrium; writes DIR/states.csv
    /// (coordinates, rates, muscle states), DIR/muscles.csv (excitation, activation, force,
    /// fibre length and velocity, path length) and DIR/summary.json with the real-time factor.
    /// See docs/forward-dynamics.md.
    Simulate(simulate::Args),
    /// Run a study: a motion through a model and load sharing over it for several criteria,
    /// with and without a joint stability constraint (e.g. models/shoulder/abduction.toml).
    ///
    /// Writes DIR/summary.json, DIR/motion.csv (the inputs per frame: a motion file of the model),
    /// DIR/kinematics.csv, DIR/lengths.csv, DIR/moment_arms.csv, per variant
    /// `DIR/<criterion>-<glenoid|free>/{forces,reactions,stability}.csv` and `summary.json`, and
    /// SVG plots in DIR/plots. See docs/shoulder.md.
    Study {
        /// The study file (.toml).
        study: PathBuf,
        /// The directory for the results, replaced whole when the run ends (see docs/model-format.md,
        /// "Output directories").
        #[arg(long)]
        out: PathBuf,
        /// Time-varying external loads on the model's bodies at the motion's times, as for
        /// `inverse-dynamics`.
        #[arg(long, value_name = "FILE")]
        loads: Option<PathBuf>,
        /// No summary on standard output.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Draw a model in 3D: one self-contained HTML page (three.js embedded, no network) with
    /// the bones, body frames, elements, muscle paths wrapping their obstacles and contact
    /// surfaces, moving through a motion, muscles coloured by force with --results.
    ///
    /// Every position and path point is computed by Mollier and embedded; the page only draws.
    /// See docs/viewer.md.
    View {
        /// The model file (.toml, .json, or .osim).
        model: PathBuf,
        /// The motion (CSV, .mot or .sto of the model's inputs); without it and without
        /// --results, the model as its file places it.
        #[arg(long)]
        motion: Option<PathBuf>,
        /// A results directory with `forces.csv` (`mollier inverse`, or a study's variant such
        /// as `results/abduction/b-glenoid`): muscles coloured by force. Its motion is
        /// `motion.csv` in it or beside it unless --motion is given.
        #[arg(long)]
        results: Option<PathBuf>,
        /// Results drawn in the right half of the page with the same camera: other results of
        /// the same model (criterion d against b) or, with --compare-model, of another model.
        /// Its motion is `motion.csv` in it or beside it unless --compare-motion is given.
        #[arg(long, value_name = "DIR2")]
        compare: Option<PathBuf>,
        /// The right half's model (.toml, .json, or .osim), when it is not the page's: two
        /// subjects, or the shoulder beside an imported arm, each on its own motion.
        #[arg(long, value_name = "MODEL2")]
        compare_model: Option<PathBuf>,
        /// The right half's motion (default: --compare's, else the page's for the same model,
        /// else the model as its file places it).
        #[arg(long, value_name = "MOTION2")]
        compare_motion: Option<PathBuf>,
        /// Draw every N-th frame only (the last always), for a smaller page.
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
        every: u32,
        /// The page to write (.html): a new file, or a regular file it replaces whole. Anything
        /// else at the path (a symbolic link, a directory, a FIFO, a device) is refused.
        /// Optional with --png, --frames or --video.
        #[arg(long, required_unless_present_any = ["png", "frames", "video"])]
        out: Option<PathBuf>,
        /// Also write a picture of one frame (PNG, drawn by headless Chromium; see --frame,
        /// --size, --view).
        #[arg(long)]
        png: Option<PathBuf>,
        /// The frame of --png, from 0 among the frames drawn.
        #[arg(long, default_value_t = 0)]
        frame: usize,
        /// Write every drawn frame as DIR/frame-00000.png, ... (for a video: e.g. ffmpeg -i
        /// DIR/frame-%05d.png). DIR is made, or must hold nothing but such frames.
        #[arg(long, value_name = "DIR")]
        frames: Option<PathBuf>,
        /// For an OpenSim model (.osim, imported in memory): a folder of mesh files (OpenSim's
        /// `Geometry/`); the bodies' `Mesh` geometry is drawn when its files are found next to
        /// the model, in its `Geometry/` folder or here (repeatable).
        #[arg(long, value_name = "DIR")]
        geometry: Vec<PathBuf>,
        /// Write the motion as a video (WebM, VP8; every drawn frame once, at --fps), drawn and
        /// encoded by headless Chromium at --size from --view.
        #[arg(long, value_name = "FILE.webm")]
        video: Option<PathBuf>,
        /// Frames per second of --video.
        #[arg(long, default_value_t = 30.0)]
        fps: f64,
        /// The pictures' size in pixels, WxH.
        #[arg(long, default_value = "1280x960")]
        size: String,
        /// The pictures' camera: front (from +x), side (+z) or top (+y), as OpenSim's and the
        /// ISB's axes have them (x forward, y up, z right), or from along an axis: x, -x, y, -y,
        /// z, -z (the Delft shoulder's front is -z).
        #[arg(long, default_value = "front", allow_hyphen_values = true, value_parser = ["front", "side", "top", "x", "-x", "y", "-y", "z", "-z"])]
        view: String,
        /// Replace a symbolic link at --out by the page (the link itself: what it points to is
        /// not written). A directory, FIFO, socket or device is refused even so.
        #[arg(long)]
        force: bool,
        /// No summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Import an OpenSim 4.x model (.osim) as a Mollier model file, with an import report.
    ///
    /// Writes OUT (TOML; comments name the source objects) and a report (Markdown) of every
    /// object not imported exactly, then checks that the model is well posed. Each file is
    /// written whole over nothing or a regular file (see --force). Exit code 2 when
    /// the .osim file is invalid (not XML, unknown references, unsupported joints).
    Import {
        /// The OpenSim model (.osim).
        model: PathBuf,
        /// The Mollier model file to write (.toml).
        #[arg(long)]
        out: PathBuf,
        /// The import report to write (Markdown); default OUT with the extension `.import.md`.
        #[arg(long)]
        report: Option<PathBuf>,
        /// An OpenSim motion of the coordinates (.mot/.sto) to convert into a motion of the
        /// model's inputs (with --motion-out).
        #[arg(long, requires = "motion_out")]
        motion: Option<PathBuf>,
        /// Where to write the converted motion (CSV, SI), for `mollier kinematics` and the others.
        #[arg(long, requires = "motion")]
        motion_out: Option<PathBuf>,
        /// A folder of mesh files (OpenSim's `Geometry/`): the bodies' `Mesh` geometry is taken
        /// over when its files are found next to the model, in its `Geometry/` folder or here
        /// (repeatable).
        #[arg(long, value_name = "DIR")]
        geometry: Vec<PathBuf>,
        /// Replace symbolic links at the paths written (--out, --report, --motion-out) by the
        /// files (the links themselves: what they point to is not written). Without it, a path
        /// that holds anything but a regular file is refused; a directory, FIFO, socket or
        /// device is refused even so.
        #[arg(long)]
        force: bool,
        /// No summary.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Print the JSON Schema of model files, for completion in editors.
    Schema,
    /// List the element types, their modes and parameters.
    Types {
        /// Print the Markdown reference (`docs/element-types.md`) instead.
        #[arg(long)]
        markdown: bool,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OnError {
    /// Stop at the first frame that fails; the results hold the frames before it.
    Stop,
    /// Leave out frames that fail and go on from the last solved frame.
    Skip,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    common::set_table_format(cli.format);
    let registry = mollier::registry();
    match cli.command {
        Command::Check { model, json } => check::run(&model, json, &registry),
        Command::Ik { model, markers, tasks, tolerance, out, quiet } => ik::run(
            &ik::Request { model: &model, markers: &markers, tasks: tasks.as_deref(), tolerance, out: &out, quiet },
            &registry,
        ),
        Command::Scale { model, setup, markers, mass, out, quiet } => scale::run(
            &scale::Request {
                scale: mollier::scale::ScaleRequest { model: &model, setup: &setup, markers: markers.as_deref(), mass },
                out: &out,
                quiet,
            },
            &registry,
        ),
        Command::Kinematics { model, motion, out, on_error, second_order, quiet } => {
            let run = MotionRun { model: &model, motion: &motion, out: &out, on_error, quiet, loads: None };
            kinematics::run(&run, second_order, &registry)
        }
        Command::InverseDynamics { model, motion, out, smooth, loads, on_error, quiet } => {
            let run = MotionRun { model: &model, motion: &motion, out: &out, on_error, quiet, loads: loads.as_deref() };
            inverse_dynamics::run(&run, smooth, &registry)
        }
        Command::Inverse { model, motion, criterion, out, no_cone, quasi_static, smooth, loads, quiet } => {
            let options = inverse::Options { criterion, impose_cone: !no_cone, quasi_static, smooth, loads, quiet };
            inverse::run(&model, &motion, &out, &options, &registry)
        }
        Command::MaxMoment { model, postures, directions, hold, no_cone, x, out, quiet } => {
            let options = max_moment::Options { directions, hold, impose_cone: !no_cone, x, quiet };
            max_moment::run(&model, &postures, &out, &options, &registry)
        }
        Command::Optimize { problem, out, quiet } => optimize::run(&problem, &out, quiet, &registry),
        Command::Simulate(args) => simulate::run(&args, &registry),
        Command::Study { study, out, loads, quiet } => study::run(&study, &out, loads.as_deref(), quiet),
        Command::View {
            model,
            motion,
            results,
            compare,
            compare_model,
            compare_motion,
            every,
            out,
            png,
            frame,
            frames,
            geometry,
            video,
            fps,
            size,
            view,
            force,
            quiet,
        } => view::run(
            &view::Request {
                model: &model,
                geometry: &geometry,
                motion: motion.as_deref(),
                results: results.as_deref(),
                compare: compare.as_deref(),
                compare_model: compare_model.as_deref(),
                compare_motion: compare_motion.as_deref(),
                every: every as usize,
                out: out.as_deref(),
                pictures: view::Pictures {
                    png: png.as_deref(),
                    frame,
                    frames: frames.as_deref(),
                    video: video.as_deref(),
                    fps,
                    size: &size,
                    view: &view,
                },
                force,
                quiet,
            },
            &registry,
        ),
        Command::Import { model, out, report, motion, motion_out, geometry, force, quiet } => {
            let motion = motion.as_deref().zip(motion_out.as_deref());
            import::run(&model, &out, report.as_deref(), motion, &geometry, force, quiet, &registry)
        }
        Command::Schema => {
            let s = serde_json::to_string_pretty(&mollier::schema(&registry)).unwrap_or_default();
            outln!("{s}");
            ExitCode::SUCCESS
        }
        Command::Types { markdown } => {
            if markdown {
                out!("{}", mollier::element_reference(&registry));
            } else {
                out!("{}", types::text(&registry));
            }
            ExitCode::SUCCESS
        }
    }
}

/// A load-sharing criterion (clap value parser): `a`, `b`, `c`, `d`, `cb` or `so`.
fn criterion(s: &str) -> Result<mollier_optim::Criterion, String> {
    s.parse()
}
