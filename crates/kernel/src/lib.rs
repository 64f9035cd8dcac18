//! Linux memory-management model for hotlaunch.
//!
//! The [`Kernel`] owns physical memory (a [`buddy::BuddyAllocator`]), the global page table of all
//! processes ([`mm`]), per-process LRU lists, the swap backends ([`swap`]), kswapd and kcompactd,
//! and the counters Linux exposes (`/proc/vmstat`, PSI). Higher layers (runtime, framework) touch
//! pages with [`Kernel::access`], map and unmap memory, send `madvise` hints, and call
//! [`Kernel::advance_to`] before acting at a later simulated time so background reclaim runs in
//! between. Policies change behaviour only through [`hooks`].
//!
//! What is modelled (Linux names): watermarks min/low/high from `min_free_kbytes` and
//! `watermark_scale_factor`; the allocator fast path (low watermark), kswapd wake-up and
//! reclaim to the high watermark, direct reclaim below min on the allocating thread; the
//! inactive/active anon/file LRU with accessed-bit second chance, `inactive_is_low` balancing,
//! `get_scan_count` with `swappiness` and recent reclaim cost; swap-out in batches of
//! `SWAP_CLUSTER_MAX`; swap readahead of `2^page-cluster` slots (skipped for synchronous devices
//! such as zram); file read-around of `read_ahead_kb`, off while it misses (`mmap_miss`, with
//! 4.9's fault-around hits); workingset refault detection by refault distance
//! (the compared lists follow the kernel release);
//! PSI memory some/full stall totals; compaction for high-order allocations; the OOM
//! killer as a last resort, when the release's rule says direct reclaim has failed
//! (`oom_rule.rs`: 4.7+ `should_reclaim_retry`, before it `zone_reclaimable`); swap writeback to flash (frames freed at write completion, reclaim
//! throttled on it, a bounded request queue); swap slots from 256-slot clusters; `mlock` (unevictable list); the swap cache (a resident page keeping a
//! clean copy on a swap device); `/sys/kernel/mm/page_idle`; zram idle ageing and writeback;
//! file `write()`s and small `read()`s (no read-around) and the dirty-page flusher (file pages
//! written back 30 s after they were dirtied, [`dirty`]); a `read()` (before 4.7 also a
//! `write()`) ages its page with `mark_page_accessed` (`mark_accessed.rs`).
//!
//! Layout: `fault.rs` (access, faults, swap-in, file read), `alloc.rs` (frames, the high-order
//! slow path, migration), [`compaction`] (direct compaction: suitability, deferral), [`ion`]
//! (ION-style I/O buffers), `kswapd.rs` (kswapd, direct reclaim, OOM), `reclaim.rs`
//! (the LRU walk, swap-out, PAGEOUT), `writeback.rs` (pages under swap writeback and reclaim
//! throttling), [`swapmap`] (swap slot clusters), [`locality`] (swap-in locality of launches),
//! `madvise.rs`, `swapcache.rs`, `invariants.rs`, and
//! [`facade`] (the narrow, queued kernel view for framework-level policy code).
//!
//! Simplified: one NUMA node and one zone; no per-cpu page lists; a page belongs to one process;
//! a dirty file page reclaim meets is written back by reclaim itself (async I/O on the flash
//! queue), the others by the periodic flusher ([`dirty`]);
//! kswapd works in steps of `KSWAPD_STEP_PAGES` so app events interleave with it; PSI is
//! aggregated over CPUs weighted by non-idle time, one task per CPU (see [`psi`]).

pub mod access_log;
mod alloc;
pub mod buddy;
pub mod compaction;
pub mod dirty;
pub mod facade;
mod fault;
pub use fault::{FAULT_AROUND_PAGES, MMAP_LOTSAMISS};
pub mod hooks;
mod invariants;
pub mod ion;
mod kswapd;
pub mod locality;
pub mod lru;
mod madvise;
mod mark_accessed;
pub mod mm;
mod node_lru;
mod oom_rule;
mod params;
pub mod psi;
pub use oom_rule::OomRule;
pub use params::KernelParams;
mod reclaim;
mod scan_balance;
pub mod swap;
mod swapcache;
pub mod swapmap;
pub mod types;
mod watermarks;
pub use watermarks::Watermarks;
mod writeback;
pub mod zram;

