//! The plots of the comparison dashboard ([`dashboard`](crate::dashboard)), drawn with plotters'
//! SVG backend like the run report's ([`html`](crate::html), whose legend, palette and line-chart
//! helpers they share; no font file is read). Every plot carries an SVG `<title>` naming it, every
//! axis a label with its unit, and every mean its 95% interval as whiskers.
//!
//! - [`pareto`]: p90 hot launch vs mean cached apps, one labelled point per row, whiskers on both
//!   axes;
//! - [`cdfs`]: seed-averaged hot-launch CDFs, one line per row;
//! - [`heat_map`]: per-app p90 hot launch, coloured by its ratio to the baseline's for that app;
//! - [`grouped_bars`]: one group per key (CPU category, kill reason), one bar per row;
//! - [`small_multiples`]: one horizontal bar chart per figure, one bar per row.

use crate::compare::{CompareReport, FigureStats, PolicyRow};
use crate::plot::{
    line_chart, line_keys, log_ticks, mesh_style, policy_color, range_of, svg_string, tick, Key, Line,
    PlotResult, Swatch, FONT, WIDTH,
};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Put `<title>` (the plot's accessible name, shown as a tooltip and found by the screenshot
/// test) right after the opening `<svg …>` tag.
pub fn titled(svg: String, title: &str) -> String {
    match svg
        .find("<svg")
        .and_then(|i| svg[i..].find('>').map(|j| i + j + 1))
    {
        Some(at) => format!(
            "{}\n<title>{}</title>{}",
            &svg[..at],
            crate::html::escape(title),
            &svg[at..]
        ),
        None => svg,
    }
}

/// Mean, interval low, interval high.
type Mci = (f64, f64, f64);

/// Mean and interval of a figure (the interval collapses to the mean without one).
fn mci(s: Option<&FigureStats>) -> Option<Mci> {
    let s = s?;
    let m = s.mean?;
    let [lo, hi] = s.ci95.unwrap_or([m, m]);
    Some((m, lo, hi))
}

fn keys(r: &CompareReport, swatch: Swatch) -> Vec<Key> {
    r.policies
        .iter()
        .enumerate()
        .map(|(i, p)| Key {
            label: p.label.clone(),
            color: policy_color(i),
            swatch,
        })
        .collect()
}

/// The trade-off plot: x mean cached apps, y p90 hot launch; lower right is better.
pub fn pareto(r: &CompareReport) -> PlotResult<String> {
    let pts: Vec<(usize, &PolicyRow, Mci, Mci)> = r
        .policies
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            Some((
                i,
                p,
                mci(p.figures.get("cached_mean"))?,
                mci(p.figures.get("hot_p90_ms"))?,
            ))
        })
        .collect();
    let pad = |lo: f64, hi: f64| {
        let w = (hi - lo).max(hi.abs() * 0.05).max(0.1);
        ((lo - w * 0.12).max(0.0), hi + w * 0.12)
    };
    let (x0, x1) = range_of(pts.iter().flat_map(|p| [p.2 .1, p.2 .2]), None, 0.0);
    let (y0, y1) = range_of(pts.iter().flat_map(|p| [p.3 .1, p.3 .2]), None, 0.0);
    let (x0, x1) = pad(x0, x1);
    let (y0, y1) = pad(y0, y1);
    let svg = svg_string(&keys(r, Swatch::Box), 520, |plot| {
        let mut chart = ChartBuilder::on(&plot)
            .margin(16)
            .x_label_area_size(50)
            .y_label_area_size(75)
            .build_cartesian_2d(x0..x1, y0..y1)?;
        let mut mesh = chart.configure_mesh();
        mesh_style(&mut mesh);
        mesh.x_desc("mean cached apps (apps; higher is better)")
            .y_desc("hot launch p90 (ms; lower is better)")
            .x_label_formatter(&tick)
            .y_label_formatter(&tick)
            .draw()?;
        let label_style = TextStyle::from((FONT, 14))
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        for &(i, _, (x, xlo, xhi), (y, ylo, yhi)) in &pts {
            let c = policy_color(i);
            chart.draw_series([
                PathElement::new(vec![(xlo, y), (xhi, y)], c.stroke_width(2)),
                PathElement::new(vec![(x, ylo), (x, yhi)], c.stroke_width(2)),
            ])?;
        }
        // Labels right of their points, pushed apart vertically (top to bottom, at least one line
        // apart) so that clustered points stay readable; a label moved off its point gets a leader.
        let mut order: Vec<(i32, i32, usize)> = pts
            .iter()
            .enumerate()
            .map(|(k, p)| {
                let (px, py) = chart.backend_coord(&(p.2 .0, p.3 .0));
                (py, px, k)
            })
            .collect();
        order.sort();
        let mut last = i32::MIN / 2;
        for (py, _, k) in order {
            let (i, p, (x, ..), (y, ..)) = pts[k];
            let ly = (py - 12).max(last + 17);
            last = ly;
            let dy = ly - py;
            // A leader from the point to a label moved off it (none when the label is beside it).
            let leader = if dy.abs() > 14 {
                vec![(4, 0), (14, dy)]
            } else {
                vec![(0, 0), (0, 0)]
            };
            chart.draw_series(std::iter::once(
                EmptyElement::at((x, y))
                    + PathElement::new(leader, BLACK.stroke_width(1))
                    + Circle::new((0, 0), 6, policy_color(i).filled())
                    + Text::new(p.label.clone(), (16, dy), label_style.clone()),
            ))?;
        }
        Ok(())
    })?;
    Ok(titled(svg, "Pareto: hot launch p90 vs mean cached apps"))
}

