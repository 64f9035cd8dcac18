//! Decision points the kernel exposes to policies.
//!
//! The kernel never knows which research technique is running: it calls these traits at the
//! decision points, and a policy (one module under `policy/`) replaces the ones it changes, like
//! libCacheSim's per-algorithm hook struct. Each trait's default methods are stock Linux
//! behaviour, so `Stock*` types below are just the defaults.
//!
//! Every hook gets `cx: &mut HookCx` (simulated `now`, the acting actor, CPU charging to the
//! `policy` category, timers). Hooks DECIDE and the kernel ACTS: a hook receives data (views) and
//! returns a decision, so it can never re-enter the kernel or another hook.
//!
//! The seams, and when each is called in simulated time:
//! - [`ReclaimHook::lruvec_order`]: at the start of every reclaim pass (each kswapd step, each
//!   priority of a direct reclaim), at the reclaimer's time, with a [`ScanControl`] and a
//!   [`ProcView`] per live process; returns the order in which processes' LRUs are scanned.
//!   Not asked on a device with one global LRU unless [`ReclaimHook::orders_across_processes`].
//! - [`Shrinker::shrink`] then [`Shrinker::shrink_ranges`] of every registered shrinker, in
//!   order: right after `lruvec_order`, BEFORE the LRU walk: pages the policy wants reclaimed
//!   now. The kernel reclaims exactly those (resident, not mlocked; anon only while a swap device
//!   has room), stops asking shrinkers once the pass has enough, and then skips the LRU walk.
//!   Pages named one by one are taken like LRU victims (`reclaim_scan_ns` + `reclaim_unmap_ns`
//!   each); a named range is zapped (`madvise(MADV_DONTNEED)`-like: `zap_page_ns` per page with a
//!   clean backend copy, `zap_range_ns` per range, no LRU isolation or rmap walk), its other
//!   resident pages taken like LRU victims.
//! - [`ReclaimHook::inactive_verdict`]: for every page taken from the tail of an inactive list
//!   during the walk (accessed bit sampled into the view, then cleared).
//! - [`ReclaimHook::swap_tag`]: for every anon page about to be stored on a swap backend: by the
//!   LRU walk, by the shrinker, by `madvise(PAGEOUT)` and by `madvise(WRITE_AHEAD)`.
//! - [`FaultHook::swap_readahead`]: on every major swap fault, before the frames are allocated,
//!   with the backend's readahead window (empty for synchronous devices such as zram).
//!   On a synchronous device (zram) the hook is not asked; instead the still-swapped
//!   chunk-mates of a multi-page chunk are loaded with the faulting page from ONE decompression
//!   and kept in the swap cache.
//! - [`FaultHook::after_major_fault`]: after every major swap fault of a task on any backend,
//!   once the faulting page is resident (at the fault's completion time); the pages it names are
//!   loaded right then as `Actor::Kernel` work, off the faulting thread's critical path.
//! - [`FaultHook::preloaded`]: right after those loads, with the pages actually loaded (those
//!   still swapped), as `Actor::Kernel`; not called when none was.
//! - [`FaultHook::keep_swap_copy`]: for every page loaded by a swap-in (faulting page and
//!   readahead pages), after the read: keep the backend copy (swap cache) instead of freeing it.
//!   A write fault never keeps it.
//! - [`PlacementHook::alloc`] / [`PlacementHook::free`]: for every frame allocation and free
//!   (user pages, kernel memory, I/O buffers, zram's pool), at the kernel's latest known time
//!   with actor `Kernel`; [`PlacementHook::process_exit`] after a process's frames are freed;
//!   [`PlacementHook::held_free_pages`] whenever the kernel reads its free-page count (every
//!   allocation's watermark check, kswapd, meminfo, invariants). `alloc` is also called by
//!   [`crate::Kernel::migrate_process`] (the facade's `compact_process`) for each resident page
//!   that [`PlacementHook::migrate_page`] lets move (default: all).
//! - [`PlacementHook::reclaim_unit`]: for every file page a reclaim pass (LRU walk, shrinker) is
//!   about to drop: other frames to empty with it (clean inactive file pages dropped, other
//!   resident pages migrated as above); region-granular file reclaim.
//! - [`PlacementHook::block_wanted`]: once per order-0 slow-path allocation (user pages,
//!   I/O-buffer pages), before `alloc`, when free memory is above min: the order of a block the
//!   next `alloc` will take; the kernel compacts and reclaims for it as for a costly-order
//!   request (`crate::alloc`), then calls `alloc` whatever the outcome (bounded: no retry loop).
//!
//! Backend-level seams live with the backends: zram's [`crate::zram::ChunkPlanner`] (called on
//! every zram store, i.e. every swap-out batch, PAGEOUT and write-ahead; `group_by_tag` lets a
//! chunk hold non-adjacent pages of one tag) and [`crate::swap::SwapBackend::maintain`] (idle
//! ageing, writeback), run when policy code calls [`crate::Kernel::swap_maintenance`] (or the
//! facade's queued `swap_maintenance`), typically from a policy timer.
//!
//! Higher layers pass hints with [`crate::Kernel::madvise`] (PAGEOUT, COLD, WILLNEED, MLOCK,
//! MUNLOCK, WRITE_AHEAD). Framework-level policy code works through the queued facade
//! [`crate::facade::PolicyKernel`] (per-page policy bits, idle and protected bits, queued madvise,
//! mlock and per-process compaction), applied by [`crate::Kernel::apply_policy_cmds`].

