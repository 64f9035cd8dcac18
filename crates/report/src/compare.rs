//! The results of `hotlaunch compare`: every policy run on the same workload with several seeds,
//! each headline figure as a mean with its 95% interval, its per-seed values and its paired
//! difference from the baseline policy (`android`). See [`stats`](crate::stats) for the method.
//!
//! - [`RunSample`]: what one run (one policy, one seed) contributes, taken from its
//!   [`PolicyResult`] by [`RunSample::of`];
//! - [`build`]: the [`CompareReport`] from the runs of every row;
//! - [`FIGURES`]: the headline figures, in display order, with their units and which direction is
//!   better; two families add one figure per key seen in any run: `kills.<reason>` and
//!   `cpu.<category>`;
//! - [`ablation_rows`]: the rows the dashboard's ablation table is made of (`unified` variants).
//!
//! A figure a run did not measure (no hot launch: no hot-launch percentile) is absent (`null`)
//! for that seed, never 0; the statistics are over the seeds that have it (`n`).

use crate::model::{round3, PolicyResult, APP_CPU_CATEGORY, BYTES_PER_MB};
use crate::stats::{paired_difference, Estimate};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// Version of the compare JSON layout (independent of the run report's).
pub const COMPARE_SCHEMA_VERSION: u32 = 1;

/// The policy the dashboard's ablation table is about (issue 21); its rows come from runs of
/// `unified` under other labels (scenario variants or non-default parameters, e.g.
/// `unified(fleet=false)`), each compared with the run labelled exactly `unified`.
pub const ABLATION_POLICY: &str = "unified";

/// How the statistics are computed, recorded in every report.
pub const METHOD: &str = "mean over seeds with a Student t 95% interval (mean ± t(0.975, n-1)·s/√n); \
differences vs the baseline are paired by seed (paired t-test: significant at the two-sided 5% level \
when the 95% interval of the per-seed differences excludes 0)";

/// Which direction of a figure is better (for arrows and colours only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
    /// Neither (a quantity to read, e.g. data stored in zram).
    Neither,
}

/// A headline figure: machine key, label, unit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureInfo {
    pub key: String,
    pub label: String,
    pub unit: String,
    pub better: Better,
}

/// A fixed headline figure and how to read it from a run.
pub struct FigureDef {
    pub key: &'static str,
    pub label: &'static str,
    pub unit: &'static str,
    pub better: Better,
    pub value: fn(&PolicyResult) -> Option<f64>,
}

fn latency(count: u64, v: f64) -> Option<f64> {
    (count > 0).then_some(v)
}

