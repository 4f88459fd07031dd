"""Mollier from Python: finite-element multibody musculoskeletal models.

The package mirrors the ``mollier`` command and the Model/Data split of the library::

    import mollier
    m = mollier.load("models/mechanisms/elbow-muscles.toml")   # or a .osim model
    m.check()                                                   # dof, well_posed, diagnostics
    k = m.kinematics("models/mechanisms/elbow-muscles-motion.csv")
    k.lengths, k.moment_arms                                    # muscle lengths (m), moment arms (m)
    r = m.inverse(motion, criterion="b", cone=True)             # forces, reactions, stability

A motion is a motion file (CSV, ``.mot``/``.sto``), a ``(time, values)`` pair of arrays with the
columns in the order of ``Model.inputs`` (or ``(time, values, columns)``), or a pandas DataFrame
with a ``time`` column (else its index is the time) and a column per input. Every result table
holds exactly the numbers the command writes in its CSV file: a pandas DataFrame indexed by
``time`` when pandas is installed, else a :class:`Table` of numpy arrays. Units are SI (m, rad,
N, N·m). Rust runs with the GIL released; ``progress(done, total)`` is called as frames finish.
"""

from __future__ import annotations

import csv
import json
import math
import os
import warnings
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import FrameError, ModelError, NotWellPosed

__version__: str = _native.__version__

__all__ = [
    "FrameError",
    "Model",
    "ModelError",
    "MotionWarning",
    "NotWellPosed",
    "OptimizeResult",
    "ReserveWarning",
    "Results",
    "ScaleResult",
    "SimulationResult",
    "StudyResult",
    "Table",
    "load",
    "load_text",
    "optimize",
    "read_table",
    "scale",
    "study",
]


class MotionWarning(UserWarning):
    """Something in a motion that is probably a mistake (an angle column that looks like
    degrees, columns that name no input), or frames left out with ``on_error="skip"``."""


class ReserveWarning(UserWarning):
    """Reserve actuators carry more than 1 % of a driving force in some frames of ``inverse``:
    the muscles cannot make the motion there (the command's warning, once per run)."""


def _have_pandas() -> bool:
    try:
        import pandas  # noqa: F401
    except ImportError:
        return False
    return True


class Table:
    """A result table as numpy arrays: ``time`` (frames,) in s, ``values`` (frames, columns)
    float64, ``columns`` the labels of the command's CSV header after ``time``, and ``text``
    the text columns (``status``, ``message`` of a stability table) as lists. An empty CSV
    cell is NaN here."""

    __slots__ = ("name", "columns", "time", "values", "text")

    def __init__(self, name: str, columns: Sequence[str], time: np.ndarray, values: np.ndarray,
                 text: Optional[Dict[str, List[str]]] = None) -> None:
        self.name = name
        self.columns = list(columns)
        self.time = np.asarray(time, dtype=np.float64)
        self.values = np.asarray(values, dtype=np.float64).reshape(len(self.time), len(self.columns))
        self.text = dict(text or {})

    def __getitem__(self, column: str) -> Union[np.ndarray, List[str]]:
        """One column: a float64 array (frames,), or a list for a text column."""
        if column == "time":
            return self.time
        if column in self.text:
            return self.text[column]
        try:
            return self.values[:, self.columns.index(column)]
        except ValueError:
            raise KeyError(f"{self.name} has no column {column!r}") from None

    def __len__(self) -> int:
        return len(self.time)

    @property
    def shape(self) -> tuple:
        """``(frames, columns)`` of ``values``."""
        return self.values.shape

    def to_pandas(self) -> Any:
        """A DataFrame indexed by ``time``: the numeric columns, then the text columns."""
        import pandas as pd

        df = pd.DataFrame(self.values, index=pd.Index(self.time, name="time"), columns=self.columns)
        for name, cells in self.text.items():
            df[name] = cells
        return df

    def __repr__(self) -> str:
        return f"Table({self.name!r}, {len(self.time)} rows x {len(self.columns)} columns)"


