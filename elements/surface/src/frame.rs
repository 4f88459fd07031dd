//! A shape frame fixed to a body (an ellipsoid's principal axes, a cylinder's axis), the local
//! coordinates of points in it, and the chain rule from a function of those local coordinates to
//! an element's local coordinate vector.
//!
//! A body is a position node `x_O` (its origin) and an orientation node `λ`; a vector `u` of the
//! body frame is `R(λ) u` in the global frame. A shape frame has orthonormal axes `u_i` and
//! origin `c` in the body frame, so a global point `x` has shape coordinates
//! ```text
//! p_i = (R(λ) u_i) · (x − x_O) / |λ|² − u_i · c          (i = 0, 1, 2; m)
//! ```
//! `R(λ)/|λ|²` is a rotation for any `λ ≠ 0` (the kernel's `R` is the homogeneous quadratic
//! form), so shape coordinates, and the distances and path lengths made from them, are true
//! lengths even where Newton iterates leave the unit sphere: lengths measured in the frames of
//! different bodies can then be added and compared (the free points of a wrapping path need
//! that). On the unit sphere this is the usual `Rᵀ(x − x_O) − c`. The numerator is a
//! rotated-vector term `(R(λ)u)·d = λᵀQ(u, d)λ` (`geometry::q_matrix`); [`chain`] carries a
//! function's derivatives with respect to the `p`s of one or two points over to the points' and
//! the body's coordinates, exactly.

use mollier_core::Derivs;
use mollier_core::element::{Drawing, DrawnShape, ShapeKind};
use mollier_core::geometry::{
    Mat3, Quat, Vec3, column, cross, dot, g_matrix, lift, mat_mul, q_matrix, q_times, quat_at, quat_conjugate, rotate,
    sub, triad, vec3_at,
};
use mollier_core::scalar::{Real, c};

/// Principal axes and centre of a shape in the frame of the body that carries it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShapeFrame {
    axes: [Vec3; 3],
    centre: Vec3,
    offsets: Vec3,
}

impl Default for ShapeFrame {
    fn default() -> Self {
        Self::new([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], [0.0; 3])
    }
}

/// `Rx(a) Ry(b) Rz(c)`: OpenSim's body-fixed X-Y-Z sequence (`xyz_body_rotation`), rad.
pub fn body_fixed_xyz(angles: &Vec3) -> Mat3 {
    let (sa, ca) = angles[0].sin_cos();
    let (sb, cb) = angles[1].sin_cos();
    let (sc, cc) = angles[2].sin_cos();
    let rx = [[1.0, 0.0, 0.0], [0.0, ca, -sa], [0.0, sa, ca]];
    let ry = [[cb, 0.0, sb], [0.0, 1.0, 0.0], [-sb, 0.0, cb]];
    let rz = [[cc, -sc, 0.0], [sc, cc, 0.0], [0.0, 0.0, 1.0]];
    mat_mul(&rx, &mat_mul(&ry, &rz))
}

impl ShapeFrame {
    /// A frame with unit axes `axes[i]` (body frame; must be orthonormal and right-handed) and
    /// origin `centre` (body frame, m).
    pub fn new(axes: [Vec3; 3], centre: Vec3) -> Self {
        let offsets = [dot(&axes[0], &centre), dot(&axes[1], &centre), dot(&axes[2], &centre)];
        Self { axes, centre, offsets }
    }

    /// A frame whose axes are the columns of the rotation matrix `r` (body frame).
    pub fn from_matrix(r: &Mat3, centre: Vec3) -> Self {
        Self::new([column(r, 0), column(r, 1), column(r, 2)], centre)
    }

    /// A frame from its x axis and a hint for its y axis (made perpendicular), body frame.
    /// `None` when `x` is zero or `y` is (nearly) parallel to it.
    pub fn from_axes(x: &Vec3, y: &Vec3, centre: Vec3) -> Option<Self> {
        triad(x, Some(y)).map(|m| Self::from_matrix(&m, centre))
    }

