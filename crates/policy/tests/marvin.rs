//! Mechanism tests of the `marvin` policy on a small Java heap (`runtime::JavaApp` over a
//! `MockBacking`, whose swapped pages count as faults per thread), with the policy's own hook
//! objects: Clock coldness, stubs in the page-aligned space, the WriteTask, the shrinker's
//! victims, bookmarking GC, object faults, dirty objects and swap-file compaction.

use engine::{Actor, CpuLedger, HookCx, Nanos, RngStreams, Timers, NS_PER_SEC};
use hotlaunch_policy::marvin::runtime::{MarvinRuntime, SWAPPED_IN_GROUP};
use hotlaunch_policy::marvin::state::*;
use hotlaunch_policy::marvin::{kernel::TableShrinker, Cfg, Marvin};
use hotlaunch_policy::{resolve_params, ParamValue, Policy, Shared};
use kernel::hooks::{ScanControl, Shrinker};
use kernel::types::PageIdx;
use runtime::gen::SyntheticSpec;
use runtime::heap::HeapConfig;
use runtime::{JavaApp, JavaModel, JavaParams, MockBacking};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

fn cfg() -> Cfg {
    Cfg {
        stub_threshold: 2048,
        cold_rounds: 4,
        fg_period: 5 * NS_PER_SEC,
        bg_period: 30 * NS_PER_SEC,
        startup_delay: 6 * NS_PER_SEC,
        transition_wait: 5 * NS_PER_SEC,
        bg_walks_per_stub_round: 6,
        write_task_bytes: 1 << 30,
        compact_threshold: 0.25,
        barrier_ns: 10,
        stub_ns: 200,
        rte_scan_ns: 20,
        // Off here so the shrinker tests find saved objects; tested on its own below.
        reclaim_at_stub_round: false,
        flash: (100_000.0, 0.5, 100_000.0, 0.2),
    }
}

struct Rig {
    j: JavaApp,
    b: MockBacking,
    l: CpuLedger,
    tab: AppRef,
    global: Shared<Global>,
    t: Nanos,
}

fn rig() -> Rig {
    rig_with(cfg())
}

fn rig_with(c: Cfg) -> Rig {
    let spec = SyntheticSpec {
        footprint: 4 << 20,
        churn_bytes: 0,
        ..SyntheticSpec::churning_4076_arrays()
    };
    let bp = spec.blueprint();
    let pages = (bp.total_bytes() / 4096) as u32;
    let model = JavaModel {
        blueprint: Arc::new(bp).into(),
        config: HeapConfig::pixel3().large_heap(),
        params: JavaParams {
            fg_alloc_bytes_per_s: 0.0,
            bg_alloc_bytes_per_s: 0.0,
            launch_alloc_bytes: 0,
            ..JavaParams::default()
        },
    };
    let tab: AppRef = Rc::new(RefCell::new(AppTable {
        foreground: true,
        ..AppTable::default()
    }));
    let global = Shared::new(Global {
        apps: vec![Some(tab.clone())],
        order: VictimOrder::Lru,
        eager_restore: true,
        rte_scan_ns: 20,
        retired: Counters::default(),
        reclaims: Vec::new(),
        reclaimed_pages: 0,
        restores: Vec::new(),
        restore_rate: 0.1,
        flash_read: (200_000.0, 0.55),
    });
    let hooks = Box::new(MarvinRuntime::new(tab.clone(), c));
    let j = JavaApp::new(1, &model, hooks, pages, RngStreams::new(5).stream("java", 0), 0);
    let mut r = Rig {
        j,
        b: MockBacking::new(1_000_000),
        l: CpuLedger::default(),
        tab,
        global,
        t: 0,
    };
    r.j.build_to(0, u32::MAX, &mut r.b, &mut r.l).unwrap();
    r
}

