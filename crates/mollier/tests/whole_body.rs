//! Huston's 17-member whole-body model (`models/body/`, Huston) against Kane's equations for
//! tree systems, written here from the seed's formulation without the kernel's dynamics:
//! Euler parameters and transformation matrices `S0K` built along the lower body array (eq.
//! 11.57), generalized speeds that are the translation rates of the reference member and the
//! relative angular velocity components of each member in its lower body's frame (eq. 13.24-25),
//! partial angular velocities (Table 11.7) and partial velocities (eq. 11.86), generalized active
//! forces of gravity (eq. 12.38) and generalized inertia forces (eq. 12.51), the generalized mass
//! array `A` (eq. 13.7). Mollier's coordinates are hinge angles, so its driving forces are
//! `τ = Wᵀ F_drive` and its reduced mass matrix `M̄ = Wᵀ A W`, where `W` maps the angle rates onto
//! Huston's speeds (ŷ = W q̇).

use std::ffi::OsStr;
use std::path::PathBuf;

use mollier::{Compiled, Simulation};
use mollier_core::conformance::Rng;
use mollier_core::dynamics::{inverse_dynamics, mass_matrix};
use mollier_core::{Data, solve_positions};
use mollier_format::{InertiaSpec, ParamValue, PointSpec};

type V3 = [f64; 3];
type M3 = [[f64; 3]; 3];

/// The seed's lower body array of the 17-member model (eq. 11.57; 0 is the inertial frame R).
const HUSTON_L: [usize; 17] = [0, 1, 2, 3, 4, 5, 3, 7, 3, 9, 10, 1, 12, 13, 1, 15, 16];

fn body_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/body").join(name)
}

fn load(name: &str) -> Compiled {
    let registry = mollier::registry();
    mollier::load(&body_file(name), &registry).unwrap_or_else(|d| panic!("{}", d.render()))
}

// ---- small 3-vector algebra, the test's own ------------------------------------------------

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn mul(s: f64, a: V3) -> V3 {
    [s * a[0], s * a[1], s * a[2]]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn cross(a: V3, b: V3) -> V3 {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}
fn mv(m: &M3, v: V3) -> V3 {
    [dot(m[0], v), dot(m[1], v), dot(m[2], v)]
}
fn mm(a: &M3, b: &M3) -> M3 {
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j]))
}
fn col(m: &M3, j: usize) -> V3 {
    [m[0][j], m[1][j], m[2][j]]
}
const I3: M3 = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];

/// Huston's Euler parameters of a rotation by `theta` about the unit vector `n` (eq. 13.15-13.18:
/// ε1..ε3 = n sin θ/2, ε4 = cos θ/2, the scalar last).
fn euler(n: V3, theta: f64) -> [f64; 4] {
    let (s, c) = (theta / 2.0).sin_cos();
    [n[0] * s, n[1] * s, n[2] * s, c]
}

/// The transformation matrix of Euler parameters (Huston ch. 8): columns are the rotated
/// frame's unit vectors in the fixed frame's components.
fn s_matrix(e: [f64; 4]) -> M3 {
    let [e1, e2, e3, e4] = e;
    [
        [e1 * e1 - e2 * e2 - e3 * e3 + e4 * e4, 2.0 * (e1 * e2 - e3 * e4), 2.0 * (e1 * e3 + e2 * e4)],
        [2.0 * (e1 * e2 + e3 * e4), -e1 * e1 + e2 * e2 - e3 * e3 + e4 * e4, 2.0 * (e2 * e3 - e1 * e4)],
        [2.0 * (e1 * e3 - e2 * e4), 2.0 * (e2 * e3 + e1 * e4), -e1 * e1 - e2 * e2 + e3 * e3 + e4 * e4],
    ]
}

// ---- the tree, read from the model file's own tables (not from the kernel) -----------------

