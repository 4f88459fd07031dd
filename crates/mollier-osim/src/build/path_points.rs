//! A muscle's path points: fixed ones as points of their bodies; `MovingPathPoint`s and
//! `ConditionalPathPoint`s as nodes placed by `path-point` elements that follow their coordinate
//! (docs/theory/path-point.md); what cannot be followed exactly goes to the report.

use nalgebra::Vector3;
use toml_edit::Value;

use super::doc::{self, float, num, text, vec3};
use super::{Ctx, Out};
use crate::function::Function;
use crate::model::{Muscle, PathPoint, PointKind};
use crate::report::Entry;

/// A path point kept: its index in the `.osim` path (0-based), the point, where it is on its
/// body in the initial configuration, and its reference in the model file.
pub(super) type Kept<'a> = (usize, &'a PathPoint, [f64; 3], String);

/// How one point is written.
enum Plan<'a> {
    /// A point of its body at this location.
    Fixed([f64; 3]),
    /// A node moved by `path-point` with the coordinate's input (`element.mode`) and its slope.
    Moving(&'a [Option<(usize, Function)>; 3], usize, String, f64),
    /// A node on the path only while its coordinate is in the range.
    Conditional(usize, [f64; 2], String, f64),
}

/// The input (`element.mode`) that is a linear function of coordinate `c`, and its slope: then
/// `q = q0 + input / slope`. `None` when the coordinate has no such input (locked, or every axis
/// a nonlinear function of it).
fn coordinate_input(out: &Out, c: usize) -> Option<(String, f64)> {
    out.inputs.iter().find_map(|d| match d.function {
        Function::Linear { slope, .. } if d.coordinate == c && slope != 0.0 => Some((d.name.clone(), slope)),
        _ => None,
    })
}

