//! The path length for a generic scalar (dual numbers): the `f64` solution's choices (which side
//! of each obstacle, the ellipsoid's contact points, the free points) replayed in `T`, so that
//! automatic differentiation checks the analytic derivatives independently and gives the third
//! and fourth orders ([`Element::third_order`], [`Element::fourth_order`]).
//!
//! **How many steps the replay takes.** A quantity solved implicitly (the ellipsoid's
//! `ξ = (ψ, ℓ, μ)`, the free points `z`) is replayed by chord steps `z ← z − J₀⁻¹ g(z)` from the
//! `f64` solution, with `J₀` the `f64` Jacobian there: the start is exact in the real part and
//! off by `O(ε)` in the infinitesimals, and each step multiplies the error by
//! `I − J₀⁻¹ J(z) = O(ε)`, so after `k` steps it is `O(ε^(k+1))`: `z` is exact to order `k`. For
//! a scalar carrying derivatives to order `N` (`DualNum::NDERIV`: 2 for the Hessian, 3 for
//! [`mollier_core::HyperHyperDual64`], 4 for [`mollier_core::Jet4`]):
//! - the ellipsoid's length `|p − T(ψ)| + ℓ + μ` is not stationary in `ξ` (the residual is what
//!   moves it), so its span takes `N` steps ([`ellipsoid::span_generic`]); its gradient, which
//!   the free points' steps use, is then exact to order `N` as well;
//! - the length is stationary in the free points, so an error `O(ε^(k+1))` there moves it by
//!   `O(ε^(2k+2))`: exact to order `N` takes `2k + 2 > N`, `k = ⌊N/2⌋` steps (1 for the third
//!   order, 2 for the fourth), given spans exact to order `k`;
//! - spheres and cylinders are closed forms, and OpenSim's paths and sequence decide every
//!   branch and iteration count on real parts: exact to any order as they stand.
//!
//! `J₀` must be the Jacobian at the solution itself for the last step's order to be exact: an
//! ellipsoid's Newton step applied without a shot (up to `1e-7` when only the length is wanted)
//! leaves `J₀` off by that much, which would enter the order-`N` part at that relative size; the
//! replay therefore asks for the solve the Hessian asks for (steps without a shot below `1e-11`).

use mollier_core::element::{Deformations, Derivs, ElementError};
use mollier_core::geometry::{Quat, Vec3, lift, norm, quat_at, rotate, sub, vec3_at};
use mollier_core::scalar::{Real, c};

use crate::*;

/// A span's length and gradient (obstacle frame) for a generic scalar, on the `f64` branch.
fn span_generic<T: Real>(pl: &Placed, pa: &Vec3<T>, pb: &Vec3<T>, hint: &Hint) -> (T, [T; 6]) {
    match (pl.obstacle.shape, hint) {
        (Shape::Sphere { radius }, Hint::Wrapped(w)) => span::sphere_generic(radius, pa, pb, *w),
        (Shape::Cylinder { radius, side, .. }, Hint::Wrapped(w)) => span::cylinder_generic(radius, &side, pa, pb, *w),
        (_, Hint::OpenSim) => {
            // alone on its segment: only the length is used
            let obj = pl.opensim().expect("OpenSim's path chose this hint");
            (crate::opensim::length_generic(&obj, pa, pb), [mollier_core::scalar::c(0.0); 6])
        }
        (Shape::Ellipsoid { .. }, Hint::Ellipsoid(sol)) => {
            ellipsoid::span_generic(pl.geo.as_ref().expect("ellipsoid geometry"), pa, pb, sol.as_ref())
        }
        _ => span::straight_generic(pa, pb),
    }
}

impl CurvedTruss {
    /// One obstacle span for a generic scalar between global points; returns the length and the
    /// gradient with respect to the two points (global frame).
    fn span_t<T: Real>(&self, k: usize, x: &[T], xa: &Vec3<T>, xb: &Vec3<T>, hint: &Hint) -> (T, [Vec3<T>; 2]) {
        let pl = &self.obstacles[k];
        let lam: Quat<T> = quat_at(x, pl.slots.orientation);
        let o = vec3_at(x, pl.slots.origin);
        let f = &pl.obstacle.frame;
        let (pa, pb) = (f.local(&lam, &o, xa), f.local(&lam, &o, xb));
        let (l, g) = span_generic(pl, &pa, &pb, hint);
        let sigma = lam[0] * lam[0] + lam[1] * lam[1] + lam[2] * lam[2] + lam[3] * lam[3];
        let to_global = |w: [T; 3]| {
            let u = f.axes();
            let v: Vec3<T> = [0, 1, 2].map(|i| w[0] * u[0][i] + w[1] * u[1][i] + w[2] * u[2][i]);
            rotate(&lam, &v).map(|c| c / sigma)
        };
        (l, [to_global([g[0], g[1], g[2]]), to_global([g[3], g[4], g[5]])])
    }
}

