//! Names are data: an OpenSim model whose names hold newlines, quotes, `]`, `#`, `=`, `<!--`,
//! `</script>` or control characters imports as the same model as with plain names — the same
//! bodies, points, elements, inputs, loads and units, every number the same — and it compiles,
//! is well posed and builds the viewer's page. Generated in the test (proptest), through
//! `.osim` text -> import -> parse -> compile -> check -> view.

use proptest::prelude::*;
use toml::Value;

/// A two-body model: a pin joint and a slider, a marker, a wrap cylinder and a muscle over it.
/// `names[k]` is the k-th name (model, bodies, joints, coordinates, marker, wrap, muscle, path
/// points), written into the XML as character references so that any character survives.
fn osim(names: &[String; 12]) -> String {
    let n: Vec<String> = names.iter().map(|s| xml_attr(s)).collect();
    let [model, b1, b2, j1, j2, c1, c2, marker, wrap, muscle, p1, p2] =
        [&n[0], &n[1], &n[2], &n[3], &n[4], &n[5], &n[6], &n[7], &n[8], &n[9], &n[10], &n[11]];
    // references to objects by name are element text, escaped as such
    let t: Vec<String> = names.iter().map(|s| xml_text(s)).collect();
    let (tb1, tb2, twrap) = (&t[1], &t[2], &t[8]);
    format!(
        r#"<?xml version="1.0" encoding="UTF-8" ?>
<OpenSimDocument Version="40000">
<Model name="{model}">
<gravity>0 -9.80665 0</gravity>
<Ground name="ground"/>
<BodySet><objects>
<Body name="{b1}"><mass>2</mass><mass_center>0 -0.1 0</mass_center><inertia>0.1 0.1 0.1 0 0 0</inertia>
<WrapObjectSet><objects><WrapCylinder name="{wrap}"><translation>0 -0.3 0</translation><radius>0.02</radius><length>0.1</length><quadrant>all</quadrant></WrapCylinder></objects></WrapObjectSet>
</Body>
<Body name="{b2}"><mass>1</mass><mass_center>0 -0.2 0</mass_center><inertia>0.05 0.05 0.05 0 0 0</inertia></Body>
</objects></BodySet>
<JointSet><objects>
<PinJoint name="{j1}">
<socket_parent_frame>/ground</socket_parent_frame><socket_child_frame>/bodyset/{tb1}</socket_child_frame>
<coordinates><Coordinate name="{c1}"><default_value>0.3</default_value><range>-3 3</range></Coordinate></coordinates>
</PinJoint>
<SliderJoint name="{j2}">
<socket_parent_frame>/bodyset/{tb1}</socket_parent_frame><socket_child_frame>/bodyset/{tb2}</socket_child_frame>
<coordinates><Coordinate name="{c2}"><default_value>-0.4</default_value><range>-1 0</range></Coordinate></coordinates>
</SliderJoint>
</objects></JointSet>
<ForceSet><objects>
<Thelen2003Muscle name="{muscle}">
<GeometryPath><PathPointSet><objects>
<PathPoint name="{p1}"><socket_parent_frame>/bodyset/{tb1}</socket_parent_frame><location>0.05 -0.1 0</location></PathPoint>
<PathPoint name="{p2}"><socket_parent_frame>/bodyset/{tb2}</socket_parent_frame><location>0.05 0.1 0</location></PathPoint>
</objects></PathPointSet>
<PathWrapSet><objects><PathWrap><wrap_object>{twrap}</wrap_object></PathWrap></objects></PathWrapSet>
</GeometryPath>
<max_isometric_force>500</max_isometric_force><optimal_fiber_length>0.1</optimal_fiber_length><tendon_slack_length>0.2</tendon_slack_length>
</Thelen2003Muscle>
</objects></ForceSet>
<MarkerSet><objects>
<Marker name="{marker}"><socket_parent_frame>/bodyset/{tb2}</socket_parent_frame><location>0.01 0.02 0.03</location></Marker>
</objects></MarkerSet>
</Model>
</OpenSimDocument>
"#
    )
}

/// Every character but ASCII letters and digits as a character reference: newlines and tabs in
/// attributes survive the XML reader's normalization.
fn xml_attr(s: &str) -> String {
    s.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_string() } else { format!("&#{};", c as u32) }).collect()
}

/// Element text: the markup characters escaped (whitespace at the ends would be trimmed by the
/// importer as by OpenSim, so names are generated without it).
fn xml_text(s: &str) -> String {
    xml_attr(s)
}

/// Names of tables whose keys are names (they may differ); everywhere else keys are fields and
/// must be the same.
const NAME_KEYED: [&str; 5] = ["nodes", "bodies", "elements", "points", "muscles"];

/// The same model: same keys (names aside) in the same order, same numbers and booleans, same
/// element and obstacle types; strings other than `type` are names and references.
fn same_meaning(a: &Value, b: &Value, key: &str, path: &str) -> Result<(), String> {
    match (a, b) {
        (Value::Table(x), Value::Table(y)) => {
            if x.len() != y.len() {
                return Err(format!("{path}: {} keys against {}", x.len(), y.len()));
            }
            for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                if !NAME_KEYED.contains(&key) && ka != kb {
                    return Err(format!("{path}: field `{ka}` against `{kb}`"));
                }
                same_meaning(va, vb, if NAME_KEYED.contains(&key) { "" } else { ka }, &format!("{path}.{ka}"))?;
            }
            Ok(())
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Err(format!("{path}: {} items against {}", x.len(), y.len()));
            }
            x.iter().zip(y).try_for_each(|(p, q)| same_meaning(p, q, key, path))
        }
        (Value::String(p), Value::String(q)) if key == "type" => {
            if p == q {
                Ok(())
            } else {
                Err(format!("{path}: type {p} against {q}"))
            }
        }
        (Value::String(_), Value::String(_)) => Ok(()),
        (p, q) if p == q => Ok(()),
        (p, q) => Err(format!("{path}: {p} against {q}")),
    }
}

