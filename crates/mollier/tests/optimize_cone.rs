//! The joint cone as a path constraint of `mollier optimize` (`mollier_ocp::ConeConstraint`), on
//! the elbow with two Hill muscles (`models/forward/elbow.toml`, its cone on the humerus's beam
//! at the elbow) and on the same elbow on a swinging humerus (`fixtures/swinging-elbow.toml`:
//! the socket body turns), and on the shoulder (`models/shoulder/shoulder-forward.toml`: the
//! glenohumeral cone, crossed by wrapping paths and by the arm-thorax soft contacts with their
//! law): the joint force by the virtual work of the distal bodies against the kinetostatics
//! that `simulate`'s `stability.csv` reports (`D_cc`'s transposed solve: an independent route);
//! the constraint's Jacobian against central differences at random points; the problem file's
//! checks, each at its field.

use mollier::optimize::OptimizeRun;
use mollier_core::dynamics::{element_forces, kinetostatic_stresses};
use mollier_core::geometry::rotation;
use mollier_ipopt::Nlp;
use mollier_ocp::{ConeConstraint, HessianChoice, Objective, Problem, Scheme, Transcription};
use mollier_sim::Musculoskeletal;

#[path = "fixtures/problem.rs"]
mod problem;

#[path = "support/rng.rs"]
mod rng;
use rng::Rng;

fn elbow() -> mollier::Compiled {
    problem::model("models/forward/elbow.toml")
}

/// The elbow on a humerus that swings about a tilted axis (`fixtures/swinging-elbow.toml`): the
/// cone's socket body turns with an input.
fn swinging_elbow() -> mollier::Compiled {
    problem::model("crates/mollier/tests/fixtures/swinging-elbow.toml")
}

/// The model's cone as a constraint, its half-angles `k` times the model's, scale 100 N.
fn cone_of(c: &mollier::Compiled, k: f64) -> ConeConstraint {
    let info = c.load_sharing.as_ref().and_then(|l| l.cone.as_ref()).expect("the elbow has a cone");
    ConeConstraint {
        joint: info.node,
        socket: info.elements.clone(),
        body: info.body,
        rotation: info.rotation,
        half_angles: info.half_angles.map(|a| k * a),
        force_scale: 100.0,
    }
}

/// Random variables: the rotations within ±0.6 rad, their rates and accelerations within ±3,
/// each muscle's contraction state within ±4 mm of its rest state (its tendons stretched or
/// slack), activations, excitations and the other rates random.
fn random_point(t: &Transcription<'_, '_, '_>, rng: &mut Rng, rest: &[f64], l: mollier_sim::Layout) -> Vec<f64> {
    random_point_about(t, rng, rest, l, [0.6, 0.004], false)
}

/// [`random_point`] with the rotations within `±spread[0]` rad, about the rest state's if
/// `about_rest` (else about 0), and the contraction states within `±spread[1]` m of rest.
fn random_point_about(
    t: &Transcription<'_, '_, '_>,
    rng: &mut Rng,
    rest: &[f64],
    l: mollier_sim::Layout,
    spread: [f64; 2],
    about_rest: bool,
) -> Vec<f64> {
    let nx = rest.len();
    let per = t.n() / t.points();
    let mut z = vec![0.0; t.n()];
    for i in 0..t.points() {
        let zi = &mut z[i * per..(i + 1) * per];
        for k in 0..l.n {
            zi[k] = if about_rest { rest[k] } else { 0.0 } + spread[0] * rng.sym();
            zi[l.n + k] = 3.0 * rng.sym();
        }
        for k in l.s()..l.a() {
            zi[k] = rest[k] + spread[1] * rng.sym();
        }
        for k in l.a()..nx {
            zi[k] = rng.next();
        }
        for v in &mut zi[nx..2 * nx] {
            *v = 3.0 * rng.sym();
        }
        for v in &mut zi[2 * nx..] {
            *v = rng.next();
        }
    }
    z
}

