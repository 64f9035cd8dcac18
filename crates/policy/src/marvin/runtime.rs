//! Marvin's runtime part (MRT, one per app process): access bits in the barrier, the Clock aging
//! and stub creation during full-heap walks, bookmarking marking, the page-aligned swapped-in
//! space, and the ahead-of-time WriteTask at the end of each walk.

use super::state::*;
use super::Cfg;
use engine::{Actor, Category, HookCx, Nanos, Stall};
use kernel::types::Advice;
use runtime::gc::{GcCause, GcKind, GcStats};
use runtime::heap::{oflags, ClassKind, Heap, Meta, ObjId, ObjView, RegionState, PAGE_SIZE};
use runtime::hooks::{Access, AccessKind, AfterGc, BarrierOutcome, RuntimeHooks, VisitMode};

/// Destination group of stubbed objects: the page-aligned swapped-in space (artifact: a 512 MB
/// space at 0xC0000000; here regions of group 1, copied page-aligned, never evacuated, and not
/// counted by the region space's allocation guard: `separate_space`).
pub const SWAPPED_IN_GROUP: u8 = 1;

pub struct MarvinRuntime {
    pub(super) tab: AppRef,
    pub(super) cfg: Cfg,
    /// Whether the current GC is a full-heap walk (Clock ages only then).
    full: bool,
    /// Whether the current GC creates stubs (a compacting GC in the background).
    stub_round: bool,
    /// Swappable class ids (artifact `objectIsSwappableType`: primitive arrays and plain
    /// instances; not object arrays, strings or classes).
    swappable: Vec<bool>,
    /// Background mark-sweeps since the last stub round or foreground transition (artifact
    /// `bgMarkSweepCounter`: after `bg_walks_per_stub_round` of them the next WriteTask compacts
    /// and creates stubs instead, i.e. every 7th background task; reset in the foreground).
    bg_walks: u32,
    next_due: Option<Nanos>,
    started: bool,
    /// Stubs created during the current GC.
    new_stubs: u64,
    new_stub_bytes: u64,
    /// Accesses seen by the barrier since the last GC (their CPU is charged at the GC's end).
    accesses: u64,
    /// Full-heap walks started so far: the current write interval (a walk's coldness test looks
    /// at the interval that ended with it, `interval - 1`).
    interval: u32,
    /// Each object's last app write.
    writes: WriteLog,
    /// Scratch list of the objects `after_gc` looks at (kept for its allocation).
    ids: Vec<ObjId>,
}

/// How many objects ahead `after_gc` fetches records.
const RECORDS_AHEAD: usize = 8;

impl MarvinRuntime {
    pub fn new(tab: AppRef, cfg: Cfg) -> Self {
        Self {
            tab,
            cfg,
            full: false,
            stub_round: false,
            swappable: Vec::new(),
            bg_walks: 0,
            next_due: None,
            started: false,
            new_stubs: 0,
            new_stub_bytes: 0,
            accesses: 0,
            interval: 0,
            writes: WriteLog::default(),
            ids: Vec::new(),
        }
    }

    /// A stub candidate during a walk (before the walk opens the next write interval).
    fn candidate(&self, v: &ObjView, meta: Meta) -> bool {
        v.size >= self.cfg.stub_threshold
            && meta & STUB == 0
            && self.swappable.get(v.class as usize).copied().unwrap_or(false)
            && is_cold(self.writes.last(v.id), self.interval - 1, self.cfg.cold_rounds)
    }
}

impl RuntimeHooks for MarvinRuntime {
    fn on_state_change(
        &mut self,
        cx: &mut HookCx,
        _heap: &Heap,
        foreground: bool,
    ) -> Option<(Nanos, GcKind)> {
        {
            let mut t = self.tab.borrow_mut();
            t.foreground = foreground;
            if !foreground {
                t.bg_since = cx.now;
            }
        }
        if foreground {
            // marvin_swap.cc `SetInForeground(true)` resets `bgMarkSweepCounter`.
            self.bg_walks = 0;
        }
        // The WriteTask's period changes with the state (5 s fg / 30 s bg).
        self.next_due = None;
        // Stock ART's collector transition: the artifact creates stubs and reclaims inside this
        // stop-the-world compaction (`PerformHomogeneousSpaceCompact`).
        (!foreground).then_some((self.cfg.transition_wait, GcKind::Full { compact: true }))
    }

    fn next_task(&mut self, cx: &mut HookCx, _heap: &Heap, foreground: bool) -> Option<(Nanos, GcKind)> {
        let due = match self.next_due {
            Some(d) if d > cx.now => d,
            _ => {
                let wait = if !self.started {
                    self.started = true;
                    self.cfg.startup_delay
                } else if foreground {
                    self.cfg.fg_period
                } else {
                    self.cfg.bg_period
                };
                cx.now + wait
            }
        };
        self.next_due = Some(due);
        // marvin_swap.cc `scheduleNextTask`: `if (bgMarkSweepCounter >= 6)` compact (stubs),
        // else a concurrent mark-sweep and `bgMarkSweepCounter++`.
        let stub = !foreground && self.bg_walks >= self.cfg.bg_walks_per_stub_round;
        Some((due, GcKind::Full { compact: stub }))
    }

