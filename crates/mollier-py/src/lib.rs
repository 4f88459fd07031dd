//! # mollier-py
//!
//! The native part of the Python package `mollier` (`mollier._native`): a thin front end over
//! the facade ([`mollier`]), as the command line is. Each analysis makes the facade calls its
//! `mollier` command makes and returns its tables in memory instead of writing them: a table is
//! `(columns, time, values)` with `time` a float64 array `(frames,)` and `values` a float64 array
//! `(frames, columns)`, the numbers the command writes (an empty cell is NaN). The Python layer
//! (`python/mollier/__init__.py`) turns them into pandas DataFrames or its own `Table`.
//!
//! Rust runs with the GIL released; a progress callback, when given, is called with the GIL
//! taken back, and an exception it raises stops the run.

use std::path::{Path, PathBuf};

use mollier::inverse_tables::{FrameValues, ReserveUse, STABILITY_NUMBERS, reaction_header};
use mollier::{
    Compiled, InverseDynamicsRun, KinematicsRun, Motion, MuscleColumns, SimulateError, SimulateOptions, SimulateRun,
    Smoothing,
};
use mollier::{ExternalLoads, InverseError, InverseOptions, InverseRun};
use mollier_core::registry::Registry;
use mollier_format::Diagnostics;
use mollier_optim::{Criterion, FrameResult};
use numpy::{IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

pyo3::create_exception!(
    mollier,
    ModelError,
    PyValueError,
    "A model, motion or study file that cannot be read: `diagnostics` lists each problem as a dict (file, line, column, path, message, hint)."
);
pyo3::create_exception!(
    mollier,
    NotWellPosed,
    PyValueError,
    "A model whose positions cannot be solved: `Model.check()` explains."
);
pyo3::create_exception!(
    mollier,
    FrameError,
    PyRuntimeError,
    "A frame that could not be solved (with `on_error=\"stop\"`), or results that cannot be written."
);

/// The exception for located problems: the rendered text, and each problem as a dict.
fn model_error(py: Python<'_>, d: &Diagnostics) -> PyErr {
    let err = ModelError::new_err(d.render());
    let list = PyList::empty(py);
    for p in &d.0 {
        let entry = PyDict::new(py);
        let set = || -> PyResult<()> {
            entry.set_item("file", &p.file)?;
            entry.set_item("line", p.location.as_ref().map(|l| l.line))?;
            entry.set_item("column", p.location.as_ref().map(|l| l.column))?;
            entry.set_item("path", &p.path)?;
            entry.set_item("message", &p.message)?;
            entry.set_item("hint", p.hint.as_deref())?;
            list.append(&entry)
        };
        if let Err(e) = set() {
            return e;
        }
    }
    match err.value(py).setattr("diagnostics", list) {
        Ok(()) => err,
        Err(e) => e,
    }
}

/// A result table: column labels, the time of each row (s) and the values (rows x columns).
struct Table {
    name: String,
    columns: Vec<String>,
    times: Vec<f64>,
    values: Vec<f64>,
    /// Text columns (name, one value per row), after the numbers.
    text: Vec<(String, Vec<String>)>,
}

impl Table {
    fn new(name: &str, columns: Vec<String>) -> Self {
        Self { name: name.into(), columns, times: Vec::new(), values: Vec::new(), text: Vec::new() }
    }

    fn push(&mut self, time: f64, row: &[f64]) {
        debug_assert_eq!(row.len(), self.columns.len());
        self.times.push(time);
        self.values.extend_from_slice(row);
    }

    /// `(columns, time, values, text)`: `text` maps a text column's name to its list.
    fn into_py<'py>(self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let rows = self.times.len();
        let values: Bound<'py, PyArray2<f64>> = self.values.into_pyarray(py).reshape([rows, self.columns.len()])?;
        let text = PyDict::new(py);
        for (name, cells) in self.text {
            text.set_item(name, cells)?;
        }
        (self.columns, self.times.into_pyarray(py), values, text).into_pyobject(py).map(|t| t.into_any())
    }
}

/// Tables by name, in order.
fn tables_into_py(py: Python<'_>, tables: Vec<Table>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    for t in tables {
        let name = t.name.clone();
        d.set_item(name, t.into_py(py)?)?;
    }
    Ok(d)
}

/// Failed frames: their time and why, for the Python layer to warn or raise.
type Failures = Vec<(f64, String)>;

/// Calls the user's progress callback with `(done, total)` from any thread; remembers the first
/// exception it raises, after which the run stops.
struct Progress {
    callback: Option<Py<PyAny>>,
    error: std::sync::Mutex<Option<PyErr>>,
}

impl Progress {
    fn new(callback: Option<Py<PyAny>>) -> Self {
        Self { callback, error: std::sync::Mutex::new(None) }
    }

