//! `fleet`: Fleet (Huang et al., "More Apps, Faster Hot-Launch on Mobile Devices via
//! Fore/Background-aware GC-Swap Co-design", ASPLOS'24), spec `../shared/specs/fleet.md`.
//!
//! **Modelled** (paper names, where they live):
//! - **FGO / BGO** (§4.1, §5.2): objects alive at the *grouping GC* are foreground objects; they sit
//!   in regions the grouping GC tagged (destination groups [`LAUNCH`], [`WS`], [`COLD`]); large
//!   objects alive then carry the [`M_FGO`] metadata bit. Later allocations are background objects
//!   in untagged regions ([`runtime::FleetArt`]).
//! - **Grouping GC, RGS step 1** (§5.3.1, Fig. 10): `T_B` after the app goes to the background
//!   (cancelled if it returns first) one full evacuate-all GC traces breadth-first with depth
//!   ([`TraceOrder::Bfs`](::runtime::TraceOrder)) and copies each object into its class's regions:
//!   **launch** ← NRO (BFS level ≤ `D`, level 0 = roots) ∪ FYO (in a region allocated since the
//!   last GC); **WS** ← objects the app touched during the `T_B` window (the simulator's stand-in
//!   for "copied by a mutator's read barrier"); **cold** ← the rest. Precedence WS > FYO > NRO >
//!   cold (artifact copy routine). Large objects are not grouped.
//! - **Kernel hints, RGS step 2** (§5.3.2): COLD_RUNTIME = `madvise(PAGEOUT)` of every cold region
//!   right after the grouping GC, whatever the pressure; HOT_RUNTIME = the launch pages get the
//!   kernel's protected bit ([`kernel::types::flags::PROTECTED`]), re-applied every `hot_refresh_s`
//!   while the app is in the background; this policy's reclaim hook activates a protected page
//!   instead of reclaiming it unless reclaim is at its last-resort priority (`hot_yield_priority`),
//!   so launch pages go only when nothing else can ("cached until there are no other pages to be
//!   swapped out", §5.1). WS regions get no hint.
//! - **BGC** (§5.2, Fig. 9): after grouping, every non-sticky GC of the app collects only the
//!   background regions and the background large objects
//!   ([`CollectedSet`](::runtime::CollectedSet)); foreground objects are live, untraced and
//!   unmoved. The **card table** (one byte per `2^card_shift` bytes, `card_shift = 10`): the write
//!   barrier dirties the card of a foreground object a reference is stored into; every object on a
//!   dirty card is an extra root (its pages read). Cards accumulate until the next grouping GC (the
//!   artifact scans without clearing). Minor (sticky) GCs stay stock.
//! - **T_F** (Table 2): `T_F` after the app returns to the foreground Fleet stops for it (launch
//!   pages unprotected, stock GC again). No prefetch on launch.
//! - **Costs**: card marking per reference store into a foreground object (`card_mark_ns`), card
//!   table scanning per BGC (the table's bytes at DRAM bandwidth, §3.2), one `hint_ns` per hinted
//!   page; the grouping GC's and the BGC's tracing and copying are the collector's own cost
//!   (category `gc`).
//!
//! **Simplified**: the grouping GC is not concurrent, so "touched by a mutator during the GC" is
//! approximated by "touched by the app during the `T_B` window" (the reading); the HOT hint
//! is the protected bit rather than an LRU move (the reclaim hook moves a protected page to the
//! active list when it reaches the inactive tail, which is what `activate_page` achieved); the
//! fallback full GC for foreground garbage (§5.2, "if necessary") is not modelled.
//! - **Workload preconditions**: the stock workload gives Fleet nothing to do (launch sets not
//!   biased to near-root or young objects; background apps allocating only garbage that dies at
//!   once). The Fleet scenarios turn on the apps' `[java.linked]` (medium-lived objects linked by
//!   write-barrier stores, Fig. 5 lifetimes: `runtime::linked`) and `[java.launch_bias]` (Fig. 6a
//!   proportions: `runtime::launch_bias`); every other scenario keeps them off.
//! - **Background heap** (§7.4; artifact `GrowForUtilization`): after every GC while the app is in
//!   the background, the target footprint is `live × bg_heap_factor` (1.1), its free space capped
//!   at `heapmaxfree / bg_max_free_div` (the artifact's `max_free/10`) and floored at
//!   `bg_min_free_kb` (1 MiB, an estimate), never above ART's own target
//!   ([`AfterGc::target_footprint`](::runtime::AfterGc)); the runtime restores the stock target
//!   when the app returns to the foreground. `bg_minor_gc = false` makes every background GC a
//!   full one (the artifact's build never runs young-gen CC; the paper keeps minor GCs, so the
//!   default is true).
//!
//! **Parameters** ([`Fleet::params`]) with their sources: `D` (Table 2; the artifact's `<=`
//! reading), `T_B_s` (Table 2), `T_F_s` (Table 2; the artifact uses 5 s), `card_shift` (Table 2),
//! `hot_refresh_s` (the paper gives no period; the spec's suggestion), `hot_yield_priority`
//! (simulator: Linux's last-resort reclaim priority 0), `bg_heap_factor` (§7.4), `bg_max_free_div`
//! (artifact), `bg_min_free_kb` (estimate), `bg_minor_gc` (paper vs artifact), costs, and the
//! ablations `bgc`, `rgs`, `hot_hint`, `fyo`, `nro` (§7.1 "Fleet w/o BGC", Fig. 6).

