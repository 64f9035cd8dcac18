//! Contract tests of the runtime's policy seams (`runtime::hooks`): each seam is reached, at the
//! documented time, with its documented effect, by a small non-stock policy.

use engine::{Actor, Category, CpuLedger, HookCx, Nanos, RngStreams, NS_PER_SEC};
use kernel::types::Advice;
use runtime::backing::MockBacking;
use runtime::gen::GraphSpec;
use runtime::heap::{oflags, ObjView, RegionState, PAGE_SIZE};
use runtime::hooks::{TraceOrder, VisitMode, NO_DEPTH};
use runtime::{
    Access, AccessKind, AfterGc, BarrierOutcome, ClassKind, CollectedSet, GcCause, GcKind, GcStats, Heap,
    HeapConfig, JavaApp, JavaModel, JavaParams, Meta, ObjId, Runtime, RuntimeHooks, Span, NULL,
};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;
use std::sync::Arc;

fn config() -> HeapConfig {
    HeapConfig {
        capacity: 64 << 20,
        growth_limit: 32 << 20,
        initial_size: 1 << 20,
        min_free: 256 << 10,
        max_free: 1 << 20,
        ..HeapConfig::default()
    }
}

// ---------------------------------------------------------------- every hook through JavaApp

/// What the counting policy saw (shared with the test through `Rc<RefCell<_>>`, as a policy
/// shares its state between layers: the runtime never calls a hook while another runs).
#[derive(Default)]
struct Seen {
    calls: BTreeMap<&'static str, u64>,
    kinds: BTreeSet<&'static str>,
    depths_tracked: bool,
    freed: u64,
    bad_pages: u64,
}

impl Seen {
    fn hit(&mut self, name: &'static str) {
        *self.calls.entry(name).or_default() += 1;
    }
}

const ALLOC_BIT: Meta = 1 << 8;
const MARK_BIT: Meta = 1 << 14;
const READ_STALL: Nanos = 1_000;
const POLICY_PAUSE: Nanos = 777;

/// Overrides every runtime hook, counts its calls and changes behaviour observably.
struct Everything(Rc<RefCell<Seen>>);

