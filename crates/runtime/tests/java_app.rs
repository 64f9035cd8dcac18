//! The framework-facing Java heap: blueprints built object by object through the runtime (with
//! GCs running meanwhile) give exactly the blueprint's graph; churn keeps it; logical-page accesses
//! follow objects when the collector moves them.

use engine::{Actor, CpuLedger, RngStreams};
use runtime::backing::{MockBacking, MockPage};
use runtime::gen::{GraphSpec, SyntheticSpec};
use runtime::{
    Blueprint, GcCause, GcKind, HeapConfig, JavaApp, JavaModel, JavaParams, NullBacking, StockArt, NULL,
};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;

fn small_config() -> HeapConfig {
    HeapConfig {
        capacity: 64 << 20,
        growth_limit: 32 << 20,
        initial_size: 1 << 20,
        min_free: 256 << 10,
        max_free: 1 << 20,
        ..HeapConfig::default()
    }
}

fn generated(bytes: u64, seed: u64) -> Blueprint {
    let spec = GraphSpec {
        bytes,
        local_refs: 0.85,
        shared_refs: 0.1,
        ..GraphSpec::default()
    };
    spec.blueprint(&mut RngStreams::new(seed).stream("bp", 0))
}

fn app(bp: Blueprint, pages: u32, params: JavaParams) -> JavaApp {
    let model = JavaModel {
        blueprint: Arc::new(bp).into(),
        config: small_config(),
        params,
    };
    JavaApp::new(
        1,
        &model,
        Box::new(StockArt),
        pages,
        RngStreams::new(5).stream("java", 0),
        0,
    )
}

/// Every blueprint object is alive with its size and its references, after building and GCs.
fn assert_graph(j: &JavaApp) {
    let bp = Arc::clone(&j.bp);
    let h = &j.rt.heap;
    for i in 0..bp.len() as u32 {
        let id = j.id_of(i);
        assert!(h.is_alive(id), "blueprint object {i} is not alive");
        assert_eq!(h.size(id), bp.size(i as usize), "size of object {i}");
        let mut want: Vec<u32> = bp
            .slots(i)
            .map(|t| if t == NULL { NULL } else { j.id_of(t) })
            .collect();
        want.resize(bp.nslots(i as usize) as usize, NULL);
        assert_eq!(h.nrefs(id), bp.nslots(i as usize), "slot count of object {i}");
        let mut got = h.refs_of(id).to_vec();
        got.resize(want.len(), NULL);
        assert_eq!(got, want, "references of object {i}");
    }
    for &r in &bp.roots {
        assert!(h.roots.contains(&j.id_of(r)), "root {r} missing");
    }
}

#[test]
fn quiet_instantiation_matches_the_blueprint() {
    let bp = generated(2 << 20, 1);
    let mut heap = runtime::Heap::new(1, small_config());
    let ids = bp
        .instantiate_quiet(&mut heap, 0, &mut NullBacking::default())
        .unwrap();
    assert_eq!(ids.len(), bp.len());
    assert_eq!(heap.bytes_allocated, bp.total_bytes());
    for i in 0..bp.len() {
        let mut t: Vec<u32> = bp
            .slots(i as u32)
            .map(|t| if t == NULL { NULL } else { ids[t as usize] })
            .collect();
        t.resize(bp.nslots(i) as usize, NULL);
        assert_eq!(heap.nrefs(ids[i]), bp.nslots(i));
        let mut got = heap.refs_of(ids[i]).to_vec();
        got.resize(t.len(), NULL);
        assert_eq!(got, t);
    }
    // Every object comes after one that references it, or is a root: allocating in order and
    // linking at once keeps every object reachable.
    let mut referenced = vec![false; bp.len()];
    for i in 0..bp.len() {
        assert!(
            bp.is_root(i) || referenced[i],
            "object {i} unreachable when allocated"
        );
        for t in bp.slots(i as u32) {
            if t != NULL {
                referenced[t as usize] = true;
            }
        }
    }
}