class Results:
    """The tables of one analysis, by name (``results.forces`` or ``results["forces"]``), in
    the form asked for; ``failures`` lists ``(time, reason)`` of frames not solved; ``notes``
    what the reader noticed in the motion and how it was differentiated."""

    def __init__(self, tables: Dict[str, Any], failures: List[tuple], notes: List[str]) -> None:
        self._tables = tables
        self.failures = failures
        self.notes = notes

    def __getattr__(self, name: str) -> Any:
        tables = self.__dict__.get("_tables", {})
        if name in tables:
            return tables[name]
        raise AttributeError(f"no table {name!r}; the tables are {', '.join(tables)}")

    def __getitem__(self, name: str) -> Any:
        return self._tables[name]

    def __iter__(self):
        return iter(self._tables)

    def keys(self):
        """The names of the tables."""
        return self._tables.keys()

    def items(self):
        """``(name, table)`` pairs."""
        return self._tables.items()

    def __repr__(self) -> str:
        return f"Results({', '.join(self._tables)})"


class SimulationResult(Results):
    """The tables of :meth:`Model.simulate` (as :class:`Results`), with ``summary``: the figures
    of the command's ``summary.json`` as a dict (``steps``, ``solved``, ``end_time_s``,
    ``duration_s``, ``dt_s``, ``integrator``, ``wall_s``; with muscles ``integration_wall_s``,
    ``real_time_factor``, ``us_per_step``, ``max_motion_defect``, ``max_muscle_defect_N``,
    ``muscles``, ``muscles_without_excitation``, and ``lowest_contact_level`` and
    ``largest_stability_index`` when the model has soft contacts and a joint cone; for a passive
    mechanism ``conservative`` and ``max_energy_drift_J``), and ``units``: per table, the unit
    of each column (``units["states"]["elbow.rotation"] == "rad"``)."""

    def __init__(self, tables: Dict[str, Any], failures: List[tuple], notes: List[str],
                 summary: Dict[str, Any], units: Dict[str, Dict[str, str]]) -> None:
        super().__init__(tables, failures, notes)
        self.summary = summary
        self.units = units

    def __repr__(self) -> str:
        s = self.summary
        return (f"SimulationResult({', '.join(self._tables)}; {s.get('solved')} of {s.get('steps')} rows, "
                f"{s.get('integrator')}, t = {s.get('end_time_s')} s)")


def _as_format(output: Optional[str]) -> str:
    if output is None:
        return "pandas" if _have_pandas() else "numpy"
    if output not in ("pandas", "numpy"):
        raise ValueError(f'output is "pandas", "numpy" or None, not {output!r}')
    return output


def _table(name: str, raw: tuple, output: str) -> Any:
    columns, time, values, text = raw
    t = Table(name, columns, time, values, text)
    return t.to_pandas() if output == "pandas" else t


def _results(raw: tuple, output: Optional[str], on_error: str = "stop") -> Results:
    tables, failures, notes = raw
    fmt = _as_format(output)
    for n in notes:
        if n.startswith("motion derivatives: "):
            continue
        if n.startswith("warning: reserves "):
            warnings.warn(n[len("warning: "):], ReserveWarning, stacklevel=3)
        else:
            warnings.warn(n, MotionWarning, stacklevel=3)
    if failures and on_error == "stop":
        t, reason = failures[0]
        raise FrameError(f"frame at time {_time(t)} s: {reason}")
    if failures:
        shown = "; ".join(f"frame at time {_time(t)} s: {r}" for t, r in failures[:10])
        more = f" and {len(failures) - 10} more" if len(failures) > 10 else ""
        warnings.warn(f"{len(failures)} frames could not be solved and are left out: {shown}{more}",
                      MotionWarning, stacklevel=3)
    return Results({name: _table(name, t, fmt) for name, t in tables.items()}, failures, notes)


MotionLike = Any


