//! GC correctness, swap interaction, heap growth, generators.

use engine::{Actor, Category, CpuLedger, RngStreams};
use rand::Rng;
use runtime::backing::{MockBacking, MockPage, NullBacking};
use runtime::gc::{GcCosts, GcKind};
use runtime::gen::{generate, GraphSpec};
use runtime::heap::{ClassKind, Heap, HeapConfig, ObjId, NULL};
use runtime::hooks::{RuntimeHooks, StockArt, TraceOrder};
use runtime::{GcCause, Runtime, Span};
use std::collections::BTreeMap;

mod common;

use common::*;

use runtime::gc::collect_standalone as collect;

/// Reachable objects from the roots, each with its (class, size) and its references as indices in
/// a canonical BFS numbering; equal results mean isomorphic reachable graphs (with labels).
fn canonical(heap: &Heap) -> Vec<(u32, u32, Vec<Option<u32>>)> {
    let mut num: BTreeMap<ObjId, u32> = BTreeMap::new();
    let mut order = Vec::new();
    for &r in &heap.roots {
        if let std::collections::btree_map::Entry::Vacant(e) = num.entry(r) {
            e.insert(order.len() as u32);
            order.push(r);
        }
    }
    let mut i = 0;
    while i < order.len() {
        let o = order[i];
        for &c in heap.refs_of(o) {
            if c != NULL && !num.contains_key(&c) {
                num.insert(c, order.len() as u32);
                order.push(c);
            }
        }
        i += 1;
    }
    order
        .iter()
        .map(|&o| {
            assert!(heap.is_alive(o), "reachable object {o} was reclaimed");
            let refs = heap
                .refs_of(o)
                .iter()
                .map(|&c| if c == NULL { None } else { Some(num[&c]) })
                .collect();
            (heap.class(o), heap.size(o), refs)
        })
        .collect()
}

fn small_heap(seed: u64, bytes: u64) -> Heap {
    small_heap_on(seed, bytes, &mut NullBacking::default())
}

#[test]
fn unreachable_objects_are_reclaimed_and_reachable_survive_with_references() {
    let mut backing = MockBacking::new(0);
    let mut heap = small_heap_on(1, 4 << 20, &mut backing);
    let mut rng = RngStreams::new(2).stream("drop", 0);
    // Clear a quarter of all reference slots.
    for o in 0..heap.recs.len() as u32 {
        for k in 0..heap.refs_of(o).len() as u32 {
            if rng.gen_range(0..4) == 0 {
                heap.set_ref_raw(o, k, NULL);
            }
        }
    }
    // Drop a third of the roots and clear some references: creates garbage.
    let nroots = heap.roots.len();
    for _ in 0..nroots / 3 {
        let i = rng.gen_range(0..heap.roots.len());
        heap.roots.swap_remove(i);
    }
    let before = canonical(&heap);
    let reachable = before.len() as u64;
    let reachable_bytes: u64 = before.iter().map(|x| x.1 as u64).sum();
    let total = heap.live_objects;
    assert!(reachable < total);
    let mut ledger = CpuLedger::default();
    for kind in [
        GcKind::Full { compact: true },
        GcKind::Full { compact: false },
        GcKind::Sticky,
    ] {
        let st = collect(
            &mut heap,
            &mut StockArt,
            kind,
            0,
            &mut backing,
            &mut ledger,
            &GcCosts::default(),
        );
        assert_eq!(
            heap.live_objects, reachable,
            "{kind:?}: only reachable objects survive"
        );
        assert_eq!(heap.bytes_allocated, reachable_bytes);
        assert_eq!(heap.recount_bytes(), reachable_bytes);
        heap.check_invariants().unwrap();
        assert_eq!(
            canonical(&heap),
            before,
            "{kind:?}: graph isomorphic after copying"
        );
        if kind == (GcKind::Full { compact: true }) {
            assert_eq!(st.freed_objects, total - reachable);
            assert_eq!(
                st.objects_copied,
                reachable - heap.los.iter().filter(|s| s.obj != NULL).count() as u64
            );
        }
    }
    assert!(ledger.by_category(Category::Gc) > 0);
}

