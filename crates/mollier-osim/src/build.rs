//! From the OpenSim model to a Mollier model file (TOML text with comments naming the source
//! objects). The mapping (docs/opensim-import.md):
//!
//! - every body is a body, at its pose with the coordinates at zero (locked ones at their
//!   default): its origin, orientation, mass, centre of mass and inertia; markers and path points
//!   are its points;
//! - a joint's rotations that a coordinate drives are hinges in a chain from the parent's
//!   orientation to the child's through massless orientation nodes; its translations that a
//!   coordinate drives are beams along their axes, held in direction by the parent's orientation
//!   at both ends, whose elongation is the translation; constant rotations and translations are
//!   part of the geometry;
//! - the hinge's rotation (the beam's elongation) is an input, or rigid when the coordinate is
//!   locked. It is the change of the axis's value from the initial configuration (the default
//!   pose): for an axis whose function is `q + b` that is the coordinate minus its default value,
//!   and the element is named after the coordinate;
//! - muscles are trusses or curved trusses through their path points, over their wrap objects.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use nalgebra::{Matrix3, SymmetricEigen, Vector3};

use crate::function::Function;
use crate::model::{AxisValue, Model, PointKind, Shape};
use crate::pose::{Pose, axis_value, frame_pose, poses, rot, xyz};
use crate::report::Entry;

/// One Mollier input and how it follows from OpenSim's coordinates.
#[derive(Clone, Debug, PartialEq)]
pub struct InputDef {
    /// The input as written in the model's `inputs` (`hip_flexion_r.rotation`).
    pub name: String,
    /// The coordinate (index into the model's coordinates).
    pub coordinate: usize,
    /// The axis's value as a function of the coordinate.
    pub function: Function,
    /// The axis's value in the initial configuration (subtracted: inputs are changes).
    pub offset: f64,
    /// `true` when the input is the coordinate minus its default value (the element is named after
    /// the coordinate).
    pub exact_name: bool,
}

/// What the builder makes.
pub(crate) struct Built {
    pub toml: String,
    pub inputs: Vec<InputDef>,
    pub body_names: Vec<String>,
    pub muscle_names: Vec<Option<String>>,
    pub q0: Vec<f64>,
    pub entries: Vec<Entry>,
}

/// Names in one namespace, made valid for a Mollier file and unique.
#[derive(Default)]
struct Names(HashSet<String>);

#[cfg(test)]
mod tests {
    use super::num;

    #[test]
    fn numbers_read_back_exactly() {
        for x in [1.0, -0.5, 0.1 + 0.2, 1e-7, 3.2e-5, 123456.789, 1e20, -2.5e-300, std::f64::consts::PI] {
            let text = num(x);
            assert_eq!(text.parse::<f64>().unwrap(), x, "{text}");
        }
        assert_eq!(num(1.0), "1");
        assert_eq!(num(-0.0), "0");
    }

    #[test]
    fn straight_lines_through_shapes() {
        use super::{Pose, Shape, crosses};
        use nalgebra::{Matrix3, Vector3};
        let body = Pose { r: Matrix3::identity(), o: Vector3::new(1.0, 0.0, 0.0) };
        let c = [0.0, 0.0, 0.0];
        let i = Matrix3::identity();
        let line = |y: f64, z: f64| (Vector3::new(-1.0, y, z), Vector3::new(3.0, y, z));
        let (a, b) = line(0.5, 0.0);
        assert!(crosses(&Shape::Sphere(1.0), &body, &c, &i, &a, &b));
        let (a, b) = line(1.5, 0.0);
        assert!(!crosses(&Shape::Sphere(1.0), &body, &c, &i, &a, &b));
        // a segment that ends before the sphere does not cross it
        assert!(!crosses(
            &Shape::Sphere(1.0),
            &body,
            &c,
            &i,
            &Vector3::new(-3.0, 0.0, 0.0),
            &Vector3::new(-1.0, 0.0, 0.0)
        ));
        // a line far along a cylinder's axis still crosses it (OpenSim's test of the line)
        let (a, b) = line(0.5, 50.0);
        assert!(crosses(&Shape::Cylinder(1.0, 0.1), &body, &c, &i, &a, &b));
        let (a, b) = line(1.5, 0.0);
        assert!(crosses(&Shape::Ellipsoid([1.0, 2.0, 1.0]), &body, &c, &i, &a, &b));
        assert!(!crosses(&Shape::Ellipsoid([2.0, 1.0, 1.0]), &body, &c, &i, &a, &b));
    }
}

const RESERVED_POINTS: [&str; 9] = ["x", "y", "z", "l0", "l1", "l2", "l3", "orientation", "com"];

