//! Dynamics from model files: masses, inertias, gravity, loads and laws compiled to the kernel,
//! and the inverse-dynamics and simulation runs, against hand-derived equations of motion.

use std::f64::consts::{FRAC_PI_2, PI};
use std::path::PathBuf;

use mollier::{Compiled, InverseDynamicsRun, Simulation, compile, registry};
use mollier_format::parse;

const G: f64 = 9.81;

fn mechanism_text(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/mechanisms").join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn compiled(text: &str) -> Compiled {
    let doc = parse("inline.toml", text).unwrap_or_else(|d| panic!("{}", d.render()));
    let c = compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(mollier::check(&c, &registry()).is_well_posed());
    c
}

fn problem(text: &str) -> String {
    let doc = match parse("inline.toml", text) {
        Ok(d) => d,
        Err(d) => return format!("{}\nhint: {}", d.0[0].headline(), d.0[0].hint.as_deref().unwrap_or("")),
    };
    match compile(&doc, &registry()) {
        Ok(_) => panic!("compiled:\n{text}"),
        Err(d) => format!("{}\nhint: {}", d.0[0].headline(), d.0[0].hint.as_deref().unwrap_or("")),
    }
}

fn column(names: &[mollier::Column], name: &str) -> usize {
    names.iter().position(|c| c.name == name).unwrap_or_else(|| panic!("no column {name}: {names:?}"))
}

/// The pendulum of `models/mechanisms/pendulum.toml`: a uniform rod (m, l) about its end; the
/// driving moment for the angle φ from the horizontal (θ = φ + π/2 from hanging down).
struct Rod {
    m: f64,
    l: f64,
}

impl Rod {
    const FILE: Rod = Rod { m: 1.5, l: 0.8 };

    /// `(m c² + J) θ̈ + m g c sin θ` with c = l/2, J = m l²/12.
    fn torque(&self, phi: f64, phi_dd: f64) -> f64 {
        let c = self.l / 2.0;
        let i = self.m * c * c + self.m * self.l * self.l / 12.0;
        i * phi_dd + self.m * G * c * (phi + FRAC_PI_2).sin()
    }
}

/// Some states (φ, φ̇, φ̈).
fn states() -> Vec<[f64; 3]> {
    (0..12).map(|k| [-2.9 + 0.5 * k as f64, 3.0 * (0.7 * k as f64).sin(), -4.0 + 0.8 * k as f64]).collect()
}

#[test]
fn a_body_mass_sits_at_its_centre_of_mass_and_its_inertia_at_its_orientation() {
    let c = compiled(&mechanism_text("pendulum.toml"));
    let m = &c.model;
    let com = m.node_by_name("rod.com").expect("a node at the centre of mass");
    assert_eq!(m.x0()[m.nodes()[com.index()].offset..][..3], [0.4, 0.0, 0.0]);
    assert_eq!(c.bodies[1].mass_node, Some(com));
    let d = m.dynamics();
    assert_eq!(d.masses, [(com, 1.5)]);
    let l = m.node_by_name("rod.orientation").expect("orientation");
    assert_eq!(d.rotors, [(l, [[0.000075, 0.0, 0.0], [0.0, 0.08, 0.0], [0.0, 0.0, 0.08]])]);
    assert_eq!(d.gravity, [0.0, -G, 0.0]);
    // the double pendulum's lower rod has its centre of mass at its point `mid`, in mm and kg mm²
    let c = compiled(&mechanism_text("double-pendulum.toml"));
    let m = &c.model;
    let mid = m.node_by_name("lower.mid").expect("mid");
    assert_eq!(c.bodies[2].mass_node, Some(mid));
    assert!(m.node_by_name("lower.com").is_none());
    let j = m.dynamics().rotors[1].1;
    assert!((j[2][2] - 1.2 * 0.4 * 0.4 / 12.0).abs() < 1e-15, "{j:?}");
    // no centre of mass: the origin; one at [0, 0, 0]: the origin too, and no node is made
    for com in ["", "com = [0, 0, 0]"] {
        let text = mechanism_text("pendulum.toml").replace("com = [0.4, 0, 0]", com);
        let c = compiled(&text);
        assert_eq!(c.bodies[1].mass_node, c.model.node_by_name("ground"), "{com}");
        assert!(c.model.node_by_name("rod.com").is_none());
    }
}

