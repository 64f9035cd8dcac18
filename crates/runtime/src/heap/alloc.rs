//! Allocation in the heap: object ids, regions taken and freed, bump allocation, the mutator's
//! `alloc` path, freeing objects.

use super::*;

impl Heap {
    pub(super) fn new_id(&mut self) -> ObjId {
        if let Some(id) = self.free_ids.pop() {
            return id;
        }
        let id = self.recs.len() as ObjId;
        self.recs.push(ObjRec::default());
        id
    }

    /// Take the lowest free region, mapping its pages on first use.
    pub(crate) fn take_region<B: PageBacking + ?Sized>(
        &mut self,
        backing: &mut B,
        for_mutator: bool,
    ) -> Result<u32, HeapError> {
        // RegionSpace::AllocateRegion: mutator regions only while half the space stays free
        // (a policy's separate space is not part of the region space).
        if for_mutator && (self.non_free_regions - self.separate_regions + 1) * 2 > self.num_regions() {
            return Err(HeapError::NoRegion {
                regions: self.num_regions(),
            });
        }
        let r = *self.free_regions.iter().next().ok_or(HeapError::NoRegion {
            regions: self.num_regions(),
        })?;
        self.free_regions.remove(&r);
        self.non_free_regions += 1;
        let reg = &mut self.regions[r as usize];
        if reg.first_page == NIL {
            reg.first_page = backing.map_heap(self.pid, REGION_PAGES).map_err(HeapError::Map)?;
        }
        reg.state = RegionState::Used;
        reg.top = 0;
        reg.live_bytes = 0;
        reg.young = for_mutator;
        reg.group = 0;
        reg.separate = false;
        reg.objs.clear();
        Ok(r)
    }

    /// Free a region (after evacuation): its pages are released to the kernel, or on Dalvik
    /// ([`HeapConfig::trim_delay_ns`]) kept resident until [`Heap::trim`].
    pub(crate) fn free_region<B: PageBacking + ?Sized>(&mut self, r: u32, now: Nanos, backing: &mut B) {
        let deferred = self.config.trim_delay_ns.is_some();
        let reg = &mut self.regions[r as usize];
        debug_assert_eq!(reg.state, RegionState::Used);
        let used_pages = reg.top.div_ceil(PAGE_SIZE).max(reg.resident_pages);
        if deferred {
            reg.resident_pages = used_pages;
        } else if used_pages > 0 {
            backing.release(now, Actor::AppGc(self.pid), reg.first_page, used_pages);
        }
        reg.state = RegionState::Free;
        reg.top = 0;
        reg.live_bytes = 0;
        reg.young = false;
        let separate = std::mem::take(&mut reg.separate);
        // Free regions give their object list back: a heap has hundreds of regions and the free
        // ones held tens of KB of list each (issue 14: a tenth of the default day's peak RSS).
        reg.objs = Vec::new();
        self.free_regions.insert(r);
        self.non_free_regions -= 1;
        self.separate_regions -= u32::from(separate);
        if self.alloc_region == r {
            self.alloc_region = NIL;
        }
    }

    /// Dalvik's `trimHeaps`: release the resident pages of every free region (whole free pages
    /// go back with `madvise(MADV_DONTNEED)`). Returns the pages released.
    pub fn trim<B: PageBacking + ?Sized>(&mut self, now: Nanos, backing: &mut B) -> u64 {
        let mut released = 0;
        for &r in &self.free_regions {
            let reg = &mut self.regions[r as usize];
            if reg.resident_pages > 0 {
                backing.release(now, Actor::AppGc(self.pid), reg.first_page, reg.resident_pages);
                released += reg.resident_pages as u64;
                reg.resident_pages = 0;
            }
        }
        released
    }

    /// Bump-allocate `size` bytes in region `r` if it fits; returns the address.
    #[inline]
    pub(crate) fn bump(&mut self, r: u32, size: u32) -> Option<u32> {
        let reg = &mut self.regions[r as usize];
        if reg.top + size > REGION_SIZE {
            return None;
        }
        let a = (r << REGION_SHIFT) + reg.top;
        reg.top += size;
        reg.live_bytes += size;
        Some(a)
    }

    /// Bump-allocate `size` bytes at an `align`-byte boundary in region `r` if it fits (the gap
    /// before it is lost until the region is freed); returns the address.
    #[inline]
    pub(crate) fn bump_aligned(&mut self, r: u32, size: u32, align: u32) -> Option<u32> {
        if align <= OBJECT_ALIGNMENT {
            return self.bump(r, size);
        }
        let reg = &mut self.regions[r as usize];
        let start = align_up(reg.top, align);
        if start as u64 + size as u64 > REGION_SIZE as u64 {
            return None;
        }
        reg.top = start + size;
        reg.live_bytes += size;
        Some((r << REGION_SHIFT) + start)
    }

    /// Object size rounded to the object alignment.
    pub fn aligned(size: u32) -> u32 {
        align_up(size.max(OBJECT_HEADER), OBJECT_ALIGNMENT)
    }

    /// Allocate an object of `class` with `size` bytes and `nrefs` null reference slots, at
    /// simulated time `now`, by `actor` (usually the app's main thread), touching its pages (write).
    ///
    /// Fails with `OutOfMemory` if the growth limit would be exceeded: the caller (see
    /// [`crate::Runtime::alloc`]) then runs a blocking GC and retries, as `Heap::AllocateInternalWithGc`.
    pub fn alloc<B: PageBacking + ?Sized>(
        &mut self,
        now: Nanos,
        actor: Actor,
        class: ClassId,
        size: u32,
        nrefs: u32,
        backing: &mut B,
    ) -> Result<Allocated, HeapError> {
        self.alloc_used(now, actor, class, size, nrefs, nrefs, backing)
    }

