//! The drawing pieces the study's plots share (plotters, SVG backend): a palette, ranges and
//! grids of panels, panels of lines with a key, the glenoid ellipse, a plot file in an output
//! directory.

use std::io;
use std::path::Path;

use mollier::output::{OutputDir, OutputError};
use plotters::coord::Shift;
use plotters::prelude::*;

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

/// A tick label: `50`, not `50.0`; at most three decimals.
pub(crate) fn tick(v: &f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    if r == r.trunc() { format!("{r:.0}") } else { format!("{r}") }
}

/// One small panel of lines against `x.1` over the range `x.0`, with a key: `labels[i]` names
/// line `i` (no key when `labels` is empty).
pub(crate) fn panel_keyed(
    area: &Area,
    title: &str,
    x: ((f64, f64), &str),
    y: (f64, f64),
    y_desc: &str,
    lines: &[(Vec<(f64, f64)>, RGBColor)],
    labels: &[String],
) -> io::Result<()> {
    let lines: Vec<Line> = lines
        .iter()
        .enumerate()
        .map(|(i, (pts, color))| Line { pts, color: *color, width: 1, dashed: false, label: labels.get(i).cloned() })
        .collect();
    panel_lines(area, title, x, y, y_desc, &lines)
}

/// A line of a panel: points (a non-finite value splits it), colour, width, dashed or solid,
/// and its name in the key.
pub(crate) struct Line<'a> {
    pub pts: &'a [(f64, f64)],
    pub color: RGBColor,
    pub width: u32,
    pub dashed: bool,
    pub label: Option<String>,
}

/// One panel of lines against `x.1` over the range `x.0`, with a key of the lines that have a
/// label.
pub(crate) fn panel_lines(
    area: &Area,
    title: &str,
    x: ((f64, f64), &str),
    y: (f64, f64),
    y_desc: &str,
    lines: &[Line],
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
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 10))
        .draw()
        .map_err(err)?;
    for line in lines {
        let (color, style) = (line.color, line.color.stroke_width(line.width));
        // a gap (a failed frame) splits a line
        for (j, run) in line.pts.split(|p| !p.1.is_finite()).filter(|r| !r.is_empty()).enumerate() {
            let series = if line.dashed {
                chart.draw_series(DashedLineSeries::new(run.to_vec(), 5, 4, style)).map_err(err)?
            } else {
                chart.draw_series(LineSeries::new(run.to_vec(), style)).map_err(err)?
            };
            if let (0, Some(label)) = (j, &line.label) {
                series
                    .label(label.clone())
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2)));
            }
        }
    }
    if lines.iter().any(|l| l.label.is_some()) {
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperLeft)
            .background_style(WHITE.mix(0.7))
            .border_style(BLACK.mix(0.3))
            .label_font(("sans-serif", 9))
            .draw()
            .map_err(err)?;
    }
    Ok(())
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

/// The anatomical direction nearest to a vector in the thorax frame (Delft/DAS3 axes: X
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

/// Draw `plots/NAME` of `out` with `f`.
pub(crate) fn plot_file(
    out: &mut OutputDir,
    name: &str,
    f: &dyn Fn(&Path) -> io::Result<()>,
) -> Result<(), OutputError> {
    let p = out.file(&format!("plots/{name}"))?;
    f(&p).map_err(|source| OutputError::Io { path: p, source })
}
