//! The joint models of the Delft report (`models/joints/`) through the `mollier` command: `check`,
//! `kinematics`, `inverse-dynamics` (their passive moments against the closed forms of their
//! torque functions) and `simulate`.

use std::path::{Path, PathBuf};

mod support;
use support::{mollier, path_str, root, scratch, text};

/// A CSV file: its header, its rows, and a column finder.
fn table(path: &Path) -> (Vec<String>, Vec<Vec<f64>>, impl Fn(&str) -> usize + use<>) {
    let s = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut lines = s.lines();
    let header: Vec<String> = lines.next().expect("header").split(',').map(str::to_string).collect();
    let rows = lines.map(|l| l.split(',').map(|v| v.parse().expect("a number")).collect()).collect();
    let h = header.clone();
    (header, rows, move |name: &str| h.iter().position(|c| c == name).unwrap_or_else(|| panic!("no column {name}")))
}

/// Run `mollier <command> <model> [--motion <motion>] --out <dir>` and insist on success.
fn run(command: &str, model: &str, motion: Option<&str>, dir: &Path, extra: &[&str]) -> String {
    let mut args = vec![command, model];
    if let Some(m) = motion {
        args.extend(["--motion", m]);
    }
    args.extend(["--out", path_str(dir)]);
    args.extend(extra);
    let out = mollier(&args);
    assert_eq!(out.status.code(), Some(0), "{command} {model}: {}{}", text(&out.stdout), text(&out.stderr));
    text(&out.stderr)
}

/// The model file with `from` replaced by `to`, written to `dir`.
fn variant(model: &str, dir: &Path, replacements: &[(&str, &str)]) -> PathBuf {
    let mut s = std::fs::read_to_string(root().join(model)).expect("the model");
    for (from, to) in replacements {
        assert!(s.contains(from), "{model} has no `{from}`");
        s = s.replace(from, to);
    }
    let p = dir.join(Path::new(model).file_name().expect("a file name"));
    std::fs::write(&p, s).expect("written");
    p
}

fn check_lists(model: &str, line: &str) {
    let out = mollier(&["check", model]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains(line), "{stdout}");
    assert!(stdout.contains("well posed: yes"), "{stdout}");
}

// ---- cardan joint: models/joints/cardan-hip.toml ----

const HIP: &str = "models/joints/cardan-hip.toml";
const HIP_MOTION: &str = "models/joints/cardan-hip-motion.csv";

#[test]
fn the_cardan_hip_is_well_posed() {
    check_lists(HIP, "cardan-joint  phi (free), theta (free), psi (free)");
}

#[test]
fn the_cardan_angles_of_the_hip_are_its_driven_hinge_rotations() {
    // the three hinges make the cardan sequence x_i, y', z'': the angles are their rotations
    let dir = scratch("cardan-kinematics");
    run("kinematics", HIP, Some(HIP_MOTION), &dir, &[]);
    let (_, rows, at) = table(&dir.join("deformations.csv"));
    assert_eq!(rows.len(), 41);
    let mut worst: f64 = 0.0;
    for r in &rows {
        for (hinge, mode) in [("flexion", "phi"), ("abduction", "theta"), ("axial", "psi")] {
            let d = (r[at(&format!("hip.{mode}"))] - r[at(&format!("{hinge}.rotation"))]).abs();
            worst = worst.max(d);
        }
    }
    assert!(worst < 1e-12, "{worst}");
    assert!((rows[40][at("hip.phi")] - 1.6).abs() < 1e-12);
}

/// The hip's flexion table (`torque_phi` of the model): angles (rad) and moments (N m).
const HIP_PHI_TABLE: ([f64; 6], [f64; 6]) = ([-0.6, -0.3, 0.0, 1.0, 1.5, 2.0], [-60.0, -8.0, 0.0, 4.0, 25.0, 90.0]);

