//! SVG plotting primitives shared by the run report ([`crate::html`]) and the compare dashboard
//! ([`crate::dashboard`]): the policy palette, line charts with a legend laid out above the plot,
//! log-scale ticks and axis ranges. Drawn with `plotters`' SVG backend only (see the
//! [`crate::html`] module doc for why no font file is needed).

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;

pub(crate) type PlotResult<T> = Result<T, Box<dyn Error>>;

/// Tableau 10: distinct, colour-blind-friendly-ish, by policy order.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x79, 0x70, 0x6e),
];

/// Plot width in SVG pixels (scaled down by CSS on narrow windows).
pub(crate) const WIDTH: u32 = 1000;
pub(crate) const FONT: &str = "sans-serif";

pub(crate) fn policy_color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// One line of a line chart.
pub(crate) struct Line {
    pub(crate) label: String,
    pub(crate) color: RGBColor,
    pub(crate) points: Vec<(f64, f64)>,
    pub(crate) markers: bool,
}

/// How a legend entry is drawn.
#[derive(Clone, Copy)]
pub(crate) enum Swatch {
    Line,
    Box,
}

/// A legend entry.
pub(crate) struct Key {
    pub(crate) label: String,
    pub(crate) color: RGBColor,
    pub(crate) swatch: Swatch,
}

pub(crate) fn line_keys(lines: &[Line]) -> Vec<Key> {
    lines
        .iter()
        .map(|l| Key {
            label: l.label.clone(),
            color: l.color,
            swatch: Swatch::Line,
        })
        .collect()
}

/// A padded, non-empty range containing all values (and `floor` if given).
pub(crate) fn range_of(values: impl Iterator<Item = f64>, floor: Option<f64>, pad_top: f64) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for v in values.filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if let Some(f) = floor {
        lo = lo.min(f);
        hi = hi.max(f);
    }
    if !lo.is_finite() {
        return (0.0, 1.0);
    }
    if hi <= lo {
        hi = lo + 1.0;
    }
    (lo, hi + (hi - lo) * pad_top)
}

/// Indices of at most `max` samples out of `n`, evenly strided, always keeping the last.
pub(crate) fn thin(n: usize, max: usize) -> Vec<usize> {
    if n <= max {
        return (0..n).collect();
    }
    let stride = n.div_ceil(max);
    let mut idx: Vec<usize> = (0..n).step_by(stride).collect();
    if idx.last() != Some(&(n - 1)) {
        idx.push(n - 1);
    }
    idx
}

/// Tick label: integers without decimals, others with at most 3 decimals, trailing zeros dropped.
pub(crate) fn tick(v: &f64) -> String {
    let r = v.round();
    if (v - r).abs() < 1e-9 * r.abs().max(1.0) {
        return format!("{}", r as i64);
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Approximate width of a label in SVG pixels at font size 13 (for legend layout only).
pub(crate) fn text_width(s: &str) -> i32 {
    (s.chars().count() as f64 * 6.8).ceil() as i32
}

pub(crate) const LEGEND_ROW: i32 = 22;
pub(crate) const LEGEND_LEFT: i32 = 82;

/// Lay out legend entries in rows across `width`: positions and the strip height.
pub(crate) fn legend_layout(keys: &[Key], width: i32) -> (Vec<(i32, i32)>, i32) {
    let (mut x, mut y) = (LEGEND_LEFT, LEGEND_ROW / 2 + 4);
    let mut pos = Vec::with_capacity(keys.len());
    for k in keys {
        let w = 28 + text_width(&k.label) + 22;
        if x + w > width && x > LEGEND_LEFT {
            x = LEGEND_LEFT;
            y += LEGEND_ROW;
        }
        pos.push((x, y));
        x += w;
    }
    let height = if keys.is_empty() {
        0
    } else {
        y + LEGEND_ROW / 2 + 4
    };
    (pos, height)
}

/// Draw the legend strip (above the plot, so it never hides data).
pub(crate) fn draw_legend(
    area: &DrawingArea<SVGBackend, Shift>,
    keys: &[Key],
    pos: &[(i32, i32)],
) -> PlotResult<()> {
    let style = TextStyle::from((FONT, 13))
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (k, &(x, y)) in keys.iter().zip(pos) {
        match k.swatch {
            Swatch::Line => area.draw(&PathElement::new(
                vec![(x, y), (x + 22, y)],
                k.color.stroke_width(3),
            ))?,
            Swatch::Box => area.draw(&Rectangle::new(
                [(x + 4, y - 6), (x + 18, y + 7)],
                k.color.filled(),
            ))?,
        }
        area.draw(&Text::new(k.label.clone(), (x + 28, y), style.clone()))?;
    }
    Ok(())
}

/// Render an SVG of `WIDTH` × (legend + `plot_height`): a legend strip on top, `draw` below.
pub(crate) fn svg_string(
    keys: &[Key],
    plot_height: u32,
    draw: impl FnOnce(DrawingArea<SVGBackend, Shift>) -> PlotResult<()>,
) -> PlotResult<String> {
    let (pos, legend_h) = legend_layout(keys, WIDTH as i32);
    let mut buf = String::new();
    {
        let root =
            SVGBackend::with_string(&mut buf, (WIDTH, legend_h as u32 + plot_height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (top, plot) = root.split_vertically(legend_h);
        draw_legend(&top, keys, &pos)?;
        draw(plot)?;
        root.present()?;
    }
    Ok(buf)
}

pub(crate) fn mesh_style<X, Y>(mesh: &mut plotters::chart::MeshStyle<'_, '_, X, Y, SVGBackend<'_>>)
where
    X: Ranged,
    Y: Ranged,
{
    mesh.label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
        .bold_line_style(RGBColor(0xd8, 0xd8, 0xd8));
}

/// Draw a line chart on `area`. Generic over the x coordinate so that it serves linear and log axes.
pub(crate) fn line_chart<X>(
    area: &DrawingArea<SVGBackend, Shift>,
    caption: &str,
    x: X,
    y: (f64, f64),
    desc: (&str, &str),
    lines: &[Line],
) -> PlotResult<()>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut b = ChartBuilder::on(area);
    b.margin(12).x_label_area_size(45).y_label_area_size(70);
    if !caption.is_empty() {
        b.caption(caption, (FONT, 17));
    }
    let mut chart = b.build_cartesian_2d(x, RangedCoordf64::from(y.0..y.1))?;
    let mut mesh = chart.configure_mesh();
    mesh_style(&mut mesh);
    mesh.x_desc(desc.0)
        .y_desc(desc.1)
        .x_label_formatter(&tick)
        .y_label_formatter(&tick)
        .draw()?;
    for l in lines {
        let color = l.color;
        chart.draw_series(LineSeries::new(l.points.iter().copied(), color.stroke_width(2)))?;
        if l.markers {
            chart.draw_series(l.points.iter().map(|&p| Circle::new(p, 3, color.filled())))?;
        }
    }
    Ok(())
}

/// Bold ticks at 1, 2, 5 × 10^k and light grid lines at 1..9 × 10^k within `lo..hi`.
pub(crate) fn log_ticks(lo: f64, hi: f64) -> (Vec<f64>, Vec<f64>) {
    let (mut bold, mut light) = (Vec::new(), Vec::new());
    let mut decade = 10f64.powi(lo.log10().floor() as i32);
    while decade <= hi {
        for m in 1..10 {
            let v = decade * m as f64;
            if v >= lo && v <= hi {
                if matches!(m, 1 | 2 | 5) {
                    bold.push(v);
                } else {
                    light.push(v);
                }
            }
        }
        decade *= 10.0;
    }
    (bold, light)
}
