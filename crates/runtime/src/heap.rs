//! The ART-like Java heap of one app: regions, objects (dense records), references, roots.
//!
//! What is modelled (after `art/runtime/gc/space/region_space.h`, `large_object_space.h`,
//! `heap.cc`):
//! - a region space of 256 KiB regions (`kRegionSize`) addressed by byte offsets in the app's virtual
//!   address space; bump-pointer allocation into the current allocation region (TLABs are not
//!   modelled separately: one region at a time per app, as if one mutator thread allocated);
//! - ART's region-allocation guard: a new region is handed out only while
//!   `(non_free_regions + 1) * 2 <= num_regions`, keeping half the space free for evacuation
//!   (regions of a policy's separate space, `RuntimeHooks::separate_space`, are not counted;
//!   simplified: they still come out of the same reservation of `capacity / 256 KiB` regions);
//! - large objects: primitive arrays and strings of at least 12 KiB (`kMinLargeObjectThreshold =
//!   3 * kPageSize`, `Heap::ShouldAllocLargeObject`) go to the large-object space, each in its own
//!   page-aligned mapping (`LargeObjectMapSpace`); any object bigger than a region also goes there
//!   (simplification: ART keeps huge non-primitive objects in "large regions" of the region space);
//! - objects: size, class, reference slots (fixed at allocation, as Java fields/array lengths are),
//!   allocated-in-foreground bit, 16 policy metadata bits ([`Meta`]) (Marvin's access bits and
//!   stub flag, Fleet's classification), GC mark epoch;
//! - GC roots (a dense list of object ids);
//! - a remembered set for generational (sticky) collections: the write barrier records old objects
//!   that had a reference stored into them since the last GC. ART uses a card table with 1 KiB cards
//!   (`kCardShift = 10`); we keep it at object granularity (the pages touched to scan a dirty card
//!   are the object's own pages in the common case of small objects).
//!
//! Simplified vs ART: no TLABs per thread, no non-moving space / zygote / image spaces (imported
//! heaps put everything in the region space or LOS), no lock words or forwarding pointers (objects
//! keep their id when they move; only their address changes), no soft/weak reference processing,
//! no finalizers. Object ids of dead objects are reused (a stale id held outside the heap may refer
//! to a newer object).
//!
//! **Storage layout** (object ids are dense indices; an id keeps its storage when the object moves):
//! - [`Heap::recs`]: one 24-byte [`ObjRec`] per id with everything the collector reads to mark,
//!   copy and scan an object — address, size, reference-slot range, class, flags, policy metadata —
//!   so a visit reads one record (usually one cache line) rather than one entry in each of
//!   several arrays;
//! - no allocation time: no collector or policy read it, and at 4 bytes per id it was ~5% of the
//!   default day's peak RSS (issue 14); a policy that needs one can keep it in its own side table;
//! - the mark bitmap: one bit per id, plus one for the collector's NULL stand-in (a 4 M-object
//!   heap's marks fit in ~0.5 MB of cache);
//! - [`Heap::refs`]: the reference slots, CSR-style (`recs[o].ref_start`, `recs[o].ref_len`),
//!   compacted when dead objects' slots dominate. An object allocated with a hint that only its
//!   first slots will be written (a built blueprint's object arrays are mostly empty tails) stores
//!   only those, plus its full slot count in the word before them ([`oflags::TAIL`]); a store
//!   beyond them moves its slots to the end of the array with room for more. The unstored tail
//!   is null, which every collector loop skips anyway (issue 14: null tails were 13% of the
//!   default day's peak memory).
//!
//! That is 24 bytes per object plus 4 bytes per stored reference slot (and one mark bit).

use crate::backing::{PageBacking, TouchBatch};
use engine::{Actor, Nanos, Stall};
use kernel::types::{PageIdx, Pid, NIL};
use serde::Serialize;
use std::collections::BTreeSet;

mod alloc;
mod slots;