#[test]
fn pendulum_driving_moment_and_pivot_reaction_follow_newton_and_lagrange() {
    let c = compiled(&mechanism_text("pendulum.toml"));
    let mut run = InverseDynamicsRun::new(&c);
    let names: Vec<String> = run.reaction_columns().iter().map(|c| c.name.clone()).collect();
    assert_eq!(
        names,
        [
            "swing.bending_y",
            "swing.bending_z",
            "ground.x",
            "ground.y",
            "ground.z",
            "ground.orientation.mx",
            "ground.orientation.my",
            "ground.orientation.mz"
        ]
    );
    assert_eq!((run.driving_columns()[0].name.as_str(), run.driving_columns()[0].unit), ("swing.rotation", "N m"));
    assert!(run.passive_columns().is_empty());
    let (m, cm) = (1.5, 0.4);
    for [phi, w, a] in states() {
        let f = run.solve(&[phi], &[w], &[a]).unwrap_or_else(|e| panic!("{e}"));
        let tau = Rod::FILE.torque(phi, a);
        assert!((f.driving[0] - tau).abs() < 1e-10, "τ {} vs {tau}", f.driving[0]);
        // the support holds the pivot with m a_c − m g, a_c = c φ̈ (−sin, cos) − c φ̇² (cos, sin)
        let (s, co) = phi.sin_cos();
        let ac = [-cm * a * s - cm * w * w * co, cm * a * co - cm * w * w * s];
        let r = &f.reactions;
        assert!((r[2] - m * ac[0]).abs() < 1e-10, "Rx {} vs {}", r[2], m * ac[0]);
        assert!((r[3] - (m * ac[1] + m * G)).abs() < 1e-10, "Ry {} vs {}", r[3], m * ac[1] + m * G);
        // planar: no bending, no force along z, the ground held against the drive's reaction
        for k in [0, 1, 4, 5, 6] {
            assert!(r[k].abs() < 1e-10, "{}: {}", names[k], r[k]);
        }
        assert!((r[7] - tau).abs() < 1e-10, "Mz {} vs τ {tau}", r[7]);
    }
}

#[test]
fn a_sampled_swing_is_exact_with_its_derivative_columns_and_close_at_the_ends_without() {
    // φ(t) = A sin(2πt + 1) in 12 frames over one second: the driving moment at every frame
    // against the equation of motion with the exact φ̈
    let c = compiled(&mechanism_text("pendulum.toml"));
    let (amp, w) = (0.6, 2.0 * PI);
    let exact = |t: f64| (amp * (w * t + 1.0).sin(), amp * w * (w * t + 1.0).cos(), -amp * w * w * (w * t + 1.0).sin());
    let mut with = String::from("time,swing.rotation,swing.rotation.vel,swing.rotation.acc\n");
    let mut without = String::from("time,swing.rotation\n");
    for i in 0..12 {
        let t = i as f64 / 11.0;
        let (p, v, a) = exact(t);
        with.push_str(&format!("{t},{p},{v},{a}\n"));
        without.push_str(&format!("{t},{p}\n"));
    }
    // the inertial term's amplitude, which the derivatives' errors scale
    let scale = Rod::FILE.torque(0.0, amp * w * w) - Rod::FILE.torque(0.0, 0.0);
    let errors = |text: &str, smoothing: mollier::Smoothing| -> Vec<f64> {
        let motion = mollier::parse_motion("swing.csv", text, &c.inputs).unwrap_or_else(|d| panic!("{d}"));
        let d = motion.differentiate(smoothing).unwrap();
        let mut run = InverseDynamicsRun::new(&c);
        (0..12)
            .map(|i| {
                let f = run.solve(&d.q[i], &d.qd[i], &d.qdd[i]).unwrap_or_else(|e| panic!("{e}"));
                let (p, _, a) = exact(motion.times[i]);
                (f.driving[0] - Rod::FILE.torque(p, a)).abs() / scale
            })
            .collect()
    };
    let given = errors(&with, mollier::Smoothing::Interpolate);
    assert!(given.iter().all(|e| *e < 1e-12), "{given:?}");
    // without: the spline's errors (docs/model-format.md), worst at the ends with not-a-knot
    // (23 % at the first frame), at most 3.9 % (the second frame) with quintic ends
    let quintic = errors(&without, mollier::Smoothing::Interpolate);
    let not_a_knot = errors(&without, mollier::Smoothing::NotAKnot);
    let ends = |e: &[f64]| e[0].max(e[11]);
    assert!(ends(&quintic) < 0.035 && quintic.iter().all(|e| *e < 0.04), "{quintic:?}");
    assert!(ends(&not_a_knot) > 0.2, "{not_a_knot:?}");
}

