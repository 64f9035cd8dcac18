//! The HTML dashboard of `hotlaunch compare`: one self-contained file (no scripts, fonts or
//! images; inline SVG), readable in a 1400 px wide screenshot. Sections, in order:
//!
//! 1. what ran (scenario, device, seeds, simulated time) and how the statistics are computed;
//! 2. Pareto plot: p90 hot launch vs mean cached apps, one labelled point per row with 95%
//!    whiskers on both axes (`id="pareto"`);
//! 3. hot-launch CDFs averaged over the seeds (`id="hot-launch-cdfs"`);
//! 4. every headline figure: mean ± half-width per row, and the paired difference from the
//!    baseline (green better, red worse, grey "n.s." when its interval crosses 0);
//! 5. per-app hot launch: heat map of p90s and a table of medians and p90s;
//! 6. memory-management CPU by category; 7. energy, flash written (wear), zram use, unusable
//!    index; 8. kills by reason — bars with 95% whiskers;
//! 9. the `unified` ablation table ([`crate::compare::ablation_rows`]).
//!
//! The plots are in [`dashboard_plots`](crate::dashboard_plots).

use crate::compare::{ablation_rows, paired, Better, CompareReport, FigureStats, CPU_PREFIX, KILLS_PREFIX};
use crate::compare_text::{is_same, mean_ci, num, signed};
use crate::dashboard_plots as plots;
use crate::html::{escape, section, STYLE};
use crate::model::APP_CPU_CATEGORY;
use crate::plot::{policy_color, PlotResult};
use std::io;
use std::path::Path;

