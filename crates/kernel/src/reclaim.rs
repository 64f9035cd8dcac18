//! Page reclaim (mm/vmscan.c): `shrink_node` → per-process `shrink_lruvec` → `shrink_list`.
//! With per-app memcgs every process's lruvec gets its own `size >> priority` targets (in the
//! policy's `lruvec_order`); with one global LRU (`KernelParams::global_lru`) the node's targets
//! are taken from the processes oldest first (`shrink_global`), or with
//! `KernelParams::node_lru_by_page_age` from the node's lists merged by page age
//! (`node_lru.rs`, `shrink_global_by_age`), unless the reclaim hook keeps
//! lists of its own across processes (`ReclaimHook::orders_across_processes`, Ariadne).
//!
//! Modelled: scan targets per LRU list of `size >> priority`, split between anon and file by
//! `get_scan_count` (swappiness and recent reclaim cost, anon only while a swap device has room);
//! `inactive_is_low` (ratio `sqrt(10 × GB)`) deciding whether active pages are deactivated; the
//! inactive-tail decision through the policy's [`crate::hooks::ReclaimHook`] (stock: accessed-bit
//! second chance, file pages need two references); anon pages swapped out in batches of
//! `SWAP_CLUSTER_MAX` to the first backend with room (on flash the pages go under writeback and
//! their frames are freed when the write completes, see `writeback.rs`); clean file pages
//! dropped, dirty ones written back to flash first; a workingset shadow (eviction clock) stored
//! in each evicted page. A file page dropped by a reclaim pass takes the frames of its placement
//! reclaim unit with it (stock: none; region policies: the rest of its region, emptied by
//! dropping clean inactive file pages and migrating the others).
//! Costs: `reclaim_scan_ns` per page scanned, `reclaim_unmap_ns` per page evicted, plus the
//! backend's compression CPU. A shrinker's named range is zapped instead (`madvise(DONTNEED)`:
//! the owner's page table walked over the range, one TLB flush): `zap_page_ns` per dropped
//! swap-cached page plus `zap_range_ns` per range, no LRU isolation or rmap walk.

use crate::hooks::{ScanControl, Verdict};
use crate::swap::SwapOutPage;
use crate::types::*;
use crate::{hook_cx, Kernel, OWNER_ZRAM_BIT, SWAP_CLUSTER_MAX};
use engine::{Actor, Category, Nanos};

/// What a reclaim pass did.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct ReclaimOutcome {
    pub reclaimed: u64,
    pub scanned: u64,
    /// CPU spent (all categories), already charged to the actor.
    pub cpu_ns: Nanos,
    /// Time the reclaimer was blocked submitting swap writes (full request queue; flash swap;
    /// zram is synchronous and costs only CPU).
    pub io_wait_ns: Nanos,
    /// Pages put under writeback (frames freed when their writes complete, not counted in
    /// `reclaimed`).
    pub writeback: u64,
}

pub(crate) struct ScanCtx {
    sc: ScanControl,
    now: Nanos,
    actor: Actor,
    pub(crate) nr_to_reclaim: u64,
    /// kswapd keeps scanning its targets; direct reclaim stops once it has enough.
    pub(crate) background: bool,
    pub(crate) may_swap: bool,
    pub(crate) out: ReclaimOutcome,
    reclaim_ns: Nanos,
    compress_ns: Nanos,
    /// Page migrations of region-granular file reclaim (charged as compaction).
    migrate_ns: Nanos,
    batch: Vec<SwapOutPage>,
    /// Ask the placement hook for each dropped file page's reclaim unit (reclaim passes only).
    units: bool,
    unit: Vec<Pfn>,
}

/// The lists a reclaim pass scans, in `get_scan_count` order (anon first).
pub(crate) const SCAN_LISTS: [LruList; 4] = [
    LruList::InactiveAnon,
    LruList::ActiveAnon,
    LruList::InactiveFile,
    LruList::ActiveFile,
];

