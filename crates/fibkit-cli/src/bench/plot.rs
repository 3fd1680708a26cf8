//! `fibkit bench --plot`: PNG charts drawn with `plotters`' bitmap backend.
//!
//! - `OUT.png`: a panel per test, a row per engine sorted best first, a
//!   bar per thread count (one colour each) with its min-max whiskers.
//! - `OUT-dxr-k.png`: the DXR family on one thread against K, a line per
//!   test (a sweep, so lines).
//!
//! Text is set by [`super::glyphs`] from a TrueType font read at run time,
//! so nothing depends on fontconfig or on a font compiled into the binary.
//! The font is the file named by the `FIBKIT_FONT` environment variable,
//! else DejaVu Sans (or Liberation Sans) from the usual system font
//! directories; Debian's `fonts-dejavu-core`, which `make setup` installs,
//! provides it. Without a font `--plot` stops before measuring, with a
//! message saying so.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ab_glyph::FontRef;
use anyhow::{anyhow, bail, Context, Result};
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;

use super::args::{dxr_k, TestName};
use super::check_writable;
use super::glyphs::{self, Anchor};
use super::report::{Report, CEILING};
use super::run::Measurement;

/// Font files tried in order when `FIBKIT_FONT` is not set.
const FONT_CANDIDATES: &[&str] = &[
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu-sans-fonts/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/local/share/fonts/DejaVuSans.ttf",
];

/// Series colours (Tableau 10's first six): distinct from each other and
/// dark enough on white.
pub(crate) const COLORS: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

/// Text colour, and the grid's.
pub(crate) const INK: RGBColor = RGBColor(34, 34, 34);
pub(crate) const GRID: RGBColor = RGBColor(225, 225, 225);

/// The font's bytes, read once per process (kept for the process's life).
static FONT: OnceLock<std::result::Result<&'static [u8], String>> = OnceLock::new();

/// The font the charts are drawn with (module docs).
pub(super) fn font_bytes() -> Result<&'static [u8]> {
    let outcome = FONT.get_or_init(|| {
        let candidates: Vec<PathBuf> = match std::env::var_os("FIBKIT_FONT") {
            Some(path) => vec![PathBuf::from(path)],
            None => FONT_CANDIDATES.iter().map(PathBuf::from).collect(),
        };
        let mut tried = Vec::new();
        for path in candidates {
            match std::fs::read(&path) {
                Ok(bytes) => {
                    if FontRef::try_from_slice(&bytes).is_err() {
                        return Err(format!("{}: not a TrueType/OpenType font", path.display()));
                    }
                    return Ok(&*Box::leak(bytes.into_boxed_slice()));
                }
                Err(error) => tried.push(format!("{} ({error})", path.display())),
            }
        }
        Err(format!(
            "--plot needs a TrueType font: set FIBKIT_FONT=FILE.ttf or install DejaVu Sans \
             (Debian: apt-get install fonts-dejavu-core; `make setup` does it); tried {}",
            tried.join(", ")
        ))
    });
    match outcome {
        Ok(bytes) => Ok(bytes),
        Err(message) => bail!("{message}"),
    }
}

pub(crate) fn font() -> Result<FontRef<'static>> {
    Ok(FontRef::try_from_slice(font_bytes()?)?)
}

/// Checks, before any measuring, that `path` can be written and a font is
/// at hand.
pub(super) fn prepare(path: &Path) -> Result<()> {
    if !path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("png")) {
        bail!("{}: --plot writes PNG, so the file name must end in .png", path.display());
    }
    check_writable(path)?;
    font().map(|_| ())
}

/// Where the DXR-against-K chart goes: `OUT.png` becomes `OUT-dxr-k.png`.
pub(super) fn dxr_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map_or_else(|| "bench".into(), |stem| stem.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}-dxr-k.png"))
}

/// The largest size up to `largest` at which `text` fits `room` pixels.
pub(crate) fn fitting(font: &FontRef<'_>, text: &str, room: u32, largest: f32) -> f32 {
    let at_one = glyphs::width(font, 1.0, text).max(1e-3);
    (room as f32 / at_one).clamp(9.0, largest)
}

pub(crate) fn drawing<T, E: Display>(outcome: std::result::Result<T, E>) -> Result<T> {
    outcome.map_err(|error| anyhow!("drawing the chart: {error}"))
}