pub use alloc::zone_watermark_ok;
use buddy::BuddyAllocator;
use content::ContentStore;
use engine::{Actor, CpuLedger, Nanos, Timers};
use hooks::{AllocPurpose, KernelHooks, PageView};
pub use ion::{IoBufferStats, IonGfp};
use kswapd::Kswapd;
use mm::{ContentSource, PageTable, Process, Vma};
use psi::Psi;
use serde::Serialize;
use swap::{FlashDevice, Loaded, SwapBackend};
use types::*;

/// Pages reclaimed per batch (Linux `SWAP_CLUSTER_MAX`).
pub const SWAP_CLUSTER_MAX: usize = 32;
/// Reclaim priorities (Linux `DEF_PRIORITY`): a pass at priority p scans `size >> p` pages.
pub const DEF_PRIORITY: u32 = 12;
/// `MAX_RECLAIM_RETRIES`: fruitless direct reclaims in a row before the OOM killer (4.7+ rule,
/// `oom_rule.rs`) and fruitless kswapd passes before it gives up.
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// Pages kswapd tries to reclaim per step before letting simulated time move on.
pub const KSWAPD_STEP_PAGES: u64 = 256;

/// A [`engine::HookCx`] on the kernel's own CPU ledger and timer buffer (disjoint field borrows,
/// so the hook fields of the same kernel stay usable).
macro_rules! hook_cx {
    ($k:ident, $now:expr, $actor:expr) => {
        engine::HookCx::new($now, $actor, &mut $k.cpu, &mut $k.timers)
    };
}
pub(crate) use hook_cx;

/// `frame_owner` values that are not a user page index.
const OWNER_KERNEL: u32 = 0xFFFF_FFFE;
const OWNER_ZRAM_BIT: u32 = 0x8000_0000;

/// Kernel errors seen by callers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelError {
    #[error("access to page {0} which is not mapped")]
    NotMapped(PageIdx),
    #[error("process {0} was killed while waiting for memory")]
    Killed(Pid),
    #[error("process {0} does not exist or is dead")]
    NoSuchProcess(Pid),
    #[error("out of memory: no frame could be found even after reclaim and OOM kills")]
    OutOfMemory,
    #[error("invalid kernel configuration: {0}")]
    Config(String),
}

/// `/proc/vmstat`-style counters.
#[derive(Debug, Clone, Default, Serialize)]
pub struct VmStat {
    /// Every page access handed to the kernel (resident hits included).
    pub page_accesses: u64,
    pub pgfault: u64,
    pub pgmajfault: u64,
    pub pswpin: u64,
    pub pswpout: u64,
    pub pgscan_kswapd: u64,
    pub pgscan_direct: u64,
    pub pgsteal_kswapd: u64,
    pub pgsteal_direct: u64,
    pub pgactivate: u64,
    pub pgdeactivate: u64,
    pub pgrotated: u64,
    pub pgpgin_file: u64,
    pub pgpgout_file: u64,
    pub workingset_refault_anon: u64,
    pub workingset_refault_file: u64,
    pub workingset_activate_anon: u64,
    pub workingset_activate_file: u64,
    pub allocstall: u64,
    pub kswapd_wakeups: u64,
    pub compact_stall: u64,
    pub compact_success: u64,
    pub compact_fail: u64,
    pub pgmigrate_success: u64,
    pub oom_kill: u64,
    pub swap_full_failures: u64,
    pub madvise_pageout_pages: u64,
    pub swapin_readahead_pages: u64,
    /// Pages handed to an asynchronous swap device (flash): under writeback until completion.
    pub swapout_writeback_pages: u64,
    /// Writebacks completed with the page still waiting (its frame freed then).
    pub writeback_completed: u64,
    /// Pages touched (or unmapped) while under writeback: back to the LRU, copy kept.
    pub writeback_rescued: u64,
    /// Time reclaimers (direct reclaim and kswapd) waited for writeback to complete, ns.
    pub reclaim_throttle_ns: u64,
    /// Time app main threads waited for flash reads in faults (file pages, swap-in from a flash
    /// device or from zram writeback), ns: the I/O part of launch latency.
    pub app_read_wait_ns: u64,
    /// File pages the flusher wrote back (dirty longer than `dirty_expire_centisecs`).
    pub flusher_written_pages: u64,
    /// File pages read for a small `read()` or a partial `write()` (one page each, no
    /// read-around; also in `pgpgin_file`), see [`dirty`].
    pub pgpgin_file_syscall: u64,
    /// Swap-in locality of relaunches (Ariadne §3 / Table 3, artifact `locality_check.py`):
    /// swap-in faults evaluated in windows of `LOCALITY_WINDOW`, and how many of them had the
    /// next slot (P2) or the next three slots (P4) of the same device in the same window.
    pub swapin_locality_faults: u64,
    pub swapin_locality_next1: u64,
    pub swapin_locality_next3: u64,
    /// Shrinker ranges zapped (pages dropped, ranges with any, and their CPU, ns): the cost of
    /// a policy's range reclaim on its own (also in `pgsteal_*` and the Reclaim CPU). Left out
    /// of the JSON while zero, so runs without range shrinkers keep their output.
    #[serde(skip_serializing_if = "is_zero")]
    pub shrinker_zap_pages: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub shrinker_zap_ranges: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub shrinker_zap_ns: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

/// Swap integrity counters: every swapped-in page's bytes are checksummed.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct Integrity {
    pub pages_swapped_in: u64,
    pub checksum_mismatches: u64,
}

