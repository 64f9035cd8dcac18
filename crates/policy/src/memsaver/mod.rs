//! MemSaver (Challa, Song, Jiang, ICPE'24): context-aware hot-launch history and proactive
//! page-out of background apps. Spec: `../shared/specs/memsaver.md`; paper §§ below.
//!
//! **What is modelled** (all through the framework hooks and the kernel facade; no lower-layer
//! change):
//! - **Phases** (§3.1): foreground → *transition* (`transition_s`, 5 s, the app keeps its
//!   foreground working set) → *stable background*. The policy's own timer marks the transition
//!   end (it does not rely on the framework's fixed `on_transition_end`, so `transition_s` is a
//!   real parameter).
//! - **B1** (§3.3): the transition working set, found with the two-scan method on idle-page
//!   tracking (`mark_idle` at `on_background`, read back at the transition end) and kept in spare
//!   page bit 0 ([`B1_BIT`]). B2 (the stable-state working set) is *not* used by MemSaver; the
//!   ablations that keep it observe it the same way between the transition end and the swap moment.
//! - **H stack per context** (§3.2, §3.5): the pages of a hot launch, recorded per launch
//!   context in spare page bits 1..=3 ([`h_bit`]), organised as an LRU stack of up to `depth`
//!   (context, bit) entries per app, newest on top. A new H is collected only when no H matches
//!   the launch's context or the matching one is at the bottom of a full stack (§3.5 (a)/(b));
//!   the evicted entry's bit is cleared on every page of the app (a page-table scan, charged).
//! - **Detection** (§3.2): anonymous pages by the zram fault trick — at the swap moment before a
//!   collecting launch every anonymous page of the app is paged out (`madvise(PAGEOUT)`), so the
//!   launch faults them back in and the fault handler marks them (here: the anonymous pages of the
//!   launch's `touched` list, each charged one PTE update). File pages by a two-scan *scoped* to
//!   the 2 MiB regions (`region_pages`) where the transition touched file pages ("transfer
//!   collection", the scope index): scan 1 (mark idle) at the launch start, on the launch path,
//!   scan 2 at its end.
//! - **Page-out at the swap moment** (§3.5): `swap_delay_s` after the transition end (0: at the
//!   transition end). Keep H(context) ∪ B1, page out every other anonymous page (to the run's
//!   swap devices: zram by default, flash with `swap = "flash"`) and, with `pages = "anon+file"`,
//!   drop every other file page. No retention page-out at all without an H of the app's
//!   background context (§3.4: "conservative"); the only page-out then is the detection page-out
//!   of the anonymous pages before the collecting launch.
//!
//! **Simplified**: the context of the next hot launch is assumed to be the app's background
//! context (§3.2: "MemSaver appends the last context's name ... to the next hot launch"); an H is
//! filed under the context the launch actually ran in. Anonymous H detection takes the launch's
//! touched anonymous pages (the pages the fault handler would see; a page touched again between
//! the detection page-out and the launch is then still counted). Bits are per page frame slot:
//! when the runtime's compacting GC moves Java objects, their H/B1 bits stay with the old pages
//! (as PTE bits would). Stock ART's collector-transition GC (a compacting full GC 5 s after
//! backgrounding) falls at the same instant as the default transition end and runs first, so
//! its accesses count as transition accesses: B1 then holds the whole live Java heap (in
//! `memsaver-fig11-contexts`, ~99% of the resident Java heap at a retention page-out carries B1,
//! ~49% with `transition_s = 4.9`, when the GC then faults the paged-out heap back in; the
//! default stays the paper's 5 s, so MemSaver's anonymous saving comes from native memory).
//! Costs: one PTE visit = `pte_scan_ns` (§3.2: ~100 ms for the 17 GB VA of
//! YouTube = 4.46 M PTEs → 22 ns), charged to the acting thread (`policy` CPU).
//!
//! **Baselines and ablations** (parameter `keep`): `h+b1` (MemSaver), `all-h+b1` (every H of the
//! context, Fig. 9), `h+b1+b2` and `h+b2` (Fig. 6), `lru-b` (only pages touched between the
//! transition end and the swap moment, §2.1), `lru-f` (pages touched from `lru_f_window_s`
//! before backgrounding to the swap moment, §2.1; tracked with idle-page windows and spare bit
//! 7), `none` (observe only: no page-out, the "ideal"). `collect = "fill"` also collects while the
//! stack has a free slot and `collect = "every"` on every hot launch (the H histories of the
//! Fig. 9/10 experiments) instead of the §3.5 policy.
//!
//! Parameters: see [`MemSaver::params`] (each with its source). Metrics: [`Stats`], readable
//! through a probe ([`MemSaver::with_probe`]) and the `policy` CPU category.

