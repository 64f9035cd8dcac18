//! The specialised trace loop of full DFS collections with stock hooks (see the [`super`] docs,
//! step 3): same order and effects as the generic loop, without hook calls.

use super::{Entry, Tracer, ID_BITS, ROLE_EVAC, TOUCH, VISITED};
use crate::heap::{oflags, ObjId, NULL, REGION_SHIFT};
use crate::hooks::{RuntimeHooks, NO_DEPTH};

/// How many mark-stack entries below the top [`Tracer::trace_full_stock`] also prefetches the
/// record of (besides the entry right below).
const STOCK_PREFETCH_AHEAD: usize = 6;
/// How many reference slots ahead the trace of a collection with evacuated regions prefetches
/// the records of.
const STOCK_SLOT_AHEAD: usize = 4;

impl<H: RuntimeHooks + ?Sized> Tracer<'_, H> {
    /// DFS trace of a full GC with stock hooks ([`RuntimeHooks::is_stock`]): the mark stack loop of
    /// [`Self::scan_entry`] without the hook calls and the collected-set test (the collected set
    /// is the whole heap), in the same order and with the same effects. Each reference slot is marked with
    /// a branch-free test-and-set: a NULL slot maps to `sentinel`, an id whose mark bit is set for
    /// the trace, and every slot's id is written at the stack top, which advances only when the mark
    /// bit was clear. Objects marked in place are pushed bare (no [`VISITED`]) and visited when
    /// popped. With `EVAC`, objects in evacuated regions (`evac_bits`) are recognised when first
    /// marked and copied then, through [`Self::visit`]. With `FREE` (the backing's touches cost
    /// nothing and record nothing, [`crate::backing::PageBacking::touches_are_free`]) nothing is touched in place.
    /// Objects whose metadata has a bit of [`RuntimeHooks::bookmark_mask`] are scanned without
    /// being touched, as [`crate::hooks::VisitMode::Bookmarked`] does.
    pub(super) fn trace_full_stock<const FREE: bool, const EVAC: bool>(
        &mut self,
        refs: &[ObjId],
        stack: &mut Vec<Entry>,
        evac_bits: &[u64],
    ) {
        let sentinel = self.recs.len() as ObjId;
        let mask = self.hooks.bookmark_mask();
        // The marks, records and region table as locals, so the compiler knows the stores into the
        // marks and the stack leave them alone (`visit`, which needs them, gets them back first;
        // it never reads the marks).
        let mut mark = std::mem::take(&mut self.mark);
        let mut recs = std::mem::take(&mut self.recs);
        let mut regs = std::mem::take(&mut self.regs);
        let sentinel_word = sentinel as usize >> 6;
        let sentinel_bit = 1u64 << (sentinel & 63);
        mark[sentinel_word] |= sentinel_bit;
        let mut top = stack.len();
        // Every object is pushed at most once (when its bit goes from clear to set; the sentinel's
        // is set throughout), and the top slot is written for every reference: the stack never
        // needs more than this.
        stack.resize(top + recs.len() + 1, 0);
        // The slot loop indexes the marks and the stack through raw pointers: with bounds checks
        // (and the registers they need) it runs about 5-10% slower. The two facts that make this
        // sound are checked here and above: every marked id is at most `sentinel`, whose bit is in
        // `mark`; `top` stays below `stack.len()`.
        assert!(mark.len() * 64 > sentinel as usize);
        // The evacuation bitmap covers the marks (`take_evac_bits` sizes it so).
        assert!(!EVAC || evac_bits.len() >= mark.len());
        let ep = evac_bits.as_ptr();
        let mp = mark.as_mut_ptr();
        let sp = stack.as_mut_ptr();
        let mut scanned = 0u64;
        let mut visits = 0u64;
        while top > 0 {
            top -= 1;
            // SAFETY: `top` < `stack.len()` (see above).
            let e = unsafe { *sp.add(top) };
            if top > 0 {
                // The entry below is scanned next unless this object pushes some: fetch its
                // record while this one is scanned (no effect on results).
                // SAFETY: `top - 1` < `stack.len()`.
                super::prefetch(&recs, (unsafe { *sp.add(top - 1) } & ID_BITS) as usize);
            }
            if top >= STOCK_PREFETCH_AHEAD {
                // Leaves (most objects of array-heavy heaps) push nothing: the entries below are
                // scanned in turn, so fetch records further down too (the entry below alone
                // leaves most of a record miss exposed).
                // SAFETY: `top - STOCK_PREFETCH_AHEAD` < `top` < `stack.len()`.
                let a = unsafe { *sp.add(top - STOCK_PREFETCH_AHEAD) };
                super::prefetch(&recs, (a & ID_BITS) as usize);
            }
            let rec = recs[(e & ID_BITS) as usize];
            if e & VISITED == 0 {
                // Marked in place by this loop (as in `visit` with stock hooks).
                visits += 1;
                if rec.flags & oflags::LARGE == 0 {
                    let m = &mut regs[(rec.addr >> REGION_SHIFT) as usize];
                    m.objs += 1;
                    m.bytes += rec.size;
                }
            }
            // Bookmarked objects (`mask`) are scanned without touching their pages.
            if !FREE && e & (VISITED | TOUCH) != VISITED && rec.meta & mask == 0 {
                self.touch_in_place(&rec);
            }
            let slots = &refs[rec.ref_start as usize..][..rec.ref_len as usize];
            for (j, &c) in slots.iter().enumerate() {
                if EVAC {
                    // An object of an evacuated region is visited (its record read) when first
                    // marked: fetch the records of the slots a few ahead (NULL's is a harmless
                    // stray prefetch).
                    if let Some(&a) = slots.get(j + STOCK_SLOT_AHEAD) {
                        super::prefetch(&recs, a as usize);
                    }
                }
                scanned += (c != NULL) as u64;
                let c = c.min(sentinel);
                let wi = c as usize >> 6;
                let bit = 1u64 << (c & 63);
                // SAFETY: `c` <= `sentinel`, so `wi` < `mark.len()` (asserted above).
                let old = unsafe { *mp.add(wi) };
                unsafe { *mp.add(wi) = old | bit };
                // SAFETY: with `EVAC`, `wi` < `mark.len()` <= `evac_bits.len()` (asserted above).
                if EVAC && unsafe { *ep.add(wi) } & !old & bit != 0 {
                    if let Some(p) = self.visit_copy_fast(&mut recs, &mut regs, c) {
                        if let Some(p) = p {
                            // SAFETY: `c` was just marked: at most one push per object.
                            unsafe { *sp.add(top) = p };
                            top += 1;
                        }
                        continue;
                    }
                    self.recs = recs;
                    self.regs = regs;
                    if let Some(p) = self.visit_out_of_line(c) {
                        // SAFETY: `c` was just marked: at most one push per object.
                        unsafe { *sp.add(top) = p };
                        top += 1;
                    }
                    recs = std::mem::take(&mut self.recs);
                    regs = std::mem::take(&mut self.regs);
                    continue;
                }
                // SAFETY: `top` counts pushed objects, each pushed once, so it is below
                // `stack.len()` (the slot is overwritten by the next reference unless `c` was
                // unmarked).
                unsafe { *sp.add(top) = c };
                top += (old & bit == 0) as usize;
            }
        }
        mark[sentinel_word] &= !sentinel_bit;
        self.mark = mark;
        self.recs = recs;
        self.regs = regs;
        stack.clear();
        self.st.visits += visits;
        self.st.refs_scanned += scanned;
    }

    /// The objects of evacuated regions as a bitmap over ids (the heap's buffer, to hand back to
    /// `Heap::evac_bits`), so a stock loop can tell at first marking which to copy; and whether
    /// any region is evacuated (else the bitmap is empty).
    ///
    /// A used region's object list is exact when a collection starts (every listed object is
    /// alive and in that region, checked by [`Heap::check_invariants`](crate::heap::Heap); the
    /// roots reached before this call have been copied out already, and are marked): only
    /// a copy moves an object (and lists it in its new region) and only reclaim frees one, after
    /// which it frees the evacuated regions and filters the lists of the others. So the bits come
    /// from the lists alone, without loading each object's record (a cache miss per object).
    pub(super) fn take_evac_bits(&mut self) -> (Vec<u64>, bool) {
        let mut evac_bits = std::mem::take(&mut self.heap.evac_bits);
        evac_bits.clear();
        let evac = self.regs.iter().any(|m| m.role == ROLE_EVAC);
        if evac {
            evac_bits.resize(self.mark.len(), 0);
            for (r, m) in self.regs.iter().enumerate() {
                if m.role != ROLE_EVAC {
                    continue;
                }
                for &o in &self.heap.regions[r].objs {
                    // Roots (and extra roots) were reached, so copied out, before this runs.
                    debug_assert!({
                        let x = &self.recs[o as usize];
                        let copied = self.mark[o as usize >> 6] & (1u64 << (o & 63)) != 0;
                        x.flags & oflags::ALIVE != 0 && ((x.addr >> REGION_SHIFT) as usize == r || copied)
                    });
                    evac_bits[o as usize >> 6] |= 1u64 << (o & 63);
                }
            }
        }
        (evac_bits, evac)
    }

    /// [`Self::visit`] out of line (copies and large objects in [`Self::trace_full_stock`]), so the
    /// loop's registers are not spent on it.
    #[inline(never)]
    fn visit_out_of_line(&mut self, o: ObjId) -> Option<Entry> {
        self.visit(o, NO_DEPTH)
    }
}
