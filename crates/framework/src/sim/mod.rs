//! The framework simulation: a user's actions drive app lifecycles on one simulated kernel.
//!
//! Split by concern: this file holds the model types, the event loop and the set-up;
//! [`lifecycle`] launches and state changes, [`activity`] the app's page accesses in each state,
//! [`java`] the glue to each app's managed runtime, [`kills`] lmkd, the cached-app limit and
//! process death, [`metrics`] the run's outputs and time-series samples, [`hooks`] the policy's
//! framework hooks.

mod activity;
pub mod hooks;
mod io;
mod java;
mod kills;
mod lifecycle;
pub mod metrics;
mod writes;

pub use hooks::*;
pub use io::IoBufferDemand;
pub use kills::cached_process_limit;
pub use metrics::*;

use crate::adj::*;
use crate::lmkd::{Candidate, KillReason, Lmkd, LmkdConfig, MemSnapshot};
use content::ContentId;
use device::DeviceProfile;
use engine::{Actor, Category, EventQueue, Nanos, RngStreams, SimRng, Stall, NS_PER_MS, NS_PER_SEC};
use hdrhistogram::Histogram;
use kernel::mm::ContentSource;
use kernel::types::*;
use kernel::{Kernel, KernelError};
use rand::Rng;
pub use runtime::JavaModel;
use runtime::{JavaApp, RuntimeHooks};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which pages an app touches in each phase, as offsets into its page space
/// (`[0, java)` Java heap, then native anon, then file pages).
pub trait AccessSets {
    /// Number of launch contexts (MemSaver Table 1), at least 1.
    fn contexts(&self) -> usize;
    /// Pages a hot launch of `context` touches, for its `n`-th launch in that context.
    fn launch_set(&mut self, context: usize, n: u32) -> Vec<u32>;
    /// Foreground working set.
    fn foreground_ws(&self) -> &[u32];
    /// Transition working set B1 of `context` (touched in the ~5 s after leaving the foreground).
    fn b1(&self, context: usize) -> &[u32];
    /// Stable background working set B2.
    fn b2(&self) -> &[u32];
}

/// Creates each app process's runtime hooks (stock ART, or a policy's), given the app index.
pub type RuntimeHooksFactory = Box<dyn FnMut(usize) -> Box<dyn RuntimeHooks>>;

/// The policy's hooks into the framework and each app's runtime.
pub struct StackHooks {
    pub framework: Box<dyn FrameworkHooks>,
    pub runtime: RuntimeHooksFactory,
}

/// Stock ART for every app.
pub fn stock_runtime() -> RuntimeHooksFactory {
    Box::new(|_| Box::new(runtime::StockArt))
}

/// An app as the framework needs it (built from an app profile).
pub struct AppModel {
    pub name: String,
    pub java_pages: u32,
    pub native_pages: u32,
    pub file_pages: u32,
    /// Fraction of the anonymous footprint built during a cold launch (the rest grows in the
    /// foreground over `growth`).
    pub start_anon_fraction: f64,
    pub growth: Nanos,
    /// App initialisation work of a cold launch on the device (the profile's value scaled by
    /// the device's CPU speed).
    pub cold_init: Nanos,
    /// Resume work of a hot launch on the device (scaled likewise).
    pub hot_resume: Nanos,
    pub threads: u32,
    /// Content pool of the app's pages.
    pub content_base: ContentId,
    pub content_len: u32,
    pub access: Box<dyn AccessSets>,
    /// The Java heap (its `java_pages` logical pages are the access model's `[0, java_pages)`).
    pub java: JavaModel,
    /// Size of the app's I/O buffers relative to [`IoBufferDemand::mb`] (profile
    /// `io_buffer_scale`).
    pub io_buffer_scale: f64,
    /// Pages of the app's written data files (profile `[writes]`; 0: none). Mapped after the
    /// app's other regions; see `writes.rs`.
    pub data_pages: u32,
    /// Page writes per second to the data files in the foreground and in the background.
    pub fg_write_pages_per_s: f64,
    pub bg_write_pages_per_s: f64,
    /// Anonymous pages the app releases when its UI is hidden (window buffers, GPU cache above
    /// the background limit; `apps::AppProfile::ui_hidden_pages`) and re-creates at its next
    /// first frame: the first pages of its native region (see `lifecycle.rs`). 0: none.
    pub ui_pages: u32,
}

