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
//! such as zram); file read-around of `read_ahead_kb`; workingset refault detection by refault
//! distance; PSI memory some/full stall totals; compaction for high-order allocations; the OOM
//! killer as a last resort.
//!
//! Simplified: one NUMA node and one zone; no per-cpu page lists; a page belongs to one process;
//! dirty file pages are written back synchronously with reclaim (async I/O on the flash queue);
//! kswapd works in steps of `KSWAPD_STEP_PAGES` so app events interleave with it; PSI "full" is
//! approximated by memory stalls of app main threads (see [`psi`]).

pub mod buddy;
pub mod facade;
pub mod hooks;
pub mod mm;
pub mod psi;
mod reclaim;
pub mod swap;
pub mod types;
pub mod zram;

use buddy::{BuddyAllocator, FrameMover};
use content::ContentStore;
use engine::{Actor, Category, CpuLedger, Nanos, Stall};
use hooks::{AllocPurpose, KernelHooks, PageView};
use mm::{ContentSource, PageTable, Process, Vma};
use psi::Psi;
use serde::Serialize;
use swap::{BackendEnv, FlashDevice, Loaded, SwapBackend};
use types::*;

/// Pages reclaimed per batch (Linux `SWAP_CLUSTER_MAX`).
pub const SWAP_CLUSTER_MAX: usize = 32;
/// Reclaim priorities (Linux `DEF_PRIORITY`): a pass at priority p scans `size >> p` pages.
pub const DEF_PRIORITY: u32 = 12;
/// Direct reclaim attempts without progress before the OOM killer (`MAX_RECLAIM_RETRIES`).
pub const MAX_RECLAIM_RETRIES: u32 = 16;
/// Pages kswapd tries to reclaim per step before letting simulated time move on.
pub const KSWAPD_STEP_PAGES: u64 = 256;

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

/// Reclaim and fault cost parameters (from the device profile; see `device` docs for sources).
#[derive(Debug, Clone, Serialize)]
pub struct KernelParams {
    pub swappiness: u32,
    pub page_cluster: u32,
    pub read_ahead_pages: u32,
    pub minor_fault_ns: Nanos,
    pub major_fault_overhead_ns: Nanos,
    pub reclaim_scan_ns: Nanos,
    pub reclaim_unmap_ns: Nanos,
    pub page_copy_ns: Nanos,
    pub cpu_factor: f64,
    pub watermarks: Watermarks,
}

/// Zone watermarks in pages.
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Watermarks {
    pub min: u64,
    pub low: u64,
    pub high: u64,
}

impl Watermarks {
    /// Linux `__setup_per_zone_wmarks` for one zone.
    pub fn linux(managed_pages: u64, min_free_kbytes: u64, watermark_scale_factor: u64) -> Self {
        let min = min_free_kbytes / 4;
        let tmp = (min / 4).max(managed_pages * watermark_scale_factor / 10_000);
        Watermarks {
            min,
            low: min + tmp,
            high: min + 2 * tmp,
        }
    }
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
}

/// An I/O buffer allocated ION-style.
#[derive(Debug, Clone, Default, Serialize)]
pub struct IoBuffer {
    pub blocks: Vec<(Pfn, u8)>,
    pub latency_ns: Nanos,
}

#[derive(Debug, Clone, Default)]
struct Kswapd {
    awake: bool,
    clock: Nanos,
    priority: u32,
    failures: u32,
}

/// The kernel memory stack of one device.
pub struct Kernel {
    pub params: KernelParams,
    pub(crate) pt: PageTable,
    pub(crate) procs: Vec<Process>,
    pub(crate) vmas: Vec<Option<Vma>>,
    /// pfn -> owner (page index, `OWNER_ZRAM_BIT | slot`, `OWNER_KERNEL`, or `NIL` when free).
    frame_owner: Vec<u32>,
    pub(crate) buddy: BuddyAllocator,
    pub(crate) backends: Vec<Box<dyn SwapBackend>>,
    /// Per backend: handle -> page index.
    pub(crate) handle_owner: Vec<Vec<PageIdx>>,
    zram_frames: Vec<Pfn>,
    pub flash: FlashDevice,
    pub contents: ContentStore,
    pub(crate) hooks: KernelHooks,
    kswapd: Kswapd,
    kcompactd_order: Option<u8>,
    pub psi: Psi,
    pub vmstat: VmStat,
    pub integrity: Integrity,
    pub cpu: CpuLedger,
    pub timers: engine::Timers,
    policy_cmds: Vec<(Nanos, Actor, facade::KernelCmd)>,
    /// Workingset clock: advanced on every eviction and activation (Linux `nonresident_age`).
    pub(crate) nonresident_age: u32,
    /// Recent reclaim cost per type for `get_scan_count` (Linux `lruvec->anon_cost/file_cost`).
    pub(crate) anon_cost: u64,
    pub(crate) file_cost: u64,
    pub(crate) reclaim_pass: u64,
    state_counts: [u64; NR_PAGE_STATES],
    kernel_frames: u64,
    oom_killed: Vec<Pid>,
    pub(crate) scratch_pages: Vec<PageIdx>,
    scratch_handles: Vec<SwapHandle>,
    pub(crate) scratch_handles_out: Vec<SwapHandle>,
    scratch_cands: Vec<PageIdx>,
    scratch_keep: Vec<(PageIdx, Pfn)>,
    scratch_loaded: Vec<Loaded>,
}

/// Adapter giving the buddy allocator's compaction access to frame ownership.
struct FrameMap<'a> {
    owner: &'a mut [u32],
    pages: &'a mut [mm::Page],
    zram: &'a mut [Pfn],
    migrated: u64,
}