impl CurvedTruss {
    /// What the `f64` solution at `xr` (n_local) chose, segment by segment, for the replay; with
    /// the Hessian's solve when `hessian` (see the module docs).
    fn choices(&self, xr: &[f64], hessian: bool) -> Result<Vec<SegmentHint>, ElementError> {
        let mut st = PathState::default();
        let mut hints = Vec::new();
        let n = xr.len();
        // the Hessian's solve (see the module docs); its numbers are not used
        let mut hess = vec![0.0; if hessian { n * n } else { 0 }];
        self.compute(xr, &mut st, &mut Derivs::new(n, &mut [], &mut hess), Some(&mut hints), None)?;
        Ok(hints)
    }

    /// The path's length less its reference (m) at `x` (n_local) over `T`, `hints` the `f64`
    /// solution's choices at `x`'s real parts replayed.
    fn replay<T: Real>(&self, x: &[T], hints: &[SegmentHint]) -> T {
        let mut total = c::<T>(0.0);
        for (si, hint) in hints.iter().enumerate() {
            let obs = &hint.obs;
            let (a, b) = (self.points[si], self.points[si + 1]);
            let (xa, xb): (Vec3<T>, Vec3<T>) = (vec3_at(x, a), vec3_at(x, b));
            match obs.len() {
                0 => total += norm(&sub(&xb, &xa)),
                1 => total += self.span_t(obs[0], x, &xa, &xb, &hint.spans[0]).0,
                m => {
                    // free points: chord-Newton steps in T from the f64 solution, in the planes
                    let nk = m - 1;
                    let nz = 2 * nk;
                    let mut z = vec![c::<T>(0.0); nz];
                    let knots_at = |z: &[T]| -> Vec<Vec3<T>> {
                        (0..nk)
                            .map(|j| {
                                let [e1, e2] = &hint.bases[j];
                                let k: Vec3<T> = lift(&hint.knots[j]);
                                [0, 1, 2].map(|i| k[i] + z[2 * j] * e1[i] + z[2 * j + 1] * e2[i])
                            })
                            .collect()
                    };
                    let run = |z: &[T]| -> (T, Vec<T>) {
                        let ks = knots_at(z);
                        let mut len = c::<T>(0.0);
                        let mut gk = vec![c::<T>(0.0); 3 * nk];
                        for (j, &k) in obs.iter().enumerate() {
                            let p0 = if j == 0 { xa } else { ks[j - 1] };
                            let p1 = if j == m - 1 { xb } else { ks[j] };
                            let (l, [ga, gb]) = self.span_t(k, x, &p0, &p1, &hint.spans[j]);
                            len += l;
                            for i in 0..3 {
                                if j > 0 {
                                    gk[3 * (j - 1) + i] += ga[i];
                                }
                                if j < m - 1 {
                                    gk[3 * j + i] += gb[i];
                                }
                            }
                        }
                        let gz: Vec<T> = (0..nz)
                            .map(|q| {
                                let e = &hint.bases[q / 2][q % 2];
                                gk[3 * (q / 2)] * e[0] + gk[3 * (q / 2) + 1] * e[1] + gk[3 * (q / 2) + 2] * e[2]
                            })
                            .collect();
                        (len, gz)
                    };
                    for _ in 0..T::NDERIV / 2 {
                        let (_, gz) = run(&z);
                        for q in 0..nz {
                            for r in 0..nz {
                                z[q] -= gz[r] * hint.hinv[q * nz + r];
                            }
                        }
                    }
                    total += run(&z).0;
                }
            }
        }
        total - c::<T>(self.l0)
    }

    /// [`Element::third_order_jets`](mollier_core::Element::third_order_jets) over any scalar:
    /// the jets `x` (`k n_local`) into `e` (`k`), the `f64` solution made once for each run of
    /// jets with the same real parts (bit for bit) and replayed over each.
    pub(crate) fn jets<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        let n = self.layout.n_local();
        let mut solved: Option<(Vec<u64>, Vec<SegmentHint>)> = None;
        for (xj, ej) in x.chunks_exact(n).zip(e.iter_mut()) {
            if self.sequence {
                *ej = self.sequence_length(xj) - c::<T>(self.l0);
                continue;
            }
            let bits: Vec<u64> = xj.iter().map(|v| v.re().to_bits()).collect();
            if solved.as_ref().is_none_or(|(at, _)| *at != bits) {
                let xr: Vec<f64> = bits.iter().map(|&b| f64::from_bits(b)).collect();
                solved = Some((bits, self.choices(&xr, T::NDERIV > 0)?));
            }
            let (_, hints) = solved.as_ref().expect("solved just above");
            *ej = self.replay(xj, hints);
        }
        Ok(())
    }
}

impl Deformations for CurvedTruss {
    fn deformations<T: Real>(&self, x: &[T], e: &mut [T]) -> Result<(), ElementError> {
        self.jets(x, &mut e[..1])
    }
}
