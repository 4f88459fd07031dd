#!/usr/bin/env python3
"""An independent peer for `mollier optimize models/optimal-control/elbow-flexion.toml` (issue 39).

    python3 -m venv /tmp/casadi && /tmp/casadi/bin/pip install casadi==3.8.2 numpy
    /tmp/casadi/bin/python tools/peer_casadi_elbow.py            # writes the reference
    /tmp/casadi/bin/python tools/peer_casadi_elbow.py --check    # recomputes it and compares
    /tmp/casadi/bin/python tools/peer_casadi_elbow.py --time DIR [--tol T]   # times it, writes DIR/elbow.json

The peer is CasADi 3.8.2 from PyPI (its wheel ships IPOPT 3.14.19 with MUMPS 5.8.2); without it the script
says SKIPPED and exits 0. `--check` exits 1 when a value of the recomputed grid differs from the
committed one by more than 1e-7. The Rust test that reads the grid
(`crates/mollier/tests/optimize_moco.rs::the_elbow_flexion_reaches_the_casadi_peers_optimum`)
holds Mollier to the objective within 1e-6 (relative) and the states and excitations within the
limits it states.

The problem: the elbow of models/forward/elbow.toml flexed from the horizontal (q = 0) to 30 deg
in 0.5 s, from rest to rest (v = 0 at both ends), with the least integral of the squared
excitations. The model is written out by hand from the model file, Chadwick et al. 2014 (App. A:
activation, eq. 1; contraction, eqs. 2, 12-16; the passive joint moment, eq. 4) and Mollier's
docs/forward-dynamics.md (DAS3's choices where the paper is silent); none of Mollier's code is
used. The equations of motion are the one-degree-of-freedom balance about the hinge, the muscle
paths' lengths and moment arms closed forms of their two points.

The transcription is the one docs/optimal-control.md states, rebuilt here in CasADi: separated
Hermite-Simpson on 25 intervals (51 grid points, the midpoints grid points); per point the state
x = (q, v, s_biceps, s_triceps, a_biceps, a_triceps), its rate xd and the excitations e as
variables; the dynamics the implicit residual f(x, xd, e) = 0 at every point (the contraction
dynamics are implicit in ds/dt); the midpoint's excitations the mean of its ends'; the objective
the Simpson quadrature of sum(e^2). The start is the rest state (q = 0, v = 0, a = 0, each
muscle's fibres in isometric equilibrium with its tendon at a = 0), the end q = pi/6, v = 0;
activations within [0, 1], contraction states >= 0, excitations within [0, 1]. The guess is
Mollier's `linear` one (states linear from start to end, rates their slope, e = 0.05).

CasADi differentiates the NLP exactly (its Hessian of the Lagrangian too) and IPOPT solves it at
tol 1e-10. The output, crates/mollier/tests/data/casadi/elbow_flexion.csv, has one row per grid
point: t, the six states, the two excitations; its header records the objective, IPOPT's status
and iterations, the versions, the date and the command.

`--time DIR` (for `cargo bench -p mollier --bench optimize -- --casadi PYTHON`) solves at `--tol`
(default 1e-10) and writes DIR/elbow.json: `solve_wall_s` (the solver's call alone),
`setup_wall_s` (the transcription and `nlpsol`, CasADi's building of the NLP and its exact
derivatives), iterations and objective; the reference file is left as it is.
"""

import argparse
import datetime
import json
import math
import os
import sys
import time

try:
    import casadi as ca
    import numpy as np
except ImportError as e:
    print(f"SKIPPED: peer_casadi_elbow: {e} (pip install casadi numpy)")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates/mollier/tests/data/casadi/elbow_flexion.csv")

