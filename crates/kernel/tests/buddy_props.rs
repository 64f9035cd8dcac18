//! Property and scenario tests of the buddy allocator (`hotlaunch_kernel::buddy`).

use hotlaunch_kernel::buddy::{
    aligned_decomposition, extfrag_index, unusable_index, BuddyAllocator, CompactOutcome, FrameMover,
};
use hotlaunch_kernel::types::{MigrateType, Pfn, MAX_ORDER, NIL, NR_ORDERS};
use proptest::prelude::*;
use std::collections::BTreeMap;

const MTS: [MigrateType; 3] = [
    MigrateType::Unmovable,
    MigrateType::Movable,
    MigrateType::Reclaimable,
];

/// Test-side model of what is allocated.
struct Model {
    /// pfn -> order of every live allocation.
    live: BTreeMap<Pfn, u8>,
    /// Per frame: allocated by the test?
    owned: Vec<bool>,
}

impl Model {
    fn new(n: u32) -> Self {
        Model {
            live: BTreeMap::new(),
            owned: vec![false; n as usize],
        }
    }

    fn take(&mut self, a: &BuddyAllocator, pfn: Pfn, order: u8) -> Result<(), TestCaseError> {
        let size = 1u32 << order;
        prop_assert_eq!(pfn % size, 0, "block {} of order {} misaligned", pfn, order);
        prop_assert!(
            pfn + size <= a.nr_pages(),
            "block {} of order {} beyond the zone",
            pfn,
            order
        );
        for f in pfn..pfn + size {
            prop_assert!(!self.owned[f as usize], "frame {} allocated twice", f);
            prop_assert!(!a.is_free(f), "allocated frame {} is inside a free block", f);
            self.owned[f as usize] = true;
        }
        self.live.insert(pfn, order);
        Ok(())
    }

    fn release(&mut self, pfn: Pfn) -> u8 {
        let order = self.live.remove(&pfn).unwrap();
        for f in pfn..pfn + (1 << order) {
            self.owned[f as usize] = false;
        }
        order
    }

    fn allocated_pages(&self) -> u64 {
        self.live.values().map(|&o| 1u64 << o).sum()
    }
}

/// Full cross-check of the allocator against the model and a recount of its free blocks.
fn check_all(a: &BuddyAllocator, m: &Model) -> Result<(), TestCaseError> {
    if let Err(e) = a.check_invariants() {
        return Err(TestCaseError::fail(e));
    }
    let n = a.nr_pages();
    prop_assert_eq!(a.nr_free_pages(), n as u64 - m.allocated_pages());
    // Every frame is either owned by the test or inside a free block, never both.
    for f in 0..n {
        prop_assert_eq!(a.is_free(f), !m.owned[f as usize], "frame {}", f);
    }
    // Recount free blocks per (order, type) from the frame walk and compare with the counters.
    let mut recount = [[0u64; MigrateType::COUNT]; NR_ORDERS];
    let mut covered = 0u64;
    let mut last_end = 0u32;
    for (pfn, order, mt) in a.free_blocks() {
        prop_assert!(pfn >= last_end, "free blocks overlap at {}", pfn);
        prop_assert_eq!(pfn % (1 << order), 0);
        last_end = pfn + (1 << order);
        prop_assert_eq!(a.pageblock_type(pfn), mt, "free block {} on the wrong list", pfn);
        recount[order as usize][mt as usize] += 1;
        covered += 1 << order;
    }
    prop_assert_eq!(covered, a.nr_free_pages());
    let counts = a.free_block_counts();
    for o in 0..=MAX_ORDER {
        let mut sum = 0;
        for mt in MigrateType::ALL {
            prop_assert_eq!(
                a.nr_free_blocks_typed(o, mt),
                recount[o as usize][mt as usize],
                "order {} type {:?}",
                o,
                mt
            );
            sum += recount[o as usize][mt as usize];
        }
        prop_assert_eq!(a.nr_free_blocks(o), sum);
        prop_assert_eq!(counts[o as usize], sum);
    }
    let largest = (0..=MAX_ORDER).rev().find(|&o| counts[o as usize] > 0);
    prop_assert_eq!(a.largest_free_order(), largest);
    Ok(())
}

