//! Replay of a recorded full trace across a compaction that laid the heap out again the same way
//! (see the [`super`] docs, step 3, and module `replay`).
//!
//! A recorded trace stands only for the very next collection: a compaction in between moves
//! every object, so the trace after it runs again (module `tree` re-walks its marking tree).
//! Marvin's stub rounds are such compactions, every 7th background walk, and the walk after each
//! was the costliest part of a background app's steady cycle. When the graph did not change, a
//! compaction that follows the same marking tree copies the same objects in the same order, each
//! to the same group with the same alignment, into fresh regions: it lays the heap out as the
//! compaction before it did, except for which regions it took. So:
//! - A collection that records or follows a marking tree (the generic loop over the whole heap)
//!   keeps its **layout**: a hash over its visits in order (object, destination group, metadata,
//!   whether it was copied, and the address of one that was not) and the regions its copies took,
//!   in order (none kept if a copy failed).
//! - A trace recorded right after such a collection keeps that layout, and the regions the
//!   objects it copied were in.
//! - A later collection that cannot replay the record only because one collection ran since, and
//!   that collection kept a layout with the same hash and as many regions, **translates** the
//!   record: each page touch inside the k-th region of the old layout moves to the same offset in
//!   the k-th region of the new one, and so do the regions of the in-place marks and of the copied
//!   objects; the record then stands for that collection and the usual checks (graph clock,
//!   roots, region roles) decide whether it replays.
//! - A record made right after a layout that a later record replaced (the second walk after a
//!   stub round often cannot replay the first: regions the first one copied into are no longer
//!   evacuated) is kept while the graph is unchanged, and is translated instead when the current
//!   record cannot be. Collections between it and the new layout do not matter: what the
//!   compaction leaves is fixed by its layout hash (it covers every object it visits, and where
//!   each one it did not copy is) and the graph; the usual checks still decide.

use super::replay::TraceMemo;
use crate::heap::{Heap, Meta, ObjId, REGION_PAGES};
use kernel::types::PageIdx;

/// How a collection that recorded or followed a marking tree laid the heap out.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Layout {
    /// `Heap::epoch` of the collection.
    pub epoch: u32,
    pub hash: u64,
    /// The regions its copies took, in order, with their first pages.
    pub regions: Vec<(u32, PageIdx)>,
}

/// Fold one visit into a layout hash (FxHash-style multiply-rotate; `addr` only for an object
/// that was not copied).
#[inline(always)]
pub(super) fn mix(h: u64, o: ObjId, group: u8, meta: Meta, copied: bool, addr: u32) -> u64 {
    let a = if copied { u32::MAX as u64 } else { addr as u64 };
    let x = (o as u64) << 32 | (group as u64) << 24 | (meta as u64) << 1 | copied as u64;
    ((h.rotate_left(5) ^ x)
        .wrapping_mul(0x517c_c1b7_2722_0a95)
        .rotate_left(5)
        ^ a)
        .wrapping_mul(0x517c_c1b7_2722_0a95)
}

impl TraceMemo {
    /// After a collection of `heap` that recorded or followed a marking tree: keep its layout
    /// (`hash` over its visits, its groups' alignments `to_align`, the regions it `took`), unless
    /// a copy failed.
    pub(super) fn keep_layout(
        &mut self,
        heap: &Heap,
        hash: u64,
        to_align: &[u32],
        took: &[u32],
        failed: bool,
    ) {
        let hash = to_align.iter().fold(hash, |h, &a| mix(h, a, 0, 0, true, 0));
        self.last_layout = (!failed).then(|| Layout {
            epoch: heap.epoch,
            hash,
            regions: took
                .iter()
                .map(|&r| (r, heap.regions[r as usize].first_page))
                .collect(),
        });
    }

    /// Before a collection of `heap` with `roots` that could record: if only one collection ran
    /// since the record and it laid the heap out as the one before the record did, translate the
    /// record to the new layout (module docs); the usual checks follow.
    pub(super) fn translate(&mut self, heap: &Heap, roots: &[ObjId]) {
        let Some(new) = self.last_layout.as_ref().filter(|_| !self.off) else {
            return;
        };
        if !self.translatable(heap, roots, new, true) {
            // The record kept from right after the layout before (module docs, last point).
            match self.stash.take() {
                Some(mut kept) if kept.translatable(heap, roots, new, false) => self.swap_record(&mut kept),
                kept => {
                    self.stash = kept;
                    return;
                }
            }
        }
        let (Some(old), Some(new)) = (&self.layout, &self.last_layout) else {
            return;
        };
        // Old first page -> (old region, new region, new first page), by old first page.
        let mut map: Vec<(PageIdx, u32, u32, PageIdx)> = old
            .regions
            .iter()
            .zip(&new.regions)
            .map(|(&(r, f), &(nr, nf))| (f, r, nr, nf))
            .collect();
        map.sort_unstable_by_key(|m| m.0);
        // Events mostly follow one another within a region: the pages `[lo, hi)` between two
        // consecutive old first pages share one search result `k`, kept for the next event.
        let (mut lo, mut hi, mut k) = (1, 0, 0);
        let mut page = |p: PageIdx| {
            if !(lo <= p && p < hi) {
                k = map.partition_point(|m| m.0 <= p);
                lo = k.checked_sub(1).map_or(0, |i| map[i].0);
                hi = map.get(k).map_or(PageIdx::MAX, |m| m.0);
            }
            match k.checked_sub(1) {
                Some(i) if p - map[i].0 < REGION_PAGES => map[i].3 + (p - map[i].0),
                _ => p,
            }
        };
        let region = |r: u32| {
            old.regions
                .iter()
                .position(|x| x.0 == r)
                .map_or(r, |k| new.regions[k].0)
        };
        for e in self.events.iter_mut() {
            if !super::replay::is_copy(*e) {
                *e = (*e & !(u32::MAX as u64)) | page(*e as u32) as u64;
            }
        }
        for x in self.inplace.iter_mut() {
            x.0 = region(x.0);
        }
        for r in self.from.iter_mut() {
            *r = region(*r);
        }
        // The copied objects are in the translated regions now: they must be evacuated.
        self.tospace.clone_from(&self.from);
        self.layout = self.last_layout.clone();
        self.epoch = heap.epoch.wrapping_sub(1);
        self.translations += 1;
    }
}

impl TraceMemo {
    /// Whether this record may be translated to the layout of the collection that just ran on
    /// `heap` (before a collection with `roots`): it was recorded right after a layout with the
    /// same hash and as many regions, nothing changed what a trace computes since, and (with
    /// `consecutive`) it stands for the collection right before that one.
    fn translatable(&self, heap: &Heap, roots: &[ObjId], new: &Layout, consecutive: bool) -> bool {
        let Some(old) = &self.layout else {
            return false;
        };
        self.valid
            && new.epoch.wrapping_add(1) == heap.epoch
            && (!consecutive || self.epoch.wrapping_add(1) == new.epoch)
            && old.hash == new.hash
            && old.regions.len() == new.regions.len()
            && heap.graph_clock == self.graph_clock
            && roots == self.roots
    }
}

impl Heap {
    /// Recorded traces translated to a new layout so far (module `gc::layout`; switched off with
    /// replay, [`Heap::set_trace_replay`]).
    pub fn trace_translations(&self) -> u64 {
        self.trace_memo.translations
    }
}