/// The monotone piecewise cubic Hermite interpolant of Fritsch & Carlson with the node slopes of
/// Fritsch & Butland (PCHIP, as SciPy's `PchipInterpolator` defines them) at `x` inside the table.
fn pchip(xs: &[f64], ys: &[f64], x: f64) -> f64 {
    let n = xs.len();
    let h: Vec<f64> = (0..n - 1).map(|k| xs[k + 1] - xs[k]).collect();
    let del: Vec<f64> = (0..n - 1).map(|k| (ys[k + 1] - ys[k]) / h[k]).collect();
    let mut d = vec![0.0; n];
    for k in 1..n - 1 {
        if del[k - 1] * del[k] > 0.0 {
            // the weighted harmonic mean of the neighbouring secants
            let (w1, w2) = (2.0 * h[k] + h[k - 1], h[k] + 2.0 * h[k - 1]);
            d[k] = (w1 + w2) / (w1 / del[k - 1] + w2 / del[k]);
        }
    }
    // the ends: the three-point formula, kept to the secant's sign and to three times it
    let end = |h0: f64, h1: f64, m0: f64, m1: f64| {
        let d = ((2.0 * h0 + h1) * m0 - h0 * m1) / (h0 + h1);
        if d.signum() != m0.signum() {
            0.0
        } else if m0.signum() != m1.signum() && d.abs() > 3.0 * m0.abs() {
            3.0 * m0
        } else {
            d
        }
    };
    d[0] = end(h[0], h[1], del[0], del[1]);
    d[n - 1] = end(h[n - 2], h[n - 3], del[n - 2], del[n - 3]);
    let k = (0..n - 1).find(|&k| x <= xs[k + 1]).expect("inside the table");
    let t = (x - xs[k]) / h[k];
    let (h00, h10, h01, h11) = (
        2.0 * t.powi(3) - 3.0 * t * t + 1.0,
        t.powi(3) - 2.0 * t * t + t,
        -2.0 * t.powi(3) + 3.0 * t * t,
        t.powi(3) - t * t,
    );
    h00 * ys[k] + h10 * h[k] * d[k] + h01 * ys[k + 1] + h11 * h[k] * d[k + 1]
}

