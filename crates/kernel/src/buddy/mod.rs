//! Physical-memory buddy allocator (Linux `mm/page_alloc.c`, one zone) with migrate types,
//! pageblocks, fallback stealing and compaction (`mm/compaction.c`), plus the fragmentation indices
//! of `mm/vmstat.c`.
//!
//! Hand-written: no crate models Linux's buddy allocator with migrate types, pageblock stealing
//! and compaction scanners, and the simulator needs exactly those dynamics to make fragmentation
//! (and the ION-style order-8/4/0 fallbacks of higher layers) real.
//!
//! # What is modelled
//! - `nr_pages` 4 KiB frames, orders `0..=MAX_ORDER` (10, 4 MiB), one free list per
//!   (order, migrate type). Lists are **intrusive doubly linked lists over PFNs** (dense, interleaved
//!   `next`/`prev` arrays with one sentinel node per list, so every list operation is O(1) and
//!   branch-free), and one state byte per frame says "head of a free block of order k on list t",
//!   "head of an allocated block of order k requested as type t" or "inside a block". No per-block
//!   heap allocation; 12 GB (3.1 M frames) costs ~28 MB of host memory.
//! - Pageblocks of `1 << pageblock_order` frames, each with a migrate type. At boot every pageblock
//!   is Movable and all memory is free, released (like `memblock_free_all`) as the maximal aligned
//!   blocks of `[0, nr_pages)`, appended to the list tails (`FPI_TO_TAIL`), so early allocations
//!   come from low addresses.
//! - [`BuddyAllocator::alloc`] = `__rmqueue`: `__rmqueue_smallest` on the requested type (smallest
//!   sufficient order, the upper halves go back on the head of that type's lists, `expand()`); if
//!   that fails, `__rmqueue_fallback` (Linux 6.10 era): search the fallback types from the largest
//!   order down; a Movable request that cannot claim a whole pageblock takes the *smallest*
//!   suitable fallback block instead (`find_smallest`). `steal_suitable_fallback`: a block of
//!   order >= pageblock_order has all its pageblocks retyped (`change_pageblock_range`); otherwise,
//!   if stealing whole blocks is allowed (`can_steal_fallback`: order >= pageblock_order / 2, or
//!   an Unmovable/Reclaimable request) and the pageblock has at least half of its frames free or
//!   "alike" (`free + alike >= pageblock_nr_pages / 2`, where alike = frames allocated as Movable for
//!   a Movable request, or frames allocated as non-Movable when the block was Movable), all free
//!   blocks of the pageblock move to the requested type's lists and the pageblock changes type;
//!   otherwise only that block is taken and its remainder stays on the pageblock type's lists.
//!   HighAtomic and Cma have no fallbacks and are never used by other types' fallbacks.
//!   Kernels before 4.0 ([`BuddyAllocator::set_legacy_fallback`], chosen from the device's
//!   `kernel_release`) take the largest fallback block for every type and claim a pageblock only
//!   from a block of at least half a pageblock (or for a Reclaimable request) with at least half
//!   of it free: small unmovable fallbacks pollute movable pageblocks without claiming them.
//! - [`BuddyAllocator::free`] = `__free_one_page`: coalesce while the buddy (`pfn ^ (1 << order)`)
//!   is the head of a free block of the same order. The block goes on the list of the migrate type
//!   of its pageblock (read at free time, as Linux). Blocks larger than a pageblock are freed one
//!   pageblock at a time (6.10 `split_large_buddy`), each with its own pageblock's type. Merging a
//!   buddy of order >= pageblock_order (i.e. another pageblock) is refused when the types differ
//!   and either is HighAtomic or Cma (`migratetype_is_mergeable`); when both are mergeable but
//!   differ, the buddy's pageblocks take the freed block's type (6.10 "match buddy type"). The
//!   block is added to the list tail when its parent's buddy is free (`buddy_merge_likely`),
//!   otherwise to the head.
//! - Consequently every free block sits on the list of the type of all the pageblocks it spans;
//!   [`BuddyAllocator::check_invariants`] verifies it.
//! - [`BuddyAllocator::alloc_exact`]: take a given aligned range if it lies in a free block, split
//!   off the rest (like `__isolate_free_page` + `split_page`, or `alloc_contig_range` for one block).
//! - [`BuddyAllocator::compact`] = `compact_zone`, simplified: a migrate scanner walks Movable
//!   pageblocks upward from the cached migrate pfn, isolating up to `COMPACT_CLUSTER_MAX` (32)
//!   allocated order-0 frames that the [`FrameMover`] calls movable; a free scanner walks Movable
//!   pageblocks downward from the cached free pfn (only pageblocks above the migrate scanner's,
//!   skipping free blocks >= pageblock_order as `suitable_migration_target`), isolating free
//!   blocks split to order-0 targets. Each migration calls [`FrameMover::moved`] and frees the old
//!   frame. It stops when `compact_finished` holds (a free block >= the target order on the
//!   request type's list, on Cma for Movable, or on a fallback list it could steal from), when the
//!   scanners meet (cached positions then reset, as the kernel does on its next run), or after
//!   `max_migrate` migrations. Unused targets are freed back and the cached free pfn moves back up
//!   to them (as `release_freepages`).
//! - [`unusable_index`] (ISMM'15 Eq. 1 = `unusable_free_index`) and [`extfrag_index`]
//!   (`__fragmentation_index`).
//!
//! # Simplified vs Linux
//! - One zone, no NUMA nodes, no per-cpu page lists (every order-0 alloc/free hits the buddy
//!   lists), no page shuffling, no guard pages, no MIGRATE_ISOLATE.
//! - No watermarks, `ALLOC_NOFRAGMENT`, watermark boosting or highatomic reservation policy here:
//!   the caller checks watermarks and may call [`BuddyAllocator::set_pageblock_type`] to reserve a
//!   HighAtomic/Cma pageblock. Movable allocations never use Cma (no `ALLOC_CMA` balancing).
//! - "Movable frames" for the steal heuristics are frames allocated with [`MigrateType::Movable`]
//!   (Linux counts PageLRU / `__PageMovable` pages).
//! - Compaction: one mode (like async compaction of Movable pageblocks), pageblock skip bits
//!   only when asked ([`BuddyAllocator::set_skip_hints`]), no deferral or `compaction_suitable`
//!   watermark check here (the kernel's `compaction.rs` has them), targets are isolated lazily from one
//!   pageblock at a time, and compaction never fails a migration except for lack of targets.
//!   `pages_scanned` counts block heads visited by both scanners.

