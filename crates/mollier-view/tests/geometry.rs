//! The geometry a page draws is the kernel's: positions bit for bit as `mollier kinematics`
//! computes them, muscle paths as long as the kernel's muscle lengths, forces matched by name
//! and time, and the page embeds what it was given.

use std::path::{Path, PathBuf};

use mollier::{KinematicsRun, Rows};
use mollier_view::{Forces, Geometry, Group, page, read_forces};

mod support;
use support::decode;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn model(name: &str) -> mollier::Compiled {
    mollier::load(&root().join(name), &mollier::registry()).expect("the model compiles")
}

fn f64s(s: &str) -> Vec<f64> {
    decode(s).chunks(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect()
}

/// A model and its geometry in one frame, the configuration its file places it in.
fn as_placed(name: &str) -> (mollier::Compiled, Geometry) {
    let c = model(name);
    let mut q = Rows::new(c.model.n_q());
    q.push(&c.model.q0());
    let g = Geometry::build(&c, &[0.0], &q, 1, name).expect("the initial configuration");
    (c, g)
}

fn wrapping() -> (mollier::Compiled, mollier::Motion) {
    let c = model("models/mechanisms/wrapping.toml");
    let m = mollier::read_motion(&root().join("models/mechanisms/wrapping-motion.csv"), &c.inputs).expect("motion");
    (c, m)
}

#[test]
fn positions_are_the_kinematics_and_paths_the_kernels_lengths() {
    let (c, m) = wrapping();
    let g = Geometry::build(&c, &m.times, &m.q, 1, "wrapping").expect("every frame solves");
    assert_eq!(g.frames(), m.times.len());
    assert_eq!(g.muscles, ["over_sphere", "over_cylinder", "over_ellipsoid"]);
    // the embedded positions, decoded, equal a kinematic run's bit for bit
    let json = g.to_json();
    let embedded = f64s(json["positions"].as_str().unwrap());
    let mut run = KinematicsRun::new(&c);
    let n = c.points.len() * 3;
    for i in 0..m.times.len() {
        let out = run.solve(&m.q[i]).unwrap();
        assert_eq!(&embedded[i * n..(i + 1) * n], out.positions.as_slice(), "frame {i}");
    }
    // each muscle's drawn polyline is as long as its length (chord error of the samples)
    let lengths = f64s(json["lengths"].as_str().unwrap());
    let mut wrapped = 0;
    let (mut start, nl) = (0usize, g.line_counts.len() / g.frames());
    for f in 0..g.frames() {
        for (l, view) in g.elements.iter().filter(|e| e.lines > 0).enumerate() {
            let count = g.line_counts[f * nl + l] as usize;
            let pts: Vec<[f64; 3]> =
                (0..count).map(|k| std::array::from_fn(|a| f64::from(g.line_points[(start + k) * 3 + a]))).collect();
            start += count;
            let Some(mu) = view.muscle else { continue };
            let drawn: f64 =
                pts.windows(2).map(|w| (0..3).map(|a| (w[1][a] - w[0][a]).powi(2)).sum::<f64>().sqrt()).sum();
            let kernel = lengths[f * g.muscles.len() + mu];
            assert!(
                (drawn - kernel).abs() < 2e-3 * kernel,
                "frame {f}, {}: drawn {drawn} m, kernel {kernel} m",
                view.name
            );
            if count > 4 {
                wrapped += 1;
            }
        }
    }
    assert!(wrapped > 0, "no frame wraps a muscle over its obstacle");
    // three obstacles, carried by their muscles
    let shapes: usize = g.elements.iter().map(|e| e.shapes.len()).sum();
    assert_eq!(shapes, 3);
    assert_eq!(g.shapes.len(), g.frames() * shapes * 12);
}

#[test]
fn every_nth_frame_keeps_the_last() {
    let (c, m) = wrapping();
    let g = Geometry::build(&c, &m.times, &m.q, 10, "wrapping").unwrap();
    let n = m.times.len();
    let want: Vec<f64> = (0..n).filter(|i| i % 10 == 0 || *i == n - 1).map(|i| m.times[i]).collect();
    assert_eq!(g.times, want);
    assert!(Geometry::build(&c, &[], &Rows::new(c.inputs.len()), 1, "none").is_err());
}

#[test]
fn the_shoulder_draws_its_muscles_thorax_and_contacts() {
    let (c, g) = as_placed("models/shoulder/shoulder.toml");
    let muscles = c.load_sharing.as_ref().unwrap().muscles.len();
    assert_eq!(g.muscles.len(), muscles);
    assert_eq!(g.elements.iter().filter(|e| e.group == Group::Muscle).count(), muscles);
    // TS and AI glide on the thorax: SURFACE contacts
    assert!(g.elements.iter().filter(|e| e.group == Group::Contact).count() >= 2);
    assert!(g.bodies.iter().any(|(n, p)| n == "scapula" && p.len() > 3));
}

/// Two hinges in a chain through an intermediate orientation node: `first` about z, then
/// `second` about x, turning `link` about the joint at (0.1, 0.2, 0.3) m.
const TWO_HINGES: &str = r#"
format_version = 1
name = "two hinges"
fixed = ["base"]
inputs = ["first.rotation", "second.rotation"]

[bodies.base]
origin = [0, 0, 0]
points = { joint = [0.1, 0.2, 0.3] }

[bodies.link]
origin = "base.joint"
points = { tip = [0.5, 0, 0] }

[nodes.between]
orientation = { euler = [1, 0, 0, 0] }

[elements.first]
type = "hinge"
p = "base"
q = "between"
axis = [0, 0, 1]

[elements.second]
type = "hinge"
p = "between"
q = "link"
axis = [1, 0, 0]
"#;

#[test]
fn hinge_axes_are_drawn_at_the_joint_along_the_turned_axis() {
    let c = mollier::load_text("two-hinges.toml", TWO_HINGES, &mollier::registry()).expect("the model compiles");
    let (a, b) = (0.7_f64, -0.4_f64);
    let mut q = Rows::new(2);
    q.push(&[0.0, 0.0]);
    q.push(&[a, b]);
    let g = Geometry::build(&c, &[0.0, 1.0], &q, 1, "two hinges").expect("both frames solve");
    let axes: Vec<_> = g.elements.iter().filter(|e| e.group == Group::JointAxes).collect();
    assert_eq!(axes.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), ["first", "second"]);
    assert!(axes.iter().all(|e| e.lines == 1));
    // the length: 8 % of the extent of the points in the first frame (the tip at x = 0.6 m)
    let extent = (0..3)
        .map(|k| {
            let v = g.positions[..g.points.len() * 3].iter().skip(k).step_by(3);
            v.clone().fold(f64::MIN, |m, &x| m.max(x)) - v.fold(f64::MAX, |m, &x| m.min(x))
        })
        .fold(0.0, f64::max);
    assert!((extent - 0.6).abs() < 1e-12 && (g.axis_length - 0.08 * extent).abs() < 1e-15, "{}", g.axis_length);
    // closed form in frame 1: `first` stays along z; `second` is turned by `first`: Rz(a) x
    let want = [[0.0, 0.0, 1.0], [a.cos(), a.sin(), 0.0]];
    for (k, dir) in want.iter().enumerate() {
        let lines = drawn(&g, 1, &axes[k].name);
        assert!(lines.len() == 1 && lines[0].len() == 2, "{lines:?}");
        let [p, q] = [lines[0][0], lines[0][1]];
        for i in 0..3 {
            let mid = 0.5 * (p[i] + q[i]);
            assert!((mid - [0.1, 0.2, 0.3][i]).abs() < 1e-7, "{}: the middle {mid} at {i}", axes[k].name);
            let along = (q[i] - p[i]) / g.axis_length;
            assert!((along - dir[i]).abs() < 1e-6, "{}: {along} vs {} at {i}", axes[k].name, dir[i]);
        }
    }
    // the page lists them
    assert_eq!(g.to_json()["elements"][0]["group"], "axes");
}