use crate::buddy::BuddyAllocator;
use crate::types::*;
use engine::HookCx;

/// What reclaim does with a page taken from the tail of an inactive list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Evict it (swap out anon, drop or write back file).
    Reclaim,
    /// Move it to the active list.
    Activate,
    /// Rotate it to the head of the inactive list (second chance).
    Keep,
}

/// The facts about a page a policy decision may use.
#[derive(Debug, Clone, Copy)]
pub struct PageView {
    pub idx: PageIdx,
    pub pid: Pid,
    pub kind: PageKind,
    pub state: PageState,
    /// [`flags`] bits (accessed, dirty, mlocked, protected, idle, swap cache, ...).
    pub flags: u16,
    pub policy_bits: u8,
}

impl PageView {
    pub fn has(&self, f: u16) -> bool {
        self.flags & f != 0
    }

    /// The policy-owned protected bit ([`flags::PROTECTED`]); stock reclaim ignores it.
    pub fn protected(&self) -> bool {
        self.has(flags::PROTECTED)
    }
}

/// A process as a policy sees it (victim selection, facade queries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcView {
    pub pid: Pid,
    /// `oom_score_adj`.
    pub adj: i16,
    /// `adj <= 0` (foreground, visible or system).
    pub foreground: bool,
    /// Resident pages (anon + file).
    pub rss: u64,
    /// Pages on swap backends.
    pub swap: u64,
    pub alive: bool,
}

/// Linux `struct scan_control` for one reclaim pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanControl {
    /// 12 (`DEF_PRIORITY`) .. 0: a pass scans `lru_size >> priority` pages per list.
    pub priority: u32,
    /// kswapd (background) or direct reclaim on an allocating thread.
    pub kswapd: bool,
    /// Reclaim pass counter (increases by one per pass, over the whole run).
    pub pass: u64,
    /// Pages this pass wants.
    pub nr_to_reclaim: u64,
}

/// Linux `folio_check_references` for a page at the inactive tail (accessed bit already sampled
/// into `flags::ACCESSED` by the caller, which clears it afterwards).
pub fn stock_inactive_verdict(p: &PageView) -> Verdict {
    let referenced = p.has(flags::ACCESSED);
    if !referenced {
        return Verdict::Reclaim;
    }
    if p.kind.is_anon() {
        // Referenced anon (swap-backed) pages are activated.
        return Verdict::Activate;
    }
    // File: activate on the second reference or if executable; else give it one more round.
    if p.has(flags::REFERENCED) || p.has(flags::EXEC) {
        Verdict::Activate
    } else {
        Verdict::Keep
    }
}

pub trait ReclaimHook {
    /// Order in which a reclaim pass visits processes' LRUs. `procs` are the live processes in
    /// pid order; the default rotates the starting point every pass (Linux `mem_cgroup_iter`
    /// round-robin). Pids pushed to `out` that are dead or unknown are skipped.
    fn lruvec_order(&mut self, _cx: &mut HookCx, sc: &ScanControl, procs: &[ProcView], out: &mut Vec<Pid>) {
        if procs.is_empty() {
            return;
        }
        let start = (sc.pass as usize) % procs.len();
        out.extend(procs[start..].iter().chain(&procs[..start]).map(|p| p.pid));
    }

    /// Whether this hook replaces the kernel's LRU organisation with lists of its own that span
    /// processes (Ariadne's hot/warm/cold lists of every app): then [`Self::lruvec_order`] is
    /// asked on a device with one global LRU too, and its order is the scan order there, as on
    /// a device with per-app lruvecs. Default: no (a global LRU takes the oldest app first).
    fn orders_across_processes(&self) -> bool {
        false
    }