/// A member of the tree.
struct Member {
    name: String,
    /// Index of the lower body L(k), `None` for the reference member.
    lower: Option<usize>,
    /// ξ_k: the member's joint centre (origin) in its lower body's frame, from its origin there.
    xi: V3,
    /// r_k: the centre of mass from the origin, member frame.
    r: V3,
    mass: f64,
    /// Central inertia, member frame.
    inertia: M3,
    /// The joint's hinges from the lower body outwards: index in `q`, axis (in the frame before).
    hinges: Vec<(usize, V3)>,
}

struct Tree {
    members: Vec<Member>,
    /// Indices in `q` of the reference member's x, y, z.
    translation: [usize; 3],
    gravity: V3,
    /// Constant forces (N, global frame) at points of members: member, point (member frame).
    loads: Vec<(usize, V3, V3)>,
    n: usize,
}

fn coords(p: &PointSpec) -> V3 {
    match p {
        PointSpec::Coordinates(c) => *c,
        PointSpec::Name(n) => panic!("expected coordinates, found `{n}`"),
    }
}

fn tree(c: &Compiled) -> Tree {
    let spec = c.document.spec();
    let input = |name: &str| c.inputs.iter().position(|i| i.name == name).unwrap_or_else(|| panic!("no input {name}"));
    let bodies: Vec<_> = spec.bodies.iter().collect();
    let index = |name: &str| bodies.iter().position(|(n, _)| *n == name);
    // hinges by the frame they turn: q -> (element, p, axis)
    let mut by_q = std::collections::HashMap::new();
    for (name, el) in spec.elements.iter() {
        assert_eq!(el.kind, "hinge", "{name}");
        let get = |k: &str| el.params.0.iter().find(|(key, _)| key == k).map(|(_, v)| v).unwrap();
        let s = |v: &ParamValue| match v {
            ParamValue::String(s) => s.clone(),
            _ => panic!(),
        };
        let axis = match get("axis") {
            ParamValue::Array(a) => [0, 1, 2].map(|i| match a[i] {
                ParamValue::Number(x) => x,
                _ => panic!(),
            }),
            _ => panic!(),
        };
        by_q.insert(s(get("q")), (name.to_string(), s(get("p")), axis));
    }
    let mut members = Vec::new();
    for (name, b) in &bodies {
        let (lower, xi) = match &b.origin {
            PointSpec::Coordinates(_) => (None, [0.0; 3]),
            PointSpec::Name(n) => {
                let (parent, point) = n.split_once('.').unwrap();
                let (_, pb) = bodies[index(parent).unwrap()];
                let p = pb.points.iter().find(|(k, _)| *k == point).unwrap().1;
                (index(parent), coords(p))
            }
        };
        let r = match b.com.as_ref().unwrap() {
            PointSpec::Coordinates(r) => *r,
            PointSpec::Name(p) => coords(b.points.iter().find(|(k, _)| k == p).unwrap().1),
        };
        let inertia = match b.inertia.as_ref().unwrap() {
            i @ (InertiaSpec::Matrix(_) | InertiaSpec::Moments(_)) => i.matrix(),
        };
        // the hinge chain from the lower body (or the ground) to this member
        let mut hinges = Vec::new();
        let mut frame = name.to_string();
        while let Some((el, p, axis)) = by_q.get(&frame) {
            hinges.push((input(&format!("{el}.rotation")), *axis));
            frame = p.clone();
            if index(&frame).is_some() || frame == "ground" {
                break;
            }
        }
        hinges.reverse();
        members.push(Member { name: name.to_string(), lower, xi, r, mass: b.mass.unwrap(), inertia, hinges });
    }
    let mut loads = Vec::new();
    for (name, l) in spec.loads.iter() {
        assert!(l.moment.is_none(), "{name}: only forces");
        let (body, point) = l.at.split_once('.').unwrap();
        let k = index(body).unwrap();
        let p = coords(bodies[k].1.points.iter().find(|(n, _)| *n == point).unwrap().1);
        loads.push((k, p, l.force.unwrap()));
    }
    let base = &members[0].name;
    let translation = ["x", "y", "z"].map(|a| input(&format!("{base}.{a}")));
    Tree { members, translation, gravity: spec.gravity.unwrap(), loads, n: c.inputs.len() }
}

