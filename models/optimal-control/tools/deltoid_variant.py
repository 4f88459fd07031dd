#!/usr/bin/env python3
"""A DIAGNOSTIC variant of the shoulder models whose anterior deltoid is re-routed; not a model
of the repository (docs/optimal-control-measurements.md, "The anterior deltoid re-routed (a
diagnostic)"). Pure Python 3.11: reads TOML with tomllib, writes it with stage.py's `dumps`.

    python3 models/optimal-control/tools/deltoid_variant.py build MYO_SIM OUT_DIR RULE [KIN]
    python3 models/optimal-control/tools/deltoid_variant.py scale OUT_DIR DAS3_REST VARIANT_REST
    python3 models/optimal-control/tools/deltoid_variant.py stage PROBLEM MODEL OUT NAME GUESS \
        HESSIAN ITERATIONS

`build` writes OUT_DIR/shoulder-forward.toml, OUT_DIR/shoulder.toml and OUT_DIR/muscles.csv: the committed
models/shoulder files with only the six `deltoideus_clavicular_*` paths changed (DAS3's origins,
insertions, `F_max`, fibre and tendon lengths kept unless the rest length moves by more than
`LENGTH_TOLERANCE`, then both lengths are scaled by the ratio), `muscle_table` pointed at the
committed table (or at OUT_DIR/muscles.csv, scaled the same way). MYO_SIM is MyoHub's myo_sim
folder (MyoArm, from MoBL-ARMS, Holzbaur et al. 2005), read for the DELT1 path. RULE:

- `mobl`: MoBL-ARMS's humeral routing of DELT1 mapped into DAS3's humerus frame. Both frames
  have their origin at the glenohumeral centre and y up the shaft; MoBL's x is anterior and z
  lateral (its lateral-epicondyle sites have z > 0), DAS3's x lateral and z dorsal, so
  p_DAS3 = s (z, y, -x)_MoBL with s the ratio of the humerus lengths (GH to the elbow centre).
  Each element gets one via point at its insertion plus MoBL's offset P2 - P1 (via point minus
  insertion), and MoBL's DELT1 sphere replaces DAS3's deltoid sphere.
- `head`: one via point, for all six elements, on the humeral head's anterior-superior surface:
  at DAS3's deltoid-sphere radius from its centre, in the direction cos θ f + sin θ y (f the
  forward direction of the 50° plane of elevation, y up the shaft, at rest), θ chosen so that the
  `F_max`-weighted elevation moment arm at 1° of the target equals MyoArm's DELT1 (`ARM_AT_1`)
  or, where that is out of reach, the largest attainable; DAS3's sphere removed. Needs KIN, a
  `mollier kinematics` run of the target on the committed forward model (flexion_moment_arms.py
  gives the commands), for the postures.

- `acromion`: `mobl` and MoBL's acromial via point (DELT1-P3, on the scapula), placed on DAS3's
  scapula where it lies relative to the hanging humerus in MyoArm (mapped as above), the sphere
  on the stretch between the two via points as in MoBL. Fixed after the `head` variant's solve,
  before its own: a post-hoc diagnostic.

`mobl` is the rule; `head` is the fallback, fixed with it before any solve, for when `mobl` leaves
the weighted moment arm at 1° negative (it does: MyoArm's DELT1 owes its leverage to its
acromial via point on the scapula, not to its humeral routing). `scale` then compares the six
elements' rest lengths, `mollier kinematics` of the rest posture (`rest FILE` writes that motion:
every hinge at zero) on the committed and on the variant forward model (DAS3_REST,
VARIANT_REST), and scales as above (once, after `build`). `stage` writes a stage of a predicted problem on the
variant (see `cmd_stage`).
"""

import csv
import math
import sys
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOULDER = HERE.parent.parent / "shoulder"
sys.path.insert(0, str(HERE))
from flexion_moment_arms import (  # noqa: E402
    HINGES, PLANE, cross, dot, min_jerk, norm, read, sub, unit,
)
from make_shoulder import I3, mm, mv, rot  # noqa: E402
from stage import dumps, stage  # noqa: E402

MODELS = ["shoulder-forward.toml", "shoulder.toml"]
PREFIX = "deltoideus_clavicular_"
ARM_AT_1 = 37.4  # mm: MyoArm's DELT1 at 1° in the 50° plane (flexion_moment_arms.py myoarm)
LENGTH_TOLERANCE = 0.03  # relative change of an element's rest length left unscaled


