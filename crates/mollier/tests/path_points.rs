//! Posture-dependent path points (`path-point`) through the kernel, on
//! `models/mechanisms/path-points.toml`: the muscles' lengths against the geometry computed here
//! independently, their first-order transfer functions (minus the moment arms) against central
//! differences of the lengths, and the second-order ones against central differences of the
//! first, on both sides of the conditional point's switch.

use std::path::PathBuf;

use mollier::KinematicsRun;
use mollier_path_point::function::Spline;

fn model() -> mollier::Compiled {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms/path-points.toml");
    mollier::load(&path, &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()))
}

/// The shank's point `b` (shank frame, = global at r = 0) turned by the knee's change `r`.
fn turned(r: f64, b: [f64; 3]) -> [f64; 3] {
    let (s, c) = r.sin_cos();
    [c * b[0] - s * b[1], s * b[0] + c * b[1], b[2]]
}

fn dist(a: [f64; 3], b: [f64; 3]) -> f64 {
    (0..3).map(|i| (a[i] - b[i]).powi(2)).sum::<f64>().sqrt()
}

/// Both lengths at knee change `r`, from the model file's numbers.
fn lengths(r: f64) -> [f64; 2] {
    let q = 0.2 + r;
    let spline = Spline::fmm(vec![-2.0, -1.0, 0.2, 0.5, 1.5], vec![0.015, 0.03, 0.04, 0.05, 0.06]);
    let patella = turned(r, [spline.value(q), 0.01 * q - 0.05, 0.003]);
    let quad = dist([0.03, 0.35, 0.01], patella) + dist(patella, turned(r, [0.035, -0.09, 0.0]));
    let (o, i) = ([-0.06, 0.3, -0.01], turned(r, [-0.02, -0.12, 0.0]));
    let ham = if (-0.5..=0.3).contains(&q) {
        let c = turned(r, [0.05, -0.1, 0.01]);
        dist(o, c) + dist(c, i)
    } else {
        dist(o, i)
    };
    [quad, ham]
}

#[test]
fn lengths_and_transfer_functions_follow_the_moving_and_conditional_points() {
    let c = model();
    let mut run = KinematicsRun::new(&c).with_second_order();
    let header = run.deformation_header();
    let col = |n: &str| header.iter().position(|h| h == n).unwrap_or_else(|| panic!("{n} in {header:?}"));
    let (quad, ham) = (col("quadriceps.elongation"), col("hamstring.elongation"));
    let th = run.transfer_header();
    let tcol = |n: &str| th.iter().position(|h| h.starts_with(n)).unwrap_or_else(|| panic!("{n} in {th:?}"));
    let (tquad, tham) = (tcol("quadriceps.elongation"), tcol("hamstring.elongation"));
    let l0 = lengths(0.0);
    let h = 1e-5;
    let mut switched = 0;
    // over the spline's knots and beyond, both sides of the switches at r = -0.7 and 0.1
    for k in 0..=24 {
        let r = -1.9 + 3.4 * k as f64 / 24.0;
        let f = run.solve(&[r]).unwrap_or_else(|e| panic!("r = {r}: {e}"));
        let want = lengths(r);
        let got = [f.deformations[quad] + l0[0], f.deformations[ham] + l0[1]];
        for m in 0..2 {
            assert!((got[m] - want[m]).abs() < 1e-12, "r = {r}: muscle {m}: {} against {}", got[m], want[m]);
            // ∂L/∂q against central differences of the independent lengths (away from a switch)
            let fd = (lengths(r + h)[m] - lengths(r - h)[m]) / (2.0 * h);
            let t = f.transfer[[tquad, tham][m]];
            assert!((t - fd).abs() < 1e-8, "r = {r}: muscle {m}: ∂L/∂q {t} against {fd}");
            let d2 = (lengths(r + h)[m] - 2.0 * lengths(r)[m] + lengths(r - h)[m]) / (h * h);
            let s = f.second_order[[tquad, tham][m]];
            assert!((s - d2).abs() < 1e-4 * (1.0 + d2.abs()), "r = {r}: muscle {m}: ∂²L/∂q² {s} against {d2}");
        }
        switched += usize::from(!(-0.5..=0.3).contains(&(0.2 + r)));
    }
    assert!(switched >= 5, "the conditional point was inactive at {switched} postures only");
}

#[test]
fn a_misplaced_moving_point_is_refused_at_its_element() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms/path-points.toml");
    let text = std::fs::read_to_string(&path)
        .unwrap()
        .replace("position = [0.04, -0.048, 0.003]", "position = [0.04, -0.047, 0.003]");
    let err = match mollier::load_text("moved.toml", &text, &mollier::registry()) {
        Ok(_) => panic!("a point 1 mm off its place was accepted"),
        Err(d) => d.render(),
    };
    assert!(err.contains("patella_place") && err.contains("place it at [0.04, -0.048"), "{err}");
}