#[derive(Debug, Clone)]
enum Op {
    Alloc(u8, usize),
    Free(usize),
    AllocExact(u32, u8),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        // Mostly small orders, as real workloads; sometimes large ones.
        5 => (prop_oneof![6 => 0u8..=2, 2 => 3u8..=6, 1 => 7u8..=MAX_ORDER], 0usize..3)
            .prop_map(|(o, t)| Op::Alloc(o, t)),
        4 => any::<usize>().prop_map(Op::Free),
        1 => (any::<u32>(), 0u8..=4).prop_map(|(p, o)| Op::AllocExact(p, o)),
    ]
}

fn run_ops(n: u32, pbo: u8, legacy: bool, ops: &[Op]) -> Result<(BuddyAllocator, Model), TestCaseError> {
    let mut a = BuddyAllocator::new(n, pbo);
    a.set_legacy_fallback(legacy);
    let mut m = Model::new(n);
    check_all(&a, &m)?;
    for op in ops {
        match *op {
            Op::Alloc(order, t) => {
                let before = a.nr_free_pages();
                match a.alloc(order, MTS[t]) {
                    Some(p) => m.take(&a, p, order)?,
                    None => {
                        // Fails only if no free block of that order or larger exists at all
                        // (all three types fall back to each other).
                        prop_assert!(!matches!(a.largest_free_order(), Some(l) if l >= order));
                        prop_assert_eq!(a.nr_free_pages(), before);
                    }
                }
            }
            Op::Free(i) => {
                if !m.live.is_empty() {
                    let pfn = *m.live.keys().nth(i % m.live.len()).unwrap();
                    let order = m.release(pfn);
                    a.free(pfn, order);
                }
            }
            Op::AllocExact(p, order) => {
                let pfn = (p % n) & !((1u32 << order) - 1);
                let all_free = pfn + (1 << order) <= n && (pfn..pfn + (1 << order)).all(|f| a.is_free(f));
                // Free buddies below pageblock order are always merged, so a fully free aligned
                // range of order <= 4 lies inside one free block: alloc_exact must take it.
                let got = a.alloc_exact(pfn, order);
                prop_assert_eq!(got, all_free, "alloc_exact({}, {})", pfn, order);
                if got {
                    m.take(&a, pfn, order)?;
                }
            }
        }
        check_all(&a, &m)?;
    }
    Ok((a, m))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// (1)-(4): random alloc/free/alloc_exact sequences keep allocations disjoint and outside free
    /// blocks, the invariants and recounts hold after every step, and freeing everything restores
    /// the maximal aligned blocks of [0, nr_pages).
    #[test]
    fn random_ops_keep_invariants(
        n in prop_oneof![1u32..=70, 1000u32..=5000],
        pbo in prop_oneof![Just(9u8), Just(10u8)],
        ops in prop::collection::vec(op_strategy(), 1..160),
        legacy in any::<bool>(),
    ) {
        let (mut a, mut m) = run_ops(n, pbo, legacy, &ops)?;
        let pfns: Vec<Pfn> = m.live.keys().copied().collect();
        for pfn in pfns {
            let order = m.release(pfn);
            a.free(pfn, order);
        }
        check_all(&a, &m)?;
        prop_assert_eq!(a.nr_free_pages(), n as u64);
        let blocks: Vec<(Pfn, u8)> = a.free_blocks().map(|(p, o, _)| (p, o)).collect();
        prop_assert_eq!(blocks, aligned_decomposition(0, n));
    }

    /// Same with heavy pressure on a small zone (allocations fail, fallbacks happen constantly).
    #[test]
    fn random_ops_under_pressure(
        n in 1500u32..=2100,
        pbo in prop_oneof![Just(9u8), Just(10u8)],
        ops in prop::collection::vec(
            prop_oneof![
                6 => (0u8..=3, 0usize..3).prop_map(|(o, t)| Op::Alloc(o, t)),
                2 => any::<usize>().prop_map(Op::Free),
            ],
            400..700,
        ),
        legacy in any::<bool>(),
    ) {
        let (a, _m) = run_ops(n, pbo, legacy, &ops)?;
        let st = a.stats();
        prop_assert_eq!(st.allocs + st.alloc_failures, ops.iter().filter(|o| matches!(o, Op::Alloc(..))).count() as u64);
    }
}

/// (1) negative control: the checker really catches an overlap.
#[test]
fn checker_catches_double_allocation() {
    let a = BuddyAllocator::new(64, 9);
    let mut m = Model::new(64);
    // Claim a frame that the allocator considers free: the model check must fail.
    assert!(m.take(&a, 0, 0).is_err());
}

