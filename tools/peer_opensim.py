#!/usr/bin/env python3
"""Reference data from OpenSim itself for Mollier's OpenSim import (crates/mollier-osim/tests).

    python3 -m venv venv && venv/bin/pip install opensim==4.6
    venv/bin/python tools/peer_opensim.py [--das3 ../shared/data/das3/das3.osim]

Run once; its outputs are committed and the Rust tests read them (CI has no OpenSim):

1. crates/mollier-osim/tests/data/osim/*.osim -- small synthetic models, one per joint type and
   one per function type (and a coordinate coupler), each a chain ground -> b1 -> b2 with offset
   frames turned and moved off the bodies' origins, and a marker on each body. The models are
   written here as XML, loaded by OpenSim and saved back by OpenSim (`Model.printToXML`), so the
   files the tests import are OpenSim's own serialisation (except custom_naturalspline.osim, kept
   as written: OpenSim 4.6 would write its NaturalCubicSpline back as a SimmSpline).
2. crates/mollier-osim/tests/data/opensim_kinematics.json -- for each synthetic model, at several
   coordinate values (a few outside the splines' knots), the coordinates as OpenSim assembled
   them (a coupled coordinate is OpenSim's) and every body's origin and marker in ground (m).
3. crates/mollier-osim/tests/data/das3_opensim.json -- DAS3 (external data, never copied into the
   repository; its SHA-256 is recorded): every muscle's length (m) and moment arm about every
   coordinate (m: OpenSim's computeMomentArm, and -dL/dq by central differences of OpenSim's
   lengths, which is what Mollier's transfer functions are) at 24 postures inside the coordinate
   ranges (the
   default and random ones with no path point inside a wrap object it wraps over; see das3()).

Python 3.11, opensim 4.6 (PyPI), numpy. Random postures use a fixed seed.
"""

import argparse
import datetime
import hashlib
import json
import math
import os
import random
import sys

import opensim as osim

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, ".."))
DATA = os.path.join(REPO, "crates", "mollier-osim", "tests", "data")


def v3(v):
    return " ".join(repr(float(x)) for x in v)


def frame(name, parent, t, o):
    return (f'<PhysicalOffsetFrame name="{name}"><socket_parent>{parent}</socket_parent>'
            f"<translation>{v3(t)}</translation><orientation>{v3(o)}</orientation></PhysicalOffsetFrame>")


def coord(name, default, lo, hi, locked=False):
    return (f'<Coordinate name="{name}"><default_value>{default!r}</default_value><range>{lo!r} {hi!r}</range>'
            f"<locked>{'true' if locked else 'false'}</locked></Coordinate>")


def joint(kind, name, parent, child, coords, pt, po, ct, co, extra=""):
    pf, cf = f"{name}_parent", f"{name}_child"
    ppath = "/ground" if parent == "ground" else f"/bodyset/{parent}"
    return (f'<{kind} name="{name}"><socket_parent_frame>{pf}</socket_parent_frame>'
            f"<socket_child_frame>{cf}</socket_child_frame><coordinates>{''.join(coords)}</coordinates>"
            f"<frames>{frame(pf, ppath, pt, po)}{frame(cf, '/bodyset/' + child, ct, co)}</frames>{extra}</{kind}>")


def fn_xml(f):
    kind = f[0]
    if kind == "linear":
        return f'<LinearFunction name="function"><coefficients>{f[1]!r} {f[2]!r}</coefficients></LinearFunction>'
    if kind == "const":
        return f'<Constant name="function"><value>{f[1]!r}</value></Constant>'
    if kind == "poly":
        return f'<PolynomialFunction name="function"><coefficients>{v3(f[1])}</coefficients></PolynomialFunction>'
    if kind in ("simm", "natural"):
        tag = "SimmSpline" if kind == "simm" else "NaturalCubicSpline"
        return f'<{tag} name="function"><x>{v3(f[1])}</x><y>{v3(f[2])}</y></{tag}>'
    if kind == "mult":
        inner = fn_xml(f[2])
        return f'<MultiplierFunction name="function"><function>{inner}</function><scale>{f[1]!r}</scale></MultiplierFunction>'
    raise ValueError(kind)


