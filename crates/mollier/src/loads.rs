//! Time-varying external loads on bodies: force plates, a weight in the hand, a push.
//!
//! A load file is either
//!
//! - a table (CSV, or OpenSim's `.mot`/`.sto`) with a `time` column and columns named after
//!   where each load acts: `<at>.fx`, `.fy`, `.fz` a force (N, global frame) at `at`, a body's
//!   name (its origin) or `body.point`; `<at>.mx`, `.my`, `.mz` a moment (N m, global frame) on
//!   the body of `at`; `<body>.px`, `.py`, `.pz` the force's point of application (m, global
//!   frame), for a body only. A unit in brackets (`hand.grip.fy [N]`, `calcn_r.px [mm]`) is
//!   converted; every other column is refused, so that a misspelt load is not dropped. One row
//!   is a constant load;
//! - OpenSim's `ExternalLoads` XML, read as OpenSim's tools read it: each enabled
//!   `ExternalForce` names `applied_to_body`, the columns of its force, point and torque by
//!   their prefixes (`force_identifier` `ground_force_v` for `ground_force_vx`, `..vy`, `..vz`),
//!   and the bodies whose axes they are expressed in (`force_expressed_in_body`, which also
//!   holds for the torque, and `point_expressed_in_body`; `ground` is the global frame); the
//!   table is the XML's `datafile`, relative to the XML's folder.
//!
//! Between rows the columns are interpolated by cubic splines (OpenSim's `ExternalForce` uses
//! interpolating cubic splines too); a run whose times leave the table's is refused. A force at
//! a point `p` (global) on body `B` is applied as the force at `B`'s origin `o` and the moment
//! `(p − o) × F`, with the configuration of the frame, so a point that moves over the ground (a
//! centre of pressure) acts where it is at each instant.

use std::path::Path;

use faer::Mat;
use mollier_core::geometry::{Quat, Vec3, add, cross, g_matrix, lift, quat_at, rotate, sub, vec3_at};
use mollier_core::scalar::Real;
use mollier_core::{Data, Load, Model, NodeId};
use mollier_format::{Diagnostic, Diagnostics};
use mollier_sim::ExternalForcing;
use num_dual::Dual64;

use crate::compile::Compiled;
use crate::motion::{Table, any_table, at, split_unit};
use crate::spline::Knots;

/// A triple of a table's columns (x, y, z) and the factor to SI of their unit.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Triple {
    cols: [usize; 3],
    factor: f64,
}

/// The frame a vector of the table is expressed in: the global frame, or a body's axes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Axes {
    Global,
    Body(usize),
}

/// One load: a force (at a point of a body, or at a given point), a torque, or both.
#[derive(Clone, Debug, PartialEq)]
struct Applied {
    /// The body (index in [`Compiled::bodies`]).
    body: usize,
    /// The node the force acts at when it is fixed in the body (`body.point`, or the origin
    /// without a point column).
    at: NodeId,
    force: Option<Triple>,
    /// The point of application, when given per row.
    point: Option<Triple>,
    torque: Option<Triple>,
    /// The axes of the force and the torque.
    force_in: Axes,
    /// The axes (and origin) of the point.
    point_in: Axes,
}

impl Applied {
    /// The node the force acts at: the body's origin `origin` when the point of application
    /// is given per row (the moment about it is added), else the node the load names.
    fn force_node(&self, origin: NodeId) -> NodeId {
        if self.point.is_some() { origin } else { self.at }
    }
}

/// External loads read from a file, resolved against one compiled model.
#[derive(Clone, Debug, PartialEq)]
pub struct ExternalLoads {
    /// The file, as named (the XML for OpenSim's external loads).
    pub file: String,
    /// The times of the table's rows (s).
    times: Vec<f64>,
    /// Every used column's values at the rows and first derivatives (the spline), in SI.
    values: Vec<Vec<f64>>,
    slopes: Vec<Vec<f64>>,
    applied: Vec<Applied>,
    /// The loads' names (`<at>` or the `ExternalForce`'s name), in the order they act.
    pub names: Vec<String>,
}