impl Rig {
    /// Run the runtime's scheduled GCs up to `until`.
    fn run_until(&mut self, until: Nanos) {
        while let Some(due) = self.j.pending_gc() {
            if due > until {
                break;
            }
            self.t = due.max(self.t);
            self.j.tick(self.t, &mut self.b, &mut self.l);
        }
        self.t = until;
    }
    /// The pages of the ranges Marvin's shrinker names (one range per object).
    fn shrink(&mut self, want: u64) -> Vec<PageIdx> {
        let mut timers = Timers::default();
        let mut cx = HookCx::new(self.t, Actor::Kswapd, &mut self.l, &mut timers);
        let sc = ScanControl {
            priority: 12,
            kswapd: true,
            pass: 0,
            nr_to_reclaim: want,
        };
        let mut ranges = Vec::new();
        TableShrinker(self.global.clone()).shrink_ranges(&mut cx, &sc, want, &mut ranges);
        ranges.iter().flat_map(|r| r.first..r.first + r.pages).collect()
    }
    /// Background for long enough that stubs exist and are saved.
    fn go_background_until_saved(&mut self) {
        self.run_until(40 * NS_PER_SEC);
        self.j.set_foreground(self.t, false, &mut self.l);
        self.run_until(self.t + 70 * NS_PER_SEC);
    }
    fn logical_pages(&self) -> u32 {
        self.j.built_pages()
    }
}

/// The artifact's Clock (`CheckAndUpdate`, `objectIsCold`): a write bit and a 4-bit write shift
/// register (bit 3 = the latest round), shifted at each full-heap walk. The reference model for
/// the on-demand write history.
#[derive(Clone, Copy, Default)]
struct ShiftRegister {
    wrote: bool,
    wsr: u8,
}

impl ShiftRegister {
    fn walk(&mut self) {
        self.wsr = (self.wsr >> 1) | ((self.wrote as u8) << 3);
        self.wrote = false;
    }
    fn cold(&self, rounds: u32) -> bool {
        let recent = (0xFu8 << (4 - (rounds - 1).min(4))) & 0xF;
        !self.wrote && self.wsr & recent == 0
    }
}

#[test]
fn clock_coldness_follows_the_artifact() {
    // wsr < 2 && !wrote for 4 rounds: written in interval 0, cold from interval 4 on.
    let mut log = WriteLog::default();
    assert!(is_cold(log.last(7), 0, 4), "never written: cold");
    log.write(7, 0);
    for cur in 0..=6 {
        assert_eq!(is_cold(log.last(7), cur, 4), cur >= 4, "interval {cur}");
    }
    log.forget(7);
    assert_eq!(log.last(7), NEVER, "a freed id has no history");
}

proptest::proptest! {
    /// Random app writes and full-heap walks on a few objects: at every walk (before its Clock
    /// step, as stub creation asks) and after it (as the WriteTask asks), the on-demand history
    /// gives the shift register's answer for every `cold_rounds`.
    #[test]
    fn on_demand_history_matches_the_shift_register(
        ops in proptest::collection::vec((0u8..10, 0u32..4), 1..300),
        rounds in 1u32..=5,
    ) {
        let mut regs = [ShiftRegister::default(); 4];
        let mut log = WriteLog::default();
        let mut interval = 0u32;
        for (op, o) in ops {
            if op < 7 {
                regs[o as usize].wrote = true;
                log.write(o, interval);
            } else if op < 9 {
                interval += 1;
                for (i, r) in regs.iter_mut().enumerate() {
                    proptest::prop_assert_eq!(r.cold(rounds), is_cold(log.last(i as u32), interval - 1, rounds));
                    r.walk();
                    proptest::prop_assert_eq!(r.cold(rounds), is_cold(log.last(i as u32), interval, rounds));
                }
            } else {
                regs[o as usize] = ShiftRegister::default();
                log.forget(o);
            }
        }
    }
}

