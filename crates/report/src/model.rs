//! The results data model of one hotlaunch run.
//!
//! A [`RunReport`] is what a run produces: the scenario, device and seed it ran with, and one
//! [`PolicyResult`] per policy (all policies see the same workload). Every type here is plain data
//! with `Serialize + Deserialize`; field order is the JSON key order and maps are [`BTreeMap`]s, so
//! the same report always serializes to the same bytes.
//!
//! Units are in the key names: `_ms` milliseconds, `_mb` MiB (2^20 bytes), `_j` joules, `t_s`
//! seconds of simulated time, `bytes_*` bytes. Latency values are rounded to 3 decimals (1 µs) by
//! the histogram helpers so that the JSON does not carry meaningless float noise.
//!
//! Floats must be finite: JSON has no NaN/infinity (serde_json writes them as `null`, which does not
//! read back). The helpers here never produce them (an empty histogram gives all zeros).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON layout below. Bump it when a key is renamed or removed, or its meaning
/// changes; adding keys does not require a bump.
pub const SCHEMA_VERSION: u32 = 1;

/// Maximum number of points in [`PolicyResult::hot_launch_cdf`] (see [`cdf_from_histogram`]).
pub const MAX_CDF_POINTS: usize = 200;

/// Bytes in one "MB" of the report (MiB).
pub const BYTES_PER_MB: f64 = (1u64 << 20) as f64;

/// Round to 3 decimals, deterministically (round half away from zero). Non-finite values become 0.
pub fn round3(x: f64) -> f64 {
    if !x.is_finite() {
        return 0.0;
    }
    let r = (x * 1000.0).round() / 1000.0;
    // Avoid "-0.0" in the output.
    if r == 0.0 {
        0.0
    } else {
        r
    }
}

/// The whole result of one run: one entry per policy, all on the same scenario and seed.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// [`SCHEMA_VERSION`] of this layout.
    pub schema_version: u32,
    /// Always `"hotlaunch"`.
    pub tool: String,
    /// Version of the tool that produced the report.
    pub tool_version: String,
    /// Scenario name (or file) that was run.
    pub scenario: String,
    /// Device profile name.
    pub device: String,
    /// Seed of the run: same seed, same scenario ⇒ same report bytes.
    pub seed: u64,
    /// Simulated time covered by the run.
    pub simulated_seconds: f64,
    /// What was run, resolved (scenario text, seed, policies, parameters, device and apps): enough
    /// to run it again (`hotlaunch run --rerun REPORT.json`). Absent in reports made in memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub config: Option<serde_json::Value>,
    /// One result per policy, in the order they were requested.
    pub policies: Vec<PolicyResult>,
}

impl RunReport {
    /// An empty report with `schema_version`, `tool` and `tool_version` filled in.
    pub fn new(scenario: impl Into<String>, device: impl Into<String>, seed: u64) -> Self {
        RunReport {
            schema_version: SCHEMA_VERSION,
            tool: "hotlaunch".to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            scenario: scenario.into(),
            device: device.into(),
            seed,
            simulated_seconds: 0.0,
            config: None,
            policies: Vec::new(),
        }
    }
}