impl ExternalLoads {
    /// Read a load file for a model: OpenSim's `ExternalLoads` XML when it ends in `.xml`, else a
    /// table (see the module's documentation).
    pub fn read(path: &Path, compiled: &Compiled) -> Result<Self, Diagnostics> {
        let file = path.display().to_string();
        let text = mollier_format::read_text(path, "load file")?;
        if is_xml(&file) {
            let dir = path.parent().unwrap_or(Path::new(""));
            parse_xml(&file, &text, compiled, &|name: &str| {
                let p = dir.join(name);
                let text = mollier_format::read_text(&p, "load table")?;
                Ok((p.display().to_string(), text))
            })
        } else {
            parse_table(&file, &text, compiled)
        }
    }

    /// Parse a load table's text (CSV, or `.mot`/`.sto` by the name's extension).
    pub fn parse(file: &str, text: &str, compiled: &Compiled) -> Result<Self, Diagnostics> {
        parse_table(file, text, compiled)
    }

    /// The first and last time of the table (s); equal for a constant load.
    pub fn span(&self) -> (f64, f64) {
        (self.times[0], self.times[self.times.len() - 1])
    }

    /// Refuse a run from `first` to `last` (s) that leaves the table's times (a one-row table
    /// holds at all times): an error to show after the load file's name.
    pub fn check_times(&self, first: f64, last: f64) -> Result<(), String> {
        let (a, b) = self.span();
        let tol = 1e-9 * (1.0 + a.abs().max(b.abs()));
        if self.times.len() == 1 || (first >= a - tol && last <= b + tol) {
            return Ok(());
        }
        Err(format!("the loads are given from {a} s to {b} s, the run goes from {first} s to {last} s"))
    }

    /// `true` when some load needs the configuration: a point of application in the table, or a
    /// vector in a body's axes.
    pub fn needs_configuration(&self) -> bool {
        self.applied.iter().any(|a| a.point.is_some() || a.force_in != Axes::Global || a.point_in != Axes::Global)
    }

    /// Column `c`'s value at time `t` (the interpolating cubic, Hermite form on its interval;
    /// held at the ends).
    fn value(&self, c: usize, t: f64) -> f64 {
        let (ts, y, d) = (&self.times, &self.values[c], &self.slopes[c]);
        let n = ts.len();
        if n == 1 || t <= ts[0] {
            return y[0];
        }
        if t >= ts[n - 1] {
            return y[n - 1];
        }
        let i = ts.partition_point(|&s| s <= t) - 1;
        let h = ts[i + 1] - ts[i];
        let s = (t - ts[i]) / h;
        let (s2, s3) = (s * s, s * s * s);
        (2.0 * s3 - 3.0 * s2 + 1.0) * y[i]
            + (s3 - 2.0 * s2 + s) * h * d[i]
            + (-2.0 * s3 + 3.0 * s2) * y[i + 1]
            + (s3 - s2) * h * d[i + 1]
    }

    fn triple(&self, tr: &Triple, t: f64) -> [f64; 3] {
        tr.cols.map(|c| self.value(c, t) * tr.factor)
    }

    /// The loads at time `t` (s) in the configuration solved in `data`, as the kernel takes them
    /// (global frame), into `out` (cleared first).
    pub fn at(&self, compiled: &Compiled, data: &Data, t: f64, out: &mut Vec<Load>) {
        out.clear();
        let model = &compiled.model;
        let pos = |n: NodeId| data.position(model, n);
        let quat = |n: NodeId| data.orientation(model, n);
        for a in &self.applied {
            let frame = compiled.bodies[a.body].frame;
            let (force, moment) = self.vectors(compiled, a, t, &pos, &quat);
            if let Some(force) = force {
                out.push(Load::Force { node: a.force_node(frame.position), force });
            }
            if let Some(moment) = moment {
                out.push(Load::Moment { node: frame.orientation, moment });
            }
        }
    }

