"""A parameter sweep of the shoulder study on a Dask cluster (docs/scale-out.md).

Hand load x glenoid margin x criterion x motion chunks: every (model variant, chunk of frames)
is one task, submitted to a Dask ``distributed`` cluster — a ``LocalCluster`` by default, or the
scheduler at ``--scheduler tcp://host:8786`` — and the results are gathered into one table, a
row per (variant, frame), written as CSV or, with pyarrow installed, Parquet (``--format
parquet``, or an ``--out`` ending in ``.parquet``).

    python examples/sweep_dask.py --out results/sweep.csv            # LocalCluster, 2 workers
    python examples/sweep_dask.py --out results/sweep.parquet        # the same, as Parquet
    python examples/sweep_dask.py --scheduler tcp://10.0.0.5:8786 --frames 181 --chunk 10

What a worker is sent: the model's files as text (``shoulder.toml`` and the muscle table it
names), once per worker, and per task the variant's three numbers and the chunk's frames. The
worker writes the files into a temporary directory, compiles the variant's model there (once
per worker process) and runs ``Model.inverse``; nothing Rust is pickled. A variant is a change of the model text:

- hand load ``F`` (N): a constant load ``[0, -F, 0]`` (``[loads.hand]``) at the model's
  ``humerus.hand`` (DAS3's hand, lumped onto the humerus with the elbow fixed);
- glenoid margin ``k``: the joint cone's ``margin`` (``k < 1`` asks for a force further inside
  the glenoid rim than its half-angles);
- criterion ``a``-``d`` (van der Helm 1994), the cone imposed.

Each task is a pure function of its inputs, so Dask may run it again after losing a worker and
the gathered table is the same, value for value, as a sequential run of the same tasks.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import re
import sys
import tempfile
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

import mollier

ROOT = Path(__file__).resolve().parents[1]
SHOULDER = ROOT / "models" / "shoulder"

@dataclass(frozen=True)
class Variant:
    """One model variant: hand load (N), glenoid margin (the half-angles' factor), criterion."""

    hand_load: float
    margin: float
    criterion: str

    @property
    def name(self) -> str:
        return f"load{self.hand_load:g}-k{self.margin:g}-{self.criterion}"


@dataclass(frozen=True)
class Chunk:
    """Frames ``start..start+len(time)`` of the motion: times (s) and inputs (frames, inputs)."""

    index: int
    time: np.ndarray
    q: np.ndarray


def model_files(directory: Path = SHOULDER) -> Dict[str, str]:
    """The shoulder model's files as text: what is shipped to the workers."""
    return {name: (directory / name).read_text() for name in ("shoulder.toml", "muscles.csv")}


def variant_text(text: str, v: Variant) -> str:
    """The model text of a variant: the joint cone's margin set, the hand load added."""
    pattern = re.compile(r"^half_angles = \[[^\]]*\].*$", re.M)
    match = pattern.search(text)
    if match is None:
        raise ValueError("the model has no joint cone (`half_angles = [a, b]`)")
    if re.search(r"^margin\s*=", text, re.M):
        raise ValueError("the model's joint cone already has a margin")
    text = text[: match.end()] + f"\nmargin = {v.margin!r}" + text[match.end():]
    if v.hand_load != 0.0:
        if not re.search(r"^hand = \[", text, re.M):
            raise ValueError("the model has no point `humerus.hand`")
        text += f'\n[loads.hand]\nat = "humerus.hand"\nforce = [0, {-v.hand_load!r}, 0]\n'
    return text


def solve_chunk(files: Dict[str, str], variant: Variant, chunk: Chunk, columns: Sequence[str]):
    """One task: the variant's model from its text, load sharing over the chunk's frames
    (static postures, the joint cone imposed). A DataFrame with a row per frame: the variant,
    the chunk, the frame's time, the muscle forces (N), the joint force (N), the stability index
    and the solver's status."""
    import pandas as pd

    model = _compiled(_digest(files), variant.hand_load, variant.margin, files)
    r = model.inverse((chunk.time, chunk.q, list(columns)), variant.criterion, cone=True, static=True,
                      output="numpy")
    frame = pd.DataFrame(r.forces.values, columns=r.forces.columns)
    frame.insert(0, "time", r.forces.time)
    frame.insert(0, "chunk", chunk.index)
    frame.insert(0, "criterion", variant.criterion)
    frame.insert(0, "margin", variant.margin)
    frame.insert(0, "hand_load_N", variant.hand_load)
    frame["joint_force_N"] = r.reactions["joint_force"]
    frame["stability_index"] = r.stability["stability_index"]
    frame["status"] = r.stability.text["status"]
    return frame


def _digest(files: Dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()


_models: "OrderedDict[tuple, mollier.Model]" = OrderedDict()


def _compiled(digest: str, hand_load: float, margin: float, files: Dict[str, str]) -> "mollier.Model":
    """The variant's model, compiled once per worker process (a model is immutable; the
    criterion is not part of it): the files written into a temporary directory, since the model
    names its muscle table by a path relative to itself. The last 8 models are kept."""
    key = (digest, hand_load, margin)
    if key in _models:
        _models.move_to_end(key)
        return _models[key]
    with tempfile.TemporaryDirectory(prefix="mollier-sweep-") as d:
        for name, text in files.items():
            if name != "shoulder.toml":
                (Path(d) / name).write_text(text)
        model_file = Path(d) / "shoulder.toml"
        model_file.write_text(variant_text(files["shoulder.toml"], Variant(hand_load, margin, "b")))
        model = mollier.load(model_file)
    _models[key] = model
    while len(_models) > 8:
        _models.popitem(last=False)
    return model


def shoulder_motion(frames: int, workdir: Path) -> Tuple[np.ndarray, np.ndarray, List[str]]:
    """The abduction study's motion (models/shoulder/abduction.toml, the shoulder rhythm) in
    ``frames`` frames: times, inputs (frames, inputs) in SI, and the inputs' names. Written by
    a one-variant study with the same rhythm, read back from its motion.csv."""
    text = (SHOULDER / "abduction.toml").read_text()
    text = text.replace('model = "shoulder.toml"', f'model = "{(SHOULDER / "shoulder.toml").as_posix()}"')
    text = re.sub(r"^frames = \d+", f"frames = {frames}", text, flags=re.M)
    text = re.sub(r"^criteria = \[[^\]]*\]", 'criteria = ["b"]', text, flags=re.M)
    text = re.sub(r"^joint_cone = \[[^\]]*\]", 'joint_cone = ["with"]', text, flags=re.M)
    study = workdir / "motion-study.toml"
    study.write_text(text)
    out = mollier.study(study, workdir / "motion-study")
    t = out.table("motion.csv", output="numpy")
    return t.time, t.values, t.columns


def tasks(variants: Sequence[Variant], time: np.ndarray, q: np.ndarray, chunk: int) -> List[Tuple[Variant, Chunk]]:
    """Every (variant, chunk of ``chunk`` frames), variants outermost."""
    chunks = [Chunk(i, time[s:s + chunk].copy(), q[s:s + chunk].copy())
              for i, s in enumerate(range(0, len(time), chunk))]
    return [(v, c) for v in variants for c in chunks]


def grid(loads: Sequence[float], margins: Sequence[float], criteria: Sequence[str]) -> List[Variant]:
    """The sweep's variants: every combination."""
    return [Variant(float(f), float(k), c) for f, k, c in itertools.product(loads, margins, criteria)]


def gather(parts) -> "pandas.DataFrame":
    """One table, in task order whatever the order the tasks finished in."""
    import pandas as pd

    return pd.concat(parts, ignore_index=True)


def run_sequential(files: Dict[str, str], work: Sequence[Tuple[Variant, Chunk]], columns: Sequence[str]):
    """The sweep in this process, task after task: the reference for a cluster's run."""
    return gather([solve_chunk(files, v, c, columns) for v, c in work])


def run_dask(client, files: Dict[str, str], work: Sequence[Tuple[Variant, Chunk]], columns: Sequence[str]):
    """The sweep on a Dask cluster: the files scattered once to every worker, a task per
    (variant, chunk), named by the run, the variant and the chunk so that a task run twice
    (after a lost worker) is one result. Dask retries a task whose worker died (``distributed.scheduler.allowed-failures``)."""
    # a run's own keys: a run released while the next one starts never shares a key with it
    run = uuid.uuid4().hex[:8]
    # one piece of data (a dict scattered as such would be one key per file, named by the file)
    [shipped] = client.scatter([files], broadcast=True, hash=False)
    futures = [client.submit(solve_chunk, shipped, v, c, list(columns), key=f"sweep-{run}-{v.name}-chunk{c.index}",
                             pure=False, retries=2)
               for v, c in work]
    return gather(client.gather(futures))


def table_format(out: Path, asked: Optional[str] = None) -> str:
    """``csv`` or ``parquet``: the format asked for, else the one ``out``'s suffix names
    (``.parquet`` or ``.pq``; anything else is CSV)."""
    if asked is not None:
        if asked not in ("csv", "parquet"):
            raise ValueError(f'the format is "csv" or "parquet", not {asked!r}')
        return asked
    return "parquet" if out.suffix.lower() in (".parquet", ".pq") else "csv"


def require_writer(fmt: str) -> None:
    """Stop with what to install when ``fmt`` cannot be written here (Parquet without pyarrow)."""
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise SystemExit("writing Parquet needs pyarrow (pip install pyarrow), or write CSV "
                             "(--format csv, or an --out not ending in .parquet)") from None


def write_table(table, out: Path, fmt: str) -> None:
    """Write the gathered table: CSV with repr-exact numbers and NaN (a failed frame) as an empty
    cell, as Mollier's own tables; or Parquet (pyarrow), which keeps every float64 and the text
    columns' types. Written to a temporary sibling and renamed, so ``out`` is complete or absent."""
    require_writer(fmt)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.partial")
    if fmt == "parquet":
        table.to_parquet(partial, index=False, engine="pyarrow")
    else:
        table.to_csv(partial, index=False, float_format=None, na_rep="")
    partial.replace(out)


def local_cluster(workers: int, **kwargs):
    """A LocalCluster of ``workers`` single-threaded worker processes, each solving its frames
    on one thread (``RAYON_NUM_THREADS=1``): Dask spreads the work, not rayon inside a task."""
    from dask.distributed import LocalCluster

    return LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                        env={"RAYON_NUM_THREADS": "1"}, **kwargs)


def main(argv: Optional[Sequence[str]] = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scheduler", help="address of a Dask scheduler (default: a LocalCluster)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster workers (default 2)")
    p.add_argument("--frames", type=int, default=37, help="frames of the abduction motion (default 37)")
    p.add_argument("--chunk", type=int, default=10, help="frames per task (default 10)")
    p.add_argument("--loads", type=float, nargs="+", default=[0.0, 20.0], help="hand loads, N")
    p.add_argument("--margins", type=float, nargs="+", default=[1.0, 0.8], help="half-angle factors")
    p.add_argument("--criteria", nargs="+", default=["b", "d"], help="criteria a-d")
    p.add_argument("--out", type=Path, default=Path("sweep.csv"),
                   help="the gathered table (CSV; Parquet when it ends in .parquet)")
    p.add_argument("--format", choices=["csv", "parquet"],
                   help="the table's format (default: by the suffix of --out; Parquet needs pyarrow)")
    a = p.parse_args(argv)
    fmt = table_format(a.out, a.format)
    require_writer(fmt)  # before the sweep runs, not after
    from dask.distributed import Client

    with tempfile.TemporaryDirectory() as d:
        time_, q, columns = shoulder_motion(a.frames, Path(d))
    work = tasks(grid(a.loads, a.margins, a.criteria), time_, q, a.chunk)
    files = model_files()
    cluster = None if a.scheduler else local_cluster(a.workers)
    with Client(a.scheduler or cluster) as client:
        start = time.perf_counter()
        table = run_dask(client, files, work, columns)
        wall = time.perf_counter() - start
    if cluster is not None:
        cluster.close()
    write_table(table, a.out, fmt)
    failed = int((table["status"] != "solved").sum())
    print(f"{len(work)} tasks, {len(table)} frames in {wall:.1f} s ({len(table) / wall:.1f} frames/s); "
          f"{failed} not solved; {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
