//! Replay of recorded full traces and re-walks of recorded marking trees (`gc::replay`,
//! `gc::tree`): same effects as real traces.

mod common;

use common::*;
use engine::{Actor, CpuLedger};
use runtime::gc::collect_standalone as collect;
use runtime::gc::{GcCosts, GcKind};
use runtime::heap::{Meta, ObjView, NULL};
use runtime::hooks::{RuntimeHooks, StockArt, VisitMode};

/// What changes the heap between the third and the fourth of [`repeated_full_gc_effects`]'s
/// collections.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Between {
    /// Only unreachable allocations: the trace's result is unchanged.
    Garbage,
    /// A mutator reference store (clears a reachable object's non-null slot).
    WriteRef,
    /// A root is dropped.
    Root,
}

/// Five full non-compacting GCs of one heap, with garbage allocated before each and `between`
/// before the fourth (the first GC copies the fresh heap, so the second cannot replay it): per GC its statistics, every object's address and every page operation in
/// order, and the number of replayed traces so far. `replay`: trace replay on.
fn repeated_full_gc_effects(
    hooks: &mut dyn RuntimeHooks,
    replay: bool,
    between: Between,
) -> Vec<(String, u64)> {
    let mut b = Recorder::default();
    let mut heap = small_heap_on(11, 6 << 20, &mut b);
    heap.set_trace_replay(replay);
    bookmark_some(&mut heap);
    let proto = heap.roots[0];
    let (class, size, nrefs) = (heap.class(proto), heap.size(proto), heap.nrefs(proto));
    let mut out = Vec::new();
    for i in 0..5 {
        if i == 3 {
            match between {
                Between::Garbage => {}
                Between::WriteRef => {
                    let (src, slot) = (0..heap.recs.len() as u32)
                        .filter(|&o| heap.is_alive(o) && heap.is_marked(o))
                        .find_map(|o| {
                            let s = heap.refs_of(o).iter().position(|&c| c != NULL)?;
                            Some((o, s as u32))
                        })
                        .expect("a marked object with a reference");
                    runtime::access::write_ref(
                        &mut heap,
                        hooks,
                        0,
                        Actor::AppMain(7),
                        src,
                        slot,
                        NULL,
                        &mut b,
                    );
                }
                Between::Root => {
                    let r = heap.roots[heap.roots.len() / 2];
                    assert!(heap.remove_root(r));
                }
            }
        }
        for _ in 0..200 {
            heap.alloc(0, Actor::AppMain(7), class, size, nrefs, &mut b)
                .unwrap();
        }
        b.log.clear();
        let st = collect(
            &mut heap,
            hooks,
            GcKind::Full { compact: false },
            0,
            &mut b,
            &mut CpuLedger::default(),
            &GcCosts::default(),
        );
        let addrs: Vec<(bool, u32)> = (0..heap.recs.len() as u32)
            .map(|o| (heap.is_alive(o), heap.addr(o)))
            .collect();
        let marks: Vec<bool> = (0..heap.recs.len() as u32).map(|o| heap.is_marked(o)).collect();
        out.push((
            format!("{st:?}\n{addrs:?}\n{marks:?}\n{:?}", b.log),
            heap.trace_replays(),
        ));
    }
    out
}

/// Compare [`repeated_full_gc_effects`] with replay on and off; returns the replay counts after
/// each GC with replay on.
fn replay_matches_real_traces(hooks: &mut dyn RuntimeHooks, between: Between) -> Vec<u64> {
    let on = repeated_full_gc_effects(hooks, true, between);
    let off = repeated_full_gc_effects(hooks, false, between);
    // The third GC (replayed when unchanged) both copies and marks in place.
    let third = &off[2].0;
    assert!(!third.contains("objects_copied: 0,") && !third.contains("regions_unevacuated: 0,"));
    for (i, ((a, _), (b, n))) in on.iter().zip(&off).enumerate() {
        assert!(
            a == b,
            "{between:?}: GC {i}: the replayed and the real trace differ"
        );
        assert_eq!(*n, 0, "replay off never replays");
    }
    on.iter().map(|x| x.1).collect()
}

/// A full GC of a heap whose live graph has not changed since the last full GC (only garbage was
/// allocated) replays that trace, with exactly the real trace's effects: statistics, addresses,
/// marks and page operations in order, through copies and in-place marks, stock and bookmarking.
#[test]
fn replayed_full_trace_has_the_real_traces_effects() {
    for hooks in [
        &mut StockArt as &mut dyn RuntimeHooks,
        &mut Bookmarking { claim: true },
    ] {
        let n = replay_matches_real_traces(hooks, Between::Garbage);
        assert_eq!(n[..2], [0, 0]);
        assert_eq!(n[2..], [1, 2, 3], "unchanged heaps replay");
    }
}

