//! The kernel as the runtime's page backing: heap regions are anonymous Java-heap mappings of the
//! app's process, GC and mutator touches go through the kernel's fault path (so swapped pages
//! fault back in with their cost on the touching thread), `release` is `MADV_DONTNEED`. Repeats
//! of touches that changed nothing are only counted ([`Kernel::touch_epoch`]).

use crate::backing::PageBacking;
use engine::{Actor, Nanos, Stall};
use kernel::types::{Advice, PageIdx, PageKind, Pid};
use kernel::Kernel;

impl PageBacking for Kernel {
    fn map_heap(&mut self, pid: Pid, pages: u32) -> Result<PageIdx, String> {
        self.mmap_default(pid, pages, PageKind::JavaHeap)
            .map_err(|e| e.to_string())
    }

    fn unmap(&mut self, pid: Pid, first: PageIdx, _pages: u32) {
        // Unmapping a range the process no longer has (it was killed) is not an error.
        let _ = self.munmap(pid, first);
    }

    fn touch(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, write: bool) -> Stall {
        let mut total = Stall::ZERO;
        for idx in first..first + n {
            match self.access(now + total.ns, actor, idx, write) {
                Ok(s) => total.add(s),
                // The process died (OOM) or the range is gone: the caller notices through the
                // framework; the runtime just stops touching.
                Err(_) => break,
            }
        }
        total
    }

    fn advise(&mut self, now: Nanos, actor: Actor, first: PageIdx, n: u32, advice: Advice) -> Stall {
        self.madvise(now, actor, first, n, advice)
    }

    fn release(&mut self, _now: Nanos, _actor: Actor, first: PageIdx, n: u32) {
        self.discard(first, n);
    }

    #[inline]
    fn prefetch_page(&self, first: PageIdx) {
        Kernel::prefetch_page(self, first);
    }

    #[inline]
    fn touch_epoch(&self) -> Option<u64> {
        Kernel::touch_epoch(self)
    }

    /// A repeat of accesses that changed nothing only counts them (see [`Kernel::touch_epoch`]).
    #[inline]
    fn count_repeated(&mut self, pages: u64, epoch: u64) {
        assert_eq!(
            Kernel::touch_epoch(self),
            Some(epoch),
            "TouchBatch: the backing changed outside the batch after elided repeats (call sync first)"
        );
        self.count_repeated_accesses(pages);
    }
}
