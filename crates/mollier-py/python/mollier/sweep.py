"""Sweeps of independent tasks on a Dask cluster that survive a lost cluster, keep finished
work and resume (docs/scale-out.md).

A sweep is a list of :class:`Task`: each runs :func:`solve_inverse` — ``Model.inverse`` of a
model given as the text of its files, over a chunk of frames — and gives a table of rows. What
makes it robust:

- **Inputs a lost cluster can recompute.** A model's files travel as a keyed task of their own
  (its key names their content's SHA-256), held in the scheduler's graph with their text, not
  scattered into workers' memory: when every worker is lost the scheduler runs it again. A task
  whose worker died too often (``KilledWorker``) or that the scheduler forgot is submitted again
  under a new key, up to ``retries`` times; then the sweep stops with :class:`SweepError`, one
  message naming the task and the cause.
- **Finished work kept.** Every finished task's table is written at once, by the client, into
  the results directory's staging sibling ``.NAME.partial`` (a file per task, named by the
  task's identity: a hash of all its inputs). When every task is there, the table of the whole
  sweep is written, ``summary.json`` last, and the staging directory is renamed into place — as
  Mollier's own output directories are written. A rerun of the same sweep finds the finished
  tasks' files and runs only the others; a task whose inputs changed has another identity and
  runs again.
- **The first call paid once.** A worker process compiles a model once per content
  (:func:`compiled`, keyed by the files' digest) and keeps it for its later tasks.
- **Dask's own cost amortized.** Consecutive tasks of one model go to a worker as one Dask
  task (:func:`solve_group`), two in flight per worker thread; the cluster runs with
  :data:`DASK_CONFIG` (no dashboard profiler sampling the solves). A task's identity, file and
  rows do not depend on how it travelled.

Runs with ``client=None`` run the tasks in this process, one after the other (the reference a
cluster's run is compared with).
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import shutil
import tempfile
import time
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import Model, __version__, load

__all__ = ["DASK_CONFIG", "ModelFiles", "ResultsDir", "SweepError", "SweepReport", "Task", "compiled", "dask_env",
           "run", "solve_group", "solve_inverse"]

SUMMARY = "summary.json"

#: Dask settings for a sweep's cluster: the periodic work every Dask process does for the
#: dashboard — the statistical profiler sampling the task's thread every 10 ms, the event loop's
#: 20 ms tick, the system monitor every 0.5 s, the memory monitor every 0.1 s — cost an idle
#: worker 43 ms of CPU a second here, and 4 ms with these (docs/scale-out.md). Heartbeats, and so
#: how soon a lost worker is noticed, are unchanged. Set them where the cluster is started
#: (``dask.config.set(DASK_CONFIG)`` around a ``LocalCluster``; :func:`dask_env` for ``dask
#: worker`` and ``dask scheduler``).
DASK_CONFIG: Dict[str, Any] = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.tick.interval": "1s",
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}


def dask_env() -> Dict[str, str]:
    """:data:`DASK_CONFIG` as the environment variables Dask's commands read
    (``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``, ...)."""
    return {"DASK_" + k.upper().replace(".", "__").replace("-", "_"): str(v) for k, v in DASK_CONFIG.items()}
TASKS = "tasks"


class SweepError(RuntimeError):
    """A sweep that cannot finish: a task that failed (after its retries, when the cause was a
    lost worker), a results directory that cannot be written. One message, naming the task and
    the cause; the finished tasks stay in the staging directory for a rerun."""


def _digest(*parts: Any) -> str:
    """SHA-256 of the parts in a form that tells them apart: text, numbers by their bits,
    arrays by dtype, shape and bytes."""
    h = hashlib.sha256()
    for p in parts:
        if isinstance(p, np.ndarray):
            a = np.ascontiguousarray(p)
            h.update(f"array {a.dtype.str} {a.shape}\0".encode())
            h.update(a.tobytes())
        elif isinstance(p, float):
            h.update(b"float " + float(p).hex().encode() + b"\0")
        elif isinstance(p, (list, tuple)):
            h.update(f"seq {len(p)}\0".encode())
            h.update(_digest(*p).encode())
        elif isinstance(p, Mapping):
            h.update(f"map {len(p)}\0".encode())
            for k in sorted(p):
                h.update(_digest(str(k), p[k]).encode())
        else:
            h.update(f"{type(p).__name__} ".encode() + str(p).encode() + b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class ModelFiles:
    """A model as the text of its files: ``main`` (the model file, e.g. ``shoulder.toml``) and
    the files it names by relative paths (a muscle table), ``{name: text}``."""

    main: str
    texts: Mapping[str, str]

    @property
    def digest(self) -> str:
        """SHA-256 of the names and texts: the model's identity on workers and in task ids."""
        return _digest(self.main, dict(self.texts))


