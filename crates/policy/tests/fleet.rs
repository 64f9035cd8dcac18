//! Mechanism tests of the `fleet` policy on small hand-built heaps: BGC never frees or moves a
//! reachable foreground object (random graphs and writes), the card table keeps background objects
//! stored into foreground ones alive, grouping puts exactly the depth <= D and young objects in
//! launch regions, COLD_RUNTIME pages the cold regions out at the grouping GC's end, protected
//! launch pages are reclaimed only at the last-resort priority, bad parameters are one-line errors.

use engine::{CpuLedger, HookCx, Nanos, Timers, NS_PER_SEC};
use hotlaunch_policy::fleet::{Config, Fleet, FleetArt, FleetReclaim, State, COLD, LAUNCH};
use hotlaunch_policy::{resolve_params, ParamValue, Shared};
use kernel::hooks::{PageView, ReclaimHook, ScanControl, Verdict};
use kernel::types::{flags, Advice, PageKind, PageState};
use proptest::prelude::*;
use runtime::backing::MockBacking;
use runtime::{ClassKind, GcCause, GcKind, HeapConfig, ObjId, Runtime, NULL};
use std::collections::BTreeSet;

fn cfg(given: &[(&str, ParamValue)]) -> Config {
    let g: Vec<(String, ParamValue)> = given.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Config::from_params(&resolve_params(&Fleet::default(), &g).unwrap())
}

fn heap_config() -> HeapConfig {
    HeapConfig {
        initial_size: 64 << 20,
        growth_limit: 128 << 20,
        capacity: 256 << 20,
        ..HeapConfig::default()
    }
}

fn new_rt(c: Config) -> (Runtime<FleetArt>, Shared<State>) {
    let state = Shared::new(State::default());
    state.with(|s| s.cfg = Some(c));
    (
        Runtime::new(7, heap_config(), FleetArt::new(c, state.clone())),
        state,
    )
}

fn reachable(rt: &Runtime<FleetArt>) -> BTreeSet<ObjId> {
    let h = &rt.heap;
    let mut seen = BTreeSet::new();
    let mut stack: Vec<ObjId> = h.roots.clone();
    while let Some(o) = stack.pop() {
        if o != NULL && seen.insert(o) {
            stack.extend_from_slice(h.refs_of(o));
        }
    }
    seen
}

const S: Nanos = NS_PER_SEC;

/// Go to the background at `t` and run the grouping GC `T_B` later; returns its time.
fn group(rt: &mut Runtime<FleetArt>, b: &mut MockBacking, l: &mut CpuLedger, t: Nanos, c: &Config) -> Nanos {
    rt.set_foreground(t, false, l);
    let due = rt.task.map(|x| x.0).expect("grouping GC scheduled");
    assert_eq!(due, t + c.t_b);
    let st = rt.tick(due, b, l).expect("grouping GC ran");
    assert_eq!(st.cause, GcCause::Policy);
    assert!(st.compacting, "grouping is evacuate-all");
    due
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, .. ProptestConfig::default() })]

    /// Random foreground graph, grouping, then random background allocations, reference stores
    /// (foreground→background, background→foreground, overwrites) and root changes with BGCs in
    /// between: no reachable object is ever freed, and no foreground object ever moves.
    #[test]
    fn bgc_never_frees_or_moves_a_reachable_foreground_object(
        n_fg in 20usize..200,
        edges in prop::collection::vec((0usize..1000, 0u32..4, 0usize..1000), 0..400),
        ops in prop::collection::vec((0u8..4, 0usize..1000, 0u32..4, 0usize..1000), 1..300),
        gc_every in 5usize..60,
    ) {
        let c = cfg(&[]);
        let (mut rt, state) = new_rt(c);
        let mut b = MockBacking::new(0);
        let mut l = CpuLedger::default();
        let node = rt.heap.add_class("Node", ClassKind::Instance);
        let mut fg = Vec::new();
        for i in 0..n_fg {
            let size = if i % 17 == 0 { 40_000 } else { 24 + (i as u32 % 5) * 16 };
            let (o, _) = rt.alloc(1, node, size, 4, &mut b, &mut l).unwrap();
            fg.push(o);
        }
        for r in fg.iter().step_by(7) {
            rt.heap.add_root(*r);
        }
        for &(s, slot, d) in &edges {
            let (s, d) = (fg[s % n_fg], fg[d % n_fg]);
            rt.write_ref(2, s, slot, d, &mut b);
        }
        let t = group(&mut rt, &mut b, &mut l, 10 * S, &c);
        // Foreground objects: those alive after grouping, with their addresses.
        let fgo: Vec<(ObjId, u32)> = reachable(&rt).iter().map(|&o| (o, rt.heap.addr(o))).collect();
        let mut bg: Vec<ObjId> = Vec::new();
        let mut now = t + S;
        for (i, &(op, a, slot, d)) in ops.iter().enumerate() {
            now += 1_000_000;
            let live: Vec<ObjId> = reachable(&rt).into_iter().collect();
            let pick = |k: usize| live[k % live.len()];
            match op {
                0 => {
                    let (o, _) = rt.alloc(now, node, 32, 4, &mut b, &mut l).unwrap();
                    bg.push(o);
                    rt.write_ref(now, pick(a), slot, o, &mut b);
                }
                1 => { rt.write_ref(now, pick(a), slot, pick(d), &mut b); }
                2 => { rt.write_ref(now, pick(a), slot, NULL, &mut b); }
                _ => { rt.alloc(now, node, 64, 0, &mut b, &mut l).unwrap(); }
            }
            if i % gc_every == gc_every - 1 || i + 1 == ops.len() {
                let before = reachable(&rt);
                rt.collect(now, GcCause::Explicit, Some(GcKind::Full { compact: false }), &mut b, &mut l);
                for &o in &before {
                    prop_assert!(rt.heap.is_alive(o), "reachable object {} freed by a BGC", o);
                }
                for &(o, addr) in &fgo {
                    if rt.heap.is_alive(o) {
                        prop_assert_eq!(rt.heap.addr(o), addr, "foreground object {} moved", o);
                    }
                }
                prop_assert_eq!(reachable(&rt), before);
            }
        }
        prop_assert!(state.with(|s| s.stats.groupings) == 1);
        prop_assert!(state.with(|s| s.stats.bgcs) >= 1);
    }
}

