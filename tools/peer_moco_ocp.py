#!/usr/bin/env python3
"""OpenSim Moco's optima of the small problems `mollier optimize` is checked on.

Run once with OpenSim 4.6's Python package (`pip install opensim`) from the repository's root:

    python tools/peer_moco_ocp.py crates/mollier/tests/data/moco

For each problem it builds the same model in OpenSim's API (a sliding mass of 2 kg on a slider
joint along x; the 0.8 m, 1.5 kg rod of models/mechanisms/pendulum.toml on a pin joint about z,
gravity 9.81 m/s² as that file has it),
an ideal CoordinateActuator (optimal force 1), MocoControlGoal (∫ u² dt, weight 1), the same
bounds, duration and mesh (50 intervals, Hermite-Simpson, CasADi's IPOPT, tolerance 1e-8), solves
and writes `<problem>.csv` (time, q, v, u at the mesh points and midpoints) and
`<problem>.json` (objective, status, iterations, solve wall time, OpenSim's version). Both are
committed: the tests read them, OpenSim is not needed to run them.

    python tools/peer_moco_ocp.py crates/mollier/tests/data/moco --double-pendulum DIR

adds the double pendulum of models/mechanisms/double-pendulum.toml swung up
(models/optimal-control/double-pendulum-swing-up.toml: two pin joints, a CoordinateActuator of
±30 N m at each, 40 intervals) started from the grid of `mollier optimize`'s run in DIR
(`states.csv`, `controls.csv`): the swing-up has several local optima (from its own guess Moco
stops at one with objective 18.22), and the guess chooses the one to check. Moco then iterates to
its own stationary point by its own derivatives; `double_pendulum.csv` has time, q1, q2, v1, v2,
u1, u2 per row.

    python tools/peer_moco_ocp.py crates/mollier/tests/data/moco --elbow [--write-osim]

solves only the elbow with two muscles: `models/optimal-control/elbow-dgf.osim`, written by this script
through OpenSim's API (`elbow_osim`, with `--write-osim`) and read back from the file for the solve, is the
elbow of models/forward/elbow.toml (the forearm's 1.5 kg on a pin joint about z at the origin,
the same muscle points, forces, fibre and tendon lengths, pennation and time constants) with
OpenSim's `DeGrooteFregly2016Muscle` (elastic tendons, Moco's implicit tendon dynamics, fibre
damping 0.01) and no passive joint moment. It flexes from the horizontal at rest to 30° at rest
in 0.5 s with the least ∫ Σ e² dt, starting at rest as `mollier optimize` does: the activations
at 0 and the fibres at rest, the tendons in isometric equilibrium
(`MocoInitialVelocityEquilibriumDGFGoal` as an endpoint constraint: Moco's force-equilibrium goal
holds only explicit-mode tendons), 25 Hermite-Simpson intervals; `elbow_dgf.csv` has time, q, v, the two activations, the two
normalized tendon forces and the two excitations per row.
"""
import csv
import json
import math
import os
import sys
import time

import opensim as osim


def one_actuated_joint(m, body, joint, coordinate):
    """Adds `body` to `m` on `joint` (from the ground), names the joint's coordinate `coordinate`,
    drives it by an ideal CoordinateActuator `actuator` of optimal force 1, and connects `m`."""
    m.addBody(body)
    joint.updCoordinate().setName(coordinate)
    m.addJoint(joint)
    a = osim.CoordinateActuator(coordinate)
    a.setName("actuator")
    a.setOptimalForce(1)
    m.addForce(a)
    m.finalizeConnections()


def sliding_mass():
    m = osim.Model()
    m.setName("sliding_mass")
    b = osim.Body("block", 2.0, osim.Vec3(0), osim.Inertia(0.01))
    one_actuated_joint(m, b, osim.SliderJoint("slider", m.getGround(), b), "x")
    bounds = {"/jointset/slider/x/value": ([-5, 5], 0.0, 1.0), "/jointset/slider/x/speed": ([-50, 50], 0.0, 0.0)}
    return m, 1.0, bounds, [-50, 50]


def pendulum():
    m = osim.Model()
    m.setName("pendulum")
    # OpenSim's default is 9.80665; the Mollier model's is 9.81
    m.setGravity(osim.Vec3(0, -9.81, 0))
    b = osim.Body("rod", 1.5, osim.Vec3(0.4, 0, 0), osim.Inertia(0.000075, 0.08, 0.08))
    j = osim.PinJoint("swing", m.getGround(), osim.Vec3(0), osim.Vec3(0), b, osim.Vec3(0), osim.Vec3(0))
    one_actuated_joint(m, b, j, "q")
    bounds = {
        "/jointset/swing/q/value": ([-math.pi / 2, math.pi / 2], -math.pi / 2, math.pi / 2),
        "/jointset/swing/q/speed": ([-50, 50], 0.0, 0.0),
    }
    return m, 2.0, bounds, [-20, 20]


