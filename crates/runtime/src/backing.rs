//! The runtime's only window on memory: a small page-level trait the kernel implements.
//!
//! The runtime never reaches into the kernel's internals. Every page the heap touches (allocation,
//! object accesses by the app, GC visits and copies) goes through [`PageBacking::touch`], so a page
//! that the kernel swapped out faults back in, with the stall charged to whichever actor touched it
//! (`Actor::AppGc(pid)` for the collector). Freed regions are given back with
//! [`PageBacking::release`] (ART releases cleared regions with `madvise(MADV_DONTNEED)`), and policies
//! send hints with [`PageBacking::advise`].
//!
//! [`TouchBatch`] coalesces touches into runs and passes a repeat of a run that changed nothing
//! (while the backing's [`PageBacking::touch_epoch`] says nothing changed since) to
//! [`PageBacking::count_repeated`] instead: the kernel only counts it, which is all touching it
//! would have done.
//!
//! [`MockBacking`] is a test implementation (records touches, models swapped pages with a fixed
//! fault stall); [`NullBacking`] costs nothing (benchmarks, `inspect`).

use engine::{Actor, Nanos, Stall};
use kernel::types::{Advice, PageIdx, Pid};

/// Page-level operations the runtime needs from the kernel.
pub trait PageBacking {
    /// Reserve `pages` virtual pages of Java heap for process `pid` (untouched pages cost nothing);
    /// returns the first global page index. The range is contiguous.
    fn map_heap(&mut self, pid: Pid, pages: u32) -> Result<PageIdx, String>;
    /// Unmap a range previously returned by `map_heap` (frees frames and swap slots).
    fn unmap(&mut self, pid: Pid, first: PageIdx, pages: u32);
    /// Touch pages `[first, first+n)` read or write on behalf of `actor` at `now`; returns the time
    /// the actor stalls (faults on swapped pages, fresh-page faults, etc.).
    fn touch(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, write: bool) -> Stall;
    /// madvise-like hint for a page range.
    fn advise(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall;
    /// `MADV_DONTNEED`: drop the contents of the range (frames and swap slots are freed; the next
    /// touch sees a fresh zero page). ART does this for regions it clears after a GC and for freed
    /// large objects. Default: nothing (a backing that does not track contents).
    fn release(&mut self, _now: Nanos, _actor: Actor, _first: PageIdx, _n: u32) {}
    /// Whether [`Self::touch`] costs nothing and records nothing (always returns a zero stall, no
    /// side effects), so callers may skip touching pages altogether. Default `false`.
    fn touches_are_free(&self) -> bool {
        false
    }
    /// The backing's page-state epoch, if it has one: while it is unchanged, repeating a touch
    /// that changed nothing (it left the epoch as it was and stalled nothing) would change
    /// nothing but access counters, so [`TouchBatch`] counts such repeats and passes them to
    /// [`Self::count_repeated`] instead of [`Self::touch`]. Default `None`: every touch is
    /// passed on.
    fn touch_epoch(&self) -> Option<u64> {
        None
    }
    /// Account for `pages` page accesses elided under [`Self::touch_epoch`] as repeats of
    /// touches that changed nothing, at `epoch` (the kernel counts them). A backing checks that
    /// `epoch` is still its epoch (panics otherwise: something changed it behind the batch's
    /// back, see [`TouchBatch`]). Only called on a backing whose `touch_epoch` is `Some`; the
    /// default (no epoch) is never called.
    fn count_repeated(&mut self, pages: u64, epoch: u64) {
        unreachable!("count_repeated({pages}, {epoch}) on a backing without a touch epoch")
    }
    /// Hint the CPU to load what a [`Self::touch`] of page `first` reads first (a cache hint
    /// only: no effect on any result; any `first` is allowed). [`TouchBatch`] calls it when a run
    /// starts, so the page's state is in cache by the time the run is passed on. Default: nothing.
    #[inline]
    fn prefetch_page(&self, _first: PageIdx) {}
    /// [`Self::touch`], then [`Self::touch_epoch`] (one call for [`TouchBatch`]).
    fn touch_then_epoch(
        &mut self,
        now: Nanos,
        actor: Actor,
        first: PageIdx,
        n: u32,
        write: bool,
    ) -> (Stall, Option<u64>) {
        let s = self.touch(now, actor, first, n, write);
        (s, self.touch_epoch())
    }
}

/// A backing that costs nothing and records nothing (benchmarks, heap inspection).
#[derive(Debug, Default)]
pub struct NullBacking {
    next: PageIdx,
}

impl PageBacking for NullBacking {
    fn map_heap(&mut self, _pid: Pid, pages: u32) -> Result<PageIdx, String> {
        let first = self.next;
        self.next = self
            .next
            .checked_add(pages)
            .ok_or("NullBacking: page index space exhausted")?;
        Ok(first)
    }
    fn unmap(&mut self, _pid: Pid, _first: PageIdx, _pages: u32) {}
    #[inline]
    fn touch(&mut self, _now: Nanos, _actor: Actor, _first: PageIdx, _n: u32, _write: bool) -> Stall {
        Stall::ZERO
    }
    fn advise(&mut self, _now: Nanos, _actor: Actor, _first: PageIdx, _n: u32, _advice: Advice) -> Stall {
        Stall::ZERO
    }
    fn touches_are_free(&self) -> bool {
        true
    }
}

/// Per-page state in [`MockBacking`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockPage {
    Unmapped,
    /// Mapped, never touched (or released).
    Untouched,
    Resident,
    Swapped,
}

