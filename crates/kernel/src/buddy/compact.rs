//! Compaction (`mm/compaction.c` `compact_zone`, simplified; see the parent module doc).

use super::*;

/// Who owns allocated frames, for compaction: says which frames can be migrated and is told when
/// one moved (so it can update its reverse map / page table).
pub trait FrameMover {
    /// Whether the allocated order-0 frame `pfn` may be migrated (an LRU/movable page).
    fn movable(&self, pfn: Pfn) -> bool;
    /// The contents of `from` now live in `to`; `from` is freed right after this call.
    fn moved(&mut self, from: Pfn, to: Pfn);
}

/// Result of one [`BuddyAllocator::compact`] call, so the caller can charge CPU cost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct CompactOutcome {
    /// A free block of at least the target order is available at the end (`COMPACT_SUCCESS`).
    pub success: bool,
    /// Block heads visited by the migrate and free scanners together.
    pub pages_scanned: u64,
    /// Frames migrated.
    pub pages_migrated: u64,
    /// The scanners met (`COMPACT_COMPLETE`: the cached positions were reset).
    pub scanners_met: bool,
}

impl BuddyAllocator {
    // ----------------------------------------------------------------------------------------
    // Compaction

    /// Compact memory for an order-`target_order` Movable request (see [`Self::compact_for`]).
    pub fn compact(
        &mut self,
        target_order: u8,
        mover: &mut dyn FrameMover,
        max_migrate: u32,
    ) -> CompactOutcome {
        self.compact_for(target_order, MigrateType::Movable, mover, max_migrate)
    }

    /// `compact_zone` for an order-`target_order` request of type `mt` (which only affects the
    /// success test, `__compact_finished`). Migrates at most `max_migrate` frames.
    pub fn compact_for(
        &mut self,
        target_order: u8,
        mt: MigrateType,
        mover: &mut dyn FrameMover,
        max_migrate: u32,
    ) -> CompactOutcome {
        assert!(target_order <= MAX_ORDER);
        let m = mt as u8;
        self.stats.compact_runs += 1;
        let pbo = self.pageblock_order;
        let mut out = CompactOutcome::default();
        let mut migrate_pfn = self.compact_migrate_pfn;
        let mut free_block = self.compact_free_pfn;
        let mut free_cursor = free_block;
        let mut targets = std::mem::take(&mut self.compact_targets);
        let mut cands = std::mem::take(&mut self.compact_cands);
        targets.clear();
        let mut met = false;
        let mut finished = self.compact_finished(target_order, m);
        while !finished {
            if out.pages_migrated >= max_migrate as u64 {
                break;
            }
            // compact_scanners_met
            if (free_block >> pbo) <= (migrate_pfn >> pbo) {
                met = true;
                break;
            }
            // isolate_migratepages: within the migrate scanner's pageblock.
            let block_end = self.pageblock_end(migrate_pfn);
            let pb = (migrate_pfn >> pbo) as usize;
            // isolation_suitable: a pageblock recently scanned in vain is skipped.
            if self.pb_type[pb] != MOVABLE || self.pb_skip[pb] {
                migrate_pfn = block_end;
                continue;
            }
            let want = COMPACT_CLUSTER_MAX.min((max_migrate as u64 - out.pages_migrated) as usize);
            cands.clear();
            let mut pfn = migrate_pfn;
            let mut scanned = 0u64;
            while pfn < block_end && cands.len() < want {
                let s = self.state[pfn as usize];
                scanned += 1;
                if s == TAIL {
                    pfn += 1;
                    continue;
                }
                let o = s & ORDER_MASK;
                if s & ALLOC_BIT != 0 && o == 0 && mover.movable(pfn) {
                    cands.push(pfn);
                }
                pfn += 1 << o;
            }
            out.pages_scanned += scanned;
            self.stats.compact_migrate_scanned += scanned;
            if pfn >= block_end && cands.is_empty() {
                // update_pageblock_skip: the rest of the block was scanned, nothing isolated.
                self.mark_skip(pb);
            }
            migrate_pfn = pfn;
            // migrate_pages with compaction_alloc targets.
            for i in 0..cands.len() {
                let from = cands[i];
                let to = match targets.pop() {
                    Some(t) => t,
                    None => {
                        let needed = cands.len() - i;
                        self.isolate_freepages(
                            &mut free_block,
                            &mut free_cursor,
                            migrate_pfn,
                            needed,
                            &mut targets,
                            &mut out,
                        );
                        match targets.pop() {
                            Some(t) => t,
                            None => {
                                met = true;
                                break;
                            }
                        }
                    }
                };
                self.state[to as usize] = self.state[from as usize];
                mover.moved(from, to);
                self.free_inner(from, 0);
                out.pages_migrated += 1;
            }
            if met {
                break;
            }
            finished = self.compact_finished(target_order, m);
        }
        // release_freepages: unused targets go back; the cached free pfn only moves back up.
        let mut highest: Option<u32> = None;
        for &t in &targets {
            self.free_inner(t, 0);
            highest = Some(highest.map_or(t, |h| h.max(t)));
        }
        targets.clear();
        self.compact_targets = targets;
        self.compact_cands = cands;
        out.scanners_met = met;
        if met {
            self.compact_migrate_pfn = 0;
            self.compact_free_pfn = self.last_pageblock_start();
        } else {
            self.compact_migrate_pfn = (migrate_pfn >> pbo) << pbo;
            let mut f = free_block;
            if let Some(h) = highest {
                f = f.max((h >> pbo) << pbo);
            }
            self.compact_free_pfn = f;
        }
        out.success = self.compact_finished(target_order, m);
        self.stats.compact_migrated += out.pages_migrated;
        if out.success {
            self.stats.compact_success += 1;
        } else {
            self.stats.compact_fail += 1;
        }
        out
    }

