#!/usr/bin/env python3
"""Generate Huston's 17-member whole-body model (ch. 11-13) as Mollier model files.

    python3 models/body/tools/make_body.py [--out DIR] [--check]

Python 3, standard library only. Writes, into models/body/ by default:

- huston17.toml         the model: 17 members in Huston's numbering and lower body array, a free
                        reference member (the lower torso: 3 translations, 3 rotations) and a
                        spherical joint between each member and its lower body: 54 degrees of
                        freedom (Huston, sec. 13.2 and eq. 13.24-13.25);
- huston17-hinges.toml  the same with hinges at the elbows and knees (46 degrees of freedom);
- huston17-lift.toml    huston17 holding 5 kg in each hand, for the seated lift
                        (seated-lift-motion.csv, `mollier inverse-dynamics`);
- zero-g-arm.toml       huston17 without gravity, a spring with a preload turning the right
                        shoulder (`mollier simulate`: the body floats and counter-rotates);
- fall.toml             huston17 standing on its right foot, which is held; every joint a spring
                        except the right ankle, so that the body falls over it
                        (`mollier simulate`).

`--check` regenerates into memory and fails if a committed file differs, so that a change of this
script or of a file shows up (crates/mollier/tests/whole_body.rs runs it).

Sources (docs/whole-body.md discusses each):

- the members, their numbering and the lower body array L(k): Huston, Fig. 11.15, eq. 11.57
  and Table 11.7 (the seed's OCR numbers the members but does not name them; the names follow
  the tree: 1-3 the torso from the pelvis up, 4-6 and 9-11 the arms on the upper torso, 7-8 neck
  and head, 12-14 and 15-17 the legs on the lower torso);
- segment lengths, masses (fractions of body mass), centres of mass and radii of gyration:
  de Leva P. (1996) Adjustments to Zatsiorsky-Seluyanov's segment inertia parameters,
  J. Biomech. 29(9):1223-1230, Table 4, males (73.0 kg);
- the shoulder joint height and width and the ankle height: Drillis & Contini (1966) segment
  proportions of stature H, as given by Winter (2009) Biomechanics and Motor Control of Human
  Movement, 4th ed., Fig. 4.1 (H = 1.741 m, de Leva's male stature);
- what no table here gives (hip joint centres' spacing, the heel behind the ankle, how de Leva's
  single head-and-neck segment is split between Huston's neck and head) is an assumption, said
  so where it is used.
"""

import argparse
import io
import os
import sys

# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------

BODY_MASS = 73.0  # kg, de Leva (1996) Table 4, males
STATURE = 1.741  # m, de Leva (1996) Table 4, males

# de Leva (1996) Table 4, males, the segments defined from CERV (C7) where it gives two: segment
# length (m, between the named landmarks), mass (fraction
# of body mass), centre of mass (fraction of the length from the first landmark), radii of
# gyration (fractions of the length) about the sagittal (anteroposterior) axis, the transverse
# (mediolateral) axis and the longitudinal axis.
DE_LEVA = {
    #                 length   mass    com      r_sag  r_trans r_long
    "head_neck": (0.2429, 0.0694, 0.5002, 0.303, 0.315, 0.261),  # VERT-CERV, com from VERT
    "upper_trunk": (0.2421, 0.1596, 0.2999, 0.716, 0.454, 0.659),  # CERV-XYPH, com from CERV
    "middle_trunk": (0.2155, 0.1633, 0.4502, 0.482, 0.383, 0.468),  # XYPH-OMPH, com from XYPH
    "lower_trunk": (0.1457, 0.1117, 0.6115, 0.615, 0.551, 0.587),  # OMPH-MIDH, com from OMPH
    "upper_arm": (0.2817, 0.0271, 0.5772, 0.285, 0.269, 0.158),  # SJC-EJC, com from SJC
    "forearm": (0.2689, 0.0162, 0.4574, 0.276, 0.265, 0.121),  # EJC-WJC, com from EJC
    "hand": (0.0862, 0.0061, 0.7900, 0.628, 0.513, 0.401),  # WJC-MET3, com from WJC
    "thigh": (0.4222, 0.1416, 0.4095, 0.329, 0.329, 0.149),  # HJC-KJC, com from HJC
    "shank": (0.4340, 0.0433, 0.4459, 0.255, 0.249, 0.103),  # KJC-LMAL, com from KJC
    "foot": (0.2581, 0.0137, 0.4415, 0.257, 0.245, 0.124),  # HEEL-TTIP, com from HEEL
}

