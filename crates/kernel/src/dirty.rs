//! Dirty file pages and the flusher (`wb_workfn`) that writes them back.
//!
//! Modelled: a write to a clean file page makes it dirty and queues it with the time it was
//! dirtied. The flusher wakes every `dirty_writeback_centisecs` (500: 5 s) and writes back the
//! pages dirtied at least `dirty_expire_centisecs` (3000: 30 s) before; each write is an
//! asynchronous flash write (it occupies the device, so reads queue behind it), counted in flash
//! bytes written, and the page stays resident and becomes clean. Reclaim meeting a dirty file
//! page still writes it itself (`drop_file_page`).
//!
//! Simplified: expiry is per page (Linux: per inode, `dirtied_when`); no background threshold
//! (`dirty_background_ratio`) or `balance_dirty_pages` throttling of writers (app write rates are
//! far below it); no `fsync` (SQLite commits would write sooner and more often); consecutive
//! pages of one pass are merged into one request; flusher CPU is not charged. A page dropped
//! while queued keeps its queue entry; if dirtied again before that entry expires it is written
//! back early (once), never twice.

use crate::types::*;
use crate::Kernel;
use engine::Nanos;

/// `dirty_writeback_centisecs` = 500: the flusher's period.
pub const DIRTY_WRITEBACK_NS: Nanos = 5_000_000_000;
/// `dirty_expire_centisecs` = 3000: a dirty page older than this is written back.
pub const DIRTY_EXPIRE_NS: Nanos = 30_000_000_000;
/// Largest merged writeback request (Linux `max_sectors_kb` on eMMC/UFS is typically 512 KiB).
const MAX_MERGE_PAGES: u32 = 128;

impl Kernel {
    /// `idx` was just written: queue it for the flusher if it is a file page not yet queued.
    #[inline]
    pub(crate) fn note_file_dirtied(&mut self, now: Nanos, idx: PageIdx) {
        let p = &mut self.pt.pages[idx as usize];
        if p.kind.is_anon() || p.flags & flags::DIRTY_QUEUED != 0 {
            return;
        }
        p.flags |= flags::DIRTY_QUEUED;
        self.dirty_q.push_back((now, idx));
    }

    /// Run the flusher's periodic passes due by `t`.
    pub(crate) fn flush_dirty(&mut self, t: Nanos) {
        while self.next_flush <= t {
            let tick = self.next_flush;
            self.next_flush += DIRTY_WRITEBACK_NS;
            let mut run: Option<(PageIdx, u32)> = None;
            while let Some(&(at, idx)) = self.dirty_q.front() {
                if at + DIRTY_EXPIRE_NS > tick {
                    break;
                }
                self.dirty_q.pop_front();
                let p = &mut self.pt.pages[idx as usize];
                p.flags &= !flags::DIRTY_QUEUED;
                if p.state != PageState::Resident || p.kind.is_anon() || p.flags & flags::DIRTY == 0 {
                    continue;
                }
                p.flags &= !flags::DIRTY;
                self.vmstat.flusher_written_pages += 1;
                run = match run {
                    Some((first, n)) if first + n == idx && n < MAX_MERGE_PAGES => Some((first, n + 1)),
                    Some((_, n)) => {
                        self.flash.write(tick, n as u64 * PAGE_SIZE);
                        Some((idx, 1))
                    }
                    None => Some((idx, 1)),
                };
            }
            if let Some((_, n)) = run {
                self.flash.write(tick, n as u64 * PAGE_SIZE);
            }
            if self.dirty_q.is_empty() && self.next_flush <= t {
                // Nothing queued: skip the idle wake-ups up to `t`.
                self.next_flush += (t - self.next_flush) / DIRTY_WRITEBACK_NS * DIRTY_WRITEBACK_NS;
            }
        }
    }

    /// Dirty file pages waiting for the flusher (queued, possibly stale).
    pub fn dirty_queued(&self) -> usize {
        self.dirty_q.len()
    }
}
