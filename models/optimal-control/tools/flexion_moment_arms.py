#!/usr/bin/env python3
"""Moment arms and static sharing of the flexion's lifters and of the scapula's upward rotators
(docs/optimal-control-measurements.md, "Why the biceps lifts early"). Pure Python 3.11.

Along the target (models/shoulder/flexion-target.csv) on the forward model:

    python3 models/optimal-control/tools/flexion_moment_arms.py motion /tmp/fm/target.csv
    mollier kinematics models/shoulder/shoulder-forward.toml --motion /tmp/fm/target.csv \
        --out /tmp/fm/kin
    python3 models/optimal-control/tools/flexion_moment_arms.py arms /tmp/fm/kin [MODEL]

`arms` prints, per muscle group at the target's elevations, the elevation moment arm (mm,
F_max-weighted mean over the elements, [smallest, largest element]) and the maximal moment
Σ F_max r (N m). The elevation moment arm is m·u: m the moment per unit force on the humerus,
from the three glenohumeral hinges' moment arms r_j = m·a_j (`moment_arms.csv`) with a_j their
current axes (the rest axes of the model file carried by the hinges before them), u = Ry(plane) z,
the axis normal to the plane of elevation; then the same moment about the humeral shaft s (from
the glenohumeral centre to the elbow) and about s x u. For the scapula (and the anterior
deltoid, whose origin is on the clavicle) it prints the same about the normal n
of the scapular plane (AC, TS, AI; the target's upward rotation positive) of the moment on the
scapula about AC (the three AC hinges) and on clavicle and scapula about SC (the three SC
hinges, AC held), and the girdle's part of the target's motion, -dl/dε with the glenohumeral
hinges held (mm per rad of arm elevation). `perturb MOTION DIR` and `central KIN DIR` compare the glenohumeral moment arms with central
differences of the lengths (±1e-5 rad of each hinge; run `mollier kinematics` on each of DIR's
six motions into DIR/<hinge>±). `check DIR` compares the projection with the closed
form from the node positions for the anterior deltoid's elements that do not wrap (exit 1 if
they differ by more than 1e-9 m; with a via point, from it). MODEL (default the committed
forward model) is the model file the kinematics ran on, e.g. a diagnostic variant of
deltoid_variant.py.

Static sharing at the same postures with the humerus's axial rotation as in the target (the
YZY third angle minus the plane; the study's motion has it 0):

    mollier study models/shoulder/flexion.toml --out /tmp/fm/study  # with plane = 50,
    #   elevation = [1, 79], frames = 79 in a copy of the study file
    python3 models/optimal-control/tools/flexion_moment_arms.py neutral \
        /tmp/fm/study/motion.csv /tmp/fm/static.csv
    mollier inverse models/shoulder/shoulder.toml --motion /tmp/fm/static.csv --static \
        --criterion b --out /tmp/fm/b
    python3 models/optimal-control/tools/flexion_moment_arms.py shares /tmp/fm/b/forces.csv \
        /tmp/fm/static.csv

`shares` prints each group's summed force over its summed F_max (PCSA x 100 N/cm^2, the
model's specific tension) at the elevations.

The peer, in an environment with MuJoCo (`pip install mujoco`) and MyoHub's myo_sim folder:

    python models/optimal-control/tools/flexion_moment_arms.py myoarm PATH/TO/myo_sim 50
"""

import csv
import math
import sys
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHOULDER = HERE.parent.parent / "shoulder"
sys.path.insert(0, str(SHOULDER / "tools"))
from flexion_target import DEG, DURATION, ELEVATION, PLANE, elevation  # noqa: E402
from make_shoulder import I3, dot, mm, mv, norm, rot, sub  # noqa: E402

