#!/usr/bin/env python3
"""OpenSim 4.6's inverse kinematics on its own gait2354 example, the reference of `mollier ik`.

    python tools/peer_opensim_ik.py [--frames N] [--models DIR]

Reads from DIR/Gait2354_Simbody (DIR: default .cache/opensim-models, filled by
tools/fetch-opensim-models) the scaled model subject01_simbody.osim, the walking trial
subject01_walk1.trc and the IK setup subject01_Setup_IK.xml (its IKTaskSet: 31 weighted markers,
subtalar and mtp angles held at their defaults by weight 1000). OpenSim's IK is run on the first
N frames (default 30, t = 0 to 29/60 s) of a copy of the trial that keeps only the markers the
task set applies, so that both programs fit the same markers whatever OpenSim does with the
others. Writes crates/mollier/tests/data/opensim_ik_gait2354.csv: per frame the time, every
coordinate (rad or m, OpenSim's), the marker RMS and largest error (m, OpenSim's own
`_ik_marker_errors`), with provenance in its `#` lines; and prints OpenSim's wall time per frame
(the figure docs/performance.md sets beside Mollier's, measured in the same run as
`cargo bench -p mollier --bench ik`).

Python 3.11, opensim 4.6 (PyPI).
"""

import argparse
import datetime
import hashlib
import os
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

import opensim as osim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "mollier", "tests", "data", "opensim_ik_gait2354.csv")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def applied_tasks(setup):
    """The marker tasks applied (name, weight) and the coordinate tasks, from the setup XML."""
    root = ET.parse(setup).getroot()
    markers = []
    for t in root.iter("IKMarkerTask"):
        if t.findtext("apply", "true").strip().lower() == "true" and float(t.findtext("weight")) > 0:
            markers.append(t.get("name"))
    return markers


def reduced_trc(src, dst, keep, frames):
    """A copy of the trial with only the markers `keep` and the first `frames` frames."""
    with open(src) as f:
        lines = f.read().split("\n")
    names = lines[3].split("\t")
    markers = [n for n in names[2:] if n.strip()]
    cols = [markers.index(m) for m in keep]
    head = lines[2].split("\t")
    head[2] = str(frames)
    head[3] = str(len(keep))
    head[7] = str(frames)
    out = [lines[0], lines[1], "\t".join(head)]
    out.append("\t".join(["Frame#", "Time"] + sum([[m, "", ""] for m in keep], [])))
    out.append("\t".join(["", ""] + sum([[f"X{i+1}", f"Y{i+1}", f"Z{i+1}"] for i in range(len(keep))], [])))
    out.append("")
    data = [l for l in lines[5:] if l.strip()]
    for l in data[:frames]:
        c = l.split("\t")
        row = c[:2]
        for k in cols:
            row += c[2 + 3 * k: 5 + 3 * k]
        out.append("\t".join(row))
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=30)
    ap.add_argument("--models", default=os.path.join(ROOT, ".cache", "opensim-models"))
    ap.add_argument("--out", default=OUT)
    a = ap.parse_args()
    gait = os.path.join(a.models, "Gait2354_Simbody")
    model_path = os.path.join(gait, "subject01_simbody.osim")
    trc = os.path.join(gait, "subject01_walk1.trc")
    setup = os.path.join(gait, "subject01_Setup_IK.xml")
    keep = applied_tasks(setup)
    with tempfile.TemporaryDirectory() as tmp:
        small = os.path.join(tmp, "walk.trc")
        reduced_trc(trc, small, keep, a.frames)
        model = osim.Model(model_path)
        tool = osim.InverseKinematicsTool(setup)
        tool.setModel(model)
        tool.setMarkerDataFileName(small)
        rate = 60.0
        tool.setStartTime(0.0)
        tool.setEndTime((a.frames - 1) / rate)
        tool.setOutputMotionFileName(os.path.join(tmp, "ik.mot"))
        tool.set_report_errors(True)
        tool.setResultsDir(tmp)
        start = time.perf_counter()
        tool.run()
        wall = time.perf_counter() - start
        q = osim.TimeSeriesTable(os.path.join(tmp, "ik.mot"))
        errs = osim.TimeSeriesTable(os.path.join(tmp, tool.getName() + "_ik_marker_errors.sto"))
        in_degrees = q.getTableMetaDataAsString("inDegrees") == "yes"
        labels = list(q.getColumnLabels())
        coords = model.getCoordinateSet()
        rot = {coords.get(i).getName(): coords.get(i).getMotionType() == 1 for i in range(coords.getSize())}
        rows = []
        times = list(q.getIndependentColumn())
        rms = errs.getDependentColumn("marker_error_RMS").to_numpy()
        mx = errs.getDependentColumn("marker_error_max").to_numpy()
        for i, t in enumerate(times):
            row = q.getRowAtIndex(i).to_numpy()
            vals = [v * 3.141592653589793 / 180.0 if in_degrees and rot[l] else v for l, v in zip(labels, row)]
            rows.append([t] + vals + [rms[i], mx[i]])
    n = len(rows)
    print(f"OpenSim IK: {n} frames in {wall:.3f} s, {1e3 * wall / n:.2f} ms per frame", file=sys.stderr)
    with open(a.out, "w") as f:
        f.write(f"# OpenSim {osim.GetVersion()} InverseKinematicsTool, written by tools/peer_opensim_ik.py on "
                f"{datetime.date.today().isoformat()}\n")
        f.write("# opensim-models commit 20a888b9655e73fb84963d6e03eee3752cf6074b (tools/fetch-opensim-models)\n")
        for p in (model_path, trc, setup):
            f.write(f"# sha256 {sha256(p)}  {os.path.relpath(p, a.models)}\n")
        f.write(f"# first {a.frames} frames of the trial, only the {len(keep)} markers the IKTaskSet applies; "
                "coordinates in rad or m; marker_error_rms/max in m (OpenSim's _ik_marker_errors)\n")
        f.write(f"# OpenSim wall time {1e3 * wall / n:.3f} ms per frame on the machine that wrote this\n")
        f.write(",".join(["time"] + labels + ["marker_error_rms", "marker_error_max"]) + "\n")
        for r in rows:
            f.write(",".join(repr(float(v)) for v in r) + "\n")
    print(f"wrote {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