/// Everything measured for one policy during the run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct PolicyResult {
    /// Policy name, e.g. `android`, `android-swap`.
    pub policy: String,
    /// The policy's resolved parameters (every declared one, defaults included); absent for a
    /// policy without parameters.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, serde_json::Value>,
    /// Hot-launch latency (launch of a cached process, to its first frame).
    pub hot_launch_ms: LatencySummary,
    /// Cold-launch latency (process creation to first frame).
    pub cold_launch_ms: LatencySummary,
    /// Launches served hot vs cold.
    pub launches: Launches,
    /// Cached (background, alive) apps over the run.
    pub cached_apps: CachedApps,
    /// Process kills.
    pub kills: Kills,
    /// CPU time by category and by actor kind.
    pub cpu_ms: CpuMs,
    /// Energy estimate of the CPU and flash work, joules.
    pub energy_j: f64,
    /// Flash traffic (swap and file pages).
    pub flash: Flash,
    /// ZRAM `mm_stat` at the end of the run.
    pub zram: ZramStat,
    /// Swap integrity counters: every swapped-in page is checked against its checksum.
    pub integrity: Integrity,
    /// Java garbage collection over the run (all apps).
    #[serde(default)]
    pub gc: Gc,
    /// Per-app results, in app order of the scenario.
    pub per_app: Vec<AppResult>,
    /// Hot-launch latency CDF: `(ms, fraction of launches ≤ ms)`, at most [`MAX_CDF_POINTS`] points,
    /// increasing in both coordinates.
    pub hot_launch_cdf: Vec<(f64, f64)>,
    /// Unusable free space index per order 0..=10 at the end of the run (0 = all free memory usable
    /// for that order, 1 = none).
    pub unusable_index: Vec<f64>,
    /// Memory pressure stall information, cumulative over the run.
    pub psi: Psi,
    /// `/proc/vmstat`-like counters at the end of the run (e.g. `pswpin`, `pgsteal_kswapd`).
    pub vmstat: BTreeMap<String, u64>,
    /// Sampled time series.
    pub timeseries: TimeSeries,
    /// ION-style I/O-buffer allocations (none unless the workload allocates I/O buffers).
    #[serde(default)]
    pub io_buffers: IoBuffers,
    /// One row per garbage collection, in the order they ran.
    #[serde(default)]
    pub gcs: Vec<GcRow>,
    /// Duration of each scripted `alloc_mb` event, ms, in order (e.g. Marvin Fig. 3's 512 MB
    /// with free memory, then under pressure); absent when the workload allocates nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub alloc_ms: Vec<f64>,
    /// Figures the policy reports about itself (e.g. object faults, bytes saved); absent for a
    /// policy that reports none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policy_metrics: BTreeMap<String, f64>,
}

/// I/O-buffer allocations: count, allocation latency and the blocks handed out per order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct IoBuffers {
    pub allocations: u64,
    /// MiB requested over all buffers.
    #[serde(default)]
    pub mb: f64,
    pub latency_ms: LatencySummary,
    /// Blocks per buddy order `"0"`..`"10"` (orders with none left out).
    pub blocks_by_order: BTreeMap<String, u64>,
    /// Share of the blocks (allocation units) at order 0 (ISMM'15 Fig. 10); 0 without buffers.
    #[serde(default)]
    pub order0_share: f64,
    /// Attempts per order the free lists (and compaction) could not serve, `"8"`, `"4"`.
    #[serde(default)]
    pub failed_by_order: BTreeMap<String, u64>,
    /// Direct compactions run inside the allocations and their CPU time.
    #[serde(default)]
    pub compactions: u64,
    #[serde(default)]
    pub compaction_ms: f64,
}

/// One garbage collection (`gcs_<policy>.csv` row).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct GcRow {
    /// Start, simulated seconds.
    pub t_s: f64,
    pub app: String,
    /// State of the app when the GC started: `foreground`, `transition` or `background` (a GC
    /// during a hot launch counts as `background`; see `gc.launch_collections`).
    pub state: String,
    /// Why it ran: `background` (heap threshold), `alloc` (blocking), `explicit`, `transition`
    /// (collector transition after leaving the foreground) or `policy` (a policy's periodic task).
    #[serde(default)]
    pub cause: String,
    /// `sticky` or `full`.
    pub kind: String,
    pub compacting: bool,
    pub objects_visited: u64,
    pub mb_copied: f64,
    pub pages_touched: u64,
    pub cpu_ms: f64,
    /// GC-thread stalls on faults, ms.
    pub fault_stall_ms: f64,
    /// Main-thread pause, ms.
    pub pause_ms: f64,
}

