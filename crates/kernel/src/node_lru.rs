//! One node-wide LRU ordered by page age, for a kernel without per-app memcgs
//! (`KernelParams::global_lru` with `KernelParams::node_lru_by_page_age`).
//!
//! Linux 4.9 (mm/vmscan.c): with every app charged to the root memcg, `shrink_node` calls
//! `shrink_node_memcg` on the node's single lruvec. `get_scan_count` sets `size >> priority`
//! targets on the node's lists; the loop takes `min(nr[lru], SWAP_CLUSTER_MAX)` of each
//! evictable list in turn (`for_each_evictable_lru`: inactive anon, active anon, inactive file,
//! active file) through `shrink_list`, which ages an active list only while
//! `inactive_list_is_low` holds for the node's lists (`inactive × sqrt(10 × GB) < active`);
//! after the loop the active anon list is aged once more if the node's inactive anon list is
//! low. Each batch is isolated from the tail of the node's list: the pages put at a list head
//! longest ago, whichever process they belong to.
//!
//! Modelled exactly on top of per-process lists: every page is stamped with a global counter
//! when it is put at a list head (`mm::PageTable::stamp`; 0 when put at a tail), so each
//! process's list is sorted by stamp and the node's list is their merge. A batch of `n` pages of
//! a list kind is taken as runs: the process whose tail is oldest (ties: lowest pid) gives the
//! pages of its tail that are older than every other process's tail, through the same
//! `shrink_inactive` / `shrink_active` as per-process reclaim (same per-page costs and verdicts).
//! The oldest tail is a linear minimum over the live processes per run.
//! Simplified: scan targets and the stop rule are those of the per-process model (direct
//! reclaim stops after a round of batches once it has enough; no proportional rebalancing of
//! the remaining targets as in `shrink_node_memcg`).
//!
//! New anon pages start on the active anon list here (`KernelParams::new_anon_active`, Linux
//! before 5.9: `do_anonymous_page` → `lru_cache_add_active_or_unevictable`, and `do_swap_page`
//! → `activate_page` for the faulting page; 5.9's b518154e59aa "mm/vmscan: protect the workingset
//! on anonymous LRU" moved them to the inactive list). Why, measured on Marvin Fig. 3 with the
//! switch on and the 5.9 start (counters over the run): every inactive anon page reclaim scanned
//! was referenced (450,699 activated, 0 reclaimed: a new page's accessed bit is set by its fault
//! and nothing had cleared it), while the active anon list was never aged (0 pages scanned): the
//! node's inactive anon list (362k pages) was never low against active (298k) at the node's
//! ratio `sqrt(10 × 2.5 GB)` = 5, so no page ever reached the inactive tail unreferenced, and
//! the activations charged to anon's reclaim cost pushed `get_scan_count` to file (21% anon on
//! average): 0 pages swapped out. The per-process lists swap because each is small (ratio 1: an
//! app's inactive list is low as soon as it is smaller than its active list). With the 4.9 start
//! the anon pages are aged on the active list first and 1,074 MiB is swapped out.
//!
//! Off by default, by measurement (`reproduce baseline --quick` with the switch flipped on
//! every device, main at 132ff72, before -> after the active start): Marvin Fig. 3
//! 0.56 -> 8.93 s (paper ~8 s; 0 -> 1,074 MiB swapped: PASS), Fleet §3.1 Instagram p90 177 /
//! 182 -> 177 / 1762 ms without / with swap (paper 147 / 1027: GAP; --quick's p90 is the one
//! slowest launch: the full 20-launch run gives 335 ms without swap and 267 -> 273 ms with, its
//! flash swap-out 260k -> 279k pages, so there the node LRU swapped before this fix too),
//! Fleet §7.2 Facebook median/p90 113/148 -> 212/306 ms (paper 209/622, 2 hot launches: GAP),
//! Fleet §7.1 capacity: kills start at 13 -> 14 cached apps (paper 11: GAP), Marvin §8.3 with
//! a swap file 14 -> 13 apps (PASS), Fleet Fig. 2 unchanged (PASS). The default day (Pixel 3,
//! zram): hot p50/p90 141/354 -> 136/321 ms, cached mean 14.77 -> 14.87, kills 5 -> 4, flash
//! read/written 10.0 / 0.90 -> 6.7 / 0.91 GiB.
//!
//! Pre-5.8 releases now use 4.9's `get_scan_count` (`scan_balance.rs`:
//! `recent_rotated / recent_scanned`, SCAN_FILE while the inactive file list is not low; before
//! 4.7 that list is low once smaller than the active one). Measured with the switch flipped on
//! every device (`reproduce baseline --quick`, main 4f91a80 + switch -> this model): Fleet §7.1
//! kills start at 14 -> 13 cached apps (paper 11: PASS), Marvin §8.3 with a swap file 13 -> 14
//! apps (PASS), Fleet §3.1 Instagram p90 with swap 1762 -> 2243 ms (paper 1027: GAP, further),
//! Fleet §7.2 Facebook median/p90 212/306 -> 113/2456 ms (paper 209/622, 2 hot launches: GAP),
//! Marvin Fig. 3 8.93 -> 0.54 s under pressure, 1,074 -> 0 MiB swapped (paper ~8 s: PASS ->
//! GAP), Fleet Fig. 2 unchanged; the pre-4.7 file ratio changed no row. The default day (Pixel
//! 3): hot p50/p90 136/321 -> 146/334 ms, cached mean 14.87 -> 14.70, kills 4 -> 5, flash
//! read/written 6.7 / 0.89 -> 11.7 / 0.88 GiB.
//!
//! `mark_page_accessed` on `read()` (a second read activates an inactive file page; before 4.7
//! a `write()` too: `mark_accessed.rs`) changes little here, measured at main 0387a8f with the
//! switch flipped on every device (`reproduce baseline --quick`, switch on, main -> with it):
//! Marvin Fig. 3 0.54 -> 0.54 s under pressure, 0 -> 0 MiB swapped (GAP), Fleet §7.1 kills
//! start at 13 -> 13 (PASS), Marvin §8.3 10 / 14 -> 10 / 14 apps (PASS), Fleet §3.1 Instagram
//! p90 177 / 2243 -> 177 / 2245 ms (GAP), Fleet §7.2 Facebook median/p90 113/2456 -> 113/2480
//! ms (GAP), Fleet Fig. 2 unchanged (switch off, main -> with it: Marvin Fig. 3 5.91 -> 6.00 s,
//! Fleet §7.2 183/527 -> 187/457 ms, Fleet §3.1 957/937 -> 961/890 ms, others unchanged). The
//! default day with the switch on (Pixel 3): hot p50/p90 146/334 -> 147/341 ms, cached mean
//! 14.70 -> 14.87, kills 5 -> 4, flash read/written 11.7 / 0.88 -> 12.2 / 0.89 GiB. Why:
//! Marvin Fig. 3's `read()`s are 2,983 pages of 390,648 read (the rest are faults on mapped
//! code), and `referenced_ptes > 1` can change no verdict in the model (every mapped file
//! page is in an executable mapping; see `mark_accessed.rs`). Nor is the active file list
//! small when it matters: logged at each 4.9 `get_scan_count` of the run (a throwaway build),
//! it holds 2,242 pages against 288,032 inactive at the first pressure (t = 562 s), but the
//! two file lists are near equal from then on (3.18: the inactive one is low once smaller, and
//! then the active one is aged), 116,902 / 119,673 pages at the start of the 512 MB allocation
//! (t = 715 s) and 62,616 / 62,588 at its end. So the model reclaims the allocation from its
//! 924 MiB of file pages, as 4.9's rules say: the inactive file list is not low in 542 of the
//! allocation's 553 scans (SCAN_FILE), and in the others anon's SCAN_FRACT share is 60 against
//! file's 972 because each new anon page starts active and counts as rotated
//! (`__pagevec_lru_add_fn` → `update_page_reclaim_stat(lruvec, file, active)`: anon
//! `recent_rotated` 132,859 of `recent_scanned` 132,860 at its end). Open: whether the phone in Marvin's run had that much reclaimable page
//! cache (the apps' mapped file sizes, one copy of the framework's files per app here: `mm.rs`),
//! before the node LRU can be turned on.
//!
//! The full runs (session 19; main 053b627 with the switch on in the `pixel3` and `pixelxl`
//! profiles; `HOTLAUNCH_JOBS=2 hotlaunch reproduce baseline`, switch off -> on): Fleet §7.1
//! kills start at 10 -> 13 cached apps, at most 11 -> 14 (paper 11 / 14: GAP -> PASS); Fleet
//! §7.2 Facebook median / p90 over 20 hot launches 3445 / 3865 -> 175 / 256 ms (paper 209 / 622:
//! GAP, the median now inside ±35%); Fleet §3.1 Instagram p90 952 / 1681 -> 335 / 232 ms
//! without / with swap (paper 147 / 1027: GAP; with swap is the faster one, as at every app
//! size in `crates/apps/README.md`); Marvin §8.3 9 / 12 -> 10 / 12 apps (PASS); Marvin Fig. 3
//! 6.00 -> 0.54 s (PASS -> GAP, the cause above); the other rows unchanged; 7 PASS either way.
//! `reproduce all --quick` moves the same way in the technique groups: Fleet #5 (2048 B
//! synthetic apps, 1.64x -> 1.29x) and Marvin #10 become PASS, Marvin #2 and #5 (Fig. 3)
//! become GAP. So the switch trades one Pixel XL row for one Pixel 3 row and brings the Pixel 3
//! launch rows closer; it stays off until Marvin Fig. 3's page cache is understood.
//!
//! Measured again after the flash queue became ordered by submission time (session 21, main
//! 9d3ea04 + the switch on in `pixel3` and `pixelxl`; full `HOTLAUNCH_JOBS=2 hotlaunch reproduce
//! baseline`, switch off -> on): Fleet §7.1 kills start at 16 -> 19 cached apps, at most 16 ->
//! 18 (paper 11 / 14: GAP either way; the PASS above rested on writes queued behind later
//! reads); Fleet §7.2 Facebook median / p90 2755 / 3041 -> 175 / 254 ms (paper 209 / 622: GAP,
//! the median inside ±35%); Fleet §3.1 Instagram p90 946 / 1612 -> 335 / 236 ms without / with
//! swap (GAP); Marvin §8.3 9 / 16 -> 10 / 15 apps (GAP -> PASS; 363 GiB instead of 414 GiB
//! swapped out); Marvin Fig. 3 5.88 -> 0.54 s (PASS -> GAP, 0 MiB swapped); the other rows
//! unchanged; 6 PASS either way. Still a trade of one Pixel XL row for another: stays off.

