#!/usr/bin/env python3
"""OpenSim's CoordinateLimitForce as a reference for Mollier's `coordinate_limit` law (issue 37).

    python3 -m venv venv && venv/bin/pip install opensim==4.6
    venv/bin/python tools/peer_opensim_limit.py

Builds a small model with OpenSim's own API (a pin joint whose coordinate's default value is not
zero, so that the import's shift to the mode's value is tested, and a slider, whose limits are in
metres where the pin's are in degrees), adds a CoordinateLimitForce to each coordinate, and
writes

- crates/mollier-osim/tests/data/limit/coordinate_limit.osim: the model, as OpenSim saves it;
- crates/mollier-osim/tests/data/limit/coordinate_limit.json: per coordinate, at values q inside
  the range, within and beyond each transition and at rates q', OpenSim's generalized force
  (`calcLimitForce`, N m or N) and potential energy (`computePotentialEnergy`, J).

Python 3.11, opensim 4.6 (PyPI). No randomness.
"""

import datetime
import json
import math
import os

import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "crates", "mollier-osim", "tests", "data", "limit")

# (coordinate, upper limit, K_up, lower limit, K_low, damping, transition): OpenSim's units
# (degrees and N m per degree for the pin, metres and N/m for the slider)
LIMITS = [
    ("pin_q", 40.0, 2.5, -30.0, 1.2, 0.02, 5.0),
    ("slide_x", 0.05, 800.0, -0.03, 1500.0, 4.0, 0.01),
]


def build():
    model = osim.Model()
    model.setName("coordinate_limit")
    arm = osim.Body("arm", 1.2, osim.Vec3(0.1, 0.0, 0.0), osim.Inertia(0.01, 0.01, 0.01))
    block = osim.Body("block", 0.8, osim.Vec3(0.0), osim.Inertia(0.002, 0.002, 0.002))
    model.addBody(arm)
    model.addBody(block)
    pin = osim.PinJoint("pin", model.getGround(), osim.Vec3(0.0), osim.Vec3(0.0), arm, osim.Vec3(0.0), osim.Vec3(0.0))
    pin.updCoordinate().setName("pin_q")
    pin.updCoordinate().setDefaultValue(math.radians(10.0))
    pin.updCoordinate().setRangeMin(math.radians(-90.0))
    pin.updCoordinate().setRangeMax(math.radians(120.0))
    slider = osim.SliderJoint(
        "slide", model.getGround(), osim.Vec3(0.0, -0.5, 0.0), osim.Vec3(0.0), block, osim.Vec3(0.0), osim.Vec3(0.0)
    )
    slider.updCoordinate().setName("slide_x")
    slider.updCoordinate().setDefaultValue(0.01)
    slider.updCoordinate().setRangeMin(-0.2)
    slider.updCoordinate().setRangeMax(0.2)
    model.addJoint(pin)
    model.addJoint(slider)
    for name, up, kup, lo, klo, c, t in LIMITS:
        f = osim.CoordinateLimitForce(name, up, kup, lo, klo, c, t)
        f.setName(name + "_limit")
        model.addForce(f)
    model.finalizeConnections()
    return model


def samples(up, lo, t, w):
    """Values inside, at the ends, within and beyond each transition (coordinate units, SI)."""
    pts = [lo - 3 * t, lo - t, lo - 0.6 * t, lo - 0.25 * t, lo, 0.5 * (lo + up), up, up + 0.3 * t, up + 0.8 * t,
           up + t, up + 2.5 * t]
    return [p * w for p in pts]


def main():
    os.makedirs(OUT, exist_ok=True)
    model = build()
    path = os.path.join(OUT, "coordinate_limit.osim")
    model.printToXML(path)
    model = osim.Model(path)
    state = model.initSystem()
    forces = model.getForceSet()
    out = {
        "generated_by": "tools/peer_opensim_limit.py",
        "opensim": osim.__version__,
        "date": datetime.date.today().isoformat(),
        "model": "coordinate_limit.osim",
        "units": "q in rad or m, qd in rad/s or m/s, force in N m or N (OpenSim's generalized force), energy in J",
        "coordinates": [],
    }
    cset = model.getCoordinateSet()
    for name, up, kup, lo, klo, c, t in LIMITS:
        coord = cset.get(name)
        w = math.pi / 180.0 if coord.getMotionType() == 1 else 1.0
        clf = osim.CoordinateLimitForce.safeDownCast(forces.get(name + "_limit"))
        rows = []
        for q in samples(up, lo, t, w):
            for qd in (0.0, 0.7, -1.3):
                coord.setValue(state, q, False)
                coord.setSpeedValue(state, qd)
                model.realizeDynamics(state)
                rows.append({
                    "q": q,
                    "qd": qd,
                    "force": clf.calcLimitForce(state),
                    "energy": clf.computePotentialEnergy(state),
                })
        out["coordinates"].append({"name": name, "default": coord.getDefaultValue(), "samples": rows})
    with open(os.path.join(OUT, "coordinate_limit.json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
