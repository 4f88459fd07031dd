//! The compile step on small inline models: bodies, orientation forms, units, shared points,
//! coordinate inputs, JSON, and the well-posedness verdicts.

use std::path::Path;

use mollier::{Compiled, FrameError, KinematicsRun, compile, registry};
use mollier_core::KinematicsError;
use mollier_format::{Format, parse, parse_as};
use mollier_sim::{Curves, DeGrooteFregly, HillParams, Tendon};

fn compiled(text: &str) -> Compiled {
    let doc = parse("inline.toml", text).unwrap_or_else(|d| panic!("{}", d.render()));
    compile(&doc, &registry()).unwrap_or_else(|d| panic!("{}", d.render()))
}

fn position(c: &Compiled, name: &str, q: &[f64]) -> [f64; 3] {
    let mut run = KinematicsRun::new(c);
    let f = run.solve(q).unwrap_or_else(|e| panic!("{e}"));
    let i = c.points.iter().position(|p| p.name == name).unwrap_or_else(|| panic!("no point {name}"));
    [f.positions[3 * i], f.positions[3 * i + 1], f.positions[3 * i + 2]]
}

fn arm(orientation: &str, units: &str) -> String {
    format!(
        r#"format_version = 1
fixed = ["ground"]
inputs = ["swing.rotation"]
{units}
[bodies.ground]
origin = [0, 0, 0]
points = {{ P = [1, 2, 3] }}

[bodies.arm]
origin = "ground.P"
orientation = {orientation}
points = {{ tip = [1, 0, 0], here = [0, 0, 0] }}
mass = 1500
com = "tip"
inertia = [[2, 0, 0], [0, 3, 0], [0, 0, 4]]

[elements.swing]
type = "hinge"
p = "ground"
q = "arm"
axis = [0, 0, 1]
"#
    )
}

#[test]
fn the_three_orientation_forms_place_points_alike() {
    // 90° about z takes the body's x axis to global y
    let forms = [
        "{ axis = [0, 0, 1], angle = 1.5707963267948966 }",
        "{ matrix = [[0, -1, 0], [1, 0, 0], [0, 0, 1]] }",
        "{ euler = [0.7071067811865476, 0, 0, 0.7071067811865476] }",
    ];
    for f in forms {
        let c = compiled(&arm(f, ""));
        let tip = position(&c, "arm.tip", &[0.0]);
        for (a, b) in tip.iter().zip([1.0, 3.0, 3.0]) {
            assert!((a - b).abs() < 1e-12, "{f}: {tip:?}");
        }
        // turning the hinge by 90° more takes the tip to (0, 2, 3)
        let tip = position(&c, "arm.tip", &[std::f64::consts::FRAC_PI_2]);
        for (a, b) in tip.iter().zip([0.0, 2.0, 3.0]) {
            assert!((a - b).abs() < 1e-12, "{f}: {tip:?}");
        }
    }
}

#[test]
fn units_convert_to_si_and_a_point_at_the_origin_is_the_origin() {
    let c =
        compiled(&arm("{ axis = [0, 0, 1], angle = 90 }", "[units]\nlength = \"mm\"\nangle = \"deg\"\nmass = \"g\"\n"));
    let tip = position(&c, "arm.tip", &[0.0]);
    for (a, b) in tip.iter().zip([0.001, 0.003, 0.003]) {
        assert!((a - b).abs() < 1e-15, "{tip:?}");
    }
    let node = |n: &str| c.points.iter().find(|p| p.name == n).map(|p| p.node);
    assert_eq!(node("arm.here"), node("arm"));
    assert_ne!(node("arm.tip"), node("arm"));
    // ground.P (the arm's origin) and arm.tip are attached to their bodies' frames, arm.here is
    // the origin: the only generated element is the norm of the arm's Euler parameters
    let frame = |b: usize| (c.bodies[b].frame.position, c.bodies[b].frame.orientation);
    assert_eq!(c.model.attached_to(node("arm.tip").expect("tip")), Some(frame(1)));
    assert_eq!(c.model.attached_to(node("arm").expect("origin")), Some(frame(0)));
    assert_eq!(c.model.attached_to(c.bodies[0].frame.position), None);
    assert_eq!(c.model.n_elements() - c.elements.len(), 1);
    let body = &c.bodies[1];
    assert_eq!(body.mass, Some(1.5));
    let com = body.com.expect("com");
    assert!((com[0] - 0.001).abs() < 1e-15 && com[1].abs() < 1e-15 && com[2].abs() < 1e-15, "{com:?}");
    // 4 g mm² = 4e-9 kg m²
    assert_eq!(body.inertia.map(|m| m[2][2]), Some(4e-9));
}