    /// `false` once the callback has raised.
    fn report(&self, done: usize, total: usize) -> bool {
        let Some(cb) = &self.callback else { return true };
        let mut error = self.error.lock().unwrap_or_else(|e| e.into_inner());
        if error.is_some() {
            return false;
        }
        if let Err(e) = Python::attach(|py| cb.call1(py, (done, total)).map(|_| ())) {
            *error = Some(e);
            return false;
        }
        true
    }

    fn into_result(self) -> PyResult<()> {
        match self.error.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A table given as arrays: `(name, time (frames,), values (frames, columns), columns)`.
type Arrays<'py> = (String, PyReadonlyArray1<'py, f64>, PyReadonlyArray2<'py, f64>, Vec<String>);

/// A motion (or excitations) given to an analysis: a file, or arrays with their column names.
#[derive(FromPyObject)]
enum MotionArg<'py> {
    /// `(name, time (frames,), values (frames, columns), columns)`.
    #[pyo3(transparent, annotation = "tuple")]
    Arrays(Arrays<'py>),
    #[pyo3(transparent, annotation = "str | os.PathLike")]
    Path(PathBuf),
}

/// The text of a table file (`time`, then the columns, numbers in Rust's `{:e}`, which reads
/// back to the same f64) for arrays given instead of a file (`what`: a motion, excitations), so
/// that they get the checks a file does; its name for messages.
fn arrays_text(what: &str, arrays: Arrays<'_>) -> PyResult<(String, String)> {
    let (name, time, values, columns) = arrays;
    // an unaligned array (numpy allows them) may not be viewed in place: the Python layer hands
    // over aligned ones (`np.require`), anything else is refused here
    for (part, ptr) in [("time", time.data() as usize), ("values", values.data() as usize)] {
        if ptr % std::mem::align_of::<f64>() != 0 {
            return Err(PyValueError::new_err(format!(
                "{what} `{name}`: the {part} array's data are not aligned for float64 (pass it through numpy.require(a, requirements=\"A\"))"
            )));
        }
    }
    let (time, values) = (time.as_array(), values.as_array());
    if values.nrows() != time.len() || values.ncols() != columns.len() {
        return Err(PyValueError::new_err(format!(
            "{what} `{name}`: {} times, values of shape ({}, {}) and {} column names do not fit",
            time.len(),
            values.nrows(),
            values.ncols(),
            columns.len()
        )));
    }
    let mut text = String::from("time");
    for c in &columns {
        text.push(',');
        text.push_str(c);
    }
    text.push('\n');
    for (i, t) in time.iter().enumerate() {
        text.push_str(&format!("{t:e}"));
        for v in values.row(i) {
            text.push_str(&format!(",{v:e}"));
        }
        text.push('\n');
    }
    Ok((name, text))
}

/// A compiled model: the immutable `Compiled` of the facade, and the file it came from.
#[pyclass(module = "mollier._native", frozen)]
struct Model {
    compiled: Compiled,
    registry: Registry,
    file: String,
    /// Set once the model has been found well posed: the check (0.7 ms for the shoulder) is not
    /// repeated on every analysis, which a sweep's short tasks call many times.
    found_well_posed: std::sync::OnceLock<()>,
}

impl Model {
    /// The motion of `arg` for this model: read as a motion file is, so that arrays get the
    /// checks (increasing times, units, columns) a file does.
    fn motion(&self, py: Python<'_>, arg: MotionArg<'_>) -> PyResult<(Motion, Vec<String>)> {
        let inputs = &self.compiled.inputs;
        let motion = match arg {
            MotionArg::Path(p) => mollier::read_motion(&p, inputs),
            MotionArg::Arrays(arrays) => {
                let (name, text) = arrays_text("motion", arrays)?;
                mollier::parse_motion(&name, &text, inputs)
            }
        };
        let motion = motion.map_err(|d| model_error(py, &d))?;
        let mut notes = motion.warnings.clone();
        if !motion.ignored.is_empty() {
            notes.push(format!("ignoring columns that are not inputs: {}", motion.ignored.join(", ")));
        }
        Ok((motion, notes))
    }

    /// The external loads of a load file (`--loads`), checked against the motion's times.
    fn loads(&self, py: Python<'_>, path: Option<PathBuf>, motion: &Motion) -> PyResult<Option<ExternalLoads>> {
        let Some(path) = path else { return Ok(None) };
        let loads = ExternalLoads::read(&path, &self.compiled).map_err(|d| model_error(py, &d))?;
        let (first, last) = (motion.times[0], motion.times[motion.times.len() - 1]);
        loads.check_times(first, last).map_err(|e| PyValueError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Some(loads))
    }

    /// An error unless the model's positions can be solved (what the commands require).
    fn well_posed(&self, py: Python<'_>) -> PyResult<()> {
        if self.found_well_posed.get().is_some() {
            return Ok(());
        }
        let verdict = mollier::check(&self.compiled, &self.registry);
        if !verdict.problems.is_empty() {
            return Err(model_error(py, &Diagnostics(verdict.problems)));
        }
        if !verdict.is_well_posed() {
            return Err(NotWellPosed::new_err(format!(
                "{} is not well posed:\n  - {}",
                self.file,
                verdict.diagnostics.join("\n  - ")
            )));
        }
        let _ = self.found_well_posed.set(());
        Ok(())
    }
}

fn smoothing(smooth: Option<f64>) -> Smoothing {
    smooth.map_or(Smoothing::Interpolate, Smoothing::Cutoff)
}

/// Run a frame loop with the policy of the commands' `--on-error`: `stop` ends at the first
/// failed frame, `skip` leaves it out; the failures are returned.
fn frame_loop<E: std::fmt::Display>(
    n: usize,
    times: &[f64],
    stop: bool,
    progress: &Progress,
    mut solve: impl FnMut(usize) -> Result<(), E>,
) -> Failures {
    let mut failures = Vec::new();
    for i in 0..n {
        if let Err(e) = solve(i) {
            failures.push((times[i], e.to_string()));
            if stop {
                break;
            }
        }
        if !progress.report(i + 1, n) {
            break;
        }
    }
    failures
}

fn on_error_stops(on_error: &str) -> PyResult<bool> {
    match on_error {
        "stop" => Ok(true),
        "skip" => Ok(false),
        other => Err(PyValueError::new_err(format!("on_error is \"stop\" or \"skip\", not {other:?}"))),
    }
}

#[pymethods]
impl Model {
    /// Read, check and compile a model file (`.toml`, `.json`, or an OpenSim `.osim` model).
    #[staticmethod]
    fn load(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let registry = mollier::registry();
        let compiled = py.detach(|| mollier::load(&path, &registry)).map_err(|d| model_error(py, &d))?;
        Ok(Self { compiled, registry, file: path.display().to_string(), found_well_posed: Default::default() })
    }

    /// Compile a model file's text; `file` names it in diagnostics and its extension gives the
    /// format.
    #[staticmethod]
    fn from_text(py: Python<'_>, text: &str, file: &str) -> PyResult<Self> {
        let registry = mollier::registry();
        let compiled = py.detach(|| mollier::load_text(file, text, &registry)).map_err(|d| model_error(py, &d))?;
        Ok(Self { compiled, registry, file: file.to_string(), found_well_posed: Default::default() })
    }

    /// The file the model was read from, as named.
    #[getter]
    fn file(&self) -> &str {
        &self.file
    }

    /// The inputs (driven coordinates), in the model's order: the columns of a motion.
    #[getter]
    fn inputs(&self) -> Vec<String> {
        self.compiled.inputs.iter().map(|i| i.name.clone()).collect()
    }

    /// The muscle elements of kinematics: the columns of `lengths`.
    #[getter]
    fn muscles(&self) -> Vec<String> {
        let run = KinematicsRun::new(&self.compiled);
        MuscleColumns::of(&self.compiled, &run).names().to_vec()
    }

    /// The muscles of the `[load_sharing]` section: the columns of `forces` (empty without one).
    #[getter]
    fn load_sharing_muscles(&self) -> Vec<String> {
        self.compiled.load_sharing.as_ref().map(|s| s.muscle_names()).unwrap_or_default()
    }

    /// The muscles of the `[muscles]` section (Hill muscles of forward dynamics): the columns
    /// of an excitation table (empty without one).
    #[getter]
    fn forward_muscles(&self) -> Vec<String> {
        self.compiled.muscles.iter().map(|m| m.name.clone()).collect()
    }

    /// The well-posedness check: a dict with `dof`, `redundant`, `well_posed`, `diagnostics`
    /// (findings naming modes and coordinates) and `problems` (located problems with the file).
    fn check<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = py.detach(|| mollier::check(&self.compiled, &self.registry));
        let d = PyDict::new(py);
        d.set_item("dof", r.dof)?;
        d.set_item("redundant", r.redundant)?;
        d.set_item("well_posed", r.is_well_posed())?;
        d.set_item("diagnostics", &r.diagnostics)?;
        d.set_item("problems", r.problems.iter().map(|p| p.render()).collect::<Vec<_>>())?;
        Ok(d)
    }

    /// `mollier kinematics`: `(tables, failures, notes)`, tables `positions`, `deformations`,
    /// `transfer`, and with muscles `lengths` and `moment_arms`, and `second_order` on request.
    #[pyo3(signature = (motion, second_order=false, on_error="stop", progress=None))]
    fn kinematics<'py>(
        &self,
        py: Python<'py>,
        motion: MotionArg<'_>,
        second_order: bool,
        on_error: &str,
        progress: Option<Py<PyAny>>,
    ) -> PyResult<(Bound<'py, PyDict>, Failures, Vec<String>)> {
        let stop = on_error_stops(on_error)?;
        self.well_posed(py)?;
        let (motion, notes) = self.motion(py, motion)?;
        let progress = Progress::new(progress);
        let (tables, failures) = py.detach(|| {
            let mut run = KinematicsRun::new(&self.compiled);
            if second_order {
                run = run.with_second_order();
            }
            let muscles = MuscleColumns::of(&self.compiled, &run);
            let mut t = vec![
                Table::new("positions", run.position_header()),
                Table::new("deformations", run.deformation_header()),
                Table::new("transfer", run.transfer_header()),
            ];
            if !muscles.names().is_empty() {
                t.push(Table::new("lengths", muscles.names().to_vec()));
                t.push(Table::new("moment_arms", muscles.moment_arm_header()));
            }
            // as the command: no table for a model without free modes
            let second = run.second_order_header();
            let second_order = !second.is_empty();
            if second_order {
                t.push(Table::new("second_order", second));
            }
            let n = motion.times.len();
            let failures = frame_loop(n, &motion.times, stop, &progress, |i| {
                let time = motion.times[i];
                let f = run.solve(&motion.q[i])?;
                t[0].push(time, &f.positions);
                t[1].push(time, &f.deformations);
                t[2].push(time, &f.transfer);
                if !muscles.names().is_empty() {
                    let (lengths, arms) = muscles.values(&f);
                    t[3].push(time, &lengths);
                    t[4].push(time, &arms);
                }
                if let Some(last) = t.last_mut().filter(|_| second_order) {
                    last.push(time, &f.second_order);
                }
                Ok::<(), mollier::FrameError>(())
            });
            (t, failures)
        });
        progress.into_result()?;
        Ok((tables_into_py(py, tables)?, failures, notes))
    }