/// Seed-averaged hot-launch CDFs, log latency axis when the range spans more than a decade.
pub fn cdfs(r: &CompareReport) -> PlotResult<String> {
    let lines: Vec<Line> = r
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| Line {
            label: p.label.clone(),
            color: policy_color(i),
            points: p.hot_launch_cdf.clone(),
            markers: false,
        })
        .collect();
    let (lo, hi) = range_of(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)), None, 0.0);
    let desc = "hot launch latency (ms)";
    let svg = svg_string(&line_keys(&lines), 460, |plot| {
        if lo > 0.0 && hi / lo > 10.0 {
            let (lo, hi) = (lo * 0.9, hi * 1.1);
            let (bold, light) = log_ticks(lo, hi);
            let x: WithKeyPoints<LogCoord<f64>> = (lo..hi)
                .log_scale()
                .with_key_points(bold)
                .with_light_points(light);
            let d = format!("{desc}, log scale");
            line_chart(&plot, "", x, (0.0, 1.0), (&d, "fraction of hot launches"), &lines)
        } else {
            let pad = (hi - lo) * 0.05;
            let x = RangedCoordf64::from((lo - pad).max(0.0)..hi + pad);
            line_chart(
                &plot,
                "",
                x,
                (0.0, 1.0),
                (desc, "fraction of hot launches"),
                &lines,
            )
        }
    })?;
    Ok(titled(svg, "Hot-launch latency CDFs"))
}

/// Diverging colour for a ratio: green below 1 (faster), white at 1, red above (slower),
/// saturated at 2× either way.
fn ratio_color(ratio: f64) -> RGBColor {
    let t = ratio.log2().clamp(-1.0, 1.0);
    let mix = |a: u8, b: u8, f: f64| (a as f64 + (b as f64 - a as f64) * f).round() as u8;
    let (r, g, b) = if t < 0.0 {
        (0x1a, 0x98, 0x50) // green
    } else {
        (0xd7, 0x30, 0x27) // red
    };
    let f = t.abs();
    RGBColor(mix(0xff, r, f), mix(0xff, g, f), mix(0xff, b, f))
}

