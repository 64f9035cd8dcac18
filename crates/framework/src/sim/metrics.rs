//! What a run produces: per-app outcomes, GC totals, time-series samples and the run's output.

use super::*;

/// Per-app results.
#[derive(Debug, Clone, Serialize)]
pub struct AppOutcome {
    pub app: String,
    pub launches_hot: u64,
    pub launches_cold: u64,
    pub kills: u64,
    #[serde(skip)]
    pub hot_us: Histogram<u64>,
    #[serde(skip)]
    pub cold_us: Histogram<u64>,
}

/// One time-series sample.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Sample {
    pub t: Nanos,
    pub cached_apps: u32,
    pub alive_apps: u32,
    pub free_pages: u64,
    pub anon_pages: u64,
    pub file_pages: u64,
    pub swapped_pages: u64,
    pub backend_pages: u64,
    pub kernel_pages: u64,
    pub psi_some_ns: u64,
}

/// Java garbage collections over a run (all apps).
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct GcSummary {
    pub collections: u64,
    pub full: u64,
    pub sticky: u64,
    /// Objects visited by the collectors.
    pub visits: u64,
    pub bytes_copied: u64,
    pub bytes_freed: u64,
    /// GC CPU (also in the CPU ledger under `gc`).
    pub cpu_ns: u64,
    /// Time GC threads stalled on page faults (swapped-out heap pages).
    pub fault_stall_ns: u64,
    /// Flip pauses of the collections triggered during hot launches (main-thread stalls; a
    /// blocking collection's full duration is in the launch time too).
    pub launch_pause_ns: u64,
    /// Collections triggered during hot launches.
    pub launch_collections: u64,
    /// Collections of apps in the background (transition and background allocation/churn).
    pub background_collections: u64,
}

/// Everything a run produced (the report layer turns it into JSON/CSV/HTML).
pub struct SimOutput {
    pub hot_us: Histogram<u64>,
    pub cold_us: Histogram<u64>,
    pub alloc_us: Histogram<u64>,
    /// Latency of each `Alloc` action, in order (ms).
    pub alloc_ms: Vec<f64>,
    pub per_app: Vec<AppOutcome>,
    pub kills: BTreeMap<&'static str, u64>,
    pub samples: Vec<Sample>,
    pub simulated: Nanos,
    /// Foreground main-thread stall outside launches (jank), total.
    pub fg_stall_ns: Nanos,
    pub gc: GcSummary,
    /// Most cached (alive, not foreground) apps at any moment (checked at every lifecycle change).
    pub cached_peak: u32,
    /// Most apps alive at once (cached + foreground).
    pub alive_peak: u32,
    /// Cached apps just before the first kill that was not the user's (`None`: no such kill).
    pub cached_at_first_kill: Option<u32>,
    pub energy_j: f64,
    pub kernel: Kernel,
}

impl SimOutput {
    pub fn cached_max(&self) -> u32 {
        self.samples.iter().map(|s| s.cached_apps).max().unwrap_or(0)
    }

    pub fn cached_mean(&self) -> f64 {
        if self.samples.is_empty() {
            return 0.0;
        }
        self.samples.iter().map(|s| s.cached_apps as f64).sum::<f64>() / self.samples.len() as f64
    }
}

impl Simulation {
    pub(super) fn sample(&mut self, t: Nanos) {
        let mi = self.k.meminfo();
        let cached = self.cached_count();
        let alive = self.rt.iter().filter(|r| r.pid.is_some()).count() as u32;
        self.samples.push(Sample {
            t,
            cached_apps: cached,
            alive_apps: alive,
            free_pages: mi.free,
            anon_pages: mi.anon_resident,
            file_pages: mi.file_resident,
            swapped_pages: mi.swapped,
            backend_pages: mi.backend_frames,
            kernel_pages: mi.kernel_frames,
            psi_some_ns: self.k.psi.some_total_ns,
        });
    }
}
