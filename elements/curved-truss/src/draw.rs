//! The path as a viewer draws it: straight pieces as they are, surface pieces sampled along
//! their geodesics (a great circle on a sphere, a helix on a cylinder, the geodesic shot from the
//! contact point on an ellipsoid), and the obstacles as solids.

use mollier_core::element::{Drawing, ShapeKind};
use mollier_core::geometry::{Quat, Vec3, dot, norm, quat_at, sub, vec3_at};

use crate::{CurvedTruss, Ellipsoid, PathState, Piece, Shape};

/// Angle between two samples of a surface part (rad): 64 per turn.
const STEP: f64 = std::f64::consts::PI / 32.0;
/// Drawn half length of an infinite cylinder, in radii (a finite one is drawn at its length).
const CYLINDER_HALF_LENGTH: f64 = 4.0;

impl CurvedTruss {
    /// The drawn path and obstacles at local coordinates `x` (global coordinates, m). When the
    /// path cannot be solved, the line joins the fixed points (`p`, via points, `q`).
    pub fn draw(&self, x: &[f64]) -> Drawing {
        self.draw_from(x, PathState::default())
    }

    /// [`Self::draw`] from a copy of an evaluation's warm start (the path it solved at `x`).
    pub(crate) fn draw_from(&self, x: &[f64], state: PathState) -> Drawing {
        let mut d = Drawing::default();
        for pl in &self.obstacles {
            let (lam, o): (Quat, Vec3) = (quat_at(x, pl.slots.orientation), vec3_at(x, pl.slots.origin));
            let (kind, semi) = match pl.obstacle.shape {
                Shape::Sphere { radius } => (ShapeKind::Sphere, [radius; 3]),
                Shape::Cylinder { radius, length, .. } => {
                    (ShapeKind::Cylinder, [radius, radius, length.map_or(CYLINDER_HALF_LENGTH * radius, |l| 0.5 * l)])
                }
                Shape::Ellipsoid { semi_axes } => (ShapeKind::Ellipsoid, semi_axes),
            };
            d.shapes.push(pl.obstacle.frame.drawn(&lam, &o, kind, &semi));
        }
        let Ok((pieces, _)) = self.path_from(x, state) else {
            d.lines.push(self.points.iter().map(|&a| vec3_at(x, a)).collect());
            return d;
        };
        let mut line: Vec<Vec3> = Vec::new();
        for (i, piece) in pieces.iter().enumerate() {
            match *piece {
                Piece::Straight { from, to } => {
                    if line.is_empty() {
                        line.push(from);
                    }
                    line.push(to);
                }
                Piece::Surface { obstacle, from, to, length } => {
                    // a surface piece always follows the straight piece that is tangent at `from`
                    let anchor = match i.checked_sub(1).map(|j| pieces[j]) {
                        Some(Piece::Straight { from: a, .. }) => a,
                        _ => from,
                    };
                    if line.is_empty() {
                        line.push(from);
                    }
                    line.extend(self.surface_samples(obstacle, x, &anchor, &from, &to, length));
                }
            }
        }
        d.lines.push(line);
        d
    }

    /// Points of obstacle `k`'s surface path from `from` to `to` (global, m; `from` left out,
    /// `to` last), of length `length` (m), entered on the way from `anchor`.
    fn surface_samples(&self, k: usize, x: &[f64], anchor: &Vec3, from: &Vec3, to: &Vec3, length: f64) -> Vec<Vec3> {
        let pl = &self.obstacles[k];
        let (lam, o): (Quat, Vec3) = (quat_at(x, pl.slots.orientation), vec3_at(x, pl.slots.origin));
        let fr = &pl.obstacle.frame;
        let (a, t_in, t_out) = (fr.local(&lam, &o, anchor), fr.local(&lam, &o, from), fr.local(&lam, &o, to));
        let dir = sub(&t_in, &a);
        let local: Vec<Vec3> = match pl.obstacle.shape {
            Shape::Cylinder { radius, .. } => {
                // the geodesic of a cylinder is a helix: angle and height change in proportion
                let dz = t_out[2] - t_in[2];
                let turn = (length * length - dz * dz).max(0.0).sqrt() / radius;
                let sense = if t_in[0] * dir[1] - t_in[1] * dir[0] >= 0.0 { 1.0 } else { -1.0 };
                let theta0 = t_in[1].atan2(t_in[0]);
                let n = ((turn / STEP).ceil() as usize).clamp(2, 512);
                (1..n)
                    .map(|j| {
                        let s = j as f64 / n as f64;
                        let th = theta0 + sense * turn * s;
                        [radius * th.cos(), radius * th.sin(), t_in[2] + dz * s]
                    })
                    .collect()
            }
            Shape::Sphere { radius } => shoot(&Ellipsoid::new([radius; 3]), &t_in, &dir, length),
            Shape::Ellipsoid { .. } => match &pl.geo {
                Some(geo) => shoot(geo, &t_in, &dir, length),
                None => Vec::new(),
            },
        };
        let mut out: Vec<Vec3> = local.iter().map(|p| fr.global(&lam, &o, p)).collect();
        out.push(*to);
        out
    }
}

/// Interior points of the geodesic of `e` from `x0` in the direction `dir` (its component
/// tangent to the surface) over arc length `length` (m).
fn shoot(e: &Ellipsoid, x0: &Vec3, dir: &Vec3, length: f64) -> Vec<Vec3> {
    let n_hat = e.normal(x0);
    let t = sub(dir, &n_hat.map(|c| c * dot(dir, &n_hat)));
    let nt = norm(&t);
    if !(nt > 0.0) || !(length > 0.0) {
        return Vec::new();
    }
    let smallest = e.axes[0].min(e.axes[1]).min(e.axes[2]);
    let n = ((length / (smallest * STEP)).ceil() as usize).clamp(2, 512);
    let ds = length / n as f64;
    let (mut x, mut v) = (*x0, t.map(|c| c / nt));
    let mut out = Vec::with_capacity(n - 1);
    for _ in 1..n {
        let s = e.shoot(&x, &v, ds);
        (x, v) = (s.x, s.v);
        out.push(x);
    }
    out
}
