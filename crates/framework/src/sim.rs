//! The framework simulation: a user's actions drive app lifecycles on one simulated kernel.

use crate::adj::*;
use crate::lmkd::{Candidate, KillReason, Lmkd, LmkdConfig, MemSnapshot};
use content::ContentId;
use device::DeviceProfile;
use engine::{Actor, Category, EventQueue, Nanos, RngStreams, SimRng, NS_PER_MS, NS_PER_SEC};
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
    pub cold_init: Nanos,
    pub hot_resume: Nanos,
    pub threads: u32,
    /// Content pool of the app's pages.
    pub content_base: ContentId,
    pub content_len: u32,
    pub access: Box<dyn AccessSets>,
    /// The Java heap (its `java_pages` logical pages are the access model's `[0, java_pages)`).
    pub java: JavaModel,
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
    /// ActivityManagerConstants `max_cached_processes` (CUR_MAX_CACHED_PROCESSES, 32 by default).
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
    pub seed: u64,
}

impl SimConfig {
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

/// What policies see of an app at a lifecycle callback.
#[derive(Debug, Clone, Copy)]
pub struct AppView {
    pub app: usize,
    pub pid: Pid,
    pub now: Nanos,
    pub context: usize,
    pub native_first: PageIdx,
    pub native_pages: u32,
    pub file_first: PageIdx,
    pub file_pages: u32,
}

/// Lifecycle callbacks for policies (MemSaver pages out at transition end, Fleet hints the
/// kernel when an app goes to the background, ...). Stock Android does nothing.
pub trait FrameworkHooks {
    fn on_foreground(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_launch_end(&mut self, _k: &mut Kernel, _app: &AppView, _touched: &[PageIdx]) {}
    fn on_background(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_transition_end(&mut self, _k: &mut Kernel, _app: &AppView) {}
    fn on_killed(&mut self, _k: &mut Kernel, _app: usize) {}
}

/// Stock Android: no lifecycle hooks.
pub struct StockFramework;
impl FrameworkHooks for StockFramework {}

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
    LmkdPoll,
    Sample,
}

struct AppRt {
    state: AppState,
    pid: Option<Pid>,
    java: Option<JavaApp>,
    native_first: PageIdx,
    file_first: PageIdx,
    /// Anonymous pages built so far (cold start + foreground growth).
    built: u32,
    gen: u32,
    context: usize,
    launches_in_ctx: Vec<u32>,
    last_fg: Nanos,
    /// Unique per process incarnation (also lmkd's age order).
    lmkd_seq: u64,
    /// Due time of the runtime GC event already queued.
    gc_due: Option<Nanos>,
}

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
    foreground: Option<usize>,
    seq: u64,
    out_hot: Histogram<u64>,
    out_cold: Histogram<u64>,
    out_alloc: Histogram<u64>,
    alloc_ms: Vec<f64>,
    per_app: Vec<AppOutcome>,
    kills: BTreeMap<&'static str, u64>,
    samples: Vec<Sample>,
    fg_stall_ns: Nanos,
    gc: GcSummary,
    cached_peak: u32,
    alive_peak: u32,
    cached_at_first_kill: Option<u32>,
    end: Nanos,
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
        // system_server & co: unkillable, resident (they are touched regularly).
        let sys_pages = device.system_reserve_pages() as u32;
        if sys_pages > 0 {
            let pid = k.spawn("system_server", SYSTEM_ADJ, 128);
            let src = ContentSource {
                base: apps.first().map_or(0, |a| a.content_base),
                len: 64,
                seed: 0x5157,
            };
            let first = k
                .mmap(pid, sys_pages, PageKind::NativeAnon, false, src)
                .map_err(|e| e.to_string())?;
            k.access_range(0, Actor::AppMain(pid), first, sys_pages, true)
                .map_err(|e| e.to_string())?;
            // The system's memory is hot: it is not a reclaim candidate (like mlocked/active use).
            k.madvise(0, Actor::AppMain(pid), first, sys_pages, Advice::HotRuntime);
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
                built: 0,
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
        Ok(Simulation {
            k,
            lmkd: Lmkd::new(cfg.lmkd.clone()),
            rng: streams.stream("framework", 0),
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
            per_app,
            kills: BTreeMap::new(),
            samples: Vec::new(),
            fg_stall_ns: 0,
            gc: GcSummary::default(),
            cached_peak: 0,
            alive_peak: 0,
            cached_at_first_kill: None,
            end,
        })
    }