# Drillis & Contini (1966) via Winter (2009) Fig. 4.1, fractions of stature.
SHOULDER_HEIGHT = 0.818  # shoulder joint above the floor
SHOULDER_WIDTH = 0.259  # between the shoulder joints
ANKLE_HEIGHT = 0.039  # lateral malleolus above the floor
NECK_FRACTION = (0.870 - 0.818) / (1.0 - 0.818)  # shoulder line to chin, of shoulder line to vertex

# Assumptions (no table above gives them; docs/whole-body.md).
HIP_HALF_SPACING = 0.0875  # m: hip joint centres 175 mm apart
HEEL_BEHIND_ANKLE = 0.046  # m: the heel 18 % of the foot length behind the ankle

# --------------------------------------------------------------------------------------------
# Huston's tree (eq. 11.57, Table 11.7): member k, its name and its lower body L(k).
# --------------------------------------------------------------------------------------------

MEMBERS = [
    (1, "lower_torso", 0),
    (2, "middle_torso", 1),
    (3, "upper_torso", 2),
    (4, "left_upper_arm", 3),
    (5, "left_lower_arm", 4),
    (6, "left_hand", 5),
    (7, "neck", 3),
    (8, "head", 7),
    (9, "right_upper_arm", 3),
    (10, "right_lower_arm", 9),
    (11, "right_hand", 10),
    (12, "right_upper_leg", 1),
    (13, "right_lower_leg", 12),
    (14, "right_foot", 13),
    (15, "left_upper_leg", 1),
    (16, "left_lower_leg", 15),
    (17, "left_foot", 16),
]

# Axes: x anterior, y up, z to the right (ISB); every member's frame is parallel to the global
# frame in the standing reference posture. A spherical joint is three hinges in series, about z
# (flexion-extension), then x (ab-adduction), then y (axial rotation): Rz Rx Ry, singular only at
# ±90° of the middle angle.
SPHERICAL = (("z", (0, 0, 1)), ("x", (1, 0, 0)), ("y", (0, 1, 0)))
HINGED = {"left_lower_arm", "right_lower_arm", "right_lower_leg", "left_lower_leg"}


def fmt(x):
    """A number as TOML, rounded to 0.1 µm, 1 µg or 1e-9 kg m² (well below the data's digits)."""
    s = f"{x:.9f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def vec(v):
    return "[" + ", ".join(fmt(x) for x in v) + "]"


def segment(key, length=None, mass_fraction=None):
    """(length, mass, com fraction, principal moments about sag, trans, long) of a de Leva segment."""
    L, mf, c, rs, rt, rl = DE_LEVA[key]
    L = L if length is None else length
    m = BODY_MASS * (mf if mass_fraction is None else mass_fraction)
    return L, m, c, (m * (rs * L) ** 2, m * (rt * L) ** 2, m * (rl * L) ** 2)


