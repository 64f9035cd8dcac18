//! Pages under swap writeback (PG_writeback) and the reclaim throttling that waits for them.
//!
//! A swap-out to an asynchronous device (flash) does not free the frames at submission: as in
//! Linux, `shrink_folio_list` → `pageout` → `swap_writepage` starts the write and the page stays
//! in the swap cache with PG_writeback set; its frame can be freed only after
//! `end_page_writeback` (the page is rotated to the inactive tail, `rotate_reclaimable_page`, and
//! the next scan frees it). The model frees it at completion directly. Until then the page is
//! resident, off the LRU lists, and a touch finds it in the swap cache (a minor fault).
//!
//! Throttling (what makes allocation under pressure follow the flash write bandwidth):
//! - a writer submitting to a full request queue blocks ([`crate::swap::NR_REQUESTS`]);
//! - direct reclaim that took pages but freed fewer than `SWAP_CLUSTER_MAX` waits for writeback
//!   to complete, at most `HZ/10` (Linux 3.18: `wait_iff_congested(zone, BLK_RW_ASYNC, HZ/10)` in
//!   `shrink_inactive_list` and the `HZ/50` wait in `__alloc_pages_slowpath` before a retry;
//!   5.16+: `reclaim_throttle(pgdat, VMSCAN_THROTTLE_WRITEBACK)`, woken when
//!   `SWAP_CLUSTER_MAX` pages finished writeback, timeout `HZ/10`);
//! - kswapd, once the pages under writeback would bring free memory to the high watermark, waits
//!   for completions instead of taking more pages (3.18: `congestion_wait(BLK_RW_ASYNC, HZ/10)`
//!   when it meets pages under writeback at the LRU tail, `nr_immediate`).
//!
//! Simplified: the wait ends at the completion that frees the pages needed (or after `HZ/10`),
//! not at a congestion wake-up; completions are processed when a reclaimer or the allocator
//! looks (`advance_to`, kswapd steps, direct reclaim).

use crate::types::*;
use crate::Kernel;
use engine::Nanos;
use std::collections::BTreeMap;

/// Pages under writeback in completion order: per completion time, its (page, handle) entries
/// sorted. A swap-out batch shares one completion time, so it is one map insertion wherever it
/// lands (a reclaimer whose clock is behind another's completes before that one's writes: a
/// sorted array of entries moved thousands of them per page). Emptied lists are reused.
#[derive(Debug, Default)]
pub(crate) struct WritebackQueue {
    by_done: BTreeMap<Nanos, Vec<(PageIdx, SwapHandle)>>,
    spare: Vec<Vec<(PageIdx, SwapHandle)>>,
}

impl WritebackQueue {
    /// Queue `entries`, all completing at `done`.
    fn insert(&mut self, done: Nanos, entries: impl Iterator<Item = (PageIdx, SwapHandle)>) {
        let spare = &mut self.spare;
        let list = self
            .by_done
            .entry(done)
            .or_insert_with(|| spare.pop().unwrap_or_default());
        list.extend(entries);
        // Sorted by page then handle (two batches completing at once interleave).
        list.sort_unstable();
    }

    /// The earliest completion time's entries if it is at or before `now` (hand the list back
    /// with [`Self::recycle`]).
    fn pop_due(&mut self, now: Nanos) -> Option<(Nanos, Vec<(PageIdx, SwapHandle)>)> {
        let e = self.by_done.first_entry()?;
        (*e.key() <= now).then(|| e.remove_entry())
    }

    fn recycle(&mut self, mut list: Vec<(PageIdx, SwapHandle)>) {
        list.clear();
        self.spare.push(list);
    }

    /// Every entry as (completion time, page, handle), in completion order.
    fn iter(&self) -> impl Iterator<Item = (Nanos, PageIdx, SwapHandle)> + '_ {
        self.by_done
            .iter()
            .flat_map(|(&t, l)| l.iter().map(move |&(i, h)| (t, i, h)))
    }
}

/// Longest single throttle wait (`HZ/10`, 100 ms).
pub(crate) const THROTTLE_MAX_NS: Nanos = 100_000_000;

