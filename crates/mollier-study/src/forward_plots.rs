//! SVG plots of a forward simulation (`mollier simulate` with muscles; docs/forward-dynamics.md):
//!
//! - `coordinates.svg`: the generalized coordinates against time, one panel per joint (the name's
//!   stem before `_`: `sc`, `ac`, `gh`), angles in degrees from the initial configuration;
//! - `contacts.svg`: the magnitude of every soft contact's force against time;
//! - `stability.svg`: the joint force's direction inside the cone's ellipse (Chadwick et al. 2014, eq. 9 and
//!   Fig. 3 inset), first and last frames marked.

use mollier::output::{OutputDir, OutputError};
use plotters::prelude::*;

use crate::chart::{PALETTE, ellipse, err, grid, padded, panel_keyed, plot_file};

/// What a forward run plots, sampled over time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ForwardSeries {
    /// Times (s).
    pub time: Vec<f64>,
    /// Per coordinate: its name, unit (`deg` or `m`) and values (one per time).
    pub coordinates: Vec<(String, &'static str, Vec<f64>)>,
    /// Per soft contact: its name and force magnitudes (N, one per time).
    pub contacts: Vec<(String, Vec<f64>)>,
    /// The joint force's direction in its cone, when the model has one.
    pub stability: Option<ConePath>,
}

/// The joint force's angles `(θ, φ)` (deg, one pair per time) and the cone's half-angles (deg).
pub type ConePath = (Vec<(f64, f64)>, [f64; 2]);

fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) =
        values.filter(|v| v.is_finite()).fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| (a.min(v), b.max(v)));
    padded(lo, hi)
}

fn coordinates(s: &ForwardSeries, path: &std::path::Path) -> std::io::Result<()> {
    let mut stems: Vec<&str> = Vec::new();
    for (name, _, _) in &s.coordinates {
        let stem = name.split(['_', '.']).next().unwrap_or(name);
        if !stems.contains(&stem) {
            stems.push(stem);
        }
    }
    let (rows, cols) = grid(stems.len());
    let root = SVGBackend::new(path, (420 * cols as u32, 340 * rows as u32)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let t = range(s.time.iter().copied());
    for (stem, area) in stems.iter().zip(root.split_evenly((rows, cols))) {
        let members: Vec<&(String, &str, Vec<f64>)> =
            s.coordinates.iter().filter(|(n, _, _)| n.split(['_', '.']).next() == Some(*stem)).collect();
        let lines: Vec<_> = members
            .iter()
            .enumerate()
            .map(|(j, (_, _, v))| (s.time.iter().copied().zip(v.iter().copied()).collect::<Vec<_>>(), PALETTE[j % 10]))
            .collect();
        let y = range(members.iter().flat_map(|(_, _, v)| v.iter().copied()));
        let unit = members.first().map_or("deg", |m| m.1);
        let names: Vec<&str> = members.iter().map(|(n, _, _)| n.as_str()).collect();
        panel_keyed(&area, &names.join(", "), (t, "time (s)"), y, unit, &lines, &[])?;
    }
    root.present().map_err(err)
}

fn contacts(s: &ForwardSeries, path: &std::path::Path) -> std::io::Result<()> {
    let root = SVGBackend::new(path, (640, 400)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let t = range(s.time.iter().copied());
    let top = s.contacts.iter().flat_map(|(_, v)| v.iter().copied()).filter(|v| v.is_finite()).fold(1.0, f64::max);
    let lines: Vec<_> = s
        .contacts
        .iter()
        .enumerate()
        .map(|(j, (_, v))| (s.time.iter().copied().zip(v.iter().copied()).collect::<Vec<_>>(), PALETTE[j % 10]))
        .collect();
    let names: Vec<&str> = s.contacts.iter().map(|(n, _)| n.as_str()).collect();
    panel_keyed(
        &root,
        &format!("contact forces: {}", names.join(", ")),
        (t, "time (s)"),
        (0.0, 1.1 * top),
        "N",
        &lines,
        &names.iter().map(|n| n.to_string()).collect::<Vec<_>>(),
    )?;
    root.present().map_err(err)
}

fn stability(angles: &[(f64, f64)], half: [f64; 2], path: &std::path::Path) -> std::io::Result<()> {
    let root = SVGBackend::new(path, (480, 480)).into_drawing_area();
    root.fill(&WHITE).map_err(err)?;
    let lim = 1.15 * half[0].max(half[1]).max(angles.iter().fold(0.0f64, |m, p| m.max(p.0.abs()).max(p.1.abs())));
    let mut chart = ChartBuilder::on(&root)
        .caption("joint force direction in the cone (o first, x last)", ("sans-serif", 14))
        .margin(10)
        .x_label_area_size(32)
        .y_label_area_size(40)
        .build_cartesian_2d(-lim..lim, -lim..lim)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("theta: towards the cone's y axis (deg)")
        .y_desc("phi: towards its z axis (deg)")
        .label_style(("sans-serif", 10))
        .draw()
        .map_err(err)?;
    chart.draw_series(LineSeries::new(ellipse(half[0], half[1]), BLACK.stroke_width(2))).map_err(err)?;
    let pts: Vec<(f64, f64)> = angles.iter().copied().filter(|p| p.0.is_finite() && p.1.is_finite()).collect();
    let color = RGBColor(214, 39, 40);
    if let (Some(first), Some(last)) = (pts.first(), pts.last()) {
        chart.draw_series(LineSeries::new(pts.clone(), color.stroke_width(1))).map_err(err)?;
        chart.draw_series(std::iter::once(Circle::new(*first, 6, color.stroke_width(2)))).map_err(err)?;
        chart.draw_series(std::iter::once(Cross::new(*last, 6, color.stroke_width(2)))).map_err(err)?;
    }
    root.present().map_err(err)
}

/// Write the plots of `series` into `plots/` of `out`.
pub fn write(series: &ForwardSeries, out: &mut OutputDir) -> Result<(), OutputError> {
    let mut plot = |name: &str, f: &dyn Fn(&std::path::Path) -> std::io::Result<()>| plot_file(out, name, f);
    if !series.coordinates.is_empty() {
        plot("coordinates.svg", &|p| coordinates(series, p))?;
    }
    if !series.contacts.is_empty() {
        plot("contacts.svg", &|p| contacts(series, p))?;
    }
    if let Some((angles, half)) = &series.stability {
        plot("stability.svg", &|p| stability(angles, *half, p))?;
    }
    Ok(())
}