def members():
    """Every member: origin, points (body frame), mass, com, inertia [Ixx, Iyy, Izz] and its source."""
    H = STATURE
    out = {}
    thigh, shank, foot = DE_LEVA["thigh"][0], DE_LEVA["shank"][0], DE_LEVA["foot"][0]
    hip_height = ANKLE_HEIGHT * H + shank + thigh

    def long_y(key, length=None, mass_fraction=None):
        """A segment along y: its com at de Leva's fraction from its first landmark."""
        L, m, c, (i_sag, i_trans, i_long) = segment(key, length, mass_fraction)
        # sagittal axis = x (anteroposterior), transverse = z (mediolateral), long = y
        return L, m, c, [i_sag, i_long, i_trans]

    # 1 lower torso: origin at the mid-hip point MIDH, up to OMPH
    L, m, c, inertia = long_y("lower_trunk")
    out["lower_torso"] = dict(
        origin=[0.0, hip_height, 0.0],
        points={
            "lumbar": [0.0, L, 0.0],
            "right_hip": [0.0, 0.0, HIP_HALF_SPACING],
            "left_hip": [0.0, 0.0, -HIP_HALF_SPACING],
        },
        mass=m,
        com=[0.0, (1 - c) * L, 0.0],
        inertia=inertia,
        source="de Leva LPT (OMPH-MIDH); hip joint spacing assumed",
    )
    L, m, c, inertia = long_y("middle_trunk")
    out["middle_torso"] = dict(
        origin="lower_torso.lumbar",
        points={"thoracic": [0.0, L, 0.0]},
        mass=m,
        com=[0.0, (1 - c) * L, 0.0],
        inertia=inertia,
        source="de Leva MPT (XYPH-OMPH)",
    )
    L, m, c, inertia = long_y("upper_trunk")
    xyph = hip_height + DE_LEVA["lower_trunk"][0] + DE_LEVA["middle_trunk"][0]
    shoulder = SHOULDER_HEIGHT * H - xyph
    out["upper_torso"] = dict(
        origin="middle_torso.thoracic",
        points={
            "cervical": [0.0, L, 0.0],
            "left_shoulder": [0.0, shoulder, -SHOULDER_WIDTH * H / 2],
            "right_shoulder": [0.0, shoulder, SHOULDER_WIDTH * H / 2],
        },
        mass=m,
        com=[0.0, (1 - c) * L, 0.0],
        inertia=inertia,
        source="de Leva UPT (CERV-XYPH); shoulder joints: Drillis & Contini via Winter Fig. 4.1",
    )
    # 7 neck and 8 head: de Leva's head segment (VERT-CERV) cut at the chin line, mass and length
    # shared in proportion (uniform along the segment), the pair's centre of mass kept
    L_hn, m_hn, c_hn, _ = segment("head_neck")
    L_n, L_h = NECK_FRACTION * L_hn, (1 - NECK_FRACTION) * L_hn
    m_n, m_h = NECK_FRACTION * m_hn, (1 - NECK_FRACTION) * m_hn
    com_hn = (1 - c_hn) * L_hn  # above CERV
    com_n = L_n / 2
    com_h = (m_hn * com_hn - m_n * com_n) / m_h - L_n  # above the head joint
    _, _, _, inertia_n = long_y("head_neck", length=L_n, mass_fraction=NECK_FRACTION * 0.0694)
    _, _, _, inertia_h = long_y("head_neck", length=L_h, mass_fraction=(1 - NECK_FRACTION) * 0.0694)
    out["neck"] = dict(
        origin="upper_torso.cervical",
        points={"head_joint": [0.0, L_n, 0.0]},
        mass=m_n,
        com=[0.0, com_n, 0.0],
        inertia=inertia_n,
        source="de Leva head (VERT-CERV), its part below the chin line (assumed split)",
    )
    out["head"] = dict(
        origin="neck.head_joint",
        points={"vertex": [0.0, L_h, 0.0]},
        mass=m_h,
        com=[0.0, com_h, 0.0],
        inertia=inertia_h,
        source="de Leva head (VERT-CERV), its part above the chin line (assumed split)",
    )
    def hanging(key, origin, end, landmarks):
        """A segment hanging down from its joint at `origin` to its distal joint `end`."""
        L, m, c, inertia = long_y(key)
        return dict(
            origin=origin,
            points={end: [0.0, -L, 0.0]},
            mass=m,
            com=[0.0, -c * L, 0.0],
            inertia=inertia,
            source=f"de Leva {key.replace('_', ' ')} ({landmarks})",
        )

    for side in ("left", "right"):
        out[f"{side}_upper_arm"] = hanging("upper_arm", f"upper_torso.{side}_shoulder", "elbow", "SJC-EJC")
        out[f"{side}_lower_arm"] = hanging("forearm", f"{side}_upper_arm.elbow", "wrist", "EJC-WJC")
        L, m, c, inertia = long_y("hand")
        out[f"{side}_hand"] = dict(
            origin=f"{side}_lower_arm.wrist",
            points={"grip": [0.0, -c * L, 0.0], "knuckles": [0.0, -L, 0.0]},
            mass=m,
            com="grip",
            inertia=inertia,
            source="de Leva hand (WJC-MET3); the grip at its centre of mass",
        )
    for side in ("right", "left"):
        out[f"{side}_upper_leg"] = hanging("thigh", f"lower_torso.{side}_hip", "knee", "HJC-KJC")
        out[f"{side}_lower_leg"] = hanging("shank", f"{side}_upper_leg.knee", "ankle", "KJC-LMAL")
        # the foot along x: its long axis is x, its sagittal axis y here, its transverse axis z
        L, m, c, (i_sag, i_trans, i_long) = segment("foot")
        sole = -ANKLE_HEIGHT * H
        heel = [-HEEL_BEHIND_ANKLE, sole, 0.0]
        out[f"{side}_foot"] = dict(
            origin=f"{side}_lower_leg.ankle",
            points={"heel": heel, "toe": [heel[0] + L, sole, 0.0]},
            mass=m,
            com=[heel[0] + c * L, sole, 0.0],
            inertia=[i_long, i_sag, i_trans],
            source="de Leva foot (HEEL-TTIP); ankle height Drillis & Contini; heel offset assumed",
        )
    return out


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def joint_hinges(name, hinged):
    """The hinges of member `name`'s joint with its lower body: (element, axis label, axis)."""
    if hinged:
        return [(f"{name}_z", "z", (0, 0, 1))]
    return [(f"{name}_{label}", label, axis) for label, axis in SPHERICAL]