#[test]
fn loads_add_their_moments_about_the_hinge_and_the_hinge_bears_the_rest() {
    // a wrench at the tip: 5 N down and 2 N m about z; a moment about x on the rod
    let text = format!(
        "{}\n[loads.hand]\nat = \"rod.tip\"\nforce = [0, -5, 0]\nmoment = [0, 0, 2]\n\n[loads.tilt]\nat = \"rod\"\nmoment = [1.5, 0, 0]\n",
        mechanism_text("pendulum.toml")
    );
    let c = compiled(&text);
    let mut run = InverseDynamicsRun::new(&c);
    let at = |n: &str| column(run.reaction_columns(), n);
    let (by, bz, mx) = (at("swing.bending_y"), at("swing.bending_z"), at("ground.orientation.mx"));
    for [phi, w, a] in states() {
        let f = run.solve(&[phi], &[w], &[a]).unwrap_or_else(|e| panic!("{e}"));
        // τ = Lagrange − (r_tip × F)_z − M_z with r_tip = 0.8 (cos φ, sin φ)
        let want = Rod::FILE.torque(phi, a) + 0.8 * phi.cos() * 5.0 - 2.0;
        assert!((f.driving[0] - want).abs() < 1e-10, "τ {} vs {want}", f.driving[0]);
        // the moment about x goes through the hinge's bendings to the ground's support
        let r = &f.reactions;
        assert!((r[by].hypot(r[bz]) - 1.5).abs() < 1e-10, "bendings {} {}", r[by], r[bz]);
        assert!((r[mx] + 1.5).abs() < 1e-10, "support Mx {}", r[mx]);
    }
}

#[test]
fn a_torsion_spring_on_the_driven_hinge_adds_its_stress_in_file_units() {
    // N m per degree, N m s per degree, N m
    let text = format!(
        "{}\n[elements.swing.law.rotation]\nstiffness = 0.05\ndamping = 0.01\npreload = 0.3\n\n[units]\nangle = \"deg\"\n",
        mechanism_text("pendulum.toml")
    );
    let c = compiled(&text);
    let mut run = InverseDynamicsRun::new(&c);
    assert_eq!(run.passive_columns().iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["swing.rotation"]);
    let per_deg = 180.0 / PI;
    for [phi, w, a] in states() {
        let f = run.solve(&[phi], &[w], &[a]).unwrap_or_else(|e| panic!("{e}"));
        let spring = 0.3 + 0.05 * per_deg * phi + 0.01 * per_deg * w;
        assert!((f.passive[0] - spring).abs() < 1e-10, "σ {} vs {spring}", f.passive[0]);
        let want = Rod::FILE.torque(phi, a) + spring;
        assert!((f.driving[0] - want).abs() < 1e-10, "τ {} vs {want}", f.driving[0]);
    }
}

const CART: &str = r#"format_version = 1
fixed = ["anchor", "cart.y", "cart.z", "cart.l0", "cart.l1", "cart.l2", "cart.l3"]
inputs = ["cart.x"]
free = ["spring"]
gravity = [0, -9.81, 0]

[units]
length = "mm"
mass = "g"

[nodes.anchor]
position = [0, 0, 0]

[bodies.cart]
origin = [300, 0, 0]
points = { hook = [10, 0, 0] }
mass = 500

[elements.spring]
type = "truss"
p = "anchor"
q = "cart.hook"

[elements.spring.law.elongation]
stiffness = 2
damping = 0.05
preload = 3
"#;