    fn choose_gc(&mut self, _cx: &mut HookCx, heap: &Heap, cause: GcCause, proposed: GcKind) -> GcKind {
        let fg = self.tab.borrow().foreground;
        self.full = !proposed.is_sticky();
        if self.full {
            // The Clock step of the artifact's full-heap walk: a new write interval begins.
            self.interval += 1;
        }
        self.stub_round = !fg && proposed == (GcKind::Full { compact: true });
        if cause == GcCause::Policy && !fg {
            self.bg_walks = if self.stub_round { 0 } else { self.bg_walks + 1 };
        }
        if self.swappable.len() != heap.classes.len() {
            self.swappable = heap
                .classes
                .iter()
                .map(|c| matches!(c.kind, ClassKind::Instance | ClassKind::PrimitiveArray(_)))
                .collect();
        }
        self.new_stubs = 0;
        self.new_stub_bytes = 0;
        proposed
    }

    fn evacuate(&mut self, _cx: &mut HookCx, heap: &Heap, r: u32, _kind: GcKind, default: bool) -> bool {
        // The swapped-in space is not moved: stubbed objects stay where their checkpoint maps.
        default && heap.regions[r as usize].group != SWAPPED_IN_GROUP
    }

    #[inline(always)]
    fn visit_mode(&mut self, obj: &ObjView) -> VisitMode {
        // Bookmarking: a stubbed object's references are read from its stub.
        if obj.meta & STUB != 0 {
            VisitMode::Bookmarked
        } else {
            VisitMode::Normal
        }
    }

    #[inline(always)]
    fn on_mark(&mut self, obj: &ObjView, _depth: u32, _young: bool, meta: &mut Meta) -> u8 {
        if *meta & STUB != 0 {
            return SWAPPED_IN_GROUP;
        }
        // Stub rounds are full walks (`choose_gc`).
        if self.stub_round && self.candidate(obj, *meta) {
            *meta |= STUB;
            self.new_stubs += 1;
            self.new_stub_bytes += obj.size as u64;
            SWAPPED_IN_GROUP
        } else {
            0
        }
    }

    /// The artifact's swapped-in space is a `FreeListSpace` of its own (marvin_swap.cc:
    /// `FreeListSpace::Create("SwappedInSpace", ...)` at `SWAPPED_IN_SPACE_START`, 512 MB), not
    /// part of the heap's main space: stubbing `RecordFree`s the original and allocates the copy
    /// there directly, so its pages do not eat into the region space's evacuation reserve.
    fn separate_space(&self, group: u8) -> bool {
        group == SWAPPED_IN_GROUP
    }

    fn group_alignment(&self, group: u8) -> u32 {
        if group == SWAPPED_IN_GROUP {
            PAGE_SIZE
        } else {
            runtime::heap::OBJECT_ALIGNMENT
        }
    }

    fn object_events(&self) -> bool {
        true
    }

    /// Every walk but a stub round: `on_mark` then leaves metadata alone and stubs are
    /// bookmarked by their `STUB` bit (the write history is kept by the barrier, not the walk).
    fn is_stock(&self) -> bool {
        !self.stub_round
    }

    fn bookmark_mask(&self) -> Meta {
        STUB
    }

    /// Stubs are bookmarked, never opaque.
    fn never_opaque(&self) -> bool {
        true
    }

    #[inline(always)]
    fn on_alloc(&mut self, obj: &ObjView, _meta: &mut Meta) {
        // Allocation writes the object (it is initialised).
        self.writes.write(obj.id, self.interval);
    }

    #[inline(always)]
    fn on_free(&mut self, obj: &ObjView) {
        self.writes.forget(obj.id);
        if obj.meta & STUB == 0 {
            return;
        }
        // Freeing a stub frees its record in the swap file without reading it (§6.3).
        let mut t = self.tab.borrow_mut();
        let s = t.state(obj.id);
        if s & SAVED != 0 {
            t.dead_bytes += obj.size as u64;
        }
        if let Some(x) = t.st.get_mut(obj.id as usize) {
            *x = 0;
        }
    }

    #[inline(always)]
    fn barrier(&mut self, access: &Access, meta: &mut Meta) -> BarrierOutcome {
        self.accesses += 1;
        let write = access.kind.is_write();
        if write {
            self.writes.write(access.obj.id, self.interval);
        }
        if *meta & STUB != 0 {
            let mut t = self.tab.borrow_mut();
            let size = access.obj.size as u64;
            let s = t.state_mut(access.obj.id);
            let was = *s;
            if was & RECLAIMED != 0 {
                // Software object fault: the object's pages come back from the swap file as the
                // runtime touches them (flash latency on this thread, the kernel's fault path).
                *s &= !RECLAIMED;
                t.c.object_faults += 1;
                t.c.fault_bytes += size;
            }
            let s = t.state_mut(access.obj.id);
            if write && *s & SAVED != 0 && *s & DIRTY == 0 {
                *s |= DIRTY;
                t.c.dirty_bytes += size;
            }
            // A reference store also updates the stub's copy (§6.3).
            if matches!(access.kind, AccessKind::RefStore { .. }) {
                return BarrierOutcome {
                    touch: true,
                    stall: Stall {
                        ns: 2 * self.cfg.barrier_ns,
                        psi_ns: 0,
                    },
                };
            }
        }
        BarrierOutcome {
            touch: true,
            stall: Stall {
                ns: self.cfg.barrier_ns,
                psi_ns: 0,
            },
        }
    }

