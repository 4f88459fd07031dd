#!/usr/bin/env python3
"""OpenSim's inverse dynamics of its gait2354 walking example, as the reference for Mollier's
external loads (issue 36).

    tools/fetch-opensim-models                      # the model and the pipeline files
    python3 -m venv venv && venv/bin/pip install opensim==4.6
    venv/bin/python tools/peer_opensim_gait.py [--models .cache/opensim-models]

Writes crates/mollier-cli/tests/data/gait2354_id.json (committed; CI has no OpenSim):

1. OpenSim's InverseDynamicsTool run as the example's subject01_Setup_InverseDynamics.xml says:
   model subject01_simbody.osim, coordinates OutputReference/subject01_walk1_ik.mot over 0.4-1.6 s,
   filtered as the tool filters them (lowpass_cutoff_frequency_for_coordinates = 6 Hz: the
   storage padded by half its length and low-passed by Storage::lowpassIIR), muscles excluded,
   external loads subject01_walk1_grf.xml with subject01_walk1_grf.mot; its generalized forces
   at the motion's 73 frames (`tau`).
2. The coordinates the tool used at those frames, their rates and accelerations (`q`, `qd`,
   `qdd`, SI), made as the tool makes them (the filtered storage through a GCVSplineSet of degree
   5), and checked here: OpenSim's InverseDynamicsSolver given them, with the same external loads,
   reproduces the tool's output (the largest difference is in `replication`).

Mollier's test (crates/mollier-cli/tests/loads.rs) gives `mollier inverse-dynamics` the same
coordinates, rates and accelerations and the same external loads file, so that the comparison
is of the dynamics and the loads, not of two ways of differentiating a motion. The data come
from opensim-org/opensim-models at the commit tools/fetch-opensim-models pins (the repository
has no licence file: only these numbers are committed, with the files' SHA-256).

Python 3.11, opensim 4.6 (PyPI), numpy.
"""

import argparse
import datetime
import hashlib
import json
import os
import sys
import tempfile

import numpy
import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates", "mollier-cli", "tests", "data", "gait2354_id.json")
CUTOFF = 6.0


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def read_sto(path):
    """Column labels and rows of a storage file."""
    with open(path) as f:
        lines = f.read().splitlines()
    end = next(i for i, l in enumerate(lines) if l.strip().lower() == "endheader")
    labels = lines[end + 1].split()
    rows = [[float(v) for v in l.split()] for l in lines[end + 2:] if l.strip()]
    return labels, numpy.array(rows)


def model_with_loads(model_path, xml):
    """The model, muscles switched off, with the external loads of `xml`."""
    model = osim.Model(model_path)
    muscles = model.getMuscles()
    for i in range(muscles.getSize()):
        muscles.get(i).set_appliesForce(False)
    # the XML names its datafile relative to itself, as the tools read it
    model.addModelComponent(osim.ExternalLoads(xml, True))
    return model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default=os.path.join(REPO, ".cache", "opensim-models"))
    args = ap.parse_args()
    d = os.path.join(os.path.abspath(args.models), "Gait2354_Simbody")
    model_path = os.path.join(d, "subject01_simbody.osim")
    ik = os.path.join(d, "subject01_walk1_ik.mot")
    xml = os.path.join(d, "subject01_walk1_grf.xml")
    grf = os.path.join(d, "subject01_walk1_grf.mot")

    # 1. the tool, as the example's setup runs it
    tmp = tempfile.mkdtemp()
    tool = osim.InverseDynamicsTool()
    tool_model = osim.Model(model_path)  # kept: the tool does not own it
    tool.setModel(tool_model)
    tool.setCoordinatesFileName(ik)
    tool.setLowpassCutoffFrequency(CUTOFF)
    tool.setExternalLoadsFileName(xml)
    tool.setStartTime(0.4)
    tool.setEndTime(1.6)
    excluded = osim.ArrayStr()
    excluded.append("Muscles")
    tool.setExcludedForces(excluded)
    tool.setResultsDir(tmp)
    tool.setOutputGenForceFileName("id.sto")
    if not tool.run():
        sys.exit("the InverseDynamicsTool failed")
    labels, rows = read_sto(os.path.join(tmp, "id.sto"))
    times = rows[:, 0]
    tau = rows[:, 1:]

    # 2. the coordinates as the tool makes them, and the solver on them
    model = model_with_loads(model_path, xml)
    state = model.initSystem()
    coords = model.getCoordinateSet()
    names = [coords.get(i).getName() for i in range(coords.getSize())]
    # the tool writes the coordinates in the multibody tree's order: take the model's
    order = [l.rsplit("_", 1)[0] for l in labels[1:]]
    assert sorted(order) == sorted(names), labels
    tau = tau[:, [order.index(n) for n in names]]
    sto = osim.Storage(ik)
    model.getSimbodyEngine().convertDegreesToRadians(sto)
    sto.pad(sto.getSize() // 2)
    sto.lowpassIIR(CUTOFF)
    splines = osim.GCVSplineSet(5, sto)
    column = {splines.get(i).getName(): i for i in range(splines.getSize())}
    solver = osim.InverseDynamicsSolver(model)
    q, qd, qdd, worst = [], [], [], 0.0
    for k, t in enumerate(times):
        v = [[splines.evaluate(column[n], order, t) for n in names] for order in (0, 1, 2)]
        state.setTime(t)
        for i in range(len(names)):
            coords.get(i).setValue(state, v[0][i], False)
            coords.get(i).setSpeedValue(state, v[1][i])
        model.realizeVelocity(state)
        # the solver takes and gives mobilities in the tree's order, as the tool writes them
        udot = osim.Vector(len(names), 0.0)
        for j, n in enumerate(order):
            udot.set(j, v[2][names.index(n)])
        got = solver.solve(state, udot)
        worst = max(worst, max(abs(got.get(j) - tau[k][names.index(n)]) for j, n in enumerate(order)))
        q.append(v[0])
        qd.append(v[1])
        qdd.append(v[2])
    largest = float(numpy.abs(tau).max())
    print(f"replication: largest difference {worst:.3e} (largest moment {largest:.1f})")
    if worst > 1e-6 * largest:
        sys.exit("the coordinates do not reproduce the tool's output: the reference would be wrong")
    files = {os.path.basename(p): sha256(p) for p in (model_path, ik, xml, grf)}
    out = {
        "provenance": {
            "opensim": osim.GetVersion(),
            "date": datetime.date.today().isoformat(),
            "command": "venv/bin/python tools/peer_opensim_gait.py",
            "source": "opensim-org/opensim-models 20a888b, Pipelines/Gait2354_Simbody and Models/Gait2354_Simbody",
            "files_sha256": files,
            "filtering": "coordinates padded by half their length, Storage::lowpassIIR at 6 Hz, GCVSplineSet(5) "
                         "for rates and accelerations (as the InverseDynamicsTool with "
                         "lowpass_cutoff_frequency_for_coordinates = 6); the force-plate table unfiltered",
            "replication": worst,
        },
        "coordinates": names,
        "time": times.tolist(),
        "q": q,
        "qd": qd,
        "qdd": qdd,
        "tau": tau.tolist(),
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        json.dump(out, f, indent=None, separators=(",", ":"))
        f.write("\n")
    print(f"wrote {OUT}: {len(times)} frames, {len(names)} coordinates")


if __name__ == "__main__":
    main()
