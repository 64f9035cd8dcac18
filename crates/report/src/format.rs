//! The one place that decides *what* is shown and how numbers are formatted, shared by the terminal
//! table, the CSV files and the HTML report.
//!
//! - [`SUMMARY_ROWS`]: the per-policy summary metrics (terminal table rows, `summary.csv` columns,
//!   HTML summary table rows);
//! - [`TIMESERIES_COLUMNS`]: the columns of `timeseries_<policy>.csv`;
//! - [`PER_APP_COLUMNS`]: the columns of `per_app.csv` and the HTML per-app table;
//! - [`ZRAM_ROWS`]: the zram `mm_stat` table of the HTML report;
//! - [`MEMORY_SERIES`]: the memory-state series plotted over time;
//! - [`Cell`]: a value with its display precision; [`Cell::display`] for humans, [`Cell::raw`] for
//!   CSV (6 decimals).

use crate::model::{AppResult, GcRow, PolicyResult, RunReport, TimeSeries, BYTES_PER_MB};

/// One value of a table.
#[derive(Clone, Debug, PartialEq)]
pub enum Cell {
    Int(u64),
    /// A number and the decimals to show it with.
    Num(f64, usize),
    Text(String),
    /// Missing (e.g. a time series shorter than `t_s`).
    Empty,
}

impl Cell {
    /// For humans: numbers with their display precision.
    pub fn display(&self) -> String {
        match self {
            Cell::Int(v) => v.to_string(),
            Cell::Num(v, d) => format!("{:.*}", d, v),
            Cell::Text(s) => s.clone(),
            Cell::Empty => "—".to_string(),
        }
    }

    /// For CSV: numbers rounded to 6 decimals (shortest form, no trailing zeros), text as-is
    /// (quoting is the writer's).
    pub fn raw(&self) -> String {
        match self {
            Cell::Int(v) => v.to_string(),
            Cell::Num(v, _) => {
                let r = (v * 1e6).round() / 1e6;
                format!("{}", if r == 0.0 { 0.0 } else { r })
            }
            Cell::Text(s) => s.clone(),
            Cell::Empty => String::new(),
        }
    }

    /// Whether the value is numeric (right-aligned in tables).
    pub fn is_numeric(&self) -> bool {
        matches!(self, Cell::Int(_) | Cell::Num(..))
    }
}

/// A latency statistic, absent (not 0.0 ms) when there was no such launch.
fn latency(s: &crate::model::LatencySummary, v: f64) -> Cell {
    if s.count == 0 {
        Cell::Empty
    } else {
        Cell::Num(v, 1)
    }
}

fn io_latency(p: &PolicyResult, v: f64) -> Cell {
    if p.io_buffers.allocations == 0 {
        Cell::Empty
    } else {
        Cell::Num(v, 2)
    }
}

/// A named column (or row) of a table over items of type `T`.
pub struct Column<T> {
    /// Machine name: CSV header.
    pub key: &'static str,
    /// Human label: terminal and HTML tables.
    pub label: &'static str,
    pub value: fn(&T) -> Cell,
}

fn mb(bytes: u64) -> f64 {
    bytes as f64 / BYTES_PER_MB
}