#[test]
fn a_linear_spring_gives_its_passive_stress_and_the_drive_overcomes_it() {
    // a 0.5 kg cart driven along x, held by a spring from the origin to its hook: 2 N/mm,
    // 0.05 N s/mm, 3 N; the spring's elongation is the cart's travel x − 0.3 m
    let c = compiled(CART);
    let mut run = InverseDynamicsRun::new(&c);
    assert_eq!(run.driving_columns()[0].unit, "N");
    assert_eq!(run.passive_columns()[0].unit, "N");
    let at = |n: &str| column(run.reaction_columns(), n);
    let (ax, cy, cz) = (at("anchor.x"), at("cart.y"), at("cart.z"));
    let moments = [at("cart.orientation.mx"), at("cart.orientation.my"), at("cart.orientation.mz")];
    for [x, v, a] in [[0.3, 0.0, 0.0], [0.35, 0.2, -1.0], [0.21, -1.5, 4.0], [0.5, 3.0, 0.5]] {
        let f = run.solve(&[x], &[v], &[a]).unwrap_or_else(|e| panic!("{e}"));
        let sigma = 3.0 + 2000.0 * (x - 0.3) + 50.0 * v;
        assert!((f.passive[0] - sigma).abs() < 1e-9, "σ {} vs {sigma}", f.passive[0]);
        assert!((f.driving[0] - (0.5 * a + sigma)).abs() < 1e-9, "F {} vs {}", f.driving[0], 0.5 * a + sigma);
        let r = &f.reactions;
        assert!((r[ax] + sigma).abs() < 1e-9, "the anchor holds the spring: {} vs {}", r[ax], -sigma);
        assert!((r[cy] - 0.5 * G).abs() < 1e-12 && r[cz].abs() < 1e-12, "the rail carries the weight");
        assert!(moments.iter().all(|&k| r[k] == 0.0));
    }
}

#[test]
fn the_double_pendulum_in_millimetres_matches_the_one_in_metres() {
    let mm = compiled(&mechanism_text("double-pendulum.toml"));
    let si_text = mechanism_text("double-pendulum.toml")
        .replace("[units]\nlength = \"mm\"\nangle = \"deg\"\n", "")
        .replace("[500, 0, 0]", "[0.5, 0, 0]")
        .replace("[250, 0, 0]", "[0.25, 0, 0]")
        .replace("[200, 0, 0]", "[0.2, 0, 0]")
        .replace("[400, 0, 0]", "[0.4, 0, 0]")
        .replace("41666.666666666664", "0.041666666666666664")
        .replace("[60, 16000, 16000, 0, 0, 0]", "[60e-6, 0.016, 0.016, 0, 0, 0]")
        .replace("[[100, 0, 0]", "[[100e-6, 0, 0]");
    let si = compiled(&si_text);
    let (mut a, mut b) = (InverseDynamicsRun::new(&mm), InverseDynamicsRun::new(&si));
    for [p, w, acc] in states() {
        let (q, qd, qdd) = ([p, 0.7 * p], [w, -w], [acc, 0.5 * acc]);
        let (fa, fb) = (a.solve(&q, &qd, &qdd).unwrap(), b.solve(&q, &qd, &qdd).unwrap());
        for (x, y) in fa.driving.iter().chain(&fa.reactions).zip(fb.driving.iter().chain(&fb.reactions)) {
            assert!((x - y).abs() < 1e-9 * (1.0 + y.abs()), "{x} vs {y}");
        }
    }
}

/// Complete elliptic integral of the first kind, `K(k)`, by the arithmetic-geometric mean.
fn elliptic_k(k: f64) -> f64 {
    let (mut a, mut b) = (1.0f64, (1.0 - k * k).sqrt());
    // converges quadratically: 8 rounds reach machine precision for any k < 1 used here
    for _ in 0..8 {
        (a, b) = (0.5 * (a + b), (a * b).sqrt());
    }
    PI / (2.0 * a)
}

#[test]
fn the_pendulum_released_horizontally_swings_with_the_period_of_the_elliptic_integral() {
    let c = compiled(&mechanism_text("pendulum.toml"));
    let dt = 2e-3;
    let mut sim = Simulation::new(&c, dt).unwrap_or_else(|e| panic!("{e}"));
    assert!(sim.is_conservative());
    let e0 = sim.state().energy.expect("gravity and inertia only: energy is defined");
    // θ0 = 90°: the half period is 2 K(sin 45°) / ω0, ω0² = m g c / (m c² + J)
    let (m, cm, l) = (1.5, 0.4, 0.8);
    let w0 = (m * G * cm / (m * cm * cm + m * l * l / 12.0)).sqrt();
    let half = 2.0 * elliptic_k((PI / 4.0).sin()) / w0;
    let states = sim.advance((1.0 / dt) as usize).unwrap_or_else(|e| panic!("{e}"));
    // the rod comes to rest at the other horizontal: φ̇ turns from negative to positive
    let k = states.windows(2).position(|s| s[0].qd[0] < 0.0 && s[1].qd[0] >= 0.0).expect("a turn");
    let (s0, s1) = (&states[k], &states[k + 1]);
    let t = s0.time + (s1.time - s0.time) * s0.qd[0] / (s0.qd[0] - s1.qd[0]);
    assert!((t - half).abs() < 1e-6, "half period {t} vs {half}");
    assert!((s0.q[0] + PI).abs() < 1e-4, "turns at φ = {}", s0.q[0]);
    let drift = states.iter().map(|s| (s.energy.expect("energy") - e0).abs()).fold(0.0, f64::max);
    assert!(drift < 1e-8, "energy drift {drift} J");
    // damping makes it dissipative
    let damped =
        compiled(&format!("{}\n[elements.swing.law.rotation]\ndamping = 0.1\n", mechanism_text("pendulum.toml")));
    assert!(!Simulation::new(&damped, dt).unwrap().is_conservative());
}

