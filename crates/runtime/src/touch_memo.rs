//! Memo of the heap pages each logical page of an app's access model reaches
//! ([`crate::app::JavaApp::touch_logical`]).
//!
//! A logical page covers tens to hundreds of blueprint objects; resolving it object by object
//! (blueprint index → heap id → liveness → current address → page range) is the mutator's main
//! cost. Between two collections nothing moves or dies, so the coalesced page runs a logical page
//! touches stay the same: they are computed once and replayed. The memo is used only when the
//! policy's barrier is the default one ([`crate::hooks::RuntimeHooks::default_barrier`]): a
//! policy barrier must see every object.
//!
//! Invalidation: an entry records the layout clock when it was built and the places (heap
//! regions, the large-object space) its objects were in; it is stale once an object has left
//! one of those places since ([`Heap::changed`](crate::heap::Heap): a copy or a free), so a young
//! collection that evacuates only new regions keeps the old objects' entries. Growth of the
//! built prefix drops the entries of the logical pages at and after the old frontier (a partly
//! built page gains objects); churn (rebinding blueprint objects to new heap objects) drops
//! everything. A logical page holding an object that is not alive is never memoised: its id may
//! be reused by a later allocation without a collection.

use crate::backing::TouchBatch;
use crate::heap::Heap;
use kernel::types::PageIdx;

/// One memoised logical page: its page runs and places in the memo's arrays, and the layout
/// clock when it was built.
#[derive(Debug, Clone, Copy)]
struct Entry {
    runs: u32,
    nruns: u32,
    places: u32,
    nplaces: u32,
    at: u64,
}

const NONE: Entry = Entry {
    runs: 0,
    nruns: u32::MAX,
    places: 0,
    nplaces: 0,
    at: 0,
};

/// Memoised page runs of an app's logical pages.
#[derive(Debug, Default)]
pub(crate) struct TouchMemo {
    churn_gen: u32,
    /// Blueprint bytes built when the entries were checked last.
    built_end: u64,
    slot: Vec<Entry>,
    runs: Vec<(PageIdx, u32)>,
    places: Vec<u32>,
}

impl TouchMemo {
    /// Drop the entries the app's changes since the last call made stale: all of them after a
    /// churn, those from the old frontier on after growth (`scale` blueprint bytes per logical
    /// page).
    pub fn validate(&mut self, churn_gen: u32, built_end: u64, logical_pages: u32, scale: f64) {
        let n = logical_pages as usize;
        if self.churn_gen != churn_gen || self.slot.len() != n || self.runs.len() > 16 * n + 1024 {
            self.churn_gen = churn_gen;
            self.built_end = built_end;
            self.slot.clear();
            self.slot.resize(n, NONE);
            self.runs.clear();
            self.places.clear();
        } else if self.built_end != built_end {
            let from = ((self.built_end as f64 / scale) as usize)
                .saturating_sub(1)
                .min(n);
            self.slot[from..].fill(NONE);
            self.built_end = built_end;
        }
    }

    /// Hint the CPU to load logical page `p`'s entry (no effect on results).
    #[inline(always)]
    pub fn prefetch(&self, p: u32) {
        crate::gc::prefetch(&self.slot, p as usize);
    }

    /// The memoised runs of logical page `p`, if memoised and still valid in `heap`.
    #[inline]
    pub fn get(&self, p: u32, heap: &Heap) -> Option<&[(PageIdx, u32)]> {
        let e = self.slot.get(p as usize)?;
        if e.nruns == u32::MAX {
            return None;
        }
        let places = &self.places[e.places as usize..][..e.nplaces as usize];
        if places.iter().any(|&pl| heap.changed[pl as usize] > e.at) {
            return None;
        }
        Some(&self.runs[e.runs as usize..][..e.nruns as usize])
    }

    /// Memoise logical page `p` from its objects' page ranges and places, in access order (all
    /// of one access kind, so the kind does not change how they coalesce).
    pub fn insert(
        &mut self,
        p: u32,
        heap: &Heap,
        pieces: impl Iterator<Item = ((PageIdx, u32), usize)> + Clone,
    ) {
        let runs = self.runs.len();
        TouchBatch::coalesce(pieces.clone().map(|(r, _)| r), false, &mut self.runs);
        let places = self.places.len();
        for (_, pl) in pieces {
            if !self.places[places..].contains(&(pl as u32)) {
                self.places.push(pl as u32);
            }
        }
        self.slot[p as usize] = Entry {
            runs: runs as u32,
            nruns: (self.runs.len() - runs) as u32,
            places: places as u32,
            nplaces: (self.places.len() - places) as u32,
            at: heap.layout_clock,
        };
    }
}
