//! Bone meshes: reading VTK PolyData (`.vtp`, ASCII arrays, as OpenSim's `Geometry/` folder
//! holds them), Wavefront `.obj` and `.stl` (binary or ASCII) into triangles, and the bodies'
//! meshes of a model's `geometry` entries.
//!
//! Every reader is bounded: the file at most [`mollier_format::max_file_bytes`], at most
//! [`MAX_VERTICES`] vertices and [`MAX_TRIANGLES`] triangles, every index checked, every
//! coordinate finite. A problem is a [`Diagnostic`] on the mesh file, at `line:col` where the
//! format has lines.

use std::io::Read;
use std::path::{Path, PathBuf};

use mollier::Compiled;
use mollier_format::{Diagnostic, read_text};

/// The most vertices a mesh may have.
pub const MAX_VERTICES: usize = 4_000_000;
/// The most triangles a mesh may have.
pub const MAX_TRIANGLES: usize = 8_000_000;

/// Triangles over vertices, in the file's coordinates.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Mesh {
    /// The vertices.
    pub vertices: Vec<[f64; 3]>,
    /// The triangles, as indices into `vertices`, counter-clockwise seen from outside.
    pub triangles: Vec<[u32; 3]>,
}

/// A mesh fixed in a body, as the page draws it.
#[derive(Clone, Debug, PartialEq)]
pub struct BodyMesh {
    /// The body, an index into [`crate::Geometry::bodies`].
    pub body: usize,
    /// The mesh file's name (for the page's list).
    pub name: String,
    /// The mesh in body coordinates (m): scaled, moved by its offset, converted from the
    /// model's length unit.
    pub mesh: Mesh,
}

type Result<T> = std::result::Result<T, Box<Diagnostic>>;

fn problem(path: &Path, message: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(path.display().to_string(), "", message))
}

fn at(path: &Path, text: &str, offset: usize, message: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::new(path.display().to_string(), "", message).at_span(text, offset..offset + 1))
}

/// Read a mesh file, its format by its extension (`.vtp`, `.obj`, `.stl`, any case).
pub fn read_mesh(path: &Path) -> Result<Mesh> {
    let ext = path.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
    let mesh = match ext.as_deref() {
        Some("vtp") => vtp(path, &text(path)?)?,
        Some("obj") => obj(path, &text(path)?)?,
        Some("stl") => stl(path, &bytes(path)?)?,
        _ => return Err(problem(path, "not a mesh file Mollier reads: give a .vtp, .obj or .stl file")),
    };
    if mesh.triangles.is_empty() {
        return Err(problem(path, "the mesh has no triangles"));
    }
    Ok(mesh)
}

fn text(path: &Path) -> Result<String> {
    read_text(path, "mesh file")
        .map_err(|d| Box::new(d.0.into_iter().next().unwrap_or_else(|| *problem(path, "unreadable"))))
}

/// The bytes of a regular file of at most the size limit.
fn bytes(path: &Path) -> Result<Vec<u8>> {
    let limit = mollier_format::max_file_bytes().map_err(|m| problem(path, m))?;
    let meta = std::fs::metadata(path).map_err(|e| problem(path, format!("cannot read the mesh file: {e}")))?;
    if !meta.is_file() {
        return Err(problem(path, "not a regular file"));
    }
    let file = std::fs::File::open(path).map_err(|e| problem(path, format!("cannot read the mesh file: {e}")))?;
    let mut out = Vec::new();
    file.take(limit + 1).read_to_end(&mut out).map_err(|e| problem(path, format!("cannot read the mesh file: {e}")))?;
    if out.len() as u64 > limit {
        return Err(problem(path, format!("the mesh file is larger than {limit} bytes")));
    }
    Ok(out)
}

/// Where `part` (a slice of `text`) starts in `text`.
fn offset_in(text: &str, part: &str) -> usize {
    (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize).min(text.len())
}

fn finite(v: [f64; 3]) -> bool {
    v.iter().all(|x| x.is_finite())
}

/// A polygon of `n` corners as a fan of triangles.
fn fan(corners: &[u32], out: &mut Vec<[u32; 3]>) {
    for k in 1..corners.len().saturating_sub(1) {
        out.push([corners[0], corners[k], corners[k + 1]]);
    }
}

