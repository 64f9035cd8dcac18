//! The allocation slow path (`Heap::AllocateInternalWithGc`): a failed allocation escalates to a
//! compacting full GC before it fails.

use engine::CpuLedger;
use runtime::backing::NullBacking;
use runtime::gc::GcKind;
use runtime::heap::{ClassKind, HeapConfig, ObjId, REGION_SIZE};
use runtime::hooks::StockArt;
use runtime::{GcCause, Runtime};

const OBJ: u32 = 8 << 10;

/// A region space whose mutator half is full of 80 %-live regions: a non-compacting full GC
/// keeps every region (live above `kEvacuateLivePercentThreshold` = 75 %) and frees none.
fn fragmented() -> (Runtime, NullBacking, CpuLedger, ClassId) {
    let cfg = HeapConfig {
        capacity: 8 << 20,
        growth_limit: 8 << 20,
        generational: false,
        ..HeapConfig::default()
    };
    let mut rt = Runtime::new(3, cfg, StockArt);
    let mut b = NullBacking::default();
    let mut l = CpuLedger::default();
    let prim = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let half = rt.heap.num_regions() / 2;
    let per_region = REGION_SIZE / OBJ;
    let mut objs: Vec<ObjId> = Vec::new();
    for _ in 0..half * per_region {
        let (o, _) = rt.alloc(0, prim, OBJ - 16, 0, &mut b, &mut l).unwrap();
        rt.heap.add_root(o);
        objs.push(o);
    }
    // Nothing young any more: the next non-compacting GC evacuates by live ratio only.
    rt.collect(
        0,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut b,
        &mut l,
    );
    for &o in rt.heap.roots.clone().iter().step_by(5) {
        assert!(rt.heap.remove_root(o));
    }
    (rt, b, l, prim)
}

type ClassId = runtime::heap::ClassId;

#[test]
fn a_failed_allocation_escalates_to_a_compacting_full_gc_before_oom() {
    let (mut rt, mut b, mut l, prim) = fragmented();
    let before = rt.history.len();
    let now = 1_000_000_000;
    let mut got = Vec::new();
    // Fill what free space the regions' tails still have, until the slow path runs.
    while rt.history.len() == before {
        got.push(rt.alloc(now, prim, OBJ - 16, 0, &mut b, &mut l));
        assert!(got.len() < 10_000);
    }
    let (_, cost) = got
        .pop()
        .unwrap()
        .expect("the compacting GC makes room (ART: no OOME)");
    let gcs = &rt.history[before..];
    assert_eq!(gcs.len(), 2, "{gcs:?}");
    assert!(gcs.iter().all(|g| g.cause == GcCause::Alloc));
    assert!(!gcs[0].compacting && gcs[0].regions_freed == 0, "{:?}", gcs[0]);
    assert!(gcs[1].compacting && gcs[1].regions_freed > 0, "{:?}", gcs[1]);
    // The main thread waits for both collections.
    let end = gcs[1].start + gcs[1].pause_ns + gcs[1].duration_ns;
    assert!(cost.main_stall.ns >= end - now, "{:?}", cost.main_stall);
    assert_eq!(cost.gc.unwrap().start, gcs[1].start);
}

#[test]
fn an_allocation_that_cannot_fit_after_compaction_fails() {
    let (mut rt, mut b, mut l, prim) = fragmented();
    // Keep everything live: even compaction cannot make room for more than half the space.
    let live = rt.heap.roots.len();
    let mut err = None;
    for _ in 0..10_000 {
        match rt.alloc(1_000_000_000, prim, OBJ - 16, 0, &mut b, &mut l) {
            Ok((o, _)) => rt.heap.add_root(o),
            Err(e) => {
                err = Some(e);
                break;
            }
        }
    }
    let err = err.expect("the region space runs out");
    assert!(
        matches!(
            err,
            runtime::heap::HeapError::NoRegion { .. } | runtime::heap::HeapError::OutOfMemory { .. }
        ),
        "{err}"
    );
    assert!(rt.heap.roots.len() > live);
    let last = &rt.history[rt.history.len() - 2..];
    assert!(!last[0].compacting && last[1].compacting, "{last:?}");
}