/// Mean over the run's samples of the unusable index of `order` (absent without samples).
fn unusable_mean(p: &PolicyResult, order: usize) -> Option<f64> {
    let v: Vec<f64> = p
        .timeseries
        .unusable_index
        .iter()
        .filter_map(|row| row.get(order).copied())
        .collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Order whose unusable index is a headline figure (64 KiB blocks; ISMM'15 Fig. 2 shows stock
/// allocation saturating for orders ≥ 4).
pub const UNUSABLE_ORDER: usize = 4;

/// The fixed headline figures, in display order. `kills.<reason>` follow `kills` and
/// `cpu.<category>` follow `mm_cpu_ms`.
pub const FIGURES: &[FigureDef] = &[
    FigureDef {
        key: "hot_p50_ms",
        label: "hot launch p50",
        unit: "ms",
        better: Better::Lower,
        value: |p| latency(p.hot_launch_ms.count, p.hot_launch_ms.p50),
    },
    FigureDef {
        key: "hot_p90_ms",
        label: "hot launch p90",
        unit: "ms",
        better: Better::Lower,
        value: |p| latency(p.hot_launch_ms.count, p.hot_launch_ms.p90),
    },
    FigureDef {
        key: "hot_mean_ms",
        label: "hot launch mean",
        unit: "ms",
        better: Better::Lower,
        value: |p| latency(p.hot_launch_ms.count, p.hot_launch_ms.mean),
    },
    FigureDef {
        key: "cold_p50_ms",
        label: "cold launch p50",
        unit: "ms",
        better: Better::Lower,
        value: |p| latency(p.cold_launch_ms.count, p.cold_launch_ms.p50),
    },
    FigureDef {
        key: "hot_launches",
        label: "hot launches",
        unit: "count",
        better: Better::Higher,
        value: |p| Some(p.launches.hot as f64),
    },
    FigureDef {
        key: "cold_launches",
        label: "cold launches",
        unit: "count",
        better: Better::Lower,
        value: |p| Some(p.launches.cold as f64),
    },
    FigureDef {
        key: "cached_mean",
        label: "mean cached apps",
        unit: "apps",
        better: Better::Higher,
        value: |p| Some(p.cached_apps.mean),
    },
    FigureDef {
        key: "cached_max",
        label: "peak cached apps",
        unit: "apps",
        better: Better::Higher,
        value: |p| Some(p.cached_apps.max as f64),
    },
    FigureDef {
        key: "kills",
        label: "kills (system)",
        unit: "count",
        better: Better::Lower,
        value: |p| Some(p.kills.total as f64),
    },
    FigureDef {
        key: "mm_cpu_ms",
        label: "memory-management CPU",
        unit: "ms",
        better: Better::Lower,
        value: |p| Some(p.cpu_ms.mm_total()),
    },
    FigureDef {
        key: "energy_j",
        label: "energy (CPU + flash)",
        unit: "J",
        better: Better::Lower,
        value: |p| Some(p.energy_j),
    },
    FigureDef {
        key: "flash_written_mb",
        label: "flash written (wear)",
        unit: "MiB",
        better: Better::Lower,
        value: |p| Some(p.flash.bytes_written as f64 / BYTES_PER_MB),
    },
    FigureDef {
        key: "flash_read_mb",
        label: "flash read",
        unit: "MiB",
        better: Better::Lower,
        value: |p| Some(p.flash.bytes_read as f64 / BYTES_PER_MB),
    },
    FigureDef {
        key: "zram_peak_mb",
        label: "zram peak RAM use (mem_used_max)",
        unit: "MiB",
        better: Better::Lower,
        value: |p| Some(p.zram.mem_used_max as f64 / BYTES_PER_MB),
    },
    FigureDef {
        key: "zram_stored_mb",
        label: "zram data stored at end (uncompressed)",
        unit: "MiB",
        better: Better::Neither,
        value: |p| Some(p.zram.orig_data_size as f64 / BYTES_PER_MB),
    },
    FigureDef {
        key: "unusable_end",
        label: "unusable index, order 4, end of run",
        unit: "0..1",
        better: Better::Lower,
        value: |p| p.unusable_index.get(UNUSABLE_ORDER).copied(),
    },
    FigureDef {
        key: "unusable_mean",
        label: "unusable index, order 4, mean over run",
        unit: "0..1",
        better: Better::Lower,
        value: |p| unusable_mean(p, UNUSABLE_ORDER),
    },
    FigureDef {
        key: "gc_cpu_ms",
        label: "GC CPU",
        unit: "ms",
        better: Better::Lower,
        value: |p| Some(p.gc.cpu_ms),
    },
    FigureDef {
        key: "gc_collections",
        label: "GC collections",
        unit: "count",
        better: Better::Lower,
        value: |p| Some(p.gc.collections as f64),
    },
    FigureDef {
        key: "gc_fault_stall_ms",
        label: "GC fault stalls",
        unit: "ms",
        better: Better::Lower,
        value: |p| Some(p.gc.fault_stall_ms),
    },
    FigureDef {
        key: "psi_some_ms",
        label: "PSI memory some (cumulative)",
        unit: "ms",
        better: Better::Lower,
        value: |p| Some(p.psi.some_ms),
    },
];

/// Prefix of the per-reason kill figures (`kills.lmkd_low_mem`...), placed after `kills`.
pub const KILLS_PREFIX: &str = "kills.";
/// Prefix of the per-category CPU figures (`cpu.reclaim`...), placed after `mm_cpu_ms`.
pub const CPU_PREFIX: &str = "cpu.";

/// One app's hot-launch figures in one run (absent without hot launches).
#[derive(Clone, Debug, PartialEq)]
pub struct AppSample {
    pub app: String,
    pub hot_p50_ms: Option<f64>,
    pub hot_p90_ms: Option<f64>,
    pub hot_launches: u64,
}

/// What one run (one policy, one seed) contributes to the comparison.
#[derive(Clone, Debug, PartialEq)]
pub struct RunSample {
    /// Figure key → value; a fixed figure the run did not measure is absent. Family keys
    /// (`kills.*`, `cpu.*`) are present only for what occurred (absent counts as 0).
    pub figures: BTreeMap<String, f64>,
    pub hot_launch_cdf: Vec<(f64, f64)>,
    pub per_app: Vec<AppSample>,
}

impl RunSample {
    /// The sample of one run's result.
    pub fn of(p: &PolicyResult) -> RunSample {
        let mut figures = BTreeMap::new();
        for f in FIGURES {
            if let Some(v) = (f.value)(p).filter(|v| v.is_finite()) {
                figures.insert(f.key.to_string(), v);
            }
        }
        for (reason, n) in &p.kills.by_reason {
            figures.insert(format!("{KILLS_PREFIX}{reason}"), *n as f64);
        }
        for (cat, ms) in &p.cpu_ms.by_category {
            figures.insert(format!("{CPU_PREFIX}{cat}"), *ms);
        }
        let per_app = p
            .per_app
            .iter()
            .map(|a| AppSample {
                app: a.app.clone(),
                hot_p50_ms: latency(a.hot_launch_ms.count, a.hot_launch_ms.p50),
                hot_p90_ms: latency(a.hot_launch_ms.count, a.hot_launch_ms.p90),
                hot_launches: a.launches_hot,
            })
            .collect();
        RunSample {
            figures,
            hot_launch_cdf: p.hot_launch_cdf.clone(),
            per_app,
        }
    }
}

/// One figure of one row: per-seed values, their mean and interval, the paired difference from
/// the baseline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FigureStats {
    /// Seeds with a value.
    pub n: usize,
    /// Absent when no seed has a value.
    pub mean: Option<f64>,
    /// Student t 95% interval; absent with fewer than two values.
    pub ci95: Option<[f64; 2]>,
    /// One value per seed, in the order of [`CompareReport::seeds`] (`null`: not measured).
    pub per_seed: Vec<Option<f64>>,
    /// Paired difference from the baseline row (absent for the baseline itself, or when no seed
    /// has both values).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vs_baseline: Option<Difference>,
}

/// This row minus the baseline, paired by seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Difference {
    /// Seeds where both have a value.
    pub n: usize,
    pub mean: f64,
    pub ci95: Option<[f64; 2]>,
    /// `mean` as a percentage of the baseline's mean (absent when that is 0).
    pub percent: Option<f64>,
    /// The interval excludes 0 (paired t-test, two-sided 5%).
    pub significant: bool,
}

