//! `__rmqueue_fallback` and pageblock stealing (6.10 era and the pre-4.0 legacy variant; see
//! the parent module doc).

use super::*;

impl BuddyAllocator {
    /// `can_steal_fallback`.
    #[inline]
    pub(super) fn can_steal_fallback(&self, order: u8, start_mt: u8) -> bool {
        order >= self.pageblock_order / 2
            || start_mt == MigrateType::Unmovable as u8
            || start_mt == MigrateType::Reclaimable as u8
    }

    /// `find_suitable_fallback`: first fallback type of `start_mt` with a free block of `order`,
    /// and whether whole pageblocks may be stolen.
    pub(super) fn find_suitable_fallback(
        &self,
        order: u8,
        start_mt: u8,
        only_stealable: bool,
    ) -> Option<(u8, bool)> {
        for &f in mt_from_u8(start_mt).fallbacks() {
            let f = f as u8;
            if self.nr_free[order as usize][f as usize] == 0 {
                continue;
            }
            let can_steal = self.can_steal_fallback(order, start_mt);
            if !only_stealable || can_steal {
                return Some((f, can_steal));
            }
        }
        None
    }

    /// `__rmqueue_fallback` + `steal_suitable_fallback`.
    pub(super) fn rmqueue_fallback(&mut self, order: u8, start_mt: u8) -> Option<u32> {
        if self.legacy_fallback {
            return self.rmqueue_fallback_legacy(order, start_mt);
        }
        let mut found = None;
        let mut find_smallest = false;
        for cur in (order..=MAX_ORDER).rev() {
            if let Some((f, can_steal)) = self.find_suitable_fallback(cur, start_mt, false) {
                if !can_steal && start_mt == MOVABLE && cur > order {
                    find_smallest = true;
                } else {
                    found = Some((cur, f, can_steal));
                }
                break;
            }
        }
        if find_smallest {
            for cur in order..=MAX_ORDER {
                if let Some((f, can_steal)) = self.find_suitable_fallback(cur, start_mt, false) {
                    found = Some((cur, f, can_steal));
                    break;
                }
            }
        }
        let (cur, block_mt, whole_block) = found?;
        self.stats.fallback_steals += 1;
        let pfn = self.links[self.sentinel(cur, block_mt) as usize].next;
        let pbo = self.pageblock_order;
        if cur >= pbo {
            self.del_free(pfn, cur, block_mt);
            let changed = self.change_pageblock_range(pfn, cur, start_mt);
            self.stats.pageblock_type_changes += changed;
            self.stats.fallback_claims += 1;
            self.expand(pfn, order, cur, start_mt);
            self.state[pfn as usize] = alloc_state(order, start_mt);
            return Some(pfn);
        }
        let start = (pfn >> pbo) << pbo;
        let pb_nr = 1u32 << pbo;
        // prep_move_freepages_block fails if the pageblock crosses the zone end.
        if whole_block && start as u64 + pb_nr as u64 <= self.nr_pages as u64 {
            let (free, movable) = self.count_pageblock(start);
            let alike = if start_mt == MOVABLE {
                movable
            } else if block_mt == MOVABLE {
                pb_nr as u64 - (free + movable)
            } else {
                0
            };
            if free + alike >= 1u64 << (pbo - 1) {
                let pb = (start >> pbo) as usize;
                self.pb_type[pb] = start_mt;
                self.move_freepages(start, start + pb_nr, start_mt);
                self.stats.pageblock_type_changes += 1;
                self.stats.fallback_claims += 1;
                return self.rmqueue_smallest(order, start_mt);
            }
        }
        // single page: remainder stays on the pageblock type's lists.
        self.del_free(pfn, cur, block_mt);
        self.expand(pfn, order, cur, block_mt);
        self.state[pfn as usize] = alloc_state(order, start_mt);
        Some(pfn)
    }