use crate::types::{MigrateType, Pfn, MAX_ORDER, NIL, NR_ORDERS};
use serde::Serialize;

mod check;
mod compact;
mod fallback;
pub use compact::{CompactOutcome, FrameMover};

const NR_MT: usize = MigrateType::COUNT;
const NR_LISTS: usize = NR_ORDERS * NR_MT;

/// State byte of a frame inside a block (not its head).
const TAIL: u8 = 0xFF;
/// Set in the state byte of an allocated block's head; clear for a free block's head.
const ALLOC_BIT: u8 = 0x80;
const ORDER_MASK: u8 = 0x0F;
const MT_SHIFT: u32 = 4;
const MT_MASK: u8 = 0x07;

/// `COMPACT_CLUSTER_MAX` (= `SWAP_CLUSTER_MAX`): frames isolated per migration batch.
const COMPACT_CLUSTER_MAX: usize = 32;

const MOVABLE: u8 = MigrateType::Movable as u8;
const CMA: u8 = MigrateType::Cma as u8;

#[inline]
fn free_state(order: u8, mt: u8) -> u8 {
    (mt << MT_SHIFT) | order
}

#[inline]
fn alloc_state(order: u8, mt: u8) -> u8 {
    ALLOC_BIT | (mt << MT_SHIFT) | order
}

#[inline]
fn state_mt(s: u8) -> u8 {
    (s >> MT_SHIFT) & MT_MASK
}

#[inline]
fn mt_from_u8(m: u8) -> MigrateType {
    MigrateType::ALL[m as usize]
}

/// `migratetype_is_mergeable`: Unmovable, Movable, Reclaimable (MIGRATE_PCPTYPES).
#[inline]
fn mergeable(mt: u8) -> bool {
    mt <= MigrateType::Reclaimable as u8
}