/// Summary of a latency distribution, milliseconds. In JSON, an empty distribution's figures are
/// `null` (absent, not 0 ms); they read back as 0 with `count` 0.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(into = "LatencyJson", from = "LatencyJson")]
pub struct LatencySummary {
    /// Number of samples.
    pub count: u64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub mean: f64,
    /// Largest sample.
    pub max: f64,
}

/// [`LatencySummary`] as written to JSON: figures absent when there are no samples.
#[derive(Serialize, Deserialize)]
struct LatencyJson {
    count: u64,
    p50: Option<f64>,
    p90: Option<f64>,
    p99: Option<f64>,
    mean: Option<f64>,
    max: Option<f64>,
}

impl From<LatencySummary> for LatencyJson {
    fn from(l: LatencySummary) -> Self {
        let v = |x: f64| (l.count > 0).then_some(x);
        LatencyJson {
            count: l.count,
            p50: v(l.p50),
            p90: v(l.p90),
            p99: v(l.p99),
            mean: v(l.mean),
            max: v(l.max),
        }
    }
}

impl From<LatencyJson> for LatencySummary {
    fn from(j: LatencyJson) -> Self {
        LatencySummary {
            count: j.count,
            p50: j.p50.unwrap_or(0.0),
            p90: j.p90.unwrap_or(0.0),
            p99: j.p99.unwrap_or(0.0),
            mean: j.mean.unwrap_or(0.0),
            max: j.max.unwrap_or(0.0),
        }
    }
}

impl LatencySummary {
    /// Summarize a histogram whose recorded values are in units of `unit_ns_per_count` nanoseconds
    /// (1 for ns, 1000 for µs, ...). Quantiles are the histogram's (highest-equivalent) values; all
    /// values are rounded to 3 decimals of a millisecond. An empty histogram gives all zeros.
    pub fn from_histogram(h: &Histogram<u64>, unit_ns_per_count: u64) -> Self {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let to_ms = |v: f64| round3(v * unit_ns_per_count as f64 / 1e6);
        LatencySummary {
            count: h.len(),
            p50: to_ms(h.value_at_quantile(0.50) as f64),
            p90: to_ms(h.value_at_quantile(0.90) as f64),
            p99: to_ms(h.value_at_quantile(0.99) as f64),
            mean: to_ms(h.mean()),
            max: to_ms(h.max() as f64),
        }
    }
}

/// The CDF of a latency histogram as `(ms, fraction)` points for plots: starts at `(min, 0)`, ends at
/// `(max, 1)`, at most `max_points` points (≥ 2), both coordinates rounded to 3 decimals. Points are
/// the recorded buckets (highest-equivalent value, cumulative fraction); when there are more buckets
/// than points, evenly spaced buckets are kept (always including the last). Empty histogram ⇒ empty.
pub fn cdf_from_histogram(h: &Histogram<u64>, unit_ns_per_count: u64, max_points: usize) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    let max_points = max_points.max(2);
    let total = h.len() as f64;
    let to_ms = |v: u64| round3(v as f64 * unit_ns_per_count as f64 / 1e6);
    let mut steps: Vec<(f64, f64)> = Vec::new();
    let mut cum = 0u64;
    for it in h.iter_recorded() {
        cum += it.count_since_last_iteration();
        steps.push((to_ms(it.value_iterated_to()), round3(cum as f64 / total)));
    }
    // First point: the CDF rises from 0 at the lowest recorded value.
    let first = (to_ms(h.lowest_equivalent(h.min())), 0.0);
    let room = max_points - 1;
    let kept: Vec<(f64, f64)> = if steps.len() <= room {
        steps
    } else {
        let n = steps.len();
        if room == 1 {
            vec![steps[n - 1]]
        } else {
            // Evenly spaced bucket indices, rounded to nearest; j = room-1 gives n-1.
            (0..room)
                .map(|j| steps[(j * (n - 1) + (room - 1) / 2) / (room - 1)])
                .collect()
        }
    };
    let mut out = Vec::with_capacity(kept.len() + 1);
    out.push(first);
    for p in kept {
        // Rounding can merge neighbours; keep the CDF strictly a function of its points.
        let len = out.len();
        match out.last_mut() {
            Some(last) if len > 1 && last.0 == p.0 => *last = p,
            _ => out.push(p),
        }
    }
    if let Some(last) = out.last_mut() {
        last.1 = 1.0;
    }
    out
}

