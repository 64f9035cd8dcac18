//! `regions`: region-based physical memory allocation, Kim, Kwon, Kim, Jeong, "Controlling
//! Physical Memory Fragmentation in Mobile Systems", ISMM 2015 (spec:
//! `../shared/specs/ismm15.md`; paper §4–§5).
//!
//! **Modelled** (paper name → here):
//! - *Region* (§4.1): a naturally aligned block of 2^`order` pages taken from the buddy allocator
//!   as one movable block ([`state::State::alloc_in`]); unmovable for the vmalloc domain (§4.3).
//! - *Region domain* per normal app process (§4.1): its order-0 user pages are handed out
//!   quick-fit from its current region, else its fullest partly used region (the paper leaves the
//!   choice open; the fullest one agrees with the compaction heuristic), else a new region. An
//!   emptied region goes back to the buddy allocator whole; a killed process's pages all come back,
//!   so its regions return as order-`order` blocks that may merge further.
//! - *Domain sharing* (§4.1.2): one *shared* domain for persistent processes, one *service*
//!   domain for service processes (parameter `sharing`; off = a domain per process).
//! - *Cache domain* (§4.2): file pages of every process (parameter `cache_domain`), reclaimed
//!   region by region (parameter `region_reclaim`): when reclaim (LRU walk or shrinker) drops a
//!   file page of the cache domain, the kernel's `reclaim_unit` seam gets the rest of its region;
//!   clean inactive file pages are dropped, active and dirty ones migrated into other cache
//!   regions (copy + remap charged as compaction), and the emptied region goes back to the buddy
//!   allocator whole. A page with no room elsewhere stays, and the region with it.
//! - *Vmalloc domain* (§4.3): order-0 vmalloc and GPU pages in regions of unmovable pageblocks
//!   (parameter `vmalloc_domain`).
//! - *Region domain compaction* (§4.1.1): when the owner goes to the background (after
//!   `compact_delay_s`, default 12 s: after the runtime returned the heap pages the app frees in
//!   the background — ART's compacting GC at 5 s, Dalvik's heap trim 5 s after its GC), the planner walks
//!   the domain's region list (no PFN scan), keeps the fewest fullest regions that can hold every
//!   used page and marks the rest as sources; the kernel's frame migration
//!   (`compact_process`) then moves exactly the source regions' pages into the fullest non-full
//!   regions (copy + remap charged by the kernel per page) and each emptied source region is freed.
//! - *Shrinker* for the shared, service and cache domains (§4.4): when the buddy allocator's own
//!   free pages fall below the high watermark at a background transition's end, those domains are
//!   compacted the same way (at most once per `shrinker_interval_s`).
//! - *Accounting* (§4.4): unused pages inside regions are reported as held free pages, which the
//!   kernel counts as free for watermarks, kswapd, meminfo and lmkd; when the buddy allocator is
//!   empty, such pages are handed to whoever asks.
//!
//! **Simplified / not modelled**: the buffer domain (the simulator has no block-device buffer
//! pages); one zone, so
//! one cache domain; high-order vmalloc/GPU/kernel allocations stay with the buddy allocator (as
//! the paper's kernel stacks, page tables, slab and ION buffers, §4.3); zram's pool stays with
//! the buddy allocator (no swap on the paper's device); when no region can be taken, an order-0
//! page comes straight from the buddy allocator ("stray", counted), but only after the kernel has
//! compacted and reclaimed for the region as for any costly-order allocation (the kernel's
//! `block_wanted` seam, once per allocation; parameter `region_effort`). Kernel compaction
//! cannot move region pages (each region is one order-`order` allocation), so for a region only
//! its reclaim round (region-granular for the cache domain) and moved stray pages make a block.
//!
//! **Parameters** (sources in [`Regions::params`]): `order` 5–8 (RG5…RG8, default 6 = RG6, §6.1),
//! `sharing`, `cache_domain`, `region_reclaim`, `vmalloc_domain`, `compact_on_background`,
//! `region_effort` (ablations, §4.1–4.3),
//! `compact_delay_s`,
//! `shrinker_interval_s`, `walk_ns` (planner CPU per region visited).