/// Cumulative counters (the buddy-related part of `/proc/vmstat`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct BuddyStats {
    /// Successful [`BuddyAllocator::alloc`] and [`BuddyAllocator::alloc_exact`] calls.
    pub allocs: u64,
    /// [`BuddyAllocator::alloc`] calls that found no block.
    pub alloc_failures: u64,
    /// [`BuddyAllocator::free`] calls.
    pub frees: u64,
    /// Allocations served from a fallback migrate type (`mm_page_alloc_extfrag` events).
    pub fallback_steals: u64,
    /// Steals that claimed whole pageblock(s) for the requested type.
    pub fallback_claims: u64,
    /// Pageblocks whose type was changed by stealing.
    pub pageblock_type_changes: u64,
    /// Pageblocks whose type was changed because a free block merged across pageblocks.
    pub merge_retypes: u64,
    /// Compaction calls, and how they ended.
    pub compact_runs: u64,
    pub compact_success: u64,
    pub compact_fail: u64,
    /// `compact_migrate_scanned`, `compact_free_scanned`, pages migrated by compaction.
    pub compact_migrate_scanned: u64,
    pub compact_free_scanned: u64,
    pub compact_migrated: u64,
}

/// Buddy allocator over frames `[0, nr_pages)` of a single zone. See the module docs.
#[derive(Clone)]
pub struct BuddyAllocator {
    nr_pages: u32,
    pageblock_order: u8,
    /// Per frame: `TAIL`, a free head `(mt << 4) | order`, or an allocated head `0x80 | (mt << 4) | order`.
    state: Vec<u8>,
    /// Intrusive list links (next and prev interleaved: one cache line per list operation);
    /// entries `nr_pages + list_id` are the list sentinels.
    links: Vec<Link>,
    nr_free: [[u64; NR_MT]; NR_ORDERS],
    /// Bit `o` of `nonempty[mt]` is set iff list (o, mt) is non-empty.
    nonempty: [u16; NR_MT],
    free_pages: u64,
    /// Migrate type of each pageblock (as `u8`).
    pb_type: Vec<u8>,
    stats: BuddyStats,
    /// `compact_cached_migrate_pfn` / `compact_cached_free_pfn` (pageblock starts).
    compact_migrate_pfn: u32,
    compact_free_pfn: u32,
    /// Scratch vectors reused by compaction.
    compact_targets: Vec<Pfn>,
    compact_cands: Vec<Pfn>,
    /// Fallback stealing of kernels before 4.0 ([`Self::set_legacy_fallback`]).
    legacy_fallback: bool,
    /// Compaction's pageblock skip hints (Linux 3.7+, `compact.rs`): on, the bit per pageblock
    /// (`PB_migrate_skip`), and whether kswapd should clear them when it next sleeps
    /// (`compact_blockskip_flush`).
    skip_hints: bool,
    pb_skip: Vec<bool>,
    blockskip_flush: bool,
}

impl std::fmt::Debug for BuddyAllocator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BuddyAllocator")
            .field("nr_pages", &self.nr_pages)
            .field("pageblock_order", &self.pageblock_order)
            .field("free_pages", &self.free_pages)
            .field("free_block_counts", &self.free_block_counts())
            .field("stats", &self.stats)
            .finish()
    }
}

/// Links of one intrusive list node.
#[derive(Clone, Copy)]
struct Link {
    next: u32,
    prev: u32,
}

#[inline]
fn list_id(order: u8, mt: u8) -> u32 {
    order as u32 * NR_MT as u32 + mt as u32
}