#[test]
fn a_foreground_object_written_after_grouping_keeps_its_background_referent() {
    let c = cfg(&[]);
    let (mut rt, state) = new_rt(c);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let node = rt.heap.add_class("Node", ClassKind::Instance);
    let (holder, _) = rt.alloc(1, node, 32, 2, &mut b, &mut l).unwrap();
    rt.heap.add_root(holder);
    let (fgo, _) = rt.alloc(1, node, 32, 2, &mut b, &mut l).unwrap();
    rt.write_ref(1, holder, 0, fgo, &mut b);
    let t = group(&mut rt, &mut b, &mut l, 2 * S, &c);
    let (bgo, _) = rt.alloc(t + S, node, 48, 0, &mut b, &mut l).unwrap();
    rt.write_ref(t + S, fgo, 1, bgo, &mut b);
    let garbage: Vec<ObjId> = (0..100)
        .map(|_| rt.alloc(t + S, node, 64, 0, &mut b, &mut l).unwrap().0)
        .collect();
    // Several BGCs: the stock remembered set forgets the store after the first; the card table
    // (accumulating since grouping) keeps the background object alive.
    for k in 0..4 {
        rt.collect(
            t + (2 + k) * S,
            GcCause::Explicit,
            Some(GcKind::Full { compact: false }),
            &mut b,
            &mut l,
        );
        assert!(
            rt.heap.is_alive(bgo),
            "BGC {k} freed a background object held by a written FGO"
        );
        let bgo_now = rt.heap.refs_of(fgo)[1];
        assert!(rt.heap.is_alive(bgo_now));
    }
    assert!(
        garbage.iter().all(|&g| !rt.heap.is_alive(g)),
        "background garbage is collected"
    );
    let s = state.with(|s| s.stats.clone());
    assert_eq!(s.bgcs, 4);
    assert!(
        s.card_marks >= 1 && s.dirty_cards_max >= 1 && s.card_roots >= 1,
        "{s:?}"
    );
    // BGC never traces foreground objects: visits are the card's objects + background ones.
    assert!(s.bgc_visits < 4 * 10, "{s:?}");
}

/// root → chain of 6 old objects (BFS levels 0..5) → 2 young objects (levels 6, 7).
fn chain(c: Config) -> (Runtime<FleetArt>, Vec<ObjId>, Vec<ObjId>, MockBacking) {
    let (rt, old, young, b, _) = chain_state(c);
    (rt, old, young, b)
}