/// Test backing: a dense page array, touch counters, swapped pages that cost `fault_ns` to touch.
#[derive(Debug)]
pub struct MockBacking {
    pub pages: Vec<MockPage>,
    pub touches: Vec<u32>,
    pub writes: Vec<u32>,
    /// Actor of the last touch per page.
    pub last_actor: Vec<Option<Actor>>,
    /// Stall for touching a swapped page (a major fault).
    pub fault_ns: Nanos,
    /// Number of swapped pages faulted back in, per actor kind (main, gc, other).
    pub faults_main: u64,
    pub faults_gc: u64,
    pub faults_other: u64,
    /// Total `touch` calls (after the runtime's coalescing).
    pub touch_calls: u64,
    pub advice_log: Vec<(PageIdx, u32, Advice)>,
    pub released_pages: u64,
    /// `Some(busy_until)`: swapped pages are read from one FIFO device (each fault waits for the
    /// device to be free, then `fault_ns`), so a caller passing a stale time over-counts its
    /// wait. `None`: every fault costs `fault_ns`.
    pub fifo_busy_until: Option<Nanos>,
}

impl MockBacking {
    pub fn new(fault_ns: Nanos) -> Self {
        Self {
            pages: Vec::new(),
            touches: Vec::new(),
            writes: Vec::new(),
            last_actor: Vec::new(),
            fault_ns,
            faults_main: 0,
            faults_gc: 0,
            faults_other: 0,
            touch_calls: 0,
            advice_log: Vec::new(),
            released_pages: 0,
            fifo_busy_until: None,
        }
    }

    /// Mark every resident page as swapped out; returns how many.
    pub fn swap_out_all(&mut self) -> usize {
        let mut n = 0;
        for p in self.pages.iter_mut() {
            if *p == MockPage::Resident {
                *p = MockPage::Swapped;
                n += 1;
            }
        }
        n
    }

    /// Mark `[first, first+n)` swapped (resident pages only).
    pub fn swap_out(&mut self, first: PageIdx, n: u32) {
        for p in &mut self.pages[first as usize..(first + n) as usize] {
            if *p == MockPage::Resident {
                *p = MockPage::Swapped;
            }
        }
    }

    pub fn count(&self, state: MockPage) -> usize {
        self.pages.iter().filter(|p| **p == state).count()
    }

    pub fn total_faults(&self) -> u64 {
        self.faults_main + self.faults_gc + self.faults_other
    }
}

