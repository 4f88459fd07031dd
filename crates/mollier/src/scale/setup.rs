//! What `mollier scale` is told: OpenSim's scale setup (`.xml`, its `ScaleTool`), or a small TOML
//! file of factors per body; and the marker set a setup names (OpenSim's `MarkerSet` XML).
//!
//! ```toml
//! mass = 72.6                          # kg: the subject's; the masses keep their distribution
//! [bodies]
//! femur_r = 1.147                      # the same factor along x, y and z
//! torso = [1.0, 1.08, 1.0]             # per axis of the body
//! ```

use std::path::{Path, PathBuf};

use mollier_format::{Diagnostic, Diagnostics, Spans};
use roxmltree::Node;

use crate::ik::relabel;
use crate::ik::tasks::{Tasks, has_tasks, located, tasks_under};

/// One step of the scaling, in the setup's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Factors from marker-pair distances ([`Measurement`]).
    Measurements,
    /// Factors given per body ([`ManualScale`]).
    Manual,
}

/// A body a measurement scales, and along which of its axes (x, y, z).
#[derive(Clone, Debug, PartialEq)]
pub struct BodyAxes {
    /// OpenSim's body name.
    pub body: String,
    /// Scaled along x, y, z.
    pub axes: [bool; 3],
    /// Where it is written.
    pub at: Diagnostic,
}

/// OpenSim's `Measurement`: the mean over its marker pairs of (distance in the trial) /
/// (distance in the model's default pose) scales its bodies.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Its name.
    pub name: String,
    /// The marker pairs.
    pub pairs: Vec<[String; 2]>,
    /// The bodies it scales.
    pub bodies: Vec<BodyAxes>,
    /// Where it is written.
    pub at: Diagnostic,
}

/// Factors given for one body.
#[derive(Clone, Debug, PartialEq)]
pub struct ManualScale {
    /// OpenSim's body name.
    pub body: String,
    /// Along the body's x, y, z.
    pub factors: [f64; 3],
    /// Where it is written.
    pub at: Diagnostic,
}

/// A scaling, as a setup file gives it.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleSetup {
    /// The file, as named.
    pub file: String,
    /// The subject's mass (kg); `None` keeps the model's masses (scaled by volume unless
    /// [`ScaleSetup::preserve_mass_distribution`]).
    pub mass: Option<f64>,
    /// OpenSim's `preserve_mass_distribution`: masses are not scaled by the bodies' volumes, only
    /// all together to [`ScaleSetup::mass`].
    pub preserve_mass_distribution: bool,
    /// The steps, in order; a later one overrides an earlier one's factors of a body.
    pub order: Vec<Step>,
    /// Measurements.
    pub measurements: Vec<Measurement>,
    /// Manual factors.
    pub manual: Vec<ManualScale>,
    /// The time range over which marker-pair distances are averaged (s).
    pub time_range: Option<[f64; 2]>,
    /// The static trial the setup names (resolved against the setup's folder).
    pub marker_file: Option<PathBuf>,
    /// The marker set the setup names (resolved against the setup's folder).
    pub marker_set_file: Option<PathBuf>,
    /// Where the marker set is named.
    pub marker_set_at: Option<Diagnostic>,
    /// A body the model does not have is refused (a TOML file) rather than passed over, as
    /// OpenSim passes over the bodies of its setups (gait2354's names patellae it has not).
    pub strict_bodies: bool,
    /// OpenSim's marker placement after the scaling, when its `MarkerPlacer` applies.
    pub placer: Option<MarkerPlacer>,
}

impl ScaleSetup {
    /// What a reader of `file` starts from before it reads the file: no mass, measurement,
    /// factor, time range, trial, marker set or placement, the mass distribution preserved, the
    /// reader's default `order` and `strict_bodies`.
    fn nothing_read(file: &str, order: Vec<Step>, strict_bodies: bool) -> Self {
        Self {
            file: file.to_string(),
            mass: None,
            preserve_mass_distribution: true,
            order,
            measurements: Vec::new(),
            manual: Vec::new(),
            time_range: None,
            marker_file: None,
            marker_set_file: None,
            marker_set_at: None,
            strict_bodies,
            placer: None,
        }
    }
}

/// OpenSim's `MarkerPlacer`: IK of the static trial's mean over a time range on the scaled
/// model, then each marker not `fixed` moved onto its measured place.
#[derive(Clone, Debug, PartialEq)]
pub struct MarkerPlacer {
    /// Its `IKTaskSet`; `None` when it has no task (every marker of the trial, weight 1, as
    /// OpenSim's `MarkersReference` without weights).
    pub tasks: Option<Tasks>,
    /// The static trial (resolved against the setup's folder).
    pub marker_file: Option<PathBuf>,
    /// The time range over which the trial is averaged (s).
    pub time_range: Option<[f64; 2]>,
    /// OpenSim's `move_model_markers` (true unless written otherwise).
    pub move_markers: bool,
    /// The name of the motion file OpenSim would write (`output_motion_file`); Mollier writes
    /// the static pose as `static_pose.csv` in its output directory either way.
    pub output_motion_file: Option<String>,
    /// Where the `MarkerPlacer` is written.
    pub at: Diagnostic,
    /// Where its `time_range` is written (the `MarkerPlacer` without one).
    pub time_range_at: Diagnostic,
}