    /// `mollier ik`: the motion that best fits the marker trial `markers` (`.trc`), with the
    /// tasks file `tasks` (TOML or OpenSim's IK setup) when given; tables `motion` (the inputs),
    /// `coordinates` (OpenSim's, for an `.osim` model) and `marker_errors` (m), as the command
    /// writes them (`mollier::ik::table_columns`). A frame that cannot be solved raises.
    #[pyo3(signature = (markers, tasks=None, progress=None, tolerance=1e-10))]
    fn ik<'py>(
        &self,
        py: Python<'py>,
        markers: PathBuf,
        tasks: Option<PathBuf>,
        progress: Option<Py<PyAny>>,
        tolerance: f64,
    ) -> PyResult<(Bound<'py, PyDict>, Failures, Vec<String>)> {
        use mollier::ik;
        let options =
            ik::IkOptions::default().with_tolerance(tolerance).map_err(|d| PyValueError::new_err(d.message))?;
        self.well_posed(py)?;
        let is_osim = Path::new(&self.file).extension().is_some_and(|e| e.eq_ignore_ascii_case("osim"));
        // an OpenSim model's coordinates are the unknowns: its import is needed, not only the model
        let imported = if is_osim {
            Some(py.detach(|| ik::load_model(Path::new(&self.file), &self.registry)).map_err(|d| model_error(py, &d))?)
        } else {
            None
        };
        let owned;
        let (compiled, unknowns) = match imported {
            Some((c, u)) => {
                owned = c;
                (&owned, u)
            }
            None => (&self.compiled, ik::Unknowns::Inputs),
        };
        let trial = mollier::read_trc(&markers).map_err(|d| model_error(py, &d))?;
        let tasks = tasks.map(|t| ik::read_tasks(&t)).transpose().map_err(|d| model_error(py, &d))?;
        let mut run = ik::IkRun::new(compiled, &self.registry, unknowns, &trial, tasks.as_ref())
            .map_err(|d| model_error(py, &d))?
            .with_options(options);
        let mut notes = Vec::new();
        if !run.ignored().is_empty() {
            notes.push(format!("markers of the trial not fitted: {}", run.ignored().join(", ")));
        }
        let progress = Progress::new(progress);
        let n = trial.len();
        let solved = py.detach(|| ik::solve_all(&mut run, |i| _ = progress.report(i + 1, n)));
        progress.into_result()?;
        let frames = solved.map_err(|(i, e)| {
            FrameError::new_err(format!(
                "{}: frame {} (t = {} s) cannot be solved: {e}",
                trial.file, trial.frame_numbers[i], trial.times[i]
            ))
        })?;
        let mut tables: Vec<Table> =
            ik::table_columns(&run).into_iter().map(|(name, columns)| Table::new(name, columns)).collect();
        for (t, f) in trial.times.iter().zip(&frames) {
            for (table, row) in tables.iter_mut().zip(ik::table_rows(&run, f)) {
                table.push(*t, &row);
            }
        }
        Ok((tables_into_py(py, tables)?, Vec::new(), notes))
    }

    /// `mollier inverse-dynamics`: tables `driving`, `reactions`, `passive`, and the units of
    /// every column.
    #[pyo3(signature = (motion, smooth=None, on_error="stop", progress=None, loads=None))]
    fn inverse_dynamics<'py>(
        &self,
        py: Python<'py>,
        motion: MotionArg<'_>,
        smooth: Option<f64>,
        on_error: &str,
        progress: Option<Py<PyAny>>,
        loads: Option<PathBuf>,
    ) -> PyResult<(Bound<'py, PyDict>, Failures, Vec<String>)> {
        let stop = on_error_stops(on_error)?;
        self.well_posed(py)?;
        let (motion, mut notes) = self.motion(py, motion)?;
        let loads = self.loads(py, loads, &motion)?;
        let derivatives = motion
            .differentiate(smoothing(smooth))
            .map_err(|e| PyValueError::new_err(format!("{}: cannot differentiate the motion: {e}", motion.file)))?;
        notes.push(format!("motion derivatives: {}", derivatives.summary(&self.compiled.inputs)));
        let progress = Progress::new(progress);
        let (tables, failures) = py.detach(|| {
            let mut run = InverseDynamicsRun::new(&self.compiled).with_loads(loads.as_ref());
            let names = |c: &[mollier::Column]| c.iter().map(|c| c.name.clone()).collect::<Vec<_>>();
            let mut t = vec![
                Table::new("driving", names(run.driving_columns())),
                Table::new("reactions", names(run.reaction_columns())),
                Table::new("passive", names(run.passive_columns())),
            ];
            let d = &derivatives;
            let failures = frame_loop(motion.times.len(), &motion.times, stop, &progress, |i| {
                let time = motion.times[i];
                let f = run.solve_at(time, &d.q[i], &d.qd[i], &d.qdd[i])?;
                t[0].push(time, &f.driving);
                t[1].push(time, &f.reactions);
                t[2].push(time, &f.passive);
                Ok::<(), mollier::FrameError>(())
            });
            (t, failures)
        });
        progress.into_result()?;
        Ok((tables_into_py(py, tables)?, failures, notes))
    }

    /// `mollier inverse`: the driving forces shared among the `[load_sharing]` muscles by
    /// `criterion` (`a`-`d`), the joint cone imposed when `cone`; tables `forces`, `reactions`
    /// and `stability` (with text columns `status` and `message`). Every frame is in the tables;
    /// a failed frame's forces are NaN and its status says why.
    #[pyo3(signature = (motion, criterion="b", cone=true, static_=false, smooth=None, progress=None, loads=None))]
    #[allow(clippy::too_many_arguments)]
    fn inverse<'py>(
        &self,
        py: Python<'py>,
        motion: MotionArg<'_>,
        criterion: &str,
        cone: bool,
        static_: bool,
        smooth: Option<f64>,
        progress: Option<Py<PyAny>>,
        loads: Option<PathBuf>,
    ) -> PyResult<(Bound<'py, PyDict>, Failures, Vec<String>)> {
        let criterion: Criterion = criterion.parse().map_err(PyValueError::new_err)?;
        self.well_posed(py)?;
        let Some(setup) = self.compiled.load_sharing.as_ref() else {
            return Err(PyValueError::new_err(format!(
                "{} has no [load_sharing] section: name the muscles (and any sign constraints, joint cone and reserves) there; see docs/model-format.md",
                self.file
            )));
        };
        let (motion, mut notes) = self.motion(py, motion)?;
        let loads = self.loads(py, loads, &motion)?;
        let options = InverseOptions { criterion, impose_cone: cone, quasi_static: static_, smooth };
        let run = InverseRun::new(&self.compiled, &motion, &options)
            .map_err(|e| match e {
                InverseError::Differentiate(_) => PyValueError::new_err(format!("{}: {e}", motion.file)),
                e => PyValueError::new_err(format!("{}: {e}", self.file)),
            })?
            .with_loads(&self.compiled, loads.as_ref());
        if run.derivatives().is_some() {
            notes.push(format!("motion derivatives: {}", run.derivatives_text(&self.compiled)));
        }
        let progress = Progress::new(progress);
        let (tables, reserve_warning) = py.detach(|| {
            let n = run.frames();
            // as the command: a reserve doing the muscles' work is not silent
            let mut reserves = ReserveUse::new(&["time".to_string()], setup.reserve_names());
            let mut forces = Table::new("forces", setup.muscle_names());
            let mut reactions = Table::new("reactions", reaction_header(setup));
            let mut columns: Vec<String> = STABILITY_NUMBERS.map(String::from).into();
            columns.push("iterations".into());
            let mut stability = Table::new("stability", columns);
            let (mut status, mut message) = (Vec::new(), Vec::new());
            let done = std::sync::atomic::AtomicUsize::new(0);
            let report = |k: usize| {
                let d = done.fetch_add(k, std::sync::atomic::Ordering::Relaxed) + k;
                progress.report(d, n);
            };
            let sink = |k: usize, r: FrameResult| {
                let time = motion.times[k];
                let v = FrameValues::of(setup, &r);
                forces.push(time, &v.forces);
                reactions.push(time, &v.reactions);
                let mut row = v.stability.to_vec();
                row.push(r.iterations as f64);
                stability.push(time, &row);
                if r.status.is_success() {
                    reserves.add(&[time], &r);
                }
                status.push(r.status.label().to_string());
                message.push(if r.status.is_success() { String::new() } else { r.status.to_string() });
                Ok::<(), std::convert::Infallible>(())
            };
            let Ok(()) = run.run(&report, sink);
            stability.text = vec![("status".into(), status), ("message".into(), message)];
            (vec![forces, reactions, stability], reserves.warning())
        });
        progress.into_result()?;
        notes.extend(reserve_warning.map(|w| format!("warning: {w}")));
        Ok((tables_into_py(py, tables)?, Vec::new(), notes))
    }

    /// `mollier simulate`: forward dynamics from rest for `duration` s in steps of `dt` s, by
    /// the facade's run ([`mollier::forward_tables`]). Returns `(tables, failures, notes,
    /// summary, units)`: the command's tables by name (`states`, `muscles`, `contacts`,
    /// `stability` with muscles; `motion`, `velocities`, `energy` for a passive mechanism), the
    /// steps that failed (the run stops at the first), notes, `summary.json`'s figures as JSON
    /// text, and per table the unit of each column. `loads`: a load file (`--loads`) covering
    /// the run's times, which asks for the Rosenbrock integrator. `track`: a motion of the
    /// model to make the excitations by computed muscle control ([`mollier::cmc::track_motion`],
    /// as `--track`) instead of `excitations`.
    #[pyo3(signature = (duration, excitations=None, dt=None, integrator=None, progress=None, output_dt=None, rtol=1e-3, atol=1e-5, defect_tolerance=0.01, loads=None, track=None, atol_activation=None, controller="elementary", steps_across_knots=false, rigid_tendons=None, method="ros23", jacobian_every=4))]
    #[allow(clippy::type_complexity, clippy::too_many_arguments)]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        duration: f64,
        excitations: Option<MotionArg<'_>>,
        dt: Option<f64>,
        integrator: Option<&str>,
        progress: Option<Py<PyAny>>,
        output_dt: Option<f64>,
        rtol: f64,
        atol: f64,
        defect_tolerance: f64,
        loads: Option<PathBuf>,
        track: Option<MotionArg<'_>>,
        atol_activation: Option<f64>,
        controller: &str,
        steps_across_knots: bool,
        rigid_tendons: Option<f64>,
        method: &str,
        jacobian_every: usize,
    ) -> PyResult<(Bound<'py, PyDict>, Failures, Vec<String>, String, Bound<'py, PyDict>)> {
        if track.is_some() && excitations.is_some() {
            return Err(PyValueError::new_err("give excitations or track, not both"));
        }
        let integrator = integrator.map(str::parse).transpose().map_err(PyValueError::new_err)?;
        // external loads are in the Rosenbrock integrator's equations only: its default with them
        let integrator = integrator.or(loads.as_ref().map(|_| mollier::Integrator::Rosenbrock));
        let mut options =
            SimulateOptions { dt, output_dt, integrator, defect_tolerance, ..SimulateOptions::new(duration) };
        options.tolerances.rtol = rtol;
        options.tolerances.atol = atol;
        options.tolerances.atol_activation = atol_activation;
        options.tolerances.controller = match controller {
            "elementary" => mollier::Controller::Elementary,
            "gustafsson" => mollier::Controller::Gustafsson,
            other => {
                return Err(PyValueError::new_err(format!(
                    "controller must be \"elementary\" or \"gustafsson\" (got {other:?})"
                )));
            }
        };
        options.tolerances.method = method.parse().map_err(PyValueError::new_err)?;
        options.tolerances.land_on_breaks = !steps_across_knots;
        options.tolerances.jacobian_every = Some(jacobian_every);
        if rigid_tendons.is_some() && track.is_some() {
            // computed muscle control runs the model's own tendons
            return Err(PyValueError::new_err("give rigid_tendons or track, not both"));
        }
        options.rigid_tendons = rigid_tendons;
        self.well_posed(py)?;
        let method = options
            .integrator_for(&self.compiled, excitations.is_some() || loads.is_some() || track.is_some())
            .map_err(refused)?;
        let loads =
            loads.map(|p| ExternalLoads::read(&p, &self.compiled)).transpose().map_err(|d| model_error(py, &d))?;
        options.plan(method == mollier::Integrator::Rosenbrock).map_err(refused)?;
        let (source, excitations) = match excitations {
            None => (None, None),
            Some(MotionArg::Path(p)) => {
                let e = mollier::Excitations::read(&p, &self.compiled);
                (Some(p.display().to_string()), Some(e))
            }
            Some(MotionArg::Arrays(arrays)) => {
                let (name, text) = arrays_text("excitations", arrays)?;
                let e = mollier::Excitations::parse(&name, &text, &self.compiled);
                (Some(name), Some(e))
            }
        };
        let mut excitations = excitations.transpose().map_err(|d| model_error(py, &d))?;
        let mut notes: Vec<String> =
            excitations.as_ref().and_then(|e| e.missing_note(&self.compiled)).into_iter().collect();
        if let Some(arg) = track {
            let name = match &arg {
                MotionArg::Path(p) => p.display().to_string(),
                MotionArg::Arrays(_) => "track".to_string(),
            };
            let (motion, motion_notes) = self.motion(py, arg)?;
            notes.extend(motion_notes);
            let (compiled, tolerances) = (&self.compiled, options.tolerances);
            let (ex, worst) = py
                .detach(|| mollier::cmc::track_motion(compiled, &motion, duration, tolerances))
                .map_err(|e| match e {
                    mollier::CmcError::Target(_) => PyValueError::new_err(format!("{name}: {e}")),
                    _ => FrameError::new_err(format!("tracking {name}: {e}")),
                })?;
            notes.push(format!(
                "tracked {name} by computed muscle control: {} excitation rows, largest coordinate error at an interval's start {worst:.3}",
                ex.time.len()
            ));
            excitations = Some(ex);
        }
        let mut run = SimulateRun::loaded(&self.compiled, &options, excitations, loads.as_ref()).map_err(refused)?;
        let described = run.tables();
        let units = PyDict::new(py);
        for t in &described {
            let columns = PyDict::new(py);
            columns.set_item("time", "s")?;
            for c in &t.columns {
                columns.set_item(&c.name, c.unit)?;
            }
            units.set_item(table_name(&t.file), columns)?;
        }
        let progress = Progress::new(progress);
        let start = std::time::Instant::now();
        let (tables, failures, solved) = py.detach(|| {
            let mut t: Vec<Table> = described
                .iter()
                .map(|t| Table::new(table_name(&t.file), t.columns.iter().map(|c| c.name.clone()).collect()))
                .collect();
            let (total, mut done, mut failures) = (run.rows(), 0, Vec::new());
            for i in 0..run.chunks() {
                let time = run.time();
                match run.solve(i, &mut |_| {}) {
                    Ok(rows) => {
                        for row in &rows {
                            for (table, values) in t.iter_mut().zip(&row.values) {
                                table.push(row.time, values);
                            }
                        }
                        done += rows.len();
                    }
                    Err(e) => {
                        failures.push((time, e.to_string()));
                        break;
                    }
                }
                if !progress.report(done, total) {
                    break;
                }
            }
            (t, failures, done)
        });
        progress.into_result()?;
        notes.extend(run.warnings().into_iter().map(|w| format!("warning: {w}")));
        let mut summary = run.summary();
        if run.forward().is_some() {
            summary.insert("excitations".into(), serde_json::json!(source));
        }
        summary.insert("steps".into(), serde_json::json!(run.rows()));
        summary.insert("solved".into(), serde_json::json!(solved));
        summary.insert("wall_s".into(), serde_json::json!(start.elapsed().as_secs_f64()));
        let summary = serde_json::Value::Object(summary).to_string();
        Ok((tables_into_py(py, tables)?, failures, notes, summary, units))
    }
}

