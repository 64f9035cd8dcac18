//! When the page allocator gives up on direct reclaim and calls the OOM killer, by kernel
//! release ([`OomRule`], `KernelParams::oom_rule`; used by `Kernel::alloc_frame_slowpath`).
//!
//! - **Linux 4.7 and later** ([`OomRule::NoProgressLoops`], read from mm/page_alloc.c of v4.9,
//!   `should_reclaim_retry`, from 0a0337e0d1d1 "mm, oom: rework oom detection"): a direct
//!   reclaim that freed a page resets `no_progress_loops`, one that freed none increments it.
//!   The allocation gives up (OOM) once the count exceeds `MAX_RECLAIM_RETRIES` (16), or when
//!   the zone's free pages plus its reclaimable pages, the latter cut by `loops / 16` of
//!   themselves (`available -= DIV_ROUND_UP(no_progress_loops * available,
//!   MAX_RECLAIM_RETRIES)`), could no longer pass the min watermark. Reclaimable pages are
//!   `zone_reclaimable_pages`: file pages, and anon pages while swap has free slots.
//! - **Before 4.7** ([`OomRule::ZoneReclaimable`], mm/vmscan.c and mm/page_alloc.c of v3.18):
//!   `do_try_to_free_pages` reports progress (returns 1) after freeing nothing as long as some
//!   zone is still `zone_reclaimable` (`NR_PAGES_SCANNED < zone_reclaimable_pages × 6`), and
//!   `__alloc_pages_slowpath` calls the OOM killer only after a reclaim without progress. Reclaim
//!   adds the pages it scans on either list to `NR_PAGES_SCANNED` (kswapd's too); freeing pages
//!   to the buddy allocator (`free_pcppages_bulk`, `free_one_page`) resets it to 0.
//!
//! Both then go through `__alloc_pages_may_oom`, which first retries the free lists at the
//! high watermark: no kill while free pages are above it.
//!
//! Simplified: one zone; every free to the buddy allocator resets the scan count (no per-cpu
//! page lists batching order-0 frees); the 4.9 writeback wait (`congestion_wait` when pending
//! writes exceed half the reclaimable pages) is the direct reclaim's own writeback throttle.

use crate::types::*;
use crate::{Kernel, MAX_RECLAIM_RETRIES};
use serde::Serialize;

/// How a kernel release decides that direct reclaim has failed (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum OomRule {
    /// Linux 4.7+ `should_reclaim_retry` (also profiles without a kernel release).
    NoProgressLoops,
    /// Linux before 4.7: `zone_reclaimable` (pages scanned since the last free < 6 × reclaimable).
    ZoneReclaimable,
}

impl OomRule {
    /// The rule of kernel `major.minor`.
    pub fn for_kernel(major: u32, minor: u32) -> Self {
        if (major, minor) >= (4, 7) {
            OomRule::NoProgressLoops
        } else {
            OomRule::ZoneReclaimable
        }
    }
}

/// The zone's `NR_PAGES_SCANNED` (pre-4.7 rule): pages scanned since the buddy allocator last
/// took a freed page, counted lazily against the allocator's free counter.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PagesScanned {
    scanned: u64,
    /// The buddy allocator's free count when `scanned` was last reset.
    frees_seen: u64,
}

impl Kernel {
    /// A reclaim pass scanned `scanned` pages: `NR_PAGES_SCANNED` after the pass (frees since
    /// the last pass, the pass's own included, reset it first).
    pub(crate) fn note_pages_scanned(&mut self, scanned: u64) {
        let frees = self.buddy.stats().frees;
        let s = &mut self.pages_scanned;
        if frees != s.frees_seen {
            s.scanned = 0;
            s.frees_seen = frees;
        }
        s.scanned += scanned;
    }

    /// `zone_reclaimable_pages`: file pages on the LRU lists, and anon pages when swap has room.
    pub(crate) fn zone_reclaimable_pages(&self) -> u64 {
        let with_anon = self.swap_has_room();
        let mut n = 0u64;
        for p in self.procs.iter().filter(|p| p.alive) {
            let len = |l: LruList| p.lru.len[l as usize] as u64;
            n += len(LruList::InactiveFile) + len(LruList::ActiveFile);
            if with_anon {
                n += len(LruList::InactiveAnon) + len(LruList::ActiveAnon);
            }
        }
        n
    }