impl BuddyAllocator {
    /// A zone of `nr_pages` free frames (any count >= 1), all pageblocks Movable.
    /// `pageblock_order` is 9 (with hugetlb) or 10 (Android GKI); any value in `1..=MAX_ORDER`.
    pub fn new(nr_pages: u32, pageblock_order: u8) -> Self {
        assert!(nr_pages >= 1, "empty zone");
        assert!(
            nr_pages < u32::MAX - NR_LISTS as u32,
            "too many frames for u32 pfns"
        );
        assert!(
            (1..=MAX_ORDER).contains(&pageblock_order),
            "pageblock_order must be in 1..={MAX_ORDER}"
        );
        let n = nr_pages as usize;
        let mut links = vec![Link { next: NIL, prev: NIL }; n + NR_LISTS];
        for id in 0..NR_LISTS as u32 {
            links[(nr_pages + id) as usize] = Link {
                next: nr_pages + id,
                prev: nr_pages + id,
            };
        }
        let nr_pb = ((nr_pages as u64 + (1u64 << pageblock_order) - 1) >> pageblock_order) as usize;
        let mut a = BuddyAllocator {
            nr_pages,
            pageblock_order,
            state: vec![TAIL; n],
            links,
            nr_free: [[0; NR_MT]; NR_ORDERS],
            nonempty: [0; NR_MT],
            free_pages: 0,
            pb_type: vec![MOVABLE; nr_pb],
            stats: BuddyStats::default(),
            compact_migrate_pfn: 0,
            compact_free_pfn: 0,
            compact_targets: Vec::new(),
            compact_cands: Vec::new(),
            legacy_fallback: false,
            skip_hints: false,
            pb_skip: vec![false; nr_pb],
            blockskip_flush: false,
        };
        a.compact_free_pfn = a.last_pageblock_start();
        for (pfn, order) in aligned_decomposition(0, nr_pages) {
            a.add_free(pfn, order, MOVABLE, true);
        }
        a
    }

    // ----------------------------------------------------------------------------------------
    // Queries

    pub fn nr_pages(&self) -> u32 {
        self.nr_pages
    }

    pub fn pageblock_order(&self) -> u8 {
        self.pageblock_order
    }

    pub fn nr_pageblocks(&self) -> usize {
        self.pb_type.len()
    }

    pub fn nr_free_pages(&self) -> u64 {
        self.free_pages
    }

    /// Free blocks of `order`, all migrate types (`/proc/buddyinfo` column).
    pub fn nr_free_blocks(&self, order: u8) -> u64 {
        self.nr_free[order as usize].iter().sum()
    }

    /// Free blocks of `order` on `mt`'s list (`/proc/pagetypeinfo` cell).
    pub fn nr_free_blocks_typed(&self, order: u8, mt: MigrateType) -> u64 {
        self.nr_free[order as usize][mt as usize]
    }

    /// Free blocks per order, all types (input of [`unusable_index`] / [`extfrag_index`]).
    pub fn free_block_counts(&self) -> [u64; NR_ORDERS] {
        let mut c = [0u64; NR_ORDERS];
        for (o, row) in self.nr_free.iter().enumerate() {
            c[o] = row.iter().sum();
        }
        c
    }

    /// Migrate type of the pageblock containing `pfn`.
    pub fn pageblock_type(&self, pfn: Pfn) -> MigrateType {
        assert!(pfn < self.nr_pages);
        mt_from_u8(self.pb_type[(pfn >> self.pageblock_order) as usize])
    }

    /// Number of pageblocks of each migrate type (indexed by `MigrateType as usize`).
    pub fn pageblock_type_counts(&self) -> [u64; NR_MT] {
        let mut c = [0u64; NR_MT];
        for &t in &self.pb_type {
            c[t as usize] += 1;
        }
        c
    }

    /// Whether frame `pfn` lies inside a free block.
    pub fn is_free(&self, pfn: Pfn) -> bool {
        let (_, s) = self.block_containing(pfn);
        s & ALLOC_BIT == 0
    }

    /// If `pfn` is the first frame of an allocated block: its order and the type it was requested as.
    pub fn allocation_at(&self, pfn: Pfn) -> Option<(u8, MigrateType)> {
        let s = *self.state.get(pfn as usize)?;
        if s != TAIL && s & ALLOC_BIT != 0 {
            Some((s & ORDER_MASK, mt_from_u8(state_mt(s))))
        } else {
            None
        }
    }

    /// Largest order with a free block of any type.
    pub fn largest_free_order(&self) -> Option<u8> {
        let m = self.nonempty.iter().fold(0u16, |a, &b| a | b);
        if m == 0 {
            None
        } else {
            Some(15 - m.leading_zeros() as u8)
        }
    }

    /// Steal on fallback as Linux before 4.0 did (3.4 `__rmqueue_fallback`), not as today's
    /// kernels do; see `rmqueue_fallback_legacy`.
    pub fn set_legacy_fallback(&mut self, on: bool) {
        self.legacy_fallback = on;
    }

