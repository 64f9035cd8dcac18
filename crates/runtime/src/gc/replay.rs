//! Replay of a full trace whose result is known (see the [`super`] docs, step 3).
//!
//! A policy that walks the whole heap periodically (Marvin's WriteTask: every 5 s in the
//! foreground, 30 s in the background) mostly re-traces a heap whose live graph has not changed:
//! a background app only allocates short-lived garbage. The simulator then records what the trace
//! did and, at the next full collection, re-issues it instead of tracing, with the same effects
//! operation by operation:
//! - **Recorded** (full, non-compacting DFS collections of the whole heap with stock hooks and
//!   no extra roots): every page touch of an object marked in place, in order (a touch the
//!   previous one already covers is left out: it cannot change the touch batch), and every copy
//!   of an object out of an evacuated region, in order; the mark bitmap, the objects and bytes
//!   marked per unevacuated region, the regions the copies went to, and the visit and reference
//!   counts.
//! - **Replayed** when the next collection is the very next one on this heap (no collection in
//!   between, so nothing moved or died), nothing changed what a trace computes since
//!   ([`Heap::graph_clock`](crate::heap::Heap): reference stores, root changes, metadata
//!   changes; the roots are also compared), the hooks' bookmark mask and the backing's
//!   free-touch property are the same, every region where objects were marked in place is still
//!   unevacuated and every region the copies went to is now evacuated. Touches go through the
//!   live touch batch to the backing; copies are done for real (they move objects and take
//!   regions: the destination regions differ at each collection). The replayed collection
//!   then stands for the recorded one at the next collection.
//!
//! - **Not recorded** while records keep going to waste: a heap whose graph changes between full
//!   collections (an app churning its objects, Marvin §8.3's benchmark) would record every trace
//!   and replay none; after two records in a row were refused because the graph changed or a
//!   collection ran since, it records one eligible collection in 2, then 4, 8 and at most 16
//!   ([`TraceMemo::records`]), until a replay resets the count.
//!
//! Each full collection traced for real is counted by why it was not replayed ([`Refusal`],
//! `Heap::trace_refusals`). One that cannot replay but follows a collection that recorded its
//! marking tree re-walks that tree instead (module `tree`, `Heap::tree_rewalks`; not counted as
//! a refusal).
//!
//! A record can also replay across one compaction that laid the heap out as the one before the
//! record did (module `layout`).
//!
//! Objects allocated since the recorded trace are unreachable (reaching them needs a reference
//! store or a root), so the marked set is the recorded one. A recorded trace in which a copy
//! failed (no free region) is not replayed.

use super::layout::Layout;
use super::{RegMark, Tracer, NO_DEPTH, ROLE_EVAC, ROLE_UNEVAC};
use crate::backing::PageBacking;
use crate::heap::{Heap, Meta, ObjId};
use crate::hooks::RuntimeHooks;

/// Event tag: copy the object whose id is in the low 32 bits.
const COPY: u64 = 1 << 63;
/// Page-touch flag: a write.
const WRITE: u64 = 1 << 62;

/// The last recorded full trace of a heap (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct TraceMemo {
    /// Replay is switched off (tests compare replayed and real traces).
    pub off: bool,
    pub(super) valid: bool,
    /// `Heap::epoch` of the collection it describes.
    pub(super) epoch: u32,
    pub(super) graph_clock: u64,
    pub(super) roots: Vec<ObjId>,
    free: bool,
    mask: Meta,
    /// Page touches (first page, pages, [`WRITE`]) and [`COPY`] events, in order.
    pub(super) events: Vec<u64>,
    mark: Vec<u64>,
    /// Regions with objects marked in place, and what was marked there.
    pub(super) inplace: Vec<(u32, RegMark)>,
    /// Regions the copies went to.
    pub(super) tospace: Vec<u32>,
    /// The layout of the collection right before the recorded one, if it kept one, and the
    /// regions the recorded trace's copies came from (module `layout`).
    pub(super) layout: Option<Layout>,
    pub(super) from: Vec<u32>,
    /// The layout of the last collection that kept one.
    pub(super) last_layout: Option<Layout>,
    /// The last record made right after a collection that kept a layout, kept when a later
    /// record replaced it (module `layout`; only its record fields are used).
    pub(super) stash: Option<Box<TraceMemo>>,
    /// Records translated to a new layout so far.
    pub translations: u64,
    visits: u64,
    refs_scanned: u64,
    /// Collections replayed so far.
    pub replays: u64,
    /// Full collections traced for real so far, by [`Refusal`].
    pub refused: [u64; Refusal::ALL.len()],
    /// Records in a row that were never replayed, and how many eligible collections are still to
    /// trace without recording ([`TraceMemo::records`]).
    wasted: u32,
    skip: u32,
}