/// Read a setup: OpenSim's scale setup for `.xml`, else the TOML file of factors.
pub fn read_setup(path: &Path) -> Result<ScaleSetup, Diagnostics> {
    let text = mollier_format::read_text(path, "scale setup")?;
    let mut setup = parse_setup(&path.display().to_string(), &text)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let placer_file = setup.placer.as_mut().and_then(|p| p.marker_file.as_mut());
    for f in [&mut setup.marker_file, &mut setup.marker_set_file].into_iter().flatten().chain(placer_file) {
        if f.is_relative() {
            *f = dir.join(&*f);
        }
    }
    Ok(setup)
}

/// Parse a setup's text (`.xml` names are OpenSim's).
pub fn parse_setup(file: &str, text: &str) -> Result<ScaleSetup, Diagnostics> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if Path::new(file).extension().is_some_and(|e| e.eq_ignore_ascii_case("xml")) {
        opensim_setup(file, text)
    } else {
        toml_setup(file, text)
    }
}

fn finite_positive(x: f64) -> bool {
    x.is_finite() && x > 0.0 && x <= mollier_format::MAX_MAGNITUDE
}

fn toml_setup(file: &str, text: &str) -> Result<ScaleSetup, Diagnostics> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        Diagnostics::one(
            located(file, text, e.span().unwrap_or(0..0), "", format!("not a valid TOML file: {}", e.message()))
                .with_hint("see docs/scaling.md for the factors file"),
        )
    })?;
    let spans = Spans::toml(text);
    let at = |path: &str| located(file, text, spans.value(path).unwrap_or(0..0), path, "");
    let number = |v: &toml::Value| v.as_float().or_else(|| v.as_integer().map(|i| i as f64));
    let mut problems = Vec::new();
    let mut setup = ScaleSetup::nothing_read(file, vec![Step::Manual], true);
    for (key, value) in &table {
        match (key.as_str(), value) {
            ("mass", v) => match number(v) {
                Some(m) if finite_positive(m) => setup.mass = Some(m),
                _ => problems.push(relabel(&at(key), "the subject's mass is a number > 0 (kg)", "e.g. `mass = 72.6`")),
            },
            ("bodies", toml::Value::Table(bodies)) => {
                for (body, v) in bodies {
                    let path = format!("bodies.{body}");
                    let f = match v {
                        toml::Value::Array(a) if a.len() == 3 => {
                            let f: Vec<Option<f64>> = a.iter().map(number).collect();
                            match f[..] {
                                [Some(x), Some(y), Some(z)] => Some([x, y, z]),
                                _ => None,
                            }
                        }
                        v => number(v).map(|s| [s; 3]),
                    };
                    match f {
                        Some(f) if f.iter().all(|s| finite_positive(*s)) => {
                            setup.manual.push(ManualScale { body: body.clone(), factors: f, at: at(&path) });
                        }
                        _ => problems.push(relabel(
                            &at(&path),
                            "a body's factor is a number > 0, or three (x, y, z)",
                            "e.g. `femur_r = 1.147` or `torso = [1.0, 1.08, 1.0]`",
                        )),
                    }
                }
            }
            _ => problems.push(
                located(file, text, spans.key(key).unwrap_or(0..0), key, format!("unknown field `{key}`"))
                    .with_hint("a factors file has `mass` and [bodies] (name = factor)"),
            ),
        }
    }
    if problems.is_empty() { Ok(setup) } else { Err(Diagnostics(problems)) }
}

fn parse_xml<'a>(file: &str, text: &'a str) -> Result<roxmltree::Document<'a>, Diagnostics> {
    roxmltree::Document::parse(text).map_err(|e| {
        let p = e.pos();
        let mut d = Diagnostic::new(file, "", format!("not a valid XML file: {e}"));
        d.location = Some(mollier_format::Location { line: p.row as usize, column: p.col as usize });
        Diagnostics::one(d)
    })
}

fn child<'a, 'i>(n: Node<'a, 'i>, tag: &str) -> Option<Node<'a, 'i>> {
    n.children().find(|c| c.has_tag_name(tag))
}

fn text_of<'a>(n: Node<'a, '_>) -> &'a str {
    n.text().unwrap_or("").trim()
}

/// The children of `n`'s `<tag><objects>` (OpenSim's Set).
fn objects<'a, 'i>(n: Node<'a, 'i>, tag: &str) -> Vec<Node<'a, 'i>> {
    child(n, tag)
        .and_then(|s| child(s, "objects"))
        .map(|o| o.children().filter(|c| c.is_element()).collect())
        .unwrap_or_default()
}

/// OpenSim's reading of a flag: `true` unless written otherwise.
fn applies(n: Node) -> bool {
    child(n, "apply").is_none_or(|a| text_of(a).eq_ignore_ascii_case("true"))
}

struct Xml<'a> {
    file: &'a str,
    text: &'a str,
}

