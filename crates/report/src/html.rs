//! Self-contained HTML report: one file, no scripts, no external stylesheet, fonts or images; every
//! plot is an inline `<svg>` element. Sections, in order:
//!
//! 1. run description (scenario, device, seed, simulated time, tool version);
//! 2. summary table (the [`SUMMARY_ROWS`](crate::format::SUMMARY_ROWS), one column per policy);
//! 3. plot: hot-launch latency CDF, one line per policy (log-scaled latency axis when the range
//!    spans more than a decade);
//! 4. plot: cached apps over time, one line per policy;
//! 5. plot: CPU time by category, grouped bars (one bar per policy); the `app` category (the apps'
//!    own work) is left out of the bars and given in the caption, as it dwarfs the rest;
//! 6. plot: memory state over time (free/anon/file/swapped/zram/kernel MiB), one small multiple
//!    per policy on a shared y scale;
//! 7. plot: kills by reason, grouped bars;
//! 8. plot: unusable free-space index per buddy order at the end of the run, one line per policy;
//! 9. plot: unusable index of order 4 over time, one line per policy;
//! 10. tables: per-app launches and latencies per policy; zram `mm_stat`, PSI, GC objects visited
//!     per collection by app state, I/O-buffer allocations (latency, blocks by order), CPU by
//!     actor and vmstat counters.
//!
//! Plots are drawn with `plotters` using only its SVG backend (primitives shared with the compare
//! dashboard live in [`crate::plot`]). Without the `ttf`/`ab_glyph` features
//! plotters uses a crude text-size estimate for layout and the SVG backend emits `<text>` elements
//! (font family `sans-serif`), so the browser renders the text with whatever font it has: no font
//! file is read or embedded, and the output depends only on the report (byte-stable).
//!
//! Each policy keeps the same colour in every plot (Tableau 10 palette, by policy order).

use crate::format::{
    gc_visits_by_state, run_description, summary_grid, time_axis_unit, Cell, MEMORY_SERIES, PER_APP_COLUMNS,
    ZRAM_ROWS,
};
use crate::model::{PolicyResult, RunReport, APP_CPU_CATEGORY};
use plotters::coord::combinators::{BindKeyPoints, LogCoord, WithKeyPoints};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use std::collections::BTreeSet;
use std::io;
use std::path::Path;

use crate::plot::*;