    fn view(&self, app: usize, now: Nanos) -> AppView {
        let (r, m) = (&self.rt[app], &self.apps[app]);
        AppView {
            app,
            pid: r.pid.unwrap_or(NIL),
            now,
            context: r.context,
            native_first: r.native_first,
            native_pages: m.native_pages,
            file_first: r.file_first,
            file_pages: m.file_pages,
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
                            if let Some(prev) = self.foreground.take() {
                                self.send_to_background(at, prev);
                                self.update_cached(at);
                            }
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
                Ev::LmkdPoll => self.lmkd_poll(t),
                Ev::Sample => {
                    self.sample(t);
                    if t + self.cfg.sample_every <= self.end {
                        self.q.push(t + self.cfg.sample_every, Ev::Sample);
                    }
                }
            }
            self.collect_oom_kills(t);
        }
        self.k.advance_to(self.end);
        self.sample(self.end);
        for app in 0..self.rt.len() {
            self.retire_java(app);
        }
        let cpu_ns = self.k.cpu.total();
        let energy_j = self.device.cpu_energy_nj(cpu_ns) / 1e9
            + self.device.flash_read_energy_nj(self.k.flash.bytes_read) / 1e9
            + self.device.flash_write_energy_nj(self.k.flash.bytes_written) / 1e9;
        SimOutput {
            hot_us: self.out_hot,
            cold_us: self.out_cold,
            alloc_us: self.out_alloc,
            alloc_ms: self.alloc_ms,
            per_app: self.per_app,
            kills: self.kills,
            samples: self.samples,
            simulated: self.end,
            fg_stall_ns: self.fg_stall_ns,
            gc: self.gc,
            cached_peak: self.cached_peak,
            alive_peak: self.alive_peak,
            cached_at_first_kill: self.cached_at_first_kill,
            energy_j,
            kernel: self.k,
        }
    }

    fn collect_oom_kills(&mut self, now: Nanos) {
        for pid in self.k.take_oom_kills() {
            if let Some(app) = self.rt.iter().position(|r| r.pid == Some(pid)) {
                self.mark_dead(now, app, KillReason::KernelOom);
            }
        }
    }

    /// Bookkeeping after a process died (the kernel already freed its memory).
    fn mark_dead(&mut self, _now: Nanos, app: usize, reason: KillReason) {
        if reason != KillReason::User && self.cached_at_first_kill.is_none() {
            self.cached_at_first_kill = Some(self.cached_count());
        }
        self.retire_java(app);
        let r = &mut self.rt[app];
        r.pid = None;
        r.state = AppState::NotRunning;
        r.built = 0;
        r.gen += 1;
        if self.foreground == Some(app) {
            self.foreground = None;
        }
        *self.kills.entry(reason.name()).or_insert(0) += 1;
        self.per_app[app].kills += 1;
        self.hooks.on_killed(&mut self.k, app);
    }

    fn kill(&mut self, now: Nanos, app: usize, reason: KillReason) {
        if let Some(pid) = self.rt[app].pid {
            self.k
                .cpu
                .charge(Actor::Lmkd, Category::Lifecycle, 200 * engine::NS_PER_US);
            self.k.exit(pid);
            self.mark_dead(now, app, reason);
        }
    }

    fn set_adj(&mut self, app: usize, adj: i16) {
        if let Some(pid) = self.rt[app].pid {
            self.k.set_oom_score_adj(pid, adj);
        }
    }

    /// Apps alive and not in the foreground.
    fn cached_count(&self) -> u32 {
        self.rt
            .iter()
            .filter(|r| r.pid.is_some() && r.state != AppState::Foreground)
            .count() as u32
    }

    /// Re-rank cached apps in LRU order (most recently used gets the lowest cached adj) and
    /// enforce the cached-process limit.
    fn update_cached(&mut self, now: Nanos) {
        self.cached_peak = self.cached_peak.max(self.cached_count());
        let alive = self.rt.iter().filter(|r| r.pid.is_some()).count() as u32;
        self.alive_peak = self.alive_peak.max(alive);
        let mut cached: Vec<usize> = (0..self.rt.len())
            .filter(|&a| self.rt[a].state == AppState::Background)
            .collect();
        cached.sort_by(|&a, &b| self.rt[b].last_fg.cmp(&self.rt[a].last_fg).then(a.cmp(&b)));
        for (rank, &a) in cached.iter().enumerate() {
            self.set_adj(a, cached_adj(rank));
        }
        while cached.len() > self.cfg.max_cached {
            let a = cached.pop().expect("nonempty");
            self.kill(now, a, KillReason::CachedLimit);
        }
    }