TARGET = SHOULDER / "flexion-target.csv"
MODEL = SHOULDER / "shoulder-forward.toml"
MUSCLES = SHOULDER / "muscles.csv"
ELEVATIONS = [1, 10, 20, 30, 45, 60, 78]  # deg
H_CENTRAL = 1e-5  # rad: the step of the central differences
HINGES = ["sc_y", "sc_z", "sc_x", "ac_y", "ac_z", "ac_x", "gh_x", "gh_y", "gh_z"]
HUMERUS = {
    "anterior deltoid": "deltoideus_clavicular_",
    "biceps longum": "biceps_longum",
    "biceps breve": "biceps_breve",
    "supraspinatus": "supraspinatus_",
    "coracobrachialis": "coracobrachialis_",
    "pectoralis major, clavicular": "pectoralis_major_clavicular_",
    "deltoid, scapular part": "deltoideus_scapular_",
    "infraspinatus": "infraspinatus_",
    "subscapularis": "subscapularis_",
}
SCAPULA = {
    "anterior deltoid": "deltoideus_clavicular_",
    "serratus anterior 1-3": "serratus_anterior_[123]",
    "serratus anterior 4-6": "serratus_anterior_[456]",
    "trapezius, scapular": "trapezius_scapular_",
    "trapezius, clavicular": "trapezius_clavicular_",
    "rhomboideus": "rhomboideus_",
    "levator scapulae": "levator_scapulae_",
    "pectoralis minor": "pectoralis_minor_",
}


def read(path):
    """Header and rows (dicts of floats; empty cells NaN) of a CSV, `#` lines skipped."""
    with open(path, newline="") as fh:
        rows = list(csv.reader(line for line in fh if not line.startswith("#")))
    num = lambda x: float(x) if x not in ("", "solved") else math.nan
    return rows[0], [{k: num(v) for k, v in zip(rows[0], r) if k != "status"} for r in rows[1:]]


def members(pattern, names):
    """The element names a group pattern selects: `prefix_`, `prefix_[123]` or one name."""
    if pattern.endswith("]"):
        stem, digits = pattern[:-1].split("[")
        return [stem + d for d in digits if stem + d in names]
    if pattern.endswith("_"):
        return sorted((n for n in names if n.startswith(pattern)), key=lambda n: (len(n), n))
    return [pattern] if pattern in names else []


def cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def unit(a):
    n = norm(a)
    return [x / n for x in a]


def solve_transposed(cols, r):
    """m with cols[j]·m = r[j] (Cramer's rule; the three axes are independent)."""
    det = dot(cols[0], cross(cols[1], cols[2]))
    rows = [cross(cols[1], cols[2]), cross(cols[2], cols[0]), cross(cols[0], cols[1])]
    return [sum(r[j] * rows[j][i] for j in range(3)) / det for i in range(3)]


def model(path=MODEL):
    """Hinge rest axes (unit, thorax frame), each muscle's max_force (N) and the elements."""
    doc = tomllib.loads(Path(path).read_text())
    axes = {h: unit(doc["elements"][h]["axis"]) for h in HINGES}
    fmax = {name: m["max_force"] for name, m in doc["muscles"].items()}
    return axes, fmax, doc["elements"]


def current_axes(axes, q):
    """The nine hinges' axes at rotations q: each rest axis carried by the hinges before it."""
    out, r = [], I3
    for h, angle in zip(HINGES, q):
        out.append(mv(r, axes[h]))
        r = mm(r, rot(axes[h], angle))
    return out


def min_jerk(t):
    """The target's elevation (deg, `flexion_target.elevation`) and its rate (rad/s, that
    minimum-jerk profile's derivative) at time t (s)."""
    s = min(max(t / DURATION, 0.0), 1.0)
    rise = (ELEVATION[1] - ELEVATION[0]) * DEG
    return elevation(t) / DEG, rise * (30 * s**2 - 60 * s**3 + 30 * s**4) / DURATION


def cmd_motion(out):
    head, rows = read(TARGET)
    cols = ["time"] + [f"{h}.rotation" for h in HINGES]
    with open(out, "w") as fh:
        fh.write(",".join(cols) + "\n")
        for r in rows:
            fh.write(",".join(repr(r[c]) for c in cols) + "\n")


def rising(elev, values, e):
    """`values` at elevation `e` (deg), linear between the rows of the rising motion."""
    top = max(range(len(elev)), key=lambda i: elev[i])
    for i in range(top):
        if elev[i] <= e <= elev[i + 1]:
            w = (e - elev[i]) / (elev[i + 1] - elev[i])
            return values[i] + w * (values[i + 1] - values[i])
    raise ValueError(f"elevation {e} deg is outside the target's")