/// Object id (dense index).
pub type ObjId = u32;
/// Class id (index into [`Heap::classes`]).
pub type ClassId = u32;
/// Null reference / no object.
pub const NULL: ObjId = u32::MAX;
/// Per-object policy metadata bits (16: Marvin needs 14 for its access, dirty, write-history and
/// stub bits).
pub type Meta = u16;

pub const PAGE_SIZE: u32 = 4096;
pub const PAGE_SHIFT: u32 = 12;
/// `RegionSpace::kRegionSize`.
pub const REGION_SIZE: u32 = 256 * 1024;
pub const REGION_SHIFT: u32 = 18;
pub const REGION_PAGES: u32 = REGION_SIZE / PAGE_SIZE;
/// `Heap::kMinLargeObjectThreshold = 3 * kPageSize`.
pub const LARGE_OBJECT_THRESHOLD: u32 = 12 * 1024;
/// `kObjectAlignment`.
pub const OBJECT_ALIGNMENT: u32 = 8;
/// ART object header (klass + monitor, 32-bit heap references).
pub const OBJECT_HEADER: u32 = 8;
/// ART array header (object header + length).
pub const ARRAY_HEADER: u32 = 12;

/// Per-object flag bits ([`Heap::flags`]).
pub mod oflags {
    /// The id holds a live (allocated, not yet reclaimed) object.
    pub const ALIVE: u8 = 1 << 0;
    /// Allocated while the app was in the foreground (Fleet's FGO/BGO split).
    pub const FG_ALLOC: u8 = 1 << 1;
    /// In the large-object space (`addr` is a LOS slot index).
    pub const LARGE: u8 = 1 << 2;
    /// In the remembered set (an old object that had a reference stored into it since the last GC).
    pub const REMEMBERED: u8 = 1 << 3;
    /// Only a prefix of the reference slots is stored ([`ObjRec::ref_len`] of them); the rest are
    /// null, and the full count is stored in the slot word before `ref_start`.
    pub const TAIL: u8 = 1 << 4;
}

/// What kind of object a class describes (decides LOS placement and how the GC scans it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum ClassKind {
    Instance,
    /// `java.lang.String` (LOS-eligible like primitive arrays).
    String,
    ObjectArray,
    /// Primitive array; element size in bytes.
    PrimitiveArray(u8),
    /// `java.lang.Class` objects (imported heaps).
    Class,
}

#[derive(Debug, Clone, Serialize)]
pub struct ClassInfo {
    pub name: String,
    pub kind: ClassKind,
}

/// Heap configuration (ART runtime options / `dalvik.vm.*` properties).
#[derive(Debug, Clone, Serialize)]
pub struct HeapConfig {
    /// `dalvik.vm.heapsize` (`-Xmx`, ART's capacity): size of the region-space reservation.
    pub capacity: u64,
    /// `dalvik.vm.heapgrowthlimit`: the app cannot use more (unless `largeHeap`).
    pub growth_limit: u64,
    /// `dalvik.vm.heapstartsize`: initial target footprint.
    pub initial_size: u64,
    /// `dalvik.vm.heaptargetutilization`.
    pub target_utilization: f64,
    /// `dalvik.vm.heapminfree`.
    pub min_free: u64,
    /// `dalvik.vm.heapmaxfree`.
    pub max_free: u64,
    /// Growth multiplier while the app is jank-perceptible (foreground):
    /// `kDefaultHeapGrowthMultiplier (2.0) + kExtraDefaultHeapGrowthMultiplier (1.0 with CC)`.
    pub foreground_multiplier: f64,
    /// Multiplier in the background (`Heap::HeapGrowthMultiplier` returns 1.0 when the process does
    /// not care about pause times). Fleet §7.4 studies 1.1× and 2× heap sizing.
    pub background_multiplier: f64,
    /// Generational CC (sticky/young collections). Default on (Android 10+ CC).
    pub generational: bool,
    /// `kMinLargeObjectThreshold`.
    pub large_object_threshold: u32,
    /// Dalvik's page release (Android <= 4.4): a freed region's pages stay resident (dlmalloc
    /// reuses free heap space in place) until the heap trim, this long after a GC with no GC
    /// since (`HEAP_TRIM_IDLE_TIME_MS`, dalvik/vm/alloc/HeapSource.cpp `gcDaemonThread` ->
    /// `trimHeaps`). `None` (ART): released at each GC (`RegionSpace::ClearFromSpace`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trim_delay_ns: Option<Nanos>,
}

