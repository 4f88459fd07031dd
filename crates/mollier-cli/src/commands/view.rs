//! `mollier view MODEL [--motion M | --results DIR] --out view.html`: one self-contained page
//! that draws the model moving through the motion, muscles coloured by force with results
//! (crate `mollier-view`; docs/viewer.md).

use std::path::PathBuf;

use super::prelude::*;

/// What `mollier view` is given.
pub(crate) struct Request<'a> {
    pub(crate) model: &'a Path,
    /// Folders of mesh files for an OpenSim model (`--geometry`).
    pub(crate) geometry: &'a [PathBuf],
    pub(crate) motion: Option<&'a Path>,
    pub(crate) results: Option<&'a Path>,
    /// The right half's results (`--compare DIR2`).
    pub(crate) compare: Option<&'a Path>,
    /// The right half's model (`--compare-model`; default the page's).
    pub(crate) compare_model: Option<&'a Path>,
    /// The right half's motion (`--compare-motion`; default `DIR2`'s, or the page's for the
    /// same model).
    pub(crate) compare_motion: Option<&'a Path>,
    pub(crate) every: usize,
    pub(crate) out: Option<&'a Path>,
    pub(crate) pictures: Pictures<'a>,
    pub(crate) force: bool,
    pub(crate) quiet: bool,
}

/// Pictures asked of `mollier view`: one frame as a PNG, every frame as PNGs, the motion as a
/// video of `fps` frames a second.
pub(crate) struct Pictures<'a> {
    pub(crate) png: Option<&'a Path>,
    pub(crate) frame: usize,
    pub(crate) frames: Option<&'a Path>,
    pub(crate) video: Option<&'a Path>,
    pub(crate) fps: f64,
    pub(crate) size: &'a str,
    pub(crate) view: &'a str,
}

/// `WxH` in pixels, each from 16 to 8192.
fn parse_size(text: &str) -> Option<(u32, u32)> {
    let (w, h) = text.split_once('x')?;
    let (w, h): (u32, u32) = (w.parse().ok()?, h.parse().ok()?);
    ((16..=8192).contains(&w) && (16..=8192).contains(&h)).then_some((w, h))
}

/// Where the frames of `--frames DIR` go: DIR is made when the frames are written (nothing is
/// made before the model is read); an existing DIR must hold nothing but files named as
/// Mollier names them (`frame-NNNNN.png`), which are replaced.
fn frames_dir(dir: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(dir) {
        Err(_) => Ok(()),
        Ok(m) if !m.is_dir() => Err(format!("{}: not a directory", dir.display())),
        Ok(_) => {
            let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("{}: {e}", dir.display()))?;
                let name = entry.file_name().to_string_lossy().into_owned();
                let ours = name
                    .strip_prefix("frame-")
                    .and_then(|n| n.strip_suffix(".png"))
                    .is_some_and(|n| n.len() == 5 && n.bytes().all(|b| b.is_ascii_digit()));
                if !ours || !entry.file_type().is_ok_and(|t| t.is_file()) {
                    return Err(format!(
                        "{}: holds {} that Mollier did not write: give an empty or new directory",
                        dir.display(),
                        printable(&name)
                    ));
                }
            }
            Ok(())
        }
    }
}

/// The model, well posed. An OpenSim model is imported in memory with its bodies' meshes, when
/// their files are found next to it, in its `Geometry/` folder or in `geometry` (as `mollier
/// import --geometry` takes them over); a mesh not found leaves its body drawn as capsules, as
/// the import report says.
fn load_model(model: &Path, geometry: &[PathBuf], registry: &Registry) -> Result<mollier::Compiled, ExitCode> {
    let file = model.display().to_string();
    if !file.to_ascii_lowercase().ends_with(".osim") {
        return load_well_posed(model, registry);
    }
    let imported = mollier_format::read_text(model, "OpenSim model").and_then(|text| {
        let (mut import, _) = mollier::import_osim(&file, &text, registry)?;
        // the mesh paths relative to the model's folder, where the imported text is placed
        let dir = model.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let named = mollier_osim::geometry::mesh_refs(&file, &text, &import, &mut Vec::new()).len();
        let taken = mollier_osim::geometry::attach_geometry(&mut import, model, &text, geometry, dir);
        mollier::load_text(&format!("{file}.toml"), &import.toml, registry).map(|c| (c, taken, named))
    });
    match imported {
        Ok((c, taken, named)) => {
            if taken < named {
                errln!(
                    "note: {}: {taken} of its {named} meshes found (next to it, in its Geometry/ folder or a --geometry folder); the other bodies are drawn as capsules",
                    printable(&file)
                );
            }
            well_posed(c, model, registry)
        }
        Err(d) => {
            report(&d);
            Err(ExitCode::from(INVALID))
        }
    }
}

/// The motion of a results directory: `DIR/motion.csv` (a study) or the study's beside a
/// variant (`DIR/../motion.csv`).
fn results_motion(dir: &Path) -> Option<PathBuf> {
    [dir.join("motion.csv"), dir.join("..").join("motion.csv")].into_iter().find(|p| p.is_file())
}