impl Xml<'_> {
    fn at(&self, n: Node, path: &str) -> Diagnostic {
        located(self.file, self.text, n.range(), path, "")
    }
    fn problem(&self, n: Node, path: &str, message: impl Into<String>, hint: impl Into<String>) -> Diagnostic {
        relabel(&self.at(n, path), message, hint)
    }
    /// The numbers of child `tag` (`n` of them), or a problem placed there.
    fn numbers(&self, parent: Node, tag: &str, n: usize, path: &str) -> Result<Option<Vec<f64>>, Box<Diagnostic>> {
        let Some(c) = child(parent, tag) else { return Ok(None) };
        let v: Result<Vec<f64>, _> = text_of(c).split_whitespace().map(str::parse::<f64>).collect();
        match v {
            Ok(v) if v.len() == n && v.iter().all(|x| x.is_finite() && x.abs() <= mollier_format::MAX_MAGNITUDE) => {
                Ok(Some(v))
            }
            _ => Err(Box::new(self.problem(
                c,
                &format!("{path}/{tag}"),
                format!("<{tag}> is {n} finite number(s)"),
                "write the numbers separated by spaces",
            ))),
        }
    }
}

fn opensim_setup(file: &str, text: &str) -> Result<ScaleSetup, Diagnostics> {
    let doc = parse_xml(file, text)?;
    let x = Xml { file, text };
    let Some(tool) = doc.descendants().find(|n| n.has_tag_name("ScaleTool")) else {
        return Err(Diagnostics::one(
            located(file, text, 0..0, "", "no <ScaleTool> in the file")
                .with_hint("give OpenSim's scale setup (e.g. subject01_Setup_Scale.xml), or a TOML factors file"),
        ));
    };
    let mut problems = Vec::new();
    let mut setup = ScaleSetup::nothing_read(file, Vec::new(), false);
    // OpenSim's mass -1 (its default) keeps the model's total
    match x.numbers(tool, "mass", 1, "ScaleTool") {
        Ok(Some(m)) if finite_positive(m[0]) => setup.mass = Some(m[0]),
        Ok(Some(m)) if m[0] == -1.0 => {}
        Ok(None) => {}
        Ok(Some(_)) => problems.push(x.problem(
            child(tool, "mass").unwrap_or(tool),
            "ScaleTool/mass",
            "the subject's mass is a number > 0 (kg)",
            "or -1 to keep the model's",
        )),
        Err(d) => problems.push(*d),
    }
    let file_of = |n: Node, tag: &str| {
        child(n, tag).map(text_of).filter(|t| !t.is_empty() && *t != "Unassigned").map(PathBuf::from)
    };
    if let Some(maker) = child(tool, "GenericModelMaker") {
        setup.marker_set_file = file_of(maker, "marker_set_file");
        setup.marker_set_at = setup
            .marker_set_file
            .as_ref()
            .and(child(maker, "marker_set_file"))
            .map(|n| x.at(n, "ScaleTool/GenericModelMaker/marker_set_file"));
    }
    setup.placer =
        child(tool, "MarkerPlacer").filter(|p| applies(*p)).and_then(|p| marker_placer(&x, p, &mut problems));
    let Some(scaler) = child(tool, "ModelScaler").filter(|s| applies(*s)) else {
        return if problems.is_empty() { Ok(setup) } else { Err(Diagnostics(problems)) };
    };
    let path = "ScaleTool/ModelScaler";
    setup.marker_file = file_of(scaler, "marker_file");
    if let Some(p) = child(scaler, "preserve_mass_distribution") {
        setup.preserve_mass_distribution = text_of(p).eq_ignore_ascii_case("true");
    }
    match x.numbers(scaler, "time_range", 2, path) {
        Ok(Some(t)) if t[0] <= t[1] => setup.time_range = Some([t[0], t[1]]),
        Ok(Some(_)) => problems.push(x.problem(
            child(scaler, "time_range").unwrap_or(scaler),
            &format!("{path}/time_range"),
            "the time range starts after it ends",
            "write the first time first",
        )),
        Ok(None) => {}
        Err(d) => problems.push(*d),
    }
    let order = child(scaler, "scaling_order").map(text_of).unwrap_or("measurements");
    for word in order.split_whitespace() {
        match word {
            "measurements" => setup.order.push(Step::Measurements),
            "manualScale" => setup.order.push(Step::Manual),
            other => problems.push(x.problem(
                child(scaler, "scaling_order").unwrap_or(scaler),
                &format!("{path}/scaling_order"),
                format!("unknown scaling step `{other}`"),
                "the steps are `measurements` and `manualScale`",
            )),
        }
    }
    if let Some(set) = child(scaler, "MeasurementSet").filter(|s| s.attribute("file").is_some()) {
        problems.push(x.problem(
            set,
            &format!("{path}/MeasurementSet"),
            "a MeasurementSet in another file is not read",
            "copy its <objects> into the setup",
        ));
    }
    for m in objects(scaler, "MeasurementSet").into_iter().filter(|m| applies(*m)) {
        let name = m.attribute("name").unwrap_or("").to_string();
        let mpath = format!("{path}/MeasurementSet/Measurement[{name}]");
        let mut pairs = Vec::new();
        for p in objects(m, "MarkerPairSet") {
            let names: Vec<&str> = child(p, "markers").map(text_of).unwrap_or("").split_whitespace().collect();
            match names[..] {
                [a, b] => pairs.push([a.to_string(), b.to_string()]),
                _ => problems.push(x.problem(
                    p,
                    &format!("{mpath}/MarkerPair"),
                    "a marker pair names two markers",
                    "write `<markers> R.ASIS L.ASIS </markers>`",
                )),
            }
        }
        let mut bodies = Vec::new();
        for b in objects(m, "BodyScaleSet") {
            let body = b.attribute("name").unwrap_or("").to_string();
            let bpath = format!("{mpath}/BodyScale[{body}]");
            let mut axes = [false; 3];
            for a in child(b, "axes").map(text_of).unwrap_or("X Y Z").split_whitespace() {
                match a {
                    "x" | "X" => axes[0] = true,
                    "y" | "Y" => axes[1] = true,
                    "z" | "Z" => axes[2] = true,
                    other => problems.push(x.problem(
                        b,
                        &format!("{bpath}/axes"),
                        format!("unknown axis `{other}`"),
                        "the axes are X, Y and Z",
                    )),
                }
            }
            bodies.push(BodyAxes { body, axes, at: x.at(b, &bpath) });
        }
        if pairs.is_empty() {
            problems.push(x.problem(m, &mpath, "a measurement without marker pairs", "add a <MarkerPair>"));
        }
        setup.measurements.push(Measurement { name, pairs, bodies, at: x.at(m, &mpath) });
    }
    for s in objects(scaler, "ScaleSet").into_iter().filter(|s| applies(*s)) {
        let body = child(s, "segment").map(text_of).unwrap_or("").to_string();
        let spath = format!("{path}/ScaleSet/Scale[{body}]");
        match x.numbers(s, "scales", 3, &spath) {
            Ok(Some(f)) if f.iter().all(|v| finite_positive(*v)) => {
                setup.manual.push(ManualScale { body, factors: [f[0], f[1], f[2]], at: x.at(s, &spath) })
            }
            Ok(_) => {
                problems.push(x.problem(s, &spath, "a Scale has three factors > 0", "write `<scales> 1 1 1 </scales>`"))
            }
            Err(d) => problems.push(*d),
        }
    }
    if problems.is_empty() { Ok(setup) } else { Err(Diagnostics(problems)) }
}