/// `get_scan_count`'s targets for lists of sizes `len` at `priority`: `size >> priority`, anon
/// lists scaled by `frac[0] / den`, file lists by `frac[1] / den`.
pub(crate) fn scan_targets(len: [u32; NR_LRU_LISTS], priority: u32, frac: [u64; 2], den: u64) -> [u64; 4] {
    let mut target = [0u64; 4];
    for (i, l) in SCAN_LISTS.into_iter().enumerate() {
        let size = len[l as usize] as u64;
        let mut scan = size >> priority;
        // Small lists still get scanned at the lowest priorities (Linux scans `size` at 0).
        if scan == 0 && priority <= 2 {
            scan = size.min(SWAP_CLUSTER_MAX as u64);
        }
        target[i] = scan * frac[usize::from(i >= 2)] / den;
    }
    target
}

/// `inactive_list_is_low` for lists of `inactive` and `active` pages: the inactive list should
/// hold at least `1 / sqrt(10 × GB)` of the pair.
pub(crate) fn inactive_is_low_for(inactive: u64, active: u64) -> bool {
    let gb = (inactive + active) >> (30 - PAGE_SHIFT);
    let ratio = if gb > 0 { isqrt(10 * gb) } else { 1 };
    inactive * ratio < active
}

fn isqrt(x: u64) -> u64 {
    (x as f64).sqrt() as u64
}

impl Kernel {
    /// Does any swap backend have room for more pages?
    pub(crate) fn swap_has_room(&self) -> bool {
        self.backends.iter().any(|b| {
            let u = b.usage();
            u.stored_pages + (SWAP_CLUSTER_MAX as u64) <= u.capacity_pages
        })
    }

    /// One reclaim pass over all processes at `priority`.
    pub(crate) fn shrink_node(
        &mut self,
        now: Nanos,
        actor: Actor,
        nr_to_reclaim: u64,
        priority: u32,
        background: bool,
    ) -> ReclaimOutcome {
        self.reclaim_pass += 1;
        let sc = ScanControl {
            priority,
            kswapd: background,
            pass: self.reclaim_pass,
            nr_to_reclaim,
        };
        // Per-pass buffers come from the kernel's scratch (no allocation per pass).
        let mut scratch = self.take_scratch();
        let mut ctx = ScanCtx {
            sc,
            now,
            actor,
            nr_to_reclaim,
            background,
            may_swap: self.params.swappiness > 0 && self.swap_has_room(),
            out: ReclaimOutcome::default(),
            reclaim_ns: 0,
            compress_ns: 0,
            migrate_ns: 0,
            batch: std::mem::take(&mut scratch.batch),
            units: true,
            unit: Vec::new(),
        };
        let mut procs = std::mem::take(&mut scratch.procs);
        procs.extend(self.procs.iter().filter(|p| p.alive).map(|p| p.view()));
        let mut order = std::mem::take(&mut scratch.order);
        let global = self.params.global_lru && !self.hooks.reclaim.orders_across_processes();
        if global {
            // One LRU for every app: no lruvec order to ask for (see `shrink_global`).
            order.extend(procs.iter().map(|p| p.pid));
        } else {
            let mut cx = hook_cx!(self, now, actor);
            self.hooks.reclaim.lruvec_order(&mut cx, &sc, &procs, &mut order);
        }
        // Shrinkers first: the pages they name are reclaimed before (maybe instead of) the walk.
        let mut shrink = std::mem::take(&mut scratch.shrink);
        let mut ranges = std::mem::take(&mut scratch.ranges);
        for i in 0..self.hooks.shrinkers.len() {
            if ctx.out.reclaimed >= nr_to_reclaim {
                break;
            }
            let want = nr_to_reclaim - ctx.out.reclaimed;
            let mut cx = hook_cx!(self, now, actor);
            self.hooks.shrinkers[i].shrink(&mut cx, &sc, want, &mut shrink);
            for idx in shrink.drain(..) {
                self.reclaim_one(idx, &mut ctx);
            }
            if ctx.out.reclaimed < nr_to_reclaim {
                let want = nr_to_reclaim - ctx.out.reclaimed;
                let mut cx = hook_cx!(self, now, actor);
                self.hooks.shrinkers[i].shrink_ranges(&mut cx, &sc, want, &mut ranges);
                for r in ranges.drain(..) {
                    self.zap_range(r, &mut ctx);
                }
            }
            self.flush_swap_batch(&mut ctx);
        }
        if !self.hooks.shrinkers.is_empty() && ctx.out.reclaimed >= nr_to_reclaim {
            // The shrinkers released enough: no LRU walk this pass (kswapd included).
            order.clear();
        }
        let by_age = global && self.params.node_lru_by_page_age;
        let (frac, denom) = if by_age && self.params.scan_balance_49 {
            self.get_scan_count_49(&order, priority, ctx.may_swap)
        } else {
            let (anon, den) = self.anon_fraction(priority, ctx.may_swap);
            ([anon, den - anon], den)
        };
        if by_age {
            self.shrink_global_by_age(&order, priority, frac, denom, &mut ctx);
        } else if global {
            self.shrink_global(&mut order, priority, frac, denom, &mut ctx);
        } else {
            for &pid in &order {
                if !self.procs.get(pid as usize).is_some_and(|p| p.alive) {
                    continue;
                }
                let target = scan_targets(self.procs[pid as usize].lru.len, priority, frac, denom);
                self.shrink_lruvec(pid, target, &mut ctx);
                if !ctx.background && ctx.out.reclaimed >= ctx.nr_to_reclaim {
                    break;
                }
            }
        }
        self.flush_swap_batch(&mut ctx);
        (scratch.procs, scratch.order, scratch.shrink, scratch.ranges) = (procs, order, shrink, ranges);
        scratch.batch = std::mem::take(&mut ctx.batch);
        self.put_scratch(scratch);
        self.decay_costs();
        let scanned = ctx.out.scanned;
        let reclaimed = ctx.out.reclaimed;
        self.note_pages_scanned(scanned);
        if matches!(actor, Actor::Kswapd) {
            self.vmstat.pgscan_kswapd += scanned;
            self.vmstat.pgsteal_kswapd += reclaimed;
        } else {
            self.vmstat.pgscan_direct += scanned;
            self.vmstat.pgsteal_direct += reclaimed;
        }
        self.cpu.charge(actor, Category::Reclaim, ctx.reclaim_ns);
        self.cpu.charge(actor, Category::Compress, ctx.compress_ns);
        ctx.out.cpu_ns = ctx.reclaim_ns + ctx.compress_ns + ctx.migrate_ns;
        self.sync_backend_frames();
        ctx.out
    }