impl FigureStats {
    fn of(per_seed: Vec<Option<f64>>) -> FigureStats {
        let per_seed: Vec<Option<f64>> = per_seed.into_iter().map(|v| v.map(round3)).collect();
        let present: Vec<f64> = per_seed.iter().flatten().copied().collect();
        let e = Estimate::of(&present).map(Estimate::rounded);
        FigureStats {
            n: present.len(),
            mean: e.map(|e| e.mean),
            ci95: e.and_then(|e| e.ci95),
            per_seed,
            vs_baseline: None,
        }
    }
}

/// One app's hot-launch medians and p90s over the seeds.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppRow {
    pub app: String,
    pub hot_p50_ms: FigureStats,
    pub hot_p90_ms: FigureStats,
    pub hot_launches: FigureStats,
}

/// One row of the comparison: a policy (or a scenario variant) over every seed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicyRow {
    /// The run's label: the policy's name with its non-default parameters, or a variant's name.
    pub label: String,
    /// The policy it runs.
    pub policy: String,
    /// A variant of the scenario (its own policy, swap and parameters) rather than a policy run
    /// on the scenario as written.
    #[serde(default)]
    pub variant: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Figure key → statistics.
    pub figures: BTreeMap<String, FigureStats>,
    /// Hot-launch CDF averaged over the seeds (each seed weighs the same), on a grid shared by
    /// every row: `(ms, fraction ≤ ms)`.
    pub hot_launch_cdf: Vec<(f64, f64)>,
    pub per_app: Vec<AppRow>,
}

