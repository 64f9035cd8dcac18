//! Concurrent copying collection (full and sticky/young), heap growth and GC triggering, after
//! ART's `collector/concurrent_copying.cc`, `space/region_space.cc` and `heap.cc`.
//!
//! A collection, as modelled:
//! 1. **Flip pause** (`ConcurrentCopying::FlipThreadRoots`): mutators stop briefly while roots are
//!    scanned; the pause is a main-thread stall of [`GcCosts::flip_pause_base_ns`] +
//!    roots × [`GcCosts::per_root_pause_ns`].
//! 2. **From-space selection** (`RegionSpace::SetFromSpace`): sticky GCs collect only regions
//!    allocated since the last GC; full GCs collect all regions and the large-object space. A
//!    policy may shrink or change that set per region and per large object
//!    ([`RuntimeHooks::collected_set`]); objects outside it are kept, untraced and unmoved. A
//!    collected region is *evacuated* if it is newly allocated, if the GC is compacting
//!    (`kEvacModeForceAll`: explicit GCs and the background collector transition), or if its live
//!    bytes at the last GC were below 75% of the region (`kEvacuateLivePercentThreshold`); otherwise
//!    it is *unevacuated* (objects stay, dead ones leave holes).
//! 3. **Trace** from the roots (plus, when the collected set is not the whole heap, the remembered
//!    set of old objects written since the last GC, and the policy's extra roots outside the set:
//!    both are scanned, their pages read and written, like CC's card scanning) with an explicit
//!    mark stack, or BFS with depth if the policy asks. Marks are a
//!    bitmap over object ids; the mark stack holds object ids. An object in an evacuated region is
//!    copied at the moment it is first marked (as CC does when it first sees a from-space
//!    reference), into the to-space region of the group the policy returns: it is read at its old
//!    pages and written at its new ones. An object marked in place (unevacuated region, large-object
//!    space) is pushed and read when it is scanned, as CC's `Scan` reads it: all its pages if it has
//!    reference fields (the GC scans them, and writes them: CC updates references to moved objects
//!    in place), else its header page only. Every touch goes through the [`PageBacking`] as
//!    `Actor::AppGc(pid)`; consecutive touches of the same page are coalesced (a read of a page
//!    inside a pending write run is absorbed by it).
//!
//!    Full DFS GCs of the whole heap with stock hooks ([`RuntimeHooks::is_stock`]) run a
//!    specialised loop (module `stock`) with the same order and effects (a test compares the two, page operation by page operation). It
//!    marks a scanned object's slots with a branch-free test-and-set: a NULL slot maps to a
//!    sentinel id whose mark bit is set for the trace, every slot's id is written at the stack top,
//!    and the top advances only when the bit was clear; objects marked in place are visited when
//!    popped. Objects of evacuated regions are recognised at first marking through a per-GC bitmap
//!    (built only when some region is evacuated) and copied then (with silent hooks, a copy that
//!    fits in the current to-space region is done on the loop's own tables, `visit_copy_fast`:
//!    the background transition's compactions are the default day's costliest GCs). Tracing is bound by branch
//!    mispredictions: a mark test that branches mispredicts on about half the references (46% of
//!    the bench heap's references find their object already marked), which the branch-free form
//!    removes; the remaining misprediction is the end of each object's slot loop. On a backing
//!    whose touches are free ([`PageBacking::touches_are_free`], e.g. `NullBacking`) the loop skips
//!    the touches of objects marked in place.
//! 4. **Reclaim**: evacuated regions are freed and their pages released (`ClearFromSpace` →
//!    `madvise(DONTNEED)`); dead large objects of the collected set are unmapped; unevacuated regions take their live
//!    bytes from marking (`RegionSpace::AddLiveBytes`) and walk their objects only when some were
//!    not marked (to free them); evacuated regions walk theirs only when fewer were copied out
//!    than the region lists.
//! 5. **Growth** (`Heap::GrowForUtilization`), with `m` = the growth multiplier (foreground 3.0,
//!    background 1.0): after a non-sticky GC, `target = used + clamp(used·(1/U − 1), min_free,
//!    max_free)·m` and the next GC is sticky; after a sticky GC, `target = used + max_free·m` if that
//!    shrinks the target, else `max(used, target)`, and the next GC stays sticky only while the
//!    sticky GC's throughput × 0.5 (`GetStickyGcThroughputAdjustment` with generational CC) is at
//!    least the full GCs' mean throughput and `used <= concurrent_start_bytes` (the trigger it ran
//!    at). The concurrent GC starts at
//!    `concurrent_start_bytes = max(target − remaining, used)`, `remaining` = allocation rate × GC
//!    duration clamped to [128 KiB, 512 KiB] (`kMin/kMaxConcurrentRemainingBytes`).
//! 6. **Policy hints** ([`RuntimeHooks::after_gc`], at the GC's end): the runtime applies the page
//!    hints the hook returned through the backing, on the GC thread, and adds the policy's
//!    GC-thread time and main-thread pause to the statistics. Swept objects are reported to
//!    [`RuntimeHooks::on_free`] when the policy asks for object events.
//!
//! Simplified: the collection runs atomically at its start time on the simulated clock (its
//! duration is reported; the mutator does not interleave with it), read barriers of the mutator
//! during the concurrent phase are not modelled, reference processing / finalization are not
//! modelled, and there is a single mutator allocation region.
//!
//! Costs ([`GcCosts`], estimates — no per-object phone figures are published):
//! - `per_visit_ns = 60`: marking one object is a dependent load of a likely-cold cache line;
//!   mobile DRAM latency is ~100 ns, partly hidden by ART's mark-stack prefetching. Fleet Fig. 12
//!   reports ~7×10^5 objects per background GC; at 60 ns that is ~42 ms of marking, consistent with
//!   the tens-to-hundreds of ms background GCs take on phones.
//! - `per_ref_ns = 3`: reading one reference field (same cache line as the object mostly).
//! - `per_byte_copied_ns = 0.22`: copying reads and writes each byte; at the 9182.7 MB/s DRAM
//!   bandwidth Fleet measured on a Pixel 3, 2 / 9.18 GB/s ≈ 0.22 ns/byte.
//! - flip pause `150 µs + 50 ns × roots`: CC pauses are typically a few hundred µs on phones.
//! - `per_region_ns = 2000`: per-region bookkeeping (from-space setup, clearing).
//!
//! GC CPU (charged to `Actor::AppGc(pid)`, `Category::Gc`) = visits × per_visit + references ×
//! per_ref + bytes copied × per_byte + regions × per_region. Fault stalls returned by the backing
//! are added to the GC's duration but not charged as GC CPU here: the kernel charges its own fault
//! handling and decompression to the faulting actor, so adding them again would double count.

