//! Physical allocation: user frames through the Linux slow path (watermarks, kswapd wake-up,
//! direct reclaim, OOM), kernel and high-order allocations with direct compaction, ION-style I/O
//! buffers, and the frames held by swap backends (zram's pool). Every frame goes through the
//! [`crate::hooks::PlacementHook`]; `frame_owner` records who holds each frame.
//!
//! Simplified: one zone, no per-cpu lists; high-order allocations never reclaim (only compact).

use crate::buddy::FrameMover;
use crate::hooks::AllocPurpose;
use crate::types::*;
use crate::{hook_cx, mm, IoBuffer, Kernel, KernelError, MAX_RECLAIM_RETRIES, OWNER_KERNEL, OWNER_ZRAM_BIT};
use engine::{Actor, Category, Nanos, Stall};

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
    /// The purpose of a user page of `pid` of `kind`.
    pub(crate) fn user_purpose(&self, pid: Pid, kind: PageKind) -> AllocPurpose {
        let class = self.procs.get(pid as usize).map_or(ProcClass::App, |p| p.class);
        AllocPurpose::User { pid, kind, class }
    }

    pub(crate) fn free_user_frame(&mut self, pid: Pid, kind: PageKind, pfn: Pfn) {
        self.frame_owner[pfn as usize] = NIL;
        let purpose = self.user_purpose(pid, kind);
        let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
        self.hooks
            .placement
            .free(&mut cx, &mut self.buddy, pfn, 0, purpose);
    }

    /// Allocate a frame for a user page of `pid` following the Linux slow path: fast path above
    /// the low watermark; below it wake kswapd and allow down to min; below min reclaim directly
    /// on the calling thread; after `MAX_RECLAIM_RETRIES` fruitless attempts, OOM-kill.
    pub(crate) fn alloc_user_frame(
        &mut self,
        now: Nanos,
        actor: Actor,
        pid: Pid,
        kind: PageKind,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
        let purpose = self.user_purpose(pid, kind);
        self.alloc_frame_slowpath(now, actor, purpose, stall)
    }

    pub(crate) fn alloc_frame_slowpath(
        &mut self,
        now: Nanos,
        actor: Actor,
        purpose: AllocPurpose,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
        let owner = match purpose {
            AllocPurpose::User { pid, .. } | AllocPurpose::KernelForProcess(pid) => Some(pid),
            _ => None,
        };
        let dead = |k: &Kernel| owner.is_some_and(|pid| !k.procs[pid as usize].alive);
        let mt = match purpose {
            AllocPurpose::User { .. } | AllocPurpose::Zram => MigrateType::Movable,
            _ => MigrateType::Unmovable,
        };
        let wm = self.params.watermarks;
        let mut retries = 0;
        loop {
            let free = self.free_pages();
            if free <= wm.low {
                self.wake_kswapd(now + stall.ns);
            }
            if free > wm.min {
                let mut cx = hook_cx!(self, now + stall.ns, Actor::Kernel);
                if let Some(pfn) = self
                    .hooks
                    .placement
                    .alloc(&mut cx, &mut self.buddy, 0, mt, purpose)
                {
                    if self.free_pages() <= wm.low {
                        self.wake_kswapd(now + stall.ns);
                    }
                    return Ok(pfn);
                }
            }
            self.wake_kswapd(now + stall.ns);
            // Let kswapd catch up to the time this thread has reached.
            self.advance_to(now + stall.ns);
            if self.free_pages() > wm.min {
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
    pub(crate) fn alloc_kernel_frames(
        &mut self,
        order: u8,
        mt: MigrateType,
        purpose: AllocPurpose,
    ) -> Option<Pfn> {
        let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
        let pfn = self
            .hooks
            .placement
            .alloc(&mut cx, &mut self.buddy, order, mt, purpose)?;
        for f in pfn..pfn + (1 << order) {
            self.frame_owner[f as usize] = OWNER_KERNEL;
        }
        self.kernel_frames += 1 << order;
        Some(pfn)
    }

    pub(crate) fn free_kernel_frames(&mut self, pfn: Pfn, order: u8, purpose: AllocPurpose) {
        for f in pfn..pfn + (1 << order) {
            self.frame_owner[f as usize] = NIL;
        }
        self.kernel_frames -= 1 << order;
        let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
        self.hooks
            .placement
            .free(&mut cx, &mut self.buddy, pfn, order, purpose);
    }

    /// Allocate `2^order` unmovable kernel pages not tied to a process (slab, vmalloc). High
    /// orders may compact. Returns the first frame and the stall of the caller.
    pub fn alloc_kernel(&mut self, now: Nanos, actor: Actor, order: u8) -> (Option<Pfn>, Stall) {
        self.alloc_kernel_as(now, actor, order, AllocPurpose::Kernel)
    }

    pub fn free_kernel(&mut self, pfn: Pfn, order: u8) {
        self.free_kernel_frames(pfn, order, AllocPurpose::Kernel);
    }

    /// [`Kernel::alloc_kernel`] for a given purpose (`Kernel`, `Vmalloc`, `Gpu`), so a placement
    /// policy can tell them apart. Free with [`Kernel::free_kernel_as`] and the same purpose.
    pub fn alloc_kernel_as(
        &mut self,
        now: Nanos,
        actor: Actor,
        order: u8,
        purpose: AllocPurpose,
    ) -> (Option<Pfn>, Stall) {
        let mut stall = Stall::ZERO;
        self.last_now = self.last_now.max(now);
        let mt = MigrateType::Unmovable;
        let pfn = self.alloc_high_order(now, actor, order, mt, purpose, true, &mut stall);
        (pfn, stall)
    }

    pub fn free_kernel_as(&mut self, pfn: Pfn, order: u8, purpose: AllocPurpose) {
        self.free_kernel_frames(pfn, order, purpose);
    }

    #[allow(clippy::too_many_arguments)] // mirrors the kernel's gfp/alloc-context parameters
    pub(crate) fn alloc_high_order(
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
        if self.free_pages() > wm.min + (1 << order) {
            if let Some(p) = self.alloc_kernel_frames(order, mt, purpose) {
                return Some(p);
            }
        }
        if self.free_pages() <= wm.low + (1 << order) {
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
            if self.free_pages() > wm.min + (1 << order) {
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
    pub(crate) fn compact(&mut self, order: u8) -> Nanos {
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
        // One allocator call and one IOMMU/scatterlist mapping per block (ISMM'15 Fig. 1, Fig. 14:
        // map/unmap cost scales with the number of allocation units), zeroing per page.
        let cpu = buf.blocks.len() as u64 * self.params.minor_fault_ns
            + bytes.div_ceil(PAGE_SIZE) * self.params.page_copy_ns;
        self.cpu.charge(actor, Category::Fault, cpu);
        buf.latency_ns = stall.ns + cpu;
        let st = &mut self.io_buffers;
        st.allocations += 1;
        for &(_, order) in &buf.blocks {
            st.blocks_by_order[order as usize] += 1;
        }
        st.latencies_ns.push(buf.latency_ns);
        Ok(buf)
    }

    pub(crate) fn alloc_io_page(
        &mut self,
        now: Nanos,
        actor: Actor,
        stall: &mut Stall,
    ) -> Result<Pfn, KernelError> {
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
            let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
            let (mt, purpose) = (MigrateType::Movable, AllocPurpose::Zram);
            let Some(pfn) = self
                .hooks
                .placement
                .alloc(&mut cx, &mut self.buddy, 0, mt, purpose)
            else {
                break;
            };
            self.frame_owner[pfn as usize] = OWNER_ZRAM_BIT | self.zram_frames.len() as u32;
            self.zram_frames.push(pfn);
        }
        while (self.zram_frames.len() as u64) > want {
            let pfn = self.zram_frames.pop().expect("nonempty");
            self.frame_owner[pfn as usize] = NIL;
            let mut cx = hook_cx!(self, self.last_now, Actor::Kernel);
            self.hooks
                .placement
                .free(&mut cx, &mut self.buddy, pfn, 0, AllocPurpose::Zram);
        }
    }
}

impl Kernel {
    /// Frame migration entry for placement policies: move every resident page of `pid` to a
    /// frame the placement hook picks for it (`AllocPurpose::User`), as page migration does;
    /// pages the hook's `migrate_page` declines stay. Stops when the hook has no frame to give.
    /// Costs a copy and a remap per moved page, on `actor` (the caller's stall).
    pub fn migrate_process(&mut self, now: Nanos, actor: Actor, pid: Pid) -> Stall {
        self.last_now = self.last_now.max(now);
        let Some(proc) = self.procs.get(pid as usize).filter(|p| p.alive) else {
            return Stall::ZERO;
        };
        let ranges: Vec<(PageIdx, u32)> = proc
            .vmas
            .iter()
            .filter_map(|&v| self.vmas[v].as_ref())
            .map(|v| (v.first, v.pages))
            .collect();
        let mut moved = 0u64;
        'outer: for (first, n) in ranges {
            for idx in first..first + n {
                let p = self.pt.pages[idx as usize];
                if p.state != PageState::Resident {
                    continue;
                }
                let purpose = self.user_purpose(pid, p.kind);
                let mut cx = hook_cx!(self, now, actor);
                if !self.hooks.placement.migrate_page(&mut cx, p.loc, purpose) {
                    continue;
                }
                let Some(to) =
                    self.hooks
                        .placement
                        .alloc(&mut cx, &mut self.buddy, 0, MigrateType::Movable, purpose)
                else {
                    break 'outer;
                };
                let from = p.loc;
                self.frame_owner[to as usize] = idx;
                self.pt.pages[idx as usize].loc = to;
                self.free_user_frame(pid, p.kind, from);
                moved += 1;
            }
        }
        self.vmstat.pgmigrate_success += moved;
        let cost = moved * (self.params.page_copy_ns + self.params.minor_fault_ns);
        self.cpu.charge(actor, Category::Compaction, cost);
        Stall { ns: cost, psi_ns: 0 }
    }
}