/// (5) unusable index against hand computations.
#[test]
fn unusable_index_by_hand() {
    let mut c = [0u64; NR_ORDERS];
    // No free memory: everything is unusable.
    assert_eq!(unusable_index(&c, 0), 1.0);
    assert_eq!(unusable_index(&c, 5), 1.0);
    // 10 order-0 + 2 order-2 blocks: free = 10 + 8 = 18 pages.
    c[0] = 10;
    c[2] = 2;
    assert_eq!(unusable_index(&c, 0), 0.0);
    assert_eq!(unusable_index(&c, 1), 10.0 / 18.0);
    assert_eq!(unusable_index(&c, 2), 10.0 / 18.0);
    assert_eq!(unusable_index(&c, 3), 1.0);
    // 3 order-0, 1 order-3, 1 order-10: free = 3 + 8 + 1024 = 1035.
    let mut d = [0u64; NR_ORDERS];
    d[0] = 3;
    d[3] = 1;
    d[10] = 1;
    assert_eq!(unusable_index(&d, 1), 3.0 / 1035.0);
    assert_eq!(unusable_index(&d, 4), 11.0 / 1035.0);
    assert_eq!(unusable_index(&d, 10), 11.0 / 1035.0);
    // Only order-1 blocks: usable for orders 0 and 1, nothing for 2.
    let mut e = [0u64; NR_ORDERS];
    e[1] = 7;
    assert_eq!(unusable_index(&e, 1), 0.0);
    assert_eq!(unusable_index(&e, 2), 1.0);

    // The allocator's method agrees with its own counts.
    let mut a = BuddyAllocator::new(2048, 10);
    assert_eq!(a.unusable_index(10), 0.0);
    let p = a.alloc(0, MigrateType::Movable).unwrap();
    assert_eq!(p, 0);
    // Free: orders 0..9 one block each (1023 pages) + one order-10 block.
    assert_eq!(a.unusable_index(10), 1023.0 / 2047.0);
    assert_eq!(a.unusable_index(5), 31.0 / 2047.0);
    assert_eq!(a.unusable_index(0), 0.0);
}

/// extfrag_index against hand computations of mm/vmstat.c `__fragmentation_index`.
#[test]
fn extfrag_index_by_hand() {
    let mut c = [0u64; NR_ORDERS];
    assert_eq!(extfrag_index(&c, 3), 0); // no free blocks
    c[0] = 10;
    c[2] = 2;
    assert_eq!(extfrag_index(&c, 2), -1000); // would succeed
                                             // order 3: requested 8, free_pages 18, blocks 12: 1000 - (1000 + 18000/8)/12 = 1000 - 3250/12
    assert_eq!(extfrag_index(&c, 3), 1000 - 3250 / 12);
    // order 10: 1000 - (1000 + 18000/1024)/12 = 1000 - 1017/12 = 1000 - 84
    assert_eq!(extfrag_index(&c, 10), 916);
    // One free block of 4 pages for an order-3 request: 1000 - (1000 + 500)/1 < 0, negative as
    // the kernel's unsigned arithmetic read as `int` (and not an overflow here).
    let mut one = [0u64; NR_ORDERS];
    one[2] = 1;
    assert_eq!(extfrag_index(&one, 3), -500);
}

/// (6) Unmovable allocations steal from Movable pageblocks and convert them.
#[test]
fn fallback_stealing_converts_pageblocks() {
    for pbo in [9u8, 10] {
        let n = 16 * 1024 + 300;
        let mut a = BuddyAllocator::new(n, pbo);
        let nr_pb = a.nr_pageblocks() as u64;
        assert_eq!(a.pageblock_type_counts()[MigrateType::Movable as usize], nr_pb);
        let pb = 1u32 << pbo;
        let mut got = Vec::new();
        for _ in 0..(3 * pb + 5) {
            got.push(a.alloc(0, MigrateType::Unmovable).unwrap());
        }
        a.check_invariants().unwrap();
        let unmovable_pbs = a.pageblock_type_counts()[MigrateType::Unmovable as usize];
        // Each steal claims a whole pageblock, so 3 pb + 5 frames need exactly 4 pageblocks.
        assert_eq!(unmovable_pbs, 4, "pbo {pbo}");
        assert!(a.stats().fallback_steals >= 1);
        assert_eq!(a.stats().pageblock_type_changes, 4);
        for &p in &got {
            assert_eq!(a.pageblock_type(p), MigrateType::Unmovable);
        }
        // Movable requests now avoid the unmovable pageblocks while Movable memory remains.
        for _ in 0..100 {
            let p = a.alloc(0, MigrateType::Movable).unwrap();
            assert_eq!(a.pageblock_type(p), MigrateType::Movable);
        }
        // Freeing the unmovable pages merges them back; blocks stay Unmovable until stolen back.
        for p in got {
            a.free(p, 0);
        }
        a.check_invariants().unwrap();
        let unmovable_free: u64 = (0..=MAX_ORDER)
            .map(|o| a.nr_free_blocks_typed(o, MigrateType::Unmovable) << o)
            .sum();
        assert_eq!(unmovable_free, 4 << pbo);
        assert_eq!(a.pageblock_type_counts()[MigrateType::Unmovable as usize], 4);
    }
}

