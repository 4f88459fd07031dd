#!/usr/bin/env python3
"""Write models/optimal-control/shoulder-flexion-track.toml from the flexion's target motion
(models/shoulder/flexion-target.csv, by models/shoulder/tools/flexion_target.py: the humerus
elevated to 78.4 deg in the plane near 50 deg in 1.3 s, Fig. 3 of Chadwick et al. 2014, the
girdle by the shoulder rhythm). Every nine joint rotations' target is tracked, every `EVERY`-th
row of the target; usage: make_flexion_track.py [INTERVALS].

`--predict-variant FILE [--held] [--held-end] [--cubed] [--acceleration W] [--volume] [--plane D]
[--thorax]` writes
only a variant of the predicted problem to FILE (for `solve_flexion.sh` with PROBLEM=FILE):
`--held` holds its start in equilibrium (`initial_equilibrium`), `--held-end` its end
(`final_equilibrium`), `--cubed` makes the effort `0.1 ∫ Σ e² dt + ∫ Σ a³ dt`,
`--acceleration W` adds `W ∫ Σ q̈² dt` to the effort, `--volume` weighs each muscle's
excitation by its volume (maximum force times optimal fibre length) over the mean of the
model's, `--plane D` holds the humerus (the glenohumeral centre to the elbow) in a band about
the vertical plane of the target's final humerus at every point, `|n·d/|d|| ≤ sin 20° sin D = b`:
within ±D of that plane at 20° of elevation, narrower above (±D/2.9 at 80° for D = 10), free
where the arm hangs; and on the target's side of the thorax's vertical, `u·d/|d| ≥ −b` with `u`
the plane's horizontal direction (the band alone also admits the plane 180° from it) (docs/optimal-control-measurements.md gives each variant's measured
EMG windows). `--elbow D` solves the variant on shoulder-forward-elbow.toml (the forearm on its
own hinge) with the elbow's rotation `el_x` held within [0, D] deg of DAS3's extended default
(EL_x 5 deg) over the whole motion, the arm raised with the elbow straight as in the EMG
studies' task; its final value is free. `--thorax` holds the scapula's contact points TS and AI
on the thorax (their soft contacts' levels at most 0, `[constraints.modes]`): the contact only
pushes, and without it an optimum may lift the medial border off the thorax."""

import argparse
import csv
import math
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parent.parent / "shoulder" / "flexion-target.csv"
OUT = HERE.parent / "shoulder-flexion-track.toml"
PREDICT = HERE.parent / "shoulder-flexion-predict.toml"
# The committed predicted problem: both ends held, the effort 0.1 e² + a³ with the accelerations
# priced so that a motion as smooth as the target's costs as much as the tracked optimum's effort
# (0.975 / 45, the rule of docs/optimal-control-measurements.md), the scapula on the thorax
COMMITTED_PREDICT = dict(held=True, held_end=True, cubed=True, acceleration=2.2e-2, thorax=True)
MODEL = HERE.parent.parent / "shoulder" / "shoulder-forward.toml"
EVERY = 5  # rows of the target (10 ms apart): a reference point every 50 ms
WEIGHT = 1.0e3  # per rad² s: a 1 deg error held 1 s costs 0.30, as much as 0.055 excitation of all 95 muscles
# The plane of the target's final humerus (glenohumeral centre to elbow, `mollier kinematics` of
# flexion-target.csv's last row: direction (0.65280, -0.17368, -0.73735) in the thorax frame,
# 80.0 deg elevated): 48.48 deg from the frontal plane towards the front (-z)
PLANE = 48.48
# OpenSim Moco's tolerances for muscle-driven problems (MocoInverse's defaults: convergence and
# constraint tolerance 1e-3); 30 L-BFGS pairs, not IPOPT's 6 (docs/optimal-control.md, "The shoulder's flexion")
SOLVER = [
    "[solver]",
    "tolerance = 1e-3",
    "max_iterations = 3000",
    "hessian_history = 30",
    "",
    "[solver.ipopt]",
    "constr_viol_tol = 1e-3",
    "",
]


def volumes():
    """Each muscle's volume (max_force x optimal_fibre_length) over the mean, from the model."""
    text = MODEL.read_text()
    v = {}
    for m in re.finditer(r"^\[muscles\.(\w+)\][^\n]*\n((?:[^\[\n][^\n]*\n|\n)*)", text, re.M):
        fields = dict(re.findall(r"^(\w+) = ([-+.\deE]+)", m.group(2), re.M))
        v[m.group(1)] = float(fields["max_force"]) * float(fields["optimal_fibre_length"])
    mean = sum(v.values()) / len(v)
    return {k: x / mean for k, x in v.items()}