/// The joint force in the cone frame as `simulate` reports it (`ForwardRun::stability`):
/// kinetostatics at the linearized state, the socket's element forces on the joint node.
fn kinetostatic_force(system: &Musculoskeletal<'_>, c: &ConeConstraint, x: &[f64], xd: &[f64], u: &[f64]) -> [f64; 3] {
    let model = system.model;
    let mut ws = system.workspace();
    let lin = system.linearize(&mut ws, x, xd, u).expect("linearizes");
    let mut ks = Vec::new();
    kinetostatic_stresses(model, &mut ws.data, &lin.velocity_accelerations, &mut ks).expect("kinetostatics");
    let mut f = [0.0; 3];
    for &el in &c.socket {
        let layout = model.element(el).layout();
        let on = element_forces(model, &ws.data, el, &ks);
        for (i, (node, _)) in layout.nodes().iter().enumerate() {
            if *node == c.joint {
                for a in 0..3 {
                    f[a] -= on[layout.offset(i) + a];
                }
            }
        }
    }
    let r = rotation(&ws.data.orientation(model, c.body));
    let body: [f64; 3] = [0, 1, 2].map(|a| (0..3).map(|b| r[b][a] * f[b]).sum());
    [0, 1, 2].map(|a| (0..3).map(|b| c.rotation[b][a] * body[b]).sum())
}

#[test]
fn the_joint_force_is_the_kinetostatic_one() {
    for c in [elbow(), swinging_elbow()] {
        joint_force_is_kinetostatic(&c);
    }
}

fn joint_force_is_kinetostatic(c: &mollier::Compiled) {
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let rest = system.rest_state(&mut system.workspace(), &c.model.q0(), 0.0, &[0.05, 0.05]).unwrap().x;
    let p = Problem {
        cone: Some(cone_of(c, 1.0)),
        hessian: HessianChoice::LimitedMemory,
        ..problem::open(&system, 0.5, 2, Scheme::Trapezoidal, Objective::default())
    };
    let mut t = Transcription::new(&p).expect("the cone applies");
    let mut rng = Rng(0x5eed_c0de_1234_5678);
    let points: Vec<Vec<f64>> = (0..3).map(|_| random_point(&t, &mut rng, &rest, system.layout())).collect();
    assert_forces_are_kinetostatic(&system, &p, &mut t, rest.len(), &points);
}

/// The cone's joint forces at every point of each of `points` (NLP variables) against the
/// kinetostatic force there: within 1e-9 of the force's size.
fn assert_forces_are_kinetostatic(
    system: &Musculoskeletal<'_>,
    p: &Problem<'_, '_>,
    t: &mut Transcription<'_, '_, '_>,
    nx: usize,
    points: &[Vec<f64>],
) {
    let per = t.n() / t.points();
    let mut worst = 0.0f64;
    for z in points {
        let forces = t.cone_forces(z).expect("evaluates");
        for (i, f) in forces.iter().enumerate() {
            let zi = &z[i * per..(i + 1) * per];
            let k = kinetostatic_force(system, p.cone.as_ref().unwrap(), &zi[..nx], &zi[nx..2 * nx], &zi[2 * nx..]);
            let scale = k.iter().fold(1.0f64, |m, v| m.max(v.abs()));
            let err = (0..3).map(|a| (f[a] - k[a]).abs()).fold(0.0, f64::max) / scale;
            println!("point {i}: virtual work {f:?}, kinetostatics {k:?}, relative {err:.1e}");
            worst = worst.max(err);
        }
    }
    assert!(worst < 1e-9, "the joint force differs from the kinetostatic one by {worst:.1e} of its size");
}