#[test]
fn progressive_build_with_gcs_yields_the_blueprint_graph() {
    let bp = generated(8 << 20, 2);
    let pages = (bp.total_bytes() / 4096) as u32;
    let mut j = app(bp, pages, JavaParams::default());
    let mut b = MockBacking::new(1000);
    let mut l = CpuLedger::default();
    // Grow in steps, with short-lived allocation in between (GCs run during the build).
    for step in 1..=8u32 {
        j.build_to(step as u64 * 1000, pages * step / 8, &mut b, &mut l)
            .unwrap();
        j.alloc_garbage(step as u64 * 1000, 3e6, &mut b, &mut l).unwrap();
    }
    assert_eq!(j.built_objects(), j.bp.len());
    assert!(
        j.rt.history.len() >= 3,
        "GCs ran during the build: {}",
        j.rt.history.len()
    );
    assert_graph(&j);
    // A full compacting GC keeps it, and frees the garbage.
    j.rt.collect(
        9000,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut b,
        &mut l,
    );
    assert_graph(&j);
    assert_eq!(j.rt.heap.bytes_allocated, j.bp.total_bytes());
}

#[test]
fn churn_replaces_leaves_in_place() {
    let mut spec = SyntheticSpec::churning_4k_arrays();
    spec.footprint = 8 << 20;
    let bp = spec.blueprint();
    // The recipe: footprint / (4 KiB + array header) arrays, held by Object[1024] roots.
    let arrays = ((8u64 << 20) as f64 / (4096.0 + 12.0)).round() as usize;
    let holders = arrays.div_ceil(1024);
    assert_eq!(bp.len(), arrays + holders);
    // Both kinds are 12 + 4,096 bytes, aligned to 8.
    assert_eq!(bp.total_bytes(), (arrays + holders) as u64 * 4112);
    assert_eq!(SyntheticSpec::idle_uniform(512).footprint, 180_000_000);
    let pages = (bp.total_bytes() / 4096) as u32;
    let params = churn_only(1 << 20);
    let mut j = app(bp, pages, params);
    let mut b = MockBacking::new(1000);
    let mut l = CpuLedger::default();
    j.build_to(0, pages, &mut b, &mut l).unwrap();
    let before: Vec<u32> = (0..j.bp.len() as u32).map(|i| j.id_of(i)).collect();
    let mut rounds = 0;
    while j.next_churn() <= 60_000_000_000 {
        rounds += j.churn(j.next_churn(), &mut b, &mut l).unwrap().1;
    }
    assert_eq!(rounds, 12);
    assert_graph(&j);
    let changed = (0..j.bp.len() as u32)
        .filter(|&i| j.id_of(i) != before[i as usize])
        .count();
    assert!(changed > 100, "churn replaced {changed} objects");
    j.rt.collect(
        61_000_000_000,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut b,
        &mut l,
    );
    assert_eq!(
        j.rt.heap.bytes_allocated,
        j.bp.total_bytes(),
        "replaced objects were freed"
    );
}

#[test]
fn churn_same_replaces_the_same_objects_every_round() {
    let mut spec = SyntheticSpec::churning_4076_arrays();
    spec.footprint = 8 << 20;
    let bp = spec.blueprint();
    // The artifact's byte[4076]: with its header, one page.
    assert!((0..bp.len()).any(|i| bp.size(i) == 4088));
    let pages = (bp.total_bytes() / 4096) as u32;
    let params = JavaParams {
        churn_bytes: 1 << 20,
        churn_period: 5_000_000_000,
        fg_alloc_bytes_per_s: 0.0,
        bg_alloc_bytes_per_s: 0.0,
        launch_alloc_bytes: 0,
        churn_same: true,
        linked: None,
        launch_bias: None,
    };
    let mut j = app(bp, pages, params);
    let mut b = MockBacking::new(1000);
    let mut l = CpuLedger::default();
    j.build_to(0, pages, &mut b, &mut l).unwrap();
    let ids = |j: &JavaApp| -> Vec<u32> { (0..j.bp.len() as u32).map(|i| j.id_of(i)).collect() };
    let before = ids(&j);
    j.churn(5_000_000_000, &mut b, &mut l).unwrap();
    let once = ids(&j);
    j.churn(60_000_000_000, &mut b, &mut l).unwrap();
    let later = ids(&j);
    assert_graph(&j);
    // The slots replaced later are exactly those replaced by the first round.
    let first: Vec<usize> = (0..before.len()).filter(|&i| before[i] != once[i]).collect();
    let all: Vec<usize> = (0..before.len())
        .filter(|&i| before[i] != later[i] || once[i] != later[i])
        .collect();
    assert!(first.len() > 100);
    assert_eq!(first, all, "churn_same touched other objects");
}