/// Per-policy summary metrics, in display order.
pub const SUMMARY_ROWS: &[Column<PolicyResult>] = &[
    Column {
        key: "hot_p50_ms",
        label: "hot launch p50 (ms)",
        value: |p| latency(&p.hot_launch_ms, p.hot_launch_ms.p50),
    },
    Column {
        key: "hot_p90_ms",
        label: "hot launch p90 (ms)",
        value: |p| latency(&p.hot_launch_ms, p.hot_launch_ms.p90),
    },
    Column {
        key: "hot_p99_ms",
        label: "hot launch p99 (ms)",
        value: |p| latency(&p.hot_launch_ms, p.hot_launch_ms.p99),
    },
    Column {
        key: "hot_mean_ms",
        label: "hot launch mean (ms)",
        value: |p| latency(&p.hot_launch_ms, p.hot_launch_ms.mean),
    },
    Column {
        key: "cold_p50_ms",
        label: "cold launch p50 (ms)",
        value: |p| latency(&p.cold_launch_ms, p.cold_launch_ms.p50),
    },
    Column {
        key: "cold_p90_ms",
        label: "cold launch p90 (ms)",
        value: |p| latency(&p.cold_launch_ms, p.cold_launch_ms.p90),
    },
    Column {
        key: "launches_hot",
        label: "launches hot",
        value: |p| Cell::Int(p.launches.hot),
    },
    Column {
        key: "launches_cold",
        label: "launches cold",
        value: |p| Cell::Int(p.launches.cold),
    },
    Column {
        key: "launches_interrupted",
        label: "launches interrupted",
        value: |p| Cell::Int(p.launches.interrupted),
    },
    Column {
        key: "cached_max",
        label: "cached apps max",
        value: |p| Cell::Int(p.cached_apps.max as u64),
    },
    Column {
        key: "cached_mean",
        label: "cached apps mean",
        value: |p| Cell::Num(p.cached_apps.mean, 2),
    },
    Column {
        key: "kills_total",
        label: "kills",
        value: |p| Cell::Int(p.kills.total),
    },
    Column {
        key: "force_stops",
        label: "force-stops (user)",
        value: |p| Cell::Int(p.kills.force_stops),
    },
    Column {
        key: "mm_cpu_ms",
        label: "mm CPU (ms)",
        value: |p| Cell::Num(p.cpu_ms.mm_total(), 0),
    },
    Column {
        key: "energy_j",
        label: "energy (J)",
        value: |p| Cell::Num(p.energy_j, 2),
    },
    Column {
        key: "io_alloc_p50_ms",
        label: "I/O-buffer allocation p50 (ms)",
        value: |p| io_latency(p, p.io_buffers.latency_ms.p50),
    },
    Column {
        key: "io_order0_share",
        label: "I/O-buffer units at order 0",
        value: |p| {
            if p.io_buffers.allocations == 0 {
                Cell::Empty
            } else {
                Cell::Num(p.io_buffers.order0_share, 3)
            }
        },
    },
    Column {
        key: "flash_read_mb",
        label: "flash read (MiB)",
        value: |p| Cell::Num(mb(p.flash.bytes_read), 1),
    },
    Column {
        key: "flash_written_mb",
        label: "flash written (MiB)",
        value: |p| Cell::Num(mb(p.flash.bytes_written), 1),
    },
    Column {
        key: "zram_orig_mb",
        label: "zram stored (MiB)",
        value: |p| Cell::Num(mb(p.zram.orig_data_size), 1),
    },
    Column {
        key: "zram_compr_mb",
        label: "zram compressed (MiB)",
        value: |p| Cell::Num(mb(p.zram.compr_data_size), 1),
    },
    Column {
        key: "psi_some_ms",
        label: "PSI some (ms)",
        value: |p| Cell::Num(p.psi.some_ms, 0),
    },
    Column {
        key: "gc_collections",
        label: "GCs",
        value: |p| Cell::Int(p.gc.collections),
    },
    Column {
        key: "gc_background",
        label: "GCs in the background",
        value: |p| Cell::Int(p.gc.background),
    },
    Column {
        key: "gc_fault_stall_ms",
        label: "GC fault stall (ms)",
        value: |p| Cell::Num(p.gc.fault_stall_ms, 0),
    },
    Column {
        key: "pages_swapped_in",
        label: "pages swapped in",
        value: |p| Cell::Int(p.integrity.pages_swapped_in),
    },
    Column {
        key: "checksum_mismatches",
        label: "checksum mismatches",
        value: |p| Cell::Int(p.integrity.checksum_mismatches),
    },
];