    /// The unit axes `u_i` in the body frame.
    pub fn axes(&self) -> &[Vec3; 3] {
        &self.axes
    }

    /// The origin in the body frame (m).
    pub fn centre(&self) -> &Vec3 {
        &self.centre
    }

    /// Shape coordinates of the global point `x` for a body at `origin` with orientation `lam`.
    pub fn local<T: Real>(&self, lam: &Quat<T>, origin: &Vec3<T>, x: &Vec3<T>) -> Vec3<T> {
        // Rᵀ(λ) = R(λ̄) with λ̄ the conjugate, also in homogeneous form
        let conj = quat_conjugate(lam);
        let sigma = lam[0] * lam[0] + lam[1] * lam[1] + lam[2] * lam[2] + lam[3] * lam[3];
        let b = rotate(&conj, &sub(x, origin)).map(|v| v / sigma);
        let u = &self.axes;
        [
            dot(&lift(&u[0]), &b) - c::<T>(self.offsets[0]),
            dot(&lift(&u[1]), &b) - c::<T>(self.offsets[1]),
            dot(&lift(&u[2]), &b) - c::<T>(self.offsets[2]),
        ]
    }

    /// Shape coordinates (m) of the point of an element on a point and a body ([`POINT`],
    /// [`POINT_BODY`]) at its local coordinates `x` (10).
    pub fn point_local<T: Real>(&self, x: &[T]) -> Vec3<T> {
        self.local(&quat_at(x, POINT_BODY.orientation), &vec3_at(x, POINT_BODY.origin), &vec3_at(x, POINT))
    }

    /// The global point with shape coordinates `p`.
    pub fn global(&self, lam: &Quat, origin: &Vec3, p: &Vec3) -> Vec3 {
        let v = self.body_vector(p);
        let sigma: f64 = lam.iter().map(|l| l * l).sum();
        let w = rotate(lam, &[v[0] + self.centre[0], v[1] + self.centre[1], v[2] + self.centre[2]]);
        [w[0] / sigma + origin[0], w[1] / sigma + origin[1], w[2] / sigma + origin[2]]
    }

    /// The solid `kind` with semi-axes `semi` (m, along this frame's axes) as a viewer draws it,
    /// for a body at `origin` with orientation `lam`.
    pub fn drawn(&self, lam: &Quat, origin: &Vec3, kind: ShapeKind, semi: &Vec3) -> DrawnShape {
        let unit = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        DrawnShape {
            kind,
            centre: self.global(lam, origin, &[0.0; 3]),
            axes: [0, 1, 2].map(|i| self.global_vector(lam, &unit[i]).map(|v| v * semi[i])),
        }
    }

    /// What a viewer draws for an element on a point and a body ([`POINT`], [`POINT_BODY`]:
    /// SURFACE, SOFT-CONTACT): the ellipsoid with semi-axes `semi` (m). The point itself is one of the body points a viewer draws.
    pub fn ellipsoid_drawing(&self, x: &[f64], semi: &Vec3) -> Drawing {
        let shape =
            self.drawn(&quat_at(x, POINT_BODY.orientation), &vec3_at(x, POINT_BODY.origin), ShapeKind::Ellipsoid, semi);
        Drawing { lines: Vec::new(), shapes: vec![shape] }
    }

    /// A vector with shape components `w`, in the body frame: `Σ w_i u_i`.
    pub fn body_vector(&self, w: &Vec3) -> Vec3 {
        let u = &self.axes;
        [0, 1, 2].map(|k| w[0] * u[0][k] + w[1] * u[1][k] + w[2] * u[2][k])
    }

    /// A vector with shape components `w`, in the global frame: `R(λ) Σ w_i u_i / |λ|²`.
    pub fn global_vector(&self, lam: &Quat, w: &Vec3) -> Vec3 {
        let sigma: f64 = lam.iter().map(|l| l * l).sum();
        rotate(lam, &self.body_vector(w)).map(|v| v / sigma)
    }
}