impl Kernel {
    /// Put the pages of `batch` (resident, already off their LRU lists, their copies stored under
    /// `handles` on `dev`) under writeback until `done`.
    pub(crate) fn start_writebacks(
        &mut self,
        batch: &[crate::swap::SwapOutPage],
        handles: &[SwapHandle],
        dev: u8,
        done: Nanos,
    ) {
        self.pt.epoch += 1;
        for (sp, &h) in batch.iter().zip(handles) {
            let page = &mut self.pt.pages[sp.page as usize];
            page.flags = (page.flags | flags::SWAPCACHE | flags::WRITEBACK)
                & !(flags::DIRTY | flags::ACCESSED | flags::REFERENCED);
            page.shadow = h;
            page.swap_dev = dev;
        }
        let entries = batch.iter().zip(handles).map(|(sp, &h)| (sp.page, h));
        self.writeback_q.insert(done, entries);
        self.writeback_pages += batch.len() as u64;
        self.vmstat.swapout_writeback_pages += batch.len() as u64;
    }

    /// Pages currently under writeback.
    pub fn writeback_pages(&self) -> u64 {
        self.writeback_pages
    }

    /// `end_page_writeback` for every write completed by `now`: the frames of pages still
    /// waiting for it are freed (the page becomes swapped). Returns the frames freed.
    pub fn complete_writeback(&mut self, now: Nanos) -> u64 {
        let mut freed = 0;
        while let Some((_, list)) = self.writeback_q.pop_due(now) {
            for &(idx, h) in &list {
                let p = self.pt.pages[idx as usize];
                // Entries of pages touched, unmapped or freed meanwhile are stale.
                if p.state != PageState::Resident || !p.has(flags::WRITEBACK) || p.shadow != h {
                    continue;
                }
                self.writeback_pages -= 1;
                self.pt.pages[idx as usize].flags &= !flags::WRITEBACK;
                // Clean and swap-cached (a write during writeback cancels it).
                self.unmap_swap_cached(idx);
                freed += 1;
            }
            self.writeback_q.recycle(list);
        }
        self.vmstat.writeback_completed += freed;
        freed
    }

    /// The page is needed again before its write completed (touched, mlocked, unmapped): it
    /// leaves writeback and goes back to the inactive LRU head as a swap-cached page (its copy
    /// stays valid). Its queue entry becomes stale.
    pub(crate) fn writeback_cancel(&mut self, idx: PageIdx) {
        let p = self.pt.pages[idx as usize];
        if !p.has(flags::WRITEBACK) {
            return;
        }
        self.pt.pages[idx as usize].flags &= !flags::WRITEBACK;
        self.writeback_pages -= 1;
        let list = if p.has(flags::MLOCKED) {
            LruList::Unevictable
        } else {
            LruList::inactive(p.kind.is_anon())
        };
        self.pt
            .lru_add_head(&mut self.procs[p.pid as usize].lru, idx, list);
        self.vmstat.writeback_rescued += 1;
    }

    /// Time from `now` until `need` more pages under writeback have completed (all of them if
    /// fewer are in flight), capped at [`THROTTLE_MAX_NS`]; `None` if nothing is in flight.
    pub(crate) fn writeback_wait(&self, now: Nanos, need: u64) -> Option<Nanos> {
        if self.writeback_pages == 0 {
            return None;
        }
        // The queue is in completion order: the `need`-th live entry (or the last live one).
        let k = need.max(1);
        let mut seen = 0;
        let mut last = None;
        for (t, i, h) in self.writeback_q.iter() {
            let p = &self.pt.pages[i as usize];
            if p.has(flags::WRITEBACK) && p.shadow == h {
                seen += 1;
                last = Some(t);
                if seen == k {
                    break;
                }
            }
        }
        last.map(|t| t.saturating_sub(now).min(THROTTLE_MAX_NS))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The queue holds what a sorted list of (completion, page, handle) would, in that order,
        /// and completions leave from its front.
        #[test]
        fn writeback_queue_is_a_sorted_list(
            ops in proptest::collection::vec(
                (0u64..40, proptest::collection::vec((0u32..6, 0u32..3), 0..12), 0u64..40),
                0..30,
            )
        ) {
            let mut q = super::WritebackQueue::default();
            let mut model: Vec<(u64, u32, u32)> = Vec::new();
            for (done, batch, now) in ops {
                q.insert(done, batch.iter().copied());
                model.extend(batch.iter().map(|&(i, h)| (done, i, h)));
                model.sort_unstable();
                prop_assert!(q.iter().eq(model.iter().copied()));
                let mut due = Vec::new();
                while let Some((t, list)) = q.pop_due(now) {
                    due.extend(list.iter().map(|&(i, h)| (t, i, h)));
                    q.recycle(list);
                }
                let n = model.partition_point(|e| e.0 <= now);
                prop_assert_eq!(&due[..], &model[..n]);
                model.drain(..n);
            }
        }
    }
}