/// Launch counts. Every launch request (a `launch` of an app not already in the foreground) ends
/// as exactly one completed hot launch, one completed cold launch or one interrupted launch:
/// `requested = hot + cold + interrupted`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Launches {
    /// Completed launches of an app whose process was still alive (cached).
    pub hot: u64,
    /// Completed launches that had to create the process (including hot launches redone cold).
    pub cold: u64,
    /// Launch requests that reached no first frame: the process was killed mid-launch (the kernel
    /// OOM killer, while the launch faulted or allocated) and no cold relaunch completed.
    #[serde(default)]
    pub interrupted: u64,
    /// Hot launches whose process was killed mid-launch and which were redone as cold launches
    /// (each then counted in `cold`, or in `interrupted` if the cold launch was killed too).
    #[serde(default)]
    pub hot_killed: u64,
    /// Launch requests (see the identity above).
    #[serde(default)]
    pub requested: u64,
}

/// Cached apps over the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CachedApps {
    pub max: u32,
    /// Time-weighted mean.
    pub mean: f64,
}

/// Process kills.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kills {
    /// Kills by the system (lmkd, OOM); user force-stops are not kills of memory management.
    pub total: u64,
    /// Scripted or user force-stops (`am force-stop`), the `user` reason.
    #[serde(default)]
    pub force_stops: u64,
    /// Kills per reason (lmkd reason names, e.g. `low_mem_and_swap_util`, `oom`; `user` for
    /// force-stops).
    pub by_reason: BTreeMap<String, u64>,
}

/// The `by_reason` key of user force-stops.
pub const FORCE_STOP_REASON: &str = "user";

impl Kills {
    /// Totals from the per-reason counts: force-stops separate from the system's kills.
    pub fn from_reasons(by_reason: BTreeMap<String, u64>) -> Kills {
        let force_stops = by_reason.get(FORCE_STOP_REASON).copied().unwrap_or(0);
        Kills {
            total: by_reason.values().sum::<u64>() - force_stops,
            force_stops,
            by_reason,
        }
    }
}

/// CPU time, milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuMs {
    /// By accounting category (`app`, `reclaim`, `fault`, `compaction`, `compress`, `decompress`, `gc`,
    /// `lifecycle`).
    pub by_category: BTreeMap<String, f64>,
    /// By actor kind (`app_main`, `app_gc`, `kswapd`, `kcompactd`, `lmkd`, `kernel`).
    pub by_actor: BTreeMap<String, f64>,
}

/// The CPU category that is the apps' own work; everything else is memory-management overhead.
pub const APP_CPU_CATEGORY: &str = "app";

impl CpuMs {
    /// Memory-management CPU: every category except [`APP_CPU_CATEGORY`].
    pub fn mm_total(&self) -> f64 {
        self.by_category
            .iter()
            .filter(|(k, _)| k.as_str() != APP_CPU_CATEGORY)
            .map(|(_, v)| v)
            .sum()
    }

    /// All categories.
    pub fn total(&self) -> f64 {
        self.by_category.values().sum()
    }
}

/// Flash traffic, bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flash {
    pub bytes_read: u64,
    pub bytes_written: u64,
}