def double_pendulum():
    m = osim.Model()
    m.setName("double_pendulum")
    m.setGravity(osim.Vec3(0, -9.81, 0))
    # the file's rods: 0.5 m, 2 kg and 0.4 m, 1.2 kg, uniform, inertias about their centres (kg m²)
    upper = osim.Body("upper", 2.0, osim.Vec3(0.25, 0, 0), osim.Inertia(1e-4, 0.5**2 * 2 / 12, 0.5**2 * 2 / 12))
    lower = osim.Body("lower", 1.2, osim.Vec3(0.2, 0, 0), osim.Inertia(6e-5, 0.4**2 * 1.2 / 12, 0.4**2 * 1.2 / 12))
    m.addBody(upper)
    m.addBody(lower)
    for name, parent, at, child in (("shoulder", m.getGround(), 0.0, upper), ("elbow", upper, 0.5, lower)):
        j = osim.PinJoint(name, parent, osim.Vec3(at, 0, 0), osim.Vec3(0), child, osim.Vec3(0), osim.Vec3(0))
        j.updCoordinate().setName(name)
        m.addJoint(j)
        a = osim.CoordinateActuator(name)
        a.setName(name)
        a.setOptimalForce(1)
        m.addForce(a)
    m.finalizeConnections()
    bounds = {
        "/jointset/shoulder/shoulder/value": ([-10, 10], -math.pi / 2, math.pi / 2),
        "/jointset/elbow/elbow/value": ([-10, 10], 0.0, 0.0),
        "/jointset/shoulder/shoulder/speed": ([-50, 50], 0.0, 0.0),
        "/jointset/elbow/elbow/speed": ([-50, 50], 0.0, 0.0),
    }
    controls = {"/forceset/shoulder": [-30, 30], "/forceset/elbow": [-30, 30]}
    return m, 2.0, bounds, controls


ELBOW_OSIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models", "optimal-control",
                          "elbow-dgf.osim")


def elbow_osim(path):
    """Write the elbow with two DeGrooteFregly2016Muscle to `path` (see the module's text)."""
    m = osim.Model()
    m.setName("elbow_dgf")
    m.setGravity(osim.Vec3(0, -9.81, 0))
    # models/forward/elbow.toml: the forearm's centre of mass 150 mm along +x, inertia about it
    forearm = osim.Body("forearm", 1.5, osim.Vec3(0.15, 0, 0), osim.Inertia(3e-4, 0.011, 0.011, 0, 0, 0))
    m.addBody(forearm)
    j = osim.PinJoint("elbow", m.getGround(), osim.Vec3(0), osim.Vec3(0), forearm, osim.Vec3(0), osim.Vec3(0))
    c = j.updCoordinate()
    c.setName("flexion")
    c.setRangeMin(-math.pi / 2)
    c.setRangeMax(math.pi / 2)
    m.addJoint(j)
    # (name, F_max N, L_opt m, tendon slack m, pennation rad, origin on the fixed humerus, insertion)
    muscles = [
        ("biceps", 625.0, 0.116, 0.160, 0.0, (0.030, 0.280, 0), (0.045, 0.010, 0)),
        ("triceps", 800.0, 0.090, 0.125, math.radians(9.0), (-0.020, 0.220, 0), (-0.025, 0.004, 0)),
    ]
    for name, f, lopt, lts, alpha, origin, insertion in muscles:
        mu = osim.DeGrooteFregly2016Muscle()
        mu.setName(name)
        mu.set_max_isometric_force(f)
        mu.set_optimal_fiber_length(lopt)
        mu.set_tendon_slack_length(lts)
        mu.set_pennation_angle_at_optimal(alpha)
        mu.set_activation_time_constant(0.015)
        mu.set_deactivation_time_constant(0.060)
        mu.set_fiber_damping(0.01)
        mu.set_ignore_tendon_compliance(False)
        mu.set_tendon_compliance_dynamics_mode("implicit")
        mu.addNewPathPoint(f"{name}_origin", m.getGround(), osim.Vec3(*origin))
        mu.addNewPathPoint(f"{name}_insertion", forearm, osim.Vec3(*insertion))
        m.addForce(mu)
    m.finalizeConnections()
    m.printToXML(path)


def elbow_dgf():
    m = osim.Model(ELBOW_OSIM)
    m.finalizeConnections()
    bounds = {
        "/jointset/elbow/flexion/value": ([-math.pi / 2, math.pi / 2], 0.0, math.pi / 6),
        "/jointset/elbow/flexion/speed": ([-20, 20], 0.0, 0.0),
    }
    for name in ("biceps", "triceps"):
        # at rest at the start, as `mollier optimize`'s rest state: inactive, the tendon in
        # isometric equilibrium, its fibres at rest (the goal added in `solve`)
        bounds[f"/forceset/{name}/activation"] = ([0, 1], 0.0, [0, 1])
    controls = {"/forceset/biceps": [0, 1], "/forceset/triceps": [0, 1]}
    return m, 0.5, bounds, controls