#[test]
fn a_coordinate_can_be_the_input() {
    // the slider-crank driven by the slider: crank angle θ from x = r cos θ + sqrt(l² − r² sin² θ)
    let text =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/mechanisms/slider-crank.toml"))
            .expect("model")
            .replace(r#"inputs = ["crank_joint.rotation"]"#, r#"inputs = ["slider.x"]"#)
            .replace(r#"free = ["travel"]"#, r#"free = ["travel", "crank_joint.rotation"]"#);
    let c = compiled(&text);
    assert!(mollier::check(&c, &registry()).is_well_posed());
    let mut run = KinematicsRun::new(&c);
    assert_eq!(run.transfer_header()[0], "crank_joint.rotation/slider.x");
    let (r, l) = (0.3f64, 0.5f64);
    // the crank's rotation from its start (θ = π/2): cos θ = (x² + r² − l²) / (2 r x), θ in (0, π)
    // on this branch
    let rotation = |x: f64| ((x * x + r * r - l * l) / (2.0 * r * x)).acos() - std::f64::consts::FRAC_PI_2;
    for x in [0.4, 0.5, 0.6, 0.7, 0.75] {
        let rot = run.solve(&[x]).unwrap_or_else(|e| panic!("{e}")).deformations[0];
        assert!((rot - rotation(x)).abs() < 1e-10, "x = {x}: {rot}");
    }
    // beyond r + l the slider cannot be reached: an error naming the input, and the run goes on
    // from the last frame
    let e = run.solve(&[0.9]).expect_err("out of reach");
    assert!(
        matches!(&e, FrameError::Kinematics(KinematicsError::Unreachable { inputs, .. }) if inputs == &["slider.x"]),
        "{e}"
    );
    assert!(
        e.to_string()
            .starts_with("this configuration cannot be reached: moved alone from the last solved one, `slider.x`")
    );
    assert!(run.solve(&[0.6]).is_ok());
    // from 0.6 the continuation passes the dead point at r + l = 0.8, where the constraints turn
    // dependent: said so, without the advice for a model that is not well posed (release a mode)
    let e = run.solve(&[0.9]).expect_err("out of reach").to_string();
    assert!(e.contains("`slider.x` cannot reach") && e.contains("dead point on the way"), "{e}");
    assert!(!e.contains("release"), "{e}");
    // and the next frames are those of a run that was not asked for 0.9: the failed iterates
    // turned the crank round, the angle's unwrapping is restored with the workspace
    for x in [0.7, 0.6] {
        let rot = run.solve(&[x]).unwrap_or_else(|e| panic!("{e}")).deformations[0];
        assert!((rot - rotation(x)).abs() < 1e-10, "after the failure, x = {x}: {rot}");
    }
    // likewise a fresh run that fails on its fourth frame (the Python API's `on_error="skip"`)
    let mut run = KinematicsRun::new(&c);
    for x in [0.4, 0.5, 0.6, 0.9, 0.7, 0.6] {
        match run.solve(&[x]) {
            Ok(f) => assert!((f.deformations[0] - rotation(x)).abs() < 1e-10, "x = {x}: {}", f.deformations[0]),
            Err(e) => assert!(x > r + l, "x = {x}: {e}"),
        }
    }
}

const HINGED_FOUR_BAR: &str = include_str!("fixtures/hinged-four-bar.toml");

#[test]
fn a_planar_loop_of_four_hinges_is_over_constrained_and_the_check_names_the_modes() {
    let c = compiled(HINGED_FOUR_BAR);
    // the rocker's point C is the coupler's: one node, reached by both bodies' beams
    let node = |n: &str| c.points.iter().find(|p| p.name == n).map(|p| p.node);
    assert_eq!(node("rocker.C"), node("coupler.C"));
    let r = mollier::check(&c, &registry());
    assert!(!r.is_well_posed());
    assert!(r.problems.is_empty(), "the input count is right: {:?}", r.problems);
    assert_eq!((r.dof, r.redundant), (1, 3));
    let text = r.diagnostics.join("\n");
    assert!(text.contains("over-constrained by 3"), "{text}");
    assert!(text.contains("pin_joint.bending_y") || text.contains("coupler_joint.bending_y"), "{text}");
    // the kernel finds generated modes too (the beam that joins the shared point C to the
    // rocker: a point held by two bodies is attached to one, joined to the other), which cannot
    // be released: the check lists only the user's elements' modes
    assert!(r.analysis.redundant.iter().any(|i| i.name.starts_with("rocker.C.")), "{:?}", r.analysis.redundant);
    let over = r.diagnostics.iter().find(|d| d.starts_with("over-constrained")).expect("the redundancy line");
    let listed = over.rsplit_once(": ").expect("a list").1;
    let user: Vec<&str> = c.elements.iter().map(|e| e.name.as_str()).collect();
    for item in listed.split(", ") {
        let mode = item.split(" (").next().unwrap_or(item);
        let element = mode.rsplit_once('.').expect("element.mode").0;
        assert!(user.contains(&element), "`{item}` is not a mode of the user's elements: {over}");
    }
    assert!(over.contains("release 3 of these modes, one per redundancy"), "{over}");
    // a solve that fails for it names only the user's modes too
    match KinematicsRun::new(&c).solve(&[0.1]) {
        Err(FrameError::Kinematics(KinematicsError::NotWellPosed(w))) => {
            assert!(!w.redundant.is_empty(), "{w}");
            assert!(w.redundant.iter().all(|i| !i.name.starts_with("rocker.C.")), "{:?}", w.redundant);
        }
        other => panic!("expected not well posed, got {other:?}"),
    }
    // which sets restore the rank: each exception, released here, leaves the model ill posed,
    // and the set of the next test is not among them
    let sets = r.diagnostics.iter().find(|d| d.starts_with("releasing 3 of the listed")).expect("the sets");
    let (_, exceptions) = sets.split_once("except: ").expect("exceptions");
    let mut checked = 0;
    for set in exceptions.split("; ").filter(|s| s.starts_with('[')) {
        let modes: Vec<String> = set.trim_matches(['[', ']']).split(", ").map(|m| format!("{m:?}")).collect();
        let text = HINGED_FOUR_BAR.replace(
            r#"free = ["rocker_joint.rotation", "coupler_joint.rotation", "pin_joint.rotation"]"#,
            &format!(
                r#"free = ["rocker_joint.rotation", "coupler_joint.rotation", "pin_joint.rotation", {}]"#,
                modes.join(", ")
            ),
        );
        assert!(!mollier::check(&compiled(&text), &registry()).is_well_posed(), "{set} restores the rank");
        let mut released: Vec<&str> = set.trim_matches(['[', ']']).split(", ").collect();
        released.sort_unstable();
        assert_ne!(released, ["coupler_joint.bending_y", "pin_joint.bending_y", "pin_joint.bending_z"]);
        checked += 1;
    }
    assert!(checked > 0, "{sets}");
}

#[test]
fn releasing_three_bendings_makes_it_well_posed() {
    // a spherical joint at C (both bendings free) and a universal joint at B (one bending free)
    let text = HINGED_FOUR_BAR.replace(
        r#"free = ["rocker_joint.rotation", "coupler_joint.rotation", "pin_joint.rotation"]"#,
        r#"free = ["rocker_joint.rotation", "coupler_joint.rotation", "pin_joint", "coupler_joint.bending_y"]"#,
    );
    let c = compiled(&text);
    let r = mollier::check(&c, &registry());
    assert!(r.is_well_posed(), "{:?}", r.diagnostics);
    // and it moves like the truss-coupler four-bar: θ4 after a quarter turn of the crank
    let mut run = KinematicsRun::new(&c);
    let f = run.solve(&[0.3]).unwrap_or_else(|e| panic!("{e}"));
    let i = run.deformation_header().iter().position(|h| h == "rocker_joint.rotation").expect("column");
    let c2 = compiled(
        &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/mechanisms/four-bar.toml"))
            .expect("model"),
    );
    let mut run2 = KinematicsRun::new(&c2);
    let f2 = run2.solve(&[0.3]).unwrap_or_else(|e| panic!("{e}"));
    assert!((f.deformations[i] - f2.deformations[3]).abs() < 1e-10, "{} vs {}", f.deformations[i], f2.deformations[3]);
}

#[test]
fn json_and_toml_are_one_format() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/mechanisms/rssr.toml");
    let toml_doc = parse(path, &std::fs::read_to_string(path).expect("model")).expect("parses");
    let json = serde_json::to_string_pretty(toml_doc.spec()).expect("serializes");
    let json_doc = parse_as("rssr.json", &json, Format::Json).unwrap_or_else(|d| panic!("{}", d.render()));
    assert_eq!(json_doc.spec(), toml_doc.spec());
    let (a, b) = (compile(&toml_doc, &registry()).expect("toml"), compile(&json_doc, &registry()).expect("json"));
    let (mut ra, mut rb) = (KinematicsRun::new(&a), KinematicsRun::new(&b));
    for q in [0.5, 2.0, 4.0] {
        assert_eq!(ra.solve(&[q]).expect("toml"), rb.solve(&[q]).expect("json"));
    }
    // a "$schema" key is allowed in JSON, for editors
    let with_schema = json.replacen('{', "{\n  \"$schema\": \"mollier.schema.json\",", 1);
    assert!(parse_as("rssr.json", &with_schema, Format::Json).is_ok());
}

#[test]
fn a_body_orientation_can_be_fixed_by_the_name_check_lists() {
    // `ground` fixes the body's origin and orientation; naming them one by one is the same
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../models/mechanisms/pendulum.toml"))
        .expect("model");
    let whole = compiled(&text);
    let split = compiled(
        &text.replace(r#"fixed = ["ground"]"#, r#"fixed = ["ground.orientation", "ground.x", "ground.y", "ground.z"]"#),
    );
    let report = mollier::check(&split, &registry());
    assert!(report.is_well_posed(), "{:?}", report.diagnostics);
    assert_eq!((split.model.n_q(), split.model.n_unknowns()), (whole.model.n_q(), whole.model.n_unknowns()));
    // a body's orientation is not a mode: `free` refuses it
    let doc = parse(
        "inline.toml",
        &text.replace(r#"inputs = ["swing.rotation"]"#, "inputs = [\"swing.rotation\"]\nfree = [\"arm.orientation\"]"),
    );
    let err = compile(&doc.expect("parses"), &registry()).err().map(|d| d.render()).unwrap_or_default();
    assert!(err.contains("free[0]"), "{err}");
}

/// An arm hanging 500 mm from a hinge at the origin, a muscle `m` from an anchor 300 mm to the
/// side to its tip, in millimetres and degrees; `muscle` ends the muscle's table (from line 28).
fn one_muscle(muscle: &str) -> String {
    format!(
        "format_version = 1\nfixed = [\"ground\", \"anchor\"]\ninputs = [\"swing.rotation\"]\nfree = [\"m\"]\n\
         [units]\nlength = \"mm\"\nangle = \"deg\"\n[nodes.anchor]\nposition = [300, 0, 0]\n\
         [bodies.ground]\norigin = [0, 0, 0]\n[bodies.arm]\norigin = \"ground\"\npoints = {{ tip = [0, -500, 0] }}\n\
         [elements.swing]\ntype = \"hinge\"\np = \"ground\"\nq = \"arm\"\naxis = [0, 0, 1]\n\
         [elements.m]\ntype = \"truss\"\np = \"anchor\"\nq = \"arm.tip\"\n\
         [muscles.m]\nmax_force = 300\noptimal_fibre_length = 100\ntendon_slack_length = 200\n{muscle}"
    )
}

/// `p` with De Groote et al.'s curves and the parameters the tests set off OpenSim's defaults
/// (`max_contraction_velocity` 8, `tendon_strain_at_one_norm_force` 0.06,
/// `active_force_width_scale` 1.3, `passive_fiber_strain_at_one_norm_force` 0.5,
/// `activation_dynamics_smoothing` 10, `ignore_passive_fiber_force`), with `fiber_damping`.
fn off_defaults(p: HillParams, fiber_damping: f64) -> HillParams {
    HillParams {
        vmax: 8.0,
        see_strain: 0.06,
        curves: Curves::DeGrooteFregly2016(DeGrooteFregly {
            active_force_width_scale: 1.3,
            fiber_damping,
            passive_fiber_strain: 0.5,
            activation_smoothing: 10.0,
            passive: false,
        }),
        ..p
    }
}

/// A muscle with De Groote et al.'s curves takes every parameter from its fields (in the file's
/// units), and OpenSim's defaults for those it leaves out; DAS3's stay the default.
#[test]
fn a_muscle_file_selects_de_groote_freglys_curves_and_their_parameters() {
    let all = "pennation = 10\nactivation_time = 0.02\ndeactivation_time = 0.07\ncurves = \"de-groote-fregly-2016\"\n\
               max_contraction_velocity = 8\ntendon_strain_at_one_norm_force = 0.06\nactive_force_width_scale = 1.3\n\
               fiber_damping = 0.05\npassive_fiber_strain_at_one_norm_force = 0.5\nactivation_dynamics_smoothing = 10\n\
               ignore_passive_fiber_force = true\n";
    let p = compiled(&one_muscle(all)).muscles[0].hill.params;
    let want = HillParams::de_groote_fregly_2016(300.0, 0.1, 0.2, 10f64.to_radians(), 0.02, 0.07);
    assert_eq!(p, off_defaults(want, 0.05));
    let p = compiled(&one_muscle("curves = \"de-groote-fregly-2016\"\n")).muscles[0].hill.params;
    assert_eq!(p, HillParams::de_groote_fregly_2016(300.0, 0.1, 0.2, 0.0, 0.015, 0.06));
    assert_eq!(p.curves, Curves::DeGrooteFregly2016(DeGrooteFregly::default()));
    let p = compiled(&one_muscle("")).muscles[0].hill.params;
    assert_eq!(p, HillParams::new(300.0, 0.1, 0.2, 0.0, 0.015, 0.06));
}

/// An OpenSim `DeGrooteFregly2016Muscle` imports with De Groote et al.'s curves and every
/// property it has (here the elbow beside Moco, then with properties off their defaults
/// written into the file); `ignore_tendon_compliance` as a rigid tendon, and with none without
/// activation dynamics, which the report says.
#[test]
fn an_osim_de_groote_fregly_muscle_imports_with_every_property() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/optimal-control/elbow-dgf.osim");
    let text = std::fs::read_to_string(&path).expect("the elbow");
    let c = mollier::load_text("elbow-dgf.osim", &text, &registry()).expect("imports");
    let mut biceps = HillParams::de_groote_fregly_2016(625.0, 0.116, 0.16, 0.0, 0.015, 0.06);
    biceps.curves = Curves::DeGrooteFregly2016(DeGrooteFregly { fiber_damping: 0.01, ..DeGrooteFregly::default() });
    assert_eq!(c.muscles[0].hill.params, biceps);
    assert!((c.muscles[1].hill.params.pennation - 0.15707963267948966).abs() < 1e-16);
    // every other property off its default, in the biceps
    let props = "<max_contraction_velocity>8</max_contraction_velocity>\
        <active_force_width_scale>1.3</active_force_width_scale>\
        <passive_fiber_strain_at_one_norm_force>0.5</passive_fiber_strain_at_one_norm_force>\
        <tendon_strain_at_one_norm_force>0.06</tendon_strain_at_one_norm_force>\
        <activation_dynamics_smoothing>10</activation_dynamics_smoothing>\
        <ignore_passive_fiber_force>true</ignore_passive_fiber_force>\
        <fiber_damping>0.01</fiber_damping>";
    let changed = text.replacen("<fiber_damping>0.01</fiber_damping>", props, 1);
    let c = mollier::load_text("elbow-dgf.osim", &changed, &registry()).expect("imports");
    assert_eq!(c.muscles[0].hill.params, off_defaults(biceps, 0.01));
    // a rigid tendon imports as one; no activation dynamics does not import
    let rigid = text.replacen("<ignore_tendon_compliance>false", "<ignore_tendon_compliance>true", 1);
    let c = mollier::load_text("elbow-dgf.osim", &rigid, &registry()).expect("imports");
    assert_eq!(c.muscles.len(), 2);
    assert_eq!(c.muscles[0].hill.params.tendon, Tendon::Rigid);
    assert_eq!(c.muscles[1].hill.params.tendon, Tendon::Elastic);
    let bare = text.replacen(
        "<ignore_tendon_compliance>false</ignore_tendon_compliance>",
        "<ignore_tendon_compliance>false</ignore_tendon_compliance>\
         <ignore_activation_dynamics>true</ignore_activation_dynamics>",
        1,
    );
    let (import, c) = mollier::import_osim("elbow-dgf.osim", &bare, &registry()).expect("imports");
    assert_eq!(c.muscles.len(), 1, "the biceps without activation dynamics has no contraction dynamics");
    let report = import.report.markdown();
    assert!(report.contains("contraction dynamics not imported"), "{report}");
}

/// `tendon = "rigid"` in `[muscles.X]` makes the tendon rigid (elastic by default); another
/// word is an error at its place in the file.
#[test]
fn a_muscle_file_chooses_a_rigid_tendon() {
    assert_eq!(compiled(&one_muscle("tendon = \"rigid\"\n")).muscles[0].hill.params.tendon, Tendon::Rigid);
    assert_eq!(compiled(&one_muscle("tendon = \"elastic\"\n")).muscles[0].hill.params.tendon, Tendon::Elastic);
    assert_eq!(compiled(&one_muscle("")).muscles[0].hill.params.tendon, Tendon::Elastic);
    let err = parse("inline.toml", &one_muscle("tendon = \"stiff\"\n")).err().map(|d| d.render()).unwrap_or_default();
    assert!(err.contains("inline.toml:28:10") && err.contains("stiff"), "{err}");
}