    /// `get_scan_count`: share of the scan target that goes to anon, as (numerator, denominator).
    fn anon_fraction(&self, priority: u32, may_swap: bool) -> (u64, u64) {
        if !may_swap {
            return (0, 1);
        }
        let swappiness = self.params.swappiness as u64;
        if priority == 0 {
            return (1, 2); // SCAN_EQUAL
        }
        let total = self.anon_cost + self.file_cost;
        let ap = swappiness * (total + 1) / (self.anon_cost + 1);
        let fp = (200 - swappiness.min(200)) * (total + 1) / (self.file_cost + 1);
        (ap, (ap + fp).max(1))
    }

    /// `lru_note_cost` decay: halve the recent costs once they exceed a quarter of memory.
    fn decay_costs(&mut self) {
        let limit = self.buddy.nr_pages() as u64 / 4;
        if self.anon_cost + self.file_cost > limit {
            self.anon_cost /= 2;
            self.file_cost /= 2;
        }
    }

    fn inactive_is_low(&self, pid: Pid, anon: bool) -> bool {
        let lru = &self.procs[pid as usize].lru;
        let (ia, aa) = (LruList::inactive(anon) as usize, LruList::active(anon) as usize);
        inactive_is_low_for(lru.len[ia] as u64, lru.len[aa] as u64)
    }

    /// A global LRU (no per-app memcg): the node's scan targets (`size >> priority` of the lists
    /// summed over every process) taken from the processes in LRU age order, the oldest first,
    /// each giving at most its own list sizes. Age order approximates the global lists' order by
    /// when each process was last in use: `oom_score_adj` descending (ActivityManager ranks
    /// cached apps 900..999 by last use, older higher), then the foreground and system
    /// processes. Simplified: a process's pages are not interleaved with another's by age.
    fn shrink_global(
        &mut self,
        order: &mut [Pid],
        priority: u32,
        frac: [u64; 2],
        den: u64,
        ctx: &mut ScanCtx,
    ) {
        order.sort_by_key(|&pid| (std::cmp::Reverse(self.procs[pid as usize].oom_score_adj), pid));
        let mut left = scan_targets(self.node_lens(order), priority, frac, den);
        for &pid in order.iter() {
            if left.iter().all(|&t| t == 0) {
                break;
            }
            let own = &self.procs[pid as usize].lru.len;
            let mut target = [0u64; 4];
            for (i, l) in SCAN_LISTS.into_iter().enumerate() {
                target[i] = left[i].min(own[l as usize] as u64);
                left[i] -= target[i];
            }
            self.shrink_lruvec(pid, target, ctx);
            if !ctx.background && ctx.out.reclaimed >= ctx.nr_to_reclaim {
                break;
            }
        }
    }