def mollier_guess(solver, run):
    """Moco's guess from `mollier optimize`'s tables in `run` (the same grid)."""
    states = list(csv.DictReader(open(os.path.join(run, "states.csv"))))
    controls = list(csv.DictReader(open(os.path.join(run, "controls.csv"))))
    g = solver.createGuess()
    g.setNumTimes(len(states))
    g.setTime(osim.Vector([float(r["time"]) for r in states]))
    for name in ("shoulder", "elbow"):
        g.setState(f"/jointset/{name}/{name}/value", osim.Vector([float(r[f"{name}.rotation"]) for r in states]))
        g.setState(f"/jointset/{name}/{name}/speed", osim.Vector([float(r[f"{name}.rotation.vel"]) for r in states]))
    for path, column in (("/forceset/shoulder", "a.control"), ("/forceset/elbow", "b.control")):
        g.setControl(path, osim.Vector([float(r[column]) for r in controls]))
    solver.setGuess(g)


def solve(name, build, out, intervals=50, guess=None):
    model, duration, bounds, control = build()
    controls = control if isinstance(control, dict) else {"/forceset/actuator": control}
    study = osim.MocoStudy()
    study.setName(name)
    p = study.updProblem()
    p.setModel(model)
    p.setTimeBounds(0, duration)
    for path, (b, start, end) in bounds.items():
        p.setStateInfo(path, b, start, end)
    for path, b in controls.items():
        p.setControlInfo(path, b)
    p.addGoal(osim.MocoControlGoal("effort", 1.0))
    if any(path.endswith("/activation") for path in bounds):
        equilibrium = osim.MocoInitialVelocityEquilibriumDGFGoal("initial_equilibrium")
        equilibrium.setMode("endpoint_constraint")
        p.addGoal(equilibrium)
    s = study.initCasADiSolver()
    s.set_num_mesh_intervals(intervals)
    s.set_transcription_scheme("hermite-simpson")
    s.set_optim_convergence_tolerance(1e-8)
    s.set_optim_constraint_tolerance(1e-8)
    if guess is not None:
        mollier_guess(s, guess)
    t0 = time.perf_counter()
    sol = study.solve()
    wall = time.perf_counter() - t0
    sol.unseal()
    t = sol.getTimeMat()
    states = sol.getStatesTrajectoryMat()
    controls = sol.getControlsTrajectoryMat()
    names = list(sol.getStateNames())
    values = [k for k, x in enumerate(names) if x.endswith("/value")]
    speeds = [names.index(names[k][: -len("value")] + "speed") for k in values]
    n = len(values)
    muscles = [k for k, x in enumerate(names) if x.endswith("/activation")]
    tendons = [k for k, x in enumerate(names) if x.endswith("/normalized_tendon_force")]
    if muscles:
        labels = [names[k].split("/")[2] for k in muscles]
        header = (["time", "q", "v"] + [f"{x}.activation" for x in labels]
                  + [f"{x}.normalized_tendon_force" for x in labels] + [f"{x}.excitation" for x in labels])
        control_names = list(sol.getControlNames())
        order = [control_names.index(f"/forceset/{x}") for x in labels]
        columns = [values[0], speeds[0]] + muscles + tendons
    else:
        order = list(range(n))
        columns = values + speeds
        if n == 1:
            header = ["time", "q", "v", "u"]
        else:
            header = (["time"] + [f"q{k + 1}" for k in range(n)] + [f"v{k + 1}" for k in range(n)]
                      + [f"u{k + 1}" for k in range(n)])
    with open(os.path.join(out, f"{name}.csv"), "w") as f:
        f.write(",".join(header) + "\n")
        for i in range(len(t)):
            row = [t[i]] + [states[i, k] for k in columns] + [controls[i, k] for k in order]
            f.write(",".join(repr(float(x)) for x in row) + "\n")
    info = {
        "problem": name,
        "objective": sol.getObjective(),
        "status": sol.getStatus(),
        "success": sol.success(),
        "iterations": sol.getNumIterations(),
        "solve_wall_s": wall,
        "mesh_intervals": intervals,
        "guess": "mollier optimize's optimum" if guess is not None else "Moco's default",
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
    if "--elbow" in sys.argv:
        if "--write-osim" in sys.argv:
            elbow_osim(ELBOW_OSIM)
        solve("elbow_dgf", elbow_dgf, out, intervals=25)
        sys.exit(0)
    for name, build in [("sliding_mass", sliding_mass), ("pendulum", pendulum)]:
        solve(name, build, out)
    if "--double-pendulum" in sys.argv:
        run = sys.argv[sys.argv.index("--double-pendulum") + 1]
        solve("double_pendulum", double_pendulum, out, intervals=40, guess=run)
