//! Policy hook points of the runtime (DESIGN §4), with stock ART as the default implementation.
//!
//! Like MMTk's `Plan`, a policy overrides only what it changes; every method has the stock-ART
//! default. The collector is generic over the hooks (`H: RuntimeHooks + ?Sized`), so with a
//! concrete policy the default methods inline to nothing on the hot path; the framework holds each
//! app's hooks as `Box<dyn RuntimeHooks>` and the runtime calls them through `&mut *boxed` (there is
//! no forwarding impl that could forget a hook).
//!
//! **Hooks decide, the runtime acts.** No hook receives anything that can call another hook:
//! hooks get read-only heap views, an [`engine::HookCx`] (simulated `now`, the acting thread, the
//! policy's CPU under `Category::Policy`, timers) and output buffers the runtime applies after the
//! hook returns. A policy may therefore keep its state in an `Rc<RefCell<_>>` shared with its other
//! layers' hooks and never meet a second borrow. Timers scheduled through the cx land in
//! [`crate::Runtime::timers`], which the framework drains after each runtime call.
//!
//! The hooks, in the order the runtime calls them, with when (simulated time) and what they may
//! read and change. "cx actor" is `AppGc(pid)` unless said otherwise.
//! - [`RuntimeHooks::on_alloc`] — every mutator allocation through [`crate::Runtime::alloc`], after
//!   the object exists (not heap construction by `alloc_quiet`, not GC copies). Reads the new
//!   object; may set its metadata bits. Only called when [`RuntimeHooks::object_events`] is true.
//! - [`RuntimeHooks::barrier`] — every app access of an object ([`crate::access`], `JavaApp`
//!   accesses, reference stores), at the access time, before the pages are touched. Reads the
//!   object, its page range and the [`AccessKind`]; may change its metadata bits, skip the page
//!   touch and stall the accessing thread (an object fault): the stall is on the accessing thread's
//!   critical path (returned by `JavaApp::touch_logical`, added to `StepCost::main_stall`). No cx:
//!   it runs per object.
//! - [`RuntimeHooks::on_state_change`] — when the app changes foreground/background state
//!   ([`crate::Runtime::set_foreground`]), cx actor `AppMain(pid)`. May schedule one GC after a
//!   delay (stock: the compacting collector transition 5 s after going to the background),
//!   cancelled by the next state change.
//! - [`RuntimeHooks::next_task`] — the policy's own periodic runtime work: asked at the runtime's
//!   first allocation and after each state change (cx actor `AppMain(pid)`) and after each
//!   collection of any cause (cx actor `AppGc(pid)`, `now` = the GC's end). Returns when
//!   its next collection is due and its kind; it runs with [`GcCause::Policy`] when the framework
//!   ticks the app at that time (`JavaApp::pending_gc` reports the earliest due GC). Return the same
//!   time again to keep a schedule.
//! - a collection ([`crate::gc::collect`]) runs at its start time, with these hooks in order:
//!   1. [`RuntimeHooks::choose_gc`] — which collector (sticky/full/compacting), given the cause and
//!      ART's proposal;
//!   2. [`RuntimeHooks::collected_set`] — which regions and large objects the GC may collect
//!      (stock: sticky → young regions; full → every region and every large object). Objects
//!      outside the set are kept alive, untraced and unmoved; references from them into the set
//!      must come from the remembered set or [`RuntimeHooks::extra_roots`];
//!   3. [`RuntimeHooks::evacuate`] — per collected region: evacuate or sweep in place;
//!   4. [`RuntimeHooks::extra_roots`] — objects whose references are roots (a card table); an extra
//!      root outside the collected set is scanned (its pages read) like a remembered object;
//!   5. [`RuntimeHooks::trace_order`] — DFS mark stack or BFS with depth (Fleet's NRO
//!      classification);
//!   6. per marked object (hot path, no cx): [`RuntimeHooks::visit_mode`] (Marvin's bookmarks,
//!      Fleet's opaque objects) and [`RuntimeHooks::on_mark`] (metadata bits and destination
//!      group); [`RuntimeHooks::group_alignment`] once per destination group and GC (page-aligned
//!      stub space);
//!   7. per swept object: [`RuntimeHooks::on_free`] (only when [`RuntimeHooks::object_events`]);
//!   8. [`RuntimeHooks::after_gc`] — at the GC's end (start + duration): pushes page hints
//!      (`madvise` ranges, e.g. [`crate::Heap::group_ranges`]) that the runtime applies through the
//!      backing, on the GC thread, after the hook returns; may add GC-thread time and a
//!      stop-the-world pause of the main thread (reported in [`GcStats::pause_ns`] like the flip);
//!      may replace the heap's target footprint ([`AfterGc::target_footprint`], e.g. a tight
//!      background heap) until the next GC or state change.
//!
//! [`RuntimeHooks::is_stock`] lets a full DFS GC whose hooks act as stock ART's (optionally
//! bookmarking the objects of [`RuntimeHooks::bookmark_mask`]) take a specialised trace loop that
//! calls no per-object hook for objects marked in place.