mod hooks;

use crate::android::stock_backends;
use crate::{ParamSpec, Params, Policy, PolicyParts, Probe, Seams, Shared, SwapDevices, SwapOverrides};
use device::DeviceProfile;
use engine::Nanos;
use kernel::types::{PageIdx, Pid};

/// Spare page bit of B1 (§3.5: "bit 0 = B1").
pub const B1_BIT: u8 = 1 << 0;
/// Spare page bit of H stack slot `slot` (0..3; §3.5: bits 1–3).
pub const fn h_bit(slot: u8) -> u8 {
    1 << (1 + slot)
}
/// All H bits.
pub const H_BITS: u8 = 0b1110;
/// Spare page bit of the LRU-foreground baseline's previous idle window (not MemSaver's).
pub const LRU_F_BIT: u8 = 1 << 7;

/// What the policy keeps at the swap moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    HB1,
    AllHB1,
    HB1B2,
    HB2,
    LruB,
    LruF,
    None,
}

impl Keep {
    fn parse(s: &str) -> Keep {
        match s {
            "all-h+b1" => Keep::AllHB1,
            "h+b1+b2" => Keep::HB1B2,
            "h+b2" => Keep::HB2,
            "lru-b" => Keep::LruB,
            "lru-f" => Keep::LruF,
            "none" => Keep::None,
            _ => Keep::HB1,
        }
    }
    /// Whether this mode retains by H and therefore needs a matching-context H.
    fn needs_h(self) -> bool {
        matches!(self, Keep::HB1 | Keep::AllHB1 | Keep::HB1B2 | Keep::HB2)
    }
}

/// When a hot launch collects a new H.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Collect {
    /// §3.5: no H of the context, or the matching one at the bottom of a full stack.
    Paper,
    /// As `Paper`, and also while the stack has a free slot (builds H1..H3 of one context).
    Fill,
    /// Every hot launch (Fig. 10's H history).
    Every,
}

/// Resolved parameters.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    pub depth: u8,
    pub transition: Nanos,
    pub swap_delay: Nanos,
    pub file: bool,
    pub keep: Keep,
    pub collect: Collect,
    pub lru_f_window: Nanos,
    pub pte_scan_ns: f64,
    pub region_pages: u32,
}

/// One swap moment of one app.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PageOutRec {
    pub t: Nanos,
    pub app: usize,
    pub context: usize,
    /// "retain" (H ∪ B1 etc.), "detect" (all anon before a collecting launch), "skip" (no H).
    pub kind: &'static str,
    /// Resident pages (anon, file) just before.
    pub anon_before: u64,
    pub file_before: u64,
    /// Resident pages (anon, file) right after the queued page-out was applied.
    pub anon_after: u64,
    pub file_after: u64,
    /// Resident pages kept because of H, B1 (and B2 where used).
    pub kept_h: u64,
    pub kept_b1: u64,
    /// B2 observed (touched between the transition end and the swap moment) and how much of it
    /// was in B1 (only when `swap_delay_s` > 0).
    pub b2: u64,
    pub b2_in_b1: u64,
}

impl PageOutRec {
    pub fn rss_before(&self) -> u64 {
        self.anon_before + self.file_before
    }
    pub fn rss_after(&self) -> u64 {
        self.anon_after + self.file_after
    }
    /// Fraction of the RSS paged out or dropped.
    pub fn reduction(&self) -> f64 {
        let b = self.rss_before();
        if b == 0 {
            return 0.0;
        }
        b.saturating_sub(self.rss_after()) as f64 / b as f64
    }
}

/// One hot launch as the policy saw it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LaunchRec {
    pub t: Nanos,
    pub app: usize,
    pub context: usize,
    /// This launch collected an H.
    pub collecting: bool,
    /// The kind of the app's last swap moment before this launch ("" if none since its last
    /// launch).
    pub after: &'static str,
    /// Start to first frame, ms.
    pub ms: f64,
}