/// A simulation that cannot start, in Python's terms.
fn refused(e: SimulateError) -> PyErr {
    match e {
        SimulateError::Start { .. } => FrameError::new_err(e.to_string()),
        SimulateError::Rk4WithMuscles => PyValueError::new_err(
            "RK4 simulates passive mechanisms; a model with muscles, excitations or loads needs integrator=\"rosenbrock\"",
        ),
        SimulateError::Span { .. }
        | SimulateError::Grid { .. }
        | SimulateError::Tolerance { .. }
        | SimulateError::RigidTendons(_)
        | SimulateError::JacobianInterval
        | SimulateError::LoadTimes { .. } => PyValueError::new_err(e.to_string()),
    }
}

/// A table's name in Python: its file's name without `.csv`.
fn table_name(file: &str) -> &str {
    file.strip_suffix(".csv").unwrap_or(file)
}

/// `mollier study`: run the study file `path` and write its results into the directory `out` as
/// a unit (the command's files, through the shared writer). Returns `(files, failed)`: the files
/// written, `summary.json` last, and the number of frames not solved.
#[pyfunction]
fn study(py: Python<'_>, path: PathBuf, out: PathBuf) -> PyResult<(Vec<PathBuf>, usize)> {
    let study = py.detach(|| mollier_study::Study::load(&path)).map_err(|e| ModelError::new_err(e.to_string()))?;
    // streamed as the command does: memory does not grow with the motion
    let written =
        py.detach(|| mollier_study::output::run_and_write(&study, Path::new(&out), mollier::output::TableFormat::Csv));
    let w = written.map_err(|e| FrameError::new_err(e.to_string()))?;
    let failed = w.kinematics_failed_count + w.results.variants.iter().map(|v| v.summary.failed).sum::<usize>();
    Ok((w.files, failed))
}