// ---- Kane's equations (Huston) ------------------------------------------------------------

/// Everything Kane's equations need at a state.
struct Kane {
    /// Huston's generalized speeds: 3 translation rates, then 3 per member.
    y: Vec<f64>,
    /// ŷ = W q̇: W (n_y × n_q).
    w: Vec<Vec<f64>>,
    /// Per member: S0K, angular velocity, angular acceleration, centre of mass, its velocity and
    /// acceleration.
    s0: Vec<M3>,
    omega: Vec<V3>,
    alpha: Vec<V3>,
    g: Vec<V3>,
    vg: Vec<V3>,
    ag: Vec<V3>,
    /// Partial angular velocities and partial velocities of the centres of mass: per member,
    /// per speed.
    pw: Vec<Vec<V3>>,
    pv: Vec<Vec<V3>>,
    /// Generalized active forces of the loads (eq. 12.5: F·v_P,s), per speed.
    f_loads: Vec<f64>,
}

fn kane(t: &Tree, q: &[f64], qd: &[f64], qdd: &[f64]) -> Kane {
    let nb = t.members.len();
    let ny = 3 + 3 * nb;
    let mut w = vec![vec![0.0; t.n]; ny];
    let mut wd_qd = vec![0.0; ny]; // Ẇ q̇
    for (m, &i) in t.translation.iter().enumerate() {
        w[m][i] = 1.0;
    }
    let mut s0 = vec![I3; nb];
    let mut origin = vec![[0.0; 3]; nb];
    for (k, b) in t.members.iter().enumerate() {
        // the joint: hinges in series; each axis is fixed in the frame before it
        let mut s_rel = I3;
        let mut w_rel = [0.0; 3]; // relative angular velocity so far, lower body's frame
        for &(i, axis) in &b.hinges {
            let c = mv(&s_rel, axis);
            for (m, cm) in c.iter().enumerate() {
                w[3 + 3 * k + m][i] = *cm;
            }
            let cdot = cross(w_rel, c);
            for (m, cm) in cdot.iter().enumerate() {
                wd_qd[3 + 3 * k + m] += cm * qd[i];
            }
            w_rel = add(w_rel, mul(qd[i], c));
            s_rel = mm(&s_rel, &s_matrix(euler(axis, q[i])));
        }
        // eq. 11.57: S0K = S0,L(K) S_L(K),K; eq. 11.73: origins along the tree
        match b.lower {
            None => {
                s0[k] = s_rel;
                origin[k] = t.translation.map(|i| q[i]);
            }
            Some(l) => {
                s0[k] = mm(&s0[l], &s_rel);
                origin[k] = add(origin[l], mv(&s0[l], b.xi));
            }
        }
    }
    let apply = |a: &[Vec<f64>], x: &[f64]| -> Vec<f64> {
        a.iter().map(|r| r.iter().zip(x).map(|(p, q)| p * q).sum()).collect()
    };
    let y = apply(&w, qd);
    let yd: Vec<f64> = apply(&w, qdd).iter().zip(&wd_qd).map(|(a, b)| a + b).collect();
    // the members on the path from the reference member to k (the lower body array, repeated)
    let path = |k: usize| {
        let mut p = vec![k];
        while let Some(l) = t.members[*p.last().unwrap()].lower {
            p.push(l);
        }
        p
    };
    // S0,L(j): the frame the speeds of joint j are measured in (R for the reference member)
    let s_lower = |j: usize| t.members[j].lower.map_or(I3, |l| s0[l]);
    // partial angular velocities (Table 11.7) and angular velocities (eq. 11.58)
    let mut pw = vec![vec![[0.0; 3]; ny]; nb];
    let mut omega = vec![[0.0; 3]; nb];
    for k in 0..nb {
        for j in path(k) {
            let s = s_lower(j);
            for m in 0..3 {
                pw[k][3 + 3 * j + m] = col(&s, m);
            }
        }
        omega[k] = (0..ny).fold([0.0; 3], |acc, l| add(acc, mul(y[l], pw[k][l])));
    }
    // angular accelerations (eq. 11.59): Σ ω_kl ẏ_l + ω̇_kl y_l, ω̇_kl = Ω_L(j) × ω_kl (eq. 11.62)
    let mut alpha = vec![[0.0; 3]; nb];
    for k in 0..nb {
        for j in path(k) {
            let wl = t.members[j].lower.map_or([0.0; 3], |l| omega[l]);
            for m in 0..3 {
                let l = 3 + 3 * j + m;
                alpha[k] = add(alpha[k], add(mul(yd[l], pw[k][l]), mul(y[l], cross(wl, pw[k][l]))));
            }
        }
    }
    // partial velocities of a point P of member k (eq. 11.85-11.86): the translation rates, and
    // for each joint j on the path, ω_kl × (P − O_j); and their time derivatives
    let point_partials = |k: usize, p: V3, vp: V3| -> (Vec<V3>, Vec<V3>) {
        let mut v = vec![[0.0; 3]; ny];
        let mut vdot = vec![[0.0; 3]; ny];
        for (m, vm) in v.iter_mut().take(3).enumerate() {
            vm[m] = 1.0;
        }
        for j in path(k) {
            let wl = t.members[j].lower.map_or([0.0; 3], |l| omega[l]);
            let d = sub(p, origin[j]);
            // velocity of O_j: the reference member's origin moves with y1..3, the others with
            // their lower body
            let vo = velocity_of_origin(t, &origin, &omega, &y, j);
            for m in 0..3 {
                let l = 3 + 3 * j + m;
                let u = pw[k][l];
                v[l] = cross(u, d);
                vdot[l] = add(cross(cross(wl, u), d), cross(u, sub(vp, vo)));
            }
        }
        (v, vdot)
    };
    let mut g = vec![[0.0; 3]; nb];
    let mut vg = vec![[0.0; 3]; nb];
    let mut ag = vec![[0.0; 3]; nb];
    let mut pv = vec![Vec::new(); nb];
    for k in 0..nb {
        g[k] = add(origin[k], mv(&s0[k], t.members[k].r));
        let (v, _) = point_partials(k, g[k], [0.0; 3]);
        vg[k] = (0..ny).fold([0.0; 3], |acc, l| add(acc, mul(y[l], v[l])));
        let (v, vdot) = point_partials(k, g[k], vg[k]);
        ag[k] = (0..ny).fold([0.0; 3], |acc, l| add(acc, add(mul(yd[l], v[l]), mul(y[l], vdot[l]))));
        pv[k] = v;
    }
    let mut f_loads = vec![0.0; ny];
    for &(b, p, force) in &t.loads {
        let (v, _) = point_partials(b, add(origin[b], mv(&s0[b], p)), [0.0; 3]);
        for (s, fl) in f_loads.iter_mut().enumerate() {
            *fl += dot(force, v[s]);
        }
    }
    Kane { y, w, s0, omega, alpha, g, vg, ag, pw, pv, f_loads }
}