use crate::gc::{GcCause, GcKind, GcStats};
use crate::heap::{Heap, Meta, ObjId, ObjView, OBJECT_ALIGNMENT};
use engine::{Actor, HookCx, Nanos, Stall, NS_PER_SEC};
use kernel::types::{Advice, PageIdx};

/// How the collector traverses the object graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceOrder {
    /// ART's mark stack (depth-first); depths are reported as [`NO_DEPTH`].
    Dfs,
    /// Breadth-first with a depth counter (Fleet §5.3.1's mark queue with depth delimiters).
    Bfs,
}

/// Depth passed to [`RuntimeHooks::on_mark`] when the trace order does not track depth.
pub const NO_DEPTH: u32 = u32::MAX;

/// How the collector handles one marked object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VisitMode {
    /// Read (and copy, if its region is evacuated) the object: touches its pages.
    Normal,
    /// Live; its references are read from elsewhere (Marvin's stub) without touching the object's
    /// pages. If its region is evacuated it is still copied (touching it).
    Bookmarked,
    /// Live, not scanned and not touched. If its region is evacuated it is still copied. To keep
    /// whole groups of objects alive without tracing them (Fleet's background-object GC keeping
    /// foreground objects), leave them out of the collected set instead
    /// ([`RuntimeHooks::collected_set`]): an opaque object's unmarked referents in the collected set
    /// are freed.
    Opaque,
}

/// What kind of access the barrier sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AccessKind {
    Read,
    Write,
    /// A reference store into slot `slot` of the object (the new value is `target`, maybe
    /// [`crate::NULL`]).
    RefStore {
        slot: u32,
        target: ObjId,
    },
}

impl AccessKind {
    pub fn is_write(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// One object access as the barrier sees it.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    /// Simulated time of the access.
    pub now: Nanos,
    /// The accessing thread (its critical path pays [`BarrierOutcome::stall`]).
    pub actor: Actor,
    pub obj: ObjView,
    /// The object's current pages `[first_page, first_page + pages)`.
    pub first_page: PageIdx,
    pub pages: u32,
    pub kind: AccessKind,
}

/// What a barrier asks the runtime to do for one object access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierOutcome {
    /// Touch the object's pages (false when the policy serves the access itself).
    pub touch: bool,
    /// Extra stall of the accessing thread (e.g. an object fault from a swap file), added to its
    /// critical path.
    pub stall: Stall,
}

impl BarrierOutcome {
    pub const TOUCH: BarrierOutcome = BarrierOutcome {
        touch: true,
        stall: Stall::ZERO,
    };
}

/// Which regions and large objects a collection may collect. Dense: one flag per region and per
/// large-object slot ([`Heap::los`]).
#[derive(Debug, Clone, Default)]
pub struct CollectedSet {
    regions: Vec<bool>,
    large: Vec<bool>,
}

impl CollectedSet {
    /// ART's set for `kind`: sticky GCs collect the regions allocated since the last GC; full GCs
    /// every used region and every large object.
    pub fn stock(heap: &Heap, kind: GcKind) -> Self {
        let full = !kind.is_sticky();
        CollectedSet {
            regions: heap
                .regions
                .iter()
                .map(|r| r.state == crate::heap::RegionState::Used && (full || r.young))
                .collect(),
            large: heap.los.iter().map(|s| full && s.obj != crate::NULL).collect(),
        }
    }

    /// Whether region `r` is collected.
    #[inline(always)]
    pub fn region(&self, r: u32) -> bool {
        self.regions.get(r as usize).copied().unwrap_or(false)
    }

    /// Collect region `r` or keep it whole (a free region is never collected).
    pub fn set_region(&mut self, r: u32, collect: bool) {
        if let Some(x) = self.regions.get_mut(r as usize) {
            *x = collect;
        }
    }

    /// Whether the large object in slot `s` of [`Heap::los`] is collected.
    #[inline(always)]
    pub fn large(&self, s: u32) -> bool {
        self.large.get(s as usize).copied().unwrap_or(false)
    }

    /// Collect the large object in slot `s` or keep it.
    pub fn set_large(&mut self, s: u32, collect: bool) {
        if let Some(x) = self.large.get_mut(s as usize) {
            *x = collect;
        }
    }

