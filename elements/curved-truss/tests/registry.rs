//! Building CURVED-TRUSS elements from parameter tables, as a model file would, with units
//! applied and every mistake reported at its parameter.

use mollier_core::conformance::{Options, check_element, evaluate};
use mollier_core::element::{ElementInfo, NodeKind, Order};
use mollier_core::geometry::quat_from_axis_angle;
use mollier_core::registry::{Frame, Params, Registry, Resolver, Units, Value};
use mollier_core::{Element, NodeId};
use mollier_curved_truss::{CurvedTruss, Obstacle, Shape, Side, TYPE, register};
use mollier_surface::frame::{ShapeFrame, body_fixed_xyz};

struct Names;

impl Resolver for Names {
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String> {
        match (name, kind) {
            ("P", NodeKind::Position) => Ok(NodeId::new(0)),
            ("Q", NodeKind::Position) => Ok(NodeId::new(1)),
            ("V", NodeKind::Position) => Ok(NodeId::new(4)),
            _ => Err(format!("no {kind} node called `{name}`")),
        }
    }
    fn frame(&self, name: &str) -> Option<Frame> {
        (name == "arm").then_some(Frame { position: NodeId::new(2), orientation: NodeId::new(3) })
    }
    fn initial(&self, _: NodeId) -> Option<Vec<f64>> {
        None
    }
}

fn s(v: &str) -> Value {
    Value::String(v.into())
}

fn nums(v: &[f64]) -> Value {
    Value::Array(v.iter().map(|x| Value::Number(*x)).collect())
}

fn table(kv: Vec<(&str, Value)>) -> Vec<(String, Value)> {
    kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn build(t: &[(String, Value)], units: Units) -> Result<Box<dyn Element>, String> {
    let mut reg = Registry::new();
    register(&mut reg).unwrap();
    let params = Params::new(t, "", &Names, units);
    reg.build("curved-truss", &params).map_err(|e| e.to_string())
}

/// p, q, arm origin, arm orientation, as a local coordinate vector.
fn coords(p: [f64; 3], q: [f64; 3]) -> Vec<f64> {
    let mut x: Vec<f64> = p.iter().chain(&q).copied().collect();
    x.extend_from_slice(&[0.01, -0.02, 0.03]);
    x.extend_from_slice(&quat_from_axis_angle(&[0.3, 0.2, 0.9], 0.4));
    x
}

#[test]
fn every_parameter_is_documented() {
    let names: Vec<&str> = TYPE.params.iter().map(|d| d.name).collect();
    assert_eq!(names, ["p", "q", "via", "obstacles", "wrapping"]);
    for d in TYPE.params.iter().chain(mollier_curved_truss::OBSTACLE_PARAMS) {
        assert!(d.doc.len() > 15, "{}", d.name);
    }
}

#[test]
fn a_cylinder_in_millimetres_equals_the_same_built_directly() {
    // radius 20 mm, axis along the body's y axis, centre offset, path over the body's +x face
    let t = table(vec![
        ("p", s("P")),
        ("q", s("Q")),
        (
            "obstacles",
            Value::Array(vec![Value::Table(table(vec![
                ("type", s("cylinder")),
                ("body", s("arm")),
                ("radius", Value::Number(20.0)),
                ("axis", nums(&[0.0, 1.0, 0.0])),
                ("centre", nums(&[10.0, 0.0, -5.0])),
                ("side", nums(&[1.0, 0.0, 0.0])),
            ]))]),
        ),
    ]);
    let mm = Units { length: 0.001, ..Units::default() };
    let mut el = build(&t, mm).unwrap();
    // the same directly: local z = body y, local y = body x (the side), local x = body z
    let fr = ShapeFrame::new([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]], [0.01, 0.0, -0.005]);
    let ob = Obstacle {
        shape: Shape::Cylinder { radius: 0.02, side: Side::Toward([0.0, 1.0]), length: None },
        frame: fr,
        body: Frame { position: NodeId::new(2), orientation: NodeId::new(3) },
        segment: 0,
    };
    let mut direct = CurvedTruss::new(&[NodeId::new(0), NodeId::new(1)], &[ob]).unwrap();
    // anchors 100° either side of the side direction (local y), so that the path goes over it
    let lam = quat_from_axis_angle(&[0.3, 0.2, 0.9], 0.4);
    let o = [0.01, -0.02, 0.03];
    let at =
        |ang: f64, z: f64| fr.global(&lam, &o, &[0.035 * ang.to_radians().cos(), 0.035 * ang.to_radians().sin(), z]);
    let x0 = coords(at(190.0, -0.03), at(-10.0, 0.03));
    el.initialize(&x0).unwrap();
    direct.initialize(&x0).unwrap();
    let (pieces, len) = direct.path(&x0).unwrap();
    assert!(pieces.len() == 3, "{pieces:?}");
    // over the constrained side (about 90° of arc), not the shorter way round (about 50°)
    if let mollier_curved_truss::Piece::Surface { length, .. } = pieces[1] {
        assert!(length > 0.02 * 70f64.to_radians(), "{length}");
    }
    let x1 = coords(at(185.0, -0.028), at(-5.0, 0.031));
    let (a, _, _) = evaluate(el.as_ref(), &x1, Order::Value).unwrap();
    let (b, _, _) = evaluate(&direct, &x1, Order::Value).unwrap();
    assert!((a[0] - b[0]).abs() < 1e-15 && len > 0.0, "{a:?} vs {b:?}");
    check_element(el.as_ref(), &x0, &Options { amplitude: 0.05, ..Options::default() }).unwrap();
}