    /// Decide about a page at the tail of an inactive list.
    fn inactive_verdict(&mut self, _cx: &mut HookCx, _sc: &ScanControl, page: &PageView) -> Verdict {
        stock_inactive_verdict(page)
    }

    /// Tag handed to the swap backend with the page (e.g. a hotness class), for every store.
    fn swap_tag(&mut self, _cx: &mut HookCx, _page: &PageView) -> u8 {
        0
    }

    /// `true` only if `inactive_verdict` and `swap_tag` keep their defaults: the LRU walk then
    /// decides without a hook context per scanned page. Default `false`.
    fn is_stock(&self) -> bool {
        false
    }
}

/// A run of pages of one process's address space, `first .. first + pages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRange {
    pub first: PageIdx,
    pub pages: u32,
}

/// A shrinker asked before the LRU walk of every reclaim pass (Linux `shrink_slab` runs every
/// registered shrinker; here a policy registers one to release memory it can free cheaply, e.g.
/// clean copies of saved objects or a domain's cached pages). Stock has none.
pub trait Shrinker {
    /// Push pages to reclaim now (`want_pages` is what the pass still needs). The kernel reclaims
    /// exactly the pushed pages that are resident and not mlocked (anon ones only while swap has
    /// room), each like an LRU victim. Default: none.
    fn shrink(&mut self, cx: &mut HookCx, sc: &ScanControl, want_pages: u64, out: &mut Vec<PageIdx>) {
        let _ = (cx, sc, want_pages, out);
    }

    /// Push ranges to drop now, asked right after [`Self::shrink`] with what the pass still
    /// needs: each is zapped like `madvise(MADV_DONTNEED)` of the owner's range (the range's page
    /// table walked, one TLB flush): its resident pages with a clean backend copy (swap cache)
    /// are dropped with no I/O at `zap_page_ns` each, plus `zap_range_ns` once if any was; its
    /// other resident, evictable pages are reclaimed as if pushed by `shrink` (their data is
    /// kept). Default: none.
    fn shrink_ranges(
        &mut self,
        cx: &mut HookCx,
        sc: &ScanControl,
        want_pages: u64,
        out: &mut Vec<PageRange>,
    ) {
        let _ = (cx, sc, want_pages, out);
    }
}

pub trait FaultHook {
    /// Pages to bring in together with a major fault on `fault`: `candidates` are the swapped
    /// pages stored next to it (the backend's readahead window, empty for synchronous devices).
    /// Default: all candidates (Linux swap readahead).
    fn swap_readahead(
        &mut self,
        _cx: &mut HookCx,
        _fault: PageIdx,
        candidates: &[PageIdx],
        out: &mut Vec<PageIdx>,
    ) {
        out.extend_from_slice(candidates);
    }

    /// After every major swap fault of a task, on every backend (zram included), once the
    /// faulting page is resident: push pages to load now (pre-decompression, prefetch). The
    /// kernel loads those still swapped as its own work (CPU to `Actor::Kernel`, no stall for the
    /// faulting task); they are not marked accessed. Default: none.
    fn after_major_fault(&mut self, _cx: &mut HookCx, _fault: &PageView, _out: &mut Vec<PageIdx>) {}

    /// The pages of `after_major_fault`'s answer the kernel did load (those still swapped, in
    /// the order asked), so a policy counts only real loads. Default: nothing.
    fn preloaded(&mut self, _cx: &mut HookCx, _pages: &[PageIdx]) {}

    /// After a swap-in read of `page`: keep its copy on the backend (the page enters the swap
    /// cache, clean; reclaiming it again needs no I/O). Not asked for write faults. Default: no
    /// (the slot is freed, as Linux does for synchronous devices and a swap more than half full).
    fn keep_swap_copy(&mut self, _cx: &mut HookCx, _page: &PageView) -> bool {
        false
    }

    /// `true` only if every method above keeps its default: the kernel then takes the stock
    /// fault path without building hook contexts and page views per fault (the hot path of every
    /// run). Default `false`: an implementation is always asked.
    fn is_stock(&self) -> bool {
        false
    }
}

/// Why the kernel needs frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocPurpose {
    /// A user page of a process (movable), with its kind (anon/file) and the process's class.
    User {
        pid: Pid,
        kind: PageKind,
        class: ProcClass,
    },
    /// Kernel memory for a process: stack, page table (unmovable).
    KernelForProcess(Pid),
    /// Kernel memory not tied to a process: slab.
    Kernel,
    /// `vmalloc` memory ([`crate::Kernel::alloc_kernel_as`]).
    Vmalloc,
    /// Graphics buffers allocated by the GPU driver ([`crate::Kernel::alloc_kernel_as`]).
    Gpu,
    /// An I/O buffer block (ION-style, unmovable).
    IoBuffer,
    /// zram's own memory (zsmalloc pages, movable).
    Zram,
}