/// A reference store or a root change since the recorded trace prevents its replay; the effects
/// stay the real trace's.
#[test]
fn reference_store_or_root_change_prevents_replay() {
    for between in [Between::WriteRef, Between::Root] {
        let n = replay_matches_real_traces(&mut StockArt, between);
        assert_eq!(n, [0, 0, 1, 1, 2], "{between:?}: no replay just after the change");
    }
}

/// Every full GC traced for real is counted by why it did not replay (`Heap::trace_refusals`):
/// no recorded trace yet, a copy into a region that is not evacuated now (the first GC copied the
/// fresh heap), a compacting GC (not recordable), a collection in between, a reference store.
#[test]
fn refused_replays_are_counted_by_reason() {
    let mut b = Recorder::default();
    let mut heap = small_heap_on(11, 6 << 20, &mut b);
    let mut refusals = Vec::new();
    for step in 0..6 {
        if step == 5 {
            let o = heap.roots[0];
            let slot = heap.nrefs(o) - 1;
            heap.set_ref_raw(o, slot, NULL);
        }
        let compact = step == 3;
        collect(
            &mut heap,
            &mut StockArt,
            GcKind::Full { compact },
            0,
            &mut b,
            &mut CpuLedger::default(),
            &GcCosts::default(),
        );
        let now: Vec<u64> = heap.trace_refusals().iter().map(|x| x.1).collect();
        refusals.push(now);
    }
    let names: Vec<&str> = heap.trace_refusals().iter().map(|x| x.0.name()).collect();
    let got: Vec<Vec<u64>> = refusals;
    // Columns: ineligible, no_record, collection_between, graph_changed, setup, regions.
    assert_eq!(
        names,
        [
            "ineligible",
            "no_record",
            "collection_between",
            "graph_changed",
            "setup",
            "regions"
        ]
    );
    assert_eq!(
        got,
        [
            [0, 1, 0, 0, 0, 0],
            [0, 1, 0, 0, 0, 1],
            [0, 1, 0, 0, 0, 1],
            [1, 1, 0, 0, 0, 1],
            [1, 1, 1, 0, 0, 1],
            [1, 1, 1, 1, 0, 1],
        ]
    );
    assert_eq!(heap.trace_replays(), 1, "the third GC replays");
}

/// Marvin-like hooks: every walk is stock and bookmarks [`BOOKMARK`] objects, except stub rounds
/// (`stub`: compacting, generic loop), which bookmark every 3rd object they mark and copy those
/// into group 1.
struct StubRounds {
    stub: bool,
}
impl RuntimeHooks for StubRounds {
    fn visit_mode(&mut self, obj: &ObjView) -> VisitMode {
        if obj.meta & BOOKMARK != 0 {
            VisitMode::Bookmarked
        } else {
            VisitMode::Normal
        }
    }
    fn on_mark(&mut self, obj: &ObjView, _depth: u32, _young: bool, meta: &mut Meta) -> u8 {
        if self.stub && obj.id.is_multiple_of(3) {
            *meta |= BOOKMARK;
        }
        (*meta & BOOKMARK != 0) as u8
    }
    fn is_stock(&self) -> bool {
        !self.stub
    }
    fn bookmark_mask(&self) -> Meta {
        BOOKMARK
    }
    fn never_opaque(&self) -> bool {
        true
    }
}

