//! Bone meshes of an imported OpenSim model: arm26's `<Mesh>` geometry becomes the bodies'
//! `geometry` entries when OpenSim's `Geometry/` folder is given (every mesh file found, its path
//! as seen from the written model), and a report entry per mesh when it is not. Needs
//! `.cache/opensim-models` with `Geometry/` (tools/fetch-opensim-models); skipped, saying so,
//! without it.

use std::path::Path;

use mollier_core::shared_data::opensim_models;

/// The `<mesh_file>`s of the text, counted apart from the import's reader.
fn mesh_files(text: &str) -> Vec<String> {
    text.split("<mesh_file>").skip(1).map(|t| t.split("</mesh_file>").next().unwrap_or("").trim().to_string()).collect()
}

#[test]
fn arm26_meshes_are_taken_over_from_the_geometry_folder() {
    let dir = opensim_models();
    let (osim, geometry) = (dir.join("arm26.osim"), dir.join("Geometry"));
    if !osim.is_file() || !geometry.is_dir() {
        mollier_core::shared_data::skip(
            "arm26_meshes_are_taken_over_from_the_geometry_folder",
            &format!("no {} with Geometry/ (tools/fetch-opensim-models brings them)", osim.display()),
        );
        return;
    }
    // the model alone in a folder of its own: nothing next to it
    let work = std::env::temp_dir().join(format!("mollier-osim-geometry-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("out")).unwrap();
    let text = std::fs::read_to_string(&osim).unwrap();
    let alone = work.join("arm26.osim");
    std::fs::write(&alone, &text).unwrap();
    let files = mesh_files(&text);
    assert_eq!(files.len(), 36);

    // without the folder: nothing taken over, every mesh in the report
    let mut imported = mollier_osim::import(&alone.display().to_string(), &text).unwrap();
    let before = imported.report.entries.len();
    let taken = mollier_osim::geometry::attach_geometry(&mut imported, &alone, &text, &[], &work.join("out"));
    assert_eq!(taken, 0);
    let missing: Vec<_> = imported.report.entries[before..].iter().filter(|e| e.kind == "Mesh").collect();
    assert_eq!(missing.len(), files.len());
    assert!(missing[0].action.contains(&files[0]) && missing[0].place.starts_with(&alone.display().to_string()));
    assert!(!imported.toml.contains(".geometry]]"));

    // with it: every mesh, as the written model sees it, in the file order of its body
    let mut imported = mollier_osim::import(&alone.display().to_string(), &text).unwrap();
    let taken = mollier_osim::geometry::attach_geometry(
        &mut imported,
        &alone,
        &text,
        std::slice::from_ref(&geometry),
        &work.join("out"),
    );
    assert_eq!(taken, files.len());
    let doc = mollier_format::parse("arm26.toml", &imported.toml).unwrap_or_else(|d| panic!("{}", d.render()));
    let mut named = Vec::new();
    for (_, body) in doc.spec().bodies.iter() {
        for g in &body.geometry {
            let path = work.join("out").join(&g.mesh);
            assert!(path.is_file(), "{}", path.display());
            assert_eq!(g.scale, [1.0; 3]);
            named.push(Path::new(&g.mesh).file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    let (mut a, mut b) = (named.clone(), files.clone());
    a.sort();
    b.sort();
    assert_eq!(a, b);
    // the bodies as OpenSim has them: r_humerus carries arm_r_humerus.vtp
    let humerus = doc.spec().bodies.get("r_humerus").expect("r_humerus");
    assert!(humerus.geometry.iter().any(|g| g.mesh.ends_with("arm_r_humerus.vtp")), "{:?}", humerus.geometry);
    let _ = std::fs::remove_dir_all(&work);
}
