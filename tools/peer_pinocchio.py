#!/usr/bin/env python3
"""Pinocchio as the peer of Mollier's kernel on the same serial chain, in the same run.

    python3 tools/peer_pinocchio.py [N ...]          # default: 10 100
    python3 tools/peer_pinocchio.py --json FILE      # reuse a saved output of chain_timing
    python3 tools/peer_pinocchio.py --body models/body/huston17.toml   # a tree: Huston's body

Runs `cargo run --release -p mollier-tests --example chain_timing` (tests/examples/chain_timing.rs),
which times Mollier and prints the chain's links, a fixed (q, q̇, q̈) and Mollier's driving torques
there. Builds the same chain in Pinocchio from those links (a revolute joint per link about the same
axis, placed at the same joint position, with the same mass, centre of mass, inertia and gravity),
checks that `pin.rnea` gives the same torques as both of Mollier's routes, the kinetostatics of a
frame and `dynamics::inverse_dynamics` (largest difference at most 1e-9 of the largest torque: an
independent check of Mollier's dynamics), times `pin.forwardKinematics`, `pin.rnea`,
`pin.computeJointJacobians` (beside Mollier's positions and DF) and
`pin.computeJointKinematicHessians` (beside positions, DF and D²F; on a tree with Mollier's tree
path also by its general solve) the same way (batches of calls, fastest and median per call, warm, in-process) and prints a table with the
ratios. Exits 1 when the torques differ; prints SKIPPED and exits 0 when Pinocchio is not
installed (pip install pin). The figures and what they mean: docs/performance.md.

With `--body MODEL`, the same for a tree read from a Mollier model file (`chain_timing --body`
times Mollier on it): the model's bodies are members of a tree whose `origin` names a point of
the lower body, each joined to it by hinges in series through bare orientation nodes, and the
reference member has its origin's coordinates as inputs (as `models/body/huston17.toml`). In
Pinocchio: a translation joint for the reference member, one revolute joint per hinge (massless
bodies between the hinges of a spherical joint), each member's mass, centre of mass and inertia on
its last hinge. Python 3.11 or later (tomllib).

Conventions. Mollier's reference configuration has every body frame parallel to the ground, so
each link's axis, joint position and centre of mass are given in global coordinates, and a
hinge's rotation turns the child about the axis by the right-hand rule (Euler parameters,
scalar first; the same sense as Pinocchio's revolute joints). In Pinocchio each joint frame is
placed at the link's joint position with the identity rotation, relative to its parent joint's
frame (the ground's origin for the first), so the joint frames at q = 0 coincide with Mollier's
reference; the inertia is Pinocchio's (mass, centre of mass relative to the joint, rotational
inertia about the centre of mass in the body frame).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

RTOL = 1e-9
SAMPLES = 301
BATCH_SECONDS = 5e-4


def build(pin, np, links, gravity):
    """The chain as a Pinocchio model: one revolute joint and one body per link."""
    model = pin.Model()
    model.gravity.linear = np.array(gravity, dtype=float)
    parent, prev = 0, np.zeros(3)
    for i, link in enumerate(links):
        axis = np.array(link["axis"], dtype=float)
        joint = np.array(link["joint"], dtype=float)
        placement = pin.SE3(np.eye(3), joint - prev)
        parent = model.addJoint(parent, joint_model(pin, axis), placement, f"joint{i}")
        # mass, centre of mass from the joint, inertia about the centre of mass (body frame)
        lever = np.array(link["com"], dtype=float) - joint
        inertia = pin.Inertia(float(link["mass"]), lever, np.array(link["inertia"], dtype=float))
        model.appendBodyToJoint(parent, inertia, pin.SE3.Identity())
        prev = joint
    return model


def build_tree(pin, np, path):
    """A tree model file (see --body) as a Pinocchio model, and the Mollier input of each of its
    coordinates in Pinocchio's order."""
    import tomllib

    with open(path, "rb") as f:
        spec = tomllib.load(f)
    if spec.get("units", {}).get("length", "m") != "m" or spec.get("units", {}).get("mass", "kg") != "kg":
        sys.exit(f"peer_pinocchio: {path}: only models in m and kg are read")
    bodies = spec["bodies"]
    # the hinge that turns each orientation: q -> (element, p, axis)
    by_q = {e["q"]: (name, e["p"], e["axis"]) for name, e in spec.get("elements", {}).items() if e["type"] == "hinge"}
    model = pin.Model()
    model.gravity.linear = np.array(spec.get("gravity", [0, 0, 0]), dtype=float)
    joint_of, order = {}, []
    for name, b in bodies.items():
        if isinstance(b["origin"], list):
            parent = model.addJoint(0, pin.JointModelTranslation(), pin.SE3.Identity(), f"{name}.xyz")
            order += [f"{name}.{a}" for a in "xyz"]
            placement = pin.SE3.Identity()
        else:
            lower, point = b["origin"].split(".")
            parent = joint_of[lower]
            placement = pin.SE3(np.eye(3), np.array(bodies[lower]["points"][point], dtype=float))
        chain, frame = [], name
        while frame in by_q:
            el, frame, axis = by_q[frame]
            chain.append((el, axis))
            if frame in bodies or frame not in by_q:
                break
        for el, axis in reversed(chain):
            parent = model.addJoint(parent, joint_model(pin, np.array(axis, dtype=float)), placement, el)
            order.append(f"{el}.rotation")
            placement = pin.SE3.Identity()
        com = b.get("com", [0, 0, 0])
        com = b["points"][com] if isinstance(com, str) else com
        xx, yy, zz, xy, xz, yz = b["inertia"]
        inertia = np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]], dtype=float)
        model.appendBodyToJoint(parent, pin.Inertia(float(b["mass"]), np.array(com, dtype=float), inertia), pin.SE3.Identity())
        joint_of[name] = parent
    return model, order