/// Ten full GCs with garbage allocated before each: walks, except stub rounds (compacting, the
/// generic loop) at the 2nd and 8th and a stock compaction (the stock loop) at the 5th; `store`: a
/// reference store after the 8th. Per GC its
/// statistics, every object's address, metadata and mark, and every page operation in order; and
/// the re-walks, replays, follows and translations so far. `plain`: the 5th GC is a plain walk
/// (no stock compaction: the second stub round then lays the heap out as the first did);
/// `sticky`: a sticky GC before the 4th (which then records a new trace instead of replaying).
fn stub_round_effects(
    replay: bool,
    store: bool,
    plain: bool,
    sticky: bool,
) -> Vec<(String, u64, u64, u64, u64)> {
    let mut b = Recorder::default();
    let mut heap = small_heap_on(12, 6 << 20, &mut b);
    heap.set_trace_replay(replay);
    bookmark_some(&mut heap);
    let proto = heap.roots[0];
    let (class, size, nrefs) = (heap.class(proto), heap.size(proto), heap.nrefs(proto));
    let mut out = Vec::new();
    for i in 0..10 {
        if store && i == 8 {
            let (o, slot) = (0..heap.recs.len() as u32)
                .filter(|&o| heap.is_alive(o) && heap.is_marked(o))
                .find_map(|o| Some((o, heap.refs_of(o).iter().position(|&c| c != NULL)?)))
                .expect("a marked object with a reference");
            heap.set_ref_raw(o, slot as u32, NULL);
        }
        if sticky && i == 3 {
            collect(
                &mut heap,
                &mut StubRounds { stub: false },
                GcKind::Sticky,
                0,
                &mut b,
                &mut CpuLedger::default(),
                &GcCosts::default(),
            );
        }
        for _ in 0..200 {
            heap.alloc(0, Actor::AppMain(7), class, size, nrefs, &mut b)
                .unwrap();
        }
        b.log.clear();
        let stub = i == 1 || i == 7;
        let st = collect(
            &mut heap,
            &mut StubRounds { stub },
            GcKind::Full {
                compact: stub || (i == 4 && !plain),
            },
            0,
            &mut b,
            &mut CpuLedger::default(),
            &GcCosts::default(),
        );
        let objs: Vec<(bool, u32, Meta, bool)> = (0..heap.recs.len() as u32)
            .map(|o| {
                (
                    heap.is_alive(o),
                    heap.addr(o),
                    heap.recs[o as usize].meta,
                    heap.is_marked(o),
                )
            })
            .collect();
        out.push((
            format!("{st:?}\n{objs:?}\n{:?}", b.log),
            heap.tree_rewalks(),
            heap.trace_replays(),
            heap.tree_follows(),
            heap.trace_translations(),
        ));
    }
    out
}

/// The full GC right after a compaction that took the generic loop (a Marvin stub round) re-walks
/// that compaction's marking tree, with exactly a real trace's effects (statistics, addresses,
/// metadata, marks, page operations in order, through copies, in-place marks and bookmarked
/// objects); the GCs after it replay as usual. A full GC of the whole heap in between (a stock
/// compaction) leaves the tree valid; a reference store since it was recorded prevents the
/// re-walk. The second compaction taking the generic loop follows the tree.
#[test]
fn rewalked_marking_tree_has_the_real_traces_effects() {
    for store in [false, true] {
        let on = stub_round_effects(true, store, false, false);
        let off = stub_round_effects(false, store, false, false);
        let third = &off[2].0;
        assert!(!third.contains("objects_copied: 0,") && !third.contains("regions_unevacuated: 0,"));
        for (i, (a, b)) in on.iter().zip(&off).enumerate() {
            assert!(
                a.0 == b.0,
                "store {store}: GC {i}: the re-walked and the real trace differ"
            );
            assert_eq!(
                (b.1, b.2, b.3, b.4),
                (0, 0, 0, 0),
                "replay off never uses a record"
            );
        }
        let rewalks: Vec<u64> = on.iter().map(|x| x.1).collect();
        let replays: Vec<u64> = on.iter().map(|x| x.2).collect();
        if store {
            assert_eq!(
                rewalks,
                [0, 0, 1, 1, 1, 2, 2, 2, 2, 2],
                "no re-walk after the store"
            );
            assert_eq!(
                replays,
                [0, 0, 0, 1, 1, 1, 2, 2, 2, 3],
                "walks replay after a re-walk"
            );
        } else {
            // The GC after the second stub round replays the record kept from right after the
            // first (translated: the stub rounds lay the heap out the same way).
            assert_eq!(rewalks, [0, 0, 1, 1, 1, 2, 2, 2, 2, 2]);
            assert_eq!(replays, [0, 0, 0, 1, 1, 1, 2, 2, 3, 4]);
        }
        let follows: Vec<u64> = on.iter().map(|x| x.3).collect();
        assert_eq!(
            follows,
            [0, 0, 0, 0, 0, 0, 0, 1, 1, 1],
            "the second stub round follows"
        );
    }
}

/// Runs the stub-round scenario with replay on and off (`kept`: a later record replaces the one
/// made right after the first stub round), asserts every GC's effects are equal, the 8th GC
/// really copies, and the GCs after the second stub round translate unless `store` prevents it;
/// returns the replay-on effects.
fn translated_replay_matches_the_real_trace(store: bool, kept: bool) -> Vec<(String, u64, u64, u64, u64)> {
    let on = stub_round_effects(true, store, true, kept);
    let off = stub_round_effects(false, store, true, kept);
    for (i, (a, b)) in on.iter().zip(&off).enumerate() {
        assert!(
            a.0 == b.0,
            "store {store}: GC {i}: the translated replay and the real trace differ"
        );
    }
    let eighth = &off[8].0;
    assert!(!eighth.contains("objects_copied: 0,") && !eighth.contains("regions_unevacuated: 0,"));
    let translations: Vec<u64> = on.iter().map(|x| x.4).collect();
    if store {
        assert_eq!(translations, [0; 10], "no translation after the store");
    } else {
        assert_eq!(translations, [0, 0, 0, 0, 0, 0, 0, 0, 1, 1]);
    }
    on
}