fn check_size(path: &Path, m: &Mesh) -> Result<()> {
    if m.vertices.len() > MAX_VERTICES || m.triangles.len() > MAX_TRIANGLES {
        return Err(problem(
            path,
            format!("the mesh is larger than {MAX_VERTICES} vertices or {MAX_TRIANGLES} triangles: simplify it"),
        ));
    }
    Ok(())
}

/// VTK PolyData, XML with ASCII arrays: `Piece/Points/DataArray` and the `connectivity` and
/// `offsets` of `Polys` (fanned into triangles) and `Strips`.
fn vtp(path: &Path, text: &str) -> Result<Mesh> {
    let doc = roxmltree::Document::parse(text).map_err(|e| {
        let pos = e.pos();
        let offset = text.split_inclusive('\n').take(pos.row.saturating_sub(1) as usize).map(str::len).sum::<usize>()
            + pos.col.saturating_sub(1) as usize;
        at(path, text, offset.min(text.len().saturating_sub(1)), format!("not XML: {e}"))
    })?;
    let root = doc.root_element();
    if root.tag_name().name() != "VTKFile" || root.attribute("type") != Some("PolyData") {
        return Err(at(path, text, root.range().start, "not a VTK PolyData file (<VTKFile type=\"PolyData\">)"));
    }
    let pieces: Vec<_> = root.descendants().filter(|n| n.has_tag_name("Piece")).collect();
    if pieces.is_empty() {
        return Err(at(path, text, root.range().start, "no <Piece> in the PolyData"));
    }
    let mut mesh = Mesh::default();
    for piece in pieces {
        let base = mesh.vertices.len();
        let points = piece
            .children()
            .find(|n| n.has_tag_name("Points"))
            .and_then(|p| p.children().find(|n| n.has_tag_name("DataArray")))
            .ok_or_else(|| at(path, text, piece.range().start, "a <Piece> without <Points><DataArray>"))?;
        let coords: Vec<f64> = array(path, text, points)?;
        if coords.len() % 3 != 0 {
            return Err(at(
                path,
                text,
                points.range().start,
                format!("{} point coordinates: not a multiple of 3", coords.len()),
            ));
        }
        if let Some(n) = piece.attribute("NumberOfPoints").and_then(|n| n.parse::<usize>().ok())
            && n * 3 != coords.len()
        {
            return Err(at(
                path,
                text,
                points.range().start,
                format!("{} points where NumberOfPoints is {n}", coords.len() / 3),
            ));
        }
        for c in coords.chunks(3) {
            let v = [c[0], c[1], c[2]];
            if !finite(v) {
                return Err(at(path, text, points.range().start, "a point coordinate is not finite"));
            }
            mesh.vertices.push(v);
        }
        let n = (mesh.vertices.len() - base) as u64;
        for kind in ["Polys", "Strips"] {
            let Some(cells) = piece.children().find(|c| c.has_tag_name(kind)) else { continue };
            let named = |name: &str| {
                cells.children().find(|c| c.has_tag_name("DataArray") && c.attribute("Name") == Some(name)).ok_or_else(
                    || at(path, text, cells.range().start, format!("<{kind}> without its `{name}` DataArray")),
                )
            };
            let (conn_node, off_node) = (named("connectivity")?, named("offsets")?);
            let conn: Vec<u64> = array(path, text, conn_node)?;
            let offsets: Vec<u64> = array(path, text, off_node)?;
            if let Some(&bad) = conn.iter().find(|&&i| i >= n) {
                return Err(at(path, text, conn_node.range().start, format!("index {bad} of a piece of {n} points")));
            }
            let mut start = 0usize;
            for &end in &offsets {
                let end = usize::try_from(end).unwrap_or(usize::MAX);
                if end < start || end > conn.len() {
                    return Err(at(
                        path,
                        text,
                        off_node.range().start,
                        format!("offset {end} outside 0..{}", conn.len()),
                    ));
                }
                let cell: Vec<u32> = conn[start..end].iter().map(|&i| (i + base as u64) as u32).collect();
                if kind == "Polys" {
                    fan(&cell, &mut mesh.triangles);
                } else {
                    // a strip: every three consecutive corners, every other one turned
                    for k in 0..cell.len().saturating_sub(2) {
                        let t = [cell[k], cell[k + 1], cell[k + 2]];
                        mesh.triangles.push(if k % 2 == 0 { t } else { [t[1], t[0], t[2]] });
                    }
                }
                start = end;
            }
        }
        check_size(path, &mesh)?;
    }
    Ok(mesh)
}

