//! Fleet's runtime side (one per app process): the grouping GC (RGS step 1), BGC with the extra
//! card table, and the write barrier that feeds it (Fleet §5.2, §5.3.1).

use super::{
    token, Config, State, COLD, DEPTH_BUCKETS, FGO_GCS, LAUNCH, M_CLASS, M_CLASS_SHIFT, M_DIRTY, M_FGO,
    M_FYO, M_NRO, M_SEEN, M_TOUCHED, T_HOT, T_STOP, WS,
};
use crate::Shared;
use ::runtime::heap::{ObjView, RegionState, REGION_SHIFT};
use ::runtime::hooks::TraceOrder;
use ::runtime::{
    Access, AccessKind, AfterGc, BarrierOutcome, CollectedSet, GcCause, GcKind, GcStats, Heap, Meta, ObjId,
    RuntimeHooks,
};
use engine::{HookCx, Nanos};
use kernel::types::{Advice, Pid};

/// What the current collection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Stock,
    /// RGS step 1: full evacuate-all BFS GC classifying every object.
    Grouping,
    /// Background-object GC.
    Bgc,
    /// The allocation path's last collection before `OutOfMemoryError` while grouped: stock full
    /// tracing of the whole heap (Fleet §5.2's fallback); Fleet stops for the episode after it.
    Fallback,
}

/// Per-collection classification counters (flushed into [`super::FleetStats`] at the GC's end).
#[derive(Debug, Clone, Copy, Default)]
struct Classified {
    bytes: [u64; 4],
    objects: [u64; 4],
    nro: (u64, u64),
    fyo: (u64, u64),
    union_bytes: u64,
    large: u64,
    depth_objects: [u64; DEPTH_BUCKETS],
    depth_bytes: [u64; DEPTH_BUCKETS],
}

/// Fleet's [`RuntimeHooks`] for one app.
pub struct FleetArt {
    cfg: Config,
    state: Shared<State>,
    pid: Pid,
    foreground: bool,
    bg_since: Nanos,
    /// The grouping GC ran this episode and Fleet has not stopped yet.
    grouped: bool,
    /// When Fleet stops after the app came back (`Nanos::MAX`: not scheduled).
    stop_at: Nanos,
    /// The full-tracing fallback ran in this background episode: Fleet stays stopped (no new
    /// grouping) until the app next goes to the background.
    fell_back: bool,
    episode: u32,
    mode: Mode,
    /// Foreground objects a reference was stored into since grouping (the dirty cards' owners).
    dirty: Vec<ObjId>,
    /// Card marks whose CPU is not charged yet (the barrier has no cx).
    pending_marks: u64,
    cls: Classified,
    /// Foreground objects at this episode's grouping, and stock background GCs since (FGO survival).
    fgo_at_grouping: u64,
    bg_gcs_since_grouping: usize,
}

impl FleetArt {
    pub fn new(cfg: Config, state: Shared<State>) -> Self {
        FleetArt {
            cfg,
            state,
            pid: 0,
            foreground: true,
            bg_since: 0,
            grouped: false,
            stop_at: Nanos::MAX,
            fell_back: false,
            episode: 0,
            mode: Mode::Stock,
            dirty: Vec::new(),
            pending_marks: 0,
            cls: Classified::default(),
            fgo_at_grouping: 0,
            bg_gcs_since_grouping: 0,
        }
    }

    /// Whether Fleet currently acts for this app at `now` (grouped and not stopped).
    fn active(&mut self, now: Nanos) -> bool {
        if self.grouped && self.foreground && now >= self.stop_at {
            self.grouped = false;
        }
        self.grouped
    }

    /// Charge the card marks the barrier counted.
    fn settle(&mut self, cx: &mut HookCx) {
        if self.pending_marks > 0 {
            let n = std::mem::take(&mut self.pending_marks);
            cx.charge((n as f64 * self.cfg.card_mark_ns) as Nanos);
            self.state.with(|s| s.stats.card_marks += n);
        }
    }

    /// The grouping class of a marked object (WS > FYO > NRO > cold, the artifact's precedence).
    fn classify(&self, meta: Meta, depth: u32, young: bool) -> u8 {
        if !self.cfg.rgs {
            // BGC only: one class, no hints.
            return WS;
        }
        if meta & M_TOUCHED != 0 {
            WS
        } else if (self.cfg.fyo && young) || (self.cfg.nro && depth <= self.cfg.d) {
            LAUNCH
        } else {
            COLD
        }
    }