/// A snapshot of memory use (pages).
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct MemInfo {
    pub managed: u64,
    pub free: u64,
    pub anon_resident: u64,
    pub file_resident: u64,
    pub swapped: u64,
    /// Frames used by swap backends themselves (zram's pool).
    pub backend_frames: u64,
    pub kernel_frames: u64,
    /// Resident pages on the unevictable list (`Mlocked`).
    pub mlocked: u64,
    /// Free frames held by the placement policy (included in `free`).
    pub held_free: u64,
}

/// An I/O buffer allocated ION-style.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IoBuffer {
    pub blocks: Vec<(Pfn, u8)>,
    pub latency_ns: Nanos,
}

/// Reusable buffers of the fault and swap paths (no allocation per fault or per swap batch).
///
/// A path takes the whole struct with [`Kernel::take_scratch`] and gives it back with
/// [`Kernel::put_scratch`]; a nested path (direct reclaim inside a swap-in) then finds empty
/// buffers, and on return the larger of each pair is kept, so nothing is lost or shared.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    pub pages: Vec<PageIdx>,
    pub handles: Vec<SwapHandle>,
    pub handles_out: Vec<SwapHandle>,
    pub cands: Vec<PageIdx>,
    pub keep: Vec<(PageIdx, Pfn)>,
    pub loaded: Vec<Loaded>,
    /// Reclaim: the live processes' views, the scan order, shrinker picks, the swap-out batch.
    pub procs: Vec<hooks::ProcView>,
    pub order: Vec<Pid>,
    pub shrink: Vec<PageIdx>,
    pub ranges: Vec<hooks::PageRange>,
    pub batch: Vec<swap::SwapOutPage>,
}

impl Scratch {
    fn clear(&mut self) {
        self.pages.clear();
        self.handles.clear();
        self.handles_out.clear();
        self.cands.clear();
        self.keep.clear();
        self.loaded.clear();
        self.procs.clear();
        self.order.clear();
        self.shrink.clear();
        self.ranges.clear();
        self.batch.clear();
    }

    /// Keep, per buffer, whichever of `self` and `other` has more capacity (cleared).
    fn keep_larger(&mut self, mut other: Scratch) {
        fn pick<T>(a: &mut Vec<T>, b: &mut Vec<T>) {
            if b.capacity() > a.capacity() {
                std::mem::swap(a, b);
            }
            a.clear();
        }
        pick(&mut self.pages, &mut other.pages);
        pick(&mut self.handles, &mut other.handles);
        pick(&mut self.handles_out, &mut other.handles_out);
        pick(&mut self.cands, &mut other.cands);
        pick(&mut self.keep, &mut other.keep);
        pick(&mut self.loaded, &mut other.loaded);
        pick(&mut self.procs, &mut other.procs);
        pick(&mut self.order, &mut other.order);
        pick(&mut self.shrink, &mut other.shrink);
        pick(&mut self.ranges, &mut other.ranges);
        pick(&mut self.batch, &mut other.batch);
    }
}

