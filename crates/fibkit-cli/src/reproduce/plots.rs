//! The charts of `fibkit reproduce`, drawn as `fibkit bench --plot` draws
//! (`plotters` bitmaps, text through [`crate::bench::glyphs`]):
//!
//! - [`cdf`]: the share of lookups done within x ticks, a line per engine
//!   (the Poptrie paper's Figure 10);
//! - [`candles`]: per binary radix depth, a candlestick per engine (wicks
//!   5th-95th percentile, body quartiles, bar median: Figure 11);
//! - [`heat_map`]: counts of addresses by matched prefix length and binary
//!   radix depth, on a logarithmic colour scale (Figure 7).
//!
//! Each writes `DIR/FILE` and returns `(FILE, caption)` for the report.

use std::path::Path;

use ab_glyph::FontRef;
use anyhow::{Context, Result};
use fibkit::measure::cycles::Percentiles;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::bench::glyphs::{self, Anchor};
use crate::bench::plot::{drawing, font, ticks, COLORS, GRID, INK};

/// A line of the CDF: an engine's timings, sorted, and the overhead to
/// take off them.
pub(crate) struct Curve {
    pub(crate) label: String,
    pub(crate) sorted: Vec<u32>,
    pub(crate) overhead: f64,
}

/// The five values of a candlestick.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Candle {
    pub(crate) p5: f64,
    pub(crate) p25: f64,
    pub(crate) p50: f64,
    pub(crate) p75: f64,
    pub(crate) p95: f64,
}

impl Candle {
    pub(crate) fn of(p: Percentiles) -> Candle {
        Candle { p5: p.p5, p25: p.p25, p50: p.p50, p75: p.p75, p95: p.p95 }
    }
}

/// The chart area below a title, and the font.
fn canvas<'a>(
    path: &'a Path,
    title: &str,
    size: (u32, u32),
) -> Result<(DrawingArea<BitMapBackend<'a>, Shift>, FontRef<'static>)> {
    let font = font()?;
    let root = BitMapBackend::new(path, size).into_drawing_area();
    drawing(root.fill(&WHITE))?;
    glyphs::draw(&root, &font, title, (size.0 as i32 / 2, 22), 20.0, Anchor::Center, INK)?;
    Ok((root, font))
}

/// Horizontal gridlines and their labels on the left, and the axes' titles.
fn frame<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    chart: &ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
    >,
    font: &FontRef<'_>,
    (x_range, y_max): ((f64, f64), f64),
    (x_title, y_title): (&str, &str),
) -> Result<()> {
    let plot = chart.plotting_area();
    let (values, decimals) = ticks(y_max);
    for &tick in &values {
        drawing(plot.draw(&PathElement::new(vec![(x_range.0, tick), (x_range.1, tick)], GRID.stroke_width(1))))?;
        let (x, y) = chart.backend_coord(&(x_range.0, tick));
        glyphs::draw(root, font, &format!("{tick:.decimals$}"), (x - 8, y), 13.0, Anchor::Right, INK)?;
    }
    let axis = [(x_range.0, y_max), (x_range.0, 0.0), (x_range.1, 0.0)];
    drawing(plot.draw(&PathElement::new(axis.to_vec(), INK.stroke_width(1))))?;
    let (left, bottom) = chart.backend_coord(&(x_range.0, 0.0));
    let (right, upper) = chart.backend_coord(&(x_range.1, y_max));
    glyphs::draw(root, font, x_title, ((left + right) / 2, bottom + 36), 14.0, Anchor::Center, INK)?;
    glyphs::draw(root, font, y_title, (left, upper - 14), 13.0, Anchor::Left, INK)?;
    Ok(())
}

/// A legend right of the plot: a coloured swatch and a label per entry.
fn legend<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    font: &FontRef<'_>,
    labels: &[String],
    at: (i32, i32),
) -> Result<()> {
    for (index, label) in labels.iter().enumerate() {
        let y = at.1 + 22 * index as i32;
        let color = COLORS[index % COLORS.len()];
        drawing(root.draw(&Rectangle::new([(at.0, y - 6), (at.0 + 22, y + 6)], color.filled())))?;
        glyphs::draw(root, font, label, (at.0 + 30, y), 14.0, Anchor::Left, INK)?;
    }
    Ok(())
}

