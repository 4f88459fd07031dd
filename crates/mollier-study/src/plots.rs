//! SVG plots of a study (plotters, SVG backend; text is left to the viewer's fonts).
//!
//! - `forces_<variant>.svg`: the force of every muscle element against elevation, one panel per
//!   muscle, one vertical scale for all (van der Helm 1994, Fig. 7);
//! - `criteria_<glenoid|free>.svg`: each muscle's force as a percentage of its maximal force
//!   (PCSA × specific tension) for every criterion (van der Helm 1994, Fig. 8);
//! - `glenoid.svg`: the direction of the glenohumeral force inside the glenoid ellipse, per
//!   criterion, with and without the constraint (Chadwick et al. 2014, Fig. 3 inset);
//! - `landmarks.svg`: the landmarks' paths projected on the frontal and sagittal planes, the
//!   model's and the rhythm's (van der Helm 1994, Fig. 5);
//! - `girdle.svg`: the free joint rotations against elevation;
//! - `moment_arms.svg`: every element's moment arm about the elevation input.

use std::io;
use std::path::Path;

use mollier::output::{OutputDir, OutputError};

use plotters::prelude::*;

use crate::chart::{Area, Line, PALETTE, ellipse, err, grid, key, padded, panel_keyed, panel_lines, plot_file, tick};
use crate::muscles::MuscleGroup;
use crate::study::{Results, Study, VariantResult};
use mollier::inverse_tables::glenoid_angles;
use mollier_optim::FrameResult;

/// The motion's frames kept in `results`, in order.
fn kept<'a>(study: &'a Study, results: &'a Results) -> impl Iterator<Item = &'a crate::motion::MotionFrame> + 'a {
    results.frames.iter().map(|&k| &study.motion.frames[k])
}

/// The elevations of the frames kept in `results`.
fn elevations(study: &Study, results: &Results) -> Vec<f64> {
    kept(study, results).map(|f| f.elevation).collect()
}

/// One small panel of lines against elevation.
fn panel(
    area: &Area,
    title: &str,
    x: (f64, f64),
    y: (f64, f64),
    y_desc: &str,
    lines: &[(Vec<(f64, f64)>, RGBColor)],
) -> io::Result<()> {
    panel_keyed(area, title, (x, "elevation (deg)"), y, y_desc, lines, &[])
}

/// Force of every element against elevation, one panel per muscle (van der Helm 1994, Fig. 7).
fn forces(study: &Study, results: &Results, v: &VariantResult, path: &Path) -> io::Result<()> {
    let title = format!(
        "{}: muscle element forces, criterion {} ({})",
        study.title(),
        v.variant.criterion,
        if v.variant.glenoid {
            format!("glenoid constraint, margin k = {}", v.variant.margin)
        } else {
            "no glenoid constraint".to_string()
        }
    );
    let value = |k: usize, i: usize| {
        let r = &v.frames[k];
        if r.status.is_success() { r.forces[i] } else { f64::NAN }
    };
    let ymax = element_values(study, results, &value).fold(1.0, f64::max);
    // the element count in the title, as the seed asks the reader to keep it in mind
    per_muscle_panels(study, results, path, &title, &value, (0.0, ymax * 1.05), "N", |g| {
        format!("{} ({})", g.name, g.elements.len())
    })
}

/// Every finite `value(kept frame, element)` of a study.
fn element_values<'a>(
    study: &'a Study,
    results: &Results,
    value: &'a dyn Fn(usize, usize) -> f64,
) -> impl Iterator<Item = f64> + 'a {
    (0..results.frames.len())
        .flat_map(move |k| (0..study.muscles().len()).map(move |i| value(k, i)))
        .filter(|v| v.is_finite())
}