@dataclass(frozen=True)
class Task:
    """One task: :func:`solve_inverse` of ``files`` with ``criterion`` over the frames
    ``time`` (s, shape (frames,)) and ``q`` (inputs in SI, shape (frames, inputs)) named by
    ``columns``; ``labels`` are the parameters put in front of its rows (name -> value), ``name``
    says what it is in messages and in Dask's keys."""

    name: str
    files: ModelFiles
    criterion: str
    time: np.ndarray
    q: np.ndarray
    columns: Tuple[str, ...]
    labels: Tuple[Tuple[str, Any], ...] = ()
    cone: bool = True
    static: bool = True
    _id: str = field(default="", compare=False, repr=False)

    @property
    def id(self) -> str:
        """The task's identity: a hash of everything its result depends on (the model's files,
        the criterion and options, the frames, the labels, the package's version)."""
        if not self._id:
            object.__setattr__(self, "_id", _digest(
                __version__, self.files.digest, self.criterion, self.cone, self.static,
                np.asarray(self.time, dtype=np.float64), np.asarray(self.q, dtype=np.float64),
                list(self.columns), [list(kv) for kv in self.labels])[:32])
        return self._id


_models: "OrderedDict[str, Model]" = OrderedDict()
_KEEP = 8


def compiled(texts: Mapping[str, str], main: str, digest: Optional[str] = None) -> Model:
    """The model of ``texts`` (``{file name: text}``, ``main`` the model file), compiled once per
    process and content: the last 8 are kept. The files are written into a temporary directory
    for the compile, since a model names its muscle table by a path relative to itself."""
    key = digest or ModelFiles(main, texts).digest
    if key in _models:
        _models.move_to_end(key)
        return _models[key]
    with tempfile.TemporaryDirectory(prefix="mollier-sweep-") as d:
        for name, text in texts.items():
            path = Path(d, name)
            if path.resolve().parent != Path(d).resolve():
                raise ValueError(f"a model file's name must be a plain file name, not {name!r}")
            path.write_text(text)
        model = load(Path(d, main))
    _models[key] = model
    while len(_models) > _KEEP:
        _models.popitem(last=False)
    return model


def solve_inverse(shipped: Tuple[str, str, Mapping[str, str]], criterion: str, time: np.ndarray, q: np.ndarray,
                  columns: Sequence[str], cone: bool = True, static: bool = True) -> Dict[str, Any]:
    """One task's work: ``Model.inverse`` of the model ``shipped`` (``(digest, main, texts)``)
    with ``criterion`` over the frames ``time`` (s, (frames,)) and ``q`` (SI, (frames, inputs))
    named by ``columns``. Plain numpy, no pandas: importing pandas was the first task's cost on
    a fresh worker (0.3-0.9 s against ~2 ms a frame), and the client makes the table anyway.

    Returns ``{"columns", "time", "values", "status"}``: ``values`` (frames, columns) float64
    holds the ``[load_sharing]`` muscles' forces (N), ``joint_force_N`` when the model has a
    joint cone, and ``stability_index``; ``status`` the solver's status per frame."""
    digest, main, texts = shipped
    model = compiled(texts, main, digest)
    r = model.inverse((time, q, list(columns)), criterion, cone=cone, static=static, output="numpy")
    names = list(r.forces.columns)
    parts = [r.forces.values]
    if "joint_force" in r.reactions.columns:
        names.append("joint_force_N")
        parts.append(r.reactions["joint_force"][:, None])
    names.append("stability_index")
    parts.append(r.stability["stability_index"][:, None])
    return {"columns": names, "time": r.forces.time, "values": np.hstack(parts),
            "status": list(r.stability.text["status"])}