/// The most records in a row [`TraceMemo::records`] counts as wasted: after them, one eligible
/// collection in 2^(5-1) records.
const MAX_WASTED: u32 = 5;

/// Why a full collection was traced rather than replayed ([`crate::Heap::trace_refusals`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not a recordable trace: compacting, partial, BFS, with extra roots or hooks that are not
    /// stock (Marvin's stub rounds).
    Ineligible,
    /// No recorded trace (the first one, one whose copy failed, or replay switched off).
    NoRecord,
    /// Another collection ran since the recorded one (objects moved or died).
    Collection,
    /// A reference store, root change or metadata change since the recorded trace.
    Graph,
    /// Another backing touch property, bookmark mask or a smaller mark bitmap.
    Setup,
    /// A region marked in place is evacuated now, or one the copies went to is not.
    Regions,
}

impl Refusal {
    pub const ALL: [Refusal; 6] = [
        Refusal::Ineligible,
        Refusal::NoRecord,
        Refusal::Collection,
        Refusal::Graph,
        Refusal::Setup,
        Refusal::Regions,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Refusal::Ineligible => "ineligible",
            Refusal::NoRecord => "no_record",
            Refusal::Collection => "collection_between",
            Refusal::Graph => "graph_changed",
            Refusal::Setup => "setup",
            Refusal::Regions => "regions",
        }
    }
}

impl TraceMemo {
    /// Why a collection that could record cannot replay instead (`None`: it can), with `roots`, a
    /// mark bitmap of `mark_len` words and the regions' roles `regs` (taken out of `heap` for the
    /// trace).
    pub(super) fn refusal(
        &self,
        heap: &Heap,
        roots: &[ObjId],
        mark_len: usize,
        regs: &[RegMark],
        free: bool,
        mask: Meta,
    ) -> Option<Refusal> {
        let role = |r: u32| regs.get(r as usize).map(|m| m.role);
        if !self.valid || self.off {
            Some(Refusal::NoRecord)
        } else if heap.epoch != self.epoch.wrapping_add(1) {
            Some(Refusal::Collection)
        } else if heap.graph_clock != self.graph_clock || roots != self.roots {
            Some(Refusal::Graph)
        } else if free != self.free || mask != self.mask || self.mark.len() > mark_len {
            Some(Refusal::Setup)
        } else if !self.inplace.iter().all(|&(r, _)| role(r) == Some(ROLE_UNEVAC))
            || !self.tospace.iter().all(|&r| role(r) == Some(ROLE_EVAC))
        {
            Some(Refusal::Regions)
        } else {
            None
        }
    }

    /// Whether an eligible collection that does not replay (for `refusal`) records its trace.
    /// Recording costs the trace about a tenth more (every touch and copy logged, the mark bitmap
    /// kept), and a heap whose graph changes between collections (an app churning its objects)
    /// never replays what it records. So a record not replayed because the graph changed or
    /// another collection ran since counts as wasted, and after `w` wasted records in a row the
    /// next 2^(w-1) - 1 eligible collections (at most 2^([`MAX_WASTED`]-1) - 1) trace without
    /// recording: one change after a replayed stretch costs nothing, steady churn records one
    /// collection in 16. A replay resets the count. Replay is exact, so this changes only the
    /// host's work, never a result.
    pub(super) fn records(&mut self, refusal: Option<Refusal>) -> bool {
        match refusal {
            None => false,
            Some(Refusal::NoRecord) if self.skip > 0 => {
                self.skip -= 1;
                false
            }
            Some(Refusal::Graph | Refusal::Collection) => {
                self.wasted = (self.wasted + 1).min(MAX_WASTED);
                self.skip = (1 << (self.wasted - 1)) - 1;
                self.records(Some(Refusal::NoRecord))
            }
            // Not wasted by the heap's own activity: the first copies of a fresh heap (regions),
            // a change of setup, no record.
            Some(_) => true,
        }
    }

    /// Swap this memo's record (everything but the switch and the counters) with `o`'s.
    pub(super) fn swap_record(&mut self, o: &mut TraceMemo) {
        use std::mem::swap;
        swap(&mut self.valid, &mut o.valid);
        swap(&mut self.epoch, &mut o.epoch);
        swap(&mut self.graph_clock, &mut o.graph_clock);
        swap(&mut self.roots, &mut o.roots);
        swap(&mut self.free, &mut o.free);
        swap(&mut self.mask, &mut o.mask);
        swap(&mut self.events, &mut o.events);
        swap(&mut self.mark, &mut o.mark);
        swap(&mut self.inplace, &mut o.inplace);
        swap(&mut self.tospace, &mut o.tospace);
        swap(&mut self.layout, &mut o.layout);
        swap(&mut self.from, &mut o.from);
        swap(&mut self.visits, &mut o.visits);
        swap(&mut self.refs_scanned, &mut o.refs_scanned);
    }

