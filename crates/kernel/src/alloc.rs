//! Physical allocation: user frames through the Linux slow path (watermarks, kswapd wake-up,
//! direct reclaim, OOM), kernel and high-order allocations through `__alloc_pages_slowpath`'s
//! high-order steps (direct compaction, one reclaim round, as their `gfp` allows:
//! [`HighOrderGfp`]), and the frames held by swap backends (zram's pool). A placement policy
//! that takes blocks for order-0 pages (regions) gets the same costly-order effort for its block
//! through [`crate::hooks::PlacementHook::block_wanted`] before it falls back. Every frame goes through
//! the [`crate::hooks::PlacementHook`]; `frame_owner` records who holds each frame. I/O buffers
//! are in [`crate::ion`], the compaction decision in [`crate::compaction`].
//!
//! Simplified: one zone, no per-cpu lists; the high-order watermark check is `free > mark +
//! 2^order` (no per-order `__zone_watermark_ok` loop).

use crate::compaction::Suitable;
use crate::hooks::AllocPurpose;
use crate::types::*;
use crate::{hook_cx, Kernel, KernelError, MAX_RECLAIM_RETRIES, OWNER_KERNEL, OWNER_ZRAM_BIT};
use engine::{Actor, Category, Nanos, Stall};

/// Fruitless direct reclaims in a row after which one allocation OOM-kills whatever the
/// release's rule says: a guard of the simulator against a livelock, not a kernel value.
const LIVELOCK_GUARD_LOOPS: u32 = 64 * MAX_RECLAIM_RETRIES;

/// What a high-order allocation may do when the free lists cannot serve it (the `gfp` bits that
/// matter in `__alloc_pages_slowpath`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HighOrderGfp {
    /// Wake kswapd (not `__GFP_NO_KSWAPD`).
    pub wake_kswapd: bool,
    /// Direct compaction (`__GFP_WAIT` / `__GFP_DIRECT_RECLAIM`).
    pub compact: bool,
    /// One round of direct reclaim followed by a last (sync) compaction (`__GFP_WAIT` with
    /// `__GFP_NORETRY`, or any costly order without `__GFP_REPEAT`).
    pub reclaim: bool,
}

impl HighOrderGfp {
    /// `(… | __GFP_NO_KSWAPD) & ~__GFP_WAIT`: the free lists only.
    pub const ATOMIC_NO_KSWAPD: Self = HighOrderGfp {
        wake_kswapd: false,
        compact: false,
        reclaim: false,
    };
    /// Kernel-internal allocations of this model (slab, vmalloc, GPU): compaction, no reclaim.
    pub const COMPACT_ONLY: Self = HighOrderGfp {
        wake_kswapd: true,
        compact: true,
        reclaim: false,
    };
    /// `GFP_HIGHUSER | __GFP_NORETRY`: async compaction, one reclaim round, sync compaction.
    pub const NORETRY: Self = HighOrderGfp {
        wake_kswapd: true,
        compact: true,
        reclaim: true,
    };
}