def write(variant):
    """The model file of a variant, as text."""
    hinges = variant.get("hinges", set())
    stance = variant.get("stance")  # the member held (a foot), or None: free reference member
    laws = variant.get("laws", {})
    data = members()
    names = [n for _, n, _ in MEMBERS]
    parent = {n: (names[p - 1] if p else None) for _, n, p in MEMBERS}

    o = io.StringIO()
    w = o.write
    for line in variant["header"]:
        w(f"# {line}\n" if line else "#\n")
    w("#\n# Generated by models/body/tools/make_body.py: edit the script, not this file.\n")
    w("# Members, numbering and lower body array: Huston, Fig. 11.15, eq. 11.57.\n")
    w("# Masses, lengths, centres of mass, inertias: de Leva (1996) Table 4, males, 73.0 kg;\n")
    w("# shoulder joints and ankle height: Drillis & Contini (1966) via Winter (2009) Fig. 4.1;\n")
    w("# assumptions are marked. Axes: x anterior, y up, z right; m, kg, kg m².\n")
    w("format_version = 1\n")
    w(f'name = "{variant["name"]}"\n')
    fixed = ["ground"] if stance is None else [stance]
    w(f"fixed = {fixed!r}".replace("'", '"') + "\n")
    inputs = []
    if stance is None:
        inputs += ["lower_torso.x", "lower_torso.y", "lower_torso.z"]
    order = [n for n in names] if stance is None else names[1:]
    for n in order:
        for el, _, _ in joint_hinges(n, n in hinges):
            inputs.append(f"{el}.rotation")
    w("inputs = [\n")
    for i in inputs:
        w(f'  "{i}",\n')
    w("]\n")
    w(f"gravity = {vec(variant['gravity'])}\n\n")

    w("# Huston's member k, its lower body L(k):\n")
    for k, n, p in MEMBERS:
        w(f"#   {k:2d} {n:<16s} L = {p}\n")
    w("\n")
    if stance is None:
        w("[nodes.ground]   # the inertial frame R, which the reference member turns in\n")
        w("orientation = { euler = [1, 0, 0, 0] }\n\n")
    # intermediate frames of the spherical joints
    for n in names:
        if stance is not None and n == "lower_torso":
            continue
        chain = joint_hinges(n, n in hinges)
        for el, _, _ in chain[:-1]:
            w(f"[nodes.{el}_frame]\n")
            w("orientation = { euler = [1, 0, 0, 0] }\n\n")
    for k, n, _ in MEMBERS:
        b = data[n]
        w(f"[bodies.{n}]   # member {k}: {b['source']}\n")
        origin = b["origin"]
        w(f"origin = {vec(origin)}\n" if isinstance(origin, list) else f'origin = "{origin}"\n')
        pts = ", ".join(f"{p} = {vec(v)}" for p, v in b["points"].items())
        w(f"points = {{ {pts} }}\n")
        w(f"mass = {fmt(b['mass'])}\n")
        com = b["com"]
        w(f"com = {vec(com)}\n" if isinstance(com, list) else f'com = "{com}"\n')
        w(f"inertia = {vec(b['inertia'] + [0.0, 0.0, 0.0])}\n\n")
    for k, n, _ in MEMBERS:
        if stance is not None and n == "lower_torso":
            continue
        p = parent[n] or "ground"
        chain = joint_hinges(n, n in hinges)
        kind = "hinge" if len(chain) == 1 else "spherical joint: three hinges z, x, y"
        frames = [p] + [f"{el}_frame" for el, _, _ in chain[:-1]] + [n]
        for i, (el, label, axis) in enumerate(chain):
            w(f"[elements.{el}]" + (f"   # member {k}'s joint with {p}: {kind}\n" if i == 0 else "\n"))
            w('type = "hinge"\n')
            w(f'p = "{frames[i]}"\n')
            w(f'q = "{frames[i + 1]}"\n')
            w(f"axis = {vec(axis)}\n")
            law = laws.get(el) or laws.get(n)
            if law:
                w(f"law = {{ rotation = {{ {law} }} }}\n")
            w("\n")
    for name, (at, force) in variant.get("loads", {}).items():
        w(f"[loads.{name}]\n")
        w(f'at = "{at}"\n')
        w(f"force = {vec(force)}\n\n")
    return o.getvalue().rstrip("\n") + "\n"


