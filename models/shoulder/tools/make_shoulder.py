#!/usr/bin/env python3
"""Generate the Mollier shoulder model (models/shoulder/shoulder.toml) and its muscle table
(models/shoulder/muscles.csv) from the DAS3 OpenSim model.

    python3 models/shoulder/tools/make_shoulder.py [--osim PATH] [--out DIR] [--check]

Python 3.11, standard library only. Reads `../shared/data/das3/das3.osim` by default (the DAS3
model of Chadwick et al. 2014, dasproject/DAS3 commit d6f2ff0, Apache-2.0); the files it writes
are committed and do not need the .osim to be used. `--check` regenerates into memory and fails
if the committed files differ (so a change of this script shows up as a diff).

What it does, in order (docs/shoulder.md explains each choice):

1. reads the bodies (mass, centre of mass, inertia, wrap objects), the joints (parent offsets,
   rotation axes) and the 138 muscle elements (path points, wrap objects, optimal fibre and
   tendon slack lengths) of the .osim file;
2. lumps ulna, radius and hand rigidly onto the humerus with the elbow fixed at DAS3's default
   angles (EL_x = PS_y = 5 deg): masses, centres of mass and inertias combined by the
   parallel-axis theorem, forearm points and wrap objects carried into the humerus frame (for
   shoulder-forward-elbow.toml, radius and hand onto the ulna at PS_y = 5 deg, the forearm on a
   hinge at DAS3's EL_x axis);
3. computes the rest posture: the de Groot & Brand (2001) regression of the shoulder rhythm as
   implemented in DAS3's `estimate_shoulder_angles` (rest angles C0, S0 of DSEM; clavicle axial
   rotation by `axclav`) at humerus pole angle, elevation and axial rotation all zero; then
   places the scapula on the thorax ellipsoid (TS and AI on its surface) keeping AC and TS.x
   (Newton's method on three rotations), and turns the clavicle about its SC-AC line to the
   axial rotation axclav's criterion prefers for the placed scapula. This is the initial
   configuration; the rigid conoid takes its length there;
4. maps DAS3's muscle elements onto the 20 muscles and 95 elements of van der Helm (1994),
   Table 2: where DAS3 has more elements than Table 2, evenly spaced ones are selected; where it
   has fewer, origins, insertions, via points and lengths are interpolated between neighbouring
   elements of the same muscle (van der Helm & Veenbaas 1991: elements spread over a broad
   attachment);
5. estimates the trapezoid and costoclavicular ligament attachments;
6. writes the model files (mm, deg, kg: shoulder.toml, shoulder-forward.toml and
   shoulder-forward-elbow.toml) and the muscle table.
"""

import argparse
import csv
import io
import math
import os
import sys
import xml.etree.ElementTree as ET

# ---------------------------------------------------------------------------------------------
# 3x3 linear algebra
# ---------------------------------------------------------------------------------------------

I3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def mm(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(3)) for j in range(3)] for i in range(3)]


def mv(a, v):
    return [sum(a[i][k] * v[k] for k in range(3)) for i in range(3)]


def tr(a):
    return [[a[j][i] for j in range(3)] for i in range(3)]


def add(a, b):
    return [x + y for x, y in zip(a, b)]


def sub(a, b):
    return [x - y for x, y in zip(a, b)]


def scale(s, a):
    return [s * x for x in a]


def dot(a, b):
    return sum(x * y for x, y in zip(a, b))


def norm(a):
    return math.sqrt(dot(a, a))


def column(r, j):
    return [r[0][j], r[1][j], r[2][j]]


def rot(axis, t):
    """Rotation by t (rad) about axis (right-handed)."""
    n = norm(axis)
    x, y, z = (c / n for c in axis)
    c, s = math.cos(t), math.sin(t)
    k = 1.0 - c
    return [
        [c + x * x * k, x * y * k - z * s, x * z * k + y * s],
        [y * x * k + z * s, c + y * y * k, y * z * k - x * s],
        [z * x * k - y * s, z * y * k + x * s, c + z * z * k],
    ]


def rx(t):
    return rot([1, 0, 0], t)


def ry(t):
    return rot([0, 1, 0], t)


def rz(t):
    return rot([0, 0, 1], t)


def ryzx(a):
    """Ry(a0) Rz(a1) Rx(a2): DAS3's rotation order for clavicle and scapula."""
    return mm(mm(ry(a[0]), rz(a[1])), rx(a[2]))


def rotyzx(r):
    """Angles (y, z, x) with r = Ry Rz Rx, z in [-pi/2, pi/2] (DAS3's `rotyzx`)."""
    z = math.asin(max(-1.0, min(1.0, r[1][0])))
    x = math.atan2(-r[1][2], r[1][1])
    y = math.atan2(-r[2][0], r[0][0])
    return [y, z, x]


def rotvec(w):
    """Rotation by the vector w (rad)."""
    t = norm(w)
    return I3 if t == 0.0 else rot(w, t)


def solve(a, b):
    """Gaussian elimination with partial pivoting for a small dense system."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        if abs(m[p][c]) < 1e-300:
            raise ValueError("singular system")
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in reversed(range(n)):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x


# ---------------------------------------------------------------------------------------------
# The .osim file
# ---------------------------------------------------------------------------------------------


def vec(s):
    return [float(x) for x in s.split()]


def read_osim(path):
    root = ET.parse(path).getroot().find("Model")
    bodies, wraps = {}, {}
    for b in root.find("BodySet").find("objects"):
        name = b.get("name")
        ine = vec(b.findtext("inertia"))
        tensor = [[ine[0], ine[3], ine[4]], [ine[3], ine[1], ine[5]], [ine[4], ine[5], ine[2]]]
        flipped = False
        if not physical(tensor):
            # OpenSim reads Ixy, Ixz, Iyz as tensor elements; a file that lists the products of
            # inertia (their negatives) gives an impossible tensor. DAS3's clavicle does: only
            # with the signs turned is it physical (rod-like, nearly zero about its long axis).
            tensor = [[ine[0], -ine[3], -ine[4]], [-ine[3], ine[1], -ine[5]], [-ine[4], -ine[5], ine[2]]]
            if not physical(tensor):
                raise ValueError(f"body {name}: inertia {ine} is not physical with either sign of the products")
            flipped = True
        bodies[name] = dict(
            mass=float(b.findtext("mass")),
            com=vec(b.findtext("mass_center")),
            inertia=tensor,
            flipped=flipped,
        )
        ws = b.find("WrapObjectSet")
        if ws is None or ws.find("objects") is None:
            continue
        for w in ws.find("objects"):
            wraps[w.get("name")] = dict(
                kind={"WrapSphere": "sphere", "WrapCylinder": "cylinder", "WrapEllipsoid": "ellipsoid"}[w.tag],
                body=name,
                rotation=vec(w.findtext("xyz_body_rotation")),
                translation=vec(w.findtext("translation")),
                radius=float(w.findtext("radius")) if w.findtext("radius") else None,
                dimensions=vec(w.findtext("dimensions")) if w.findtext("dimensions") else None,
                length=float(w.findtext("length")) if w.findtext("length") else None,
                quadrant=w.findtext("quadrant").strip(),
            )
    joints = {}
    for j in root.find("JointSet").find("objects"):
        frames = {f.get("name"): f for f in j.find("frames")}
        pf = frames[j.findtext("socket_parent_frame")]
        cf = frames[j.findtext("socket_child_frame")]
        if vec(pf.findtext("orientation")) != [0, 0, 0] or vec(cf.findtext("translation")) != [0, 0, 0]:
            raise ValueError(f"joint {j.get('name')}: offset frame orientations are not supported")
        coords, ranges = {}, {}
        if j.find("coordinates") is not None:
            for c in j.find("coordinates"):
                coords[c.get("name")] = float(c.findtext("default_value"))
                ranges[c.get("name")] = vec(c.findtext("range"))
        axes = []
        st = j.find("SpatialTransform")
        if st is not None:
            for ta in list(st)[:3]:
                co = ta.findtext("coordinates")
                if co and co.strip():
                    axes.append((vec(ta.findtext("axis")), co.strip()))
        joints[cf.findtext("socket_parent").split("/")[-1]] = dict(
            name=j.get("name"),
            parent=pf.findtext("socket_parent").split("/")[-1],
            location=vec(pf.findtext("translation")),
            axes=axes,
            defaults=coords,
            ranges=ranges,
        )
    muscles = []
    for m in root.find("ForceSet").find("objects"):
        if "Muscle" not in m.tag:
            continue
        gp = m.find("GeometryPath")
        points = [
            (p.findtext("socket_parent_frame").split("/")[-1], vec(p.findtext("location")))
            for p in gp.find("PathPointSet").find("objects")
        ]
        used = []
        pws = gp.find("PathWrapSet")
        if pws is not None and pws.find("objects") is not None:
            for w in pws.find("objects"):
                if w.findtext("range") and vec(w.findtext("range")) != [-1, -1]:
                    raise ValueError(f"{m.get('name')}: wrap ranges are not supported")
                used.append(w.findtext("wrap_object").strip())
        muscles.append(
            dict(
                name=m.get("name"),
                points=points,
                wraps=used,
                fmax=float(m.findtext("max_isometric_force")),
                fibre=float(m.findtext("optimal_fiber_length")),
                tendon=float(m.findtext("tendon_slack_length")),
                pennation=float(m.findtext("pennation_angle_at_optimal") or 0.0),
                act1=float(m.findtext("activation1") or "nan"),
                act2=float(m.findtext("activation2") or "nan"),
                pee=pee_slack_of(m),
                das3_pee=das3_pee_slack(m),
            )
        )
    return bodies, wraps, joints, muscles


def das3_pee_slack(m):
    """Where das3.osim's passive force-length curve of a muscle element starts to rise (of L_opt):
    the last of its leading zero-force points."""
    spline = next((c for c in m.iter("SimmSpline") if c.get("name") == "passive_force_length_curve"), None)
    if spline is None:
        return 1.0
    x, y = vec(spline.findtext("x")), vec(spline.findtext("y"))
    k = next((i for i, v in enumerate(y) if v > 0.0), len(y))
    if k == 0:
        raise ValueError(f"{m.get('name')}: the passive force-length curve has force at its first point")
    return x[k - 1]


def pee_slack_of(m):
    """The PEE slack length (of L_opt) of a muscle element: L_opt (Chadwick et al. 2014, App. A)
    but where PEE_SLACK raises it."""
    return PEE_SLACK.get(m.get("name"), (1.0, 0.0))[0]


def principal_moments(t):
    """Eigenvalues of a symmetric 3x3 matrix, ascending (trigonometric solution)."""
    p1 = t[0][1] ** 2 + t[0][2] ** 2 + t[1][2] ** 2
    q = (t[0][0] + t[1][1] + t[2][2]) / 3.0
    p2 = sum((t[i][i] - q) ** 2 for i in range(3)) + 2.0 * p1
    if p2 == 0.0:
        return [q, q, q]
    p = math.sqrt(p2 / 6.0)
    b = [[(t[i][j] - (q if i == j else 0.0)) / p for j in range(3)] for i in range(3)]
    det = (b[0][0] * (b[1][1] * b[2][2] - b[1][2] * b[2][1]) - b[0][1] * (b[1][0] * b[2][2] - b[1][2] * b[2][0])
           + b[0][2] * (b[1][0] * b[2][1] - b[1][1] * b[2][0]))
    phi = math.acos(max(-1.0, min(1.0, det / 2.0))) / 3.0
    e1 = q + 2.0 * p * math.cos(phi)
    e3 = q + 2.0 * p * math.cos(phi + 2.0 * math.pi / 3.0)
    return sorted([e1, 3.0 * q - e1 - e3, e3])


def physical(t):
    """Principal moments not negative and obeying the triangle inequality."""
    e = principal_moments(t)
    return e[0] >= 0.0 and e[2] <= e[0] + e[1] + 1e-12 * max(1.0, e[2])


def relative_pose(joints, body, ancestor):
    """(R, p) of `body` in the frame of `ancestor` at the joints' default coordinates."""
    if body == ancestor:
        return I3, [0.0, 0.0, 0.0]
    j = joints[body]
    r_par, p_par = relative_pose(joints, j["parent"], ancestor)
    r_j = I3
    for axis, coord in j["axes"]:
        r_j = mm(r_j, rot(axis, j["defaults"][coord]))
    return mm(r_par, r_j), add(p_par, mv(r_par, j["location"]))