def myoarm(myo_sim):
    """MyoArm's DELT1 humeral sites, its sphere (centre, radius) and the elbow centre, m, in
    MoBL's humerus frame."""
    root = ET.parse(Path(myo_sim) / "arm" / "assets" / "myoarm_body.xml").getroot()
    vec = lambda s: [float(x) for x in s.split()]
    hum = next(b for b in root.iter("body") if b.get("name") == "humerus")
    sites = {s.get("name"): vec(s.get("pos")) for s in hum.iter("site")}
    sphere = next(g for g in hum.iter("geom") if g.get("name") == "DELT1hh_ellipsoid_DELT1")
    ulna = next(b for b in hum.iter("body") if b.get("name") == "ulna")
    lateral = [sites[n][2] for n in ("ECRB-P1", "EDC3-P1")]
    medial = [sites[n][2] for n in ("FCR-P1", "FCU-P1")]
    if not (min(lateral) > 0 > max(medial)):
        raise ValueError("MoBL's humerus z axis is not lateral: the frames do not map")
    scap = next(b for b in root.iter("body") if b.get("name") == "scapula")
    gh = next(b for b in scap.iter("body") if b.get("name") == "scapphant")
    p3 = next(s for s in scap.iter("site") if s.get("name") == "DELT1_DELT1-P3")
    # the acromial via point relative to the hanging humerus (all angles zero): the bodies
    # from the scapula to the humerus must carry no fixed rotation
    chain = [b for b in scap.iter("body")
             if b.get("name") in ("scapphant", "humphant", "humphant1", "humerus")]
    turns = ("quat", "euler", "axisangle", "xyaxes", "zaxis")
    if len(chain) != 4 or any(b.get(t) for b in chain for t in turns):
        raise ValueError("MoBL's scapula-humerus chain is not a translation at rest")
    return {"P1": sites["DELT1_DELT1-P1"], "P2": sites["DELT1_DELT1-P2"],
            "P3": sub(vec(p3.get("pos")), vec(gh.get("pos"))),
            "centre": vec(sphere.get("pos")), "radius": float(sphere.get("size").split()[0]),
            "elbow": vec(ulna.get("pos"))}


def to_das3(p, s):
    """MoBL humerus coordinates (m) to DAS3's (mm): x lateral = z, y = y, z dorsal = -x."""
    return [s * 1e3 * p[2], s * 1e3 * p[1], -s * 1e3 * p[0]]


def elements(doc):
    return sorted((n for n in doc["elements"] if n.startswith(PREFIX)), key=lambda n: (len(n), n))


def das3_sphere(doc):
    """DAS3's deltoid sphere (centre mm, radius mm) on the anterior deltoid's elements."""
    spheres = {(tuple(o["centre"]), o["radius"]) for n in elements(doc)
               for o in doc["elements"][n].get("obstacles", []) if o["type"] == "sphere"}
    if len(spheres) != 1:
        raise ValueError(f"expected one deltoid sphere, found {len(spheres)}")
    centre, radius = spheres.pop()
    return list(centre), radius


def route_mobl(doc, mobl, elbow):
    """`elbow`: DAS3's elbow centre in the humerus frame, mm (the forward model's point)."""
    s = norm(elbow) / (1e3 * norm(mobl["elbow"]))
    offset = to_das3(sub(mobl["P2"], mobl["P1"]), s)
    sphere = {"type": "sphere", "body": "humerus", "centre": to_das3(mobl["centre"], s),
              "radius": s * 1e3 * mobl["radius"]}
    points = doc["bodies"]["humerus"]["points"]
    for n in elements(doc):
        points[f"{n}_via"] = [a + b for a, b in zip(points[f"{n}_i"], offset)]
        el = doc["elements"][n]
        el["via"] = [f"humerus.{n}_via"]
        el["obstacles"] = [sphere]
    return f"MoBL humeral routing, s = {s:.5f}, via offset {[round(x, 2) for x in offset]} mm"