/// The kernel memory stack of one device.
pub struct Kernel {
    pub params: KernelParams,
    pub(crate) pt: PageTable,
    pub(crate) procs: Vec<Process>,
    pub(crate) vmas: Vec<Option<Vma>>,
    /// Per mapping (index as `vmas`): its file's `f_ra.mmap_miss`, see [`fault`].
    pub(crate) mmap_miss: Vec<u16>,
    /// Per mapping: the page its last `read()` was of (`f_ra.prev_pos`), see `mark_accessed.rs`.
    pub(crate) read_prev: Vec<PageIdx>,
    /// pfn -> owner (page index, `OWNER_ZRAM_BIT | slot`, `OWNER_KERNEL`, or `NIL` when free).
    pub(crate) frame_owner: Vec<u32>,
    pub(crate) buddy: BuddyAllocator,
    pub(crate) backends: Vec<Box<dyn SwapBackend>>,
    /// Per backend: handle -> page index.
    pub(crate) handle_owner: Vec<Vec<PageIdx>>,
    pub(crate) zram_frames: Vec<Pfn>,
    pub flash: FlashDevice,
    pub contents: ContentStore,
    pub(crate) hooks: KernelHooks,
    pub(crate) kswapd: Kswapd,
    pub(crate) kcompactd_order: Option<u8>,
    /// Direct-compaction deferral state of the zone.
    pub(crate) compact_defer: compaction::CompactDefer,
    /// CPU time of direct compactions so far (ns).
    pub(crate) direct_compact_ns: Nanos,
    pub psi: Psi,
    pub vmstat: VmStat,
    pub integrity: Integrity,
    pub io_buffers: IoBufferStats,
    /// Per order: allocations whose watermark check failed at the min mark (free lists alone
    /// could not serve them; see [`alloc::zone_watermark_ok`]).
    pub watermark_fails: [u64; NR_ORDERS],
    pub cpu: CpuLedger,
    /// Timers requested by hooks ([`engine::HookCx::schedule`]); the framework drains them.
    pub timers: Timers,
    /// Commands queued through [`facade::PolicyKernel`], applied by [`Kernel::apply_policy_cmds`].
    pub(crate) policy_cmds: Vec<facade::QueuedCmd>,
    /// Latest simulated time the kernel has seen (fault, madvise, background work): the `now` of
    /// hooks called from paths that carry no time (placement on mmap/exit).
    pub(crate) last_now: Nanos,
    /// Workingset clock: advanced on every eviction and activation (Linux `nonresident_age`).
    pub(crate) nonresident_age: u32,
    /// Recent reclaim cost per type for `get_scan_count` (Linux `lruvec->anon_cost/file_cost`).
    pub(crate) anon_cost: u64,
    pub(crate) file_cost: u64,
    /// Node-wide `recent_scanned` / `recent_rotated` of pre-5.8 kernels (`scan_balance.rs`).
    pub(crate) reclaim_stat: scan_balance::ReclaimStat,
    pub(crate) reclaim_pass: u64,
    /// The zone's `NR_PAGES_SCANNED` (pre-4.7 OOM rule, `oom_rule.rs`).
    pub(crate) pages_scanned: oom_rule::PagesScanned,
    pub(crate) state_counts: [u64; NR_PAGE_STATES],
    pub(crate) kernel_frames: u64,
    pub(crate) oom_killed: Vec<Pid>,
    pub(crate) scratch: Option<Box<Scratch>>,
    /// Pages under writeback, sorted by completion time (then page and handle; the handle spots
    /// stale entries).
    pub(crate) writeback_q: writeback::WritebackQueue,
    pub(crate) writeback_pages: u64,
    /// Dirty file pages by the time they were dirtied, for the flusher (`dirty.rs`).
    pub(crate) dirty_q: std::collections::VecDeque<(Nanos, PageIdx)>,
    /// The flusher's next periodic wake-up.
    pub(crate) next_flush: Nanos,
    /// Swap-in locality tracing ([`Kernel::trace_swapins`]): the traced process and its
    /// swap-in faults as `(device, slot)`.
    pub(crate) trace_pid: Option<Pid>,
    pub(crate) trace_slots: Vec<(u8, SwapHandle)>,
    /// The page-access stream while recording ([`access_log`]); `None` (the default) costs one
    /// branch per access.
    pub(crate) access_log: Option<Box<access_log::AccessLog>>,
}