pub(crate) fn run(r: &Request, registry: &Registry) -> ExitCode {
    // refused before any work: the page and pictures go nowhere but regular files
    let outputs: Vec<&Path> = r.out.into_iter().chain(r.pictures.png).chain(r.pictures.video).collect();
    if let Err(code) = check_outputs(&outputs, r.force) {
        return code;
    }
    if !(r.pictures.fps.is_finite() && (1.0..=240.0).contains(&r.pictures.fps)) {
        errln!("error: --fps {}: give 1 to 240 frames a second", r.pictures.fps);
        return ExitCode::from(INVALID);
    }
    let Some(size) = parse_size(r.pictures.size) else {
        errln!("error: --size {}: give WxH in pixels, each 16 to 8192 (e.g. 1280x960)", printable(r.pictures.size));
        return ExitCode::from(INVALID);
    };
    if let Some(dir) = r.pictures.frames
        && let Err(e) = frames_dir(dir)
    {
        errln!("error: {}", printable(&e));
        return ExitCode::from(INVALID);
    }
    let geometry = match page_geometry(r, registry) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let shown = geometry.shown();
    if r.pictures.png.is_some() && r.pictures.frame >= shown {
        errln!("error: --frame {}: the page draws frames 0 to {}", r.pictures.frame, shown - 1);
        return ExitCode::from(INVALID);
    }
    let page = mollier_view::page(&geometry);
    if let Some(out) = r.out {
        if let Err(code) = write_output(out, page.as_bytes(), r.force) {
            return code;
        }
        if !r.quiet {
            let muscles = |g: &mollier_view::Geometry| format!("{} frames, {} muscles", g.frames(), g.muscles.len());
            let other = geometry.compare.as_deref().map(|c| format!(" beside {} ({shown} steps)", muscles(c)));
            outln!(
                "{}: {}{}, {:.1} MB",
                out.display(),
                muscles(&geometry),
                other.unwrap_or_default(),
                page.len() as f64 / 1e6
            );
        }
    }
    pictures(r, &page, size, shown)
}

/// The geometry of the page: the model on its motion with its results, and with `--compare`,
/// `--compare-model` or `--compare-motion` the right half's (the same model and motion with
/// other results are solved once).
fn page_geometry(r: &Request, registry: &Registry) -> Result<mollier_view::Geometry, ExitCode> {
    let motion = motion_for(r.motion, r.results, None, "--motion")?;
    let bare = bare_geometry(r, r.model, motion.as_deref(), registry)?;
    let compared = r.compare.is_some() || r.compare_model.is_some() || r.compare_motion.is_some();
    let other = if compared {
        let model = r.compare_model.unwrap_or(r.model);
        let same = model == r.model;
        let other_motion =
            motion_for(r.compare_motion, r.compare, motion.clone().filter(|_| same), "--compare-motion")?;
        Some(if same && other_motion == motion {
            bare.clone()
        } else {
            bare_geometry(r, model, other_motion.as_deref(), registry)?
        })
    } else {
        None
    };
    let geometry = match r.results {
        Some(dir) => with_results(bare, dir)?,
        None => bare,
    };
    Ok(match (other, r.compare) {
        (Some(o), Some(dir)) => geometry.with_compare(with_results(o, dir)?),
        (Some(o), None) => geometry.with_compare(o),
        (None, _) => geometry,
    })
}

/// The motion of one half: `motion`, else that of the results directory `results` (its
/// `motion.csv`, or the study's beside it), else `fallback`; `None`: the model as placed.
fn motion_for(
    motion: Option<&Path>,
    results: Option<&Path>,
    fallback: Option<PathBuf>,
    flag: &str,
) -> Result<Option<PathBuf>, ExitCode> {
    match (motion, results) {
        (Some(m), _) => Ok(Some(m.to_path_buf())),
        (None, Some(dir)) => match results_motion(dir).or(fallback) {
            Some(m) => Ok(Some(m)),
            None => {
                errln!("error: {}: no motion.csv in it or beside it: give the motion with {flag}", dir.display());
                Err(ExitCode::from(INVALID))
            }
        },
        (None, None) => Ok(fallback),
    }
}

