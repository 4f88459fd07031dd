//! Vectors, Euler parameters and rotation matrices.
//!
//! Conventions (see `docs/theory/kernel.md`):
//! - Euler parameters `λ = (λ0, λ1, λ2, λ3)`, scalar part first, as in SPACAR.
//! - `R(λ)` is the homogeneous quadratic form, `R(cλ) = c² R(λ)`: first derivatives are linear in
//!   λ and second derivatives are constant. On the unit sphere it is the usual rotation matrix.
//! - A body vector `u` is rotated to the global frame as `R(λ) u`.
//!
//! Generic functions work for any [`Real`] scalar; the `*_jacobian` and [`q_matrix`] helpers are
//! `f64` and give the exact derivatives every rotated-vector term needs.

use crate::scalar::{Real, c};

/// A 3-vector.
pub type Vec3<T = f64> = [T; 3];
/// Euler parameters `(λ0, λ1, λ2, λ3)`.
pub type Quat<T = f64> = [T; 4];
/// A 3x3 matrix, row-major.
pub type Mat3<T = f64> = [[T; 3]; 3];

/// `a · b`.
#[inline]
pub fn dot<T: Real>(a: &Vec3<T>, b: &Vec3<T>) -> T {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// `a × b`.
#[inline]
pub fn cross<T: Real>(a: &Vec3<T>, b: &Vec3<T>) -> Vec3<T> {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

/// `a - b`.
#[inline]
pub fn sub<T: Real>(a: &Vec3<T>, b: &Vec3<T>) -> Vec3<T> {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

/// `a + b`.
#[inline]
pub fn add<T: Real>(a: &Vec3<T>, b: &Vec3<T>) -> Vec3<T> {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}

/// `s a`.
#[inline]
pub fn scale<T: Real>(s: T, a: &Vec3<T>) -> Vec3<T> {
    [s * a[0], s * a[1], s * a[2]]
}

/// `|a|`.
#[inline]
pub fn norm<T: Real>(a: &Vec3<T>) -> T {
    dot(a, a).sqrt()
}

/// `M v`.
#[inline]
pub fn mat_vec<T: Real>(m: &Mat3<T>, v: &Vec3<T>) -> Vec3<T> {
    [dot(&m[0], v), dot(&m[1], v), dot(&m[2], v)]
}

/// `Mᵀ v`.
#[inline]
pub fn mat_t_vec<T: Real>(m: &Mat3<T>, v: &Vec3<T>) -> Vec3<T> {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2],
    ]
}

/// `A B`.
pub fn mat_mul<T: Real>(a: &Mat3<T>, b: &Mat3<T>) -> Mat3<T> {
    let mut r = [[c::<T>(0.0); 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            r[i][j] = a[i][0] * b[0][j] + a[i][1] * b[1][j] + a[i][2] * b[2][j];
        }
    }
    r
}

/// `Aᵀ`.
pub fn transpose<T: Real>(a: &Mat3<T>) -> Mat3<T> {
    let mut r = *a;
    for (i, row) in r.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = a[j][i];
        }
    }
    r
}

/// Read a 3-vector from a slice at `off`.
#[inline]
pub fn vec3_at<T: Copy>(x: &[T], off: usize) -> Vec3<T> {
    [x[off], x[off + 1], x[off + 2]]
}

/// Read Euler parameters from a slice at `off`.
#[inline]
pub fn quat_at<T: Copy>(x: &[T], off: usize) -> Quat<T> {
    [x[off], x[off + 1], x[off + 2], x[off + 3]]
}

/// Lift an `f64` vector into `T`.
#[inline]
pub fn lift<T: Real>(v: &Vec3) -> Vec3<T> {
    [c(v[0]), c(v[1]), c(v[2])]
}

/// The rotation matrix `R(λ)` in homogeneous quadratic form (exactly orthonormal when `|λ| = 1`).
pub fn rotation<T: Real>(l: &Quat<T>) -> Mat3<T> {
    let [l0, l1, l2, l3] = *l;
    let two = c::<T>(2.0);
    [
        [l0 * l0 + l1 * l1 - l2 * l2 - l3 * l3, two * (l1 * l2 - l0 * l3), two * (l1 * l3 + l0 * l2)],
        [two * (l1 * l2 + l0 * l3), l0 * l0 - l1 * l1 + l2 * l2 - l3 * l3, two * (l2 * l3 - l0 * l1)],
        [two * (l1 * l3 - l0 * l2), two * (l2 * l3 + l0 * l1), l0 * l0 - l1 * l1 - l2 * l2 + l3 * l3],
    ]
}