def spatial(axes):
    """axes: six (coordinate or None, axis, function)."""
    names = ["rotation1", "rotation2", "rotation3", "translation1", "translation2", "translation3"]
    out = "<SpatialTransform>"
    for n, (c, ax, f) in zip(names, axes):
        out += f'<TransformAxis name="{n}"><coordinates>{c or ""}</coordinates><axis>{v3(ax)}</axis>{fn_xml(f)}</TransformAxis>'
    return out + "</SpatialTransform>"


BODIES = """
<Body name="b1"><mass>1.5</mass><mass_center>0.01 0.1 -0.02</mass_center><inertia>0.02 0.01 0.015 0.001 -0.002 0.0005</inertia></Body>
<Body name="b2"><mass>0.8</mass><mass_center>-0.03 0.05 0.01</mass_center><inertia>0.004 0.006 0.005 0 0.0002 -0.0001</inertia></Body>
"""
MARKERS = """
<Marker name="b1_m"><socket_parent_frame>/bodyset/b1</socket_parent_frame><location>0.1 -0.2 0.3</location></Marker>
<Marker name="b2_m"><socket_parent_frame>/bodyset/b2</socket_parent_frame><location>-0.15 0.05 0.25</location></Marker>
"""

# offset frames: moved and turned on both sides of every joint
P1, O1 = (0.1, 0.2, -0.3), (0.3, -0.2, 0.5)
C1, D1 = (-0.1, 0.05, 0.2), (0.2, 0.4, -0.1)
P2, O2 = (0.05, -0.4, 0.12), (-0.6, 0.1, 0.25)
C2, D2 = (0.02, 0.3, -0.07), (0.15, -0.35, 0.7)


def chain(kind, coords1, coords2, extra1="", extra2=""):
    return (joint(kind, "j1", "ground", "b1", coords1, P1, O1, C1, D1, extra1)
            + joint(kind, "j2", "b1", "b2", coords2, P2, O2, C2, D2, extra2))


def model_xml(name, joints, constraints=""):
    return f"""<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
<Model name="{name}">
<gravity>0 -9.80665 0</gravity>
<Ground name="ground"/>
<BodySet name="bodyset"><objects>{BODIES}</objects></BodySet>
<JointSet name="jointset"><objects>{joints}</objects></JointSet>
<ConstraintSet name="constraintset"><objects>{constraints}</objects></ConstraintSet>
<MarkerSet name="markerset"><objects>{MARKERS}</objects></MarkerSet>
</Model>
</OpenSimDocument>
"""


def cs(prefix, n, lo=-1.5, hi=1.5):
    return [coord(f"{prefix}{k + 1}", 0.1 * (k + 1), lo, hi) for k in range(n)]


X, Y, Z = (1, 0, 0), (0, 1, 0), (0, 0, 1)
SK = [-1.0, -0.4, 0.1, 0.7, 1.2]  # knots
SY = [0.3, -0.1, 0.25, 0.9, 0.4]


def custom_model(name, axes1, axes2, ncoord=2):
    c1 = [coord(f"a{k + 1}", 0.05 * (k + 1), -1.5, 1.5) for k in range(ncoord)]
    c2 = [coord(f"b{k + 1}", -0.05 * (k + 1), -1.5, 1.5) for k in range(ncoord)]
    return model_xml(name, chain("CustomJoint", c1, c2, spatial(axes1), spatial(axes2)))