impl PageBacking for MockBacking {
    fn map_heap(&mut self, _pid: Pid, pages: u32) -> Result<PageIdx, String> {
        let first = self.pages.len();
        let end = first + pages as usize;
        if end > u32::MAX as usize {
            return Err("MockBacking: page index space exhausted".into());
        }
        self.pages.resize(end, MockPage::Untouched);
        self.touches.resize(end, 0);
        self.writes.resize(end, 0);
        self.last_actor.resize(end, None);
        Ok(first as PageIdx)
    }

    fn unmap(&mut self, _pid: Pid, first: PageIdx, pages: u32) {
        for p in &mut self.pages[first as usize..(first + pages) as usize] {
            *p = MockPage::Unmapped;
        }
    }

    fn touch(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, write: bool) -> Stall {
        self.touch_calls += 1;
        let mut stall = Stall::ZERO;
        for i in first as usize..(first + n) as usize {
            match self.pages[i] {
                MockPage::Unmapped => panic!("MockBacking: touch of unmapped page {i}"),
                MockPage::Swapped => {
                    let wait = match self.fifo_busy_until.as_mut() {
                        Some(busy) => {
                            let at = now + stall.ns;
                            *busy = (*busy).max(at) + self.fault_ns;
                            *busy - at
                        }
                        None => self.fault_ns,
                    };
                    stall.add(Stall {
                        ns: wait,
                        psi_ns: wait,
                    });
                    match actor {
                        Actor::AppMain(_) => self.faults_main += 1,
                        Actor::AppGc(_) => self.faults_gc += 1,
                        _ => self.faults_other += 1,
                    }
                }
                MockPage::Untouched | MockPage::Resident => {}
            }
            self.pages[i] = MockPage::Resident;
            self.touches[i] += 1;
            if write {
                self.writes[i] += 1;
            }
            self.last_actor[i] = Some(actor);
        }
        stall
    }

    fn advise(&mut self, _now: Nanos, _actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall {
        self.advice_log.push((first, n, advice));
        if advice == Advice::PageOut {
            self.swap_out(first, n);
        }
        Stall::ZERO
    }

    fn release(&mut self, _now: Nanos, _actor: Actor, first: PageIdx, n: u32) {
        for p in &mut self.pages[first as usize..(first + n) as usize] {
            if *p != MockPage::Unmapped {
                *p = MockPage::Untouched;
            }
        }
        self.released_pages += n as u64;
    }
}

/// A run of pages the backing was last given, with the epoch its touch left unchanged.
#[derive(Debug, Clone, Copy)]
struct DoneRun {
    first: PageIdx,
    end: PageIdx,
    epoch: u64,
}

impl DoneRun {
    /// Covers no run (`end` 0: a run of at least one page never ends at or before it).
    const NONE: Self = Self {
        first: 0,
        end: 0,
        epoch: NO_EPOCH,
    };

    #[inline(always)]
    fn covers(&self, epoch: u64, first: PageIdx, end: PageIdx) -> bool {
        self.epoch == epoch && first >= self.first && end <= self.end
    }
}

/// [`TouchBatch::epoch`] when the batch does not know the backing's epoch (a backing's epoch
/// counts events from 0 and never gets here).
const NO_EPOCH: u64 = u64::MAX;

/// Coalesces consecutive touches of the same or adjacent pages into one `touch` call (reads of
/// pages inside a pending write run are absorbed by it).
///
/// Exact elision of repeats: the batch remembers the last read run and the last write run it
/// passed to the backing whose touch changed nothing (zero stall, [`PageBacking::touch_epoch`]
/// unchanged across it). A later run inside one of them (a read inside the remembered write run
/// counts) while the epoch is still the same is a repeat that would change nothing but access
/// counters: the batch only counts it, and hands the count to [`PageBacking::count_repeated`]
/// before its next real touch and in [`Self::flush`] (a GC copy loop alternates reading a
/// source page and writing a destination page, so it repeats the same two runs object after
/// object). A backing without an epoch (mocks) gets every run.
///
/// The batch keeps the epoch its last call to the backing left (no call to read it on a
/// repeat), so between two [`Self::flush`]es the backing must change only through the batch;
/// code that calls the backing directly in between calls [`Self::sync`] first. A violation is
/// caught (panic) at the next hand-over of counted repeats, where the backing checks the epoch.
#[derive(Debug)]
pub struct TouchBatch {
    pub now: Nanos,
    pub actor: Actor,
    first: PageIdx,
    n: u32,
    write: bool,
    pub stall: Stall,
    /// Pages of the runs flushed (after coalescing; a page touched twice in a row counts once;
    /// elided repeats count).
    pub pages: u64,
    done_read: DoneRun,
    done_write: DoneRun,
    /// The backing's epoch as the batch's last call to it left it, or [`NO_EPOCH`].
    epoch: u64,
    /// Pages of elided repeats not yet handed to [`PageBacking::count_repeated`].
    repeated: u64,
}

impl TouchBatch {
    pub fn new(now: Nanos, actor: Actor) -> Self {
        Self {
            now,
            actor,
            first: 0,
            n: 0,
            write: false,
            stall: Stall::ZERO,
            pages: 0,
            done_read: DoneRun::NONE,
            done_write: DoneRun::NONE,
            epoch: NO_EPOCH,
            repeated: 0,
        }
    }