    /// Whether every used region and every large object is collected.
    pub(crate) fn is_everything(&self, heap: &Heap) -> bool {
        heap.regions
            .iter()
            .zip(&self.regions)
            .all(|(r, &c)| c || r.state != crate::heap::RegionState::Used)
            && heap
                .los
                .iter()
                .zip(&self.large)
                .all(|(s, &c)| c || s.obj == crate::NULL)
    }
}

/// What [`RuntimeHooks::after_gc`] asks of the runtime once it returns.
#[derive(Debug, Clone, Default)]
pub struct AfterGc {
    /// Page hints `(first_page, n, advice)` applied in order through the backing by the GC thread
    /// (their stalls add to the GC's duration).
    pub hints: Vec<(PageIdx, u32, Advice)>,
    /// Extra GC-thread time (e.g. writing objects out), added to the GC's duration.
    pub gc_stall: Stall,
    /// A stop-the-world pause of the main thread, added to [`GcStats::pause_ns`] (the main thread
    /// pays it like the flip pause).
    pub pause_ns: Nanos,
    /// Replace the target footprint this GC computed (`GrowForUtilization`) with this many bytes
    /// (capped at the growth limit, at least the bytes allocated); the concurrent GC's trigger
    /// keeps its distance below the target. The policy's target holds until the next GC, or until
    /// the app's next state change, which restores the stock target of that GC. `None`: stock.
    pub target_footprint: Option<u64>,
}

/// Policy hooks. All methods default to stock ART. See the module docs for when each is called.
pub trait RuntimeHooks {
    /// Run one collection with these hooks ([`crate::gc::collect`]). Not a policy seam: never
    /// override it. The runtime holds its hooks as `dyn RuntimeHooks`; this default body is
    /// compiled once per implementing type, so the collector's per-object hook calls
    /// (`visit_mode`, `on_mark`, ...) are direct calls into that type, inlined where small, instead
    /// of two virtual calls per visited object.
    #[doc(hidden)]
    fn run_collection(
        &mut self,
        heap: &mut Heap,
        kind: GcKind,
        cx: &mut HookCx,
        backing: &mut dyn crate::backing::PageBacking,
        costs: &crate::gc::GcCosts,
    ) -> GcStats {
        crate::gc::collect(heap, self, kind, cx, backing, costs)
    }

    /// Pick the collector for a GC with `cause`; `proposed` is ART's choice (`next_gc_type_` for
    /// background/alloc GCs; a compacting full GC for transitions).
    fn choose_gc(&mut self, _cx: &mut HookCx, _heap: &Heap, _cause: GcCause, proposed: GcKind) -> GcKind {
        proposed
    }

    /// Called when the app changes state (`cx.now`). Return `Some((delay, kind))` to schedule a GC
    /// after `delay` (cancelled if the state changes again first). Stock ART: going to the
    /// background requests a collector transition (a compacting CC full GC) after 5 s.
    fn on_state_change(
        &mut self,
        _cx: &mut HookCx,
        _heap: &Heap,
        foreground: bool,
    ) -> Option<(Nanos, GcKind)> {
        if foreground {
            None
        } else {
            Some((5 * NS_PER_SEC, GcKind::Full { compact: true }))
        }
    }

    /// The policy's next periodic collection: `(due time, kind)`, run with [`GcCause::Policy`].
    /// Stock: none.
    fn next_task(&mut self, _cx: &mut HookCx, _heap: &Heap, _foreground: bool) -> Option<(Nanos, GcKind)> {
        None
    }

    /// Which regions and large objects this collection may collect; `set` starts as ART's
    /// ([`CollectedSet::stock`]).
    fn collected_set(&mut self, _cx: &mut HookCx, _heap: &Heap, _kind: GcKind, _set: &mut CollectedSet) {}

    /// Trace order for a collection.
    fn trace_order(&self, _kind: GcKind) -> TraceOrder {
        TraceOrder::Dfs
    }

    /// Whether collected region `r` is evacuated; `default` is ART's rule.
    fn evacuate(&mut self, _cx: &mut HookCx, _heap: &Heap, _r: u32, _kind: GcKind, default: bool) -> bool {
        default
    }

    /// Extra roots for a collection (e.g. objects on dirty cards of a policy's card table).
    fn extra_roots(&mut self, _cx: &mut HookCx, _heap: &Heap, _kind: GcKind, _out: &mut Vec<ObjId>) {}

    /// How to visit a marked object.
    #[inline(always)]
    fn visit_mode(&mut self, _obj: &ObjView) -> VisitMode {
        VisitMode::Normal
    }