def synthetic_models():
    m = {}
    m["weld"] = model_xml("weld", chain("WeldJoint", [], []))
    m["pin"] = model_xml("pin", chain("PinJoint", cs("p", 1), cs("q", 1)))
    m["slider"] = model_xml("slider", chain("SliderJoint", cs("p", 1, -0.5, 0.5), cs("q", 1, -0.5, 0.5)))
    m["universal"] = model_xml("universal", chain("UniversalJoint", cs("p", 2), cs("q", 2)))
    m["ball"] = model_xml("ball", chain("BallJoint", cs("p", 3), cs("q", 3)))
    m["gimbal"] = model_xml("gimbal", chain("GimbalJoint", cs("p", 3), cs("q", 3)))
    m["planar"] = model_xml("planar", chain("PlanarJoint", cs("p", 1) + cs("t", 2, -0.5, 0.5), cs("q", 1) + cs("u", 2, -0.5, 0.5)))
    m["free"] = model_xml("free", chain("FreeJoint", cs("p", 3) + cs("t", 3, -0.5, 0.5), cs("q", 3) + cs("u", 3, -0.5, 0.5)))
    # custom joints, one per function type; axes not along the frame's axes
    a, b = (0.3, 0.9, -0.2), (-0.5, 0.1, 0.8)
    lin = lambda s, i: ("linear", s, i)
    m["custom_linear"] = custom_model("custom_linear", [
        ("a1", Z, lin(1.0, 0.2)), ("a2", a, lin(0.7, -0.1)), (None, X, ("const", 0.3)),
        ("a1", X, lin(0.05, 0.01)), (None, Y, ("const", -0.02)), ("a2", b, lin(-0.1, 0.03))], [
        ("b1", b, lin(1.0, 0.0)), (None, Z, ("const", -0.4)), ("b2", Y, lin(1.0, 0.1)),
        (None, X, ("const", 0.0)), ("b1", a, lin(0.2, 0.0)), (None, Z, ("const", 0.05))])
    simm = ("simm", SK, SY)
    simm3 = ("simm", [-1.0, 0.2, 1.1], [0.05, -0.03, 0.08])
    simm2 = ("simm", [-0.5, 0.9], [0.0, 0.12])
    m["custom_simmspline"] = custom_model("custom_simmspline", [
        ("a1", Z, simm), ("a2", X, lin(1.0, 0.0)), (None, Y, ("const", 0.0)),
        ("a1", X, simm3), ("a2", Y, simm2), (None, Z, ("const", 0.0))], [
        ("b1", Y, simm), ("b2", a, simm3), (None, X, ("const", 0.1)),
        ("b2", Z, ("simm", SK, [0.01, -0.02, 0.0, 0.03, 0.02])), (None, X, ("const", 0.0)), (None, Y, ("const", 0.0))])
    nat = ("natural", SK, SY)
    m["custom_naturalspline"] = custom_model("custom_naturalspline", [
        ("a1", Z, nat), ("a2", X, lin(1.0, 0.0)), (None, Y, ("const", 0.0)),
        ("a1", X, ("natural", [-1.0, 0.2, 1.1], [0.05, -0.03, 0.08])), (None, Y, ("const", 0.0)), (None, Z, ("const", 0.0))], [
        ("b1", Y, nat), ("b2", Z, lin(1.0, 0.0)), (None, X, ("const", 0.0)),
        ("b2", Z, ("natural", SK, [0.01, -0.02, 0.0, 0.03, 0.02])), (None, X, ("const", 0.0)), (None, Y, ("const", 0.0))])
    poly = ("poly", [0.3, -0.2, 1.1, 0.05])
    m["custom_polynomial"] = custom_model("custom_polynomial", [
        ("a1", Z, poly), ("a2", a, ("poly", [0.5, 0.9, -0.1])), (None, Y, ("const", 0.0)),
        ("a1", X, ("poly", [0.02, -0.01, 0.04])), (None, Y, ("const", 0.0)), (None, Z, ("const", 0.0))], [
        ("b1", Y, poly), ("b2", X, lin(1.0, 0.0)), (None, Z, ("const", 0.0)),
        ("b2", Y, ("poly", [0.1, 0.0])), (None, X, ("const", 0.0)), (None, Z, ("const", 0.0))])
    m["custom_multiplier"] = custom_model("custom_multiplier", [
        ("a1", Z, ("mult", 0.6, simm)), ("a2", X, ("mult", -1.3, lin(1.0, 0.1))), (None, Y, ("const", 0.0)),
        ("a1", X, ("mult", 0.5, simm3)), (None, Y, ("const", 0.0)), (None, Z, ("const", 0.0))], [
        ("b1", Y, ("mult", 2.0, poly)), ("b2", X, lin(1.0, 0.0)), (None, Z, ("const", 0.0)),
        (None, X, ("const", 0.0)), (None, Y, ("const", 0.0)), (None, Z, ("const", 0.0))])
    coupler = ('<CoordinateCouplerConstraint name="couple"><isEnforced>true</isEnforced>'
               '<coupled_coordinates_function><SimmSpline name="function">'
               f"<x>{v3(SK)}</x><y>{v3(SY)}</y></SimmSpline></coupled_coordinates_function>"
               "<independent_coordinate_names>p1</independent_coordinate_names>"
               "<dependent_coordinate_name>q1</dependent_coordinate_name><scale_factor>0.8</scale_factor>"
               "</CoordinateCouplerConstraint>")
    m["coupler"] = model_xml("coupler", chain("PinJoint", cs("p", 1), cs("q", 1)), coupler)
    return m