    /// Load `a`'s force and moment at time `t` (s, global frame), the nodes' positions and Euler
    /// parameters read by `pos` and `quat`: the force acts at [`Applied::force_node`], the moment
    /// (the torque, and with a point of application `p` the moment `(p − o) × F` about the
    /// body's origin `o`) on the body. Generic so that [`Self::add_partials`] differentiates the
    /// very same expressions with dual numbers.
    fn vectors<T: Real>(
        &self,
        compiled: &Compiled,
        a: &Applied,
        t: f64,
        pos: &dyn Fn(NodeId) -> Vec3<T>,
        quat: &dyn Fn(NodeId) -> Quat<T>,
    ) -> (Option<Vec3<T>>, Option<Vec3<T>>) {
        let frame = |b: usize| compiled.bodies[b].frame;
        let in_axes = |v: [f64; 3], axes: Axes| match axes {
            Axes::Global => lift(&v),
            Axes::Body(b) => rotate(&quat(frame(b).orientation), &lift(&v)),
        };
        let force = a.force.map(|tr| in_axes(self.triple(&tr, t), a.force_in));
        let mut moment = a.torque.map(|tr| in_axes(self.triple(&tr, t), a.force_in));
        if let (Some(f), Some(p)) = (force, &a.point) {
            let local = self.triple(p, t);
            let point = match a.point_in {
                Axes::Global => lift(&local),
                Axes::Body(b) => add(&pos(frame(b).position), &in_axes(local, a.point_in)),
            };
            let m = cross(&sub(&point, &pos(frame(a.body).position)), &f);
            moment = Some(match moment {
                Some(t) => add(&t, &m),
                None => m,
            });
        }
        (force, moment)
    }

    /// Add to `d_q` (n_q x n_q, the partial of the equations of motion's residual, where the
    /// loads enter as `− DF_xᵀ f`) the part that comes from the loads' values depending on the
    /// configuration: a point of application fixed in space (its moment about the moving
    /// origin), vectors in a body's axes. `− DF_nᵀ ∂F/∂z DF_z − DF_λᵀ 2G(λ)ᵀ ∂M/∂z DF_z`, `z` the
    /// coordinates of the frames the load reads, `∂/∂z` exact by dual numbers. The loads'
    /// moving with their nodes (`D²F_x` weighted by them, `G(λ)`'s own change) is the kernel's
    /// ([`mollier_core::linearize::linearize_motion_loaded`]). `data` holds the configuration
    /// and `DF_x`.
    pub fn add_partials(&self, compiled: &Compiled, data: &Data, t: f64, d_q: &mut Mat<f64>) {
        let model = &compiled.model;
        let (nq, df) = (model.n_q(), data.df_x());
        let offset = |n: NodeId| model.nodes()[n.index()].offset;
        for a in self.applied.iter().filter(|a| a.point.is_some() || a.force_in != Axes::Global) {
            let frame = compiled.bodies[a.body].frame;
            // the frames read: (node, 3 or 4 coordinates), each once
            let mut nodes = vec![(frame.position, 3), (frame.orientation, 4)];
            for axes in [a.force_in, a.point_in] {
                if let Axes::Body(b) = axes {
                    let f = compiled.bodies[b].frame;
                    nodes.extend([(f.position, 3), (f.orientation, 4)]);
                }
            }
            let mut seen = Vec::new();
            nodes.retain(|(n, _)| {
                !seen.contains(n) && {
                    seen.push(*n);
                    true
                }
            });
            let coords: Vec<usize> = nodes.iter().flat_map(|&(n, len)| offset(n)..offset(n) + len).collect();
            let start = |n: NodeId| {
                let i = nodes.iter().position(|(m, _)| *m == n).expect("a node the load reads");
                nodes[..i].iter().map(|(_, len)| len).sum::<usize>()
            };
            // ∂F/∂z and ∂M/∂z (3 x n_z each, column j the derivative along z_j)
            let mut jac = vec![[[0.0; 3]; 2]; coords.len()];
            let x = data.x();
            for (j, col) in jac.iter_mut().enumerate() {
                let z: Vec<Dual64> = coords
                    .iter()
                    .enumerate()
                    .map(|(i, &c)| if i == j { Dual64::new(x[c], 1.0) } else { Dual64::from(x[c]) })
                    .collect();
                let pos = |n: NodeId| vec3_at(&z, start(n));
                let quat = |n: NodeId| quat_at(&z, start(n));
                let (f, m) = self.vectors(compiled, a, t, &pos, &quat);
                col[0] = f.map_or([0.0; 3], |f| f.map(|v| v.eps));
                col[1] = m.map_or([0.0; 3], |m| m.map(|v| v.eps));
            }
            let (fo, lo) = (offset(a.force_node(frame.position)), offset(frame.orientation));
            let g = g_matrix(&quat_at(x, lo));
            for k in 0..nq {
                let (mut dfz, mut dmz) = ([0.0; 3], [0.0; 3]);
                for (col, &c) in jac.iter().zip(&coords) {
                    let dz = df[(c, k)];
                    for a in 0..3 {
                        dfz[a] += col[0][a] * dz;
                        dmz[a] += col[1][a] * dz;
                    }
                }
                let gm: [f64; 4] = [0, 1, 2, 3].map(|c| 2.0 * (0..3).map(|i| g[i][c] * dmz[i]).sum::<f64>());
                for i in 0..nq {
                    let on_force: f64 = (0..3).map(|a| df[(fo + a, i)] * dfz[a]).sum();
                    let on_moment: f64 = (0..4).map(|c| df[(lo + c, i)] * gm[c]).sum();
                    d_q[(i, k)] -= on_force + on_moment;
                }
            }
        }
    }