impl Default for HeapConfig {
    /// ART built-in defaults (`heap.h`: `kDefaultMaxFree = 32 MB`, `kDefaultMinFree = 8 MB`,
    /// `kDefaultTargetUtilization = 0.6`) with a 4 GB phone's 192 MiB growth limit and 512 MiB heap.
    fn default() -> Self {
        Self {
            capacity: 512 << 20,
            growth_limit: 192 << 20,
            initial_size: 8 << 20,
            target_utilization: 0.6,
            min_free: 8 << 20,
            max_free: 32 << 20,
            foreground_multiplier: 3.0,
            background_multiplier: 1.0,
            generational: true,
            large_object_threshold: LARGE_OBJECT_THRESHOLD,
            trim_delay_ns: None,
        }
    }
}

impl HeapConfig {
    /// Pixel-3-class 4 GB device properties (`phone-xhdpi-4096-dalvik-heap.mk`: heapstartsize 8m,
    /// heapgrowthlimit 192m, heapsize 512m, heaptargetutilization 0.6, heapminfree 8m,
    /// heapmaxfree 16m).
    pub fn pixel3() -> Self {
        Self {
            max_free: 16 << 20,
            ..Self::default()
        }
    }

    /// The `dalvik.vm.*` properties AOSP ships for a phone with `dram_mb` of DRAM: up to 4 GB,
    /// `phone-xhdpi-4096-dalvik-heap.mk` ([`Self::pixel3`]); above, `phone-xhdpi-6144-dalvik-heap.mk`
    /// (heapstartsize 16m, heapgrowthlimit 256m, heapsize 512m, heaptargetutilization 0.5,
    /// heapminfree 8m, heapmaxfree 32m).
    pub fn for_dram_mb(dram_mb: u64) -> Self {
        if dram_mb <= 4096 {
            Self::pixel3()
        } else {
            Self {
                initial_size: 16 << 20,
                growth_limit: 256 << 20,
                target_utilization: 0.5,
                max_free: 32 << 20,
                ..Self::default()
            }
        }
    }

    /// `android:largeHeap`: the growth limit is the whole heap.
    pub fn large_heap(mut self) -> Self {
        self.growth_limit = self.capacity;
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum RegionState {
    Free,
    /// Holds objects (mutator allocation region, to-space of a past GC, or full).
    Used,
}

/// One 256 KiB region.
#[derive(Debug, Clone)]
pub struct Region {
    pub state: RegionState,
    /// Bump pointer: bytes used from the region start.
    pub top: u32,
    /// Live bytes as of the last GC that marked this region (or allocated bytes if newer).
    pub live_bytes: u32,
    /// Allocated (by the mutator) since the last GC: collected by sticky GCs, always evacuated.
    pub young: bool,
    /// Destination group the GC copied into this region (policy-defined; 0 = default).
    pub group: u8,
    /// The region belongs to a policy's separate space ([`crate::hooks::RuntimeHooks::separate_space`]),
    /// not to the region space proper: the region-allocation guard does not count it.
    pub separate: bool,
    /// First global page of this region, or `NIL` if never mapped.
    pub first_page: PageIdx,
    /// Pages of a free region still resident, awaiting the heap trim (Dalvik only; 0 on ART).
    pub resident_pages: u32,
    /// Objects in address order.
    pub objs: Vec<ObjId>,
}

/// One large object's own mapping.
#[derive(Debug, Clone, Copy)]
pub struct LargeSlot {
    pub obj: ObjId,
    pub first_page: PageIdx,
    pub pages: u32,
}

/// Allocation failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeapError {
    #[error("out of memory: allocating {size} bytes with {allocated} of {limit} bytes in use")]
    OutOfMemory { size: u64, allocated: u64, limit: u64 },
    #[error("no free region (region space of {regions} regions exhausted)")]
    NoRegion { regions: u32 },
    #[error("kernel refused to map Java heap pages: {0}")]
    Map(String),
    #[error("object of {0} bytes is too large")]
    TooLarge(u64),
}

/// What the allocator asks of the collector after an allocation (see [`Heap::alloc`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Trigger {
    None,
    /// `bytes_allocated` crossed `concurrent_start_bytes`: request a concurrent GC.
    Concurrent,
}