    /// Objects on the dirty cards (extra roots of a BGC); returns the number of dirty cards.
    fn card_roots(&self, heap: &Heap, out: &mut Vec<ObjId>) -> u64 {
        let shift = self.cfg.card_shift;
        let mut cards: Vec<u32> = Vec::with_capacity(self.dirty.len());
        for &o in &self.dirty {
            if !heap.is_alive(o) || heap.meta(o) & M_FGO == 0 {
                continue;
            }
            if heap.is_large(o) {
                // A large object's own mapping: its card is its own.
                out.push(o);
                continue;
            }
            let a = heap.addr(o);
            let end = a + heap.size(o).max(1) - 1;
            cards.extend((a >> shift)..=(end >> shift));
        }
        cards.sort_unstable();
        cards.dedup();
        let per_region = REGION_SHIFT - shift;
        let mut i = 0;
        while i < cards.len() {
            let r = cards[i] >> per_region;
            let Some(reg) = heap.regions.get(r as usize) else {
                i += 1;
                continue;
            };
            let mut j = i;
            while j < cards.len() && cards[j] >> per_region == r {
                j += 1;
            }
            if reg.state == RegionState::Used {
                // Objects in address order; keep those overlapping any of this region's dirty cards.
                let mut k = 0;
                for &o in &reg.objs {
                    if !heap.is_alive(o) || heap.region_of(o) != r {
                        continue;
                    }
                    let (a, e) = (heap.addr(o), heap.addr(o) + heap.size(o).max(1) - 1);
                    while k < j - i && (cards[i + k] << shift) + (1 << shift) - 1 < a {
                        k += 1;
                    }
                    if k == j - i {
                        break;
                    }
                    if cards[i + k] << shift <= e {
                        out.push(o);
                    }
                }
            }
            i = j;
        }
        cards.len() as u64
    }
}

impl RuntimeHooks for FleetArt {
    fn on_state_change(&mut self, cx: &mut HookCx, heap: &Heap, foreground: bool) -> Option<(Nanos, GcKind)> {
        self.pid = heap.pid;
        self.settle(cx);
        let now = cx.now;
        let was_fg = self.foreground;
        self.foreground = foreground;
        if !foreground {
            if was_fg && self.grouped {
                // Back to the background before T_F: the artifact's ForeToBack resets grouping.
                self.grouped = false;
            }
            self.bg_since = now;
            self.stop_at = Nanos::MAX;
            self.fell_back = false;
        } else if self.grouped {
            // T_F after returning, Fleet stops (BGC off, launch pages unprotected).
            self.stop_at = now + self.cfg.t_f;
            cx.schedule(self.stop_at, token(T_STOP, self.episode, self.pid));
        } else if !was_fg && now < self.bg_since + self.cfg.t_b {
            self.state.with(|s| s.stats.groupings_cancelled += 1);
        }
        // The grouping GC (next_task) replaces ART's collector transition.
        None
    }

    fn next_task(&mut self, cx: &mut HookCx, heap: &Heap, foreground: bool) -> Option<(Nanos, GcKind)> {
        self.pid = heap.pid;
        self.settle(cx);
        (!foreground && !self.grouped && !self.fell_back)
            .then_some((self.bg_since + self.cfg.t_b, GcKind::Full { compact: true }))
    }

    fn choose_gc(&mut self, cx: &mut HookCx, heap: &Heap, cause: GcCause, proposed: GcKind) -> GcKind {
        self.pid = heap.pid;
        self.settle(cx);
        let active = self.active(cx.now);
        let proposed = if !self.foreground && !self.cfg.bg_minor_gc && proposed.is_sticky() {
            self.state.with(|s| s.stats.bg_minor_replaced += 1);
            GcKind::Full { compact: false }
        } else {
            proposed
        };
        // Fleet §5.2 (memory leak): BGC never frees foreground garbage, so "if necessary, Fleet
        // can resort to the original Android method of using full tracing to clear garbage
        // objects from the entire Java heap". The paper gives no trigger, nor does the artifact
        // (its `background_gen_` also covers an allocation's `clear_soft_references` GC, which then
        // is not evacuate-all); here the necessity is an allocation that a BGC could not satisfy:
        // the slow path's last, compacting collection before `OutOfMemoryError` runs as stock.
        let fallback = active && cause == GcCause::Alloc && proposed == (GcKind::Full { compact: true });
        self.mode = if cause == GcCause::Policy && !self.foreground && !active {
            Mode::Grouping
        } else if fallback {
            Mode::Fallback
        } else if active && self.cfg.bgc && !proposed.is_sticky() {
            Mode::Bgc
        } else {
            Mode::Stock
        };
        match self.mode {
            Mode::Grouping => {
                self.dirty.clear();
                self.cls = Classified::default();
                GcKind::Full { compact: true }
            }
            Mode::Bgc => GcKind::Full { compact: false },
            Mode::Stock | Mode::Fallback => proposed,
        }
    }