impl PolicyRow {
    /// Mean of a figure (absent if not measured).
    pub fn mean(&self, key: &str) -> Option<f64> {
        self.figures.get(key).and_then(|f| f.mean)
    }
}

/// The whole comparison (`compare.json`, `--json FILE`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareReport {
    pub schema_version: u32,
    /// Always `"hotlaunch compare"`.
    pub tool: String,
    pub tool_version: String,
    pub scenario: String,
    pub device: String,
    /// The seeds, in order; seed 0 is the scenario's (so the first seed repeats `hotlaunch run`).
    pub seeds: Vec<u64>,
    /// Simulated time of one run.
    pub simulated_seconds: f64,
    /// The row every difference is taken against.
    pub baseline: String,
    /// How the intervals and differences are computed ([`METHOD`]).
    pub method: String,
    /// The figures, in display order.
    pub figures: Vec<FigureInfo>,
    pub policies: Vec<PolicyRow>,
    /// What was compared, resolved (scenario text, base seed, seed count, policies, parameters,
    /// device and apps), as recorded by the command; absent in reports made in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
}

impl CompareReport {
    pub fn row(&self, label: &str) -> Option<&PolicyRow> {
        self.policies.iter().find(|r| r.label == label)
    }

    pub fn figure(&self, key: &str) -> Option<&FigureInfo> {
        self.figures.iter().find(|f| f.key == key)
    }
}

/// The runs of one row, one [`RunSample`] per seed (in seed order).
pub struct RowInput {
    pub label: String,
    pub policy: String,
    pub variant: bool,
    pub params: BTreeMap<String, serde_json::Value>,
    pub runs: Vec<RunSample>,
}

/// What the comparison ran: scenario, device, seeds, simulated time of one run, baseline label.
pub struct CompareMeta {
    pub scenario: String,
    pub device: String,
    pub seeds: Vec<u64>,
    pub simulated_seconds: f64,
    pub baseline: String,
}

/// The figure list: [`FIGURES`], then each family's keys seen in any run after its anchor.
fn figure_list(rows: &[RowInput]) -> Vec<FigureInfo> {
    let seen: BTreeSet<&String> = rows
        .iter()
        .flat_map(|r| r.runs.iter().flat_map(|s| s.figures.keys()))
        .collect();
    let family = |prefix: &str, label: &str, unit: &str, better: Better, skip: &str| -> Vec<FigureInfo> {
        seen.iter()
            .filter_map(|k| k.strip_prefix(prefix).map(|rest| (k, rest)))
            .filter(|(_, rest)| *rest != skip)
            .map(|(k, rest)| FigureInfo {
                key: (*k).clone(),
                label: format!("{label}{rest}"),
                unit: unit.to_string(),
                better,
            })
            .collect()
    };
    let mut out = Vec::new();
    for f in FIGURES {
        out.push(FigureInfo {
            key: f.key.to_string(),
            label: f.label.to_string(),
            unit: f.unit.to_string(),
            better: f.better,
        });
        match f.key {
            "kills" => out.extend(family(KILLS_PREFIX, "kills: ", "count", Better::Lower, "")),
            "mm_cpu_ms" => {
                out.extend(family(CPU_PREFIX, "CPU: ", "ms", Better::Lower, APP_CPU_CATEGORY));
                // The apps' own work last: not memory management, but cold launches redo it.
                let app = format!("{CPU_PREFIX}{APP_CPU_CATEGORY}");
                if seen.contains(&app) {
                    out.push(FigureInfo {
                        key: app,
                        label: format!("CPU: {APP_CPU_CATEGORY} (the apps' own work)"),
                        unit: "ms".to_string(),
                        better: Better::Neither,
                    });
                }
            }
            _ => {}
        }
    }
    out
}

