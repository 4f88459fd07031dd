//! Bad `.osim` files give located problems; what is not imported exactly is in the report.

use std::path::PathBuf;

fn pin() -> String {
    std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/osim/pin.osim")).unwrap()
}

/// The one problem of importing `text`, rendered.
fn problem(text: &str) -> (mollier_format::Diagnostic, String) {
    let d = mollier_osim::import("bad.osim", text).expect_err("the file is refused");
    let first = d.iter().next().unwrap().clone();
    (first, d.render())
}

/// `text` with the first `<objects />` after `set` replaced by `objects`.
fn inject(text: &str, set: &str, objects: &str) -> String {
    let at = text.find(set).expect("set");
    let k = at + text[at..].find("<objects />").expect("empty set");
    format!("{}{objects}{}", &text[..k], &text[k + "<objects />".len()..])
}

fn line_of(text: &str, needle: &str) -> usize {
    text.lines().position(|l| l.contains(needle)).expect("needle") + 1
}

#[test]
fn not_xml_is_placed() {
    let (d, r) = problem("<OpenSimDocument Version=\"40000\">\n  <Model>\n</OpenSimDocument>\n");
    assert!(r.contains("not a valid XML file"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(3), "{r}");
}

#[test]
fn an_opensim_3_file_is_refused_with_the_way_out() {
    let (_, r) =
        problem("<?xml version=\"1.0\"?>\n<OpenSimDocument Version=\"30000\"><Model name=\"m\"/></OpenSimDocument>\n");
    assert!(r.contains("bad.osim:2:1") && r.contains("OpenSim 3 file") && r.contains("save it again"), "{r}");
}

#[test]
fn an_unknown_body_is_placed_at_its_reference() {
    let text = pin().replacen(
        "<socket_parent>/bodyset/b1</socket_parent>",
        "<socket_parent>/bodyset/femur</socket_parent>",
        1,
    );
    let (d, r) = problem(&text);
    let line = line_of(&text, "/bodyset/femur");
    assert!(r.contains("`/bodyset/femur` is not a body of the model"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(line), "{r}");
    assert_eq!(d.path, "JointSet/PinJoint[j1]/frames/PhysicalOffsetFrame[j1_child]/socket_parent");
}

#[test]
fn a_missing_body_and_a_missing_frame_are_placed() {
    // a body without a joint
    let text = pin().replacen("<Body name=\"b2\">", "<Body name=\"b3\"><mass>1</mass></Body><Body name=\"b2\">", 1);
    let r = mollier_osim::import("bad.osim", &text).unwrap_err().render();
    assert!(r.contains("body `b3` has no joint that connects it to ground"), "{r}");
    // a joint frame that is neither a frame of the joint nor a body
    let text = pin().replacen(
        "<socket_parent_frame>j1_parent</socket_parent_frame>",
        "<socket_parent_frame>pelvis_offset</socket_parent_frame>",
        1,
    );
    let (d, r) = problem(&text);
    assert!(r.contains("`pelvis_offset` is neither a frame of this joint nor a body"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(line_of(&text, "pelvis_offset")), "{r}");
}

#[test]
fn bad_numbers_and_unsupported_joints_are_placed() {
    let text = pin().replacen("<mass>1.5</mass>", "<mass>heavy</mass>", 1);
    let (d, r) = problem(&text);
    assert!(r.contains("`heavy` is not a number"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(line_of(&text, "heavy")));
    let text = pin().replace("PinJoint", "EllipsoidJoint");
    let (_, r) = problem(&text);
    assert!(r.contains("the joint type `EllipsoidJoint` is not supported"), "{r}");
}

/// A muscle over a finite cylinder with a conditional and a moving path point, a path spring and
/// a constraint Mollier does not have: the points as path-point elements, the others in the
/// report, none dropped silently.
#[test]
fn the_report_lists_every_object_not_imported_exactly() {
    let wraps = r#"<WrapObjectSet><objects><WrapCylinder name="cyl"><translation>0 0 0</translation><xyz_body_rotation>0 0 0</xyz_body_rotation><quadrant>all</quadrant><radius>0.01</radius><length>0.05</length></WrapCylinder></objects></WrapObjectSet></Body>"#;
    let forces = r#"<objects>
<Thelen2003Muscle name="mus"><GeometryPath><PathPointSet><objects>
<PathPoint name="o"><socket_parent_frame>/ground</socket_parent_frame><location>0.3 0.2 0.1</location></PathPoint>
<ConditionalPathPoint name="c"><socket_parent_frame>/bodyset/b1</socket_parent_frame><location>0.1 0.1 0</location><socket_coordinate>/jointset/j1/p1</socket_coordinate><range>0 0.5</range></ConditionalPathPoint>
<MovingPathPoint name="mv"><socket_parent_frame>/bodyset/b1</socket_parent_frame><x_location><LinearFunction><coefficients>0.01 0.05</coefficients></LinearFunction></x_location><socket_x_coordinate>/jointset/j1/p1</socket_x_coordinate></MovingPathPoint>
<PathPoint name="i"><socket_parent_frame>/bodyset/b2</socket_parent_frame><location>-0.2 0.1 0.05</location></PathPoint>
</objects></PathPointSet><PathWrapSet><objects><PathWrap><wrap_object>cyl</wrap_object></PathWrap></objects></PathWrapSet></GeometryPath>
<max_isometric_force>500</max_isometric_force><optimal_fiber_length>0.1</optimal_fiber_length><tendon_slack_length>0.2</tendon_slack_length><pennation_angle_at_optimal>0</pennation_angle_at_optimal></Thelen2003Muscle>
<PathSpring name="spring"/>
</objects>"#;
    let text = inject(
        &inject(&pin().replacen("</Body>", wraps, 1), "<ForceSet", forces),
        "<ConstraintSet",
        r#"<objects><PointConstraint name="pc"/></objects>"#,
    );
    let imp = mollier_osim::import("m.osim", &text).unwrap_or_else(|d| panic!("{}", d.render()));
    let report = imp.report.markdown();
    for needle in ["`spring` | PathSpring | left out", "`pc` | PointConstraint | left out"] {
        assert!(report.contains(needle), "no `{needle}` in\n{report}");
    }
    // the conditional and the moving point are path-point elements: exact, not in the report
    assert!(!report.contains("PathPoint"), "{report}");
    for needle in [
        "[elements.mus-c_place]  # ConditionalPathPoint `c` of `mus` (m.osim:",
        "coordinate = \"p1.rotation\"\nat = 0.1\nlocation = [0.1, 0.1, 0.0]\nactive = [0.0, 0.5]\nbetween = [\"ground.mus-o\", \"mus-mv\"]",
        "[elements.mus-mv_place]  # MovingPathPoint `mv` of `mus` (m.osim:",
        "moving = [{ linear = [0.01, 0.05] }, { constant = 0.0 }, { constant = 0.0 }]",
    ] {
        assert!(imp.toml.contains(needle), "no `{needle}` in\n{}", imp.toml);
    }
    // a finite cylinder is imported as one (nothing to report), its length in the model file
    assert!(!report.contains("`cyl` | WrapCylinder"), "{report}");
    assert!(imp.toml.contains("type = \"cylinder\", body = "), "{}", imp.toml);
    assert!(imp.toml.contains("radius = 0.01, length = 0.05"), "{}", imp.toml);
    // the model file names its sources and carries the muscle's parameters
    assert!(imp.toml.contains("# Thelen2003Muscle `mus` (m.osim:"), "{}", imp.toml);
    assert!(imp.toml.contains("mus = { pcsa = 5.0, optimal_length = 0.30000000000000004 }"), "{}", imp.toml);
    assert!(
        imp.toml.contains("[elements.p1]  # `j1` rz about [0, 0, 1]; input: coordinate `p1` minus its default 0.1"),
        "{}",
        imp.toml
    );
}

/// A conditional point that is never active is left out, and a wrap's range still names the
/// .osim path's points; a moving point without its coordinate is placed.
#[test]
fn dropped_points_keep_the_wrap_on_its_stretch() {
    let wraps = r#"<WrapObjectSet><objects><WrapSphere name="ball"><translation>0 0 0</translation><radius>0.01</radius></WrapSphere></objects></WrapObjectSet></Body>"#;
    let forces = r#"<objects>
<Millard2012EquilibriumMuscle name="mus"><GeometryPath><PathPointSet><objects>
<PathPoint name="o"><socket_parent_frame>/ground</socket_parent_frame><location>0.3 0.2 0.1</location></PathPoint>
<ConditionalPathPoint name="never"><socket_parent_frame>/ground</socket_parent_frame><location>0.2 0.2 0.1</location><socket_coordinate>/jointset/j1/p1</socket_coordinate><range>5 6</range></ConditionalPathPoint>
<PathPoint name="v"><socket_parent_frame>/ground</socket_parent_frame><location>0.25 0.1 0.1</location></PathPoint>
<PathPoint name="i"><socket_parent_frame>/bodyset/b1</socket_parent_frame><location>-0.2 0.1 0.05</location></PathPoint>
</objects></PathPointSet><PathWrapSet><objects><PathWrap><wrap_object>ball</wrap_object><range>3 4</range></PathWrap></objects></PathWrapSet></GeometryPath>
<max_isometric_force>100</max_isometric_force><optimal_fiber_length>0.1</optimal_fiber_length><tendon_slack_length>0.2</tendon_slack_length></Millard2012EquilibriumMuscle>
</objects>"#;
    let text = inject(&pin().replacen("</Body>", wraps, 1), "<ForceSet", forces);
    let imp = mollier_osim::import("m.osim", &text).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(
        imp.report.markdown().contains("`never` | ConditionalPathPoint | left out: never active"),
        "{}",
        imp.report.markdown()
    );
    // .osim points 3 and 4 are the kept points 1 and 2: the obstacle is on stretch 1
    let el = &imp.toml[imp.toml.find("[elements.mus]").unwrap()..];
    assert!(el.contains("via = [\"ground.mus-v\"]") && el.contains("segment = 1"), "{el}");

    let moving = r#"<objects><Thelen2003Muscle name="m2"><GeometryPath><PathPointSet><objects>
<PathPoint name="o"><socket_parent_frame>/ground</socket_parent_frame><location>0.3 0.2 0.1</location></PathPoint>
<MovingPathPoint name="mv"><socket_parent_frame>/bodyset/b1</socket_parent_frame><x_location><Constant><value>0.1</value></Constant></x_location></MovingPathPoint>
</objects></PathPointSet></GeometryPath></Thelen2003Muscle></objects>"#;
    let text = inject(&pin(), "<ForceSet", moving);
    let (d, r) = problem(&text);
    assert!(r.contains("has no `<socket_x_coordinate>`"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(line_of(&text, "<MovingPathPoint")));
}

/// A locked coordinate is held at its default value: the same positions as the unlocked model
/// driven to that value, and no input; a clamped one is reported.
#[test]
fn locked_coordinates_are_held_at_their_default() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/osim/gimbal.osim");
    let text = std::fs::read_to_string(&path).unwrap();
    let at = text.find("<Coordinate name=\"p2\">").unwrap();
    let k = at + text[at..].find("<locked>false</locked>").unwrap();
    let locked = format!("{}<locked>true</locked>{}", &text[..k], &text[k + "<locked>false</locked>".len()..]);
    // OpenSim writes no <clamped> when it is false
    let locked = locked.replacen("<locked>false</locked>", "<locked>false</locked><clamped>true</clamped>", 1);
    let free = mollier_osim::import("gimbal.osim", &text).unwrap();
    let held = mollier_osim::import("locked.osim", &locked).unwrap();
    assert_eq!(free.inputs.len(), 6);
    assert_eq!(
        held.inputs.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["p1.rotation", "p3.rotation", "q1.rotation", "q2.rotation", "q3.rotation"]
    );
    assert!(held.toml.contains("#   p2: [-1.5, 1.5], default 0.2, locked -> held"), "{}", held.toml);
    assert!(
        held.report.markdown().contains("`p1` | Coordinate | clamped to [-1.5, 1.5] in OpenSim"),
        "{}",
        held.report.markdown()
    );
    let registry = mollier::registry();
    let positions = |imp: &mollier_osim::Import, q: &[f64]| {
        let doc = mollier_format::parse("m.toml", &imp.toml).unwrap();
        let compiled = mollier::compile(&doc, &registry).unwrap();
        let mut run = mollier::KinematicsRun::new(&compiled);
        run.solve(&imp.inputs_from_coordinates(q)).unwrap().positions
    };
    let q = [0.4, 0.2, -0.7, 1.1, -0.3, 0.25]; // p2 at its default
    let (a, b) = (positions(&free, &q), positions(&held, &q));
    assert_eq!(a.len(), b.len());
    assert!(a.iter().zip(&b).all(|(x, y)| (x - y).abs() < 1e-14), "{a:?}\n{b:?}");
}

#[test]
fn bad_coordinate_motions_are_placed() {
    let imp = mollier_osim::import("pin.osim", &pin()).unwrap();
    let bad = "m\ninDegrees=yes\nendheader\ntime\tp1\tq1\n0\t10\t20\n0.1\tten\t20\n";
    let d = imp.read_coordinate_motion("m.mot", bad).unwrap_err();
    let r = d.render();
    assert!(r.contains("m.mot:6:1") && r.contains("column `p1`: `ten` is not a finite number"), "{r}");
    assert!(
        imp.read_coordinate_motion("m.mot", "time\tp1\n0\t1\n").unwrap_err().render().contains("no `endheader` line")
    );
    // degrees for angles, a missing coordinate held at its default
    let m =
        imp.read_coordinate_motion("m.mot", "inDegrees=yes\nendheader\ntime\t/jointset/j1/p1/value\n0\t90\n").unwrap();
    assert_eq!(m.q[0][0], std::f64::consts::FRAC_PI_2);
    assert_eq!(m.missing, ["q1"]);
    assert_eq!(m.q[0][1], imp.model.coordinates[1].default);
}

#[test]
fn bad_motion_columns_and_headers_are_placed() {
    let imp = mollier_osim::import("pin.osim", &pin()).unwrap();
    let err = |text: &str| imp.read_coordinate_motion("m.mot", text).unwrap_err().render();
    // a coordinate twice: the second column is placed
    let r = err("endheader\ntime\tp1\t/jointset/j1/p1/value\n0\t1\t2\n");
    assert!(r.contains("m.mot:2:9") && r.contains("column `/jointset/j1/p1/value` is coordinate `p1` again"), "{r}");
    // a column that is nothing of the model
    let r = err("endheader\ntime  p1   knee\n0 1 2\n");
    assert!(r.contains("m.mot:2:12") && r.contains("column `knee` is not a coordinate of the model"), "{r}");
    let r = err("endheader\ntime\t/jointset/j1/p1/torque\n0\t1\n");
    assert!(r.contains("column `/jointset/j1/p1/torque` is not a coordinate"), "{r}");
    // inDegrees neither yes nor no
    let r = err("version=1\ninDegrees = maybe\nendheader\ntime\tp1\n0\t1\n");
    assert!(r.contains("m.mot:2:1") && r.contains("`inDegrees=maybe`: neither yes nor no"), "{r}");
    // speeds are a motion's too: not used, not refused; `inDegrees=NO` is no
    let m = imp
        .read_coordinate_motion("m.mot", "inDegrees=NO\nendheader\ntime\tp1\t/jointset/j1/p1/speed\n0\t1\t5\n")
        .unwrap();
    assert_eq!(m.q[0][0], 1.0);
}

#[test]
fn a_default_value_outside_the_range_is_reported() {
    let text =
        pin().replacen("<default_value>0.10000000000000001</default_value>", "<default_value>4</default_value>", 1);
    assert_ne!(text, pin(), "the fixture's default value");
    let imp = mollier_osim::import("m.osim", &text).unwrap();
    let report = imp.report.markdown();
    assert!(report.contains("`p1` | Coordinate | default value 4 is outside its range [-1.5, 1.5]"), "{report}");
    assert!(!mollier_osim::import("m.osim", &pin()).unwrap().report.markdown().contains("outside its range"));
}

#[test]
fn renamed_names_are_reported() {
    let text = pin().replacen("<Marker name=\"b1_m\">", "<Marker name=\"R.ASIS\">", 1);
    let imp = mollier_osim::import("m.osim", &text).unwrap();
    let report = imp.report.markdown();
    let line = line_of(&text, "R.ASIS");
    assert!(report.contains(&format!("| m.osim:{line}:")), "{report}");
    assert!(report.contains("`R.ASIS` | Marker | renamed `b1.R_ASIS`"), "{report}");
    assert!(imp.toml.contains("R_ASIS = ["), "{}", imp.toml);
    // a plain name is not reported
    assert!(!mollier_osim::import("m.osim", &pin()).unwrap().report.markdown().contains("renamed"));
}

/// OpenSim 4 writes element names with `::` inside its forces; they are left out as forces, and
/// an error after them is still placed at its line and column.
#[test]
fn element_names_with_double_colons_are_read() {
    let force = r#"<objects><HuntCrossleyForce name="contact"><HuntCrossleyForce::ContactParametersSet name="contact_parameters"><objects><HuntCrossleyForce::ContactParameters><stiffness>1e8</stiffness></HuntCrossleyForce::ContactParameters></objects></HuntCrossleyForce::ContactParametersSet></HuntCrossleyForce></objects>"#;
    let text = inject(&pin(), "<ForceSet", force);
    let imp = mollier_osim::import("m.osim", &text).unwrap_or_else(|d| panic!("{}", d.render()));
    assert!(imp.report.markdown().contains("`contact` | HuntCrossleyForce | left out"), "{}", imp.report.markdown());
    let bad = text.replacen("<mass>1.5</mass>", "<mass>heavy</mass>", 1);
    let (d, _) = problem(&bad);
    assert_eq!(d.location.map(|l| l.line), Some(line_of(&bad, "heavy")));
}

/// `(line, column)` of byte offset `at` of `text`, columns in characters (as the reports give them).
fn place_of(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at];
    (before.matches('\n').count() + 1, before.rsplit('\n').next().unwrap().chars().count() + 1)
}

/// Names with `::` keep their spelling in every message and path, and every location is the
/// file's own line and column, also after `::` on the same line (where the XML reader, which sees
/// each `::` as one character, would count one column short per `::`).
#[test]
fn double_colons_keep_names_and_places_in_errors() {
    // an element named with `::` where a Body must be: its own name and path in the error
    let odd = "<Body::Odd name=\"odd\"><mass>1</mass></Body::Odd>";
    let text = pin().replacen("<Body name=\"b1\">", &format!("{odd}<Body name=\"b1\">"), 1);
    let (d, r) = problem(&text);
    assert!(d.message.contains("`<Body::Odd>` in the BodySet is not supported"), "{r}");
    assert_eq!(d.path, "BodySet/Body::Odd[odd]", "{r}");
    let at = text.find("<Body::Odd").unwrap();
    assert_eq!(d.location.map(|l| (l.line, l.column)), Some(place_of(&text, at)), "{r}");
    // malformed XML after two `::` names on its line: the file's column, the names as written
    let force = "<objects><A::B name=\"x\"></A::B><C::D></E::F></objects>";
    let bad = inject(&pin(), "<ForceSet", force);
    let (d, r) = problem(&bad);
    let at = bad.find("</E::F>").unwrap();
    assert_eq!(d.location.map(|l| (l.line, l.column)), Some(place_of(&bad, at)), "{r}");
    assert!(d.message.contains("C::D") && !d.message.contains('\u{b7}'), "{r}");
    let (line, column) = place_of(&bad, at);
    assert!(d.message.contains(&format!(" at {line}:{column}")) || !d.message.contains(" at "), "{r}");
    // `·` and `::` in element names together would be ambiguous: refused at the `·`
    let both = inject(&pin(), "<ForceSet", "<objects><A::B name=\"x\"/><C\u{b7}D name=\"y\"/></objects>");
    let (d, r) = problem(&both);
    assert!(d.message.contains("`·`"), "{r}");
    let at = both.find("C\u{b7}D").unwrap() + 1;
    assert_eq!(d.location.map(|l| (l.line, l.column)), Some(place_of(&both, at)), "{r}");
    eprintln!("{r}");
}

/// OpenSim's ScaleTool writes a constant axis as a MultiplierFunction of a Constant: the same
/// model as the Constant scaled by hand.
#[test]
fn a_multiplier_of_a_constant_on_an_axis_without_coordinate_is_a_constant() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/osim/custom_linear.osim");
    let text = std::fs::read_to_string(path).unwrap();
    let constant =
        "<Constant name=\"function\">\n\t\t\t\t\t\t\t\t<value>0.29999999999999999</value>\n\t\t\t\t\t\t\t</Constant>";
    assert!(text.contains(constant), "the fixture's constant axis");
    let scaled = text.replacen(
        constant,
        // as many lines as the Constant: the same places in the comments
        "<MultiplierFunction name=\"function\">\n<function><Constant><value>0.2</value></Constant></function>\n<scale>1.5</scale></MultiplierFunction>",
        1,
    );
    let by_hand = text.replacen(constant, &constant.replace("0.29999999999999999", &format!("{}", 1.5 * 0.2)), 1);
    let a = mollier_osim::import("m.osim", &scaled).unwrap_or_else(|d| panic!("{}", d.render()));
    let b = mollier_osim::import("m.osim", &by_hand).unwrap();
    assert_eq!(a.toml, b.toml);
    // a function of the variable on an axis without coordinate is still refused, placed
    let linear = text.replacen(
        constant,
        "<LinearFunction name=\"function\"><coefficients>1 0</coefficients></LinearFunction>",
        1,
    );
    let (d, r) = problem(&linear);
    assert!(r.contains("of no coordinate"), "{r}");
    assert_eq!(
        d.location.map(|l| l.line),
        Some(line_of(&linear, "<LinearFunction name=\"function\"><coefficients>1 0<"))
    );
}

/// Markers and attributes in linear time: 8 times the markers (all of one name, the worst case
/// for unique names) take well under the 64 times a quadratic step needs; an element with
/// 100,000 attributes is refused before the XML reader's quadratic check of them (29 s).
#[test]
fn markers_and_attributes_take_linear_time() {
    let with_markers = |n: usize| {
        let m: String = (0..n)
            .map(|_| "<Marker name=\"R.ASIS\"><socket_parent_frame>/bodyset/b1</socket_parent_frame><location>0 0 0</location></Marker>\n")
            .collect();
        let at = pin().find("</MarkerSet>").unwrap();
        let text = pin();
        let k = text[..at].rfind("</objects>").unwrap();
        format!("{}{m}{}", &text[..k], &text[k..])
    };
    let once = |text: &str, n: usize| {
        let t = std::time::Instant::now();
        let imp = mollier_osim::import("m.osim", text).unwrap();
        assert_eq!(imp.model.markers.len(), n + 2);
        t.elapsed().as_secs_f64()
    };
    // 8 times the markers: 8 times the time if linear, 64 if quadratic; the fastest of three
    // runs each, interleaved, against the noise of a shared machine
    let (n_small, n_large) = (1_500, 12_000);
    let (a, b) = (with_markers(n_small), with_markers(n_large));
    let (mut small, mut large) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        small = small.min(once(&a, n_small));
        large = large.min(once(&b, n_large));
    }
    assert!(large < 24.0 * small, "{n_small} markers {small:.4} s, {n_large}: {large:.4} s: not linear");
    let attrs: String = (0..100_000).map(|k| format!(" a{k}=\"1\"")).collect();
    let text = pin().replacen("<Body name=\"b1\">", &format!("<Body name=\"b1\"{attrs}>"), 1);
    let (d, r) = problem(&text);
    assert!(r.contains("more than 256 attributes"), "{r}");
    assert_eq!(d.location.map(|l| l.line), Some(line_of(&text, "<Body name=\"b1\" a0")));
}