impl Names {
    fn claim(&mut self, want: &str) -> String {
        let mut s: String =
            want.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '_' }).collect();
        if !s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            s.insert(0, '_');
        }
        let base = s.clone();
        let mut k = 2;
        while self.0.contains(&s) || RESERVED_POINTS.contains(&s.as_str()) {
            s = format!("{base}_{k}");
            k += 1;
        }
        self.0.insert(s.clone());
        s
    }
}

/// A number as TOML: the shortest text that reads back to the same value (`1`, `0.25`; an
/// exponent only for the very small and very large).
fn num(x: f64) -> String {
    let a = x.abs();
    if x == 0.0 {
        "0".into()
    } else if (1e-5..1e16).contains(&a) {
        format!("{x}")
    } else {
        format!("{x:?}")
    }
}

fn vec3(v: &[f64]) -> String {
    format!("[{}, {}, {}]", num(v[0]), num(v[1]), num(v[2]))
}

fn matrix(r: &Matrix3<f64>) -> String {
    let rows: Vec<String> = (0..3).map(|i| vec3(&[r[(i, 0)], r[(i, 1)], r[(i, 2)]])).collect();
    format!("[{}]", rows.join(", "))
}

fn deg(x: f64) -> String {
    format!("{:.2}°", x.to_degrees())
}

/// A body's points, in order, and the names they take.
#[derive(Default)]
struct Points {
    names: Names,
    list: Vec<(String, String, String)>, // name, value (TOML), comment
}

impl Points {
    fn add(&mut self, want: &str, value: String, comment: String) -> String {
        let n = self.names.claim(want);
        self.list.push((n.clone(), value, comment));
        n
    }
}

/// Whether an inertia tensor is one a rigid body can have (principal moments not negative and
/// obeying the triangle inequality).
fn physical(i: &[f64; 6]) -> bool {
    let t = Matrix3::new(i[0], i[3], i[4], i[3], i[1], i[5], i[4], i[5], i[2]);
    let mut e: Vec<f64> = SymmetricEigen::new(t).eigenvalues.iter().copied().collect();
    e.sort_by(f64::total_cmp);
    let tol = 1e-12 * e[2].abs().max(1e-300);
    e[0] >= -tol && e[2] <= e[0] + e[1] + tol
}

/// The coordinates of the initial configuration: OpenSim's default pose (every coordinate at its
/// default value, coupled ones from their coupler). Zero coordinates are no good: in DAS3 they put
/// the scapula inside the thorax's wrapping ellipsoid.
pub(crate) fn initial_coordinates(m: &Model) -> Vec<f64> {
    let q: Vec<f64> = m.coordinates.iter().map(|c| c.default).collect();
    apply_couplers(m, q)
}

/// `q` with each coupled coordinate set from its coupler (in order, repeated for chains).
pub(crate) fn apply_couplers(m: &Model, mut q: Vec<f64>) -> Vec<f64> {
    for _ in 0..m.couplers.len() {
        for c in &m.couplers {
            q[c.dependent] = c.scale * c.function.value(q[c.independent]);
        }
    }
    q
}