pub mod state;

use crate::{ParamSpec, Params, Policy, PolicyParts, Seams, Shared, SwapDevices, SwapOverrides};
use device::DeviceProfile;
use engine::{HookCx, Nanos};
use framework::sim::{AppView, PolicyKernel};
use framework::FrameworkHooks;
use kernel::buddy::BuddyAllocator;
use kernel::hooks::{AllocPurpose, KernelHooks, PlacementHook};
use kernel::types::{MigrateType, PageKind, Pfn, Pid, ProcClass, NIL};
use state::{State, CACHE, SERVICE, SHARED, SPECIAL, VMALLOC};

/// The `regions` policy.
pub struct Regions;

/// Switches and costs from the parameters.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    pub order: u8,
    pub sharing: bool,
    pub cache_domain: bool,
    pub region_reclaim: bool,
    pub vmalloc_domain: bool,
    pub compact_on_background: bool,
    pub region_effort: bool,
    pub compact_delay: Nanos,
    pub shrinker_interval: Nanos,
    pub walk_ns: u64,
}

impl Options {
    pub fn from_params(p: &Params) -> Self {
        Self {
            order: p.int("order") as u8,
            sharing: p.bool("sharing"),
            cache_domain: p.bool("cache_domain"),
            region_reclaim: p.bool("region_reclaim"),
            vmalloc_domain: p.bool("vmalloc_domain"),
            compact_on_background: p.bool("compact_on_background"),
            region_effort: p.bool("region_effort"),
            compact_delay: p.secs("compact_delay_s"),
            shrinker_interval: p.secs("shrinker_interval_s"),
            walk_ns: p.int("walk_ns") as u64,
        }
    }

    /// The paper's RG configuration of region order `order`.
    pub fn rg(order: u8) -> Self {
        let mut o = Self::from_params(&Params::defaults(&Regions.params()));
        o.order = order;
        o
    }
}

/// The policy's state: the region domains plus the bookkeeping of the hooks.
pub struct Inner {
    pub opts: Options,
    pub st: State,
    /// Per pid: bit `d` set when it has pages in special domain `d` (the shrinker's targets).
    pub special_members: Vec<u8>,
    pub last_shrink: Option<Nanos>,
    /// Processes in the background since (pid -> time), for the delayed domain compaction.
    pub background: std::collections::BTreeMap<Pid, Nanos>,
}

impl Inner {
    pub fn new(opts: Options) -> Self {
        Self {
            opts,
            st: State::new(opts.order),
            special_members: Vec::new(),
            last_shrink: None,
            background: std::collections::BTreeMap::new(),
        }
    }

    fn domain_for(&mut self, purpose: AllocPurpose) -> u32 {
        let special = |s: &mut Self, pid: Pid, d: u32| {
            let p = pid as usize;
            if s.special_members.len() <= p {
                s.special_members.resize(p + 1, 0);
            }
            s.special_members[p] |= 1 << d;
            d
        };
        match purpose {
            AllocPurpose::User { pid, kind, class } => {
                if kind == PageKind::File && self.opts.cache_domain {
                    return special(self, pid, CACHE);
                }
                match class {
                    ProcClass::Persistent if self.opts.sharing => special(self, pid, SHARED),
                    ProcClass::Service if self.opts.sharing => special(self, pid, SERVICE),
                    _ => self.st.process_domain(pid),
                }
            }
            AllocPurpose::Vmalloc | AllocPurpose::Gpu if self.opts.vmalloc_domain => VMALLOC,
            _ => NIL,
        }
    }
}

/// A handle on the policy's state for experiments and tests (domains, held pages, counters).
#[derive(Clone)]
pub struct Probe(pub Shared<Inner>);