# ---------------------------------------------------------------------------------------------
# Published constants (../shared/data/das3/README.md: das3_readosim.m, das3.al; Chadwick et al. (2014))
# ---------------------------------------------------------------------------------------------

THORAX_CENTRE = [0.0, -0.1486, 0.0591]
THORAX_AXES = [0.147, 0.2079, 0.0944]
TS_SCAPULA = [-0.1274, -0.0228, -0.0346]
AI_SCAPULA = [-0.1257, -0.1223, -0.0275]
CONOID_CLAVICLE = [0.1365, 0.0206, 0.0136]
CONOID_SCAPULA = [-0.0536, -0.0009, -0.0266]
# glenoid frame (rows: the glenoid axes in scapula coordinates; DAS3's glenoid_scap) and the
# glenoid ellipse's half-angles (deg), towards glenoid y and z
GLENOID_SCAP = [[0.9511, -0.2724, -0.1455], [0.2693, 0.9622, -0.0412], [0.1513, 0, 0.9885]]
GLENOID_HALF_ANGLES = [44.37, 38.55]

# de Groot & Brand (2001) as implemented in DAS3's estimate_shoulder_angles (rest angles of the
# Delft Shoulder and Elbow Model, deg: clavicle and scapula YZX in the thorax frame)
DEG = math.pi / 180.0
C0 = [-2.8573324e001 * DEG, 1.1679804e001 * DEG, 7.4820950e000 * DEG]
S0 = [3.2047376e001 * DEG, 1.0669100e001 * DEG, -1.0320259e001 * DEG]


def regression(plane, elevation):
    """Clavicle (y, z) and scapula (y, z, x) angles in the thorax frame, rad, from the humerus
    pole angle and elevation (rad): de Groot & Brand 2001, Clin Biomech 16:735-743."""
    c0 = [c / DEG for c in C0]
    s0 = [s / DEG for s in S0]
    hy, hz = plane / DEG, elevation / DEG
    cy = -4.983 + 0.120 * hy - 0.242 * hz + 0.851 * c0[0]
    cz = 3.917 - 0.046 * hy + 0.123 * hz + 0.493 * c0[1]
    sy = -1.203 + 0.140 * hy - 0.049 * hz + 0.901 * s0[0]
    sz = 3.095 - 0.079 * hy + 0.396 * hz + 0.414 * s0[1]
    sx = 0.659 - 0.028 * hy + 0.184 * hz + 0.886 * s0[2]
    return [cy * DEG, cz * DEG], [sy * DEG, sz * DEG, sx * DEG]


def axclav_error(ma, mp, s, alpha):
    sd = mm(mm(ma, rx(alpha)), mp)
    e = mm(tr(sd), s)
    return sum(math.acos(max(-1.0, min(1.0, e[i][i]))) for i in range(3))


def axclav(c, s):
    """DAS3's axclav: the clavicle's axial rotation that keeps the clavicle-scapula relation
    closest to its rest relation (sum of the angles between corresponding axes, minimised)."""
    co, so = ryzx(C0), ryzx(S0)
    mp = mm(tr(co), so)
    b, g, _ = rotyzx(mm(tr(co), c))
    ma = mm(mm(co, ry(b)), rz(g))
    # a scan of the half circle, then golden-section refinement
    n = 720
    grid = [-math.pi / 2 + math.pi * k / n for k in range(n + 1)]
    a0 = min(grid, key=lambda a: axclav_error(ma, mp, s, a))
    lo, hi = a0 - math.pi / n, a0 + math.pi / n
    g = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):
        c1, c2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if axclav_error(ma, mp, s, c1) < axclav_error(ma, mp, s, c2):
            hi = c2
        else:
            lo = c1
    return mm(ma, rx(0.5 * (lo + hi)))


def rhythm(plane, elevation, axial):
    """Thorax-to-clavicle, -scapula and -humerus rotations (DAS3 bone frames)."""
    (cy, cz), s = regression(plane, elevation)
    scap = ryzx(s)
    clav = axclav(ryzx([cy, cz, 0.0]), scap)
    hum = mm(mm(ry(plane), rz(elevation)), ry(axial))
    return clav, scap, hum


def ellipsoid_level(p):
    return sum(((p[i] - THORAX_CENTRE[i]) / THORAX_AXES[i]) ** 2 for i in range(3)) - 1.0


def thorax_distance(p):
    """Signed distance (m) from p to the thorax ellipsoid along its normal, positive outside:
    the root t of sum (a_i y_i / (a_i^2 + t))^2 = 1 by bisection, then |y - closest point|."""
    a = THORAX_AXES
    y = [p[i] - THORAX_CENTRE[i] for i in range(3)]
    f = lambda t: sum((a[i] * y[i] / (a[i] ** 2 + t)) ** 2 for i in range(3)) - 1.0
    lo, hi = -min(x * x for x in a) * (1.0 - 1e-12), 1.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
    t = 0.5 * (lo + hi)
    closest = [a[i] ** 2 * y[i] / (a[i] ** 2 + t) for i in range(3)]
    d = norm(sub(y, closest))
    return d if t > 0.0 else -d


