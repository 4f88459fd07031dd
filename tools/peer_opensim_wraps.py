#!/usr/bin/env python3
"""Reference muscle paths from OpenSim itself at random postures over the whole coordinate ranges,
for crates/mollier-osim/tests/opensim_wraps.rs (OpenSim's wrapping rules in Mollier's import).

    venv/bin/python tools/peer_opensim_wraps.py [--models .cache/opensim-models]
                                                [--das3 ../shared/data/das3/das3.osim]

Models: arm26 and Rajagopal2016 from OpenSim's model collection (tools/fetch-opensim-models;
not copied into the repository, their SHA-256 recorded) and DAS3 (external data, likewise). For
each, POSTURES postures: every coordinate that is neither locked nor set by a coupler drawn
uniformly over its whole range (fixed seed), the coupled ones as OpenSim assembles them. At each,
every muscle's length (m) and -dL/dq about every coordinate (central differences of OpenSim's
lengths, h = 1e-6, the coupled coordinates reassembled; m/rad or m/m), which is what Mollier's
transfer functions are. The coordinates are unclamped for the differences. Writes crates/mollier-osim/tests/data/opensim_wraps.json.

Python 3.11, opensim 4.6 (PyPI).
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import sys

import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates", "mollier-osim", "tests", "data", "opensim_wraps.json")
POSTURES = 12
H = 1e-6


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def coupled(model):
    """Names of the coordinates a CoordinateCouplerConstraint sets."""
    out = set()
    cs = model.getConstraintSet()
    for i in range(cs.getSize()):
        c = osim.CoordinateCouplerConstraint.safeDownCast(cs.get(i))
        if c is not None:
            out.add(c.getDependentCoordinateName())
    return out


def reference(path, seed):
    model = osim.Model(path)
    # unclamped: a central difference at the end of a clamped range would be one-sided
    for i in range(model.getCoordinateSet().getSize()):
        model.getCoordinateSet().get(i).setDefaultClamped(False)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    dependent = coupled(model)
    free = [i for i, n in enumerate(names) if not coords.get(i).getDefaultLocked() and n not in dependent]
    muscles = model.getMuscles()
    mnames = [muscles.get(i).getName() for i in range(muscles.getSize())]

    def lengths_at(values):
        for i, v in values.items():
            coords.get(i).setValue(state, v, False)
        model.assemble(state)
        model.realizePosition(state)
        return [muscles.get(k).getLength(state) for k in range(len(mnames))]

    rng = random.Random(seed)
    postures = []
    for p in range(POSTURES):
        values = {}
        for i in free:
            c = coords.get(i)
            lo, hi = c.getRangeMin(), c.getRangeMax()
            values[i] = c.getDefaultValue() if p == 0 else lo + (hi - lo) * rng.random()
        lengths = lengths_at(values)
        q = [coords.get(i).getValue(state) for i in range(len(names))]
        dl = [[0.0] * len(names) for _ in mnames]
        for i in free:
            up = lengths_at({**values, i: values[i] + H})
            down = lengths_at({**values, i: values[i] - H})
            for k in range(len(mnames)):
                dl[k][i] = -(up[k] - down[k]) / (2 * H)
        lengths_at(values)
        postures.append({"q": q, "lengths": lengths, "minus_dl_dq": dl})
        print(f"{os.path.basename(path)}: posture {p + 1} of {POSTURES}", file=sys.stderr)
    return {
        "file": os.path.basename(path),
        "sha256": sha256(path),
        "coordinates": names,
        "free": [names[i] for i in free],
        "muscles": mnames,
        "postures": postures,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(REPO, ".cache", "opensim-models"))
    ap.add_argument("--das3", default=os.path.join(REPO, "..", "shared", "data", "das3", "das3.osim"))
    args = ap.parse_args()
    paths = [os.path.join(args.models, f) for f in ("arm26.osim", "Rajagopal2016.osim")] + [args.das3]
    models = [reference(p, seed) for seed, p in enumerate(paths)]
    doc = {
        "provenance": {
            "opensim": osim.GetVersionAndDate(),
            "date": datetime.date.today().isoformat(),
            "command": "venv/bin/python tools/peer_opensim_wraps.py",
            "postures": f"{POSTURES} per model: the default, then uniform over each free coordinate's whole range (seed = model index)",
            "moment_arms": f"-dL/dq by central differences of OpenSim's lengths, h = {H}",
        },
        "models": models,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