impl Kernel {
    /// Build the kernel for `device` with the given swap backends (in priority order: the first
    /// one with room takes a swap-out batch, as Linux swap priorities do) and page contents.
    pub fn new(
        device: &device::DeviceProfile,
        contents: ContentStore,
        backends: Vec<Box<dyn SwapBackend>>,
        hooks: KernelHooks,
    ) -> Result<Self, KernelError> {
        let managed = device.managed_pages();
        if managed == 0 || managed > u32::MAX as u64 / 2 {
            return Err(KernelError::Config(format!(
                "managed memory of {managed} pages is out of range"
            )));
        }
        if contents.is_empty() {
            return Err(KernelError::Config("the content store holds no pages".into()));
        }
        let k = &device.kernel;
        let watermarks =
            Watermarks::linux(managed, device.min_free_kbytes(), k.watermark_scale_factor as u64);
        let mut params = KernelParams {
            swappiness: k.swappiness,
            page_cluster: k.page_cluster,
            read_ahead_pages: (k.read_ahead_kb / 4).max(1),
            minor_fault_ns: device.cpu.minor_fault_ns as Nanos,
            major_fault_overhead_ns: device.cpu.major_fault_overhead_ns as Nanos,
            reclaim_scan_ns: device.cpu.reclaim_scan_ns as Nanos,
            reclaim_unmap_ns: device.cpu.reclaim_unmap_ns as Nanos,
            zap_page_ns: device.cpu.zap_page_ns as Nanos,
            zap_range_ns: device.cpu.zap_range_ns as Nanos,
            page_copy_ns: device.page_copy_ns() as Nanos,
            cpu_factor: device.cpu.speed_factor,
            watermarks,
            // The ION system heap's flags of the device's kernel release (3.4 for ISMM'15's
            // Nexus 10); a profile without a release gets today's (3.10+) behaviour.
            ion_gfp: device
                .kernel_release()
                .map_or(IonGfp::Linux310, |r| IonGfp::for_kernel(r.major, r.minor)),
            min_free_order_shift: device
                .kernel_release()
                .filter(|r| (r.major, r.minor) < (4, 4))
                .map(|_| k.min_free_order_shift),
            global_lru: !device.stock().per_app_memcg,
            node_lru_by_page_age: device.stock().node_lru_by_page_age,
            refault_anon_challenge: device
                .kernel_release()
                .is_none_or(|r| (r.major, r.minor) >= (5, 9)),
            new_anon_active: !device.stock().per_app_memcg
                && device.stock().node_lru_by_page_age
                && device
                    .kernel_release()
                    .is_some_and(|r| (r.major, r.minor) < (5, 9)),
            scan_balance_49: !device.stock().per_app_memcg
                && device.stock().node_lru_by_page_age
                && device
                    .kernel_release()
                    .is_some_and(|r| (r.major, r.minor) < (5, 8)),
            file_ratio_one: false,
            write_marks_accessed: device
                .kernel_release()
                .is_some_and(|r| (r.major, r.minor) < (4, 7)),
            oom_rule: device.kernel_release().map_or(OomRule::NoProgressLoops, |r| {
                OomRule::for_kernel(r.major, r.minor)
            }),
        };
        params.file_ratio_one = params.scan_balance_49
            && device
                .kernel_release()
                .is_some_and(|r| (r.major, r.minor) < (4, 7));
        let nbackends = backends.len();
        let stamped = params.global_lru && params.node_lru_by_page_age;
        Ok(Kernel {
            params,
            pt: PageTable::with_stamps(stamped),
            procs: Vec::new(),
            vmas: Vec::new(),
            mmap_miss: Vec::new(),
            read_prev: Vec::new(),
            frame_owner: vec![NIL; managed as usize],
            buddy: {
                // Kernels before 4.0 steal on fallback the 3.x way (see the buddy allocator).
                let mut b = BuddyAllocator::new(managed as u32, k.pageblock_order as u8);
                b.set_legacy_fallback(
                    device
                        .kernel_release()
                        .is_some_and(|r| (r.major, r.minor) < (4, 0)),
                );
                // Compaction's pageblock skip hints came with 3.7 (`compaction.rs`).
                b.set_skip_hints(
                    device
                        .kernel_release()
                        .is_none_or(|r| (r.major, r.minor) >= (3, 7)),
                );
                b
            },
            backends,
            handle_owner: vec![Vec::new(); nbackends],
            zram_frames: Vec::new(),
            flash: FlashDevice::from_profile(device),
            contents,
            hooks,
            kswapd: Kswapd {
                priority: DEF_PRIORITY,
                ..Default::default()
            },
            kcompactd_order: None,
            compact_defer: compaction::CompactDefer::default(),
            direct_compact_ns: 0,
            psi: Psi::default(),
            vmstat: VmStat::default(),
            integrity: Integrity::default(),
            io_buffers: IoBufferStats::default(),
            watermark_fails: [0; NR_ORDERS],
            cpu: CpuLedger::default(),
            timers: Timers::default(),
            policy_cmds: Vec::new(),
            last_now: 0,
            nonresident_age: 0,
            anon_cost: 0,
            file_cost: 0,
            reclaim_stat: Default::default(),
            reclaim_pass: 0,
            pages_scanned: Default::default(),
            state_counts: [0; NR_PAGE_STATES],
            kernel_frames: 0,
            oom_killed: Vec::new(),
            scratch: None,
            writeback_q: Default::default(),
            writeback_pages: 0,
            dirty_q: Default::default(),
            next_flush: dirty::DIRTY_WRITEBACK_NS,
            trace_pid: None,
            trace_slots: Vec::new(),
            access_log: None,
        })
    }