/// A small Movable fallback does not claim the pageblock (can_steal_fallback is false for
/// order < pageblock_order / 2), and a large fallback block is claimed with all its pageblocks.
#[test]
fn movable_fallback_small_does_not_claim() {
    let mut a = BuddyAllocator::new(2048, 9);
    // Make everything Unmovable.
    for pb in 0..4 {
        a.set_pageblock_type(pb * 512, MigrateType::Unmovable);
    }
    a.check_invariants().unwrap();
    // Retyped free pageblocks of the same type merge back into order-10 blocks.
    assert_eq!(a.nr_free_blocks_typed(10, MigrateType::Unmovable), 2);
    // Fill all but a few frames with unmovable pages so only small blocks remain.
    let mut held = Vec::new();
    while a.nr_free_pages() > 3 {
        held.push(a.alloc(0, MigrateType::Unmovable).unwrap());
    }
    assert_eq!(a.largest_free_order(), Some(1));
    let before = a.stats().pageblock_type_changes;
    let p = a.alloc(0, MigrateType::Movable).unwrap();
    assert_eq!(a.pageblock_type(p), MigrateType::Unmovable);
    assert_eq!(a.stats().pageblock_type_changes, before);
    assert_eq!(a.stats().fallback_steals, 1);
    // find_smallest: the order-0 block was taken, not the order-1 block.
    assert_eq!(a.largest_free_order(), Some(1));
    a.check_invariants().unwrap();

    // Large fallback: a fresh all-Unmovable zone; a Movable order-0 request takes the largest
    // block (order 10 spans two pageblocks of order 9) and converts both pageblocks.
    let mut b = BuddyAllocator::new(2048, 9);
    for pb in 0..4 {
        b.set_pageblock_type(pb * 512, MigrateType::Unmovable);
    }
    let q = b.alloc(0, MigrateType::Movable).unwrap();
    assert_eq!(b.pageblock_type(q), MigrateType::Movable);
    assert_eq!(b.pageblock_type_counts()[MigrateType::Movable as usize], 2);
    b.check_invariants().unwrap();
}

/// Linux 3.x fallback (`set_legacy_fallback`): an unmovable page taken from a fallback block
/// below half a pageblock leaves the movable pageblock and its free pages alone, even when half
/// of it is free; today's kernels (4.0+) steal and claim that pageblock.
#[test]
fn legacy_fallback_pollutes_without_claiming() {
    for legacy in [false, true] {
        let mut a = BuddyAllocator::new(512, 9);
        a.set_legacy_fallback(legacy);
        let blocks: Vec<Pfn> = (0..64)
            .map(|_| a.alloc(3, MigrateType::Movable).unwrap())
            .collect();
        // Every other order-3 block free: half the pageblock free, largest free block order 3.
        for (i, &b) in blocks.iter().enumerate() {
            if i % 2 == 0 {
                a.free(b, 3);
            }
        }
        assert_eq!(a.largest_free_order(), Some(3));
        let u = a.alloc(0, MigrateType::Unmovable).unwrap();
        a.check_invariants().unwrap();
        assert_eq!(a.stats().fallback_steals, 1);
        let movable_free: u64 = (0..=MAX_ORDER)
            .map(|o| a.nr_free_blocks_typed(o, MigrateType::Movable) << o)
            .sum();
        if legacy {
            assert_eq!(a.pageblock_type(u), MigrateType::Movable, "not claimed");
            assert_eq!(a.stats().fallback_claims, 0);
            assert_eq!(movable_free, 255, "the rest stays on the movable lists");
        } else {
            assert_eq!(a.pageblock_type(u), MigrateType::Unmovable, "claimed");
            assert_eq!(a.stats().fallback_claims, 1);
            assert_eq!(movable_free, 0);
        }
    }
    // A fallback block of at least half a pageblock is stolen in both: a fresh zone's order-10
    // block spans two order-9 pageblocks, both converted.
    let mut b = BuddyAllocator::new(2048, 9);
    b.set_legacy_fallback(true);
    let q = b.alloc(0, MigrateType::Unmovable).unwrap();
    assert_eq!(b.pageblock_type(q), MigrateType::Unmovable);
    assert_eq!(b.pageblock_type_counts()[MigrateType::Unmovable as usize], 2);
    b.check_invariants().unwrap();
}