/// `R(λ) u` without forming the matrix.
#[inline]
pub fn rotate<T: Real>(l: &Quat<T>, u: &Vec3<T>) -> Vec3<T> {
    // R u = (λ0² − v·v) u + 2 (v·u) v + 2 λ0 (v × u), with v = (λ1, λ2, λ3)
    let v = [l[1], l[2], l[3]];
    let a = l[0] * l[0] - dot(&v, &v);
    let b = c::<T>(2.0) * dot(&v, u);
    let w = cross(&v, u);
    let two_l0 = c::<T>(2.0) * l[0];
    [a * u[0] + b * v[0] + two_l0 * w[0], a * u[1] + b * v[1] + two_l0 * w[1], a * u[2] + b * v[2] + two_l0 * w[2]]
}

/// [`rotate`] of constant body vectors `u` (`N` of them) by generic Euler parameters `λ`: the
/// products with `u`'s entries by `f64` and `λ0² − v·v`, `2 λ0` formed once for all, so that an
/// element over dual numbers turns its triads at a fraction of the cost (the same numbers as
/// [`rotate`] of the lifted vectors, but for the sign of a zero).
pub fn rotate_fixed<T: Real, const N: usize>(l: &Quat<T>, u: &[Vec3; N]) -> [Vec3<T>; N] {
    let v = [l[1], l[2], l[3]];
    let a = l[0] * l[0] - dot(&v, &v);
    let two_l0 = c::<T>(2.0) * l[0];
    u.map(|u| {
        let b = c::<T>(2.0) * (v[0] * u[0] + v[1] * u[1] + v[2] * u[2]);
        let w = [v[1] * u[2] - v[2] * u[1], v[2] * u[0] - v[0] * u[2], v[0] * u[1] - v[1] * u[0]];
        [0, 1, 2].map(|i| a * u[i] + b * v[i] + two_l0 * w[i])
    })
}

/// Quaternion product `a ⊗ b`, so that `R(a ⊗ b) = R(a) R(b)`.
pub fn quat_mul<T: Real>(a: &Quat<T>, b: &Quat<T>) -> Quat<T> {
    [
        a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3],
        a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2],
        a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1],
        a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0],
    ]
}

/// The conjugate `(λ0, −λ1, −λ2, −λ3)` of Euler parameters: the inverse rotation of unit ones,
/// `R(λ*) = R(λ)ᵀ` at any `|λ|`.
pub fn quat_conjugate<T: Real>(l: &Quat<T>) -> Quat<T> {
    [l[0], -l[1], -l[2], -l[3]]
}

/// The first and second time derivatives of `R(λ) u` ([`rotate`], the quadratic form, exact at
/// any `|λ|`) for a body vector `u` fixed in the body, from `λ` and its rates `[λ, λ̇, λ̈]`:
/// `2 vec(λ̇ ⊗ U ⊗ λ*)` and `2 vec(λ̈ ⊗ U ⊗ λ* + λ̇ ⊗ U ⊗ λ̇*)`, `U = (0, u)`.
pub fn rotate_rates(l: [&Quat; 3], u: &Vec3) -> [Vec3; 2] {
    let [l, v, a] = l;
    let uq = [0.0, u[0], u[1], u[2]];
    let vec2 = |q: Quat| [2.0 * q[1], 2.0 * q[2], 2.0 * q[3]];
    let vu = quat_mul(v, &uq);
    let first = vec2(quat_mul(&vu, &quat_conjugate(l)));
    let (s1, s2) = (quat_mul(&quat_mul(a, &uq), &quat_conjugate(l)), quat_mul(&vu, &quat_conjugate(v)));
    [first, vec2([0, 1, 2, 3].map(|i| s1[i] + s2[i]))]
}

