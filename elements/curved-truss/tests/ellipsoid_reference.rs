//! The wrapped path over an ellipsoid against an independent reference: a finely discretised
//! shortest path on the surface.
//!
//! The reference length between two surface points is that of the polyline with `N − 1` free
//! vertices on the ellipsoid minimising `Σ |X_{i+1} − X_i|²` (a discrete geodesic: the energy
//! spaces the vertices evenly; minimising the length itself would let the chords bunch up and
//! cut through the body). It converges as `1/N²` (chords fall short of the arcs), so `N = 64,
//! 128, 256` are extrapolated (Richardson). Then:
//! 1. the element's surface length matches the reference between its contact points;
//! 2. moving either contact point along the surface, the reference path (straight to the new
//!    contact, discrete geodesic, straight on) is longer: the element's contacts are where the
//!    total length is least.

use mollier_core::geometry::{Vec3, cross, dot, norm, sub};
use mollier_curved_truss::ellipsoid::{Warm, span};
use mollier_curved_truss::geodesic::Ellipsoid;
use num_dual::HyperDual64;

type H = HyperDual64;

/// A chart of the ellipsoid near a point: `y0` on the unit sphere, `e1`, `e2` tangent to it;
/// `(u, v) ↦ D (y0 + u e1 + v e2)/|y0 + u e1 + v e2|`.
#[derive(Clone, Copy)]
struct Chart {
    y0: Vec3,
    e1: Vec3,
    e2: Vec3,
}

impl Chart {
    fn at(y: &Vec3) -> Self {
        let n = norm(y);
        let y0 = y.map(|v| v / n);
        let e1 = mollier_core::geometry::perpendicular(&y0);
        Self { y0, e1, e2: cross(&y0, &e1) }
    }
    fn point<T: mollier_core::Real>(&self, a: &Vec3, u: T, v: T) -> [T; 3] {
        let y: [T; 3] = [0, 1, 2].map(|i| u * self.e1[i] + v * self.e2[i] + self.y0[i]);
        let n = (y[0] * y[0] + y[1] * y[1] + y[2] * y[2]).sqrt();
        [0, 1, 2].map(|i| y[i] * a[i] / n)
    }
}

fn sq<T: mollier_core::Real>(x: &[T; 3], y: &[T; 3]) -> T {
    let d = [x[0] - y[0], x[1] - y[1], x[2] - y[2]];
    d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
}

fn inv2(m: &[[f64; 2]; 2]) -> [[f64; 2]; 2] {
    let det = m[0][0] * m[1][1] - m[0][1] * m[1][0];
    [[m[1][1] / det, -m[0][1] / det], [-m[1][0] / det, m[0][0] / det]]
}

fn mul(a: &[[f64; 2]; 2], b: &[[f64; 2]; 2]) -> [[f64; 2]; 2] {
    let mut r = [[0.0; 2]; 2];
    for i in 0..2 {
        for j in 0..2 {
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j];
        }
    }
    r
}

fn mv(a: &[[f64; 2]; 2], v: &[f64; 2]) -> [f64; 2] {
    [a[0][0] * v[0] + a[0][1] * v[1], a[1][0] * v[0] + a[1][1] * v[1]]
}

fn tr(a: &[[f64; 2]; 2]) -> [[f64; 2]; 2] {
    [[a[0][0], a[1][0]], [a[0][1], a[1][1]]]
}