    pub fn stats(&self) -> &BuddyStats {
        &self.stats
    }

    /// Unusable free space index for `order` of the current free lists (see [`unusable_index`]).
    pub fn unusable_index(&self, order: u8) -> f64 {
        unusable_index(&self.free_block_counts(), order)
    }

    /// Kernel `extfrag_index` for `order` of the current free lists (see [`extfrag_index`]).
    pub fn extfrag_index(&self, order: u8) -> i32 {
        extfrag_index(&self.free_block_counts(), order)
    }

    /// All free blocks `(pfn, order, list type)` in pfn order, found by walking the per-frame
    /// state (independently of the lists and counters).
    pub fn free_blocks(&self) -> impl Iterator<Item = (Pfn, u8, MigrateType)> + '_ {
        let mut pfn = 0u32;
        std::iter::from_fn(move || {
            while pfn < self.nr_pages {
                let s = self.state[pfn as usize];
                if s == TAIL {
                    pfn += 1;
                    continue;
                }
                let here = pfn;
                pfn += 1 << (s & ORDER_MASK);
                if s & ALLOC_BIT == 0 {
                    return Some((here, s & ORDER_MASK, mt_from_u8(state_mt(s))));
                }
            }
            None
        })
    }

    // ----------------------------------------------------------------------------------------
    // Allocation

    /// Allocate a block of `2^order` frames for a `mt` request (`__rmqueue`). Returns its first pfn.
    #[inline]
    pub fn alloc(&mut self, order: u8, mt: MigrateType) -> Option<Pfn> {
        assert!(order <= MAX_ORDER, "order {order} > MAX_ORDER");
        let m = mt as u8;
        let r = match self.rmqueue_smallest(order, m) {
            Some(p) => Some(p),
            None => self.rmqueue_fallback(order, m),
        };
        match r {
            Some(_) => self.stats.allocs += 1,
            None => self.stats.alloc_failures += 1,
        }
        r
    }

    /// Allocate exactly `[pfn, pfn + 2^order)` if it lies inside one free block (`pfn` must be
    /// aligned to `2^order`). The rest of that block goes back on its list split into buddies. The
    /// allocation is recorded as being of the block's migrate type. Returns false if not free.
    pub fn alloc_exact(&mut self, pfn: Pfn, order: u8) -> bool {
        assert!(order <= MAX_ORDER, "order {order} > MAX_ORDER");
        if pfn & ((1u32 << order) - 1) != 0 || pfn as u64 + (1u64 << order) > self.nr_pages as u64 {
            return false;
        }
        let (mut head, s) = self.block_containing(pfn);
        if s & ALLOC_BIT != 0 {
            return false;
        }
        let mut j = s & ORDER_MASK;
        if j < order {
            return false;
        }
        let mt = state_mt(s);
        self.del_free(head, j, mt);
        while j > order {
            j -= 1;
            let half = 1u32 << j;
            if pfn >= head + half {
                self.add_free(head, j, mt, false);
                head += half;
            } else {
                self.add_free(head + half, j, mt, false);
            }
        }
        debug_assert_eq!(head, pfn);
        self.state[pfn as usize] = alloc_state(order, mt);
        self.stats.allocs += 1;
        true
    }

    /// Free the block `[pfn, pfn + 2^order)` previously returned by [`Self::alloc`] /
    /// [`Self::alloc_exact`] with the same order. Panics on a double free or wrong order.
    #[inline]
    pub fn free(&mut self, pfn: Pfn, order: u8) {
        let s = self.state.get(pfn as usize).copied().unwrap_or(TAIL);
        assert!(
            s & (ALLOC_BIT | ORDER_MASK) == ALLOC_BIT | order,
            "free({pfn}, {order}): not an allocated block of that order (state {s:#x})"
        );
        self.stats.frees += 1;
        self.free_inner(pfn, order);
    }

    /// Change the migrate type of the pageblock containing `pfn` and move its free blocks to the
    /// new type's lists (`move_freepages_block` / `set_pageblock_migratetype`), e.g. to reserve a
    /// HighAtomic or Cma pageblock. A free block larger than a pageblock that contains it is split
    /// first so that only this pageblock changes.
    pub fn set_pageblock_type(&mut self, pfn: Pfn, mt: MigrateType) {
        assert!(pfn < self.nr_pages);
        let pbo = self.pageblock_order;
        let pb = (pfn >> pbo) as usize;
        let new = mt as u8;
        if self.pb_type[pb] == new {
            return;
        }
        let start = (pb as u32) << pbo;
        let (mut head, s) = self.block_containing(start);
        if s & ALLOC_BIT == 0 && (s & ORDER_MASK) > pbo {
            let mut j = s & ORDER_MASK;
            let old = state_mt(s);
            self.del_free(head, j, old);
            while j > pbo {
                j -= 1;
                let half = 1u32 << j;
                if start >= head + half {
                    self.add_free(head, j, old, false);
                    head += half;
                } else {
                    self.add_free(head + half, j, old, false);
                }
            }
            self.add_free(start, pbo, old, false);
        }
        self.pb_type[pb] = new;
        // A free block starting here of order > pbo is impossible now; blocks inside move.
        let end = self.pageblock_end(start);
        self.move_freepages(start, end, new);
        // A wholly free pageblock may now have a free buddy of the same type: merge them.
        let s = self.state[start as usize];
        if s & (ALLOC_BIT | ORDER_MASK) == pbo {
            self.del_free(start, pbo, new);
            self.free_one(start, pbo, new, false);
        }
    }

    // ----------------------------------------------------------------------------------------
    // Internals

    #[inline]
    fn sentinel(&self, order: u8, mt: u8) -> u32 {
        self.nr_pages + list_id(order, mt)
    }

    #[inline]
    fn last_pageblock_start(&self) -> u32 {
        ((self.nr_pages - 1) >> self.pageblock_order) << self.pageblock_order
    }

    /// End (exclusive, clamped to the zone) of the pageblock containing `pfn`.
    #[inline]
    fn pageblock_end(&self, pfn: u32) -> u32 {
        let e = ((pfn >> self.pageblock_order) as u64 + 1) << self.pageblock_order;
        e.min(self.nr_pages as u64) as u32
    }

    /// Head and state byte of the block (free or allocated) containing `pfn`: the first head met
    /// when aligning `pfn` down to 1, 2, 4, ... frames.
    #[inline]
    fn block_containing(&self, pfn: Pfn) -> (u32, u8) {
        assert!(pfn < self.nr_pages, "pfn {pfn} out of range");
        for k in 0..=MAX_ORDER {
            let h = pfn & !((1u32 << k) - 1);
            let s = self.state[h as usize];
            if s != TAIL {
                return (h, s);
            }
        }
        unreachable!("pfn {pfn} not covered by any block");
    }

    /// Put a free block on list (order, mt) and mark its head.
    #[inline]
    fn add_free(&mut self, pfn: u32, order: u8, mt: u8, to_tail: bool) {
        let s = self.sentinel(order, mt);
        let (p, n) = if to_tail {
            (self.links[s as usize].prev, s)
        } else {
            (s, self.links[s as usize].next)
        };
        self.links[pfn as usize].next = n;
        self.links[pfn as usize].prev = p;
        self.links[p as usize].next = pfn;
        self.links[n as usize].prev = pfn;
        self.state[pfn as usize] = free_state(order, mt);
        self.nr_free[order as usize][mt as usize] += 1;
        self.nonempty[mt as usize] |= 1 << order;
        self.free_pages += 1u64 << order;
    }

    /// Take a free block off its list (the caller rewrites its state byte).
    #[inline]
    fn del_free(&mut self, pfn: u32, order: u8, mt: u8) {
        let n = self.links[pfn as usize].next;
        let p = self.links[pfn as usize].prev;
        self.links[p as usize].next = n;
        self.links[n as usize].prev = p;
        let c = &mut self.nr_free[order as usize][mt as usize];
        *c -= 1;
        if *c == 0 {
            self.nonempty[mt as usize] &= !(1 << order);
        }
        self.free_pages -= 1u64 << order;
    }

    /// `expand()`: the upper halves of `[pfn, pfn + 2^high)` down to order `low` go on `mt`'s lists.
    #[inline]
    fn expand(&mut self, pfn: u32, low: u8, mut high: u8, mt: u8) {
        while high > low {
            high -= 1;
            self.add_free(pfn + (1 << high), high, mt, false);
        }
    }

    /// `__rmqueue_smallest`.
    #[inline]
    fn rmqueue_smallest(&mut self, order: u8, mt: u8) -> Option<u32> {
        let mask = self.nonempty[mt as usize] & (u16::MAX << order);
        if mask == 0 {
            return None;
        }
        let cur = mask.trailing_zeros() as u8;
        let pfn = self.links[self.sentinel(cur, mt) as usize].next;
        self.del_free(pfn, cur, mt);
        self.expand(pfn, order, cur, mt);
        self.state[pfn as usize] = alloc_state(order, mt);
        Some(pfn)
    }

    /// Free without the sanity check and counter (also used by compaction).
    #[inline]
    fn free_inner(&mut self, pfn: u32, order: u8) {
        let pbo = self.pageblock_order;
        self.state[pfn as usize] = TAIL;
        if order > pbo {
            // split_large_buddy: one pageblock at a time, each with its own type.
            let end = pfn + (1u32 << order);
            let mut p = pfn;
            while p < end {
                let mt = self.pb_type[(p >> pbo) as usize];
                self.free_one(p, pbo, mt, true);
                p += 1 << pbo;
            }
        } else {
            let mt = self.pb_type[(pfn >> pbo) as usize];
            self.free_one(pfn, order, mt, true);
        }
    }

    /// Hint the CPU to load what freeing frame `pfn` reads first: its state byte (its order-0
    /// buddy's is in the same line) and its list links. No effect on results; any `pfn` is
    /// allowed (a prefetch never faults).
    #[inline(always)]
    pub fn prefetch_frame(&self, pfn: u32) {
        engine::prefetch(&self.state, pfn as usize);
        engine::prefetch(&self.links, pfn as usize);
    }

    /// `__free_one_page`. With `retype_buddies` false, buddies of another type are not merged.
    #[inline]
    fn free_one(&mut self, mut pfn: u32, mut order: u8, mt: u8, retype_buddies: bool) {
        let pbo = self.pageblock_order;
        while order < MAX_ORDER {
            let buddy = pfn ^ (1u32 << order);
            if buddy >= self.nr_pages {
                break;
            }
            let bs = self.state[buddy as usize];
            if bs & (ALLOC_BIT | ORDER_MASK) != order {
                break;
            }
            let bmt = state_mt(bs);
            if bmt != mt && order >= pbo {
                if !(retype_buddies && mergeable(mt) && mergeable(bmt)) {
                    break;
                }
                let changed = self.change_pageblock_range(buddy, order, mt);
                self.stats.merge_retypes += changed;
            }
            self.del_free(buddy, order, bmt);
            self.state[buddy as usize] = TAIL;
            self.state[pfn as usize] = TAIL;
            pfn &= buddy;
            order += 1;
        }
        let to_tail = self.buddy_merge_likely(pfn, order);
        self.add_free(pfn, order, mt, to_tail);
    }

    /// `buddy_merge_likely`: the buddy of this block's parent is free, so freeing this block's
    /// buddy would merge twice; queue this block at the tail so it stays free longer.
    #[inline]
    fn buddy_merge_likely(&self, pfn: u32, order: u8) -> bool {
        if order + 1 >= MAX_ORDER {
            return false;
        }
        let combined = pfn & !(1u32 << order);
        let higher_buddy = combined ^ (1u32 << (order + 1));
        higher_buddy < self.nr_pages
            && self.state[higher_buddy as usize] & (ALLOC_BIT | ORDER_MASK) == order + 1
    }
}