/// Where a body's two nodes sit in a coordinate vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BodySlots {
    /// Offset of the body origin's three coordinates.
    pub origin: usize,
    /// Offset of the body orientation's four Euler parameters.
    pub orientation: usize,
}

/// Most points [`chain`] handles at once.
pub const MAX_POINTS: usize = 2;

/// Chain rule for a function `f(p_0, …, p_{k−1})` of the shape coordinates of `k ≤ 2` global
/// points (point `j` at offset `points[j]` of the coordinate vector `x`) in `frame` on the body at
/// `body`: given `w = ∂f/∂p` (`3k`) and, when `out` wants a Hessian, `h = ∂²f/∂p²` (`3k x 3k`,
/// row-major, symmetric), adds `s ∇f` and `s ∇²f` to `out` (with respect to `x`).
///
/// With `σ = |λ|²`, `d_j = x_j − x_O`, `F_j = (R(λ) v_j)·d_j` for `v_j = Σ_i w_ji u_i`, and
/// `Q_j = Q(v_j, d_j)`, the terms of `Σ w ∇²p` are
/// ```text
/// λλ:   2Q_j/σ − 4(Q_j λλᵀ + λλᵀ Q_j)/σ² − 2F_j I/σ² + 8F_j λλᵀ/σ³
/// x_jλ: ∂(R v_j)/∂λ / σ − 2 (R v_j) λᵀ/σ²        (and minus that for x_O)
/// ```
/// Any of the points may be the body's origin node (or each other): the contributions add.
pub fn chain(
    frame: &ShapeFrame,
    body: BodySlots,
    points: &[usize],
    x: &[f64],
    w: &[f64],
    h: &[f64],
    out: &mut Derivs<'_>,
    s: f64,
) {
    match points.len() {
        1 => chain_k::<1>(frame, body, &[points[0]], x, w, h, out, s),
        2 => chain_k::<2>(frame, body, &[points[0], points[1]], x, w, h, out, s),
        k => panic!("chain: {k} points (one or two are supported)"),
    }
}

/// Add `s B` (a `rows x cols` block, row-major) at `(r0, c0)` of an `n x n` row-major matrix.
#[inline]
fn add_block(hess: &mut [f64], n: usize, r0: usize, c0: usize, rows: usize, cols: usize, b: &[f64], s: f64) {
    for i in 0..rows {
        let row = &mut hess[(r0 + i) * n + c0..(r0 + i) * n + c0 + cols];
        for (dst, src) in row.iter_mut().zip(&b[i * cols..(i + 1) * cols]) {
            *dst += s * src;
        }
    }
}

/// `[a]× M` for a 3x4 `M`.
#[inline]
fn cross_mat(a: &Vec3, m: &[[f64; 4]; 3]) -> [[f64; 4]; 3] {
    let mut r = [[0.0; 4]; 3];
    for c2 in 0..4 {
        r[0][c2] = a[1] * m[2][c2] - a[2] * m[1][c2];
        r[1][c2] = a[2] * m[0][c2] - a[0] * m[2][c2];
        r[2][c2] = a[0] * m[1][c2] - a[1] * m[0][c2];
    }
    r
}