/// Length of the discrete geodesic with `n` segments between surface points `xa` and `xb`.
fn discrete_geodesic(a: &Vec3, xa: &Vec3, xb: &Vec3, n: usize) -> f64 {
    let img = |x: &Vec3| [x[0] / a[0], x[1] / a[1], x[2] / a[2]];
    let (ya, yb) = (img(xa), img(xb));
    // start on the planar section through the two points' images
    let ang = dot(&ya, &yb).clamp(-1.0, 1.0).acos();
    let ortho = {
        let q = [0, 1, 2].map(|i| yb[i] - dot(&yb, &ya) * ya[i]);
        q.map(|v| v / norm(&q))
    };
    let m = n - 1;
    let mut charts: Vec<Chart> = (1..n)
        .map(|k| {
            let t = ang * k as f64 / n as f64;
            Chart::at(&[0, 1, 2].map(|i| t.cos() * ya[i] + t.sin() * ortho[i]))
        })
        .collect();
    let energy = |xs: &[Vec3]| {
        let mut e = sq(xa, &xs[0]) + sq(&xs[m - 1], xb);
        for i in 0..m - 1 {
            e += sq(&xs[i], &xs[i + 1]);
        }
        e
    };
    let pts = |charts: &[Chart]| -> Vec<Vec3> { charts.iter().map(|c| c.point(a, 0.0, 0.0)).collect() };
    let mut en = energy(&pts(&charts));
    for _ in 0..50 {
        let mut g = vec![[0.0; 2]; m];
        let mut diag = vec![[[0.0; 2]; 2]; m];
        let mut off = vec![[[0.0; 2]; 2]; m];
        // edge k joins vertex k−1 and k (vertex −1 = xa, vertex m = xb)
        for k in 0..=m {
            let vars: Vec<usize> = [k.checked_sub(1), (k < m).then_some(k)].into_iter().flatten().collect();
            let nv = 2 * vars.len();
            for i in 0..nv {
                for j in i..nv {
                    let mut z = vec![H::from(0.0); nv];
                    z[i].eps1 = 1.0;
                    z[j].eps2 = 1.0;
                    let (x0, x1) = if k == 0 {
                        (xa.map(H::from), charts[0].point(a, z[0], z[1]))
                    } else if k == m {
                        (charts[m - 1].point(a, z[0], z[1]), xb.map(H::from))
                    } else {
                        (charts[k - 1].point(a, z[0], z[1]), charts[k].point(a, z[2], z[3]))
                    };
                    let r = sq(&x0, &x1);
                    let (vi, ci) = (vars[i / 2], i % 2);
                    let (vj, cj) = (vars[j / 2], j % 2);
                    if i == j {
                        g[vi][ci] += r.eps1;
                    }
                    if vi == vj {
                        diag[vi][ci][cj] += r.eps1eps2;
                        if i != j {
                            diag[vi][cj][ci] += r.eps1eps2;
                        }
                    } else {
                        off[vi][ci][cj] += r.eps1eps2;
                    }
                }
            }
        }
        let gmax = g.iter().flatten().fold(0.0f64, |acc, v| acc.max(v.abs()));
        if gmax < 1e-17 {
            break;
        }
        // block Thomas for the tridiagonal system H d = −g
        let mut dd = diag.clone();
        let mut rhs: Vec<[f64; 2]> = g.iter().map(|v| [-v[0], -v[1]]).collect();
        for i in 1..m {
            let l = mul(&tr(&off[i - 1]), &inv2(&dd[i - 1]));
            let lo = mul(&l, &off[i - 1]);
            for r in 0..2 {
                for c in 0..2 {
                    dd[i][r][c] -= lo[r][c];
                }
            }
            let lr = mv(&l, &rhs[i - 1]);
            rhs[i] = [rhs[i][0] - lr[0], rhs[i][1] - lr[1]];
        }
        let mut d = vec![[0.0; 2]; m];
        d[m - 1] = mv(&inv2(&dd[m - 1]), &rhs[m - 1]);
        for i in (0..m - 1).rev() {
            let od = mv(&off[i], &d[i + 1]);
            d[i] = mv(&inv2(&dd[i]), &[rhs[i][0] - od[0], rhs[i][1] - od[1]]);
        }
        let mut lam = 1.0;
        loop {
            let trial: Vec<Vec3> = (0..m).map(|i| charts[i].point(a, lam * d[i][0], lam * d[i][1])).collect();
            let et = energy(&trial);
            if et <= en || lam < 1e-10 {
                charts = trial.iter().map(|x| Chart::at(&img(x))).collect();
                en = et;
                break;
            }
            lam *= 0.5;
        }
    }
    let xs = pts(&charts);
    let mut len = sq(xa, &xs[0]).sqrt() + sq(&xs[m - 1], xb).sqrt();
    for i in 0..m - 1 {
        len += sq(&xs[i], &xs[i + 1]).sqrt();
    }
    len
}

/// The discrete geodesic's length extrapolated to `N → ∞` from `N = 64, 128, 256`, and the
/// observed convergence ratio (4 for `O(1/N²)`).
fn reference_geodesic(a: &Vec3, xa: &Vec3, xb: &Vec3) -> (f64, f64) {
    let l: Vec<f64> = [64usize, 128, 256].iter().map(|&n| discrete_geodesic(a, xa, xb, n)).collect();
    let (d1, d2) = (l[1] - l[0], l[2] - l[1]);
    (l[2] + d2 / 3.0, d1 / d2)
}

#[test]
fn ellipsoid_path_matches_the_discretised_shortest_path() {
    let axes = [0.147, 0.2079, 0.0944];
    let e = Ellipsoid::new(axes);
    // serratus-like: from behind the thorax round its side to the front
    let cases = [([-0.06, 0.12, -0.11], [0.1, -0.1, 0.09]), ([0.16, 0.05, -0.05], [-0.02, -0.2, 0.08])];
    let mut worst: f64 = 0.0;
    for (p, s) in cases {
        let (ev, _) = span(&e, &p, &s, &mut Warm::default(), false).unwrap();
        let c = ev.wrap.expect("the path wraps");
        let (ell, ratio) = reference_geodesic(&axes, &c.t_in, &c.t_out);
        assert!((ratio - 4.0).abs() < 0.05, "convergence ratio {ratio}");
        let err = (ell - c.surface_length).abs();
        worst = worst.max(err);
        println!(
            "surface length {:.15} m, discretised and extrapolated {ell:.15} m, difference {err:.1e} m",
            c.surface_length
        );
        assert!(err < 1e-10, "{} vs {ell}", c.surface_length);
        // total through the reference, at the element's contacts and at moved ones
        let total =
            |ti: &Vec3, to: &Vec3| norm(&sub(&p, ti)) + reference_geodesic(&axes, ti, to).0 + norm(&sub(&s, to));
        let at = total(&c.t_in, &c.t_out);
        assert!((at - ev.length).abs() < 1e-10, "{at} vs {}", ev.length);
        let img = |x: &Vec3| [x[0] / axes[0], x[1] / axes[1], x[2] / axes[2]];
        let moved = |x: &Vec3, dir: usize, delta: f64| {
            let ch = Chart::at(&img(x));
            let (u, v) = if dir == 0 { (delta, 0.0) } else { (0.0, delta) };
            ch.point(&axes, u, v)
        };
        for dir in 0..2 {
            for delta in [1e-2, -1e-2] {
                let a = total(&moved(&c.t_in, dir, delta), &c.t_out);
                let b = total(&c.t_in, &moved(&c.t_out, dir, delta));
                assert!(a > ev.length + 1e-8 && b > ev.length + 1e-8, "{a} {b} vs {}", ev.length);
            }
        }
    }
    println!("worst difference from the reference: {worst:.1e} m");
}
