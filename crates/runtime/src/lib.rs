//! ART-like managed runtime for hotlaunch (DESIGN §3.10, §3.11, §4).
//!
//! What is modelled: per-app Java heaps of 256 KiB regions with bump-pointer allocation and a
//! large-object space ([`heap`]); ART's concurrent copying collector in its full and sticky
//! (generational) forms, with ART's triggering, heap-growth and sticky-vs-full rules and the
//! background collector transition ([`gc`]); object-level accesses that map to pages through object
//! addresses ([`access`]); the policy hook points Marvin and Fleet need ([`hooks`]); heap generators
//! and the papers' synthetic apps ([`gen`]); and HPROF heap-dump import ([`hprof`]).
//!
//! The runtime touches memory only through the [`PageBacking`] trait, which the kernel implements:
//! every object the GC visits or copies touches its pages there, so swapped-out pages fault back in
//! with the stall on the GC thread (`Actor::AppGc(pid)`), and GC-touched pages look recently used to
//! reclaim — the GC–swap conflict of Fleet Fig. 4 and Marvin §3.3.
//!
//! Sources: AOSP `art/runtime/gc/heap.{h,cc}`, `collector/concurrent_copying.cc`,
//! `space/region_space.{h,cc}`, `runtime.cc`; Fleet (ASPLOS'24) §2, §4–§5, §7.1; Marvin (ATC'19)
//! §3–§6, §8.3; /work/shared/REFERENCE.md "ART heap and GC" and "HPROF heap dumps". Each module's
//! docs list what is simplified.

pub mod access;
pub mod app;
pub mod backing;
pub mod bench;
pub mod blueprint;
pub mod check;
pub mod gc;
pub mod gen;
pub mod heap;
pub mod hooks;
pub mod hprof;
pub mod kernel_backing;
pub mod launch_bias;
pub mod lazy;
pub mod linked;
pub mod prefix;
mod touch_memo;

pub use access::{AccessStats, Span};
pub use app::{JavaApp, JavaModel, JavaParams};
pub use backing::{MockBacking, NullBacking, PageBacking};
pub use blueprint::Blueprint;
pub use gc::{GcCause, GcCosts, GcKind, GcStats};
pub use heap::{ClassId, ClassKind, Heap, HeapConfig, HeapError, Meta, ObjId, NULL};
pub use hooks::{Access, AccessKind, AfterGc, BarrierOutcome, CollectedSet, RuntimeHooks, StockArt};
pub use launch_bias::LaunchBias;
pub use lazy::LazyBlueprint;
pub use linked::LinkedParams;

use engine::{Actor, CpuLedger, HookCx, Nanos, Stall, Timers};

/// One app's runtime: its heap, the policy hooks, GC costs, the GCs scheduled by the policy and
/// the policy's timer requests. This is the step API the framework drives.
///
/// `H` may be unsized (`Runtime<dyn RuntimeHooks>`, as `JavaApp` holds it): the hooks are boxed
/// and the collector is generic over `H: ?Sized`, so every hook reaches the policy itself.
pub struct Runtime<H: RuntimeHooks + ?Sized = StockArt> {
    pub heap: Heap,
    pub hooks: Box<H>,
    pub costs: GcCosts,
    /// A GC scheduled by [`RuntimeHooks::on_state_change`] (due time, kind).
    pub pending: Option<(Nanos, GcKind)>,
    /// The policy's next periodic task ([`RuntimeHooks::next_task`]): due time, kind.
    pub task: Option<(Nanos, GcKind)>,
    /// Timers the hooks scheduled through their [`HookCx`]; the framework drains them after each
    /// call into the runtime (each fires the policy's `on_timer(token)`).
    pub timers: Timers,
    /// Whether [`RuntimeHooks::next_task`] was asked yet (it is first asked at the first
    /// allocation).
    task_asked: bool,
    /// Every collection run so far (kept small: one `GcStats` per GC).
    pub history: Vec<GcStats>,
    /// Dalvik's heap trim, due [`HeapConfig::trim_delay_ns`] after the last GC (`None` on ART,
    /// or once trimmed); a later GC postpones it, as a GC request wakes Dalvik's GC daemon
    /// before its trim timeout.
    pub trim_due: Option<Nanos>,
    /// Pages the heap trims released so far.
    pub trimmed_pages: u64,
}

impl<H: RuntimeHooks + ?Sized> std::fmt::Debug for Runtime<H> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("pid", &self.heap.pid)
            .field("pending", &self.pending)
            .field("task", &self.task)
            .field("gcs", &self.history.len())
            .finish()
    }
}

/// Cost of one mutator step for the main thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct StepCost {
    /// Main-thread stall: page touches, GC pauses, blocking GCs.
    pub main_stall: Stall,
    /// The last GC this step triggered, if any.
    pub gc: Option<GcStats>,
}

