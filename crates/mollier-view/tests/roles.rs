//! Front ends select elements by the role their type declares, not by the type's name: element
//! types registered under new names (as a new element crate would) come out as muscles and
//! contacts in the facade's muscle columns and in the viewer, with no edit outside their crate.

use mollier::{KinematicsRun, MuscleColumns, Rows};
use mollier_core::ElementRole;
use mollier_core::registry::{ElementType, Registry};
use mollier_view::{Geometry, Group};

/// An arm hinged to the ground, a line of action from the ground to the arm with its elongation
/// free, a point of the arm against an ellipsoid of the ground with its distance free, and a bar
/// of the ground; `muscle` and `contact` are the types of the last two.
fn model(muscle: &str, contact: &str) -> String {
    format!(
        r#"format_version = 1
fixed = ["ground"]
inputs = ["elbow.rotation"]
free = ["biceps", "touch"]

[bodies.ground]
origin = [0, 0, 0]
points = {{ origin_b = [-0.2, 0.05, 0], tip = [0.3, 0, 0] }}

[bodies.arm]
origin = "ground"
points = {{ insertion = [0.2, 0.04, 0] }}

[elements.elbow]
type = "hinge"
p = "ground"
q = "arm"
axis = [0, 0, 1]

[elements.biceps]
type = "{muscle}"
p = "ground.origin_b"
q = "arm.insertion"

[elements.touch]
type = "{contact}"
point = "arm.insertion"
body = "ground"
centre = [0.2, -0.1, 0]
semi_axes = [0.1, 0.1, 0.1]
"#
    )
}

/// The built-in registry with `truss` and `surface` registered again as `name` types.
fn registry_with(muscle: &str, contact: &str) -> Registry {
    let mut r = mollier::registry();
    let (truss, surface) = (*r.get("truss").expect("truss"), *r.get("surface").expect("surface"));
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    r.register(ElementType { name: leak(muscle), ..truss }).expect("a new name");
    r.register(ElementType { name: leak(contact), ..surface }).expect("a new name");
    r
}

#[test]
fn a_renamed_line_of_action_is_a_muscle_and_a_renamed_contact_a_contact() {
    let r = registry_with("line-of-pull", "glide");
    assert_eq!(r.get("line-of-pull").map(|t| t.role), Some(ElementRole::LineOfAction));
    let c = mollier::load_text("roles.toml", &model("line-of-pull", "glide"), &r)
        .unwrap_or_else(|d| panic!("{}", d.render()));
    let roles: Vec<(&str, ElementRole)> = c.elements.iter().map(|e| (e.name.as_str(), e.role)).collect();
    assert_eq!(
        roles,
        [("elbow", ElementRole::Joint), ("biceps", ElementRole::LineOfAction), ("touch", ElementRole::Contact)]
    );

    let run = KinematicsRun::new(&c);
    assert_eq!(MuscleColumns::of(&c, &run).names(), ["biceps"]);

    let mut q = Rows::new(c.model.n_q());
    q.push(&c.model.q0());
    let g = Geometry::build(&c, &[0.0], &q, 1, "roles").expect("the initial configuration");
    assert_eq!(g.muscles, ["biceps"]);
    let group = |name: &str| g.elements.iter().find(|e| e.name == name).map(|e| e.group);
    assert_eq!(group("biceps"), Some(Group::Muscle));
    assert_eq!(group("touch"), Some(Group::Contact));
}

#[test]
fn the_built_in_types_and_their_renamed_copies_agree() {
    // the same model through the built-in names: the same muscles and groups
    let r = registry_with("line-of-pull", "glide");
    let groups = |text: String| {
        let c = mollier::load_text("roles.toml", &text, &r).unwrap_or_else(|d| panic!("{}", d.render()));
        let mut q = Rows::new(c.model.n_q());
        q.push(&c.model.q0());
        let g = Geometry::build(&c, &[0.0], &q, 1, "roles").expect("the initial configuration");
        g.elements.iter().map(|e| (e.name.clone(), e.group)).collect::<Vec<_>>()
    };
    assert_eq!(groups(model("truss", "surface")), groups(model("line-of-pull", "glide")));
}
