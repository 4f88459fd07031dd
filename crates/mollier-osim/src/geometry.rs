//! Bone meshes: the `<Mesh>` geometry attached to an OpenSim model's bodies (and ground), taken
//! over as the bodies' `geometry` entries when the mesh files are found, for `mollier view`.
//! Drawing only: nothing of the mechanics changes. The Mollier body's frame is the OpenSim
//! body's (the import places both alike), so a mesh needs its scale factors only.

use std::path::{Component, Path, PathBuf};

use roxmltree::{Document, Node};
use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, Value};

use crate::Import;
use crate::report::Entry;
use crate::xml::{Src, child, name_of, set_objects};

/// A mesh entry to write: its path (as the model file will name it) and its scale factors.
type MeshEntry = (String, [f64; 3]);

/// A `<Mesh>` of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct MeshRef {
    /// The body, an index into the model's bodies (ground first).
    pub body: usize,
    /// The Mesh's name.
    pub name: String,
    /// Its `mesh_file`, as written.
    pub file: String,
    /// Its `scale_factors`.
    pub scale: [f64; 3],
    /// `file:line:col` of the `<Mesh>`.
    pub place: String,
}

/// The meshes attached directly to the bodies of the `.osim` text `text` (named `file`), in
/// order; meshes on other frames (offset frames) are reported in `skipped` and left out.
pub fn mesh_refs(file: &str, text: &str, import: &Import, skipped: &mut Vec<Entry>) -> Vec<MeshRef> {
    let Ok(prepared) = crate::xml::prepare(text) else { return Vec::new() };
    let opts = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: 50_000_000, ..Default::default() };
    let Ok(doc) = Document::parse_with_options(&prepared, opts) else { return Vec::new() };
    let src = Src::new(file, text, &doc);
    let Some(model) = child(doc.root_element(), "Model") else { return Vec::new() };
    let mut frames: Vec<Node> = child(model, "Ground").into_iter().collect();
    frames.extend(set_objects(model, "BodySet"));
    let mut out = Vec::new();
    for (k, frame) in frames.into_iter().enumerate() {
        // ground is body 0 even when the file has no <Ground> (it has none to draw then)
        let body = if frames_has_ground(model) { k } else { k + 1 };
        if body >= import.model.bodies.len() {
            break;
        }
        for mesh in frame.descendants().filter(|n| n.has_tag_name("Mesh")) {
            let owner = mesh.ancestors().skip(1).find(|a| a.has_tag_name("attached_geometry")).and_then(|a| a.parent());
            let place = src.place(mesh);
            if owner != Some(frame) {
                skipped.push(Entry::new(
                    &place,
                    name_of(mesh),
                    "Mesh",
                    "not drawn: on an offset frame, which the viewer does not place",
                ));
                continue;
            }
            let Some(file) = src.opt_text(mesh, "mesh_file").filter(|f| !f.is_empty()) else { continue };
            let scale = src.vec3_or(mesh, "scale_factors", [1.0; 3]).unwrap_or([1.0; 3]);
            out.push(MeshRef { body, name: name_of(mesh).to_string(), file: file.to_string(), scale, place });
        }
    }
    out
}

fn frames_has_ground(model: Node) -> bool {
    child(model, "Ground").is_some()
}

/// Where a mesh file is: next to the model, in the model's `Geometry/` folder (where OpenSim
/// looks), then in each of `dirs`; the first regular file found.
pub fn find_mesh(name: &str, model_dir: &Path, dirs: &[PathBuf]) -> Option<PathBuf> {
    // a name that climbs out (`../x`, `/etc/x`) is looked up by its file name only
    let base = Path::new(name).file_name()?;
    let plain = Path::new(name).components().all(|c| matches!(c, Component::Normal(_)));
    let mut candidates = Vec::new();
    for dir in std::iter::once(model_dir.to_path_buf())
        .chain(std::iter::once(model_dir.join("Geometry")))
        .chain(dirs.iter().cloned())
    {
        if plain {
            candidates.push(dir.join(name));
        }
        candidates.push(dir.join(base));
    }
    candidates.into_iter().find(|p| p.is_file())
}

/// `path` as seen from directory `from`: relative when both resolve (`../Geometry/x.vtp`), else
/// absolute.
fn relative(path: &Path, from: &Path) -> String {
    let (Ok(p), Ok(f)) = (path.canonicalize(), from.canonicalize()) else {
        return path.display().to_string();
    };
    let (pc, fc): (Vec<_>, Vec<_>) = (p.components().collect(), f.components().collect());
    let common = pc.iter().zip(&fc).take_while(|(a, b)| a == b).count();
    // sharing only the root (or a drive): the absolute path reads better than `../../..`
    if !pc.iter().take(common).any(|c| matches!(c, Component::Normal(_))) {
        return p.display().to_string();
    }
    let mut r = PathBuf::new();
    for _ in common..fc.len() {
        r.push("..");
    }
    for c in &pc[common..] {
        r.push(c);
    }
    // the model format's paths use `/` whatever the system
    r.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect::<Vec<_>>().join("/")
}