def settings(intervals, *extra, held=False, held_end=False, cubed=False, acceleration=0.0, volume=False, plane=0.0,
             elbow=0.0, thorax=False):
    """The lines both problems share, with `extra` after the scheme; `held`, `held_end`, `cubed`,
    `acceleration`, `volume`, `plane`, `elbow` and `thorax` as the predicted variants' options."""
    model = "shoulder-forward-elbow.toml" if elbow else "shoulder-forward.toml"
    head = [f'model = "../shoulder/{model}"', "duration = 1.3", f"intervals = {intervals}"]
    head += ['scheme = "trapezoidal"', *extra, "joint_ranges = true", "free_initial_muscles = true"]
    head += ["initial_equilibrium = true"] if held else []
    head += ["final_equilibrium = true"] if held_end else []
    effort = ["excitation = 0.1", "activation_cubed = 1.0"] if cubed else ["excitation = 1.0"]
    objective = ["[objective]", *effort]
    objective += [f"acceleration = {acceleration:g}"] if acceleration else []
    objective += [""]
    if volume:
        objective += ["[objective.excitation_weights]"]
        objective += [f"{k} = {w:.4f}" for k, w in volumes().items()] + [""]
    if plane:
        # the unit normal of the vertical plane at PLANE deg from the frontal plane (x lateral, z dorsal)
        phi, band = math.radians(PLANE), math.sin(math.radians(20)) * math.sin(math.radians(plane))
        objective += ["[constraints.direction.plane_of_elevation]", 'from = "scapula.GH"', 'to = "humerus.elbow"']
        objective += [f"normal = [{math.sin(phi):.6f}, 0.0, {math.cos(phi):.6f}]"]
        objective += [f"bounds = [{-band:.6f}, {band:.6f}]", ""]
        # the band holds a line of planes, PLANE and PLANE + 180 deg (the arm swung back across the
        # body): this keeps the humerus on the target's side, within 90 deg of PLANE, once sin θ > b
        objective += ["[constraints.direction.plane_side]", 'from = "scapula.GH"', 'to = "humerus.elbow"']
        objective += [f"normal = [{math.cos(phi):.6f}, 0.0, {-math.sin(phi):.6f}]"]
        objective += [f"bounds = [{-band:.6f}, 1.0]", ""]
    if thorax:
        # TS and AI on the thorax: their contacts' levels (the ellipsoid's implicit function) at most 0
        objective += ["[constraints.modes]", '"TS_thorax.level" = [-inf, 0]', '"AI_thorax.level" = [-inf, 0]', ""]
    if elbow:
        # the elbow straight (rad, from DAS3's EL_x of 5 deg)
        objective += ["[bounds]", f'"el_x.rotation" = [0.0, {math.radians(elbow):.6f}]', ""]
    return head + ["", *objective]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("intervals", nargs="?", type=int, default=13)
    ap.add_argument("--predict-variant", type=Path, help="write only this variant of the predicted problem")
    ap.add_argument("--held", action="store_true", help="initial_equilibrium = true")
    ap.add_argument("--held-end", action="store_true", help="final_equilibrium = true")
    ap.add_argument("--cubed", action="store_true", help="the effort 0.1 e² + a³")
    ap.add_argument("--acceleration", type=float, default=0.0, help="weight of the accelerations' term")
    ap.add_argument("--volume", action="store_true", help="the excitations weighed by the muscles' volumes")
    ap.add_argument("--plane", type=float, default=0.0, help="the humerus within this many degrees of the plane at 20 deg")
    ap.add_argument("--elbow", type=float, default=0.0, help="on the model with the elbow's hinge, el_x within [0, this] deg")
    ap.add_argument("--thorax", action="store_true", help="TS and AI held on the thorax (their contacts' levels <= 0)")
    args = ap.parse_args()
    intervals = args.intervals
    with open(TARGET, newline="") as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    header, body = rows[0], rows[1:]
    coords = [c for c in header[1:] if c.endswith(".rotation")]
    picked = body[::EVERY]
    if picked[-1] is not body[-1]:
        picked.append(body[-1])
    lines = [
        "# The shoulder's forward flexion tracked: the target motion of Fig. 3 of Chadwick et al. (2014)",
        "# (the humerus elevated to 78.4 deg in the plane near 50 deg in 1.3 s, the girdle by the",
        "# shoulder rhythm: models/shoulder/flexion-target.csv) followed by the nine joint rotations",
        "# with the least muscle effort. GENERATED by models/optimal-control/tools/make_flexion_track.py",
        "# -- do not edit by hand. docs/optimal-control.md, \"The shoulder's flexion\".",
    ] + settings(intervals, 'guess = "reference"')
    for c in coords:
        j = header.index(c)
        ref = ", ".join(f"[{float(r[0]):.2f}, {float(r[j]):.9g}]" for r in picked)
        lines.append(f'[objective.tracking."{c}"]')
        lines.append(f"weight = {WEIGHT:g}")
        lines.append(f"reference = [{ref}]")
        lines.append("")
    lines += SOLVER
    if args.predict_variant:
        variant = {"held": args.held, "held_end": args.held_end, "acceleration": args.acceleration}
        variant.update(volume=args.volume, cubed=args.cubed, plane=args.plane, elbow=args.elbow, thorax=args.thorax)
        write_predict(intervals, header, body[-1], coords, args.predict_variant, **variant)
        return
    OUT.write_text("\n".join(lines))
    write_predict(intervals, header, body[-1], coords, **COMMITTED_PREDICT)


def write_predict(intervals, header, last, coords, out=PREDICT, **variant) -> None:
    """The predicted flexion: from rest to the target's final posture, at rest, with the least
    effort (and `variant`'s settings); the path between is free."""
    lines = [
        "# The shoulder's forward flexion predicted: from the rest posture to the final posture of the",
        "# target motion of Fig. 3 of Chadwick et al. (2014) (the humerus elevated to 78.4 deg in the",
        "# plane near 50 deg, the girdle by the shoulder rhythm: models/shoulder/flexion-target.csv)",
        "# in 1.3 s, at rest at both ends, with the least muscle effort; the path between is free.",
        "# GENERATED by models/optimal-control/tools/make_flexion_track.py -- do not edit by hand.",
        "# docs/optimal-control.md, \"The shoulder's flexion\".",
    ] + settings(intervals, **variant) + ["[final]"]
    for c in coords:
        lines.append(f'"{c}" = {float(last[header.index(c)]):.9g}')
        lines.append(f'"{c}.vel" = 0.0')
    lines += [""] + SOLVER
    out.write_text("\n".join(lines))


if __name__ == "__main__":
    main()