/// [`chain`] for `K` points.
///
/// In global terms: with `R̂ = R(λ)E/σ` (the shape frame's rotation), `W_j = R̂ w_j` and
/// `A_jk = R̂ h_jk R̂ᵀ` are the gradient and Hessian with respect to the points' global
/// offsets `d_j = x_j − x_O`. A change `δλ` turns the body by `δθ = 2 G(λ) δλ/σ`, which moves
/// the shape coordinates as if the points turned by `−δθ`: `R̂ ∂p_j/∂λ = N_j = 2[d_j]× G/σ`.
/// Hence `∂f/∂λ = 2Gᵀ Σ (W_j × d_j)/σ` (a moment), the point–orientation blocks
/// `Σ_k A_jk N_k − 2[W_j]× G/σ` and the orientation block `Σ N_jᵀ A_jk N_k + T`, where `T` is the
/// second derivative of `Σ (R(λ)v_j)·d_j/σ` at fixed `d`, `v_j = E w_j`. The origin's blocks are
/// minus the sum of the points'.
fn chain_k<const K: usize>(
    frame: &ShapeFrame,
    body: BodySlots,
    points: &[usize; K],
    x: &[f64],
    w: &[f64],
    h: &[f64],
    out: &mut Derivs<'_>,
    s: f64,
) {
    assert!(w.len() == 3 * K, "chain: w has 3 entries per point");
    let lam: Quat = quat_at(x, body.orientation);
    let sigma: f64 = lam.iter().map(|l| l * l).sum();
    let origin = vec3_at(x, body.origin);
    let u = &frame.axes;
    // R̂ as rows: rh[r][i] = (R(λ) u_i)_r / σ
    let g: [Vec3; 3] = [rotate(&lam, &u[0]), rotate(&lam, &u[1]), rotate(&lam, &u[2])];
    let rh: Mat3 = std::array::from_fn(|r| [g[0][r] / sigma, g[1][r] / sigma, g[2][r] / sigma]);
    let d: [Vec3; K] = std::array::from_fn(|j| sub(&vec3_at(x, points[j]), &origin));
    let ww: [Vec3; K] = std::array::from_fn(|j| {
        let wj = [w[3 * j], w[3 * j + 1], w[3 * j + 2]];
        [dot(&rh[0], &wj), dot(&rh[1], &wj), dot(&rh[2], &wj)]
    });
    let gm = g_matrix(&lam);
    let two_s = 2.0 / sigma;
    if out.has_grad() {
        let mut mom = [0.0; 3];
        for j in 0..K {
            out.add_grad(points[j], &ww[j], s);
            out.add_grad(body.origin, &ww[j], -s);
            let c = cross(&ww[j], &d[j]);
            for a in 0..3 {
                mom[a] += c[a];
            }
        }
        let gl: Quat = std::array::from_fn(|c2| two_s * (gm[0][c2] * mom[0] + gm[1][c2] * mom[1] + gm[2][c2] * mom[2]));
        out.add_grad(body.orientation, &gl, s);
    }
    if !out.has_hess() {
        return;
    }
    let n = out.hess.len().isqrt();
    // A_jk = R̂ h_jk R̂ᵀ
    let mut amat = [[[[0.0; 3]; 3]; K]; K];
    for j in 0..K {
        for k in 0..K {
            let mut t = [[0.0; 3]; 3];
            for r in 0..3 {
                for c2 in 0..3 {
                    t[r][c2] = (0..3).map(|q| rh[r][q] * h[(3 * j + q) * 3 * K + 3 * k + c2]).sum();
                }
            }
            for r in 0..3 {
                for c2 in 0..3 {
                    amat[j][k][r][c2] = (0..3).map(|q| t[r][q] * rh[c2][q]).sum();
                }
            }
        }
    }
    let nmat: [[[f64; 4]; 3]; K] = std::array::from_fn(|j| cross_mat(&d[j], &gm).map(|row| row.map(|v| two_s * v)));
    // point–orientation blocks: Y_j + S_j
    let mut xl = [[[0.0; 4]; 3]; K];
    let mut ol = [[0.0; 4]; 3];
    let mut ll = [[0.0; 4]; 4];
    for j in 0..K {
        let mut y = [[0.0; 4]; 3];
        for k in 0..K {
            for r in 0..3 {
                for c2 in 0..4 {
                    y[r][c2] += (0..3).map(|q| amat[j][k][r][q] * nmat[k][q][c2]).sum::<f64>();
                }
            }
        }
        // Σ_k N_jᵀ A_jk N_k = N_jᵀ Y_j
        for a in 0..4 {
            for c2 in 0..4 {
                ll[a][c2] += (0..3).map(|q| nmat[j][q][a] * y[q][c2]).sum::<f64>();
            }
        }
        let sj = cross_mat(&ww[j], &gm);
        for r in 0..3 {
            for c2 in 0..4 {
                xl[j][r][c2] = y[r][c2] - two_s * sj[r][c2];
                ol[r][c2] -= xl[j][r][c2];
            }
        }
    }
    // T: second derivative of Σ (R(λ) v_j)·d_j / σ at fixed d
    let mut qs = [[0.0; 4]; 4];
    let mut f = 0.0;
    for j in 0..K {
        let v = frame.body_vector(&[w[3 * j], w[3 * j + 1], w[3 * j + 2]]);
        let qm = q_matrix(&v, &d[j]);
        for a in 0..4 {
            for c2 in 0..4 {
                qs[a][c2] += qm[a][c2];
            }
        }
        f += dot(&rotate(&lam, &v), &d[j]);
    }
    let ql = q_times(&qs, &lam);
    let (s2, s3) = (sigma * sigma, sigma * sigma * sigma);
    for a in 0..4 {
        for c2 in 0..4 {
            ll[a][c2] += 2.0 * qs[a][c2] / sigma - 4.0 * (ql[a] * lam[c2] + lam[a] * ql[c2]) / s2
                + 8.0 * f * lam[a] * lam[c2] / s3;
        }
        ll[a][a] -= 2.0 * f / s2;
    }
    // scatter
    let hs = &mut *out.hess;
    let mut oo = [0.0; 9];
    for j in 0..K {
        let mut xo = [0.0; 9];
        for k in 0..K {
            let blk: [f64; 9] = std::array::from_fn(|i| amat[j][k][i / 3][i % 3]);
            add_block(hs, n, points[j], points[k], 3, 3, &blk, s);
            for i in 0..9 {
                xo[i] -= blk[i];
            }
        }
        add_block(hs, n, points[j], body.origin, 3, 3, &xo, s);
        let xot: [f64; 9] = std::array::from_fn(|i| xo[(i % 3) * 3 + i / 3]);
        add_block(hs, n, body.origin, points[j], 3, 3, &xot, s);
        for i in 0..9 {
            oo[i] -= xo[i];
        }
        let blk: [f64; 12] = std::array::from_fn(|i| xl[j][i / 4][i % 4]);
        add_block(hs, n, points[j], body.orientation, 3, 4, &blk, s);
        let blkt: [f64; 12] = std::array::from_fn(|i| xl[j][i % 3][i / 3]);
        add_block(hs, n, body.orientation, points[j], 4, 3, &blkt, s);
    }
    add_block(hs, n, body.origin, body.origin, 3, 3, &oo, s);
    let blk: [f64; 12] = std::array::from_fn(|i| ol[i / 4][i % 4]);
    add_block(hs, n, body.origin, body.orientation, 3, 4, &blk, s);
    let blkt: [f64; 12] = std::array::from_fn(|i| ol[i % 3][i / 3]);
    add_block(hs, n, body.orientation, body.origin, 4, 3, &blkt, s);
    let blk: [f64; 16] = std::array::from_fn(|i| ll[i / 4][i % 4]);
    add_block(hs, n, body.orientation, body.orientation, 4, 4, &blk, s);
}

