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
//! - Compaction: one mode (like async compaction of Movable pageblocks), no skip bits, no
//!   deferral, no `compaction_suitable` watermark check, targets are isolated lazily from one
//!   pageblock at a time, and compaction never fails a migration except for lack of targets.
//!   `pages_scanned` counts block heads visited by both scanners.

use crate::types::{MigrateType, Pfn, MAX_ORDER, NIL, NR_ORDERS};
use serde::Serialize;

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
            if self.pb_type[(migrate_pfn >> pbo) as usize] != MOVABLE {
                migrate_pfn = block_end;
                continue;
            }
            let want = COMPACT_CLUSTER_MAX.min((max_migrate as u64 - out.pages_migrated) as usize);
            cands.clear();
            let mut pfn = migrate_pfn;
            while pfn < block_end && cands.len() < want {
                let s = self.state[pfn as usize];
                out.pages_scanned += 1;
                self.stats.compact_migrate_scanned += 1;
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

    /// Cached compaction scanner positions `(migrate_pfn, free_pfn)` (pageblock starts).
    pub fn compact_cached_pfns(&self) -> (Pfn, Pfn) {
        (self.compact_migrate_pfn, self.compact_free_pfn)
    }

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

    /// `can_steal_fallback`.
    #[inline]
    fn can_steal_fallback(&self, order: u8, start_mt: u8) -> bool {
        order >= self.pageblock_order / 2
            || start_mt == MigrateType::Unmovable as u8
            || start_mt == MigrateType::Reclaimable as u8
    }

    /// `find_suitable_fallback`: first fallback type of `start_mt` with a free block of `order`,
    /// and whether whole pageblocks may be stolen.
    fn find_suitable_fallback(&self, order: u8, start_mt: u8, only_stealable: bool) -> Option<(u8, bool)> {
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
    fn rmqueue_fallback(&mut self, order: u8, start_mt: u8) -> Option<u32> {
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
    fn rmqueue_fallback_legacy(&mut self, order: u8, start_mt: u8) -> Option<u32> {
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
    fn change_pageblock_range(&mut self, pfn: u32, order: u8, mt: u8) -> u64 {
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
    fn count_pageblock(&self, start: u32) -> (u64, u64) {
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
    fn move_freepages(&mut self, start: u32, end: u32, mt: u8) -> u64 {
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
            let t = self.pb_type[(start >> pbo) as usize];
            let big_free = s0 == TAIL || (s0 & ALLOC_BIT == 0 && s0 & ORDER_MASK >= pbo);
            if (t == MOVABLE || t == CMA) && !big_free {
                let mut pfn = (*free_cursor).max(start);
                while pfn < end && targets.len() < needed {
                    let s = self.state[pfn as usize];
                    out.pages_scanned += 1;
                    self.stats.compact_free_scanned += 1;
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
                if pfn < end {
                    *free_cursor = pfn;
                    return;
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
    (1000 - (1000 + free_pages * 1000 / requested) / free_blocks_total) as i32
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