/// Result of an allocation.
#[derive(Debug, Clone, Copy)]
pub struct Allocated {
    pub id: ObjId,
    /// Stall of the allocating thread touching the new object's pages.
    pub stall: Stall,
    pub trigger: Trigger,
}

/// The hot part of one object, packed into 24 bytes so that marking, copying and scanning an
/// object reads one record (usually one cache line) instead of one entry in each of many arrays.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct ObjRec {
    /// Region-space byte address, or LOS slot index for large objects.
    pub addr: u32,
    /// Size in bytes (aligned).
    pub size: u32,
    /// First reference slot in [`Heap::refs`].
    pub ref_start: u32,
    /// Number of stored reference slots: all of them, or with [`oflags::TAIL`] the prefix that
    /// may be non-null (the rest are null and not stored; [`Heap::nrefs`] counts them).
    pub ref_len: u32,
    pub class: ClassId,
    /// [`oflags`] bits.
    pub flags: u8,
    /// Policy metadata bits (Marvin access/stub bits, Fleet classes...).
    pub meta: Meta,
}

// The record stays 24 bytes with 16 metadata bits (`flags` and `meta` share the last word).
const _: () = assert!(std::mem::size_of::<ObjRec>() == 24);

impl ObjRec {
    /// Whether the object has reference slots at all (stored or in its null tail).
    #[inline(always)]
    pub fn has_refs(&self) -> bool {
        (self.ref_len | (self.flags & oflags::TAIL) as u32) != 0
    }
}

/// A read-only snapshot of an object for policy hooks.
#[derive(Debug, Clone, Copy)]
pub struct ObjView {
    pub id: ObjId,
    pub size: u32,
    pub class: ClassId,
    pub flags: u8,
    pub meta: Meta,
    /// Whether the object has reference slots (its count: [`Heap::nrefs`]).
    pub has_refs: bool,
}

impl ObjView {
    pub fn fg_alloc(&self) -> bool {
        self.flags & oflags::FG_ALLOC != 0
    }
    pub fn is_large(&self) -> bool {
        self.flags & oflags::LARGE != 0
    }
}