/// Documentation of the parameters that place a shape in its body, shared by the element types
/// that carry shapes: `centre`, `x_axis`, `y_axis`, `rotation`.
pub mod docs {
    use mollier_core::registry::{ParamDoc, ParamKind};

    /// `body`: the body carrying an ellipsoid.
    pub const ELLIPSOID_BODY: ParamDoc = ParamDoc {
        name: "body",
        kind: ParamKind::Body,
        required: true,
        doc: "the body carrying the ellipsoid (its origin and orientation nodes)",
    };
    /// `semi_axes` of an ellipsoid.
    pub const SEMI_AXES: ParamDoc = ParamDoc {
        name: "semi_axes",
        kind: ParamKind::Point,
        required: true,
        doc: "the ellipsoid's three semi-axes (length unit, all positive), along its local x, y and z axes",
    };
    /// `centre`.
    pub const CENTRE: ParamDoc = ParamDoc {
        name: "centre",
        kind: ParamKind::Point,
        required: false,
        doc: "centre of the shape in the body frame (length unit); default [0, 0, 0], the body origin",
    };
    /// `x_axis`.
    pub const X_AXIS: ParamDoc = ParamDoc {
        name: "x_axis",
        kind: ParamKind::Vector,
        required: false,
        doc: "direction of the shape's local x axis in the body frame (normalised); default [1, 0, 0]. Not with `rotation`",
    };
    /// `y_axis`.
    pub const Y_AXIS: ParamDoc = ParamDoc {
        name: "y_axis",
        kind: ParamKind::Vector,
        required: false,
        doc: "direction of the shape's local y axis in the body frame, made perpendicular to x_axis; local z = x × y; default [0, 1, 0]. Not with `rotation`",
    };
    /// `rotation`.
    pub const ROTATION: ParamDoc = ParamDoc {
        name: "rotation",
        kind: ParamKind::Numbers,
        required: false,
        doc: "orientation of the shape's local axes in the body frame as three body-fixed X-Y-Z rotation angles (angle unit), R = Rx(a) Ry(b) Rz(c), as OpenSim's xyz_body_rotation; default [0, 0, 0]. Not with x_axis / y_axis",
    };