/// The muscle's points that are ever in its path, written as body points or nodes with their
/// `path-point` elements; notes on the muscle go to `notes`, approximations to the report.
pub(super) fn path_points<'a>(ctx: &Ctx, mu: &'a Muscle, notes: &mut Vec<String>, out: &mut Out) -> Vec<Kept<'a>> {
    let m = ctx.m;
    let mut plans: Vec<(usize, &PathPoint, Plan)> = Vec::new();
    for (index, p) in mu.points.iter().enumerate() {
        let plan = match &p.kind {
            PointKind::Fixed => Plan::Fixed(p.location),
            PointKind::Conditional(c, r) => {
                let (cr, cname) = (m.coordinates[*c].range, &m.coordinates[*c].name);
                let input = coordinate_input(out, *c);
                let q0 = ctx.q0[*c];
                if cr[0] >= r[0] && cr[1] <= r[1] {
                    notes.push(format!("conditional point `{}` is active over `{cname}`'s whole range: kept", p.name));
                    Plan::Fixed(p.location)
                } else if cr[1] < r[0]
                    || cr[0] > r[1]
                    || !(r[0] <= r[1])
                    || (input.is_none() && !(r[0] <= q0 && q0 <= r[1]))
                {
                    let action = format!("left out: never active within `{cname}`'s range");
                    out.entries.push(Entry::new(&p.place, &p.name, "ConditionalPathPoint", action));
                    continue;
                } else if let Some((name, slope)) = input {
                    Plan::Conditional(*c, *r, name, slope)
                } else {
                    // locked at its default, where the point is active
                    Plan::Fixed(p.location)
                }
            }
            PointKind::Moving(fs) => {
                let at = [0, 1, 2].map(|k| fs[k].as_ref().map_or(0.0, |(c, f)| f.value(ctx.q0[*c])));
                let moving: Vec<usize> =
                    fs.iter().flatten().filter(|(_, f)| f.constant().is_none()).map(|(c, _)| *c).collect();
                match moving.first() {
                    None => Plan::Fixed(at),
                    Some(c) if moving.iter().all(|k| k == c) => match coordinate_input(out, *c) {
                        Some((name, slope)) => Plan::Moving(fs, *c, name, slope),
                        // a locked coordinate stays at its default
                        None => Plan::Fixed(at),
                    },
                    Some(_) => {
                        frozen(ctx, p, fs, out);
                        Plan::Fixed(at)
                    }
                }
            }
        };
        plans.push((index, p, plan));
    }
    // a conditional first or last point would move the path's end: kept at all times
    let n = plans.len();
    for k in [0, n.saturating_sub(1)] {
        if let Some((_, p, plan @ Plan::Conditional(..))) = plans.get_mut(k) {
            let Plan::Conditional(c, r, ..) = plan else { unreachable!() };
            out.entries.push(Entry::new(
                &p.place,
                &p.name,
                "ConditionalPathPoint",
                format!(
                    "approximated: kept at all times, being an end of the path; OpenSim uses it only while `{}` is in [{}, {}]",
                    m.coordinates[*c].name,
                    num(r[0]),
                    num(r[1])
                ),
            ));
            *plan = Plan::Fixed(p.location);
        }
    }
    let global = initial_places(ctx, &plans);
    // names first: a conditional point names its neighbours
    let refs: Vec<String> = plans
        .iter()
        .zip(&global)
        .map(|((_, p, plan), g)| {
            let want = if p.name.starts_with(&mu.name) { p.name.clone() } else { format!("{}-{}", mu.name, p.name) };
            let what = format!("muscle `{}`", mu.name);
            match plan {
                Plan::Fixed(loc) => {
                    let pt = out.points[p.body].add(&want, vec3(loc), what);
                    format!("{}.{pt}", out.body_names[p.body])
                }
                _ => {
                    let node = out.top.claim(&want);
                    let note = format!("{what}: placed by `{node}_place`");
                    out.nodes
                        .push((node.clone(), doc::table(&[], Some(&note), vec![("position", vec3(g.as_slice()))])));
                    node
                }
            }
        })
        .collect();
    for (k, (_, p, plan)) in plans.iter().enumerate() {
        let (c, input, slope) = match plan {
            Plan::Fixed(_) => continue,
            Plan::Moving(_, c, i, s) | Plan::Conditional(c, _, i, s) => (*c, i, *s),
        };
        let mut entries: Vec<(&str, Value)> = vec![
            ("type", text("path-point")),
            ("point", text(&refs[k])),
            ("body", text(&out.body_names[p.body])),
            ("coordinate", text(input)),
            ("at", float(ctx.q0[c])),
        ];
        if slope != 1.0 {
            entries.push(("scale", float(1.0 / slope)));
        }
        let kind = match plan {
            Plan::Moving(fs, ..) => {
                let f =
                    |k: usize| fs[k].as_ref().map_or(doc::inline(vec![("constant", float(0.0))]), |(_, f)| function(f));
                entries.push(("moving", Value::Array([f(0), f(1), f(2)].into_iter().collect())));
                "MovingPathPoint"
            }
            Plan::Conditional(_, r, ..) => {
                entries.push(("location", vec3(&p.location)));
                entries.push(("active", Value::Array([float(r[0]), float(r[1])].into_iter().collect())));
                let after = after_inactive(&plans, k);
                entries.push(("between", Value::Array([text(&refs[k - 1]), text(&refs[after])].into_iter().collect())));
                "ConditionalPathPoint"
            }
            Plan::Fixed(_) => unreachable!(),
        };
        let note = format!("{kind} `{}` of `{}` ({}), following `{}`", p.name, mu.name, p.place, m.coordinates[c].name);
        let name = out.top.claim(&format!("{}_place", refs[k]));
        out.element(name, Some(&note), entries);
    }
    plans
        .into_iter()
        .zip(global)
        .zip(refs)
        .map(|(((index, p, _), g), r)| {
            let pose = &ctx.pose[p.body];
            let local = pose.r.transpose() * (g - pose.o);
            (index, p, [local.x, local.y, local.z], r)
        })
        .collect()
}

/// Where each planned point is in the initial configuration (global, m): a conditional point
/// inactive there lies midway between its neighbours, so a run of them divides the stretch
/// between the active points around it evenly.
fn initial_places(ctx: &Ctx, plans: &[(usize, &PathPoint, Plan)]) -> Vec<Vector3<f64>> {
    let on_body = |p: &PathPoint, loc: &[f64; 3]| ctx.pose[p.body].point(loc);
    let mut g: Vec<Option<Vector3<f64>>> = plans
        .iter()
        .map(|(_, p, plan)| match plan {
            Plan::Fixed(loc) => Some(on_body(p, loc)),
            Plan::Moving(fs, ..) => {
                Some(on_body(p, &[0, 1, 2].map(|k| fs[k].as_ref().map_or(0.0, |(c, f)| f.value(ctx.q0[*c])))))
            }
            Plan::Conditional(c, r, ..) => {
                let q = ctx.q0[*c];
                (r[0] <= q && q <= r[1]).then(|| on_body(p, &p.location))
            }
        })
        .collect();
    let mut k = 0;
    while k < g.len() {
        if g[k].is_some() {
            k += 1;
            continue;
        }
        // the run k..e of inactive points, between active ends (the path's ends are never in it)
        let e = (k..g.len()).find(|&i| g[i].is_some()).unwrap_or(g.len());
        let (a, b) = (g[k - 1].unwrap_or_default(), g.get(e).copied().flatten().unwrap_or_default());
        let steps = (e - k + 1) as f64;
        for i in k..e {
            g[i] = Some(a + (b - a) * ((i - k + 1) as f64 / steps));
        }
        k = e;
    }
    let mut g: Vec<Vector3<f64>> = g.into_iter().map(Option::unwrap_or_default).collect();
    // each inactive point midway toward the point its element names (`after_inactive`): where
    // that skips a point, the run is not evenly spaced; the midpoints' chain converges by at
    // least a half a sweep
    let inactive: Vec<usize> = (0..g.len()).filter(|&k| !active_at(ctx, &plans[k].2)).collect();
    for _ in 0..200 {
        let mut change = 0.0f64;
        for &k in &inactive {
            let m = (g[k - 1] + g[after_inactive(plans, k)]) / 2.0;
            change = change.max((m - g[k]).norm());
            g[k] = m;
        }
        if change == 0.0 {
            break;
        }
    }
    g
}