def _ship(files: ModelFiles) -> Tuple[str, str, Dict[str, str]]:
    """What a task is given for its model: a tuple of plain text, hashed once on the client."""
    return (files.digest, files.main, dict(files.texts))


def _same_columns(parts: Sequence[Tuple[Task, Dict[str, Any]]]) -> None:
    """Every task of a sweep has the first task's columns and labels: one table holds them."""
    task0, raw0 = parts[0]
    for t, raw in parts:
        if list(raw["columns"]) != list(raw0["columns"]) or [k for k, _ in t.labels] != [k for k, _ in task0.labels]:
            raise SweepError(f"task {t.name} has other columns than task {task0.name}: one table cannot hold both")


def _table(parts: Sequence[Tuple[Task, Dict[str, Any]]]):
    """The rows of tasks as one DataFrame, in the order given: each task's labels, ``time``,
    its values, ``status`` (the columns of the first task; every task of a sweep has them)."""
    import pandas as pd

    if not parts:
        return pd.DataFrame()
    _same_columns(parts)
    task0, raw0 = parts[0]
    rows = [len(raw["time"]) for _, raw in parts]
    data: Dict[str, Any] = {}
    for j, (name, _) in enumerate(task0.labels):
        data[name] = np.repeat(np.array([t.labels[j][1] for t, _ in parts]), rows)
    data["time"] = np.concatenate([raw["time"] for _, raw in parts])
    values = np.vstack([raw["values"] for _, raw in parts])
    for j, name in enumerate(raw0["columns"]):
        data[name] = values[:, j]
    data["status"] = [s for _, raw in parts for s in raw["status"]]
    return pd.DataFrame(data)


def _cell(x: Any) -> str:
    """A number as pandas' ``to_csv`` writes it: ``repr`` (the shortest text that reads back to
    the same float64), NaN as an empty cell."""
    if isinstance(x, float):
        return "" if x != x else repr(x)
    return str(x)


def _write_csv(parts: Sequence[Tuple[Task, Dict[str, Any]]], path: Path) -> int:
    """The table of :func:`_table` written as CSV without pandas, byte for byte what
    ``_table(parts).to_csv(index=False)`` writes (tested), in a third of its time and without
    importing pandas (0.3-0.9 s) into the client; the number of rows."""
    import csv

    rows = 0
    with open(path, "w", newline="") as f:
        out = csv.writer(f, lineterminator="\n")
        if parts:
            _same_columns(parts)
            task0, raw0 = parts[0]
            out.writerow([*(k for k, _ in task0.labels), "time", *raw0["columns"], "status"])
        # a label column takes the type numpy gives its values together, as in _table
        labels = [np.array([t.labels[j][1] for t, _ in parts]).tolist() for j in range(len(parts[0][0].labels))] \
            if parts else []
        for i, (t, raw) in enumerate(parts):
            row_labels = [_cell(column[i]) for column in labels]
            numbers = np.column_stack([raw["time"], raw["values"]]).tolist()
            out.writerows([*row_labels, *map(_cell, row), status] for row, status in zip(numbers, raw["status"]))
            rows += len(numbers)
        f.flush()
        os.fsync(f.fileno())
    return rows