/// The polylines element `name` draws in frame `f` (m).
fn drawn(g: &Geometry, f: usize, name: &str) -> Vec<Vec<[f64; 3]>> {
    let nl = g.line_counts.len() / g.frames();
    let first = g.elements.iter().take_while(|e| e.name != name).map(|e| e.lines).sum::<usize>();
    let count = g.elements.iter().find(|e| e.name == name).expect("the element").lines;
    let mut start = g.line_counts[..f * nl + first].iter().sum::<u32>() as usize;
    (0..count)
        .map(|k| {
            let n = g.line_counts[f * nl + first + k] as usize;
            let line =
                (start..start + n).map(|j| std::array::from_fn(|a| f64::from(g.line_points[j * 3 + a]))).collect();
            start += n;
            line
        })
        .collect()
}

#[test]
fn shoulder_joint_models_draw_their_axes_at_the_shoulder_centre() {
    // as the file places them, the first axis drawn (flexion-torsion's z_i, the Engin joint's
    // sinus pole, the joint stop's contour pole) is the file's `fixed_z`, centred on the
    // humerus's origin
    let cases = [
        ("models/joints/flexion-torsion-shoulder.toml", "shoulder", [0.0, 0.0, -1.0]),
        ("models/joints/engin-shoulder.toml", "shoulder_resistance", [0.5014457, 0.8441951, 0.1894382]),
        ("models/joints/calspan-shoulder.toml", "shoulder_stop", [0.5014457, 0.8441951, 0.1894382]),
    ];
    for (file, name, z) in cases {
        let (c, g) = as_placed(file);
        let view = g.elements.iter().find(|e| e.name == name).unwrap();
        assert_eq!((view.group, view.lines), (Group::JointAxes, 2), "{file}");
        let humerus = c.bodies.iter().find(|b| b.name == "humerus").unwrap();
        assert_eq!(view.place, Some(humerus.frame.position), "{file}");
        let at = c.points.iter().position(|p| Some(p.node) == view.place).expect("a named place");
        let centre = &g.positions[3 * at..3 * at + 3];
        let norm = z.iter().map(|v| v * v).sum::<f64>().sqrt();
        let [p, q] = [drawn(&g, 0, name)[0][0], drawn(&g, 0, name)[0][1]];
        for i in 0..3 {
            assert!((0.5 * (p[i] + q[i]) - centre[i]).abs() < 1e-7, "{file}: the middle at {i}");
            assert!(((q[i] - p[i]) / g.axis_length - z[i] / norm).abs() < 1e-6, "{file}: the axis at {i}");
        }
    }
}