/// `chain` and the policy state it ran with.
fn chain_state(
    c: Config,
) -> (
    Runtime<FleetArt>,
    Vec<ObjId>,
    Vec<ObjId>,
    MockBacking,
    Shared<State>,
) {
    let (mut rt, state) = new_rt(c);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let node = rt.heap.add_class("Node", ClassKind::Instance);
    let old: Vec<ObjId> = (0..6)
        .map(|_| rt.alloc(1, node, 5000, 1, &mut b, &mut l).unwrap().0)
        .collect();
    rt.heap.add_root(old[0]);
    for w in old.windows(2) {
        rt.write_ref(1, w[0], 0, w[1], &mut b);
    }
    // A foreground GC makes them old (not in a region allocated since the last GC).
    rt.collect(
        2,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut b,
        &mut l,
    );
    let young: Vec<ObjId> = (0..2)
        .map(|_| rt.alloc(3, node, 5000, 1, &mut b, &mut l).unwrap().0)
        .collect();
    rt.write_ref(3, old[5], 0, young[0], &mut b);
    rt.write_ref(3, young[0], 0, young[1], &mut b);
    group(&mut rt, &mut b, &mut l, 4, &c);
    (rt, old, young, b, state)
}

fn group_of(rt: &Runtime<FleetArt>, o: ObjId) -> u8 {
    rt.heap.regions[rt.heap.region_of(o) as usize].group
}

#[test]
fn grouping_puts_exactly_the_near_root_and_young_objects_in_launch_regions() {
    let (rt, old, young, b) = chain(cfg(&[]));
    let groups: Vec<u8> = old.iter().map(|&o| group_of(&rt, o)).collect();
    assert_eq!(
        groups,
        vec![LAUNCH, LAUNCH, LAUNCH, COLD, COLD, COLD],
        "levels 0..=2 are NRO"
    );
    assert!(
        young.iter().all(|&o| group_of(&rt, o) == LAUNCH),
        "young objects are FYO"
    );
    // D = 4 moves the boundary; without FYO the young objects are cold.
    let (rt, old, young, _) = chain(cfg(&[
        ("D", ParamValue::Int(4)),
        ("fyo", ParamValue::Bool(false)),
    ]));
    let groups: Vec<u8> = old.iter().map(|&o| group_of(&rt, o)).collect();
    assert_eq!(groups, vec![LAUNCH, LAUNCH, LAUNCH, LAUNCH, LAUNCH, COLD]);
    assert!(young.iter().all(|&o| group_of(&rt, o) == COLD));
    // COLD_RUNTIME: the cold regions are paged out at the grouping GC's end, nothing else.
    let cold = rt.heap.group_ranges(COLD);
    let out: Vec<_> = b
        .advice_log
        .iter()
        .filter(|a| a.2 == Advice::PageOut)
        .map(|a| (a.0, a.1))
        .collect();
    assert!(!cold.is_empty());
    assert_eq!(out, cold);
    let _ = (b, chain(cfg(&[])).3);
}

#[test]
fn rgs_off_gives_no_hints_and_objects_touched_in_the_window_are_ws() {
    let c = cfg(&[("rgs", ParamValue::Bool(false))]);
    let (rt, _, _, b) = chain(c);
    assert!(b.advice_log.iter().all(|a| a.2 != Advice::PageOut));
    assert!(rt.heap.group_ranges(COLD).is_empty() && rt.heap.group_ranges(LAUNCH).is_empty());
}

fn page(protected: bool, accessed: bool) -> PageView {
    PageView {
        idx: 0,
        pid: 1,
        kind: PageKind::JavaHeap,
        state: PageState::Resident,
        flags: if protected { flags::PROTECTED } else { 0 } | if accessed { flags::ACCESSED } else { 0 },
        policy_bits: 0,
    }
}

#[test]
fn protected_launch_pages_are_reclaimed_only_at_the_last_resort_priority() {
    let state = Shared::new(State::default());
    state.with(|s| s.cfg = Some(cfg(&[])));
    let mut r = FleetReclaim(state.clone());
    let mut cpu = CpuLedger::default();
    let mut timers = Timers::default();
    let mut cx = HookCx::new(0, engine::Actor::Kernel, &mut cpu, &mut timers);
    for priority in (0..=12).rev() {
        let sc = ScanControl {
            priority,
            kswapd: false,
            pass: 0,
            nr_to_reclaim: 32,
        };
        // An unprotected cold page is always reclaimed; a protected one only at priority 0.
        assert_eq!(
            r.inactive_verdict(&mut cx, &sc, &page(false, false)),
            Verdict::Reclaim
        );
        let want = if priority == 0 {
            Verdict::Reclaim
        } else {
            Verdict::Activate
        };
        assert_eq!(
            r.inactive_verdict(&mut cx, &sc, &page(true, false)),
            want,
            "priority {priority}"
        );
        // Referenced pages keep the stock verdict.
        assert_eq!(
            r.inactive_verdict(&mut cx, &sc, &page(true, true)),
            Verdict::Activate
        );
    }
    let s = state.with(|s| s.stats.clone());
    assert_eq!((s.protected_kept, s.protected_reclaimed), (12, 1));
}