def table(title, groups, fmax, elev, arms, at):
    """Markdown table of groups at elevations `at`: weighted mean [min, max] mm; Σ F_max r N m."""
    print(f"\n{title}\n")
    print("| group (F_max, N) | " + " | ".join(f"{e}°" for e in at) + " |")
    print("|---|" + "---|" * len(at))
    for name, pattern in groups.items():
        els = members(pattern, fmax)
        total = sum(fmax[e] for e in els)
        cells = []
        for e in at:
            r = [rising(elev, arms[el], e) for el in els]
            moment = sum(fmax[el] * x for el, x in zip(els, r))
            span = f" [{min(r) * 1e3:.0f}, {max(r) * 1e3:.0f}]" if len(els) > 1 else ""
            cells.append(f"{moment / total * 1e3:.1f}{span}; {moment:.1f}")
        print(f"| {name} ({total:.0f}) | " + " | ".join(cells) + " |")


def along_target(kin, path=MODEL):
    """The model's hinge axes and `F_max`, the target's rows, the `mollier kinematics` run's
    moment arms and positions along it (directory `kin`, of the model file `path`), and `u`,
    the unit normal of the target's plane of elevation (thorax axes)."""
    axes, fmax, _ = model(path)
    _, target = read(TARGET)
    _, ma = read(Path(kin) / "moment_arms.csv")
    _, pos = read(Path(kin) / "positions.csv")
    p = math.radians(PLANE)
    return axes, fmax, target, ma, pos, [math.sin(p), 0.0, math.cos(p)]


def cmd_arms(kin, path=MODEL):
    axes, fmax, target, ma, pos, u = along_target(kin, path)
    hum = [e for g in HUMERUS.values() for e in members(g, fmax)]
    sca = [e for g in SCAPULA.values() for e in members(g, fmax)]
    elev, gh, shaft, across = [], {e: [] for e in hum}, {e: [] for e in hum}, {e: [] for e in hum}
    ac, sc, path = ({e: [] for e in sca} for _ in range(3))
    normals, rates = [], []
    for row, m, x in zip(target, ma, pos):
        e, edot = min_jerk(row["time"])
        elev.append(e)
        a = current_axes(axes, [row[f"{h}.rotation"] for h in HINGES])
        arm = lambda el, hs: [m[f"{el}/{h}.rotation"] for h in hs]
        point = lambda n: [x[f"{n}.{c}"] for c in "xyz"]
        s = unit(sub(point("humerus.elbow"), point("scapula.GH")))
        w = unit(cross(s, u))
        for el in hum:
            moment = solve_transposed(a[6:9], arm(el, HINGES[6:9]))
            gh[el].append(dot(moment, u))
            shaft[el].append(dot(moment, s))
            across[el].append(dot(moment, w))
        ts = point("scapula.TS")
        n = unit(cross(sub(point("AC"), ts), sub(point("scapula.AI"), ts)))
        qd = [row[f"{h}.rotation.vel"] for h in HINGES[:6]]
        rates.append(dot([sum(a[j][i] * qd[j] for j in range(6)) for i in range(3)], n))
        normals.append((a, n, qd, edot))
        for el in sca:
            r = arm(el, HINGES[:6])
            sc[el].append(solve_transposed(a[0:3], r[0:3]))
            ac[el].append(solve_transposed(a[3:6], r[3:6]))
            path[el].append(dot(r, qd) / edot if edot > 1e-6 else math.nan)
    sign = 1.0 if sum(rates) >= 0 else -1.0
    phi = [0.0]
    for k in range(1, len(rates)):
        dt = target[k]["time"] - target[k - 1]["time"]
        phi.append(phi[-1] + sign * 0.5 * (rates[k] + rates[k - 1]) * dt)
    print("The scapula's upward rotation about n (trapezoidal sum of its rate), deg: " + ", ".join(
        f"{math.degrees(rising(elev, phi, e)):.1f} at {e}°" for e in ELEVATIONS))
    for el in sca:
        for k, (_, n, _, _) in enumerate(normals):
            ac[el][k] = sign * dot(ac[el][k], n)
            sc[el][k] = sign * dot(sc[el][k], n)
    table(f"Elevation moment arm about Ry({PLANE:g}°) z through the glenohumeral centre, mm; "
          "Σ F_max r, N m", HUMERUS, fmax, elev, gh, ELEVATIONS)
    table("About the humeral shaft s (from the glenohumeral centre to the elbow), mm; N m",
          HUMERUS, fmax, elev, shaft, ELEVATIONS)
    table("About s x u (across the plane of elevation), mm; N m", HUMERUS, fmax, elev, across,
          ELEVATIONS)
    table("About the scapular plane's normal, the moment on the scapula about AC, mm; N m",
          SCAPULA, fmax, elev, ac, ELEVATIONS)
    table("The same, on clavicle and scapula about SC with AC held, mm; N m",
          SCAPULA, fmax, elev, sc, ELEVATIONS)
    table("The girdle's part of the target's motion, -dl/dε with the glenohumeral hinges held, "
          "mm per rad of arm elevation; N m per rad", SCAPULA, fmax, elev, path,
          [5, 10, 20, 30, 45, 60, 75])