/// HighAtomic/Cma pageblocks are used only when asked for, and do not merge with others.
#[test]
fn highatomic_and_cma_are_isolated() {
    let mut a = BuddyAllocator::new(4096, 9);
    a.set_pageblock_type(0, MigrateType::HighAtomic);
    a.set_pageblock_type(4095, MigrateType::Cma);
    a.check_invariants().unwrap();
    let mut held = Vec::new();
    for mt in MTS.iter().cycle().take(3000) {
        if let Some(p) = a.alloc(0, *mt) {
            held.push(p);
        }
    }
    while let Some(p) = a.alloc(0, MigrateType::Movable) {
        held.push(p);
    }
    assert_eq!(a.nr_free_pages(), 1024);
    for &p in &held {
        let t = a.pageblock_type(p);
        assert!(t != MigrateType::HighAtomic && t != MigrateType::Cma);
    }
    let h = a.alloc(3, MigrateType::HighAtomic).unwrap();
    assert!(h < 512);
    let c = a.alloc(9, MigrateType::Cma).unwrap();
    assert_eq!(c, 4096 - 512);
    a.free(c, 9);
    a.free(h, 3);
    for p in held {
        a.free(p, 0);
    }
    a.check_invariants().unwrap();
    // The HighAtomic and Cma pageblocks stay separate free blocks.
    assert_eq!(a.nr_free_blocks_typed(9, MigrateType::HighAtomic), 1);
    assert_eq!(a.nr_free_blocks_typed(9, MigrateType::Cma), 1);
    assert_eq!(a.nr_free_pages(), 4096);
}

/// Blocks larger than a pageblock are freed per pageblock with each pageblock's type.
#[test]
fn free_large_block_per_pageblock() {
    let mut a = BuddyAllocator::new(2048, 9);
    let p = a.alloc(10, MigrateType::Movable).unwrap();
    a.set_pageblock_type(p + 512, MigrateType::HighAtomic);
    a.free(p, 10);
    a.check_invariants().unwrap();
    assert_eq!(a.nr_free_blocks_typed(9, MigrateType::HighAtomic), 1);
    assert_eq!(a.nr_free_blocks_typed(9, MigrateType::Movable), 1);
}

/// Test mover: owner id per frame (NIL = no owner).
struct OwnerMap {
    owner: Vec<u32>,
    moves: Vec<(Pfn, Pfn)>,
}

impl FrameMover for OwnerMap {
    fn movable(&self, pfn: Pfn) -> bool {
        self.owner[pfn as usize] != NIL
    }
    fn moved(&mut self, from: Pfn, to: Pfn) {
        assert_ne!(self.owner[from as usize], NIL, "moved an unowned frame {from}");
        assert_eq!(self.owner[to as usize], NIL, "target {to} already owned");
        self.owner[to as usize] = self.owner[from as usize];
        self.owner[from as usize] = NIL;
        self.moves.push((from, to));
    }
}

fn check_owners(a: &BuddyAllocator, om: &OwnerMap, pinned: &[Pfn]) {
    a.check_invariants().unwrap();
    for (pfn, &o) in om.owner.iter().enumerate() {
        if o != NIL {
            assert_eq!(
                a.allocation_at(pfn as Pfn).map(|x| x.0),
                Some(0),
                "owned frame {pfn}"
            );
        }
    }
    for &p in pinned {
        assert!(!a.is_free(p));
        assert_eq!(om.owner[p as usize], NIL);
    }
    let owned = om.owner.iter().filter(|&&o| o != NIL).count() as u64;
    assert_eq!(
        a.nr_free_pages(),
        a.nr_pages() as u64 - owned - pinned.len() as u64
    );
}