mod framework_hooks;
mod runtime;

use crate::android::stock_backends;
use crate::{ParamSpec, Params, Policy, PolicyParts, Seams, Shared, SwapDevices, SwapOverrides};
use ::runtime::Meta;
use device::DeviceProfile;
use engine::Nanos;
use kernel::hooks::KernelHooks;
use kernel::types::{PageIdx, Pid};
use std::collections::BTreeMap;

pub use self::framework_hooks::{FleetReclaim, Lifecycle};
pub use self::runtime::FleetArt;

/// Destination groups of the grouping GC (region tags; 0 = untagged = background regions).
pub const LAUNCH: u8 = 1;
pub const WS: u8 = 2;
pub const COLD: u8 = 3;

/// BFS levels kept apart in [`FleetStats::depth_bytes`] (the last bucket: that level or deeper).
pub const DEPTH_BUCKETS: usize = 8;
/// Background GCs after a grouping tracked for FGO survival (Fig. 5 follows 15).
pub const FGO_GCS: usize = 15;

/// Per-object metadata bits (16-bit `Meta`).
/// Alive at the last grouping GC (foreground object); used for large objects, whose slots have no
/// region tag.
pub const M_FGO: Meta = 1 << 0;
/// Class from the last grouping GC (2 bits: 0 none, else the group).
pub const M_CLASS_SHIFT: u32 = 1;
pub const M_CLASS: Meta = 0b11 << M_CLASS_SHIFT;
/// Touched by the app during the background window before grouping (WS candidate).
pub const M_TOUCHED: Meta = 1 << 3;
/// A reference was stored into this foreground object since grouping (its card is dirty); kept
/// per object so the dirty list has no duplicates.
pub const M_DIRTY: Meta = 1 << 4;
/// Accessed during the current launch window (coverage accounting).
pub const M_SEEN: Meta = 1 << 5;
/// Reached within depth `D` by the grouping GC (NRO), and in a young region (FYO), for the
/// coverage breakdown.
pub const M_NRO: Meta = 1 << 6;
pub const M_FYO: Meta = 1 << 7;

/// The resolved parameters.
#[derive(Debug, Clone, Copy)]
pub struct Config {
    /// NRO: BFS levels `0..=d` (level 0 = the roots).
    pub d: u32,
    pub t_b: Nanos,
    pub t_f: Nanos,
    pub card_shift: u32,
    pub hot_refresh: Nanos,
    pub hot_yield_priority: u32,
    pub bgc: bool,
    pub rgs: bool,
    pub hot_hint: bool,
    pub fyo: bool,
    pub nro: bool,
    pub card_mark_ns: f64,
    pub card_scan_ns_per_byte: f64,
    pub hint_ns: f64,
    /// Background heap: target = live × `bg_heap_factor` after each background GC, its free space
    /// capped at `max_free / bg_max_free_div` and at least `bg_min_free` bytes.
    pub bg_heap_factor: f64,
    pub bg_max_free_div: u64,
    pub bg_min_free: u64,
    /// Sticky (minor) GCs while the app is in the background.
    pub bg_minor_gc: bool,
}

