#!/usr/bin/env python3
"""OpenSim 4.6's ScaleTool on its own gait2354 example, the reference of `mollier scale`.

    tools/fetch-opensim-models                      # the generic model and the pipeline files
    python tools/peer_opensim_scale.py [--models .cache/opensim-models]

Runs the example's subject01_Setup_Scale.xml (DIR/Gait2354_Simbody) as written: the generic
model gait2354_simbody.osim with the marker set gait2354_Scale_MarkerSet.xml, the measurements
(marker pairs of subject01_static.trc averaged over 1-2 s) then the manual scales, the masses to
72.6 kg preserving their distribution; the marker placement step is switched off (Mollier's
`scale` compares the scaling). Writes crates/mollier/tests/data/opensim_scale_gait2354.csv,
one value a row (`kind,object,field,value`, SI):

- `measurement,NAME,factor` and `pair,NAME/M1-M2,model|experimental`: each measurement's factor
  and its marker pairs' lengths, as OpenSim logs them (full precision);
- `factor,BODY,x|y|z`: the scale factors OpenSim applied (its output scale set, 6 digits);
- `body,BODY,mass|com_x..|ixx,iyy,izz,ixy,ixz,iyz`: the scaled model's inertial properties;
- `marker,NAME,x|y|z`: each marker's location in its body, and `marker_ground,NAME,x|y|z` in
  ground at the default pose (this sees the joints' scaled translation functions);
- `frame,JOINT/parent|child,x|y|z`: the joints' offset frames in their bodies;
- `muscle,NAME,optimal_fiber_length|tendon_slack_length|length_before|length_after`.

Then the same setup with its marker placement on (`MarkerPlacer`: IK of the static trial's mean
over 1-1.01 s, each marker moved onto its measured place), in a copy of the four input files (the
placer writes beside its setup), into crates/mollier/tests/data/opensim_scale_placer_gait2354.csv:
the `factor` rows, `pose,COORDINATE,value` (the placed model's default values, rad or m: OpenSim
4.6 keeps the generic model's), `motion,COLUMN,value` (its output motion: the static pose) and
`placed,MARKER,x|y|z` (each marker in its body after placement, m). The placer's IK stops at
OpenSim's default accuracy (1e-4), short of the optimum where the fit is flat (the lumbar
coordinates); `converged_pose` and `converged_placed` are the same steps with OpenSim's IK solver
at accuracy 1e-10 (see converged_placement).

The files come from opensim-org/opensim-models at the commit tools/fetch-opensim-models pins (no
licence file: only these numbers are committed, with the files' SHA-256).

Python 3.11, opensim 4.6 (PyPI).
"""

import argparse
import datetime
import hashlib
import os
import re
import shutil
import sys
import tempfile
import time

import opensim as osim

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "crates", "mollier", "tests", "data", "opensim_scale_gait2354.csv")
PLACER_OUT = os.path.join(ROOT, "crates", "mollier", "tests", "data", "opensim_scale_placer_gait2354.csv")


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def measurements(log):
    """The measurements' factors and marker-pair lengths as OpenSim's log gives them."""
    rows, name = [], None
    with open(log) as f:
        for line in f:
            m = re.search(r"Measurement '([^']*)'", line)
            if m:
                name = m.group(1)
            m = re.search(r"pair (\d+) \(([^,]*), ([^)]*)\): model = (\S+), experimental = (\S+)", line)
            if m:
                pair = f"{name}/{m.group(2)}-{m.group(3)}"
                rows += [("pair", pair, "model", float(m.group(4))), ("pair", pair, "experimental", float(m.group(5)))]
            m = re.search(r"overall scale factor = (\S+)", line)
            if m:
                rows.append(("measurement", name, "factor", float(m.group(1))))
    return rows


def muscle_lengths(model):
    state = model.initSystem()
    model.realizePosition(state)
    muscles = model.getMuscles()
    return {muscles.get(i).getName(): muscles.get(i).getLength(state) for i in range(muscles.getSize())}


