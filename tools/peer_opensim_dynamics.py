#!/usr/bin/env python3
"""OpenSim's dynamics of the imported models, as references for Mollier's (issue 41).

    python3 -m venv venv && venv/bin/pip install opensim==4.6
    venv/bin/python tools/peer_opensim_dynamics.py [--das3 ../shared/data/das3/das3.osim]

Writes crates/mollier-osim/tests/data/opensim_dynamics.json (committed; CI has no OpenSim): for
each synthetic import model of crates/mollier-osim/tests/data/osim/ (tools/peer_opensim.py) and
for DAS3 (external data, never copied into the repository: only these numbers, with its SHA-256),
at random postures q, rates q' and accelerations q'' inside the coordinates' ranges:

- the mass matrix M(q) (Simbody's calcM, kg m^2 / kg m / kg), in the coordinates' order;
- the inverse-dynamics generalized forces tau = M q'' + C(q, q') - G(q) (N m or N; OpenSim's
  InverseDynamicsSolver with every force of the model switched off, gravity on), once with the
  model's gravity and twice with gravity turned by a random rotation: a model turned as a whole
  in gravity g has the generalized forces of the unturned model in gravity R^T g, so the rotated
  gravity vector stands for the turned model (the Rust test writes the same vector into the
  imported model file's `gravity`).

A body inertia that no rigid body can have (DAS3's clavicle, whose file lists products of inertia
with the wrong sign convention) is zeroed here as Mollier's import leaves it out, and named in
`inertia_left_out`.

Models whose mobilities are not their coordinates' rates (OpenSim's ball and free joints use
quaternions and angular velocities), models with a constraint (the coupler: Mollier's input is
the independent coordinate only), the weld (no coordinate), and any model whose body velocities in
OpenSim are not the derivatives of its own body poses at a sample (central differences, 1e-6) are
left out, named in the file with the reason and the figure.

Python 3.11, opensim 4.6 (PyPI), numpy. Random values use a fixed seed.
"""

import argparse
import datetime
import glob
import hashlib
import json
import math
import os
import random
import sys

import numpy
import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
DATA = os.path.join(REPO, "crates", "mollier-osim", "tests", "data")


def random_rotation(rng):
    """A uniformly random rotation matrix (Shoemake's quaternion)."""
    u1, u2, u3 = rng.random(), rng.random(), rng.random()
    a, b = math.sqrt(1 - u1), math.sqrt(u1)
    w, x, y, z = a * math.sin(2 * math.pi * u2), a * math.cos(2 * math.pi * u2), \
        b * math.sin(2 * math.pi * u3), b * math.cos(2 * math.pi * u3)
    return [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]


def left_out(model, state):
    """Why OpenSim's mobilities cannot be compared with the model's coordinates, or None."""
    if model.getCoordinateSet().getSize() == 0:
        return "no coordinate"
    if model.getConstraintSet().getSize() > 0:
        return "a constraint: Mollier's inputs are the independent coordinates only"
    nq, nu = state.getNQ(), state.getNU()
    if nq != nu:
        return f"{nq} generalized coordinates for {nu} mobilities (quaternions): u is not q'"
    matter = model.getMatterSubsystem()
    for k in range(nu):
        u = osim.Vector(nu, 0.0)
        u.set(k, 1.0)
        qd = osim.Vector(nq, 0.0)
        matter.multiplyByN(state, False, u, qd)
        if any(abs(qd.get(j) - (1.0 if j == k else 0.0)) > 0.0 for j in range(nq)):
            return "q' = N(q) u with N not the identity"
    return None


def pose(model, state, q):
    """Every body's rotation matrix and origin in ground at coordinates q."""
    cset = model.getCoordinateSet()
    for i, v in enumerate(q):
        cset.get(i).setValue(state, v, False)
    model.realizePosition(state)
    out = []
    for b in range(model.getBodySet().getSize()):
        t = model.getBodySet().get(b).getTransformInGround(state)
        r, p = t.R(), t.p()
        out.append(([[r.get(i, j) for j in range(3)] for i in range(3)], [p.get(i) for i in range(3)]))
    return out