#[test]
fn dynamics_problems_are_located_in_the_file() {
    let pendulum = mechanism_text("pendulum.toml");
    let cases = [
        (
            format!("{pendulum}\n[elements.swing.law.bending_y]\nstiffness = 10\n"),
            "inline.toml:35:21: error: elements.swing.law.bending_y: `swing.bending_y` is rigid: its stress is a reaction, which a law cannot set\n\
             hint: release it (`free = [\"swing.bending_y\"]`, or `\"swing\"` for all its modes) or drive it (`inputs`)",
        ),
        (
            format!("{pendulum}\n[elements.swing.law.rotaton]\nstiffness = 10\n"),
            "inline.toml:35:21: error: elements.swing.law.rotaton: element `swing` (hinge) has no mode `rotaton`\n\
             hint: did you mean `rotation`? its modes: rotation, bending_y, bending_z",
        ),
        (
            format!("{pendulum}\n[loads.push]\nat = \"rod.tipp\"\nforce = [1, 0, 0]\n"),
            "inline.toml:36:6: error: loads.push.at: no node, body or point called `rod.tipp`\n\
             hint: did you mean `rod.tip`?",
        ),
        (
            format!("{pendulum}\n[loads.twist]\nat = \"rod.orientation\"\nmoment = [1, 0, 0]\n"),
            "inline.toml:36:6: error: loads.twist.at: `rod.orientation` is not a name in the file\n\
             hint: a body's name stands for its orientation: write `at = \"rod\"`",
        ),
        (
            format!("{pendulum}\n[nodes.P]\nposition = [1, 0, 0]\n\n[loads.twist]\nat = \"P\"\nmoment = [0, 0, 1]\n"),
            "inline.toml:39:6: error: loads.twist.at: `P` is a point node, which belongs to no body: a moment acts on a body\n\
             hint: name a body (or one of its points), or an orientation node",
        ),
        (
            format!(
                "{pendulum}\n[nodes.L]\norientation = {{ euler = [1, 0, 0, 0] }}\n\n[loads.push]\nat = \"L\"\nforce = [0, 0, 1]\n"
            ),
            "inline.toml:39:6: error: loads.push.at: `L` is an orientation node: a force acts at a point\n\
             hint: name a point: a position node, a body (its origin) or `body.point`",
        ),
        (
            pendulum.replace("gravity = [0, -9.81, 0]", "gravity = [0, -9810, 0]"),
            "inline.toml:16:11: error: gravity: a gravity of 9810 m/s² is about 1000 g: it looks like mm/s²\n\
             hint: gravity is in m/s² whatever the file's length unit: write e.g. [0, -9.81, 0]",
        ),
        (
            pendulum.replace("points = { tip = [0.8, 0, 0] }", "points = { tip = [0.8, 0, 0], com = [0.4, 0, 0] }"),
            "inline.toml:25:7: error: bodies.rod.com: `rod` has a point called `com`, and a centre of mass given as coordinates would take that name\n\
             hint: write `com = \"com\"` to put the centre of mass at that point, or rename the point",
        ),
    ];
    let got: Vec<String> = cases.iter().map(|(text, _)| problem(text)).collect();
    let want: Vec<&str> = cases.iter().map(|(_, w)| *w).collect();
    assert_eq!(got, want);
}

