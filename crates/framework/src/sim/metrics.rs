//! What a run produces: per-app outcomes, GC totals, time-series samples and the run's output.

use super::*;

/// Per-app results.
#[derive(Debug, Clone, Serialize)]
pub struct AppOutcome {
    pub app: String,
    pub launches_hot: u64,
    pub launches_cold: u64,
    /// Launch requests: `Launch` actions for an app not already in the foreground. Each ends as
    /// exactly one of a completed hot launch, a completed cold launch or an interrupted launch,
    /// so `requested = launches_hot + launches_cold + launches_interrupted`.
    pub launches_requested: u64,
    /// Launch requests that reached no first frame: the process was killed mid-launch (kernel
    /// OOM kill while faulting or allocating) and, for a hot launch, the cold relaunch failed too.
    pub launches_interrupted: u64,
    /// Hot launches whose process was killed mid-launch and which were redone cold (the request
    /// then counts as cold, or as interrupted if the cold launch failed too).
    pub hot_killed: u64,
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
    /// Unusable free-space index per buddy order 0..=10 (DESIGN §3.3).
    pub unusable_index: [f64; kernel::types::NR_ORDERS],
    /// zram `mm_stat` summed over zram devices: `orig_data_size`, `compr_data_size`,
    /// `mem_used_total` (bytes), `same_pages`, `huge_pages`.
    pub zram: ZramSample,
    /// Cumulative CPU in the `policy` category (all actors).
    pub policy_cpu_ns: u64,
    /// Free frames held by the placement policy (`MemInfo::held_free`, included in `free_pages`).
    pub held_free_pages: u64,
}

/// The `mm_stat` fields sampled over time.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct ZramSample {
    pub orig_data_size: u64,
    pub compr_data_size: u64,
    pub mem_used_total: u64,
    pub same_pages: u64,
    pub huge_pages: u64,
}

impl ZramSample {
    /// Sum of the `mm_stat` fields reported by `backends` (devices without them add nothing).
    pub fn of(backends: &[Box<dyn kernel::swap::SwapBackend>]) -> Self {
        let mut z = ZramSample::default();
        for b in backends {
            for (name, v) in b.stats() {
                match name {
                    "orig_data_size" => z.orig_data_size += v,
                    "compr_data_size" => z.compr_data_size += v,
                    "mem_used_total" => z.mem_used_total += v,
                    "same_pages" => z.same_pages += v,
                    "huge_pages" => z.huge_pages += v,
                    _ => {}
                }
            }
        }
        z
    }
}

/// One garbage collection, with the state of its app when it ran.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct GcRecord {
    /// Start, simulated ns.
    pub t: Nanos,
    pub app: u32,
    pub state: AppState,
    pub cause: runtime::GcCause,
    pub sticky: bool,
    pub compacting: bool,
    /// Objects the collector visited.
    pub visits: u64,
    pub bytes_copied: u64,
    pub pages_touched: u64,
    pub cpu_ns: Nanos,
    /// GC-thread fault stalls.
    pub stall_ns: Nanos,
    /// Main-thread pause.
    pub pause_ns: Nanos,
}

/// One launch the user saw, hot or cold (observation only: recorded as a launch completes).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct LaunchRecord {
    /// When the user asked for the app, simulated ns.
    pub t: Nanos,
    /// First frame, simulated ns.
    pub end: Nanos,
    pub app: u32,
    /// Launch context (the app's access-model context).
    pub context: u32,
    pub hot: bool,
    /// Where the launch's time went.
    pub split: LaunchSplit,
}

/// Where a launch's time (request to first frame) went, ns: the launching main thread's CPU by
/// category, its flash-read waits, and the rest (`other`: GC pauses it waited for, reclaim
/// throttling and writeback waits, any stall without main-thread CPU). The parts sum to the
/// launch latency. Main-thread CPU is told apart by actor kind only, which is exact because a
/// launch runs to its first frame without another app's main thread running in between.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct LaunchSplit {
    /// The app's own work (profile resume/init time).
    pub app_ns: Nanos,
    /// Fault handling outside (de)compression and I/O.
    pub fault_ns: Nanos,
    /// Decompression of swapped-in pages on the faulting thread.
    pub decompress_ns: Nanos,
    /// Waiting for flash reads (file pages, flash swap, zram writeback).
    pub flash_ns: Nanos,
    /// Direct reclaim (scan, compress, compaction) the launch's allocations triggered.
    pub reclaim_ns: Nanos,
    pub gc_ns: Nanos,
    /// The policy's hooks, process creation and kills.
    pub policy_ns: Nanos,
    pub other_ns: Nanos,
}

/// The counters [`LaunchSplit`] is measured from, read when a launch starts.
#[derive(Debug, Clone, Copy)]
pub(super) struct SplitMark {
    cpu: [Nanos; Category::ALL.len()],
    read_wait: Nanos,
}

impl SplitMark {
    pub(super) fn read(k: &Kernel) -> Self {
        SplitMark {
            cpu: Category::ALL.map(|c| k.cpu.of_kind(Actor::AppMain(0), c)),
            read_wait: k.vmstat.app_read_wait_ns,
        }
    }