/// Fill the zone with movable order-0 pages and free every other one (no free order-1 block).
fn fragmented(n: u32, pbo: u8) -> (BuddyAllocator, OwnerMap) {
    let mut a = BuddyAllocator::new(n, pbo);
    let mut om = OwnerMap {
        owner: vec![NIL; n as usize],
        moves: Vec::new(),
    };
    let mut id = 0;
    while let Some(p) = a.alloc(0, MigrateType::Movable) {
        om.owner[p as usize] = id;
        id += 1;
    }
    for p in (1..n).step_by(2) {
        om.owner[p as usize] = NIL;
        a.free(p, 0);
    }
    assert_eq!(a.largest_free_order(), Some(0));
    (a, om)
}

/// (7) compaction builds a high-order block out of a checkerboard of movable pages.
#[test]
fn compaction_builds_high_order_block() {
    for (n, pbo) in [(8192u32, 9u8), (8192 + 700, 10), (5000, 9)] {
        let (mut a, mut om) = fragmented(n, pbo);
        let ids_before: Vec<u32> = {
            let mut v: Vec<u32> = om.owner.iter().copied().filter(|&o| o != NIL).collect();
            v.sort();
            v
        };
        for target in [4u8, pbo] {
            let out = a.compact(target, &mut om, u32::MAX);
            assert!(out.success, "n {n} pbo {pbo} target {target}: {out:?}");
            assert!(a.largest_free_order().unwrap() >= target);
            assert!(out.pages_migrated > 0 && out.pages_scanned >= out.pages_migrated);
            check_owners(&a, &om, &[]);
        }
        // Every source frame of the last move is free and every target owned.
        for &(from, to) in &om.moves {
            assert_eq!(a.allocation_at(to).map(|x| x.0), Some(0));
            if om.owner[from as usize] == NIL {
                assert!(a.is_free(from));
            }
        }
        let mut ids_after: Vec<u32> = om.owner.iter().copied().filter(|&o| o != NIL).collect();
        ids_after.sort();
        assert_eq!(ids_before, ids_after, "no owner lost or duplicated");
        assert_eq!(a.stats().compact_migrated, om.moves.len() as u64);
    }
}

/// Compaction limited by max_migrate resumes from its cached scanner positions.
#[test]
fn compaction_resumes_with_cached_positions() {
    let (mut a, mut om) = fragmented(8192, 9);
    let mut calls = 0;
    loop {
        let out = a.compact(9, &mut om, 16);
        assert!(out.pages_migrated <= 16);
        check_owners(&a, &om, &[]);
        calls += 1;
        if out.success {
            break;
        }
        assert!(calls < 200, "no progress");
    }
    assert!(calls > 4, "a 256-page pageblock should need many 16-page steps");
    // Same total work as one unlimited run on an identical zone.
    let (mut b, mut om2) = fragmented(8192, 9);
    let one = b.compact(9, &mut om2, u32::MAX);
    assert!(one.success);
    assert_eq!(om.moves.len(), om2.moves.len());
    // Already satisfied: no scanning at all.
    let again = a.compact(9, &mut om, u32::MAX);
    assert_eq!(
        again,
        CompactOutcome {
            success: true,
            pages_scanned: 0,
            pages_migrated: 0,
            scanners_met: false,
        }
    );
}

/// Unmovable pages pin pageblocks: compaction cannot succeed, the scanners meet and reset.
#[test]
fn compaction_fails_when_pinned() {
    let n = 4096u32;
    let mut a = BuddyAllocator::new(n, 9);
    let mut om = OwnerMap {
        owner: vec![NIL; n as usize],
        moves: Vec::new(),
    };
    let mut pinned = Vec::new();
    let mut id = 0;
    while let Some(p) = a.alloc(0, MigrateType::Movable) {
        om.owner[p as usize] = id;
        id += 1;
    }
    // Free odd frames; make every 8th even frame unmovable (not movable by the mover).
    for p in (1..n).step_by(2) {
        om.owner[p as usize] = NIL;
        a.free(p, 0);
    }
    for p in (0..n).step_by(8) {
        om.owner[p as usize] = NIL;
        pinned.push(p);
    }
    let out = a.compact(4, &mut om, u32::MAX);
    assert!(!out.success);
    check_owners(&a, &om, &pinned);
    assert_eq!(
        a.compact_cached_pfns(),
        (0, n - 512),
        "scanners met and were reset"
    );
    // Order 2 is achievable: pinned frames are 8 apart.
    let out = a.compact(2, &mut om, u32::MAX);
    assert!(out.success);
    check_owners(&a, &om, &pinned);
}

