//! `fibkit bench --plot`: PNG charts drawn with `plotters`' bitmap backend.
//!
//! Text is rendered by `plotters`' pure-Rust `ab_glyph` feature from a
//! TrueType font read at run time, so nothing depends on fontconfig or on
//! a font compiled into the binary. The font is the file named by the
//! `FIBKIT_FONT` environment variable, else DejaVu Sans (or Liberation
//! Sans) from the usual system font directories; Debian's
//! `fonts-dejavu-core`, which `make setup` installs, provides it. Without a
//! font `--plot` stops before measuring, with a message saying so.

use std::collections::BTreeSet;
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{anyhow, bail, Context, Result};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle, Palette99};

use super::args::{dxr_k, TestName};
use super::check_writable;
use super::report::Report;
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

/// Line colors, readable on white (Tableau 10); more lines cycle through
/// `plotters`' 99-color palette.
const COLORS: [RGBColor; 10] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(255, 127, 14),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
    RGBColor(188, 189, 34),
    RGBColor(23, 190, 207),
];

fn color(index: usize) -> RGBColor {
    COLORS.get(index).copied().unwrap_or_else(|| {
        let (red, green, blue) = Palette99::pick(index).rgb();
        RGBColor(red, green, blue)
    })
}

/// The font family name the charts ask for.
const FAMILY: &str = "sans-serif";

static FONT: OnceLock<std::result::Result<PathBuf, String>> = OnceLock::new();