impl AppModel {
    pub fn anon_pages(&self) -> u32 {
        self.java_pages + self.native_pages
    }
}

/// One thing the user does. An app launched stays in the foreground (and is used) until the
/// next launch or `Home`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum UserAction {
    /// Bring `app` to the foreground in `context` (cold launch if not running, else hot).
    Launch { at: Nanos, app: usize, context: usize },
    /// Go to the home screen: the foreground app moves to the background.
    Home { at: Nanos },
    /// `app` allocates and writes `pages` new anonymous pages (Marvin Fig. 3).
    Alloc { at: Nanos, app: usize, pages: u32 },
    /// Force-stop `app`.
    Kill { at: Nanos, app: usize },
}

impl UserAction {
    pub fn at(&self) -> Nanos {
        match *self {
            UserAction::Launch { at, .. }
            | UserAction::Home { at }
            | UserAction::Alloc { at, .. }
            | UserAction::Kill { at, .. } => at,
        }
    }

    pub fn app(&self) -> Option<usize> {
        match *self {
            UserAction::Launch { app, .. } | UserAction::Alloc { app, .. } | UserAction::Kill { app, .. } => {
                Some(app)
            }
            UserAction::Home { .. } => None,
        }
    }
}

/// Framework parameters.
#[derive(Debug, Clone, Serialize)]
pub struct SimConfig {
    pub lmkd: LmkdConfig,
    /// ActivityManagerConstants `max_cached_processes` (CUR_MAX_CACHED_PROCESSES, 32 by default);
    /// half of it is the empty-process share, so 16 cached apps plus the previous app stay
    /// (`kills.rs`, `cached_process_limit`).
    pub max_cached: usize,
    /// Length of the background transition state (MemSaver §3.1: ~5 s).
    pub transition: Nanos,
    /// Foreground working-set touches: one batch per tick.
    pub fg_tick: Nanos,
    pub fg_pages_per_tick: u32,
    /// Background (B2) touches of each cached app: one batch per tick.
    pub bg_tick: Nanos,
    pub bg_pages_per_tick: u32,
    /// Time-series sampling period.
    pub sample_every: Nanos,
    /// CachedAppOptimizer "full" compaction of apps when they become cached (device
    /// `android.app_compaction`).
    pub app_compaction: bool,
    /// I/O-buffer (camera/display, ION-style) demand of foreground apps; `None`: no I/O buffers.
    pub io_buffers: Option<IoBufferDemand>,
    pub seed: u64,
    /// Check the kernel's and every Java heap's invariants at the first time-series sample at
    /// least this long after the previous check (0 = never; soak tests). Read-only: results do
    /// not change.
    #[serde(skip_serializing_if = "is_zero")]
    pub invariant_check_every: Nanos,
}

fn is_zero(n: &Nanos) -> bool {
    *n == 0
}

impl SimConfig {
    /// [`SimConfig::defaults`] with the stock features of `device`'s Android and kernel release
    /// (lmkd mode and rules, cached-app compaction; `DeviceProfile::stock`).
    pub fn for_device(device: &DeviceProfile, seed: u64) -> Self {
        let mut cfg = Self::defaults(seed);
        cfg.apply_release(device);
        cfg
    }

    /// Set the release-decided fields from `device` (after its `[android]` section changed).
    pub fn apply_release(&mut self, device: &DeviceProfile) {
        let stock = device.stock();
        self.app_compaction = stock.app_compaction;
        self.lmkd.low_mem_kill = stock.lmkd_low_mem;
        self.lmkd.mode = stock.lmkd;
        self.lmkd.kills = stock.lmkd_kills;
        self.lmkd.minfree = stock.minfree.to_vec();
    }