/// zram `mm_stat` fields (sizes in MiB), HTML details table.
pub const ZRAM_ROWS: &[Column<PolicyResult>] = &[
    Column {
        key: "orig_data_size",
        label: "orig_data_size (MiB)",
        value: |p| Cell::Num(mb(p.zram.orig_data_size), 1),
    },
    Column {
        key: "compr_data_size",
        label: "compr_data_size (MiB)",
        value: |p| Cell::Num(mb(p.zram.compr_data_size), 1),
    },
    Column {
        key: "mem_used_total",
        label: "mem_used_total (MiB)",
        value: |p| Cell::Num(mb(p.zram.mem_used_total), 1),
    },
    Column {
        key: "mem_limit",
        label: "mem_limit (MiB)",
        value: |p| Cell::Num(mb(p.zram.mem_limit), 1),
    },
    Column {
        key: "mem_used_max",
        label: "mem_used_max (MiB)",
        value: |p| Cell::Num(mb(p.zram.mem_used_max), 1),
    },
    Column {
        key: "same_pages",
        label: "same_pages",
        value: |p| Cell::Int(p.zram.same_pages),
    },
    Column {
        key: "pages_compacted",
        label: "pages_compacted",
        value: |p| Cell::Int(p.zram.pages_compacted),
    },
    Column {
        key: "huge_pages",
        label: "huge_pages",
        value: |p| Cell::Int(p.zram.huge_pages),
    },
    Column {
        key: "huge_pages_since",
        label: "huge_pages_since",
        value: |p| Cell::Int(p.zram.huge_pages_since),
    },
];

/// Per-app columns (`per_app.csv` adds a leading `policy` column).
pub const PER_APP_COLUMNS: &[Column<AppResult>] = &[
    Column {
        key: "app",
        label: "app",
        value: |a| Cell::Text(a.app.clone()),
    },
    Column {
        key: "launches_hot",
        label: "hot",
        value: |a| Cell::Int(a.launches_hot),
    },
    Column {
        key: "launches_cold",
        label: "cold",
        value: |a| Cell::Int(a.launches_cold),
    },
    Column {
        key: "launches_interrupted",
        label: "interrupted",
        value: |a| Cell::Int(a.launches_interrupted),
    },
    Column {
        key: "kills",
        label: "kills",
        value: |a| Cell::Int(a.kills),
    },
    Column {
        key: "hot_p50_ms",
        label: "hot p50 (ms)",
        value: |a| latency(&a.hot_launch_ms, a.hot_launch_ms.p50),
    },
    Column {
        key: "hot_p90_ms",
        label: "hot p90 (ms)",
        value: |a| latency(&a.hot_launch_ms, a.hot_launch_ms.p90),
    },
    Column {
        key: "hot_p99_ms",
        label: "hot p99 (ms)",
        value: |a| latency(&a.hot_launch_ms, a.hot_launch_ms.p99),
    },
    Column {
        key: "hot_mean_ms",
        label: "hot mean (ms)",
        value: |a| latency(&a.hot_launch_ms, a.hot_launch_ms.mean),
    },
    Column {
        key: "cold_p50_ms",
        label: "cold p50 (ms)",
        value: |a| latency(&a.cold_launch_ms, a.cold_launch_ms.p50),
    },
    Column {
        key: "cold_mean_ms",
        label: "cold mean (ms)",
        value: |a| latency(&a.cold_launch_ms, a.cold_launch_ms.mean),
    },
];

/// A time-series column: sample `i` of a [`TimeSeries`].
pub struct SeriesColumn {
    pub key: &'static str,
    pub value: fn(&TimeSeries, usize) -> Cell,
}

fn num_at(v: &[f64], i: usize) -> Cell {
    v.get(i).map_or(Cell::Empty, |x| Cell::Num(*x, 3))
}