#[test]
fn logical_pages_follow_objects_the_collector_moves() {
    let bp = generated(2 << 20, 3);
    let pages = (bp.total_bytes() / 4096) as u32;
    let mut j = app(bp, pages, JavaParams::default());
    let mut b = MockBacking::new(1000);
    let mut l = CpuLedger::default();
    j.build_to(0, pages, &mut b, &mut l).unwrap();
    let logical: Vec<u32> = (0..pages).step_by(7).collect();
    let mut before = Vec::new();
    j.touch_logical(1, Actor::AppMain(1), &logical, false, &mut b, Some(&mut before));
    // Allocate garbage so the compaction moves the long-lived objects, then compact.
    j.alloc_garbage(2, 4e6, &mut b, &mut l).unwrap();
    j.rt.collect(
        3,
        GcCause::Explicit,
        Some(GcKind::Full { compact: true }),
        &mut b,
        &mut l,
    );
    let mut after = Vec::new();
    b.swap_out_all();
    let faults = b.faults_main;
    let stall = j.touch_logical(4, Actor::AppMain(1), &logical, false, &mut b, Some(&mut after));
    assert!(!after.is_empty());
    assert_ne!(
        before, after,
        "the same logical pages map to the objects' new pages"
    );
    // The touched pages are exactly the ones faulted back in (all were swapped out).
    after.sort_unstable();
    after.dedup();
    assert_eq!(b.faults_main - faults, after.len() as u64);
    assert_eq!(stall.ns, after.len() as u64 * 1000);
    for &p in &after {
        assert_eq!(b.pages[p as usize], MockPage::Resident);
    }
    // Unbuilt logical pages touch nothing.
    let mut j2 = app(generated(2 << 20, 3), pages, JavaParams::default());
    j2.build_to(0, pages / 2, &mut b, &mut l).unwrap();
    assert!(j2.is_built(pages / 2 - 1) && !j2.is_built(pages - 1));
    let mut none = Vec::new();
    j2.touch_logical(5, Actor::AppMain(1), &[pages - 1], false, &mut b, Some(&mut none));
    assert!(none.is_empty());
}

/// Stock hooks that do not declare their barrier default: accesses take the object-by-object path.
struct ObjectByObject;
impl runtime::RuntimeHooks for ObjectByObject {}

/// The memoised access path (stock ART's default barrier) touches exactly what the
/// object-by-object path touches — same pages, same coalesced calls, same stalls — across
/// building, short-lived allocation, churn, GCs, compaction and swapping.
#[test]
fn memoised_accesses_touch_what_object_by_object_accesses_touch() {
    paths_agree(Box::new(StockArt), Box::new(ObjectByObject), &|_| {});
}

/// Like Fleet's: a barrier that acts (counts accesses) only while `active`, and declares itself
/// default otherwise (`fast`) or never (`slow`).
struct Moded {
    active: Rc<Cell<bool>>,
    fast: bool,
    seen: Rc<Cell<u64>>,
}
impl runtime::RuntimeHooks for Moded {
    fn default_barrier(&self) -> bool {
        self.fast && !self.active.get()
    }
    fn barrier(&mut self, _: &runtime::Access, _: &mut runtime::heap::Meta) -> runtime::BarrierOutcome {
        if self.active.get() {
            self.seen.set(self.seen.get() + 1);
        }
        runtime::BarrierOutcome::TOUCH
    }
}

/// A state-dependent `default_barrier` (on in some phases, off in others) keeps both paths in
/// agreement, and the barrier sees every access while it acts.
#[test]
fn a_barrier_that_acts_in_phases_sees_the_same_accesses_on_both_paths() {
    let active = Rc::new(Cell::new(false));
    let seen = [Rc::new(Cell::new(0)), Rc::new(Cell::new(0))];
    let moded = |fast: bool, seen: &Rc<Cell<u64>>| {
        Box::new(Moded {
            active: Rc::clone(&active),
            fast,
            seen: Rc::clone(seen),
        })
    };
    paths_agree(moded(true, &seen[0]), moded(false, &seen[1]), &|step| {
        active.set(step % 4 == 1)
    });
    assert!(seen[0].get() > 0, "the barrier acted in its phases");
    assert_eq!(seen[0].get(), seen[1].get(), "accesses seen by the barrier");
}

