//! [`BuddyAllocator::check_invariants`]: everything recomputed from scratch and compared.

use super::*;

impl BuddyAllocator {
    // ----------------------------------------------------------------------------------------
    // Invariants

    /// Recompute everything from scratch and compare: list links (prev/next consistency, no
    /// cycles), every listed block is a free head of the list's order and type, per-list counts
    /// and the non-empty masks, the per-frame state (every frame in exactly one aligned block, in
    /// range), every free head is on a list, free blocks are on the list of the type of each
    /// pageblock they span, free page total, and two free buddies of the same order exist only
    /// across pageblocks of different types.
    pub fn check_invariants(&self) -> Result<(), String> {
        let n = self.nr_pages;
        let mut listed_blocks = 0u64;
        let mut listed_pages = 0u64;
        for o in 0..=MAX_ORDER {
            for mt in 0..NR_MT as u8 {
                let s = n + list_id(o, mt);
                let mut x = s;
                let mut count = 0u64;
                loop {
                    let nx = self.links[x as usize].next;
                    if nx as usize >= self.links.len() {
                        return Err(format!("list ({o},{mt}): next[{x}] = {nx} out of range"));
                    }
                    if self.links[nx as usize].prev != x {
                        return Err(format!("list ({o},{mt}): prev[next[{x}]] != {x}"));
                    }
                    if nx == s {
                        break;
                    }
                    if nx >= n {
                        return Err(format!("list ({o},{mt}): links to another sentinel {nx}"));
                    }
                    let st = self.state[nx as usize];
                    if st != free_state(o, mt) {
                        return Err(format!(
                            "list ({o},{mt}): pfn {nx} has state {st:#x}, expected free head"
                        ));
                    }
                    count += 1;
                    if count > n as u64 {
                        return Err(format!("list ({o},{mt}): cycle"));
                    }
                    x = nx;
                }
                if count != self.nr_free[o as usize][mt as usize] {
                    return Err(format!(
                        "list ({o},{mt}): {count} blocks on list, counter says {}",
                        self.nr_free[o as usize][mt as usize]
                    ));
                }
                if (count > 0) != (self.nonempty[mt as usize] >> o & 1 == 1) {
                    return Err(format!("list ({o},{mt}): non-empty mask wrong"));
                }
                listed_blocks += count;
                listed_pages += count << o;
            }
        }
        if listed_pages != self.free_pages {
            return Err(format!(
                "free_pages {} but lists hold {listed_pages}",
                self.free_pages
            ));
        }
        let pbo = self.pageblock_order;
        let mut pfn = 0u32;
        let mut free_heads = 0u64;
        while pfn < n {
            let s = self.state[pfn as usize];
            if s == TAIL {
                return Err(format!("pfn {pfn} is not covered by any block"));
            }
            let o = s & ORDER_MASK;
            let mt = state_mt(s);
            if o > MAX_ORDER || mt as usize >= NR_MT {
                return Err(format!("pfn {pfn}: bad state {s:#x}"));
            }
            let size = 1u32 << o;
            if pfn & (size - 1) != 0 {
                return Err(format!("block at {pfn} of order {o} misaligned"));
            }
            if pfn as u64 + size as u64 > n as u64 {
                return Err(format!("block at {pfn} of order {o} beyond the zone"));
            }
            for t in pfn + 1..pfn + size {
                if self.state[t as usize] != TAIL {
                    return Err(format!("block at {pfn} order {o} overlaps a block head at {t}"));
                }
            }
            if s & ALLOC_BIT == 0 {
                free_heads += 1;
                let pb0 = pfn >> pbo;
                let pb1 = (pfn + size - 1) >> pbo;
                for pb in pb0..=pb1 {
                    if self.pb_type[pb as usize] != mt {
                        return Err(format!(
                            "free block at {pfn} order {o} on list {mt} but pageblock {pb} has type {}",
                            self.pb_type[pb as usize]
                        ));
                    }
                }
                if o < MAX_ORDER {
                    let b = pfn ^ size;
                    if b < n {
                        let bs = self.state[b as usize];
                        if bs != TAIL && bs & ALLOC_BIT == 0 && bs & ORDER_MASK == o {
                            let bmt = state_mt(bs);
                            // Different types only meet here across pageblocks: a merge refused
                            // for HighAtomic/Cma, or a pageblock retyped by `set_pageblock_type`.
                            if o < pbo || bmt == mt {
                                return Err(format!("free buddies {pfn} and {b} of order {o} not merged"));
                            }
                        }
                    }
                }
            }
            pfn += size;
        }
        if free_heads != listed_blocks {
            return Err(format!(
                "{free_heads} free heads in the frame map, {listed_blocks} on lists"
            ));
        }
        Ok(())
    }
}