# ---------------------------------------------------------------------------------------------
# Table 2 of van der Helm (1994) and the DAS3 elements it is built from
# ---------------------------------------------------------------------------------------------

# (element name stem, Table 2 name, PCSA cm^2, elements, PCSA per element cm^2, DAS3 prefix)
TABLE2 = [
    ("trapezius_scapular", "m. trapezius, scapular part", 14.34, 6, 2.39, "trap_scap"),
    ("trapezius_clavicular", "m. trapezius, clavicular part", 3.12, 6, 0.52, "trap_clav"),
    ("levator_scapulae", "m. levator scapulae", 3.44, 3, 1.15, "lev_scap"),
    ("pectoralis_minor", "m. pectoralis minor", 3.43, 4, 0.86, "pect_min"),
    ("rhomboideus", "m. rhomboideus", 7.57, 3, 2.52, "rhomboid"),
    ("serratus_anterior", "m. serratus anterior", 11.43, 6, 1.91, "serr_ant"),
    ("deltoideus_scapular", "m. deltoideus, scapular part", 16.58, 6, 2.76, "delt_scap"),
    ("deltoideus_clavicular", "m. deltoideus, clavicular part", 8.07, 6, 1.35, "delt_clav"),
    ("coracobrachialis", "m. coracobrachialis", 3.20, 6, 0.53, "coracobr"),
    ("infraspinatus", "m. infraspinatus", 8.17, 6, 1.36, "infra"),
    ("teres_minor", "m. teres minor", 3.10, 6, 0.52, "ter_min"),
    ("teres_major", "m. teres major", 12.56, 6, 2.09, "ter_maj"),
    ("supraspinatus", "m. supraspinatus", 4.69, 6, 0.78, "supra"),
    ("subscapularis", "m. subscapularis", 14.99, 6, 2.50, "subscap"),
    ("biceps_longum", "m. biceps, caput longum", 1.72, 1, 1.72, "bic_l"),
    ("biceps_breve", "m. biceps, caput breve", 1.78, 1, 1.78, "bic_b"),
    ("triceps_longum", "m. triceps, caput longum", 6.24, 2, 3.12, "tric_long"),
    ("latissimus_dorsi", "m. latissimus dorsi", 8.52, 5, 1.70, "lat_dorsi"),
    ("pectoralis_major_thoracic", "m. pectoralis major, thoracic part", 8.68, 5, 1.74, "pect_maj_t"),
    ("pectoralis_major_clavicular", "m. pectoralis major, clavicular part", 3.55, 5, 0.71, "pect_maj_c"),
]


def das3_elements(muscles, prefix):
    """DAS3's elements of one muscle, in file order (`trap_scap_1` ... `trap_scap11`)."""
    out = []
    for m in muscles:
        rest = m["name"][len(prefix):]
        if m["name"].startswith(prefix) and (rest == "" or rest.lstrip("_").isdigit()):
            out.append(m)
    return out


def positions(n, k):
    """Where Table 2's k elements sit among DAS3's n (index space 0..n-1): evenly spaced from the
    first to the last, or the middle for a single element."""
    if k == 1:
        return [0.5 * (n - 1)]
    return [j * (n - 1) / (k - 1) for j in range(k)]


# ---------------------------------------------------------------------------------------------
# The model
# ---------------------------------------------------------------------------------------------

ARM = ("ulna_r", "radius_r", "hand_r")

# PEE slack lengths (of L_opt) raised by DAS3's own rule (Chadwick et al. 2014, App. A: the slack
# at L_opt "except for a few muscle elements for which this resulted in very high passive
# forces", raised in steps of 0.1 L_opt). DAS3 kept serratus anterior's at L_opt, but in its
# geometry (das3.osim with OpenSim 4.6, the rigid tendon's fibre length (L - l_s)/L_opt) along
# the shoulder rhythm in the plane 50 deg from 0 to 80 deg elevation (the flexion of Chadwick
# et al. 2014, Fig. 3) these elements pass 1.3 L_opt, where the PEE carries 29 % of F_max with
# no activation (Chadwick et al. 2014's F_max at 1.56 L_opt). Each: (the largest fibre length
# there rounded up to 0.1, that largest length). DAS3's own exceptions (das3.osim's passive curves
# start at 1.1-1.6 L_opt for infraspinatus 4-6, teres minor, supraspinatus 1, biceps and triceps;
# das3_readosim.m reads PEEslack there) are not taken: with them the flexion's excitations made
# the same way drive teres minor's slack fibres to 36 F_max at the fixed 4 ms step (0.50 deg RMS
# from the reference against 0.12 without; docs/forward-dynamics.md). shoulder-forward-elbow.toml
# takes DAS3's for the elements on the forearm (biceps, triceps longum), whose passive force the
# locked elbow no longer takes.
PEE_SLACK = {
    "serr_ant_4": (1.5, 1.4149),
    "serr_ant_5": (1.4, 1.3898),
    "serr_ant_6": (1.4, 1.3197),
    "serr_ant_8": (1.6, 1.5054),
    "serr_ant_9": (1.6, 1.5604),
    "serr_ant10": (1.7, 1.6992),
}
# the arm's points in contact with the thorax ellipsoid (forward model)
ARM_CONTACTS = ("humerus_mid", "elbow", "forearm_mid", "wrist", "hand")
# the glenohumeral range (forward model): OpenSim's CoordinateLimitForce on each hinge, from rest
# (deg): flexion (+) and extension about the scapula's x, axial rotation about y', abduction (+)
# and adduction about z''; stiffness N m/deg, damping N m s/deg, transition deg
GH_RANGE = {"gh_x": (-50.0, 120.0), "gh_y": (-80.0, 80.0), "gh_z": (-20.0, 120.0)}
GH_LIMIT = (10.0, 0.1, 5.0)
BODY = {"thorax": "thorax", "clavicle_r": "clavicle", "scapula_r": "scapula", "humerus_r": "humerus"}