    /// These loads acting on `compiled` in a forward simulation ([`mollier_sim`]).
    pub fn forcing<'a>(&self, compiled: &'a Compiled) -> Forcing<'a> {
        Forcing { loads: self.clone(), compiled }
    }

    /// The loads of every frame of a motion (its times and `q`, n_q each in the model's input
    /// order): solved frame by frame from the last when a load needs the configuration, else
    /// without a solve. A frame that cannot be solved gets no loads (the analysis then reports
    /// it itself).
    pub fn over_motion<'q>(
        &self,
        compiled: &Compiled,
        frames: impl IntoIterator<Item = (f64, &'q [f64])>,
    ) -> Vec<Vec<Load>> {
        let model = &compiled.model;
        let mut data = Data::new(model);
        let solve = self.needs_configuration();
        frames
            .into_iter()
            .map(|(t, q)| {
                let mut loads = Vec::new();
                if solve && mollier_core::solve_positions(model, &mut data, q).is_err() {
                    data.reset(model);
                    return loads;
                }
                self.at(compiled, &data, t, &mut loads);
                loads
            })
            .collect()
    }
}

/// External loads acting on a model in a forward simulation: [`ExternalLoads::at`] and
/// [`ExternalLoads::add_partials`] behind [`mollier_sim::ExternalForcing`].
#[derive(Debug)]
pub struct Forcing<'a> {
    /// The loads.
    pub loads: ExternalLoads,
    compiled: &'a Compiled,
}

impl ExternalForcing for Forcing<'_> {
    fn loads(&self, _: &Model, data: &Data, t: f64, out: &mut Vec<Load>) {
        self.loads.at(self.compiled, data, t, out);
    }

    fn add_partials(&self, _: &Model, data: &Data, t: f64, d_q: &mut Mat<f64>) {
        self.loads.add_partials(self.compiled, data, t, d_q);
    }
}