/// The values of an ASCII `<DataArray>`.
fn array<T: std::str::FromStr>(path: &Path, text: &str, node: roxmltree::Node<'_, '_>) -> Result<Vec<T>> {
    let format = node.attribute("format").unwrap_or("ascii");
    if format != "ascii" {
        return Err(at(
            path,
            text,
            node.range().start,
            format!(
                "a DataArray in {format} format: Mollier reads ASCII arrays only (save the mesh as ASCII VTP, or as .obj or .stl)"
            ),
        ));
    }
    let Some(body) = node.first_child().filter(|c| c.is_text()) else { return Ok(Vec::new()) };
    let data = body.text().unwrap_or("");
    let mut out = Vec::new();
    for (k, tok) in data.split_ascii_whitespace().enumerate() {
        if out.len() > 3 * MAX_VERTICES.max(MAX_TRIANGLES) {
            return Err(at(path, text, node.range().start, "the array is too long for a mesh Mollier draws"));
        }
        match tok.parse::<T>() {
            Ok(v) => out.push(v),
            Err(_) => {
                // the token's place when the text is the file's own (no entities in it)
                let place = if text.get(body.range()) == Some(data) {
                    body.range().start + offset_in(data, tok)
                } else {
                    node.range().start
                };
                return Err(at(
                    path,
                    text,
                    place,
                    format!("value {} of the DataArray is not a number of its type", k + 1),
                ));
            }
        }
    }
    Ok(out)
}

/// Wavefront OBJ: `v x y z` and `f a b c ...` (indices from 1, negative from the end, `a/t/n`
/// forms); faces fanned into triangles; other statements ignored.
fn obj(path: &Path, text: &str) -> Result<Mesh> {
    let mut mesh = Mesh::default();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let mut words = line.split_ascii_whitespace();
        match words.next() {
            Some("v") => {
                let mut v = [0.0; 3];
                for c in &mut v {
                    let w = words
                        .next()
                        .ok_or_else(|| at(path, text, offset_in(text, line), "a vertex needs x, y and z"))?;
                    *c = w.parse().ok().filter(|x: &f64| x.is_finite()).ok_or_else(|| {
                        at(path, text, offset_in(text, w), "a vertex coordinate is not a finite number")
                    })?;
                }
                mesh.vertices.push(v);
            }
            Some("f") => {
                let n = mesh.vertices.len() as i64;
                let mut corners = Vec::new();
                for w in words {
                    let i: i64 =
                        w.split('/').next().and_then(|i| i.parse().ok()).ok_or_else(|| {
                            at(path, text, offset_in(text, w), "a face's corner is not a vertex number")
                        })?;
                    let i = if i < 0 { n + i } else { i - 1 };
                    if i < 0 || i >= n {
                        return Err(at(
                            path,
                            text,
                            offset_in(text, w),
                            format!("vertex {} is not among the {n} vertices before it", i + 1),
                        ));
                    }
                    corners.push(i as u32);
                }
                if corners.len() < 3 {
                    return Err(at(path, text, offset_in(text, line), "a face needs 3 corners or more"));
                }
                fan(&corners, &mut mesh.triangles);
            }
            _ => {}
        }
        check_size(path, &mesh)?;
    }
    Ok(mesh)
}

