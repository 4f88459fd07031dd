#!/usr/bin/env python3
"""Single-muscle OpenSim models over one wrap object each, swept over a coordinate through contact
and release, for crates/mollier-osim/tests/opensim_synthetic_wraps.rs.

    python3 -m venv venv && venv/bin/pip install opensim==4.6
    venv/bin/python tools/peer_opensim_synthetic_wraps.py

Each model is ground -> `arm` on a PinJoint (coordinate `theta`, about the z axis of frames moved
off both bodies' origins), one Thelen2003Muscle from a point of ground to a point of the arm
(one via point in some), and one or two wrap objects (sphere, cylinder with and without a
quadrant, ellipsoid with and without a quadrant, on ground or on the arm, turned by `xyz_body_rotation`, anchors off the wrap
plane so that the paths are three-dimensional). The models are built here with OpenSim's API
and written by OpenSim (`Model.printToXML`) to crates/mollier-osim/tests/data/osim/wraps/; the
tests import those files. For each model, SAMPLES values of `theta` evenly over its range (the
path touches and leaves the object inside it), in the layout of opensim_wraps.json (postures with
`q`, `lengths`, `minus_dl_dq`): OpenSim's length (m) and -dL/dtheta (central
differences of OpenSim's lengths, h = 1e-7 rad; m/rad), and OpenSim's path at that value as a
string of its points, `p` a path point and `w` a wrap object's tangent point (`pwwp`: wrapped). Writes
crates/mollier-osim/tests/data/opensim_synthetic_wraps.json with its provenance.

Python 3.11, opensim 4.6 (PyPI).
"""

import datetime
import hashlib
import json
import os
import sys

import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
DATA = os.path.join(REPO, "crates", "mollier-osim", "tests", "data")
OSIM = os.path.join(DATA, "osim", "wraps")
OUT = os.path.join(DATA, "opensim_synthetic_wraps.json")
SAMPLES = 41
H = 1e-7

# origin on ground, via point on ground (or None), insertion on the arm: the path in front of the
# joint, passing the wrap objects placed near the joint as theta turns the arm
O = (-0.20, 0.06, 0.02)
I = (0.18, 0.05, -0.04)