#[test]
fn via_points_and_rotation_angles() {
    let t = table(vec![
        ("p", s("P")),
        ("q", s("Q")),
        ("via", Value::Array(vec![s("V")])),
        (
            "obstacles",
            Value::Array(vec![Value::Table(table(vec![
                ("type", s("ellipsoid")),
                ("body", s("arm")),
                ("semi_axes", nums(&[0.03, 0.02, 0.025])),
                ("rotation", nums(&[10.0, -20.0, 30.0])),
                ("segment", Value::Number(1.0)),
            ]))]),
        ),
    ]);
    let deg = Units { angle: std::f64::consts::PI / 180.0, ..Units::default() };
    let mut el = build(&t, deg).unwrap();
    // layout: P, V, Q, arm origin, arm orientation
    let names: Vec<usize> = el.layout().nodes().iter().map(|(n, _)| n.index()).collect();
    assert_eq!(names, [0, 4, 1, 2, 3]);
    let lam = quat_from_axis_angle(&[0.3, 0.2, 0.9], 0.4);
    let fr = ShapeFrame::from_matrix(
        &body_fixed_xyz(&[10f64.to_radians(), (-20f64).to_radians(), 30f64.to_radians()]),
        [0.0; 3],
    );
    let o = [0.01, -0.02, 0.03];
    let v = fr.global(&lam, &o, &[0.05, 0.01, 0.0]);
    let q = fr.global(&lam, &o, &[-0.05, 0.0, 0.01]);
    let mut x0 = vec![-0.1, 0.2, 0.0];
    x0.extend_from_slice(&v);
    x0.extend_from_slice(&q);
    x0.extend_from_slice(&o);
    x0.extend_from_slice(&lam);
    el.initialize(&x0).unwrap();
    let (e, g, _) = evaluate(el.as_ref(), &x0, Order::Gradient).unwrap();
    assert!(e[0] == 0.0 && g.iter().all(|v| v.is_finite()));
    check_element(el.as_ref(), &x0, &Options { amplitude: 0.02, samples: 4, ..Options::default() }).unwrap();
}

#[test]
fn mistakes_are_reported_at_their_parameter() {
    let ob = |kv: Vec<(&str, Value)>| {
        table(vec![("p", s("P")), ("q", s("Q")), ("obstacles", Value::Array(vec![Value::Table(table(kv))]))])
    };
    let cases: Vec<(Vec<(String, Value)>, &str)> = vec![
        (ob(vec![("type", s("sphere")), ("body", s("arm"))]), "obstacles[0].radius: missing"),
        (ob(vec![("type", s("cone")), ("body", s("arm"))]), "obstacles[0].type: unknown obstacle type"),
        (
            ob(vec![("type", s("sphere")), ("body", s("leg")), ("radius", Value::Number(1.0))]),
            "obstacles[0].body: no body",
        ),
        (ob(vec![("type", s("sphere")), ("body", s("arm")), ("radius", Value::Number(-1.0))]), "must be positive"),
        (
            ob(vec![
                ("type", s("sphere")),
                ("body", s("arm")),
                ("radius", Value::Number(1.0)),
                ("side", nums(&[1.0, 0.0, 0.0])),
            ]),
            "obstacles[0].side: `side` is for cylinders",
        ),
        (
            ob(vec![("type", s("ellipsoid")), ("body", s("arm")), ("radius", Value::Number(1.0))]),
            "obstacles[0].radius: an ellipsoid has `semi_axes`",
        ),
        (
            ob(vec![
                ("type", s("ellipsoid")),
                ("body", s("arm")),
                ("semi_axes", nums(&[1.0, 2.0, 3.0])),
                ("side", nums(&[0.0, 0.0, -1.0])),
            ]),
            "obstacles[0].side: an ellipsoid's `side` is OpenSim's quadrant: it needs `method = \"opensim\"`",
        ),
        (
            ob(vec![
                ("type", s("ellipsoid")),
                ("body", s("arm")),
                ("semi_axes", nums(&[1.0, 2.0, 3.0])),
                ("method", s("opensim")),
                ("side", nums(&[0.0, 1.0, -1.0])),
            ]),
            "obstacles[0].side: must point along one of the ellipsoid's own x, y or z axes",
        ),
        (
            ob(vec![
                ("type", s("cylinder")),
                ("body", s("arm")),
                ("radius", Value::Number(1.0)),
                ("axis", nums(&[0.0, 0.0, 1.0])),
                ("side", nums(&[0.0, 0.0, 2.0])),
            ]),
            "obstacles[0].side: must not be zero or parallel",
        ),
        (
            ob(vec![
                ("type", s("sphere")),
                ("body", s("arm")),
                ("radius", Value::Number(1.0)),
                ("rotation", nums(&[0.0, 0.0, 1.0])),
                ("x_axis", nums(&[1.0, 0.0, 0.0])),
            ]),
            "obstacles[0].rotation: give either",
        ),
        (
            ob(vec![
                ("type", s("sphere")),
                ("body", s("arm")),
                ("radius", Value::Number(1.0)),
                ("segment", Value::Number(1.0)),
            ]),
            "obstacles[0].segment",
        ),
        (
            ob(vec![
                ("type", s("sphere")),
                ("body", s("arm")),
                ("radius", Value::Number(1.0)),
                ("radus", Value::Number(1.0)),
            ]),
            "obstacles[0].radus: unknown parameter",
        ),
        (table(vec![("p", s("P")), ("q", s("X"))]), "q: no position node called `X`"),
    ];
    for (t, want) in cases {
        let err = build(&t, Units::default()).err().unwrap_or_else(|| panic!("expected an error containing `{want}`"));
        assert!(err.contains(want), "`{err}` should contain `{want}`");
    }
}