impl RuntimeHooks for Everything {
    fn choose_gc(&mut self, _cx: &mut HookCx, _h: &Heap, cause: GcCause, proposed: GcKind) -> GcKind {
        self.0.borrow_mut().hit("choose_gc");
        // Never sticky: every GC is a full one.
        if cause == GcCause::Background {
            GcKind::Full { compact: false }
        } else {
            proposed
        }
    }
    fn on_state_change(&mut self, _cx: &mut HookCx, _h: &Heap, fg: bool) -> Option<(Nanos, GcKind)> {
        self.0.borrow_mut().hit("on_state_change");
        (!fg).then_some((NS_PER_SEC, GcKind::Full { compact: true }))
    }
    fn next_task(&mut self, cx: &mut HookCx, _h: &Heap, fg: bool) -> Option<(Nanos, GcKind)> {
        self.0.borrow_mut().hit("next_task");
        (!fg).then_some((cx.now + 3 * NS_PER_SEC, GcKind::Full { compact: false }))
    }
    fn collected_set(&mut self, _cx: &mut HookCx, _h: &Heap, _k: GcKind, _s: &mut CollectedSet) {
        self.0.borrow_mut().hit("collected_set");
    }
    fn trace_order(&self, k: GcKind) -> TraceOrder {
        self.0.borrow_mut().hit("trace_order");
        // BFS (with depths) except for compacting GCs, whose DFS full trace asks `is_stock`.
        if k == (GcKind::Full { compact: true }) {
            TraceOrder::Dfs
        } else {
            TraceOrder::Bfs
        }
    }
    fn evacuate(&mut self, _cx: &mut HookCx, _h: &Heap, _r: u32, _k: GcKind, default: bool) -> bool {
        self.0.borrow_mut().hit("evacuate");
        default
    }
    fn extra_roots(&mut self, _cx: &mut HookCx, _h: &Heap, _k: GcKind, _out: &mut Vec<ObjId>) {
        self.0.borrow_mut().hit("extra_roots");
    }
    fn visit_mode(&mut self, _o: &ObjView) -> VisitMode {
        self.0.borrow_mut().hit("visit_mode");
        VisitMode::Normal
    }
    fn on_mark(&mut self, o: &ObjView, depth: u32, _young: bool, meta: &mut Meta) -> u8 {
        let mut s = self.0.borrow_mut();
        s.hit("on_mark");
        s.depths_tracked |= depth != NO_DEPTH;
        *meta |= MARK_BIT;
        // A few objects go to the page-aligned group.
        u8::from(o.id.is_multiple_of(64))
    }
    fn group_alignment(&self, group: u8) -> u32 {
        self.0.borrow_mut().hit("group_alignment");
        if group == 1 {
            PAGE_SIZE
        } else {
            8
        }
    }
    fn object_events(&self) -> bool {
        self.0.borrow_mut().hit("object_events");
        true
    }
    fn on_alloc(&mut self, _o: &ObjView, meta: &mut Meta) {
        self.0.borrow_mut().hit("on_alloc");
        *meta |= ALLOC_BIT;
    }
    fn on_free(&mut self, _o: &ObjView) {
        let mut s = self.0.borrow_mut();
        s.hit("on_free");
        s.freed += 1;
    }
    fn barrier(&mut self, a: &Access, meta: &mut Meta) -> BarrierOutcome {
        let mut s = self.0.borrow_mut();
        s.hit("barrier");
        assert!(
            *meta & ALLOC_BIT != 0,
            "the barrier sees the bits set at allocation"
        );
        // An object of `size` bytes spans ceil(size / page) pages, or one more when unaligned.
        let min = a.obj.size.div_ceil(PAGE_SIZE);
        s.bad_pages += u64::from(a.pages < min || a.pages > min + 1);
        s.kinds.insert(match a.kind {
            AccessKind::Read => "read",
            AccessKind::Write => "write",
            AccessKind::RefStore { .. } => "ref_store",
        });
        BarrierOutcome {
            touch: true,
            stall: engine::Stall {
                ns: if a.kind == AccessKind::Read { READ_STALL } else { 0 },
                psi_ns: 0,
            },
        }
    }
    fn after_gc(&mut self, cx: &mut HookCx, heap: &Heap, _st: &GcStats, out: &mut AfterGc) {
        self.0.borrow_mut().hit("after_gc");
        cx.charge(50);
        cx.schedule(cx.now + 10, 42);
        out.hints.extend(
            heap.group_ranges(1)
                .into_iter()
                .map(|(f, n)| (f, n, Advice::Cold)),
        );
        out.pause_ns = POLICY_PAUSE;
    }
    fn is_stock(&self) -> bool {
        self.0.borrow_mut().hit("is_stock");
        false
    }
}

/// Every hook [`Everything`] overrides.
const ALL_HOOKS: [&str; 16] = [
    "choose_gc",
    "on_state_change",
    "next_task",
    "collected_set",
    "trace_order",
    "evacuate",
    "extra_roots",
    "visit_mode",
    "on_mark",
    "group_alignment",
    "object_events",
    "on_alloc",
    "on_free",
    "barrier",
    "after_gc",
    "is_stock",
];

fn java_app(hooks: Box<dyn RuntimeHooks>, churn: bool) -> JavaApp {
    let spec = GraphSpec {
        bytes: 3 << 20,
        local_refs: 0.85,
        shared_refs: 0.1,
        ..GraphSpec::default()
    };
    let bp = spec.blueprint(&mut RngStreams::new(3).stream("bp", 0));
    let pages = (bp.total_bytes() / PAGE_SIZE as u64) as u32;
    let model = JavaModel {
        blueprint: Arc::new(bp).into(),
        config: config(),
        params: JavaParams {
            churn_bytes: if churn { 64 << 10 } else { 0 },
            churn_period: if churn { NS_PER_SEC } else { 0 },
            ..JavaParams::default()
        },
    };
    JavaApp::new(1, &model, hooks, pages, RngStreams::new(5).stream("java", 0), 0)
}