use crate::backing::{PageBacking, TouchBatch};
use crate::heap::{oflags, Heap, ObjId, ObjRec, ObjView, NULL, REGION_SHIFT, REGION_SIZE};
use crate::hooks::{AfterGc, CollectedSet, RuntimeHooks, TraceOrder, VisitMode, NO_DEPTH};
use engine::{Actor, Category, HookCx, Nanos};
use kernel::types::NIL;
use serde::Serialize;

mod layout;
mod reclaim;
mod replay;
mod sizing;
mod stock;
mod tree;
mod types;

pub use replay::Refusal;
pub(crate) use replay::TraceMemo;
pub(crate) use sizing::restore_stock_target;
use sizing::set_policy_target;

thread_local! {
    /// The collector's mark stack and BFS level buffer (each entry an object's slot range
    /// `(start, len)` in `refs`), kept to reuse their allocations. One collection runs at a time on
    /// a thread, so all heaps share them: kept per heap, they were ~3% of the default day's peak
    /// memory (issue 14).
    static MARK_SCRATCH: std::cell::Cell<(Vec<u32>, Vec<u32>)> = const { std::cell::Cell::new((Vec::new(), Vec::new())) };
}
/// Software prefetch (the engine's): a cache hint for trace loops, never a change to a result.
pub use engine::prefetch;
pub use sizing::{grow_for_utilization, proposed_kind};
pub(crate) use tree::TreeMemo;
pub use types::{GcCause, GcCosts, GcKind, GcState, GcStats};

/// How many mark-queue entries ahead the trace loops prefetch (records twice as far ahead as
/// their reference slots, which need the record).
const PREFETCH_AHEAD: usize = 8;

const ROLE_NONE: u8 = 0;
const ROLE_EVAC: u8 = 1;
const ROLE_UNEVAC: u8 = 2;

/// `Region::ShouldBeEvacuated` for a collected region.
pub fn art_should_evacuate(heap: &Heap, r: u32, kind: GcKind) -> bool {
    let reg = &heap.regions[r as usize];
    match kind {
        GcKind::Full { compact: true } => true,
        _ if reg.young => true,
        // kEvacuateLivePercentThreshold = 75
        _ => (reg.live_bytes as u64) * 100 < 75 * REGION_SIZE as u64,
    }
}

