#!/usr/bin/env python3
"""Peer timing for forward dynamics with muscles: MuJoCo's MyoArm (38 DOF, 63 muscles, 2 ms
steps), in the same session as `cargo bench -p mollier --bench forward`, for the ratio in
docs/performance.md ("Forward dynamics with Hill muscles").

    python3 -m venv /tmp/peer && /tmp/peer/bin/pip install mujoco==4.0.0
    # MyoArm's model: myo_sim (github.com/MyoHub/myo_sim, Apache-2.0), the folder MyoSuite's
    # wheel expects beside its assets; not part of this repository
    /tmp/peer/bin/python tools/peer_mujoco_myoarm.py --myo-sim PATH/TO/myo_sim

Constant excitations of 0.1 for every muscle from the model's default state; each repetition
times 2000 steps of `mj_step` after 200 steps of warm-up; prints the fastest and the median
repetition per step. Exits 0 with a SKIPPED line when MuJoCo or the model is not there.

With `--mollier BENCH` (the binary of `cargo bench -p mollier --bench forward_realtime
--no-run`, arguments after `--mollier-args`), each of `--rounds` rounds times MuJoCo, then the
shoulder's error-controlled flexion (`BENCH --rounds R --no-frames`, R the repetitions), in
alternation, and prints per round and at the end (median and range) Mollier's real-time factor
over MuJoCo's: each side's fastest of as many repetitions, MuJoCo's after its warm-up steps,
Mollier's in one process (its first run, with the process's first touches of its memory, is
rarely the fastest). `--mollier-runs 1` times one Mollier run a round against MuJoCo's fastest
repetition, as the script did before.
"""

import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--myo-sim", required=True, help="the myo_sim folder (arm/myoarm.xml inside)")
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--mollier", help="the forward_realtime bench binary, run in alternation")
    ap.add_argument("--mollier-args", default="", help="its further arguments (one string)")
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--mollier-runs", type=int, help="Mollier's runs a round (default: --repetitions)")
    args = ap.parse_args()
    try:
        import mujoco
    except ImportError:
        print("SKIPPED: peer_mujoco_myoarm: the `mujoco` package is not installed")
        return
    path = os.path.join(args.myo_sim, "arm", "myoarm.xml")
    if not os.path.exists(path):
        print(f"SKIPPED: peer_mujoco_myoarm: {path} not found")
        return
    m = mujoco.MjModel.from_xml_path(path)
    d = mujoco.MjData(m)
    dt = m.opt.timestep
    print(f"MuJoCo {mujoco.__version__} MyoArm: nq {m.nq}, muscles {m.nu}, tendons {m.ntendon}, step {dt * 1e3:g} ms")
    if args.mollier:
        return alternate(args, m, d, dt)
    per_step = time_mujoco(m, d, args)
    fastest, median = min(per_step), statistics.median(per_step)
    print(f"per step: fastest {fastest * 1e6:.1f} us, median {median * 1e6:.1f} us")
    print(f"real time: {dt / fastest:.1f}x (fastest), {dt / median:.1f}x (median); "
          f"per step per muscle {fastest * 1e6 / m.nu:.2f} us")


def time_mujoco(m, d, args):
    """Seconds per `mj_step`, one value per repetition."""
    import mujoco

    per_step = []
    for _ in range(args.repetitions):
        mujoco.mj_resetData(m, d)
        d.ctrl[:] = 0.1
        for _ in range(200):
            mujoco.mj_step(m, d)
        t0 = time.perf_counter()
        for _ in range(args.steps):
            mujoco.mj_step(m, d)
        per_step.append((time.perf_counter() - t0) / args.steps)
    return per_step


def alternate(args, m, d, dt):
    """Rounds of MuJoCo then Mollier's bench; the ratios of their real-time factors."""
    runs = args.mollier_runs or args.repetitions
    cmd = [args.mollier, "--rounds", str(runs), "--no-frames", *shlex.split(args.mollier_args)]
    ratios, ours, theirs = [], [], []
    for r in range(args.rounds):
        peer = dt / min(time_mujoco(m, d, args))
        out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
        found = re.search(r"^real time: ([0-9.]+)x integration alone", out, re.M)
        if not found:
            sys.exit(f"no `real time:` line from {cmd}:\n{out}")
        mine = float(found.group(1))
        detail = next((line for line in out.splitlines() if line.startswith("round 0:")), "")
        print(f"round {r}: MuJoCo {peer:.1f}x real time, Mollier {mine:.1f}x, ratio {mine / peer:.2f}  [{detail}]")
        ratios.append(mine / peer)
        ours.append(mine)
        theirs.append(peer)
    print(f"Mollier / MuJoCo real-time factor: median {statistics.median(ratios):.2f} "
          f"(range {min(ratios):.2f}-{max(ratios):.2f}) over {args.rounds} rounds; "
          f"Mollier {min(ours):.1f}-{max(ours):.1f}x, MuJoCo {min(theirs):.1f}-{max(theirs):.1f}x")


if __name__ == "__main__":
    sys.exit(main())