#[test]
fn an_element_with_a_law_of_its_own_refuses_a_law_table() {
    // the Engin shoulder resistance of models/joints/ brings its own law
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/joints/engin-shoulder.toml");
    let fragment = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    let element = &fragment[fragment.find("[elements.shoulder_resistance]").expect("the element")..];
    let text = format!(
        "format_version = 1\nfixed = [\"thorax\"]\nfree = [\"shoulder_resistance\"]\n\n[bodies.thorax]\norigin = [0, 0, 0]\n\n\
         [bodies.humerus]\norigin = \"thorax\"\n\n{element}\n[elements.shoulder_resistance.law.swing]\nstiffness = 1\n"
    );
    let got = problem(&text);
    assert!(
        got.contains(": error: elements.shoulder_resistance.law: a `ball-socket-resistance` has a constitutive law of its own, which a `law` table would replace\nhint: delete the `law` table"),
        "{got}"
    );
}

/// The shoulder resistance example (`models/joints/engin-shoulder.toml`): the passive moment acts
/// through the kernel like any law — the ground still bears exactly the arm's weight moment
/// (drives and the passive joint are internal), and the moment grows once the arm leaves the
/// joint sinus.
#[test]
fn engin_shoulder_resistance_acts_internally_and_grows_outside_the_sinus() {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/joints/engin-shoulder.toml");
    let c = compiled(&std::fs::read_to_string(&p).unwrap());
    let mut run = InverseDynamicsRun::new(&c);
    let (mx, mz) = (
        column(run.reaction_columns(), "thorax.orientation.mx"),
        column(run.reaction_columns(), "thorax.orientation.mz"),
    );
    let my = column(run.reaction_columns(), "thorax.orientation.my");
    let swing = [
        column(run.passive_columns(), "shoulder_resistance.swing_p"),
        column(run.passive_columns(), "shoulder_resistance.swing_q"),
    ];
    let com = c.model.node_by_name("humerus.com").unwrap();
    let (m, g) = (2.0, [0.0, 0.0, G]);
    let mut magnitudes = Vec::new();
    for k in 0..=16 {
        let q = [0.0, -0.1 * k as f64, 0.0];
        let f = run.solve(&q, &[0.0; 3], &[0.0; 3]).unwrap().clone();
        let r = run.data().position(&c.model, com);
        // ground moment about the shoulder = −r × m g
        let want = [
            -(r[1] * m * g[2] - r[2] * m * g[1]),
            -(r[2] * m * g[0] - r[0] * m * g[2]),
            -(r[0] * m * g[1] - r[1] * m * g[0]),
        ];
        for (i, col) in [mx, my, mz].into_iter().enumerate() {
            assert!(
                (f.reactions[col] - want[i]).abs() < 1e-9,
                "frame {k}, axis {i}: {} vs {}",
                f.reactions[col],
                want[i]
            );
        }
        magnitudes.push(f.passive[swing[0]].hypot(f.passive[swing[1]]));
    }
    // abducted by 1.6 rad the arm is far outside the sinus: well beyond the 6 N m contour, and
    // the moment grows along the way out
    assert!(magnitudes[16] > 6.0, "{magnitudes:?}");
    assert!(magnitudes[16] > magnitudes[10] && magnitudes[10] > magnitudes[4], "{magnitudes:?}");
}

#[test]
fn the_joint_force_where_a_body_turns_about_anothers_point_follows_newton() {
    // elbow-muscles.toml: the forearm (m, centre of mass c from the elbow) turns about the
    // humerus's point `elbow` at the origin; a cable pulls its hand with 20 N along −x. The force
    // on the humerus at the elbow is the forearm's weight and the cable minus m a_c.
    let c = compiled(&mechanism_text("elbow-muscles.toml"));
    let mut run = InverseDynamicsRun::new(&c);
    let names: Vec<&str> = run.reaction_columns().iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names[names.len() - 3..], ["humerus.elbow.fx", "humerus.elbow.fy", "humerus.elbow.fz"]);
    let at = |n: &str| column(run.reaction_columns(), n);
    let (fx, fy, fz) = (at("humerus.elbow.fx"), at("humerus.elbow.fy"), at("humerus.elbow.fz"));
    let (m, cm) = (1.5, 0.15);
    for [phi, w, a] in states() {
        let f = run.solve(&[phi], &[w], &[a]).unwrap_or_else(|e| panic!("{e}"));
        let (s, co) = phi.sin_cos();
        let ac = [-cm * a * s - cm * w * w * co, cm * a * co - cm * w * w * s];
        let want = [-20.0 - m * ac[0], -m * G - m * ac[1], 0.0];
        let got = [f.reactions[fx], f.reactions[fy], f.reactions[fz]];
        for k in 0..3 {
            assert!((got[k] - want[k]).abs() < 1e-10, "φ = {phi}: {got:?} vs {want:?}");
        }
    }
}
