//! Linked allocation (`runtime::linked`): objects stored into the live graph through the write
//! barrier, alive exactly while linked, unlinked after their sampled number of GCs with the
//! survival Fleet Fig. 5 reports (FGO > 40% after 15 GCs, BGO mostly dead within a few).

use engine::{CpuLedger, RngStreams};
use runtime::heap::Meta;
use runtime::linked::HOLDER_DEPTH;
use runtime::{
    Access, AccessKind, BarrierOutcome, Blueprint, ClassKind, GcCause, GcKind, HeapConfig, JavaApp,
    JavaModel, JavaParams, LinkedParams, NullBacking, RuntimeHooks, NULL,
};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Stock ART that counts reference stores passing the barrier: [non-null, null].
struct CountStores(Arc<[AtomicU64; 2]>);

impl RuntimeHooks for CountStores {
    fn barrier(&mut self, a: &Access, _meta: &mut Meta) -> BarrierOutcome {
        if let AccessKind::RefStore { target, .. } = a.kind {
            self.0[usize::from(target == NULL)].fetch_add(1, Ordering::Relaxed);
        }
        BarrierOutcome::TOUCH
    }
}

fn app(share: f64) -> JavaApp {
    app_counting(share).0
}

fn app_counting(share: f64) -> (JavaApp, Arc<[AtomicU64; 2]>) {
    let stores = Arc::new([AtomicU64::new(0), AtomicU64::new(0)]);
    let model = JavaModel {
        blueprint: Arc::new(Blueprint::default()).into(),
        config: HeapConfig {
            capacity: 256 << 20,
            growth_limit: 128 << 20,
            ..HeapConfig::default()
        },
        params: JavaParams {
            linked: Some(LinkedParams {
                share,
                ..LinkedParams::default()
            }),
            ..JavaParams::default()
        },
    };
    let j = JavaApp::new(
        1,
        &model,
        Box::new(CountStores(Arc::clone(&stores))),
        1,
        RngStreams::new(3).stream("java", 0),
        0,
    );
    (j, stores)
}

/// Linked objects alive in the heap (by class).
fn alive_linked(j: &mut JavaApp) -> usize {
    let c = j.rt.heap.class_named("app.LinkedObject", ClassKind::Instance);
    let h = &j.rt.heap;
    (0..h.recs.len() as u32)
        .filter(|&o| h.is_alive(o) && h.class(o) == c)
        .count()
}

/// Objects referenced from the holders.
fn linked_refs(j: &JavaApp) -> Vec<u32> {
    j.linked
        .holders()
        .iter()
        .flat_map(|&h| j.rt.heap.refs_of(h).iter().copied())
        .filter(|&o| o != NULL)
        .collect()
}

fn full_gc(j: &mut JavaApp, t: u64, b: &mut NullBacking, l: &mut CpuLedger) {
    j.rt.collect(t, GcCause::Explicit, Some(GcKind::Full { compact: true }), b, l);
    // Expire lifetimes (a zero-byte step only unlinks).
    j.alloc_garbage(t + 1, 0.0, b, l).unwrap();
}

#[test]
fn linked_objects_are_stored_through_the_barrier_and_survive_while_linked() {
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    let (mut j, stores) = app_counting(0.5);
    j.set_foreground(0, true, &mut l);
    j.alloc_garbage(1, 2e6, &mut b, &mut l).unwrap();
    let n = j.linked.allocated;
    // Half of 2 MB in objects of 112 B.
    assert_eq!(n, (1e6 / 112.0) as u64);
    assert_eq!(j.linked.live() as u64, n);
    for t in 0..5 {
        full_gc(&mut j, 10 + 10 * t, &mut b, &mut l);
        let refs = linked_refs(&j);
        assert_eq!(refs.len(), j.linked.live(), "one holder slot per linked object");
        assert!(
            refs.iter().all(|&o| j.rt.heap.is_alive(o)),
            "a linked object was freed"
        );
    }
    // Unlinked objects are garbage: after one more GC only the linked ones are alive.
    full_gc(&mut j, 100, &mut b, &mut l);
    j.rt.collect(
        110,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut b,
        &mut l,
    );
    assert_eq!(alive_linked(&mut j), linked_refs(&j).len());
    assert!(j.linked.unlinked > 0 && j.linked.live() > 0);
    // Every link and every unlink passed the write barrier.
    // (Each holder's chain adds HOLDER_DEPTH stores; holders are not roots.)
    let holders = j.linked.holders().len() as u64;
    assert_eq!(
        stores[0].load(Ordering::Relaxed),
        n + holders * HOLDER_DEPTH as u64
    );
    assert!(j.linked.holders().iter().all(|h| !j.rt.heap.roots.contains(h)));
    assert_eq!(stores[1].load(Ordering::Relaxed), j.linked.unlinked);
}

#[test]
fn survival_follows_fleet_fig5_in_foreground_and_background() {
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    let mut j = app(1.0);
    j.set_foreground(0, true, &mut l);
    j.alloc_garbage(1, 3000.0 * 112.0, &mut b, &mut l).unwrap();
    let fg = j.linked.allocated as f64;
    for t in 0..15 {
        full_gc(&mut j, 10 + 10 * t, &mut b, &mut l);
    }
    let fgo15 = j.linked.live() as f64 / fg;
    assert!((0.38..0.55).contains(&fgo15), "FGO alive after 15 GCs: {fgo15}");
    // Background: a fresh batch, three GCs.
    j.set_foreground(1000, false, &mut l);
    let (live0, alloc0) = (j.linked.live(), j.linked.allocated);
    j.alloc_garbage(1001, 3000.0 * 112.0, &mut b, &mut l).unwrap();
    let bg = (j.linked.allocated - alloc0) as f64;
    let (mut fg_left, mut t) = (live0 as f64, 1010);
    for _ in 0..3 {
        full_gc(&mut j, t, &mut b, &mut l);
        t += 10;
        fg_left *= 0.95;
    }
    let bgo3 = (j.linked.live() as f64 - fg_left) / bg;
    assert!(bgo3 < 0.2, "BGO alive after 3 GCs: {bgo3}");
    assert!(bgo3 > 0.05, "BGO all died at once: {bgo3}");
}

#[test]
fn off_by_default_allocates_only_garbage() {
    let (mut b, mut l) = (NullBacking::default(), CpuLedger::default());
    let mut j = app(0.0);
    j.params.linked = None;
    j.alloc_garbage(1, 1e6, &mut b, &mut l).unwrap();
    assert_eq!(j.linked.allocated, 0);
    assert!(j.linked.holders().is_empty());
    assert_eq!(JavaParams::default().linked, None);
}