fn is_family(key: &str) -> bool {
    key.starts_with(KILLS_PREFIX) || key.starts_with(CPU_PREFIX)
}

/// Points of the shared CDF grid.
const CDF_GRID: usize = 160;

/// The fraction of a step CDF (`points` as in [`PolicyResult::hot_launch_cdf`]) at `x`.
fn cdf_at(points: &[(f64, f64)], x: f64) -> f64 {
    match points.partition_point(|p| p.0 <= x) {
        0 => 0.0,
        i => points[i - 1].1,
    }
}

/// Seed-averaged CDFs of every row on one grid (log-spaced when the latencies span more than a
/// decade).
fn averaged_cdfs(rows: &[RowInput]) -> Vec<Vec<(f64, f64)>> {
    let xs = rows
        .iter()
        .flat_map(|r| r.runs.iter().flat_map(|s| s.hot_launch_cdf.iter().map(|p| p.0)));
    let (lo, hi) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    if !(lo.is_finite() && hi.is_finite()) {
        return rows.iter().map(|_| Vec::new()).collect();
    }
    let grid: Vec<f64> = if lo > 0.0 && hi / lo > 10.0 {
        let (a, b) = (lo.ln(), hi.ln());
        (0..CDF_GRID)
            .map(|i| (a + (b - a) * i as f64 / (CDF_GRID - 1) as f64).exp())
            .collect()
    } else {
        (0..CDF_GRID)
            .map(|i| lo + (hi - lo) * i as f64 / (CDF_GRID - 1) as f64)
            .collect()
    };
    rows.iter()
        .map(|r| {
            let cdfs: Vec<&Vec<(f64, f64)>> = r
                .runs
                .iter()
                .map(|s| &s.hot_launch_cdf)
                .filter(|c| !c.is_empty())
                .collect();
            if cdfs.is_empty() {
                return Vec::new();
            }
            grid.iter()
                .map(|&x| {
                    let f = cdfs.iter().map(|c| cdf_at(c, x)).sum::<f64>() / cdfs.len() as f64;
                    (round3(x), round3(f))
                })
                .collect()
        })
        .collect()
}

/// Per-app statistics of one row (apps in the order of the first seed).
fn per_app(runs: &[RunSample]) -> Vec<AppRow> {
    let Some(first) = runs.first() else {
        return Vec::new();
    };
    first
        .per_app
        .iter()
        .map(|a| {
            let find = |s: &RunSample| s.per_app.iter().find(|b| b.app == a.app).cloned();
            let col = |f: fn(&AppSample) -> Option<f64>| {
                FigureStats::of(runs.iter().map(|s| find(s).and_then(|b| f(&b))).collect())
            };
            AppRow {
                app: a.app.clone(),
                hot_p50_ms: col(|b| b.hot_p50_ms),
                hot_p90_ms: col(|b| b.hot_p90_ms),
                hot_launches: col(|b| Some(b.hot_launches as f64)),
            }
        })
        .collect()
}