    /// [`Self::alloc`] of an object of which only the first `used` reference slots are expected
    /// to be written: only those are stored (see the module docs; a store beyond still works).
    #[allow(clippy::too_many_arguments)]
    pub fn alloc_used<B: PageBacking + ?Sized>(
        &mut self,
        now: Nanos,
        actor: Actor,
        class: ClassId,
        size: u32,
        nrefs: u32,
        used: u32,
        backing: &mut B,
    ) -> Result<Allocated, HeapError> {
        let (id, stall) = self.alloc_inner(now, actor, class, size, nrefs, used, backing, true)?;
        let trigger = if !self.gc_pending && self.bytes_allocated >= self.concurrent_start_bytes {
            self.gc_pending = true;
            Trigger::Concurrent
        } else {
            Trigger::None
        };
        Ok(Allocated { id, stall, trigger })
    }

    /// Allocate without touching pages or triggering GCs (heap construction: generators, imports);
    /// only the first `used` of the `nrefs` slots are stored (see [`Self::alloc_used`]).
    pub fn alloc_quiet<B: PageBacking + ?Sized>(
        &mut self,
        now: Nanos,
        class: ClassId,
        size: u32,
        nrefs: u32,
        used: u32,
        backing: &mut B,
    ) -> Result<ObjId, HeapError> {
        let actor = Actor::AppMain(self.pid);
        self.alloc_inner(now, actor, class, size, nrefs, used, backing, false)
            .map(|x| x.0)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn alloc_inner<B: PageBacking + ?Sized>(
        &mut self,
        now: Nanos,
        actor: Actor,
        class: ClassId,
        size: u32,
        nrefs: u32,
        used: u32,
        backing: &mut B,
        touch: bool,
    ) -> Result<(ObjId, Stall), HeapError> {
        if size >= u32::MAX - PAGE_SIZE {
            return Err(HeapError::TooLarge(size as u64));
        }
        let size = Self::aligned(size);
        if self.bytes_allocated + size as u64 > self.config.growth_limit {
            return Err(HeapError::OutOfMemory {
                size: size as u64,
                allocated: self.bytes_allocated,
                limit: self.config.growth_limit,
            });
        }
        let large = self.goes_to_los(class, size);
        let addr;
        let mut stall = Stall::ZERO;
        if large {
            let pages = size.div_ceil(PAGE_SIZE);
            let first = backing.map_heap(self.pid, pages).map_err(HeapError::Map)?;
            let slot = LargeSlot {
                obj: NULL,
                first_page: first,
                pages,
            };
            addr = match self.free_los_slots.pop() {
                Some(s) => {
                    self.los[s as usize] = slot;
                    s
                }
                None => {
                    self.los.push(slot);
                    (self.los.len() - 1) as u32
                }
            };
            self.los_bytes += size as u64;
        } else {
            let a = match (self.alloc_region != NIL)
                .then(|| self.bump(self.alloc_region, size))
                .flatten()
            {
                Some(a) => a,
                None => {
                    let r = self.take_region(backing, true)?;
                    self.alloc_region = r;
                    self.bump(r, size).expect("object fits in an empty region")
                }
            };
            addr = a;
        }
        let id = self.new_id();
        let i = id as usize;
        // The count word costs one slot: a tail is worth leaving unstored from two null slots.
        let tail = used.saturating_add(1) < nrefs;
        if tail {
            self.refs.push(nrefs);
        }
        let stored = if tail { used } else { nrefs };
        self.recs[i] = ObjRec {
            addr,
            size,
            ref_start: self.refs.len() as u32,
            ref_len: stored,
            class,
            flags: oflags::ALIVE
                | if self.foreground { oflags::FG_ALLOC } else { 0 }
                | if large { oflags::LARGE } else { 0 }
                | if tail { oflags::TAIL } else { 0 },
            meta: 0,
        };
        self.refs.resize(self.refs.len() + stored as usize, NULL);
        self.unmark(id);
        if large {
            self.los[addr as usize].obj = id;
        } else {
            self.regions[(addr >> REGION_SHIFT) as usize].objs.push(id);
        }
        self.live_objects += 1;
        self.bytes_allocated += size as u64;
        self.bytes_since_gc += size as u64;
        if touch {
            let (first, n) = self.pages_of(id);
            stall = backing.touch(now, actor, first, n, true);
        }
        Ok((id, stall))
    }

    /// Index into [`Self::changed`] of the place (region or large-object space) holding the
    /// object with record `r`.
    #[inline(always)]
    pub(crate) fn place_of(&self, r: &ObjRec) -> usize {
        if r.flags & oflags::LARGE != 0 {
            self.regions.len()
        } else {
            (r.addr >> REGION_SHIFT) as usize
        }
    }

    /// An object leaves place `place` (see [`Self::place_of`]): moved or freed.
    #[inline(always)]
    pub(crate) fn note_left(&mut self, place: usize) {
        self.layout_clock += 1;
        self.changed[place] = self.layout_clock;
    }

    /// Reclaim a dead object's id and slots (GC sweep).
    pub(crate) fn free_object(&mut self, o: ObjId) {
        self.note_left(self.place_of(&self.recs[o as usize]));
        let r = &mut self.recs[o as usize];
        self.dead_ref_slots += r.ref_len as u64 + (r.flags & oflags::TAIL != 0) as u64;
        r.flags = 0;
        r.ref_len = 0;
        self.live_objects -= 1;
        self.bytes_allocated -= r.size as u64;
        self.free_ids.push(o);
    }
}