    /// An object was just marked at `depth` (BFS) or [`NO_DEPTH`]. `young` says whether it is in a
    /// region allocated since the last GC (Fleet's FYO flag). The policy may update `meta`; it
    /// returns the destination group for the copy (0 = default to-space).
    #[inline(always)]
    fn on_mark(&mut self, _obj: &ObjView, _depth: u32, _young: bool, _meta: &mut Meta) -> u8 {
        0
    }

    /// Alignment in bytes (a power of two, at least 8) of objects copied into destination group
    /// `group`; asked once per group and collection. `PAGE_SIZE` makes every copy start a page.
    fn group_alignment(&self, _group: u8) -> u32 {
        OBJECT_ALIGNMENT
    }

    /// Whether destination group `group` is a space of its own outside the region space (Marvin's
    /// swapped-in space): its regions are not counted by the region-allocation guard (ART's
    /// `RegionSpace::AllocateRegion` half-free rule covers the region space only). Asked once
    /// per region the collector takes for the group.
    fn separate_space(&self, _group: u8) -> bool {
        false
    }

    /// Whether the runtime calls [`Self::on_alloc`] and [`Self::on_free`]. Asked once per
    /// allocation and once per collection; default `false` (no per-object calls at all).
    fn object_events(&self) -> bool {
        false
    }

    /// A mutator allocated `obj`; the policy may set its metadata bits.
    #[inline(always)]
    fn on_alloc(&mut self, _obj: &ObjView, _meta: &mut Meta) {}

    /// A collection is about to free `obj` (its id will be reused).
    #[inline(always)]
    fn on_free(&mut self, _obj: &ObjView) {}

    /// Read/write barrier on an app access of an object, with its metadata bits.
    #[inline(always)]
    fn barrier(&mut self, _access: &Access, _meta: &mut Meta) -> BarrierOutcome {
        BarrierOutcome::TOUCH
    }

    /// Whether [`Self::barrier`] behaves as the default right now (every access touches the
    /// object's pages and changes no metadata, nothing else happens), so an access need not visit
    /// objects one by one and may replay the page runs memoised since the last collection. Asked
    /// before each access; the answer may depend on the policy's state (Fleet: ungrouped in the
    /// foreground). Default `false`; only return `true` when `barrier` would do nothing else for
    /// every access until the state changes.
    fn default_barrier(&self) -> bool {
        false
    }

    /// After a collection (at `cx.now` = its end): push page hints, GC-thread time or a main-thread
    /// pause into `out`; the runtime applies them after this returns.
    fn after_gc(&mut self, _cx: &mut HookCx, _heap: &Heap, _stats: &GcStats, _out: &mut AfterGc) {}

    /// Whether these hooks behave as stock ART during this collection's trace, so the collector
    /// may trace a full GC that collects everything with a specialised loop that does not call
    /// them for objects marked in place: [`Self::visit_mode`] is [`VisitMode::Normal`], or
    /// [`VisitMode::Bookmarked`] exactly for objects whose metadata has a bit of
    /// [`Self::bookmark_mask`], and [`Self::on_mark`] leaves `meta` alone and has no other effect
    /// (its group is not used: only objects of evacuated regions are copied, and the loop still
    /// calls both hooks for them). Asked once per collection, after [`Self::choose_gc`]; the
    /// answer may depend on the policy's state (Marvin: every walk but a stub round). Default
    /// `false`.
    fn is_stock(&self) -> bool {
        false
    }

    /// Whether [`Self::visit_mode`] and [`Self::on_mark`] do nothing during this collection:
    /// `visit_mode` answers [`VisitMode::Normal`] and `on_mark` returns group 0, leaves `meta`
    /// alone and has no other effect, for every object. The collector then calls neither (two
    /// dynamic calls per visited object). Asked once per collection. Default `false`.
    fn marks_silently(&self) -> bool {
        false
    }

    /// The metadata bits that make [`Self::visit_mode`] answer [`VisitMode::Bookmarked`] when
    /// [`Self::is_stock`] is `true` (read by the specialised loop). Default: none.
    fn bookmark_mask(&self) -> Meta {
        0
    }

    /// Whether [`Self::visit_mode`] never answers [`VisitMode::Opaque`] in a full GC of the whole
    /// heap, so such a GC taking the generic loop may follow a recorded marking tree instead of
    /// the reference slots (module `gc::tree`; same effects). Default `false`.
    fn never_opaque(&self) -> bool {
        false
    }
}

/// Stock ART: all defaults.
#[derive(Debug, Default, Clone, Copy)]
pub struct StockArt;

impl RuntimeHooks for StockArt {
    fn is_stock(&self) -> bool {
        true
    }
    fn marks_silently(&self) -> bool {
        true
    }
    fn default_barrier(&self) -> bool {
        true
    }
}