/// The rates of an orientation `λ_P = λ_K ⊗ C` turned from a known one `λ_K` by an angle `θ`
/// about an axis fixed in both, `u` in `P`'s body frame (unit): with `C = λ_K* ⊗ λ_P` as it
/// stands (its sign kept), `U = (0, u)` and `(θ̇, θ̈) = angle` scaled by `s` (½ turning `P`
/// positively, −½ the other way),
/// `λ̇_P = λ̇_K ⊗ C + θ̇ λ_P ⊗ U` and `λ̈_P = λ̈_K ⊗ C + λ̇_K ⊗ Ċ + θ̈ λ_P ⊗ U + θ̇ λ̇_P ⊗ U`,
/// `Ċ = θ̇ C ⊗ U`. `known` is `[λ_K, λ̇_K, λ̈_K]`; returns `[λ̇_P, λ̈_P]`.
pub fn turned_rates(known: [&Quat; 3], lp: &Quat, u: &Vec3, angle: [f64; 2]) -> [Quat; 2] {
    let [lk, vk, ak] = known;
    let [td, tdd] = angle;
    let c = quat_mul(&[lk[0], -lk[1], -lk[2], -lk[3]], lp);
    let u = [0.0, u[0], u[1], u[2]];
    // written out: `[T; N]::map`'s closures were not inlined here (3 % of a tree's frame)
    #[inline(always)]
    fn add(a: Quat, b: Quat, s: f64) -> Quat {
        [a[0] + s * b[0], a[1] + s * b[1], a[2] + s * b[2], a[3] + s * b[3]]
    }
    let lp_u = quat_mul(lp, &u);
    let vp = add(quat_mul(vk, &c), lp_u, td);
    let cu = quat_mul(&c, &u);
    let cd = [td * cu[0], td * cu[1], td * cu[2], td * cu[3]];
    let ap = add(quat_mul(ak, &c), quat_mul(vk, &cd), 1.0);
    let ap = add(add(ap, lp_u, tdd), quat_mul(&vp, &u), td);
    [vp, ap]
}

/// Euler parameters of a rotation by `angle` (rad) about the unit `axis`.
pub fn quat_from_axis_angle(axis: &Vec3, angle: f64) -> Quat {
    let n = norm(axis);
    let (s, c) = (0.5 * angle).sin_cos();
    [c, s * axis[0] / n, s * axis[1] / n, s * axis[2] / n]
}

/// Euler parameters of an orthonormal matrix (Shepperd's method, sign chosen with `λ0 >= 0`).
pub fn quat_from_rotation(r: &Mat3) -> Quat {
    let tr = r[0][0] + r[1][1] + r[2][2];
    let cands = [tr, r[0][0], r[1][1], r[2][2]];
    let (k, _) =
        cands.iter().enumerate().fold((0, f64::NEG_INFINITY), |best, (i, &v)| if v > best.1 { (i, v) } else { best });
    let mut q = match k {
        0 => {
            let s = (1.0 + tr).sqrt() * 2.0;
            [0.25 * s, (r[2][1] - r[1][2]) / s, (r[0][2] - r[2][0]) / s, (r[1][0] - r[0][1]) / s]
        }
        1 => {
            let s = (1.0 + r[0][0] - r[1][1] - r[2][2]).sqrt() * 2.0;
            [(r[2][1] - r[1][2]) / s, 0.25 * s, (r[0][1] + r[1][0]) / s, (r[0][2] + r[2][0]) / s]
        }
        2 => {
            let s = (1.0 + r[1][1] - r[0][0] - r[2][2]).sqrt() * 2.0;
            [(r[0][2] - r[2][0]) / s, (r[0][1] + r[1][0]) / s, 0.25 * s, (r[1][2] + r[2][1]) / s]
        }
        _ => {
            let s = (1.0 + r[2][2] - r[0][0] - r[1][1]).sqrt() * 2.0;
            [(r[1][0] - r[0][1]) / s, (r[0][2] + r[2][0]) / s, (r[1][2] + r[2][1]) / s, 0.25 * s]
        }
    };
    if q[0] < 0.0 {
        q.iter_mut().for_each(|v| *v = -*v);
    }
    q
}

