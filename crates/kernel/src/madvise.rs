//! madvise-style hints from higher layers: `MADV_PAGEOUT`, `MADV_COLD`, `MADV_WILLNEED`,
//! `MADV_DONTNEED` ([`Kernel::discard`]), `mlock`/`munlock`, and ahead-of-time swap
//! (`WriteAhead`, see `swapcache.rs`).
//!
//! PAGEOUT and WRITE_AHEAD work synchronously on the caller (their CPU is the caller's stall);
//! WILLNEED prefetches as kernel work (the caller does not wait). MLOCK moves resident pages to
//! the unevictable list (never scanned, never reclaimed, counted as `Mlocked`); pages of the range
//! that are not resident yet get there when they fault in. Simplified: mlock does not populate
//! the range.

use crate::types::*;
use crate::Kernel;
use engine::{Actor, Nanos, Stall};

/// How many pages ahead [`Kernel::discard`] fetches the frame state of the page it will free
/// (its page entry twice as far ahead).
const DISCARD_AHEAD: u32 = 8;

impl Kernel {
    /// `MADV_DONTNEED` on anonymous pages `[first, first+n)`: their frames and swap slots are
    /// freed and the next touch sees a fresh zero page.
    pub fn discard(&mut self, first: PageIdx, n: u32) {
        let end = (first + n).min(self.pt.pages.len() as u32);
        for idx in first..end {
            // Fetch ahead what freeing a page reads at random (no effect on results): its
            // entry, then for the page `DISCARD_AHEAD` on, its frame's buddy and owner state.
            self.pt.prefetch(idx + 2 * DISCARD_AHEAD);
            if idx + DISCARD_AHEAD < end {
                let q = self.pt.pages[(idx + DISCARD_AHEAD) as usize];
                if q.state == PageState::Resident {
                    self.buddy.prefetch_frame(q.loc);
                    engine::prefetch(&self.frame_owner, q.loc as usize);
                }
            }
            let p = self.pt.pages[idx as usize];
            if !p.kind.is_anon() {
                continue;
            }
            match p.state {
                PageState::Resident => {
                    self.writeback_cancel(idx);
                    if p.has(flags::SWAPCACHE) {
                        self.drop_swap_copy(idx);
                    }
                    self.pt.lru_del(&mut self.procs[p.pid as usize].lru, idx);
                    self.free_resident_frame(idx);
                }
                PageState::Swapped => {
                    self.backends[p.swap_dev as usize].free(p.loc);
                    self.handle_owner[p.swap_dev as usize][p.loc as usize] = NIL;
                    self.procs[p.pid as usize].counters.swap -= 1;
                }
                _ => continue,
            }
            self.note_state_change(p.state, PageState::Untouched);
            let page = &mut self.pt.pages[idx as usize];
            page.state = PageState::Untouched;
            page.loc = NIL;
            page.shadow = 0;
            page.flags &= flags::EXEC | flags::MLOCKED | flags::PROTECTED;
        }
        self.sync_backend_frames();
    }

    /// madvise-like hint over pages `[first, first+n)` of one mapping. Returns the caller's stall
    /// (PAGEOUT reclaims synchronously on the caller, as `MADV_PAGEOUT` does).
    pub fn madvise(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall {
        let mut stall = Stall::ZERO;
        let end = (first + n).min(self.pt.pages.len() as u32);
        self.last_now = self.last_now.max(now);
        match advice {
            Advice::PageOut => {
                let cpu = self.pageout_range(now, actor, first, end);
                stall.ns += cpu;
            }
            Advice::Cold => {
                for idx in first..end {
                    let p = self.pt.pages[idx as usize];
                    // A page under writeback is being reclaimed already.
                    if p.state == PageState::Resident
                        && !matches!(p.lru, LruList::Unevictable | LruList::None)
                    {
                        let lru = &mut self.procs[p.pid as usize].lru;
                        self.pt.lru_del(lru, idx);
                        self.pt
                            .lru_add_tail(lru, idx, LruList::inactive(p.kind.is_anon()));
                        self.pt.pages[idx as usize].flags &= !(flags::ACCESSED | flags::REFERENCED);
                        self.vmstat.pgdeactivate += 1;
                    }
                }
            }
            Advice::WillNeed => {
                // Prefetch asynchronously: the caller does not wait; the work is kernel time.
                for idx in first..end {
                    let state = self.pt.pages[idx as usize].state;
                    if matches!(state, PageState::Swapped | PageState::Dropped)
                        && self.fault(now, Actor::Kernel, idx, false).is_ok()
                    {
                        // Prefetched, not used: reclaim should not count it as referenced.
                        self.pt.pages[idx as usize].flags &= !flags::ACCESSED;
                    }
                }
            }
            Advice::Mlock => {
                for idx in first..end {
                    let p = self.pt.pages[idx as usize];
                    if p.state == PageState::Freed {
                        continue;
                    }
                    self.pt.pages[idx as usize].flags |= flags::MLOCKED;
                    self.writeback_cancel(idx);
                    if p.state == PageState::Resident && p.lru != LruList::Unevictable {
                        self.pt
                            .lru_move_head(&mut self.procs[p.pid as usize].lru, idx, LruList::Unevictable);
                    }
                }
            }
            Advice::Munlock => {
                for idx in first..end {
                    let p = self.pt.pages[idx as usize];
                    if !p.has(flags::MLOCKED) {
                        continue;
                    }
                    self.pt.pages[idx as usize].flags &= !flags::MLOCKED;
                    self.writeback_cancel(idx);
                    if p.state == PageState::Resident {
                        let list = LruList::inactive(p.kind.is_anon());
                        self.pt
                            .lru_move_head(&mut self.procs[p.pid as usize].lru, idx, list);
                    }
                }
            }
            Advice::WriteAhead => {
                stall.ns += self.write_ahead_range(now, actor, first, end);
            }
        }
        stall
    }
}