    /// After a direct reclaim that freed `reclaimed` pages: whether the allocation should call
    /// the OOM killer now. `loops` is the allocation's `no_progress_loops` (4.7+ rule).
    pub(crate) fn reclaim_gives_up(&mut self, reclaimed: u64, loops: &mut u32) -> bool {
        if self.params.oom_rule == OomRule::ZoneReclaimable {
            // Frees since the reclaim's last pass (its writeback throttle's completions) reset
            // the scan count too.
            self.note_pages_scanned(0);
        }
        let zone = ZoneState {
            free: self.free_pages(),
            reclaimable: self.zone_reclaimable_pages(),
            pages_scanned: self.pages_scanned.scanned,
            min: self.params.watermarks.min,
            high: self.params.watermarks.high,
        };
        self.params.oom_rule.gives_up(reclaimed, loops, &zone)
    }
}

/// What the OOM decision reads of the zone (pages).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ZoneState {
    pub free: u64,
    pub reclaimable: u64,
    /// `NR_PAGES_SCANNED` (pre-4.7 rule only).
    pub pages_scanned: u64,
    pub min: u64,
    pub high: u64,
}

impl OomRule {
    /// The decision after a direct reclaim that freed `reclaimed` pages (see the module docs);
    /// updates the 4.7+ rule's `loops`.
    pub(crate) fn gives_up(self, reclaimed: u64, loops: &mut u32, z: &ZoneState) -> bool {
        let gives_up = match self {
            OomRule::NoProgressLoops => {
                *loops = if reclaimed > 0 { 0 } else { *loops + 1 };
                let cut = (*loops as u64 * z.reclaimable).div_ceil(MAX_RECLAIM_RETRIES as u64);
                *loops > MAX_RECLAIM_RETRIES || z.reclaimable - cut.min(z.reclaimable) + z.free <= z.min
            }
            OomRule::ZoneReclaimable => reclaimed == 0 && z.pages_scanned >= z.reclaimable * 6,
        };
        // `__alloc_pages_may_oom` tries the free lists at the high watermark first.
        gives_up && z.free <= z.high
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone(free: u64, reclaimable: u64, pages_scanned: u64) -> ZoneState {
        ZoneState {
            free,
            reclaimable,
            pages_scanned,
            min: 100,
            high: 150,
        }
    }

    #[test]
    fn releases_pick_their_rule() {
        assert_eq!(OomRule::for_kernel(3, 18), OomRule::ZoneReclaimable);
        assert_eq!(OomRule::for_kernel(4, 6), OomRule::ZoneReclaimable);
        assert_eq!(OomRule::for_kernel(4, 7), OomRule::NoProgressLoops);
        assert_eq!(OomRule::for_kernel(5, 10), OomRule::NoProgressLoops);
    }

    #[test]
    fn no_progress_loops_cut_the_reclaimable_estimate_until_min_is_out_of_reach() {
        let rule = OomRule::NoProgressLoops;
        // 1,600 reclaimable, none free: each fruitless loop removes 100 from the estimate, and
        // the 15th leaves 100 <= min.
        let mut loops = 0;
        let fails: Vec<bool> = (0..15)
            .map(|_| rule.gives_up(0, &mut loops, &zone(0, 1600, 0)))
            .collect();
        assert_eq!(fails.iter().position(|&f| f), Some(14));
        // Progress resets the count.
        assert!(!rule.gives_up(1, &mut loops, &zone(0, 1600, 0)));
        assert_eq!(loops, 0);
        // Plenty reclaimable: the 16th fruitless loop in a row cuts all of it (none free: give
        // up); with free pages above min, the 17th (> MAX_RECLAIM_RETRIES) gives up.
        for (free, at) in [(0, MAX_RECLAIM_RETRIES), (120, MAX_RECLAIM_RETRIES + 1)] {
            let mut loops = 0;
            let n = (1..=40)
                .find(|_| rule.gives_up(0, &mut loops, &zone(free, 1 << 30, 0)))
                .unwrap();
            assert_eq!(n, at, "free {free}");
        }
        // Nothing reclaimable and free at min: at once.
        assert!(rule.gives_up(0, &mut 0, &zone(100, 0, 0)));
        // Above the high watermark there is no kill.
        assert!(!rule.gives_up(0, &mut 100, &zone(151, 0, 0)));
    }

    #[test]
    fn zone_reclaimable_gives_up_after_six_scans_of_the_reclaimable_pages() {
        let rule = OomRule::ZoneReclaimable;
        assert!(!rule.gives_up(0, &mut 0, &zone(0, 1000, 5999)));
        assert!(rule.gives_up(0, &mut 0, &zone(0, 1000, 6000)));
        // A reclaim that freed a page is progress whatever was scanned.
        assert!(!rule.gives_up(1, &mut 0, &zone(0, 1000, 60_000)));
        assert!(rule.gives_up(0, &mut 0, &zone(100, 0, 0)));
        assert!(!rule.gives_up(0, &mut 0, &zone(151, 0, 0)));
    }
}