DEG = math.pi / 180.0
G = 9.81
# the forearm and hand: 1.5 kg, centre of mass 150 mm along the forearm, Izz 11000 kg mm^2 there
MASS, COM, IZZ = 1.5, 0.150, 11000e-6
INERTIA = IZZ + MASS * COM**2  # about the hinge (parallel axes)
# the elbow's law (the file gives it per degree): preload + k q + b v, quadratic stops outside
STIFF, DAMP, PRELOAD = 0.0872665 / DEG, 0.0174533 / DEG, 1.308997
LOW, HIGH, STOP = -90.0 * DEG, 60.0 * DEG, 1.523087 / DEG**2

# origin on the (fixed) humerus in the global frame, insertion in the forearm's frame (m);
# F_max (N), optimal fibre length (m), tendon slack length (m), pennation at optimum (rad),
# activation and deactivation time constants (s: the model's, and Mollier's defaults for triceps)
BICEPS = dict(origin=(0.030, 0.280), insertion=(0.045, 0.010), fmax=625.0, lopt=0.116, slack=0.160,
              pen=0.0, t_act=0.015, t_deact=0.060)
TRICEPS = dict(origin=(-0.020, 0.220), insertion=(-0.025, 0.004), fmax=800.0, lopt=0.090, slack=0.125,
               pen=9.0 * DEG, t_act=0.015, t_deact=0.060)
MUSCLES = (BICEPS, TRICEPS)
# Chadwick et al. 2014, App. A: force-length width, Hill's a, v_max (L_opt/s), eccentric
# plateau, the passive elements' linear stiffness (N/m), the tendon's strain at F_max; DAS3's CE
# damping (F_max per L_opt/s)
WIDTH, HILL_A, VMAX, FV_PLATEAU, K_LIN, STRAIN_AT_FMAX, DAMPING = 0.56, 0.25, 10.0, 1.5, 10.0, 0.04, 0.001

DURATION, INTERVALS = 0.5, 25
Q_END = math.pi / 6.0
GUESS_E = 0.05


def path(mu, q):
    """The muscle's length (m) and dL/dq (m/rad): a straight line, insertion turned by q about z."""
    ix = ca.cos(q) * mu["insertion"][0] - ca.sin(q) * mu["insertion"][1]
    iy = ca.sin(q) * mu["insertion"][0] + ca.cos(q) * mu["insertion"][1]
    dx, dy = ix - mu["origin"][0], iy - mu["origin"][1]
    length = ca.sqrt(dx * dx + dy * dy)
    return length, (-dx * iy + dy * ix) / length


def stretched(x, k_quad):
    """A passive element's force (N) at x (m) beyond its slack length: linear, plus quadratic when
    stretched."""
    return K_LIN * x + ca.if_else(x > 0, k_quad * x * x, 0)


def tendon(mu, length, s):
    return stretched(length - s - mu["slack"], mu["fmax"] / (STRAIN_AT_FMAX * mu["slack"]) ** 2)


def force_length_velocity_balance(mu, a, s, sd, length):
    """Tendon force minus the fibres' force along the tendon (N): zero on the dynamics.

    s = L_CE cos(phi) with L_CE sin(phi) constant (the muscle's width), so the fibre's rate is
    cos(phi) ds/dt."""
    width = mu["lopt"] * math.sin(mu["pen"])
    lce = ca.sqrt(s * s + width * width)
    cos = s / lce
    fl = ca.exp(-(((lce - mu["lopt"]) / (WIDTH * mu["lopt"])) ** 2))
    v = cos * sd
    vmax = VMAX * mu["lopt"]
    c = vmax * HILL_A * (FV_PLATEAU - 1.0) / (HILL_A + 1.0)
    fv = ca.if_else(v <= 0, (vmax + v) / (vmax - v / HILL_A), (FV_PLATEAU * v + c) / (v + c))
    parallel = stretched(lce - mu["lopt"], mu["fmax"] / (WIDTH * mu["lopt"]) ** 2)
    return tendon(mu, length, s) - (a * mu["fmax"] * fl * fv + parallel) * cos - DAMPING * mu["fmax"] * sd / mu["lopt"]


