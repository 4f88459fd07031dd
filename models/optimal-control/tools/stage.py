#!/usr/bin/env python3
"""One stage of a staged optimal-control solve (docs/optimal-control.md, "The shoulder's flexion"):
a problem file re-written with its model, initial guess, Hessian and iteration limit, and
IPOPT's log file. Pure Python 3.11: reads TOML with tomllib, writes it with `dumps`.

    python3 models/optimal-control/tools/stage.py PROBLEM MODEL OUT NAME GUESS HESSIAN ITERATIONS

writes OUT/NAME.toml: PROBLEM on MODEL, from GUESS (a states.csv, `:warm` after it warm-starting
from its multipliers, e.g. `DIR/states.csv:warm`; or `linear`, `rest`, `reference`), with
HESSIAN (`exact` or `limited-memory`) and ITERATIONS, IPOPT's log to OUT/NAME.ipopt at print
level 5. Paths are written absolute, so the stage file reads the same from any directory.
solve_flexion.sh and deltoid_variant.py use it.
"""

import math
import sys
import tomllib
from pathlib import Path


def dumps(doc):
    """TOML text of a tomllib document: scalars, arrays and inline tables of a table first, then
    its sub-tables as [dotted.headers]; arrays of tables inline."""
    out = []

    def quoted(k):
        return '"' + k.replace("\\", "\\\\").replace('"', '\\"') + '"'

    def key(k):
        return k if k and all(c.isalnum() or c in "_-" for c in k) else quoted(k)

    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, (int, float)):
            if isinstance(v, float) and math.isinf(v):
                return "inf" if v > 0 else "-inf"
            if isinstance(v, float) and math.isnan(v):
                raise ValueError("a problem file has no NaN")
            return repr(v)
        if isinstance(v, str):
            return quoted(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, dict):
            return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }"
        raise TypeError(f"no TOML for {type(v).__name__}")

    def table(path, t):
        scalars = {k: v for k, v in t.items() if not isinstance(v, dict)}
        if path and (scalars or not t):
            out.append("\n[" + ".".join(key(p) for p in path) + "]")
        out.extend(f"{key(k)} = {value(v)}" for k, v in scalars.items())
        for k, v in t.items():
            if isinstance(v, dict):
                table(path + [k], v)

    table([], doc)
    return "\n".join(out).lstrip("\n") + "\n"


# the problem file's guesses that are no file (docs/optimal-control.md, "Problem files")
GUESS_KEYWORDS = ("linear", "rest", "reference")


def stage(problem, model_file, out, name, guess, hessian, iterations, note=None):
    """Write OUT/NAME.toml (see the module's docstring); `note` the comment line on top
    (default: which problem it is a stage of)."""
    doc = tomllib.loads(Path(problem).read_text())
    doc["model"] = str(Path(model_file).resolve())
    path, _, warm = guess.partition(":")
    if path in GUESS_KEYWORDS:
        doc["guess"] = path
    else:
        doc["guess"] = {"file": str(Path(path).resolve())}
        if warm == "warm":
            doc["guess"]["warm_start"] = True
    doc["solver"]["hessian"] = hessian
    doc["solver"]["max_iterations"] = int(iterations)
    ipopt = doc["solver"].setdefault("ipopt", {})
    ipopt["output_file"] = str((Path(out) / f"{name}.ipopt").resolve())
    ipopt["file_print_level"] = 5
    Path(out).mkdir(parents=True, exist_ok=True)
    head = f"# {note or f'a stage of {problem} (stage.py)'}\n"
    (Path(out) / f"{name}.toml").write_text(head + dumps(doc))


if __name__ == "__main__":
    if len(sys.argv) != 8:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    stage(*sys.argv[1:])