/// What a successful high-order attempt does with the block it found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Take {
    /// Allocate it as kernel frames of this migrate type and purpose.
    Frames(MigrateType, AllocPurpose),
    /// Leave it on the free lists for the placement hook's next `alloc`
    /// ([`crate::hooks::PlacementHook::block_wanted`]); a success returns `NIL`.
    Leave,
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
    /// on the calling thread; OOM-kill when the release's rule says reclaim has failed
    /// ([`crate::OomRule`]).
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
        let (mut no_progress_loops, mut fruitless) = (0u32, 0u32);
        let mut block_asked = false;
        loop {
            let free = self.free_pages();
            if free <= wm.low {
                self.wake_kswapd(now + stall.ns);
            }
            if free > wm.min && !std::mem::replace(&mut block_asked, true) {
                self.secure_wanted_block(now, actor, purpose, stall);
                if dead(self) {
                    return Err(KernelError::Killed(owner.unwrap_or(NIL)));
                }
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
            // The release's rule (`oom_rule.rs`); the guard ends a livelock of the model (frees
            // that keep resetting a pre-4.7 scan count without ever lifting free pages above min).
            fruitless = if reclaimed == 0 { fruitless + 1 } else { 0 };
            if self.reclaim_gives_up(reclaimed, &mut no_progress_loops) || fruitless > LIVELOCK_GUARD_LOOPS {
                if !self.oom_kill() {
                    return Err(KernelError::OutOfMemory);
                }
                (no_progress_loops, fruitless) = (0, 0);
                if dead(self) {
                    return Err(KernelError::Killed(owner.unwrap_or(NIL)));
                }
            }
        }
    }

    /// The [`crate::hooks::PlacementHook::block_wanted`] seam: if the placement's next `alloc`
    /// for `purpose` will take a block of some order from the buddy allocator, make the effort of
    /// a costly-order `__alloc_pages_slowpath` for it ([`HighOrderGfp::NORETRY`]: async direct
    /// compaction, one round of direct reclaim, sync compaction; no retry loop), charged to
    /// `actor` and its stall. The block stays on the free lists for `alloc`. Asked at most once
    /// per allocation by the caller, and straight-line here, so it cannot loop.
    fn secure_wanted_block(&mut self, now: Nanos, actor: Actor, purpose: AllocPurpose, stall: &mut Stall) {
        let mut cx = hook_cx!(self, now + stall.ns, Actor::Kernel);
        let Some(order) = self.hooks.placement.block_wanted(&mut cx, &self.buddy, purpose) else {
            return;
        };
        if order == 0 || order as usize >= NR_ORDERS {
            return;
        }
        self.alloc_high_order(now, actor, order, Take::Leave, HighOrderGfp::NORETRY, stall);
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
        let pfn = self.alloc_high_order(
            now,
            actor,
            order,
            Take::Frames(mt, purpose),
            HighOrderGfp::COMPACT_ONLY,
            &mut stall,
        );
        (pfn, stall)
    }

    pub fn free_kernel_as(&mut self, pfn: Pfn, order: u8, purpose: AllocPurpose) {
        self.free_kernel_frames(pfn, order, purpose);
    }

    /// A block of `order` straight from the free lists if the watermark check at `mark` passes,
    /// taken as `take` says.
    fn try_high_order(&mut self, order: u8, take: Take, mark: u64) -> Option<Pfn> {
        if !self.watermark_ok(order, mark) {
            return None;
        }
        match take {
            Take::Frames(mt, purpose) => self.alloc_kernel_frames(order, mt, purpose),
            Take::Leave => self.buddy.free_block_counts()[order as usize..]
                .iter()
                .any(|&n| n > 0)
                .then_some(NIL),
        }
    }

    /// [`zone_watermark_ok`] on the current free lists; a failure at the min mark is counted in
    /// `watermark_fails`. Pages a placement policy holds count as free at order 0 only.
    pub(crate) fn watermark_ok(&mut self, order: u8, mark: u64) -> bool {
        let mut nr_free = self.buddy.free_block_counts();
        nr_free[0] += self.hooks.placement.held_free_pages();
        let ok = zone_watermark_ok(&nr_free, order, mark, self.params.min_free_order_shift);
        if !ok && mark == self.params.watermarks.min {
            self.watermark_fails[order as usize] += 1;
        }
        ok
    }

    /// A high-order allocation (`__alloc_pages_nodemask` for `order > 0`): the free lists at the
    /// low watermark; then, as `gfp` allows, wake kswapd, retry at min, async direct compaction,
    /// one round of direct reclaim and a last sync compaction (3.4 `__alloc_pages_slowpath` with
    /// `__GFP_NORETRY`; the reclaim round is skipped for a costly order when `compaction_ready`).
    /// Every stall lands on `stall`. The block is taken as `take` says.
    pub(crate) fn alloc_high_order(
        &mut self,
        now: Nanos,
        actor: Actor,
        order: u8,
        take: Take,
        gfp: HighOrderGfp,
        stall: &mut Stall,
    ) -> Option<Pfn> {
        let wm = self.params.watermarks;
        if let Some(p) = self.try_high_order(order, take, wm.low) {
            return Some(p);
        }
        if gfp.wake_kswapd {
            self.wake_kswapd(now + stall.ns);
        }
        if let Some(p) = self.try_high_order(order, take, wm.min) {
            return Some(p);
        }
        if !gfp.compact {
            return None;
        }
        if let Some(p) = self.direct_compact(now, actor, order, take, false, stall) {
            return Some(p);
        }
        if gfp.reclaim {
            // A costly order skips the reclaim round when compaction could already run
            // (`shrink_zones` aborts on `compaction_ready`) and goes on to sync compaction.
            if !self.compaction_ready(order) {
                self.direct_reclaim(now + stall.ns, actor, stall);
                if let Some(p) = self.try_high_order(order, take, wm.min) {
                    return Some(p);
                }
            }
            if let Some(p) = self.direct_compact(now, actor, order, take, true, stall) {
                return Some(p);
            }
        }
        if gfp.wake_kswapd {
            // kswapd (3.4) / kcompactd (4.6+) compacts for the failed order in the background.
            self.kcompactd_order = Some(self.kcompactd_order.map_or(order, |o| o.max(order)));
        }
        None
    }

    /// `__alloc_pages_direct_compact`: compact unless deferred or unsuitable, then retry the free
    /// lists at min. A success resets the deferral; a failed sync run defers (3.4: async failures
    /// do not).
    fn direct_compact(
        &mut self,
        now: Nanos,
        actor: Actor,
        order: u8,
        take: Take,
        sync: bool,
        stall: &mut Stall,
    ) -> Option<Pfn> {
        if self.compact_defer.deferred(order) {
            return None;
        }
        let min = self.params.watermarks.min;
        match self.compaction_suitable(order) {
            Suitable::Skipped => return None,
            Suitable::Partial => return self.try_high_order(order, take, min),
            Suitable::Continue => {}
        }
        self.vmstat.compact_stall += 1;
        let cost = self.compact(order, true);
        self.direct_compact_ns += cost;
        self.cpu.charge(actor, Category::Compaction, cost);
        stall.ns += cost;
        stall.psi_ns += cost;
        self.psi.record(now + stall.ns, cost, 0, actor);
        if let Some(p) = self.try_high_order(order, take, min) {
            self.vmstat.compact_success += 1;
            self.compact_defer.reset(order);
            return Some(p);
        }
        self.vmstat.compact_fail += 1;
        if sync {
            self.compact_defer.defer(order);
        }
        None
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
                if self.pt.pages[idx as usize].state != PageState::Resident {
                    continue;
                }
                match self.migrate_resident(now, actor, idx) {
                    Some(true) => moved += 1,
                    Some(false) => {}
                    None => break 'outer,
                }
            }
        }
        Stall {
            ns: self.charge_migrations(actor, moved),
            psi_ns: 0,
        }
    }

    /// Move resident page `idx` to the frame the placement hook picks, if its `migrate_page`
    /// lets it move. `Some(true)`: moved; `Some(false)`: stays; `None`: no frame for it.
    pub(crate) fn migrate_resident(&mut self, now: Nanos, actor: Actor, idx: PageIdx) -> Option<bool> {
        let p = self.pt.pages[idx as usize];
        let purpose = self.user_purpose(p.pid, p.kind);
        let mut cx = hook_cx!(self, now, actor);
        if !self.hooks.placement.migrate_page(&mut cx, p.loc, purpose) {
            return Some(false);
        }
        let to = self
            .hooks
            .placement
            .alloc(&mut cx, &mut self.buddy, 0, MigrateType::Movable, purpose)?;
        self.frame_owner[to as usize] = idx;
        self.pt.epoch += 1;
        self.pt.pages[idx as usize].loc = to;
        self.free_user_frame(p.pid, p.kind, p.loc);
        Some(true)
    }

    /// Count `moved` page migrations and charge their copy + remap to `actor`; returns the CPU.
    pub(crate) fn charge_migrations(&mut self, actor: Actor, moved: u64) -> Nanos {
        self.vmstat.pgmigrate_success += moved;
        let cost = moved * (self.params.page_copy_ns + self.params.minor_fault_ns);
        self.cpu.charge(actor, Category::Compaction, cost);
        cost
    }
}