/// The full GC right after the second stub round, which lays the heap out as the first did (only
/// the regions differ), replays the trace recorded right after the first, translated to the new
/// regions, with exactly a real trace's effects (statistics, addresses, metadata, marks, page
/// operations in order). A reference store since the record prevents it (the walk re-walks).
#[test]
fn translated_replay_across_a_compaction_has_the_real_traces_effects() {
    for store in [false, true] {
        let on = translated_replay_matches_the_real_trace(store, false);
        let rewalks: Vec<u64> = on.iter().map(|x| x.1).collect();
        assert_eq!(
            rewalks,
            [0, 0, 1, 1, 1, 1, 1, 1, 1, 1],
            "no re-walk after the record"
        );
    }
}

/// As [`translated_replay_across_a_compaction_has_the_real_traces_effects`], when the trace
/// recorded right after the first stub round was replaced by a later record (a sticky GC before
/// the 4th GC makes it trace and record again): the GC right after the second stub round replays
/// the kept record, translated, with exactly a real trace's effects. A reference store since the
/// record prevents it.
#[test]
fn kept_record_replays_across_a_compaction_with_the_real_traces_effects() {
    for store in [false, true] {
        let on = translated_replay_matches_the_real_trace(store, true);
        let replays: Vec<u64> = on.iter().map(|x| x.2).collect();
        eprintln!(
            "store {store}: replays {replays:?} rewalks {:?}",
            on.iter().map(|x| x.1).collect::<Vec<_>>()
        );
    }
}

/// A heap whose graph changes before every full GC (an app churning its objects) never replays:
/// after two wasted records in a row its collections stop recording most of the time
/// (`TraceMemo::records`), with the real traces' effects; once the graph stops changing, replay
/// resumes within 16 collections.
#[test]
fn churning_heap_skips_records_and_replays_again_when_it_settles() {
    let run = |replay: bool| {
        let mut b = Recorder::default();
        let mut heap = small_heap_on(11, 6 << 20, &mut b);
        heap.set_trace_replay(replay);
        let proto = heap.roots[0];
        let (class, size, nrefs) = (heap.class(proto), heap.size(proto), heap.nrefs(proto));
        // An object with two stored references: swapping them changes the graph and keeps every
        // object reachable.
        let (src, s1, s2) = (0..heap.recs.len() as u32)
            .filter(|&o| heap.is_alive(o))
            .find_map(|o| {
                let live: Vec<usize> = (0..heap.refs_of(o).len())
                    .filter(|&k| heap.refs_of(o)[k] != NULL)
                    .collect();
                (live.len() >= 2).then(|| (o, live[0] as u32, live[1] as u32))
            })
            .expect("an object with two references");
        let (mut effects, mut replays, mut no_record) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..40 {
            if i < 20 {
                let (a, c) = (heap.refs_of(src)[s1 as usize], heap.refs_of(src)[s2 as usize]);
                heap.set_ref_raw(src, s1, c);
                heap.set_ref_raw(src, s2, a);
            }
            for _ in 0..50 {
                heap.alloc(0, Actor::AppMain(7), class, size, nrefs, &mut b)
                    .unwrap();
            }
            b.log.clear();
            let st = collect(
                &mut heap,
                &mut StockArt,
                GcKind::Full { compact: false },
                0,
                &mut b,
                &mut CpuLedger::default(),
                &GcCosts::default(),
            );
            let addrs: Vec<u32> = (0..heap.recs.len() as u32).map(|o| heap.addr(o)).collect();
            effects.push(format!("{st:?}\n{addrs:?}\n{:?}", b.log));
            replays.push(heap.trace_replays());
            no_record.push(heap.trace_refusals()[1].1);
        }
        (effects, replays, no_record)
    };
    let (on, replays, no_record) = run(true);
    let (off, _, _) = run(false);
    for (i, (a, b)) in on.iter().zip(&off).enumerate() {
        assert!(a == b, "GC {i}: effects differ with replay on");
    }
    assert_eq!(replays[19], 0, "a churning heap never replays");
    // Records skipped while churning: refused for want of a record (the first GC's is the only
    // other `no_record`).
    assert!(no_record[19] > 5, "records skipped while churning: {no_record:?}");
    let resumed = replays.iter().position(|&n| n > 0).expect("replays resume");
    assert!(
        (21..=20 + 16).contains(&resumed),
        "replay resumed at GC {resumed}"
    );
    assert!(replays[39] >= 2, "settled heap keeps replaying: {replays:?}");
}