    /// Scan up to `target` pages of each of a process's [`SCAN_LISTS`].
    fn shrink_lruvec(&mut self, pid: Pid, mut target: [u64; 4], ctx: &mut ScanCtx) {
        while target.iter().any(|&t| t > 0) {
            for (i, t) in target.iter_mut().enumerate() {
                let n = (*t).min(SWAP_CLUSTER_MAX as u64);
                if n == 0 {
                    continue;
                }
                *t -= n;
                let anon = i < 2;
                if i % 2 == 1 {
                    if self.inactive_is_low(pid, anon) {
                        self.shrink_active(pid, anon, n, ctx);
                    }
                } else {
                    self.shrink_inactive(pid, anon, n, ctx);
                }
            }
            if !ctx.background && ctx.out.reclaimed >= ctx.nr_to_reclaim {
                break;
            }
        }
        // Keep the anon inactive list from running dry (Linux ages anon after each lruvec).
        if ctx.may_swap && self.inactive_is_low(pid, true) {
            self.shrink_active(pid, true, SWAP_CLUSTER_MAX as u64, ctx);
        }
    }

    /// `shrink_active_list`: move pages from the active tail to the inactive head, clearing the
    /// accessed bit; referenced executable file pages stay active.
    pub(crate) fn shrink_active(&mut self, pid: Pid, anon: bool, n: u64, ctx: &mut ScanCtx) {
        let active = LruList::active(anon);
        self.procs[pid as usize].lru.start_walk(&self.pt.pages, active, n);
        for _ in 0..n {
            let Some(idx) = self.procs[pid as usize].lru.next_to_scan(&self.pt.pages, active) else {
                break;
            };
            ctx.out.scanned += 1;
            ctx.reclaim_ns += self.params.reclaim_scan_ns;
            let p = &mut self.pt.pages[idx as usize];
            let referenced = p.has(flags::ACCESSED);
            p.flags &= !flags::ACCESSED;
            let exec = p.has(flags::EXEC);
            // 4.9 counts every referenced page as rotated, kept active or not.
            self.note_reclaim_stat(anon, 1, u64::from(referenced));
            let lru = &mut self.procs[pid as usize].lru;
            if referenced && exec {
                self.pt.lru_move_head(lru, idx, active);
                self.vmstat.pgrotated += 1;
            } else {
                self.pt.lru_move_head(lru, idx, LruList::inactive(anon));
                self.vmstat.pgdeactivate += 1;
            }
        }
    }

