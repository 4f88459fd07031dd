//! SVG plots of a study (plotters, SVG backend; text is left to the viewer's fonts).
//!
//! - `forces_<variant>.svg`: the force of every muscle element against elevation, one panel per
//!   muscle, one vertical scale for all (seed 001, Fig. 7);
//! - `criteria_<glenoid|free>.svg`: each muscle's force as a percentage of its maximal force
//!   (PCSA × specific tension) for every criterion (seed 001, Fig. 8);
//! - `glenoid.svg`: the direction of the glenohumeral force inside the glenoid ellipse, per
//!   criterion, with and without the constraint (seed 002, Fig. 3 inset);
//! - `landmarks.svg`: the landmarks' paths projected on the frontal and sagittal planes, the
//!   model's and the rhythm's (seed 001, Fig. 5);
//! - `girdle.svg`: the free joint rotations against elevation;
//! - `moment_arms.svg`: every element's moment arm about the elevation input.

use std::io;
use std::path::Path;

use mollier::output::{OutputDir, OutputError};

use plotters::coord::Shift;
use plotters::prelude::*;

use crate::muscles::MuscleGroup;
use crate::output::glenoid_angles;
use crate::study::{Results, Study, VariantResult};

pub(crate) type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

pub(crate) fn err(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// A range that contains `lo..hi` with a little room, and is never empty.
pub(crate) fn padded(lo: f64, hi: f64) -> (f64, f64) {
    let (lo, hi) = if lo.is_finite() && hi.is_finite() && lo <= hi { (lo, hi) } else { (0.0, 1.0) };
    let pad = if hi > lo { 0.05 * (hi - lo) } else { 1.0 };
    (lo - pad, hi + pad)
}

pub(crate) fn grid(n: usize) -> (usize, usize) {
    let cols = ((n as f64).sqrt().ceil() as usize).max(1);
    (n.div_ceil(cols), cols)
}

/// The elevations of the frames, and which frames the kinematics solved.
fn elevations(study: &Study) -> Vec<f64> {
    study.motion.frames.iter().map(|f| f.elevation).collect()
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
    panel_over(area, title, (x, "elevation (deg)"), y, y_desc, lines)
}

/// One small panel of lines against `x.1` over the range `x.0`.
pub(crate) fn panel_over(
    area: &Area,
    title: &str,
    x: ((f64, f64), &str),
    y: (f64, f64),
    y_desc: &str,
    lines: &[(Vec<(f64, f64)>, RGBColor)],
) -> io::Result<()> {
    let ((x0, x1), x_desc) = x;
    let mut chart = ChartBuilder::on(area)
        .caption(title, ("sans-serif", 13))
        .margin(6)
        .x_label_area_size(26)
        .y_label_area_size(40)
        .build_cartesian_2d(x0..x1, y.0..y.1)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(5)
        .y_labels(5)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 10))
        .draw()
        .map_err(err)?;
    for (pts, color) in lines {
        // a gap (a failed frame) splits a line
        for run in pts.split(|p| !p.1.is_finite()).filter(|r| !r.is_empty()) {
            chart.draw_series(LineSeries::new(run.to_vec(), color.stroke_width(1))).map_err(err)?;
        }
    }
    Ok(())
}

/// Force of every element against elevation, one panel per muscle (seed 001, Fig. 7).
fn forces(study: &Study, v: &VariantResult, path: &Path) -> io::Result<()> {
    let title = format!(
        "{}: muscle element forces, criterion {} ({})",
        study.title(),
        v.variant.criterion,
        if v.variant.glenoid { "glenoid constraint" } else { "no glenoid constraint" }
    );
    let value = |k: usize, i: usize| {
        let r = &v.frames[k];
        if r.status.is_success() { r.forces[i] } else { f64::NAN }
    };
    let ymax = element_values(study, &value).fold(1.0, f64::max);
    // the element count in the title, as the seed asks the reader to keep it in mind
    per_muscle_panels(study, path, &title, &value, (0.0, ymax * 1.05), "N", |g| {
        format!("{} ({})", g.name, g.elements.len())
    })
}

/// Every finite `value(frame, element)` of a study.
fn element_values<'a>(study: &'a Study, value: &'a dyn Fn(usize, usize) -> f64) -> impl Iterator<Item = f64> + 'a {
    (0..study.motion.frames.len())
        .flat_map(move |k| (0..study.muscles().len()).map(move |i| value(k, i)))
        .filter(|v| v.is_finite())
}