/// Velocity of member k's origin: the reference member's from y1..3, the others' from their
/// lower body (ξ fixed in it).
fn velocity_of_origin(t: &Tree, origin: &[V3], omega: &[V3], y: &[f64], k: usize) -> V3 {
    match t.members[k].lower {
        None => [y[0], y[1], y[2]],
        Some(l) => add(velocity_of_origin(t, origin, omega, y, l), cross(omega[l], sub(origin[k], origin[l]))),
    }
}

/// Central inertia dyadic of member k in R's components: S0K I S0Kᵀ.
fn inertia_in_r(t: &Tree, k: &Kane, b: usize) -> M3 {
    let s = &k.s0[b];
    let si = mm(s, &t.members[b].inertia);
    [0, 1, 2].map(|i| [0, 1, 2].map(|j| (0..3).map(|m| si[i][m] * s[j][m]).sum()))
}

/// Kane's equations F + F* + F_drive = 0 for the driving generalized forces in Huston's speeds,
/// then carried to Mollier's coordinates: τ = Wᵀ F_drive.
fn kane_tau(t: &Tree, q: &[f64], qd: &[f64], qdd: &[f64]) -> Vec<f64> {
    let k = kane(t, q, qd, qdd);
    let ny = k.y.len();
    let mut f_drive: Vec<f64> = k.f_loads.iter().map(|f| -f).collect();
    for (b, mb) in t.members.iter().enumerate() {
        let i = inertia_in_r(t, &k, b);
        // eq. 12.39-12.42: F* = −m a, T* = −I·α − ω × (I·ω); eq. 12.38: the weight m g
        let f_star = mul(-mb.mass, k.ag[b]);
        let t_star = mul(-1.0, add(mv(&i, k.alpha[b]), cross(k.omega[b], mv(&i, k.omega[b]))));
        let weight = mul(mb.mass, t.gravity);
        for (s, fd) in f_drive.iter_mut().enumerate() {
            // eq. 12.50: F*_s = v_ks·F* + ω_ks·T*; F_s = v_ks·w
            *fd -= dot(k.pv[b][s], add(f_star, weight)) + dot(k.pw[b][s], t_star);
        }
    }
    (0..t.n).map(|j| (0..ny).map(|s| k.w[s][j] * f_drive[s]).sum()).collect()
}

