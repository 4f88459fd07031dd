#!/usr/bin/env python3
"""The target motion of the forward flexion (models/shoulder/flexion-target.csv): the nine joint
rotations of models/shoulder/shoulder-forward.toml, their rates and accelerations, while the
humerus is elevated from rest (0 deg) to 80 deg in the plane of elevation 50 deg (humerus pole
angle, YZY relative to the thorax; 0 is the frontal plane, 90 the sagittal) over 1.3 s with a
minimum-jerk profile, the girdle following the shoulder rhythm. It starts at the model's rest
posture, at rest.

The girdle is make_shoulder.py's: the de Groot & Brand (2001) regression as DAS3's
estimate_shoulder_angles implements it, with the scapula placed on the thorax (TS and AI on the
ellipsoid, AC and TS.x kept) and the clavicle's axial rotation by axclav's criterion -- the rest
posture of the model is this posture at elevation 0. The model's coordinates are changes from
that rest: SC and AC are DAS3's YZX angles minus their rest values; GH's hinges turn about the
scapula's x, y', z'' axes, so they are the XYZ angles of the humerus's rotation relative to the
scapula, taken from rest. Rates and accelerations by central differences in time (the placing
converges to 1e-15).

`mollier simulate models/shoulder/shoulder-forward.toml --track models/shoulder/flexion-target.csv`
tracks this motion (computed muscle control) to make models/shoulder/flexion-excitations.csv
(docs/forward-dynamics.md, "Computed muscle control").

    python3 models/shoulder/tools/flexion_target.py [--osim ../shared/data/das3/das3.osim]
"""

import argparse
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_shoulder import DEG, Builder, mm, rotyzx, ry, rz, tr  # noqa: E402

PLANE = 50.0  # deg
ELEVATION = (0.0, 80.0)  # deg, from the rest posture
DURATION = 1.3  # s
EVERY = 0.01  # s between rows
FADE = 20.0  # deg of elevation over which the plane enters the girdle's regression
NAMES = ["sc_y", "sc_z", "sc_x", "ac_y", "ac_z", "ac_x", "gh_x", "gh_y", "gh_z"]


def elevation(t):
    """Minimum-jerk elevation (rad) at time t (s), held at the ends."""
    s = min(max(t / DURATION, 0.0), 1.0)
    mj = s**3 * (10.0 - 15.0 * s + 6.0 * s * s)
    return (ELEVATION[0] + (ELEVATION[1] - ELEVATION[0]) * mj) * DEG


def rotxyz(r):
    """Angles (x, y, z) with r = Rx Ry Rz, y in [-pi/2, pi/2]."""
    y = math.asin(max(-1.0, min(1.0, r[0][2])))
    x = math.atan2(-r[1][2], r[2][2])
    z = math.atan2(-r[0][1], r[0][0])
    return [x, y, z]


def girdle_plane(plane, elev):
    """The pole angle the regression gets (rad): `plane`, faded in over the first FADE of
    elevation (smoothstep). At elevation 0 the pole angle is undefined (gimbal lock) and the
    rest posture is the regression's at pole angle 0; without the fade the girdle would have to
    jump 6 deg (SC_y) at the start."""
    x = min(elev / (FADE * DEG), 1.0)
    return plane * x * x * (3.0 - 2.0 * x)


def angles(b, plane, elev):
    """SC (YZX), AC (YZX) and GH (XYZ in the scapula) angles of the placed posture, rad, and the
    scapula's and humerus's rotations. The humerus turns by `elev` about the horizontal axis
    normal to the plane of elevation (YZY angles plane, elev, -plane: the hanging arm's axial
    orientation kept, so that it starts at rest)."""
    clav, scap, _, _ = b.placed_posture(girdle_plane(plane, elev), elev)
    hum = mm(mm(ry(plane), rz(elev)), ry(-plane))
    return rotyzx(clav) + rotyzx(mm(tr(clav), scap)), scap, hum


REPO = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DAS3_OSIM = os.path.join(REPO, "..", "shared", "data", "das3", "das3.osim")


def rest_of(osim, who):
    """The model builder of das3.osim and the rest posture's SC and AC angles and scapula;
    exits with a message naming `who` when the DAS3 data are not there."""
    if not os.path.exists(osim):
        sys.exit(f"{who}: {osim} not found (the DAS3 reference data)")
    b = Builder(osim)
    sa0, scap0, _ = angles(b, 0.0, 0.0)
    return b, (sa0, scap0)


def coordinates(b, rest, t):
    sa, scap, hum = angles(b, PLANE * DEG, elevation(t))
    q = [sa[i] - rest[0][i] for i in range(6)]
    # the humerus relative to the scapula, from its rest relation (the humerus is the thorax
    # frame at rest): R_sᵀ R_h R_s0 = Rx Ry Rz
    return q + rotxyz(mm(mm(tr(scap), hum), rest[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--osim", default=DAS3_OSIM)
    ap.add_argument("--out", default=os.path.join(REPO, "models", "shoulder", "flexion-target.csv"))
    args = ap.parse_args()
    b, rest = rest_of(args.osim, "flexion_target")
    h = 1e-4
    rows = []
    for k in range(round(DURATION / EVERY) + 1):
        t = k * EVERY
        q, qp, qm = coordinates(b, rest, t), coordinates(b, rest, t + h), coordinates(b, rest, t - h)
        v = [(qp[i] - qm[i]) / (2 * h) for i in range(9)]
        a = [(qp[i] - 2 * q[i] + qm[i]) / (h * h) for i in range(9)]
        rows.append([t] + q + v + a)
    with open(args.out, "w") as fh:
        fh.write("# Target of the forward flexion: generated by models/shoulder/tools/flexion_target.py\n")
        fh.write(f"# (plane of elevation {PLANE:g} deg, elevation {ELEVATION[0]:g} to {ELEVATION[1]:g} deg, minimum jerk\n")
        fh.write(f"# over {DURATION:g} s; the girdle by the shoulder rhythm placed on the thorax). Joint rotations of\n")
        fh.write("# shoulder-forward.toml (rad), their rates (rad/s) and accelerations (rad/s^2).\n")
        # a motion file of the model: its inputs, with their rates and accelerations
        cols = ["time"] + [f"{n}.rotation{d}" for d in ("", ".vel", ".acc") for n in NAMES]
        fh.write(",".join(cols) + "\n")
        for r in rows:
            fh.write(f"{r[0]:.2f}," + ",".join(f"{x:.9g}" for x in r[1:]) + "\n")
    print(f"wrote {len(rows)} rows to {args.out}")


if __name__ == "__main__":
    main()