impl Config {
    /// The background target footprint after a GC that left `live` bytes allocated, on a heap
    /// whose `dalvik.vm.heapmaxfree` is `max_free`; never above ART's own target `stock`.
    pub fn bg_target(&self, live: u64, max_free: u64, stock: u64) -> u64 {
        let free = ((live as f64 * (self.bg_heap_factor - 1.0)) as u64)
            .min(max_free / self.bg_max_free_div)
            .max(self.bg_min_free);
        (live + free).min(stock)
    }

    pub fn from_params(p: &Params) -> Self {
        Config {
            d: p.int("D") as u32,
            t_b: p.secs("T_B_s"),
            t_f: p.secs("T_F_s"),
            card_shift: p.int("card_shift") as u32,
            hot_refresh: p.secs("hot_refresh_s"),
            hot_yield_priority: p.int("hot_yield_priority") as u32,
            bgc: p.bool("bgc"),
            rgs: p.bool("rgs"),
            hot_hint: p.bool("hot_hint"),
            fyo: p.bool("fyo"),
            nro: p.bool("nro"),
            card_mark_ns: p.float("card_mark_ns"),
            card_scan_ns_per_byte: p.float("card_scan_ns_per_byte"),
            hint_ns: p.float("hint_ns"),
            bg_heap_factor: p.float("bg_heap_factor"),
            bg_max_free_div: p.int("bg_max_free_div") as u64,
            bg_min_free: (p.int("bg_min_free_kb") as u64) << 10,
            bg_minor_gc: p.bool("bg_minor_gc"),
        }
    }
}

/// Counters over a run (all apps), for tests and `reproduce fleet`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FleetStats {
    pub groupings: u64,
    /// Grouping GCs cancelled because the app returned first.
    pub groupings_cancelled: u64,
    pub bgcs: u64,
    /// Objects visited and pages touched by BGCs.
    pub bgc_visits: u64,
    pub bgc_pages_touched: u64,
    /// Background objects BGCs copied (survived) and freed.
    pub bgc_copied: u64,
    pub bgc_freed: u64,
    /// Bytes and objects put in each class by grouping GCs (index: group 1..=3).
    pub class_bytes: [u64; 4],
    pub class_objects: [u64; 4],
    /// Grouped objects reached within depth D (NRO) and young (FYO), whatever their class (the
    /// paper's Fig. 6 definitions; WS takes precedence for the region), and their union.
    pub nro_objects: u64,
    pub fyo_objects: u64,
    pub nro_bytes: u64,
    pub fyo_bytes: u64,
    pub union_bytes: u64,
    /// Large objects left ungrouped.
    pub large_objects: u64,
    /// Grouped (non-large) objects and bytes by BFS level (index `DEPTH_BUCKETS - 1`: that level
    /// or deeper), the heap's shape that decides NRO's share (row 8).
    pub depth_objects: [u64; DEPTH_BUCKETS],
    pub depth_bytes: [u64; DEPTH_BUCKETS],
    /// Foreground-object survival under stock background GCs (the `bgc = false` ablation, Fig. 5's
    /// setup): index k-1 = the k-th background GC after a grouping; `fgo_base` sums the FGO count
    /// at grouping of the episodes that reached it, `fgo_alive` the FGO still alive after it.
    pub fgo_base: [u64; FGO_GCS],
    pub fgo_alive: [u64; FGO_GCS],
    /// Reference stores that dirtied a card, and the most dirty cards one BGC scanned.
    pub card_marks: u64,
    pub dirty_cards_max: u64,
    pub dirty_cards_total: u64,
    /// Extra roots found on dirty cards (sum over BGCs).
    pub card_roots: u64,
    /// Pages handed to COLD_RUNTIME (page-out) and protected by HOT_RUNTIME (each refresh counts).
    pub pages_cold_hinted: u64,
    pub pages_hot_hinted: u64,
    /// Launch-window accesses (first access of each object per window) to grouped objects: by
    /// class (index: group), and how many were NRO, FYO, either.
    pub launch_seen: [u64; 4],
    pub launch_seen_nro: u64,
    pub launch_seen_fyo: u64,
    pub launch_seen_union: u64,
    /// Protected pages reclaim kept (activated) and reclaimed as a last resort.
    pub protected_kept: u64,
    pub protected_reclaimed: u64,
    /// Background GCs after which the tight background target was set, and the sum of those
    /// targets (bytes).
    pub bg_targets_set: u64,
    pub bg_target_bytes: u64,
    /// Background sticky GCs turned into full ones (BGC once grouped) by `bg_minor_gc = false`.
    pub bg_minor_replaced: u64,
    /// Allocation failures that BGC could not satisfy, after which the allocation path's last
    /// collection ran as stock's full tracing (Fleet §5.2's fallback) and Fleet stopped.
    pub full_fallbacks: u64,
    /// Protected pages reclaim met at an inactive tail (kept + reclaimed + those it found
    /// referenced, which stock activates anyway).
    pub protected_seen: u64,
}