/// The `MarkerPlacer` `p` (applied), its problems added to `problems`.
fn marker_placer(x: &Xml, p: Node, problems: &mut Vec<Diagnostic>) -> Option<MarkerPlacer> {
    let path = "ScaleTool/MarkerPlacer";
    let mut ok = true;
    if let Some(c) = child(p, "coordinate_file").filter(|c| !matches!(text_of(*c), "" | "Unassigned")) {
        problems.push(x.problem(
            c,
            &format!("{path}/coordinate_file"),
            "a coordinate file for the marker placement is not read",
            "hold coordinates with IKCoordinateTasks (default_value or manual_value) instead",
        ));
        ok = false;
    }
    let time_range = match x.numbers(p, "time_range", 2, path) {
        Ok(Some(t)) if t[0] <= t[1] => Some([t[0], t[1]]),
        Ok(Some(_)) => {
            problems.push(x.problem(
                child(p, "time_range").unwrap_or(p),
                &format!("{path}/time_range"),
                "the time range starts after it ends",
                "write the first time first",
            ));
            None
        }
        Ok(None) => None,
        Err(d) => {
            problems.push(*d);
            None
        }
    };
    let tasks = if has_tasks(p) {
        match tasks_under(x.file, x.text, p) {
            Ok(t) => Some(t),
            Err(d) => {
                problems.extend(d.0);
                ok = false;
                None
            }
        }
    } else {
        None
    };
    let output_motion_file =
        child(p, "output_motion_file").map(text_of).filter(|t| !t.is_empty() && *t != "Unassigned").map(str::to_string);
    let flag = |tag: &str| child(p, tag).is_none_or(|a| text_of(a).eq_ignore_ascii_case("true"));
    let marker_file = child(p, "marker_file").map(text_of).filter(|t| !t.is_empty() && *t != "Unassigned");
    ok.then(|| MarkerPlacer {
        tasks,
        marker_file: marker_file.map(PathBuf::from),
        time_range,
        move_markers: flag("move_model_markers"),
        output_motion_file,
        at: x.at(p, path),
        time_range_at: x.at(child(p, "time_range").unwrap_or(p), &format!("{path}/time_range")),
    })
}

/// A marker of a marker set: its body's name and its location in the body (m).
#[derive(Clone, Debug, PartialEq)]
pub struct SetMarker {
    /// OpenSim's name.
    pub name: String,
    /// The body's name (OpenSim 3's `<body>`, or the last part of `<socket_parent_frame>`).
    pub body: String,
    /// Location in the body (m).
    pub location: [f64; 3],
    /// OpenSim's `fixed`: left where it is by the marker placement.
    pub fixed: bool,
    /// Where it is written.
    pub at: Diagnostic,
}