/// STL: binary (80-byte header, a count, 50 bytes a triangle: the size tells) or ASCII
/// (`facet ... outer loop vertex x y z (x3) endloop endfacet`). Equal corners are merged.
fn stl(path: &Path, data: &[u8]) -> Result<Mesh> {
    let mut mesh = Mesh::default();
    let mut index = std::collections::HashMap::new();
    let mut corner = |mesh: &mut Mesh, v: [f64; 3]| -> u32 {
        let key = v.map(f64::to_bits);
        *index.entry(key).or_insert_with(|| {
            mesh.vertices.push(v);
            (mesh.vertices.len() - 1) as u32
        })
    };
    let count = data.get(80..84).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    if let Some(n) = count.filter(|n| data.len() as u64 == 84 + 50 * *n as u64) {
        if n > MAX_TRIANGLES {
            return Err(problem(path, format!("{n} triangles: more than {MAX_TRIANGLES}")));
        }
        for t in 0..n {
            let at = 84 + 50 * t + 12;
            let mut tri = [0u32; 3];
            for (k, slot) in tri.iter_mut().enumerate() {
                let f = |c: usize| {
                    let o = at + 12 * k + 4 * c;
                    f64::from(f32::from_le_bytes([data[o], data[o + 1], data[o + 2], data[o + 3]]))
                };
                let v = [f(0), f(1), f(2)];
                if !finite(v) {
                    return Err(problem(
                        path,
                        format!("triangle {}: a coordinate is not finite (byte {})", t + 1, at + 12 * k),
                    ));
                }
                *slot = corner(&mut mesh, v);
            }
            mesh.triangles.push(tri);
        }
        return Ok(mesh);
    }
    let text = std::str::from_utf8(data).map_err(|_| {
        problem(path, "neither a binary STL (its size is not 84 + 50 bytes a triangle) nor ASCII STL text")
    })?;
    if !text.trim_start().starts_with("solid") {
        return Err(problem(
            path,
            "neither a binary STL (its size is not 84 + 50 bytes a triangle) nor ASCII STL (`solid ...`)",
        ));
    }
    let mut words = text.split_ascii_whitespace();
    let mut loop_corners: Vec<u32> = Vec::new();
    while let Some(w) = words.next() {
        match w {
            "vertex" => {
                let mut v = [0.0; 3];
                for c in &mut v {
                    let x = words.next().unwrap_or("");
                    *c = x.parse().ok().filter(|x: &f64| x.is_finite()).ok_or_else(|| {
                        at(
                            path,
                            text,
                            offset_in(text, if x.is_empty() { w } else { x }),
                            "a vertex coordinate is not a finite number",
                        )
                    })?;
                }
                loop_corners.push(corner(&mut mesh, v));
            }
            "endloop" => {
                if loop_corners.len() != 3 {
                    return Err(at(
                        path,
                        text,
                        offset_in(text, w),
                        format!("a facet of {} vertices: STL facets have 3", loop_corners.len()),
                    ));
                }
                mesh.triangles.push([loop_corners[0], loop_corners[1], loop_corners[2]]);
                loop_corners.clear();
                check_size(path, &mesh)?;
            }
            _ => {}
        }
    }
    Ok(mesh)
}

/// The meshes of the model's bodies (their `geometry` entries; files relative to the model
/// file), in body coordinates in metres, and a warning for each mesh that cannot be drawn
/// (`file:line:col` of the entry, the body, the mesh's path and why; the body is drawn as
/// capsules when none of its meshes can be). A mesh file's contents are never shown: any file
/// can be named.
pub fn load_meshes(compiled: &Compiled) -> (Vec<BodyMesh>, Vec<String>) {
    let doc = &compiled.document;
    let dir = Path::new(doc.file()).parent().map(Path::to_path_buf).unwrap_or_default();
    let factor = doc.spec().units.length_factor();
    let (mut out, mut warnings) = (Vec::new(), Vec::new());
    for (b, body) in compiled.bodies.iter().enumerate() {
        let Some(spec) = doc.spec().bodies.get(&body.name) else { continue };
        for (k, g) in spec.geometry.iter().enumerate() {
            let field = format!("bodies.{}.geometry[{k}]", body.name);
            let file: PathBuf = dir.join(&g.mesh);
            let fine = g.scale.iter().chain(&g.offset).all(|v| v.is_finite());
            let read = if fine { read_mesh(&file) } else { Err(problem(&file, "scale and offset must be finite")) };
            match read {
                Ok(mut mesh) => {
                    for v in &mut mesh.vertices {
                        *v = std::array::from_fn(|a| (v[a] * g.scale[a] + g.offset[a]) * factor);
                    }
                    let name =
                        Path::new(&g.mesh).file_name().map_or(g.mesh.clone(), |n| n.to_string_lossy().into_owned());
                    out.push(BodyMesh { body: b, name, mesh });
                }
                Err(d) => {
                    let d = d.without_contents(doc.file());
                    let entry = doc.error(&format!("{field}.mesh"), "", "");
                    warnings.push(format!(
                        "{}: warning: {field}.mesh: the mesh of body `{}` is not drawn: {}: {}; the body is drawn as capsules unless another of its meshes is",
                        place(&entry),
                        mollier_format::printable(&body.name),
                        place(&d),
                        mollier_format::printable_lines(&d.message),
                    ));
                }
            }
        }
    }
    (out, warnings)
}

/// `file:line:col`, or `file` when the problem has no place.
fn place(d: &Diagnostic) -> String {
    let file = mollier_format::printable(&d.file);
    match d.location {
        Some(l) => format!("{file}:{}:{}", l.line, l.column),
        None => file.into_owned(),
    }
}