impl Probe {
    pub fn held_pages(&self) -> u64 {
        self.0.with(|s| s.st.held)
    }
    pub fn domains_in_use(&self) -> usize {
        self.0.with(|s| s.st.domains_in_use())
    }
    pub fn counters(&self) -> state::Counters {
        self.0.with(|s| s.st.counters)
    }
    pub fn held_frames(&self) -> Vec<Pfn> {
        self.0.with(|s| s.st.held_frames())
    }
    /// Whether `pfn` is a used page inside a region.
    pub fn in_region(&self, pfn: Pfn) -> bool {
        self.0.with(|s| s.st.in_region(pfn))
    }
    /// Domain id of the region holding `pfn` (`NIL`: none).
    pub fn domain_of(&self, pfn: Pfn) -> u32 {
        self.0.with(|s| s.st.domain_of(pfn))
    }
    /// Regions per domain id.
    pub fn regions_per_domain(&self) -> Vec<usize> {
        self.0
            .with(|s| s.st.domains.iter().map(|d| d.regions.len()).collect())
    }
}

/// The kernel and framework hooks of the policy with `opts`, and a probe on their state.
pub fn hooks(opts: Options) -> (KernelHooks, Box<dyn FrameworkHooks>, Probe) {
    let shared = Shared::new(Inner::new(opts));
    let kh = KernelHooks {
        placement: Box::new(Placement(shared.clone())),
        ..KernelHooks::default()
    };
    (kh, Box::new(Lifecycle(shared.clone())), Probe(shared))
}

impl Policy for Regions {
    fn name(&self) -> &'static str {
        "regions"
    }
    fn description(&self) -> &'static str {
        "region-based allocation with region domains and domain compaction (Kim et al., ISMM'15)"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::int("order", 6, 5, 8)
                .unit("buddy order")
                .about("region size 2^order pages (RG5..RG8 = 128 KB..1 MB)")
                .source("ISMM'15 §6.1: RG5-RG8; RG6 reported when one is shown"),
            ParamSpec::bool("sharing", true)
                .about("one shared domain for persistent and one for service processes")
                .source("ISMM'15 §4.1.2"),
            ParamSpec::bool("cache_domain", true)
                .about("file pages in one cache domain instead of their process's domain")
                .source("ISMM'15 §4.2"),
            ParamSpec::bool("region_reclaim", true)
                .about("file reclaim empties the victim's whole cache-domain region (drop clean inactive pages, migrate the others)")
                .source("ISMM'15 §4.2"),
            ParamSpec::bool("vmalloc_domain", true)
                .about("order-0 vmalloc and GPU pages in unmovable regions")
                .source("ISMM'15 §4.3, Fig. 7"),
            ParamSpec::bool("compact_on_background", true)
                .about("compact a process's domain when it goes to the background")
                .source("ISMM'15 §4.1.1"),
            ParamSpec::bool("region_effort", true)
                .about("a new region is a costly-order buddy allocation: the kernel compacts and reclaims for it (once) before a single page is taken instead")
                .source("ISMM'15 §4.1: a region is allocated from the buddy allocator (alloc_pages of order N; Linux 3.4 slow path for a costly order: compaction, one reclaim round, sync compaction; §2.2); the single-page fallback is the simulator's, the paper names none"),
            ParamSpec::float("compact_delay_s", 12.0, 0.0, 3600.0)
                .unit("s")
                .about("time after going to the background before the domain is compacted")
                .source("simulator: after the runtime has returned the heap pages the app frees in the background, so they leave no holes in compacted regions: ART's background compacting GC at 5 s; on Android 4.2 (Dalvik) the background GC at 5 s and the heap trim 5 s after it (dalvik/vm/alloc/HeapSource.cpp HEAP_TRIM_IDLE_TIME_MS), ~10.1-10.3 s with the GC's duration; §4.1.1 compacts at the transition (0 s). Measured (150 launches, RG6): 10 s -> order-0 share 95%, p90 19.9 ms; 12 s -> 0%, 2.0 ms"),
            ParamSpec::float("shrinker_interval_s", 60.0, 0.0, 86_400.0)
                .unit("s")
                .about("least time between two shrinker compactions of the special domains")
                .source("simulator rate limit (the paper's shrinker runs when memory is low, §4.4)"),
            ParamSpec::int("walk_ns", 100, 0, 100_000)
                .unit("ns")
                .about("planner CPU per region visited on a domain's list")
                .source("estimate: one list node and its counter (§4.1.1: list walk, no PFN scan)"),
        ]
    }
    fn build(
        &self,
        device: &DeviceProfile,
        swap: SwapOverrides,
        params: &Params,
    ) -> Result<PolicyParts, String> {
        let (kernel_hooks, framework_hooks, _) = hooks(Options::from_params(params));
        Ok(PolicyParts {
            backends: crate::android::stock_backends(device, swap, SwapDevices::Zram)?,
            kernel_hooks,
            framework_hooks,
            runtime_hooks: framework::stock_runtime(),
            claims: Seams::SWAP_BACKENDS | Seams::PLACEMENT | Seams::FRAMEWORK,
        })
    }
}