def velocity_inconsistency(model, state, q):
    """The largest difference (rad/s or m/s per unit rate) between OpenSim's body velocities for
    a unit rate of each coordinate and the central differences of its own body poses: OpenSim's
    dynamics are a reference only where its velocities are the derivatives of its positions."""
    cset = model.getCoordinateSet()
    n, h, worst = cset.getSize(), 1e-6, 0.0
    for k in range(n):
        qp, qm = list(q), list(q)
        qp[k] += h
        qm[k] -= h
        plus, minus, here = pose(model, state, qp), pose(model, state, qm), pose(model, state, q)
        for i in range(n):
            cset.get(i).setSpeedValue(state, 1.0 if i == k else 0.0)
        model.realizeVelocity(state)
        for b, ((rp, pp), (rm, pm), (r0, _)) in enumerate(zip(plus, minus, here)):
            # omega from dR/dq R^T (skew), v of the origin from dp/dq
            dr = [[(rp[i][j] - rm[i][j]) / (2 * h) for j in range(3)] for i in range(3)]
            w = [[sum(dr[i][m] * r0[j][m] for m in range(3)) for j in range(3)] for i in range(3)]
            w_fd = [w[2][1], w[0][2], w[1][0]]
            v_fd = [(pp[i] - pm[i]) / (2 * h) for i in range(3)]
            vel = model.getBodySet().get(b).getVelocityInGround(state)
            for i in range(3):
                worst = max(worst, abs(vel.get(0).get(i) - w_fd[i]), abs(vel.get(1).get(i) - v_fd[i]))
    state.updU().setToZero()
    return worst


def mobility_of(model, state):
    """For each coordinate (the coordinate set's order), its index among the mobilities."""
    cset = model.getCoordinateSet()
    out = []
    for i in range(cset.getSize()):
        state.updU().setToZero()
        cset.get(i).setSpeedValue(state, 1.0)
        u = state.getU()
        out.append(next(j for j in range(u.size()) if u.get(j) == 1.0))
    state.updU().setToZero()
    return out


def impossible_inertias(model):
    """Zero every body's inertia that no rigid body can have (principal moments negative or
    breaking the triangle inequality: DAS3's clavicle), as Mollier's import leaves them out
    (docs/opensim-import.md); OpenSim takes them as they are. Returns those bodies' names."""
    names = []
    for b in range(model.getBodySet().getSize()):
        body = model.getBodySet().get(b)
        i = body.getInertia()
        m, p = i.getMoments(), i.getProducts()
        t = numpy.array([[m.get(0), p.get(0), p.get(1)], [p.get(0), m.get(1), p.get(2)], [p.get(1), p.get(2), m.get(2)]])
        e = numpy.linalg.eigvalsh(t)
        tol = 1e-12 * max(abs(e).max(), 1e-300)
        if e.min() < -tol or any(e[k] > e.sum() - e[k] + tol for k in range(3)):
            body.setInertia(osim.Inertia(0.0, 0.0, 0.0, 0.0, 0.0, 0.0))
            names.append(body.getName())
    return names