/// Figure 10: the CDF of each curve, cut at 1.2 times the largest 99th
/// percentile.
pub(crate) fn cdf(dir: &Path, file: &str, curves: &[Curve], title: &str) -> Result<(String, String)> {
    let path = dir.join(file);
    let p99 =
        |curve: &Curve| curve.sorted.get(curve.sorted.len() * 99 / 100).map_or(0.0, |&t| f64::from(t) - curve.overhead);
    let x_max = (curves.iter().map(p99).fold(0.0, f64::max) * 1.2).max(10.0);
    let (root, font) = canvas(&path, title, (960, 600))?;
    let (_, body) = root.split_vertically(40);
    let chart = drawing(
        ChartBuilder::on(&body)
            .margin(16)
            .margin_right(170)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(0.0..x_max, 0.0..1.0),
    )?;
    frame(
        &root,
        &chart,
        &font,
        ((0.0, x_max), 1.0),
        ("ticks per lookup (counter overhead subtracted)", "share of lookups"),
    )?;
    let (values, decimals) = ticks(x_max);
    for &tick in &values {
        let (x, y) = chart.backend_coord(&(tick, 0.0));
        glyphs::draw(&root, &font, &format!("{tick:.decimals$}"), (x, y + 12), 13.0, Anchor::Center, INK)?;
    }
    for (index, curve) in curves.iter().enumerate() {
        let count = curve.sorted.len();
        if count == 0 {
            continue;
        }
        let steps = 800.min(count);
        let points: Vec<(f64, f64)> = (0..=steps)
            .map(|step| step * (count - 1) / steps)
            .map(|at| {
                ((f64::from(curve.sorted[at]) - curve.overhead).clamp(0.0, x_max), (at + 1) as f64 / count as f64)
            })
            .collect();
        drawing(chart.plotting_area().draw(&PathElement::new(points, COLORS[index % COLORS.len()].stroke_width(2))))?;
    }
    let (right, upper) = chart.backend_coord(&(x_max, 1.0));
    legend(
        &root,
        &font,
        &curves.iter().map(|curve| curve.label.clone()).collect::<Vec<_>>(),
        (right + 20, upper + 10),
    )?;
    drawing(root.present()).with_context(|| format!("writing {}", path.display()))?;
    Ok((file.to_string(), title.to_string()))
}

/// Figure 11: per depth, a candlestick per engine side by side.
pub(crate) fn candles(
    dir: &Path,
    file: &str,
    engines: &[(String, Vec<Option<Candle>>)],
    title: &str,
) -> Result<(String, String)> {
    let path = dir.join(file);
    let depths = engines.iter().map(|(_, per_depth)| per_depth.len()).max().unwrap_or(1).max(1);
    let top = engines
        .iter()
        .flat_map(|(_, per_depth)| per_depth.iter().flatten().map(|candle| candle.p95))
        .fold(0.0, f64::max);
    let y_max = (top * 1.1).max(10.0);
    let x_range = (-0.5, depths as f64 - 0.5);
    let (root, font) = canvas(&path, title, (1280, 640))?;
    let (_, body) = root.split_vertically(40);
    let chart = drawing(
        ChartBuilder::on(&body)
            .margin(16)
            .margin_right(170)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(x_range.0..x_range.1, 0.0..y_max),
    )?;
    frame(&root, &chart, &font, (x_range, y_max), ("binary radix depth (bits)", "ticks per lookup"))?;
    for depth in (0..depths).step_by(2) {
        let (x, y) = chart.backend_coord(&(depth as f64, 0.0));
        glyphs::draw(&root, &font, &depth.to_string(), (x, y + 12), 13.0, Anchor::Center, INK)?;
    }
    let plot = chart.plotting_area();
    let width = 0.8 / engines.len().max(1) as f64;
    for (index, (_, per_depth)) in engines.iter().enumerate() {
        let color = COLORS[index % COLORS.len()];
        for (depth, candle) in per_depth.iter().enumerate() {
            let Some(candle) = candle else { continue };
            let middle = depth as f64 - 0.4 + width * (index as f64 + 0.5);
            let (left, right) = (middle - width * 0.4, middle + width * 0.4);
            let clip = |value: f64| value.min(y_max);
            drawing(plot.draw(&PathElement::new(
                vec![(middle, candle.p5), (middle, clip(candle.p95))],
                color.stroke_width(1),
            )))?;
            drawing(plot.draw(&Rectangle::new([(left, candle.p25), (right, clip(candle.p75))], color.filled())))?;
            drawing(
                plot.draw(&PathElement::new(vec![(left, candle.p50), (right, candle.p50)], WHITE.stroke_width(2))),
            )?;
        }
    }
    let (right, upper) = chart.backend_coord(&(x_range.1, y_max));
    legend(
        &root,
        &font,
        &engines.iter().map(|(label, _)| label.clone()).collect::<Vec<_>>(),
        (right + 20, upper + 10),
    )?;
    drawing(root.present()).with_context(|| format!("writing {}", path.display()))?;
    Ok((file.to_string(), title.to_string()))
}