def fall_laws():
    """Joint springs of the falling body, assumed: each joint's stiffness is 10 times the largest
    gravity moment its outer members can make about it (m g d, d the distance of their centre of
    mass from the joint), so that a limb held out sags by at most about 0.1 rad and every spring
    is about as fast (ω² ≈ 10 g / d); none at the right ankle, which the body falls over."""
    data = members()
    names = [n for _, n, _ in MEMBERS]
    children = {n: [c for _, c, p in MEMBERS if p and names[p - 1] == n] for n in names}
    origins = {}

    def place(n, at):
        origins[n] = at
        for c in children[n]:
            place(c, [a + b for a, b in zip(at, data[n]["points"][data[c]["origin"].split(".")[1]])])

    place("lower_torso", data["lower_torso"]["origin"])

    def com(n):
        c = data[n]["com"]
        c = data[n]["points"][c] if isinstance(c, str) else c
        return [a + b for a, b in zip(origins[n], c)]

    def outer(n):
        """Mass and first moment (Σ m x) of member n and every member beyond it."""
        m, s = data[n]["mass"], [data[n]["mass"] * x for x in com(n)]
        for c in children[n]:
            mc, sc = outer(c)
            m, s = m + mc, [a + b for a, b in zip(s, sc)]
        return m, s

    total_m, total_s = outer("lower_torso")
    stance_leg = {"right_upper_leg": ("right_upper_leg", "right_lower_leg", "right_foot"),
                  "right_lower_leg": ("right_lower_leg", "right_foot")}
    laws = {}
    for n in names:
        if n in ("lower_torso", "right_foot"):
            continue
        m, s = outer(n)
        if n in stance_leg:
            # the joints of the standing leg carry the body above them, not the leg below
            m, s = total_m, list(total_s)
            for f in stance_leg[n]:
                m -= data[f]["mass"]
                s = [a - data[f]["mass"] * b for a, b in zip(s, com(f))]
        d = sum((a / m - b) ** 2 for a, b in zip(s, origins[n])) ** 0.5
        k = 10 * m * 9.81 * d
        for el, _, _ in joint_hinges(n, False):
            laws[el] = f"stiffness = {fmt(round(k, 1))}"
    return laws


VARIANTS = {
    "huston17.toml": dict(
        name="Huston's 17-member human body",
        gravity=[0, -9.81, 0],
        header=[
            "Huston's 17-member whole-body model (Principles of Biomechanics ch. 11-13):",
            "a tree of 17 rigid members, the lower torso free in space (3 translations and 3",
            "rotations) and every other member joined to its lower body L(k) by a spherical joint:",
            "3 + 3 x 17 = 54 degrees of freedom, Huston's count (sec. 13.2). Standing, arms at the",
            "sides, every member's frame parallel to the global frame. docs/whole-body.md.",
        ],
    ),
    "huston17-hinges.toml": dict(
        name="Huston's 17-member human body, hinged elbows and knees",
        gravity=[0, -9.81, 0],
        hinges=HINGED,
        header=[
            "huston17.toml with hinges (flexion about z) at the elbows and knees instead of",
            "spherical joints: 54 - 4 x 2 = 46 degrees of freedom. docs/whole-body.md.",
        ],
    ),
    "huston17-lift.toml": dict(
        name="Huston's 17-member human body lifting 10 kg",
        gravity=[0, -9.81, 0],
        loads={
            "weight_left": ("left_hand.grip", [0, -5 * 9.81, 0]),
            "weight_right": ("right_hand.grip", [0, -5 * 9.81, 0]),
        },
        header=[
            "huston17.toml holding 5 kg in each hand (a load of 49.05 N down at each grip), for",
            "the seated lift of seated-lift-motion.csv: the lower torso rests on a seat, whose",
            "reaction is the driving force of the lower torso's six coordinates.",
            "  mollier inverse-dynamics models/body/huston17-lift.toml \\",
            "      --motion models/body/seated-lift-motion.csv --out results/lift",
        ],
    ),
    "zero-g-arm.toml": dict(
        name="Huston's 17-member human body floating, turning its right arm",
        gravity=[0, 0, 0],
        laws={"right_upper_arm_z": "stiffness = 10, preload = 5"},
        header=[
            "huston17.toml without gravity: a spring in the right shoulder's flexion hinge (10",
            "N m/rad with a preload of 5 N m) swings the arm back to 1 rad and forth while the rest of",
            "the body, floating free, turns the other way: its linear and angular momentum stay",
            "zero (crates/mollier/tests/whole_body.rs checks them).",
            "  mollier simulate models/body/zero-g-arm.toml --duration 1 --dt 0.002 --out results/zero-g",
        ],
    ),
    "fall.toml": dict(
        name="Huston's 17-member human body falling over its right foot",
        gravity=[0, -9.81, 0],
        stance="right_foot",
        laws=fall_laws(),
        header=[
            "huston17.toml standing on its right foot, which is held; the lower torso is no",
            "longer free (its place follows from the right leg), so the 48 joint rotations are",
            "the coordinates. Every joint is a spring (assumed: 10 times the gravity moment of",
            "the members beyond it, m g d, per radian) except the right ankle: released from rest",
            "the body falls over it. No damping: the energy is conserved, and its drift measures",
            "the integration.",
            "  mollier simulate models/body/fall.toml --duration 0.5 --dt 0.002 --out results/fall",
        ],
    ),
}