/// Finds and registers the font (once per process).
fn register() -> Result<()> {
    let outcome = FONT.get_or_init(|| {
        let candidates: Vec<PathBuf> = match std::env::var_os("FIBKIT_FONT") {
            Some(path) => vec![PathBuf::from(path)],
            None => FONT_CANDIDATES.iter().map(PathBuf::from).collect(),
        };
        let mut tried = Vec::new();
        for path in candidates {
            match std::fs::read(&path) {
                Ok(bytes) => {
                    // The font table keeps `&'static` bytes: one font per
                    // process, leaked on purpose.
                    let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
                    return register_font(FAMILY, FontStyle::Normal, bytes)
                        .map(|()| path.clone())
                        .map_err(|_| format!("{}: not a TrueType/OpenType font", path.display()));
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
        Ok(_) => Ok(()),
        Err(message) => bail!("{message}"),
    }
}

/// Checks, before any measuring, that `path` can be written and a font is
/// at hand.
pub(super) fn prepare(path: &Path) -> Result<()> {
    if !path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("png")) {
        bail!("{}: --plot writes PNG, so the file name must end in .png", path.display());
    }
    check_writable(path)?;
    register()
}

/// Where the DXR-against-K chart goes: `OUT.png` becomes `OUT-dxr-k.png`.
pub(super) fn dxr_path(path: &Path) -> PathBuf {
    let stem = path.file_stem().map_or_else(|| "bench".into(), |stem| stem.to_string_lossy().into_owned());
    path.with_file_name(format!("{stem}-dxr-k.png"))
}

/// A font size at most `largest` at which `text` fits `width` pixels
/// (DejaVu Sans averages about 0.55 em a character).
fn font_size(text: &str, width: u32, largest: u32) -> u32 {
    let fitting = (f64::from(width) * 0.95 / (text.chars().count().max(1) as f64 * 0.55)) as u32;
    fitting.clamp(9, largest)
}

fn drawing<T, E: Display>(outcome: std::result::Result<T, E>) -> Result<T> {
    outcome.map_err(|error| anyhow!("drawing the chart: {error}"))
}

/// Draws the charts; returns the files written.
pub(super) fn draw(report: &Report, path: &Path) -> Result<Vec<PathBuf>> {
    register()?;
    let mut written = Vec::new();
    draw_threads(report, path).with_context(|| format!("writing {}", path.display()))?;
    written.push(path.to_path_buf());
    let dxr = dxr_path(path);
    if draw_dxr_k(report, &dxr).with_context(|| format!("writing {}", dxr.display()))? {
        written.push(dxr);
    } else {
        eprintln!("no DXR engine measured: {} not drawn", dxr.display());
    }
    Ok(written)
}

/// A line of a chart: its label and `(x, median, min, max)` points.
struct Line {
    label: String,
    color: RGBColor,
    points: Vec<(f64, f64, f64, f64)>,
}

fn point(x: f64, measurement: &Measurement) -> (f64, f64, f64, f64) {
    (x, measurement.median(), measurement.min(), measurement.max())
}

/// One panel: lines with min-max error bars and a legend.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    caption: &str,
    x_desc: &str,
    x_range: (f64, f64),
    legend_room: f64,
    lines: &[Line],
) -> Result<()>
where
    DB::ErrorType: 'static,
{
    let top = lines.iter().flat_map(|line| line.points.iter().map(|point| point.3)).fold(0.0f64, f64::max);
    let y_max = if top > 0.0 { top * 1.1 } else { 1.0 };
    // Room on the right for the legend (a share of the x range), so it
    // never hides a line.
    let x_end = x_range.1 + (x_range.1 - x_range.0) * legend_room;
    let caption_size = font_size(caption, area.dim_in_pixel().0, 18);
    let mut chart = drawing(
        ChartBuilder::on(area)
            .caption(caption, (FAMILY, caption_size))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(x_range.0..x_end, 0.0..y_max),
    )?;
    let integer_label = |x: &f64| {
        if (x - x.round()).abs() < 1e-9 && *x < x_range.1 {
            format!("{x:.0}")
        } else {
            String::new()
        }
    };
    drawing(
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc("million lookups / s")
            .x_labels(((x_end - x_range.0).round() as usize + 1).min(40))
            .x_label_formatter(&integer_label)
            .label_style((FAMILY, 14))
            .draw(),
    )?;
    for line in lines {
        let color = line.color;
        drawing(chart.draw_series(LineSeries::new(
            line.points.iter().map(|&(x, median, _, _)| (x, median)),
            color.stroke_width(2),
        )))?
        .label(line.label.clone())
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2)));
        drawing(chart.draw_series(
            line.points.iter().map(|&(x, median, _, _)| Circle::new((x, median), 4, color.filled())),
        ))?;
        drawing(chart.draw_series(
            line.points.iter().map(|&(x, median, min, max)| ErrorBar::new_vertical(x, min, median, max, color, 8)),
        ))?;
    }
    drawing(
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .label_font((FAMILY, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .draw(),
    )?;
    Ok(())
}

/// Throughput against threads: a panel per test, a line per engine (and
/// batch length) of the selection.
fn draw_threads(report: &Report, path: &Path) -> Result<()> {
    // The selection's measurements of the tests asked for (the DXR sweep
    // adds single-thread figures that belong to the K chart).
    let selected: Vec<&Measurement> = report
        .measurements
        .iter()
        .filter(|m| report.selected.contains(&m.engine) && report.tests.contains(&m.config.test))
        .collect();
    let tests: BTreeSet<TestName> = selected.iter().map(|m| m.config.test).collect();
    // Series in report order; each keeps its color in every panel.
    let mut series: Vec<(usize, usize)> = selected
        .iter()
        .map(|m| (report.selected.iter().position(|name| *name == m.engine).unwrap_or(0), m.config.batch))
        .collect();
    series.sort_unstable();
    series.dedup();
    let max_threads = selected.iter().map(|m| m.config.threads).max().unwrap_or(1) as f64;
    let panels = tests.len().max(1);
    let columns = panels.min(3);
    let rows = panels.div_ceil(columns);
    // At least 1000 pixels wide, so the title stays legible over one panel.
    let width = (640 * columns as u32).max(1000);
    let root = BitMapBackend::new(path, (width, 560 * rows as u32)).into_drawing_area();
    drawing(root.fill(&WHITE))?;
    let title = format!("fibkit bench: {} ({} prefixes, {})", report.table_name, report.prefixes, report.mapping);
    let root = drawing(root.titled(&title, (FAMILY, font_size(&title, width, 22))))?;
    let areas = root.split_evenly((rows, columns));
    for (test, area) in tests.iter().zip(&areas) {
        let lines: Vec<Line> = series
            .iter()
            .enumerate()
            .filter_map(|(index, &(engine_index, batch))| {
                let engine = &report.selected[engine_index];
                let mut points: Vec<_> = selected
                    .iter()
                    .filter(|m| &m.engine == engine && m.config.batch == batch && m.config.test == *test)
                    .map(|m| point(m.config.threads as f64, m))
                    .collect();
                if points.is_empty() {
                    return None;
                }
                points.sort_by(|a, b| a.0.total_cmp(&b.0));
                let label = if batch == 0 { engine.clone() } else { format!("{engine} batch {batch}") };
                Some(Line { label, color: color(index), points })
            })
            .collect();
        let caption = format!("{} test, {}", test.title(), report.machine.cpu_model);
        panel(area, &caption, "threads", (0.5, max_threads + 0.5), 0.6, &lines)?;
    }
    drawing(root.present())?;
    Ok(())
}

/// Single-thread SEQ, RND and REP of the DXR family against K; `false`
/// when no DXR engine was measured.
fn draw_dxr_k(report: &Report, path: &Path) -> Result<bool> {
    let sweep: Vec<(u32, &Measurement)> = report
        .measurements
        .iter()
        .filter(|m| m.config.threads == 1 && m.config.batch == 0)
        .filter_map(|m| Some((dxr_k(&m.engine)?, m)))
        .collect();
    if sweep.is_empty() {
        return Ok(false);
    }
    let k_min = sweep.iter().map(|(k, _)| *k).min().unwrap_or(16) as f64;
    let k_max = sweep.iter().map(|(k, _)| *k).max().unwrap_or(22) as f64;
    let lines: Vec<Line> = [TestName::Seq, TestName::Rnd, TestName::Rep]
        .into_iter()
        .zip(COLORS)
        .filter_map(|(test, color)| {
            let mut points: Vec<_> =
                sweep.iter().filter(|(_, m)| m.config.test == test).map(|&(k, m)| point(f64::from(k), m)).collect();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            (!points.is_empty()).then(|| Line { label: test.title().to_string(), color, points })
        })
        .collect();
    let root = BitMapBackend::new(path, (900, 600)).into_drawing_area();
    drawing(root.fill(&WHITE))?;
    let root = drawing(root.titled("DXR, one thread: throughput against K", (FAMILY, 22)))?;
    let caption = format!("{} ({}), {}", report.table_name, report.mapping, report.machine.cpu_model);
    panel(&root, &caption, "K (bits of the direct table)", (k_min - 0.5, k_max + 0.5), 0.2, &lines)?;
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
        assert_eq!(font_size("short", 640, 22), 22);
        let long = "x".repeat(110);
        let size = font_size(&long, 640, 22);
        assert!(size < 22 && f64::from(size) * 0.55 * 110.0 <= 640.0, "{size}");
    }

    #[test]
    fn plot_names_must_be_png() {
        let message = format!("{:#}", prepare(Path::new("chart.svg")).unwrap_err());
        assert!(message.contains("must end in .png"), "{message}");
        let message = format!("{:#}", prepare(Path::new("no/such/dir/chart.png")).unwrap_err());
        assert!(message.contains("does not exist"), "{message}");
    }
}