class Model:
    """A compiled model: immutable; every analysis starts from its initial configuration.

    Make one with :func:`load` (a file) or :func:`load_text` (a file's text).
    """

    __slots__ = ("_m",)

    def __init__(self, native: Any) -> None:
        self._m = native

    @property
    def file(self) -> str:
        """The model file, as named."""
        return self._m.file

    @property
    def inputs(self) -> List[str]:
        """The inputs (driven coordinates) in the model's order: the columns of a motion."""
        return self._m.inputs

    @property
    def muscles(self) -> List[str]:
        """The muscle elements (free ``truss`` and ``curved-truss`` elongations): the columns of
        the ``lengths`` table."""
        return self._m.muscles

    @property
    def load_sharing_muscles(self) -> List[str]:
        """The muscles of the ``[load_sharing]`` section: the columns of ``forces``."""
        return self._m.load_sharing_muscles

    @property
    def forward_muscles(self) -> List[str]:
        """The Hill muscles of the ``[muscles]`` section (forward dynamics): the columns of an
        excitation table."""
        return self._m.forward_muscles

    def check(self) -> Dict[str, Any]:
        """``mollier check``: a dict with ``dof`` (degrees of freedom), ``redundant``
        (redundant constraints), ``well_posed`` (bool), ``diagnostics`` (findings naming modes
        and coordinates) and ``problems`` (located problems with the file)."""
        return self._m.check()

    def kinematics(self, motion: MotionLike, *, second_order: bool = False, on_error: str = "stop",
                   progress: Optional[Callable[[int, int], Any]] = None,
                   output: Optional[str] = None) -> Results:
        """``mollier kinematics``: per frame, ``positions`` of the named points (m),
        ``deformations`` of every element mode (m or rad), ``transfer`` (∂e/∂q of the free
        modes), and for muscles ``lengths`` (m) and ``moment_arms`` (−∂l/∂q, m/rad or m/m);
        ``second_order`` (∂²e/∂q_i∂q_j, i <= j) on request.

        ``on_error="stop"`` raises :class:`FrameError` at the first frame that cannot be
        solved; ``"skip"`` leaves it out with a warning."""
        raw = self._m.kinematics(_motion(self, motion), second_order, on_error, progress)
        return _results(raw, output, on_error)

    def inverse_dynamics(self, motion: MotionLike, *, smooth: Optional[float] = None,
                         on_error: str = "stop", progress: Optional[Callable[[int, int], Any]] = None,
                         output: Optional[str] = None, loads: Optional[Union[str, os.PathLike]] = None) -> Results:
        """``mollier inverse-dynamics``: the ``driving`` forces of the inputs (N or N·m), the
        ``reactions`` of the held modes and the ``passive`` law stresses, the motion
        differentiated by a quintic spline (``smooth``: a smoothing cut-off in Hz). ``loads``:
        a file of time-varying external loads (``--loads``: a table or OpenSim's
        ``ExternalLoads`` XML, docs/loads.md)."""
        raw = self._m.inverse_dynamics(_motion(self, motion), smooth, on_error, progress, _path(loads))
        return _results(raw, output, on_error)

    def ik(self, markers: Union[str, os.PathLike], tasks: Optional[Union[str, os.PathLike]] = None, *,
           tolerance: float = 1e-10, progress: Optional[Callable[[int, int], Any]] = None,
           output: Optional[str] = None) -> Results:
        """``mollier ik``: the motion that best fits a marker trial (``.trc``), with a tasks file
        (TOML or OpenSim's IK setup ``.xml``) when given (docs/inverse-kinematics.md). Tables
        ``motion`` (the model's inputs: a motion for :meth:`inverse_dynamics` and
        :meth:`inverse`), ``coordinates`` (OpenSim's, for an ``.osim`` model) and
        ``marker_errors`` (m, NaN where a marker is missing; the frame's ``rms`` and ``max``). A
        frame that cannot be solved raises :class:`FrameError`. ``tolerance`` (``--tolerance``,
        rad or m): a frame ends when no step changes an unknown by more."""
        raw = self._m.ik(os.fspath(markers), _path(tasks), progress, tolerance)
        return _results(raw, output)

    def inverse(self, motion: MotionLike, criterion: str = "b", *, cone: bool = True,
                static: bool = False, smooth: Optional[float] = None,
                progress: Optional[Callable[[int, int], Any]] = None,
                output: Optional[str] = None, loads: Optional[Union[str, os.PathLike]] = None) -> Results:
        """``mollier inverse``: the driving forces shared among the ``[load_sharing]`` muscles
        by criterion ``a``-``d`` (van der Helm 1994), the joint cone imposed when ``cone``
        (``--no-cone`` is ``cone=False``), every frame a static posture when ``static``.
        Tables ``forces`` (N), ``reactions`` (sign-constrained reactions, the joint force and
        reserves) and ``stability`` (stability index, deviation angles θ, φ in deg, residual,
        objective, iterations, ``status`` and ``message``). A frame that fails stays in the
        tables with NaN forces and its status. ``loads``: external loads, as for
        :meth:`inverse_dynamics`."""
        raw = self._m.inverse(_motion(self, motion), criterion, cone, static, smooth, progress, _path(loads))
        return _results(raw, output, "skip")

    def simulate(self, excitations: Optional[MotionLike] = None, *, duration: float,
                 dt: Optional[float] = None, integrator: Optional[str] = None,
                 progress: Optional[Callable[[int, int], Any]] = None, output: Optional[str] = None,
                 output_dt: Optional[float] = None, rtol: float = 1e-3, atol: float = 1e-5,
                 defect_tolerance: float = 0.01,
                 loads: Optional[Union[str, os.PathLike]] = None,
                 track: Optional[MotionLike] = None, atol_activation: Optional[float] = None,
                 controller: str = "elementary", steps_across_knots: bool = False,
                 rigid_tendons: Optional[float] = None, method: str = "ros23",
                 jacobian_every: int = 4) -> SimulationResult:
        """``mollier simulate``: forward dynamics from rest in the initial configuration for
        ``duration`` s (rounded up to whole output steps).

        As the command's options: with muscles and no ``dt`` the error-controlled Rosenbrock-W
        pair (``rtol``, ``atol``; ``atol_activation`` for the activations, default ``atol``;
        ``controller`` ``"elementary"`` or ``"gustafsson"``; ``method`` ``"ros23"``,
        ``"ros34pw2"``, ``"euler"`` or ``"bdf2"``; ``jacobian_every`` the accepted steps between
        whole Jacobians, at least 1; ``steps_across_knots`` lets the steps straddle the
        excitations' knots), rows every ``output_dt`` s (0.01 by default); with ``dt`` the
        fixed step (RK4's default 0.004 s), rows every ``output_dt`` (a whole number of steps,
        default ``dt``), each step's muscle equilibrium defect checked against
        ``defect_tolerance`` (a fraction of ``F_max``; a :class:`MotionWarning` and the summary's
        ``steps_over_defect_tolerance`` when exceeded).

        A model with ``[muscles]`` runs the Rosenbrock step (``integrator="rosenbrock"``, the
        default for it), its muscles driven by ``excitations`` — an excitation file, a
        ``(time, values[, columns])`` tuple (columns default to :attr:`forward_muscles`) or a
        DataFrame, values in [0, 1], interpolated linearly; a muscle without a column gets 0
        (a :class:`MotionWarning`) — giving tables ``states`` (the inputs in m or rad, their
        rates ``<input>.vel``, ``<muscle>.contraction`` in m and ``<muscle>.activation``),
        ``muscles`` (per muscle ``.excitation``, ``.activation``, ``.force`` in N,
        ``.fibre_length`` in m, ``.fibre_velocity`` in m/s, ``.length`` in m), and
        ``contacts`` (N, and the level) and ``stability`` (the joint force in the cone frame, N;
        ``theta``, ``phi`` in rad; ``stability_index``) when the model has soft contacts and a
        joint cone. A passive mechanism runs RK4 (``integrator="rk4"``), giving ``motion`` (the
        inputs: a motion for :meth:`kinematics`), ``velocities`` and ``energy`` (J, and its
        drift). The rows are the command's, one per step and the initial or final state.
        ``loads``: external loads that vary in time, as for :meth:`inverse_dynamics`; they must
        cover the run's times and ask for the Rosenbrock integrator.

        ``rigid_tendons``: every muscle whose tendon slack length is below this many optimal fibre
        lengths (``math.inf``: every muscle) runs with a rigid tendon, as ``--rigid-tendons``;
        the summary's ``rigid_tendons`` lists them. Not with ``track``.

        ``track``: a motion of the model (as for :meth:`inverse`) whose excitations computed
        muscle control makes, as ``mollier simulate --track`` (the same pipeline), instead of
        ``excitations``; the summary's ``excitations`` is then None, as the command's.

        Raises :class:`ModelError` for excitations that cannot be read (``file:line:col``),
        ``ValueError`` for a duration or step that is not positive or RK4 asked for muscles,
        and :class:`FrameError` when the initial state cannot be found or a step fails (the
        run stops there, as the command does; ``error.results`` holds the rows before it)."""
        native_excitations = (None if excitations is None
                              else _table_arg(excitations, self.forward_muscles, "excitations"))
        tables, failures, notes, summary, units = self._m.simulate(duration, native_excitations, dt,
                                                                   integrator, progress, output_dt,
                                                                   rtol, atol, defect_tolerance,
                                                                   _path(loads),
                                                                   None if track is None else _motion(self, track),
                                                                   atol_activation, controller, steps_across_knots,
                                                                   rigid_tendons, method, jacobian_every)
        fmt = _as_format(output)
        for n in notes:
            warnings.warn(n, MotionWarning, stacklevel=2)
        result = SimulationResult({name: _table(name, t, fmt) for name, t in tables.items()}, failures, notes,
                                  json.loads(summary), units)
        if failures:
            t, reason = failures[0]
            error = FrameError(f"the steps from time {_time(t)} s: {reason}")
            error.results = result
            raise error
        return result

    def __repr__(self) -> str:
        return f"mollier.Model({self.file!r}, inputs={self.inputs})"