/// The largest difference of the cone rows' Jacobian from central differences (`step` of
/// each variable's size or 1), relative to the largest entry of the same row and kind of
/// variable (`q`, `v`, the muscles' states, `q̇`, `v̇`, the other rates and controls; at least
/// 1e-4 of the row's largest: the tendons' partials by `s` are 10⁵ times the rest, and a wrong
/// block of `v` or `v̇` would hide under them), and where. The step is smaller than
/// `optimize_derivatives`' 1e-6: the tendons' quadratic springs at forces of kN curve the rows in
/// `s` so that the differences' truncation error at 1e-6 reaches 3e-6 of the row (it falls
/// 100-fold per 10-fold step: 3.0e-6, 3.0e-8 at 1e-7). Without `all_columns` only the columns
/// of the kinds the rows depend on (`q`, `v`, the muscles' states, `v̇`) are differenced.
fn cone_jacobian_error(
    t: &mut Transcription<'_, '_, '_>,
    step: f64,
    z: &[f64],
    first_row: usize,
    layout: mollier_sim::Layout,
    all_columns: bool,
) -> (f64, (usize, usize)) {
    let (nz, m, rows) = (t.n() / t.points(), t.m(), t.m() - first_row);
    let (n, nx) = (layout.n, layout.len());
    let kind = |j: usize| match j % nz {
        c if c < n => 0,
        c if c < 2 * n => 1,
        c if c < nx => 2,
        c if c < nx + n => 3,
        c if c < nx + 2 * n => 4,
        _ => 5,
    };
    let pattern = t.jacobian_structure();
    let mut exact = vec![0.0; pattern.len()];
    assert!(t.jacobian(z, &mut exact));
    let mut dense = vec![0.0; t.n() * rows];
    let mut scale = vec![[0.0f64; 6]; rows];
    let mut row_max = vec![0.0f64; rows];
    for (&(i, j), v) in pattern.iter().zip(&exact) {
        if i >= first_row {
            dense[j * rows + i - first_row] += v;
            scale[i - first_row][kind(j)] = scale[i - first_row][kind(j)].max(v.abs());
            row_max[i - first_row] = row_max[i - first_row].max(v.abs());
        }
    }
    let (mut gp, mut gm) = (vec![0.0; m], vec![0.0; m]);
    let mut zp = z.to_vec();
    let (mut worst, mut at) = (0.0f64, (0, 0));
    // without `all_columns`, the columns the rows depend on: `q`, `v`, the muscles' states, `v̇`
    for j in (0..t.n()).filter(|&j| all_columns || matches!(kind(j), 0 | 1 | 2 | 4)) {
        let h = step * z[j].abs().max(1.0);
        zp[j] = z[j] + h;
        assert!(t.constraints(&zp, &mut gp));
        zp[j] = z[j] - h;
        assert!(t.constraints(&zp, &mut gm));
        zp[j] = z[j];
        for r in 0..rows {
            let fd = (gp[first_row + r] - gm[first_row + r]) / (2.0 * h);
            let s = scale[r][kind(j)].max(1e-4 * row_max[r]).max(1e-12);
            let e = (fd - dense[j * rows + r]).abs() / s;
            if e > worst {
                (worst, at) = (e, (first_row + r, j));
            }
        }
    }
    (worst, at)
}

#[test]
fn the_cone_rows_jacobian_is_exact_in_every_variable() {
    // the swinging humerus's differences carry round-off that grows as the step shrinks
    // (5.5e-7, 5.5e-6, 5.5e-5 at 1e-6, 1e-7, 1e-8: no term is missing), as the kernel's Newton
    // solve leaves it (`optimize_derivatives` allows the elbow 1e-5)
    for (c, step, tol) in [(elbow(), 1e-7, 1e-6), (swinging_elbow(), 1e-6, 1e-5)] {
        cone_rows_jacobian_is_exact(&c, step, tol);
    }
}