POSTURES = [0.0, 0.37, -0.81, 1.3, -1.45, 0.9]  # scaled per coordinate; +-1.45 is outside the knots


def kinematics(path):
    model = osim.Model(path)
    state = model.initSystem()
    cset = model.getCoordinateSet()
    names = [cset.get(i).getName() for i in range(cset.getSize())]
    coupled = set()
    for i in range(model.getConstraintSet().getSize()):
        c = osim.CoordinateCouplerConstraint.safeDownCast(model.getConstraintSet().get(i))
        if c is not None:
            coupled.add(c.getDependentCoordinateName())
    out = []
    for k, base in enumerate(POSTURES):
        for i, n in enumerate(names):
            c = cset.get(i)
            if n in coupled:
                continue
            span = 0.5 if c.getMotionType() == 2 else 1.0  # translations: metres
            v = base * span * (1.0 - 0.13 * i) + 0.05 * i * (k % 3)
            c.setValue(state, v, False)
        if coupled:
            model.assemble(state)
        model.realizePosition(state)
        bodies = {}
        for i in range(model.getBodySet().getSize()):
            b = model.getBodySet().get(i)
            p = b.getPositionInGround(state)
            bodies[b.getName()] = [p.get(0), p.get(1), p.get(2)]
        markers = {}
        for i in range(model.getMarkerSet().getSize()):
            mk = model.getMarkerSet().get(i)
            p = mk.getLocationInGround(state)
            markers[mk.getName()] = [p.get(0), p.get(1), p.get(2)]
        q = [cset.get(i).getValue(state) for i in range(len(names))]
        out.append({"q": q, "bodies": bodies, "markers": markers})
    return {"coordinates": names, "postures": out}