#[test]
fn a_policy_overriding_every_runtime_hook_is_observed_through_java_app() {
    let seen = Rc::new(RefCell::new(Seen::default()));
    let mut j = java_app(Box::new(Everything(Rc::clone(&seen))), true);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    j.build_to(0, u32::MAX, &mut b, &mut l).unwrap();
    assert!(
        !j.rt.history.is_empty(),
        "building 3 MB into a 1 MB heap runs GCs"
    );
    assert!(
        j.rt.history.iter().all(|g| !g.sticky),
        "choose_gc made every GC full"
    );
    // Reads pay the barrier's stall on the accessing thread.
    let n = j.built_pages().min(50);
    let logical: Vec<u32> = (0..n).collect();
    let stall = j.touch_logical(10, Actor::AppMain(1), &logical, false, &mut b, None);
    assert!(
        stall.ns >= READ_STALL * n as u64,
        "barrier stall reaches the caller: {stall:?}"
    );
    j.touch_logical(20, Actor::AppMain(1), &logical, true, &mut b, None);
    // Background: the state-change GC (1 s) and the policy's task (3 s) are scheduled.
    let t0 = 100 * NS_PER_SEC;
    j.set_foreground(t0, false, &mut l);
    assert_eq!(j.pending_gc(), Some(t0 + NS_PER_SEC));
    assert_eq!(j.rt.task.map(|t| t.0), Some(t0 + 3 * NS_PER_SEC));
    let st = j.tick(t0 + NS_PER_SEC, &mut b, &mut l).expect("state-change GC");
    assert_eq!(st.cause, GcCause::Transition);
    assert!(st.compacting);
    let due = j.pending_gc().expect("policy task pending");
    let st = j.tick(due, &mut b, &mut l).expect("policy task");
    assert_eq!(st.cause, GcCause::Policy);
    assert_eq!(j.rt.history.last().unwrap().cause, GcCause::Policy);
    // Churn stores references (ref_store barrier) and frees objects at the next GC.
    j.churn(due + 5 * NS_PER_SEC, &mut b, &mut l).unwrap();
    j.rt.collect(
        due + 6 * NS_PER_SEC,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut b,
        &mut l,
    );

    let s = seen.borrow();
    for h in ALL_HOOKS {
        assert!(
            s.calls.get(h).copied().unwrap_or(0) > 0,
            "hook {h} never called: {:?}",
            s.calls
        );
    }
    assert_eq!(
        s.kinds,
        ["read", "ref_store", "write"].into_iter().collect(),
        "access kinds"
    );
    assert_eq!(s.bad_pages, 0);
    assert!(s.depths_tracked, "trace_order made the trace BFS");
    let freed: u64 = j.rt.history.iter().map(|g| g.freed_objects).sum();
    assert_eq!(s.freed, freed, "on_free once per freed object");
    // Every live object went through on_mark (bit 14) after the last full GC; region objects are
    // page-aligned in group 1.
    let h = &j.rt.heap;
    let mut aligned = 0;
    for o in 0..h.id_capacity() as u32 {
        if !h.is_alive(o) {
            continue;
        }
        assert!(h.meta(o) & MARK_BIT != 0, "16-bit metadata kept");
        if !h.is_large(o) && h.regions[h.region_of(o) as usize].group == 1 {
            assert_eq!(h.addr(o) % PAGE_SIZE, 0, "group 1 copies are page-aligned");
            aligned += 1;
        }
    }
    assert!(aligned > 0);
    // after_gc: hints applied through the backing after the hook, pause on the main thread,
    // policy CPU and timers through the cx.
    assert!(b.advice_log.iter().any(|a| a.2 == Advice::Cold));
    let flip = (j.rt.costs.flip_pause_base_ns) as Nanos;
    assert!(j.rt.history.iter().all(|g| g.pause_ns >= flip + POLICY_PAUSE));
    assert!(l.by_category(Category::Policy) >= 50 * j.rt.history.len() as u64);
    let timers: Vec<_> = j.rt.timers.drain().collect();
    assert_eq!(timers.len(), j.rt.history.len());
    assert!(timers.iter().all(|t| t.1 == 42));
}