/// The generalized mass array (eq. 13.7) carried to Mollier's coordinates: M̄ = Wᵀ A W.
fn kane_mass(t: &Tree, q: &[f64]) -> Vec<Vec<f64>> {
    let zero = vec![0.0; t.n];
    let k = kane(t, q, &zero, &zero);
    let ny = k.y.len();
    let mut a = vec![vec![0.0; ny]; ny];
    for (b, mb) in t.members.iter().enumerate() {
        let i = inertia_in_r(t, &k, b);
        for s in 0..ny {
            for p in 0..ny {
                a[s][p] += mb.mass * dot(k.pv[b][s], k.pv[b][p]) + dot(k.pw[b][s], mv(&i, k.pw[b][p]));
            }
        }
    }
    let aw: Vec<Vec<f64>> =
        (0..ny).map(|s| (0..t.n).map(|j| (0..ny).map(|p| a[s][p] * k.w[p][j]).sum()).collect()).collect();
    (0..t.n).map(|i| (0..t.n).map(|j| (0..ny).map(|s| k.w[s][i] * aw[s][j]).sum()).collect()).collect()
}

/// A random state: angles within ±0.7 rad of the standing posture (away from the ±90° of a
/// spherical joint's middle angle), the reference member anywhere near its place.
fn random_state(c: &Compiled, rng: &mut Rng) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let q0 = c.model.q0();
    let q = q0.iter().map(|x| x + 0.7 * rng.symmetric()).collect();
    let qd = q0.iter().map(|_| 2.0 * rng.symmetric()).collect();
    let qdd = q0.iter().map(|_| 5.0 * rng.symmetric()).collect();
    (q, qd, qdd)
}

fn largest(v: impl IntoIterator<Item = f64>) -> f64 {
    v.into_iter().fold(0.0, |a, x| a.max(x.abs()))
}