/// A triad `e` (its vectors the columns, global frame) in the body frame of a node at unit Euler
/// parameters `l`: the vectors `Rᵀ(λ) e_j`, and the Euler parameters of the matrix `Rᵀ(λ) e`
/// whose columns they are (an element's triad carried by each of its nodes, HINGE and BEAM).
pub fn body_triad(l: &Quat, e: &Mat3) -> ([Vec3; 3], Quat) {
    let b = mat_mul(&transpose(&rotation(l)), e);
    ([column(&b, 0), column(&b, 1), column(&b, 2)], quat_from_rotation(&b))
}

/// The symmetric 4x4 matrix `Q(u, d)` with `(R(λ) u) · d = λᵀ Q(u, d) λ`.
///
/// Hence `∂/∂λ = 2 Q λ` and `∂²/∂λ² = 2 Q` for constant `u` and `d`.
#[inline]
pub fn q_matrix(u: &Vec3, d: &Vec3) -> [[f64; 4]; 4] {
    q_matrix_of(&[0, 1, 2].map(|i| [0, 1, 2].map(|j| d[i] * u[j])))
}

/// `Σ_t Q(u_t, d_t)` from `c = Σ_t d_t u_tᵀ` (`c[i][j] = Σ d_i u_j`): `Q` is linear in `d uᵀ`,
/// so a weighted sum of terms `(R(λ) u_t)·d_t` needs one matrix.
#[inline]
pub fn q_matrix_of(c: &Mat3) -> [[f64; 4]; 4] {
    let tr = c[0][0] + c[1][1] + c[2][2];
    let w = [c[2][1] - c[1][2], c[0][2] - c[2][0], c[1][0] - c[0][1]];
    let mut q = [[0.0; 4]; 4];
    q[0][0] = tr;
    for i in 0..3 {
        q[0][i + 1] = w[i];
        q[i + 1][0] = w[i];
        for j in 0..3 {
            q[i + 1][j + 1] = c[i][j] + c[j][i] - if i == j { tr } else { 0.0 };
        }
    }
    q
}

/// `Q λ` for a 4x4 matrix.
#[inline]
pub fn q_times(q: &[[f64; 4]; 4], l: &Quat) -> Quat {
    let mut r = [0.0; 4];
    for i in 0..4 {
        r[i] = q[i][0] * l[0] + q[i][1] * l[1] + q[i][2] * l[2] + q[i][3] * l[3];
    }
    r
}

/// The 3x4 Jacobian `∂(R(λ) u)/∂λ` for a constant body vector `u`, row-major: row `i` is
/// `2 Q(u, e_i) λ`, in closed form: with `λ = (λ0, v)` and
/// `R u = (λ0² − v·v) u + 2 (v·u) v + 2 λ0 v × u`, the column of `λ0` is `2 (λ0 u + v × u)` and
/// the column of `v_k` is `2 (−v_k u + u_k v + (v·u) e_k + λ0 e_k × u)`.
#[inline]
pub fn rotate_jacobian(l: &Quat, u: &Vec3) -> [[f64; 4]; 3] {
    let [l0, v0, v1, v2] = *l;
    let (v, p) = ([v0, v1, v2], u);
    let vp = v[0] * p[0] + v[1] * p[1] + v[2] * p[2];
    let vxp = [v[1] * p[2] - v[2] * p[1], v[2] * p[0] - v[0] * p[2], v[0] * p[1] - v[1] * p[0]];
    // entry (i, k + 1) is 2 (−v_k p_i + p_k v_i + δ_ik v·p + λ0 (e_k × p)_i), written out: the
    // diagonal's first two terms cancel exactly and e_k × p has one zero per row
    let off = |i: usize, k: usize, e: f64| 2.0 * (-v[k] * p[i] + p[k] * v[i] + l0 * e);
    let d = 2.0 * vp;
    [
        [2.0 * (l0 * p[0] + vxp[0]), d, off(0, 1, p[2]), off(0, 2, -p[1])],
        [2.0 * (l0 * p[1] + vxp[1]), off(1, 0, -p[2]), d, off(1, 2, p[0])],
        [2.0 * (l0 * p[2] + vxp[2]), off(2, 0, p[1]), off(2, 1, -p[0]), d],
    ]
}