/// One panel per muscle, one line per element of `value(frame, element)` against elevation.
fn per_muscle_panels(
    study: &Study,
    path: &Path,
    title: &str,
    value: &dyn Fn(usize, usize) -> f64,
    y: (f64, f64),
    y_desc: &str,
    panel_title: impl Fn(&MuscleGroup) -> String,
) -> io::Result<()> {
    let el = elevations(study);
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
        panel(&area, &panel_title(g), x, y, y_desc, &lines)?;
    }
    root.present().map_err(err)
}

/// Each muscle's force as % of its maximal force for every criterion (seed 001, Fig. 8).
fn criteria(study: &Study, variants: &[&VariantResult], path: &Path, what: &str) -> io::Result<()> {
    let el = elevations(study);
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

/// The ellipse `(θ/θa)² + (φ/φa)² = 1` (deg).
pub(crate) fn ellipse(a: f64, b: f64) -> Vec<(f64, f64)> {
    (0..=120)
        .map(|k| {
            let t = std::f64::consts::TAU * k as f64 / 120.0;
            (a * t.cos(), b * t.sin())
        })
        .collect()
}

/// The glenohumeral force's direction inside the glenoid ellipse (seed 002, Fig. 3 inset).
fn glenoid(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let Some(g) = &study.sharing.cone else { return Ok(()) };
    let (ta, pa) = (g.half_angles[0].to_degrees(), g.half_angles[1].to_degrees());
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
    let root = SVGBackend::new(path, (420 * cols as u32, 400 * rows as u32 + 70)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let (top, body) = root.split_vertically(70);
    top.titled(&format!("{}: direction of the glenohumeral force in the glenoid", study.title()), ("sans-serif", 16))
        .map_err(err)?;
    for (j, (label, c)) in
        [("with the glenoid constraint", RGBColor(214, 39, 40)), ("without", RGBColor(31, 119, 180))].iter().enumerate()
    {
        let x = 20 + 330 * j as i32;
        top.draw(&PathElement::new(vec![(x, 52), (x + 30, 52)], c.stroke_width(2))).map_err(err)?;
        top.draw(&Text::new(label.to_string(), (x + 36, 46), ("sans-serif", 12))).map_err(err)?;
    }
    top.draw(&Text::new("o first frame, x last frame".to_string(), (700, 46), ("sans-serif", 12))).map_err(err)?;
    let lim = 1.15 * ta.max(pa);
    for (letter, area) in criteria.iter().zip(body.split_evenly((rows, cols))) {
        let mut chart = ChartBuilder::on(&area)
            .caption(format!("criterion {letter}"), ("sans-serif", 13))
            .margin(8)
            .x_label_area_size(30)
            .y_label_area_size(40)
            .build_cartesian_2d(-lim..lim, -lim..lim)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("theta: towards glenoid -y (deg)")
            .y_desc("phi: towards glenoid z (deg)")
            .label_style(("sans-serif", 10))
            .draw()
            .map_err(err)?;
        chart.draw_series(LineSeries::new(ellipse(ta, pa), BLACK.stroke_width(2))).map_err(err)?;
        for v in results.variants.iter().filter(|v| v.variant.criterion.letter() == letter) {
            let color = if v.variant.glenoid { RGBColor(214, 39, 40) } else { RGBColor(31, 119, 180) };
            let pts: Vec<(f64, f64)> =
                v.frames.iter().filter(|r| r.status.is_success()).filter_map(glenoid_angles).collect();
            if pts.is_empty() {
                continue;
            }
            chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(1))).map_err(err)?;
            chart.draw_series(pts.iter().map(|p| Circle::new(*p, 2, color.filled()))).map_err(err)?;
            chart.draw_series(std::iter::once(Circle::new(pts[0], 6, color.stroke_width(2)))).map_err(err)?;
            chart
                .draw_series(std::iter::once(Cross::new(pts[pts.len() - 1], 6, color.stroke_width(2))))
                .map_err(err)?;
        }
    }
    root.present().map_err(err)
}

/// The landmarks' paths in the frontal (X-Y) and sagittal (Z-Y) planes (seed 001, Fig. 5).
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
    let rhythm: Vec<[[f64; 3]; 2]> = study
        .motion
        .frames
        .iter()
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

/// A chart of two `f64` axes on an SVG.
pub(crate) type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

/// The key of a chart's labelled series: framed, on a light background.
pub(crate) fn key<'a, 'b: 'a>(chart: &mut Chart<'a, 'b>) -> io::Result<()> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .label_font(("sans-serif", 11))
        .draw()
        .map_err(err)
}