    // ------------------------------------------------------------------ processes and mappings

    /// Create a process. `threads` kernel stacks (order-1, unmovable) are allocated for it.
    pub fn spawn(&mut self, name: &str, oom_score_adj: i16, threads: u32) -> Pid {
        let pid = self.procs.len() as Pid;
        self.procs.push(Process {
            pid,
            name: name.to_string(),
            oom_score_adj,
            alive: true,
            vmas: Vec::new(),
            lru: mm::LruVec::new(pid),
            counters: Default::default(),
            kernel_allocs: Vec::new(),
            content: None,
            class: ProcClass::App,
        });
        for _ in 0..threads {
            // Kernel stacks (order 1) are taken straight from the free lists; the watermark
            // check is recorded (ISMM'15 §6.1's order-1 failures) but its slow path (reclaim,
            // compaction, the retry loop that "halts" the stock kernel) is not modelled here.
            let min = self.params.watermarks.min;
            self.watermark_ok(1, min);
            if let Some(pfn) =
                self.alloc_kernel_frames(1, MigrateType::Unmovable, AllocPurpose::KernelForProcess(pid))
            {
                self.procs[pid as usize].kernel_allocs.push((pfn, 1));
            }
        }
        pid
    }

    pub fn process(&self, pid: Pid) -> Option<&Process> {
        self.procs.get(pid as usize)
    }

    pub fn processes(&self) -> &[Process] {
        &self.procs
    }

    pub fn set_oom_score_adj(&mut self, pid: Pid, adj: i16) {
        if let Some(p) = self.procs.get_mut(pid as usize) {
            p.oom_score_adj = adj;
        }
    }

    /// Map `pages` pages of `kind` for `pid`; contents come from `source`. File pages start on
    /// flash (`Dropped`), anonymous pages untouched. Page-table pages (one unmovable frame per
    /// 512 mapped pages) are allocated now. Returns the first page index.
    pub fn mmap(
        &mut self,
        pid: Pid,
        pages: u32,
        kind: PageKind,
        exec: bool,
        source: ContentSource,
    ) -> Result<PageIdx, KernelError> {
        if !self.procs.get(pid as usize).is_some_and(|p| p.alive) {
            return Err(KernelError::NoSuchProcess(pid));
        }
        if pages == 0 {
            return Err(KernelError::Config("mmap of zero pages".into()));
        }
        let state = if kind == PageKind::File {
            PageState::Dropped
        } else {
            PageState::Untouched
        };
        let first = self.pt.map(pid, pages, kind, state, exec);
        for off in 0..pages {
            self.pt.pages[(first + off) as usize].content = source.content_of(off);
        }
        self.state_counts[state as usize] += pages as u64;
        let vma_id = self.vmas.len();
        self.vmas.push(Some(Vma {
            pid,
            first,
            pages,
            kind,
            exec,
            source,
        }));
        self.mmap_miss.push(0);
        self.read_prev.push(NIL);
        self.procs[pid as usize].vmas.push(vma_id);
        for _ in 0..pages.div_ceil(512) {
            if let Some(pfn) =
                self.alloc_kernel_frames(0, MigrateType::Unmovable, AllocPurpose::KernelForProcess(pid))
            {
                self.procs[pid as usize].kernel_allocs.push((pfn, 0));
            }
        }
        Ok(first)
    }