const EXTRA_STYLE: &str = "body{max-width:1200px}
figure svg{width:100%}
td.good{color:#16723a}
td.worse{color:#b3261e}
td.ns{color:#888}
td small{display:block;font-size:0.85em}
p.note{color:#555;max-width:60em}
";

/// Write the dashboard to `path` (parent directories are created; written atomically).
pub fn write_dashboard(r: &CompareReport, path: impl AsRef<Path>) -> io::Result<()> {
    let path = path.as_ref();
    crate::create_parent(path)?;
    crate::write_atomic(path, dashboard_string(r)?)
}

/// The dashboard as a string.
pub fn dashboard_string(r: &CompareReport) -> io::Result<String> {
    render(r).map_err(|e| io::Error::other(format!("rendering the dashboard: {e}")))
}

fn swatch(i: usize, label: &str) -> String {
    let c = policy_color(i);
    format!(
        "<span class=\"swatch\" style=\"background:#{:02x}{:02x}{:02x}\"></span>{}",
        c.0,
        c.1,
        c.2,
        escape(label)
    )
}

fn render(r: &CompareReport) -> PlotResult<String> {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!(
        "<title>hotlaunch compare: {}</title>\n<style>\n{STYLE}{EXTRA_STYLE}</style>\n</head>\n<body>\n",
        escape(&r.scenario)
    ));
    h.push_str(&format!("<h1>hotlaunch compare: {}</h1>\n", escape(&r.scenario)));
    h.push_str(&format!(
        "<p class=\"run\">device {} · {} rows × {} seeds ({}) · {:.1} h simulated per run · hotlaunch {}</p>\n",
        escape(&r.device),
        r.policies.len(),
        r.seeds.len(),
        r.seeds.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", "),
        r.simulated_seconds / 3600.0,
        escape(&r.tool_version)
    ));
    h.push_str(&format!(
        "<p class=\"note\">Statistics: {}. Baseline: {}.</p>\n",
        escape(&r.method),
        escape(&r.baseline)
    ));

    section(
        &mut h,
        "Pareto",
        &plots::pareto(r)?,
        "Each point is one row: mean over the seeds of the p90 hot-launch latency and of the time-weighted \
         mean number of cached apps; whiskers are 95% intervals. Lower right is better (faster hot \
         launches while keeping more apps cached).",
    );
    section(
        &mut h,
        "Hot-launch CDFs",
        &plots::cdfs(r)?,
        "Fraction of hot launches at most this latency, averaged over the seeds (each seed weighs the same).",
    );

    h.push_str("<h2 id=\"figures\">Every figure</h2>\n");
    h.push_str(&figures_table(r));

    h.push_str("<h2 id=\"per-app\">Per app</h2>\n<figure>\n");
    h.push_str(&plots::heat_map(r)?);
    h.push_str(
        "\n<figcaption>Hot-launch p90 per app and row, mean over the seeds that had a hot launch of \
         that app.</figcaption>\n</figure>\n",
    );
    h.push_str(&per_app_table(r));

    let cats = family(r, CPU_PREFIX, &[APP_CPU_CATEGORY]);
    section(
        &mut h,
        "Memory-management CPU by category",
        &plots::grouped_bars(r, &cats, "CPU time (ms)", "Memory-management CPU by category")?,
        &format!(
            "Mean CPU time per category over the seeds, with 95% whiskers; the apps' own work \
             (category \"{APP_CPU_CATEGORY}\") is in the figures table."
        ),
    );
    section(
        &mut h,
        "Energy, flash wear, zram, fragmentation",
        &plots::small_multiples(
            r,
            &[
                ("energy_j", "Energy (CPU + flash)", "energy (J)"),
                ("flash_written_mb", "Flash written (wear)", "bytes written (MiB)"),
                ("zram_peak_mb", "zram peak RAM use", "mem_used_max (MiB)"),
                (
                    "unusable_mean",
                    "Unusable free-space index, order 4",
                    "index, mean over the run (0 = all usable, 1 = none)",
                ),
            ],
            "Energy, flash wear, zram use and unusable index",
        )?,
        "Means over the seeds with 95% whiskers.",
    );
    let reasons = family(r, KILLS_PREFIX, &[]);
    section(
        &mut h,
        "Kills by reason",
        &plots::grouped_bars(r, &reasons, "kills (count)", "Kills by reason")?,
        "Process kills over the run by reason (lmkd reasons, oom; user = scripted force-stops), mean over \
         the seeds with 95% whiskers.",
    );

    h.push_str("<h2 id=\"ablation\">Ablation of unified</h2>\n");
    h.push_str(&ablation_table(r));
    h.push_str("</body>\n</html>\n");
    Ok(h)
}

/// (key, label) of the figures of a family, minus `skip`'s.
fn family(r: &CompareReport, prefix: &str, skip: &[&str]) -> Vec<(String, String)> {
    r.figures
        .iter()
        .filter_map(|f| {
            let rest = f.key.strip_prefix(prefix)?;
            (!skip.contains(&rest)).then(|| (f.key.clone(), rest.to_string()))
        })
        .collect()
}

/// Tooltip: interval and per-seed values.
fn detail(s: &FigureStats) -> String {
    let seeds: Vec<String> = s
        .per_seed
        .iter()
        .map(|v| v.map_or_else(|| "—".to_string(), |v| format!("{v}")))
        .collect();
    let ci = s.ci95.map_or_else(
        || "no interval".to_string(),
        |[a, b]| format!("95% [{}, {}]", num(a), num(b)),
    );
    format!("{ci}; per seed: {}", seeds.join(", "))
}

/// A difference cell: class and text.
fn diff_cell(s: &FigureStats, better: Better) -> (String, String) {
    let Some(d) = &s.vs_baseline else {
        return ("num".into(), String::new());
    };
    let interval = d
        .ci95
        .map_or_else(String::new, |[a, b]| format!(" [{}, {}]", signed(a), signed(b)));
    if is_same(d) {
        return ("num ns".into(), "same on every seed".into());
    }
    if !d.significant {
        return ("num ns".into(), format!("n.s. {}{interval}", signed(d.mean)));
    }
    let good = match better {
        Better::Lower => d.mean < 0.0,
        Better::Higher => d.mean > 0.0,
        Better::Neither => true,
    };
    let class = match better {
        Better::Neither => "num",
        _ if good => "num good",
        _ => "num worse",
    };
    let text = match d.percent {
        Some(p) => format!("{p:+.1}%"),
        None => signed(d.mean),
    };
    (class.into(), format!("{text}{interval}"))
}

fn figures_table(r: &CompareReport) -> String {
    let mut t = String::from("<table>\n<tr><th>figure</th>");
    for (i, p) in r.policies.iter().enumerate() {
        t.push_str(&format!("<th>{}</th>", swatch(i, &p.label)));
    }
    t.push_str("</tr>\n");
    for f in &r.figures {
        t.push_str(&format!(
            "<tr><td>{} ({})</td>",
            escape(&f.label),
            escape(&f.unit)
        ));
        for p in &r.policies {
            let Some(s) = p.figures.get(&f.key) else {
                t.push_str("<td class=\"num\">—</td>");
                continue;
            };
            let (class, diff) = diff_cell(s, f.better);
            t.push_str(&format!(
                "<td class=\"{class}\" title=\"{}\">{}<small>{}</small></td>",
                escape(&detail(s)),
                escape(&mean_ci(s)),
                escape(&diff)
            ));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    t.push_str(&format!(
        "<p class=\"note\">Each cell: mean ± half-width of the 95% interval; below it the paired difference \
         from {} with its 95% interval (green better, red worse, n.s. = the interval crosses 0). Hover a \
         cell for the per-seed values.</p>\n",
        escape(&r.baseline)
    ));
    t
}

fn per_app_table(r: &CompareReport) -> String {
    let Some(first) = r.policies.first() else {
        return String::new();
    };
    let mut t = String::from("<details><summary>Per-app hot launch p50 / p90 (ms), mean over the seeds</summary>\n<table>\n<tr><th>app</th>");
    for (i, p) in r.policies.iter().enumerate() {
        t.push_str(&format!("<th>{}</th>", swatch(i, &p.label)));
    }
    t.push_str("</tr>\n");
    for a in &first.per_app {
        t.push_str(&format!("<tr><td>{}</td>", escape(&a.app)));
        for p in &r.policies {
            let cell = p.per_app.iter().find(|b| b.app == a.app).map_or_else(
                || "—".to_string(),
                |b| match (b.hot_p50_ms.mean, b.hot_p90_ms.mean) {
                    (Some(m), Some(n)) => format!("{m:.0} / {n:.0}"),
                    _ => "—".to_string(),
                },
            );
            t.push_str(&format!("<td class=\"num\">{}</td>", escape(&cell)));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n</details>\n");
    t
}

/// The figures of the ablation table.
const ABLATION_FIGURES: &[&str] = &["hot_p90_ms", "cached_mean", "mm_cpu_ms", "energy_j"];

// ABLATION SLOT (issue 21): rows come from `compare::ablation_rows` — the `unified` row and
// every other row running the `unified` policy (a named scenario variant or a parameter
// label). Nothing here knows unified's parts: the labels say what each ablation removes.
fn ablation_table(r: &CompareReport) -> String {
    let Some((full, parts)) = ablation_rows(r) else {
        return format!(
            "<p class=\"note\">No <code>{}</code> row in this comparison. Run it (the default policy list \
             has it) with <code>--ablation</code> for one row per part switch, or with scenario variants \
             running it with other parameters.</p>\n",
            crate::compare::ABLATION_POLICY
        );
    };
    let mut t = String::from("<table>\n<tr><th>run</th>");
    for key in ABLATION_FIGURES {
        let label = r
            .figure(key)
            .map_or_else(|| key.to_string(), |f| format!("{} ({})", f.label, f.unit));
        t.push_str(&format!("<th>{}</th>", escape(&label)));
    }
    t.push_str("</tr>\n");
    for row in std::iter::once(full).chain(parts.iter().copied()) {
        t.push_str(&format!("<tr><td>{}</td>", escape(&row.label)));
        for key in ABLATION_FIGURES {
            let Some(s) = row.figures.get(*key) else {
                t.push_str("<td class=\"num\">—</td>");
                continue;
            };
            let diff = if std::ptr::eq(row, full) {
                String::new()
            } else {
                match paired(row, full, key) {
                    Some(d) if d.significant => format!("vs unified {}", signed(d.mean)),
                    Some(_) => "vs unified n.s.".to_string(),
                    None => String::new(),
                }
            };
            t.push_str(&format!(
                "<td class=\"num\">{}<small>{}</small></td>",
                escape(&mean_ci(s)),
                escape(&diff)
            ));
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</table>\n");
    if parts.is_empty() {
        t.push_str(
            "<p class=\"note\">No ablation runs: add scenario variants running <code>unified</code> with a \
             part switched off; each becomes a row here.</p>\n",
        );
    }
    t
}