/// Columns of `timeseries_<policy>.csv`, in order (the header is the keys).
pub const TIMESERIES_COLUMNS: &[SeriesColumn] = &[
    SeriesColumn {
        key: "t_s",
        value: |t, i| num_at(&t.t_s, i),
    },
    SeriesColumn {
        key: "cached_apps",
        value: |t, i| t.cached_apps.get(i).map_or(Cell::Empty, |v| Cell::Int(*v as u64)),
    },
    SeriesColumn {
        key: "free_mb",
        value: |t, i| num_at(&t.free_mb, i),
    },
    SeriesColumn {
        key: "anon_mb",
        value: |t, i| num_at(&t.anon_mb, i),
    },
    SeriesColumn {
        key: "file_mb",
        value: |t, i| num_at(&t.file_mb, i),
    },
    SeriesColumn {
        key: "swapped_mb",
        value: |t, i| num_at(&t.swapped_mb, i),
    },
    SeriesColumn {
        key: "zram_mb",
        value: |t, i| num_at(&t.zram_mb, i),
    },
    SeriesColumn {
        key: "kernel_mb",
        value: |t, i| num_at(&t.kernel_mb, i),
    },
    SeriesColumn {
        key: "psi_some_ms",
        value: |t, i| num_at(&t.psi_some_ms, i),
    },
    SeriesColumn {
        key: "ui_0",
        value: |t, i| unusable_at(t, i, 0),
    },
    SeriesColumn {
        key: "ui_1",
        value: |t, i| unusable_at(t, i, 1),
    },
    SeriesColumn {
        key: "ui_2",
        value: |t, i| unusable_at(t, i, 2),
    },
    SeriesColumn {
        key: "ui_3",
        value: |t, i| unusable_at(t, i, 3),
    },
    SeriesColumn {
        key: "ui_4",
        value: |t, i| unusable_at(t, i, 4),
    },
    SeriesColumn {
        key: "ui_5",
        value: |t, i| unusable_at(t, i, 5),
    },
    SeriesColumn {
        key: "ui_6",
        value: |t, i| unusable_at(t, i, 6),
    },
    SeriesColumn {
        key: "ui_7",
        value: |t, i| unusable_at(t, i, 7),
    },
    SeriesColumn {
        key: "ui_8",
        value: |t, i| unusable_at(t, i, 8),
    },
    SeriesColumn {
        key: "ui_9",
        value: |t, i| unusable_at(t, i, 9),
    },
    SeriesColumn {
        key: "ui_10",
        value: |t, i| unusable_at(t, i, 10),
    },
    SeriesColumn {
        key: "zram_orig_mb",
        value: |t, i| num_at(&t.zram_orig_mb, i),
    },
    SeriesColumn {
        key: "zram_compr_mb",
        value: |t, i| num_at(&t.zram_compr_mb, i),
    },
    SeriesColumn {
        key: "zram_same_pages",
        value: |t, i| int_at(&t.zram_same_pages, i),
    },
    SeriesColumn {
        key: "zram_huge_pages",
        value: |t, i| int_at(&t.zram_huge_pages, i),
    },
    SeriesColumn {
        key: "policy_cpu_ms",
        value: |t, i| num_at(&t.policy_cpu_ms, i),
    },
];

