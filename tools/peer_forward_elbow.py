#!/usr/bin/env python3
"""An independent forward-dynamics reference for Mollier's Rosenbrock step (issue 41).

    python3 -m venv venv && venv/bin/pip install scipy numpy
    venv/bin/python tools/peer_forward_elbow.py            # writes the reference
    venv/bin/python tools/peer_forward_elbow.py --check    # recomputes it and compares

The model is models/forward/elbow.toml written out by hand: one hinge (the elbow, rotation q
about the global z through the origin, q = 0 with the forearm along +x), the forearm's mass and
inertia, gravity along -y, the passive joint moment of Chadwick et al. 2014, eq. 4 (as the model's
`law`), and two straight Hill muscles of Chadwick et al. 2014, App. A (activation, eq. 1;
contraction, eqs. 2, 12-16; DAS3's choices where the paper is silent, as docs/forward-dynamics.md
states them). None of Mollier's code is used: the equations of motion are the one-degree-of-freedom
Newton-Euler balance about the hinge, the paths' lengths and moment arms closed forms of the points.

The contraction dynamics are implicit in ds/dt (the force-velocity curve and the CE viscosity);
here ds/dt is solved from the force balance by bracketing (it is strictly increasing in ds/dt), so
the system is an explicit ODE, integrated by SciPy's DOP853 at rtol = atol = 1e-12 and checked
against Radau at the same tolerances (their largest difference is recorded).

The excitations are smooth functions of time (below, and the same in the Rust test). The start is
rest: q = 0, v = 0, each active state equal to its excitation at t = 0 and its fibres in isometric
equilibrium. The output, crates/mollier/tests/fixtures/elbow_forward_reference.csv, has one row
every 10 ms: t, q, v, then per muscle s (m, fibre length x cos pennation) and a; its header
records the versions, the date and the command.
"""

import argparse
import datetime
import math
import os
import sys

import numpy as np
import scipy
from scipy.integrate import solve_ivp
from scipy.optimize import brentq

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
OUT = os.path.join(REPO, "crates/mollier/tests/fixtures/elbow_forward_reference.csv")

DEG = math.pi / 180.0
G = 9.81
# the forearm: 1.5 kg, centre of mass 150 mm along its x, Izz 11000 kg mm^2 about the centre
MASS, COM, IZZ = 1.5, 0.150, 11000e-6
I_HINGE = IZZ + MASS * COM**2
# the joint's law in SI (the file's values are per degree): sigma = preload + k q + b v, stops
K_JOINT = 0.0872665 / DEG
B_JOINT = 0.0174533 / DEG
PRELOAD = 1.308997
RANGE = (-90.0 * DEG, 60.0 * DEG)
K_STOP = 1.523087 / DEG**2

# the muscles: origin on the humerus (global, m), insertion on the forearm (its frame, m),
# F_max (N), L_CEopt (m), tendon slack (m), pennation at optimum (rad), T_act, T_deact (s)
MUSCLES = [
    dict(name="biceps", origin=(0.030, 0.280), insertion=(0.045, 0.010), fmax=625.0, lopt=0.116,
         slack=0.160, pen=0.0, tact=0.015, tdeact=0.060),
    dict(name="triceps", origin=(-0.020, 0.220), insertion=(-0.025, 0.004), fmax=800.0, lopt=0.090,
         slack=0.125, pen=9.0 * DEG, tact=0.015, tdeact=0.060),
]
# Chadwick et al. 2014, App. A
WIDTH, A_HILL, VMAX_PER_LOPT, GMAX, K1 = 0.56, 0.25, 10.0, 1.5, 10.0
TENDON_STRAIN = 0.04
BETA = 0.001  # DAS3's CE viscosity, F_max per L_CEopt/s

DURATION, EVERY = 0.6, 0.01


def excitations(t):
    """The excitations (0..1) at time t (s): the biceps rises and falls, the triceps lags it."""
    b = 0.05 + 0.75 * math.sin(math.pi * t / DURATION) ** 2
    tr = 0.05 + 0.25 * math.sin(math.pi * max(t - 0.2, 0.0) / (DURATION - 0.2)) ** 2
    return (b, tr)


def path(m, q):
    """Length (m) of a straight path and its derivative dL/dq (m/rad) at elbow angle q."""
    c, s = math.cos(q), math.sin(q)
    px, py = m["insertion"]
    ix, iy = c * px - s * py, s * px + c * py
    dx, dy = ix - m["origin"][0], iy - m["origin"][1]
    length = math.hypot(dx, dy)
    # d(insertion)/dq = z x insertion = (-iy, ix)
    return length, (dx * -iy + dy * ix) / length


def spring(x, k2):
    """A passive element's force (N) at stretch x (m) beyond slack: k1 x, plus k2 x^2 stretched."""
    return K1 * x + (k2 * x * x if x > 0.0 else 0.0)


def fibre(m, s):
    """Fibre length (m) and cos(pennation) from s = L_CE cos(phi) at constant L_CE sin(phi)."""
    b = m["lopt"] * math.sin(m["pen"])
    lce = math.hypot(s, b)
    return lce, s / lce


def force_velocity(m, v):
    vmax = VMAX_PER_LOPT * m["lopt"]
    if v <= 0.0:
        return (vmax + v) / (vmax - v / A_HILL)
    c3 = vmax * A_HILL * (GMAX - 1.0) / (A_HILL + 1.0)
    return (GMAX * v + c3) / (v + c3)


def tendon_force(m, length, s):
    k2 = m["fmax"] / (TENDON_STRAIN * m["slack"]) ** 2
    return spring(length - s - m["slack"], k2)