def route_acromion(doc, mobl, elbow, forward):
    """`mobl`, and MoBL's acromial via point P3 on the scapula, placed where it lies relative to
    the hanging humerus (rest posture: the humerus frame is the thorax's), the sphere on the
    stretch between the two via points as in MoBL. A post-hoc diagnostic (see the docs)."""
    note = route_mobl(doc, mobl, elbow)
    s = norm(elbow) / (1e3 * norm(mobl["elbow"]))
    sca = forward["bodies"]["scapula"]
    r, gh = sca["orientation"]["matrix"], sca["points"]["GH"]
    d = to_das3(mobl["P3"], s)
    acromion = [g + sum(r[j][i] * d[j] for j in range(3)) for i, g in enumerate(gh)]
    doc["bodies"]["scapula"]["points"]["deltoideus_clavicular_acromion_via"] = acromion
    for n in elements(doc):
        el = doc["elements"][n]
        el["via"] = ["scapula.deltoideus_clavicular_acromion_via"] + el["via"]
        for o in el["obstacles"]:
            o["segment"] = 1
    return note + f"; acromial via point {[round(x, 3) for x in acromion]} mm (scapula)"


def humerus_pose(axes, row, positions):
    """The humerus's orientation (thorax frame; identity at rest) and GH, mm, at a target row."""
    r = I3
    for h in HINGES:
        r = mm(r, rot(axes[h], row[f"{h}.rotation"]))
    gh = [positions[f"scapula.GH.{c}"] * 1e3 for c in "xyz"]
    return r, gh


def head_arm(doc, via, r, gh, positions, u):
    """F_max-weighted elevation moment arm (mm) of the elements through `via` (humerus, mm)."""
    v = [a + b for a, b in zip(gh, mv(r, via))]
    total = moment = 0.0
    for n in elements(doc):
        o = [positions[f"clavicle.{n}_o.{c}"] * 1e3 for c in "xyz"]
        f = unit(sub(o, v))
        fmax = doc["muscles"][n]["max_force"]
        moment += fmax * dot(cross(sub(v, gh), f), u)
        total += fmax
    return moment / total


def route_head(doc, kin, forward):
    """`forward`: the forward model, whose hinges and points place the postures of KIN."""
    axes = {h: unit(forward["elements"][h]["axis"]) for h in HINGES}
    _, target = read(SHOULDER / "flexion-target.csv")
    _, pos = read(Path(kin) / "positions.csv")
    elev = [min_jerk(row["time"])[0] for row in target]
    k = next(i for i, e in enumerate(elev) if e >= 1.0)
    r, gh = humerus_pose(axes, target[k], pos[k])
    elbow = [pos[k][f"humerus.elbow.{c}"] * 1e3 for c in "xyz"]
    placed = [a + b for a, b in zip(gh, mv(r, forward["bodies"]["humerus"]["points"]["elbow"]))]
    if norm(sub(elbow, placed)) > 1e-6:
        raise ValueError("the composed hinge rotations do not place the humerus as KIN does")
    p = math.radians(PLANE)
    u = [math.sin(p), 0.0, math.cos(p)]
    fwd = cross([0.0, 1.0, 0.0], u)
    centre, radius = das3_sphere(doc)
    via = lambda t: [c + radius * (math.cos(t) * a + math.sin(t) * b)
                     for c, a, b in zip(centre, fwd, [0.0, 1.0, 0.0])]
    arm = lambda t: head_arm(forward, via(t), r, gh, pos[k], u)
    grid = [math.radians(d / 10) for d in range(0, 901)]
    best = max(grid, key=arm)
    theta = best
    if arm(best) >= ARM_AT_1:
        lo, hi = (0.0, best) if arm(0.0) < ARM_AT_1 else (best, math.pi / 2)
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            if (arm(mid) < ARM_AT_1) == (arm(lo) < ARM_AT_1):
                lo = mid
            else:
                hi = mid
        theta = 0.5 * (lo + hi)
    point = via(theta)
    doc["bodies"]["humerus"]["points"]["deltoideus_clavicular_head_via"] = point
    for n in elements(doc):
        el = doc["elements"][n]
        el["via"] = ["humerus.deltoideus_clavicular_head_via"]
        el["obstacles"] = [o for o in el.get("obstacles", []) if o["type"] != "sphere"]
        if not el["obstacles"]:
            del el["obstacles"]
    return (f"head via point at θ = {math.degrees(theta):.2f}° ({[round(x, 3) for x in point]} "
            f"mm), weighted arm at {elev[k]:.2f}°: {arm(theta):.2f} mm (target {ARM_AT_1}, "
            f"largest attainable {arm(best):.2f} at {math.degrees(best):.1f}°)")