def das3(path, n=24, seed=14):
    """Postures: the default, then random ones (each coordinate moved by up to 35 % of its range
    from its default, inside the range), none drawn again: DAS3's .osim has no scapulothoracic
    constraint, so some push a path point inside a wrap object it wraps over (the scapula into
    the thorax), where OpenSim draws that stretch straight, and so does the import."""
    model = osim.Model(path)
    state = model.initSystem()
    cset = model.getCoordinateSet()
    names = [cset.get(i).getName() for i in range(cset.getSize())]
    rng = random.Random(seed)
    muscles = [model.getMuscles().get(i) for i in range(model.getMuscles().getSize())]
    postures = []
    while len(postures) < n:
        k = len(postures)
        q = []
        for i in range(len(names)):
            c = cset.get(i)
            lo, hi, d = c.getRangeMin(), c.getRangeMax(), c.getDefaultValue()
            v = d if k == 0 else d + rng.uniform(-0.35, 0.35) * (hi - lo)
            v = min(max(v, lo), hi)
            q.append(v)
            c.setValue(state, v, False)
        model.realizePosition(state)
        lengths = [m.getLength(state) for m in muscles]
        arms = [[m.computeMomentArm(state, cset.get(i)) for i in range(len(names))] for m in muscles]
        # -dL/dq by central differences of OpenSim's lengths (h = 1e-6 rad: truncation ~1e-12 m,
        # rounding ~1e-10 m): the moment arm as Mollier defines it, from OpenSim's path
        h = 1e-6
        dl = [[0.0] * len(names) for _ in muscles]
        for i in range(len(names)):
            c = cset.get(i)
            side = []
            for sgn in (1.0, -1.0):
                c.setValue(state, q[i] + sgn * h, False)
                model.realizePosition(state)
                side.append([m.getLength(state) for m in muscles])
            c.setValue(state, q[i], False)
            for j in range(len(muscles)):
                dl[j][i] = -(side[0][j] - side[1][j]) / (2.0 * h)
        model.realizePosition(state)
        postures.append({"q": q, "lengths": lengths, "moment_arms": arms, "minus_dl_dq": dl})
        print(f"das3 posture {k + 1}/{n}", file=sys.stderr)
    return {"coordinates": names, "muscles": [m.getName() for m in muscles], "postures": postures}


def rounded(x):
    """Numbers to 12 significant digits (1e-13 m on a 0.1 m length): a smaller file."""
    if isinstance(x, float):
        return float(f"{x:.12g}")
    if isinstance(x, list):
        return [rounded(v) for v in x]
    if isinstance(x, dict):
        return {k: rounded(v) for k, v in x.items()}
    return x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--das3", default=os.path.join(REPO, "..", "shared", "data", "das3", "das3.osim"))
    ap.add_argument("--das3-only", action="store_true", help="write das3_opensim.json only")
    args = ap.parse_args()
    osim.Logger.removeFileSink()  # no opensim.log beside the data
    os.makedirs(os.path.join(DATA, "osim"), exist_ok=True)
    provenance = {
        "opensim": osim.GetVersionAndDate(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python3 tools/peer_opensim.py",
    }
    models = {}
    for name, xml in ({} if args.das3_only else synthetic_models()).items():
        raw = os.path.join(DATA, "osim", f"{name}.osim")
        with open(raw, "w") as fh:
            fh.write(xml)
        m = osim.Model(raw)
        m.initSystem()
        if name != "custom_naturalspline":
            # OpenSim's own serialisation is what the tests import; but OpenSim 4.6 writes a
            # NaturalCubicSpline back as a SimmSpline (it has no class of that name), so that
            # model's file is kept as written, to test that tag
            m.printToXML(raw)
        models[name] = kinematics(raw)
        print(f"{name}: {len(models[name]['postures'])} postures", file=sys.stderr)
    if not args.das3_only:
        with open(os.path.join(DATA, "opensim_kinematics.json"), "w") as fh:
            json.dump({"provenance": provenance, "models": models}, fh, indent=1)
    if os.path.exists(args.das3):
        sha = hashlib.sha256(open(args.das3, "rb").read()).hexdigest()
        d = das3(args.das3)
        d["provenance"] = dict(provenance, das3_sha256=sha,
                               das3="dasproject/DAS3 commit d6f2ff0 (../shared/data/das3/das3.osim; not in this repository)")
        with open(os.path.join(DATA, "das3_opensim.json"), "w") as fh:
            json.dump(rounded(d), fh)
    else:
        print(f"{args.das3} not found: DAS3 reference not written", file=sys.stderr)


if __name__ == "__main__":
    main()
