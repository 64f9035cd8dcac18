//! Policy hook points of the runtime (DESIGN §4), with stock ART as the default implementation.
//!
//! Like MMTk's `Plan`, a policy overrides only what it changes; every method has the stock-ART
//! default. The collector is generic over the hooks, so the default methods inline to nothing on the
//! hot path. Hook points:
//! - **which collector runs when**: [`RuntimeHooks::choose_gc`] (sticky vs full, or a policy's own
//!   choice such as Fleet's background-object GC expressed as a full GC whose
//!   [`RuntimeHooks::visit_mode`] treats foreground objects as opaque), and
//!   [`RuntimeHooks::on_state_change`] (stock: background compaction 5 s after going to the background,
//!   `Heap::kCollectorTransitionWait`);
//! - **which regions are evacuated**: [`RuntimeHooks::evacuate`] (stock: `Region::ShouldBeEvacuated`);
//! - **trace order** (DFS mark stack, or BFS with depth — Fleet's NRO classification);
//! - **where a copied object goes**: [`RuntimeHooks::on_mark`] returns a destination group; each
//!   group bump-allocates into its own to-space regions (Fleet's launch / WS / cold regions);
//! - **how the GC reads an object**: [`RuntimeHooks::visit_mode`] (Marvin's bookmarks: read the
//!   references from the stub without touching the object's pages);
//! - **read/write barrier** with the object's metadata bits: [`RuntimeHooks::barrier`] (Marvin's
//!   access bits, stub redirection and object faults; Fleet's card table);
//! - **runtime → kernel hints** after each GC: [`RuntimeHooks::after_gc`] may call
//!   [`PageBacking::advise`] on page ranges (e.g. [`crate::Heap::group_ranges`]).

use crate::backing::PageBacking;
use crate::gc::{GcCause, GcKind, GcStats};
use crate::heap::{Heap, ObjView};
use engine::{Nanos, Stall, NS_PER_SEC};

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
    /// Live, not scanned and not touched (Fleet's BGC treats foreground objects this way; their
    /// outgoing references must be covered by the policy's card table via extra roots). If its
    /// region is evacuated it is still copied.
    Opaque,
}

/// What a barrier asks the runtime to do for one object access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BarrierOutcome {
    /// Touch the object's pages (false when the policy serves the access itself).
    pub touch: bool,
    /// Extra stall of the accessing thread (e.g. an object fault from a swap file).
    pub stall: Stall,
}

impl BarrierOutcome {
    pub const TOUCH: BarrierOutcome = BarrierOutcome {
        touch: true,
        stall: Stall::ZERO,
    };
}

/// Policy hooks. All methods default to stock ART.
pub trait RuntimeHooks {
    /// Pick the collector for a GC with `cause`; `proposed` is ART's choice (`next_gc_type_` for
    /// background/alloc GCs; a compacting full GC for transitions).
    fn choose_gc(&mut self, _heap: &Heap, _cause: GcCause, proposed: GcKind) -> GcKind {
        proposed
    }

    /// Called when the app changes state. Return `Some((delay, kind))` to schedule a GC after
    /// `delay` (cancelled if the state changes again first). Stock ART: going to the background
    /// requests a collector transition (a compacting CC full GC) after 5 s.
    fn on_state_change(&mut self, _heap: &Heap, _now: Nanos, foreground: bool) -> Option<(Nanos, GcKind)> {
        if foreground {
            None
        } else {
            Some((5 * NS_PER_SEC, GcKind::Full { compact: true }))
        }
    }

    /// Trace order for a collection.
    fn trace_order(&self, _kind: GcKind) -> TraceOrder {
        TraceOrder::Dfs
    }

    /// Whether region `r` (a candidate of this collection) is evacuated; `default` is ART's rule.
    fn evacuate(&mut self, _heap: &Heap, _r: u32, _kind: GcKind, default: bool) -> bool {
        default
    }

    /// How to visit a marked object.
    #[inline(always)]
    fn visit_mode(&mut self, _obj: &ObjView) -> VisitMode {
        VisitMode::Normal
    }

    /// An object was just marked at `depth` (BFS) or [`NO_DEPTH`]. `young` says whether it is in a
    /// region allocated since the last GC (Fleet's FYO flag). The policy may update `meta`; it
    /// returns the destination group for the copy (0 = default to-space).
    #[inline(always)]
    fn on_mark(&mut self, _obj: &ObjView, _depth: u32, _young: bool, _meta: &mut u8) -> u8 {
        0
    }

    /// Extra roots for a collection (e.g. objects on dirty cards of a policy's card table).
    fn extra_roots(&mut self, _heap: &Heap, _kind: GcKind, _out: &mut Vec<crate::heap::ObjId>) {}

    /// Read/write barrier on an app access of an object, with its metadata bits.
    #[inline(always)]
    fn barrier(&mut self, _obj: &ObjView, _meta: &mut u8, _write: bool) -> BarrierOutcome {
        BarrierOutcome::TOUCH
    }

    /// After a collection (runtime → kernel hints). Returns the stall of the GC thread.
    fn after_gc(
        &mut self,
        _heap: &Heap,
        _stats: &GcStats,
        _now: Nanos,
        _backing: &mut dyn PageBacking,
    ) -> Stall {
        Stall::ZERO
    }

    /// Whether these hooks behave exactly as stock ART during a trace ([`Self::visit_mode`] is
    /// always [`VisitMode::Normal`], [`Self::on_mark`] returns group 0 and leaves `meta` alone), so
    /// the collector may trace full GCs with a specialised loop that does not call them. Default
    /// `false`; only override it with `true` when both methods keep their defaults.
    fn is_stock(&self) -> bool {
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
}

/// A boxed policy forwards every hook (the framework holds each app's hooks as a trait object).
impl RuntimeHooks for Box<dyn RuntimeHooks> {
    fn choose_gc(&mut self, heap: &Heap, cause: GcCause, proposed: GcKind) -> GcKind {
        (**self).choose_gc(heap, cause, proposed)
    }
    fn on_state_change(&mut self, heap: &Heap, now: Nanos, foreground: bool) -> Option<(Nanos, GcKind)> {
        (**self).on_state_change(heap, now, foreground)
    }
    fn trace_order(&self, kind: GcKind) -> TraceOrder {
        (**self).trace_order(kind)
    }
    fn evacuate(&mut self, heap: &Heap, r: u32, kind: GcKind, default: bool) -> bool {
        (**self).evacuate(heap, r, kind, default)
    }
    #[inline(always)]
    fn visit_mode(&mut self, obj: &ObjView) -> VisitMode {
        (**self).visit_mode(obj)
    }
    #[inline(always)]
    fn on_mark(&mut self, obj: &ObjView, depth: u32, young: bool, meta: &mut u8) -> u8 {
        (**self).on_mark(obj, depth, young, meta)
    }
    fn extra_roots(&mut self, heap: &Heap, kind: GcKind, out: &mut Vec<crate::heap::ObjId>) {
        (**self).extra_roots(heap, kind, out)
    }
    #[inline(always)]
    fn barrier(&mut self, obj: &ObjView, meta: &mut u8, write: bool) -> BarrierOutcome {
        (**self).barrier(obj, meta, write)
    }
    fn after_gc(&mut self, heap: &Heap, stats: &GcStats, now: Nanos, backing: &mut dyn PageBacking) -> Stall {
        (**self).after_gc(heap, stats, now, backing)
    }
    fn is_stock(&self) -> bool {
        (**self).is_stock()
    }
}
