//! The mechanism files in `models/mechanisms/`, compiled and run through their motion files,
//! against closed-form solutions written out here from the geometry in the files' comments.

use std::collections::HashMap;
use std::f64::consts::{FRAC_PI_2, PI, TAU};
use std::path::PathBuf;

use mollier::{Compiled, KinematicsRun};

fn mechanism(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms").join(name)
}

fn load(name: &str) -> Compiled {
    let registry = mollier::registry();
    match mollier::load(&mechanism(name), &registry) {
        Ok(c) => c,
        Err(d) => panic!("{}", d.render()),
    }
}

/// Every frame of a motion file: time and the outputs by column name.
fn run(model: &str, motion: &str) -> Vec<(f64, HashMap<String, f64>)> {
    let c = load(model);
    let m = mollier::read_motion(&mechanism(motion), &c.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = KinematicsRun::new(&c);
    let header: Vec<String> =
        [run.position_header(), run.deformation_header(), run.transfer_header()].into_iter().flatten().collect();
    m.times
        .iter()
        .zip(&m.q)
        .map(|(t, q)| {
            let f = run.solve(q).unwrap_or_else(|e| panic!("{model} at t = {t}: {e}"));
            let values = f.positions.iter().chain(&f.deformations).chain(&f.transfer).copied();
            (*t, header.iter().cloned().zip(values).collect())
        })
        .collect()
}

/// Difference of two angles, in (−π, π].
fn angle_diff(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(TAU);
    if d > PI { d - TAU } else { d }
}

fn assert_close(what: &str, t: f64, got: f64, want: f64, tol: f64) {
    assert!((got - want).abs() <= tol, "{what} at t = {t}: got {got}, want {want} (difference {:e})", got - want);
}

include!("fixtures/mechanisms.rs");

#[test]
fn every_mechanism_is_well_posed_with_its_degrees_of_freedom() {
    let registry = mollier::registry();
    for (file, dof) in MECHANISMS {
        let c = load(file);
        let r = mollier::check(&c, &registry);
        assert!(r.is_well_posed(), "{file}: {:?}", r.diagnostics);
        assert_eq!((r.dof, c.model.n_q(), r.analysis.rank), (dof, dof, Some(r.analysis.unknowns)), "{file}");
    }
}

/// Rocker angle θ4 of a four-bar for crank angle θ2 (Freudenstein), both assembly branches.
fn freudenstein(a: f64, b: f64, c: f64, d: f64, t2: f64) -> [f64; 2] {
    let (k1, k2, k3) = (d / a, d / c, (a * a - b * b + c * c + d * d) / (2.0 * a * c));
    let ca = t2.cos() - k1 - k2 * t2.cos() + k3;
    let cb = -2.0 * t2.sin();
    let cc = k1 - (k2 + 1.0) * t2.cos() + k3;
    let disc = (cb * cb - 4.0 * ca * cc).sqrt();
    [2.0 * (-cb + disc).atan2(2.0 * ca), 2.0 * (-cb - disc).atan2(2.0 * ca)]
}

#[test]
fn four_bar_follows_freudensteins_equation() {
    // geometry of four-bar.toml in metres: A = 0, D = (1, 0, 0), B = (0, 0.4, 0), C = (1.3, 0.8, 0)
    let (a, d) = (0.4, 1.0);
    let b = (1.3f64 * 1.3 + 0.4 * 0.4).sqrt();
    let c = (0.3f64 * 0.3 + 0.8 * 0.8).sqrt();
    let t4_0 = 0.8f64.atan2(0.3);
    let branch =
        freudenstein(a, b, c, d, FRAC_PI_2).iter().position(|t| angle_diff(*t, t4_0).abs() < 1e-12).expect("a branch");
    let frames = run("four-bar.toml", "four-bar-motion.csv");
    assert_eq!(frames.len(), 73);
    for (t, v) in &frames {
        let t2 = FRAC_PI_2 + v["crank_joint.rotation"];
        let t4 = freudenstein(a, b, c, d, t2)[branch];
        assert_close("rocker angle", *t, angle_diff(v["rocker_joint.rotation"], t4 - t4_0), 0.0, 1e-10);
        assert_close("C.x", *t, v["rocker.C.x"], d + c * t4.cos(), 1e-10);
        assert_close("C.y", *t, v["rocker.C.y"], c * t4.sin(), 1e-10);
        assert_close("C.z", *t, v["rocker.C.z"], 0.0, 1e-12);
        // velocity ratio dθ4/dθ2 = a sin(θ2 − θ3) / (c sin(θ4 − θ3)), θ3 the coupler's angle
        let (bx, by) = (a * t2.cos(), a * t2.sin());
        let t3 = (c * t4.sin() - by).atan2(d + c * t4.cos() - bx);
        let ratio = a * (t2 - t3).sin() / (c * (t4 - t3).sin());
        assert_close("dθ4/dθ2", *t, v["rocker_joint.rotation/crank_joint.rotation"], ratio, 1e-9);
        assert_close("coupler length", *t, v["coupler.elongation"], 0.0, 1e-12);
    }
}

#[test]
fn slider_crank_follows_its_closed_form() {
    let (r, l) = (0.3, 0.5);
    for (t, v) in run("slider-crank.toml", "slider-crank-motion.csv") {
        let th = FRAC_PI_2 + v["crank_joint.rotation"];
        let root = (l * l - (r * th.sin()).powi(2)).sqrt();
        let x = r * th.cos() + root;
        let dx = -r * th.sin() - r * r * th.sin() * th.cos() / root;
        assert_close("slider.x", t, v["slider.x"], x, 1e-11);
        assert_close("slider.y", t, v["slider.y"], 0.0, 0.0);
        // the travel truss runs from (−1, 0, 0) to the slider, 1.4 m long initially
        assert_close("travel", t, v["travel.elongation"], x - 0.4, 1e-11);
        assert_close("dx/dθ", t, v["travel.elongation/crank_joint.rotation"], dx, 1e-10);
    }
}

type M3 = [[f64; 3]; 3];

fn mul(a: &M3, b: &M3) -> M3 {
    let mut m = [[0.0; 3]; 3];
    for i in 0..3 {
        for j in 0..3 {
            m[i][j] = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

fn apply(m: &M3, v: &[f64; 3]) -> [f64; 3] {
    [0, 1, 2].map(|i| (0..3).map(|k| m[i][k] * v[k]).sum())
}

/// Rotation about axis `k` by `t`, and its derivative with respect to `t`.
fn rot(k: usize, t: f64) -> (M3, M3) {
    let (s, c) = t.sin_cos();
    let (i, j) = ((k + 1) % 3, (k + 2) % 3);
    let (mut r, mut d) = ([[0.0; 3]; 3], [[0.0; 3]; 3]);
    r[k][k] = 1.0;
    (r[i][i], r[i][j], r[j][i], r[j][j]) = (c, -s, s, c);
    (d[i][i], d[i][j], d[j][i], d[j][j]) = (-s, -c, c, -s);
    (r, d)
}

#[test]
fn spherical_joint_turns_the_arm_by_yaw_pitch_roll_and_gives_the_muscles_moment_arms() {
    let tip0 = [0.3, 0.1, 0.2];
    let m = [0.2, -0.3, 0.1];
    let dist = |p: &[f64; 3]| ((p[0] - m[0]).powi(2) + (p[1] - m[1]).powi(2) + (p[2] - m[2]).powi(2)).sqrt();
    let l0 = dist(&tip0);
    let frames = run("spherical-joint.toml", "spherical-joint-motion.mot");
    // the motion file is in degrees: its second row has yaw = 60 sin(2π/40) degrees
    let yaw1 = frames[1].1["yaw.rotation"];
    assert!((yaw1 - (60.0 * (TAU / 40.0).sin()).to_radians()).abs() < 1e-12, "{yaw1}");
    for (t, v) in &frames {
        let (rz, dz) = rot(2, v["yaw.rotation"]);
        let (ry, dy) = rot(1, v["pitch.rotation"]);
        let (rx, dx) = rot(0, v["roll.rotation"]);
        let tip = apply(&mul(&mul(&rz, &ry), &rx), &tip0);
        for (k, a) in ["x", "y", "z"].iter().enumerate() {
            assert_close(&format!("tip.{a}"), *t, v[&format!("arm.tip.{a}")], tip[k], 1e-11);
        }
        let l = dist(&tip);
        assert_close("muscle length", *t, v["muscle.elongation"], l - l0, 1e-11);
        // dL/dq = u · (∂R/∂q) tip0 with u the muscle's direction
        let u = [0, 1, 2].map(|k| (tip[k] - m[k]) / l);
        let partials = [mul(&mul(&dz, &ry), &rx), mul(&mul(&rz, &dy), &rx), mul(&mul(&rz, &ry), &dx)];
        for (q, dr) in ["yaw.rotation", "pitch.rotation", "roll.rotation"].iter().zip(&partials) {
            let dtip = apply(dr, &tip0);
            let want: f64 = (0..3).map(|k| u[k] * dtip[k]).sum();
            assert_close(&format!("dL/d{q}"), *t, v[&format!("muscle.elongation/{q}")], want, 1e-10);
        }
    }
}

#[test]
fn rssr_closes_its_spatial_loop_as_the_closed_form_says() {
    // geometry of rssr.toml: crank radius r about z at 0, rocker radius c about x at D,
    // coupler length l; rocker angle φ of C − D from y towards z, 90° initially
    let (r, c) = (0.3, 0.8);
    let dp = [0.9, 0.4, 0.7];
    let l = ((0.9f64 - 0.3).powi(2) + 0.4f64.powi(2) + 1.5f64.powi(2)).sqrt();
    let (mut phi_prev, phi0) = (FRAC_PI_2, FRAC_PI_2);
    for (t, v) in run("rssr.toml", "rssr-motion.csv") {
        let th = v["crank_joint.rotation"];
        let (bx, by) = (r * th.cos(), r * th.sin());
        // P cos φ + Q sin φ = K from |C − B| = l
        let p = 2.0 * c * (dp[1] - by);
        let q = 2.0 * c * dp[2];
        let k = l * l - (dp[0] - bx).powi(2) - (dp[1] - by).powi(2) - dp[2] * dp[2] - c * c;
        let base = q.atan2(p);
        let spread = (k / p.hypot(q)).acos();
        let phi = [base + spread, base - spread]
            .into_iter()
            .min_by(|a, b| angle_diff(*a, phi_prev).abs().total_cmp(&angle_diff(*b, phi_prev).abs()))
            .expect("two candidates");
        phi_prev = phi;
        assert_close("rocker angle", t, angle_diff(v["rocker_joint.rotation"], phi - phi0), 0.0, 1e-10);
        assert_close("C.y", t, v["rocker.C.y"], dp[1] + c * phi.cos(), 1e-10);
        assert_close("C.z", t, v["rocker.C.z"], dp[2] + c * phi.sin(), 1e-10);
        // dφ/dθ = −F_θ / F_φ for F = P cos φ + Q sin φ − K
        let (dbx, dby) = (-r * th.sin(), r * th.cos());
        let f_th = -2.0 * c * dby * phi.cos() - (2.0 * (dp[0] - bx) * dbx + 2.0 * (dp[1] - by) * dby);
        let f_phi = -p * phi.sin() + q * phi.cos();
        assert_close("dφ/dθ", t, v["rocker_joint.rotation/crank_joint.rotation"], -f_th / f_phi, 1e-9);
    }
}

/// Length (m) of the shortest path from `o` to `i` in the plane that does not enter the circle
/// of radius `r` about the origin: straight, or two tangents and the arc between them.
fn around_circle(o: [f64; 2], i: [f64; 2], r: f64) -> (f64, bool) {
    let (a, b) = (o[0].hypot(o[1]), i[0].hypot(i[1]));
    let between = ((o[0] * i[0] + o[1] * i[1]) / (a * b)).clamp(-1.0, 1.0).acos();
    let arc = between - (r / a).acos() - (r / b).acos();
    if arc > 0.0 {
        ((a * a - r * r).sqrt() + (b * b - r * r).sqrt() + r * arc, true)
    } else {
        ((o[0] - i[0]).hypot(o[1] - i[1]), false)
    }
}

fn turned(p: [f64; 2], th: f64) -> [f64; 2] {
    [p[0] * th.cos() - p[1] * th.sin(), p[0] * th.sin() + p[1] * th.cos()]
}

#[test]
fn wrapping_muscles_touch_down_and_lift_off_with_continuous_moment_arms() {
    // wrapping.toml in metres: the sphere (r 40 mm) and the cylinder (r 30 mm, along the hinge
    // axis) are centred on the hinge, and each muscle lies in a plane normal to it, so its path
    // is planar: straight, or tangent–arc–tangent around a circle
    let frames = run("wrapping.toml", "wrapping-motion.csv");
    for (muscle, o, i0, r) in
        [("over_sphere", [-0.2, 0.06], [0.2, 0.05], 0.04), ("over_cylinder", [-0.15, 0.06], [0.25, 0.03], 0.03)]
    {
        let (l0, _) = around_circle(o, i0, r);
        let mut wrapped = [false, false];
        for (t, v) in &frames {
            let th = v["elbow.rotation"];
            let (l, on) = around_circle(o, turned(i0, th), r);
            wrapped[usize::from(on)] = true;
            assert_close(&format!("{muscle} elongation"), *t, v[&format!("{muscle}.elongation")], l - l0, 1e-12);
            let h = 1e-6;
            let dl =
                (around_circle(o, turned(i0, th + h), r).0 - around_circle(o, turned(i0, th - h), r).0) / (2.0 * h);
            let got = v[&format!("{muscle}.elongation/elbow.rotation")];
            assert_close(&format!("{muscle} dl/dθ"), *t, got, dl, 1e-8);
            if on {
                // wrapped around the joint's centre, the moment arm is the radius
                assert_close(&format!("{muscle} moment arm"), *t, got, -r, 1e-12);
            }
        }
        assert_eq!(wrapped, [true, true], "{muscle} both wraps and runs straight during the motion");
    }
}

#[test]
fn wrapping_over_the_ellipsoid_has_the_derivative_of_its_length() {
    // no closed form: the transfer function against central differences of the solved
    // elongation, and the length never shorter than the straight line
    let c = load("wrapping.toml");
    let m =
        mollier::read_motion(&mechanism("wrapping-motion.csv"), &c.inputs).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut run = KinematicsRun::new(&c);
    let col = |h: Vec<String>, n: &str| h.iter().position(|x| x == n).unwrap_or_else(|| panic!("no column {n}"));
    let e = col(run.deformation_header(), "over_ellipsoid.elongation");
    let dfe = col(run.transfer_header(), "over_ellipsoid.elongation/elbow.rotation");
    let pos = run.position_header();
    let (o, i) = (col(pos.clone(), "ground.ellipsoid_origin.x"), col(pos, "arm.ellipsoid_insertion.x"));
    let el = c.elements.iter().find(|u| u.name == "over_ellipsoid").expect("the element").id;
    let mode = c.model.mode_by_name(el, "elongation").expect("its mode");
    let l0 = c.model.mode_reference(mode).expect("a reference length");
    let mut lifted = [false, false];
    for q in &m.q {
        let f = run.solve(q).unwrap_or_else(|err| panic!("{err}"));
        let h = 1e-5;
        let plus = run.solve(&[q[0] + h]).expect("solves").deformations[e];
        let minus = run.solve(&[q[0] - h]).expect("solves").deformations[e];
        assert_close("ellipsoid dl/dθ", q[0], f.transfer[dfe], (plus - minus) / (2.0 * h), 1e-8);
        let straight = (0..3).map(|k| (f.positions[o + k] - f.positions[i + k]).powi(2)).sum::<f64>().sqrt();
        let length = l0 + f.deformations[e];
        assert!(length >= straight - 1e-12, "at θ = {}: path {length} shorter than the line {straight}", q[0]);
        lifted[usize::from(length > straight + 1e-9)] = true;
    }
    assert_eq!(lifted, [true, true], "the ellipsoid path both wraps and runs straight");
}