/// The scanners' visit count over long runs of allocated order-0 frames (which the free scanner
/// steps over a word at a time) is the frame-by-frame walk's: counted by hand below.
#[test]
fn compaction_scan_counts_over_order0_runs() {
    let n = 2048u32; // four 512-page pageblocks
    let mut a = BuddyAllocator::new(n, 9);
    let mut om = OwnerMap {
        owner: vec![NIL; n as usize],
        moves: Vec::new(),
    };
    let mut id = 0;
    while let Some(p) = a.alloc(0, MigrateType::Movable) {
        // Only the first pageblock's frames are movable.
        if p < 512 {
            om.owner[p as usize] = id;
            id += 1;
        }
    }
    assert_eq!(a.nr_free_pages(), 0);
    // Two single free frames near the top, at offsets that are not multiples of 8.
    for p in [2043, 2046] {
        a.free(p, 0);
    }
    let out = a.compact(4, &mut om, u32::MAX);
    a.check_invariants().unwrap();
    // Migrate scanner: 32 candidates in pageblock 0 (32 visits). Free scanner: pageblock 3 from
    // its start, 507 allocated frames, free 2043, 2044-2045, free 2046, 2047 (512 visits, two
    // targets); pageblocks 2 and 1 (512 visits each, no free frame); then the scanners meet.
    assert_eq!(out.pages_migrated, 2);
    assert!(!out.success);
    assert_eq!(out.pages_scanned, 32 + 3 * 512);
    assert_eq!(a.stats().compact_migrate_scanned, 32);
    assert_eq!(a.stats().compact_free_scanned, 3 * 512);
    assert_eq!(
        a.compact_cached_pfns(),
        (0, n - 512),
        "scanners met and were reset"
    );
}

/// Random fragmentation, then compaction: ownership consistent, success when a whole Movable
/// pageblock's worth of free memory exists and no frame is pinned.
#[test]
fn compaction_random() {
    use std::num::Wrapping;
    let mut seed = Wrapping(0x9E37_79B9_7F4A_7C15u64);
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed.0
    };
    for round in 0..12 {
        let n = 3000 + (rnd() % 6000) as u32;
        let pbo = if round % 2 == 0 { 9 } else { 10 };
        let mut a = BuddyAllocator::new(n, pbo);
        let mut om = OwnerMap {
            owner: vec![NIL; n as usize],
            moves: Vec::new(),
        };
        let mut id = 0;
        while let Some(p) = a.alloc(0, MigrateType::Movable) {
            om.owner[p as usize] = id;
            id += 1;
        }
        let keep = 30 + rnd() % 40; // percent kept
        for p in 0..n {
            if rnd() % 100 >= keep {
                om.owner[p as usize] = NIL;
                a.free(p, 0);
            }
        }
        a.check_invariants().unwrap();
        let target = (rnd() % (pbo as u64 + 1)) as u8;
        let free = a.nr_free_pages();
        let out = a.compact(target, &mut om, u32::MAX);
        check_owners(&a, &om, &[]);
        if free >= 2 << pbo {
            assert!(
                out.success,
                "round {round}: n {n} pbo {pbo} target {target} free {free}: {out:?}"
            );
        }
    }
}