impl FrameMover for FrameMap<'_> {
    fn movable(&self, pfn: Pfn) -> bool {
        let o = self.owner[pfn as usize];
        o != NIL && o != OWNER_KERNEL
    }

    fn moved(&mut self, from: Pfn, to: Pfn) {
        let o = self.owner[from as usize];
        self.owner[from as usize] = NIL;
        self.owner[to as usize] = o;
        if o & OWNER_ZRAM_BIT != 0 {
            self.zram[(o & !OWNER_ZRAM_BIT) as usize] = to;
        } else {
            self.pages[o as usize].loc = to;
        }
        self.migrated += 1;
    }
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
        let params = KernelParams {
            swappiness: k.swappiness,
            page_cluster: k.page_cluster,
            read_ahead_pages: (k.read_ahead_kb / 4).max(1),
            minor_fault_ns: device.cpu.minor_fault_ns as Nanos,
            major_fault_overhead_ns: device.cpu.major_fault_overhead_ns as Nanos,
            reclaim_scan_ns: device.cpu.reclaim_scan_ns as Nanos,
            reclaim_unmap_ns: device.cpu.reclaim_unmap_ns as Nanos,
            page_copy_ns: device.page_copy_ns() as Nanos,
            cpu_factor: device.cpu.speed_factor,
            watermarks,
        };
        let nbackends = backends.len();
        Ok(Kernel {
            params,
            pt: PageTable::default(),
            procs: Vec::new(),
            vmas: Vec::new(),
            frame_owner: vec![NIL; managed as usize],
            buddy: BuddyAllocator::new(managed as u32, k.pageblock_order as u8),
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
            psi: Psi::default(),
            vmstat: VmStat::default(),
            integrity: Integrity::default(),
            cpu: CpuLedger::default(),
            timers: engine::Timers::default(),
            policy_cmds: Vec::new(),
            nonresident_age: 0,
            anon_cost: 0,
            file_cost: 0,
            reclaim_pass: 0,
            state_counts: [0; NR_PAGE_STATES],
            kernel_frames: 0,
            oom_killed: Vec::new(),
            scratch_pages: Vec::new(),
            scratch_handles: Vec::new(),
            scratch_handles_out: Vec::new(),
            scratch_cands: Vec::new(),
            scratch_keep: Vec::new(),
            scratch_loaded: Vec::new(),
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
            lru: mm::LruVec::new(),
            counters: Default::default(),
            kernel_allocs: Vec::new(),
            content: None,
        });
        for _ in 0..threads {
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

    /// `MADV_DONTNEED` on anonymous pages `[first, first+n)`: their frames and swap slots are
    /// freed and the next touch sees a fresh zero page.
    pub fn discard(&mut self, first: PageIdx, n: u32) {
        let end = (first + n).min(self.pt.pages.len() as u32);
        for idx in first..end {
            let p = self.pt.pages[idx as usize];
            if !p.kind.is_anon() {
                continue;
            }
            match p.state {
                PageState::Resident => {
                    self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
                    self.free_resident_frame(idx);
                }
                PageState::Swapped => {
                    self.backends[p.swap_dev as usize].free(p.loc);
                    self.handle_owner[p.swap_dev as usize][p.loc as usize] = NIL;
                    self.procs[p.pid as usize].counters.swap -= 1;
                }
                _ => continue,
            }
            self.note_state_change(p.state, PageState::Untouched);
            let page = &mut self.pt.pages[idx as usize];
            page.state = PageState::Untouched;
            page.loc = NIL;
            page.shadow = 0;
            page.flags &= flags::EXEC | flags::HOT_HINT;
        }
        self.sync_backend_frames();
    }

    /// The mapping that contains `idx`.
    pub fn vma_of(&self, idx: PageIdx) -> Option<&Vma> {
        let pid = self.pt.pages.get(idx as usize)?.pid;
        let proc = self.procs.get(pid as usize)?;
        proc.vmas
            .iter()
            .filter_map(|&v| self.vmas[v].as_ref())
            .find(|v| idx >= v.first && idx < v.first + v.pages)
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
    fn release_range(&mut self, first: PageIdx, len: u32) {
        for idx in first..first + len {
            let p = self.pt.pages[idx as usize];
            match p.state {
                PageState::Resident => {
                    self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
                    self.free_user_frame(p.pid, p.loc);
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
        self.hooks.placement.process_exit(&mut self.buddy, pid);
    }

    /// Processes killed by the kernel's OOM killer since the last call.
    pub fn take_oom_kills(&mut self) -> Vec<Pid> {
        std::mem::take(&mut self.oom_killed)
    }

    // ------------------------------------------------------------------ page access and faults

    /// Touch page `idx` on behalf of `actor` at `now`. Returns the stall on the actor's critical
    /// path (zero for a resident page).
    #[inline]
    pub fn access(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        self.vmstat.page_accesses += 1;
        let p = self
            .pt
            .pages
            .get_mut(idx as usize)
            .ok_or(KernelError::NotMapped(idx))?;
        if p.state == PageState::Resident {
            p.flags |= flags::ACCESSED | if write { flags::DIRTY } else { 0 };
            return Ok(Stall::ZERO);
        }
        self.fault(now, actor, idx, write)
    }

    /// Touch `n` consecutive pages; stops at the first error.
    pub fn access_range(
        &mut self,
        now: Nanos,
        actor: Actor,
        first: PageIdx,
        n: u32,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let mut total = Stall::ZERO;
        for idx in first..first + n {
            let s = self.access(now + total.ns, actor, idx, write)?;
            total.add(s);
        }
        Ok(total)
    }

    #[cold]
    fn fault(&mut self, now: Nanos, actor: Actor, idx: PageIdx, write: bool) -> Result<Stall, KernelError> {
        let p = self.pt.pages[idx as usize];
        self.vmstat.pgfault += 1;
        match p.state {
            PageState::Untouched => self.fault_anon_zero(now, actor, idx),
            PageState::Swapped => self.swap_in(now, actor, idx, write),
            PageState::Dropped => self.file_read(now, actor, idx, write),
            PageState::Freed => Err(KernelError::NotMapped(idx)),
            PageState::Resident => Ok(Stall::ZERO),
        }
    }

    fn fault_anon_zero(&mut self, now: Nanos, actor: Actor, idx: PageIdx) -> Result<Stall, KernelError> {
        let pid = self.pt.pages[idx as usize].pid;
        let mut stall = Stall::ZERO;
        let pfn = self.alloc_user_frame(now, actor, pid, &mut stall)?;
        if self.pt.pages[idx as usize].state != PageState::Untouched {
            // The process was OOM-killed while we reclaimed.
            self.free_user_frame(pid, pfn);
            return Err(KernelError::Killed(pid));
        }
        let cost = self.params.minor_fault_ns + self.params.page_copy_ns;
        self.cpu.charge(actor, Category::Fault, cost);
        stall.ns += cost;
        self.make_resident(idx, pfn, PageState::Untouched, false);
        let page = &mut self.pt.pages[idx as usize];
        // A fresh anonymous page has no backing copy: it is dirty whether read or written.
        page.flags |= flags::ACCESSED | flags::DIRTY;
        self.procs[pid as usize].counters.minor_faults += 1;
        Ok(stall)
    }

    /// Map `idx` to frame `pfn` and put it on an LRU list.
    fn make_resident(&mut self, idx: PageIdx, pfn: Pfn, from: PageState, activate: bool) {
        let p = &mut self.pt.pages[idx as usize];
        let (pid, kind) = (p.pid, p.kind);
        p.state = PageState::Resident;
        p.loc = pfn;
        self.frame_owner[pfn as usize] = idx;
        self.state_counts[from as usize] -= 1;
        self.state_counts[PageState::Resident as usize] += 1;
        let anon = kind.is_anon();
        let list = if p.has(flags::HOT_HINT) {
            LruList::Unevictable
        } else if activate {
            LruList::active(anon)
        } else {
            LruList::inactive(anon)
        };
        let proc = &mut self.procs[pid as usize];
        self.pt.lru_add_head(&mut proc.lru, idx, list);
        if anon {
            proc.counters.rss_anon += 1;
        } else {
            proc.counters.rss_file += 1;
        }
    }

    /// Release the frame of a resident page that is already off its LRU list.
    pub(crate) fn free_resident_frame(&mut self, idx: PageIdx) {
        let p = self.pt.pages[idx as usize];
        debug_assert_eq!(p.state, PageState::Resident);
        debug_assert_eq!(p.lru, LruList::None);
        self.free_user_frame(p.pid, p.loc);
        self.uncount_resident(p.pid, p.kind);
    }

    pub(crate) fn note_state_change(&mut self, from: PageState, to: PageState) {
        self.state_counts[from as usize] -= 1;
        self.state_counts[to as usize] += 1;
    }

    fn uncount_resident(&mut self, pid: Pid, kind: PageKind) {
        let c = &mut self.procs[pid as usize].counters;
        if kind.is_anon() {
            c.rss_anon -= 1;
        } else {
            c.rss_file -= 1;
        }
    }

    /// Workingset refault check (Linux `workingset_refault`): activate a refaulting page whose
    /// refault distance fits in the active lists.
    fn refault_should_activate(&self, shadow: u32) -> bool {
        if shadow == 0 {
            return false;
        }
        let distance = self.nonresident_age.wrapping_sub(shadow - 1);
        let workingset: u64 = self
            .procs
            .iter()
            .filter(|p| p.alive)
            .map(|p| {
                (p.lru.len[LruList::ActiveAnon as usize] + p.lru.len[LruList::ActiveFile as usize]) as u64
            })
            .sum();
        (distance as u64) <= workingset
    }

    pub(crate) fn backend_env(&mut self, now: Nanos) -> (BackendEnv<'_>, &mut Vec<Box<dyn SwapBackend>>) {
        (
            BackendEnv {
                now,
                contents: &self.contents,
                cpu_factor: self.params.cpu_factor,
                flash: &mut self.flash,
            },
            &mut self.backends,
        )
    }

    fn swap_in(&mut self, now: Nanos, actor: Actor, idx: PageIdx, write: bool) -> Result<Stall, KernelError> {
        let fault_page = self.pt.pages[idx as usize];
        let (pid, dev) = (fault_page.pid, fault_page.swap_dev as usize);
        // Readahead candidates: pages stored next to the faulting one (none for zram).
        let mut handles = std::mem::take(&mut self.scratch_handles);
        let mut list = std::mem::take(&mut self.scratch_pages);
        handles.clear();
        list.clear();
        let window = (1usize << self.params.page_cluster).saturating_sub(1);
        list.push(idx);
        if !self.backends[dev].synchronous() && window > 0 {
            self.backends[dev].neighbours(fault_page.loc, window, &mut handles);
            let mut cands = std::mem::take(&mut self.scratch_cands);
            cands.clear();
            cands.extend(handles.iter().map(|&h| self.handle_owner[dev][h as usize]));
            self.hooks.fault.swap_readahead(idx, &cands, &mut list);
            self.scratch_cands = cands;
            // Keep the faulting page (first) and the readahead pages still swapped on this device.
            let pages = &self.pt.pages;
            let mut first = true;
            list.retain(|&q| {
                let p = &pages[q as usize];
                std::mem::take(&mut first)
                    || (q != idx && p.state == PageState::Swapped && p.swap_dev as usize == dev)
            });
        }

        let mut stall = Stall::ZERO;
        // Frames first (may reclaim, may OOM-kill); pages may change state meanwhile.
        let mut keep = std::mem::take(&mut self.scratch_keep);
        keep.clear();
        for (i, &q) in list.iter().enumerate() {
            match self.alloc_user_frame(now + stall.ns, actor, pid, &mut stall) {
                Ok(pfn) => keep.push((q, pfn)),
                Err(e) if i == 0 => {
                    self.scratch_handles = handles;
                    self.scratch_pages = list;
                    self.scratch_keep = keep;
                    return Err(e);
                }
                Err(_) => break,
            }
        }
        // Drop pages that changed state while we reclaimed (e.g. the process was killed).
        let mut j = 0;
        while j < keep.len() {
            let (q, pfn) = keep[j];
            let p = &self.pt.pages[q as usize];
            if p.state == PageState::Swapped && p.swap_dev as usize == dev {
                j += 1;
            } else {
                keep.swap_remove(j);
                self.free_user_frame(pid, pfn);
            }
        }
        if keep.first().map(|k| k.0) != Some(idx) {
            for &(_, pfn) in keep.iter() {
                self.free_user_frame(pid, pfn);
            }
            self.scratch_handles = handles;
            self.scratch_pages = list;
            self.scratch_keep = keep;
            return Err(KernelError::Killed(pid));
        }
        handles.clear();
        handles.extend(keep.iter().map(|&(q, _)| self.pt.pages[q as usize].loc));
        let mut loaded = std::mem::take(&mut self.scratch_loaded);
        loaded.clear();
        {
            let t = now + stall.ns;
            let (mut env, backends) = self.backend_env(t);
            backends[dev].load_batch(&mut env, &handles, &mut loaded);
        }
        let mut io = swap::IoCost::default();
        for (i, &(q, pfn)) in keep.iter().enumerate() {
            let l = loaded[i];
            io.add(&l.cost);
            let content = self.pt.pages[q as usize].content;
            self.integrity.pages_swapped_in += 1;
            if l.checksum != self.contents.checksum(content) {
                self.integrity.checksum_mismatches += 1;
            }
            let h = handles[i];
            self.backends[dev].free(h);
            self.handle_owner[dev][h as usize] = NIL;
            self.procs[pid as usize].counters.swap -= 1;
            let shadow = self.pt.pages[q as usize].shadow;
            let activate = q == idx && self.refault_should_activate(shadow);
            if q == idx {
                self.vmstat.workingset_refault_anon += 1;
                if activate {
                    self.vmstat.workingset_activate_anon += 1;
                }
            } else {
                self.vmstat.swapin_readahead_pages += 1;
            }
            self.make_resident(q, pfn, PageState::Swapped, activate);
            let page = &mut self.pt.pages[q as usize];
            page.shadow = 0;
            // The swap slot was freed, so the page must be written again if reclaimed.
            page.flags |= flags::DIRTY;
            if q == idx {
                page.flags |= flags::ACCESSED | if write { flags::DIRTY } else { 0 };
            }
        }
        self.vmstat.pswpin += keep.len() as u64;
        self.vmstat.pgmajfault += 1;
        self.procs[pid as usize].counters.major_faults += 1;
        self.anon_cost += 1;
        let overhead =
            self.params.major_fault_overhead_ns + self.params.minor_fault_ns * (keep.len() as u64 - 1);
        for (cat, ns) in io.cpu() {
            self.cpu.charge(actor, cat, ns);
        }
        self.cpu.charge(actor, Category::Fault, overhead);
        let own = overhead + io.cpu_total() + io.wait_ns;
        let start = now + stall.ns;
        stall.ns += own;
        stall.psi_ns += own;
        self.psi.record(start, own, matches!(actor, Actor::AppMain(_)));
        self.scratch_loaded = loaded;
        self.scratch_handles = handles;
        self.scratch_pages = list;
        self.scratch_keep = keep;
        self.sync_backend_frames();
        Ok(stall)
    }

    /// Fault on a file page not in memory: read it (and its read-around window) from flash.
    fn file_read(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        write: bool,
    ) -> Result<Stall, KernelError> {
        let p = self.pt.pages[idx as usize];
        let pid = p.pid;
        let vma = *self.vma_of(idx).ok_or(KernelError::NotMapped(idx))?;
        let ra = self.params.read_ahead_pages;
        // Read-around window aligned on the read-ahead size, clipped to the mapping.
        let start = (vma.first + ((idx - vma.first) / ra) * ra).max(vma.first);
        let end = (start + ra).min(vma.first + vma.pages);
        let mut stall = Stall::ZERO;
        let mut pages = Vec::with_capacity(ra as usize);
        pages.push(idx);
        pages.extend(
            (start..end).filter(|&q| q != idx && self.pt.pages[q as usize].state == PageState::Dropped),
        );
        let mut got = Vec::with_capacity(pages.len());
        for (i, &q) in pages.iter().enumerate() {
            match self.alloc_user_frame(now + stall.ns, actor, pid, &mut stall) {
                Ok(pfn) => got.push((q, pfn)),
                Err(e) if i == 0 => return Err(e),
                Err(_) => break,
            }
        }
        if self.pt.pages[idx as usize].state != PageState::Dropped {
            for (_, pfn) in got {
                self.free_user_frame(pid, pfn);
            }
            return Err(KernelError::Killed(pid));
        }
        let bytes = got.len() as u64 * PAGE_SIZE;
        let wait = self.flash.read(now + stall.ns, bytes);
        self.vmstat.pgpgin_file += got.len() as u64;
        for &(q, pfn) in &got {
            let shadow = self.pt.pages[q as usize].shadow;
            let refault = q == idx && shadow != 0;
            let activate = refault && self.refault_should_activate(shadow);
            if refault {
                self.vmstat.workingset_refault_file += 1;
                self.file_cost += 1;
                if activate {
                    self.vmstat.workingset_activate_file += 1;
                }
            }
            if self.pt.pages[q as usize].state != PageState::Dropped {
                self.free_user_frame(pid, pfn);
                continue;
            }
            self.make_resident(q, pfn, PageState::Dropped, activate);
            let page = &mut self.pt.pages[q as usize];
            page.shadow = 0;
            if q == idx {
                page.flags |= flags::ACCESSED | if write { flags::DIRTY } else { 0 };
            }
        }
        self.vmstat.pgmajfault += 1;
        self.procs[pid as usize].counters.major_faults += 1;
        let cpu = self.params.major_fault_overhead_ns;
        self.cpu.charge(actor, Category::Fault, cpu);
        let start = now + stall.ns;
        let own = cpu + wait;
        stall.ns += own;
        // Only refaults of evicted file pages count as memory pressure, not first reads.
        if p.shadow != 0 {
            stall.psi_ns += own;
            self.psi.record(start, own, matches!(actor, Actor::AppMain(_)));
        }
        Ok(stall)
    }

    // ------------------------------------------------------------------ physical allocation

    fn free_user_frame(&mut self, pid: Pid, pfn: Pfn) {
        self.frame_owner[pfn as usize] = NIL;
        self.hooks
            .placement
            .free(&mut self.buddy, pfn, 0, AllocPurpose::User(pid));
    }

    fn wake_kswapd(&mut self, now: Nanos) {
        if !self.kswapd.awake {
            self.kswapd.awake = true;
            self.kswapd.clock = self.kswapd.clock.max(now);
            self.kswapd.failures = 0;
            self.vmstat.kswapd_wakeups += 1;
        }
    }

    /// Allocate a frame for a user page of `pid` following the Linux slow path: fast path above
    /// the low watermark; below it wake kswapd and allow down to min; below min reclaim directly
    /// on the calling thread; after `MAX_RECLAIM_RETRIES` fruitless attempts, OOM-kill.
    fn alloc_user_frame(
        &mut self,
        now: Nanos,
        actor: Actor,
        pid: Pid,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
        self.alloc_frame_slowpath(now, actor, AllocPurpose::User(pid), stall)
    }

    fn alloc_frame_slowpath(
        &mut self,
        now: Nanos,
        actor: Actor,
        purpose: AllocPurpose,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
        let owner = match purpose {
            AllocPurpose::User(pid) | AllocPurpose::KernelForProcess(pid) => Some(pid),
            _ => None,
        };
        let dead = |k: &Kernel| owner.is_some_and(|pid| !k.procs[pid as usize].alive);
        let mt = match purpose {
            AllocPurpose::User(_) | AllocPurpose::Zram => MigrateType::Movable,
            _ => MigrateType::Unmovable,
        };
        let wm = self.params.watermarks;
        let mut retries = 0;
        loop {
            let free = self.buddy.nr_free_pages();
            if free <= wm.low {
                self.wake_kswapd(now + stall.ns);
            }
            if free > wm.min {
                if let Some(pfn) = self.hooks.placement.alloc(&mut self.buddy, 0, mt, purpose) {
                    if self.buddy.nr_free_pages() <= wm.low {
                        self.wake_kswapd(now + stall.ns);
                    }
                    return Ok(pfn);
                }
            }
            self.wake_kswapd(now + stall.ns);
            // Let kswapd catch up to the time this thread has reached.
            self.advance_to(now + stall.ns);
            if self.buddy.nr_free_pages() > wm.min {
                continue;
            }
            let reclaimed = self.direct_reclaim(now + stall.ns, actor, stall);
            if dead(self) {
                return Err(KernelError::Killed(owner.unwrap_or(NIL)));
            }
            if reclaimed == 0 {
                retries += 1;
                if retries >= MAX_RECLAIM_RETRIES {
                    if !self.oom_kill() {
                        return Err(KernelError::OutOfMemory);
                    }
                    retries = 0;
                    if dead(self) {
                        return Err(KernelError::Killed(owner.unwrap_or(NIL)));
                    }
                }
            }
        }
    }

    /// Kernel allocation (no reclaim; below min it fails): stacks, page tables, slab.
    fn alloc_kernel_frames(&mut self, order: u8, mt: MigrateType, purpose: AllocPurpose) -> Option<Pfn> {
        let pfn = self.hooks.placement.alloc(&mut self.buddy, order, mt, purpose)?;
        for f in pfn..pfn + (1 << order) {
            self.frame_owner[f as usize] = OWNER_KERNEL;
        }
        self.kernel_frames += 1 << order;
        Some(pfn)
    }

    fn free_kernel_frames(&mut self, pfn: Pfn, order: u8, purpose: AllocPurpose) {
        for f in pfn..pfn + (1 << order) {
            self.frame_owner[f as usize] = NIL;
        }
        self.kernel_frames -= 1 << order;
        self.hooks.placement.free(&mut self.buddy, pfn, order, purpose);
    }

    /// Allocate `2^order` unmovable kernel pages not tied to a process (slab, vmalloc). High
    /// orders may compact. Returns the first frame and the stall of the caller.
    pub fn alloc_kernel(&mut self, now: Nanos, actor: Actor, order: u8) -> (Option<Pfn>, Stall) {
        let mut stall = Stall::ZERO;
        let pfn = self.alloc_high_order(
            now,
            actor,
            order,
            MigrateType::Unmovable,
            AllocPurpose::Kernel,
            true,
            &mut stall,
        );
        (pfn, stall)
    }

    pub fn free_kernel(&mut self, pfn: Pfn, order: u8) {
        self.free_kernel_frames(pfn, order, AllocPurpose::Kernel);
    }

    #[allow(clippy::too_many_arguments)] // mirrors the kernel's gfp/alloc-context parameters
    fn alloc_high_order(
        &mut self,
        now: Nanos,
        actor: Actor,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
        may_compact: bool,
        stall: &mut Stall,
    ) -> Option<Pfn> {
        let wm = self.params.watermarks;
        if self.buddy.nr_free_pages() > wm.min + (1 << order) {
            if let Some(p) = self.alloc_kernel_frames(order, mt, purpose) {
                return Some(p);
            }
        }
        if self.buddy.nr_free_pages() <= wm.low + (1 << order) {
            self.wake_kswapd(now);
        }
        if order > 0 && may_compact {
            // Direct compaction on the allocating thread.
            self.vmstat.compact_stall += 1;
            let cost = self.compact(order);
            self.cpu.charge(actor, Category::Compaction, cost);
            stall.ns += cost;
            stall.psi_ns += cost;
            self.psi.record(now, cost, matches!(actor, Actor::AppMain(_)));
            if self.buddy.nr_free_pages() > wm.min + (1 << order) {
                if let Some(p) = self.alloc_kernel_frames(order, mt, purpose) {
                    self.vmstat.compact_success += 1;
                    return Some(p);
                }
            }
            self.vmstat.compact_fail += 1;
            self.kcompactd_order = Some(self.kcompactd_order.map_or(order, |o| o.max(order)));
        }
        None
    }

    /// Run compaction towards a free block of `order`; returns its CPU cost.
    fn compact(&mut self, order: u8) -> Nanos {
        let mut map = FrameMap {
            owner: &mut self.frame_owner,
            pages: &mut self.pt.pages,
            zram: &mut self.zram_frames,
            migrated: 0,
        };
        let out = self.buddy.compact(order, &mut map, 1 << 12);
        self.vmstat.pgmigrate_success += out.pages_migrated;
        out.pages_scanned * self.params.reclaim_scan_ns
            + out.pages_migrated * (self.params.page_copy_ns + self.params.minor_fault_ns)
    }

    /// Allocate an I/O buffer of `bytes` the way Android's ION system heap does (ISMM'15 Fig. 1):
    /// blocks of order 8, then 4, then 0. High-order attempts do not reclaim (`__GFP_NORETRY`
    /// without `__GFP_RECLAIM`); order-0 pages go through the normal path with reclaim.
    pub fn alloc_io_buffer(&mut self, now: Nanos, actor: Actor, bytes: u64) -> Result<IoBuffer, KernelError> {
        let mut remaining = bytes.div_ceil(PAGE_SIZE);
        let mut buf = IoBuffer::default();
        let mut stall = Stall::ZERO;
        for order in [8u8, 4] {
            while remaining >= 1 << order {
                match self.alloc_high_order(
                    now + stall.ns,
                    actor,
                    order,
                    MigrateType::Unmovable,
                    AllocPurpose::IoBuffer,
                    false,
                    &mut stall,
                ) {
                    Some(pfn) => {
                        buf.blocks.push((pfn, order));
                        remaining -= 1 << order;
                    }
                    None => break,
                }
            }
        }
        while remaining > 0 {
            let pfn = self.alloc_io_page(now, actor, &mut stall)?;
            buf.blocks.push((pfn, 0));
            remaining -= 1;
        }
        let per_page = self.params.minor_fault_ns + self.params.page_copy_ns; // zeroing + mapping
        let cpu = bytes.div_ceil(PAGE_SIZE) * per_page;
        self.cpu.charge(actor, Category::Fault, cpu);
        buf.latency_ns = stall.ns + cpu;
        Ok(buf)
    }

    fn alloc_io_page(&mut self, now: Nanos, actor: Actor, stall: &mut Stall) -> Result<Pfn, KernelError> {
        let pfn = self.alloc_frame_slowpath(now, actor, AllocPurpose::IoBuffer, stall)?;
        self.frame_owner[pfn as usize] = OWNER_KERNEL;
        self.kernel_frames += 1;
        Ok(pfn)
    }

    pub fn free_io_buffer(&mut self, buf: IoBuffer) {
        for (pfn, order) in buf.blocks {
            self.free_kernel_frames(pfn, order, AllocPurpose::IoBuffer);
        }
    }

    /// Make the frames held by swap backends (zram's pool) match what they report.
    pub(crate) fn sync_backend_frames(&mut self) {
        let want: u64 = self.backends.iter().map(|b| b.usage().dram_pages).sum();
        while (self.zram_frames.len() as u64) < want {
            // zram allocates with __GFP_MEMALLOC-like access to reserves during reclaim.
            let Some(pfn) =
                self.hooks
                    .placement
                    .alloc(&mut self.buddy, 0, MigrateType::Movable, AllocPurpose::Zram)
            else {
                break;
            };
            self.frame_owner[pfn as usize] = OWNER_ZRAM_BIT | self.zram_frames.len() as u32;
            self.zram_frames.push(pfn);
        }
        while (self.zram_frames.len() as u64) > want {
            let pfn = self.zram_frames.pop().expect("nonempty");
            self.frame_owner[pfn as usize] = NIL;
            self.hooks
                .placement
                .free(&mut self.buddy, pfn, 0, AllocPurpose::Zram);
        }
    }

    // ------------------------------------------------------------------ background work

    /// Run background kernel work (kswapd, kcompactd) up to simulated time `t`.
    pub fn advance_to(&mut self, t: Nanos) {
        while self.kswapd.awake && self.kswapd.clock < t {
            self.kswapd_step();
        }
        if let Some(order) = self.kcompactd_order.take() {
            let cost = self.compact(order);
            self.cpu.charge(Actor::Kcompactd, Category::Compaction, cost);
        }
    }

    /// One step of kswapd's `balance_pgdat`: reclaim up to `KSWAPD_STEP_PAGES` at the current
    /// priority, lowering the priority while short of the target.
    fn kswapd_step(&mut self) {
        let wm = self.params.watermarks;
        if self.buddy.nr_free_pages() >= wm.high {
            self.kswapd.awake = false;
            self.kswapd.priority = DEF_PRIORITY;
            return;
        }
        let now = self.kswapd.clock;
        let target = KSWAPD_STEP_PAGES.min(wm.high - self.buddy.nr_free_pages()).max(1);
        let out = self.shrink_node(now, Actor::Kswapd, target, self.kswapd.priority, true);
        let cost = (out.cpu_ns + out.io_wait_ns).max(1_000);
        self.psi.record(now, cost, false);
        self.kswapd.clock += cost;
        if out.reclaimed < target {
            if self.kswapd.priority == 0 {
                self.kswapd.failures += 1;
                if self.kswapd.failures >= MAX_RECLAIM_RETRIES {
                    // kswapd gives up; direct reclaim and the OOM killer take over.
                    self.kswapd.awake = false;
                    self.kswapd.priority = DEF_PRIORITY;
                }
            } else {
                self.kswapd.priority -= 1;
            }
        } else {
            self.kswapd.failures = 0;
        }
    }

    /// Direct reclaim on the allocating thread: priorities 12..0 until `SWAP_CLUSTER_MAX` pages.
    fn direct_reclaim(&mut self, now: Nanos, actor: Actor, stall: &mut Stall) -> u64 {
        self.vmstat.allocstall += 1;
        let mut reclaimed = 0;
        let mut cpu = 0;
        for prio in (0..=DEF_PRIORITY).rev() {
            let out = self.shrink_node(now + cpu, actor, SWAP_CLUSTER_MAX as u64 - reclaimed, prio, false);
            reclaimed += out.reclaimed;
            cpu += out.cpu_ns + out.io_wait_ns;
            if reclaimed >= SWAP_CLUSTER_MAX as u64 {
                break;
            }
        }
        stall.ns += cpu;
        stall.psi_ns += cpu;
        self.psi.record(now, cpu, matches!(actor, Actor::AppMain(_)));
        reclaimed
    }

    /// The kernel OOM killer (`oom_badness`): kill the process with the largest
    /// rss + swap + page tables, adjusted by `oom_score_adj`. Returns false if none is killable.
    fn oom_kill(&mut self) -> bool {
        let total = self.buddy.nr_pages() as i64;
        let victim = self
            .procs
            .iter()
            .filter(|p| p.alive && p.oom_score_adj > -1000)
            .map(|p| {
                let pts = (p.rss() + p.counters.swap) as i64 + p.kernel_allocs.len() as i64;
                (pts + p.oom_score_adj as i64 * total / 1000, p.pid)
            })
            .max_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)))
            .map(|(_, pid)| pid);
        match victim {
            Some(pid) => {
                self.vmstat.oom_kill += 1;
                self.exit(pid);
                self.oom_killed.push(pid);
                true
            }
            None => false,
        }
    }

    // ------------------------------------------------------------------ hints

    /// madvise-like hint over pages `[first, first+n)` of one mapping. Returns the caller's stall
    /// (PAGEOUT reclaims synchronously on the caller, as `MADV_PAGEOUT` does).
    pub fn madvise(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall {
        let mut stall = Stall::ZERO;
        let end = (first + n).min(self.pt.pages.len() as u32);
        match advice {
            Advice::PageOut | Advice::ColdRuntime => {
                let cpu = self.pageout_range(now, actor, first, end);
                stall.ns += cpu;
            }
            Advice::Cold => {
                for idx in first..end {
                    let p = self.pt.pages[idx as usize];
                    if p.state == PageState::Resident && p.lru != LruList::Unevictable {
                        let lru = &mut self.procs[p.pid as usize].lru;
                        self.pt.lru_del(lru, idx);
                        self.pt
                            .lru_add_tail(lru, idx, LruList::inactive(p.kind.is_anon()));
                        self.pt.pages[idx as usize].flags &= !(flags::ACCESSED | flags::REFERENCED);
                        self.vmstat.pgdeactivate += 1;
                    }
                }
            }
            Advice::WillNeed => {
                // Prefetch asynchronously: the caller does not wait; the work is kernel time.
                for idx in first..end {
                    let state = self.pt.pages[idx as usize].state;
                    if matches!(state, PageState::Swapped | PageState::Dropped)
                        && self.fault(now, Actor::Kernel, idx, false).is_ok()
                    {
                        // Prefetched, not used: reclaim should not count it as referenced.
                        self.pt.pages[idx as usize].flags &= !flags::ACCESSED;
                    }
                }
            }
            Advice::HotRuntime => {
                for idx in first..end {
                    let p = self.pt.pages[idx as usize];
                    if p.state == PageState::Freed {
                        continue;
                    }
                    self.pt.pages[idx as usize].flags |= flags::HOT_HINT;
                    if p.state == PageState::Resident && p.lru != LruList::Unevictable {
                        self.pt
                            .lru_move_head(&mut self.procs[p.pid as usize].lru, idx, LruList::Unevictable);
                    }
                }
            }
        }
        stall
    }

    /// Clear Fleet's HOT_RUNTIME mark on a range (pages return to the inactive lists).
    pub fn clear_hot_hint(&mut self, first: PageIdx, n: u32) {
        let end = (first + n).min(self.pt.pages.len() as u32);
        for idx in first..end {
            let p = self.pt.pages[idx as usize];
            if p.has(flags::HOT_HINT) {
                self.pt.pages[idx as usize].flags &= !flags::HOT_HINT;
                if p.state == PageState::Resident {
                    self.pt.lru_move_head(
                        &mut self.procs[p.pid as usize].lru,
                        idx,
                        LruList::inactive(p.kind.is_anon()),
                    );
                }
            }
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
            flags: p.flags,
            policy_bits: p.policy_bits,
        }
    }

    pub fn buddy(&self) -> &BuddyAllocator {
        &self.buddy
    }

    pub fn free_pages(&self) -> u64 {
        self.buddy.nr_free_pages()
    }

    pub fn backends(&self) -> &[Box<dyn SwapBackend>] {
        &self.backends
    }

    pub fn meminfo(&self) -> MemInfo {
        let (mut anon, mut file, mut swapped) = (0, 0, 0);
        for p in self.procs.iter().filter(|p| p.alive) {
            anon += p.counters.rss_anon;
            file += p.counters.rss_file;
            swapped += p.counters.swap;
        }
        MemInfo {
            managed: self.buddy.nr_pages() as u64,
            free: self.buddy.nr_free_pages(),
            anon_resident: anon,
            file_resident: file,
            swapped,
            backend_frames: self.zram_frames.len() as u64,
            kernel_frames: self.kernel_frames,
        }
    }

    /// Pages per state over all mappings: [untouched, resident, swapped, dropped, freed(=0)].
    pub fn state_counts(&self) -> [u64; NR_PAGE_STATES] {
        self.state_counts
    }

    /// Check every accounting invariant; used by tests after random operation sequences.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.buddy.check_invariants()?;
        let mut counts = [0u64; NR_PAGE_STATES];
        let mut per_dev = vec![0u64; self.backends.len()];
        for (vid, vma) in self.vmas.iter().enumerate() {
            let Some(vma) = vma else { continue };
            let proc = &self.procs[vma.pid as usize];
            if !proc.alive || !proc.vmas.contains(&vid) {
                return Err(format!("vma {vid} of dead or foreign process {}", vma.pid));
            }
            for idx in vma.first..vma.first + vma.pages {
                let p = &self.pt.pages[idx as usize];
                counts[p.state as usize] += 1;
                if p.pid != vma.pid {
                    return Err(format!("page {idx} pid {} in vma of {}", p.pid, vma.pid));
                }
                match p.state {
                    PageState::Resident => {
                        if self.frame_owner[p.loc as usize] != idx {
                            return Err(format!(
                                "page {idx} resident in frame {} owned by {}",
                                p.loc, self.frame_owner[p.loc as usize]
                            ));
                        }
                        if p.lru == LruList::None {
                            return Err(format!("resident page {idx} on no LRU list"));
                        }
                    }
                    PageState::Swapped => {
                        per_dev[p.swap_dev as usize] += 1;
                        if self.handle_owner[p.swap_dev as usize].get(p.loc as usize) != Some(&idx) {
                            return Err(format!("swapped page {idx} handle {} not owned", p.loc));
                        }
                        if p.lru != LruList::None {
                            return Err(format!("swapped page {idx} on an LRU list"));
                        }
                    }
                    PageState::Freed => return Err(format!("freed page {idx} inside a live vma")),
                    _ => {
                        if p.lru != LruList::None {
                            return Err(format!("non-resident page {idx} on an LRU list"));
                        }
                    }
                }
            }
        }
        if counts != self.state_counts {
            return Err(format!(
                "state counts {:?} != recount {:?}",
                self.state_counts, counts
            ));
        }
        for (d, b) in self.backends.iter().enumerate() {
            if b.usage().stored_pages != per_dev[d] {
                return Err(format!(
                    "backend {d} stores {} pages, page table says {}",
                    b.usage().stored_pages,
                    per_dev[d]
                ));
            }
        }
        for proc in self.procs.iter().filter(|p| p.alive) {
            let mut resident = 0u64;
            for l in LruList::ALL {
                let mut n = 0u32;
                let mut i = proc.lru.tail[l as usize];
                let mut prev = NIL;
                while i != NIL {
                    let p = &self.pt.pages[i as usize];
                    if p.lru != l || p.pid != proc.pid || p.next != prev {
                        return Err(format!("lru {} of pid {} broken at page {i}", l.name(), proc.pid));
                    }
                    n += 1;
                    prev = i;
                    i = p.prev;
                }
                if n != proc.lru.len[l as usize] {
                    return Err(format!(
                        "lru {} of pid {}: len {} but {n} linked",
                        l.name(),
                        proc.pid,
                        proc.lru.len[l as usize]
                    ));
                }
                resident += n as u64;
            }
            if resident != proc.rss() {
                return Err(format!(
                    "pid {}: rss {} but {resident} pages on LRUs",
                    proc.pid,
                    proc.rss()
                ));
            }
        }
        // Frame conservation: free + user + zram + kernel = managed.
        let used = counts[PageState::Resident as usize] + self.zram_frames.len() as u64 + self.kernel_frames;
        if used + self.buddy.nr_free_pages() != self.buddy.nr_pages() as u64 {
            return Err(format!(
                "frames: {} used + {} free != {} managed",
                used,
                self.buddy.nr_free_pages(),
                self.buddy.nr_pages()
            ));
        }
        Ok(())
    }
}