fn is_xml(file: &str) -> bool {
    Path::new(file).extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case("xml"))
}

/// The body named `name` (index in [`Compiled::bodies`]).
fn body_index(compiled: &Compiled, name: &str) -> Option<usize> {
    compiled.bodies.iter().position(|b| b.name == name)
}

/// A list of the model's bodies for a hint (the first few).
fn bodies_hint(compiled: &Compiled) -> String {
    let names: Vec<&str> = compiled.bodies.iter().map(|b| b.name.as_str()).take(12).collect();
    let more = if compiled.bodies.len() > names.len() { ", ..." } else { "" };
    format!("the model's bodies: {}{more}", names.join(", "))
}

/// A table's values in SI, column by column: times and the used columns' rows, each checked.
struct Columns {
    times: Vec<f64>,
    values: Vec<Vec<f64>>,
}

/// Read the `time` column and the columns `used` of a table, located problems otherwise.
fn read_columns(file: &str, text: &str, t: &Table, used: &[usize]) -> Result<Columns, Box<Diagnostic>> {
    let hdr = |m: String, h: &str| at(file, text, t.header_at, "", m, h);
    let Some(time_col) = t.header.iter().position(|h| h.trim().eq_ignore_ascii_case("time")) else {
        return Err(hdr("no `time` column".into(), "the first column is the time of each row, in s"));
    };
    let mut times = Vec::with_capacity(t.rows.len());
    let mut values = vec![Vec::with_capacity(t.rows.len()); used.len()];
    for (offset, row) in &t.rows {
        if row.len() != t.header.len() {
            return Err(at(
                file,
                text,
                *offset,
                "",
                format!("{} values for {} columns", row.len(), t.header.len()),
                "give one value per column",
            ));
        }
        let cell = |c: usize| -> Result<f64, Box<Diagnostic>> {
            match row[c].parse::<f64>() {
                Ok(v) if v.is_finite() && v.abs() <= mollier_format::MAX_MAGNITUDE => Ok(v),
                _ => Err(at(
                    file,
                    text,
                    t.cell_offset(text, *offset, c),
                    &t.header[c],
                    format!("not a finite number: `{}`", &row[c]),
                    "write numbers like 0.25 or -1.5e-3; a load that is absent is 0",
                )),
            }
        };
        let time = cell(time_col)?;
        if let Some(&prev) = times.last() {
            if !(time > prev) {
                return Err(at(
                    file,
                    text,
                    t.cell_offset(text, *offset, time_col),
                    "time",
                    format!("time does not increase ({time} after {prev})"),
                    "each row is one instant: sort the rows and remove repeated times",
                ));
            }
        }
        times.push(time);
        for (v, &c) in values.iter_mut().zip(used) {
            v.push(cell(c)?);
        }
    }
    if times.is_empty() {
        return Err(hdr("the load table has no rows".into(), "add one row of values per instant after the header"));
    }
    Ok(Columns { times, values })
}

/// Fit the splines and assemble the loads.
fn assemble(
    file: &str,
    columns: Columns,
    applied: Vec<Applied>,
    names: Vec<String>,
) -> Result<ExternalLoads, Diagnostics> {
    let knots = Knots::new(&columns.times)
        .map_err(|e| Diagnostics::one(Diagnostic::new(file, "time", format!("the load table's times: {e}"))))?;
    let mut slopes = Vec::with_capacity(columns.values.len());
    for v in &columns.values {
        let fit = knots
            .interpolate(v)
            .map_err(|e| Diagnostics::one(Diagnostic::new(file, "", format!("cannot interpolate the loads: {e}"))))?;
        slopes.push(fit.d1);
    }
    Ok(ExternalLoads { file: file.to_string(), times: columns.times, values: columns.values, slopes, applied, names })
}