#[test]
fn the_hip_draws_its_hinges_and_cardan_axes() {
    let (_, g) = as_placed("models/joints/cardan-hip.toml");
    let lines = |kind: &str| -> usize {
        g.elements.iter().filter(|e| e.group == Group::JointAxes && e.kind == kind).map(|e| e.lines).sum()
    };
    // three hinges, and the cardan joint's three rotation axes
    assert_eq!((lines("hinge"), lines("cardan-joint")), (3, 3));
}

#[test]
fn forces_are_matched_by_name_and_time() {
    let (c, m) = wrapping();
    let g = Geometry::build(&c, &m.times, &m.q, 1, "wrapping").unwrap();
    let forces = Forces {
        file: "forces.csv".into(),
        names: vec!["over_cylinder".into(), "elsewhere".into()],
        times: vec![m.times[1]],
        values: vec![vec![12.5, 3.0]],
    };
    let g = g.with_forces(&forces).unwrap();
    let f = g.forces.as_ref().unwrap();
    let k = g.muscles.iter().position(|n| n == "over_cylinder").unwrap();
    assert_eq!(f[g.muscles.len() + k], 12.5);
    // a muscle or frame without a value has none (NaN, drawn grey), never a made-up one
    assert_eq!(f.iter().filter(|v| v.is_finite()).count(), 1);
    let none = Forces { names: vec!["elsewhere".into()], ..forces };
    assert!(g.with_forces(&none).unwrap_err().to_string().contains("no column names a muscle"));
}