    /// Touch `offs` of `app` on its main thread starting at `t`, spreading `work` of CPU across
    /// the accesses; returns the end time, or `None` if the app died meanwhile.
    fn touch(
        &mut self,
        app: usize,
        t: Nanos,
        offs: &[u32],
        work: Nanos,
        write: bool,
        touched: Option<&mut Vec<PageIdx>>,
    ) -> Option<Nanos> {
        let pid = self.rt[app].pid?;
        let actor = Actor::AppMain(pid);
        let per = if offs.is_empty() {
            0
        } else {
            work / offs.len() as u64
        };
        let mut now = t;
        let mut touched = touched;
        let anon = self.apps[app].anon_pages();
        let java = self.apps[app].java_pages;
        for &off in offs {
            now += per;
            if off < java {
                let japp = self.rt[app].java.as_mut()?;
                let s = japp.touch_logical(now, actor, &[off], write, &mut self.k, touched.as_deref_mut());
                now += s.ns;
                if !self.alive(pid) {
                    self.collect_oom_kills(now);
                    return None;
                }
                continue;
            }
            let idx = self.page_of(app, off);
            // File mappings (code, resources) are read-only: writes only go to anonymous memory.
            match self.k.access(now, actor, idx, write && off < anon) {
                Ok(s) => now += s.ns,
                Err(KernelError::Killed(_)) | Err(KernelError::NotMapped(_)) => {
                    self.collect_oom_kills(now);
                    return None;
                }
                Err(_) => return None,
            }
            if let Some(v) = touched.as_deref_mut() {
                v.push(idx);
            }
        }
        self.k.cpu.charge(actor, Category::App, per * offs.len() as u64);
        Some(now)
    }

    fn launch(&mut self, now: Nanos, app: usize, context: usize) {
        // The previous foreground app leaves the foreground.
        if let Some(prev) = self.foreground.take() {
            if prev != app {
                self.send_to_background(now, prev);
            } else {
                self.foreground = Some(prev);
            }
        }
        let ctx = context.min(self.apps[app].access.contexts().max(1) - 1);
        self.rt[app].context = ctx;
        let was_fg = self.foreground == Some(app);
        let end = if self.rt[app].pid.is_some() {
            if was_fg {
                Some(now)
            } else {
                self.hot_launch(now, app, ctx)
            }
        } else {
            self.cold_launch(now, app)
        };
        let Some(end) = end else { return };
        let r = &mut self.rt[app];
        r.state = AppState::Foreground;
        r.last_fg = now;
        r.gen += 1;
        let gen = r.gen;
        self.foreground = Some(app);
        self.set_adj(app, FOREGROUND_APP_ADJ);
        let view = self.view(app, end);
        self.hooks.on_foreground(&mut self.k, &view);
        self.q.push(end + self.cfg.fg_tick, Ev::FgTick { app, gen });
        self.update_cached(now);
    }

    fn hot_launch(&mut self, now: Nanos, app: usize, ctx: usize) -> Option<Nanos> {
        let n = self.rt[app].launches_in_ctx[ctx];
        self.rt[app].launches_in_ctx[ctx] += 1;
        let set = self.apps[app].access.launch_set(ctx, n);
        let work = self.apps[app].hot_resume;
        let mut touched = Vec::with_capacity(set.len());
        // The runtime learns the app is jank-perceptible (a pending background GC is cancelled),
        // then the resumed activity allocates (GC pauses land on the launch).
        let launch_alloc = self.apps[app].java.params.launch_alloc_bytes as f64;
        let start = self.with_java(app, now, |j, k, l| {
            j.set_foreground(now, true, l);
            let gcs = j.rt.history.len();
            let c = j.alloc_garbage(now, launch_alloc, k, l);
            let new = &j.rt.history[gcs..];
            (c, new.len() as u64, new.iter().map(|g| g.pause_ns).sum::<u64>())
        });
        let start = match start {
            Some((Ok(c), n, pause)) => {
                self.gc.launch_collections += n;
                self.gc.launch_pause_ns += pause;
                now + c.main_stall.ns
            }
            _ => now,
        };
        if !self.rt[app].pid.is_some_and(|p| self.alive(p)) {
            self.collect_oom_kills(start);
            return self.cold_launch(now, app);
        }
        match self.touch(app, start, &set, work, false, Some(&mut touched)) {
            Some(end) => {
                let us = ((end - now) / 1000).max(1);
                self.out_hot.record(us).ok();
                self.per_app[app].hot_us.record(us).ok();
                self.per_app[app].launches_hot += 1;
                let view = self.view(app, end);
                self.hooks.on_launch_end(&mut self.k, &view, &touched);
                Some(end)
            }
            None => {
                // Killed while launching: the user gets a cold launch instead.
                self.cold_launch(now, app)
            }
        }
    }