def placer_rows(inputs):
    """The example's setup with its marker placer on, run in a copy of its inputs: the factors,
    the static pose (rad or m) and the placed markers in their bodies (m)."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in inputs:
            shutil.copy(p, tmp)
        tool = osim.ScaleTool(os.path.join(tmp, os.path.basename(inputs[0])))
        scaler = tool.getModelScaler()
        scaler.setOutputModelFileName("scaled_only.osim")
        scaler.setOutputScaleFileName("scale_set.xml")
        placer = tool.getMarkerPlacer()
        placer.setOutputModelFileName("placed.osim")
        placer.setOutputMotionFileName("static_pose.mot")
        start = time.perf_counter()
        if not tool.run():
            sys.exit("OpenSim's ScaleTool with its marker placer failed")
        print(f"OpenSim ScaleTool with marker placement: {time.perf_counter() - start:.3f} s", file=sys.stderr)
        scale_set = osim.ScaleSet(os.path.join(tmp, "scale_set.xml"))
        for i in range(scale_set.getSize()):
            s = scale_set.get(i)
            f = s.getScaleFactors()
            rows += [("factor", s.getSegmentName(), axis, f.get(k)) for k, axis in enumerate("xyz")]
        model = osim.Model(os.path.join(tmp, "placed.osim"))
        coords = model.getCoordinateSet()
        for i in range(coords.getSize()):
            rows.append(("pose", coords.get(i).getName(), "value", coords.get(i).getDefaultValue()))
        motion = osim.Storage(os.path.join(tmp, "static_pose.mot"))
        labels = motion.getColumnLabels()
        row = motion.getStateVector(0).getData()
        for k in range(1, labels.getSize()):
            rows.append(("motion", labels.get(k), "value", row.get(k - 1)))
        markers = model.getMarkerSet()
        for i in range(markers.getSize()):
            mk = markers.get(i)
            loc = mk.get_location()
            rows += [("placed", mk.getName(), axis, loc.get(k)) for k, axis in enumerate("xyz")]
        rows += converged_placement(tmp, placer)
    return rows


def converged_placement(tmp, placer):
    """The placer's steps by hand with its IK converged: OpenSim's InverseKinematicsSolver (the one
    MarkerPlacer uses, whose accuracy it leaves at 1e-4) at accuracy 1e-10 on the ScaleTool's
    scaled model, for the trial's mean over the placer's time range (TimeSeriesTable::averageRow);
    then each marker moved onto the mean MarkerData::averageFrames takes, re-expressed in its body
    by OpenSim. Rows `converged_pose` and `converged_placed`."""
    model = osim.Model(os.path.join(tmp, "scaled_only.osim"))
    state = model.initSystem()
    t0, t1 = placer.getTimeRange().get(0), placer.getTimeRange().get(1)
    static = os.path.join(tmp, placer.getStaticPoseFileName())
    table = osim.TimeSeriesTableVec3(static)
    mean = table.averageRow(t0, t1)
    for r in range(table.getNumRows() - 1, -1, -1):
        table.removeRowAtIndex(r)
    table.appendRow(t0, mean)
    to_m = {"mm": 1e-3, "cm": 1e-2, "m": 1.0}[table.getTableMetaDataAsString("Units").strip()]
    row = table.updRowAtIndex(0)
    for k in range(row.size()):
        v = row[k]
        row[k] = osim.Vec3(v[0] * to_m, v[1] * to_m, v[2] * to_m)
    table.removeTableMetaDataKey("Units")
    table.addTableMetaDataString("Units", "m")
    tasks = placer.getIKTaskSet()
    weights = osim.SetMarkerWeights()
    coordinates = osim.SimTKArrayCoordinateReference()
    for i in range(tasks.getSize()):
        t = tasks.get(i)
        if not t.getApply():
            continue
        coordinate = osim.IKCoordinateTask.safeDownCast(t)
        if coordinate is None:
            weights.cloneAndAppend(osim.MarkerWeight(t.getName(), t.getWeight()))
            continue
        manual = coordinate.getValueType() == osim.IKCoordinateTask.ManualValue
        value = coordinate.getValue() if manual else model.getCoordinateSet().get(t.getName()).getValue(state)
        ref = osim.CoordinateReference(t.getName(), osim.Constant(value))
        ref.setWeight(t.getWeight())
        coordinates.push_back(ref)
    solver = osim.InverseKinematicsSolver(model, osim.MarkersReference(table, weights), coordinates, float("inf"))
    solver.setAccuracy(1e-10)
    state.setTime(t0)
    solver.assemble(state)
    model.realizePosition(state)
    rows = []
    coords = model.getCoordinateSet()
    for i in range(coords.getSize()):
        rows.append(("converged_pose", coords.get(i).getName(), "value", coords.get(i).getValue(state)))
    data = osim.MarkerData(static)
    data.averageFrames(-1.0, t0, t1)
    data.convertToUnits(model.getLengthUnits())
    frame = data.getFrame(0)
    markers = model.getMarkerSet()
    for i in range(markers.getSize()):
        mk = markers.get(i)
        k = data.getMarkerIndex(mk.getName())
        if k < 0:
            continue
        loc = model.getGround().findStationLocationInAnotherFrame(state, frame.getMarker(k), mk.getParentFrame())
        rows += [("converged_placed", mk.getName(), axis, loc.get(j)) for j, axis in enumerate("xyz")]
    return rows


def write_rows(path, rows, inputs, models, what):
    with open(path, "w") as f:
        f.write(f"# OpenSim {osim.GetVersion()} ScaleTool, written by tools/peer_opensim_scale.py on "
                f"{datetime.date.today().isoformat()}\n")
        f.write("# opensim-models commit 20a888b9655e73fb84963d6e03eee3752cf6074b (tools/fetch-opensim-models)\n")
        for p in inputs:
            f.write(f"# sha256 {sha256(p)}  {os.path.relpath(p, models)}\n")
        f.write(f"# {what}\n")
        f.write("kind,object,field,value\n")
        for kind, obj, field, value in rows:
            f.write(f"{kind},{obj},{field},{float(value)!r}\n")
    print(f"wrote {path} ({len(rows)} values)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default=os.path.join(ROOT, ".cache", "opensim-models"))
    ap.add_argument("--out", default=OUT)
    ap.add_argument("--placer-out", default=PLACER_OUT)
    a = ap.parse_args()
    gait = os.path.join(a.models, "Gait2354_Simbody")
    setup = os.path.join(gait, "subject01_Setup_Scale.xml")
    generic = os.path.join(gait, "gait2354_simbody.osim")
    marker_set = os.path.join(gait, "gait2354_Scale_MarkerSet.xml")
    static = os.path.join(gait, "subject01_static.trc")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        tool = osim.ScaleTool(setup)
        maker = tool.getGenericModelMaker()
        # the tool reads its inputs relative to the setup's folder
        maker.setModelFileName(os.path.basename(generic))
        maker.setMarkerSetFileName(os.path.basename(marker_set))
        scaler = tool.getModelScaler()
        scaler.setMarkerFileName(os.path.basename(static))
        scaler.setOutputModelFileName(os.path.join(tmp, "scaled.osim"))
        scaler.setOutputScaleFileName(os.path.join(tmp, "scale_set.xml"))
        tool.getMarkerPlacer().setApply(False)
        # the unscaled model with the setup's markers, for the muscles' lengths before
        before_model = osim.Model(generic)
        before_model.updateMarkerSet(osim.MarkerSet(marker_set))
        before = muscle_lengths(before_model)
        # OpenSim's log has the measurements at full precision (its scale set file has 6 digits)
        log = os.path.join(tmp, "scale.log")
        osim.Logger.removeFileSink()
        osim.Logger.addFileSink(log)
        start = time.perf_counter()
        # run() is false when the marker placer is off (it did nothing): judge by the files
        tool.run()
        if not os.path.exists(os.path.join(tmp, "scale_set.xml")):
            sys.exit("OpenSim's ScaleTool failed")
        wall = time.perf_counter() - start
        osim.Logger.removeFileSink()
        rows += measurements(log)
        scale_set = osim.ScaleSet(os.path.join(tmp, "scale_set.xml"))
        for i in range(scale_set.getSize()):
            s = scale_set.get(i)
            f = s.getScaleFactors()
            for k, axis in enumerate("xyz"):
                rows.append(("factor", s.getSegmentName(), axis, f.get(k)))
        model = osim.Model(os.path.join(tmp, "scaled.osim"))
        after = muscle_lengths(model)
        state = model.initSystem()
        model.realizePosition(state)
        bodies = model.getBodySet()
        for i in range(bodies.getSize()):
            b = bodies.get(i)
            rows.append(("body", b.getName(), "mass", b.getMass()))
            c = b.getMassCenter()
            rows += [("body", b.getName(), f"com_{axis}", c.get(k)) for k, axis in enumerate("xyz")]
            m = b.getInertia().getMoments()
            p = b.getInertia().getProducts()
            rows += [("body", b.getName(), n, m.get(k)) for k, n in enumerate(["ixx", "iyy", "izz"])]
            rows += [("body", b.getName(), n, p.get(k)) for k, n in enumerate(["ixy", "ixz", "iyz"])]
        markers = model.getMarkerSet()
        for i in range(markers.getSize()):
            mk = markers.get(i)
            loc = mk.get_location()
            g = mk.getLocationInGround(state)
            rows += [("marker", mk.getName(), axis, loc.get(k)) for k, axis in enumerate("xyz")]
            rows += [("marker_ground", mk.getName(), axis, g.get(k)) for k, axis in enumerate("xyz")]
        joints = model.getJointSet()
        for i in range(joints.getSize()):
            j = joints.get(i)
            for side, frame in (("parent", j.getParentFrame()), ("child", j.getChildFrame())):
                off = osim.PhysicalOffsetFrame.safeDownCast(frame)
                if off is None:
                    continue
                t = off.get_translation()
                rows += [("frame", f"{j.getName()}/{side}", axis, t.get(k)) for k, axis in enumerate("xyz")]
        muscles = model.getMuscles()
        for i in range(muscles.getSize()):
            mu = muscles.get(i)
            n = mu.getName()
            rows.append(("muscle", n, "optimal_fiber_length", mu.getOptimalFiberLength()))
            rows.append(("muscle", n, "tendon_slack_length", mu.getTendonSlackLength()))
            rows.append(("muscle", n, "length_before", before[n]))
            rows.append(("muscle", n, "length_after", after[n]))
    print(f"OpenSim ScaleTool: {wall:.3f} s", file=sys.stderr)
    inputs = (setup, generic, marker_set, static)
    write_rows(a.out, rows, inputs, a.models,
               "the setup as written (measurements then manual scales, 72.6 kg, mass distribution kept); "
               "marker placement off; SI units; default pose")
    write_rows(a.placer_out, placer_rows(inputs), inputs, a.models,
               "the setup as written, its marker placement on (IK of the static trial over 1-1.01 s, markers "
               "moved); SI units")

if __name__ == "__main__":
    main()