#[test]
fn copying_moves_objects_and_frees_regions() {
    let mut b = MockBacking::new(0);
    let mut heap = small_heap_on(3, 2 << 20, &mut b);
    let addrs: Vec<u32> = heap.recs.iter().map(|r| r.addr).collect();
    let used_before = heap.used_regions();
    let st = collect(
        &mut heap,
        &mut StockArt,
        GcKind::Full { compact: true },
        0,
        &mut b,
        &mut CpuLedger::default(),
        &GcCosts::default(),
    );
    assert!(st.regions_freed > 0 && st.bytes_copied > 0);
    let moved = (0..addrs.len())
        .filter(|&o| !heap.is_large(o as u32) && heap.addr(o as u32) != addrs[o])
        .count();
    assert!(moved > 0);
    assert!(heap.used_regions() <= used_before);
    assert!(
        b.released_pages > 0,
        "evacuated regions are released to the kernel"
    );
}

#[test]
fn gc_over_swapped_heap_faults_pages_in_on_the_gc_thread() {
    let mut b = MockBacking::new(50_000);
    let mut heap = small_heap_on(4, 4 << 20, &mut b);
    let mut ledger = CpuLedger::default();
    // Make the heap resident (an app access of everything), then swap it all out.
    let all: Vec<ObjId> = (0..heap.id_capacity() as u32)
        .filter(|&o| heap.is_alive(o))
        .collect();
    runtime::access::access(
        &mut heap,
        &mut StockArt,
        0,
        Actor::AppMain(7),
        &all,
        true,
        Span::Whole,
        &mut b,
    );
    let swapped = b.swap_out_all();
    assert!(swapped > 100);
    let st = collect(
        &mut heap,
        &mut StockArt,
        GcKind::Full { compact: false },
        0,
        &mut b,
        &mut ledger,
        &GcCosts::default(),
    );
    assert!(b.faults_gc > 0, "GC faulted swapped pages back in");
    assert_eq!(b.faults_main, 0);
    assert_eq!(
        st.stall_ns,
        b.faults_gc * 50_000,
        "fault stalls are on the GC thread"
    );
    assert!(st.duration_ns >= st.cpu_ns + st.stall_ns);
    assert!(
        st.pause_ns > 0 && st.pause_ns < 5_000_000,
        "CC flip pause is short"
    );
    // Every page the GC touched is now resident; the GC visited all live objects.
    assert_eq!(st.visits, heap.live_objects);
    assert!(b.count(MockPage::Swapped) < swapped);
}

#[test]
fn heap_growth_follows_art_formula() {
    let cfg = HeapConfig::default();
    let mut heap = Heap::new(1, cfg.clone());
    let c = heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let mut b = NullBacking::default();
    let mut ids = Vec::new();
    for _ in 0..5000 {
        ids.push(heap.alloc_quiet(0, c, 4096, 0, 0, &mut b).unwrap());
    }
    for &o in &ids[..2500] {
        heap.add_root(o);
    }
    let mut ledger = CpuLedger::default();
    // Foreground full GC: target = used + clamp(used*(1/0.6-1), 8M, 32M) * 3.
    let st = collect(
        &mut heap,
        &mut StockArt,
        GcKind::Full { compact: false },
        0,
        &mut b,
        &mut ledger,
        &GcCosts::default(),
    );
    let used = heap.bytes_allocated;
    assert_eq!(used, 2500 * 4096);
    let grow = ((used as f64 * (1.0 / 0.6 - 1.0)) as u64).clamp(8 << 20, 32 << 20);
    assert_eq!(heap.target_footprint, used + (grow as f64 * 3.0) as u64);
    assert_eq!(st.target_footprint_after, heap.target_footprint);
    assert!(heap.gc.next_sticky, "after a full GC the next one is sticky");
    assert!(heap.concurrent_start_bytes <= heap.target_footprint - (128 << 10));
    // Background: multiplier 1.
    heap.foreground = false;
    collect(
        &mut heap,
        &mut StockArt,
        GcKind::Full { compact: false },
        0,
        &mut b,
        &mut ledger,
        &GcCosts::default(),
    );
    assert_eq!(heap.target_footprint, used + grow);
    // Sticky GC with a target far above used + max_free shrinks to used + max_free * m.
    heap.target_footprint = used + (100 << 20);
    collect(
        &mut heap,
        &mut StockArt,
        GcKind::Sticky,
        0,
        &mut b,
        &mut ledger,
        &GcCosts::default(),
    );
    assert_eq!(heap.target_footprint, used + (32 << 20));
    // Growth limit caps the target.
    assert!(heap.target_footprint <= cfg.growth_limit);
}