class Builder:
    def __init__(self, osim, elbow=False):
        self.osim = osim
        self.elbow = elbow
        self.bodies, self.wraps, self.joints, self.muscles = read_osim(osim)
        # each coordinate's range (rad)
        self.joints_by_coordinate = {c: r for j in self.joints.values() for c, r in j["ranges"].items()}
        self.arm_pose = {b: relative_pose(self.joints, b, "humerus_r") for b in ARM}
        # with `elbow`, the forearm's frame is DAS3's ulna frame at EL_x's default
        self.forearm_pose = {b: relative_pose(self.joints, b, "ulna_r") for b in ARM}

    # -- the arm: humerus + forearm + hand, elbow fixed (or, with `elbow`, on its hinge) -------

    def arm_frame(self, body):
        """Our body carrying DAS3's `body` of the arm, and `body`'s (R, p) in its frame."""
        if self.elbow:
            return ("forearm", *self.forearm_pose[body])
        return ("humerus", *self.arm_pose[body])

    def to_humerus(self, body, p):
        """A point of `body` (DAS3 frame, m) in our body frame (m), and our body's name."""
        if body in ARM:
            ours, r, o = self.arm_frame(body)
            return ours, add(o, mv(r, p))
        return BODY[body], list(p)

    def arm_inertia(self):
        """The humerus's mass properties (with the forearm and hand lumped on unless `elbow`)."""
        parts = [("humerus_r", I3, [0.0, 0.0, 0.0])]
        parts += [] if self.elbow else [(b, *self.arm_pose[b]) for b in ARM]
        return self.lump(parts)

    def forearm_inertia(self):
        """The forearm's (ulna, radius and hand at PS_y's default) in the ulna's frame."""
        return self.lump([(b, *self.forearm_pose[b]) for b in ARM])

    def lump(self, parts):
        """Mass, centre of mass and inertia about it of rigidly joined DAS3 bodies, each given
        with its (R, p) in a common frame: the parallel-axis theorem."""
        mass = sum(self.bodies[b]["mass"] for b, _, _ in parts)
        com = [0.0, 0.0, 0.0]
        for b, r, o in parts:
            com = add(com, scale(self.bodies[b]["mass"], add(o, mv(r, self.bodies[b]["com"]))))
        com = scale(1.0 / mass, com)
        inertia = [[0.0] * 3 for _ in range(3)]
        for b, r, o in parts:
            m = self.bodies[b]["mass"]
            j = mm(mm(r, self.bodies[b]["inertia"]), tr(r))
            d = sub(add(o, mv(r, self.bodies[b]["com"])), com)
            for i in range(3):
                for k in range(3):
                    inertia[i][k] += j[i][k] + m * ((dot(d, d) if i == k else 0.0) - d[i] * d[k])
        return mass, com, inertia

    # -- rest posture --------------------------------------------------------------------------

    def rest_posture(self):
        """Clavicle and scapula rotations of the rest posture (the rhythm at humerus pole angle,
        elevation and axial rotation 0, placed by `placed_posture`). The conoid's rigid length
        is its length there."""
        clav, scap, alpha, w = self.placed_posture(0.0, 0.0)
        sc = self.joints["clavicle_1"]["location"]
        ac = add(sc, mv(clav, self.joints["scapula_1"]["location"]))
        self.rest_change = (abs(alpha) / DEG, norm(w) / DEG)
        self.conoid = norm(sub(add(sc, mv(clav, CONOID_CLAVICLE)), add(ac, mv(scap, CONOID_SCAPULA))))
        return clav, scap

    def placed_posture(self, plane, elevation):
        """Clavicle and scapula rotations of the rhythm at humerus pole angle `plane` and
        `elevation` (rad): the scapula placed on the thorax (TS and AI on the ellipsoid) keeping
        the regression's AC and TS.x, then the clavicle turned about its SC-AC line (AC stays)
        to the axial rotation that axclav's criterion prefers for the placed scapula. Also the
        clavicle's turn (rad) and the scapula's rotation vector (rad) of the placing."""
        sc = self.joints["clavicle_1"]["location"]
        ac_c = self.joints["scapula_1"]["location"]
        clav0, scap0, _ = rhythm(plane, elevation, 0.0)
        ac = add(sc, mv(clav0, ac_c))
        ts0 = add(ac, mv(scap0, TS_SCAPULA))

        def residual(w):
            s = mm(rotvec(w), scap0)
            ts, ai = add(ac, mv(s, TS_SCAPULA)), add(ac, mv(s, AI_SCAPULA))
            return [ts[0] - ts0[0], 0.1 * ellipsoid_level(ts), 0.1 * ellipsoid_level(ai)]

        w = [0.0] * 3
        for _ in range(50):
            f = residual(w)
            if max(abs(v) for v in f) < 1e-15:
                break
            h = 1e-7
            jac = [[0.0] * 3 for _ in range(3)]
            for k in range(3):
                wp, wm = w[:], w[:]
                wp[k] += h
                wm[k] -= h
                fp, fm = residual(wp), residual(wm)
                for i in range(3):
                    jac[i][k] = (fp[i] - fm[i]) / (2 * h)
            w = add(w, solve(jac, [-v for v in f]))
        else:
            raise RuntimeError(f"the posture at plane {plane / DEG:.1f}, elevation {elevation / DEG:.1f} deg did not converge")
        scap = mm(rotvec(w), scap0)
        # axclav's criterion, over rotations about the SC-AC line
        u = sub(ac, sc)
        mp = mm(tr(ryzx(C0)), ryzx(S0))
        err = lambda a: axclav_error(mm(rot(u, a), clav0), mp, scap, 0.0)
        n = 720
        a0 = min((-math.pi / 2 + math.pi * k / n for k in range(n + 1)), key=err)
        lo, hi = a0 - math.pi / n, a0 + math.pi / n
        g = (math.sqrt(5.0) - 1.0) / 2.0
        for _ in range(80):
            c1, c2 = hi - g * (hi - lo), lo + g * (hi - lo)
            if err(c1) < err(c2):
                hi = c2
            else:
                lo = c1
        alpha = 0.5 * (lo + hi)
        return mm(rot(u, alpha), clav0), scap, alpha, w

    # -- muscles ---------------------------------------------------------------------------------

    def muscle_elements(self):
        """The 95 elements: name, Table 2 muscle, PCSA per element, path, obstacles, lengths."""
        out = []
        for stem, title, pcsa, k, per, prefix in TABLE2:
            if abs(pcsa / k - per) > 0.006:
                raise ValueError(f"{title}: Table 2 PCSA/element {per} != {pcsa}/{k}")
            src = das3_elements(self.muscles, prefix)
            n = len(src)
            if n == 0:
                raise ValueError(f"no DAS3 elements for {prefix}")
            for j, v in enumerate(positions(n, k)):
                name = f"{stem}_{j + 1}" if k > 1 else stem
                if k <= n:
                    i = min(n - 1, int(math.floor(v + 0.5)))
                    a, b, w = src[i], src[i], 0.0
                    how = f"{a['name']}"
                else:
                    i = min(n - 2, int(math.floor(v)))
                    a, b, w = src[i], src[i + 1], v - i
                    how = a["name"] if w < 1e-12 else (b["name"] if w > 1 - 1e-12 else f"{a['name']} + {w:.3f} ({b['name']} - {a['name']})")
                if [p[0] for p in a["points"]] != [p[0] for p in b["points"]] or a["wraps"] != b["wraps"]:
                    raise ValueError(f"{a['name']} and {b['name']} differ in structure")
                pts = []
                for (body, pa), (_, pb) in zip(a["points"], b["points"]):
                    pts.append(self.to_humerus(body, add(scale(1 - w, pa), scale(w, pb))))
                das3_bodies = [p[0] for p in a["points"]]
                obstacles = []
                for wname in a["wraps"]:
                    wr = self.wraps[wname]
                    seg = self.segment_of(das3_bodies, wr["body"], a["name"], wname)
                    obstacles.append((wname, seg))
                mix = lambda key: (1 - w) * a[key] + w * b[key]
                out.append(
                    dict(name=name, stem=stem, title=title, pcsa=per, points=pts, obstacles=obstacles,
                         source=how, das3=(a["name"], b["name"], w),
                         fibre=mix("fibre"), tendon=mix("tendon"), pennation=mix("pennation"), pee=mix("pee"), das3_pee=mix("das3_pee"),
                         act1=mix("act1"), act2=mix("act2"))
                )
        if len(out) != 95 or len(TABLE2) != 20:
            raise ValueError(f"{len(out)} elements in {len(TABLE2)} muscles, expected 95 in 20")
        return out

    @staticmethod
    def segment_of(bodies, wrap_body, muscle, wrap):
        """The stretch of a path a wrap object acts on: the first stretch between two different
        bodies with the wrap object's body at one end."""
        for s in range(len(bodies) - 1):
            a, b = bodies[s], bodies[s + 1]
            if a != b and wrap_body in (a, b):
                return s
        raise ValueError(f"{muscle}: no stretch of the path for wrap object {wrap}")

    def obstacle_table(self, wname, seg):
        wr = self.wraps[wname]
        r = frame_rotation(wr["rotation"])
        body, centre = self.to_humerus(wr["body"], wr["translation"])
        if wr["body"] in ARM:
            r = mm(self.arm_frame(wr["body"])[1], r)
        t = [f'type = "{wr["kind"]}"', f'body = "{body}"', f"centre = {fmt_vec(scale(1000, centre))}"]
        if wr["kind"] == "sphere":
            t.append(f"radius = {fmt(1000 * wr['radius'])}")
        elif wr["kind"] == "ellipsoid":
            t.append(f"semi_axes = {fmt_vec(scale(1000, wr['dimensions']))}")
            if any(abs(r[i][k] - I3[i][k]) > 1e-12 for i in range(3) for k in range(3)):
                t.append(f"x_axis = {fmt_unit(column(r, 0))}, y_axis = {fmt_unit(column(r, 1))}")
        elif wr["quadrant"] == "all":
            # the ellipsoid inscribed in the cylinder, semi-axes (r, r, length/2): the stand-in
            # from before cylinders could be finite, kept (the study's pinned results rest on it)
            rr, half = 1000 * wr["radius"], 500 * wr["length"]
            t[0] = 'type = "ellipsoid"'
            t.append(f"semi_axes = {fmt_vec([rr, rr, half])}")
            t.append(f"x_axis = {fmt_unit(column(r, 0))}, y_axis = {fmt_unit(column(r, 1))}")
        else:
            t.append(f"radius = {fmt(1000 * wr['radius'])}")
            t.append(f"length = {fmt(1000 * wr['length'])}")
            t.append(f"axis = {fmt_unit(column(r, 2))}")
            q = wr["quadrant"]
            if q != "all":
                sign = -1.0 if q.startswith("-") else 1.0
                k = {"x": 0, "y": 1}[q.lstrip("+-")]
                t.append(f"side = {fmt_unit(scale(sign, column(r, k)))}")
        if seg:
            t.append(f"segment = {seg}")
        return "{ " + ", ".join(t) + " }"


def frame_rotation(a):
    """OpenSim's xyz_body_rotation: Rx(a0) Ry(a1) Rz(a2)."""
    return mm(mm(rx(a[0]), ry(a[1])), rz(a[2]))


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


def fmt(x, digits=4):
    s = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def fmt_vec(v, digits=4):
    return "[" + ", ".join(fmt(x, digits) for x in v) + "]"


