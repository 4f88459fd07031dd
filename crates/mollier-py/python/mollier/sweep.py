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

Runs with ``client=None`` run the tasks in this process, one after the other (the reference a
cluster's run is compared with).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
import zipfile
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import Model, __version__, load

__all__ = ["ModelFiles", "ResultsDir", "SweepError", "SweepReport", "Task", "compiled", "run", "solve_inverse"]

SUMMARY = "summary.json"
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


def _table(parts: Sequence[Tuple[Task, Dict[str, Any]]]):
    """The rows of tasks as one DataFrame, in the order given: each task's labels, ``time``,
    its values, ``status`` (the columns of the first task; every task of a sweep has them)."""
    import pandas as pd

    if not parts:
        return pd.DataFrame()
    task0, raw0 = parts[0]
    for t, raw in parts:
        if list(raw["columns"]) != list(raw0["columns"]) or [k for k, _ in t.labels] != [k for k, _ in task0.labels]:
            raise SweepError(f"task {t.name} has other columns than task {task0.name}: one table cannot hold both")
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
        np.savez(temp, time=np.asarray(raw["time"], dtype=np.float64),
                 values=np.asarray(raw["values"], dtype=np.float64),
                 columns=np.array(raw["columns"], dtype=str), status=np.array(raw["status"], dtype=str))
        os.replace(temp, path)

    def read(self, task_id: str) -> Dict[str, Any]:
        """A finished task's result, as written."""
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
        table = _table(parts)
        table_file = f"table.{self.fmt}"
        _write_table(table, self.staging / table_file, self.fmt)
        body = {"complete": True, "table": table_file, "rows": len(table), "mollier": __version__,
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


def _write_table(frame, path: Path, fmt: str) -> None:
    """CSV with repr-exact numbers and NaN as an empty cell (as Mollier's tables), or Parquet."""
    if fmt == "parquet":
        frame.to_parquet(path, index=False, engine="pyarrow")
    else:
        frame.to_csv(path, index=False, float_format=None, na_rep="")
    with open(path, "rb+") as f:
        os.fsync(f.fileno())


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
        on_done: Optional[Callable[[Task], None]] = None, summary: Optional[Dict[str, Any]] = None) -> SweepReport:
    """Run the tasks not finished yet in ``results`` on the Dask ``client`` (``None``: in this
    process, one after another), writing each one's table as it finishes, then commit the
    results directory. A task lost with its worker is submitted again, up to ``retries`` times;
    a task that raises, or is lost more often, stops the sweep with :class:`SweepError` (the
    finished tasks are kept for a rerun). ``on_done(task)`` is called after each task's table is
    written."""
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
        resubmitted = _run_dask(client, todo, results, retries, on_done)
    table = results.commit(tasks, {"run": {"tasks": len(tasks), "skipped": skipped, "ran": len(todo),
                                           "resubmitted": resubmitted}, **(summary or {})})
    return SweepReport(len(tasks), skipped, len(todo), resubmitted, table)


def _run_dask(client, todo: Sequence[Task], results: ResultsDir, retries: int,
              on_done: Optional[Callable[[Task], None]]) -> int:
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
    by_key: Dict[str, Task] = {}

    def submit(t: Task):
        n = attempts.get(t.id, 0)
        attempts[t.id] = n + 1
        key = f"sweep-{run_id}-{t.name}-{t.id[:8]}" + (f"-retry{n}" if n else "")
        by_key[key] = t
        return client.submit(solve_inverse, files_future(t.files), t.criterion, t.time, t.q, list(t.columns),
                             t.cone, t.static, key=key, pure=False, retries=0)

    # the tasks finished since the last look are fetched in one round trip (a result() each
    # waited ~20 ms a task; as_completed's with_results, a gather per task at once, once broke
    # tornado's stream under load, and the lost gather hung the sweep)
    futures = as_completed([submit(t) for t in todo])
    resubmitted = 0
    for batch in futures.batches():
        finished = [f for f in batch if f.status == "finished"]
        try:
            fetched = dict(zip([f.key for f in finished], client.gather(finished))) if finished else {}
        except Exception:  # noqa: BLE001 - one of them was lost meanwhile: each is asked alone
            fetched = {}
        for f in batch:
            t = by_key.pop(f.key)
            if f.key in fetched:
                result = fetched.pop(f.key)
            else:
                try:
                    result = f.result()
                except BaseException as e:  # noqa: BLE001 - classified below
                    if isinstance(e, KeyboardInterrupt):
                        raise
                    result = e
            if not isinstance(result, BaseException):
                f.release()
                results.write(t.id, result)
                if on_done:
                    on_done(t)
                continue
            f.release()
            e = result
            if _lost(e) and attempts[t.id] <= retries and not _closed(client):
                try:
                    futures.add(submit(t))
                    resubmitted += 1
                    continue
                except Exception as again:  # noqa: BLE001 - the client closed meanwhile, or named below
                    if not _closed(client):
                        raise SweepError(f"task {t.name} (id {t.id}) could not be submitted again: "
                                         f"{_cause(again)}") from None
            if _closed(client):
                # the scheduler is gone and the client gave up reconnecting: nothing more can run
                raise SweepError(f"the scheduler was lost (the client could not reconnect and closed) while task "
                                 f"{t.name} (id {t.id}) ran: {_cause(e)}; the tasks finished are kept in "
                                 f"{results.staging}: rerun against a scheduler to run only the others") from None
            for other in list(futures.futures):
                other.cancel()
            tries = attempts[t.id]
            why = (f"was lost {tries} time{'s' if tries > 1 else ''} (its worker died, or the cluster "
                   f"forgot it)" if _lost(e) else "raised")
            raise SweepError(f"task {t.name} (id {t.id}) {why}: {_cause(e)}") from None
    return resubmitted


def _identity(x):
    return x