def joint_model(pin, axis):
    """Pinocchio's specialised joint for a coordinate axis (its fastest), else the general one."""
    for k, jm in enumerate((pin.JointModelRX, pin.JointModelRY, pin.JointModelRZ)):
        unit = [0.0, 0.0, 0.0]
        unit[k] = 1.0
        if list(axis) == unit:
            return jm()
    return pin.JointModelRevoluteUnaligned(axis / (axis @ axis) ** 0.5)


def timed(call, inputs):
    """Fastest and median time per call (µs), alternating between the inputs."""
    start, calls = time.perf_counter(), 0
    while calls < 20 or time.perf_counter() - start < 0.05:
        call(inputs[calls % 2])
        calls += 1
    per_call = (time.perf_counter() - start) / calls
    batch = max(2, int(BATCH_SECONDS / per_call + 1) & ~1)
    a, b = inputs
    samples = []
    for _ in range(SAMPLES):
        t = time.perf_counter_ns()
        for _ in range(batch // 2):
            call(a)
            call(b)
        samples.append((time.perf_counter_ns() - t) * 1e-3 / batch)
    return {"fastest": min(samples), "median": statistics.median(samples), "batch": batch}


def mollier(args, repo):
    if args.json:
        with open(args.json, encoding="utf-8") as f:
            return json.load(f)
    cmd = ["cargo", "run", "--quiet", "--release", "-p", "mollier-tests", "--example", "chain_timing", "--"]
    cmd += ["--body", os.path.abspath(args.body)] if args.body else [str(n) for n in args.n]
    out = subprocess.run(cmd, cwd=repo, stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"peer_pinocchio: `{' '.join(cmd)}` failed with status {out.returncode}")
    return json.loads(out.stdout)


def compare(pin, np, label, model, run, rows):
    """Check Pinocchio's rnea against Mollier's torques of one run (chain or tree) and time both;
    append the table's rows. True when the torques agree."""
    pdata = model.createData()
    q, qd, qdd = (np.array(run[k], dtype=float) for k in ("q", "qd", "qdd"))
    want = pin.rnea(model, pdata, q, qd, qdd).copy()
    scale = np.max(np.abs(want))
    ok_all = True
    for key, route in (("tau", "kinetostatics"), ("tau_df", "inverse_dynamics (DF)")):
        got = np.array(run[key], dtype=float)
        if got.shape != want.shape:
            sys.exit(f"peer_pinocchio: {label}: {key} has {got.size} torques, Pinocchio {want.size}")
        err = np.max(np.abs(got - want)) / scale
        ok = bool(np.all(np.isfinite(got))) and err <= RTOL
        ok_all &= ok
        verdict = "agree" if ok else f"FAILED (tolerance {RTOL:.0e})"
        print(
            f"{label}, Mollier by {route}: torques {verdict}: largest difference {err:.1e} "
            f"of the largest torque ({scale:.4g} N m)"
        )
    print(f"{label}: Mollier took {run['newton_iterations']} Newton iteration(s) per timed step")
    qs = (q, q + 0.01)
    fk = timed(lambda x: pin.forwardKinematics(model, pdata, x), qs)
    id_ = timed(lambda x: pin.rnea(model, pdata, x, qd, qdd), qs)
    jac = timed(lambda x: pin.computeJointJacobians(model, pdata, x), qs)
    hess = timed(lambda x: pin.computeJointKinematicHessians(model, pdata, x), qs)
    for what, key, peer in (
        ("positions / forwardKinematics", "positions_us", fk),
        ("inverse-dynamics frame / rnea", "inverse_dynamics_us", id_),
        ("frame by DF / rnea", "inverse_dynamics_df_us", id_),
        ("positions + DF / computeJointJacobians", "df_us", jac),
        ("same, general solve / computeJointJacobians", "df_us_general", jac),
        ("positions + DF + D²F / computeJointKinematicHessians", "d2f_us", hess),
        ("same, general solve / computeJointKinematicHessians", "d2f_us_general", hess),
    ):
        if key in run:
            rows.append((label, run["unknowns"], what, run[key], peer))
    return ok_all


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="*", type=int, default=[10, 100], help="chain lengths (default 10 100)")
    parser.add_argument("--json", help="output of chain_timing to use instead of running it")
    parser.add_argument("--body", help="a tree model file (models/body/huston17.toml) instead of chains")
    args = parser.parse_args()
    try:
        import numpy as np
        import pinocchio as pin
    except ImportError as e:
        print(f"SKIPPED: Pinocchio or numpy is not importable ({e}); install them with `pip install pin`")
        return 0

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    data = mollier(args, repo)
    rows, failed = [], False
    if args.body:
        model, order = build_tree(pin, np, args.body)
        if order != data["body"]["inputs"]:
            sys.exit(f"peer_pinocchio: {args.body}: Pinocchio's coordinates {order} are not Mollier's inputs")
        failed |= not compare(pin, np, os.path.basename(args.body), model, data["body"], rows)
    for chain in data.get("chains", []):
        model = build(pin, np, chain["links"], data["gravity"])
        failed |= not compare(pin, np, f"N = {chain['n']}", model, chain, rows)

    print()
    print(f"Pinocchio {pin.__version__}, Python {sys.version.split()[0]}; µs per call, fastest (median)")
    print("| model | Mollier unknowns | Mollier / Pinocchio | Mollier | Pinocchio | ratio, fastest (median) |")
    print("|---|---|---|---|---|---|")
    for n, unknowns, what, m, p in rows:
        # one decimal: the aims (3×) are judged on it
        ratio = f"{m['fastest'] / p['fastest']:.1f} ({m['median'] / p['median']:.1f})"
        mollier_us = f"{m['fastest']:.3g} ({m['median']:.3g})"
        peer_us = f"{p['fastest']:.3g} ({p['median']:.3g})"
        print(f"| {n} | {unknowns} | {what} | {mollier_us} | {peer_us} | {ratio} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