#[test]
fn sticky_gc_collects_only_young_objects_and_keeps_old_to_young_references() {
    let mut rt = Runtime::new(3, HeapConfig::default(), StockArt);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let arr = rt.heap.add_class("java.lang.Object[]", ClassKind::ObjectArray);
    let prim = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let (holder, _) = rt.alloc(0, arr, 12 + 4 * 16, 16, &mut b, &mut l).unwrap();
    rt.heap.add_root(holder);
    rt.collect(
        0,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut b,
        &mut l,
    );
    // Holder is old now; store young objects into it (write barrier remembers it).
    let mut kept = Vec::new();
    for s in 0..16 {
        let (o, _) = rt.alloc(1, prim, 100, 0, &mut b, &mut l).unwrap();
        rt.write_ref(1, holder, s, o, &mut b);
        kept.push(o);
    }
    for _ in 0..100 {
        rt.alloc(1, prim, 100, 0, &mut b, &mut l).unwrap(); // garbage
    }
    let st = rt.collect(2, GcCause::Explicit, Some(GcKind::Sticky), &mut b, &mut l);
    assert!(st.sticky);
    assert_eq!(st.freed_objects, 100);
    for (s, &o) in kept.iter().enumerate() {
        assert!(rt.heap.is_alive(o));
        assert_eq!(rt.heap.refs_of(holder)[s], o);
    }
}

#[test]
fn background_transition_compacts_after_five_seconds() {
    let mut rt = Runtime::new(3, HeapConfig::default(), StockArt);
    let mut b = NullBacking::default();
    let mut l = CpuLedger::default();
    rt.set_foreground(0, false, &mut l);
    assert!(rt.tick(4_999_999_999, &mut b, &mut l).is_none());
    let st = rt.tick(5_000_000_000, &mut b, &mut l).expect("transition GC");
    assert!(st.compacting);
    rt.set_foreground(6_000_000_000, false, &mut l);
    rt.set_foreground(7_000_000_000, true, &mut l);
    assert!(
        rt.tick(20_000_000_000, &mut b, &mut l).is_none(),
        "returning to foreground cancels"
    );
}

/// A Fleet-like policy: BFS, objects at depth < 2 go to group 1.
struct Grouping;
impl RuntimeHooks for Grouping {
    fn trace_order(&self, _k: GcKind) -> TraceOrder {
        TraceOrder::Bfs
    }
    fn on_mark(
        &mut self,
        _o: &runtime::heap::ObjView,
        depth: u32,
        _young: bool,
        _meta: &mut runtime::Meta,
    ) -> u8 {
        u8::from(depth < 2)
    }
}

#[test]
fn policy_groups_objects_into_separate_regions() {
    let mut b = MockBacking::new(0);
    let mut heap = small_heap_on(5, 4 << 20, &mut b);
    collect(
        &mut heap,
        &mut Grouping,
        GcKind::Full { compact: true },
        0,
        &mut b,
        &mut CpuLedger::default(),
        &GcCosts::default(),
    );
    let hot = heap.group_ranges(1);
    let cold = heap.group_ranges(0);
    assert!(!hot.is_empty() && !cold.is_empty());
    let hot_pages: u32 = hot.iter().map(|r| r.1).sum();
    let cold_pages: u32 = cold.iter().map(|r| r.1).sum();
    assert!(
        hot_pages * 4 < cold_pages,
        "near-root objects are a small group: {hot_pages} vs {cold_pages}"
    );
    for &r in &heap.roots {
        if !heap.is_large(r) {
            assert_eq!(heap.regions[heap.region_of(r) as usize].group, 1);
        }
    }
}