/// The heap of one app.
#[derive(Debug)]
pub struct Heap {
    pub pid: Pid,
    pub config: HeapConfig,
    pub classes: Vec<ClassInfo>,
    // --- objects (indexed by ObjId; see the module docs for the layout) ---
    /// Hot per-object records: everything the collector reads to mark, copy and scan an object.
    pub recs: Vec<ObjRec>,
    /// Mark bitmap, one bit per object id: set means marked by the current/last GC.
    pub(crate) mark: Vec<u64>,
    /// Reference slots (CSR): object `o`'s slots are `refs[recs[o].ref_start..][..recs[o].ref_len]`.
    pub refs: Vec<ObjId>,
    /// Slots in `refs` that belong to dead objects (compacted when they dominate).
    pub(crate) dead_ref_slots: u64,
    pub(crate) free_ids: Vec<ObjId>,
    pub live_objects: u64,
    // --- roots ---
    pub roots: Vec<ObjId>,
    // --- regions ---
    pub regions: Vec<Region>,
    pub(crate) free_regions: BTreeSet<u32>,
    pub(crate) non_free_regions: u32,
    /// Non-free regions of a policy's separate space (`Region::separate`), not counted by the
    /// region-allocation guard.
    pub(crate) separate_regions: u32,
    /// Current mutator allocation region (or NIL).
    pub(crate) alloc_region: u32,
    // --- large objects ---
    pub los: Vec<LargeSlot>,
    pub(crate) free_los_slots: Vec<u32>,
    /// Remembered set (old objects written since the last GC).
    pub(crate) remembered: Vec<ObjId>,
    // --- accounting (ART `Heap` fields) ---
    /// `num_bytes_allocated_`: bytes of objects allocated and not yet reclaimed.
    pub bytes_allocated: u64,
    /// Bytes in the large-object space.
    pub los_bytes: u64,
    /// `target_footprint_`.
    pub target_footprint: u64,
    /// `concurrent_start_bytes_`.
    pub concurrent_start_bytes: u64,
    /// Whether the app is in the foreground (jank perceptible).
    pub foreground: bool,
    /// GC epoch (incremented at each collection).
    pub epoch: u32,
    /// Layout clock: incremented whenever an object leaves its place (moved or freed).
    pub(crate) layout_clock: u64,
    /// Per region (and, last, the large-object space): the layout clock when an object last left
    /// it. Accesses memoised at clock `t` over these regions are still valid iff none is newer
    /// than `t` ([`crate::touch_memo`]).
    pub(crate) changed: Vec<u64>,
    /// Bumped by every change outside a collection of what a full trace computes: reference
    /// stores, root changes, metadata changes ([`crate::gc`] replays a trace only if unchanged).
    pub(crate) graph_clock: u64,
    /// The last full trace's recorded effects, for replay ([`crate::gc`] module `replay`).
    pub(crate) trace_memo: crate::gc::TraceMemo,
    /// The last recorded marking tree (`gc::tree`).
    pub(crate) tree_memo: crate::gc::TreeMemo,
    /// A concurrent GC was requested and has not run yet.
    pub gc_pending: bool,
    /// Scratch bitmap of the objects in evacuated regions (stock full GCs).
    pub(crate) evac_bits: Vec<u64>,
    /// Bytes allocated since the last GC and when that GC ended (allocation-rate estimate).
    pub(crate) bytes_since_gc: u64,
    pub(crate) last_gc_end: Nanos,
    /// Bytes the last GC expected the app to allocate while a concurrent GC runs (`remaining` in
    /// `GrowForUtilization`): the trigger sits this far below the target.
    pub(crate) concurrent_remaining: u64,
    /// While a policy's target ([`crate::hooks::AfterGc::target_footprint`]) is in force: the stock
    /// target and trigger the last GC computed, restored at the app's next state change.
    pub(crate) stock_target: Option<(u64, u64)>,
    /// Collector state (next GC type, throughput statistics, totals).
    pub gc: crate::gc::GcState,
}

#[inline]
pub(crate) fn align_up(x: u32, a: u32) -> u32 {
    // In u64 and saturating at the largest aligned u32 rather than overflowing: a crafted size
    // that large (issue 13: a 213-byte dump) fits no region, and the allocator refuses it.
    let a = a as u64;
    (((x as u64 + a - 1) & !(a - 1)).min(u32::MAX as u64 & !(a - 1))) as u32
}