fn cone_rows_jacobian_is_exact(c: &mollier::Compiled, step: f64, tol: f64) {
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let rest = system.rest_state(&mut system.workspace(), &c.model.q0(), 0.0, &[0.05, 0.05]).unwrap().x;
    let mut rng = Rng(0x0dd_ba11_cafe_f00d);
    for scheme in [Scheme::Trapezoidal, Scheme::HermiteSimpson] {
        let p = Problem {
            cone: Some(cone_of(c, 0.8)),
            hessian: HessianChoice::LimitedMemory,
            ..problem::open(&system, 0.5, 1, scheme, Objective { excitation: 1.0, ..Objective::default() })
        };
        let mut t = Transcription::new(&p).expect("the cone applies");
        let first_row = t.m() - 2 * t.points();
        for _ in 0..3 {
            let z = random_point(&t, &mut rng, &rest, system.layout());
            let (err, (row, col)) = cone_jacobian_error(&mut t, step, &z, first_row, system.layout(), true);
            println!("{scheme:?}: largest relative difference {err:.1e} at row {row}, column {col}");
            assert!(err < tol, "{scheme:?}: the cone rows' Jacobian is off by {err:.1e} at row {row}, column {col}");
        }
    }
}

#[test]
fn a_cone_asks_for_the_approximate_hessian() {
    let c = elbow();
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let p = Problem {
        cone: Some(cone_of(&c, 1.0)),
        ..problem::open(&system, 0.5, 2, Scheme::Trapezoidal, Objective::default())
    };
    let t = Transcription::new(&p).expect("the cone applies");
    assert!(t.hessian_structure().is_none(), "a cone constraint has no exact Hessian");
    assert!(t.hessian_case().as_ref().is_err_and(|why| why.contains("cone")), "{:?}", t.hessian_case());
}