#[test]
fn stubs_are_page_aligned_saved_and_reclaimable_in_the_background_only() {
    let mut r = rig();
    r.run_until(40 * NS_PER_SEC);
    assert_eq!(r.tab.borrow().c.stubs_created, 0, "no stubs in the foreground");
    r.j.set_foreground(r.t, false, &mut r.l);
    r.run_until(r.t + 70 * NS_PER_SEC);
    let t = r.tab.borrow();
    assert!(
        t.c.stubs_created > 900,
        "cold arrays got stubs: {}",
        t.c.stubs_created
    );
    let heap = &r.j.rt.heap;
    for e in &t.table {
        assert_eq!(heap.addr(e.obj) % 4096, 0, "page-aligned swapped-in space");
        assert_eq!(e.pages, 1, "a 4076-byte array fits one page");
        assert_eq!(
            heap.regions[heap.region_of(e.obj) as usize].group,
            SWAPPED_IN_GROUP
        );
    }
    assert!(
        t.c.saved_bytes > 3 << 20,
        "WriteTask saved them: {}",
        t.c.saved_bytes
    );
    assert!(r
        .b
        .advice_log
        .iter()
        .any(|a| a.2 == kernel::types::Advice::WriteAhead));
}

#[test]
fn gc_never_faults_a_reclaimed_object_and_an_app_access_does() {
    let mut r = rig();
    r.go_background_until_saved();
    let pages = r.shrink(u64::MAX);
    assert!(pages.len() > 900);
    for &p in &pages {
        r.b.swap_out(p, 1);
    }
    let gc_before = r.b.faults_gc;
    // Several background walks and a stub round: bookmarking reads stubs, never the objects.
    r.run_until(r.t + 400 * NS_PER_SEC);
    assert_eq!(r.b.faults_gc, gc_before, "the GC faulted a reclaimed object in");
    assert!(r.j.rt.history.len() > 10);
    // An app access to a reclaimed object is an object fault on the main thread.
    let all: Vec<u32> = (0..r.logical_pages()).collect();
    let main_before = r.b.faults_main;
    r.j.touch_logical(r.t, Actor::AppMain(1), &all, false, &mut r.b, None);
    assert!(r.b.faults_main > main_before);
    assert!(r.tab.borrow().c.object_faults > 900);
}

#[test]
fn a_dirty_saved_object_is_never_dropped() {
    let mut r = rig();
    r.go_background_until_saved();
    let all: Vec<u32> = (0..r.logical_pages()).collect();
    r.j.touch_logical(r.t, Actor::AppMain(1), &all, true, &mut r.b, None);
    assert!(r.tab.borrow().c.dirty_bytes > 3 << 20);
    assert!(
        r.shrink(u64::MAX).is_empty(),
        "dirty objects were handed to the kernel"
    );
}

#[test]
fn the_foreground_app_is_never_a_victim() {
    let mut r = rig();
    r.go_background_until_saved();
    r.j.set_foreground(r.t, true, &mut r.l);
    assert!(r.shrink(u64::MAX).is_empty());
    r.j.set_foreground(r.t, false, &mut r.l);
    assert!(!r.shrink(u64::MAX).is_empty());
}

#[test]
fn swap_file_compaction_keeps_every_live_object() {
    let mut r = rig();
    r.go_background_until_saved();
    let saved: Vec<u32> = {
        let t = r.tab.borrow();
        t.table
            .iter()
            .filter(|e| t.state(e.obj) & SAVED != 0)
            .map(|e| e.obj)
            .collect()
    };
    assert!(!saved.is_empty());
    {
        let mut t = r.tab.borrow_mut();
        let dead = t.file_bytes / 2;
        t.file_bytes += dead;
        t.dead_bytes = dead;
    }
    r.run_until(r.t + 31 * NS_PER_SEC);
    let t = r.tab.borrow();
    assert_eq!(t.c.compactions, 1);
    assert_eq!(t.dead_bytes, 0);
    for o in saved {
        assert!(t.state(o) & SAVED != 0, "object {o} lost its record");
    }
    let live: u64 = t
        .table
        .iter()
        .filter(|e| t.state(e.obj) & SAVED != 0)
        .map(|e| e.size as u64)
        .sum();
    assert_eq!(t.file_bytes, live);
}