    /// `shrink_inactive_list` + `shrink_folio_list` for up to `n` pages from the inactive tail.
    pub(crate) fn shrink_inactive(&mut self, pid: Pid, anon: bool, n: u64, ctx: &mut ScanCtx) {
        let inactive = LruList::inactive(anon);
        self.procs[pid as usize]
            .lru
            .start_walk(&self.pt.pages, inactive, n);
        for _ in 0..n {
            let Some(idx) = self.procs[pid as usize]
                .lru
                .next_to_scan(&self.pt.pages, inactive)
            else {
                break;
            };
            ctx.out.scanned += 1;
            ctx.reclaim_ns += self.params.reclaim_scan_ns;
            self.note_reclaim_stat(anon, 1, 0);
            let view = self.page_view(idx);
            self.pt.pages[idx as usize].flags &= !flags::ACCESSED;
            let stock = self.hooks.reclaim.is_stock();
            let mut verdict = if stock {
                crate::hooks::stock_inactive_verdict(&view)
            } else {
                let mut cx = hook_cx!(self, ctx.now, ctx.actor);
                self.hooks.reclaim.inactive_verdict(&mut cx, &ctx.sc, &view)
            };
            if verdict == Verdict::Reclaim && anon && !ctx.may_swap {
                verdict = Verdict::Activate;
            }
            let lru = &mut self.procs[pid as usize].lru;
            match verdict {
                Verdict::Activate => {
                    self.pt.lru_move_head(lru, idx, LruList::active(anon));
                    let p = &mut self.pt.pages[idx as usize];
                    p.flags = (p.flags & !flags::REFERENCED) | flags::WORKINGSET;
                    self.vmstat.pgactivate += 1;
                    self.note_reclaim_stat(anon, 0, 1);
                    self.nonresident_age = self.nonresident_age.wrapping_add(1);
                    if anon {
                        self.anon_cost += 1;
                    } else {
                        self.file_cost += 1;
                    }
                }
                Verdict::Keep => {
                    self.pt.lru_move_head(lru, idx, inactive);
                    self.pt.pages[idx as usize].flags |= flags::REFERENCED;
                }
                Verdict::Reclaim if view.has(flags::SWAPCACHE) => {
                    // A clean copy is already on a backend: unmap without I/O.
                    self.pt.lru_del(lru, idx);
                    self.unmap_swap_cached(idx);
                    ctx.reclaim_ns += self.params.reclaim_unmap_ns;
                    ctx.out.reclaimed += 1;
                }
                Verdict::Reclaim => {
                    self.pt.lru_del(lru, idx);
                    if anon {
                        let tag = if stock {
                            0
                        } else {
                            let mut cx = hook_cx!(self, ctx.now, ctx.actor);
                            self.hooks.reclaim.swap_tag(&mut cx, &view)
                        };
                        let content = self.pt.pages[idx as usize].content;
                        ctx.batch.push(SwapOutPage {
                            page: idx,
                            pid,
                            content,
                            tag,
                        });
                        if ctx.batch.len() >= SWAP_CLUSTER_MAX {
                            self.flush_swap_batch(ctx);
                        }
                    } else {
                        self.evict_file_page(idx, ctx);
                    }
                }
            }
        }
    }

    pub(crate) fn shadow_now(&self) -> u32 {
        self.nonresident_age.wrapping_add(1).max(1)
    }

    /// Drop a file page picked by reclaim, and empty the frames of its reclaim unit
    /// ([`crate::hooks::PlacementHook::reclaim_unit`]): clean inactive file pages are dropped,
    /// other resident pages migrated (ISMM'15 §4.2 when the policy names a region).
    fn evict_file_page(&mut self, idx: PageIdx, ctx: &mut ScanCtx) {
        let mut unit = std::mem::take(&mut ctx.unit);
        if ctx.units {
            let p = self.pt.pages[idx as usize];
            let purpose = self.user_purpose(p.pid, p.kind);
            let mut cx = hook_cx!(self, ctx.now, ctx.actor);
            self.hooks
                .placement
                .reclaim_unit(&mut cx, p.loc, purpose, &mut unit);
        }
        self.drop_file_page(idx, ctx);
        let mut moved = 0;
        for &pfn in &unit {
            let owner = self.frame_owner[pfn as usize];
            // Kernel, zram and free frames have the top bit set.
            if owner & OWNER_ZRAM_BIT != 0 {
                continue;
            }
            let q = self.pt.pages[owner as usize];
            // Off every list while resident = pending in this pass's swap batch.
            if q.state != PageState::Resident || q.loc != pfn || q.lru == LruList::None {
                continue;
            }
            ctx.out.scanned += 1;
            ctx.reclaim_ns += self.params.reclaim_scan_ns;
            if q.lru == LruList::InactiveFile && !q.has(flags::DIRTY) {
                self.pt.lru_del(&mut self.procs[q.pid as usize].lru, owner);
                self.drop_file_page(owner, ctx);
            } else if self.migrate_resident(ctx.now, ctx.actor, owner) == Some(true) {
                moved += 1;
            }
        }
        if moved > 0 {
            ctx.migrate_ns += self.charge_migrations(ctx.actor, moved);
        }
        unit.clear();
        ctx.unit = unit;
    }