/// ZRAM `/sys/block/zramN/mm_stat` fields (bytes, except the page counts).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ZramStat {
    /// Uncompressed size of the stored data.
    pub orig_data_size: u64,
    /// Compressed size of the stored data.
    pub compr_data_size: u64,
    /// Memory used by the allocator, including fragmentation and metadata.
    pub mem_used_total: u64,
    /// Configured limit (0 = none).
    pub mem_limit: u64,
    /// Peak of `mem_used_total`.
    pub mem_used_max: u64,
    /// Pages that were same-filled (stored without allocation), count.
    pub same_pages: u64,
    /// Pages freed by compaction, count.
    pub pages_compacted: u64,
    /// Incompressible pages currently stored, count.
    pub huge_pages: u64,
    /// Incompressible pages stored since reset, count.
    pub huge_pages_since: u64,
}

/// Swap integrity counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Integrity {
    /// Pages swapped in and checked.
    pub pages_swapped_in: u64,
    /// Swapped-in pages whose content did not match what was swapped out (must be 0).
    pub checksum_mismatches: u64,
}

/// Java garbage collections over a run (all apps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Gc {
    /// Collections run (full + sticky).
    pub collections: u64,
    pub full: u64,
    pub sticky: u64,
    /// Collections of apps not in the foreground (collector transitions, background allocation).
    pub background: u64,
    /// Objects visited by the collectors.
    pub objects_visited: u64,
    pub mb_copied: f64,
    pub mb_freed: f64,
    /// GC-thread CPU, ms (also in `cpu_ms.by_category.gc`).
    pub cpu_ms: f64,
    /// GC threads' stalls on page faults (swapped-out heap pages), ms.
    pub fault_stall_ms: f64,
    /// Collections triggered during hot launches, and their main-thread flip pauses (ms).
    pub launch_collections: u64,
    pub launch_pause_ms: f64,
}

/// Pressure stall information for memory, cumulative milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Psi {
    /// Time some task was stalled on memory.
    pub some_ms: f64,
    /// Time all non-idle tasks were stalled on memory.
    pub full_ms: f64,
}

/// Results of one app under one policy.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AppResult {
    pub app: String,
    pub launches_hot: u64,
    pub launches_cold: u64,
    /// Launch requests of this app that reached no first frame (see [`Launches::interrupted`]).
    #[serde(default)]
    pub launches_interrupted: u64,
    /// Times this app's process was killed.
    pub kills: u64,
    pub hot_launch_ms: LatencySummary,
    pub cold_launch_ms: LatencySummary,
    /// Where this app's hot-launch time went, mean ms per hot launch by part (`app`, `fault`,
    /// `decompress`, `flash`, `reclaim`, `gc`, `policy`, `other`; the parts sum to the mean
    /// latency); empty without a hot launch.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub hot_launch_split_ms: BTreeMap<String, f64>,
}

/// Time series sampled during the run; all vectors have the length of `t_s`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeSeries {
    /// Sample times, simulated seconds since the start.
    pub t_s: Vec<f64>,
    /// Cached (alive, background) apps.
    pub cached_apps: Vec<u32>,
    /// Free memory, MiB.
    pub free_mb: Vec<f64>,
    /// Anonymous pages resident in RAM, MiB.
    pub anon_mb: Vec<f64>,
    /// File pages resident in RAM (page cache), MiB.
    pub file_mb: Vec<f64>,
    /// Anonymous data swapped out (uncompressed size, zram + flash), MiB.
    pub swapped_mb: Vec<f64>,
    /// RAM used by zram (`mem_used_total`), MiB.
    pub zram_mb: Vec<f64>,
    /// Kernel frames allocated for processes (page tables, stacks), MiB; the system reserve is
    /// modelled as anonymous pages and counted in `anon_mb`.
    pub kernel_mb: Vec<f64>,
    /// Cumulative PSI memory "some" stall, ms.
    pub psi_some_ms: Vec<f64>,
    /// Unusable free-space index per buddy order 0..=10, one row per sample.
    #[serde(default)]
    pub unusable_index: Vec<Vec<f64>>,
    /// zram `mm_stat` over time: `orig_data_size` and `compr_data_size` (MiB), `same_pages`,
    /// `huge_pages` (`mem_used_total` is `zram_mb`).
    #[serde(default)]
    pub zram_orig_mb: Vec<f64>,
    #[serde(default)]
    pub zram_compr_mb: Vec<f64>,
    #[serde(default)]
    pub zram_same_pages: Vec<u64>,
    #[serde(default)]
    pub zram_huge_pages: Vec<u64>,
    /// Cumulative CPU in the `policy` category, ms.
    #[serde(default)]
    pub policy_cpu_ms: Vec<f64>,
}