#[test]
fn bad_parameters_are_one_line_errors() {
    let bad = |k: &str, v: ParamValue| {
        let e = resolve_params(&Marvin, &[(k.to_string(), v)])
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        // It names the key and says what was expected.
        assert!(e.contains(k) && e.contains("expected"), "{e}");
    };
    bad("stub_threshold", ParamValue::Int(0));
    bad("bg_period_s", ParamValue::Float(-1.0));
    bad("fg_period_s", ParamValue::Float(0.0));
    bad("no_such_key", ParamValue::Int(1));
    bad("victim_order", ParamValue::Str("random".into()));
    assert!(resolve_params(&Marvin, &[]).is_ok());
    assert_eq!(Marvin.name(), "marvin");
}

#[test]
fn eager_restore_runs_at_the_slower_of_runtime_and_flash() {
    let r = rig();
    let g = r.global;
    g.with(|g| {
        // 100 MB at 100 MB/s (runtime-bound; the flash reads at 550 MB/s).
        let ns = g.restore_ns(100_000_000);
        assert!((990_000_000..=1_010_000_000).contains(&ns), "{ns}");
        assert_eq!(g.restore_ns(0), 0);
    });
}

#[test]
fn a_stub_round_reclaims_clean_saved_objects_at_once_when_asked() {
    for on in [false, true] {
        let mut r = rig_with(Cfg {
            reclaim_at_stub_round: on,
            ..cfg()
        });
        r.go_background_until_saved();
        let t = r.tab.borrow();
        assert!(t.c.saved_bytes > 3 << 20);
        let reclaimed = t.table.iter().filter(|e| t.state(e.obj) & RECLAIMED != 0).count();
        let pageouts: Vec<(PageIdx, u32)> =
            r.b.advice_log
                .iter()
                .filter(|a| a.2 == kernel::types::Advice::PageOut)
                .map(|a| (a.0, a.1))
                .collect();
        if on {
            assert!(reclaimed > 900, "stub round dropped {reclaimed}");
            assert_eq!(t.c.stub_round_reclaimed_bytes, t.c.reclaimed_bytes);
            assert!(t.c.stub_round_reclaimed_bytes > 3 << 20);
            // Every dropped object's pages went to the kernel, and only those.
            for e in t.table.iter().filter(|e| t.state(e.obj) & RECLAIMED != 0) {
                assert!(pageouts.contains(&(e.first, e.pages)));
            }
            assert_eq!(pageouts.len(), reclaimed);
        } else {
            assert_eq!((reclaimed, t.c.stub_round_reclaimed_bytes), (0, 0));
            assert!(pageouts.is_empty());
        }
        drop(t);
        // Whatever the stub round dropped, the kernel finds nothing more to take there.
        assert_eq!(r.shrink(u64::MAX).is_empty(), on);
    }
}

#[test]
fn swap_files_mb_sizes_the_flash_swap_device() {
    let dev = device::DeviceProfile::builtin("pixelxl").unwrap();
    let cap = |mb: i64| {
        let p = resolve_params(&Marvin, &[("swap_files_mb".to_string(), ParamValue::Int(mb))]).unwrap();
        let parts = Marvin.build(&dev, Default::default(), &p).unwrap();
        assert_eq!(parts.backends.len(), 1, "one flash device, no zram");
        parts.backends[0].usage().capacity_pages
    };
    assert_eq!(cap(8192), 8192 * 256);
    assert_eq!(cap(100), 100 * 256);
}

/// The kinds (compacting = stub round) of the next `n` WriteTask collections, from `now`.
fn write_tasks(
    m: &mut MarvinRuntime,
    heap: &runtime::heap::Heap,
    now: &mut Nanos,
    fg: bool,
    n: usize,
) -> Vec<bool> {
    use runtime::gc::{GcCause, GcKind};
    use runtime::hooks::RuntimeHooks;
    let (mut l, mut timers) = (CpuLedger::default(), Timers::default());
    (0..n)
        .map(|_| {
            let mut cx = HookCx::new(*now, Actor::Kswapd, &mut l, &mut timers);
            let (due, kind) = m.next_task(&mut cx, heap, fg).unwrap();
            let mut cx = HookCx::new(due, Actor::Kswapd, &mut l, &mut timers);
            *now = due;
            m.choose_gc(&mut cx, heap, GcCause::Policy, kind) == GcKind::Full { compact: true }
        })
        .collect()
}

