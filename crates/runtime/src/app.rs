//! One app process's Java heap as the framework drives it: the runtime ([`Runtime`]) building a
//! [`Blueprint`] object by object, the app's short-lived allocations, Marvin-style churn of
//! long-lived objects, and accesses expressed in *logical* heap pages (the app access model's
//! offsets) that reach the pages where the objects currently are.
//!
//! What is modelled:
//! - **Footprint growth**: [`JavaApp::build_to`] allocates the blueprint's objects in order
//!   through [`Runtime::alloc`] (touching their pages, triggering concurrent or blocking GCs as
//!   ART would) and stores each reference as soon as both ends exist (through the write barrier).
//! - **Short-lived allocation** ([`JavaApp::alloc_garbage`]): objects that die at once, allocated
//!   at [`JavaParams::fg_alloc_bytes_per_s`] in the foreground, [`JavaParams::bg_alloc_bytes_per_s`]
//!   in the background and [`JavaParams::launch_alloc_bytes`] per hot launch. They drive GC
//!   frequency and fresh-page faults. Simplified: they are 4 KiB `byte[]` chunks — a collector
//!   never visits dead objects, so their number only matters to sweeping, and coarse chunks keep
//!   hours of simulated allocation cheap.
//! - **Churn** ([`JavaApp::churn`]): every [`JavaParams::churn_period`], long-lived leaf objects
//!   holding [`JavaParams::churn_bytes`] are dropped and replaced by new ones of the same class and
//!   size in the same slot (Marvin §8.3's apps: 20 MB every 5 s). It runs in every app state, on
//!   the app's thread: a round that stalls past the period delays the next round to its end
//!   (rounds never overlap; missed rounds are not made up).
//! - **Linked allocation** (optional, [`JavaParams::linked`]): a share of the short-lived
//!   allocation instead creates objects that a mutator store links into the live graph and that
//!   live for a sampled number of GCs ([`crate::linked`]; Fleet Fig. 5). Off by default.
//! - **Accesses** ([`JavaApp::touch_logical`]): a logical page `p` of the access model covers
//!   blueprint bytes `[p·scale, (p+1)·scale)`, with `scale` = blueprint bytes / logical pages
//!   (4096 when the blueprint was sized to the app's Java heap); the objects there pass the
//!   policy barrier and touch the pages holding those bytes now.
//!
//! Default rates are estimates (no paper publishes app allocation rates): 1 MB/s in the
//! foreground (a scrolling feed allocates a few hundred KB per second of views, strings and
//! parsed data; ART logs show sticky GCs every few tens of seconds in busy apps), 16 KB/s in the
//! background, 2 MB per hot launch (activity restart and first frame).

use crate::backing::PageBacking;
use crate::backing::TouchBatch;
use crate::blueprint::{Blueprint, LateLinks};
use crate::gc::GcStats;
use crate::heap::{ClassId, ClassKind, HeapConfig, HeapError, ObjId, NULL, PAGE_SIZE};
use crate::hooks::RuntimeHooks;
use crate::launch_bias::LaunchBias;
use crate::lazy::LazyBlueprint;
use crate::linked::{Linked, LinkedParams};
use crate::touch_memo::TouchMemo;
use crate::{Runtime, StepCost};
use engine::{Actor, CpuLedger, Nanos, SimRng, Stall};
use kernel::types::{PageIdx, Pid};
use rand::Rng;
use serde::Serialize;
use std::sync::Arc;

/// How many logical pages ahead a memoised touch fetches the memo's entries.
const MEMO_AHEAD: usize = 4;

/// How many objects ahead a logical page's resolution fetches their heap records.
const REC_AHEAD: usize = 8;

/// Size of a short-lived allocation chunk (see module docs).
pub const GARBAGE_CHUNK: u32 = 4096;

