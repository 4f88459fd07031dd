#!/usr/bin/env python3
"""The flexion EMG criterion on optimal-control or forward outputs
(docs/optimal-control.md, "The EMG pattern"). Pure Python 3.

    python3 models/optimal-control/tools/emg_windows.py DIR [DIR ...]

For each output directory (`mollier optimize` or `mollier simulate`: its `muscles.csv`; where only
`states.csv` is kept, as for the committed optimal-control solutions, its activations), prints
the mean excitation (or activation) over the windows 0.3-0.6, 0.6-0.9 and 0.9-1.3 s (the rows in [from, to), the
last window's end taken as 1.31 s so that the 1.3 s row counts) of serratus anterior's six
elements, of its lower three (`_1`-`_3`, where electrodes sit) and of the anterior deltoid
(`deltoideus_clavicular_*`), and whether the criterion holds in every window: both at 0.1 or
more and within a factor of 2 of each other, over all six serratus elements and over the lower
three. The windows and thresholds are those of `crates/mollier/tests/flexion.rs`, which holds the
committed forward flexion's excitations to the criterion over all six elements.
Exit status 0 (the table is printed whatever the verdict); 2 on a missing or malformed file.
"""
import csv
import sys

WINDOWS = [(0.3, 0.6), (0.6, 0.9), (0.9, 1.31)]
LOWER = ("serratus_anterior_1", "serratus_anterior_2", "serratus_anterior_3")


def columns(header, prefixes, kind):
    """The `kind` columns (".excitation", ".activation") of the muscles whose names start with one
    of `prefixes`."""
    return [c for c in header if c.endswith(kind) and c[: -len(kind)].startswith(prefixes)]


def means(rows, times, cols):
    """The mean of `cols` over the rows of each window (a list of three floats)."""
    out = []
    for lo, hi in WINDOWS:
        idx = [i for i, t in enumerate(times) if lo - 1e-9 <= t < hi - 1e-9]
        if not idx or not cols:
            raise ValueError(f"no rows in {lo}-{hi} s or no columns")
        out.append(sum(float(rows[i][c]) for i in idx for c in cols) / (len(idx) * len(cols)))
    return out


def holds(serratus, deltoid):
    """The criterion over the three windows."""
    return all(s >= 0.1 and d >= 0.1 and 0.5 <= s / d <= 2.0 for s, d in zip(serratus, deltoid))


def main(dirs):
    if not dirs:
        print(__doc__, file=sys.stderr)
        return 2
    for d in dirs:
        try:
            try:
                name, kind = "muscles.csv", ".excitation"
                f = open(f"{d}/{name}", newline="")
            except FileNotFoundError:
                name, kind = "states.csv", ".activation"
                f = open(f"{d}/{name}", newline="")
            with f:
                rows = list(csv.DictReader(f))
            header = list(rows[0])
            times = [float(r["time"]) for r in rows]
            every = means(rows, times, columns(header, ("serratus_anterior_",), kind))
            lower = means(rows, times, columns(header, LOWER, kind))
            deltoid = means(rows, times, columns(header, ("deltoideus_clavicular_",), kind))
        except (OSError, IndexError, KeyError, ValueError) as e:
            print(f"{d}: {e}", file=sys.stderr)
            return 2
        fmt = lambda v: " / ".join(f"{x:.3f}" for x in v)
        verdict = lambda s: "met" if holds(s, deltoid) else "not met"
        print(f"{d} ({name}: {kind[1:]}s)")
        print(f"  serratus anterior, all six   {fmt(every)}   criterion {verdict(every)}")
        print(f"  serratus anterior, _1-_3     {fmt(lower)}   criterion {verdict(lower)}")
        print(f"  anterior deltoid             {fmt(deltoid)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