    fn after_gc(&mut self, cx: &mut HookCx, heap: &Heap, stats: &GcStats, out: &mut AfterGc) {
        let pid = heap.pid;
        // Interposition CPU of the accesses since the last GC, as the app's own work.
        let acc = std::mem::take(&mut self.accesses);
        cx.charge_to(Actor::AppMain(pid), Category::App, acc * self.cfg.barrier_ns);
        let mut t = self.tab.borrow_mut();
        t.pid = Some(pid);
        t.c.barrier_accesses += acc;
        if !self.full {
            return;
        }
        // Stub creation runs stop-the-world; patching every reference to point at the stubs is
        // one more heap walk (§5.1), as long as this collection's trace.
        if self.new_stubs > 0 {
            let pause = stats.cpu_ns + self.cfg.stub_ns * self.new_stubs;
            out.pause_ns += pause;
            t.c.stubs_created += self.new_stubs;
            t.c.stub_bytes += self.new_stub_bytes;
            t.c.stub_pause_ns += pause;
        }
        // Rebuild the reclamation table and run the WriteTask: save cold stubbed objects that are
        // not saved yet or were written since (at most `write_task_bytes` per run, §1.4: 1 s).
        t.table.clear();
        let mut budget = self.cfg.write_task_bytes;
        let mut file_bytes = t.file_bytes;
        let mut written = 0u64;
        // Stubbed objects live in the swapped-in space's regions or in the large-object space.
        // Listed first, so each record can be fetched ahead of its test (no effect on results).
        let mut ids = std::mem::take(&mut self.ids);
        ids.clear();
        ids.extend(
            heap.regions
                .iter()
                .filter(|r| r.state == RegionState::Used && r.group == SWAPPED_IN_GROUP)
                .flat_map(|r| r.objs.iter().copied())
                .chain(heap.los.iter().map(|l| l.obj).filter(|&o| o != runtime::NULL)),
        );
        for (i, &o) in ids.iter().enumerate() {
            if let Some(&a) = ids.get(i + RECORDS_AHEAD) {
                runtime::gc::prefetch(std::slice::from_ref(heap.rec(a)), 0);
            }
            let rec = heap.rec(o);
            if rec.flags & oflags::ALIVE == 0 || rec.meta & STUB == 0 {
                continue;
            }
            let (first, pages) = heap.pages_in(rec);
            t.table.push(Rte {
                obj: o,
                first,
                pages,
                size: rec.size,
            });
            let s = t.state(o);
            let needs = s & SAVED == 0 || s & DIRTY != 0;
            if needs
                && s & RECLAIMED == 0
                && is_cold(self.writes.last(o), self.interval, self.cfg.cold_rounds)
                && budget >= rec.size as u64
            {
                budget -= rec.size as u64;
                out.hints.push((first, pages, Advice::WriteAhead));
                if s & SAVED == 0 {
                    file_bytes += rec.size as u64; // appended (first save)
                }
                written += rec.size as u64;
                *t.state_mut(o) = SAVED;
            }
        }
        self.ids = ids;
        t.file_bytes = file_bytes;
        t.c.saved_bytes += written;
        t.c.swap_file_writes += written;
        if self.stub_round && self.cfg.reclaim_at_stub_round {
            // The prototype's reclamation (§7, §8.2): right after creating stubs, drop every clean
            // saved object (its copy is in the swap file: an unmap, no I/O).
            let mut dropped = 0u64;
            for i in 0..t.table.len() {
                let e = t.table[i];
                let s = t.state_mut(e.obj);
                if *s & (SAVED | DIRTY | RECLAIMED) == SAVED {
                    *s |= RECLAIMED;
                    out.hints.push((e.first, e.pages, Advice::PageOut));
                    dropped += e.size as u64;
                }
            }
            t.c.reclaimed_bytes += dropped;
            t.c.stub_round_reclaimed_bytes += dropped;
        }
        // Swap-file compaction (§6.3): when more than 25% of it is dead, copy the live records
        // to a new file (read + write on flash, on the heap-task thread).
        if t.file_bytes > 0 && t.dead_bytes as f64 > self.cfg.compact_threshold * t.file_bytes as f64 {
            let live = t.file_bytes - t.dead_bytes;
            out.gc_stall.add(Stall {
                ns: self.cfg.flash_rw_ns(live),
                psi_ns: 0,
            });
            t.file_bytes = live;
            t.dead_bytes = 0;
            t.c.compactions += 1;
            t.c.swap_file_writes += live;
        }
        // The policy's own bookkeeping: one table entry per stubbed object.
        cx.charge(self.cfg.rte_scan_ns * t.table.len() as u64);
    }
}