/// The free joint rotations against elevation.
fn girdle(study: &Study, results: &Results, path: &Path) -> io::Result<()> {
    let kin = &results.kinematics;
    let el = elevations(study);
    let cols: Vec<usize> =
        kin.free_names.iter().enumerate().filter(|(_, n)| n.ends_with(".rotation")).map(|(i, _)| i).collect();
    if cols.is_empty() {
        return Ok(());
    }
    // group by the element name's stem before `_` (sc, ac, gh, ...)
    let mut stems: Vec<String> = Vec::new();
    for &i in &cols {
        let stem = kin.free_names[i].split('_').next().unwrap_or("").to_string();
        if !stems.contains(&stem) {
            stems.push(stem);
        }
    }
    let root = SVGBackend::new(path, (420 * stems.len() as u32 + 420, 380)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let areas = root.split_evenly((1, stems.len() + 1));
    let x = padded(el[0].min(el[el.len() - 1]), el[0].max(el[el.len() - 1]));
    let value = |k: usize, i: usize| kin.frames[k].as_ref().map(|f| f.free[i].to_degrees()).unwrap_or(f64::NAN);
    for (stem, area) in stems.iter().zip(&areas) {
        let members: Vec<usize> =
            cols.iter().copied().filter(|&i| kin.free_names[i].split('_').next() == Some(stem.as_str())).collect();
        let lines: Vec<_> = members
            .iter()
            .enumerate()
            .map(|(j, &i)| {
                ((0..el.len()).map(|k| (el[k], value(k, i))).collect::<Vec<_>>(), PALETTE[j % PALETTE.len()])
            })
            .collect();
        let all: Vec<f64> = lines.iter().flat_map(|(p, _)| p.iter().map(|q| q.1)).filter(|v| v.is_finite()).collect();
        let y = padded(
            all.iter().copied().fold(f64::INFINITY, f64::min),
            all.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        );
        let names: Vec<&str> = members.iter().map(|&i| kin.free_names[i].as_str()).collect();
        panel(area, &format!("{} (rotations from rest, deg): {}", stem, names.join(", ")), x, y, "deg", &lines)?;
    }
    let dev: Vec<(f64, f64)> = (0..el.len())
        .map(|k| (el[k], kin.frames[k].as_ref().map(|f| f.scapula_deviation.to_degrees()).unwrap_or(f64::NAN)))
        .collect();
    let top = dev.iter().map(|p| p.1).filter(|v| v.is_finite()).fold(1.0, f64::max);
    panel(&areas[stems.len()], "scapula: model vs rhythm (deg)", x, (0.0, top * 1.1), "deg", &[(dev, BLACK)])?;
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
        element_values(study, &value).fold(f64::INFINITY, f64::min),
        element_values(study, &value).fold(f64::NEG_INFINITY, f64::max),
    );
    per_muscle_panels(study, path, &title, &value, y, "mm", |g| g.name.clone())
}

/// Write the plots into `out`'s `plots/` directory.
pub fn write(study: &Study, results: &Results, out: &mut OutputDir) -> Result<(), OutputError> {
    let mut plot = |name: String, f: &dyn Fn(&Path) -> io::Result<()>| plot_file(out, &name, f);
    for v in &results.variants {
        plot(format!("forces_{}.svg", v.variant.name()), &|p| forces(study, v, p))?;
    }
    for (glen, what) in [(true, "with the glenoid constraint"), (false, "without the glenoid constraint")] {
        let vs: Vec<&VariantResult> = results.variants.iter().filter(|v| v.variant.glenoid == glen).collect();
        if !vs.is_empty() {
            let name = if glen { "criteria_glenoid.svg" } else { "criteria_free.svg" };
            plot(name.to_string(), &|p| criteria(study, &vs, p, what))?;
        }
    }
    if study.sharing.cone.is_some() {
        plot("glenoid.svg".into(), &|p| glenoid(study, results, p))?;
    }
    plot("landmarks.svg".into(), &|p| landmarks(study, results, p))?;
    plot("girdle.svg".into(), &|p| girdle(study, results, p))?;
    plot("moment_arms.svg".into(), &|p| moment_arms(study, results, p))?;
    Ok(())
}

/// Draw `plots/NAME` of `out` with `f`.
pub(crate) fn plot_file(
    out: &mut OutputDir,
    name: &str,
    f: &dyn Fn(&Path) -> io::Result<()>,
) -> Result<(), OutputError> {
    let p = out.file(&format!("plots/{name}"))?;
    f(&p).map_err(|source| OutputError::Io { path: p, source })
}