/// One app process as the framework side knows it.
#[derive(Debug, Clone, Default)]
struct ProcHot {
    /// Grouping episode of `launch` (timers of older episodes are stale).
    episode: u32,
    /// The launch regions' pages of the current episode.
    launch: Vec<(PageIdx, u32)>,
    /// Pages currently carrying the protected bit.
    protected: Vec<(PageIdx, u32)>,
    /// Fleet is active for this process (grouped, not yet stopped).
    active: bool,
}

/// The policy's state, shared by its runtime, framework and kernel hooks.
#[derive(Debug, Default)]
pub struct State {
    pub cfg: Option<Config>,
    pub stats: FleetStats,
    procs: BTreeMap<Pid, ProcHot>,
}

/// Timer tokens: kind in the top byte, episode in the next 24 bits, pid in the low 32.
const TOKEN_TAG: u64 = 0xF1 << 56;
const T_HOT: u64 = 1 << 48;
const T_STOP: u64 = 2 << 48;

fn token(kind: u64, episode: u32, pid: Pid) -> u64 {
    TOKEN_TAG | kind | (u64::from(episode & 0xFFFF) << 32) | u64::from(pid)
}

fn untoken(t: u64) -> Option<(u64, u32, Pid)> {
    (t & (0xFF << 56) == TOKEN_TAG).then_some((
        t & (0xFF << 48),
        ((t >> 32) & 0xFFFF) as u32,
        t as u32 as Pid,
    ))
}

/// The `fleet` policy. `probe`, when set, receives the run's state (tests and `reproduce fleet`
/// read [`FleetStats`] from it after the run).
#[derive(Default)]
pub struct Fleet {
    pub probe: Option<Shared<State>>,
}