impl StepCost {
    /// Add a later step's cost: stalls add up, the latest GC is kept.
    pub fn merge(&mut self, c: StepCost) {
        self.main_stall.add(c.main_stall);
        if c.gc.is_some() {
            self.gc = c.gc;
        }
    }
}

impl<H: RuntimeHooks> Runtime<H> {
    pub fn new(pid: u32, config: HeapConfig, hooks: H) -> Self {
        Runtime::boxed(pid, config, Box::new(hooks))
    }
}

impl<H: RuntimeHooks + ?Sized> Runtime<H> {
    /// A runtime with boxed (possibly unsized) hooks.
    pub fn boxed(pid: u32, config: HeapConfig, hooks: Box<H>) -> Self {
        Self {
            heap: Heap::new(pid, config),
            hooks,
            costs: GcCosts::default(),
            pending: None,
            task: None,
            timers: Timers::default(),
            task_asked: false,
            history: Vec::new(),
            trim_due: None,
            trimmed_pages: 0,
        }
    }

    pub fn pid(&self) -> u32 {
        self.heap.pid
    }

    /// When the next scheduled GC (state-change GC or policy task) or heap trim is due, if any.
    pub fn next_due(&self) -> Option<Nanos> {
        [self.pending.map(|p| p.0), self.task.map(|p| p.0), self.trim_due]
            .into_iter()
            .flatten()
            .min()
    }