/// `mollier optimize`: solve the optimal control problem file `problem` and write its tables into
/// the directory `out` as a unit, by the command's pipeline ([`mollier::optimize::run`]). Returns
/// `(files, converged)`: the files written, `summary.json` last, and whether IPOPT converged
/// (else the tables hold its last iterate).
#[pyfunction]
fn optimize(py: Python<'_>, problem: PathBuf, out: PathBuf) -> PyResult<(Vec<PathBuf>, bool)> {
    use mollier::optimize::OptimizeError;
    let done = py.detach(|| {
        mollier::optimize::run(&problem, &mollier::registry(), || mollier::OutputDir::create(&out)).map_err(|e| match e
        {
            OptimizeError::File(d) => ScaleFailure::Invalid(d),
            e => ScaleFailure::Failed(e.to_string()),
        })
    });
    let done = done.map_err(|e| match e {
        ScaleFailure::Invalid(d) => model_error(py, &d),
        ScaleFailure::Failed(m) => FrameError::new_err(m),
    })?;
    Ok((written_files(&done.dir, "optimization")?, done.converged))
}

/// Why a scaling stopped: located problems, or a model that cannot be solved or written.
enum ScaleFailure {
    Invalid(Diagnostics),
    Failed(String),
}

/// `mollier scale`: scale the OpenSim model (`.osim`) or Mollier model file `model` as the
/// setup `setup` says (OpenSim's scale
/// setup `.xml` or a TOML file of factors; `markers` and `mass` replace the setup's) and write
/// the scaled model and its report into the directory `out` as a unit (the command's files,
/// through the same writer). Returns the files written, `summary.json` last.
#[pyfunction]
#[pyo3(signature = (model, setup, out, markers=None, mass=None))]
fn scale(
    py: Python<'_>,
    model: PathBuf,
    setup: PathBuf,
    out: PathBuf,
    markers: Option<PathBuf>,
    mass: Option<f64>,
) -> PyResult<Vec<PathBuf>> {
    use mollier::scale::{ScaleError, ScaleRequest, scale_any};
    let done = py.detach(|| {
        let start = std::time::Instant::now();
        let request = ScaleRequest { model: &model, setup: &setup, markers: markers.as_deref(), mass };
        let (setup, scaled) = scale_any(&request, &mollier::registry()).map_err(|e| match e {
            ScaleError::Invalid(d) => ScaleFailure::Invalid(d),
            e => ScaleFailure::Failed(e.to_string()),
        })?;
        let mut head = serde_json::Map::new();
        head.insert("command".into(), serde_json::json!("scale"));
        head.insert("model".into(), serde_json::json!(model.display().to_string()));
        let timing = serde_json::json!({ "wall_ms": start.elapsed().as_secs_f64() * 1e3 });
        scaled.write(&out, &setup, head, timing).map_err(|e| ScaleFailure::Failed(e.to_string()))
    });
    let dir = done.map_err(|e| match e {
        ScaleFailure::Invalid(d) => model_error(py, &d),
        ScaleFailure::Failed(m) => FrameError::new_err(m),
    })?;
    written_files(&dir, "scaling")
}

/// The files a command wrote into `dir` as its `summary.json` lists them, `summary.json` last.
fn written_files(dir: &Path, what: &str) -> PyResult<Vec<PathBuf>> {
    let summary: serde_json::Value = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .ok_or_else(|| FrameError::new_err(format!("the {what}'s summary.json cannot be read back")))?;
    let mut files: Vec<PathBuf> = summary["files"]
        .as_array()
        .map(|a| a.iter().filter_map(|f| f.as_str()).map(|f| dir.join(f)).collect())
        .unwrap_or_default();
    files.push(dir.join("summary.json"));
    Ok(files)
}

/// The module `mollier._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Model>()?;
    m.add_function(wrap_pyfunction!(study, m)?)?;
    m.add_function(wrap_pyfunction!(scale, m)?)?;
    m.add_function(wrap_pyfunction!(optimize, m)?)?;
    m.add("ModelError", m.py().get_type::<ModelError>())?;
    m.add("NotWellPosed", m.py().get_type::<NotWellPosed>())?;
    m.add("FrameError", m.py().get_type::<FrameError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