/// The components of a table column's name: `<at>.<kind><axis>`, kind `f`, `m` or `p`.
fn component(name: &str) -> Option<(&str, char, usize)> {
    let (at, c) = name.rsplit_once('.')?;
    let mut ch = c.chars();
    let (kind, axis) = (ch.next()?, ch.next()?);
    if ch.next().is_some() || !matches!(kind, 'f' | 'm' | 'p') {
        return None;
    }
    let axis = "xyz".find(axis)?;
    Some((at, kind, axis))
}

/// SI per unit of `unit` for a column of this kind; `None` if it does not fit.
fn unit_factor(kind: char, unit: Option<&str>) -> Option<f64> {
    match (kind, unit) {
        (_, None) | ('f', Some("N")) | ('m', Some("N m" | "Nm")) | ('p', Some("m")) => Some(1.0),
        ('m', Some("N mm" | "Nmm")) | ('p', Some("mm")) => Some(1e-3),
        ('p', Some("cm")) => Some(1e-2),
        _ => None,
    }
}

/// A load table with columns named after where the loads act.
fn parse_table(file: &str, text: &str, compiled: &Compiled) -> Result<ExternalLoads, Diagnostics> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let t = any_table(file, text)?;
    let hdr = |m: String, h: String| Diagnostics::one(*at(file, text, t.header_at, "", m, h));
    // per `at`, in the order of first appearance: its triples' columns and factors
    struct Group {
        at: String,
        cols: [[Option<usize>; 3]; 3],
        factor: [Option<f64>; 3],
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut used = Vec::new();
    for (c, h) in t.header.iter().enumerate() {
        let (name, unit) = split_unit(h.trim());
        if name.eq_ignore_ascii_case("time") {
            continue;
        }
        let Some((at_name, kind, axis)) = component(name) else {
            return Err(hdr(
                format!("column `{name}` is not a load component"),
                "name load columns `<body or body.point>.fx` (.fy, .fz: force, N), `.mx` (moment, N m) or \
                 `<body>.px` (point of application, m), global frame"
                    .into(),
            ));
        };
        let k = "fmp".find(kind).unwrap_or(0);
        let Some(factor) = unit_factor(kind, unit) else {
            let units = ["`N`", "`N m` or `N mm`", "`m`, `cm` or `mm`"][k];
            return Err(hdr(
                format!("column `{name}`: unit `{}` does not fit", unit.unwrap_or("")),
                format!("units: {units}"),
            ));
        };
        let g = match groups.iter().position(|g| g.at == at_name) {
            Some(i) => &mut groups[i],
            None => {
                groups.push(Group { at: at_name.to_string(), cols: [[None; 3]; 3], factor: [None; 3] });
                groups.last_mut().expect("just pushed")
            }
        };
        if g.cols[k][axis].is_some() {
            return Err(hdr(format!("column `{name}` appears twice"), "delete one of them".into()));
        }
        if g.factor[k].is_some_and(|f| f != factor) {
            return Err(hdr(
                format!("column `{name}`: a unit other than its siblings'"),
                "give x, y and z one unit".into(),
            ));
        }
        g.factor[k] = Some(factor);
        g.cols[k][axis] = Some(used.len());
        used.push(c);
    }
    if groups.is_empty() {
        return Err(hdr("the table names no load".into(), "add columns such as `hand.grip.fy` (N)".into()));
    }
    let mut applied = Vec::new();
    for g in &groups {
        let whole = |k: usize| -> Result<Option<Triple>, Diagnostics> {
            match g.cols[k] {
                [None, None, None] => Ok(None),
                [Some(x), Some(y), Some(z)] => Ok(Some(Triple { cols: [x, y, z], factor: g.factor[k].unwrap_or(1.0) })),
                _ => {
                    let kind = ["f", "m", "p"][k];
                    Err(hdr(
                        format!("`{}` has some of `.{kind}x`, `.{kind}y`, `.{kind}z` but not all", g.at),
                        "give all three components (0 for none)".into(),
                    ))
                }
            }
        };
        let (body, node) = if let Some(b) = body_index(compiled, &g.at) {
            (b, compiled.bodies[b].frame.position)
        } else {
            let body = g.at.split_once('.').and_then(|(b, _)| body_index(compiled, b));
            let node = compiled.points.iter().find(|p| p.name == g.at).map(|p| p.node);
            match (body, node) {
                (Some(b), Some(n)) => (b, n),
                _ => {
                    return Err(hdr(
                        format!("`{}` is not a body or a body's point of the model", g.at),
                        bodies_hint(compiled),
                    ));
                }
            }
        };
        let (force, torque, point) = (whole(0)?, whole(1)?, whole(2)?);
        if point.is_some() && node != compiled.bodies[body].frame.position {
            return Err(hdr(
                format!("`{}` is a point of a body: it cannot have a point of application too", g.at),
                format!("give the point columns on the body: `{}.px`", compiled.bodies[body].name),
            ));
        }
        if point.is_some() && force.is_none() {
            return Err(hdr(
                format!("`{}` has a point of application but no force", g.at),
                "add `.fx`, `.fy`, `.fz`".into(),
            ));
        }
        applied.push(Applied { body, at: node, force, point, torque, force_in: Axes::Global, point_in: Axes::Global });
    }
    let columns = read_columns(file, text, &t, &used).map_err(|d| Diagnostics::one(*d))?;
    let names = groups.into_iter().map(|g| g.at).collect();
    assemble(file, columns, applied, names)
}