    /// Set the content source used by [`Kernel::mmap_default`] for `pid`.
    pub fn set_content_source(&mut self, pid: Pid, source: ContentSource) {
        if let Some(p) = self.procs.get_mut(pid as usize) {
            p.content = Some(source);
        }
    }

    /// Map with the process's default content source (each mapping gets its own seed so that
    /// different mappings do not repeat the same page sequence).
    pub fn mmap_default(&mut self, pid: Pid, pages: u32, kind: PageKind) -> Result<PageIdx, KernelError> {
        let proc = self
            .procs
            .get(pid as usize)
            .ok_or(KernelError::NoSuchProcess(pid))?;
        let mut src = proc.content.unwrap_or(ContentSource {
            base: 0,
            len: self.contents.len() as u32,
            seed: pid as u64,
        });
        src.seed = engine::splitmix64(src.seed ^ self.vmas.len() as u64);
        self.mmap(pid, pages, kind, false, src)
    }
    /// The mapping that contains `idx`.
    pub fn vma_of(&self, idx: PageIdx) -> Option<&Vma> {
        self.vma_id_of(idx).and_then(|v| self.vmas[v].as_ref())
    }

    /// Index (into `vmas`) of the mapping that contains `idx`.
    pub(crate) fn vma_id_of(&self, idx: PageIdx) -> Option<usize> {
        let pid = self.pt.pages.get(idx as usize)?.pid;
        let proc = self.procs.get(pid as usize)?;
        proc.vmas.iter().copied().find(|&v| {
            self.vmas[v]
                .as_ref()
                .is_some_and(|m| idx >= m.first && idx < m.first + m.pages)
        })
    }

    /// Unmap the mapping starting at `first` (must be the start of a mapping of `pid`).
    pub fn munmap(&mut self, pid: Pid, first: PageIdx) -> Result<(), KernelError> {
        let proc = self
            .procs
            .get(pid as usize)
            .ok_or(KernelError::NoSuchProcess(pid))?;
        let pos = proc
            .vmas
            .iter()
            .position(|&v| self.vmas[v].is_some_and(|m| m.first == first))
            .ok_or(KernelError::NotMapped(first))?;
        let vma_id = self.procs[pid as usize].vmas.swap_remove(pos);
        let vma = self.vmas[vma_id].take().expect("vma present");
        self.release_range(vma.first, vma.pages);
        Ok(())
    }

    /// Free every page of a range: frames back to the allocator, swap slots back to backends.
    pub(crate) fn release_range(&mut self, first: PageIdx, len: u32) {
        for idx in first..first + len {
            let p = self.pt.pages[idx as usize];
            match p.state {
                PageState::Resident => {
                    if p.has(flags::DIRTY) && !p.kind.is_anon() {
                        // The page cache outlives the mapping: its dirty data still reaches flash.
                        self.flash.write(self.last_now, PAGE_SIZE);
                        self.vmstat.flusher_written_pages += 1;
                    }
                    self.writeback_cancel(idx);
                    if p.has(flags::SWAPCACHE) {
                        self.drop_swap_copy(idx);
                    }
                    self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
                    self.free_user_frame(p.pid, p.kind, p.loc);
                    self.uncount_resident(p.pid, p.kind);
                }
                PageState::Swapped => {
                    self.backends[p.swap_dev as usize].free(p.loc);
                    self.handle_owner[p.swap_dev as usize][p.loc as usize] = NIL;
                    self.procs[p.pid as usize].counters.swap -= 1;
                }
                _ => {}
            }
            self.state_counts[p.state as usize] -= 1;
        }
        self.pt.unmap(first, len);
        self.sync_backend_frames();
    }