/// The 3x4 matrix `G(λ) = [−v | λ0 I + ṽ]` with spatial angular velocity `ω = 2 G λ̇`.
#[inline]
pub fn g_matrix(l: &Quat) -> [[f64; 4]; 3] {
    [[-l[1], l[0], -l[3], l[2]], [-l[2], l[3], l[0], -l[1]], [-l[3], -l[2], l[1], l[0]]]
}

/// The 3x4 matrix `Ḡ(λ) = [−v | λ0 I − ṽ]` with body angular velocity `ω_b = 2 Ḡ λ̇`.
#[inline]
pub fn gbar_matrix(l: &Quat) -> [[f64; 4]; 3] {
    [[-l[1], l[0], l[3], -l[2]], [-l[2], -l[3], l[0], l[1]], [-l[3], l[2], -l[1], l[0]]]
}

/// A unit vector perpendicular to `a` (unit): the axis of `a`'s smallest component, orthogonalised.
pub fn perpendicular(a: &Vec3) -> Vec3 {
    let mut k = 0;
    for i in 1..3 {
        if a[i].abs() < a[k].abs() {
            k = i;
        }
    }
    let mut e = [0.0; 3];
    e[k] = 1.0;
    let p = sub(&e, &scale(dot(&e, a), a));
    scale(1.0 / norm(&p), &p)
}

/// An orthonormal triad `[e_x, e_y, e_z]` (as matrix columns) with `e_x ∥ x_axis` and `e_y` the
/// part of `y_hint` perpendicular to it (or [`perpendicular`] when no hint is given).
///
/// Returns `None` when `x_axis` is zero or `y_hint` is (nearly) parallel to it.
pub fn triad(x_axis: &Vec3, y_hint: Option<&Vec3>) -> Option<Mat3> {
    let lx = norm(x_axis);
    if !(lx > 0.0) || !lx.is_finite() {
        return None;
    }
    let ex = scale(1.0 / lx, x_axis);
    let ey = match y_hint {
        Some(h) => {
            let hn = norm(h);
            if !(hn > 0.0) {
                return None;
            }
            let h = scale(1.0 / hn, h);
            let p = sub(&h, &scale(dot(&h, &ex), &ex));
            let pn = norm(&p);
            if pn < 1e-5 {
                return None;
            }
            scale(1.0 / pn, &p)
        }
        None => perpendicular(&ex),
    };
    let ez = cross(&ex, &ey);
    Some([[ex[0], ey[0], ez[0]], [ex[1], ey[1], ez[1]], [ex[2], ey[2], ez[2]]])
}

