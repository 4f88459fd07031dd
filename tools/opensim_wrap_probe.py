#!/usr/bin/env python3
"""Where OpenSim's wrapping over a cylinder differs from Mollier's: one DAS3 muscle's anchors in
its wrap cylinder's frame and OpenSim's path length at the postures of the reference
(crates/mollier-osim/tests/data/das3_opensim.json), with what the length implies about the arc.

    python3 -m venv venv && venv/bin/pip install opensim==4.6 numpy
    venv/bin/python tools/opensim_wrap_probe.py ter_min_3 ter_min_cyl [--das3 ../shared/data/das3/das3.osim]

docs/opensim-import.md ("Quadrants") quotes its output for teres minor 3 and infraspinatus 6.
Nothing it prints is committed; the reference it reads is.
"""

import argparse
import json
import math
import os

import numpy as np
import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REFERENCE = os.path.join(HERE, "..", "crates", "mollier-osim", "tests", "data", "das3_opensim.json")


def body_fixed_xyz(a):
    """OpenSim's xyz_body_rotation as a matrix: Rx(a0) Ry(a1) Rz(a2)."""
    (cx, cy, cz), (sx, sy, sz) = [math.cos(v) for v in a], [math.sin(v) for v in a]
    rx = np.array([[1, 0, 0], [0, cx, -sx], [0, sx, cx]])
    ry = np.array([[cy, 0, sy], [0, 1, 0], [-sy, 0, cy]])
    rz = np.array([[cz, -sz, 0], [sz, cz, 0], [0, 0, 1]])
    return rx @ ry @ rz


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("muscle")
    ap.add_argument("cylinder")
    ap.add_argument("--das3", default=os.path.join(HERE, "..", "..", "shared", "data", "das3", "das3.osim"))
    args = ap.parse_args()
    model = osim.Model(args.das3)
    state = model.initSystem()
    ref = json.load(open(REFERENCE))
    path = model.getMuscles().get(args.muscle).getGeometryPath()
    wrap, body = None, None
    for b in model.getBodySet():
        objects = b.getWrapObjectSet()
        for i in range(objects.getSize()):
            if objects.get(i).getName() == args.cylinder:
                wrap, body = objects.get(i), b
    cyl = osim.WrapCylinder.safeDownCast(wrap)
    radius = cyl.get_radius()
    t = np.array([wrap.get_translation()[i] for i in range(3)])
    rw = body_fixed_xyz([wrap.get_xyz_body_rotation()[i] for i in range(3)])
    print(f"{args.muscle} over {args.cylinder}: radius {radius} m, length {cyl.get_length()} m, quadrant {cyl.get_quadrant()}")
    for k, posture in enumerate(ref["postures"]):
        for c, v in zip(ref["coordinates"], posture["q"]):
            model.getCoordinateSet().get(c).setValue(state, v, False)
        model.assemble(state)
        model.realizeVelocity(state)
        length = path.getLength(state)
        x = body.getTransformInGround(state)
        rb = np.array([[x.R().get(i, j) for j in range(3)] for i in range(3)])
        ob = np.array([x.p()[i] for i in range(3)])
        points = path.getPathPointSet()
        anchors = []
        for i in range(points.getSize()):
            g = points.get(i).getLocationInGround(state)
            anchors.append(rw.T @ (rb.T @ (np.array([g[j] for j in range(3)]) - ob) - t))
        a, b = anchors[0], anchors[-1]
        tangents = sum(math.sqrt(max(np.hypot(*p[:2]) ** 2 - radius**2, 0.0)) for p in (a, b))
        arc = math.degrees(max(length - tangents, 0.0) / radius)
        print(f"posture {k:2}: OpenSim {1e3 * length:7.2f} mm, anchors {1e3 * np.linalg.norm(b - a):6.2f} mm apart, "
              f"{1e3 * np.hypot(*a[:2]):5.1f} and {1e3 * np.hypot(*b[:2]):5.1f} mm from the axis, "
              f"x {1e3 * a[0]:+6.1f} and {1e3 * b[0]:+6.1f} mm; beyond the tangents: {arc:6.1f} deg of arc")


if __name__ == "__main__":
    main()