pub(crate) fn build(m: &Model, file: &str, order: &[usize]) -> Built {
    let q0 = initial_coordinates(m);
    let pose = poses(m, order, &q0);
    let mut entries = Vec::new();
    let mut top = Names::default();
    let body_names: Vec<String> = m.bodies.iter().map(|b| top.claim(&b.name)).collect();
    let mut points: Vec<Points> = m.bodies.iter().map(|_| Points::default()).collect();
    let mut nodes = String::new();
    let mut elements = String::new();
    let mut inputs: Vec<InputDef> = Vec::new();
    let mut free: Vec<String> = Vec::new();
    let mut child_origin: HashMap<usize, (String, String)> = HashMap::new(); // body -> (origin, comment)
    let mut child_points: HashMap<usize, Vec<(String, String)>> = HashMap::new();

    // how many axes each coordinate drives
    let mut uses = vec![0usize; m.coordinates.len()];
    for j in &m.joints {
        for a in j.rotations.iter().chain(&j.translations) {
            if let AxisValue::Coord(c, _) = &a.value {
                uses[*c] += 1;
            }
        }
    }
    let coupled: HashMap<usize, usize> = m.couplers.iter().enumerate().map(|(k, c)| (c.dependent, k)).collect();

    for &k in order {
        let j = &m.joints[k];
        let (pb, cb) = (j.parent.body, j.child.body);
        let (pn, cn) = (&body_names[pb], &body_names[cb]);
        let f = frame_pose(&pose[pb], &j.parent);
        let _ = writeln!(
            elements,
            "# ---- {} `{}` ({}): {} -> {}",
            j.kind, j.name, j.place, m.bodies[pb].name, m.bodies[cb].name
        );
        // the element (and input) of an axis
        let axis_element = |label: &str, c: usize, fun: &Function, top: &mut Names| -> (String, bool) {
            if uses[c] == 1 && fun.is_shift() && !coupled.contains_key(&c) {
                (top.claim(&m.coordinates[c].name), true)
            } else {
                (top.claim(&format!("{}_{}", j.name, label)), false)
            }
        };
        let driven = |el: &str, mode: &str, c: usize, fun: &Function, exact: bool, inputs: &mut Vec<InputDef>| {
            let coord = &m.coordinates[c];
            if coord.locked {
                return format!("locked at {}: held", num(coord.default));
            }
            inputs.push(InputDef {
                name: format!("{el}.{mode}"),
                coordinate: c,
                function: fun.clone(),
                offset: fun.value(q0[c]),
                exact_name: exact,
            });
            if exact {
                format!("input: coordinate `{}` minus its default {}", coord.name, num(coord.default))
            } else {
                format!(
                    "input: {} of coordinate `{}`, minus its value {} at the initial configuration",
                    fun.describe(),
                    coord.name,
                    num(fun.value(q0[c]))
                )
            }
        };

        // translations: the child frame's origin (the joint centre M)
        let consts: Vector3<f64> = j
            .translations
            .iter()
            .filter(|a| matches!(a.value, AxisValue::Const(_)))
            .map(|a| Vector3::from(a.dir) * axis_value(&a.value, &q0))
            .sum();
        let var: Vec<_> = j.translations.iter().filter(|a| matches!(a.value, AxisValue::Coord(..))).collect();
        let m_ref = if var.is_empty() {
            let local = Vector3::from(j.parent.translation) + xyz(&j.parent.orientation) * consts;
            if local.iter().all(|v| *v == 0.0) {
                pn.clone()
            } else {
                let p = points[pb].add(&j.name, vec3(local.as_slice()), format!("joint `{}`: its centre", j.name));
                format!("{pn}.{p}")
            }
        } else {
            // beams from a base point on the parent, each along its axis, L + value long
            let lens: Vec<f64> = var.iter().map(|a| 1.0 + axis_value(&a.value, &q0).abs()).collect();
            let mut base = consts;
            for (a, l) in var.iter().zip(&lens) {
                base -= Vector3::from(a.dir) * *l;
            }
            let local = Vector3::from(j.parent.translation) + xyz(&j.parent.orientation) * base;
            let bp = points[pb].add(
                &format!("{}_base", j.name),
                vec3(local.as_slice()),
                format!("joint `{}`: base of its translations", j.name),
            );
            let mut prev = format!("{pn}.{bp}");
            // the base in global coordinates: F's origin plus the base offset in F
            let mut at = f.o + f.r * base;
            for (i, (a, l)) in var.iter().zip(&lens).enumerate() {
                let AxisValue::Coord(c, fun) = &a.value else { continue };
                at += f.r * Vector3::from(a.dir) * (l + fun.value(q0[*c]));
                let last = i + 1 == var.len();
                let node = top.claim(&if last {
                    format!("{}_centre", j.name)
                } else {
                    format!("{}_after_{}", j.name, a.label)
                });
                let what = if last {
                    "the joint centre (child frame's origin)".to_string()
                } else {
                    format!("after translation {}", a.label)
                };
                let _ = writeln!(
                    nodes,
                    "[nodes.{node}]  # joint `{}`: {what}\nposition = {}\n",
                    j.name,
                    vec3(at.as_slice())
                );
                let (el, exact) = axis_element(&a.label, *c, fun, &mut top);
                let role = driven(&el, "elongation", *c, fun, exact, &mut inputs);
                let _ = writeln!(
                    elements,
                    "[elements.{el}]  # `{}` {} along {} of the parent frame; {role}\ntype = \"beam\"\np = \"{prev}\"\norientation_p = \"{pn}\"\nq = \"{node}\"\norientation_q = \"{pn}\"\n",
                    j.name,
                    a.label,
                    vec3(&a.dir),
                );
                for mode in ["torsion", "bending_y_q", "bending_z_q"] {
                    free.push(format!("{el}.{mode}"));
                }
                prev = node;
            }
            prev
        };

        // rotations: hinges from the parent's orientation to the child's
        let rvar: Vec<usize> =
            (0..j.rotations.len()).filter(|i| matches!(j.rotations[*i].value, AxisValue::Coord(..))).collect();
        let mut o = f.r;
        let mut p_orient = pn.clone();
        let mut n_done = 0;
        for a in &j.rotations {
            let v = axis_value(&a.value, &q0);
            let axis = o * Vector3::from(a.dir);
            o *= rot(&a.dir, v);
            let AxisValue::Coord(c, fun) = &a.value else { continue };
            n_done += 1;
            let last = n_done == rvar.len();
            let q_orient = if last {
                cn.clone()
            } else {
                let node = top.claim(&format!("{}_after_{}", j.name, a.label));
                let _ = writeln!(
                    nodes,
                    "[nodes.{node}]  # joint `{}`: after {} (massless)\norientation = {{ matrix = {} }}\n",
                    j.name,
                    a.label,
                    matrix(&o)
                );
                node
            };
            let (el, exact) = axis_element(&a.label, *c, fun, &mut top);
            let role = driven(&el, "rotation", *c, fun, exact, &mut inputs);
            let _ = writeln!(
                elements,
                "[elements.{el}]  # `{}` {} about {}; {role}\ntype = \"hinge\"\np = \"{p_orient}\"\nq = \"{q_orient}\"\naxis = {}\n",
                j.name,
                a.label,
                vec3(&a.dir),
                vec3(axis.as_slice()),
            );
            p_orient = q_orient;
        }
        if rvar.is_empty() {
            let el = top.claim(&j.name);
            let _ = writeln!(
                elements,
                "[elements.{el}]  # `{}`: no rotation, the child's orientation held to the parent's\ntype = \"hinge\"\np = \"{pn}\"\nq = \"{cn}\"\naxis = [0, 0, 1]\n",
                j.name
            );
        }

        // the child body: its origin, or the joint centre as one of its points
        if j.child.translation.iter().all(|v| *v == 0.0) {
            child_origin.insert(cb, (format!("\"{m_ref}\""), format!("at joint `{}`'s centre", j.name)));
        } else {
            child_origin
                .insert(cb, (vec3(pose[cb].o.as_slice()), format!("joint `{}`'s centre is its point below", j.name)));
            child_points.entry(cb).or_default().push((j.name.clone(), format!("\"{m_ref}\"")));
        }
    }

    // markers
    for mk in &m.markers {
        points[mk.body].add(&mk.name, vec3(&mk.location), "marker".into());
    }

    // muscles
    let mut muscle_names = Vec::new();
    let mut sharing = String::new();
    let mut wrap_users: HashMap<(usize, usize), Vec<String>> = HashMap::new();
    for mu in &m.muscles {
        let name = top.claim(&mu.name);
        muscle_names.push(Some(name.clone()));
        let mut refs = Vec::new();
        let mut bodies = Vec::new();
        // the points kept: their index in the .osim path (0-based) and where they are
        let mut kept: Vec<(usize, &crate::model::PathPoint, [f64; 3])> = Vec::new();
        let mut notes = Vec::new();
        for (index, p) in mu.points.iter().enumerate() {
            let mut loc = p.location;
            match &p.kind {
                PointKind::Fixed => {}
                PointKind::Conditional(c, r) => {
                    let cr = m.coordinates[*c].range;
                    if cr[0] >= r[0] && cr[1] <= r[1] {
                        notes.push(format!(
                            "conditional point `{}` is active over `{}`'s whole range: kept",
                            p.name, m.coordinates[*c].name
                        ));
                    } else if cr[1] < r[0] || cr[0] > r[1] {
                        entries.push(Entry::new(
                            &p.place,
                            &p.name,
                            "ConditionalPathPoint",
                            format!("left out: never active within `{}`'s range", m.coordinates[*c].name),
                        ));
                        continue;
                    } else {
                        entries.push(Entry::new(
                            &p.place,
                            &p.name,
                            "ConditionalPathPoint",
                            format!(
                                "approximated: kept at all times; OpenSim uses it only while `{}` is in [{}, {}] (its range is [{}, {}]): the path differs outside that interval",
                                m.coordinates[*c].name,
                                num(r[0]),
                                num(r[1]),
                                num(cr[0]),
                                num(cr[1])
                            ),
                        ));
                    }
                }
                PointKind::Moving(fs) => {
                    let at = |q: &[f64]| [0, 1, 2].map(|k| fs[k].as_ref().map_or(0.0, |(c, f)| f.value(q[*c])));
                    loc = at(&q0);
                    // how far it moves from there over the coordinates' ranges
                    let mut worst: f64 = 0.0;
                    for (c, _) in fs.iter().flatten() {
                        let r = m.coordinates[*c].range;
                        let (lo, hi) = (r[0].max(-10.0), r[1].min(10.0));
                        for s in 0..=200 {
                            let mut q = q0.clone();
                            q[*c] = lo + (hi - lo) * s as f64 / 200.0;
                            let l = at(&q);
                            worst = worst.max((0..3).map(|k| (l[k] - loc[k]).powi(2)).sum::<f64>().sqrt());
                        }
                    }
                    entries.push(Entry::new(
                        &p.place,
                        &p.name,
                        "MovingPathPoint",
                        format!("approximated: fixed where it is in the initial configuration; it moves up to {:.3} mm from there over its coordinates' ranges", worst * 1e3),
                    ));
                }
            }
            let want = if p.name.starts_with(&mu.name) { p.name.clone() } else { format!("{}-{}", mu.name, p.name) };
            let pt = points[p.body].add(&want, vec3(&loc), format!("muscle `{}`", mu.name));
            refs.push(format!("{}.{pt}", body_names[p.body]));
            bodies.push(p.body);
            kept.push((index, p, loc));
        }
        if kept.len() < 2 {
            entries.push(Entry::new(
                &mu.place,
                &mu.name,
                &mu.kind,
                "left out: fewer than two of its path points are ever active",
            ));
            *muscle_names.last_mut().expect("pushed above") = None;
            continue;
        }
        // obstacles
        let mut obstacles = Vec::new();
        for w in &mu.wraps {
            let (wb, wk) = w.wrap;
            let wrap = &m.bodies[wb].wraps[wk];
            if !wrap.active {
                entries.push(Entry::new(
                    &mu.place,
                    &mu.name,
                    &mu.kind,
                    format!("wrap object `{}` is inactive in the model: left out", wrap.name),
                ));
                continue;
            }
            if let Shape::Other(t) = &wrap.shape {
                entries.push(Entry::new(
                    &mu.place,
                    &mu.name,
                    &mu.kind,
                    format!("wrap object `{}` ({t}) left out: the path goes straight past it", wrap.name),
                ));
                continue;
            }
            // the stretches (between kept points k and k + 1) within the range's path points
            let (lo, hi) = (
                if w.range[0] >= 1 { (w.range[0] - 1) as usize } else { 0 },
                if w.range[1] >= 1 { (w.range[1] - 1) as usize } else { usize::MAX },
            );
            let stretches: Vec<usize> =
                (0..kept.len() - 1).filter(|s| kept[*s].0 >= lo && kept[*s + 1].0 <= hi).collect();
            let rr = xyz(&wrap.rotation);
            let at = |k: usize| pose[kept[k].1.body].point(&kept[k].2);
            // as OpenSim in the default pose: the first stretch whose straight line passes through
            // the object; else the first between two bodies, one of them the object's
            let seg = stretches
                .iter()
                .copied()
                .find(|s| crosses(&wrap.shape, &pose[wb], &wrap.translation, &rr, &at(*s), &at(*s + 1)))
                .or_else(|| {
                    stretches
                        .iter()
                        .copied()
                        .find(|s| bodies[*s] != bodies[*s + 1] && (bodies[*s] == wb || bodies[*s + 1] == wb))
                })
                .or_else(|| stretches.iter().copied().find(|s| bodies[*s] != bodies[*s + 1]))
                .or_else(|| stretches.first().copied())
                .unwrap_or(0);
            if stretches.len() > 1 {
                entries.push(Entry::new(
                    &mu.place,
                    &mu.name,
                    &mu.kind,
                    format!(
                        "approximated: wrap object `{}` acts on the stretch from path point `{}` to `{}`; OpenSim tries the {} stretches of its range at every posture and wraps the first its straight line passes through",
                        wrap.name,
                        kept[seg].1.name,
                        kept[seg + 1].1.name,
                        stretches.len()
                    ),
                ));
            }
            // an anchor inside the obstacle in the initial configuration: OpenSim does not wrap
            // then; Mollier's curved truss cannot start there
            let anchors = [&kept[seg], &kept[seg + 1]];
            if let Some((_, a, _)) = anchors
                .iter()
                .find(|(_, p, loc)| inside(&wrap.shape, &pose[wb], &wrap.translation, &rr, &pose[p.body].point(loc)))
            {
                entries.push(Entry::new(
                    &mu.place,
                    &mu.name,
                    &mu.kind,
                    format!("wrap object `{}` left out: path point `{}` is inside it in the default pose (OpenSim does not wrap over it there)", wrap.name, a.name),
                ));
                continue;
            }
            let mut t = vec![];
            match &wrap.shape {
                Shape::Sphere(r) => {
                    t.push("type = \"sphere\"".to_string());
                    t.push(format!("radius = {}", num(*r)));
                }
                Shape::Cylinder(r, l) => {
                    t.push("type = \"cylinder\"".to_string());
                    t.push(format!("radius = {}", num(*r)));
                    t.push(format!("length = {}", num(*l)));
                }
                Shape::Ellipsoid(d) => {
                    t.push("type = \"ellipsoid\"".to_string());
                    t.push(format!("semi_axes = {}", vec3(d)));
                }
                Shape::Other(_) => unreachable!("left out above"),
            }
            t.insert(1, format!("body = \"{}\"", body_names[wb]));
            t.push(format!("centre = {}", vec3(&wrap.translation)));
            if wrap.rotation.iter().any(|v| *v != 0.0) {
                t.push(format!("rotation = {}", vec3(&wrap.rotation)));
            }
            if let Shape::Cylinder(..) = wrap.shape {
                let q = wrap.quadrant.trim();
                if q != "all" {
                    let sign = if q.starts_with('-') { -1.0 } else { 1.0 };
                    match q.trim_start_matches(['+', '-']) {
                        "x" => t.push(format!("side = {}", vec3((rr.column(0) * sign).as_slice()))),
                        "y" => t.push(format!("side = {}", vec3((rr.column(1) * sign).as_slice()))),
                        _ => {}
                    }
                }
            }
            if seg > 0 {
                t.push(format!("segment = {seg}"));
            }
            obstacles.push(format!("    {{ {} }},  # `{}`", t.join(", "), wrap.name));
            wrap_users.entry(w.wrap).or_default().push(mu.name.clone());
        }
        let _ = writeln!(
            elements,
            "# {} `{}` ({}){}",
            mu.kind,
            mu.name,
            mu.place,
            if notes.is_empty() { String::new() } else { format!("; {}", notes.join("; ")) }
        );
        if obstacles.is_empty() && refs.len() == 2 {
            let _ =
                writeln!(elements, "[elements.{name}]\ntype = \"truss\"\np = \"{}\"\nq = \"{}\"\n", refs[0], refs[1]);
        } else {
            let _ = write!(
                elements,
                "[elements.{name}]\ntype = \"curved-truss\"\np = \"{}\"\nq = \"{}\"\n",
                refs[0],
                refs[refs.len() - 1]
            );
            if refs.len() > 2 {
                let via: Vec<String> = refs[1..refs.len() - 1].iter().map(|r| format!("\"{r}\"")).collect();
                let _ = writeln!(elements, "via = [{}]", via.join(", "));
            }
            if !obstacles.is_empty() {
                let _ = writeln!(elements, "obstacles = [\n{}\n]", obstacles.join("\n"));
            }
            elements.push('\n');
        }
        free.push(name.clone());
        let lopt = mu.tendon_slack_length + mu.optimal_fiber_length * mu.pennation.cos();
        let _ = writeln!(
            sharing,
            "{name} = {{ pcsa = {}, optimal_length = {} }}  # Fmax {} N, fibre {} m, tendon slack {} m, pennation {}",
            num(mu.max_force / SPECIFIC_TENSION),
            num(lopt),
            num(mu.max_force),
            num(mu.optimal_fiber_length),
            num(mu.tendon_slack_length),
            deg(mu.pennation)
        );
    }
    // one report entry per wrap object that Mollier does not reproduce exactly
    let mut used: Vec<_> = wrap_users.into_iter().collect();
    used.sort();
    for ((b, k), users) in used {
        let w = &m.bodies[b].wraps[k];
        let who = format!("{} path(s): {}", users.len(), users.join(", "));
        let action = match &w.shape {
            Shape::Cylinder(..) => match w.quadrant.trim() {
                "all" => None,
                q @ ("x" | "+x" | "-x" | "y" | "+y" | "-y") => Some(format!(
                    "approximated: quadrant `{q}` becomes `side`: OpenSim's one-sided wrapping can go round the far side where Mollier's does not (DAS3: tens of millimetres at some postures); {who}"
                )),
                q => Some(format!("approximated: quadrant `{q}` ignored; {who}")),
            },
            Shape::Ellipsoid(_) => Some(format!(
                "approximated: Mollier wraps a geodesic, OpenSim its own ellipsoid algorithm (lengths differ by up to about a millimetre){}; {who}",
                if w.quadrant.trim() == "all" { String::new() } else { format!("; quadrant `{}` ignored", w.quadrant) }
            )),
            Shape::Sphere(_) if w.quadrant.trim() != "all" => Some(format!(
                "approximated: quadrant `{}` ignored (Mollier's spheres wrap the shorter way round); {who}",
                w.quadrant
            )),
            _ => None,
        };
        if let Some(a) = action {
            entries.push(Entry::new(&w.place, &w.name, wrap_tag(&w.shape), a));
        }
    }

    // coordinates the kernel cannot treat as OpenSim does
    for (i, c) in m.coordinates.iter().enumerate() {
        if c.clamped && !c.locked {
            entries.push(Entry::new(
                &c.place,
                &c.name,
                "Coordinate",
                format!(
                    "clamped to [{}, {}] in OpenSim: Mollier does not enforce the range",
                    num(c.range[0]),
                    num(c.range[1])
                ),
            ));
        }
        if let Some(k) = coupled.get(&i) {
            let cp = &m.couplers[*k];
            entries.push(Entry::new(
                &c.place,
                &c.name,
                "CoordinateCouplerConstraint",
                format!(
                    "`{}` sets it from `{}`: Mollier has no coupling between inputs, so its axes are inputs of their own; give them the coupled values (Import::inputs_from_coordinates)",
                    cp.name, m.coordinates[cp.independent].name
                ),
            ));
        } else if uses[i] > 1 || inputs.iter().any(|d| d.coordinate == i && !d.exact_name) {
            entries.push(Entry::new(
                &c.place,
                &c.name,
                "Coordinate",
                format!("drives {} axis(es) through functions: each axis is an input (the function's value minus its initial value); Mollier's kernel holds no function between them", uses[i]),
            ));
        }
    }

    // inputs in the order of the coordinates (a coordinate's axes in joint order)
    inputs.sort_by_key(|d| d.coordinate);

    // the file
    let mut s = String::new();
    let _ = writeln!(s, "# Mollier model imported from the OpenSim model `{}` ({file}) by `mollier import`.", m.name);
    let _ = writeln!(
        s,
        "# Units: m, rad, kg (SI). The initial configuration is OpenSim's default pose (every coordinate at its"
    );
    let _ = writeln!(
        s,
        "# default value). An input is the change of its axis from there: for an input named after a coordinate,"
    );
    let _ =
        writeln!(s, "# the coordinate minus its default value. The import report lists what is not imported exactly.");
    let _ = writeln!(s, "#\n# Coordinates (OpenSim): name, range, default, locked, clamped -> input");
    for (i, c) in m.coordinates.iter().enumerate() {
        let ins: Vec<&str> = inputs.iter().filter(|d| d.coordinate == i).map(|d| d.name.as_str()).collect();
        let _ = writeln!(
            s,
            "#   {}: [{}, {}], default {}{}{} -> {}",
            c.name,
            num(c.range[0]),
            num(c.range[1]),
            num(c.default),
            if c.locked { ", locked" } else { "" },
            if c.clamped { ", clamped" } else { "" },
            if ins.is_empty() { "held".into() } else { ins.join(", ") }
        );
    }
    s.push_str("\nformat_version = 1\n");
    let _ = writeln!(s, "name = {}", toml_string(&m.name));
    let _ = writeln!(s, "description = {}", toml_string(&format!("Imported from {file} by mollier import")));
    let _ = writeln!(s, "fixed = [\"{}\"]", body_names[0]);
    s.push_str(&list("inputs", &inputs.iter().map(|d| d.name.clone()).collect::<Vec<_>>()));
    s.push_str(&list("free", &free));
    let _ = writeln!(s, "gravity = {}\n", vec3(&m.gravity));
    if !nodes.is_empty() {
        s.push_str("# ---- massless nodes of the joints\n");
        s.push_str(&nodes);
    }
    s.push_str("# ---- bodies, at their poses in the initial configuration\n");
    let mut body_order = vec![0];
    body_order.extend(order.iter().map(|k| m.joints[*k].child.body));
    for b in body_order {
        let body = &m.bodies[b];
        let p = &pose[b];
        let _ = writeln!(
            s,
            "[bodies.{}]  # {} `{}` ({})",
            body_names[b],
            if b == 0 { "Ground" } else { "Body" },
            body.name,
            body.place
        );
        match child_origin.get(&b) {
            Some((o, note)) => {
                let _ = writeln!(s, "origin = {o}  # {note}");
            }
            None => {
                let _ = writeln!(s, "origin = {}", vec3(p.o.as_slice()));
            }
        }
        if b != 0 && p.r != Matrix3::identity() {
            let _ = writeln!(s, "orientation = {{ matrix = {} }}", matrix(&p.r));
        }
        write_mass(&mut s, body, &mut entries);
        let mut pts: Vec<(String, String, String)> = Vec::new();
        for (n, v) in child_points.get(&b).into_iter().flatten() {
            pts.push((points[b].names.claim(n), v.clone(), "joint centre, shared with the parent".into()));
        }
        pts.extend(points[b].list.iter().cloned());
        if !pts.is_empty() {
            let _ = writeln!(s, "[bodies.{}.points]", body_names[b]);
            for (n, v, c) in pts {
                let _ = writeln!(s, "{n} = {v}  # {c}");
            }
        }
        s.push('\n');
    }
    s.push_str(&elements);
    if !sharing.is_empty() {
        s.push_str("# ---- muscles for load sharing: PCSA = Fmax / specific tension; optimal length = tendon slack\n");
        s.push_str("# length + optimal fibre length x cos(pennation)\n[load_sharing]\n");
        let _ = writeln!(s, "specific_tension = {}  # N/cm^2", num(SPECIFIC_TENSION));
        s.push_str("[load_sharing.muscles]\n");
        s.push_str(&sharing);
    }
    Built { toml: s, inputs, body_names, muscle_names, q0, entries }
}