def smoothstep(tau):
    """Minimum-jerk blend from 0 to 1 (zero rate and acceleration at both ends)."""
    return tau**3 * (10 - 15 * tau + 6 * tau**2)


def lift_motion():
    """The seated lift: huston17's inputs over 2 s, 41 frames, angles in degrees.

    Seated: hips flexed 90° (thighs forward), knees 90° (shanks down), the lower torso held at
    0.502 m, so that the soles touch the floor (shank 0.434 m plus ankle height 0.068 m). From a
    forward lean (torso joints 15° each), arms reaching forward and down (shoulders 30°, elbows
    10°), the body straightens and lifts the weight to the chest (shoulders 45°, elbows 100°),
    minimum-jerk in time."""
    names = [n for _, n, _ in MEMBERS]
    start = {"middle_torso_z": -15, "upper_torso_z": -15}
    end = {"middle_torso_z": 0, "upper_torso_z": 0}
    for side in ("left", "right"):
        start |= {f"{side}_upper_arm_z": 30, f"{side}_lower_arm_z": 10}
        end |= {f"{side}_upper_arm_z": 45, f"{side}_lower_arm_z": 100}
    seated = {}
    for side in ("left", "right"):
        seated |= {f"{side}_upper_leg_z": 90, f"{side}_lower_leg_z": -90}
    columns = ["lower_torso.x", "lower_torso.y", "lower_torso.z"]
    columns += [f"{n}_{a}.rotation [deg]" for n in names for a, _ in SPHERICAL]
    o = io.StringIO()
    o.write("# The seated lift of huston17-lift.toml (generated by models/body/tools/make_body.py):\n")
    o.write("# seated, the torso straightens and the arms lift 10 kg from the knees to the chest in 2 s.\n")
    o.write("time," + ",".join(columns) + "\n")
    hip_y = ANKLE_HEIGHT * STATURE + DE_LEVA["shank"][0]
    for i in range(41):
        t = 0.05 * i
        b = smoothstep(t / 2.0)
        row = [0.0, hip_y, 0.0]
        for n in names:
            for a, _ in SPHERICAL:
                key = f"{n}_{a}"
                if key in start:
                    row.append(start[key] + b * (end[key] - start[key]))
                else:
                    row.append(seated.get(key, 0.0))
        o.write(f"{fmt(t)}," + ",".join(fmt(x) for x in row) + "\n")
    return o.getvalue()


OTHER_FILES = {"seated-lift-motion.csv": lift_motion}


def main():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=here, help="directory to write into (default models/body)")
    ap.add_argument("--check", action="store_true", help="fail if a committed file differs")
    args = ap.parse_args()
    stale = []
    files = [(f, lambda v=v: write(v)) for f, v in VARIANTS.items()] + list(OTHER_FILES.items())
    for file, make in files:
        text = make()
        path = os.path.join(args.out, file)
        if args.check:
            try:
                with open(path, encoding="utf-8") as f:
                    if f.read() != text:
                        stale.append(file)
            except OSError:
                stale.append(file)
        else:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    if stale:
        print(f"make_body.py --check: out of date: {', '.join(stale)}; run models/body/tools/make_body.py")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