fn kane_agrees(file: &str, dof: usize) {
    let c = load(file);
    let t = tree(&c);
    assert_eq!(c.inputs.len(), dof, "{file}");
    // the file's tree is the seed's: members in Huston's numbering, lower body array of eq. 11.57
    let lower: Vec<usize> = t.members.iter().map(|m| m.lower.map_or(0, |l| l + 1)).collect();
    assert_eq!(lower, HUSTON_L, "{file}: lower body array");
    let mut data = Data::new(&c.model);
    let mut rng = Rng::new(17);
    let mut worst = [0.0f64; 2];
    for trial in 0..6 {
        let (q, qd, qdd) = random_state(&c, &mut rng);
        solve_positions(&c.model, &mut data, &q).unwrap();
        let tau = inverse_dynamics(&c.model, &mut data, &qd, &qdd, &[]).unwrap();
        let want = kane_tau(&t, &q, &qd, &qdd);
        let scale = largest(want.iter().copied());
        let err = largest(tau.iter().zip(&want).map(|(a, b)| a - b));
        assert!(err <= 1e-9 * scale, "{file} state {trial}: τ differs from Kane's by {err:e} of {scale:e}");
        worst[0] = worst[0].max(err / scale);
        let mbar = mass_matrix(&c.model, &mut data).unwrap();
        let want = kane_mass(&t, &q);
        let scale = largest(want.iter().flatten().copied());
        let err = largest((0..dof).flat_map(|i| (0..dof).map(move |j| (i, j))).map(|(i, j)| mbar[(i, j)] - want[i][j]));
        assert!(err <= 1e-9 * scale, "{file} state {trial}: M̄ differs from Kane's A by {err:e} of {scale:e}");
        worst[1] = worst[1].max(err / scale);
    }
    eprintln!("{file}: largest differences from Kane's equations: τ {:.1e}, M̄ {:.1e} (relative)", worst[0], worst[1]);
}

#[test]
fn inverse_dynamics_and_mass_matrix_agree_with_kanes_equations() {
    kane_agrees("huston17.toml", 54);
}

#[test]
fn hinged_elbows_and_knees_agree_with_kanes_equations() {
    kane_agrees("huston17-hinges.toml", 46);
}

#[test]
fn holding_a_weight_agrees_with_kanes_equations() {
    kane_agrees("huston17-lift.toml", 54);
}

