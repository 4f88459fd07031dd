//! Bones: the mesh readers (VTP, OBJ, STL) read the same solid alike and place every problem; a
//! model's `geometry` entries become meshes in body coordinates (m), a mesh that cannot be read
//! is a warning naming the body, the file and the entry; bodies without meshes get capsules
//! between their joints.

use std::path::{Path, PathBuf};

use mollier::Rows;
use mollier_view::Geometry;
use mollier_view::mesh::{Mesh, load_meshes, read_mesh};

mod support;
use support::decode;

/// A directory of its own for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("mollier-view-meshes-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A square pyramid: base 2 x 2 in z = 0 centred on the origin, apex at z = 3 (volume 4), faces
/// counter-clockwise seen from outside; the base as one quad.
const PYRAMID: [[f64; 3]; 5] =
    [[-1.0, -1.0, 0.0], [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], [-1.0, 1.0, 0.0], [0.0, 0.0, 3.0]];
const FACES: [&[usize]; 5] = [&[0, 3, 2, 1], &[0, 1, 4], &[1, 2, 4], &[2, 3, 4], &[3, 0, 4]];

/// The enclosed volume by the divergence theorem (positive for outward faces).
fn volume(m: &Mesh) -> f64 {
    m.triangles
        .iter()
        .map(|t| {
            let [a, b, c] = t.map(|i| m.vertices[i as usize]);
            let cross = [b[1] * c[2] - b[2] * c[1], b[2] * c[0] - b[0] * c[2], b[0] * c[1] - b[1] * c[0]];
            (a[0] * cross[0] + a[1] * cross[1] + a[2] * cross[2]) / 6.0
        })
        .sum()
}

fn obj_text() -> String {
    let mut s = String::from("# a pyramid\no pyramid\n");
    for v in PYRAMID {
        s.push_str(&format!("v {} {} {}\n", v[0], v[1], v[2]));
    }
    s.push_str("vn 0 0 1\n");
    // the base with texture/normal indices, a side with negative (relative) indices
    s.push_str("f 1/1/1 4/1/1 3/1/1 2/1/1\nf -5 -4 -1\n");
    for f in &FACES[2..] {
        s.push_str(&format!("f {}\n", f.iter().map(|i| (i + 1).to_string()).collect::<Vec<_>>().join(" ")));
    }
    s
}

fn vtp_text() -> String {
    let points: String = PYRAMID.iter().map(|v| format!("{} {} {}\n", v[0], v[1], v[2])).collect();
    let conn: Vec<String> = FACES.iter().flat_map(|f| f.iter().map(usize::to_string)).collect();
    let mut offsets = Vec::new();
    let mut n = 0;
    for f in FACES {
        n += f.len();
        offsets.push(n.to_string());
    }
    format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n<PolyData>\n\
         <Piece NumberOfPoints=\"5\" NumberOfPolys=\"5\">\n<Points>\n\
         <DataArray type=\"Float32\" NumberOfComponents=\"3\" format=\"ascii\">\n{points}</DataArray>\n</Points>\n\
         <Polys>\n<DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n{}\n</DataArray>\n\
         <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n{}\n</DataArray>\n</Polys>\n\
         </Piece>\n</PolyData>\n</VTKFile>\n",
        conn.join(" "),
        offsets.join(" ")
    )
}

/// The pyramid's triangles (the base split in two).
fn triangles() -> Vec<[usize; 3]> {
    let mut t = Vec::new();
    for f in FACES {
        for k in 1..f.len() - 1 {
            t.push([f[0], f[k], f[k + 1]]);
        }
    }
    t
}

fn stl_ascii() -> String {
    let mut s = String::from("solid pyramid\n");
    for t in triangles() {
        s.push_str("  facet normal 0 0 0\n    outer loop\n");
        for i in t {
            let v = PYRAMID[i];
            s.push_str(&format!("      vertex {} {} {}\n", v[0], v[1], v[2]));
        }
        s.push_str("    endloop\n  endfacet\n");
    }
    s.push_str("endsolid pyramid\n");
    s
}