/// Gridline values from 0 to `top`: 1, 2 or 5 times a power of ten apart,
/// three to six of them; and the decimals their labels need.
pub(crate) fn ticks(top: f64) -> (Vec<f64>, usize) {
    let raw = (top / 5.0).max(1e-9);
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].into_iter().map(|factor| factor * magnitude).find(|&step| step >= raw).unwrap();
    let count = (top / step).floor() as usize;
    let decimals = if step >= 1.0 { 0 } else { (-step.log10().floor()) as usize };
    ((0..=count).map(|index| index as f64 * step).collect(), decimals)
}

/// Draws the charts; returns the files written.
pub(super) fn draw(report: &Report, path: &Path) -> Result<Vec<PathBuf>> {
    let font = font()?;
    let mut written = Vec::new();
    draw_tests(report, path, &font).with_context(|| format!("writing {}", path.display()))?;
    written.push(path.to_path_buf());
    let dxr = dxr_path(path);
    if draw_dxr_k(report, &dxr, &font).with_context(|| format!("writing {}", dxr.display()))? {
        written.push(dxr);
    } else {
        eprintln!("no DXR engine measured: {} not drawn", dxr.display());
    }
    Ok(written)
}

/// A row of a bar chart: its label and, per thread count of the chart, the
/// measurement if any.
struct Row<'m> {
    label: String,
    bars: Vec<Option<&'m Measurement>>,
}

fn threads_label(count: usize) -> String {
    if count == 1 {
        "1 thread".to_string()
    } else {
        format!("{count} threads")
    }
}

/// Throughput per test: a panel per test, a row per engine (and batch
/// length) of the selection sorted best first by the figure of the most
/// threads, a bar per thread count with its min-max, and the ceiling of
/// each thread count as a dashed line.
fn draw_tests(report: &Report, path: &Path, font: &FontRef<'_>) -> Result<()> {
    // The selection's measurements of the tests asked for (the DXR sweep
    // adds single-thread figures that belong to the K chart).
    let selected: Vec<&Measurement> = report
        .measurements
        .iter()
        .filter(|m| report.selected.contains(&m.engine) && report.tests.contains(&m.config.test))
        .collect();
    let tests: BTreeSet<TestName> = selected.iter().map(|m| m.config.test).collect();
    let threads: Vec<usize> = selected.iter().map(|m| m.config.threads).collect::<BTreeSet<_>>().into_iter().collect();
    let mut series: Vec<(&str, usize)> = selected.iter().map(|m| (m.engine.as_str(), m.config.batch)).collect();
    series.sort_unstable();
    series.dedup();
    let panels = tests.len().max(1) as u32;
    let row_height = 10 + 12 * threads.len().max(1) as u32;
    let (width, height) = ((520 * panels).max(1000), 190 + row_height * series.len().max(1) as u32);
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    drawing(root.fill(&WHITE))?;
    let title = format!("fibkit bench: {} ({} prefixes, {})", report.table_name, report.prefixes, report.mapping);
    let size = fitting(font, &title, width - 40, 22.0);
    glyphs::draw(&root, font, &title, (width as i32 / 2, 22), size, Anchor::Center, INK)?;
    // The legend: a swatch and a label per thread count, then the
    // ceiling's dashes, centred.
    let mut entries: Vec<String> = threads.iter().map(|&count| threads_label(count)).collect();
    entries.push("ceiling: one load from a 1 MiB table per key".to_string());
    let entry_width = |text: &str| 22.0 + glyphs::width(font, 15.0, text) + 24.0;
    let mut x = (width as f32 - entries.iter().map(|text| entry_width(text)).sum::<f32>()) / 2.0;
    for (index, text) in entries.iter().enumerate() {
        if index < threads.len() {
            let color = COLORS[index % COLORS.len()];
            drawing(root.draw(&Rectangle::new([(x as i32, 47), (x as i32 + 16, 61)], color.filled())))?;
        } else {
            drawing(root.draw(&dashes((x as i32, 54), (x as i32 + 16, 54), INK)))?;
        }
        glyphs::draw(&root, font, text, (x as i32 + 22, 54), 15.0, Anchor::Left, INK)?;
        x += entry_width(text);
    }
    let footer = format!(
        "{}, {} cores; median of {} run(s) of {} s, whiskers from the slowest run to the fastest",
        report.machine.cpu_model, report.machine.cores, report.runs, report.seconds
    );
    let size = fitting(font, &footer, width - 40, 14.0);
    glyphs::draw(&root, font, &footer, (width as i32 / 2, height as i32 - 16), size, Anchor::Center, INK)?;
    let (_, body) = root.split_vertically(70);
    let (body, _) = body.split_vertically(height - 70 - 34);
    for (test, area) in tests.iter().zip(body.split_evenly((1, panels as usize))) {
        let mut rows: Vec<Row> = series
            .iter()
            .map(|&(engine, batch)| Row {
                label: if batch == 0 { engine.to_string() } else { format!("{engine} batch {batch}") },
                bars: threads
                    .iter()
                    .map(|&count| {
                        selected.iter().copied().find(|m| {
                            m.engine == engine
                                && m.config.batch == batch
                                && m.config.test == *test
                                && m.config.threads == count
                        })
                    })
                    .collect(),
            })
            .filter(|row| row.bars.iter().any(Option::is_some))
            .collect();
        let best = |row: &Row| row.bars.iter().rev().flatten().next().map_or(0.0, |m| m.median());
        rows.sort_by(|a, b| best(b).total_cmp(&best(a)));
        let ceiling: Vec<Option<&Measurement>> = threads
            .iter()
            .map(|&count| {
                report.measurements.iter().find(|m| {
                    m.engine == CEILING && m.config.test == *test && m.config.threads == count && m.config.batch == 0
                })
            })
            .collect();
        bar_panel(&root, &area, font, &format!("{} test", test.title()), &rows, &ceiling)?;
    }
    drawing(root.present())?;
    Ok(())
}