    /// Drop a file page from memory (writing it back first if dirty).
    fn drop_file_page(&mut self, idx: PageIdx, ctx: &mut ScanCtx) {
        let p = self.pt.pages[idx as usize];
        if p.has(flags::DIRTY) {
            self.flash.write(ctx.now, PAGE_SIZE);
            self.vmstat.pgpgout_file += 1;
        }
        self.free_resident_frame(idx);
        let shadow = self.shadow_now();
        let page = &mut self.pt.pages[idx as usize];
        page.state = PageState::Dropped;
        page.loc = NIL;
        page.shadow = shadow;
        page.flags &=
            !(flags::DIRTY | flags::REFERENCED | flags::ACCESSED | flags::WORKINGSET | flags::UNMAPPED);
        self.note_state_change(PageState::Resident, PageState::Dropped);
        self.nonresident_age = self.nonresident_age.wrapping_add(1);
        ctx.reclaim_ns += self.params.reclaim_unmap_ns;
        ctx.out.reclaimed += 1;
    }

    /// Hand the pending anon batch to the first backend with room; map the pages out.
    fn flush_swap_batch(&mut self, ctx: &mut ScanCtx) {
        if ctx.batch.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut ctx.batch);
        let stored = self.swap_out(
            ctx.now + ctx.reclaim_ns + ctx.compress_ns + ctx.out.io_wait_ns,
            &batch,
        );
        match stored {
            Some(cost) => {
                // An asynchronous write (flash) leaves the pages under writeback: their frames
                // are freed at completion (`complete_writeback`), not now. The reclaimer waited
                // only if the request queue was full.
                ctx.out.io_wait_ns += cost.wait_ns;
                ctx.compress_ns += cost.compress_ns;
                ctx.reclaim_ns += cost.cpu_other_ns + batch.len() as u64 * self.params.reclaim_unmap_ns;
                if cost.complete_ns > 0 {
                    ctx.out.writeback += batch.len() as u64;
                } else {
                    ctx.out.reclaimed += batch.len() as u64;
                }
            }
            None => {
                // No backend took the batch: the pages stay, activated (Linux `activate_locked`).
                self.vmstat.swap_full_failures += 1;
                ctx.may_swap = false;
                for sp in &batch {
                    let lru = &mut self.procs[sp.pid as usize].lru;
                    self.pt.lru_add_head(lru, sp.page, LruList::ActiveAnon);
                }
                self.note_reclaim_stat(true, 0, batch.len() as u64);
            }
        }
        ctx.batch = batch;
        ctx.batch.clear();
    }

    /// Store `batch` (pages already off their LRU lists) in a backend and mark them swapped.
    /// Returns the backend's cost, or `None` if no backend accepted it.
    pub(crate) fn swap_out(&mut self, now: Nanos, batch: &[SwapOutPage]) -> Option<crate::swap::IoCost> {
        let mut s = self.take_scratch();
        let handles = &mut s.handles_out;
        for dev in 0..self.backends.len() {
            handles.clear();
            let result = {
                let (mut env, backends) = self.backend_env(now);
                backends[dev].store(&mut env, batch, handles)
            };
            let Ok(cost) = result else { continue };
            for (sp, &h) in batch.iter().zip(handles.iter()) {
                let owner = &mut self.handle_owner[dev];
                if owner.len() <= h as usize {
                    owner.resize(h as usize + 1, NIL);
                }
                owner[h as usize] = sp.page;
            }
            if cost.complete_ns > 0 {
                // An asynchronous write: the frames are freed at completion.
                let done = now + cost.complete_ns;
                self.start_writebacks(batch, handles, dev as u8, done);
            } else {
                let shadow = self.shadow_now();
                for (sp, &h) in batch.iter().zip(handles.iter()) {
                    self.free_resident_frame(sp.page);
                    let page = &mut self.pt.pages[sp.page as usize];
                    page.state = PageState::Swapped;
                    page.loc = h;
                    page.swap_dev = dev as u8;
                    page.shadow = shadow;
                    page.flags &= !(flags::ACCESSED | flags::REFERENCED | flags::DIRTY);
                    self.note_state_change(PageState::Resident, PageState::Swapped);
                    self.procs[sp.pid as usize].counters.swap += 1;
                    self.nonresident_age = self.nonresident_age.wrapping_add(1);
                }
            }
            self.vmstat.pswpout += batch.len() as u64;
            self.put_scratch(s);
            return Some(cost);
        }
        self.put_scratch(s);
        None
    }

    /// Reclaim one named page now (shrinker, `MADV_PAGEOUT`): resident, not mlocked; anon only
    /// while swap has room. Returns whether it was taken (anon pages leave in the next batch flush).
    fn reclaim_one(&mut self, idx: PageIdx, ctx: &mut ScanCtx) -> bool {
        let Some(&p) = self.pt.pages.get(idx as usize) else {
            return false;
        };
        // Off every list while resident = already taken (pending in this pass's swap batch).
        if p.state != PageState::Resident || matches!(p.lru, LruList::Unevictable | LruList::None) {
            return false;
        }
        ctx.reclaim_ns += self.params.reclaim_scan_ns;
        ctx.out.scanned += 1;
        if p.kind.is_anon() && !p.has(flags::SWAPCACHE) && !ctx.may_swap {
            return false;
        }
        self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
        if p.has(flags::SWAPCACHE) {
            self.unmap_swap_cached(idx);
            ctx.reclaim_ns += self.params.reclaim_unmap_ns;
            ctx.out.reclaimed += 1;
        } else if p.kind.is_anon() {
            let view = self.page_view(idx);
            let mut cx = hook_cx!(self, ctx.now, ctx.actor);
            let tag = self.hooks.reclaim.swap_tag(&mut cx, &view);
            ctx.batch.push(SwapOutPage {
                page: idx,
                pid: p.pid,
                content: p.content,
                tag,
            });
            if ctx.batch.len() >= SWAP_CLUSTER_MAX {
                self.flush_swap_batch(ctx);
            }
        } else {
            self.evict_file_page(idx, ctx);
        }
        true
    }

    /// Zap a shrinker's range (`madvise(MADV_DONTNEED)`-like, see
    /// [`crate::hooks::Shrinker::shrink_ranges`]): resident, evictable pages with a clean backend
    /// copy are dropped (no I/O, `zap_page_ns` each, `zap_range_ns` once for the range); other
    /// resident pages go through [`Self::reclaim_one`] so no data is lost.
    fn zap_range(&mut self, r: crate::hooks::PageRange, ctx: &mut ScanCtx) {
        let end = (r.first as u64 + r.pages as u64).min(self.pt.pages.len() as u64) as PageIdx;
        let mut zapped = 0u64;
        for idx in r.first.min(end)..end {
            let p = self.pt.pages[idx as usize];
            let evictable = !matches!(p.lru, LruList::Unevictable | LruList::None);
            if p.state != PageState::Resident || !evictable {
                continue;
            }
            if !p.has(flags::SWAPCACHE) {
                self.reclaim_one(idx, ctx);
                continue;
            }
            self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
            self.unmap_swap_cached(idx);
            zapped += 1;
        }
        if zapped == 0 {
            return;
        }
        let ns = zapped * self.params.zap_page_ns + self.params.zap_range_ns;
        ctx.reclaim_ns += ns;
        ctx.out.reclaimed += zapped;
        self.vmstat.shrinker_zap_pages += zapped;
        self.vmstat.shrinker_zap_ranges += 1;
        self.vmstat.shrinker_zap_ns += ns;
    }

    /// MADV_PAGEOUT over `[first, end)`: reclaim resident pages of the range now, on the caller.
    /// Returns the CPU time spent (charged to `actor`).
    pub(crate) fn pageout_range(&mut self, now: Nanos, actor: Actor, first: PageIdx, end: PageIdx) -> Nanos {
        let mut ctx = ScanCtx {
            sc: ScanControl {
                priority: 0,
                kswapd: false,
                pass: self.reclaim_pass,
                nr_to_reclaim: u64::MAX,
            },
            now,
            actor,
            nr_to_reclaim: u64::MAX,
            background: true,
            may_swap: self.swap_has_room(),
            out: Default::default(),
            reclaim_ns: 0,
            compress_ns: 0,
            migrate_ns: 0,
            batch: Vec::with_capacity(SWAP_CLUSTER_MAX),
            units: false,
            unit: Vec::new(),
        };
        for idx in first..end {
            self.reclaim_one(idx, &mut ctx);
        }
        self.flush_swap_batch(&mut ctx);
        self.vmstat.madvise_pageout_pages += ctx.out.reclaimed + ctx.out.writeback;
        self.cpu.charge(ctx.actor, Category::Reclaim, ctx.reclaim_ns);
        self.cpu.charge(ctx.actor, Category::Compress, ctx.compress_ns);
        self.sync_backend_frames();
        ctx.reclaim_ns + ctx.compress_ns
    }
}