/// Kernel part: every frame allocation and free goes through the region domains.
struct Placement(Shared<Inner>);

impl PlacementHook for Placement {
    fn alloc(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        self.0.with(|s| {
            let d = if order == 0 { s.domain_for(purpose) } else { NIL };
            if d == NIL {
                s.st.migrating = false;
                return buddy
                    .alloc(order, mt)
                    .or_else(|| if order == 0 { s.st.steal() } else { None });
            }
            if std::mem::take(&mut s.st.migrating) {
                // A migration target: only an existing, non-source region of the domain.
                return s.st.alloc_in(buddy, d, false);
            }
            if !s.st.evac.is_empty() {
                s.st.clear_evac();
            }
            if let Some(p) = s.st.alloc_in(buddy, d, true) {
                return Some(p);
            }
            if let Some(p) = buddy.alloc(0, mt) {
                s.st.counters.stray_pages += 1;
                return Some(p);
            }
            s.st.steal()
        })
    }

    fn free(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        pfn: Pfn,
        order: u8,
        _purpose: AllocPurpose,
    ) {
        self.0.with(|s| {
            if order == 0 && s.st.in_region(pfn) {
                s.st.free_page(buddy, pfn);
            } else {
                buddy.free(pfn, order);
            }
        })
    }

    fn held_free_pages(&self) -> u64 {
        self.0.with(|s| s.st.held)
    }

    fn block_wanted(
        &mut self,
        _cx: &mut HookCx,
        buddy: &BuddyAllocator,
        purpose: AllocPurpose,
    ) -> Option<u8> {
        self.0.with(|s| {
            if !s.opts.region_effort || s.st.migrating {
                return None;
            }
            let d = s.domain_for(purpose);
            if d == NIL {
                return None;
            }
            // As `alloc` would first: compaction sources are cleared at an ordinary allocation.
            if !s.st.evac.is_empty() {
                s.st.clear_evac();
            }
            if !s.st.needs_region(buddy, d) {
                return None;
            }
            s.st.counters.regions_wanted += 1;
            Some(s.opts.order)
        })
    }

    fn reclaim_unit(&mut self, _cx: &mut HookCx, pfn: Pfn, _purpose: AllocPurpose, out: &mut Vec<Pfn>) {
        self.0.with(|s| {
            if s.opts.region_reclaim && s.st.domain_of(pfn) == CACHE {
                s.st.reclaim_unit(pfn, out);
            }
        })
    }

    fn migrate_page(&mut self, _cx: &mut HookCx, pfn: Pfn, _purpose: AllocPurpose) -> bool {
        self.0.with(|s| {
            let m = s.st.is_evac(pfn);
            s.st.migrating = m;
            m
        })
    }

    fn process_exit(&mut self, _cx: &mut HookCx, _buddy: &mut BuddyAllocator, pid: Pid) {
        self.0.with(|s| {
            s.st.retire(pid);
            s.background.remove(&pid);
            if let Some(m) = s.special_members.get_mut(pid as usize) {
                *m = 0;
            }
        })
    }
}

/// Framework part: background transitions trigger domain compaction; the shrinker compacts the
/// special domains when the buddy allocator runs low.
struct Lifecycle(Shared<Inner>);

impl Lifecycle {
    /// Plan the compaction of `pid`'s own domain and queue the frame migration.
    fn compact(&mut self, k: &mut PolicyKernel, pid: Pid) {
        let (walked, moving) = self.0.with(|s| {
            let d = s.st.pid_domain.get(pid as usize).copied().unwrap_or(NIL);
            if d == NIL || d < state::SPECIAL {
                return (0, 0);
            }
            s.st.clear_evac();
            let w = s.st.domains[d as usize].regions.len() as u64 * s.opts.walk_ns;
            (w, s.st.plan_compaction(d))
        });
        k.cx().charge(walked);
        if moving > 0 {
            k.compact_process(pid);
        }
    }
}