/// Throughput of order-0 alloc+free pairs; run with
/// `cargo test --release -p hotlaunch-kernel --test buddy_props -- --ignored --nocapture`.
#[test]
#[ignore]
fn bench_order0_alloc_free() {
    let n = 3_145_728u32; // 12 GiB
    let t0 = std::time::Instant::now();
    let mut a = BuddyAllocator::new(n, 10);
    eprintln!("new(12 GiB): {:?}", t0.elapsed());
    for _ in 0..n / 2 {
        a.alloc(0, MigrateType::Movable).unwrap();
    }
    // Steady state: half of memory held, random frees and allocations (random pfns: cache misses
    // dominate on a 12 GiB zone; a 1 GiB zone mostly fits in the host caches).
    let iters = 20_000_000u64;
    for zone in [n, 262_144] {
        let mut a = BuddyAllocator::new(zone, 10);
        let mut held: Vec<Pfn> = (0..zone / 2)
            .map(|_| a.alloc(0, MigrateType::Movable).unwrap())
            .collect();
        let mut x = 88172645463325252u64;
        let t = std::time::Instant::now();
        for _ in 0..iters {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % held.len() as u64) as usize;
            a.free(held[i], 0);
            held[i] = a.alloc(0, MigrateType::Movable).unwrap();
        }
        let dt = t.elapsed().as_secs_f64();
        eprintln!(
            "steady random, {zone} frames: {:.1} M alloc+free pairs/s",
            iters as f64 / dt / 1e6
        );
    }
    // Hot loop: alloc then free the same page (split/merge the whole chain).
    let mut b = BuddyAllocator::new(n, 10);
    let t = std::time::Instant::now();
    for _ in 0..iters {
        let p = b.alloc(0, MigrateType::Movable).unwrap();
        b.free(p, 0);
    }
    let dt = t.elapsed().as_secs_f64();
    eprintln!(
        "alloc+free on fresh zone (10-level split/merge): {:.1} M pairs/s",
        iters as f64 / dt / 1e6
    );
    // LIFO batches: allocate 64, free 64.
    let t = std::time::Instant::now();
    let mut v = Vec::with_capacity(64);
    for _ in 0..iters / 64 {
        for _ in 0..64 {
            v.push(a.alloc(0, MigrateType::Movable).unwrap());
        }
        for p in v.drain(..) {
            a.free(p, 0);
        }
    }
    let dt = t.elapsed().as_secs_f64();
    eprintln!(
        "batches of 64, half of 12 GiB held: {:.1} M pairs/s",
        iters as f64 / dt / 1e6
    );
    a.check_invariants().unwrap();
}

/// Pageblock skip hints (Linux 3.7+): a run that scans pageblocks in vain marks them, the next
/// run passes them by, and clearing the marks restores the full scan. The first run on a zone
/// is the same with or without hints.
#[test]
fn compaction_skip_hints_pass_pageblocks_scanned_in_vain() {
    // Every other frame free, the allocated ones unmovable: nothing can be isolated.
    let stuck = |hints: bool| {
        let (mut a, om) = fragmented(8192, 9);
        let mut pinned = OwnerMap {
            owner: vec![NIL; om.owner.len()],
            moves: Vec::new(),
        };
        a.set_skip_hints(hints);
        let first = a.compact(9, &mut pinned, u32::MAX);
        let second = a.compact(9, &mut pinned, u32::MAX);
        (a, first, second, pinned)
    };
    let (mut on, first_on, second_on, mut pinned) = stuck(true);
    let (off, first_off, second_off, _) = stuck(false);
    assert_eq!(first_on, first_off, "the first run does not depend on the hints");
    assert!(!first_on.success && first_on.scanners_met && first_on.pages_scanned > 0);
    // Every pageblock the migrate scanner crossed is marked (not the free scanner's start block).
    assert_eq!(on.skipped_pageblocks(), on.nr_pageblocks() - 1);
    assert_eq!(off.skipped_pageblocks(), 0);
    assert_eq!(
        second_on.pages_scanned, 0,
        "marked pageblocks are passed by: {second_on:?}"
    );
    assert_eq!(second_off, first_off, "without hints every run scans the same");
    on.reset_isolation_suitable();
    assert_eq!(on.skipped_pageblocks(), 0);
    let third = on.compact(9, &mut pinned, u32::MAX);
    assert_eq!(third, first_on, "cleared marks: a full scan again");
    // A flush noted by a direct compaction clears them when kswapd sleeps; none noted: kept.
    on.reset_isolation_suitable_if_flushed();
    assert_eq!(on.skipped_pageblocks(), on.nr_pageblocks() - 1);
    on.note_blockskip_flush();
    on.reset_isolation_suitable_if_flushed();
    assert_eq!(on.skipped_pageblocks(), 0);
    on.check_invariants().unwrap();
    // Movable pages: the hinted run builds the block as the plain one does.
    let (mut a, mut om) = fragmented(8192, 9);
    let (mut b, mut om2) = fragmented(8192, 9);
    a.set_skip_hints(true);
    assert_eq!(a.compact(9, &mut om, u32::MAX), b.compact(9, &mut om2, u32::MAX));
    assert_eq!(om.moves, om2.moves);
    check_owners(&a, &om, &[]);
}