/// The maximal aligned blocks `(pfn, order)` covering `[start, end)`, in pfn order (how memory is
/// released at boot, `__free_pages_memory`).
pub fn aligned_decomposition(start: u32, end: u32) -> Vec<(Pfn, u8)> {
    let mut v = Vec::new();
    let mut pfn = start as u64;
    let end = end as u64;
    while pfn < end {
        let mut order = if pfn == 0 {
            MAX_ORDER
        } else {
            (pfn.trailing_zeros() as u8).min(MAX_ORDER)
        };
        while pfn + (1u64 << order) > end {
            order -= 1;
        }
        v.push((pfn as u32, order));
        pfn += 1u64 << order;
    }
    v
}

/// Unusable free space index for `order` (ISMM'15 Eq. 1; the kernel's `unusable_free_index` in
/// `mm/vmstat.c`, which reports it in thousandths): the fraction of free memory that is in blocks
/// too small for an order-`order` allocation,
/// `(free_pages − Σ_{k≥order} nr_free[k]·2^k) / free_pages`, and 1.0 when nothing is free.
pub fn unusable_index(free_blocks_per_order: &[u64; NR_ORDERS], order: u8) -> f64 {
    let mut free_pages = 0u64;
    let mut suitable_pages = 0u64;
    for (k, &n) in free_blocks_per_order.iter().enumerate() {
        free_pages += n << k;
        if k >= order as usize {
            suitable_pages += n << k;
        }
    }
    if free_pages == 0 {
        return 1.0;
    }
    (free_pages - suitable_pages) as f64 / free_pages as f64
}