def residual(x, xd, e):
    """f(x, xd, e): the implicit dynamics, 6 rows (zero on solutions)."""
    q, v = x[0], x[1]
    moment = -MASS * G * COM * ca.cos(q) - (PRELOAD + STIFF * q + DAMP * v)
    moment -= ca.if_else(q > HIGH, STOP * (q - HIGH) ** 2, 0) - ca.if_else(q < LOW, STOP * (q - LOW) ** 2, 0)
    rows_s, rows_a = [], []
    for k, mu in enumerate(MUSCLES):
        s, a = x[2 + k], x[4 + k]
        length, dl = path(mu, q)
        moment -= tendon(mu, length, s) * dl
        rows_s.append(force_length_velocity_balance(mu, a, s, xd[2 + k], length))
        rows_a.append(xd[4 + k] - (e[k] / mu["t_act"] + (1.0 - e[k]) / mu["t_deact"]) * (e[k] - a))
    return ca.vertcat(xd[0] - v, INERTIA * xd[1] - moment, *rows_s, *rows_a)


def rest_contraction(mu):
    """s (m) of the fibres at rest in equilibrium with the tendon at q = 0, a = 0 (Newton)."""
    s = ca.SX.sym("s")
    f = ca.Function("f", [s], [force_length_velocity_balance(mu, 0.0, s, 0.0, path(mu, 0.0)[0])])
    solve = ca.rootfinder("rest", "newton", f, {"abstol": 1e-15})
    return float(solve(mu["lopt"]))


def transcribe():
    nx, nu = 6, 2
    points = 2 * INTERVALS + 1
    h = DURATION / INTERVALS
    X = ca.MX.sym("x", nx, points)
    XD = ca.MX.sym("xd", nx, points)
    E = ca.MX.sym("e", nu, points)
    g, lbg, ubg = [], [], []

    def equal(expr):
        g.append(expr)
        lbg.extend([0.0] * expr.shape[0])
        ubg.extend([0.0] * expr.shape[0])

    xs, xds, es = ca.SX.sym("x", nx), ca.SX.sym("xd", nx), ca.SX.sym("e", nu)
    f = ca.Function("f", [xs, xds, es], [residual(xs, xds, es)])
    for i in range(points):
        equal(f(X[:, i], XD[:, i], E[:, i]))
    for k in range(INTERVALS):
        a, c, b = 2 * k, 2 * k + 1, 2 * k + 2
        equal(X[:, c] - (X[:, a] + X[:, b]) / 2 - h / 8 * (XD[:, a] - XD[:, b]))
        equal(X[:, b] - X[:, a] - h / 6 * (XD[:, a] + 4 * XD[:, c] + XD[:, b]))
        equal(E[:, c] - (E[:, a] + E[:, b]) / 2)
    weights = np.zeros(points)
    for k in range(INTERVALS):
        weights[2 * k] += h / 6
        weights[2 * k + 1] += 4 * h / 6
        weights[2 * k + 2] += h / 6
    J = sum(weights[i] * ca.sumsqr(E[:, i]) for i in range(points))

    rest = [0.0, 0.0, rest_contraction(BICEPS), rest_contraction(TRICEPS), 0.0, 0.0]
    end = [Q_END, 0.0] + rest[2:]
    inf = np.inf
    lbx, ubx = np.full((nx, points), -inf), np.full((nx, points), inf)
    lbx[2:4, :], lbx[4:6, :], ubx[4:6, :] = 0.0, 0.0, 1.0
    lbx[:, 0] = ubx[:, 0] = rest
    lbx[0:2, -1] = ubx[0:2, -1] = end[0:2]
    times = np.linspace(0.0, DURATION, points)
    x0 = np.array([[rest[j] + (end[j] - rest[j]) * t / DURATION for t in times] for j in range(nx)])
    xd0 = np.repeat(((np.array(end) - np.array(rest)) / DURATION)[:, None], points, axis=1)

    def flat(m):
        return np.asarray(m).flatten(order="F")  # CasADi's column-major order
    z = ca.veccat(X, XD, E)
    nlp = {"x": z, "f": J, "g": ca.vertcat(*g)}
    bounds = dict(
        x0=np.concatenate([flat(x0), flat(xd0), np.full(nu * points, GUESS_E)]),
        lbx=np.concatenate([flat(lbx), np.full(nx * points, -inf), np.zeros(nu * points)]),
        ubx=np.concatenate([flat(ubx), np.full(nx * points, inf), np.ones(nu * points)]),
        lbg=lbg,
        ubg=ubg,
    )
    return nlp, bounds, times, (nx, nu, points)