use crate::mm::{LruVec, PageTable};
use crate::reclaim::{inactive_is_low_for, scan_targets, ScanCtx, SCAN_LISTS};
use crate::types::*;
use crate::{Kernel, SWAP_CLUSTER_MAX};

impl Kernel {
    /// `shrink_node_memcg` on the node's one lruvec: the node's `size >> priority` targets,
    /// taken in batches of at most `SWAP_CLUSTER_MAX` from the oldest pages across `pids`.
    pub(crate) fn shrink_global_by_age(
        &mut self,
        pids: &[Pid],
        priority: u32,
        frac: [u64; 2],
        den: u64,
        ctx: &mut ScanCtx,
    ) {
        let mut nr = scan_targets(self.node_lens(pids), priority, frac, den);
        while nr.iter().any(|&t| t > 0) {
            for (i, l) in SCAN_LISTS.into_iter().enumerate() {
                let n = nr[i].min(SWAP_CLUSTER_MAX as u64);
                if n == 0 {
                    continue;
                }
                nr[i] -= n;
                let anon = i < 2;
                // `shrink_list`: an active list is aged only while its inactive list is low.
                if l == LruList::inactive(anon) || self.node_inactive_is_low(pids, anon) {
                    self.node_shrink_list(pids, l, n, ctx);
                }
            }
            if !ctx.background && ctx.out.reclaimed >= ctx.nr_to_reclaim {
                break;
            }
        }
        // Keep the node's anon inactive list from running dry (after the loop, as in 4.9).
        if ctx.may_swap && self.node_inactive_is_low(pids, true) {
            self.node_shrink_list(pids, LruList::ActiveAnon, SWAP_CLUSTER_MAX as u64, ctx);
        }
    }