/// Column `j` of a matrix.
#[inline]
pub fn column(m: &Mat3, j: usize) -> Vec3 {
    [m[0][j], m[1][j], m[2][j]]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(q: Quat) -> Quat {
        let n = (q.iter().map(|v| v * v).sum::<f64>()).sqrt();
        q.map(|v| v / n)
    }

    #[test]
    fn rotation_is_orthonormal_and_matches_rotate() {
        let l = unit([0.3, -0.5, 0.7, 0.2]);
        let r = rotation(&l);
        let rtr = mat_mul(&transpose(&r), &r);
        for i in 0..3 {
            for j in 0..3 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((rtr[i][j] - want).abs() < 1e-14);
            }
        }
        let u = [0.4, -1.2, 2.0];
        let a = mat_vec(&r, &u);
        let b = rotate(&l, &u);
        for i in 0..3 {
            assert!((a[i] - b[i]).abs() < 1e-14);
        }
    }

    /// `rotate_fixed` is `rotate` of the lifted vectors, to the bit, over third-order dual
    /// numbers with every part of `λ` nonzero.
    #[test]
    fn rotating_fixed_vectors_is_rotating_lifted_ones() {
        use num_dual::HyperHyperDual64;
        let part = |i: usize, k: usize| 0.1 + ((7 * i + 3 * k) as f64 * 0.77).sin();
        let l: Quat<HyperHyperDual64> = std::array::from_fn(|i| {
            let p: [f64; 8] = std::array::from_fn(|k| part(i, k));
            HyperHyperDual64::new(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7])
        });
        let u = [[0.4, -1.2, 2.0], [-0.3, 0.0, 0.9]];
        let fixed = rotate_fixed(&l, &u);
        for (f, u) in fixed.iter().zip(&u) {
            let lifted = rotate(&l, &lift(u));
            for (a, b) in f.iter().zip(&lifted) {
                let parts = |d: &HyperHyperDual64| {
                    [d.re, d.eps1, d.eps2, d.eps3, d.eps1eps2, d.eps1eps3, d.eps2eps3, d.eps1eps2eps3]
                };
                assert_eq!(parts(a), parts(b));
            }
        }
    }

    #[test]
    fn q_matrix_identity_and_jacobian() {
        let l = [0.3, -0.5, 0.7, 0.2]; // not unit: the identity is homogeneous
        let u = [0.4, -1.2, 2.0];
        let d = [-0.3, 0.8, 1.1];
        let q = q_matrix(&u, &d);
        let ql = q_times(&q, &l);
        let quad: f64 = (0..4).map(|i| l[i] * ql[i]).sum();
        assert!((quad - dot(&rotate(&l, &u), &d)).abs() < 1e-13);
        let j = rotate_jacobian(&l, &u);
        let h = 1e-6;
        for k in 0..4 {
            let mut lp = l;
            let mut lm = l;
            lp[k] += h;
            lm[k] -= h;
            let (rp, rm) = (rotate(&lp, &u), rotate(&lm, &u));
            for i in 0..3 {
                assert!(((rp[i] - rm[i]) / (2.0 * h) - j[i][k]).abs() < 1e-8);
            }
        }
    }

    #[test]
    fn quaternion_product_composes_rotations() {
        let a = unit([0.9, 0.1, -0.3, 0.2]);
        let b = unit([0.2, 0.7, 0.4, -0.5]);
        let rab = rotation(&quat_mul(&a, &b));
        let ra_rb = mat_mul(&rotation(&a), &rotation(&b));
        for i in 0..3 {
            for j in 0..3 {
                assert!((rab[i][j] - ra_rb[i][j]).abs() < 1e-14);
            }
        }
        let back = quat_from_rotation(&rab);
        let ab = quat_mul(&a, &b);
        let s = if ab[0] < 0.0 { -1.0 } else { 1.0 };
        for i in 0..4 {
            assert!((back[i] - s * ab[i]).abs() < 1e-12);
        }
    }

    #[test]
    fn angular_velocity_matrices() {
        // ω_spatial = 2 G λ̇ and Ṙ = ω̃ R, checked by finite differences of R(λ(t))
        let l = unit([0.6, -0.2, 0.5, 0.3]);
        // a tangent velocity (λ·λ̇ = 0)
        let mut ld = [0.1, 0.4, -0.3, 0.2];
        let p: f64 = (0..4).map(|i| l[i] * ld[i]).sum();
        for i in 0..4 {
            ld[i] -= p * l[i];
        }
        let g = g_matrix(&l);
        let w: Vec3 = [0, 1, 2].map(|i| 2.0 * (0..4).map(|k| g[i][k] * ld[k]).sum::<f64>());
        let h = 1e-6;
        let lp: Quat = [0, 1, 2, 3].map(|i| l[i] + h * ld[i]);
        let lm: Quat = [0, 1, 2, 3].map(|i| l[i] - h * ld[i]);
        let u = [0.3, -0.7, 1.1];
        let rd: Vec3 = {
            let (a, b) = (rotate(&lp, &u), rotate(&lm, &u));
            [0, 1, 2].map(|i| (a[i] - b[i]) / (2.0 * h))
        };
        let want = cross(&w, &rotate(&l, &u));
        for i in 0..3 {
            assert!((rd[i] - want[i]).abs() < 1e-8);
        }
        // body angular velocity: ω_b = Rᵀ ω
        let gb = gbar_matrix(&l);
        let wb: Vec3 = [0, 1, 2].map(|i| 2.0 * (0..4).map(|k| gb[i][k] * ld[k]).sum::<f64>());
        let wb2 = mat_t_vec(&rotation(&l), &w);
        for i in 0..3 {
            assert!((wb[i] - wb2[i]).abs() < 1e-12);
        }
    }
}