    /// What [`point_and_ellipsoid`](super::point_and_ellipsoid) reads besides `point`, in order.
    pub const ELLIPSOID: [ParamDoc; 6] = [ELLIPSOID_BODY, SEMI_AXES, CENTRE, X_AXIS, Y_AXIS, ROTATION];

    /// The parameters of an element read by [`point_and_ellipsoid`](super::point_and_ellipsoid):
    /// `point` (the element says what the point is), [`ELLIPSOID`], then the element's own
    /// `rest`; `N = 7 + R` of them (another `N` fails to compile in a `const`).
    pub const fn point_and_ellipsoid<const R: usize, const N: usize>(
        point: ParamDoc,
        rest: [ParamDoc; R],
    ) -> [ParamDoc; N] {
        assert!(N == 1 + ELLIPSOID.len() + R, "N must be 7 + R");
        let mut out = [point; N];
        let mut i = 0;
        while i < ELLIPSOID.len() {
            out[1 + i] = ELLIPSOID[i];
            i += 1;
        }
        let mut j = 0;
        while j < R {
            out[1 + ELLIPSOID.len() + j] = rest[j];
            j += 1;
        }
        out
    }
}

/// The local coordinate of the point of an element on a point and a body (SURFACE,
/// SOFT-CONTACT): the point's three at 0, then [`POINT_BODY`]'s seven.
pub const POINT: usize = 0;

/// Where the body's nodes sit in the local coordinates of an element on a point and a body: its
/// origin's three at 3, its orientation's four at 6.
pub const POINT_BODY: BodySlots = BodySlots { origin: 3, orientation: 6 };

/// The layout of an element on a point and a body ([`POINT`], [`POINT_BODY`]) with one mode.
pub fn point_on_body(
    point: mollier_core::NodeId,
    body: mollier_core::registry::Frame,
    mode: mollier_core::element::ModeInfo,
) -> mollier_core::element::Layout {
    use mollier_core::element::NodeKind;
    mollier_core::element::Layout::new(
        vec![
            (point, NodeKind::Position),
            (body.position, NodeKind::Position),
            (body.orientation, NodeKind::Orientation),
        ],
        vec![mode],
    )
}