    /// After an eligible collection: record it (`log`: its events; `failed`: a copy failed) or,
    /// if it was a replay, let it stand for the recorded one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn update(
        &mut self,
        heap: &Heap,
        replayed: bool,
        log: &mut Vec<u64>,
        failed: bool,
        regs: &[RegMark],
        taken: &[u32],
        from: &mut Vec<u32>,
        free: bool,
        mask: Meta,
        visits: u64,
        refs_scanned: u64,
    ) {
        if replayed {
            self.wasted = 0;
            self.epoch = heap.epoch;
            self.tospace.clear();
            self.tospace.extend_from_slice(taken);
            self.replays += 1;
            return;
        }
        let layout = self
            .last_layout
            .clone()
            .filter(|l| l.epoch.wrapping_add(1) == heap.epoch);
        // Keep the record made right after a layout when a record without one replaces it, while
        // the graph is the one it traced (module `layout`).
        if layout.is_some()
            || self
                .stash
                .as_ref()
                .is_some_and(|x| x.graph_clock != heap.graph_clock)
        {
            self.stash = None;
        }
        if layout.is_none() && self.valid && self.layout.is_some() && self.graph_clock == heap.graph_clock {
            let mut kept = Box::default();
            self.swap_record(&mut kept);
            self.stash = Some(kept);
        }
        self.epoch = heap.epoch;
        self.tospace.clear();
        self.tospace.extend_from_slice(taken);
        self.layout = layout;
        std::mem::swap(&mut self.from, from);
        std::mem::swap(&mut self.events, log);
        self.valid = !failed;
        self.graph_clock = heap.graph_clock;
        self.roots.clone_from(&heap.roots);
        self.free = free;
        self.mask = mask;
        self.mark.clone_from(&heap.mark);
        self.inplace.clear();
        self.inplace.extend(
            regs.iter()
                .enumerate()
                .filter(|(_, m)| m.role == ROLE_UNEVAC && m.objs > 0)
                .map(|(r, &m)| (r as u32, m)),
        );
        self.visits = visits;
        self.refs_scanned = refs_scanned;
    }
}

/// Record a touch of an object marked in place, unless the previous event is a touch that covers
/// it and leaves it nothing to do (same pages or fewer, and a read after a write or the same
/// kind: the batch's pending run already covers it, whatever came before).
#[inline(always)]
pub(super) fn log_touch(log: &mut Vec<u64>, first: u32, n: u32, write: bool) {
    if let Some(&a) = log.last() {
        let (af, an, aw) = (a as u32, ((a >> 32) as u32) & ((1 << 30) - 1), a & WRITE != 0);
        if a & COPY == 0 && first >= af && first + n <= af + an && (aw || !write) {
            return;
        }
    }
    log.push(first as u64 | (n as u64) << 32 | if write { WRITE } else { 0 });
}

/// Record a copy of `o`.
#[inline(always)]
pub(super) fn log_copy(log: &mut Vec<u64>, o: ObjId) {
    log.push(COPY | o as u64);
}

/// Whether event `e` is a copy (else a page touch, its first page in the low 32 bits).
pub(super) fn is_copy(e: u64) -> bool {
    e & COPY != 0
}

impl<H: RuntimeHooks + ?Sized> Tracer<'_, H> {
    /// Re-issue the recorded trace `memo` (checked by [`TraceMemo::replayable`]).
    pub(super) fn replay(&mut self, memo: &TraceMemo) {
        for &e in &memo.events {
            if e & COPY != 0 {
                // Marked at first reference and copied: `visit` finds its region evacuated.
                let _ = self.visit(e as u32, NO_DEPTH);
            } else {
                let n = ((e >> 32) as u32) & ((1 << 30) - 1);
                self.batch
                    .touch::<dyn PageBacking>(self.backing, e as u32, n, e & WRITE != 0);
            }
        }
        self.mark[..memo.mark.len()].copy_from_slice(&memo.mark);
        for &(r, m) in &memo.inplace {
            let x = &mut self.regs[r as usize];
            x.objs = m.objs;
            x.bytes = m.bytes;
        }
        self.st.visits = memo.visits;
        self.st.refs_scanned = memo.refs_scanned;
    }
}