/// One region in a collection: its role (`ROLE_*`) and the objects marked in place there and their
/// bytes (ART's `RegionSpace::AddLiveBytes` during marking), so reclaiming an unevacuated region
/// without garbage needs no object walk. One table, so marking an object in place reads one entry.
#[derive(Debug, Clone, Copy, Default)]
struct RegMark {
    role: u8,
    objs: u32,
    bytes: u32,
    /// Objects copied out of the region (evacuated regions).
    copied: u32,
    /// An evacuated region switched to unevacuated because a copy out of it failed: some of its
    /// listed objects moved out, and the one whose copy failed is not counted in `objs`/`bytes`.
    failed: bool,
}

/// An object waiting on the mark stack to be scanned: its id, with the [`VISITED`] and [`TOUCH`]
/// flags in the top bits (ids stay below 2^30: a heap of at most 4 GiB holds at most 2^29 objects
/// of 8 bytes).
type Entry = u32;
/// The id bits of an [`Entry`].
const ID_BITS: Entry = (1 << 30) - 1;
/// The object's mark-time visit already ran (policy hooks, accounting, copy). Clear only for
/// objects the stock loop marked in place, whose visit runs when they are scanned.
const VISITED: Entry = 1 << 31;
/// Touch the object's pages in place when scanning it.
const TOUCH: Entry = 1 << 30;

struct Tracer<'a, H: RuntimeHooks + ?Sized> {
    heap: &'a mut Heap,
    /// The heap's object records (taken out of the heap for the trace: the heap methods the
    /// tracer calls while it runs never read them).
    recs: Vec<ObjRec>,
    hooks: &'a mut H,
    backing: &'a mut dyn PageBacking,
    batch: TouchBatch,
    /// Large objects this collection may free (regions: `regs[r].role`).
    set: CollectedSet,
    /// The collected set is the whole heap (every region and large object).
    all: bool,
    /// Mark bitmap (taken out of the heap for the trace).
    mark: Vec<u64>,
    /// Per region: role in this collection and what marking found there.
    regs: Vec<RegMark>,
    /// Per destination group: current to-space region and copy alignment (0 = not asked yet).
    to_region: Vec<u32>,
    to_align: Vec<u32>,
    st: GcStats,
    /// The hooks' visit calls do nothing this collection ([`RuntimeHooks::marks_silently`]).
    silent: bool,
    /// Record this trace's touches and copies for replay (module `replay`) into `log`.
    logging: bool,
    log: Vec<u64>,
    /// Regions the copies took, and whether a copy found none.
    taken: Vec<u32>,
    copy_failed: bool,
    /// Record this trace's marking tree (module `tree`) into `tree`; `opaque`: an object was not
    /// scanned (the tree is then not kept).
    tree_logging: bool,
    tree: Vec<u32>,
    opaque: bool,
    /// The layout hash of a collection that records or follows a tree (module `layout`), and the
    /// regions a logged trace's copies came from.
    layout: u64,
    from: Vec<u32>,
}

/// Set `o`'s bit; returns whether it was clear.
#[inline(always)]
fn test_and_set(mark: &mut [u64], o: ObjId) -> bool {
    let w = &mut mark[o as usize >> 6];
    let bit = 1u64 << (o & 63);
    let was = *w & bit;
    *w |= bit;
    was == 0
}