def solve(tol=1e-10, timing=None):
    t0 = time.perf_counter()
    nlp, bounds, times, (nx, nu, points) = transcribe()
    solver = ca.nlpsol("elbow", "ipopt", nlp, {"ipopt.tol": tol, "ipopt.print_level": 0, "print_time": False})
    t1 = time.perf_counter()
    sol = solver(**bounds)
    if timing is not None:
        timing.update(setup_wall_s=t1 - t0, solve_wall_s=time.perf_counter() - t1)
    stats = solver.stats()
    z = np.asarray(sol["x"]).flatten()
    x = z[: nx * points].reshape((points, nx))
    e = z[2 * nx * points:].reshape((points, nu))
    g = np.asarray(sol["g"]).flatten()
    return times, x, e, float(sol["f"]), stats, float(np.max(np.abs(g)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="recompute and compare with the committed file")
    ap.add_argument("--time", metavar="DIR", help="time the solve and write DIR/elbow.json")
    ap.add_argument("--tol", type=float, default=1e-10, help="IPOPT's tol (with --time)")
    args = ap.parse_args()
    timing = {}
    times, x, e, objective, stats, residual_max = solve(args.tol if args.time else 1e-10, timing)
    if not stats["success"]:
        sys.exit(f"IPOPT: {stats['return_status']}")
    if args.time:
        os.makedirs(args.time, exist_ok=True)
        timing.update(iterations=stats["iter_count"], objective=objective, tol=args.tol, casadi=ca.__version__)
        with open(os.path.join(args.time, "elbow.json"), "w", encoding="utf-8") as f:
            json.dump(timing, f)
        return
    rows = np.hstack([times[:, None], x, e])
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            lines = [line for line in f if not line.startswith("#")][1:]
        committed = np.array([[float(v) for v in line.split(",")] for line in lines])
        worst = float(np.max(np.abs(committed - rows)))
        print(f"largest difference against the committed reference: {worst:.2e}")
        sys.exit(0 if worst < 1e-7 else 1)
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("# models/optimal-control/elbow-flexion.toml solved independently of Mollier\n")
        f.write("# (tools/peer_casadi_elbow.py: the elbow's equations written out by hand, Chadwick et al. 2014\n")
        f.write("# App. A muscles; separated Hermite-Simpson, 25 intervals; CasADi's exact derivatives, IPOPT tol 1e-10)\n")
        f.write(f"# objective: {objective!r}\n")
        f.write(f"# status: {stats['return_status']}; iterations: {stats['iter_count']}; "
                f"largest constraint residual: {residual_max:.1e}\n")
        f.write(f"# command: python3 tools/peer_casadi_elbow.py; date: {datetime.date.today().isoformat()};\n")
        f.write(f"# python {sys.version.split()[0]}, numpy {np.__version__}, casadi {ca.__version__}\n")
        f.write("# units: s, rad, rad/s, m (s = fibre length x cos pennation), activation and excitation 0..1\n")
        f.write("t,q,v,s:biceps,s:triceps,a:biceps,a:triceps,e:biceps,e:triceps\n")
        for r in rows:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
    print(f"wrote {os.path.relpath(OUT, REPO)}: objective {objective:.10g}, {stats['return_status']}, "
          f"{stats['iter_count']} iterations; peak e biceps {e[:, 0].max():.4f}, triceps {e[:, 1].max():.4f}")


if __name__ == "__main__":
    main()