impl FrameworkHooks for Lifecycle {
    fn metrics(&self, out: &mut std::collections::BTreeMap<String, f64>) {
        self.0.with(|s| {
            let c = &s.st.counters;
            for (k, v) in [
                ("regions_taken", c.regions_taken as f64),
                ("regions_returned", c.regions_returned as f64),
                ("stray_pages", c.stray_pages as f64),
                ("regions_wanted", c.regions_wanted as f64),
                ("stolen_pages", c.stolen_pages as f64),
                ("domain_compactions", c.compactions as f64),
                ("pages_to_move", c.pages_to_move as f64),
                ("reclaim_units", c.reclaim_units as f64),
                ("reclaim_units_freed", c.reclaim_units_freed as f64),
                ("held_free_pages_at_end", s.st.held as f64),
            ] {
                out.insert(k.to_string(), v);
            }
            // Where the unused pages sit: each special domain, and the per-process ones.
            let free = |d: usize| s.st.domains.get(d).map_or(0, |x| x.free) as f64;
            for (d, name) in state::SPECIAL_NAMES.iter().enumerate() {
                out.insert(format!("held_{name}_at_end"), free(d));
            }
            let own: u64 = s.st.domains.iter().skip(SPECIAL as usize).map(|x| x.free).sum();
            out.insert("held_process_domains_at_end".into(), own as f64);
        });
    }

    fn on_background(&mut self, k: &mut PolicyKernel, app: &AppView) {
        let now = k.now();
        let (on, delay) = self.0.with(|s| {
            s.background.insert(app.pid, now);
            (s.opts.compact_on_background, s.opts.compact_delay)
        });
        if !on {
            return;
        }
        if delay == 0 {
            self.compact(k, app.pid);
        } else {
            k.cx().schedule(now + delay, app.pid as u64);
        }
    }

    fn on_launch_start(
        &mut self,
        _k: &mut PolicyKernel,
        app: &AppView,
        _kind: framework::sim::LaunchKind,
    ) -> engine::Stall {
        self.0.with(|s| s.background.remove(&app.pid));
        engine::Stall::ZERO
    }

    fn on_timer(&mut self, k: &mut PolicyKernel, token: u64) {
        let pid = token as Pid;
        let now = k.now();
        let due = self.0.with(|s| {
            s.background
                .get(&pid)
                .is_some_and(|&since| now >= since + s.opts.compact_delay)
        });
        if due && k.process(pid).is_some() {
            self.compact(k, pid);
        }
    }

    fn on_transition_end(&mut self, k: &mut PolicyKernel, _app: &AppView) {
        let now = k.now();
        let mi = k.meminfo();
        let buddy_free = mi.free.saturating_sub(mi.held_free);
        let high = k.watermarks().high;
        let plan = self.0.with(|s| {
            let due = s.last_shrink.is_none_or(|t| now >= t + s.opts.shrinker_interval);
            if buddy_free >= high || !due || s.st.held == 0 {
                return None;
            }
            s.last_shrink = Some(now);
            s.st.clear_evac();
            let mut walked = 0;
            let mut moving = 0;
            let mut mask = 0u8;
            for d in [SHARED, SERVICE, CACHE] {
                walked += s.st.domains[d as usize].regions.len() as u64;
                let m = s.st.plan_compaction(d);
                if m > 0 {
                    mask |= 1 << d;
                    moving += m;
                }
            }
            let pids: Vec<Pid> = (0..s.special_members.len())
                .filter(|&p| s.special_members[p] & mask != 0)
                .map(|p| p as Pid)
                .collect();
            Some((walked * s.opts.walk_ns, moving, pids))
        });
        if let Some((cost, moving, pids)) = plan {
            k.cx().charge(cost);
            if moving > 0 {
                for pid in pids {
                    k.compact_process(pid);
                }
            }
        }
    }
}