    pub fn defaults(seed: u64) -> Self {
        SimConfig {
            lmkd: LmkdConfig::aosp(false),
            max_cached: 32,
            transition: 5 * NS_PER_SEC,
            fg_tick: 200 * NS_PER_MS,
            fg_pages_per_tick: 48,
            bg_tick: 30 * NS_PER_SEC,
            bg_pages_per_tick: 16,
            sample_every: 10 * NS_PER_SEC,
            app_compaction: false,
            io_buffers: None,
            invariant_check_every: 0,
            seed,
        }
    }
}

/// What an app is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum AppState {
    NotRunning,
    Foreground,
    /// Left the foreground less than `transition` ago.
    Transition,
    Background,
}

impl AppState {
    /// Lower-case name used in reports.
    pub fn name(self) -> &'static str {
        match self {
            AppState::NotRunning => "not_running",
            AppState::Foreground => "foreground",
            AppState::Transition => "transition",
            AppState::Background => "background",
        }
    }
}

/// What policies see of an app at a lifecycle callback.
#[derive(Debug, Clone)]
pub struct AppView {
    pub app: usize,
    pub pid: Pid,
    pub now: Nanos,
    pub state: AppState,
    /// Launch context of the app's latest launch (MemSaver Table 1).
    pub context: usize,
    pub native_first: PageIdx,
    pub native_pages: u32,
    pub file_first: PageIdx,
    pub file_pages: u32,
    /// The Java heap's mapped page ranges `(first, pages)`: used regions and large objects
    /// (empty when the app has no running heap).
    pub java_ranges: Vec<(PageIdx, u32)>,
}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Action(usize),
    TransitionEnd {
        app: usize,
        gen: u32,
    },
    FgTick {
        app: usize,
        gen: u32,
    },
    BgTick {
        app: usize,
        gen: u32,
    },
    B1Touch {
        app: usize,
        gen: u32,
    },
    /// A GC the runtime scheduled (ART's collector transition), for the process incarnation `inc`.
    JavaGc {
        app: usize,
        inc: u64,
    },
    /// A churn round of the app's Java code (every state), for the process incarnation `inc`.
    Churn {
        app: usize,
        inc: u64,
    },
    /// The foreground app's next I/O buffer of launch `gen` (see `io`).
    IoBuffer {
        app: usize,
        gen: u32,
    },
    /// A timer a policy hook scheduled.
    PolicyTimer {
        token: u64,
    },
    LmkdPoll,
    Sample,
}

struct AppRt {
    state: AppState,
    pid: Option<Pid>,
    java: Option<JavaApp>,
    native_first: PageIdx,
    file_first: PageIdx,
    /// First page of the data files (valid when the model has `data_pages`).
    data_first: PageIdx,
    /// Fractional page writes carried to the next tick.
    write_credit: f64,
    /// Hot data pages held in SQLite's own page cache this process life (`writes.rs`).
    sqlite_cached: Vec<bool>,
    /// Anonymous pages built so far (cold start + foreground growth).
    built: u32,
    /// UI pages of this process life (the model's `ui_pages`, at most its native start pages).
    ui_pages: u32,
    /// The UI pages are released (the app's UI is hidden and not re-created yet).
    ui_hidden: bool,
    gen: u32,
    context: usize,
    launches_in_ctx: Vec<u32>,
    last_fg: Nanos,
    /// Unique per process incarnation (also lmkd's age order).
    lmkd_seq: u64,
    /// Due time of the runtime GC event already queued.
    gc_due: Option<Nanos>,
}