/// Allocation behaviour of an app's Java code (estimates; see module docs).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct JavaParams {
    /// Short-lived allocation while in the foreground (bytes per second).
    pub fg_alloc_bytes_per_s: f64,
    /// Short-lived allocation while in the background (bytes per second).
    pub bg_alloc_bytes_per_s: f64,
    /// Short-lived allocation of one hot launch (bytes).
    pub launch_alloc_bytes: u64,
    /// Long-lived bytes replaced per churn round (0 = no churn).
    pub churn_bytes: u64,
    /// Period of churn rounds.
    pub churn_period: Nanos,
    /// Each churn round replaces the same objects (the first churnable ones, in allocation order:
    /// the Marvin artifact's `deleteBuckets`/`recreateBuckets` of fixed buckets) instead of random
    /// ones. Default `false`.
    pub churn_same: bool,
    /// Medium-lived objects linked into the graph ([`crate::linked`]); `None` (default): none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub linked: Option<LinkedParams>,
    /// Hot-launch Java accesses biased to near-root and young objects ([`crate::launch_bias`]);
    /// `None` (default): the access model's pages as they are.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_bias: Option<LaunchBias>,
}

impl Default for JavaParams {
    fn default() -> Self {
        Self {
            fg_alloc_bytes_per_s: 1e6,
            bg_alloc_bytes_per_s: 16e3,
            launch_alloc_bytes: 2_000_000,
            churn_bytes: 0,
            churn_period: 0,
            churn_same: false,
            linked: None,
            launch_bias: None,
        }
    }
}

/// An app's Java heap as a recipe: its long-lived objects, the heap settings and how its code
/// allocates. Shared by every process incarnation of the app.
#[derive(Debug, Clone)]
pub struct JavaModel {
    /// Long-lived objects, in allocation order; the access model's Java pages map onto them.
    /// Built when the first process starts.
    pub blueprint: LazyBlueprint,
    pub config: HeapConfig,
    pub params: JavaParams,
}

/// A running app's Java heap.
///
/// Policy timers: hooks schedule them through their `HookCx` into [`Runtime::timers`]
/// (`app.rt.timers`); the framework drains them after each call into the app.
pub struct JavaApp {
    pub rt: Runtime<dyn RuntimeHooks>,
    pub bp: Arc<Blueprint>,
    pub params: JavaParams,
    /// Heap id of each blueprint object allocated so far: objects are built in blueprint order,
    /// so `ids.len()` is the number built. Reserved for the whole blueprint but filled as
    /// objects are built, so the part not built yet takes no memory (issue 14).
    ids: Vec<ObjId>,
    hclass: Vec<ClassId>,
    garbage_class: ClassId,
    /// Blueprint bytes per logical page.
    scale: f64,
    logical_pages: u32,
    /// For each logical page, the last blueprint object starting at or before its first byte
    /// (so an access finds its objects without a search).
    page_obj: Vec<u32>,
    /// Churn candidates: leaf objects with exactly one referrer, an earlier object, as
    /// `(object, referrer, slot)`.
    churnable: Vec<(u32, u32, u32)>,
    /// Slots of built objects pointing to objects not built yet.
    late: LateLinks,
    rng: SimRng,
    next_churn: Nanos,
    /// Fractional bytes of short-lived allocation carried between calls.
    garbage_carry: f64,
    scratch: Vec<(u32, u32, u32)>,
    pieces: Vec<(ObjId, u32, u32)>,
    /// Page ranges and places of the live pieces of a logical page being memoised.
    ranges: Vec<((PageIdx, u32), usize)>,
    /// Page runs of logical pages between collections (see [`crate::touch_memo`]).
    memo: TouchMemo,
    /// Incremented when churn rebinds blueprint objects (part of the memo's key).
    churn_gen: u32,
    /// Linked objects (used only when `params.linked` is set).
    pub linked: Linked,
    /// Near-root blueprint objects, in allocation order (computed at the first biased launch).
    near_root: Option<Vec<u32>>,
}

impl std::fmt::Debug for JavaApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JavaApp")
            .field("pid", &self.rt.pid())
            .field("built", &self.ids.len())
            .field("objects", &self.bp.len())
            .finish()
    }
}

