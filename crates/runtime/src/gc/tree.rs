//! The marking tree of a full trace, re-walked by the next full trace when the graph is the same
//! (see the [`super`] docs, step 3).
//!
//! A recorded trace ([`super::replay`]) only stands for the next collection when no collection
//! ran in between: a compacting collection moves every object, so the trace right after it must
//! run again (unless that compaction laid the heap out as the one before the record did: module
//! `layout`). Marvin's stub rounds are such compactions (every 7th background walk), and the walk
//! after each is the costliest part of a background app's steady cycle. What a full DFS trace
//! marks, and in which order, depends only on the roots and the graph, not on where objects are:
//! - **Recorded** by full DFS traces of the whole heap that take the generic loop (hooks that are
//!   not stock, e.g. a stub round) with no extra roots: for each object scanned with reference
//!   fields, in scan order, its id and then the ids its scan marked first, in slot order. If an
//!   object was visited [`VisitMode::Opaque`](crate::hooks::VisitMode) (not scanned), nothing is
//!   kept.
//! - **Re-walked** by a later collection that is a full non-compacting DFS of the whole heap with
//!   stock hooks and no extra roots and cannot replay its own record, when nothing changed what a
//!   trace computes since the tree was recorded (graph clock and roots, as for replay). Full
//!   collections of the whole heap in between (they move objects and free unreachable ones) leave
//!   the tree valid; any other collection, or one that left an object unscanned, may have freed
//!   an object still referenced (a policy's partial collection), and drops it. It runs the stock loop ([`Tracer::trace_full_stock`]) with each scanned object's
//!   slot loop replaced by the recorded first marks: the same marks, visits, copies and touches in
//!   the same order (a DFS scans objects in the same order whether a child is pushed bare, pushed
//!   visited or copied, since an object without reference fields pushes nothing), and the
//!   recorded count of references scanned. Regions, copies and touches are those of now. The
//!   collection is then recorded for replay as a real trace is.
//! - **Followed** by a later collection that would record a tree (the generic loop) when the tree
//!   is usable as above and the hooks never visit an object opaque
//!   ([`RuntimeHooks::never_opaque`]): the generic loop takes each scanned object's first marks
//!   from the tree instead of testing its slots, and fetches the records of the objects it will
//!   visit ahead (the visits of a compaction are its copies, one per object, in tree order). The
//!   hooks see the same visits in the same order; the tree is kept.

use super::{prefetch, test_and_set, Entry, Tracer, ID_BITS, TOUCH, VISITED};
use crate::heap::{oflags, Heap, ObjId, NULL, REGION_SHIFT};
use crate::hooks::{RuntimeHooks, NO_DEPTH};

/// Tree entry tag: the object whose id is in the low bits is scanned; the entries up to the next
/// tagged one are the objects its scan marked first.
pub(super) const SCANNED: u32 = 1 << 31;
/// How far ahead in the tree a re-walk fetches records (no effect on results).
const TREE_AHEAD: usize = 24;

/// The marking tree of the last full trace that recorded one (see the module docs).
#[derive(Debug, Clone, Default)]
pub(crate) struct TreeMemo {
    valid: bool,
    graph_clock: u64,
    roots: Vec<ObjId>,
    tree: Vec<u32>,
    refs_scanned: u64,
    /// Collections that re-walked a tree so far.
    pub rewalks: u64,
    /// Generic-loop collections that followed the tree so far.
    pub follows: u64,
}

impl TreeMemo {
    /// Whether a collection (on `heap`, with `roots`) may re-walk the tree.
    pub(super) fn usable(&self, heap: &Heap, roots: &[ObjId]) -> bool {
        self.valid && heap.graph_clock == self.graph_clock && roots == self.roots
    }

    /// A collection that may have freed a referenced object ran (see the module docs).
    pub(super) fn invalidate(&mut self) {
        self.valid = false;
    }

    /// A buffer for the tree of a collection that records one (the old tree is dropped).
    pub(super) fn take_buffer(&mut self) -> Vec<u32> {
        self.valid = false;
        let mut t = std::mem::take(&mut self.tree);
        t.clear();
        t
    }

    /// Keep `tree`, recorded by the collection that just ran on `heap` (`ok`: no object was
    /// left unscanned). Not with a root that is not a live object (an allocation could reuse its
    /// id, making it one without a graph change).
    pub(super) fn record(&mut self, heap: &Heap, tree: Vec<u32>, ok: bool, refs_scanned: u64) {
        self.valid = ok && heap.roots.iter().all(|&r| r == NULL || heap.is_alive(r));
        self.graph_clock = heap.graph_clock;
        self.roots.clone_from(&heap.roots);
        self.tree = tree;
        self.refs_scanned = refs_scanned;
    }
}