    /// `__rmqueue_fallback` of Linux 3.4..3.19: the largest free block of the first fallback
    /// type that has one, for every request type (no smallest-block search for movable ones).
    /// The pageblock is claimed (its free pages move to the request's lists) only if that block
    /// is at least half a pageblock, or the request is reclaimable, and at least half the
    /// pageblock is free; otherwise the split remainder stays on the fallback type's lists, so an
    /// unmovable page lands in a movable pageblock without taking it over. Linux 4.0 changed
    /// this (V. Babka, "mm: more aggressive page stealing for UNMOVABLE allocations": unmovable
    /// fallbacks fell to ~1/6 in stress-highalloc; "mm: always steal split buddies in fallback
    /// allocations"). Simplified: 3.x also moved an unclaimed pageblock's free pages to the
    /// request's lists; here every free block stays on its pageblock type's list.
    pub(super) fn rmqueue_fallback_legacy(&mut self, order: u8, start_mt: u8) -> Option<u32> {
        let pbo = self.pageblock_order;
        for cur in (order..=MAX_ORDER).rev() {
            let Some(&f) = mt_from_u8(start_mt)
                .fallbacks()
                .iter()
                .find(|&&f| self.nr_free[cur as usize][f as usize] > 0)
            else {
                continue;
            };
            let f = f as u8;
            self.stats.fallback_steals += 1;
            let pfn = self.links[self.sentinel(cur, f) as usize].next;
            let start = (pfn >> pbo) << pbo;
            let mut mt = f;
            if cur >= pbo {
                self.stats.pageblock_type_changes += self.change_pageblock_range(pfn, cur, start_mt);
                self.stats.fallback_claims += 1;
                self.del_free(pfn, cur, f);
                mt = start_mt;
            } else if (cur >= pbo / 2 || start_mt == MigrateType::Reclaimable as u8)
                // move_freepages_block does nothing for a pageblock crossing the zone end.
                && start as u64 + (1u64 << pbo) <= self.nr_pages as u64
                && self.count_pageblock(start).0 >= 1u64 << (pbo - 1)
            {
                self.pb_type[(start >> pbo) as usize] = start_mt;
                self.move_freepages(start, start + (1 << pbo), start_mt);
                self.stats.pageblock_type_changes += 1;
                self.stats.fallback_claims += 1;
                self.del_free(pfn, cur, start_mt);
                mt = start_mt;
            } else {
                self.del_free(pfn, cur, f);
            }
            self.expand(pfn, order, cur, mt);
            self.state[pfn as usize] = alloc_state(order, start_mt);
            return Some(pfn);
        }
        None
    }

    /// Set the type of every pageblock overlapping `[pfn, pfn + 2^order)`; returns how many changed.
    pub(super) fn change_pageblock_range(&mut self, pfn: u32, order: u8, mt: u8) -> u64 {
        let pbo = self.pageblock_order;
        let first = pfn >> pbo;
        let last = (pfn + (1u32 << order) - 1) >> pbo;
        let mut changed = 0;
        for pb in first..=last {
            let t = &mut self.pb_type[pb as usize];
            if *t != mt {
                *t = mt;
                changed += 1;
            }
        }
        changed
    }

    /// Free frames and frames allocated as Movable in the pageblock starting at `start`.
    pub(super) fn count_pageblock(&self, start: u32) -> (u64, u64) {
        let end = self.pageblock_end(start);
        let (mut free, mut movable) = (0u64, 0u64);
        let mut pfn = start;
        while pfn < end {
            let s = self.state[pfn as usize];
            if s == TAIL {
                pfn += 1;
                continue;
            }
            let size = 1u64 << (s & ORDER_MASK);
            if s & ALLOC_BIT == 0 {
                free += size;
            } else if state_mt(s) == MOVABLE {
                movable += size;
            }
            pfn += size as u32;
        }
        (free, movable)
    }

    /// `__move_freepages_block`: move every free block starting in `[start, end)` to `mt`'s list
    /// tails. Returns the number of frames moved.
    pub(super) fn move_freepages(&mut self, start: u32, end: u32, mt: u8) -> u64 {
        let mut moved = 0;
        let mut pfn = start;
        while pfn < end {
            let s = self.state[pfn as usize];
            if s == TAIL {
                pfn += 1;
                continue;
            }
            let o = s & ORDER_MASK;
            if s & ALLOC_BIT == 0 {
                let old = state_mt(s);
                if old != mt {
                    self.del_free(pfn, o, old);
                    self.add_free(pfn, o, mt, true);
                }
                moved += 1u64 << o;
            }
            pfn += 1 << o;
        }
        moved
    }
}