/// Linux `__zone_watermark_ok`. Free memory less the request (`2^order - 1` pages) must exceed
/// `mark`. Then, with `shift = Some(s)` (3.x with Android's `min_free_order_shift` sysctl in place
/// of upstream's fixed `min >>= 1`): for each order below the request its free pages are
/// discounted (they cannot serve it), the reserve shrinks by `s`, and what is left must still
/// exceed it. With `None` (4.4+, "only enforce watermarks for order-0 allocations"): some free
/// block of at least `order` must exist. `nr_free[o]` counts free blocks of order `o`.
/// Simplified: no `lowmem_reserve`, no `ALLOC_HIGH`/`ALLOC_HARDER`, no per-migratetype lists.
pub fn zone_watermark_ok(nr_free: &[u64; NR_ORDERS], order: u8, mark: u64, shift: Option<u32>) -> bool {
    let total: u64 = nr_free.iter().enumerate().map(|(o, n)| n << o).sum();
    let mut free = total as i64 - ((1i64 << order) - 1);
    let mut min = mark as i64;
    if free <= min {
        return false;
    }
    let Some(shift) = shift else {
        return order == 0 || nr_free[order as usize..].iter().any(|&n| n > 0);
    };
    for (o, &n) in nr_free.iter().enumerate().take(order as usize) {
        free -= (n << o) as i64;
        min = min.checked_shr(shift).unwrap_or(0);
        if free <= min {
            return false;
        }
    }
    true
}