// ---------------------------------------------------------------- collected set (BGC-shaped)

/// Fleet-style background-object GC: the collected set leaves out every region and large object
/// holding a foreground-allocated object; objects written during the background (a card table,
/// here kept at object granularity by the barrier) are extra roots.
#[derive(Default)]
struct Bgc {
    dirty: Vec<ObjId>,
    /// Foreground objects the trace visited (must stay empty: they are untraced).
    fg_marked: u64,
    opaque_only: bool,
}

impl RuntimeHooks for Bgc {
    fn collected_set(&mut self, _cx: &mut HookCx, heap: &Heap, _k: GcKind, set: &mut CollectedSet) {
        if self.opaque_only {
            return;
        }
        for (r, reg) in heap.regions.iter().enumerate() {
            if reg.state == RegionState::Used
                && reg
                    .objs
                    .iter()
                    .any(|&o| heap.is_alive(o) && heap.flags(o) & oflags::FG_ALLOC != 0)
            {
                set.set_region(r as u32, false);
            }
        }
        for (s, slot) in heap.los.iter().enumerate() {
            if slot.obj != NULL && heap.flags(slot.obj) & oflags::FG_ALLOC != 0 {
                set.set_large(s as u32, false);
            }
        }
    }
    fn extra_roots(&mut self, _cx: &mut HookCx, _h: &Heap, _k: GcKind, out: &mut Vec<ObjId>) {
        out.append(&mut self.dirty);
    }
    fn visit_mode(&mut self, o: &ObjView) -> VisitMode {
        if o.fg_alloc() {
            VisitMode::Opaque
        } else {
            VisitMode::Normal
        }
    }
    fn on_mark(&mut self, o: &ObjView, _d: u32, _y: bool, _m: &mut Meta) -> u8 {
        self.fg_marked += u64::from(o.fg_alloc());
        0
    }
    fn barrier(&mut self, a: &Access, _m: &mut Meta) -> BarrierOutcome {
        if matches!(a.kind, AccessKind::RefStore { .. }) && a.obj.fg_alloc() {
            self.dirty.push(a.obj.id);
        }
        BarrierOutcome::TOUCH
    }
}

/// Objects reachable from the roots.
fn reachable(h: &Heap) -> BTreeSet<ObjId> {
    let mut seen = BTreeSet::new();
    let mut stack: Vec<ObjId> = h.roots.clone();
    while let Some(o) = stack.pop() {
        if o != NULL && seen.insert(o) {
            stack.extend_from_slice(h.refs_of(o));
        }
    }
    seen
}

