#!/usr/bin/env python3
"""Chadwick et al. (2014)'s Fig. 3 for a run of the forward flexion: the angles between thorax and clavicle
(A: DAS3's SC angles, YZX), clavicle and scapula (B: AC, YZX) and thorax and humerus (C: plane of
elevation, elevation and axial rotation, YZY; the plane and the axial rotation left out below 5 deg of elevation,
where they are undefined), against time, with the target's dashed, as one SVG.

    cargo run --release -p mollier-cli -- simulate models/shoulder/shoulder-forward.toml \\
        --excitations models/shoulder/flexion-excitations.csv --duration 1.3 --out results/flexion-forward
    python3 models/shoulder/tools/flexion_plot.py results/flexion-forward/states.csv docs/img/flexion-angles.svg

The angles come from the model's joint rotations as flexion_target.py makes them (the inverse:
DAS3 angle = rest + rotation for SC and AC; the humerus = scapula Rx Ry Rz scapula_rest^T).
Standard library only; needs the DAS3 data for the rest posture, as make_shoulder.py does.
"""

import argparse
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from flexion_target import DAS3_OSIM, NAMES, REPO, rest_of  # noqa: E402
from make_shoulder import DEG, mm, rot, ryzx, tr  # noqa: E402


def yzy(r):
    """(pole angle, elevation, axial rotation) with r = Ry Rz Ry, rad."""
    e = math.acos(max(-1.0, min(1.0, r[1][1])))
    return [math.atan2(r[2][1], -r[0][1]), e, math.atan2(r[1][2], r[1][0])]


def posture(rest, q):
    """DAS3's SC and AC angles and the thorax-humerus YZY angles (deg) at joint rotations q."""
    sc = [rest[0][i] + q[i] for i in range(3)]
    ac = [rest[0][3 + i] + q[3 + i] for i in range(3)]
    scap = mm(ryzx(sc), ryzx(ac))
    gh = mm(mm(rot([1, 0, 0], q[6]), rot([0, 1, 0], q[7])), rot([0, 0, 1], q[8]))
    hum = mm(mm(scap, gh), tr(rest[1]))
    h = [a / DEG for a in yzy(hum)]
    if h[1] < 5.0:
        # near the side the plane and the axial rotation are undefined (gimbal lock)
        h[0] = h[2] = None
    return [a / DEG for a in sc], [a / DEG for a in ac], h


def read(path, columns):
    with open(path) as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("#"))]
    head = rows[0]
    idx = [head.index(c) for c in columns]
    return [(float(r[0]), [float(r[i]) for i in idx]) for r in rows[1:]]


def svg(panels, duration):
    w, h, left, top, ph, gap = 560, 600, 60, 20, 150, 45
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="11">',
           f'<rect width="{w}" height="{h}" fill="#fff"/>']
    colours = ["#1f77b4", "#d62728", "#2ca02c"]
    pw = w - left - 130
    for p, (title, labels, run, target) in enumerate(panels):
        y0 = top + p * (ph + gap)
        vals = [v for _, vs in run + target for v in vs if v is not None]
        lo, hi = math.floor(min(vals) / 10) * 10, math.ceil(max(vals) / 10) * 10
        if hi == lo:
            hi = lo + 10
        x = lambda t: left + pw * t / duration
        y = lambda v: y0 + ph - ph * (v - lo) / (hi - lo)
        out.append(f'<text x="{left}" y="{y0 - 5}" font-weight="bold">{title}</text>')
        out.append(f'<rect x="{left}" y="{y0}" width="{pw}" height="{ph}" fill="none" stroke="#000"/>')
        step = 10 if hi - lo <= 60 else 20
        for v in range(int(lo), int(hi) + 1, step):
            out.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(v):.1f}" y2="{y(v):.1f}" stroke="#000" stroke-opacity="0.1"/>')
            out.append(f'<text x="{left - 5}" y="{y(v) + 4:.1f}" text-anchor="end">{v}</text>')
        for t in [0.0, 0.25, 0.5, 0.75, 1.0, 1.25]:
            out.append(f'<text x="{x(t):.1f}" y="{y0 + ph + 14}" text-anchor="middle">{t:g}</text>')
        out.append(f'<text x="{left - 40}" y="{y0 + ph / 2}" transform="rotate(-90 {left - 40} {y0 + ph / 2})" text-anchor="middle">deg</text>')
        for k, label in enumerate(labels):
            for series, dash in [(target, ' stroke-dasharray="4 3"'), (run, "")]:
                pts = " ".join(f"{x(t):.1f},{y(vs[k]):.1f}" for t, vs in series if t <= duration + 1e-9 and vs[k] is not None)
                out.append(f'<polyline points="{pts}" fill="none" stroke="{colours[k]}" stroke-width="1.5"{dash}/>')
            out.append(f'<line x1="{left + pw + 10}" x2="{left + pw + 30}" y1="{y0 + 15 + 16 * k}" y2="{y0 + 15 + 16 * k}" stroke="{colours[k]}" stroke-width="1.5"/>')
            out.append(f'<text x="{left + pw + 35}" y="{y0 + 19 + 16 * k}">{label}</text>')
    out.append(f'<text x="{left + pw / 2}" y="{h - 8}" text-anchor="middle">time (s); dashed: the target</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("states", help="states.csv of `mollier simulate`")
    ap.add_argument("out", help="the SVG to write")
    ap.add_argument("--target", default=os.path.join(REPO, "models", "shoulder", "flexion-target.csv"))
    ap.add_argument("--osim", default=DAS3_OSIM)
    args = ap.parse_args()
    _, rest = rest_of(args.osim, "flexion_plot")
    run = [(t, posture(rest, q)) for t, q in read(args.states, [f"{n}.rotation" for n in NAMES])]
    target = [(t, posture(rest, q)) for t, q in read(args.target, [f"{n}.rotation" for n in NAMES])]
    duration = max(t for t, _ in run)
    panels = [
        ("A: thorax-clavicle (SC)", ["SC_y", "SC_z", "SC_x"], [(t, p[0]) for t, p in run], [(t, p[0]) for t, p in target]),
        ("B: clavicle-scapula (AC)", ["AC_y", "AC_z", "AC_x"], [(t, p[1]) for t, p in run], [(t, p[1]) for t, p in target]),
        ("C: thorax-humerus (YZY)", ["plane", "elevation", "axial"], [(t, p[2]) for t, p in run], [(t, p[2]) for t, p in target]),
    ]
    with open(args.out, "w") as fh:
        fh.write(svg(panels, duration))
    end = run[-1][1][2]
    print(f"wrote {args.out}: at {duration:g} s plane {end[0]:.1f}, elevation {end[1]:.1f}, axial {end[2]:.1f} deg")


if __name__ == "__main__":
    main()