    /// The node's list sizes: the live processes' lists summed.
    pub(crate) fn node_lens(&self, pids: &[Pid]) -> [u32; NR_LRU_LISTS] {
        let mut lens = [0u32; NR_LRU_LISTS];
        for p in pids.iter().filter_map(|&pid| self.procs.get(pid as usize)) {
            if p.alive {
                for (l, n) in lens.iter_mut().zip(p.lru.len) {
                    *l = l.saturating_add(n);
                }
            }
        }
        lens
    }

    /// `inactive_list_is_low` on the node's lists.
    pub(crate) fn node_inactive_is_low(&self, pids: &[Pid], anon: bool) -> bool {
        let lens = self.node_lens(pids);
        let (ia, aa) = (LruList::inactive(anon) as usize, LruList::active(anon) as usize);
        if !anon && self.params.file_ratio_one {
            return lens[ia] < lens[aa]; // `inactive_file_is_low` before 4.7
        }
        inactive_is_low_for(lens[ia] as u64, lens[aa] as u64)
    }

    /// Scan up to `n` pages from the tail of the node's `list` (the merge of the processes'
    /// lists by stamp), in runs of one process each.
    fn node_shrink_list(&mut self, pids: &[Pid], list: LruList, n: u64, ctx: &mut ScanCtx) {
        let mut left = n;
        while left > 0 {
            let lrus = pids
                .iter()
                .filter_map(|&pid| self.procs.get(pid as usize))
                .filter(|p| p.alive)
                .map(|p| (p.pid, &p.lru));
            let Some((pid, k)) = oldest_run(&self.pt, lrus, list, left) else {
                break;
            };
            let anon = matches!(list, LruList::InactiveAnon | LruList::ActiveAnon);
            if list == LruList::inactive(anon) {
                self.shrink_inactive(pid, anon, k, ctx);
            } else {
                self.shrink_active(pid, anon, k, ctx);
            }
            left -= k;
        }
    }
}