    fn cold_launch(&mut self, now: Nanos, app: usize) -> Option<Nanos> {
        let m = &self.apps[app];
        let name = m.name.clone();
        let (java, native, file, threads) = (m.java_pages, m.native_pages, m.file_pages, m.threads);
        let jm = m.java.clone();
        let src = |seed: u64| ContentSource {
            base: m.content_base,
            len: m.content_len,
            seed,
        };
        let (s1, s2, s3) = (
            src(app as u64 * 3 + 1),
            src(app as u64 * 3 + 2),
            src(app as u64 * 3 + 3),
        );
        let pid = self.k.spawn(&name, FOREGROUND_APP_ADJ, threads);
        let map = |k: &mut Kernel, pages: u32, kind, exec, s| k.mmap(pid, pages.max(1), kind, exec, s);
        let mapped = (|| {
            Ok::<_, KernelError>((
                map(&mut self.k, native, PageKind::NativeAnon, false, s2)?,
                map(&mut self.k, file, PageKind::File, true, s3)?,
            ))
        })();
        let Ok((nf, ff)) = mapped else {
            self.k.exit(pid);
            return None;
        };
        // Java heap regions are mapped by the runtime as it grows; their pages get the app's
        // Java content pool.
        self.k.set_content_source(pid, s1);
        self.seq += 1;
        let hooks = (self.runtime_hooks)(app);
        let rng = RngStreams::new(self.cfg.seed).stream("java", self.seq);
        let japp = JavaApp::new(pid, &jm, hooks, java, rng, now);
        let churn_at = japp.next_churn();
        let r = &mut self.rt[app];
        r.pid = Some(pid);
        r.java = Some(japp);
        r.native_first = nf;
        r.file_first = ff;
        r.lmkd_seq = self.seq;
        let start = ((java + native) as f64 * self.apps[app].start_anon_fraction) as u32;
        r.built = start;
        // Cold launch: build the start footprint (Java then native, proportionally) and read the
        // launch files: the union of context 0's launch set file pages.
        let jstart = (start as u64 * java as u64 / (java + native).max(1) as u64) as u32;
        let mut offs: Vec<u32> = (java..java + (start - jstart)).collect();
        let set = self.apps[app].access.launch_set(0, 0);
        offs.extend(set.into_iter().filter(|&o| o >= java + native));
        let t0 = now + (self.device.cpu.process_create_ms * NS_PER_MS as f64) as Nanos;
        self.k
            .cpu
            .charge(Actor::AppMain(pid), Category::Lifecycle, t0 - now);
        if churn_at != Nanos::MAX {
            let inc = self.rt[app].lmkd_seq;
            self.q.push(churn_at, Ev::Churn { app, inc });
        }
        // The start footprint's Java objects are allocated through the runtime (GCs may run).
        let built = self.with_java(app, t0, |j, k, l| j.build_to(t0, jstart, k, l));
        let t1 = match built {
            Some(Ok(c)) if self.alive(pid) => t0 + c.main_stall.ns,
            _ => {
                self.collect_oom_kills(t0);
                return None;
            }
        };
        let work = self.apps[app].cold_init;
        let end = self.touch(app, t1, &offs, work, true, None)?;
        let us = ((end - now) / 1000).max(1);
        self.out_cold.record(us).ok();
        self.per_app[app].cold_us.record(us).ok();
        self.per_app[app].launches_cold += 1;
        Some(end)
    }