#[test]
fn generator_depth_profile_and_determinism() {
    let a = small_heap(9, 2 << 20);
    let b = small_heap(9, 2 << 20);
    assert_eq!(a.recs, b.recs);
    assert_eq!(a.refs, b.refs);
    let near = canonical(&a).len();
    assert_eq!(near as u64, a.live_objects, "generated heap is fully reachable");
}

/// Stock ART's behaviour without claiming it, so the collector takes its generic (hook-calling)
/// trace loop.
struct GenericStock;
impl RuntimeHooks for GenericStock {}

/// Three full GCs (evacuating a fresh heap; mixed after new allocation and dropped roots;
/// compacting): statistics, every object's address and every page operation, in order.
/// `bookmark`: some objects carry [`BOOKMARK`].
fn full_gc_effects(hooks: &mut dyn RuntimeHooks, bookmark: bool) -> Vec<String> {
    let mut b = Recorder::default();
    let mut heap = small_heap_on(11, 6 << 20, &mut b);
    if bookmark {
        bookmark_some(&mut heap);
    }
    assert!(
        (0..heap.recs.len() as u32).any(|o| heap.is_large(o)),
        "the test heap has large objects"
    );
    let mut out = Vec::new();
    let gc =
        |heap: &mut Heap, b: &mut Recorder, kind, hooks: &mut dyn RuntimeHooks, out: &mut Vec<String>| {
            let st = collect(
                heap,
                hooks,
                kind,
                0,
                b,
                &mut CpuLedger::default(),
                &GcCosts::default(),
            );
            let addrs: Vec<(bool, u32)> = (0..heap.recs.len() as u32)
                .map(|o| (heap.is_alive(o), heap.addr(o)))
                .collect();
            out.push(format!("{st:?}\n{addrs:?}\n{:?}", b.log));
            b.log.clear();
        };
    gc(
        &mut heap,
        &mut b,
        GcKind::Full { compact: false },
        hooks,
        &mut out,
    );
    let spec = GraphSpec {
        bytes: 3 << 20,
        ..GraphSpec::default()
    };
    generate(
        &mut heap,
        &spec,
        &mut RngStreams::new(12).stream("more", 0),
        0,
        &mut b,
    )
    .unwrap();
    if bookmark {
        bookmark_some(&mut heap);
    }
    let roots = heap.roots.clone();
    for &r in roots.iter().step_by(3) {
        heap.remove_root(r);
    }
    gc(
        &mut heap,
        &mut b,
        GcKind::Full { compact: false },
        hooks,
        &mut out,
    );
    gc(&mut heap, &mut b, GcKind::Full { compact: true }, hooks, &mut out);
    // A young GC (generic loop) of objects allocated since.
    generate(
        &mut heap,
        &spec,
        &mut RngStreams::new(13).stream("young", 0),
        0,
        &mut b,
    )
    .unwrap();
    gc(&mut heap, &mut b, GcKind::Sticky, hooks, &mut out);
    out
}

/// Stock ART's hooks without [`RuntimeHooks::marks_silently`]: the collector calls their
/// (do-nothing) visit hooks.
struct LoudStock;
impl RuntimeHooks for LoudStock {
    fn is_stock(&self) -> bool {
        true
    }
}

/// Skipping the visit calls of silent hooks (stock ART) changes nothing: full (stock loop,
/// evacuating and mixed), compacting and young (generic loop) GCs have the same statistics,
/// addresses and page operations as with hooks the collector calls.
#[test]
fn silent_hooks_skip_the_visit_calls_with_the_same_effects() {
    assert!(StockArt.marks_silently() && !LoudStock.marks_silently());
    let silent = full_gc_effects(&mut StockArt, false);
    let loud = full_gc_effects(&mut LoudStock, false);
    assert_eq!(silent.len(), 4);
    for (i, (s, l)) in silent.iter().zip(&loud).enumerate() {
        assert!(s == l, "GC {i}: silent and called hooks differ");
    }
    assert!(silent[3].contains("sticky: true,"), "{}", &silent[3][..80]);
}