impl<H: RuntimeHooks + ?Sized> Tracer<'_, H> {
    /// Whether `o` is in the collected set.
    #[inline(always)]
    fn collected(&self, o: ObjId) -> bool {
        if self.all {
            // A stock full GC collects every region and the LOS (no need to load the record).
            return true;
        }
        let r = &self.recs[o as usize];
        if r.flags & oflags::LARGE != 0 {
            self.set.large(r.addr)
        } else {
            self.regs[(r.addr >> REGION_SHIFT) as usize].role != ROLE_NONE
        }
    }

    /// First reference to `o` in this trace (a root): mark it and, if it is in the collected set,
    /// copy or touch it. Returns its slots if it must be scanned.
    #[inline(always)]
    fn reach(&mut self, o: ObjId, depth: u32) -> Option<Entry> {
        if test_and_set(&mut self.mark, o) && self.collected(o) {
            self.visit(o, depth)
        } else {
            None
        }
    }

    /// Visit `o` (newly marked, in the collected set): run the hooks and copy it if its region is
    /// evacuated; returns its mark-stack entry if it must be scanned or touched in place.
    #[inline(always)]
    fn visit(&mut self, o: ObjId, depth: u32) -> Option<Entry> {
        self.st.visits += 1;
        // The record's fields are read one by one into registers (not copied whole to the stack:
        // the hooks' view and the copy then read them back without a store-forwarding stall).
        let r = &self.recs[o as usize];
        let (addr, size, flags, meta0, class) = (r.addr, r.size, r.flags, r.meta, r.class);
        let has_refs = r.has_refs();
        let large = flags & oflags::LARGE != 0;
        let region = if large { NIL } else { addr >> REGION_SHIFT };
        let (mode, group, meta) = if self.silent {
            // What the calls would answer (`RuntimeHooks::marks_silently`).
            (VisitMode::Normal, 0, meta0)
        } else {
            // `Heap::view_of`, field by field.
            let view = ObjView {
                id: o,
                size,
                class,
                flags,
                meta: meta0,
                has_refs,
            };
            let mode = self.hooks.visit_mode(&view);
            self.opaque |= mode == VisitMode::Opaque;
            let young = !large && self.heap.regions.get(region as usize).is_some_and(|r| r.young);
            let mut meta = meta0;
            let group = self.hooks.on_mark(&view, depth, young, &mut meta);
            if meta != meta0 {
                self.recs[o as usize].meta = meta;
            }
            (mode, group, meta)
        };
        let evac = !large && self.regs[region as usize].role == ROLE_EVAC;
        if self.tree_logging {
            self.layout = layout::mix(self.layout, o, group, meta, evac, addr);
        }
        let mut touch = false;
        if evac {
            // Copied now (touching its old and new pages), as CC copies at the first reference.
            self.copy(o, group, addr, size);
        } else {
            if !large {
                let m = &mut self.regs[region as usize];
                m.objs += 1;
                m.bytes += size;
            }
            // Marked in place: read when scanned.
            touch = mode == VisitMode::Normal;
        }
        let scan = has_refs && mode != VisitMode::Opaque;
        (scan || touch).then_some(o | VISITED | if touch { TOUCH } else { 0 })
    }

    /// Touch the pages of an object scanned in place: all of them if it has reference fields (the
    /// GC reads them, and writes them: CC updates references to moved objects in place), else its
    /// header page.
    #[inline(always)]
    fn touch_in_place(&mut self, rec: &ObjRec) {
        let (f, n, write) = if rec.has_refs() {
            let (f, n) = self.heap.pages_in(rec);
            (f, n, true)
        } else {
            (self.heap.header_page_in(rec), 1, false)
        };
        if self.logging {
            replay::log_touch(&mut self.log, f, n, write);
        }
        self.batch.touch(self.backing, f, n, write);
    }

    /// Scan the object of mark-stack entry `e` (touching it first if the entry says so), pushing
    /// the objects that must be scanned in turn onto `out`.
    #[inline(always)]
    fn scan_entry(&mut self, refs: &[ObjId], e: Entry, depth: u32, out: &mut Vec<Entry>) {
        let rec = self.recs[(e & ID_BITS) as usize];
        if e & TOUCH != 0 {
            self.touch_in_place(&rec);
        }
        self.scan(
            &refs[rec.ref_start as usize..][..rec.ref_len as usize],
            depth,
            out,
        );
    }

    /// Copy `o` (a small object at region-space address `old`, `size` bytes, as read by its
    /// visit) to the to-space region of `group`.
    fn copy(&mut self, o: ObjId, group: u8, old: u32, size: u32) {
        self.log_copy(o, old);
        let g = group as usize;
        if self.to_region.len() <= g {
            self.to_region.resize(g + 1, NIL);
            self.to_align.resize(g + 1, 0);
        }
        if self.to_align[g] == 0 {
            self.to_align[g] = self.hooks.group_alignment(group).max(1).next_power_of_two();
        }
        let align = self.to_align[g];
        let mut cur = self.to_region[g];
        let addr = match (cur != NIL)
            .then(|| self.heap.bump_aligned(cur, size, align))
            .flatten()
        {
            Some(a) => a,
            None => {
                // The backing is called directly (a region may be mapped): the batch syncs first.
                self.batch.sync(self.backing);
                match self.heap.take_region(self.backing, false) {
                    Ok(r) => {
                        self.taken.push(r);
                        // Room for as many objects as the group's last to-space region took
                        // (saves the list's regrowth copies; no effect on results).
                        let hint = if cur != NIL {
                            self.heap.regions[cur as usize].objs.len()
                        } else {
                            0
                        };
                        self.heap.regions[r as usize].objs.reserve(hint);
                        self.heap.regions[r as usize].group = group;
                        if self.hooks.separate_space(group) {
                            self.heap.regions[r as usize].separate = true;
                            self.heap.separate_regions += 1;
                        }
                        if self.regs.len() <= r as usize {
                            self.regs.resize(r as usize + 1, RegMark::default());
                        }
                        self.regs[r as usize].role = ROLE_NONE;
                        cur = r;
                        self.to_region[g] = r;
                        self.heap
                            .bump_aligned(cur, size, align)
                            .expect("object fits in an empty region")
                    }
                    Err(_) => {
                        // No free region: the object stays; its region becomes unevacuated.
                        self.copy_failed = true;
                        let r = (old >> REGION_SHIFT) as usize;
                        self.regs[r].role = ROLE_UNEVAC;
                        self.regs[r].failed = true;
                        // Only its place and size matter (it is not large: never copied).
                        let (f, n) = self.heap.pages_in(&ObjRec {
                            addr: old,
                            size,
                            ..ObjRec::default()
                        });
                        self.batch.touch(self.backing, f, n, true);
                        return;
                    }
                }
            }
        };
        let (mut recs, mut regs) = (std::mem::take(&mut self.recs), std::mem::take(&mut self.regs));
        self.moved(&mut recs, &mut regs, o, old, size, addr);
        (self.recs, self.regs) = (recs, regs);
    }

    /// Record a copy of `o` out of region-space address `old` when this trace is logged for
    /// replay (the copy event, and the region it came from).
    #[inline(always)]
    fn log_copy(&mut self, o: ObjId, old: u32) {
        if self.logging {
            replay::log_copy(&mut self.log, o);
            let r = old >> REGION_SHIFT;
            if self.from.last() != Some(&r) {
                self.from.push(r);
            }
        }
    }

    /// The effects of copying `o` (`size` bytes at region-space address `old`) to `addr`, its
    /// place in to-space: its old pages read, its new ones written, its record and the region
    /// lists updated. `recs` and `regs` are the tracer's (taken out of it by the caller).
    #[inline(always)]
    fn moved(&mut self, recs: &mut [ObjRec], regs: &mut [RegMark], o: ObjId, old: u32, size: u32, addr: u32) {
        let rec = &ObjRec {
            addr: old,
            size,
            ..ObjRec::default()
        };
        let from = self.heap.pages_in(rec);
        let to = self.heap.pages_in(&ObjRec { addr, ..*rec });
        self.batch.touch_copy(self.backing, from, to);
        self.heap.note_left(self.heap.place_of(rec));
        recs[o as usize].addr = addr;
        regs[(old >> REGION_SHIFT) as usize].copied += 1;
        self.heap.regions[(addr >> REGION_SHIFT) as usize].objs.push(o);
        self.st.objects_copied += 1;
        self.st.bytes_copied += size as u64;
    }

    /// [`Self::visit`] of `o`, an object of an evacuated region newly marked by the stock loop,
    /// when the hooks mark silently and the copy fits in group 0's current to-space region: the
    /// same effects without the hook-side bookkeeping, on the loop's `recs` and `regs`. `None`
    /// when it does not apply (nothing done: the caller visits `o` the general way).
    #[inline(always)]
    fn visit_copy_fast(
        &mut self,
        recs: &mut [ObjRec],
        regs: &mut [RegMark],
        o: ObjId,
    ) -> Option<Option<Entry>> {
        let r = &recs[o as usize];
        let (old, size, has_refs) = (r.addr, r.size, r.has_refs());
        // A region whose copy failed turned unevacuated: its objects are marked in place.
        if !self.silent || regs[(old >> REGION_SHIFT) as usize].role != ROLE_EVAC {
            return None;
        }
        let cur = *self.to_region.first()?;
        if cur == NIL {
            return None;
        }
        let addr = self.heap.bump_aligned(cur, size, self.to_align[0])?;
        self.st.visits += 1;
        self.log_copy(o, old);
        self.moved(recs, regs, o, old, size, addr);
        Some(has_refs.then_some(o | VISITED))
    }

    /// Scan `o`, an object outside the collected set whose references are roots (remembered
    /// set, or a policy's extra root): read and write its pages (CC updates the references) and
    /// push what it reaches onto `stack` (`tmp` is scratch).
    fn scan_kept(
        &mut self,
        refs: &[ObjId],
        o: ObjId,
        depth: u32,
        tmp: &mut Vec<Entry>,
        stack: &mut Vec<Entry>,
    ) {
        let r = self.recs[o as usize];
        let (f, n) = self.heap.pages_in(&r);
        self.batch.touch(self.backing, f, n, true);
        self.st.visits += 1;
        tmp.clear();
        self.scan(&refs[r.ref_start as usize..][..r.ref_len as usize], depth, tmp);
        stack.append(tmp);
    }

    /// Scan reference slots `slots` (of one object), pushing the objects that must be scanned in
    /// turn, in slot order.
    #[inline(always)]
    fn scan(&mut self, slots: &[ObjId], depth: u32, out: &mut Vec<Entry>) {
        let mut scanned = 0;
        for &c in slots {
            if c == NULL {
                continue;
            }
            scanned += 1;
            if test_and_set(&mut self.mark, c) && self.collected(c) {
                if self.tree_logging {
                    self.tree.push(c);
                }
                if let Some(p) = self.visit(c, depth) {
                    out.push(p);
                }
            }
        }
        self.st.refs_scanned += scanned;
    }
}