/// The child element `tag` of `n`.
fn child<'a, 'i>(n: roxmltree::Node<'a, 'i>, tag: &str) -> Option<roxmltree::Node<'a, 'i>> {
    n.children().find(|c| c.has_tag_name(tag))
}

/// An element's text, trimmed; empty when there is none.
fn value<'a>(n: Option<roxmltree::Node<'a, '_>>) -> &'a str {
    n.and_then(|n| n.text()).map_or("", str::trim)
}

/// Reads a file that the XML names: its name as shown and its text.
type ReadNamed<'a> = dyn Fn(&str) -> Result<(String, String), Diagnostics> + 'a;

/// OpenSim's `ExternalLoads` XML and the table it names.
fn parse_xml(file: &str, text: &str, compiled: &Compiled, read: &ReadNamed<'_>) -> Result<ExternalLoads, Diagnostics> {
    let one = |range: std::ops::Range<usize>, path: &str, m: String, h: String| {
        Diagnostics::one(Diagnostic::new(file, path, m).with_hint(h).at_span(text, range))
    };
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let p = e.pos();
        let offset = text
            .split_inclusive('\n')
            .take(p.row.saturating_sub(1) as usize)
            .map(str::len)
            .sum::<usize>()
            .min(text.len());
        one(offset..offset + 1, "", format!("not XML: {e}"), "an OpenSim external loads file is XML".into())
    })?;
    let Some(root) = doc.descendants().find(|n| n.has_tag_name("ExternalLoads")) else {
        return Err(one(
            0..1,
            "",
            "no `ExternalLoads` element".into(),
            "this is not OpenSim's external loads file".into(),
        ));
    };
    let range_of = |n: roxmltree::Node<'_, '_>| {
        let r = n.range();
        r.start..r.end.min(text.len())
    };
    let Some(datafile) = child(root, "datafile").filter(|d| !value(Some(*d)).is_empty()) else {
        return Err(one(
            range_of(root),
            "ExternalLoads/datafile",
            "no `datafile`".into(),
            "name the table of forces, points and torques: <datafile>grf.mot</datafile>".into(),
        ));
    };
    let (table_file, table_text) = read(value(Some(datafile)))
        .map_err(|d| Diagnostics(d.0.into_iter().map(|d| d.without_contents(file)).collect()))?;
    let table_text = table_text.strip_prefix('\u{feff}').unwrap_or(&table_text).to_string();
    let hidden = |d: Diagnostics| Diagnostics(d.0.into_iter().map(|d| d.without_contents(file)).collect());
    let t = any_table(&table_file, &table_text).map_err(hidden)?;
    let header: Vec<&str> = t.header.iter().map(|h| h.trim()).collect();
    let mut used = Vec::new();
    let mut applied = Vec::new();
    let mut names = Vec::new();
    let forces = root.descendants().filter(|n| n.has_tag_name("ExternalForce"));
    for f in forces {
        let name = f.attribute("name").unwrap_or("").to_string();
        let path = |tag: &str| format!("ExternalLoads/ExternalForce[{name}]/{tag}");
        if value(child(f, "isDisabled")).eq_ignore_ascii_case("true") || value(child(f, "enabled")) == "false" {
            continue;
        }
        let body_in = |tag: &str, default_ground: bool| -> Result<Option<Axes>, Diagnostics> {
            let n = child(f, tag);
            let v = value(n);
            if v.is_empty() && default_ground {
                return Ok(Some(Axes::Global));
            }
            if v == "ground" {
                return Ok(Some(Axes::Global));
            }
            match body_index(compiled, v) {
                Some(b) => Ok(Some(Axes::Body(b))),
                None => Err(one(
                    n.map_or_else(|| range_of(f), range_of),
                    &path(tag),
                    format!("`{v}` is not a body of the model"),
                    bodies_hint(compiled),
                )),
            }
        };
        let Some(Axes::Body(body)) = body_in("applied_to_body", false)? else {
            return Err(one(
                child(f, "applied_to_body").map_or_else(|| range_of(f), range_of),
                &path("applied_to_body"),
                "a load must act on a body of the model, not the ground".into(),
                bodies_hint(compiled),
            ));
        };
        let force_in = body_in("force_expressed_in_body", true)?.unwrap_or(Axes::Global);
        let point_in = body_in("point_expressed_in_body", true)?.unwrap_or(Axes::Global);
        let mut triple = |tag: &str| -> Result<Option<Triple>, Diagnostics> {
            let n = child(f, tag);
            let id = value(n);
            if id.is_empty() || id.eq_ignore_ascii_case("Unassigned") {
                return Ok(None);
            }
            let mut cols = [0; 3];
            for (k, axis) in ["x", "y", "z"].into_iter().enumerate() {
                let col = format!("{id}{axis}");
                let Some(c) = header.iter().position(|h| *h == col) else {
                    return Err(one(
                        n.map_or_else(|| range_of(f), range_of),
                        &path(tag),
                        format!("the table {table_file} has no column `{col}`"),
                        format!("the identifier is the columns' name without x, y, z: `{id}x`, `{id}y`, `{id}z`"),
                    ));
                };
                cols[k] = used.len();
                used.push(c);
            }
            Ok(Some(Triple { cols, factor: 1.0 }))
        };
        let force = triple("force_identifier")?;
        let point = triple("point_identifier")?;
        let torque = triple("torque_identifier")?;
        if force.is_none() && torque.is_none() {
            return Err(one(
                range_of(f),
                &path("force_identifier"),
                "neither a force nor a torque".into(),
                "give `force_identifier` or `torque_identifier`".into(),
            ));
        }
        let origin = compiled.bodies[body].frame.position;
        // OpenSim applies a force without a point at the body's origin
        let (point, point_in) = match point {
            Some(p) => (Some(p), point_in),
            None => (None, Axes::Global),
        };
        applied.push(Applied { body, at: origin, force, point, torque, force_in, point_in });
        names.push(name);
    }
    if applied.is_empty() {
        return Err(one(range_of(root), "ExternalLoads", "no enabled `ExternalForce`".into(), "add one".into()));
    }
    let columns = read_columns(&table_file, &table_text, &t, &used).map_err(|d| hidden(Diagnostics::one(*d)))?;
    assemble(file, columns, applied, names)
}

#[cfg(test)]
mod forward_tests;
#[cfg(test)]
mod tests;