    /// Kill or exit a process: all its memory is freed.
    pub fn exit(&mut self, pid: Pid) {
        let Some(proc) = self.procs.get_mut(pid as usize) else {
            return;
        };
        if !proc.alive {
            return;
        }
        proc.alive = false;
        self.psi.task_exited(self.last_now, Actor::AppMain(pid));
        let vmas = std::mem::take(&mut proc.vmas);
        let kallocs = std::mem::take(&mut proc.kernel_allocs);
        for v in vmas {
            if let Some(vma) = self.vmas[v].take() {
                self.release_range(vma.first, vma.pages);
            }
        }
        for (pfn, order) in kallocs {
            self.free_kernel_frames(pfn, order, AllocPurpose::KernelForProcess(pid));
        }
        let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
        self.hooks.placement.process_exit(&mut cx, &mut self.buddy, pid);
    }

    /// Processes killed by the kernel's OOM killer since the last call.
    pub fn take_oom_kills(&mut self) -> Vec<Pid> {
        std::mem::take(&mut self.oom_killed)
    }

    /// Borrow the scratch buffers (cleared) for one path; give them back with `put_scratch`.
    /// A box moves as one pointer: the common path (no nesting) neither copies nor compares the
    /// buffers; a nested path finds no box and starts an empty one.
    pub(crate) fn take_scratch(&mut self) -> Box<Scratch> {
        self.scratch.take().unwrap_or_default()
    }

    pub(crate) fn put_scratch(&mut self, mut s: Box<Scratch>) {
        match &mut self.scratch {
            None => {
                s.clear();
                self.scratch = Some(s);
            }
            // A nested path gave its buffers back first: keep the larger of each.
            Some(nested) => nested.keep_larger(*s),
        }
    }

    // ------------------------------------------------------------------ queries

    pub fn page(&self, idx: PageIdx) -> Option<&mm::Page> {
        self.pt.pages.get(idx as usize)
    }

    /// Per-page policy bits (MemSaver keeps its history here).
    pub fn policy_bits_mut(&mut self, idx: PageIdx) -> &mut u8 {
        &mut self.pt.pages[idx as usize].policy_bits
    }

    pub fn page_view(&self, idx: PageIdx) -> PageView {
        let p = &self.pt.pages[idx as usize];
        PageView {
            idx,
            pid: p.pid,
            kind: p.kind,
            state: p.state,
            flags: p.flags,
            policy_bits: p.policy_bits,
        }
    }

    pub fn buddy(&self) -> &BuddyAllocator {
        &self.buddy
    }

    /// Free pages as watermarks, lmkd and meminfo see them: the buddy allocator's free pages
    /// plus the free frames a placement policy holds ([`hooks::PlacementHook::held_free_pages`]).
    pub fn free_pages(&self) -> u64 {
        self.buddy.nr_free_pages() + self.hooks.placement.held_free_pages()
    }

    /// Set the class of `pid` (carried by every `AllocPurpose::User` of its pages).
    pub fn set_proc_class(&mut self, pid: Pid, class: ProcClass) {
        if let Some(p) = self.procs.get_mut(pid as usize) {
            p.class = class;
        }
    }

    pub fn backends(&self) -> &[Box<dyn SwapBackend>] {
        &self.backends
    }

    pub fn meminfo(&self) -> MemInfo {
        let (mut anon, mut file, mut swapped, mut mlocked) = (0, 0, 0, 0);
        for p in self.procs.iter().filter(|p| p.alive) {
            anon += p.counters.rss_anon;
            file += p.counters.rss_file;
            swapped += p.counters.swap;
            mlocked += p.lru.len[LruList::Unevictable as usize] as u64;
        }
        MemInfo {
            managed: self.buddy.nr_pages() as u64,
            free: self.free_pages(),
            held_free: self.hooks.placement.held_free_pages(),
            anon_resident: anon,
            file_resident: file,
            swapped,
            backend_frames: self.zram_frames.len() as u64,
            kernel_frames: self.kernel_frames,
            mlocked,
        }
    }

    /// Pages per state over all mappings: [untouched, resident, swapped, dropped, freed(=0)].
    pub fn state_counts(&self) -> [u64; NR_PAGE_STATES] {
        self.state_counts
    }
}