/// External fragmentation index for `order`, exactly as the kernel's `__fragmentation_index`
/// (`mm/vmstat.c`, shown in `/sys/kernel/debug/extfrag/extfrag_index` divided by 1000):
/// - `-1000` if an order-`order` allocation would succeed (a free block of that order or larger
///   exists);
/// - `0` if there are no free blocks at all;
/// - otherwise `1000 − (1000 + free_pages·1000/2^order) / free_blocks_total` (integer arithmetic),
///   towards 0 = failure due to lack of memory, towards 1000 = failure due to fragmentation.
pub fn extfrag_index(free_blocks_per_order: &[u64; NR_ORDERS], order: u8) -> i32 {
    let requested = 1u64 << order;
    let mut free_blocks_total = 0u64;
    let mut free_pages = 0u64;
    let mut free_blocks_suitable = 0u64;
    for (k, &n) in free_blocks_per_order.iter().enumerate() {
        free_blocks_total += n;
        free_pages += n << k;
        if k >= order as usize {
            free_blocks_suitable += n << (k - order as usize);
        }
    }
    if free_blocks_total == 0 {
        return 0;
    }
    if free_blocks_suitable > 0 {
        return -1000;
    }
    // Signed: a single free block of more than half the request gives a negative index, as
    // Linux's unsigned arithmetic converted to `int` does.
    (1000 - ((1000 + free_pages * 1000 / requested) / free_blocks_total) as i64) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_state_is_maximal_blocks() {
        let a = BuddyAllocator::new(3000, 9);
        a.check_invariants().unwrap();
        let blocks: Vec<(Pfn, u8)> = a.free_blocks().map(|(p, o, _)| (p, o)).collect();
        assert_eq!(
            blocks,
            vec![
                (0, 10),
                (1024, 10),
                (2048, 9),
                (2560, 8),
                (2816, 7),
                (2944, 5),
                (2976, 4),
                (2992, 3)
            ]
        );
        assert_eq!(a.nr_free_pages(), 3000);
        assert_eq!(a.largest_free_order(), Some(10));
    }

    #[test]
    fn alloc_splits_and_free_merges() {
        let mut a = BuddyAllocator::new(1024, 10);
        let p = a.alloc(0, MigrateType::Movable).unwrap();
        assert_eq!(p, 0);
        assert_eq!(a.free_block_counts(), [1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0]);
        a.check_invariants().unwrap();
        a.free(p, 0);
        assert_eq!(a.free_block_counts(), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        a.check_invariants().unwrap();
    }

    #[test]
    fn alloc_exact_middle() {
        let mut a = BuddyAllocator::new(1024, 9);
        assert!(a.alloc_exact(100, 2));
        assert!(!a.alloc_exact(100, 0));
        assert!(!a.alloc_exact(101, 1));
        assert!(!a.is_free(101));
        assert!(a.is_free(104));
        a.check_invariants().unwrap();
        a.free(100, 2);
        a.check_invariants().unwrap();
        assert_eq!(a.nr_free_blocks(10), 1);
    }

    #[test]
    #[should_panic]
    fn double_free_panics() {
        let mut a = BuddyAllocator::new(64, 5);
        let p = a.alloc(1, MigrateType::Movable).unwrap();
        a.free(p, 1);
        a.free(p, 1);
    }
}