/// Take the `.osim`'s meshes over into the imported model: each mesh file found
/// ([`find_mesh`]: next to the model `osim`, in its `Geometry/`, in `dirs`) becomes a
/// `geometry` entry of its body, its path relative to `out_dir` (where the model file is
/// written); a mesh not found is an entry of the report. Returns the number taken over.
pub fn attach_geometry(import: &mut Import, osim: &Path, text: &str, dirs: &[PathBuf], out_dir: &Path) -> usize {
    let file = osim.display().to_string();
    let mut entries = Vec::new();
    let refs = mesh_refs(&file, text, import, &mut entries);
    let model_dir = osim.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut per_body: Vec<(usize, Vec<MeshEntry>)> = Vec::new();
    for r in &refs {
        match find_mesh(&r.file, &model_dir, dirs) {
            Some(found) => {
                let path = relative(&found, out_dir);
                match per_body.iter_mut().find(|(b, _)| *b == r.body) {
                    Some((_, list)) => list.push((path, r.scale)),
                    None => per_body.push((r.body, vec![(path, r.scale)])),
                }
            }
            None => entries.push(Entry::new(
                &r.place,
                &r.name,
                "Mesh",
                format!(
                    "not drawn: `{}` is neither next to the model, in its Geometry folder nor in a --geometry folder",
                    r.file
                ),
            )),
        }
    }
    let taken = per_body.iter().map(|(_, l)| l.len()).sum();
    if !per_body.is_empty() {
        let toml = format!("{}{}", import.toml, geometry_toml(&per_body, &import.body_names));
        // the file must still be one Mollier reads; if not, the meshes are left out, said so
        match mollier_format::parse(&format!("{file}.toml"), &toml) {
            Ok(_) => import.toml = toml,
            Err(d) => {
                let why = d.iter().next().map(|x| x.headline()).unwrap_or_default();
                entries.push(Entry::new(&file, "", "Mesh", format!("no mesh taken over: {why}")));
                import.report.entries.extend(entries);
                return 0;
            }
        }
    }
    import.report.entries.extend(entries);
    taken
}

/// `[[bodies.NAME.geometry]]` tables (names escaped by the serializer), after a heading.
fn geometry_toml(per_body: &[(usize, Vec<MeshEntry>)], names: &[String]) -> String {
    let mut bodies = Table::new();
    bodies.set_implicit(true);
    for (b, list) in per_body {
        let Some(name) = names.get(*b) else { continue };
        let mut body = Table::new();
        body.set_implicit(true);
        let mut all = ArrayOfTables::new();
        for (path, scale) in list {
            let mut t = Table::new();
            t.insert("mesh", Item::Value(Value::from(path.as_str())));
            if *scale != [1.0; 3] {
                t.insert("scale", Item::Value(Value::Array(scale.iter().map(|x| Value::from(*x)).collect())));
            }
            all.push(t);
        }
        body.insert("geometry", Item::ArrayOfTables(all));
        bodies.insert(name, Item::Table(body));
    }
    let mut d = DocumentMut::new();
    d.as_table_mut().insert("bodies", Item::Table(bodies));
    format!(
        "\n# ---- bone meshes: OpenSim's Mesh geometry, drawn by `mollier view` (drawing only)\n{}",
        d.to_string().trim_start()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A mesh beside the written model's folder is named through `..`; one that shares only the
    /// root is named absolutely.
    #[test]
    fn paths_are_relative_to_the_written_model() {
        let base = std::env::temp_dir().join(format!("mollier-osim-relative-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        std::fs::create_dir_all(base.join("models/out")).unwrap();
        std::fs::create_dir_all(base.join("Geometry")).unwrap();
        std::fs::write(base.join("Geometry/x.vtp"), "").unwrap();
        assert_eq!(relative(&base.join("Geometry/x.vtp"), &base.join("models/out")), "../../Geometry/x.vtp");
        assert_eq!(relative(&base.join("Geometry/x.vtp"), &base.join("Geometry")), "x.vtp");
        let root = relative(&base.join("Geometry/x.vtp"), Path::new("/"));
        assert!(root.starts_with('/') && root.ends_with("Geometry/x.vtp"), "{root}");
        // found by its file name only when the name climbs out
        assert_eq!(
            find_mesh("../../x.vtp", &base.join("models"), &[base.join("Geometry")]),
            Some(base.join("Geometry/x.vtp"))
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