/// A point and an ellipsoid on a body, as SURFACE-like elements read them: `point`, `body`,
/// `semi_axes` (all positive) and the shape frame ([`from_params`]).
pub fn point_and_ellipsoid(
    p: &mollier_core::registry::Params<'_>,
) -> Result<
    (mollier_core::NodeId, mollier_core::registry::Frame, mollier_core::geometry::Vec3, ShapeFrame),
    mollier_core::registry::ParamError,
> {
    use mollier_core::element::NodeKind;
    use mollier_core::registry::ParamError;
    let point = p.node("point", NodeKind::Position)?;
    let body = p.frame("body")?;
    let axes = p.point("semi_axes")?;
    if !axes.iter().all(|a| *a > 0.0) {
        return Err(ParamError::new(p.path("semi_axes"), format!("semi-axes must be positive, found {axes:?}")));
    }
    Ok((point, body, axes, from_params(p)?))
}

/// Read `centre`, `x_axis`, `y_axis` and `rotation` (see [`docs`]) from a parameter table.
pub fn from_params(p: &mollier_core::registry::Params<'_>) -> Result<ShapeFrame, mollier_core::registry::ParamError> {
    use mollier_core::registry::ParamError;
    let centre = if p.get("centre").is_some() { p.point("centre")? } else { [0.0; 3] };
    let x = p.opt_vector("x_axis")?;
    let y = p.opt_vector("y_axis")?;
    if p.get("rotation").is_some() {
        if x.is_some() || y.is_some() {
            return Err(ParamError::new(p.path("rotation"), "give either `rotation` or `x_axis`/`y_axis`, not both"));
        }
        let a = p.numbers("rotation", Some(3))?;
        let k = p.units().angle;
        return Ok(ShapeFrame::from_matrix(&body_fixed_xyz(&[a[0] * k, a[1] * k, a[2] * k]), centre));
    }
    let xv = x.unwrap_or([1.0, 0.0, 0.0]);
    let yv = y.unwrap_or([0.0, 1.0, 0.0]);
    ShapeFrame::from_axes(&xv, &yv, centre).ok_or_else(|| {
        let key = if y.is_some() { "y_axis" } else { "x_axis" };
        ParamError::new(p.path(key), "the axes must be non-zero and not parallel")
            .with_hint("x_axis and y_axis give two directions of the shape frame in the body frame")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mollier_core::geometry::{norm, quat_from_axis_angle};

    #[test]
    fn body_fixed_xyz_matches_successive_rotations() {
        let a = [0.3, -0.7, 1.1];
        let r = body_fixed_xyz(&a);
        // body-fixed X then Y then Z = quaternion product qx ⊗ qy ⊗ qz
        let qx = quat_from_axis_angle(&[1.0, 0.0, 0.0], a[0]);
        let qy = quat_from_axis_angle(&[0.0, 1.0, 0.0], a[1]);
        let qz = quat_from_axis_angle(&[0.0, 0.0, 1.0], a[2]);
        let q = mollier_core::geometry::quat_mul(&qx, &mollier_core::geometry::quat_mul(&qy, &qz));
        let rq = mollier_core::geometry::rotation(&q);
        for i in 0..3 {
            for j in 0..3 {
                assert!((r[i][j] - rq[i][j]).abs() < 1e-15);
            }
        }
    }

    #[test]
    fn local_and_global_are_inverse() {
        let f = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.4, 0.2, -0.9]), [0.1, -0.3, 0.25]);
        // not of unit norm: the frame is still a rigid one
        let lam = quat_from_axis_angle(&[0.2, -0.5, 0.8], 0.9).map(|v| 1.3 * v);
        let o = [1.0, 2.0, -0.5];
        let x = [0.3, 1.7, 0.2];
        let p = f.local(&lam, &o, &x);
        let back = f.global(&lam, &o, &p);
        assert!(norm(&sub(&back, &x)) < 1e-15);
        // distances are preserved
        let y = [-0.4, 0.3, 1.1];
        let q = f.local(&lam, &o, &y);
        assert!((norm(&sub(&p, &q)) - norm(&sub(&x, &y))).abs() < 1e-15);
    }

    /// `f = Σ c_ab p_a p_b + Σ l_a p_a` of two points: compare `chain` with central differences.
    #[test]
    fn chain_rule_matches_finite_differences() {
        let f = ShapeFrame::from_matrix(&body_fixed_xyz(&[0.4, 0.2, -0.9]), [0.1, -0.3, 0.25]);
        // off the unit sphere, where the 1/|λ|² terms matter
        let lam = quat_from_axis_angle(&[0.2, -0.5, 0.8], 0.9).map(|v| 0.8 * v);
        // layout: point A (0), body origin (3), orientation (6), point B (10)
        let mut x = vec![0.3, 1.7, 0.2, 1.0, 2.0, -0.5];
        x.extend_from_slice(&lam);
        x.extend_from_slice(&[-0.4, 0.9, 1.3]);
        let body = BodySlots { origin: 3, orientation: 6 };
        let cm: Vec<f64> = (0..36).map(|i| ((i * 7 % 11) as f64 - 5.0) * 0.1).collect();
        let sym = |a: usize, b: usize| 0.5 * (cm[a * 6 + b] + cm[b * 6 + a]);
        let lin = [0.3, -0.2, 0.5, 0.1, 0.7, -0.6];
        let fun = |x: &[f64]| -> f64 {
            let l: Quat = quat_at(x, 6);
            let pa = f.local(&l, &vec3_at(x, 3), &vec3_at(x, 0));
            let pb = f.local(&l, &vec3_at(x, 3), &vec3_at(x, 10));
            let p = [pa[0], pa[1], pa[2], pb[0], pb[1], pb[2]];
            let mut s = 0.0;
            for a in 0..6 {
                s += lin[a] * p[a];
                for b in 0..6 {
                    s += 0.5 * sym(a, b) * p[a] * p[b];
                }
            }
            s
        };
        let n = x.len();
        let analytic = |x: &[f64], grad: &mut [f64], hess: &mut [f64]| {
            let l: Quat = quat_at(x, 6);
            let pa = f.local(&l, &vec3_at(x, 3), &vec3_at(x, 0));
            let pb = f.local(&l, &vec3_at(x, 3), &vec3_at(x, 10));
            let p = [pa[0], pa[1], pa[2], pb[0], pb[1], pb[2]];
            let mut w = lin;
            let mut h = [0.0; 36];
            for a in 0..6 {
                for b in 0..6 {
                    w[a] += sym(a, b) * p[b];
                    h[a * 6 + b] = sym(a, b);
                }
            }
            let mut d = Derivs::new(n, grad, hess);
            chain(&f, body, &[0, 10], x, &w, &h, &mut d, 1.0);
        };
        let (mut g, mut hh) = (vec![0.0; n], vec![0.0; n * n]);
        analytic(&x, &mut g, &mut hh);
        let step = 1e-6;
        for i in 0..n {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[i] += step;
            xm[i] -= step;
            let fd = (fun(&xp) - fun(&xm)) / (2.0 * step);
            assert!((fd - g[i]).abs() < 1e-7, "grad {i}: {fd} vs {}", g[i]);
            let (mut gp, mut gm) = (vec![0.0; n], vec![0.0; n]);
            analytic(&xp, &mut gp, &mut []);
            analytic(&xm, &mut gm, &mut []);
            for j in 0..n {
                let fd2 = (gp[j] - gm[j]) / (2.0 * step);
                assert!((fd2 - hh[i * n + j]).abs() < 1e-6, "hess {i},{j}: {fd2} vs {}", hh[i * n + j]);
            }
        }
    }
}