impl Policy for Fleet {
    fn name(&self) -> &'static str {
        "fleet"
    }

    fn description(&self) -> &'static str {
        "Fleet (ASPLOS'24): background-object GC with a card table + runtime-guided swap (grouping GC, COLD/HOT hints)"
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::int("D", 2, 0, 64)
                .unit("BFS levels")
                .about("NRO: objects at BFS level <= D (level 0 = roots) go to launch regions")
                .source("Fleet Table 2 (D=2); artifact concurrent_copying.cc `GetDepth() <= 2`"),
            ParamSpec::float("T_B_s", 10.0, 0.0, 3600.0)
                .unit("s")
                .about("time in the background before the grouping GC")
                .source("Fleet Table 2; artifact WINDOW_SIZE_BACKGROUND_WS = 10"),
            ParamSpec::float("T_F_s", 3.0, 0.0, 3600.0)
                .unit("s")
                .about("time back in the foreground before Fleet stops (stock GC resumes)")
                .source("Fleet Table 2 (artifact: WINDOW_SIZE_HOT_LAUNCH = 5)"),
            ParamSpec::int("card_shift", 10, 6, 16)
                .unit("log2 bytes")
                .about("card size of the extra card table (10 = 1 KiB cards)")
                .source("Fleet Table 2 (CARD_SHIFT = 10)"),
            ParamSpec::float("hot_refresh_s", 10.0, 0.1, 3600.0)
                .unit("s")
                .about("period of the HOT_RUNTIME hint while in the background")
                .source("not in the paper (artifact issues it once); spec §1.4 suggestion"),
            ParamSpec::int("hot_yield_priority", 0, 0, 12)
                .about("reclaim priority at or below which protected launch pages are reclaimable")
                .source("Fleet §5.1 'cached until there are no other pages'; Linux last-resort priority 0"),
            ParamSpec::bool("bgc", true)
                .about("background-object GC (false: Fleet w/o BGC, RGS only)")
                .source("Fleet §7.1 Fig. 12 ablation; artifact ENABLE_BGC"),
            ParamSpec::bool("rgs", true)
                .about("runtime-guided swap: grouping classes + COLD/HOT hints (false: BGC only)")
                .source("Fleet §5.3; artifact ENABLE_APGC"),
            ParamSpec::bool("hot_hint", true)
                .about("HOT_RUNTIME protection of launch pages")
                .source("Fleet §5.3.2"),
            ParamSpec::bool("fyo", true)
                .about("foreground-young objects go to launch regions")
                .source("Fleet §4.2; artifact ENABLE_FYO"),
            ParamSpec::bool("nro", true)
                .about("near-root objects go to launch regions")
                .source("Fleet §4.2; artifact ENABLE_NRO"),
            ParamSpec::float("bg_heap_factor", 1.1, 1.0, 100.0)
                .about("background heap: target footprint = live bytes x this after each background GC")
                .source("Fleet §7.4 (1.1x and 2x studied; the ~20% caching gain is at 1.1x)"),
            ParamSpec::int("bg_max_free_div", 10, 1, 1_000_000)
                .about("background heap: free space capped at dalvik.vm.heapmaxfree / this")
                .source("artifact heap.cc GrowForUtilization: background adjusted_max_free / 10"),
            ParamSpec::int("bg_min_free_kb", 1024, 0, 1 << 20)
                .unit("KiB")
                .about("background heap: at least this much free space after a GC")
                .source("estimate (not in the paper or artifact): keeps a tiny background heap from collecting every few allocations"),
            ParamSpec::bool("bg_minor_gc", true)
                .about("minor (sticky) GCs in the background (false: every background GC is full, a BGC once grouped)")
                .source("Fleet §5.2 keeps minor GC; the artifact forces full CC for every GC (spec §1.6), as in §7.1's Fig. 12 runs"),
            ParamSpec::float("card_mark_ns", 2.0, 0.0, 1000.0)
                .unit("ns")
                .about("CPU of one card mark in the write barrier (an FGO check and a byte store)")
                .source("estimate: two instructions plus a store; included in Fleet §7.3's +0.18% CPU"),
            ParamSpec::float("card_scan_ns_per_byte", 0.109, 0.0, 100.0)
                .unit("ns/byte")
                .about("CPU to scan the card table per BGC, per byte of table")
                .source("Fleet §3.2 DRAM read bandwidth 9182.7 MB/s"),
            ParamSpec::float("hint_ns", 50.0, 0.0, 100_000.0)
                .unit("ns/page")
                .about("policy CPU per page handed to COLD/HOT_RUNTIME (PTE walk, LRU move)")
                .source("estimate: one PTE walk and LRU list operation per page"),
        ]
    }

    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let cfg = Config::from_params(params);
        let state = self
            .probe
            .clone()
            .unwrap_or_else(|| Shared::new(State::default()));
        state.with(|s| {
            *s = State {
                cfg: Some(cfg),
                ..State::default()
            }
        });
        let rt_state = state.clone();
        Ok(PolicyParts {
            backends: stock_backends(device, swap, SwapDevices::Zram)?,
            kernel_hooks: KernelHooks {
                reclaim: Box::new(FleetReclaim(state.clone())),
                ..KernelHooks::default()
            },
            framework_hooks: Box::new(Lifecycle(state)),
            runtime_hooks: Box::new(move |_app| Box::new(FleetArt::new(cfg, rt_state.clone()))),
            claims: Seams::SWAP_BACKENDS | Seams::RECLAIM | Seams::FRAMEWORK | Seams::RUNTIME,
        })
    }
}
