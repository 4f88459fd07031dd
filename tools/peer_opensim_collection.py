#!/usr/bin/env python3
"""Reference muscle paths from OpenSim itself over every muscled model of OpenSim's collection,
for crates/mollier-osim/tests/opensim_collection.rs (the conformance of `mollier import`).

    tools/fetch-opensim-models                                  # .cache/opensim-models
    python tools/peer_opensim_collection.py [--models .cache/opensim-models]

Run once; its output, crates/mollier-osim/tests/data/opensim_collection.json, is committed (the
models are not: their repository has no licence file; their SHA-256 and the fetched commit are
recorded). For each model of MODELS (tests/opensim_models.rs's list), POSTURES postures: the default, then every free coordinate (neither locked nor set by
a CoordinateCouplerConstraint) drawn uniformly over its whole range, fixed seed per model; the
coupled coordinates from their couplers (exact, no assembly); coordinates unclamped, so that a
central difference at a range's end is not one-sided. A posture with a coordinate within 1e-5 of
a ConditionalPathPoint's range bound (where OpenSim's length jumps) is drawn again. At each,
every muscle's length (m) and -dL/dq (central differences of OpenSim's lengths, h = 1e-6; m/rad
or m/m), which is what Mollier's transfer functions are, about the coordinates the muscle spans:
those whose -dL/dq exceeds SPAN at one posture at least (below it, the test compares Mollier's
moment arm with zero). Also every body's origin and every marker in ground (m), the only check
of the two models without muscles (the double pendulum, the jumper). Numbers to 12 significant
digits.

Python 3.11, opensim 4.6 (PyPI).
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import re
import sys

import opensim as osim

from peer_opensim import rounded  # 12 significant digits
from peer_opensim_paths import couplers, set_posture

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates", "mollier-osim", "tests", "data", "opensim_collection.json")
MODELS = [
    "arm26.osim",
    "leg6dof9musc.osim",
    "gait10dof18musc.osim",
    "gait2354_simbody.osim",
    "subject01_simbody.osim",
    "gait2392_thelen2003muscle.osim",
    "Rajagopal2016.osim",
    "wrist.osim",
    "Tug_of_War.osim",
    "FullBodyModel_Hamner2010_v2_0.osim",
    "SoccerKickingModel.osim",
    "leg39.osim",
    # added last, the seeds above kept: the double pendulum has no muscles
    "double_pendulum.osim",
    "DynamicJumperModel.osim",
]
POSTURES = 12
H = 1e-6
# a coordinate a muscle spans: |-dL/dq| above this at one posture (m/rad); the rigid motions of a
# model on ground give round-off of about 1e-9 at h = 1e-6
SPAN = 1e-7


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def conditional_bounds(model):
    """(coordinate, bound) of every ConditionalPathPoint, where OpenSim's length jumps."""
    out = []
    for i in range(model.getMuscles().getSize()):
        pts = model.getMuscles().get(i).getGeometryPath().getPathPointSet()
        for j in range(pts.getSize()):
            c = osim.ConditionalPathPoint.safeDownCast(pts.get(j))
            if c is not None:
                out += [(c.getCoordinate().getName(), c.get_range(0)), (c.getCoordinate().getName(), c.get_range(1))]
    return out


def reference(path, seed):
    model = osim.Model(path)
    cset = model.getCoordinateSet()
    for i in range(cset.getSize()):
        cset.get(i).setDefaultClamped(False)
    state = model.initSystem()
    names = [cset.get(i).getName() for i in range(cset.getSize())]
    dependent = {d for d, _, _, _ in couplers(model)}
    free = [n for n in names if not cset.get(n).getDefaultLocked() and n not in dependent]
    muscles = model.getMuscles()
    mnames = [muscles.get(k).getName() for k in range(muscles.getSize())]
    bounds = conditional_bounds(model)
    bodies = [model.getBodySet().get(i) for i in range(model.getBodySet().getSize())]
    markers = [model.getMarkerSet().get(i) for i in range(model.getMarkerSet().getSize())]

    def points():
        """Every body's origin, then every marker, in ground (m), x y z each."""
        out = []
        for b in bodies:
            out += list(b.getPositionInGround(state).to_numpy())
        for mk in markers:
            out += list(mk.getLocationInGround(state).to_numpy())
        return [float(v) for v in out]

    def lengths_at(q):
        full = set_posture(model, state, q)
        return full, [muscles.get(k).getLength(state) for k in range(len(mnames))]

    rng = random.Random(seed)
    postures, redrawn = [], 0
    while len(postures) < POSTURES:
        q = {n: cset.get(n).getDefaultValue() for n in names}
        if postures:
            for n in free:
                c = cset.get(n)
                q[n] = rng.uniform(c.getRangeMin(), c.getRangeMax())
        full, lengths = lengths_at(q)
        if postures and any(abs(full[c] - b) < 1e-5 for c, b in bounds):
            redrawn += 1
            continue
        where = points()
        dl = [[0.0] * len(free) for _ in mnames]
        for i, n in enumerate(free):
            up = lengths_at({**q, n: q[n] + H})[1]
            down = lengths_at({**q, n: q[n] - H})[1]
            for k in range(len(mnames)):
                dl[k][i] = -(up[k] - down[k]) / (2 * H)
        postures.append({"q": [full[n] for n in names], "lengths": lengths, "dl": dl, "points": where})
        print(f"{os.path.basename(path)}: posture {len(postures)} of {POSTURES}", file=sys.stderr)
    spans = [[i for i in range(len(free)) if any(abs(p["dl"][k][i]) > SPAN for p in postures)] for k in range(len(mnames))]
    for p in postures:
        p["minus_dl_dq"] = [[p["dl"][k][i] for i in spans[k]] for k in range(len(mnames))]
        del p["dl"]
    return {
        "file": os.path.basename(path),
        "sha256": sha256(path),
        "coordinates": names,
        "free": free,
        "muscles": mnames,
        "spans": spans,
        "bodies": [b.getName() for b in bodies],
        "markers": [mk.getName() for mk in markers],
        "postures": postures,
        "postures_drawn_again": redrawn,
    }


def fetched_commit(models):
    """The commit of opensim-models that tools/fetch-opensim-models recorded in PROVENANCE."""
    with open(os.path.join(models, "PROVENANCE")) as f:
        m = re.search(r"^commit: ([0-9a-f]{40})$", f.read(), re.M)
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=os.path.join(REPO, ".cache", "opensim-models"))
    args = ap.parse_args()
    osim.Logger.removeFileSink()
    doc = {
        "provenance": {
            "opensim": osim.GetVersionAndDate(),
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "command": "python tools/peer_opensim_collection.py",
            "models": "opensim-org/opensim-models, fetched by tools/fetch-opensim-models (not in this repository)",
            "commit": fetched_commit(args.models),
            "postures": f"{POSTURES} per model: the default, then uniform over each free coordinate's whole range (seed = model index)",
            "moment_arms": f"-dL/dq by central differences of OpenSim's lengths, h = {H}, about the coordinates in spans (|-dL/dq| > {SPAN} at one posture)",
        },
        "models": [reference(os.path.join(args.models, f), seed) for seed, f in enumerate(MODELS)],
    }
    with open(OUT, "w") as f:
        json.dump(rounded(doc), f, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