#[test]
fn bad_forces_tables_are_located() {
    let dir = std::env::temp_dir().join(format!("mollier-view-forces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("forces.csv");
    std::fs::write(&p, "time,a,b\n0,1,2\n1,x,3\n").unwrap();
    let e = read_forces(&p).unwrap_err().to_string();
    assert!(e.contains("forces.csv:3") && e.contains("column `a`"), "{e}");
    std::fs::write(&p, "t,a\n0,1\n").unwrap();
    assert!(read_forces(&p).unwrap_err().to_string().contains(":1:"));
    std::fs::write(&p, "# a comment\ntime,a,b\n0,1,\n").unwrap();
    let f = read_forces(&p).unwrap();
    assert_eq!(f.names, ["a", "b"]);
    assert!(f.values[0][0] == 1.0 && f.values[0][1].is_nan());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_page_is_self_contained() {
    let (c, m) = wrapping();
    // `<!--` then `<script` would keep the data block open past its `</script>` (issue 33)
    let title = "a <!-- <script> </script> title";
    let g = Geometry::build(&c, &m.times, &m.q, 5, title).unwrap();
    let html = page(&g);
    // no network: nothing is fetched from elsewhere (the one URL is an XML namespace name;
    // GLSL has texelFetch)
    let text = html.replace("\"http://www.w3.org/1999/xhtml\"", "");
    for needle in ["http://", "https://", "<script src", "<link", "<img", "import(", " fetch(", "xmlhttprequest"] {
        assert!(!text.to_lowercase().contains(needle), "the page refers to `{needle}`");
    }
    assert!(html.contains("Permission is hereby granted"), "three.js's licence is kept");
    // the data element holds the geometry, and the title cannot end it early
    let start = html.find("id=\"mollier-data\">").unwrap() + "id=\"mollier-data\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    assert!(!html[start..end].contains('<'), "the data block holds a `<`");
    let data: serde_json::Value = serde_json::from_str(&html[start..end]).unwrap();
    assert_eq!(data["title"], title);
    assert_eq!(data["times"].as_array().unwrap().len(), g.frames());
}

/// The glenohumeral cone: an orthonormal frame at the joint centre; a force given in the cone
/// frame is drawn globally and reads back the same, inside or outside by its half-angles.
#[test]
fn the_joint_force_is_drawn_in_its_cone() {
    let c = model("models/shoulder/shoulder.toml");
    let mut q = Rows::new(c.model.n_q());
    q.push(&c.model.q0());
    q.push(&c.model.q0());
    let g = Geometry::build(&c, &[0.0, 1.0], &q, 1, "shoulder").unwrap();
    let cone = g.cone.as_ref().expect("the shoulder has a glenoid cone");
    let axes = cone.frames[3..12].to_vec();
    for a in 0..3 {
        for b in 0..3 {
            let d: f64 = (0..3).map(|i| axes[3 * a + i] * axes[3 * b + i]).sum();
            assert!((d - f64::from(u8::from(a == b))).abs() < 1e-12, "axes {a}, {b}: {d}");
        }
    }
    let f = [100.0, 10.0, -5.0];
    let g = g.with_joint_force(&[Some(f), None]).unwrap();
    let cone = g.cone.as_ref().unwrap();
    let global = cone.force.as_ref().unwrap();
    for a in 0..3 {
        let back: f64 = (0..3).map(|i| global[i] * axes[3 * a + i]).sum();
        assert!((back - f[a]).abs() < 1e-9, "component {a}: {back}");
    }
    assert!(global[3..].iter().all(|v| v.is_nan()), "a frame without a force has none");
    let [ty, tz] = cone.half_angles.map(f64::tan);
    assert!(cone.contains(&[1.0, 0.99 * ty, 0.0]) && !cone.contains(&[1.0, 1.01 * ty, 0.0]));
    assert!(cone.contains(&[1.0, 0.0, -0.99 * tz]) && !cone.contains(&[1.0, 0.0, -1.01 * tz]));
    assert!(!cone.contains(&[-1.0, 0.0, 0.0]));
    assert!(g.clone().with_joint_force(&[None]).is_err(), "one force per frame");
}

/// Two different models side by side: each keeps its own frames, and the page steps through both
/// on a shared normalized time (every frame of either one step; each half its nearest frame). The
/// compared geometry is embedded whole, with its own title, muscles and positions.
#[test]
fn a_pair_steps_through_both_motions_on_normalized_time() {
    let (c, m) = wrapping();
    let all = Geometry::build(&c, &m.times, &m.q, 1, "wrapping").unwrap();
    // the same model on its first 16 frames (0 to 0.75 s): normalized, frame k at k/15 and the
    // first's frame j at j/44 coincide at 0 and 1 only
    let short = Geometry::build(&c, &m.times[..16], &m.q, 1, "first 16").unwrap();
    assert_eq!((all.frames(), short.frames()), (45, 16));
    let pair = all.clone().with_compare(short);
    let steps = pair.steps();
    assert_eq!(pair.shown(), 45 + 16 - 2, "{steps:?}");
    assert_eq!((steps.first(), steps.last()), (Some(&[0, 0]), Some(&[44, 15])));
    // each half shows its frame nearest in normalized time (a half of the coarser spacing)
    for [a, b] in &steps {
        assert!((*a as f64 / 44.0 - *b as f64 / 15.0).abs() <= 0.5 / 15.0 + 1e-12, "[{a}, {b}]");
    }
    // each half moves forward only, and every frame of each is shown
    for s in 0..2 {
        assert!(steps.windows(2).all(|w| w[0][s] <= w[1][s]));
        let n = [45, 16][s];
        assert!((0..n).all(|f| steps.iter().any(|st| st[s] == f)), "half {s}");
    }
    // the same motion twice: frame k beside frame k
    let same = all.clone().with_compare(all.clone());
    assert_eq!(same.steps(), (0..45).map(|k| [k, k]).collect::<Vec<_>>());
    // another model as placed (one frame, at normalized time 0) beside the motion
    let (_, pendulum) = as_placed("models/mechanisms/pendulum.toml");
    let beside = all.clone().with_compare(pendulum);
    assert_eq!(beside.steps(), (0..45).map(|k| [k, 0]).collect::<Vec<_>>());
    let json = beside.to_json();
    assert_eq!(json["compare"]["title"], "models/mechanisms/pendulum.toml");
    assert_eq!(json["compare"]["muscles"].as_array().map(Vec::len), Some(0));
    assert!(json["compare"]["compare"].is_null() && json["steps"].as_array().map(Vec::len) == Some(45));
    assert_eq!(f64s(json["compare"]["positions"].as_str().unwrap()), beside.compare.as_ref().unwrap().positions);
}