/// Import, parse, compile, check and view; the model file as TOML values, and the page.
fn through(names: &[String; 12]) -> Result<(Value, String), String> {
    let imported = mollier_osim::import("m.osim", &osim(names)).map_err(|d| d.render())?;
    let value: Value = toml::from_str(&imported.toml).map_err(|e| e.to_string())?;
    let doc = mollier_format::parse("m.osim.toml", &imported.toml).map_err(|d| d.render())?;
    let registry = mollier::registry();
    let compiled = mollier::compile(&doc, &registry).map_err(|d| d.render())?;
    if !mollier::check(&compiled, &registry).is_well_posed() {
        return Err("not well posed".into());
    }
    let q = mollier::Rows::zeros(1, compiled.inputs.len());
    let geometry = mollier_view::Geometry::build(&compiled, &[0.0], &q, 1, &names[0]).map_err(|e| e.to_string())?;
    Ok((value, mollier_view::page(&geometry)))
}

fn plain() -> [String; 12] {
    std::array::from_fn(|k| format!("n{k}"))
}

/// The script data block of a viewer page.
fn data_block(page: &str) -> &str {
    let start = page.find("id=\"mollier-data\">").expect("data block") + "id=\"mollier-data\">".len();
    &page[start..start + page[start..].find("</script>").expect("its end")]
}

/// Characters XML 1.0 allows (the file is refused otherwise, which is tested apart).
fn name() -> impl Strategy<Value = String> {
    let pieces = prop_oneof![
        Just("\n".to_string()),
        Just("\r\n".to_string()),
        Just("\t".to_string()),
        Just("\"".to_string()),
        Just("'".to_string()),
        Just("]".to_string()),
        Just("[".to_string()),
        Just("#".to_string()),
        Just("=".to_string()),
        Just(".".to_string()),
        Just("::".to_string()),
        Just("\\".to_string()),
        Just("<!--".to_string()),
        Just("</script>".to_string()),
        Just("\u{85}\u{2028}\u{7f}".to_string()),
        Just("\nloads = { b = [0, -1e5, 0] }\n".to_string()),
        Just("\"\nunits = { length = \"mm\" }\n#".to_string()),
        "[a-z]{1,3}",
        "\\PC{1,2}",
    ];
    // a letter first and last: OpenSim trims names read as element text
    (proptest::collection::vec(pieces, 0..5), "[a-z]", "[a-z]").prop_map(|(v, a, z)| format!("{a}{}{z}", v.concat()))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn hostile_names_leave_the_model_the_same(names in proptest::array::uniform12(name())) {
        // unique, as OpenSim needs two bodies, joints or coordinates to be: the index last
        let names: [String; 12] = std::array::from_fn(|k| format!("{}{k}", names[k]));
        let (reference, _) = through(&plain()).expect("the plain model imports");
        let (value, page) = through(&names).map_err(|e| TestCaseError::fail(format!("{names:?}: {e}")))?;
        if let Err(e) = same_meaning(&reference, &value, "", "") {
            return Err(TestCaseError::fail(format!("{names:?} changes the model: {e}")));
        }
        // the viewer's data block holds the title as data: it does not end the script
        let data = data_block(&page);
        prop_assert!(!data.to_ascii_lowercase().contains("</script"), "{data}");
        let json: serde_json::Value = serde_json::from_str(data).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(json.to_string().contains(&serde_json::to_string(&names[0]).unwrap()), "the title is the name");
    }
}

#[test]
fn a_newline_in_the_model_name_adds_no_load_or_unit() {
    // issue 33's injection: an encoded newline in the model's name
    let mut names = plain();
    names[0] = "arm\nloads = { n2 = [0, -100000, 0] }\nunits = { length = \"mm\" }\n#".into();
    names[9] = "m\"\n[elements.x]\ntype = \"truss\"".into();
    let (reference, _) = through(&plain()).unwrap();
    let (value, _) = through(&names).unwrap();
    same_meaning(&reference, &value, "", "").unwrap();
    assert!(value.get("loads").is_none() && value.get("units").is_none());
    assert_eq!(value["name"].as_str(), Some(names[0].as_str()));
}

#[test]
fn names_the_xml_reader_refuses_are_refused_without_a_panic() {
    let mut names = plain();
    names[0] = "a\u{1b}[31mb".into();
    let e = mollier_osim::import("m.osim", &osim(&names)).unwrap_err().render();
    assert!(e.contains("not a valid XML file"), "{e}");
}

#[test]
fn a_comment_opener_in_the_title_does_not_blank_the_page() {
    let mut names = plain();
    names[0] = "a<!--b".into();
    let (_, page) = through(&names).unwrap();
    assert!(!data_block(&page).contains("<!--"));
}