fn stl_binary() -> Vec<u8> {
    let t = triangles();
    let mut b = vec![0u8; 80];
    b.extend_from_slice(&(t.len() as u32).to_le_bytes());
    for tri in t {
        b.extend_from_slice(&[0u8; 12]);
        for i in tri {
            for c in PYRAMID[i] {
                b.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        b.extend_from_slice(&[0u8; 2]);
    }
    b
}

#[test]
fn the_four_readers_read_the_same_pyramid() {
    let dir = scratch("readers");
    std::fs::write(dir.join("p.obj"), obj_text()).unwrap();
    std::fs::write(dir.join("p.vtp"), vtp_text()).unwrap();
    std::fs::write(dir.join("p.stl"), stl_ascii()).unwrap();
    std::fs::write(dir.join("pb.STL"), stl_binary()).unwrap();
    for name in ["p.obj", "p.vtp", "p.stl", "pb.STL"] {
        let m = read_mesh(&dir.join(name)).unwrap_or_else(|e| panic!("{name}: {}", e.render()));
        assert_eq!(m.triangles.len(), 6, "{name}");
        // STL repeats corners: they are merged back to the five
        assert_eq!(m.vertices.len(), 5, "{name}");
        let mut v = m.vertices.clone();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let mut want = PYRAMID.to_vec();
        want.sort_by(|a, b| a.partial_cmp(b).unwrap());
        assert_eq!(v, want, "{name}");
        // base 4 x height 3 / 3, outward faces
        assert!((volume(&m) - 4.0).abs() < 1e-12, "{name}: volume {}", volume(&m));
    }
}

/// `(line, column)` of a reader's problem.
fn located(path: &Path, text: &[u8]) -> (Option<(usize, usize)>, String) {
    std::fs::write(path, text).unwrap();
    let e = read_mesh(path).expect_err("a malformed mesh");
    assert_eq!(e.file, path.display().to_string());
    (e.location.map(|l| (l.line, l.column)), e.message)
}

#[test]
fn malformed_meshes_are_located() {
    let dir = scratch("malformed");
    // a face naming a vertex that is not there: at the corner
    let (at, why) = located(&dir.join("a.obj"), b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 9\n");
    assert_eq!(at, Some((4, 7)), "{why}");
    assert!(why.contains("vertex 9"), "{why}");
    let (at, why) = located(&dir.join("b.obj"), b"v 0 0 0\nv 1 nan 0\n");
    assert_eq!(at, Some((2, 5)), "{why}");
    let (at, why) = located(&dir.join("c.obj"), b"v 0 0 0\n# nothing else\n");
    assert_eq!(at, None);
    assert!(why.contains("no triangles"), "{why}");
    // VTP: a binary array is refused with a reason, at its element
    let binary = vtp_text().replacen("format=\"ascii\"", "format=\"binary\"", 1);
    let (at, why) = located(&dir.join("d.vtp"), binary.as_bytes());
    assert_eq!(at, Some((6, 1)), "{why}");
    assert!(why.contains("ASCII"), "{why}");
    // an index past the points, a value that is not a number (at the value itself)
    let (at, why) = located(&dir.join("e.vtp"), vtp_text().replace("0 3 2 1", "0 3 2 7").as_bytes());
    assert_eq!(at.map(|a| a.0), Some(15), "{why}");
    assert!(why.contains("index 7"), "{why}");
    let (at, why) = located(&dir.join("f.vtp"), vtp_text().replace("\n1 -1 0\n", "\n1 x1 0\n").as_bytes());
    assert_eq!(at, Some((8, 3)), "{why}");
    let (at, _) = located(&dir.join("g.vtp"), b"<VTKFile type=\"PolyData\"><PolyData>");
    assert!(at.is_some());
    let (_, why) = located(&dir.join("h.vtp"), b"<VTKFile type=\"UnstructuredGrid\"/>");
    assert!(why.contains("PolyData"), "{why}");
    // STL: neither binary (size) nor text; a facet of 2 vertices
    let mut cut = stl_binary();
    cut.truncate(cut.len() - 7);
    let (_, why) = located(&dir.join("i.stl"), &cut);
    assert!(why.contains("neither a binary STL"), "{why}");
    let two = "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nendloop\nendfacet\nendsolid\n";
    let (at, why) = located(&dir.join("j.stl"), two.as_bytes());
    assert_eq!(at, Some((6, 1)), "{why}");
    // missing, a directory, another kind of file
    let e = read_mesh(&dir.join("missing.vtp")).unwrap_err();
    assert!(e.message.contains("cannot read"), "{}", e.message);
    std::fs::create_dir_all(dir.join("k.stl")).unwrap();
    assert!(read_mesh(&dir.join("k.stl")).unwrap_err().message.contains("regular file"));
    let (_, why) = located(&dir.join("l.ply"), b"ply\n");
    assert!(why.contains(".vtp, .obj or .stl"), "{why}");
}

/// A rod hinged to the ground in millimetres, its bone a mesh scaled by 2 and moved 100 mm
/// along x; a second body (`link`, hinged to the rod's tip) with a missing and a malformed
/// mesh only.
fn model(dir: &Path) -> PathBuf {
    std::fs::write(dir.join("bone.obj"), obj_text()).unwrap();
    std::fs::write(dir.join("bad.vtp"), "<VTKFile type=\"PolyData\"><PolyData><Piece>").unwrap();
    let text = r#"format_version = 1
fixed = ["ground"]
inputs = ["swing.rotation", "fold.rotation"]

[units]
length = "mm"

[bodies.ground]
origin = [0, 0, 0]

[bodies.rod]
origin = "ground"
points = { tip = [800, 0, 0] }
mass = 1.5
geometry = [{ mesh = "bone.obj", scale = [2, 2, 2], offset = [100, 0, 0] }]

[bodies.link]
origin = "rod.tip"
points = { end = [300, 0, 0] }
mass = 0.5
geometry = [{ mesh = "nowhere/missing.stl" }, { mesh = "bad.vtp" }]

[elements.swing]
type = "hinge"
p = "ground"
q = "rod"
axis = [0, 0, 1]

[elements.fold]
type = "hinge"
p = "rod"
q = "link"
axis = [0, 0, 1]
"#;
    let path = dir.join("model.toml");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn geometry_entries_become_meshes_and_bad_ones_warnings() {
    let dir = scratch("model");
    let path = model(&dir);
    let c = mollier::load(&path, &mollier::registry()).unwrap_or_else(|d| panic!("{}", d.render()));
    let (meshes, warnings) = load_meshes(&c);
    assert_eq!(meshes.len(), 1, "{warnings:?}");
    let rod = c.bodies.iter().position(|b| b.name == "rod").unwrap();
    assert_eq!(meshes[0].body, rod);
    assert_eq!(meshes[0].name, "bone.obj");
    // (v * 2 + [100, 0, 0]) mm in metres
    for (got, v) in meshes[0].mesh.vertices.iter().zip(PYRAMID) {
        let want = [(v[0] * 2.0 + 100.0) / 1000.0, v[1] * 2.0 / 1000.0, v[2] * 2.0 / 1000.0];
        assert!(got.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-15), "{got:?} {want:?}");
    }
    // each bad mesh: the entry's place, the body, the file's path and why; nothing of its text
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let file = path.display().to_string();
    assert!(warnings[0].starts_with(&format!("{file}:21:")), "{}", warnings[0]);
    assert!(warnings[0].contains("`link`") && warnings[0].contains("nowhere/missing.stl"), "{}", warnings[0]);
    assert!(warnings[0].contains("cannot read"), "{}", warnings[0]);
    assert!(warnings[1].contains("bad.vtp") && warnings[1].contains("not XML"), "{}", warnings[1]);
    assert!(!warnings[1].contains("<Piece>"), "{}", warnings[1]);
    // the page: the link keeps its capsule, the rod's mesh decodes to its vertices
    let mut q = Rows::new(c.model.n_q());
    q.push(&c.model.q0());
    let g = Geometry::build(&c, &[0.0], &q, 1, "m").unwrap().with_meshes(meshes.clone());
    let link = c.bodies.iter().position(|b| b.name == "link").unwrap();
    assert!(g.capsules.iter().any(|k| k.body == link));
    let json = g.to_json();
    let m = &json["meshes"][0];
    assert_eq!(m["index_bytes"], 2);
    let lo: Vec<f64> = (0..3).map(|a| m["box"][a].as_f64().unwrap()).collect();
    let hi: Vec<f64> = (3..6).map(|a| m["box"][a].as_f64().unwrap()).collect();
    let q16: Vec<u16> =
        decode(m["vertices"].as_str().unwrap()).chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    for (k, v) in meshes[0].mesh.vertices.iter().enumerate() {
        for a in 0..3 {
            let back = lo[a] + f64::from(q16[3 * k + a]) / 65535.0 * (hi[a] - lo[a]);
            assert!((back - v[a]).abs() <= (hi[a] - lo[a]) / 65535.0, "{back} {}", v[a]);
        }
    }
    let t: Vec<u16> =
        decode(m["triangles"].as_str().unwrap()).chunks(2).map(|b| u16::from_le_bytes([b[0], b[1]])).collect();
    let want: Vec<u16> = meshes[0].mesh.triangles.iter().flatten().map(|&i| i as u16).collect();
    assert_eq!(t, want);
}

/// The shoulder's bones without meshes: the clavicle from SC to AC, the scapula from AC to GH,
/// the humerus from GH to the hand (it carries no joint).
#[test]
fn the_shoulder_gets_capsules_between_its_joints() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let c = mollier::load(&root.join("models/shoulder/shoulder.toml"), &mollier::registry()).unwrap();
    let mut q = Rows::new(c.model.n_q());
    q.push(&c.model.q0());
    let g = Geometry::build(&c, &[0.0], &q, 1, "s").unwrap();
    let body = |n: &str| g.bodies.iter().position(|(b, _)| b == n).unwrap();
    let at = |i: usize| &g.positions[3 * i..3 * i + 3];
    let near = |i: usize, name: &str| {
        let p = g.points.iter().position(|x| x == name).unwrap_or_else(|| panic!("{name}"));
        at(i).iter().zip(at(p)).all(|(a, b)| (a - b).abs() < 1e-12)
    };
    let of = |b: &str| g.capsules.iter().filter(|k| k.body == body(b)).collect::<Vec<_>>();
    let clavicle = of("clavicle");
    assert_eq!(clavicle.len(), 1);
    assert!(near(clavicle[0].ends[0], "thorax.SC") && near(clavicle[0].ends[1], "AC"));
    let scapula = of("scapula");
    assert_eq!(scapula.len(), 1);
    assert!(near(scapula[0].ends[0], "AC") && near(scapula[0].ends[1], "scapula.GH"));
    assert_eq!(scapula[0].child, Some(body("humerus")));
    let humerus = of("humerus");
    assert_eq!(humerus.len(), 1);
    assert!(near(humerus[0].ends[1], "humerus.hand") && humerus[0].child.is_none());
    // radii within 0.4 % and 2 % of the scene
    for k in &g.capsules {
        assert!(k.radius >= 0.004 * 0.99 * g.axis_length / 0.08 && k.radius <= 0.02 * 1.01 * g.axis_length / 0.08);
    }
}
