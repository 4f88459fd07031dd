"""Throughput of the Dask sweep (examples/sweep_dask.py) on this machine: the same tasks run
sequentially in this process and on LocalClusters of 1 and 2 single-threaded workers; frames per
second of the fastest of `--repeat` runs, and the ratios. The cluster's start is not timed; a
warm-up run ships the files and imports the package on the workers first.

    python crates/mollier-py/benches/sweep_throughput.py [--frames 12 --chunk 3 --repeat 3]
"""

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "examples"))
import sweep_dask  # noqa: E402


def fastest(run, repeat):
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--frames", type=int, default=12)
    p.add_argument("--chunk", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3)
    a = p.parse_args()
    from dask.distributed import Client

    with tempfile.TemporaryDirectory() as d:
        t, q, columns = sweep_dask.shoulder_motion(a.frames, Path(d))
    work = sweep_dask.tasks(sweep_dask.grid([0.0, 20.0], [1.0, 0.8], ["b", "d"]), t, q, a.chunk)
    files = sweep_dask.model_files()
    frames = len(work) * a.chunk
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{len(work)} tasks of {a.chunk} shoulder frames ({frames} frames), fastest of {a.repeat}")
    # sequential: one thread for the frames too, as a worker has
    os.environ["RAYON_NUM_THREADS"] = "1"
    seq = fastest(lambda: sweep_dask.run_sequential(files, work, columns), a.repeat)
    print(f"sequential, this process : {seq:7.2f} s  {frames / seq:6.1f} frames/s")
    results = {}
    for n in (1, 2):
        with sweep_dask.local_cluster(n) as cluster, Client(cluster) as client:
            sweep_dask.run_dask(client, files, work[:n], columns)  # warm-up
            s = fastest(lambda: sweep_dask.run_dask(client, files, work, columns), a.repeat)
        results[n] = s
        print(f"LocalCluster, {n} worker{'s' if n > 1 else ' '}: {s:7.2f} s  {frames / s:6.1f} frames/s  "
              f"({seq / s:.2f}x sequential)")
    print(f"2 workers / 1 worker: {results[1] / results[2]:.2f}x")


if __name__ == "__main__":
    main()
