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
"""

import argparse
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--myo-sim", required=True, help="the myo_sim folder (arm/myoarm.xml inside)")
    ap.add_argument("--repetitions", type=int, default=7)
    ap.add_argument("--steps", type=int, default=2000)
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
    fastest, median = min(per_step), statistics.median(per_step)
    dt = m.opt.timestep
    print(f"MuJoCo {mujoco.__version__} MyoArm: nq {m.nq}, muscles {m.nu}, tendons {m.ntendon}, step {dt * 1e3:g} ms")
    print(f"per step: fastest {fastest * 1e6:.1f} us, median {median * 1e6:.1f} us")
    print(f"real time: {dt / fastest:.1f}x (fastest), {dt / median:.1f}x (median); "
          f"per step per muscle {fastest * 1e6 / m.nu:.2f} us")


if __name__ == "__main__":
    sys.exit(main())