/// Whether the point `x` (global) is inside the shape at `centre` with axes `axes` in the body
/// at `body`.
fn inside(shape: &Shape, body: &Pose, centre: &[f64; 3], axes: &Matrix3<f64>, x: &Vector3<f64>) -> bool {
    let local = axes.transpose() * (body.r.transpose() * (x - body.o) - Vector3::from(*centre));
    match shape {
        Shape::Sphere(r) => local.norm() <= *r,
        Shape::Cylinder(r, l) => local.xy().norm() <= *r && local.z.abs() <= 0.5 * l,
        Shape::Ellipsoid(d) => (0..3).map(|k| (local[k] / d[k]).powi(2)).sum::<f64>() <= 1.0,
        Shape::Other(_) => false,
    }
}

/// Whether the straight line from `a` to `b` (global) passes through the shape (a cylinder's
/// axis taken as infinite, as OpenSim's own test of a line against a cylinder does), placed as
/// in [`inside`].
fn crosses(
    shape: &Shape,
    body: &Pose,
    centre: &[f64; 3],
    axes: &Matrix3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
) -> bool {
    let local = |x: &Vector3<f64>| axes.transpose() * (body.r.transpose() * (x - body.o) - Vector3::from(*centre));
    // in coordinates where the shape is the unit sphere (the unit disc for a cylinder)
    let unit = |v: Vector3<f64>| match shape {
        Shape::Sphere(r) => v / *r,
        Shape::Cylinder(r, _) => Vector3::new(v.x / r, v.y / r, 0.0),
        Shape::Ellipsoid(d) => Vector3::new(v.x / d[0], v.y / d[1], v.z / d[2]),
        Shape::Other(_) => Vector3::new(f64::INFINITY, 0.0, 0.0),
    };
    let (p, q) = (unit(local(a)), unit(local(b)));
    let d = q - p;
    let t = if d.norm_squared() > 0.0 { (-p.dot(&d) / d.norm_squared()).clamp(0.0, 1.0) } else { 0.0 };
    (p + d * t).norm() < 1.0
}

