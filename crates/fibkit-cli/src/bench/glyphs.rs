//! Text for the charts, set with `ab_glyph` directly: each glyph at its
//! pen position plus its left side bearing, advances and kerning from the
//! font, coverage blended into the bitmap.
//!
//! `plotters`' own `ab_glyph` text drops the side bearing (it draws each
//! outline from its bounding box's left edge), which spaces digits
//! unevenly ("d1 6r"): the charts draw every caption, label and legend
//! through [`draw`] instead.

use ab_glyph::{point, Font, FontRef, PxScale, ScaleFont};
use anyhow::{anyhow, Result};
use plotters::coord::Shift;
use plotters::prelude::*;

/// Where `(x, y)` lies on the text: its left end, middle or right end,
/// and vertically the middle of its capitals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Anchor {
    Left,
    Center,
    Right,
}

/// The width in pixels of `text` at `size` pixels per em.
pub(crate) fn width(font: &FontRef<'_>, size: f32, text: &str) -> f32 {
    let scaled = font.as_scaled(PxScale::from(size));
    let mut pen = 0.0;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            pen += scaled.kern(previous, id);
        }
        pen += scaled.h_advance(id);
        previous = Some(id);
    }
    pen
}

/// Draws `text` at `size` pixels per em onto `area` (pixel coordinates of
/// the area), anchored at `at`.
pub(crate) fn draw<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    font: &FontRef<'_>,
    text: &str,
    at: (i32, i32),
    size: f32,
    anchor: Anchor,
    color: RGBColor,
) -> Result<()> {
    let scaled = font.as_scaled(PxScale::from(size));
    let left = match anchor {
        Anchor::Left => at.0 as f32,
        Anchor::Center => at.0 as f32 - width(font, size, text) / 2.0,
        Anchor::Right => at.0 as f32 - width(font, size, text),
    };
    // Capitals stand about 0.73 em above the baseline in sans fonts.
    let baseline = at.1 as f32 + 0.73 * size / 2.0;
    let mut pen = left;
    let mut previous = None;
    for c in text.chars() {
        let id = scaled.glyph_id(c);
        if let Some(previous) = previous {
            pen += scaled.kern(previous, id);
        }
        let glyph = id.with_scale_and_position(PxScale::from(size), point(pen, baseline));
        if let Some(outlined) = font.outline_glyph(glyph) {
            let bounds = outlined.px_bounds();
            let mut failed = false;
            outlined.draw(|x, y, coverage| {
                let pixel = (bounds.min.x as i32 + x as i32, bounds.min.y as i32 + y as i32);
                if coverage > 0.0 && area.draw_pixel(pixel, &color.mix(f64::from(coverage.min(1.0)))).is_err() {
                    failed = true;
                }
            });
            if failed {
                return Err(anyhow!("drawing the chart: text {text:?} did not draw"));
            }
        }
        pen += scaled.h_advance(id);
        previous = Some(id);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_add_up_glyph_by_glyph() {
        let Ok(bytes) = super::super::plot::font_bytes() else {
            eprintln!("skipped: no TrueType font installed");
            return;
        };
        let font = FontRef::try_from_slice(bytes).unwrap();
        let one = width(&font, 20.0, "1");
        assert!(one > 5.0 && one < 20.0, "{one}");
        // Digits share one advance in DejaVu and Liberation: "d16r" is
        // "d", two digits and "r", whatever the digits.
        assert!((width(&font, 20.0, "d16r") - width(&font, 20.0, "d18r")).abs() < 0.01);
        assert!((width(&font, 20.0, "11") - 2.0 * one).abs() < 0.5);
    }
}