#[test]
fn the_committed_models_are_what_the_generator_writes() {
    let script = body_file("tools/make_body.py");
    let test = "the_committed_models_are_what_the_generator_writes";
    let Some(out) = mollier_core::shared_data::python3(test, &[script.as_os_str(), OsStr::new("--check")]) else {
        return;
    };
    assert!(out.status.success(), "{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
}

/// Linear momentum and angular momentum about R's origin (Σ m v_G, Σ G × m v_G + I·ω), and the
/// scales they are judged against (the same sums of magnitudes).
fn momentum(t: &Tree, q: &[f64], qd: &[f64]) -> ([V3; 2], [f64; 2]) {
    let zero = vec![0.0; t.n];
    let k = kane(t, q, qd, &zero);
    let (mut p, mut h, mut scale) = ([0.0; 3], [0.0; 3], [0.0; 2]);
    for (b, mb) in t.members.iter().enumerate() {
        let mv_g = mul(mb.mass, k.vg[b]);
        let spin = mv(&inertia_in_r(t, &k, b), k.omega[b]);
        let moment = cross(k.g[b], mv_g);
        p = add(p, mv_g);
        h = add(h, add(moment, spin));
        scale[0] += dot(mv_g, mv_g).sqrt();
        scale[1] += dot(moment, moment).sqrt() + dot(spin, spin).sqrt();
    }
    ([p, h], scale)
}

#[test]
fn a_floating_body_turning_its_arm_keeps_its_momentum() {
    let c = load("zero-g-arm.toml");
    let t = tree(&c);
    let arm = c.inputs.iter().position(|i| i.name == "right_upper_arm_z.rotation").unwrap();
    // 0.3 s: the arm's first half swing; RK4's error in the momentum is (ω dt)⁴-small with dt 1 ms
    let mut sim = Simulation::new(&c, 0.001).unwrap();
    let states = sim.advance(300).unwrap();
    let swing = largest(states.iter().map(|s| s.q[arm] - states[0].q[arm]));
    let mut worst = [0.0f64; 2];
    let mut scale = [0.0f64; 2];
    let mut body_turn = 0.0f64;
    for s in &states {
        let ([p, h], sc) = momentum(&t, &s.q, &s.qd);
        worst = [worst[0].max(dot(p, p).sqrt()), worst[1].max(dot(h, h).sqrt())];
        scale = [scale[0].max(sc[0]), scale[1].max(sc[1])];
        body_turn = body_turn.max(s.q[t.members[0].hinges[0].0].abs());
    }
    let rel = [worst[0] / scale[0], worst[1] / scale[1]];
    eprintln!(
        "zero-g-arm: the arm turns {swing:.3} rad, the lower torso {body_turn:.3} rad the other way; momentum over \
         0.3 s (from rest: zero): linear {:.1e}, angular {:.1e} of the largest sums of magnitudes",
        rel[0], rel[1]
    );
    assert!(swing > 0.5, "the arm turns by {swing} rad only");
    assert!(body_turn > 0.01, "the body does not counter-rotate ({body_turn} rad)");
    assert!(rel[0] <= 1e-9 && rel[1] <= 1e-9, "momentum not conserved: {rel:?}");
}

#[test]
fn a_body_falling_over_its_foot_keeps_its_energy() {
    let c = load("fall.toml");
    // dt 2 ms: RK4 stays stable for the stiffest spring mode (the neck's axial turn, ~440 rad/s)
    let mut sim = Simulation::new(&c, 0.002).unwrap();
    assert!(sim.is_conservative());
    let e0 = sim.state().energy.unwrap();
    let states = sim.advance(40).unwrap();
    let drift = largest(states.iter().map(|s| s.energy.unwrap() - e0));
    // the scale of the drift: the kinetic energy the fall has gained by the end
    let ekin = {
        let s = states.last().unwrap();
        let mut data = Data::new(&c.model);
        solve_positions(&c.model, &mut data, &s.q).unwrap();
        let m = mass_matrix(&c.model, &mut data).unwrap();
        let n = s.qd.len();
        0.5 * (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).map(|(i, j)| s.qd[i] * m[(i, j)] * s.qd[j]).sum::<f64>()
    };
    eprintln!("fall: 0.08 s, dt 2 ms: energy drift {drift:.2e} J against {ekin:.2} J of kinetic energy");
    assert!(ekin > 0.1, "the body does not move ({ekin} J)");
    assert!(drift <= 1e-4 * ekin, "energy drift {drift:e} J");
}

#[test]
fn the_seated_lift_frames_agree_with_kanes_equations() {
    // what `mollier inverse-dynamics` computes per frame (kinetostatics, the loads at the hands),
    // at the differentiated motion of the example
    let c = load("huston17-lift.toml");
    let t = tree(&c);
    let m = mollier::read_motion(&body_file("seated-lift-motion.csv"), &c.inputs)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let m = m.differentiate(mollier::Smoothing::Interpolate).unwrap();
    let mut run = mollier::InverseDynamicsRun::new(&c);
    let mut worst = 0.0f64;
    for i in 0..m.q.len() {
        let frame = run.solve(&m.q[i], &m.qd[i], &m.qdd[i]).unwrap();
        let want = kane_tau(&t, &m.q[i], &m.qd[i], &m.qdd[i]);
        let scale = largest(want.iter().copied());
        worst = worst.max(largest(frame.driving.iter().zip(&want).map(|(a, b)| a - b)) / scale);
    }
    eprintln!("seated lift: {} frames, largest difference from Kane's equations {worst:.1e} (relative)", m.q.len());
    assert!(worst <= 1e-9, "{worst:e}");
}