/// Read OpenSim's marker set (`<MarkerSet>`, as the scale setup's `marker_set_file` names it).
pub fn read_marker_set(path: &Path) -> Result<Vec<SetMarker>, Diagnostics> {
    let text = mollier_format::read_text(path, "marker set")?;
    parse_marker_set(&path.display().to_string(), &text)
}

/// Parse a marker set's text.
pub fn parse_marker_set(file: &str, text: &str) -> Result<Vec<SetMarker>, Diagnostics> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let doc = parse_xml(file, text)?;
    let x = Xml { file, text };
    let Some(set) = doc.descendants().find(|n| n.has_tag_name("MarkerSet")) else {
        return Err(Diagnostics::one(
            located(file, text, 0..0, "", "no <MarkerSet> in the file").with_hint("give OpenSim's marker set file"),
        ));
    };
    let mut problems = Vec::new();
    let mut markers = Vec::new();
    for m in child(set, "objects")
        .map(|o| o.children().filter(|c| c.has_tag_name("Marker")).collect::<Vec<_>>())
        .unwrap_or_default()
    {
        let name = m.attribute("name").unwrap_or("").to_string();
        let path = format!("MarkerSet/Marker[{name}]");
        let body = child(m, "body")
            .or_else(|| child(m, "socket_parent_frame"))
            .map(|b| text_of(b).rsplit('/').next().unwrap_or("").to_string())
            .unwrap_or_default();
        if name.is_empty() || body.is_empty() {
            problems.push(x.problem(
                m,
                &path,
                "a marker needs a name and a body",
                "write <body> or <socket_parent_frame>",
            ));
            continue;
        }
        match x.numbers(m, "location", 3, &path) {
            Ok(l) => {
                let l = l.unwrap_or(vec![0.0; 3]);
                let fixed = child(m, "fixed").is_some_and(|f| text_of(f).eq_ignore_ascii_case("true"));
                let location = [l[0], l[1], l[2]];
                markers.push(SetMarker { name, body, location, fixed, at: x.at(m, &path) });
            }
            Err(d) => problems.push(*d),
        }
    }
    if problems.is_empty() { Ok(markers) } else { Err(Diagnostics(problems)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_factors_file_gives_manual_scales_and_refuses_what_is_not_a_factor() {
        let s = parse_setup("f.toml", "mass = 70\n[bodies]\nfemur_r = 1.1\ntorso = [1, 1.2, 1]\n").unwrap();
        assert_eq!(s.mass, Some(70.0));
        assert_eq!(s.manual.len(), 2);
        assert_eq!(s.manual[1].factors, [1.0, 1.2, 1.0]);
        let e = parse_setup("f.toml", "size = 3\n[bodies]\nfemur_r = -1\ntibia = [1, 2]\n").unwrap_err();
        let r: Vec<String> = e.iter().map(|d| d.render()).collect();
        assert_eq!(r.len(), 3, "{r:?}");
        let has = |start: &str, part: &str| r.iter().any(|d| d.starts_with(start) && d.contains(part));
        assert!(has("f.toml:3:11", "bodies.femur_r: a body's factor is a number > 0"), "{r:?}");
        assert!(has("f.toml:4:9", "bodies.tibia"), "{r:?}");
        assert!(has("f.toml:1:1", "unknown field `size`"), "{r:?}");
    }

    #[test]
    fn an_opensim_setup_with_a_bad_factor_is_refused_where_it_is() {
        let xml = "<OpenSimDocument><ScaleTool><mass>70</mass><ModelScaler>\n<scaling_order>manualScale</scaling_order>\n<ScaleSet><objects><Scale><scales> 1 x 1 </scales><segment>femur_r</segment></Scale></objects></ScaleSet></ModelScaler></ScaleTool></OpenSimDocument>";
        let e = parse_setup("s.xml", xml).unwrap_err();
        let r = e.iter().next().unwrap().render();
        assert!(r.starts_with("s.xml:3:27") && r.contains("Scale[femur_r]/scales"), "{r}");
    }

    /// Every problem's rendering, in order.
    fn rendered(e: Diagnostics) -> Vec<String> {
        e.iter().map(|d| d.render()).collect()
    }

    #[test]
    fn a_factors_file_refuses_masses_and_factors_out_of_range_and_keeps_its_defaults() {
        let s = parse_setup("f.TOML", "[bodies]\nhand = 2\n").unwrap();
        assert_eq!((s.mass, s.preserve_mass_distribution, s.strict_bodies), (None, true, true));
        assert_eq!((s.order, s.time_range, s.marker_file, s.marker_set_file), (vec![Step::Manual], None, None, None));
        assert_eq!(s.manual, vec![ManualScale { body: "hand".into(), factors: [2.0; 3], at: s.manual[0].at.clone() }]);
        for (text, field) in [
            ("mass = 0\n", "mass"),
            ("mass = -1\n", "mass"),
            ("mass = nan\n", "mass"),
            ("mass = \"70\"\n", "mass"),
            ("[bodies]\nhand = 0\n", "bodies.hand"),
            ("[bodies]\nhand = inf\n", "bodies.hand"),
            ("[bodies]\nhand = 1e300\n", "bodies.hand"),
            ("[bodies]\nhand = [1, 0, 1]\n", "bodies.hand"),
            ("[bodies]\nhand = [1, 1, 1, 1]\n", "bodies.hand"),
            ("[bodies]\nhand = [1, \"1\", 1]\n", "bodies.hand"),
        ] {
            let r = rendered(parse_setup("f.toml", text).unwrap_err());
            assert!(r.len() == 1 && r[0].contains(&format!("{field}: ")), "{text:?}: {r:?}");
        }
        let r = rendered(parse_setup("f.toml", "mass = 70\nbodies = 3\n").unwrap_err());
        assert!(r.len() == 1 && r[0].starts_with("f.toml:2:1") && r[0].contains("unknown field `bodies`"), "{r:?}");
    }

    const SETUP: &str = r#"<?xml version="1.0"?>
<OpenSimDocument Version="40000"><ScaleTool name="subject01">
<mass>72.6</mass>
<GenericModelMaker><model_file>m.osim</model_file><marker_set_file> markers.xml </marker_set_file></GenericModelMaker>
<ModelScaler><apply>true</apply>
<scaling_order> measurements manualScale </scaling_order>
<MeasurementSet><objects>
<Measurement name="pelvis"><apply>true</apply>
<MarkerPairSet><objects><MarkerPair><markers> R.ASIS L.ASIS </markers></MarkerPair><MarkerPair><markers>R.PSIS
L.PSIS</markers></MarkerPair></objects></MarkerPairSet>
<BodyScaleSet><objects><BodyScale name="pelvis"><axes> X z </axes></BodyScale><BodyScale name="sacrum"/>
<BodyScale name="hip"><axes>y</axes></BodyScale></objects></BodyScaleSet>
</Measurement>
<Measurement name="off"><apply>FALSE</apply><MarkerPairSet><objects><MarkerPair><markers>A B</markers></MarkerPair></objects></MarkerPairSet></Measurement>
</objects></MeasurementSet>
<ScaleSet><objects><Scale><scales> 1.1 1.2 1.3 </scales><segment> torso </segment><apply>true</apply></Scale>
<Scale><scales>2 2 2</scales><segment>skipped</segment><apply>false</apply></Scale></objects></ScaleSet>
<marker_file>static.trc</marker_file>
<time_range> 0.5 1.5 </time_range>
<preserve_mass_distribution>False</preserve_mass_distribution>
</ModelScaler></ScaleTool></OpenSimDocument>
"#;

    #[test]
    fn an_opensim_setup_is_read_field_by_field() {
        let s = parse_setup("s.XML", &format!("\u{feff}{SETUP}")).unwrap();
        assert_eq!(s.file, "s.XML");
        assert_eq!((s.mass, s.preserve_mass_distribution, s.strict_bodies), (Some(72.6), false, false));
        assert_eq!(s.order, [Step::Measurements, Step::Manual]);
        assert_eq!(s.time_range, Some([0.5, 1.5]));
        assert_eq!(s.marker_file.as_deref(), Some(Path::new("static.trc")));
        assert_eq!(s.marker_set_file.as_deref(), Some(Path::new("markers.xml")));
        assert_eq!(s.measurements.len(), 1, "the measurement with apply false is passed over");
        let m = &s.measurements[0];
        assert_eq!(m.name, "pelvis");
        assert_eq!(m.pairs, [["R.ASIS", "L.ASIS"].map(String::from), ["R.PSIS", "L.PSIS"].map(String::from)]);
        let bodies: Vec<(&str, [bool; 3])> = m.bodies.iter().map(|b| (b.body.as_str(), b.axes)).collect();
        assert_eq!(bodies, [("pelvis", [true, false, true]), ("sacrum", [true; 3]), ("hip", [false, true, false])]);
        assert!(
            m.at.render().starts_with("s.XML:8:1: error: ScaleTool/ModelScaler/MeasurementSet/Measurement[pelvis]")
        );
        assert!(m.bodies[2].at.render().starts_with("s.XML:12:1: "), "{}", m.bodies[2].at.render());
        assert_eq!(s.manual.len(), 1, "the scale with apply false is passed over");
        assert_eq!((s.manual[0].body.as_str(), s.manual[0].factors), ("torso", [1.1, 1.2, 1.3]));
        assert!(s.manual[0].at.render().starts_with("s.XML:16:20: error: ScaleTool/ModelScaler/ScaleSet/Scale[torso]"));
    }

    #[test]
    fn a_marker_placer_is_read_with_its_tasks_and_its_coordinate_file_refused() {
        let tool = |inner: &str| format!("<OpenSimDocument><ScaleTool>\n{inner}</ScaleTool></OpenSimDocument>");
        let placer = "<MarkerPlacer><IKTaskSet><objects>\n\
            <IKMarkerTask name=\"R.ASIS\"><weight>1000</weight></IKMarkerTask>\n\
            <IKMarkerTask name=\"Nose\"><apply>false</apply><weight>1</weight></IKMarkerTask>\n\
            <IKCoordinateTask name=\"knee\"><weight>10</weight></IKCoordinateTask></objects></IKTaskSet>\n\
            <marker_file>static.trc</marker_file><time_range>1 1.01</time_range>\n\
            <output_motion_file>pose.mot</output_motion_file></MarkerPlacer>";
        let p = parse_setup("s.xml", &tool(placer)).unwrap().placer.expect("a MarkerPlacer applies by default");
        let tasks = p.tasks.expect("its tasks");
        let markers: Vec<(&str, f64)> = tasks.markers.iter().map(|t| (t.name.as_str(), t.weight)).collect();
        assert_eq!(markers, [("R.ASIS", 1000.0)], "the task with apply false is passed over");
        assert_eq!(tasks.coordinates.len(), 1);
        assert_eq!((p.marker_file.as_deref(), p.time_range), (Some(Path::new("static.trc")), Some([1.0, 1.01])));
        assert_eq!((p.move_markers, p.output_motion_file.as_deref()), (true, Some("pose.mot")));
        assert!(p.time_range_at.render().starts_with("s.xml:6:38: "), "{}", p.time_range_at.render());
        // without tasks: every marker; not applied: none
        let p =
            parse_setup("s.xml", &tool("<MarkerPlacer><move_model_markers>false</move_model_markers></MarkerPlacer>"));
        let p = p.unwrap().placer.unwrap();
        assert_eq!((p.tasks, p.move_markers, p.time_range), (None, false, None));
        let s = parse_setup(
            "s.xml",
            &tool("<MarkerPlacer><apply>false</apply><coordinate_file>c.mot</coordinate_file></MarkerPlacer>"),
        );
        assert!(s.unwrap().placer.is_none());
        let r = rendered(
            parse_setup("s.xml", &tool("<MarkerPlacer>\n<coordinate_file>c.mot</coordinate_file>\n<time_range>2 1</time_range></MarkerPlacer>"))
                .unwrap_err(),
        );
        assert_eq!(r.len(), 2, "{r:?}");
        assert!(r[0].starts_with("s.xml:3:1: ") && r[0].contains("coordinate file"), "{r:?}");
        assert!(r[1].starts_with("s.xml:4:1: ") && r[1].contains("starts after it ends"), "{r:?}");
    }

    #[test]
    fn an_opensim_setup_keeps_opensims_defaults() {
        let tool = |inner: &str| format!("<OpenSimDocument><ScaleTool>{inner}</ScaleTool></OpenSimDocument>");
        // mass −1 (OpenSim's default) keeps the model's; no ModelScaler: nothing to scale
        let s = parse_setup("s.xml", &tool("<mass> -1 </mass>")).unwrap();
        assert_eq!((s.mass, s.order.len(), s.preserve_mass_distribution), (None, 0, true));
        // a ModelScaler applies unless told otherwise; its steps are the measurements by default;
        // "Unassigned" names no file; a time range of one instant is one
        let s = parse_setup(
            "s.xml",
            &tool("<ModelScaler><marker_file>Unassigned</marker_file><time_range>1 1</time_range></ModelScaler>"),
        )
        .unwrap();
        assert_eq!((s.order, s.marker_file, s.time_range), (vec![Step::Measurements], None, Some([1.0, 1.0])));
        // a ModelScaler that does not apply is not read (its bad order included)
        let s = parse_setup(
            "s.xml",
            &tool("<ModelScaler><apply>false</apply><scaling_order>bogus</scaling_order><marker_file>a.trc</marker_file></ModelScaler>"),
        )
        .unwrap();
        assert_eq!((s.order.len(), s.marker_file), (0, None));
        let r = rendered(parse_setup("s.xml", "<OpenSimDocument/>").unwrap_err());
        assert!(r.len() == 1 && r[0].contains("no <ScaleTool>"), "{r:?}");
        let r = rendered(parse_setup("s.xml", "<OpenSimDocument>\n<ScaleTool></Tool>").unwrap_err());
        assert!(r.len() == 1 && r[0].starts_with("s.xml:2:") && r[0].contains("not a valid XML file"), "{r:?}");
    }

    #[test]
    fn an_opensim_setup_reports_every_problem_where_it_is() {
        let xml = r#"<OpenSimDocument><ScaleTool>
<mass>0</mass>
<ModelScaler>
<time_range>2 1</time_range>
<scaling_order>measurements bogus</scaling_order>
<MeasurementSet file="other.xml"><objects>
<Measurement name="m"><MarkerPairSet><objects>
<MarkerPair><markers>A B C</markers></MarkerPair></objects></MarkerPairSet><BodyScaleSet><objects>
<BodyScale name="b"><axes>X W</axes></BodyScale></objects></BodyScaleSet></Measurement>
</objects></MeasurementSet>
<ScaleSet><objects>
<Scale><scales>1 0 1</scales><segment>arm</segment></Scale>
<Scale><scales>1 1</scales><segment>leg</segment></Scale>
</objects></ScaleSet>
</ModelScaler></ScaleTool></OpenSimDocument>"#;
        let r = rendered(parse_setup("s.xml", xml).unwrap_err());
        let mset = "ScaleTool/ModelScaler/MeasurementSet";
        let expected = [
            ("s.xml:2:1: error: ScaleTool/mass: ", "the subject's mass is a number > 0"),
            ("s.xml:4:1: error: ScaleTool/ModelScaler/time_range: ", "starts after it ends"),
            ("s.xml:5:1: error: ScaleTool/ModelScaler/scaling_order: ", "unknown scaling step `bogus`"),
            ("s.xml:6:1: error: ScaleTool/ModelScaler/MeasurementSet: ", "in another file is not read"),
            (&format!("s.xml:8:1: error: {mset}/Measurement[m]/MarkerPair: "), "names two markers"),
            (&format!("s.xml:9:1: error: {mset}/Measurement[m]/BodyScale[b]/axes: "), "unknown axis `W`"),
            (&format!("s.xml:7:1: error: {mset}/Measurement[m]: "), "without marker pairs"),
            ("s.xml:12:1: error: ScaleTool/ModelScaler/ScaleSet/Scale[arm]: ", "three factors > 0"),
            ("s.xml:13:8: error: ScaleTool/ModelScaler/ScaleSet/Scale[leg]/scales: ", "3 finite number(s)"),
        ];
        assert_eq!(r.len(), expected.len(), "{r:#?}");
        for (got, (start, part)) in r.iter().zip(expected) {
            assert!(got.starts_with(start) && got.contains(part), "{got:?} is not {start}…{part}");
        }
    }

    #[test]
    fn a_marker_set_gives_each_markers_body_and_location() {
        let xml = "\u{feff}<OpenSimDocument><MarkerSet><objects>
<Marker name=\"RASI\"><socket_parent_frame>/bodyset/pelvis</socket_parent_frame><location>0.01 -0.02 0.13</location></Marker>
<Marker name=\"C7\"><body> torso </body></Marker>
<Comment>not a marker</Comment>
</objects></MarkerSet></OpenSimDocument>";
        let m = parse_marker_set("m.xml", xml).unwrap();
        let got: Vec<(&str, &str, [f64; 3])> =
            m.iter().map(|m| (m.name.as_str(), m.body.as_str(), m.location)).collect();
        assert_eq!(got, [("RASI", "pelvis", [0.01, -0.02, 0.13]), ("C7", "torso", [0.0; 3])]);
        assert!(m[1].at.render().starts_with("m.xml:3:1: error: MarkerSet/Marker[C7]"), "{}", m[1].at.render());
        let bad = "<MarkerSet><objects>
<Marker name=\"A\"><location>0 0 0</location></Marker>
<Marker name=\"B\"><body>b</body><location>0 0</location></Marker>
<Marker name=\"C\"><body>b</body><location>0 inf 0</location></Marker>
</objects></MarkerSet>";
        let r = rendered(parse_marker_set("m.xml", bad).unwrap_err());
        assert_eq!(r.len(), 3, "{r:?}");
        assert!(
            r[0].starts_with("m.xml:2:1: error: MarkerSet/Marker[A]: ") && r[0].contains("needs a name and a body"),
            "{r:?}"
        );
        assert!(r[1].starts_with("m.xml:3:32: error: MarkerSet/Marker[B]/location: "), "{r:?}");
        assert!(r[2].starts_with("m.xml:4:32: error: MarkerSet/Marker[C]/location: "), "{r:?}");
        assert!(rendered(parse_marker_set("m.xml", "<Model/>").unwrap_err())[0].contains("no <MarkerSet>"));
    }

    #[test]
    fn a_byte_order_mark_moves_nothing() {
        let s = parse_setup("f.toml", "\u{feff}mass = 70\n").unwrap();
        assert_eq!(s.mass, Some(70.0));
        for file in ["s.xml", "m.xml"] {
            let text = "\u{feff}<MarkerSet><ScaleTool><mass>0</mass></ScaleTool><objects><Marker name=\"A\"/></objects></MarkerSet>";
            let r = if file == "s.xml" {
                rendered(parse_setup(file, text).unwrap_err())
            } else {
                rendered(parse_marker_set(file, text).unwrap_err())
            };
            let at = if file == "s.xml" {
                "s.xml:1:23: error: ScaleTool/mass"
            } else {
                "m.xml:1:58: error: MarkerSet/Marker[A]"
            };
            assert!(r.len() == 1 && r[0].starts_with(at), "{r:?}");
        }
    }

    #[test]
    fn a_setups_files_are_found_beside_it() {
        let dir = std::env::temp_dir().join(format!("mollier-setup-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let setup = dir.join("setup.xml");
        let abs = if cfg!(windows) { "C:\\data\\static.trc" } else { "/data/static.trc" };
        let text = format!(
            "<OpenSimDocument><ScaleTool><GenericModelMaker><marker_set_file>sub/m.xml</marker_set_file></GenericModelMaker><ModelScaler><marker_file>{abs}</marker_file></ModelScaler></ScaleTool></OpenSimDocument>"
        );
        std::fs::write(&setup, text).unwrap();
        let s = read_setup(&setup);
        std::fs::remove_dir_all(&dir).unwrap();
        let s = s.unwrap();
        assert_eq!(s.marker_set_file, Some(dir.join("sub/m.xml")));
        assert_eq!(s.marker_file.as_deref(), Some(Path::new(abs)));
    }
}