/// One panel per muscle, one line per element of `value(frame, element)` against elevation.
#[allow(clippy::too_many_arguments)]
fn per_muscle_panels(
    study: &Study,
    results: &Results,
    path: &Path,
    title: &str,
    value: &dyn Fn(usize, usize) -> f64,
    y: (f64, f64),
    y_desc: &str,
    panel_title: impl Fn(&MuscleGroup) -> String,
) -> io::Result<()> {
    let el = elevations(study, results);
    let groups = &study.groups;
    let (rows, cols) = grid(groups.len());
    let root = SVGBackend::new(path, (300 * cols as u32, 220 * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(40);
    top.titled(title, ("sans-serif", 16)).map_err(err)?;
    let x = padded(el[0].min(el[el.len() - 1]), el[0].max(el[el.len() - 1]));
    for (g, area) in groups.iter().zip(body.split_evenly((rows, cols))) {
        let lines: Vec<_> = g
            .elements
            .iter()
            .enumerate()
            .map(|(j, &i)| ((0..el.len()).map(|k| (el[k], value(k, i))).collect(), PALETTE[j % PALETTE.len()]))
            .collect();
        // the key: each element's name, without the muscle's common prefix
        let names: Vec<&str> = g.elements.iter().map(|&i| study.muscles()[i].name.as_str()).collect();
        let labels: Vec<String> = names.iter().map(|n| element_label(n, &names)).collect();
        panel_keyed(&area, &panel_title(g), (x, "elevation (deg)"), y, y_desc, &lines, &labels)?;
    }
    root.present().map_err(err)
}

/// An element's name for a key: without the prefix it shares with the others of its muscle
/// (`deltoideus_scapular_3` → `3`); the whole name for a muscle of one element.
fn element_label(name: &str, all: &[&str]) -> String {
    if all.len() < 2 {
        return name.to_string();
    }
    let common = all
        .iter()
        .fold(name.len(), |n, other| name.bytes().zip(other.bytes()).take(n).take_while(|(a, b)| a == b).count());
    let mut common = common;
    while !name.is_char_boundary(common) {
        common -= 1;
    }
    let rest = name[common..].trim_start_matches(['_', '.', '-']);
    if rest.is_empty() { name.to_string() } else { format!("#{rest}") }
}

/// Each muscle's force as % of its maximal force for every criterion (van der Helm 1994, Fig. 8).
fn criteria(study: &Study, results: &Results, variants: &[&VariantResult], path: &Path, what: &str) -> io::Result<()> {
    let el = elevations(study, results);
    let groups = &study.groups;
    let (rows, cols) = grid(groups.len());
    let root = SVGBackend::new(path, (300 * cols as u32, 220 * rows as u32 + 70)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(70);
    top.titled(&format!("{}: muscle force as % of maximal force ({what})", study.title()), ("sans-serif", 16))
        .map_err(err)?;
    // legend
    for (j, v) in variants.iter().enumerate() {
        let c = PALETTE[j % PALETTE.len()];
        let x = 20 + 330 * j as i32;
        top.draw(&PathElement::new(vec![(x, 52), (x + 30, 52)], c.stroke_width(2))).map_err(err)?;
        top.draw(&Text::new(format!("{}", v.variant.criterion), (x + 36, 46), ("sans-serif", 12))).map_err(err)?;
    }
    let sigma = study.sharing.specific_tension;
    let percent = |v: &VariantResult, k: usize, elements: &[usize]| {
        let r = &v.frames[k];
        if !r.status.is_success() {
            return f64::NAN;
        }
        let f: f64 = elements.iter().map(|&i| r.forces[i]).sum();
        let fmax: f64 = elements.iter().map(|&i| study.muscles()[i].pcsa * sigma).sum();
        100.0 * f / fmax
    };
    let x = padded(el[0].min(el[el.len() - 1]), el[0].max(el[el.len() - 1]));
    for (g, area) in groups.iter().zip(body.split_evenly((rows, cols))) {
        let lines: Vec<_> = variants
            .iter()
            .enumerate()
            .map(|(j, v)| {
                (
                    (0..el.len()).map(|k| (el[k], percent(v, k, &g.elements))).collect::<Vec<_>>(),
                    PALETTE[j % PALETTE.len()],
                )
            })
            .collect();
        let ymax = lines.iter().flat_map(|(p, _)| p.iter().map(|q| q.1)).filter(|v| v.is_finite()).fold(1.0, f64::max);
        panel(&area, &g.name, x, (0.0, ymax * 1.05), "% of max", &lines)?;
    }
    root.present().map_err(err)
}

/// lateral, Y cranial, Z dorsal).
fn anatomical(v: &[f64; 3]) -> &'static str {
    let k = (0..3).max_by(|&a, &b| v[a].abs().total_cmp(&v[b].abs())).unwrap_or(0);
    match (k, v[k] >= 0.0) {
        (0, true) => "lateral",
        (0, false) => "medial",
        (1, true) => "superior",
        (1, false) => "inferior",
        (2, true) => "posterior",
        _ => "anterior",
    }
}

/// The colour of a variant in the glenoid and cuff plots: blue without the constraint, red at
/// margin 1, then orange, green, purple, ... for the smaller margins in the study's order.
fn margin_color(study: &Study, glenoid: bool, margin: f64) -> RGBColor {
    if !glenoid {
        return PALETTE[0];
    }
    let margins = study_margins(study);
    let k = margins.iter().position(|m| *m == margin).unwrap_or(0);
    [RGBColor(214, 39, 40), PALETTE[1], PALETTE[2], PALETTE[4], PALETTE[5], PALETTE[6]][k % 6]
}

/// The margins of the study's variants with the constraint, largest first.
fn study_margins(study: &Study) -> Vec<f64> {
    let mut m: Vec<f64> = Vec::new();
    for v in study.variants.iter().filter(|v| v.glenoid) {
        if !m.contains(&v.margin) {
            m.push(v.margin);
        }
    }
    m.sort_by(|a, b| b.total_cmp(a));
    m
}

/// How a variant is named in a key.
fn variant_label(glenoid: bool, margin: f64) -> String {
    if glenoid { format!("constraint, margin k = {margin}") } else { "no constraint".to_string() }
}

/// The glenohumeral force's direction inside the glenoid ellipse (Chadwick et al. 2014, Fig. 3 inset): the
/// deviation angles from the glenoid's axis, towards the anatomical directions of the glenoid's
/// axes at rest; the rim (index 0) and the margins' ellipses.
fn glenoid(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let Some(g) = &study.sharing.cone else { return Ok(()) };
    let (ta, pa) = (g.half_angles[0].to_degrees(), g.half_angles[1].to_degrees());
    // the cone's y and z axes in the thorax frame at the initial configuration
    let data = mollier_core::Data::new(&study.compiled.model);
    let body = crate::motion::orientation(&study.compiled, &data, g.body);
    let axis =
        |c: usize| mollier_core::geometry::mat_vec(&body, &[g.rotation[0][c], g.rotation[1][c], g.rotation[2][c]]);
    let (towards_y, towards_z) = (anatomical(&axis(1)), anatomical(&axis(2)));
    let criteria: Vec<String> = {
        let mut c: Vec<String> = Vec::new();
        for v in &results.variants {
            let l = v.variant.criterion.letter().to_string();
            if !c.contains(&l) {
                c.push(l);
            }
        }
        c
    };
    let (rows, cols) = grid(criteria.len());
    let root = SVGBackend::new(path, (460 * cols as u32, 440 * rows as u32 + 90)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body_area) = root.split_vertically(90);
    top.titled(&format!("{}: direction of the glenohumeral force in the glenoid", study.title()), ("sans-serif", 16))
        .map_err(err)?;
    // the key: without the constraint a wide pale line under the others; with it, dashed lines
    // with triangles, one colour per margin; the rim black, each margin's ellipse dashed
    let mut keys = vec![(false, 1.0)];
    keys.extend(study_margins(study).into_iter().map(|m| (true, m)));
    for (j, (glen, m)) in keys.iter().enumerate() {
        let c = margin_color(study, *glen, *m);
        let (x, y) = (20 + 280 * (j as i32 % 4), 50 + 20 * (j as i32 / 4));
        let style = if *glen { c.stroke_width(2) } else { c.mix(0.45).stroke_width(6) };
        top.draw(&PathElement::new(vec![(x, y), (x + 30, y)], style)).map_err(err)?;
        top.draw(&Text::new(variant_label(*glen, *m), (x + 36, y - 6), ("sans-serif", 12))).map_err(err)?;
    }
    top.draw(&Text::new("o first frame, x last frame; black: the rim".to_string(), (20, 76), ("sans-serif", 12)))
        .map_err(err)?;
    let lim = 1.15 * ta.max(pa);
    for (letter, area) in criteria.iter().zip(body_area.split_evenly((rows, cols))) {
        let mut chart = ChartBuilder::on(&area)
            .caption(format!("criterion {letter}"), ("sans-serif", 13))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(-lim..lim, -lim..lim)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .x_desc(format!("theta (deg): + {towards_y}"))
            .y_desc(format!("phi (deg): + {towards_z}"))
            .label_style(("sans-serif", 10))
            .draw()
            .map_err(err)?;
        chart.draw_series(LineSeries::new(ellipse(ta, pa), BLACK.stroke_width(2))).map_err(err)?;
        for m in study_margins(study).into_iter().filter(|m| *m < 1.0) {
            let c = margin_color(study, true, m);
            chart.draw_series(DashedLineSeries::new(ellipse(m * ta, m * pa), 5, 4, c.stroke_width(1))).map_err(err)?;
        }
        // without the constraint first, so that the constrained lines lie on top of it
        let mut vs: Vec<&VariantResult> =
            results.variants.iter().filter(|v| v.variant.criterion.letter() == letter).collect();
        vs.sort_by_key(|v| v.variant.glenoid);
        for v in vs {
            let color = margin_color(study, v.variant.glenoid, v.variant.margin);
            let pts: Vec<(f64, f64)> =
                v.frames.iter().filter(|r| r.status.is_success()).filter_map(glenoid_angles).collect();
            if pts.is_empty() {
                continue;
            }
            if v.variant.glenoid {
                chart.draw_series(DashedLineSeries::new(pts.clone(), 6, 3, color.stroke_width(2))).map_err(err)?;
                chart.draw_series(pts.iter().map(|p| TriangleMarker::new(*p, 3, color.filled()))).map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new(pts.clone(), color.mix(0.45).stroke_width(6))).map_err(err)?;
            }
            chart.draw_series(std::iter::once(Circle::new(pts[0], 6, color.stroke_width(2)))).map_err(err)?;
            chart
                .draw_series(std::iter::once(Cross::new(pts[pts.len() - 1], 6, color.stroke_width(2))))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}

/// The landmarks' paths in the frontal (X-Y) and sagittal (Z-Y) planes (van der Helm 1994, Fig. 5).
fn landmarks(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let kin = &results.kinematics;
    let solved: Vec<(usize, &crate::study::KinematicFrame)> =
        kin.frames.iter().enumerate().filter_map(|(k, f)| f.as_ref().ok().map(|f| (k, f))).collect();
    if solved.is_empty() || study.landmarks.is_empty() {
        return Ok(());
    }
    let root = SVGBackend::new(path, (1200, 640)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(60);
    top.titled(
        &format!(
            "{}: landmarks, first frame (solid) and last (dashed), model (filled) and rhythm without thorax (open)",
            study.title()
        ),
        ("sans-serif", 15),
    )
    .map_err(err)?;
    let mm = |v: f64| 1000.0 * v;
    // the rhythm's AC and TS (the thorax constraints omitted), for comparison
    let rhythm: Vec<[[f64; 3]; 2]> = kept(study, results)
        .map(|f| {
            let l = study.motion.landmarks.positions(&f.posture);
            [l.ac, l.ts]
        })
        .collect();
    for (axes, area, title) in [
        ((0usize, 1usize), 0, "frontal plane (X lateral, Y cranial)"),
        ((2, 1), 1, "sagittal plane (Z dorsal, Y cranial)"),
    ] {
        let areas = body.split_evenly((1, 2));
        let area = &areas[area];
        let all: Vec<[f64; 3]> =
            solved.iter().flat_map(|(_, f)| f.landmarks.iter().copied()).chain([[0.0; 3]]).collect();
        let (x0, x1) = padded(
            all.iter().map(|p| mm(p[axes.0])).fold(f64::INFINITY, f64::min),
            all.iter().map(|p| mm(p[axes.0])).fold(f64::NEG_INFINITY, f64::max),
        );
        let (y0, y1) = padded(
            all.iter().map(|p| mm(p[axes.1])).fold(f64::INFINITY, f64::min),
            all.iter().map(|p| mm(p[axes.1])).fold(f64::NEG_INFINITY, f64::max),
        );
        // equal scales
        let span = (x1 - x0).max(y1 - y0);
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        let mut chart = ChartBuilder::on(area)
            .caption(title, ("sans-serif", 13))
            .margin(10)
            .x_label_area_size(30)
            .y_label_area_size(45)
            .build_cartesian_2d((cx - span / 2.0)..(cx + span / 2.0), (cy - span / 2.0)..(cy + span / 2.0))
            .map_err(err)?;
        chart.configure_mesh().x_desc("mm").y_desc("mm").label_style(("sans-serif", 10)).draw().map_err(err)?;
        let p2 = |p: &[f64; 3]| (mm(p[axes.0]), mm(p[axes.1]));
        for (j, (name, _)) in study.landmarks.iter().enumerate() {
            let c = PALETTE[j % PALETTE.len()];
            let pts: Vec<(f64, f64)> = solved.iter().map(|(_, f)| p2(&f.landmarks[j])).collect();
            chart
                .draw_series(pts.iter().map(|p| Circle::new(*p, 2, c.filled())))
                .map_err(err)?
                .label(name.clone())
                .legend(move |(x, y)| Circle::new((x + 8, y), 3, c.filled()));
        }
        // the bones at the first and last solved frame: IJ-SC-AC, AC-TS-AI-(GH)-AC
        let bones = |f: &crate::study::KinematicFrame| -> Vec<(f64, f64)> {
            let mut v = vec![(0.0, 0.0)];
            v.extend(f.landmarks.iter().map(p2));
            if let Some(ac) = study.landmarks.iter().position(|(n, _)| n == &study.spec.motion.model.ac) {
                v.push(p2(&f.landmarks[ac]));
            }
            v
        };
        let first = solved[0].1;
        let last = solved[solved.len() - 1].1;
        chart.draw_series(LineSeries::new(bones(first), BLACK.stroke_width(2))).map_err(err)?;
        chart.draw_series(DashedLineSeries::new(bones(last), 6, 4, BLACK.stroke_width(2))).map_err(err)?;
        for (j, c) in [(0usize, RGBColor(0, 0, 0)), (1, RGBColor(100, 100, 100))] {
            let pts: Vec<(f64, f64)> = solved.iter().map(|(k, _)| p2(&rhythm[*k][j])).collect();
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 3, c.stroke_width(1)))).map_err(err)?;
        }
        key(&mut chart)?;
    }
    root.present().map_err(err)
}

/// The girdle's angles relative to the thorax, DAS3's YZX (`kinematics.csv` columns and the
/// key of `girdle.svg`): the name and what it measures.
pub const GIRDLE_ANGLES: [(&str, &str); 6] = [
    ("clavicle_y", "y: protraction (-) / retraction (+)"),
    ("clavicle_z", "z': elevation"),
    ("clavicle_x", "x'': axial rotation"),
    ("scapula_y", "y: protraction (-) / retraction (+)"),
    ("scapula_z", "z': lateral rotation"),
    ("scapula_x", "x'': tilt"),
];

/// The clavicle's and the scapula's angles relative to the thorax against elevation (DAS3's
/// YZX), the model's (solid) and the rhythm's before the thorax places the scapula (dashed); and
/// the angle between the two scapulae.
fn girdle(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let kin = &results.kinematics;
    let el = elevations(study, results);
    let root = SVGBackend::new(path, (1380, 420)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(40);
    top.titled(
        &format!("{}: clavicle and scapula relative to the thorax (model solid, rhythm dashed)", study.title()),
        ("sans-serif", 15),
    )
    .map_err(err)?;
    let areas = body.split_evenly((1, 3));
    let x = padded(el[0].min(el[el.len() - 1]), el[0].max(el[el.len() - 1]));
    let rhythm: Vec<[f64; 6]> =
        kept(study, results).map(|f| crate::motion::girdle_angles(&f.posture.clavicle, &f.posture.scapula)).collect();
    for (bone, area) in ["clavicle", "scapula"].iter().zip(&areas) {
        let first = if *bone == "clavicle" { 0 } else { 3 };
        let model: Vec<Vec<(f64, f64)>> = (first..first + 3)
            .map(|i| {
                (0..el.len())
                    .map(|k| {
                        (el[k], kin.frames[k].as_ref().map(|f| f.girdle_angles[i].to_degrees()).unwrap_or(f64::NAN))
                    })
                    .collect()
            })
            .collect();
        let dashed: Vec<Vec<(f64, f64)>> =
            (first..first + 3).map(|i| (0..el.len()).map(|k| (el[k], rhythm[k][i].to_degrees())).collect()).collect();
        let all = model.iter().chain(&dashed).flat_map(|p| p.iter().map(|q| q.1)).filter(|v| v.is_finite());
        let y = padded(all.clone().fold(f64::INFINITY, f64::min), all.fold(f64::NEG_INFINITY, f64::max));
        let mut lines = Vec::new();
        for (j, (m, r)) in model.iter().zip(&dashed).enumerate() {
            let color = PALETTE[j];
            lines.push(Line { pts: m, color, width: 2, dashed: false, label: None });
            lines.push(Line {
                pts: r,
                color,
                width: 1,
                dashed: true,
                label: Some(GIRDLE_ANGLES[first + j].1.to_string()),
            });
        }
        let title = format!("{bone} (YZX angles, deg)");
        panel_lines(area, &title, (x, "humerus elevation (deg)"), y, "deg", &lines)?;
    }
    let dev: Vec<(f64, f64)> = (0..el.len())
        .map(|k| (el[k], kin.frames[k].as_ref().map(|f| f.scapula_deviation.to_degrees()).unwrap_or(f64::NAN)))
        .collect();
    let top = dev.iter().map(|p| p.1).filter(|v| v.is_finite()).fold(1.0, f64::max);
    panel(&areas[2], "scapula: angle between model and rhythm (deg)", x, (0.0, top * 1.1), "deg", &[(dev, BLACK)])?;
    root.present().map_err(err)
}

/// Every element's moment arm about the elevation input, one panel per muscle.
fn moment_arms(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let kin = &results.kinematics;
    let nq = study.compiled.model.n_q();
    let Some(j) = study.compiled.inputs.iter().position(|i| i.name == study.spec.motion.model.inputs[4]) else {
        return Ok(());
    };
    let title = format!("{}: moment arms about the elevation input, -dl/d(elevation) (mm)", study.title());
    let value =
        |k: usize, i: usize| kin.frames[k].as_ref().map(|f| 1000.0 * f.moment_arms[i * nq + j]).unwrap_or(f64::NAN);
    let y = padded(
        element_values(study, results, &value).fold(f64::INFINITY, f64::min),
        element_values(study, results, &value).fold(f64::NEG_INFINITY, f64::max),
    );
    per_muscle_panels(study, results, path, &title, &value, y, "mm", |g| g.name.clone())
}

/// The summed force (N) of the study's cuff muscles in a variant's frame `r`; `None` where the
/// frame failed.
pub fn cuff_force(study: &Study, r: &FrameResult) -> Option<f64> {
    r.status.is_success().then(|| study.cuff.iter().map(|&i| r.forces[i]).sum())
}

/// The rotator cuff's force against elevation, one panel per criterion, one line per margin
/// and one without the constraint.
fn cuff(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let el = elevations(study, results);
    let mut letters: Vec<&str> = Vec::new();
    for v in &results.variants {
        if !letters.contains(&v.variant.criterion.letter()) {
            letters.push(v.variant.criterion.letter());
        }
    }
    let (rows, cols) = grid(letters.len());
    let root = SVGBackend::new(path, (420 * cols as u32, 320 * rows as u32 + 40)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(40);
    let names: Vec<&str> = study.spec.cuff.iter().map(|s| s.trim_start_matches("m. ")).collect();
    top.titled(
        &format!("{}: rotator cuff force ({}) against the stability margin", study.title(), names.join(", ")),
        ("sans-serif", 15),
    )
    .map_err(err)?;
    let x = padded(el[0].min(el[el.len() - 1]), el[0].max(el[el.len() - 1]));
    let ymax =
        results.variants.iter().flat_map(|v| v.frames.iter().filter_map(|r| cuff_force(study, r))).fold(1.0, f64::max);
    for (letter, area) in letters.iter().zip(body.split_evenly((rows, cols))) {
        let vs: Vec<&VariantResult> =
            results.variants.iter().filter(|v| v.variant.criterion.letter() == *letter).collect();
        let lines: Vec<_> = vs
            .iter()
            .map(|v| {
                let pts =
                    el.iter().zip(&v.frames).map(|(e, r)| (*e, cuff_force(study, r).unwrap_or(f64::NAN))).collect();
                (pts, margin_color(study, v.variant.glenoid, v.variant.margin))
            })
            .collect();
        let labels: Vec<String> = vs.iter().map(|v| variant_label(v.variant.glenoid, v.variant.margin)).collect();
        panel_keyed(
            &area,
            &format!("criterion {letter}"),
            (x, "elevation (deg)"),
            (0.0, ymax * 1.05),
            "N",
            &lines,
            &labels,
        )?;
    }
    root.present().map_err(err)
}

/// Write the plots into `out`'s `plots/` directory.
pub fn write(study: &Study, results: &Results, out: &mut OutputDir) -> Result<(), OutputError> {
    let mut plot = |name: String, f: &dyn Fn(&Path) -> io::Result<()>| plot_file(out, &name, f);
    for v in &results.variants {
        plot(format!("forces_{}.svg", v.variant.name()), &|p| forces(study, results, v, p))?;
    }
    for (glen, what) in [(true, "with the glenoid constraint"), (false, "without the glenoid constraint")] {
        // with the constraint: at the largest margin only (the margins are in cuff.svg)
        let widest = study_margins(study).first().copied().unwrap_or(1.0);
        let vs: Vec<&VariantResult> = results
            .variants
            .iter()
            .filter(|v| v.variant.glenoid == glen && (!glen || v.variant.margin == widest))
            .collect();
        if !vs.is_empty() {
            let name = if glen { "criteria_glenoid.svg" } else { "criteria_free.svg" };
            plot(name.to_string(), &|p| criteria(study, results, &vs, p, what))?;
        }
    }
    if study.sharing.cone.is_some() {
        plot("glenoid.svg".into(), &|p| glenoid(study, results, p))?;
    }
    if !study.cuff.is_empty() {
        plot("cuff.svg".into(), &|p| cuff(study, results, p))?;
    }
    plot("landmarks.svg".into(), &|p| landmarks(study, results, p))?;
    plot("girdle.svg".into(), &|p| girdle(study, results, p))?;
    plot("moment_arms.svg".into(), &|p| moment_arms(study, results, p))?;
    Ok(())
}