/// Colours of [`MEMORY_SERIES`] (free, anon, file, swapped, zram, kernel).
const MEMORY_COLORS: [RGBColor; 6] = [
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// Points per line above which time series are thinned for plotting (the CSV keeps all).
const MAX_PLOT_POINTS: usize = 1500;

/// Escape text for HTML content and attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Write the HTML report to `path` (parent directories are created).
pub fn write_html(report: &RunReport, path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref();
    crate::create_parent(path)?;
    crate::write_atomic(path, to_html_string(report)?)
}

/// The HTML report as a string.
pub fn to_html_string(report: &RunReport) -> io::Result<String> {
    render(report).map_err(|e| io::Error::other(format!("rendering the HTML report: {e}")))
}

pub(crate) const STYLE: &str =
    "body{font-family:sans-serif;margin:2em auto;max-width:1060px;color:#222;padding:0 1em}
h1{margin-bottom:0.2em}
h2{margin-top:1.6em;border-bottom:1px solid #ccc;padding-bottom:0.2em}
p.run{color:#555;margin-top:0}
figure{margin:0.5em 0}
figcaption{color:#555;font-size:0.9em;margin-top:0.3em}
svg{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;font-size:0.9em;margin:0.5em 0}
th,td{padding:0.2em 0.7em;border-bottom:1px solid #e4e4e4}
th{text-align:left;background:#f4f4f4}
td.num{text-align:right;font-variant-numeric:tabular-nums}
span.swatch{display:inline-block;width:0.8em;height:0.8em;margin-right:0.4em;border-radius:2px}
td.bad{color:#b00;font-weight:bold}
details{margin:0.5em 0}
summary{cursor:pointer}
";

fn render(r: &RunReport) -> PlotResult<String> {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!(
        "<title>hotlaunch report: {}</title>\n",
        escape(&r.scenario)
    ));
    h.push_str(&format!("<style>\n{STYLE}</style>\n</head>\n<body>\n"));
    h.push_str("<h1>hotlaunch report</h1>\n");
    h.push_str(&format!("<p class=\"run\">{}</p>\n", escape(&run_description(r))));

    h.push_str("<h2>Summary</h2>\n");
    h.push_str(&summary_table(r));

    section(
        &mut h,
        "Hot-launch latency CDF",
        &cdf_plot(r)?,
        "Fraction of hot launches at most this latency.",
    );
    section(
        &mut h,
        "Cached apps over time",
        &cached_plot(r)?,
        "Apps whose process is alive in the background.",
    );
    let app_cpu: Vec<String> = r
        .policies
        .iter()
        .map(|p| {
            format!(
                "{}: {:.0} ms",
                p.policy,
                p.cpu_ms.by_category.get(APP_CPU_CATEGORY).copied().unwrap_or(0.0)
            )
        })
        .collect();
    section(
        &mut h,
        "CPU time by category",
        &cpu_plot(r)?,
        &format!(
            "Memory-management CPU time. The apps' own work (category \"{APP_CPU_CATEGORY}\") is not drawn: {}.",
            app_cpu.join(", ")
        ),
    );
    section(
        &mut h,
        "Memory state over time",
        &memory_plot(r)?,
        "free, anon and file are RAM; swapped is the uncompressed size of swapped-out data; \
         zram is the RAM zram uses; kernel is what the kernel allocates for processes (page tables, \
         kernel stacks). The system's own reserved memory is modelled as anonymous pages and is part of anon.",
    );
    section(
        &mut h,
        "Kills by reason",
        &kills_plot(r)?,
        "Process kills over the run, by kill reason.",
    );
    section(
        &mut h,
        "Unusable free-space index",
        &unusable_plot(r)?,
        "Per buddy order at the end of the run: fraction of free memory unusable for an allocation of \
         that order (0 = all usable).",
    );
    section(
        &mut h,
        "Unusable free-space index over time",
        &unusable_time_plot(r)?,
        &format!(
            "Order {UNUSABLE_ORDER_OVER_TIME} (64 KiB blocks), sampled during the run; every order is in \
             the ui_0..ui_10 columns of timeseries_<policy>.csv."
        ),
    );

    h.push_str("<h2>Per app</h2>\n");
    for (i, p) in r.policies.iter().enumerate() {
        let open = if i == 0 { " open" } else { "" };
        h.push_str(&format!(
            "<details{open}><summary>{}</summary>\n",
            policy_label(i, &p.policy)
        ));
        let header: Vec<String> = PER_APP_COLUMNS.iter().map(|c| c.label.to_string()).collect();
        let rows: Vec<Vec<Cell>> = p
            .per_app
            .iter()
            .map(|a| PER_APP_COLUMNS.iter().map(|c| (c.value)(a)).collect())
            .collect();
        h.push_str(&table(&header, &rows));
        h.push_str("</details>\n");
    }

    h.push_str("<h2>Details</h2>\n");
    h.push_str(&details_tables(r));
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

pub(crate) fn section(h: &mut String, title: &str, svg: &str, caption: &str) {
    let id: String = title
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    h.push_str(&format!("<h2 id=\"{id}\">{}</h2>\n<figure>\n", escape(title)));
    h.push_str(svg);
    if !svg.ends_with('\n') {
        h.push('\n');
    }
    h.push_str(&format!(
        "<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    ));
}

fn policy_label(i: usize, name: &str) -> String {
    let c = policy_color(i);
    format!(
        "<span class=\"swatch\" style=\"background:#{:02x}{:02x}{:02x}\"></span>{}",
        c.0,
        c.1,
        c.2,
        escape(name)
    )
}

/// A table from a header (plain text) and rows of cells; numeric cells are right-aligned.
pub(crate) fn table(header: &[String], rows: &[Vec<Cell>]) -> String {
    let mut t = String::from("<table>\n<tr>");
    for hd in header {
        t.push_str(&format!("<th>{}</th>", escape(hd)));
    }
    t.push_str("</tr>\n");
    for row in rows {
        t.push_str("<tr>");
        for c in row {
            let class = if c.is_numeric() { " class=\"num\"" } else { "" };
            t.push_str(&format!("<td{class}>{}</td>", escape(&c.display())));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}

fn summary_table(r: &RunReport) -> String {
    let grid = summary_grid(r);
    let mut t = String::from("<table>\n<tr><th></th>");
    for (i, p) in r.policies.iter().enumerate() {
        t.push_str(&format!("<th>{}</th>", policy_label(i, &p.policy)));
    }
    t.push_str("</tr>\n");
    for row in grid.iter().skip(1) {
        let bad = row[0] == "checksum mismatches";
        t.push_str(&format!("<tr><td>{}</td>", escape(&row[0])));
        for v in &row[1..] {
            let class = if bad && v != "0" { "num bad" } else { "num" };
            t.push_str(&format!("<td class=\"{class}\">{}</td>", escape(v)));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t
}

/// Tables of zram mm_stat, PSI, CPU by actor and vmstat: rows are keys, columns policies.
fn details_tables(r: &RunReport) -> String {
    let mut header = vec![String::new()];
    header.extend(r.policies.iter().map(|p| p.policy.clone()));
    // One row per label: the label, then `value(policy)` for every policy.
    let rows = |labels: &[String], value: &dyn Fn(&PolicyResult, usize) -> Cell| -> String {
        let body: Vec<Vec<Cell>> = labels
            .iter()
            .enumerate()
            .map(|(i, l)| {
                std::iter::once(Cell::Text(l.clone()))
                    .chain(r.policies.iter().map(|p| value(p, i)))
                    .collect()
            })
            .collect();
        table(&header, &body)
    };
    let union = |keys: &dyn Fn(&PolicyResult) -> Vec<String>| -> Vec<String> {
        r.policies
            .iter()
            .flat_map(keys)
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };
    let mut h = String::new();

    h.push_str("<h3>zram mm_stat (end of run)</h3>\n");
    let labels: Vec<String> = ZRAM_ROWS.iter().map(|c| c.label.to_string()).collect();
    h.push_str(&rows(&labels, &|p, i| (ZRAM_ROWS[i].value)(p)));

    h.push_str("<h3>Memory pressure (PSI, cumulative)</h3>\n");
    let labels = ["some (ms)".to_string(), "full (ms)".to_string()];
    h.push_str(&rows(&labels, &|p, i| {
        Cell::Num(if i == 0 { p.psi.some_ms } else { p.psi.full_ms }, 1)
    }));

    h.push_str("<h3>I/O buffers (ION-style allocations)</h3>\n");
    let by_order = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter()
            .map(|(o, n)| format!("order {o}: {n}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let labels = [
        "allocations".to_string(),
        "latency p50 (ms)".to_string(),
        "latency p90 (ms)".to_string(),
        "latency p99 (ms)".to_string(),
        "blocks by order".to_string(),
        "units at order 0".to_string(),
        "failed attempts by order".to_string(),
        "direct compactions (ms)".to_string(),
    ];
    h.push_str(&rows(&labels, &|p, i| {
        let io = &p.io_buffers;
        let absent = io.allocations == 0;
        match i {
            0 => Cell::Int(io.allocations),
            1 if !absent => Cell::Num(io.latency_ms.p50, 2),
            2 if !absent => Cell::Num(io.latency_ms.p90, 2),
            3 if !absent => Cell::Num(io.latency_ms.p99, 2),
            4 if !absent => Cell::Text(by_order(&io.blocks_by_order)),
            5 if !absent => Cell::Num(io.order0_share, 3),
            6 if !absent => Cell::Text(by_order(&io.failed_by_order)),
            7 if !absent => Cell::Text(format!("{} ({:.1})", io.compactions, io.compaction_ms)),
            _ => Cell::Empty,
        }
    }));

    h.push_str("<h3>GC objects visited per collection, by app state</h3>\n");
    let states = ["foreground", "transition", "background"];
    let labels: Vec<String> = states
        .iter()
        .map(|s| format!("{s}: collections / mean visits"))
        .collect();
    h.push_str(&rows(&labels, &|p, i| {
        gc_visits_by_state(p)
            .into_iter()
            .find(|(s, _, _)| *s == states[i])
            .map_or(Cell::Empty, |(_, n, mean)| Cell::Text(format!("{n} / {mean:.0}")))
    }));

    h.push_str("<h3>CPU time by actor (ms)</h3>\n");
    let actors = union(&|p| p.cpu_ms.by_actor.keys().cloned().collect());
    h.push_str(&rows(&actors, &|p, i| {
        Cell::Num(p.cpu_ms.by_actor.get(&actors[i]).copied().unwrap_or(0.0), 1)
    }));

    h.push_str("<details><summary>vmstat counters (end of run)</summary>\n");
    let keys = union(&|p| p.vmstat.keys().cloned().collect());
    h.push_str(&rows(&keys, &|p, i| {
        Cell::Int(p.vmstat.get(&keys[i]).copied().unwrap_or(0))
    }));
    h.push_str("</details>\n");
    h
}

// ---------------------------------------------------------------------------------------------
fn cdf_plot(r: &RunReport) -> PlotResult<String> {
    let lines: Vec<Line> = r
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| Line {
            label: format!("{} (n={})", p.policy, p.hot_launch_ms.count),
            color: policy_color(i),
            points: p.hot_launch_cdf.clone(),
            markers: false,
        })
        .collect();
    let (lo, hi) = range_of(lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)), None, 0.0);
    svg_string(&line_keys(&lines), 440, |plot| {
        let desc = "hot launch latency (ms)";
        if lo > 0.0 && hi / lo > 10.0 {
            let (lo, hi) = (lo * 0.9, hi * 1.1);
            let (bold, light) = log_ticks(lo, hi);
            let x: WithKeyPoints<LogCoord<f64>> = (lo..hi)
                .log_scale()
                .with_key_points(bold)
                .with_light_points(light);
            line_chart(
                &plot,
                "",
                x,
                (0.0, 1.0),
                (&format!("{desc}, log scale"), "fraction"),
                &lines,
            )
        } else {
            let pad = (hi - lo) * 0.05;
            let x = RangedCoordf64::from((lo - pad).max(0.0)..hi + pad);
            line_chart(&plot, "", x, (0.0, 1.0), (desc, "fraction"), &lines)
        }
    })
}

fn time_points(t: &[f64], v: &[f64], unit: f64) -> Vec<(f64, f64)> {
    let n = t.len().min(v.len());
    thin(n, MAX_PLOT_POINTS)
        .into_iter()
        .map(|i| (t[i] / unit, v[i]))
        .collect()
}

fn time_span(r: &RunReport) -> f64 {
    let end = r
        .policies
        .iter()
        .filter_map(|p| p.timeseries.t_s.last().copied())
        .fold(0.0, f64::max);
    end.max(r.simulated_seconds)
}

/// One line per policy over simulated time: `series(p)` gives the line's label and its values (one
/// per sample; non-finite values are left out). `y`: the y range, or `None` for 0 to the data's
/// maximum.
fn time_series_plot(
    r: &RunReport,
    series: impl Fn(&PolicyResult) -> (String, Vec<f64>),
    y: Option<(f64, f64)>,
    y_desc: &str,
    height: u32,
) -> PlotResult<String> {
    let span = time_span(r);
    let (unit_name, unit) = time_axis_unit(span);
    let lines: Vec<Line> = r
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let (label, v) = series(p);
            Line {
                label,
                color: policy_color(i),
                points: time_points(&p.timeseries.t_s, &v, unit)
                    .into_iter()
                    .filter(|pt| pt.1.is_finite())
                    .collect(),
                markers: false,
            }
        })
        .collect();
    let y = y.unwrap_or_else(|| {
        range_of(
            lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)),
            Some(0.0),
            0.08,
        )
    });
    svg_string(&line_keys(&lines), height, |plot| {
        let x = RangedCoordf64::from(0.0..(span / unit).max(1e-9));
        let x_desc = format!("simulated time ({unit_name})");
        line_chart(&plot, "", x, (0.0, y.1), (&x_desc, y_desc), &lines)
    })
}

fn cached_plot(r: &RunReport) -> PlotResult<String> {
    time_series_plot(
        r,
        |p| {
            (
                format!(
                    "{} (max {}, mean {:.1})",
                    p.policy, p.cached_apps.max, p.cached_apps.mean
                ),
                p.timeseries.cached_apps.iter().map(|&c| c as f64).collect(),
            )
        },
        None,
        "cached apps",
        360,
    )
}

/// Order whose unusable index is plotted over time (64 KiB blocks: ISMM'15 Fig. 2 shows stock
/// allocation saturating for orders ≥ 4).
const UNUSABLE_ORDER_OVER_TIME: usize = 4;

fn unusable_time_plot(r: &RunReport) -> PlotResult<String> {
    time_series_plot(
        r,
        |p| {
            let v = p.timeseries.unusable_index.iter();
            (
                p.policy.clone(),
                v.map(|row| row.get(UNUSABLE_ORDER_OVER_TIME).copied().unwrap_or(f64::NAN))
                    .collect(),
            )
        },
        Some((0.0, 1.05)),
        &format!("unusable index, order {UNUSABLE_ORDER_OVER_TIME}"),
        300,
    )
}

fn memory_plot(r: &RunReport) -> PlotResult<String> {
    let n = r.policies.len().max(1);
    let cols = n.min(2);
    let rows = n.div_ceil(cols);
    let span = time_span(r);
    let (unit_name, unit) = time_axis_unit(span);
    let ymax = range_of(
        r.policies.iter().flat_map(|p| {
            MEMORY_SERIES
                .iter()
                .flat_map(move |s| (s.values)(&p.timeseries).iter().copied())
        }),
        Some(0.0),
        0.05,
    )
    .1;
    let keys: Vec<Key> = MEMORY_SERIES
        .iter()
        .zip(MEMORY_COLORS)
        .map(|(s, color)| Key {
            label: s.label.to_string(),
            color,
            swatch: Swatch::Line,
        })
        .collect();
    svg_string(&keys, 330 * rows as u32, |plot| {
        let areas = plot.split_evenly((rows, cols));
        for (p, area) in r.policies.iter().zip(areas.iter()) {
            let lines: Vec<Line> = MEMORY_SERIES
                .iter()
                .zip(MEMORY_COLORS)
                .map(|(s, color)| Line {
                    label: s.label.to_string(),
                    color,
                    points: time_points(&p.timeseries.t_s, (s.values)(&p.timeseries), unit),
                    markers: false,
                })
                .collect();
            let x = RangedCoordf64::from(0.0..(span / unit).max(1e-9));
            let x_desc = format!("simulated time ({unit_name})");
            line_chart(area, &p.policy, x, (0.0, ymax), (&x_desc, "MiB"), &lines)?;
        }
        Ok(())
    })
}

fn unusable_plot(r: &RunReport) -> PlotResult<String> {
    let lines: Vec<Line> = r
        .policies
        .iter()
        .enumerate()
        .map(|(i, p)| Line {
            label: p.policy.clone(),
            color: policy_color(i),
            points: p
                .unusable_index
                .iter()
                .enumerate()
                .map(|(o, &v)| (o as f64, v))
                .collect(),
            markers: true,
        })
        .collect();
    let max_order = r
        .policies
        .iter()
        .map(|p| p.unusable_index.len())
        .max()
        .unwrap_or(0)
        .max(11)
        - 1;
    svg_string(&line_keys(&lines), 360, |plot| {
        let x = RangedCoordf64::from(-0.3..max_order as f64 + 0.3);
        line_chart(&plot, "", x, (0.0, 1.05), ("order", "unusable index"), &lines)
    })
}

/// Grouped bars: one group per category, one bar per policy (`series`: policy name, value per
/// category).
fn grouped_bars(categories: &[String], series: &[(String, Vec<f64>)], y_desc: &str) -> PlotResult<String> {
    let n = categories.len().max(1);
    let k = series.len().max(1);
    let (_, ymax) = range_of(series.iter().flat_map(|s| s.1.iter().copied()), Some(0.0), 0.08);
    let keys: Vec<Key> = series
        .iter()
        .enumerate()
        .map(|(i, s)| Key {
            label: s.0.clone(),
            color: policy_color(i),
            swatch: Swatch::Box,
        })
        .collect();
    svg_string(&keys, 360, |plot| {
        let mut chart = ChartBuilder::on(&plot)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..n as f64 - 0.5, 0.0..ymax)?;
        // Labels only at the group centres.
        let fmt = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 {
                categories.get(i as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        };
        let mut mesh = chart.configure_mesh();
        mesh_style(&mut mesh);
        mesh.disable_x_mesh()
            .x_label_formatter(&fmt)
            .y_label_formatter(&tick)
            .y_desc(y_desc)
            .draw()?;
        let group = 0.8;
        let bw = group / k as f64;
        for (pi, (_, vals)) in series.iter().enumerate() {
            let color = policy_color(pi);
            chart.draw_series(vals.iter().enumerate().map(move |(ci, &v)| {
                let x0 = ci as f64 - group / 2.0 + pi as f64 * bw;
                Rectangle::new([(x0 + bw * 0.06, 0.0), (x0 + bw * 0.94, v)], color.filled())
            }))?;
        }
        Ok(())
    })
}

/// Union of the keys of a per-policy map, sorted, and each policy's value per key (0 if absent).
fn keyed_series(
    r: &RunReport,
    map: impl Fn(&PolicyResult) -> Vec<(String, f64)>,
    skip: &[&str],
) -> (Vec<String>, Vec<(String, Vec<f64>)>) {
    let keys: Vec<String> = r
        .policies
        .iter()
        .flat_map(|p| map(p).into_iter().map(|(k, _)| k))
        .filter(|k| !skip.contains(&k.as_str()))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let series = r
        .policies
        .iter()
        .map(|p| {
            let m = map(p);
            let vals = keys
                .iter()
                .map(|k| m.iter().find(|(mk, _)| mk == k).map_or(0.0, |(_, v)| *v))
                .collect();
            (p.policy.clone(), vals)
        })
        .collect();
    (keys, series)
}

fn cpu_plot(r: &RunReport) -> PlotResult<String> {
    let (cats, series) = keyed_series(
        r,
        |p| {
            p.cpu_ms
                .by_category
                .iter()
                .map(|(k, v)| (k.clone(), *v))
                .collect()
        },
        &[APP_CPU_CATEGORY],
    );
    grouped_bars(&cats, &series, "CPU time (ms)")
}

fn kills_plot(r: &RunReport) -> PlotResult<String> {
    let (reasons, series) = keyed_series(
        r,
        |p| {
            p.kills
                .by_reason
                .iter()
                .map(|(k, v)| (k.clone(), *v as f64))
                .collect()
        },
        &[],
    );
    grouped_bars(&reasons, &series, "kills")
}