/// Per-app p90 hot launch (ms): rows apps, columns rows of the comparison; the colour is the
/// ratio to the baseline row's p90 for that app (to the median over rows without a baseline).
pub fn heat_map(r: &CompareReport) -> PlotResult<String> {
    let apps: Vec<&str> = r
        .policies
        .first()
        .map(|p| p.per_app.iter().map(|a| a.app.as_str()).collect())
        .unwrap_or_default();
    let value = |p: &PolicyRow, app: &str| {
        p.per_app
            .iter()
            .find(|a| a.app == app)
            .and_then(|a| a.hot_p90_ms.mean)
    };
    let reference = |app: &str| -> Option<f64> {
        if let Some(b) = r.row(&r.baseline) {
            return value(b, app);
        }
        let mut v: Vec<f64> = r.policies.iter().filter_map(|p| value(p, app)).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let label_w = apps.iter().map(|a| a.chars().count()).max().unwrap_or(4) as i32 * 8 + 16;
    let head_h = 46;
    let row_h = 24;
    let scale_h = 56;
    let ncol = r.policies.len().max(1) as i32;
    let col_w = ((WIDTH as i32 - label_w - 10) / ncol).max(40);
    let height = head_h + row_h * apps.len() as i32 + scale_h;
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height as u32)).into_drawing_area();
        root.fill(&WHITE)?;
        let center = |size| {
            TextStyle::from((FONT, size))
                .color(&BLACK)
                .pos(Pos::new(HPos::Center, VPos::Center))
        };
        let left = TextStyle::from((FONT, 13))
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center));
        root.draw(&Text::new(
            "app (rows) × policy (columns): hot launch p90 (ms), mean over seeds",
            (label_w, 12),
            left.clone(),
        ))?;
        for (j, p) in r.policies.iter().enumerate() {
            let x = label_w + j as i32 * col_w + col_w / 2;
            let mut name = p.label.clone();
            let max_chars = (col_w / 7).max(4) as usize;
            if name.chars().count() > max_chars {
                name = name.chars().take(max_chars - 1).collect::<String>() + "…";
            }
            root.draw(&Text::new(name, (x, head_h - 12), center(13)))?;
        }
        for (i, app) in apps.iter().enumerate() {
            let y = head_h + i as i32 * row_h;
            root.draw(&Text::new(app.to_string(), (6, y + row_h / 2), left.clone()))?;
            let refv = reference(app);
            for (j, p) in r.policies.iter().enumerate() {
                let x = label_w + j as i32 * col_w;
                let v = value(p, app);
                let fill = match (v, refv) {
                    (Some(v), Some(b)) if b > 0.0 => ratio_color(v / b),
                    (Some(_), _) => WHITE,
                    (None, _) => RGBColor(0xee, 0xee, 0xee),
                };
                root.draw(&Rectangle::new(
                    [(x + 1, y + 1), (x + col_w - 1, y + row_h - 1)],
                    fill.filled(),
                ))?;
                let text = v.map_or_else(|| "—".to_string(), |v| format!("{v:.0}"));
                root.draw(&Text::new(text, (x + col_w / 2, y + row_h / 2), center(12)))?;
            }
        }
        // Colour scale.
        let y = head_h + row_h * apps.len() as i32 + 14;
        let steps = [0.5, 0.71, 1.0, 1.41, 2.0];
        for (k, s) in steps.iter().enumerate() {
            let x = label_w + k as i32 * 90;
            root.draw(&Rectangle::new(
                [(x, y), (x + 40, y + 16)],
                ratio_color(*s).filled(),
            ))?;
            root.draw(&Rectangle::new([(x, y), (x + 40, y + 16)], BLACK.stroke_width(1)))?;
            root.draw(&Text::new(format!("{s}×"), (x + 46, y + 8), left.clone()))?;
        }
        let basis = if r.row(&r.baseline).is_some() {
            format!(
                "colour: p90 / {}'s p90 for the same app (grey: no hot launch)",
                r.baseline
            )
        } else {
            "colour: p90 / median p90 over the rows for the same app (grey: no hot launch)".to_string()
        };
        root.draw(&Text::new(basis, (label_w, y + 32), left))?;
        root.present()?;
    }
    Ok(titled(buf, "Heat map: per-app hot launch p90"))
}

/// Grouped vertical bars with whiskers: one group per category, one bar per row; `value(row,
/// category)` gives the figure's statistics.
pub fn grouped_bars(
    r: &CompareReport,
    categories: &[(String, String)],
    y_desc: &str,
    title: &str,
) -> PlotResult<String> {
    let n = categories.len().max(1);
    let k = r.policies.len().max(1);
    let stats: Vec<Vec<Option<Mci>>> = r
        .policies
        .iter()
        .map(|p| {
            categories
                .iter()
                .map(|(key, _)| mci(p.figures.get(key)))
                .collect()
        })
        .collect();
    let (_, ymax) = range_of(
        stats.iter().flatten().flatten().map(|s| s.2.max(s.0)),
        Some(0.0),
        0.08,
    );
    let svg = svg_string(&keys(r, Swatch::Box), 380, |plot| {
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(50)
            .y_label_area_size(75)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..ymax)?;
        let fmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                categories
                    .get(i as usize)
                    .map(|c| c.1.clone())
                    .unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh_style(&mut mesh);
        mesh.disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&fmt)
            .y_label_formatter(&tick)
            .y_desc(y_desc)
            .draw()?;
        let group = 0.84;
        let bw = group / k as f64;
        for (pi, row) in stats.iter().enumerate() {
            let color = policy_color(pi);
            for (ci, s) in row.iter().enumerate() {
                let Some((m, lo, hi)) = *s else { continue };
                let x0 = ci as f64 - group / 2.0 + pi as f64 * bw;
                let xc = x0 + bw / 2.0;
                chart.draw_series([Rectangle::new(
                    [(x0 + bw * 0.08, 0.0), (x0 + bw * 0.92, m)],
                    color.filled(),
                )])?;
                if hi > lo {
                    chart.draw_series([
                        PathElement::new(vec![(xc, lo.max(0.0)), (xc, hi)], BLACK.stroke_width(1)),
                        PathElement::new(
                            vec![(xc - bw * 0.25, hi), (xc + bw * 0.25, hi)],
                            BLACK.stroke_width(1),
                        ),
                        PathElement::new(
                            vec![(xc - bw * 0.25, lo.max(0.0)), (xc + bw * 0.25, lo.max(0.0))],
                            BLACK.stroke_width(1),
                        ),
                    ])?;
                }
            }
        }
        Ok(())
    })?;
    Ok(titled(svg, title))
}