/// Whether a point is on the path in the default pose.
fn active_at(ctx: &Ctx, plan: &Plan<'_>) -> bool {
    match plan {
        Plan::Conditional(c, r, ..) => r[0] <= ctx.q0[*c] && ctx.q0[*c] <= r[1],
        _ => true,
    }
}

/// A function of the coordinate as the model file writes it (a multiplier folded in).
fn function(f: &Function) -> Value {
    fn scaled(f: &Function, s: f64) -> Value {
        let list = |v: &[f64]| Value::Array(v.iter().map(|x| float(s * x)).collect());
        match f {
            Function::Constant(v) => doc::inline(vec![("constant", float(s * v))]),
            Function::Linear { slope, intercept } => doc::inline(vec![("linear", list(&[*slope, *intercept]))]),
            Function::Polynomial(c) => doc::inline(vec![("polynomial", list(c))]),
            Function::Spline(sp) => {
                let (x, y) = sp.knots();
                let knots = Value::Array(x.iter().map(|v| float(*v)).collect());
                doc::inline(vec![("knots", knots), ("values", list(y))])
            }
            Function::Multiplier(k, g) => scaled(g, s * k),
        }
    }
    scaled(f, 1.0)
}

/// A moving point whose components follow different coordinates: fixed where it is in the
/// initial configuration, reported with how far it moves.
fn frozen(ctx: &Ctx, p: &PathPoint, fs: &[Option<(usize, Function)>; 3], out: &mut Out) {
    let at = |q: &[f64]| [0, 1, 2].map(|k| fs[k].as_ref().map_or(0.0, |(c, f)| f.value(q[*c])));
    let loc = at(&ctx.q0);
    let mut worst: f64 = 0.0;
    for (c, _) in fs.iter().flatten() {
        let r = ctx.m.coordinates[*c].range;
        let (lo, hi) = (r[0].max(-10.0), r[1].min(10.0));
        for s in 0..=200 {
            let mut q = ctx.q0.clone();
            q[*c] = lo + (hi - lo) * s as f64 / 200.0;
            let l = at(&q);
            worst = worst.max((0..3).map(|k| (l[k] - loc[k]).powi(2)).sum::<f64>().sqrt());
        }
    }
    out.entries.push(Entry::new(
        &p.place,
        &p.name,
        "MovingPathPoint",
        format!(
            "approximated: its components follow different coordinates, which a path-point cannot: fixed where it is in the initial configuration; it moves up to {:.3} mm from there over their ranges",
            worst * 1e3
        ),
    ));
}

/// The point a conditional point `k` sits toward while it is inactive: the next one on the
/// path, or past the conditional points after it on the same coordinate whose ranges lie inside
/// its own (inactive whenever it is: off OpenSim's path with it). Two such points then never
/// name each other, so the tree path places them in closed form; the path's length is the
/// same, every one of them on the segment that OpenSim's path takes.
fn after_inactive(plans: &[(usize, &PathPoint, Plan<'_>)], k: usize) -> usize {
    let Plan::Conditional(c, r, ..) = &plans[k].2 else { return k + 1 };
    let mut a = k + 1;
    while a + 1 < plans.len() {
        match &plans[a].2 {
            Plan::Conditional(ca, ra, ..) if ca == c && r[0] <= ra[0] && ra[1] <= r[1] => a += 1,
            _ => break,
        }
    }
    a
}