pub trait PlacementHook {
    /// Pick frames for an allocation of `2^order` pages; `None` = no suitable free memory.
    fn alloc(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        let _ = purpose;
        buddy.alloc(order, mt)
    }

    /// Asked once per order-0 allocation on the slow path (user pages, I/O-buffer pages), before
    /// `alloc`, when free memory is above the min watermark: the order of a block that this
    /// policy's next `alloc` for `purpose` will take from `buddy` (e.g. a new region), or `None`.
    /// If the free lists cannot serve that order (watermark check for the order at low, then
    /// min), the kernel makes the effort of a costly-order `__alloc_pages_slowpath` for it: wake
    /// kswapd, async direct compaction, one round of direct reclaim, sync compaction (deferral
    /// as for any compaction), charged to the allocating task and on its stall; it leaves the
    /// block on the free lists. Then it calls `alloc` whatever the outcome, so a policy falls
    /// back (e.g. to a single page) only after that effort. Never asked twice for one
    /// allocation, and the effort has no retry loop, so it cannot spin. Default: `None`.
    fn block_wanted(
        &mut self,
        _cx: &mut HookCx,
        buddy: &BuddyAllocator,
        purpose: AllocPurpose,
    ) -> Option<u8> {
        let _ = (buddy, purpose);
        None
    }

    /// Return frames allocated by `alloc`.
    fn free(
        &mut self,
        _cx: &mut HookCx,
        buddy: &mut BuddyAllocator,
        pfn: Pfn,
        order: u8,
        purpose: AllocPurpose,
    ) {
        let _ = purpose;
        buddy.free(pfn, order)
    }

    /// Free frames this policy holds back from the buddy allocator (e.g. free pages inside a
    /// process's region). The kernel counts them as free for watermarks, meminfo, lmkd and its
    /// invariants, so a policy that holds frames must hand them out from `alloc` when asked.
    /// Default: 0.
    fn held_free_pages(&self) -> u64 {
        0
    }

    /// Frame migration ([`crate::Kernel::migrate_process`]): whether the resident page in frame
    /// `pfn` moves. Asked for each resident page, before `alloc` picks its new frame. Default:
    /// every page moves.
    fn migrate_page(&mut self, _cx: &mut HookCx, pfn: Pfn, purpose: AllocPurpose) -> bool {
        let _ = (pfn, purpose);
        true
    }

    /// A process exited (all its frames have been freed through `free`).
    fn process_exit(&mut self, _cx: &mut HookCx, _buddy: &mut BuddyAllocator, _pid: Pid) {}

    /// Reclaim granularity for file pages: a reclaim pass (LRU walk or shrinker) is about to drop
    /// the file page in frame `pfn`. Frames to empty together with it go to `out` (e.g. the rest
    /// of its region). For each, the kernel drops a clean inactive file page, moves any other
    /// resident page through `migrate_page` + `alloc` (left in place if it may not move or no
    /// frame is found), and skips frames without a resident user page. Not asked by
    /// `madvise(PAGEOUT)`. Default: none (per-page reclaim).
    fn reclaim_unit(&mut self, _cx: &mut HookCx, pfn: Pfn, purpose: AllocPurpose, out: &mut Vec<Pfn>) {
        let _ = (pfn, purpose, out);
    }
}

/// Stock Linux reclaim.
#[derive(Debug, Default)]
pub struct StockReclaim;
impl ReclaimHook for StockReclaim {
    fn is_stock(&self) -> bool {
        true
    }
}

/// Stock Linux swap readahead.
#[derive(Debug, Default)]
pub struct StockReadahead;
impl FaultHook for StockReadahead {
    fn is_stock(&self) -> bool {
        true
    }
}

/// Stock buddy placement.
#[derive(Debug, Default)]
pub struct BuddyPlacement;
impl PlacementHook for BuddyPlacement {}

/// The set of hooks a kernel runs with.
pub struct KernelHooks {
    pub reclaim: Box<dyn ReclaimHook>,
    /// Registered shrinkers, asked in order before each LRU walk until the pass has enough.
    pub shrinkers: Vec<Box<dyn Shrinker>>,
    pub fault: Box<dyn FaultHook>,
    pub placement: Box<dyn PlacementHook>,
}

impl Default for KernelHooks {
    fn default() -> Self {
        Self {
            reclaim: Box::new(StockReclaim),
            shrinkers: Vec::new(),
            fault: Box::new(StockReadahead),
            placement: Box::new(BuddyPlacement),
        }
    }
}