#[test]
fn bad_parameters_are_one_line_errors() {
    let bad = |k: &str, v: ParamValue| {
        let e = resolve_params(&Fleet::default(), &[(k.to_string(), v)])
            .unwrap_err()
            .to_string();
        assert!(!e.contains('\n'), "{e}");
        e
    };
    assert!(bad("bogus", ParamValue::Int(1)).contains("bogus"));
    assert!(bad("D", ParamValue::Int(-1)).contains('D'));
    assert!(bad("T_B_s", ParamValue::Float(-1.0)).contains("T_B_s"));
    assert!(bad("T_F_s", ParamValue::Float(-0.5)).contains("T_F_s"));
    assert!(bad("hot_refresh_s", ParamValue::Float(-3.0)).contains("hot_refresh_s"));
    assert!(bad("bgc", ParamValue::Int(1)).contains("bgc"));
    assert!(bad("bg_heap_factor", ParamValue::Float(0.5)).contains("bg_heap_factor"));
    assert!(bad("bg_max_free_div", ParamValue::Int(0)).contains("bg_max_free_div"));
}

/// `n` rooted 64 KiB arrays (live bytes), allocated at `t`.
fn fill(rt: &mut Runtime<FleetArt>, b: &mut MockBacking, l: &mut CpuLedger, t: Nanos, n: usize) {
    let arr = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    for _ in 0..n {
        let (o, _) = rt.alloc(t, arr, 64 << 10, 0, b, l).unwrap();
        rt.heap.add_root(o);
    }
}

#[test]
fn background_heap_target_is_live_times_the_factor_and_stock_returns_in_the_foreground() {
    // (target in the background, target after returning, live bytes) for a config.
    let run = |given: &[(&str, ParamValue)]| {
        let c = cfg(given);
        let (mut rt, state) = new_rt(c);
        let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
        fill(&mut rt, &mut b, &mut l, 1, 320); // 20 MiB live
        let t = group(&mut rt, &mut b, &mut l, 2 * S, &c);
        rt.collect(
            t + S,
            GcCause::Explicit,
            Some(GcKind::Full { compact: false }),
            &mut b,
            &mut l,
        );
        let bg = rt.heap.target_footprint;
        rt.set_foreground(t + 2 * S, true, &mut l);
        assert!(state.with(|s| s.stats.bg_targets_set) >= 2, "grouping GC and BGC");
        (bg, rt.heap.target_footprint, rt.heap.bytes_allocated)
    };
    let (bg, fg, live) = run(&[]);
    // 1.1 × live: 2 MiB of free space, under the cap heapmaxfree / 10 = 3.2 MiB.
    assert_eq!(bg, live + live / 10, "live {live}");
    assert!(
        fg > bg + (8 << 20),
        "stock target {fg} restored in the foreground (min_free 8 MiB)"
    );
    // The cap: heapmaxfree / 40 = 0.8 MiB < 2 MiB, so the 1 MiB floor decides.
    let (bg, _, live) = run(&[("bg_max_free_div", ParamValue::Int(40))]);
    assert_eq!(bg, live + (1 << 20));
    // 2× (§7.4's other setting), uncapped: ART's own target is the bound.
    let (bg2, fg2, live) = run(&[
        ("bg_heap_factor", ParamValue::Float(2.0)),
        ("bg_max_free_div", ParamValue::Int(1)),
    ]);
    assert!(bg2 > live + (8 << 20) && bg2 <= fg2, "{bg2} vs live {live}");
}

#[test]
fn bg_minor_gc_false_turns_background_minor_gcs_into_bgcs() {
    for minor in [true, false] {
        let c = cfg(&[("bg_minor_gc", ParamValue::Bool(minor))]);
        let (mut rt, state) = new_rt(c);
        let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
        fill(&mut rt, &mut b, &mut l, 1, 16);
        let t = group(&mut rt, &mut b, &mut l, 2 * S, &c);
        let st = rt.collect(t + S, GcCause::Background, Some(GcKind::Sticky), &mut b, &mut l);
        let s = state.with(|s| s.stats.clone());
        assert_eq!(st.sticky, minor, "bg_minor_gc = {minor}");
        assert_eq!(s.bgcs, u64::from(!minor));
        assert_eq!(s.bg_minor_replaced, u64::from(!minor));
        // Foreground minor GCs stay stock either way.
        rt.set_foreground(t + 2 * S, true, &mut l);
        let st = rt.collect(
            t + 3 * S,
            GcCause::Background,
            Some(GcKind::Sticky),
            &mut b,
            &mut l,
        );
        assert!(st.sticky);
    }
}