/// Short dashes from `from` to `to` (pixels), for the ceiling.
fn dashes(from: (i32, i32), to: (i32, i32), color: RGBColor) -> DashedPathElement<std::vec::IntoIter<(i32, i32)>, i32> {
    DashedPathElement::new(vec![from, to], 5, 4, color.stroke_width(2))
}

/// One panel of horizontal bars in `area` (text drawn on `root`): rows top
/// to bottom, a bar per thread count, and the ceiling per thread count
/// (`ceiling`, in the bars' order) as a dashed line.
fn bar_panel<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    area: &DrawingArea<DB, Shift>,
    font: &FontRef<'_>,
    caption: &str,
    rows: &[Row],
    ceiling: &[Option<&Measurement>],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    // A ceiling far beyond the bars (REP's, served from the cache) would
    // squash them: it is then named in figures rather than drawn.
    let bars = rows.iter().flat_map(|row| row.bars.iter().flatten().map(|m| m.max())).fold(0.0f64, f64::max);
    let drawn = |m: &Measurement| m.median() <= 2.0 * bars;
    let top = ceiling.iter().flatten().filter(|m| drawn(m)).map(|m| m.median()).fold(bars, f64::max);
    let x_max = if top > 0.0 { top * 1.05 } else { 1.0 };
    let count = rows.len().max(1);
    let label_width = rows.iter().map(|row| glyphs::width(font, 14.0, &row.label)).fold(0.0f32, f32::max) as u32 + 18;
    let chart = drawing(
        ChartBuilder::on(area)
            .margin_top(30)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0.0..x_max, -0.5..count as f64 - 0.5),
    )?;
    let plot = chart.plotting_area();
    let (ticks, decimals) = ticks(x_max);
    for &tick in &ticks {
        drawing(plot.draw(&PathElement::new(vec![(tick, -0.5), (tick, count as f64 - 0.5)], GRID.stroke_width(1))))?;
    }
    // Row `index` (0 at the top) is centred on y = count - 1 - index; its
    // bars share 0.8 of the row, the first thread count on top.
    let bars = rows.first().map_or(1, |row| row.bars.len()).max(1);
    let band = 0.8 / bars as f64;
    let span = |index: usize, slot: usize| {
        let upper = (count - 1 - index) as f64 + 0.4 - band * slot as f64;
        (upper - band * 0.85, upper)
    };
    for (index, row) in rows.iter().enumerate() {
        for (slot, measurement) in row.bars.iter().enumerate() {
            let Some(m) = measurement else { continue };
            let (low, high) = span(index, slot);
            let color = COLORS[slot % COLORS.len()];
            drawing(plot.draw(&Rectangle::new([(0.0, low), (m.median(), high)], color.filled())))?;
            let whisker = ErrorBar::new_horizontal((low + high) / 2.0, m.min(), m.median(), m.max(), INK, 5);
            drawing(plot.draw(&whisker))?;
        }
        let (x, y) = chart.backend_coord(&(0.0, (count - 1 - index) as f64));
        glyphs::draw(root, font, &row.label, (x - 8, y), 14.0, Anchor::Right, INK)?;
    }
    let axis = [(0.0, count as f64 - 0.5), (0.0, -0.5), (x_max, -0.5)];
    drawing(plot.draw(&PathElement::new(axis.to_vec(), INK.stroke_width(1))))?;
    let off_scale: Vec<String> = ceiling
        .iter()
        .flatten()
        .filter(|m| !drawn(m))
        .map(|m| format!("{} {:.0}", threads_label(m.config.threads), m.median()))
        .collect();
    if !off_scale.is_empty() {
        // Bottom right, where the slowest engines leave room.
        let (x, y) = chart.backend_coord(&(x_max, -0.5));
        let text = format!("ceiling off scale: {}", off_scale.join(", "));
        glyphs::draw(root, font, &text, (x - 6, y - 14), 13.0, Anchor::Right, INK)?;
    }
    for (slot, measurement) in ceiling.iter().enumerate() {
        let Some(m) = measurement.filter(|m| drawn(m)) else { continue };
        let (x, bottom) = chart.backend_coord(&(m.median(), -0.5));
        let (_, upper) = chart.backend_coord(&(m.median(), count as f64 - 0.5));
        drawing(root.draw(&dashes((x, upper), (x, bottom), COLORS[slot % COLORS.len()])))?;
    }
    for &tick in &ticks {
        let (x, y) = chart.backend_coord(&(tick, -0.5));
        glyphs::draw(root, font, &format!("{tick:.decimals$}"), (x, y + 12), 13.0, Anchor::Center, INK)?;
    }
    let (left, bottom) = chart.backend_coord(&(0.0, -0.5));
    let (right, upper) = chart.backend_coord(&(x_max, count as f64 - 0.5));
    let middle = (left + right) / 2;
    glyphs::draw(root, font, "million lookups / s", (middle, bottom + 32), 14.0, Anchor::Center, INK)?;
    glyphs::draw(root, font, caption, (middle, upper - 16), 17.0, Anchor::Center, INK)?;
    Ok(())
}