def cmd_check(kin, path=MODEL):
    """The projected elevation moment arms of the anterior deltoid's elements 2-6, which do not
    touch their wrap sphere along the target (and of every element without obstacles), against
    the closed form ((i - GH) x f)·u from the node positions (i the path's first humeral point:
    a via point or the insertion; f the unit vector from i to the point before it).
    Exit 1 beyond 1e-9 m."""
    axes, _, target, ma, pos, u = along_target(kin, path)
    elements = model(path)[2]
    names = [f"deltoideus_clavicular_{k}" for k in range(1, 7)]
    names = [n for k, n in enumerate(names) if k > 0 or not elements[n].get("obstacles")]
    worst = 0.0
    for row, m, x in zip(target, ma, pos):
        a = current_axes(axes, [row[f"{h}.rotation"] for h in HINGES])
        point = lambda n: [x[f"{n}.{c}"] for c in "xyz"]
        for el in names:
            r = [m[f"{el}/{h}.rotation"] for h in HINGES[6:9]]
            projected = dot(solve_transposed(a[6:9], r), u)
            chain = [elements[el]["p"]] + elements[el].get("via", []) + [elements[el]["q"]]
            k = next(j for j, c in enumerate(chain) if c.startswith("humerus."))
            ins, gh = point(chain[k]), point("scapula.GH")
            f = unit(sub(point(chain[k - 1]), ins))
            worst = max(worst, abs(projected - dot(cross(sub(ins, gh), f), u)))
    print(f"largest difference, projected against closed form: {worst:.3e} m")
    return 1 if worst > 1e-9 else 0


def cmd_perturb(motion, out):
    """Six copies of `motion` with one glenohumeral hinge moved by ±H_CENTRAL rad, written as
    OUT/<hinge>+.csv and OUT/<hinge>-.csv, for `central`."""
    head, rows = read(motion)
    Path(out).mkdir(parents=True, exist_ok=True)
    for h in HINGES[6:9]:
        for sign, tag in ((1.0, "+"), (-1.0, "-")):
            with open(Path(out) / f"{h}{tag}.csv", "w") as fh:
                fh.write(",".join(head) + "\n")
                for r in rows:
                    r = dict(r, **{f"{h}.rotation": r[f"{h}.rotation"] + sign * H_CENTRAL})
                    fh.write(",".join(repr(r[c]) for c in head) + "\n")


def cmd_central(kin, runs):
    """The glenohumeral moment arms of `moment_arms.csv` in KIN against central differences of
    the lengths, -(l(q + h) - l(q - h)) / 2h, from RUNS/<hinge>±/lengths.csv (`mollier
    kinematics` of the `perturb` motions), for the anterior deltoid. Exit 1 beyond 1e-8 m."""
    _, ma = read(Path(kin) / "moment_arms.csv")
    worst = 0.0
    for h in HINGES[6:9]:
        _, up = read(Path(runs) / f"{h}+" / "lengths.csv")
        _, down = read(Path(runs) / f"{h}-" / "lengths.csv")
        for m, a, b in zip(ma, up, down):
            for el in (k for k in a if k.startswith("deltoideus_clavicular_")):
                cd = -(a[el] - b[el]) / (2 * H_CENTRAL)
                worst = max(worst, abs(cd - m[f"{el}/{h}.rotation"]))
    print(f"largest difference, moment arms against central differences: {worst:.3e} m")
    return 1 if worst > 1e-8 else 0


def cmd_neutral(study_motion, out):
    head, rows = read(study_motion)
    with open(out, "w") as fh:
        fh.write("# the study's postures, the humerus's YZY third angle = -plane (no axial "
                 "rotation from the hanging arm's rest, as flexion-target.csv)\n")
        fh.write(",".join(head) + "\n")
        for r in rows:
            r = dict(r, **{"humerus_axial.rotation": -r["humerus_pole.rotation"]})
            fh.write(",".join(repr(r[c]) for c in head) + "\n")