    fn collected_set(&mut self, _cx: &mut HookCx, heap: &Heap, _kind: GcKind, set: &mut CollectedSet) {
        if self.mode != Mode::Bgc {
            return;
        }
        // Foreground regions (tagged by the grouping GC) and foreground large objects stay.
        for (r, reg) in heap.regions.iter().enumerate() {
            if reg.state == RegionState::Used && !reg.young && (LAUNCH..=COLD).contains(&reg.group) {
                set.set_region(r as u32, false);
            }
        }
        for (s, slot) in heap.los.iter().enumerate() {
            if slot.obj != ::runtime::NULL && heap.meta(slot.obj) & M_FGO != 0 {
                set.set_large(s as u32, false);
            }
        }
    }

    fn extra_roots(&mut self, cx: &mut HookCx, heap: &Heap, _kind: GcKind, out: &mut Vec<ObjId>) {
        if self.mode != Mode::Bgc {
            return;
        }
        let before = out.len();
        let cards = self.card_roots(heap, out);
        // Scanning the card table: one byte per card of the heap's range.
        let table = heap.config.capacity >> self.cfg.card_shift;
        cx.charge((table as f64 * self.cfg.card_scan_ns_per_byte) as Nanos);
        let roots = (out.len() - before) as u64;
        self.state.with(|s| {
            s.stats.dirty_cards_max = s.stats.dirty_cards_max.max(cards);
            s.stats.dirty_cards_total += cards;
            s.stats.card_roots += roots;
        });
    }

    fn trace_order(&self, _kind: GcKind) -> TraceOrder {
        if self.mode == Mode::Grouping {
            TraceOrder::Bfs
        } else {
            TraceOrder::Dfs
        }
    }

    #[inline(always)]
    fn on_mark(&mut self, obj: &ObjView, depth: u32, young: bool, meta: &mut Meta) -> u8 {
        if self.mode != Mode::Grouping {
            return 0;
        }
        let mut m = (*meta & !(M_CLASS | M_TOUCHED | M_DIRTY | M_SEEN | M_NRO | M_FYO)) | M_FGO;
        if obj.is_large() {
            self.cls.large += 1;
            *meta = m;
            return 0;
        }
        let g = self.classify(*meta, depth, young);
        m |= (g as Meta) << M_CLASS_SHIFT;
        let size = u64::from(obj.size);
        let level = (depth as usize).min(DEPTH_BUCKETS - 1);
        self.cls.depth_objects[level] += 1;
        self.cls.depth_bytes[level] += size;
        self.cls.bytes[g as usize] += size;
        self.cls.objects[g as usize] += 1;
        // The Fig. 6 properties, whatever the class (WS takes precedence for the region).
        if young {
            m |= M_FYO;
            self.cls.fyo.0 += 1;
            self.cls.fyo.1 += size;
        }
        if depth <= self.cfg.d {
            m |= M_NRO;
            self.cls.nro.0 += 1;
            self.cls.nro.1 += size;
        }
        if young || depth <= self.cfg.d {
            self.cls.union_bytes += size;
        }
        *meta = m;
        g
    }

    /// Outside the grouping GC `on_mark` does nothing and every object is visited normally: a
    /// full GC of the whole heap (stock mode) may take the specialised loop.
    fn is_stock(&self) -> bool {
        self.mode != Mode::Grouping
    }

    /// Ungrouped in the foreground the barrier does nothing (no card, no coverage, no T_B
    /// marking); while grouped it may still act until T_F elapses, so it is kept (conservative).
    fn default_barrier(&self) -> bool {
        !self.grouped && self.foreground
    }

    #[inline(always)]
    fn barrier(&mut self, a: &Access, meta: &mut Meta) -> BarrierOutcome {
        if self.grouped && self.foreground && a.now >= self.stop_at {
            self.grouped = false; // T_F elapsed: Fleet stopped
        }
        if self.grouped {
            if let AccessKind::RefStore { .. } = a.kind {
                if *meta & M_FGO != 0 {
                    // The write barrier dirties the card of a foreground object.
                    self.pending_marks += 1;
                    if *meta & M_DIRTY == 0 {
                        *meta |= M_DIRTY;
                        self.dirty.push(a.obj.id);
                    }
                }
            }
            if self.foreground && a.now < self.stop_at && *meta & (M_FGO | M_SEEN) == M_FGO {
                // First access in this launch window to a grouped object: coverage accounting.
                *meta |= M_SEEN;
                let g = ((*meta & M_CLASS) >> M_CLASS_SHIFT) as usize;
                let (nro, fyo) = (*meta & M_NRO != 0, *meta & M_FYO != 0);
                if !a.obj.is_large() {
                    self.state.with(|s| {
                        s.stats.launch_seen[g] += 1;
                        s.stats.launch_seen_nro += u64::from(nro);
                        s.stats.launch_seen_fyo += u64::from(fyo);
                        s.stats.launch_seen_union += u64::from(nro || fyo);
                    });
                }
            }
        } else if !self.foreground {
            // The T_B window: the app's working set (WS class at grouping).
            *meta |= M_TOUCHED;
        }
        BarrierOutcome::TOUCH
    }