def dynamics(path, samples, seed, name):
    """The reference of one model: coordinates, samples (or the reason it is left out)."""
    model = osim.Model(path)
    zeroed = impossible_inertias(model)
    forces = model.getForceSet()
    for i in range(forces.getSize()):
        forces.get(i).set_appliesForce(False)
    state = model.initSystem()
    why = left_out(model, state)
    if why:
        return {"left_out": why}
    cset = model.getCoordinateSet()
    n = cset.getSize()
    names = [cset.get(i).getName() for i in range(n)]
    mob = mobility_of(model, state)
    rng = random.Random(seed)
    g0 = model.getGravity()
    g0 = [g0.get(0), g0.get(1), g0.get(2)]
    out = []
    for k in range(samples):
        q, qd, qdd = [], [], []
        for i in range(n):
            c = cset.get(i)
            lo, hi, d = c.getRangeMin(), c.getRangeMax(), c.getDefaultValue()
            # anywhere in the range, which for DAS3 is where the model is meant to be
            # (the synthetic models' ranges are wide: +-1.5 rad or m, their splines' knots)
            v = d if k == 0 else rng.uniform(lo, hi)
            q.append(v)
            translation = c.getMotionType() == 2
            qd.append(rng.uniform(-1.0, 1.0) * (0.5 if translation else 2.0))
            qdd.append(rng.uniform(-1.0, 1.0) * (2.0 if translation else 10.0))
        bad = velocity_inconsistency(model, state, q)
        if bad > 1e-6:
            return {"left_out": f"OpenSim's body velocities are not the derivatives of its own body poses "
                                f"(off by up to {bad:.3g} per unit rate at {[round(v, 6) for v in q]}): "
                                f"its mass matrix and forces are no reference"}
        gravities = [g0]
        for _ in range(2):
            r = random_rotation(rng)
            # the turned model's gravity, seen from the model: R^T g
            gravities.append([sum(r[j][i] * g0[j] for j in range(3)) for i in range(3)])
        taus = []
        for g in gravities:
            model.setGravity(osim.Vec3(*g))
            state = model.initSystem()
            for i in range(n):
                cset.get(i).setValue(state, q[i], False)
                cset.get(i).setSpeedValue(state, qd[i])
            model.realizeVelocity(state)
            # a new system at each initSystem: its solver and subsystem with it
            solver = osim.InverseDynamicsSolver(model)
            udot = osim.Vector(n, 0.0)
            for i in range(n):
                udot.set(mob[i], qdd[i])
            tau = solver.solve(state, udot)
            taus.append([tau.get(mob[i]) for i in range(n)])
        mm = osim.Matrix()
        model.getMatterSubsystem().calcM(state, mm)
        mass = [[mm.get(mob[i], mob[j]) for j in range(n)] for i in range(n)]
        # the state is the last gravity's; the mass matrix does not depend on it
        out.append({"q": q, "qd": qd, "qdd": qdd, "mass_matrix": mass,
                    "gravity": gravities, "tau": taus})
        print(f"{name}: sample {k + 1}/{samples}", file=sys.stderr)
    model.setGravity(osim.Vec3(*g0))
    return {"coordinates": names, "inertia_left_out": zeroed, "samples": out}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--das3", default=os.path.join(REPO, "..", "shared", "data", "das3", "das3.osim"))
    args = ap.parse_args()
    osim.Logger.removeFileSink()  # no opensim.log beside the data
    osim.Logger.setLevelString("error")
    provenance = {
        "opensim": osim.GetVersionAndDate(),
        "python": sys.version.split()[0],
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 tools/peer_opensim_dynamics.py",
    }
    models = {}
    for k, path in enumerate(sorted(glob.glob(os.path.join(DATA, "osim", "*.osim")))):
        name = os.path.splitext(os.path.basename(path))[0]
        if name == "missing":
            continue
        models[name] = dynamics(path, 4, 100 + k, name)
    result = {"provenance": provenance, "models": models}
    if os.path.exists(args.das3):
        sha = hashlib.sha256(open(args.das3, "rb").read()).hexdigest()
        d = dynamics(args.das3, 6, 41, "das3")
        d["provenance"] = {"das3_sha256": sha,
                           "das3": "dasproject/DAS3 commit d6f2ff0 (../shared/data/das3/das3.osim; not in this repository)"}
        result["das3"] = d
    else:
        sys.exit(f"{args.das3} not found: the DAS3 reference would be missing")
    with open(os.path.join(DATA, "opensim_dynamics.json"), "w") as fh:
        json.dump(result, fh, indent=1)
        fh.write("\n")


if __name__ == "__main__":
    main()
