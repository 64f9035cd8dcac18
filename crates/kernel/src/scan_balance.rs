//! Linux before 5.8's anon/file scan balance (`KernelParams::scan_balance_49`, on with the node
//! LRU by page age on a pre-5.8 release; read from mm/vmscan.c and mm/swap.c of v4.9).
//!
//! `get_scan_count` (mm/vmscan.c), in order: no swap (`!sc->may_swap` or no free swap slot)
//! → SCAN_FILE; priority 0 with swappiness → SCAN_EQUAL (both types' `size >> priority`
//! unscaled); the node's free pages plus file pages at or below the high watermark →
//! SCAN_ANON; the inactive file list not low (`inactive_list_is_low(lruvec, true)`, ratio
//! `sqrt(10 × GB)`; before 4.7's 59dc76b0d4df "mm: vmscan: reduce size of inactive file list"
//! `inactive_file_is_low` is `inactive < active`, `KernelParams::file_ratio_one`, also for
//! ageing the active file list) and `inactive_file >> priority` non-zero → SCAN_FILE; else SCAN_FRACT with
//! `anon_prio = swappiness`, `file_prio = 200 - anon_prio`, each type's `recent_scanned` and
//! `recent_rotated` halved once `recent_scanned` exceeds a quarter of the type's pages,
//! `ap = anon_prio × (recent_scanned[0] + 1) / (recent_rotated[0] + 1)`, `fp` likewise for file,
//! and each list's target `(size >> priority) × fraction / (ap + fp + 1)`.
//! The counters (`lruvec->reclaim_stat`, node-wide: every app is in the root memcg) are kept
//! where 4.9 keeps them: `shrink_inactive_list` adds the pages it isolated to `recent_scanned`
//! and the pages `putback_inactive_pages` puts back active to `recent_rotated`;
//! `shrink_active_list` adds the pages it isolated to `recent_scanned` and every page
//! `page_referenced` found referenced to `recent_rotated` ("Count referenced pages from
//! currently used mappings as rotated, even though only some of them are actually
//! re-activated": anon and non-executable file pages are deactivated all the same, only
//! VM_EXEC file pages stay active); `__pagevec_lru_add_fn` → `update_page_reclaim_stat(lruvec,
//! file, active)` adds every page put on an LRU list to `recent_scanned`, and to
//! `recent_rotated` when it starts active (new anon pages before 5.9, refaults the workingset
//! check activates, a swapped-in page's `activate_page`); `mark_page_accessed`'s `activate_page`
//! (`__activate_page` → `update_page_reclaim_stat(lruvec, file, 1)`, `mark_accessed.rs`) adds
//! the page to both.
//! 5.8's 1431d4d11abb "mm: base LRU balancing on an explicit cost model" replaced all of this
//! with the reclaim cost (`anon_cost` / `file_cost`, `reclaim.rs`).
//! Simplified: one zone (the high watermark is the zone's); no `force_scan` (the small-list rule
//! of `scan_targets` applies); a swapped-in page counts once (as added active), not as added
//! then activated.

use crate::types::*;
use crate::Kernel;

/// `struct zone_reclaim_stat`: per type (0 anon, 1 file), pages scanned and rotated recently.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct ReclaimStat {
    pub recent_scanned: [u64; 2],
    pub recent_rotated: [u64; 2],
}

impl ReclaimStat {
    /// Halve a type's counters once its recent scans exceed a quarter of its pages.
    fn age(&mut self, t: usize, pages: u64) {
        if self.recent_scanned[t] > pages / 4 {
            self.recent_scanned[t] /= 2;
            self.recent_rotated[t] /= 2;
        }
    }

    /// `ap` / `fp` of SCAN_FRACT for `swappiness`: each type's priority scaled by how few of
    /// its recently scanned pages were rotated.
    fn fractions(&self, swappiness: u64) -> [u64; 2] {
        let prio = [swappiness, 200 - swappiness.min(200)];
        [0, 1].map(|t| prio[t] * (self.recent_scanned[t] + 1) / (self.recent_rotated[t] + 1))
    }
}

impl Kernel {
    /// `update_page_reclaim_stat` and the reclaim paths' counts: `scanned` pages of a type were
    /// scanned (or added to an LRU list), `rotated` of them stayed (or started) active.
    pub(crate) fn note_reclaim_stat(&mut self, anon: bool, scanned: u64, rotated: u64) {
        if self.params.scan_balance_49 {
            let t = usize::from(!anon);
            self.reclaim_stat.recent_scanned[t] += scanned;
            self.reclaim_stat.recent_rotated[t] += rotated;
        }
    }

    /// 4.9's `get_scan_count` over the node's lists (`pids`' lists summed): the anon and file
    /// fractions of each list's `size >> priority`, and their denominator.
    pub(crate) fn get_scan_count_49(
        &mut self,
        pids: &[Pid],
        priority: u32,
        may_swap: bool,
    ) -> ([u64; 2], u64) {
        const SCAN_FILE: ([u64; 2], u64) = ([0, 1], 1);
        if !may_swap {
            return SCAN_FILE;
        }
        let swappiness = self.params.swappiness as u64;
        if priority == 0 && swappiness > 0 {
            return ([1, 1], 1); // SCAN_EQUAL
        }
        let lens = self.node_lens(pids).map(u64::from);
        let len = |l: LruList| lens[l as usize];
        let anon = len(LruList::InactiveAnon) + len(LruList::ActiveAnon);
        let (inactive_file, active_file) = (len(LruList::InactiveFile), len(LruList::ActiveFile));
        let file = inactive_file + active_file;
        if file + self.free_pages() <= self.params.watermarks.high {
            return ([1, 0], 1); // SCAN_ANON: the page cache cannot get the node to its high mark
        }
        if !self.node_inactive_is_low(pids, false) && inactive_file >> priority > 0 {
            return SCAN_FILE;
        }
        self.reclaim_stat.age(0, anon);
        self.reclaim_stat.age(1, file);
        let f = self.reclaim_stat.fractions(swappiness);
        (f, f[0] + f[1] + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotations_shift_the_fraction_as_4_9s_formula() {
        let mut rs = ReclaimStat::default();
        // Nothing scanned yet: ap = 60, fp = 140 at swappiness 60.
        assert_eq!(rs.fractions(60), [60, 140]);
        // Anon pages rotated 9 in 10 scanned: anon's priority falls tenfold.
        rs.recent_scanned = [99, 99];
        rs.recent_rotated = [89, 9];
        assert_eq!(rs.fractions(60), [60 * 100 / 90, 140 * 100 / 10]);
        rs.recent_rotated = [9, 89];
        assert_eq!(rs.fractions(60), [60 * 100 / 10, 140 * 100 / 90]);
    }

    #[test]
    fn counters_halve_past_a_quarter_of_the_type() {
        let mut rs = ReclaimStat {
            recent_scanned: [101, 100],
            recent_rotated: [51, 40],
        };
        rs.age(0, 400);
        rs.age(1, 400);
        assert_eq!(
            rs,
            ReclaimStat {
                recent_scanned: [50, 100],
                recent_rotated: [25, 40],
            }
        );
    }
}