/// Drive two identical apps with `a` and `b` hooks through building, short-lived allocation,
/// churn, GCs, compaction and swapping (`phase(step)` runs before each step) and check they
/// touch the same pages, with the same coalesced calls and stalls.
fn paths_agree(a: Box<dyn runtime::RuntimeHooks>, b: Box<dyn runtime::RuntimeHooks>, phase: &dyn Fn(u64)) {
    let params = JavaParams {
        churn_bytes: 64 << 10,
        churn_period: 450,
        ..JavaParams::default()
    };
    let bp = Arc::new(generated(4 << 20, 9));
    let pages = (bp.total_bytes() / 4096) as u32;
    let model = JavaModel {
        blueprint: Arc::clone(&bp).into(),
        config: small_config(),
        params,
    };
    let mk = |hooks: Box<dyn runtime::RuntimeHooks>| {
        JavaApp::new(1, &model, hooks, pages, RngStreams::new(5).stream("java", 0), 0)
    };
    let mut apps = [mk(a), mk(b)];
    let mut backs = [MockBacking::new(700), MockBacking::new(700)];
    let mut rng = RngStreams::new(11).stream("touches", 0);
    let mut stalls: [Vec<u64>; 2] = [Vec::new(), Vec::new()];
    for step in 0..40u64 {
        phase(step);
        let t = step * 100;
        let picks: Vec<Vec<u32>> = (0..30)
            .map(|_| {
                let n = if rand::Rng::gen_bool(&mut rng, 0.8) { 1 } else { 4 };
                (0..n)
                    .map(|_| rand::Rng::gen_range(&mut rng, 0..pages + 2))
                    .collect()
            })
            .collect();
        let write = step % 3 == 0;
        for k in 0..2 {
            let (j, b) = (&mut apps[k], &mut backs[k]);
            let mut l = CpuLedger::default();
            j.alloc_garbage(t, 600e3, b, &mut l).unwrap();
            j.churn(t, b, &mut l).unwrap();
            for (i, p) in picks.iter().enumerate() {
                if step < 10 && i % 10 == 0 {
                    // Growth between accesses: partly built logical pages get more objects.
                    let to = pages * (step as u32 * 3 + i as u32 / 10 + 1) / 30;
                    j.build_to(t, to, b, &mut l).unwrap();
                }
                if i == 15 && step % 3 == 1 {
                    // Between accesses, with nothing else changing: the collector moves objects.
                    let compact = step % 2 == 0;
                    j.rt.collect(t, GcCause::Explicit, Some(GcKind::Full { compact }), b, &mut l);
                }
                if i == 10 && step % 5 == 4 {
                    b.swap_out_all();
                }
                let s = j.touch_logical(t + 1, Actor::AppMain(1), p, write, b, None);
                stalls[k].push(s.ns);
            }
        }
    }
    assert!(
        apps[0].rt.history.len() >= 5,
        "GCs ran: {}",
        apps[0].rt.history.len()
    );
    assert!(backs[0].total_faults() > 0, "swapped pages were faulted back");
    let first_diff = (0..stalls[0].len()).find(|&i| stalls[0][i] != stalls[1][i]);
    assert_eq!(first_diff, None, "per-call stalls differ first at call");
    assert_eq!(
        backs[0].touch_calls, backs[1].touch_calls,
        "coalesced backing calls"
    );
    assert_eq!(backs[0].touches, backs[1].touches, "touches per page");
    assert_eq!(backs[0].writes, backs[1].writes, "writes per page");
    assert_eq!(backs[0].faults_main, backs[1].faults_main);
}

/// Parameters of an app whose only activity is churning `churn_bytes` every 5 s.
fn churn_only(churn_bytes: u64) -> JavaParams {
    JavaParams {
        churn_bytes,
        churn_period: 5_000_000_000,
        fg_alloc_bytes_per_s: 0.0,
        bg_alloc_bytes_per_s: 0.0,
        launch_alloc_bytes: 0,
        churn_same: false,
        linked: None,
        launch_bias: None,
    }
}

/// A heap of 4 KiB arrays built at 0, then swapped out: every access faults.
fn swapped_churning_app(b: &mut MockBacking, churn_bytes: u64) -> JavaApp {
    let mut spec = SyntheticSpec::churning_4076_arrays();
    spec.footprint = 8 << 20;
    let bp = spec.blueprint();
    let pages = (bp.total_bytes() / 4096) as u32;
    let params = churn_only(churn_bytes);
    let mut j = app(bp, pages, params);
    let mut l = CpuLedger::default();
    j.build_to(0, pages, b, &mut l).unwrap();
    b.swap_out_all();
    j
}

