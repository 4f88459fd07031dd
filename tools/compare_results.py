#!/usr/bin/env python3
"""Compare two Mollier output directories number by number.

    python3 tools/compare_results.py DIR_A DIR_B [--rtol 1e-12] [--solver-rtol 1e-9]

Every CSV must have the same header and rows; each numeric cell must agree within a tolerance times
the largest magnitude of its column in either file (a column-relative tolerance: a cell that is
zero in a column of newtons is compared at the scale of the column, not at zero). A column whose
values are all below 1e-10 of the table's largest value (time and frame columns aside) is
round-off, and is compared at the table's scale. Empty cells and
text must be equal. JSON files are compared leaf by leaf the same way, except timing fields
(`ms`, `wall_ms`, `ms_per_frame`, `seconds`, a simulation's `integration_wall_s`, `us_per_step` and
`real_time_factor`, and anything ending in `_ms`), which differ from run
to run (and `timing.json` whole), the writer's bookkeeping (`complete`, `files`), and solver
residuals (`residual`, `max_residual`, `virtual_work`) and iteration counts, which measure round-off
and the solver's path; a stability index (1 at the cone's edge) is compared at a scale of at least 1,
so that a maximum of -1e-8 (a muscle force at the cone's apex) is not compared relatively to itself. Tables in one unit (forces, lengths, moment arms) are compared at the scale of the
whole table. Plots (SVG) are not compared. Prints the largest relative difference per file and exits 1
when any file differs beyond the tolerance or exists on one side only.

Used to check that the kernel's attached nodes (docs/theory/kernel.md) leave the shoulder study's
results unchanged: run the study with the old and the new build into two directories and compare.
"""
import argparse
import csv
import json
import math
import os
import sys

TIMING = {"ms", "wall_ms", "ms_per_frame", "seconds", "timing", "integration_wall_s", "us_per_step", "real_time_factor"}


def number(s):
    try:
        v = float(s)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


# Tables whose columns all share one unit: a cell is compared at the scale of the whole table (an
# inactive muscle's force of 1e-9 N is the optimizer's zero, not a value to compare relatively).
SAME_UNIT = {"forces.csv", "moment_arms.csv", "lengths.csv"}


INDEX = {"time", "frame", "elevation_deg"}
ROUND_OFF = 1e-10


# The output writer's bookkeeping (docs/model-format.md, "Output directories"): not results.
BOOKKEEPING = {"complete", "files"}


def is_residual(name):
    """Columns that measure round-off (solver residuals) or time, and bookkeeping: never compared."""
    return (
        "residual" in name
        or name in TIMING
        or name.endswith("_ms")
        or name in ("virtual_work", "iterations")
        or name in BOOKKEEPING
    )


def rows_of(path):
    with open(path, newline="") as f:
        return [r for r in csv.reader(f) if not (r and r[0].startswith("#"))]


def compare_csv(a, b, rtol):
    ra, rb = rows_of(a), rows_of(b)
    if not ra or not rb:
        return math.inf, "empty"
    # columns that are not results (timings moved to timing.json) may be on one side only
    ka = [j for j, h in enumerate(ra[0]) if h in rb[0] or not is_residual(h)]
    kb = [j for j, h in enumerate(rb[0]) if h in ra[0] or not is_residual(h)]
    ra = [[r[j] for j in ka if j < len(r)] for r in ra]
    rb = [[r[j] for j in kb if j < len(r)] for r in rb]
    if ra[0] != rb[0]:
        return math.inf, "headers differ"
    if len(ra) != len(rb):
        return math.inf, f"{len(ra)} rows against {len(rb)}"
    ncol = len(ra[0])
    scale = [0.0] * ncol
    for rows in (ra[1:], rb[1:]):
        for row in rows:
            for j, cell in enumerate(row[:ncol]):
                v = number(cell)
                if v is not None:
                    scale[j] = max(scale[j], abs(v))
    table = max((v for j, v in enumerate(scale) if ra[0][j] not in INDEX), default=0.0)
    if os.path.basename(a) in SAME_UNIT:
        scale = [table] * ncol
    else:
        # a column all of whose values are round-off of the table (a rigid mode held at zero, a
        # moment arm about an axis the muscle does not cross) is compared at the table's scale
        scale = [v if v > ROUND_OFF * table else table for v in scale]
    worst, where = 0.0, ""
    for i, (x, y) in enumerate(zip(ra[1:], rb[1:]), start=2):
        if len(x) != len(y):
            return math.inf, f"line {i}: row lengths differ"
        for j, (p, q) in enumerate(zip(x, y)):
            if is_residual(ra[0][j]):
                continue
            u, v = number(p), number(q)
            if u is None or v is None:
                if p != q:
                    return math.inf, f"line {i}, column {ra[0][j]}: {p!r} against {q!r}"
                continue
            d = abs(u - v) / scale[j] if scale[j] > 0 else 0.0
            if d > worst:
                worst, where = d, f"line {i}, column {ra[0][j]}: {p} against {q}"
    return worst, where


def leaves(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if is_residual(k):
                continue
            yield from leaves(v, f"{path}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, f"{path}[{i}]")
    else:
        yield path, x


# JSON leaves whose natural scale is 1: the stability index is 1 on the cone's edge, 0 at its axis
UNIT_SCALE = ("stability_index",)


def compare_json(a, b, rtol):
    with open(a) as fa, open(b) as fb:
        la, lb = dict(leaves(json.load(fa))), dict(leaves(json.load(fb)))
    if la.keys() != lb.keys():
        return math.inf, f"fields differ: {sorted(set(la) ^ set(lb))[:5]}"
    worst, where = 0.0, ""
    for k, u in la.items():
        v = lb[k]
        if isinstance(u, (int, float)) and isinstance(v, (int, float)) and not isinstance(u, bool):
            s = max(abs(u), abs(v))
            if any(f".{name}" in k for name in UNIT_SCALE):
                s = max(s, 1.0)
            d = abs(u - v) / s if s > 0 else 0.0
            if d > worst:
                worst, where = d, f"{k}: {u} against {v}"
        elif u != v:
            return math.inf, f"{k}: {u!r} against {v!r}"
    return worst, where


def files(root):
    out = set()
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith((".csv", ".json")) and f != "timing.json":
                out.add(os.path.relpath(os.path.join(d, f), root))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float, default=1e-12, help="for the kinematic tables (top level)")
    ap.add_argument(
        "--solver-rtol",
        type=float,
        default=1e-9,
        help="for files in subdirectories (load-sharing variants): the conic solver stops at a "
        "relative gap of 1e-12 on the objective, which fixes the forces only to about 1e-10",
    )
    args = ap.parse_args()
    fa, fb = files(args.a), files(args.b)
    bad = False
    for f in sorted(fa ^ fb):
        print(f"{f}: only in {'the first' if f in fa else 'the second'} directory")
        bad = True
    overall = 0.0
    for f in sorted(fa & fb):
        cmp = compare_csv if f.endswith(".csv") else compare_json
        # the variants' files, and the summaries that gather them, carry the solver's tolerance
        rtol = args.solver_rtol if os.sep in f or f.endswith(".json") else args.rtol
        worst, where = cmp(os.path.join(args.a, f), os.path.join(args.b, f), rtol)
        overall = max(overall, worst)
        flag = "DIFFERS" if worst > rtol else "ok"
        print(f"{flag:7} {worst:9.2e}  (tolerance {rtol:g})  {f}" + (f"  ({where})" if worst > rtol else ""))
        bad |= worst > rtol
    print(f"largest relative difference {overall:.2e} over {len(fa & fb)} files")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