impl JavaApp {
    /// A new, empty heap for process `pid` that will grow into `model`'s blueprint, seen by the
    /// access model as `logical_pages` pages.
    pub fn new(
        pid: Pid,
        model: &JavaModel,
        hooks: Box<dyn RuntimeHooks>,
        logical_pages: u32,
        rng: SimRng,
        now: Nanos,
    ) -> Self {
        let (bp, params) = (Arc::clone(model.blueprint.get()), model.params);
        let mut rt = Runtime::boxed(pid, model.config.clone(), hooks);
        let hclass = bp.register_classes(&mut rt.heap);
        let garbage_class = rt.heap.class_named("byte[]", ClassKind::PrimitiveArray(1));
        let scale = bp.total_bytes() as f64 / logical_pages.max(1) as f64;
        let mut page_obj = Vec::with_capacity(logical_pages as usize);
        let mut i = 0usize;
        for p in 0..logical_pages {
            let lo = (p as f64 * scale) as u64;
            while i + 1 < bp.len() && bp.start(i + 1) <= lo {
                i += 1;
            }
            page_obj.push(i as u32);
        }
        let churnable = if params.churn_bytes > 0 {
            churn_candidates(&bp)
        } else {
            Vec::new()
        };
        Self {
            rt,
            ids: Vec::with_capacity(bp.len()),
            hclass,
            garbage_class,
            scale,
            logical_pages,
            page_obj,
            churnable,
            late: LateLinks::default(),
            rng,
            next_churn: if params.churn_bytes > 0 && params.churn_period > 0 {
                now + params.churn_period
            } else {
                Nanos::MAX
            },
            garbage_carry: 0.0,
            scratch: Vec::new(),
            pieces: Vec::new(),
            ranges: Vec::new(),
            memo: TouchMemo::default(),
            churn_gen: 0,
            linked: Linked::default(),
            near_root: None,
            params,
            bp,
        }
    }

    pub fn pid(&self) -> Pid {
        self.rt.pid()
    }

    /// Heap id of blueprint object `i` (`NULL` if not allocated yet).
    pub fn id_of(&self, i: u32) -> ObjId {
        self.ids.get(i as usize).copied().unwrap_or(NULL)
    }

    /// Blueprint objects allocated so far.
    pub fn built_objects(&self) -> usize {
        self.ids.len()
    }

    /// Logical pages whose first byte is allocated.
    pub fn built_pages(&self) -> u32 {
        if self.ids.len() >= self.bp.len() {
            return self.logical_pages;
        }
        let bytes = self.bp.start(self.ids.len()) as f64;
        ((bytes / self.scale).ceil() as u32).min(self.logical_pages)
    }

    /// Whether logical page `p` exists yet (its first byte's object is allocated).
    pub fn is_built(&self, p: u32) -> bool {
        p < self.built_pages()
    }