def balance(m, a, s, sdot, length):
    """Tendon force minus the fibres' (CE, PEE, viscosity) along the tendon, N: zero on solutions."""
    lce, cos = fibre(m, s)
    fl = math.exp(-(((lce - m["lopt"]) / (WIDTH * m["lopt"])) ** 2))
    pee = spring(lce - m["lopt"], m["fmax"] / (WIDTH * m["lopt"]) ** 2)
    active = a * m["fmax"] * fl * force_velocity(m, sdot * cos)
    return tendon_force(m, length, s) - (active + pee) * cos - BETA * m["fmax"] * sdot / m["lopt"]


def root(f, lo, hi):
    """A root of f, decreasing from f(lo) > 0 to f(hi) < 0, widening the bracket as needed."""
    while f(lo) < 0.0:
        lo -= max(1.0, abs(lo))
    while f(hi) > 0.0:
        hi += max(1.0, abs(hi))
    return brentq(f, lo, hi, xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500)


def contraction_rate(m, a, s, length):
    return root(lambda sd: balance(m, a, s, sd, length), -1.0, 1.0)


def isometric(m, a, length):
    """s (m) with the fibres at rest in equilibrium with the tendon at path length `length`."""
    # the balance falls as s grows: the tendon slackens while the fibres stretch
    return brentq(lambda s: balance(m, a, s, 0.0, length), 1e-6 * m["lopt"], length,
                  xtol=1e-300, rtol=4.0 * np.finfo(float).eps, maxiter=500)


def rates(t, x):
    q, v = x[0], x[1]
    n = len(MUSCLES)
    s, a = x[2:2 + n], x[2 + n:]
    u = excitations(t)
    torque = -MASS * G * COM * math.cos(q)
    sigma = PRELOAD + K_JOINT * q + B_JOINT * v
    if q > RANGE[1]:
        sigma += K_STOP * (q - RANGE[1]) ** 2
    elif q < RANGE[0]:
        sigma -= K_STOP * (q - RANGE[0]) ** 2
    torque -= sigma
    sdot, adot = [], []
    for k, m in enumerate(MUSCLES):
        length, dl = path(m, q)
        torque -= tendon_force(m, length, s[k]) * dl
        sdot.append(contraction_rate(m, a[k], s[k], length))
        adot.append((u[k] / m["tact"] + (1.0 - u[k]) / m["tdeact"]) * (u[k] - a[k]))
    return [v, torque / I_HINGE, *sdot, *adot]


def start():
    u = excitations(0.0)
    s = [isometric(m, u[k], path(m, 0.0)[0]) for k, m in enumerate(MUSCLES)]
    return [0.0, 0.0, *s, *u]


def integrate(method):
    times = np.linspace(0.0, DURATION, round(DURATION / EVERY) + 1)
    sol = solve_ivp(rates, (0.0, DURATION), start(), method=method, t_eval=times, rtol=1e-12, atol=1e-12)
    if not sol.success:
        sys.exit(f"{method}: {sol.message}")
    return times, sol.y.T, sol.nfev


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="recompute and compare with the committed file")
    args = ap.parse_args()
    times, rows, nfev = integrate("DOP853")
    _, radau, _ = integrate("Radau")
    # the reference's own error: the two methods' largest difference per column over its scale
    spread = max(float(np.max(np.abs(rows[:, j] - radau[:, j])) / max(np.max(np.abs(rows[:, j])), 1e-12))
                 for j in range(rows.shape[1]))
    names = [m["name"] for m in MUSCLES]
    header = ["t", "q", "v"] + [f"s:{n}" for n in names] + [f"a:{n}" for n in names]
    if args.check:
        with open(OUT, encoding="utf-8") as f:
            lines = [line for line in f if not line.startswith("#")][1:]
        committed = np.array([[float(v) for v in line.split(",")[1:]] for line in lines])
        worst = float(np.max(np.abs(committed - rows) / np.maximum(np.max(np.abs(rows), axis=0), 1e-12)))
        print(f"largest relative difference against the committed reference: {worst:.2e}")
        sys.exit(0 if worst < 1e-9 else 1)
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("# Forward dynamics of models/forward/elbow.toml, written independently of Mollier\n")
        f.write("# (tools/peer_forward_elbow.py: the elbow's Newton-Euler balance, Chadwick et al. 2014\n")
        f.write("# App. A muscles), integrated by SciPy DOP853 at rtol = atol = 1e-12.\n")
        f.write(f"# command: python3 tools/peer_forward_elbow.py; date: {datetime.date.today().isoformat()};\n")
        f.write(f"# python {sys.version.split()[0]}, numpy {np.__version__}, scipy {scipy.__version__};\n")
        f.write(f"# {nfev} evaluations; largest relative difference from Radau at the same tolerances: {spread:.1e}\n")
        f.write("# units: s, rad, rad/s, m (s = fibre length x cos pennation), activation 0..1\n")
        f.write(",".join(header) + "\n")
        for t, r in zip(times, rows):
            f.write(",".join([repr(float(t))] + [repr(float(v)) for v in r]) + "\n")
    print(f"wrote {os.path.relpath(OUT, REPO)}: {len(times)} rows; DOP853 {nfev} evaluations; "
          f"against Radau {spread:.1e}; q from {rows[0, 0] / DEG:.2f} deg to max {np.max(rows[:, 0]) / DEG:.2f} "
          f"min {np.min(rows[:, 0]) / DEG:.2f} deg")


if __name__ == "__main__":
    main()