/// [`collect`] outside a running app (benchmarks, tests, probes): at `now` on the heap's GC
/// thread, charging `ledger`; timers its hooks ask for are dropped.
pub fn collect_standalone<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    kind: GcKind,
    now: Nanos,
    backing: &mut dyn PageBacking,
    ledger: &mut engine::CpuLedger,
    costs: &GcCosts,
) -> GcStats {
    let mut timers = engine::Timers::default();
    let mut cx = HookCx::new(now, engine::Actor::AppGc(heap.pid), ledger, &mut timers);
    collect(heap, hooks, kind, &mut cx, backing, costs)
}

/// Run one collection of `kind` at `cx.now` on the GC thread (`cx` should act as
/// `Actor::AppGc(pid)`; its hooks' timers and policy CPU go through it). Charges GC CPU through
/// `cx`; returns the statistics (the main-thread pause is `stats.pause_ns`).
pub fn collect<H: RuntimeHooks + ?Sized>(
    heap: &mut Heap,
    hooks: &mut H,
    kind: GcKind,
    cx: &mut HookCx,
    backing: &mut dyn PageBacking,
    costs: &GcCosts,
) -> GcStats {
    let _timer = crate::bench::GcTimer::start();
    let now = cx.now;
    let kind = if !heap.config.generational && kind.is_sticky() {
        GcKind::Full { compact: false }
    } else {
        kind
    };
    let full = !kind.is_sticky();
    heap.epoch = heap.epoch.wrapping_add(1);
    heap.clear_marks();
    let pid = heap.pid;
    // The mutator's allocation region is revoked at the flip.
    heap.alloc_region = NIL;
    let object_events = hooks.object_events();

    // From-space selection.
    let mut set = CollectedSet::stock(heap, kind);
    hooks.collected_set(cx, heap, kind, &mut set);
    let all = full && set.is_everything(heap);
    let nreg = heap.num_regions();
    let mut regs = vec![RegMark::default(); nreg as usize];
    let st = GcStats {
        sticky: !full,
        compacting: kind == GcKind::Full { compact: true },
        start: now,
        ..Default::default()
    };
    for r in 0..nreg {
        // A free region is never collected, whatever the policy set.
        if !set.region(r) || heap.regions[r as usize].state != crate::heap::RegionState::Used {
            continue;
        }
        let default = art_should_evacuate(heap, r, kind);
        let evac = hooks.evacuate(cx, heap, r, kind, default);
        regs[r as usize].role = if evac { ROLE_EVAC } else { ROLE_UNEVAC };
    }
    let mut extra = Vec::new();
    hooks.extra_roots(cx, heap, kind, &mut extra);
    let order = hooks.trace_order(kind);
    let pause_ns = (costs.flip_pause_base_ns + costs.per_root_pause_ns * heap.roots.len() as f64) as Nanos;

    let (mut stack, mut next) = MARK_SCRATCH.take();
    stack.clear();
    next.clear();
    let roots = std::mem::take(&mut heap.roots);
    let remembered = std::mem::take(&mut heap.remembered);
    // The slot array is only read during the trace: take it out so the scan loop can borrow it
    // while the tracer mutates the heap.
    let refs = std::mem::take(&mut heap.refs);
    let mark = std::mem::take(&mut heap.mark);
    let recs = std::mem::take(&mut heap.recs);
    // A full trace that can be recorded, and whether the last one can be replayed instead.
    let eligible = kind == GcKind::Full { compact: false }
        && all
        && order == TraceOrder::Dfs
        && extra.is_empty()
        && hooks.is_stock();
    let (free, mask) = (backing.touches_are_free(), hooks.bookmark_mask());
    let refusal = if eligible {
        let mut memo = std::mem::take(&mut heap.trace_memo);
        memo.translate(heap, &roots);
        heap.trace_memo = memo;
        heap.trace_memo
            .refusal(heap, &roots, mark.len(), &regs, free, mask)
    } else {
        full.then_some(Refusal::Ineligible)
    };
    // A collection that cannot replay its record may re-walk the marking tree of the one before
    // (module `tree`); one that takes the generic DFS loop over the whole heap records its tree.
    let rewalking =
        eligible && refusal.is_some() && !heap.trace_memo.off && heap.tree_memo.usable(heap, &roots);
    let tree_logging = full
        && all
        && order == TraceOrder::Dfs
        && extra.is_empty()
        && !hooks.is_stock()
        && !heap.trace_memo.off;
    match refusal {
        _ if rewalking => heap.tree_memo.rewalks += 1,
        Some(r) => heap.trace_memo.refused[r as usize] += 1,
        None => {}
    }
    let replaying = eligible && refusal.is_none();
    // A collection that could record may skip it (`TraceMemo::records`); it then leaves no record.
    let recording = eligible && !replaying && heap.trace_memo.records(refusal);
    // A generic-loop trace that may follow the tree it would record (the graph is unchanged).
    let following = tree_logging && hooks.never_opaque() && heap.tree_memo.usable(heap, &roots);
    let tree = if tree_logging && !following {
        heap.tree_memo.take_buffer()
    } else {
        Vec::new()
    };
    let mut memo = std::mem::take(&mut heap.trace_memo);
    let tree_memo = std::mem::take(&mut heap.tree_memo);
    let silent = hooks.marks_silently();
    let mut t = Tracer {
        logging: recording,
        log: Vec::new(),
        taken: Vec::new(),
        copy_failed: false,
        tree_logging,
        tree,
        opaque: false,
        layout: 0,
        from: Vec::new(),
        recs,
        heap,
        hooks,
        backing,
        batch: TouchBatch::new(now, Actor::AppGc(pid)),
        set,
        all,
        mark,
        regs,
        to_region: Vec::new(),
        to_align: Vec::new(),
        st,
        silent,
    };
    let root_depth = if order == TraceOrder::Bfs { 0 } else { NO_DEPTH };
    let alive = |t: &Tracer<H>, o: ObjId| {
        o != NULL
            && t.recs
                .get(o as usize)
                .is_some_and(|x| x.flags & oflags::ALIVE != 0)
    };
    for &r in roots.iter().filter(|_| !replaying) {
        if alive(&t, r) {
            if let Some(p) = t.reach(r, root_depth) {
                stack.push(p);
            }
        }
    }
    // Extra roots: in the collected set, like roots; outside it, scanned like remembered objects
    // (their references into the set are what the policy's card table records).
    let kept_depth = if order == TraceOrder::Bfs { 1 } else { NO_DEPTH };
    for &r in extra.iter().filter(|_| !replaying) {
        if !alive(&t, r) {
            continue;
        }
        if t.collected(r) {
            if let Some(p) = t.reach(r, root_depth) {
                stack.push(p);
            }
        } else {
            test_and_set(&mut t.mark, r);
            t.scan_kept(&refs, r, kept_depth, &mut next, &mut stack);
        }
    }
    // Remembered set (old objects with stores since the last GC): scan them (sticky or partial
    // GCs only; a GC of the whole heap reaches everything from the roots).
    for &o in &remembered {
        t.recs[o as usize].flags &= !oflags::REMEMBERED;
        if !all && t.recs[o as usize].flags & oflags::ALIVE != 0 && !t.collected(o) {
            t.scan_kept(&refs, o, kept_depth, &mut next, &mut stack);
        }
    }
    match order {
        _ if replaying => t.replay(&memo),
        _ if rewalking => {
            let (evac_bits, _) = t.take_evac_bits();
            if free {
                t.rewalk_tree::<true>(&tree_memo, &mut stack, &evac_bits);
            } else {
                t.rewalk_tree::<false>(&tree_memo, &mut stack, &evac_bits);
            }
            t.heap.evac_bits = evac_bits;
        }
        // A full GC collects everything and stock hooks need no calls: a specialised loop.
        TraceOrder::Dfs if all && t.hooks.is_stock() => {
            let (evac_bits, evac) = t.take_evac_bits();
            match (t.backing.touches_are_free(), evac) {
                (true, false) => t.trace_full_stock::<true, false>(&refs, &mut stack, &evac_bits),
                (true, true) => t.trace_full_stock::<true, true>(&refs, &mut stack, &evac_bits),
                (false, false) => t.trace_full_stock::<false, false>(&refs, &mut stack, &evac_bits),
                (false, true) => t.trace_full_stock::<false, true>(&refs, &mut stack, &evac_bits),
            }
            t.heap.evac_bits = evac_bits;
        }
        TraceOrder::Dfs if following => t.follow_tree(&tree_memo, &mut stack),
        TraceOrder::Dfs => {
            while let Some(e) = stack.pop() {
                if let Some(&a) = stack.last() {
                    prefetch(&t.recs, (a & ID_BITS) as usize);
                }
                if t.tree_logging {
                    t.tree_scan(e);
                }
                t.scan_entry(&refs, e, NO_DEPTH, &mut stack);
            }
        }
        TraceOrder::Bfs => {
            let mut depth = 0u32;
            while !stack.is_empty() {
                next.clear();
                for (i, &e) in stack.iter().enumerate() {
                    // The queue says what comes next: fetch records and slots ahead (no effect
                    // on results; the trace is bound by memory latency).
                    if let Some(&a) = stack.get(i + 2 * PREFETCH_AHEAD) {
                        prefetch(&t.recs, (a & ID_BITS) as usize);
                    }
                    if let Some(&a) = stack.get(i + PREFETCH_AHEAD) {
                        let r = &t.recs[(a & ID_BITS) as usize];
                        prefetch(&refs, r.ref_start as usize);
                    }
                    if let Some(&a) = stack.get(i + PREFETCH_AHEAD / 2) {
                        // The records its scan will mark and visit.
                        let r = &t.recs[(a & ID_BITS) as usize];
                        for &c in &refs[r.ref_start as usize..][..r.ref_len as usize] {
                            prefetch(&t.recs, c as usize);
                        }
                    }
                    t.scan_entry(&refs, e, depth + 1, &mut next);
                }
                std::mem::swap(&mut stack, &mut next);
                depth += 1;
            }
        }
    }
    t.batch.flush(t.backing);
    let Tracer {
        heap,
        hooks,
        backing,
        batch,
        mark,
        recs,
        regs,
        set,
        mut st,
        mut log,
        taken,
        copy_failed,
        tree,
        opaque,
        layout,
        mut from,
        to_align,
        ..
    } = t;
    heap.refs = refs;
    heap.mark = mark;
    heap.recs = recs;
    st.stall_ns = batch.stall.ns;
    st.pages_touched = batch.pages;
    heap.roots = roots;
    if tree_logging {
        memo.keep_layout(heap, layout, &to_align, &taken, copy_failed);
    }
    if eligible {
        from.sort_unstable();
        from.dedup();
        let (visits, refs) = (st.visits, st.refs_scanned);
        memo.update(
            heap,
            replaying,
            &mut log,
            // Not recorded: no record, as after a failed copy (a replay ignores this).
            copy_failed || !recording,
            &regs,
            &taken,
            &mut from,
            free,
            mask,
            visits,
            refs,
        );
    }
    heap.trace_memo = memo;
    let mut tree_memo = tree_memo;
    if following {
        debug_assert!(!opaque, "never_opaque hooks visited an object Opaque");
        tree_memo.follows += 1;
    } else if tree_logging {
        tree_memo.record(heap, tree, !opaque, st.refs_scanned);
    } else if !(full && all) || opaque {
        tree_memo.invalidate();
    }
    heap.tree_memo = tree_memo;
    MARK_SCRATCH.set((stack, next));
    let mut remembered = remembered;
    remembered.clear();
    heap.remembered = remembered;

    // Reclaim.
    let regions_touched = reclaim::reclaim(heap, hooks, object_events, &regs, &set, now, backing, &mut st);

    // Costs.
    let cpu = costs.per_visit_ns * st.visits as f64
        + costs.per_ref_ns * st.refs_scanned as f64
        + costs.per_byte_copied_ns * st.bytes_copied as f64
        + costs.per_region_ns * regions_touched as f64;
    st.cpu_ns = cpu as Nanos;
    st.pause_ns = pause_ns;
    st.duration_ns = st.cpu_ns + st.stall_ns;
    cx.charge_to(Actor::AppGc(pid), Category::Gc, st.cpu_ns + pause_ns);

    grow_for_utilization(heap, kind, &st, now);
    heap.gc_pending = false;
    heap.bytes_since_gc = 0;
    heap.last_gc_end = now + st.duration_ns;
    st.bytes_allocated_after = heap.bytes_allocated;
    st.target_footprint_after = heap.target_footprint;
    let g = &mut heap.gc;
    g.total_cpu_ns += st.cpu_ns;
    g.total_pause_ns += pause_ns;
    g.total_visits += st.visits;
    // The policy decides at the GC's end; its hints are applied after it returns.
    let end = now + st.duration_ns;
    let mut out = AfterGc::default();
    hooks.after_gc(&mut cx.reborrow(end, Actor::AppGc(pid)), heap, &st, &mut out);
    let mut extra_stall = out.gc_stall;
    for &(first, n, advice) in &out.hints {
        let s = backing.advise(end + extra_stall.ns, Actor::AppGc(pid), first, n, advice);
        extra_stall.add(s);
    }
    st.stall_ns += extra_stall.ns;
    st.duration_ns += extra_stall.ns;
    st.pause_ns += out.pause_ns;
    heap.gc.total_pause_ns += out.pause_ns;
    if let Some(t) = out.target_footprint {
        set_policy_target(heap, t);
        st.target_footprint_after = heap.target_footprint;
    }
    st
}