def rest_lengths(run):
    """Each anterior-deltoid element's length (m) in the first row of a `mollier kinematics` run."""
    _, rows = read(Path(run) / "lengths.csv")
    return {k: v for k, v in rows[0].items() if k.startswith(PREFIX)}


def write(out, docs, table, note):
    for name, doc in docs.items():
        text = dumps(doc)
        head = (f"# DIAGNOSTIC variant of models/shoulder/{name}, written by\n"
                f"# models/optimal-control/tools/deltoid_variant.py: {note}\n"
                "# Not a model of the repository; everything but the anterior deltoid is DAS3's.\n")
        (Path(out) / name).write_text(head + text)
    with open(Path(out) / "muscles.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)


def load(directory):
    docs = {n: tomllib.loads((Path(directory) / n).read_text()) for n in MODELS}
    with open(Path(directory) / "muscles.csv", newline="") as fh:
        table = list(csv.DictReader(fh))
    return docs, table


def cmd_build(myo_sim, out, rule, kin=None):
    docs, table = load(SHOULDER)
    forward = docs[MODELS[0]]
    elbow = forward["bodies"]["humerus"]["points"]["elbow"]
    notes = []
    for doc in docs.values():
        if rule == "mobl":
            notes.append(route_mobl(doc, myoarm(myo_sim), elbow))
        elif rule == "acromion":
            notes.append(route_acromion(doc, myoarm(myo_sim), elbow, forward))
        elif rule == "head" and kin:
            notes.append(route_head(doc, kin, forward))
        else:
            raise ValueError(f"rule {rule!r} (with KIN for head) is not one of mobl, head, "
                             "acromion")
    Path(out).mkdir(parents=True, exist_ok=True)
    write(out, docs, table, notes[0])
    print(notes[0])
    return 0


def cmd_scale(out, das3_rest, variant_rest):
    """Scale L_opt and L_ts of each element whose rest length moved by more than the tolerance,
    by the ratio of the rest lengths (both `mollier kinematics` runs of the rest posture)."""
    docs, table = load(out)
    before, after = rest_lengths(das3_rest), rest_lengths(variant_rest)
    ratios = {n: after[n] / before[n] for n in before}
    worst = max(abs(r - 1.0) for r in ratios.values())
    print("rest length ratios: " + ", ".join(f"{n[len(PREFIX):]} {r:.4f}" for n, r in ratios.items()))
    if worst <= LENGTH_TOLERANCE:
        print(f"largest change {worst:.4f} within {LENGTH_TOLERANCE}: lengths kept")
        return 0
    for doc in docs.values():
        for n, r in ratios.items():
            if n in doc.get("muscles", {}):
                m = doc["muscles"][n]
                m["optimal_fibre_length"] *= r
                m["tendon_slack_length"] *= r
    for row in table:
        if row["element"] in ratios:
            r = ratios[row["element"]]
            row["optimal_length_mm"] = repr(float(row["optimal_length_mm"]) * r)
            row["tendon_slack_mm"] = repr(float(row["tendon_slack_mm"]) * r)
    write(out, docs, table, f"lengths scaled by the rest-length ratios (largest change {worst:.4f})")
    print(f"largest change {worst:.4f}: optimal fibre and tendon slack lengths scaled")
    return 0


def cmd_stage(problem, model_file, out, name, guess, hessian, iterations):
    """A stage of a solve on the variant ([`stage.stage`]), marked as on the diagnostic model."""
    note = f"a stage of {problem} on the diagnostic model {model_file} (deltoid_variant.py stage)"
    stage(problem, model_file, out, name, guess, hessian, iterations, note)
    return 0


def cmd_rest(out):
    """The rest posture as a two-row motion: every hinge at zero."""
    with open(out, "w") as fh:
        fh.write(",".join(["time"] + [f"{h}.rotation" for h in HINGES]) + "\n")
        for t in (0.0, 1.0):
            fh.write(",".join([repr(t)] + ["0.0"] * len(HINGES)) + "\n")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "rest":
        return cmd_rest(argv[2])
    if len(argv) == 9 and argv[1] == "stage":
        return cmd_stage(*argv[2:])
    if len(argv) >= 5 and argv[1] == "build" and len(argv) <= 6:
        return cmd_build(*argv[2:])
    if len(argv) == 5 and argv[1] == "scale":
        return cmd_scale(*argv[2:])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