/// The policy's metrics (cumulative over a run).
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub pageouts: Vec<PageOutRec>,
    pub launches: Vec<LaunchRec>,
    /// H collections, and hot launches that skipped collection.
    pub collections: u64,
    pub skipped: u64,
    /// PTEs visited by the policy's scans, and of them on launch paths (scoped file scan).
    pub ptes_scanned: u64,
    pub ptes_scanned_launch: u64,
    /// Every detected H as (app, context, sorted pages): only with [`Stats::record_sets`].
    pub record_sets: bool,
    pub h_sets: Vec<(usize, usize, Vec<PageIdx>)>,
}

/// One H stack entry: the context it was recorded in and the spare bit that holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HEntry {
    pub context: usize,
    pub bit: u8,
}

/// Where an app is in its lifecycle, as the policy tracks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Phase {
    #[default]
    Dead,
    Foreground,
    Transition,
    Background,
}

/// Per-app state (dense, indexed by the scenario's app index).
#[derive(Debug, Clone, Default)]
pub struct AppState {
    pub pid: Pid,
    pub phase: Phase,
    /// Bumped at every phase change: stale timers are ignored.
    pub gen: u32,
    /// Context the app went to the background in.
    pub bg_context: usize,
    /// The H stack, top (newest) first.
    pub stack: Vec<HEntry>,
    /// The scope index: first pages of the 2 MiB file regions the transition touched.
    pub scope: Vec<PageIdx>,
    /// A collection in progress: (context, bit), set at launch start.
    pub collecting: Option<HEntry>,
    pub launch_start: Nanos,
    /// Kind of the last swap moment since the last launch.
    pub last_swap: &'static str,
}

/// The policy's state, shared by its hooks.
pub struct State {
    pub cfg: Config,
    pub apps: Vec<AppState>,
    pub stats: Probe<Stats>,
}

impl State {
    pub fn new(cfg: Config, stats: Probe<Stats>) -> Self {
        State {
            cfg,
            apps: Vec::new(),
            stats,
        }
    }

    pub fn app(&mut self, app: usize) -> &mut AppState {
        if self.apps.len() <= app {
            self.apps.resize_with(app + 1, AppState::default);
        }
        &mut self.apps[app]
    }

    /// §3.5: does a hot launch of `app` in `ctx` collect a new H? If so, which stack entry does
    /// it replace (`Some(index)`) or does it take a free bit (`None`)?
    pub fn plan_collection(&self, app: usize, ctx: usize) -> Option<Option<usize>> {
        let depth = self.cfg.depth as usize;
        let stack = self.apps.get(app).map(|a| a.stack.as_slice()).unwrap_or(&[]);
        let full = stack.len() >= depth;
        let bottom = || if full { Some(stack.len() - 1) } else { None };
        if self.cfg.collect == Collect::Every || (self.cfg.collect == Collect::Fill && !full) {
            return Some(bottom());
        }
        match stack.iter().position(|e| e.context == ctx) {
            None => Some(bottom()),
            // The matching H is at the bottom of a full stack: refresh it (it is replaced).
            Some(i) if full && i == depth - 1 => Some(Some(i)),
            Some(_) => None,
        }
    }

    /// The matching-context H entry used for page-out (§3.4: the latest of that context).
    pub fn matching(&self, app: usize, ctx: usize) -> Option<HEntry> {
        self.apps
            .get(app)?
            .stack
            .iter()
            .find(|e| e.context == ctx)
            .copied()
    }

    /// Bits of every H of `ctx` (the Fig. 9 multi-H variant).
    pub fn all_matching_bits(&self, app: usize, ctx: usize) -> u8 {
        self.apps.get(app).map_or(0, |a| {
            a.stack
                .iter()
                .filter(|e| e.context == ctx)
                .fold(0, |m, e| m | e.bit)
        })
    }

    /// Push a new H on top of `app`'s stack (after its bit has been chosen).
    pub fn push_h(&mut self, app: usize, e: HEntry) {
        let depth = self.cfg.depth as usize;
        let a = self.app(app);
        a.stack.retain(|x| x.bit != e.bit);
        a.stack.insert(0, e);
        a.stack.truncate(depth);
    }

    /// A spare H bit not used by `app`'s stack.
    pub fn free_bit(&self, app: usize) -> Option<u8> {
        let used = self
            .apps
            .get(app)
            .map_or(0, |a| a.stack.iter().fold(0, |m, e| m | e.bit));
        (0..self.cfg.depth).map(h_bit).find(|b| used & b == 0)
    }
}

/// The `memsaver` policy. `probe`: where its metrics go (tests and `reproduce memsaver`).
#[derive(Default)]
pub struct MemSaver {
    probe: Option<Probe<Stats>>,
}

