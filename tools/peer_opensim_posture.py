#!/usr/bin/env python3
"""OpenSim 4.6 beside Mollier on one posture of a gait model: every muscle's length and its moment
arm about every coordinate, the work of `mollier kinematics` per frame on an imported model.

    python tools/peer_opensim_posture.py [--model FILE] [--json FILE]

FILE defaults to .cache/opensim-models/gait2392_thelen2003muscle.osim (tools/fetch-opensim-models).
Runs `cargo run --release -p mollier-tests --example chain_timing -- --body FILE` (or reads a saved
output of it with --json), whose `df_us` is Mollier's positions and `DF` (every mode's first-order
transfer functions: the muscles' lengths and, negated, their moment arms about every input) at a
fixed posture off the default one, alternating with a step of 0.01 from it. OpenSim is timed the
same way on the same model: the coordinates set to the posture (Mollier's inputs are OpenSim's
coordinates, named `<coordinate>.<mode>`, so the same values; an input of the import that is no
OpenSim coordinate, such as a knee translation OpenSim computes from the knee angle, is named and
left to OpenSim), `assemble` and `realizePosition`, then `getLength` and `computeMomentArm` of
every muscle about every coordinate Mollier has as an input; fastest and median of 14 postures.
Prints both figures and the ratio.

Python 3.11, opensim 4.6 (PyPI).
"""

import argparse
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_pinocchio import mollier  # noqa: E402  (chain_timing, run or read)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = 7


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default=os.path.join(ROOT, ".cache/opensim-models/gait2392_thelen2003muscle.osim"))
    parser.add_argument("--json", help="output of chain_timing --body to use instead of running it")
    args = parser.parse_args()
    try:
        import opensim as osim
    except ImportError as e:
        print(f"SKIPPED: opensim is not importable ({e})")
        return 0
    if not os.path.isfile(args.model):
        print(f"SKIPPED: {args.model} is absent (run tools/fetch-opensim-models)")
        return 0
    args.body = args.model
    run = mollier(args, ROOT)["body"]

    model = osim.Model(args.model)
    state = model.initSystem()
    cset = model.getCoordinateSet()
    muscles = model.getMuscles()
    by_name = {cset.get(i).getName(): cset.get(i) for i in range(cset.getSize())}
    # Mollier's inputs name the coordinate's element and its mode (`pelvis_tilt.rotation`) or
    # the coordinate itself
    # (the import makes a coordinate-driven joint translation, such as the knee's, an input of
    # its own: OpenSim computes it from its coordinate, so it is left out here)
    inputs, others = [], []
    for j, name in enumerate(run["inputs"]):
        key = next((k for k in (name.split(".")[0], name) if k in by_name), None)
        if key is None:
            others.append(name)
        else:
            inputs.append((j, by_name[key]))
    q = run["q"]
    postures = (q, [v + 0.01 for v in q])

    def posture(values):
        for j, c in inputs:
            c.setValue(state, values[j], False)
        model.assemble(state)
        model.realizePosition(state)
        lengths = [muscles.get(i).getLength(state) for i in range(muscles.getSize())]
        arms = [[muscles.get(i).computeMomentArm(state, c) for _, c in inputs] for i in range(muscles.getSize())]
        return lengths, arms

    posture(postures[0])
    samples = []
    for k in range(2 * ROUNDS):
        t = time.perf_counter()
        posture(postures[k % 2])
        samples.append((time.perf_counter() - t) * 1e6)
    fastest, median = min(samples), statistics.median(samples)
    m = run["df_us"]
    print(f"{os.path.basename(args.model)}: {muscles.getSize()} muscles, {len(inputs)} coordinates")
    if others:
        print(f"Mollier's inputs that are no OpenSim coordinate (computed by OpenSim): {', '.join(others)}")
    print(f"Mollier positions + DF (lengths, all moment arms): {m['fastest']:.1f} µs fastest ({m['median']:.1f} median)")
    print(f"OpenSim {osim.__version__} realizePosition, lengths, computeMomentArm: {fastest:.0f} µs fastest ({median:.0f} median)")
    print(f"ratio OpenSim / Mollier: {fastest / m['fastest']:.0f} fastest ({median / m['median']:.0f} median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