    /// Use compaction's pageblock skip hints (Linux 3.7+, `PB_migrate_skip`): a scanner that
    /// scans the rest of a pageblock and isolates nothing there marks it, and both scanners pass
    /// marked pageblocks by (`isolation_suitable`) until the marks are cleared
    /// ([`Self::reset_isolation_suitable`]). Off (the default): every run scans every pageblock,
    /// as Linux 3.4 does.
    pub fn set_skip_hints(&mut self, on: bool) {
        self.skip_hints = on;
        if !on {
            // Marks exist only while hints are on, so the scanners test the marks alone.
            self.pb_skip.fill(false);
        }
    }

    /// Whether skip hints are on ([`Self::set_skip_hints`]).
    pub fn skip_hints(&self) -> bool {
        self.skip_hints
    }

    /// Pageblocks currently marked to be skipped.
    pub fn skipped_pageblocks(&self) -> usize {
        self.pb_skip.iter().filter(|&&b| b).count()
    }

    fn mark_skip(&mut self, pb: usize) {
        if self.skip_hints {
            self.pb_skip[pb] = true;
        }
    }

    /// `__reset_isolation_suitable`: clear every skip mark and restart both scanners from the
    /// zone's ends (`reset_cached_positions`).
    pub fn reset_isolation_suitable(&mut self) {
        self.pb_skip.fill(false);
        self.blockskip_flush = false;
        self.compact_migrate_pfn = 0;
        self.compact_free_pfn = self.last_pageblock_start();
    }

    /// A direct compaction's scanners met: kswapd clears the marks when it next goes to sleep
    /// (`zone->compact_blockskip_flush`).
    pub fn note_blockskip_flush(&mut self) {
        if self.skip_hints {
            self.blockskip_flush = true;
        }
    }

    /// `reset_isolation_suitable` (kswapd about to sleep): clear the marks if a direct
    /// compaction completed since they were last cleared.
    pub fn reset_isolation_suitable_if_flushed(&mut self) {
        if self.blockskip_flush {
            self.reset_isolation_suitable();
        }
    }

    /// Cached compaction scanner positions `(migrate_pfn, free_pfn)` (pageblock starts).
    pub fn compact_cached_pfns(&self) -> (Pfn, Pfn) {
        (self.compact_migrate_pfn, self.compact_free_pfn)
    }

