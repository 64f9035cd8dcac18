//! Decision points the kernel exposes to policies.
//!
//! The kernel never knows which research technique is running: it calls these traits at the
//! decision points, and a policy (one module under `policy/`) replaces the ones it changes, like
//! libCacheSim's per-algorithm hook struct. Each trait's default methods are stock Linux
//! behaviour, so `Stock*` types below are just the defaults.
//!
//! - [`ReclaimHook`]: which process's LRU to scan first, what to do with a page at the tail of an
//!   inactive list, which tag a swapped-out page carries to the backend (e.g. hot/warm/cold).
//! - [`FaultHook`]: which other swapped pages to bring in with a major fault (readahead,
//!   pre-decompression).
//! - [`PlacementHook`]: which physical frames back a user page or a kernel allocation, and what
//!   happens to them when freed (region-based anti-fragmentation replaces this).
//!
//! Higher layers pass hints with [`crate::Kernel::madvise`] (PAGEOUT, COLD, WILLNEED and Fleet's
//! COLD_RUNTIME / HOT_RUNTIME), and policies may keep per-page state in `Page::policy_bits`.

use crate::buddy::BuddyAllocator;
use crate::types::*;

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

/// The facts about a page a reclaim decision may use.
#[derive(Debug, Clone, Copy)]
pub struct PageView {
    pub idx: PageIdx,
    pub pid: Pid,
    pub kind: PageKind,
    pub flags: u8,
    pub policy_bits: u8,
}

impl PageView {
    pub fn has(&self, f: u8) -> bool {
        self.flags & f != 0
    }
}

/// Linux `folio_check_references` for a page at the inactive tail (accessed bit already sampled
/// into `flags::ACCESSED` by the caller, which clears it afterwards).
pub fn stock_inactive_verdict(p: &PageView) -> Verdict {
    if p.has(flags::HOT_HINT) {
        return Verdict::Activate;
    }
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
    /// Order in which a reclaim pass visits processes' LRUs. `alive` is in pid order; the default
    /// rotates the starting point every pass (Linux `mem_cgroup_iter` round-robin).
    fn lruvec_order(&mut self, alive: &[Pid], pass: u64, out: &mut Vec<Pid>) {
        if alive.is_empty() {
            return;
        }
        let start = (pass as usize) % alive.len();
        out.extend_from_slice(&alive[start..]);
        out.extend_from_slice(&alive[..start]);
    }

    /// Decide about a page at the tail of an inactive list.
    fn inactive_verdict(&mut self, page: &PageView) -> Verdict {
        stock_inactive_verdict(page)
    }

    /// Tag handed to the swap backend with the page (e.g. Ariadne's hotness class).
    fn swap_tag(&mut self, _page: &PageView) -> u8 {
        0
    }
}

pub trait FaultHook {
    /// Pages to bring in together with a major fault on `fault`: `candidates` are the swapped
    /// pages stored next to it (the backend's readahead window, empty for synchronous devices).
    /// Default: all candidates (Linux swap readahead).
    fn swap_readahead(&mut self, _fault: PageIdx, candidates: &[PageIdx], out: &mut Vec<PageIdx>) {
        out.extend_from_slice(candidates);
    }
}

/// Why the kernel needs frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocPurpose {
    /// A user page of a process (movable).
    User(Pid),
    /// Kernel memory for a process: stack, page table (unmovable).
    KernelForProcess(Pid),
    /// Kernel memory not tied to a process: slab, vmalloc.
    Kernel,
    /// An I/O buffer block (ION-style, unmovable).
    IoBuffer,
    /// zram's own memory (zsmalloc pages, movable).
    Zram,
}

pub trait PlacementHook {
    /// Pick frames for an allocation of `2^order` pages; `None` = no suitable free memory.
    fn alloc(
        &mut self,
        buddy: &mut BuddyAllocator,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        let _ = purpose;
        buddy.alloc(order, mt)
    }

    /// Return frames allocated by `alloc`.
    fn free(&mut self, buddy: &mut BuddyAllocator, pfn: Pfn, order: u8, purpose: AllocPurpose) {
        let _ = purpose;
        buddy.free(pfn, order)
    }

    /// A process exited (all its frames have been freed through `free`).
    fn process_exit(&mut self, _buddy: &mut BuddyAllocator, _pid: Pid) {}
}

/// Stock Linux reclaim.
#[derive(Debug, Default)]
pub struct StockReclaim;
impl ReclaimHook for StockReclaim {}

/// Stock Linux swap readahead.
#[derive(Debug, Default)]
pub struct StockReadahead;
impl FaultHook for StockReadahead {}

/// Stock buddy placement.
#[derive(Debug, Default)]
pub struct BuddyPlacement;
impl PlacementHook for BuddyPlacement {}

/// The set of hooks a kernel runs with.
pub struct KernelHooks {
    pub reclaim: Box<dyn ReclaimHook>,
    pub fault: Box<dyn FaultHook>,
    pub placement: Box<dyn PlacementHook>,
}

impl Default for KernelHooks {
    fn default() -> Self {
        Self {
            reclaim: Box::new(StockReclaim),
            fault: Box::new(StockReadahead),
            placement: Box::new(BuddyPlacement),
        }
    }
}