impl<H: RuntimeHooks + ?Sized> Tracer<'_, H> {
    /// The stock loop ([`Self::trace_full_stock`]) over the recorded tree `memo` instead of the
    /// reference slots, from the roots already on `stack`. With `FREE`, nothing is touched in
    /// place; `evac_bits` as for the stock loop (empty: nothing is evacuated).
    #[inline(never)]
    pub(super) fn rewalk_tree<const FREE: bool>(
        &mut self,
        memo: &TreeMemo,
        stack: &mut Vec<Entry>,
        evac_bits: &[u64],
    ) {
        let tree = &memo.tree[..];
        let mask = self.hooks.bookmark_mask();
        let mut i = 0;
        let mut visits = 0u64;
        while let Some(e) = stack.pop() {
            if let Some(&a) = stack.last() {
                prefetch(&self.recs, (a & ID_BITS) as usize);
            }
            let o = e & ID_BITS;
            let rec = self.recs[o as usize];
            if e & VISITED == 0 {
                // Marked in place (as in the stock loop).
                visits += 1;
                if rec.flags & oflags::LARGE == 0 {
                    let m = &mut self.regs[(rec.addr >> REGION_SHIFT) as usize];
                    m.objs += 1;
                    m.bytes += rec.size;
                }
            }
            if !FREE && e & (VISITED | TOUCH) != VISITED && rec.meta & mask == 0 {
                self.touch_in_place(&rec);
            }
            if !rec.has_refs() {
                continue;
            }
            enter_scan(tree, &mut i, o);
            while let Some(c) = self.next_first_mark(tree, &mut i) {
                let w = evac_bits.get(c as usize >> 6).copied().unwrap_or(0);
                if w & 1u64 << (c & 63) != 0 {
                    if let Some(p) = self.visit(c, NO_DEPTH) {
                        stack.push(p);
                    }
                } else {
                    stack.push(c);
                }
            }
        }
        assert_eq!(i, tree.len(), "marking tree not consumed");
        self.st.visits += visits;
        self.st.refs_scanned += memo.refs_scanned;
    }

    /// The generic DFS loop ([`Self::scan_entry`] over `stack`, from the roots already on it) with
    /// each scanned object's slot loop replaced by the recorded first marks `memo`, whose records
    /// are fetched ahead: the hooks see the same visits in the same order.
    #[inline(never)]
    pub(super) fn follow_tree(&mut self, memo: &TreeMemo, stack: &mut Vec<Entry>) {
        let tree = &memo.tree[..];
        let mut i = 0;
        while let Some(e) = stack.pop() {
            if let Some(&a) = stack.last() {
                if a & TOUCH != 0 {
                    prefetch(&self.recs, (a & ID_BITS) as usize);
                }
            }
            let o = e & ID_BITS;
            // Every entry here was pushed by a visit (never opaque): one without `TOUCH` is
            // pushed only to be scanned, so it has reference fields and its record is not needed
            // (the tree step check below still holds it to the record).
            if e & TOUCH != 0 {
                let rec = self.recs[o as usize];
                self.touch_in_place(&rec);
                if !rec.has_refs() {
                    continue;
                }
            } else {
                debug_assert!(
                    self.recs[o as usize].has_refs(),
                    "object {o} pushed without a scan"
                );
            }
            enter_scan(tree, &mut i, o);
            while let Some(c) = self.next_first_mark(tree, &mut i) {
                if let Some(p) = self.visit(c, NO_DEPTH) {
                    stack.push(p);
                }
            }
        }
        assert_eq!(i, tree.len(), "marking tree not consumed");
        self.st.refs_scanned += memo.refs_scanned;
    }

    /// The next object the scanned object marked first, now marked here (its record and the
    /// records of the entries [`TREE_AHEAD`] further are prefetched: the tree says which records
    /// come next); `None` at the next scan entry or the tree's end.
    #[inline(always)]
    fn next_first_mark(&mut self, tree: &[u32], i: &mut usize) -> Option<ObjId> {
        let &c = tree.get(*i)?;
        if c & SCANNED != 0 {
            return None;
        }
        if let Some(&a) = tree.get(*i + TREE_AHEAD) {
            prefetch(&self.recs, (a & ID_BITS) as usize);
        }
        *i += 1;
        let fresh = test_and_set(&mut self.mark, c);
        debug_assert!(fresh, "object {c} marked twice");
        Some(c)
    }

    /// Tree recording: `e`'s object is about to be scanned.
    #[inline(always)]
    pub(super) fn tree_scan(&mut self, e: Entry) {
        let o = e & ID_BITS;
        if self.recs[o as usize].has_refs() {
            self.tree.push(SCANNED | o);
        }
    }
}

/// The tree entry at `*i` must be the scan of `o` (the walk is in step with the record); step
/// past it.
#[inline(always)]
fn enter_scan(tree: &[u32], i: &mut usize, o: ObjId) {
    assert!(
        tree.get(*i) == Some(&(SCANNED | o)),
        "marking tree out of step at entry {} (object {o})",
        *i
    );
    *i += 1;
}