/// A column of `gcs_<policy>.csv`: its key and the value of one row.
pub type GcColumn = (&'static str, fn(&GcRow) -> Cell);

/// Columns of `gcs_<policy>.csv` (one row per garbage collection), in order.
pub const GC_COLUMNS: &[GcColumn] = &[
    ("t_s", |g| Cell::Num(g.t_s, 3)),
    ("app", |g| Cell::Text(g.app.clone())),
    ("state", |g| Cell::Text(g.state.clone())),
    ("cause", |g| Cell::Text(g.cause.clone())),
    ("kind", |g| Cell::Text(g.kind.clone())),
    ("compacting", |g| Cell::Int(g.compacting as u64)),
    ("objects_visited", |g| Cell::Int(g.objects_visited)),
    ("mb_copied", |g| Cell::Num(g.mb_copied, 3)),
    ("pages_touched", |g| Cell::Int(g.pages_touched)),
    ("cpu_ms", |g| Cell::Num(g.cpu_ms, 3)),
    ("fault_stall_ms", |g| Cell::Num(g.fault_stall_ms, 3)),
    ("pause_ms", |g| Cell::Num(g.pause_ms, 3)),
];

fn int_at(v: &[u64], i: usize) -> Cell {
    v.get(i).map_or(Cell::Empty, |x| Cell::Int(*x))
}

fn unusable_at(t: &TimeSeries, i: usize, order: usize) -> Cell {
    t.unusable_index
        .get(i)
        .and_then(|row| row.get(order))
        .map_or(Cell::Empty, |x| Cell::Num(*x, 3))
}

/// Mean objects visited per collection, by the app's state when it ran: `(state, collections,
/// mean visits)` for each state that had collections, in the order foreground, transition,
/// background.
pub fn gc_visits_by_state(p: &PolicyResult) -> Vec<(&'static str, u64, f64)> {
    ["foreground", "transition", "background"]
        .into_iter()
        .filter_map(|state| {
            let (n, sum) = p
                .gcs
                .iter()
                .filter(|g| g.state == state)
                .fold((0u64, 0u64), |(n, s), g| (n + 1, s + g.objects_visited));
            (n > 0).then(|| (state, n, sum as f64 / n as f64))
        })
        .collect()
}

/// A memory-state series plotted over time (MiB).
pub struct MemorySeries {
    pub label: &'static str,
    pub values: fn(&TimeSeries) -> &[f64],
}

/// Memory state over time, in plot (and legend) order.
pub const MEMORY_SERIES: &[MemorySeries] = &[
    MemorySeries {
        label: "free",
        values: |t| &t.free_mb,
    },
    MemorySeries {
        label: "anon",
        values: |t| &t.anon_mb,
    },
    MemorySeries {
        label: "file",
        values: |t| &t.file_mb,
    },
    MemorySeries {
        label: "swapped",
        values: |t| &t.swapped_mb,
    },
    MemorySeries {
        label: "zram",
        values: |t| &t.zram_mb,
    },
    MemorySeries {
        label: "kernel",
        values: |t| &t.kernel_mb,
    },
];

/// Simulated duration for humans: `45 s`, `12.5 min`, `24.0 h`.
pub fn duration(seconds: f64) -> String {
    if seconds < 120.0 {
        format!("{:.1} s", seconds)
    } else if seconds < 7200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else {
        format!("{:.1} h", seconds / 3600.0)
    }
}

/// The unit used for a time axis spanning `span_s` seconds: `(name, seconds per unit)`.
pub fn time_axis_unit(span_s: f64) -> (&'static str, f64) {
    if span_s <= 300.0 {
        ("s", 1.0)
    } else if span_s <= 3.0 * 3600.0 {
        ("min", 60.0)
    } else {
        ("h", 3600.0)
    }
}

/// One line describing the run: scenario, device, seed, simulated time, tool version.
pub fn run_description(r: &RunReport) -> String {
    format!(
        "scenario {} | device {} | seed {} | simulated {} | {} {} (schema {})",
        r.scenario,
        r.device,
        r.seed,
        duration(r.simulated_seconds),
        r.tool,
        r.tool_version,
        r.schema_version
    )
}

/// Summary rows shown to humans only when some policy has a non-zero value (rare events; CSV
/// keeps every column).
const SHOWN_WHEN_NONZERO: &[&str] = &["launches_interrupted"];

/// The summary as a grid of strings: header row (`""`, policies…), then one row per
/// [`SUMMARY_ROWS`] entry (label, values…), leaving out [`SHOWN_WHEN_NONZERO`] rows that are 0
/// for every policy.
pub fn summary_grid(r: &RunReport) -> Vec<Vec<String>> {
    let mut grid = Vec::with_capacity(SUMMARY_ROWS.len() + 1);
    let mut header = vec![String::new()];
    header.extend(r.policies.iter().map(|p| p.policy.clone()));
    grid.push(header);
    for row in SUMMARY_ROWS {
        if SHOWN_WHEN_NONZERO.contains(&row.key) && r.policies.iter().all(|p| (row.value)(p) == Cell::Int(0))
        {
            continue;
        }
        let mut line = vec![row.label.to_string()];
        line.extend(r.policies.iter().map(|p| (row.value)(p).display()));
        grid.push(line);
    }
    grid
}