    fn after_gc(&mut self, cx: &mut HookCx, heap: &Heap, st: &GcStats, out: &mut AfterGc) {
        self.settle(cx);
        match self.mode {
            Mode::Grouping => {
                self.grouped = true;
                self.episode = self.episode.wrapping_add(1);
                let cls = std::mem::take(&mut self.cls);
                self.fgo_at_grouping = cls.objects[1..].iter().sum::<u64>() + cls.large;
                self.bg_gcs_since_grouping = 0;
                let cold = if self.cfg.rgs {
                    heap.group_ranges(COLD)
                } else {
                    Vec::new()
                };
                let launch = if self.cfg.rgs && self.cfg.hot_hint {
                    heap.group_ranges(LAUNCH)
                } else {
                    Vec::new()
                };
                let cold_pages: u64 = cold.iter().map(|r| u64::from(r.1)).sum();
                // COLD_RUNTIME: page the cold regions out now, whatever the pressure.
                out.hints
                    .extend(cold.iter().map(|&(f, n)| (f, n, Advice::PageOut)));
                cx.charge((cold_pages as f64 * self.cfg.hint_ns) as Nanos);
                let (pid, episode) = (self.pid, self.episode);
                self.state.with(|s| {
                    let x = &mut s.stats;
                    x.groupings += 1;
                    for g in 1..4 {
                        x.class_bytes[g] += cls.bytes[g];
                        x.class_objects[g] += cls.objects[g];
                    }
                    x.nro_objects += cls.nro.0;
                    x.nro_bytes += cls.nro.1;
                    x.fyo_objects += cls.fyo.0;
                    x.fyo_bytes += cls.fyo.1;
                    x.union_bytes += cls.union_bytes;
                    x.large_objects += cls.large;
                    for l in 0..DEPTH_BUCKETS {
                        x.depth_objects[l] += cls.depth_objects[l];
                        x.depth_bytes[l] += cls.depth_bytes[l];
                    }
                    x.pages_cold_hinted += cold_pages;
                    let p = s.procs.entry(pid).or_default();
                    p.episode = episode;
                    p.launch = launch;
                    p.active = true;
                });
                if self.cfg.rgs && self.cfg.hot_hint {
                    // HOT_RUNTIME through the kernel facade (framework timer, now and periodically).
                    cx.schedule(cx.now, token(T_HOT, episode, pid));
                }
            }
            Mode::Bgc => {
                self.state.with(|s| {
                    s.stats.bgcs += 1;
                    s.stats.bgc_visits += st.visits;
                    s.stats.bgc_pages_touched += st.pages_touched;
                    s.stats.bgc_copied += st.objects_copied;
                    s.stats.bgc_freed += st.freed_objects;
                });
            }
            Mode::Fallback => {
                // The grouping is gone (every region was evacuated into untagged ones): Fleet
                // stops and the app runs as stock Android until its next switch to the
                // background, which groups again (the artifact groups once per `ForeToBack`).
                self.grouped = false;
                self.fell_back = true;
                self.stop_at = Nanos::MAX;
                self.dirty.clear();
                let pid = self.pid;
                self.state.with(|s| {
                    s.stats.full_fallbacks += 1;
                    if let Some(p) = s.procs.get_mut(&pid) {
                        // The launch regions' protection ends at the next HOT_RUNTIME timer.
                        p.active = false;
                    }
                });
            }
            Mode::Stock => {
                if !self.foreground && self.grouped && !st.sticky && self.bg_gcs_since_grouping < FGO_GCS {
                    // Fig. 5: how many foreground objects a stock background GC leaves alive
                    // (only BGC-off runs reach here with a grouping behind them).
                    let alive = (0..heap.id_capacity() as ObjId)
                        .filter(|&o| heap.is_alive(o) && heap.meta(o) & M_FGO != 0)
                        .count() as u64;
                    let (k, base) = (self.bg_gcs_since_grouping, self.fgo_at_grouping);
                    self.bg_gcs_since_grouping += 1;
                    self.state.with(|s| {
                        s.stats.fgo_base[k] += base;
                        s.stats.fgo_alive[k] += alive;
                    });
                }
            }
        }
        if !self.foreground {
            // The tight background heap (§7.4; artifact: every background GC of a Fleet app):
            // live × factor; the runtime restores the stock target when the app comes back.
            let t = self.cfg.bg_target(
                st.bytes_allocated_after,
                heap.config.max_free,
                st.target_footprint_after,
            );
            out.target_footprint = Some(t);
            self.state.with(|s| {
                s.stats.bg_targets_set += 1;
                s.stats.bg_target_bytes += t;
            });
        }
        self.mode = Mode::Stock;
    }
}