#[test]
fn grouping_counts_objects_by_bfs_level() {
    // chain(): old[0..6] at levels 0..=5, young[0] below old[5] (level 6), young[1] level 7.
    let (.., state) = chain_state(cfg(&[]));
    let st = state.with(|s| s.stats.clone());
    assert_eq!(st.groupings, 1);
    assert_eq!(
        st.depth_objects,
        [1, 1, 1, 1, 1, 1, 1, 1],
        "one object per level, 7+ pooled"
    );
    assert_eq!(
        st.depth_bytes.iter().sum::<u64>(),
        st.class_bytes[1..].iter().sum::<u64>()
    );
}

#[test]
fn fgo_survival_is_counted_only_under_stock_background_gcs() {
    for bgc in [false, true] {
        let c = cfg(&[("bgc", ParamValue::Bool(bgc))]);
        let (mut rt, state) = new_rt(c);
        let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
        fill(&mut rt, &mut b, &mut l, 1, 8);
        let t = group(&mut rt, &mut b, &mut l, 2 * S, &c);
        // Drop 2 of the 8 foreground roots: a stock GC frees them, a BGC never does.
        let drop: Vec<ObjId> = rt.heap.roots[..2].to_vec();
        for o in drop {
            assert!(rt.heap.remove_root(o));
        }
        for k in 1..=2 {
            rt.collect(
                t + k * S,
                GcCause::Background,
                Some(GcKind::Full { compact: false }),
                &mut b,
                &mut l,
            );
        }
        let s = state.with(|s| s.stats.clone());
        if bgc {
            assert_eq!(
                s.fgo_base, [0; 15],
                "BGC: FGO never collected, nothing to measure"
            );
        } else {
            assert_eq!((s.fgo_base[0], s.fgo_alive[0]), (8, 6));
            assert_eq!((s.fgo_base[1], s.fgo_alive[1]), (8, 6));
            assert_eq!(s.fgo_base[2], 0);
        }
    }
}

#[test]
fn an_allocation_bgc_cannot_satisfy_falls_back_to_full_tracing_before_oom() {
    // Fleet §5.2: BGC keeps foreground garbage; "if necessary, Fleet can resort to the original
    // Android method of using full tracing". 96 MiB of small foreground arrays, half of them
    // dropped after grouping (garbage only full tracing frees), then 40 MiB of background
    // arrays: live 88 MiB fits the 128 MiB limit only once the foreground garbage is freed.
    let c = cfg(&[]);
    let (mut rt, state) = new_rt(c);
    let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
    let arr = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let fgo: Vec<ObjId> = (0..96 * 256)
        .map(|_| {
            let (o, _) = rt.alloc(1, arr, 4 << 10, 0, &mut b, &mut l).unwrap();
            rt.heap.add_root(o);
            o
        })
        .collect();
    let t = group(&mut rt, &mut b, &mut l, 2 * S, &c);
    for &o in &fgo[fgo.len() / 2..] {
        assert!(rt.heap.remove_root(o));
    }
    let mut now = t + S;
    for i in 0..40 * 256 {
        let r = rt.alloc(now, arr, 4 << 10, 0, &mut b, &mut l);
        let (o, cost) = r.unwrap_or_else(|e| panic!("background allocation {i} failed: {e:?}"));
        rt.heap.add_root(o);
        now += cost.main_stall.ns + 1000;
    }
    let s = state.with(|s| s.stats.clone());
    assert_eq!(s.full_fallbacks, 1, "{s:?}");
    assert!(s.bgcs >= 1, "BGCs ran before the fallback: {s:?}");
    assert!(fgo[..fgo.len() / 2].iter().all(|&o| rt.heap.is_alive(o)));
    // The dropped half was freed (dead ids are reused, so count bytes): live is 48 + 40 MiB.
    assert_eq!(rt.heap.bytes_allocated, 88 << 20);
    // Fleet stopped until the next switch to the background, which groups again.
    assert_eq!(rt.task, None, "no grouping in this background episode");
    rt.collect(
        now,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut b,
        &mut l,
    );
    assert_eq!(
        state.with(|s| s.stats.bgcs),
        s.bgcs,
        "stock GCs after the fallback"
    );
    rt.set_foreground(now + S, true, &mut l);
    group(&mut rt, &mut b, &mut l, now + 2 * S, &c);
}