/// The geometry of `model` through `motion` (none: as its file places it), with its bodies'
/// meshes, before any results.
fn bare_geometry(
    r: &Request,
    model: &Path,
    motion: Option<&Path>,
    registry: &Registry,
) -> Result<mollier_view::Geometry, ExitCode> {
    let compiled = load_model(model, r.geometry, registry)?;
    let (times, q, source) = match motion {
        Some(p) => {
            let m = load_motion(p, &compiled, r.quiet)?;
            (m.times, m.q, m.file)
        }
        None => {
            let mut rows = mollier::Rows::new(compiled.model.n_q());
            rows.push(&compiled.model.q0());
            (vec![0.0], rows, model.display().to_string())
        }
    };
    // the model's own name (any text: the page shows it as text) and its file
    let title = match &compiled.document.spec().name {
        Some(name) => format!("{name} ({})", model.display()),
        None => model.display().to_string(),
    };
    let geometry = mollier_view::Geometry::build(&compiled, &times, &q, r.every, &title).map_err(|e| {
        errln!("error: {source}: {e}");
        ExitCode::from(FAILED)
    })?;
    if let Some((n, k)) = geometry.thinned {
        // not silenced by --quiet: the page is not what was asked for
        errln!(
            "note: {source}: {n} frames drawn every {k}th ({} frames: a page draws at most {})",
            geometry.frames(),
            mollier_view::FRAME_BUDGET
        );
    }
    // the bodies' meshes; one that cannot be read leaves its body drawn as capsules
    let (meshes, warnings) = mollier_view::mesh::load_meshes(&compiled);
    for w in &warnings {
        errln!("{w}");
    }
    Ok(geometry.with_meshes(meshes))
}

/// `geometry` with the muscle forces of results directory `dir` (`forces.csv`) and, when the
/// model has a joint cone and `dir` a `reactions.csv`, the joint force.
fn with_results(mut geometry: mollier_view::Geometry, dir: &Path) -> Result<mollier_view::Geometry, ExitCode> {
    let forces = mollier_view::read_forces(&dir.join("forces.csv")).and_then(|f| geometry.clone().with_forces(&f));
    match forces {
        Ok(g) => geometry = g,
        Err(e) => {
            errln!("error: {e}");
            return Err(ExitCode::from(INVALID));
        }
    }
    let path = dir.join("reactions.csv");
    if geometry.cone.is_none() || !path.is_file() {
        return Ok(geometry);
    }
    let joint = mollier_view::read_forces(&path).and_then(|t| {
        let cols = ["x", "y", "z"].map(|a| t.column(&format!("joint_force.{a}")));
        let per_frame: Vec<Option<[f64; 3]>> = geometry
            .times
            .iter()
            .map(|time| {
                let row = t.row_at(*time)?;
                let f = [0, 1, 2].map(|a| cols[a].map_or(f64::NAN, |c| t.values[row][c]));
                f.iter().all(|v| v.is_finite()).then_some(f)
            })
            .collect();
        geometry.clone().with_joint_force(&per_frame)
    });
    joint.map_err(|e| {
        errln!("error: {e}");
        ExitCode::from(INVALID)
    })
}

/// The PNGs of `--png` and `--frames`, drawn by headless Chromium from the page.
fn pictures(r: &Request, page: &str, size: (u32, u32), frames: usize) -> ExitCode {
    let p = &r.pictures;
    let shot = mollier_view::snapshot::Shot { size, view: p.view.to_string(), ..Default::default() };
    if let Some(file) = p.video {
        let bytes = match mollier_view::snapshot::video(page, p.fps, &shot) {
            Ok(b) => b,
            Err(e) => {
                errln!("error: {e}");
                return ExitCode::from(FAILED);
            }
        };
        if let Err(code) = write_output(file, &bytes, r.force) {
            return code;
        }
        if !r.quiet {
            outln!(
                "{}: {frames} frames at {} a second ({:.2} s), {}x{}, {:.1} MB",
                file.display(),
                p.fps,
                frames as f64 / p.fps,
                size.0,
                size.1,
                bytes.len() as f64 / 1e6
            );
        }
    }
    let wanted: Option<Vec<usize>> = match (p.png, p.frames) {
        (None, None) => return ExitCode::SUCCESS,
        (_, Some(_)) => None,
        (Some(_), None) => Some(vec![p.frame]),
    };
    let drawn = match mollier_view::snapshot::pngs(page, wanted.as_deref(), &shot) {
        Ok(d) => d,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::from(FAILED);
        }
    };
    let expected = wanted.as_ref().map_or(frames, Vec::len);
    if drawn.len() != expected {
        errln!("error: the browser drew {} of the {expected} pictures asked", drawn.len());
        return ExitCode::from(FAILED);
    }
    if let Some(png) = p.png {
        let Some((_, bytes)) = drawn.iter().find(|(k, _)| *k == p.frame) else {
            errln!("error: the browser did not draw frame {}", p.frame);
            return ExitCode::from(FAILED);
        };
        if let Err(code) = write_output(png, bytes, r.force) {
            return code;
        }
        if !r.quiet {
            outln!("{}: frame {} at {}x{}", png.display(), p.frame, size.0, size.1);
        }
    }
    if let Some(dir) = p.frames {
        if let Err(e) = std::fs::create_dir_all(dir) {
            errln!("error: {}: {e}", printable(&dir.display().to_string()));
            return ExitCode::from(INVALID);
        }
        for (k, bytes) in &drawn {
            // the directory holds only Mollier's frames (checked above): they are replaced
            if let Err(code) = write_output(&dir.join(format!("frame-{k:05}.png")), bytes, true) {
                return code;
            }
        }
        if !r.quiet {
            outln!("{}: {} frames as frame-00000.png ... at {}x{}", dir.display(), drawn.len(), size.0, size.1);
        }
    }
    ExitCode::SUCCESS
}