#[test]
fn stock_full_gc_loop_has_the_generic_loops_effects() {
    let fast = full_gc_effects(&mut StockArt, false);
    let generic = full_gc_effects(&mut GenericStock, false);
    for (i, (f, g)) in fast.iter().zip(&generic).enumerate() {
        assert!(f == g, "GC {i}: the stock loop and the generic loop differ");
    }
    // The mixed GC both copied and marked in place, and the heap had large objects.
    assert!(fast[1].contains("regions_unevacuated: ") && !fast[1].contains("regions_unevacuated: 0,"));
    assert!(!fast[1].contains("regions_evacuated: 0,"));
}

/// A policy that bookmarks some objects ([`RuntimeHooks::bookmark_mask`]) and claims
/// [`RuntimeHooks::is_stock`] gets the specialised loop with the generic loop's effects; the
/// bookmarked objects' pages are really skipped (the runs differ from stock's).
#[test]
fn bookmarking_policy_gets_the_stock_loop_with_the_generic_loops_effects() {
    let fast = full_gc_effects(&mut Bookmarking { claim: true }, true);
    let generic = full_gc_effects(&mut Bookmarking { claim: false }, true);
    for (i, (f, g)) in fast.iter().zip(&generic).enumerate() {
        assert!(f == g, "GC {i}: the stock loop and the generic loop differ");
    }
    let stock = full_gc_effects(&mut StockArt, true);
    assert!(
        fast.iter().zip(&stock).any(|(f, s)| f != s),
        "bookmarked objects are not touched"
    );
}

/// `Heap::check_invariants` (soak runs) catches damage: a wrong live count, a wrong byte count,
/// a reference to a dead object.
#[test]
fn heap_invariant_check_catches_damage() {
    let heap = small_heap(3, 1 << 20);
    heap.check_invariants().unwrap();
    let mut h = small_heap(3, 1 << 20);
    h.live_objects += 1;
    assert!(h.check_invariants().unwrap_err().contains("live_objects"));
    let mut h = small_heap(3, 1 << 20);
    h.bytes_allocated -= 8;
    assert!(h.check_invariants().unwrap_err().contains("bytes_allocated"));
    let mut h = small_heap(3, 1 << 20);
    let (o, k) = (0..h.recs.len() as u32)
        .find_map(|o| Some((o, h.refs_of(o).iter().position(|&d| d != NULL)?)))
        .unwrap();
    let dead = h.recs.len() as u32 + 5;
    let slot = h.recs[o as usize].ref_start as usize + k;
    h.refs[slot] = dead;
    assert!(
        h.check_invariants().unwrap_err().contains("dead object"),
        "{:?}",
        h.check_invariants()
    );
    // A region listing an object that is not alive (the stock trace's evacuation bitmap trusts
    // the lists).
    let mut h = small_heap(3, 1 << 20);
    let dead = h.recs.len() as u32 + 5;
    h.regions
        .iter_mut()
        .find(|r| !r.objs.is_empty())
        .unwrap()
        .objs
        .push(dead);
    assert!(h.check_invariants().unwrap_err().contains("not alive"));
}