#[test]
fn a_churn_round_that_stalls_past_the_period_delays_the_next() {
    // 2 s per fault: the round's stores to its (swapped) bucket arrays outlast the 5 s period.
    let mut b = MockBacking::new(2_000_000_000);
    let mut j = swapped_churning_app(&mut b, 1 << 20);
    let mut l = CpuLedger::default();
    let due = j.next_churn();
    let (cost, rounds) = j.churn(due, &mut b, &mut l).unwrap();
    let end = due + cost.main_stall.ns;
    assert_eq!(rounds, 1);
    assert!(
        end > due + 5_000_000_000,
        "round ended at {end}, not past the period"
    );
    // The app's thread is busy until `end`: no round starts before it.
    assert!(j.next_churn() >= end, "next round at {} < {end}", j.next_churn());
    assert_eq!(j.churn(end - 1, &mut b, &mut l).unwrap().1, 0);
}

#[test]
fn a_step_waits_for_the_device_once() {
    // One FIFO device: everything the main thread waits for is device time it queued for, so its
    // stall cannot exceed the device's busy time since the step started (plus GC CPU and pauses).
    let mut b = MockBacking::new(1_000_000);
    let mut j = swapped_churning_app(&mut b, 4 << 20);
    let t = j.next_churn();
    b.fifo_busy_until = Some(t);
    let gcs = j.rt.history.len();
    let mut l = CpuLedger::default();
    let (cost, _) = j.churn(t, &mut b, &mut l).unwrap();
    let gc_cpu: u64 = j.rt.history[gcs..].iter().map(|g| g.cpu_ns + g.pause_ns).sum();
    let busy = b.fifo_busy_until.unwrap();
    assert!(cost.main_stall.ns > 0);
    assert!(
        t + cost.main_stall.ns <= busy + gc_cpu,
        "main thread stalled until {} but the device was busy only until {busy} (+{gc_cpu} GC CPU)",
        t + cost.main_stall.ns
    );
}

#[test]
fn collections_of_one_app_never_overlap() {
    let mut b = MockBacking::new(1_000_000);
    let mut j = swapped_churning_app(&mut b, 1 << 20);
    let mut l = CpuLedger::default();
    let full = Some(GcKind::Full { compact: false });
    let a =
        j.rt.collect(10_000_000_000, GcCause::Explicit, full, &mut b, &mut l);
    assert!(
        a.duration_ns > 1_000_000_000,
        "the first GC faults its heap back in"
    );
    // Requested while the first still runs: it starts when the GC thread is free.
    let c =
        j.rt.collect(10_000_000_001, GcCause::Explicit, full, &mut b, &mut l);
    assert_eq!(c.start, a.start + a.duration_ns);
}

#[test]
fn compact_blueprint_keeps_sizes_slots_roots_and_late_links() {
    use runtime::blueprint::{class, Blueprint, LateLinks};
    use runtime::heap::ClassKind;
    // Source objects: 0 -> [NULL, 2, NULL, NULL] (interior and trailing nulls), 1 -> [2, 2] (two
    // slots to one target), 2 -> [] ; allocated in order 0, 1, 2. Object 2 has two late sources.
    let bp = Blueprint::from_parts(
        vec![class("A", ClassKind::Instance)],
        &[0, 0, 0],
        &[13, 24, 8],
        &[0, 4, 6, 6],
        &[NULL, 2, NULL, NULL, 2, 2],
        &[0, 1],
        &[0, 1, 2],
    );
    assert_eq!((bp.size(0), bp.size(1), bp.size(2)), (16, 24, 8));
    assert_eq!((bp.start(1), bp.start(3), bp.total_bytes()), (16, 48, 48));
    assert_eq!(bp.slots(0).collect::<Vec<_>>(), [NULL, 2]);
    assert_eq!((bp.nslots(0), bp.nslots(1), bp.nslots(2)), (4, 2, 0));
    assert!(bp.is_root(0) && bp.is_root(1) && !bp.is_root(2));
    // Late links come out when their target is allocated, by source then slot.
    let mut late = LateLinks::default();
    let mut got = Vec::new();
    for i in 0..3 {
        while let Some(l) = late.next_for(i) {
            got.push((i, l));
        }
        late.allocated(&bp, i);
    }
    assert_eq!(got, vec![(2, (0, 1)), (2, (1, 0)), (2, (1, 1))]);
    assert_eq!(late.next_for(2), None);
    assert_eq!(
        (bp.object_at(15), bp.object_at(16), bp.objects_below(17)),
        (0, 1, 2)
    );
}