#[test]
fn stub_rounds_follow_six_background_mark_sweeps_and_restart_in_the_foreground() {
    use runtime::hooks::RuntimeHooks;
    let r = rig();
    let heap = &r.j.rt.heap;
    let mut m = MarvinRuntime::new(r.tab.clone(), cfg());
    let (mut l, mut timers) = (CpuLedger::default(), Timers::default());
    let mut now = 0;
    let mut set_fg = |m: &mut MarvinRuntime, now: Nanos, fg: bool| {
        let mut cx = HookCx::new(now, Actor::Kswapd, &mut l, &mut timers);
        m.on_state_change(&mut cx, heap, fg);
    };
    assert!(
        write_tasks(&mut m, heap, &mut now, true, 3).iter().all(|&c| !c),
        "no stubs in the foreground"
    );
    set_fg(&mut m, now, false);
    // marvin_swap.cc: bgMarkSweepCounter >= 6 → six mark-sweeps, then the compaction (every 7th).
    let want: Vec<bool> = (0..14).map(|i| i % 7 == 6).collect();
    assert_eq!(write_tasks(&mut m, heap, &mut now, false, 14), want);
    // Two more mark-sweeps, then a foreground visit resets the counter (SetInForeground(true)).
    write_tasks(&mut m, heap, &mut now, false, 2);
    set_fg(&mut m, now, true);
    set_fg(&mut m, now, false);
    assert_eq!(write_tasks(&mut m, heap, &mut now, false, 7), want[..7].to_vec());
}

#[test]
fn the_swapped_in_space_does_not_eat_the_region_space_reserve() {
    // The artifact's swapped-in space is a FreeListSpace of its own (marvin_swap.cc), outside
    // the region space whose half-free guard limits mutator regions. 5 MiB of cold 2048 B arrays,
    // stubbed page-aligned, take 40 of a 64-region heap's regions (more than the guard's 32):
    // the app must still get regions for new objects.
    use runtime::{ClassKind, GcCause, GcKind, Runtime};
    let cap = 16 << 20;
    let config = HeapConfig {
        initial_size: cap,
        growth_limit: cap,
        capacity: cap,
        ..HeapConfig::pixel3()
    };
    let tab: AppRef = Rc::new(RefCell::new(AppTable {
        foreground: false,
        ..AppTable::default()
    }));
    let mut rt = Runtime::new(1, config, MarvinRuntime::new(tab.clone(), cfg()));
    let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
    let arr = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    for _ in 0..5 * 512 {
        let (o, _) = rt.alloc(1, arr, 2048, 0, &mut b, &mut l).unwrap();
        rt.heap.add_root(o);
    }
    let mut t = NS_PER_SEC;
    // Enough full walks for the arrays to be cold, then a background compaction stubs them.
    for compact in [false, false, false, false, false, true] {
        rt.collect(
            t,
            GcCause::Explicit,
            Some(GcKind::Full { compact }),
            &mut b,
            &mut l,
        );
        t += NS_PER_SEC;
    }
    let swapped = rt
        .heap
        .regions
        .iter()
        .filter(|r| r.state == runtime::heap::RegionState::Used && r.group == SWAPPED_IN_GROUP)
        .count() as u32;
    assert!(
        swapped * 2 > rt.heap.num_regions(),
        "{swapped} swapped-in regions"
    );
    for i in 0..512 {
        rt.alloc(t, arr, 1024, 0, &mut b, &mut l)
            .unwrap_or_else(|e| panic!("allocation {i} after stubbing failed: {e:?}"));
    }
}