/// A foreground graph (holder → chains of instances → large arrays), a background phase that
/// stores new objects into foreground ones and allocates garbage, then one full GC.
/// Returns (reachable foreground objects lost, their addresses moved, background garbage freed,
/// foreground objects traced).
fn bgc_scenario(opaque_only: bool) -> (usize, usize, u64, u64) {
    let hooks = Bgc {
        opaque_only,
        ..Bgc::default()
    };
    let cfg = HeapConfig {
        initial_size: 128 << 20,
        growth_limit: 256 << 20,
        capacity: 512 << 20,
        ..HeapConfig::default()
    };
    let mut rt = Runtime::new(9, cfg, hooks);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let arr = rt.heap.add_class("Object[]", ClassKind::ObjectArray);
    let node = rt.heap.add_class("Node", ClassKind::Instance);
    let bytes = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let (holder, _) = rt.alloc(0, arr, 12 + 4 * 64, 64, &mut b, &mut l).unwrap();
    rt.heap.add_root(holder);
    for s in 0..64 {
        // holder → a → c → (large array): c and the array are reached only through foreground
        // objects.
        let (a, _) = rt.alloc(1, node, 24, 2, &mut b, &mut l).unwrap();
        let (c, _) = rt.alloc(1, node, 24, 1, &mut b, &mut l).unwrap();
        let (big, _) = rt.alloc(1, bytes, 16 << 10, 0, &mut b, &mut l).unwrap();
        rt.heap.set_ref_raw(holder, s, a);
        rt.heap.set_ref_raw(a, 0, c);
        rt.heap.set_ref_raw(c, 0, big);
        rt.alloc(1, node, 32, 0, &mut b, &mut l).unwrap(); // foreground garbage
    }
    rt.set_foreground(2, false, &mut l);
    let fg_before: Vec<(ObjId, u32)> = reachable(&rt.heap)
        .iter()
        .map(|&o| (o, rt.heap.addr(o)))
        .collect();
    // Background: new objects hung off foreground ones (barrier → dirty), and garbage.
    for s in 0..64 {
        let a = rt.heap.refs_of(holder)[s as usize];
        let (n, _) = rt.alloc(3, node, 40, 0, &mut b, &mut l).unwrap();
        rt.write_ref(3, a, 1, n, &mut b);
    }
    for _ in 0..300 {
        rt.alloc(3, bytes, 4000, 0, &mut b, &mut l).unwrap();
    }
    assert!(rt.history.is_empty(), "no GC before the one under test");
    let st = rt.collect(
        4,
        GcCause::Explicit,
        Some(GcKind::Full { compact: false }),
        &mut b,
        &mut l,
    );
    let lost = fg_before.iter().filter(|(o, _)| !rt.heap.is_alive(*o)).count();
    let moved = fg_before
        .iter()
        .filter(|(o, a)| rt.heap.is_alive(*o) && rt.heap.addr(*o) != *a)
        .count();
    // Background objects hung off foreground ones survive.
    for s in 0..64 * u32::from(!opaque_only) {
        let a = rt.heap.refs_of(holder)[s as usize];
        if rt.heap.is_alive(a) {
            let n = rt.heap.refs_of(a)[1];
            assert!(rt.heap.is_alive(n) && rt.heap.flags(n) & oflags::FG_ALLOC == 0);
        }
    }
    (lost, moved, st.freed_objects, rt.hooks.fg_marked)
}

#[test]
fn a_bgc_shaped_collected_set_keeps_every_reachable_foreground_object() {
    let (lost, moved, freed, fg_traced) = bgc_scenario(false);
    assert_eq!(lost, 0, "reachable foreground objects were freed");
    assert_eq!(moved, 0, "foreground objects stay where they are");
    assert_eq!(fg_traced, 0, "foreground objects are not traced");
    assert!(freed >= 200, "background garbage is collected: {freed}");
    // Without the collected set, full GC + opaque foreground objects frees reachable ones (the
    // reason the seam exists).
    let (lost, ..) = bgc_scenario(true);
    assert!(lost > 0);
}

// ---------------------------------------------------------------- barrier, pause, task, alloc/free

#[derive(Default)]
struct Probe {
    accesses: Vec<(Nanos, Actor, ObjId, u32, u32, AccessKind)>,
    stall: Nanos,
    pause: Nanos,
    period: Nanos,
}

impl RuntimeHooks for Probe {
    fn barrier(&mut self, a: &Access, meta: &mut Meta) -> BarrierOutcome {
        self.accesses
            .push((a.now, a.actor, a.obj.id, a.first_page, a.pages, a.kind));
        *meta = meta.wrapping_add(0x1001);
        BarrierOutcome {
            touch: false,
            stall: engine::Stall {
                ns: self.stall,
                psi_ns: self.stall,
            },
        }
    }
    fn after_gc(&mut self, _cx: &mut HookCx, _h: &Heap, _st: &GcStats, out: &mut AfterGc) {
        out.pause_ns = self.pause;
    }
    fn next_task(&mut self, cx: &mut HookCx, _h: &Heap, fg: bool) -> Option<(Nanos, GcKind)> {
        (self.period > 0).then(|| {
            let p = if fg { self.period } else { 6 * self.period };
            (cx.now + p, GcKind::Full { compact: false })
        })
    }
    fn on_alloc(&mut self, _o: &ObjView, _m: &mut Meta) {
        panic!("object_events is false: on_alloc must not be called");
    }
    fn on_free(&mut self, _o: &ObjView) {
        panic!("object_events is false: on_free must not be called");
    }
}

