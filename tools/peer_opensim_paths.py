#!/usr/bin/env python3
"""Reference data from OpenSim itself for Mollier's posture-dependent path points
(MovingPathPoint, ConditionalPathPoint; crates/mollier-osim/tests/opensim_path_points.rs).

    tools/fetch-opensim-models                     # .cache/opensim-models, with PROVENANCE
    venv/bin/python tools/peer_opensim_paths.py [--models .cache/opensim-models]

Run once; its output, crates/mollier-osim/tests/data/opensim_path_points.json, is committed
(the models are not: their repository has no licence file; their SHA-256 is recorded). For
gait2354, gait2392 and the wrist model of OpenSim's collection, every muscle with a moving or
conditional path point: its length (m) and -dL/dq (m, central differences of OpenSim's lengths,
h = 1e-6, what Mollier's transfer functions are) about every coordinate sampled, at 12 random
postures drawn uniformly over the whole range of every coordinate that is neither locked, nor
coupled (a coupled coordinate is set from its CoordinateCouplerConstraint, as OpenSim's assembly
makes it), nor a translation of a joint on ground (a rigid motion of the whole model, on which no
length depends: held at its default). A posture where a sampled coordinate lies within 1e-5 of a
conditional point's range bound (where OpenSim's length jumps) is drawn again.

Python 3.11, opensim 4.6 (PyPI). Random postures use a fixed seed.
"""

import argparse
import datetime
import hashlib
import json
import os
import random
import sys

import opensim as osim

from peer_opensim import rounded  # 12 significant digits

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates", "mollier-osim", "tests", "data", "opensim_path_points.json")
MODELS = ["gait2354_simbody.osim", "gait2392_thelen2003muscle.osim", "wrist.osim"]


def couplers(model):
    """(dependent, independent, function, scale) of each CoordinateCouplerConstraint."""
    out = []
    cs = model.getConstraintSet()
    for i in range(cs.getSize()):
        c = osim.CoordinateCouplerConstraint.safeDownCast(cs.get(i))
        if c is None:
            continue
        ind = c.getIndependentCoordinateNames()
        out.append((c.getDependentCoordinateName(), ind.get(0), c.getFunction(), osim.PropertyHelper.getValueDouble(c.getPropertyByName("scale_factor"))))
    return out


def special_points(model):
    """Muscles with a moving or conditional path point, and the conditional points' (coordinate,
    range) where OpenSim's length jumps."""
    muscles, bounds = [], []
    for i in range(model.getMuscles().getSize()):
        m = model.getMuscles().get(i)
        pts = m.getGeometryPath().getPathPointSet()
        special = False
        for j in range(pts.getSize()):
            p = pts.get(j)
            if p.getConcreteClassName() == "MovingPathPoint":
                special = True
            c = osim.ConditionalPathPoint.safeDownCast(p)
            if c is not None:
                special = True
                bounds.append((c.getCoordinate().getName(), c.get_range(0), c.get_range(1)))
        if special:
            muscles.append(m)
    return muscles, bounds


def sampled(model):
    """The coordinates a posture draws: unlocked, not coupled, not a translation on ground."""
    dependent = {d for d, _, _, _ in couplers(model)}
    out = []
    cset = model.getCoordinateSet()
    for i in range(cset.getSize()):
        c = cset.get(i)
        on_ground = c.getJoint().getParentFrame().findBaseFrame().getName() == "ground"
        translation = c.getMotionType() == osim.Coordinate.Translational
        if c.getDefaultLocked() or c.getName() in dependent or (on_ground and translation):
            continue
        out.append(c.getName())
    return out


def set_posture(model, state, q):
    """Every coordinate from `q` (name -> value), coupled ones from their couplers."""
    q = dict(q)
    for _ in range(3):
        for dep, ind, f, s in couplers(model):
            v = osim.Vector(1, q[ind])
            q[dep] = s * f.calcValue(v)
    cset = model.getCoordinateSet()
    for i in range(cset.getSize()):
        c = cset.get(i)
        c.setValue(state, q[c.getName()], False)
    model.realizePosition(state)
    return q


def reference(path, n=12, seed=35):
    model = osim.Model(path)
    state = model.initSystem()
    cset = model.getCoordinateSet()
    names = [cset.get(i).getName() for i in range(cset.getSize())]
    muscles, bounds = special_points(model)
    free = sampled(model)
    rng = random.Random(seed)
    postures, redrawn = [], 0
    while len(postures) < n:
        q = {c: cset.get(c).getDefaultValue() for c in names}
        for c in free:
            co = cset.get(c)
            q[c] = rng.uniform(co.getRangeMin(), co.getRangeMax())
        if any(c in free and min(abs(q[c] - lo), abs(q[c] - hi)) < 1e-5 for c, lo, hi in bounds):
            redrawn += 1
            continue
        full = set_posture(model, state, q)
        lengths = [m.getLength(state) for m in muscles]
        h = 1e-6
        dl = [[0.0] * len(free) for _ in muscles]
        for i, c in enumerate(free):
            side = []
            for sgn in (1.0, -1.0):
                moved = dict(q)
                moved[c] = q[c] + sgn * h
                set_posture(model, state, moved)
                side.append([m.getLength(state) for m in muscles])
            for j in range(len(muscles)):
                dl[j][i] = -(side[0][j] - side[1][j]) / (2.0 * h)
        postures.append({"q": [full[c] for c in names], "lengths": lengths, "minus_dl_dq": dl})
        print(f"{os.path.basename(path)}: posture {len(postures)}/{n}", file=sys.stderr)
    return {"coordinates": names, "sampled": free, "muscles": [m.getName() for m in muscles],
            "postures": postures, "postures_drawn_again": redrawn,
            "sha256": hashlib.sha256(open(path, "rb").read()).hexdigest()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--models", default=os.path.join(REPO, ".cache", "opensim-models"))
    args = ap.parse_args()
    osim.Logger.removeFileSink()
    out = {"provenance": {
        "opensim": osim.GetVersionAndDate(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 tools/peer_opensim_paths.py",
        "models": "opensim-org/opensim-models at the commit of tools/fetch-opensim-models (not in this repository)",
    }, "models": {}}
    for f in MODELS:
        out["models"][f] = reference(os.path.join(args.models, f))
    with open(OUT, "w") as fh:
        json.dump(rounded(out), fh)


if __name__ == "__main__":
    main()