/// The next run of the node's `list` over the processes' lruvecs `lrus`: the process with the
/// oldest tail (by `(stamp, pid)`) and how many of its tail pages (at most `max`, at least 1) come
/// before every other process's tail. `None` when the node's list is empty.
pub(crate) fn oldest_run<'a>(
    pt: &PageTable,
    lrus: impl Iterator<Item = (Pid, &'a LruVec)>,
    list: LruList,
    max: u64,
) -> Option<(Pid, u64)> {
    let mut best: Option<(u32, Pid, &LruVec)> = None;
    let mut second: Option<(u32, Pid)> = None;
    for (pid, lru) in lrus {
        let Some(tail) = lru.iter(&pt.pages, list).next() else {
            continue;
        };
        let key = (pt.stamp[tail as usize], pid);
        if best.is_none_or(|b| key < (b.0, b.1)) {
            second = best.map(|b| (b.0, b.1));
            best = Some((key.0, key.1, lru));
        } else if second.is_none_or(|s| key < s) {
            second = Some(key);
        }
    }
    let (_, pid, lru) = best?;
    let k = lru
        .iter(&pt.pages, list)
        .take(max as usize)
        .take_while(|&i| second.is_none_or(|s| (pt.stamp[i as usize], pid) < s))
        .count() as u64;
    Some((pid, k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Ops on `procs` lruvecs of one list kind: (process, op, page choice).
    fn apply(t: &mut PageTable, lrus: &mut [LruVec], first: PageIdx, ops: &[(usize, u8, u32)]) {
        let list = LruList::InactiveFile;
        let per = 64u32;
        for &(p, op, c) in ops {
            let p = p % lrus.len();
            let idx = first + p as u32 * per + c % per;
            let on = t.pages[idx as usize].lru != LruList::None;
            match (op % 4, on) {
                (0, false) => t.lru_add_head(&mut lrus[p], idx, list),
                (1, false) => t.lru_add_tail(&mut lrus[p], idx, list),
                (2, true) => t.lru_del(&mut lrus[p], idx),
                (_, true) => t.lru_move_head(&mut lrus[p], idx, list),
                _ => t.lru_add_head(&mut lrus[p], idx, list),
            }
        }
    }

    proptest! {
        /// Taking runs from the node's list visits every page in `(stamp, pid)` order: the
        /// merge of the per-process lists is the node's one list ordered by age.
        #[test]
        fn the_node_merge_visits_pages_in_stamp_order(
            nprocs in 1usize..6,
            ops in prop::collection::vec((0usize..6, 0u8..4, 0u32..64), 0..400),
            max in 1u64..40,
        ) {
            let mut t = PageTable::default();
            t.enable_stamps();
            let first = t.map(0, 64 * nprocs as u32, PageKind::File, PageState::Resident, false);
            let mut lrus = vec![LruVec::new(0); nprocs];
            apply(&mut t, &mut lrus, first, &ops);
            let total: u32 = lrus.iter().map(|l| l.len[LruList::InactiveFile as usize]).sum();
            let mut seen = Vec::new();
            loop {
                let it = lrus.iter().enumerate().map(|(p, l)| (p as Pid, l));
                let Some((pid, k)) = oldest_run(&t, it, LruList::InactiveFile, max) else { break };
                prop_assert!(k >= 1 && k <= max);
                for _ in 0..k {
                    let idx = lrus[pid as usize].tail(&t.pages, LruList::InactiveFile).unwrap();
                    seen.push((t.stamp[idx as usize], pid));
                    t.lru_del(&mut lrus[pid as usize], idx);
                }
            }
            prop_assert_eq!(seen.len() as u32, total);
            prop_assert!(seen.windows(2).all(|w| w[0] <= w[1]), "out of order: {:?}", seen);
        }
    }

    #[test]
    fn stamps_are_halved_before_the_counter_wraps() {
        let mut t = PageTable::default();
        t.enable_stamps();
        let first = t.map(0, 3, PageKind::File, PageState::Resident, false);
        let mut lru = LruVec::new(0);
        t.lru_add_head(&mut lru, first, LruList::ActiveFile);
        t.clock = u32::MAX - 1;
        t.lru_add_head(&mut lru, first + 1, LruList::ActiveFile);
        t.lru_add_head(&mut lru, first + 2, LruList::ActiveFile);
        let s: Vec<u32> = (0..3).map(|i| t.stamp[(first + i) as usize]).collect();
        assert!(s[0] <= s[1] && s[1] < s[2], "order kept across the wrap: {s:?}");
        assert!(s[2] <= u32::MAX / 2 + 1);
    }
}