impl TimeSeries {
    /// Number of samples (length of `t_s`).
    pub fn len(&self) -> usize {
        self.t_s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.t_s.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hist(values_us: impl IntoIterator<Item = u64>) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 1_000_000_000, 3).unwrap();
        for v in values_us {
            h.record(v).unwrap();
        }
        h
    }

    #[test]
    fn summary_of_empty_histogram_is_zero() {
        let h = hist([]);
        assert_eq!(
            LatencySummary::from_histogram(&h, 1000),
            LatencySummary::default()
        );
        assert!(cdf_from_histogram(&h, 1000, MAX_CDF_POINTS).is_empty());
    }

    #[test]
    fn summary_converts_units_and_rounds() {
        // 1..=1000 ms recorded in µs.
        let h = hist((1..=1000).map(|ms| ms * 1000));
        let s = LatencySummary::from_histogram(&h, 1000);
        assert_eq!(s.count, 1000);
        assert!((s.p50 - 500.0).abs() < 1.0, "{s:?}");
        assert!((s.p90 - 900.0).abs() < 1.0, "{s:?}");
        assert!((s.p99 - 990.0).abs() < 1.0, "{s:?}");
        assert!((s.mean - 500.5).abs() < 1.0, "{s:?}");
        assert!((s.max - 1000.0).abs() < 1.0, "{s:?}");
        for v in [s.p50, s.p90, s.p99, s.mean, s.max] {
            assert_eq!(round3(v), v);
        }
        // The same data recorded in ns gives the same summary (within histogram precision).
        let ns = LatencySummary::from_histogram(&hist((1..=1000).map(|ms| ms * 1_000_000)), 1);
        assert!((ns.p90 - s.p90).abs() < 1.0);
    }

    #[test]
    fn cdf_is_monotone_bounded_and_ends_at_one() {
        for n in [1u64, 5, 150, 10_000] {
            let h = hist((0..n).map(|i| 1000 + i * i % 7919 * 37));
            let cdf = cdf_from_histogram(&h, 1000, MAX_CDF_POINTS);
            assert!(
                cdf.len() >= 2 && cdf.len() <= MAX_CDF_POINTS,
                "n={n}: {}",
                cdf.len()
            );
            assert_eq!(cdf[0].1, 0.0);
            assert_eq!(cdf.last().unwrap().1, 1.0);
            for w in cdf.windows(2) {
                assert!(w[0].0 <= w[1].0 && w[0].1 <= w[1].1, "{w:?}");
            }
            assert_eq!(cdf, cdf_from_histogram(&h, 1000, MAX_CDF_POINTS));
        }
        let h = hist((1..=100_000).map(|i| i * 10));
        assert_eq!(cdf_from_histogram(&h, 1000, 2).len(), 2);
        assert!(cdf_from_histogram(&h, 1000, 10).len() <= 10);
    }

    #[test]
    fn round3_is_clean() {
        assert_eq!(round3(1.23456), 1.235);
        assert_eq!(round3(-0.0001), 0.0);
        assert!(round3(-0.0001).is_sign_positive());
        assert_eq!(round3(f64::NAN), 0.0);
        assert_eq!(round3(f64::INFINITY), 0.0);
    }
}
