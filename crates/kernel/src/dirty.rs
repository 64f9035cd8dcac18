//! File writes through the page cache (`write()`), dirty file pages and the flusher (`wb_workfn`)
//! that writes them back.
//!
//! `write()` ([`Kernel::write_file_page`], Linux `generic_perform_write` → `write_begin`): a page
//! in the page cache is dirtied in place. A page not in it is added by
//! `grab_cache_page_write_begin` (no readahead); it is read from flash first only if the write
//! covers it partly (`__block_write_begin` reads the blocks not fully overwritten, one page here),
//! never if the write covers it whole ([`PageWrite::Whole`]). A `write()` marks the page accessed
//! (`mark_page_accessed`, `mark_accessed.rs`) only before Linux 4.7, a `read()` always. A small `read()` ([`Kernel::read_file_page`]) of a page not in
//! memory reads that page only (`ondemand_readahead`: a standalone small random read is read as
//! is), unlike a fault's read-around. Appends beyond EOF (never read: new blocks are zeroed) are
//! whole-page writes here. Not modelled: the CPU of the syscalls and of the copy.
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

use crate::fault::Fill;
use crate::types::*;
use crate::{Kernel, KernelError};
use engine::{Actor, Nanos, Stall};

/// How much of a page one `write()` covers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PageWrite {
    /// The whole page (page-aligned 4 KiB writes, e.g. SQLite database pages): never read.
    Whole,
    /// Part of the page: a page not in the page cache is read first (that page only).
    Partial,
}

/// `dirty_writeback_centisecs` = 500: the flusher's period.
pub const DIRTY_WRITEBACK_NS: Nanos = 5_000_000_000;
/// `dirty_expire_centisecs` = 3000: a dirty page older than this is written back.
pub const DIRTY_EXPIRE_NS: Nanos = 30_000_000_000;
/// Largest merged writeback request (Linux `max_sectors_kb` on eMMC/UFS is typically 512 KiB).
const MAX_MERGE_PAGES: u32 = 128;

impl Kernel {
    /// A `write()` by `actor` at `now` covering `how` much of file page `idx`. Returns the stall
    /// (allocation, and the read of a partly written page not in memory). An anonymous page is
    /// an ordinary write access.
    pub fn write_file_page(
        &mut self,
        now: Nanos,
        actor: Actor,
        idx: PageIdx,
        how: PageWrite,
    ) -> Result<Stall, KernelError> {
        let p = *self
            .pt
            .pages
            .get(idx as usize)
            .ok_or(KernelError::NotMapped(idx))?;
        if p.kind.is_anon() {
            return self.access(now, actor, idx, true);
        }
        self.last_now = self.last_now.max(now);
        let stall = match p.state {
            PageState::Resident => {
                self.pt.epoch += 1;
                self.pt.pages[idx as usize].flags |= flags::DIRTY;
                self.note_file_dirtied(now, idx);
                Stall::ZERO
            }
            PageState::Dropped => {
                let fill = match how {
                    PageWrite::Whole => Fill::NoRead,
                    PageWrite::Partial => Fill::OnePage,
                };
                self.file_fill(now, actor, idx, true, fill)?
            }
            _ => return Err(KernelError::NotMapped(idx)),
        };
        if self.params.write_marks_accessed {
            self.mark_page_accessed(idx);
        }
        Ok(stall)
    }

    /// A small random `read()` (e.g. SQLite's `pread` of one database page) of file page `idx`
    /// by `actor` at `now`: if it is not in memory that page only is read from flash; then
    /// `mark_page_accessed` (not the PTE young bit: a `read()` maps nothing; see
    /// `mark_accessed.rs`).
    pub fn read_file_page(&mut self, now: Nanos, actor: Actor, idx: PageIdx) -> Result<Stall, KernelError> {
        let p = *self
            .pt
            .pages
            .get(idx as usize)
            .ok_or(KernelError::NotMapped(idx))?;
        let vma_id = self.vma_id_of(idx).ok_or(KernelError::NotMapped(idx))?;
        let stall = match p.state {
            PageState::Resident if !p.kind.is_anon() => Stall::ZERO,
            PageState::Dropped => {
                self.last_now = self.last_now.max(now);
                self.file_fill(now, actor, idx, false, Fill::OnePage)?
            }
            _ => return Err(KernelError::NotMapped(idx)),
        };
        self.read_marks_accessed(vma_id, idx);
        Ok(stall)
    }

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
                // Clears DIRTY_QUEUED (and DIRTY): a later write is no repeat of an earlier one.
                self.pt.epoch += 1;
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