def fmt_unit(v):
    n = norm(v)
    return fmt_vec([x / n for x in v], 9)


def fmt_matrix(r):
    return "[" + ", ".join(fmt_vec(row, 12) for row in r) + "]"


FORWARD_HEADER = """\
# The Delft shoulder model on DAS3 geometry for FORWARD DYNAMICS: the anatomy, rest posture and
# muscle paths of shoulder.toml, moved by Hill muscles (`mollier simulate --excitations`).
#
# GENERATED by models/shoulder/tools/make_shoulder.py from das3.osim -- do not edit by hand.
#
# What differs from shoulder.toml (docs/forward-dynamics.md):
# - the nine joint rotations (SC, AC, GH: three hinges each) are the generalized coordinates,
#   zero in the rest posture, each with DAS3's passive moment (Chadwick et al. 2014, eq. 4): 1 N m s/rad,
#   5 N m/rad towards the middle of DAS3's range (SC and AC; GH towards rest: its hinges are not
#   DAS3's angles), stops of 5000 N m/rad^2 outside that range (SC and AC);
# - TS and AI are kept on the thorax by DAS3's soft contact (Chadwick et al. 2014, App. B), not held on it;
# - the arm (humerus, forearm and hand: five points) is kept out of the thorax by the same contact,
#   and the glenohumeral hinges have a range (OpenSim's CoordinateLimitForce);
# - the conoid ligament pulls but does not push (Chadwick et al. 2014, eq. 5), slack at its rest length
#   ({con:.2f} mm);
# - the 95 muscle elements have Hill muscles (Chadwick et al. 2014, App. A), [muscles] at the end;
# - no load sharing, no thorax-humerus input chain.
#
"""

HEADER = """\
# The Delft shoulder model (van der Helm 1994) built from the DAS3 shoulder model, for Mollier.
#
# GENERATED by models/shoulder/tools/make_shoulder.py from das3.osim -- do not edit by hand;
# change the script and run it again (docs/shoulder.md).
#
# Sources
# - Structure: F.C.T. van der Helm (1994), A finite element musculoskeletal model of the shoulder
#   mechanism, J Biomech 27(5):551-569: SC, AC, GH as three hinges each; TS and AI on
#   the thorax ellipsoid (SURFACE); conoid rigid; costoclavicular and trapezoid ligaments; Table 2:
#   20 muscles and muscle parts, 95 elements, PCSA per element (models/shoulder/muscles.csv).
# - Geometry, inertia, wrap objects, optimal lengths: DAS3, the Dynamic Arm Simulator
#   (E.K. Chadwick, D. Blana, R.F. Kirsch, A.J. van den Bogert (2014), Real-time simulation of
#   three-dimensional shoulder girdle and arm dynamics, IEEE TBME 61(7):1947-1956),
#   das3.osim of github.com/dasproject/DAS3 at commit d6f2ff0 (2022-04-05), Apache License 2.0.
#   Thorax ellipsoid, TS/AI contact points and conoid attachments: das3_readosim.m of the same
#   repository. DAS3 derives from the Delft Shoulder and Elbow Model (DSEM).
# - Rest posture: the shoulder rhythm regression of A.H. de Groot and R. Brand (2001), Clin
#   Biomech 16(9):735-743, as implemented in DAS3's estimate_shoulder_angles.m (rest angles C0, S0
#   of DSEM; clavicle axial rotation by axclav), at humerus pole angle, elevation and axial
#   rotation 0, with TS and AI then placed on the thorax ellipsoid (AC and TS.x kept) and the
#   clavicle's axial rotation set by axclav's criterion for the placed scapula.
# - Trapezoid and costoclavicular attachments: estimated (docs/shoulder.md, "Ligaments").
# - Load sharing ([load_sharing], at the end): the muscle table models/shoulder/muscles.csv
#   (Table 2's PCSA, DAS3's optimal lengths); the glenoid frame and half-angles of the stability
#   constraint from DAS3 (glenoid_scap).
#
# Wrapping: DAS3's wrap objects on the path stretch they act on. Cylinders with a quadrant keep
# it as `side` and their finite length (OpenSim's rule at the ends); the cylinder without a
# quadrant (ter_lat_pec) is the ellipsoid inscribed in it, semi-axes (r, r, length/2), as it was
# before cylinders could be finite (the study's pinned results rest on it).
#
# Inertia: DAS3's. Its clavicle lists products of inertia where OpenSim expects tensor elements
# (their negatives): as listed the tensor is impossible (principal moments violate the triangle
# inequality), so the signs of the clavicle's Ixy, Ixz, Iyz are turned.
#
# Frames: DAS3's (the Delft conventions). Global = thorax: origin at the incisura jugularis,
# X lateral (right), Y cranial, Z dorsal. Each body's frame is its DAS3 frame, so points are in
# DAS3 body coordinates; the forearm and hand are lumped onto the humerus with the elbow at
# DAS3's default angles (flexion {el:.1f} deg, pronation-supination {ps:.1f} deg).
#
# Generalized coordinates (van der Helm 1994, "Input variables"): AC.y, AC.z (the acromioclavicular joint
# centre), scapula.TS.x, and the humerus's pole angle (about thorax Y), elevation (about z') and
# axial rotation (about y'') relative to the thorax: rotations of the three input hinges from
# the initial configuration, in which all three are zero (the arm hangs along thorax -Y).
#
# Rest posture: the scapula turned {rs:.2f} deg from the regression's orientation to put TS and AI
# on the thorax, the clavicle {rc:.2f} deg about its SC-AC line by axclav's criterion; the rigid
# conoid's length is its length there, {con:.2f} mm (DAS3's slack length is 17.4 mm between the
# same attachment points). DAS3's default coordinates are not used: they put TS and AI
# {dts:.1f} and {dai:.1f} mm inside the thorax ellipsoid and the conoid attachments {dcon:.1f} mm apart.
"""


ELBOW_HEADER = """\
# The forward-dynamics shoulder of shoulder-forward.toml with the FOREARM ON ITS OWN HINGE: the
# ulna, with the radius and hand lumped onto it at DAS3's default pronation-supination
# (PS_y {ps:.1f} deg), turns about DAS3's humeroulnar axis (EL_x) through DAS3's joint centre; its
# rotation el_x is a tenth generalized coordinate, zero at DAS3's default flexion ({el:.1f} deg),
# so that at el_x = 0 every muscle's length and the arm's mass properties are shoulder-forward.toml's.
# The biceps' insertions (radius) and the triceps longum's origins (ulna), their wrap objects
# (DAS3's radius and elbow cylinders) and the contact points forearm_mid, wrist and hand are on
# the forearm: the biceps' elbow moment must now be balanced (in shoulder-forward.toml the fixed
# elbow takes it). The elbow's passive moment: DAS3's 1 N m s/rad damping and 5000 N m/rad^2 stops
# outside das3.osim's EL_x range [{lo:.0f}, {hi:.0f}] deg (Chadwick et al. 2014, eq. 4, as at SC and
# AC), its 5 N m/rad stiffness towards rest (the range's extension end), not the range's middle:
# towards the middle it would flex the extended elbow with {pre:.1f} N m, more than the forearm's
# weight gives ({wgt:.1f} N m with the forearm horizontal). The biceps' and triceps longum's PEE
# slack lengths are DAS3's own, where das3.osim's passive curves start (of L_opt):
# {pees};
# at L_opt, as in shoulder-forward.toml, the extended elbow's biceps would pull passively (its
# fibres at 1.2-1.3 L_opt) and the triceps would have to hold it.
#
"""


