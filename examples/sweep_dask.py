"""A parameter sweep of the shoulder study on a Dask cluster (docs/scale-out.md).

Hand load x glenoid margin x criterion x motion chunks: every (model variant, chunk of frames)
is one task, submitted to a Dask ``distributed`` cluster — a ``LocalCluster`` by default, or the
scheduler at ``--scheduler tcp://host:8786`` — by :mod:`mollier.sweep`, which writes each
finished task's rows at once into the results directory ``--out`` (staging ``.NAME.partial``)
and, when all are in, the sweep's table (``table.csv``, or ``table.parquet`` with ``--format
parquet``; pyarrow) and ``summary.json`` last. A rerun of the same sweep runs only the tasks
not finished yet; every worker lost mid-sweep costs the tasks they held, not the sweep.

    python examples/sweep_dask.py --out results/sweep                 # LocalCluster, 2 workers
    python examples/sweep_dask.py --scheduler tcp://10.0.0.5:8786 --frames 181 --chunk 10 --out results/sweep

What a worker is sent: per model variant, its files as text (``shoulder.toml`` edited for the
variant and the muscle table it names) as a keyed task of their own, and per task the
criterion and the chunk's frames. The worker compiles a variant's model once per process and
runs ``Model.inverse``; nothing Rust is pickled. A variant is a change of the model text:

- hand load ``F`` (N): a constant load ``[0, -F, 0]`` (``[loads.hand]``) at the model's
  ``humerus.hand`` (DAS3's hand, lumped onto the humerus with the elbow fixed);
- glenoid margin ``k``: the joint cone's ``margin`` (``k < 1`` asks for a force further inside
  the glenoid rim than its half-angles);
- criterion ``a``-``d`` (van der Helm 1994), the cone imposed.
"""

from __future__ import annotations

import argparse
import itertools
import logging
import re
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List, Optional, Sequence, Tuple

import numpy as np

import mollier
from mollier.sweep import DASK_CONFIG, ModelFiles, ResultsDir, SweepError, Task, run

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


def model_files(directory: Path = SHOULDER) -> ModelFiles:
    """The shoulder model's files as text (``shoulder.toml`` and the muscle table it names)."""
    return ModelFiles("shoulder.toml",
                      {name: (directory / name).read_text() for name in ("shoulder.toml", "muscles.csv")})


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


def variant_files(base: ModelFiles, v: Variant) -> ModelFiles:
    """The variant's model: the base model's files with its model text changed."""
    return ModelFiles(base.main, {**base.texts, base.main: variant_text(base.texts[base.main], v)})


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


def tasks(variants: Sequence[Variant], time: np.ndarray, q: np.ndarray, columns: Sequence[str], chunk: int,
          base: Optional[ModelFiles] = None) -> List[Task]:
    """Every (variant, chunk of ``chunk`` frames), variants outermost: a task each, its rows
    labelled by the variant's parameters and the chunk's index."""
    base = base or model_files()
    out = []
    for v in variants:
        files = variant_files(base, v)
        for i, s in enumerate(range(0, len(time), chunk)):
            out.append(Task(f"{v.name}-chunk{i}", files, v.criterion, time[s:s + chunk].copy(), q[s:s + chunk].copy(),
                            tuple(columns), labels=(("hand_load_N", v.hand_load), ("margin", v.margin),
                                                    ("criterion", v.criterion), ("chunk", i))))
    return out


def grid(loads: Sequence[float], margins: Sequence[float], criteria: Sequence[str]) -> List[Variant]:
    """The sweep's variants: every combination."""
    return [Variant(float(f), float(k), c) for f, k, c in itertools.product(loads, margins, criteria)]


def local_cluster(workers: int, **kwargs):
    """A LocalCluster of ``workers`` single-threaded worker processes, each solving its frames
    on one thread (``RAYON_NUM_THREADS=1``): Dask spreads the work, not rayon inside a task.
    Started with :data:`mollier.sweep.DASK_CONFIG` (the scheduler and the nannies read it at
    their start and hand it to the workers)."""
    import dask
    from dask.distributed import LocalCluster

    with dask.config.set(DASK_CONFIG):
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
    p.add_argument("--retries", type=int, default=3,
                   help="times a task lost with its worker is submitted again (default 3)")
    p.add_argument("--out", type=Path, default=Path("sweep"),
                   help="the results directory (table.csv or table.parquet, summary.json, tasks/)")
    p.add_argument("--format", choices=["csv", "parquet"], default="csv",
                   help="the tables' format (default csv; Parquet needs pyarrow)")
    a = p.parse_args(argv)
    try:
        results = ResultsDir(a.out, a.format)  # before the sweep runs: a directory it may write
        with tempfile.TemporaryDirectory() as d:
            time_, q, columns = shoulder_motion(a.frames, Path(d))
        work = tasks(grid(a.loads, a.margins, a.criteria), time_, q, columns, a.chunk)
        from dask.distributed import Client

        # a lost scheduler is reported in one line of the sweep's own (below); Dask's client
        # logs the closed connection at INFO with the exception's traceback when a message was
        # on its way at that moment, which says nothing more
        logging.getLogger("distributed.batched").setLevel(logging.WARNING)
        start = time.perf_counter()
        if a.scheduler:
            with Client(a.scheduler, timeout="30s") as client:
                report = run(client, work, results, retries=a.retries)
        else:
            with local_cluster(a.workers) as cluster, Client(cluster) as client:
                report = run(client, work, results, retries=a.retries)
        wall = time.perf_counter() - start
    except (SweepError, mollier.ModelError, OSError) as e:
        print(f"sweep_dask: {e}", file=sys.stderr)
        return 1
    print(f"{report.tasks} tasks: {report.skipped} already done, {report.ran} run "
          f"({report.resubmitted} submitted again after a lost worker) in {wall:.1f} s; {report.table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