    fn send_to_background(&mut self, now: Nanos, app: usize) {
        if self.rt[app].pid.is_none() {
            return;
        }
        let r = &mut self.rt[app];
        r.state = AppState::Transition;
        r.gen += 1;
        let gen = r.gen;
        self.set_adj(app, PREVIOUS_APP_ADJ);
        // ART hears the process state change (stock: a compacting GC 5 s later).
        self.with_java(app, now, |j, _, l| j.set_foreground(now, false, l));
        let view = self.view(app, now);
        self.hooks.on_background(&mut self.k, &view);
        self.q
            .push(now + self.cfg.transition / 2, Ev::B1Touch { app, gen });
        self.q
            .push(now + self.cfg.transition, Ev::TransitionEnd { app, gen });
    }

    fn b1_touch(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Transition {
            return;
        }
        let b1 = self.apps[app].access.b1(self.rt[app].context).to_vec();
        let b1: Vec<u32> = b1.into_iter().filter(|&o| self.is_built(app, o)).collect();
        self.touch(app, t, &b1, 0, false, None);
    }

    /// Anonymous pages beyond the built footprint do not exist yet.
    fn is_built(&self, app: usize, off: u32) -> bool {
        let m = &self.apps[app];
        let anon = m.anon_pages();
        if off >= anon {
            return true;
        }
        let built = self.rt[app].built;
        let jbuilt = (built as u64 * m.java_pages as u64 / anon.max(1) as u64) as u32;
        if off < m.java_pages {
            self.rt[app].java.as_ref().is_some_and(|j| j.is_built(off))
        } else {
            off - m.java_pages < built - jbuilt
        }
    }

    fn transition_end(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Transition {
            return;
        }
        self.rt[app].state = AppState::Background;
        let view = self.view(app, t);
        if self.cfg.app_compaction {
            self.compact_app(t, &view);
        }
        self.hooks.on_transition_end(&mut self.k, &view);
        self.update_cached(t);
        self.q.push(t + self.cfg.bg_tick, Ev::BgTick { app, gen });
    }

    /// CachedAppOptimizer's full compaction (`process_madvise(MADV_PAGEOUT)` over anon and file
    /// memory, COMPACT_ACTION_ALL), run by system_server off the app's critical path; skipped
    /// for apps under `compact_full_rss_throttle_kb` (12 MB).
    fn compact_app(&mut self, t: Nanos, v: &AppView) {
        let rss = self.k.process(v.pid).map_or(0, |p| p.rss());
        if rss * 4 < 12_000 {
            return;
        }
        let mut ranges = self.rt[v.app]
            .java
            .as_ref()
            .map(|j| j.mapped_ranges())
            .unwrap_or_default();
        ranges.extend([(v.native_first, v.native_pages), (v.file_first, v.file_pages)]);
        for (first, pages) in ranges {
            if pages > 0 {
                self.k.madvise(t, Actor::Kernel, first, pages, Advice::PageOut);
            }
        }
    }

    fn fg_tick(&mut self, t: Nanos, app: usize, gen: u32) {
        let r = &self.rt[app];
        if r.gen != gen || r.state != AppState::Foreground {
            return;
        }
        // Footprint growth toward the steady size.
        let m = &self.apps[app];
        let anon = m.anon_pages();
        let mut offs = Vec::new();
        let mut java_to = None;
        if r.built < anon {
            let ticks = (m.growth / self.cfg.fg_tick).max(1);
            let start = (anon as f64 * m.start_anon_fraction) as u32;
            let step = ((anon - start) as u64).div_ceil(ticks) as u32;
            let new_built = (r.built + step.max(1)).min(anon);
            let jold = (r.built as u64 * m.java_pages as u64 / anon as u64) as u32;
            let jnew = (new_built as u64 * m.java_pages as u64 / anon as u64) as u32;
            let nold = r.built - jold;
            let nnew = new_built - jnew;
            offs.extend(m.java_pages + nold..m.java_pages + nnew);
            self.rt[app].built = new_built;
            if jnew > jold {
                java_to = Some(jnew);
            }
        }
        let ws = self.apps[app].access.foreground_ws();
        if !ws.is_empty() {
            for _ in 0..self.cfg.fg_pages_per_tick {
                let o = ws[self.rng.gen_range(0..ws.len())];
                offs.push(o);
            }
        }
        // The Java code allocates: long-lived objects as the footprint grows, short-lived ones at
        // the foreground rate.
        let garbage = self.apps[app].java.params.fg_alloc_bytes_per_s * self.cfg.fg_tick as f64 / 1e9;
        let Some(t) = self.java_step(app, t, |j, k, l| {
            let mut c = match java_to {
                Some(p) => j.build_to(t, p, k, l)?,
                None => Default::default(),
            };
            let g = j.alloc_garbage(t + c.main_stall.ns, garbage, k, l)?;
            c.main_stall.add(g.main_stall);
            Ok(c)
        }) else {
            return;
        };
        let offs: Vec<u32> = offs.into_iter().filter(|&o| self.is_built(app, o)).collect();
        let write = self.rng.gen_bool(0.3);
        if let Some(end) = self.touch(app, t, &offs, 0, write, None) {
            self.fg_stall_ns += end - t;
            self.q
                .push(end.max(t + self.cfg.fg_tick), Ev::FgTick { app, gen });
        }
    }

