//! Building SURFACE elements from parameter tables, as a model file would: units applied, the
//! ellipsoid placed by `centre` and `rotation` (or axes), the reference chosen, mistakes reported.

use mollier_core::conformance::evaluate;
use mollier_core::element::{NodeKind, Order};
use mollier_core::geometry::{norm, quat_from_axis_angle, sub};
use mollier_core::registry::{Frame, Params, Registry, Resolver, Units, Value};
use mollier_core::{Element, NodeId};
use mollier_surface::frame::{ShapeFrame, body_fixed_xyz};
use mollier_surface::{TYPE, register};

struct Names;

impl Resolver for Names {
    fn node(&self, name: &str, kind: NodeKind) -> Result<NodeId, String> {
        match (name, kind) {
            ("TS", NodeKind::Position) => Ok(NodeId::new(0)),
            _ => Err(format!("no {kind} node called `{name}`")),
        }
    }
    fn frame(&self, name: &str) -> Option<Frame> {
        (name == "thorax").then_some(Frame { position: NodeId::new(1), orientation: NodeId::new(2) })
    }
    fn initial(&self, _: NodeId) -> Option<Vec<f64>> {
        None
    }
}

fn nums(v: &[f64]) -> Value {
    Value::Array(v.iter().map(|x| Value::Number(*x)).collect())
}

fn build(kv: Vec<(&str, Value)>, units: Units) -> Result<Box<dyn Element>, String> {
    let t: Vec<(String, Value)> = kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    let mut reg = Registry::new();
    register(&mut reg).unwrap();
    reg.build("surface", &Params::new(&t, "", &Names, units)).map_err(|e| e.to_string())
}

#[test]
fn every_parameter_is_documented() {
    let names: Vec<&str> = TYPE.params.iter().map(|d| d.name).collect();
    assert_eq!(names, ["point", "body", "semi_axes", "centre", "x_axis", "y_axis", "rotation", "reference"]);
    assert!(TYPE.params.iter().all(|d| d.doc.len() > 15));
}

/// The DAS3 thorax in millimetres and degrees; a point 10 mm outside along the normal.
#[test]
fn thorax_in_millimetres_and_degrees() {
    let units = Units { length: 0.001, angle: std::f64::consts::PI / 180.0, ..Units::default() };
    let mut el = build(
        vec![
            ("point", Value::String("TS".into())),
            ("body", Value::String("thorax".into())),
            ("semi_axes", nums(&[147.0, 207.9, 94.4])),
            ("centre", nums(&[0.0, -148.6, 59.1])),
            ("rotation", nums(&[5.0, -10.0, 0.0])),
            ("reference", Value::String("surface".into())),
        ],
        units,
    )
    .unwrap();
    let lam = quat_from_axis_angle(&[0.1, 1.0, 0.2], 0.3);
    let o = [0.1, 1.2, 0.0];
    let fr = ShapeFrame::from_matrix(
        &body_fixed_xyz(&[5f64.to_radians(), (-10f64).to_radians(), 0.0]),
        [0.0, -0.1486, 0.0591],
    );
    // a surface point and its outward normal (in the ellipsoid frame): ∇(Σ y²/a²) ∝ y/a²
    let a = [0.147, 0.2079, 0.0944];
    let dir = [-0.7f64, 0.3, 0.6];
    let f: f64 = (0..3).map(|i| (dir[i] / a[i]).powi(2)).sum();
    let y = dir.map(|v| v / f.sqrt());
    let n = {
        let g = [y[0] / (a[0] * a[0]), y[1] / (a[1] * a[1]), y[2] / (a[2] * a[2])];
        let l = norm(&g);
        g.map(|v| v / l)
    };
    let point = fr.global(&lam, &o, &[0, 1, 2].map(|i| y[i] + 0.01 * n[i]));
    let mut x: Vec<f64> = point.to_vec();
    x.extend_from_slice(&o);
    x.extend_from_slice(&lam);
    el.initialize(&x).unwrap();
    let (e, g, _) = evaluate(el.as_ref(), &x, Order::Gradient).unwrap();
    assert!((e[0] - 0.01).abs() < 1e-15, "{e:?}");
    // the gradient is the global unit normal
    let ng = fr.global_vector(&lam, &n);
    assert!(norm(&sub(&[g[0], g[1], g[2]], &ng)) < 1e-14);
}

#[test]
fn mistakes_are_reported_at_their_parameter() {
    let base = || {
        vec![
            ("point", Value::String("TS".into())),
            ("body", Value::String("thorax".into())),
            ("semi_axes", nums(&[0.1, 0.2, 0.1])),
        ]
    };
    let with = |extra: Vec<(&'static str, Value)>| {
        let mut b = base();
        b.extend(extra);
        b
    };
    let cases: Vec<(Vec<(&str, Value)>, &str)> = vec![
        (with(vec![("reference", Value::String("initial".into()))]), ""),
        (with(vec![("reference", Value::String("centre".into()))]), "reference: unknown reference"),
        (vec![("point", Value::String("TS".into())), ("body", Value::String("thorax".into()))], "semi_axes: missing"),
        (
            vec![
                ("point", Value::String("TS".into())),
                ("body", Value::String("thorax".into())),
                ("semi_axes", nums(&[0.1, 0.0, 0.1])),
            ],
            "semi_axes: semi-axes must be positive",
        ),
        (with(vec![("rotation", nums(&[0.0, 0.0, 1.0])), ("y_axis", nums(&[0.0, 1.0, 0.0]))]), "rotation: give either"),
        (with(vec![("x_axis", nums(&[0.0, 1.0, 0.0]))]), "x_axis: the axes must be non-zero and not parallel"),
        (with(vec![("centre", nums(&[0.0, 1.0]))]), "centre: expected 3 numbers"),
        (
            vec![
                ("point", Value::String("TS".into())),
                ("body", Value::String("pelvis".into())),
                ("semi_axes", nums(&[0.1, 0.2, 0.1])),
            ],
            "body: no body called `pelvis`",
        ),
        (with(vec![("semi_axis", nums(&[1.0, 1.0, 1.0]))]), "semi_axis: unknown parameter"),
    ];
    for (kv, want) in cases {
        let r = build(kv, Units::default());
        if want.is_empty() {
            r.unwrap();
        } else {
            let err = r.err().unwrap_or_else(|| panic!("expected an error containing `{want}`"));
            assert!(err.contains(want), "`{err}` should contain `{want}`");
        }
    }
}