/// The colour of a count on the heat map's logarithmic scale (white for
/// none, then light to dark blue).
fn shade(count: u64, largest: u64) -> RGBColor {
    if count == 0 {
        return WHITE;
    }
    let level = (count as f64).ln_1p() / (largest as f64).ln_1p().max(1e-9);
    let mix = |light: f64, dark: f64| (light + (dark - light) * level).round() as u8;
    RGBColor(mix(222.0, 8.0), mix(235.0, 48.0), mix(247.0, 107.0))
}

/// Figure 7: `counts[matched prefix length][binary radix depth]`.
pub(crate) fn heat_map(dir: &Path, file: &str, counts: &[Vec<u64>], title: &str) -> Result<(String, String)> {
    let path = dir.join(file);
    let size = counts.len() as f64;
    let largest = counts.iter().flatten().copied().max().unwrap_or(0);
    let (root, font) = canvas(&path, title, (820, 780))?;
    let (_, body) = root.split_vertically(40);
    let chart = drawing(
        ChartBuilder::on(&body)
            .margin(16)
            .margin_right(40)
            .x_label_area_size(50)
            .y_label_area_size(60)
            .build_cartesian_2d(-0.5..size - 0.5, -0.5..size - 0.5),
    )?;
    let plot = chart.plotting_area();
    for (matched, row) in counts.iter().enumerate() {
        for (depth, &count) in row.iter().enumerate() {
            let (x, y) = (matched as f64, depth as f64);
            drawing(
                plot.draw(&Rectangle::new([(x - 0.5, y - 0.5), (x + 0.5, y + 0.5)], shade(count, largest).filled())),
            )?;
        }
    }
    let edge = size - 0.5;
    let border = [(-0.5, -0.5), (-0.5, edge), (edge, edge), (edge, -0.5), (-0.5, -0.5)];
    drawing(plot.draw(&PathElement::new(border.to_vec(), INK.stroke_width(1))))?;
    for value in (0..counts.len()).step_by(4) {
        let (x, y) = chart.backend_coord(&(value as f64, -0.5));
        glyphs::draw(&root, &font, &value.to_string(), (x, y + 12), 13.0, Anchor::Center, INK)?;
        let (x, y) = chart.backend_coord(&(-0.5, value as f64));
        glyphs::draw(&root, &font, &value.to_string(), (x - 8, y), 13.0, Anchor::Right, INK)?;
    }
    let (left, bottom) = chart.backend_coord(&(-0.5, -0.5));
    let (right, upper) = chart.backend_coord(&(edge, edge));
    let x_title = "matched prefix length (0: no route)";
    glyphs::draw(&root, &font, x_title, ((left + right) / 2, bottom + 36), 14.0, Anchor::Center, INK)?;
    glyphs::draw(&root, &font, "binary radix depth", (left, upper - 14), 13.0, Anchor::Left, INK)?;
    glyphs::draw(
        &root,
        &font,
        &format!("darkest: {largest} addresses (log scale)"),
        (right, upper - 14),
        13.0,
        Anchor::Right,
        INK,
    )?;
    drawing(root.present()).with_context(|| format!("writing {}", path.display()))?;
    Ok((file.to_string(), title.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shades_darken_with_the_count_and_leave_zero_white() {
        assert_eq!(shade(0, 100), WHITE);
        assert_eq!(shade(100, 100), RGBColor(8, 48, 107));
        let (light, dark) = (shade(1, 1000), shade(500, 1000));
        assert!(light.0 > dark.0 && light.2 > dark.2);
    }
}