    fn bg_tick(&mut self, t: Nanos, app: usize, gen: u32) {
        if self.rt[app].gen != gen || self.rt[app].state != AppState::Background {
            return;
        }
        let b2 = self.apps[app].access.b2();
        let mut offs = Vec::new();
        if !b2.is_empty() {
            for _ in 0..self.cfg.bg_pages_per_tick {
                offs.push(b2[self.rng.gen_range(0..b2.len())]);
            }
        }
        let garbage = self.apps[app].java.params.bg_alloc_bytes_per_s * self.cfg.bg_tick as f64 / 1e9;
        let Some(t) = self.java_step(app, t, |j, k, l| j.alloc_garbage(t, garbage, k, l)) else {
            return;
        };
        let offs: Vec<u32> = offs.into_iter().filter(|&o| self.is_built(app, o)).collect();
        if self.touch(app, t, &offs, 0, false, None).is_some() {
            self.q.push(t + self.cfg.bg_tick, Ev::BgTick { app, gen });
        }
    }

    fn alloc(&mut self, now: Nanos, app: usize, pages: u32) {
        let Some(pid) = self.rt[app].pid else { return };
        let src = ContentSource {
            base: self.apps[app].content_base,
            len: self.apps[app].content_len,
            seed: now,
        };
        let Ok(first) = self.k.mmap(pid, pages.max(1), PageKind::JavaHeap, false, src) else {
            return;
        };
        match self.k.access_range(now, Actor::AppMain(pid), first, pages, true) {
            Ok(s) => {
                // The app's own work per page (Java array allocation and initialisation) comes on
                // top of the kernel's fault cost.
                self.out_alloc.record((s.ns / 1000).max(1)).ok();
                self.alloc_ms.push(engine::ms(s.ns));
            }
            Err(_) => self.collect_oom_kills(now),
        }
    }

    fn alive(&self, pid: Pid) -> bool {
        self.k.process(pid).is_some_and(|p| p.alive)
    }

    /// Run `f` on `app`'s Java heap with the kernel as its page backing (runtime CPU goes to the
    /// kernel's ledger), then schedule the GC the runtime asked for, if any. `None` if the app
    /// has no running process.
    fn with_java<R>(
        &mut self,
        app: usize,
        now: Nanos,
        f: impl FnOnce(&mut JavaApp, &mut Kernel, &mut engine::CpuLedger) -> R,
    ) -> Option<R> {
        let japp = self.rt[app].java.as_mut()?;
        let mut ledger = engine::CpuLedger::default();
        let out = f(japp, &mut self.k, &mut ledger);
        self.k.cpu.absorb(&ledger);
        if let Some(due) = japp.pending_gc() {
            let inc = self.rt[app].lmkd_seq;
            if self.rt[app].gc_due != Some(due) {
                self.rt[app].gc_due = Some(due);
                self.q.push(due.max(now), Ev::JavaGc { app, inc });
            }
        }
        Some(out)
    }

    /// A main-thread step of the app's Java code at `t`: returns when it ends, or `None` if the
    /// app is not running or died meanwhile (an OOM kill during the step, or its heap is exhausted:
    /// the app crashes with an `OutOfMemoryError`).
    fn java_step(
        &mut self,
        app: usize,
        t: Nanos,
        f: impl FnOnce(
            &mut JavaApp,
            &mut Kernel,
            &mut engine::CpuLedger,
        ) -> Result<runtime::StepCost, runtime::HeapError>,
    ) -> Option<Nanos> {
        let pid = self.rt[app].pid?;
        match self.with_java(app, t, f)? {
            Ok(c) if self.alive(pid) => Some(t + c.main_stall.ns),
            Ok(_) => {
                self.collect_oom_kills(t);
                None
            }
            Err(_) => {
                self.collect_oom_kills(t);
                self.kill(t, app, KillReason::JavaOom);
                None
            }
        }
    }