/// Write `text` as a problem file beside a copy of `models/forward/elbow.toml` and
/// `models/mechanisms/pendulum.toml`, and read it.
fn read(name: &str, text: &str) -> Result<OptimizeRun, mollier_format::Diagnostics> {
    let dir = std::env::temp_dir().join(format!("mollier-optimize-cone-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for model in ["forward/elbow.toml", "mechanisms/pendulum.toml"] {
        let from = format!("{}/../../models/{model}", env!("CARGO_MANIFEST_DIR"));
        std::fs::copy(from, dir.join(std::path::Path::new(model).file_name().unwrap())).unwrap();
    }
    let path = dir.join("problem.toml");
    std::fs::write(&path, text).unwrap();
    let r = OptimizeRun::read(&path, &mollier::registry());
    std::fs::remove_dir_all(&dir).unwrap();
    r
}

#[test]
fn the_cone_table_is_checked_at_its_fields() {
    let good = "model = \"elbow.toml\"\nduration = 0.5\nintervals = 4\n\n[constraints.cone]\nforce_scale = 100.0\n";
    let r = read("good", good).expect("reads");
    assert_eq!(r.spec.constraints.cone.as_ref().map(|c| c.force_scale), Some(100.0));
    let line = |d: &mollier_format::Diagnostics, path: &str| {
        let p = d.0.iter().find(|x| x.path == path).unwrap_or_else(|| panic!("no problem at {path}: {d:?}"));
        (p.location.as_ref().map(|l| l.line), p.message.clone())
    };
    // no cone in the model
    let d = read("none", &good.replace("elbow.toml", "pendulum.toml")).err().expect("refused");
    let (at, why) = line(&d, "constraints.cone");
    assert_eq!(at, Some(5), "{why}");
    assert!(why.contains("no joint cone"), "{why}");
    // a bad scale and margin
    let bad = good.replace("force_scale = 100.0", "force_scale = -1.0\nmargin = 1.5");
    let d = read("bad", &bad).err().expect("refused");
    assert_eq!(line(&d, "constraints.cone.force_scale").0, Some(6));
    assert_eq!(line(&d, "constraints.cone.margin").0, Some(7));
    // the exact Hessian asked for
    let exact = format!("{good}\n[solver]\nhessian = \"exact\"\n");
    let d = read("exact", &exact).err().expect("refused");
    let (at, why) = line(&d, "solver.hessian");
    assert_eq!(at, Some(9), "{why}");
    assert!(why.contains("constraints.cone"), "{why}");
    // switched off, none of it is checked
    read("off", &format!("{}enabled = false\n", good.replace("elbow.toml", "pendulum.toml"))).expect("reads");
}

fn shoulder() -> mollier::Compiled {
    problem::model("models/shoulder/shoulder-forward.toml")
}

/// The shoulder's cone rows (the glenohumeral cone at 0.8 of its half-angles, the contacts'
/// laws and the wrapping paths crossing it), one trapezoidal interval, its two points random
/// ([`shoulder_point`]): their Jacobian in `q`, `v`, the muscles' states and `v̇` against central
/// differences (step 1e-6), relative to the largest entry of the same row and kind: within 1e-5.
#[test]
fn the_shoulders_cone_rows_jacobian_is_exact() {
    let c = shoulder();
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let m = system.layout().m;
    let rest = system.rest_state(&mut system.workspace(), &c.model.q0(), 0.0, &vec![0.05; m]).unwrap().x;
    let p = Problem {
        cone: Some(cone_of(&c, 0.8)),
        hessian: HessianChoice::LimitedMemory,
        ..problem::open(&system, 0.5, 1, Scheme::Trapezoidal, Objective { excitation: 1.0, ..Objective::default() })
    };
    let mut t = Transcription::new(&p).expect("the cone applies");
    let first_row = t.m() - 2 * t.points();
    let mut rng = Rng(0x5e0d_c0de_0000_0052);
    {
        let z = shoulder_point(&system, &t, &mut rng, &rest);
        let (err, (row, col)) = cone_jacobian_error(&mut t, 1e-6, &z, first_row, system.layout(), false);
        println!("shoulder: largest relative difference {err:.1e} at row {row}, column {col}");
        assert!(err < 1e-5, "the shoulder's cone rows' Jacobian is off by {err:.1e} at row {row}, column {col}");
    }
}

/// [`random_point_about`] the shoulder's rest, rotations within ±0.15 rad, each point's
/// contraction states within ±0.02 mm of their isometric equilibrium at its posture (DAS3's
/// tendons are as short as 1 mm: further, their forces reach MN and hide the contacts').
fn shoulder_point(
    system: &Musculoskeletal<'_>,
    t: &Transcription<'_, '_, '_>,
    rng: &mut Rng,
    rest: &[f64],
) -> Vec<f64> {
    let l = system.layout();
    let mut z = random_point_about(t, rng, rest, l, [0.15, 2e-5], true);
    let per = t.n() / t.points();
    let mut ws = system.workspace();
    for i in 0..t.points() {
        let zi = &mut z[i * per..(i + 1) * per];
        let at = system.rest_state(&mut ws, &zi[..l.n], 0.0, &vec![0.05; l.m]).expect("rests").x;
        for k in l.s()..l.a() {
            zi[k] += at[k] - rest[k];
        }
    }
    z
}

/// The shoulder's glenohumeral cone (`models/shoulder/shoulder-forward.toml`: the force of the
/// humeral head on the scapula's beam at GH), whose crossing elements are the muscles' paths
/// (many wrapping) and the arm-thorax soft contacts, which carry a law: the joint force by the
/// virtual work of the arm against the kinetostatic one at random states about rest
/// ([`shoulder_point`]).
#[test]
fn the_shoulders_joint_force_is_the_kinetostatic_one() {
    let c = shoulder();
    let system = Musculoskeletal::new(&c.model, c.muscles.clone());
    let m = system.layout().m;
    let rest = system.rest_state(&mut system.workspace(), &c.model.q0(), 0.0, &vec![0.05; m]).unwrap().x;
    let p = Problem {
        cone: Some(cone_of(&c, 1.0)),
        hessian: HessianChoice::LimitedMemory,
        ..problem::open(&system, 0.5, 1, Scheme::Trapezoidal, Objective::default())
    };
    let mut t = Transcription::new(&p).expect("the cone applies");
    let mut rng = Rng(0x5e0d_c0de_0000_0051);
    let points: Vec<Vec<f64>> = (0..3).map(|_| shoulder_point(&system, &t, &mut rng, &rest)).collect();
    assert_forces_are_kinetostatic(&system, &p, &mut t, rest.len(), &points);
}