def cmd_shares(forces, motion):
    with open(MUSCLES, newline="") as fh:
        fmax = {r["element"]: float(r["pcsa_cm2"]) * 100.0 for r in csv.DictReader(fh)}
    _, f = read(forces)
    _, q = read(motion)
    elev = {r["time"]: math.degrees(r["humerus_elevation.rotation"]) for r in q}
    rows = sorted(((elev[r["time"]], r) for r in f), key=lambda x: x[0])
    print("| group | " + " | ".join(f"{e}°" for e in ELEVATIONS) + " |")
    print("|---|" + "---|" * len(ELEVATIONS))
    for name, pattern in {**HUMERUS, **SCAPULA}.items():
        els = members(pattern, fmax)
        cells = []
        for e in ELEVATIONS:
            _, r = min(rows, key=lambda x: abs(x[0] - e))
            total = sum(r[el] for el in els)
            share = total / sum(fmax[el] for el in els)
            cells.append("failed" if math.isnan(share) else f"{share:.3f}")
        print(f"| {name} | " + " | ".join(cells) + " |")


def cmd_myoarm(myo_sim, plane):
    """The peer: MuJoCo's MyoArm (myo_sim, from MoBL-ARMS), -dl/d shoulder_elv by central
    differences of its actuator lengths, with shoulder1_r2 = -elv_angle, the girdle's coupled
    joints held at the posture (their polycoef times shoulder_elv) and the elbow at 5 deg."""
    xml = Path(myo_sim) / "arm" / "myoarm.xml"
    try:
        import mujoco  # the peer's environment only
    except ImportError:
        print("SKIPPED: MuJoCo is not installed in this Python")
        return 0
    if not xml.exists():
        print(f"SKIPPED: no {xml}")
        return 0
    m = mujoco.MjModel.from_xml_path(str(xml))
    d = mujoco.MjData(m)
    coupled = {}
    for k in range(m.neq):
        if m.eq_type[k] == mujoco.mjtEq.mjEQ_JOINT:
            j1, j2 = (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, i)
                      for i in (m.eq_obj1id[k], m.eq_obj2id[k]))
            if j2 == "shoulder_elv":
                coupled[j1] = m.eq_data[k][1]
    adr = lambda j: m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, j)]
    names = ["DELT1", "DELT2", "BIClong", "BICshort", "SUPSP", "CORB", "PECM1", "INFSP"]
    ids = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_ACTUATOR, a) for a in names]
    p = math.radians(float(plane))

    def lengths(elev, held):
        d.qpos[:] = 0.0
        d.qpos[adr("elv_angle")], d.qpos[adr("shoulder1_r2")] = p, -p
        d.qpos[adr("shoulder_elv")] = elev
        d.qpos[adr("elbow_flexion")] = math.radians(5.0)
        for j, c in coupled.items():
            d.qpos[adr(j)] = c * held
        mujoco.mj_forward(m, d)
        return [d.actuator_length[i] for i in ids]

    h = 1e-5
    print(f"MyoArm, plane {plane} deg: -dl/d shoulder_elv, mm\n")
    print("| elevation | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for e in ELEVATIONS:
        q = math.radians(e)
        up, down = lengths(q + h, q), lengths(q - h, q)
        arms = [-(a - b) / (2 * h) * 1e3 for a, b in zip(up, down)]
        print(f"| {e}° | " + " | ".join(f"{x:.1f}" for x in arms) + " |")


def main(argv):
    commands = {"motion": (cmd_motion, 1), "arms": (cmd_arms, 1), "check": (cmd_check, 1),
                "neutral": (cmd_neutral, 2), "shares": (cmd_shares, 2),
                "myoarm": (cmd_myoarm, 2), "perturb": (cmd_perturb, 2),
                "central": (cmd_central, 2)}
    optional = {"arms", "check"}  # an optional model file after KIN
    if (len(argv) < 2 or argv[1] not in commands or not
            0 <= len(argv) - 2 - commands[argv[1]][1] <= (argv[1] in optional)):
        sys.stderr.write(__doc__)
        return 2
    return commands[argv[1]][0](*argv[2:]) or 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
