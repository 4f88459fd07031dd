#!/usr/bin/env python3
"""OpenSim Moco's optima of the small problems `mollier optimize` is checked on.

Run once with OpenSim 4.6's Python package (`pip install opensim`; here
/work/notes/venv/bin/python) from the repository's root:

    python tools/peer_moco_ocp.py crates/mollier/tests/data/moco

For each problem it builds the same model in OpenSim's API (a sliding mass of 2 kg on a slider
joint along x; the 0.8 m, 1.5 kg rod of models/mechanisms/pendulum.toml on a pin joint about z,
gravity 9.81 m/s² as that file has it),
an ideal CoordinateActuator (optimal force 1), MocoControlGoal (∫ u² dt, weight 1), the same
bounds, duration and mesh (50 intervals, Hermite-Simpson, CasADi's IPOPT, tolerance 1e-8), solves
and writes `<problem>.csv` (time, q, v, u at the mesh points and midpoints) and
`<problem>.json` (objective, status, iterations, solve wall time, OpenSim's version). Both are
committed: the tests read them, OpenSim is not needed to run them.
"""
import json
import math
import os
import sys
import time

import opensim as osim


def sliding_mass():
    m = osim.Model()
    m.setName("sliding_mass")
    b = osim.Body("block", 2.0, osim.Vec3(0), osim.Inertia(0.01))
    m.addBody(b)
    j = osim.SliderJoint("slider", m.getGround(), b)
    c = j.updCoordinate()
    c.setName("x")
    m.addJoint(j)
    a = osim.CoordinateActuator("x")
    a.setName("actuator")
    a.setOptimalForce(1)
    m.addForce(a)
    m.finalizeConnections()
    bounds = {"/jointset/slider/x/value": ([-5, 5], 0.0, 1.0), "/jointset/slider/x/speed": ([-50, 50], 0.0, 0.0)}
    return m, 1.0, bounds, [-50, 50]


def pendulum():
    m = osim.Model()
    m.setName("pendulum")
    # OpenSim's default is 9.80665; the Mollier model's is 9.81
    m.setGravity(osim.Vec3(0, -9.81, 0))
    b = osim.Body("rod", 1.5, osim.Vec3(0.4, 0, 0), osim.Inertia(0.000075, 0.08, 0.08))
    m.addBody(b)
    j = osim.PinJoint("swing", m.getGround(), osim.Vec3(0), osim.Vec3(0), b, osim.Vec3(0), osim.Vec3(0))
    c = j.updCoordinate()
    c.setName("q")
    m.addJoint(j)
    a = osim.CoordinateActuator("q")
    a.setName("actuator")
    a.setOptimalForce(1)
    m.addForce(a)
    m.finalizeConnections()
    bounds = {
        "/jointset/swing/q/value": ([-math.pi / 2, math.pi / 2], -math.pi / 2, math.pi / 2),
        "/jointset/swing/q/speed": ([-50, 50], 0.0, 0.0),
    }
    return m, 2.0, bounds, [-20, 20]


def solve(name, build, out):
    model, duration, bounds, control = build()
    study = osim.MocoStudy()
    study.setName(name)
    p = study.updProblem()
    p.setModel(model)
    p.setTimeBounds(0, duration)
    for path, (b, start, end) in bounds.items():
        p.setStateInfo(path, b, start, end)
    p.setControlInfo("/forceset/actuator", control)
    p.addGoal(osim.MocoControlGoal("effort", 1.0))
    s = study.initCasADiSolver()
    s.set_num_mesh_intervals(50)
    s.set_transcription_scheme("hermite-simpson")
    s.set_optim_convergence_tolerance(1e-8)
    s.set_optim_constraint_tolerance(1e-8)
    t0 = time.perf_counter()
    sol = study.solve()
    wall = time.perf_counter() - t0
    sol.unseal()
    t = sol.getTimeMat()
    states = sol.getStatesTrajectoryMat()
    controls = sol.getControlsTrajectoryMat()
    with open(os.path.join(out, f"{name}.csv"), "w") as f:
        f.write("time,q,v,u\n")
        for i in range(len(t)):
            f.write(f"{float(t[i])!r},{float(states[i, 0])!r},{float(states[i, 1])!r},{float(controls[i, 0])!r}\n")
    info = {
        "problem": name,
        "objective": sol.getObjective(),
        "status": sol.getStatus(),
        "success": sol.success(),
        "iterations": sol.getNumIterations(),
        "solve_wall_s": wall,
        "mesh_intervals": 50,
        "scheme": "hermite-simpson",
        "opensim": osim.__version__,
        "generated_by": "tools/peer_moco_ocp.py",
    }
    with open(os.path.join(out, f"{name}.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(name, info)


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, build in [("sliding_mass", sliding_mass), ("pendulum", pendulum)]:
        solve(name, build, out)