# name: (wrap objects [(kind, body, translation, rotation, params)], theta range, via point)
CASES = {
    "sphere": ([("sphere", "ground", (0.01, 0.0, 0.005), (0.0, 0.0, 0.0), {"radius": 0.04})], (-1.2, 1.0), None),
    "sphere_on_arm": (
        [("sphere", "arm", (-0.02, 0.01, 0.0), (0.3, -0.2, 0.1), {"radius": 0.035})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder": (
        [("cylinder", "ground", (0.0, 0.0, 0.0), (0.25, -0.35, 0.0), {"radius": 0.03, "length": 0.5})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder_on_arm": (
        [("cylinder", "arm", (-0.03, 0.0, 0.01), (-0.2, 0.3, 0.4), {"radius": 0.025, "length": 0.4})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder_short": (
        [("cylinder", "ground", (0.0, 0.0, 0.0), (0.25, -0.35, 0.0), {"radius": 0.03, "length": 0.06})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder_plus_y": (
        [("cylinder", "ground", (0.0, 0.0, 0.0), (0.25, -0.35, 0.0), {"radius": 0.03, "length": 0.5, "quadrant": "+y"})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder_minus_y": (
        [("cylinder", "ground", (0.0, 0.0, 0.0), (0.25, -0.35, 0.0), {"radius": 0.03, "length": 0.5, "quadrant": "-y"})],
        (-1.2, 1.0),
        None,
    ),
    "cylinder_minus_x": (
        [("cylinder", "ground", (0.0, 0.0, 0.0), (0.25, -0.35, 0.0), {"radius": 0.03, "length": 0.5, "quadrant": "-x"})],
        (-1.2, 1.0),
        None,
    ),
    "ellipsoid": (
        [("ellipsoid", "ground", (0.01, 0.0, 0.0), (0.1, 0.2, -0.3), {"dimensions": (0.05, 0.035, 0.045)})],
        (-1.2, 1.0),
        None,
    ),
    # OpenSim's quadrants on an ellipsoid: c1 mirrored onto the side, the far-side wrap
    "ellipsoid_minus_y_on_arm": (
        [("ellipsoid", "arm", (-0.02, 0.0, 0.01), (-0.25, 0.2, 0.45),
          {"dimensions": (0.04, 0.03, 0.05), "quadrant": "-y"})],
        (-1.2, 1.0),
        None,
    ),
    "ellipsoid_plus_z": (
        [("ellipsoid", "ground", (0.0, 0.01, 0.0), (0.4, -0.1, 0.2),
          {"dimensions": (0.035, 0.05, 0.03), "quadrant": "z"})],
        (-1.2, 1.0),
        None,
    ),
    # long along the line: Frans' point alone and blended with the fan
    "ellipsoid_long": (
        [("ellipsoid", "ground", (0.0, 0.0, 0.0), (0.0, 0.1, 0.05), {"dimensions": (0.09, 0.025, 0.03)})],
        (-1.2, 1.0),
        None,
    ),
    # a cylinder and an ellipsoid on one stretch (as arm26's TRIlong): one after the other
    "cylinder_and_ellipsoid": (
        [
            ("cylinder", "arm", (0.07, 0.02, 0.0), (-0.1, 0.15, 0.0), {"radius": 0.02, "length": 0.5}),
            ("ellipsoid", "ground", (-0.07, 0.02, 0.0), (0.1, 0.2, -0.3),
             {"dimensions": (0.035, 0.025, 0.03), "quadrant": "-y"}),
        ],
        (-1.2, 1.0),
        None,
    ),
    "two_cylinders": (
        [
            ("cylinder", "ground", (-0.08, 0.03, 0.0), (0.1, -0.2, 0.0), {"radius": 0.02, "length": 0.5}),
            ("cylinder", "arm", (0.08, 0.02, 0.0), (-0.1, 0.15, 0.0), {"radius": 0.02, "length": 0.5}),
        ],
        (-1.2, 1.0),
        None,
    ),
    # a cylinder and a sphere on different stretches: OpenSim adjusts the cylinder's tangent
    # points when a path has several wrap objects
    "cylinder_and_sphere": (
        [
            ("cylinder", "arm", (-0.1, 0.05, 0.0), (0.3, -0.4, 0.0), {"radius": 0.015, "length": 0.5, "range": (1, 2)}),
            ("sphere", "arm", (0.08, 0.02, 0.0), (0.0, 0.0, 0.0), {"radius": 0.02, "range": (2, 3)}),
        ],
        (-1.2, 1.0),
        (-0.02, 0.06, 0.03),
    ),
    "sphere_range": (
        [("sphere", "arm", (-0.1, 0.0, 0.0), (0.0, 0.0, 0.0), {"radius": 0.035, "range": (1, 3)})],
        (-1.2, 1.0),
        (-0.06, 0.05, 0.0),
    ),
}


def vec(v):
    return osim.Vec3(*v)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def build(name, wraps, rng, via):
    model = osim.Model()
    model.setName(name)
    model.setGravity(vec((0, -9.81, 0)))
    ground = model.getGround()
    arm = osim.Body("arm", 1.0, vec((0.1, 0.0, 0.0)), osim.Inertia(0.01, 0.01, 0.01))
    model.addBody(arm)
    # joint frames moved off the bodies' origins, the pin axis (their z) tilted on the parent
    joint = osim.PinJoint("pin", ground, vec((0.0, 0.0, 0.01)), vec((0.05, -0.03, 0.0)),
                          arm, vec((-0.01, 0.0, 0.0)), vec((0.0, 0.0, 0.0)))
    c = joint.upd_coordinates(0)
    c.setName("theta")
    c.setRangeMin(rng[0])
    c.setRangeMax(rng[1])
    c.setDefaultValue(0.0)
    model.addJoint(joint)
    muscle = osim.Thelen2003Muscle("muscle", 100.0, 0.1, 0.1, 0.0)
    muscle.addNewPathPoint("origin", ground, vec(O))
    if via is not None:
        muscle.addNewPathPoint("via", ground, vec(via))
    muscle.addNewPathPoint("insertion", arm, vec(I))
    model.addForce(muscle)
    bodies = {"ground": ground, "arm": arm}
    for k, (kind, body, t, r, p) in enumerate(wraps):
        if kind == "sphere":
            w = osim.WrapSphere()
            w.set_radius(p["radius"])
        elif kind == "cylinder":
            w = osim.WrapCylinder()
            w.set_radius(p["radius"])
            w.set_length(p["length"])
        else:
            w = osim.WrapEllipsoid()
            w.set_dimensions(vec(p["dimensions"]))
        w.setName(f"{kind}{k}")
        w.set_translation(vec(t))
        w.set_xyz_body_rotation(vec(r))
        if "quadrant" in p:
            w.set_quadrant(p["quadrant"])
        bodies[body].addWrapObject(w)
        muscle.updGeometryPath().addPathWrap(w)
        pw = muscle.updGeometryPath().updWrapSet().get(k)
        pw.setName(f"wrap{k}")
        if "range" in p:
            pw.set_range(0, p["range"][0])
            pw.set_range(1, p["range"][1])
    model.finalizeConnections()
    return model


def sweep(path):
    model = osim.Model(path)
    model.getCoordinateSet().get(0).setDefaultClamped(False)
    state = model.initSystem()
    coord = model.getCoordinateSet().get(0)
    muscle = model.getMuscles().get(0)
    gp = muscle.getGeometryPath()

    def length(q):
        coord.setValue(state, q)
        model.realizePosition(state)
        return muscle.getLength(state)

    lo, hi = coord.getRangeMin(), coord.getRangeMax()
    rows = []
    for i in range(SAMPLES):
        q = lo + (hi - lo) * i / (SAMPLES - 1)
        arm = -(length(q + H) - length(q - H)) / (2 * H)
        ln = length(q)
        cur = gp.getCurrentPath(state)
        kinds = "".join("w" if cur.get(k).getConcreteClassName() == "PathWrapPoint" else "p"
                        for k in range(cur.getSize()))
        rows.append({"q": [q], "lengths": [ln], "minus_dl_dq": [[arm]], "path": kinds})
    return rows


def main():
    os.makedirs(OSIM, exist_ok=True)
    models = []
    for name, (wraps, rng, via) in CASES.items():
        path = os.path.join(OSIM, f"{name}.osim")
        build(name, wraps, rng, via).printToXML(path)
        rows = sweep(path)
        touched = sum(1 for r in rows if "w" in r["path"])
        print(f"{name}: wraps at {touched} of {len(rows)}", file=sys.stderr)
        models.append({"file": f"{name}.osim", "sha256": sha256(path), "coordinates": ["theta"], "free": ["theta"],
                       "muscles": ["muscle"], "postures": rows})
    doc = {
        "provenance": {
            "opensim": osim.GetVersionAndDate(),
            "date": datetime.date.today().isoformat(),
            "command": "venv/bin/python tools/peer_opensim_synthetic_wraps.py",
            "samples": f"{SAMPLES} values of theta evenly over its range",
            "moment_arms": f"-dL/dtheta by central differences of OpenSim's lengths, h = {H}",
        },
        "models": models,
    }
    with open(OUT, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    print(f"wrote {OUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