    /// Run a collection on the GC thread, requested at `now`: it starts when the thread is free
    /// (`GcStats::start`, after the app's previous collection ended: one GC thread, as ART's heap
    /// task daemon runs one collection at a time). The flip pause is the main thread's stall.
    /// Afterwards the policy is asked for its next task.
    pub fn collect(
        &mut self,
        now: Nanos,
        cause: GcCause,
        kind: Option<GcKind>,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> GcStats {
        let now = now.max(self.heap.last_gc_end);
        let pid = self.heap.pid;
        let mut cx = HookCx::new(now, Actor::AppGc(pid), ledger, &mut self.timers);
        let proposed = kind.unwrap_or_else(|| gc::proposed_kind(&self.heap));
        let kind = self.hooks.choose_gc(&mut cx, &self.heap, cause, proposed);
        let mut st = self
            .hooks
            .run_collection(&mut self.heap, kind, &mut cx, backing, &self.costs);
        st.cause = cause;
        // The GC thread is busy until this collection's end (incl. the policy's after-GC work).
        self.heap.last_gc_end = now + st.duration_ns;
        self.history.push(st);
        if let Some(d) = self.heap.config.trim_delay_ns {
            self.trim_due = Some(now + st.duration_ns + d);
        }
        self.ask_next_task(now + st.duration_ns, Actor::AppGc(pid), ledger);
        st
    }

    /// Ask the policy for its next periodic task.
    fn ask_next_task(&mut self, now: Nanos, actor: Actor, ledger: &mut CpuLedger) {
        self.task_asked = true;
        let mut cx = HookCx::new(now, actor, ledger, &mut self.timers);
        let fg = self.heap.foreground;
        self.task = self.hooks.next_task(&mut cx, &self.heap, fg);
    }

    /// Allocate on the main thread. Crossing `concurrent_start_bytes` runs a concurrent GC (the main
    /// thread pays its flip pause); hitting the growth limit (or running out of regions) runs a
    /// blocking full GC (the main thread waits for all of it) and retries; failing again runs a
    /// compacting full GC and retries once more, as `Heap::AllocateInternalWithGc` (Android 10
    /// art/runtime/gc/heap.cc: after the GC plan fails it collects `gc_plan_.back()` with
    /// `clear_soft_references`, and concurrent_copying.cc `InitializePhase` then sets
    /// `force_evacuate_all_`); failing after that is the error (`OutOfMemoryError`).
    pub fn alloc(
        &mut self,
        now: Nanos,
        class: ClassId,
        size: u32,
        nrefs: u32,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<(ObjId, StepCost), HeapError> {
        self.alloc_used(now, class, size, nrefs, nrefs, backing, ledger)
    }

    /// [`Self::alloc`] of an object of which only the first `used` reference slots are expected
    /// to be written ([`Heap::alloc_used`]).
    #[allow(clippy::too_many_arguments)]
    pub fn alloc_used(
        &mut self,
        now: Nanos,
        class: ClassId,
        size: u32,
        nrefs: u32,
        used: u32,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<(ObjId, StepCost), HeapError> {
        let actor = Actor::AppMain(self.heap.pid);
        if !self.task_asked {
            self.ask_next_task(now, actor, ledger);
        }
        let mut cost = StepCost::default();
        let retryable = |r: &Result<_, HeapError>| {
            matches!(r, Err(HeapError::OutOfMemory { .. } | HeapError::NoRegion { .. }))
        };
        let mut res = self
            .heap
            .alloc_used(now, actor, class, size, nrefs, used, backing);
        if retryable(&res) {
            let mut t = now;
            // ART's slow path: a full collection, then (before throwing OOM) the last GC of the
            // plan again with `clear_soft_references`, which makes CC evacuate every region
            // (`force_evacuate_all_`): a compacting full GC that packs partly live regions.
            for compact in [false, true] {
                let st = self.collect(t, GcCause::Alloc, Some(GcKind::Full { compact }), backing, ledger);
                // The main thread waits for a collection already running, then for this one.
                t = st.start + st.pause_ns + st.duration_ns;
                cost.gc = Some(st);
                res = self.heap.alloc_used(t, actor, class, size, nrefs, used, backing);
                if !retryable(&res) {
                    break;
                }
            }
            cost.main_stall.add(Stall {
                ns: t - now,
                psi_ns: 0,
            });
        }
        let a = res?;
        if self.hooks.object_events() {
            let view = self.heap.view(a.id);
            let mut meta = view.meta;
            self.hooks.on_alloc(&view, &mut meta);
            if meta != view.meta {
                self.heap.recs[a.id as usize].meta = meta;
                self.heap.graph_clock += 1;
            }
        }
        cost.main_stall.add(a.stall);
        if a.trigger == heap::Trigger::Concurrent {
            // The new object is referenced from the allocating thread's stack: a root for this GC.
            self.heap.add_root(a.id);
            let st = self.collect(now, GcCause::Background, None, backing, ledger);
            self.heap.roots.pop();
            // A root change: a recorded trace must not be replayed (roots are compared too).
            self.heap.graph_clock += 1;
            cost.main_stall.add(Stall {
                ns: st.pause_ns,
                psi_ns: 0,
            });
            cost.gc = Some(st);
        }
        Ok((a.id, cost))
    }

    /// The app changed state (foreground = jank perceptible) at `now`. Schedules the policy's GC
    /// (stock: background compaction after 5 s; a pending one is cancelled) and asks for its next
    /// task. Hook CPU goes to `ledger` (main thread).
    pub fn set_foreground(&mut self, now: Nanos, foreground: bool, ledger: &mut CpuLedger) {
        if self.heap.foreground != foreground {
            gc::restore_stock_target(&mut self.heap);
        }
        self.heap.foreground = foreground;
        let mut cx = HookCx::new(now, Actor::AppMain(self.heap.pid), ledger, &mut self.timers);
        self.pending = self
            .hooks
            .on_state_change(&mut cx, &self.heap, foreground)
            .map(|(d, k)| (now + d, k));
        self.ask_next_task(now, Actor::AppMain(self.heap.pid), ledger);
    }

    /// Run a scheduled GC if one is due at `now`: the state-change GC (cause
    /// [`GcCause::Transition`]) or else the policy's task ([`GcCause::Policy`]); at most one per
    /// call, the earlier first. A due heap trim (Dalvik) earlier than both runs instead (no GC).
    pub fn tick(
        &mut self,
        now: Nanos,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Option<GcStats> {
        let pending = self.pending.filter(|p| p.0 <= now);
        let task = self.task.filter(|p| p.0 <= now);
        if let Some(due) = self.trim_due.filter(|&d| d <= now) {
            let first_gc = [pending, task].into_iter().flatten().map(|p| p.0).min();
            if first_gc.is_none_or(|g| due < g) {
                self.trim_due = None;
                self.trimmed_pages += self.heap.trim(due, backing);
                return None;
            }
        }
        match (pending, task) {
            (Some((due, kind)), t) if t.is_none_or(|t| due <= t.0) => {
                self.pending = None;
                Some(self.collect(due, GcCause::Transition, Some(kind), backing, ledger))
            }
            (_, Some((due, kind))) => {
                self.task = None;
                Some(self.collect(due, GcCause::Policy, Some(kind), backing, ledger))
            }
            _ => None,
        }
    }

    /// Object-level access by `actor` (see [`access::access`]).
    pub fn access(
        &mut self,
        now: Nanos,
        actor: Actor,
        objs: &[ObjId],
        write: bool,
        span: Span,
        backing: &mut dyn PageBacking,
    ) -> AccessStats {
        access::access(
            &mut self.heap,
            &mut *self.hooks,
            now,
            actor,
            objs,
            write,
            span,
            backing,
        )
    }

    /// Mutator reference store (see [`access::write_ref`]).
    pub fn write_ref(
        &mut self,
        now: Nanos,
        src: ObjId,
        slot: u32,
        dst: ObjId,
        backing: &mut dyn PageBacking,
    ) -> Stall {
        let actor = Actor::AppMain(self.heap.pid);
        access::write_ref(
            &mut self.heap,
            &mut *self.hooks,
            now,
            actor,
            src,
            slot,
            dst,
            backing,
        )
    }
}