impl MemSaver {
    /// A policy whose runs write their metrics into `probe`.
    pub fn with_probe(probe: Probe<Stats>) -> Self {
        MemSaver { probe: Some(probe) }
    }
}

impl Config {
    pub fn from_params(p: &Params) -> Result<Config, String> {
        let depth = p.int("depth");
        if !(1..=3).contains(&depth) {
            return Err(format!(
                "memsaver.depth = {depth}: the H stack has 1 to 3 spare bits"
            ));
        }
        Ok(Config {
            depth: depth as u8,
            transition: p.secs("transition_s"),
            swap_delay: p.secs("swap_delay_s"),
            file: p.str("pages") == "anon+file",
            keep: Keep::parse(p.str("keep")),
            collect: match p.str("collect") {
                "every" => Collect::Every,
                "fill" => Collect::Fill,
                _ => Collect::Paper,
            },
            lru_f_window: p.secs("lru_f_window_s"),
            pte_scan_ns: p.float("pte_scan_ns"),
            region_pages: p.int("region_pages") as u32,
        })
    }
}

impl Policy for MemSaver {
    fn name(&self) -> &'static str {
        "memsaver"
    }

    fn description(&self) -> &'static str {
        "MemSaver (ICPE'24): keep the last same-context hot-launch pages + transition working set, page out the rest at the transition end"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::int("depth", 3, 1, 3)
                .unit("H sets")
                .about("depth of the per-app H stack (one spare page bit each)")
                .source("MemSaver §3.5: bits 1-3 hold up to three H sets"),
            ParamSpec::float("transition_s", 5.0, 0.0, 60.0)
                .unit("s")
                .about("length of the transition state after backgrounding (B1 is its working set)")
                .source("MemSaver §3.1: about 5 seconds"),
            ParamSpec::float("swap_delay_s", 0.0, 0.0, 3600.0)
                .unit("s")
                .about("swap moment after the transition end")
                .source("MemSaver §3.3: 'after the transition state' (exact moment not given; spec §1.5 suggests the transition end)"),
            ParamSpec::one_of("pages", "anon+file", &["anon", "anon+file"])
                .about("page out anonymous pages only, or also drop file pages outside the kept set")
                .source("MemSaver §4, Fig. 11: the two reported variants"),
            ParamSpec::one_of(
                "keep",
                "h+b1",
                &["h+b1", "all-h+b1", "h+b1+b2", "h+b2", "lru-b", "lru-f", "none"],
            )
            .about("what stays resident at the swap moment (MemSaver, ablations, LRU baselines, none)")
            .source("MemSaver §3.5 (h+b1); Fig. 9 (all-h+b1); Fig. 6 (h+b1+b2, h+b2); §2.1 (lru-b, lru-f)"),
            ParamSpec::one_of("collect", "paper", &["paper", "fill", "every"])
                .about("when a hot launch collects a new H: the §3.5 policy, also while the stack has a free slot, or every hot launch")
                .source("MemSaver §3.5; 'fill' and 'every' build the H histories of the Fig. 9/10 experiments"),
            ParamSpec::float("lru_f_window_s", 10.0, 1.0, 600.0)
                .unit("s")
                .about("LRU-foreground baseline: keep pages touched since this long before backgrounding")
                .source("MemSaver §2.1: 10 seconds"),
            ParamSpec::float("pte_scan_ns", 22.0, 0.0, 10_000.0)
                .unit("ns/PTE")
                .about("CPU per PTE visited or updated by the policy's scans")
                .source("MemSaver §3.2: ~100 ms per scan of YouTube's 17 GB address space (4.46 M PTEs)"),
            ParamSpec::int("region_pages", 512, 1, 1 << 20)
                .unit("pages")
                .about("unit of the file-page scope index")
                .source("MemSaver §3.2: 2 MB-aligned regions (512 x 4 KiB)"),
        ]
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let cfg = Config::from_params(params)?;
        let stats = self.probe.clone().unwrap_or_else(|| Probe::new(Stats::default()));
        let state = Shared::new(State::new(cfg, stats));
        Ok(PolicyParts {
            backends: stock_backends(device, swap, SwapDevices::Zram)?,
            kernel_hooks: kernel::hooks::KernelHooks::default(),
            framework_hooks: Box::new(hooks::Lifecycle(state)),
            runtime_hooks: framework::stock_runtime(),
            claims: Seams::SWAP_BACKENDS | Seams::FRAMEWORK,
        })
    }
}