def _time(t: float) -> str:
    """A time for people, as the command prints it: 12 significant digits (``3.9``, not
    ``3.9000000000000004``)."""
    return f"{t:.12g}"


def _f64(a: Any) -> np.ndarray:
    """``a`` as the native module reads it: float64, C-contiguous and aligned (an array unpickled
    from a byte buffer, as Dask sends it, may be unaligned; Rust may not read it in place)."""
    return np.require(a, dtype=np.float64, requirements=["C", "A"])


def _path(path: Optional[Union[str, os.PathLike]]) -> Optional[str]:
    """A file's path for the native module, or None."""
    return None if path is None else os.fspath(path)


def _motion(model: Model, motion: MotionLike) -> Any:
    """The motion as the native module takes it: a path, or (name, time, values, columns)."""
    return _table_arg(motion, model.inputs, "a motion")


def _table_arg(table: Any, default_columns: List[str], what: str) -> Any:
    """A motion or excitations as the native module takes them: a path, or (name, time, values,
    columns); ``default_columns`` name the columns of a ``(time, values)`` pair."""
    if isinstance(table, (str, os.PathLike)):
        return os.fspath(table)
    if hasattr(table, "columns") and hasattr(table, "to_numpy"):  # a pandas DataFrame
        df = table
        if "time" in df.columns:
            time = df["time"].to_numpy(dtype=np.float64)
            df = df.drop(columns=["time"])
        else:
            time = df.index.to_numpy(dtype=np.float64)
        columns = [str(c) for c in df.columns]
        return ("<DataFrame>", _f64(time), _f64(df.to_numpy(dtype=np.float64)),
                columns)
    if isinstance(table, tuple) and len(table) in (2, 3):
        time = _f64(table[0])
        values = np.asarray(table[1], dtype=np.float64)
        if values.ndim == 1:
            values = values.reshape(-1, 1)
        columns = list(table[2]) if len(table) == 3 else default_columns
        if time.ndim != 1:
            raise ValueError(f"the time of {what} is an array of shape (frames,), not {time.shape}")
        return ("<arrays>", time, _f64(values), [str(c) for c in columns])
    raise TypeError(f"{what} is a file path, a (time, values[, columns]) tuple or a pandas DataFrame, "
                    f"not {type(table).__name__}")