/// A running framework over a kernel.
pub struct Simulation {
    pub k: Kernel,
    device: DeviceProfile,
    cfg: SimConfig,
    apps: Vec<AppModel>,
    rt: Vec<AppRt>,
    actions: Vec<UserAction>,
    hooks: Box<dyn FrameworkHooks>,
    runtime_hooks: RuntimeHooksFactory,
    lmkd: Lmkd,
    q: EventQueue<Ev>,
    rng: SimRng,
    /// Which data-file page each app write hits (its own stream: writes do not shift the draws
    /// of the other events).
    write_rng: SimRng,
    foreground: Option<usize>,
    seq: u64,
    out_hot: Histogram<u64>,
    out_cold: Histogram<u64>,
    out_alloc: Histogram<u64>,
    alloc_ms: Vec<f64>,
    churn_rounds: Vec<ChurnRound>,
    per_app: Vec<AppOutcome>,
    kills: BTreeMap<&'static str, u64>,
    samples: Vec<Sample>,
    fg_stall_ns: Nanos,
    gc: GcSummary,
    cached_peak: u32,
    alive_peak: u32,
    cached_at_first_kill: Option<u32>,
    app_compactions: u64,
    ui_released_pages: u64,
    gcs: Vec<GcRecord>,
    launch_log: Vec<LaunchRecord>,
    /// Counters at the start of the current launch (for its [`LaunchSplit`]).
    launch_mark: SplitMark,
    kill_log: Vec<KillRecord>,
    end: Nanos,
    io: io::IoState,
    checks: metrics::InvariantChecks,
}

fn hist() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, 3).expect("histogram bounds")
}

impl Simulation {
    /// Set up the device: the kernel (already built with the policy's backends and hooks) and
    /// the always-running system processes holding `memory.system_reserve_mb`.
    pub fn new(
        mut k: Kernel,
        device: DeviceProfile,
        cfg: SimConfig,
        apps: Vec<AppModel>,
        actions: Vec<UserAction>,
        end: Nanos,
        hooks: StackHooks,
    ) -> Result<Self, String> {
        let StackHooks {
            framework: hooks,
            runtime: runtime_hooks,
        } = hooks;
        for a in &actions {
            if let Some(app) = a.app() {
                if app >= apps.len() {
                    return Err(format!(
                        "user action refers to app #{app} but the scenario has {} apps",
                        apps.len()
                    ));
                }
            }
        }
        // system_server & co: unkillable; their anonymous memory is resident (touched
        // regularly), their mapped code and resources (`memory.system_file_mb`) are file pages.
        let sys_pages = device.system_reserve_pages() as u32;
        let sys_file = (device.system_file_pages() as u32).min(sys_pages);
        if sys_pages > 0 {
            let pid = k.spawn("system_server", SYSTEM_ADJ, 128);
            k.set_proc_class(pid, ProcClass::Persistent);
            let src = ContentSource {
                base: apps.first().map_or(0, |a| a.content_base),
                len: 64,
                seed: 0x5157,
            };
            let anon = sys_pages - sys_file;
            if anon > 0 {
                let first = k
                    .mmap(pid, anon, PageKind::NativeAnon, false, src)
                    .map_err(|e| e.to_string())?;
                k.access_range(0, Actor::AppMain(pid), first, anon, true)
                    .map_err(|e| e.to_string())?;
                // The system's heaps are hot: not a reclaim candidate (like mlocked/active use).
                k.madvise(0, Actor::AppMain(pid), first, anon, Advice::Mlock);
            }
            if sys_file > 0 {
                // Read in at boot; afterwards ordinary clean file pages on the LRU.
                let first = k
                    .mmap(pid, sys_file, PageKind::File, true, src)
                    .map_err(|e| e.to_string())?;
                k.access_range(0, Actor::AppMain(pid), first, sys_file, false)
                    .map_err(|e| e.to_string())?;
            }
        }
        let streams = RngStreams::new(cfg.seed);
        let rt = apps
            .iter()
            .map(|a| AppRt {
                state: AppState::NotRunning,
                pid: None,
                java: None,
                native_first: 0,
                file_first: 0,
                data_first: 0,
                write_credit: 0.0,
                sqlite_cached: Vec::new(),
                built: 0,
                ui_pages: 0,
                ui_hidden: false,
                gen: 0,
                context: 0,
                launches_in_ctx: vec![0; a.access.contexts().max(1)],
                last_fg: 0,
                lmkd_seq: 0,
                gc_due: None,
            })
            .collect();
        let per_app = apps
            .iter()
            .map(|a| AppOutcome {
                app: a.name.clone(),
                launches_hot: 0,
                launches_cold: 0,
                launches_requested: 0,
                launches_interrupted: 0,
                hot_killed: 0,
                kills: 0,
                hot_us: hist(),
                cold_us: hist(),
            })
            .collect();
        let mut q = EventQueue::new();
        for (i, a) in actions.iter().enumerate() {
            q.push(a.at(), Ev::Action(i));
        }
        let end = actions.iter().map(|a| a.at()).max().unwrap_or(0).max(end);
        q.push(0, Ev::LmkdPoll);
        q.push(0, Ev::Sample);
        let launch_mark = SplitMark::read(&k);
        Ok(Simulation {
            k,
            lmkd: Lmkd::new(cfg.lmkd.clone()),
            rng: streams.stream("framework", 0),
            write_rng: streams.stream("file-writes", 0),
            device,
            cfg,
            apps,
            rt,
            actions,
            hooks,
            runtime_hooks,
            q,
            foreground: None,
            seq: 0,
            out_hot: hist(),
            out_cold: hist(),
            out_alloc: hist(),
            alloc_ms: Vec::new(),
            churn_rounds: Vec::new(),
            per_app,
            kills: BTreeMap::new(),
            samples: Vec::new(),
            fg_stall_ns: 0,
            gc: GcSummary::default(),
            cached_peak: 0,
            alive_peak: 0,
            cached_at_first_kill: None,
            app_compactions: 0,
            ui_released_pages: 0,
            io: io::IoState::default(),
            gcs: Vec::new(),
            launch_log: Vec::new(),
            launch_mark,
            kill_log: Vec::new(),
            end,
            checks: Default::default(),
        })
    }