/// A line of the K chart: its test, colour and `(K, measurement)` points.
type KLine<'m> = (TestName, RGBColor, Vec<(f64, &'m Measurement)>);

/// Single-thread SEQ, RND and REP of the DXR family against K; `false`
/// when no DXR engine was measured.
fn draw_dxr_k(report: &Report, path: &Path, font: &FontRef<'_>) -> Result<bool> {
    let sweep: Vec<(u32, &Measurement)> = report
        .measurements
        .iter()
        .filter(|m| m.config.threads == 1 && m.config.batch == 0)
        .filter_map(|m| Some((dxr_k(&m.engine)?, m)))
        .collect();
    if sweep.is_empty() {
        return Ok(false);
    }
    let ks: BTreeSet<u32> = sweep.iter().map(|&(k, _)| k).collect();
    let (k_min, k_max) = (f64::from(*ks.first().unwrap()), f64::from(*ks.last().unwrap()));
    let lines: Vec<KLine> = [TestName::Seq, TestName::Rnd, TestName::Rep]
        .into_iter()
        .zip(COLORS)
        .filter_map(|(test, color)| {
            let mut points: Vec<_> =
                sweep.iter().filter(|(_, m)| m.config.test == test).map(|&(k, m)| (f64::from(k), m)).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!points.is_empty()).then_some((test, color, points))
        })
        .collect();
    let (width, height) = (900u32, 620u32);
    let root = BitMapBackend::new(path, (width, height)).into_drawing_area();
    drawing(root.fill(&WHITE))?;
    glyphs::draw(&root, font, "DXR, one thread: throughput against K", (450, 22), 21.0, Anchor::Center, INK)?;
    let caption = format!("{} ({}), {}", report.table_name, report.mapping, report.machine.cpu_model);
    let size = fitting(font, &caption, width - 40, 15.0);
    glyphs::draw(&root, font, &caption, (450, 46), size, Anchor::Center, INK)?;
    let top = lines.iter().flat_map(|(_, _, points)| points.iter().map(|(_, m)| m.max())).fold(0.0f64, f64::max);
    let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
    let (_, body) = root.split_vertically(64);
    let chart = drawing(
        ChartBuilder::on(&body)
            .margin_top(16)
            .margin_right(150)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(k_min - 0.5..k_max + 0.5, 0.0..y_max),
    )?;
    let plot = chart.plotting_area();
    let (ticks, decimals) = ticks(y_max);
    for &tick in &ticks {
        drawing(plot.draw(&PathElement::new(vec![(k_min - 0.5, tick), (k_max + 0.5, tick)], GRID.stroke_width(1))))?;
    }
    for (_, color, points) in &lines {
        let color = *color;
        let medians: Vec<(f64, f64)> = points.iter().map(|&(k, m)| (k, m.median())).collect();
        drawing(plot.draw(&PathElement::new(medians.clone(), color.stroke_width(2))))?;
        for (&(k, m), &(_, median)) in points.iter().zip(&medians) {
            drawing(plot.draw(&Circle::new((k, median), 4, color.filled())))?;
            drawing(plot.draw(&ErrorBar::new_vertical(k, m.min(), median, m.max(), color, 8)))?;
        }
    }
    let axis = [(k_min - 0.5, y_max), (k_min - 0.5, 0.0), (k_max + 0.5, 0.0)];
    drawing(plot.draw(&PathElement::new(axis.to_vec(), INK.stroke_width(1))))?;
    for &tick in &ticks {
        let (x, y) = chart.backend_coord(&(k_min - 0.5, tick));
        glyphs::draw(&root, font, &format!("{tick:.decimals$}"), (x - 8, y), 13.0, Anchor::Right, INK)?;
    }
    for &k in &ks {
        let (x, y) = chart.backend_coord(&(f64::from(k), 0.0));
        glyphs::draw(&root, font, &k.to_string(), (x, y + 12), 13.0, Anchor::Center, INK)?;
    }
    let (left, bottom) = chart.backend_coord(&(k_min - 0.5, 0.0));
    let (right, upper) = chart.backend_coord(&(k_max + 0.5, y_max));
    let axis_label = "K (bits of the direct table)";
    glyphs::draw(&root, font, axis_label, ((left + right) / 2, bottom + 34), 14.0, Anchor::Center, INK)?;
    glyphs::draw(&root, font, "million lookups / s", (left, upper - 12), 13.0, Anchor::Left, INK)?;
    // The legend, right of the plot.
    for (index, (test, color, _)) in lines.iter().enumerate() {
        let y = upper + 20 + 24 * index as i32;
        drawing(root.draw(&PathElement::new(vec![(right + 16, y), (right + 40, y)], color.stroke_width(3))))?;
        glyphs::draw(&root, font, &format!("{} test", test.title()), (right + 48, y), 15.0, Anchor::Left, INK)?;
    }
    drawing(root.present())?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dxr_chart_sits_beside_the_main_one() {
        assert_eq!(dxr_path(Path::new("out/bench.png")), PathBuf::from("out/bench-dxr-k.png"));
        assert_eq!(dxr_path(Path::new("b.png")), PathBuf::from("b-dxr-k.png"));
    }

    #[test]
    fn long_titles_get_smaller_fonts() {
        let Ok(font) = font() else {
            eprintln!("skipped: no TrueType font installed");
            return;
        };
        assert_eq!(fitting(&font, "short", 640, 22.0), 22.0);
        let long = "x".repeat(110);
        let size = fitting(&font, &long, 640, 22.0);
        assert!(size < 22.0 && glyphs::width(&font, size, &long) <= 640.5, "{size}");
    }

    #[test]
    fn gridlines_are_round_numbers() {
        assert_eq!(ticks(190.0), (vec![0.0, 50.0, 100.0, 150.0], 0));
        assert_eq!(ticks(12.0), (vec![0.0, 5.0, 10.0], 0));
        assert_eq!(ticks(1.0).1, 1);
        assert_eq!(ticks(1.0).0.len(), 6);
        assert_eq!(ticks(730.0).0, vec![0.0, 200.0, 400.0, 600.0]);
        for top in [0.7, 3.0, 47.0, 99.9, 100.0, 2017.5] {
            let (values, _) = ticks(top);
            assert!((3..=6).contains(&values.len()) && *values.last().unwrap() <= top, "{top}: {values:?}");
        }
    }

    #[test]
    fn plot_names_must_be_png() {
        let message = format!("{:#}", prepare(Path::new("chart.svg")).unwrap_err());
        assert!(message.contains("must end in .png"), "{message}");
        let message = format!("{:#}", prepare(Path::new("no/such/dir/chart.png")).unwrap_err());
        assert!(message.contains("does not exist"), "{message}");
    }
}
