//! Measured causes of the ISMM'15 rows: figures computed from a run's end state that say why a
//! row lands where it does (which memory pins large blocks, where the energy model stops).

use kernel::buddy::BuddyAllocator;
use kernel::types::{MigrateType, NR_ORDERS};

const NR_MT: usize = MigrateType::COUNT;

/// Where unmovable memory sits at one instant: the pageblocks per migrate type, and the
/// order-`order` chunks (naturally aligned `2^order`-page ranges) that hold at least one
/// unmovable or reclaimable allocation, so that neither compaction nor any kill can make them a
/// free order-`order` block.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Census {
    pub pageblocks: [u64; NR_MT],
    pub chunks: u64,
    /// Chunks holding an unmovable (or reclaimable) allocation.
    pub pinned: u64,
    /// Pinned chunks inside movable pageblocks (unmovable pages that fell back into them).
    pub pinned_in_movable: u64,
    /// Chunks that are one free block (or part of a larger one).
    pub free: u64,
}

impl Census {
    pub fn of(buddy: &BuddyAllocator, order: u8) -> Self {
        let n = buddy.nr_pages();
        let chunks = (n >> order) as usize;
        let mut pinned = vec![false; chunks];
        let mut free = vec![false; chunks];
        let span = |pfn: u32, o: u8| {
            let last = ((pfn as u64 + (1u64 << o) - 1) >> order) as usize;
            (pfn >> order) as usize..=last.min(chunks.saturating_sub(1))
        };
        let mut pfn = 0u32;
        while pfn < n {
            // Allocated heads; free frames and tails advance one frame at a time.
            match buddy.allocation_at(pfn) {
                Some((o, mt)) => {
                    if mt != MigrateType::Movable {
                        span(pfn, o).for_each(|c| pinned[c] = true);
                    }
                    pfn += 1 << o;
                }
                None => pfn += 1,
            }
        }
        for (pfn, o, _) in buddy.free_blocks() {
            if o >= order {
                span(pfn, o).for_each(|c| free[c] = true);
            }
        }
        let pb = buddy.pageblock_order();
        let in_movable = |c: usize| {
            let p = (c as u32) << order;
            p < n && buddy.pageblock_type(p) == MigrateType::Movable && pb >= order
        };
        Census {
            pageblocks: buddy.pageblock_type_counts(),
            chunks: chunks as u64,
            pinned: pinned.iter().filter(|&&x| x).count() as u64,
            pinned_in_movable: (0..chunks).filter(|&c| pinned[c] && in_movable(c)).count() as u64,
            free: free.iter().filter(|&&x| x).count() as u64,
        }
    }
}

/// Share of the free pages in `counts` (free blocks per order) that lie in blocks of order >= `from`.
pub(crate) fn share_at_or_above(counts: &[u64; NR_ORDERS], from: usize) -> f64 {
    let pages = |r: std::ops::Range<usize>| r.map(|o| counts[o] << o).sum::<u64>();
    pages(from..NR_ORDERS) as f64 / pages(0..NR_ORDERS).max(1) as f64
}

/// The whole-CPU energy ratio `b/a` if memory management were `mm_share` of `a`'s CPU and
/// changed by `mm_ratio` while the rest stayed the same.
pub(crate) fn diluted_ratio(mm_share: f64, mm_ratio: f64) -> f64 {
    1.0 - mm_share + mm_share * mm_ratio
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn census_finds_pinned_and_free_chunks() {
        // 4 pageblocks of order 4 (16 pages), chunks of order 3 (8 pages): 8 chunks.
        let mut b = BuddyAllocator::new(64, 4);
        let all = b.nr_free_pages();
        assert_eq!(all, 64);
        let c0 = Census::of(&b, 3);
        assert_eq!((c0.chunks, c0.pinned, c0.free), (8, 0, 8));
        // One unmovable page falls back into a movable pageblock, one movable page elsewhere.
        let u = b.alloc(0, MigrateType::Unmovable).unwrap();
        let m = b.alloc(0, MigrateType::Movable).unwrap();
        let c = Census::of(&b, 3);
        assert_eq!(c.chunks, 8);
        assert_eq!(c.pinned, 1, "only the unmovable page's chunk is pinned");
        assert_eq!(c.free, 8 - if u >> 3 == m >> 3 { 1 } else { 2 });
        assert_eq!(c.pageblocks.iter().sum::<u64>(), 4);
        // Freed, nothing is pinned and every chunk is free again.
        b.free(u, 0);
        b.free(m, 0);
        let c = Census::of(&b, 3);
        assert_eq!((c.pinned, c.free), (0, 8));
    }

    #[test]
    fn shares_and_dilution() {
        let mut c = [0u64; NR_ORDERS];
        c[0] = 4; // 4 pages
        c[2] = 3; // 12 pages
        assert!((share_at_or_above(&c, 2) - 0.75).abs() < 1e-12);
        assert_eq!(share_at_or_above(&[0; NR_ORDERS], 2), 0.0);
        assert!((diluted_ratio(0.466, 0.809) - 0.911).abs() < 1e-3);
        assert_eq!(diluted_ratio(0.0, 0.5), 1.0);
        assert_eq!(diluted_ratio(1.0, 0.5), 0.5);
    }
}