impl Heap {
    /// An empty heap. No pages are mapped until regions are used.
    pub fn new(pid: Pid, config: HeapConfig) -> Self {
        let nregions =
            (config.capacity / REGION_SIZE as u64).clamp(2, (u32::MAX >> REGION_SHIFT) as u64) as u32;
        let regions = (0..nregions)
            .map(|_| Region {
                state: RegionState::Free,
                top: 0,
                live_bytes: 0,
                young: false,
                group: 0,
                separate: false,
                first_page: NIL,
                resident_pages: 0,
                objs: Vec::new(),
            })
            .collect();
        let target = config.initial_size.min(config.growth_limit);
        Self {
            pid,
            classes: Vec::new(),
            recs: Vec::new(),
            mark: Vec::new(),
            refs: Vec::new(),
            dead_ref_slots: 0,
            free_ids: Vec::new(),
            live_objects: 0,
            roots: Vec::new(),
            regions,
            free_regions: (0..nregions).collect(),
            non_free_regions: 0,
            separate_regions: 0,
            alloc_region: NIL,
            los: Vec::new(),
            free_los_slots: Vec::new(),
            remembered: Vec::new(),
            bytes_allocated: 0,
            los_bytes: 0,
            target_footprint: target,
            concurrent_start_bytes: target.saturating_sub(128 << 10),
            foreground: true,
            epoch: 0,
            layout_clock: 0,
            changed: vec![0; nregions as usize + 1],
            graph_clock: 0,
            trace_memo: Default::default(),
            tree_memo: Default::default(),
            gc_pending: false,
            evac_bits: Vec::new(),
            bytes_since_gc: 0,
            last_gc_end: 0,
            concurrent_remaining: 128 << 10,
            stock_target: None,
            gc: Default::default(),
            config,
        }
    }

    /// Register a class; returns its id.
    pub fn add_class(&mut self, name: impl Into<String>, kind: ClassKind) -> ClassId {
        self.classes.push(ClassInfo {
            name: name.into(),
            kind,
        });
        (self.classes.len() - 1) as ClassId
    }

    /// Id of a class by name, adding it if absent (linear search: for setup code only).
    pub fn class_named(&mut self, name: &str, kind: ClassKind) -> ClassId {
        match self.classes.iter().position(|c| c.name == name) {
            Some(i) => i as ClassId,
            None => self.add_class(name, kind),
        }
    }

    pub fn num_regions(&self) -> u32 {
        self.regions.len() as u32
    }

    /// Number of object ids (live or free).
    pub fn id_capacity(&self) -> usize {
        self.recs.len()
    }

    /// The hot record of object id `o`.
    #[inline(always)]
    pub fn rec(&self, o: ObjId) -> &ObjRec {
        &self.recs[o as usize]
    }

    /// Region-space byte address of `o` (LOS slot index for large objects).
    #[inline]
    pub fn addr(&self, o: ObjId) -> u32 {
        self.recs[o as usize].addr
    }

    /// Size of `o` in bytes.
    #[inline]
    pub fn size(&self, o: ObjId) -> u32 {
        self.recs[o as usize].size
    }

    #[inline]
    pub fn class(&self, o: ObjId) -> ClassId {
        self.recs[o as usize].class
    }

    /// [`oflags`] bits of `o`.
    #[inline]
    pub fn flags(&self, o: ObjId) -> u8 {
        self.recs[o as usize].flags
    }

    /// Policy metadata bits of `o`.
    #[inline]
    pub fn meta(&self, o: ObjId) -> Meta {
        self.recs[o as usize].meta
    }

    /// Whether the last (or current) GC marked `o`.
    #[inline]
    pub fn is_marked(&self, o: ObjId) -> bool {
        self.mark
            .get(o as usize >> 6)
            .is_some_and(|w| w & (1u64 << (o & 63)) != 0)
    }

    #[inline]
    pub fn is_alive(&self, o: ObjId) -> bool {
        self.recs
            .get(o as usize)
            .is_some_and(|r| r.flags & oflags::ALIVE != 0)
    }

    #[inline]
    pub fn is_large(&self, o: ObjId) -> bool {
        self.recs[o as usize].flags & oflags::LARGE != 0
    }

    /// Region of a (non-large) object.
    #[inline]
    pub fn region_of(&self, o: ObjId) -> u32 {
        self.recs[o as usize].addr >> REGION_SHIFT
    }

    pub fn view(&self, o: ObjId) -> ObjView {
        self.view_of(o, &self.recs[o as usize])
    }

    /// The hook view of object `o` with record `r` (reads nothing but the record).
    #[inline(always)]
    pub(crate) fn view_of(&self, o: ObjId, r: &ObjRec) -> ObjView {
        ObjView {
            id: o,
            size: r.size,
            class: r.class,
            flags: r.flags,
            meta: r.meta,
            has_refs: r.has_refs(),
        }
    }