def build(osim, forward=False, elbow=False):
    """The model file (kinematic, or with `forward` the forward-dynamics variant; with `elbow`
    too, the forearm on its own hinge), the muscle table, and the builder."""
    b = Builder(osim, elbow=elbow)
    clav, scap = b.rest_posture()
    hum = I3
    sc = b.joints["clavicle_1"]["location"]
    ac_c = b.joints["scapula_1"]["location"]
    gh_s = b.joints["humerus_1"]["location"]
    ac = add(sc, mv(clav, ac_c))
    gh = add(ac, mv(scap, gh_s))
    el = b.joints["ulna_r"]["defaults"]["EL_x"] / DEG
    ps = b.joints["radius_r"]["defaults"]["PS_y"] / DEG
    elements = b.muscle_elements()
    if elbow:
        # the muscles that cross the elbow get DAS3's own PEE slack (das3.osim's passive curves):
        # at L_opt the extended elbow's biceps would pull passively, which the lock took
        for e in elements:
            if any(body == "forearm" for body, _ in e["points"]):
                e["pee"] = e["das3_pee"]

    # body points, in our bodies' frames (m)
    points = {"thorax": [], "clavicle": [], "scapula": [], "humerus": [], "forearm": []}
    points["thorax"].append(("SC", sc))
    points["clavicle"].append(("AC", "AC"))
    points["scapula"] += [("TS", TS_SCAPULA), ("AI", AI_SCAPULA), ("GH", gh_s)]
    points["clavicle"].append(("conoid", CONOID_CLAVICLE))
    points["scapula"].append(("conoid", CONOID_SCAPULA))

    # trapezoid: clavicle, midway between the conoid attachment and the AC joint centre (the
    # trapezoid line runs from the conoid tubercle towards the AC joint); scapula, midway between
    # the conoid attachment and the coracoid tip (mean of DAS3's coracobrachialis origins)
    tip = [0.0, 0.0, 0.0]
    corac = das3_elements(b.muscles, "coracobr")
    for m in corac:
        tip = add(tip, scale(1.0 / len(corac), m["points"][0][1]))
    trapezoid_c = scale(0.5, add(CONOID_CLAVICLE, ac_c))
    trapezoid_s = scale(0.5, add(CONOID_SCAPULA, tip))
    points["clavicle"].append(("trapezoid", trapezoid_c))
    points["scapula"].append(("trapezoid", trapezoid_s))
    # costoclavicular: clavicle, on the costal tuberosity 12 % of the way from SC to AC and 8 mm
    # below the clavicle's axis (its y axis is cranial); thorax, the first costal cartilage 12 mm
    # caudal of it in the rest posture
    costo_c = add(scale(0.12, ac_c), [0.0, -0.008, 0.0])
    costo_t = add(add(sc, mv(clav, costo_c)), [0.0, -0.012, 0.0])
    points["clavicle"].append(("costoclavicular", costo_c))
    points["thorax"].append(("costoclavicular", costo_t))
    # the hand's centre of mass (DAS3's hand_r), carried onto the humerus: where a study's hand
    # load acts
    hand_body, hand = b.to_humerus("hand_r", b.bodies["hand_r"]["com"])
    points[hand_body].append(("hand", hand))
    if forward:
        # the arm's points kept out of the thorax: the elbow (DAS3's ulna origin), the wrist (the
        # hand's origin), the hand's centre of mass, and the midpoints of humerus and forearm
        fore, elbow_f = b.to_humerus("ulna_r", [0.0, 0.0, 0.0])
        elbow_h = b.arm_pose["ulna_r"][1]
        wrist = b.to_humerus("hand_r", [0.0, 0.0, 0.0])[1]
        points["humerus"] += [("humerus_mid", scale(0.5, elbow_h)), ("elbow", elbow_h)]
        points[fore] += [("forearm_mid", scale(0.5, add(elbow_f, wrist))), ("wrist", wrist)]

    suffix = lambda k, n: "o" if k == 0 else ("i" if k == n - 1 else f"v{k}")
    for e in elements:
        n = len(e["points"])
        names = []
        for k, (body, p) in enumerate(e["points"]):
            if norm(p) < 1e-9:
                raise ValueError(f"{e['name']}: a point at its body's origin")
            pname = f"{e['name']}_{suffix(k, n)}"
            points[body].append((pname, p))
            names.append(f"{body}.{pname}")
        e["names"] = names

    mass, com, inertia = b.arm_inertia()
    rc, rs = b.rest_change
    out = io.StringIO()
    w = out.write
    r_def, o_def = relative_pose(b.joints, "scapula_r", "thorax")
    rc_def, oc_def = relative_pose(b.joints, "clavicle_r", "thorax")
    dts = -1000 * thorax_distance(add(o_def, mv(r_def, TS_SCAPULA)))
    dai = -1000 * thorax_distance(add(o_def, mv(r_def, AI_SCAPULA)))
    dcon = 1000 * norm(sub(add(oc_def, mv(rc_def, CONOID_CLAVICLE)), add(o_def, mv(r_def, CONOID_SCAPULA))))
    hinges = ("sc_y", "sc_z", "sc_x", "ac_y", "ac_z", "ac_x", "gh_x", "gh_y", "gh_z")
    el_rest = b.joints["ulna_r"]["defaults"]["EL_x"]
    el_lo, el_hi = b.joints_by_coordinate["EL_x"]
    if elbow:
        fm, fc, _ = b.forearm_inertia()
        # the forearm's weight moment about the elbow axis, horizontal: m g times the centre of
        # mass's distance from the axis
        ax = b.joints["ulna_r"]["axes"][0][0]
        arm = norm(sub(fc, scale(dot(fc, ax) / dot(ax, ax), ax)))
        pees = ", ".join(f"{e['name']} {fmt(e['pee'], 2)}" for e in elements if any(bd == "forearm" for bd, _ in e["points"]))
        w(ELBOW_HEADER.format(el=el, ps=ps, lo=el_lo / DEG, hi=el_hi / DEG, pre=5.0 * (0.5 * (el_lo + el_hi) - el_rest),
                              wgt=fm * 9.80665 * arm, pees=pees))
    if forward:
        w(FORWARD_HEADER.format(el=el, ps=ps, con=1000 * b.conoid))
        text = HEADER.format(el=el, ps=ps, rc=rc, rs=rs, con=1000 * b.conoid, dts=dts, dai=dai, dcon=dcon).split("\n#\n", 2)[2]
        if elbow:
            text = text.replace("the forearm and hand are lumped onto the humerus with the elbow at\n#",
                                "the forearm's is the ulna's, the radius and hand lumped onto it, at\n#")
        w(text)
    else:
        w(HEADER.format(el=el, ps=ps, rc=rc, rs=rs, con=1000 * b.conoid, dts=dts, dai=dai, dcon=dcon))
    w("\nformat_version = 1\n")
    if elbow:
        w('name = "Delft shoulder model on DAS3 geometry, forward dynamics, the forearm on its elbow hinge"\n')
        w('description = "Generated by models/shoulder/tools/make_shoulder.py from das3.osim (dasproject/DAS3 d6f2ff0, Apache-2.0); see docs/forward-dynamics.md"\n')
    elif forward:
        w('name = "Delft shoulder model on DAS3 geometry, forward dynamics (DAS3 muscles, soft contact)"\n')
        w('description = "Generated by models/shoulder/tools/make_shoulder.py from das3.osim (dasproject/DAS3 d6f2ff0, Apache-2.0); see docs/forward-dynamics.md"\n')
    else:
        w('name = "Delft shoulder model (van der Helm 1994) on DAS3 geometry"\n')
        w('description = "Generated by models/shoulder/tools/make_shoulder.py from das3.osim (dasproject/DAS3 d6f2ff0, Apache-2.0); see docs/shoulder.md"\n')
    w('fixed = ["thorax"]\n')
    if forward:
        w("inputs = [" + ", ".join(f'"{h}.rotation"' for h in hinges + (("el_x",) if elbow else ())) + "]\n")
        free = ["costoclavicular", "trapezoid", "conoid", "TS_thorax", "AI_thorax"]
        free += [f"{pt}_thorax" for pt in ARM_CONTACTS]
    else:
        w('inputs = ["AC.y", "AC.z", "scapula.TS.x", "humerus_pole.rotation", "humerus_elevation.rotation", "humerus_axial.rotation"]\n')
        free = [f"{h}.rotation" for h in hinges]
        free += ["costoclavicular", "trapezoid"]
    free += [e["name"] for e in elements]
    w("free = [\n")
    for i in range(0, len(free), 6):
        w("    " + ", ".join(f'"{f}"' for f in free[i : i + 6]) + ",\n")
    w("]\n")
    w("gravity = [0, -9.80665, 0]\n")
    w('axes = { forward = "-z", up = "y" }  # the thorax frame: x lateral, y up, z dorsal\n\n')
    w('[units]\nlength = "mm"\nangle = "deg"\nmass = "kg"\n\n')

    # the AC joint centre, shared by clavicle and scapula: an input node
    w("# the acromioclavicular joint centre (DAS3: the scapula frame's origin), shared by clavicle\n")
    w("# and scapula\n")
    w(f"[nodes.AC]\nposition = {fmt_vec(scale(1000, ac))}\n\n")

    # intermediate orientations of the three-hinge joints
    sc_a = rotyzx(clav)
    ac_a = rotyzx(mm(tr(clav), scap))
    inter = [
        ("sc_1", ry(sc_a[0]), "SC: after the rotation about thorax Y"),
        ("sc_2", mm(ry(sc_a[0]), rz(sc_a[1])), "SC: after the rotation about z'"),
        ("ac_1", mm(clav, ry(ac_a[0])), "AC: after the rotation about clavicle y"),
        ("ac_2", mm(clav, mm(ry(ac_a[0]), rz(ac_a[1]))), "AC: after the rotation about z'"),
        ("gh_1", scap, "GH: after the rotation about scapula x"),
        ("gh_2", scap, "GH: after the rotation about y'"),
    ]
    if not forward:
        inter += [
            ("humerus_1", ry(0.0), "input chain: after the pole angle (about thorax Y)"),
            ("humerus_2", mm(ry(0.0), rz(0.0)), "input chain: after the elevation (about z')"),
        ]
    w("# massless intermediate orientations of the joints made of three hinges\n")
    for name, r, what in inter:
        w(f"[nodes.{name}]  # {what}\norientation = {{ matrix = {fmt_matrix(r)} }}\n\n")

    def body(name, origin, r, pts, massprops, note):
        w(f"# {note}\n[bodies.{name}]\n")
        w(f"origin = {origin}\n")
        if r is not None:
            w(f"orientation = {{ matrix = {fmt_matrix(r)} }}\n")
        if massprops:
            m, c, j = massprops
            w(f"mass = {fmt(m, 6)}\ncom = {fmt_vec(scale(1000, c))}\n")
            w(f"inertia = {fmt_vec([j[0][0] * 1e6, j[1][1] * 1e6, j[2][2] * 1e6, j[0][1] * 1e6, j[0][2] * 1e6, j[1][2] * 1e6], 3)}\n")
        w(f"[bodies.{name}.points]\n")
        for pname, p in pts:
            val = f'"{p}"' if isinstance(p, str) else fmt_vec(scale(1000, p))
            w(f"{pname} = {val}\n")
        w("\n")

    bd = b.bodies
    body("thorax", "[0, 0, 0]", None, points["thorax"], None, "thorax: fixed; SC is the sternoclavicular joint centre")
    body("clavicle", '"thorax.SC"', clav, points["clavicle"],
         (bd["clavicle_r"]["mass"], bd["clavicle_r"]["com"], bd["clavicle_r"]["inertia"]),
         "clavicle: turns about SC")
    body("scapula", '"AC"', scap, points["scapula"],
         (bd["scapula_r"]["mass"], bd["scapula_r"]["com"], bd["scapula_r"]["inertia"]),
         "scapula: turns about AC; TS and AI are DAS3's scapulothoracic contact points; GH is the glenohumeral joint centre")
    if elbow:
        body("humerus", '"scapula.GH"', hum, points["humerus"], (mass, com, inertia), f"humerus: {mass:.4f} kg")
        fm, fc, fj = b.forearm_inertia()
        body("forearm", '"humerus.elbow"', mm(hum, b.arm_pose["ulna_r"][0]), points["forearm"], (fm, fc, fj),
             f"forearm: ulna (DAS3's frame) with radius and hand lumped on at PS_y {ps:.1f} deg, {fm:.4f} kg; turns about the elbow")
    else:
        body("humerus", '"scapula.GH"', hum, points["humerus"], (mass, com, inertia),
             f"humerus with ulna, radius and hand lumped on (elbow fixed): {mass:.4f} kg")

    def hinge(name, p, q, axis, what, coordinate=None, rest=0.0, to_rest=False):
        w(f'[elements.{name}]  # {what}\ntype = "hinge"\np = "{p}"\nq = "{q}"\naxis = {fmt_unit(axis)}\n')
        if forward:
            # Chadwick et al. (2014), eq. 4: damping b, stiffness k1 towards the middle of DAS3's range, stops
            # (k2) outside it; angles from our zero, the rest posture (DAS3 angle = ours + rest)
            k1, damping, k2 = 5.0 * DEG, 1.0 * DEG, 5000.0 * DEG * DEG
            if coordinate is None:
                lo, hi = GH_RANGE[name]
                k, c, t = GH_LIMIT
                w(f"# range [{lo:g}, {hi:g}] deg from rest: OpenSim's CoordinateLimitForce, {k:g} N m/deg, {c:g} N m s/deg, transition {t:g} deg\n")
                w(f"law.rotation = {{ stiffness = {fmt(k1, 6)}, damping = {fmt(damping, 6)}, coordinate_limit = {{ ")
                w(f"upper_limit = {hi:g}, upper_stiffness = {k:g}, lower_limit = {lo:g}, lower_stiffness = {k:g}, ")
                w(f"damping = {c:g}, transition = {t:g} }} }}  # towards rest; no DAS3 range\n")
            else:
                lo, hi = b.joints_by_coordinate[coordinate]
                mid = rest if to_rest else 0.5 * (lo + hi)
                towards = "towards rest" if to_rest else f"middle {mid / DEG:.2f} deg"
                w(f"# DAS3 {coordinate}: range [{lo / DEG:.2f}, {hi / DEG:.2f}] deg, {towards}, rest {rest / DEG:.2f} deg\n")
                w(f"law.rotation = {{ stiffness = {fmt(k1, 6)}, damping = {fmt(damping, 6)}, preload = {fmt(5.0 * (rest - mid), 6)}, ")
                w(f"limits = {{ range = [{fmt((lo - rest) / DEG, 4)}, {fmt((hi - rest) / DEG, 4)}], stiffness = {fmt(k2, 6)} }} }}\n")
        w("\n")

    w("# sternoclavicular joint: DAS3's YZX chain (SC_y, SC_z, SC_x), rotations free\n")
    hinge("sc_y", "thorax", "sc_1", [0, 1, 0], f"DAS3 SC_y; rest {sc_a[0] / DEG:.2f} deg", "SC_y", sc_a[0])
    hinge("sc_z", "sc_1", "sc_2", column(inter[0][1], 2), f"DAS3 SC_z; rest {sc_a[1] / DEG:.2f} deg", "SC_z", sc_a[1])
    hinge("sc_x", "sc_2", "clavicle", column(clav, 0), f"DAS3 SC_x; rest {sc_a[2] / DEG:.2f} deg", "SC_x", sc_a[2])
    w("# acromioclavicular joint: DAS3's YZX chain (AC_y, AC_z, AC_x), rotations free\n")
    hinge("ac_y", "clavicle", "ac_1", column(clav, 1), f"DAS3 AC_y; rest {ac_a[0] / DEG:.2f} deg", "AC_y", ac_a[0])
    hinge("ac_z", "ac_1", "ac_2", column(inter[2][1], 2), f"DAS3 AC_z; rest {ac_a[1] / DEG:.2f} deg", "AC_z", ac_a[1])
    hinge("ac_x", "ac_2", "scapula", column(scap, 0), f"DAS3 AC_x; rest {ac_a[2] / DEG:.2f} deg", "AC_x", ac_a[2])
    w("# glenohumeral joint: hinges about the scapula's x, y', z'' axes (not DAS3's YZY, whose\n")
    w("# middle angle is zero at rest: gimbal lock); rotations free, zero at rest\n")
    hinge("gh_x", "scapula", "gh_1", column(scap, 0), "about scapula x")
    hinge("gh_y", "gh_1", "gh_2", column(scap, 1), "about y'")
    hinge("gh_z", "gh_2", "humerus", column(scap, 2), "about z''")
    if elbow:
        w("# humeroulnar joint: DAS3's EL_x axis through DAS3's joint centre (humerus.elbow), zero at its default\n")
        hinge("el_x", "humerus", "forearm", mv(hum, b.joints["ulna_r"]["axes"][0][0]),
              f"DAS3 EL_x; rest {el_rest / DEG:.2f} deg", "EL_x", el_rest, to_rest=True)
    if not forward:
        w("# the humerus's orientation relative to the thorax, driven: pole angle, elevation, axial\n")
        w("# rotation (van der Helm 1994; DAS3's thorax-humerus YZY). These hinges carry no load in the\n")
        w("# optimisation: their driving moments must vanish\n")
        hinge("humerus_pole", "thorax", "humerus_1", [0, 1, 0], "input: pole angle, about thorax Y")
        hinge("humerus_elevation", "humerus_1", "humerus_2", [0, 0, 1], "input: elevation, about z'")
        hinge("humerus_axial", "humerus_2", "humerus", [0, 1, 0], "input: axial rotation, about y''")

    if forward:
        w("# scapulothoracic contact: TS and AI kept out of the thorax ellipsoid by DAS3's soft contact\n")
        w("# (Chadwick et al. 2014, App. B: k = 20 kN/m, epsilon = 0.01)\n")
    else:
        w("# scapulothoracic gliding plane: TS and AI on the thorax ellipsoid (distance held at 0)\n")
    for pt in ("TS", "AI"):
        kind = "soft-contact" if forward else "surface"
        w(f'[elements.{pt}_thorax]\ntype = "{kind}"\npoint = "scapula.{pt}"\nbody = "thorax"\n')
        w(f"centre = {fmt_vec(scale(1000, THORAX_CENTRE))}\nsemi_axes = {fmt_vec(scale(1000, THORAX_AXES))}\n")
        w("stiffness = 20000  # N/m\nepsilon = 0.01\n\n" if forward else 'reference = "surface"\n\n')
    if forward:
        w("# arm-thorax contact: the humerus's, forearm's and hand's points kept out of the same ellipsoid\n")
        w("# by the same soft contact (the forearm and hand are " + ("on the forearm)\n" if elbow else "lumped onto the humerus)\n"))
        for pt in ARM_CONTACTS:
            on = next(bn for bn, pts in points.items() if any(n == pt for n, _ in pts))
            w(f'[elements.{pt}_thorax]\ntype = "soft-contact"\npoint = "{on}.{pt}"\nbody = "thorax"\n')
            w(f"centre = {fmt_vec(scale(1000, THORAX_CENTRE))}\nsemi_axes = {fmt_vec(scale(1000, THORAX_AXES))}\n")
            w("stiffness = 20000  # N/m\nepsilon = 0.01\n\n")

    if forward:
        w("# ligaments: the conoid pulls but does not push (Chadwick et al. 2014, eq. 5: 80 N/mm, epsilon 1 mm), slack\n")
        w(f"# at its length in the rest posture ({1000 * b.conoid:.2f} mm; DAS3's 17.4 mm would pull\n")
        w(f"# {80 * (1000 * b.conoid - 17.4):.0f} N there); the others free\n")
        w('[elements.conoid]\ntype = "truss"\np = "clavicle.conoid"\nq = "scapula.conoid"\n')
        w(f"law.elongation = {{ tension_only = {{ stiffness = 80, slack_length = {fmt(1000 * b.conoid, 4)}, epsilon = 1 }} }}\n\n")
    else:
        w("# ligaments: conoid rigid (tension only in the optimisation), the others free\n")
        w('[elements.conoid]\ntype = "truss"\np = "clavicle.conoid"\nq = "scapula.conoid"\n\n')
    w('[elements.trapezoid]\ntype = "truss"\np = "clavicle.trapezoid"\nq = "scapula.trapezoid"\n\n')
    w('[elements.costoclavicular]\ntype = "truss"\np = "thorax.costoclavicular"\nq = "clavicle.costoclavicular"\n\n')

    w("# muscles: van der Helm (1994) Table 2 on DAS3 elements (models/shoulder/muscles.csv)\n")
    for e in elements:
        names = e["names"]
        if e["obstacles"] or len(names) > 2:
            w(f'[elements.{e["name"]}]  # {e["source"]}\ntype = "curved-truss"\np = "{names[0]}"\nq = "{names[-1]}"\n')
            if len(names) > 2:
                w("via = [" + ", ".join(f'"{n}"' for n in names[1:-1]) + "]\n")
            if e["obstacles"]:
                w("obstacles = [\n")
                for wname, seg in e["obstacles"]:
                    w(f"    {b.obstacle_table(wname, seg)},  # DAS3 {wname}\n")
                w("]\n")
        else:
            w(f'[elements.{e["name"]}]  # {e["source"]}\ntype = "truss"\np = "{names[0]}"\nq = "{names[1]}"\n')
        w("\n")

    if forward:
        w("# Hill muscles (Chadwick et al. 2014, App. A) on the elements above: maximum force PCSA (van der Helm 1994,\n")
        w("# Table 2) x 100 N/cm^2 (Chadwick et al. 2014); optimal fibre length, tendon slack length, pennation and\n")
        w("# activation constants of the DAS3 element(s) each was made from (OpenSim's Schutte muscle:\n")
        w("# T_act = 1/(activation1 + activation2), T_deact = 1/activation2); the PEE slack at L_opt but for\n")
        w("# serratus anterior's elements that pass 1.3 L_opt in the flexion (make_shoulder.py's PEE_SLACK,\n")
        w("# Chadwick et al. 2014, App. A's rule)\n")
        for e in elements:
            t_act, t_deact = 1.0 / (e["act1"] + e["act2"]), 1.0 / e["act2"]
            w(f'[muscles.{e["name"]}]  # {e["source"]}\n')
            w(f"max_force = {fmt(100 * e['pcsa'], 2)}\noptimal_fibre_length = {fmt(1000 * e['fibre'], 3)}\n")
            w(f"tendon_slack_length = {fmt(1000 * e['tendon'], 3)}\n")
            if e["pennation"] != 0.0:
                w(f"pennation = {fmt(e['pennation'] / DEG, 3)}\n")
            if abs(e["pee"] - 1.0) > 1e-12:
                w(f"pee_slack_length = {fmt(1000 * e['pee'] * e['fibre'], 3)}  # {fmt(e['pee'], 4)} L_opt\n")
            w(f"activation_time = {fmt(t_act, 5)}\ndeactivation_time = {fmt(t_deact, 5)}\n\n")
        w("# the glenohumeral joint's stability (Chadwick et al. 2014, eq. 9), reported per frame in stability.csv:\n")
        w("# the cone of shoulder.toml; the muscle table makes the model usable by `mollier inverse` too\n")
    else:
        w("# load sharing (van der Helm 1994, eq. 17-19; `mollier inverse`, models/shoulder/abduction.toml): the\n")
        w("# muscle elements above with their PCSA (van der Helm 1994, Table 2) and optimal lengths\n")
        w("# (DAS3) in muscles.csv; TS and AI may only be pressed onto the thorax, the conoid may only pull\n")
    w("[load_sharing]\n")
    w('muscle_table = "muscles.csv"\n')
    w("specific_tension = 100  # N/cm^2 (Chadwick et al. 2014, App. A)\n")
    w("width = 0.56            # of the force-length relation (Chadwick et al. 2014, eq. 13)\n")
    if not forward:
        w('compression = ["TS_thorax.distance", "AI_thorax.distance"]\n')
        w('tension = ["conoid.elongation"]\n')
    w("\n")

    w("# glenohumeral stability (van der Helm 1994, App. C; Chadwick et al. 2014, eq. 9): the force of the humeral head on\n")
    w("# the scapula (on the generated beam that holds GH to the scapula) must point into the glenoid\n")
    w("# ellipse. DAS3's glenoid frame (glenoid_scap: rows are the glenoid axes in scapula\n")
    w("# coordinates, published to 4 decimals and orthonormalised on reading); its x axis points from\n")
    w("# the glenoid to the humeral head, so the force on the scapula points along -x\n")
    w("[load_sharing.joint_cone]\n")
    w('joint = "scapula.GH"\n')
    w('elements = ["scapula.GH"]\n')
    w('body = "scapula"\n')
    w(f"axes = [{', '.join(fmt_vec(r) for r in GLENOID_SCAP)}]\n")
    w('into_socket = "-x"\n')
    w(f"half_angles = {fmt_vec(GLENOID_HALF_ANGLES)}  # deg: towards glenoid y, then z\n")
    if forward:
        return out.getvalue(), None, b

    table = io.StringIO()
    cw = csv.writer(table, lineterminator="\n")
    # criterion (c)'s force-length relation takes the fibre length: the element's length minus
    # the tendon slack length, against the optimal fibre length (DAS3's, interpolated)
    cw.writerow(["element", "muscle", "pcsa_cm2", "optimal_length_mm", "tendon_slack_mm", "das3"])
    for e in elements:
        cw.writerow([e["name"], e["title"], f"{e['pcsa']:.2f}", fmt(1000 * e["fibre"], 3),
                     fmt(1000 * e["tendon"], 3), e["source"]])
    return out.getvalue(), table.getvalue(), b


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.normpath(os.path.join(here, "..", "..", ".."))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--osim", default=os.path.join(repo, "..", "shared", "data", "das3", "das3.osim"))
    ap.add_argument("--out", default=os.path.join(repo, "models", "shoulder"))
    ap.add_argument("--check", action="store_true", help="fail if the committed files differ")
    args = ap.parse_args()
    if not os.path.exists(args.osim):
        sys.exit(f"make_shoulder: {args.osim} not found (the DAS3 reference data)")
    model, table, b = build(args.osim)
    forward, _, _ = build(args.osim, forward=True)
    elbow, _, _ = build(args.osim, forward=True, elbow=True)
    files = {"shoulder.toml": model, "muscles.csv": table, "shoulder-forward.toml": forward,
             "shoulder-forward-elbow.toml": elbow}
    if args.check:
        bad = [f for f, text in files.items() if open(os.path.join(args.out, f)).read() != text]
        if bad:
            sys.exit(f"make_shoulder: {', '.join(bad)} differ from what the script generates")
        print("make_shoulder: the committed files are up to date")
        return
    for f, text in files.items():
        with open(os.path.join(args.out, f), "w") as fh:
            fh.write(text)
    rc, rs = b.rest_change
    print(f"wrote {', '.join(files)} to {args.out}; rest posture moved {rc:.2f} deg (clavicle), {rs:.2f} deg (scapula)")


if __name__ == "__main__":
    main()