    /// Allocate blueprint objects until the first `pages` logical pages are built, on the main
    /// thread starting at `now`. Returns the main thread's cost (allocation faults, GC pauses,
    /// barrier stalls).
    pub fn build_to(
        &mut self,
        now: Nanos,
        pages: u32,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<StepCost, HeapError> {
        let target = ((pages.min(self.logical_pages) as f64) * self.scale).ceil() as u64;
        let until = if pages >= self.logical_pages {
            self.bp.len()
        } else {
            self.bp.objects_below(target)
        };
        let bp = Arc::clone(&self.bp);
        let mut cost = StepCost::default();
        while self.ids.len() < until {
            let i = self.ids.len();
            let t = now + cost.main_stall.ns;
            let slots = bp.slots(i as u32);
            // Slots past the blueprint's last non-null one stay null: not stored.
            let (id, c) = self.rt.alloc_used(
                t,
                self.hclass[bp.class(i) as usize],
                bp.size(i),
                bp.nslots(i),
                slots.len() as u32,
                backing,
                ledger,
            )?;
            cost.merge(c);
            self.ids.push(id);
            // Back references to existing objects: the new object is young, no barrier needed.
            // Forward ones wait for their target ([`LateLinks`]). One decoding of the slots.
            for (k, tg) in slots.enumerate() {
                if tg == NULL {
                    continue;
                }
                if (tg as usize) <= i {
                    self.rt.heap.set_ref_raw(id, k as u32, self.ids[tg as usize]);
                } else {
                    self.late.queue(tg, i as u32, k as u32);
                }
            }
            if bp.is_root(i) {
                self.rt.heap.add_root(id);
            }
            // Earlier objects that point here: mutator stores (barrier, remembered set, page touch).
            while let Some((s, k)) = self.late.next_for(i as u32) {
                let src = self.ids[s as usize];
                // Each store starts after everything the thread waited for before it.
                let stall = self.rt.write_ref(now + cost.main_stall.ns, src, k, id, backing);
                cost.main_stall.add(stall);
            }
        }
        Ok(cost)
    }

    /// Allocate `bytes` of short-lived objects on the main thread at `now` (fractions of a chunk
    /// carry over to the next call); with [`JavaParams::linked`], its share of the bytes are linked
    /// objects instead, and linked objects whose lifetime is over are unlinked first.
    pub fn alloc_garbage(
        &mut self,
        now: Nanos,
        bytes: f64,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<StepCost, HeapError> {
        let mut cost = StepCost::default();
        let mut bytes = bytes;
        if let Some(lp) = self.params.linked {
            let share = lp.share.clamp(0.0, 1.0);
            let c = self.linked.step(
                &lp,
                &mut self.rt,
                &mut self.rng,
                now,
                bytes * share,
                backing,
                ledger,
            )?;
            cost.merge(c);
            bytes *= 1.0 - share;
        }
        self.garbage_carry += bytes;
        while self.garbage_carry >= GARBAGE_CHUNK as f64 {
            self.garbage_carry -= GARBAGE_CHUNK as f64;
            let t = now + cost.main_stall.ns;
            let (_, c) = self
                .rt
                .alloc(t, self.garbage_class, GARBAGE_CHUNK, 0, backing, ledger)?;
            cost.merge(c);
        }
        Ok(cost)
    }

    /// Run the churn round due at `now`, if any (see module docs), starting at `now`. Returns the
    /// main thread's cost and the number of rounds run (0 or 1). The next round is due one period
    /// after this one's due time, but not before this one ends.
    pub fn churn(
        &mut self,
        now: Nanos,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Result<(StepCost, u32), HeapError> {
        let mut cost = StepCost::default();
        let mut rounds = 0;
        let bp = Arc::clone(&self.bp);
        if self.next_churn <= now {
            rounds += 1;
            self.next_churn += self.params.churn_period;
            if self.churnable.is_empty() {
                return Ok((cost, rounds));
            }
            let mut freed = 0u64;
            let mut tries = 0;
            // Random picks miss the cache (the churnable list and the ids are large): a clone of
            // the rng draws the same indices `CHURN_AHEAD` picks ahead, to prefetch them (no
            // effect on results: the picks still come from `self.rng`).
            let n = self.churnable.len();
            let mut ahead = (!self.params.churn_same).then(|| self.rng.clone());
            let mut look = [0usize; CHURN_AHEAD];
            if let Some(a) = ahead.as_mut() {
                for j in look.iter_mut() {
                    *j = a.gen_range(0..n);
                    crate::gc::prefetch(&self.churnable, *j);
                }
            }
            while freed < self.params.churn_bytes && tries < 4 * self.churnable.len() {
                if let Some(a) = ahead.as_mut() {
                    let j = a.gen_range(0..n);
                    look[tries % CHURN_AHEAD] = j;
                    crate::gc::prefetch(&self.churnable, j);
                    // Half as far ahead the list entry is in cache: fetch its holder's id and
                    // the blueprint blocks of the object's size and class.
                    let (i, s, _) = self.churnable[look[(tries + CHURN_AHEAD / 2) % CHURN_AHEAD]];
                    crate::gc::prefetch(&self.ids, s as usize);
                    bp.prefetch_object(i as usize, false);
                    // A quarter as far ahead: the holder's record (the barrier reads it) and the
                    // size's entries.
                    let (i, s, _) = self.churnable[look[(tries + CHURN_AHEAD / 4) % CHURN_AHEAD]];
                    if let Some(&h) = self.ids.get(s as usize) {
                        crate::gc::prefetch(&self.rt.heap.recs, h as usize);
                    }
                    if (i as usize) < bp.len() {
                        bp.prefetch_object(i as usize, true);
                    }
                }
                let (i, s, k) = if self.params.churn_same {
                    // The same objects every round: the first churnable ones in allocation order.
                    self.churnable[tries % self.churnable.len()]
                } else {
                    self.churnable[self.rng.gen_range(0..self.churnable.len())]
                };
                tries += 1;
                if (i as usize) >= self.ids.len() {
                    continue;
                }
                let src = self.ids[s as usize];
                // Each operation starts after everything the thread waited for before it.
                let t = now + cost.main_stall.ns;
                cost.main_stall.add(self.rt.write_ref(t, src, k, NULL, backing));
                let size = bp.size(i as usize);
                let (id, c) = self.rt.alloc(
                    now + cost.main_stall.ns,
                    self.hclass[bp.class(i as usize) as usize],
                    size,
                    0,
                    backing,
                    ledger,
                )?;
                cost.merge(c);
                let t = now + cost.main_stall.ns;
                cost.main_stall.add(self.rt.write_ref(t, src, k, id, backing));
                self.ids[i as usize] = id;
                self.churn_gen = self.churn_gen.wrapping_add(1);
                freed += size as u64;
            }
            // The app's thread runs one round at a time: a round that overran the period delays
            // the next one to its end (a sleep-based loop skips the rounds it missed).
            self.next_churn = self.next_churn.max(now + cost.main_stall.ns);
        }
        Ok((cost, rounds))
    }

    /// When the next churn round is due (`Nanos::MAX` if none).
    pub fn next_churn(&self) -> Nanos {
        self.next_churn
    }

    /// Hint the CPU to load what touching logical page `p` reads first (no effect on results).
    #[inline]
    pub fn prefetch_logical(&self, p: u32) {
        self.memo.prefetch(p);
    }

    /// Touch logical pages `pages` (offsets into the access model's Java heap) by `actor` at `now`.
    /// Pages not built yet are skipped. The heap pages touched are appended to `touched` if given
    /// (before the barrier runs: a policy that serves an access itself still reports the page).
    pub fn touch_logical(
        &mut self,
        now: Nanos,
        actor: Actor,
        pages: &[u32],
        write: bool,
        backing: &mut dyn PageBacking,
        touched: Option<&mut Vec<PageIdx>>,
    ) -> Stall {
        if touched.is_none() && self.rt.hooks.default_barrier() {
            return self.touch_memoised(now, actor, pages, write, backing);
        }
        self.collect_pieces(pages);
        self.access_pieces(now, actor, write, backing, touched)
    }

    /// Access `self.pieces` object by object (each through the policy barrier), reporting the
    /// pages of the live ones to `touched` first.
    fn access_pieces(
        &mut self,
        now: Nanos,
        actor: Actor,
        write: bool,
        backing: &mut dyn PageBacking,
        touched: Option<&mut Vec<PageIdx>>,
    ) -> Stall {
        if let Some(out) = touched {
            for &(o, off, len) in &self.pieces {
                if self.rt.heap.is_alive(o) {
                    let (f, n) = self.rt.heap.pages_of_bytes(o, off, len);
                    out.extend(f..f + n);
                }
            }
        }
        let pieces = std::mem::take(&mut self.pieces);
        let st = crate::access::access_bytes(
            &mut self.rt.heap,
            &mut *self.rt.hooks,
            now,
            actor,
            &pieces,
            write,
            backing,
        );
        self.pieces = pieces;
        st.stall
    }

    /// The objects' byte ranges `(heap id, offset, len)` on logical pages `pages`, in order, into
    /// `self.pieces`.
    fn collect_pieces(&mut self, pages: &[u32]) {
        self.pieces.clear();
        let built_end = self.bp.start(self.ids.len());
        for &p in pages {
            let lo = (p as f64 * self.scale) as u64;
            let hi = (((p + 1) as f64 * self.scale) as u64).min(built_end);
            self.scratch.clear();
            let first = self
                .page_obj
                .get(p as usize)
                .map_or_else(|| self.bp.object_at(lo), |&i| i as usize);
            self.bp.objects_in_from(first, lo, hi, &mut self.scratch);
            for &(i, off, len) in &self.scratch {
                self.pieces.push((self.ids[i as usize], off, len));
            }
        }
    }

    /// [`Self::touch_logical`] with the default barrier (every live object's pages are touched,
    /// nothing else happens): each logical page's page runs come from the memo, or are computed
    /// and memoised when all its objects are alive. One batch spans all `pages`, as in the
    /// object-by-object path.
    fn touch_memoised(
        &mut self,
        now: Nanos,
        actor: Actor,
        pages: &[u32],
        write: bool,
        backing: &mut dyn PageBacking,
    ) -> Stall {
        let built_end = self.bp.start(self.ids.len());
        self.memo
            .validate(self.churn_gen, built_end, self.logical_pages, self.scale);
        let mut batch = TouchBatch::new(now, actor);
        for (i, &p) in pages.iter().enumerate() {
            // Entries are scattered over the memo: fetch ahead (no effect on results).
            if let Some(&a) = pages.get(i + MEMO_AHEAD) {
                self.memo.prefetch(a);
            }
            if self.memo.get(p, &self.rt.heap).is_none() {
                self.collect_pieces(&[p]);
                let heap = &self.rt.heap;
                // The live objects' page ranges and places, each object's record read once.
                self.ranges.clear();
                let mut all_live = true;
                for (k, &(o, off, len)) in self.pieces.iter().enumerate() {
                    // Records are scattered over the heap's table: fetch ahead (no effect on
                    // results).
                    if let Some(&(a, _, _)) = self.pieces.get(k + REC_AHEAD) {
                        crate::gc::prefetch(&heap.recs, a as usize);
                    }
                    if o != NULL && heap.is_alive(o) {
                        let r = (heap.pages_of_bytes(o, off, len), heap.place_of(heap.rec(o)));
                        self.ranges.push(r);
                    } else {
                        all_live = false;
                    }
                }
                if p >= self.logical_pages || !all_live {
                    // Not memoisable: touch its live objects' ranges directly.
                    for &((f, n), _) in &self.ranges {
                        batch.touch(backing, f, n, write);
                    }
                    continue;
                }
                self.memo.insert(p, heap, self.ranges.iter().copied());
            }
            for &(f, n) in self.memo.get(p, &self.rt.heap).unwrap_or_default() {
                batch.touch(backing, f, n, write);
            }
        }
        batch.flush(backing);
        batch.stall
    }

    /// The app changed state (see [`Runtime::set_foreground`]; hook CPU goes to `ledger`).
    pub fn set_foreground(&mut self, now: Nanos, foreground: bool, ledger: &mut CpuLedger) {
        if self.rt.heap.foreground && !foreground {
            self.linked.mark_switch(self.rt.history.len() as u64);
        }
        self.rt.set_foreground(now, foreground, ledger);
    }

    /// A hot launch's Java pages (those `< java_pages` in `set`; the rest pass unchanged) with
    /// [`JavaParams::launch_bias`] applied: pages replaced by near-root or young objects are
    /// removed and counted. Returns the set and the page counts `(near_root, young)` to touch
    /// with [`Self::touch_biased`]. Without the bias: `set` unchanged, `(0, 0)`.
    pub fn bias_launch(&mut self, set: &[u32], java_pages: u32) -> (Vec<u32>, (u32, u32)) {
        let Some(b) = self.params.launch_bias else {
            return (set.to_vec(), (0, 0));
        };
        let mut out = Vec::with_capacity(set.len());
        let (mut near, mut young) = (0, 0);
        for &p in set {
            if p >= java_pages {
                out.push(p);
                continue;
            }
            let u: f64 = self.rng.gen();
            if u < b.near_root_share {
                near += 1;
            } else if u < b.near_root_share + b.young_share {
                young += 1;
            } else {
                out.push(p);
            }
        }
        (out, (near, young))
    }

    /// Touch `near` logical pages' worth of near-root objects (blueprint depth ≤ the bias's, built
    /// so far) and `young` pages' worth of the objects linked since the last GC before the app left the
    /// foreground, each page a random run of consecutive objects in allocation order, by `actor`
    /// at `now`; pages touched go to `touched` as in [`Self::touch_logical`]. Object-level, not
    /// page-level: a page of the allocation order mixes depths (depth-first layout).
    pub fn touch_biased(
        &mut self,
        now: Nanos,
        actor: Actor,
        (near, young): (u32, u32),
        backing: &mut dyn PageBacking,
        touched: Option<&mut Vec<PageIdx>>,
    ) -> Stall {
        let depth = self.params.launch_bias.map_or(0, |b| b.near_root_depth);
        let bp = &self.bp;
        let nro = self.near_root.get_or_insert_with(|| {
            let d = crate::launch_bias::depths(bp);
            (0..d.len() as u32).filter(|&i| d[i as usize] <= depth).collect()
        });
        let built = nro.partition_point(|&i| (i as usize) < self.ids.len());
        let near_objs: Vec<ObjId> = nro[..built].iter().map(|&i| self.ids[i as usize]).collect();
        let young_objs: Vec<ObjId> = self.linked.young_at_switch(&self.rt.heap).collect();
        self.pieces.clear();
        for (objs, n) in [(&near_objs, near), (&young_objs, young)] {
            if objs.is_empty() {
                continue;
            }
            for _ in 0..n {
                // A page's worth of bytes from a random start.
                let mut k = self.rng.gen_range(0..objs.len());
                let mut bytes = 0.0;
                while bytes < self.scale {
                    let o = objs[k % objs.len()];
                    let size = self.rt.heap.size(o);
                    self.pieces.push((o, 0, size));
                    bytes += size as f64;
                    k += 1;
                }
            }
        }
        // The picked objects are alive (built blueprint objects, linked objects still linked).
        self.access_pieces(now, actor, false, backing, touched)
    }

    /// When a scheduled GC is due, if any: the state-change GC or the policy's periodic task
    /// ([`Runtime::next_due`]); [`Self::tick`] runs it.
    pub fn pending_gc(&self) -> Option<Nanos> {
        self.rt.next_due()
    }

    /// Run a scheduled GC if due (at most one per call; see [`Runtime::tick`]).
    pub fn tick(
        &mut self,
        now: Nanos,
        backing: &mut dyn PageBacking,
        ledger: &mut CpuLedger,
    ) -> Option<GcStats> {
        self.rt.tick(now, backing, ledger)
    }

    /// Page ranges `(first, n)` of the heap's used regions and large objects (for whole-process
    /// madvise such as CachedAppOptimizer's compaction).
    pub fn mapped_ranges(&self) -> Vec<(PageIdx, u32)> {
        let h = &self.rt.heap;
        let mut v: Vec<(PageIdx, u32)> = h
            .regions
            .iter()
            .filter(|r| r.state == crate::heap::RegionState::Used && r.top > 0)
            .map(|r| (r.first_page, r.top.div_ceil(PAGE_SIZE)))
            .collect();
        v.extend(
            h.los
                .iter()
                .filter(|s| s.obj != NULL)
                .map(|s| (s.first_page, s.pages)),
        );
        v
    }
}

/// How many random churn picks ahead [`JavaApp::churn`] prefetches.
const CHURN_AHEAD: usize = 8;

/// Leaf objects (no reference slots) with exactly one referrer, which comes earlier, with that
/// referrer and its slot.
fn churn_candidates(bp: &Blueprint) -> Vec<(u32, u32, u32)> {
    let n = bp.len();
    let mut incoming = vec![0u32; n];
    // The last referring slot of each object from an earlier object (`NULL` if none).
    let mut earlier = vec![(NULL, 0u32); n];
    for s in 0..n as u32 {
        for (k, t) in bp.slots(s).enumerate() {
            if t != NULL {
                incoming[t as usize] += 1;
                if t > s {
                    earlier[t as usize] = (s, k as u32);
                }
            }
        }
    }
    (0..n as u32)
        .filter(|&i| {
            bp.nslots(i as usize) == 0
                && !bp.is_root(i as usize)
                && incoming[i as usize] == 1
                && earlier[i as usize].0 != NULL
        })
        .map(|i| (i, earlier[i as usize].0, earlier[i as usize].1))
        .collect()
}