/// The comparison of `rows` (each with one run per seed of `meta.seeds`).
pub fn build(meta: CompareMeta, rows: Vec<RowInput>) -> CompareReport {
    let figures = figure_list(&rows);
    let cdfs = averaged_cdfs(&rows);
    let values = |r: &RowInput, key: &str| -> Vec<Option<f64>> {
        r.runs
            .iter()
            .map(|s| match s.figures.get(key) {
                Some(v) => Some(*v),
                None if is_family(key) => Some(0.0),
                None => None,
            })
            .collect()
    };
    let base = rows.iter().position(|r| r.label == meta.baseline);
    let policies: Vec<PolicyRow> = rows
        .iter()
        .zip(cdfs)
        .enumerate()
        .map(|(i, (r, cdf))| {
            let stats = figures
                .iter()
                .map(|f| {
                    let mine = values(r, &f.key);
                    let mut s = FigureStats::of(mine);
                    if let Some(b) = base.filter(|&b| b != i) {
                        let theirs: Vec<Option<f64>> = values(&rows[b], &f.key)
                            .into_iter()
                            .map(|v| v.map(round3))
                            .collect();
                        let base_mean = FigureStats::of(theirs.clone()).mean;
                        s.vs_baseline = paired_difference(&s.per_seed, &theirs).map(|d| Difference {
                            n: d.n,
                            mean: round3(d.mean),
                            ci95: d.rounded().ci95,
                            percent: base_mean
                                .filter(|m| *m != 0.0)
                                .map(|m| round3(d.mean / m.abs() * 100.0)),
                            significant: d.excludes_zero(),
                        });
                    }
                    (f.key.clone(), s)
                })
                .collect();
            PolicyRow {
                label: r.label.clone(),
                policy: r.policy.clone(),
                variant: r.variant,
                params: r.params.clone(),
                figures: stats,
                hot_launch_cdf: cdf,
                per_app: per_app(&r.runs),
            }
        })
        .collect();
    CompareReport {
        schema_version: COMPARE_SCHEMA_VERSION,
        tool: "hotlaunch compare".to_string(),
        tool_version: env!("CARGO_PKG_VERSION").to_string(),
        scenario: meta.scenario,
        device: meta.device,
        seeds: meta.seeds,
        simulated_seconds: round3(meta.simulated_seconds),
        baseline: meta.baseline,
        method: METHOD.to_string(),
        figures,
        policies,
        config: None,
    }
}

// ---------------------------------------------------------------------------------------------
// ABLATION SLOT (issue 21, `unified`): the dashboard's ablation table is made of these rows.
// The lead's `unified` policy registers in `policy::all()` and so runs in every comparison as
// the row labelled `unified`; its ablations are further runs of the same policy under other
// labels — scenario `[[variants]]` with `policy = "unified"` and parameters switching one part
// off (kept as extra rows by `hotlaunch compare`), or `--param unified.<key>=...` labels. Each
// ablation row is shown next to the full `unified` row with paired differences.
// ---------------------------------------------------------------------------------------------

/// The full [`ABLATION_POLICY`] row and its ablations (other rows running that policy), if the
/// comparison ran it.
pub fn ablation_rows(r: &CompareReport) -> Option<(&PolicyRow, Vec<&PolicyRow>)> {
    let full = r.row(ABLATION_POLICY)?;
    let parts = r
        .policies
        .iter()
        .filter(|p| p.policy == ABLATION_POLICY && p.label != ABLATION_POLICY)
        .collect();
    Some((full, parts))
}

/// The paired difference `row − reference` of figure `key` (seed by seed), for the ablation table.
pub fn paired(row: &PolicyRow, reference: &PolicyRow, key: &str) -> Option<Difference> {
    let (a, b) = (row.figures.get(key)?, reference.figures.get(key)?);
    let d = paired_difference(&a.per_seed, &b.per_seed)?;
    Some(Difference {
        n: d.n,
        mean: round3(d.mean),
        ci95: d.rounded().ci95,
        percent: b
            .mean
            .filter(|m| *m != 0.0)
            .map(|m| round3(d.mean / m.abs() * 100.0)),
        significant: d.excludes_zero(),
    })
}

/// The comparison as pretty JSON (byte-stable: same runs, same bytes).
pub fn to_json_string(r: &CompareReport) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(r)? + "\n")
}