/// Horizontal bars (one per row, with whiskers), one panel per figure, two panels per line.
/// `figures`: (figure key, panel title, x-axis label with unit).
pub fn small_multiples(r: &CompareReport, figures: &[(&str, &str, &str)], title: &str) -> PlotResult<String> {
    let n = r.policies.len().max(1);
    let cols = 2usize;
    let rows = figures.len().div_ceil(cols).max(1);
    let panel_h = (60 + 26 * n as u32).max(220);
    let label_w = r
        .policies
        .iter()
        .map(|p| p.label.chars().count())
        .max()
        .unwrap_or(4) as u32
        * 8
        + 14;
    let svg = svg_string(&[], panel_h * rows as u32, |plot| {
        let areas = plot.split_evenly((rows, cols));
        for (&(key, caption, x_desc), area) in figures.iter().zip(areas.iter()) {
            let stats: Vec<Option<Mci>> = r.policies.iter().map(|p| mci(p.figures.get(key))).collect();
            let (_, xmax) = range_of(stats.iter().flatten().map(|s| s.2.max(s.0)), Some(0.0), 0.08);
            let mut chart = ChartBuilder::on(area)
                .caption(caption, (FONT, 16))
                .margin(10)
                .x_label_area_size(44)
                .y_label_area_size(label_w)
                .build_cartesian_2d(0.0..xmax, -0.5..n as f64 - 0.5)?;
            // Row i at y = n-1-i: the first row on top, as in the legend and the tables.
            let fmt = |y: &f64| {
                let i = y.round();
                if (y - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    r.policies[n - 1 - i as usize].label.clone()
                } else {
                    String::new()
                }
            };
            let mut mesh = chart.configure_mesh();
            mesh_style(&mut mesh);
            mesh.disable_y_mesh()
                .y_labels(n * 2 + 1)
                .y_label_formatter(&fmt)
                .x_label_formatter(&tick)
                .x_labels(6)
                .x_desc(x_desc)
                .draw()?;
            for (i, s) in stats.iter().enumerate() {
                let Some((m, lo, hi)) = *s else { continue };
                let y = (n - 1 - i) as f64;
                chart.draw_series([Rectangle::new(
                    [(0.0, y - 0.34), (m, y + 0.34)],
                    policy_color(i).filled(),
                )])?;
                if hi > lo {
                    chart.draw_series([
                        PathElement::new(vec![(lo.max(0.0), y), (hi, y)], BLACK.stroke_width(1)),
                        PathElement::new(vec![(hi, y - 0.18), (hi, y + 0.18)], BLACK.stroke_width(1)),
                        PathElement::new(
                            vec![(lo.max(0.0), y - 0.18), (lo.max(0.0), y + 0.18)],
                            BLACK.stroke_width(1),
                        ),
                    ])?;
                }
            }
        }
        Ok(())
    })?;
    Ok(titled(svg, title))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_goes_inside_the_svg_element() {
        let s = titled("<svg width=\"1\" height=\"2\">\n<rect/></svg>".into(), "a < b");
        assert!(
            s.starts_with("<svg width=\"1\" height=\"2\">\n<title>a &lt; b</title>"),
            "{s}"
        );
        assert!(s.ends_with("<rect/></svg>"));
    }

    #[test]
    fn ratio_colours_diverge_from_white() {
        assert_eq!(ratio_color(1.0), WHITE);
        let fast = ratio_color(0.5);
        let slow = ratio_color(2.0);
        assert!(fast.1 > fast.0, "green: {fast:?}");
        assert!(slow.0 > slow.1, "red: {slow:?}");
        assert_eq!(ratio_color(10.0), slow);
    }
}