    /// `compact_finished` (the free-list part of `__compact_finished`).
    fn compact_finished(&self, target_order: u8, mt: u8) -> bool {
        for o in target_order..=MAX_ORDER {
            let row = &self.nr_free[o as usize];
            if row[mt as usize] > 0 {
                return true;
            }
            if mt == MOVABLE && row[CMA as usize] > 0 {
                return true;
            }
            if self.find_suitable_fallback(o, mt, true).is_some() {
                return true;
            }
        }
        false
    }

    /// `isolate_freepages`: free scanner, downward from `free_block` over Movable pageblocks
    /// strictly above the migrate scanner's pageblock, until `needed` targets are isolated.
    fn isolate_freepages(
        &mut self,
        free_block: &mut u32,
        free_cursor: &mut u32,
        migrate_pfn: u32,
        needed: usize,
        targets: &mut Vec<Pfn>,
        out: &mut CompactOutcome,
    ) {
        let pbo = self.pageblock_order;
        let low = ((migrate_pfn as u64 >> pbo) + 1) << pbo;
        while targets.len() < needed {
            if (*free_block as u64) < low {
                return;
            }
            let start = *free_block;
            let end = self.pageblock_end(start);
            let s0 = self.state[start as usize];
            // suitable_migration_target: Movable/Cma pageblock, not (inside) a free block of
            // order >= pageblock_order.
            let pb = (start >> pbo) as usize;
            let t = self.pb_type[pb];
            let big_free = s0 == TAIL || (s0 & ALLOC_BIT == 0 && s0 & ORDER_MASK >= pbo);
            if (t == MOVABLE || t == CMA) && !big_free && !self.pb_skip[pb] {
                let isolated_before = targets.len();
                let mut pfn = (*free_cursor).max(start);
                // Frames visited, summed into the counters once (not per frame, which would
                // make every step wait on a read-modify-write of memory).
                let mut scanned = 0u64;
                while pfn < end && targets.len() < needed {
                    // Host shortcut, same visits: a run of allocated order-0 heads is stepped
                    // over eight frames at a time (each is one visit of one frame).
                    let run = order0_allocated_run(&self.state, pfn, end);
                    scanned += run as u64;
                    pfn += run;
                    if pfn >= end {
                        break;
                    }
                    let s = self.state[pfn as usize];
                    scanned += 1;
                    if s == TAIL {
                        pfn += 1;
                        continue;
                    }
                    let o = s & ORDER_MASK;
                    if s & ALLOC_BIT == 0 {
                        self.del_free(pfn, o, state_mt(s));
                        for f in pfn..pfn + (1u32 << o) {
                            self.state[f as usize] = alloc_state(0, MOVABLE);
                            targets.push(f);
                        }
                    }
                    pfn += 1 << o;
                }
                out.pages_scanned += scanned;
                self.stats.compact_free_scanned += scanned;
                if pfn < end {
                    *free_cursor = pfn;
                    return;
                }
                if targets.len() == isolated_before {
                    self.mark_skip(pb);
                }
            }
            *free_block = start - (1u32 << pbo).min(start);
            *free_cursor = *free_block;
            if start == 0 {
                return;
            }
        }
    }
}

/// Length (a multiple of 8) of the run of allocated order-0 heads (`ALLOC_BIT | mt << 4`) that
/// starts at `pfn`, counted in whole 8-frame words below `end`. Each such frame is one visit and a
/// one-frame step of a compaction scanner, so skipping the run and counting its length is the
/// same walk.
#[inline]
fn order0_allocated_run(state: &[u8], pfn: u32, end: u32) -> u32 {
    const MASK: u64 = u64::from_ne_bytes([ALLOC_BIT | ORDER_MASK; 8]);
    const WANT: u64 = u64::from_ne_bytes([ALLOC_BIT; 8]);
    let mut p = pfn;
    while p + 8 <= end {
        let i = p as usize;
        let w = u64::from_ne_bytes(state[i..i + 8].try_into().expect("8 bytes"));
        if w & MASK != WANT {
            break;
        }
        p += 8;
    }
    p - pfn
}