def load(path: Union[str, os.PathLike]) -> Model:
    """Read, check and compile a model file (``.toml``, ``.json``, or an OpenSim ``.osim``
    model, imported in memory). Raises :class:`ModelError` (with ``file:line:col``, the field
    path and a hint, and ``.diagnostics``) for a file that cannot be read."""
    return Model(_native.Model.load(os.fspath(path)))


def load_text(text: str, file: str = "model.toml") -> Model:
    """Compile the text of a model file; ``file`` names it in errors and its extension gives
    the format (``.toml``, ``.json``, ``.osim``). What a Dask worker is sent: text, not a
    compiled model."""
    return Model(_native.Model.from_text(text, file))


def read_table(path: Union[str, os.PathLike], output: Optional[str] = None) -> Any:
    """Read a table Mollier wrote (CSV with a ``time`` column first): a DataFrame or a
    :class:`Table`; empty cells are NaN, columns that are not numbers stay text."""
    path = Path(path)
    with open(path, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    header, body = rows[0], rows[1:]
    lead = header[0]
    numeric, text = [], {}
    for j, name in enumerate(header[1:], start=1):
        cells = [r[j] for r in body]
        try:
            numeric.append((name, [float(c) if c else math.nan for c in cells]))
        except ValueError:
            text[name] = cells
    time = np.array([float(r[0]) for r in body], dtype=np.float64)
    values = np.array([v for _, v in numeric], dtype=np.float64).T.reshape(len(body), len(numeric))
    t = Table(path.stem, [n for n, _ in numeric], time, values, text)
    if _as_format(output) == "pandas":
        df = t.to_pandas()
        df.index.name = lead
        return df
    return t


class StudyResult:
    """A study written to ``out``: ``files`` (paths, ``summary.json`` last), ``failed`` (frames
    not solved), ``summary`` (``summary.json`` as a dict); :meth:`table` reads one of its tables."""

    def __init__(self, out: Path, files: List[Path], failed: int) -> None:
        self.out = out
        self.files = files
        self.failed = failed
        with open(out / "summary.json") as f:
            self.summary = json.load(f)

    def table(self, name: str, output: Optional[str] = None) -> Any:
        """A table of the study by its path in ``out`` (``lengths.csv``, ``b-glenoid/forces.csv``)."""
        return read_table(self.out / name, output)

    def __repr__(self) -> str:
        return f"StudyResult({str(self.out)!r}, {len(self.files)} files, {self.failed} frames failed)"


class ScaleResult:
    """A scaled model written to ``out``: ``model`` (the path of its ``model.toml``), ``files``
    (``summary.json`` last), ``summary`` (``summary.json`` as a dict) and ``factors`` (each
    body's x, y, z factors, from ``scale_factors.csv``)."""

    def __init__(self, out: Path, files: List[Path]) -> None:
        self.out = out
        self.files = files
        self.model = out / "model.toml"
        with open(out / "summary.json") as f:
            self.summary = json.load(f)
        with open(out / "scale_factors.csv", newline="") as f:
            rows = list(csv.reader(f))[1:]
        self.factors = {r[0]: (float(r[1]), float(r[2]), float(r[3])) for r in rows}

    def __repr__(self) -> str:
        return f"ScaleResult({str(self.out)!r}, {len(self.files)} files)"


def scale(model: Union[str, os.PathLike], setup: Union[str, os.PathLike], out: Union[str, os.PathLike],
          markers: Optional[Union[str, os.PathLike]] = None, mass: Optional[float] = None) -> ScaleResult:
    """``mollier scale``: scale the OpenSim model (``.osim``) or Mollier model file (``.toml``,
    ``.json``) ``model`` as ``setup`` says
    (OpenSim's scale setup ``.xml``, or a TOML file of factors per body; ``markers``, a static
    trial ``.trc``, and ``mass`` in kg replace the setup's) and write the scaled Mollier model and
    the report of its factors into the directory ``out`` as a unit, as the command does
    (docs/scaling.md). Bad input raises :class:`ModelError` and writes nothing."""
    files = _native.scale(os.fspath(model), os.fspath(setup), os.fspath(out), _path(markers), mass)
    return ScaleResult(Path(out), [Path(f) for f in files])


def study(path: Union[str, os.PathLike], out: Union[str, os.PathLike]) -> StudyResult:
    """``mollier study``: run a study file and write its results into the directory ``out``
    as a unit (the same files as the command, through the same writer)."""
    files, failed = _native.study(os.fspath(path), os.fspath(out))
    return StudyResult(Path(out), [Path(f) for f in files], failed)


class OptimizeResult:
    """An optimal control problem solved into ``out``: ``files`` (paths, ``summary.json``
    last), ``converged`` (whether IPOPT converged; else the tables hold its last iterate),
    ``summary`` (``summary.json`` as a dict: ``status``, ``objective``, ``iterations``, the
    largest dynamics residual and defect); :meth:`table` reads one of its tables."""

    def __init__(self, out: Path, files: List[Path], converged: bool) -> None:
        self.out = out
        self.files = files
        self.converged = converged
        with open(out / "summary.json") as f:
            self.summary = json.load(f)
        self.objective: float = self.summary["objective"]

    def table(self, name: str, output: Optional[str] = None) -> Any:
        """A table by its file's name without ``.csv``: ``states``, ``muscles``, ``controls``
        (by time) or ``convergence`` (IPOPT's iterations; its ``time`` column is ``iter``)."""
        return read_table(self.out / f"{name}.csv", output)

    def __repr__(self) -> str:
        state = "converged" if self.converged else "not converged"
        return f"OptimizeResult({str(self.out)!r}, objective {self.objective:.9g}, {state})"


def optimize(problem: Union[str, os.PathLike], out: Union[str, os.PathLike]) -> OptimizeResult:
    """``mollier optimize``: solve the optimal control problem file ``problem`` (TOML,
    docs/optimal-control.md) by direct collocation and IPOPT and write its tables into the
    directory ``out`` as a unit, by the command's own pipeline (the same files). A bad problem
    file raises :class:`ModelError` and writes nothing; IPOPT missing or a failed evaluation
    raises :class:`FrameError`."""
    files, converged = _native.optimize(os.fspath(problem), os.fspath(out))
    return OptimizeResult(Path(out), [Path(f) for f in files], converged)