    /// Touch `[first, first+n)`.
    #[inline]
    pub fn touch<B: PageBacking + ?Sized>(&mut self, b: &mut B, first: PageIdx, n: u32, write: bool) {
        if !self.merge(first, n, write) {
            // The new run is passed on at the next touch that does not extend it (or at the
            // flush): fetch its first page's state meanwhile.
            b.prefetch_page(first);
            self.flush_run(b);
            self.first = first;
            self.n = n;
            self.write = write;
        }
    }

    /// Touch `[old.0, old.0+old.1)` for reading, then `[new.0, new.0+new.1)` for writing: one
    /// object copied (exactly the two [`Self::touch`]es). When the pending run is a write run
    /// and both it and the read run repeat remembered runs at the known epoch (a copy loop's
    /// steady state: source and destination pages already touched), both touches would only
    /// count them: that is done at once, and the write run becomes the pending one.
    #[inline(always)]
    pub fn touch_copy<B: PageBacking + ?Sized>(
        &mut self,
        b: &mut B,
        old: (PageIdx, u32),
        new: (PageIdx, u32),
    ) {
        let (end, old_end) = (self.first + self.n, old.0 + old.1);
        // A read inside the pending write run would be absorbed by it instead.
        let absorbed = old.0 >= self.first && old_end <= end;
        if self.n > 0
            && self.write
            && !absorbed
            && self.done_write.covers(self.epoch, self.first, end)
            && self.is_repeat(self.epoch, old.0, old_end, false)
        {
            let k = (self.n + old.1) as u64;
            self.repeated += k;
            self.pages += k;
            (self.first, self.n) = new;
            return;
        }
        self.touch_copy_slow(b, old, new);
    }

    /// [`Self::touch_copy`] as two touches (out of line: the copy loop's registers stay free).
    #[inline(never)]
    fn touch_copy_slow<B: PageBacking + ?Sized>(
        &mut self,
        b: &mut B,
        old: (PageIdx, u32),
        new: (PageIdx, u32),
    ) {
        self.touch(b, old.0, old.1, false);
        self.touch(b, new.0, new.1, true);
    }

    /// Fold `[first, first+n)` into the pending run if it is covered by it or extends it;
    /// `false` if the pending run must be flushed first (the coalescing rule, shared with
    /// [`Self::coalesce`]).
    #[inline(always)]
    fn merge(&mut self, first: PageIdx, n: u32, write: bool) -> bool {
        if self.n > 0 && !write && self.write && first >= self.first && first + n <= self.first + self.n {
            // Reading pages the pending run writes: already covered.
            return true;
        }
        if self.n > 0 && write == self.write {
            let end = self.first + self.n;
            // Same or overlapping/adjacent run: extend.
            if first >= self.first && first <= end {
                let new_end = (first + n).max(end);
                self.n = new_end - self.first;
                return true;
            }
        }
        false
    }