    fn view(&self, app: usize, now: Nanos) -> AppView {
        let (r, m) = (&self.rt[app], &self.apps[app]);
        AppView {
            app,
            pid: r.pid.unwrap_or(NIL),
            now,
            state: r.state,
            context: r.context,
            native_first: r.native_first,
            native_pages: m.native_pages,
            file_first: r.file_first,
            file_pages: m.file_pages,
            java_ranges: r.java.as_ref().map(|j| j.mapped_ranges()).unwrap_or_default(),
        }
    }

    /// Page index of offset `off` (native or file; Java pages go through the runtime) in `app`'s
    /// page space.
    fn page_of(&self, app: usize, off: u32) -> PageIdx {
        let (r, m) = (&self.rt[app], &self.apps[app]);
        debug_assert!(off >= m.java_pages);
        if off < m.java_pages + m.native_pages {
            r.native_first + off - m.java_pages
        } else {
            r.file_first + off - m.java_pages - m.native_pages
        }
    }

    /// Run to the end; `progress(done_actions, total)` is called as actions are processed.
    pub fn run(mut self, mut progress: impl FnMut(u64, u64)) -> SimOutput {
        let total = self.actions.len() as u64;
        let mut done = 0u64;
        while let Some((t, ev)) = self.q.pop() {
            if t > self.end && !matches!(ev, Ev::Action(_)) {
                continue;
            }
            self.k.advance_to(t);
            self.collect_oom_kills(t);
            match ev {
                Ev::Action(i) => {
                    match self.actions[i] {
                        UserAction::Launch { at, app, context } => self.launch(at, app, context),
                        UserAction::Home { at } => {
                            self.k.set_foreground_task(at, None);
                            if let Some(prev) = self.foreground.take() {
                                self.send_to_background(at, prev);
                                self.update_cached(at);
                            }
                            self.io_home_window(at);
                        }
                        UserAction::Alloc { at, app, pages } => self.alloc(at, app, pages),
                        UserAction::Kill { at, app } => self.kill(at, app, KillReason::User),
                    }
                    done += 1;
                    progress(done, total);
                }
                Ev::TransitionEnd { app, gen } => self.transition_end(t, app, gen),
                Ev::FgTick { app, gen } => self.fg_tick(t, app, gen),
                Ev::BgTick { app, gen } => self.bg_tick(t, app, gen),
                Ev::B1Touch { app, gen } => self.b1_touch(t, app, gen),
                Ev::JavaGc { app, inc } => self.java_gc(t, app, inc),
                Ev::Churn { app, inc } => self.churn(t, app, inc),
                Ev::IoBuffer { app, gen } => self.io_buffer_due(t, app, gen),
                Ev::PolicyTimer { token } => {
                    self.framework_hook(t, Actor::Kernel, |h, k| h.on_timer(k, token));
                }
                Ev::LmkdPoll => self.lmkd_poll(t),
                Ev::Sample => {
                    self.sample(t);
                    self.maybe_check_invariants(t);
                    if t + self.cfg.sample_every <= self.end {
                        self.q.push(t + self.cfg.sample_every, Ev::Sample);
                    }
                }
            }
            self.collect_oom_kills(t);
            self.queue_timers(t);
        }
        self.k.advance_to(self.end);
        self.sample(self.end);
        for app in 0..self.rt.len() {
            self.retire_java(app);
        }
        let mut policy_metrics = BTreeMap::new();
        self.hooks.metrics(&mut policy_metrics);
        let cpu_ns = self.k.cpu.total();
        let energy_j = self.device.cpu_energy_nj(cpu_ns) / 1e9
            + self.device.flash_read_energy_nj(self.k.flash.bytes_read) / 1e9
            + self.device.flash_write_energy_nj(self.k.flash.bytes_written) / 1e9;
        SimOutput {
            hot_us: self.out_hot,
            cold_us: self.out_cold,
            alloc_us: self.out_alloc,
            alloc_ms: self.alloc_ms,
            churn_rounds: self.churn_rounds,
            policy_metrics,
            per_app: self.per_app,
            kills: self.kills,
            samples: self.samples,
            simulated: self.end,
            fg_stall_ns: self.fg_stall_ns,
            gc: self.gc,
            cached_peak: self.cached_peak,
            alive_peak: self.alive_peak,
            cached_at_first_kill: self.cached_at_first_kill,
            app_compactions: self.app_compactions,
            ui_released_pages: self.ui_released_pages,
            energy_j,
            gcs: self.gcs,
            launch_log: self.launch_log,
            kill_log: self.kill_log,
            invariant_checks: self.checks,
            kernel: self.k,
        }
    }

    /// Periodic invariant checks ([`SimConfig::invariant_check_every`]); the first violation is
    /// kept with its time, later checks still run (counted).
    fn maybe_check_invariants(&mut self, t: Nanos) {
        let every = self.cfg.invariant_check_every;
        if every == 0 || self.checks.done > 0 && t < self.checks.last_ns + every {
            return;
        }
        self.checks.done += 1;
        self.checks.last_ns = t;
        let mut heaps = self.rt.iter().filter_map(|r| r.java.as_ref());
        let res = self
            .k
            .check_invariants()
            .and_then(|_| heaps.try_for_each(|j| j.rt.heap.check_invariants()));
        if let (Err(e), None) = (res, &self.checks.first_violation) {
            self.checks.first_violation = Some(format!("at {:.3} s: {e}", t as f64 / 1e9));
        }
    }

    fn alive(&self, pid: Pid) -> bool {
        self.k.process(pid).is_some_and(|p| p.alive)
    }
}