#[test]
fn barrier_sees_address_kind_and_time_and_its_stall_reaches_the_thread() {
    let mut rt = Runtime::new(
        4,
        config(),
        Probe {
            stall: 5_000,
            ..Probe::default()
        },
    );
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let arr = rt.heap.add_class("Object[]", ClassKind::ObjectArray);
    let bytes = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let (src, _) = rt.alloc(0, arr, 12 + 4 * 8, 8, &mut b, &mut l).unwrap();
    let (big, _) = rt.alloc(0, bytes, 20 << 10, 0, &mut b, &mut l).unwrap();
    let touched_before = b.touch_calls;
    let st = rt.access(7, Actor::AppGc(4), &[src, big], false, Span::Whole, &mut b);
    assert_eq!(st.stall.ns, 10_000, "two objects, each stalls 5 µs");
    assert_eq!(b.touch_calls, touched_before, "touch: false skips the page touch");
    let stall = rt.write_ref(9, src, 3, big, &mut b);
    assert_eq!(stall.ns, 5_000);
    let (bf, bn) = rt.heap.pages_of(big);
    let (sf, sn) = rt.heap.pages_of(src);
    assert_eq!(
        rt.hooks.accesses,
        vec![
            (7, Actor::AppGc(4), src, sf, sn, AccessKind::Read),
            (7, Actor::AppGc(4), big, bf, bn, AccessKind::Read),
            (
                9,
                Actor::AppMain(4),
                src,
                sf,
                sn,
                AccessKind::RefStore { slot: 3, target: big }
            ),
        ]
    );
    assert_eq!(bn, 5);
    assert_eq!(rt.heap.meta(src), 0x2002, "metadata is 16 bits wide");
}

#[test]
fn a_policy_pause_is_a_main_thread_stall_like_the_flip() {
    let mut rt = Runtime::new(
        4,
        config(),
        Probe {
            pause: 3_000_000,
            ..Probe::default()
        },
    );
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let bytes = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    let mut t = 0;
    let cost = loop {
        let (_, c) = rt.alloc(t, bytes, 4000, 0, &mut b, &mut l).unwrap();
        t += 1000;
        if c.gc.is_some() {
            break c;
        }
    };
    let gc = cost.gc.unwrap();
    let flip = rt.costs.flip_pause_base_ns as Nanos;
    assert!(gc.pause_ns >= flip + 3_000_000);
    assert!(
        cost.main_stall.ns >= gc.pause_ns,
        "the concurrent GC's pause lands on the allocating thread"
    );
    assert!(rt.heap.gc.total_pause_ns >= gc.pause_ns);
}

#[test]
fn periodic_policy_task_runs_with_cause_policy_and_follows_the_app_state() {
    let period = 5 * NS_PER_SEC;
    let mut rt = Runtime::new(
        4,
        config(),
        Probe {
            period,
            ..Probe::default()
        },
    );
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let bytes = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    assert_eq!(rt.next_due(), None, "first asked at the first allocation");
    rt.alloc(0, bytes, 100, 0, &mut b, &mut l).unwrap();
    assert_eq!(rt.next_due(), Some(period));
    assert!(rt.tick(period - 1, &mut b, &mut l).is_none());
    let st = rt.tick(period, &mut b, &mut l).expect("policy task");
    assert_eq!(st.cause, GcCause::Policy);
    assert_eq!(rt.history.last().unwrap().cause, GcCause::Policy);
    assert_eq!(
        rt.next_due(),
        Some(2 * period + st.duration_ns),
        "asked again after the GC"
    );
    // Background: 6× the period, and the stock transition GC (5 s) comes first.
    let t = 3 * period;
    rt.set_foreground(t, false, &mut l);
    assert_eq!(rt.task.map(|x| x.0), Some(t + 6 * period));
    assert_eq!(rt.next_due(), Some(t + 5 * NS_PER_SEC));
    assert_eq!(
        rt.tick(t + 5 * NS_PER_SEC, &mut b, &mut l).unwrap().cause,
        GcCause::Transition
    );
}

