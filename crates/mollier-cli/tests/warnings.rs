//! An anchor inside a wrap object with OpenSim's rule (`inside = "straight"`): the frame is
//! solved with the straight line and the element's warning is written per frame (`warnings.csv`:
//! time, element, warning) and counted in `summary.json`, by `kinematics`, `inverse-dynamics`,
//! `inverse` and `simulate`; with Mollier's own rule the same frame fails.

mod support;

use std::path::Path;

use support::{both, mollier, path_str, scratch};

/// An arm turning about z with a muscle from the ground to the arm over a sphere fixed to the
/// ground; at 90° the muscle's insertion is at the sphere's centre (inside it), at the other
/// frames outside. With a load-sharing table (for `inverse`) and a Hill muscle (for `simulate`).
fn model(inside: &str) -> String {
    model_at(inside, "[100, 0, 0]")
}

/// [`model`] with the insertion at `insertion` (mm, in the arm's frame).
fn model_at(inside: &str, insertion: &str) -> String {
    format!(
        r#"format_version = 1
name = "An insertion that passes through a sphere"
fixed = ["ground", "ball"]
inputs = ["elbow.rotation"]
free = ["over_ball"]

[units]
length = "mm"
angle = "deg"

[bodies.ground]
origin = [0, 0, 0]
points = {{ origin_point = [-150, 0, 0] }}

[bodies.ball]
origin = [0, 100, 0]

[bodies.arm]
origin = "ground"
points = {{ insertion = {insertion} }}
mass = 1.5
com = [400, 0, 0]
inertia = [75, 80000, 80000, 0, 0, 0]

[elements.elbow]
type = "hinge"
p = "ground"
q = "arm"
axis = [0, 0, 1]

[elements.over_ball]
type = "curved-truss"
p = "ground.origin_point"
q = "arm.insertion"
obstacles = [{{ type = "sphere", body = "ball", radius = 30{inside} }}]

[muscles.over_ball]
max_force = 300
optimal_fibre_length = 80
tendon_slack_length = 100

[load_sharing]
[load_sharing.muscles]
over_ball = {{ pcsa = 3 }}
"#
    )
}

const MOTION: &str = "time,elbow.rotation [deg]\n0,0\n1,30\n2,60\n3,90\n4,120\n";

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    path_str(&p).to_string()
}

#[test]
fn an_anchor_inside_a_wrap_object_is_a_warning_per_frame() {
    let dir = scratch("inside");
    let motion = write(&dir, "motion.csv", MOTION);
    let straight = write(&dir, "straight.toml", &model(r#", inside = "straight""#));
    for command in ["kinematics", "inverse-dynamics", "inverse"] {
        let out = dir.join(command);
        let mut args = vec![command, &straight, "--motion", &motion, "--out", path_str(&out)];
        if command == "inverse" {
            // no loads: the muscle has nothing to carry
            args.extend(["--static", "--criterion", "b"]);
        }
        let o = mollier(&args);
        assert!(o.status.success(), "{command}: {}", both(&o));
        assert!(both(&o).contains("warning: element warnings at 1 of 5 frames"), "{command}: {}", both(&o));
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!((summary["solved"].as_u64(), summary["failed"].as_u64()), (Some(5), Some(0)), "{summary}");
        assert_eq!((summary["warnings"].as_u64(), summary["warned_rows"].as_u64()), (Some(1), Some(1)), "{summary}");
        let table = std::fs::read_to_string(out.join("warnings.csv")).unwrap();
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(rows.len(), 2, "{table}");
        assert_eq!(rows[0], "time,element,warning");
        assert!(rows[1].starts_with("3,over_ball,path point 1 inside obstacle 0"), "{table}");
    }
    // a run that starts with the insertion at the sphere's centre: every row warns
    let inside = write(&dir, "inside.toml", &model_at(r#", inside = "straight""#, "[0, 100, 0]"));
    let out = dir.join("simulate");
    let o = mollier(&["simulate", &inside, "--duration", "0.05", "--output-dt", "0.01", "--out", path_str(&out)]);
    assert!(o.status.success(), "simulate: {}", both(&o));
    assert!(both(&o).contains("warning: element warnings at 6 of "), "simulate: {}", both(&o));
    let summary: serde_json::Value = serde_json::from_slice(&std::fs::read(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!((summary["warnings"].as_u64(), summary["warned_rows"].as_u64()), (Some(6), Some(6)), "{summary}");
    let table = std::fs::read_to_string(out.join("warnings.csv")).unwrap();
    assert_eq!(table.lines().count(), 7, "{table}");
    assert!(table.lines().nth(1).unwrap().starts_with("0,over_ball,path point 1 inside obstacle 0"), "{table}");
    // no warning where no anchor is inside: no table, a zero count
    let calm = write(&dir, "calm.csv", "time,elbow.rotation [deg]\n0,0\n1,30\n2,60\n");
    let out = dir.join("calm");
    let o = mollier(&["kinematics", &straight, "--motion", &calm, "--out", path_str(&out)]);
    assert!(o.status.success() && !both(&o).contains("warning"), "{}", both(&o));
    assert!(!out.join("warnings.csv").exists());
    // Mollier's own rule: the frame at 90° is outside the element's domain
    let strict = write(&dir, "strict.toml", &model(""));
    let out = dir.join("strict");
    let o = mollier(&["kinematics", &strict, "--motion", &motion, "--out", path_str(&out), "--on-error", "skip"]);
    assert_eq!(o.status.code(), Some(1), "{}", both(&o));
    assert!(both(&o).contains("inside the sphere"), "{}", both(&o));
    let _ = std::fs::remove_dir_all(&dir);
}
