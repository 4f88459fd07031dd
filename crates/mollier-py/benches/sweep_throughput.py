"""Throughput of the Dask sweep (examples/sweep_dask.py over mollier.sweep) on this machine, and
the per-frame time of a task against the `mollier inverse` command's.

Throughput: the same tasks (2 loads x 2 margins x criteria (b) and (d), `--frames` frames of the
abduction in chunks of `--chunk`) run into a fresh results directory, in alternated rounds:
sequentially in this process (`mollier.sweep.run(None, ...)`), on a LocalCluster of 1 and of 2
single-threaded workers. A busy machine slows the runs of a round alike, so the figures are the
ratios within each round (median, and the range over the rounds). The clusters are started and
warmed (a first run: imports, each variant compiled once per worker) before the rounds. The
sweep's defaults apply (`mollier.sweep.DASK_CONFIG`; consecutive tasks of a model sent as one
Dask task). Each round also counts CPU seconds (Linux's /proc): the sequential run's, and for the
run on 2 workers this process's (client and the LocalCluster's scheduler) and the workers'. They
hardly change with the load of other processes, so `sequential / (all / 2 cores)` says what the
run allows on 2 idle cores (an upper bound: it assumes the two cores are never idle).

Per frame, in alternated rounds: the first task of criterion (b) (`--chunk` frames) in this
process, warm (the median of `--calls` calls of `mollier.sweep.solve_inverse`: the motion's
checks, the load-sharing set-up, the frames and the arrays back), against the command on the
same variant's model over the whole motion (`mollier inverse --static`, one thread: its
timing.json's `ms_per_frame`, the frames' solves, and its wall clock a frame). Build both in the
same profile (`--cli`, or MOLLIER_CLI).

    python crates/mollier-py/benches/sweep_throughput.py [--frames 40 --chunk 10 --rounds 5]
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))
import sweep_dask  # noqa: E402

from mollier import sweep  # noqa: E402


def timed(run):
    start = time.perf_counter()
    run()
    return time.perf_counter() - start


def cpu_s(pid):
    """CPU seconds (user and system) the process `pid` has used (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_timed(run, workers):
    """`run()`'s wall time, and the CPU seconds it cost this process (client, and a
    LocalCluster's scheduler) and the worker processes `workers` (pids). CPU seconds hardly
    change with the other processes' load; the wall time does."""
    before = [cpu_s(p) for p in [os.getpid(), *workers]]
    wall = timed(run)
    used = [cpu_s(p) - b for p, b in zip([os.getpid(), *workers], before)]
    return wall, used[0], sum(used[1:])


def task_ms(task, calls):
    """ms a frame of `task` in this process, warm: the median of `calls` calls."""
    shipped = sweep._ship(task.files)
    sweep.solve_inverse(shipped, task.criterion, task.time, task.q, task.columns)  # compiled once
    times = [timed(lambda: sweep.solve_inverse(shipped, task.criterion, task.time, task.q, task.columns))
             for _ in range(calls)]
    return 1e3 * statistics.median(times) / len(task.time)


def cli_ms(cli, task, time_, q, d):
    """The command on the task's model over the whole motion (`time_`, `q`), one thread: its
    timing.json's ms a frame (the frames' solves) and its wall clock a frame (start-up, the
    checks and the writing included)."""
    for name, text in task.files.texts.items():
        Path(d, name).write_text(text)
    motion = Path(d, "motion.csv")
    with open(motion, "w") as f:
        f.write(",".join(["time", *task.columns]) + "\n")
        for t, row in zip(time_, q):
            f.write(",".join(repr(float(x)) for x in [t, *row]) + "\n")
    out = Path(d, "cli")
    cmd = [str(cli), "inverse", str(Path(d, task.files.main)), "--motion", str(motion), "--criterion",
           task.criterion, "--static", "--out", str(out), "-q"]
    wall = timed(lambda: subprocess.run(cmd, check=True, env={**os.environ, "RAYON_NUM_THREADS": "1"}))
    return json.loads((out / "timing.json").read_text())["ms_per_frame"], 1e3 * wall / len(time_)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=40)
    p.add_argument("--chunk", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=15)
    p.add_argument("--cli", type=Path, default=os.environ.get("MOLLIER_CLI"),
                   help="the mollier command to compare a frame with (same build profile)")
    a = p.parse_args()
    from dask.distributed import Client

    # one thread for the frames in this process too, as a worker has
    os.environ["RAYON_NUM_THREADS"] = "1"
    with tempfile.TemporaryDirectory() as d:
        t, q, columns = sweep_dask.shoulder_motion(a.frames, Path(d))
    work = sweep_dask.tasks(sweep_dask.grid([0.0, 20.0], [1.0, 0.8], ["b", "d"]), t, q, columns, a.chunk)
    frames = sum(len(w.time) for w in work)
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}; {len(work)} tasks of {a.chunk} shoulder frames ({frames} frames), "
          f"{a.rounds} alternated rounds")
    task = next(w for w in work if w.criterion == "b")
    if a.cli:
        ratios = []
        for r in range(a.rounds):
            ms = task_ms(task, a.calls)
            with tempfile.TemporaryDirectory() as d:
                own, wall = cli_ms(a.cli, task, t, q, d)
            ratios.append(ms / own)
            print(f"round {r + 1}: a task of {len(task.time)} frames (b), warm: {ms:.3f} ms a frame; "
                  f"mollier inverse over the {len(t)} frames: {own:.3f} ms a frame (timing.json), "
                  f"{wall:.3f} (wall); task / command {ms / own:.2f}x")
        print(f"task / command's ms a frame: median {statistics.median(ratios):.2f}x "
              f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x)")
    with tempfile.TemporaryDirectory() as d, \
            sweep_dask.local_cluster(1) as c1, Client(c1) as one, \
            sweep_dask.local_cluster(2) as c2, Client(c2) as two:
        out = iter(Path(d, f"run{i}") for i in range(10**6))
        for client in (one, two):  # warm-up: imports, each variant compiled on each worker
            sweep.run(client, work, sweep.ResultsDir(next(out)))
        sweep.run(None, work, sweep.ResultsDir(next(out)))
        rows, cpus = [], []
        pids = list(two.run(os.getpid).values())
        for r in range(a.rounds):
            seq, seq_cpu, _ = cpu_timed(lambda: sweep.run(None, work, sweep.ResultsDir(next(out))), [])
            w1 = timed(lambda: sweep.run(one, work, sweep.ResultsDir(next(out))))
            w2, client_cpu, workers_cpu = cpu_timed(lambda: sweep.run(two, work, sweep.ResultsDir(next(out))), pids)
            rows.append((seq, w1, w2))
            cpus.append((seq_cpu, client_cpu, workers_cpu))
            print(f"round {r + 1}: sequential {seq:.2f} s ({frames / seq:.0f} frames/s), 1 worker {w1:.2f} s, "
                  f"2 workers {w2:.2f} s: 2 workers / sequential {seq / w2:.2f}x, / 1 worker {w1 / w2:.2f}x; "
                  f"CPU s: sequential {seq_cpu:.2f}, 2 workers' run: client and scheduler {client_cpu:.2f}, "
                  f"workers {workers_cpu:.2f}; load average {os.getloadavg()[0]:.1f}", flush=True)
    for name, k in (("1 worker / sequential", 1), ("2 workers / sequential", 2)):
        ratios = [row[0] / row[k] for row in rows]
        print(f"{name}: median {statistics.median(ratios):.2f}x (rounds {min(ratios):.2f}-{max(ratios):.2f}x)")
    ratios = [row[1] / row[2] for row in rows]
    print(f"2 workers / 1 worker: median {statistics.median(ratios):.2f}x "
          f"(rounds {min(ratios):.2f}-{max(ratios):.2f}x)")
    # what the CPU seconds allow on 2 idle cores: the sequential run's CPU against the 2
    # workers' run's CPU shared by the two cores (an upper bound: it assumes perfect packing)
    bound = [c[0] / ((c[1] + c[2]) / 2) for c in cpus]
    print(f"CPU s a run: sequential {statistics.median([c[0] for c in cpus]):.2f}; 2 workers' run: client and "
          f"scheduler {statistics.median([c[1] for c in cpus]):.2f}, workers "
          f"{statistics.median([c[2] for c in cpus]):.2f}; sequential / (all / 2 cores): median "
          f"{statistics.median(bound):.2f}x (rounds {min(bound):.2f}-{max(bound):.2f}x)")


if __name__ == "__main__":
    main()