#[test]
fn stock_hooks_keep_defaults_no_task_no_pause_no_timers() {
    let mut rt = Runtime::new(4, config(), runtime::StockArt);
    let mut b = MockBacking::new(0);
    let mut l = CpuLedger::default();
    let bytes = rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
    for i in 0..2000 {
        rt.alloc(i, bytes, 4000, 0, &mut b, &mut l).unwrap();
    }
    assert!(!rt.history.is_empty());
    let flip = rt.costs.flip_pause_base_ns as Nanos;
    for g in &rt.history {
        assert!(matches!(g.cause, GcCause::Background | GcCause::Alloc));
        assert!(g.pause_ns < flip + 1_000_000, "no policy pause");
    }
    assert_eq!(rt.task, None);
    assert!(rt.timers.is_empty());
    assert_eq!(l.by_category(Category::Policy), 0);
    assert!(b.advice_log.is_empty());
}

/// Sets a tight target (live bytes + 64 KiB) after each background GC.
struct TightInBackground;

const SLACK: u64 = 64 << 10;

impl RuntimeHooks for TightInBackground {
    fn after_gc(&mut self, _cx: &mut HookCx, h: &Heap, st: &GcStats, out: &mut AfterGc) {
        if !h.foreground {
            out.target_footprint = Some(st.bytes_allocated_after + SLACK);
        }
    }
}

/// `n` rooted 4000-byte arrays, one per microsecond from `t0`.
fn fill(rt: &mut Runtime<dyn RuntimeHooks>, b: &mut MockBacking, l: &mut CpuLedger, t0: Nanos, n: u64) {
    let bytes = rt
        .heap
        .classes
        .iter()
        .position(|c| c.name == "byte[]")
        .unwrap_or(0) as u32;
    for i in 0..n {
        let (o, _) = rt.alloc(t0 + i * 1000, bytes, 4000, 0, b, l).unwrap();
        rt.heap.roots.push(o);
    }
}

#[test]
fn a_policy_target_footprint_holds_until_the_next_state_change_then_stock_is_back() {
    let run = |tight: bool| {
        let hooks: Box<dyn RuntimeHooks> = if tight {
            Box::new(TightInBackground)
        } else {
            Box::new(runtime::StockArt)
        };
        let mut rt: Runtime<dyn RuntimeHooks> = Runtime::boxed(4, config(), hooks);
        let (mut b, mut l) = (MockBacking::new(0), CpuLedger::default());
        rt.heap.add_class("byte[]", ClassKind::PrimitiveArray(1));
        fill(&mut rt, &mut b, &mut l, 0, 500);
        rt.set_foreground(NS_PER_SEC, false, &mut l);
        let st = rt.collect(2 * NS_PER_SEC, GcCause::Explicit, None, &mut b, &mut l);
        let bg = (
            rt.heap.target_footprint,
            rt.heap.concurrent_start_bytes,
            st.target_footprint_after,
        );
        rt.set_foreground(3 * NS_PER_SEC, true, &mut l);
        let fg = (rt.heap.target_footprint, rt.heap.concurrent_start_bytes);
        (bg, fg, rt.heap.bytes_allocated)
    };
    let (stock_bg, stock_fg, used) = run(false);
    let (tight_bg, tight_fg, used2) = run(true);
    assert_eq!(used, used2);
    assert_eq!(
        tight_bg.0,
        used + SLACK,
        "the policy's target replaces the stock one"
    );
    assert_eq!(tight_bg.2, tight_bg.0, "GcStats reports the target in force");
    assert!(
        stock_bg.0 > tight_bg.0,
        "stock background target {} is looser",
        stock_bg.0
    );
    assert!(
        tight_bg.1 >= used && tight_bg.1 <= tight_bg.0,
        "the trigger sits between the live bytes and the target"
    );
    assert_eq!(
        tight_fg, stock_fg,
        "back in the foreground the stock target is restored"
    );
    assert_eq!(
        stock_fg,
        (stock_bg.0, stock_bg.1),
        "stock hooks never change the target"
    );
}