#[test]
fn the_pchip_written_here_passes_its_nodes_and_stays_monotone() {
    let (xs, ys) = HIP_PHI_TABLE;
    for (x, y) in xs.iter().zip(&ys) {
        assert!((pchip(&xs, &ys, *x) - y).abs() < 1e-12);
    }
    let samples: Vec<f64> = (0..=260).map(|i| pchip(&xs, &ys, -0.6 + 0.01 * i as f64)).collect();
    assert!(samples.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn the_cardan_hips_passive_moments_are_its_torque_functions() {
    let dir = scratch("cardan-inverse");
    run("inverse-dynamics", HIP, Some(HIP_MOTION), &dir, &[]);
    let (_, rows, at) = table(&dir.join("passive.csv"));
    let (_, motion, mt) = table(&root().join(HIP_MOTION));
    assert_eq!(rows.len(), motion.len());
    let mut worst: f64 = 0.0;
    for (k, (r, m)) in rows.iter().zip(&motion).enumerate() {
        // the motion is a·(1 − cos πt)/2: its rate a·(π/2) sin πt
        let t = m[0];
        let rate = |a: f64| a * std::f64::consts::FRAC_PI_2 * (std::f64::consts::PI * t).sin();
        let (theta, psi) = (m[mt("abduction.rotation")], m[mt("axial.rotation")]);
        // M(θ) = 5 θ + 60 θ³ and 0.5 N m s/rad; M(ψ) = 3 ψ and 0.2 N m s/rad
        let want_theta = 5.0 * theta + 60.0 * theta.powi(3) + 0.5 * rate(0.35);
        let want_psi = 3.0 * psi + 0.2 * rate(0.3);
        // the velocities come from the motion's splines: O(h²) away from the analytic rate
        let d = (r[at("hip.theta")] - want_theta).abs().max((r[at("hip.psi")] - want_psi).abs());
        // flexion: the table, a monotone cubic with PCHIP's slopes (written out below), and
        // its damping
        let phi = m[mt("flexion.rotation")];
        let want_phi = pchip(&HIP_PHI_TABLE.0, &HIP_PHI_TABLE.1, phi) + 0.5 * rate(1.6);
        let d = d.max((r[at("hip.phi")] - want_phi).abs());
        if k > 0 && k < rows.len() - 1 {
            worst = worst.max(d);
        }
    }
    assert!(worst < 2e-3, "{worst} N m");
    // at the end the rates vanish: the table between its nodes (25 N m at 1.5, 90 N m at 2.0)
    let last = &rows[rows.len() - 1];
    assert!(last[at("hip.phi")] > 25.0 && last[at("hip.phi")] < 90.0, "{last:?}");
}

#[test]
fn the_cardan_hip_released_from_a_preload_swings_conserving_energy_without_damping() {
    // the femur's joint frame turned by φ = −0.5 rad about x_i: in the hanging posture the
    // joint pushes the thigh forward; without damping kinetic, gravity and stored energy balance
    let dir = scratch("cardan-simulate");
    let preload =
        "fixed_z = [0, 0, -1]\nmoving_x = [0, -1, 0]\nmoving_z = [-0.479425538604203, 0, -0.8775825618903728]";
    let undamped = variant(
        HIP,
        &dir,
        &[
            ("fixed_z = [0, 0, -1]", preload),
            ("[elements.hip.damping_phi]\nlinear = 0.5\n", ""),
            ("[elements.hip.damping_theta]\nlinear = 0.5\n", ""),
            ("[elements.hip.damping_psi]\nlinear = 0.2\n", ""),
        ],
    );
    let out = dir.join("undamped");
    let stderr = run("simulate", path_str(&undamped), None, &out, &["--duration", "0.5", "--dt", "0.0005"]);
    assert!(stderr.starts_with("energy drift over 0.5 s"), "{stderr}");
    let (_, motion, at) = table(&out.join("motion.csv"));
    let flexion: Vec<f64> = motion.iter().map(|r| r[at("flexion.rotation")]).collect();
    let most = flexion.iter().copied().fold(f64::MIN, f64::max);
    assert!(most > 0.3, "the thigh swings forward: {most} rad");
    let (_, energy, et) = table(&out.join("energy.csv"));
    let drift = energy.iter().map(|r| r[et("drift")].abs()).fold(0.0, f64::max);
    // the stored energy at the start: ∫ from −0.5 to 0 of the flexion table, ~10 J
    assert!(drift < 1e-6, "energy drift {drift} J");

    // with its damping the same release loses energy
    let damped = variant(HIP, &dir, &[("fixed_z = [0, 0, -1]", preload)]);
    let out = dir.join("damped");
    run("simulate", path_str(&damped), None, &out, &["--duration", "0.5", "--dt", "0.0005"]);
    let (_, energy, et) = table(&out.join("energy.csv"));
    let last = energy[energy.len() - 1][et("drift")];
    assert!(last < -0.1, "the damping dissipates: {last} J");
    assert!(energy.windows(2).all(|w| w[1][et("energy")] <= w[0][et("energy")] + 1e-9), "energy never rises");
}

// ---- flexion-torsion joint: models/joints/flexion-torsion-shoulder.toml ----

const SHOULDER: &str = "models/joints/flexion-torsion-shoulder.toml";
const SHOULDER_MOTION: &str = "models/joints/flexion-torsion-shoulder-motion.csv";
/// The moving joint frame turned by 1.2 rad about −x: the hanging arm is bent by α0 = 1.2 rad.
const SHOULDER_PRELOAD: &str =
    "fixed_x = [1, 0, 0]\nmoving_x = [1, 0, 0]\nmoving_z = [0, 0.9320390859672263, -0.3623577544766736]";

#[test]
fn the_flexion_torsion_shoulder_is_well_posed() {
    check_lists(SHOULDER, "flexion-torsion-joint  bending_p (free), bending_q (free), torsion (free)");
}

#[test]
fn an_abducted_and_rotated_shoulder_is_bent_by_the_abduction_and_twisted_by_the_rotation() {
    let dir = scratch("ft-kinematics");
    run("kinematics", SHOULDER, Some(SHOULDER_MOTION), &dir, &[]);
    let (_, rows, at) = table(&dir.join("deformations.csv"));
    let mut worst: f64 = 0.0;
    for r in &rows {
        // a pure abduction bends in the direction γ = π/2: p = 0, q = α; the axial rotation is β
        let d = [
            r[at("shoulder.bending_p")],
            r[at("shoulder.bending_q")] - r[at("abduction.rotation")],
            r[at("shoulder.torsion")] - r[at("axial.rotation")],
        ];
        worst = d.iter().fold(worst, |w, v| w.max(v.abs()));
    }
    assert!(worst < 1e-12, "{worst}");
}

#[test]
fn the_flexion_torsion_shoulders_passive_moments_are_its_torque_functions() {
    let dir = scratch("ft-inverse");
    run("inverse-dynamics", SHOULDER, Some(SHOULDER_MOTION), &dir, &[]);
    let (_, rows, at) = table(&dir.join("passive.csv"));
    let (_, motion, mt) = table(&root().join(SHOULDER_MOTION));
    let mut worst: f64 = 0.0;
    for (k, (r, m)) in rows.iter().zip(&motion).enumerate() {
        let t = m[0];
        let rate = |a: f64| a * std::f64::consts::FRAC_PI_2 * (std::f64::consts::PI * t).sin();
        let (alpha, beta) = (m[mt("abduction.rotation")], m[mt("axial.rotation")]);
        // σ_β = M_t + D_t = 1.5 β + 4 β³ + 0.1 β̇ (no change of direction: ω·z_j = β̇), and its
        // share of the bending work σ_p = σ_β (1 − cos α)/α (γ = π/2)
        let torsion = 1.5 * beta + 4.0 * beta.powi(3) + 0.1 * rate(0.4);
        let coupling = if alpha > 0.0 { torsion * (1.0 - alpha.cos()) / alpha } else { 0.0 };
        let d = (r[at("shoulder.torsion")] - torsion).abs().max((r[at("shoulder.bending_p")] - coupling).abs());
        if k > 0 && k < rows.len() - 1 {
            worst = worst.max(d);
        }
    }
    assert!(worst < 1e-3, "{worst} N m");
    // at the end, at rest on a node of the bending table: M_f(1.4 rad) C(π/2) = 8 N m
    let last = &rows[rows.len() - 1];
    assert!((last[at("shoulder.bending_q")] - 8.0).abs() < 1e-4, "{last:?}");
}

#[test]
fn the_flexion_torsion_shoulder_released_bent_swings_and_a_conservative_one_keeps_its_energy() {
    let dir = scratch("ft-simulate");
    // the whole example (torsion, direction factor, damping): no energy, but a motion
    let full = variant(SHOULDER, &dir, &[("fixed_x = [1, 0, 0]", SHOULDER_PRELOAD)]);
    let out = dir.join("full");
    run("simulate", path_str(&full), None, &out, &["--duration", "0.5", "--dt", "0.0005"]);
    let (_, motion, at) = table(&out.join("motion.csv"));
    let most = motion.iter().map(|r| r[at("abduction.rotation")].abs()).fold(0.0, f64::max);
    assert!(most > 0.2 && motion.iter().flatten().all(|v| v.is_finite()), "{most}");
    // bending only, C ≡ 1, no damping: ∫ M_f dα is the joint's energy
    let conservative = variant(
        SHOULDER,
        &dir,
        &[
            ("fixed_x = [1, 0, 0]", SHOULDER_PRELOAD),
            (
                "[elements.shoulder.direction_factor]\nangles = [-3.141592653589793, -1.5707963267948966, 0.0, \
                 1.5707963267948966, 3.141592653589793]\nfactors = [0.8, 1.0, 1.3, 1.0, 0.8]\n",
                "",
            ),
            ("[elements.shoulder.torsion]\npolynomial = [1.5, 0.0, 4.0]\n", ""),
            ("[elements.shoulder.damping_bending]\nlinear = 0.5\n", ""),
            ("[elements.shoulder.damping_torsion]\nlinear = 0.1\n", ""),
        ],
    );
    let out = dir.join("conservative");
    let stderr = run("simulate", path_str(&conservative), None, &out, &["--duration", "0.5", "--dt", "0.0005"]);
    assert!(stderr.starts_with("energy drift over 0.5 s"), "{stderr}");
    let (_, energy, et) = table(&out.join("energy.csv"));
    let drift = energy.iter().map(|r| r[et("drift")].abs()).fold(0.0, f64::max);
    assert!(drift < 1e-6, "energy drift {drift} J");
}

// ---- Calspan joint stop: models/joints/calspan-shoulder.toml ----

const STOP: &str = "models/joints/calspan-shoulder.toml";
const STOP_MOTION: &str = "models/joints/engin-shoulder-motion.csv";
/// Engin's maximal voluntary sinus, report eq. 3.1 (the example's `sinus`).
const SINUS: [f64; 10] =
    [1.49936, -0.09257, -0.24640, -0.29356, 0.18743, 0.58589, 0.45557, 0.00899, -0.42918, -0.47066];

fn sinus(phi: f64) -> f64 {
    let (s, c) = phi.sin_cos();
    (0..5).map(|n| c.powi(n as i32) * (SINUS[2 * n] + SINUS[2 * n + 1] * s)).sum()
}

#[test]
fn the_calspan_shoulder_is_well_posed() {
    check_lists(STOP, "joint-stop  swing_p (free), swing_q (free)");
}

#[test]
fn the_stop_torque_acts_exactly_where_the_humerus_is_outside_engins_sinus() {
    let dir = scratch("stop-inverse");
    let (kinematics, inverse) = (dir.join("kinematics"), dir.join("inverse"));
    run("kinematics", STOP, Some(STOP_MOTION), &kinematics, &[]);
    run("inverse-dynamics", STOP, Some(STOP_MOTION), &inverse, &[]);
    let (_, modes, at) = table(&kinematics.join("deformations.csv"));
    let (_, passive, pt) = table(&inverse.join("passive.csv"));
    // the humerus's initial direction in the stop frame (a1, a2 = a3 × a1, a3): the modes are
    // measured from it
    let a3: [f64; 3] = [0.5014457, 0.8441951, 0.1894382];
    let a1: [f64; 3] = [0.0967448, 0.1628720, -0.9818926];
    let a2 = [a3[1] * a1[2] - a3[2] * a1[1], a3[2] * a1[0] - a3[0] * a1[2], a3[0] * a1[1] - a3[1] * a1[0]];
    // r = +x: its components are the axes' x components
    let (theta0, phi0) = (a3[0].acos(), a2[0].atan2(a1[0]));
    let (p0, q0) = (theta0 * phi0.cos(), theta0 * phi0.sin());
    let (mut inside, mut outside, mut last) = (0, 0, 0.0);
    let mut before: Option<(f64, f64)> = None;
    for (m, s) in modes.iter().zip(&passive) {
        let (p, q) = (m[at("shoulder_stop.swing_p")] + p0, m[at("shoulder_stop.swing_q")] + q0);
        let (theta, phi) = (p.hypot(q), q.atan2(p));
        let penetration = theta - sinus(phi);
        let torque = s[pt("shoulder_stop.swing_p")].hypot(s[pt("shoulder_stop.swing_q")]);
        if penetration < -1e-6 {
            assert_eq!(torque, 0.0, "inside at t = {}", m[0]);
            inside += 1;
        } else if penetration > 1e-6 {
            // K(δ) = 40 δ + 400 δ³ at least, plus the damping of an abduction that goes on out
            let stop = 40.0 * penetration + 400.0 * penetration.powi(3);
            assert!(torque > 0.9 * stop, "t = {}: {torque}", m[0]);
            // and at most the stop torque plus the damping (1 N m s/rad) of the penetration's
            // rate, here from the frames' differences: a stop ten times too stiff fails
            let rate = before.map_or(0.0, |(t, d)| (penetration - d) / (m[0] - t)).abs();
            assert!(torque < 1.1 * (stop + rate) + 0.01, "t = {}: {torque} N m for a stop torque {stop} N m", m[0]);
            assert!(torque > last, "the torque grows as the arm goes on out: {torque} after {last}");
            last = torque;
            outside += 1;
        }
        before = Some((m[0], penetration));
    }
    assert!(inside > 10 && outside > 5, "{inside} frames inside, {outside} outside");
}

#[test]
fn a_simulated_fall_against_the_stop_needs_no_driving_moments() {
    // the arm, initially forward, falls under gravity onto the stop; without the damping (which
    // switches on with a jump when the arm crosses the contour) the stop torque is C1 in time,
    // and the inverse dynamics of the simulated motion finds no driving moment but the splines'
    // O(h²) error
    let dir = scratch("stop-simulate");
    let model = variant(STOP, &dir, &[("[elements.shoulder_stop.damping]\nlinear = 1.0\n", "")]);
    let mut residual = Vec::new();
    for dt in ["0.001", "0.0005"] {
        let sim = dir.join(format!("sim-{dt}"));
        run("simulate", path_str(&model), None, &sim, &["--duration", "0.5", "--dt", dt]);
        let motion = sim.join("motion.csv");
        let id = dir.join(format!("id-{dt}"));
        run("inverse-dynamics", path_str(&model), Some(path_str(&motion)), &id, &[]);
        let (_, passive, pt) = table(&id.join("passive.csv"));
        let stop: Vec<f64> =
            passive.iter().map(|r| r[pt("shoulder_stop.swing_p")].hypot(r[pt("shoulder_stop.swing_q")])).collect();
        let engaged = stop.iter().filter(|v| **v > 0.0).count();
        let most = stop.iter().copied().fold(0.0, f64::max);
        assert!(engaged * 10 > stop.len() && most > 5.0, "dt {dt}: {engaged} frames, {most} N m");
        let (_, driving, _) = table(&id.join("driving.csv"));
        let worst =
            driving[2..driving.len() - 2].iter().flat_map(|r| r[1..].iter().map(|v| v.abs())).fold(0.0, f64::max);
        assert!(worst < 0.01 * most, "dt {dt}: {worst} N m against {most} N m");
        residual.push(worst);
    }
    assert!((3.5..4.5).contains(&(residual[0] / residual[1])), "{residual:?}");
}