/// OpenSim's tag of a wrap object's shape.
fn wrap_tag(shape: &Shape) -> &str {
    match shape {
        Shape::Sphere(_) => "WrapSphere",
        Shape::Cylinder(..) => "WrapCylinder",
        Shape::Ellipsoid(_) => "WrapEllipsoid",
        Shape::Other(t) => t,
    }
}

/// N/cm²: PCSA (cm²) = maximal isometric force / this.
pub const SPECIFIC_TENSION: f64 = 100.0;

fn write_mass(s: &mut String, body: &crate::model::Body, entries: &mut Vec<Entry>) {
    if body.mass > 0.0 {
        let _ = writeln!(s, "mass = {}", num(body.mass));
        if body.com.iter().any(|v| *v != 0.0) {
            let _ = writeln!(s, "com = {}", vec3(&body.com));
        }
        if body.inertia.iter().any(|v| *v != 0.0) {
            if physical(&body.inertia) {
                let i = &body.inertia;
                let _ = writeln!(
                    s,
                    "inertia = [{}, {}, {}, {}, {}, {}]",
                    num(i[0]),
                    num(i[1]),
                    num(i[2]),
                    num(i[3]),
                    num(i[4]),
                    num(i[5])
                );
            } else {
                let i = &body.inertia;
                let _ = writeln!(s, "# inertia {:?} left out: not a rigid body's (see the import report)", i);
                entries.push(Entry::new(
                    &body.place,
                    &body.name,
                    "Body",
                    "inertia left out: its principal moments are negative or break the triangle inequality (a file that lists products of inertia where OpenSim expects tensor elements has this); kinematics does not need it",
                ));
            }
        }
    } else if body.mass < 0.0 || body.inertia.iter().any(|v| *v != 0.0) {
        entries.push(Entry::new(
            &body.place,
            &body.name,
            "Body",
            format!("mass {} is not positive: mass, centre of mass and inertia left out", num(body.mass)),
        ));
    }
}

fn toml_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn list(key: &str, items: &[String]) -> String {
    if items.is_empty() {
        return format!("{key} = []\n");
    }
    let mut s = format!("{key} = [\n");
    for chunk in items.chunks(4) {
        let q: Vec<String> = chunk.iter().map(|i| format!("\"{i}\"")).collect();
        let _ = writeln!(s, "    {},", q.join(", "));
    }
    s.push_str("]\n");
    s
}
