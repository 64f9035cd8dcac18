//! The in-kernel low memory killer of older Android kernels
//! (`drivers/staging/android/lowmemorykiller.c`, kernels ≤ 4.19 on Android; removed upstream in
//! 4.12), which kills instead of userspace lmkd on devices without PSI (e.g. Android 7.1 / Linux
//! 3.18, Android 4.2 / Linux 3.4).
//!
//! The driver is a shrinker: reclaim (kswapd or direct) calls `lowmem_scan`, which computes
//!
//! * `other_free = NR_FREE_PAGES − totalreserve_pages` (the high watermarks + lowmem reserves),
//! * `other_file = NR_FILE_PAGES − NR_SHMEM − total_swapcache_pages()`,
//!
//! and takes the first slot `i` of its `minfree`/`adj` arrays (written by ActivityManager's
//! `ProcessList.updateOomLevels`, or lmkd in Android 5–9) with `other_free < minfree[i] &&
//! other_file < minfree[i]`; `min_score_adj = adj[i]`. Among processes with `oom_score_adj ≥
//! min_score_adj` it kills the one with the highest adj, and within that adj the largest RSS
//! (`get_mm_rss`, swap not counted). While a victim is still dying (`TIF_MEMDIE`, at most
//! `lowmem_deathpending_timeout` = 1 s) it kills no other. ISMM'15 §4 describes the same rule:
//! "the reclamation process invokes the low memory killer if the amounts of free pages and file
//! pages are below specified thresholds at the same time".
//!
//! Simplified: the simulation runs the check at lmkd's poll period (10 ms) whenever reclaim has
//! scanned pages since the previous check, instead of inside each shrinker call; a kill frees
//! the victim's memory at once, so the death-pending wait never blocks a second kill.

use crate::lmkd::{Candidate, Kill, KillReason, MemSnapshot};

/// The driver's state: its `minfree`/`adj` arrays and the reclaim counters it last saw.
#[derive(Debug, Clone)]
pub struct LowMemoryKiller {
    /// `(adj, minfree pages)` in ascending order (lowmem_adj / lowmem_minfree).
    pub minfree: Vec<(i16, u64)>,
    last_pgscan: u64,
    pub scans: u64,
}

impl LowMemoryKiller {
    pub fn new(minfree: Vec<(i16, u64)>) -> Self {
        LowMemoryKiller {
            minfree,
            last_pgscan: 0,
            scans: 0,
        }
    }

    /// `min_score_adj` of `lowmem_scan` for this memory state, if any slot applies.
    pub fn min_score_adj(&self, snap: &MemSnapshot) -> Option<i16> {
        let other_free = snap.free_pages.saturating_sub(snap.wmark_high);
        let other_file = snap.file_lru_pages;
        self.minfree
            .iter()
            .find(|&&(_, minfree)| other_free < minfree && other_file < minfree)
            .map(|&(adj, _)| adj)
    }

    /// One shrinker pass if reclaim ran since the last call: the kill the driver decides.
    pub fn scan(&mut self, snap: &MemSnapshot, cands: &[Candidate]) -> Option<Kill> {
        let pgscan = snap.pgscan_kswapd + snap.pgscan_direct;
        if pgscan == self.last_pgscan {
            // Not reclaiming: the shrinker is not called.
            return None;
        }
        self.last_pgscan = pgscan;
        self.scans += 1;
        let min_adj = self.min_score_adj(snap)?;
        let victim = cands
            .iter()
            .filter(|c| c.adj >= min_adj && c.rss_pages > 0)
            .max_by(|a, b| {
                a.adj
                    .cmp(&b.adj)
                    .then(a.rss_pages.cmp(&b.rss_pages))
                    .then(b.seq.cmp(&a.seq))
            })?;
        Some(Kill {
            pid: victim.pid,
            reason: KillReason::LowMemoryKiller,
            min_adj,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lmk() -> LowMemoryKiller {
        // Android 7.1 arm64 table (pages): 18432, 23040, 27648, 32256, 55296, 80640.
        LowMemoryKiller::new(vec![
            (0, 18432),
            (100, 23040),
            (200, 27648),
            (300, 32256),
            (900, 55296),
            (950, 80640),
        ])
    }

    fn cand(pid: u32, adj: i16, rss_pages: u64, seq: u64) -> Candidate {
        Candidate {
            pid,
            adj,
            rss_pages,
            seq,
        }
    }

    #[test]
    fn kills_the_largest_of_the_highest_adj_when_free_and_file_are_low() {
        let mut l = lmk();
        let cands = [
            cand(1, 0, 90_000, 0),
            cand(2, 900, 50_000, 1),
            cand(3, 960, 10_000, 2),
            cand(4, 960, 30_000, 3),
        ];
        let mut s = MemSnapshot {
            free_pages: 6_000 + 70_000,
            wmark_high: 6_000,
            file_lru_pages: 70_000,
            pgscan_kswapd: 10,
            ..Default::default()
        };
        // 70k pages free above high and 70k file: only the last slot (80640) applies.
        let k = l.scan(&s, &cands).expect("kill");
        assert_eq!(
            (k.pid, k.min_adj, k.reason),
            (4, 950, KillReason::LowMemoryKiller)
        );
        // No reclaim since: the shrinker is not called.
        assert_eq!(l.scan(&s, &cands), None);
        // Plenty of file cache: no kill even with little free memory.
        s.pgscan_kswapd = 20;
        s.free_pages = 6_000 + 1_000;
        s.file_lru_pages = 200_000;
        assert_eq!(l.scan(&s, &cands), None);
        // Both very low: slot 0, the foreground app is a candidate only after the cached ones.
        s.pgscan_direct = 5;
        s.file_lru_pages = 1_000;
        let k = l.scan(&s, &cands[..1]).expect("kill");
        assert_eq!((k.pid, k.min_adj), (1, 0));
    }
}
