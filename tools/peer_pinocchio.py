#!/usr/bin/env python3
"""Pinocchio as the peer of Mollier's kernel on the same serial chain, in the same run.

    python3 tools/peer_pinocchio.py [N ...]          # default: 10 100
    python3 tools/peer_pinocchio.py --json FILE      # reuse a saved output of chain_timing

Runs `cargo run --release -p mollier-tests --example chain_timing` (tests/examples/chain_timing.rs),
which times Mollier and prints the chain's links, a fixed (q, q̇, q̈) and Mollier's driving torques
there. Builds the same chain in Pinocchio from those links (a revolute joint per link about the same
axis, placed at the same joint position, with the same mass, centre of mass, inertia and gravity),
checks that `pin.rnea` gives the same torques as both of Mollier's routes, the kinetostatics of a
frame and `dynamics::inverse_dynamics` (largest difference at most 1e-9 of the largest torque: an
independent check of Mollier's dynamics), times `pin.forwardKinematics` and `pin.rnea` the same
way (batches of calls, fastest and median per call, warm, in-process) and prints a table with the
ratios. Exits 1 when the torques differ; prints SKIPPED and exits 0 when Pinocchio is not
installed (pip install pin). The figures and what they mean: docs/performance.md.

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
    cmd += [str(n) for n in args.n]
    out = subprocess.run(cmd, cwd=repo, stdout=subprocess.PIPE, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"peer_pinocchio: `{' '.join(cmd)}` failed with status {out.returncode}")
    return json.loads(out.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("n", nargs="*", type=int, default=[10, 100], help="chain lengths (default 10 100)")
    parser.add_argument("--json", help="output of chain_timing to use instead of running it")
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
    for chain in data["chains"]:
        n = chain["n"]
        model = build(pin, np, chain["links"], data["gravity"])
        pdata = model.createData()
        q, qd, qdd = (np.array(chain[k], dtype=float) for k in ("q", "qd", "qdd"))
        want = pin.rnea(model, pdata, q, qd, qdd).copy()
        scale = np.max(np.abs(want))
        for key, route in (("tau", "kinetostatics"), ("tau_df", "inverse_dynamics (DF)")):
            got = np.array(chain[key], dtype=float)
            if got.shape != want.shape:
                sys.exit(f"peer_pinocchio: N = {n}: {key} has {got.size} torques, Pinocchio {want.size}")
            err = np.max(np.abs(got - want)) / scale
            ok = bool(np.all(np.isfinite(got))) and err <= RTOL
            failed |= not ok
            verdict = "agree" if ok else f"FAILED (tolerance {RTOL:.0e})"
            print(
                f"N = {n}, Mollier by {route}: torques {verdict}: largest difference {err:.1e} "
                f"of the largest torque ({scale:.4g} N m)"
            )
        print(f"N = {n}: Mollier took {chain['newton_iterations']} Newton iteration(s) per timed step")
        qs = (q, q + 0.01)
        fk = timed(lambda x: pin.forwardKinematics(model, pdata, x), qs)
        id_ = timed(lambda x: pin.rnea(model, pdata, x, qd, qdd), qs)
        for what, key, peer in (
            ("positions / forwardKinematics", "positions_us", fk),
            ("inverse-dynamics frame / rnea", "inverse_dynamics_us", id_),
            ("frame by DF / rnea", "inverse_dynamics_df_us", id_),
        ):
            rows.append((n, chain["unknowns"], what, chain[key], peer))

    print()
    print(f"Pinocchio {pin.__version__}, Python {sys.version.split()[0]}; µs per call, fastest (median)")
    print("| N | Mollier unknowns | Mollier / Pinocchio | Mollier | Pinocchio | ratio, fastest (median) |")
    print("|---|---|---|---|---|---|")
    for n, unknowns, what, m, p in rows:
        ratio = f"{m['fastest'] / p['fastest']:.0f} ({m['median'] / p['median']:.0f})"
        mollier_us = f"{m['fastest']:.3g} ({m['median']:.3g})"
        peer_us = f"{p['fastest']:.3g} ({p['median']:.3g})"
        print(f"| {n} | {unknowns} | {what} | {mollier_us} | {peer_us} | {ratio} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