    /// The runs a batch of same-kind touches `pieces` passes to the backing, appended to `out`
    /// (no backing involved). Replaying them through a fresh batch touches exactly what touching
    /// `pieces` would have.
    pub fn coalesce(
        pieces: impl IntoIterator<Item = (PageIdx, u32)>,
        write: bool,
        out: &mut Vec<(PageIdx, u32)>,
    ) {
        let mut b = Self::new(0, Actor::Kernel);
        for (first, n) in pieces {
            if !b.merge(first, n, write) {
                if b.n > 0 {
                    out.push((b.first, b.n));
                }
                b.first = first;
                b.n = n;
                b.write = write;
            }
        }
        if b.n > 0 {
            out.push((b.first, b.n));
        }
    }

    /// Whether `[first, end)` touched `write` repeats a remembered run at `epoch`.
    #[inline(always)]
    fn is_repeat(&self, epoch: u64, first: PageIdx, end: PageIdx, write: bool) -> bool {
        self.done_write.covers(epoch, first, end) || (!write && self.done_read.covers(epoch, first, end))
    }

    /// Pass the pending run on: a repeat at the known epoch is only counted (no backing call),
    /// anything else goes to [`Self::flush_slow`].
    #[inline(always)]
    fn flush_run<B: PageBacking + ?Sized>(&mut self, b: &mut B) {
        if self.n > 0 {
            if self.is_repeat(self.epoch, self.first, self.first + self.n, self.write) {
                self.repeated += self.n as u64;
                self.pages += self.n as u64;
                self.n = 0;
            } else {
                self.flush_slow(b);
            }
        }
    }

    /// The pending run is not a repeat at the known epoch: hand over the counted repeats; if
    /// the batch does not know the backing's epoch, read it and count the run if it repeats a
    /// remembered run at that epoch; else touch it (remembering it if the touch changed
    /// nothing). With the epoch known, one backing call (two with repeats to hand over).
    #[inline(never)]
    fn flush_slow<B: PageBacking + ?Sized>(&mut self, b: &mut B) {
        let (first, n, write) = (self.first, self.n, self.write);
        self.n = 0;
        self.pages += n as u64;
        if self.repeated > 0 {
            // Repeats are only counted while the epoch is known.
            b.count_repeated(self.repeated, self.epoch);
            self.repeated = 0;
        }
        let epoch = if self.epoch != NO_EPOCH {
            // The fast path found no repeat at it.
            Some(self.epoch)
        } else {
            let epoch = b.touch_epoch();
            if let Some(e) = epoch {
                self.epoch = e;
                // A repeat at an epoch the batch did not know (after `sync`/`flush`).
                if self.is_repeat(e, first, first + n, write) {
                    self.repeated += n as u64;
                    return;
                }
            }
            epoch
        };
        // The toucher has been stalled by the earlier runs: this one starts after them.
        let at = self.now + self.stall.ns;
        let (s, after) = b.touch_then_epoch(at, self.actor, first, n, write);
        self.epoch = after.unwrap_or(NO_EPOCH);
        if let Some(e) = epoch.filter(|&e| s == Stall::ZERO && after == Some(e)) {
            let done = DoneRun {
                first,
                end: first + n,
                epoch: e,
            };
            if write {
                self.done_write = done;
            } else {
                self.done_read = done;
            }
        }
        self.stall.add(s);
    }

    /// Hand the counted repeats to the backing and forget its epoch: after this, code may call
    /// the backing directly (the pending run stays pending).
    pub fn sync<B: PageBacking + ?Sized>(&mut self, b: &mut B) {
        if self.repeated > 0 {
            b.count_repeated(self.repeated, self.epoch);
            self.repeated = 0;
        }
        self.epoch = NO_EPOCH;
    }

    /// Pass the pending run and the counted repeats to the backing. After this the backing has
    /// seen everything touched so far and may be changed by other code before the next touch.
    #[inline]
    pub fn flush<B: PageBacking + ?Sized>(&mut self, b: &mut B) {
        self.flush_run(b);
        self.sync(b);
    }
}