    /// The split of `wall` ns since this mark.
    pub(super) fn split(&self, k: &Kernel, wall: Nanos) -> LaunchSplit {
        let now = Self::read(k);
        let d = |c: Category| now.cpu[c.index()] - self.cpu[c.index()];
        let mut s = LaunchSplit {
            app_ns: d(Category::App),
            fault_ns: d(Category::Fault),
            decompress_ns: d(Category::Decompress),
            flash_ns: now.read_wait - self.read_wait,
            reclaim_ns: d(Category::Reclaim) + d(Category::Compress) + d(Category::Compaction),
            gc_ns: d(Category::Gc),
            policy_ns: d(Category::Policy) + d(Category::Lifecycle),
            other_ns: 0,
        };
        s.other_ns = wall.saturating_sub(s.sum());
        s
    }
}

impl LaunchSplit {
    /// Sum of the measured parts (without `other`).
    pub fn sum(&self) -> Nanos {
        self.app_ns
            + self.fault_ns
            + self.decompress_ns
            + self.flash_ns
            + self.reclaim_ns
            + self.gc_ns
            + self.policy_ns
    }

    /// `(name, ns)` of every part, in a fixed order.
    pub fn parts(&self) -> [(&'static str, f64); 8] {
        [
            ("app", self.app_ns as f64),
            ("fault", self.fault_ns as f64),
            ("decompress", self.decompress_ns as f64),
            ("flash", self.flash_ns as f64),
            ("reclaim", self.reclaim_ns as f64),
            ("gc", self.gc_ns as f64),
            ("policy", self.policy_ns as f64),
            ("other", self.other_ns as f64),
        ]
    }

    /// Every part times `f` (rounded down), e.g. a mean from a sum.
    pub fn scaled(&self, f: f64) -> LaunchSplit {
        let m = |x: Nanos| (x as f64 * f) as Nanos;
        LaunchSplit {
            app_ns: m(self.app_ns),
            fault_ns: m(self.fault_ns),
            decompress_ns: m(self.decompress_ns),
            flash_ns: m(self.flash_ns),
            reclaim_ns: m(self.reclaim_ns),
            gc_ns: m(self.gc_ns),
            policy_ns: m(self.policy_ns),
            other_ns: m(self.other_ns),
        }
    }

    pub fn add(&mut self, o: &LaunchSplit) {
        self.app_ns += o.app_ns;
        self.fault_ns += o.fault_ns;
        self.decompress_ns += o.decompress_ns;
        self.flash_ns += o.flash_ns;
        self.reclaim_ns += o.reclaim_ns;
        self.gc_ns += o.gc_ns;
        self.policy_ns += o.policy_ns;
        self.other_ns += o.other_ns;
    }
}

/// One process death (observation only), with its reason's name (`KillReason::name`).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct KillRecord {
    pub t: Nanos,
    pub app: u32,
    pub reason: &'static str,
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

/// One churn round of an app's Java code: when it started and when its main thread finished it
/// (start + the round's stall).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChurnRound {
    pub app: u32,
    pub start: Nanos,
    pub end: Nanos,
}

/// Everything a run produced (the report layer turns it into JSON/CSV/HTML).
pub struct SimOutput {
    pub hot_us: Histogram<u64>,
    pub cold_us: Histogram<u64>,
    pub alloc_us: Histogram<u64>,
    /// Latency of each `Alloc` action, in order (ms).
    pub alloc_ms: Vec<f64>,
    /// Every churn round of the apps' Java code, in the order they ran.
    pub churn_rounds: Vec<ChurnRound>,
    /// Figures the policy reports about itself ([`super::FrameworkHooks::metrics`]; stock: none).
    pub policy_metrics: BTreeMap<String, f64>,
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
    /// Cached-app compactions (CachedAppOptimizer full compactions) performed.
    pub app_compactions: u64,
    /// Anonymous pages apps released at `TRIM_MEMORY_UI_HIDDEN` (window buffers, GPU cache).
    pub ui_released_pages: u64,
    pub energy_j: f64,
    /// Every collection of the run, in the order they ran.
    pub gcs: Vec<GcRecord>,
    /// Every completed launch, in the order they completed.
    pub launch_log: Vec<LaunchRecord>,
    /// Every process death, in order.
    pub kill_log: Vec<KillRecord>,
    /// Periodic invariant checks of the run (none unless `SimConfig::invariant_check_every`).
    pub invariant_checks: InvariantChecks,
    pub kernel: Kernel,
}

/// Invariant checks done during a run and the first violation found.
#[derive(Debug, Clone, Default, Serialize)]
pub struct InvariantChecks {
    pub done: u64,
    /// Simulated time of the last check.
    pub last_ns: Nanos,
    /// The first violation, with its simulated time.
    pub first_violation: Option<String>,
}

impl SimOutput {
    /// Mean split of app `app`'s hot launches (each part's mean, ns), `None` without one.
    pub fn hot_split(&self, app: usize) -> Option<[(&'static str, f64); 8]> {
        let mut sum = LaunchSplit::default();
        let mut n = 0u64;
        for l in self.launch_log.iter().filter(|l| l.hot && l.app as usize == app) {
            sum.add(&l.split);
            n += 1;
        }
        (n > 0).then(|| sum.parts().map(|(name, v)| (name, v / n as f64)))
    }

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
            unusable_index: {
                let counts = self.k.buddy().free_block_counts();
                std::array::from_fn(|o| kernel::buddy::unusable_index(&counts, o as u8))
            },
            zram: ZramSample::of(self.k.backends()),
            policy_cpu_ns: self.k.cpu.by_category(Category::Policy),
            held_free_pages: mi.held_free,
        });
    }
}