    /// A GC the runtime scheduled (stock: the collector transition 5 s after going to the
    /// background) runs on the app's GC thread.
    fn java_gc(&mut self, t: Nanos, app: usize, inc: u64) {
        if self.rt[app].lmkd_seq != inc || self.rt[app].pid.is_none() {
            return;
        }
        self.rt[app].gc_due = None;
        let bg = self.rt[app].state != AppState::Foreground;
        let ran = self.with_java(app, t, |j, k, l| j.tick(t, k, l));
        if let Some(Some(_)) = ran {
            if bg {
                self.gc.background_collections += 1;
            }
        }
        self.collect_oom_kills(t);
    }

    /// A churn round of the app's Java code (in every app state).
    fn churn(&mut self, t: Nanos, app: usize, inc: u64) {
        if self.rt[app].lmkd_seq != inc || self.rt[app].pid.is_none() {
            return;
        }
        let bg = self.rt[app].state != AppState::Foreground;
        let before = self.rt[app].java.as_ref().map_or(0, |j| j.rt.history.len());
        let ok = self.java_step(app, t, |j, k, l| j.churn(t, k, l).map(|x| x.0));
        let Some(j) = self.rt[app].java.as_ref() else {
            return;
        };
        if bg {
            self.gc.background_collections += (j.rt.history.len() - before) as u64;
        }
        let next = j.next_churn();
        if ok.is_some() && next != Nanos::MAX {
            self.q.push(next, Ev::Churn { app, inc });
        }
    }

    /// Drop `app`'s Java heap (its process is gone or the run ended), adding its GCs to the totals.
    fn retire_java(&mut self, app: usize) {
        let Some(j) = self.rt[app].java.take() else { return };
        let g = &mut self.gc;
        for st in &j.rt.history {
            g.collections += 1;
            if st.sticky {
                g.sticky += 1;
            } else {
                g.full += 1;
            }
            g.visits += st.visits;
            g.bytes_copied += st.bytes_copied;
            g.bytes_freed += st.freed_bytes;
            g.cpu_ns += st.cpu_ns;
            g.fault_stall_ns += st.stall_ns;
        }
        self.rt[app].gc_due = None;
    }

    fn snapshot(&self) -> MemSnapshot {
        let k = &self.k;
        let wm = k.params.watermarks;
        let (mut total, mut stored) = (0, 0);
        for b in k.backends() {
            let u = b.usage();
            total += u.capacity_pages;
            stored += u.stored_pages;
        }
        let file_lru = k
            .processes()
            .iter()
            .filter(|p| p.alive)
            .map(|p| p.lru.file() as u64)
            .sum();
        MemSnapshot {
            free_pages: k.free_pages(),
            wmark_min: wm.min,
            wmark_low: wm.low,
            wmark_high: wm.high,
            file_lru_pages: file_lru,
            swap_total_pages: total,
            swap_free_pages: total - stored,
            workingset_refault_file: k.vmstat.workingset_refault_file,
            pgscan_direct: k.vmstat.pgscan_direct,
            pgscan_kswapd: k.vmstat.pgscan_kswapd,
            psi_some_total_ns: k.psi.some_total_ns,
            psi_full_total_ns: k.psi.full_total_ns,
        }
    }

    fn lmkd_poll(&mut self, t: Nanos) {
        let snap = self.snapshot();
        let cands: Vec<Candidate> = (0..self.rt.len())
            .filter_map(|a| {
                let r = &self.rt[a];
                let pid = r.pid?;
                let p = self.k.process(pid)?;
                Some(Candidate {
                    pid,
                    adj: p.oom_score_adj,
                    rss_pages: p.rss() + p.counters.swap,
                    seq: r.lmkd_seq,
                })
            })
            .collect();
        if let Some(kill) = self.lmkd.poll(t, &snap, &cands) {
            if let Some(app) = self.rt.iter().position(|r| r.pid == Some(kill.pid)) {
                self.kill(t, app, kill.reason);
            }
        }
        let swap_low = snap.swap_total_pages > 0 && snap.swap_free_pages * 10 < snap.swap_total_pages;
        let next = t + self.lmkd.poll_period(swap_low);
        if next <= self.end {
            self.q.push(next, Ev::LmkdPoll);
        }
    }

    fn sample(&mut self, t: Nanos) {
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