class ResultsDir:
    """The results directory of a sweep, written as a unit.

    While the sweep runs, its files are in the staging sibling ``.NAME.partial``: ``tasks/`` holds
    the result of each finished task (``<task id>.npz``: numpy's arrays, float64 bit for bit,
    written to a temporary file and renamed, so that it is whole or absent). :meth:`commit`
    writes the sweep's table (``table.csv`` or ``table.parquet``, rows in task order) and
    ``summary.json`` last
    (``"complete": true``, the tasks' ids and names), then renames the staging directory into
    place; an earlier results directory there is replaced whole. A directory that is neither
    empty nor an earlier results directory (no ``summary.json``) is never replaced.

    A rerun finds the finished tasks in the staging directory, or in the earlier results
    directory of a finished sweep, by their ids."""

    def __init__(self, target: os.PathLike, fmt: str = "csv") -> None:
        if fmt not in ("csv", "parquet"):
            raise ValueError(f'the format is "csv" or "parquet", not {fmt!r}')
        if fmt == "parquet":
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise SweepError("writing Parquet needs pyarrow (pip install pyarrow), or write CSV") from None
        self.target = Path(target)
        if self.target.name in ("", ".", ".."):
            raise SweepError(f"`{target}` cannot be replaced as a whole: name a directory (e.g. `results`)")
        self.fmt = fmt
        self.staging = self.target.with_name(f".{self.target.name}.partial")
        if self.target.exists() or self.target.is_symlink():
            if not self.target.is_dir() or self.target.is_symlink():
                raise SweepError(f"`{self.target}` exists and is not a directory")
            if any(self.target.iterdir()) and not (self.target / SUMMARY).is_file():
                raise SweepError(f"`{self.target}` exists and is not a results directory of a sweep (it is not "
                                 f"empty and has no {SUMMARY}): remove it or choose another directory")
        try:
            (self.staging / TASKS).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SweepError(f"cannot write `{self.staging}`: {e.strerror or e}") from None
        self._lock = self._take_lock()
        self._written: Dict[str, Dict[str, Any]] = {}

    def _take_lock(self):
        import fcntl

        f = open(self.staging / ".lock", "w")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            f.close()
            if e.errno in (errno.EAGAIN, errno.EACCES):
                raise SweepError(f"another sweep is writing `{self.target}` (its staging directory "
                                 f"`{self.staging}` is locked)") from None
            raise
        return f

    def _file(self, task_id: str) -> str:
        return f"{task_id}.npz"

    def done(self, task_id: str) -> bool:
        """Whether the task's result is already here (staging) or in the earlier results."""
        name = self._file(task_id)
        if (self.staging / TASKS / name).is_file():
            return True
        old = self.target / TASKS / name
        if old.is_file() and (self.target / SUMMARY).is_file():
            # a finished sweep's task: carried into this one without running it again
            try:
                os.link(old, self.staging / TASKS / name)
            except OSError:
                shutil.copyfile(old, self.staging / TASKS / name)
            return True
        return False

    def write(self, task_id: str, raw: Dict[str, Any]) -> None:
        """Keep a finished task's result (:func:`solve_inverse`'s arrays, float64 bit for bit):
        written to a temporary file, then renamed, so that it is whole or absent."""
        path = self.staging / TASKS / self._file(task_id)
        temp = path.with_name(f".{task_id}.tmp.npz")
        kept = {"time": np.asarray(raw["time"], dtype=np.float64),
                "values": np.asarray(raw["values"], dtype=np.float64),
                "columns": [str(c) for c in raw["columns"]], "status": [str(c) for c in raw["status"]]}
        np.savez(temp, time=kept["time"], values=kept["values"], columns=np.array(kept["columns"], dtype=str),
                 status=np.array(kept["status"], dtype=str))
        os.replace(temp, path)
        self._written[task_id] = kept

    def read(self, task_id: str) -> Dict[str, Any]:
        """A finished task's result, as written (kept in memory when written by this process:
        the commit does not read back what it just wrote, a millisecond a task)."""
        if task_id in self._written:
            return self._written[task_id]
        with np.load(self.staging / TASKS / self._file(task_id), allow_pickle=False) as z:
            return {"time": z["time"], "values": z["values"], "columns": [str(c) for c in z["columns"]],
                    "status": [str(c) for c in z["status"]]}

    def commit(self, tasks: Sequence[Task], summary: Dict[str, Any]) -> Path:
        """The sweep's table from the tasks' tables in task order, ``summary.json`` last, the
        staging directory renamed into place (an earlier results directory moved aside first
        and removed after). Task files of other sweeps left in the staging are dropped."""
        wanted = {self._file(t.id) for t in tasks}
        for stale in (self.staging / TASKS).iterdir():
            if stale.name not in wanted:
                stale.unlink()
        parts = []
        for t in tasks:
            try:
                parts.append((t, self.read(t.id)))
            except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
                # a file cut short (the machine lost power) or edited: computed again next time
                path = self.staging / TASKS / self._file(t.id)
                path.unlink(missing_ok=True)
                raise SweepError(f"`{path}` (task {t.name}) cannot be read ({e}): removed; run the sweep "
                                 f"again to compute that task anew") from None
        table_file = f"table.{self.fmt}"
        rows = _write_table(parts, self.staging / table_file, self.fmt)
        body = {"complete": True, "table": table_file, "rows": rows, "mollier": __version__,
                "tasks": [{"id": t.id, "name": t.name} for t in tasks]}
        body.update(summary)
        with open(self.staging / SUMMARY, "w") as f:
            json.dump(body, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        (self.staging / ".lock").unlink()
        aside = self.target.with_name(f".{self.target.name}.old")
        had_old = self.target.exists()
        if had_old:
            if aside.exists():
                shutil.rmtree(aside)
            os.replace(self.target, aside)
        try:
            os.replace(self.staging, self.target)
        except OSError:
            if had_old:
                os.replace(aside, self.target)
            raise
        if had_old:
            shutil.rmtree(aside, ignore_errors=True)
        self._lock.close()
        return self.target / table_file

    def close(self) -> None:
        """Let go of the staging directory (kept for a rerun)."""
        self._lock.close()


def _write_table(parts: Sequence[Tuple[Task, Dict[str, Any]]], path: Path, fmt: str) -> int:
    """The tasks' rows as CSV with repr-exact numbers and NaN as an empty cell (as Mollier's
    tables), or Parquet; the number of rows."""
    if fmt != "parquet":
        return _write_csv(parts, path)
    frame = _table(parts)
    frame.to_parquet(path, index=False, engine="pyarrow")
    with open(path, "rb+") as f:
        os.fsync(f.fileno())
    return len(frame)


def read_table(path: os.PathLike, fmt: Optional[str] = None):
    """A table a sweep wrote, read back to the same values: float64 exactly, an empty CSV cell
    as NaN in a numeric column and as an empty text elsewhere."""
    path = Path(path)
    return _read_table(path, fmt or ("parquet" if path.suffix == ".parquet" else "csv"))


def _read_table(path: Path, fmt: str):
    import pandas as pd

    if fmt == "parquet":
        return pd.read_parquet(path)
    exact = {"float_precision": "round_trip"} if int(pd.__version__.split(".")[0]) < 3 else {}
    frame = pd.read_csv(path, keep_default_na=False, na_values=[""], **exact)
    for c in frame.columns:
        if frame[c].dtype == object or str(frame[c].dtype).startswith("str"):
            frame[c] = frame[c].fillna("")
    return frame


@dataclass
class SweepReport:
    """What a run did: the tasks of the sweep, those found finished, those run here, the tasks
    submitted again after a lost worker, and the table written."""

    tasks: int
    skipped: int
    ran: int
    resubmitted: int
    table: Path


def _lost(exc: BaseException) -> bool:
    """Whether a task's error says its worker (or its data) was lost, not that it failed."""
    name = type(exc).__name__
    return name in ("KilledWorker", "CancelledError", "FutureCancelledError", "CommClosedError") or \
        isinstance(exc, (ConnectionError, TimeoutError))


def _closed(client) -> bool:
    """Whether a Dask client has closed: its scheduler lost for longer than its timeout."""
    return getattr(client, "status", "running") in ("closed", "closing")


def _cause(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def run(client, tasks: Sequence[Task], results: ResultsDir, *, retries: int = 3,
        on_done: Optional[Callable[[Task], None]] = None, summary: Optional[Dict[str, Any]] = None,
        batch: Optional[int] = None) -> SweepReport:
    """Run the tasks not finished yet in ``results`` on the Dask ``client`` (``None``: in this
    process, one after another), writing each one's table as it finishes, then commit the
    results directory. A task lost with its worker is submitted again, up to ``retries`` times;
    a task that raises, or is lost more often, stops the sweep with :class:`SweepError` (the
    finished tasks are kept for a rerun). ``on_done(task)`` is called after each task's table is
    written. ``batch``: tasks sent to a worker in one Dask task (consecutive tasks of one model;
    by default as many as leave 4 Dask tasks per worker thread, at most 8), since a Dask task's
    own cost on scheduler, client and worker is that of a few frames' solve; a task's identity,
    file and rows do not depend on it."""
    ids = [t.id for t in tasks]
    if len(set(ids)) != len(ids):
        first = next(t for t in tasks if ids.count(t.id) > 1)
        raise SweepError(f"task {first.name} is in the sweep twice (the same inputs)")
    todo = [t for t in tasks if not results.done(t.id)]
    skipped = len(tasks) - len(todo)
    resubmitted = 0
    if client is None:
        for t in todo:
            try:
                frame = solve_inverse(_ship(t.files), t.criterion, t.time, t.q, t.columns, t.cone, t.static)
            except Exception as e:  # noqa: BLE001 - named in the one message
                raise SweepError(f"task {t.name} failed: {_cause(e)}") from None
            results.write(t.id, frame)
            if on_done:
                on_done(t)
    else:
        resubmitted = _run_dask(client, todo, results, retries, on_done, batch)
    table = results.commit(tasks, {"run": {"tasks": len(tasks), "skipped": skipped, "ran": len(todo),
                                           "resubmitted": resubmitted}, **(summary or {})})
    return SweepReport(len(tasks), skipped, len(todo), resubmitted, table)


def _groups(todo: Sequence[Task], size: int) -> List[List[Task]]:
    """The tasks in order, cut into groups of at most ``size`` consecutive tasks of one model."""
    groups: List[List[Task]] = []
    for t in todo:
        last = groups[-1] if groups else None
        if last and len(last) < size and last[0].files.digest == t.files.digest:
            last.append(t)
        else:
            groups.append([t])
    return groups


#: Frames a Dask task should solve at least: a Dask task's own cost (scheduler, client and
#: worker) is ~5-10 ms of CPU on this machine, a few frames' solve (docs/scale-out.md).
FRAMES_PER_DASK_TASK = 40


class _Threads:
    """The cluster's worker threads (at least 1: workers may be on their way), asked of the
    scheduler at most once a second (a cluster grows and shrinks; a round trip a Dask task
    would cost as much as the Dask task), the last count kept while it cannot be asked."""

    def __init__(self, client) -> None:
        self.client, self.count, self.asked = client, 1, -math.inf

    def __call__(self) -> int:
        now = time.monotonic()
        if now - self.asked >= 1.0:
            self.asked = now
            try:
                self.count = max(1, sum(self.client.nthreads().values()))
            except Exception:  # noqa: BLE001 - a scheduler being lost: the sweep's loop says so
                pass
        return self.count


def _group_size(threads: int, todo: Sequence[Task], batch: Optional[int]) -> int:
    """Tasks per Dask task: ``batch``, or by default enough for :data:`FRAMES_PER_DASK_TASK`
    frames, as long as every worker thread still gets 4 Dask tasks."""
    if batch is not None:
        if batch < 1:
            raise ValueError(f"batch is a number of tasks >= 1, not {batch}")
        return batch
    if not todo:
        return 1
    frames = sum(len(t.time) for t in todo) / len(todo)
    return max(1, min(math.ceil(FRAMES_PER_DASK_TASK / max(frames, 1)), len(todo) // (4 * threads)))


def solve_group(shipped: Tuple[str, str, Mapping[str, str]], specs: Sequence[Tuple[Any, ...]]) -> List[Dict[str, Any]]:
    """Several tasks of one model in one Dask task: :func:`solve_inverse` of each ``spec``
    (``(criterion, time, q, columns, cone, static)``), in order. A task that raises gives
    ``{"failed": "Type: message"}`` in its place (a pure function fails the same way again:
    the client stops the sweep naming it)."""
    out: List[Dict[str, Any]] = []
    for spec in specs:
        try:
            out.append(solve_inverse(shipped, *spec))
        except Exception as e:  # noqa: BLE001 - named by the client
            out.append({"failed": _cause(e)})
    return out


def _run_dask(client, todo: Sequence[Task], results: ResultsDir, retries: int,
              on_done: Optional[Callable[[Task], None]], batch: Optional[int] = None) -> int:
    from distributed import as_completed

    run_id = os.urandom(4).hex()  # a run's own keys: never shared with an earlier, released run
    shipped: Dict[str, Any] = {}  # files digest -> the future of the files' task
    generation: Dict[str, int] = {}

    def files_future(files: ModelFiles):
        d = files.digest
        f = shipped.get(d)
        if f is None or f.status in ("cancelled", "error", "lost"):
            generation[d] = generation.get(d, -1) + 1
            # a task holding the text: the scheduler can run it again when every worker is gone
            f = client.submit(_identity, _ship(files), key=f"mollier-files-{d[:16]}-{run_id}-{generation[d]}",
                              pure=False)
            shipped[d] = f
        return f

    attempts: Dict[str, int] = {}
    by_key: Dict[str, List[Task]] = {}

    def key(group: List[Task]) -> str:
        n = attempts.get(group[0].id, 0)
        for t in group:
            attempts[t.id] = attempts.get(t.id, 0) + 1
        # the tasks' ids in the key: the scheduler's task stream tells which tasks ran
        k = f"sweep-{run_id}-{group[0].name}-" + ".".join(t.id[:8] for t in group) + (f"-retry{n}" if n else "")
        by_key[k] = group
        return k

    def submit(groups: Sequence[List[Task]]):
        # one graph for all: one message to the scheduler, not one a Dask task
        specs = [[(t.criterion, t.time, t.q, list(t.columns), t.cone, t.static) for t in g] for g in groups]
        return client.map(solve_group, [files_future(g[0].files) for g in groups], specs,
                          key=[key(g) for g in groups], pure=False, retries=0)

    # the tasks finished since the last look are fetched in one round trip (a result() each
    # waited ~20 ms a task; as_completed's with_results, a gather per task at once, once broke
    # tornado's stream under load, and the lost gather hung the sweep)
    # two Dask tasks in flight a worker thread, more as they finish: a thread never waits for
    # the scheduler between two, and the scheduler gives the next to the thread that is free
    # (Dask places a task with a dependency, the model's files, when it is submitted)
    if not todo:
        return 0
    threads = _Threads(client)
    waiting = list(reversed(_groups(todo, _group_size(threads(), todo, batch))))
    futures = as_completed(submit([waiting.pop() for _ in range(min(len(waiting), 2 * threads()))]))
    resubmitted = 0
    for done in futures.batches():
        finished = [f for f in done if f.status == "finished"]
        try:
            fetched = dict(zip([f.key for f in finished], client.gather(finished))) if finished else {}
        except Exception:  # noqa: BLE001 - one of them was lost meanwhile: each is asked alone
            fetched = {}
        for f in done:
            group = by_key.pop(f.key)
            if f.key in fetched:
                result = fetched.pop(f.key)
            else:
                try:
                    result = f.result()
                except BaseException as e:  # noqa: BLE001 - classified below
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    result = e
            f.release()
            if not isinstance(result, BaseException):
                for t, raw in zip(group, result):
                    if "failed" in raw:
                        for other in list(futures.futures):
                            other.cancel()
                        raise SweepError(f"task {t.name} (id {t.id}) raised: {raw['failed']}")
                    results.write(t.id, raw)
                    if on_done:
                        on_done(t)
                continue
            e, t = result, group[0]
            what = f"task {t.name} (id {t.id})" + (f" and {len(group) - 1} more sent with it" if len(group) > 1 else "")
            if _lost(e) and attempts[t.id] <= retries and not _closed(client):
                try:
                    futures.add(submit([group])[0])
                    resubmitted += len(group)
                    continue
                except Exception as again:  # noqa: BLE001 - the client closed meanwhile, or named below
                    if not _closed(client):
                        raise SweepError(f"{what} could not be submitted again: {_cause(again)}") from None
            if _closed(client):
                # the scheduler is gone and the client gave up reconnecting: nothing more can run
                raise SweepError(f"the scheduler was lost (the client could not reconnect and closed) while "
                                 f"{what} ran: {_cause(e)}; the tasks finished are kept in "
                                 f"{results.staging}: rerun against a scheduler to run only the others") from None
            for other in list(futures.futures):
                other.cancel()
            tries = attempts[t.id]
            why = (f"was lost {tries} time{'s' if tries > 1 else ''} (its worker died, or the cluster "
                   f"forgot it)" if _lost(e) else "raised")
            raise SweepError(f"{what} {why}: {_cause(e)}") from None
        room = 2 * threads() - futures.count()
        if waiting and room > 0:
            sent = [waiting.pop() for _ in range(min(len(waiting), room))]
            try:
                for f in submit(sent):
                    futures.add(f)
            except Exception as e:  # noqa: BLE001 - named in the one message
                why = ("the scheduler was lost (the client could not reconnect and closed)" if _closed(client)
                       else "it could not be submitted")
                raise SweepError(f"task {sent[0][0].name} (id {sent[0][0].id}) did not start: {why}: {_cause(e)}; "
                                 f"the tasks finished are kept in {results.staging}: rerun to run only the "
                                 f"others") from None
    return resubmitted


def _identity(x):
    return x