    /// Global page range `(first, n)` covering object `o`.
    #[inline]
    pub fn pages_of(&self, o: ObjId) -> (PageIdx, u32) {
        self.pages_in(&self.recs[o as usize])
    }

    /// Global page range `(first, n)` covering the object with record `r`.
    #[inline(always)]
    pub fn pages_in(&self, r: &ObjRec) -> (PageIdx, u32) {
        self.byte_pages(r, 0, r.size)
    }

    /// First page of the mapping holding the object with record `r` (its region, or its own
    /// large-object mapping) and the object's byte offset in it.
    #[inline(always)]
    fn mapping_of(&self, r: &ObjRec) -> (PageIdx, u32) {
        if r.flags & oflags::LARGE != 0 {
            (self.los[r.addr as usize].first_page, 0)
        } else {
            let a = r.addr;
            (
                self.regions[(a >> REGION_SHIFT) as usize].first_page,
                a & (REGION_SIZE - 1),
            )
        }
    }

    /// Global page range `(first, n)` of bytes `[off, off + len)` (`len ≥ 1`, inside the object)
    /// of the object with record `r`.
    #[inline(always)]
    fn byte_pages(&self, r: &ObjRec, off: u32, len: u32) -> (PageIdx, u32) {
        let (base, start) = self.mapping_of(r);
        let p0 = (start + off) >> PAGE_SHIFT;
        let p1 = (start + off + len - 1) >> PAGE_SHIFT;
        (base + p0, p1 - p0 + 1)
    }

    /// Global page range `(first, n)` covering bytes `[off, off + len)` of object `o` (clamped to
    /// the object; `len` at least 1).
    #[inline]
    pub fn pages_of_bytes(&self, o: ObjId, off: u32, len: u32) -> (PageIdx, u32) {
        let r = &self.recs[o as usize];
        let off = off.min(r.size.saturating_sub(1));
        self.byte_pages(r, off, len.clamp(1, r.size - off))
    }

    /// Global page of the object's header.
    #[inline]
    pub fn header_page(&self, o: ObjId) -> PageIdx {
        self.header_page_in(&self.recs[o as usize])
    }

    /// Global page of the header of the object with record `r`.
    #[inline(always)]
    pub fn header_page_in(&self, r: &ObjRec) -> PageIdx {
        let (base, start) = self.mapping_of(r);
        base + (start >> PAGE_SHIFT)
    }

    /// Whether an object of this class and size goes to the large-object space.
    pub fn goes_to_los(&self, class: ClassId, size: u32) -> bool {
        let kind = self.classes[class as usize].kind;
        (size >= self.config.large_object_threshold
            && matches!(kind, ClassKind::PrimitiveArray(_) | ClassKind::String))
            || size > REGION_SIZE
    }

    /// Growth multiplier in the current app state (`Heap::HeapGrowthMultiplier`).
    pub fn growth_multiplier(&self) -> f64 {
        if self.foreground {
            self.config.foreground_multiplier
        } else {
            self.config.background_multiplier
        }
    }

    /// Bytes occupied in regions (sum of region tops) plus LOS pages: the heap's footprint.
    pub fn footprint_bytes(&self) -> u64 {
        let regions: u64 = self
            .regions
            .iter()
            .filter(|r| r.state == RegionState::Used)
            .map(|_| REGION_SIZE as u64)
            .sum();
        let los: u64 = self
            .los
            .iter()
            .filter(|s| s.obj != NULL)
            .map(|s| s.pages as u64 * PAGE_SIZE as u64)
            .sum();
        regions + los
    }

    pub fn used_regions(&self) -> u32 {
        self.non_free_regions
    }

    // ------------------------------------------------------------------ mutator operations

    /// Let full collections replay the last full trace when its result is known (default on;
    /// same effects either way, module `gc::replay`).
    pub fn set_trace_replay(&mut self, on: bool) {
        self.trace_memo.off = !on;
    }