thread_local! {
    static FAKE_NS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A clock that advances 1,000 ns per reading.
fn fake_clock() -> u64 {
    FAKE_NS.with(|c| {
        c.set(c.get() + 1000);
        c.get()
    })
}

/// The benchmark's GC probe times every collection on its thread when a clock is set, and reads
/// no clock otherwise; the collections' results do not depend on it.
#[test]
fn gc_clock_probe_times_collections_only_when_set() {
    use runtime::bench::{bench_heap, gc_host_ns, set_gc_clock};
    use runtime::gc::{collect_standalone, GcCosts, GcKind};
    let run = || {
        let mut heap = bench_heap(20_000);
        let mut l = engine::CpuLedger::default();
        let mut b = runtime::NullBacking::default();
        let full = GcKind::Full { compact: true };
        let a = collect_standalone(
            &mut heap,
            &mut runtime::StockArt,
            full,
            0,
            &mut b,
            &mut l,
            &GcCosts::default(),
        );
        let c = collect_standalone(
            &mut heap,
            &mut runtime::StockArt,
            full,
            1,
            &mut b,
            &mut l,
            &GcCosts::default(),
        );
        (a.visits, c.visits, c.bytes_copied)
    };
    set_gc_clock(None);
    let plain = run();
    assert_eq!(gc_host_ns(), 0, "no clock set: nothing measured");
    let before = FAKE_NS.with(|c| c.get());
    set_gc_clock(Some(fake_clock));
    let timed = run();
    assert_eq!(plain, timed, "timing does not change a collection");
    assert_eq!(gc_host_ns(), 2 * 1000, "two collections, one clock step each");
    assert_eq!(
        FAKE_NS.with(|c| c.get()) - before,
        4 * 1000,
        "two readings per collection"
    );
    set_gc_clock(None);
}

/// Resident pages of the mock backing.
fn resident(b: &MockBacking) -> usize {
    b.pages.iter().filter(|&&p| p == MockPage::Resident).count()
}

/// One churn cycle: 2 MiB of garbage, then a full GC at `t`.
fn churn_and_collect(rt: &mut Runtime, t: u64, b: &mut MockBacking, l: &mut CpuLedger) {
    let prim = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    for _ in 0..256 {
        rt.alloc(t, prim, 8 << 10, 0, b, l).unwrap();
    }
    rt.collect(t, GcCause::Explicit, Some(GcKind::Full { compact: true }), b, l);
}

#[test]
fn dalvik_keeps_freed_heap_pages_until_the_idle_trim_and_art_releases_them_at_gc() {
    let dalvik = HeapConfig {
        trim_delay_ns: Some(5_000_000_000),
        ..HeapConfig::default()
    };
    let (mut art, mut dvm) = (
        Runtime::new(3, HeapConfig::default(), StockArt),
        Runtime::new(3, dalvik, StockArt),
    );
    let (mut ba, mut bd) = (MockBacking::new(0), MockBacking::new(0));
    let mut l = CpuLedger::default();
    churn_and_collect(&mut art, 0, &mut ba, &mut l);
    churn_and_collect(&mut dvm, 0, &mut bd, &mut l);
    // ART: the evacuated regions' pages go back at the GC.
    assert!(ba.released_pages >= 400, "{}", ba.released_pages);
    assert!(art.trim_due.is_none());
    // Dalvik: nothing released; the pages stay resident and the next churn reuses them.
    assert_eq!(bd.released_pages, 0);
    let before = resident(&bd);
    assert!(before >= resident(&ba) + 400);
    let due = dvm.trim_due.expect("trim scheduled after the GC");
    let gc_end = dvm.history[0].duration_ns;
    assert_eq!(due, gc_end + 5_000_000_000);
    churn_and_collect(&mut dvm, 1_000_000_000, &mut bd, &mut l);
    assert_eq!(bd.released_pages, 0);
    assert!(
        resident(&bd) <= before + 8,
        "reused in place: {} vs {before}",
        resident(&bd)
    );
    // The second GC postponed the trim; nothing happens before it is due.
    let due = dvm.trim_due.unwrap();
    assert!(due > 6_000_000_000);
    assert_eq!(dvm.next_due(), Some(due));
    assert!(dvm.tick(due - 1, &mut bd, &mut l).is_none());
    assert_eq!(bd.released_pages, 0);
    assert!(dvm.tick(due, &mut bd, &mut l).is_none(), "a trim is not a GC");
    assert!(bd.released_pages >= 400 && dvm.trimmed_pages == bd.released_pages);
    assert!(dvm.trim_due.is_none() && dvm.next_due().is_none());
    assert!(resident(&bd) <= resident(&ba) + 8);
}
