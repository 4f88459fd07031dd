#!/usr/bin/env python3
"""OpenSim's DAS3 elbow as the reference for models/shoulder/shoulder-forward-elbow.toml.

    /path/to/venv/bin/python tools/peer_opensim_das3_elbow.py [--das3 ../shared/data/das3/das3.osim]

Loads das3.osim (dasproject/DAS3 d6f2ff0) in OpenSim 4.6, puts clavicle, scapula and humerus in
the poses of the generated model (the rest posture of models/shoulder/tools/make_shoulder.py, and
the same with the glenohumeral hinges turned: the model's gh_x, gh_y, gh_z are rotations about
the scapula's x, y', z'' axes, so the humerus in the scapula's frame is Rx Ry Rz times its rest
orientation there; DAS3's GH_y, GH_z, GH_yy are that rotation's YZY angles), checks that the
elbow's position in OpenSim is the generator's, and at DAS3 elbow flexions EL_x from 5 to 140
deg (PS_y at its default 5 deg) writes for the muscle elements that cross the elbow (the biceps'
heads and triceps longum's elements the generated model is made of, named in its comments)
their length (`getLength`) and elbow moment arm (`computeMomentArm` about EL_x) to

- crates/mollier/tests/data/das3_elbow_arms.csv

Python 3.11, opensim 4.6 (PyPI). No randomness.
"""

import argparse
import datetime
import math
import os
import re
import sys

import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(REPO, "models", "shoulder", "tools"))
import make_shoulder as ms  # noqa: E402

OUT = os.path.join(REPO, "crates", "mollier", "tests", "data", "das3_elbow_arms.csv")
MODEL = os.path.join(REPO, "models", "shoulder", "shoulder-forward-elbow.toml")
# the generated model's glenohumeral rotations (rad): rest, and the arm flexed and abducted
SHOULDER = [(0.0, 0.0, 0.0), (0.6, 0.2, 0.5)]
ELBOW = [5.0, 20.0, 45.0, 70.0, 95.0, 120.0, 140.0]  # DAS3 EL_x (deg)


def yzy(r):
    """Angles (a, b, c) with r = Ry(a) Rz(b) Ry(c), b in (0, pi)."""
    b = math.acos(max(-1.0, min(1.0, r[1][1])))
    return [math.atan2(r[2][1], -r[0][1]), b, math.atan2(r[1][2], r[1][0])]


def close(a, b, what):
    d = max(abs(a[i][k] - b[i][k]) for i in range(3) for k in range(3))
    if d > 1e-12:
        sys.exit(f"peer_opensim_das3_elbow: {what} off by {d}")


def elements():
    """(our element, its DAS3 element) for the muscles with a point on the forearm."""
    text = open(MODEL).read()
    fore = set(re.findall(r'"forearm\.(\w+)_[oi]"', text))
    out = re.findall(r"^\[elements\.(\w+)\]  # (\w+)$", text, re.M)
    return [(e, d) for e, d in out if e in fore]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--das3", default=os.path.join(REPO, "..", "shared", "data", "das3", "das3.osim"))
    args = ap.parse_args()
    b = ms.Builder(args.das3, elbow=True)
    clav, scap = b.rest_posture()
    pairs = elements()
    if len(pairs) != 4:
        sys.exit(f"peer_opensim_das3_elbow: {pairs}: expected the biceps' two heads and triceps longum's two elements")
    model = osim.Model(args.das3)
    state = model.initSystem()
    cs = model.getCoordinateSet()
    rows = []
    for gh in SHOULDER:
        # the humerus in the scapula's frame: our hinges' rotations, then its rest orientation
        # there (the humerus's frame is the thorax's at rest)
        rel = ms.mm(ms.mm(ms.mm(ms.rx(gh[0]), ms.ry(gh[1])), ms.rz(gh[2])), ms.tr(scap))
        angles = dict(zip(["SC_y", "SC_z", "SC_x"], ms.rotyzx(clav)))
        angles.update(zip(["AC_y", "AC_z", "AC_x"], ms.rotyzx(ms.mm(ms.tr(clav), scap))))
        angles.update(zip(["GH_y", "GH_z", "GH_yy"], yzy(rel)))
        close(ms.ryzx([angles["SC_y"], angles["SC_z"], angles["SC_x"]]), clav, "SC")
        close(ms.mm(ms.mm(ms.ry(angles["GH_y"]), ms.rz(angles["GH_z"])), ms.ry(angles["GH_yy"])), rel, "GH")
        for name, v in angles.items():
            cs.get(name).setValue(state, v, False)
        for el in ELBOW:
            cs.get("EL_x").setValue(state, math.radians(el), False)
            cs.get("PS_y").setValue(state, b.joints["radius_r"]["defaults"]["PS_y"], False)
            model.realizePosition(state)
            # the elbow (DAS3's ulna origin) where the generated model has it: thorax SC, then
            # clavicle, scapula and humerus
            sc = b.joints["clavicle_1"]["location"]
            ac = ms.add(sc, ms.mv(clav, b.joints["scapula_1"]["location"]))
            ghc = ms.add(ac, ms.mv(scap, b.joints["humerus_1"]["location"]))
            hum = ms.mm(scap, rel)
            want = ms.add(ghc, ms.mv(hum, b.joints["ulna_r"]["location"]))
            got = model.getBodySet().get("ulna_r").getPositionInGround(state)
            if max(abs(got.get(i) - want[i]) for i in range(3)) > 1e-9:
                sys.exit(f"peer_opensim_das3_elbow: the elbow at {[got.get(i) for i in range(3)]}, not {want}")
            for ours, das3 in pairs:
                m = model.getMuscles().get(das3)
                arm = m.computeMomentArm(state, cs.get("EL_x"))
                rows.append((gh, el, ours, das3, m.getLength(state), arm))
    with open(OUT, "w") as f:
        f.write(f"# OpenSim {osim.GetVersion()} on das3.osim (dasproject/DAS3 d6f2ff0), by tools/peer_opensim_das3_elbow.py,\n")
        f.write(f"# {datetime.date.today().isoformat()}: clavicle and scapula in the rest posture of make_shoulder.py, the humerus\n")
        f.write("# turned by the generated model's gh_x, gh_y, gh_z (rad); DAS3 EL_x (deg), PS_y 5 deg; length (m),\n")
        f.write("# computeMomentArm about EL_x (m)\n")
        f.write("gh_x,gh_y,gh_z,el_x_deg,element,das3,length,moment_arm\n")
        for gh, el, ours, das3, length, arm in rows:
            f.write(f"{gh[0]:g},{gh[1]:g},{gh[2]:g},{el:g},{ours},{das3},{length:.12g},{arm:.12g}\n")
    print(f"wrote {len(rows)} rows to {OUT}")


if __name__ == "__main__":
    main()