    /// Full collections replayed so far (see [`Self::set_trace_replay`]).
    pub fn trace_replays(&self) -> u64 {
        self.trace_memo.replays
    }

    /// Full collections that re-walked the marking tree of the collection before (a compaction
    /// that recorded it, module `gc::tree`) instead of tracing.
    pub fn tree_rewalks(&self) -> u64 {
        self.tree_memo.rewalks
    }

    /// Full collections that took the generic loop and followed the marking tree recorded before
    /// (the graph unchanged, hooks [`crate::hooks::RuntimeHooks::never_opaque`]) instead of the
    /// reference slots.
    pub fn tree_follows(&self) -> u64 {
        self.tree_memo.follows
    }

    /// Full collections traced for real so far, by why they did not replay (all counted, in
    /// [`crate::gc::Refusal::ALL`] order).
    pub fn trace_refusals(&self) -> [(crate::gc::Refusal, u64); crate::gc::Refusal::ALL.len()] {
        crate::gc::Refusal::ALL.map(|r| (r, self.trace_memo.refused[r as usize]))
    }

    pub fn add_root(&mut self, o: ObjId) {
        self.graph_clock += 1;
        self.roots.push(o);
    }

    /// Remove one occurrence of `o` from the roots (order of the others may change).
    pub fn remove_root(&mut self, o: ObjId) -> bool {
        self.graph_clock += 1;
        match self.roots.iter().position(|&r| r == o) {
            Some(p) => {
                self.roots.swap_remove(p);
                true
            }
            None => false,
        }
    }

    /// The write barrier's generational part: remember an old object that now points elsewhere.
    #[inline]
    pub(crate) fn remember(&mut self, src: ObjId) {
        let r = self.recs[src as usize];
        if r.flags & oflags::REMEMBERED != 0 {
            return;
        }
        let old = if r.flags & oflags::LARGE != 0 {
            true
        } else {
            !self.regions[(r.addr >> REGION_SHIFT) as usize].young
        };
        if old {
            self.recs[src as usize].flags |= oflags::REMEMBERED;
            self.remembered.push(src);
        }
    }

    /// Clear `o`'s mark bit (a newly allocated object is unmarked).
    #[inline]
    pub(crate) fn unmark(&mut self, o: ObjId) {
        if let Some(w) = self.mark.get_mut(o as usize >> 6) {
            *w &= !(1u64 << (o & 63));
        }
    }

    /// Start a collection's marking: every id unmarked, the bitmap covering every id and one more
    /// (the collector's stand-in for NULL).
    pub(crate) fn clear_marks(&mut self) {
        self.mark.clear();
        self.mark.resize((self.recs.len() + 1).div_ceil(64), 0);
    }

    /// Total bytes of live (not yet reclaimed) objects, recomputed (for tests).
    pub fn recount_bytes(&self) -> u64 {
        self.recs
            .iter()
            .filter(|r| r.flags & oflags::ALIVE != 0)
            .map(|r| r.size as u64)
            .sum()
    }

    /// Touch a set of objects' pages (used by [`crate::access`]); `whole` touches every page of each
    /// object, otherwise only its header page.
    pub(crate) fn touch_objects<B: PageBacking + ?Sized>(
        &self,
        batch: &mut TouchBatch,
        backing: &mut B,
        o: ObjId,
        whole: bool,
        write: bool,
    ) {
        if whole {
            let (f, n) = self.pages_of(o);
            batch.touch(backing, f, n, write);
        } else {
            batch.touch(backing, self.header_page(o), 1, write);
        }
    }

    /// Page ranges `(first, n)` of the regions holding objects of destination group `g`
    /// (only the used part of each region), for policy hints.
    pub fn group_ranges(&self, g: u8) -> Vec<(PageIdx, u32)> {
        self.regions
            .iter()
            .filter(|r| r.state == RegionState::Used && !r.young && r.group == g && r.top > 0)
            .map(|r| (r.first_page, r.top.div_ceil(PAGE_SIZE)))
            .collect()
    }
}
